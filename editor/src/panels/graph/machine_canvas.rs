//! The state canvas: a StateMachine node opened (double-click the node, or Open in its details)
//! shows its states as boxes, the entry and Any State markers, and its transitions as arrows
//! (several between one pair drawn apart, one back into its own state as a loop). Drag a state to
//! move it, drag from a state's link handle (the dot on its right) onto another state to add a
//! transition, click a state or an arrow to inspect it in the details panel, Delete removes it,
//! right-click adds a state. While the graph is previewed the active state is lit with its
//! normalized time as a bar and the transition in progress fills its arrow. A transition's
//! conditions are a label beside its arrow (clear of states, markers and other labels, cut to the
//! arrow's length); hovering the arrow shows them whole. Faults sit on the state or arrow they
//! concern (hover for the message).
//!
//! Every change is a `GraphOp::SetNode` of the whole machine (a drag merges into one undo step);
//! selection and pan are UI state. Not here: the inspectors (`nodes::state_machine`), playing.

use std::collections::HashMap;

use egui::{Align2, Color32, FontId, Pos2, Rect, Sense, Stroke, StrokeKind, Vec2};
use marrow_engine::graph::machine::compile::CompiledMachine;
use marrow_engine::graph::machine::{
    ANY_STATE, MachineInstance, State, StateMachine, StateSource, Transition,
};
use marrow_engine::graph::{MachinePlace, NodeId, NodeKind};

use crate::document::graph_ops::GraphOp;
use crate::widgets::named;

/// What is selected on the state canvas.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MachineItem {
    /// The state of this name.
    State(String),
    /// Transition `index` (authored order).
    Transition(usize),
}

/// The open state canvas: which machine, its pan, what is selected, the link being dragged.
#[derive(Clone, Debug)]
pub struct MachineView {
    /// The StateMachine node.
    pub node: NodeId,
    /// Canvas pan (screen points).
    pub pan: Vec2,
    /// The selected state or transition.
    pub selected: Option<MachineItem>,
    /// A link dragged from this state (the pointer is its end).
    linking: Option<usize>,
    /// Whether the canvas was framed on its states (done when it opens, and on F).
    framed: bool,
    /// Screen points per canvas unit (Ctrl + wheel or a pinch zooms; framing fits).
    pub zoom: f32,
}

impl MachineView {
    /// The canvas of `node`, nothing selected.
    pub fn new(node: NodeId) -> Self {
        MachineView { node, pan: Vec2::ZERO, selected: None, linking: None, framed: false, zoom: 1.0 }
    }
}

/// What the canvas measured (tests read it).
#[derive(Clone, Debug, Default)]
pub struct MachineReport {
    /// The canvas rectangle.
    pub canvas: Option<Rect>,
    /// Each state's box, screen space.
    pub states: HashMap<String, Rect>,
    /// Each transition's arrow (start, end), screen space.
    pub arrows: Vec<(Pos2, Pos2)>,
    /// The Any State marker.
    pub any: Option<Rect>,
    /// The state lit as active, with its normalized time.
    pub active: Option<(String, f32)>,
    /// The transition filling its arrow, with its progress.
    pub running: Option<(usize, f32)>,
    /// Each transition label drawn: the transition, its rectangle (screen space) and whether
    /// its text was cut short (the whole shows on hover of the arrow).
    pub labels: Vec<(usize, Rect, bool)>,
}

/// The size of a state box.
pub const STATE_SIZE: Vec2 = Vec2::new(150.0, 46.0);
const ANY_SIZE: Vec2 = Vec2::new(110.0, 30.0);

/// The live state of the machine (its compiled form and instance) while the graph is previewed.
pub type Live<'a> = Option<(&'a CompiledMachine, &'a MachineInstance)>;

/// The point where the ray from `rect`'s centre toward `to` leaves `rect`.
fn edge(rect: Rect, to: Pos2) -> Pos2 {
    let c = rect.center();
    let d = to - c;
    if d.length_sq() < 1e-6 {
        return c;
    }
    let tx = if d.x.abs() > 1e-6 { rect.width() / 2.0 / d.x.abs() } else { f32::INFINITY };
    let ty = if d.y.abs() > 1e-6 { rect.height() / 2.0 / d.y.abs() } else { f32::INFINITY };
    c + d * tx.min(ty)
}

fn distance_to_segment(p: Pos2, a: Pos2, b: Pos2) -> f32 {
    let ab = b - a;
    let t = if ab.length_sq() > 0.0 { ((p - a).dot(ab) / ab.length_sq()).clamp(0.0, 1.0) } else { 0.0 };
    (a + ab * t - p).length()
}

fn arrow(painter: &egui::Painter, a: Pos2, b: Pos2, stroke: Stroke) {
    painter.line_segment([a, b], stroke);
    let d = (b - a).normalized();
    let n = Vec2::new(-d.y, d.x);
    let tip = [b, b - d * 10.0 + n * 5.0, b - d * 10.0 - n * 5.0];
    painter.add(egui::Shape::convex_polygon(tip.to_vec(), stroke.color, Stroke::NONE));
}

/// The machine with `f` applied, as one SetNode of `node` named `field`.
pub fn edit(node: NodeId, m: &StateMachine, field: &str, f: impl FnOnce(&mut StateMachine)) -> GraphOp {
    let mut next = m.clone();
    f(&mut next);
    GraphOp::SetNode { node, kind: NodeKind::StateMachine { machine: next }, field: field.to_owned() }
}

/// Removes state `name`, the transitions touching it, and moves the entry to the first state
/// left when it was the entry.
pub fn remove_state(m: &mut StateMachine, name: &str) {
    m.states.retain(|s| s.name != name);
    m.transitions.retain(|t| t.to != name && t.from.as_deref() != Some(name));
    if m.entry == name {
        m.entry = m.states.first().map(|s| s.name.clone()).unwrap_or_default();
    }
}

/// Where a state added without a place to put it goes: right of the rightmost state, on
/// alternate rows (so a ring of three reads as a triangle).
pub fn next_spot(m: &StateMachine) -> [f32; 2] {
    let right = m.states.iter().map(|s| s.at[0]).fold(-220.0, f32::max);
    [right + 220.0, if m.states.len() % 2 == 1 { 110.0 } else { 0.0 }]
}

/// A new state at `at` playing `clip`, named freshly.
pub fn new_state(m: &StateMachine, clip: &str, at: [f32; 2]) -> State {
    State {
        name: m.fresh_state_name("State"),
        source: StateSource::Clip { clip: clip.to_owned(), speed: 1.0, looping: true },
        at,
    }
}

/// One frame's drawing of the canvas: where everything is, and the edits asked for.
struct Drawing<'a> {
    painter: egui::Painter,
    id: egui::Id,
    m: &'a StateMachine,
    boxes: Vec<Rect>,
    any: Rect,
    faults: &'a HashMap<MachinePlace, Vec<String>>,
    ops: Vec<GraphOp>,
    zoom: f32,
    /// The transitions' condition labels, drawn over the states once every arrow is.
    labels: Vec<PendingLabel>,
}

/// A transition's condition label waiting to be drawn beside its arrow.
struct PendingLabel {
    transition: usize,
    text: String,
    color: Color32,
    /// The arrow's middle (a loop's top).
    at: Pos2,
    /// The unit direction the label sits off the arrow (its lane's side; up for a loop).
    side: Vec2,
    /// The arrow's unit direction (zero for a loop: no length limits the label).
    along: Vec2,
    /// The arrow's drawn length.
    length: f32,
}

impl Drawing<'_> {
    /// Text of `size` points at the canvas zoom (never unreadably small).
    fn font(&self, size: f32) -> FontId {
        FontId::proportional((size * self.zoom).max(7.0))
    }
}

/// The state live in the preview: its index, normalized time and the compiled machine.
type Active<'a> = Option<(usize, f32, &'a CompiledMachine)>;

/// Draws the canvas of `view`'s machine `m` into `ui`'s remaining room; returns the edits.
pub fn ui(
    ui: &mut egui::Ui,
    view: &mut MachineView,
    m: &StateMachine,
    live: Live<'_>,
    faults: &HashMap<MachinePlace, Vec<String>>,
    first_clip: &str,
    report: &mut MachineReport,
) -> Vec<GraphOp> {
    let mut ops = Vec::new();
    let rect = ui.available_rect_before_wrap();
    let id = egui::Id::new(("marrow state canvas", view.node.0));
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 0.0, ui.visuals().extreme_bg_color);
    if ui.rect_contains_pointer(rect) {
        // Wheel pans, Ctrl + wheel (or a pinch) zooms about the pointer, F frames every state.
        let (zoom, scroll, frame_key) =
            ui.input(|i| (i.zoom_delta(), i.smooth_scroll_delta, i.key_pressed(egui::Key::F)));
        if zoom != 1.0
            && let Some(p) = ui.ctx().pointer_hover_pos()
        {
            let before = view.zoom;
            view.zoom = (view.zoom * zoom).clamp(0.25, 2.0);
            let anchor = p - rect.center();
            view.pan = anchor - (anchor - view.pan) * (view.zoom / before);
        }
        view.pan += scroll;
        if frame_key && !ui.ctx().egui_wants_keyboard_input() {
            view.framed = false;
        }
    }
    frame(view, m, rect, report);
    let origin = rect.center() + view.pan;
    let zoom = view.zoom;
    let background = ui.interact(rect, id, Sense::click_and_drag());
    let background = named(background, egui::WidgetType::Other, "State canvas");
    if background.dragged() && view.linking.is_none() {
        view.pan += background.drag_delta();
    }
    if background.clicked() {
        view.selected = None;
    }
    background.context_menu(|ui| {
        if ui.button("Add State").clicked() {
            let at = ui.ctx().pointer_interact_pos().map_or([0.0, 0.0], |p| ((p - origin) / zoom).into());
            let state = new_state(m, first_clip, at);
            view.selected = Some(MachineItem::State(state.name.clone()));
            ops.push(edit(view.node, m, "add state", |m| {
                if m.entry.is_empty() {
                    m.entry = state.name.clone();
                }
                m.states.push(state);
            }));
            ui.close();
        }
    });
    let boxes: Vec<Rect> = m
        .states
        .iter()
        .map(|s| Rect::from_center_size(origin + Vec2::from(s.at) * zoom, STATE_SIZE * zoom))
        .collect();
    let any = Rect::from_center_size(origin + Vec2::from(m.any_at) * zoom, ANY_SIZE * zoom);
    report.canvas = Some(rect);
    report.states = m.states.iter().zip(&boxes).map(|(s, r)| (s.name.clone(), *r)).collect();
    report.any = Some(any);
    let active = live.map(|(c, i)| (i.active_state(), i.state_phase(i.active_state()).unwrap_or(0.0), c));
    let running = live.and_then(|(c, i)| i.transition(c));
    report.active = active.and_then(|(s, t, c)| c.states.get(s).map(|x| (x.name.to_string(), t)));
    report.running = running.map(|r| (r.transition, r.progress));
    let mut d = Drawing { painter, id, m, boxes, any, faults, ops, zoom, labels: Vec::new() };
    let hovered_arrow = transitions(&mut d, ui, view, running, report);
    // Hovering an arrow names its transition, its conditions in full (a label may be cut short)
    // and its faults.
    if let Some(k) = hovered_arrow
        && let Some(t) = m.transitions.get(k)
    {
        let mut lines = vec![t.label()];
        lines.extend(conditions_text(t));
        lines.extend(faults.get(&MachinePlace::Transition(k, t.label())).into_iter().flatten().cloned());
        background.clone().on_hover_text(lines.join("\n"));
    }
    if background.clicked()
        && let Some(k) = hovered_arrow
    {
        view.selected = Some(MachineItem::Transition(k));
    }
    markers(&mut d, ui, view);
    states(&mut d, ui, view, active);
    transition_labels(&mut d, ui, report);
    link(&mut d, ui, view, origin);
    if m.states.is_empty() {
        d.painter.text(
            rect.center(),
            Align2::CENTER_CENTER,
            "Right-click to add a state.",
            FontId::proportional(14.0),
            Color32::GRAY,
        );
    }
    d.ops
}

/// Centres the states and Any State in the canvas when it opens, or when a state was added out
/// of sight (from the details).
fn frame(view: &mut MachineView, m: &StateMachine, rect: Rect, report: &MachineReport) {
    let added_out_of_sight = !report.states.is_empty()
        && m.states.iter().any(|s| {
            let at = rect.center() + view.pan + Vec2::from(s.at) * view.zoom;
            let r = Rect::from_center_size(at, STATE_SIZE * view.zoom);
            !report.states.contains_key(&s.name) && !rect.contains_rect(r)
        });
    if !std::mem::replace(&mut view.framed, true) || added_out_of_sight {
        // Opened: the states and Any State centred in the canvas.
        let points = m.states.iter().map(|s| s.at).chain([m.any_at]);
        let (lo, hi) = points.fold(([f32::MAX; 2], [f32::MIN; 2]), |(lo, hi), p| {
            ([lo[0].min(p[0]), lo[1].min(p[1])], [hi[0].max(p[0]), hi[1].max(p[1])])
        });
        // Fit (never past 1:1), with a box's margin around the states.
        let span = Vec2::new(hi[0] - lo[0], hi[1] - lo[1]) + STATE_SIZE + Vec2::splat(60.0);
        view.zoom = (rect.width() / span.x).min(rect.height() / span.y).clamp(0.25, 1.0);
        view.pan = -Vec2::new(lo[0] + hi[0], lo[1] + hi[1]) * 0.5 * view.zoom;
    }
}

/// Draws the transitions (under the boxes); returns the one under the pointer.
fn transitions(
    d: &mut Drawing<'_>,
    ui: &egui::Ui,
    view: &MachineView,
    running: Option<marrow_engine::graph::machine::eval::TransitionView>,
    report: &mut MachineReport,
) -> Option<usize> {
    let (m, boxes, any, painter, faults) = (d.m, &d.boxes, d.any, &d.painter, d.faults);
    let index = |name: &str| m.state_index(name);
    let mut pairs: HashMap<(Option<usize>, usize), usize> = HashMap::new();
    report.arrows.clear();
    let pointer = ui.ctx().pointer_hover_pos();
    let mut hovered_arrow = None;
    let mut labels = Vec::new();
    for (k, t) in m.transitions.iter().enumerate() {
        let (Some(to), from) = (index(&t.to), t.from.as_deref().map(index)) else {
            report.arrows.push((Pos2::ZERO, Pos2::ZERO));
            continue;
        };
        let from_rect = match from {
            None => any,
            Some(Some(f)) => boxes[f],
            Some(None) => {
                report.arrows.push((Pos2::ZERO, Pos2::ZERO));
                continue;
            }
        };
        let slot = pairs.entry((from.flatten(), to)).or_insert(0);
        let lane = *slot as f32;
        *slot += 1;
        let (a, b) = if from == Some(Some(to)) {
            // Back into itself: a loop over the box.
            let top = boxes[to].center_top();
            (top + Vec2::new(-20.0 - 8.0 * lane, 0.0), top + Vec2::new(20.0 + 8.0 * lane, 0.0))
        } else {
            let (c0, c1) = (from_rect.center(), boxes[to].center());
            let d = (c1 - c0).normalized();
            let n = Vec2::new(-d.y, d.x) * (7.0 + 12.0 * lane);
            (edge(from_rect, c1 - n) + n, edge(boxes[to], c0 + n) + n)
        };
        report.arrows.push((a, b));
        let selected = view.selected == Some(MachineItem::Transition(k));
        let faulty = faults.contains_key(&MachinePlace::Transition(k, t.label()));
        let near = pointer.is_some_and(|p| distance_to_segment(p, a, b) < 6.0);
        if near {
            hovered_arrow = Some(k);
        }
        let color = if faulty {
            Color32::from_rgb(0xff, 0x70, 0x70)
        } else if selected {
            Color32::from_rgb(0xff, 0xd0, 0x60)
        } else if near {
            Color32::from_gray(220)
        } else {
            Color32::from_gray(150)
        };
        if from == Some(Some(to)) {
            let lift = Vec2::new(0.0, -26.0 - 8.0 * lane);
            painter.add(egui::epaint::CubicBezierShape::from_points_stroke(
                [a, a + lift, b + lift, b],
                false,
                Color32::TRANSPARENT,
                Stroke::new(2.0, color),
            ));
            arrow(painter, b + Vec2::new(0.0, -8.0), b, Stroke::new(2.0, color));
        } else {
            arrow(painter, a, b, Stroke::new(if selected { 3.0 } else { 2.0 }, color));
        }
        if let Some(r) = running.filter(|r| r.transition == k) {
            // The transition in progress fills its arrow.
            let fill = a + (b - a) * r.progress;
            painter.line_segment([a, fill], Stroke::new(5.0, Color32::from_rgb(0x60, 0xd0, 0xff)));
        }
        if let Some(text) = conditions_text(t) {
            let label = if from == Some(Some(to)) {
                // Above the loop's top (the curve peaks at three quarters of its lift).
                let lift = 26.0 + 8.0 * lane;
                PendingLabel {
                    transition: k,
                    text,
                    color,
                    at: a + (b - a) * 0.5 - Vec2::new(0.0, lift * 0.75),
                    side: -Vec2::Y,
                    along: Vec2::ZERO,
                    length: 0.0,
                }
            } else {
                let along = (b - a).normalized();
                PendingLabel {
                    transition: k,
                    text,
                    color,
                    at: a + (b - a) * 0.5,
                    side: Vec2::new(-along.y, along.x),
                    along,
                    length: (b - a).length(),
                }
            };
            labels.push(label);
        }
    }
    d.labels = labels;
    hovered_arrow
}

/// A transition's conditions and exit time as one line (`None`: it has neither).
fn conditions_text(t: &Transition) -> Option<String> {
    let parts: Vec<String> = t
        .conditions
        .iter()
        .map(|c| match c.test.value() {
            Some(v) => format!("{} {} {v}", c.parameter, c.test.operator()),
            None => format!("{} {}", c.parameter, c.test.operator()),
        })
        .chain(t.exit_time.map(|e| format!("exit {e:.2}")))
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// Whether the segment `a`-`b` passes through `r` (Liang-Barsky: the segment clipped to each
/// of the rectangle's four sides in turn keeps some length).
fn crosses(a: Pos2, b: Pos2, r: Rect) -> bool {
    let d = b - a;
    let (mut t0, mut t1) = (0.0f32, 1.0f32);
    for (p, q) in [(-d.x, a.x - r.min.x), (d.x, r.max.x - a.x), (-d.y, a.y - r.min.y), (d.y, r.max.y - a.y)] {
        if p == 0.0 {
            if q < 0.0 {
                return false;
            }
            continue;
        }
        let t = q / p;
        if p < 0.0 {
            t0 = t0.max(t);
        } else {
            t1 = t1.min(t);
        }
        if t0 > t1 {
            return false;
        }
    }
    true
}

/// The widest a transition label is drawn (canvas units, at zoom 1).
const LABEL_MAX_WIDTH: f32 = 240.0;

/// Draws the transitions' condition labels after the arrows and the states: each beside its own
/// arrow on its lane's side (two arrows between one pair put theirs on opposite sides), at the
/// first of a few places along the arrow, on either side, that covers no state, marker or
/// earlier label (and, where one does, no other arrow), on a plate of the canvas colour so that no wire runs through the text, and
/// never longer than its arrow between the two boxes (cut short with an ellipsis; the arrow's
/// hover shows it whole).
fn transition_labels(d: &mut Drawing<'_>, ui: &egui::Ui, report: &mut MachineReport) {
    let plate = ui.visuals().extreme_bg_color.gamma_multiply(0.92);
    let font = d.font(10.0);
    let height = ui.fonts_mut(|f| f.row_height(&font));
    let gap = 4.0 * d.zoom.max(0.5);
    // What a label must not cover: the states with their link handles, the markers.
    let mut taken: Vec<Rect> = d.boxes.iter().map(|r| r.expand2(Vec2::new(7.0, 0.0))).collect();
    taken.push(d.any);
    taken.extend(entry_tag(d));
    report.labels.clear();
    for l in std::mem::take(&mut d.labels) {
        // The room along the arrow: the label's extent along it fits between the boxes.
        let widest = LABEL_MAX_WIDTH * d.zoom;
        let room = if l.along == Vec2::ZERO || l.along.x.abs() < 0.05 {
            widest
        } else {
            ((l.length - 2.0 * gap - height * l.along.y.abs()) / l.along.x.abs()).min(widest)
        };
        // (NaN where an arrow has no length: nothing to label.)
        if !(room >= height) {
            continue;
        }
        let mut job = egui::text::LayoutJob::simple_singleline(l.text, font.clone(), l.color);
        job.wrap = egui::text::TextWrapping::truncate_at_width(room);
        let galley = d.painter.layout_job(job);
        let size = galley.size();
        let place = |t: f32, side: Vec2| {
            // Off the arrow by the label's own extent along the side it sits on.
            let off = side.x.abs() * size.x / 2.0 + side.y.abs() * size.y / 2.0 + gap;
            Rect::from_center_size(l.at + l.along * (t - 0.5) * l.length + side * off, size)
        };
        // Along the arrow only as far as its ends leave room for the label.
        let reach = (l.along.x.abs() * size.x + l.along.y.abs() * size.y) / 2.0 + gap;
        let spare = if l.length > 0.0 { (0.5 - reach / l.length).max(0.0) } else { 0.0 };
        let candidates = [0.0, -0.5, 0.5, -1.0, 1.0]
            .into_iter()
            .flat_map(|k| [l.side, -l.side].map(|side| (0.5 + k * spare, side)));
        let candidates: Vec<Rect> = candidates.map(|(t, side)| place(t, side)).collect();
        let free = |r: &Rect| !taken.iter().any(|o| o.intersects(r.expand(1.0)));
        // Best where no other arrow runs under the label either (its plate would hide a piece
        // of that arrow, and the label would read as that arrow's).
        let clear = |r: &Rect| {
            report
                .arrows
                .iter()
                .enumerate()
                .all(|(k, &(a, b))| k == l.transition || !crosses(a, b, r.expand(1.0)))
        };
        let rect = candidates
            .iter()
            .find(|r| free(r) && clear(r))
            .or_else(|| candidates.iter().find(|r| free(r)))
            .copied()
            .unwrap_or_else(|| place(0.5, l.side));
        taken.push(rect);
        d.painter.rect_filled(rect.expand(2.0), 3.0, plate);
        report.labels.push((l.transition, rect, galley.elided));
        d.painter.galley(rect.min, galley, l.color);
    }
}

/// Any State's marker (draggable) and the entry tag.
fn markers(d: &mut Drawing<'_>, ui: &egui::Ui, view: &MachineView) {
    let (m, boxes, any, painter, id) = (d.m, &d.boxes, d.any, &d.painter, d.id);
    let index = |name: &str| m.state_index(name);
    painter.rect(
        any,
        12.0,
        Color32::from_rgb(0x3a, 0x3a, 0x55),
        Stroke::new(1.0, Color32::from_gray(120)),
        StrokeKind::Inside,
    );
    painter.text(any.center(), Align2::CENTER_CENTER, ANY_STATE, d.font(12.0), Color32::WHITE);
    let any_r = ui.interact(any, id.with("any"), Sense::drag());
    if any_r.dragged() {
        let delta = any_r.drag_delta() / d.zoom;
        d.ops.push(edit(view.node, m, "state position", |m| {
            m.any_at = [m.any_at[0] + delta.x, m.any_at[1] + delta.y];
        }));
    }
    if let Some((e, tag)) = index(&m.entry).zip(entry_tag(d)) {
        painter.rect_filled(tag, 10.0, Color32::from_rgb(0x2c, 0x66, 0x3a));
        painter.text(tag.center(), Align2::CENTER_CENTER, "Entry", d.font(11.0), Color32::WHITE);
        arrow(
            painter,
            tag.right_center(),
            boxes[e].left_center(),
            Stroke::new(2.0, Color32::from_rgb(0x60, 0xc0, 0x70)),
        );
    }
}

/// The entry tag's rectangle, left of the entry state (`None`: no such state).
fn entry_tag(d: &Drawing<'_>) -> Option<Rect> {
    let e = d.m.state_index(&d.m.entry)?;
    Some(Rect::from_center_size(
        d.boxes[e].left_center() - Vec2::new(54.0, 0.0) * d.zoom,
        Vec2::new(50.0, 20.0) * d.zoom,
    ))
}

/// The state boxes (click to select, drag to move) and their link handles.
fn states(d: &mut Drawing<'_>, ui: &egui::Ui, view: &mut MachineView, active: Active<'_>) {
    let (m, painter, id, faults) = (d.m, &d.painter, d.id, d.faults);
    for (i, (s, r)) in m.states.iter().zip(&d.boxes).enumerate() {
        let selected = view.selected == Some(MachineItem::State(s.name.clone()));
        let lit = active.is_some_and(|(a, _, _)| a == i);
        let fault = faults.get(&MachinePlace::State(s.name.clone()));
        let fill =
            if lit { Color32::from_rgb(0x2c, 0x5a, 0x80) } else { Color32::from_rgb(0x2c, 0x36, 0x44) };
        let border = if fault.is_some() {
            Stroke::new(2.0, Color32::from_rgb(0xff, 0x70, 0x70))
        } else if selected {
            Stroke::new(2.0, Color32::from_rgb(0xff, 0xd0, 0x60))
        } else if lit {
            Stroke::new(2.0, Color32::from_rgb(0x60, 0xd0, 0xff))
        } else {
            Stroke::new(1.0, Color32::from_gray(110))
        };
        painter.rect(*r, 6.0, fill, border, StrokeKind::Inside);
        let title = if fault.is_some() { format!("⚠ {}", s.name) } else { s.name.clone() };
        painter.text(
            r.center() - Vec2::new(0.0, 7.0),
            Align2::CENTER_CENTER,
            title,
            d.font(13.0),
            Color32::WHITE,
        );
        painter.text(
            r.center() + Vec2::new(0.0, 9.0),
            Align2::CENTER_CENTER,
            short_source(&s.source),
            d.font(10.0),
            Color32::from_gray(170),
        );
        if let Some((_, t, _)) = active.filter(|(a, _, _)| *a == i) {
            let bar = Rect::from_min_size(
                r.left_bottom() - Vec2::new(-4.0, 6.0),
                Vec2::new((r.width() - 8.0) * t.clamp(0.0, 1.0), 3.0),
            );
            painter.rect_filled(bar, 1.0, Color32::from_rgb(0x60, 0xd0, 0xff));
        }
        let resp = ui.interact(*r, id.with(("state", i)), Sense::click_and_drag());
        let resp = named(resp, egui::WidgetType::Button, &format!("State {}", s.name));
        let resp = match fault {
            Some(f) => resp.on_hover_text(f.join("\n")),
            None => resp,
        };
        if resp.clicked() || resp.drag_started() {
            view.selected = Some(MachineItem::State(s.name.clone()));
        }
        if resp.dragged() && resp.drag_delta() != Vec2::ZERO {
            let delta = resp.drag_delta() / d.zoom;
            d.ops.push(edit(view.node, m, "state position", |m| {
                if let Some(st) = m.states.get_mut(i) {
                    st.at = [st.at[0] + delta.x, st.at[1] + delta.y];
                }
            }));
        }
        // The link handle.
        let handle = Rect::from_center_size(r.right_center(), Vec2::splat(12.0));
        painter.circle_filled(handle.center(), 5.0, Color32::from_rgb(0xc0, 0xc0, 0x60));
        let h = ui.interact(handle, id.with(("link", i)), Sense::drag());
        let h = named(h, egui::WidgetType::Other, &format!("Link from {}", s.name));
        if h.drag_started() {
            view.linking = Some(i);
        }
    }
}

/// A link being dragged from a state's handle: dropped on a state, it adds a transition.
fn link(d: &mut Drawing<'_>, ui: &egui::Ui, view: &mut MachineView, origin: Pos2) {
    let (m, boxes, painter) = (d.m, &d.boxes, &d.painter);
    if let Some(from) = view.linking {
        let end = ui.ctx().pointer_interact_pos().unwrap_or(origin);
        if let Some(r) = boxes.get(from) {
            arrow(painter, r.right_center(), end, Stroke::new(2.0, Color32::from_rgb(0xc0, 0xc0, 0x60)));
        }
        if ui.input(|i| i.pointer.any_released()) {
            view.linking = None;
            if let (Some(to), Some(src)) = (boxes.iter().position(|b| b.contains(end)), m.states.get(from)) {
                let t = Transition::new(Some(&src.name), &m.states[to].name);
                view.selected = Some(MachineItem::Transition(m.transitions.len()));
                d.ops.push(edit(view.node, m, "add transition", |m| m.transitions.push(t)));
            }
        }
    }
}

/// "walk.clip.ron", "blend space on speed", "graph jump.graph.ron".
fn short_source(s: &StateSource) -> String {
    let file = |p: &str| p.rsplit('/').next().unwrap_or(p).to_owned();
    match s {
        StateSource::Clip { clip, .. } => file(clip),
        StateSource::BlendSpace { parameter, .. } => format!("blend space on {parameter}"),
        StateSource::Graph { graph } => format!("graph {}", file(graph)),
    }
}

/// The edit that deletes the selected item, if any.
pub fn delete_selected(view: &mut MachineView, m: &StateMachine) -> Option<GraphOp> {
    let op = match view.selected.take()? {
        MachineItem::State(name) => edit(view.node, m, "delete state", |m| remove_state(m, &name)),
        MachineItem::Transition(k) if k < m.transitions.len() => {
            edit(view.node, m, "delete transition", |m| {
                m.transitions.remove(k);
            })
        }
        MachineItem::Transition(_) => return None,
    };
    Some(op)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_segment_crosses_a_rectangle_only_where_it_passes_through_it() {
        let r = Rect::from_min_max(Pos2::new(0.0, 0.0), Pos2::new(10.0, 4.0));
        let p = Pos2::new;
        for (a, b, want, what) in [
            (p(-5.0, 2.0), p(15.0, 2.0), true, "straight through"),
            (p(5.0, -5.0), p(5.0, 9.0), true, "down through"),
            (p(2.0, 1.0), p(3.0, 2.0), true, "wholly inside"),
            (p(4.0, 2.0), p(4.0, 2.0), true, "a point inside"),
            (p(-5.0, 6.0), p(15.0, 6.0), false, "beside it"),
            (p(-5.0, 2.0), p(-1.0, 2.0), false, "ending before it"),
            (p(8.0, -3.0), p(14.0, 3.0), false, "past its corner"),
            (p(8.0, -1.0), p(12.0, 3.0), true, "across its corner"),
            (p(12.0, 2.0), p(12.0, 2.0), false, "a point outside"),
        ] {
            assert_eq!(crosses(a, b, r), want, "{what}: {a:?}-{b:?}");
        }
    }
}
