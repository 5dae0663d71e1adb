//! glTF export round trips: every sample model imported, exported as GLB and imported back gives
//! the same nodes, skeletons, keys (times and values bit for bit), meshes and markers, and poses
//! the same at both ends and between; tracks that share key times share one input accessor.

mod support;

use glam::Mat4;
use marrow_engine::clip::Marker;
use marrow_engine::gltf::{ExportOptions, ImportedScene, ScenePose, import, import_slice};
use support::gltf_dir;

const MODELS: [&str; 9] = [
    "CesiumMan/CesiumMan.glb",
    "RiggedFigure/RiggedFigure.glb",
    "RiggedSimple/RiggedSimple.glb",
    "SimpleSkin/SimpleSkin.gltf",
    "AnimatedMorphCube/AnimatedMorphCube.glb",
    "BoxAnimated/BoxAnimated.gltf",
    "InterpolationTest/InterpolationTest.glb",
    "SimpleMorph/SimpleMorph.gltf",
    "AnimatedTriangle/AnimatedTriangle.gltf",
];

fn export_glb(scene: &ImportedScene) -> Result<Vec<u8>, marrow_engine::gltf::ExportError> {
    marrow_engine::gltf::export_glb(scene, &ExportOptions::default()).map(|(bytes, _)| bytes)
}

/// Every key time of an animation's tracks (clips, property animations, morph weights).
fn key_times(anim: &marrow_engine::gltf::Animation) -> Vec<f32> {
    let mut out = Vec::new();
    for c in &anim.clips {
        for ch in c.clip.channels() {
            out.extend(ch.translation.iter().flat_map(|t| t.times().iter().copied()));
            out.extend(ch.rotation.iter().flat_map(|t| t.times().iter().copied()));
            out.extend(ch.scale.iter().flat_map(|t| t.times().iter().copied()));
        }
    }
    for n in &anim.nodes {
        let p = &n.animation;
        out.extend(p.translation.iter().flat_map(|t| t.times().iter().copied()));
        out.extend(p.rotation.iter().flat_map(|t| t.times().iter().copied()));
        out.extend(p.scale.iter().flat_map(|t| t.times().iter().copied()));
    }
    for m in &anim.morphs {
        out.extend(m.weights.iter().flat_map(|t| t.times().iter().copied()));
    }
    out.sort_by(f32::total_cmp);
    out.dedup();
    out
}

fn round_trip(scene: &ImportedScene) -> ImportedScene {
    let bytes = export_glb(scene).unwrap();
    import_slice(&bytes, std::path::Path::new("exported.glb"), None).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn every_sample_round_trips_with_the_same_keys_meshes_and_poses() {
    for m in MODELS {
        let a = import(gltf_dir().join(m)).unwrap();
        let b = round_trip(&a);
        assert_eq!(a.nodes.len(), b.nodes.len(), "{m}");
        for (x, y) in a.nodes.iter().zip(&b.nodes) {
            assert_eq!((x.mesh, x.skin), (y.mesh, y.skin), "{m}: {}", x.name);
            if x.skin.is_some() {
                continue; // moved to the root with an identity transform (see the poses below)
            }
            // The importer normalizes rest rotations again: within a rounding step.
            let (p, q) = (x.transform, y.transform);
            assert!(p.translation == q.translation && p.scale == q.scale, "{m}: {}", x.name);
            assert!(p.rotation.abs_diff_eq(q.rotation, 1e-7), "{m}: {}", x.name);
        }
        // Materials as Marrow holds them: base colours, textures and their images' bytes.
        assert_eq!(a.materials.len(), b.materials.len(), "{m}");
        for (x, y) in a.materials.iter().zip(&b.materials) {
            assert_eq!((x.base_color, x.base_color_texture), (y.base_color, y.base_color_texture), "{m}");
        }
        assert_eq!(a.images.len(), b.images.len(), "{m}");
        for (x, y) in a.images.iter().zip(&b.images) {
            assert_eq!(x.bytes, y.bytes, "{m}: image bytes");
        }
        assert_eq!(a.rigs.len(), b.rigs.len(), "{m}");
        for (x, y) in a.rigs.iter().zip(&b.rigs) {
            assert_eq!(x.skeleton.bone_names, y.skeleton.bone_names, "{m}");
            assert_eq!(x.inverse_bind, y.inverse_bind, "{m}");
        }
        for (x, y) in a.meshes.iter().zip(&b.meshes) {
            for (p, q) in x.primitives.iter().zip(&y.primitives) {
                assert_eq!(p.positions, q.positions, "{m}");
                assert_eq!(p.material, q.material, "{m}");
                assert_eq!(p.indices, q.indices, "{m}");
                // Skin weights are renormalized on import: the same influences within rounding.
                match (&p.skin, &q.skin) {
                    (Some(x), Some(y)) => {
                        for v in 0..x.joints.len() {
                            let of = |s: &marrow_engine::gltf::SkinStream, j: u16| {
                                (0..4).filter(|&k| s.joints[v][k] == j).map(|k| s.weights[v][k]).sum::<f32>()
                            };
                            for j in x.joints[v].iter().chain(&y.joints[v]) {
                                assert!((of(x, *j) - of(y, *j)).abs() < 1e-6, "{m}: vertex {v} joint {j}");
                            }
                        }
                    }
                    (x, y) => assert_eq!(x.is_some(), y.is_some(), "{m}"),
                }
                assert_eq!(p.targets.len(), q.targets.len(), "{m}");
            }
        }
        assert_eq!(a.animations.len(), b.animations.len(), "{m}");
        for (x, y) in a.animations.iter().zip(&b.animations) {
            assert_eq!(x.duration, y.duration, "{m}");
            for (c, d) in x.clips.iter().zip(&y.clips) {
                for (p, q) in c.clip.channels().iter().zip(d.clip.channels()) {
                    assert_eq!(p.translation, q.translation, "{m}: translation keys");
                    assert_eq!(p.rotation, q.rotation, "{m}: rotation keys");
                    assert_eq!(p.scale, q.scale, "{m}: scale keys");
                }
            }
            assert_eq!(x.nodes.len(), y.nodes.len(), "{m}");
            assert_eq!(x.morphs.len(), y.morphs.len(), "{m}");
        }
        // Poses: at every key, both ends and 21 steps between, every node's world matrix.
        let (mut pa, mut pb) = (ScenePose::new(&a), ScenePose::new(&b));
        for (i, anim) in a.animations.iter().enumerate() {
            let mut times: Vec<f32> = (0..=22).map(|k| anim.duration * k as f32 / 22.0).collect();
            times.extend(key_times(anim));
            for t in times {
                pa.evaluate(&a, Some(i), t).unwrap();
                pb.evaluate(&b, Some(i), t).unwrap();
                for (n, (x, y)) in pa.world.iter().zip(&pb.world).enumerate() {
                    if a.nodes[n].skin.is_some() {
                        // A skinned mesh node moves to the root (glTF ignores its transform):
                        // its vertices must land where they did.
                        let (va, vb) = (
                            pa.placed_vertices(&a, n, 0, 64).unwrap(),
                            pb.placed_vertices(&b, n, 0, 64).unwrap(),
                        );
                        assert_eq!(va.len(), vb.len(), "{m}");
                        for (p, q) in va.iter().zip(&vb) {
                            let d = glam::Vec3::from(*p).distance(glam::Vec3::from(*q));
                            assert!(
                                d < 1e-5,
                                "{m}: animation {i} at {t}: skinned node {n} vertex off by {d}"
                            );
                        }
                        continue;
                    }
                    assert!(x.abs_diff_eq(*y, 1e-5), "{m}: animation {i} at {t}: node {n}");
                }
                assert_eq!(pa.morph_weights, pb.morph_weights, "{m}");
            }
        }
    }
}

#[test]
fn markers_travel_in_the_animation_extras_and_come_back() {
    let mut a = import(gltf_dir().join("CesiumMan/CesiumMan.glb")).unwrap();
    let markers =
        vec![Marker { name: "left".into(), time: 0.25 }, Marker { name: "right".into(), time: 0.9 }];
    a.animations[0].clips[0].clip.set_markers(markers.clone());
    let b = round_trip(&a);
    assert_eq!(b.animations[0].clips[0].clip.markers(), &markers[..]);
}

#[test]
fn tracks_sharing_key_times_share_one_input_accessor() {
    let a = import(gltf_dir().join("CesiumMan/CesiumMan.glb")).unwrap();
    let bytes = export_glb(&a).unwrap();
    let len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let json: serde_json::Value = serde_json::from_slice(&bytes[20..20 + len]).unwrap();
    let samplers = json["animations"][0]["samplers"].as_array().unwrap();
    let inputs: std::collections::BTreeSet<u64> =
        samplers.iter().map(|s| s["input"].as_u64().unwrap()).collect();
    assert!(samplers.len() > 50, "{}", samplers.len());
    assert_eq!(inputs.len(), 1, "CesiumMan's channels all share one key-time array");
    let input = &json["accessors"][*inputs.iter().next().unwrap() as usize];
    assert!(input["min"].is_array() && input["max"].is_array(), "inputs carry min and max");
    // A non-finite value is refused, nothing written.
    let mut bad = a.clone();
    bad.meshes[0].primitives[0].positions[0][0] = f32::NAN;
    assert!(export_glb(&bad).unwrap_err().to_string().contains("POSITION"));
    let _ = Mat4::IDENTITY;
}

// ---------------------------------------------------------------- project scenes

use std::sync::Arc;

use glam::{Quat, Vec3};
use marrow_engine::animator::{Animator, AnimatorSettings};
use marrow_engine::clip::Clip;
use marrow_engine::easing::{CubicBezier, Ease, Easing};
use marrow_engine::gltf::{EasedKeys, JointChoice, JointFormat, WeightChoice, WeightFormat};
use marrow_engine::project::export::{scene_for_export, write_export};
use marrow_engine::project::{Library, Project};
use marrow_engine::scene::{AnimatorDesc, EntityDesc, MeshDesc};
use marrow_engine::skeleton::Skeleton;
use marrow_engine::track::{Interpolation, Track};
use support::project_dir;

fn load_project(name: &str) -> (Project, Library) {
    let dir = project_dir(name);
    let project = Project::load(&dir).unwrap();
    let lib = Library::load(&project, &dir).unwrap();
    (project, lib)
}

fn glb_json(bytes: &[u8]) -> serde_json::Value {
    let len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    serde_json::from_slice(&bytes[20..20 + len]).unwrap()
}

fn export_bytes(scene: &ImportedScene, opts: &ExportOptions) -> Vec<u8> {
    marrow_engine::gltf::export_glb(scene, opts).unwrap().0
}

/// Skeletons equal: names, parents, bind pose and inverse binds.
fn same_skeleton(a: &Skeleton, b: &Skeleton, what: &str) {
    assert_eq!(a.bone_names, b.bone_names, "{what}");
    assert_eq!(a.parents, b.parents, "{what}");
    assert_eq!(a.inverse_bind, b.inverse_bind, "{what}");
    for (x, y) in a.bind_pose.iter().zip(&b.bind_pose) {
        assert!(x.translation == y.translation && x.scale == y.scale, "{what}");
        assert!(x.rotation.abs_diff_eq(y.rotation, 1e-7), "{what}");
    }
}

#[test]
fn a_project_scene_round_trips_its_rig_keys_markers_and_poses() {
    // The runner: a rig from a skeleton file, boxes socketed on its bones, an authored clip
    // with eased keys and footstep markers.
    let (project, lib) = load_project("runner");
    let export = scene_for_export(&project, &lib, None).unwrap();
    let src = &export.scene;
    // Baked to 1e-6 (rad and m) so the poses can be held to 1e-5 of the runner's 1.8 m.
    let opts = ExportOptions { eased: EasedKeys::Bake { rate: None, bound: 1e-6 }, ..Default::default() };
    let bytes = export_bytes(src, &opts);
    let back = import_slice(&bytes, std::path::Path::new("runner.glb"), None).unwrap();
    assert_eq!(back.rigs.len(), 1);
    let source_clip = &project.clips["clips/stride.clip.ron"].clip;
    let skeleton = &project.skeletons["assets/runner.skeleton.ron"];
    same_skeleton(skeleton, &back.rigs[0].skeleton, "runner skeleton");
    let anim = back.animation_index(&source_clip.name).expect("the stride clip is an animation");
    let clip = &back.animations[anim].clips[0].clip;
    assert_eq!(clip.markers(), source_clip.markers(), "markers come back");
    // Keys: tracks without easing bit for bit; eased ones keep every source key exactly.
    let (mut exact, mut baked) = (0, 0);
    for (p, q) in source_clip.channels().iter().zip(clip.channels()) {
        if let (Some(x), Some(y)) = (&p.rotation, &q.rotation) {
            if x.is_plain_linear() || x.interpolation() != Interpolation::Linear {
                assert_eq!(x.times(), y.times());
                assert_eq!(x.values(), y.values());
                exact += 1;
            } else {
                for (t, v) in x.times().iter().zip(x.values()) {
                    let k = y.times().iter().position(|s| s == t).expect("a source key time is kept");
                    assert_eq!(y.values()[k], *v);
                }
                baked += 1;
            }
        }
    }
    assert!(baked > 0, "the runner's stride has eased keys ({exact} exact tracks)");
    // The exported scene poses as the project's World does: every socketed box and bone at
    // both ends and 21 steps between, within 1e-5 of the model's size.
    let mut world = lib.instantiate(&project, &project.manifest.scenes[0]).unwrap();
    let rig = world.find("Runner").unwrap();
    let boxes: Vec<String> = ["LeftThigh", "LeftShin", "RightThigh", "RightShin"].map(String::from).to_vec();
    let mut pose = ScenePose::new(&back);
    let node = |name: &str| back.nodes.iter().position(|n| n.name == name).unwrap();
    let d = source_clip.duration();
    let mut times: Vec<f32> = (0..=22).map(|k| d * k as f32 / 22.0).collect();
    times.extend(key_times(&export.scene.animations[0]));
    for t in times {
        world.animator_mut(rig).unwrap().seek(t);
        world.animator_mut(rig).unwrap().stop();
        world.frame(0, 1.0 / 60.0);
        pose.evaluate(&back, Some(anim), t).unwrap();
        for b in &boxes {
            let e = world.find(&format!("Runner/{b}")).unwrap();
            let (x, y) = (world.world_matrix(e).unwrap(), pose.world[node(b)]);
            assert!(x.abs_diff_eq(y, 1.8e-5), "box {b} at {t}: {x} vs {y}");
        }
        let model = world.rig_pose(rig).unwrap().model.to_vec();
        let rig_world = world.world_matrix(rig).unwrap();
        for (bone, m) in model.iter().enumerate() {
            let name = &skeleton.bone_names[bone];
            assert!((rig_world * *m).abs_diff_eq(pose.world[node(name)], 1.8e-5), "bone {name} at {t}");
        }
    }
    // The markers play at the same times from the imported clip as from the source.
    let events = |clip: &Clip| {
        let mut a = Animator::new(
            skeleton.clone(),
            AnimatorSettings {
                clip: Some(Arc::new(clip.clone())),
                play_on_start: true,
                ..Default::default()
            },
        );
        let mut out = Vec::new();
        for step in 0..300 {
            a.advance(1.0 / 60.0);
            for e in a.deliver_events() {
                out.push((step, e.name().to_owned(), e.time()));
            }
        }
        out
    };
    let (a, b) = (events(source_clip), events(clip));
    assert!(a.len() >= 4, "{a:?}");
    assert_eq!(a, b);
}

#[test]
fn a_project_with_a_skinned_glb_exports_its_mesh_on_the_rig_and_the_socketed_hat() {
    let (project, lib) = load_project("cesium_man");
    let export = scene_for_export(&project, &lib, Some("main")).unwrap();
    let bytes = export_bytes(&export.scene, &ExportOptions::default());
    let json = glb_json(&bytes);
    let back = import_slice(&bytes, std::path::Path::new("cm.glb"), None).unwrap();
    let source = lib.import("assets/CesiumMan.glb").unwrap();
    same_skeleton(&source.rigs[0].skeleton, &back.rigs[0].skeleton, "CesiumMan");
    // The skinned mesh node is a root; the hat hangs from the neck bone with its socket offset.
    let nodes = json["nodes"].as_array().unwrap();
    let body = nodes.iter().position(|n| n["name"] == "Body").unwrap();
    assert!(json["scenes"][0]["nodes"].as_array().unwrap().contains(&serde_json::json!(body)));
    assert!(nodes[body]["skin"].is_number());
    // CesiumMan's textured material comes along (the image embedded as it was read).
    assert_eq!(json["materials"].as_array().unwrap().len(), 1);
    assert_eq!(json["materials"][0]["pbrMetallicRoughness"]["baseColorTexture"]["index"], 0);
    assert_eq!(json["images"][0]["mimeType"], "image/jpeg");
    assert_eq!(back.images[0].bytes, source.images[0].bytes);
    let hat = nodes.iter().position(|n| n["name"] == "Hat").unwrap();
    let neck = nodes.iter().position(|n| n["name"] == "Skeleton_neck_joint_2").unwrap();
    assert!(nodes[neck]["children"].as_array().unwrap().contains(&serde_json::json!(hat)));
    let t: Vec<f32> =
        nodes[hat]["translation"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect();
    assert_eq!(t, [0.34, 0.0, -0.03]);
    // The imported clip keys come through bit for bit (nothing eased) and the vertices land
    // where the source file's do.
    let (a, b) = (&source.animations[0].clips[0].clip, &back.animations[0].clips[0].clip);
    for (p, q) in a.channels().iter().zip(b.channels()) {
        assert_eq!((&p.translation, &p.rotation, &p.scale), (&q.translation, &q.rotation, &q.scale));
    }
    let (mut ps, mut pb) = (ScenePose::new(source), ScenePose::new(&back));
    let (ns, nb) = (source.nodes.iter().position(|n| n.skin.is_some()).unwrap(), body);
    let entity = project.scenes["scenes/main.scene.ron"].entities[1].transform.unwrap().to_mat4();
    let size = 1.5;
    for k in 0..=22 {
        let t = source.animations[0].duration * k as f32 / 22.0;
        ps.evaluate(source, Some(0), t).unwrap();
        pb.evaluate(&back, Some(0), t).unwrap();
        // The project places the rig by the entity's transform where the file had its own root.
        let rig_src = ps.rig_world(source, 0);
        let fix = entity * rig_src.inverse();
        let va = ps.placed_vertices(source, ns, 0, 200).unwrap();
        let vb = pb.placed_vertices(&back, nb, 0, 200).unwrap();
        for (p, q) in va.iter().zip(&vb) {
            let p = fix.transform_point3(Vec3::from(*p));
            assert!(p.distance(Vec3::from(*q)) < 1e-5 * size, "at {t}: {p} vs {q:?}");
        }
    }
}

#[test]
fn every_sample_project_exports_and_imports_back() {
    for name in ["runner", "cesium_man", "locomotion", "crowd", "particle_figure"] {
        let (project, lib) = load_project(name);
        let export = scene_for_export(&project, &lib, None).unwrap_or_else(|e| panic!("{name}: {e}"));
        let bytes = export_bytes(&export.scene, &ExportOptions::default());
        let back = import_slice(&bytes, std::path::Path::new("p.glb"), None)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(back.rigs.len(), export.scene.rigs.len(), "{name}");
        assert_eq!(back.animations.len(), export.scene.animations.len(), "{name}");
        let skipped = export.notes.join("\n");
        match name {
            "crowd" => assert!(skipped.contains("crowd is not exported"), "{skipped}"),
            "particle_figure" => assert!(skipped.contains("particle cloud is not exported"), "{skipped}"),
            "locomotion" => {
                assert!(skipped.contains("graph"), "{skipped}");
                assert_eq!(
                    back.animations.len(),
                    8,
                    "idle, stride, sprint, the strafes, jump, fall and land"
                );
            }
            _ => {}
        }
    }
}

/// glTF LINEAR evaluation written here from the specification (lerp; slerp for rotations, in
/// f64), independent of Marrow's sampler: what any glTF player does with the exported keys.
fn gltf_linear(times: &[f32], values: &[f32], comps: usize, t: f32) -> Vec<f64> {
    let n = times.len();
    let at = |k: usize| values[k * comps..(k + 1) * comps].iter().map(|&v| v as f64).collect::<Vec<f64>>();
    if t <= times[0] {
        return at(0);
    }
    if t >= times[n - 1] {
        return at(n - 1);
    }
    let k = times.partition_point(|&s| s <= t) - 1;
    let u = (t as f64 - times[k] as f64) / (times[k + 1] as f64 - times[k] as f64);
    let (a, mut b) = (at(k), at(k + 1));
    if comps != 4 {
        return a.iter().zip(&b).map(|(x, y)| x + (y - x) * u).collect();
    }
    let mut dot: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
    if dot < 0.0 {
        b.iter_mut().for_each(|v| *v = -*v);
        dot = -dot;
    }
    if dot > 0.999_999 {
        let v: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x + (y - x) * u).collect();
        let l = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        return v.iter().map(|x| x / l).collect();
    }
    let th = dot.min(1.0).acos();
    let (sa, sb) = (((1.0 - u) * th).sin() / th.sin(), (u * th).sin() / th.sin());
    a.iter().zip(&b).map(|(x, y)| x * sa + y * sb).collect()
}

/// Reads accessor `a` of a GLB as floats.
fn accessor(bytes: &[u8], json: &serde_json::Value, a: usize) -> Vec<f32> {
    let jl = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let bin = &bytes[20 + jl + 8..];
    let acc = &json["accessors"][a];
    let view = &json["bufferViews"][acc["bufferView"].as_u64().unwrap() as usize];
    let off = view["byteOffset"].as_u64().unwrap_or(0) as usize;
    let comps = match acc["type"].as_str().unwrap() {
        "SCALAR" => 1,
        "VEC3" => 3,
        "VEC4" => 4,
        other => panic!("{other}"),
    };
    let n = acc["count"].as_u64().unwrap() as usize * comps;
    (0..n).map(|i| f32::from_le_bytes(bin[off + 4 * i..off + 4 * i + 4].try_into().unwrap())).collect()
}

/// A clip on a two-bone skeleton with every named easing and a Bézier on its translation and
/// rotation segments, and a marker.
fn eased_clip() -> (Skeleton, Clip) {
    let id = marrow_engine::math::Transform::IDENTITY;
    let sk = Skeleton::from_bind_pose(
        "eased",
        vec![("root".into(), marrow_engine::skeleton::NO_PARENT, id), ("arm".into(), 0, id)],
    )
    .unwrap();
    let mut clip = Clip::new("eased", &sk);
    let mut eases: Vec<Ease> = Easing::ALL.iter().map(|&e| Ease::Named(e)).collect();
    eases.push(Ease::Bezier(CubicBezier { x1: 0.7, y1: -0.4, x2: 0.2, y2: 1.5 }));
    let mut tr = Track::new(Interpolation::Linear);
    let mut rot = Track::new(Interpolation::Linear);
    for (k, _) in eases.iter().enumerate().chain(std::iter::once((eases.len(), &Ease::default()))) {
        let t = k as f32 * 0.25;
        tr.insert(t, Vec3::new((k % 3) as f32, (k % 2) as f32 * 0.5, -(k as f32) * 0.1));
        rot.insert(t, Quat::from_axis_angle(Vec3::new(1.0, (k % 4) as f32, 0.5).normalize(), k as f32 * 0.7));
    }
    for (k, e) in eases.iter().enumerate() {
        tr.set_key_easing(k, Some(*e));
        rot.set_key_easing(k, Some(*e));
    }
    clip.channels_mut()[1].translation = Some(tr);
    clip.channels_mut()[1].rotation = Some(rot);
    clip.add_marker("hit", 1.5);
    (sk, clip)
}

/// A one-rig imported-scene shape around `clip` (through the project export, as the editor's).
fn scene_of(sk: &Skeleton, clip: &Clip) -> ImportedScene {
    let mut project = Project::default();
    project.manifest.scenes.push("scenes/s.scene.ron".into());
    project.skeletons.insert("eased.skeleton.ron".into(), sk.clone().into());
    project.clips.insert(
        "eased.clip.ron".into(),
        marrow_engine::project::file::ClipAsset { clip: clip.clone().into(), bones: sk.bone_names.clone() }
            .into(),
    );
    let entity = EntityDesc {
        name: "Rig".into(),
        animator: Some(AnimatorDesc {
            rig: "eased.skeleton.ron".into(),
            clip: Some("eased.clip.ron".into()),
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
        marrow_engine::scene::SceneDesc { name: "s".into(), entities: vec![entity] }.into(),
    );
    let lib = Library::load(&project, std::path::Path::new(".")).unwrap();
    scene_for_export(&project, &lib, None).unwrap().scene
}

#[test]
fn eased_keys_bake_within_the_stated_bound_of_marrows_evaluation_in_any_player() {
    let (sk, clip) = eased_clip();
    let scene = scene_of(&sk, &clip);
    for bound in [1e-2f32, 1e-3, 1e-4] {
        let opts = ExportOptions { eased: EasedKeys::Bake { rate: None, bound }, ..Default::default() };
        let (bytes, report) = marrow_engine::gltf::export_glb(&scene, &opts).unwrap();
        let named: Vec<&str> =
            Easing::ALL.iter().filter(|e| **e != Easing::Linear).map(|e| e.name()).collect();
        assert_eq!(
            report.baked_segments,
            2 * (named.len() + 1),
            "30 named easings and a Bézier on two tracks"
        );
        let json = glb_json(&bytes);
        let anim = &json["animations"][0];
        let baked = &anim["extras"]["baked"];
        assert_eq!(baked["bound"], serde_json::json!(bound));
        let segments = baked["segments"].as_array().unwrap();
        assert_eq!(segments.len(), 2 * (named.len() + 1));
        assert_eq!(segments[0]["easing"], serde_json::json!(named[0]));
        assert_eq!(segments[named.len()]["easing"], "cubic-bezier(0.7, -0.4, 0.2, 1.5)");
        assert_eq!(anim["extras"]["markers"][0]["name"], "hit");
        let ch = &clip.channels()[1];
        let mut worst = [0.0f64; 2];
        for c in anim["channels"].as_array().unwrap() {
            let s = &anim["samplers"][c["sampler"].as_u64().unwrap() as usize];
            assert_eq!(s["interpolation"], "LINEAR");
            let times = accessor(&bytes, &json, s["input"].as_u64().unwrap() as usize);
            let values = accessor(&bytes, &json, s["output"].as_u64().unwrap() as usize);
            let rotation = c["target"]["path"] == "rotation";
            // Dense probes: 200 a second over the whole clip.
            for i in 0..=1600 {
                let t = i as f32 * 8.0 / 1600.0;
                let player = gltf_linear(&times, &values, if rotation { 4 } else { 3 }, t);
                let err = if rotation {
                    // The angle between them, from the relative rotation (precise when small).
                    let m = ch.rotation.as_ref().unwrap().sample(t).unwrap().as_dquat().normalize();
                    let p = glam::DQuat::from_xyzw(player[0], player[1], player[2], player[3]).normalize();
                    let r = m.conjugate() * p;
                    2.0 * glam::DVec3::new(r.x, r.y, r.z).length().atan2(r.w.abs())
                } else {
                    let m = ch.translation.as_ref().unwrap().sample(t).unwrap();
                    ((m.x as f64 - player[0]).powi(2)
                        + (m.y as f64 - player[1]).powi(2)
                        + (m.z as f64 - player[2]).powi(2))
                    .sqrt()
                };
                let w = &mut worst[rotation as usize];
                *w = w.max(err);
            }
        }
        // Within the bound (plus the f32 rounding of the values a player reads).
        assert!(worst[0] <= bound as f64 * 1.001 + 1e-6, "translation {} > {bound}", worst[0]);
        assert!(worst[1] <= bound as f64 * 1.001 + 1e-6, "rotation {} > {bound}", worst[1]);
        // Linear instead: the same keys as authored, the segments listed.
        let lin = ExportOptions { eased: EasedKeys::Linear, ..Default::default() };
        let (bytes, report) = marrow_engine::gltf::export_glb(&scene, &lin).unwrap();
        assert_eq!((report.baked_segments, report.linearized_segments), (0, 2 * (named.len() + 1)));
        let back = import_slice(&bytes, std::path::Path::new("l.glb"), None).unwrap();
        let y = &back.animations[0].clips[0].clip.channels()[1];
        assert_eq!(y.translation.as_ref().unwrap().values(), ch.translation.as_ref().unwrap().values());
        assert!(y.translation.as_ref().unwrap().is_plain_linear());
    }
}

#[test]
fn a_scene_with_faults_is_refused_naming_every_fault_and_nothing_is_written() {
    let (mut project, _) = load_project("cesium_man");
    let (runner, _) = load_project("runner");
    // Another rig's skeleton and clip in the project, played on CesiumMan's rig.
    project
        .skeletons
        .insert("assets/runner.skeleton.ron".into(), runner.skeletons["assets/runner.skeleton.ron"].clone());
    let mut stride = runner.clips["clips/stride.clip.ron"].clone();
    // A NaN key in that clip.
    let rot = Arc::make_mut(&mut Arc::make_mut(&mut stride).clip)
        .channels_mut()
        .iter_mut()
        .find_map(|c| c.rotation.as_mut())
        .unwrap();
    rot.insert(0.3, Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0));
    project.clips.insert("clips/stride.clip.ron".into(), stride);
    let scene = project.scenes.get_mut("scenes/main.scene.ron").map(std::sync::Arc::make_mut).unwrap();
    let man = &mut scene.entities[1];
    man.animator.as_mut().unwrap().clip = Some("clips/stride.clip.ron".into());
    // CesiumMan's skinned mesh with no rig above it, and under the runner's rig.
    let body = EntityDesc {
        name: "LooseBody".into(),
        mesh: Some(MeshDesc::Asset("assets/CesiumMan.glb#Cesium_Man".into())),
        ..Default::default()
    };
    let runner_rig = EntityDesc {
        name: "Runner".into(),
        animator: Some(AnimatorDesc {
            rig: "assets/runner.skeleton.ron".into(),
            clip: None,
            graph: None,
            looping: None,
            speed: 1.0,
            play_on_start: true,
            root_motion: None,
            targets: Vec::new(),
        }),
        children: vec![EntityDesc { name: "WrongBody".into(), ..body.clone() }],
        ..Default::default()
    };
    scene.entities.push(body);
    scene.entities.push(runner_rig);
    let lib = Library::load(&project, &project_dir("cesium_man")).unwrap();
    let err = scene_for_export(&project, &lib, None).unwrap_err();
    let faults = err.faults();
    let text = faults.join("\n");
    assert!(
        text.contains("entity CesiumMan: its clip \"clips/stride.clip.ron\" is for skeleton \"runner\""),
        "{text}"
    );
    assert!(
        text.contains(
            "clip \"clips/stride.clip.ron\": bone \"thigh_l\" rotation key 2 at 0.3 s is not finite"
        ),
        "{text}"
    );
    assert!(
        text.contains("entity LooseBody: its mesh is skinned to skeleton") && text.contains("no Animator"),
        "{text}"
    );
    assert!(
        text.contains("entity Runner/WrongBody: its mesh is skinned to skeleton")
            && text.contains("not to its rig's"),
        "{text}"
    );
    assert!(faults.len() >= 4, "{text}");
    // Nothing is written: the refusal comes before any file is opened.
    let out = tempdir("refused").join("scene.glb");
    let result = scene_for_export(&project, &lib, None)
        .and_then(|e| write_export(&e.scene, &ExportOptions::default(), &out));
    assert!(result.is_err() && !out.exists());
}

fn tempdir(tag: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("marrow-export-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn export_options_choose_clips_buffers_and_skin_component_types() {
    let a = import(gltf_dir().join("CesiumMan/CesiumMan.glb")).unwrap();
    // Which clips: an unknown name is an error listing the known ones.
    let only = ExportOptions { clips: Some(vec!["nope".into()]), ..Default::default() };
    let e = marrow_engine::gltf::export_glb(&a, &only).unwrap_err().to_string();
    assert!(e.contains("no clip named \"nope\"") && e.contains(&a.animations[0].name), "{e}");
    let none = ExportOptions { clips: Some(vec![]), ..Default::default() };
    let (_, r) = marrow_engine::gltf::export_glb(&a, &none).unwrap();
    assert_eq!(r.animations, 0);
    // External buffers: a .gltf and its .bin, which import reads back.
    let dir = tempdir("gltf");
    let path = dir.join("man.gltf");
    write_export(&a, &ExportOptions::default(), &path).unwrap();
    // The buffer is named after its content (`man.<8 hex>.bin`), so a new .gltf never names an
    // old buffer.
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    let uri = json["buffers"][0]["uri"].as_str().unwrap();
    assert!(
        uri.starts_with("man.") && uri.ends_with(".bin") && uri.len() == "man.12345678.bin".len(),
        "{uri}"
    );
    assert!(dir.join(uri).is_file());
    let b = import(&path).unwrap();
    assert_eq!(b.animations[0].clips[0].clip.channels(), a.animations[0].clips[0].clip.channels());
    // An unknown extension writes nothing.
    assert!(write_export(&a, &ExportOptions::default(), &dir.join("man.fbx")).is_err());
    assert!(!dir.join("man.fbx").exists());
    // Component types: as imported (u16, float), the smallest (u8 joints: 19 of them), stated.
    let types = |opts: &ExportOptions| {
        let bytes = export_bytes(&a, opts);
        let json = glb_json(&bytes);
        let attrs = &json["meshes"][0]["primitives"][0]["attributes"];
        let ct = |k: &str| {
            json["accessors"][attrs[k].as_u64().unwrap() as usize]["componentType"].as_u64().unwrap()
        };
        (ct("JOINTS_0"), ct("WEIGHTS_0"), bytes)
    };
    assert_eq!(types(&ExportOptions::default()).0, 5123);
    assert_eq!(types(&ExportOptions::default()).1, 5126);
    let small = ExportOptions {
        joints: JointChoice::Smallest,
        weights: WeightChoice::Smallest,
        ..Default::default()
    };
    assert_eq!(types(&small).0, 5121);
    let u8w = ExportOptions {
        joints: JointChoice::Exactly(JointFormat::U8),
        weights: WeightChoice::Exactly(WeightFormat::Unorm8),
        ..Default::default()
    };
    let (j, w, bytes) = types(&u8w);
    assert_eq!((j, w), (5121, 5121));
    // Normalized bytes: each vertex's weights still sum to one exactly, within 1/255 of the source.
    let c = import_slice(&bytes, std::path::Path::new("c.glb"), None).unwrap();
    let (sa, sc) =
        (a.meshes[0].primitives[0].skin.as_ref().unwrap(), c.meshes[0].primitives[0].skin.as_ref().unwrap());
    assert_eq!(sc.format.weights, WeightFormat::Unorm8);
    for (v, (wa, wc)) in sa.weights.iter().zip(&sc.weights).enumerate() {
        assert!((wc.iter().sum::<f32>() - 1.0).abs() < 1e-6, "vertex {v}");
        let of = |s: &marrow_engine::gltf::SkinStream, w: &[f32; 4], j: u16| {
            (0..4).filter(|&k| s.joints[v][k] == j).map(|k| w[k]).sum::<f32>()
        };
        for j in sa.joints[v] {
            assert!((of(sa, wa, j) - of(sc, wc, j)).abs() <= 1.0 / 255.0 + 1e-6, "vertex {v} joint {j}");
        }
    }
    // Re-exported as imported, the unorm8 stream stays unorm8, and the smallest holds it.
    let (_, w, _) = {
        let bytes = export_bytes(&c, &ExportOptions::default());
        let json = glb_json(&bytes);
        let attrs = &json["meshes"][0]["primitives"][0]["attributes"];
        (
            0,
            json["accessors"][attrs["WEIGHTS_0"].as_u64().unwrap() as usize]["componentType"]
                .as_u64()
                .unwrap(),
            (),
        )
    };
    assert_eq!(w, 5121);
    let cs = export_bytes(&c, &small);
    let json = glb_json(&cs);
    let attrs = &json["meshes"][0]["primitives"][0]["attributes"];
    assert_eq!(json["accessors"][attrs["WEIGHTS_0"].as_u64().unwrap() as usize]["normalized"], true);
    assert_eq!(json["accessors"][attrs["WEIGHTS_0"].as_u64().unwrap() as usize]["componentType"], 5121);
}

#[test]
fn an_empty_clip_keeps_its_length_through_a_hold_that_import_drops_and_props_get_their_own_animation() {
    let (sk, _) = eased_clip();
    // A new clip as the timeline makes it: no tracks, one second long, a marker.
    let mut empty = Clip::new("new", &sk);
    empty.length = 1.0;
    empty.looping = true;
    empty.add_marker("cue", 0.75);
    let mut scene = scene_of(&sk, &empty);
    let bytes = export_bytes(&scene, &ExportOptions::default());
    let json = glb_json(&bytes);
    let anim = &json["animations"][0];
    assert_eq!(anim["channels"].as_array().unwrap().len(), 1, "one hold channel: glTF needs one");
    assert_eq!(anim["samplers"][0]["interpolation"], "STEP");
    let hold = &anim["extras"]["holds"][0];
    assert_eq!(hold["path"], "scale");
    let input = accessor(&bytes, &json, anim["samplers"][0]["input"].as_u64().unwrap() as usize);
    assert_eq!(input, [0.0, 1.0], "players see the whole second");
    let back = import_slice(&bytes, std::path::Path::new("e.glb"), None).unwrap();
    let clip = &back.animations[0].clips[0].clip;
    assert!(clip.channels().iter().all(|c| c.is_empty()), "the hold is not the clip's");
    assert_eq!((clip.duration(), clip.looping, clip.markers().len()), (1.0, true, 1));
    // A property animation is an animation of its own, not a channel of every clip.
    let mut door = Track::new(Interpolation::Linear);
    door.insert(0.0, Vec3::ZERO);
    door.insert(10.0, Vec3::X);
    let prop = marrow_engine::property::PropertyAnimation {
        translation: Some(door),
        rotation: None,
        scale: None,
        looping: false,
        length: 0.0,
        play_on_start: true,
    };
    let mut project = Project::default();
    project.manifest.scenes.push("scenes/s.scene.ron".into());
    project.skeletons.insert("eased.skeleton.ron".into(), sk.clone().into());
    project.clips.insert(
        "new.clip.ron".into(),
        marrow_engine::project::file::ClipAsset { clip: empty.clone().into(), bones: sk.bone_names.clone() }
            .into(),
    );
    let rig = EntityDesc {
        name: "Rig".into(),
        animator: Some(AnimatorDesc {
            rig: "eased.skeleton.ron".into(),
            clip: Some("new.clip.ron".into()),
            graph: None,
            looping: None,
            speed: 1.0,
            play_on_start: true,
            root_motion: None,
            targets: Vec::new(),
        }),
        ..Default::default()
    };
    let door = EntityDesc { name: "Door".into(), animation: Some(prop), ..Default::default() };
    project.scenes.insert(
        "scenes/s.scene.ron".into(),
        marrow_engine::scene::SceneDesc { name: "s".into(), entities: vec![rig, door] }.into(),
    );
    let lib = Library::load(&project, std::path::Path::new(".")).unwrap();
    scene = scene_for_export(&project, &lib, None).unwrap().scene;
    let names: Vec<&str> = scene.animations.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["new", "s properties"]);
    assert!(scene.animations[0].nodes.is_empty() && scene.animations[1].clips.is_empty());
    assert_eq!(scene.animations[1].duration, 10.0);
    let back =
        import_slice(&export_bytes(&scene, &ExportOptions::default()), std::path::Path::new("p.glb"), None)
            .unwrap();
    assert_eq!(back.animations[0].duration, 1.0, "the clip's animation is not stretched to the door's");
}

#[test]
fn a_clip_that_only_shares_its_skeletons_name_is_left_out_with_a_note_not_refused() {
    let (mut project, _) = load_project("cesium_man");
    // Another "Armature" (Blender's default name) with two bones, and a clip for it that no
    // Animator plays.
    let id = marrow_engine::math::Transform::IDENTITY;
    let other = Skeleton::from_bind_pose(
        "Armature",
        vec![("a".into(), marrow_engine::skeleton::NO_PARENT, id), ("b".into(), 0, id)],
    )
    .unwrap();
    let clip = Clip::new("wave", &other);
    project.skeletons.insert("assets/other.skeleton.ron".into(), other.clone().into());
    project.clips.insert(
        "clips/wave.clip.ron".into(),
        marrow_engine::project::file::ClipAsset {
            clip: std::sync::Arc::new(clip),
            bones: other.bone_names.clone(),
        }
        .into(),
    );
    let lib = Library::load(&project, &project_dir("cesium_man")).unwrap();
    let export = scene_for_export(&project, &lib, None).unwrap();
    assert_eq!(export.scene.animations.len(), 1, "CesiumMan's own clip only");
    assert!(
        export.notes.iter().any(|n| n.contains("clips/wave.clip.ron") && n.contains("another bone count")),
        "{:?}",
        export.notes
    );
}

#[test]
fn a_primitive_mode_gltf_has_no_topology_for_is_refused_naming_the_primitive() {
    let mut a = import(gltf_dir().join("RiggedSimple/RiggedSimple.glb")).unwrap();
    a.meshes[0].primitives[0].mode = 7;
    let e = export_glb(&a).unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, marrow_engine::gltf::ExportError::Refused { .. }), "{text}");
    assert!(text.contains("mesh 0") && text.contains("primitive 0") && text.contains("mode 7"), "{text}");
    // Every glTF topology (0 points .. 6 triangle fan) is written and read back as it was.
    for mode in 0..=6 {
        a.meshes[0].primitives[0].mode = mode;
        let json = glb_json(&export_glb(&a).unwrap());
        let written = json["meshes"][0]["primitives"][0]["mode"].as_u64().unwrap_or(4);
        assert_eq!(written, u64::from(mode), "mode {mode} (absent means 4, triangles)");
    }
}
