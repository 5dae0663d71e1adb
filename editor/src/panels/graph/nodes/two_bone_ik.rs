//! The TwoBoneIk node's bespoke editor in the node details: the chain's three bones picked from
//! the rig (start, mid, end), the pole and the mid joint's bend axis, and where softening
//! starts. The target (x, y, z) and the weight are float pins: their constants are on the node,
//! and a Parameter wired to one drives it live in preview.
//!
//! Not here: the node's body on the canvas (`super::super::view`), applying the edits.

use egui::Ui;
use glam::Vec3;
use marrow_engine::graph::{NodeId, NodeKind};

use super::super::details::{DetailsCx, DetailsOut, bone_picker, set};
use super::vector;
use crate::widgets::named;

/// The settings of a TwoBoneIk node (the kind's fields, gathered to rebuild it on a change).
#[derive(Clone, Debug, PartialEq)]
pub struct TwoBoneIk {
    /// The chain's bones: start, mid, end.
    pub bones: [String; 3],
    /// The target constants.
    pub target: [f32; 3],
    /// The bone the target follows ("": none).
    pub target_bone: String,
    /// The pole (model space).
    pub pole: Vec3,
    /// The mid joint's bend axis (its local space).
    pub mid_axis: Vec3,
    /// Where softening starts.
    pub soften: f32,
    /// The weight constant.
    pub weight: f32,
}

impl TwoBoneIk {
    /// The settings of `kind`, if it is a TwoBoneIk.
    pub fn of(kind: &NodeKind) -> Option<Self> {
        match kind {
            NodeKind::TwoBoneIk { start, mid, end, x, y, z, target_bone, pole, mid_axis, soften, weight } => {
                Some(Self {
                    bones: [start.clone(), mid.clone(), end.clone()],
                    target: [*x, *y, *z],
                    target_bone: target_bone.clone(),
                    pole: *pole,
                    mid_axis: *mid_axis,
                    soften: *soften,
                    weight: *weight,
                })
            }
            _ => None,
        }
    }

    /// The node kind holding these settings.
    pub fn kind(&self) -> NodeKind {
        let [start, mid, end] = self.bones.clone();
        let [x, y, z] = self.target;
        NodeKind::TwoBoneIk {
            start,
            mid,
            end,
            x,
            y,
            z,
            target_bone: self.target_bone.clone(),
            pole: self.pole,
            mid_axis: self.mid_axis,
            soften: self.soften,
            weight: self.weight,
        }
    }
}

/// Draws the editor of the TwoBoneIk node `id` with settings `ik`.
pub fn editor(ui: &mut Ui, cx: &DetailsCx, id: NodeId, ik: &TwoBoneIk, out: &mut DetailsOut) {
    egui::Grid::new(("two bone ik", id.0)).num_columns(2).show(ui, |ui| {
        for (k, (label, field)) in
            [("Start", "start"), ("Mid", "mid"), ("End", "end")].into_iter().enumerate()
        {
            ui.label(label);
            if let Some(b) =
                bone_picker(ui, ("ik bone", id.0, k), cx.skeleton, &ik.bones[k], &format!("{label} bone"))
            {
                let mut next = ik.clone();
                next.bones[k] = b;
                set(out, id, next.kind(), field);
            }
            ui.end_row();
        }
    });
    ui.weak("Start is the hip or shoulder, Mid the knee or elbow (its child), End the ankle or wrist.");
    if let Some(b) = super::target_bone_picker(ui, cx, id, &ik.target_bone) {
        set(out, id, TwoBoneIk { target_bone: b, ..ik.clone() }.kind(), "target_bone");
    }
    super::target_gizmo_toggle(ui, cx, id, out);
    if let Some(p) = vector(ui, "Pole", ik.pole) {
        set(out, id, TwoBoneIk { pole: p, ..ik.clone() }.kind(), "pole");
    }
    super::pole_gizmo_toggle(ui, cx, id, out);
    ui.weak("The direction the knee or elbow points to, in the rig's space.");
    if let Some(a) = vector(ui, "Bend axis", ik.mid_axis)
        && a.length_squared() > 0.0
    {
        set(out, id, TwoBoneIk { mid_axis: a, ..ik.clone() }.kind(), "mid_axis");
    }
    ui.weak("The axis the mid bone bends about, in its own space.");
    ui.horizontal(|ui| {
        ui.label("Soften from");
        let mut s = ik.soften;
        let r = ui.add(crate::widgets::authored_slider(&mut s, 0.5..=1.0, 2));
        if named(r, egui::WidgetType::Slider, "Soften from").changed() && s.is_finite() {
            set(out, id, TwoBoneIk { soften: s, ..ik.clone() }.kind(), "soften");
        }
    });
    ui.weak("Of the chain's length: past it the end approaches full reach smoothly (1: no softening).");
}
