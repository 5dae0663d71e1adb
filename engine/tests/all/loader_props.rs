//! Every loader, fed any bytes: random strings and mutated copies of the sample files (bytes
//! replaced, inserted, deleted, runs duplicated), returns `Ok` or an error naming the file,
//! never a panic (proptest reports a panic as a failure). Hangs and memory blow-ups on
//! structured input have their own regression tests (`gltf_bad_input`, `graph`, `scene`,
//! `project`, `clip_repair`).

use std::path::Path;

use marrow_engine::graph::load_graph;
use marrow_engine::project::{clip_from_str_repairing, scene_from_str, skeleton_from_str};
use proptest::prelude::*;

fn sample(rel: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)).unwrap()
}

/// A mutation of `seed`: each op replaces, inserts, deletes or duplicates a short run.
fn mutate(seed: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec((0u8..4, any::<prop::sample::Index>(), any::<u8>(), 1usize..16), 1..12).prop_map(
        move |ops| {
            let mut b = seed.clone();
            for (op, at, byte, len) in ops {
                if b.is_empty() {
                    b.push(byte);
                    continue;
                }
                let i = at.index(b.len());
                let end = (i + len).min(b.len());
                match op {
                    0 => b[i] = byte,
                    1 => b.insert(i, byte),
                    2 => {
                        b.drain(i..end);
                    }
                    _ => {
                        let run: Vec<u8> = b[i..end].to_vec();
                        b.splice(i..i, run);
                    }
                }
            }
            b
        },
    )
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, max_shrink_iters: 100, ..ProptestConfig::default() })]

    #[test]
    fn graph_files_never_panic(bytes in prop_oneof![
        prop::collection::vec(any::<u8>(), 0..400),
        mutate(sample("projects/locomotion/graphs/locomotion.graph.ron")),
    ]) {
        let _ = load_graph(&text(&bytes));
    }

    #[test]
    fn clip_files_never_panic(bytes in prop_oneof![
        prop::collection::vec(any::<u8>(), 0..400),
        mutate(sample("projects/runner/clips/stride.clip.ron")),
    ]) {
        let _ = clip_from_str_repairing(&text(&bytes), Path::new("x.clip.ron"));
    }

    #[test]
    fn scene_and_skeleton_files_never_panic(bytes in prop_oneof![
        mutate(sample("projects/runner/scenes/main.scene.ron")),
        mutate(sample("projects/runner/assets/runner.skeleton.ron")),
    ]) {
        let t = text(&bytes);
        let _ = scene_from_str(&t, Path::new("x.scene.ron"));
        let _ = skeleton_from_str(&t, Path::new("x.skeleton.ron"));
    }

    #[test]
    fn gltf_bytes_never_panic(bytes in prop_oneof![
        prop::collection::vec(any::<u8>(), 0..400),
        mutate(sample("assets/gltf/RiggedSimple/RiggedSimple.glb")),
        mutate(sample("assets/gltf/SimpleSkin/SimpleSkin.gltf")),
    ]) {
        let _ = marrow_engine::gltf::import_slice(&bytes, Path::new("x.glb"), None);
    }
}
