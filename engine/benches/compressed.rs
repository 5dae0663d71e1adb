//! Compressed clip benchmarks: `cargo bench -p marrow-engine --bench compressed`.
//!
//! Two clips: the CMU capture in the repository (`assets/bvh/cmu_131_01.bvh`: 31 joints, 994
//! frames at 120 Hz, metres) and the 64-joint synthetic dense clip of `pose/*` (T, R and S keyed
//! at 30 Hz for 2 s). Each is sampled in its three runtime forms: the compiled key blocks at full
//! precision, at compact precision, and the compressed form at ACL's default error (0.01 cm at
//! a 3 cm shell). Forward: one sample per iteration, the playhead advancing 1/60 s and wrapping
//! at the end. Seek: one sample per iteration at a time drawn from a fixed scramble of the clip
//! (every sample a jump). Sampling only: no blending, composition or palette.

use std::hint::black_box;
use std::path::Path;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use marrow_engine::bvh::{self, BvhOptions, EndSites};
use marrow_engine::clip::Clip;
use marrow_engine::compiled_clip::Precision;
use marrow_engine::compressed::{CompressOptions, CompressedClip, CompressedContext, CompressedSamplingJob};
use marrow_engine::math::Transform;
use marrow_engine::pose::{SamplingContext, SamplingJob};
use marrow_engine::skeleton::Skeleton;
use marrow_engine::synthetic::{chain_skeleton, dense_clip};

const DT: f32 = 1.0 / 60.0;

/// Times for the seek benchmarks: 997 times across the clip, visited in a scrambled order.
fn scrambled(duration: f32) -> Vec<f32> {
    (0..997).map(|k| ((k * 389) % 997) as f32 / 997.0 * duration).collect()
}

fn clips() -> Vec<(&'static str, Skeleton, Clip)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/bvh/cmu_131_01.bvh");
    let scene = bvh::import(&path, &BvhOptions { scale: 0.0254, end_sites: EndSites::Drop }).unwrap();
    let cmu = (scene.rigs[0].skeleton.clone(), scene.animations[0].clips[0].clip.clone());
    let sk = chain_skeleton(64);
    let dense = dense_clip(&sk, "a", 2.0, 30.0, 0);
    vec![("cmu31", cmu.0, cmu.1), ("dense64", sk, dense)]
}

/// `NAME/FORM_forward` (the playhead advancing 1/60 s, wrapping at `duration`) and
/// `NAME/FORM_seek` (a scrambled time each sample), both through `sample`.
fn forward_and_seek(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    form: &str,
    n: usize,
    duration: f32,
    mut sample: impl FnMut(f32),
) {
    let mut t = 0.0f32;
    g.bench_function(BenchmarkId::new(format!("{name}/{form}_forward"), n), |b| {
        b.iter(|| {
            t = (t + DT) % duration;
            sample(t);
        })
    });
    let times = scrambled(duration);
    let mut k = 0usize;
    g.bench_function(BenchmarkId::new(format!("{name}/{form}_seek"), n), |b| {
        b.iter(|| {
            k = (k + 1) % times.len();
            sample(times[k]);
        })
    });
}

fn compressed(c: &mut Criterion) {
    eprintln!("SIMD level: {} (CPU: {})", marrow_engine::simd::level(), marrow_engine::simd::detected());
    let mut g = c.benchmark_group("compressed");
    for (name, sk, clip) in clips() {
        let n = sk.bone_count();
        let d = clip.duration();
        g.throughput(Throughput::Elements(n as u64));
        let (packed, r) = CompressedClip::compress(&clip, &sk, &CompressOptions::default()).unwrap();
        let mut compact = clip.clone();
        compact.set_precision(Precision::Compact);
        eprintln!(
            "{name}: raw {} B, authored {} B, compiled full {} B, compact {} B, compressed {} B ({:.2}:1 against raw), worst shell error {:e} at bone {:?} t={:.4} s, {:.2} bits per value",
            r.raw_bytes,
            clip.bytes(),
            clip.compiled().bytes(),
            compact.compiled().bytes(),
            r.bytes,
            r.ratio(),
            r.max_error,
            r.worst_bone.map(|b| sk.bone_names[b].clone()),
            r.worst_time,
            r.mean_bits
        );
        for (form, c) in [("full", &clip), ("compact", &compact)] {
            let mut ctx = SamplingContext::new(n);
            ctx.prepare(c);
            let mut out = vec![Transform::IDENTITY; n];
            forward_and_seek(&mut g, name, form, n, d, |t| {
                SamplingJob {
                    clip: c,
                    bind_pose: &sk.bind_pose,
                    time: t,
                    context: &mut ctx,
                    output: &mut out,
                }
                .run()
                .unwrap();
                black_box(&out);
            });
        }
        let mut ctx = CompressedContext::new(n);
        let mut out = vec![Transform::IDENTITY; n];
        forward_and_seek(&mut g, name, "compressed", n, d, |t| {
            CompressedSamplingJob {
                clip: &packed,
                bind_pose: &sk.bind_pose,
                time: t,
                context: &mut ctx,
                output: &mut out,
            }
            .run()
            .unwrap();
            black_box(&out);
        });
    }
    g.finish();
}

criterion_group!(benches, compressed);
criterion_main!(benches);
