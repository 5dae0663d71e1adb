//! The Timeline's lanes above the rows, each drawn over the one time<->x [`Mapping`] of the
//! frame: the ruler (frames and seconds; press or drag to scrub, the preview range band), the
//! marker lane (M adds, drag moves, double-click renames) and the event lane (a flash for each
//! marker the playhead crosses, from the session's hits).
//!
//! Not here: the rows (`dope`, `curves`), the header (`toolbar`).

use egui::{Color32, Pos2, Rect, Sense, Stroke};
use marrow_engine::project::file::ClipAsset;
use marrow_engine::scene::Entity;

use super::mapping::Mapping;
use super::{Area, Drag, Flash, TimelinePanel};
use crate::command::Command;
use crate::cx::Cx;
use crate::document::Op;
use crate::document::clip_ops::ClipOp;
use crate::posing::snap_time;

impl TimelinePanel {
    pub(super) fn ruler(
        &mut self,
        ui: &mut egui::Ui,
        cx: &mut Cx,
        clip: &ClipAsset,
        area: &Area,
        map: &Mapping,
        rect: Rect,
    ) {
        let id = ui.id().with("timeline ruler");
        let r = ui.interact(rect, id, Sense::click_and_drag());
        r.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Slider, true, "Timeline ruler"));
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 0.0, ui.visuals().faint_bg_color);
        let fps = clip.clip.frame_rate;
        let (step, every) = map.frame_ticks(fps);
        let (t0, t1) = map.visible();
        let f0 = ((t0 * fps) / step as f32).floor() as i64 * step as i64;
        let f1 = (t1 * fps).ceil() as i64;
        let text = ui.visuals().text_color();
        let mut f = f0;
        while f <= f1 {
            let x = map.x(f as f32 / fps);
            let labelled = (f / step as i64) % every as i64 == 0;
            let h = if labelled { 10.0 } else { 5.0 };
            painter.line_segment(
                [Pos2::new(x, rect.bottom() - h), Pos2::new(x, rect.bottom())],
                Stroke::new(1.0, ui.visuals().weak_text_color()),
            );
            if labelled {
                painter.text(
                    Pos2::new(x + 3.0, rect.top() + 2.0),
                    egui::Align2::LEFT_TOP,
                    format!("{f}"),
                    egui::FontId::monospace(10.0),
                    text,
                );
                if f as f32 % fps == 0.0 {
                    painter.text(
                        Pos2::new(x + 3.0, rect.top() + 12.0),
                        egui::Align2::LEFT_TOP,
                        format!("{}s", f as f32 / fps),
                        egui::FontId::monospace(9.0),
                        ui.visuals().weak_text_color(),
                    );
                }
            }
            f += step as i64;
        }
        // The clip's extent.
        let d = clip.clip.duration();
        let span = Rect::from_min_max(
            Pos2::new(map.x(0.0), rect.bottom() - 3.0),
            Pos2::new(map.x(d), rect.bottom()),
        );
        painter.rect_filled(span, 0.0, Color32::from_rgb(90, 120, 170));
        // The preview range: a band with handles.
        let range = area.rig_entity.and_then(|e| cx.session.preview_range(e));
        if let Some((a, b)) = range {
            let band =
                Rect::from_min_max(Pos2::new(map.x(a), rect.top()), Pos2::new(map.x(b), rect.bottom()));
            painter.rect_filled(band, 0.0, Color32::from_rgba_unmultiplied(230, 170, 60, 40));
            for x in [band.left(), band.right()] {
                painter.line_segment(
                    [Pos2::new(x, rect.top()), Pos2::new(x, rect.bottom())],
                    Stroke::new(2.0, Color32::from_rgb(230, 170, 60)),
                );
            }
        }
        if r.double_clicked() {
            self.fit = true;
        }
        let rig = area.rig.clone();
        if let Some(p) = r.interact_pointer_pos() {
            // A click whose press and release share a frame (a tap, a quick click on a busy
            // frame) is never seen held: it scrubs once, where it landed.
            let pressed = r.is_pointer_button_down_on() || r.clicked();
            if r.drag_started() || (pressed && self.drag.is_none()) {
                let press = ui.input(|i| i.pointer.press_origin()).unwrap_or(p);
                let near = |x: f32| (press.x - x).abs() <= 5.0;
                self.drag = Some(match range {
                    Some((a, _)) if near(map.x(a)) => Drag::RangeStart,
                    Some((_, b)) if near(map.x(b)) => Drag::RangeEnd,
                    Some((a, b)) if ui.input(|i| i.modifiers.alt) && p.x > map.x(a) && p.x < map.x(b) => {
                        Drag::RangeMove { press_t: map.t(p.x), origin: (a, b) }
                    }
                    _ => Drag::Scrub,
                });
            }
            let t = map.t(p.x).max(0.0);
            let snap = if ui.input(|i| i.modifiers.alt) { t } else { snap_time(t, fps) };
            match (&self.drag, &rig, range) {
                (Some(Drag::Scrub), Some(rig), _) if (snap - area.time).abs() > 1e-6 || !area.live => {
                    // Scrubbing a clip the rig does not play shows it there first.
                    if !area.live {
                        super::live::show_clip(cx, rig, &area.path);
                    }
                    cx.send(Command::Seek { rig: rig.clone(), time: snap.min(d) });
                }
                (Some(Drag::RangeStart), Some(rig), Some((_, b))) => cx.send(Command::SetPreviewRange {
                    rig: rig.clone(),
                    range: Some((snap.min(b - 1.0 / fps), b)),
                }),
                (Some(Drag::RangeEnd), Some(rig), Some((a, _))) => cx.send(Command::SetPreviewRange {
                    rig: rig.clone(),
                    range: Some((a, snap.max(a + 1.0 / fps))),
                }),
                (Some(Drag::RangeMove { press_t, origin }), Some(rig), _) => {
                    let dt = snap_time(t - press_t, fps);
                    cx.send(Command::SetPreviewRange {
                        rig: rig.clone(),
                        range: Some((origin.0 + dt, origin.1 + dt)),
                    });
                }
                _ => {}
            }
        }
        if !r.is_pointer_button_down_on()
            && matches!(
                self.drag,
                Some(Drag::Scrub | Drag::RangeStart | Drag::RangeEnd | Drag::RangeMove { .. })
            )
        {
            self.drag = None;
        }
        r.context_menu(|ui| {
            let Some(rig) = rig.clone() else { return };
            let sel: Vec<f32> = self.selection.iter().map(|k| k.t()).collect();
            let (lo, hi) = sel.iter().fold((f32::MAX, f32::MIN), |(a, b), t| (a.min(*t), b.max(*t)));
            if ui.add_enabled(hi > lo, egui::Button::new("Preview Range from Selected Keys")).clicked() {
                cx.send(Command::SetPreviewRange { rig: rig.clone(), range: Some((lo, hi)) });
                ui.close();
            }
            if ui.button("Preview Range to Visible").clicked() {
                let (a, b) = map.visible();
                cx.send(Command::SetPreviewRange { rig: rig.clone(), range: Some((a.max(0.0), b.min(d))) });
                ui.close();
            }
            if ui.add_enabled(range.is_some(), egui::Button::new("Clear Preview Range")).clicked() {
                cx.send(Command::SetPreviewRange { rig, range: None });
                ui.close();
            }
            if ui.button("Fit Clip (Home)").clicked() {
                self.fit = true;
                ui.close();
            }
        });
    }

    pub(super) fn marker_lane(
        &mut self,
        ui: &mut egui::Ui,
        cx: &mut Cx,
        clip: &ClipAsset,
        area: &Area,
        map: &Mapping,
        rect: Rect,
    ) {
        let id = ui.id().with("timeline markers");
        let r = ui.interact(rect, id, Sense::click_and_drag());
        r.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Other, true, "Marker lane"));
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 0.0, ui.visuals().window_fill);
        let d = clip.clip.duration();
        let fps = clip.clip.frame_rate;
        for (i, m) in clip.clip.markers().iter().enumerate() {
            let x = map.x(m.time);
            let outside = !(m.time >= 0.0 && m.time <= d && m.time.is_finite());
            let selected = self.marker == Some(i);
            let color = if outside {
                Color32::from_rgb(235, 80, 70)
            } else if selected {
                Color32::from_rgb(255, 210, 90)
            } else {
                Color32::from_rgb(120, 200, 230)
            };
            let y = rect.center().y;
            painter.add(egui::Shape::convex_polygon(
                vec![
                    Pos2::new(x, rect.bottom() - 2.0),
                    Pos2::new(x - 5.0, y - 4.0),
                    Pos2::new(x + 5.0, y - 4.0),
                ],
                color,
                Stroke::NONE,
            ));
            painter.text(
                Pos2::new(x + 7.0, y),
                egui::Align2::LEFT_CENTER,
                &m.name,
                egui::FontId::proportional(11.0),
                color,
            );
            if outside {
                painter.text(
                    Pos2::new(x + 7.0, rect.top()),
                    egui::Align2::LEFT_TOP,
                    "outside the clip",
                    egui::FontId::proportional(9.0),
                    color,
                );
            }
        }
        let hit = |p: Pos2| {
            clip.clip
                .markers()
                .iter()
                .enumerate()
                .map(|(i, m)| (i, (map.x(m.time) - p.x).abs()))
                .filter(|(_, dx)| *dx <= 6.0)
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(i, _)| i)
        };
        if let Some(p) = r.interact_pointer_pos() {
            if r.drag_started() || r.clicked() {
                let press = ui.input(|i| i.pointer.press_origin()).unwrap_or(p);
                self.marker = hit(press);
                self.selection.clear();
                if let (Some(i), true) = (self.marker, r.drag_started()) {
                    self.drag = Some(Drag::Marker {
                        index: i,
                        press_t: map.t(press.x),
                        origin: clip.clip.markers()[i].time,
                    });
                }
            }
            if let Some(Drag::Marker { index, press_t, origin }) = self.drag {
                let raw = (origin + map.t(p.x) - press_t).max(0.0);
                let t = if ui.input(|i| i.modifiers.alt) { raw } else { snap_time(raw, fps) };
                cx.edit(Op::Clip { path: area.path.clone(), op: ClipOp::MoveMarker { index, time: t } });
            }
        }
        if r.double_clicked()
            && let Some(i) = r.hover_pos().or(r.interact_pointer_pos()).and_then(hit)
        {
            self.renaming_marker = Some((i, clip.clip.markers()[i].name.clone()));
        }
        if !r.is_pointer_button_down_on() && matches!(self.drag, Some(Drag::Marker { .. })) {
            self.drag = None;
            // The marker moved: it keeps its selection at its new place in time order.
            self.marker = None;
        }
        if let Some((i, mut name)) = self.renaming_marker.clone() {
            let Some(m) = clip.clip.markers().get(i) else {
                self.renaming_marker = None;
                return;
            };
            let at = Pos2::new(map.x(m.time) - 10.0, rect.top());
            let mut close = false;
            egui::Area::new(id.with("rename")).fixed_pos(at).order(egui::Order::Foreground).show(
                ui.ctx(),
                |ui| {
                    egui::Frame::popup(ui.style()).show(ui, |ui| {
                        let mut out = egui::TextEdit::singleline(&mut name).desired_width(120.0).show(ui);
                        let te = out.response.clone();
                        te.widget_info(|| {
                            egui::WidgetInfo::labeled(egui::WidgetType::TextEdit, true, "Marker name")
                        });
                        if !te.has_focus() && !te.lost_focus() {
                            te.request_focus();
                            out.state.cursor.set_char_range(Some(egui::text::CCursorRange::two(
                                egui::text::CCursor::new(0),
                                egui::text::CCursor::new(name.chars().count()),
                            )));
                            out.state.store(ui.ctx(), te.id);
                        }
                        if ui.input(|i| i.key_pressed(egui::Key::Escape)) {
                            close = true;
                        } else if ui.input(|i| i.key_pressed(egui::Key::Enter)) || te.lost_focus() {
                            close = true;
                            if name != m.name {
                                cx.edit(Op::Clip {
                                    path: area.path.clone(),
                                    op: ClipOp::RenameMarker { index: i, name: name.clone() },
                                });
                            }
                        }
                    });
                },
            );
            self.renaming_marker = if close { None } else { Some((i, name)) };
        }
    }

    pub(super) fn event_lane(&mut self, ui: &mut egui::Ui, clip: &ClipAsset, map: &Mapping, rect: Rect) {
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 0.0, ui.visuals().extreme_bg_color);
        let now = ui.input(|i| i.time);
        let mut animating = false;
        for e in self.events.iter().rev().take(16) {
            let age = (now - e.seen) as f32;
            let alpha = (1.0 - age / 0.6).clamp(0.0, 1.0);
            if alpha <= 0.0 {
                continue;
            }
            animating = true;
            let x = map.x(e.time);
            let c = if e.state {
                Color32::from_rgb(130, 180, 255)
            } else if e.scrub {
                Color32::from_rgb(255, 200, 80)
            } else {
                Color32::from_rgb(120, 240, 160)
            };
            let c = c.gamma_multiply(alpha);
            painter.circle_filled(Pos2::new(x, rect.center().y), 4.0 + 3.0 * alpha, c);
            painter.text(
                Pos2::new(x + 9.0, rect.center().y),
                egui::Align2::LEFT_CENTER,
                &e.name,
                egui::FontId::proportional(10.0),
                c,
            );
        }
        if animating {
            ui.ctx().request_repaint();
        }
        let _ = clip;
    }

    /// Records the marker hits of the shown rig (event lane, audio).
    pub(super) fn collect_hits(&mut self, ui: &egui::Ui, cx: &mut Cx, rig: Option<Entity>) {
        let now = ui.input(|i| i.time);
        let since = self.seen_hits.unwrap_or_else(|| cx.session.next_hit());
        let mut sounds = Vec::new();
        for (_, h) in cx.session.hits_since(since) {
            if Some(h.rig) != rig {
                continue;
            }
            self.events.push(Flash {
                marker: h.marker,
                name: h.name.clone(),
                time: h.time,
                scrub: h.scrub,
                state: h.state,
                seen: now,
            });
            if self.audio && !h.state {
                sounds.push(h.name.clone());
            }
        }
        if self.events.len() > 64 {
            let n = self.events.len() - 64;
            self.events.drain(..n);
        }
        self.seen_hits = Some(cx.session.next_hit());
        for name in sounds {
            cx.send(Command::PlaySound(name));
        }
    }
}
