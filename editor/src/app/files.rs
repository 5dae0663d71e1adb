//! The app's file handling: opening (faults to the Log and a dialog), saving, Save As, the
//! unsaved-changes guard, importing on a background thread, exporting (the export window and
//! the write), the modal dialogs (unsaved changes, errors, recovery) and the file dialog.
//!
//! Not here: what a save writes (`crate::document`), how a file is parsed (the engine).

use std::path::{Path, PathBuf};

use marrow_engine::project::{Project, ProjectError};

use super::{After, EditorApp, FilePurpose, GLTF_FILTER, Modal, new_project};
use crate::command::Command;
use crate::document::{Document, Op};
use crate::import::ImportJob;
use crate::log::Level;
use crate::notice::{Notice, human_size, written_size};
use crate::panels::Panels;
use crate::recovery;
use crate::session::Session;
use crate::ui_state::Selection;

/// The file dialog of Open, Save As, Import and Export, with the glTF filter selected for
/// picking files.
pub(super) fn file_dialog() -> egui_file_dialog::FileDialog {
    let gltf = |p: &Path| {
        p.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| ["gltf", "glb", "bvh", "fbx"].iter().any(|x| e.eq_ignore_ascii_case(x)))
    };
    let mut dialog = egui_file_dialog::FileDialog::new()
        .add_file_filter(GLTF_FILTER, egui_file_dialog::Filter::new(gltf))
        .default_file_filter(GLTF_FILTER)
        .default_size([860.0, 480.0]);
    // Room beside the files for Import's units and what they make of the selected model.
    dialog.set_right_panel_width(200.0);
    dialog
}

/// The import dialog's Units picker: the scale a model is brought in at (a unit, or any
/// scale typed in), and `line`, what the dialog says of the selected model's size.
pub(super) fn units_picker(ui: &mut egui::Ui, scale: &mut f32, line: Option<String>) {
    ui.label("Units of the file");
    let current = crate::import::UNITS.iter().find(|(_, s)| *s == *scale).map_or("custom", |(n, _)| n);
    let r = egui::ComboBox::from_id_salt("import units").selected_text(current).show_ui(ui, |ui| {
        for (name, s) in crate::import::UNITS {
            ui.selectable_value(scale, s, name);
        }
    });
    crate::widgets::named(r.response, egui::WidgetType::ComboBox, "Units");
    ui.horizontal(|ui| {
        ui.label("scale");
        let r = ui.add(egui::DragValue::new(scale).speed(0.001).range(1e-6..=1e6).max_decimals(6));
        crate::widgets::named(r, egui::WidgetType::DragValue, "Import Scale")
            .on_hover_text("Metres per unit of the file: any scale, for files in units of their own");
    });
    if let Some(line) = line {
        ui.add(egui::Label::new(egui::RichText::new(line).weak()).wrap());
    }
}

/// What the import dialog says of the model at `selected` at `scale`, measured by `probe`: one
/// measure runs at a time (a selection moving through many large files starts the next when
/// the last is done), and a new one starts whenever the selection is another file.
fn size_report(
    ui: &egui::Ui,
    probe: &mut Option<crate::import::SizeProbe>,
    selected: Option<std::path::PathBuf>,
    scale: f32,
) -> Option<String> {
    let Some(path) = selected else {
        *probe = None;
        return None;
    };
    let busy = probe.as_mut().is_some_and(|p| p.poll().is_none());
    if !busy && probe.as_ref().is_none_or(|p| p.path() != path) {
        *probe = Some(crate::import::SizeProbe::start(path.clone()));
    }
    let measured = probe.as_mut().filter(|p| p.path() == path).and_then(|p| p.poll().cloned());
    Some(match measured {
        None => {
            ui.ctx().request_repaint_after(std::time::Duration::from_millis(50));
            "measuring the model…".to_owned()
        }
        Some(Ok(Some(size))) => crate::import::size_line(size, scale),
        Some(Ok(None)) => "the model has no vertex or joint to measure".to_owned(),
        Some(Err(fault)) => format!("it does not import: {fault}"),
    })
}

/// What the File > Export glTF window reads.
pub(super) fn export_context<'a>(
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

/// What the File > Retarget Clips window reads.
pub(super) fn retarget_context<'a>(
    doc: &'a Document,
    session: &'a Session,
) -> crate::panels::retarget_dialog::RetargetContext<'a> {
    let world = session.world();
    let rigs = world
        .rigs()
        .filter_map(|r| Some((world.path(r)?, world.animator(r)?.skeleton().name.clone())))
        .collect();
    crate::panels::retarget_dialog::RetargetContext {
        project: doc.project(),
        library: session.library(),
        revision: doc.revision(),
        root: doc.root(),
        rigs,
        clip_preview: session.clip_preview(),
    }
}

/// Clip files adding up to more than this many bytes open in the background: the clips no scene
/// or graph plays load after the project is shown (`Document::open_deferring`).
pub const DEFER_CLIPS_ABOVE: u64 = 32 * 1024 * 1024;

impl EditorApp {
    /// Opens the project at `path`. On failure the current project stays, the faults go to the
    /// Log and a dialog names the file and location.
    pub fn open(&mut self, path: &Path) {
        match Document::open_deferring(path, DEFER_CLIPS_ABOVE) {
            Ok((doc, repaired)) => {
                let root = doc.root().map(Path::to_owned);
                self.doc = doc;
                self.session = Session::new();
                self.ui.selection = Selection::None;
                self.panels.viewport.request_frame();
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

    pub(super) fn save(&mut self) {
        if self.doc.root().is_none() {
            self.file_purpose = Some(FilePurpose::SaveAs);
            self.file_dialog.pick_directory();
            return;
        }
        match self.doc.save() {
            Ok(()) => {
                self.forget_pending_reads();
                if let Some(r) = self.doc.root() {
                    recovery::remove(r);
                    self.log.push(Level::Info, "file", format!("saved {}", r.display()));
                }
            }
            Err(e) => self.fail("Save failed", &e),
        }
    }

    pub(super) fn save_as(&mut self, root: &Path) {
        match self.doc.save_as(root) {
            Ok(()) => {
                self.forget_pending_reads();
                recovery::remove(root);
                self.log.push(Level::Info, "file", format!("saved {}", root.display()));
                self.recent.retain(|r| r != root);
                self.recent.insert(0, root.to_owned());
            }
            Err(e) => self.fail("Save failed", &e),
        }
    }

    pub(super) fn fail(&mut self, title: &str, e: &ProjectError) {
        self.log.push(Level::Error, "file", e.to_string());
        self.modal = Some(Modal::Error { title: title.to_owned(), body: e.to_string() });
    }

    /// Runs `after` now, or asks about unsaved changes first.
    pub(super) fn guarded(&mut self, after: After) {
        if self.doc.is_dirty() {
            self.modal = Some(Modal::Unsaved(after));
        } else {
            self.proceed(after);
        }
    }

    pub(super) fn proceed(&mut self, after: After) {
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

    /// What an import needs: the project's folder (none, with a dialog saying why, for a
    /// project not saved yet), the scene shown and a copy of the project.
    fn import_target(&mut self, title: &str) -> Option<(PathBuf, String, marrow_engine::project::Project)> {
        let Some(root) = self.doc.root().map(Path::to_owned) else {
            self.modal = Some(Modal::Error {
                title: title.into(),
                body: "Save the project first: an import copies the model into the project folder.".into(),
            });
            return None;
        };
        let scene = self.session.scene().map(str::to_owned).unwrap_or_default();
        Some((root, scene, self.doc.project().clone()))
    }

    pub(super) fn start_import(&mut self, path: &Path) {
        if let Some((root, scene, project)) = self.import_target("Import Model") {
            self.import = Some(ImportJob::start(path.to_owned(), root, scene, project, self.import_scale));
        }
    }

    pub(super) fn start_folder_import(&mut self, dir: &Path) {
        if let Some((root, scene, project)) = self.import_target("Import Folder") {
            let job = crate::import::FolderImportJob::start(
                dir.to_owned(),
                root,
                scene,
                project,
                self.import_scale,
            );
            self.folder_import = Some(job);
        }
    }

    /// Takes a finished folder import: its step, a Log line per file and the report.
    pub(super) fn poll_folder_import(&mut self) {
        let Some(job) = &mut self.folder_import else { return };
        let Some(done) = job.poll() else { return };
        let dir = job.dir().display().to_string();
        self.folder_import = None;
        for r in &done.reports {
            let level = if r.faults.is_empty() { Level::Info } else { Level::Error };
            self.log.push(level, "import", r.line());
            for w in &r.warnings {
                self.log.push(Level::Warning, "import", format!("{}: {w}", r.file));
            }
        }
        if let Some(op) = done.op {
            self.edit(op);
        }
        let imported = done.reports.iter().filter(|r| r.faults.is_empty()).count();
        self.modal = Some(Modal::Report {
            title: format!("Imported {imported} of {} model(s) from {dir}", done.reports.len()),
            lines: done.reports.iter().map(crate::import::FileReport::line).collect(),
        });
    }

    /// File > Import Folder's dialog: a folder, every model file in it imported.
    pub(super) fn open_import_folder_dialog(&mut self) {
        self.file_purpose = Some(FilePurpose::Import);
        if let Some(root) = self.doc.root() {
            self.file_dialog.config_mut().initial_directory = root.to_owned();
        }
        self.file_dialog.pick_directory();
    }

    pub(super) fn export_window(&mut self, ctx: &egui::Context) {
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

    pub(super) fn retarget_window(&mut self, ctx: &egui::Context) {
        if let Some(c) = self.panels.retarget.ui(ctx, &retarget_context(&self.doc, &self.session)) {
            self.commands.push(c);
        }
    }

    /// Writes the scene at `scene` as glTF (File > Export glTF); the document is untouched.
    pub(super) fn export(&mut self, scene: &str, path: &Path, options: &marrow_engine::gltf::ExportOptions) {
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

    pub(super) fn poll_import(&mut self) {
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
                    self.panels.viewport.request_frame();
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

    /// File > Import Model's file dialog: glTF and BVH files only (the filter can be changed in the
    /// dialog), starting in the project's folder until a file has been picked somewhere.
    pub(super) fn open_import_dialog(&mut self) {
        self.file_purpose = Some(FilePurpose::Import);
        if let Some(root) = self.doc.root() {
            self.file_dialog.config_mut().initial_directory = root.to_owned();
        }
        self.file_dialog.pick_file();
    }

    pub(super) fn modals(&mut self, ctx: &egui::Context) {
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
            Modal::Report { title, lines } => {
                egui::Modal::new(egui::Id::new("report")).show(ctx, |ui| {
                    ui.heading(title);
                    egui::ScrollArea::vertical().max_height(320.0).show(ui, |ui| {
                        for l in lines {
                            ui.label(l);
                        }
                    });
                    if ui.button("OK").clicked() {
                        close = true;
                    }
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
            Modal::Reload { slot, theirs } => close = self.reload_modal(ctx, slot, theirs),
            Modal::Recover { root, recovery } => {
                egui::Modal::new(egui::Id::new("recover")).show(ctx, |ui| {
                    ui.heading("Recover unsaved changes?");
                    ui.label(format!(
                        "{} holds changes autosaved before the editor closed without saving.",
                        recovery::path(root).display()
                    ));
                    ui.horizontal(|ui| {
                        if ui.button("Recover").clicked() {
                            match Project::from_files_over_disk(root, &recovery.files) {
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

    pub(super) fn file_dialog(&mut self, ctx: &egui::Context) {
        if self.file_purpose == Some(FilePurpose::Import) {
            // The import's options beside the file list: the units the file was made in.
            let (scale, probe) = (&mut self.import_scale, &mut self.import_probe);
            self.file_dialog.update_with_right_panel_ui(ctx, &mut |ui, dialog| {
                let selected =
                    dialog.selected_entry().filter(|e| e.is_file()).map(|e| e.as_path().to_owned());
                let line = size_report(ui, probe, selected, *scale);
                units_picker(ui, scale, line)
            });
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
}
