//! The engine's mesh data: meshes of primitives with CPU vertex data, their skin streams
//! (four influences), morph targets, and materials (a base colour and an encoded image). The
//! glTF importer produces these; scenes, the CPU skinning and morph jobs and the renderer read
//! them. Plain data: nothing here uploads, poses or decodes.

use crate::morph::MorphTarget;
use crate::skinning::Aabb;

/// The base colour of a glTF material: a linear RGBA factor and an optional texture.
#[derive(Clone, Debug, PartialEq)]
pub struct Material {
    /// Name (`material N` when the file gives none).
    pub name: String,
    /// `baseColorFactor`, linear RGBA.
    pub base_color: [f32; 4],
    /// The image of `baseColorTexture` (an index into [`crate::gltf::ImportedScene::images`]), read through
    /// `TEXCOORD_0`.
    pub base_color_texture: Option<usize>,
}

/// An image as the file stores it (PNG or JPEG bytes); decoding is the renderer's job.
#[derive(Clone, Debug, PartialEq)]
pub struct Image {
    /// Name (`image N` when the file gives none).
    pub name: String,
    /// `mimeType`, when given.
    pub mime_type: Option<String>,
    /// The encoded bytes.
    pub bytes: std::sync::Arc<[u8]>,
}

/// A mesh: primitives sharing morph target names and default weights.
#[derive(Clone, Debug, PartialEq)]
pub struct Mesh {
    /// The mesh's name, or `mesh<N>`.
    pub name: String,
    /// Its primitives.
    pub primitives: Vec<Primitive>,
    /// Default morph weights (the mesh's `weights`, else zeros), one per target.
    pub weights: Vec<f32>,
    /// Morph target names: `extras.targetNames`, else `target<N>`.
    pub target_names: Vec<String>,
}

/// Four joint influences per vertex. Joint indices are in glTF joint order (index a skin's
/// joints); weights are sorted largest first and sum to 1.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SkinStream {
    /// Joint indices.
    pub joints: Vec<[u16; 4]>,
    /// Weights.
    pub weights: Vec<[f32; 4]>,
    /// The component types the source file stored them in (what an export "as imported"
    /// writes back); joints as `u16` and weights as floats for a stream made in code.
    pub format: SkinFormat,
}

/// The glTF component types of a skin stream's joints and weights.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SkinFormat {
    /// How joint indices are stored.
    pub joints: JointFormat,
    /// How weights are stored.
    pub weights: WeightFormat,
}

/// A glTF `JOINTS_n` component type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum JointFormat {
    /// Unsigned bytes (joints below 256).
    U8,
    /// Unsigned shorts.
    #[default]
    U16,
}

/// A glTF `WEIGHTS_n` component type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WeightFormat {
    /// 32-bit floats (exact).
    #[default]
    Float,
    /// Normalized unsigned shorts (steps of 1/65535).
    Unorm16,
    /// Normalized unsigned bytes (steps of 1/255).
    Unorm8,
}

impl SkinStream {
    /// The joint indices mapped through `joint_to_bone` (glTF joint -> rig bone); a joint the
    /// map does not hold becomes bone 0.
    pub fn joints_to_bones(&self, joint_to_bone: &[u16]) -> Vec<[u16; 4]> {
        let remap = |j: u16| joint_to_bone.get(j as usize).copied().unwrap_or(0);
        self.joints.iter().map(|j| j.map(remap)).collect()
    }
}

/// A primitive's CPU vertex data. Optional attributes are empty when absent.
#[derive(Clone, Debug, PartialEq)]
pub struct Primitive {
    /// glTF topology (`4` = triangles).
    pub mode: u32,
    /// Material index (into [`crate::gltf::ImportedScene::materials`]).
    pub material: Option<usize>,
    /// `POSITION`.
    pub positions: Vec<[f32; 3]>,
    /// `NORMAL`.
    pub normals: Vec<[f32; 3]>,
    /// `TANGENT` (handedness in `w`).
    pub tangents: Vec<[f32; 4]>,
    /// `TEXCOORD_0`.
    pub uvs: Vec<[f32; 2]>,
    /// `COLOR_0` as linear RGBA (RGB colours get alpha 1), or empty.
    pub colors: Vec<[f32; 4]>,
    /// Indices, checked against the vertex count.
    pub indices: Option<Vec<u32>>,
    /// `JOINTS_0`/`WEIGHTS_0` (and `_1`), reduced to four influences.
    pub skin: Option<SkinStream>,
    /// Morph targets.
    pub targets: Vec<MorphTarget>,
    /// Box around the base positions.
    pub bounds: Option<Aabb>,
}
