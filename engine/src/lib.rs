//! # marrow-engine
//!
//! Marrow's embedded animation runtime. The animation core (this crate's modules below) turns
//! authored clips into poses exactly and fast; it never imports wgpu or egui.
//!
//! - [`easing`]: the 31 named easing curves and a cubic Bézier.
//! - [`track`]: keyframe tracks (STEP, LINEAR eased, CUBICSPLINE).
//! - [`clip`]: clips (per-bone channels, markers) and [`clip::find_clip_fault`].
//! - [`compiled_clip`]: a clip's derived sampling form (tracks sharing key times, frame-major).
//! - [`scene`]: the run-time scene: entities in a hierarchy, rigs with Animators, bone sockets,
//!   the frame order and edge-latched faults.
//! - [`skeleton`]: skeletons (`parent < index`) and [`skeleton::find_skeleton_fault`].
//! - [`pose`]: the pose jobs (sample, blend, local-to-model with adjusts, palette) and the
//!   packed [`pose::PoseBuffer`].
//! - [`playback`]: playhead arithmetic and the marker sweep rule.
//! - [`animator`]: one character's player: crossfades, bone adjusts, marker events.
//! - [`clock`]: the fixed-tick simulation clock.
//! - [`project`]: project, scene, clip and skeleton files (versioned RON, authored state only),
//!   the asset library, project checks, and the sample runner project.
//! - [`property`]: transform animation of non-bone entities.
//! - [`math`]: TRS transforms, slerp, matrix decomposition.
//! - [`mesh`]: the engine's mesh data (primitives, skin streams, morph targets, materials).
//! - [`gltf`]: glTF 2.0 import of rigs, clips, node animations, meshes and morph targets.
//! - [`graph`]: the blend/adjust graph: authored model, compiler, evaluator, RON files.
//! - [`skinning`]: the CPU reference skinning job and posed bounds.
//! - [`morph`]: morph target application and per-instance morph weights.
//! - [`synthetic`]: generated rigs and dense clips for benchmarks and tests.
//! - `render` (cargo feature `render`): the wgpu renderer (GPU skinning, morphs, shadows,
//!   skeleton overlay, hot-reloaded shaders); the animation core above never imports it.
//!
//! Three kinds of state are kept apart: authored (clips, skeletons, [`animator::AnimatorSettings`]),
//! compiled/derived (durations, compiled clips, cursors), and session (playing, time, fades, adjusts, events).

#![warn(missing_docs)]

pub mod animator;
pub mod clip;
pub mod clock;
pub mod compiled_clip;
pub mod easing;
pub mod gltf;
pub mod graph;
pub mod math;
pub mod mesh;
pub mod morph;
pub mod playback;
pub mod pose;
pub mod project;
pub mod property;
#[cfg(feature = "render")]
pub mod render;
pub mod scene;
pub mod skeleton;
pub mod skinning;
pub mod synthetic;
pub mod track;

pub use glam;
