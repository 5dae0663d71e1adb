//! Every input the fuzz harness (`fuzz/`, see FUZZING.md) found to crash, hang, allocate too much
//! or break the check-versus-play rule, replayed through the same oracle the fuzz targets assert
//! (`fuzz/oracle.rs`), so each stays fixed under `cargo test`. The seed samples go through it too,
//! so the oracle itself is known to accept sound input.

use crate::{gltf_gen, oracle};

use std::path::{Path, PathBuf};

fn inputs(target: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions").join(target);
    let mut list: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && p.file_name().is_some_and(|n| n != "README.md"))
        .collect();
    list.sort();
    list
}

fn replay(target: &str, run: impl Fn(&[u8]) -> Result<(), String>) -> usize {
    let list = inputs(target);
    for p in &list {
        let data = std::fs::read(p).unwrap();
        if let Err(broken) = run(&data) {
            panic!("{}: {broken}", p.display());
        }
    }
    list.len()
}

#[test]
fn gltf_import_regressions_import_or_refuse_and_play_finite() {
    replay("gltf_import", oracle::gltf_bytes);
}

#[test]
fn bvh_import_regressions_import_or_refuse_and_play_finite() {
    assert!(replay("bvh_import", oracle::bvh_bytes) >= 8);
    // The sound ones import; every other one is refused by name.
    for p in inputs("bvh_import") {
        let data = std::fs::read(&p).unwrap();
        let r = marrow_engine::bvh::import_slice(&data, &p, &Default::default());
        let sound = p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("sound-"));
        assert_eq!(r.is_ok(), sound, "{}: {:?}", p.display(), r.err().map(|e| e.to_string()));
    }
}

#[test]
fn fbx_import_regressions_import_or_refuse_and_play_finite() {
    assert!(replay("fbx_import", oracle::fbx_bytes) >= 6);
    for p in inputs("fbx_import") {
        let data = std::fs::read(&p).unwrap();
        let r = marrow_engine::fbx::import_slice(&data, &p);
        let sound = p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("sound-"));
        if sound {
            assert!(
                r.as_ref().is_ok_and(|s| s.rigs.len() == 1),
                "{}: {:?}",
                p.display(),
                r.err().map(|e| e.to_string())
            );
        }
    }
}

#[test]
fn cooked_clip_regressions_load_or_refuse_and_sample_finite() {
    assert!(replay("cooked_clip", oracle::cooked_clip) >= 5);
    // The sound one loads; every other one is refused by name.
    for p in inputs("cooked_clip") {
        let data = std::fs::read(&p).unwrap();
        let r = marrow_engine::compressed::CompressedClip::from_cooked(&data);
        let sound = p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("sound-"));
        assert_eq!(r.is_ok(), sound, "{}: {:?}", p.display(), r.err().map(|e| e.to_string()));
    }
}

#[test]
fn project_files_regressions_check_or_play_clean() {
    replay("project_files", oracle::project);
}

#[test]
fn graph_compile_regressions_compile_or_refuse_and_evaluate_finite() {
    let rig = oracle::GraphRig::new();
    replay("graph_compile", |d| oracle::graph(d, &rig));
}

#[test]
fn the_oracle_accepts_the_sound_samples() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for glb in ["assets/gltf/CesiumMan/CesiumMan.glb", "assets/gltf/RiggedSimple/RiggedSimple.glb"] {
        oracle::gltf_bytes(&std::fs::read(root.join(glb)).unwrap()).unwrap();
    }
    let files = oracle::locomotion_files();
    let report = marrow_engine::project::check_project_files(&root.join("projects/locomotion"), &files);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let rig = oracle::GraphRig::new();
    for (k, (path, text)) in files.iter().enumerate() {
        let mut data = vec![k as u8];
        data.extend_from_slice(text.as_bytes());
        oracle::project(&data).unwrap_or_else(|e| panic!("{path}: {e}"));
    }
    oracle::graph(files[5].1.as_bytes(), &rig).unwrap();
    // The controller: a state machine.
    oracle::graph(files[10].1.as_bytes(), &rig).unwrap();
    // The steering graph: a 2D blend space, a foot plant and a look-at.
    oracle::graph(files[13].1.as_bytes(), &rig).unwrap();
}

#[test]
fn gltf_structured_regressions_import_or_refuse_and_play_finite() {
    replay("gltf_structured", |d| oracle::gltf_bytes(&gltf_gen::generate(d)));
}

/// The structure-aware generator (`fuzz/gltf_gen.rs`) on 600 seeded inputs: every document goes
/// through the oracle, and the generator reaches both sides of the importer (documents that
/// import and play, documents refused) and the amplification shapes, which are refused within
/// the cost budget rather than built.
#[test]
fn the_structured_gltf_generator_feeds_the_oracle() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut imported, mut refused, mut budget) = (0, 0, 0);
    for case in 0..600 {
        let len = 64 + (next() % 1024) as usize;
        let data: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        let glb = gltf_gen::generate(&data);
        if let Err(broken) = oracle::gltf_bytes(&glb) {
            panic!("case {case}: {broken}");
        }
        match marrow_engine::gltf::import_slice(&glb, Path::new("gen.glb"), None) {
            Ok(_) => imported += 1,
            Err(e) => {
                refused += 1;
                budget += usize::from(e.to_string().contains("the limit is"));
            }
        }
    }
    eprintln!("gltf_gen: {imported} imported, {refused} refused ({budget} by a cost limit)");
    assert!(imported >= 60, "only {imported} of 600 generated documents import");
    assert!(refused >= 60, "only {refused} of 600 generated documents are refused");
    assert!(budget >= 5, "only {budget} of 600 generated documents reach a cost limit");
}

/// How long each stable random-mutation run lasts: `MARROW_MUTATION_SECONDS` (default 5).
fn mutation_seconds() -> u64 {
    std::env::var("MARROW_MUTATION_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(5)
}

/// The random state a mutation run starts from: `MARROW_MUTATION_SEED` (any number but zero;
/// default one fixed state), so that runs after the first explore other inputs.
fn mutation_seed() -> u64 {
    std::env::var("MARROW_MUTATION_SEED")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .filter(|&s| s != 0)
        .unwrap_or(0x9E37_79B9_7F4A_7C15)
}

/// A random-mutation run of an oracle on stable Rust, for machines without cargo-fuzz: for
/// `seconds`, from the random state [`mutation_seed`] gives, a seed from `seeds` changed by 1
/// to 8 random byte writes, cuts and splices (from any seed), passed through `fix` (a file
/// format's own seal, so its payload checks are reached), then through `check`, whose failure
/// saves the input in the temporary folder and names it. Returns the number of inputs run.
fn random_mutations(
    seeds: &[Vec<u8>],
    seconds: u64,
    fix: impl Fn(&mut Vec<u8>),
    check: impl Fn(&[u8]) -> Result<(), String>,
) -> u64 {
    let mut state = mutation_seed();
    let mut rnd = move |n: usize| {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n.max(1)
    };
    let end = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    let mut runs = 0u64;
    while std::time::Instant::now() < end {
        let mut m = seeds[rnd(seeds.len())].clone();
        for _ in 0..1 + rnd(8) {
            match rnd(4) {
                0 | 1 if !m.is_empty() => {
                    let i = rnd(m.len());
                    m[i] = rnd(256) as u8;
                }
                2 if m.len() > 1 => m.truncate(rnd(m.len())),
                _ => {
                    let other = &seeds[rnd(seeds.len())];
                    let (a, b) = (rnd(other.len()), rnd(other.len()));
                    let at = rnd(m.len() + 1);
                    let piece = other[a.min(b)..a.max(b)].to_vec();
                    m.splice(at..at, piece);
                }
            }
        }
        fix(&mut m);
        if let Err(broken) = check(&m) {
            let keep = std::env::temp_dir().join(format!("marrow-mutation-{runs}.bin"));
            let _ = std::fs::write(&keep, &m);
            panic!("mutation {runs} (saved as {}): {broken}", keep.display());
        }
        runs += 1;
    }
    runs
}

/// The seed files of a regression directory, and the repository's own files of that kind.
fn seeds(target: &str, samples: &[&str]) -> Vec<Vec<u8>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut seeds: Vec<Vec<u8>> = inputs(target).iter().map(|p| std::fs::read(p).unwrap()).collect();
    seeds.extend(samples.iter().map(|s| std::fs::read(root.join(s)).unwrap()));
    seeds
}

/// A random-mutation run of the `cooked_clip` oracle ([`random_mutations`]) on the regression
/// seeds, the checksum resealed so that the payload checks are reached. Ignored by default
/// (`cargo test -- --ignored random_mutations`); FUZZING.md has its figures.
#[test]
#[ignore]
fn cooked_clip_random_mutations_load_or_refuse_and_sample_finite() {
    let seconds = mutation_seconds();
    let reseal = |m: &mut Vec<u8>| {
        if m.len() >= 32 {
            let mut h = 0xcbf2_9ce4_8422_2325u64;
            for &b in &m[32..] {
                h ^= b as u64;
                h = h.wrapping_mul(0x100_0000_01b3);
            }
            m[24..32].copy_from_slice(&h.to_le_bytes());
        }
    };
    let loaded = std::cell::Cell::new(0u64);
    let runs = random_mutations(&seeds("cooked_clip", &[]), seconds, reseal, |m| {
        oracle::cooked_clip(m)?;
        loaded.set(loaded.get() + marrow_engine::compressed::CompressedClip::from_cooked(m).is_ok() as u64);
        Ok(())
    });
    eprintln!(
        "cooked_clip mutations: {runs} inputs in {seconds} s, {} loaded and sampled finite, the rest refused by name",
        loaded.get()
    );
    assert!(runs > 0);
}

/// A run of [`random_mutations`] for an importer's oracle (no seal to restore), its inputs
/// counted on standard error: the seeds of `target`'s regression directory and `samples`.
fn importer_mutations(target: &str, samples: &[&str], check: impl Fn(&[u8]) -> Result<(), String>) {
    let seconds = mutation_seconds();
    let runs = random_mutations(&seeds(target, samples), seconds, |_| {}, check);
    eprintln!(
        "{target} mutations: {runs} inputs in {seconds} s, each imported and played finite or refused by name"
    );
    assert!(runs > 0);
}

/// A random-mutation run of the `gltf_import` oracle on the regression seeds and the
/// repository's small binary glTF samples (their JSON chunk and buffers cut, spliced and
/// overwritten alike). Ignored by default, as the cooked clip run.
#[test]
#[ignore]
fn gltf_random_mutations_import_or_refuse_and_play_finite() {
    let samples = [
        "assets/gltf/AnimatedMorphCube/AnimatedMorphCube.glb",
        "assets/gltf/RiggedSimple/RiggedSimple.glb",
        "assets/gltf/InterpolationTest/InterpolationTest.glb",
    ];
    importer_mutations("gltf_import", &samples, oracle::gltf_bytes);
}

/// A random-mutation run of the `bvh_import` oracle on the regression seeds and the repository's
/// small capture (`assets/bvh/capture.bvh`). Ignored by default, as the cooked clip run.
#[test]
#[ignore]
fn bvh_random_mutations_import_or_refuse_and_play_finite() {
    importer_mutations("bvh_import", &["assets/bvh/capture.bvh"], oracle::bvh_bytes);
}

/// A random-mutation run of the `fbx_import` oracle on the regression seeds and the repository's
/// small FBX files (binary, from Blender). Ignored by default, as the cooked clip run.
#[test]
#[ignore]
fn fbx_random_mutations_import_or_refuse_and_play_finite() {
    let samples = ["assets/fbx/AnimatedMorphCube.fbx", "assets/fbx/textured_quad/quad.fbx"];
    importer_mutations("fbx_import", &samples, oracle::fbx_bytes);
}
