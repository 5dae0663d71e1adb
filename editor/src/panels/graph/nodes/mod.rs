//! The bespoke node editors of the details panel, one file per kind that has one: the kinds
//! whose settings the described constants and pickers cannot show (`blend_space`: the
//! BlendSpace1D axis, `blend_space_2d`: the BlendSpace2D plane, `mask`: the Mask's bone tree,
//! `adjust`: the Adjust list, `two_bone_ik`: the TwoBoneIk chain, pole and bend axis, `look_at`: the LookAt bone, axes and
//! limits, `foot_plant`: the FootPlant's hips, legs, knee axis and limits, `state_machine`: the StateMachine's summary and its state and transition inspectors).
//!
//! Not here: the node bodies on the canvas and the details every kind shares (fault lines, input
//! pickers), which read the kinds' descriptions.

pub mod adjust;
pub mod blend_space;
pub mod blend_space_2d;
pub mod foot_plant;
pub mod look_at;
pub mod mask;
pub mod state_machine;
pub mod two_bone_ik;

use egui::Ui;
use glam::Vec3;

use crate::widgets::named;

/// A vector's three components as drag values; the new vector when one changed.
pub(super) fn vector(ui: &mut Ui, label: &str, v: Vec3) -> Option<Vec3> {
    let mut a = v.to_array();
    let mut changed = false;
    ui.horizontal(|ui| {
        ui.label(label);
        for (c, axis) in a.iter_mut().zip(["x", "y", "z"]) {
            let r = ui.add(egui::DragValue::new(c).speed(0.01).max_decimals(3).prefix(format!("{axis} ")));
            changed |= named(r, egui::WidgetType::DragValue, &format!("{label} {axis}")).changed();
        }
    });
    let out = Vec3::from_array(a);
    (changed && out.is_finite()).then_some(out)
}

/// A toggle that puts the viewport's gizmo on `entry` of node `id` (see
/// [`crate::ui_state::UiState::adjust_gizmo`]) while the graph previews, or takes it off.
fn gizmo_toggle(
    ui: &mut Ui,
    cx: &super::details::DetailsCx,
    id: marrow_engine::graph::NodeId,
    out: &mut super::details::DetailsOut,
    (entry, label, hint): (usize, &str, &str),
) {
    let on = cx.gizmo == Some((id, entry));
    if ui.selectable_label(on, label).on_hover_text(hint).clicked() {
        out.gizmo = Some((!on).then_some((id, entry)));
    }
}

/// The Target Gizmo toggle of a TwoBoneIk or LookAt: while the graph previews, dragging it sets
/// the parameters wired to the `x`, `y`, `z` pins live (not an edit; when a scene entity drives
/// them, the entity moves); a pin left unwired has its constant edited.
pub(super) fn target_gizmo_toggle(
    ui: &mut Ui,
    cx: &super::details::DetailsCx,
    id: marrow_engine::graph::NodeId,
    out: &mut super::details::DetailsOut,
) {
    let hint = "Move the target with the viewport's gizmo while the graph previews: the parameters wired to x, y, z follow live";
    gizmo_toggle(ui, cx, id, out, (crate::ui_state::TARGET_ENTRY, "Target Gizmo", hint));
}

/// The Pole Gizmo toggle of a TwoBoneIk: while the graph previews, the viewport shows the pole
/// as a point out from the chain's start joint, along the pole; dragging it sets the pole (an
/// edit: the pole is authored, a drag one undo step).
pub(super) fn pole_gizmo_toggle(
    ui: &mut Ui,
    cx: &super::details::DetailsCx,
    id: marrow_engine::graph::NodeId,
    out: &mut super::details::DetailsOut,
) {
    let hint = "Aim the knee or elbow with the viewport's gizmo while the graph previews: drag the point the pole points to";
    gizmo_toggle(ui, cx, id, out, (crate::ui_state::POLE_ENTRY, "Pole Gizmo", hint));
}

/// Where a target point lives: the rig's model space, or a bone it follows (x, y, z then an
/// offset in that bone's frame). The new choice (`""`: model space) when one was made.
pub(super) fn target_bone_picker(
    ui: &mut Ui,
    cx: &super::details::DetailsCx,
    id: marrow_engine::graph::NodeId,
    current: &str,
) -> Option<String> {
    let mut pick = None;
    ui.horizontal(|ui| {
        ui.label("Target follows");
        let shown = if current.is_empty() { "(model space)" } else { current };
        let r = egui::ComboBox::from_id_salt(("target bone", id.0))
            .selected_text(shown)
            .width(150.0)
            .show_ui(ui, |ui| {
                if ui.selectable_label(current.is_empty(), "(model space)").clicked() {
                    pick = Some(String::new());
                }
                for b in cx.skeleton.map(|s| &s.bone_names[..]).unwrap_or_default() {
                    if ui.selectable_label(b == current, b.as_str()).clicked() {
                        pick = Some(b.clone());
                    }
                }
            });
        named(r.response, egui::WidgetType::ComboBox, "Target follows").on_hover_text(
            "A bone of the rig the target moves with: x, y, z are then an offset in its frame",
        );
    });
    pick.filter(|p| p != current)
}
