//! Spec agreement: for every sample model and every animation, the importer + pose jobs + morph
//! and skinning jobs agree with an independent evaluation written here straight from the glTF 2.0
//! specification (its own JSON/buffer reader, a recursive node-world evaluator, glam's
//! `Quat::slerp`), to within 1e-5 of the model's size, at every key time, both ends, the
//! midpoints between keys and 21 evenly spaced times. Plus hand-checked values for SimpleSkin,
//! RiggedSimple and InterpolationTest.

use crate::support;
use support::gltf_dir;

use std::path::Path;

use glam::{Mat4, Quat, Vec3, Vec4};
use marrow_engine::gltf::{self, ImportedScene, ScenePose};
use marrow_engine::morph::MorphJob;
use marrow_engine::skinning::SkinningJob;
use serde_json::Value;

const MODELS: [&str; 9] = [
    "SimpleSkin/SimpleSkin.gltf",
    "RiggedSimple/RiggedSimple.glb",
    "RiggedFigure/RiggedFigure.glb",
    "CesiumMan/CesiumMan.glb",
    "SimpleMorph/SimpleMorph.gltf",
    "AnimatedMorphCube/AnimatedMorphCube.glb",
    "InterpolationTest/InterpolationTest.glb",
    "BoxAnimated/BoxAnimated.gltf",
    "AnimatedTriangle/AnimatedTriangle.gltf",
];

// ---------------------------------------------------------------------------------------------
// The independent evaluator, from the specification.
// ---------------------------------------------------------------------------------------------

fn b64(s: &str) -> Vec<u8> {
    let table = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits = 0u32;
    let mut n = 0;
    let mut out = Vec::new();
    for c in s.bytes().filter(|&c| c != b'=') {
        let v = table.iter().position(|&t| t == c).expect("base64") as u32;
        bits = (bits << 6) | v;
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push((bits >> n) as u8);
        }
    }
    out
}

struct Spec {
    j: Value,
    bins: Vec<Vec<u8>>,
    parent: Vec<Option<usize>>,
}

impl Spec {
    fn load(path: &Path) -> Spec {
        let bytes = std::fs::read(path).unwrap();
        let (j, glb_bin): (Value, Option<Vec<u8>>) = if &bytes[0..4] == b"glTF" {
            let jl = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
            let j = serde_json::from_slice(&bytes[20..20 + jl]).unwrap();
            let bl = u32::from_le_bytes(bytes[20 + jl..24 + jl].try_into().unwrap()) as usize;
            (j, Some(bytes[28 + jl..28 + jl + bl].to_vec()))
        } else {
            (serde_json::from_slice(&bytes).unwrap(), None)
        };
        let bins = j["buffers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| match b["uri"].as_str() {
                None => glb_bin.clone().unwrap(),
                Some(u) if u.starts_with("data:") => b64(u.split(',').nth(1).unwrap()),
                Some(u) => std::fs::read(path.parent().unwrap().join(u)).unwrap(),
            })
            .collect();
        let n = j["nodes"].as_array().map_or(0, |a| a.len());
        let mut parent = vec![None; n];
        for (i, node) in j["nodes"].as_array().unwrap().iter().enumerate() {
            for c in node["children"].as_array().into_iter().flatten() {
                parent[c.as_u64().unwrap() as usize] = Some(i);
            }
        }
        Spec { j, bins, parent }
    }

    /// Accessor elements as f32 components (normalized integers per the spec's formulas).
    fn accessor(&self, i: usize) -> Vec<Vec<f32>> {
        let a = &self.j["accessors"][i];
        let n = match a["type"].as_str().unwrap() {
            "SCALAR" => 1,
            "VEC2" => 2,
            "VEC3" => 3,
            "VEC4" => 4,
            "MAT4" => 16,
            t => panic!("type {t}"),
        };
        let ct = a["componentType"].as_u64().unwrap();
        let size = match ct {
            5121 => 1,
            5123 => 2,
            _ => 4,
        };
        let norm = a["normalized"].as_bool().unwrap_or(false);
        let v = &self.j["bufferViews"][a["bufferView"].as_u64().unwrap() as usize];
        let stride = v["byteStride"].as_u64().map_or(n * size, |s| s as usize);
        let off =
            v["byteOffset"].as_u64().unwrap_or(0) as usize + a["byteOffset"].as_u64().unwrap_or(0) as usize;
        let data = &self.bins[v["buffer"].as_u64().unwrap() as usize];
        (0..a["count"].as_u64().unwrap() as usize)
            .map(|e| {
                (0..n)
                    .map(|c| {
                        let o = off + e * stride + c * size;
                        match ct {
                            5121 => data[o] as f32 / if norm { 255.0 } else { 1.0 },
                            5123 => {
                                u16::from_le_bytes([data[o], data[o + 1]]) as f32
                                    / if norm { 65535.0 } else { 1.0 }
                            }
                            5126 => f32::from_le_bytes(data[o..o + 4].try_into().unwrap()),
                            _ => panic!("componentType {ct}"),
                        }
                    })
                    .collect()
            })
            .collect()
    }

    /// A sampler's value at `t` (glTF Appendix C: STEP, LINEAR with slerp, CUBICSPLINE Hermite).
    fn sample(&self, anim: usize, sampler: usize, t: f32, rotation: bool) -> Vec<f32> {
        let s = &self.j["animations"][anim]["samplers"][sampler];
        let times: Vec<f32> =
            self.accessor(s["input"].as_u64().unwrap() as usize).into_iter().map(|v| v[0]).collect();
        let raw = self.accessor(s["output"].as_u64().unwrap() as usize);
        let flat: Vec<f32> = raw.into_iter().flatten().collect();
        let interp = s["interpolation"].as_str().unwrap_or("LINEAR");
        let cubic = interp == "CUBICSPLINE";
        let per_key = flat.len() / times.len() / if cubic { 3 } else { 1 };
        let value = |k: usize| -> Vec<f32> {
            let base = if cubic { (3 * k + 1) * per_key } else { k * per_key };
            flat[base..base + per_key].to_vec()
        };
        let out_tan = |k: usize| flat[(3 * k + 2) * per_key..(3 * k + 3) * per_key].to_vec();
        let in_tan = |k: usize| flat[(3 * k) * per_key..(3 * k + 1) * per_key].to_vec();
        let normq = |v: Vec<f32>| -> Vec<f32> {
            if rotation {
                let q = Quat::from_xyzw(v[0], v[1], v[2], v[3]).normalize();
                q.to_array().to_vec()
            } else {
                v
            }
        };
        let last = times.len() - 1;
        if t <= times[0] {
            return normq(value(0));
        }
        if t >= times[last] {
            return normq(value(last));
        }
        let k = times.iter().rposition(|&x| x <= t).unwrap();
        let (t0, t1) = (times[k], times[k + 1]);
        let td = t1 - t0;
        let u = (t - t0) / td;
        match interp {
            "STEP" => normq(value(k)),
            "LINEAR" if rotation => {
                let a = Quat::from_slice(&normq(value(k)));
                let b = Quat::from_slice(&normq(value(k + 1)));
                a.slerp(b, u).to_array().to_vec()
            }
            "LINEAR" => value(k).iter().zip(value(k + 1)).map(|(a, b)| a * (1.0 - u) + b * u).collect(),
            _ => {
                let (s2, s3) = (u * u, u * u * u);
                let (h00, h10, h01, h11) =
                    (2.0 * s3 - 3.0 * s2 + 1.0, s3 - 2.0 * s2 + u, -2.0 * s3 + 3.0 * s2, s3 - s2);
                let (v0, b0, v1, a1) = (value(k), out_tan(k), value(k + 1), in_tan(k + 1));
                let r: Vec<f32> = (0..per_key)
                    .map(|c| h00 * v0[c] + h10 * td * b0[c] + h01 * v1[c] + h11 * td * a1[c])
                    .collect();
                normq(r)
            }
        }
    }

    fn local(&self, node: usize, anim: Option<usize>, t: f32) -> Mat4 {
        let n = &self.j["nodes"][node];
        if let Some(m) = n["matrix"].as_array() {
            let m: Vec<f32> = m.iter().map(|v| v.as_f64().unwrap() as f32).collect();
            return Mat4::from_cols_slice(&m);
        }
        let arr = |k: &str, d: &[f32]| -> Vec<f32> {
            n[k].as_array().map_or(d.to_vec(), |a| a.iter().map(|v| v.as_f64().unwrap() as f32).collect())
        };
        let mut tr = arr("translation", &[0.0; 3]);
        let mut ro = arr("rotation", &[0.0, 0.0, 0.0, 1.0]);
        let mut sc = arr("scale", &[1.0; 3]);
        if let Some(a) = anim {
            for c in self.j["animations"][a]["channels"].as_array().unwrap() {
                if c["target"]["node"].as_u64() != Some(node as u64) {
                    continue;
                }
                let s = c["sampler"].as_u64().unwrap() as usize;
                match c["target"]["path"].as_str().unwrap() {
                    "translation" => tr = self.sample(a, s, t, false),
                    "rotation" => ro = self.sample(a, s, t, true),
                    "scale" => sc = self.sample(a, s, t, false),
                    _ => {}
                }
            }
        }
        Mat4::from_scale_rotation_translation(
            Vec3::from_slice(&sc),
            Quat::from_slice(&ro).normalize(),
            Vec3::from_slice(&tr),
        )
    }

    fn world(&self, node: usize, anim: Option<usize>, t: f32) -> Mat4 {
        let local = self.local(node, anim, t);
        match self.parent[node] {
            Some(p) => self.world(p, anim, t) * local,
            None => local,
        }
    }

    fn weights(&self, node: usize, anim: Option<usize>, t: f32) -> Vec<f32> {
        let n = &self.j["nodes"][node];
        let mesh = &self.j["meshes"][n["mesh"].as_u64().unwrap() as usize];
        let targets = mesh["primitives"][0]["targets"].as_array().map_or(0, |a| a.len());
        let f = |v: &Value| {
            v.as_array().map(|a| a.iter().map(|x| x.as_f64().unwrap() as f32).collect::<Vec<f32>>())
        };
        let mut w = f(&n["weights"]).or_else(|| f(&mesh["weights"])).unwrap_or(vec![0.0; targets]);
        if let Some(a) = anim {
            for c in self.j["animations"][a]["channels"].as_array().unwrap() {
                if c["target"]["node"].as_u64() == Some(node as u64) && c["target"]["path"] == "weights" {
                    w = self.sample(a, c["sampler"].as_u64().unwrap() as usize, t, false);
                }
            }
        }
        w
    }

    /// World positions of every vertex of every primitive of mesh node `node`.
    fn positions(&self, node: usize, anim: Option<usize>, t: f32) -> Vec<Vec<Vec3>> {
        let n = &self.j["nodes"][node];
        let mesh = &self.j["meshes"][n["mesh"].as_u64().unwrap() as usize];
        let w = self.weights(node, anim, t);
        let skin_joints: Option<(Vec<Mat4>, Vec<Mat4>)> = n["skin"].as_u64().map(|s| {
            let skin = &self.j["skins"][s as usize];
            let joints: Vec<usize> =
                skin["joints"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as usize).collect();
            let ibm = match skin["inverseBindMatrices"].as_u64() {
                Some(a) => self.accessor(a as usize).iter().map(|m| Mat4::from_cols_slice(m)).collect(),
                None => vec![Mat4::IDENTITY; joints.len()],
            };
            (joints.iter().map(|&j| self.world(j, anim, t)).collect(), ibm)
        });
        let mesh_world = self.world(node, anim, t);
        let attr = |p: &Value, k: &str| p["attributes"][k].as_u64().map(|a| self.accessor(a as usize));
        mesh["primitives"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                let pos = attr(p, "POSITION").unwrap();
                let targets: Vec<Vec<Vec<f32>>> = p["targets"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|t| {
                        t["POSITION"]
                            .as_u64()
                            .map_or(vec![vec![0.0; 3]; pos.len()], |a| self.accessor(a as usize))
                    })
                    .collect();
                let morphed = (0..pos.len()).map(|v| {
                    let mut x = Vec3::from_slice(&pos[v]);
                    for (ti, tg) in targets.iter().enumerate() {
                        x += Vec3::from_slice(&tg[v]) * w[ti];
                    }
                    x
                });
                match &skin_joints {
                    Some((jw, ibm)) => {
                        let js = attr(p, "JOINTS_0").unwrap();
                        let ws = attr(p, "WEIGHTS_0").unwrap();
                        morphed
                            .enumerate()
                            .map(|(v, x)| {
                                let mut acc = Vec4::ZERO;
                                for k in 0..4 {
                                    let j = js[v][k] as usize;
                                    acc += (jw[j] * ibm[j] * x.extend(1.0)) * ws[v][k];
                                }
                                acc.truncate()
                            })
                            .collect()
                    }
                    None => morphed.map(|x| mesh_world.transform_point3(x)).collect(),
                }
            })
            .collect()
    }

    fn key_times(&self, anim: usize) -> Vec<f32> {
        let mut out = Vec::new();
        for s in self.j["animations"][anim]["samplers"].as_array().unwrap() {
            out.extend(self.accessor(s["input"].as_u64().unwrap() as usize).into_iter().map(|v| v[0]));
        }
        out.sort_by(f32::total_cmp);
        out.dedup();
        out
    }
}

// ---------------------------------------------------------------------------------------------
// The engine side: importer + ScenePose + MorphJob + SkinningJob.
// ---------------------------------------------------------------------------------------------

fn engine_positions(scene: &ImportedScene, pose: &ScenePose, node: usize) -> Vec<Vec<Vec3>> {
    let n = &scene.nodes[node];
    let mesh = &scene.meshes[n.mesh.unwrap()];
    let world = pose.world[node];
    let palette = n.skin.map(|s| {
        let mut m = vec![Mat4::IDENTITY; scene.skins[s].joints.len()];
        pose.skinning_matrices(scene, s, node, &mut m);
        m
    });
    mesh.primitives
        .iter()
        .map(|p| {
            let k = p.positions.len();
            let mut morphed = vec![[0.0; 3]; k];
            MorphJob {
                base_positions: &p.positions,
                base_normals: &[],
                base_tangents: &[],
                targets: &p.targets,
                weights: &pose.morph_weights[node],
                positions: &mut morphed,
                normals: &mut [],
                tangents: &mut [],
            }
            .run()
            .unwrap();
            let mut out = morphed.clone();
            if let (Some(m), Some(st)) = (&palette, &p.skin) {
                SkinningJob {
                    palette: m,
                    joints: &st.joints,
                    weights: &st.weights,
                    positions: &morphed,
                    normals: &[],
                    tangents: &[],
                    out_positions: &mut out,
                    out_normals: &mut [],
                    out_tangents: &mut [],
                }
                .run()
                .unwrap();
            }
            out.iter().map(|p| world.transform_point3(Vec3::from(*p))).collect()
        })
        .collect()
}

fn mat_close(a: &Mat4, b: &Mat4, tol: f32) -> bool {
    a.to_cols_array().iter().zip(b.to_cols_array()).all(|(x, y)| (x - y).abs() <= tol)
}

#[test]
fn every_model_and_animation_agrees_with_the_specification() {
    let dir = gltf_dir();
    let mut checked_times = 0usize;
    for model in MODELS {
        let path = dir.join(model);
        let spec = Spec::load(&path);
        let scene = gltf::import(&path).unwrap_or_else(|e| panic!("{e}"));
        let mut pose = ScenePose::new(&scene);
        let mesh_nodes: Vec<usize> =
            (0..scene.nodes.len()).filter(|&n| scene.nodes[n].mesh.is_some()).collect();
        // Model size: the extent of the rest pose.
        let mut lo = Vec3::splat(f32::MAX);
        let mut hi = Vec3::splat(f32::MIN);
        for &n in &mesh_nodes {
            for p in spec.positions(n, None, 0.0).iter().flatten() {
                lo = lo.min(*p);
                hi = hi.max(*p);
            }
        }
        let size = (hi - lo).max_element().max(1e-3);
        let tol = 1e-5 * size.max(1.0);
        let anims = scene.animations.len();
        assert_eq!(anims, spec.j["animations"].as_array().map_or(0, |a| a.len()), "{model}");
        for a in 0..anims {
            let keys = spec.key_times(a);
            let duration = scene.animations[a].duration;
            assert_eq!(duration, *keys.last().unwrap(), "{model} animation {a} duration");
            let mut times = keys.clone();
            times.extend(keys.windows(2).map(|w| 0.5 * (w[0] + w[1])));
            times.extend((0..=20).map(|i| duration * i as f32 / 20.0));
            times.push(0.0);
            assert!(times.len() >= 20);
            for &t in &times {
                pose.evaluate(&scene, Some(a), t).unwrap();
                for (si, skin) in scene.skins.iter().enumerate() {
                    let mut jw = vec![Mat4::IDENTITY; skin.joints.len()];
                    pose.joint_world(&scene, si, &mut jw);
                    for (k, &node) in skin.joints.iter().enumerate() {
                        let want = spec.world(node, Some(a), t);
                        assert!(
                            mat_close(&jw[k], &want, tol),
                            "{model} anim {a} t={t} joint {k}: {:?} vs {want:?}",
                            jw[k]
                        );
                    }
                    for &mn in mesh_nodes.iter().filter(|&&n| scene.nodes[n].skin == Some(si)) {
                        let mut sm = vec![Mat4::IDENTITY; skin.joints.len()];
                        pose.skinning_matrices(&scene, si, mn, &mut sm);
                        let inv_mesh = spec.world(mn, Some(a), t).inverse();
                        for (k, &node) in skin.joints.iter().enumerate() {
                            let want = inv_mesh * spec.world(node, Some(a), t) * skin.inverse_bind[k];
                            assert!(
                                mat_close(&sm[k], &want, tol),
                                "{model} anim {a} t={t} skinning matrix {k}"
                            );
                        }
                    }
                }
                for &n in &mesh_nodes {
                    let want_w = spec.weights(n, Some(a), t);
                    for (x, y) in pose.morph_weights[n].iter().zip(&want_w) {
                        assert!(
                            (x - y).abs() <= 1e-6,
                            "{model} anim {a} t={t} node {n} weights {:?} vs {want_w:?}",
                            pose.morph_weights[n]
                        );
                    }
                    let want = spec.positions(n, Some(a), t);
                    let got = engine_positions(&scene, &pose, n);
                    assert_eq!(want.len(), got.len());
                    for (pi, (w, g)) in want.iter().zip(&got).enumerate() {
                        assert_eq!(w.len(), g.len());
                        for (v, (w, g)) in w.iter().zip(g).enumerate() {
                            assert!(
                                (*w - *g).abs().max_element() <= tol,
                                "{model} anim {a} t={t} node {n} primitive {pi} vertex {v}: engine {g} vs spec {w} (tol {tol})"
                            );
                        }
                    }
                }
                checked_times += 1;
            }
        }
    }
    assert!(checked_times > 9 * 20, "{checked_times}");
}

// ---------------------------------------------------------------------------------------------
// Hand-checked values.
// ---------------------------------------------------------------------------------------------

fn pose_at(model: &str, anim: Option<usize>, t: f32) -> (ImportedScene, ScenePose) {
    let scene = gltf::import(gltf_dir().join(model)).unwrap();
    let mut pose = ScenePose::new(&scene);
    pose.evaluate(&scene, anim, t).unwrap();
    (scene, pose)
}

fn close3(a: Vec3, b: [f32; 3]) -> bool {
    (a - Vec3::from(b)).abs().max_element() < 1e-5
}

#[test]
fn simple_skin_hand_checked() {
    // Keys at 1.0 and 1.5 are both (0, 0, 0.707, 0.707): joint 1 is turned 90 degrees about Z.
    for t in [1.0, 1.25, 1.5] {
        let (scene, pose) = pose_at("SimpleSkin/SimpleSkin.gltf", Some(0), t);
        let mut jw = [Mat4::IDENTITY; 2];
        pose.joint_world(&scene, 0, &mut jw);
        assert!(mat_close(&jw[0], &Mat4::IDENTITY, 1e-6));
        let want = Mat4::from_translation(Vec3::Y) * Mat4::from_rotation_z(std::f32::consts::FRAC_PI_2);
        assert!(mat_close(&jw[1], &want, 1e-6), "{:?}", jw[1]);
        let p = &engine_positions(&scene, &pose, 0)[0];
        // Vertex 8 (-0.5, 2, 0), all on joint 1: Rz90 * (-0.5, 1, 0) + (0, 1, 0) = (-1, 0.5, 0).
        assert!(close3(p[8], [-1.0, 0.5, 0.0]), "{}", p[8]);
        // Vertex 4 (-0.5, 1, 0), half/half: ((-0.5, 1, 0) + (0, 0.5, 0)) / 2.
        assert!(close3(p[4], [-0.25, 0.75, 0.0]), "{}", p[4]);
        // Vertex 1 (0.5, 0, 0) on joint 0 only: unmoved.
        assert!(close3(p[1], [0.5, 0.0, 0.0]));
    }
    let (scene, pose) = pose_at("SimpleSkin/SimpleSkin.gltf", Some(0), 0.0);
    let p = &engine_positions(&scene, &pose, 0)[0];
    assert!(close3(p[9], [0.5, 2.0, 0.0]), "rest pose at t = 0");
}

#[test]
fn rigged_simple_hand_checked() {
    // Z_UP maps (x, y, z) -> (x, z, -y) ... as the matrix columns say: X->X, Y->-Z, Z->Y.
    // Armature (column-major [c, -1, 0; 1, c, 0]) maps X->-Y, Y->X (c ~ -4.4e-8).
    // Bone: translation (0, -1.36e-7, -4.18033) under both: world translation =
    // Z_UP * Armature * t = Z_UP * (-1.36e-7 * 1, ~0, -4.18033) = (~0, -4.18033, ~0).
    let (scene, pose) = pose_at("RiggedSimple/RiggedSimple.glb", None, 0.0);
    assert_eq!(scene.rigs.len(), 1);
    let rig = &scene.rigs[0];
    assert_eq!(rig.skeleton.name, "Armature");
    assert_eq!(rig.skeleton.bone_names, ["Bone", "Bone.001"]);
    assert_eq!(rig.skeleton.parents, [u16::MAX, 0]);
    assert_eq!(rig.root_parent, Some(1));
    let mut jw = [Mat4::IDENTITY; 2];
    pose.joint_world(&scene, 0, &mut jw);
    let t0 = jw[0].w_axis.truncate();
    assert!((t0 - Vec3::new(0.0, -4.18033, 0.0)).abs().max_element() < 1e-4, "{t0}");
    // The mesh node shares the Bone's parents, so skinning matrix 0 = Bone * inverseBind[0]:
    // Bone translates by (0, -1.36e-7, -4.18033); inverseBind[0] has columns (0, 1, 0), (-1, 0, 0),
    // (0, 0, 1) and translation (0, 1.36e-7, 4.18033). The translations cancel and the result is a
    // quarter turn about Z (X -> Y, Y -> -X).
    let mut sm = [Mat4::IDENTITY; 2];
    pose.skinning_matrices(&scene, 0, 2, &mut sm);
    let want = Mat4::from_cols_array(&[
        0.0, 1.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
    ]);
    assert!(mat_close(&sm[0], &want, 1e-5), "{:?}", sm[0]);
}

#[test]
fn interpolation_test_hand_checked() {
    let model = "InterpolationTest/InterpolationTest.glb";
    let scene = gltf::import(gltf_dir().join(model)).unwrap();
    let names: Vec<&str> = scene.animations.iter().map(|a| a.name.as_str()).collect();
    let mut pose = ScenePose::new(&scene);
    let mut at = |name: &str, t: f32| {
        let a = names.iter().position(|n| *n == name).unwrap();
        pose.evaluate(&scene, Some(a), t).unwrap();
        pose.local.clone()
    };
    // Interpolation kept as authored, through the property-animation path (no rigs here).
    assert!(scene.rigs.is_empty());
    use marrow_engine::track::Interpolation::*;
    let interp = |name: &str| {
        let a = &scene.animations[names.iter().position(|n| *n == name).unwrap()];
        let p = &a.nodes[0].animation;
        p.translation
            .as_ref()
            .map(|t| t.interpolation())
            .or(p.rotation.as_ref().map(|t| t.interpolation()))
            .or(p.scale.as_ref().map(|t| t.interpolation()))
            .unwrap()
    };
    assert_eq!(interp("Step Scale"), Step);
    assert_eq!(interp("Linear Rotation"), Linear);
    assert_eq!(interp("CubicSpline Translation"), CubicSpline);
    // STEP holds the left key: scale keys 1, 0, 1, 0, 1 at 0, 0.5, ...
    assert_eq!(at("Step Scale", 0.49)[0].scale, Vec3::ONE);
    assert_eq!(at("Step Scale", 0.75)[0].scale, Vec3::ZERO);
    // LINEAR halfway between 1 and 0.
    assert!((at("Linear Scale", 0.25)[1].scale - Vec3::splat(0.5)).abs().max_element() < 1e-6);
    // CUBICSPLINE with zero tangents at s = 0.25: h00 = 0.84375, h01 = 0.15625.
    assert!((at("CubicSpline Scale", 0.125)[2].scale - Vec3::splat(0.84375)).abs().max_element() < 1e-6);
    let y = at("CubicSpline Translation", 0.125)[7].translation;
    assert!((y - Vec3::new(3.4, 0.84375 * 6.8 + 0.15625 * 10.8, 0.0)).abs().max_element() < 1e-5, "{y}");
    assert!((y.y - 7.425).abs() < 1e-5);
    // STEP rotation at 0.75 holds -45 degrees about Z; LINEAR at 0.25 is -22.5 degrees.
    let r = at("Step Rotation", 0.75)[3].rotation;
    assert!(r.abs_diff_eq(Quat::from_rotation_z(-std::f32::consts::FRAC_PI_4), 1e-6), "{r}");
    let r = at("Linear Rotation", 0.25)[5].rotation;
    assert!(r.abs_diff_eq(Quat::from_rotation_z(-std::f32::consts::FRAC_PI_8), 1e-5), "{r}");
    // CUBICSPLINE rotation at 0.125 (s = 0.25, td = 0.5): the tangents in this file are
    // (0, 0, 0, 1), not zero. h00 = 0.84375, h10 = 0.140625, h01 = 0.15625, h11 = -0.046875:
    // w = 0.84375 + 0.140625 * 0.5 + 0.15625 * 0.9238795 - 0.046875 * 0.5 = 1.0349812,
    // z = 0.15625 * -0.3826834 = -0.0597943; normalized: (0, 0, -0.0576771, 0.9983353).
    let r = at("CubicSpline Rotation", 0.125)[4].rotation;
    assert!(r.abs_diff_eq(Quat::from_xyzw(0.0, 0.0, -0.0576771, 0.9983353), 1e-6), "{r}");
    // And the world position of the Linear Scale cube's vertex 0 (-1, 1, 1) at t = 0.25.
    let a = names.iter().position(|n| *n == "Linear Scale").unwrap();
    pose.evaluate(&scene, Some(a), 0.25).unwrap();
    let p = engine_positions(&scene, &pose, 1)[0][0];
    let base = scene.meshes[0].primitives[0].positions[0];
    assert_eq!(base, [-1.0, 1.0, 1.0]);
    assert!(close3(p, [-3.4 - 0.5, 0.5, 0.5]), "{p}");
}

#[test]
fn joint_nodes_spawn_no_entities_and_non_joint_animation_uses_property_path() {
    let scene = gltf::import(gltf_dir().join("CesiumMan/CesiumMan.glb")).unwrap();
    assert_eq!(scene.rigs.len(), 1);
    let rig = &scene.rigs[0];
    assert_eq!(rig.skeleton.bone_count(), 19);
    for (b, &p) in rig.skeleton.parents.iter().enumerate() {
        assert!(p == u16::MAX || (p as usize) < b);
    }
    for (j, &node) in rig.joint_nodes.iter().enumerate() {
        assert_eq!(rig.bone_nodes[rig.joint_to_bone[j] as usize], node);
        assert_eq!(scene.nodes[node].bones.len(), 1);
    }
    assert_eq!(rig.bindings.len(), 1);
    assert_eq!(rig.bindings[0].node, 2);
    let a = &scene.animations[0];
    assert_eq!(a.clips.len(), 1);
    assert_eq!(a.clips[0].clip.skeleton, rig.skeleton.name);
    assert!(a.nodes.is_empty());
    // Every joint influences vertices, so each has joint-local bounds.
    assert!(rig.bindings[0].joint_bounds.iter().filter(|b| b.is_some()).count() > 10);
    let boxed = gltf::import(gltf_dir().join("BoxAnimated/BoxAnimated.gltf")).unwrap();
    assert!(boxed.rigs.is_empty());
    assert_eq!(boxed.animations.len(), 2);
    assert_eq!(boxed.animations[0].nodes.len(), 1);
    let tri = gltf::import(gltf_dir().join("AnimatedTriangle/AnimatedTriangle.gltf")).unwrap();
    assert!(tri.animations[0].nodes[0].animation.rotation.is_some());
}

#[test]
fn morph_targets_names_and_defaults() {
    let scene = gltf::import(gltf_dir().join("AnimatedMorphCube/AnimatedMorphCube.glb")).unwrap();
    let m = &scene.meshes[0];
    assert_eq!(m.weights, [0.0, 0.0]);
    assert_eq!(m.target_names.len(), 2);
    let p = &m.primitives[0];
    assert_eq!(p.targets.len(), 2);
    assert_eq!(p.targets[0].positions.len(), p.positions.len());
    assert_eq!(p.targets[0].normals.len(), p.positions.len());
    assert_eq!(p.targets[0].tangents.len(), p.positions.len());
    assert_eq!(scene.animations[0].morphs[0].weights.len(), 2);
    let simple = gltf::import(gltf_dir().join("SimpleMorph/SimpleMorph.gltf")).unwrap();
    assert_eq!(simple.meshes[0].weights, [0.5, 0.5]);
    assert_eq!(simple.meshes[0].target_names, ["target0", "target1"]);
}
