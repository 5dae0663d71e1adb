//! The Inspector's Particle Cloud card: the authored settings of a cloud scattered over a skinned
//! mesh (mesh, count, seed, falloff band, disc radius, colour, springs, bone groups with their
//! masses) and what the playing cloud shows (particles bound to two bones). Each field sends a
//! `SetParticles` edit; a drag is one undo step. The session rebuilds (and re-binds) the cloud
//! when the document changes.
//!
//! Not here: binding or posing (`marrow_engine::particles`), applying edits (`crate::app`).

use egui::RichText;
use marrow_engine::particles::{CloudSettings, SpringSettings};
use marrow_engine::scene::{AssetSource, EntityDesc, ParticleCloudDesc};

use crate::cx::Cx;
use crate::document::EntityOp;
use crate::widgets::named;

/// The card's body for `e`'s cloud `p` (entity at `path`).
pub fn cloud_card(
    ui: &mut egui::Ui,
    cx: &mut Cx,
    path: &str,
    p: &ParticleCloudDesc,
    edit: &dyn Fn(&mut Cx, EntityOp),
) {
    let set = |cx: &mut Cx, f: &dyn Fn(&mut ParticleCloudDesc)| {
        let mut next = p.clone();
        f(&mut next);
        edit(cx, EntityOp::SetParticles(Some(next)));
    };
    let lib = cx.session.library();
    let skinned: Vec<String> = lib
        .mesh_refs()
        .filter(|r| lib.mesh(r).is_ok_and(|m| m.skeleton.is_some()))
        .map(str::to_owned)
        .collect();
    let s = &p.settings;
    egui::Grid::new("particle cloud").num_columns(2).spacing([6.0, 4.0]).show(ui, |ui| {
        ui.label("Mesh");
        let mut mesh = None;
        crate::widgets::picker(ui, "cloud mesh", &p.mesh, 220.0).show_ui(ui, |ui| {
            for r in &skinned {
                if ui.selectable_label(*r == p.mesh, r).clicked() {
                    mesh = Some(r.clone());
                }
            }
        });
        if let Some(m) = mesh {
            set(cx, &|d| d.mesh = m.clone());
        }
        ui.end_row();
        let mut count = s.count;
        ui.label("Count");
        let r = ui.add(
            crate::widgets::authored_drag(&mut count)
                .speed(100.0)
                .range(0..=marrow_engine::particles::MAX_PARTICLES),
        );
        if named(r, egui::WidgetType::DragValue, "Particle count").changed() {
            set(cx, &|d| d.settings.count = count);
        }
        ui.end_row();
        let mut seed = s.seed;
        ui.label("Seed");
        let r = ui.add(egui::DragValue::new(&mut seed).speed(1.0));
        if named(r, egui::WidgetType::DragValue, "Particle seed").changed() {
            set(cx, &|d| d.settings.seed = seed);
        }
        ui.end_row();
        for (label, value, field) in [("Falloff", s.falloff, 0usize), ("Radius", s.radius, 1)] {
            let mut v = value;
            ui.label(label);
            let r =
                ui.add(crate::widgets::authored_drag(&mut v).speed(0.0005).range(0.0..=10.0).max_decimals(4));
            if named(r, egui::WidgetType::DragValue, &format!("Particle {}", label.to_lowercase())).changed()
            {
                set(cx, &|d| {
                    if field == 0 {
                        d.settings.falloff = v;
                    } else {
                        d.settings.radius = v;
                    }
                });
            }
            ui.end_row();
        }
        ui.label("Colour");
        let mut rgba = s.color;
        if ui.color_edit_button_rgba_unmultiplied(&mut rgba).changed() {
            set(cx, &|d| d.settings.color = rgba.map(|c| c.clamp(0.0, 1.0)));
        }
        ui.end_row();
        ui.label("Springs");
        let mut on = s.springs.is_some();
        if named(ui.checkbox(&mut on, "chase the pose"), egui::WidgetType::Checkbox, "Particle springs")
            .changed()
        {
            set(cx, &|d| d.settings.springs = on.then(SpringSettings::default));
        }
        ui.end_row();
        if let Some(sp) = s.springs {
            for (label, value, stiff) in [("Stiffness", sp.stiffness, true), ("Damping", sp.damping, false)] {
                let mut v = value;
                ui.label(label);
                let r = ui.add(crate::widgets::authored_drag(&mut v).speed(0.5).range(0.0..=100_000.0));
                if named(r, egui::WidgetType::DragValue, &format!("Spring {}", label.to_lowercase()))
                    .changed()
                {
                    set(cx, &|d| {
                        if let Some(x) = d.settings.springs.as_mut() {
                            if stiff { x.stiffness = v } else { x.damping = v }
                        }
                    });
                }
                ui.end_row();
            }
        }
    });
    if !s.groups.is_empty() {
        ui.label(RichText::new("Groups (bones, mass)").small().strong());
        for (g, group) in s.groups.iter().enumerate() {
            ui.horizontal(|ui| {
                let mut m = group.mass;
                let r = ui.add(
                    crate::widgets::authored_drag(&mut m).speed(0.01).range(0.01..=100.0).prefix("mass "),
                );
                if named(r, egui::WidgetType::DragValue, &format!("Group {g} mass")).changed() {
                    set(cx, &|d| d.settings.groups[g].mass = m);
                }
                ui.weak(group.bones.join(", "));
            });
        }
    }
    let world = cx.session.world();
    if let Some((_, cloud)) = cx.session.entity(path).and_then(|e| world.particle_cloud(e)) {
        let two = cloud.binding.influences.iter().filter(|i| i.weight > 0.0).count();
        ui.weak(format!("{} particles, {two} bound to two bones", cloud.len()));
    }
}

/// A new cloud for `e` over the first skinned mesh of the library (`None`: it has none).
pub fn new_cloud(cx: &Cx, _e: &EntityDesc) -> Option<ParticleCloudDesc> {
    let lib = cx.session.library();
    let mesh = lib.mesh_refs().find(|r| lib.mesh(r).is_ok_and(|m| m.skeleton.is_some()))?.to_owned();
    Some(ParticleCloudDesc { mesh, settings: CloudSettings::default() })
}
