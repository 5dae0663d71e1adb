//! Synthetic rigs, clips and a one-rig project for benchmarks, tests and the code-built sample
//! project.
//!
//! The benchmark skeleton is a root plus chains of 8 bones (`parent(i) = 0` when `i % 8 == 1`,
//! else `i - 1`); the dense clip keys translation, rotation and scale of every bone at a fixed
//! rate with smooth, non-trivial motion. Nothing here is used by the runtime itself.

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
        p.clips.insert(path.into(), ClipAsset { bones: skeleton.bone_names.clone(), clip });
    }
    p.skeletons.insert(RIG.into(), skeleton);
    let animator = AnimatorDesc {
        rig: RIG.into(),
        clip: first,
        graph: None,
        looping: None,
        speed: 1.0,
        play_on_start: true,
    };
    let rig = EntityDesc {
        name: "Rig".into(),
        transform: Some(Transform::IDENTITY),
        animator: Some(animator),
        ..Default::default()
    };
    p.scenes.insert(SCENE.into(), SceneDesc { name: "main".into(), entities: vec![rig] });
    p
}
