//! What the fuzz targets assert, shared by `fuzz/fuzz_targets/*` and the regression test
//! `engine/tests/all/fuzz_regressions.rs` (its test binary includes this file by path), so a crash the
//! fuzzer found is replayed under `cargo test` against the very same rule.
//!
//! The rule, per input kind: the loader returns `Ok` or an error, never a panic, a hang or a huge
//! allocation (libFuzzer's `-timeout` and `-malloc_limit_mb` catch those); and what the loader
//! (and so `marrow check`) accepts, the runtime plays to finite numbers without an error. Each
//! function returns `Err` naming the broken promise; a panic inside the engine is a crash too.
//!
//! It deliberately does not judge error messages or the values themselves, only that they exist
//! and are finite: the exact-value behaviour lives in the engine's own tests.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use marrow_engine::glam::Mat4;
use marrow_engine::gltf::{self, ScenePose};
use marrow_engine::graph::{GraphInstance, compile, load_graph};
use marrow_engine::prelude::{Clip, Skeleton, Transform};
use marrow_engine::project::{Library, Project, check_project_files, clip_from_str, skeleton_from_str};

/// The repository's root (this file lives one folder below it in both crates that include it).
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The locomotion sample's files (relative path, text): the project the project and graph
/// targets mutate.
pub fn locomotion_files() -> Vec<(String, String)> {
    const FILES: [&str; 14] = [
        "project.ron",
        "assets/runner.skeleton.ron",
        "clips/stride.clip.ron",
        "clips/idle.clip.ron",
        "clips/sprint.clip.ron",
        "graphs/locomotion.graph.ron",
        "scenes/main.scene.ron",
        "clips/jump.clip.ron",
        "clips/fall.clip.ron",
        "clips/land.clip.ron",
        "graphs/controller.graph.ron",
        "clips/strafe_l.clip.ron",
        "clips/strafe_r.clip.ron",
        "graphs/steering.graph.ron",
    ];
    let root = repo().join("projects/locomotion");
    FILES
        .iter()
        .map(|f| (f.to_string(), std::fs::read_to_string(root.join(f)).expect("the locomotion sample")))
        .collect()
}

fn finite_mat(m: &Mat4) -> bool {
    m.to_cols_array().iter().all(|v| v.is_finite())
}

fn finite_transform(t: &Transform) -> bool {
    t.translation.is_finite() && t.rotation.is_finite() && t.scale.is_finite()
}

/// glTF bytes (JSON or GLB): imported from memory; when the import succeeds, every animation
/// (and none) is evaluated at its start, a point inside and its end, and every node's world
/// matrix, every morph weight, every joint and skinning matrix and the first 64 vertices of every
/// primitive (morphed, skinned, placed in the world) must be finite, with no job refusing.
/// The input is named by what it starts with ([`gltf_name`]): a `.glb` name would hold JSON to
/// the container rules and refuse it unread. Like every rule here, `Ok(true)` when the input
/// was accepted (imported) and played so, `Ok(false)` when it was refused.
pub fn gltf_bytes(data: &[u8]) -> Result<bool, String> {
    match gltf::import_slice(data, gltf_name(data), None) {
        Ok(scene) => gltf_scene(&scene).map(|()| true),
        Err(_) => Ok(false),
    }
}

/// BVH bytes through the BVH importer (default options); what imports plays as a glTF scene
/// does ([`gltf_scene`]). `Ok(true)`: imported and played finite; `Ok(false)`: refused.
pub fn bvh_bytes(data: &[u8]) -> Result<bool, String> {
    match marrow_engine::bvh::import_slice(data, Path::new("fuzz.bvh"), &Default::default()) {
        Ok(scene) => gltf_scene(&scene).map(|()| true),
        Err(_) => Ok(false),
    }
}

/// Cooked clip bytes (`*.clip.bin`) through the loader: refused by name, or loaded and sampled
/// finite at its start, middle, end and past it, forward and back (contexts sized for clips
/// of up to 4,096 bones; a larger one is only loaded). `Ok(true)`: loaded; `Ok(false)`: refused.
pub fn cooked_clip(data: &[u8]) -> Result<bool, String> {
    use marrow_engine::compressed::{CompressedClip, CompressedContext, CompressedSamplingJob};
    let clip = match CompressedClip::from_cooked(data) {
        Ok(c) => c,
        Err(e) if e.to_string().is_empty() => return Err("a refusal without words".into()),
        Err(_) => return Ok(false),
    };
    let n = clip.bone_count();
    if n > 4096 {
        return Ok(true);
    }
    let bind = vec![Transform::IDENTITY; n];
    let mut out = bind.clone();
    let mut context = CompressedContext::new(n);
    let (s, d) = (clip.start(), clip.duration());
    for t in [s, s + d * 0.37, s + d, s + d + 1.0, s + d * 0.5, s - 1.0] {
        CompressedSamplingJob {
            clip: &clip,
            bind_pose: &bind,
            time: t,
            context: &mut context,
            output: &mut out,
        }
        .run()
        .map_err(|e| format!("loaded, yet sampling at {t} fails: {e}"))?;
        if let Some(b) = out.iter().position(|x| !x.is_finite()) {
            return Err(format!("loaded, yet bone {b} samples non-finite at {t}"));
        }
    }
    Ok(true)
}

/// FBX bytes through the importer, then played as [`gltf_scene`] plays a glTF scene: refused by
/// name (`Ok(false)`), or imported and finite (`Ok(true)`).
pub fn fbx_bytes(data: &[u8]) -> Result<bool, String> {
    match marrow_engine::fbx::import_slice(data, Path::new("fuzz.fbx")) {
        Ok(scene) => gltf_scene(&scene).map(|()| true),
        Err(e) if e.to_string().is_empty() => Err("a fault without words".into()),
        Err(_) => Ok(false),
    }
}

/// The file name glTF bytes are imported under: `fuzz.glb` for bytes with the GLB magic,
/// `fuzz.gltf` for any other (JSON, or what a mutation left of it), so that a JSON input reaches
/// the JSON parser and the importer's rules.
pub fn gltf_name(data: &[u8]) -> &'static Path {
    Path::new(if data.starts_with(b"glTF") { "fuzz.glb" } else { "fuzz.gltf" })
}

/// The play half of [`gltf_bytes`], for a scene already imported (from a file, in tests).
pub fn gltf_scene(scene: &gltf::ImportedScene) -> Result<(), String> {
    let mut pose = ScenePose::new(scene);
    let anims = std::iter::once(None).chain((0..scene.animations.len().min(8)).map(Some));
    let mut matrices: Vec<Mat4> = Vec::new();
    for anim in anims {
        let d = anim.map_or(0.0, |a| scene.animations[a].duration);
        if !d.is_finite() || d < 0.0 {
            return Err(format!("animation {anim:?}: duration {d}"));
        }
        for t in [0.0, d * 0.37, d] {
            let at = format!("animation {anim:?} at {t}");
            pose.evaluate(scene, anim, t)
                .map_err(|e| format!("{at}: imported, yet evaluation fails: {e}"))?;
            if let Some(i) = pose.world.iter().position(|m| !finite_mat(m)) {
                return Err(format!("{at}: node {i}'s world matrix is not finite"));
            }
            if let Some(i) = pose.morph_weights.iter().position(|w| w.iter().any(|v| !v.is_finite())) {
                return Err(format!("{at}: node {i}'s morph weights are not finite"));
            }
            for (si, s) in scene.skins.iter().enumerate() {
                matrices.resize(s.joints.len(), Mat4::IDENTITY);
                pose.joint_world(scene, si, &mut matrices);
                if matrices.iter().any(|m| !finite_mat(m)) {
                    return Err(format!("{at}: skin {si}'s joint matrices are not finite"));
                }
            }
            for (ni, node) in scene.nodes.iter().enumerate() {
                let Some(mesh) = node.mesh.and_then(|m| scene.meshes.get(m)) else { continue };
                if let Some(si) = node.skin.filter(|&s| s < scene.skins.len()) {
                    let mut m = vec![Mat4::IDENTITY; scene.skins[si].joints.len()];
                    pose.skinning_matrices(scene, si, ni, &mut m);
                    if let Some(j) = m.iter().position(|m| !finite_mat(m)) {
                        return Err(format!("{at}: node {ni}'s skinning matrix {j} is not finite"));
                    }
                }
                for pi in 0..mesh.primitives.len() {
                    let placed = pose
                        .placed_vertices(scene, ni, pi, 64)
                        .map_err(|e| format!("{at}: mesh node {ni} primitive {pi}: a job refuses: {e}"))?;
                    if let Some(v) = placed.iter().position(|v| !v.iter().all(|x| x.is_finite())) {
                        return Err(format!("{at}: mesh node {ni} primitive {pi}: vertex {v} is not finite"));
                    }
                }
            }
        }
    }
    Ok(())
}

/// A project: the locomotion sample with one file replaced by `data` (its first byte picks
/// which, the rest is the text), through [`project_with`] (whose `Ok` says whether it played).
pub fn project(data: &[u8]) -> Result<bool, String> {
    let Some((&pick, rest)) = data.split_first() else { return Ok(false) };
    let mut files = locomotion_files();
    let k = pick as usize % files.len();
    files[k].1 = String::from_utf8_lossy(rest).into_owned();
    project_with(&repo().join("projects/locomotion"), &files)
}

/// The sample projects under `projects/`, by folder name, sorted.
pub fn sample_projects() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(repo().join("projects"))
        .expect("the sample projects")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("project.ron").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The folder of sample project `name`.
pub fn sample_root(name: &str) -> PathBuf {
    repo().join("projects").join(name)
}

/// Every RON file of sample project `name` (relative path with `/`, text), sorted by path: the
/// files [`project_with`] reads from memory (binary assets it reads from the folder).
pub fn sample_files(name: &str) -> Vec<(String, String)> {
    let root = sample_root(name);
    let mut out = Vec::new();
    let mut dirs = vec![root.clone()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).expect("a sample folder").filter_map(|e| e.ok()) {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "ron") {
                let rel = p.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
                out.push((rel, std::fs::read_to_string(&p).expect("a sample file")));
            }
        }
    }
    out.sort();
    out
}

/// The sample projects with their RON files ([`sample_files`]), read once for
/// [`sample_project`].
pub fn sample_projects_read() -> Vec<(PathBuf, Vec<(String, String)>)> {
    sample_projects().iter().map(|name| (sample_root(name), sample_files(name))).collect()
}

/// One of the sample projects (`projects`, from [`sample_projects_read`]) with one RON file
/// replaced: `data` is a first line naming the file by project folder and path
/// (`cesium_man/scenes/main.scene.ron`), then the text; then [`project_with`]. An input whose
/// first line names no file of the samples is passed over (`Ok(None)`); else `Ok(Some(played))`,
/// `played` as [`project_with`] returns it.
pub fn sample_project(
    data: &[u8],
    projects: &[(PathBuf, Vec<(String, String)>)],
) -> Result<Option<bool>, String> {
    let Some(input) = sample_project_files(data, projects) else { return Ok(None) };
    project_with(&projects[input.project].0, &input.files)
        .map(Some)
        .map_err(|e| format!("{}: {e}", input.name))
}

/// What [`sample_project`] plays.
pub struct SampleInput {
    /// The project's files, the named one's text replaced.
    pub files: Vec<(String, String)>,
    /// The project's index in the list.
    pub project: usize,
    /// `projects/` and the first line.
    pub name: String,
}

/// What [`sample_project`] plays: the files of the project the first line names with the
/// named file's text replaced; `None` when the line names no file of the samples.
pub fn sample_project_files(
    data: &[u8],
    projects: &[(PathBuf, Vec<(String, String)>)],
) -> Option<SampleInput> {
    let cut = data.iter().position(|&b| b == b'\n')?;
    let name = std::str::from_utf8(&data[..cut]).ok()?;
    let (project, path) = name.split_once('/')?;
    let a = projects.iter().position(|(root, _)| root.file_name().is_some_and(|n| n == project))?;
    let b = projects[a].1.iter().position(|(p, _)| p == path)?;
    let mut files = projects[a].1.clone();
    files[b].1 = String::from_utf8_lossy(&data[cut + 1..]).into_owned();
    Some(SampleInput { files, project: a, name: format!("projects/{name}") })
}

/// A project at `root` read from `files` (relative path, text; binary assets from `root`): when
/// `marrow check`'s rules find no error, it must load, build its library, instantiate every
/// scene and play three ticks and a paused frame with every animator playing, leaving finite
/// matrices and no runtime fault. `Ok(true)` when the check passed and it played so,
/// `Ok(false)` when the check refused it.
pub fn project_with(root: &Path, files: &[(String, String)]) -> Result<bool, String> {
    let report = check_project_files(root, files);
    if !report.errors.is_empty() {
        return Ok(false);
    }
    let project =
        Project::from_files(root, files).map_err(|e| format!("checked ok, yet fails to load: {e}"))?;
    let lib = Library::load(&project, root).map_err(|e| format!("checked ok, yet the library fails: {e}"))?;
    for scene in project.scenes.keys() {
        let mut world =
            lib.instantiate(&project, scene).map_err(|e| format!("checked ok, yet {scene} fails: {e}"))?;
        let rigs: Vec<_> = world.rigs().collect();
        for &r in &rigs {
            if let Some(a) = world.animator_mut(r) {
                a.play();
            }
        }
        world.frame(3, 1.0 / 60.0);
        world.frame(0, 1.0 / 60.0);
        for e in world.entities().collect::<Vec<_>>() {
            if world.world_matrix(e).is_some_and(|m| !finite_mat(&m)) {
                return Err(format!("{scene}: entity {:?}'s world matrix is not finite", world.path(e)));
            }
        }
        for &r in &rigs {
            if let Some(p) = world.rig_pose(r)
                && (!p.local.iter().all(finite_transform)
                    || !p.model.iter().all(finite_mat)
                    || !p.palette.iter().all(finite_mat))
            {
                return Err(format!("{scene}: rig {:?}'s pose is not finite", world.path(r)));
            }
        }
        if let Some(f) = world.faults().entries().first() {
            return Err(format!("{scene}: checked ok, yet it plays with a fault: {f}"));
        }
    }
    Ok(true)
}

/// The rig and clips the graph target compiles against (the locomotion sample's).
pub struct GraphRig {
    skeleton: Skeleton,
    clips: Vec<(String, Arc<Clip>)>,
}

impl GraphRig {
    /// Loads the locomotion sample's skeleton and clips.
    pub fn new() -> Self {
        let files = locomotion_files();
        let text = |p: &str| files.iter().find(|(k, _)| k == p).map(|(_, t)| t.as_str()).unwrap_or_default();
        let skeleton =
            skeleton_from_str(text("assets/runner.skeleton.ron"), Path::new("runner.skeleton.ron"))
                .expect("the sample skeleton");
        let clips = files
            .iter()
            .map(|(p, _)| p.as_str())
            .filter(|p| p.starts_with("clips/"))
            .map(|p| (p.to_string(), clip_from_str(text(p), Path::new(p)).expect("a sample clip").clip))
            .collect();
        GraphRig { skeleton, clips }
    }
}

impl Default for GraphRig {
    fn default() -> Self {
        Self::new()
    }
}

/// A graph file: loaded (repairing what the loader repairs) and compiled for the locomotion rig;
/// when it compiles, it is evaluated over a few ticks with every float parameter at its default
/// and then at 0, 0.5, 1, -3 and 1e6 (bools true above 0.5, triggers set each time), and every
/// local transform must be finite. `Ok(true)` when it compiled and evaluated so, `Ok(false)`
/// when the loader or the compiler refused it.
pub fn graph(data: &[u8], rig: &GraphRig) -> Result<bool, String> {
    let text = String::from_utf8_lossy(data);
    let Ok((graph, _repaired)) = load_graph(&text) else { return Ok(false) };
    let clip_of = |p: &str| rig.clips.iter().find(|(k, _)| k == p).map(|(_, c)| c.clone());
    let Ok(program) = compile(&graph, &rig.skeleton, &clip_of) else { return Ok(false) };
    let of_type = |want: &str| -> Vec<String> {
        program
            .parameters()
            .iter()
            .filter(|p| p.default.type_name() == want)
            .map(|p| p.name.clone())
            .collect()
    };
    let (floats, bools, triggers) = (of_type("float"), of_type("bool"), of_type("trigger"));
    let mut instance = GraphInstance::new(Arc::new(program));
    let mut local = vec![Transform::IDENTITY; rig.skeleton.bone_count()];
    for value in [None, Some(0.0), Some(0.5), Some(1.0), Some(-3.0), Some(1e6)] {
        if let Some(v) = value {
            for name in &floats {
                instance.set_float(name, v);
            }
            // State machines: bools follow the value, every trigger is set.
            for name in &bools {
                instance.set_bool(name, v > 0.5);
            }
            for name in &triggers {
                instance.set_trigger(name);
            }
        }
        for _ in 0..3 {
            instance.advance(0.1);
            instance
                .evaluate(&rig.skeleton, &mut local)
                .map_err(|e| format!("compiled, yet evaluation fails (parameters at {value:?}): {e}"))?;
            if let Some(b) = local.iter().position(|t| !finite_transform(t)) {
                return Err(format!("parameters at {value:?}: bone {b}'s local transform is not finite"));
            }
            if instance
                .adjusts()
                .iter()
                .any(|a| !(a.rotation.is_finite() && a.offset.is_finite() && a.scale.is_finite()))
            {
                return Err(format!("parameters at {value:?}: an adjust is not finite"));
            }
        }
    }
    Ok(true)
}
