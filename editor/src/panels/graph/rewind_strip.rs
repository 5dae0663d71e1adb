//! The rewind timeline under the graph: while a graph with state machines is previewed, the
//! recorded frames (the last 30 s) as one row of coloured bars per machine (a colour per state)
//! with the state events as ticks above them. Dragging on it poses the rig as it was at that
//! frame (the session replays the recording); the canvas, the Parameters panel and the
//! viewport then show that frame. Resume from Here plays on from it, Resume from Now goes back to
//! where the rewind started. Unreal's Rewind Debugger is the anchor.
//!
//! Reads the session's recording; sends `Command::RewindTo` and `Command::Resume`. Not here:
//! recording and replaying (`crate::rewind`, the session).

use egui::{Color32, Pos2, Rect, RichText, Sense, Stroke, Vec2};

use crate::command::Command;
use crate::cx::Cx;
use crate::widgets::named;

/// Where the strip was drawn (tests drag on it).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StripReport {
    /// The bars' rectangle.
    pub rect: Rect,
    /// The tick at its left edge and at its right edge.
    pub ticks: (u64, u64),
}

impl StripReport {
    /// The x of tick `t`.
    pub fn x(&self, t: u64) -> f32 {
        let (t0, t1) = self.ticks;
        let f = if t1 > t0 { (t.saturating_sub(t0)) as f32 / (t1 - t0) as f32 } else { 1.0 };
        self.rect.left() + f.clamp(0.0, 1.0) * self.rect.width()
    }

    /// The tick at x `x`.
    pub fn tick(&self, x: f32) -> u64 {
        let (t0, t1) = self.ticks;
        let f = ((x - self.rect.left()) / self.rect.width().max(1.0)).clamp(0.0, 1.0);
        t0 + (f * (t1 - t0) as f32).round() as u64
    }
}

/// A state's colour: evenly spread hues.
fn colour(state: u16) -> Color32 {
    let h = (state as f32 * 0.618_034).fract();
    egui::ecolor::Hsva::new(h, 0.55, 0.75, 1.0).into()
}

/// Draws the strip; returns where its bars are (`None`: nothing recorded).
pub fn ui(ui: &mut egui::Ui, cx: &mut Cx) -> Option<StripReport> {
    // The machines' state names (program order), from the previewed instance.
    let names: Vec<Vec<String>> = super::preview_instance(cx)
        .map(|g| g.machines().map(|(c, _)| c.states.iter().map(|s| s.name.to_string()).collect()).collect())
        .unwrap_or_default();
    let rec = cx.session.recording()?;
    let frames = rec.frames();
    let (first, last) = (frames.front()?, frames.back()?);
    let seconds = |ticks: u64| ticks as f32 * rec.tick_seconds();
    ui.horizontal(|ui| {
        ui.label(RichText::new("Rewind").strong());
        match &rec.rewound {
            Some(r) => {
                ui.label(format!("showing {:.2} s ago", seconds(rec.now() - r.at)));
                let here = ui.button("Resume from Here");
                if named(here, egui::WidgetType::Button, "Resume from Here").clicked() {
                    cx.send(Command::Resume { from_here: true });
                }
                let now = ui.button("Resume from Now");
                if named(now, egui::WidgetType::Button, "Resume from Now").clicked() {
                    cx.send(Command::Resume { from_here: false });
                }
            }
            None => {
                ui.weak(format!(
                    "{:.1} s recorded: drag to see an earlier moment",
                    seconds(last.end - first.start())
                ));
            }
        }
    });
    let machines = last.states.len().max(1);
    let height = 10.0 + 14.0 * machines as f32;
    let (rect, response) =
        ui.allocate_exact_size(Vec2::new(ui.available_width(), height), Sense::click_and_drag());
    let response = named(response, egui::WidgetType::Slider, "Rewind timeline");
    let report = StripReport { rect: rect.shrink2(Vec2::new(4.0, 0.0)), ticks: (first.start(), last.end) };
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 2.0, ui.visuals().extreme_bg_color);
    for m in 0..machines {
        let top = rect.top() + 10.0 + 14.0 * m as f32;
        // Consecutive frames in one state make one bar.
        let mut run: Option<(u16, u64)> = None;
        let bar = |state: u16, from: u64, to: u64| {
            let r = Rect::from_min_max(Pos2::new(report.x(from), top), Pos2::new(report.x(to), top + 11.0));
            painter.rect_filled(r, 1.0, colour(state));
            // The state's name where the bar has room for it.
            if let Some(name) = names.get(m).and_then(|n| n.get(state as usize))
                && r.width() > 8.0 * name.len() as f32
            {
                let at = r.left_center() + Vec2::new(3.0, 0.0);
                painter.text(
                    at,
                    egui::Align2::LEFT_CENTER,
                    name,
                    egui::FontId::proportional(9.5),
                    Color32::BLACK,
                );
            }
        };
        for f in frames {
            let Some(&(state, _)) = f.states.get(m) else { continue };
            match run {
                Some((s, _)) if s == state => {}
                Some((s, from)) => {
                    bar(s, from, f.start());
                    run = Some((state, f.start()));
                }
                None => run = Some((state, f.start())),
            }
        }
        if let Some((s, from)) = run {
            bar(s, from, last.end);
        }
    }
    for f in frames.iter().filter(|f| !f.events.is_empty()) {
        let x = report.x(f.end);
        painter.line_segment(
            [Pos2::new(x, rect.top() + 1.0), Pos2::new(x, rect.top() + 8.0)],
            Stroke::new(1.0, Color32::WHITE),
        );
    }
    let cursor = rec.rewound.as_ref().map_or(last.end, |r| r.at);
    let x = report.x(cursor);
    painter.line_segment(
        [Pos2::new(x, rect.top()), Pos2::new(x, rect.bottom())],
        Stroke::new(2.0, Color32::from_rgb(0xff, 0xd0, 0x60)),
    );
    if let Some(p) = response.hover_pos() {
        let t = report.tick(p.x);
        if let Some(f) = rec.frame_at(t) {
            let text: Vec<String> = f.events.iter().take(4).cloned().collect();
            response.clone().on_hover_text(format!(
                "{:.2} s ago{}{}",
                seconds(rec.now() - f.end),
                if text.is_empty() { "" } else { ": " },
                text.join(", ")
            ));
        }
    }
    if (response.dragged() || response.clicked())
        && let Some(p) = response.interact_pointer_pos()
    {
        let t = report.tick(p.x);
        let shown = rec.rewound.as_ref().map(|r| r.at);
        if rec.frame_at(t).map(|f| f.end) != shown {
            cx.send(Command::RewindTo(t));
        }
    }
    Some(report)
}
