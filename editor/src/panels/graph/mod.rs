//! The Graph tab: the node editor for a project's blend/adjust graphs.
//!
//! Layout: a toolbar (`toolbar.rs`: the graph edited, New Graph, the preview and its scrub,
//! Frame All and Align), the parameters on the left ([`params`]), the canvas in the middle
//! (`canvas.rs` drawing [`view`], an egui-snarl view of the document's graph) and the selected
//! node's details on the right ([`details`]: wiring pickers, the bespoke editors of
//! [`nodes`]). The compile status each node shows is `status.rs`; copy, paste, duplicate and
//! delete of nodes are `editing.rs`. This file holds the panel's state and lays the parts out.
//!
//! The document is the source of truth: every change the canvas or the side panels make is a
//! `GraphOp` sent as an edit (one undo step; a drag is one step), and the view is rebuilt when
//! the revision moves. Faults come from the engine's compiler (against the previewed rig's
//! skeleton, or the skeleton the graph's clips are for) and from opening the file; each one
//! sits on its node. The preview (the graph playing on a rig in the viewport, live parameter
//! values, the scrub) is session state; selection, pan and zoom are UI state.
//!
//! Not here: compiling or playing graphs (the engine), applying edits (the app), the viewport.

pub mod details;
pub mod framing;
pub mod machine_canvas;
pub mod nodes;
pub mod palette;
pub mod params;
pub mod rewind_strip;
pub mod view;

mod canvas;
mod editing;
mod status;
mod toolbar;

use std::collections::HashMap;
use std::sync::Arc;

use egui::emath::TSTransform;
use egui::{Color32, Id, Key, Modifiers, Pos2, Rect, Vec2};
use egui_snarl::ui::{
    BackgroundPattern, NodeLayout, PinPlacement, SnarlStyle, SnarlWidget, get_selected_nodes,
};
use marrow_engine::graph::{AnimGraph, Connection, GraphError, GraphInstance, Node, NodeId, NodeKind};
use marrow_engine::scene::AssetSource;
use marrow_engine::skeleton::Skeleton;

use crate::command::Command;
use crate::command_table::UiCommand;
use crate::cx::Cx;
use crate::document::Op;
use crate::document::graph_ops::GraphOp;
use crate::ui_state::{Focus, GraphClipboard};
use framing::Framing;
use status::Status;
use view::{GraphView, GraphViewer, NodeAction};

/// The canvas widget's id (pan, zoom and snarl's own state live under it).
pub fn canvas_id() -> Id {
    Id::new("marrow graph canvas")
}

const STYLE: SnarlStyle = SnarlStyle {
    pin_placement: Some(PinPlacement::Edge),
    collapsible: Some(true),
    bg_pattern: Some(BackgroundPattern::new()),
    node_layout: Some(NodeLayout::coil()),
    min_scale: Some(framing::MIN_SCALE),
    max_scale: Some(2.0),
    // Graph units are screen points at zoom 1 (positions and node sizes agree).
    crisp_magnified_text: Some(false),
    ..SnarlStyle::new()
};

/// What the panel measured on its last frame (tests and the benchmark read it).
#[derive(Clone, Debug, Default)]
pub struct GraphReport {
    /// Node rectangles in screen space.
    pub node_rects: HashMap<NodeId, Rect>,
    /// Wire weight labels drawn (preview running).
    pub weight_labels: usize,
    /// The canvas rectangle.
    pub canvas: Option<Rect>,
    /// The canvas zoom (screen points per graph unit; node text is drawn at the UI's text
    /// size times this).
    pub scale: f32,
    /// Screen position of each input pin (node, pin name).
    pub in_pins: HashMap<(NodeId, String), Pos2>,
    /// Screen position of each node's output pin.
    pub out_pins: HashMap<NodeId, Pos2>,
}

/// The Graph tab.
#[derive(Debug, Default)]
pub struct GraphPanel {
    view: GraphView,
    index: view::GraphIndex,
    params: params::ParamsPanel,
    details: details::DetailsPanel,
    search: String,
    /// A note for the status line (a refused wire).
    message: Option<String>,
    status: Status,
    /// Framing asked for on the next frame.
    frame: Option<Framing>,
    /// The framing in progress and the frames left to keep it.
    framing: Option<(Framing, u8)>,
    /// The zoom Frame All reached this framing (it only zooms out while it holds, so nodes
    /// that turn compact when zoomed out cannot make it swing back).
    framing_cap: f32,
    /// Node rectangles of the last frame, graph space.
    rects: HashMap<NodeId, Rect>,
    /// Node body sizes of the last frame (off-screen nodes keep them without drawing).
    body_sizes: HashMap<NodeId, Vec2>,
    /// The canvas transform of the last frame (graph -> screen).
    transform: TSTransform,
    last_snarl_selection: Vec<egui_snarl::NodeId>,
    /// The rig the preview plays on.
    preview_rig: Option<String>,
    /// The side panels the user folded away (the canvas takes the room).
    hide_params: bool,
    hide_details: bool,
    /// The entity selected when the graph followed the selection last.
    followed: Option<String>,
    /// The last frame's measurements.
    pub report: GraphReport,
    /// The open state canvas (a StateMachine node of the graph shown), if any.
    pub machine: Option<machine_canvas::MachineView>,
    /// The levels above the graph shown, outermost first: (graph, StateMachine node) pairs a
    /// nested graph was opened from (the breadcrumb).
    trail: Vec<(String, NodeId)>,
    /// The state canvas's measurements of the last frame.
    pub machine_report: machine_canvas::MachineReport,
    /// Where the rewind timeline was drawn on the last frame (`None`: not shown).
    pub rewind_report: Option<rewind_strip::StripReport>,
}

impl GraphPanel {
    /// The messages shown on `node` (compile errors, faults found on open).
    pub fn faults(&self, node: NodeId) -> &[String] {
        self.status.faults.get(&node).map_or(&[], Vec::as_slice)
    }

    /// Messages on no node (no Output, a doubled parameter).
    pub fn general_faults(&self) -> &[String] {
        &self.status.general
    }

    /// Frames every node on the next frames, as Frame All and F do.
    pub fn frame_all(&mut self) {
        self.frame = Some(Framing::All);
    }

    /// Draws the tab.
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut Cx) {
        self.follow_selection(cx);
        self.toolbar(ui, cx);
        ui.separator();
        let Some(path) = shown_graph(cx) else {
            ui.vertical_centered(|ui| {
                ui.add_space(30.0);
                ui.weak(
                    "This project has no graph yet. A graph blends and adjusts clips: New Graph starts one.",
                );
            });
            return;
        };
        let graph = &cx.doc.project().graphs[&path];
        self.refresh_status(cx, &path, graph);
        // A machine whose node went away (undo, another graph shown) closes.
        if self.machine.as_ref().is_some_and(|v| {
            !matches!(graph.node(v.node).map(|n| &n.kind), Some(NodeKind::StateMachine { .. }))
        }) {
            self.machine = None;
        }
        let graphs: Vec<String> = cx.doc.project().manifest.graphs.clone();
        let previewing = cx.session.preview().is_some_and(|p| p.graph == path && p.error.is_none());
        let inst = if previewing { preview_instance(cx) } else { None };
        let clips: Vec<String> = cx.session.library().clip_refs().map(str::to_owned).collect();

        if !self.hide_params {
            egui::Panel::left("graph parameters").resizable(true).default_size(180.0).show(ui, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| {
                    self.params.ui(ui, cx, &path, graph, previewing);
                });
            });
        }
        let single = match cx.ui.graph_selection.as_slice() {
            [one] => graph.node(*one).cloned(),
            _ => None,
        };
        if !self.hide_details {
            egui::Panel::right("graph details").resizable(true).default_size(250.0).show(ui, |ui| {
                egui::ScrollArea::vertical().show(ui, |ui| match &single {
                    Some(node) => {
                        let dcx = details::DetailsCx {
                            graph,
                            clips: &clips,
                            skeleton: self.status.skeleton.as_deref(),
                            live: inst,
                            faults: &self.status.faults,
                            gizmo: cx
                                .ui
                                .adjust_gizmo
                                .as_ref()
                                .filter(|(g, _, _)| *g == path)
                                .map(|(_, n, e)| (*n, *e)),
                            path: &path,
                            graphs: &graphs,
                            machine: self.machine.as_ref(),
                        };
                        let mut out = details::DetailsOut::default();
                        self.details.ui(ui, &dcx, node, &mut out);
                        if let Some(target) = out.gizmo {
                            cx.ui.adjust_gizmo = target.map(|(n, e)| (path.clone(), n, e));
                        }
                        for op in out.ops {
                            cx.edit(Op::Graph { path: path.clone(), op });
                        }
                        for c in out.commands {
                            cx.send(c);
                        }
                        self.follow_details(cx, &path, out.open_machine, out.select, out.open_graph);
                    }
                    None => {
                        ui.heading("Node");
                        ui.weak(if cx.ui.graph_selection.is_empty() {
                            "Click a node to edit it here."
                        } else {
                            "Several nodes are selected."
                        });
                    }
                });
            });
        }
        self.rewind_report = None;
        if previewing && cx.session.recording().is_some_and(|r| !r.frames().is_empty()) {
            egui::Panel::bottom("graph rewind").resizable(false).show(ui, |ui| {
                self.rewind_report = rewind_strip::ui(ui, cx);
            });
        }
        egui::CentralPanel::default().frame(egui::Frame::NONE).show(ui, |ui| {
            if self.breadcrumb(ui, cx, &path, graph) {
                self.machine_canvas(ui, cx, &path, graph, inst, &clips);
            } else {
                self.canvas(ui, cx, &path, graph, inst, &clips);
            }
        });
    }

    /// Opens a StateMachine node's canvas (double-click on the node, Open in its details).
    pub fn open_machine(&mut self, node: NodeId) {
        if self.machine.as_ref().is_none_or(|v| v.node != node) {
            self.machine = Some(machine_canvas::MachineView::new(node));
        }
    }

    /// What the details panel asked of the state canvas: open it, select on it, open a nested
    /// graph (remembered in the breadcrumb).
    fn follow_details(
        &mut self,
        cx: &mut Cx,
        path: &str,
        open: Option<NodeId>,
        select: Option<Option<machine_canvas::MachineItem>>,
        graph: Option<String>,
    ) {
        if let Some(n) = open {
            self.open_machine(n);
        }
        if let (Some(sel), Some(v)) = (select, self.machine.as_mut()) {
            v.selected = sel;
        }
        if let Some(g) = graph
            && let Some(v) = &self.machine
        {
            self.trail.push((path.to_owned(), v.node));
            self.machine = None;
            cx.ui.graph = Some(g);
            cx.ui.graph_selection.clear();
        }
    }

    /// The breadcrumb above the canvas (the graphs a nested graph was opened from, the graph,
    /// the open state machine); returns whether the state canvas is open.
    fn breadcrumb(&mut self, ui: &mut egui::Ui, cx: &mut Cx, path: &str, graph: &AnimGraph) -> bool {
        if self.trail.is_empty() && self.machine.is_none() {
            return false;
        }
        let mut back: Option<usize> = None;
        let mut close = false;
        ui.horizontal(|ui| {
            for (k, (g, n)) in self.trail.iter().enumerate() {
                let text = format!("{} › #{}", g.rsplit('/').next().unwrap_or(g), n.0);
                if ui.link(text).clicked() {
                    back = Some(k);
                }
                ui.label("›");
            }
            let name = path.rsplit('/').next().unwrap_or(path);
            let r = ui.link(name);
            if crate::widgets::named(r, egui::WidgetType::Link, "Breadcrumb graph").clicked() {
                close = true;
            }
            if let Some(v) = &self.machine {
                let title =
                    graph.node(v.node).map_or_else(String::new, crate::document::graph_ops::node_title);
                ui.label("›");
                ui.strong(title);
            }
        });
        if let Some(k) = back {
            let (g, n) = self.trail[k].clone();
            self.trail.truncate(k);
            cx.ui.graph = Some(g);
            cx.ui.graph_selection = vec![n];
            self.machine = Some(machine_canvas::MachineView::new(n));
            return false;
        }
        if close {
            self.machine = None;
        }
        self.machine.is_some()
    }

    /// The open state machine's canvas, and its Delete key.
    fn machine_canvas(
        &mut self,
        ui: &mut egui::Ui,
        cx: &mut Cx,
        path: &str,
        graph: &AnimGraph,
        inst: Option<&GraphInstance>,
        clips: &[String],
    ) {
        let Some(view) = self.machine.as_mut() else { return };
        let Some(NodeKind::StateMachine { machine }) = graph.node(view.node).map(|n| &n.kind) else { return };
        let rect = ui.available_rect_before_wrap();
        if ui.input(|i| i.pointer.any_pressed()) && ui.rect_contains_pointer(rect) {
            cx.ui.focus = Focus::Graph;
        }
        let live = inst.and_then(|g| g.machines().find(|(c, _)| c.node == view.node));
        let empty = HashMap::new();
        let faults = self.status.machine_faults.get(&view.node).unwrap_or(&empty);
        let first = clips.first().map_or("", String::as_str);
        let mut ops = machine_canvas::ui(ui, view, machine, live, faults, first, &mut self.machine_report);
        let delete = cx.ui.focus == Focus::Graph
            && !ui.ctx().egui_wants_keyboard_input()
            && ui.input(|i| i.key_pressed(Key::Delete) || i.key_pressed(Key::Backspace));
        if delete && let Some(op) = machine_canvas::delete_selected(view, machine) {
            ops.push(op);
        }
        for op in ops {
            cx.edit(Op::Graph { path: path.to_owned(), op });
        }
    }

    /// The graph follows the selection: selecting an entity whose Animator plays a graph opens it.
    fn follow_selection(&mut self, cx: &mut Cx) {
        let selected = cx.ui.selection.entity().map(str::to_owned);
        if selected == self.followed {
            return;
        }
        self.followed = selected.clone();
        let Some((_, scene)) = cx.scene() else { return };
        if let Some(g) = selected.and_then(|p| {
            crate::document::tree::find(scene, &p)
                .and_then(|e| e.animator.as_ref())
                .and_then(|a| a.graph.clone())
        }) && cx.ui.graph.as_ref() != Some(&g)
        {
            cx.ui.graph = Some(g);
            cx.ui.graph_selection.clear();
        }
    }
}

/// The graph the tab shows: the one asked for (`UiState::graph`) while the project has it (a
/// New Graph lands one frame later), else the project's first.
fn shown_graph(cx: &Cx) -> Option<String> {
    let project = cx.doc.project();
    cx.ui
        .graph
        .clone()
        .filter(|g| project.graphs.contains_key(g))
        .or_else(|| project.manifest.graphs.iter().find(|g| project.graphs.contains_key(*g)).cloned())
}

/// The running instance of the previewed graph.
fn preview_instance<'a>(cx: &Cx<'a>) -> Option<&'a GraphInstance> {
    let p = cx.session.preview()?;
    let e = cx.session.entity(&p.rig)?;
    cx.session.world().animator(e)?.current_graph()
}
