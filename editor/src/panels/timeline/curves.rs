//! The curve view: the selected channels as curves over time, on the timeline's time mapping.
//! Translation and scale show their x, y and z; rotations show as Euler angles in degrees (for
//! reading: edits go back to the quaternion), one polyline per component decimated per pixel
//! column (min/max), so a 120 Hz capture costs at most three points a column. Keys are dots
//! (where they lie closer than a few points, only the selected ones): a vertical drag changes the value,
//! a horizontal one moves the key in time (snapped); CUBICSPLINE keys of translations and scales
//! show tangent handles that drag. F frames every curve.
//!
//! Which channels: those of the selected keys; else the keyed channels of the selected bone.
//!
//! Not here: the ruler and lanes (`super`), the edits (`crate::document::clip_ops`).

use egui::{Color32, Pos2, Rect, Sense, Stroke};
use glam::{EulerRot, Quat, Vec3};
use marrow_engine::clip::Channel;
use marrow_engine::project::file::ClipAsset;
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

/// The curve view's own state (UI state).
#[derive(Clone, Debug, PartialEq)]
pub struct CurveState {
    /// The value at the bottom edge.
    pub y_min: f32,
    /// The value at the top edge.
    pub y_max: f32,
    /// Frame every curve on the next frame.
    pub fit: bool,
    drag: Option<CurveDrag>,
}

impl Default for CurveState {
    fn default() -> Self {
        Self { y_min: -1.0, y_max: 1.0, fit: true, drag: None }
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

/// The components of a channel's value as plotted (Euler degrees for rotations).
fn components(_ch: Channel, v: KeyValue) -> [f32; 3] {
    match v {
        KeyValue::Vec3(v) => v.to_array(),
        KeyValue::Quat(q) => {
            let (x, y, z) = q.to_euler(EulerRot::XYZ);
            [x.to_degrees(), y.to_degrees(), z.to_degrees()]
        }
    }
}

fn with_component(v: KeyValue, comp: usize, value: f32) -> KeyValue {
    match v {
        KeyValue::Vec3(mut x) => {
            x[comp] = value;
            KeyValue::Vec3(x)
        }
        KeyValue::Quat(q) => {
            let (x, y, z) = q.to_euler(EulerRot::XYZ);
            let mut e = Vec3::new(x, y, z);
            e[comp] = value.to_radians();
            KeyValue::Quat(Quat::from_euler(EulerRot::XYZ, e.x, e.y, e.z).normalize())
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

/// Draws and drives the curve view in `rect`.
pub fn show(
    panel: &mut TimelinePanel,
    ui: &mut egui::Ui,
    cx: &mut Cx,
    clip: &ClipAsset,
    area: &Area,
    map: &Mapping,
    rect: Rect,
) {
    let names = Rect::from_min_max(rect.min, Pos2::new(rect.left() + NAMES_WIDTH, rect.bottom()));
    let plot = Rect::from_min_max(Pos2::new(names.right(), rect.top()), rect.max);
    let painter = ui.painter_at(rect);
    painter.rect_filled(plot, 0.0, ui.visuals().extreme_bg_color);
    let channels = shown(panel, cx, clip);
    draw_legend(ui, &painter, clip, &channels, names);
    // Frame all (F, or the first show).
    let f_pressed = ui.input(|i| i.pointer.hover_pos().is_some_and(|p| rect.contains(p)))
        && ui.ctx().input_mut(|i| i.consume_key(egui::Modifiers::NONE, egui::Key::F));
    if (panel.curve.fit || f_pressed) && !channels.is_empty() {
        frame_all(&mut panel.curve, clip, &channels);
    }
    let state = &panel.curve;
    let axis = ValueAxis { plot, y_min: state.y_min, y_max: state.y_max.max(state.y_min + 1e-4) };
    draw_value_axis(ui, &painter, &axis);
    draw_curves(&painter, clip, &channels, map, &axis);
    let targets = draw_keys(panel, &painter, clip, &channels, map, &axis);
    interact(panel, ui, cx, clip, area, map, &axis, &targets);
    let _ = KeyRef::new("", Channel::Translation, 0.0);
}

/// The legend: each shown channel's name and its components' colours.
fn draw_legend(
    ui: &egui::Ui,
    painter: &egui::Painter,
    clip: &ClipAsset,
    channels: &[(usize, Channel)],
    names: Rect,
) {
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
    for (b, ch) in channels {
        painter.text(
            Pos2::new(names.left() + 6.0, y),
            egui::Align2::LEFT_TOP,
            format!("{} {}", clip.bones[*b], ch),
            egui::FontId::proportional(12.0),
            ui.visuals().text_color(),
        );
        y += 16.0;
        let labels = if *ch == Channel::Rotation { ["X°", "Y°", "Z°"] } else { ["X", "Y", "Z"] };
        for (i, l) in labels.iter().enumerate() {
            painter.text(
                Pos2::new(names.left() + 16.0 + i as f32 * 30.0, y),
                egui::Align2::LEFT_TOP,
                *l,
                egui::FontId::proportional(11.0),
                AXIS[i],
            );
        }
        y += 16.0;
    }
}

/// Fits the value range to every shown curve (sampled at 65 points) with a margin.
fn frame_all(state: &mut CurveState, clip: &ClipAsset, channels: &[(usize, Channel)]) {
    let (mut lo, mut hi) = (f32::MAX, f32::MIN);
    let d = clip.clip.duration().max(1e-3);
    for (b, ch) in channels {
        for i in 0..=64 {
            if let Some(v) = sample(clip, *b, *ch, d * i as f32 / 64.0) {
                for c in components(*ch, v) {
                    lo = lo.min(c);
                    hi = hi.max(c);
                }
            }
        }
    }
    if lo <= hi {
        let pad = ((hi - lo) * 0.1).max(0.05);
        state.y_min = lo - pad;
        state.y_max = hi + pad;
    }
    state.fit = false;
}

/// The zero line and the range's value labels.
fn draw_value_axis(ui: &egui::Ui, painter: &egui::Painter, axis: &ValueAxis) {
    let plot = axis.plot;
    let zero = axis.y_of(0.0);
    if zero > plot.top() && zero < plot.bottom() {
        painter.line_segment(
            [Pos2::new(plot.left(), zero), Pos2::new(plot.right(), zero)],
            Stroke::new(1.0, Color32::from_gray(60)),
        );
    }
    painter.text(
        plot.left_top() + egui::vec2(4.0, 2.0),
        egui::Align2::LEFT_TOP,
        format!("{:.2}", axis.y_max),
        egui::FontId::monospace(9.0),
        ui.visuals().weak_text_color(),
    );
    painter.text(
        plot.left_bottom() + egui::vec2(4.0, -2.0),
        egui::Align2::LEFT_BOTTOM,
        format!("{:.2}", axis.y_min),
        egui::FontId::monospace(9.0),
        ui.visuals().weak_text_color(),
    );
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
/// a column.
fn draw_curves(
    painter: &egui::Painter,
    clip: &ClipAsset,
    channels: &[(usize, Channel)],
    map: &Mapping,
    axis: &ValueAxis,
) {
    let plot = axis.plot;
    let ppp = painter.pixels_per_point();
    let cols = (plot.width() * ppp).ceil().max(2.0) as usize;
    let px = 1.0 / ppp;
    for &(b, ch) in channels {
        let times = model::channel_times(clip, b, ch);
        let mut k = times.partition_point(|t| *t < map.t(plot.left()));
        let mut lines: [Vec<Pos2>; 3] = Default::default();
        for c in 0..=cols {
            let x = plot.left() + c as f32 * px;
            let Some(v) = sample(clip, b, ch, map.t(x).max(0.0)) else { continue };
            for (comp, v) in components(ch, v).into_iter().enumerate() {
                lines[comp].push(Pos2::new(x, axis.y_of(v)));
            }
            // The keys inside the column: per component the lowest and highest, in order.
            let end = map.t(x + px);
            let mut ext: [Option<Extremes>; 3] = [None; 3];
            while k < times.len() && times[k] < end {
                if let Some(v) = key_at(clip, b, ch, k) {
                    for (comp, v) in components(ch, v).into_iter().enumerate() {
                        let e = ext[comp].get_or_insert(((k, v), (k, v)));
                        if v < e.0.1 {
                            e.0 = (k, v);
                        }
                        if v > e.1.1 {
                            e.1 = (k, v);
                        }
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

/// Draws the visible keys and the selected keys' tangent handles; returns every visible key
/// (and handle) as a drag target. Where a channel's visible keys lie closer than
/// [`super::dope_draw::GLYPH_SPACING`] points apart on average, only its selected keys are
/// drawn, one dot per pixel column and component (the curve shows the rest).
fn draw_keys(
    panel: &TimelinePanel,
    painter: &egui::Painter,
    clip: &ClipAsset,
    channels: &[(usize, Channel)],
    map: &Mapping,
    axis: &ValueAxis,
) -> Vec<(Pos2, CurveDrag)> {
    let (t0, t1) = map.visible();
    let ppp = painter.pixels_per_point();
    let mut targets: Vec<(Pos2, CurveDrag)> = Vec::new();
    for &(b, ch) in channels {
        let times = model::channel_times(clip, b, ch);
        let (a, z) = model::visible_range(times, t0, t1);
        let tangents = vec_track(clip, b, ch).filter(|t| t.interpolation() == Interpolation::CubicSpline);
        let dense = z - a > 1
            && (map.x(times[z - 1]) - map.x(times[a])) / (z - a - 1) as f32
                <= super::dope_draw::GLYPH_SPACING;
        let mut last_col = [i64::MIN; 3];
        for (j, &t) in times.iter().enumerate().take(z).skip(a) {
            let id = KeyId::new(b, ch, t);
            let Some(v) = key_at(clip, b, ch, j) else { continue };
            let sel = panel.selection.contains(&id);
            for (k, c) in components(ch, v).into_iter().enumerate() {
                let at = Pos2::new(map.x(t), axis.y_of(c));
                targets.push((at, CurveDrag::Key { key: id, comp: k, press: at, time: None }));
                let col = (at.x * ppp).floor() as i64;
                if dense && (!sel || col == last_col[k]) {
                    continue;
                }
                last_col[k] = col;
                painter.circle(
                    at,
                    if sel { 4.5 } else { 3.5 },
                    if sel { Color32::from_rgb(255, 215, 80) } else { AXIS[k] },
                    Stroke::new(1.0, Color32::BLACK),
                );
                if let (Some(tr), true) = (tangents, sel) {
                    let h = 0.15f32;
                    for (out, slope) in [(false, tr.in_tangents()[j][k]), (true, tr.out_tangents()[j][k])] {
                        let s = if out { 1.0 } else { -1.0 };
                        let hp = Pos2::new(map.x(t + s * h), axis.y_of(c + s * slope * h));
                        painter.line_segment([at, hp], Stroke::new(1.0, Color32::GRAY));
                        painter.circle_filled(hp, 3.0, Color32::LIGHT_GRAY);
                        targets.push((hp, CurveDrag::Tangent { key: id, comp: k, out }));
                    }
                }
            }
        }
    }
    targets
}

/// The plot's pointer input: picking a key or handle, clicking a key, panning with the middle
/// button, and the drag in progress.
#[allow(clippy::too_many_arguments)]
fn interact(
    panel: &mut TimelinePanel,
    ui: &mut egui::Ui,
    cx: &mut Cx,
    clip: &ClipAsset,
    area: &Area,
    map: &Mapping,
    axis: &ValueAxis,
    targets: &[(Pos2, CurveDrag)],
) {
    let plot = axis.plot;
    let r = ui.interact(plot, ui.id().with("curve view"), Sense::click_and_drag());
    r.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Other, true, "Curve view"));
    if r.drag_started_by(egui::PointerButton::Primary)
        && let Some(p) = ui.input(|i| i.pointer.press_origin())
    {
        panel.curve.drag = targets
            .iter()
            .filter(|(at, _)| at.distance(p) <= 7.0)
            .min_by(|a, b| a.0.distance(p).total_cmp(&b.0.distance(p)))
            .map(|(_, d)| match d {
                CurveDrag::Key { key, comp, .. } => {
                    CurveDrag::Key { key: *key, comp: *comp, press: p, time: None }
                }
                other => other.clone(),
            });
        if let Some(CurveDrag::Key { key, .. }) = &panel.curve.drag {
            panel.selection.clear();
            panel.selection.insert(*key);
        }
    }
    if r.clicked()
        && let Some(p) = r.interact_pointer_pos()
        && let Some((_, CurveDrag::Key { key, .. })) = targets.iter().find(|(at, _)| at.distance(p) <= 7.0)
    {
        panel.selection.clear();
        panel.selection.insert(*key);
    }
    if r.dragged_by(egui::PointerButton::Middle) {
        panel.view = panel.view.panned(r.drag_delta().x);
        let dv = r.drag_delta().y / plot.height() * (axis.y_max - axis.y_min);
        panel.curve.y_min += dv;
        panel.curve.y_max += dv;
    }
    if let (Some(drag), Some(p)) = (panel.curve.drag.clone(), r.interact_pointer_pos()) {
        match drag {
            CurveDrag::Key { key, comp, press, time } => {
                drag_key(panel, cx, clip, area, map, axis, (key, comp, press, time), p)
            }
            CurveDrag::Tangent { key, comp, out } => {
                drag_tangent(cx, clip, area, map, axis, (key, comp, out), p)
            }
        }
    }
    if !r.dragged() {
        panel.curve.drag = None;
    }
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
    (key, comp, press, time): (KeyId, usize, Pos2, Option<bool>),
    p: Pos2,
) {
    let fps = clip.clip.frame_rate;
    let time = time.or_else(|| {
        let d = p - press;
        (d.length() > 4.0).then_some(d.x.abs() > d.y.abs())
    });
    if let Some(moves_time) = time {
        panel.curve.drag = Some(CurveDrag::Key { key, comp, press, time: Some(moves_time) });
        if let Some(kref) = key.to_ref(clip) {
            if moves_time {
                let delta = super::move_delta(map.t(p.x) - map.t(press.x), Some(fps), key.t());
                cx.edit(Op::Clip {
                    path: area.path.clone(),
                    op: ClipOp::MoveKeys { keys: vec![kref], delta },
                });
                panel.selection.clear();
                panel.selection.insert(KeyId::new(key.bone as usize, key.channel, key.t() + delta));
            } else if let Some(v) = super::key_value(clip, key) {
                let value = with_component(v, comp, axis.v_of(p.y));
                cx.edit(Op::Clip { path: area.path.clone(), op: ClipOp::SetKeyValue { key: kref, value } });
            }
        }
    }
}

/// A tangent handle's drag to `p`: the slope from the key to the pointer.
fn drag_tangent(
    cx: &mut Cx,
    clip: &ClipAsset,
    area: &Area,
    map: &Mapping,
    axis: &ValueAxis,
    (key, comp, out): (KeyId, usize, bool),
    p: Pos2,
) {
    if let (Some(tr), Some(kref)) = (vec_track(clip, key.bone as usize, key.channel), key.to_ref(clip))
        && let Some(j) = tr.times().iter().position(|t| (*t - key.t()).abs() < 1e-6)
    {
        let c = tr.values()[j][comp];
        let dt = (map.t(p.x) - key.t()).abs().max(1e-3);
        let s = if out { 1.0 } else { -1.0 };
        let slope = (axis.v_of(p.y) - c) / dt * s;
        let mut tin = tr.in_tangents()[j];
        let mut tout = tr.out_tangents()[j];
        if out {
            tout[comp] = slope;
        } else {
            tin[comp] = slope;
        }
        cx.edit(Op::Clip {
            path: area.path.clone(),
            op: ClipOp::SetTangents {
                key: kref,
                tangent_in: KeyValue::Vec3(tin),
                tangent_out: KeyValue::Vec3(tout),
            },
        });
    }
}
