//! The easing picker: the 31 named curves, each drawn small and named, and a cubic Bézier
//! editor with two draggable handles. The keys' current easing is named and its entry shown
//! selected (a Bézier opens in the editor). Choosing one sets the easing of the segments the
//! selected keys start (one undo step); "Track default" clears the per-key easing.
//!
//! Not here: how easing applies (`marrow_engine::easing`).

use egui::{Color32, Pos2, Rect, Sense, Stroke};
use marrow_engine::easing::{CubicBezier, Ease, Easing};

use crate::document::clip_ops::{ClipOp, KeyRef};

/// The easing the picked keys hold now.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Current {
    /// Every key holds this (`None`: the track's default).
    Same(Option<Ease>),
    /// The keys differ.
    Mixed,
}

impl Current {
    /// What `eases` (one per key) have in common.
    pub fn of(eases: impl IntoIterator<Item = Option<Ease>>) -> Self {
        let mut it = eases.into_iter();
        let Some(first) = it.next() else { return Self::Mixed };
        if it.all(|e| e == first) { Self::Same(first) } else { Self::Mixed }
    }

    /// The line the picker shows.
    fn text(&self) -> String {
        match self {
            Self::Same(None) => "Now: the track default".to_owned(),
            Self::Same(Some(Ease::Named(e))) => format!("Now: {}", e.name()),
            Self::Same(Some(Ease::Bezier(b))) => {
                format!("Now: cubic-bezier({:.2}, {:.2}, {:.2}, {:.2})", b.x1, b.y1, b.x2, b.y2)
            }
            Self::Mixed => "Now: mixed (the keys differ)".to_owned(),
        }
    }
}

/// The picker window's state.
#[derive(Clone, Debug)]
pub struct EasingPicker {
    /// The keys whose easing is set.
    pub keys: Vec<KeyRef>,
    /// Their easing when the picker opened.
    pub current: Current,
    /// The Bézier being edited: (x1, y1, x2, y2).
    pub bezier: [f32; 4],
    /// Where the window opens.
    pub at: Pos2,
    /// Set when the window was closed.
    pub closed: bool,
}

/// Paints `f` over `[0, 1]` into `rect` (y up), with the diagonal faint.
pub fn paint_curve(p: &egui::Painter, rect: Rect, f: impl Fn(f32) -> f32, color: Color32) {
    let inner = rect.shrink(3.0);
    let to = |x: f32, y: f32| {
        Pos2::new(
            inner.left() + x * inner.width(),
            inner.bottom() - y * inner.height() * 0.7 - inner.height() * 0.15,
        )
    };
    p.line_segment([to(0.0, 0.0), to(1.0, 1.0)], Stroke::new(1.0, Color32::from_gray(70)));
    let pts: Vec<Pos2> = (0..=32).map(|i| i as f32 / 32.0).map(|x| to(x, f(x))).collect();
    p.add(egui::Shape::line(pts, Stroke::new(1.5, color)));
}

impl EasingPicker {
    /// A picker for `keys`, whose easing is `current`, opening at `at`.
    pub fn new(keys: Vec<KeyRef>, current: Current, at: Pos2) -> Self {
        let bezier = match current {
            Current::Same(Some(Ease::Bezier(b))) => [b.x1, b.y1, b.x2, b.y2],
            _ => [0.25, 0.1, 0.25, 1.0],
        };
        Self { keys, current, bezier, at, closed: false }
    }

    /// Shows the window; returns the op when a curve was chosen.
    pub fn ui(&mut self, ctx: &egui::Context) -> Option<ClipOp> {
        let mut chosen: Option<Option<Ease>> = None;
        let mut open = true;
        egui::Window::new("Easing")
            .id(egui::Id::new("marrow easing picker"))
            .default_pos(self.at)
            .resizable(false)
            .collapsible(false)
            .open(&mut open)
            .show(ctx, |ui| {
                let n = self.keys.len();
                ui.label(format!(
                    "{n} key{}: the easing of the segment {} starts",
                    if n == 1 { "" } else { "s" },
                    if n == 1 { "it" } else { "each" }
                ));
                ui.strong(self.current.text());
                if ui.selectable_label(self.current == Current::Same(None), "Track default").clicked() {
                    chosen = Some(None);
                }
                egui::Grid::new("easing grid").spacing([4.0, 4.0]).show(ui, |ui| {
                    for (i, e) in Easing::ALL.iter().enumerate() {
                        let (rect, r) = ui.allocate_exact_size(egui::vec2(76.0, 52.0), Sense::click());
                        let name = e.name();
                        let now = self.current == Current::Same(Some(Ease::Named(*e)));
                        r.widget_info(|| {
                            egui::WidgetInfo::selected(egui::WidgetType::Button, true, now, name)
                        });
                        let fill = if now {
                            ui.visuals().selection.bg_fill
                        } else if r.hovered() {
                            ui.visuals().widgets.hovered.bg_fill
                        } else {
                            ui.visuals().widgets.inactive.bg_fill
                        };
                        ui.painter().rect_filled(rect, 3.0, fill);
                        if now {
                            let stroke = ui.visuals().selection.stroke;
                            ui.painter().rect_stroke(rect, 3.0, stroke, egui::StrokeKind::Inside);
                        }
                        let plot =
                            Rect::from_min_size(rect.min, egui::vec2(rect.width(), rect.height() - 12.0));
                        paint_curve(ui.painter(), plot, |x| e.apply(x), Color32::from_rgb(240, 170, 80));
                        let short = name.trim_start_matches("ease");
                        ui.painter().text(
                            Pos2::new(rect.center().x, rect.bottom() - 6.0),
                            egui::Align2::CENTER_CENTER,
                            short,
                            egui::FontId::proportional(9.0),
                            ui.visuals().text_color(),
                        );
                        if r.clicked() {
                            chosen = Some(Some(Ease::Named(*e)));
                        }
                        if i % 6 == 5 {
                            ui.end_row();
                        }
                    }
                });
                ui.separator();
                ui.label("Cubic Bézier: drag the handles");
                self.bezier_editor(ui);
                ui.horizontal(|ui| {
                    let [x1, y1, x2, y2] = self.bezier;
                    ui.monospace(format!("cubic-bezier({x1:.2}, {y1:.2}, {x2:.2}, {y2:.2})"));
                    if ui.button("Apply Bézier").clicked()
                        && let Ok(b) = CubicBezier::new(x1, y1, x2, y2)
                    {
                        chosen = Some(Some(Ease::Bezier(b)));
                    }
                });
            });
        if !open {
            self.closed = true;
        }
        let ease = chosen?;
        self.closed = true;
        Some(ClipOp::SetEasing { keys: self.keys.clone(), ease })
    }

    fn bezier_editor(&mut self, ui: &mut egui::Ui) {
        let (rect, _) = ui.allocate_exact_size(egui::vec2(200.0, 200.0), Sense::hover());
        let p = ui.painter_at(rect);
        p.rect_filled(rect, 3.0, ui.visuals().extreme_bg_color);
        let inner = rect.shrink(30.0);
        let to =
            |x: f32, y: f32| Pos2::new(inner.left() + x * inner.width(), inner.bottom() - y * inner.height());
        let from = |q: Pos2| ((q.x - inner.left()) / inner.width(), (inner.bottom() - q.y) / inner.height());
        let [x1, y1, x2, y2] = self.bezier;
        if let Ok(b) = CubicBezier::new(x1, y1, x2, y2) {
            let pts: Vec<Pos2> = (0..=48).map(|i| i as f32 / 48.0).map(|x| to(x, b.apply(x))).collect();
            p.add(egui::Shape::line(pts, Stroke::new(2.0, Color32::from_rgb(240, 170, 80))));
        }
        p.line_segment([to(0.0, 0.0), to(x1, y1)], Stroke::new(1.0, Color32::GRAY));
        p.line_segment([to(1.0, 1.0), to(x2, y2)], Stroke::new(1.0, Color32::GRAY));
        for (k, (hx, hy)) in [(0usize, (x1, y1)), (2, (x2, y2))] {
            let c = to(hx, hy);
            let id = ui.id().with(("bezier handle", k));
            let r = ui.interact(Rect::from_center_size(c, egui::vec2(14.0, 14.0)), id, Sense::drag());
            let label = if k == 0 { "Bézier handle 1" } else { "Bézier handle 2" };
            r.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Other, true, label));
            if r.dragged()
                && let Some(pos) = r.interact_pointer_pos()
            {
                let (x, y) = from(pos);
                self.bezier[k] = x.clamp(0.0, 1.0);
                self.bezier[k + 1] = y.clamp(-1.0, 2.0);
            }
            p.circle(
                c,
                6.0,
                if r.hovered() || r.dragged() { Color32::YELLOW } else { Color32::from_rgb(120, 170, 240) },
                Stroke::new(1.0, Color32::BLACK),
            );
        }
    }
}
