//! FBX bytes through the importer (ufbx, then Marrow's rig, meshes and clips), then evaluated:
//! see `oracle::fbx_bytes`.
#![no_main]

#[path = "../oracle.rs"]
mod oracle;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(broken) = oracle::fbx_bytes(data) {
        panic!("{broken}");
    }
});
