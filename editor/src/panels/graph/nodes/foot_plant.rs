//! The FootPlant node's bespoke editor in the node details: the hips and each leg's hip, knee and
//! ankle picked from the rig, the knees' bend axis, and how far a foot may be lifted or lowered.
//! The plane (height, slope) and the weight are float pins: their constants are on the node, and
//! a Parameter wired to one drives it live in preview.
//!
//! Not here: the node's body on the canvas (`super::super::view`), applying the edits.

use egui::Ui;
use glam::Vec3;
use marrow_engine::graph::{NodeId, NodeKind};

use super::super::details::{DetailsCx, DetailsOut, bone_picker, set};
use super::vector;
use crate::widgets::named;

/// The settings of a FootPlant node (the kind's fields, gathered to rebuild it on a change).
#[derive(Clone, Debug, PartialEq)]
pub struct FootPlant {
    /// The hips.
    pub hips: String,
    /// Left and right legs: hip, knee, ankle.
    pub legs: [[String; 3]; 2],
    /// The plane's height and slope constants.
    pub plane: [f32; 2],
    /// The most a foot is lifted and lowered.
    pub limits: [f32; 2],
    /// The knees' bend axis.
    pub mid_axis: Vec3,
    /// The weight constant.
    pub weight: f32,
}

impl FootPlant {
    /// The settings of `kind`, if it is a FootPlant.
    pub fn of(kind: &NodeKind) -> Option<Self> {
        match kind {
            NodeKind::FootPlant {
                hips,
                left,
                right,
                height,
                slope,
                max_lift,
                max_drop,
                mid_axis,
                weight,
            } => Some(Self {
                hips: hips.clone(),
                legs: [left.clone(), right.clone()],
                plane: [*height, *slope],
                limits: [*max_lift, *max_drop],
                mid_axis: *mid_axis,
                weight: *weight,
            }),
            _ => None,
        }
    }

    /// The node kind holding these settings.
    pub fn kind(&self) -> NodeKind {
        let [left, right] = self.legs.clone();
        NodeKind::FootPlant {
            hips: self.hips.clone(),
            left,
            right,
            height: self.plane[0],
            slope: self.plane[1],
            max_lift: self.limits[0],
            max_drop: self.limits[1],
            mid_axis: self.mid_axis,
            weight: self.weight,
        }
    }
}

/// Draws the editor of the FootPlant node `id` with settings `fp`.
pub fn editor(ui: &mut Ui, cx: &DetailsCx, id: NodeId, fp: &FootPlant, out: &mut DetailsOut) {
    egui::Grid::new(("foot plant", id.0)).num_columns(2).show(ui, |ui| {
        ui.label("Hips");
        if let Some(b) = bone_picker(ui, ("plant hips", id.0), cx.skeleton, &fp.hips, "Hips bone") {
            set(out, id, FootPlant { hips: b, ..fp.clone() }.kind(), "hips");
        }
        ui.end_row();
        for (side, (leg, field)) in [("Left", "left"), ("Right", "right")].into_iter().enumerate() {
            for (k, joint) in ["hip", "knee", "ankle"].into_iter().enumerate() {
                ui.label(format!("{} {joint}", leg));
                let label = format!("{leg} {joint} bone");
                let current = &fp.legs[side][k];
                if let Some(b) = bone_picker(ui, ("plant leg", id.0, side, k), cx.skeleton, current, &label) {
                    let mut next = fp.clone();
                    next.legs[side][k] = b;
                    set(out, id, next.kind(), field);
                }
                ui.end_row();
            }
        }
    });
    ui.weak("Each leg is its hip (thigh), knee and ankle; the hips are the bone above both legs.");
    if let Some(a) = vector(ui, "Knee axis", fp.mid_axis)
        && a.length_squared() > 0.0
    {
        set(out, id, FootPlant { mid_axis: a, ..fp.clone() }.kind(), "mid_axis");
    }
    ui.weak("The axis the knees bend about, in their own space.");
    for (k, (label, field)) in [("Max lift", "max_lift"), ("Max drop", "max_drop")].into_iter().enumerate() {
        ui.horizontal(|ui| {
            ui.label(label);
            let mut v = fp.limits[k];
            let r =
                ui.add(crate::widgets::authored_drag(&mut v).speed(0.01).range(0.0..=10.0).max_decimals(3));
            if named(r, egui::WidgetType::DragValue, label).changed() && v.is_finite() {
                let mut next = fp.clone();
                next.limits[k] = v;
                set(out, id, next.kind(), field);
            }
        });
    }
    ui.weak("How far a foot may be lifted onto or lowered to the plane, in the rig's units.");
}
