//! Helpers shared by the engine's integration tests and benchmarks.
#![allow(dead_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use marrow_engine::clip::Clip;
use marrow_engine::math::Transform;
use marrow_engine::pose::{BlendLayer, BlendingJob, RigPoseMut, SamplingContext, SamplingJob};
use marrow_engine::skeleton::Skeleton;

/// The glTF sample models inside the repository (`assets/gltf`, each with its license).
/// Missing models fail the test loudly.
pub fn gltf_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/gltf");
    assert!(dir.join("RiggedSimple").is_dir(), "the glTF sample models are missing from {}", dir.display());
    dir
}

/// A sample project's folder (`projects/NAME`).
pub fn project_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../projects").join(name)
}

/// Every key time of `clip` and three times evenly between each two (four times the key rate):
/// where the key-reduction and compression tests measure errors independently.
pub fn four_times_key_rate(clip: &Clip) -> Vec<f32> {
    let keys = clip.key_times();
    let mut times = Vec::new();
    for w in keys.windows(2) {
        for j in 0..4 {
            times.push(w[0] + (w[1] - w[0]) * j as f32 / 4.0);
        }
    }
    times.extend(keys.last());
    times
}

/// A one-scene sample project's files in memory (`project.ron`, `scenes/main.scene.ron`), the
/// scene's text passed through `scene` (to break it on purpose).
pub fn one_scene_files(name: &str, scene: impl Fn(String) -> String) -> Vec<(String, String)> {
    let d = project_dir(name);
    let read = |p: &str| std::fs::read_to_string(d.join(p)).unwrap();
    vec![
        ("project.ron".into(), read("project.ron")),
        ("scenes/main.scene.ron".into(), scene(read("scenes/main.scene.ron"))),
    ]
}

/// Samples `clip` at `time` with a fresh context.
pub fn sample(sk: &Skeleton, clip: &Clip, time: f32) -> Vec<Transform> {
    let mut out = vec![Transform::IDENTITY; sk.bone_count()];
    SamplingJob {
        clip,
        bind_pose: &sk.bind_pose,
        time,
        context: &mut SamplingContext::new(sk.bone_count()),
        output: &mut out,
    }
    .run()
    .unwrap();
    out
}

/// Local-TRS blend of two poses at weight `w` (0 = `a`, 1 = `b`).
pub fn blend(sk: &Skeleton, a: &[Transform], b: &[Transform], w: f32) -> Vec<Transform> {
    let mut out = vec![Transform::IDENTITY; sk.bone_count()];
    BlendingJob {
        layers: &[
            BlendLayer { pose: a, weight: 1.0 - w, mask: None },
            BlendLayer { pose: b, weight: w, mask: None },
        ],
        rest_pose: &sk.bind_pose,
        threshold: 1e-6,
        output: &mut out,
    }
    .run()
    .unwrap();
    out
}

/// A global allocator that counts allocations and reallocations (install it in a test binary
/// with `#[global_allocator] static GLOBAL: Counting = Counting;`). The count is process-wide:
/// keep allocation checks in one test per binary.
pub struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);

/// Allocations and reallocations counted so far by [`Counting`].
pub fn allocations() -> usize {
    ALLOCS.load(Ordering::Relaxed)
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// One rig's pose buffers (local, model, palette) for an Animator to evaluate into.
pub struct RigBuffers {
    /// Local transforms.
    pub local: Vec<Transform>,
    /// `model_from_bone` matrices.
    pub model: Vec<glam::Mat4>,
    /// Skinning matrices.
    pub palette: Vec<glam::Mat4>,
}

impl RigBuffers {
    /// Buffers for `n` bones.
    pub fn new(n: usize) -> Self {
        Self {
            local: vec![Transform::IDENTITY; n],
            model: vec![glam::Mat4::IDENTITY; n],
            palette: vec![glam::Mat4::IDENTITY; n],
        }
    }

    /// The buffers as the output of [`marrow_engine::animator::Animator::evaluate`].
    pub fn rig(&mut self) -> RigPoseMut<'_> {
        RigPoseMut { local: &mut self.local, model: &mut self.model, palette: &mut self.palette }
    }
}
