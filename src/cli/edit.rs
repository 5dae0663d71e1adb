//! `marrow edit PATH` (and `marrow` with no arguments): opens the docked editor.

use std::path::{Path, PathBuf};

use marrow_engine::render::ShaderSource;

/// Arguments of `marrow edit`.
#[derive(Debug, clap::Args)]
pub struct EditArgs {
    /// The project to open: a folder or its `project.ron` (default: the runner sample).
    pub project: Option<PathBuf>,
    /// Start a new project: created and saved in PROJECT (a new or empty folder), or, without
    /// PROJECT, unsaved until File > Save As.
    #[arg(long)]
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

/// The timeline's marker sound: `footstep` markers play the runner's synthesized footstep.
/// The audio device is opened on a thread of its own, on the first footstep (silent, said
/// once, without an output device).
fn footstep_sound() -> marrow_editor::app::MarkerSound {
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        let mut out: Option<super::runner::audio::Footsteps> = None;
        for name in rx {
            if name == "footstep" {
                out.get_or_insert_with(super::runner::audio::Footsteps::open).play();
            }
        }
    });
    let tx = std::sync::Mutex::new(tx);
    marrow_editor::app::MarkerSound(std::sync::Arc::new(move |name: &str| {
        if let Ok(tx) = tx.lock() {
            let _ = tx.send(name.to_owned());
        }
    }))
}

/// Opens the editor.
pub fn run(args: &EditArgs) -> anyhow::Result<std::process::ExitCode> {
    let project = match (&args.new, &args.project) {
        (true, Some(dir)) => {
            marrow_editor::create_project(dir)?;
            Some(dir.clone())
        }
        (true, None) => None,
        (false, p) => Some(p.clone().unwrap_or_else(default_project)),
    };
    marrow_editor::run(project, ShaderSource::resolve(args.shaders.as_deref()), Some(footstep_sound()))?;
    Ok(std::process::ExitCode::SUCCESS)
}
