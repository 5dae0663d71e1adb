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

fn replay(target: &str, run: impl Fn(&[u8]) -> Result<bool, String>) -> usize {
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

/// The JSON regressions reach the importer (the oracle once named every input `fuzz.glb`, so
/// the container refused them unread and their replay tested nothing), and each imports or is
/// refused as `fuzz/regressions/gltf_import/README.md` says.
#[test]
fn the_gltf_json_regressions_import_or_are_refused_as_their_readme_says() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions/gltf_import");
    let expected = [
        ("check-vs-play-stray-joint-behind-a-tiny-weight.gltf", true),
        ("check-vs-play-weights-whose-sum-overflows.gltf", true),
        ("check-vs-play-scales-compounding-past-f32.gltf", false),
        ("check-vs-play-zero-scale-skinned-mesh-node.gltf", true),
        ("skinned-mesh-under-a-1e20-scale-its-determinant-past-f32.gltf", true),
        ("skinned-mesh-under-a-scale-of-zero-on-one-axis.gltf", true),
    ];
    for (name, imports) in expected {
        let data = std::fs::read(dir.join(name)).unwrap();
        let imported = marrow_engine::gltf::import_slice(&data, oracle::gltf_name(&data), None);
        match (imported, imports) {
            (Ok(_), true) => {}
            (Err(e), false) => assert!(e.to_string().contains("node"), "{name}: {e}"),
            (Ok(_), false) => panic!("{name}: imported, the README says refused"),
            (Err(e), true) => panic!("{name}: refused, the README says imported: {e}"),
        }
    }
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
        let name = p.file_name().unwrap().to_string_lossy();
        if name.starts_with("sound-") {
            // A rig, or (named so) none but an animated mesh.
            let rigs = usize::from(!name.ends_with("-no-rig.fbx"));
            assert!(
                r.as_ref().is_ok_and(|s| s.rigs.len() == rigs && (rigs == 1 || !s.animations.is_empty())),
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

/// What the stable project mutation run found (`project_random_mutations_check_or_play_clean`:
/// any sample project, a first line naming the file). Each still names a file of the samples
/// (a renamed sample would turn it into an input passed over).
#[test]
fn sample_projects_regressions_check_or_play_clean() {
    let projects = oracle::sample_projects_read();
    assert!(
        replay("sample_projects", |d| oracle::sample_project(d, &projects).map(|p| p.unwrap_or(false))) >= 1
    );
    for p in inputs("sample_projects") {
        let data = std::fs::read(&p).unwrap();
        assert!(
            oracle::sample_project_files(&data, &projects).is_some(),
            "{}: names no file of the sample projects",
            p.display()
        );
    }
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
        assert_eq!(
            oracle::gltf_bytes(&std::fs::read(root.join(glb)).unwrap()),
            Ok(true),
            "{glb}: imported and played"
        );
    }
    let files = oracle::locomotion_files();
    let report = marrow_engine::project::check_project_files(&root.join("projects/locomotion"), &files);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let rig = oracle::GraphRig::new();
    for (k, (path, text)) in files.iter().enumerate() {
        let mut data = vec![k as u8];
        data.extend_from_slice(text.as_bytes());
        assert_eq!(oracle::project(&data), Ok(true), "{path}: checked clean and played");
    }
    // Each compiled and evaluated, not passed over.
    assert_eq!(oracle::graph(files[5].1.as_bytes(), &rig), Ok(true), "{}", files[5].0);
    // The controller: a state machine.
    assert_eq!(oracle::graph(files[10].1.as_bytes(), &rig), Ok(true), "{}", files[10].0);
    // The steering graph: a 2D blend space, a foot plant and a look-at.
    assert_eq!(oracle::graph(files[13].1.as_bytes(), &rig), Ok(true), "{}", files[13].0);
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
        match oracle::gltf_bytes(&glb) {
            Ok(true) => imported += 1,
            Ok(false) => {
                refused += 1;
                let e = marrow_engine::gltf::import_slice(&glb, Path::new("gen.glb"), None).unwrap_err();
                budget += usize::from(e.to_string().contains("the limit is"));
            }
            Err(broken) => panic!("case {case}: {broken}"),
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

/// The random numbers of a mutation run: xorshift from [`mutation_seed`]'s state.
struct Rnd(u64);

impl Rnd {
    /// A number in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        let s = &mut self.0;
        *s ^= *s >> 12;
        *s ^= *s << 25;
        *s ^= *s >> 27;
        (s.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n.max(1)
    }
}

/// How a mutation run changes a seed: 1 to 8 random byte writes, cuts and splices (from any
/// seed), blind to the format.
fn byte_edits(m: &mut Vec<u8>, seeds: &[Vec<u8>], rnd: &mut Rnd) {
    for _ in 0..1 + rnd.below(8) {
        match rnd.below(4) {
            0 | 1 if !m.is_empty() => {
                let i = rnd.below(m.len());
                m[i] = rnd.below(256) as u8;
            }
            2 if m.len() > 1 => m.truncate(rnd.below(m.len())),
            _ => {
                let other = &seeds[rnd.below(seeds.len())];
                let (a, b) = (rnd.below(other.len()), rnd.below(other.len()));
                let at = rnd.below(m.len() + 1);
                let piece = other[a.min(b)..a.max(b)].to_vec();
                m.splice(at..at, piece);
            }
        }
    }
}

/// The kind of a RON token [`ron_tokens`] finds.
#[derive(Clone, Copy, PartialEq)]
enum Token {
    /// A number (`-1.5e3`, `7`).
    Number,
    /// A string literal, quotes included.
    Text,
    /// A name: a field, a variant, `true`, `Some`.
    Name,
}

/// The numbers, strings and names of a RON text, as byte ranges (a rough lexer: comments and
/// odd bytes are passed over, which is all a mutator needs).
fn ron_tokens(m: &[u8]) -> Vec<(Token, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < m.len() {
        let c = m[i];
        let start = i;
        if c == b'"' {
            i += 1;
            while i < m.len() && m[i] != b'"' {
                i += 1 + usize::from(m[i] == b'\\');
            }
            i = (i + 1).min(m.len());
            out.push((Token::Text, start..i));
        } else if c.is_ascii_digit() || (c == b'-' && m.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            i += 1;
            while i < m.len() && (m[i].is_ascii_alphanumeric() || b".+-_".contains(&m[i])) {
                i += 1;
            }
            out.push((Token::Number, start..i));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            while i < m.len() && (m[i].is_ascii_alphanumeric() || m[i] == b'_') {
                i += 1;
            }
            out.push((Token::Name, start..i));
        } else {
            i += 1;
        }
    }
    out
}

/// Numbers that sit on a limit: of a float, an index's integer type, a count, a time.
const EDGE_NUMBERS: [&str; 26] = [
    "0",
    "-0.0",
    "1",
    "-1",
    "0.5",
    "2",
    "255",
    "256",
    "65535",
    "65536",
    "-32769",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "18446744073709551616",
    "1e38",
    "-1e38",
    "3.4028236e38",
    "1e-45",
    "1e300",
    "NaN",
    "inf",
    "-inf",
    "1000000",
    "0.0001",
    "-1e-7",
];

/// Strings a hostile or careless file holds: empty, long, escaping the project, absolute.
const EDGE_TEXTS: [&str; 10] = [
    "\"\"",
    "\"../outside.clip.ron\"",
    "\"../../../../../../etc/passwd\"",
    "\"/etc/hostname\"",
    "\"clips/../../locomotion/clips/stride.clip.ron\"",
    "\"C:\\\\Windows\\\\win.ini\"",
    "\"clips/stride.clip.ron\"",
    "\"Hips\"",
    "\"\\u{0}\"",
    "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"",
];

/// A number token moved by a plausible step (negated, halved, doubled, times ten or a
/// thousand, a thousandth, one or a quarter more or less), an integer kept an integer, so that
/// the file stays consistent more often than with an edge value: key times crossing, a speed
/// reversed, a scale grown. `None` for a token that does not parse as a number.
fn nudged(token: &[u8], rnd: &mut Rnd) -> Option<String> {
    let text = std::str::from_utf8(token).ok()?;
    let integer = text.bytes().all(|b| b.is_ascii_digit() || b == b'-');
    let v: f64 = text.parse().ok()?;
    let steps: [fn(f64) -> f64; 10] = [
        |v| -v,
        |v| v * 0.5,
        |v| v * 2.0,
        |v| v * 10.0,
        |v| v * 1e3,
        |v| v * 1e-3,
        |v| v + 1.0,
        |v| v - 1.0,
        |v| v + 0.25,
        |v| v - 0.25,
    ];
    let n = steps[rnd.below(steps.len())](v);
    Some(if integer { format!("{}", n.round() as i64) } else { format!("{n:?}") })
}

/// How a mutation run changes a RON text so that most results still parse and reach the
/// checks past the parser: 1 to 4 edits, each a number set to an edge ([`EDGE_NUMBERS`]), moved
/// by a step ([`nudged`]) or set to another number of any seed, a string or name set to another of any seed (a bone, a clip, a
/// node kind, a field) or a string to an edge ([`EDGE_TEXTS`]), a line deleted, duplicated or
/// copied in from any seed, or (one time in eight) a blind byte edit ([`byte_edits`]).
fn ron_edits(m: &mut Vec<u8>, seeds: &[Vec<u8>], rnd: &mut Rnd) {
    for _ in 0..1 + rnd.below(4) {
        let pick = rnd.below(8);
        if pick == 0 {
            byte_edits(m, seeds, rnd);
            continue;
        }
        if pick >= 5 {
            let lines = |t: &[u8]| -> Vec<std::ops::Range<usize>> {
                let mut out = Vec::new();
                let mut at = 0;
                for (i, &b) in t.iter().enumerate() {
                    if b == b'\n' {
                        out.push(at..i + 1);
                        at = i + 1;
                    }
                }
                out
            };
            let own = lines(m);
            if own.is_empty() {
                continue;
            }
            let line = own[rnd.below(own.len())].clone();
            match pick {
                5 => drop(m.drain(line)),
                6 => {
                    let copy = m[line.clone()].to_vec();
                    let at = own[rnd.below(own.len())].start;
                    m.splice(at..at, copy);
                }
                _ => {
                    let other = &seeds[rnd.below(seeds.len())];
                    let theirs = lines(other);
                    if !theirs.is_empty() {
                        let copy = other[theirs[rnd.below(theirs.len())].clone()].to_vec();
                        m.splice(line.start..line.start, copy);
                    }
                }
            }
            continue;
        }
        let tokens = ron_tokens(m);
        if tokens.is_empty() {
            continue;
        }
        let (kind, range) = tokens[rnd.below(tokens.len())].clone();
        let replacement: Vec<u8> = match (kind, pick) {
            (Token::Number, 1) => EDGE_NUMBERS[rnd.below(EDGE_NUMBERS.len())].as_bytes().to_vec(),
            (Token::Number, 2) => match nudged(&m[range.clone()], rnd) {
                Some(n) => n.into_bytes(),
                None => continue,
            },
            (Token::Text, 1) => EDGE_TEXTS[rnd.below(EDGE_TEXTS.len())].as_bytes().to_vec(),
            _ => {
                let other = &seeds[rnd.below(seeds.len())];
                let same: Vec<_> = ron_tokens(other).into_iter().filter(|(k, _)| *k == kind).collect();
                if same.is_empty() {
                    continue;
                }
                other[same[rnd.below(same.len())].1.clone()].to_vec()
            }
        };
        m.splice(range, replacement);
    }
}

/// A random-mutation run of an oracle on stable Rust, for machines without cargo-fuzz: for
/// `seconds`, from the random state [`mutation_seed`] gives, a seed from `seeds` changed by
/// `edit` ([`byte_edits`], [`ron_edits`]), passed through `fix` (a file format's own seal, so
/// its payload checks are reached), then through `check` (an oracle rule: `Ok(true)` accepted and
/// played, `Ok(false)` refused), whose failure saves the input in the temporary folder and names
/// it. Returns the number of inputs run and how many of them were accepted.
fn random_mutations(
    seeds: &[Vec<u8>],
    seconds: u64,
    edit: fn(&mut Vec<u8>, &[Vec<u8>], &mut Rnd),
    fix: impl Fn(&mut Vec<u8>),
    check: impl Fn(&[u8]) -> Result<bool, String>,
) -> (u64, u64) {
    let mut rnd = Rnd(mutation_seed());
    let end = std::time::Instant::now() + std::time::Duration::from_secs(seconds);
    let (mut runs, mut accepted) = (0u64, 0u64);
    while std::time::Instant::now() < end {
        let mut m = seeds[rnd.below(seeds.len())].clone();
        edit(&mut m, seeds, &mut rnd);
        fix(&mut m);
        match check(&m) {
            Ok(played) => accepted += played as u64,
            Err(broken) => {
                let keep = std::env::temp_dir().join(format!("marrow-mutation-{runs}.bin"));
                let _ = std::fs::write(&keep, &m);
                panic!("mutation {runs} (saved as {}): {broken}", keep.display());
            }
        }
        runs += 1;
    }
    (runs, accepted)
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
    let (runs, loaded) =
        random_mutations(&seeds("cooked_clip", &[]), seconds, byte_edits, reseal, oracle::cooked_clip);
    eprintln!(
        "cooked_clip mutations: {runs} inputs in {seconds} s, {loaded} loaded and sampled finite, the rest refused by name"
    );
    assert!(runs > 0);
}

/// A run of [`random_mutations`] for an importer's oracle (no seal to restore), each seed
/// changed by `edit`, its inputs and how many imported counted on standard error under
/// `target`'s name.
fn importer_mutations(
    target: &str,
    seeds: Vec<Vec<u8>>,
    edit: fn(&mut Vec<u8>, &[Vec<u8>], &mut Rnd),
    check: fn(&[u8]) -> Result<bool, String>,
) {
    let seconds = mutation_seconds();
    let (runs, imported) = random_mutations(&seeds, seconds, edit, |_| {}, check);
    eprintln!(
        "{target} mutations: {runs} inputs in {seconds} s, {imported} imported and played finite, the rest refused by name"
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
    importer_mutations("gltf_import", seeds("gltf_import", &samples), byte_edits, oracle::gltf_bytes);
}

/// A random-mutation run of the `bvh_import` oracle on the regression seeds and the repository's
/// small capture (`assets/bvh/capture.bvh`). Ignored by default, as the cooked clip run.
#[test]
#[ignore]
fn bvh_random_mutations_import_or_refuse_and_play_finite() {
    importer_mutations(
        "bvh_import",
        seeds("bvh_import", &["assets/bvh/capture.bvh"]),
        byte_edits,
        oracle::bvh_bytes,
    );
}

/// A random-mutation run of the `fbx_import` oracle on the regression seeds and the repository's
/// small FBX files (binary, from Blender). Ignored by default, as the cooked clip run.
#[test]
#[ignore]
fn fbx_random_mutations_import_or_refuse_and_play_finite() {
    let samples = ["assets/fbx/AnimatedMorphCube.fbx", "assets/fbx/textured_quad/quad.fbx"];
    importer_mutations("fbx_import", seeds("fbx_import", &samples), byte_edits, oracle::fbx_bytes);
}

/// A random-mutation run of the `bvh_import` oracle with the text changed token by token
/// ([`ron_edits`], whose lexer reads BVH's numbers and names as well as RON's): channel and
/// frame counts, frame times and offsets on their limits or moved by a step, joint names,
/// keywords and channel names swapped, lines of the hierarchy and the motion deleted, doubled
/// or copied in; byte edits leave few such files that parse. Ignored by default, as the cooked
/// clip run.
#[test]
#[ignore]
fn bvh_token_mutations_import_or_refuse_and_play_finite() {
    importer_mutations(
        "bvh_import",
        seeds("bvh_import", &["assets/bvh/capture.bvh"]),
        ron_edits,
        oracle::bvh_bytes,
    );
}

/// One hierarchy line of a BVH text as [`bvh_edits`] holds it: the line, and for a `CHANNELS`
/// line its motion columns (per channel, that channel's value in every frame), so that an edit
/// of the hierarchy (a joint block moved, doubled or cut, a channel added or dropped) takes its
/// columns with it and the frames keep as many values as the channels declare.
struct BvhLine {
    text: String,
    columns: Vec<Vec<String>>,
}

/// A BVH text cut into what [`bvh_edits`] changes together.
struct BvhText {
    hierarchy: Vec<BvhLine>,
    frames: usize,
    frame_time: String,
}

/// Cuts a well-formed BVH text into a [`BvhText`]; `None` where the text is not one (no
/// `MOTION`, frame lines of the wrong length: the token edits handle those).
fn bvh_cut(m: &[u8]) -> Option<BvhText> {
    let text = std::str::from_utf8(m).ok()?;
    let lines: Vec<&str> = text.lines().collect();
    let motion = lines.iter().position(|l| l.trim() == "MOTION")?;
    let mut rest = lines[motion + 1..].iter().map(|l| l.trim()).filter(|l| !l.is_empty());
    rest.next()?.strip_prefix("Frames:")?;
    let frame_time = rest.next()?.strip_prefix("Frame Time:")?.trim().to_owned();
    let frames: Vec<Vec<&str>> = rest.map(|l| l.split_whitespace().collect()).collect();
    let mut hierarchy = Vec::new();
    let mut column = 0;
    for l in &lines[..motion] {
        let mut columns = Vec::new();
        if let Some(c) = l.trim().strip_prefix("CHANNELS") {
            let n: usize = c.split_whitespace().next()?.parse().ok()?;
            for k in column..column + n {
                columns
                    .push(frames.iter().map(|f| f.get(k).map(|v| (*v).to_owned())).collect::<Option<_>>()?);
            }
            column += n;
        }
        hierarchy.push(BvhLine { text: (*l).to_owned(), columns });
    }
    if frames.iter().any(|f| f.len() != column) {
        return None;
    }
    Some(BvhText { hierarchy, frames: frames.len(), frame_time })
}

/// The text of a [`BvhText`]: the hierarchy, then `Frames:` (`declared`, or the frames held),
/// the frame time and each frame's values in the order of the `CHANNELS` lines.
fn bvh_join(b: &BvhText, declared: Option<usize>) -> Vec<u8> {
    let mut out = String::new();
    for l in &b.hierarchy {
        out.push_str(&l.text);
        out.push('\n');
    }
    out.push_str(&format!(
        "MOTION\nFrames: {}\nFrame Time: {}\n",
        declared.unwrap_or(b.frames),
        b.frame_time
    ));
    for f in 0..b.frames {
        let values: Vec<&str> =
            b.hierarchy.iter().flat_map(|l| l.columns.iter().map(move |c| c[f].as_str())).collect();
        out.push_str(&values.join(" "));
        out.push('\n');
    }
    out.into_bytes()
}

/// The line range of each `JOINT` block (its `JOINT` line through its closing brace).
fn bvh_joint_blocks(b: &BvhText) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    for (i, l) in b.hierarchy.iter().enumerate() {
        if !l.text.trim_start().starts_with("JOINT") {
            continue;
        }
        let mut depth = 0i32;
        for (j, m) in b.hierarchy.iter().enumerate().skip(i + 1) {
            depth += m.text.matches('{').count() as i32 - m.text.matches('}').count() as i32;
            if depth <= 0 && m.text.contains('}') {
                out.push(i..j + 1);
                break;
            }
        }
    }
    out
}

const BVH_CHANNELS: [&str; 6] =
    ["Xposition", "Yposition", "Zposition", "Xrotation", "Yrotation", "Zrotation"];

/// A `CHANNELS` line's text for `names`, indented as `old`.
fn bvh_channels_line(old: &str, names: &[String]) -> String {
    let indent = &old[..old.len() - old.trim_start().len()];
    format!("{indent}CHANNELS {} {}", names.len(), names.join(" "))
}

/// One structural edit of a joint or a channel ([`bvh_edits`]); `false` where it found nothing
/// to change.
fn bvh_hierarchy_edit(b: &mut BvhText, rnd: &mut Rnd) -> bool {
    let channels: Vec<usize> =
        (0..b.hierarchy.len()).filter(|&i| !b.hierarchy[i].columns.is_empty()).collect();
    let blocks = bvh_joint_blocks(b);
    match rnd.below(7) {
        // A channel order changed (the rotation order), its values kept.
        0 | 1 if !channels.is_empty() => {
            let l = &mut b.hierarchy[channels[rnd.below(channels.len())]];
            let mut names: Vec<String> = l.text.split_whitespace().skip(2).map(str::to_owned).collect();
            let (i, j) = (rnd.below(names.len()), rnd.below(names.len()));
            names.swap(i, j);
            l.columns.swap(i, j);
            l.text = bvh_channels_line(&l.text, &names);
        }
        // A channel dropped, or one added (a copy of another's values, or one value throughout).
        2 | 3 if !channels.is_empty() => {
            let l = &mut b.hierarchy[channels[rnd.below(channels.len())]];
            let mut names: Vec<String> = l.text.split_whitespace().skip(2).map(str::to_owned).collect();
            let k = rnd.below(names.len() + 1);
            let absent: Vec<&str> =
                BVH_CHANNELS.into_iter().filter(|c| !names.iter().any(|n| n == c)).collect();
            if (rnd.below(2) == 0 || absent.is_empty()) && k < names.len() {
                names.remove(k);
                l.columns.remove(k);
            } else if !absent.is_empty() {
                names.insert(k, absent[rnd.below(absent.len())].to_owned());
                let frames = l.columns[0].len();
                let column = match rnd.below(3) {
                    0 => l.columns[rnd.below(l.columns.len())].clone(),
                    _ => vec![EDGE_NUMBERS[rnd.below(EDGE_NUMBERS.len())].to_owned(); frames],
                };
                l.columns.insert(k, column);
            }
            l.text = bvh_channels_line(&l.text, &names);
        }
        // A joint block doubled as its own sibling, cut, or moved under another joint.
        4 | 5 if !blocks.is_empty() => {
            let r = blocks[rnd.below(blocks.len())].clone();
            let mut block: Vec<BvhLine> = b.hierarchy[r.clone()]
                .iter()
                .map(|l| BvhLine { text: l.text.clone(), columns: l.columns.clone() })
                .collect();
            match rnd.below(3) {
                0 => {
                    // The copy's joints renamed (most times: two joints of one name are refused).
                    if rnd.below(8) != 0 {
                        for l in &mut block {
                            if l.text.trim_start().starts_with("JOINT ") {
                                l.text.push_str("_copy");
                            }
                        }
                    }
                    drop(b.hierarchy.splice(r.end..r.end, block))
                }
                1 => drop(b.hierarchy.drain(r)),
                _ => {
                    // Under another joint: after its CHANNELS line (or its OFFSET).
                    let host = blocks[rnd.below(blocks.len())].clone();
                    let Some(under) = b.hierarchy[host.clone()]
                        .iter()
                        .position(|l| !l.columns.is_empty())
                        .or_else(|| b.hierarchy[host.clone()].iter().position(|l| l.text.contains("OFFSET")))
                        .map(|k| host.start + k + 1)
                    else {
                        return false;
                    };
                    if under >= r.start && under <= r.end {
                        return false;
                    }
                    b.hierarchy.splice(under..under, block);
                    let shift = if under < r.start { r.len() } else { 0 };
                    b.hierarchy.drain(r.start + shift..r.end + shift);
                }
            }
        }
        // A joint renamed after another (two joints of one name) or an offset on a limit.
        _ => {
            let names: Vec<String> = b
                .hierarchy
                .iter()
                .filter_map(|l| l.text.trim().strip_prefix("JOINT ").map(str::to_owned))
                .collect();
            let offsets: Vec<usize> = (0..b.hierarchy.len())
                .filter(|&i| b.hierarchy[i].text.trim_start().starts_with("OFFSET"))
                .collect();
            if rnd.below(2) == 0 && !names.is_empty() {
                let joints: Vec<usize> = (0..b.hierarchy.len())
                    .filter(|&i| b.hierarchy[i].text.trim_start().starts_with("JOINT "))
                    .collect();
                let l = &mut b.hierarchy[joints[rnd.below(joints.len())]];
                let indent = l.text[..l.text.len() - l.text.trim_start().len()].to_owned();
                l.text = format!("{indent}JOINT {}", names[rnd.below(names.len())]);
            } else if !offsets.is_empty() {
                let l = &mut b.hierarchy[offsets[rnd.below(offsets.len())]];
                let indent = l.text[..l.text.len() - l.text.trim_start().len()].to_owned();
                let v = ["0", "1e-30", "1e6", "-1e6", "3e37", "0.001"][rnd.below(6)];
                let keep: Vec<String> = l.text.split_whitespace().skip(1).map(str::to_owned).collect();
                let xyz: Vec<String> = (0..3)
                    .map(|i| {
                        if rnd.below(2) == 0 {
                            v.to_owned()
                        } else {
                            keep.get(i).cloned().unwrap_or_default()
                        }
                    })
                    .collect();
                l.text = format!("{indent}OFFSET {}", xyz.join(" "));
            } else {
                return false;
            }
        }
    }
    true
}

/// One edit of the motion ([`bvh_edits`]): frames cut or doubled (the count kept true), the
/// frame time on a limit, or one channel's values scaled, wrapped by whole turns on alternate
/// frames, flipped between -180 and 180 degrees, or set to a limit in one frame.
fn bvh_motion_edit(b: &mut BvhText, rnd: &mut Rnd) {
    let columns: Vec<(usize, usize)> =
        b.hierarchy.iter().enumerate().flat_map(|(i, l)| (0..l.columns.len()).map(move |k| (i, k))).collect();
    match rnd.below(4) {
        0 if b.frames > 0 => {
            let (i, j) = (rnd.below(b.frames + 1), rnd.below(b.frames + 1));
            let (from, to) = (i.min(j), i.max(j));
            let double = rnd.below(2) == 0;
            for l in &mut b.hierarchy {
                for c in &mut l.columns {
                    if double {
                        let copy = c[from..to].to_vec();
                        c.splice(to..to, copy);
                    } else {
                        c.drain(from..to);
                    }
                }
            }
            b.frames = if double { b.frames + to - from } else { b.frames - (to - from) };
        }
        1 => {
            let times = ["0.0083333", "0.04", "1", "1e-9", "1e9", "-0.0083333", "3.4e38", "0.001"];
            b.frame_time = times[rnd.below(times.len())].to_owned();
        }
        _ if !columns.is_empty() && b.frames > 0 => {
            let (i, k) = columns[rnd.below(columns.len())];
            let c = &mut b.hierarchy[i].columns[k];
            let shape = rnd.below(4);
            let factor = [0.0, -1.0, 1e3, 1e6, 1e30][rnd.below(5)];
            let one = rnd.below(c.len());
            for (f, v) in c.iter_mut().enumerate() {
                let x: f64 = v.parse().unwrap_or(0.0);
                *v = match shape {
                    0 => format!("{:?}", x * factor),
                    1 => format!("{:?}", x + if f % 2 == 0 { 360.0 } else { -720.0 }),
                    2 => (if f % 2 == 0 { "180" } else { "-180" }).to_owned(),
                    _ if f == one => EDGE_NUMBERS[rnd.below(EDGE_NUMBERS.len())].to_owned(),
                    _ => continue,
                };
            }
        }
        _ => {}
    }
}

/// How a mutation run changes a BVH text so that most results are still well-formed files
/// whose parts agree (the frames hold as many values as the channels declare, `Frames:` counts
/// them): 1 to 4 edits of the hierarchy ([`bvh_hierarchy_edit`]) or the motion
/// ([`bvh_motion_edit`]), and one time in eight a `Frames:` count that disagrees, a token edit
/// ([`ron_edits`]) or a text that is not such a file left to the token edits.
fn bvh_edits(m: &mut Vec<u8>, seeds: &[Vec<u8>], rnd: &mut Rnd) {
    let Some(mut b) = bvh_cut(m) else { return ron_edits(m, seeds, rnd) };
    for _ in 0..1 + rnd.below(4) {
        if rnd.below(2) == 0 {
            bvh_hierarchy_edit(&mut b, rnd);
        } else {
            bvh_motion_edit(&mut b, rnd);
        }
    }
    let declared =
        (rnd.below(16) == 0).then(|| [0, 1, b.frames + 1, b.frames.saturating_sub(1)][rnd.below(4)]);
    *m = bvh_join(&b, declared);
    if rnd.below(16) == 0 {
        ron_edits(m, seeds, rnd);
    }
}

/// A random-mutation run of the `bvh_import` oracle with edits that keep the file's parts in
/// agreement ([`bvh_edits`]): rotation orders changed, channels added and dropped with their
/// values, joint blocks doubled, cut and moved under other joints with their columns, joints of
/// one name, offsets and values on their limits, frames cut and doubled. Ignored by default, as
/// the cooked clip run.
#[test]
#[ignore]
fn bvh_structure_mutations_import_or_refuse_and_play_finite() {
    importer_mutations(
        "bvh_import",
        seeds("bvh_import", &["assets/bvh/capture.bvh"]),
        bvh_edits,
        oracle::bvh_bytes,
    );
}

/// A random-mutation run of the `gltf_import` oracle over glTF JSON files whose buffers are
/// data URIs (the repository's three such samples and the JSON regression seeds), changed
/// token by token ([`ron_edits`]): indices, counts, offsets and strides on their limits or
/// moved by a step, names and paths swapped (`"rotation"` for `"scale"`, a buffer's URI for a
/// path that leaves the folder), lines moved. Ignored by default, as the cooked clip run.
#[test]
#[ignore]
fn gltf_token_mutations_import_or_refuse_and_play_finite() {
    let samples = [
        "assets/gltf/AnimatedTriangle/AnimatedTriangle.gltf",
        "assets/gltf/BoxAnimated/BoxAnimated.gltf",
        "assets/gltf/SimpleSkin/SimpleSkin.gltf",
    ];
    let mut seeds = seeds("gltf_import", &samples);
    seeds.retain(|s| s.first() == Some(&b'{'));
    importer_mutations("gltf_import", seeds, ron_edits, oracle::gltf_bytes);
}

/// A random-mutation run of the `fbx_import` oracle over the ASCII FBX files (the repository's
/// textured quad from Blender and the ASCII regression seeds: two bones, FBX 6.1, an animated
/// blend shape, a NaN value), changed
/// token by token ([`ron_edits`]): property values, object ids and connection ends on their
/// limits, moved by a step or swapped, names swapped, lines moved. Ignored by default, as the
/// cooked clip run.
#[test]
#[ignore]
fn fbx_token_mutations_import_or_refuse_and_play_finite() {
    let mut seeds = seeds("fbx_import", &["assets/fbx/textured_quad/quad.fbx"]);
    seeds.retain(|s| s.starts_with(b"; FBX"));
    assert!(seeds.len() >= 3, "the ASCII seeds");
    importer_mutations("fbx_import", seeds, ron_edits, oracle::fbx_bytes);
}

/// A random-mutation run of the project rule (`oracle::project_with`) over every sample
/// project under `projects/`: an input is a line naming one of their RON files
/// (`crowd/scenes/main.scene.ron`, see `oracle::sample_project`), then that file's text changed
/// token by token ([`ron_edits`]:
/// numbers on their limits, names and strings swapped for others of the samples, paths that
/// leave the project, lines moved), so that most inputs parse and reach `marrow check`'s rules
/// and, when those pass, the player. Ignored by default, as the cooked clip run.
#[test]
#[ignore]
fn project_random_mutations_check_or_play_clean() {
    let seconds = mutation_seconds();
    let projects = oracle::sample_projects_read();
    let mut seeds = seeds("sample_projects", &[]);
    for (root, files) in &projects {
        let project = root.file_name().unwrap().to_string_lossy();
        for (path, text) in files {
            seeds.push(format!("{project}/{path}\n{text}").into_bytes());
        }
    }
    let named = std::cell::Cell::new(0u64);
    let (runs, checked) = random_mutations(
        &seeds,
        seconds,
        ron_edits,
        |_| {},
        |m| {
            let played = oracle::sample_project(m, &projects)?;
            named.set(named.get() + played.is_some() as u64);
            Ok(played.unwrap_or(false))
        },
    );
    eprintln!(
        "project mutations ({} sample projects): {runs} inputs in {seconds} s, {} naming a sample file, {checked} of those checked clean and played clean, the rest refused by name",
        projects.len(),
        named.get(),
    );
    assert!(runs > 0);
}

/// A random-mutation run of the `graph_compile` oracle on the locomotion sample's three graphs
/// (blend spaces, a state machine, IK), changed token by token ([`ron_edits`]). Ignored by
/// default, as the cooked clip run.
#[test]
#[ignore]
fn graph_random_mutations_compile_or_refuse_and_evaluate_finite() {
    let seconds = mutation_seconds();
    let rig = oracle::GraphRig::new();
    let samples = [
        "projects/locomotion/graphs/locomotion.graph.ron",
        "projects/locomotion/graphs/controller.graph.ron",
        "projects/locomotion/graphs/steering.graph.ron",
    ];
    let (runs, compiled) = random_mutations(
        &seeds("graph_compile", &samples),
        seconds,
        ron_edits,
        |_| {},
        |m| oracle::graph(m, &rig),
    );
    eprintln!(
        "graph_compile mutations: {runs} inputs in {seconds} s, {compiled} compiled and evaluated finite, the rest refused"
    );
    assert!(runs > 0);
}
