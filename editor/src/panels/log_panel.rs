//! The Log panel: faults and warnings with a text filter and a level filter.
//!
//! Not here: where entries come from (`crate::log`, `crate::app`).

use egui::{Color32, RichText};

use crate::cx::Cx;
use crate::log::Level;

/// The Log panel.
#[derive(Debug)]
pub struct LogPanel {
    filter: String,
    min: Level,
}

impl Default for LogPanel {
    fn default() -> Self {
        Self { filter: String::new(), min: Level::Info }
    }
}

impl LogPanel {
    /// Draws the panel.
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut Cx) {
        ui.horizontal(|ui| {
            let l = ui.label("Filter");
            ui.add(egui::TextEdit::singleline(&mut self.filter).desired_width(180.0)).labelled_by(l.id);
            for level in [Level::Info, Level::Warning, Level::Error] {
                ui.radio_value(&mut self.min, level, format!("{}+", level.name()));
            }
            let n = cx.log.entries().len();
            ui.weak(if n == 1 { "1 entry".to_owned() } else { format!("{n} entries") });
        });
        ui.separator();
        let needle = self.filter.to_lowercase();
        egui::ScrollArea::vertical().auto_shrink([false, false]).stick_to_bottom(true).show(ui, |ui| {
            for e in cx.log.entries() {
                if e.level < self.min || (!needle.is_empty() && !e.text.to_lowercase().contains(&needle)) {
                    continue;
                }
                let color = match e.level {
                    Level::Error => Color32::from_rgb(235, 95, 85),
                    Level::Warning => Color32::from_rgb(230, 190, 80),
                    Level::Info => ui.visuals().text_color(),
                };
                ui.horizontal_wrapped(|ui| {
                    ui.label(RichText::new(format!("[{}]", e.source)).weak().monospace());
                    ui.label(RichText::new(&e.text).color(color));
                });
            }
        });
    }
}
