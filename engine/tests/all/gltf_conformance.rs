//! Conformance with a second reader: every sample model in `assets/gltf/`, every file Marrow's
//! exporter writes for them (GLB and `.gltf` + `.bin`) and for the sample projects, read again
//! with the `gltf` crate (gltf-rs) and compared with Marrow's own import of the same file:
//! nodes (count, names, hierarchy, TRS, mesh, skin, morph weights), skins (joints, inverse binds,
//! and each rig built from them, mapped through joint node names since Marrow orders bones
//! `parent < index` and builds a skeleton per skin), mesh accessors (counts, component types,
//! `min`/`max`, values) and animations (every channel's target, interpolation, input times and
//! output values, against the clip, property or morph track Marrow imported for it; Marrow's
//! own `extras` against the clip's settings and markers).
//!
//! A mismatch fails naming the file and the element. Not here: poses (the export round trip
//! tests compare those) or what Marrow refuses (the bad-input and fuzz tests).

use std::path::{Path, PathBuf};

use glam::{Mat4, Quat, Vec3};
use gltf::animation::Property;
use gltf::animation::util::ReadOutputs;
use marrow_engine::gltf::{
    EasedKeys, ExportOptions, ImportedScene, JointChoice, JointFormat, WeightChoice, WeightFormat,
    export_glb, export_gltf, import,
};
use marrow_engine::project::export::scene_for_export;
use marrow_engine::project::{Library, Project};
use marrow_engine::track::{Animatable, Interpolation, Track};

use crate::support::{gltf_dir, project_dir};

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

const PROJECTS: [&str; 5] = ["runner", "cesium_man", "locomotion", "crowd", "particle_figure"];

/// A file as the `gltf` crate reads it: the document and every buffer's bytes.
struct Second {
    doc: gltf::Document,
    buffers: Vec<Vec<u8>>,
}

impl Second {
    /// Reads the file at `path` (external buffers beside it, `data:` URIs decoded here).
    fn read(path: &Path) -> Second {
        let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let gltf = gltf::Gltf::from_slice(&bytes)
            .unwrap_or_else(|e| panic!("{}: the gltf crate refuses it: {e}", path.display()));
        let dir = path.parent().unwrap_or(Path::new("."));
        let buffers = gltf
            .document
            .buffers()
            .map(|b| match b.source() {
                gltf::buffer::Source::Bin => gltf.blob.clone().expect("a GLB buffer without a BIN chunk"),
                gltf::buffer::Source::Uri(uri) => match uri.split_once(";base64,") {
                    Some((head, data)) if head.starts_with("data:") => base64(data),
                    _ => std::fs::read(dir.join(percent_decode(uri)))
                        .unwrap_or_else(|e| panic!("{}: buffer {uri}: {e}", path.display())),
                },
            })
            .collect();
        Second { doc: gltf.document, buffers }
    }

    /// The bytes of a buffer, for the `gltf` crate's readers.
    fn get<'s>(&'s self) -> impl Clone + for<'b> Fn(gltf::Buffer<'b>) -> Option<&'s [u8]> + 's {
        |b| self.buffers.get(b.index()).map(|v| v.as_slice())
    }
}

/// Standard base64 (what `data:` URIs hold).
fn base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {:?}", c as char),
    };
    let digits: Vec<u8> = text.bytes().filter(|&c| c != b'=').map(value).collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let bits = chunk.iter().enumerate().fold(0u32, |acc, (i, &d)| acc | (u32::from(d) << (18 - 6 * i)));
        out.extend(bits.to_be_bytes()[1..chunk.len()].iter().copied());
    }
    out
}

/// `%XX` escapes decoded (Marrow's exporter writes them for bytes outside `A-Za-z0-9-._~`).
fn percent_decode(uri: &str) -> String {
    let b = uri.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match (b[i], uri.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(x)) => {
                out.push(x);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap()
}

/// The mismatches found in one file, each naming the element.
#[derive(Default)]
struct Faults(Vec<String>);

impl Faults {
    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            self.0.push(what());
        }
    }

    fn eq<T: PartialEq + std::fmt::Debug>(&mut self, gltf: T, marrow: T, what: impl FnOnce() -> String) {
        if gltf != marrow {
            self.0.push(format!("{}: gltf reads {gltf:?}, Marrow imported {marrow:?}", what()));
        }
    }
}

impl Faults {
    /// Two lists equal, a mismatch named by its length or its first differing element.
    fn seq<T: PartialEq + std::fmt::Debug>(
        &mut self,
        gltf: &[T],
        marrow: &[T],
        what: impl FnOnce() -> String,
    ) {
        if gltf.len() != marrow.len() {
            self.0.push(format!(
                "{}: gltf reads {} elements, Marrow imported {}",
                what(),
                gltf.len(),
                marrow.len()
            ));
        } else if let Some(k) = (0..gltf.len()).find(|&k| gltf[k] != marrow[k]) {
            self.0.push(format!(
                "{} [{k}]: gltf reads {:?}, Marrow imported {:?}",
                what(),
                gltf[k],
                marrow[k]
            ));
        }
    }
}

/// Every mismatch between the `gltf` crate's reading of a file and Marrow's import of it.
fn compare(second: &Second, scene: &ImportedScene) -> Vec<String> {
    let mut f = Faults::default();
    nodes(second, scene, &mut f);
    skins(second, scene, &mut f);
    meshes(second, scene, &mut f);
    animations(second, scene, &mut f);
    f.0
}

/// The node's name as the `gltf` crate reads it, if the document names no other node so.
fn unique_name<'a>(doc: &'a gltf::Document, node: &gltf::Node<'a>) -> Option<&'a str> {
    let name = node.name()?;
    (doc.nodes().filter(|n| n.name() == Some(name)).count() == 1).then_some(name)
}

/// Quaternions (x, y, z, w groups) brought to unit length.
fn normalized(v: &[f32]) -> Vec<f32> {
    v.chunks(4).flat_map(|q| Quat::from_slice(q).normalize().to_array()).collect()
}

/// A JSON number read as the `f32` a float accessor's `min`/`max` stands for.
fn as_f32(v: &serde_json::Value) -> Option<f32> {
    v.as_f64().map(|x| x as f32)
}

fn close(a: &[f32], b: &[f32], tol: f32) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol * (1.0 + x.abs().max(y.abs())))
}

/// Rotations equal up to sign and the importer's renormalization.
fn same_rotation(a: [f32; 4], b: Quat) -> bool {
    let a = Quat::from_array(a);
    a.dot(b).abs() >= 1.0 - 2.0e-6
}

fn nodes(s: &Second, scene: &ImportedScene, f: &mut Faults) {
    f.eq(s.doc.nodes().count(), scene.nodes.len(), || "node count".into());
    let mut parents = vec![None; s.doc.nodes().count()];
    for n in s.doc.nodes() {
        for c in n.children() {
            parents[c.index()] = Some(n.index());
        }
    }
    for n in s.doc.nodes() {
        let i = n.index();
        let Some(m) = scene.nodes.get(i) else { continue };
        let at = || format!("node {i} ({:?})", n.name().unwrap_or(""));
        if let Some(name) = n.name() {
            f.eq(name, m.name.as_str(), || format!("{} name", at()));
        }
        f.eq(n.children().map(|c| c.index()).collect::<Vec<_>>(), m.children.clone(), || {
            format!("{} children", at())
        });
        f.eq(parents[i], m.parent, || format!("{} parent", at()));
        f.eq(n.mesh().map(|x| x.index()), m.mesh, || format!("{} mesh", at()));
        f.eq(n.skin().map(|x| x.index()), m.skin, || format!("{} skin", at()));
        let t = &m.transform;
        match n.transform() {
            gltf::scene::Transform::Decomposed { translation, rotation, scale } => {
                f.eq(translation, t.translation.to_array(), || format!("{} translation", at()));
                f.eq(scale, t.scale.to_array(), || format!("{} scale", at()));
                f.check(same_rotation(rotation, t.rotation), || {
                    format!("{} rotation: gltf reads {rotation:?}, Marrow imported {:?}", at(), t.rotation)
                });
            }
            gltf::scene::Transform::Matrix { matrix } => {
                let ours = t.to_mat4().to_cols_array();
                let theirs = Mat4::from_cols_array_2d(&matrix).to_cols_array();
                f.check(close(&theirs, &ours, 1.0e-5), || format!("{} matrix: {theirs:?} vs {ours:?}", at()));
            }
        }
        let mesh_weights = n.mesh().and_then(|x| x.weights().map(<[f32]>::to_vec));
        if let Some(w) = n.weights().map(<[f32]>::to_vec).or(mesh_weights) {
            f.eq(w, m.morph_weights.clone(), || format!("{} morph weights", at()));
        }
    }
}

fn skins(s: &Second, scene: &ImportedScene, f: &mut Faults) {
    f.eq(s.doc.skins().count(), scene.skins.len(), || "skin count".into());
    for skin in s.doc.skins() {
        let Some(m) = scene.skins.get(skin.index()) else { continue };
        let at = || format!("skin {} ({:?})", skin.index(), skin.name().unwrap_or(""));
        let joints: Vec<usize> = skin.joints().map(|j| j.index()).collect();
        f.eq(joints.clone(), m.joints.clone(), || format!("{} joints", at()));
        f.eq(skin.skeleton().map(|n| n.index()), m.skeleton_root, || format!("{} skeleton", at()));
        let ib: Vec<Mat4> = match skin.reader(s.get()).read_inverse_bind_matrices() {
            Some(r) => r.map(|c| Mat4::from_cols_array_2d(&c)).collect(),
            None => vec![Mat4::IDENTITY; joints.len()],
        };
        f.eq(ib.clone(), m.inverse_bind.clone(), || format!("{} inverse bind matrices", at()));
        let Some(rig) = scene.rigs.get(m.rig) else {
            f.check(false, || format!("{}: rig {} missing", at(), m.rig));
            continue;
        };
        // Marrow's bones are ordered parent < index: map each joint through its bone.
        for (j, (&node, ib)) in joints.iter().zip(&ib).enumerate() {
            let gnode = s.doc.nodes().nth(node).unwrap();
            let at = || format!("{} joint {j} (node {node} {:?})", at(), gnode.name().unwrap_or(""));
            let Some(&bone) = rig.joint_to_bone.get(j) else {
                f.check(false, || format!("{}: no bone", at()));
                continue;
            };
            let bone = usize::from(bone);
            f.eq(Some(node), rig.bone_nodes.get(bone).copied(), || format!("{} bone node", at()));
            f.eq(Some(*ib), rig.skeleton.inverse_bind.get(bone).copied(), || {
                format!("{} bone inverse bind", at())
            });
            if let Some(name) = unique_name(&s.doc, &gnode) {
                f.eq(Some(name), rig.skeleton.bone_names.get(bone).map(String::as_str), || {
                    format!("{} bone name", at())
                });
            }
            let parent = rig.skeleton.parents.get(bone).copied().unwrap_or(u16::MAX);
            if parent != u16::MAX {
                let p = usize::from(parent);
                f.check(p < bone, || format!("{}: parent bone {p} is not below bone {bone}", at()));
                let gparent =
                    s.doc.nodes().find(|n| n.children().any(|c| c.index() == node)).map(|n| n.index());
                f.eq(gparent, rig.bone_nodes.get(p).copied(), || format!("{} parent node", at()));
            }
        }
    }
}

/// The per-component minimum and maximum of `v` as the accessor's `min`/`max` say them.
fn bounds(v: &[[f32; 3]]) -> ([f32; 3], [f32; 3]) {
    v.iter().fold(([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]), |(lo, hi), p| {
        (std::array::from_fn(|k| lo[k].min(p[k])), std::array::from_fn(|k| hi[k].max(p[k])))
    })
}

fn meshes(s: &Second, scene: &ImportedScene, f: &mut Faults) {
    f.eq(s.doc.meshes().count(), scene.meshes.len(), || "mesh count".into());
    for mesh in s.doc.meshes() {
        let Some(m) = scene.meshes.get(mesh.index()) else { continue };
        f.eq(mesh.primitives().count(), m.primitives.len(), || {
            format!("mesh {} primitive count", mesh.index())
        });
        for (prim, p) in mesh.primitives().zip(&m.primitives) {
            let at = || {
                format!("mesh {} ({:?}) primitive {}", mesh.index(), mesh.name().unwrap_or(""), prim.index())
            };
            primitive(s, &prim, p, &at, f);
        }
    }
}

fn primitive(
    s: &Second,
    prim: &gltf::Primitive<'_>,
    p: &marrow_engine::mesh::Primitive,
    at: &dyn Fn() -> String,
    f: &mut Faults,
) {
    let r = prim.reader(s.get());
    f.eq(prim.mode().as_gl_enum(), p.mode, || format!("{} mode", at()));
    f.eq(prim.material().index(), p.material, || format!("{} material", at()));
    let positions: Vec<[f32; 3]> = r.read_positions().map(|x| x.collect()).unwrap_or_default();
    f.seq(&positions, &p.positions, || format!("{} POSITION", at()));
    if let Some(a) = prim.get(&gltf::Semantic::Positions) {
        f.eq(a.count(), p.positions.len(), || format!("{} POSITION accessor {} count", at(), a.index()));
        if a.min().is_some() && !p.positions.is_empty() {
            let bb = prim.bounding_box();
            f.eq((bb.min, bb.max), bounds(&p.positions), || {
                format!("{} POSITION accessor {} min/max", at(), a.index())
            });
        }
    }
    let indices = r.read_indices().map(|i| i.into_u32().collect::<Vec<_>>());
    f.eq(indices.is_some(), p.indices.is_some(), || format!("{} indices present", at()));
    if let (Some(theirs), Some(ours)) = (&indices, &p.indices) {
        f.seq(theirs, ours, || format!("{} indices", at()));
    }
    let normals: Vec<[f32; 3]> = r.read_normals().map(|x| x.collect()).unwrap_or_default();
    f.seq(&normals, &p.normals, || format!("{} NORMAL", at()));
    let uvs: Vec<[f32; 2]> = r.read_tex_coords(0).map(|x| x.into_f32().collect()).unwrap_or_default();
    f.check(close(&uvs.concat(), &p.uvs.concat(), 1.0e-6), || format!("{} TEXCOORD_0", at()));
    let targets: Vec<Vec<[f32; 3]>> =
        r.read_morph_targets().map(|(pos, _, _)| pos.map(|x| x.collect()).unwrap_or_default()).collect();
    f.eq(targets.len(), p.targets.len(), || format!("{} morph target count", at()));
    for (t, (theirs, ours)) in targets.iter().zip(&p.targets).enumerate() {
        if !theirs.is_empty() {
            f.seq(theirs, &ours.positions, || format!("{} morph target {t} POSITION", at()));
        }
    }
    let joints = r.read_joints(0).map(|j| j.into_u16().collect::<Vec<_>>());
    f.eq(joints.is_some(), p.skin.is_some(), || format!("{} JOINTS_0 present", at()));
    let (Some(joints), Some(skin)) = (joints, &p.skin) else { return };
    if let Some(a) = prim.get(&gltf::Semantic::Joints(0)) {
        let ours = match skin.format.joints {
            JointFormat::U8 => gltf::accessor::DataType::U8,
            JointFormat::U16 => gltf::accessor::DataType::U16,
        };
        f.eq(a.data_type(), ours, || format!("{} JOINTS_0 accessor {} component type", at(), a.index()));
    }
    if let Some(a) = prim.get(&gltf::Semantic::Weights(0)) {
        let ours = match skin.format.weights {
            WeightFormat::Unorm8 => gltf::accessor::DataType::U8,
            WeightFormat::Unorm16 => gltf::accessor::DataType::U16,
            WeightFormat::Float => gltf::accessor::DataType::F32,
        };
        f.eq(a.data_type(), ours, || format!("{} WEIGHTS_0 accessor {} component type", at(), a.index()));
    }
    // Marrow keeps each vertex's influences heaviest first, renormalized to sum to one: the
    // weight of each joint compared.
    let weights: Vec<[f32; 4]> = r.read_weights(0).map(|w| w.into_f32().collect()).unwrap_or_default();
    f.eq(weights.len(), skin.weights.len(), || format!("{} WEIGHTS_0 count", at()));
    f.eq(joints.len(), skin.joints.len(), || format!("{} JOINTS_0 count", at()));
    for (v, ((w, j), (ow, oj))) in
        weights.iter().zip(&joints).zip(skin.weights.iter().zip(&skin.joints)).enumerate()
    {
        let sum: f32 = w.iter().sum();
        if !(sum > 0.0) {
            continue;
        }
        let theirs = |x: u16| (0..4).filter(|&k| j[k] == x).map(|k| w[k] / sum).sum::<f32>();
        let ours = |x: u16| (0..4).filter(|&k| oj[k] == x).map(|k| ow[k]).sum::<f32>();
        if let Some(x) = j.iter().chain(oj).find(|&&x| (theirs(x) - ours(x)).abs() > 2.0e-6) {
            f.check(false, || {
                format!(
                    "{} vertex {v} joint {x}: gltf reads weight {}, Marrow imported {}",
                    at(),
                    theirs(*x),
                    ours(*x)
                )
            });
        }
    }
}

/// A track's key times, its values flattened and its interpolation.
type Keys = (Vec<f32>, Vec<f32>, Interpolation);

/// A track's keys as glTF stores them: times, and values flattened (cubic: in-tangent, value,
/// out-tangent per key).
fn keys<T: Animatable>(t: &Track<T>, flat: impl Fn(T) -> Vec<f32>) -> Keys {
    let values = if t.interpolation() == Interpolation::CubicSpline {
        (0..t.len())
            .flat_map(|k| [t.in_tangents()[k], t.values()[k], t.out_tangents()[k]])
            .flat_map(&flat)
            .collect()
    } else {
        t.values().iter().copied().flat_map(flat).collect()
    };
    (t.times().to_vec(), values, t.interpolation())
}

fn interpolation(i: gltf::animation::Interpolation) -> Interpolation {
    match i {
        gltf::animation::Interpolation::Linear => Interpolation::Linear,
        gltf::animation::Interpolation::Step => Interpolation::Step,
        gltf::animation::Interpolation::CubicSpline => Interpolation::CubicSpline,
    }
}

fn path_name(p: Property) -> &'static str {
    match p {
        Property::Translation => "translation",
        Property::Rotation => "rotation",
        Property::Scale => "scale",
        Property::MorphTargetWeights => "weights",
    }
}

/// The animation's `extras` as JSON (`Value::Null` without).
fn extras_of(a: &gltf::Animation<'_>) -> serde_json::Value {
    a.extras().as_ref().map(|r| serde_json::from_str(r.get()).unwrap()).unwrap_or_default()
}

/// Marrow's keys for one channel's target: the clip track of every rig the node is a bone of,
/// or the node's property track, or the morph tracks interleaved.
fn marrow_keys(
    scene: &ImportedScene,
    a: &marrow_engine::gltf::Animation,
    node: usize,
    path: Property,
) -> Vec<Option<Keys>> {
    let v3 = |v: Vec3| v.to_array().to_vec();
    let q4 = |q: Quat| q.to_array().to_vec();
    let Some(n) = scene.nodes.get(node) else { return vec![None] };
    if path == Property::MorphTargetWeights {
        let Some(m) = a.morphs.iter().find(|m| m.node == node) else { return vec![None] };
        let Some(first) = m.weights.first() else { return vec![None] };
        let stride = if first.interpolation() == Interpolation::CubicSpline { 3 } else { 1 };
        let per: Vec<Vec<f32>> = m.weights.iter().map(|t| keys(t, |x| vec![x]).1).collect();
        let values = (0..first.len() * stride).flat_map(|k| per.iter().map(move |p| p[k])).collect();
        return vec![Some((first.times().to_vec(), values, first.interpolation()))];
    }
    if n.bones.is_empty() {
        let Some(p) = a.nodes.iter().find(|p| p.node == node).map(|p| &p.animation) else {
            return vec![None];
        };
        return vec![match path {
            Property::Translation => p.translation.as_ref().map(|t| keys(t, v3)),
            Property::Rotation => p.rotation.as_ref().map(|t| keys(t, q4)),
            _ => p.scale.as_ref().map(|t| keys(t, v3)),
        }];
    }
    n.bones
        .iter()
        .map(|b| {
            let c = a.clips.iter().find(|c| c.rig == b.rig)?.clip.channels().get(b.bone)?;
            match path {
                Property::Translation => c.translation.as_ref().map(|t| keys(t, v3)),
                Property::Rotation => c.rotation.as_ref().map(|t| keys(t, q4)),
                _ => c.scale.as_ref().map(|t| keys(t, v3)),
            }
        })
        .collect()
}

fn animations(s: &Second, scene: &ImportedScene, f: &mut Faults) {
    f.eq(s.doc.animations().count(), scene.animations.len(), || "animation count".into());
    for anim in s.doc.animations() {
        let Some(a) = scene.animations.get(anim.index()) else { continue };
        let at = || format!("animation {} ({:?})", anim.index(), anim.name().unwrap_or(""));
        let extras = extras_of(&anim);
        let holds: Vec<(u64, String)> = extras["holds"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|h| Some((h["node"].as_u64()?, h["path"].as_str()?.to_owned())))
            .collect();
        let mut matched = 0;
        for ch in anim.channels() {
            let node = ch.target().node().index();
            let path = ch.target().property();
            let at = || format!("{} channel {} (node {node} {})", at(), ch.index(), path_name(path));
            let ours = marrow_keys(scene, a, node, path);
            if holds.contains(&(node as u64, path_name(path).to_owned())) {
                // Marrow's export added it to hold the clip's length; the import drops it.
                f.check(ours.iter().all(Option::is_none), || {
                    format!("{}: a hold channel was imported", at())
                });
                continue;
            }
            matched += ours.iter().filter(|o| o.is_some()).count();
            let r = ch.reader(s.get());
            let times: Vec<f32> = r.read_inputs().map(|x| x.collect()).unwrap_or_default();
            let values: Vec<f32> = match r.read_outputs() {
                Some(ReadOutputs::Translations(v) | ReadOutputs::Scales(v)) => v.flatten().collect(),
                Some(ReadOutputs::Rotations(v)) => v.into_f32().flatten().collect(),
                Some(ReadOutputs::MorphTargetWeights(v)) => v.into_f32().collect(),
                None => Vec::new(),
            };
            let input = ch.sampler().input();
            f.eq(input.count(), times.len(), || format!("{} input accessor {} count", at(), input.index()));
            if let (Some(lo), Some(hi)) = (input.min(), input.max()) {
                let (first, last) =
                    (times.first().copied().unwrap_or(0.0), times.last().copied().unwrap_or(0.0));
                f.check(as_f32(&lo[0]) == Some(first) && as_f32(&hi[0]) == Some(last), || {
                    format!(
                        "{} input accessor {} min/max {lo}/{hi} vs keys {first}..{last}",
                        at(),
                        input.index()
                    )
                });
            }
            let interp = interpolation(ch.sampler().interpolation());
            for (k, track) in ours.iter().enumerate() {
                let Some((t, v, i)) = track else {
                    f.check(false, || format!("{}: Marrow imported no track (rig {k})", at()));
                    continue;
                };
                f.eq(interp, *i, || format!("{} interpolation", at()));
                f.seq(&times, t, || format!("{} input times", at()));
                // Rotations: unit ones are kept bit for bit, LINEAR and STEP ones that are not
                // unit are normalized on import (the tolerance is a rounding step).
                let unit = path == Property::Rotation && interp != Interpolation::CubicSpline;
                let values = if unit { normalized(&values) } else { values.clone() };
                let tol = if path == Property::Rotation { 2.0e-6 } else { 0.0 };
                f.eq(values.len(), v.len(), || format!("{} output value count", at()));
                if let Some(k) = values.iter().zip(v).position(|(x, y)| !close(&[*x], &[*y], tol)) {
                    f.check(false, || {
                        format!(
                            "{} output values [{k}]: gltf reads {}, Marrow imported {}",
                            at(),
                            values[k],
                            v[k]
                        )
                    });
                }
            }
        }
        f.eq(matched, track_count(a), || format!("{} tracks (channels matched vs imported)", at()));
        clip_extras(&extras, a, &at, f);
    }
}

/// How many tracks Marrow imported for an animation (a morph animation is one channel).
fn track_count(a: &marrow_engine::gltf::Animation) -> usize {
    let clips: usize = a
        .clips
        .iter()
        .flat_map(|c| c.clip.channels())
        .map(|c| {
            [c.translation.is_some(), c.rotation.is_some(), c.scale.is_some()]
                .into_iter()
                .filter(|&x| x)
                .count()
        })
        .sum();
    let nodes: usize = a
        .nodes
        .iter()
        .map(|n| &n.animation)
        .map(|p| {
            [p.translation.is_some(), p.rotation.is_some(), p.scale.is_some()]
                .into_iter()
                .filter(|&x| x)
                .count()
        })
        .sum();
    clips + nodes + a.morphs.iter().filter(|m| !m.weights.is_empty()).count()
}

/// Marrow's animation `extras` (markers, looping, frame rate, length) against the clips imported.
fn clip_extras(
    extras: &serde_json::Value,
    a: &marrow_engine::gltf::Animation,
    at: &dyn Fn() -> String,
    f: &mut Faults,
) {
    for rc in &a.clips {
        let c = &rc.clip;
        if let Some(markers) = extras["markers"].as_array() {
            let theirs: Vec<(String, f32)> = markers
                .iter()
                .map(|m| {
                    (
                        m["name"].as_str().unwrap_or("").to_owned(),
                        m["time"].as_f64().unwrap_or(f64::NAN) as f32,
                    )
                })
                .collect();
            let ours: Vec<(String, f32)> = c.markers().iter().map(|m| (m.name.clone(), m.time)).collect();
            f.eq(theirs, ours, || format!("{} extras.markers", at()));
        }
        if let Some(l) = extras["looping"].as_bool() {
            f.eq(l, c.looping, || format!("{} extras.looping", at()));
        }
        if let Some(r) = extras["frameRate"].as_f64() {
            f.eq(r as f32, c.frame_rate, || format!("{} extras.frameRate", at()));
        }
        if let Some(l) = extras["length"].as_f64() {
            f.eq(l as f32, c.length, || format!("{} extras.length", at()));
        }
    }
}

/// A fresh folder for one test's files.
fn tempdir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("marrow-conformance-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Reads `path` with both readers and fails naming the file and every mismatch.
fn conforms(path: &Path, what: &str) {
    let scene = import(path).unwrap_or_else(|e| panic!("{what}: Marrow refuses it: {e}"));
    let faults = compare(&Second::read(path), &scene);
    assert!(faults.is_empty(), "{what}: the gltf crate and Marrow disagree:\n{}", faults.join("\n"));
}

/// `scene` exported with `opts` as GLB and as `.gltf` + `.bin` into `dir`, each read with both
/// readers.
fn exports_conform(scene: &ImportedScene, opts: &ExportOptions, dir: &Path, stem: &str) {
    let (glb, _) = export_glb(scene, opts).unwrap_or_else(|e| panic!("{stem}: {e}"));
    let glb_path = dir.join(format!("{stem}.glb"));
    std::fs::write(&glb_path, glb).unwrap();
    conforms(&glb_path, &format!("{stem} exported as GLB"));
    let bin = format!("{stem} data.bin");
    let (json, bytes, _) = export_gltf(scene, opts, &bin).unwrap_or_else(|e| panic!("{stem}: {e}"));
    std::fs::write(dir.join(&bin), bytes).unwrap();
    let gltf_path = dir.join(format!("{stem}.gltf"));
    std::fs::write(&gltf_path, json).unwrap();
    conforms(&gltf_path, &format!("{stem} exported as .gltf"));
}

#[test]
fn every_sample_model_reads_the_same_with_the_gltf_crate() {
    for m in MODELS {
        conforms(&gltf_dir().join(m), m);
    }
}

#[test]
fn every_export_of_a_sample_model_reads_the_same_with_the_gltf_crate() {
    let dir = tempdir("models");
    for m in MODELS {
        let scene = import(gltf_dir().join(m)).unwrap();
        let stem = Path::new(m).file_stem().unwrap().to_str().unwrap();
        exports_conform(&scene, &ExportOptions::default(), &dir, stem);
    }
    // Skin streams in the smallest and in stated component types.
    let man = import(gltf_dir().join("CesiumMan/CesiumMan.glb")).unwrap();
    for (tag, joints, weights) in [
        ("smallest", JointChoice::Smallest, WeightChoice::Smallest),
        ("u8", JointChoice::Exactly(JointFormat::U8), WeightChoice::Exactly(WeightFormat::Unorm8)),
        ("u16", JointChoice::Exactly(JointFormat::U16), WeightChoice::Exactly(WeightFormat::Unorm16)),
    ] {
        let opts = ExportOptions { joints, weights, ..Default::default() };
        exports_conform(&man, &opts, &dir, &format!("CesiumMan-{tag}"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn every_export_of_a_sample_project_reads_the_same_with_the_gltf_crate() {
    let dir = tempdir("projects");
    for name in PROJECTS {
        let pd = project_dir(name);
        let project = Project::load(&pd).unwrap();
        let lib = Library::load(&project, &pd).unwrap();
        let export = scene_for_export(&project, &lib, None).unwrap_or_else(|e| panic!("{name}: {e}"));
        exports_conform(&export.scene, &ExportOptions::default(), &dir, name);
        // Eased keys written linear instead of baked.
        let linear = ExportOptions { eased: EasedKeys::Linear, ..Default::default() };
        exports_conform(&export.scene, &linear, &dir, &format!("{name}-linear"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The comparison fails, naming the element, when Marrow's import differs from the file.
#[test]
fn a_scene_that_differs_from_its_file_is_named_element_by_element() {
    let path = gltf_dir().join("RiggedSimple/RiggedSimple.glb");
    let second = Second::read(&path);
    let scene = import(&path).unwrap();
    assert!(compare(&second, &scene).is_empty());

    let mut renamed = scene.clone();
    renamed.nodes[1].name.push('x');
    let faults = compare(&second, &renamed);
    assert!(faults.iter().any(|f| f.starts_with("node 1 (") && f.contains("name")), "{faults:?}");

    let mut moved = scene.clone();
    let rig = &mut moved.animations[0].clips[0];
    let channels = rig.clip.channels_mut();
    let (bone, track) = channels
        .iter_mut()
        .enumerate()
        .find_map(|(b, c)| c.rotation.as_mut().map(|t| (b, t)))
        .expect("RiggedSimple animates a rotation");
    let mut values = track.values().to_vec();
    values[0] = Quat::from_rotation_z(1.0) * values[0];
    *track = Track::from_keys(track.interpolation(), track.times().to_vec(), values).unwrap();
    let node = scene.rigs[0].bone_nodes[bone];
    let faults = compare(&second, &moved);
    assert!(
        faults.iter().any(|f| f.contains(&format!("(node {node} rotation) output values"))),
        "{faults:?}"
    );

    let mut reordered = scene.clone();
    reordered.skins[0].joints.swap(0, 1);
    let faults = compare(&second, &reordered);
    assert!(faults.iter().any(|f| f.contains("skin 0") && f.contains("joints")), "{faults:?}");
}
