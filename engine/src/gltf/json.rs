//! The subset of the glTF 2.0 JSON schema the importer reads, as plain serde structs.
//!
//! Every index is kept as a raw `usize` and checked by the importer, so a file with a bad index
//! deserializes fine and is reported with the object at fault. Unknown fields are ignored;
//! of materials only the base colour (factor and texture) is read; cameras and samplers are not.

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Root {
    pub asset: Option<Asset>,
    pub scene: Option<usize>,
    pub scenes: Vec<Scene>,
    pub nodes: Vec<Node>,
    pub meshes: Vec<Mesh>,
    pub skins: Vec<Skin>,
    pub accessors: Vec<Accessor>,
    pub buffer_views: Vec<BufferView>,
    pub buffers: Vec<Buffer>,
    pub animations: Vec<Animation>,
    pub materials: Vec<Material>,
    pub textures: Vec<Texture>,
    pub images: Vec<Image>,
    pub extensions_required: Vec<String>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Material {
    pub name: Option<String>,
    pub pbr_metallic_roughness: Option<Pbr>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Pbr {
    pub base_color_factor: Option<Vec<f32>>,
    pub base_color_texture: Option<TextureInfo>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct TextureInfo {
    pub index: usize,
    pub tex_coord: usize,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Texture {
    pub source: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Image {
    pub name: Option<String>,
    pub uri: Option<String>,
    pub mime_type: Option<String>,
    pub buffer_view: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Asset {
    pub version: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Scene {
    pub name: Option<String>,
    pub nodes: Vec<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Node {
    pub name: Option<String>,
    pub children: Vec<usize>,
    pub mesh: Option<usize>,
    pub skin: Option<usize>,
    pub matrix: Option<Vec<f32>>,
    pub translation: Option<Vec<f32>>,
    pub rotation: Option<Vec<f32>>,
    pub scale: Option<Vec<f32>>,
    pub weights: Option<Vec<f32>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Mesh {
    pub name: Option<String>,
    pub primitives: Vec<Primitive>,
    pub weights: Option<Vec<f32>>,
    pub extras: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Primitive {
    pub attributes: std::collections::BTreeMap<String, usize>,
    pub indices: Option<usize>,
    pub material: Option<usize>,
    pub mode: Option<u32>,
    pub targets: Vec<std::collections::BTreeMap<String, usize>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Skin {
    pub name: Option<String>,
    pub inverse_bind_matrices: Option<usize>,
    pub skeleton: Option<usize>,
    pub joints: Vec<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Accessor {
    pub buffer_view: Option<usize>,
    pub byte_offset: usize,
    pub component_type: u32,
    pub normalized: bool,
    pub count: usize,
    #[serde(rename = "type")]
    pub kind: String,
    pub sparse: Option<Sparse>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Sparse {
    pub count: usize,
    pub indices: SparseIndices,
    pub values: SparseValues,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct SparseIndices {
    pub buffer_view: usize,
    pub byte_offset: usize,
    pub component_type: u32,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct SparseValues {
    pub buffer_view: usize,
    pub byte_offset: usize,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct BufferView {
    pub buffer: usize,
    pub byte_offset: usize,
    pub byte_length: usize,
    pub byte_stride: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Buffer {
    pub uri: Option<String>,
    pub byte_length: usize,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Animation {
    pub name: Option<String>,
    pub channels: Vec<Channel>,
    pub samplers: Vec<Sampler>,
    pub extras: Option<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Channel {
    pub sampler: usize,
    pub target: Target,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Target {
    pub node: Option<usize>,
    pub path: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Sampler {
    pub input: usize,
    pub output: usize,
    pub interpolation: Option<String>,
}
