//! glTF export: an [`ImportedScene`] written back as a binary glTF (GLB): nodes with their
//! transforms, meshes (positions, normals, tangents, UVs, colours, indices, skin attributes,
//! morph targets), skins (joints and inverse binds) and animations (each rig's clips as node
//! channels, property animations, morph weights). Tracks are written exactly as they are held:
//! LINEAR, STEP and CUBICSPLINE keys keep their times and values; tracks that share key times
//! share one sampler input accessor; accessors carry the `min`/`max` glTF requires of positions
//! and animation inputs. A clip's markers go into its animation's `extras` as
//! `{ "markers": [{ "name", "time" }] }`, which the importer reads back.
//!
//! Not here yet: eased keys (an imported scene has none; a project clip's easing would need
//! baking), materials and images, a project scene as the input, and the Khronos validator check.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::ImportedScene;
use crate::track::{Animatable, Interpolation, Track};

/// Why an export cannot be written.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ExportError {
    /// A value that glTF cannot carry (a non-finite number).
    #[error("export: {what} holds a non-finite value")]
    NotFinite {
        /// What.
        what: String,
    },
}

/// Binary chunk and the JSON arrays that describe it.
struct Bin {
    bytes: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
    /// Sampler inputs already written, by their bits, to share one accessor.
    inputs: HashMap<Vec<u32>, usize>,
}

impl Bin {
    fn push(&mut self, data: &[u8], count: usize, ct: u32, kind: &str, target: Option<u32>) -> usize {
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
        let mut view = json!({"buffer": 0, "byteOffset": self.bytes.len(), "byteLength": data.len()});
        if let Some(t) = target {
            view["target"] = json!(t);
        }
        self.views.push(view);
        self.bytes.extend_from_slice(data);
        self.accessors.push(
            json!({"bufferView": self.views.len() - 1, "componentType": ct, "count": count, "type": kind}),
        );
        self.accessors.len() - 1
    }

    fn floats(&mut self, v: &[f32], comps: usize, kind: &str, bounds: bool, target: Option<u32>) -> usize {
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        let a = self.push(&bytes, v.len() / comps.max(1), 5126, kind, target);
        if bounds && !v.is_empty() {
            let (mut lo, mut hi) = (vec![f32::INFINITY; comps], vec![f32::NEG_INFINITY; comps]);
            for c in v.chunks_exact(comps) {
                for k in 0..comps {
                    lo[k] = lo[k].min(c[k]);
                    hi[k] = hi[k].max(c[k]);
                }
            }
            self.accessors[a]["min"] = json!(lo);
            self.accessors[a]["max"] = json!(hi);
        }
        a
    }

    /// A sampler input accessor for `times`, shared with any earlier identical one.
    fn input(&mut self, times: &[f32]) -> usize {
        let key: Vec<u32> = times.iter().map(|t| t.to_bits()).collect();
        if let Some(&a) = self.inputs.get(&key) {
            return a;
        }
        let a = self.floats(times, 1, "SCALAR", true, None);
        self.inputs.insert(key, a);
        a
    }
}

fn interpolation_name(i: Interpolation) -> &'static str {
    match i {
        Interpolation::Step => "STEP",
        Interpolation::Linear => "LINEAR",
        Interpolation::CubicSpline => "CUBICSPLINE",
    }
}

/// A track's output values as glTF stores them (cubic: in-tangent, value, out-tangent per key).
fn outputs<T: Animatable>(track: &Track<T>, flat: impl Fn(&T) -> Vec<f32>) -> Vec<f32> {
    if track.interpolation() == Interpolation::CubicSpline {
        (0..track.len())
            .flat_map(|k| {
                let mut v = flat(&track.in_tangents()[k]);
                v.extend(flat(&track.values()[k]));
                v.extend(flat(&track.out_tangents()[k]));
                v
            })
            .collect()
    } else {
        track.values().iter().flat_map(flat).collect()
    }
}

/// Writes `scene` as GLB bytes.
pub fn export_glb(scene: &ImportedScene) -> Result<Vec<u8>, ExportError> {
    let mut bin = Bin { bytes: Vec::new(), views: Vec::new(), accessors: Vec::new(), inputs: HashMap::new() };
    let finite = |what: String, v: &[f32]| {
        if v.iter().all(|x| x.is_finite()) { Ok(()) } else { Err(ExportError::NotFinite { what }) }
    };
    // Meshes.
    let mut meshes = Vec::new();
    for (mi, m) in scene.meshes.iter().enumerate() {
        let mut prims = Vec::new();
        for (pi, p) in m.primitives.iter().enumerate() {
            let flat3 = |v: &[[f32; 3]]| v.iter().flatten().copied().collect::<Vec<f32>>();
            let pos = flat3(&p.positions);
            finite(format!("mesh {mi} primitive {pi} POSITION"), &pos)?;
            let mut attributes = serde_json::Map::new();
            attributes.insert("POSITION".into(), json!(bin.floats(&pos, 3, "VEC3", true, Some(34962))));
            if !p.normals.is_empty() {
                attributes.insert(
                    "NORMAL".into(),
                    json!(bin.floats(&flat3(&p.normals), 3, "VEC3", false, Some(34962))),
                );
            }
            if !p.tangents.is_empty() {
                let t: Vec<f32> = p.tangents.iter().flatten().copied().collect();
                attributes.insert("TANGENT".into(), json!(bin.floats(&t, 4, "VEC4", false, Some(34962))));
            }
            if !p.uvs.is_empty() {
                let t: Vec<f32> = p.uvs.iter().flatten().copied().collect();
                attributes.insert("TEXCOORD_0".into(), json!(bin.floats(&t, 2, "VEC2", false, Some(34962))));
            }
            if !p.colors.is_empty() {
                let t: Vec<f32> = p.colors.iter().flatten().copied().collect();
                attributes.insert("COLOR_0".into(), json!(bin.floats(&t, 4, "VEC4", false, Some(34962))));
            }
            if let Some(s) = &p.skin {
                let j: Vec<u8> = s.joints.iter().flatten().flat_map(|x| x.to_le_bytes()).collect();
                attributes.insert(
                    "JOINTS_0".into(),
                    json!(bin.push(&j, s.joints.len(), 5123, "VEC4", Some(34962))),
                );
                let w: Vec<f32> = s.weights.iter().flatten().copied().collect();
                attributes.insert("WEIGHTS_0".into(), json!(bin.floats(&w, 4, "VEC4", false, Some(34962))));
            }
            let mut prim = json!({"attributes": attributes, "mode": p.mode});
            if let Some(ix) = &p.indices {
                let b: Vec<u8> = ix.iter().flat_map(|x| x.to_le_bytes()).collect();
                prim["indices"] = json!(bin.push(&b, ix.len(), 5125, "SCALAR", Some(34963)));
            }
            if !p.targets.is_empty() {
                let targets: Vec<Value> = p
                    .targets
                    .iter()
                    .map(|t| {
                        let mut o = serde_json::Map::new();
                        if !t.positions.is_empty() {
                            o.insert(
                                "POSITION".into(),
                                json!(bin.floats(&flat3(&t.positions), 3, "VEC3", true, None)),
                            );
                        }
                        if !t.normals.is_empty() {
                            o.insert(
                                "NORMAL".into(),
                                json!(bin.floats(&flat3(&t.normals), 3, "VEC3", false, None)),
                            );
                        }
                        Value::Object(o)
                    })
                    .collect();
                prim["targets"] = json!(targets);
            }
            if let Some(mat) = p.material {
                let _ = mat; // materials are not exported yet
            }
            prims.push(prim);
        }
        let mut mesh = json!({"name": m.name, "primitives": prims});
        if !m.weights.is_empty() {
            mesh["weights"] = json!(m.weights);
            mesh["extras"] = json!({"targetNames": m.target_names});
        }
        meshes.push(mesh);
    }
    // Skins.
    let mut skins = Vec::new();
    for s in &scene.skins {
        let ib: Vec<f32> = s.inverse_bind.iter().flat_map(|m| m.to_cols_array()).collect();
        let a = bin.floats(&ib, 16, "MAT4", false, None);
        let mut skin = json!({"name": s.name, "joints": s.joints, "inverseBindMatrices": a});
        if let Some(r) = s.skeleton_root {
            skin["skeleton"] = json!(r);
        }
        skins.push(skin);
    }
    // Nodes, named as imported; a rig's bones by their bone names (an unnamed joint node got
    // its bone name on import, so it keeps it).
    let mut names: Vec<&str> = scene.nodes.iter().map(|n| n.name.as_str()).collect();
    for rig in &scene.rigs {
        for (b, &node) in rig.bone_nodes.iter().enumerate() {
            if let (Some(slot), Some(name)) = (names.get_mut(node), rig.skeleton.bone_names.get(b)) {
                *slot = name;
            }
        }
    }
    let nodes: Vec<Value> = scene
        .nodes
        .iter()
        .zip(&names)
        .map(|(n, name)| {
            let t = &n.transform;
            let mut o = json!({
                "name": name,
                "translation": t.translation.to_array(),
                "rotation": t.rotation.to_array(),
                "scale": t.scale.to_array(),
            });
            if !n.children.is_empty() {
                o["children"] = json!(n.children);
            }
            if let Some(m) = n.mesh {
                o["mesh"] = json!(m);
            }
            if let Some(s) = n.skin {
                o["skin"] = json!(s);
            }
            o
        })
        .collect();
    // Animations.
    let mut animations = Vec::new();
    for (ai, a) in scene.animations.iter().enumerate() {
        let mut samplers: Vec<Value> = Vec::new();
        let mut channels: Vec<Value> = Vec::new();
        let mut markers: Vec<Value> = Vec::new();
        let mut channel = |bin: &mut Bin,
                           node: usize,
                           path: &str,
                           times: &[f32],
                           out: Vec<f32>,
                           comps: usize,
                           interp: Interpolation| {
            let kind = if comps == 4 {
                "VEC4"
            } else if comps == 3 {
                "VEC3"
            } else {
                "SCALAR"
            };
            let input = bin.input(times);
            let output = bin.floats(&out, comps, kind, false, None);
            samplers
                .push(json!({"input": input, "output": output, "interpolation": interpolation_name(interp)}));
            channels.push(json!({"sampler": samplers.len() - 1, "target": {"node": node, "path": path}}));
        };
        let v3 = |v: &glam::Vec3| v.to_array().to_vec();
        let q4 = |q: &glam::Quat| q.to_array().to_vec();
        for rc in &a.clips {
            let Some(rig) = scene.rigs.get(rc.rig) else { continue };
            for (b, ch) in rc.clip.channels().iter().enumerate() {
                let Some(&node) = rig.bone_nodes.get(b) else { continue };
                if let Some(t) = &ch.translation {
                    let out = outputs(t, v3);
                    finite(format!("animation {ai} node {node} translation"), &out)?;
                    channel(&mut bin, node, "translation", t.times(), out, 3, t.interpolation());
                }
                if let Some(t) = &ch.rotation {
                    let out = outputs(t, q4);
                    finite(format!("animation {ai} node {node} rotation"), &out)?;
                    channel(&mut bin, node, "rotation", t.times(), out, 4, t.interpolation());
                }
                if let Some(t) = &ch.scale {
                    let out = outputs(t, v3);
                    finite(format!("animation {ai} node {node} scale"), &out)?;
                    channel(&mut bin, node, "scale", t.times(), out, 3, t.interpolation());
                }
            }
            for m in rc.clip.markers() {
                markers.push(json!({"name": m.name, "time": m.time}));
            }
        }
        for na in &a.nodes {
            let p = &na.animation;
            if let Some(t) = &p.translation {
                channel(&mut bin, na.node, "translation", t.times(), outputs(t, v3), 3, t.interpolation());
            }
            if let Some(t) = &p.rotation {
                channel(&mut bin, na.node, "rotation", t.times(), outputs(t, q4), 4, t.interpolation());
            }
            if let Some(t) = &p.scale {
                channel(&mut bin, na.node, "scale", t.times(), outputs(t, v3), 3, t.interpolation());
            }
        }
        for m in &a.morphs {
            // One sampler for every target: the keys are the tracks' shared times, the values
            // interleaved target by target.
            let Some(first) = m.weights.first() else { continue };
            let keys = first.len();
            let cubic = first.interpolation() == Interpolation::CubicSpline;
            let per = |t: &Track<f32>, k: usize| -> Vec<f32> {
                if cubic {
                    vec![t.in_tangents()[k], t.values()[k], t.out_tangents()[k]]
                } else {
                    vec![t.values()[k]]
                }
            };
            let stride = if cubic { 3 } else { 1 };
            let mut out = Vec::with_capacity(keys * m.weights.len() * stride);
            for k in 0..keys {
                for s in 0..stride {
                    for t in &m.weights {
                        out.push(per(t, k)[s]);
                    }
                }
            }
            channel(&mut bin, m.node, "weights", first.times(), out, 1, first.interpolation());
        }
        let mut anim = json!({"name": a.name, "samplers": samplers, "channels": channels});
        if !markers.is_empty() {
            anim["extras"] = json!({"markers": markers});
        }
        animations.push(anim);
    }
    let mut root = json!({
        "asset": {"version": "2.0", "generator": "Marrow"},
        "scene": 0,
        "scenes": [{"nodes": scene.roots}],
        "nodes": nodes,
    });
    if !meshes.is_empty() {
        root["meshes"] = json!(meshes);
    }
    if !skins.is_empty() {
        root["skins"] = json!(skins);
    }
    if !animations.is_empty() {
        root["animations"] = json!(animations);
    }
    while !bin.bytes.len().is_multiple_of(4) {
        bin.bytes.push(0);
    }
    if !bin.bytes.is_empty() {
        root["buffers"] = json!([{"byteLength": bin.bytes.len()}]);
        root["bufferViews"] = json!(bin.views);
        root["accessors"] = json!(bin.accessors);
    }
    let mut text = serde_json::to_vec(&root).unwrap_or_default();
    while !text.len().is_multiple_of(4) {
        text.push(b' ');
    }
    let total = 12 + 8 + text.len() + if bin.bytes.is_empty() { 0 } else { 8 + bin.bytes.len() };
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&text);
    if !bin.bytes.is_empty() {
        out.extend_from_slice(&(bin.bytes.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&bin.bytes);
    }
    Ok(out)
}
