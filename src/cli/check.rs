//! `marrow check PATH`: validates a glTF file (projects later) and lists every fault and
//! warning with where it is. Exit status 1 when there are errors.

use std::path::PathBuf;
use std::process::ExitCode;

use marrow_engine::gltf;

/// Arguments of `marrow check`.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// A .gltf or .glb file.
    pub path: PathBuf,
}

/// Runs the check, printing one line per fault (`PATH: error: WHERE: WHAT`) and warning.
pub fn run(args: &CheckArgs) -> anyhow::Result<ExitCode> {
    let path = &args.path;
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    if !matches!(ext.as_deref(), Some("gltf" | "glb")) {
        anyhow::bail!("{}: cannot check this kind of file (expected .gltf or .glb)", path.display());
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
