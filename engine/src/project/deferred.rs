//! Opening a motion library without waiting for all of it: when a project's clip files are
//! large (hundreds of clips of tens of thousands of keys are hundreds of megabytes of RON), the
//! clips no scene or graph plays are left out of the first load and parsed on background threads
//! ([`DeferredClips`]), arriving one by one while the project is already open and playing.
//!
//! Every clip a scene or a graph names ([`super::clips_in_use`]) loads before the project opens,
//! so what is shown never waits; a deferred clip file that turns out damaged or repaired comes
//! back with its fault, as it would from a whole load. Small projects load whole.
//!
//! Not here: where the arriving clips go (the editor's document inserts them as part of the
//! opened state, never as an undo step), saving (a document finishes loading first).

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, channel};

use super::damaged::{DamagedFile, sort_faults};
use super::{
    ClipLoad, PROJECT_FILE, Project, ProjectError, clips_in_use, finish_interrupted_save, fs, in_parallel,
    load_clip_with, load_lenient_deferring, project_root,
};

/// Clip files being loaded in the background, in the manifest's order on every core.
#[derive(Debug)]
pub struct DeferredClips {
    root: PathBuf,
    paths: Vec<String>,
    received: Vec<bool>,
    rx: Receiver<(usize, ClipLoad)>,
}

impl DeferredClips {
    /// Starts loading the clip files at `paths` (relative to `root`) on a background thread.
    pub fn spawn(root: &Path, paths: Vec<String>) -> Self {
        let (tx, rx) = channel();
        let (thread_root, thread_paths) = (root.to_owned(), paths.clone());
        let spawned = std::thread::Builder::new().name("marrow clip loader".into()).spawn(move || {
            let reader = fs::ProjectRoot::open(&thread_root);
            let indices: Vec<usize> = (0..thread_paths.len()).collect();
            let closed = std::sync::atomic::AtomicBool::new(false);
            in_parallel(&indices, |&i| {
                // The receiver gone (the document closed) ends the work that is left.
                if closed.load(std::sync::atomic::Ordering::Relaxed) {
                    return;
                }
                let loaded = match &reader {
                    Ok(r) => load_clip_with(&thread_root, &thread_paths[i], &|p: &Path| r.read_text(p)),
                    Err(e) => Err(e.clone()),
                };
                if tx.send((i, loaded)).is_err() {
                    closed.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            });
        });
        if let Err(e) = spawned {
            log::error!("the clip loader could not start: {e}");
        }
        Self { root: root.to_owned(), received: vec![false; paths.len()], paths, rx }
    }

    /// How many clip files are deferred in all.
    pub fn total(&self) -> usize {
        self.paths.len()
    }

    /// How many have arrived.
    pub fn arrived(&self) -> usize {
        self.received.iter().filter(|r| **r).count()
    }

    /// Whether `path` is deferred and has not arrived yet.
    pub fn is_pending(&self, path: &str) -> bool {
        self.paths.iter().zip(&self.received).any(|(p, r)| p == path && !r)
    }

    /// The next clip that has arrived (`None`: none yet, or all are in).
    pub fn try_next(&mut self) -> Option<(String, ClipLoad)> {
        let (i, loaded) = self.rx.try_recv().ok()?;
        self.received[i] = true;
        Some((self.paths[i].clone(), loaded))
    }

    /// Waits for the next clip (`None`: all are in). A loader that stopped short (it cannot:
    /// every failure is a [`ProjectError`]) leaves the clips it did not send as unreadable.
    pub fn next_blocking(&mut self) -> Option<(String, ClipLoad)> {
        match self.rx.recv() {
            Ok((i, loaded)) => {
                self.received[i] = true;
                Some((self.paths[i].clone(), loaded))
            }
            Err(_) => {
                let i = self.received.iter().position(|r| !r)?;
                self.received[i] = true;
                let full = self.root.join(&self.paths[i]);
                let e = ProjectError::Io { path: full, message: "the background load stopped".into() };
                Some((self.paths[i].clone(), Err(e)))
            }
        }
    }

    /// A clip file that did not load, kept as a damaged file with its bytes (read through the
    /// project's safe reader), as a whole load keeps it.
    pub fn damaged(&self, path: &str, error: ProjectError) -> DamagedFile {
        let bytes = fs::ProjectRoot::open(&self.root).and_then(|r| r.read(&self.root.join(path))).ok();
        DamagedFile { path: path.to_owned(), error, bytes }
    }
}

/// What [`Project::load_with_damaged_deferring`] gives: the project as far as it is loaded, the
/// faults repaired, the damaged files, and the clips still loading (none for a small project).
pub type DeferredOpen = (Project, Vec<ProjectError>, Vec<DamagedFile>, Option<DeferredClips>);

impl Project {
    /// [`Project::load_with_damaged`], except that when the project's clip files add up to more
    /// than `defer_above` bytes, the clips no scene or graph names are left to load in the
    /// background ([`DeferredClips`]); the manifest still lists them.
    pub fn load_with_damaged_deferring(path: &Path, defer_above: u64) -> Result<DeferredOpen, ProjectError> {
        let root = project_root(path);
        let recovery = finish_interrupted_save(&root)?;
        for line in &recovery.done {
            log::info!("{line}");
        }
        for line in &recovery.refused {
            log::warn!("{line}");
        }
        let reader = fs::ProjectRoot::open(&root)?;
        let manifest_path = if path.is_dir() { path.join(PROJECT_FILE) } else { path.to_owned() };
        let defer = |p: &Project| {
            let bytes: u64 = p
                .manifest
                .clips
                .iter()
                .filter_map(|c| reader.regular_file(&root.join(c)).ok())
                .filter_map(|f| std::fs::metadata(f).ok())
                .map(|m| m.len())
                .sum();
            if bytes <= defer_above {
                return Default::default();
            }
            let used = clips_in_use(p);
            p.manifest.clips.iter().filter(|c| !used.contains(*c)).cloned().collect()
        };
        let (project, errors, deferred) =
            load_lenient_deferring(&root, &manifest_path, &|p: &Path| reader.read_text(p), &defer);
        let (repaired, damaged) = sort_faults(&root, &project, errors)?;
        let pending = (!deferred.is_empty()).then(|| DeferredClips::spawn(&root, deferred));
        Ok((project, repaired, damaged, pending))
    }
}
