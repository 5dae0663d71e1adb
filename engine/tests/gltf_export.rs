//! glTF export round trips: every sample model imported, exported as GLB and imported back gives
//! the same nodes, skeletons, keys (times and values bit for bit), meshes and markers, and poses
//! the same at both ends and between; tracks that share key times share one input accessor.

mod support;

use glam::Mat4;
use marrow_engine::clip::Marker;
use marrow_engine::gltf::{ImportedScene, ScenePose, export_glb, import, import_slice};
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
            // The importer normalizes rest rotations again: within a rounding step.
            let (p, q) = (x.transform, y.transform);
            assert!(p.translation == q.translation && p.scale == q.scale, "{m}: {}", x.name);
            assert!(p.rotation.abs_diff_eq(q.rotation, 1e-7), "{m}: {}", x.name);
        }
        assert_eq!(a.rigs.len(), b.rigs.len(), "{m}");
        for (x, y) in a.rigs.iter().zip(&b.rigs) {
            assert_eq!(x.skeleton.bone_names, y.skeleton.bone_names, "{m}");
            assert_eq!(x.inverse_bind, y.inverse_bind, "{m}");
        }
        for (x, y) in a.meshes.iter().zip(&b.meshes) {
            for (p, q) in x.primitives.iter().zip(&y.primitives) {
                assert_eq!(p.positions, q.positions, "{m}");
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
        // Poses: both ends and 21 steps between, every node's world matrix.
        let (mut pa, mut pb) = (ScenePose::new(&a), ScenePose::new(&b));
        for (i, anim) in a.animations.iter().enumerate() {
            for k in 0..=22 {
                let t = anim.duration * k as f32 / 22.0;
                pa.evaluate(&a, Some(i), t).unwrap();
                pb.evaluate(&b, Some(i), t).unwrap();
                for (n, (x, y)) in pa.world.iter().zip(&pb.world).enumerate() {
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
