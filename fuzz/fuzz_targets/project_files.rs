//! The locomotion project with one file (picked by the first byte) replaced by the input,
//! checked and, when the check passes, played: see `oracle::project`.
#![no_main]

#[path = "../oracle.rs"]
mod oracle;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Err(broken) = oracle::project(data) {
        panic!("{broken}");
    }
});
