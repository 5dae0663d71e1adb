//! glTF import benchmark: `cargo bench -p marrow-engine --bench import`.
//!
//! Imports CesiumMan (19 joints, 3273 vertices, 57 channels) from `../shared/gltf` (override with
//! `MARROW_SHARED_DIR`), reading the file from disk each iteration.

use std::hint::black_box;
use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};

fn gltf_dir() -> PathBuf {
    let dir = match std::env::var_os("MARROW_SHARED_DIR") {
        Some(d) => {
            let d = PathBuf::from(d);
            if d.join("gltf").is_dir() { d.join("gltf") } else { d }
        }
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/gltf"),
    };
    assert!(
        dir.join("CesiumMan").is_dir(),
        "the shared glTF sample models are missing from {}",
        dir.display()
    );
    dir
}

fn bench(c: &mut Criterion) {
    let path = gltf_dir().join("CesiumMan/CesiumMan.glb");
    c.bench_function("import/CesiumMan", |b| {
        b.iter(|| marrow_engine::gltf::import(black_box(&path)).unwrap())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
