//! The editor's log: faults and warnings shown in the Log panel (import faults with their
//! location, a clip for another rig, a socket naming a missing bone, shader reload errors,
//! refused edits). Each distinct message is added once per occurrence gap: the world's faults
//! come latched from the engine, and the faults of a rebuild are added only when they were not
//! already present in the previous rebuild.
//!
//! Not here: the panel that shows it (`crate::panels::log_panel`).

use std::collections::BTreeSet;

/// How serious an entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Information.
    Info,
    /// Something looks wrong but the editor carries on.
    Warning,
    /// Something failed.
    Error,
}

impl Level {
    /// The level's name.
    pub fn name(self) -> &'static str {
        match self {
            Level::Info => "info",
            Level::Warning => "warning",
            Level::Error => "error",
        }
    }
}

/// One log line.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// Severity.
    pub level: Level,
    /// Where it comes from ("scene", "project", "edit", "shader", "file").
    pub source: &'static str,
    /// The message.
    pub text: String,
}

/// The log.
#[derive(Debug, Default)]
pub struct EditorLog {
    entries: Vec<Entry>,
    rebuild_faults: BTreeSet<String>,
}

impl EditorLog {
    /// Adds an entry (also printed through the `log` crate).
    pub fn push(&mut self, level: Level, source: &'static str, text: impl Into<String>) {
        let text = text.into();
        match level {
            Level::Error => log::error!("{source}: {text}"),
            Level::Warning => log::warn!("{source}: {text}"),
            Level::Info => log::info!("{source}: {text}"),
        }
        self.entries.push(Entry { level, source, text });
    }

    /// Takes the faults of a rebuild: adds those that were not present in the previous one.
    pub fn rebuild_faults(&mut self, faults: impl IntoIterator<Item = String>) {
        let now: BTreeSet<String> = faults.into_iter().collect();
        for f in now.difference(&self.rebuild_faults.clone()) {
            self.push(Level::Error, "project", f.clone());
        }
        self.rebuild_faults = now;
    }

    /// Every entry, oldest first.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// How many entries contain `needle`.
    pub fn count_containing(&self, needle: &str) -> usize {
        self.entries.iter().filter(|e| e.text.contains(needle)).count()
    }

    /// Empties the log.
    pub fn clear(&mut self) {
        self.entries.clear();
    }
}
