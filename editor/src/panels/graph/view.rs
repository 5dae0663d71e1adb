//! The graph canvas: an egui-snarl view of the document's [`AnimGraph`].
//!
//! The document is the source of truth. [`GraphView`] holds a `Snarl` whose nodes carry the
//! engine's stable [`NodeId`]s; it is rebuilt from the graph whenever the document's revision
//! (or the graph shown) changes, and its wires are put back from the graph every frame, so a
//! gesture snarl carries out on its own (a wire yanked off a pin, a node dragged) never diverges
//! from the document. Everything the user does on the canvas comes out of [`GraphViewer`] as
//! [`GraphOp`]s for the panel to send; node drags are read back by the panel when the pointer is
//! released (one undo step per drag).
//!
//! Not here: the side panels (parameters, node details), keyboard shortcuts, applying edits.

use std::collections::HashMap;

use egui::emath::TSTransform;
use egui::{Color32, Pos2, Rect, RichText, Stroke, Ui};
use egui_snarl::ui::{AnyPins, PinInfo, SnarlViewer};
use egui_snarl::{InPin, InPinId, OutPin, OutPinId, Snarl};
use marrow_engine::graph::{
    AnimGraph, Connection, FloatRange, GraphInstance, Node, NodeId, NodeKind, PinType,
};

use super::palette;
use crate::document::graph_ops::{GraphOp, node_title};

/// The input pins of a node as the canvas shows them: the kind's pins, or for a node of an
/// unknown kind the pin names its kept wires use.
pub fn input_pins(graph: &AnimGraph, node: &Node) -> Vec<(String, Option<PinType>)> {
    match &node.kind {
        NodeKind::Unknown { .. } => {
            let mut pins: Vec<String> =
                graph.connections.iter().filter(|c| c.to == node.id).map(|c| c.pin.clone()).collect();
            pins.sort();
            pins.dedup();
            pins.into_iter().map(|p| (p, None)).collect()
        }
        k => k.inputs().iter().map(|p| (p.name.to_owned(), Some(p.ty))).collect(),
    }
}

/// Whether the canvas shows an output pin on `node`.
pub fn has_output(graph: &AnimGraph, node: &Node) -> bool {
    match &node.kind {
        NodeKind::Unknown { .. } => graph.connections.iter().any(|c| c.from == node.id),
        k => k.output().is_some(),
    }
}

/// Lookups over one revision of a graph (node by id, its canvas pins, what feeds a pin), built
/// once per revision so a frame of a large graph does no linear searches.
#[derive(Debug, Default)]
pub struct GraphIndex {
    key: Option<(u64, String)>,
    pos: HashMap<NodeId, usize>,
    pins: HashMap<NodeId, Vec<(String, Option<PinType>)>>,
    feeds: HashMap<(NodeId, String), NodeId>,
    titles: HashMap<NodeId, String>,
}

impl GraphIndex {
    /// Rebuilds the lookups when the revision or the graph changed.
    pub fn refresh(&mut self, revision: u64, path: &str, graph: &AnimGraph) {
        if self.key.as_ref().is_some_and(|(r, p)| *r == revision && p == path) {
            return;
        }
        self.pos = graph.nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
        self.pins = graph.nodes.iter().map(|n| (n.id, input_pins(graph, n))).collect();
        self.titles = graph.nodes.iter().map(|n| (n.id, node_title(n))).collect();
        self.feeds.clear();
        for c in &graph.connections {
            self.feeds.entry((c.to, c.pin.clone())).or_insert(c.from);
        }
        self.key = Some((revision, path.to_owned()));
    }

    /// The node with id `id`.
    pub fn node<'g>(&self, graph: &'g AnimGraph, id: NodeId) -> Option<&'g Node> {
        self.pos.get(&id).and_then(|&i| graph.nodes.get(i))
    }

    /// The pins the canvas shows on `id`.
    pub fn pins(&self, id: NodeId) -> &[(String, Option<PinType>)] {
        self.pins.get(&id).map_or(&[], Vec::as_slice)
    }

    /// The title of node `id` (`Blend2 #3`).
    pub fn title(&self, id: NodeId) -> &str {
        self.titles.get(&id).map_or("?", String::as_str)
    }

    /// The node feeding `to`'s input `pin`.
    pub fn input(&self, to: NodeId, pin: &str) -> Option<NodeId> {
        self.feeds.get(&(to, pin.to_owned())).copied()
    }
}

/// The snarl mirror of one graph.
#[derive(Default)]
pub struct GraphView {
    /// The snarl model (node values are engine ids).
    pub snarl: Snarl<NodeId>,
    /// Engine id -> snarl id.
    pub ids: HashMap<NodeId, egui_snarl::NodeId>,
    built: Option<(u64, String)>,
    /// Node positions as of the last frame (to follow drags).
    pub last_pos: HashMap<NodeId, Pos2>,
}

impl std::fmt::Debug for GraphView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphView").field("nodes", &self.ids.len()).field("built", &self.built).finish()
    }
}

impl GraphView {
    /// Whether the mirror shows the graph at `path`.
    pub fn shows(&self, path: &str) -> bool {
        self.built.as_ref().is_some_and(|(_, p)| p == path)
    }

    /// Brings the mirror up to the graph when the revision or the graph changed; returns whether
    /// it did. Within one graph the mirror is updated in place (removed nodes dropped, new ones
    /// added, positions reset to the document's), so a node keeps its snarl id, and with it
    /// snarl's selection, layout cache and collapsed state; another graph starts a new mirror.
    pub fn sync(&mut self, revision: u64, path: &str, graph: &AnimGraph) -> bool {
        if self.built.as_ref().is_some_and(|(r, p)| *r == revision && p == path) {
            self.sync_wires(graph);
            return false;
        }
        if !self.shows(path) {
            self.snarl = Snarl::new();
            self.ids.clear();
        }
        let gone: Vec<NodeId> = self.ids.keys().filter(|id| graph.node(**id).is_none()).copied().collect();
        for id in gone {
            if let Some(sid) = self.ids.remove(&id)
                && self.snarl.get_node(sid).is_some()
            {
                self.snarl.remove_node(sid);
            }
        }
        for n in &graph.nodes {
            let pos = Pos2::new(n.position[0], n.position[1]);
            match self.ids.get(&n.id).and_then(|sid| self.snarl.get_node_info_mut(*sid)) {
                Some(info) => info.pos = pos,
                None => {
                    let sid = self.snarl.insert_node(pos, n.id);
                    self.ids.insert(n.id, sid);
                }
            }
        }
        self.sync_wires(graph);
        self.last_pos = graph.nodes.iter().map(|n| (n.id, Pos2::new(n.position[0], n.position[1]))).collect();
        self.built = Some((revision, path.to_owned()));
        true
    }

    /// The wires the graph has, as snarl pin pairs (wires to pins the canvas does not show are
    /// left out; their faults are on their nodes).
    fn wanted_wires(&self, graph: &AnimGraph) -> Vec<(OutPinId, InPinId)> {
        let mut out = Vec::with_capacity(graph.connections.len());
        for c in &graph.connections {
            let (Some(&f), Some(&t), Some(to)) =
                (self.ids.get(&c.from), self.ids.get(&c.to), graph.node(c.to))
            else {
                continue;
            };
            if let Some(i) = input_pins(graph, to).iter().position(|(p, _)| *p == c.pin) {
                out.push((OutPinId { node: f, output: 0 }, InPinId { node: t, input: i }));
            }
        }
        out.sort();
        out
    }

    fn sync_wires(&mut self, graph: &AnimGraph) {
        let want = self.wanted_wires(graph);
        let mut have: Vec<(OutPinId, InPinId)> = self.snarl.wires().collect();
        have.sort();
        if have != want {
            for (o, i) in have {
                self.snarl.disconnect(o, i);
            }
            for (o, i) in want {
                self.snarl.connect(o, i);
            }
        }
    }
}

/// What a node shows while a preview runs.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Live {
    /// Effective weight in the final pose (pose nodes the program runs).
    pub weight: Option<f32>,
    /// A Clip node's playhead and its clip's duration.
    pub player: Option<(f32, f32)>,
    /// A BlendSpace1D or BlendSpace2D node's phase.
    pub phase: Option<f32>,
    /// A Parameter node's current value (a float, or a bool or trigger as 0 or 1).
    pub value: Option<f32>,
    /// A vector Parameter node's current value.
    pub vector: Option<glam::Vec3>,
    /// A StateMachine node's active state (its index, authored order) and normalized time.
    pub state: Option<(usize, f32)>,
}

/// What the running preview says about every node of `graph`.
pub fn live_map(inst: &GraphInstance, graph: &AnimGraph) -> HashMap<NodeId, Live> {
    let mut out: HashMap<NodeId, Live> = HashMap::with_capacity(graph.nodes.len());
    for (n, w, _) in inst.node_weights() {
        out.entry(n).or_default().weight = Some(w);
    }
    for (n, t, d) in inst.playheads() {
        out.entry(n).or_default().player = Some((t, d));
    }
    for (n, p) in inst.phases() {
        out.entry(n).or_default().phase = Some(p);
    }
    for (c, m) in inst.machines() {
        let s = m.active_state();
        out.entry(c.node).or_default().state = Some((s, m.state_phase(s).unwrap_or(0.0)));
    }
    for node in &graph.nodes {
        if let NodeKind::Parameter { name } = &node.kind
            && let Some(v) = inst.parameter(name)
        {
            let live = out.entry(node.id).or_default();
            match v {
                marrow_engine::graph::ParamValue::Vec3(x) => live.vector = Some(x),
                other => live.value = Some(other.as_f32()),
            }
        }
    }
    out
}

/// Something the node menu asks the panel to do with the node (and the selection).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeAction {
    /// Copy it (with the selection).
    Copy,
    /// Duplicate it (with the selection).
    Duplicate,
    /// Delete it (with the selection).
    Delete,
    /// Disconnect every wire of it.
    Disconnect,
}

/// The snarl viewer over one frame's graph: reads the graph, its faults and the preview, and
/// collects what the user did as edits.
pub struct GraphViewer<'a> {
    /// The graph.
    pub graph: &'a AnimGraph,
    /// Lookups over it.
    pub index: &'a GraphIndex,
    /// Messages per node (compile errors, faults found on open).
    pub faults: &'a HashMap<NodeId, Vec<String>>,
    /// The running preview, when the graph plays on a rig.
    pub live: HashMap<NodeId, Live>,
    /// Whether a preview runs (nodes that contribute nothing are dimmed only then).
    pub previewing: bool,
    /// The project's clips (for the Clip node picker).
    pub clips: &'a [String],
    /// The selected nodes.
    pub selection: &'a [NodeId],
    /// The Add Node menu's search text.
    pub search: &'a mut String,
    /// Edits made this frame.
    pub ops: Vec<GraphOp>,
    /// Node menu requests.
    pub actions: Vec<(NodeId, NodeAction)>,
    /// A note for the status line (a refused wire).
    pub message: Option<String>,
    /// Node rectangles this frame, in graph space.
    pub rects: HashMap<NodeId, Rect>,
    /// Input row centres (node, pin index) -> y, graph space.
    pub in_rows: HashMap<(NodeId, usize), f32>,
    /// Output row centre per node -> y, graph space.
    pub out_rows: HashMap<NodeId, f32>,
    /// The canvas transform this frame (graph -> screen).
    pub transform: TSTransform,
    /// A transform to put in place (Frame All).
    pub set_transform: Option<TSTransform>,
    /// Paste is available in the canvas menu.
    pub can_paste: bool,
    /// Paste was picked from the canvas menu, at this graph position.
    pub paste_at: Option<Pos2>,
    /// The part of the graph the canvas shows (graph space, with a margin); a node whose last
    /// rectangle lies outside it keeps its size but draws no body widgets this frame.
    pub visible: Rect,
    /// Node rectangles of the last frame (graph space).
    pub prev_rects: &'a HashMap<NodeId, Rect>,
    /// Body sizes of the last frame, in; this frame's, out.
    pub body_sizes: HashMap<NodeId, egui::Vec2>,
}

impl<'a> GraphViewer<'a> {
    fn node(&self, id: NodeId) -> Option<&'a Node> {
        self.index.node(self.graph, id)
    }

    /// Whether node `id` is drawn in its compact form (zoomed out and not selected).
    fn compact(&self, id: NodeId) -> bool {
        self.transform.scaling < COMPACT_BELOW && !self.selection.contains(&id)
    }

    fn dimmed(&self, id: NodeId) -> bool {
        self.previewing
            && self.node(id).is_some_and(|n| n.kind.output() == Some(PinType::Pose))
            && self.live.get(&id).is_none_or(|l| l.weight.is_none_or(|w| w <= 1e-4))
    }

    fn set(&mut self, id: NodeId, kind: NodeKind, field: &str) {
        self.ops.push(GraphOp::SetNode { node: id, kind, field: field.to_owned() });
    }

    fn add(&mut self, kind: NodeKind, at: Pos2, wire: Option<(NodeId, NodeId, String)>, new_is_source: bool) {
        let id = NodeId(self.graph.fresh_id());
        let label = format!("Add {}", kind.name());
        let connections = match wire {
            Some((a, b, pin)) => {
                let (from, to) = if new_is_source { (id, b) } else { (a, id) };
                vec![Connection { from, to, pin }]
            }
            None => Vec::new(),
        };
        self.ops.push(GraphOp::AddNodes {
            label,
            nodes: vec![Node { id, position: [at.x, at.y], kind }],
            connections,
        });
    }

    /// A compact settings row for a float constant that a pin may drive instead.
    fn constant(
        &mut self,
        ui: &mut Ui,
        id: NodeId,
        pin: &str,
        value: f32,
        range: Option<std::ops::RangeInclusive<f32>>,
    ) -> Option<f32> {
        if let Some(src) = self.index.input(id, pin) {
            ui.weak(format!("{pin} from {}", self.index.title(src)));
            return None;
        }
        let mut v = value;
        let r = match range {
            Some(range) => ui.add(crate::widgets::authored_slider(&mut v, range, 3).text(pin)),
            None => ui.add(egui::DragValue::new(&mut v).speed(0.01).prefix(format!("{pin} "))),
        };
        // The accessible name is built only when a screen reader (or a test) asks.
        let title = self.index.title(id).to_owned();
        let pin = pin.to_owned();
        r.widget_info(move || {
            egui::WidgetInfo::labeled(egui::WidgetType::Slider, true, format!("{title} {pin}"))
        });
        (r.changed() && v.is_finite()).then_some(v)
    }
}

fn pin_info(t: Option<PinType>, dim: bool) -> PinInfo {
    let color = t.map_or(Color32::GRAY, palette::pin_color);
    let color = if dim { color.gamma_multiply(0.35) } else { color };
    match t {
        Some(PinType::Float) => PinInfo::square().with_fill(color),
        Some(PinType::Vec3) => PinInfo::triangle().with_fill(color),
        _ => PinInfo::circle().with_fill(color),
    }
}

impl SnarlViewer<NodeId> for GraphViewer<'_> {
    fn title(&mut self, node: &NodeId) -> String {
        self.index.title(*node).to_owned()
    }

    fn show_header(
        &mut self,
        node: egui_snarl::NodeId,
        _inputs: &[InPin],
        _outputs: &[OutPin],
        ui: &mut Ui,
        snarl: &mut Snarl<NodeId>,
    ) {
        let id = snarl[node];
        let dim = self.dimmed(id);
        if dim {
            ui.multiply_opacity(0.5);
        }
        if self.compact(id) && self.faults.get(&id).is_none_or(|f| f.is_empty()) {
            // Zoomed out: the title and weight painted (no widgets), on one line.
            let title = match self.live.get(&id).and_then(|l| l.weight) {
                Some(w) => format!("{}  {:.0}%", self.index.title(id), w * 100.0),
                None => self.index.title(id).to_owned(),
            };
            let color = ui.visuals().strong_text_color();
            painted_text(ui, title, color, false);
            return;
        }
        ui.horizontal(|ui| {
            ui.label(RichText::new(self.index.title(id)).strong());
            if let Some(f) = self.faults.get(&id).filter(|f| !f.is_empty()) {
                let badge = ui.label(
                    RichText::new(format!("⚠ {}", f.len()))
                        .color(Color32::WHITE)
                        .background_color(Color32::from_rgb(0xc0, 0x30, 0x30)),
                );
                badge.on_hover_text(f.join("\n"));
            }
            if let Some(w) = self.live.get(&id).and_then(|l| l.weight) {
                let color = ui.visuals().weak_text_color();
                painted_text(ui, format!("{:.0}%", w * 100.0), color, false);
            }
        });
    }

    fn inputs(&mut self, node: &NodeId) -> usize {
        self.index.pins(*node).len()
    }

    fn outputs(&mut self, node: &NodeId) -> usize {
        self.node(*node).map_or(0, |n| has_output(self.graph, n) as usize)
    }

    #[allow(refining_impl_trait)]
    fn show_input(&mut self, pin: &InPin, ui: &mut Ui, snarl: &mut Snarl<NodeId>) -> PinInfo {
        let id = snarl[pin.id.node];
        let (name, ty) = self.index.pins(id).get(pin.id.input).cloned().unwrap_or_else(|| ("?".into(), None));
        let dim = self.dimmed(id);
        let missing = pin.remotes.is_empty() && ty == Some(PinType::Pose);
        if self.compact(id) {
            let color = if missing { Color32::from_rgb(0xe0, 0x70, 0x70) } else { ui.visuals().text_color() };
            painted_text(ui, name, color, true);
        } else {
            let text = if missing {
                RichText::new(&name).color(Color32::from_rgb(0xe0, 0x70, 0x70))
            } else {
                RichText::new(&name)
            };
            let r = ui.label(text);
            if missing {
                r.on_hover_text("not connected: a pose input must be");
            }
        }
        self.in_rows.insert((id, pin.id.input), ui.min_rect().center().y);
        pin_info(ty, dim)
    }

    #[allow(refining_impl_trait)]
    fn show_output(&mut self, pin: &OutPin, ui: &mut Ui, snarl: &mut Snarl<NodeId>) -> PinInfo {
        let id = snarl[pin.id.node];
        let ty = self.node(id).and_then(|n| self.graph.output_type(&n.kind));
        let name = match ty {
            Some(PinType::Float) => "value",
            Some(PinType::Vec3) => "vector",
            Some(PinType::Pose) => "pose",
            None => "out",
        };
        if self.compact(id) {
            let color = ui.visuals().text_color();
            painted_text(ui, name.to_owned(), color, true);
        } else {
            ui.label(name);
        }
        self.out_rows.insert(id, ui.min_rect().center().y);
        let dim = self.dimmed(id);
        let mut info = pin_info(ty, dim);
        if let (Some(t), Some(w)) = (ty, self.live.get(&id).and_then(|l| l.weight)) {
            // Wires carry their weight as brightness while a preview runs.
            let c = palette::pin_color(t).gamma_multiply(0.25 + 0.75 * w.clamp(0.0, 1.0));
            info = info.with_wire_color(c);
        }
        info
    }

    fn has_body(&mut self, node: &NodeId) -> bool {
        self.node(*node).is_some_and(|n| !matches!(n.kind, NodeKind::Output))
    }

    fn show_body(
        &mut self,
        node: egui_snarl::NodeId,
        _inputs: &[InPin],
        _outputs: &[OutPin],
        ui: &mut Ui,
        snarl: &mut Snarl<NodeId>,
    ) {
        let id = snarl[node];
        let Some(n) = self.node(id) else { return };
        // Off screen: hold the body's place without building its widgets.
        if let (Some(r), Some(&size)) = (self.prev_rects.get(&id), self.body_sizes.get(&id))
            && !self.visible.intersects(*r)
        {
            ui.allocate_exact_size(size, egui::Sense::hover());
            return;
        }
        if self.dimmed(id) {
            ui.multiply_opacity(0.5);
        }
        let live = self.live.get(&id).copied().unwrap_or_default();
        // Zoomed out, a node's settings read as text (one widget instead of a handful); the
        // selected node keeps its controls at any zoom.
        if self.compact(id) {
            let color = ui.visuals().weak_text_color();
            let mut r = painted_text(ui, compact_body(self, n, &live), color, true);
            if let Some((t, d)) = live.player {
                // The playhead as a painted bar (no widget, no text to lay out).
                let (_, bar) = ui.allocate_space(egui::vec2(r.width().max(60.0), 4.0));
                let f = if d > 0.0 { (t / d).clamp(0.0, 1.0) } else { 0.0 };
                ui.painter().rect_filled(bar, 1.0, ui.visuals().extreme_bg_color);
                let filled = egui::Rect::from_min_size(bar.min, egui::vec2(bar.width() * f, bar.height()));
                ui.painter().rect_filled(filled, 1.0, ui.visuals().selection.bg_fill);
                r = r.union(bar);
            }
            self.body_sizes.insert(id, r.size());
            return;
        }
        let body = ui.vertical(|ui| {
            ui.set_max_width(190.0);
            // The float pins' constants, as the kind describes them; then what is the kind's own.
            self.constants(ui, id, &n.kind);
            match n.kind.clone() {
                NodeKind::Clip { clip, speed, looping } => {
                    self.clip_body(ui, id, clip, speed, looping, &live)
                }
                NodeKind::Parameter { name } => {
                    let mut pick = None;
                    egui::ComboBox::from_id_salt(("param node", id.0))
                        .selected_text(&name)
                        .width(150.0)
                        .show_ui(ui, |ui| {
                            for p in &self.graph.parameters {
                                if ui.selectable_label(p.name == name, &p.name).clicked() {
                                    pick = Some(p.name.clone());
                                }
                            }
                        });
                    if let Some(p) = pick {
                        self.set(id, NodeKind::Parameter { name: p }, "parameter");
                    }
                    if let Some(v) = live.value {
                        ui.weak(format!("= {v:.3}"));
                    }
                    if let Some(v) = live.vector {
                        ui.weak(format!("= ({:.2}, {:.2}, {:.2})", v.x, v.y, v.z));
                    }
                }
                NodeKind::Mask { subtrees, .. } => {
                    let names: Vec<&str> = subtrees.iter().map(|s| s.bone.as_str()).collect();
                    ui.weak(if names.is_empty() { "no bones chosen".to_owned() } else { names.join(", ") });
                }
                NodeKind::BlendSpace1D { samples, .. } => {
                    let mut sorted = samples.clone();
                    sorted.sort_by(|a, b| a.position.total_cmp(&b.position));
                    for s in &sorted {
                        ui.weak(format!("{:>6.2}  {}", s.position, short(&s.clip)));
                    }
                    if samples.is_empty() {
                        ui.weak("no clips on the axis");
                    }
                    if let Some(ph) = live.phase {
                        ui.add(egui::ProgressBar::new(ph).desired_width(170.0).desired_height(6.0));
                        ui.weak(format!("phase {ph:.2}"));
                    }
                }
                NodeKind::BlendSpace2D { samples, .. } => {
                    for s in &samples {
                        ui.weak(format!("({:.2}, {:.2})  {}", s.position.0, s.position.1, short(&s.clip)));
                    }
                    if samples.is_empty() {
                        ui.weak("no clips on the plane");
                    }
                    if let Some(ph) = live.phase {
                        ui.add(egui::ProgressBar::new(ph).desired_width(170.0).desired_height(6.0));
                        ui.weak(format!("phase {ph:.2}"));
                    }
                }
                NodeKind::Adjust { entries } => {
                    if entries.is_empty() {
                        ui.weak("no adjusts");
                    }
                    for e in &entries {
                        ui.weak(format!("{} {}", adjust_name(&e.op), e.bone));
                    }
                }
                NodeKind::TwoBoneIk { start, mid, end, .. } => {
                    ui.weak(ik_chain(&start, &mid, &end));
                }
                NodeKind::LookAt { bone, .. } => {
                    ui.weak(format!("turns {}", if bone.is_empty() { "?" } else { &bone }));
                }
                NodeKind::FootPlant { left, right, .. } => {
                    ui.weak(format!("L {}", ik_chain(&left[0], &left[1], &left[2])));
                    ui.weak(format!("R {}", ik_chain(&right[0], &right[1], &right[2])));
                }
                NodeKind::StateMachine { machine } => {
                    ui.weak(format!(
                        "{} states, {} transitions; entry {}",
                        machine.states.len(),
                        machine.transitions.len(),
                        machine.entry
                    ));
                    if let Some((state, t)) = live.state
                        && let Some(state) = machine.states.get(state)
                    {
                        ui.label(format!("▶ {}", state.name));
                        ui.add(egui::ProgressBar::new(t).desired_width(170.0).desired_height(6.0));
                    }
                    ui.weak("double-click to open");
                }
                NodeKind::Unknown { kind, .. } => {
                    ui.colored_label(Color32::from_rgb(0xe0, 0x90, 0x60), format!("unknown kind {kind:?}"));
                    ui.weak("kept as written; replace or delete it");
                }
                // The rest show only what their description gives (the float constants above).
                _ => {}
            }
        });
        self.body_sizes.insert(id, body.response.rect.size());
    }

    fn has_footer(&mut self, node: &NodeId) -> bool {
        self.faults.get(node).is_some_and(|f| !f.is_empty())
    }

    fn show_footer(
        &mut self,
        node: egui_snarl::NodeId,
        _inputs: &[InPin],
        _outputs: &[OutPin],
        ui: &mut Ui,
        snarl: &mut Snarl<NodeId>,
    ) {
        let id = snarl[node];
        if let Some(f) = self.faults.get(&id) {
            // One line per fault (two at most): the node stays compact; the full text is on
            // hover and in the details panel.
            ui.set_max_width(210.0);
            for m in f.iter().take(2) {
                let r = ui.add(
                    egui::Label::new(RichText::new(m).small().color(Color32::from_rgb(0xff, 0x80, 0x80)))
                        .truncate(),
                );
                r.on_hover_text(m);
            }
            if f.len() > 2 {
                ui.weak(format!("+{} more (see the node's details)", f.len() - 2));
            }
        }
    }

    fn node_frame(
        &mut self,
        default: egui::Frame,
        node: egui_snarl::NodeId,
        _inputs: &[InPin],
        _outputs: &[OutPin],
        snarl: &Snarl<NodeId>,
    ) -> egui::Frame {
        let id = snarl[node];
        let mut f = default;
        f.shadow = egui::Shadow::NONE; // hundreds of node shadows cost more than they show
        if self.selection.contains(&id) {
            f = f.stroke(Stroke::new(2.0, Color32::from_rgb(0xff, 0xb0, 0x40)));
        } else if self.faults.get(&id).is_some_and(|v| !v.is_empty()) {
            f = f.stroke(Stroke::new(1.5, Color32::from_rgb(0xc0, 0x30, 0x30)));
        }
        if self.dimmed(id) {
            f = f.multiply_with_opacity(0.55);
        }
        f
    }

    fn header_frame(
        &mut self,
        default: egui::Frame,
        node: egui_snarl::NodeId,
        _inputs: &[InPin],
        _outputs: &[OutPin],
        snarl: &Snarl<NodeId>,
    ) -> egui::Frame {
        let id = snarl[node];
        match self.node(id) {
            Some(n) => default.fill(palette::header_color(&n.kind)),
            None => default,
        }
    }

    fn final_node_rect(
        &mut self,
        node: egui_snarl::NodeId,
        rect: Rect,
        _ui: &mut Ui,
        snarl: &mut Snarl<NodeId>,
    ) {
        self.rects.insert(snarl[node], rect);
    }

    fn connect(&mut self, from: &OutPin, to: &InPin, snarl: &mut Snarl<NodeId>) {
        let (f, t) = (snarl[from.id.node], snarl[to.id.node]);
        let (Some(fnode), Some(tnode)) = (self.node(f), self.node(t)) else { return };
        let _ = fnode;
        let pins = input_pins(self.graph, tnode);
        let Some((pin, _)) = pins.get(to.id.input).cloned() else { return };
        // Refused wires (types that differ, a cycle) are named in the status line, not sent.
        match crate::document::graph_ops::check_wire(self.graph, f, t, &pin) {
            Ok(_) => self.ops.push(GraphOp::Connect { from: f, to: t, pin }),
            Err(e) => self.message = Some(e.to_string()),
        }
    }

    fn disconnect(&mut self, _from: &OutPin, to: &InPin, snarl: &mut Snarl<NodeId>) {
        self.drop_inputs(to, snarl);
    }

    fn drop_inputs(&mut self, pin: &InPin, snarl: &mut Snarl<NodeId>) {
        let t = snarl[pin.id.node];
        let Some(tnode) = self.node(t) else { return };
        if let Some((name, _)) = input_pins(self.graph, tnode).get(pin.id.input).cloned()
            && self.graph.input(t, &name).is_some()
        {
            self.ops.push(GraphOp::Disconnect { to: t, pin: name });
        }
    }

    fn drop_outputs(&mut self, pin: &OutPin, snarl: &mut Snarl<NodeId>) {
        let f = snarl[pin.id.node];
        self.actions.push((f, NodeAction::Disconnect));
    }

    fn has_graph_menu(&mut self, _pos: Pos2, _snarl: &mut Snarl<NodeId>) -> bool {
        true
    }

    fn show_graph_menu(&mut self, pos: Pos2, ui: &mut Ui, _snarl: &mut Snarl<NodeId>) {
        ui.label(RichText::new("Add Node").strong());
        let entries = palette::entries(self.graph, self.clips);
        if let Some(e) = palette::menu(ui, self.search, &entries) {
            self.add(e.kind, pos, None, false);
            self.search.clear();
            ui.close();
        }
        if self.can_paste {
            ui.separator();
            if ui.button("Paste").clicked() {
                self.paste_at = Some(pos);
                ui.close();
            }
        }
    }

    fn has_dropped_wire_menu(&mut self, _src: AnyPins, _snarl: &mut Snarl<NodeId>) -> bool {
        true
    }

    fn show_dropped_wire_menu(&mut self, pos: Pos2, ui: &mut Ui, src: AnyPins, snarl: &mut Snarl<NodeId>) {
        ui.label(RichText::new("Add and Connect").strong());
        let entries = palette::entries(self.graph, self.clips);
        match src {
            AnyPins::Out(outs) => {
                // The new node takes the wire on its first input of the source's type.
                let Some(o) = outs.first() else { return };
                let from = snarl[o.node];
                let ty = self.node(from).and_then(|n| self.graph.output_type(&n.kind));
                let fits: Vec<palette::Entry> = entries
                    .into_iter()
                    .filter(|e| e.kind.inputs().iter().any(|p| Some(p.ty) == ty))
                    .collect();
                if let Some(e) = palette::menu(ui, self.search, &fits) {
                    let pin = e.kind.inputs().iter().find(|p| Some(p.ty) == ty).map(|p| p.name.to_owned());
                    if let Some(pin) = pin {
                        self.add(e.kind, pos, Some((from, from, pin)), false);
                    }
                    self.search.clear();
                    ui.close();
                }
            }
            AnyPins::In(ins) => {
                let Some(i) = ins.first() else { return };
                let to = snarl[i.node];
                let Some(tnode) = self.node(to) else { return };
                let Some((pin, ty)) = input_pins(self.graph, tnode).get(i.input).cloned() else { return };
                let fits: Vec<palette::Entry> = entries
                    .into_iter()
                    .filter(|e| ty.is_some() && self.graph.output_type(&e.kind) == ty)
                    .collect();
                if let Some(e) = palette::menu(ui, self.search, &fits) {
                    // The new node sits left of the pin and feeds it.
                    self.add(e.kind, pos, Some((to, to, pin)), true);
                    self.search.clear();
                    ui.close();
                }
            }
        }
    }

    fn has_node_menu(&mut self, _node: &NodeId) -> bool {
        true
    }

    fn show_node_menu(
        &mut self,
        node: egui_snarl::NodeId,
        _inputs: &[InPin],
        _outputs: &[OutPin],
        ui: &mut Ui,
        snarl: &mut Snarl<NodeId>,
    ) {
        let id = snarl[node];
        for (label, action) in [
            ("Copy", NodeAction::Copy),
            ("Duplicate", NodeAction::Duplicate),
            ("Disconnect All", NodeAction::Disconnect),
            ("Delete", NodeAction::Delete),
        ] {
            if ui.button(label).clicked() {
                self.actions.push((id, action));
                ui.close();
            }
        }
    }

    fn current_transform(&mut self, to_global: &mut TSTransform, _snarl: &mut Snarl<NodeId>) {
        if let Some(t) = self.set_transform.take() {
            *to_global = t;
        }
        self.transform = *to_global;
    }
}

impl GraphViewer<'_> {
    /// A row per float pin of the node's kind: its constant (a slider over a clamped range, else
    /// a drag value), or what drives it.
    fn constants(&mut self, ui: &mut Ui, id: NodeId, kind: &NodeKind) {
        // A vector on the `target` pin takes the place of x, y and z.
        let vector = kind.input_type("target").and_then(|_| self.index.input(id, "target"));
        if let Some(src) = vector {
            ui.weak(format!("target from {}", self.index.title(src)));
        }
        for pin in kind.inputs() {
            if vector.is_some() && matches!(pin.name, "x" | "y" | "z") {
                continue;
            }
            let (Some(range), Some(value)) = (pin.range, kind.constant(pin.name)) else { continue };
            let slider = match range {
                FloatRange::Clamped(lo, hi) => Some(lo..=hi),
                FloatRange::Typical(..) | FloatRange::SamplePositions => None,
            };
            if let Some(v) = self.constant(ui, id, pin.name, value, slider) {
                let mut changed = kind.clone();
                if let Some(c) = changed.constant_mut(pin.name) {
                    *c = v;
                }
                self.set(id, changed, pin.name);
            }
        }
    }

    /// A Clip node's controls: the clip picker, speed, loop, and the playhead while previewing.
    fn clip_body(&mut self, ui: &mut Ui, id: NodeId, clip: String, speed: f32, looping: bool, live: &Live) {
        let mut pick = None;
        egui::ComboBox::from_id_salt(("clip node", id.0)).selected_text(short(&clip)).width(170.0).show_ui(
            ui,
            |ui| {
                for c in self.clips {
                    if ui.selectable_label(*c == clip, c.as_str()).clicked() {
                        pick = Some(c.clone());
                    }
                }
            },
        );
        if let Some(c) = pick {
            self.set(id, NodeKind::Clip { clip: c, speed, looping }, "clip");
        }
        ui.horizontal(|ui| {
            let mut s = speed;
            let r = ui.add(egui::DragValue::new(&mut s).speed(0.01).prefix("speed "));
            let title = self.index.title(id).to_owned();
            r.widget_info(move || {
                egui::WidgetInfo::labeled(egui::WidgetType::DragValue, true, format!("{title} speed"))
            });
            if r.changed() && s.is_finite() {
                self.set(id, NodeKind::Clip { clip: clip.clone(), speed: s, looping }, "speed");
            }
            let mut l = looping;
            if ui.checkbox(&mut l, "loop").changed() {
                self.set(id, NodeKind::Clip { clip: clip.clone(), speed, looping: l }, "looping");
            }
        });
        if let Some((t, d)) = live.player {
            let f = if d > 0.0 { t / d } else { 0.0 };
            ui.add(egui::ProgressBar::new(f).desired_width(170.0).desired_height(6.0));
            ui.weak(format!("{t:.2} / {d:.2} s"));
        }
    }
}

/// Text drawn straight with the painter in space allocated for it: no widget (a label that
/// needs no interaction, in a canvas that may hold hundreds of them). Returns its rectangle.
fn painted_text(ui: &mut Ui, text: String, color: Color32, small: bool) -> Rect {
    let font = if small { egui::TextStyle::Small } else { egui::TextStyle::Body }.resolve(ui.style());
    let galley = ui.painter().layout(text, font, color, f32::INFINITY);
    let (_, rect) = ui.allocate_space(galley.size());
    ui.painter().galley(rect.min, galley, color);
    rect
}

/// Below this canvas zoom, unselected node bodies show their settings as text (level of
/// detail: hundreds of nodes on screen stay cheap to draw).
pub const COMPACT_BELOW: f32 = 0.75;

/// A node's settings as a few lines of text (its body when zoomed out).
fn compact_body(v: &GraphViewer<'_>, n: &Node, live: &Live) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let from = |pin: &str| v.index.input(n.id, pin).map(|s| v.index.title(s).to_owned());
    let constant = |out: &mut String, pin: &str, value: f32| {
        let _ = match from(pin) {
            Some(src) => write!(out, "{pin} from {src}"),
            None => write!(out, "{pin} {value:.2}"),
        };
    };
    for pin in n.kind.inputs() {
        if let Some(value) = n.kind.constant(pin.name) {
            if !out.is_empty() {
                out.push('\n');
            }
            constant(&mut out, pin.name, value);
        }
    }
    match &n.kind {
        NodeKind::Clip { clip, speed, looping } => {
            let _ = write!(out, "{}  ×{speed:.2}{}", short(clip), if *looping { "  loop" } else { "" });
            // (The playhead is the bar under the text: text that changed every frame would be
            // laid out again every frame.)
        }
        NodeKind::Parameter { name } => {
            out.push_str(name);
            if let Some(x) = live.value {
                let _ = write!(out, " = {x:.3}");
            }
            if let Some(v) = live.vector {
                let _ = write!(out, " = ({:.2}, {:.2}, {:.2})", v.x, v.y, v.z);
            }
        }
        NodeKind::Mask { subtrees, .. } => {
            let _ = write!(out, "\n{} bone subtree(s)", subtrees.len());
        }
        NodeKind::StateMachine { machine } => {
            let _ = write!(out, "{} states, entry {}", machine.states.len(), machine.entry);
            if let Some(state) = live.state.and_then(|(s, _)| machine.states.get(s)) {
                let _ = write!(out, "\n▶ {}", state.name);
            }
        }
        NodeKind::BlendSpace1D { samples, .. } => {
            for s in samples {
                let _ = write!(out, "\n{:.2}  {}", s.position, short(&s.clip));
            }
            if let Some(p) = live.phase {
                let _ = write!(out, "\nphase {p:.2}");
            }
        }
        NodeKind::BlendSpace2D { samples, .. } => {
            for s in samples {
                let _ = write!(out, "\n({:.2}, {:.2})  {}", s.position.0, s.position.1, short(&s.clip));
            }
            if let Some(p) = live.phase {
                let _ = write!(out, "\nphase {p:.2}");
            }
        }
        NodeKind::Adjust { entries } => {
            out.push_str(if entries.is_empty() { "no adjusts" } else { "" });
            for (i, e) in entries.iter().enumerate() {
                let _ = write!(out, "{}{} {}", if i > 0 { "\n" } else { "" }, adjust_name(&e.op), e.bone);
            }
        }
        NodeKind::TwoBoneIk { start, mid, end, .. } => {
            let _ = write!(out, "\n{}", ik_chain(start, mid, end));
        }
        NodeKind::LookAt { bone, .. } => {
            let _ = write!(out, "\nturns {}", if bone.is_empty() { "?" } else { bone });
        }
        NodeKind::FootPlant { left, right, .. } => {
            let _ = write!(
                out,
                "\nL {}\nR {}",
                ik_chain(&left[0], &left[1], &left[2]),
                ik_chain(&right[0], &right[1], &right[2])
            );
        }
        NodeKind::Unknown { kind, .. } => {
            let _ = write!(out, "unknown kind {kind:?}");
        }
        // The rest show only what their description gives (the float constants above).
        _ => {}
    }
    out
}

/// A TwoBoneIk chain as one line ("LeftHip > LeftKnee > LeftAnkle"; an unset bone as "?").
pub fn ik_chain(start: &str, mid: &str, end: &str) -> String {
    let b = |s: &str| if s.is_empty() { "?".to_owned() } else { s.to_owned() };
    format!("{} > {} > {}", b(start), b(mid), b(end))
}

/// A clip path without its folder and extension, for narrow node bodies.
pub fn short(path: &str) -> String {
    let leaf = path.rsplit('/').next().unwrap_or(path);
    let leaf = leaf.strip_suffix(".clip.ron").unwrap_or(leaf);
    if leaf.is_empty() { "(no clip)".to_owned() } else { leaf.to_owned() }
}

/// The name of an adjust operation.
pub fn adjust_name(op: &marrow_engine::graph::AdjustOp) -> &'static str {
    use marrow_engine::graph::AdjustOp;
    match op {
        AdjustOp::Rotate { .. } => "Rotate",
        AdjustOp::Orient { .. } => "Orient",
        AdjustOp::Offset { .. } => "Offset",
        AdjustOp::Scale => "Scale",
    }
}
