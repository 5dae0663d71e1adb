//! The menu bar, the status bar and the keyboard: the command table's entries as menu items and
//! shortcuts, and what each of them does (transport keys, gizmo modes, rename, the editing
//! commands for the scene).
//!
//! Not here: the table itself (`crate::command_table`), the panels' own keys.

use super::files::{export_context, retarget_context};
use super::{EditorApp, FilePurpose};
use crate::command::Command;
use crate::command_table::UiCommand;
use crate::dock::Tab;
use crate::document::{EntityOp, Op, tree};
use crate::ui_state::{Focus, Selection};
use crate::viewport::gizmo::GizmoMode;

impl EditorApp {
    /// The rig the transport keys (Left/Right, Home/End) act on: [`tree::active_rig`] of the
    /// shown scene, the same rule the timeline follows.
    pub(super) fn selected_rig(&self) -> Option<String> {
        let scene = self.doc.project().scenes.get(self.session.scene()?)?;
        tree::active_rig(scene, self.ui.selection.entity())
    }

    pub(super) fn shortcuts(&mut self, ctx: &egui::Context) {
        let typing = ctx.egui_wants_keyboard_input();
        // The command table's shortcuts and egui-winit's clipboard events (a modal dialog takes
        // the keys, except saving, undoing and quitting).
        let modal = self.modal.is_some();
        for c in ctx.input_mut(|i| UiCommand::read(i, typing || modal, self.ui.focus)) {
            if !(modal && matches!(c, UiCommand::Open | UiCommand::Import | UiCommand::SaveAs)) {
                self.run_ui_command(c);
            }
        }
    }

    /// The transport keys of the table (a frame back or on while paused, landing on the frame
    /// grid; the start or the end) on the active rig.
    pub(super) fn transport_command(&mut self, c: UiCommand) {
        let Some(rig) = self.selected_rig() else { return };
        let Some(e) = self.session.entity(&rig) else { return };
        let animator = self.session.world().animator(e);
        let time = animator.map_or(0.0, |a| a.time());
        let duration = self.session.head_length(e);
        let fps =
            animator.and_then(|a| a.current_clip()).map_or(crate::posing::DEFAULT_FPS, |c| c.frame_rate);
        let on = |t: f32| (t * fps).round() / fps;
        let playing = self.session.is_playing();
        let time = match c {
            UiCommand::PreviousFrame if !playing => on(time - 1.0 / fps).max(0.0),
            UiCommand::NextFrame if !playing => on(time + 1.0 / fps).min(duration),
            UiCommand::GoToStart => 0.0,
            UiCommand::GoToEnd => duration,
            _ => return,
        };
        self.commands.push(Command::Seek { rig, time });
    }

    /// Carries out a command of the table (from its shortcut or its menu entry).
    pub(super) fn run_ui_command(&mut self, c: UiCommand) {
        match c {
            UiCommand::Open => {
                self.file_purpose = Some(FilePurpose::Open);
                self.file_dialog.pick_directory();
            }
            UiCommand::Import => self.open_import_dialog(),
            UiCommand::ImportFolder => self.open_import_folder_dialog(),
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
            UiCommand::NewProject => self.commands.push(Command::New),
            UiCommand::ExportGltf => self.panels.export.show(&export_context(&self.doc, &self.session)),
            UiCommand::Retarget => self.panels.retarget.show(&retarget_context(&self.doc, &self.session)),
            UiCommand::ToggleSkeletons => self.ui.show_skeletons = !self.ui.show_skeletons,
            UiCommand::ToggleGrid => self.ui.show_grid = !self.ui.show_grid,
            UiCommand::ToggleTrajectory => self.ui.show_trajectory = !self.ui.show_trajectory,
            UiCommand::ResetLayout => self.commands.push(Command::ResetLayout),
            UiCommand::GizmoMove => self.ui.gizmo = GizmoMode::Translate,
            UiCommand::GizmoRotate => self.ui.gizmo = GizmoMode::Rotate,
            UiCommand::GizmoScale => self.ui.gizmo = GizmoMode::Scale,
            UiCommand::Rename => {
                if let (Selection::Entity(p), Focus::Scene) = (&self.ui.selection, self.ui.focus) {
                    self.ui.renaming = Some((p.clone(), tree::leaf_name(p).to_owned()));
                }
            }
            UiCommand::PreviousFrame | UiCommand::NextFrame | UiCommand::GoToStart | UiCommand::GoToEnd => {
                self.transport_command(c)
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
    pub(super) fn scene_action(&mut self, a: UiCommand) {
        let Some(scene) = self.session.scene().map(str::to_owned) else { return };
        let Some(desc) = self.doc.project().scenes.get(&scene) else { return };
        let selected = match &self.ui.selection {
            Selection::Entity(p) => Some(p.clone()),
            _ => None,
        };
        if a == UiCommand::Frame {
            self.panels.viewport.request_frame();
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
    pub(super) fn menu_entry(
        &mut self,
        ui: &mut egui::Ui,
        c: UiCommand,
        text: Option<String>,
        enabled: bool,
    ) {
        let text = text.unwrap_or_else(|| c.text().to_owned());
        let shortcut = c.shortcut_text(ui.ctx());
        let b = egui::Button::new(text);
        // A command without a shortcut keeps its label exactly its text.
        let b = if shortcut.is_empty() { b } else { b.shortcut_text(shortcut) };
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

    pub(super) fn menu(&mut self, ui: &mut egui::Ui) {
        egui::MenuBar::new().ui(ui, |ui| {
            let r = ui.menu_button("File", |ui| {
                self.menu_entry(ui, UiCommand::NewProject, None, true);
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
                self.menu_entry(ui, UiCommand::ImportFolder, None, true);
                self.menu_entry(ui, UiCommand::ExportGltf, None, true);
                self.menu_entry(ui, UiCommand::Retarget, None, true);
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
                for (c, mut on) in [
                    (UiCommand::ToggleSkeletons, self.ui.show_skeletons),
                    (UiCommand::ToggleGrid, self.ui.show_grid),
                    (UiCommand::ToggleTrajectory, self.ui.show_trajectory),
                ] {
                    if ui.checkbox(&mut on, c.text()).clicked() {
                        self.run_ui_command(c);
                    }
                }
                ui.separator();
                for c in [UiCommand::GizmoMove, UiCommand::GizmoRotate, UiCommand::GizmoScale] {
                    self.menu_entry(ui, c, None, true);
                }
                ui.separator();
                self.menu_entry(ui, UiCommand::Frame, None, true);
            });
            crate::probe::mark(ui.ctx(), "menu:View", r.response.rect);
            let r = ui.menu_button("Window", |ui| {
                for tab in Tab::ALL {
                    let r = ui.button(tab.title());
                    crate::probe::mark(ui.ctx(), format!("menu:{}", tab.title()), r.rect);
                    if r.clicked() {
                        self.commands.push(Command::ShowTab(tab));
                        ui.close();
                    }
                }
                ui.separator();
                self.menu_entry(ui, UiCommand::ResetLayout, None, true);
            });
            crate::probe::mark(ui.ctx(), "menu:Window", r.response.rect);
        });
    }

    pub(super) fn status(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            let root = self.doc.root().map_or("not saved yet".to_owned(), |r| r.display().to_string());
            ui.weak(root);
            ui.separator();
            ui.weak(if self.doc.is_dirty() { "unsaved changes" } else { "saved" });
            ui.separator();
            let n = self.doc.head();
            ui.weak(format!("{n} step{}", if n == 1 { "" } else { "s" }));
            if let Some(job) = &self.import {
                ui.separator();
                ui.add(egui::Spinner::new());
                ui.weak(format!("importing {}…", job.path().display()));
            }
            if let Some(job) = &self.folder_import {
                let (done, total) = job.progress();
                ui.separator();
                let fraction = if total > 0 { done as f32 / total as f32 } else { 0.0 };
                ui.add(
                    egui::ProgressBar::new(fraction)
                        .desired_width(180.0)
                        .text(format!("importing {done} of {total} from {}", job.dir().display())),
                );
            }
            if let Some((arrived, total)) = self.doc.loading() {
                ui.separator();
                ui.add(egui::Spinner::new());
                ui.weak(format!("loading clips {arrived} of {total}…")).on_hover_text(
                    "Clips no scene plays load in the background; an edit or a save waits for them.",
                );
            }
            if self.notice.as_mut().is_some_and(|n| !n.show(ui)) {
                self.notice = None;
            }
        });
    }
}
