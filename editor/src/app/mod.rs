//! The editor application: it owns the three layers (the [`Document`], the [`Session`] and the
//! [`UiState`]), the dock, the panels and the log, and runs one frame as
//!
//! 1. the session catches up with the document and runs the clock's ticks;
//! 2. global shortcuts are read from the one command table ([`crate::command_table`]), with
//!    egui-winit's clipboard events (unless a text field has the keyboard);
//! 3. the menu bar, the status bar and the dock of panels are drawn; panels only send commands;
//! 4. the commands are applied in one place ([`EditorApp::apply`]): edits to the document,
//!    transport to the session, file commands here;
//! 5. the session syncs again and recomposes, the title, autosave and statistics are updated.
//!
//! File handling: opening a project that fails shows its faults in the Log and a dialog naming
//! the file and location, and keeps the current project; opening or quitting with unsaved
//! changes asks first; a recovery file is written every minute while dirty and offered on the
//! next open.
//!
//! This file holds the app, its frame and [`EditorApp::apply`]; `files` the file handling and
//! its dialogs; `menus` the menu bar, the status bar and the keys of the command table.
//!
//! Not here: what panels draw (`crate::panels`), how edits compute (`crate::document`).

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use egui_dock::{DockArea, DockState};
use egui_wgpu::RenderState;
use marrow_engine::graph::AnimGraph;
use marrow_engine::project::Project;
use marrow_engine::render::ShaderSource;

use crate::command::Command;
use crate::cx::Cx;
use crate::dock::{Tab, default_layout};
use crate::document::{Document, EditError, Op, Slot, Value};
use crate::import::ImportJob;
use crate::log::{EditorLog, Level};
use crate::notice::Notice;
use crate::panels::{Panels, Viewer};
use crate::recovery::{self, Autosave, Recovery};
use crate::session::Session;
use crate::stats::Stats;
use crate::ui_state::{Selection, UiState};
use crate::viewport::gpu::ViewportGpu;

mod files;
pub use files::DEFER_CLIPS_ABOVE;
mod menus;
mod reload;

use files::file_dialog;

/// A sound played when a marker of that name is crossed (the runner's footsteps), given by
/// the binary (which owns the audio device).
#[derive(Clone)]
pub struct MarkerSound(pub std::sync::Arc<dyn Fn(&str) + Send + Sync>);

impl std::fmt::Debug for MarkerSound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MarkerSound")
    }
}

/// How the app starts.
#[derive(Clone, Debug)]
pub struct AppOptions {
    /// The project to open (`None`: a new, empty project).
    pub project: Option<PathBuf>,
    /// Where the viewport's shaders come from (a directory is hot-reloaded).
    pub shaders: ShaderSource,
    /// Time between autosaves while the project has unsaved changes.
    pub autosave: Duration,
    /// Plays a marker's sound (the timeline's Audio toggle).
    pub marker_sound: Option<MarkerSound>,
}

impl Default for AppOptions {
    fn default() -> Self {
        Self {
            project: None,
            shaders: ShaderSource::Embedded,
            autosave: Duration::from_secs(60),
            marker_sound: None,
        }
    }
}

/// What to do once the unsaved-changes question is answered.
#[derive(Clone, Debug, PartialEq)]
pub enum After {
    /// Quit.
    Quit,
    /// Open this project.
    Open(PathBuf),
    /// Start a new project.
    New,
}

/// A dialog over the editor.
#[derive(Clone, Debug, PartialEq)]
pub enum Modal {
    /// "Save changes before …?"
    Unsaved(After),
    /// Something failed: a title and what, naming the file and location.
    Error {
        /// The title.
        title: String,
        /// The message.
        body: String,
    },
    /// A recovery file was found when opening.
    Recover {
        /// The project folder.
        root: PathBuf,
        /// The recovered files.
        recovery: Recovery,
    },
    /// What a long job did, a line each (a folder import's report per file).
    Report {
        /// The title.
        title: String,
        /// The lines.
        lines: Vec<String>,
    },
    /// A file changed on disk while it has unsaved edits in the editor: keep mine, take
    /// theirs, or show both in the Log.
    Reload {
        /// The file.
        slot: Slot,
        /// Its value on disk.
        theirs: Value,
    },
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum FilePurpose {
    Open,
    SaveAs,
    Import,
    Export,
}

const LAYOUT_KEY: &str = "marrow.layout";
const RECENT_KEY: &str = "marrow.recent";
const VIEW_KEY: &str = "marrow.view";

/// The editor.
pub struct EditorApp {
    /// The authored project with its history.
    pub doc: Document,
    /// The running preview.
    pub session: Session,
    /// Selection, camera, view toggles.
    pub ui: UiState,
    /// The dock layout.
    pub dock: DockState<Tab>,
    /// The panels' own state.
    pub panels: Panels,
    /// The log.
    pub log: EditorLog,
    /// Frame statistics.
    pub stats: Stats,
    /// The dialog shown, if any.
    pub modal: Option<Modal>,
    /// Recently opened projects, newest first.
    pub recent: Vec<PathBuf>,
    /// The status bar's transient line (an export done or refused).
    pub notice: Option<Notice>,
    /// The scale File > Import Model gives a model: its file's units in metres (the import
    /// dialog's Units, `crate::import::UNITS`).
    pub import_scale: f32,
    /// The import dialog's measure of the file it has selected (see `crate::import::SizeProbe`).
    import_probe: Option<crate::import::SizeProbe>,
    commands: Vec<Command>,
    gesture: u64,
    /// A panel asked to keep the gesture open through the next frame ([`Command::HoldGesture`]).
    hold_gesture: bool,
    render: Option<RenderState>,
    options: AppOptions,
    last_frame: Option<f64>,
    /// The last test probe file written (see [`crate::probe`]).
    probe_last: String,
    title: String,
    file_dialog: egui_file_dialog::FileDialog,
    file_purpose: Option<FilePurpose>,
    autosave: Autosave,
    import: Option<ImportJob>,
    folder_import: Option<crate::import::FolderImportJob>,
    /// The watcher of the project folder (files changed outside the editor).
    watch: Option<reload::Watch>,
    /// Files changed on disk with unsaved edits here, waiting for their dialog.
    conflicts: Vec<(Slot, Value)>,
    quit: bool,
}

impl std::fmt::Debug for EditorApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EditorApp")
            .field("root", &self.doc.root())
            .field("modal", &self.modal)
            .finish_non_exhaustive()
    }
}

/// The name of the file dialog's model filter (File > Import Model picks through it).
pub const GLTF_FILTER: &str = "Models (.gltf, .glb, .bvh, .fbx)";

/// A new project: one scene with a ground box, never saved.
pub fn new_project() -> Project {
    use marrow_engine::math::Transform;
    use marrow_engine::scene::{EntityDesc, MeshDesc, SceneDesc};
    let mut p = Project::default();
    p.manifest.name = "untitled".into();
    p.manifest.scenes.push("scenes/main.scene.ron".into());
    p.scenes.insert(
        "scenes/main.scene.ron".into(),
        std::sync::Arc::new(SceneDesc {
            name: "main".into(),
            entities: vec![EntityDesc {
                name: "Ground".into(),
                transform: Some(Transform::from_translation(glam::Vec3::new(0.0, -0.01, 0.0))),
                mesh: Some(MeshDesc::Box { half_extents: glam::Vec3::new(4.0, 0.01, 4.0) }),
                ..Default::default()
            }],
        }),
    );
    p
}

impl EditorApp {
    /// The editor inside eframe: the device comes from eframe, the layout, recent projects and
    /// view toggles from its storage.
    pub fn new(cc: &eframe::CreationContext<'_>, options: AppOptions) -> Self {
        let mut app = Self::headless(options, cc.wgpu_render_state.clone());
        if let Some(storage) = cc.storage {
            if let Some(dock) = eframe::get_value::<DockState<Tab>>(storage, LAYOUT_KEY) {
                app.dock = dock;
                // A layout saved by an older build may lack newer tabs.
                for tab in Tab::ALL {
                    if app.dock.find_tab(&tab).is_none() {
                        crate::dock::show_tab(&mut app.dock, tab);
                    }
                }
            }
            if let Some(recent) = eframe::get_value::<Vec<PathBuf>>(storage, RECENT_KEY) {
                app.recent = recent;
            }
            if let Some((skeletons, grid)) = eframe::get_value::<(bool, bool)>(storage, VIEW_KEY) {
                app.ui.show_skeletons = skeletons;
                app.ui.show_grid = grid;
            }
        }
        app
    }

    /// The editor without eframe's storage (tests, benchmarks): `render` is the wgpu state to
    /// draw the viewport with (`None`: no viewport image).
    pub fn headless(options: AppOptions, render: Option<RenderState>) -> Self {
        let mut log = EditorLog::default();
        if let Some(rs) = &render
            && let Err(e) = ViewportGpu::install(rs, options.shaders.clone())
        {
            log.push(Level::Error, "gpu", format!("the viewport cannot draw: {e}"));
        }
        let mut app = Self {
            doc: Document::new(new_project(), None),
            session: Session::new(),
            ui: UiState::new(),
            dock: default_layout(),
            panels: Panels::default(),
            log,
            stats: Stats::default(),
            modal: None,
            recent: Vec::new(),
            commands: Vec::new(),
            gesture: 0,
            hold_gesture: false,
            render,
            last_frame: None,
            probe_last: String::new(),
            title: String::new(),
            file_dialog: file_dialog(),
            file_purpose: None,
            autosave: Autosave::new(options.autosave),
            import: None,
            folder_import: None,
            watch: None,
            conflicts: Vec::new(),
            notice: None,
            import_scale: 1.0,
            import_probe: None,
            quit: false,
            options,
        };
        if let Some(p) = app.options.project.clone() {
            app.open(&p);
        }
        app.session.sync(&app.doc);
        app
    }

    /// The window title: "Marrow — " and the project name, with `*` while there are unsaved
    /// changes.
    pub fn title(&self) -> String {
        let name = &self.doc.project().manifest.name;
        let name = if name.is_empty() { "untitled" } else { name };
        format!("Marrow — {name}{}", if self.doc.is_dirty() { " *" } else { "" })
    }

    /// Queues a command (as a panel would).
    pub fn send(&mut self, c: Command) {
        self.commands.push(c);
    }

    /// eframe's wgpu state the viewport draws with (none without a device).
    pub fn render_state(&self) -> Option<&RenderState> {
        self.render.as_ref()
    }

    /// Whether the app asked to close and may.
    pub fn quitting(&self) -> bool {
        self.quit
    }

    /// Applies one command (the single place where the document, the session and the files
    /// change).
    pub fn apply(&mut self, c: Command) {
        match c {
            Command::Edit(op) => self.edit(*op),
            Command::Undo => {
                if let Some(l) = self.doc.undo() {
                    self.log.push(Level::Info, "edit", format!("undo {l}"));
                }
            }
            Command::Redo => {
                if let Some(l) = self.doc.redo() {
                    self.log.push(Level::Info, "edit", format!("redo {l}"));
                }
            }
            Command::GoTo(n) => self.doc.go_to(n),
            Command::Play => self.session.play(),
            Command::Pause => self.session.pause(),
            Command::Stop => self.session.stop(),
            Command::Step => self.session.step(),
            Command::Seek { rig, time } => {
                if let Some(e) = self.session.entity(&rig) {
                    self.session.seek(e, time);
                }
            }
            Command::SetLoop { rig, looping } => {
                if let Some(e) = self.session.entity(&rig) {
                    self.session.set_looping(e, looping);
                }
            }
            Command::PoseBone { rig, bone, transform } => {
                if let Some(e) = self.session.entity(&rig) {
                    self.session.set_pose_override(e, bone, transform);
                }
            }
            Command::ClearPose { rig } => {
                if let Some(e) = self.session.entity(&rig) {
                    self.session.clear_pose(e);
                }
            }
            Command::SetPreviewRange { rig, range } => {
                if let Some(e) = self.session.entity(&rig) {
                    self.session.set_preview_range(e, range);
                }
            }
            Command::PreviewGraph(target) => self.session.set_preview(target),
            Command::PreviewClip(preview) => self.session.set_clip_preview(preview),
            Command::SetGraphParameter { name, value } => self.session.set_preview_parameter(&name, value),
            Command::RewindTo(tick) => {
                self.session.rewind_to(tick);
            }
            Command::Resume { from_here } => self.session.resume(from_here),
            Command::ShowScene(s) => {
                self.session.set_scene(Some(s));
                self.ui.selection = Selection::None;
            }
            Command::New => self.guarded(After::New),
            Command::Open(p) => self.guarded(After::Open(p)),
            Command::Save => self.save(),
            Command::SaveAs(p) => self.save_as(&p),
            Command::Import(p) if p.is_dir() => self.start_folder_import(&p),
            Command::Import(p) => self.start_import(&p),
            Command::ExportGltf { scene, path, options } => self.export(&scene, &path, &options),
            Command::Quit => self.guarded(After::Quit),
            Command::ResetLayout => self.dock = default_layout(),
            Command::NewGraph => self.new_graph(),
            Command::ShowTab(tab) => crate::dock::show_tab(&mut self.dock, tab),
            Command::OpenImportDialog => self.open_import_dialog(),
            Command::OpenRetarget(path) => {
                self.panels.retarget.map = path;
                self.panels.retarget.show(&files::retarget_context(&self.doc, &self.session));
            }
            Command::FrameSelection => self.panels.viewport.request_frame(),
            Command::HoldGesture => self.hold_gesture = true,
            Command::PlaySound(name) => {
                if let Some(s) = &self.options.marker_sound {
                    (s.0)(&name);
                }
            }
            Command::Log { level, source, text } => self.log.push(level, source, text),
        }
    }

    /// Adds an empty graph file under a free name and opens it in the Graph tab.
    fn new_graph(&mut self) {
        let project = self.doc.project();
        let taken =
            |p: &str| project.graphs.contains_key(p) || project.manifest.graphs.iter().any(|g| g == p);
        let path = (1..)
            .map(|i| {
                if i == 1 {
                    "graphs/graph.graph.ron".to_owned()
                } else {
                    format!("graphs/graph{i}.graph.ron")
                }
            })
            .find(|p| !taken(p))
            .unwrap_or_default();
        self.edit(Op::AddFiles {
            label: "New Graph".into(),
            binary: Vec::new(),
            files: vec![(Slot::Graph(path.clone()), Value::Graph(std::sync::Arc::new(AnimGraph::new())))],
            entity: None,
        });
        self.ui.graph = Some(path);
        self.ui.graph_selection.clear();
        crate::dock::show_tab(&mut self.dock, Tab::Graph);
    }

    fn edit(&mut self, op: Op) {
        match self.doc.apply(&op, self.gesture) {
            Ok(false)
                if matches!(&op, Op::Clip { op: crate::document::clip_ops::ClipOp::EulerFilter(_), .. }) =>
            {
                // A command clicked that finds nothing to do says so (no undo step is made).
                let text = "Euler Filter: every key already lies on the hemisphere of the one before; nothing flipped";
                self.log.push(Level::Info, "edit", text.to_owned());
                self.notice = Some(Notice::done(text));
            }
            Ok(_) => {}
            Err(e) => {
                self.log.push(Level::Warning, "edit", format!("{} refused: {e}", op.label()));
                if let EditError::InUse { .. } = &e {
                    self.modal = Some(Modal::Error {
                        title: format!("Cannot {}", op.label().to_lowercase()),
                        body: e.to_string(),
                    });
                }
            }
        }
    }

    /// Logs the deferred clips that arrived (a big project's clips no scene plays, loading in the
    /// background since it opened), with what was repaired in them or kept as damaged.
    fn take_arrived_clips(&mut self) {
        let arrived = self.doc.poll_loading();
        if arrived.is_empty() {
            return;
        }
        for f in &arrived.repaired {
            self.log.push(Level::Warning, "file", format!("{f} (repaired on open)"));
        }
        for e in &arrived.damaged {
            self.log.push(
                Level::Error,
                "file",
                format!("{e} (damaged: the project opened without it; a save never writes over it)"),
            );
        }
        if self.doc.loading().is_none() {
            self.log.push(Level::Info, "file", "every clip of the project is loaded".to_owned());
        }
    }

    fn take_session_faults(&mut self) {
        let faults: Vec<String> = self.session.faults().iter().map(|e| e.to_string()).collect();
        self.log.rebuild_faults(faults);
        for f in self.session.take_new_world_faults() {
            self.log.push(Level::Warning, "scene", f);
        }
    }

    /// Runs one editor frame inside `ui` (eframe's root ui, or a test harness's).
    pub fn frame(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        // Frame time from egui's input clock (real time in eframe, the harness's steps in tests).
        let now = ctx.input(|i| i.time);
        let dt = self.last_frame.map_or(0.0, |t| (now - t).max(0.0));
        if self.last_frame.is_some() {
            self.stats.frame_interval(dt * 1e3);
        }
        self.last_frame = Some(now);
        // A new gesture starts whenever no pointer button is held (unless a panel holds one
        // open, as the timeline's scale does).
        if !ctx.input(|i| i.pointer.any_down()) && !std::mem::take(&mut self.hold_gesture) {
            self.gesture += 1;
        }
        // 1. The session.
        self.session.sync(&self.doc);
        let sf = self.session.update(dt);
        if sf.evaluated {
            self.stats.animation.add(sf.animation_ms);
        }
        self.take_session_faults();
        self.poll_import();
        self.poll_folder_import();
        self.poll_watcher(&ctx);
        if ctx.input(|i| i.viewport().close_requested()) && !self.quit {
            if self.doc.is_dirty() {
                ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
                self.modal = Some(Modal::Unsaved(After::Quit));
            } else {
                self.quit = true;
            }
        }
        // 2. Shortcuts.
        self.shortcuts(&ctx);
        // 3. The UI.
        let t_ui = Instant::now();
        egui::Panel::top("marrow menu").show(ui, |ui| self.menu(ui));
        egui::Panel::bottom("marrow status").show(ui, |ui| self.status(ui));
        let mut commands = std::mem::take(&mut self.commands);
        {
            let cx = Cx::new(
                &self.doc,
                &self.session,
                &mut self.ui,
                &self.log,
                &self.stats,
                self.render.as_ref(),
                &mut commands,
            );
            let mut viewer = Viewer { panels: &mut self.panels, cx };
            egui::CentralPanel::default().frame(egui::Frame::NONE).show(ui, |ui| {
                DockArea::new(&mut self.dock)
                    .id(egui::Id::new("marrow dock"))
                    .show_close_buttons(false)
                    .show_leaf_close_all_buttons(false)
                    .show_inside(ui, &mut viewer);
            });
        }
        self.commands.extend(commands);
        // Editing commands no panel took (the focused one is hidden) lapse.
        self.ui.edit_actions.clear();
        self.next_conflict();
        self.modals(&ctx);
        self.export_window(&ctx);
        self.retarget_window(&ctx);
        self.file_dialog(&ctx);
        let r = self.panels.viewport.report;
        let ui_ms = t_ui.elapsed().as_secs_f64() * 1e3 - if r.extracted { r.extract_ms } else { 0.0 };
        self.stats.record_ui(ui_ms.max(0.0));
        self.stats.palettes = r.palettes;
        self.stats.joint_matrices = r.joint_matrices;
        self.stats.morph_uploads = r.morph_uploads;
        self.stats.palette_uploads = r.palette_uploads;
        self.stats.gpu_timing = r.gpu_timing;
        if r.gpu.is_some() {
            self.stats.gpu = r.gpu;
        }
        if r.extracted {
            self.stats.extraction.add(r.extract_ms);
        }
        if r.submit_ms > 0.0 {
            self.stats.submit.add(r.submit_ms);
        }
        // 4. Commands, in one place (their effects show on the next frame: ask for one).
        let commands = std::mem::take(&mut self.commands);
        if !commands.is_empty() {
            ctx.request_repaint();
        }
        for c in commands {
            self.apply(c);
        }
        // 5. Catch up, title, autosave, repaint.
        self.take_arrived_clips();
        self.session.sync(&self.doc);
        self.session.update(0.0);
        self.take_session_faults();
        let title = self.title();
        if title != self.title {
            ctx.send_viewport_cmd(egui::ViewportCommand::Title(title.clone()));
            self.title = title;
        }
        if self.autosave.due(self.doc.is_dirty())
            && let Some(root) = self.doc.root()
            && let Err(e) = recovery::write(root, self.doc.unsaved_files())
        {
            self.log.push(Level::Warning, "file", format!("autosave failed: {e}"));
        }
        crate::probe::write(&ctx, &self.panels, &self.ui, &self.doc, &self.log, &mut self.probe_last);
        if self.quit {
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
        if self.session.is_playing()
            || self.import.is_some()
            || self.folder_import.is_some()
            || self.doc.loading().is_some()
            || self.reloads_pending()
        {
            ctx.request_repaint();
        }
    }

    /// Writes a recovery file now (what the autosave timer does every interval while dirty).
    pub fn autosave_now(&mut self) -> Result<(), String> {
        let root = self.doc.root().ok_or("the project has no folder")?.to_owned();
        recovery::write(&root, self.doc.unsaved_files())
    }
}

impl eframe::App for EditorApp {
    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        // eframe's CPU time of the previous frame (UI, tessellation, painting).
        if let Some(s) = frame.info().cpu_usage {
            self.stats.record_whole_frame(f64::from(s) * 1e3);
        }
        self.frame(ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, LAYOUT_KEY, &self.dock);
        eframe::set_value(storage, RECENT_KEY, &self.recent);
        eframe::set_value(storage, VIEW_KEY, &(self.ui.show_skeletons, self.ui.show_grid));
    }

    fn auto_save_interval(&self) -> Duration {
        Duration::from_secs(30)
    }
}

/// A channel-based background job's receiving end (for imports).
pub type Pending<T> = mpsc::Receiver<T>;
