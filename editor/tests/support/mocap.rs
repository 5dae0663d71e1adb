//! A project folder with the shape of real motion capture, shared by the editor's key-move
//! tests and the real-window tests (`tests/real_window.rs` includes this file by path): the CMU
//! 31-joint rig of `marrow_engine::synthetic` on an entity "Actor", playing a clip of 995 frames
//! sampled every [`FRAME_TIME`] (a CMU BVH file's `Frame Time: 0.008333`, so the keys drift off
//! the exact 120 Hz grid by up to 0.33 ms), frame rate 120: 31 rotation tracks and the root's
//! translation, 31,840 keys. Written through the project saver, so a save of the unchanged
//! project is byte-identical. [`write_real_project`] writes the same project around the real
//! capture in the repository (CMU 131_01, imported by the engine's BVH importer).

use std::path::Path;

use marrow_engine::project::file::ClipAsset;
use marrow_engine::project::{Project, clip_to_string, skeleton_to_string};
use marrow_engine::synthetic::{mocap_like_clip, mocap_skeleton};

/// The clip's path in the project.
pub const CLIP: &str = "clips/capture.clip.ron";
/// The clip's frames.
pub const FRAMES: usize = 995;
/// A CMU BVH file's frame time (not exactly 1/120 s).
pub const FRAME_TIME: f32 = 0.008333;

/// Writes the mocap project into the empty folder `root`.
pub fn write_project(root: &Path) {
    let skeleton = mocap_skeleton();
    let mut clip = mocap_like_clip(&skeleton, "capture", FRAMES, 1.0 / FRAME_TIME, 131);
    clip.frame_rate = 120.0;
    write_with(root, &skeleton, clip);
}

/// Writes a project of `skeleton` and `clip` (the paths and entity of [`write_project`]).
fn write_with(root: &Path, skeleton: &marrow_engine::skeleton::Skeleton, clip: marrow_engine::clip::Clip) {
    let asset = ClipAsset { clip: std::sync::Arc::new(clip), bones: skeleton.bone_names.clone() };
    for sub in ["assets", "clips", "scenes"] {
        std::fs::create_dir_all(root.join(sub)).unwrap();
    }
    std::fs::write(root.join("assets/cmu31.skeleton.ron"), skeleton_to_string(skeleton)).unwrap();
    std::fs::write(root.join(CLIP), clip_to_string(&asset)).unwrap();
    std::fs::write(
        root.join("project.ron"),
        r#"(version: 1, name: "mocap", scenes: ["scenes/main.scene.ron"],
            assets: ["assets/cmu31.skeleton.ron"], clips: ["clips/capture.clip.ron"], graphs: [])"#,
    )
    .unwrap();
    std::fs::write(
        root.join("scenes/main.scene.ron"),
        r#"#![enable(implicit_some)]
(version: 1, name: "main", entities: [(
    name: "Actor",
    transform: (translation: (0.0, 0.0, 0.0), rotation: (0.0, 0.0, 0.0, 1.0), scale: (1.0, 1.0, 1.0)),
    animator: (rig: "assets/cmu31.skeleton.ron", clip: "clips/capture.clip.ron", speed: 1.0,
        play_on_start: false),
)])"#,
    )
    .unwrap();
    Project::load(root).unwrap().save(root).unwrap();
}

/// The real capture in the repository (CMU subject 131, trial 01; `assets/bvh/README.md`).
// The real-window suite includes this file by path and does not use the real capture.
#[allow(dead_code)]
pub const REAL_BVH: &str = "assets/bvh/cmu_131_01.bvh";

/// Writes a project playing the real capture at `bvh` (imported by the engine's BVH importer:
/// its skeleton and its one clip, at the rate the importer detects) into the empty folder
/// `root`, with the same paths and entity as [`write_project`].
#[allow(dead_code)]
pub fn write_real_project(root: &Path, bvh: &Path) {
    let scene = marrow_engine::bvh::import(bvh, &marrow_engine::bvh::BvhOptions::default()).unwrap();
    let skeleton = scene.rigs[0].skeleton.clone();
    let clip = scene.animations[0].clips[0].clip.clone();
    write_with(root, &skeleton, clip);
}
