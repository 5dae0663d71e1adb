//! The Inspector's Crowd card: the authored crowd (mesh, the clips baked, frames per clip,
//! count, layout, seed, speed range) and what the session baked from it (clips, frames, table
//! bytes). Each field sends a `SetCrowd` edit (a drag is one undo step); the session rebuilds
//! the World on the new revision, which re-bakes the table, so the bake is never stale and there
//! is nothing to press.
//!
//! Not here: baking (`marrow_engine::crowd`), applying edits (`crate::app`).

use marrow_engine::crowd::layout::Layout;
use marrow_engine::scene::{AssetSource, CrowdDesc};

use crate::cx::Cx;
use crate::document::EntityOp;
use crate::widgets::named;

/// The card's body for the crowd `c` of the entity at `path`.
pub fn crowd_card(
    ui: &mut egui::Ui,
    cx: &mut Cx,
    path: &str,
    c: &CrowdDesc,
    edit: &dyn Fn(&mut Cx, EntityOp),
) {
    let set = |cx: &mut Cx, f: &dyn Fn(&mut CrowdDesc)| {
        let mut next = c.clone();
        f(&mut next);
        edit(cx, EntityOp::SetCrowd(Some(next)));
    };
    let lib = cx.session.library();
    let skeleton = lib.skeleton(&c.rig).ok();
    egui::Grid::new("crowd").num_columns(2).spacing([6.0, 4.0]).show(ui, |ui| {
        ui.label("Rig");
        ui.weak(&c.rig);
        ui.end_row();
        ui.label("Mesh");
        let mut mesh = None;
        crate::widgets::picker(ui, "crowd mesh", &c.mesh, 220.0).show_ui(ui, |ui| {
            for r in lib.mesh_refs() {
                let fits = lib
                    .mesh(r)
                    .ok()
                    .and_then(|m| m.skeleton.clone())
                    .is_some_and(|m| skeleton.as_ref().is_some_and(|s| s.same_rig(&m)));
                if fits && ui.selectable_label(r == c.mesh, r).clicked() {
                    mesh = Some(r.to_owned());
                }
            }
        });
        if let Some(m) = mesh {
            set(cx, &|d| d.mesh = m.clone());
        }
        ui.end_row();
        let mut count = c.count;
        ui.label("Count");
        let r = ui.add(
            crate::widgets::authored_drag(&mut count)
                .speed(10.0)
                .range(0..=marrow_engine::crowd::MAX_INSTANCES),
        );
        if named(r, egui::WidgetType::DragValue, "Crowd count").changed() {
            set(cx, &|d| d.count = count);
        }
        ui.end_row();
        let mut frames = c.frames;
        ui.label("Frames per clip");
        let r = ui.add(
            crate::widgets::authored_drag(&mut frames).speed(1.0).range(2..=marrow_engine::crowd::MAX_FRAMES),
        );
        if named(r, egui::WidgetType::DragValue, "Crowd frames").changed() {
            set(cx, &|d| d.frames = frames);
        }
        ui.end_row();
        ui.label("Layout");
        ui.horizontal(|ui| {
            let (grid, mut size) = match c.layout {
                Layout::Grid { spacing } => (true, spacing),
                Layout::Scattered { extent } => (false, extent),
            };
            let mut g = grid;
            if ui.radio_value(&mut g, true, "Grid").changed()
                | ui.radio_value(&mut g, false, "Scattered").changed()
                && g != grid
            {
                let side = (c.count as f32).sqrt().max(1.0);
                set(cx, &|d| {
                    d.layout = if g {
                        Layout::Grid { spacing: size / side }
                    } else {
                        Layout::Scattered { extent: size * side }
                    }
                });
            }
            let r = ui.add(crate::widgets::authored_drag(&mut size).speed(0.05).range(0.01..=1000.0));
            if named(r, egui::WidgetType::DragValue, "Crowd spacing").changed() {
                set(cx, &|d| {
                    d.layout =
                        if grid { Layout::Grid { spacing: size } } else { Layout::Scattered { extent: size } }
                });
            }
        });
        ui.end_row();
        let mut seed = c.seed;
        ui.label("Seed");
        let r = ui.add(egui::DragValue::new(&mut seed).speed(1.0));
        if named(r, egui::WidgetType::DragValue, "Crowd seed").changed() {
            set(cx, &|d| d.seed = seed);
        }
        ui.end_row();
        ui.label("Speed");
        ui.horizontal(|ui| {
            let (mut lo, mut hi) = c.speed;
            let a = named(
                ui.add(crate::widgets::authored_drag(&mut lo).speed(0.01).range(-10.0..=hi)),
                egui::WidgetType::DragValue,
                "Crowd slowest",
            );
            let b = named(
                ui.add(crate::widgets::authored_drag(&mut hi).speed(0.01).range(lo..=10.0)),
                egui::WidgetType::DragValue,
                "Crowd fastest",
            );
            if a.changed() || b.changed() {
                set(cx, &|d| d.speed = (lo, hi));
            }
        });
        ui.end_row();
    });
    // The clips baked: every clip of the library for this rig, ticked when baked.
    ui.label(egui::RichText::new("Clips baked").small().strong());
    let mut toggled = None;
    for r in lib.clip_refs() {
        let for_rig = skeleton.as_ref().is_some_and(|s| lib.clip(r, s).is_ok_and(|k| k.skeleton == s.name));
        if !for_rig {
            continue;
        }
        let mut on = c.clips.iter().any(|x| x == r);
        if ui.checkbox(&mut on, r).changed() {
            toggled = Some((r.to_owned(), on));
        }
    }
    if let Some((r, on)) = toggled
        && (on || c.clips.len() > 1)
    {
        set(cx, &|d| {
            if on {
                d.clips.push(r.clone());
            } else {
                d.clips.retain(|x| *x != r);
            }
        });
    }
    let world = cx.session.world();
    if let Some(crowd) = cx.session.entity(path).and_then(|e| world.crowd(e)) {
        let b = &crowd.baked;
        ui.weak(format!(
            "{} instance(s) · {} clip(s) x {} frames x {} bones baked · table {:.1} KiB",
            crowd.placements.len(),
            b.clips.len(),
            b.clips.first().map_or(0, |c| c.frames),
            b.bones,
            b.bytes() as f64 / 1024.0
        ));
    }
}

/// A new crowd over the first skinned mesh of the library whose rig has a clip (`None`: none).
pub fn new_crowd(cx: &Cx) -> Option<CrowdDesc> {
    let lib = cx.session.library();
    for mesh in lib.mesh_refs() {
        let Some(msk) = lib.mesh(mesh).ok().and_then(|m| m.skeleton.clone()) else { continue };
        let Some(rig) = lib.skeleton_refs().find(|r| lib.skeleton(r).is_ok_and(|s| s.same_rig(&msk))) else {
            continue;
        };
        let Some(clip) = lib.clip_refs().find(|r| lib.clip(r, &msk).is_ok_and(|c| c.skeleton == msk.name))
        else {
            continue;
        };
        return Some(CrowdDesc {
            rig: rig.to_owned(),
            mesh: mesh.to_owned(),
            clips: vec![clip.to_owned()],
            frames: 30,
            count: 25,
            layout: Layout::Grid { spacing: 1.5 },
            seed: 1,
            speed: (0.9, 1.1),
            member: marrow_engine::math::Transform::IDENTITY,
        });
    }
    None
}
