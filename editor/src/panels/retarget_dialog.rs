//! File > Retarget Clips: a window over one retarget map (`*.retarget.ron`) of the project: pick
//! or create a map (source rig, target rig: created filled by the humanoid auto-map), see and
//! edit the mapping table (a row a target bone: its humanoid role, its source bone, Auto and
//! Clear per row, Auto-Map and Clear All for the whole map), read the map's faults (names that
//! do not resolve, required humanoid bones left unmapped), tick the source rig's clips and
//! Apply: one undo step creating a clip file of the target rig for each.
//!
//! It reads the document's project and the session's library and sends edits
//! ([`Op::Retarget`], [`Op::AddFiles`]); it writes nothing itself. Preview plays a ticked clip,
//! retargeted in memory, on a rig of the scene with the target skeleton, and the source clip on
//! a rig with the source skeleton beside it, in step, when the scene has one
//! ([`Command::PreviewClip`]: session state, not an edit), so a map is judged in motion before
//! anything is written.

use std::collections::BTreeMap;
use std::path::Path;

use marrow_engine::project::{Library, Project};
use marrow_engine::retarget::{HumanoidRole, RetargetMap, RetargetPlan, auto_map, mapped_roles};

use crate::command::Command;
use crate::document::Op;
use crate::document::retarget_ops::RetargetOp;

/// What the window reads.
pub struct RetargetContext<'a> {
    /// The authored project.
    pub project: &'a Project,
    /// The session's loaded assets.
    pub library: &'a Library,
    /// The document's revision (derived rows are rebuilt when it moves).
    pub revision: u64,
    /// The project's folder, if saved.
    pub root: Option<&'a Path>,
    /// The scene's rigs: entity path and skeleton name (where a retarget can be previewed).
    pub rigs: Vec<(String, String)>,
    /// The clip preview running, if any.
    pub clip_preview: Option<&'a crate::session::ClipPreview>,
}

/// One row of the mapping table.
#[derive(Clone, Debug, PartialEq)]
struct Row {
    target: String,
    role: Option<HumanoidRole>,
    source: Option<String>,
    suggested: Option<String>,
}

/// What the window derives from the project for the chosen map (rebuilt when the document or
/// the choice changes).
#[derive(Clone, Debug, Default, PartialEq)]
struct Derived {
    key: (u64, String),
    source_bones: Vec<String>,
    rows: Vec<Row>,
    auto: Option<RetargetMap>,
    faults: Vec<String>,
    clips: Vec<String>,
}

/// The File > Retarget Clips window's state (UI state: never saved).
#[derive(Clone, Debug, Default)]
pub struct RetargetDialog {
    /// Whether the window is open.
    pub open: bool,
    /// The map shown (its project path; empty: none yet).
    pub map: String,
    /// A new map's source rig (skeleton name).
    pub new_source: String,
    /// A new map's target rig (skeleton name).
    pub new_target: String,
    /// Per clip reference of the source rig: ticked for Apply.
    pub ticked: BTreeMap<String, bool>,
    /// Why the last Apply was refused.
    pub apply_faults: Vec<String>,
    /// The document revision the running preview was made at (a later one previews again).
    previewed: Option<u64>,
    derived: Derived,
}

/// The skeleton names of the library's rigs, each once, in reference order.
fn rig_names(library: &Library) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (_, s) in library.rigs() {
        if !out.contains(&s.name) {
            out.push(s.name.clone());
        }
    }
    out
}

impl RetargetDialog {
    /// Opens the window on the project's first retarget map (or on a new one).
    pub fn show(&mut self, cx: &RetargetContext) {
        self.open = true;
        if !cx.project.retargets.contains_key(&self.map) {
            self.map = cx.project.retargets.keys().next().cloned().unwrap_or_default();
        }
        let rigs = rig_names(cx.library);
        if self.new_source.is_empty() {
            self.new_source = rigs.first().cloned().unwrap_or_default();
        }
        if self.new_target.is_empty() {
            self.new_target = rigs.get(1).or(rigs.first()).cloned().unwrap_or_default();
        }
    }

    fn refresh(&mut self, cx: &RetargetContext) {
        let key = (cx.revision, self.map.clone());
        if self.derived.key == key {
            return;
        }
        let mut d = Derived { key, ..Default::default() };
        if let Some(map) = cx.project.retargets.get(&self.map) {
            match crate::retarget::rigs_of(cx.library, map) {
                Ok((source, target)) => {
                    let auto = auto_map(&source, &target);
                    // Roles by name, and through the map where the names say nothing.
                    let (_, roles) = mapped_roles(map, &source, &target);
                    d.rows = target
                        .bone_names
                        .iter()
                        .enumerate()
                        .map(|(i, name)| Row {
                            target: name.clone(),
                            role: roles.role_of(i),
                            source: map.source_of(name).map(str::to_owned),
                            suggested: auto.source_of(name).map(str::to_owned),
                        })
                        .collect();
                    let unmapped: Vec<&str> = d
                        .rows
                        .iter()
                        .filter(|r| r.role.is_some_and(HumanoidRole::is_required) && r.source.is_none())
                        .map(|r| r.target.as_str())
                        .collect();
                    if !unmapped.is_empty() {
                        d.faults.push(format!(
                            "{} required humanoid bone{} not mapped (they keep their rest): {}",
                            unmapped.len(),
                            if unmapped.len() == 1 { " is" } else { "s are" },
                            unmapped.join(", ")
                        ));
                    }
                    let missing = roles.missing_required();
                    if !missing.is_empty() {
                        let names: Vec<&str> = missing.iter().map(|r| r.name()).collect();
                        d.faults.push(format!(
                            "the target rig has no bone recognised or mapped as {}",
                            names.join(", ")
                        ));
                    }
                    if let Err(e) = RetargetPlan::new(map, &source, &target) {
                        d.faults.insert(0, e.to_string());
                    }
                    d.source_bones = source.bone_names.clone();
                    d.clips = crate::retarget::clips_of_rig(cx.library, &source.name)
                        .into_iter()
                        .map(|(r, _)| r.to_owned())
                        .collect();
                    d.auto = Some(auto);
                }
                Err(e) => d.faults.push(e),
            }
        }
        // Clips keep their ticks across refreshes; new ones start unticked.
        self.ticked =
            d.clips.iter().map(|c| (c.clone(), self.ticked.get(c).copied().unwrap_or(false))).collect();
        self.derived = d;
    }

    /// Draws the window; returns the command it asks for (an edit).
    pub fn ui(&mut self, ctx: &egui::Context, cx: &RetargetContext) -> Option<Command> {
        if !self.open {
            return None;
        }
        self.refresh(cx);
        let mut command = None;
        let mut open = self.open;
        egui::Window::new("Retarget Clips")
            .open(&mut open)
            .default_size([640.0, 600.0])
            .min_width(600.0)
            .collapsible(false)
            .show(ctx, |ui| command = self.body(ui, cx));
        self.open = open;
        command
    }

    fn body(&mut self, ui: &mut egui::Ui, cx: &RetargetContext) -> Option<Command> {
        let mut command = None;
        ui.horizontal(|ui| {
            ui.label("Map");
            let shown = if self.map.is_empty() { "none".to_owned() } else { self.map.clone() };
            let r = egui::ComboBox::from_id_salt("retarget map").selected_text(shown).show_ui(ui, |ui| {
                for p in cx.project.retargets.keys() {
                    ui.selectable_value(&mut self.map, p.clone(), p);
                }
            });
            crate::widgets::named(r.response, egui::WidgetType::ComboBox, "Retarget map");
        });
        ui.separator();
        if let Some(c) = self.new_map_row(ui, cx) {
            return Some(c);
        }
        ui.separator();
        let Some(map) = cx.project.retargets.get(&self.map) else {
            ui.weak("Create a map, or pick one above.");
            return None;
        };
        ui.horizontal(|ui| {
            ui.label(format!("From {} to {}", map.source, map.target));
            ui.weak(format!("{} of {} bones mapped", map.bones.len(), self.derived.rows.len()));
        });
        ui.horizontal(|ui| {
            if let Some(auto) = &self.derived.auto
                && ui
                    .button("Auto-Map")
                    .on_hover_text("Fill the map from the humanoid profile and matching names")
                    .clicked()
            {
                command = Some(self.edit(RetargetOp::Fill(auto.bones.clone())));
            }
            if ui.add_enabled(!map.bones.is_empty(), egui::Button::new("Clear All")).clicked() {
                command = Some(self.edit(RetargetOp::Clear));
            }
        });
        let mut limb_ik = map.limb_ik;
        let r = ui.checkbox(&mut limb_ik, "Place feet and hands by IK").on_hover_text(
            "After the rotations transfer, bend each mapped leg and arm (two-bone IK) so its foot or hand lands where the source's is, scaled by the hip ratio: contact kept where the rigs' proportions differ",
        );
        if r.changed() {
            command = Some(self.edit(RetargetOp::SetLimbIk(limb_ik)));
        }
        for f in &self.derived.faults {
            ui.colored_label(ui.visuals().warn_fg_color, format!("⚠ {f}"));
        }
        if let Some(c) = self.table(ui) {
            command = Some(c);
        }
        ui.separator();
        if let Some(c) = self.clips_and_apply(ui, cx) {
            command = Some(c);
        }
        command
    }

    fn edit(&self, op: RetargetOp) -> Command {
        Command::Edit(Box::new(Op::Retarget { path: self.map.clone(), op }))
    }

    fn new_map_row(&mut self, ui: &mut egui::Ui, cx: &RetargetContext) -> Option<Command> {
        let rigs = rig_names(cx.library);
        let mut command = None;
        ui.horizontal(|ui| {
            ui.strong("New map");
            for (label, value) in [("Source rig", &mut self.new_source), ("Target rig", &mut self.new_target)]
            {
                ui.label(label);
                let r = egui::ComboBox::from_id_salt(label).selected_text(value.as_str()).show_ui(ui, |ui| {
                    for r in &rigs {
                        ui.selectable_value(value, r.clone(), r);
                    }
                });
                crate::widgets::named(r.response, egui::WidgetType::ComboBox, label);
            }
            let source = cx.library.skeleton_named(&self.new_source).map(|(_, s)| s.clone());
            let target = cx.library.skeleton_named(&self.new_target).map(|(_, s)| s.clone());
            let ready = source.is_some() && target.is_some();
            if ui.add_enabled(ready, egui::Button::new("Create Map")).clicked()
                && let (Some(s), Some(t)) = (source, target)
            {
                let root = cx.root.unwrap_or(Path::new(""));
                let (op, path) = crate::retarget::new_map_op(cx.project, root, &s, &t);
                self.map = path;
                command = Some(Command::Edit(Box::new(op)));
            }
        });
        command
    }

    fn table(&self, ui: &mut egui::Ui) -> Option<Command> {
        let mut command = None;
        egui::ScrollArea::vertical()
            .max_height(320.0)
            .auto_shrink([false, true])
            .id_salt("retarget rows")
            .show(ui, |ui| {
                egui::Grid::new("retarget table").num_columns(4).striped(true).spacing([10.0, 4.0]).show(
                    ui,
                    |ui| {
                        ui.strong("Target bone");
                        ui.strong("Role");
                        ui.strong("Source bone");
                        ui.label("");
                        ui.end_row();
                        for row in &self.derived.rows {
                            ui.label(&row.target);
                            let role = row.role.map_or("", HumanoidRole::name);
                            if row.role.is_some_and(HumanoidRole::is_required) && row.source.is_none() {
                                ui.colored_label(ui.visuals().warn_fg_color, role)
                                    .on_hover_text("a required humanoid bone, not mapped");
                            } else {
                                ui.weak(role);
                            }
                            let mut choice = row.source.clone();
                            let shown = choice.clone().unwrap_or_else(|| "— rest —".into());
                            let r = egui::ComboBox::from_id_salt(("source of", &row.target))
                                .selected_text(shown)
                                .width(180.0)
                                .show_ui(ui, |ui| {
                                    ui.selectable_value(&mut choice, None, "— rest —");
                                    for b in &self.derived.source_bones {
                                        ui.selectable_value(&mut choice, Some(b.clone()), b);
                                    }
                                });
                            crate::widgets::named(
                                r.response,
                                egui::WidgetType::ComboBox,
                                &format!("source of {}", row.target),
                            );
                            if choice != row.source {
                                command = Some(self.edit(RetargetOp::SetSource {
                                    target: row.target.clone(),
                                    source: choice,
                                }));
                            }
                            ui.horizontal(|ui| {
                                let auto = row.suggested.is_some() && row.suggested != row.source;
                                if ui.add_enabled(auto, egui::Button::new("Auto").small()).clicked() {
                                    command = Some(self.edit(RetargetOp::SetSource {
                                        target: row.target.clone(),
                                        source: row.suggested.clone(),
                                    }));
                                }
                                if ui
                                    .add_enabled(row.source.is_some(), egui::Button::new("Clear").small())
                                    .clicked()
                                {
                                    command = Some(self.edit(RetargetOp::SetSource {
                                        target: row.target.clone(),
                                        source: None,
                                    }));
                                }
                            });
                            ui.end_row();
                        }
                    },
                );
            });
        command
    }

    fn clips_and_apply(&mut self, ui: &mut egui::Ui, cx: &RetargetContext) -> Option<Command> {
        ui.label("Clips of the source rig");
        if self.ticked.is_empty() {
            ui.weak("none");
        }
        for (clip, on) in self.ticked.iter_mut() {
            ui.checkbox(on, clip.as_str());
        }
        let chosen: Vec<String> = self.ticked.iter().filter(|(_, on)| **on).map(|(c, _)| c.clone()).collect();
        let mut command = self.preview_row(ui, cx, &chosen);
        let label = format!("Apply to {} Clip{}", chosen.len(), if chosen.len() == 1 { "" } else { "s" });
        if ui.add_enabled(!chosen.is_empty(), egui::Button::new(label)).clicked() {
            let root = cx.root.unwrap_or(Path::new(""));
            match crate::retarget::retarget_op(cx.project, cx.library, root, &self.map, &chosen) {
                Ok(op) => {
                    self.apply_faults.clear();
                    command = Some(Command::Edit(Box::new(op)));
                }
                Err(faults) => self.apply_faults = faults,
            }
        }
        for f in &self.apply_faults {
            ui.colored_label(ui.visuals().error_fg_color, f);
        }
        command
    }

    /// Preview on a rig of the scene with the target skeleton: the first ticked clip,
    /// retargeted in memory through the map as it stands, loops there; Stop Preview gives the
    /// rig back its own clip. A map edited while it runs is previewed again.
    fn preview_row(&mut self, ui: &mut egui::Ui, cx: &RetargetContext, chosen: &[String]) -> Option<Command> {
        let map = cx.project.retargets.get(&self.map)?;
        let rig = cx.rigs.iter().find(|(_, skeleton)| *skeleton == map.target).map(|(path, _)| path.clone());
        // The source rig, if the scene has one (and it is not the target's entity): it plays the
        // source clip beside the target, in step.
        let source_rig = cx
            .rigs
            .iter()
            .find(|(path, skeleton)| *skeleton == map.source && Some(path) != rig.as_ref())
            .map(|(path, _)| path.clone());
        let mut command = None;
        ui.horizontal(|ui| {
            let what = chosen.first();
            let label = match &rig {
                Some(r) => format!("Preview on {r}"),
                None => "Preview".to_owned(),
            };
            let can = rig.is_some() && what.is_some();
            let r = ui.add_enabled(can, egui::Button::new(label));
            let r = if rig.is_none() {
                r.on_disabled_hover_text(format!("The scene has no rig with the skeleton {:?}", map.target))
            } else {
                r.on_disabled_hover_text("Tick a clip to preview")
            };
            let rerun = cx
                .clip_preview
                .is_some_and(|p| Some(&p.rig) == rig.as_ref() && self.previewed != Some(cx.revision));
            if (r.clicked() || rerun)
                && let (Some(rig), Some(what)) = (&rig, what)
            {
                match crate::retarget::retarget_preview(cx.project, cx.library, &self.map, what) {
                    Ok(clip) => {
                        self.apply_faults.clear();
                        self.previewed = Some(cx.revision);
                        let source =
                            cx.library.clips(what).iter().find(|c| c.skeleton == map.source).cloned();
                        command = Some(Command::PreviewClip(Some(crate::session::ClipPreview {
                            rig: rig.clone(),
                            label: format!("{} retargeted through {}", clip.name, self.map),
                            clip,
                            error: None,
                            beside: source_rig.clone().zip(source),
                            source: None,
                        })));
                    }
                    Err(e) => self.apply_faults = vec![e],
                }
            }
            if let Some(p) = cx.clip_preview {
                if ui.button("Stop Preview").clicked() {
                    self.previewed = None;
                    command = Some(Command::PreviewClip(None));
                }
                match (&p.error, &p.beside) {
                    (Some(e), _) => ui.colored_label(ui.visuals().error_fg_color, e),
                    (None, Some((source, _))) => {
                        ui.weak(format!("playing {} on {}, the source beside it on {source}", p.label, p.rig))
                    }
                    (None, None) => ui.weak(format!("playing {} on {}", p.label, p.rig)),
                };
            }
        });
        command
    }
}
