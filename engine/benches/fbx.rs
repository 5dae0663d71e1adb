//! FBX import benchmark: `cargo bench -p marrow-engine --bench fbx`.
//!
//! Imports, from bytes held in memory, the two FBX files Blender wrote (`assets/fbx/`):
//! `cmu_131_01.fbx` (2.0 MB: 31 bones, one animation stack of 994 frames at 120 Hz baked to
//! 32 rotation and translation tracks) and `CesiumMan.fbx` (0.66 MB: 19 bones, a skinned mesh of
//! 4,632 triangles with an embedded texture, a 2 s walk). Each iteration is ufbx's parse, the
//! rig, the meshes and the baked clips (target: under 50 ms for a 2 MB file).

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};

fn bench(c: &mut Criterion) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/fbx");
    for (name, file) in
        [("import/fbx_capture_2mb", "cmu_131_01.fbx"), ("import/fbx_cesium_man", "CesiumMan.fbx")]
    {
        let bytes = std::fs::read(dir.join(file)).unwrap();
        c.bench_function(name, |b| {
            b.iter(|| marrow_engine::fbx::import_slice(black_box(&bytes), Path::new(file)).unwrap())
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
