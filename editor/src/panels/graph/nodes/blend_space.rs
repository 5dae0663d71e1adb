//! The BlendSpace1D's bespoke editor in the node details: the axis with its samples dragged
//! along it, the current position as a draggable point (a session command when a parameter
//! drives it), the weights and the shared phase while it plays, and the sample list.
//!
//! Not here: the node's body on the canvas (`super::super::view`), applying the edits.

use egui::{Color32, Pos2, Rect, Sense, Stroke, Ui, Vec2};
use marrow_engine::graph::{BlendSample, NodeId, NodeKind, ParamValue};

use super::super::details::{DetailsCx, DetailsOut, clip_picker, set};
use super::super::view::short;
use crate::command::Command;
use crate::widgets::named;

/// The BlendSpace1D's editor: the axis (samples dragged along it, the current position as a
/// draggable point that drives the preview, weights and the shared phase while it plays) and
/// the sample list.
#[allow(clippy::too_many_arguments)]
pub fn editor(
    ui: &mut Ui,
    cx: &DetailsCx,
    id: NodeId,
    samples: &[BlendSample],
    position: f32,
    looping: bool,
    out: &mut DetailsOut,
) {
    let driver = cx.graph.input(id, "position").and_then(|s| cx.graph.node(s)).and_then(|n| match &n.kind {
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
        vec![c + Vec2::new(0.0, -d), c + Vec2::new(d, 0.0), c + Vec2::new(0.0, d), c + Vec2::new(-d, 0.0)],
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
    sample_list(ui, cx, id, samples, position, looping, out);
}

/// The blend space's samples as a list: clip, position, speed, remove; Loop; Add Sample.
#[allow(clippy::too_many_arguments)]
fn sample_list(
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
