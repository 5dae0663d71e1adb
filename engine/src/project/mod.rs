//! Projects on disk: `project.ron`, scene files, clip files and skeleton files, in versioned RON
//! holding authored state only; the asset [`Library`] scenes are instantiated from; and
//! [`check_project`], which names every fault of a project at once.
//!
//! A project is a folder. `project.ron` ([`file::ProjectFile`]) lists the scenes, assets, clips
//! and graphs by path relative to that folder. Loading goes through the serde mirror types in
//! [`file`](mod@file), converted with `TryFrom`; an error names the file and, for syntax errors,
//! the RON line and column, or for semantic ones the entity or field. [`Project::save`] writes every
//! authored file atomically (a temporary file in the same folder, then a rename) with one fixed
//! pretty-printer, so the same project always gives the same bytes; binary assets (`.glb`) are
//! never rewritten.
//!
//! References inside scenes are strings: a file path (`clips/stride.clip.ron`,
//! `assets/runner.skeleton.ron`) or a path and a name inside it (`assets/CesiumMan.glb#Armature`
//! for a rig, `...#animation0` for a clip, `...#Cesium_Man` for a mesh).
//!
//! Not here: session state of any kind (see [`crate::scene`] for the running world), rendering,
//! the editor's undo history or selection.

pub mod clip_file;
mod damaged;
mod deferred;
pub mod export;
pub mod file;
pub mod fs;
mod journal;
pub mod locomotion;
pub mod reload;
pub mod retarget_file;
pub mod runner;

pub use damaged::DamagedFile;
pub use deferred::{DeferredClips, DeferredOpen};
pub use fs::write_atomic;
pub use journal::{
    REFUSED_JOURNAL, SAVE_JOURNAL, SaveRecovery, StagedSave, finish_interrupted_save,
    inspect_interrupted_save, save_files, stage_save,
};

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::clip::{Clip, find_clip_fault};
use crate::gltf::{self, ImportedScene};
use crate::graph::file::{GraphFile, load_graph, pretty_config, ron_options};
use crate::graph::{AnimGraph, GraphProgram};
use crate::scene::{AssetSource, EntityDesc, MeshAsset, MeshDesc, SceneDesc, World};
use crate::skeleton::{Skeleton, find_skeleton_fault};
use file::{ClipAsset, FILE_VERSION, FieldError, Manifest, ProjectFile, SceneFile, SkeletonFile};

/// The manifest's file name inside a project folder.
pub const PROJECT_FILE: &str = "project.ron";

/// Why a project (or one of its files) could not be loaded, saved or used.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ProjectError {
    /// Reading or writing failed.
    #[error("{}: {message}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The system's message.
        message: String,
    },
    /// The text is not valid RON for this kind of file.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Syntax {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// The file's version is not one this build reads.
    #[error("{}: version {found} is not supported (this build reads version {supported})", path.display())]
    Version {
        /// The file.
        path: PathBuf,
        /// The file's version.
        found: u32,
        /// The supported version.
        supported: u32,
    },
    /// The file parses but a field is wrong.
    #[error("{}: {error}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// Where and what.
        error: FieldError,
    },
    /// A fault at a place inside a file: an entity's field of a scene file.
    #[error("{}: entity {entity}, {field}: {message}", path.display())]
    Entity {
        /// The file.
        path: PathBuf,
        /// The entity's path in the scene (`Runner/LeftThigh`).
        entity: String,
        /// The field (`animator.clip`, `socket`, `mesh`).
        field: String,
        /// What is wrong.
        message: String,
    },
    /// A fault of an asset, a reference, a skeleton, a clip or a graph.
    #[error("{}: {message}", path.display())]
    Fault {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A fault found loading a graph file that loads anyway (an unknown node kind, a missing
    /// setting, a dangling or mismatched wire, a cycle): the graph opens with the fault on its node.
    #[error("{}: {error}", path.display())]
    Graph {
        /// The file.
        path: PathBuf,
        /// The fault (naming its node where it has one).
        error: Box<crate::graph::GraphFileError>,
    },
}

fn io_error(path: &Path, e: impl std::fmt::Display) -> ProjectError {
    ProjectError::Io { path: path.to_owned(), message: e.to_string() }
}

fn entity_fault(path: &Path, entity: &str, field: &str, message: impl ToString) -> ProjectError {
    ProjectError::Entity {
        path: path.to_owned(),
        entity: entity.to_owned(),
        field: field.to_owned(),
        message: message.to_string(),
    }
}

fn fault(path: &Path, message: impl Into<String>) -> ProjectError {
    ProjectError::Fault { path: path.to_owned(), message: message.into() }
}

/// Parses `text` (the contents of `path`) as a versioned RON file of type `F`.
pub fn parse_file<F: DeserializeOwned + Send>(text: &str, path: &Path) -> Result<F, ProjectError> {
    parse_file_versioned(text, path, FILE_VERSION)
}

/// Parses `text` (the contents of `path`) as a RON file of type `F` at format `version`.
pub fn parse_file_versioned<F: DeserializeOwned + Send>(
    text: &str,
    path: &Path,
    version: u32,
) -> Result<F, ProjectError> {
    crate::graph::file::with_stack_for(crate::graph::file::text_nesting(text), || {
        parse_file_here(text, path, version)
    })
}

fn parse_file_here<F: DeserializeOwned>(text: &str, path: &Path, version: u32) -> Result<F, ProjectError> {
    let syntax = |e: ron::error::SpannedError| ProjectError::Syntax {
        path: path.to_owned(),
        line: e.span.start.line,
        column: e.span.start.col,
        message: crate::graph::file::ron_message(&e.code),
    };
    // The version first, so a newer file is reported as such rather than as a field error.
    if let Some(found) = crate::graph::file::probe_version(text).filter(|v| *v != version) {
        return Err(ProjectError::Version { path: path.to_owned(), found, supported: version });
    }
    ron_options().from_str(text).map_err(syntax)
}

/// Writes `value` as RON with the fixed pretty-printer (stable: same value, same text).
pub fn to_ron<F: Serialize>(value: &F) -> String {
    // Serializing plain data (strings, numbers, vectors, options) into a String cannot fail:
    // there is no nesting limit on writing (the depth is the document's own). Only scenes nest
    // deeply; `scene_to_string` writes deep ones on a deep stack.
    to_ron_here(value)
}

fn to_ron_here<F: Serialize>(value: &F) -> String {
    let options = ron::Options::default().without_recursion_limit();
    let mut s = options.to_string_pretty(value, pretty_config()).unwrap_or_default();
    s.push('\n');
    s
}

fn read_text(path: &Path) -> Result<String, ProjectError> {
    String::from_utf8(fs::read_regular(path, path)?).map_err(|e| io_error(path, e))
}

/// Reads a scene file.
pub fn load_scene(path: &Path) -> Result<SceneDesc, ProjectError> {
    scene_from_str(&read_text(path)?, path)
}

/// Parses scene text (`path` names it in errors).
pub fn scene_from_str(text: &str, path: &Path) -> Result<SceneDesc, ProjectError> {
    // Parsed and converted on a deep stack: a scene may nest its entities deeply, and both the
    // parser and the conversion follow the nesting.
    crate::graph::file::with_stack_for(crate::graph::file::text_nesting(text), || {
        let f: SceneFile = parse_file_here(text, path, FILE_VERSION)?;
        SceneDesc::try_from(&f).map_err(|error| ProjectError::Invalid { path: path.to_owned(), error })
    })
}

/// A scene's file text (authored state only).
pub fn scene_to_string(scene: &SceneDesc) -> String {
    // Each entity level nests three brackets in the file.
    let nesting = 3 * entity_depth(&scene.entities) + 4;
    crate::graph::file::with_stack_for(nesting, || to_ron_here(&SceneFile::from(scene)))
}

/// How many entity levels deep a scene goes (iteratively: the depth is what is measured).
fn entity_depth(roots: &[EntityDesc]) -> usize {
    let mut max = 0;
    let mut stack: Vec<(&EntityDesc, usize)> = roots.iter().map(|e| (e, 1)).collect();
    while let Some((e, d)) = stack.pop() {
        max = max.max(d);
        stack.extend(e.children.iter().map(|c| (c, d + 1)));
    }
    max
}

/// Saves a scene atomically.
pub fn save_scene(path: &Path, scene: &SceneDesc) -> Result<(), ProjectError> {
    write_atomic(path, scene_to_string(scene).as_bytes())
}

/// Parses clip file text (either format, see [`clip_file`]).
pub fn clip_from_str(text: &str, path: &Path) -> Result<ClipAsset, ProjectError> {
    let f = clip_file::parse_clip_text(text, path)?;
    f.to_asset().map_err(|error| ProjectError::Invalid { path: path.to_owned(), error })
}

/// Parses clip file text keeping what is sound ([`ClipAsset::repair`]): syntax and version
/// errors fail; every fault of a track, key, length or frame rate comes back with its place
/// (track and key) beside the repaired clip.
pub fn clip_from_str_repairing(
    text: &str,
    path: &Path,
) -> Result<(ClipAsset, Vec<ProjectError>), ProjectError> {
    let f = clip_file::parse_clip_text(text, path)?;
    let (clip, faults) = f.repair();
    Ok((
        clip,
        faults.into_iter().map(|error| ProjectError::Invalid { path: path.to_owned(), error }).collect(),
    ))
}

/// A clip's file text, in the current format ([`clip_file::CLIP_FILE_VERSION`]: a key a line).
pub fn clip_to_string(clip: &ClipAsset) -> String {
    let mut s = ron::Options::default()
        .without_recursion_limit()
        .to_string_pretty(&clip_file::ClipFile::from(clip), clip_file::clip_pretty_config())
        .unwrap_or_default();
    s.push('\n');
    s
}

/// Parses skeleton file text.
pub fn skeleton_from_str(text: &str, path: &Path) -> Result<Skeleton, ProjectError> {
    let f: SkeletonFile = parse_file(text, path)?;
    Skeleton::try_from(&f).map_err(|error| ProjectError::Invalid { path: path.to_owned(), error })
}

/// A skeleton's file text.
pub fn skeleton_to_string(skeleton: &Skeleton) -> String {
    to_ron(&SkeletonFile::from(skeleton))
}

/// A graph file's graph as far as it loads, with its faults (see [`load_graph`]); `Err` only for a
/// syntax error or an unsupported version.
pub fn graph_from_str_lossy(text: &str, path: &Path) -> Result<(AnimGraph, Vec<ProjectError>), ProjectError> {
    match load_graph(text) {
        Ok((g, errors)) => Ok((
            g,
            errors
                .into_iter()
                .map(|error| ProjectError::Graph { path: path.to_owned(), error: Box::new(error) })
                .collect(),
        )),
        Err(crate::graph::file::GraphFileError::Syntax { line, column, message }) => {
            Err(ProjectError::Syntax { path: path.to_owned(), line, column, message })
        }
        Err(e) => Err(fault(path, e.to_string())),
    }
}

fn is_skeleton_file(p: &str) -> bool {
    p.ends_with(".skeleton.ron")
}

/// Imports a model file by its extension: glTF (`.gltf`, `.glb`), BVH motion capture (`.bvh`,
/// its values as written: its rig, its clip and a stick mesh) or FBX (`.fbx`, feature `fbx`).
/// A BVH or FBX fault comes back as a glTF-shaped [`gltf::ImportError::Invalid`] naming the
/// file, so every caller reports them alike.
pub fn import_model(path: &Path) -> Result<crate::gltf::ImportedScene, gltf::ImportError> {
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    let other = |message: String| gltf::ImportError::Invalid {
        file: path.to_owned(),
        faults: vec![gltf::Fault::new(gltf::Location::File, message)],
    };
    match ext.as_str() {
        "bvh" => {
            crate::bvh::import(path, &crate::bvh::BvhOptions::default()).map_err(|e| other(e.to_string()))
        }
        #[cfg(feature = "fbx")]
        "fbx" => crate::fbx::import(path).map_err(|e| other(e.to_string())),
        _ => gltf::import(path),
    }
}

/// Whether `p` names a model the library imports: glTF (`.glb`, `.gltf`), BVH motion capture
/// (`.bvh`: its rig, its clip and a stick mesh, as `bvh::import` gives them) or FBX (`.fbx`).
fn is_model(p: &str) -> bool {
    let l = p.to_ascii_lowercase();
    l.ends_with(".glb") || l.ends_with(".gltf") || l.ends_with(".bvh") || l.ends_with(".fbx")
}

/// The folder of a project given its folder or its `project.ron`.
pub fn project_root(path: &Path) -> PathBuf {
    if path.is_dir() { path.to_owned() } else { path.parent().map(Path::to_owned).unwrap_or_default() }
}

/// A project's authored content: the manifest and every authored file it lists (binary assets
/// are referenced by path only).
///
/// Each file's value is an `Arc`: cloning a project copies no file, and an edit replaces only
/// the files it changes (the editor's undo steps and the running [`Library`] share the rest
/// with the document). Two projects hold the same file when their `Arc`s are the same
/// ([`Project::changed_files`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Project {
    /// `project.ron`.
    pub manifest: Manifest,
    /// Scenes by path.
    pub scenes: BTreeMap<String, Arc<SceneDesc>>,
    /// Clip files by path.
    pub clips: BTreeMap<String, Arc<ClipAsset>>,
    /// Skeleton files (assets ending `.skeleton.ron`) by path.
    pub skeletons: BTreeMap<String, Arc<Skeleton>>,
    /// Graph files by path.
    pub graphs: BTreeMap<String, Arc<AnimGraph>>,
    /// Retarget files (assets ending `.retarget.ron`) by path.
    pub retargets: BTreeMap<String, Arc<crate::retarget::RetargetMap>>,
}

/// Which files of a project differ from those of an earlier state of it
/// ([`Project::changed_files`]): by identity (`Arc::ptr_eq`), so the check costs one pointer
/// comparison a file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChangedFiles {
    /// Whether `project.ron` differs.
    pub manifest: bool,
    /// Scene files added, removed or replaced.
    pub scenes: Vec<String>,
    /// Clip files added, removed or replaced.
    pub clips: Vec<String>,
    /// Skeleton files added, removed or replaced.
    pub skeletons: Vec<String>,
    /// Graph files added, removed or replaced.
    pub graphs: Vec<String>,
    /// Retarget files added, removed or replaced.
    pub retargets: Vec<String>,
}

impl ChangedFiles {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        !self.manifest
            && self.scenes.is_empty()
            && self.clips.is_empty()
            && self.skeletons.is_empty()
            && self.graphs.is_empty()
            && self.retargets.is_empty()
    }

    /// Whether only clip files changed (the case a running world can follow by re-binding the
    /// heads that play them, without a rebuild).
    pub fn only_clips(&self) -> bool {
        !self.manifest && self.scenes.is_empty() && self.skeletons.is_empty() && self.graphs.is_empty()
    }
}

/// The keys of `a` and `b` whose values differ by identity, or that only one holds.
fn changed_keys<T>(a: &BTreeMap<String, Arc<T>>, b: &BTreeMap<String, Arc<T>>) -> Vec<String> {
    let mut out: Vec<String> = a
        .iter()
        .filter(|(k, v)| b.get(*k).is_none_or(|w| !Arc::ptr_eq(v, w)))
        .map(|(k, _)| k.clone())
        .collect();
    out.extend(b.keys().filter(|k| !a.contains_key(*k)).cloned());
    out
}

impl Project {
    /// Loads a project from its folder or its `project.ron`; the first error stops it (use
    /// [`check_project`] to see them all).
    pub fn load(path: &Path) -> Result<Project, ProjectError> {
        let (project, mut errors) = load_lenient(path);
        if errors.is_empty() { Ok(project) } else { Err(errors.swap_remove(0)) }
    }

    /// The files of this project that are not the very same (`Arc`) as in `earlier`: what an edit,
    /// an undo or a redo between the two replaced.
    pub fn changed_files(&self, earlier: &Project) -> ChangedFiles {
        ChangedFiles {
            manifest: self.manifest != earlier.manifest,
            scenes: changed_keys(&self.scenes, &earlier.scenes),
            clips: changed_keys(&self.clips, &earlier.clips),
            skeletons: changed_keys(&self.skeletons, &earlier.skeletons),
            graphs: changed_keys(&self.graphs, &earlier.graphs),
            retargets: changed_keys(&self.retargets, &earlier.retargets),
        }
    }

    /// Every authored file as (path relative to the project folder, text), in a fixed order.
    pub fn to_files(&self) -> Vec<(String, String)> {
        self.file_paths().into_iter().filter_map(|p| Some((p.clone(), self.file_text(&p)?))).collect()
    }

    /// The paths of every authored file, in the order [`Project::to_files`] gives them, without
    /// writing any: the manifest, then the skeletons, clips, graphs and scenes the manifest lists
    /// and the project holds.
    pub fn file_paths(&self) -> Vec<String> {
        let m = &self.manifest;
        let mut out = vec![PROJECT_FILE.to_owned()];
        out.extend(
            m.assets
                .iter()
                .filter(|p| self.skeletons.contains_key(*p) || self.retargets.contains_key(*p))
                .cloned(),
        );
        out.extend(m.clips.iter().filter(|p| self.clips.contains_key(*p)).cloned());
        out.extend(m.graphs.iter().filter(|p| self.graphs.contains_key(*p)).cloned());
        out.extend(m.scenes.iter().filter(|p| self.scenes.contains_key(*p)).cloned());
        out
    }

    /// The text of the authored file at `path` (relative to the project folder), as a save
    /// writes it; `None` if the project holds no such file.
    pub fn file_text(&self, path: &str) -> Option<String> {
        if path == PROJECT_FILE {
            return Some(to_ron(&ProjectFile::from(&self.manifest)));
        }
        let m = &self.manifest;
        if m.assets.iter().any(|p| p == path)
            && let Some(s) = self.skeletons.get(path)
        {
            return Some(skeleton_to_string(s));
        }
        if m.assets.iter().any(|p| p == path)
            && let Some(r) = self.retargets.get(path)
        {
            return Some(retarget_file::retarget_to_string(r));
        }
        if m.clips.iter().any(|p| p == path)
            && let Some(c) = self.clips.get(path)
        {
            return Some(clip_to_string(c));
        }
        if m.graphs.iter().any(|p| p == path)
            && let Some(g) = self.graphs.get(path)
        {
            return Some(to_ron(&GraphFile::from(&**g)));
        }
        if m.scenes.iter().any(|p| p == path)
            && let Some(s) = self.scenes.get(path)
        {
            return Some(scene_to_string(s));
        }
        None
    }

    /// Saves every authored file under `root` as one save: all of them or, if the process dies
    /// on the way, the next load finishes it (see [`stage_save`]).
    pub fn save(&self, root: &Path) -> Result<(), ProjectError> {
        let files: Vec<(String, Vec<u8>)> =
            self.to_files().into_iter().map(|(p, t)| (p, t.into_bytes())).collect();
        save_files(root, &files, &[])
    }
}

/// Loads as much of a project as it can, returning every error found on the way; first
/// finishes (or refuses, logging why) a save that was interrupted ([`finish_interrupted_save`]).
fn load_lenient(path: &Path) -> (Project, Vec<ProjectError>) {
    let root = project_root(path);
    match finish_interrupted_save(&root) {
        Ok(recovery) => {
            for line in &recovery.done {
                log::info!("{line}");
            }
            for line in &recovery.refused {
                log::warn!("{line}");
            }
        }
        Err(e) => return (Project::default(), vec![e]),
    }
    load_read_only(path)
}

/// Loads as much of a project as it can, changing nothing on disk: every file read through
/// [`fs::ProjectRoot`] (inside the folder, links resolved, regular files only).
fn load_read_only(path: &Path) -> (Project, Vec<ProjectError>) {
    let root = project_root(path);
    let project_root = match fs::ProjectRoot::open(&root) {
        Ok(r) => r,
        Err(e) => return (Project::default(), vec![e]),
    };
    let manifest_path = if path.is_dir() { path.join(PROJECT_FILE) } else { path.to_owned() };
    load_lenient_with(&root, &manifest_path, &|p: &Path| project_root.read_text(p))
}

impl Project {
    /// Loads a project from its folder or its `project.ron`, repairing what can be repaired:
    /// clip files with faulty keys, tracks, lengths or frame rates load with the sound parts
    /// kept, and each fault comes back (file, track, key); graph files with faulty nodes or
    /// wires load as far as they can, each fault naming its node ([`ProjectError::Graph`]).
    /// Any other fault (a syntax error, a missing or unreadable file, a scene that does not
    /// convert) fails.
    pub fn load_repairing(path: &Path) -> Result<(Project, Vec<ProjectError>), ProjectError> {
        let (project, errors) = load_lenient(path);
        let (repaired, fatal): (Vec<_>, Vec<_>) = errors.into_iter().partition(|e| {
            matches!(e, ProjectError::Invalid { path, .. } if path.to_string_lossy().ends_with(".clip.ron"))
                || matches!(e, ProjectError::Graph { .. })
        });
        match fatal.into_iter().next() {
            Some(e) => Err(e),
            None => Ok((project, repaired)),
        }
    }

    /// Parses a project from file texts held in memory (relative path, text), as
    /// [`Project::to_files`] gives them (an editor's recovery file), with its folder `root`
    /// for the binary assets; the first error stops it.
    pub fn from_files(root: &Path, files: &[(String, String)]) -> Result<Project, ProjectError> {
        let (project, mut errors) =
            load_lenient_with(root, &root.join(PROJECT_FILE), &memory_reader(root, files));
        if errors.is_empty() { Ok(project) } else { Err(errors.swap_remove(0)) }
    }
}

impl Project {
    /// Parses a project from file texts held in memory (relative path, text) over the files of
    /// its folder `root`: a file the texts hold is taken from them, any other the manifest lists
    /// is read from the folder (through [`fs::ProjectRoot`]: inside it, regular files only).
    /// This is how an editor's recovery file that holds only the files changed since the last
    /// save (and the manifest) is read back. The first error stops it.
    pub fn from_files_over_disk(root: &Path, files: &[(String, String)]) -> Result<Project, ProjectError> {
        let disk = fs::ProjectRoot::open(root)?;
        let memory = memory_reader(root, files);
        let read = |p: &Path| match memory(p) {
            Ok(text) => Ok(text),
            Err(_) => disk.read_text(p),
        };
        let (project, mut errors) = load_lenient_with(root, &root.join(PROJECT_FILE), &read);
        if errors.is_empty() { Ok(project) } else { Err(errors.swap_remove(0)) }
    }
}

/// Reads project files from texts held in memory (relative path, text) under `root`.
fn memory_reader<'a>(
    root: &'a Path,
    files: &'a [(String, String)],
) -> impl Fn(&Path) -> Result<String, ProjectError> + Sync + 'a {
    move |p: &Path| {
        let rel = p.strip_prefix(root).unwrap_or(p).to_string_lossy().replace('\\', "/");
        files
            .iter()
            .find(|(k, _)| *k == rel)
            .map(|(_, t)| t.clone())
            .ok_or_else(|| io_error(p, "not among the files given"))
    }
}

/// `f` of every item, in the items' order, run on up to as many threads as the machine has
/// cores (each takes the next item left, so one big file does not hold up a share of others).
pub(crate) fn in_parallel<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(items.len());
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut out: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break done };
                        done.push((i, f(item)));
                    }
                })
            })
            .collect();
        // A worker that panicked (it cannot: parsing returns errors) would lose its items: the
        // panic is passed on rather than a file silently missing.
        workers.into_iter().flat_map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    });
    out.sort_by_key(|(i, _)| *i);
    out.into_iter().map(|(_, r)| r).collect()
}

fn load_lenient_with(
    root: &Path,
    manifest_path: &Path,
    read_text: &(dyn Fn(&Path) -> Result<String, ProjectError> + Sync),
) -> (Project, Vec<ProjectError>) {
    let (project, errors, _) = load_lenient_deferring(root, manifest_path, read_text, &|_| BTreeSet::new());
    (project, errors)
}

/// [`load_lenient_with`], leaving out the clip files `defer` names once the manifest, assets,
/// graphs and scenes are read (they come back, in the manifest's order, for a later load). The
/// errors come in the same order as a whole load's: assets, clips, graphs, scenes.
pub(crate) fn load_lenient_deferring(
    root: &Path,
    manifest_path: &Path,
    read_text: &(dyn Fn(&Path) -> Result<String, ProjectError> + Sync),
    defer: &dyn Fn(&Project) -> BTreeSet<String>,
) -> (Project, Vec<ProjectError>, Vec<String>) {
    let root = root.to_owned();
    let manifest_path = manifest_path.to_owned();
    let mut errors = Vec::new();
    let mut project = Project::default();
    let manifest = read_text(&manifest_path).and_then(|t| {
        let f: ProjectFile = parse_file(&t, &manifest_path)?;
        Manifest::try_from(f).map_err(|error| ProjectError::Invalid { path: manifest_path.clone(), error })
    });
    match manifest {
        Ok(m) => project.manifest = m,
        Err(e) => return (project, vec![e], Vec::new()),
    }
    let m = project.manifest.clone();
    for p in &m.assets {
        let full = root.join(p);
        if is_skeleton_file(p) {
            match read_text(&full).and_then(|t| skeleton_from_str(&t, &full)) {
                Ok(s) => {
                    project.skeletons.insert(p.clone(), Arc::new(s));
                }
                Err(e) => errors.push(e),
            }
        } else if retarget_file::is_retarget_file(p) {
            match read_text(&full).and_then(|t| retarget_file::retarget_from_str(&t, &full)) {
                Ok(r) => {
                    project.retargets.insert(p.clone(), Arc::new(r));
                }
                Err(e) => errors.push(e),
            }
        } else if !is_model(p) {
            errors.push(fault(
                &full,
                "unknown kind of asset (expected .glb, .gltf, .bvh, .fbx, .skeleton.ron or .retarget.ron)",
            ));
        } else if !full.exists() {
            errors.push(io_error(&full, "the asset file does not exist"));
        } else if let Err(e) = fs::ProjectRoot::open(&root).and_then(|r| r.regular_file(&full)) {
            errors.push(e);
        }
    }
    let mut later = Vec::new();
    for p in &m.graphs {
        let full = root.join(p);
        match read_text(&full).and_then(|t| graph_from_str_lossy(&t, &full)) {
            Ok((g, faults)) => {
                project.graphs.insert(p.clone(), Arc::new(g));
                later.extend(faults);
            }
            Err(e) => later.push(e),
        }
    }
    for p in &m.scenes {
        let full = root.join(p);
        match read_text(&full).and_then(|t| scene_from_str(&t, &full)) {
            Ok(s) => {
                project.scenes.insert(p.clone(), Arc::new(s));
            }
            Err(e) => later.push(e),
        }
    }
    let deferred_set = defer(&project);
    let (deferred, now): (Vec<String>, Vec<String>) =
        m.clips.iter().cloned().partition(|p| deferred_set.contains(p));
    // Clip files are most of a motion library's bytes: they are read and parsed on every core,
    // and their results taken in the manifest's order (the same project and faults as one by one).
    let clips = in_parallel(&now, |p| load_clip_with(&root, p, read_text));
    for (p, loaded) in now.iter().zip(clips) {
        match loaded {
            Ok((c, faults)) => {
                project.clips.insert(p.clone(), Arc::new(c));
                errors.extend(faults);
            }
            Err(e) => errors.push(e),
        }
    }
    errors.extend(later);
    (project, errors, deferred)
}

/// What loading one clip file gives: the clip (repaired) with the faults repaired, or why it
/// did not load.
pub type ClipLoad = Result<(ClipAsset, Vec<ProjectError>), ProjectError>;

pub(crate) fn load_clip_with(
    root: &Path,
    rel: &str,
    read_text: &(dyn Fn(&Path) -> Result<String, ProjectError> + Sync),
) -> ClipLoad {
    let full = root.join(rel);
    read_text(&full).and_then(|t| clip_from_str_repairing(&t, &full))
}

/// Every clip file a scene or a graph of `project` names (an Animator's clip, a crowd's clips,
/// a graph node's clips): what a scene needs to play.
pub fn clips_in_use(project: &Project) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for scene in project.scenes.values() {
        let mut stack: Vec<&EntityDesc> = scene.entities.iter().collect();
        while let Some(e) = stack.pop() {
            if let Some(c) = e.animator.as_ref().and_then(|a| a.clip.as_ref()) {
                out.insert(c.clone());
            }
            if let Some(crowd) = &e.crowd {
                out.extend(crowd.clips.iter().cloned());
            }
            stack.extend(e.children.iter());
        }
    }
    for g in project.graphs.values() {
        for n in &g.nodes {
            out.extend(n.kind.clip_refs().into_iter().map(str::to_owned));
        }
    }
    out
}

/// glTF imports by file path, reused while the file keeps its length and modification time, so
/// an editor that rebuilds its [`Library`] after every edit does not re-import binary assets.
/// Failed imports are cached too (the same faults come back until the file changes).
#[derive(Debug, Default)]
pub struct ImportCache {
    entries: BTreeMap<PathBuf, CachedImport>,
}

type ImportResult = Result<Arc<ImportAssets>, Arc<gltf::ImportError>>;

/// What one glTF file gives a project: the imported scene and the engine assets derived from
/// it once (skeletons, clips, meshes as shared `Arc`s, so every library built from the same
/// import hands out the same objects).
#[derive(Debug)]
pub struct ImportAssets {
    /// The imported scene.
    pub scene: Arc<ImportedScene>,
    skeletons: Vec<Arc<Skeleton>>,
    clips: Vec<(String, Vec<Arc<Clip>>)>,
    meshes: Vec<(String, Arc<MeshAsset>)>,
}

impl ImportAssets {
    /// Derives the engine assets of `scene`.
    pub fn new(scene: ImportedScene) -> Self {
        let skeletons: Vec<Arc<Skeleton>> = scene.rigs.iter().map(|r| Arc::new(r.skeleton.clone())).collect();
        let clips = scene
            .animations
            .iter()
            .map(|a| (a.name.clone(), a.clips.iter().map(|rc| Arc::new(rc.clip.clone())).collect()))
            .collect();
        // Each mesh's skin: that of the first node (in glTF order) drawing it with one.
        let mut skin_of: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
        for n in &scene.nodes {
            if let (Some(m), Some(s)) = (n.mesh, n.skin) {
                skin_of.entry(m).or_insert(s);
            }
        }
        let meshes = scene
            .meshes
            .iter()
            .enumerate()
            .map(|(mi, mesh)| {
                let skin = skin_of.get(&mi).copied();
                let rig = skin.and_then(|s| scene.skins.get(s)).map(|s| s.rig);
                let asset = MeshAsset {
                    mesh: mesh.clone(),
                    skeleton: rig.and_then(|r| skeletons.get(r).cloned()),
                    joint_to_bone: rig
                        .and_then(|r| scene.rigs.get(r))
                        .map(|r| r.joint_to_bone.clone())
                        .unwrap_or_default(),
                    materials: scene.materials.clone(),
                    images: scene.images.clone(),
                };
                (mesh.name.clone(), Arc::new(asset))
            })
            .collect();
        Self { scene: Arc::new(scene), skeletons, clips, meshes }
    }
}

#[derive(Debug)]
struct CachedImport {
    stamp: (u64, Option<std::time::SystemTime>),
    result: ImportResult,
}

impl ImportCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The import of `path`, from the cache when the file did not change.
    pub fn import(&mut self, path: &Path) -> ImportResult {
        let meta = std::fs::metadata(path).ok();
        let stamp = (meta.as_ref().map_or(0, |m| m.len()), meta.and_then(|m| m.modified().ok()));
        if let Some(c) = self.entries.get(path)
            && c.stamp == stamp
        {
            return c.result.clone();
        }
        let scene = import_model(path);
        let result = scene.map(|s| Arc::new(ImportAssets::new(s))).map_err(Arc::new);
        self.entries.insert(path.to_owned(), CachedImport { stamp, result: result.clone() });
        result
    }

    /// Forgets every import, so the next [`ImportCache::import`] of each file reads it again
    /// (a model or one of its buffers or images changed on disk: which files a glTF reads
    /// besides itself is the file's own business).
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// Imports held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no import is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// The loaded assets of a project: skeletons, clips, meshes and graphs by reference, shared as
/// `Arc`s. Derived from a [`Project`] and its binary assets; never saved.
#[derive(Clone, Debug, Default)]
pub struct Library {
    skeletons: BTreeMap<String, Arc<Skeleton>>,
    clips: BTreeMap<String, Vec<Arc<Clip>>>,
    meshes: BTreeMap<String, Arc<MeshAsset>>,
    imports: BTreeMap<String, Arc<ImportedScene>>,
    graphs: BTreeMap<String, Arc<AnimGraph>>,
}

/// The entries at `paths` of `held` as `from` has them now (removed where it has none).
fn follow<T: Clone>(held: &mut BTreeMap<String, T>, from: &BTreeMap<String, T>, paths: &[String]) {
    for p in paths {
        match from.get(p) {
            Some(v) => {
                held.insert(p.clone(), v.clone());
            }
            None => {
                held.remove(p);
            }
        }
    }
}

impl Library {
    /// Builds the library of `project` (its folder is `root`), importing its glTF assets. The
    /// first failure stops it.
    pub fn load(project: &Project, root: &Path) -> Result<Library, ProjectError> {
        let (lib, mut errors) = Self::load_lenient(project, root);
        if errors.is_empty() { Ok(lib) } else { Err(errors.swap_remove(0)) }
    }

    fn load_lenient(project: &Project, root: &Path) -> (Library, Vec<ProjectError>) {
        Self::load_cached(project, root, &mut ImportCache::new())
    }

    /// Builds the library of `project` with glTF imports from `cache`, returning every fault
    /// found on the way (a glTF asset that fails to import is left out).
    pub fn load_cached(
        project: &Project,
        root: &Path,
        cache: &mut ImportCache,
    ) -> (Library, Vec<ProjectError>) {
        let mut lib = Library::default();
        let mut errors = Vec::new();
        for (p, s) in &project.skeletons {
            lib.skeletons.insert(p.clone(), s.clone());
        }
        for p in project.manifest.assets.iter().filter(|p| is_model(p)) {
            let full = root.join(p);
            // Only a regular file inside the project folder is imported; anything else is
            // reported by the project load.
            let Ok(real) = fs::ProjectRoot::open(root).and_then(|r| r.regular_file(&full)) else { continue };
            match cache.import(&real) {
                Ok(scene) => lib.add_import(p, scene),
                Err(e) => {
                    for f in e.faults() {
                        errors.push(fault(&full, f.to_string()));
                    }
                }
            }
        }
        for (p, c) in &project.clips {
            lib.clips.insert(p.clone(), vec![c.clip.clone()]);
        }
        for (p, g) in &project.graphs {
            lib.graphs.insert(p.clone(), g.clone());
        }
        (lib, errors)
    }

    /// Follows an edit of the skeleton files at `paths`: each takes the project's skeleton now
    /// (shared), or leaves the library if the project no longer holds it. Rigs driven by them
    /// take it with [`crate::scene::World::rebind_skeletons`].
    pub fn replace_skeletons(&mut self, project: &Project, paths: &[String]) {
        follow(&mut self.skeletons, &project.skeletons, paths);
    }

    /// Follows an edit of the graph files at `paths`: each takes the project's graph now (shared),
    /// or leaves the library if the project no longer holds it. Rigs playing them compile it anew
    /// with [`crate::scene::World::rebind_graphs`].
    pub fn replace_graphs(&mut self, project: &Project, paths: &[String]) {
        follow(&mut self.graphs, &project.graphs, paths);
    }

    /// Follows an edit of the clip files at `paths`: each takes the project's clip now (shared,
    /// not copied), or leaves the library if the project no longer holds it. The rest of the
    /// library is untouched.
    pub fn replace_clips(&mut self, project: &Project, paths: &[String]) {
        for p in paths {
            match project.clips.get(p) {
                Some(c) => {
                    self.clips.insert(p.clone(), vec![c.clip.clone()]);
                }
                None => {
                    self.clips.remove(p);
                }
            }
        }
    }

    fn add_import(&mut self, path: &str, assets: Arc<ImportAssets>) {
        for (i, sk) in assets.skeletons.iter().enumerate() {
            if i == 0 {
                self.skeletons.insert(path.to_owned(), sk.clone());
            }
            self.skeletons.insert(format!("{path}#{}", sk.name), sk.clone());
        }
        for (name, clips) in &assets.clips {
            self.clips.insert(format!("{path}#{name}"), clips.clone());
        }
        for (name, mesh) in &assets.meshes {
            self.meshes.insert(format!("{path}#{name}"), mesh.clone());
        }
        self.imports.insert(path.to_owned(), assets.scene.clone());
    }

    /// The clips at `reference` (a file holding clips for several rigs gives several).
    pub fn clips(&self, reference: &str) -> &[Arc<Clip>] {
        self.clips.get(reference).map_or(&[], Vec::as_slice)
    }

    /// The graph at `reference`.
    pub fn graph_asset(&self, reference: &str) -> Option<&Arc<AnimGraph>> {
        self.graphs.get(reference)
    }

    /// Compiles the graph at `reference` for `skeleton` with this library's clips (every
    /// compile error comes back).
    pub fn compile_graph(
        &self,
        reference: &str,
        skeleton: &Skeleton,
    ) -> Result<GraphProgram, Vec<crate::graph::GraphError>> {
        let Some(g) = self.graphs.get(reference) else { return Err(Vec::new()) };
        let clip_of = |path: &str| {
            self.clips
                .get(path)
                .and_then(|l| l.iter().find(|c| c.skeleton == skeleton.name).or(l.first()).cloned())
        };
        crate::graph::compile_in(g, reference, skeleton, &clip_of, &self.graphs)
    }

    /// The imported glTF asset at `path`.
    pub fn import(&self, path: &str) -> Option<&Arc<ImportedScene>> {
        self.imports.get(path)
    }

    /// Every skeleton reference.
    pub fn skeleton_refs(&self) -> impl Iterator<Item = &str> {
        self.skeletons.keys().map(String::as_str)
    }

    /// Every skeleton with its reference, in reference order (a model's first rig comes twice:
    /// under the model's path and under `path#name`).
    pub fn rigs(&self) -> impl Iterator<Item = (&str, &Arc<Skeleton>)> {
        self.skeletons.iter().map(|(k, s)| (k.as_str(), s))
    }

    /// The first skeleton (in reference order) named `name`, with its reference: how a retarget
    /// map, which names its rigs as clips do, finds them.
    pub fn skeleton_named(&self, name: &str) -> Option<(&str, &Arc<Skeleton>)> {
        self.skeletons.iter().find(|(_, s)| s.name == name).map(|(k, s)| (k.as_str(), s))
    }

    /// The largest scale at which the scenes of `project` place each rig, by skeleton name: for
    /// every Animator whose rig this library resolves, the product down its entity path of each
    /// transform's largest absolute scale component (an upper bound on how much the entity
    /// stretches a distance in the rig's model space). A rig no scene places is absent; a
    /// non-finite or zero product is left out. What turns a distance on screen (a tolerance in
    /// world units, as `marrow cook` takes it) into the rig's own units: a capture in inches,
    /// placed at 0.0254 under a scene in metres, gets a tolerance 39.4 times larger in its units.
    pub fn rig_scales(&self, project: &Project) -> BTreeMap<String, f32> {
        let mut out: BTreeMap<String, f32> = BTreeMap::new();
        self.each_rig_scale(project, |sk, scale| {
            let s = out.entry(sk.name.clone()).or_insert(scale);
            *s = s.max(scale);
        });
        out
    }

    /// [`Library::rig_scales`] for the one skeleton named `name` (what a panel asks each frame,
    /// without building the table).
    pub fn rig_scale(&self, project: &Project, name: &str) -> Option<f32> {
        let mut out: Option<f32> = None;
        self.each_rig_scale(project, |sk, scale| {
            if sk.name == name {
                out = Some(out.map_or(scale, |s| s.max(scale)));
            }
        });
        out
    }

    /// Calls `f` with each placed rig's skeleton and the scale its entity path gives it.
    fn each_rig_scale(&self, project: &Project, mut f: impl FnMut(&Skeleton, f32)) {
        for scene in project.scenes.values() {
            let mut stack: Vec<(&EntityDesc, f32)> = scene.entities.iter().map(|e| (e, 1.0)).collect();
            while let Some((e, above)) = stack.pop() {
                let scale = above * e.transform.map_or(1.0, |t| t.scale.abs().max_element());
                if let Some(sk) = e.animator.as_ref().and_then(|a| self.skeletons.get(&a.rig))
                    && scale.is_finite()
                    && scale > 0.0
                {
                    f(sk, scale);
                }
                stack.extend(e.children.iter().map(|c| (c, scale)));
            }
        }
    }

    /// Every clip reference.
    pub fn clip_refs(&self) -> impl Iterator<Item = &str> {
        self.clips.keys().map(String::as_str)
    }

    /// Every mesh reference.
    pub fn mesh_refs(&self) -> impl Iterator<Item = &str> {
        self.meshes.keys().map(String::as_str)
    }

    /// Instantiates the scene at `path` of `project`.
    pub fn instantiate(&self, project: &Project, path: &str) -> Result<World, ProjectError> {
        let desc =
            project.scenes.get(path).ok_or_else(|| fault(Path::new(path), "no such scene in the project"))?;
        World::instantiate(desc, self).map_err(|e| fault(Path::new(path), e.to_string()))
    }
}

fn unknown(kind: &str, reference: &str, known: impl Iterator<Item = String>) -> String {
    let known: Vec<String> = known.collect();
    format!(
        "no {kind} {reference:?} in the project (known: {})",
        if known.is_empty() { "none".to_owned() } else { known.join(", ") }
    )
}

impl AssetSource for Library {
    fn skeleton(&self, reference: &str) -> Result<Arc<Skeleton>, String> {
        self.skeletons
            .get(reference)
            .cloned()
            .ok_or_else(|| unknown("rig", reference, self.skeletons.keys().cloned()))
    }

    fn clip(&self, reference: &str, skeleton: &Skeleton) -> Result<Arc<Clip>, String> {
        let list = self
            .clips
            .get(reference)
            .ok_or_else(|| unknown("clip", reference, self.clips.keys().cloned()))?;
        list.iter()
            .find(|c| c.skeleton == skeleton.name)
            .or_else(|| list.first())
            .cloned()
            .ok_or_else(|| format!("clip {reference:?} animates no rig"))
    }

    fn clips_at(&self, reference: &str) -> Vec<Arc<Clip>> {
        self.clips(reference).to_vec()
    }

    fn all_clips(&self) -> Vec<(String, Arc<Clip>)> {
        self.clips.iter().flat_map(|(r, list)| list.iter().map(move |c| (r.clone(), c.clone()))).collect()
    }

    fn mesh(&self, reference: &str) -> Result<Arc<MeshAsset>, String> {
        self.meshes
            .get(reference)
            .cloned()
            .ok_or_else(|| unknown("mesh", reference, self.meshes.keys().cloned()))
    }

    fn graph(&self, reference: &str, skeleton: &Arc<Skeleton>) -> Result<Arc<GraphProgram>, String> {
        if !self.graphs.contains_key(reference) {
            return Err(unknown("graph", reference, self.graphs.keys().cloned()));
        }
        self.compile_graph(reference, skeleton).map(Arc::new).map_err(|errors| {
            format!(
                "graph {reference:?} does not compile for skeleton {:?}: {}",
                skeleton.name,
                errors.iter().map(|e| e.to_string()).collect::<Vec<_>>().join("; ")
            )
        })
    }
}

/// The graph part of [`check_project`]: each graph compiled against the skeleton its clips
/// name (a graph names no skeleton itself), or, playing no clip, against an empty one.
fn check_graphs(
    project: &Project,
    lib: &Library,
    root: &Path,
    errors: &mut Vec<ProjectError>,
    warnings: &mut Vec<String>,
) {
    for (p, g) in &project.graphs {
        let full = root.join(p);
        for n in &g.nodes {
            if let crate::graph::NodeKind::StateMachine { machine } = &n.kind {
                warnings.extend(
                    crate::graph::machine::machine_warnings(machine)
                        .into_iter()
                        .map(|w| format!("{}: node {} (StateMachine): {w}", full.display(), n.id)),
                );
            }
        }
        let clip_of = |path: &str| lib.clips.get(path).and_then(|l| l.first().cloned());
        let first_clip = g.nodes.iter().find_map(|n| n.kind.clip_refs().first().map(|c| (*c).to_owned()));
        let sk = first_clip
            .as_deref()
            .and_then(clip_of)
            .and_then(|c| lib.skeletons.values().find(|s| s.name == c.skeleton).cloned());
        if sk.is_none() && first_clip.is_some() {
            errors.push(fault(&full, "the graph's clips resolve to no skeleton of the project"));
            continue;
        }
        // A graph that plays no clip names no rig: it is checked against an empty one, and bone
        // names (which only a rig can judge) are left to the Animators that play it.
        let rigless = sk.is_none();
        let sk = sk.unwrap_or_else(|| Arc::new(Skeleton::empty("(no rig)")));
        if let Err(list) = crate::graph::compile_in(g, p, &sk, &clip_of, &project.graphs) {
            errors.extend(
                list.into_iter()
                    .filter(|e| !(rigless && matches!(e, crate::graph::GraphError::UnknownBone { .. })))
                    .map(|e| fault(&full, e.to_string())),
            );
        }
    }
}

/// What [`check_project`] found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CheckReport {
    /// Every error (a project with any is unusable as it stands).
    pub errors: Vec<ProjectError>,
    /// Importer warnings and other notes.
    pub warnings: Vec<String>,
    /// Files read.
    pub files: usize,
}

/// Validates a whole project: every file parses, every reference resolves, and every skeleton,
/// clip and graph fault is named (all of them, not just the first). Changes nothing on disk: an
/// interrupted save's journal or temps are reported as warnings, not acted on.
pub fn check_project(path: &Path) -> CheckReport {
    let root = project_root(path);
    let (project, errors) = load_read_only(path);
    let mut report = check_loaded(&project, errors, &root);
    report.warnings.extend(inspect_interrupted_save(&root));
    report
}

/// [`check_project`] over file texts held in memory (relative path, text), as
/// [`Project::from_files`] reads them; binary assets are read from `root`. The same checks, so
/// what this accepts plays as the files on disk would (the fuzz harness relies on it).
pub fn check_project_files(root: &Path, files: &[(String, String)]) -> CheckReport {
    let (project, errors) = load_lenient_with(root, &root.join(PROJECT_FILE), &memory_reader(root, files));
    check_loaded(&project, errors, root)
}

/// Clip files against the skeleton they name, when the project has it.
fn check_clip_files(project: &Project, lib: &Library, root: &Path, errors: &mut Vec<ProjectError>) {
    for (p, c) in &project.clips {
        let full = root.join(p);
        match lib.skeletons.values().find(|s| s.name == c.clip.skeleton) {
            Some(sk) => {
                if sk.bone_names != c.bones {
                    errors.push(fault(
                        &full,
                        format!("the clip's bone list differs from skeleton {:?}'s bones", sk.name),
                    ));
                } else if let Some(f) = find_clip_fault(&c.clip, sk) {
                    errors.push(fault(&full, f.to_string()));
                }
            }
            None => errors.push(fault(
                &full,
                format!(
                    "clip {:?} names skeleton {:?}, which no asset of the project provides",
                    c.clip.name, c.clip.skeleton
                ),
            )),
        }
    }
}

/// Scenes: every reference, socket bone and skinned mesh binding.
fn check_scenes(project: &Project, lib: &Library, root: &Path, errors: &mut Vec<ProjectError>) {
    for (p, scene) in &project.scenes {
        let full = root.join(p);
        if let Err(crate::scene::SceneError::Reference { entity, field, message }) =
            crate::scene::check_totals(scene, lib)
        {
            errors.push(entity_fault(&full, &entity, field, message));
        }
        // (entity, its path, the rig it is a direct child of, the rig at or above its parent,
        // where its parent sits from that rig)
        type Visit<'a> = (&'a EntityDesc, String, Option<Arc<Skeleton>>, Option<Arc<Skeleton>>, Placed);
        let mut stack: Vec<Visit> =
            scene.entities.iter().map(|e| (e, e.name.clone(), None, None, Placed::ROOT)).collect();
        while let Some((e, path, parent_rig, above_rig, parent_placed)) = stack.pop() {
            let mut rig = None;
            if let Some(a) = &e.animator {
                match lib.skeleton(&a.rig) {
                    Ok(sk) => {
                        if let Some(c) = &a.clip {
                            match lib.clip(c, &sk) {
                                Ok(clip) => {
                                    if let Some(f) = find_clip_fault(&clip, &sk) {
                                        errors.push(entity_fault(&full, &path, "animator.clip", f));
                                    }
                                }
                                Err(m) => errors.push(entity_fault(&full, &path, "animator.clip", m)),
                            }
                        }
                        let program = match &a.graph {
                            Some(g) => match lib.graph(g, &sk) {
                                Ok(program) => Some(program),
                                Err(m) => {
                                    errors.push(entity_fault(&full, &path, "animator.graph", m));
                                    None
                                }
                            },
                            None => None,
                        };
                        check_targets(scene, a, program.as_deref(), &full, &path, errors);
                        rig = Some(sk);
                    }
                    Err(m) => errors.push(entity_fault(&full, &path, "animator.rig", m)),
                }
            }
            let driving = rig.clone().or_else(|| above_rig.clone());
            let placed = parent_placed.child(e, e.animator.is_some());
            if let Some(MeshDesc::Asset(r)) = &e.mesh {
                match lib.mesh(r) {
                    Ok(m) => {
                        if let Some(msk) = &m.skeleton {
                            let problem = match &driving {
                                None => Some("skinned mesh with no Animator at or above it".to_owned()),
                                Some(d) if !d.same_rig(msk) => Some(format!(
                                    "skinned mesh's skeleton {:?} is not its rig's ({:?})",
                                    msk.name, d.name
                                )),
                                _ => placed.off_rig(),
                            };
                            if let Some(p) = problem {
                                errors.push(entity_fault(&full, &path, "mesh", p));
                            }
                        }
                    }
                    Err(m) => errors.push(entity_fault(&full, &path, "mesh", m)),
                }
            }
            if let Some(c) = &e.crowd {
                // The rule the World applies when it instantiates the scene: resolve, check, bake.
                // (On one instance: the placements of a valid count cannot fail, and the scene's
                // total is checked above; a count past the limit is refused as it stands.)
                let mut w = World::new();
                let x = w.spawn(e.name.clone());
                let mut one = c.clone();
                if one.count <= crate::crowd::MAX_INSTANCES {
                    one.count = one.count.min(1);
                }
                match w.set_crowd(x, Some(one), lib) {
                    Ok(()) => {}
                    Err(crate::scene::SceneError::Reference { field, message, .. }) => {
                        errors.push(entity_fault(&full, &path, field, message))
                    }
                    Err(other) => errors.push(entity_fault(&full, &path, "crowd", other)),
                }
            }
            if let Some(pc) = &e.particles {
                check_particles(lib, &full, &path, pc, driving.as_deref(), errors);
            }
            if let Some(s) = &e.socket {
                match &parent_rig {
                    None => errors.push(entity_fault(&full, &path, "socket", "not a direct child of a rig")),
                    Some(sk) if sk.bone_count() == 0 => {
                        errors.push(entity_fault(&full, &path, "socket", "the rig has no bones"))
                    }
                    Some(sk) if s.bone.is_empty() || sk.index_of(&s.bone).is_none() => {
                        errors.push(entity_fault(
                            &full,
                            &path,
                            "socket",
                            format!("skeleton {:?} has no bone {:?}", sk.name, s.bone),
                        ))
                    }
                    _ => {}
                }
                if e.transform.is_none() {
                    errors.push(entity_fault(&full, &path, "socket", "the entity has no transform"));
                }
            }
            for c in e.children.iter().rev() {
                stack.push((c, format!("{path}/{}", c.name), rig.clone(), driving.clone(), placed));
            }
        }
    }
}

/// Where an entity of a scene sits, as authored (before any frame plays): its world matrix,
/// the world matrix of the rig at or above it and its matrix from that rig (`None` where a
/// socket between them places it on a bone).
#[derive(Clone, Copy)]
struct Placed {
    world: glam::Mat4,
    rig_world: glam::Mat4,
    from_rig: Option<glam::Mat4>,
}

impl Placed {
    /// Above the roots: no rig, the world origin.
    const ROOT: Placed =
        Placed { world: glam::Mat4::IDENTITY, rig_world: glam::Mat4::IDENTITY, from_rig: None };

    /// Where child `e` of this entity sits (`rig`: whether `e` has an Animator).
    fn child(self, e: &EntityDesc, rig: bool) -> Placed {
        let local = e.transform.map_or(glam::Mat4::IDENTITY, |t| t.to_mat4());
        let world = self.world * local;
        if rig {
            return Placed { world, rig_world: world, from_rig: Some(glam::Mat4::IDENTITY) };
        }
        let from_rig = if e.socket.is_some() { None } else { self.from_rig.map(|m| m * local) };
        Placed { world, rig_world: self.rig_world, from_rig }
    }

    /// Why a skinned mesh on this entity does not sit on its rig's origin, as the World checks
    /// each frame (skinning places the vertices from the rig's bones and ignores the mesh
    /// entity's own transform, so anything between them would be dropped on screen).
    fn off_rig(&self) -> Option<String> {
        match self.from_rig {
            None => Some(
                "skinned mesh is placed by a socket, off its rig's origin (skinning ignores its own transform)"
                    .to_owned(),
            ),
            Some(m) if !(self.rig_world * m).abs_diff_eq(self.rig_world, 1e-4) => Some(
                "skinned mesh sits off its rig's origin (skinning ignores its own transform): it and the \
                 entities between it and its rig must keep the identity transform"
                    .to_owned(),
            ),
            Some(_) => None,
        }
    }
}

/// An animator's target bindings (the entity at `path` of `scene`, its graph compiled as
/// `program` when it has one that compiles): each names an entity of the scene by its path, and
/// the graph has the parameters it sets (a vector parameter of its name, or the three floats
/// `{name}_x`, `_y`, `_z`). The World names either fault once per occurrence gap and leaves the
/// parameters where they were; a checked project has neither.
fn check_targets(
    scene: &SceneDesc,
    a: &crate::scene::AnimatorDesc,
    program: Option<&GraphProgram>,
    full: &Path,
    path: &str,
    errors: &mut Vec<ProjectError>,
) {
    for (i, t) in a.targets.iter().enumerate() {
        if scene.entity(&t.entity).is_none() {
            errors.push(entity_fault(
                full,
                path,
                &format!("animator.targets[{i}].entity"),
                format!("no entity at path {:?} in scene {:?}", t.entity, scene.name),
            ));
        }
        let Some(program) = program else { continue };
        let floats = t.parameters();
        if program.target_slots(&t.parameter, &floats).is_none() {
            let [x, y, z] = floats;
            errors.push(entity_fault(
                full,
                path,
                &format!("animator.targets[{i}].parameter"),
                format!(
                    "the graph has no vector parameter {:?} (nor float parameters {x:?}, {y:?} and {z:?}) for the target to set",
                    t.parameter
                ),
            ));
        }
    }
}

/// A particle cloud's entity (`driving`: the rig at or above it): the rule the World applies.
fn check_particles(
    lib: &Library,
    full: &Path,
    path: &str,
    pc: &crate::scene::ParticleCloudDesc,
    driving: Option<&Skeleton>,
    errors: &mut Vec<ProjectError>,
) {
    match lib.mesh(&pc.mesh) {
        Ok(m) => match &m.skeleton {
            None => errors.push(entity_fault(
                full,
                path,
                "particles.mesh",
                format!("mesh {:?} is not skinned: a cloud needs a skeleton", pc.mesh),
            )),
            Some(msk) => {
                // The rule the World applies, on one point: settings, group bones,
                // a surface to scatter on.
                let one = crate::particles::CloudSettings {
                    count: pc.settings.count.min(1),
                    ..pc.settings.clone()
                };
                if pc.settings.count > crate::particles::MAX_PARTICLES {
                    errors.push(entity_fault(full, path, "particles.count", "more than 2000000"));
                } else if let Err(f) =
                    crate::particles::ParticleCloud::from_mesh(&m.mesh, &m.joint_to_bone, msk, &one)
                {
                    errors.push(entity_fault(full, path, "particles", f.to_string()));
                }
                let problem = match driving {
                    None => Some("no Animator at or above it drives it".to_owned()),
                    Some(d) if !d.same_rig(msk) => {
                        Some(format!("the mesh's skeleton {:?} is not its rig's ({:?})", msk.name, d.name))
                    }
                    _ => None,
                };
                if let Some(p) = problem {
                    errors.push(entity_fault(full, path, "particles", p));
                }
            }
        },
        Err(m) => errors.push(entity_fault(full, path, "particles.mesh", m)),
    }
}

/// The checks of a loaded project (`errors`: those its loading found).
fn check_loaded(project: &Project, mut errors: Vec<ProjectError>, root: &Path) -> CheckReport {
    let (lib, lib_errors) = Library::load_lenient(project, root);
    errors.extend(lib_errors);
    let mut warnings = Vec::new();
    for (p, scene) in &lib.imports {
        for w in &scene.warnings {
            warnings.push(format!("{}: {w}", root.join(p).display()));
        }
    }
    // Skeletons.
    for (p, s) in &project.skeletons {
        if let Some(f) = find_skeleton_fault(s) {
            errors.push(fault(&root.join(p), f.to_string()));
        }
    }
    check_clip_files(project, &lib, root, &mut errors);
    check_graphs(project, &lib, root, &mut errors, &mut warnings);
    check_scenes(project, &lib, root, &mut errors);
    let files = 1
        + project.manifest.scenes.len()
        + project.manifest.assets.len()
        + project.manifest.clips.len()
        + project.manifest.graphs.len();
    CheckReport { errors, warnings, files }
}
