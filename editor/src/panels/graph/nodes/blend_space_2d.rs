//! The BlendSpace2D's bespoke editor in the node details: the plane with its samples (dragged to
//! move, one undo step per drag; removed from their context menu; added where the plane is
//! clicked, with the clip picked from a list), the engine's Delaunay triangulation drawn between
//! them (or why there is none), the current point as a draggable marker (session commands for the
//! axes a parameter drives, so the preview follows live without editing the document; the
//! authored constants otherwise), the weights and the shared phase while it plays, and the
//! sample list.
//!
//! Not here: the node's body on the canvas (`super::super::view`), applying the edits, the
//! triangulation itself (`marrow_engine::graph::triangulate`).

use egui::{Color32, Pos2, Rect, Sense, Stroke, Ui, Vec2};
use marrow_engine::graph::{BlendSample2D, NodeId, NodeKind, ParamValue, triangulate};

use super::super::details::{DetailsCx, DetailsOut, clip_picker, set};
use super::super::view::short;
use crate::command::Command;
use crate::widgets::named;

/// The node's settings, as the editor rebuilds them.
#[derive(Clone)]
struct Space<'a> {
    id: NodeId,
    samples: &'a [BlendSample2D],
    x: f32,
    y: f32,
    looping: bool,
}

impl Space<'_> {
    /// Sends the node with `samples` in place of its own.
    fn set_samples(&self, out: &mut DetailsOut, samples: Vec<BlendSample2D>, field: &str) {
        let kind = NodeKind::BlendSpace2D { samples, x: self.x, y: self.y, looping: self.looping };
        set(out, self.id, kind, field);
    }
}

/// Maps plane values to the plane's rectangle on screen (y up) and back.
struct Frame {
    rect: Rect,
    lo: (f32, f32),
    hi: (f32, f32),
}

impl Frame {
    const MARGIN: f32 = 14.0;

    fn to_screen(&self, v: (f32, f32)) -> Pos2 {
        let r = self.rect.shrink(Self::MARGIN);
        Pos2::new(
            r.left() + (v.0 - self.lo.0) / (self.hi.0 - self.lo.0) * r.width(),
            r.bottom() - (v.1 - self.lo.1) / (self.hi.1 - self.lo.1) * r.height(),
        )
    }

    /// The plane value under `p`, rounded to hundredths.
    fn to_value(&self, p: Pos2) -> (f32, f32) {
        let r = self.rect.shrink(Self::MARGIN);
        let x = self.lo.0 + (p.x - r.left()) / r.width() * (self.hi.0 - self.lo.0);
        let y = self.lo.1 + (r.bottom() - p.y) / r.height() * (self.hi.1 - self.lo.1);
        ((x * 100.0).round() / 100.0, (y * 100.0).round() / 100.0)
    }
}

/// The parameter feeding float pin `pin` of node `id`, if one does.
fn driver(cx: &DetailsCx, id: NodeId, pin: &str) -> Option<String> {
    cx.graph.input(id, pin).and_then(|s| cx.graph.node(s)).and_then(|n| match &n.kind {
        NodeKind::Parameter { name } => Some(name.clone()),
        _ => None,
    })
}

/// The BlendSpace2D's editor (see the module docs).
#[allow(clippy::too_many_arguments)]
pub fn editor(
    ui: &mut Ui,
    cx: &DetailsCx,
    id: NodeId,
    samples: &[BlendSample2D],
    x: f32,
    y: f32,
    looping: bool,
    out: &mut DetailsOut,
) {
    let space = Space { id, samples, x, y, looping };
    let drivers = [driver(cx, id, "x"), driver(cx, id, "y")];
    let live = |d: &Option<String>| d.as_ref().and_then(|n| cx.live?.parameter(n)).map(|v| v.as_f32());
    let now = (live(&drivers[0]).unwrap_or(x), live(&drivers[1]).unwrap_or(y));
    let frame = {
        let (mut lo, mut hi) = (now, now);
        for s in samples {
            lo = (lo.0.min(s.position.0), lo.1.min(s.position.1));
            hi = (hi.0.max(s.position.0), hi.1.max(s.position.1));
        }
        let pad = |l: f32, h: f32| ((h - l) * 0.1).max(0.5);
        let (px, py) = (pad(lo.0, hi.0), pad(lo.1, hi.1));
        let width = ui.available_width().max(200.0);
        let (rect, _) = ui.allocate_exact_size(Vec2::new(width, 220.0), Sense::hover());
        Frame { rect, lo: (lo.0 - px, lo.1 - py), hi: (hi.0 + px, hi.1 + py) }
    };
    plane(ui, cx, &space, &frame, out);
    point(ui, &space, &frame, now, &drivers, out);
    if let Some(inst) = cx.live
        && let Some(ph) = inst.space_phase(id)
    {
        ui.horizontal(|ui| {
            ui.label("Phase");
            ui.add(egui::ProgressBar::new(ph).desired_width(120.0).text(format!("{ph:.2}")));
        });
        ui.weak("Every clip samples at the same normalized phase (feet land together).");
    }
    add_row(ui, cx, &space, out);
    sample_list(ui, cx, &space, out);
}

/// The plane: its background (a click picks where a new sample goes), the triangulation, the
/// samples (dragged, removed from their context menu) with their live weights.
fn plane(ui: &mut Ui, cx: &DetailsCx, space: &Space, frame: &Frame, out: &mut DetailsOut) {
    let id = space.id;
    let background = ui.interact(frame.rect, ui.id().with(("bs2d plane", id.0)), Sense::click());
    let background = named(background, egui::WidgetType::Other, "blend plane");
    if background.clicked()
        && let Some(p) = background.interact_pointer_pos()
    {
        ui.data_mut(|d| d.insert_temp(add_key(ui, id), Some(frame.to_value(p))));
    }
    let painter = ui.painter_at(frame.rect);
    painter.rect_filled(frame.rect, 4.0, ui.visuals().extreme_bg_color);
    let points: Vec<(f32, f32)> = space.samples.iter().map(|s| s.position).collect();
    match triangulate(&points) {
        Ok(triangles) => {
            for t in triangles {
                let c = t.map(|i| frame.to_screen(points[i]));
                let stroke = Stroke::new(1.0, Color32::from_gray(120));
                for k in 0..3 {
                    painter.line_segment([c[k], c[(k + 1) % 3]], stroke);
                }
            }
        }
        Err(e) => {
            painter.text(
                frame.rect.left_top() + Vec2::new(6.0, 4.0),
                egui::Align2::LEFT_TOP,
                format!("no triangulation: {e}"),
                egui::FontId::proportional(11.0),
                Color32::from_rgb(0xff, 0x80, 0x80),
            );
        }
    }
    let mut weights = vec![0.0; space.samples.len()];
    let live_weights = cx.live.is_some_and(|inst| inst.space_weights(id, &mut weights));
    for (i, s) in space.samples.iter().enumerate() {
        let c = frame.to_screen(s.position);
        let r = ui.interact(
            Rect::from_center_size(c, Vec2::splat(16.0)),
            ui.id().with(("bs2d sample", id.0, i)),
            Sense::click_and_drag(),
        );
        let r = named(r, egui::WidgetType::Other, &format!("sample {i} {}", short(&s.clip)));
        let w = weights[i];
        let fill = if w > 0.0 {
            Color32::from_rgb(0x4f, 0xa8, 0xe8).gamma_multiply(0.4 + 0.6 * w)
        } else {
            Color32::from_rgb(0x4f, 0x6a, 0x88)
        };
        let hot = r.hovered() || r.dragged();
        painter.circle(c, if hot { 7.0 } else { 6.0 }, fill, Stroke::new(1.0, Color32::WHITE));
        let label = if live_weights { format!("{} {w:.2}", short(&s.clip)) } else { short(&s.clip) };
        let font = egui::FontId::proportional(11.0);
        painter.text(
            c + Vec2::new(0.0, -14.0),
            egui::Align2::CENTER_CENTER,
            label,
            font,
            ui.visuals().text_color(),
        );
        if r.dragged()
            && let Some(p) = r.interact_pointer_pos()
        {
            let mut next = space.samples.to_vec();
            next[i].position = frame.to_value(p);
            if next[i].position != s.position {
                space.set_samples(out, next, "samples");
            }
        }
        r.context_menu(|ui| {
            if ui.button("Remove sample").clicked() {
                let mut next = space.samples.to_vec();
                next.remove(i);
                space.set_samples(out, next, "samples (remove)");
                ui.close();
            }
        });
    }
}

/// The current point: a diamond dragged to move it. Each axis a parameter drives changes that
/// parameter's live value (a session command, no edit); the others their authored constants.
fn point(
    ui: &mut Ui,
    space: &Space,
    frame: &Frame,
    now: (f32, f32),
    drivers: &[Option<String>; 2],
    out: &mut DetailsOut,
) {
    let c = frame.to_screen(now);
    let r = ui.interact(
        Rect::from_center_size(c, Vec2::splat(18.0)),
        ui.id().with(("bs2d point", space.id.0)),
        Sense::drag(),
    );
    let r = named(r, egui::WidgetType::Other, "blend point");
    let d = 7.0;
    let painter = ui.painter_at(frame.rect);
    painter.add(egui::Shape::convex_polygon(
        vec![c + Vec2::new(0.0, -d), c + Vec2::new(d, 0.0), c + Vec2::new(0.0, d), c + Vec2::new(-d, 0.0)],
        Color32::from_rgb(0xff, 0xb0, 0x40),
        Stroke::new(1.0, Color32::BLACK),
    ));
    let from = |k: usize| drivers[k].as_ref().map_or(String::new(), |d| format!(" ({d})"));
    painter.text(
        frame.rect.left_bottom() + Vec2::new(6.0, -4.0),
        egui::Align2::LEFT_BOTTOM,
        format!("x {:.2}{}  y {:.2}{}", now.0, from(0), now.1, from(1)),
        egui::FontId::proportional(11.0),
        Color32::from_rgb(0xff, 0xb0, 0x40),
    );
    if !r.dragged() {
        return;
    }
    let Some(p) = r.interact_pointer_pos() else { return };
    let v = frame.to_value(p);
    let (mut x, mut y) = (space.x, space.y);
    for (k, value) in [v.0, v.1].into_iter().enumerate() {
        match &drivers[k] {
            Some(name) => out
                .commands
                .push(Command::SetGraphParameter { name: name.clone(), value: ParamValue::Float(value) }),
            None if k == 0 => x = value,
            None => y = value,
        }
    }
    if (x, y) != (space.x, space.y) {
        let kind = NodeKind::BlendSpace2D { samples: space.samples.to_vec(), x, y, looping: space.looping };
        set(out, space.id, kind, "point");
    }
}

/// Where the next sample goes (set by a click on the plane), in egui's temporary memory.
fn add_key(ui: &Ui, id: NodeId) -> egui::Id {
    ui.id().with(("bs2d add", id.0))
}

/// After a click on the plane: the clips to put there, one button each, and Cancel.
fn add_row(ui: &mut Ui, cx: &DetailsCx, space: &Space, out: &mut DetailsOut) {
    let key = add_key(ui, space.id);
    let Some(at) = ui.data(|d| d.get_temp::<Option<(f32, f32)>>(key)).flatten() else {
        ui.weak("Click the plane to add a sample there.");
        return;
    };
    let mut done = false;
    ui.label(format!("New sample at ({:.2}, {:.2}):", at.0, at.1));
    ui.horizontal_wrapped(|ui| {
        for clip in cx.clips {
            let r = ui.button(short(clip)).on_hover_text(clip.as_str());
            if named(r, egui::WidgetType::Button, &format!("add {} here", short(clip))).clicked() {
                let mut next = space.samples.to_vec();
                next.push(BlendSample2D { clip: clip.clone(), position: at, speed: 1.0 });
                space.set_samples(out, next, "samples (add)");
                done = true;
            }
        }
        if ui.button("Cancel").clicked() {
            done = true;
        }
    });
    if done {
        ui.data_mut(|d| d.remove::<Option<(f32, f32)>>(key));
    }
}

/// The samples as a list: clip, x, y, speed, remove; Loop.
fn sample_list(ui: &mut Ui, cx: &DetailsCx, space: &Space, out: &mut DetailsOut) {
    let id = space.id;
    ui.horizontal(|ui| {
        let mut l = space.looping;
        if ui.checkbox(&mut l, "Loop").changed() {
            let kind = NodeKind::BlendSpace2D {
                samples: space.samples.to_vec(),
                x: space.x,
                y: space.y,
                looping: l,
            };
            set(out, id, kind, "looping");
        }
    });
    let mut next = space.samples.to_vec();
    let mut changed = false;
    let mut remove = None;
    egui::Grid::new(("bs2d samples", id.0)).num_columns(5).show(ui, |ui| {
        for (i, s) in next.iter_mut().enumerate() {
            if let Some(c) = clip_picker(ui, ("bs2d clip", id.0, i), cx.clips, &s.clip) {
                s.clip = c;
                changed = true;
            }
            changed |= ui.add(egui::DragValue::new(&mut s.position.0).speed(0.01).prefix("x ")).changed();
            changed |= ui.add(egui::DragValue::new(&mut s.position.1).speed(0.01).prefix("y ")).changed();
            changed |= ui.add(egui::DragValue::new(&mut s.speed).speed(0.01).prefix("speed ")).changed();
            if ui.small_button("✖").on_hover_text("Remove this sample").clicked() {
                remove = Some(i);
            }
            ui.end_row();
        }
    });
    if let Some(i) = remove {
        next.remove(i);
        space.set_samples(out, next, "samples (remove)");
    } else if changed
        && next.iter().all(|s| s.position.0.is_finite() && s.position.1.is_finite() && s.speed.is_finite())
    {
        space.set_samples(out, next, "samples");
    }
}
