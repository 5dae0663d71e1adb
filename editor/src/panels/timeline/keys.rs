//! The dope sheet's key editing: the editing commands on the selected keys (cut, copy, paste,
//! duplicate, delete, select all, frame) with the clipboard's text, the S scale about the
//! playhead, and the key-move arithmetic (one delta for every moved key, snapped to frames).
//!
//! Not here: drawing and picking keys (`dope`, `dope_draw`), the edits themselves
//! (`crate::document::clip_ops`).

use marrow_engine::clip::Channel;
use marrow_engine::project::file::ClipAsset;

use super::model::KeyId;
use super::{Area, Scaling, Target, TimelinePanel, model};
use crate::command::Command;
use crate::command_table::UiCommand;
use crate::cx::Cx;
use crate::document::Op;
use crate::document::clip_ops::{ClipOp, InsertKind, KeyRef, KeyValue, KeyWrite};
use crate::posing::snap_time;

impl TimelinePanel {
    pub(super) fn keys(&mut self, ui: &mut egui::Ui, cx: &mut Cx, clip: &ClipAsset, area: &Area) {
        use egui::{Key, Modifiers};
        let path = area.path.clone();
        let fps = clip.clip.frame_rate;
        // The editing commands come from the command table (shortcuts, clipboard events, the
        // Edit menu) through the app; the timeline's own keys are read here.
        let actions = std::mem::take(&mut cx.ui.edit_actions);
        let has = |a: UiCommand| actions.contains(&a);
        // Shift+K before K: `consume_key` ignores an extra Shift, so K read first took Shift+K.
        let (scale, marker, key_all, key, home) = ui.ctx().input_mut(|i| {
            (
                i.consume_key(Modifiers::NONE, Key::S),
                i.consume_key(Modifiers::NONE, Key::M),
                i.consume_key(Modifiers::SHIFT, Key::K),
                i.consume_key(Modifiers::NONE, Key::K),
                i.consume_key(Modifiers::NONE, Key::Home),
            )
        });
        if has(UiCommand::Frame) {
            self.fit = true;
        }
        if home && let Some(rig) = &area.rig {
            cx.send(Command::Seek { rig: rig.clone(), time: 0.0 });
        }
        if has(UiCommand::SelectAll) {
            self.selection = model::all_ids(clip).into_iter().collect();
            self.marker = None;
        }
        if (has(UiCommand::Copy) || has(UiCommand::Cut) || has(UiCommand::Duplicate))
            && !self.selection.is_empty()
        {
            self.copy(clip);
            ui.ctx().copy_text(self.clipboard_text());
        }
        if has(UiCommand::Delete) || has(UiCommand::Cut) {
            if let Some(m) = self.marker.take() {
                cx.edit(Op::Clip { path: path.clone(), op: ClipOp::DeleteMarkers(vec![m]) });
            } else if !self.selection.is_empty() {
                let keys: Vec<KeyRef> = self.selection.iter().filter_map(|k| k.to_ref(clip)).collect();
                let label = if keys.len() == 1 { "Cut Key" } else { "Cut Keys" };
                let op = Op::Clip { path: path.clone(), op: ClipOp::DeleteKeys(keys) };
                cx.edit(if has(UiCommand::Cut) {
                    Op::Batch { label: label.into(), ops: vec![op] }
                } else {
                    op
                });
                self.selection.clear();
            }
        }
        // Pasting, duplicating, scaling, markers and keys at the playhead need it to be this
        // clip's time ([`Area::live`]).
        let (paste, dup) = (has(UiCommand::Paste), has(UiCommand::Duplicate));
        if (paste || dup) && !self.clipboard.is_empty() && area.live {
            let at = snap_time(area.time, fps);
            let keys: Vec<KeyWrite> = self
                .clipboard
                .iter()
                .filter(|(bone, ..)| clip.bones.contains(bone))
                .map(|(bone, ch, dt, v)| KeyWrite { key: KeyRef::new(bone.clone(), *ch, at + dt), value: *v })
                .collect();
            if !keys.is_empty() {
                self.selection = keys
                    .iter()
                    .filter_map(|k| {
                        Some(KeyId::new(
                            clip.bones.iter().position(|b| *b == k.key.bone)?,
                            k.key.channel,
                            k.key.time,
                        ))
                    })
                    .collect();
                let kind = if dup { InsertKind::Duplicate } else { InsertKind::Paste };
                cx.edit(Op::Clip { path: path.clone(), op: ClipOp::InsertKeys { keys, kind } });
            }
        }
        if scale && !self.selection.is_empty() && area.live {
            let x0 = ui.input(|i| i.pointer.hover_pos()).map_or(0.0, |p| p.x);
            self.scaling = Some(Scaling {
                origin: self.selection.iter().copied().collect(),
                pivot: area.time,
                x0,
                factor: 1.0,
            });
        }
        if marker && area.live {
            let n = clip.clip.markers().len() + 1;
            cx.edit(Op::Clip {
                path: path.clone(),
                op: ClipOp::AddMarker { name: format!("marker {n}"), time: snap_time(area.time, fps) },
            });
        }
        if (key || key_all) && area.live {
            let target =
                Target { rig: area.rig.clone(), clip_ref: Some(path.clone()), path: Some(path.clone()) };
            self.key_pose(cx, clip, &target, key_all);
        }
        self.scale_step(ui, cx, clip, area);
    }

    /// The clipboard as text for the system clipboard: one line per key (bone, channel, time
    /// after the first copied key, value).
    pub(super) fn clipboard_text(&self) -> String {
        let mut out = format!("Marrow keys ({})\n", self.clipboard.len());
        for (bone, ch, dt, v) in &self.clipboard {
            let v = match v {
                KeyValue::Vec3(v) => format!("{} {} {}", v.x, v.y, v.z),
                KeyValue::Quat(q) => format!("{} {} {} {}", q.x, q.y, q.z, q.w),
            };
            out.push_str(&format!("{bone}\t{ch}\t+{dt}\t{v}\n"));
        }
        out
    }

    pub(super) fn copy(&mut self, clip: &ClipAsset) {
        let first = self.selection.iter().map(|k| k.t()).fold(f32::MAX, f32::min);
        self.clipboard = self
            .selection
            .iter()
            .filter_map(|k| {
                let bone = clip.bones.get(k.bone as usize)?.clone();
                Some((bone, k.channel, k.t() - first, key_value(clip, *k)?))
            })
            .collect();
    }

    /// S: while active, the pointer's horizontal travel scales the keys about the pivot; a
    /// click confirms, Escape or a right click cancels. One undo step.
    pub(super) fn scale_step(&mut self, ui: &mut egui::Ui, cx: &mut Cx, clip: &ClipAsset, area: &Area) {
        let Some(s) = &mut self.scaling else { return };
        let x = ui.input(|i| i.pointer.hover_pos()).map_or(s.x0, |p| p.x);
        let factor = (1.0 + (x - s.x0) / 200.0).max(0.05);
        let (confirm, cancel) = ui.input(|i| {
            (
                i.pointer.primary_clicked() || i.key_pressed(egui::Key::Enter),
                i.key_pressed(egui::Key::Escape) || i.pointer.secondary_clicked(),
            )
        });
        let factor = if cancel { 1.0 } else { factor };
        if factor != s.factor {
            s.factor = factor;
            let keys: Vec<KeyRef> = s.origin.iter().filter_map(|k| k.to_ref(clip)).collect();
            let snap = (!ui.input(|i| i.modifiers.alt)).then_some(clip.clip.frame_rate);
            cx.edit(Op::Clip {
                path: area.path.clone(),
                op: ClipOp::ScaleKeys { keys, pivot: s.pivot, factor, snap },
            });
            self.selection = s
                .origin
                .iter()
                .map(|k| {
                    KeyId::new(
                        k.bone as usize,
                        k.channel,
                        snap_opt((s.pivot + (k.t() - s.pivot) * factor).max(0.0), snap),
                    )
                })
                .collect();
        }
        ui.ctx().request_repaint();
        if confirm || cancel {
            self.scaling = None;
        } else {
            // No pointer is held: keep the gesture open so the scale stays one undo step.
            cx.send(Command::HoldGesture);
        }
        let _ = area.time;
    }
}

/// The delta of a key move: the pointer's travel `raw` (seconds) snapped to whole frames at
/// `fps` (`None`: free), so a dragged key on a frame lands on a frame, and clamped so the
/// earliest moved key (at `earliest`) stays at or after 0. Every moved key takes this one delta;
/// no key is re-snapped.
pub fn move_delta(raw: f32, fps: Option<f32>, earliest: f32) -> f32 {
    fps.map_or(raw, |f| snap_time(raw, f)).max(-earliest)
}

pub(super) fn snap_opt(t: f32, fps: Option<f32>) -> f32 {
    fps.map_or(t, |f| snap_time(t, f))
}

/// The value of key `k`.
pub fn key_value(clip: &ClipAsset, k: KeyId) -> Option<KeyValue> {
    let c = clip.clip.channels().get(k.bone as usize)?;
    let t = k.t();
    let find = |times: &[f32]| {
        let i = times.partition_point(|x| *x < t - 1e-6);
        times.get(i).is_some_and(|x| (*x - t).abs() < 1e-6).then_some(i)
    };
    match k.channel {
        Channel::Translation => {
            c.translation.as_ref().and_then(|tr| find(tr.times()).map(|i| KeyValue::Vec3(tr.values()[i])))
        }
        Channel::Scale => {
            c.scale.as_ref().and_then(|tr| find(tr.times()).map(|i| KeyValue::Vec3(tr.values()[i])))
        }
        Channel::Rotation => {
            c.rotation.as_ref().and_then(|tr| find(tr.times()).map(|i| KeyValue::Quat(tr.values()[i])))
        }
    }
}
