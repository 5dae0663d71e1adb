//! Bad input: every case builds its broken file here, imports it, and expects a clear error that
//! names the file and the object at fault, never a panic.

use crate::support;
use std::f32::consts::FRAC_1_SQRT_2;
use support::gltf_dir;

use std::path::{Path, PathBuf};

use marrow_engine::gltf::{self, ImportError, Location};

use crate::oracle;
use serde_json::{Value, json};

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("marrow-gltf-bad-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A small valid skinned, animated file: node 0 = mesh + skin, joints 1 -> 2, one rotation
/// animation on node 2. Data lives in `tri.bin`.
struct Doc {
    bin: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Doc {
    fn push(&mut self, bytes: &[u8], count: usize, ct: u32, kind: &str) -> usize {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        self.views.push(json!({"buffer": 0, "byteOffset": self.bin.len(), "byteLength": bytes.len()}));
        self.bin.extend_from_slice(bytes);
        self.accessors.push(
            json!({"bufferView": self.views.len() - 1, "componentType": ct, "count": count, "type": kind}),
        );
        self.accessors.len() - 1
    }
    fn f32s(&mut self, v: &[f32], comps: usize, kind: &str) -> usize {
        let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.push(&b, v.len() / comps, 5126, kind)
    }
    fn u16s(&mut self, v: &[u16], comps: usize, kind: &str) -> usize {
        let b: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        self.push(&b, v.len() / comps, 5123, kind)
    }
}

struct Case {
    json: Value,
    bin: Vec<u8>,
}

const POSITIONS: [f32; 9] = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0];
const WEIGHTS: [f32; 12] = [1.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0];

fn base(joints: &[u16], times: &[f32], rot: &[f32]) -> Case {
    custom(&POSITIONS, joints, &WEIGHTS, times, rot)
}

/// [`base`] with its own positions (3 vertices) and weights.
fn custom(positions: &[f32], joints: &[u16], weights: &[f32], times: &[f32], rot: &[f32]) -> Case {
    let mut d = Doc { bin: Vec::new(), views: Vec::new(), accessors: Vec::new() };
    let pos = d.f32s(positions, 3, "VEC3");
    let jo = d.u16s(joints, 4, "VEC4");
    let we = d.f32s(weights, 4, "VEC4");
    let id: Vec<f32> = glam::Mat4::IDENTITY
        .to_cols_array()
        .iter()
        .chain(glam::Mat4::IDENTITY.to_cols_array().iter())
        .copied()
        .collect();
    let ibm = d.f32s(&id, 16, "MAT4");
    let input = d.f32s(times, 1, "SCALAR");
    let output = d.f32s(rot, 4, "VEC4");
    let json = json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0, 1]}],
        "nodes": [
            {"name": "body", "mesh": 0, "skin": 0},
            {"name": "hip", "children": [2]},
            {"name": "knee", "translation": [0.0, 1.0, 0.0]}
        ],
        "meshes": [{"primitives": [{"attributes": {"POSITION": pos, "JOINTS_0": jo, "WEIGHTS_0": we}}]}],
        "skins": [{"joints": [1, 2], "inverseBindMatrices": ibm}],
        "animations": [{"name": "bend", "channels": [{"sampler": 0, "target": {"node": 2, "path": "rotation"}}],
                        "samplers": [{"input": input, "output": output}]}],
        "buffers": [{"uri": "tri.bin", "byteLength": 0}],
        "bufferViews": d.views,
        "accessors": d.accessors,
    });
    let mut c = Case { json, bin: d.bin };
    c.json["buffers"][0]["byteLength"] = json!(c.bin.len());
    c
}

fn good() -> Case {
    base(
        &[0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0],
        &[0.0, 1.0],
        &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, FRAC_1_SQRT_2, FRAC_1_SQRT_2],
    )
}

fn write(name: &str, c: &Case) -> PathBuf {
    let dir = temp_dir(name);
    std::fs::write(dir.join("tri.bin"), &c.bin).unwrap();
    let p = dir.join(format!("{name}.gltf"));
    std::fs::write(&p, serde_json::to_vec_pretty(&c.json).unwrap()).unwrap();
    p
}

/// Imports, expects `Invalid`, and returns its faults after checking the message names the file.
fn faults_of(path: &Path) -> Vec<gltf::Fault> {
    let err = gltf::import(path).expect_err("the broken file must not import");
    let text = err.to_string();
    let file_name = path.file_name().unwrap().to_str().unwrap();
    assert!(text.contains(file_name), "error does not name the file: {text}");
    match err {
        ImportError::Invalid { faults, .. } => faults,
        other => panic!("expected Invalid, got {other}"),
    }
}

#[test]
fn the_base_file_is_valid() {
    let p = write("valid", &good());
    let scene = gltf::import(&p).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scene.rigs[0].skeleton.bone_names, ["hip", "knee"]);
    assert_eq!(scene.rigs[0].bindings[0].node, 0);
}

#[test]
fn truncated_glb() {
    let bytes = std::fs::read(gltf_dir().join("RiggedSimple/RiggedSimple.glb")).unwrap();
    let dir = temp_dir("truncated");
    let p = dir.join("truncated.glb");
    std::fs::write(&p, &bytes[..bytes.len() / 2]).unwrap();
    let err = gltf::import(&p).unwrap_err();
    assert!(matches!(err, ImportError::Glb { .. }), "{err}");
    let text = err.to_string();
    assert!(text.contains("truncated.glb") && text.contains("truncated: header says"), "{text}");
    // Cut inside the header too.
    std::fs::write(&p, &bytes[..7]).unwrap();
    let text = gltf::import(&p).unwrap_err().to_string();
    assert!(text.contains("shorter than the 12-byte header"), "{text}");
}

#[test]
fn wrong_magic() {
    let mut bytes = std::fs::read(gltf_dir().join("RiggedSimple/RiggedSimple.glb")).unwrap();
    bytes[0..4].copy_from_slice(b"GLTF");
    let dir = temp_dir("magic");
    let p = dir.join("magic.glb");
    std::fs::write(&p, &bytes).unwrap();
    let err = gltf::import(&p).unwrap_err();
    assert!(matches!(err, ImportError::Glb { .. }));
    let text = err.to_string();
    assert!(text.contains("magic.glb") && text.contains("wrong magic"), "{text}");
}

#[test]
fn missing_bin() {
    let p = write("missingbin", &good());
    std::fs::remove_file(p.parent().unwrap().join("tri.bin")).unwrap();
    let faults = faults_of(&p);
    assert_eq!(faults[0].at, Location::Buffer(0));
    assert!(faults[0].message.contains("tri.bin"), "{}", faults[0]);
}

#[test]
fn accessor_out_of_bounds() {
    let mut c = good();
    c.json["accessors"][0]["count"] = json!(300); // POSITION: 3 vertices stored, 300 claimed
    let faults = faults_of(&write("oob", &c));
    let f = faults.iter().find(|f| f.at == Location::Accessor(0)).unwrap_or_else(|| panic!("{faults:?}"));
    assert!(f.message.contains("out of bounds"), "{f}");
}

#[test]
fn sparse_offsets_that_overflow_are_out_of_bounds() {
    let mut c = good();
    // POSITION gets a sparse block whose index offset would wrap a usize.
    c.json["accessors"][0]["sparse"] = json!({
        "count": 1,
        "indices": {"bufferView": 0, "byteOffset": u64::MAX, "componentType": 5121},
        "values": {"bufferView": 0}
    });
    let faults = faults_of(&write("sparse_overflow", &c));
    let f = faults.iter().find(|f| f.at == Location::Accessor(0)).unwrap_or_else(|| panic!("{faults:?}"));
    assert!(f.message.contains("out of bounds"), "{f}");
}

#[test]
fn an_accessor_with_no_data_cannot_ask_for_gigabytes() {
    let mut c = good();
    // The inverse bind matrices: no bufferView, 2^26 - 1 MAT4s (a billion zeros) claimed.
    let ibm = c.json["skins"][0]["inverseBindMatrices"].as_u64().unwrap() as usize;
    c.json["accessors"][ibm] = json!({"count": 67108863, "type": "MAT4", "componentType": 5126});
    let faults = faults_of(&write("no_data_huge", &c));
    let f = faults.iter().find(|f| f.at == Location::Accessor(ibm)).unwrap_or_else(|| panic!("{faults:?}"));
    assert!(f.message.contains("past the import's budget of 1024 MiB"), "{f}");
}

#[test]
fn an_accessor_shared_by_many_primitives_is_refused_by_what_it_would_build() {
    let mut c = good();
    // 40 primitives whose POSITION is one data-less accessor of 6M elements: decoded once it
    // would fit the decoded budget, but the 40 position streams built from it (2.7 GB) are
    // counted per use and refused before anything is decoded.
    c.json["accessors"]
        .as_array_mut()
        .unwrap()
        .push(json!({"count": 6_000_000, "type": "VEC3", "componentType": 5126}));
    let big = c.json["accessors"].as_array().unwrap().len() - 1;
    let prims: Vec<Value> = (0..40).map(|_| json!({"attributes": {"POSITION": big}})).collect();
    c.json["meshes"].as_array_mut().unwrap().push(json!({"primitives": prims}));
    c.json["nodes"].as_array_mut().unwrap().push(json!({"name": "many", "mesh": 1}));
    let faults = faults_of(&write("shared_accessor", &c));
    let f = faults.iter().find(|f| f.at == Location::File).unwrap_or_else(|| panic!("{faults:?}"));
    assert!(f.message.contains("41 primitives and 1 skins would hold 2.7 GB of positions"), "{f}");
    assert!(f.message.contains("the limit is 512.0 MB of built data per import"), "{f}");
}

#[test]
fn uris_reach_only_regular_files_inside_the_gltf_folder() {
    let outside = temp_dir("uri_outside_target");
    std::fs::write(outside.join("secret.bin"), vec![7u8; 4096]).unwrap();
    let cases: Vec<(&str, String, &str)> = vec![
        ("uri_absolute", "/etc/passwd".to_owned(), "an absolute path"),
        ("uri_climbs", "../../../../../../etc/passwd".to_owned(), "climbs out of the folder"),
        ("uri_scheme", "file:///etc/passwd".to_owned(), "scheme"),
        ("uri_device", "zero.bin".to_owned(), "through a link"),
        ("uri_link", "secret.bin".to_owned(), "through a link"),
    ];
    for (name, uri, why) in cases {
        let mut c = good();
        c.json["buffers"][0]["uri"] = json!(uri);
        let p = write(name, &c);
        let dir = p.parent().unwrap();
        #[cfg(unix)]
        {
            if name == "uri_device" {
                std::os::unix::fs::symlink("/dev/zero", dir.join("zero.bin")).unwrap();
            }
            if name == "uri_link" {
                std::os::unix::fs::symlink(outside.join("secret.bin"), dir.join("secret.bin")).unwrap();
            }
        }
        if cfg!(not(unix)) && (name == "uri_device" || name == "uri_link") {
            continue;
        }
        let faults = faults_of(&p);
        let f = faults
            .iter()
            .find(|f| f.at == Location::Buffer(0))
            .unwrap_or_else(|| panic!("{name}: {faults:?}"));
        assert!(
            f.message.contains(why) && f.message.contains("inside the glTF file's folder"),
            "{name}: {f}"
        );
    }
    // A FIFO would block the read forever; it is refused without opening it (a device file is
    // refused the same way; one reached through a link is refused as above).
    #[cfg(unix)]
    {
        let mut c = good();
        c.json["buffers"][0]["uri"] = json!("pipe.bin");
        let p = write("uri_fifo", &c);
        let fifo = p.parent().unwrap().join("pipe.bin");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success());
        if made {
            let faults = faults_of(&p);
            assert!(faults.iter().any(|f| f.message.contains("not a regular file")), "{faults:?}");
        }
    }
    // A buffer file longer than its byteLength is read only that far.
    let mut c = good();
    c.bin.extend(std::iter::repeat_n(0u8, 1 << 20)); // byteLength stays the original
    let p = write("uri_long", &c);
    gltf::import(&p).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn joint_index_past_the_joint_count() {
    let c = base(
        &[0, 0, 0, 0, 0, 5, 0, 0, 1, 0, 0, 0],
        &[0.0, 1.0],
        &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, FRAC_1_SQRT_2, FRAC_1_SQRT_2],
    );
    let faults = faults_of(&write("joint", &c));
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert_eq!(faults[0].at, Location::Accessor(1), "the JOINTS_0 accessor");
    assert!(
        faults[0].message.contains("vertex 1 names joint 5") && faults[0].message.contains("has 2 joints"),
        "{}",
        faults[0]
    );
}

#[test]
fn nan_key_values() {
    let c = base(
        &[0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0],
        &[0.0, 1.0],
        &[0.0, 0.0, 0.0, 1.0, 0.0, f32::NAN, 0.7, 0.7],
    );
    let faults = faults_of(&write("nan", &c));
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert_eq!(faults[0].at, Location::Accessor(5), "the animation output accessor");
    assert!(
        faults[0].message.contains("animation 0 channel 0") && faults[0].message.contains("not finite"),
        "{}",
        faults[0]
    );
}

#[test]
fn non_increasing_key_times() {
    let c = base(
        &[0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0],
        &[1.0, 1.0],
        &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, FRAC_1_SQRT_2, FRAC_1_SQRT_2],
    );
    let faults = faults_of(&write("times", &c));
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert_eq!(faults[0].at, Location::AnimationSampler { animation: 0, sampler: 0 });
    assert!(faults[0].message.contains("not increasing"), "{}", faults[0]);
    assert!(faults[0].to_string().starts_with("animation 0 sampler 0: input accessor 4"));
}

#[test]
fn skin_joints_do_not_form_a_tree() {
    let mut c = good();
    // Joints 1 and 3 are roots under different parents (scene root and node 2's sibling node 4).
    c.json["nodes"] = json!([
        {"mesh": 0, "skin": 0},
        {"name": "a", "children": [2]},
        {"name": "b"},
        {"name": "c"},
        {"name": "holder", "children": [3]}
    ]);
    c.json["scenes"][0]["nodes"] = json!([0, 1, 4]);
    c.json["skins"][0]["joints"] = json!([1, 3]);
    let faults = faults_of(&write("tree", &c));
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert_eq!(faults[0].at, Location::Skin(0));
    assert!(faults[0].message.contains("do not form a tree"), "{}", faults[0]);
}

#[test]
fn node_cycle() {
    let mut c = good();
    c.json["nodes"][2]["children"] = json!([1]); // 1 -> 2 -> 1
    let faults = faults_of(&write("cycle", &c));
    let f = faults.iter().find(|f| f.message.contains("cycle")).unwrap_or_else(|| panic!("{faults:?}"));
    assert_eq!(f.at, Location::Node(1));
    assert!(f.message.contains("1 -> 2 -> 1"), "{f}");
}

#[test]
fn every_fault_is_collected() {
    let mut c =
        base(&[0, 0, 0, 0, 0, 9, 0, 0, 1, 0, 0, 0], &[1.0, 0.5], &[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.7, 0.7]);
    c.json["nodes"][0]["mesh"] = json!(0);
    c.json["accessors"][3]["count"] = json!(1); // one inverse bind matrix for two joints
    let faults = faults_of(&write("many", &c));
    assert!(faults.len() >= 2, "{faults:?}");
    assert!(faults.iter().any(|f| f.at == Location::Accessor(3)));
    assert!(faults.iter().any(|f| f.at == Location::AnimationSampler { animation: 0, sampler: 0 }));
}

#[test]
fn garbage_never_panics() {
    // Random mutations of a valid file's bytes: every outcome is Ok or Err, never a panic.
    let bytes = std::fs::read(gltf_dir().join("RiggedSimple/RiggedSimple.glb")).unwrap();
    let dir = temp_dir("garbage");
    let mut seed = 0x2545F4914F6CDD1Du64;
    for i in 0..200 {
        let mut b = bytes.clone();
        for _ in 0..8 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let at = (seed as usize) % b.len();
            b[at] = (seed >> 32) as u8;
        }
        let p = dir.join(format!("g{i}.glb"));
        std::fs::write(&p, &b).unwrap();
        let _ = gltf::import(&p);
    }
}

#[test]
fn long_node_chains_and_cycles_import_in_linear_work() {
    // 200,000 nodes in one chain, then the same chain closed into a cycle: the hierarchy checks
    // visit each node once (a walk up from every node would take hours here).
    let n = 200_000;
    let mut c = good();
    let mut nodes: Vec<Value> = c.json["nodes"].as_array().unwrap().clone();
    let first = nodes.len();
    for i in 0..n {
        let children = if i + 1 < n { json!([first + i + 1]) } else { json!([]) };
        nodes.push(json!({"name": format!("n{i}"), "children": children}));
    }
    c.json["nodes"] = json!(nodes);
    c.json["scenes"][0]["nodes"].as_array_mut().unwrap().push(json!(first));
    let scene = gltf::import(write("long_chain", &c)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scene.nodes.len(), first + n);
    assert_eq!(scene.order.len(), first + n);
    c.json["nodes"][first + n - 1]["children"] = json!([first]);
    let faults = faults_of(&write("long_cycle", &c));
    let f = faults
        .iter()
        .find(|f| f.message.contains("is its own ancestor"))
        .unwrap_or_else(|| panic!("{faults:?}"));
    assert_eq!(f.at, Location::Node(first), "named from its lowest node");
    assert!(
        f.message.contains("(200000 nodes)") && f.message.len() < 300,
        "{}",
        &f.message[..f.message.len().min(400)]
    );
}

// ---- What the import accepts plays to finite numbers (check and play agree) ----

impl Case {
    /// Appends f32 data as a new accessor; returns its index.
    fn add_f32s(&mut self, v: &[f32], kind: &str) -> usize {
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let views = self.json["bufferViews"].as_array_mut().unwrap();
        views.push(json!({"buffer": 0, "byteOffset": self.bin.len(), "byteLength": v.len() * 4}));
        let view = views.len() - 1;
        self.bin.extend(v.iter().flat_map(|x| x.to_le_bytes()));
        let comps = match kind {
            "SCALAR" => 1,
            "VEC3" => 3,
            _ => 4,
        };
        let accessors = self.json["accessors"].as_array_mut().unwrap();
        accessors
            .push(json!({"bufferView": view, "componentType": 5126, "count": v.len() / comps, "type": kind}));
        self.json["buffers"][0]["byteLength"] = json!(self.bin.len());
        self.json["accessors"].as_array().unwrap().len() - 1
    }
}

const ROT: [f32; 8] = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, FRAC_1_SQRT_2, FRAC_1_SQRT_2];
const JOINTS: [u16; 12] = [0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0];

/// Imports `c` (expecting success) and asserts the fuzz oracle's rule: every animation evaluates
/// to finite joints, palettes and vertices.
fn imports_and_plays_finite(name: &str, c: &Case) -> gltf::ImportedScene {
    let scene = gltf::import(write(name, c)).unwrap_or_else(|e| panic!("{e}"));
    oracle::gltf_scene(&scene).unwrap_or_else(|e| panic!("{name}: {e}"));
    scene
}

#[test]
fn a_tiny_weight_beside_a_huge_one_drops_its_stray_joint() {
    // Vertex 1: weight 1e38 on joint 0 and 1e-40 on joint 9 of a 2-joint skin. The tiny weight
    // normalizes to zero, so the stray joint must go with it instead of reaching the skinning job.
    let weights = [1.0, 0.0, 0.0, 0.0, 1e38, 1e-40, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0];
    let c = custom(&POSITIONS, &[0, 0, 0, 0, 0, 9, 0, 0, 1, 0, 0, 0], &weights, &[0.0, 1.0], &ROT);
    let scene = imports_and_plays_finite("tinyweight", &c);
    let st = scene.meshes[0].primitives[0].skin.as_ref().unwrap();
    assert_eq!((st.joints[1], st.weights[1]), ([0, 0, 0, 0], [1.0, 0.0, 0.0, 0.0]));
}

#[test]
fn weights_whose_sum_overflows_f32_normalize_instead_of_zeroing_the_vertex() {
    let weights = [1.0, 0.0, 0.0, 0.0, 3e38, 3e38, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0];
    let scene =
        imports_and_plays_finite("bigweights", &custom(&POSITIONS, &JOINTS, &weights, &[0.0, 1.0], &ROT));
    let st = scene.meshes[0].primitives[0].skin.as_ref().unwrap();
    assert_eq!(st.weights[1], [0.5, 0.5, 0.0, 0.0]);
}

#[test]
fn a_nan_weight_is_refused_naming_its_vertex() {
    let weights = [1.0, 0.0, 0.0, 0.0, 0.5, f32::NAN, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0];
    let faults = faults_of(&write("nanweight", &custom(&POSITIONS, &JOINTS, &weights, &[0.0, 1.0], &ROT)));
    assert_eq!(faults[0].at, Location::Accessor(2), "the WEIGHTS_0 accessor");
    assert!(faults[0].message.contains("WEIGHTS_0: element 1 is not finite (NaN)"), "{}", faults[0]);
}

#[test]
fn default_morph_weights_past_the_f32_range_are_refused() {
    let mut c = good();
    let delta = c.add_f32s(&POSITIONS, "VEC3");
    c.json["meshes"][0]["primitives"][0]["targets"] = json!([{"POSITION": delta}]);
    c.json["meshes"][0]["weights"] = json!([1e39]);
    let faults = faults_of(&write("morph1e39", &c));
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert_eq!(faults[0].at, Location::Mesh(0));
    assert!(faults[0].message.contains("default weight 0 is past the 32-bit float range"), "{}", faults[0]);
    // The same weight on the node.
    c.json["meshes"][0]["weights"] = json!([0.5]);
    c.json["nodes"][0]["weights"] = json!([-1e39]);
    let faults = faults_of(&write("morph1e39node", &c));
    assert_eq!(faults[0].at, Location::Node(0));
    assert!(faults[0].message.contains("morph weight 0 is past"), "{}", faults[0]);
}

/// glTF ignores a skinned mesh node's own transform: its vertices go where its joints put them.
/// A node scaled by 1e20 or 1e-20 has a determinant (1e60, 1e-60) that `f32` cannot hold, and
/// one scaled by zero on an axis has no inverse at all; the skinned vertices were placed
/// through that inverse (taken as identity) and back out by the node's matrix: scaled by 1e20
/// twice (infinite: both found by the token-level glTF mutation run) or collapsed.
#[test]
fn a_skinned_mesh_node_scaled_past_the_f32_determinant_or_to_zero_is_placed_by_its_joints_alone() {
    let plain = imports_and_plays_finite("skinned_unscaled", &good());
    let edits = [
        ("scale", json!([1e20f32, 1e20f32, 1e20f32])),
        ("scale", json!([1e-20f32, 1e-20f32, 1e-20f32])),
        ("scale", json!([-3e25f32, -3e25f32, -3e25f32])),
        ("scale", json!([1e20f32, 0.0, 1e20f32])),
        ("scale", json!([0.0, 0.0, 0.0])),
        ("matrix", json!(vec![0.0f32; 16])),
    ];
    for (i, (field, value)) in edits.into_iter().enumerate() {
        let mut c = good();
        c.json["nodes"][0][field] = value.clone();
        let scaled = imports_and_plays_finite(&format!("skinned_scaled_{i}"), &c);
        let (mut a, mut b) = (gltf::ScenePose::new(&plain), gltf::ScenePose::new(&scaled));
        for t in [0.0, 0.5, 1.0] {
            a.evaluate(&plain, Some(0), t).unwrap();
            b.evaluate(&scaled, Some(0), t).unwrap();
            let want = a.placed_vertices(&plain, 0, 0, 64).unwrap();
            let got = b.placed_vertices(&scaled, 0, 0, 64).unwrap();
            assert_eq!(want.len(), 3);
            assert_eq!(got, want, "{field} {value} at {t}");
        }
    }
}

#[test]
fn rotation_keys_of_huge_or_tiny_magnitude_normalize() {
    for (name, k) in [("huge", 1e20f32), ("tiny", 1e-30)] {
        let rot = [0.0, 0.0, 0.0, k, 0.0, 0.0, k, k];
        let scene = imports_and_plays_finite(name, &base(&JOINTS, &[0.0, 1.0], &rot));
        let clip = &scene.animations[0].clips[0].clip;
        let r = clip.channels()[1].rotation.as_ref().unwrap().values()[1];
        assert!((r.z - FRAC_1_SQRT_2).abs() < 1e-6 && (r.w - FRAC_1_SQRT_2).abs() < 1e-6, "{name}: {r}");
    }
}

#[test]
fn cubic_rotation_keys_past_the_f32_square_sample_to_unit_rotations() {
    use marrow_engine::track::Track;
    // Values and tangents near 1e20: their squares overflow f32; the curve still has a direction.
    let k = 1e20f32;
    let q = |x: f32, w: f32| glam::Quat::from_xyzw(x, 0.0, 0.0, w);
    let track = Track::cubic_from_keys(
        vec![0.0, 1.0],
        vec![q(0.0, 0.0), q(k, k)],
        vec![q(0.0, k), q(k, 0.0)],
        vec![q(k, k), q(0.0, 0.0)],
    )
    .unwrap();
    for t in [0.0, 0.25, 0.5, 0.99, 1.0] {
        let r = track.sample(t).unwrap();
        assert!(r.is_finite() && (r.length() - 1.0).abs() < 1e-5, "t = {t}: {r}");
    }
}

#[test]
fn scales_that_compound_past_f32_are_refused_naming_the_first_node() {
    let mut c = good();
    c.json["nodes"][1]["scale"] = json!([1e20, 1e20, 1e20]);
    c.json["nodes"][2]["scale"] = json!([1e20, 1e20, 1e20]);
    let faults = faults_of(&write("compound", &c));
    assert_eq!(faults[0].at, Location::Node(2), "named on the node where it happens: {faults:?}");
    assert_eq!(faults.iter().filter(|f| matches!(f.at, Location::Node(_))).count(), 1, "not on its parent");
    assert!(faults[0].message.contains("scale of 1.0e40"), "{}", faults[0]);
}

#[test]
fn an_animated_scale_that_reaches_past_f32_is_refused() {
    let mut c = good();
    let input = c.add_f32s(&[0.0, 1.0], "SCALAR");
    let output = c.add_f32s(&[1.0, 1.0, 1.0, 1e35, 1e35, 1e35], "VEC3");
    c.json["nodes"][1]["translation"] = json!([0.0, 0.0, 0.0]);
    c.json["animations"][0]["samplers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"input": input, "output": output}));
    c.json["animations"][0]["channels"]
        .as_array_mut()
        .unwrap()
        .push(json!({"sampler": 1, "target": {"node": 2, "path": "scale"}}));
    // Alone, 1e35 fits f32, but the vertices it carries (1 unit) and the knee's world reach it.
    let faults = faults_of(&write("animscale", &c));
    assert_eq!(faults[0].at, Location::Node(2), "{faults:?}");
    assert!(faults[0].message.contains("at rest or animated"), "{}", faults[0]);
}

#[test]
fn vertices_that_reach_past_f32_are_refused_naming_the_primitive() {
    let positions = [0.0, 0.0, 0.0, 3e38, 0.0, 0.0, 0.0, 1.0, 0.0];
    let faults = faults_of(&write("farvertex", &custom(&positions, &JOINTS, &WEIGHTS, &[0.0, 1.0], &ROT)));
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert_eq!(faults[0].at, Location::Primitive { mesh: 0, primitive: 0 });
    assert!(faults[0].message.contains("drawn by node 0"), "{}", faults[0]);
}

#[test]
fn a_nan_position_is_refused_naming_its_element() {
    let positions = [0.0, 0.0, 0.0, f32::NAN, 0.0, 0.0, 0.0, 1.0, 0.0];
    let faults = faults_of(&write("nanpos", &custom(&positions, &JOINTS, &WEIGHTS, &[0.0, 1.0], &ROT)));
    assert_eq!(faults[0].at, Location::Accessor(0));
    assert!(faults[0].message.contains("POSITION: element 1 is not finite (NaN)"), "{}", faults[0]);
}

#[test]
fn large_but_sound_scenes_still_import() {
    // A kilometre-wide scene in millimetres, scaled up on a deep-ish chain: far inside the limit.
    let mut c = good();
    c.json["nodes"][1]["translation"] = json!([1e6, 0.0, 0.0]);
    c.json["nodes"][1]["scale"] = json!([1000.0, 1000.0, 1000.0]);
    imports_and_plays_finite("largesound", &c);
}
