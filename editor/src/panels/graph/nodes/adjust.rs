//! The Adjust's bespoke editor in the node details: its entries (bone, operation, axis or
//! direction, a constant amount or the parameter driving it), which one the viewport's gizmo
//! edits, add and remove.
//!
//! Not here: the node's body on the canvas (`super::super::view`), the gizmo itself.

use egui::Ui;
use glam::Vec3;
use marrow_engine::graph::{AdjustEntry, AdjustOp, Drive, NodeId, NodeKind};

use super::super::details::{DetailsCx, DetailsOut, bone_picker, set};
use super::super::view::adjust_name;
use crate::widgets::named;

/// The Adjust's editor: its entries (bone, operation, axis, amount or driving parameter,
/// the gizmo target), add and remove.
pub fn editor(ui: &mut Ui, cx: &DetailsCx, id: NodeId, entries: &[AdjustEntry], out: &mut DetailsOut) {
    let mut next = entries.to_vec();
    let mut changed: Option<String> = None;
    let mut remove = None;
    for (i, e) in next.iter_mut().enumerate() {
        ui.separator();
        ui.horizontal(|ui| {
            if let Some(b) =
                bone_picker(ui, ("adjust bone", id.0, i), cx.skeleton, &e.bone, &format!("adjust {i} bone"))
            {
                e.bone = b;
                changed = Some("adjust bone".into());
            }
            let mut op = e.op;
            egui::ComboBox::from_id_salt(("adjust op", id.0, i))
                .selected_text(adjust_name(&op))
                .width(80.0)
                .show_ui(ui, |ui| {
                    for (name, o) in [
                        ("Rotate", AdjustOp::Rotate { axis: Vec3::X }),
                        ("Orient", AdjustOp::Orient { axis: Vec3::X }),
                        ("Offset", AdjustOp::Offset { direction: Vec3::Y }),
                        ("Scale", AdjustOp::Scale),
                    ] {
                        if ui.selectable_label(adjust_name(&op) == name, name).clicked() {
                            op = o;
                        }
                    }
                });
            if op != e.op {
                e.op = op;
                changed = Some("adjust kind".into());
            }
            if ui.small_button("✖").on_hover_text("Remove this adjust").clicked() {
                remove = Some(i);
            }
            if matches!(e.op, AdjustOp::Offset { .. }) {
                let on = cx.gizmo == Some((id, i));
                let r = ui
                    .selectable_label(on, "Gizmo")
                    .on_hover_text("Move the offset with the viewport's gizmo while the graph previews");
                if r.clicked() {
                    out.gizmo = Some((!on).then_some((id, i)));
                }
            }
        });
        let axis = match &mut e.op {
            AdjustOp::Rotate { axis } | AdjustOp::Orient { axis } => Some(("axis", axis)),
            AdjustOp::Offset { direction } => Some(("direction", direction)),
            AdjustOp::Scale => None,
        };
        if let Some((label, v)) = axis {
            ui.horizontal(|ui| {
                ui.label(label);
                for k in 0..3 {
                    if ui.add(egui::DragValue::new(&mut v[k]).speed(0.01).max_decimals(3)).changed() {
                        changed = Some(format!("adjust {label}"));
                    }
                }
            });
        }
        ui.horizontal(|ui| {
            ui.label("amount");
            let mut by_param = matches!(e.amount, Drive::Parameter(_));
            if ui.checkbox(&mut by_param, "from parameter").changed() {
                e.amount = if by_param {
                    Drive::Parameter(cx.graph.parameters.first().map(|p| p.name.clone()).unwrap_or_default())
                } else {
                    Drive::Constant(0.0)
                };
                changed = Some("adjust amount".into());
            }
            match &mut e.amount {
                Drive::Constant(c) => {
                    let r = ui.add(egui::DragValue::new(c).speed(0.01));
                    if named(r, egui::WidgetType::DragValue, "adjust amount").changed() {
                        changed = Some("adjust amount".into());
                    }
                }
                Drive::Parameter(p) => {
                    egui::ComboBox::from_id_salt(("adjust param", id.0, i))
                        .selected_text(p.as_str())
                        .show_ui(ui, |ui| {
                            for d in &cx.graph.parameters {
                                if ui.selectable_label(d.name == *p, &d.name).clicked() {
                                    *p = d.name.clone();
                                    changed = Some("adjust amount".into());
                                }
                            }
                        });
                }
            }
        });
    }
    ui.separator();
    if let Some(i) = remove {
        next.remove(i);
        set(out, id, NodeKind::Adjust { entries: next }, "adjusts (remove)");
    } else if let Some(f) = changed {
        let finite = next.iter().all(|e| match e.op {
            AdjustOp::Rotate { axis } | AdjustOp::Orient { axis } => axis.is_finite(),
            AdjustOp::Offset { direction } => direction.is_finite(),
            AdjustOp::Scale => true,
        });
        if finite {
            set(out, id, NodeKind::Adjust { entries: next }, &f);
        }
    } else if ui.button("Add Adjust").clicked() {
        let bone = cx.skeleton.and_then(|s| s.bone_names.first().cloned()).unwrap_or_default();
        next.push(AdjustEntry { bone, op: AdjustOp::Rotate { axis: Vec3::Y }, amount: Drive::Constant(0.0) });
        set(out, id, NodeKind::Adjust { entries: next }, "adjusts (add)");
    }
}
