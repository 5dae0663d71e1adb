//! Files changed outside the editor, taken into the document ([`Document::reload_file`]): the
//! document stays the source of truth, so a file with no unsaved edits is replaced as an undo
//! step ("Reloaded FILE from disk"), a file with unsaved edits is a conflict the user settles,
//! a file that does not parse leaves the last good version in place, and a deleted file the
//! project uses is reported, never dropped.
//!
//! Not here: watching the folder (the app's `AssetWatcher`), rebuilding what depends on the file
//! (the session follows the revision), models and their data (the session re-imports them).

use marrow_engine::project::reload::{AssetFile, AssetKind, asset_kind, read_asset_file};
use marrow_engine::project::{Project, ProjectError};

use super::slot::{Slot, Value};
use super::{Document, Op};

/// What [`Document::reload_file`] found.
#[derive(Clone, Debug, PartialEq)]
pub enum ReloadOutcome {
    /// The file holds what the document holds (the editor's own save, or a touch).
    Unchanged,
    /// The document took the file as an undo step.
    Reloaded,
    /// The file changed and the document has unsaved edits to it: the user decides (keep the
    /// document's, or take the file's with [`Document::take_reload`]).
    Conflict {
        /// The file's value on disk.
        theirs: Value,
    },
    /// The file does not parse: the document keeps the last good version.
    Broken(ProjectError),
    /// The file is gone; the document keeps its value (`in_use`: the project lists it).
    Missing {
        /// Whether the project lists the file.
        in_use: bool,
    },
    /// The file is not one of the project's (not listed in its manifest), a model (the session
    /// re-imports those), or the manifest itself (its lists of files change what the project
    /// is: reopen to take them; other manifest changes are taken).
    NotTaken(&'static str),
}

/// Whether the manifest lists `path` as a file of its kind.
fn listed(p: &Project, path: &str, kind: AssetKind) -> bool {
    let m = &p.manifest;
    match kind {
        AssetKind::Manifest => true,
        AssetKind::Scene => m.scenes.iter().any(|s| s == path),
        AssetKind::Clip => m.clips.iter().any(|s| s == path),
        AssetKind::Skeleton | AssetKind::Retarget => m.assets.iter().any(|s| s == path),
        AssetKind::Graph => m.graphs.iter().any(|s| s == path),
        AssetKind::Model => m.assets.iter().any(|s| s == path),
    }
}

impl Document {
    /// Takes the authored file `path` (relative to the project folder) as it now is on disk;
    /// see [`ReloadOutcome`] for what can happen. Nothing is written.
    pub fn reload_file(&mut self, path: &str) -> ReloadOutcome {
        let Some(root) = self.root.clone() else {
            return ReloadOutcome::NotTaken("the project has no folder");
        };
        if let Err(why) = self.takes(path) {
            return ReloadOutcome::NotTaken(why);
        }
        let read = read_asset_file(&root, path);
        self.take_read_file(path, read)
    }

    /// Whether [`Document::reload_file`] would read `path` (`Err`: why not).
    pub fn takes(&self, path: &str) -> Result<(), &'static str> {
        let Some(kind) = asset_kind(path) else { return Err("not a project file") };
        if kind == AssetKind::Model {
            return Err("a model (re-imported by the session)");
        }
        if !listed(&self.project, path, kind) || self.is_loading(path) {
            return Err("not listed in project.ron");
        }
        Ok(())
    }

    /// The second half of [`Document::reload_file`], for a file read elsewhere (off the main
    /// thread, with `marrow_engine::project::reload::read_asset_file`): takes what was read.
    pub fn take_read_file(
        &mut self,
        path: &str,
        read: Result<Option<AssetFile>, ProjectError>,
    ) -> ReloadOutcome {
        if let Err(why) = self.takes(path) {
            return ReloadOutcome::NotTaken(why);
        }
        let file = match read {
            Ok(Some(f)) => f,
            Ok(None) => return ReloadOutcome::Missing { in_use: true },
            Err(e) => return ReloadOutcome::Broken(e),
        };
        // `takes` checked the path is an authored file's.
        let Some(slot) = Slot::of_asset(path) else { return ReloadOutcome::NotTaken("not a project file") };
        let theirs = file;
        let mine = slot.get(&self.project);
        if mine.as_ref() == Some(&theirs) {
            // What the document holds is on disk now (an own save, or the same edit made there).
            slot.set(&mut self.saved, Some(theirs));
            return ReloadOutcome::Unchanged;
        }
        if slot.get(&self.saved).as_ref() == Some(&theirs) {
            // The disk still holds what was last opened or saved: the file was only opened by
            // another program (a reader, a backup, `git diff`: the watcher reports opens too).
            // Nothing to take; the unsaved edits stay, and nothing is asked.
            return ReloadOutcome::Unchanged;
        }
        if let Value::Manifest(m) = &theirs {
            let now = &self.project.manifest;
            if (&m.scenes, &m.assets, &m.clips, &m.graphs)
                != (&now.scenes, &now.assets, &now.clips, &now.graphs)
            {
                return ReloadOutcome::NotTaken(
                    "project.ron lists other files now: reopen the project to take it",
                );
            }
        }
        if mine != slot.get(&self.saved) {
            return ReloadOutcome::Conflict { theirs };
        }
        self.take_reload(slot, theirs);
        ReloadOutcome::Reloaded
    }

    /// Takes `value` for `slot` as read from disk: an undo step "Reloaded FILE from disk"; the
    /// file counts as saved (disk holds it), so a document that had no other unsaved edits stays
    /// clean.
    pub fn take_reload(&mut self, slot: Slot, value: Value) {
        let clean = !self.is_dirty();
        let op = Op::Reload { slot: slot.clone(), value: value.clone() };
        // A reload is never merged into a gesture's step (its own gesture number).
        match self.apply(&op, u64::MAX) {
            Ok(true) => {}
            Ok(false) => return,
            Err(e) => {
                log::warn!("reloading {}: {e}", slot.path());
                return;
            }
        }
        slot.set(&mut self.saved, Some(value));
        if clean {
            self.record.set_saved();
        }
    }
}
