//! glTF export: an [`ImportedScene`] written back as a binary glTF (GLB): nodes with their
//! transforms, meshes (positions, normals, tangents, UVs, colours, indices, skin attributes,
//! morph targets), skins (joints and inverse binds) and animations (each rig's clips as node
//! channels, property animations, morph weights). Tracks are written exactly as they are held:
//! LINEAR, STEP and CUBICSPLINE keys keep their times and values; tracks that share key times
//! share one sampler input accessor; accessors carry the `min`/`max` glTF requires of positions
//! and animation inputs. A clip's markers go into its animation's `extras` as
//! `{ "markers": [{ "name", "time" }] }`, with its `looping`, `frameRate` and `length` (glTF has
//! no words for them), which the importer reads back.
//!
//! A LINEAR segment with a named easing or a cubic Bézier (which glTF cannot say) is baked into
//! LINEAR keys at a sample rate and then refined until it is within a stated bound of Marrow's
//! own evaluation ([`EasedKeys::Bake`], see `bake`), or written linear when asked
//! ([`EasedKeys::Linear`]); either way the animation's `extras` list the segments
//! (`"baked": { "rate", "bound", "segments": [{ "node", "path", "from", "to", "easing",
//! "samples" }] }` or `"linearized": [...]`). Skin joints and weights are written in the
//! component types they were imported in, the smallest that holds them, or a stated one
//! ([`ExportOptions::joints`], [`ExportOptions::weights`]).
//!
//! A skinned-mesh node that is a leaf below another node is written at the scene's root, and
//! every skinned-mesh node without children that is not a bone with an identity transform
//! (glTF ignores a skinned mesh node's transform; the validator warns about one that is not a
//! root or carries a transform), which moves no vertex.
//!
//! The output is GLB bytes ([`export_glb`]) or a `.gltf` JSON with its binary buffer beside it
//! ([`export_gltf`]); writing files (atomically) and turning a project scene into an
//! [`ImportedScene`] is [`crate::project::export`]'s work. Materials are written as Marrow
//! holds them: the base colour factor and texture (its image embedded as it was read), metallic 0
//! and roughness 1, which is how Marrow draws them; other material inputs are not kept on import.

mod bake;

use std::collections::HashMap;

use serde_json::{Value, json};

use super::ImportedScene;
use crate::mesh::{JointFormat, SkinStream, WeightFormat};
use crate::track::{Animatable, Interpolation, Track};
use bake::Measure;

/// How eased LINEAR segments (a named easing other than linear, or a cubic Bézier) are written.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EasedKeys {
    /// Sampled at `rate` keys a second (`None`: the clip's frame rate, 30 for property
    /// animations), then halved until linear interpolation is within `bound` of Marrow's own
    /// evaluation everywhere (metres or the scene's unit for translations and scales, radians
    /// for rotations).
    Bake {
        /// Samples a second to start from.
        rate: Option<f32>,
        /// The largest error allowed.
        bound: f32,
    },
    /// Written as plain LINEAR keys (the easing is dropped; the segments are listed).
    Linear,
}

/// The component type chosen for skin joints.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum JointChoice {
    /// The type the source file used (unsigned shorts for a stream made in code).
    #[default]
    AsImported,
    /// Unsigned bytes when every joint index is below 256, else unsigned shorts.
    Smallest,
    /// This type (unsigned bytes fall back to shorts when a joint index does not fit).
    Exactly(JointFormat),
}

/// The component type chosen for skin weights.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WeightChoice {
    /// The type the source file used (floats for a stream made in code).
    #[default]
    AsImported,
    /// The smallest type that holds every weight exactly (normalized bytes, then shorts, then
    /// floats).
    Smallest,
    /// This type (normalized types round each vertex's weights so they still sum to one).
    Exactly(WeightFormat),
}

/// What to export and how.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportOptions {
    /// The animations to write by name (`None`: all).
    pub clips: Option<Vec<String>>,
    /// How eased segments are written.
    pub eased: EasedKeys,
    /// Skin joint component type.
    pub joints: JointChoice,
    /// Skin weight component type.
    pub weights: WeightChoice,
}

/// The default bake bound: a tenth of a millimetre at metre scale, 0.0001 rad.
pub const DEFAULT_BAKE_BOUND: f32 = 1.0e-4;

impl Default for ExportOptions {
    fn default() -> Self {
        Self {
            clips: None,
            eased: EasedKeys::Bake { rate: None, bound: DEFAULT_BAKE_BOUND },
            joints: JointChoice::AsImported,
            weights: WeightChoice::AsImported,
        }
    }
}

/// What an export wrote, beyond the file itself.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExportReport {
    /// Animations written.
    pub animations: usize,
    /// Eased segments baked into LINEAR keys.
    pub baked_segments: usize,
    /// Keys added by baking.
    pub baked_keys: usize,
    /// Eased segments written linear ([`EasedKeys::Linear`]).
    pub linearized_segments: usize,
}

/// Why an export cannot be written.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ExportError {
    /// A value that glTF cannot carry (a non-finite number).
    #[error("export: {what} holds a non-finite value")]
    NotFinite {
        /// What.
        what: String,
    },
    /// The scene cannot be exported as it stands: every fault found, each naming where.
    #[error("export refused: {}", faults.join("; "))]
    Refused {
        /// Each fault, naming the entity, clip, key or mesh at fault.
        faults: Vec<String>,
    },
    /// An option that cannot be met (an unknown clip name, a bake rate or bound out of range).
    #[error("export: {0}")]
    Option(String),
    /// The file could not be written.
    #[error("export: {0}")]
    Write(String),
}

impl ExportError {
    /// Every fault named (one for the single-fault kinds).
    pub fn faults(&self) -> Vec<String> {
        match self {
            ExportError::Refused { faults } => faults.clone(),
            other => vec![other.to_string()],
        }
    }
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

/// One vertex's weights quantized to `max` steps (255 or 65535), summing to exactly `max`:
/// scaled by their sum, floored, and the spare steps given to the largest remainders (glTF asks
/// normalized weights to sum to one; a vertex with no weight gets its first joint whole).
fn quantize(w: &[f32; 4], max: u32) -> [u32; 4] {
    let clamped = w.map(|x| f64::from(if x.is_finite() { x.max(0.0) } else { 0.0 }));
    let sum: f64 = clamped.iter().sum();
    if !(sum > 0.0) {
        return [max, 0, 0, 0];
    }
    let scaled = clamped.map(|x| x / sum * f64::from(max));
    let mut q = scaled.map(|x| (x.floor() as u32).min(max));
    let mut spare = max.saturating_sub(q.iter().sum());
    let mut order = [0usize, 1, 2, 3];
    order.sort_by(|&a, &b| (scaled[b] - scaled[b].floor()).total_cmp(&(scaled[a] - scaled[a].floor())));
    for i in order.into_iter().cycle() {
        if spare == 0 {
            break;
        }
        q[i] += 1;
        spare -= 1;
    }
    q
}

/// True when every weight is a whole number of `1 / max` steps (within f32 rounding).
fn holds_exactly(s: &SkinStream, max: f32) -> bool {
    s.weights.iter().flatten().all(|&w| ((w * max).round() / max - w).abs() <= 4.0e-7)
}

/// The joint type written for `s`.
fn joint_format(s: &SkinStream, choice: JointChoice) -> JointFormat {
    let fits_u8 = s.joints.iter().flatten().all(|&j| j < 256);
    let wanted = match choice {
        JointChoice::AsImported => s.format.joints,
        JointChoice::Smallest => JointFormat::U8,
        JointChoice::Exactly(f) => f,
    };
    if wanted == JointFormat::U8 && fits_u8 { JointFormat::U8 } else { JointFormat::U16 }
}

/// The weight type written for `s`.
fn weight_format(s: &SkinStream, choice: WeightChoice) -> WeightFormat {
    match choice {
        WeightChoice::AsImported => s.format.weights,
        WeightChoice::Exactly(f) => f,
        WeightChoice::Smallest if holds_exactly(s, 255.0) => WeightFormat::Unorm8,
        WeightChoice::Smallest if holds_exactly(s, 65535.0) => WeightFormat::Unorm16,
        WeightChoice::Smallest => WeightFormat::Float,
    }
}

/// JOINTS_0 and WEIGHTS_0 of one primitive, in the chosen component types.
fn skin_attributes(
    bin: &mut Bin,
    s: &SkinStream,
    opts: &ExportOptions,
    attributes: &mut serde_json::Map<String, Value>,
) {
    let n = s.joints.len();
    let joints = match joint_format(s, opts.joints) {
        JointFormat::U8 => {
            let j: Vec<u8> = s.joints.iter().flatten().map(|&x| x as u8).collect();
            bin.push(&j, n, 5121, "VEC4", Some(34962))
        }
        JointFormat::U16 => {
            let j: Vec<u8> = s.joints.iter().flatten().flat_map(|x| x.to_le_bytes()).collect();
            bin.push(&j, n, 5123, "VEC4", Some(34962))
        }
    };
    attributes.insert("JOINTS_0".into(), json!(joints));
    let weights = match weight_format(s, opts.weights) {
        WeightFormat::Float => {
            let w: Vec<f32> = s.weights.iter().flatten().copied().collect();
            bin.floats(&w, 4, "VEC4", false, Some(34962))
        }
        WeightFormat::Unorm16 => {
            let w: Vec<u8> = s
                .weights
                .iter()
                .flat_map(|w| quantize(w, 65535))
                .flat_map(|x| (x as u16).to_le_bytes())
                .collect();
            bin.push(&w, n, 5123, "VEC4", Some(34962))
        }
        WeightFormat::Unorm8 => {
            let w: Vec<u8> = s.weights.iter().flat_map(|w| quantize(w, 255)).map(|x| x as u8).collect();
            bin.push(&w, n, 5121, "VEC4", Some(34962))
        }
    };
    if bin.accessors[weights]["componentType"] != json!(5126) {
        bin.accessors[weights]["normalized"] = json!(true);
    }
    attributes.insert("WEIGHTS_0".into(), json!(weights));
}

fn flat3(v: &[[f32; 3]]) -> Vec<f32> {
    v.iter().flatten().copied().collect()
}

fn check_finite(what: impl FnOnce() -> String, v: &[f32]) -> Result<(), ExportError> {
    if v.iter().all(|x| x.is_finite()) { Ok(()) } else { Err(ExportError::NotFinite { what: what() }) }
}

/// One primitive's JSON, its data pushed into `bin`.
fn write_primitive(
    bin: &mut Bin,
    p: &crate::mesh::Primitive,
    opts: &ExportOptions,
    materials: usize,
    at: &str,
) -> Result<Value, ExportError> {
    let pos = flat3(&p.positions);
    check_finite(|| format!("{at} POSITION"), &pos)?;
    let mut attributes = serde_json::Map::new();
    attributes.insert("POSITION".into(), json!(bin.floats(&pos, 3, "VEC3", true, Some(34962))));
    let mut optional = |name: &str, v: Vec<f32>, comps: usize, kind: &str| -> Result<(), ExportError> {
        if !v.is_empty() {
            check_finite(|| format!("{at} {name}"), &v)?;
            attributes.insert(name.into(), json!(bin.floats(&v, comps, kind, false, Some(34962))));
        }
        Ok(())
    };
    optional("NORMAL", flat3(&p.normals), 3, "VEC3")?;
    optional("TANGENT", p.tangents.iter().flatten().copied().collect(), 4, "VEC4")?;
    optional("TEXCOORD_0", p.uvs.iter().flatten().copied().collect(), 2, "VEC2")?;
    optional("COLOR_0", p.colors.iter().flatten().copied().collect(), 4, "VEC4")?;
    if let Some(s) = &p.skin {
        skin_attributes(bin, s, opts, &mut attributes);
    }
    let mut prim = json!({"attributes": attributes, "mode": p.mode});
    if let Some(m) = p.material.filter(|&m| m < materials) {
        prim["material"] = json!(m);
    }
    if let Some(ix) = &p.indices {
        let b: Vec<u8> = ix.iter().flat_map(|x| x.to_le_bytes()).collect();
        prim["indices"] = json!(bin.push(&b, ix.len(), 5125, "SCALAR", Some(34963)));
    }
    if !p.targets.is_empty() {
        let mut targets = Vec::with_capacity(p.targets.len());
        for (ti, t) in p.targets.iter().enumerate() {
            let mut o = serde_json::Map::new();
            if !t.positions.is_empty() {
                let v = flat3(&t.positions);
                check_finite(|| format!("{at} morph target {ti} POSITION"), &v)?;
                o.insert("POSITION".into(), json!(bin.floats(&v, 3, "VEC3", true, None)));
            }
            if !t.normals.is_empty() {
                let v = flat3(&t.normals);
                check_finite(|| format!("{at} morph target {ti} NORMAL"), &v)?;
                o.insert("NORMAL".into(), json!(bin.floats(&v, 3, "VEC3", false, None)));
            }
            if !t.tangents.is_empty() {
                let v = flat3(&t.tangents);
                check_finite(|| format!("{at} morph target {ti} TANGENT"), &v)?;
                o.insert("TANGENT".into(), json!(bin.floats(&v, 3, "VEC3", false, None)));
            }
            if o.is_empty() {
                // A target must move something: an empty one moves every position by zero.
                let zeros = vec![0.0f32; pos.len()];
                o.insert("POSITION".into(), json!(bin.floats(&zeros, 3, "VEC3", true, None)));
            }
            targets.push(Value::Object(o));
        }
        prim["targets"] = json!(targets);
    }
    Ok(prim)
}

fn write_meshes(
    bin: &mut Bin,
    scene: &ImportedScene,
    opts: &ExportOptions,
) -> Result<Vec<Value>, ExportError> {
    let mut meshes = Vec::with_capacity(scene.meshes.len());
    for (mi, m) in scene.meshes.iter().enumerate() {
        let mut prims = Vec::with_capacity(m.primitives.len());
        for (pi, p) in m.primitives.iter().enumerate() {
            let at = format!("mesh {mi} ({:?}) primitive {pi}", m.name);
            prims.push(write_primitive(bin, p, opts, scene.materials.len(), &at)?);
        }
        let mut mesh = json!({"name": m.name, "primitives": prims});
        if !m.weights.is_empty() {
            check_finite(|| format!("mesh {mi} ({:?}) default morph weights", m.name), &m.weights)?;
            mesh["weights"] = json!(m.weights);
            mesh["extras"] = json!({"targetNames": m.target_names});
        }
        meshes.push(mesh);
    }
    Ok(meshes)
}

/// The image's MIME type: as the file gave it, else from its first bytes (PNG or JPEG); `None`
/// for anything else (glTF embeds only those two).
fn image_type(i: &crate::mesh::Image) -> Option<&'static str> {
    match i.mime_type.as_deref() {
        Some("image/png") => Some("image/png"),
        Some("image/jpeg") => Some("image/jpeg"),
        _ if i.bytes.starts_with(b"\x89PNG") => Some("image/png"),
        _ if i.bytes.starts_with(&[0xFF, 0xD8]) => Some("image/jpeg"),
        _ => None,
    }
}

/// Materials, textures and images: one texture per embedded image; a material whose image
/// cannot be embedded keeps its colour without the texture.
fn write_materials(bin: &mut Bin, scene: &ImportedScene) -> (Vec<Value>, Vec<Value>, Vec<Value>) {
    let mut images = Vec::new();
    let mut texture_of = vec![None; scene.images.len()];
    for (i, img) in scene.images.iter().enumerate() {
        let Some(mime) = image_type(img) else { continue };
        while !bin.bytes.len().is_multiple_of(4) {
            bin.bytes.push(0);
        }
        bin.views.push(json!({"buffer": 0, "byteOffset": bin.bytes.len(), "byteLength": img.bytes.len()}));
        bin.bytes.extend_from_slice(&img.bytes);
        images.push(json!({"name": img.name, "bufferView": bin.views.len() - 1, "mimeType": mime}));
        texture_of[i] = Some(images.len() - 1);
    }
    let textures: Vec<Value> = (0..images.len()).map(|i| json!({"source": i})).collect();
    let materials = scene
        .materials
        .iter()
        .map(|m| {
            let mut pbr =
                json!({"baseColorFactor": m.base_color, "metallicFactor": 0.0, "roughnessFactor": 1.0});
            if let Some(t) = m.base_color_texture.and_then(|i| texture_of.get(i).copied().flatten()) {
                pbr["baseColorTexture"] = json!({"index": t});
            }
            json!({"name": m.name, "pbrMetallicRoughness": pbr})
        })
        .collect();
    (materials, textures, images)
}

fn write_skins(bin: &mut Bin, scene: &ImportedScene) -> Result<Vec<Value>, ExportError> {
    let mut skins = Vec::with_capacity(scene.skins.len());
    for s in &scene.skins {
        let ib: Vec<f32> = s.inverse_bind.iter().flat_map(|m| m.to_cols_array()).collect();
        check_finite(|| format!("skin {:?} inverse bind matrices", s.name), &ib)?;
        let a = bin.floats(&ib, 16, "MAT4", false, None);
        let mut skin = json!({"name": s.name, "joints": s.joints, "inverseBindMatrices": a});
        if let Some(r) = s.skeleton_root {
            skin["skeleton"] = json!(r);
        }
        skins.push(skin);
    }
    Ok(skins)
}

/// Node names as written: as imported, a rig's bones by their bone names (an unnamed joint
/// node got its bone name on import, so it keeps it).
fn node_names(scene: &ImportedScene) -> Vec<&str> {
    let mut names: Vec<&str> = scene.nodes.iter().map(|n| n.name.as_str()).collect();
    for rig in &scene.rigs {
        for (b, &node) in rig.bone_nodes.iter().enumerate() {
            if let (Some(slot), Some(name)) = (names.get_mut(node), rig.skeleton.bone_names.get(b)) {
                *slot = name;
            }
        }
    }
    names
}

/// The skinned-mesh nodes the export moves to the scene's roots: leaves below another node that
/// are not themselves a rig's bone (moving a joint would move what it skins).
/// glTF places skinned vertices by their joints alone (the node's transform is ignored), and
/// the Khronos validator warns about a skinned mesh node that is not a root; a node with
/// children stays where it is (moving it would move them).
fn to_root(scene: &ImportedScene) -> Vec<bool> {
    scene
        .nodes
        .iter()
        .map(|n| {
            n.skin.is_some()
                && n.mesh.is_some()
                && n.children.is_empty()
                && n.parent.is_some()
                && n.bones.is_empty()
        })
        .collect()
}

fn write_nodes(scene: &ImportedScene, names: &[&str], moved: &[bool]) -> Result<Vec<Value>, ExportError> {
    let mut nodes = Vec::with_capacity(scene.nodes.len());
    for (i, (n, name)) in scene.nodes.iter().zip(names).enumerate() {
        let children: Vec<usize> =
            n.children.iter().copied().filter(|&c| !moved.get(c).copied().unwrap_or(false)).collect();
        // A skinned mesh node's own transform is ignored by glTF (its vertices follow the
        // joints), so it is written as identity (the validator warns about any other) unless
        // it carries children or is a bone, whose places it sets.
        let ignored = n.skin.is_some() && n.mesh.is_some() && n.bones.is_empty() && children.is_empty();
        let t = if moved[i] || ignored { &crate::math::Transform::IDENTITY } else { &n.transform };
        let trs: Vec<f32> = [t.translation.to_array(), t.scale.to_array()]
            .into_iter()
            .flatten()
            .chain(t.rotation.to_array())
            .collect();
        check_finite(|| format!("node {name:?} transform"), &trs)?;
        let mut rotation = t.rotation.to_array();
        unit_rotations(&mut rotation);
        let mut o = json!({
            "name": name,
            "translation": t.translation.to_array(),
            "rotation": rotation,
            "scale": t.scale.to_array(),
        });
        if !children.is_empty() {
            o["children"] = json!(children);
        }
        if let Some(m) = n.mesh {
            o["mesh"] = json!(m);
            // The node's own weights, when they differ from the mesh's defaults.
            let defaults = scene.meshes.get(m).map(|m| m.weights.as_slice()).unwrap_or(&[]);
            if !n.morph_weights.is_empty()
                && n.morph_weights.len() == defaults.len()
                && n.morph_weights != defaults
            {
                check_finite(|| format!("node {name:?} morph weights"), &n.morph_weights)?;
                o["weights"] = json!(n.morph_weights);
            }
        }
        if let Some(s) = n.skin {
            o["skin"] = json!(s);
        }
        nodes.push(o);
    }
    Ok(nodes)
}

/// One animation being written: its samplers, channels and the record of eased segments.
struct AnimationWriter<'a> {
    bin: &'a mut Bin,
    opts: &'a ExportOptions,
    names: &'a [&'a str],
    samplers: Vec<Value>,
    channels: Vec<Value>,
    /// Targets written (glTF allows one channel per node and path).
    targets: std::collections::HashSet<(usize, &'static str)>,
    /// The last key time written.
    last_key: f32,
    baked: Vec<Value>,
    /// The rate the baked segments started from and the largest error they were left with.
    bake_rate: f32,
    bake_error: f32,
    linearized: Vec<Value>,
    report: &'a mut ExportReport,
}

impl AnimationWriter<'_> {
    fn channel(
        &mut self,
        node: usize,
        path: &'static str,
        times: &[f32],
        out: &[f32],
        comps: usize,
        interp: Interpolation,
    ) {
        if times.is_empty() || !self.targets.insert((node, path)) {
            return;
        }
        self.last_key = times.iter().copied().fold(self.last_key, f32::max);
        let kind = match comps {
            4 => "VEC4",
            3 => "VEC3",
            _ => "SCALAR",
        };
        let input = self.bin.input(times);
        let output = self.bin.floats(out, comps, kind, false, None);
        self.samplers
            .push(json!({"input": input, "output": output, "interpolation": interpolation_name(interp)}));
        self.channels
            .push(json!({"sampler": self.samplers.len() - 1, "target": {"node": node, "path": path}}));
    }

    /// Writes one track: as held, or with its eased segments baked or linearized.
    #[allow(clippy::too_many_arguments)]
    fn track<T: Measure>(
        &mut self,
        what: &str,
        node: usize,
        path: &'static str,
        track: &Track<T>,
        flat: impl Fn(&T) -> Vec<f32>,
        comps: usize,
        rate: f32,
    ) -> Result<(), ExportError> {
        let times = track.times();
        if times.is_empty() || self.targets.contains(&(node, path)) {
            return Ok(());
        }
        check_finite(|| format!("{what} {path} key times"), times)?;
        let eased = bake::eased_segments(track);
        let name = self.names.get(node).copied().unwrap_or("");
        match self.opts.eased {
            EasedKeys::Bake { rate: r, bound } if !eased.is_empty() => {
                // The baked keys include every source key: checking them checks the track.
                let rate = r.unwrap_or(rate);
                let (t, v, segments) = bake::bake(track, rate, bound).map_err(|e| {
                    ExportError::Option(format!(
                        "baking {what} {path} ({} segment {}..{}) at bound {bound} would write more than {} keys (the limit per track); use a coarser --bake-bound or a lower --bake-rate, or --linear-easing",
                        e.easing,
                        crate::math::Num(e.from),
                        crate::math::Num(e.to),
                        bake::MAX_BAKED_KEYS
                    ))
                })?;
                let mut out: Vec<f32> = v.iter().flat_map(&flat).collect();
                if path == "rotation" {
                    unit_rotations(&mut out);
                }
                self.bake_rate = rate;
                check_finite(|| format!("{what} {path} baked keys"), &out)?;
                for s in &segments {
                    self.bake_error = self.bake_error.max(s.error);
                    self.report.baked_segments += 1;
                    self.report.baked_keys += s.samples;
                    self.baked.push(json!({"node": name, "path": path, "from": s.from, "to": s.to, "easing": s.easing, "samples": s.samples}));
                }
                self.channel(node, path, &t, &out, comps, Interpolation::Linear);
            }
            _ => {
                for (i, e) in &eased {
                    self.report.linearized_segments += 1;
                    self.linearized.push(json!({"node": name, "path": path, "from": times[*i], "to": times[*i + 1], "easing": bake::ease_name(*e)}));
                }
                let mut out = outputs(track, &flat);
                check_finite(|| format!("{what} {path} keys"), &out)?;
                if path == "rotation" && track.interpolation() != Interpolation::CubicSpline {
                    unit_rotations(&mut out);
                }
                self.channel(node, path, times, &out, comps, track.interpolation());
            }
        }
        Ok(())
    }
}

/// Rotation outputs (x, y, z, w groups) brought to unit length where they stray from it by more
/// than rounding (glTF requires unit LINEAR and STEP rotations; unit ones are left to the bit).
fn unit_rotations(out: &mut [f32]) {
    for q in out.chunks_exact_mut(4) {
        let l2: f32 = q.iter().map(|c| c * c).sum();
        if (l2 - 1.0).abs() > 1.0e-6 && l2 > 0.0 {
            let inv = 1.0 / l2.sqrt();
            q.iter_mut().for_each(|c| *c *= inv);
        }
    }
}

fn v3(v: &glam::Vec3) -> Vec<f32> {
    v.to_array().to_vec()
}

fn q4(q: &glam::Quat) -> Vec<f32> {
    q.to_array().to_vec()
}

/// The property-animation channels of one node.
fn write_node_animation(
    w: &mut AnimationWriter,
    what: &str,
    node: usize,
    p: &crate::property::PropertyAnimation,
) -> Result<(), ExportError> {
    const RATE: f32 = 30.0;
    if let Some(t) = &p.translation {
        w.track(what, node, "translation", t, v3, 3, RATE)?;
    }
    if let Some(t) = &p.rotation {
        w.track(what, node, "rotation", t, q4, 4, RATE)?;
    }
    if let Some(t) = &p.scale {
        w.track(what, node, "scale", t, v3, 3, RATE)?;
    }
    Ok(())
}

/// Morph weights: one sampler for every target, the keys the tracks' shared times, the values
/// interleaved target by target.
fn write_morph_animation(
    w: &mut AnimationWriter,
    ai: usize,
    m: &super::MorphAnimation,
) -> Result<(), ExportError> {
    let Some(first) = m.weights.first() else { return Ok(()) };
    let same = |t: &Track<f32>| t.times() == first.times() && t.interpolation() == first.interpolation();
    if !m.weights.iter().all(same) {
        return Err(ExportError::Refused {
            faults: vec![format!(
                "animation {ai} node {}: its morph weight tracks do not share key times and interpolation (glTF keys every target together)",
                m.node
            )],
        });
    }
    let cubic = first.interpolation() == Interpolation::CubicSpline;
    let stride = if cubic { 3 } else { 1 };
    let mut out = Vec::with_capacity(first.len() * m.weights.len() * stride);
    for k in 0..first.len() {
        for s in 0..stride {
            for t in &m.weights {
                out.push(match (cubic, s) {
                    (true, 0) => t.in_tangents()[k],
                    (true, 2) => t.out_tangents()[k],
                    _ => t.values()[k],
                });
            }
        }
    }
    check_finite(|| format!("animation {ai} node {} morph weights", m.node), &out)?;
    w.channel(m.node, "weights", first.times(), &out, 1, first.interpolation());
    Ok(())
}

fn write_animation(
    bin: &mut Bin,
    scene: &ImportedScene,
    ai: usize,
    opts: &ExportOptions,
    names: &[&str],
    report: &mut ExportReport,
) -> Result<Value, ExportError> {
    let a = &scene.animations[ai];
    let mut w = AnimationWriter {
        bin,
        opts,
        names,
        samplers: Vec::new(),
        channels: Vec::new(),
        targets: Default::default(),
        last_key: 0.0,
        baked: Vec::new(),
        bake_rate: 0.0,
        bake_error: 0.0,
        linearized: Vec::new(),
        report,
    };
    for rc in &a.clips {
        write_clip(&mut w, scene, &a.name, rc)?;
    }
    for na in &a.nodes {
        let what = format!("animation {:?} node {:?}", a.name, names.get(na.node).copied().unwrap_or(""));
        write_node_animation(&mut w, &what, na.node, &na.animation)?;
    }
    for m in &a.morphs {
        write_morph_animation(&mut w, ai, m)?;
    }
    let hold = hold_channel(&mut w, scene, a);
    let mut extras = serde_json::Map::new();
    // A clip played by several rigs of one skeleton is one animation: its markers and settings
    // once.
    if let Some(c) = a.clips.first().map(|rc| &rc.clip) {
        if !c.markers().is_empty() {
            let markers: Vec<Value> =
                c.markers().iter().map(|m| json!({"name": m.name, "time": m.time})).collect();
            extras.insert("markers".into(), json!(markers));
        }
        extras.insert("looping".into(), json!(c.looping));
        extras.insert("frameRate".into(), json!(c.frame_rate));
        if c.length.is_finite() && c.length > 0.0 {
            extras.insert("length".into(), json!(c.length));
        }
    }
    if let Some(h) = hold {
        extras.insert("holds".into(), json!([h]));
    }
    if let EasedKeys::Bake { bound, .. } = opts.eased
        && !w.baked.is_empty()
    {
        extras.insert(
            "baked".into(),
            json!({"rate": w.bake_rate, "bound": bound, "error": w.bake_error, "segments": w.baked}),
        );
    }
    if !w.linearized.is_empty() {
        extras.insert("linearized".into(), json!(w.linearized));
    }
    let mut anim = json!({"name": a.name, "samplers": w.samplers, "channels": w.channels});
    if !extras.is_empty() {
        anim["extras"] = Value::Object(extras);
    }
    Ok(anim)
}

/// One rig's clip: its bones' tracks on the rig's bone nodes.
fn write_clip(
    w: &mut AnimationWriter,
    scene: &ImportedScene,
    name: &str,
    rc: &super::RigClip,
) -> Result<(), ExportError> {
    let Some(rig) = scene.rigs.get(rc.rig) else { return Ok(()) };
    let rate = if rc.clip.frame_rate > 0.0 { rc.clip.frame_rate } else { 30.0 };
    for (b, ch) in rc.clip.channels().iter().enumerate() {
        let Some(&node) = rig.bone_nodes.get(b) else { continue };
        let what = format!("animation {name:?} bone {:?}", w.names.get(node).copied().unwrap_or(""));
        if let Some(t) = &ch.translation {
            w.track(&what, node, "translation", t, v3, 3, rate)?;
        }
        if let Some(t) = &ch.rotation {
            w.track(&what, node, "rotation", t, q4, 4, rate)?;
        }
        if let Some(t) = &ch.scale {
            w.track(&what, node, "scale", t, v3, 3, rate)?;
        }
    }
    Ok(())
}

/// When an animation has no channel, or its keys end before its length (a clip held open past
/// its last key, as a new clip is), a STEP channel holding a rest value from 0 to the length on
/// a target nothing else animates, so every player sees the whole clip; listed in
/// `extras.holds` as `{ "node", "path" }`, which Marrow's importer drops again. Returns that
/// entry.
fn hold_channel(w: &mut AnimationWriter, scene: &ImportedScene, a: &super::Animation) -> Option<Value> {
    let duration = if a.duration.is_finite() { a.duration.max(0.0) } else { 0.0 };
    if !w.channels.is_empty() && w.last_key + 1.0e-6 >= duration {
        return None;
    }
    // Rest values: a rig's bind pose, else an animated node's own transform.
    let rests = a
        .clips
        .iter()
        .filter_map(|rc| scene.rigs.get(rc.rig))
        .flat_map(|rig| rig.bone_nodes.iter().copied().zip(rig.skeleton.bind_pose.iter().copied()))
        .chain(a.nodes.iter().filter_map(|n| Some((n.node, scene.nodes.get(n.node)?.transform))));
    let times: Vec<f32> = if duration > 0.0 { vec![0.0, duration] } else { vec![0.0] };
    for (node, rest) in rests {
        let free =
            ["scale", "translation", "rotation"].into_iter().find(|p| !w.targets.contains(&(node, *p)));
        let Some(path) = free else { continue };
        let one: Vec<f32> = match path {
            "scale" => rest.scale.to_array().to_vec(),
            "translation" => rest.translation.to_array().to_vec(),
            _ => rest.rotation.normalize().to_array().to_vec(),
        };
        let out: Vec<f32> = times.iter().flat_map(|_| one.iter().copied()).collect();
        if !out.iter().all(|x| x.is_finite()) {
            continue;
        }
        let comps = one.len();
        w.channel(node, path, &times, &out, comps, Interpolation::Step);
        return Some(json!({"node": node, "path": path}));
    }
    None
}

/// The animations `opts` selects, by index; an unknown name is an error listing the known ones.
fn selected_animations(scene: &ImportedScene, opts: &ExportOptions) -> Result<Vec<usize>, ExportError> {
    let Some(wanted) = &opts.clips else { return Ok((0..scene.animations.len()).collect()) };
    let unknown: Vec<&String> = wanted.iter().filter(|n| scene.animation_index(n).is_none()).collect();
    if !unknown.is_empty() {
        let known: Vec<&str> = scene.animations.iter().map(|a| a.name.as_str()).collect();
        return Err(ExportError::Option(format!(
            "no clip named {} (the scene has: {})",
            unknown.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", "),
            if known.is_empty() { "none".to_owned() } else { known.join(", ") }
        )));
    }
    Ok((0..scene.animations.len()).filter(|&i| wanted.contains(&scene.animations[i].name)).collect())
}

fn check_options(opts: &ExportOptions) -> Result<(), ExportError> {
    if let EasedKeys::Bake { rate, bound } = opts.eased {
        if let Some(r) = rate
            && !(r.is_finite() && (0.1..=10_000.0).contains(&r))
        {
            return Err(ExportError::Option(format!(
                "bake rate {r} is not between 0.1 and 10000 samples a second"
            )));
        }
        if !(bound.is_finite() && bound >= 1.0e-7) {
            return Err(ExportError::Option(format!(
                "bake bound {bound} is not a finite number of at least 1e-7"
            )));
        }
    }
    Ok(())
}

/// The glTF JSON of `scene` and its binary buffer.
fn build(scene: &ImportedScene, opts: &ExportOptions) -> Result<(Value, Vec<u8>, ExportReport), ExportError> {
    check_options(opts)?;
    let chosen = selected_animations(scene, opts)?;
    let mut bin = Bin { bytes: Vec::new(), views: Vec::new(), accessors: Vec::new(), inputs: HashMap::new() };
    let mut report = ExportReport::default();
    let meshes = write_meshes(&mut bin, scene, opts)?;
    let (materials, textures, images) = write_materials(&mut bin, scene);
    let skins = write_skins(&mut bin, scene)?;
    let names = node_names(scene);
    let moved = to_root(scene);
    let nodes = write_nodes(scene, &names, &moved)?;
    let mut roots = scene.roots.clone();
    roots.extend((0..moved.len()).filter(|&i| moved[i]));
    let mut animations = Vec::with_capacity(chosen.len());
    for ai in chosen {
        animations.push(write_animation(&mut bin, scene, ai, opts, &names, &mut report)?);
    }
    report.animations = animations.len();
    let mut root = json!({
        "asset": {"version": "2.0", "generator": "Marrow"},
        "scene": 0,
        "scenes": [{"nodes": roots}],
        "nodes": nodes,
    });
    if !meshes.is_empty() {
        root["meshes"] = json!(meshes);
    }
    for (key, list) in [("materials", materials), ("textures", textures), ("images", images)] {
        if !list.is_empty() {
            root[key] = json!(list);
        }
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
    Ok((root, bin.bytes, report))
}

/// Writes `scene` as GLB bytes (the buffer embedded).
pub fn export_glb(
    scene: &ImportedScene,
    opts: &ExportOptions,
) -> Result<(Vec<u8>, ExportReport), ExportError> {
    let (root, bin, report) = build(scene, opts)?;
    let mut text = serde_json::to_vec(&root).map_err(|e| ExportError::Write(e.to_string()))?;
    while !text.len().is_multiple_of(4) {
        text.push(b' ');
    }
    let total = 12 + 8 + text.len() + if bin.is_empty() { 0 } else { 8 + bin.len() };
    if u32::try_from(total).is_err() {
        return Err(ExportError::Write(format!(
            "the scene needs {total} bytes, past GLB's 4 GiB: export it as .gltf with its .bin"
        )));
    }
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&text);
    if !bin.is_empty() {
        out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&bin);
    }
    Ok((out, report))
}

/// `name` as a relative URI: bytes outside the unreserved set (letters, digits, `-._~`)
/// percent-encoded, so a file name with a space, `#`, `%` or `?` still names its file.
fn uri_encode(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Writes `scene` as a `.gltf` JSON (pretty-printed) whose buffer is the external file
/// `bin_uri` (a file name beside it), and that buffer's bytes.
pub fn export_gltf(
    scene: &ImportedScene,
    opts: &ExportOptions,
    bin_uri: &str,
) -> Result<(Vec<u8>, Vec<u8>, ExportReport), ExportError> {
    export_gltf_named(scene, opts, |_| bin_uri.to_owned()).map(|(text, bin, _, report)| (text, bin, report))
}

/// [`export_gltf`] with the buffer's file name chosen from its bytes by `bin_name` (a name that
/// changes with the content, so a new `.gltf` never names an old buffer); returns the JSON, the
/// buffer, the name chosen and the report.
pub fn export_gltf_named(
    scene: &ImportedScene,
    opts: &ExportOptions,
    bin_name: impl FnOnce(&[u8]) -> String,
) -> Result<(Vec<u8>, Vec<u8>, String, ExportReport), ExportError> {
    let (mut root, bin, report) = build(scene, opts)?;
    let name = bin_name(&bin);
    if !bin.is_empty() {
        root["buffers"][0]["uri"] = json!(uri_encode(&name));
    }
    let text = serde_json::to_vec_pretty(&root).map_err(|e| ExportError::Write(e.to_string()))?;
    Ok((text, bin, name, report))
}
