//! The selected node's details: its faults in full, what feeds each input (a picker per pin, so
//! wiring also works without dragging), the Clip's settings, and the bespoke editors a node body
//! is too small for, one file each under `super::nodes` (the BlendSpace1D axis, the BlendSpace2D
//! plane, the Mask's bone tree, the Adjust entries, the TwoBoneIk chain).
//!
//! Everything authored comes out as `GraphOp`s; the live position point sends a session
//! command instead when a parameter drives it.
//!
//! Not here: the canvas (`super::view`), parameters (`super::params`).

use std::collections::HashMap;

use egui::{Color32, RichText, Ui};
use marrow_engine::graph::{AnimGraph, GraphInstance, Node, NodeId, NodeKind};
use marrow_engine::skeleton::Skeleton;

use super::nodes;
use super::view::{input_pins, short};
use crate::command::Command;
use crate::document::graph_ops::{GraphOp, node_title};
use crate::widgets::named;

/// What the details panel reads.
pub struct DetailsCx<'a> {
    /// The graph.
    pub graph: &'a AnimGraph,
    /// The project's clips.
    pub clips: &'a [String],
    /// The skeleton the graph is checked against (bone pickers, the mask tree).
    pub skeleton: Option<&'a Skeleton>,
    /// The running preview of this graph.
    pub live: Option<&'a GraphInstance>,
    /// Messages per node.
    pub faults: &'a HashMap<NodeId, Vec<String>>,
    /// The Adjust entry the viewport's gizmo edits, if it is in this graph.
    pub gizmo: Option<(NodeId, usize)>,
    /// The graph's asset path.
    pub path: &'a str,
    /// The project's graphs (what a state can play).
    pub graphs: &'a [String],
    /// The open state canvas, if any (its selection picks the inspector).
    pub machine: Option<&'a super::machine_canvas::MachineView>,
}

/// What the details panel asks for.
#[derive(Default)]
pub struct DetailsOut {
    /// Authored edits.
    pub ops: Vec<GraphOp>,
    /// Session commands (the live position point).
    pub commands: Vec<Command>,
    /// A new target for the viewport's Adjust gizmo (`Some(None)`: none).
    pub gizmo: Option<Option<(NodeId, usize)>>,
    /// Open the state canvas of this StateMachine node.
    pub open_machine: Option<NodeId>,
    /// A new selection on the state canvas (`Some(None)`: none).
    pub select: Option<Option<super::machine_canvas::MachineItem>>,
    /// Open this graph (a state's nested graph).
    pub open_graph: Option<String>,
}

/// The node details' own state.
#[derive(Debug, Default)]
pub struct DetailsPanel {
    /// The mask tree's filter text.
    bone_filter: String,
}

/// Sends a node's new settings.
pub(super) fn set(out: &mut DetailsOut, id: NodeId, kind: NodeKind, field: &str) {
    out.ops.push(GraphOp::SetNode { node: id, kind, field: field.to_owned() });
}

/// A clip chosen from the project's clips.
pub(super) fn clip_picker(
    ui: &mut Ui,
    salt: impl std::hash::Hash + std::fmt::Debug,
    clips: &[String],
    current: &str,
) -> Option<String> {
    let mut pick = None;
    egui::ComboBox::from_id_salt(salt).selected_text(short(current)).width(180.0).show_ui(ui, |ui| {
        for c in clips {
            if ui.selectable_label(c == current, c.as_str()).clicked() {
                pick = Some(c.clone());
            }
        }
    });
    pick
}

/// A bone chosen from the skeleton's (or typed, without one); `label` names the widget for
/// assistive technology (and tests).
pub(super) fn bone_picker(
    ui: &mut Ui,
    salt: impl std::hash::Hash + std::fmt::Debug,
    skeleton: Option<&Skeleton>,
    current: &str,
    label: &str,
) -> Option<String> {
    match skeleton {
        Some(sk) => {
            let mut pick = None;
            let r = egui::ComboBox::from_id_salt(salt)
                .selected_text(if current.is_empty() { "(bone)" } else { current })
                .width(150.0)
                .height(420.0)
                .show_ui(ui, |ui| {
                    // The rig's tree: each bone followed by its subtree, indented by depth.
                    for (i, depth) in marrow_engine::skeleton::tree_order(&sk.parents) {
                        let b = &sk.bone_names[i];
                        ui.horizontal(|ui| {
                            ui.add_space(12.0 * depth as f32);
                            if ui.selectable_label(b == current, b.as_str()).clicked() {
                                pick = Some(b.clone());
                            }
                        });
                    }
                });
            named(r.response, egui::WidgetType::ComboBox, label);
            pick
        }
        None => {
            let mut text = current.to_owned();
            let r = ui.add(egui::TextEdit::singleline(&mut text).desired_width(150.0).hint_text("bone name"));
            let r = named(r, egui::WidgetType::TextEdit, label);
            (r.lost_focus() && text != current).then_some(text)
        }
    }
}

impl DetailsPanel {
    /// Draws the details of `node`.
    pub fn ui(&mut self, ui: &mut Ui, cx: &DetailsCx, node: &Node, out: &mut DetailsOut) {
        let id = node.id;
        ui.heading(node_title(node));
        if let Some(f) = cx.faults.get(&id) {
            for m in f {
                ui.add(
                    egui::Label::new(
                        RichText::new(format!("⚠ {m}")).color(Color32::from_rgb(0xff, 0x80, 0x80)),
                    )
                    .wrap(),
                );
            }
        }
        self.inputs(ui, cx, node, out);
        ui.separator();
        match node.kind.clone() {
            NodeKind::Clip { clip, speed, looping } => {
                ui.horizontal(|ui| {
                    ui.label("Clip");
                    if let Some(c) = clip_picker(ui, ("details clip", id.0), cx.clips, &clip) {
                        set(out, id, NodeKind::Clip { clip: c, speed, looping }, "clip");
                    }
                });
                ui.horizontal(|ui| {
                    let mut s = speed;
                    ui.label("Speed");
                    if ui.add(egui::DragValue::new(&mut s).speed(0.01)).changed() && s.is_finite() {
                        set(out, id, NodeKind::Clip { clip: clip.clone(), speed: s, looping }, "speed");
                    }
                    let mut l = looping;
                    if ui.checkbox(&mut l, "Loop").changed() {
                        set(out, id, NodeKind::Clip { clip: clip.clone(), speed, looping: l }, "looping");
                    }
                });
            }
            NodeKind::BlendSpace1D { samples, position, looping } => {
                nodes::blend_space::editor(ui, cx, id, &samples, position, looping, out);
            }
            NodeKind::BlendSpace2D { samples, x, y, looping } => {
                nodes::blend_space_2d::editor(ui, cx, id, &samples, x, y, looping, out);
            }
            NodeKind::Mask { weight, subtrees } => {
                nodes::mask::editor(&mut self.bone_filter, ui, cx, id, weight, &subtrees, out)
            }
            NodeKind::Adjust { entries } => nodes::adjust::editor(ui, cx, id, &entries, out),
            kind @ NodeKind::LookAt { .. } => nodes::look_at::editor(ui, cx, id, &kind, out),
            kind @ NodeKind::FootPlant { .. } => {
                if let Some(fp) = nodes::foot_plant::FootPlant::of(&kind) {
                    nodes::foot_plant::editor(ui, cx, id, &fp, out);
                }
            }
            kind @ NodeKind::TwoBoneIk { .. } => {
                if let Some(ik) = nodes::two_bone_ik::TwoBoneIk::of(&kind) {
                    nodes::two_bone_ik::editor(ui, cx, id, &ik, out);
                }
            }
            NodeKind::StateMachine { machine } => nodes::state_machine::editor(ui, cx, id, &machine, out),
            NodeKind::Unknown { kind, settings } => {
                ui.label(format!("A node of kind {kind:?}, which this build does not know."));
                ui.weak("It is kept as written and saved back unchanged; the graph cannot play until it is deleted.");
                ui.add(egui::Label::new(RichText::new(settings).monospace().small()).wrap());
            }
            NodeKind::Output => {
                ui.weak("The graph's result: the pose fed to its input is what the rig plays.");
            }
            // A kind with no editor of its own ([`super::nodes`]): its described settings are
            // on the node.
            _ => {
                ui.weak("Its settings are on the node.");
            }
        }
    }

    /// A "fed by" picker per input pin.
    fn inputs(&mut self, ui: &mut Ui, cx: &DetailsCx, node: &Node, out: &mut DetailsOut) {
        let pins = input_pins(cx.graph, node);
        if pins.is_empty() {
            return;
        }
        ui.separator();
        egui::Grid::new(("inputs", node.id.0)).num_columns(2).show(ui, |ui| {
            for (pin, ty) in pins {
                ui.label(&pin);
                let current = cx.graph.input(node.id, &pin);
                let text = current.and_then(|c| cx.graph.node(c)).map_or("(none)".to_owned(), node_title);
                let mut pick: Option<Option<NodeId>> = None;
                let r = egui::ComboBox::from_id_salt(("feed", node.id.0, pin.as_str()))
                    .selected_text(text)
                    .width(160.0)
                    .show_ui(ui, |ui| {
                        if ui.selectable_label(current.is_none(), "(none)").clicked() {
                            pick = Some(None);
                        }
                        for n in &cx.graph.nodes {
                            if n.id != node.id
                                && ty.is_some()
                                && cx.graph.output_type(&n.kind) == ty
                                && ui.selectable_label(current == Some(n.id), node_title(n)).clicked()
                            {
                                pick = Some(Some(n.id));
                            }
                        }
                    });
                named(r.response, egui::WidgetType::ComboBox, &format!("{} {pin} input", node_title(node)));
                match pick {
                    Some(Some(from)) => {
                        out.ops.push(GraphOp::Connect { from, to: node.id, pin: pin.clone() })
                    }
                    Some(None) if current.is_some() => {
                        out.ops.push(GraphOp::Disconnect { to: node.id, pin: pin.clone() })
                    }
                    _ => {}
                }
                ui.end_row();
            }
        });
    }
}
