//! The context a panel draws with: the document and the session to read, UI state to change,
//! and the command queue to send everything else to (rerun's viewer context and command queue).
//!
//! Not here: carrying commands out (`crate::app`), the panels themselves (`crate::panels`).

use egui_wgpu::RenderState;
use marrow_engine::scene::SceneDesc;

use crate::command::Command;
use crate::document::{Document, Op};
use crate::log::EditorLog;
use crate::session::Session;
use crate::stats::Stats;
use crate::ui_state::UiState;

/// What a panel sees: the document and session to read, UI state to change, and the command
/// queue to send edits and transport requests to.
pub struct Cx<'a> {
    /// The document (read only: change it with [`Cx::edit`]).
    pub doc: &'a Document,
    /// The running session (read only: change it with commands).
    pub session: &'a Session,
    /// UI state (selection, camera, view toggles).
    pub ui: &'a mut UiState,
    /// The log.
    pub log: &'a EditorLog,
    /// Frame statistics.
    pub stats: &'a Stats,
    /// eframe's wgpu state (none in logic-only tests).
    pub render: Option<&'a RenderState>,
    commands: &'a mut Vec<Command>,
}

impl<'a> Cx<'a> {
    /// A context over the app's parts.
    pub fn new(
        doc: &'a Document,
        session: &'a Session,
        ui: &'a mut UiState,
        log: &'a EditorLog,
        stats: &'a Stats,
        render: Option<&'a RenderState>,
        commands: &'a mut Vec<Command>,
    ) -> Self {
        Self { doc, session, ui, log, stats, render, commands }
    }

    /// Queues a command.
    pub fn send(&mut self, c: Command) {
        self.commands.push(c);
    }

    /// Queues an authored change.
    pub fn edit(&mut self, op: Op) {
        self.commands.push(Command::Edit(Box::new(op)));
    }

    /// A mark in the command queue, for [`Cx::withhold_edits_since`].
    pub fn command_mark(&self) -> usize {
        self.commands.len()
    }

    /// Drops the authored changes queued since `mark` (a read-only view: its gestures send no
    /// edit), keeping every other command; returns how many were dropped.
    pub fn withhold_edits_since(&mut self, mark: usize) -> usize {
        let before = self.commands.len();
        let mut i = 0;
        self.commands.retain(|c| {
            i += 1;
            i <= mark || !matches!(c, Command::Edit(_))
        });
        before - self.commands.len()
    }

    /// The active scene: its path and authored description.
    pub fn scene(&self) -> Option<(&'a str, &'a SceneDesc)> {
        let path = self.session.scene()?;
        let (k, d) = self.doc.project().scenes.get_key_value(path)?;
        Some((k.as_str(), d))
    }
}
