//! # marrow-editor
//!
//! Marrow's docked editor over `marrow-engine`, built on eframe (wgpu), egui_dock, egui-snarl
//! and egui_plot. The `marrow` binary opens it with no arguments ([`run`]).
//!
//! Three layers of state, in separate types:
//! - the **document** ([`document::Document`]): the project's authored data, a revision, the
//!   undo record and the saved mark; the only thing ever saved;
//! - the **session** ([`session::Session`]): the running world, library, clock and transport,
//!   derived from the document and rebuilt when its revision moves; never saved;
//! - **UI state** ([`ui_state::UiState`]): selection by path and name, camera, view toggles;
//!   the dock layout and recent projects go to eframe's storage, never into the project.
//!
//! Panels ([`panels`]) read the document and session through a narrow context and send
//! [`command::Command`]s, which the app ([`app::EditorApp`]) applies in one place after the UI.
//!
//! Not here: animation, rendering or file formats (the engine does those).

#![warn(missing_docs)]

pub mod app;
pub mod command;
pub mod command_table;
pub mod cx;
pub mod dock;
pub mod document;
pub mod import;
pub mod log;
pub mod notice;
pub mod panels;
pub mod posing;
pub mod probe;
pub mod recovery;
pub mod retarget;
pub mod rewind;
pub mod session;
pub mod stats;
pub mod ui_state;
pub mod viewport;
pub mod widgets;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use app::{AppOptions, EditorApp};

/// The wgpu device the editor asks for: egui's defaults plus timestamp queries (for the Stats
/// panel's per-pass GPU times) when the adapter has them.
pub fn device_descriptor(adapter: &egui_wgpu::wgpu::Adapter) -> egui_wgpu::wgpu::DeviceDescriptor<'static> {
    use egui_wgpu::wgpu;
    let base = if adapter.get_info().backend == wgpu::Backend::Gl {
        wgpu::Limits::downlevel_webgl2_defaults()
    } else {
        wgpu::Limits::default()
    };
    wgpu::DeviceDescriptor {
        label: Some("marrow editor device"),
        required_features: adapter.features() & wgpu::Features::TIMESTAMP_QUERY,
        required_limits: wgpu::Limits {
            max_texture_dimension_2d: 8192,
            ..base.using_resolution(adapter.limits())
        },
        ..Default::default()
    }
}

/// The wgpu setup the editor runs with (see [`device_descriptor`]), starting from `base`.
pub fn wgpu_setup(base: egui_wgpu::WgpuSetup) -> egui_wgpu::WgpuSetup {
    match base {
        egui_wgpu::WgpuSetup::CreateNew(mut c) => {
            c.device_descriptor = Arc::new(device_descriptor);
            egui_wgpu::WgpuSetup::CreateNew(c)
        }
        other => other,
    }
}

/// Creates a new project in `dir` ([`app::new_project`], named after the folder) and saves it
/// there, for `marrow edit --new DIR`. `dir` must be a new folder or an empty one: a folder that
/// holds anything is refused by name and left as it is (a new project never writes over files).
pub fn create_project(dir: &Path) -> anyhow::Result<()> {
    if dir.exists() {
        let empty =
            std::fs::read_dir(dir).map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?.next().is_none();
        if !empty {
            anyhow::bail!(
                "{} is not empty: a new project goes into a new or empty folder (to open the project there, leave out --new)",
                dir.display()
            );
        }
    }
    std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
    let mut project = app::new_project();
    if let Some(name) = dir.file_name().and_then(|n| n.to_str()) {
        project.manifest.name = name.to_owned();
    }
    document::Document::new(project, None).save_as(dir)?;
    Ok(())
}

/// Opens the editor window on `project` (a folder or its `project.ron`; `None`: a new project)
/// and runs until it is closed. `marker_sound` plays the timeline's marker sounds (the binary
/// owns the audio device).
pub fn run(
    project: Option<PathBuf>,
    shaders: marrow_engine::render::ShaderSource,
    marker_sound: Option<app::MarkerSound>,
) -> anyhow::Result<()> {
    let mut wgpu_options = egui_wgpu::WgpuConfiguration::default();
    wgpu_options.wgpu_setup = wgpu_setup(wgpu_options.wgpu_setup);
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("Marrow")
            .with_inner_size([1440.0, 900.0])
            .with_min_inner_size([720.0, 480.0]),
        renderer: eframe::Renderer::Wgpu,
        wgpu_options,
        ..Default::default()
    };
    let app_options = AppOptions { project, shaders, marker_sound, ..Default::default() };
    eframe::run_native("Marrow", options, Box::new(move |cc| Ok(Box::new(EditorApp::new(cc, app_options)))))
        .map_err(|e| anyhow::anyhow!("the editor window failed: {e}"))
}
