//! The Timeline's header: the clip shown and its rig, New Clip, Make Editable, the clip's
//! settings (name, loop, frame rate, length, the interpolation new channels get), Auto Key, Key
//! (K), the dope sheet / curve view switch, All Bones, onion skins and marker audio.
//!
//! Not here: the lanes and rows below it (`lanes`, `keys`, `dope`, `curves`).

use std::sync::Arc;

use egui::{Color32, RichText};
use marrow_engine::clip::Channel;
use marrow_engine::project::file::ClipAsset;
use marrow_engine::scene::AssetSource;
use marrow_engine::skeleton::Skeleton;
use marrow_engine::track::Interpolation;

use super::{Target, TimelinePanel};
use crate::command::Command;
use crate::cx::Cx;
use crate::document::clip_ops::{ClipOp, InsertKind, KeyRef, KeyValue, KeyWrite};
use crate::document::{EntityOp, Op, Slot, Value, tree};
use crate::posing::snap_time;
use crate::ui_state::Selection;

impl TimelinePanel {
    pub(super) fn toolbar(
        &mut self,
        ui: &mut egui::Ui,
        cx: &mut Cx,
        target: &Target,
        clip: Option<&ClipAsset>,
        skeleton: Option<&Skeleton>,
        live: bool,
    ) {
        ui.horizontal_wrapped(|ui| {
            let title = target.clip_ref.as_deref().unwrap_or("(no clip)");
            ui.label(RichText::new(title).strong());
            if let Some(rig) = &target.rig {
                ui.weak(format!("on {rig}"));
            }
            if target.rig.is_some()
                && let Some(sk) = skeleton
                && ui.button("New Clip").on_hover_text("An empty clip for this rig").clicked()
            {
                self.new_clip(cx, target, sk);
            }
            if target.path.is_none()
                && let (Some(r), Some(rig)) = (&target.clip_ref, &target.rig)
                && !cx.session.library().clips(r).is_empty()
                && ui
                    .button("Make Editable")
                    .on_hover_text("Copy the imported clip into a clip file")
                    .clicked()
            {
                self.make_editable(cx, rig, r, skeleton);
            }
            let Some(c) = clip else { return };
            ui.separator();
            let path = target.path.clone().unwrap_or_default();
            let set = |cx: &mut Cx, op: ClipOp| cx.edit(Op::Clip { path: path.clone(), op });
            let l = ui.label("Name");
            let mut name = c.clip.name.clone();
            let r = ui.add(egui::TextEdit::singleline(&mut name).desired_width(90.0)).labelled_by(l.id);
            if r.lost_focus() && name != c.clip.name {
                set(
                    cx,
                    ClipOp::SetProperties { name: Some(name), looping: None, length: None, frame_rate: None },
                );
            }
            let mut looping = c.clip.looping;
            if ui.checkbox(&mut looping, "Loop").changed() {
                set(
                    cx,
                    ClipOp::SetProperties {
                        name: None,
                        looping: Some(looping),
                        length: None,
                        frame_rate: None,
                    },
                );
            }
            let l = ui.label("FPS");
            let mut fps = c.clip.frame_rate;
            let r = ui
                .add(crate::widgets::authored_drag(&mut fps).range(1.0..=240.0).speed(0.2))
                .labelled_by(l.id);
            if r.changed() && fps != c.clip.frame_rate {
                set(
                    cx,
                    ClipOp::SetProperties { name: None, looping: None, length: None, frame_rate: Some(fps) },
                );
            }
            let l = ui.label("Length");
            let mut length = c.clip.length;
            // 0 (or anything before the last key) holds nothing: say so instead of "0.00 s".
            let last_key = c.clip.channels().iter().filter_map(|b| b.last_key_time()).fold(0.0f32, f32::max);
            let r = ui
                .add(
                    crate::widgets::authored_drag(&mut length)
                        .range(0.0..=3600.0)
                        .speed(0.01)
                        .custom_formatter(move |v, _| {
                            if v as f32 <= last_key { "last key".to_owned() } else { format!("{v:.2} s") }
                        })
                        .custom_parser(|t| t.trim().trim_end_matches('s').trim().parse().ok()),
                )
                .labelled_by(l.id)
                .on_hover_text(
                    "Holds the clip open past its last key (the duration is the later of the two)",
                );
            if r.changed() && length != c.clip.length {
                set(
                    cx,
                    ClipOp::SetProperties {
                        name: None,
                        looping: None,
                        length: Some(length),
                        frame_rate: None,
                    },
                );
            }
            default_interpolation(ui, cx, c, &path);
            ui.weak(format!("duration {:.3} s · {} keys", c.clip.duration(), self.index.key_count));
            if let Some(sk) = skeleton {
                self.sizes.ui(ui, &c.clip, sk, super::rig_scale(cx, sk));
            }
            ui.separator();
            // Each group wraps to the next line whole (a toggle pair never split).
            crate::widgets::wrap_group(ui, "keying", |ui| {
                let rec = egui::Button::new(RichText::new("⏺ Auto Key").color(if cx.ui.auto_key {
                    Color32::WHITE
                } else {
                    Color32::from_rgb(230, 80, 70)
                }))
                .fill(if cx.ui.auto_key {
                    Color32::from_rgb(190, 40, 35)
                } else {
                    ui.visuals().widgets.inactive.weak_bg_fill
                })
                .selected(cx.ui.auto_key);
                if ui.add(rec).on_hover_text("Posing writes keys at the playhead").clicked() {
                    cx.ui.auto_key = !cx.ui.auto_key;
                }
                if ui
                    .add_enabled(live, egui::Button::new("Key"))
                    .on_hover_text("K: key the selected bone from the pose on screen (Shift+K: all bones)")
                    .on_disabled_hover_text("The rig does not play this clip: Show This Clip first")
                    .clicked()
                {
                    self.key_pose(cx, c, target, false);
                }
            });
            ui.separator();
            crate::widgets::wrap_group(ui, "view", |ui| {
                ui.selectable_value(&mut self.curves, false, "Dope Sheet");
                ui.selectable_value(&mut self.curves, true, "Curves");
                ui.checkbox(&mut self.all_bones, "All Bones");
            });
            ui.separator();
            crate::widgets::wrap_group(ui, "onion", |ui| {
                ui.checkbox(&mut cx.ui.onion.on, "Onion Skins");
                if cx.ui.onion.on {
                    ui.add(egui::DragValue::new(&mut cx.ui.onion.count).range(1..=8).prefix("± "));
                    ui.add(
                        egui::DragValue::new(&mut cx.ui.onion.step)
                            .range(1..=30)
                            .prefix("every ")
                            .suffix(" f"),
                    );
                }
                ui.checkbox(&mut self.audio, "Audio");
            });
        });
    }

    pub(super) fn new_clip(&mut self, cx: &mut Cx, target: &Target, sk: &Skeleton) {
        let Some((scene, desc)) = cx.scene() else { return };
        let Some(rig) = &target.rig else { return };
        let Some(mut a) = tree::find(desc, rig).and_then(|e| e.animator.clone()) else { return };
        let project = cx.doc.project();
        let stem = format!("{}_new", sk.name.replace(['/', '\\', ' '], "_"));
        let taken = |p: &str| project.manifest.clips.iter().any(|c| c == p);
        let path = std::iter::once(format!("clips/{stem}.clip.ron"))
            .chain((2..).map(|n| format!("clips/{stem}_{n}.clip.ron")))
            .find(|p| !taken(p))
            .unwrap_or_default();
        let mut clip = marrow_engine::clip::Clip::new(
            path.trim_start_matches("clips/").trim_end_matches(".clip.ron"),
            sk,
        );
        clip.looping = true;
        clip.length = 1.0;
        let asset = ClipAsset { clip: Arc::new(clip), bones: sk.bone_names.clone() };
        a.clip = Some(path.clone());
        a.graph = None;
        cx.edit(Op::Batch {
            label: "New Clip".into(),
            ops: vec![
                Op::AddFiles {
                    label: "New Clip".into(),
                    binary: Vec::new(),
                    files: vec![(Slot::Clip(path), Value::Clip(Arc::new(asset)))],
                    entity: None,
                },
                Op::Entity {
                    scene: scene.to_owned(),
                    entity: rig.clone(),
                    op: EntityOp::SetAnimator(Some(a)),
                },
            ],
        });
    }

    pub(super) fn make_editable(&mut self, cx: &mut Cx, rig: &str, reference: &str, sk: Option<&Skeleton>) {
        let Some(sk) = sk else { return };
        let Ok(clip) = cx.session.library().clip(reference, sk) else { return };
        let Some((scene, desc)) = cx.scene() else { return };
        let Some(mut a) = tree::find(desc, rig).and_then(|e| e.animator.clone()) else { return };
        let stem: String = reference
            .rsplit(['#', '/'])
            .next()
            .unwrap_or("clip")
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
            .collect();
        let project = cx.doc.project();
        let path = std::iter::once(format!("clips/{stem}.clip.ron"))
            .chain((2..).map(|n| format!("clips/{stem}_{n}.clip.ron")))
            .find(|p| !project.manifest.clips.contains(p))
            .unwrap_or_default();
        let mut c = (*clip).clone();
        if let Some(l) = a.looping {
            c.looping = l;
        }
        let asset = ClipAsset { clip: Arc::new(c), bones: sk.bone_names.clone() };
        a.clip = Some(path.clone());
        a.looping = None;
        cx.edit(Op::Batch {
            label: "Make Clip Editable".into(),
            ops: vec![
                Op::AddFiles {
                    label: "Make Clip Editable".into(),
                    binary: Vec::new(),
                    files: vec![(Slot::Clip(path), Value::Clip(Arc::new(asset)))],
                    entity: None,
                },
                Op::Entity {
                    scene: scene.to_owned(),
                    entity: rig.to_owned(),
                    op: EntityOp::SetAnimator(Some(a)),
                },
            ],
        });
    }

    /// K: keys the selected bone (or, `all`, every bone) from the pose on screen at the
    /// playhead, all three channels.
    pub fn key_pose(&mut self, cx: &mut Cx, clip: &ClipAsset, target: &Target, all: bool) {
        if !super::live::is_live(cx, target) {
            return;
        }
        let Some(rig) = target.rig.as_deref().and_then(|r| cx.session.entity(r)) else { return };
        let Some(pose) = cx.session.world().rig_pose(rig) else { return };
        let Some(a) = cx.session.world().animator(rig) else { return };
        let sk = a.skeleton();
        let bones: Vec<usize> = if all {
            (0..sk.bone_count()).collect()
        } else {
            match &cx.ui.selection {
                Selection::Bone { bone, .. } => sk.index_of(bone).into_iter().collect(),
                _ => Vec::new(),
            }
        };
        let time = snap_time(a.time(), clip.clip.frame_rate);
        let keys: Vec<KeyWrite> = bones
            .iter()
            .filter(|b| clip.bones.get(**b).is_some_and(|n| *n == sk.bone_names[**b]))
            .flat_map(|b| {
                let t = pose.local[*b];
                let bone = sk.bone_names[*b].clone();
                [
                    KeyWrite {
                        key: KeyRef::new(bone.clone(), Channel::Translation, time),
                        value: KeyValue::Vec3(t.translation),
                    },
                    KeyWrite {
                        key: KeyRef::new(bone.clone(), Channel::Rotation, time),
                        value: KeyValue::Quat(t.rotation),
                    },
                    KeyWrite { key: KeyRef::new(bone, Channel::Scale, time), value: KeyValue::Vec3(t.scale) },
                ]
            })
            .collect();
        if let (false, Some(path)) = (keys.is_empty(), &target.path) {
            cx.edit(Op::Clip {
                path: path.clone(),
                op: ClipOp::InsertKeys { keys, kind: InsertKind::KeyPose },
            });
            if let Some(r) = &target.rig {
                cx.send(Command::ClearPose { rig: r.clone() });
            }
        }
    }
}

/// An interpolation's name in menus.
pub fn interpolation_name(i: Interpolation) -> &'static str {
    match i {
        Interpolation::Step => "Step",
        Interpolation::Linear => "Linear",
        Interpolation::CubicSpline => "Cubic",
    }
}

/// The clip header's "New channels" picker: the interpolation a key gives a channel it starts
/// in this clip (the project's unless set). One undo step per change.
pub(super) fn default_interpolation(ui: &mut egui::Ui, cx: &mut Cx, c: &ClipAsset, path: &str) {
    let project = cx.doc.project().manifest.default_interpolation;
    let current = c.clip.default_interpolation;
    let project_text = format!("Project ({})", interpolation_name(project));
    let text = current.map_or(project_text.clone(), |i| interpolation_name(i).to_owned());
    // The combo box lays itself out in a row of its own width, which a wrapping header cannot
    // move: start a new row when the label and the box would not fit in what is shown.
    if ui.clip_rect().right() - ui.cursor().left() < 230.0 {
        ui.end_row();
    }
    let l = ui.label("New channels");
    let mut chosen = None;
    egui::ComboBox::from_id_salt("clip default interpolation")
        .selected_text(text)
        .show_ui(ui, |ui| {
            let options = [
                (project_text, None),
                ("Step".to_owned(), Some(Interpolation::Step)),
                ("Linear".to_owned(), Some(Interpolation::Linear)),
                ("Cubic".to_owned(), Some(Interpolation::CubicSpline)),
            ];
            for (label, v) in options {
                if ui.selectable_label(current == v, label).clicked() {
                    chosen = Some(v);
                }
            }
        })
        .response
        .labelled_by(l.id)
        .on_hover_text("The interpolation a key gives a channel it starts in this clip");
    if let Some(v) = chosen.filter(|v| *v != current) {
        cx.edit(Op::Clip { path: path.to_owned(), op: ClipOp::SetDefaultInterpolation(v) });
    }
}
