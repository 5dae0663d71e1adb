//! Particle skinning benchmarks: `cargo bench -p marrow-engine --bench particles`.
//!
//! 100k points scattered around a 64-bone rig (`synthetic::chain_skeleton`), bound with a falloff
//! band (so most particles near a joint have two influences); posing at a sampled pose, positions
//! only and positions + normals, on one thread and on rayon's pool; one spring step. Throughput is
//! in particles, so criterion's time per element is the ns/particle figure.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use marrow_engine::particles::{
    ParticleMatrices, ParticlePoseJob, ParticleSprings, SplitMix, SpringSettings, bind_nearest,
};
use marrow_engine::pose::{LocalToModelJob, SamplingContext, SamplingJob};
use marrow_engine::synthetic::{chain_skeleton, dense_clip};

const N: usize = 100_000;

fn bench(c: &mut Criterion) {
    let sk = chain_skeleton(64);
    let mut rng = SplitMix::new(11);
    // Points around the rig's bones (chains of 0.1-unit bones fanning out from the root).
    let points: Vec<[f32; 3]> = (0..N).map(|_| [0; 3].map(|_: i32| (rng.next_f32() - 0.5) * 1.6)).collect();
    let normals: Vec<[f32; 3]> =
        points.iter().map(|p| glam::Vec3::from(*p).normalize_or_zero().into()).collect();
    let mut g = c.benchmark_group("particles");
    g.throughput(Throughput::Elements(N as u64));
    g.sample_size(20);
    g.bench_function("bind/100000x64", |b| b.iter(|| black_box(bind_nearest(&points, &sk, 0.05))));
    let binding = bind_nearest(&points, &sk, 0.05);
    let two = binding.influences.iter().filter(|i| i.weight > 0.0).count();
    eprintln!("particles: {two} of {N} bound to two bones");
    let clip = dense_clip(&sk, "walk", 2.0, 30.0, 0);
    let mut local = sk.bind_pose.clone();
    SamplingJob {
        clip: &clip,
        bind_pose: &sk.bind_pose,
        time: 0.7,
        context: &mut SamplingContext::new(64),
        output: &mut local,
    }
    .run()
    .unwrap();
    let mut model = vec![glam::Mat4::IDENTITY; 64];
    LocalToModelJob { parents: &sk.parents, local: &local, adjusts: &[], output: &mut model }.run().unwrap();
    let mut m = ParticleMatrices::new(&sk);
    m.update(glam::Mat4::IDENTITY, &model, &sk);
    let mut pos = vec![[0.0f32; 3]; N];
    let mut nor = vec![[0.0f32; 3]; N];
    // (id, with normals, on rayon's pool)
    for (id, with_normals, parallel) in [
        ("pose/positions/100000", false, false),
        ("pose/positions+normals/100000", true, false),
        ("rayon/pose/positions/100000", false, true),
        ("rayon/pose/positions+normals/100000", true, true),
    ] {
        let rest_normals: &[[f32; 3]] = if with_normals { &normals } else { &[] };
        g.bench_function(id, |b| {
            b.iter(|| {
                let job = ParticlePoseJob {
                    matrices: &m,
                    binding: &binding,
                    rest_positions: &points,
                    rest_normals,
                    positions: &mut pos,
                    normals: if with_normals { &mut nor } else { &mut [] },
                };
                if parallel { job.run_parallel() } else { job.run() }.unwrap()
            })
        });
    }
    g.bench_function("matrices/64", |b| b.iter(|| m.update(glam::Mat4::IDENTITY, black_box(&model), &sk)));
    let mut springs = ParticleSprings::new(&pos);
    let groups: Vec<u32> = (0..N as u32).map(|i| i % 3).collect();
    g.bench_function("spring_step/100000", |b| {
        b.iter(|| {
            springs.step(&pos, SpringSettings::default(), &groups, &[1.0, 0.5, 4.0], 1.0 / 60.0).unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
