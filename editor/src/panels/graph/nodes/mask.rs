//! The Mask's bespoke editor in the node details: the rig's bone tree with a weight per bone
//! (the weight each subtree gives, filter, apply to children, Upper/Lower Body presets), and
//! the per-bone weights the subtrees give.
//!
//! Not here: the node's body on the canvas (`super::super::view`), applying the edits.

use egui::Ui;
use marrow_engine::graph::{MaskSubtree, NodeId, NodeKind};
use marrow_engine::skeleton::{NO_PARENT, Skeleton};

use super::super::details::{DetailsCx, DetailsOut, set};
use crate::widgets::named;

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

/// The Mask's editor: the rig's bone tree with a weight per bone (filter, apply to children,
/// Upper/Lower Body presets); `bone_filter` is the tree's filter text.
#[allow(clippy::too_many_arguments)]
pub fn editor(
    bone_filter: &mut String,
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
    ui.add(egui::TextEdit::singleline(bone_filter).hint_text("Filter bones…"));
    let weights = mask_weights(sk, subtrees);
    let filter = bone_filter.to_lowercase();
    egui::ScrollArea::vertical().max_height(320.0).id_salt(("mask tree", id.0)).show(ui, |ui| {
        // The rig's tree: each bone followed by its subtree, indented by depth.
        for (b, depth) in marrow_engine::skeleton::tree_order(&sk.parents) {
            let name = &sk.bone_names[b];
            if !filter.is_empty() && !name.to_lowercase().contains(&filter) {
                continue;
            }
            let own = subtrees.iter().position(|s| s.bone == *name);
            ui.horizontal(|ui| {
                ui.add_space(12.0 * depth.min(24) as f32);
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
                        let r = ui.add(crate::widgets::authored_drag(&mut w).speed(0.01).range(0.0..=1.0));
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
