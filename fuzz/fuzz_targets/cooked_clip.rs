//! Cooked clip bytes through the loader, then sampled: see `oracle::cooked_clip`.
#![no_main]

#[path = "../oracle.rs"]
mod oracle;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(broken) = oracle::cooked_clip(data) {
        panic!("{broken}");
    }
});
