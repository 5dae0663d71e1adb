//! The graph's parameters: add, rename (every use follows), delete (refused while used, with
//! the uses named), set the authored default; and, while a preview runs, a live slider per
//! parameter that drives the running graph without touching the document.
//!
//! Not here: applying the edits (the app), the preview itself (`crate::session`).

use egui::{Color32, RichText};
use marrow_engine::graph::{AnimGraph, FloatRange, NodeKind, ParamValue};

use crate::command::Command;
use crate::cx::Cx;
use crate::document::Op;
use crate::document::graph_ops::{GraphOp, node_title, parameter_uses};
use crate::widgets::named;

/// The parameters list's own state.
#[derive(Debug, Default)]
pub struct ParamsPanel {
    /// The name typed for a new parameter.
    new_name: String,
    /// Whether the new parameter is a bool.
    /// The type a new parameter gets: its default value (float 0, bool false, trigger unset).
    new_type: NewType,
    /// A parameter being renamed: (name, text so far).
    renaming: Option<(String, String)>,
}

/// The range a live slider spans: the ranges of the pins the parameter drives, as their kinds
/// describe them ([`NodeKind::input_range`]: a blend space's axis, 0..1 for a weight...), 0..1
/// for a pin with no range, else around the default.
pub fn slider_range(g: &AnimGraph, name: &str, default: f32) -> (f32, f32) {
    let mut lo = f32::INFINITY;
    let mut hi = f32::NEG_INFINITY;
    for c in &g.connections {
        let Some(src) = g.node(c.from) else { continue };
        if !matches!(&src.kind, NodeKind::Parameter { name: n } if n == name) {
            continue;
        }
        let Some(to) = g.node(c.to) else { continue };
        let described = to.kind.inputs().iter().find(|p| p.name == c.pin).and_then(|p| p.range);
        let range = match (to.kind.input_range(&c.pin), described) {
            (Some(r), _) => Some(r),
            // A blend space with no samples yet: nothing to span.
            (None, Some(FloatRange::SamplePositions)) => None,
            (None, _) => Some((0.0, 1.0)),
        };
        if let Some((l, h)) = range {
            lo = lo.min(l);
            hi = hi.max(h);
        }
    }
    if !(lo < hi) {
        let span = default.abs().max(1.0);
        (default - span, default + span)
    } else {
        (lo.min(default), hi.max(default))
    }
}

impl ParamsPanel {
    /// Draws the list for the graph at `path`.
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut Cx, path: &str, graph: &AnimGraph, previewing: bool) {
        ui.heading("Parameters");
        if graph.parameters.is_empty() {
            ui.weak(
                "None yet: a parameter drives weights, blend positions and adjusts while the graph plays.",
            );
        }
        let live = |name: &str| cx.session.preview().and_then(|p| p.params.get(name).copied());
        let mut edits: Vec<GraphOp> = Vec::new();
        let mut commands: Vec<Command> = Vec::new();
        for p in &graph.parameters {
            ui.separator();
            let uses = parameter_uses(graph, &p.name);
            ui.horizontal(|ui| {
                if let Some((from, mut text)) = self.renaming.clone().filter(|(n, _)| *n == p.name) {
                    let r = ui.add(
                        egui::TextEdit::singleline(&mut text).desired_width(110.0).id_salt("param rename"),
                    );
                    r.request_focus();
                    if ui.input(|i| i.key_pressed(egui::Key::Escape)) {
                        self.renaming = None;
                    } else if ui.input(|i| i.key_pressed(egui::Key::Enter)) || r.lost_focus() {
                        self.renaming = None;
                        if text != from {
                            edits.push(GraphOp::RenameParameter { from, to: text });
                        }
                    } else {
                        self.renaming = Some((from, text));
                    }
                } else {
                    let r =
                        ui.add(egui::Label::new(RichText::new(&p.name).strong()).sense(egui::Sense::click()));
                    if r.double_clicked() {
                        self.renaming = Some((p.name.clone(), p.name.clone()));
                    }
                    r.on_hover_text("Double-click to rename (every use follows)");
                }
                ui.weak(p.default.type_name());
            });
            ui.horizontal(|ui| {
                ui.label("default");
                match p.default {
                    ParamValue::Float(v) => {
                        let mut x = v;
                        let r = ui.add(egui::DragValue::new(&mut x).speed(0.01));
                        if named(r, egui::WidgetType::DragValue, &format!("{} default", p.name)).changed()
                            && x.is_finite()
                        {
                            edits.push(GraphOp::SetParameterDefault {
                                name: p.name.clone(),
                                value: ParamValue::Float(x),
                            });
                        }
                    }
                    ParamValue::Bool(b) => {
                        let mut x = b;
                        if ui.checkbox(&mut x, "").changed() {
                            edits.push(GraphOp::SetParameterDefault {
                                name: p.name.clone(),
                                value: ParamValue::Bool(x),
                            });
                        }
                    }
                    ParamValue::Trigger(_) => {
                        // Short, so the list stays narrow beside the canvas; the rule on hover.
                        ui.weak("unset").on_hover_text(
                            "A trigger starts unset; setting it fires the first transition that tests it, which clears it",
                        );
                    }
                    ParamValue::Vec3(v) => {
                        if let Some(x) = vector_row(ui, &format!("{} default", p.name), v) {
                            edits.push(GraphOp::SetParameterDefault {
                                name: p.name.clone(),
                                value: ParamValue::Vec3(x),
                            });
                        }
                    }
                }
                let delete = ui.add_enabled(uses.is_empty(), egui::Button::new("Delete").small());
                let delete = named(delete, egui::WidgetType::Button, &format!("Delete {}", p.name));
                if delete.clicked() {
                    edits.push(GraphOp::DeleteParameter { name: p.name.clone() });
                }
                if !uses.is_empty() {
                    delete.on_disabled_hover_text("Used by nodes: remove the uses first");
                }
            });
            if !uses.is_empty() {
                let names: Vec<String> =
                    uses.iter().filter_map(|&id| graph.node(id)).map(node_title).collect();
                ui.weak(format!("used by {}", names.join(", ")));
            } else {
                ui.colored_label(Color32::GRAY, "unused");
            }
            if previewing {
                // A trigger's state is the instance's (a transition clears it there).
                let current = match p.default {
                    ParamValue::Trigger(_) => super::preview_instance(cx).and_then(|g| g.parameter(&p.name)),
                    _ => live(&p.name),
                };
                live_control(ui, graph, p, current.unwrap_or(p.default), &mut commands);
            }
        }
        ui.separator();
        ui.horizontal(|ui| {
            let r = ui.add(
                egui::TextEdit::singleline(&mut self.new_name)
                    .hint_text("new parameter")
                    .desired_width(110.0),
            );
            named(r, egui::WidgetType::TextEdit, "New parameter name");
            let r = egui::ComboBox::from_id_salt("new parameter type")
                .selected_text(self.new_type.name())
                .width(70.0)
                .show_ui(ui, |ui| {
                    for t in NewType::ALL {
                        ui.selectable_value(&mut self.new_type, t, t.name());
                    }
                });
            named(r.response, egui::WidgetType::ComboBox, "New parameter type");
        });
        let name = self.new_name.trim().to_owned();
        let taken = graph.parameter(&name).is_some();
        let add = ui.add_enabled(!name.is_empty() && !taken, egui::Button::new("Add Parameter"));
        if taken {
            ui.colored_label(Color32::from_rgb(0xe0, 0x80, 0x80), format!("{name:?} exists already"));
        }
        if add.clicked() {
            let default = self.new_type.default();
            edits.push(GraphOp::AddParameter { name, default });
            self.new_name.clear();
        }
        for op in edits {
            cx.edit(Op::Graph { path: path.to_owned(), op });
        }
        for c in commands {
            cx.send(c);
        }
    }
}

/// The types the Add Parameter row offers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum NewType {
    #[default]
    Float,
    Bool,
    Trigger,
    Vec3,
}

impl NewType {
    const ALL: [NewType; 4] = [NewType::Float, NewType::Bool, NewType::Trigger, NewType::Vec3];

    fn name(self) -> &'static str {
        self.default().type_name()
    }

    fn default(self) -> ParamValue {
        match self {
            NewType::Float => ParamValue::Float(0.0),
            NewType::Bool => ParamValue::Bool(false),
            NewType::Trigger => ParamValue::Trigger(false),
            NewType::Vec3 => ParamValue::Vec3(glam::Vec3::ZERO),
        }
    }
}

/// Three drag values for a vector, labelled `{label} x` (`y`, `z`) for assistive technology; the
/// new vector when one of them changed to a finite value.
fn vector_row(ui: &mut egui::Ui, label: &str, v: glam::Vec3) -> Option<glam::Vec3> {
    let mut a = v.to_array();
    let mut changed = false;
    for (c, axis) in a.iter_mut().zip(["x", "y", "z"]) {
        let r = ui.add(egui::DragValue::new(c).speed(0.01).prefix(format!("{axis} ")));
        changed |= named(r, egui::WidgetType::DragValue, &format!("{label} {axis}")).changed();
    }
    let out = glam::Vec3::from_array(a);
    (changed && out.is_finite()).then_some(out)
}

/// The live control of parameter `p` while the graph is previewed: a slider for a float, a
/// checkbox for a bool, a Fire button for a trigger (which shows whether it waits), three drag
/// values for a vector.
fn live_control(
    ui: &mut egui::Ui,
    graph: &AnimGraph,
    p: &marrow_engine::graph::ParamDecl,
    current: ParamValue,
    commands: &mut Vec<Command>,
) {
    match current {
        ParamValue::Float(v) => {
            let (lo, hi) = slider_range(graph, &p.name, p.default.as_f32());
            let mut x = v;
            // Not clamped by being shown: a bound or game-set value past the range stays as it is.
            let r = ui.add(crate::widgets::authored_slider(&mut x, lo..=hi, 3).text("live"));
            if named(r, egui::WidgetType::Slider, &format!("{} live", p.name)).changed() && x.is_finite() {
                commands
                    .push(Command::SetGraphParameter { name: p.name.clone(), value: ParamValue::Float(x) });
            }
        }
        ParamValue::Bool(b) => {
            let mut x = b;
            let r = ui.checkbox(&mut x, "live");
            if named(r, egui::WidgetType::Checkbox, &format!("{} live", p.name)).changed() {
                commands
                    .push(Command::SetGraphParameter { name: p.name.clone(), value: ParamValue::Bool(x) });
            }
        }
        ParamValue::Trigger(set) => {
            ui.horizontal(|ui| {
                let r = ui.button("Fire");
                if named(r, egui::WidgetType::Button, &format!("Fire {}", p.name)).clicked() {
                    commands.push(Command::SetGraphParameter {
                        name: p.name.clone(),
                        value: ParamValue::Trigger(true),
                    });
                }
                if set {
                    ui.colored_label(Color32::from_rgb(0xe0, 0xc0, 0x60), "set, waiting for a transition");
                }
            });
        }
        ParamValue::Vec3(v) => {
            ui.horizontal(|ui| {
                ui.label("live");
                if let Some(x) = vector_row(ui, &format!("{} live", p.name), v) {
                    commands.push(Command::SetGraphParameter {
                        name: p.name.clone(),
                        value: ParamValue::Vec3(x),
                    });
                }
            });
        }
    }
}
