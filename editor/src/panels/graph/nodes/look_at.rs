//! The LookAt node's bespoke editor in the node details: the bone that turns (picked from the
//! rig), its forward and up axes and the aim's offset (its own space), and the yaw and pitch
//! limits, the bones above it that share the turn (a spine, a neck: each with its share), and
//! the Target Gizmo toggle. The target (x, y, z) and the weight are float pins: their constants
//! are on the node.
//!
//! Not here: the node's body on the canvas (`super::super::view`), applying the edits.

use egui::Ui;
use marrow_engine::graph::{LookLink, MAX_LOOK_LINKS, NodeId, NodeKind};

use super::super::details::{DetailsCx, DetailsOut, bone_picker, set};
use super::vector;
use crate::widgets::named;

/// Draws the editor of the LookAt node `id` (`kind` is its kind; any other draws nothing).
pub fn editor(ui: &mut Ui, cx: &DetailsCx, id: NodeId, kind: &NodeKind, out: &mut DetailsOut) {
    let NodeKind::LookAt { bone, target_bone, forward, up, offset, yaw, pitch, chain, .. } = kind else {
        return;
    };
    let with = |f: &dyn Fn(&mut NodeKind)| {
        let mut next = kind.clone();
        f(&mut next);
        next
    };
    if let Some(b) = super::target_bone_picker(ui, cx, id, target_bone) {
        let next = with(&|k| {
            if let NodeKind::LookAt { target_bone, .. } = k {
                *target_bone = b.clone();
            }
        });
        set(out, id, next, "target_bone");
    }
    super::target_gizmo_toggle(ui, cx, id, out);
    ui.horizontal(|ui| {
        ui.label("Bone");
        if let Some(b) = bone_picker(ui, ("look at bone", id.0), cx.skeleton, bone, "Look bone") {
            let next = with(&|k| {
                if let NodeKind::LookAt { bone, .. } = k {
                    *bone = b.clone();
                }
            });
            set(out, id, next, "bone");
        }
    });
    for (label, field, v) in
        [("Forward", "forward", *forward), ("Up", "up", *up), ("Offset", "offset", *offset)]
    {
        if let Some(n) = vector(ui, label, v)
            && (field == "offset" || n.length_squared() > 0.0)
        {
            let next = with(&|k| {
                if let NodeKind::LookAt { forward, up, offset, .. } = k {
                    *match field {
                        "forward" => forward,
                        "up" => up,
                        _ => offset,
                    } = n;
                }
            });
            set(out, id, next, field);
        }
    }
    ui.weak("Forward is the axis that looks, Up the bone's up, Offset where the look starts (the eyes), in the bone's own space.");
    for (label, field, v) in [("Yaw limit", "yaw", *yaw), ("Pitch limit", "pitch", *pitch)] {
        ui.horizontal(|ui| {
            ui.label(label);
            let mut d = v.to_degrees();
            let r = ui.add(crate::widgets::authored_slider(&mut d, 0.0..=180.0, 1).suffix("°"));
            if named(r, egui::WidgetType::Slider, label).changed() && d.is_finite() {
                let next = with(&|k| {
                    if let NodeKind::LookAt { yaw, pitch, .. } = k {
                        *if field == "yaw" { yaw } else { pitch } = d.to_radians();
                    }
                });
                set(out, id, next, field);
            }
        });
    }
    chain_editor(ui, cx, id, kind, chain, out);
}

/// The bones above the looking one that share its turn: each a bone picker and its share, a
/// remove button, and Add Bone (up to [`MAX_LOOK_LINKS`]).
fn chain_editor(
    ui: &mut Ui,
    cx: &DetailsCx,
    id: NodeId,
    kind: &NodeKind,
    chain: &[LookLink],
    out: &mut DetailsOut,
) {
    let with_chain = |next_chain: Vec<LookLink>| {
        let mut next = kind.clone();
        if let NodeKind::LookAt { chain, .. } = &mut next {
            *chain = next_chain;
        }
        next
    };
    ui.separator();
    ui.label("Shared by (root-most first)");
    for (i, link) in chain.iter().enumerate() {
        ui.horizontal(|ui| {
            let label = format!("Chain bone {}", i + 1);
            if let Some(b) = bone_picker(ui, ("look chain", id.0, i), cx.skeleton, &link.bone, &label) {
                let mut next = chain.to_vec();
                next[i].bone = b;
                set(out, id, with_chain(next), "chain");
            }
            let mut share = link.share;
            let r = ui.add(crate::widgets::authored_slider(&mut share, 0.0..=1.0, 2));
            if named(r, egui::WidgetType::Slider, &format!("Chain share {}", i + 1)).changed()
                && share.is_finite()
            {
                let mut next = chain.to_vec();
                next[i].share = share;
                set(out, id, with_chain(next), "chain");
            }
            if ui.small_button("✖").on_hover_text("This bone no longer shares the turn").clicked() {
                let mut next = chain.to_vec();
                next.remove(i);
                set(out, id, with_chain(next), "chain");
            }
        });
    }
    if chain.len() < MAX_LOOK_LINKS
        && ui
            .button("Add Bone")
            .on_hover_text("A bone above (a spine, a neck) takes a share of the turn")
            .clicked()
    {
        // A new link starts on the looking bone's parent above the chain's first bone.
        let first = chain.first().map_or_else(|| look_bone(kind), |l| l.bone.clone());
        let parent = cx
            .skeleton
            .and_then(|sk| sk.index_of(&first).and_then(|b| sk.parent(b)).map(|p| sk.bone_names[p].clone()));
        let mut next = chain.to_vec();
        next.insert(0, LookLink { bone: parent.unwrap_or_default(), share: 0.3 });
        set(out, id, with_chain(next), "chain");
    }
    ui.weak("Each bone takes its share of the turn still left, before the looking bone takes the rest.");
}

/// The looking bone of a LookAt kind.
fn look_bone(kind: &NodeKind) -> String {
    match kind {
        NodeKind::LookAt { bone, .. } => bone.clone(),
        _ => String::new(),
    }
}
