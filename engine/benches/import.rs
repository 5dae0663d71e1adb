//! glTF import benchmark: `cargo bench -p marrow-engine --bench import`.
//!
//! Imports CesiumMan (19 joints, 3273 vertices, 57 channels) from the repository's
//! `assets/gltf`, reading the file from disk each iteration.

#[path = "../tests/support/mod.rs"]
mod support;
use support::gltf_dir;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    let path = gltf_dir().join("CesiumMan/CesiumMan.glb");
    c.bench_function("import/CesiumMan", |b| {
        b.iter(|| marrow_engine::gltf::import(black_box(&path)).unwrap())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
