//! Crowd benchmarks: `cargo bench -p marrow-engine --features render --bench crowd`.
//!
//! - `crowd/bake/4x60x64`: baking 4 clips x 60 frames of a 64-joint rig (`synthetic`).
//! - `crowd/cpu_frame/N`: the CPU side of one frame of a playing crowd of N instances of
//!   CesiumMan's walk (19 joints, baked at 60 frames): refilling the frame (camera, crowd time,
//!   one draw per primitive) plus culling and encoding the shadow, depth and forward passes
//!   (`Renderer::encode`). The crowd data is already on the GPU (its version does not move), so
//!   nothing but the frame uniform is uploaded. The submit and the GPU's work are outside the
//!   timed region: on lavapipe the "GPU" is these same CPU cores, and its work lands in submit. The CPU side does
//!   not depend on the mesh, so the CPU benchmarks draw each instance as one skinned triangle
//!   (lavapipe rasterizes on these same 2 cores: 100,000 CesiumMen would take minutes a frame).
//! - `crowd/cpu_frame_culled/N`: the same with the camera turned away and shadows off (the draw
//!   culled): the CPU path alone, with lavapipe idle.
//! - `crowd/upload/N`: the same frame when the crowd changed (its version moved): the instance
//!   buffer (64 bytes an instance) and the table are uploaded.
//! - `crowd/palette_per_character/N`: the same crowd drawn the existing way, one palette per
//!   character: each character's palette from the baked table on the CPU (`palette_at`), packed,
//!   one draw object each, uploaded every frame.
//!
//! Afterwards, GPU time per frame from timestamp queries is printed for 1k and 10k instances of
//! RiggedFigure (19 joints, 370 vertices) where the adapter has them, and the table's bytes.
//! Targets are 256x256 with a 1024 shadow map.

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion};
use marrow_engine::clip::Clip;
use marrow_engine::crowd::layout::{Layout, Placement, place};
use marrow_engine::crowd::{BakeJob, BakedPoses};
use marrow_engine::glam::Mat4;
use marrow_engine::gltf::{ImportedScene, import};
use marrow_engine::render::crowd::{CrowdMesh, crowd_bounds, crowd_data};
use marrow_engine::render::{
    Camera, CrowdData, DrawObject, FrameData, FrameStats, GpuContext, MeshData, MeshPool, RenderTarget,
    Renderer, RendererSettings, test_device,
};
use marrow_engine::skinning::Aabb;
use marrow_engine::synthetic::{chain_skeleton, dense_clip};

struct Crowd {
    scene: ImportedScene,
    pool: MeshPool,
    member: CrowdMesh,
    baked: BakedPoses,
    placements: Vec<Placement>,
    data: Arc<CrowdData>,
    bounds: Aabb,
    frame: FrameData,
}

impl Crowd {
    /// `n` instances of `model`'s first rig; `tiny`: each drawn as one skinned triangle.
    fn new(ctx: &GpuContext, n: u32, model: &str, tiny: bool) -> Self {
        let scene = import(support::gltf_dir().join(model)).unwrap();
        let mut pool = MeshPool::new();
        let mut member = CrowdMesh::upload(ctx, &mut pool, &scene).unwrap();
        if tiny {
            let triangle = pool
                .add(
                    &ctx.device,
                    &MeshData {
                        positions: &[[0.0, 0.0, 0.0], [0.1, 0.0, 0.0], [0.0, 0.1, 0.0]],
                        normals: &[[0.0, 0.0, 1.0]; 3],
                        skin: Some((&[[0, 1, 2, 3]; 3], &[[0.25; 4]; 3])),
                        ..Default::default()
                    },
                )
                .unwrap();
            member.meshes = vec![triangle];
        }
        let clip = &scene.animations[0].clips[0].clip;
        let baked = BakeJob { skeleton: &scene.rigs[0].skeleton, clips: &[clip], frames: 60 }.run().unwrap();
        let placements: Vec<Placement> = place(n, 1, Layout::Grid { spacing: 1.6 }, (0.8, 1.25), 1)
            .into_iter()
            .map(|p| Placement { world: p.world * member.rest_world, ..p })
            .collect();
        let bounds = crowd_bounds(baked.bounds(&member.bone_boxes).unwrap(), &placements).unwrap();
        let data = Arc::new(crowd_data(&baked, &placements, &[], 1));
        Self { scene, pool, member, baked, placements, data, bounds, frame: FrameData::default() }
    }

    /// The frame of a playing crowd at `time` (what the timed part refills every frame).
    fn fill(&mut self, time: f32) {
        self.frame.clear();
        self.frame.camera = Camera::framing(self.bounds, 1.0);
        self.frame.crowd = Some(self.data.clone());
        self.frame.crowd_time = time;
        self.member.draws(self.placements.len() as u32, self.bounds, &mut self.frame.crowd_draws);
    }

    /// The same crowd as one palette per character (the existing skinned path).
    fn fill_palettes(&mut self, time: f32, version: u64) {
        self.frame.clear();
        self.frame.crowd = None;
        self.frame.camera = Camera::framing(self.bounds, 1.0);
        self.frame.palette_version = version;
        let bones = self.baked.bones as usize;
        let mut pal = vec![Mat4::IDENTITY; bones];
        for (i, p) in self.placements.iter().enumerate() {
            self.baked.palette_at(p.clip as usize, time, p.phase, p.speed, &mut pal);
            let offset = self.frame.palette.len() as u32;
            self.frame.palette.extend_from_slice(&pal);
            for &mesh in &self.member.meshes {
                let mut o = DrawObject::new(mesh, p.world);
                o.palette_offset = offset;
                o.bounds = Some(self.bounds);
                o.pick_id = i as u32 + 1;
                self.frame.objects.push(o);
            }
        }
    }
}

fn bake(c: &mut Criterion) {
    let sk = chain_skeleton(64);
    let clips: Vec<Clip> = (0..4).map(|v| dense_clip(&sk, &format!("clip{v}"), 2.0, 30.0, v)).collect();
    let refs: Vec<&Clip> = clips.iter().collect();
    let baked = BakeJob { skeleton: &sk, clips: &refs, frames: 60 }.run().unwrap();
    eprintln!("crowd/bake/4x60x64: table {} bytes ({} matrices)", baked.bytes(), baked.matrices.len());
    let mut g = c.benchmark_group("crowd/bake");
    g.sample_size(20);
    g.bench_function("4x60x64", |b| {
        b.iter(|| BakeJob { skeleton: &sk, clips: &refs, frames: 60 }.run().unwrap())
    });
    g.finish();
}

/// `iters` frames of `crowd`: `setup` (untimed), then `fill` and `Renderer::encode` (timed),
/// then the submit and a wait for the GPU (untimed). `check` sees each frame's stats.
#[allow(clippy::too_many_arguments)]
fn encode_timed(
    ctx: &GpuContext,
    renderer: &mut Renderer,
    crowd: &mut Crowd,
    target: &RenderTarget,
    iters: u64,
    mut setup: impl FnMut(&mut Crowd),
    mut fill: impl FnMut(&mut Crowd),
    check: impl Fn(&FrameStats),
) -> Duration {
    let mut total = Duration::ZERO;
    for _ in 0..iters {
        setup(crowd);
        let t0 = Instant::now();
        fill(crowd);
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        let stats = renderer.encode(&mut encoder, &crowd.pool, &crowd.frame, target).unwrap();
        total += t0.elapsed();
        check(&stats);
        ctx.queue.submit([encoder.finish()]);
        ctx.wait_idle();
    }
    total
}

fn frames(c: &mut Criterion) {
    let Some(ctx) = test_device() else { return };
    eprintln!("adapter: {}", ctx.describe());
    let mut group = c.benchmark_group("crowd");
    group.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2));
    for n in [1_000u32, 10_000, 100_000] {
        let mut crowd = Crowd::new(&ctx, n, "CesiumMan/CesiumMan.glb", true);
        eprintln!(
            "crowd/{n}: table {} bytes, instances {} bytes, {} draw(s) per pass",
            crowd.baked.bytes(),
            crowd.data.instances.len() * 64,
            crowd.member.meshes.len()
        );
        let mut renderer = Renderer::new(&ctx, RendererSettings::default()).unwrap();
        let target = renderer.create_target(256, 256);
        crowd.fill(0.0);
        renderer.render(&crowd.pool, &crowd.frame, &target).unwrap();
        ctx.wait_idle();
        let mut t = 0.0f32;
        group.bench_function(BenchmarkId::new("cpu_frame", n), |b| {
            b.iter_custom(|iters| {
                let fill = |c: &mut Crowd| {
                    t += 1.0 / 60.0;
                    c.fill(t)
                };
                encode_timed(
                    &ctx,
                    &mut renderer,
                    &mut crowd,
                    &target,
                    iters,
                    |_| {},
                    fill,
                    |s| assert_eq!(s.crowd_bytes, 0, "a playing crowd uploads nothing"),
                )
            })
        });
        // The same frame with the camera turned away (the draw culled, the GPU idle): what the
        // CPU path costs when lavapipe's rasterizer is not sharing the cores and caches.
        group.bench_function(BenchmarkId::new("cpu_frame_culled", n), |b| {
            b.iter_custom(|iters| {
                let fill = |c: &mut Crowd| {
                    t += 1.0 / 60.0;
                    c.fill(t);
                    c.frame.camera.target = c.frame.camera.eye * 2.0;
                    c.frame.shadows = false;
                };
                let total = encode_timed(
                    &ctx,
                    &mut renderer,
                    &mut crowd,
                    &target,
                    iters,
                    |_| {},
                    fill,
                    |s| assert_eq!(s.crowd_instances, 0, "culled"),
                );
                crowd.frame.shadows = true;
                total
            })
        });
        let mut version = 1;
        group.bench_function(BenchmarkId::new("upload", n), |b| {
            b.iter_custom(|iters| {
                // The crowd changed (untimed): its version moves, so the frame uploads it.
                let change = |c: &mut Crowd| {
                    version += 1;
                    Arc::make_mut(&mut c.data).version = version;
                };
                encode_timed(
                    &ctx,
                    &mut renderer,
                    &mut crowd,
                    &target,
                    iters,
                    change,
                    |c| c.fill(0.5),
                    |s| assert!(s.crowd_bytes > 0),
                )
            })
        });
        if n <= 1_000 {
            for m in [100u32, 1_000] {
                let mut small = Crowd::new(&ctx, m, "CesiumMan/CesiumMan.glb", true);
                let mut v = 1;
                group.bench_function(BenchmarkId::new("palette_per_character", m), |b| {
                    b.iter_custom(|iters| {
                        let fill = |c: &mut Crowd| {
                            v += 1;
                            c.fill_palettes(0.5 + v as f32 * 0.01, v)
                        };
                        encode_timed(&ctx, &mut renderer, &mut small, &target, iters, |_| {}, fill, |_| {})
                    })
                });
            }
        }
    }
    group.finish();
}

fn gpu_times() {
    let Some(ctx) = test_device() else { return };
    for n in [1_000u32, 10_000] {
        let mut crowd = Crowd::new(&ctx, n, "RiggedFigure/RiggedFigure.glb", false);
        let mut renderer =
            Renderer::new(&ctx, RendererSettings { gpu_timing: true, ..Default::default() }).unwrap();
        let target = renderer.create_target(256, 256);
        let mut samples = Vec::new();
        for k in 0..6 {
            crowd.fill(k as f32 * 0.1);
            renderer.render(&crowd.pool, &crowd.frame, &target).unwrap();
            match renderer.last_gpu_time_ms() {
                Some(ms) => samples.push(ms),
                None => {
                    println!("crowd/gpu_frame/{n}: timestamp queries not supported by {}", ctx.describe());
                    return;
                }
            }
        }
        samples.sort_by(f64::total_cmp);
        println!(
            "crowd/gpu_frame/{n}: median {:.3} ms (timestamp queries, 6 frames)",
            samples[samples.len() / 2]
        );
        let _ = &crowd.scene;
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    bake(&mut c);
    frames(&mut c);
    gpu_times();
    c.final_summary();
}
