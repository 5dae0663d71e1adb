//! The History panel: every undo step by name, the current one marked; clicking a step moves
//! the document there (undoing or redoing the steps between).
//!
//! Not here: the record itself (`crate::document`).

use egui::RichText;

use crate::command::Command;
use crate::cx::Cx;

/// The History panel.
#[derive(Debug, Default)]
pub struct HistoryPanel;

impl HistoryPanel {
    /// Draws the panel.
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut Cx) {
        let head = cx.doc.head();
        let saved = cx.doc.record().saved();
        egui::ScrollArea::vertical().auto_shrink([false, false]).show(ui, |ui| {
            let mark = |i: usize| if saved == Some(i) { "  (saved)" } else { "" };
            if ui.selectable_label(head == 0, format!("Opened{}", mark(0))).clicked() {
                cx.send(Command::GoTo(0));
            }
            for (i, step) in cx.doc.steps().enumerate() {
                let n = i + 1;
                let text = format!("{n}. {}{}", step.label(), mark(n));
                let t = if n > head { RichText::new(text).weak().italics() } else { RichText::new(text) };
                if ui.selectable_label(head == n, t).clicked() {
                    cx.send(Command::GoTo(n));
                }
            }
        });
    }
}
