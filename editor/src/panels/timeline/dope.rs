//! The dope sheet: the names column (a summary row, bones in hierarchy order with their
//! channels) and the key rows beside it. Keys are culled to the visible time range by binary
//! search and drawn by interpolation (a diamond for LINEAR, a square for STEP, a circle for
//! CUBICSPLINE; eased LINEAR keys in orange). Click, Shift+click and box selection; dragging a
//! selected key moves the selection by one delta (whole frames; Alt drags free; no key
//! re-snapped) as one undo step;
//! right-click for easing and interpolation. Rows scroll with the wheel over the names; a
//! middle drag pans time.
//!
//! Not here: the ruler and lanes (`super`), the edits (`crate::document::clip_ops`).

use egui::{Color32, Pos2, Rect, RichText, Sense, Stroke};
use marrow_engine::clip::Channel;
use marrow_engine::project::file::ClipAsset;
use marrow_engine::tangent::TangentMode;
use marrow_engine::track::Interpolation;

use super::mapping::Mapping;
use super::model::{self, KeyId, Row, RowKind};
use super::{Area, Drag, NAMES_WIDTH, ROW_HEIGHT, TimelinePanel, dope_draw, easing};
use crate::cx::Cx;
use crate::document::Op;
use crate::document::clip_ops::{ClipOp, KeyRef};
use crate::ui_state::Selection;

fn channel_name(ch: Channel) -> &'static str {
    match ch {
        Channel::Translation => "Location",
        Channel::Rotation => "Rotation",
        Channel::Scale => "Scale",
    }
}

fn channel_color(ch: Channel) -> Color32 {
    match ch {
        Channel::Translation => Color32::from_rgb(120, 170, 240),
        Channel::Rotation => Color32::from_rgb(130, 220, 140),
        Channel::Scale => Color32::from_rgb(230, 160, 120),
    }
}

/// The rows of the clip (cached by the caller's index), with the skeleton's parents for depth.
fn layout(panel: &TimelinePanel, clip: &ClipAsset, area: &Area) -> Vec<Row> {
    let parents = area.skeleton.as_ref().filter(|s| s.bone_names == clip.bones).map(|s| s.parents.as_slice());
    model::rows(clip, parents, &panel.open, panel.all_bones)
}

/// The times a row shows.
fn row_times<'a>(panel: &'a TimelinePanel, clip: &'a ClipAsset, kind: RowKind) -> &'a [f32] {
    dope_draw::row_times(&panel.index, clip, kind)
}

/// Draws and drives the dope sheet in `rect`.
pub fn show(
    panel: &mut TimelinePanel,
    ui: &mut egui::Ui,
    cx: &mut Cx,
    clip: &ClipAsset,
    area: &Area,
    map: &Mapping,
    rect: Rect,
) {
    let rows = layout(panel, clip, area);
    let names = Rect::from_min_max(rect.min, Pos2::new(rect.left() + NAMES_WIDTH, rect.bottom()));
    let keys_rect = Rect::from_min_max(Pos2::new(names.right(), rect.top()), rect.max);
    // Vertical scroll (wheel over the names).
    let content = rows.len() as f32 * ROW_HEIGHT;
    let max_scroll = (content - rect.height()).max(0.0);
    if let Some(p) = ui.input(|i| i.pointer.hover_pos()).filter(|p| names.contains(*p)) {
        let _ = p;
        panel.scroll -= ui.input(|i| i.smooth_scroll_delta.y);
    }
    panel.scroll = panel.scroll.clamp(0.0, max_scroll);
    let first = (panel.scroll / ROW_HEIGHT).floor() as usize;
    let visible = (rect.height() / ROW_HEIGHT).ceil() as usize + 1;
    let y_of = |i: usize| rect.top() + i as f32 * ROW_HEIGHT - panel.scroll;
    let (t0, t1) = map.visible();
    let painter = ui.painter_at(rect);
    let kp = ui.painter_at(keys_rect);
    let selected_bone = match &cx.ui.selection {
        Selection::Bone { rig, bone } if Some(rig) == area.rig.as_ref() => {
            clip.bones.iter().position(|b| b == bone)
        }
        _ => None,
    };
    // Frame grid in the key area.
    let fps = clip.clip.frame_rate;
    let (step, every) = map.frame_ticks(fps);
    let mut f = ((t0 * fps) / (step * every) as f32).floor() as i64 * (step * every) as i64;
    while (f as f32) / fps <= t1 {
        let x = map.x(f as f32 / fps);
        kp.line_segment(
            [Pos2::new(x, rect.top()), Pos2::new(x, rect.bottom())],
            Stroke::new(1.0, ui.visuals().faint_bg_color),
        );
        f += (step * every) as i64;
    }
    let d = clip.clip.duration();
    let end = map.x(d);
    if end < keys_rect.right() {
        kp.rect_filled(
            Rect::from_min_max(Pos2::new(end, rect.top()), keys_rect.max),
            0.0,
            Color32::from_black_alpha(40),
        );
    }
    for (i, row) in rows.iter().enumerate().skip(first).take(visible) {
        let y = y_of(i);
        panel.layout.rows.push((row.kind, y + ROW_HEIGHT * 0.5));
        let row_rect = Rect::from_min_size(Pos2::new(rect.left(), y), egui::vec2(rect.width(), ROW_HEIGHT));
        let hot = match row.kind {
            RowKind::Bone(b) | RowKind::Channel(b, _) => Some(b) == selected_bone,
            RowKind::Summary => false,
        };
        let bg = if hot {
            ui.visuals().selection.bg_fill.gamma_multiply(0.5)
        } else if i % 2 == 0 {
            ui.visuals().faint_bg_color
        } else {
            Color32::TRANSPARENT
        };
        painter.rect_filled(row_rect, 0.0, bg);
        // The name cell.
        let name_rect = Rect::from_min_size(row_rect.min, egui::vec2(NAMES_WIDTH, ROW_HEIGHT));
        let x = name_rect.left() + 6.0 + row.depth as f32 * 10.0;
        let (label, color) = match row.kind {
            RowKind::Summary => ("Summary".to_owned(), ui.visuals().strong_text_color()),
            RowKind::Bone(b) => {
                let arrow = if panel.open.contains(&b) { "⏷" } else { "⏵" };
                (format!("{arrow} {}", clip.bones[b]), ui.visuals().text_color())
            }
            RowKind::Channel(_, ch) => (channel_name(ch).to_owned(), channel_color(ch)),
        };
        let name_id = ui.id().with(("dope name", i, row.kind_key()));
        let nr = ui.interact(name_rect, name_id, Sense::click());
        let label_for_info = label.clone();
        nr.widget_info(|| {
            egui::WidgetInfo::selected(egui::WidgetType::SelectableLabel, true, hot, &label_for_info)
        });
        painter.text(
            Pos2::new(x, row_rect.center().y),
            egui::Align2::LEFT_CENTER,
            &label,
            egui::FontId::proportional(12.5),
            color,
        );
        if nr.clicked() {
            match row.kind {
                RowKind::Bone(b) => {
                    let on_arrow = nr.interact_pointer_pos().is_some_and(|p| p.x < x + 12.0);
                    if (on_arrow || nr.double_clicked()) && !panel.open.remove(&b) {
                        panel.open.insert(b);
                    }
                    if let Some(r) = &area.rig {
                        cx.ui.selection = Selection::Bone { rig: r.clone(), bone: clip.bones[b].clone() };
                    }
                }
                RowKind::Channel(b, _) => {
                    if let Some(r) = &area.rig {
                        cx.ui.selection = Selection::Bone { rig: r.clone(), bone: clip.bones[b].clone() };
                    }
                }
                RowKind::Summary => {}
            }
        }
        if let RowKind::Channel(b, ch) = row.kind {
            nr.context_menu(|ui| interpolation_menu(ui, cx, area, clip, b, ch));
        }
    }
    // The keys of the visible rows (built once per revision, view and selection).
    let frame = dope_draw::Frame {
        clip,
        path: &area.path,
        revision: cx.doc.revision(),
        index: &panel.index,
        selection: &panel.selection,
        rows: &panel.layout.rows,
        map,
        rect: keys_rect,
    };
    dope_draw::draw(&mut panel.key_marks, &kp, &frame);
    painter.line_segment(
        [Pos2::new(names.right(), rect.top()), Pos2::new(names.right(), rect.bottom())],
        Stroke::new(1.0, ui.visuals().widgets.noninteractive.bg_stroke.color),
    );
    interact(panel, ui, cx, clip, area, map, keys_rect, &rows, first, visible);
}

impl Row {
    fn kind_key(&self) -> (u8, usize, u8) {
        match self.kind {
            RowKind::Summary => (0, 0, 0),
            RowKind::Bone(b) => (1, b, 0),
            RowKind::Channel(b, ch) => (2, b, ch as u8),
        }
    }
}

fn interpolation_menu(ui: &mut egui::Ui, cx: &mut Cx, area: &Area, clip: &ClipAsset, b: usize, ch: Channel) {
    ui.label(RichText::new(format!("{} {}", clip.bones[b], channel_name(ch))).strong());
    for (name, interp) in [
        ("Step", Interpolation::Step),
        ("Linear", Interpolation::Linear),
        ("Cubic", Interpolation::CubicSpline),
    ] {
        if ui.button(name).clicked() {
            cx.edit(Op::Clip {
                path: area.path.clone(),
                op: ClipOp::SetInterpolation {
                    bone: clip.bones[b].clone(),
                    channel: ch,
                    interpolation: interp,
                },
            });
            ui.close();
        }
    }
}

/// The key under `p` in the visible rows: the row and the key time (within 6 points).
fn hit(
    panel: &TimelinePanel,
    clip: &ClipAsset,
    map: &Mapping,
    rect: Rect,
    rows: &[Row],
    first: usize,
    p: Pos2,
) -> Option<(RowKind, f32)> {
    let i = first + ((p.y - rect.top() + (panel.scroll % ROW_HEIGHT)) / ROW_HEIGHT).floor() as usize;
    let row = rows.get(i)?;
    let times = row_times(panel, clip, row.kind);
    let t = map.t(p.x);
    let tol = 6.0 * map.view.seconds_per_point as f32;
    let (a, z) = model::visible_range(times, t - tol, t + tol);
    times[a..z].iter().copied().min_by(|x, y| (x - t).abs().total_cmp(&(y - t).abs())).map(|k| (row.kind, k))
}

#[allow(clippy::too_many_arguments)]
fn interact(
    panel: &mut TimelinePanel,
    ui: &mut egui::Ui,
    cx: &mut Cx,
    clip: &ClipAsset,
    area: &Area,
    map: &Mapping,
    rect: Rect,
    rows: &[Row],
    first: usize,
    visible: usize,
) {
    let r = ui.interact(rect, ui.id().with("dope keys"), Sense::click_and_drag());
    r.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Other, true, "Dope sheet keys"));
    let shift = ui.input(|i| i.modifiers.shift);
    let fps = clip.clip.frame_rate;
    if r.dragged_by(egui::PointerButton::Middle) {
        panel.view = panel.view.panned(r.drag_delta().x);
        return;
    }
    let press = ui.input(|i| i.pointer.press_origin());
    if r.clicked_by(egui::PointerButton::Primary)
        && let Some(p) = r.interact_pointer_pos()
    {
        match hit(panel, clip, map, rect, rows, first, p) {
            Some((kind, t)) => {
                let ids = model::ids_at(clip, kind, t);
                let all_in = ids.iter().all(|k| panel.selection.contains(k));
                if !shift {
                    panel.selection.clear();
                }
                for k in ids {
                    if shift && all_in {
                        panel.selection.remove(&k);
                    } else {
                        panel.selection.insert(k);
                    }
                }
                panel.marker = None;
                if let (RowKind::Bone(b) | RowKind::Channel(b, _), Some(rig)) = (kind, &area.rig) {
                    cx.ui.selection = Selection::Bone { rig: rig.clone(), bone: clip.bones[b].clone() };
                }
            }
            None if !shift => panel.selection.clear(),
            None => {}
        }
    }
    if r.drag_started_by(egui::PointerButton::Primary)
        && let Some(p) = press
    {
        panel.drag = match hit(panel, clip, map, rect, rows, first, p) {
            Some((kind, t)) => {
                let ids = model::ids_at(clip, kind, t);
                if !ids.iter().any(|k| panel.selection.contains(k)) {
                    if !shift {
                        panel.selection.clear();
                    }
                    panel.selection.extend(ids);
                }
                Some(Drag::Keys { origin: panel.selection.iter().copied().collect(), press_t: map.t(p.x) })
            }
            None => Some(Drag::Box { start: p }),
        };
    }
    let pointer = ui.input(|i| i.pointer.interact_pos());
    match (&panel.drag, pointer) {
        (Some(Drag::Keys { origin, press_t }), Some(p)) if r.dragged() || r.drag_stopped() => {
            // One delta for every key, whole frames (Alt: free); no key is re-snapped, so keys
            // between frames stay between frames.
            let alt = ui.input(|i| i.modifiers.alt);
            let earliest = origin.iter().map(KeyId::t).fold(f32::INFINITY, f32::min);
            let delta = super::move_delta(map.t(p.x) - press_t, (!alt).then_some(fps), earliest);
            let next: std::collections::BTreeSet<KeyId> =
                origin.iter().map(|k| KeyId::new(k.bone as usize, k.channel, k.t() + delta)).collect();
            if next != panel.selection || delta == 0.0 {
                // The references (a bone name each) only for a frame that sends the move.
                let keys: Vec<KeyRef> = origin.iter().filter_map(|k| k.to_ref(clip)).collect();
                cx.edit(Op::Clip { path: area.path.clone(), op: ClipOp::MoveKeys { keys, delta } });
                panel.selection = next;
            }
        }
        (Some(Drag::Box { start }), Some(p)) => {
            let start = *start;
            box_select(panel, ui, clip, map, rect, rows, first, visible, (start, p), r.drag_stopped(), shift);
        }
        _ => {}
    }
    if !r.is_pointer_button_down_on()
        && !r.drag_stopped()
        && matches!(panel.drag, Some(Drag::Keys { .. } | Drag::Box { .. }))
    {
        panel.drag = None;
    }
    if r.drag_stopped() {
        panel.drag = None;
    }
    // Right-click a key: easing for the selection, interpolation for its channels.
    if r.secondary_clicked()
        && let Some(p) = r.interact_pointer_pos()
        && let Some((kind, t)) = hit(panel, clip, map, rect, rows, first, p)
    {
        let ids = model::ids_at(clip, kind, t);
        if !ids.iter().any(|k| panel.selection.contains(k)) {
            panel.selection = ids.into_iter().collect();
        }
    }
    r.context_menu(|ui| key_menu(panel, ui, cx, clip, area));
}

/// The box selection from `start` to `p`: drawn while dragging, selecting the keys inside when
/// the drag stops.
#[allow(clippy::too_many_arguments)]
fn box_select(
    panel: &mut TimelinePanel,
    ui: &egui::Ui,
    clip: &ClipAsset,
    map: &Mapping,
    rect: Rect,
    rows: &[Row],
    first: usize,
    visible: usize,
    (start, p): (Pos2, Pos2),
    stopped: bool,
    shift: bool,
) {
    let b = Rect::from_two_pos(start, p);
    ui.painter_at(rect).rect(
        b,
        0.0,
        Color32::from_rgba_unmultiplied(120, 160, 255, 30),
        Stroke::new(1.0, Color32::from_rgb(120, 160, 255)),
        egui::StrokeKind::Inside,
    );
    if stopped {
        if !shift {
            panel.selection.clear();
        }
        let (ta, tb) = (map.t(b.left()), map.t(b.right()));
        for (i, row) in rows.iter().enumerate().skip(first).take(visible) {
            let y =
                rect.top() + (i - first) as f32 * ROW_HEIGHT - (panel.scroll % ROW_HEIGHT) + ROW_HEIGHT * 0.5;
            if y < b.top() || y > b.bottom() {
                continue;
            }
            let times = row_times(panel, clip, row.kind);
            let (a, z) = model::visible_range(times, ta, tb);
            let inside: Vec<KeyId> =
                times[a..z].iter().flat_map(|t| model::ids_at(clip, row.kind, *t)).collect();
            panel.selection.extend(inside);
        }
    }
}

/// The keys' context menu: easing for the selection, interpolation for its channels, delete.
fn key_menu(panel: &mut TimelinePanel, ui: &mut egui::Ui, cx: &mut Cx, clip: &ClipAsset, area: &Area) {
    let n = panel.selection.len();
    ui.label(
        RichText::new(if n == 1 { "1 key selected".to_owned() } else { format!("{n} keys selected") }).weak(),
    );
    if ui.add_enabled(n > 0, egui::Button::new("Easing…")).clicked() {
        let keys: Vec<KeyRef> = panel.selection.iter().filter_map(|k| k.to_ref(clip)).collect();
        let current = easing::Current::of(panel.selection.iter().filter_map(|k| model::key_ease(clip, *k)));
        let at = ui.ctx().pointer_latest_pos().unwrap_or_default();
        panel.picker = Some(easing::EasingPicker::new(keys, current, at));
        ui.close();
    }
    ui.menu_button("Interpolation", |ui| {
        let channels: std::collections::BTreeSet<(u32, Channel)> =
            panel.selection.iter().map(|k| (k.bone, k.channel)).collect();
        for (name, interp) in [
            ("Step", Interpolation::Step),
            ("Linear", Interpolation::Linear),
            ("Cubic", Interpolation::CubicSpline),
        ] {
            if ui.add_enabled(!channels.is_empty(), egui::Button::new(name)).clicked() {
                let ops: Vec<Op> = channels
                    .iter()
                    .map(|(b, ch)| Op::Clip {
                        path: area.path.clone(),
                        op: ClipOp::SetInterpolation {
                            bone: clip.bones[*b as usize].clone(),
                            channel: *ch,
                            interpolation: interp,
                        },
                    })
                    .collect();
                cx.edit(Op::Batch { label: "Set Interpolation".into(), ops });
                ui.close();
            }
        }
    });
    let modes: Vec<TangentMode> =
        panel.selection.iter().filter_map(|k| super::curves::tangent_mode_of(clip, *k)).collect();
    ui.add_enabled_ui(!modes.is_empty(), |ui| {
        ui.menu_button("Tangents", |ui| {
            for mode in TangentMode::ALL {
                let current = modes.iter().all(|m| *m == mode);
                if ui.selectable_label(current, mode.name()).clicked() {
                    let keys: Vec<KeyRef> = panel.selection.iter().filter_map(|k| k.to_ref(clip)).collect();
                    cx.edit(Op::Clip { path: area.path.clone(), op: ClipOp::SetTangentMode { keys, mode } });
                    ui.close();
                }
            }
        })
        .response
        .on_disabled_hover_text("Tangent modes belong to keys of Cubic channels");
    });
    let rotations: std::collections::BTreeSet<String> = panel
        .selection
        .iter()
        .filter(|k| k.channel == Channel::Rotation)
        .filter_map(|k| clip.bones.get(k.bone as usize).cloned())
        .collect();
    if ui.add_enabled(!rotations.is_empty(), egui::Button::new("Euler Filter")).clicked() {
        cx.edit(Op::Clip {
            path: area.path.clone(),
            op: ClipOp::EulerFilter(rotations.into_iter().collect()),
        });
        ui.close();
    }
    if ui.add_enabled(n > 0, egui::Button::new("Delete Keys")).clicked() {
        let keys: Vec<KeyRef> = panel.selection.iter().filter_map(|k| k.to_ref(clip)).collect();
        cx.edit(Op::Clip { path: area.path.clone(), op: ClipOp::DeleteKeys(keys) });
        panel.selection.clear();
        ui.close();
    }
}
