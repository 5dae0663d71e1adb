//! A graph file loaded, compiled for the locomotion rig and, when it compiles, evaluated: see
//! `oracle::graph`.
#![no_main]

#[path = "../oracle.rs"]
mod oracle;

use std::sync::OnceLock;

static RIG: OnceLock<oracle::GraphRig> = OnceLock::new();

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let rig = RIG.get_or_init(oracle::GraphRig::new);
    if let Err(broken) = oracle::graph(data, rig) {
        panic!("{broken}");
    }
});
