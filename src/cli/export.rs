//! `marrow export MODEL --out FILE.glb`: a glTF file re-exported through Marrow's own model as a
//! binary glTF: nodes, meshes with their skin attributes and morph targets, skins, and every
//! animation with its keys exactly as held (LINEAR, STEP, CUBICSPLINE; shared key times share one
//! input accessor) and its markers in `extras`. Written atomically; nothing is written on an
//! error. A project as the input is not supported yet.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use marrow_engine::gltf;
use marrow_engine::project::write_atomic;

/// Arguments of `marrow export`.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// A .gltf or .glb file.
    pub model: PathBuf,
    /// Output `.glb` file.
    #[arg(long)]
    pub out: PathBuf,
}

/// Runs `marrow export`.
pub fn run(args: &ExportArgs) -> anyhow::Result<ExitCode> {
    if args.model.is_dir() || args.model.file_name().is_some_and(|n| n == "project.ron") {
        bail!(
            "{}: exporting a project is not supported yet (export a .gltf or .glb file)",
            args.model.display()
        );
    }
    if args.out.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase).as_deref() != Some("glb") {
        bail!("--out {}: the output is a binary glTF, named .glb", args.out.display());
    }
    let scene = gltf::import(&args.model).with_context(|| format!("importing {}", args.model.display()))?;
    let bytes = gltf::export_glb(&scene)?;
    write_atomic(&args.out, &bytes)?;
    println!(
        "wrote {} ({} bytes: {} nodes, {} meshes, {} skins, {} animations)",
        args.out.display(),
        bytes.len(),
        scene.nodes.len(),
        scene.meshes.len(),
        scene.skins.len(),
        scene.animations.len()
    );
    Ok(ExitCode::SUCCESS)
}
