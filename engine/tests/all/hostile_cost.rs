//! Hostile input, the cost half (issue 29): files of a few KB (or MB) whose objects share one
//! accessor, sampler, bufferView or joint list many times over must be refused, in under a
//! second, with a message naming the counts and the limit; and the name-keyed and per-node
//! passes of the import must stay linear (N = 20k in under a second, a bound the issue asks
//! for). Every file is generated here; none is kept.

use std::time::{Duration, Instant};

use marrow_engine::gltf::{self, ImportError, ImportedScene};
use marrow_engine::project::ImportAssets;
use serde_json::{Value, json};

/// A GLB of `json` with `bin` as its BIN chunk (buffer 0, when the JSON names one).
fn glb(mut json: Value, bin: &[u8]) -> Vec<u8> {
    if !bin.is_empty() {
        json["buffers"] = json!([{"byteLength": bin.len()}]);
    }
    json["asset"] = json!({"version": "2.0"});
    let mut j = serde_json::to_vec(&json).unwrap();
    while !j.len().is_multiple_of(4) {
        j.push(b' ');
    }
    let mut b = bin.to_vec();
    while !b.len().is_multiple_of(4) {
        b.push(0);
    }
    let total = 12 + 8 + j.len() + if b.is_empty() { 0 } else { 8 + b.len() };
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(j.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&j);
    if !b.is_empty() {
        out.extend_from_slice(&(b.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&b);
    }
    out
}

fn import(json: Value, bin: &[u8]) -> Result<ImportedScene, ImportError> {
    gltf::import_slice(&glb(json, bin), std::path::Path::new("hostile.glb"), None)
}

/// Imports and expects a refusal within a second; returns the faults' text.
fn refused_fast(json: Value, bin: &[u8]) -> String {
    let t = Instant::now();
    let r = import(json, bin);
    let took = t.elapsed();
    let text = match r {
        Ok(_) => panic!("the amplifying file imported (in {took:?})"),
        Err(e) => e.faults().iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"),
    };
    assert!(took < Duration::from_secs(1), "refused only after {took:?}: {text}");
    assert!(text.contains("the limit is 512.0 MB"), "the refusal does not name the limit: {text}");
    text
}

/// Runs `f` and asserts it took under a second (the issue's bound for N = 20k). A run that
/// misses the bound is run once more and the faster of the two counts: a path superlinear at
/// N = 20k takes seconds every time, while a run the machine's other work slowed (the suite's
/// other test thread, a build beside it) does not repeat its delay.
fn linear<T>(what: &str, f: impl Fn() -> T) -> T {
    let t = Instant::now();
    let out = f();
    let first = t.elapsed();
    if first < Duration::from_secs(1) {
        return out;
    }
    let t = Instant::now();
    let out = f();
    let took = t.elapsed().min(first);
    assert!(took < Duration::from_secs(1), "{what} took {took:?} at N = 20k (first run {first:?})");
    out
}

/// `n` increasing key times (0, 1/30, 2/30 ...) as little-endian f32 bytes.
fn times_bin(n: usize) -> Vec<u8> {
    (0..n).flat_map(|k| (k as f32 / 30.0).to_le_bytes()).collect()
}

/// Accessor 0: `keys` increasing times in the BIN chunk; accessor 1: `keys` data-less VEC3s.
fn keyed(keys: usize) -> (Value, Vec<u8>) {
    let bin = times_bin(keys);
    let json = json!({
        "bufferViews": [{"buffer": 0, "byteLength": bin.len()}],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": keys, "type": "SCALAR",
             "min": [0.0], "max": [(keys - 1) as f32 / 30.0]},
            {"componentType": 5126, "count": keys, "type": "VEC3"}
        ]
    });
    (json, bin)
}

/// A data-less VEC3 accessor of 5M elements (15M zeros: within the decoder's cap of 2^24
/// values and within the decoded-bytes budget, decoded once).
fn big_vec3() -> Value {
    json!({"componentType": 5126, "count": 5_000_000, "type": "VEC3"})
}

#[test]
fn a_data_less_accessor_shared_by_40_primitives_is_refused_naming_the_limit() {
    let prims: Vec<Value> = (0..40).map(|_| json!({"attributes": {"POSITION": 0}})).collect();
    let text = refused_fast(
        json!({"accessors": [big_vec3()], "meshes": [{"primitives": prims}], "nodes": [{"mesh": 0}]}),
        &[],
    );
    assert!(text.contains("40 primitives would hold 2.2 GB of positions"), "{text}");
}

#[test]
fn a_data_less_accessor_shared_by_many_attributes_is_refused() {
    let attrs = json!({"POSITION": 0, "NORMAL": 0, "TANGENT": 1, "COLOR_0": 1, "TEXCOORD_0": 2});
    let prims: Vec<Value> = (0..8).map(|_| json!({"attributes": attrs})).collect();
    let text = refused_fast(
        json!({
            "accessors": [big_vec3(),
                {"componentType": 5126, "count": 5_000_000, "type": "VEC4"},
                {"componentType": 5126, "count": 5_000_000, "type": "VEC2"}],
            "meshes": [{"primitives": prims}], "nodes": [{"mesh": 0}]
        }),
        &[],
    );
    for kind in ["positions", "normals", "tangents", "colours", "texture coordinates"] {
        assert!(text.contains(kind), "{kind} not named: {text}");
    }
}

#[test]
fn a_data_less_accessor_shared_by_many_morph_targets_is_refused() {
    let targets: Vec<Value> = (0..100).map(|_| json!({"POSITION": 0, "NORMAL": 0})).collect();
    let text = refused_fast(
        json!({
            "accessors": [big_vec3()],
            "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "targets": targets}]}],
            "nodes": [{"mesh": 0}]
        }),
        &[],
    );
    assert!(text.contains("of morph targets"), "{text}");
}

#[test]
fn many_samplers_sharing_one_input_are_refused() {
    let (mut j, bin) = keyed(1_000_000);
    let samplers: Vec<Value> = (0..500).map(|_| json!({"input": 0, "output": 1})).collect();
    j["nodes"] = json!([{"name": "n"}]);
    j["animations"] = json!([{"samplers": samplers, "channels": []}]);
    let text = refused_fast(j, &bin);
    assert!(text.contains("500 animation samplers"), "{text}");
}

#[test]
fn many_channels_sharing_one_sampler_are_refused() {
    let (mut j, bin) = keyed(1_000_000);
    j["nodes"] = Value::Array((0..100).map(|k| json!({"name": format!("n{k}")})).collect());
    let channels: Vec<Value> =
        (0..100).map(|k| json!({"sampler": 0, "target": {"node": k, "path": "translation"}})).collect();
    j["animations"] = json!([{"samplers": [{"input": 0, "output": 1}], "channels": channels}]);
    let text = refused_fast(j, &bin);
    assert!(text.contains("100 animation channels") && text.contains("of animation keys"), "{text}");
}

#[test]
fn images_sharing_one_buffer_view_share_its_bytes() {
    let bin = vec![0x89u8; 1 << 20];
    let images: Vec<Value> = (0..500).map(|_| json!({"bufferView": 0, "mimeType": "image/png"})).collect();
    let scene =
        import(json!({"bufferViews": [{"buffer": 0, "byteLength": bin.len()}], "images": images}), &bin)
            .expect("images sharing a bufferView import");
    assert_eq!(scene.images.len(), 500);
    let first = &scene.images[0].bytes;
    assert_eq!(first.len(), 1 << 20);
    // One copy of the bytes, however many images name the view (500 copies would be 500 MB).
    assert!(scene.images.iter().all(|im| std::sync::Arc::ptr_eq(&im.bytes, first)));
}

/// Node 0 a root, nodes 1..=n its children (the joints).
fn joint_nodes(n: usize) -> Value {
    let mut nodes = vec![json!({"name": "root", "children": (1..=n).collect::<Vec<_>>()})];
    nodes.extend((1..=n).map(|k| json!({"name": format!("j{k}")})));
    Value::Array(nodes)
}

#[test]
fn skins_sharing_joints_times_channels_are_refused() {
    // 40 skins listing the same 40 joints in 40 orders: 40 rigs, each joint a bone of all 40,
    // so every channel's keys are copied into 40 clips.
    let (mut j, bin) = keyed(200_000);
    j["nodes"] = joint_nodes(40);
    j["skins"] = Value::Array(
        (0..40).map(|s| json!({"joints": (0..40).map(|k| 1 + (k + s) % 40).collect::<Vec<_>>()})).collect(),
    );
    let channels: Vec<Value> =
        (1..=40).map(|k| json!({"sampler": 0, "target": {"node": k, "path": "translation"}})).collect();
    j["animations"] = json!([{"samplers": [{"input": 0, "output": 1}], "channels": channels}]);
    let text = refused_fast(j, &bin);
    assert!(text.contains("40 animation channels") && text.contains("GB of animation keys"), "{text}");
}

#[test]
fn markers_times_rigs_are_refused() {
    // 2,000 one-joint skins (2,000 rigs), one animation touching every rig, 20,000 markers:
    // each marker copied onto each rig's clip.
    let (mut j, bin) = keyed(2);
    j["nodes"] = joint_nodes(2000);
    j["skins"] = Value::Array((1..=2000).map(|k| json!({"joints": [k]})).collect());
    let channels: Vec<Value> =
        (1..=2000).map(|k| json!({"sampler": 0, "target": {"node": k, "path": "translation"}})).collect();
    let markers: Vec<Value> = (0..20_000).map(|k| json!({"name": "m", "time": k as f64})).collect();
    j["animations"] = json!([{
        "samplers": [{"input": 0, "output": 1}], "channels": channels, "extras": {"markers": markers}
    }]);
    let text = refused_fast(j, &bin);
    assert!(text.contains("of markers"), "{text}");
}

#[test]
fn a_byte_stride_of_zero_is_a_named_fault() {
    let bin: Vec<u8> =
        [0.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    let r = import(
        json!({
            "bufferViews": [{"buffer": 0, "byteLength": 36, "byteStride": 12},
                            {"buffer": 0, "byteLength": 36, "byteStride": 0}],
            "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3"},
                          {"bufferView": 1, "componentType": 5126, "count": 3, "type": "VEC3"}],
            "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "TEXCOORD_1": 1}}]}],
            "nodes": [{"mesh": 0}]
        }),
        &bin,
    );
    let text = r.map(|_| "imported".to_owned()).unwrap_or_else(|e| e.to_string());
    assert!(text.contains("bufferView 1") && text.contains("byteStride is 0"), "{text}");
}

// ------------------------------------------------------------------ superlinear paths, N = 20k

const N: usize = 20_000;

/// Imports `json` and `bin` from memory, derives the project's assets (and, with `entity`, the
/// model entity), as opening a project with the file does; timed by [`linear`] from the GLB
/// bytes on (building the test's file is not the import's cost). The model entity poses every
/// rig once (its per-rig allocations cost a debug build about 18 us a rig), so the tests whose
/// N is rigs leave it out of the timing and build it after.
fn import_all(what: &str, json: Value, bin: &[u8], entity: bool) -> ImportAssets {
    let g = glb(json, bin);
    let a = linear(what, || {
        let scene = gltf::import_slice(&g, std::path::Path::new("hostile.glb"), None)
            .unwrap_or_else(|e| panic!("{e}"));
        if entity {
            let _entity = gltf::model_entity(&scene, "m.glb", "m", &|_| None);
        }
        ImportAssets::new(scene)
    });
    if !entity {
        let _entity = gltf::model_entity(&a.scene, "m.glb", "m", &|_| None);
    }
    a
}

#[test]
fn colliding_animation_names_are_linear() {
    let (mut j, bin) = keyed(2);
    j["nodes"] = json!([{"name": "n"}]);
    j["animations"] = Value::Array(
        (0..N)
            .map(|_| {
                json!({"name": "walk", "samplers": [{"input": 0, "output": 1}],
                       "channels": [{"sampler": 0, "target": {"node": 0, "path": "translation"}}]})
            })
            .collect(),
    );
    let a = import_all("colliding animation names", j, &bin, true);
    assert_eq!(a.scene.animations[0].name, "walk");
    assert_eq!(a.scene.animations[1].name, "walk#2");
    assert_eq!(a.scene.animations[N - 1].name, format!("walk#{N}"));
}

#[test]
fn colliding_morph_target_names_are_linear() {
    let bin: Vec<u8> = [0.0f32; 9].iter().flat_map(|v| v.to_le_bytes()).collect();
    let targets: Vec<Value> = (0..N).map(|_| json!({"POSITION": 0})).collect();
    let j = json!({
        "bufferViews": [{"buffer": 0, "byteLength": 36}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                       "min": [0.0, 0.0, 0.0], "max": [0.0, 0.0, 0.0]}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "targets": targets}],
                    "extras": {"targetNames": vec!["smile"; N]}}],
        "nodes": [{"mesh": 0}]
    });
    let a = import_all("colliding morph target names", j, &bin, true);
    let names = &a.scene.meshes[0].target_names;
    assert_eq!((names[0].as_str(), names[1].as_str()), ("smile", "smile#2"));
    assert_eq!(names[N - 1], format!("smile#{N}"));
}

#[test]
fn skins_with_one_name_are_linear() {
    let mut j = json!({});
    j["nodes"] = joint_nodes(N);
    j["skins"] = Value::Array((1..=N).map(|k| json!({"name": "body", "joints": [k]})).collect());
    let a = import_all("skins with one name", j, &[], false);
    assert_eq!(a.scene.rigs.len(), N);
    assert_eq!(a.scene.rigs[1].skeleton.name, "body#2");
    assert_eq!(a.scene.rigs[N - 1].skeleton.name, format!("body#{N}"));
}

#[test]
fn distinct_skins_and_identical_skins_are_linear() {
    let mut j = json!({});
    j["nodes"] = joint_nodes(N);
    // N distinct skins, then N skins identical to the first N (sharing their rigs).
    let skins: Vec<Value> = (1..=N).chain(1..=N).map(|k| json!({"joints": [k]})).collect();
    j["skins"] = Value::Array(skins);
    let a = import_all("distinct skins", j, &[], false);
    assert_eq!(a.scene.rigs.len(), N);
    assert_eq!(a.scene.skins[N + 7].rig, 7);
}

#[test]
fn skinned_mesh_nodes_are_linear() {
    let bin: Vec<u8> = [0.0f32; 9]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .chain([0u8; 12 * 2])
        .chain([1.0f32, 0.0, 0.0, 0.0].iter().cycle().take(12).flat_map(|v| v.to_le_bytes()))
        .collect();
    let mut nodes = vec![json!({"name": "joint"})];
    nodes.extend((0..N).map(|_| json!({"name": "body", "mesh": 0, "skin": 0})));
    let j = json!({
        "bufferViews": [{"buffer": 0, "byteLength": 36}, {"buffer": 0, "byteOffset": 36, "byteLength": 24},
                        {"buffer": 0, "byteOffset": 60, "byteLength": 48}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                       "min": [0.0, 0.0, 0.0], "max": [0.0, 0.0, 0.0]},
                      {"bufferView": 1, "componentType": 5123, "count": 3, "type": "VEC4"},
                      {"bufferView": 2, "componentType": 5126, "count": 3, "type": "VEC4"}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "JOINTS_0": 1, "WEIGHTS_0": 2}}]}],
        "skins": [{"joints": [0]}],
        "nodes": nodes
    });
    let a = import_all("skinned mesh nodes", j, &bin, true);
    assert_eq!(a.scene.rigs[0].bindings.len(), N);
}

#[test]
fn animated_nodes_are_linear() {
    let (mut j, bin) = keyed(2);
    j["nodes"] = Value::Array((0..N).map(|k| json!({"name": format!("n{k}")})).collect());
    let channels: Vec<Value> =
        (0..N).map(|k| json!({"sampler": 0, "target": {"node": k, "path": "translation"}})).collect();
    j["animations"] = json!([{"samplers": [{"input": 0, "output": 1}], "channels": channels}]);
    let a = import_all("animated nodes", j, &bin, true);
    assert_eq!(a.scene.animations[0].nodes.len(), N);
    assert_eq!(a.scene.animations[0].nodes[N - 1].node, N - 1);
}

#[test]
fn channels_times_rigs_are_linear() {
    let (mut j, bin) = keyed(2);
    j["nodes"] = joint_nodes(N);
    j["skins"] = Value::Array((1..=N).map(|k| json!({"joints": [k]})).collect());
    let channels: Vec<Value> =
        (1..=N).map(|k| json!({"sampler": 0, "target": {"node": k, "path": "translation"}})).collect();
    j["animations"] = json!([{"samplers": [{"input": 0, "output": 1}], "channels": channels}]);
    let a = import_all("channels times rigs", j, &bin, false);
    assert_eq!(a.scene.animations[0].clips.len(), N);
    assert_eq!(a.scene.animations[0].clips[N - 1].rig, N - 1);
}

// ------------------------------------------------------------------ eased keys and the bake

mod bake {
    use super::*;
    use glam::Vec3;
    use marrow_engine::clip::Clip;
    use marrow_engine::easing::{Ease, Easing};
    use marrow_engine::gltf::{EasedKeys, ExportOptions};
    use marrow_engine::project::export::scene_for_export;
    use marrow_engine::project::{Library, Project};
    use marrow_engine::scene::{AnimatorDesc, EntityDesc, SceneDesc};
    use marrow_engine::skeleton::{NO_PARENT, Skeleton};
    use marrow_engine::track::{Interpolation, Track};

    /// A one-bone rig whose clip has one eased translation segment between `(t0, v0)` and
    /// `(t1, v1)`, as the project export hands it to the glTF writer.
    fn eased_scene(t0: f32, v0: Vec3, t1: f32, v1: Vec3) -> ImportedScene {
        let id = marrow_engine::math::Transform::IDENTITY;
        let sk = Skeleton::from_bind_pose("r", vec![("root".into(), NO_PARENT, id)]).unwrap();
        let mut clip = Clip::new("c", &sk);
        let mut tr = Track::new(Interpolation::Linear);
        tr.insert(t0, v0);
        tr.insert(t1, v1);
        tr.set_key_easing(0, Some(Ease::Named(Easing::ALL[3])));
        clip.channels_mut()[0].translation = Some(tr);
        let mut project = Project::default();
        project.manifest.scenes.push("scenes/s.scene.ron".into());
        project.skeletons.insert("r.skeleton.ron".into(), sk.clone().into());
        project.clips.insert(
            "c.clip.ron".into(),
            marrow_engine::project::file::ClipAsset {
                clip: std::sync::Arc::new(clip),
                bones: sk.bone_names.clone(),
            }
            .into(),
        );
        let entity = EntityDesc {
            name: "Rig".into(),
            animator: Some(AnimatorDesc {
                rig: "r.skeleton.ron".into(),
                clip: Some("c.clip.ron".into()),
                graph: None,
                looping: None,
                speed: 1.0,
                play_on_start: true,
                root_motion: None,
                targets: Vec::new(),
            }),
            ..Default::default()
        };
        project.scenes.insert(
            "scenes/s.scene.ron".into(),
            SceneDesc { name: "s".into(), entities: vec![entity] }.into(),
        );
        let lib = Library::load(&project, std::path::Path::new(".")).unwrap();
        scene_for_export(&project, &lib, None).unwrap().scene
    }

    fn export(scene: &ImportedScene, bound: f32) -> (Result<usize, String>, Duration) {
        let opts = ExportOptions { eased: EasedKeys::Bake { rate: None, bound }, ..Default::default() };
        let t = Instant::now();
        let r =
            gltf::export_glb(scene, &opts).map(|(_, report)| report.baked_keys).map_err(|e| e.to_string());
        (r, t.elapsed())
    }

    #[test]
    fn two_eased_keys_1e20_apart_are_refused_naming_the_key_limit() {
        let scene = eased_scene(0.0, Vec3::ZERO, 1e20, Vec3::ONE);
        let (r, took) = export(&scene, 1e-4);
        let e = r.expect_err("a million keys were written for two");
        assert!(e.contains("more than 262144 keys (the limit per track)"), "{e}");
        assert!(took < Duration::from_secs(1), "refused after {took:?}");
    }

    #[test]
    fn two_eased_keys_of_1e20_bake_to_what_f32_resolves() {
        let scene = eased_scene(0.0, Vec3::ZERO, 1.0, Vec3::splat(1e20));
        let (r, took) = export(&scene, 1e-4);
        let keys = r.unwrap_or_else(|e| panic!("{e}"));
        assert!(keys < 100_000, "{keys} keys baked for one 1 s segment");
        assert!(took < Duration::from_secs(1), "baked in {took:?}");
    }

    #[test]
    fn a_bake_bound_finer_than_f32_resolves_is_held_to_f32_resolution() {
        let scene = eased_scene(0.0, Vec3::ZERO, 2.0, Vec3::new(1.0, 2.0, 3.0));
        let (fine, took) = export(&scene, 1e-7);
        let fine = fine.unwrap_or_else(|e| panic!("{e}"));
        // Halving to the maximum depth wrote 18M keys in 36 s; held to what f32 resolves at
        // these magnitudes, a bound of 1e-7 needs a few thousand.
        assert!(fine < 50_000, "{fine} keys at bound 1e-7");
        assert!(took < Duration::from_secs(1), "baked in {took:?}");
        let (coarse, _) = export(&scene, 1e-4);
        assert!(coarse.unwrap() < fine, "a finer bound still needs more keys than a coarse one");
    }
}

// ------------------------------------------------------------------ export

/// The JSON chunk of GLB bytes.
fn glb_json(bytes: &[u8]) -> Value {
    let len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    serde_json::from_slice(&bytes[20..20 + len]).unwrap()
}

#[test]
fn skinned_mesh_nodes_are_exported_with_identity_transforms() {
    // Two root mesh nodes on one skin, each with its own (ignored) transform: the validator
    // warns NODE_SKINNED_MESH_LOCAL_TRANSFORMS on any such node that keeps its transform.
    let mut bin: Vec<u8> =
        [0.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    bin.extend([0u8; 24]);
    bin.extend([1.0f32, 0.0, 0.0, 0.0].iter().cycle().take(12).flat_map(|v| v.to_le_bytes()));
    let j = json!({
        "bufferViews": [{"buffer": 0, "byteLength": 36}, {"buffer": 0, "byteOffset": 36, "byteLength": 24},
                        {"buffer": 0, "byteOffset": 60, "byteLength": 48}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                       "min": [0.0, 0.0, 0.0], "max": [1.0, 1.0, 0.0]},
                      {"bufferView": 1, "componentType": 5123, "count": 3, "type": "VEC4"},
                      {"bufferView": 2, "componentType": 5126, "count": 3, "type": "VEC4"}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "JOINTS_0": 1, "WEIGHTS_0": 2}}]}],
        "skins": [{"joints": [0]}],
        "nodes": [{"name": "joint", "translation": [0.0, 1.0, 0.0]},
                  {"name": "a", "mesh": 0, "skin": 0, "translation": [5.0, 0.0, 0.0]},
                  {"name": "b", "mesh": 0, "skin": 0, "scale": [2.0, 2.0, 2.0], "rotation": [0.0, 0.6, 0.0, 0.8]}],
        "scenes": [{"nodes": [0, 1, 2]}], "scene": 0
    });
    let scene = import(j, &bin).unwrap_or_else(|e| panic!("{e}"));
    let (bytes, _) = gltf::export_glb(&scene, &gltf::ExportOptions::default()).unwrap();
    let out = glb_json(&bytes);
    let skinned: Vec<&Value> =
        out["nodes"].as_array().unwrap().iter().filter(|n| n.get("skin").is_some()).collect();
    assert_eq!(skinned.len(), 2);
    for n in skinned {
        assert_eq!(n["translation"], json!([0.0, 0.0, 0.0]), "{n}");
        assert_eq!(n["rotation"], json!([0.0, 0.0, 0.0, 1.0]), "{n}");
        assert_eq!(n["scale"], json!([1.0, 1.0, 1.0]), "{n}");
    }
    // The joint keeps its place, so the skinned vertices do not move.
    let joint = out["nodes"].as_array().unwrap().iter().find(|n| n["name"] == "joint").unwrap();
    assert_eq!(joint["translation"], json!([0.0, 1.0, 0.0]));
}

// ------------------------------------------------------------------ project-level sums

mod scene_totals {
    use super::*;
    use marrow_engine::project::{Library, Project, check_project_files, scene_to_string};
    use marrow_engine::scene::{SceneDesc, World};

    const SCENE: &str = "scenes/main.scene.ron";

    /// The `name` sample's scene with its entity `which` repeated `n` times (named `which k`),
    /// changed by `edit`; its files (for the check) and the loaded project and library.
    fn repeated(
        name: &str,
        which: &str,
        n: usize,
        edit: impl Fn(&mut marrow_engine::scene::EntityDesc),
    ) -> (Vec<(String, String)>, SceneDesc, Library) {
        let dir = crate::support::project_dir(name);
        let p = Project::load(&dir).unwrap();
        let lib = Library::load(&p, &dir).unwrap();
        let mut scene = (*p.scenes[SCENE]).clone();
        let at = scene.entities.iter().position(|e| e.name == which).unwrap();
        let one = scene.entities.remove(at);
        for k in 0..n {
            let mut e = one.clone();
            e.name = format!("{which} {k}");
            edit(&mut e);
            scene.entities.push(e);
        }
        let text = scene_to_string(&scene);
        (crate::support::one_scene_files(name, |_| text.clone()), scene, lib)
    }

    /// The check's errors and the instantiation's, each asserted to come back within a second.
    fn refused(name: &str, files: &[(String, String)], scene: &SceneDesc, lib: &Library) -> (String, String) {
        let dir = crate::support::project_dir(name);
        let t = Instant::now();
        let report = check_project_files(&dir, files);
        let check = report.errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n");
        assert!(t.elapsed() < Duration::from_secs(1), "check took {:?}", t.elapsed());
        let t = Instant::now();
        let made = World::instantiate(scene, lib).err().map(|e| e.to_string()).unwrap_or_default();
        assert!(t.elapsed() < Duration::from_secs(1), "instantiate took {:?}", t.elapsed());
        (check, made)
    }

    #[test]
    fn forty_crowds_of_a_million_are_refused_by_check_and_by_instantiate() {
        let (files, scene, lib) =
            repeated("crowd", "Crowd", 40, |e| e.crowd.as_mut().unwrap().count = 1_000_000);
        let (check, made) = refused("crowd", &files, &scene, &lib);
        for text in [&check, &made] {
            assert!(text.contains("Crowd 1") && text.contains("crowd.count"), "{text}");
            assert!(
                text.contains("come to 2000000") && text.contains("the limit is 1000000 per scene"),
                "{text}"
            );
        }
    }

    #[test]
    fn thirty_clouds_of_two_million_are_refused_by_check_and_by_instantiate() {
        let (files, scene, lib) = repeated("particle_figure", "Figure", 30, |e| {
            e.particles.as_mut().unwrap().settings.count = 2_000_000
        });
        let (check, made) = refused("particle_figure", &files, &scene, &lib);
        for text in [&check, &made] {
            assert!(
                text.contains("particles.count") && text.contains("the limit is 2000000 per scene"),
                "{text}"
            );
        }
    }

    #[test]
    fn a_crowd_listing_a_clip_a_thousand_times_is_refused_before_baking() {
        for times in [40, 1000] {
            let (files, scene, lib) = repeated("crowd", "Crowd", 1, |e| {
                let c = e.crowd.as_mut().unwrap();
                c.clips = vec![c.clips[0].clone(); times];
                c.frames = 4096;
            });
            let (check, made) = refused("crowd", &files, &scene, &lib);
            for text in [&check, &made] {
                assert!(text.contains("crowd.clips") && text.contains("MB"), "{times}: {text}");
            }
            assert!(check.contains(&format!("{times} clips x 4096 frames x 19 bones")), "{check}");
        }
    }
}

#[test]
fn two_thousand_particle_groups_of_fifty_bones_bind_in_linear_time() {
    use marrow_engine::particles::{CloudGroup, CloudSettings, ParticleCloud};
    let dir = crate::support::project_dir("particle_figure");
    let p = marrow_engine::project::Project::load(&dir).unwrap();
    let lib = marrow_engine::project::Library::load(&p, &dir).unwrap();
    let scene = lib.import("assets/CesiumMan.glb").unwrap();
    let rig = &scene.rigs[0];
    let mesh = &scene.meshes[rig.bindings[0].mesh];
    let names = &rig.skeleton.bone_names;
    // 2,000 groups of 50 bone names each (the rig has 19 bones: names repeat across groups).
    let groups: Vec<CloudGroup> = (0..2000)
        .map(|g| CloudGroup {
            bones: (0..50).map(|k| names[(g + k) % names.len()].clone()).collect(),
            mass: 1.0,
        })
        .collect();
    let settings = CloudSettings { count: 50_000, groups, ..Default::default() };
    let cloud = linear("2,000 particle groups", || {
        ParticleCloud::from_mesh(mesh, &rig.joint_to_bone, &rig.skeleton, &settings).unwrap()
    });
    assert_eq!(cloud.len(), 50_000);
}
