//! File > Export glTF: a window with the export's options (scene, clips, GLB or glTF + .bin,
//! eased keys baked to a bound or written linear, joint and weight component types) and the
//! output path, showing before anything is written what the export will hold or every fault
//! that refuses it.
//!
//! It reads the document's project and the session's library and sends one
//! [`Command::ExportGltf`]; it edits nothing (an export is not an undo step) and writes no file
//! itself.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use marrow_engine::gltf::{
    DEFAULT_BAKE_BOUND, EasedKeys, ExportOptions, JointChoice, JointFormat, WeightChoice, WeightFormat,
};
use marrow_engine::project::export::{scene_for_export, scene_stem};
use marrow_engine::project::{Library, Project};

use crate::command::Command;

/// What the dialog reads.
pub struct ExportContext<'a> {
    /// The authored project.
    pub project: &'a Project,
    /// The session's loaded assets.
    pub library: &'a Library,
    /// The document's revision (the summary is rebuilt when it moves).
    pub revision: u64,
    /// The project's folder, if saved.
    pub root: Option<&'a Path>,
    /// The scene on screen.
    pub shown_scene: Option<&'a str>,
}

/// What the dialog asks of the app.
#[derive(Clone, Debug, PartialEq)]
pub enum ExportRequest {
    /// Open the file picker for the output path.
    Browse,
    /// Export.
    Export(Command),
}

/// The export's scene in summary: its animations and what is left out, or its faults.
#[derive(Clone, Debug, Default, PartialEq)]
struct Summary {
    key: (u64, String),
    animations: Vec<String>,
    notes: Vec<String>,
    faults: Vec<String>,
}

/// The File > Export glTF window's state (UI state: never saved).
#[derive(Clone, Debug)]
pub struct ExportDialog {
    /// Whether the window is open.
    pub open: bool,
    /// The scene (its path in the project).
    pub scene: String,
    /// The output file.
    pub path: String,
    /// Per animation: exported or not.
    pub clips: BTreeMap<String, bool>,
    /// Bake eased segments (else write them linear).
    pub bake: bool,
    /// Bake at each clip's frame rate (else at `rate`).
    pub clip_rate: bool,
    /// Bake rate, samples a second.
    pub rate: f32,
    /// Bake bound.
    pub bound: f32,
    /// Joint component type.
    pub joints: JointChoice,
    /// Weight component type.
    pub weights: WeightChoice,
    summary: Summary,
}

impl Default for ExportDialog {
    fn default() -> Self {
        Self {
            open: false,
            scene: String::new(),
            path: String::new(),
            clips: BTreeMap::new(),
            bake: true,
            clip_rate: true,
            rate: 30.0,
            bound: DEFAULT_BAKE_BOUND,
            joints: JointChoice::AsImported,
            weights: WeightChoice::AsImported,
            summary: Summary::default(),
        }
    }
}

const JOINTS: [(JointChoice, &str); 4] = [
    (JointChoice::AsImported, "As imported"),
    (JointChoice::Smallest, "Smallest"),
    (JointChoice::Exactly(JointFormat::U8), "Unsigned byte"),
    (JointChoice::Exactly(JointFormat::U16), "Unsigned short"),
];

const WEIGHTS: [(WeightChoice, &str); 5] = [
    (WeightChoice::AsImported, "As imported"),
    (WeightChoice::Smallest, "Smallest"),
    (WeightChoice::Exactly(WeightFormat::Float), "Float"),
    (WeightChoice::Exactly(WeightFormat::Unorm16), "Normalized short"),
    (WeightChoice::Exactly(WeightFormat::Unorm8), "Normalized byte"),
];

impl ExportDialog {
    /// Opens the window on the scene shown, with an output path in the project's `export/`.
    pub fn show(&mut self, cx: &ExportContext) {
        self.open = true;
        let scene = cx.shown_scene.map(str::to_owned).or_else(|| cx.project.manifest.scenes.first().cloned());
        self.scene = scene.unwrap_or_default();
        if self.path.is_empty() {
            let stem = scene_stem(&self.scene);
            // Beside the project; an unsaved project has no folder, so the working directory's
            // `export/`, spelled out so the field says where the file will go.
            let cwd = || std::env::current_dir().unwrap_or_default().join("export");
            let dir = cx.root.map(|r| r.join("export")).unwrap_or_else(cwd);
            self.path = dir.join(format!("{stem}.glb")).display().to_string();
        }
    }

    /// The options the window's settings ask for.
    pub fn options(&self) -> ExportOptions {
        let all = self.clips.values().all(|&on| on);
        ExportOptions {
            clips: (!all).then(|| self.clips.iter().filter(|(_, on)| **on).map(|(n, _)| n.clone()).collect()),
            eased: if self.bake {
                EasedKeys::Bake { rate: (!self.clip_rate).then_some(self.rate), bound: self.bound }
            } else {
                EasedKeys::Linear
            },
            joints: self.joints,
            weights: self.weights,
        }
    }

    fn refresh(&mut self, cx: &ExportContext) {
        let key = (cx.revision, self.scene.clone());
        if self.summary.key == key {
            return;
        }
        let mut s = Summary { key, ..Default::default() };
        match scene_for_export(cx.project, cx.library, Some(&self.scene)) {
            Ok(e) => {
                s.animations = e.scene.animations.iter().map(|a| a.name.clone()).collect();
                s.notes = e.notes;
            }
            Err(e) => s.faults = e.faults(),
        }
        // Clips keep their ticks across refreshes; new ones start ticked.
        self.clips =
            s.animations.iter().map(|a| (a.clone(), self.clips.get(a).copied().unwrap_or(true))).collect();
        self.summary = s;
    }

    /// Draws the window; returns what the user asked for.
    pub fn ui(&mut self, ctx: &egui::Context, cx: &ExportContext) -> Option<ExportRequest> {
        if !self.open {
            return None;
        }
        self.refresh(cx);
        let mut request = None;
        let mut open = self.open;
        egui::Window::new("Export glTF").open(&mut open).resizable(false).collapsible(false).show(
            ctx,
            |ui| {
                request = self.body(ui, cx);
            },
        );
        self.open = open && !matches!(request, Some(ExportRequest::Export(_)));
        request
    }

    fn body(&mut self, ui: &mut egui::Ui, cx: &ExportContext) -> Option<ExportRequest> {
        let mut request = None;
        egui::Grid::new("export options").num_columns(2).spacing([12.0, 6.0]).show(ui, |ui| {
            ui.label("Scene");
            let before = self.scene.clone();
            egui::ComboBox::from_id_salt("export scene").selected_text(scene_stem(&self.scene)).show_ui(
                ui,
                |ui| {
                    for s in &cx.project.manifest.scenes {
                        ui.selectable_value(&mut self.scene, s.clone(), scene_stem(s));
                    }
                },
            );
            if self.scene != before {
                // A file named after the scene follows it.
                let p = Path::new(&self.path);
                if p.file_stem().is_some_and(|s| s.to_string_lossy() == scene_stem(&before)) {
                    let ext = p.extension().map_or("glb".into(), |e| e.to_string_lossy().into_owned());
                    self.path =
                        p.with_file_name(format!("{}.{ext}", scene_stem(&self.scene))).display().to_string();
                }
            }
            ui.end_row();
            ui.label("File");
            ui.horizontal(|ui| {
                ui.add(egui::TextEdit::singleline(&mut self.path).desired_width(260.0).hint_text("out.glb"));
                if ui.button("Browse…").clicked() {
                    request = Some(ExportRequest::Browse);
                }
            });
            ui.end_row();
            ui.label("Format");
            ui.horizontal(|ui| {
                let glb = self.path.to_ascii_lowercase().ends_with(".glb");
                if ui.radio(glb, "GLB (one file)").clicked() {
                    self.path = with_extension(&self.path, "glb");
                }
                if ui.radio(!glb, "glTF + .bin").clicked() {
                    self.path = with_extension(&self.path, "gltf");
                }
            });
            ui.end_row();
            self.easing_rows(ui);
            ui.label("Joints");
            choice(ui, "export joints", &mut self.joints, &JOINTS);
            ui.end_row();
            ui.label("Weights");
            choice(ui, "export weights", &mut self.weights, &WEIGHTS);
            ui.end_row();
        });
        ui.separator();
        self.clip_list(ui);
        ui.separator();
        let ready = self.summary.faults.is_empty() && !self.path.trim().is_empty();
        ui.horizontal(|ui| {
            if ui.add_enabled(ready, egui::Button::new("Export")).clicked() {
                request = Some(ExportRequest::Export(Command::ExportGltf {
                    scene: self.scene.clone(),
                    path: PathBuf::from(self.path.trim()),
                    options: Box::new(self.options()),
                }));
            }
            if ui.button("Cancel").clicked() {
                self.open = false;
            }
        });
        request
    }

    fn easing_rows(&mut self, ui: &mut egui::Ui) {
        ui.label("Eased keys");
        ui.horizontal(|ui| {
            ui.radio_value(&mut self.bake, true, "Bake");
            ui.radio_value(&mut self.bake, false, "Write linear");
        });
        ui.end_row();
        if self.bake {
            ui.label("Sample rate");
            ui.horizontal(|ui| {
                ui.checkbox(&mut self.clip_rate, "Clip's frame rate");
                ui.add_enabled(
                    !self.clip_rate,
                    egui::DragValue::new(&mut self.rate).range(0.1..=10_000.0).suffix(" /s").speed(1.0),
                );
            });
            ui.end_row();
            ui.label("Error bound");
            ui.add(
                egui::DragValue::new(&mut self.bound)
                    .range(1.0e-7..=1.0)
                    .speed(1.0e-5)
                    .max_decimals(7)
                    .suffix(" m / rad"),
            )
            .on_hover_text("Keys are added until every baked segment is within this of Marrow's own curve");
            ui.end_row();
        }
    }

    fn clip_list(&mut self, ui: &mut egui::Ui) {
        if !self.summary.faults.is_empty() {
            ui.colored_label(
                ui.visuals().error_fg_color,
                format!("Cannot export: {} fault(s)", self.summary.faults.len()),
            );
            for f in &self.summary.faults {
                ui.colored_label(ui.visuals().error_fg_color, format!("• {f}"));
            }
            return;
        }
        ui.label(format!(
            "Clips ({} of {})",
            self.clips.values().filter(|&&on| on).count(),
            self.clips.len()
        ));
        if self.clips.is_empty() {
            ui.weak("The scene plays no clip: nodes, meshes and skins only.");
        }
        for (name, on) in &mut self.clips {
            ui.checkbox(on, name.as_str());
        }
        for n in &self.summary.notes {
            ui.weak(n);
        }
    }
}

fn choice<T: Copy + PartialEq>(ui: &mut egui::Ui, id: &str, value: &mut T, list: &[(T, &str)]) {
    let shown = list.iter().find(|(v, _)| v == value).map_or("", |(_, l)| l);
    egui::ComboBox::from_id_salt(id).selected_text(shown).show_ui(ui, |ui| {
        for (v, label) in list {
            ui.selectable_value(value, *v, *label);
        }
    });
}

fn with_extension(path: &str, ext: &str) -> String {
    let p = Path::new(path);
    if path.is_empty() { format!("export.{ext}") } else { p.with_extension(ext).display().to_string() }
}
