//! Pose benchmarks: `cargo bench -p marrow-engine --bench pose`.
//!
//! Synthetic skeletons of 64, 80 and 256 joints (a root plus chains of 8) and dense clips with
//! T, R and S keyed at 30 Hz for 2 s. Each iteration is one frame of one character.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use glam::Mat4;
use marrow_engine::clip::Clip;
use marrow_engine::compiled_clip::Precision;
use marrow_engine::math::Transform;
use marrow_engine::pose::{
    BlendLayer, BlendingJob, LocalToModelJob, PaletteJob, SamplingContext, SamplingJob,
};
use marrow_engine::skeleton::Skeleton;
use marrow_engine::synthetic::{chain_skeleton, dense_clip};
use marrow_engine::track::{Animatable, Interpolation, Track};
use rayon::prelude::*;

const DT: f32 = 1.0 / 60.0;

/// One sampling job (the benchmarks' unit of work).
fn sample(sk: &Skeleton, clip: &Clip, time: f32, context: &mut SamplingContext, output: &mut [Transform]) {
    SamplingJob { clip, bind_pose: &sk.bind_pose, time, context, output }.run().unwrap();
}

/// The fade blend every benchmark uses: 30% `a`, 70% `b`.
fn blend(sk: &Skeleton, a: &[Transform], b: &[Transform], output: &mut [Transform]) {
    BlendingJob {
        layers: &[
            BlendLayer { pose: a, weight: 0.3, mask: None },
            BlendLayer { pose: b, weight: 0.7, mask: None },
        ],
        rest_pose: &sk.bind_pose,
        threshold: 1e-6,
        output,
    }
    .run()
    .unwrap();
}

/// One character's buffers and playheads.
struct Character {
    t: f32,
    ctx_a: SamplingContext,
    ctx_b: SamplingContext,
    a: Vec<Transform>,
    b: Vec<Transform>,
    local: Vec<Transform>,
    model: Vec<Mat4>,
    palette: Vec<Mat4>,
}

impl Character {
    fn new(n: usize, t: f32) -> Self {
        Self {
            t,
            ctx_a: SamplingContext::new(n),
            ctx_b: SamplingContext::new(n),
            a: vec![Transform::IDENTITY; n],
            b: vec![Transform::IDENTITY; n],
            local: vec![Transform::IDENTITY; n],
            model: vec![Mat4::IDENTITY; n],
            palette: vec![Mat4::IDENTITY; n],
        }
    }

    /// Readies the two heads for clips `a` and `b`, as players do when a clip starts playing
    /// (compiled; stream slots sized, none for clips made only of key blocks).
    fn ready(mut self, a: &Clip, b: &Clip) -> Self {
        self.ctx_a.prepare(a);
        self.ctx_b.prepare(b);
        self
    }

    /// Advances the playhead (`duration` is derived once per clip, as the Animator caches it).
    fn tick(&mut self, duration: f32) -> f32 {
        self.t = (self.t + DT) % duration;
        self.t
    }

    /// Two samples + blend + compose + palette.
    fn full(&mut self, sk: &Skeleton, a: &Clip, b: &Clip, da: f32) {
        let t = self.tick(da);
        sample(sk, a, t, &mut self.ctx_a, &mut self.a);
        sample(sk, b, t, &mut self.ctx_b, &mut self.b);
        blend(sk, &self.a, &self.b, &mut self.local);
        self.compose(sk);
    }

    /// One sample + compose + palette (a playing character without a fade).
    fn single(&mut self, sk: &Skeleton, a: &Clip, da: f32) {
        let t = self.tick(da);
        sample(sk, a, t, &mut self.ctx_a, &mut self.local);
        self.compose(sk);
    }

    fn compose(&mut self, sk: &Skeleton) {
        LocalToModelJob { parents: &sk.parents, local: &self.local, adjusts: &[], output: &mut self.model }
            .run()
            .unwrap();
        PaletteJob { model: &self.model, inverse_bind: &sk.inverse_bind, output: &mut self.palette }
            .run()
            .unwrap();
    }
}

/// `clip` with every track's key times (after the first) nudged by its own few microseconds, so
/// no two tracks share a key-time array: every track samples loose, through its own cursor,
/// instead of in a key block. The fallback's cost, measured.
fn unshared(clip: &Clip) -> Clip {
    fn nudge<T: Animatable>(t: &mut Option<Track<T>>, slot: usize) {
        if let Some(tr) = t {
            let times: Vec<f32> = tr
                .times()
                .iter()
                .enumerate()
                .map(|(k, &x)| if k == 0 { x } else { x + (slot + 1) as f32 * 1e-5 })
                .collect();
            *tr = Track::from_keys(Interpolation::Linear, times, tr.values().to_vec()).unwrap();
        }
    }
    let mut c = clip.clone();
    for (b, ch) in c.channels_mut().iter_mut().enumerate() {
        nudge(&mut ch.translation, 3 * b);
        nudge(&mut ch.rotation, 3 * b + 1);
        nudge(&mut ch.scale, 3 * b + 2);
    }
    assert!(c.compiled().blocks().is_empty());
    c
}

fn rig(n: usize) -> (Skeleton, Clip, Clip) {
    let sk = chain_skeleton(n);
    let a = dense_clip(&sk, "a", 2.0, 30.0, 0);
    let b = dense_clip(&sk, "b", 2.0, 30.0, 1);
    // As players do when a clip starts playing.
    a.compiled();
    b.compiled();
    (sk, a, b)
}

fn pose(c: &mut Criterion) {
    // Every figure of this run is at this level (BENCHMARKS.md states it; MARROW_SIMD lowers it).
    eprintln!("SIMD level: {} (CPU: {})", marrow_engine::simd::level(), marrow_engine::simd::detected());
    let mut g = c.benchmark_group("pose");
    for n in [64usize, 80, 256] {
        let (sk, a, b) = rig(n);
        let da = a.duration();
        g.throughput(Throughput::Elements(n as u64));
        let mut ch = Character::new(n, 0.0).ready(&a, &b);
        g.bench_function(BenchmarkId::new("sample_forward", n), |bench| {
            bench.iter(|| {
                let t = ch.tick(da);
                sample(&sk, &a, t, &mut ch.ctx_a, &mut ch.local);
                black_box(&ch.local);
            })
        });
        let mut ch = Character::new(n, 0.0).ready(&a, &b);
        g.bench_function(BenchmarkId::new("full_forward", n), |bench| {
            bench.iter(|| {
                ch.full(&sk, &a, &b, da);
                black_box(&ch.palette);
            })
        });
        if n != 64 {
            continue;
        }
        // Key-reduced clips (`Clip::simplify` at 0.03 model units: each track keeps its own key
        // times): the shape of hand-keyed and optimised animation.
        let (ra, report) = a.simplify(&sk, 0.03);
        let (rb, _) = b.simplify(&sk, 0.03);
        ra.compiled();
        rb.compiled();
        eprintln!(
            "clip bytes (64 joints, 2 s at 30 Hz): dense authored {} + compiled {}, reduced authored {} + compiled {}",
            a.bytes(),
            a.compiled().bytes(),
            ra.bytes(),
            ra.compiled().bytes()
        );
        eprintln!(
            "pose/*_reduced/64: {} of {} keys kept ({:.0}%), largest bone-origin error {:.4}",
            report.keys_after,
            report.keys_before,
            100.0 * report.keys_after as f32 / report.keys_before as f32,
            report.max_error
        );
        let (dense_head, reduced_head) =
            (Character::new(n, 0.0).ready(&a, &b), Character::new(n, 0.0).ready(&ra, &rb));
        eprintln!(
            "sampling context bytes per head (64 joints): dense clip {}, reduced clip {} ({} stream tracks, {} stream keys of {} B)",
            dense_head.ctx_a.bytes(),
            reduced_head.ctx_a.bytes(),
            ra.compiled().stream_track_count(),
            ra.compiled().stream_key_count(),
            ra.compiled().stream_key_bytes(),
        );
        let mut ch = Character::new(n, 0.0).ready(&ra, &rb);
        g.bench_function(BenchmarkId::new("sample_forward_reduced", n), |bench| {
            bench.iter(|| {
                let t = ch.tick(da);
                sample(&sk, &ra, t, &mut ch.ctx_a, &mut ch.local);
                black_box(&ch.local);
            })
        });
        let mut ch = Character::new(n, 0.0).ready(&ra, &rb);
        g.bench_function(BenchmarkId::new("full_forward_reduced", n), |bench| {
            bench.iter(|| {
                ch.full(&sk, &ra, &rb, da);
                black_box(&ch.palette);
            })
        });
        // The same dense clips with compact key blocks (half-float translations and scales,
        // 16-bit rotation components).
        let (mut ca, mut cb) = (a.clone(), b.clone());
        ca.set_precision(Precision::Compact);
        cb.set_precision(Precision::Compact);
        eprintln!(
            "compact dense clip: compiled {} bytes (full {})",
            ca.compiled().bytes(),
            a.compiled().bytes()
        );
        let mut ch = Character::new(n, 0.0).ready(&ca, &cb);
        g.bench_function(BenchmarkId::new("sample_forward_compact", n), |bench| {
            bench.iter(|| {
                let t = ch.tick(da);
                sample(&sk, &ca, t, &mut ch.ctx_a, &mut ch.local);
                black_box(&ch.local);
            })
        });
        let mut ch = Character::new(n, 0.0).ready(&ca, &cb);
        g.bench_function(BenchmarkId::new("full_forward_compact", n), |bench| {
            bench.iter(|| {
                ch.full(&sk, &ca, &cb, da);
                black_box(&ch.palette);
            })
        });
        let loose = unshared(&a);
        let mut ch = Character::new(n, 0.0).ready(&loose, &loose);
        g.bench_function(BenchmarkId::new("sample_forward_unshared", n), |bench| {
            bench.iter(|| {
                let t = ch.tick(da);
                sample(&sk, &loose, t, &mut ch.ctx_a, &mut ch.local);
                black_box(&ch.local);
            })
        });
        // Random times: a fixed pseudo-random sequence (xorshift) over the clip.
        let mut ch = Character::new(n, 0.0);
        let mut state = 0x9E3779B9u32;
        g.bench_function(BenchmarkId::new("sample_seek", n), |bench| {
            bench.iter(|| {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                let t = (state as f32 / u32::MAX as f32) * a.duration();
                sample(&sk, &a, t, &mut ch.ctx_a, &mut ch.local);
                black_box(&ch.local);
            })
        });
        let mut ch = Character::new(n, 0.5);
        ch.full(&sk, &a, &b, da);
        g.bench_function(BenchmarkId::new("blend2", n), |bench| {
            bench.iter(|| {
                blend(&sk, &ch.a, &ch.b, &mut ch.local);
                black_box(&ch.local);
            })
        });
        g.bench_function(BenchmarkId::new("compose", n), |bench| {
            bench.iter(|| {
                LocalToModelJob {
                    parents: &sk.parents,
                    local: &ch.local,
                    adjusts: &[],
                    output: &mut ch.model,
                }
                .run()
                .unwrap();
                black_box(&ch.model);
            })
        });
        g.bench_function(BenchmarkId::new("palette", n), |bench| {
            bench.iter(|| {
                PaletteJob { model: &ch.model, inverse_bind: &sk.inverse_bind, output: &mut ch.palette }
                    .run()
                    .unwrap();
                black_box(&ch.palette);
            })
        });
    }

    // Crowds: 1000 characters of 64 joints at staggered times, one frame per iteration.
    let (sk, a, _) = rig(64);
    let da = a.duration();
    let mut crowd: Vec<Character> =
        (0..1000).map(|i| Character::new(64, i as f32 * 0.0137 % 2.0).ready(&a, &a)).collect();
    g.throughput(Throughput::Elements(64 * 1000));
    g.bench_function("crowd/1000x64", |bench| {
        bench.iter(|| {
            for ch in crowd.iter_mut() {
                ch.single(&sk, &a, da);
            }
            black_box(&crowd[0].palette);
        })
    });
    g.bench_function("crowd_par/1000x64", |bench| {
        bench.iter(|| {
            crowd.par_iter_mut().for_each(|ch| ch.single(&sk, &a, da));
            black_box(&crowd[0].palette);
        })
    });
    g.finish();
}

criterion_group!(benches, pose);
criterion_main!(benches);
