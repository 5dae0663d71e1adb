//! The Graph tab: the node editor for a project's blend/adjust graphs.
//!
//! Layout: a toolbar (the graph edited, New Graph, the preview and its scrub, Frame All and
//! Align), the parameters on the left ([`params`]), the canvas in the middle ([`view`], an
//! egui-snarl view of the document's graph) and the selected node's details on the right
//! ([`details`]: wiring pickers, the blend space axis, the mask's bone tree, adjusts).
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
pub mod nodes;
pub mod palette;
pub mod params;
pub mod view;

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

/// Compile status of the graph shown, cached per revision.
#[derive(Debug, Default)]
struct Status {
    /// What the status was computed for.
    key: Option<StatusKey>,
    /// Messages per node.
    faults: HashMap<NodeId, Vec<String>>,
    /// Messages on no node (no Output, a doubled parameter).
    general: Vec<String>,
    /// The skeleton the graph was checked against.
    skeleton: Option<Arc<Skeleton>>,
}

/// What a [`Status`] depends on: the document revision, the graph, the scene shown and the
/// preview (rig, graph).
#[derive(Debug)]
struct StatusKey {
    revision: u64,
    graph: String,
    scene: Option<String>,
    preview: Option<(String, String)>,
}

impl StatusKey {
    /// Whether this key was made for these inputs (compared without building a new key).
    fn is(&self, revision: u64, graph: &str, scene: Option<&str>, preview: Option<(&str, &str)>) -> bool {
        self.revision == revision
            && self.graph == graph
            && self.scene.as_deref() == scene
            && self.preview.as_ref().map(|(a, b)| (a.as_str(), b.as_str())) == preview
    }
}

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
        egui::CentralPanel::default().frame(egui::Frame::NONE).show(ui, |ui| {
            self.canvas(ui, cx, &path, graph, inst, &clips);
        });
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

    fn toolbar(&mut self, ui: &mut egui::Ui, cx: &mut Cx) {
        let (mut show_params, mut show_details) = (!self.hide_params, !self.hide_details);
        // Wraps onto a second row in a narrow dock rather than widening the tab.
        ui.horizontal_wrapped(|ui| {
            let graphs = cx.doc.project().manifest.graphs.clone();
            let current = shown_graph(cx);
            let r = egui::ComboBox::from_id_salt("graph picker tab")
                .selected_text(current.as_deref().unwrap_or("(no graph)"))
                .width(180.0)
                .show_ui(ui, |ui| {
                    for g in &graphs {
                        if ui.selectable_label(current.as_deref() == Some(g), g).clicked() {
                            cx.ui.graph = Some(g.clone());
                            cx.ui.graph_selection.clear();
                            self.frame = Some(Framing::Open);
                        }
                    }
                });
            crate::widgets::named(r.response, egui::WidgetType::ComboBox, "Graph");
            if ui.button("New Graph").on_hover_text("An empty graph file in graphs/").clicked() {
                cx.send(Command::NewGraph);
            }
            let Some(path) = current else { return };
            ui.separator();
            self.preview_controls(ui, cx, &path);
            ui.separator();
            let frame_all = ui.button("Frame All").on_hover_text("F");
            crate::probe::mark(ui.ctx(), "graph:frame_all", frame_all.rect);
            if frame_all.clicked() {
                self.frame_all();
            }
            ui.toggle_value(&mut show_params, "Parameters").on_hover_text("Show the parameters panel");
            ui.toggle_value(&mut show_details, "Details").on_hover_text("Show the node details panel");
            let n = cx.ui.graph_selection.len();
            // The enabled-scope below takes what is left of the row and would stack "Align" a
            // letter a line in a narrow dock: start a new row instead.
            if ui.clip_rect().right() - ui.cursor().left() < 64.0 {
                ui.end_row();
            }
            ui.add_enabled_ui(n > 1, |ui| {
                ui.menu_button("Align", |ui| {
                    for (label, how) in
                        [("Left", Align::Left), ("Top", Align::Top), ("Distribute Vertically", Align::Column)]
                    {
                        if ui.button(label).clicked() {
                            self.align(cx, &path, how);
                            ui.close();
                        }
                    }
                });
            });
        });
        self.hide_params = !show_params;
        self.hide_details = !show_details;
        let general = self.status.general.clone();
        let message = self.message.clone();
        let preview_error = cx.session.preview().and_then(|p| p.error.clone());
        if !general.is_empty() || message.is_some() || preview_error.is_some() {
            ui.horizontal_wrapped(|ui| {
                for g in general {
                    ui.colored_label(Color32::from_rgb(0xff, 0x80, 0x80), format!("⚠ {g}"));
                }
                if let Some(m) = message {
                    ui.colored_label(Color32::from_rgb(0xff, 0xc0, 0x60), m);
                }
                if let Some(e) = preview_error {
                    ui.colored_label(
                        Color32::from_rgb(0xff, 0x80, 0x80),
                        format!("The preview does not play: {}", e.lines().next().unwrap_or("")),
                    )
                    .on_hover_text(e);
                }
            });
        }
    }

    fn preview_controls(&mut self, ui: &mut egui::Ui, cx: &mut Cx, path: &str) {
        let world = cx.session.world();
        let rigs: Vec<String> =
            world.rigs().filter(|r| world.animator(*r).is_some()).filter_map(|r| world.path(r)).collect();
        if self.preview_rig.as_ref().is_none_or(|r| !rigs.contains(r)) {
            // The selected rig, else one whose Animator plays this graph, else the first.
            let selected =
                cx.ui.selection.entity().filter(|s| rigs.iter().any(|r| r == s)).map(str::to_owned);
            let plays = cx.scene().and_then(|(_, scene)| {
                rigs.iter()
                    .find(|r| {
                        crate::document::tree::find(scene, r)
                            .and_then(|e| e.animator.as_ref())
                            .is_some_and(|a| a.graph.as_deref() == Some(path))
                    })
                    .cloned()
            });
            self.preview_rig = selected.or(plays).or_else(|| rigs.first().cloned());
        }
        let active = cx.session.preview().filter(|p| p.graph == path).cloned();
        ui.label("Preview on");
        egui::ComboBox::from_id_salt("graph preview rig")
            .selected_text(self.preview_rig.as_deref().unwrap_or("(no rig)"))
            .width(120.0)
            .show_ui(ui, |ui| {
                for r in &rigs {
                    if ui.selectable_label(self.preview_rig.as_deref() == Some(r), r).clicked() {
                        self.preview_rig = Some(r.clone());
                        if active.is_some() {
                            cx.send(Command::PreviewGraph(Some((r.clone(), path.to_owned()))));
                        }
                    }
                }
            });
        match (&active, &self.preview_rig) {
            (Some(_), _) => {
                let stop = ui.button("■ Stop Preview");
                crate::probe::mark(ui.ctx(), "graph:stop_preview", stop.rect);
                if stop.clicked() {
                    cx.send(Command::PreviewGraph(None));
                }
            }
            (None, Some(rig)) => {
                let start =
                    ui.button("▶ Preview").on_hover_text("Play this graph on the rig in the viewport");
                crate::probe::mark(ui.ctx(), "graph:preview", start.rect);
                if start.clicked() {
                    cx.send(Command::PreviewGraph(Some((rig.clone(), path.to_owned()))));
                }
            }
            (None, None) => {
                ui.add_enabled(false, egui::Button::new("▶ Preview"))
                    .on_disabled_hover_text("The scene has no rig with an Animator");
            }
        }
        if let Some(p) = &active
            && let Some(e) = cx.session.entity(&p.rig)
            && let Some(a) = cx.session.world().animator(e)
        {
            let playing = cx.session.is_playing();
            if ui.button(if playing { "⏸" } else { "▶" }).on_hover_text("Play / Pause (Space)").clicked()
            {
                cx.send(if playing { Command::Pause } else { Command::Play });
            }
            let len = cx.session.head_length(e);
            let mut t = a.time();
            let shown = if playing { t % len.max(1e-3) } else { t };
            let mut s = shown.min(len);
            ui.spacing_mut().slider_width = 110.0;
            let r = ui.add(egui::Slider::new(&mut s, 0.0..=len).suffix(" s").max_decimals(2));
            if crate::widgets::named(r, egui::WidgetType::Slider, "Preview time").changed() {
                t = s;
                cx.send(Command::Seek { rig: p.rig.clone(), time: t });
            }
        }
    }

    fn refresh_status(&mut self, cx: &Cx, path: &str, graph: &AnimGraph) {
        // The skeleton chosen and the errors found change only with the document, the scene
        // shown or the preview: a frame that changes none of them does no work here.
        let preview = cx.session.preview().map(|p| (p.rig.as_str(), p.graph.as_str()));
        let scene = cx.session.scene();
        let revision = cx.doc.revision();
        if self.status.key.as_ref().is_some_and(|k| k.is(revision, path, scene, preview)) {
            return;
        }
        let key = StatusKey {
            revision,
            graph: path.to_owned(),
            scene: scene.map(str::to_owned),
            preview: preview.map(|(a, b)| (a.to_owned(), b.to_owned())),
        };
        let skeleton = graph_skeleton(cx, path, graph);
        let errors: Vec<GraphError> = match &skeleton {
            Some(sk) => cx.session.library().compile_graph(path, sk).err().unwrap_or_default(),
            None => marrow_engine::graph::compile::validate_structure(graph).0,
        };
        let mut faults: HashMap<NodeId, Vec<String>> = HashMap::new();
        let mut general = Vec::new();
        for e in errors {
            let text = strip_node(&e.to_string());
            match e.node() {
                Some(n) => faults.entry(n).or_default().push(text),
                None if matches!(e, GraphError::NoOutput) => general
                    .push("The graph has no Output node: right-click the canvas to add one.".to_owned()),
                None => general.push(text),
            }
        }
        // Of the faults found on open, only what the graph no longer holds (a dropped dangling
        // wire): the rest (cycles, mismatched wires, unknown kinds, empty settings) are still
        // there and the compiler reports them live, so they go away when fixed.
        for (p, e) in &cx.ui.graph_load_faults {
            let dropped = matches!(
                e,
                marrow_engine::graph::GraphFileError::Graph(GraphError::DanglingConnection { .. })
            );
            if p == path && dropped {
                let text = format!("on open: {}", strip_node(&e.to_string()));
                match e.node() {
                    Some(n) if graph.node(n).is_some() => faults.entry(n).or_default().push(text),
                    _ => general.push(text),
                }
            }
        }
        self.status = Status { key: Some(key), faults, general, skeleton };
    }

    #[allow(clippy::too_many_arguments)]
    fn canvas(
        &mut self,
        ui: &mut egui::Ui,
        cx: &mut Cx,
        path: &str,
        graph: &AnimGraph,
        inst: Option<&GraphInstance>,
        clips: &[String],
    ) {
        let shown_before = self.view.shows(path);
        if self.view.sync(cx.doc.revision(), path, graph) && !shown_before {
            self.frame = Some(Framing::Open); // a graph opened: readable, centred on its nodes
            self.last_snarl_selection.clear();
        }
        // Nodes deleted (or undone away) leave the selection.
        cx.ui.graph_selection.retain(|n| graph.node(*n).is_some());
        let canvas = ui.available_rect_before_wrap();
        // A press over the canvas, not over a menu or window above it.
        if ui.input(|i| i.pointer.any_pressed()) && ui.rect_contains_pointer(canvas) {
            cx.ui.focus = Focus::Graph;
        }
        if cx.ui.focus == Focus::Graph && !ui.ctx().egui_wants_keyboard_input() {
            self.keys(ui, cx, path, graph);
        }
        let selection = cx.ui.graph_selection.clone();
        let live: HashMap<NodeId, view::Live> = inst.map(|i| view::live_map(i, graph)).unwrap_or_default();
        let previewing = inst.is_some();
        self.index.refresh(cx.doc.revision(), path, graph);
        let mut viewer = GraphViewer {
            graph,
            index: &self.index,
            faults: &self.status.faults,
            live,
            previewing,
            clips,
            selection: &selection,
            search: &mut self.search,
            ops: Vec::new(),
            actions: Vec::new(),
            message: None,
            rects: HashMap::new(),
            in_rows: HashMap::new(),
            out_rows: HashMap::new(),
            transform: TSTransform::IDENTITY,
            set_transform: None,
            can_paste: !cx.ui.graph_clipboard.nodes.is_empty(),
            paste_at: None,
            visible: (self.transform.inverse() * canvas).expand(40.0),
            prev_rects: &self.rects,
            body_sizes: std::mem::take(&mut self.body_sizes),
        };
        // A framing holds for a few frames: the first uses estimated node sizes (and may be
        // discarded by a first layout), the next ones the measured rectangles
        // (Ten frames: side panels may still settle their widths from stored sizes; a press on
        // the canvas ends it early.)
        if let Some(how) = self.frame.take() {
            self.framing = Some((how, 10));
            self.framing_cap = 1.0;
        }
        if ui.input(|i| i.pointer.any_down())
            && ui.input(|i| i.pointer.interact_pos()).is_some_and(|p| canvas.contains(p))
        {
            self.framing = None;
        }
        if let Some((how, left)) = self.framing {
            self.framing = (left > 1).then_some((how, left - 1));
            let t = framing::transform(viewer.prev_rects, graph, canvas, how, self.framing_cap);
            if framing::measured(viewer.prev_rects, graph) {
                self.framing_cap = t.scaling;
            }
            viewer.set_transform = Some(t);
            ui.ctx().request_repaint();
        }
        let id = canvas_id();
        ui.style_mut().interaction.selectable_labels = false;
        let response = SnarlWidget::new().id(id).style(STYLE).show(&mut self.view.snarl, &mut viewer, ui);
        if graph.nodes.is_empty() {
            ui.painter().text(
                canvas.center(),
                egui::Align2::CENTER_CENTER,
                "Right-click to add nodes. A graph plays the pose fed to its Output.",
                egui::FontId::proportional(14.0),
                Color32::GRAY,
            );
        }
        let transform = viewer.transform;
        self.transform = transform;
        let visible = transform.inverse() * canvas;
        self.body_sizes = std::mem::take(&mut viewer.body_sizes);
        let drawn = Drawn {
            rects: std::mem::take(&mut viewer.rects),
            in_rows: std::mem::take(&mut viewer.in_rows),
            out_rows: std::mem::take(&mut viewer.out_rows),
            live: std::mem::take(&mut viewer.live),
            transform,
        };
        // What the canvas asked for.
        let ops = std::mem::take(&mut viewer.ops);
        let actions = std::mem::take(&mut viewer.actions);
        let paste_at = viewer.paste_at;
        if viewer.message.is_some() {
            self.message = viewer.message.take();
        } else if !ops.is_empty() {
            self.message = None;
        }
        drop(viewer);
        let labels = if previewing { self.paint_weights(ui, graph, &drawn, visible) } else { 0 };
        self.report = self.measure(&drawn, canvas, labels);
        self.rects = drawn.rects;
        apply_requests(cx, path, graph, ops, actions, paste_at);
        self.selection_and_drags(ui, cx, path, graph, &response);
    }

    /// Paints the weight flowing through each visible wire at its middle; returns how many.
    fn paint_weights(&self, ui: &egui::Ui, graph: &AnimGraph, d: &Drawn, visible: Rect) -> usize {
        let painter = ui
            .ctx()
            .layer_painter(egui::LayerId::new(ui.layer_id().order, canvas_id()))
            .with_clip_rect(visible);
        let mut labels = 0;
        for c in &graph.connections {
            let (Some(fr), Some(tr)) = (d.rects.get(&c.from), d.rects.get(&c.to)) else {
                continue;
            };
            let Some(k) = self.index.pins(c.to).iter().position(|(p, _)| *p == c.pin) else {
                continue;
            };
            let (Some(&y0), Some(&y1)) = (d.out_rows.get(&c.from), d.in_rows.get(&(c.to, k))) else {
                continue;
            };
            let a = Pos2::new(fr.right(), y0);
            let mid = a + (Pos2::new(tr.left(), y1) - a) * 0.5;
            if !visible.contains(mid) {
                continue; // off screen: no text to lay out
            }
            let source = d.live.get(&c.from).copied().unwrap_or_default();
            let text = match (source.weight, source.value) {
                (Some(w), _) => format!("{w:.2}"),
                (None, Some(v)) => format!("= {v:.2}"),
                _ => continue,
            };
            let galley = painter.layout_no_wrap(text, egui::FontId::proportional(11.0), Color32::WHITE);
            let r = Rect::from_center_size(mid, galley.size() + Vec2::new(8.0, 2.0));
            painter.rect_filled(r, 3.0, Color32::from_black_alpha(190));
            painter.galley(r.center() - galley.size() * 0.5, galley, Color32::WHITE);
            labels += 1;
        }
        labels
    }

    /// This frame's measurements in screen space (nodes and pins), for tests and benchmarks.
    fn measure(&self, d: &Drawn, canvas: Rect, weight_labels: usize) -> GraphReport {
        let t = d.transform;
        let mut report =
            GraphReport { canvas: Some(canvas), scale: t.scaling, weight_labels, ..GraphReport::default() };
        for (n, r) in &d.rects {
            report.node_rects.insert(*n, t * *r);
            if let Some(&y) = d.out_rows.get(n) {
                report.out_pins.insert(*n, t * Pos2::new(r.right(), y));
            }
            for (k, (pin, _)) in self.index.pins(*n).iter().enumerate() {
                if let Some(&y) = d.in_rows.get(&(*n, k)) {
                    report.in_pins.insert((*n, pin.clone()), t * Pos2::new(r.left(), y));
                }
            }
        }
        report
    }

    /// Selection (clicks, snarl's shift/rectangle selection) and node drags (the selection moves
    /// together; one undo step when the pointer is released).
    fn selection_and_drags(
        &mut self,
        ui: &egui::Ui,
        cx: &mut Cx,
        path: &str,
        graph: &AnimGraph,
        response: &egui::Response,
    ) {
        let ctx = ui.ctx().clone();
        let id = canvas_id();
        let modifiers = ui.input(|i| i.modifiers);
        let mut clicked_node = None;
        // Only a frame with a press or a release can click or start dragging a node.
        let pointer_event = ui.input(|i| i.pointer.any_pressed() || i.pointer.any_released());
        for (&nid, &sid) in self.view.ids.iter().filter(|_| pointer_event) {
            if let Some(r) = ctx.read_response(id.with(("snarl-node", sid)).with("frame"))
                && (r.clicked() || r.drag_started())
            {
                clicked_node = Some(nid);
            }
        }
        if let Some(n) = clicked_node {
            if modifiers.shift || modifiers.command {
                let sel = &mut cx.ui.graph_selection;
                if modifiers.command {
                    sel.retain(|x| *x != n);
                } else if !sel.contains(&n) {
                    sel.push(n);
                }
            } else if !cx.ui.graph_selection.contains(&n) || ui.input(|i| i.pointer.primary_released()) {
                // A press on an unselected node selects it (a drag then moves it alone); a click
                // on a selected one narrows the selection to it.
                let dragging_group =
                    cx.ui.graph_selection.contains(&n) && !ui.input(|i| i.pointer.primary_released());
                if !dragging_group {
                    cx.ui.graph_selection = vec![n];
                }
            }
        } else if response.clicked() && !modifiers.shift {
            cx.ui.graph_selection.clear();
        }
        // Snarl's own selection changes on a rectangle drag (Shift+drag on the canvas): adopt it,
        // adding to ours while Shift is held. Clicks are ours (handled above).
        let snarl_sel = get_selected_nodes(id, &ctx);
        if snarl_sel != self.last_snarl_selection {
            if clicked_node.is_none() {
                let mapped: Vec<NodeId> =
                    snarl_sel.iter().filter_map(|s| self.view.snarl.get_node(*s).copied()).collect();
                if modifiers.shift {
                    for n in mapped {
                        if !cx.ui.graph_selection.contains(&n) {
                            cx.ui.graph_selection.push(n);
                        }
                    }
                } else if !mapped.is_empty() || !self.last_snarl_selection.is_empty() {
                    cx.ui.graph_selection = mapped;
                }
            }
            self.last_snarl_selection = snarl_sel;
        }
        // Drags: snarl moved the dragged node (and its own selection); move the rest of ours.
        let mut now: HashMap<NodeId, Pos2> =
            self.view.snarl.nodes_pos_ids().map(|(_, p, n)| (*n, p)).collect();
        let moved: Vec<(NodeId, Vec2)> = now
            .iter()
            .filter_map(|(n, p)| self.view.last_pos.get(n).filter(|o| *o != p).map(|o| (*n, *p - *o)))
            .collect();
        if let Some(&(_, d)) = moved.first() {
            for n in cx.ui.graph_selection.clone() {
                if moved.iter().any(|(m, _)| *m == n) {
                    continue;
                }
                if let Some(&sid) = self.view.ids.get(&n)
                    && let Some(info) = self.view.snarl.get_node_info_mut(sid)
                {
                    info.pos += d;
                    now.insert(n, info.pos);
                }
            }
        }
        if !ui.input(|i| i.pointer.any_down()) {
            let mut moves: Vec<(NodeId, [f32; 2])> = graph
                .nodes
                .iter()
                .filter_map(|n| {
                    let p = now.get(&n.id)?;
                    (p.x != n.position[0] || p.y != n.position[1]).then_some((n.id, [p.x, p.y]))
                })
                .collect();
            moves.sort_by_key(|(n, _)| *n);
            if !moves.is_empty() {
                cx.edit(Op::Graph { path: path.to_owned(), op: GraphOp::MoveNodes(moves) });
            }
        }
        self.view.last_pos = now;
    }

    fn keys(&mut self, ui: &egui::Ui, cx: &mut Cx, path: &str, graph: &AnimGraph) {
        // The editing commands come from the command table (shortcuts, egui-winit's clipboard
        // events, the Edit menu) through the app.
        let actions = std::mem::take(&mut cx.ui.edit_actions);
        let has = |a: UiCommand| actions.contains(&a);
        let sel = cx.ui.graph_selection.clone();
        if (has(UiCommand::Copy) || has(UiCommand::Cut) || has(UiCommand::Duplicate)) && !sel.is_empty() {
            copy(cx, graph, &sel);
            ui.ctx().copy_text(clipboard_text(&cx.ui.graph_clipboard));
        }
        if (has(UiCommand::Delete) || has(UiCommand::Cut)) && !sel.is_empty() {
            delete(cx, path, &sel);
        }
        if has(UiCommand::Paste) {
            paste(cx, path, graph, None, "Paste");
        }
        if has(UiCommand::Duplicate) && !sel.is_empty() {
            paste(cx, path, graph, None, "Duplicate");
        }
        if has(UiCommand::SelectAll) {
            cx.ui.graph_selection = graph.nodes.iter().map(|n| n.id).collect();
        }
        if has(UiCommand::Frame) {
            self.frame_all();
        }
        if ui.ctx().input_mut(|i| i.consume_key(Modifiers::NONE, Key::Escape)) {
            cx.ui.graph_selection.clear();
        }
    }

    fn align(&mut self, cx: &mut Cx, path: &str, how: Align) {
        let Some(graph) = cx.doc.project().graphs.get(path) else { return };
        let nodes: Vec<&Node> = cx.ui.graph_selection.iter().filter_map(|n| graph.node(*n)).collect();
        if nodes.len() < 2 {
            return;
        }
        let min_x = nodes.iter().map(|n| n.position[0]).fold(f32::INFINITY, f32::min);
        let min_y = nodes.iter().map(|n| n.position[1]).fold(f32::INFINITY, f32::min);
        let mut moves: Vec<(NodeId, [f32; 2])> = match how {
            Align::Left => nodes.iter().map(|n| (n.id, [min_x, n.position[1]])).collect(),
            Align::Top => nodes.iter().map(|n| (n.id, [n.position[0], min_y])).collect(),
            Align::Column => {
                let mut sorted = nodes.clone();
                sorted.sort_by(|a, b| a.position[1].total_cmp(&b.position[1]));
                let mut y = min_y;
                sorted
                    .iter()
                    .map(|n| {
                        let h = self.rects.get(&n.id).map_or(80.0, |r| r.height());
                        let at = (n.id, [min_x, y]);
                        y += h + 24.0;
                        at
                    })
                    .collect()
            }
        };
        moves.retain(|(id, p)| graph.node(*id).is_some_and(|n| n.position != *p));
        if !moves.is_empty() {
            cx.edit(Op::Graph { path: path.to_owned(), op: GraphOp::MoveNodes(moves) });
        }
    }
}

/// What the canvas drew this frame (graph space), read after snarl is done.
struct Drawn {
    rects: HashMap<NodeId, Rect>,
    in_rows: HashMap<(NodeId, usize), f32>,
    out_rows: HashMap<NodeId, f32>,
    live: HashMap<NodeId, view::Live>,
    transform: TSTransform,
}

/// Sends what the canvas asked for: its edits (a new node becomes the selection) and the node
/// menu's requests (copy, duplicate, delete, disconnect all), and a paste at a canvas point.
fn apply_requests(
    cx: &mut Cx,
    path: &str,
    graph: &AnimGraph,
    ops: Vec<GraphOp>,
    actions: Vec<(NodeId, NodeAction)>,
    paste_at: Option<Pos2>,
) {
    for op in ops {
        if let GraphOp::AddNodes { nodes, .. } = &op {
            cx.ui.graph_selection = nodes.iter().map(|n| n.id).collect();
        }
        cx.edit(Op::Graph { path: path.to_owned(), op });
    }
    for (node, action) in actions {
        let targets =
            if cx.ui.graph_selection.contains(&node) { cx.ui.graph_selection.clone() } else { vec![node] };
        match action {
            NodeAction::Copy => copy(cx, graph, &targets),
            NodeAction::Duplicate => {
                copy(cx, graph, &targets);
                paste(cx, path, graph, None, "Duplicate");
            }
            NodeAction::Delete => delete(cx, path, &targets),
            NodeAction::Disconnect => disconnect_all(cx, path, graph, node),
        }
    }
    if let Some(at) = paste_at {
        paste(cx, path, graph, Some(at), "Paste");
    }
}

/// How Align lines the selection up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Align {
    Left,
    Top,
    Column,
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

/// An error's text without the "node #3 (Blend2): " prefix (the node shows it).
fn strip_node(text: &str) -> String {
    match (text.starts_with("node #"), text.find("): ")) {
        (true, Some(i)) => text[i + 3..].to_owned(),
        _ => text.to_owned(),
    }
}

/// The running instance of the previewed graph.
fn preview_instance<'a>(cx: &Cx<'a>) -> Option<&'a GraphInstance> {
    let p = cx.session.preview()?;
    let e = cx.session.entity(&p.rig)?;
    cx.session.world().animator(e)?.current_graph()
}

/// The skeleton a graph is checked against: the previewed rig's, else the rig of an Animator
/// that plays it, else the skeleton its clips are for, else the first rig's.
fn graph_skeleton(cx: &Cx, path: &str, graph: &AnimGraph) -> Option<Arc<Skeleton>> {
    let world = cx.session.world();
    let of_rig =
        |rig: &str| cx.session.entity(rig).and_then(|e| world.animator(e)).map(|a| a.skeleton().clone());
    if let Some(p) = cx.session.preview().filter(|p| p.graph == path)
        && let Some(sk) = of_rig(&p.rig)
    {
        return Some(sk);
    }
    if let Some((_, scene)) = cx.scene() {
        for r in world.rigs() {
            let Some(rp) = world.path(r) else { continue };
            if crate::document::tree::find(scene, &rp)
                .and_then(|e| e.animator.as_ref())
                .is_some_and(|a| a.graph.as_deref() == Some(path))
                && let Some(sk) = of_rig(&rp)
            {
                return Some(sk);
            }
        }
    }
    let lib = cx.session.library();
    let clip_skeleton = graph
        .nodes
        .iter()
        .flat_map(|n| crate::document::graph_ops::node_clip_refs(&n.kind))
        .find_map(|c| lib.clips(c).first().map(|c| c.skeleton.clone()));
    if let Some(name) = clip_skeleton {
        for r in lib.skeleton_refs() {
            if let Ok(sk) = lib.skeleton(r)
                && sk.name == name
            {
                return Some(sk);
            }
        }
    }
    world.rigs().next().and_then(|r| world.animator(r)).map(|a| a.skeleton().clone())
}

fn copy(cx: &mut Cx, graph: &AnimGraph, ids: &[NodeId]) {
    let nodes: Vec<Node> = graph.nodes.iter().filter(|n| ids.contains(&n.id)).cloned().collect();
    let wires: Vec<Connection> =
        graph.connections.iter().filter(|c| ids.contains(&c.from) && ids.contains(&c.to)).cloned().collect();
    cx.ui.graph_clipboard = GraphClipboard { nodes, wires };
}

/// The copied nodes as text for the system clipboard: one title per line.
fn clipboard_text(clip: &GraphClipboard) -> String {
    let mut out = format!("Marrow nodes ({})\n", clip.nodes.len());
    for n in &clip.nodes {
        out.push_str(&crate::document::graph_ops::node_title(n));
        out.push('\n');
    }
    out
}

/// Pastes the clipboard with fresh ids (its internal wires follow), at `at` (graph space) or
/// offset from where the nodes were. An Output is left out when the graph has one.
fn paste(cx: &mut Cx, path: &str, graph: &AnimGraph, at: Option<Pos2>, verb: &str) {
    let clip = cx.ui.graph_clipboard.clone();
    let has_output = graph.nodes.iter().any(|n| matches!(n.kind, NodeKind::Output));
    let src: Vec<&Node> =
        clip.nodes.iter().filter(|n| !(has_output && matches!(n.kind, NodeKind::Output))).collect();
    if src.is_empty() {
        return;
    }
    let min = src.iter().fold(Pos2::new(f32::INFINITY, f32::INFINITY), |m, n| {
        Pos2::new(m.x.min(n.position[0]), m.y.min(n.position[1]))
    });
    let offset = match at {
        Some(p) => p - min,
        None => Vec2::new(40.0, 40.0),
    };
    let mut next = graph.fresh_id();
    let mut map = HashMap::new();
    let nodes: Vec<Node> = src
        .iter()
        .map(|n| {
            let id = NodeId(next);
            next += 1;
            map.insert(n.id, id);
            Node { id, position: [n.position[0] + offset.x, n.position[1] + offset.y], kind: n.kind.clone() }
        })
        .collect();
    let connections: Vec<Connection> = clip
        .wires
        .iter()
        .filter_map(|c| {
            Some(Connection { from: *map.get(&c.from)?, to: *map.get(&c.to)?, pin: c.pin.clone() })
        })
        .collect();
    let label = if nodes.len() == 1 {
        format!("{verb} {}", nodes[0].kind.name())
    } else {
        format!("{verb} {} Nodes", nodes.len())
    };
    cx.ui.graph_selection = nodes.iter().map(|n| n.id).collect();
    // The next paste lands further on.
    for n in &mut cx.ui.graph_clipboard.nodes {
        n.position = [n.position[0] + offset.x, n.position[1] + offset.y];
    }
    cx.edit(Op::Graph { path: path.to_owned(), op: GraphOp::AddNodes { label, nodes, connections } });
}

fn delete(cx: &mut Cx, path: &str, ids: &[NodeId]) {
    cx.edit(Op::Graph { path: path.to_owned(), op: GraphOp::RemoveNodes(ids.to_vec()) });
    cx.ui.graph_selection.retain(|n| !ids.contains(n));
}

fn disconnect_all(cx: &mut Cx, path: &str, graph: &AnimGraph, node: NodeId) {
    let ops: Vec<Op> = graph
        .connections
        .iter()
        .filter(|c| c.from == node || c.to == node)
        .map(|c| Op::Graph {
            path: path.to_owned(),
            op: GraphOp::Disconnect { to: c.to, pin: c.pin.clone() },
        })
        .collect();
    if ops.is_empty() {
        return;
    }
    let title = graph.node(node).map_or_else(|| node.to_string(), crate::document::graph_ops::node_title);
    cx.edit(Op::Batch { label: format!("Disconnect {title}"), ops });
}
