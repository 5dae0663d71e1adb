//! The posing rule, shared by every panel that poses bones (the viewport's gizmo, the
//! Inspector's bone fields, the timeline's pose tools): with Auto Key on and an editable clip, a
//! pose becomes keys at the playhead (an `Op`, one undo step per gesture); otherwise it is a
//! temporary pose in the session, shown until the playhead moves and never saved. Also the pose
//! clipboard (Copy Pose, Paste Pose, Paste Mirrored) and frame snapping.
//!
//! Not here: drawing (the panels), applying edits (`crate::app`), key edits other than posing
//! (`crate::document::clip_ops`).

use marrow_engine::clip::Channel;
use marrow_engine::math::Transform;

use crate::command::Command;
use crate::cx::Cx;
use crate::document::clip_ops::{ClipOp, InsertKind, KeyRef, KeyValue, KeyWrite};
use crate::document::{Op, tree};

/// The frame rate the transport shows frames at (clips without their own rate).
pub const DEFAULT_FPS: f32 = 30.0;

/// The clip reference the rig at `rig` plays now, whose time its playhead is: keys written at
/// the playhead belong to it (when it is a clip file of the project). The clip the Timeline
/// shows in place of the rig's own playing (Show This Clip); else, while no graph plays on the
/// rig (its scene's or a preview), its scene Animator's clip (a file, or a clip inside an
/// imported model). `None` while a graph plays, or a clip made on the fly (a retarget preview):
/// the playhead is then no time of any clip, and nothing may be keyed at it.
pub fn live_clip(cx: &Cx, rig: &str) -> Option<String> {
    if let Some(p) = cx.session.clip_preview().filter(|p| p.rig == rig) {
        return p.source.clone();
    }
    if cx.session.preview().is_some_and(|p| p.rig == rig) {
        return None;
    }
    let e = cx.session.entity(rig)?;
    if cx.session.world().animator(e)?.current_graph().is_some() {
        return None;
    }
    cx.scene()
        .and_then(|(_, s)| tree::find(s, rig))
        .and_then(|x| x.animator.as_ref())
        .and_then(|x| x.clip.clone())
}

/// `t` snapped to the nearest frame at `fps`.
pub fn snap_time(t: f32, fps: f32) -> f32 {
    if fps > 0.0 { (t * fps).round() / fps } else { t }
}

/// Writes keys for a bone's posed transform at `time` for the channels a gizmo mode edits
/// (Auto Key): translation for a move, rotation for a turn, scale for a stretch.
pub fn pose_keys(bone: &str, time: f32, t: &Transform, channels: &[Channel]) -> Vec<KeyWrite> {
    channels
        .iter()
        .map(|ch| KeyWrite {
            key: KeyRef::new(bone, *ch, time),
            value: match ch {
                Channel::Translation => KeyValue::Vec3(t.translation),
                Channel::Rotation => KeyValue::Quat(t.rotation),
                Channel::Scale => KeyValue::Vec3(t.scale),
            },
        })
        .collect()
}

/// Poses bone `bone` of the rig at `rig` with local transform `local` (the viewport gizmo, the
/// inspector's fields, a pasted pose): with Auto Key on and an editable clip, keys for
/// `channels` at the playhead (snapped to the clip's frames; a drag is one step); otherwise a
/// temporary pose shown until the playhead moves.
pub fn pose_bone(cx: &mut Cx, rig: &str, bone: usize, local: Transform, channels: &[Channel]) {
    pose_bones(cx, rig, &[(bone, local)], channels);
}

/// [`pose_bone`] for several bones at once (a pasted pose): one undo step with Auto Key.
pub fn pose_bones(cx: &mut Cx, rig: &str, bones: &[(usize, Transform)], channels: &[Channel]) {
    let world = cx.session.world();
    let Some(e) = cx.session.entity(rig) else { return };
    let Some(a) = world.animator(e) else { return };
    let names = &a.skeleton().bone_names;
    let clip_path =
        live_clip(cx, rig).filter(|c| cx.doc.project().clips.get(c).is_some_and(|c| c.bones == *names));
    match (cx.ui.auto_key, clip_path) {
        (true, Some(path)) => {
            let fps = cx.doc.project().clips[&path].clip.frame_rate;
            let time = snap_time(a.time(), fps);
            let keys: Vec<KeyWrite> = bones
                .iter()
                .filter_map(|(b, t)| Some(pose_keys(names.get(*b)?, time, t, channels)))
                .flatten()
                .collect();
            cx.edit(Op::Clip { path, op: ClipOp::InsertKeys { keys, kind: InsertKind::KeyPose } });
        }
        _ => {
            for (b, t) in bones {
                cx.send(Command::PoseBone { rig: rig.to_owned(), bone: *b, transform: Some(*t) });
            }
        }
    }
}

/// Copy Pose: the local transforms on screen of `bones` of the rig at `rig` (all when empty).
pub fn copy_pose(cx: &mut Cx, rig: &str, bones: &[usize]) {
    let Some(e) = cx.session.entity(rig) else { return };
    let world = cx.session.world();
    let (Some(a), Some(pose)) = (world.animator(e), world.rig_pose(e)) else { return };
    let names = &a.skeleton().bone_names;
    let all: Vec<usize> = if bones.is_empty() { (0..names.len()).collect() } else { bones.to_vec() };
    cx.ui.pose_clipboard =
        all.iter().filter_map(|b| Some((names.get(*b)?.clone(), *pose.local.get(*b)?))).collect();
}

/// Paste Pose (or Paste Mirrored: each bone onto its other side, mirrored across X) onto the
/// rig at `rig`, by bone name.
pub fn paste_pose(cx: &mut Cx, rig: &str, mirrored: bool) {
    let Some(e) = cx.session.entity(rig) else { return };
    let Some(a) = cx.session.world().animator(e) else { return };
    let sk = a.skeleton().clone();
    let bones: Vec<(usize, Transform)> = cx
        .ui
        .pose_clipboard
        .iter()
        .filter_map(|(name, t)| {
            if mirrored {
                let target = mirror_name(name).unwrap_or_else(|| name.clone());
                Some((sk.index_of(&target)?, mirror_transform(t)))
            } else {
                Some((sk.index_of(name)?, *t))
            }
        })
        .collect();
    pose_bones(cx, rig, &bones, &[Channel::Translation, Channel::Rotation, Channel::Scale]);
}

/// The bone name mirrored left to right by the usual suffixes and words (`_l`/`_r`, `.L`/`.R`,
/// `Left`/`Right`); `None` for a name with no side.
pub fn mirror_name(name: &str) -> Option<String> {
    for (a, b) in [
        ("_l", "_r"),
        ("_L", "_R"),
        (".l", ".r"),
        (".L", ".R"),
        ("_left", "_right"),
        ("Left", "Right"),
        ("left", "right"),
    ] {
        for (x, y) in [(a, b), (b, a)] {
            if let Some(stem) = name.strip_suffix(x) {
                return Some(format!("{stem}{y}"));
            }
            if let Some(rest) = name.strip_prefix(x.trim_start_matches(['_', '.'])) {
                let y = y.trim_start_matches(['_', '.']);
                if x.starts_with(char::is_uppercase) && rest.starts_with(char::is_uppercase) {
                    return Some(format!("{y}{rest}"));
                }
            }
        }
    }
    None
}

/// A local transform mirrored across the YZ plane (x negated).
pub fn mirror_transform(t: &Transform) -> Transform {
    Transform {
        translation: glam::Vec3::new(-t.translation.x, t.translation.y, t.translation.z),
        rotation: glam::Quat::from_xyzw(t.rotation.x, -t.rotation.y, -t.rotation.z, t.rotation.w),
        scale: t.scale,
    }
}

#[cfg(test)]
mod mirror_tests {
    use super::*;

    #[test]
    fn names_mirror_by_their_side_and_unsided_names_do_not() {
        assert_eq!(mirror_name("thigh_l").as_deref(), Some("thigh_r"));
        assert_eq!(mirror_name("Hand.R").as_deref(), Some("Hand.L"));
        assert_eq!(mirror_name("LeftArm").as_deref(), Some("RightArm"));
        assert_eq!(mirror_name("upperarm_right").as_deref(), Some("upperarm_left"));
        assert_eq!(mirror_name("spine"), None);
        let t = Transform {
            translation: glam::Vec3::new(0.2, 1.0, 0.1),
            rotation: glam::Quat::from_rotation_y(0.5),
            scale: glam::Vec3::ONE,
        };
        let m = mirror_transform(&t);
        assert_eq!(m.translation.x, -0.2);
        assert!((m.rotation * glam::Vec3::X).z > 0.0 && (t.rotation * glam::Vec3::X).z < 0.0);
    }
}
