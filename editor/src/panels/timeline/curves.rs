//! The curve view: the selected channels as curves over time, on the timeline's time mapping,
//! as a Blender Graph Editor user reads them.
//!
//! - Translation and scale show their x, y and z; rotations show as Euler angles in degrees
//!   (glam's XYZ order; for reading: edits go back to the quaternion), unwrapped: each key and
//!   each plotted sample takes the equivalent Euler triple nearest the one before it (whole
//!   turns and the other solution `(x + 180, 180 - y, z + 180)`), so no curve jumps by 360
//!   degrees. One polyline per component, decimated per pixel column (min/max), so a 120 Hz
//!   capture costs at most three points a column.
//! - A value grid at 1, 2 and 5 x 10^n steps, labelled on the left, and a time grid on the
//!   ruler's frames.
//! - Keys are dots (where they lie closer than a few points, only the selected ones): a vertical
//!   drag changes the value, a horizontal one moves the key in time (snapped).
//! - CUBICSPLINE keys, when selected, show their tangent handles at
//!   the Bézier control points their Hermite tangents make (a third of the neighbouring segment
//!   along; never shorter than [`MIN_HANDLE`] points on screen), coloured by tangent mode as
//!   Blender colours handle types. Dragging a handle sets that side's slope; a Free key keeps
//!   the other side, any other key turns both (it becomes Aligned: the op decides).
//! - The toolbar above the plot (and the plot's context menu) sets the tangent mode of the
//!   selected keys (one undo step), runs the Euler filter on the shown rotation channels, and
//!   frames. The view frames every curve on F and re-fits itself after an edit that leaves a
//!   curve outside it (when a drag ends, not during it).
//!
//! Rotation keys take tangent modes (computed on the quaternion's components, see
//! [`marrow_engine::tangent`]: Auto Clamped bounds those, not the plotted angles). Their handles
//! show the Euler angle rates the quaternion tangent gives the normalized curve at the key
//! ([`euler_rates`], through the derivative of the Euler-to-quaternion map); dragging one sets
//! that angle's rate and keeps the other two ([`quat_tangent`]). At gimbal lock (Y at +-90
//! degrees) no rates say the tangent, and the key shows no handles.
//!
//! Which channels: those of the selected keys; else the keyed channels of the selected bone.
//!
//! Not here: the ruler and lanes (`super`), the edits (`crate::document::clip_ops`), the
//! tangent arithmetic (`marrow_engine::tangent`).

use egui::{Color32, Pos2, Rect, Sense, Stroke};
use glam::{EulerRot, Quat, Vec3};
use marrow_engine::clip::Channel;
use marrow_engine::project::file::ClipAsset;
use marrow_engine::tangent::{TangentMode, euler_near};
use marrow_engine::track::{Interpolation, Track};

use super::mapping::Mapping;
use super::model::{self, KeyId};
use super::{Area, NAMES_WIDTH, TimelinePanel};
use crate::cx::Cx;
use crate::document::Op;
use crate::document::clip_ops::{ClipOp, KeyRef, KeyValue};
use crate::ui_state::Selection;

const AXIS: [Color32; 3] =
    [Color32::from_rgb(235, 90, 90), Color32::from_rgb(110, 210, 90), Color32::from_rgb(90, 140, 240)];

/// Height of the curve view's toolbar.
pub const BAR_HEIGHT: f32 = 24.0;
/// The shortest a tangent handle is drawn, in points.
pub const MIN_HANDLE: f32 = 24.0;

/// The curve view's own state (UI state).
#[derive(Clone, Debug, PartialEq)]
pub struct CurveState {
    /// The value at the bottom edge.
    pub y_min: f32,
    /// The value at the top edge.
    pub y_max: f32,
    /// Frame every curve on the next frame.
    pub fit: bool,
    /// The document revision the view last checked its range against (re-fit after edits).
    seen: Option<u64>,
    drag: Option<CurveDrag>,
    /// Where the pointer was when the drag last edited (an edit only when it moves, so a
    /// press that does not move and the release frame edit nothing).
    drag_at: Option<Pos2>,
}

impl Default for CurveState {
    fn default() -> Self {
        Self { y_min: -1.0, y_max: 1.0, fit: true, seen: None, drag: None, drag_at: None }
    }
}

impl CurveState {
    /// Whether a key or handle drag is in progress.
    pub fn dragging(&self) -> bool {
        self.drag.is_some()
    }
}

#[derive(Clone, Debug, PartialEq)]
enum CurveDrag {
    /// A key: its id, the component dragged, the pointer at the press, and whether the drag
    /// moves time (decided by the first movement).
    Key { key: KeyId, comp: usize, press: Pos2, time: Option<bool> },
    /// A tangent handle: the key, component, and which side (out: true).
    Tangent { key: KeyId, comp: usize, out: bool },
}

/// Where the curve view drew things (tests drive the painted keys and handles by these).
#[derive(Clone, Debug, PartialEq)]
pub struct CurveLayout {
    /// The plot.
    pub plot: Rect,
    /// The value at the plot's bottom edge.
    pub y_min: f32,
    /// The value at its top edge.
    pub y_max: f32,
    /// The tangent handles drawn: key, component, side (out: true), position.
    pub handles: Vec<(KeyId, usize, bool, Pos2)>,
}

impl CurveLayout {
    /// The screen height of value `v`.
    pub fn y(&self, v: f32) -> f32 {
        self.plot.bottom() - (v - self.y_min) / (self.y_max - self.y_min) * self.plot.height()
    }

    /// The handle drawn for `key`'s component `comp` on side `out`.
    pub fn handle(&self, key: KeyId, comp: usize, out: bool) -> Option<Pos2> {
        self.handles.iter().find(|h| h.0 == key && h.1 == comp && h.2 == out).map(|h| h.3)
    }
}

/// A shown channel with, for rotations, its keys' unwrapped Euler angles (radians).
struct Shown {
    bone: usize,
    channel: Channel,
    eulers: Vec<Vec3>,
}

impl Shown {
    /// The unwrapped Euler angles of the key at or before `t` (the first key's before it).
    fn anchor(&self, times: &[f32], t: f32) -> Vec3 {
        let i = times.partition_point(|x| *x <= t).saturating_sub(1);
        self.eulers.get(i).copied().unwrap_or(Vec3::ZERO)
    }
}

/// The keys' Euler angles, each the triple nearest the key before it.
fn unwrapped_eulers(clip: &ClipAsset, b: usize, ch: Channel) -> Vec<Vec3> {
    quat_track(clip, b, ch).map_or(Vec::new(), |t| unwrap_eulers(t.values()))
}

/// Euler angles for a run of rotations: the first the triple nearest rest (of the two that
/// name it, the one of smaller angles), each later one the triple nearest the one before.
/// The first key's choice sets the whole curve's branch: anchored on the first key's
/// canonical triple (pitch within ±90 degrees), a key of pitch 158 degrees pasted at frame 0
/// turned every curve of the channel over to its other triple (roll and yaw near ±180).
fn unwrap_eulers(values: &[Quat]) -> Vec<Vec3> {
    let mut out: Vec<Vec3> = Vec::with_capacity(values.len());
    for q in values {
        let near = out.last().copied().unwrap_or(Vec3::ZERO);
        out.push(euler_near(*q, near));
    }
    out
}

/// The keys of a rotation channel as the curve view plots them: Euler degrees, unwrapped
/// (empty for other channels).
pub fn key_eulers(clip: &ClipAsset, b: usize, ch: Channel) -> Vec<Vec3> {
    unwrapped_eulers(clip, b, ch).into_iter().map(|e| e * (180.0 / std::f32::consts::PI)).collect()
}

/// The components of a value as plotted: a vector as it is; a rotation as Euler degrees near
/// `near` (radians).
fn components(v: KeyValue, near: Vec3) -> [f32; 3] {
    match v {
        KeyValue::Vec3(v) => v.to_array(),
        KeyValue::Quat(q) => (euler_near(q, near) * (180.0 / std::f32::consts::PI)).to_array(),
    }
}

/// `v` with plotted component `comp` set to `value`; a rotation from its shown Euler angles
/// `shown` (radians), on the hemisphere of the old key.
fn with_component(v: KeyValue, comp: usize, value: f32, shown: Vec3) -> KeyValue {
    match v {
        KeyValue::Vec3(mut x) => {
            x[comp] = value;
            KeyValue::Vec3(x)
        }
        KeyValue::Quat(q) => {
            let mut e = shown;
            e[comp] = value.to_radians();
            let n = Quat::from_euler(EulerRot::XYZ, e.x, e.y, e.z).normalize();
            KeyValue::Quat(if n.dot(q) < 0.0 { -n } else { n })
        }
    }
}

/// The channels the curve view shows.
pub fn shown(panel: &TimelinePanel, cx: &Cx, clip: &ClipAsset) -> Vec<(usize, Channel)> {
    let mut out: Vec<(usize, Channel)> =
        panel.selection.iter().map(|k| (k.bone as usize, k.channel)).collect();
    out.dedup();
    if out.is_empty()
        && let Selection::Bone { bone, .. } = &cx.ui.selection
        && let Some(b) = clip.bones.iter().position(|x| x == bone)
    {
        out = model::CHANNELS
            .iter()
            .filter(|ch| !model::channel_times(clip, b, **ch).is_empty())
            .map(|ch| (b, *ch))
            .collect();
    }
    out
}

fn sample(clip: &ClipAsset, b: usize, ch: Channel, t: f32) -> Option<KeyValue> {
    let c = clip.clip.channels().get(b)?;
    match ch {
        Channel::Translation => c.translation.as_ref()?.sample(t).map(KeyValue::Vec3),
        Channel::Scale => c.scale.as_ref()?.sample(t).map(KeyValue::Vec3),
        Channel::Rotation => c.rotation.as_ref()?.sample(t).map(KeyValue::Quat),
    }
}

fn vec_track(clip: &ClipAsset, b: usize, ch: Channel) -> Option<&Track<Vec3>> {
    let c = clip.clip.channels().get(b)?;
    match ch {
        Channel::Translation => c.translation.as_ref(),
        Channel::Scale => c.scale.as_ref(),
        Channel::Rotation => None,
    }
}

fn quat_track(clip: &ClipAsset, b: usize, ch: Channel) -> Option<&Track<Quat>> {
    let c = clip.clip.channels().get(b)?;
    (ch == Channel::Rotation).then_some(c.rotation.as_ref()).flatten()
}

/// The tangent mode of key `k`, when its channel is CUBICSPLINE.
pub fn tangent_mode_of(clip: &ClipAsset, k: KeyId) -> Option<TangentMode> {
    let (b, ch, t) = (k.bone as usize, k.channel, k.t());
    let find = |times: &[f32]| times.iter().position(|x| (*x - t).abs() < 1e-6);
    if let Some(tr) = vec_track(clip, b, ch) {
        return (tr.interpolation() == Interpolation::CubicSpline)
            .then(|| find(tr.times()).map(|i| tr.tangent_mode(i)))
            .flatten();
    }
    let tr = quat_track(clip, b, ch)?;
    (tr.interpolation() == Interpolation::CubicSpline)
        .then(|| find(tr.times()).map(|i| tr.tangent_mode(i)))?
}

/// The value axis of the plot: maps values to heights and back.
#[derive(Clone, Copy)]
struct ValueAxis {
    plot: Rect,
    y_min: f32,
    y_max: f32,
}

impl ValueAxis {
    fn y_of(&self, v: f32) -> f32 {
        self.plot.bottom() - (v - self.y_min) / (self.y_max - self.y_min) * self.plot.height()
    }

    fn v_of(&self, y: f32) -> f32 {
        self.y_min + (self.plot.bottom() - y) / self.plot.height() * (self.y_max - self.y_min)
    }
}

/// Draws and drives the curve view in `rect` (its toolbar on top).
pub fn show(
    panel: &mut TimelinePanel,
    ui: &mut egui::Ui,
    cx: &mut Cx,
    clip: &ClipAsset,
    area: &Area,
    map: &Mapping,
    rect: Rect,
) {
    let bar = Rect::from_min_size(rect.min, egui::vec2(rect.width(), BAR_HEIGHT));
    let rect = Rect::from_min_max(Pos2::new(rect.left(), bar.bottom()), rect.max);
    let names = Rect::from_min_max(rect.min, Pos2::new(rect.left() + NAMES_WIDTH, rect.bottom()));
    let plot = Rect::from_min_max(Pos2::new(names.right(), rect.top()), rect.max);
    let channels: Vec<Shown> = shown(panel, cx, clip)
        .into_iter()
        .map(|(bone, channel)| Shown { bone, channel, eulers: unwrapped_eulers(clip, bone, channel) })
        .collect();
    toolbar(panel, ui, cx, clip, area, &channels, bar);
    let painter = ui.painter_at(rect);
    painter.rect_filled(plot, 0.0, ui.visuals().extreme_bg_color);
    draw_legend(ui, &painter, clip, &channels, names);
    // Frame all (F, or the first show); after an edit, re-fit when a curve left the view.
    let f_pressed = ui.input(|i| i.pointer.hover_pos().is_some_and(|p| rect.contains(p)))
        && ui.ctx().input_mut(|i| i.consume_key(egui::Modifiers::NONE, egui::Key::F));
    let revision = cx.doc.revision();
    // Any drag (here, on the dope sheet, a gizmo) re-fits at its end, not while it runs.
    let gesture = panel.curve.dragging() || ui.input(|i| i.pointer.any_down());
    if !channels.is_empty() {
        let (lo, hi) = value_range(clip, &channels);
        let edited = panel.curve.seen.is_some_and(|s| s != revision) && !gesture;
        let outside = lo < panel.curve.y_min || hi > panel.curve.y_max;
        if panel.curve.fit || f_pressed || (edited && outside) {
            frame(&mut panel.curve, lo, hi);
        }
    }
    if !gesture {
        panel.curve.seen = Some(revision);
    }
    let state = &panel.curve;
    let axis = ValueAxis { plot, y_min: state.y_min, y_max: state.y_max.max(state.y_min + 1e-4) };
    // Curves, keys and handles stay inside the plot; the value labels sit left of it.
    let inside = ui.painter_at(plot);
    draw_grid(ui, [&inside, &painter], clip, map, &axis);
    draw_curves(&inside, clip, &channels, map, &axis);
    let targets = draw_keys(panel, &inside, clip, &channels, map, &axis);
    panel.layout.curve = Some(CurveLayout {
        plot,
        y_min: axis.y_min,
        y_max: axis.y_max,
        handles: targets
            .iter()
            .filter_map(|(p, d)| match d {
                CurveDrag::Tangent { key, comp, out } => Some((*key, *comp, *out, *p)),
                CurveDrag::Key { .. } => None,
            })
            .collect(),
    });
    interact(panel, ui, cx, clip, area, map, &axis, &channels, &targets);
}

/// The toolbar: the selected keys' tangent mode, the Euler filter, Frame.
fn toolbar(
    panel: &mut TimelinePanel,
    ui: &mut egui::Ui,
    cx: &mut Cx,
    clip: &ClipAsset,
    area: &Area,
    channels: &[Shown],
    bar: Rect,
) {
    let mut child = ui.new_child(egui::UiBuilder::new().max_rect(bar.shrink2(egui::vec2(6.0, 1.0))));
    child.horizontal(|ui| {
        tangent_buttons(panel, ui, cx, clip, area);
        ui.separator();
        euler_filter_button(ui, cx, clip, area, channels);
        if ui.button("Frame").on_hover_text("F: fit the value range to the shown curves").clicked() {
            panel.curve.fit = true;
        }
    });
}

/// The tangent mode buttons for the selected keys (the current mode selected when they share
/// one); disabled unless a selected key is on a Cubic channel.
fn tangent_buttons(panel: &mut TimelinePanel, ui: &mut egui::Ui, cx: &mut Cx, clip: &ClipAsset, area: &Area) {
    let modes: Vec<TangentMode> = panel.selection.iter().filter_map(|k| tangent_mode_of(clip, *k)).collect();
    let current = modes.first().copied().filter(|m| modes.iter().all(|x| x == m));
    ui.label("Tangents");
    ui.add_enabled_ui(!modes.is_empty(), |ui| {
        for mode in TangentMode::ALL {
            let r = ui
                .selectable_label(current == Some(mode), mode.name())
                .on_disabled_hover_text("Select keys of a Cubic channel (right-click a channel: Cubic)");
            if r.clicked() {
                let keys: Vec<KeyRef> = panel.selection.iter().filter_map(|k| k.to_ref(clip)).collect();
                cx.edit(Op::Clip { path: area.path.clone(), op: ClipOp::SetTangentMode { keys, mode } });
                ui.close();
            }
        }
    });
    if !modes.is_empty() && current.is_none() {
        ui.weak("(mixed)");
    }
}

/// The Euler filter on the shown rotation channels.
fn euler_filter_button(ui: &mut egui::Ui, cx: &mut Cx, clip: &ClipAsset, area: &Area, channels: &[Shown]) {
    let bones: Vec<String> = channels
        .iter()
        .filter(|s| s.channel == Channel::Rotation)
        .filter_map(|s| clip.bones.get(s.bone).cloned())
        .collect();
    let r = ui
        .add_enabled(!bones.is_empty(), egui::Button::new("Euler Filter"))
        .on_hover_text("Put each rotation key on the hemisphere of the one before (no flips)")
        .on_disabled_hover_text("Show a rotation channel");
    if r.clicked() {
        cx.edit(Op::Clip { path: area.path.clone(), op: ClipOp::EulerFilter(bones) });
        ui.close();
    }
}

/// The legend: each shown channel's name and its components' colours.
fn draw_legend(ui: &egui::Ui, painter: &egui::Painter, clip: &ClipAsset, channels: &[Shown], names: Rect) {
    let mut y = names.top() + 6.0;
    if channels.is_empty() {
        painter.text(
            Pos2::new(names.left() + 6.0, y),
            egui::Align2::LEFT_TOP,
            "Select keys or a bone",
            egui::FontId::proportional(12.0),
            ui.visuals().weak_text_color(),
        );
    }
    for s in channels {
        let interp = model::key_look(clip, s.bone, s.channel, 0).interpolation;
        painter.text(
            Pos2::new(names.left() + 6.0, y),
            egui::Align2::LEFT_TOP,
            format!("{} {}", clip.bones[s.bone], s.channel),
            egui::FontId::proportional(12.0),
            ui.visuals().text_color(),
        );
        y += 16.0;
        let labels = if s.channel == Channel::Rotation { ["X°", "Y°", "Z°"] } else { ["X", "Y", "Z"] };
        for (i, l) in labels.iter().enumerate() {
            painter.text(
                Pos2::new(names.left() + 16.0 + i as f32 * 30.0, y),
                egui::Align2::LEFT_TOP,
                *l,
                egui::FontId::proportional(11.0),
                AXIS[i],
            );
        }
        painter.text(
            Pos2::new(names.left() + 106.0, y),
            egui::Align2::LEFT_TOP,
            super::interpolation_name(interp),
            egui::FontId::proportional(11.0),
            ui.visuals().weak_text_color(),
        );
        y += 16.0;
    }
}

/// The lowest and highest value of every shown curve: its keys and 65 samples over the clip.
fn value_range(clip: &ClipAsset, channels: &[Shown]) -> (f32, f32) {
    let (mut lo, mut hi) = (f32::MAX, f32::MIN);
    let d = clip.clip.duration().max(1e-3);
    let mut add = |v: [f32; 3]| {
        for c in v {
            lo = lo.min(c);
            hi = hi.max(c);
        }
    };
    for s in channels {
        let times = model::channel_times(clip, s.bone, s.channel);
        for i in 0..=64 {
            let t = d * i as f32 / 64.0;
            if let Some(v) = sample(clip, s.bone, s.channel, t) {
                add(components(v, s.anchor(times, t)));
            }
        }
        for j in 0..times.len() {
            if let Some(v) = key_at(clip, s.bone, s.channel, j) {
                add(components(v, s.eulers.get(j).copied().unwrap_or_default()));
            }
        }
    }
    (lo, hi)
}

/// Fits the value range to `lo..hi` with a margin.
fn frame(state: &mut CurveState, lo: f32, hi: f32) {
    if lo <= hi {
        let pad = ((hi - lo) * 0.1).max(0.05);
        state.y_min = lo - pad;
        state.y_max = hi + pad;
    }
    state.fit = false;
}

/// The value step of a grid with lines at least `min_points` apart: 1, 2 or 5 x 10^n.
pub fn nice_step(range: f32, height: f32, min_points: f32) -> f32 {
    let raw = (range.abs() / (height / min_points).max(1.0)).max(1e-6);
    let p = 10f32.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * p).find(|s| *s >= raw * 0.999).unwrap_or(10.0 * p)
}

/// The grid: horizontal lines at [`nice_step`] values labelled left of the plot (the zero
/// line stronger), vertical lines on the ruler's frame ticks. `painters`: the plot's, and one
/// that reaches the labels' column.
fn draw_grid(
    ui: &egui::Ui,
    painters: [&egui::Painter; 2],
    clip: &ClipAsset,
    map: &Mapping,
    axis: &ValueAxis,
) {
    let [painter, labels] = painters;
    let plot = axis.plot;
    let fps = clip.clip.frame_rate;
    let (step, every) = map.frame_ticks(fps);
    let (t0, t1) = map.visible();
    let mut f = ((t0 * fps) / step as f32).floor() as i64 * step as i64;
    while f as f32 <= t1 * fps {
        let x = map.x(f as f32 / fps);
        let major = (f / step as i64) % every as i64 == 0;
        if x >= plot.left() {
            painter.line_segment(
                [Pos2::new(x, plot.top()), Pos2::new(x, plot.bottom())],
                Stroke::new(1.0, Color32::from_gray(if major { 48 } else { 36 })),
            );
        }
        f += step as i64;
    }
    let v_step = nice_step(axis.y_max - axis.y_min, plot.height(), 28.0);
    let decimals = (-v_step.log10().floor()).max(0.0) as usize;
    let mut i = (axis.y_min / v_step).ceil() as i64;
    while (i as f32) * v_step <= axis.y_max {
        let v = i as f32 * v_step;
        let y = axis.y_of(v);
        let color = if i == 0 { Color32::from_gray(85) } else { Color32::from_gray(44) };
        painter
            .line_segment([Pos2::new(plot.left(), y), Pos2::new(plot.right(), y)], Stroke::new(1.0, color));
        labels.text(
            Pos2::new(plot.left() - 4.0, y),
            egui::Align2::RIGHT_CENTER,
            format!("{:.*}", decimals, if v == 0.0 { 0.0 } else { v }),
            egui::FontId::monospace(10.0),
            ui.visuals().weak_text_color(),
        );
        i += 1;
    }
}

/// A channel's key `i` as a value (by index: no search).
fn key_at(clip: &ClipAsset, b: usize, ch: Channel, i: usize) -> Option<KeyValue> {
    let c = clip.clip.channels().get(b)?;
    match ch {
        Channel::Translation => c.translation.as_ref()?.values().get(i).copied().map(KeyValue::Vec3),
        Channel::Scale => c.scale.as_ref()?.values().get(i).copied().map(KeyValue::Vec3),
        Channel::Rotation => c.rotation.as_ref()?.values().get(i).copied().map(KeyValue::Quat),
    }
}

/// The lowest and the highest key of a column: (key index, value) each.
type Extremes = ((usize, f32), (usize, f32));

/// The curves: one polyline per component, decimated per pixel column. Each column adds the
/// curve's value at its left edge and, when keys fall inside it, their lowest and highest
/// values (in the order they come), so a dense clip keeps its peaks with at most three points
/// a column. Rotations unwrap sample by sample, from the key before the first column and again
/// from each key passed.
fn draw_curves(
    painter: &egui::Painter,
    clip: &ClipAsset,
    channels: &[Shown],
    map: &Mapping,
    axis: &ValueAxis,
) {
    let plot = axis.plot;
    let ppp = painter.pixels_per_point();
    let cols = (plot.width() * ppp).ceil().max(2.0) as usize;
    let px = 1.0 / ppp;
    for s in channels {
        let (b, ch) = (s.bone, s.channel);
        let times = model::channel_times(clip, b, ch);
        let mut k = times.partition_point(|t| *t < map.t(plot.left()));
        let mut near = s.anchor(times, map.t(plot.left()));
        let mut lines: [Vec<Pos2>; 3] = Default::default();
        for c in 0..=cols {
            let x = plot.left() + c as f32 * px;
            let Some(v) = sample(clip, b, ch, map.t(x).max(0.0)) else { continue };
            let plotted = components(v, near);
            if let KeyValue::Quat(_) = v {
                near = Vec3::from_array(plotted).to_radians_vec();
            }
            for (comp, v) in plotted.into_iter().enumerate() {
                lines[comp].push(Pos2::new(x, axis.y_of(v)));
            }
            // The keys inside the column: per component the lowest and highest, in order.
            let end = map.t(x + px);
            let mut ext: [Option<Extremes>; 3] = [None; 3];
            while k < times.len() && times[k] < end {
                if let Some(v) = key_at(clip, b, ch, k) {
                    let e = s.eulers.get(k).copied().unwrap_or(near);
                    for (comp, v) in components(v, e).into_iter().enumerate() {
                        let e = ext[comp].get_or_insert(((k, v), (k, v)));
                        if v < e.0.1 {
                            e.0 = (k, v);
                        }
                        if v > e.1.1 {
                            e.1 = (k, v);
                        }
                    }
                    if let Some(e) = s.eulers.get(k) {
                        near = *e;
                    }
                }
                k += 1;
            }
            for (comp, e) in ext.into_iter().enumerate() {
                let Some((lo, hi)) = e else { continue };
                let (first, second) = if lo.0 <= hi.0 { (lo.1, hi.1) } else { (hi.1, lo.1) };
                let xm = x + 0.5 * px;
                lines[comp].push(Pos2::new(xm, axis.y_of(first)));
                if second != first {
                    lines[comp].push(Pos2::new(xm, axis.y_of(second)));
                }
            }
        }
        for (comp, l) in lines.into_iter().enumerate() {
            painter.add(egui::Shape::line(l, Stroke::new(1.5, AXIS[comp])));
        }
    }
}

/// Degrees to radians for a plotted Euler triple.
trait ToRadians {
    fn to_radians_vec(self) -> Vec3;
}

impl ToRadians for Vec3 {
    fn to_radians_vec(self) -> Vec3 {
        self * (std::f32::consts::PI / 180.0)
    }
}

/// A handle's colour by tangent mode (Blender's selected handle colours).
fn handle_color(mode: TangentMode) -> Color32 {
    match mode {
        TangentMode::AutoClamped => Color32::from_rgb(240, 175, 144),
        TangentMode::Auto => Color32::from_rgb(240, 240, 64),
        TangentMode::Flat => Color32::from_rgb(140, 210, 110),
        TangentMode::Aligned => Color32::from_rgb(240, 144, 200),
        TangentMode::Free => Color32::from_rgb(220, 220, 220),
    }
}

/// Where key `j`'s handle on side `out` is drawn: the Bézier control point of its Hermite
/// slope `slope` (a third of the neighbouring segment along), lengthened to [`MIN_HANDLE`]
/// points on screen when shorter and shortened to stay inside the plot.
fn handle_pos(
    times: &[f32],
    j: usize,
    at: Pos2,
    slope: f32,
    out: bool,
    map: &Mapping,
    axis: &ValueAxis,
) -> Pos2 {
    let seg = if out {
        times.get(j + 1).map(|t| t - times[j])
    } else {
        j.checked_sub(1).map(|i| times[j] - times[i])
    };
    let seg = seg.or_else(|| {
        if out {
            j.checked_sub(1).map(|i| times[j] - times[i])
        } else {
            times.get(j + 1).map(|t| t - times[j])
        }
    });
    let h = seg.unwrap_or(0.3) / 3.0 * if out { 1.0 } else { -1.0 };
    let to = Pos2::new(map.x(times[j] + h), axis.y_of(axis.v_of(at.y) + slope * h));
    let mut d = to - at;
    if d.length() < MIN_HANDLE && d.length() > 1e-6 {
        d = d.normalized() * MIN_HANDLE;
    }
    // A steep handle is shortened along its slope to stay inside the plot, where it can be
    // grabbed (the slope is what it says).
    let (top, bottom) = (axis.plot.top() + 4.0, axis.plot.bottom() - 4.0);
    let room = if d.y < 0.0 {
        (at.y - top) / -d.y
    } else if d.y > 0.0 {
        (bottom - at.y) / d.y
    } else {
        1.0
    };
    if room < 1.0 && room > 0.0 {
        d *= room;
    }
    at + d
}

/// Draws the visible keys and the selected keys' tangent handles; returns every visible key
/// (and handle) as a drag target. Where a channel's visible keys lie closer than
/// [`super::dope_draw::GLYPH_SPACING`] points apart on average, only its selected keys are
/// drawn, one dot per pixel column and component (the curve shows the rest).
fn draw_keys(
    panel: &TimelinePanel,
    painter: &egui::Painter,
    clip: &ClipAsset,
    channels: &[Shown],
    map: &Mapping,
    axis: &ValueAxis,
) -> Vec<(Pos2, CurveDrag)> {
    let (t0, t1) = map.visible();
    let ppp = painter.pixels_per_point();
    let mut targets: Vec<(Pos2, CurveDrag)> = Vec::new();
    for s in channels {
        let (b, ch) = (s.bone, s.channel);
        let times = model::channel_times(clip, b, ch);
        let (a, z) = model::visible_range(times, t0, t1);
        let dense = z - a > 1
            && (map.x(times[z - 1]) - map.x(times[a])) / (z - a - 1) as f32
                <= super::dope_draw::GLYPH_SPACING;
        let mut last_col = [i64::MIN; 3];
        for (j, &t) in times.iter().enumerate().take(z).skip(a) {
            let id = KeyId::new(b, ch, t);
            let Some(v) = key_at(clip, b, ch, j) else { continue };
            let sel = panel.selection.contains(&id);
            for (k, c) in components(v, s.eulers.get(j).copied().unwrap_or_default()).into_iter().enumerate()
            {
                let at = Pos2::new(map.x(t), axis.y_of(c));
                targets.push((at, CurveDrag::Key { key: id, comp: k, press: at, time: None }));
                let col = (at.x * ppp).floor() as i64;
                if dense && (!sel || col == last_col[k]) {
                    continue;
                }
                last_col[k] = col;
                if let (true, Some((mode, tin, tout))) = (sel, sel.then(|| key_slopes(clip, s, j)).flatten())
                {
                    let color = handle_color(mode);
                    for (out, slope) in [(false, tin[k]), (true, tout[k])] {
                        let hp = handle_pos(times, j, at, slope, out, map, axis);
                        painter.line_segment([at, hp], Stroke::new(1.0, color.gamma_multiply(0.8)));
                        painter.circle(hp, 3.5, color, Stroke::new(1.0, Color32::BLACK));
                        targets.push((hp, CurveDrag::Tangent { key: id, comp: k, out }));
                    }
                }
                painter.circle(
                    at,
                    if sel { 4.5 } else { 3.5 },
                    if sel { Color32::from_rgb(255, 215, 80) } else { AXIS[k] },
                    Stroke::new(1.0, Color32::BLACK),
                );
            }
        }
    }
    targets
}

/// The plot's pointer input: picking a key or handle, clicking a key, panning with the middle
/// button, the drag in progress, and the context menu.
#[allow(clippy::too_many_arguments)]
fn interact(
    panel: &mut TimelinePanel,
    ui: &mut egui::Ui,
    cx: &mut Cx,
    clip: &ClipAsset,
    area: &Area,
    map: &Mapping,
    axis: &ValueAxis,
    channels: &[Shown],
    targets: &[(Pos2, CurveDrag)],
) {
    let plot = axis.plot;
    let r = ui.interact(plot, ui.id().with("curve view"), Sense::click_and_drag());
    r.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Other, true, "Curve view"));
    let nearest = |p: Pos2| {
        targets
            .iter()
            .filter(|(at, _)| at.distance(p) <= 7.0)
            .min_by(|a, b| a.0.distance(p).total_cmp(&b.0.distance(p)))
            .map(|(_, d)| d.clone())
    };
    if r.drag_started_by(egui::PointerButton::Primary)
        && let Some(p) = ui.input(|i| i.pointer.press_origin())
    {
        panel.curve.drag_at = Some(p);
        panel.curve.drag = nearest(p).map(|d| match d {
            CurveDrag::Key { key, comp, .. } => CurveDrag::Key { key, comp, press: p, time: None },
            other => other,
        });
        if let Some(CurveDrag::Key { key, .. }) = &panel.curve.drag
            && !panel.selection.contains(key)
        {
            panel.selection.clear();
            panel.selection.insert(*key);
        }
    }
    if (r.clicked() || r.secondary_clicked())
        && let Some(p) = r.interact_pointer_pos()
        && let Some(CurveDrag::Key { key, .. }) = nearest(p)
    {
        if ui.input(|i| i.modifiers.shift) {
            if !panel.selection.remove(&key) {
                panel.selection.insert(key);
            }
        } else if r.clicked() || !panel.selection.contains(&key) {
            panel.selection.clear();
            panel.selection.insert(key);
        }
    }
    if r.dragged_by(egui::PointerButton::Middle) {
        panel.view = panel.view.panned(r.drag_delta().x);
        let dv = r.drag_delta().y / plot.height() * (axis.y_max - axis.y_min);
        panel.curve.y_min += dv;
        panel.curve.y_max += dv;
    }
    if let (Some(drag), Some(p)) = (panel.curve.drag.clone(), r.interact_pointer_pos())
        && panel.curve.drag_at != Some(p)
    {
        panel.curve.drag_at = Some(p);
        match drag {
            CurveDrag::Key { key, comp, press, time } => {
                drag_key(panel, cx, clip, area, map, axis, channels, (key, comp, press, time), p)
            }
            CurveDrag::Tangent { key, comp, out } => {
                drag_tangent(cx, clip, area, map, axis, channels, (key, comp, out), p)
            }
        }
    }
    if !r.dragged() {
        panel.curve.drag = None;
    }
    r.context_menu(|ui| {
        tangent_buttons(panel, ui, cx, clip, area);
        ui.separator();
        euler_filter_button(ui, cx, clip, area, channels);
        if ui.button("Frame All (F)").clicked() {
            panel.curve.fit = true;
            ui.close();
        }
    });
}

/// A key's drag to `p`: once it has moved, in time (snapped) or in value, whichever the first
/// movement chose.
#[allow(clippy::too_many_arguments)]
fn drag_key(
    panel: &mut TimelinePanel,
    cx: &mut Cx,
    clip: &ClipAsset,
    area: &Area,
    map: &Mapping,
    axis: &ValueAxis,
    channels: &[Shown],
    (key, comp, press, time): (KeyId, usize, Pos2, Option<bool>),
    p: Pos2,
) {
    let fps = clip.clip.frame_rate;
    let time = time.or_else(|| {
        let d = p - press;
        (d.length() > 4.0).then_some(d.x.abs() > d.y.abs())
    });
    let Some(moves_time) = time else { return };
    panel.curve.drag = Some(CurveDrag::Key { key, comp, press, time: Some(moves_time) });
    let Some(kref) = key.to_ref(clip) else { return };
    if moves_time {
        let delta = super::move_delta(map.t(p.x) - map.t(press.x), Some(fps), key.t());
        cx.edit(Op::Clip { path: area.path.clone(), op: ClipOp::MoveKeys { keys: vec![kref], delta } });
        panel.selection.clear();
        panel.selection.insert(KeyId::new(key.bone as usize, key.channel, key.t() + delta));
    } else if let Some(v) = super::key_value(clip, key) {
        let times = model::channel_times(clip, key.bone as usize, key.channel);
        let shown = channels
            .iter()
            .find(|s| s.bone == key.bone as usize && s.channel == key.channel)
            .and_then(|s| s.eulers.get(times.iter().position(|t| *t == key.t())?).copied())
            .unwrap_or_default();
        let value = with_component(v, comp, axis.v_of(p.y), shown);
        cx.edit(Op::Clip { path: area.path.clone(), op: ClipOp::SetKeyValue { key: kref, value } });
    }
}

/// A tangent handle's drag to `p`: the slope from the key to the pointer, on the dragged side
/// only for a Free key, on both sides otherwise (the op makes such a key Aligned). A rotation's
/// handle sets that Euler angle's rate and keeps the other two.
#[allow(clippy::too_many_arguments)]
fn drag_tangent(
    cx: &mut Cx,
    clip: &ClipAsset,
    area: &Area,
    map: &Mapping,
    axis: &ValueAxis,
    channels: &[Shown],
    (key, comp, out): (KeyId, usize, bool),
    p: Pos2,
) {
    let (b, ch) = (key.bone as usize, key.channel);
    let times = model::channel_times(clip, b, ch);
    let (Some(j), Some(kref)) = (times.iter().position(|t| (*t - key.t()).abs() < 1e-6), key.to_ref(clip))
    else {
        return;
    };
    let Some(s) = channels.iter().find(|s| s.bone == b && s.channel == ch) else { return };
    let (Some(v), Some((mode, mut tin, mut tout))) = (key_at(clip, b, ch, j), key_slopes(clip, s, j)) else {
        return;
    };
    let c = components(v, s.eulers.get(j).copied().unwrap_or_default())[comp];
    // Seconds from the key to the pointer on the handle's side (a few points at least).
    let min = 2.0 / map.points_per_second().max(1e-6);
    let dt = if out { map.t(p.x) - key.t() } else { key.t() - map.t(p.x) };
    let slope = (axis.v_of(p.y) - c) / dt.max(min) * if out { 1.0 } else { -1.0 };
    let free = mode == TangentMode::Free;
    if !free || out {
        tout[comp] = slope;
    }
    if !free || !out {
        tin[comp] = slope;
    }
    if !free {
        // One slope on both sides, from the dragged side's other components.
        let (from, to) = if out { (tout, &mut tin) } else { (tin, &mut tout) };
        *to = from;
    }
    let (tangent_in, tangent_out) = match v {
        KeyValue::Vec3(_) => (KeyValue::Vec3(Vec3::from_array(tin)), KeyValue::Vec3(Vec3::from_array(tout))),
        KeyValue::Quat(q) => {
            let Some(tr) = quat_track(clip, b, ch) else { return };
            let e = s.eulers.get(j).copied().unwrap_or_default();
            let side = |rates: [f32; 3], old: Quat, moved: bool| {
                if moved { quat_tangent(q, e, Vec3::from_array(rates).to_radians_vec()) } else { old }
            };
            (
                KeyValue::Quat(side(tin, tr.in_tangents()[j], !free || !out)),
                KeyValue::Quat(side(tout, tr.out_tangents()[j], !free || out)),
            )
        }
    };
    cx.edit(Op::Clip {
        path: area.path.clone(),
        op: ClipOp::SetTangents { key: kref, tangent_in, tangent_out },
    });
}

/// Key `j`'s mode and its in and out slopes as plotted (value per second; a rotation's Euler
/// degrees per second), when its channel is CUBICSPLINE (and, for a rotation, away from gimbal
/// lock, where no Euler rate says the tangent).
fn key_slopes(clip: &ClipAsset, s: &Shown, j: usize) -> Option<(TangentMode, [f32; 3], [f32; 3])> {
    let cubic = |i: Interpolation| i == Interpolation::CubicSpline;
    if let Some(t) = vec_track(clip, s.bone, s.channel).filter(|t| cubic(t.interpolation())) {
        return Some((t.tangent_mode(j), t.in_tangents()[j].to_array(), t.out_tangents()[j].to_array()));
    }
    let t = quat_track(clip, s.bone, s.channel).filter(|t| cubic(t.interpolation()))?;
    let (q, e) = (t.values()[j], *s.eulers.get(j)?);
    let deg = |d: Quat| euler_rates(q, e, d).map(|r| (r * (180.0 / std::f32::consts::PI)).to_array());
    Some((t.tangent_mode(j), deg(t.in_tangents()[j])?, deg(t.out_tangents()[j])?))
}

/// The derivative of `from_euler(XYZ, e)` by each angle, on the hemisphere of `q` (central
/// differences in f64).
fn euler_jacobian(q: Quat, e: Vec3) -> [glam::DVec4; 3] {
    let e = e.as_dvec3();
    let at = |x: glam::DVec3| glam::DVec4::from(glam::DQuat::from_euler(EulerRot::XYZ, x.x, x.y, x.z));
    let sign = if at(e).dot(glam::DVec4::from(q.as_dquat())) < 0.0 { -1.0 } else { 1.0 };
    let h = 1e-6;
    std::array::from_fn(|c| {
        let mut d = glam::DVec3::ZERO;
        d[c] = h;
        (at(e + d) - at(e - d)) * (sign / (2.0 * h))
    })
}

/// The Euler angle rates (radians per second) a quaternion tangent `d` gives the normalized
/// curve through key `q` shown as `e`; `None` at gimbal lock.
pub fn euler_rates(q: Quat, e: Vec3, d: Quat) -> Option<Vec3> {
    let j = euler_jacobian(q, e);
    let n = glam::DVec4::from(q.as_dquat().normalize());
    let d = glam::DVec4::from(d.as_dquat());
    let t = (d - n * n.dot(d)) / q.as_dquat().length();
    let m =
        glam::DMat3::from_cols_array_2d(&std::array::from_fn(|a| std::array::from_fn(|b| j[a].dot(j[b]))));
    if m.determinant().abs() < 1e-6 {
        return None;
    }
    let r = glam::DVec3::new(j[0].dot(t), j[1].dot(t), j[2].dot(t));
    Some((m.inverse() * r).as_vec3())
}

/// The quaternion tangent whose normalized curve through key `q` (shown as `e`) turns at Euler
/// angle rates `rates` (radians per second).
pub fn quat_tangent(q: Quat, e: Vec3, rates: Vec3) -> Quat {
    let j = euler_jacobian(q, e);
    let v = (j[0] * rates.x as f64 + j[1] * rates.y as f64 + j[2] * rates.z as f64) * q.as_dquat().length();
    Quat::from_vec4(v.as_vec4())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_steps_are_one_two_or_five_times_a_power_of_ten() {
        assert_eq!(nice_step(10.0, 280.0, 28.0), 1.0);
        assert_eq!(nice_step(10.0, 140.0, 28.0), 2.0);
        assert_eq!(nice_step(10.0, 60.0, 28.0), 5.0);
        assert!((nice_step(0.3, 280.0, 28.0) - 0.05).abs() < 1e-7);
        assert_eq!(nice_step(720.0, 300.0, 28.0), 100.0);
    }

    #[test]
    fn a_channel_is_shown_on_the_euler_branch_its_first_key_lies_nearest_rest_on() {
        let deg = |x: f32, y: f32, z: f32| Vec3::new(x, y, z).map(f32::to_radians);
        let q = |e: Vec3| Quat::from_euler(EulerRot::XYZ, e.x, e.y, e.z);
        let close = |a: Vec3, b: Vec3| (a - b).abs().max_element() < 1e-3;
        // A pitch past 90 degrees first, then keys turning back through it.
        let keys = [deg(2.0, 158.0, -1.0), deg(1.0, 120.0, 0.5), deg(0.0, 76.0, 1.0)];
        let shown = unwrap_eulers(&keys.map(q));
        for (s, k) in shown.iter().zip(keys) {
            assert!(close(*s, k), "shown {:?} for the key's {:?}", s * 57.29578, k * 57.29578);
        }
        // Canonical triples stay canonical, the sign of a quaternion never matters.
        let keys = [deg(-0.9, 76.5, 1.9), deg(10.0, -30.0, 170.0)];
        let shown = unwrap_eulers(&[q(keys[0]), -q(keys[1])]);
        assert!(close(shown[0], keys[0]) && close(shown[1], keys[1]), "{shown:?}");
        assert!(unwrap_eulers(&[]).is_empty());
    }

    #[test]
    fn a_rotation_edited_through_its_shown_angles_stays_on_the_key_hemisphere() {
        let q = -Quat::from_euler(EulerRot::XYZ, 0.3, 0.2, 3.0);
        let shown = euler_near(q, Vec3::new(0.3, 0.2, 3.0));
        let KeyValue::Quat(n) = with_component(KeyValue::Quat(q), 0, 0.3f32.to_degrees() + 10.0, shown)
        else {
            unreachable!()
        };
        assert!(n.dot(q) > 0.0, "the edited key keeps the old key's sign");
        let e = euler_near(n, shown);
        assert!((e.x - (0.3 + 10f32.to_radians())).abs() < 1e-4 && (e.z - 3.0).abs() < 1e-4, "{e:?}");
    }
}
