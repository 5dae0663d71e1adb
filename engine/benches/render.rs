//! Renderer benchmarks: `cargo bench -p marrow-engine --features render --bench render`.
//!
//! A crowd of 1, 10 and 100 skinned CesiumMan characters (19 joints, 3273 vertices each) on a
//! grid, each posed at its own time. One iteration is the CPU side of one frame: extraction
//! (palettes packed, morphs, dynamic bounds, draw objects) plus culling, sorting, uploads and
//! encoding of the shadow, depth and forward passes, and the submit. Posing itself is measured
//! by the pose benchmarks and is not included; the GPU is waited on outside the timed region.
//! Afterwards, GPU time per frame from timestamp queries is printed where the adapter has them.
//! Targets are 256x256 with a 1024 shadow map, so lavapipe keeps up on 2 cores.

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion};
use marrow_engine::glam::{Mat4, Vec3};
use marrow_engine::gltf::{ImportedScene, ScenePose, import};
use marrow_engine::render::scene::SceneRenderer;
use marrow_engine::render::{
    Camera, FrameData, GpuContext, MeshPool, RenderTarget, Renderer, RendererSettings, test_device,
};
use marrow_engine::skinning::Aabb;

struct Crowd {
    scene: ImportedScene,
    pool: MeshPool,
    sr: SceneRenderer,
    poses: Vec<ScenePose>,
    offsets: Vec<Vec3>,
    frame: FrameData,
    camera: Camera,
}

impl Crowd {
    fn new(ctx: &GpuContext, n: usize) -> Self {
        let scene = import(support::gltf_dir().join("CesiumMan/CesiumMan.glb")).unwrap();
        let mut pool = MeshPool::new();
        let mut sr = SceneRenderer::upload(ctx, &mut pool, &scene).unwrap();
        sr.ground_plane = false;
        let side = (n as f32).sqrt().ceil() as usize;
        let offsets: Vec<Vec3> =
            (0..n).map(|i| Vec3::new((i % side) as f32 * 1.5, 0.0, -((i / side) as f32) * 1.5)).collect();
        let poses = (0..n).map(|_| ScenePose::new(&scene)).collect();
        let mut b = Aabb::point(Vec3::ZERO);
        for o in &offsets {
            b.grow(*o + Vec3::new(0.5, 1.8, 0.5));
            b.grow(*o - Vec3::new(0.5, 0.0, 0.5));
        }
        Self { scene, pool, sr, poses, offsets, frame: FrameData::default(), camera: Camera::framing(b, 1.0) }
    }

    fn pose(&mut self, t: f32) {
        for (i, p) in self.poses.iter_mut().enumerate() {
            p.evaluate(&self.scene, Some(0), t + i as f32 * 0.037).unwrap();
        }
    }

    /// Extraction of every character into the frame (the timed part, with `render`).
    fn extract(&mut self, ctx: &GpuContext, version: u64) {
        self.frame.clear();
        self.frame.camera = self.camera;
        for (pose, offset) in self.poses.iter().zip(&self.offsets) {
            let start = self.frame.objects.len();
            self.sr.extract(ctx, &mut self.pool, &self.scene, pose, version, &mut self.frame).unwrap();
            let m = Mat4::from_translation(*offset);
            for o in &mut self.frame.objects[start..] {
                o.world_from_model = m * o.world_from_model;
                o.bounds = o.bounds.map(|b| Aabb { min: b.min + *offset, max: b.max + *offset });
            }
        }
    }
}

fn frame_cpu(c: &mut Criterion) {
    let Some(ctx) = test_device() else { return };
    eprintln!("adapter: {}", ctx.describe());
    let mut group = c.benchmark_group("render/cpu_frame");
    group.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(3));
    for n in [1usize, 10, 100] {
        let mut crowd = Crowd::new(&ctx, n);
        let mut renderer = Renderer::new(&ctx, RendererSettings::default()).unwrap();
        let target = renderer.create_target(256, 256);
        crowd.pose(0.3);
        let mut version = 1;
        group.bench_function(BenchmarkId::from_parameter(n), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    version += 1;
                    let t0 = Instant::now();
                    crowd.extract(&ctx, version);
                    let stats = renderer.render(&crowd.pool, &crowd.frame, &target).unwrap();
                    total += t0.elapsed();
                    assert!(stats.palette_uploaded);
                    ctx.wait_idle();
                }
                total
            })
        });
    }
    group.finish();
}

fn gpu_time(
    ctx: &GpuContext,
    renderer: &mut Renderer,
    crowd: &mut Crowd,
    target: &RenderTarget,
) -> Option<f64> {
    let mut samples = Vec::new();
    for k in 0..5 {
        crowd.extract(ctx, 1000 + k);
        renderer.render(&crowd.pool, &crowd.frame, target).unwrap();
        samples.push(renderer.last_gpu_time_ms()?);
    }
    samples.sort_by(f64::total_cmp);
    Some(samples[samples.len() / 2])
}

fn gpu_times() {
    let Some(ctx) = test_device() else { return };
    for n in [1usize, 10, 100] {
        let mut crowd = Crowd::new(&ctx, n);
        crowd.pose(0.3);
        let mut renderer =
            Renderer::new(&ctx, RendererSettings { gpu_timing: true, ..Default::default() }).unwrap();
        let target = renderer.create_target(256, 256);
        match gpu_time(&ctx, &mut renderer, &mut crowd, &target) {
            Some(ms) => println!("render/gpu_frame/{n}: median {ms:.3} ms (timestamp queries, 5 frames)"),
            None => {
                println!("render/gpu_frame/{n}: timestamp queries not supported by {}", ctx.describe());
                return;
            }
        }
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    frame_cpu(&mut c);
    gpu_times();
    c.final_summary();
}
