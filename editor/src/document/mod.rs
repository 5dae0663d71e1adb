//! The document: the project's authored data, a revision number, the undo record and the saved
//! mark. It is the only authored state of the editor; the session (the running world) and the
//! UI state (selection, camera, layout) are derived or separate and never saved.
//!
//! Every change goes through [`Document::apply`]: an [`Op`] computes the new values of the files
//! it touches, and the document records an [`DocEdit`] holding each file's value before and
//! after, so undo and redo restore exact values (the saved bytes after "undo all" equal the
//! originals). Consecutive ops on one target within one gesture (a drag) merge into one undo
//! step; a drag that ends where it began leaves no step. Saving never merges across: an edit
//! after a save starts a new step.
//!
//! Not here: the running world, previews, selection (see `crate::session` and `crate::ui_state`).

pub mod clip_ops;
pub mod graph_ops;
pub mod op;
pub mod reload;
pub mod retarget_ops;
pub mod slot;
pub mod tree;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use marrow_engine::project::{DamagedFile, DeferredClips, Project, ProjectError};
use undo::{Edit, Merged, Record};

pub use op::{EditError, EntityOp, Op};
pub use reload::ReloadOutcome;
pub use slot::{Change, Slot, Value};

/// One undo step: the files it changed, with their values before and after.
#[derive(Clone, Debug)]
pub struct DocEdit {
    label: String,
    target: Option<String>,
    gesture: u64,
    changes: Vec<Change>,
}

impl DocEdit {
    /// The step's name ("Rename Entity").
    pub fn label(&self) -> &str {
        &self.label
    }

    /// The files it changed.
    pub fn changes(&self) -> &[Change] {
        &self.changes
    }

    fn is_noop(&self) -> bool {
        self.changes.iter().all(|c| c.before == c.after)
    }
}

impl std::fmt::Display for DocEdit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label)
    }
}

impl Edit for DocEdit {
    type Target = Project;
    type Output = ();

    fn edit(&mut self, target: &mut Project) {
        for c in &self.changes {
            c.slot.set(target, c.after.clone());
        }
    }

    fn undo(&mut self, target: &mut Project) {
        for c in self.changes.iter().rev() {
            c.slot.set(target, c.before.clone());
        }
    }

    fn merge(&mut self, other: Self) -> Merged<Self> {
        if self.target.is_none() || self.target != other.target || self.gesture != other.gesture {
            return Merged::No(other);
        }
        self.label = other.label;
        for c in other.changes {
            match self.changes.iter_mut().find(|x| x.slot == c.slot) {
                Some(x) => x.after = c.after,
                None => self.changes.push(c),
            }
        }
        if self.is_noop() { Merged::Annul } else { Merged::Yes }
    }
}

/// The project being edited, with its history.
#[derive(Debug)]
pub struct Document {
    project: Project,
    root: Option<PathBuf>,
    record: Record<DocEdit>,
    revision: u64,
    /// Authored files (relative paths) on disk as of the last load or save: a save removes
    /// those the project no longer lists (renamed or deleted assets).
    on_disk: BTreeSet<String>,
    /// Files the manifest listed that could not be loaded, with their original bytes: left out
    /// of the project, never written over by a save, never removed by one.
    damaged: Vec<DamagedFile>,
    /// The project as of the last load or save (its files' `Arc`s, shared: no copy), to tell which
    /// files differ from disk ([`Document::unsaved_files`]).
    saved: Project,
    /// Clip files still loading in the background (a big project opened with
    /// [`Document::open_deferring`]), and what arrived that the app has not logged yet.
    loading: Option<DeferredClips>,
    arrived: Arrived,
}

/// What arrived of a project's deferred clip files ([`Document::poll_loading`]): they join the
/// opened state (never an undo step), each fault as a whole load would have reported it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Arrived {
    /// Clip files that loaded.
    pub clips: usize,
    /// Faults repaired in them (the document differs from those files: it is dirty).
    pub repaired: Vec<ProjectError>,
    /// Why a clip file did not load (it is kept as a damaged file).
    pub damaged: Vec<ProjectError>,
}

impl Arrived {
    /// Whether nothing arrived.
    pub fn is_empty(&self) -> bool {
        self.clips == 0 && self.repaired.is_empty() && self.damaged.is_empty()
    }
}

impl Default for Document {
    fn default() -> Self {
        Self::new(Project::default(), None)
    }
}

fn authored_paths(p: &Project) -> BTreeSet<String> {
    p.file_paths().into_iter().collect()
}

impl Document {
    /// A document over `project`, stored in `root` (`None`: never saved).
    pub fn new(project: Project, root: Option<PathBuf>) -> Self {
        let on_disk = if root.is_some() { authored_paths(&project) } else { BTreeSet::new() };
        let saved = project.clone();
        Self {
            project,
            root,
            record: Record::new(),
            revision: 0,
            on_disk,
            damaged: Vec::new(),
            saved,
            loading: None,
            arrived: Arrived::default(),
        }
    }

    /// Loads the project at `path` (its folder or its `project.ron`).
    pub fn open(path: &Path) -> Result<Self, ProjectError> {
        let project = Project::load(path)?;
        Ok(Self::new(project, Some(marrow_engine::project::project_root(path))))
    }

    /// Loads the project at `path`, repairing clip files with faulty keys or tracks (the sound
    /// parts are kept: see `Project::load_repairing`); returns every repaired fault. A document
    /// that was repaired differs from its files, so it opens with unsaved changes.
    ///
    /// A damaged clip, graph, skeleton or scene file (one that does not parse or convert) does
    /// not refuse the project: it opens without it and the file is kept as [`Document::damaged`]
    /// (see `Project::load_with_damaged`).
    pub fn open_repairing(path: &Path) -> Result<(Self, Vec<ProjectError>), ProjectError> {
        let (project, faults, damaged) = Project::load_with_damaged(path)?;
        let mut doc = Self::new(project, Some(marrow_engine::project::project_root(path)));
        doc.damaged = damaged;
        if !faults.is_empty() {
            doc.record.clear_saved();
        }
        Ok((doc, faults))
    }

    /// Loads the project at `path` as [`Document::open_repairing`] does, except that when its
    /// clip files add up to more than `defer_above` bytes, the clips no scene or graph plays load
    /// in the background (`Project::load_with_damaged_deferring`): the project opens as soon as
    /// what it shows is read. They join the document as they arrive ([`Document::poll_loading`]);
    /// an edit or a save first waits for the rest ([`Document::finish_loading`]), so the undo
    /// record never spans a project that was still growing.
    pub fn open_deferring(path: &Path, defer_above: u64) -> Result<(Self, Vec<ProjectError>), ProjectError> {
        let (project, faults, damaged, loading) = Project::load_with_damaged_deferring(path, defer_above)?;
        let mut doc = Self::new(project, Some(marrow_engine::project::project_root(path)));
        doc.damaged = damaged;
        doc.loading = loading;
        if !faults.is_empty() {
            doc.record.clear_saved();
        }
        Ok((doc, faults))
    }

    /// Takes the deferred clips that have arrived into the project (a new revision when any did)
    /// and returns what arrived since the last call, with what [`Document::finish_loading`]
    /// took in between. Never blocks.
    pub fn poll_loading(&mut self) -> Arrived {
        while let Some((path, loaded)) = self.loading.as_mut().and_then(DeferredClips::try_next) {
            self.take_arrival(path, loaded);
        }
        self.end_loading_when_done();
        std::mem::take(&mut self.arrived)
    }

    /// Waits until every deferred clip has arrived and takes them into the project (what arrived
    /// is reported by the next [`Document::poll_loading`]).
    pub fn finish_loading(&mut self) {
        while let Some((path, loaded)) = self.loading.as_mut().and_then(DeferredClips::next_blocking) {
            self.take_arrival(path, loaded);
        }
        self.loading = None;
    }

    /// Deferred clip files (arrived, in all) while some are still loading.
    pub fn loading(&self) -> Option<(usize, usize)> {
        self.loading.as_ref().map(|l| (l.arrived(), l.total()))
    }

    /// Whether the clip file at `path` is still loading in the background.
    pub fn is_loading(&self, path: &str) -> bool {
        self.loading.as_ref().is_some_and(|l| l.is_pending(path))
    }

    fn take_arrival(&mut self, path: String, loaded: marrow_engine::project::ClipLoad) {
        match loaded {
            Ok((clip, faults)) => {
                let clip = std::sync::Arc::new(clip);
                self.project.clips.insert(path.clone(), clip.clone());
                self.saved.clips.insert(path.clone(), clip);
                if self.root.is_some() {
                    self.on_disk.insert(path);
                }
                if !faults.is_empty() {
                    self.record.clear_saved();
                }
                self.arrived.clips += 1;
                self.arrived.repaired.extend(faults);
            }
            Err(e) => {
                if let Some(l) = &self.loading {
                    self.damaged.push(l.damaged(&path, e.clone()));
                }
                self.arrived.damaged.push(e);
            }
        }
        self.revision += 1;
    }

    fn end_loading_when_done(&mut self) {
        if self.loading.as_ref().is_some_and(|l| l.arrived() == l.total()) {
            self.loading = None;
        }
    }

    /// The damaged files the project still lists (one removed from the project, by an undoable
    /// Delete, no longer counts; its file stays on disk), in the order they were found.
    pub fn damaged(&self) -> impl Iterator<Item = &DamagedFile> {
        let m = &self.project.manifest;
        self.damaged.iter().filter(move |d| {
            [&m.clips, &m.graphs, &m.scenes, &m.assets].iter().any(|l| l.contains(&d.path))
                && !self.project.clips.contains_key(&d.path)
                && !self.project.graphs.contains_key(&d.path)
                && !self.project.scenes.contains_key(&d.path)
                && !self.project.skeletons.contains_key(&d.path)
                && !self.project.retargets.contains_key(&d.path)
        })
    }

    /// The authored project.
    pub fn project(&self) -> &Project {
        &self.project
    }

    /// The project folder (`None` until saved).
    pub fn root(&self) -> Option<&Path> {
        self.root.as_deref()
    }

    /// Bumped by every change of the project (edit, undo, redo).
    pub fn revision(&self) -> u64 {
        self.revision
    }

    /// Whether the project differs from what was last saved or loaded.
    pub fn is_dirty(&self) -> bool {
        !self.record.is_saved()
    }

    /// The undo record.
    pub fn record(&self) -> &Record<DocEdit> {
        &self.record
    }

    /// Applies `op` as a new undo step, or merges it into the previous step when both are of
    /// the same gesture on the same target. A merging op is computed from the state at the
    /// start of the gesture (the previous step's "before"), so drags state their total change
    /// (a key dragged across another and beyond leaves it in place). Returns whether the
    /// project changed.
    pub fn apply(&mut self, op: &Op, gesture: u64) -> Result<bool, EditError> {
        self.finish_loading();
        let target = op.merge_target();
        let head = self.record.head();
        let last: Option<DocEdit> = (head > 0 && head == self.record.len() && !self.record.is_saved())
            .then(|| self.record.get_entry(head - 1).map(|e| e.as_ref().clone()))
            .flatten()
            .filter(|l| target.is_some() && l.target == target && l.gesture == gesture);
        // Back to the gesture's start, compute, then forward again (the record holds the
        // previous step as applied).
        if let Some(l) = &last {
            for c in l.changes.iter().rev() {
                c.slot.set(&mut self.project, c.before.clone());
            }
        }
        let computed = op.apply_labelled(&self.project);
        let mut changes: Vec<Change> = match &computed {
            Ok((outcome, _)) => outcome
                .iter()
                .map(|(slot, after)| Change {
                    before: slot.get(&self.project),
                    slot: slot.clone(),
                    after: after.clone(),
                })
                .collect(),
            Err(_) => Vec::new(),
        };
        if let Some(l) = &last {
            for c in &l.changes {
                if !changes.iter().any(|x| x.slot == c.slot) {
                    changes.push(Change {
                        slot: c.slot.clone(),
                        before: c.before.clone(),
                        after: c.before.clone(),
                    });
                }
                c.slot.set(&mut self.project, c.after.clone());
            }
        }
        let (_, label) = computed?;
        if last.is_none() {
            changes.retain(|c| c.before != c.after);
            if changes.is_empty() {
                return Ok(false);
            }
        }
        let edit = DocEdit { label, target, gesture, changes };
        self.record.edit(&mut self.project, edit);
        self.revision += 1;
        Ok(true)
    }

    /// Undoes the last step; returns its label.
    pub fn undo(&mut self) -> Option<String> {
        let label = self.record.undo_string()?;
        self.record.undo(&mut self.project)?;
        self.revision += 1;
        Some(label)
    }

    /// Redoes the next step; returns its label.
    pub fn redo(&mut self) -> Option<String> {
        let label = self.record.redo_string()?;
        self.record.redo(&mut self.project)?;
        self.revision += 1;
        Some(label)
    }

    /// Moves the history to `index` steps applied (0: the opened state).
    pub fn go_to(&mut self, index: usize) {
        if index != self.record.head() && index <= self.record.len() {
            self.record.go_to(&mut self.project, index);
            self.revision += 1;
        }
    }

    /// The steps, oldest first.
    pub fn steps(&self) -> impl Iterator<Item = &DocEdit> {
        self.record.entries().map(|e| e.as_ref())
    }

    /// How many steps are applied.
    pub fn head(&self) -> usize {
        self.record.head()
    }

    /// The step Undo would undo.
    pub fn undo_label(&self) -> Option<String> {
        self.record.undo_string()
    }

    /// The step Redo would redo.
    pub fn redo_label(&self) -> Option<String> {
        self.record.redo_string()
    }

    /// Every authored file as (relative path, text), as a save writes them.
    pub fn files(&self) -> Vec<(String, String)> {
        self.project.to_files()
    }

    /// The manifest and every authored file that differs from the last load or save (by
    /// identity: a file an undo brought back to its saved value is not among them), as
    /// (relative path, text) as a save writes them: what a recovery file needs on top of the
    /// files on disk. Only those files are written out, so this costs what was changed.
    pub fn unsaved_files(&self) -> Vec<(String, String)> {
        let changed = self.project.changed_files(&self.saved);
        let mut paths = vec![marrow_engine::project::PROJECT_FILE.to_owned()];
        paths.extend(changed.skeletons);
        paths.extend(changed.retargets);
        paths.extend(changed.clips);
        paths.extend(changed.graphs);
        paths.extend(changed.scenes);
        paths.into_iter().filter_map(|p| Some((p.clone(), self.project.file_text(&p)?))).collect()
    }

    /// Saves into the document's folder. See [`Document::save_as`].
    pub fn save(&mut self) -> Result<(), ProjectError> {
        let root = self.root.clone().ok_or_else(|| ProjectError::Io {
            path: PathBuf::new(),
            message: "the project has no folder yet: use Save As".to_owned(),
        })?;
        self.save_as(&root)
    }

    /// Saves every authored file into `root` and removes authored files the project no longer
    /// lists (a renamed or deleted clip), as one save (all or nothing; see
    /// `marrow_engine::project::stage_save`), makes `root` the document's folder and marks the
    /// current state saved.
    pub fn save_as(&mut self, root: &Path) -> Result<(), ProjectError> {
        self.finish_loading();
        let files = self.project.to_files();
        let now: BTreeSet<String> = files.iter().map(|(p, _)| p.clone()).collect();
        let stale: Vec<String> = if self.root.as_deref() == Some(root) {
            self.on_disk.difference(&now).cloned().collect()
        } else {
            Vec::new()
        };
        // One save: every file and every removal, or (killed on the way) finished on next open.
        let mut bytes: Vec<(String, Vec<u8>)> = files.into_iter().map(|(p, t)| (p, t.into_bytes())).collect();
        // A damaged file is never written in its own folder (the project holds no value for it, so
        // `to_files` has none, and it is not among `on_disk`, so nothing removes it); a Save As elsewhere
        // copies its original bytes, so the new folder has every file its manifest lists.
        let damaged: Vec<(String, Vec<u8>)> =
            self.damaged().filter_map(|d| Some((d.path.clone(), d.bytes.clone()?))).collect();
        if self.root.as_deref() != Some(root) {
            bytes.extend(damaged);
        }
        marrow_engine::project::save_files(root, &bytes, &stale)?;
        self.saved = self.project.clone();
        self.on_disk = now;
        self.root = Some(root.to_owned());
        self.record.set_saved();
        Ok(())
    }

    /// Marks the current state as saved without writing (after a recovery file was dismissed,
    /// for instance). Tests use it too.
    pub fn mark_saved(&mut self) {
        self.saved = self.project.clone();
        self.record.set_saved();
    }
}

#[cfg(test)]
mod tests {
    use marrow_engine::math::Transform;
    use marrow_engine::scene::{EntityDesc, SceneDesc};

    use super::*;

    fn doc() -> Document {
        let mut p = Project::default();
        p.manifest.name = "t".into();
        p.manifest.scenes.push("s.scene.ron".into());
        p.scenes.insert(
            "s.scene.ron".into(),
            SceneDesc {
                name: "s".into(),
                entities: vec![EntityDesc {
                    name: "A".into(),
                    transform: Some(Transform::IDENTITY),
                    ..Default::default()
                }],
            }
            .into(),
        );
        Document::new(p, None)
    }

    fn moved(x: f32) -> Op {
        Op::Entity {
            scene: "s.scene.ron".into(),
            entity: "A".into(),
            op: EntityOp::SetTransform(Some(Transform::from_translation(glam::Vec3::X * x))),
        }
    }

    #[test]
    fn a_drag_is_one_step_and_undo_restores() {
        let mut d = doc();
        let original = d.files();
        for i in 1..=5 {
            d.apply(&moved(i as f32), 7).expect("valid");
        }
        assert_eq!(d.steps().count(), 1);
        assert!(d.is_dirty());
        d.apply(&moved(9.0), 8).expect("valid");
        assert_eq!(d.steps().count(), 2);
        assert_eq!(d.undo().as_deref(), Some("Edit Transform"));
        d.undo();
        assert_eq!(d.files(), original);
        assert!(!d.is_dirty());
    }

    #[test]
    fn a_drag_back_to_the_start_leaves_no_step() {
        let mut d = doc();
        d.apply(&moved(1.0), 3).expect("valid");
        d.apply(&moved(0.0), 3).expect("valid");
        assert_eq!(d.steps().count(), 0);
        assert!(!d.is_dirty());
    }

    #[test]
    fn refused_ops_change_nothing() {
        let mut d = doc();
        let r = d.apply(
            &Op::Entity {
                scene: "s.scene.ron".into(),
                entity: "A".into(),
                op: EntityOp::Rename("a/b".into()),
            },
            1,
        );
        assert!(matches!(r, Err(EditError::Invalid(_))));
        assert_eq!(d.revision(), 0);
        assert_eq!(d.steps().count(), 0);
    }
}

#[cfg(test)]
mod clip_tests {
    use marrow_engine::clip::Channel;
    use marrow_engine::project::Project;

    use super::clip_ops::{ClipOp, KeyRef};
    use super::*;

    fn runner() -> Document {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../projects/runner");
        Document::new(Project::load(&dir).unwrap(), None)
    }

    fn hips_times(d: &Document) -> Vec<f32> {
        let c = &d.project().clips["clips/stride.clip.ron"];
        c.clip.channels()[0].translation.as_ref().unwrap().times().to_vec()
    }

    fn drag_to(d: &mut Document, delta: f32, gesture: u64) {
        let op = Op::Clip {
            path: "clips/stride.clip.ron".into(),
            op: ClipOp::MoveKeys { keys: vec![KeyRef::new("hips", Channel::Translation, 0.25)], delta },
        };
        d.apply(&op, gesture).unwrap();
    }

    #[test]
    fn a_key_dragged_across_another_and_beyond_leaves_it_in_place() {
        let mut d = runner();
        assert_eq!(hips_times(&d), [0.0, 0.25, 0.5, 0.75, 1.0]);
        // One drag: over the key at 0.5 (replacing it while there), then on to 0.6.
        drag_to(&mut d, 0.25, 9);
        assert_eq!(hips_times(&d), [0.0, 0.5, 0.75, 1.0]);
        assert_eq!(d.undo_label().as_deref(), Some("Move Key (1 replaced)"));
        drag_to(&mut d, 0.35, 9);
        assert_eq!(hips_times(&d), [0.0, 0.5, 0.6, 0.75, 1.0], "the key at 0.5 is back");
        assert_eq!(d.undo_label().as_deref(), Some("Move Key"));
        assert_eq!(d.steps().count(), 1);
        d.undo();
        assert_eq!(hips_times(&d), [0.0, 0.25, 0.5, 0.75, 1.0]);
    }

    #[test]
    fn a_drag_that_ends_on_a_key_replaces_it_and_says_so() {
        let mut d = runner();
        drag_to(&mut d, 0.1, 4);
        drag_to(&mut d, 0.5, 4);
        assert_eq!(
            hips_times(&d),
            [0.0, 0.5, 0.75, 1.0],
            "the key from 0.25 took the place of the one at 0.75"
        );
        assert_eq!(d.undo_label().as_deref(), Some("Move Key (1 replaced)"));
    }
}
