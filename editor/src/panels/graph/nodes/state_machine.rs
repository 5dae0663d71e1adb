//! The StateMachine node's details: with its state canvas closed, a summary (the entry, the
//! states and transitions, Open State Canvas); with it open, the inspector of what is selected
//! there. A state's inspector renames it, makes it the entry, picks its source (a clip, a blend
//! space on a float parameter, another graph, which it can open) and deletes it. A transition's
//! inspector edits its conditions (a row each: parameter, comparison, value), exit time,
//! duration and unit, blend curve (the 31 named easings), interruption and sync, its order among
//! the transitions leaving its state, and deletes it.
//!
//! Every change is one `GraphOp::SetNode` of the whole machine. Not here: the canvas
//! (`super::super::machine_canvas`).

use egui::{RichText, Ui};
use marrow_engine::easing::Easing;
use marrow_engine::graph::machine::{
    ANY_STATE, Condition, DurationUnit, Interruption, StateMachine, StateSource, SyncRule, Test, Transition,
};
use marrow_engine::graph::{BlendSample, NodeId, ParamValue};

use super::super::details::{DetailsCx, DetailsOut, clip_picker};
use super::super::machine_canvas::{MachineItem, edit, new_state, next_spot, remove_state};
use crate::widgets::named;

/// Draws the details of StateMachine node `id` with machine `m`.
pub fn editor(ui: &mut Ui, cx: &DetailsCx, id: NodeId, m: &StateMachine, out: &mut DetailsOut) {
    let open = cx.machine.filter(|v| v.node == id);
    match open.and_then(|v| v.selected.clone()) {
        Some(MachineItem::State(name)) if m.state(&name).is_some() => state(ui, cx, id, m, &name, out),
        Some(MachineItem::Transition(k)) if k < m.transitions.len() => transition(ui, cx, id, m, k, out),
        _ => summary(ui, cx, id, m, open.is_some(), out),
    }
}

fn summary(ui: &mut Ui, cx: &DetailsCx, id: NodeId, m: &StateMachine, open: bool, out: &mut DetailsOut) {
    if !open {
        let r = ui.button("Open State Canvas");
        if named(r, egui::WidgetType::Button, "Open State Canvas").clicked() {
            out.open_machine = Some(id);
        }
        ui.weak("Or double-click the node.");
    }
    ui.horizontal(|ui| {
        ui.label("Entry");
        let r = egui::ComboBox::from_id_salt(("machine entry", id.0))
            .selected_text(if m.entry.is_empty() { "(none)" } else { m.entry.as_str() })
            .show_ui(ui, |ui| {
                for s in &m.states {
                    if ui.selectable_label(s.name == m.entry, s.name.as_str()).clicked() {
                        let name = s.name.clone();
                        out.ops.push(edit(id, m, "entry", |m| m.entry = name));
                    }
                }
            });
        named(r.response, egui::WidgetType::ComboBox, "Entry state");
    });
    ui.label(RichText::new(format!("{} states", m.states.len())).strong());
    for s in m.states.iter().take(64) {
        if ui.selectable_label(false, format!("{}  ({})", s.name, s.source.label())).clicked() {
            out.open_machine = Some(id);
            out.select = Some(Some(MachineItem::State(s.name.clone())));
        }
    }
    let r = ui.button("Add State");
    if named(r, egui::WidgetType::Button, "Add State").clicked() {
        let first = cx.clips.first().map_or("", String::as_str);
        let state = new_state(m, first, next_spot(m));
        out.select = Some(Some(MachineItem::State(state.name.clone())));
        out.open_machine = Some(id);
        out.ops.push(edit(id, m, "add state", |m| {
            if m.entry.is_empty() {
                m.entry = state.name.clone();
            }
            m.states.push(state);
        }));
    }
    ui.label(RichText::new(format!("{} transitions", m.transitions.len())).strong());
    for (k, t) in m.transitions.iter().enumerate().take(64) {
        if ui.selectable_label(false, format!("{}. {}", k + 1, t.label())).clicked() {
            out.open_machine = Some(id);
            out.select = Some(Some(MachineItem::Transition(k)));
        }
    }
}

fn state(ui: &mut Ui, cx: &DetailsCx, id: NodeId, m: &StateMachine, name: &str, out: &mut DetailsOut) {
    let Some(index) = m.state_index(name) else { return };
    let s = &m.states[index];
    ui.heading(format!("State {name}"));
    if let Some((c, i)) = cx.live.and_then(|g| g.machines().find(|(c, _)| c.node == id))
        && c.states.get(i.active_state()).is_some_and(|x| &*x.name == name)
    {
        let phase = i.state_phase(i.active_state()).unwrap_or(0.0);
        ui.colored_label(
            egui::Color32::from_rgb(0x60, 0xd0, 0xff),
            format!("active, at {:.0}%", phase * 100.0),
        );
    }
    ui.horizontal(|ui| {
        ui.label("Name");
        let key = egui::Id::new(("state name", id.0, index));
        let mut text = ui.data(|d| d.get_temp::<String>(key)).unwrap_or_else(|| name.to_owned());
        let r = ui.add(egui::TextEdit::singleline(&mut text).desired_width(140.0));
        let r = named(r, egui::WidgetType::TextEdit, "State name");
        if r.changed() {
            ui.data_mut(|d| d.insert_temp(key, text.clone()));
        }
        if r.lost_focus() {
            ui.data_mut(|d| d.remove::<String>(key));
            let new = text.trim().to_owned();
            if !new.is_empty() && new != name && m.state(&new).is_none() {
                out.select = Some(Some(MachineItem::State(new.clone())));
                let old = name.to_owned();
                out.ops.push(edit(id, m, "state name", |m| {
                    m.rename_state(&old, &new);
                }));
            }
        }
    });
    if m.entry != name {
        let r = ui.button("Make Entry");
        if named(r, egui::WidgetType::Button, "Make Entry").clicked() {
            let n = name.to_owned();
            out.ops.push(edit(id, m, "entry", |m| m.entry = n));
        }
    } else {
        ui.weak("The entry state: the machine starts here.");
    }
    ui.separator();
    source(ui, cx, id, m, index, &s.source, out);
    ui.separator();
    let r = ui.button("Delete State");
    if named(r, egui::WidgetType::Button, "Delete State").clicked() {
        let n = name.to_owned();
        out.select = Some(None);
        out.ops.push(edit(id, m, "delete state", |m| remove_state(m, &n)));
    }
}

/// The source picker and its settings for state `index`.
fn source(
    ui: &mut Ui,
    cx: &DetailsCx,
    id: NodeId,
    m: &StateMachine,
    index: usize,
    src: &StateSource,
    out: &mut DetailsOut,
) {
    let set = |out: &mut DetailsOut, field: &str, next: StateSource| {
        out.ops.push(edit(id, m, field, |m| m.states[index].source = next));
    };
    let first_clip = cx.clips.first().cloned().unwrap_or_default();
    let floats: Vec<String> = cx
        .graph
        .parameters
        .iter()
        .filter(|p| matches!(p.default, ParamValue::Float(_)))
        .map(|p| p.name.clone())
        .collect();
    let kind = match src {
        StateSource::Clip { .. } => "Clip",
        StateSource::BlendSpace { .. } => "Blend space",
        StateSource::Graph { .. } => "Graph",
    };
    ui.horizontal(|ui| {
        ui.label("Plays");
        let r = egui::ComboBox::from_id_salt(("state source", id.0, index)).selected_text(kind).show_ui(
            ui,
            |ui| {
                if ui.selectable_label(kind == "Clip", "Clip").clicked() && kind != "Clip" {
                    set(
                        out,
                        "state source",
                        StateSource::Clip { clip: first_clip.clone(), speed: 1.0, looping: true },
                    );
                }
                if ui.selectable_label(kind == "Blend space", "Blend space").clicked()
                    && kind != "Blend space"
                {
                    let samples = vec![BlendSample { clip: first_clip.clone(), position: 0.0, speed: 1.0 }];
                    let parameter = floats.first().cloned().unwrap_or_default();
                    set(out, "state source", StateSource::BlendSpace { samples, parameter, looping: true });
                }
                if ui.selectable_label(kind == "Graph", "Graph").clicked() && kind != "Graph" {
                    let graph = cx.graphs.iter().find(|g| **g != cx.path).cloned().unwrap_or_default();
                    set(out, "state source", StateSource::Graph { graph });
                }
            },
        );
        named(r.response, egui::WidgetType::ComboBox, "State source");
    });
    match src.clone() {
        StateSource::Clip { clip, speed, looping } => {
            ui.horizontal(|ui| {
                ui.label("Clip");
                if let Some(c) = clip_picker(ui, ("state clip", id.0, index), cx.clips, &clip) {
                    set(out, "state clip", StateSource::Clip { clip: c, speed, looping });
                }
            });
            ui.horizontal(|ui| {
                let mut s = speed;
                ui.label("Speed");
                if ui.add(egui::DragValue::new(&mut s).speed(0.01)).changed() && s.is_finite() {
                    set(out, "state speed", StateSource::Clip { clip: clip.clone(), speed: s, looping });
                }
                let mut l = looping;
                if ui.checkbox(&mut l, "Loop").changed() {
                    set(out, "state looping", StateSource::Clip { clip: clip.clone(), speed, looping: l });
                }
            });
        }
        StateSource::BlendSpace { samples, parameter, looping } => {
            ui.horizontal(|ui| {
                ui.label("Axis");
                egui::ComboBox::from_id_salt(("state axis", id.0, index))
                    .selected_text(parameter.as_str())
                    .show_ui(ui, |ui| {
                        for p in &floats {
                            if ui.selectable_label(*p == parameter, p.as_str()).clicked() {
                                let next = StateSource::BlendSpace {
                                    samples: samples.clone(),
                                    parameter: p.clone(),
                                    looping,
                                };
                                set(out, "state axis", next);
                            }
                        }
                    });
            });
            let mut next = samples.clone();
            let mut changed = false;
            let mut remove = None;
            for (j, sample) in next.iter_mut().enumerate() {
                ui.horizontal(|ui| {
                    if let Some(c) = clip_picker(ui, ("state sample", id.0, index, j), cx.clips, &sample.clip)
                    {
                        sample.clip = c;
                        changed = true;
                    }
                    changed |= ui
                        .add(egui::DragValue::new(&mut sample.position).speed(0.01).prefix("at "))
                        .changed();
                    if ui.small_button("✕").clicked() {
                        remove = Some(j);
                    }
                });
            }
            if let Some(j) = remove {
                next.remove(j);
                changed = true;
            }
            if ui.button("Add Clip").clicked() {
                let at = next.iter().map(|s| s.position).fold(0.0f32, f32::max) + 1.0;
                next.push(BlendSample { clip: first_clip.clone(), position: at, speed: 1.0 });
                changed = true;
            }
            if changed && next.iter().all(|s| s.position.is_finite()) {
                set(
                    out,
                    "state samples",
                    StateSource::BlendSpace { samples: next, parameter: parameter.clone(), looping },
                );
            }
        }
        StateSource::Graph { graph } => {
            ui.horizontal(|ui| {
                ui.label("Graph");
                egui::ComboBox::from_id_salt(("state graph", id.0, index))
                    .selected_text(graph.as_str())
                    .show_ui(ui, |ui| {
                        for g in cx.graphs {
                            if ui.selectable_label(*g == graph, g.as_str()).clicked() {
                                set(out, "state graph", StateSource::Graph { graph: g.clone() });
                            }
                        }
                    });
            });
            let r = ui.add_enabled(cx.graphs.contains(&graph), egui::Button::new("Open Graph"));
            if named(r, egui::WidgetType::Button, "Open Graph").clicked() {
                out.open_graph = Some(graph);
            }
            ui.weak("The graph reads this graph's parameters of the same name.");
        }
    }
}

/// The comparisons a parameter of this type can use.
fn tests_for(v: ParamValue, value: f32) -> Vec<Test> {
    match v {
        ParamValue::Float(_) => {
            vec![Test::Greater(value), Test::Less(value), Test::AtLeast(value), Test::AtMost(value)]
        }
        ParamValue::Bool(_) => vec![Test::IsTrue, Test::IsFalse],
        ParamValue::Trigger(_) => vec![Test::Triggered],
        // A vector is not tested (the compiler says so for a file that does).
        ParamValue::Vec3(_) => Vec::new(),
    }
}

fn transition(ui: &mut Ui, cx: &DetailsCx, id: NodeId, m: &StateMachine, k: usize, out: &mut DetailsOut) {
    let t = &m.transitions[k];
    ui.heading(format!("Transition {}", t.label()));
    let with = |out: &mut DetailsOut, field: &str, f: &dyn Fn(&mut Transition)| {
        out.ops.push(edit(id, m, field, |m| f(&mut m.transitions[k])));
    };
    ui.horizontal(|ui| {
        ui.label("From");
        let r = egui::ComboBox::from_id_salt(("transition from", id.0, k))
            .selected_text(t.from.as_deref().unwrap_or(ANY_STATE))
            .show_ui(ui, |ui| {
                if ui.selectable_label(t.from.is_none(), ANY_STATE).clicked() {
                    with(out, "transition from", &|t| t.from = None);
                }
                for s in &m.states {
                    if ui.selectable_label(t.from.as_deref() == Some(&s.name), s.name.as_str()).clicked() {
                        let n = s.name.clone();
                        with(out, "transition from", &move |t| t.from = Some(n.clone()));
                    }
                }
            });
        named(r.response, egui::WidgetType::ComboBox, "Transition from");
        ui.label("to");
        let r = egui::ComboBox::from_id_salt(("transition to", id.0, k))
            .selected_text(t.to.as_str())
            .show_ui(ui, |ui| {
                for s in &m.states {
                    if ui.selectable_label(t.to == s.name, s.name.as_str()).clicked() {
                        let n = s.name.clone();
                        with(out, "transition to", &move |t| t.to = n.clone());
                    }
                }
            });
        named(r.response, egui::WidgetType::ComboBox, "Transition to");
    });
    conditions(ui, cx, id, m, k, out);
    ui.separator();
    ui.horizontal(|ui| {
        let mut has = t.exit_time.is_some();
        let r = ui.checkbox(&mut has, "Exit time");
        if named(r, egui::WidgetType::Checkbox, "Exit time").changed() {
            with(out, "exit time", &move |t| t.exit_time = has.then_some(1.0));
        }
        if let Some(e) = t.exit_time {
            let mut e2 = e;
            let r = ui.add(crate::widgets::authored_drag(&mut e2).speed(0.01).range(0.0..=100.0));
            if named(r, egui::WidgetType::DragValue, "Exit time value").changed() && e2.is_finite() {
                with(out, "exit time", &move |t| t.exit_time = Some(e2));
            }
        }
    });
    ui.horizontal(|ui| {
        ui.label("Duration");
        let mut d = t.duration;
        let r = ui.add(crate::widgets::authored_drag(&mut d).speed(0.01).range(0.0..=60.0));
        if named(r, egui::WidgetType::DragValue, "Duration").changed() && d.is_finite() {
            with(out, "duration", &move |t| t.duration = d);
        }
        let unit = match t.unit {
            DurationUnit::Seconds => "s",
            DurationUnit::Normalized => "of the source",
        };
        egui::ComboBox::from_id_salt(("transition unit", id.0, k)).selected_text(unit).show_ui(ui, |ui| {
            for (u, text) in [(DurationUnit::Seconds, "s"), (DurationUnit::Normalized, "of the source")] {
                if ui.selectable_label(t.unit == u, text).clicked() {
                    with(out, "duration unit", &move |t| t.unit = u);
                }
            }
        });
    });
    ui.horizontal(|ui| {
        ui.label("Curve");
        let r = egui::ComboBox::from_id_salt(("transition curve", id.0, k))
            .selected_text(t.curve.name())
            .height(300.0)
            .show_ui(ui, |ui| {
                for &e in Easing::ALL {
                    if ui.selectable_label(t.curve == e, e.name()).clicked() {
                        with(out, "curve", &move |t| t.curve = e);
                    }
                }
            });
        named(r.response, egui::WidgetType::ComboBox, "Curve");
    });
    ui.horizontal(|ui| {
        ui.label("Interrupted by");
        let r = egui::ComboBox::from_id_salt(("transition interruption", id.0, k))
            .selected_text(t.interruption.name())
            .show_ui(ui, |ui| {
                for i in Interruption::ALL {
                    if ui.selectable_label(t.interruption == i, i.name()).clicked() {
                        with(out, "interruption", &move |t| t.interruption = i);
                    }
                }
            });
        named(r.response, egui::WidgetType::ComboBox, "Interruption");
    });
    ui.horizontal(|ui| {
        ui.label("Destination starts");
        let r = egui::ComboBox::from_id_salt(("transition sync", id.0, k))
            .selected_text(t.sync.name())
            .show_ui(ui, |ui| {
                for s in SyncRule::ALL {
                    if ui.selectable_label(t.sync == s, s.name()).clicked() {
                        with(out, "sync", &move |t| t.sync = s);
                    }
                }
            });
        named(r.response, egui::WidgetType::ComboBox, "Sync");
    });
    ui.separator();
    ui.horizontal(|ui| {
        // Order among the transitions: those leaving one state are tried in authored order.
        if ui.add_enabled(k > 0, egui::Button::new("Move Up")).clicked() {
            out.select = Some(Some(MachineItem::Transition(k - 1)));
            out.ops.push(edit(id, m, "transition order", |m| m.transitions.swap(k, k - 1)));
        }
        if ui.add_enabled(k + 1 < m.transitions.len(), egui::Button::new("Move Down")).clicked() {
            out.select = Some(Some(MachineItem::Transition(k + 1)));
            out.ops.push(edit(id, m, "transition order", |m| m.transitions.swap(k, k + 1)));
        }
        let r = ui.button("Delete Transition");
        if named(r, egui::WidgetType::Button, "Delete Transition").clicked() {
            out.select = Some(None);
            out.ops.push(edit(id, m, "delete transition", |m| {
                m.transitions.remove(k);
            }));
        }
    });
}

/// The condition rows of transition `k` and Add Condition.
fn conditions(ui: &mut Ui, cx: &DetailsCx, id: NodeId, m: &StateMachine, k: usize, out: &mut DetailsOut) {
    let t = &m.transitions[k];
    ui.label(RichText::new("Conditions (all must hold)").strong());
    if t.conditions.is_empty() {
        ui.weak("None: the transition is taken as soon as its exit time allows.");
    }
    let params = &cx.graph.parameters;
    let mut next = t.conditions.clone();
    let mut changed = false;
    let mut remove = None;
    for (j, c) in next.iter_mut().enumerate() {
        ui.horizontal(|ui| {
            let r = egui::ComboBox::from_id_salt(("condition parameter", id.0, k, j))
                .selected_text(c.parameter.as_str())
                .width(90.0)
                .show_ui(ui, |ui| {
                    for p in params {
                        if ui.selectable_label(p.name == c.parameter, p.name.as_str()).clicked()
                            && p.name != c.parameter
                        {
                            c.parameter = p.name.clone();
                            c.test = tests_for(p.default, c.test.value().unwrap_or(0.0))[0];
                            changed = true;
                        }
                    }
                });
            named(r.response, egui::WidgetType::ComboBox, &format!("Condition {} parameter", j + 1));
            let kind = params.iter().find(|p| p.name == c.parameter).map(|p| p.default);
            let value = c.test.value().unwrap_or(0.0);
            let r = egui::ComboBox::from_id_salt(("condition test", id.0, k, j))
                .selected_text(c.test.operator())
                .width(70.0)
                .show_ui(ui, |ui| {
                    for test in kind.map(|v| tests_for(v, value)).unwrap_or_else(|| Test::ALL.to_vec()) {
                        if ui
                            .selectable_label(test.operator() == c.test.operator(), test.operator())
                            .clicked()
                        {
                            c.test = test;
                            changed = true;
                        }
                    }
                });
            named(r.response, egui::WidgetType::ComboBox, &format!("Condition {} test", j + 1));
            if let Some(mut v) = c.test.value() {
                let r = ui.add(egui::DragValue::new(&mut v).speed(0.01));
                if named(r, egui::WidgetType::DragValue, &format!("Condition {} value", j + 1)).changed()
                    && v.is_finite()
                {
                    c.test = Test::from_operator(c.test.operator(), v).unwrap_or(c.test);
                    changed = true;
                }
            }
            let r = ui.small_button("✕");
            if named(r, egui::WidgetType::Button, &format!("Remove condition {}", j + 1)).clicked() {
                remove = Some(j);
            }
        });
    }
    if let Some(j) = remove {
        next.remove(j);
        changed = true;
    }
    let r = ui.add_enabled(!params.is_empty(), egui::Button::new("Add Condition"));
    if named(r, egui::WidgetType::Button, "Add Condition").clicked()
        && let Some(p) = params.first()
    {
        next.push(Condition { parameter: p.name.clone(), test: tests_for(p.default, 0.0)[0] });
        changed = true;
    }
    if changed {
        out.ops.push(edit(id, m, "conditions", |m| m.transitions[k].conditions = next));
    }
}
