//! # marrow-engine
//!
//! Marrow's embedded animation runtime. The animation core (this crate's modules below) turns
//! authored clips into poses exactly and fast; it never imports wgpu or egui.
//!
//! ## A game's few calls
//!
//! Import a rig and its clip from glTF, play the clip on an [`Animator`](animator::Animator),
//! advance it each tick, evaluate the pose, and read what a game reads: a joint's
//! `model_from_bone` matrix (to attach a sword) and the skinning palette (to upload to the GPU).
//! [`prelude`] holds the names used here.
//!
//! ```
//! use marrow_engine::prelude::*;
//! use std::sync::Arc;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/gltf/CesiumMan/CesiumMan.glb");
//! let scene = gltf::import(file)?;
//! let rig = &scene.rigs[0];
//! let skeleton = Arc::new(rig.skeleton.clone());
//! let walk = Arc::new(scene.animations[0].clips[0].clip.clone());
//!
//! let mut animator = Animator::new(skeleton.clone(), AnimatorSettings::default());
//! animator.play_clip(walk, true);
//!
//! let n = skeleton.bone_count();
//! let (mut local, mut model, mut palette) =
//!     (vec![Transform::IDENTITY; n], vec![Mat4::IDENTITY; n], vec![Mat4::IDENTITY; n]);
//! for _ in 0..30 {
//!     animator.advance(1.0 / 60.0); // half a second of 60 Hz ticks
//! }
//! animator.evaluate(RigPoseMut { local: &mut local, model: &mut model, palette: &mut palette })?;
//!
//! let head = skeleton.index_of("Skeleton_neck_joint_2").expect("CesiumMan has a neck");
//! let head_position = model[head].w_axis.truncate(); // model_from_bone, in the rig's space
//! assert!(head_position.is_finite() && head_position.length() > 0.5);
//! assert_eq!(palette.len(), n); // palette[j] = model_from_bone[j] * bone_from_bind[j]
//! assert!((animator.time() - 0.5).abs() < 1e-4);
//! # Ok(())
//! # }
//! ```
//!
//! - [`easing`]: the 31 named easing curves and a cubic Bézier.
//! - [`track`]: keyframe tracks (STEP, LINEAR eased, CUBICSPLINE).
//! - [`clip`]: clips (per-bone channels, markers) and [`clip::find_clip_fault`].
//! - `compiled_clip` (internal, hidden from the docs): a clip's derived sampling form (tracks sharing key times, frame-major).
//!   Both build on the bone channel type ([`clip::BoneChannels`]), which lives in a module below
//!   them, so neither imports the other's data.
//! - [`scene`]: the run-time scene: entities in a hierarchy, rigs with Animators, bone sockets,
//!   the frame order and edge-latched faults.
//! - [`skeleton`]: skeletons (`parent < index`) and [`skeleton::find_skeleton_fault`].
//! - [`pose`]: the pose jobs (sample, blend, local-to-model with adjusts, palette) and the
//!   packed [`pose::PoseBuffer`].
//! - [`ik`]: inverse kinematics jobs (two-bone IK) writing local corrections onto a composed
//!   pose.
//! - `playback` (internal, hidden from the docs): playhead arithmetic and the marker sweep rule.
//! - [`animator`]: one character's player: crossfades, bone adjusts, marker events.
//! - [`clock`]: the fixed-tick simulation clock.
//! - [`project`]: project, scene, clip and skeleton files (versioned RON, authored state only),
//!   the asset library, project checks, and the sample runner project.
//! - [`property`]: transform animation of non-bone entities.
//! - [`math`]: TRS transforms, slerp, matrix decomposition.
//! - [`mesh`]: the engine's mesh data (primitives, skin streams, morph targets, materials).
//! - [`gltf`]: glTF 2.0 import of rigs, clips, node animations, meshes and morph targets.
//! - [`bvh`]: BVH motion-capture import (hierarchy, motion, a stick mesh) into glTF's scene shape.
//! - [`graph`]: the blend/adjust graph: authored model, compiler, evaluator, RON files.
//! - [`skinning`]: the CPU reference skinning job and posed bounds.
//! - [`morph`]: morph target application and per-instance morph weights.
//! - [`simplify`]: key reduction of clips to a model-space tolerance.
//! - [`crowd`]: clips baked into a table of skinning matrices for instanced crowds.
//! - [`particles`]: point clouds bound to bone segments (two influences), posed, with springs.
//! - `synthetic` (internal, hidden from the docs): generated rigs and dense clips for benchmarks and tests.
//! - `render` (cargo feature `render`): the wgpu renderer (GPU skinning, morphs, shadows,
//!   skeleton overlay, hot-reloaded shaders); the animation core above never imports it.
//!
//! Three kinds of state are kept apart: authored (clips, skeletons, [`animator::AnimatorSettings`]),
//! compiled/derived (durations, compiled clips, cursors), and session (playing, time, fades, adjusts, events).

#![warn(missing_docs)]

/// The names a game embedding the engine uses most: import a glTF file or load a project,
/// run a [`World`](scene::World) or a bare [`Animator`](animator::Animator), play
/// [`Clip`](clip::Clip)s and graphs on a [`Skeleton`](skeleton::Skeleton), run the pose jobs
/// into a [`PoseBuffer`](pose::PoseBuffer), and (feature `render`) draw with the renderer.
pub mod prelude {
    pub use crate::animator::{Animator, AnimatorSettings, MarkerEvent};
    pub use crate::clip::{BoneChannels, Clip, Marker};
    pub use crate::clock::Clock;
    pub use crate::easing::{Ease, Easing};
    pub use crate::gltf;
    pub use crate::graph::{AnimGraph, GraphInstance, GraphProgram};
    pub use crate::math::Transform;
    pub use crate::pose::{
        BlendLayer, BlendingJob, LocalToModelJob, PaletteJob, PoseBuffer, RigPoseMut, SamplingContext,
        SamplingJob,
    };
    pub use crate::project::{Library, Project};
    pub use crate::scene::{Entity, World};
    pub use crate::skeleton::Skeleton;
    pub use crate::track::{Interpolation, Track};
    pub use glam::{Mat4, Quat, Vec3};

    #[cfg(feature = "render")]
    pub use crate::render::{Renderer, render_world};
}

pub mod animator;
pub mod bvh;
mod channels;
pub mod clip;
pub mod clock;
// Engine internals that the editor, the tests and the benchmarks reach into, but that are no
// supported API for an embedder (they change without notice): hidden from the docs. An
// embedder uses `Clip`, `Animator`, `World` and the jobs (see `prelude`).
#[doc(hidden)]
pub mod compiled_clip;
pub mod compressed;
pub mod crowd;
pub mod easing;
#[cfg(feature = "fbx")]
pub mod fbx;
pub mod frame_rate;
pub mod gltf;
pub mod graph;
pub mod ik;
pub mod math;
pub mod mesh;
pub mod morph;
pub mod particles;
#[doc(hidden)]
pub mod playback;
pub mod pose;
pub mod project;
pub mod property;
#[cfg(feature = "render")]
pub mod render;
pub mod retarget;
pub mod root_motion;
pub mod scene;
pub mod simd;
pub mod simplify;
pub mod skeleton;
pub mod skinning;
#[doc(hidden)]
pub mod synthetic;
pub mod tangent;
pub mod track;

pub use glam;
