//! `marrow check PATH`: validates a glTF or BVH file, or a whole project (a project folder or its
//! `project.ron`), and lists every fault and warning with where it is. Exit status 1 when there
//! are errors.

use std::path::PathBuf;
use std::process::ExitCode;

use marrow_engine::bvh;
use marrow_engine::project::{PROJECT_FILE, check_project};

/// Arguments of `marrow check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// A .gltf, .glb, .bvh or .fbx file, a project folder, or a project's project.ron.
    pub path: PathBuf,
    /// How a BVH file is read.
    #[command(flatten)]
    pub bvh: super::model::BvhArgs,
}

/// Runs the check, printing one line per fault (`PATH: error: WHERE: WHAT`) and warning.
pub fn run(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let path = &args.path;
    if path.is_dir() || path.file_name().is_some_and(|n| n == PROJECT_FILE) {
        return check_a_project(path);
    }
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    if ext.as_deref() == Some("bvh") {
        return check_bvh(path, &args.bvh);
    }
    if !matches!(ext.as_deref(), Some("gltf" | "glb" | "fbx")) {
        anyhow::bail!(
            "{}: cannot check this kind of file (expected .gltf, .glb, .bvh, .fbx, a project folder or project.ron)",
            path.display()
        );
    }
    let shown = path.display();
    // An FBX file's fault comes back as one glTF-shaped fault naming where.
    match marrow_engine::project::import_model(path) {
        Ok(scene) => {
            for w in &scene.warnings {
                println!("{shown}: warning: {w}");
            }
            println!("{shown}: ok ({} warning(s))", scene.warnings.len());
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            let faults = e.faults();
            for f in &faults {
                println!("{shown}: error: {f}");
            }
            println!("{shown}: {} error(s)", faults.len());
            Ok(ExitCode::FAILURE)
        }
    }
}

/// Checks a BVH file: `PATH: ok (N joints, F frames at R Hz)`, or its one fault as
/// `PATH: error: line L:C: WHAT`.
fn check_bvh(path: &std::path::Path, args: &super::model::BvhArgs) -> anyhow::Result<ExitCode> {
    let shown = path.display();
    match bvh::import(path, &args.options()) {
        Ok(scene) => {
            let bones = scene.rigs.first().map_or(0, |r| r.skeleton.bone_count());
            let clip = scene.animations.first().and_then(|a| a.clips.first()).map(|c| &c.clip);
            let frames = clip.and_then(|c| {
                c.channels().iter().find_map(|ch| {
                    ch.rotation.as_ref().map(|t| t.len()).or(ch.translation.as_ref().map(|t| t.len()))
                })
            });
            let rate = clip.map_or(0.0, |c| c.frame_rate);
            println!("{shown}: ok ({bones} bones, {} frames at {rate} Hz)", frames.unwrap_or(0));
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            match e.fault() {
                Some((at, fault)) => println!("{shown}: error: line {at}: {fault}"),
                None => println!("{shown}: error: {e}"),
            }
            println!("{shown}: 1 error(s)");
            Ok(ExitCode::FAILURE)
        }
    }
}

/// Checks a whole project: every file parses, every reference resolves, every skeleton, clip and
/// graph fault is named. One line per error (`error: FILE: WHAT`) and warning.
fn check_a_project(path: &std::path::Path) -> anyhow::Result<ExitCode> {
    let report = check_project(path);
    for w in &report.warnings {
        println!("warning: {w}");
    }
    for e in &report.errors {
        println!("error: {e}");
    }
    let shown = path.display();
    if report.errors.is_empty() {
        println!("{shown}: ok ({} file(s), {} warning(s))", report.files, report.warnings.len());
        Ok(ExitCode::SUCCESS)
    } else {
        println!("{shown}: {} error(s)", report.errors.len());
        Ok(ExitCode::FAILURE)
    }
}
