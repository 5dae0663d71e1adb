//! glTF bytes (JSON or GLB) through the importer, then evaluated: see `oracle::gltf_bytes`.
#![no_main]

#[path = "../oracle.rs"]
mod oracle;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(broken) = oracle::gltf_bytes(data) {
        panic!("{broken}");
    }
});
