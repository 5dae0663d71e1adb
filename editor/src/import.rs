//! File > Import Model: the model (glTF, FBX, or BVH motion capture: its rig, its clip and a
//! stick mesh) is imported (on a background thread, with every fault
//! collected), copied into the project's `assets/` folder, and becomes one undoable step that
//! lists the model, writes each of its clips as an editable clip file, and adds an entity for it
//! to the scene: a rig entity per skin (its Animator on the model's skeleton and first clip) with
//! the skinned meshes beneath it, and the static meshes at their nodes' transforms; the entity
//! scaled by the units the file was authored in (chosen in the file dialog, [`UNITS`]). A
//! folder imports every model file in it the same way, all of them one step, on a background
//! thread with its progress counted and a report per file ([`FolderImportJob`]).
//!
//! Not here: the importers themselves (`marrow_engine::gltf`, `marrow_engine::bvh`,
//! `marrow_engine::fbx`).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};

use marrow_engine::gltf::ImportedScene;
use marrow_engine::project::file::ClipAsset;
use marrow_engine::project::fs::{ProjectRoot, read_regular};
use marrow_engine::project::{Project, ProjectError, write_atomic};

use crate::document::{Op, Slot, Value, tree};

/// What a finished import gives.
#[derive(Debug)]
pub struct Imported {
    /// The step to apply.
    pub op: Op,
    /// Importer warnings (with locations).
    pub warnings: Vec<String>,
    /// The entity it adds.
    pub entity_path: Option<String>,
    /// Rigs the model brought.
    pub rigs: usize,
}

type Outcome = Result<Imported, Vec<String>>;

impl Imported {
    /// The import with its entity scaled by `scale` about the scene's origin (its transform's
    /// translation and scale; 1 leaves it as it is). The model's files are not touched.
    pub fn scaled(mut self, scale: f32) -> Self {
        if scale != 1.0
            && scale.is_finite()
            && scale > 0.0
            && let Op::AddFiles { entity: Some((_, _, e)), .. } = &mut self.op
        {
            let mut t = e.transform.unwrap_or(marrow_engine::math::Transform::IDENTITY);
            t.translation *= scale;
            t.scale *= scale;
            e.transform = Some(t);
        }
        self
    }
}

/// The units a model's file may be authored in, as the scale that brings it to the scene's
/// metres: (menu text, scale).
pub const UNITS: [(&str, f32); 5] = [
    ("metres (x1)", 1.0),
    ("centimetres (x0.01)", 0.01),
    ("millimetres (x0.001)", 0.001),
    ("inches (x0.0254)", 0.0254),
    ("feet (x0.3048)", 0.3048),
];

/// The size of a model at rest, as a file's own units give it (scale 1): the extent of its
/// box along x, y and z, over every mesh's vertices as its rest pose places them and every
/// joint. `None` for a model with nothing to measure (no vertex, no joint).
pub fn rest_size(scene: &ImportedScene) -> Option<glam::Vec3> {
    let mut pose = marrow_engine::gltf::ScenePose::new(scene);
    pose.evaluate(scene, None, 0.0).ok()?;
    let (mut lo, mut hi) = (glam::Vec3::splat(f32::INFINITY), glam::Vec3::splat(f32::NEG_INFINITY));
    let mut take = |p: glam::Vec3| {
        if p.is_finite() {
            lo = lo.min(p);
            hi = hi.max(p);
        }
    };
    for (si, skin) in scene.skins.iter().enumerate() {
        let mut joints = vec![glam::Mat4::IDENTITY; skin.joints.len()];
        pose.joint_world(scene, si, &mut joints);
        joints.iter().for_each(|m| take(m.w_axis.truncate()));
    }
    for (ni, node) in scene.nodes.iter().enumerate() {
        let Some(mesh) = node.mesh.and_then(|m| scene.meshes.get(m)) else { continue };
        for (pi, prim) in mesh.primitives.iter().enumerate() {
            let placed = pose.placed_vertices(scene, ni, pi, prim.positions.len()).unwrap_or_default();
            placed.into_iter().for_each(|v| take(glam::Vec3::from(v)));
        }
    }
    (lo.cmple(hi).all()).then(|| hi - lo)
}

/// The size of the model in the file at `path` ([`rest_size`]), measured on a background thread
/// while the import dialog has the file selected, so that the dialog can say how large the
/// chosen units make it before anything is imported.
#[derive(Debug)]
pub struct SizeProbe {
    path: PathBuf,
    rx: mpsc::Receiver<Result<Option<glam::Vec3>, String>>,
    result: Option<Result<Option<glam::Vec3>, String>>,
}

impl SizeProbe {
    /// Starts measuring the model at `path`.
    pub fn start(path: PathBuf) -> Self {
        let (tx, rx) = mpsc::channel();
        let file = path.clone();
        std::thread::spawn(move || {
            let size = marrow_engine::project::import_model(&file)
                .map(|scene| rest_size(&scene))
                .map_err(|e| e.faults().first().map_or_else(|| e.to_string(), |f| f.to_string()));
            let _ = tx.send(size);
        });
        Self { path, rx, result: None }
    }

    /// The file measured.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The model's size at scale 1 once measured (`Ok(None)`: nothing to measure; `Err`: the
    /// file does not import, with the first fault); `None` while it is being measured.
    pub fn poll(&mut self) -> Option<&Result<Option<glam::Vec3>, String>> {
        if self.result.is_none() {
            self.result = self.rx.try_recv().ok();
        }
        self.result.as_ref()
    }
}

/// What the import dialog says of a model `size` across at scale 1 brought in at `scale`: its
/// largest extent in metres at that scale, and, where that is far from anything a person could
/// stand in (under 5 cm or over 20 m), that the units may be wrong.
pub fn size_line(size: glam::Vec3, scale: f32) -> String {
    let length = |m: f32| if m >= 1.0 { format!("{m:.2} m") } else { format!("{:.1} cm", m * 100.0) };
    let across = size.max_element() * scale;
    let what = if size.y >= 0.5 * size.max_element() {
        format!("stands {} tall", length(size.y * scale))
    } else {
        format!("is {} across", length(across))
    };
    let odd = !(0.05..=20.0).contains(&across);
    format!("at this scale the model {what}{}", if odd { ": check the units" } else { "" })
}

/// An import running on a background thread.
#[derive(Debug)]
pub struct ImportJob {
    path: PathBuf,
    rx: mpsc::Receiver<Outcome>,
}

impl ImportJob {
    /// Starts importing `path` into the project in `root` (a copy of `project`, adding to
    /// `scene`), its entity scaled by `scale` (the file's units in metres, [`UNITS`]).
    pub fn start(path: PathBuf, root: PathBuf, scene: String, project: Project, scale: f32) -> Self {
        let (tx, rx) = mpsc::channel();
        let p = path.clone();
        std::thread::spawn(move || {
            let _ = tx.send(run(&p, &root, &scene, &project).map(|i| i.scaled(scale)));
        });
        Self { path, rx }
    }

    /// The file being imported.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The outcome, once the import finished.
    pub fn poll(&mut self) -> Option<Outcome> {
        match self.rx.try_recv() {
            Ok(o) => Some(o),
            Err(mpsc::TryRecvError::Empty) => None,
            Err(mpsc::TryRecvError::Disconnected) => {
                Some(Err(vec!["the import stopped unexpectedly".into()]))
            }
        }
    }
}

pub(crate) fn sanitize(s: &str) -> String {
    let s: String =
        s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    if s.is_empty() { "unnamed".into() } else { s }
}

/// The file name of an imported clip: the model's stem, then the animation's name without the
/// parts that repeat the stem. A BVH's one animation is named after its file, and an FBX stack
/// is `object|take` ("cmu_131_01|cmu_131_01"): written whole they made `capture_capture` and
/// `cmu_131_01_cmu_131_01_cmu_131_01`. Other names are kept whole ("CesiumMan_animation0").
fn clip_stem(stem: &str, animation: &str) -> String {
    let parts: Vec<&str> = animation
        .split('|')
        .map(str::trim)
        .filter(|p| !p.is_empty() && !p.eq_ignore_ascii_case(stem))
        .collect();
    match parts.is_empty() {
        true => sanitize(stem),
        false => format!("{}_{}", sanitize(stem), sanitize(&parts.join("|"))),
    }
}

fn taken(project: &Project, root: &Path, rel: &str) -> bool {
    let m = &project.manifest;
    [&m.scenes, &m.assets, &m.clips, &m.graphs].iter().any(|l| l.iter().any(|x| x == rel))
        || root.join(rel).exists()
}

pub(crate) fn unique_path(project: &Project, root: &Path, dir: &str, stem: &str, ext: &str) -> String {
    let first = format!("{dir}/{stem}{ext}");
    if !taken(project, root, &first) {
        return first;
    }
    (2..).map(|n| format!("{dir}/{stem}_{n}{ext}")).find(|p| !taken(project, root, p)).unwrap_or(first)
}

/// Imports `path`, copies it (and, for a `.gltf`, the files its URIs name) into
/// `root/assets/`, and builds the step. Faults come back with their locations.
pub fn run(path: &Path, root: &Path, scene: &str, project: &Project) -> Outcome {
    // As the project's library will import it (a BVH as written; the Units choice scales the
    // entity).
    let imported = marrow_engine::project::import_model(path)
        .map_err(|e| e.faults().iter().map(|f| f.to_string()).collect::<Vec<_>>())?;
    let file =
        path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_else(|| "model.glb".into());
    let stem = Path::new(&file).file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let ext = Path::new(&file).extension().map(|e| format!(".{}", e.to_string_lossy())).unwrap_or_default();
    // Already inside the project: reference it where it is.
    let inside = path
        .canonicalize()
        .ok()
        .zip(root.canonicalize().ok())
        .and_then(|(p, r)| p.strip_prefix(&r).ok().map(|x| x.to_string_lossy().replace('\\', "/")));
    let rel = match inside {
        Some(r) => r,
        None => {
            let rel = unique_path(project, root, "assets", &sanitize(&stem), &ext);
            let dest = root.join(&rel);
            // Resolved inside the project first (a linked `assets/` or a dangling link is
            // refused), read as a regular file, written whole.
            let copy = || -> Result<(), ProjectError> {
                let project_root = ProjectRoot::open(root)?;
                let real = project_root.resolve(&dest)?;
                write_atomic(&real, &read_regular(path, path)?)?;
                if ext.eq_ignore_ascii_case(".gltf") {
                    copy_uris(path, &project_root, dest.parent().unwrap_or(root))?;
                } else if ext.eq_ignore_ascii_case(".fbx") {
                    let names = marrow_engine::fbx::texture_files(&read_regular(path, path)?);
                    copy_beside(path, &names, &project_root, dest.parent().unwrap_or(root))?;
                }
                Ok(())
            };
            copy().map_err(|e| vec![format!("{}: cannot copy into the project: {e}", dest.display())])?;
            rel
        }
    };
    let (op, entity_path) = import_op(&rel, &imported, &stem, scene, project, root);
    Ok(Imported {
        op,
        warnings: imported.warnings.iter().map(|w| w.to_string()).collect(),
        entity_path: Some(entity_path),
        rigs: imported.rigs.len(),
    })
}

/// Copies the relative files a `.gltf` names (buffers and images) next to its copy.
fn copy_uris(gltf: &Path, project: &ProjectRoot, dest_dir: &Path) -> Result<(), ProjectError> {
    let text = read_regular(gltf, gltf)?;
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(&text) else { return Ok(()) };
    let mut names = Vec::new();
    for key in ["buffers", "images"] {
        for item in json.get(key).and_then(|v| v.as_array()).into_iter().flatten() {
            if let Some(uri) = item.get("uri").and_then(|u| u.as_str()) {
                names.push(uri.to_owned());
            }
        }
    }
    copy_beside(gltf, &names, project, dest_dir)
}

/// Copies the files `names` (relative to `model`'s folder: data URIs, URLs, absolute paths and
/// paths climbing out are skipped) next to the model's copy in `dest_dir`, each resolved inside
/// the project; a file already there is kept.
fn copy_beside(
    model: &Path,
    names: &[String],
    project: &ProjectRoot,
    dest_dir: &Path,
) -> Result<(), ProjectError> {
    let src_dir = model.parent().unwrap_or(Path::new("."));
    for name in names {
        if name.starts_with("data:")
            || name.contains("://")
            || name.starts_with('/')
            || name.starts_with('\\')
            || name.contains("..")
            || name.split(['/', '\\']).next().is_some_and(|first| first.contains(':'))
        {
            continue;
        }
        let from = src_dir.join(name);
        let to = project.resolve(&dest_dir.join(name))?;
        if from.is_file() && !to.exists() {
            write_atomic(&to, &read_regular(&from, &from)?)?;
        }
    }
    Ok(())
}

/// The step importing `s` (listed as `asset`) into `scene`: clip files and an entity named
/// after `stem`. Returns it with the new entity's path.
pub fn import_op(
    asset: &str,
    s: &ImportedScene,
    stem: &str,
    scene: &str,
    project: &Project,
    root: &Path,
) -> (Op, String) {
    let mut files: Vec<(Slot, Value)> = Vec::new();
    let mut first_clip: Vec<Option<String>> = vec![None; s.rigs.len()];
    let mut planned = project.clone();
    for a in &s.animations {
        for rc in &a.clips {
            let Some(rig) = s.rigs.get(rc.rig) else { continue };
            let suffix =
                if s.rigs.len() > 1 { format!("_{}", sanitize(&rig.skeleton.name)) } else { String::new() };
            let path = unique_path(
                &planned,
                root,
                "clips",
                &format!("{}{suffix}", clip_stem(stem, &a.name)),
                ".clip.ron",
            );
            planned.manifest.clips.push(path.clone());
            let asset = ClipAsset { clip: Arc::new(rc.clip.clone()), bones: rig.skeleton.bone_names.clone() };
            first_clip[rc.rig].get_or_insert(path.clone());
            files.push((Slot::Clip(path), Value::Clip(Arc::new(asset))));
        }
    }
    let root_entity =
        marrow_engine::gltf::model_entity(s, asset, stem, &|r| first_clip.get(r).cloned().flatten());
    let name = project
        .scenes
        .get(scene)
        .map_or(root_entity.name.clone(), |d| tree::unique_name(d, None, &root_entity.name));
    (
        Op::AddFiles {
            label: format!(
                "Import {}",
                Path::new(asset).file_name().map_or(asset.into(), |f| f.to_string_lossy())
            ),
            binary: vec![asset.to_owned()],
            files,
            entity: Some((scene.to_owned(), None, root_entity)),
        },
        name,
    )
}

/// Whether `path` names a model file the import takes (`.gltf`, `.glb`, `.bvh`, `.fbx`).
pub fn is_model_file(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| ["gltf", "glb", "bvh", "fbx"].iter().any(|x| e.eq_ignore_ascii_case(x)))
}

/// The model files in `dir` (not in its subfolders), in name order.
pub fn model_files_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| {
            r.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_file() && is_model_file(p)).collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// What one file of a folder import gave.
#[derive(Clone, Debug, PartialEq)]
pub struct FileReport {
    /// The file's name.
    pub file: String,
    /// Clip files it wrote.
    pub clips: usize,
    /// Rigs it brought.
    pub rigs: usize,
    /// The importer's warnings.
    pub warnings: Vec<String>,
    /// Why it did not import (empty: it did).
    pub faults: Vec<String>,
}

impl FileReport {
    /// One line of the report: `walk.bvh: 1 clip, 1 rig, 2 warnings` or `bad.fbx: not imported: WHY`.
    pub fn line(&self) -> String {
        if let Some(first) = self.faults.first() {
            return format!("{}: not imported: {first}", self.file);
        }
        let s = |n: usize| if n == 1 { "" } else { "s" };
        format!(
            "{}: {} clip{}, {} rig{}, {} warning{}",
            self.file,
            self.clips,
            s(self.clips),
            self.rigs,
            s(self.rigs),
            self.warnings.len(),
            s(self.warnings.len())
        )
    }
}

/// What a folder import gives: one step importing every model that imported (`None`: none
/// did), and a report per file.
#[derive(Debug)]
pub struct FolderImported {
    /// The step (an [`Op::Batch`] of the models' imports).
    pub op: Option<Op>,
    /// Per file, in name order.
    pub reports: Vec<FileReport>,
}

/// Imports every model file of `dir` (name order) into the project in `root`, each as File >
/// Import Model imports one (scaled by `scale`), all of them one step; a file that fails is
/// reported and the others still go in. `done` counts the files finished (for a progress bar).
pub fn import_folder(
    dir: &Path,
    root: &Path,
    scene: &str,
    project: &Project,
    scale: f32,
    done: &AtomicUsize,
) -> FolderImported {
    let mut planned = project.clone();
    let (mut ops, mut reports) = (Vec::new(), Vec::new());
    for file in model_files_in(dir) {
        let name = file.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let mut report =
            FileReport { file: name, clips: 0, rigs: 0, warnings: Vec::new(), faults: Vec::new() };
        match run(&file, root, scene, &planned) {
            Ok(i) => {
                let i = i.scaled(scale);
                // Later files plan their paths and names against the earlier ones'.
                match i.op.apply(&planned) {
                    Ok(outcome) => {
                        for (slot, value) in outcome {
                            slot.set(&mut planned, value);
                        }
                        if let Op::AddFiles { files, .. } = &i.op {
                            report.clips = files.iter().filter(|(s, _)| matches!(s, Slot::Clip(_))).count();
                        }
                        report.rigs = i.rigs;
                        report.warnings = i.warnings;
                        ops.push(i.op);
                    }
                    Err(e) => report.faults.push(e.to_string()),
                }
            }
            Err(faults) => report.faults = faults,
        }
        reports.push(report);
        done.fetch_add(1, Ordering::Relaxed);
    }
    let folder =
        dir.file_name().map_or_else(|| dir.display().to_string(), |n| n.to_string_lossy().into_owned());
    let n = ops.len();
    let op = (n > 0).then(|| Op::Batch {
        label: format!("Import Folder {folder} ({n} model{})", if n == 1 { "" } else { "s" }),
        ops,
    });
    FolderImported { op, reports }
}

/// A folder import running on a background thread ([`import_folder`]).
#[derive(Debug)]
pub struct FolderImportJob {
    dir: PathBuf,
    total: usize,
    done: Arc<AtomicUsize>,
    rx: mpsc::Receiver<FolderImported>,
}

impl FolderImportJob {
    /// Starts importing the model files of `dir` into the project in `root` (a copy of
    /// `project`, adding to `scene`), their entities scaled by `scale`.
    pub fn start(dir: PathBuf, root: PathBuf, scene: String, project: Project, scale: f32) -> Self {
        let (tx, rx) = mpsc::channel();
        let total = model_files_in(&dir).len();
        let done = Arc::new(AtomicUsize::new(0));
        let (d, counter) = (dir.clone(), done.clone());
        std::thread::spawn(move || {
            let _ = tx.send(import_folder(&d, &root, &scene, &project, scale, &counter));
        });
        Self { dir, total, done, rx }
    }

    /// The folder being imported.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Files finished, and files in all.
    pub fn progress(&self) -> (usize, usize) {
        (self.done.load(Ordering::Relaxed).min(self.total), self.total)
    }

    /// The outcome, once every file is done.
    pub fn poll(&mut self) -> Option<FolderImported> {
        match self.rx.try_recv() {
            Ok(o) => Some(o),
            Err(mpsc::TryRecvError::Empty) => None,
            Err(mpsc::TryRecvError::Disconnected) => Some(FolderImported {
                op: None,
                reports: vec![FileReport {
                    file: self.dir.display().to_string(),
                    clips: 0,
                    rigs: 0,
                    warnings: Vec::new(),
                    faults: vec!["the import stopped unexpectedly".into()],
                }],
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::clip_stem;

    #[test]
    fn an_imported_clips_file_name_does_not_repeat_its_models_name() {
        for (stem, animation, want) in [
            ("capture", "capture", "capture"),
            ("cmu_131_01", "cmu_131_01|cmu_131_01", "cmu_131_01"),
            ("hero", "Armature|Run", "hero_Armature_Run"),
            ("hero", "hero|Run", "hero_Run"),
            ("CesiumMan", "animation0", "CesiumMan_animation0"),
            ("Hero", "hero", "Hero"),
            ("hero", "", "hero"),
            ("hero", "walk cycle", "hero_walk_cycle"),
        ] {
            assert_eq!(clip_stem(stem, animation), want, "{stem} / {animation}");
        }
    }
}
