//! Live assets in the editor: the project folder is watched ([`AssetWatcher`], debounced) while
//! a project with a folder is open; each frame takes the files changed outside the editor. An
//! authored file goes through the document ([`Document::reload_file`]: an undo step, a conflict
//! to settle, a broken file kept at its last good version, a deleted one reported); a model or
//! its data is re-imported by the session. The Log says what happened to each.
//!
//! The editor's own saves come back from the watcher too: they hold what the document holds, so
//! they are `Unchanged` and nothing is said. Not here: reading or parsing the files (the engine),
//! the undo step (the document).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::time::Duration;

use marrow_engine::project::ProjectError;
use marrow_engine::project::reload::{AssetFile, AssetKind, AssetWatcher, asset_kind, read_asset_file};

use super::{EditorApp, Modal};
use crate::document::{ReloadOutcome, Slot, Value};
use crate::log::Level;

/// How long a file must be quiet before its change is taken (an exporter writing in bursts is
/// read once, whole).
pub(crate) const DEBOUNCE: Duration = Duration::from_millis(200);

/// A changed file read on a thread of its own: its path, the read's number, what was read.
type Read = (String, u64, Result<Option<AssetFile>, ProjectError>);

/// The watcher of the open project's folder (or why there is none), and the changed files being
/// read off the main thread (each read and parsed on a thread of its own, so a big clip costs
/// the frame only its taking; a file changed again while read is taken as last read).
pub(super) struct Watch {
    /// The folder as the document names it.
    root: PathBuf,
    watcher: Option<AssetWatcher>,
    reads: (Sender<Read>, Receiver<Read>),
    /// The newest read started per file.
    latest: HashMap<String, u64>,
    next: u64,
    /// What the user chose to keep their edits over, per file: the same file content reported
    /// again (a write the watcher saw in two bursts) does not ask again.
    declined: HashMap<Slot, Value>,
}

impl EditorApp {
    /// Starts watching the document's folder when it changed, starts reading what changed in
    /// it, and takes what has been read.
    pub(super) fn poll_watcher(&mut self, ctx: &egui::Context) {
        let root = self.doc.root().map(std::path::Path::to_owned);
        if self.watch.as_ref().map(|w| &w.root) != root.as_ref() {
            self.watch = root.map(|root| {
                let waker = ctx.clone();
                let watcher = AssetWatcher::with_wake(&root, DEBOUNCE, move || waker.request_repaint())
                    .map_err(|e| {
                        let text = format!("files changed outside the editor will not reload: {e}");
                        self.log.push(Level::Warning, "file", text);
                    })
                    .ok();
                Watch {
                    root,
                    watcher,
                    reads: channel(),
                    latest: HashMap::new(),
                    next: 0,
                    declined: HashMap::new(),
                }
            });
        }
        let Some(w) = &mut self.watch else { return };
        let changed = w.watcher.as_ref().map(AssetWatcher::changed).unwrap_or_default();
        let mut models = Vec::new();
        for path in changed {
            if asset_kind(&path) == Some(AssetKind::Model) {
                models.push(path);
            } else if self.doc.takes(&path).is_ok() {
                w.next += 1;
                w.latest.insert(path.clone(), w.next);
                let (tx, root, n, waker) = (w.reads.0.clone(), w.root.clone(), w.next, ctx.clone());
                std::thread::spawn(move || {
                    let read = read_asset_file(&root, &path);
                    if tx.send((path, n, read)).is_ok() {
                        waker.request_repaint();
                    }
                });
            }
        }
        let mut done = Vec::new();
        while let Ok((path, n, read)) = w.reads.1.try_recv() {
            if w.latest.get(&path) == Some(&n) {
                w.latest.remove(&path);
                done.push((path, read));
            }
        }
        for (path, read) in done {
            self.take_changed_file(&path, read);
        }
        if !models.is_empty() && self.session.reload_models(&self.doc, &models) {
            for m in &models {
                self.log.push(Level::Info, "file", format!("reloaded {m} from disk (rig, meshes and clips)"));
            }
        }
    }

    /// Drops the reads of changed files still under way: called after an own save, since a read
    /// started before it may hold what the save replaced, and taking that would bring the
    /// replaced content back as "Reloaded FILE from disk" (an earlier save's content arriving
    /// after an undo and a later save). The save's own changes are read afresh when the watcher
    /// reports them.
    pub(super) fn forget_pending_reads(&mut self) {
        if let Some(w) = &mut self.watch {
            w.latest.clear();
        }
    }

    /// Whether changed files are still being read (the app keeps repainting until they are in).
    pub(super) fn reloads_pending(&self) -> bool {
        self.watch.as_ref().is_some_and(|w| !w.latest.is_empty())
    }

    /// Takes one authored file changed on disk, saying what became of it.
    fn take_changed_file(&mut self, path: &str, read: Result<Option<AssetFile>, ProjectError>) {
        match self.doc.take_read_file(path, read) {
            ReloadOutcome::Unchanged => {}
            ReloadOutcome::Reloaded => {
                self.log.push(
                    Level::Info,
                    "file",
                    format!("reloaded {path} from disk (Undo brings back the previous one)"),
                );
            }
            ReloadOutcome::Conflict { theirs } => {
                let Some(slot) = Slot::of_asset(path).filter(|s| s.get(self.doc.project()).is_some()) else {
                    return;
                };
                if self.watch.as_ref().and_then(|w| w.declined.get(&slot)) == Some(&theirs) {
                    return;
                }
                // One question per file: the newest content replaces what a shown or waiting
                // question holds.
                if let Some(Modal::Reload { slot: s, theirs: t }) = &mut self.modal
                    && *s == slot
                {
                    *t = theirs;
                } else if let Some(q) = self.conflicts.iter_mut().find(|(s, _)| *s == slot) {
                    q.1 = theirs;
                } else {
                    self.conflicts.push((slot, theirs));
                }
            }
            ReloadOutcome::Broken(e) => {
                let text =
                    format!("{path} changed on disk but does not load, so the last good version stays: {e}");
                self.log.push(Level::Error, "file", text);
            }
            ReloadOutcome::Missing { .. } => {
                let text = format!(
                    "{path} was deleted on disk but the project uses it: the editor keeps it (a save writes it back)"
                );
                self.log.push(Level::Warning, "file", text);
            }
            ReloadOutcome::NotTaken(why) => {
                if path == marrow_engine::project::PROJECT_FILE {
                    self.log.push(Level::Warning, "file", format!("{path} changed on disk: {why}"));
                } else {
                    log::debug!("{path} changed on disk, not taken: {why}");
                }
            }
        }
    }

    /// Shows the next conflict when no other dialog is up.
    pub(super) fn next_conflict(&mut self) {
        if self.modal.is_none() && !self.conflicts.is_empty() {
            let (slot, theirs) = self.conflicts.remove(0);
            self.modal = Some(Modal::Reload { slot, theirs });
        }
    }

    /// The conflict dialog: keep the editor's edits, take the file's, or list both in the Log
    /// (the dialog stays to choose). Returns whether it closes.
    pub(super) fn reload_modal(&mut self, ctx: &egui::Context, slot: &Slot, theirs: &Value) -> bool {
        let mut close = false;
        egui::Modal::new(egui::Id::new("reload conflict")).show(ctx, |ui| {
            ui.heading("File changed on disk");
            ui.label(format!(
                "{} changed outside the editor, and it has unsaved edits here. Which one do you keep?",
                slot.path()
            ));
            ui.horizontal(|ui| {
                if ui.button("Keep Mine").clicked() {
                    if let Some(w) = &mut self.watch {
                        w.declined.insert(slot.clone(), theirs.clone());
                    }
                    let text =
                        format!("kept the editor's {} (a save writes it over the file on disk)", slot.path());
                    self.log.push(Level::Info, "file", text);
                    close = true;
                }
                if ui.button("Take Theirs").clicked() {
                    self.doc.take_reload(slot.clone(), theirs.clone());
                    let text = format!("reloaded {} from disk (Undo brings back your edits)", slot.path());
                    self.log.push(Level::Info, "file", text);
                    close = true;
                }
                if ui.button("Show Both in Log").clicked() {
                    self.log_both(slot, theirs);
                }
            });
        });
        close
    }

    /// Lists the lines only the editor's version has and those only the file's has.
    fn log_both(&mut self, slot: &Slot, theirs: &Value) {
        let path = slot.path();
        let mine = self.doc.project().file_text(path).unwrap_or_default();
        let mut other = self.doc.project().clone();
        slot.set(&mut other, Some(theirs.clone()));
        let theirs = other.file_text(path).unwrap_or_default();
        let only = |a: &str, b: &str| -> Vec<String> {
            let b: std::collections::HashSet<&str> = b.lines().collect();
            a.lines().filter(|l| !b.contains(l)).map(|l| l.trim().to_owned()).collect()
        };
        for (who, lines) in [("in yours", only(&mine, &theirs)), ("on disk", only(&theirs, &mine))] {
            let shown: Vec<&str> = lines.iter().take(20).map(String::as_str).collect();
            let more = lines.len().saturating_sub(shown.len());
            let tail = if more > 0 { format!(" (and {more} more)") } else { String::new() };
            let text = format!("{path}, only {who} ({} line(s)): {}{tail}", lines.len(), shown.join(" | "));
            self.log.push(Level::Info, "file", text);
        }
    }
}
