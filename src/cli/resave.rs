//! `marrow resave PROJECT [--rename NAME]` (hidden): loads a project and saves it again through
//! the editor's save (`save_files`: every file staged, a journal, then the renames), optionally
//! renaming the project and every scene first so that a save changes several files. It exists
//! for the kill-9 harness (`tests/cli_hostile_io.rs`), which kills it midway and checks the
//! project loads whole, old or new.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use marrow_engine::project::{Project, project_root, save_files};

/// Arguments of `marrow resave`.
#[derive(Debug, clap::Args)]
pub struct ResaveArgs {
    /// The project (its folder or `project.ron`).
    pub project: PathBuf,
    /// A new name for the project and every scene (so that the save changes every file).
    #[arg(long)]
    pub rename: Option<String>,
}

/// Runs `marrow resave`.
pub fn run(args: &ResaveArgs) -> anyhow::Result<ExitCode> {
    let mut project = Project::load(&args.project)?;
    if let Some(name) = &args.rename {
        project.manifest.name = name.clone();
        for scene in project.scenes.values_mut().map(std::sync::Arc::make_mut) {
            scene.name = name.clone();
        }
    }
    let root = project_root(&args.project);
    let files: Vec<(String, Vec<u8>)> =
        project.to_files().into_iter().map(|(p, t)| (p, t.into_bytes())).collect();
    save_files(&root, &files, &[]).with_context(|| format!("saving {}", root.display()))?;
    println!("saved {} ({} file(s))", root.display(), files.len());
    Ok(ExitCode::SUCCESS)
}
