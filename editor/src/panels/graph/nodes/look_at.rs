//! The LookAt node's bespoke editor in the node details: the bone that turns (picked from the
//! rig), its forward and up axes and the aim's offset (its own space), and the yaw and pitch
//! limits. The target (x, y, z) and the weight are float pins: their constants are on the node.
//!
//! Not here: the node's body on the canvas (`super::super::view`), applying the edits.

use egui::Ui;
use marrow_engine::graph::{NodeId, NodeKind};

use super::super::details::{DetailsCx, DetailsOut, bone_picker, set};
use super::vector;
use crate::widgets::named;

/// Draws the editor of the LookAt node `id` (`kind` is its kind; any other draws nothing).
pub fn editor(ui: &mut Ui, cx: &DetailsCx, id: NodeId, kind: &NodeKind, out: &mut DetailsOut) {
    let NodeKind::LookAt { bone, forward, up, offset, yaw, pitch, .. } = kind else { return };
    let with = |f: &dyn Fn(&mut NodeKind)| {
        let mut next = kind.clone();
        f(&mut next);
        next
    };
    super::target_gizmo_toggle(ui, cx, id, out);
    ui.horizontal(|ui| {
        ui.label("Bone");
        if let Some(b) = bone_picker(ui, ("look at bone", id.0), cx.skeleton, bone, "Look bone") {
            let next = with(&|k| {
                if let NodeKind::LookAt { bone, .. } = k {
                    *bone = b.clone();
                }
            });
            set(out, id, next, "bone");
        }
    });
    for (label, field, v) in
        [("Forward", "forward", *forward), ("Up", "up", *up), ("Offset", "offset", *offset)]
    {
        if let Some(n) = vector(ui, label, v)
            && (field == "offset" || n.length_squared() > 0.0)
        {
            let next = with(&|k| {
                if let NodeKind::LookAt { forward, up, offset, .. } = k {
                    *match field {
                        "forward" => forward,
                        "up" => up,
                        _ => offset,
                    } = n;
                }
            });
            set(out, id, next, field);
        }
    }
    ui.weak("Forward is the axis that looks, Up the bone's up, Offset where the look starts (the eyes), in the bone's own space.");
    for (label, field, v) in [("Yaw limit", "yaw", *yaw), ("Pitch limit", "pitch", *pitch)] {
        ui.horizontal(|ui| {
            ui.label(label);
            let mut d = v.to_degrees();
            let r = ui.add(egui::Slider::new(&mut d, 0.0..=180.0).suffix("°").max_decimals(0));
            if named(r, egui::WidgetType::Slider, label).changed() && d.is_finite() {
                let next = with(&|k| {
                    if let NodeKind::LookAt { yaw, pitch, .. } = k {
                        *if field == "yaw" { yaw } else { pitch } = d.to_radians();
                    }
                });
                set(out, id, next, field);
            }
        });
    }
}
