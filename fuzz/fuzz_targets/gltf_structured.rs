//! The structure-aware glTF target: the bytes choose a schema-shaped document
//! (`gltf_gen::generate`: shared accessors, deep hierarchies, colliding names, edge values), which
//! goes through the same rule as `gltf_import`: see `oracle::gltf_bytes`.
#![no_main]

#[path = "../oracle.rs"]
mod oracle;

#[path = "../gltf_gen.rs"]
mod gltf_gen;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let glb = gltf_gen::generate(data);
    if let Err(broken) = oracle::gltf_bytes(&glb) {
        panic!("{broken}");
    }
});
