//! The engine's integration tests, in one test binary (each binary links the whole engine).
//! Each module is one former test file, its tests unchanged; run one with
//! `cargo test -p marrow-engine --test all MODULE::`. The tests that install a counting global
//! allocator (`graph_alloc`, `scene_alloc`) keep binaries of their own, as does `gltf_export`.

#[path = "../support/mod.rs"]
mod support;

#[path = "../../../fuzz/oracle.rs"]
mod oracle;

#[path = "../../../fuzz/gltf_gen.rs"]
mod gltf_gen;

mod animator;
mod bind_pose_faults;
mod blend_space_2d;
mod bvh;
mod clip_file;
mod clip_repair;
mod compiled_clip;
mod compressed;
mod crowd;
mod easing;
mod fbx;
mod frame_rate;
mod fuzz_regressions;
mod gltf_bad_input;
mod gltf_conformance;
mod gltf_spec;
mod graph;
mod graph_animator;
mod graph_file;
mod hostile_cost;
#[cfg(unix)]
mod hostile_io;
mod ik;
mod live_reload;
mod loader_props;
mod locomotion_sample;
mod node_kinds;
mod one_runtime;
mod particles;
mod pose_jobs;
mod project;
mod project_runner;
mod rebind_clips;
#[cfg(feature = "render")]
mod render;
mod retarget;
mod root_motion;
mod scene;
mod simplify;
mod socket;
mod state_machine;
mod tracks_and_clips;
