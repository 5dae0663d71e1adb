//! CPU skinning benchmarks: `cargo bench -p marrow-engine --bench skinning`.
//!
//! 10k, 100k and 1M vertices, four influences each (all weights non-zero) over a 64-joint palette;
//! positions only, positions + normals, and positions + normals + tangents (the tangents from a
//! generator of their own, so the other inputs are the same as without them). Throughput is in
//! vertices, so criterion's time per element is the ns/vertex figure. `rayon/...` ids split the
//! same job over the cores.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use glam::{Mat4, Quat, Vec3};
use marrow_engine::skinning::SkinningJob;
use rayon::prelude::*;

struct Data {
    palette: Vec<Mat4>,
    joints: Vec<[u16; 4]>,
    weights: Vec<[f32; 4]>,
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
}

/// A xorshift stream of floats in [0, 1) from `seed`.
fn xorshift(mut seed: u64) -> impl FnMut() -> f32 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 40) as f32 / (1u64 << 24) as f32
    }
}

fn data(n: usize) -> Data {
    let mut next = xorshift(0x9E3779B97F4A7C15);
    let palette = (0..64)
        .map(|i| {
            Mat4::from_scale_rotation_translation(
                Vec3::ONE,
                Quat::from_rotation_y(i as f32 * 0.1),
                Vec3::new(i as f32, 0.5, -1.0),
            )
        })
        .collect();
    let mut joints = Vec::with_capacity(n);
    let mut weights = Vec::with_capacity(n);
    let mut positions = Vec::with_capacity(n);
    let mut normals = Vec::with_capacity(n);
    for _ in 0..n {
        let j0 = (next() * 60.0) as u16;
        joints.push([j0, j0 + 1, j0 + 2, j0 + 3]);
        let w = [0.4 + next() * 0.1, 0.3, 0.2, 0.0];
        let rest = 1.0 - w[0] - w[1] - w[2];
        weights.push([w[0], w[1], w[2], rest]);
        positions.push([next(), next() * 2.0, next()]);
        normals.push(Vec3::new(next() - 0.5, 1.0, next() - 0.5).normalize().to_array());
    }
    Data { palette, joints, weights, positions, normals }
}

/// `n` unit tangents at right angles to nothing in particular (their own xorshift stream), the
/// handedness alternating.
fn tangents(n: usize) -> Vec<[f32; 4]> {
    let mut next = xorshift(0x2545F4914F6CDD1D);
    (0..n)
        .map(|i| {
            let t = Vec3::new(1.0, next() - 0.5, next() - 0.5).normalize();
            [t.x, t.y, t.z, if i % 2 == 0 { 1.0 } else { -1.0 }]
        })
        .collect()
}

fn skin(
    d: &Data,
    range: std::ops::Range<usize>,
    out_p: &mut [[f32; 3]],
    out_n: &mut [[f32; 3]],
    normals: bool,
) {
    SkinningJob {
        palette: &d.palette,
        joints: &d.joints[range.clone()],
        weights: &d.weights[range.clone()],
        positions: &d.positions[range.clone()],
        normals: if normals { &d.normals[range] } else { &[] },
        tangents: &[],
        out_positions: out_p,
        out_normals: if normals { out_n } else { &mut [] },
        out_tangents: &mut [],
    }
    .run()
    .unwrap();
}

fn bench(c: &mut Criterion) {
    // Every figure of this run is at this level (BENCHMARKS.md states it; MARROW_SIMD lowers it).
    eprintln!("SIMD level: {} (CPU: {})", marrow_engine::simd::level(), marrow_engine::simd::detected());
    let mut g = c.benchmark_group("skinning");
    for n in [10_000usize, 100_000, 1_000_000] {
        let d = data(n);
        let mut out_p = vec![[0.0f32; 3]; n];
        let mut out_n = vec![[0.0f32; 3]; n];
        g.throughput(Throughput::Elements(n as u64));
        g.bench_with_input(BenchmarkId::new("positions", n), &n, |b, &n| {
            b.iter(|| skin(black_box(&d), 0..n, &mut out_p, &mut out_n, false))
        });
        g.bench_with_input(BenchmarkId::new("positions+normals", n), &n, |b, &n| {
            b.iter(|| skin(black_box(&d), 0..n, &mut out_p, &mut out_n, true))
        });
        let tangents = tangents(n);
        let mut out_t = vec![[0.0f32; 4]; n];
        g.bench_with_input(BenchmarkId::new("positions+normals+tangents", n), &n, |b, _| {
            b.iter(|| {
                SkinningJob {
                    palette: &d.palette,
                    joints: &d.joints,
                    weights: &d.weights,
                    positions: &d.positions,
                    normals: &d.normals,
                    tangents: black_box(&tangents),
                    out_positions: &mut out_p,
                    out_normals: &mut out_n,
                    out_tangents: &mut out_t,
                }
                .run()
                .unwrap()
            })
        });
        g.bench_with_input(BenchmarkId::new("rayon/positions", n), &n, |b, _| {
            b.iter(|| {
                const CHUNK: usize = 8192;
                out_p.par_chunks_mut(CHUNK).enumerate().for_each(|(i, o)| {
                    let start = i * CHUNK;
                    skin(&d, start..start + o.len(), o, &mut [], false);
                })
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
