//! BVH bytes through the importer, then evaluated: see `oracle::bvh_bytes`.
#![no_main]

#[path = "../oracle.rs"]
mod oracle;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(broken) = oracle::bvh_bytes(data) {
        panic!("{broken}");
    }
});
