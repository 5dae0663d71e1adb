//! Retargeting benchmark: `cargo bench -p marrow-engine --bench retarget`.
//!
//! A 1,000-frame capture-shaped clip on the CMU 31-joint rig (`synthetic::mocap_like_clip`:
//! every joint's rotation and the root's translation keyed at 120 Hz, 32,000 keys) retargeted
//! onto a rig with other names and other rest rotations (every bone's rest turned 10 degrees,
//! so no bone takes the copy path: every bone is computed at every key). Measured: compiling the
//! auto-mapped plan, and retargeting the clip with a compiled plan (target: under 10 ms).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use glam::Quat;
use marrow_engine::retarget::{RetargetPlan, auto_map};
use marrow_engine::synthetic::{mocap_like_clip, mocap_skeleton};

fn bench(c: &mut Criterion) {
    let source = mocap_skeleton();
    let clip = mocap_like_clip(&source, "capture", 1000, 120.0, 3);
    let mut target = source.clone();
    target.name = "other".into();
    for (name, rest) in target.bone_names.iter_mut().zip(target.bind_pose.iter_mut()) {
        *name = format!("rig:{name}");
        rest.rotation = Quat::from_rotation_z(10f32.to_radians()) * rest.rotation;
    }
    let map = auto_map(&source, &target);
    assert_eq!(map.bones.len(), source.bone_count(), "every bone maps by role or name");
    c.bench_function("retarget/plan_31_joints", |b| {
        b.iter(|| RetargetPlan::new(black_box(&map), &source, &target).unwrap())
    });
    let plan = RetargetPlan::new(&map, &source, &target).unwrap();
    assert!(plan.copies().iter().all(|c| !c));
    c.bench_function("retarget/clip_1000_frames_31_joints", |b| {
        b.iter(|| plan.retarget_clip(black_box(&clip)).unwrap())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
