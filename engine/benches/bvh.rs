//! BVH import benchmark: `cargo bench -p marrow-engine --bench bvh`.
//!
//! Imports a 1,000-frame, 31-joint capture-shaped BVH (`synthetic::mocap_bvh`: the CMU rig,
//! 96 channels, 120 Hz), generated in memory once, from its bytes each iteration: parsing,
//! the skeleton, the clip's 32 tracks and the stick mesh (target: under 50 ms).

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use marrow_engine::bvh::{BvhOptions, import_slice};

fn bench(c: &mut Criterion) {
    let text = marrow_engine::synthetic::mocap_bvh(1000, 120.0, 1);
    let options = BvhOptions { scale: 0.01, ..BvhOptions::default() };
    c.bench_function("import/bvh_1000_frames_31_joints", |b| {
        b.iter(|| import_slice(black_box(text.as_bytes()), Path::new("capture.bvh"), &options).unwrap())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
