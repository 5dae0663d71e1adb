//! The Assets panel: the project's scenes, skeletons, clips, graphs, retarget maps and binary
//! models.
//! Double-clicking a clip makes it the selected Animator's clip, double-clicking a graph opens it
//! in the Graph tab (New Graph starts an empty one); a file can be renamed (every
//! reference follows) or deleted (refused, with the names of its users, while anything uses it).
//! Damaged files (listed by the project, not loadable) are listed first, with their error
//! location, a read-only text view and Remove from Project.
//!
//! Not here: the checks themselves (`crate::document::op`), applying edits (`crate::app`).

use egui::RichText;

use crate::command::Command;
use crate::cx::Cx;
use crate::document::{EntityOp, Op, tree};

pub mod damaged_view;

/// The Assets panel.
#[derive(Debug, Default)]
pub struct AssetsPanel {
    /// An asset being renamed: (path, text so far).
    renaming: Option<(String, String)>,
    /// The damaged file shown as text, if one is.
    pub viewing: Option<damaged_view::DamagedView>,
}

impl AssetsPanel {
    /// Draws the panel.
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut Cx) {
        let project = cx.doc.project();
        let m = &project.manifest;
        let lib = cx.session.library();
        let binary: Vec<String> = m
            .assets
            .iter()
            .filter(|a| !project.skeletons.contains_key(*a) && !project.retargets.contains_key(*a))
            .cloned()
            .collect();
        let skeletons: Vec<String> = lib.skeleton_refs().map(str::to_owned).collect();
        let clips: Vec<String> = lib.clip_refs().map(str::to_owned).collect();
        let retargets: Vec<String> = project.retargets.keys().cloned().collect();
        let sections: [(&str, Vec<String>); 6] = [
            ("Scenes", m.scenes.clone()),
            ("Skeletons", skeletons),
            ("Clips", clips),
            ("Graphs", m.graphs.clone()),
            ("Retarget Maps", retargets),
            ("Models", binary),
        ];
        ui.horizontal(|ui| {
            if ui
                .button("New Graph")
                .on_hover_text("An empty blend/adjust graph, opened in the Graph tab")
                .clicked()
            {
                cx.send(Command::NewGraph);
            }
        });
        egui::ScrollArea::vertical().auto_shrink([false, false]).show(ui, |ui| {
            self.damaged(ui, cx);
            for (title, items) in sections {
                egui::CollapsingHeader::new(RichText::new(format!("{title} ({})", items.len())).strong())
                    .default_open(true)
                    .show(ui, |ui| {
                        if items.is_empty() {
                            ui.weak("none");
                        }
                        for item in items {
                            self.item(ui, cx, title, &item);
                        }
                    });
            }
        });
    }

    /// The files the project lists but could not load: each with its error location, View Text
    /// (a read-only window) and Remove from Project (an undoable Delete of its manifest entry;
    /// the file stays on disk). Nothing is drawn when there are none.
    fn damaged(&mut self, ui: &mut egui::Ui, cx: &mut Cx) {
        let damaged: Vec<_> = cx.doc.damaged().cloned().collect();
        if let Some(v) = &mut self.viewing
            && (!damaged.iter().any(|d| d.path == v.path) || !v.ui(ui.ctx()))
        {
            self.viewing = None;
        }
        if damaged.is_empty() {
            return;
        }
        let red = egui::Color32::from_rgb(235, 90, 80);
        egui::CollapsingHeader::new(
            RichText::new(format!("Damaged ({})", damaged.len())).strong().color(red),
        )
        .default_open(true)
        .show(ui, |ui| {
            for d in &damaged {
                let at = d.location().map_or(String::new(), |(l, c)| format!(":{l}:{c}"));
                ui.label(RichText::new(format!("⚠ {}{at} damaged", d.path)).color(red))
                    .on_hover_text(d.error.to_string());
                ui.horizontal(|ui| {
                    if ui.button("View Text").on_hover_text(format!("{} as it is on disk", d.path)).clicked()
                    {
                        self.viewing = Some(damaged_view::DamagedView::new(d));
                    }
                    if ui
                        .button("Remove from Project")
                        .on_hover_text("Drops it from the project (undoable); the file stays on disk")
                        .clicked()
                    {
                        cx.edit(Op::DeleteAsset { path: d.path.clone() });
                    }
                });
            }
        });
    }

    fn item(&mut self, ui: &mut egui::Ui, cx: &mut Cx, section: &str, item: &str) {
        if let Some((path, mut buffer)) = self.renaming.clone().filter(|(p, _)| p == item) {
            let r = ui.add(egui::TextEdit::singleline(&mut buffer).id_salt("asset rename"));
            r.request_focus();
            if ui.input(|i| i.key_pressed(egui::Key::Escape)) {
                self.renaming = None;
            } else if ui.input(|i| i.key_pressed(egui::Key::Enter)) || r.lost_focus() {
                self.renaming = None;
                if buffer != path {
                    cx.edit(Op::RenameAsset { from: path.clone(), to: buffer });
                }
            } else {
                self.renaming = Some((path, buffer));
            }
            return;
        }
        let is_file = cx.doc.project().manifest.clips.iter().any(|c| c == item)
            || cx.doc.project().manifest.graphs.iter().any(|c| c == item)
            || cx.doc.project().manifest.scenes.iter().any(|c| c == item)
            || cx.doc.project().skeletons.contains_key(item)
            || cx.doc.project().manifest.assets.iter().any(|c| c == item);
        let selected = cx.ui.asset.as_deref() == Some(item);
        let r = ui.selectable_label(selected, item);
        if r.clicked() {
            cx.ui.asset = Some(item.to_owned());
        }
        if section == "Clips" && r.double_clicked() {
            self.use_clip(cx, item);
        }
        if section == "Retarget Maps" && r.double_clicked() {
            cx.send(Command::OpenRetarget(item.to_owned()));
        }
        if section == "Clips" {
            r.clone().on_hover_text("Double-click: play it on the selected Animator");
        }
        if section == "Graphs" && r.double_clicked() {
            cx.ui.graph = Some(item.to_owned());
            cx.ui.graph_selection.clear();
            cx.send(Command::ShowTab(crate::dock::Tab::Graph));
        }
        if section == "Graphs" {
            r.clone().on_hover_text("Double-click: edit it in the Graph tab");
        }
        r.context_menu(|ui| {
            if section == "Graphs" && ui.button("Edit in Graph Tab").clicked() {
                cx.ui.graph = Some(item.to_owned());
                cx.ui.graph_selection.clear();
                cx.send(Command::ShowTab(crate::dock::Tab::Graph));
                ui.close();
            }
            if section == "Clips" && ui.button("Use on Selected Animator").clicked() {
                self.use_clip(cx, item);
                ui.close();
            }
            if is_file {
                if ui.button("Rename…").clicked() {
                    self.renaming = Some((item.to_owned(), item.to_owned()));
                    ui.close();
                }
                if ui.button("Delete").clicked() {
                    cx.edit(Op::DeleteAsset { path: item.to_owned() });
                    ui.close();
                }
            }
        });
    }

    /// Makes `clip` the clip of the selected entity's Animator (or of the rig it sits under).
    fn use_clip(&mut self, cx: &mut Cx, clip: &str) {
        let Some((scene, desc)) = cx.scene() else { return };
        let Some(mut path) = cx.ui.selection.entity().map(str::to_owned) else { return };
        loop {
            if let Some(a) = tree::find(desc, &path).and_then(|e| e.animator.clone()) {
                let mut next = a;
                next.clip = Some(clip.to_owned());
                cx.edit(Op::Entity {
                    scene: scene.to_owned(),
                    entity: path.clone(),
                    op: EntityOp::SetAnimator(Some(next)),
                });
                return;
            }
            match tree::parent_path(&path) {
                Some(p) => path = p.to_owned(),
                None => return,
            }
        }
    }
}
