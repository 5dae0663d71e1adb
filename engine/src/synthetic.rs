//! Synthetic rigs, clips and a one-rig project for benchmarks, tests and the code-built sample
//! project.
//!
//! The benchmark skeleton is a root plus chains of 8 bones (`parent(i) = 0` when `i % 8 == 1`,
//! else `i - 1`); the dense clip keys translation, rotation and scale of every bone at a fixed
//! rate with smooth, non-trivial motion. Nothing here is used by the runtime itself.

use std::sync::Arc;

use glam::{Quat, Vec3};

use crate::clip::{BoneChannels, Clip};
use crate::math::Transform;
use crate::project::Project;
use crate::project::file::ClipAsset;
use crate::scene::{AnimatorDesc, EntityDesc, SceneDesc};
use crate::skeleton::{NO_PARENT, Skeleton};
use crate::track::{Interpolation, Track};

/// A skeleton of `joints` bones: a root plus chains of 8, each bone 0.1 units along +Y from its
/// parent (chains fan out around the root).
pub fn chain_skeleton(joints: usize) -> Skeleton {
    let bones = (0..joints)
        .map(|i| {
            let parent = if i == 0 {
                NO_PARENT
            } else if i % 8 == 1 {
                0
            } else {
                (i - 1) as u16
            };
            let local = if i == 0 {
                Transform::IDENTITY
            } else if i % 8 == 1 {
                let chain = (i / 8) as f32;
                Transform {
                    translation: Vec3::new(0.05 * chain.cos(), 0.1, 0.05 * chain.sin()),
                    rotation: Quat::from_rotation_z(0.2 * chain),
                    scale: Vec3::ONE,
                }
            } else {
                Transform::from_translation(Vec3::new(0.0, 0.1, 0.0))
            };
            (format!("bone{i}"), parent, local)
        })
        .collect();
    // The generator's parents are always before their children and names are unique.
    Skeleton::from_bind_pose(format!("chain{joints}"), bones).unwrap_or_else(|e| panic!("{e}"))
}

/// A clip keying T, R and S of every bone of `skeleton` at `hz` for `seconds`, LINEAR, with a
/// per-bone phase so bones differ. `variant` changes the motion so several clips differ.
pub fn dense_clip(skeleton: &Skeleton, name: &str, seconds: f32, hz: f32, variant: u32) -> Clip {
    let keys = (seconds * hz).round() as usize + 1;
    let times: Vec<f32> = (0..keys).map(|k| k as f32 / hz).collect();
    let mut clip = Clip::new(name, skeleton);
    let v = variant as f32;
    for (b, ch) in clip.channels_mut().iter_mut().enumerate() {
        let bind = skeleton.bind_pose[b];
        let phase = b as f32 * 0.37 + v * 1.3;
        let w = std::f32::consts::TAU / seconds * (1.0 + v * 0.25);
        let t: Vec<Vec3> = times
            .iter()
            .map(|&t| bind.translation + Vec3::new(0.01 * (w * t + phase).sin(), 0.0, 0.01 * (w * t).cos()))
            .collect();
        let r: Vec<Quat> = times
            .iter()
            .map(|&t| {
                bind.rotation
                    * Quat::from_euler(
                        glam::EulerRot::XYZ,
                        0.6 * (w * t + phase).sin(),
                        0.3 * (w * t).cos(),
                        0.2 * (2.0 * w * t + phase).sin(),
                    )
            })
            .collect();
        let s: Vec<Vec3> = times.iter().map(|&t| Vec3::splat(1.0 + 0.05 * (w * t + phase).sin())).collect();
        *ch = BoneChannels {
            translation: Track::from_keys(Interpolation::Linear, times.clone(), t).ok(),
            rotation: Track::from_keys(Interpolation::Linear, times.clone(), r).ok(),
            scale: Track::from_keys(Interpolation::Linear, times.clone(), s).ok(),
        };
    }
    clip.looping = true;
    clip
}

/// A project of one skeleton (`assets/rig.skeleton.ron`), the `clips` given (each at its path)
/// and one scene (`scenes/main.scene.ron`) whose single entity, `Rig`, plays the first clip on
/// start: the document the editor's benchmarks open.
pub fn one_rig_project(skeleton: Skeleton, clips: Vec<(&str, Clip)>) -> Project {
    const RIG: &str = "assets/rig.skeleton.ron";
    const SCENE: &str = "scenes/main.scene.ron";
    let mut p = Project::default();
    p.manifest.name = "bench".into();
    p.manifest.scenes.push(SCENE.into());
    p.manifest.assets.push(RIG.into());
    let first = clips.first().map(|(path, _)| (*path).to_owned());
    for (path, clip) in clips {
        p.manifest.clips.push(path.into());
        p.clips.insert(
            path.into(),
            Arc::new(ClipAsset { bones: skeleton.bone_names.clone(), clip: Arc::new(clip) }),
        );
    }
    p.skeletons.insert(RIG.into(), Arc::new(skeleton));
    let animator = AnimatorDesc {
        rig: RIG.into(),
        clip: first,
        graph: None,
        looping: None,
        speed: 1.0,
        play_on_start: true,
        root_motion: None,
        targets: Vec::new(),
    };
    let rig = EntityDesc {
        name: "Rig".into(),
        transform: Some(Transform::IDENTITY),
        animator: Some(animator),
        ..Default::default()
    };
    p.scenes.insert(SCENE.into(), Arc::new(SceneDesc { name: "main".into(), entities: vec![rig] }));
    p
}

/// The joints of the CMU motion-capture database's 31-joint rig (as its BVH release names
/// them), with their parents and bind offsets in metres (zero-length joints included, as the
/// database has them: hip, back, neck and hand joints with no offset).
const MOCAP_JOINTS: [(&str, i32, [f32; 3]); 31] = [
    ("Hips", -1, [0.0, 0.95, 0.0]),
    ("LHipJoint", 0, [0.0, 0.0, 0.0]),
    ("LeftHip", 1, [0.0704, -0.0927, 0.0405]),
    ("LeftKnee", 2, [0.1407, -0.3867, 0.0]),
    ("LeftAnkle", 3, [0.1336, -0.3672, 0.0]),
    ("LeftToe", 4, [0.0084, -0.0230, 0.1250]),
    ("RHipJoint", 0, [0.0, 0.0, 0.0]),
    ("RightHip", 6, [-0.0668, -0.0927, 0.0405]),
    ("RightKnee", 7, [-0.1392, -0.3824, 0.0]),
    ("RightAnkle", 8, [-0.1346, -0.3698, 0.0]),
    ("RightToe", 9, [-0.0099, -0.0271, 0.1145]),
    ("lowerback", 0, [0.0, 0.0, 0.0]),
    ("Chest", 11, [-0.0013, 0.1121, 0.0002]),
    ("Chest2", 12, [-0.0004, 0.1123, -0.0003]),
    ("lowerneck", 13, [0.0, 0.0, 0.0]),
    ("Neck", 14, [0.0001, 0.0909, 0.0060]),
    ("Head", 15, [-0.0006, 0.0903, 0.0007]),
    ("LeftCollar", 13, [0.0, 0.0, 0.0]),
    ("LeftShoulder", 17, [0.1724, 0.0830, -0.0010]),
    ("LeftElbow", 18, [0.0, -0.2399, 0.0]),
    ("LeftWrist", 19, [0.0, -0.1849, 0.0]),
    ("lhand", 20, [0.0, 0.0, 0.0]),
    ("LFingers", 21, [0.0, -0.0371, 0.0]),
    ("LThumb", 21, [0.0, 0.0, 0.0]),
    ("RightCollar", 13, [0.0, 0.0, 0.0]),
    ("RightShoulder", 24, [-0.1601, 0.0743, -0.0128]),
    ("RightElbow", 25, [0.0, -0.2518, 0.0]),
    ("RightWrist", 26, [0.0, -0.1944, 0.0]),
    ("rhand", 27, [0.0, 0.0, 0.0]),
    ("RFingers", 28, [0.0, -0.0348, 0.0]),
    ("RThumb", 28, [0.0, 0.0, 0.0]),
];

/// A skeleton shaped like the CMU motion-capture database's 31-joint rig: its names, parents
/// and bind offsets, zero-length joints included.
pub fn mocap_skeleton() -> Skeleton {
    let bones = MOCAP_JOINTS
        .iter()
        .map(|&(name, parent, [x, y, z])| {
            let parent = if parent < 0 { NO_PARENT } else { parent as u16 };
            (name.to_owned(), parent, Transform::from_translation(Vec3::new(x, y, z)))
        })
        .collect();
    // The table lists parents before children and unique names.
    Skeleton::from_bind_pose("cmu31", bones).unwrap_or_else(|e| panic!("{e}"))
}

/// A clip with the shape of captured motion on [`mocap_skeleton`]: `frames` keys at `hz` on a
/// root translation and on the rotation of every joint (32 channels, all sharing one key time
/// array, LINEAR), the motion a walk-like cycle plus seeded per-key jitter of about 0.3
/// degrees (capture noise), a drifting root, and quaternion sign flips between neighbouring keys
/// on some joints (as converted capture data has them). 995 frames at 120 Hz give the 31,840
/// keys of the CMU walk the editor's issues were found with. Deterministic for a `seed`.
pub fn mocap_like_clip(skeleton: &Skeleton, name: &str, frames: usize, hz: f32, seed: u64) -> Clip {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut noise = move || {
        // xorshift64*: uniform in [-1, 1).
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let x = state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40;
        x as f32 / (1u64 << 23) as f32 - 1.0
    };
    let times: Vec<f32> = (0..frames).map(|k| k as f32 / hz).collect();
    let mut clip = Clip::new(name, skeleton);
    let jitter = 0.3f32.to_radians();
    let w = std::f32::consts::TAU / 1.1; // one stride cycle every 1.1 s
    for (b, ch) in clip.channels_mut().iter_mut().enumerate() {
        let bind = skeleton.bind_pose[b];
        let phase = b as f32 * 0.61;
        let amp = if b == 0 { 0.15 } else { 0.45 / (1.0 + (b % 7) as f32 * 0.3) };
        let flips = b % 5 == 3;
        let r: Vec<Quat> = times
            .iter()
            .enumerate()
            .map(|(k, &t)| {
                let q = bind.rotation
                    * Quat::from_euler(
                        glam::EulerRot::ZYX,
                        amp * 0.3 * (w * t + phase).cos() + jitter * noise(),
                        amp * 0.2 * (0.5 * w * t).sin() + jitter * noise(),
                        amp * (w * t + phase).sin() + jitter * noise(),
                    );
                if flips && k % 2 == 1 { -q } else { q }
            })
            .collect();
        ch.rotation = Track::from_keys(Interpolation::Linear, times.clone(), r).ok();
        if b == 0 {
            let t: Vec<Vec3> = times
                .iter()
                .map(|&t| {
                    bind.translation
                        + Vec3::new(0.02 * (0.5 * w * t).sin(), 0.03 * (2.0 * w * t).cos(), 1.3 * t)
                        + Vec3::new(noise(), noise(), noise()) * 0.001
                })
                .collect();
            ch.translation = Track::from_keys(Interpolation::Linear, times.clone(), t).ok();
        }
    }
    clip
}

/// A BVH file shaped like a CMU capture ([`mocap_skeleton`]'s 31 joints, offsets in
/// centimetres, so an import at scale 0.01 gives that skeleton back): the root with
/// `Xposition Yposition Zposition Zrotation Yrotation Xrotation`, every other joint with
/// `Zrotation Yrotation Xrotation`, an `End Site` 2 cm along +Y under every leaf, and `frames`
/// lines at `hz` of a walk-like cycle with seeded jitter of about 0.3 degrees and a root that
/// drifts forward. Numbers are written with four decimals. Deterministic for a `seed`.
pub fn mocap_bvh(frames: usize, hz: f32, seed: u64) -> String {
    use std::fmt::Write;
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut noise = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let x = state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40;
        f64::from(x as u32) / f64::from(1u32 << 23) - 1.0
    };
    let mut out = String::from("HIERARCHY\n");
    let has_children = |j: usize| MOCAP_JOINTS.iter().any(|&(_, p, _)| p == j as i32);
    let mut open: Vec<usize> = Vec::new();
    for (j, &(name, parent, [x, y, z])) in MOCAP_JOINTS.iter().enumerate() {
        while open.last().is_some_and(|&o| o as i32 != parent) {
            open.pop();
            let _ = writeln!(out, "{}}}", "  ".repeat(open.len()));
        }
        let pad = "  ".repeat(open.len());
        let (word, channels) = if parent < 0 {
            ("ROOT", "6 Xposition Yposition Zposition Zrotation Yrotation Xrotation")
        } else {
            ("JOINT", "3 Zrotation Yrotation Xrotation")
        };
        let _ = writeln!(out, "{pad}{word} {name}\n{pad}{{");
        let _ = writeln!(out, "{pad}  OFFSET {:.4} {:.4} {:.4}", x * 100.0, y * 100.0, z * 100.0);
        let _ = writeln!(out, "{pad}  CHANNELS {channels}");
        if !has_children(j) {
            let _ =
                writeln!(out, "{pad}  End Site\n{pad}  {{\n{pad}    OFFSET 0.0000 2.0000 0.0000\n{pad}  }}");
        }
        open.push(j);
    }
    while open.pop().is_some() {
        let _ = writeln!(out, "{}}}", "  ".repeat(open.len()));
    }
    let _ = writeln!(out, "MOTION\nFrames: {frames}\nFrame Time: {:.6}", 1.0 / hz);
    let w = std::f64::consts::TAU / 1.1;
    for k in 0..frames {
        let t = k as f64 / f64::from(hz);
        let root = [2.0 * (0.5 * w * t).sin(), 95.0 + 3.0 * (2.0 * w * t).cos(), 130.0 * t];
        for v in root {
            let _ = write!(out, "{:.4} ", v + 0.1 * noise());
        }
        for b in 0..MOCAP_JOINTS.len() {
            let phase = b as f64 * 0.61;
            let amp = if b == 0 { 8.0 } else { 25.0 / (1.0 + (b % 7) as f64 * 0.3) };
            let angles = [
                amp * (w * t + phase).sin(),
                amp * 0.2 * (0.5 * w * t).sin(),
                amp * 0.3 * (w * t + phase).cos(),
            ];
            for a in angles {
                let _ = write!(out, "{:.4} ", a + 0.3 * noise());
            }
        }
        out.pop();
        out.push('\n');
    }
    out
}
