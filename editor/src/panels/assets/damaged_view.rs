//! The read-only view of a damaged file (Assets > Damaged > View Text): its text as it is on
//! disk, line numbers beside it, the line the error points at highlighted and scrolled to, and
//! the error above. Nothing here edits the file: it is fixed outside the editor (and the project
//! reopened) or removed from the project.
//!
//! Not here: which files are damaged (`crate::document::Document::damaged`), removing one
//! (`crate::panels::assets`).

use egui::{Color32, RichText};
use marrow_engine::project::DamagedFile;

/// An open view of one damaged file.
#[derive(Clone, Debug, PartialEq)]
pub struct DamagedView {
    /// The file's path in the project.
    pub path: String,
    /// Its text (bytes that are not UTF-8 shown as replacement characters).
    text: String,
    /// The error, as the Log says it.
    error: String,
    /// The 1-based line the error points at.
    line: Option<usize>,
    /// Whether the error line still needs scrolling to.
    scroll: bool,
}

impl DamagedView {
    /// A view of `file`.
    pub fn new(file: &DamagedFile) -> Self {
        let text = file.bytes.as_deref().map_or_else(
            || "(the file could not be read)".to_owned(),
            |b| String::from_utf8_lossy(b).into_owned(),
        );
        Self {
            path: file.path.clone(),
            text,
            error: file.error.to_string(),
            line: file.location().map(|(l, _)| l),
            scroll: true,
        }
    }

    /// The 1-based line highlighted.
    pub fn line(&self) -> Option<usize> {
        self.line
    }

    /// Draws the window; returns `false` once it is closed.
    pub fn ui(&mut self, ctx: &egui::Context) -> bool {
        let mut open = true;
        egui::Window::new(format!("Damaged file: {}", self.path))
            .id(egui::Id::new("damaged file view"))
            .open(&mut open)
            .default_size([640.0, 420.0])
            .show(ctx, |ui| {
                ui.label(RichText::new(&self.error).color(Color32::from_rgb(235, 90, 80)));
                ui.weak("Read-only: fix the file outside the editor and reopen the project, or remove it from the project.");
                ui.separator();
                egui::ScrollArea::both().auto_shrink([false, false]).show(ui, |ui| {
                    for (i, line) in self.text.lines().enumerate() {
                        let n = i + 1;
                        let text = RichText::new(format!("{n:>5}  {line}")).monospace();
                        let r = if Some(n) == self.line {
                            ui.label(text.background_color(Color32::from_rgb(110, 30, 30)).color(Color32::WHITE))
                        } else {
                            ui.label(text)
                        };
                        if self.scroll && Some(n) == self.line {
                            r.scroll_to_me(Some(egui::Align::Center));
                            self.scroll = false;
                        }
                    }
                });
            });
        open
    }
}
