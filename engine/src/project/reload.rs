//! Live assets: which files of a project folder count as assets ([`asset_kind`]), reading one
//! changed file fresh into its authored value ([`read_asset_file`], [`Project::reload_file`]),
//! and (feature `watch`) the `AssetWatcher` that reports the files changed outside Marrow.
//!
//! A game embedding the engine reloads a clip in place with three calls: the watcher names the
//! changed path, [`Project::reload_file`] reads it, [`super::Library::replace_clips`] and
//! [`crate::scene::World::rebind_clips`] give it to the heads playing it at the same time (no
//! frame of bind pose between). A graph file goes the same way through
//! [`super::Library::replace_graphs`] and [`crate::scene::World::rebind_graphs`] (recompiled, at
//! the same time, its parameters kept), a skeleton file through
//! [`super::Library::replace_skeletons`] and [`crate::scene::World::rebind_skeletons`] (a new bind
//! pose in place; bones renamed, reordered or reparented are refused); a scene file changes what
//! the world is made of, so the world is instantiated again. The editor goes through its document instead, so a
//! reload is an undo step. Not here: deciding what a reload rebuilds (the caller's), or applying a
//! change that does not parse (it is an error; the last good version stays where it is).

use std::path::Path;
use std::sync::Arc;

use super::file::{ClipAsset, Manifest, ProjectFile};
use super::{Project, ProjectError, fs, parse_file};
use crate::graph::AnimGraph;
use crate::retarget::RetargetMap;
use crate::scene::SceneDesc;
use crate::skeleton::Skeleton;

/// What kind of asset a project file is, by its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum AssetKind {
    /// `project.ron`.
    Manifest,
    /// A `.scene.ron` file.
    Scene,
    /// A `.clip.ron` file.
    Clip,
    /// A `.skeleton.ron` file.
    Skeleton,
    /// A `.graph.ron` file.
    Graph,
    /// A `.retarget.ron` file.
    Retarget,
    /// A model or its data (`.gltf`, `.glb`, `.bin`, `.bvh`, `.fbx`, and the images a glTF file
    /// names: `.png`, `.jpg`, `.jpeg`, `.ktx2`): what the library imports.
    Model,
}

/// The kind of asset at `path` (relative to the project folder, `/`-separated), or `None` for a
/// file that is not one: anything in or under a hidden folder or with a hidden name (Marrow's
/// own temporary files, save journal and recovery file among them), and other extensions.
pub fn asset_kind(path: &str) -> Option<AssetKind> {
    if path.split('/').any(|c| c.starts_with('.') || c.is_empty()) {
        return None;
    }
    let name = path.rsplit('/').next()?.to_ascii_lowercase();
    if path == super::PROJECT_FILE {
        return Some(AssetKind::Manifest);
    }
    let kinds = [
        (".scene.ron", AssetKind::Scene),
        (".clip.ron", AssetKind::Clip),
        (".skeleton.ron", AssetKind::Skeleton),
        (".graph.ron", AssetKind::Graph),
        (".retarget.ron", AssetKind::Retarget),
    ];
    if let Some((_, k)) = kinds.iter().find(|(ext, _)| name.ends_with(ext)) {
        return Some(*k);
    }
    let models = [".gltf", ".glb", ".bin", ".bvh", ".fbx", ".png", ".jpg", ".jpeg", ".ktx2"];
    models.iter().any(|ext| name.ends_with(ext)).then_some(AssetKind::Model)
}

/// One authored file's value (read fresh from disk, or held by a project): the file's `Arc`,
/// shared, so cloning a value copies no file. The editor's undo record keeps its files as these.
#[derive(Clone, Debug)]
pub enum AssetFile {
    /// The manifest.
    Manifest(Manifest),
    /// A scene.
    Scene(Arc<SceneDesc>),
    /// A clip with its bone list.
    Clip(Arc<ClipAsset>),
    /// A skeleton.
    Skeleton(Arc<Skeleton>),
    /// A graph.
    Graph(Arc<AnimGraph>),
    /// A retarget map.
    Retarget(Arc<RetargetMap>),
}

/// Equal values: the same `Arc` (one pointer comparison), or equal contents.
impl PartialEq for AssetFile {
    fn eq(&self, other: &Self) -> bool {
        fn same<T: PartialEq>(a: &Arc<T>, b: &Arc<T>) -> bool {
            Arc::ptr_eq(a, b) || a == b
        }
        match (self, other) {
            (AssetFile::Manifest(a), AssetFile::Manifest(b)) => a == b,
            (AssetFile::Scene(a), AssetFile::Scene(b)) => same(a, b),
            (AssetFile::Clip(a), AssetFile::Clip(b)) => same(a, b),
            (AssetFile::Skeleton(a), AssetFile::Skeleton(b)) => same(a, b),
            (AssetFile::Graph(a), AssetFile::Graph(b)) => same(a, b),
            (AssetFile::Retarget(a), AssetFile::Retarget(b)) => same(a, b),
            _ => false,
        }
    }
}

/// Reads the authored file `path` of the project in `root` (strictly: any fault is an error
/// naming the file and where in it). `Ok(None)`: the file is gone. A model file is not an
/// authored file (`Err`: the library imports it; rebuild the library instead).
pub fn read_asset_file(root: &Path, path: &str) -> Result<Option<AssetFile>, ProjectError> {
    let full = root.join(path);
    let kind = asset_kind(path).filter(|k| *k != AssetKind::Model).ok_or_else(|| {
        super::fault(
            &full,
            "not an authored file of the project (a clip, skeleton, graph, retarget, scene or project.ron)",
        )
    })?;
    let project_root = fs::ProjectRoot::open(root)?;
    if std::fs::symlink_metadata(&full).is_err() {
        return Ok(None);
    }
    let text = project_root.read_text(&full)?;
    let invalid = |error| ProjectError::Invalid { path: full.clone(), error };
    Ok(Some(match kind {
        AssetKind::Manifest => {
            let f: ProjectFile = parse_file(&text, &full)?;
            AssetFile::Manifest(Manifest::try_from(f).map_err(invalid)?)
        }
        AssetKind::Scene => AssetFile::Scene(Arc::new(super::scene_from_str(&text, &full)?)),
        AssetKind::Clip => AssetFile::Clip(Arc::new(super::clip_from_str(&text, &full)?)),
        AssetKind::Skeleton => AssetFile::Skeleton(Arc::new(super::skeleton_from_str(&text, &full)?)),
        AssetKind::Graph => {
            let (graph, faults) = super::graph_from_str_lossy(&text, &full)?;
            if let Some(first) = faults.into_iter().next() {
                return Err(first);
            }
            AssetFile::Graph(Arc::new(graph))
        }
        AssetKind::Retarget => {
            AssetFile::Retarget(Arc::new(super::retarget_file::retarget_from_str(&text, &full)?))
        }
        AssetKind::Model => unreachable!("filtered above"),
    }))
}

/// What [`Project::reload_file`] did.
#[derive(Clone, Debug, PartialEq)]
pub enum Reloaded {
    /// The file on disk holds what the project holds: nothing changed.
    Unchanged,
    /// The project took the file's new value.
    Replaced(AssetKind),
    /// The file is gone; the project keeps its value (a file still in use is never dropped
    /// because it vanished from disk).
    Missing,
}

impl Project {
    /// The value the project holds for the authored file `path`.
    pub fn asset_file(&self, path: &str) -> Option<AssetFile> {
        Some(match asset_kind(path)? {
            AssetKind::Manifest => AssetFile::Manifest(self.manifest.clone()),
            AssetKind::Scene => AssetFile::Scene(self.scenes.get(path)?.clone()),
            AssetKind::Clip => AssetFile::Clip(self.clips.get(path)?.clone()),
            AssetKind::Skeleton => AssetFile::Skeleton(self.skeletons.get(path)?.clone()),
            AssetKind::Graph => AssetFile::Graph(self.graphs.get(path)?.clone()),
            AssetKind::Retarget => AssetFile::Retarget(self.retargets.get(path)?.clone()),
            AssetKind::Model => return None,
        })
    }

    /// Puts `value` in as the authored file `path`.
    pub fn put_asset_file(&mut self, path: &str, value: AssetFile) {
        let path = path.to_owned();
        match value {
            AssetFile::Manifest(m) => self.manifest = m,
            AssetFile::Scene(s) => {
                self.scenes.insert(path, s);
            }
            AssetFile::Clip(c) => {
                self.clips.insert(path, c);
            }
            AssetFile::Skeleton(s) => {
                self.skeletons.insert(path, s);
            }
            AssetFile::Graph(g) => {
                self.graphs.insert(path, g);
            }
            AssetFile::Retarget(r) => {
                self.retargets.insert(path, r);
            }
        }
    }

    /// Reads the authored file `path` from the project folder `root` again and takes its value
    /// (see [`read_asset_file`]). A file that does not parse is an error and the project keeps
    /// the last good value.
    pub fn reload_file(&mut self, root: &Path, path: &str) -> Result<Reloaded, ProjectError> {
        match read_asset_file(root, path)? {
            None => Ok(Reloaded::Missing),
            Some(v) if self.asset_file(path).as_ref() == Some(&v) => Ok(Reloaded::Unchanged),
            Some(v) => {
                let kind = asset_kind(path).unwrap_or(AssetKind::Model);
                self.put_asset_file(path, v);
                Ok(Reloaded::Replaced(kind))
            }
        }
    }
}

#[cfg(feature = "watch")]
pub use watcher::AssetWatcher;

#[cfg(feature = "watch")]
mod watcher {
    use std::path::{Path, PathBuf};
    use std::sync::Mutex;
    use std::sync::mpsc::{Receiver, channel};
    use std::time::{Duration, Instant};

    use super::asset_kind;
    use crate::project::ProjectError;

    type Events = Receiver<notify_debouncer_mini::DebounceEventResult>;

    /// Passes the debouncer's events on and wakes the host.
    struct Waking<F> {
        tx: std::sync::mpsc::Sender<notify_debouncer_mini::DebounceEventResult>,
        wake: F,
    }

    impl<F: Fn() + Send + 'static> notify_debouncer_mini::DebounceEventHandler for Waking<F> {
        fn handle_event(&mut self, event: notify_debouncer_mini::DebounceEventResult) {
            if self.tx.send(event).is_ok() {
                (self.wake)();
            }
        }
    }

    /// Watches a project folder (recursively, debounced) and reports the asset files changed in
    /// it ([`asset_kind`]), created, rewritten or removed, by path relative to the folder. When
    /// nothing changed, [`AssetWatcher::changed`] is one empty channel poll (no allocation, no
    /// system call): it can run every frame.
    pub struct AssetWatcher {
        root: PathBuf,
        _debouncer: notify_debouncer_mini::Debouncer<notify::RecommendedWatcher>,
        events: Mutex<Events>,
    }

    impl std::fmt::Debug for AssetWatcher {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("AssetWatcher").field("root", &self.root).finish_non_exhaustive()
        }
    }

    impl AssetWatcher {
        /// Starts watching the project folder `root`, reporting a burst of writes to one file
        /// once after `debounce` of quiet.
        pub fn new(root: &Path, debounce: Duration) -> Result<Self, ProjectError> {
            Self::with_wake(root, debounce, || {})
        }

        /// As [`AssetWatcher::new`], calling `wake` (on the watcher's thread) whenever changes
        /// are ready to be taken, so a host that sleeps until something happens (an editor
        /// waiting for input) can wake up and call [`AssetWatcher::changed`].
        pub fn with_wake(
            root: &Path,
            debounce: Duration,
            wake: impl Fn() + Send + 'static,
        ) -> Result<Self, ProjectError> {
            let root = std::fs::canonicalize(root)
                .map_err(|e| ProjectError::Io { path: root.to_owned(), message: e.to_string() })?;
            let fault = |e: notify::Error| ProjectError::Io {
                path: root.clone(),
                message: format!("cannot watch the folder for changes: {e}"),
            };
            let (tx, events) = channel();
            let handler = Waking { tx, wake };
            let mut debouncer = notify_debouncer_mini::new_debouncer(debounce, handler).map_err(fault)?;
            debouncer.watcher().watch(&root, notify::RecursiveMode::Recursive).map_err(fault)?;
            Ok(Self { root, _debouncer: debouncer, events: Mutex::new(events) })
        }

        /// The folder watched (its real path).
        pub fn root(&self) -> &Path {
            &self.root
        }

        /// The asset files changed since the last call (relative, `/`-separated, sorted, each
        /// once). Empty, without allocating, when nothing changed.
        pub fn changed(&self) -> Vec<String> {
            let mut out = Vec::new();
            let Ok(events) = self.events.lock() else { return out };
            while let Ok(batch) = events.try_recv() {
                match batch {
                    Ok(batch) => out.extend(batch.iter().filter_map(|e| self.relative(&e.path))),
                    Err(e) => log::warn!("asset watcher on {}: {e}", self.root.display()),
                }
            }
            out.sort();
            out.dedup();
            out
        }

        /// Waits up to `timeout` for changes (tests and tools use it instead of sleeping blindly).
        pub fn wait_changed(&self, timeout: Duration) -> Vec<String> {
            let deadline = Instant::now() + timeout;
            loop {
                let changed = self.changed();
                if !changed.is_empty() || Instant::now() >= deadline {
                    return changed;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }

        /// `path` relative to the folder when it is an asset file inside it.
        fn relative(&self, path: &Path) -> Option<String> {
            let rel = path.strip_prefix(&self.root).ok()?;
            let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
            let rel = parts?.join("/");
            asset_kind(&rel).map(|_| rel)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asset_kinds_by_name_and_hidden_files_are_not_assets() {
        let table = [
            ("project.ron", Some(AssetKind::Manifest)),
            ("scenes/main.scene.ron", Some(AssetKind::Scene)),
            ("clips/Walk.CLIP.RON", Some(AssetKind::Clip)),
            ("assets/runner.skeleton.ron", Some(AssetKind::Skeleton)),
            ("graphs/a.graph.ron", Some(AssetKind::Graph)),
            ("assets/CesiumMan.glb", Some(AssetKind::Model)),
            ("assets/m/scene.bin", Some(AssetKind::Model)),
            ("assets/take.bvh", Some(AssetKind::Model)),
            ("clips/.walk.clip.ron.marrow-tmp-12-ab", None),
            (".marrow-save-journal", None),
            (".git/HEAD", None),
            ("notes.txt", None),
            ("sub/project.ron", None),
            ("clips//x.clip.ron", None),
        ];
        for (path, kind) in table {
            assert_eq!(asset_kind(path), kind, "{path}");
        }
    }
}
