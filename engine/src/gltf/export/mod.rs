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
//! The document is built from the `gltf-json` crate's types (the gltf-rs schema): indices are
//! typed `Index<T>`, and component types, accessor types, buffer targets, topologies,
//! interpolations and channel paths are its enums, so no glTF constant is spelled here; the
//! `extras` Marrow adds are typed values of their own (`extras.rs`). The GLB container (header,
//! JSON and BIN chunks) is written here.
//!
//! The output is GLB bytes ([`export_glb`]) or a `.gltf` JSON with its binary buffer beside it
//! ([`export_gltf`]); writing files (atomically) and turning a project scene into an
//! [`ImportedScene`] is [`crate::project::export`]'s work. Materials are written as Marrow
//! holds them: the base colour factor and texture (its image embedded as it was read), metallic 0
//! and roughness 1, which is how Marrow draws them; other material inputs are not kept on import.

mod bake;
mod extras;

use std::collections::{BTreeMap, HashMap};

use gltf_json::accessor::{ComponentType, GenericComponentType, Type};
use gltf_json::animation::{self, Channel, Sampler};
use gltf_json::animation::{Interpolation as GltfInterpolation, Property};
use gltf_json::buffer::{Target, View};
use gltf_json::image::MimeType;
use gltf_json::material::{PbrBaseColorFactor, PbrMetallicRoughness, StrengthFactor};
use gltf_json::mesh::Primitive;
use gltf_json::mesh::{Mode, MorphTarget, Semantic};
use gltf_json::scene::UnitQuaternion;
use gltf_json::validation::{Checked::Valid, USize64};
use gltf_json::{
    Accessor, Animation, Asset, Buffer, Image, Index, Material, Mesh, Node, Root, Scene, Skin, Texture,
};

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

/// `i` as a glTF index. Saturating: no scene with 2^32 nodes, meshes or accessors fits in
/// memory, and an index Marrow holds past its list (a scene built in code) stays past it.
fn index<T>(i: usize) -> Index<T> {
    Index::new(u32::try_from(i).unwrap_or(u32::MAX))
}

/// Binary chunk and the glTF objects that describe it.
struct Bin {
    bytes: Vec<u8>,
    views: Vec<View>,
    accessors: Vec<Accessor>,
    /// Sampler inputs already written, by their bits, to share one accessor.
    inputs: HashMap<Vec<u32>, Index<Accessor>>,
}

impl Bin {
    /// Appends `data` (4-byte aligned) as a buffer view of buffer 0.
    fn view(&mut self, data: &[u8], target: Option<Target>) -> Index<View> {
        while !self.bytes.len().is_multiple_of(4) {
            self.bytes.push(0);
        }
        self.views.push(View {
            buffer: Index::new(0),
            byte_length: USize64::from(data.len()),
            byte_offset: Some(USize64::from(self.bytes.len())),
            byte_stride: None,
            name: None,
            target: target.map(Valid),
            extensions: None,
            extras: None,
        });
        self.bytes.extend_from_slice(data);
        index(self.views.len() - 1)
    }

    /// Appends `data` as a view and an accessor of `count` elements over it.
    fn push(
        &mut self,
        data: &[u8],
        count: usize,
        ct: ComponentType,
        kind: Type,
        target: Option<Target>,
    ) -> Index<Accessor> {
        let view = self.view(data, target);
        self.accessors.push(Accessor {
            buffer_view: Some(view),
            byte_offset: None,
            count: USize64::from(count),
            component_type: Valid(GenericComponentType(ct)),
            extensions: None,
            extras: None,
            type_: Valid(kind),
            min: None,
            max: None,
            name: None,
            normalized: false,
            sparse: None,
        });
        index(self.accessors.len() - 1)
    }

    /// The accessor at `a` (one this `Bin` made).
    fn accessor(&mut self, a: Index<Accessor>) -> &mut Accessor {
        &mut self.accessors[a.value()]
    }

    /// Float components of `kind`, with their per-component `min`/`max` when `bounds`.
    fn floats(&mut self, v: &[f32], kind: Type, bounds: bool, target: Option<Target>) -> Index<Accessor> {
        let comps = kind.multiplicity();
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        let a = self.push(&bytes, v.len() / comps.max(1), ComponentType::F32, kind, target);
        if bounds && !v.is_empty() {
            let (mut lo, mut hi) = (vec![f32::INFINITY; comps], vec![f32::NEG_INFINITY; comps]);
            for c in v.chunks_exact(comps) {
                for k in 0..comps {
                    lo[k] = lo[k].min(c[k]);
                    hi[k] = hi[k].max(c[k]);
                }
            }
            // Each bound the f64 of its f32, as the validator compares them with the data.
            let widen =
                |b: Vec<f32>| gltf_json::Value::from(b.into_iter().map(f64::from).collect::<Vec<_>>());
            let acc = self.accessor(a);
            acc.min = Some(widen(lo));
            acc.max = Some(widen(hi));
        }
        a
    }

    /// A sampler input accessor for `times`, shared with any earlier identical one.
    fn input(&mut self, times: &[f32]) -> Index<Accessor> {
        let key: Vec<u32> = times.iter().map(|t| t.to_bits()).collect();
        if let Some(&a) = self.inputs.get(&key) {
            return a;
        }
        let a = self.floats(times, Type::Scalar, true, None);
        self.inputs.insert(key, a);
        a
    }
}

fn interpolation(i: Interpolation) -> GltfInterpolation {
    match i {
        Interpolation::Step => GltfInterpolation::Step,
        Interpolation::Linear => GltfInterpolation::Linear,
        Interpolation::CubicSpline => GltfInterpolation::CubicSpline,
    }
}

/// The animated property a channel path names (`weights` for anything else: the writer uses only
/// the four).
fn property(path: &str) -> Property {
    match path {
        "translation" => Property::Translation,
        "rotation" => Property::Rotation,
        "scale" => Property::Scale,
        _ => Property::MorphTargetWeights,
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

/// A primitive's attributes by semantic.
type Attributes = BTreeMap<gltf_json::validation::Checked<Semantic>, Index<Accessor>>;

/// JOINTS_0 and WEIGHTS_0 of one primitive, in the chosen component types.
fn skin_attributes(bin: &mut Bin, s: &SkinStream, opts: &ExportOptions, attributes: &mut Attributes) {
    let n = s.joints.len();
    let vertex = Some(Target::ArrayBuffer);
    let joints = match joint_format(s, opts.joints) {
        JointFormat::U8 => {
            let j: Vec<u8> = s.joints.iter().flatten().map(|&x| x as u8).collect();
            bin.push(&j, n, ComponentType::U8, Type::Vec4, vertex)
        }
        JointFormat::U16 => {
            let j: Vec<u8> = s.joints.iter().flatten().flat_map(|x| x.to_le_bytes()).collect();
            bin.push(&j, n, ComponentType::U16, Type::Vec4, vertex)
        }
    };
    attributes.insert(Valid(Semantic::Joints(0)), joints);
    let weights = match weight_format(s, opts.weights) {
        WeightFormat::Float => {
            let w: Vec<f32> = s.weights.iter().flatten().copied().collect();
            bin.floats(&w, Type::Vec4, false, vertex)
        }
        WeightFormat::Unorm16 => {
            let w: Vec<u8> = s
                .weights
                .iter()
                .flat_map(|w| quantize(w, 65535))
                .flat_map(|x| (x as u16).to_le_bytes())
                .collect();
            let a = bin.push(&w, n, ComponentType::U16, Type::Vec4, vertex);
            bin.accessor(a).normalized = true;
            a
        }
        WeightFormat::Unorm8 => {
            let w: Vec<u8> = s.weights.iter().flat_map(|w| quantize(w, 255)).map(|x| x as u8).collect();
            let a = bin.push(&w, n, ComponentType::U8, Type::Vec4, vertex);
            bin.accessor(a).normalized = true;
            a
        }
    };
    attributes.insert(Valid(Semantic::Weights(0)), weights);
}

fn flat3(v: &[[f32; 3]]) -> Vec<f32> {
    v.iter().flatten().copied().collect()
}

fn check_finite(what: impl FnOnce() -> String, v: &[f32]) -> Result<(), ExportError> {
    if v.iter().all(|x| x.is_finite()) { Ok(()) } else { Err(ExportError::NotFinite { what: what() }) }
}

/// The glTF topology `mode` names (0 points .. 6 triangle fan); another is refused.
fn mode(mode: u32, at: &str) -> Result<Mode, ExportError> {
    Ok(match mode {
        0 => Mode::Points,
        1 => Mode::Lines,
        2 => Mode::LineLoop,
        3 => Mode::LineStrip,
        4 => Mode::Triangles,
        5 => Mode::TriangleStrip,
        6 => Mode::TriangleFan,
        other => {
            return Err(ExportError::Refused {
                faults: vec![format!("{at}: mode {other} is not a glTF topology (0 to 6)")],
            });
        }
    })
}

/// One primitive's morph targets, their data pushed into `bin` (`positions`: the primitive's,
/// for the zero target written in place of an empty one).
fn write_targets(
    bin: &mut Bin,
    p: &crate::mesh::Primitive,
    positions: usize,
    at: &str,
) -> Result<Vec<MorphTarget>, ExportError> {
    let mut targets = Vec::with_capacity(p.targets.len());
    for (ti, t) in p.targets.iter().enumerate() {
        let mut stream = |name: &str, v: &[[f32; 3]], bounds: bool| -> Result<_, ExportError> {
            if v.is_empty() {
                return Ok(None);
            }
            let v = flat3(v);
            check_finite(|| format!("{at} morph target {ti} {name}"), &v)?;
            Ok(Some(bin.floats(&v, Type::Vec3, bounds, None)))
        };
        let mut o = MorphTarget {
            positions: stream("POSITION", &t.positions, true)?,
            normals: stream("NORMAL", &t.normals, false)?,
            tangents: stream("TANGENT", &t.tangents, false)?,
        };
        if o.positions.is_none() && o.normals.is_none() && o.tangents.is_none() {
            // A target must move something: an empty one moves every position by zero.
            let zeros = vec![0.0f32; positions];
            o.positions = Some(bin.floats(&zeros, Type::Vec3, true, None));
        }
        targets.push(o);
    }
    Ok(targets)
}

/// One primitive, its data pushed into `bin`.
fn write_primitive(
    bin: &mut Bin,
    p: &crate::mesh::Primitive,
    opts: &ExportOptions,
    materials: usize,
    at: &str,
) -> Result<Primitive, ExportError> {
    let mode = mode(p.mode, at)?;
    let pos = flat3(&p.positions);
    check_finite(|| format!("{at} POSITION"), &pos)?;
    let vertex = Some(Target::ArrayBuffer);
    let mut attributes = Attributes::new();
    attributes.insert(Valid(Semantic::Positions), bin.floats(&pos, Type::Vec3, true, vertex));
    let mut optional = |semantic: Semantic, v: Vec<f32>, kind: Type| -> Result<(), ExportError> {
        if !v.is_empty() {
            check_finite(|| format!("{at} {}", semantic.to_string()), &v)?;
            attributes.insert(Valid(semantic), bin.floats(&v, kind, false, vertex));
        }
        Ok(())
    };
    optional(Semantic::Normals, flat3(&p.normals), Type::Vec3)?;
    optional(Semantic::Tangents, p.tangents.iter().flatten().copied().collect(), Type::Vec4)?;
    optional(Semantic::TexCoords(0), p.uvs.iter().flatten().copied().collect(), Type::Vec2)?;
    optional(Semantic::Colors(0), p.colors.iter().flatten().copied().collect(), Type::Vec4)?;
    if let Some(s) = &p.skin {
        skin_attributes(bin, s, opts, &mut attributes);
    }
    let indices = p.indices.as_ref().map(|ix| {
        let b: Vec<u8> = ix.iter().flat_map(|x| x.to_le_bytes()).collect();
        bin.push(&b, ix.len(), ComponentType::U32, Type::Scalar, Some(Target::ElementArrayBuffer))
    });
    let targets = if p.targets.is_empty() { None } else { Some(write_targets(bin, p, pos.len(), at)?) };
    Ok(Primitive {
        attributes,
        extensions: None,
        extras: None,
        indices,
        material: p.material.filter(|&m| m < materials).map(index),
        mode: Valid(mode),
        targets,
    })
}

fn write_meshes(
    bin: &mut Bin,
    scene: &ImportedScene,
    opts: &ExportOptions,
) -> Result<Vec<Mesh>, ExportError> {
    let mut meshes = Vec::with_capacity(scene.meshes.len());
    for (mi, m) in scene.meshes.iter().enumerate() {
        let mut primitives = Vec::with_capacity(m.primitives.len());
        for (pi, p) in m.primitives.iter().enumerate() {
            let at = format!("mesh {mi} ({:?}) primitive {pi}", m.name);
            primitives.push(write_primitive(bin, p, opts, scene.materials.len(), &at)?);
        }
        let mut mesh =
            Mesh { extensions: None, extras: None, name: Some(m.name.clone()), primitives, weights: None };
        if !m.weights.is_empty() {
            check_finite(|| format!("mesh {mi} ({:?}) default morph weights", m.name), &m.weights)?;
            mesh.weights = Some(m.weights.clone());
            mesh.extras = Some(extras::raw(&extras::MeshExtras { target_names: &m.target_names })?);
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
fn write_materials(bin: &mut Bin, scene: &ImportedScene) -> (Vec<Material>, Vec<Texture>, Vec<Image>) {
    let mut images = Vec::new();
    let mut texture_of = vec![None; scene.images.len()];
    for (i, img) in scene.images.iter().enumerate() {
        let Some(mime) = image_type(img) else { continue };
        let view = bin.view(&img.bytes, None);
        images.push(Image {
            buffer_view: Some(view),
            mime_type: Some(MimeType(mime.to_owned())),
            name: Some(img.name.clone()),
            uri: None,
            extensions: None,
            extras: None,
        });
        texture_of[i] = Some(images.len() - 1);
    }
    let textures: Vec<Texture> = (0..images.len())
        .map(|i| Texture { name: None, sampler: None, source: index(i), extensions: None, extras: None })
        .collect();
    let materials = scene
        .materials
        .iter()
        .map(|m| {
            let texture = m.base_color_texture.and_then(|i| texture_of.get(i).copied().flatten());
            Material {
                name: Some(m.name.clone()),
                pbr_metallic_roughness: PbrMetallicRoughness {
                    base_color_factor: PbrBaseColorFactor(m.base_color),
                    base_color_texture: texture.map(|t| gltf_json::texture::Info {
                        index: index(t),
                        tex_coord: 0,
                        extensions: None,
                        extras: None,
                    }),
                    metallic_factor: StrengthFactor(0.0),
                    roughness_factor: StrengthFactor(1.0),
                    ..Default::default()
                },
                ..Default::default()
            }
        })
        .collect();
    (materials, textures, images)
}

fn write_skins(bin: &mut Bin, scene: &ImportedScene) -> Result<Vec<Skin>, ExportError> {
    let mut skins = Vec::with_capacity(scene.skins.len());
    for s in &scene.skins {
        let ib: Vec<f32> = s.inverse_bind.iter().flat_map(|m| m.to_cols_array()).collect();
        check_finite(|| format!("skin {:?} inverse bind matrices", s.name), &ib)?;
        let a = bin.floats(&ib, Type::Mat4, false, None);
        skins.push(Skin {
            extensions: None,
            extras: None,
            inverse_bind_matrices: Some(a),
            joints: s.joints.iter().copied().map(index).collect(),
            name: Some(s.name.clone()),
            skeleton: s.skeleton_root.map(index),
        });
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

fn write_nodes(scene: &ImportedScene, names: &[&str], moved: &[bool]) -> Result<Vec<Node>, ExportError> {
    let mut nodes = Vec::with_capacity(scene.nodes.len());
    for (i, (n, name)) in scene.nodes.iter().zip(names).enumerate() {
        let children: Vec<Index<Node>> = n
            .children
            .iter()
            .copied()
            .filter(|&c| !moved.get(c).copied().unwrap_or(false))
            .map(index)
            .collect();
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
        // The node's own weights, when they differ from its mesh's defaults.
        let defaults = n.mesh.and_then(|m| scene.meshes.get(m)).map(|m| m.weights.as_slice()).unwrap_or(&[]);
        let own = n.mesh.is_some()
            && !n.morph_weights.is_empty()
            && n.morph_weights.len() == defaults.len()
            && n.morph_weights != defaults;
        if own {
            check_finite(|| format!("node {name:?} morph weights"), &n.morph_weights)?;
        }
        nodes.push(Node {
            name: Some((*name).to_owned()),
            translation: Some(t.translation.to_array()),
            rotation: Some(UnitQuaternion(rotation)),
            scale: Some(t.scale.to_array()),
            children: if children.is_empty() { None } else { Some(children) },
            mesh: n.mesh.map(index),
            weights: own.then(|| n.morph_weights.clone()),
            skin: n.skin.map(index),
            ..Default::default()
        });
    }
    Ok(nodes)
}

/// One animation being written: its samplers, channels and the record of eased segments.
struct AnimationWriter<'a> {
    bin: &'a mut Bin,
    opts: &'a ExportOptions,
    names: &'a [&'a str],
    samplers: Vec<Sampler>,
    channels: Vec<Channel>,
    /// Targets written (glTF allows one channel per node and path).
    targets: std::collections::HashSet<(usize, &'static str)>,
    /// The last key time written.
    last_key: f32,
    baked: Vec<extras::Segment>,
    /// The rate the baked segments started from and the largest error they were left with.
    bake_rate: f32,
    bake_error: f32,
    linearized: Vec<extras::Segment>,
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
            4 => Type::Vec4,
            3 => Type::Vec3,
            _ => Type::Scalar,
        };
        let input = self.bin.input(times);
        let output = self.bin.floats(out, kind, false, None);
        self.samplers.push(Sampler {
            input,
            output,
            interpolation: Valid(interpolation(interp)),
            extensions: None,
            extras: None,
        });
        self.channels.push(Channel {
            sampler: index(self.samplers.len() - 1),
            target: animation::Target {
                node: index(node),
                path: Valid(property(path)),
                extensions: None,
                extras: None,
            },
            extensions: None,
            extras: None,
        });
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
                    self.baked.push(extras::Segment {
                        node: name.to_owned(),
                        path,
                        from: f64::from(s.from),
                        to: f64::from(s.to),
                        easing: s.easing.clone(),
                        samples: Some(s.samples),
                    });
                }
                self.channel(node, path, &t, &out, comps, Interpolation::Linear);
            }
            _ => {
                for (i, e) in &eased {
                    self.report.linearized_segments += 1;
                    self.linearized.push(extras::Segment {
                        node: name.to_owned(),
                        path,
                        from: f64::from(times[*i]),
                        to: f64::from(times[*i + 1]),
                        easing: bake::ease_name(*e),
                        samples: None,
                    });
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
) -> Result<Animation, ExportError> {
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
    let mut extras = extras::AnimationExtras::default();
    // A clip played by several rigs of one skeleton is one animation: its markers and settings
    // once.
    if let Some(c) = a.clips.first().map(|rc| &rc.clip) {
        extras.markers =
            c.markers().iter().map(|m| extras::Marker { name: &m.name, time: f64::from(m.time) }).collect();
        extras.looping = Some(c.looping);
        extras.frame_rate = Some(f64::from(c.frame_rate));
        if c.length.is_finite() && c.length > 0.0 {
            extras.length = Some(f64::from(c.length));
        }
    }
    extras.holds.extend(hold);
    if let EasedKeys::Bake { bound, .. } = opts.eased
        && !w.baked.is_empty()
    {
        extras.baked = Some(extras::Baked {
            rate: f64::from(w.bake_rate),
            bound: f64::from(bound),
            error: f64::from(w.bake_error),
            segments: std::mem::take(&mut w.baked),
        });
    }
    extras.linearized = std::mem::take(&mut w.linearized);
    Ok(Animation {
        extras: if extras.is_empty() { None } else { Some(extras::raw(&extras)?) },
        channels: w.channels,
        name: Some(a.name.clone()),
        samplers: w.samplers,
        extensions: None,
    })
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
fn hold_channel(
    w: &mut AnimationWriter,
    scene: &ImportedScene,
    a: &super::Animation,
) -> Option<extras::Hold> {
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
        return Some(extras::Hold { node, path });
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

/// The glTF document of `scene` and its binary buffer (the buffer's `uri` not yet set).
fn build(scene: &ImportedScene, opts: &ExportOptions) -> Result<(Root, Vec<u8>, ExportReport), ExportError> {
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
    while !bin.bytes.len().is_multiple_of(4) {
        bin.bytes.push(0);
    }
    let buffers = if bin.bytes.is_empty() {
        Vec::new()
    } else {
        vec![Buffer {
            byte_length: USize64::from(bin.bytes.len()),
            name: None,
            uri: None,
            extensions: None,
            extras: None,
        }]
    };
    let root = Root {
        asset: Asset { version: "2.0".into(), generator: Some("Marrow".into()), ..Default::default() },
        scene: Some(Index::new(0)),
        scenes: vec![Scene {
            nodes: roots.into_iter().map(index).collect(),
            name: None,
            extensions: None,
            extras: None,
        }],
        nodes,
        meshes,
        materials,
        textures,
        images,
        skins,
        animations,
        buffers,
        buffer_views: bin.views,
        accessors: bin.accessors,
        ..Default::default()
    };
    Ok((root, bin.bytes, report))
}

/// Writes `scene` as GLB bytes (the buffer embedded).
pub fn export_glb(
    scene: &ImportedScene,
    opts: &ExportOptions,
) -> Result<(Vec<u8>, ExportReport), ExportError> {
    let (root, bin, report) = build(scene, opts)?;
    let mut text = root.to_vec().map_err(|e| ExportError::Write(e.to_string()))?;
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
    if let Some(buffer) = root.buffers.first_mut() {
        buffer.uri = Some(uri_encode(&name));
    }
    let text = root.to_vec_pretty().map_err(|e| ExportError::Write(e.to_string()))?;
    Ok((text, bin, name, report))
}
