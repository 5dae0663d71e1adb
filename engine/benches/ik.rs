//! IK job benchmarks: `cargo bench -p marrow-engine --bench ik`.
//!
//! `ik/two_bone/chain`: one iteration is one two-bone chain solved (`TwoBoneIkJob::run`, validation included): a leg
//! (hip, knee, ankle) with 64 targets in turn around it, inside and beyond reach, so the
//! straight, bent and softened cases all run. The CPU's SIMD level does not matter here: the job
//! is scalar glam code. `ik/aim/joint`: one head aimed (`AimJob::run`) from an eye offset at 64
//! targets in turn, with its up axis toward a pole and yaw and pitch limits. Target (#27): at most
//! 60 ns per chain or joint on one thread.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use glam::{Mat4, Quat, Vec3};
use marrow_engine::ik::{AimJob, AimLimits, TwoBoneIkJob};

fn bench(c: &mut Criterion) {
    let hip = Mat4::from_rotation_translation(Quat::from_rotation_x(-0.2), Vec3::new(0.1, 1.0, 0.0));
    let knee = hip * Mat4::from_rotation_translation(Quat::from_rotation_x(0.4), Vec3::new(0.0, -0.45, 0.0));
    let ankle = knee * Mat4::from_translation(Vec3::new(0.0, -0.42, 0.0));
    let targets: Vec<Vec3> = (0..64)
        .map(|i| {
            let a = i as f32 * 0.7;
            Vec3::new(0.1 + 0.3 * a.cos(), 1.0 - 0.2 * (i % 7) as f32, 0.3 * a.sin())
        })
        .collect();
    let mut i = 0;
    c.bench_function("ik/two_bone/chain", |b| {
        b.iter(|| {
            i = (i + 1) % targets.len();
            let (mut start, mut mid, mut reached) = (Quat::IDENTITY, Quat::IDENTITY, false);
            TwoBoneIkJob {
                start: black_box(&hip),
                mid: black_box(&knee),
                end: black_box(&ankle),
                target: black_box(targets[i]),
                pole: Vec3::Z,
                mid_axis: Vec3::X,
                weight: 1.0,
                soften: 0.95,
                twist: 0.0,
                start_correction: &mut start,
                mid_correction: &mut mid,
                reached: &mut reached,
            }
            .run()
            .expect("valid");
            black_box((start, mid, reached))
        })
    });
    let head = Mat4::from_rotation_translation(Quat::from_rotation_y(0.3), Vec3::new(0.0, 1.6, 0.0));
    let mut k = 0;
    c.bench_function("ik/aim/joint", |b| {
        b.iter(|| {
            k = (k + 1) % targets.len();
            let (mut correction, mut reached) = (Quat::IDENTITY, false);
            AimJob {
                joint: black_box(&head),
                target: black_box(targets[k] * 4.0 + Vec3::Z),
                forward: Vec3::Z,
                offset: Vec3::new(0.0, 0.08, 0.1),
                up: Vec3::Y,
                pole: Vec3::Y,
                twist: 0.0,
                limits: AimLimits { yaw: 1.2, pitch: 0.6 },
                weight: 1.0,
                correction: &mut correction,
                reached: &mut reached,
            }
            .run()
            .expect("valid");
            black_box((correction, reached))
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
