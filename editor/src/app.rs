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
//! Not here: what panels draw (`crate::panels`), how edits compute (`crate::document`).

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use egui_dock::{DockArea, DockState};
use egui_wgpu::RenderState;
use marrow_engine::project::{Project, ProjectError};
use marrow_engine::render::ShaderSource;

use crate::command::Command;
use crate::command_table::UiCommand;
use crate::document::{Document, EditError, EntityOp, Op, tree};
use crate::import::ImportJob;
use crate::log::{EditorLog, Level};
use crate::notice::{Notice, human_size, written_size};
use crate::panels::{Cx, Panels, Tab, Viewer, default_layout};
use crate::recovery::{self, Autosave, Recovery};
use crate::session::Session;
use crate::stats::Stats;
use crate::ui_state::{Focus, Selection, UiState};
use crate::viewport::gpu::ViewportGpu;

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
    /// The scale File > Import glTF gives a model: its file's units in metres (the import
    /// dialog's Units, `crate::import::UNITS`).
    pub import_scale: f32,
    commands: Vec<Command>,
    gesture: u64,
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

/// The name of the file dialog's glTF filter (File > Import glTF picks through it).
pub const GLTF_FILTER: &str = "glTF (.gltf, .glb)";

/// The file dialog of Open, Save As, Import and Export, with the glTF filter selected for
/// picking files.
fn file_dialog() -> egui_file_dialog::FileDialog {
    let gltf = |p: &Path| {
        p.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("gltf") || e.eq_ignore_ascii_case("glb"))
    };
    egui_file_dialog::FileDialog::new()
        .add_file_filter(GLTF_FILTER, egui_file_dialog::Filter::new(gltf))
        .default_file_filter(GLTF_FILTER)
}

/// The import dialog's Units picker: the scale a model is brought in at.
fn units_picker(ui: &mut egui::Ui, scale: &mut f32) {
    ui.label("Units of the file");
    let current = crate::import::UNITS.iter().find(|(_, s)| *s == *scale).map_or("custom", |(n, _)| n);
    let r = egui::ComboBox::from_id_salt("import units").selected_text(current).show_ui(ui, |ui| {
        for (name, s) in crate::import::UNITS {
            ui.selectable_value(scale, s, name);
        }
    });
    crate::panels::inspector::named(r.response, egui::WidgetType::ComboBox, "Units");
    ui.weak(format!("the model comes in at scale {scale}"));
}

/// What the File > Export glTF window reads.
fn export_context<'a>(
    doc: &'a Document,
    session: &'a Session,
) -> crate::panels::export_dialog::ExportContext<'a> {
    crate::panels::export_dialog::ExportContext {
        project: doc.project(),
        library: session.library(),
        revision: doc.revision(),
        root: doc.root(),
        shown_scene: session.scene(),
    }
}

/// A new project: one scene with a ground box, never saved.
pub fn new_project() -> Project {
    use marrow_engine::math::Transform;
    use marrow_engine::scene::{EntityDesc, MeshDesc, SceneDesc};
    let mut p = Project::default();
    p.manifest.name = "untitled".into();
    p.manifest.scenes.push("scenes/main.scene.ron".into());
    p.scenes.insert(
        "scenes/main.scene.ron".into(),
        SceneDesc {
            name: "main".into(),
            entities: vec![EntityDesc {
                name: "Ground".into(),
                transform: Some(Transform::from_translation(glam::Vec3::new(0.0, -0.01, 0.0))),
                mesh: Some(MeshDesc::Box { half_extents: glam::Vec3::new(4.0, 0.01, 4.0) }),
                ..Default::default()
            }],
        },
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
                        crate::panels::show_tab(&mut app.dock, tab);
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
            render,
            last_frame: None,
            probe_last: String::new(),
            title: String::new(),
            file_dialog: file_dialog(),
            file_purpose: None,
            autosave: Autosave::new(options.autosave),
            import: None,
            notice: None,
            import_scale: 1.0,
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

    /// Opens the project at `path`. On failure the current project stays, the faults go to the
    /// Log and a dialog names the file and location.
    pub fn open(&mut self, path: &Path) {
        match Document::open_repairing(path) {
            Ok((doc, repaired)) => {
                let root = doc.root().map(Path::to_owned);
                self.doc = doc;
                self.session = Session::new();
                self.ui.selection = Selection::None;
                self.ui.frame_selection = true;
                self.panels = Panels::default();
                self.log.push(Level::Info, "file", format!("opened {}", path.display()));
                for f in &repaired {
                    self.log.push(Level::Warning, "file", format!("{f} (repaired on open)"));
                }
                for d in self.doc.damaged() {
                    self.log.push(
                        Level::Error,
                        "file",
                        format!(
                            "{} (damaged: the project opened without it; a save never writes over it)",
                            d.error
                        ),
                    );
                }
                self.ui.graph_load_faults = repaired
                    .iter()
                    .filter_map(|f| match f {
                        ProjectError::Graph { path: file, error } => {
                            let rel =
                                file.strip_prefix(root.as_deref().unwrap_or(Path::new(""))).unwrap_or(file);
                            Some((rel.to_string_lossy().replace('\\', "/"), (**error).clone()))
                        }
                        _ => None,
                    })
                    .collect();
                if !repaired.is_empty() {
                    self.modal = Some(Modal::Error {
                        title: format!("{} was repaired", path.display()),
                        body: format!(
                            "{} fault(s) in its clip and graph files were repaired on open (see the Log and the Graph tab): {}\n\nThe sound parts are kept and editable; the files change only when you save.",
                            repaired.len(),
                            repaired.first().map(|f| f.to_string()).unwrap_or_default()
                        ),
                    });
                }
                if let Some(root) = root {
                    self.recent.retain(|r| *r != root);
                    self.recent.insert(0, root.clone());
                    self.recent.truncate(10);
                    match recovery::read(&root) {
                        Some(Ok(recovery)) => self.modal = Some(Modal::Recover { root, recovery }),
                        Some(Err(e)) => {
                            self.log.push(Level::Warning, "file", format!("recovery file unreadable: {e}"))
                        }
                        None => {}
                    }
                }
            }
            Err(e) => {
                // Every fault of the project, for the Log; the dialog names the first.
                let report = marrow_engine::project::check_project(path);
                let all: Vec<String> = if report.errors.is_empty() {
                    vec![e.to_string()]
                } else {
                    report.errors.iter().map(|e| e.to_string()).collect()
                };
                for f in &all {
                    self.log.push(Level::Error, "file", f.clone());
                }
                self.modal = Some(Modal::Error {
                    title: format!("Cannot open {}", path.display()),
                    body: format!("{e}\n\n{} fault(s) in all: see the Log. Nothing was changed.", all.len()),
                });
            }
        }
    }

    fn save(&mut self) {
        if self.doc.root().is_none() {
            self.file_purpose = Some(FilePurpose::SaveAs);
            self.file_dialog.pick_directory();
            return;
        }
        match self.doc.save() {
            Ok(()) => {
                if let Some(r) = self.doc.root() {
                    recovery::remove(r);
                    self.log.push(Level::Info, "file", format!("saved {}", r.display()));
                }
            }
            Err(e) => self.fail("Save failed", &e),
        }
    }

    fn save_as(&mut self, root: &Path) {
        match self.doc.save_as(root) {
            Ok(()) => {
                recovery::remove(root);
                self.log.push(Level::Info, "file", format!("saved {}", root.display()));
                self.recent.retain(|r| r != root);
                self.recent.insert(0, root.to_owned());
            }
            Err(e) => self.fail("Save failed", &e),
        }
    }

    fn fail(&mut self, title: &str, e: &ProjectError) {
        self.log.push(Level::Error, "file", e.to_string());
        self.modal = Some(Modal::Error { title: title.to_owned(), body: e.to_string() });
    }

    /// Runs `after` now, or asks about unsaved changes first.
    fn guarded(&mut self, after: After) {
        if self.doc.is_dirty() {
            self.modal = Some(Modal::Unsaved(after));
        } else {
            self.proceed(after);
        }
    }

    fn proceed(&mut self, after: After) {
        match after {
            After::Quit => self.quit = true,
            After::Open(p) => self.open(&p),
            After::New => {
                self.doc = Document::new(new_project(), None);
                self.session = Session::new();
                self.ui.selection = Selection::None;
                self.panels = Panels::default();
            }
        }
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
            Command::SetGraphParameter { name, value } => self.session.set_preview_parameter(&name, value),
            Command::ShowScene(s) => {
                self.session.set_scene(Some(s));
                self.ui.selection = Selection::None;
            }
            Command::New => self.guarded(After::New),
            Command::Open(p) => self.guarded(After::Open(p)),
            Command::Save => self.save(),
            Command::SaveAs(p) => self.save_as(&p),
            Command::Import(p) => self.start_import(&p),
            Command::ExportGltf { scene, path, options } => self.export(&scene, &path, &options),
            Command::Quit => self.guarded(After::Quit),
            Command::ResetLayout => self.dock = default_layout(),
        }
    }

    fn edit(&mut self, op: Op) {
        match self.doc.apply(&op, self.gesture) {
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

    fn start_import(&mut self, path: &Path) {
        let Some(root) = self.doc.root().map(Path::to_owned) else {
            self.modal = Some(Modal::Error {
                title: "Import glTF".into(),
                body: "Save the project first: an import copies the model into the project folder.".into(),
            });
            return;
        };
        let scene = self.session.scene().map(str::to_owned).unwrap_or_default();
        let project = self.doc.project().clone();
        self.import = Some(ImportJob::start(path.to_owned(), root, scene, project, self.import_scale));
    }

    fn export_window(&mut self, ctx: &egui::Context) {
        use crate::panels::export_dialog::ExportRequest;
        let request = self.panels.export.ui(ctx, &export_context(&self.doc, &self.session));
        match request {
            Some(ExportRequest::Browse) => {
                self.file_purpose = Some(FilePurpose::Export);
                self.file_dialog.save_file();
            }
            Some(ExportRequest::Export(c)) => self.commands.push(c),
            None => {}
        }
    }

    /// Writes the scene at `scene` as glTF (File > Export glTF); the document is untouched.
    fn export(&mut self, scene: &str, path: &Path, options: &marrow_engine::gltf::ExportOptions) {
        use marrow_engine::project::export::{scene_for_export, write_export};
        let result = scene_for_export(self.doc.project(), self.session.library(), Some(scene))
            .and_then(|e| write_export(&e.scene, options, path).map(|r| (r, e.notes)));
        match result {
            Ok((report, notes)) => {
                for n in notes {
                    self.log.push(Level::Warning, "export", n);
                }
                let size = written_size(path).map_or_else(String::new, |b| format!(", {}", human_size(b)));
                let name = path
                    .file_name()
                    .map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into());
                self.notice = Some(Notice::done(format!("Exported {name}{size}")));
                self.log.push(
                    Level::Info,
                    "export",
                    format!(
                        "exported {}{size} ({} animation(s); {} eased segment(s) baked with {} keys, {} written linear)",
                        path.display(),
                        report.animations,
                        report.baked_segments,
                        report.baked_keys,
                        report.linearized_segments
                    ),
                );
            }
            Err(e) => {
                let faults = e.faults();
                for f in &faults {
                    self.log.push(Level::Error, "export", format!("cannot export {}: {f}", path.display()));
                }
                self.notice =
                    Some(Notice::failed(format!("Export of {} failed: nothing written", path.display())));
                self.modal = Some(Modal::Error {
                    title: format!("Cannot export {}", path.display()),
                    body: format!("Nothing was written.\n\n{}", faults.join("\n")),
                });
            }
        }
    }

    fn poll_import(&mut self) {
        let Some(job) = &mut self.import else { return };
        match job.poll() {
            None => {}
            Some(Ok(result)) => {
                for w in &result.warnings {
                    self.log.push(Level::Warning, "import", w.clone());
                }
                let entity = result.entity_path.clone();
                self.edit(result.op);
                if let Some(p) = entity {
                    self.ui.selection = Selection::Entity(p);
                    self.ui.frame_selection = true;
                }
                self.import = None;
            }
            Some(Err(faults)) => {
                for f in &faults {
                    self.log.push(Level::Error, "import", f.clone());
                }
                self.modal = Some(Modal::Error {
                    title: format!("Cannot import {}", job.path().display()),
                    body: format!(
                        "{}\n\n{} fault(s): see the Log.",
                        faults.first().cloned().unwrap_or_default(),
                        faults.len()
                    ),
                });
                self.import = None;
            }
        }
    }

    fn selected_rig(&self) -> Option<String> {
        let world = self.session.world();
        let mut at = self.ui.selection.entity().and_then(|p| world.find(p));
        while let Some(e) = at {
            if world.animator(e).is_some() {
                return world.path(e);
            }
            at = world.parent(e);
        }
        world.rigs().next().and_then(|r| world.path(r))
    }

    fn shortcuts(&mut self, ctx: &egui::Context) {
        use egui::{Key, Modifiers};
        let typing = ctx.egui_wants_keyboard_input();
        // The command table's shortcuts and egui-winit's clipboard events (a modal dialog takes
        // the keys, except saving, undoing and quitting).
        let modal = self.modal.is_some();
        for c in ctx.input_mut(|i| UiCommand::read(i, typing || modal)) {
            if !(modal && matches!(c, UiCommand::Open | UiCommand::Import | UiCommand::SaveAs)) {
                self.run_ui_command(c);
            }
        }
        let mut out = Vec::new();
        if !typing && !modal {
            let rig = self.selected_rig();
            let playing = self.session.is_playing();
            let animator = rig
                .as_deref()
                .and_then(|r| self.session.entity(r))
                .and_then(|e| self.session.world().animator(e));
            let time = animator.map_or(0.0, |a| a.time());
            let duration = rig
                .as_deref()
                .and_then(|r| self.session.entity(r))
                .map_or(0.0, |e| self.session.head_length(e));
            let fps = animator
                .and_then(|a| a.current_clip())
                .map_or(crate::panels::inspector::DEFAULT_FPS, |c| c.frame_rate);
            let frame = 1.0 / fps;
            let scene_focus = self.ui.focus == Focus::Scene;
            ctx.input_mut(|i| {
                let key = |i: &mut egui::InputState, k: Key| i.consume_key(Modifiers::NONE, k);
                if let Some(r) = &rig {
                    // One frame, landing on the frame grid.
                    let on = |t: f32| (t * fps).round() / fps;
                    if !playing && key(i, Key::ArrowLeft) {
                        out.push(Command::Seek { rig: r.clone(), time: on(time - frame).max(0.0) });
                    }
                    if !playing && key(i, Key::ArrowRight) {
                        out.push(Command::Seek { rig: r.clone(), time: on(time + frame).min(duration) });
                    }
                    if scene_focus && key(i, Key::Home) {
                        out.push(Command::Seek { rig: r.clone(), time: 0.0 });
                    }
                    if key(i, Key::End) {
                        out.push(Command::Seek { rig: r.clone(), time: duration });
                    }
                }
                if key(i, Key::W) {
                    self.ui.gizmo = crate::viewport::gizmo::GizmoMode::Translate;
                }
                if key(i, Key::E) {
                    self.ui.gizmo = crate::viewport::gizmo::GizmoMode::Rotate;
                }
                if key(i, Key::R) {
                    self.ui.gizmo = crate::viewport::gizmo::GizmoMode::Scale;
                }
                if let (Selection::Entity(p), true) = (&self.ui.selection, scene_focus)
                    && key(i, Key::F2)
                {
                    self.ui.renaming = Some((p.clone(), crate::document::tree::leaf_name(p).to_owned()));
                }
            });
        }
        self.commands.extend(out);
    }

    /// File > Import glTF's file dialog: glTF files only (the filter can be changed in the
    /// dialog), starting in the project's folder until a file has been picked somewhere.
    fn open_import_dialog(&mut self) {
        self.file_purpose = Some(FilePurpose::Import);
        if let Some(root) = self.doc.root() {
            self.file_dialog.config_mut().initial_directory = root.to_owned();
        }
        self.file_dialog.pick_file();
    }

    /// Carries out a command of the table (from its shortcut or its menu entry).
    fn run_ui_command(&mut self, c: UiCommand) {
        match c {
            UiCommand::Open => {
                self.file_purpose = Some(FilePurpose::Open);
                self.file_dialog.pick_directory();
            }
            UiCommand::Import => self.open_import_dialog(),
            UiCommand::Save => self.commands.push(Command::Save),
            UiCommand::SaveAs => {
                self.file_purpose = Some(FilePurpose::SaveAs);
                self.file_dialog.pick_directory();
            }
            UiCommand::Quit => self.commands.push(Command::Quit),
            UiCommand::Undo => self.commands.push(Command::Undo),
            UiCommand::Redo => self.commands.push(Command::Redo),
            UiCommand::PlayPause => {
                self.commands.push(if self.session.is_playing() { Command::Pause } else { Command::Play })
            }
            _ => {
                if c.is_edit() {
                    match self.ui.focus {
                        Focus::Timeline | Focus::Graph => self.ui.edit_actions.push(c),
                        Focus::Scene => self.scene_action(c),
                    }
                }
            }
        }
    }

    /// An editing command with the scene focused: it acts on the selected entity (with its
    /// children); a paste puts the copy beside where the copied entity was, under a free name.
    fn scene_action(&mut self, a: UiCommand) {
        let Some(scene) = self.session.scene().map(str::to_owned) else { return };
        let Some(desc) = self.doc.project().scenes.get(&scene) else { return };
        let selected = match &self.ui.selection {
            Selection::Entity(p) => Some(p.clone()),
            _ => None,
        };
        if a == UiCommand::Frame {
            self.ui.frame_selection = true;
        }
        if matches!(a, UiCommand::Copy | UiCommand::Cut | UiCommand::Duplicate)
            && let Some(p) = &selected
            && let Some(e) = tree::find(desc, p)
        {
            self.ui.entity_clipboard = Some((tree::parent_path(p).map(str::to_owned), e.clone()));
        }
        if matches!(a, UiCommand::Delete | UiCommand::Cut)
            && let Some(p) = selected
        {
            let op = Op::Entity { scene: scene.clone(), entity: p, op: EntityOp::Delete };
            let op = if a == UiCommand::Cut {
                Op::Batch { label: "Cut Entity".into(), ops: vec![op] }
            } else {
                op
            };
            self.commands.push(Command::Edit(Box::new(op)));
            self.ui.selection = Selection::None;
        }
        if matches!(a, UiCommand::Paste | UiCommand::Duplicate)
            && let Some((parent, e)) = self.ui.entity_clipboard.clone()
        {
            let parent = parent.filter(|p| tree::find(desc, p).is_some());
            // "Runner 2" pasted again is "Runner 3", not "Runner 2 2".
            let base = e
                .name
                .rsplit_once(' ')
                .filter(|(_, n)| n.parse::<u32>().is_ok())
                .map_or(&*e.name, |(b, _)| b);
            let name = tree::unique_name(desc, parent.as_deref(), base);
            let mut e = e;
            e.name.clone_from(&name);
            let verb = if a == UiCommand::Paste { "Paste Entity" } else { "Duplicate Entity" };
            let add = Op::AddEntity { scene, parent: parent.clone(), entity: e };
            self.commands.push(Command::Edit(Box::new(Op::Batch { label: verb.into(), ops: vec![add] })));
            self.ui.selection = Selection::Entity(tree::join(parent.as_deref(), &name));
        }
    }

    /// A menu entry for a command of the table (its text, or `text`, and its shortcut); a click
    /// runs the command and closes the menu.
    fn menu_entry(&mut self, ui: &mut egui::Ui, c: UiCommand, text: Option<String>, enabled: bool) {
        let text = text.unwrap_or_else(|| c.text().to_owned());
        let b = egui::Button::new(text).shortcut_text(c.shortcut_text(ui.ctx()));
        let r = ui.add_enabled(enabled, b);
        crate::probe::mark(ui.ctx(), format!("menu:{}", c.text()), r.rect);
        if r.clicked() {
            self.run_ui_command(c);
            ui.close();
        }
    }

    /// File > Project Settings: what `project.ron` sets for every clip (the interpolation a key
    /// gives a channel it starts, unless its clip sets its own). Each change is an undo step.
    fn project_settings(&mut self, ui: &mut egui::Ui) {
        use marrow_engine::track::Interpolation;
        ui.menu_button("Project Settings", |ui| {
            ui.weak("New channels' interpolation");
            let current = self.doc.project().manifest.default_interpolation;
            for i in [Interpolation::Step, Interpolation::Linear, Interpolation::CubicSpline] {
                let name = crate::panels::timeline::interpolation_name(i);
                if ui.selectable_label(current == i, name).clicked() {
                    if current != i {
                        self.commands.push(Command::Edit(Box::new(Op::SetDefaultInterpolation(i))));
                    }
                    ui.close();
                }
            }
        });
    }

    fn menu(&mut self, ui: &mut egui::Ui) {
        egui::MenuBar::new().ui(ui, |ui| {
            let r = ui.menu_button("File", |ui| {
                if ui.button("New Project").clicked() {
                    self.commands.push(Command::New);
                    ui.close();
                }
                self.menu_entry(ui, UiCommand::Open, None, true);
                ui.menu_button("Recent", |ui| {
                    if self.recent.is_empty() {
                        ui.weak("none");
                    }
                    for r in self.recent.clone() {
                        if ui.button(r.display().to_string()).clicked() {
                            self.commands.push(Command::Open(r));
                            ui.close();
                        }
                    }
                });
                ui.separator();
                self.menu_entry(ui, UiCommand::Import, None, true);
                if ui.button("Export glTF…").clicked() {
                    self.panels.export.show(&export_context(&self.doc, &self.session));
                    ui.close();
                }
                ui.separator();
                self.project_settings(ui);
                ui.separator();
                self.menu_entry(ui, UiCommand::Save, None, true);
                self.menu_entry(ui, UiCommand::SaveAs, None, true);
                ui.separator();
                self.menu_entry(ui, UiCommand::Quit, None, true);
            });
            crate::probe::mark(ui.ctx(), "menu:File", r.response.rect);
            let r = ui.menu_button("Edit", |ui| {
                let undo = self.doc.undo_label().map(|l| format!("Undo {l}"));
                let can_undo = undo.is_some();
                self.menu_entry(ui, UiCommand::Undo, undo, can_undo);
                let redo = self.doc.redo_label().map(|l| format!("Redo {l}"));
                let can_redo = redo.is_some();
                self.menu_entry(ui, UiCommand::Redo, redo, can_redo);
                ui.separator();
                for c in &UiCommand::EDIT_MENU[2..] {
                    self.menu_entry(ui, *c, None, true);
                }
            });
            crate::probe::mark(ui.ctx(), "menu:Edit", r.response.rect);
            let r = ui.menu_button("View", |ui| {
                ui.checkbox(&mut self.ui.show_skeletons, "Show Skeletons");
                ui.checkbox(&mut self.ui.show_grid, "Grid");
                self.menu_entry(ui, UiCommand::Frame, None, true);
            });
            crate::probe::mark(ui.ctx(), "menu:View", r.response.rect);
            let r = ui.menu_button("Window", |ui| {
                for tab in Tab::ALL {
                    let r = ui.button(tab.title());
                    crate::probe::mark(ui.ctx(), format!("menu:{}", tab.title()), r.rect);
                    if r.clicked() {
                        self.ui.show_tab = Some(tab);
                        ui.close();
                    }
                }
                ui.separator();
                if ui.button("Reset Layout").clicked() {
                    self.commands.push(Command::ResetLayout);
                    ui.close();
                }
            });
            crate::probe::mark(ui.ctx(), "menu:Window", r.response.rect);
        });
    }

    fn status(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            let root = self.doc.root().map_or("not saved yet".to_owned(), |r| r.display().to_string());
            ui.weak(root);
            ui.separator();
            ui.weak(if self.doc.is_dirty() { "unsaved changes" } else { "saved" });
            ui.separator();
            ui.weak(format!("{} steps", self.doc.head()));
            if let Some(job) = &self.import {
                ui.separator();
                ui.add(egui::Spinner::new());
                ui.weak(format!("importing {}…", job.path().display()));
            }
            if self.notice.as_mut().is_some_and(|n| !n.show(ui)) {
                self.notice = None;
            }
        });
    }

    fn modals(&mut self, ctx: &egui::Context) {
        let Some(modal) = self.modal.clone() else { return };
        let mut close = false;
        let mut then: Option<After> = None;
        match &modal {
            Modal::Unsaved(after) => {
                egui::Modal::new(egui::Id::new("unsaved")).show(ctx, |ui| {
                    ui.heading("Unsaved changes");
                    ui.label(format!("Save the changes to {} first?", self.doc.project().manifest.name));
                    ui.horizontal(|ui| {
                        if ui.button("Save").clicked() {
                            self.save();
                            close = true;
                            if !self.doc.is_dirty() {
                                then = Some(after.clone());
                            }
                        }
                        if ui.button("Don't Save").clicked() {
                            if let Some(r) = self.doc.root() {
                                recovery::remove(r);
                            }
                            close = true;
                            then = Some(after.clone());
                        }
                        if ui.button("Cancel").clicked() {
                            close = true;
                        }
                    });
                });
            }
            Modal::Error { title, body } => {
                egui::Modal::new(egui::Id::new("error")).show(ctx, |ui| {
                    ui.heading(title);
                    ui.label(body);
                    if ui.button("OK").clicked() {
                        close = true;
                    }
                });
            }
            Modal::Recover { root, recovery } => {
                egui::Modal::new(egui::Id::new("recover")).show(ctx, |ui| {
                    ui.heading("Recover unsaved changes?");
                    ui.label(format!(
                        "{} holds changes autosaved before the editor closed without saving.",
                        recovery::path(root).display()
                    ));
                    ui.horizontal(|ui| {
                        if ui.button("Recover").clicked() {
                            match Project::from_files(root, &recovery.files) {
                                Ok(p) => self.edit(Op::ReplaceProject {
                                    label: "Recover Unsaved Changes".into(),
                                    project: Box::new(p),
                                }),
                                Err(e) => {
                                    self.log.push(Level::Error, "file", format!("recovery failed: {e}"))
                                }
                            }
                            close = true;
                        }
                        if ui.button("Discard").clicked() {
                            recovery::remove(root);
                            close = true;
                        }
                    });
                });
            }
        }
        if close {
            // A new modal set while handling this one (an error on save) stays.
            if self.modal.as_ref() == Some(&modal) {
                self.modal = None;
            }
        }
        if let Some(a) = then {
            self.proceed(a);
        }
    }

    fn file_dialog(&mut self, ctx: &egui::Context) {
        if self.file_purpose == Some(FilePurpose::Import) {
            // The import's options beside the file list: the units the file was made in.
            let scale = &mut self.import_scale;
            self.file_dialog.update_with_right_panel_ui(ctx, &mut |ui, _| units_picker(ui, scale));
        } else {
            self.file_dialog.update(ctx);
        }
        if let Some(p) = self.file_dialog.take_picked() {
            match self.file_purpose.take() {
                Some(FilePurpose::Open) => self.commands.push(Command::Open(p)),
                Some(FilePurpose::SaveAs) => self.commands.push(Command::SaveAs(p)),
                Some(FilePurpose::Import) => self.commands.push(Command::Import(p)),
                Some(FilePurpose::Export) => {
                    // A name typed without an extension is a GLB.
                    let ext = p.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
                    let p = if matches!(ext.as_deref(), Some("glb" | "gltf")) {
                        p
                    } else {
                        p.with_extension("glb")
                    };
                    self.panels.export.path = p.display().to_string();
                }
                None => {}
            }
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
        if !ctx.input(|i| i.pointer.any_down()) && !std::mem::take(&mut self.ui.hold_gesture) {
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
        if let Some(tab) = self.ui.show_tab.take() {
            crate::panels::show_tab(&mut self.dock, tab);
        }
        self.modals(&ctx);
        self.export_window(&ctx);
        self.file_dialog(&ctx);
        if self.ui.open_import_dialog {
            self.ui.open_import_dialog = false;
            self.open_import_dialog();
        }
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
        for (level, m) in std::mem::take(&mut self.panels.viewport.messages) {
            self.log.push(level, "viewport", m);
        }
        for name in std::mem::take(&mut self.panels.timeline.sounds) {
            if let Some(s) = &self.options.marker_sound {
                (s.0)(&name);
            }
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
            && let Err(e) = recovery::write(root, self.doc.files())
        {
            self.log.push(Level::Warning, "file", format!("autosave failed: {e}"));
        }
        crate::probe::write(&ctx, &self.panels, &self.ui, &self.doc, &self.log, &mut self.probe_last);
        if self.quit {
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
        if self.session.is_playing() || self.import.is_some() {
            ctx.request_repaint();
        }
    }

    /// Writes a recovery file now (what the autosave timer does every interval while dirty).
    pub fn autosave_now(&mut self) -> Result<(), String> {
        let root = self.doc.root().ok_or("the project has no folder")?.to_owned();
        recovery::write(&root, self.doc.files())
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
