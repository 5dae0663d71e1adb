//! The selected node's details: its faults in full, what feeds each input (a picker per pin, so
//! wiring also works without dragging), and the editors a node body is too small for: the
//! BlendSpace1D axis (samples dragged along it, the current position as a draggable point that
//! drives the preview, weights and the shared phase while it plays), the Mask's bone tree (a
//! weight per bone, apply to children, Upper/Lower Body presets) and the Adjust entries.
//!
//! Everything authored comes out as `GraphOp`s; the live position point sends a session
//! command instead when a parameter drives it.
//!
//! Not here: the canvas (`super::view`), parameters (`super::params`).

use std::collections::HashMap;

use egui::{Color32, Pos2, Rect, RichText, Sense, Stroke, Ui, Vec2};
use glam::Vec3;
use marrow_engine::graph::{
    AdjustEntry, AdjustOp, AnimGraph, BlendSample, Drive, GraphInstance, MaskSubtree, Node, NodeId, NodeKind,
    ParamValue,
};
use marrow_engine::skeleton::{NO_PARENT, Skeleton};

use super::view::{adjust_name, input_pins, short};
use crate::command::Command;
use crate::document::graph_ops::{GraphOp, node_title};
use crate::widgets::named;

/// What the details panel reads.
pub struct DetailsCx<'a> {
    /// The graph.
    pub graph: &'a AnimGraph,
    /// The project's clips.
    pub clips: &'a [String],
    /// The skeleton the graph is checked against (bone pickers, the mask tree).
    pub skeleton: Option<&'a Skeleton>,
    /// The running preview of this graph.
    pub live: Option<&'a GraphInstance>,
    /// Messages per node.
    pub faults: &'a HashMap<NodeId, Vec<String>>,
    /// The Adjust entry the viewport's gizmo edits, if it is in this graph.
    pub gizmo: Option<(NodeId, usize)>,
}

/// What the details panel asks for.
#[derive(Default)]
pub struct DetailsOut {
    /// Authored edits.
    pub ops: Vec<GraphOp>,
    /// Session commands (the live position point).
    pub commands: Vec<Command>,
    /// A new target for the viewport's Adjust gizmo (`Some(None)`: none).
    pub gizmo: Option<Option<(NodeId, usize)>>,
}

/// The node details' own state.
#[derive(Debug, Default)]
pub struct DetailsPanel {
    /// The mask tree's filter text.
    bone_filter: String,
}

fn set(out: &mut DetailsOut, id: NodeId, kind: NodeKind, field: &str) {
    out.ops.push(GraphOp::SetNode { node: id, kind, field: field.to_owned() });
}

fn clip_picker(
    ui: &mut Ui,
    salt: impl std::hash::Hash + std::fmt::Debug,
    clips: &[String],
    current: &str,
) -> Option<String> {
    let mut pick = None;
    egui::ComboBox::from_id_salt(salt).selected_text(short(current)).width(180.0).show_ui(ui, |ui| {
        for c in clips {
            if ui.selectable_label(c == current, c.as_str()).clicked() {
                pick = Some(c.clone());
            }
        }
    });
    pick
}

fn bone_picker(
    ui: &mut Ui,
    salt: impl std::hash::Hash + std::fmt::Debug,
    skeleton: Option<&Skeleton>,
    current: &str,
) -> Option<String> {
    match skeleton {
        Some(sk) => {
            let mut pick = None;
            egui::ComboBox::from_id_salt(salt)
                .selected_text(if current.is_empty() { "(bone)" } else { current })
                .width(150.0)
                .show_ui(ui, |ui| {
                    for b in &sk.bone_names {
                        if ui.selectable_label(b == current, b.as_str()).clicked() {
                            pick = Some(b.clone());
                        }
                    }
                });
            pick
        }
        None => {
            let mut text = current.to_owned();
            let r = ui.add(egui::TextEdit::singleline(&mut text).desired_width(150.0).hint_text("bone name"));
            (r.lost_focus() && text != current).then_some(text)
        }
    }
}

/// Per-bone weights of a mask's subtrees (later subtrees override earlier ones) and the bone
/// each weight comes from.
pub fn mask_weights(sk: &Skeleton, subtrees: &[MaskSubtree]) -> Vec<(f32, Option<usize>)> {
    let n = sk.bone_count();
    let mut depth_below: Vec<Option<u32>> = vec![None; n];
    let mut out = vec![(0.0, None); n];
    for s in subtrees {
        let Some(root) = sk.bone_names.iter().position(|b| *b == s.bone) else { continue };
        depth_below.iter_mut().for_each(|d| *d = None);
        depth_below[root] = Some(0);
        for b in root..n {
            let p = sk.parents[b];
            if b != root
                && p != NO_PARENT
                && (p as usize) < n
                && let Some(d) = depth_below[p as usize]
            {
                depth_below[b] = Some(d + 1);
            }
            if let Some(d) = depth_below[b] {
                out[b] = (s.weight * (1.0 - s.falloff * d as f32).max(0.0), Some(root));
            }
        }
    }
    out
}

fn depth(sk: &Skeleton, b: usize) -> usize {
    let mut d = 0;
    let mut p = sk.parents[b];
    while p != NO_PARENT && (p as usize) < sk.bone_count() && d < 256 {
        d += 1;
        p = sk.parents[p as usize];
    }
    d
}

fn descendants(sk: &Skeleton, root: usize) -> Vec<usize> {
    let mut inside = vec![false; sk.bone_count()];
    inside[root] = true;
    let mut out = Vec::new();
    for b in root + 1..sk.bone_count() {
        let p = sk.parents[b];
        if p != NO_PARENT && inside.get(p as usize).copied().unwrap_or(false) {
            inside[b] = true;
            out.push(b);
        }
    }
    out
}

/// Finds a bone whose lowercase name contains one of `words`.
fn find_bone(sk: &Skeleton, words: &[&str]) -> Option<usize> {
    sk.bone_names.iter().position(|n| {
        let l = n.to_lowercase();
        words.iter().any(|w| l.contains(w))
    })
}

/// The Upper Body and Lower Body presets for `sk`, when its bone names allow (a spine bone).
pub fn mask_presets(sk: &Skeleton) -> Option<(Vec<MaskSubtree>, Vec<MaskSubtree>)> {
    let spine = find_bone(sk, &["spine", "chest", "torso"])?;
    let hips = find_bone(sk, &["hip", "pelvis"]).filter(|&h| h < spine).unwrap_or(0);
    let sub = |b: usize, w: f32| MaskSubtree { bone: sk.bone_names[b].clone(), weight: w, falloff: 0.0 };
    Some((vec![sub(spine, 1.0)], vec![sub(hips, 1.0), sub(spine, 0.0)]))
}

impl DetailsPanel {
    /// Draws the details of `node`.
    pub fn ui(&mut self, ui: &mut Ui, cx: &DetailsCx, node: &Node, out: &mut DetailsOut) {
        let id = node.id;
        ui.heading(node_title(node));
        if let Some(f) = cx.faults.get(&id) {
            for m in f {
                ui.add(
                    egui::Label::new(
                        RichText::new(format!("⚠ {m}")).color(Color32::from_rgb(0xff, 0x80, 0x80)),
                    )
                    .wrap(),
                );
            }
        }
        self.inputs(ui, cx, node, out);
        ui.separator();
        match node.kind.clone() {
            NodeKind::Clip { clip, speed, looping } => {
                ui.horizontal(|ui| {
                    ui.label("Clip");
                    if let Some(c) = clip_picker(ui, ("details clip", id.0), cx.clips, &clip) {
                        set(out, id, NodeKind::Clip { clip: c, speed, looping }, "clip");
                    }
                });
                ui.horizontal(|ui| {
                    let mut s = speed;
                    ui.label("Speed");
                    if ui.add(egui::DragValue::new(&mut s).speed(0.01)).changed() && s.is_finite() {
                        set(out, id, NodeKind::Clip { clip: clip.clone(), speed: s, looping }, "speed");
                    }
                    let mut l = looping;
                    if ui.checkbox(&mut l, "Loop").changed() {
                        set(out, id, NodeKind::Clip { clip: clip.clone(), speed, looping: l }, "looping");
                    }
                });
            }
            NodeKind::BlendSpace1D { samples, position, looping } => {
                self.blend_space(ui, cx, id, &samples, position, looping, out);
            }
            NodeKind::Mask { weight, subtrees } => self.mask(ui, cx, id, weight, &subtrees, out),
            NodeKind::Adjust { entries } => self.adjust(ui, cx, id, &entries, out),
            NodeKind::Unknown { kind, settings } => {
                ui.label(format!("A node of kind {kind:?}, which this build does not know."));
                ui.weak("It is kept as written and saved back unchanged; the graph cannot play until it is deleted.");
                ui.add(egui::Label::new(RichText::new(settings).monospace().small()).wrap());
            }
            NodeKind::Output => {
                ui.weak("The graph's result: the pose fed to its input is what the rig plays.");
            }
            NodeKind::Parameter { .. }
            | NodeKind::Blend2 { .. }
            | NodeKind::Additive { .. }
            | NodeKind::TimeScale { .. } => {
                ui.weak("Its settings are on the node.");
            }
        }
    }

    /// A "fed by" picker per input pin.
    fn inputs(&mut self, ui: &mut Ui, cx: &DetailsCx, node: &Node, out: &mut DetailsOut) {
        let pins = input_pins(cx.graph, node);
        if pins.is_empty() {
            return;
        }
        ui.separator();
        egui::Grid::new(("inputs", node.id.0)).num_columns(2).show(ui, |ui| {
            for (pin, ty) in pins {
                ui.label(&pin);
                let current = cx.graph.input(node.id, &pin);
                let text = current.and_then(|c| cx.graph.node(c)).map_or("(none)".to_owned(), node_title);
                let mut pick: Option<Option<NodeId>> = None;
                let r = egui::ComboBox::from_id_salt(("feed", node.id.0, pin.as_str()))
                    .selected_text(text)
                    .width(160.0)
                    .show_ui(ui, |ui| {
                        if ui.selectable_label(current.is_none(), "(none)").clicked() {
                            pick = Some(None);
                        }
                        for n in &cx.graph.nodes {
                            if n.id != node.id
                                && ty.is_some()
                                && n.kind.output() == ty
                                && ui.selectable_label(current == Some(n.id), node_title(n)).clicked()
                            {
                                pick = Some(Some(n.id));
                            }
                        }
                    });
                named(r.response, egui::WidgetType::ComboBox, &format!("{} {pin} input", node_title(node)));
                match pick {
                    Some(Some(from)) => {
                        out.ops.push(GraphOp::Connect { from, to: node.id, pin: pin.clone() })
                    }
                    Some(None) if current.is_some() => {
                        out.ops.push(GraphOp::Disconnect { to: node.id, pin: pin.clone() })
                    }
                    _ => {}
                }
                ui.end_row();
            }
        });
    }

    #[allow(clippy::too_many_arguments)]
    fn blend_space(
        &mut self,
        ui: &mut Ui,
        cx: &DetailsCx,
        id: NodeId,
        samples: &[BlendSample],
        position: f32,
        looping: bool,
        out: &mut DetailsOut,
    ) {
        let driver =
            cx.graph.input(id, "position").and_then(|s| cx.graph.node(s)).and_then(|n| match &n.kind {
                NodeKind::Parameter { name } => Some(name.clone()),
                _ => None,
            });
        let live_x = match (&driver, cx.live) {
            (Some(name), Some(inst)) => inst.parameter(name).map(|v| v.as_f32()),
            _ => None,
        };
        let x_now = live_x.unwrap_or(position);
        // The axis.
        let (lo, hi) = {
            let mut lo = samples.iter().map(|s| s.position).fold(x_now, f32::min);
            let mut hi = samples.iter().map(|s| s.position).fold(x_now, f32::max);
            let pad = ((hi - lo) * 0.1).max(0.5);
            lo -= pad;
            hi += pad;
            (lo, hi)
        };
        let width = ui.available_width().max(160.0);
        let (rect, _) = ui.allocate_exact_size(Vec2::new(width, 86.0), Sense::hover());
        let axis_y = rect.top() + 52.0;
        let to_x = |v: f32| rect.left() + 10.0 + (v - lo) / (hi - lo) * (rect.width() - 20.0);
        let to_v = |x: f32| lo + (x - rect.left() - 10.0) / (rect.width() - 20.0) * (hi - lo);
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 4.0, ui.visuals().extreme_bg_color);
        painter.line_segment(
            [Pos2::new(to_x(lo), axis_y), Pos2::new(to_x(hi), axis_y)],
            Stroke::new(1.5, Color32::GRAY),
        );
        let mut weights = vec![0.0; samples.len()];
        let sorted_index = {
            let mut idx: Vec<usize> = (0..samples.len()).collect();
            idx.sort_by(|&a, &b| samples[a].position.total_cmp(&samples[b].position));
            idx
        };
        if let Some(inst) = cx.live {
            let mut w = vec![0.0; samples.len()];
            if inst.space_weights(id, &mut w) {
                // Weights come in position order.
                for (k, &i) in sorted_index.iter().enumerate() {
                    weights[i] = w[k];
                }
            }
        }
        for (i, s) in samples.iter().enumerate() {
            let c = Pos2::new(to_x(s.position), axis_y);
            let r = ui.interact(
                Rect::from_center_size(c, Vec2::splat(16.0)),
                ui.id().with(("bs sample", id.0, i)),
                Sense::drag(),
            );
            let r = named(r, egui::WidgetType::Other, &format!("sample {}", short(&s.clip)));
            let hot = r.hovered() || r.dragged();
            let fill = if weights[i] > 0.0 {
                Color32::from_rgb(0x4f, 0xa8, 0xe8).gamma_multiply(0.4 + 0.6 * weights[i])
            } else {
                Color32::from_rgb(0x4f, 0x6a, 0x88)
            };
            painter.circle(c, if hot { 7.0 } else { 6.0 }, fill, Stroke::new(1.0, Color32::WHITE));
            let row = if i % 2 == 0 { -22.0 } else { -38.0 };
            painter.text(
                c + Vec2::new(0.0, row),
                egui::Align2::CENTER_CENTER,
                short(&s.clip),
                egui::FontId::proportional(11.0),
                ui.visuals().text_color(),
            );
            if cx.live.is_some() {
                painter.text(
                    c + Vec2::new(0.0, 16.0),
                    egui::Align2::CENTER_CENTER,
                    format!("{:.2}", weights[i]),
                    egui::FontId::proportional(10.0),
                    Color32::GRAY,
                );
            }
            if r.dragged()
                && let Some(p) = r.interact_pointer_pos()
            {
                let mut next = samples.to_vec();
                next[i].position = (to_v(p.x) * 100.0).round() / 100.0;
                set(out, id, NodeKind::BlendSpace1D { samples: next, position, looping }, "samples");
            }
        }
        // The current position: a diamond that drives the preview (or the authored constant).
        let c = Pos2::new(to_x(x_now), axis_y);
        let r = ui.interact(
            Rect::from_center_size(c, Vec2::splat(18.0)),
            ui.id().with(("bs position", id.0)),
            Sense::drag(),
        );
        let r = named(r, egui::WidgetType::Other, "blend position");
        let d = 7.0;
        painter.add(egui::Shape::convex_polygon(
            vec![
                c + Vec2::new(0.0, -d),
                c + Vec2::new(d, 0.0),
                c + Vec2::new(0.0, d),
                c + Vec2::new(-d, 0.0),
            ],
            Color32::from_rgb(0xff, 0xb0, 0x40),
            Stroke::new(1.0, Color32::BLACK),
        ));
        painter.text(
            rect.left_bottom() + Vec2::new(6.0, -4.0),
            egui::Align2::LEFT_BOTTOM,
            format!("position {x_now:.2}{}", driver.as_ref().map_or(String::new(), |d| format!(" from {d}"))),
            egui::FontId::proportional(11.0),
            Color32::from_rgb(0xff, 0xb0, 0x40),
        );
        if r.dragged()
            && let Some(p) = r.interact_pointer_pos()
        {
            let v = to_v(p.x);
            match &driver {
                Some(name) => out
                    .commands
                    .push(Command::SetGraphParameter { name: name.clone(), value: ParamValue::Float(v) }),
                None => set(
                    out,
                    id,
                    NodeKind::BlendSpace1D { samples: samples.to_vec(), position: v, looping },
                    "position",
                ),
            }
        }
        if let Some(inst) = cx.live
            && let Some(ph) = inst.space_phase(id)
        {
            ui.horizontal(|ui| {
                ui.label("Phase");
                ui.add(egui::ProgressBar::new(ph).desired_width(120.0).text(format!("{ph:.2}")));
            });
            ui.weak("Every clip samples at the same normalized phase (feet land together).");
        }
        self.sample_list(ui, cx, id, samples, position, looping, out);
    }

    /// The blend space's samples as a list: clip, position, speed, remove; Loop; Add Sample.
    #[allow(clippy::too_many_arguments)]
    fn sample_list(
        &mut self,
        ui: &mut Ui,
        cx: &DetailsCx,
        id: NodeId,
        samples: &[BlendSample],
        position: f32,
        looping: bool,
        out: &mut DetailsOut,
    ) {
        ui.horizontal(|ui| {
            let mut l = looping;
            if ui.checkbox(&mut l, "Loop").changed() {
                set(
                    out,
                    id,
                    NodeKind::BlendSpace1D { samples: samples.to_vec(), position, looping: l },
                    "looping",
                );
            }
        });
        let mut next = samples.to_vec();
        let mut changed: Option<&str> = None;
        let mut remove = None;
        egui::Grid::new(("bs samples", id.0)).num_columns(4).show(ui, |ui| {
            for (i, s) in next.iter_mut().enumerate() {
                if let Some(c) = clip_picker(ui, ("bs clip", id.0, i), cx.clips, &s.clip) {
                    s.clip = c;
                    changed = Some("samples");
                }
                if ui.add(egui::DragValue::new(&mut s.position).speed(0.01).prefix("at ")).changed() {
                    changed = Some("samples");
                }
                if ui.add(egui::DragValue::new(&mut s.speed).speed(0.01).prefix("speed ")).changed() {
                    changed = Some("samples");
                }
                if ui.small_button("✖").on_hover_text("Remove this sample").clicked() {
                    remove = Some(i);
                }
                ui.end_row();
            }
        });
        if let Some(i) = remove {
            next.remove(i);
            set(out, id, NodeKind::BlendSpace1D { samples: next, position, looping }, "samples (remove)");
        } else if let Some(f) = changed {
            if next.iter().all(|s| s.position.is_finite() && s.speed.is_finite()) {
                set(out, id, NodeKind::BlendSpace1D { samples: next, position, looping }, f);
            }
        } else if ui.button("Add Sample").clicked() {
            let at = samples.iter().map(|s| s.position).fold(f32::NEG_INFINITY, f32::max);
            let at = if at.is_finite() { at + 1.0 } else { 0.0 };

            // The next clip not on the axis yet (else the first).
            let clip = cx
                .clips
                .iter()
                .find(|c| !samples.iter().any(|s| s.clip == **c))
                .or(cx.clips.first())
                .cloned()
                .unwrap_or_default();
            next.push(BlendSample { clip, position: at, speed: 1.0 });
            set(out, id, NodeKind::BlendSpace1D { samples: next, position, looping }, "samples (add)");
        }
    }

    fn mask(
        &mut self,
        ui: &mut Ui,
        cx: &DetailsCx,
        id: NodeId,
        weight: f32,
        subtrees: &[MaskSubtree],
        out: &mut DetailsOut,
    ) {
        let Some(sk) = cx.skeleton else {
            ui.weak("The mask edits bones of a rig: preview the graph on a rig, or use clips of one.");
            for s in subtrees {
                ui.label(format!("{} {:.2}", s.bone, s.weight));
            }
            return;
        };
        let with = |subtrees: Vec<MaskSubtree>| NodeKind::Mask { weight, subtrees };
        ui.horizontal(|ui| {
            match mask_presets(sk) {
                Some((upper, lower)) => {
                    if ui.button("Upper Body").clicked() {
                        set(out, id, with(upper), "bones (Upper Body)");
                    }
                    if ui.button("Lower Body").clicked() {
                        set(out, id, with(lower), "bones (Lower Body)");
                    }
                }
                None => {
                    ui.add_enabled(false, egui::Button::new("Upper Body"))
                        .on_disabled_hover_text("needs a bone named spine, chest or torso");
                }
            }
            if ui.button("Clear").clicked() {
                set(out, id, with(Vec::new()), "bones (clear)");
            }
        });
        ui.add(egui::TextEdit::singleline(&mut self.bone_filter).hint_text("Filter bones…"));
        let weights = mask_weights(sk, subtrees);
        let filter = self.bone_filter.to_lowercase();
        egui::ScrollArea::vertical().max_height(320.0).id_salt(("mask tree", id.0)).show(ui, |ui| {
            for (b, name) in sk.bone_names.iter().enumerate() {
                if !filter.is_empty() && !name.to_lowercase().contains(&filter) {
                    continue;
                }
                let own = subtrees.iter().position(|s| s.bone == *name);
                ui.horizontal(|ui| {
                    ui.add_space(12.0 * depth(sk, b).min(24) as f32);
                    let mut on = own.is_some();
                    let r = ui.checkbox(&mut on, name.as_str());
                    if r.changed() {
                        let mut next = subtrees.to_vec();
                        match own {
                            Some(i) => {
                                next.remove(i);
                            }
                            None => {
                                let w = if weights[b].1.is_some() { weights[b].0 } else { 1.0 };
                                // Kept in bone order, so a child's own weight overrides its parent's.
                                let at = next
                                    .iter()
                                    .position(|s| {
                                        sk.bone_names.iter().position(|n| *n == s.bone).is_some_and(|k| k > b)
                                    })
                                    .unwrap_or(next.len());
                                next.insert(at, MaskSubtree { bone: name.clone(), weight: w, falloff: 0.0 });
                            }
                        }
                        set(out, id, with(next), "bones");
                    }
                    match own {
                        Some(i) => {
                            let mut w = subtrees[i].weight;
                            let r = ui.add(egui::DragValue::new(&mut w).speed(0.01).range(0.0..=1.0));
                            if named(r, egui::WidgetType::DragValue, &format!("{name} weight")).changed() {
                                let mut next = subtrees.to_vec();
                                next[i].weight = w;
                                set(out, id, with(next), &format!("{name} weight"));
                            }
                            let kids = descendants(sk, b);
                            let overridden =
                                kids.iter().any(|&k| subtrees.iter().any(|s| s.bone == sk.bone_names[k]));
                            if overridden && ui.small_button("Apply to Children").clicked() {
                                let next: Vec<MaskSubtree> = subtrees
                                    .iter()
                                    .filter(|s| !kids.iter().any(|&k| sk.bone_names[k] == s.bone))
                                    .cloned()
                                    .collect();
                                set(out, id, with(next), "bones (apply to children)");
                            }
                        }
                        None => {
                            let (w, from) = weights[b];
                            match from {
                                Some(r) => ui.weak(format!("{w:.2} from {}", sk.bone_names[r])),
                                None => ui.weak("base"),
                            };
                        }
                    }
                });
            }
        });
    }

    fn adjust(
        &mut self,
        ui: &mut Ui,
        cx: &DetailsCx,
        id: NodeId,
        entries: &[AdjustEntry],
        out: &mut DetailsOut,
    ) {
        let mut next = entries.to_vec();
        let mut changed: Option<String> = None;
        let mut remove = None;
        for (i, e) in next.iter_mut().enumerate() {
            ui.separator();
            ui.horizontal(|ui| {
                if let Some(b) = bone_picker(ui, ("adjust bone", id.0, i), cx.skeleton, &e.bone) {
                    e.bone = b;
                    changed = Some("adjust bone".into());
                }
                let mut op = e.op;
                egui::ComboBox::from_id_salt(("adjust op", id.0, i))
                    .selected_text(adjust_name(&op))
                    .width(80.0)
                    .show_ui(ui, |ui| {
                        for (name, o) in [
                            ("Rotate", AdjustOp::Rotate { axis: Vec3::X }),
                            ("Orient", AdjustOp::Orient { axis: Vec3::X }),
                            ("Offset", AdjustOp::Offset { direction: Vec3::Y }),
                            ("Scale", AdjustOp::Scale),
                        ] {
                            if ui.selectable_label(adjust_name(&op) == name, name).clicked() {
                                op = o;
                            }
                        }
                    });
                if op != e.op {
                    e.op = op;
                    changed = Some("adjust kind".into());
                }
                if ui.small_button("✖").on_hover_text("Remove this adjust").clicked() {
                    remove = Some(i);
                }
                if matches!(e.op, AdjustOp::Offset { .. }) {
                    let on = cx.gizmo == Some((id, i));
                    let r = ui
                        .selectable_label(on, "Gizmo")
                        .on_hover_text("Move the offset with the viewport's gizmo while the graph previews");
                    if r.clicked() {
                        out.gizmo = Some((!on).then_some((id, i)));
                    }
                }
            });
            let axis = match &mut e.op {
                AdjustOp::Rotate { axis } | AdjustOp::Orient { axis } => Some(("axis", axis)),
                AdjustOp::Offset { direction } => Some(("direction", direction)),
                AdjustOp::Scale => None,
            };
            if let Some((label, v)) = axis {
                ui.horizontal(|ui| {
                    ui.label(label);
                    for k in 0..3 {
                        if ui.add(egui::DragValue::new(&mut v[k]).speed(0.01).max_decimals(3)).changed() {
                            changed = Some(format!("adjust {label}"));
                        }
                    }
                });
            }
            ui.horizontal(|ui| {
                ui.label("amount");
                let mut by_param = matches!(e.amount, Drive::Parameter(_));
                if ui.checkbox(&mut by_param, "from parameter").changed() {
                    e.amount = if by_param {
                        Drive::Parameter(
                            cx.graph.parameters.first().map(|p| p.name.clone()).unwrap_or_default(),
                        )
                    } else {
                        Drive::Constant(0.0)
                    };
                    changed = Some("adjust amount".into());
                }
                match &mut e.amount {
                    Drive::Constant(c) => {
                        let r = ui.add(egui::DragValue::new(c).speed(0.01));
                        if named(r, egui::WidgetType::DragValue, "adjust amount").changed() {
                            changed = Some("adjust amount".into());
                        }
                    }
                    Drive::Parameter(p) => {
                        egui::ComboBox::from_id_salt(("adjust param", id.0, i))
                            .selected_text(p.as_str())
                            .show_ui(ui, |ui| {
                                for d in &cx.graph.parameters {
                                    if ui.selectable_label(d.name == *p, &d.name).clicked() {
                                        *p = d.name.clone();
                                        changed = Some("adjust amount".into());
                                    }
                                }
                            });
                    }
                }
            });
        }
        ui.separator();
        if let Some(i) = remove {
            next.remove(i);
            set(out, id, NodeKind::Adjust { entries: next }, "adjusts (remove)");
        } else if let Some(f) = changed {
            let finite = next.iter().all(|e| match e.op {
                AdjustOp::Rotate { axis } | AdjustOp::Orient { axis } => axis.is_finite(),
                AdjustOp::Offset { direction } => direction.is_finite(),
                AdjustOp::Scale => true,
            });
            if finite {
                set(out, id, NodeKind::Adjust { entries: next }, &f);
            }
        } else if ui.button("Add Adjust").clicked() {
            let bone = cx.skeleton.and_then(|s| s.bone_names.first().cloned()).unwrap_or_default();
            next.push(AdjustEntry {
                bone,
                op: AdjustOp::Rotate { axis: Vec3::Y },
                amount: Drive::Constant(0.0),
            });
            set(out, id, NodeKind::Adjust { entries: next }, "adjusts (add)");
        }
    }
}
