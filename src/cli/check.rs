//! `marrow check PATH`: validates a glTF file, or a whole project (a project folder or its
//! `project.ron`), and lists every fault and warning with where it is. Exit status 1 when there
//! are errors.

use std::path::PathBuf;
use std::process::ExitCode;

use marrow_engine::gltf;
use marrow_engine::project::{PROJECT_FILE, check_project};

/// Arguments of `marrow check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// A .gltf or .glb file, a project folder, or a project's project.ron.
    pub path: PathBuf,
}

/// Runs the check, printing one line per fault (`PATH: error: WHERE: WHAT`) and warning.
pub fn run(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let path = &args.path;
    if path.is_dir() || path.file_name().is_some_and(|n| n == PROJECT_FILE) {
        return check_a_project(path);
    }
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    if !matches!(ext.as_deref(), Some("gltf" | "glb")) {
        anyhow::bail!(
            "{}: cannot check this kind of file (expected .gltf, .glb, a project folder or project.ron)",
            path.display()
        );
    }
    let shown = path.display();
    match gltf::import(path) {
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
