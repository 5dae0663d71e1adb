//! `marrow edit PATH` (and `marrow` with no arguments): opens the docked editor.

use std::path::{Path, PathBuf};

use marrow_engine::render::ShaderSource;

/// Arguments of `marrow edit`.
#[derive(Debug, clap::Args)]
pub struct EditArgs {
    /// The project to open: a folder or its `project.ron` (default: the runner sample).
    pub project: Option<PathBuf>,
    /// Start with a new, empty project instead.
    #[arg(long, conflicts_with = "project")]
    pub new: bool,
    /// Shader directory to draw with and hot-reload (default: `./shaders` when it exists, else
    /// the embedded shaders).
    #[arg(long)]
    pub shaders: Option<PathBuf>,
}

/// The sample project the editor opens by default: `projects/runner` under the current folder,
/// else the one in this source tree.
pub fn default_project() -> PathBuf {
    let here = Path::new("projects/runner");
    if here.join("project.ron").is_file() {
        here.to_owned()
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("projects/runner")
    }
}

/// Opens the editor.
pub fn run(args: &EditArgs) -> anyhow::Result<std::process::ExitCode> {
    let project = if args.new { None } else { Some(args.project.clone().unwrap_or_else(default_project)) };
    marrow_editor::run(project, ShaderSource::resolve(args.shaders.as_deref()))?;
    Ok(std::process::ExitCode::SUCCESS)
}
