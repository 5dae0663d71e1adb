//! The mesh pool: long-lived GPU vertex and index buffers in two layouts. Every mesh has stream
//! 0 ([`GpuVertex`]: position, normal, tangent, uv); skinned meshes add stream 1
//! ([`GpuSkinVertex`]: joints and weights) with exactly as many entries, so a static mesh never
//! pays for skinning bandwidth. Morph instances get their own dynamic copy of stream 0 (sharing
//! the base's skin and index buffers) rewritten by [`MeshPool::write_vertices`].
//!
//! It does not know about scenes, rigs or frames.

use glam::Vec3;

use super::RenderError;
use super::types::{GpuSkinVertex, GpuVertex};
use crate::skinning::Aabb;

/// Addresses a mesh in a [`MeshPool`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MeshHandle(pub u32);

/// A skin stream on the CPU: bone indices and weights, one entry per vertex.
pub type SkinSlices<'a> = (&'a [[u16; 4]], &'a [[f32; 4]]);

/// CPU vertex data to upload. Optional attributes are empty slices (normals default to +Y,
/// tangents to +X with handedness 1, uvs to 0); `indices: None` draws the vertices in order.
#[derive(Clone, Copy, Debug, Default)]
pub struct MeshData<'a> {
    /// Positions.
    pub positions: &'a [[f32; 3]],
    /// Normals (or empty).
    pub normals: &'a [[f32; 3]],
    /// Tangents (or empty).
    pub tangents: &'a [[f32; 4]],
    /// Uvs (or empty).
    pub uvs: &'a [[f32; 2]],
    /// Linear RGBA vertex colours (or empty: white).
    pub colors: &'a [[f32; 4]],
    /// Triangle list indices.
    pub indices: Option<&'a [u32]>,
    /// Skin stream: bone indices (of the rig the mesh is drawn with) and weights, one per vertex.
    pub skin: Option<SkinSlices<'a>>,
}

impl<'a> MeshData<'a> {
    /// The streams of `prim`, its skin weights paired with `joints` (its joint indices remapped
    /// to the rig it is drawn with; `None`, or a primitive without a skin: drawn unskinned).
    pub fn of_primitive(prim: &'a crate::mesh::Primitive, joints: Option<&'a [[u16; 4]]>) -> Self {
        Self {
            positions: &prim.positions,
            normals: &prim.normals,
            tangents: &prim.tangents,
            uvs: &prim.uvs,
            colors: &prim.colors,
            indices: prim.indices.as_deref(),
            skin: joints.zip(prim.skin.as_ref().map(|s| &s.weights[..])),
        }
    }
}

/// A mesh on the GPU.
#[derive(Clone, Debug)]
pub struct GpuMesh {
    /// Stream 0.
    pub vertices: wgpu::Buffer,
    /// Stream 1 (skinned meshes only).
    pub skin: Option<wgpu::Buffer>,
    /// 32-bit indices.
    pub indices: wgpu::Buffer,
    /// Vertex count.
    pub vertex_count: u32,
    /// Index count.
    pub index_count: u32,
    /// Box around the base positions (model space).
    pub bounds: Aabb,
    /// Whether stream 0 is a per-instance dynamic copy (morphs).
    pub dynamic: bool,
}

impl GpuMesh {
    /// Whether it has a skin stream.
    pub fn is_skinned(&self) -> bool {
        self.skin.is_some()
    }
}

/// Every mesh uploaded to one device.
#[derive(Debug, Default)]
pub struct MeshPool {
    meshes: Vec<Option<GpuMesh>>,
    free: Vec<u32>,
    vertex_uploads: u64,
    textures: Vec<Option<GpuTexture>>,
    free_textures: Vec<u32>,
    texture_epoch: u64,
}

/// Packs CPU attributes into stream-0 vertices (writing into `out`, reusing its allocation).
pub fn pack_vertices(
    positions: &[[f32; 3]],
    normals: &[[f32; 3]],
    tangents: &[[f32; 4]],
    uvs: &[[f32; 2]],
    colors: &[[f32; 4]],
    out: &mut Vec<GpuVertex>,
) {
    let unorm = |c: [f32; 4]| c.map(|x| (x.clamp(0.0, 1.0) * 255.0).round() as u8);
    out.clear();
    out.extend(positions.iter().enumerate().map(|(i, p)| GpuVertex {
        position: *p,
        normal: normals.get(i).copied().unwrap_or([0.0, 1.0, 0.0]),
        tangent: tangents.get(i).copied().unwrap_or([1.0, 0.0, 0.0, 1.0]),
        uv: uvs.get(i).copied().unwrap_or([0.0, 0.0]),
        color: colors.get(i).copied().map_or([255; 4], unorm),
    }));
}

/// A sampled sRGB RGBA8 texture of `width` x `height` holding `rgba` (sizes checked by the caller).
pub(crate) fn srgb_texture(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    label: &str,
    rgba: &[u8],
    width: u32,
    height: u32,
) -> wgpu::Texture {
    let size = wgpu::Extent3d { width, height, depth_or_array_layers: 1 };
    let texture = device.create_texture(&wgpu::TextureDescriptor {
        label: Some(label),
        size,
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D2,
        format: wgpu::TextureFormat::Rgba8UnormSrgb,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    queue.write_texture(
        wgpu::TexelCopyTextureInfo {
            texture: &texture,
            mip_level: 0,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::All,
        },
        rgba,
        wgpu::TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(width * 4),
            rows_per_image: Some(height),
        },
        size,
    );
    texture
}

/// Decodes `images` (PNG or JPEG) that `materials` use as base colour textures and uploads
/// them; returns, per material, its texture (`None`: untextured, or an image that does not
/// decode, which is logged once here).
pub fn upload_material_textures(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    pool: &mut MeshPool,
    materials: &[crate::mesh::Material],
    images: &[crate::mesh::Image],
) -> Vec<Option<TextureHandle>> {
    let mut by_image: Vec<Option<Option<TextureHandle>>> = vec![None; images.len()];
    materials
        .iter()
        .map(|m| {
            let i = m.base_color_texture?;
            let im = images.get(i)?;
            *by_image[i].get_or_insert_with(|| {
                let decoded = image::load_from_memory(&im.bytes).map_err(|e| e.to_string()).and_then(|d| {
                    let rgba = d.to_rgba8();
                    let (w, h) = rgba.dimensions();
                    pool.add_texture(device, queue, rgba.as_raw(), w, h).map_err(|e| e.to_string())
                });
                match decoded {
                    Ok(t) => Some(t),
                    Err(e) => {
                        log::warn!("image {:?} is drawn as white: {e}", im.name);
                        None
                    }
                }
            })
        })
        .collect()
}

/// Addresses a texture in a [`MeshPool`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TextureHandle(pub u32);

/// A texture on the GPU (sRGB RGBA8, one mip level).
#[derive(Clone, Debug)]
pub struct GpuTexture {
    /// The texture.
    pub texture: wgpu::Texture,
    /// Its view.
    pub view: wgpu::TextureView,
}

fn buffer(device: &wgpu::Device, label: &str, bytes: &[u8], usage: wgpu::BufferUsages) -> wgpu::Buffer {
    use wgpu::util::DeviceExt;
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: bytes,
        usage,
    })
}

impl MeshPool {
    /// An empty pool.
    pub fn new() -> Self {
        Self::default()
    }

    /// Uploads a mesh. Fails (uploading nothing) on mismatched lengths, out-of-range indices or
    /// an empty mesh.
    pub fn add(&mut self, device: &wgpu::Device, data: &MeshData<'_>) -> Result<MeshHandle, RenderError> {
        let n = data.positions.len();
        let bad = |what: String| Err(RenderError::Mesh(what));
        if n == 0 || n > u32::MAX as usize {
            return bad(format!("{n} vertices"));
        }
        for (name, len) in [
            ("normals", data.normals.len()),
            ("tangents", data.tangents.len()),
            ("uvs", data.uvs.len()),
            ("colors", data.colors.len()),
        ] {
            if len != 0 && len != n {
                return bad(format!("{name} has {len} entries for {n} vertices"));
            }
        }
        if let Some(ix) = data.indices {
            if ix.is_empty() || ix.len() % 3 != 0 {
                return bad(format!("{} indices is not a triangle list", ix.len()));
            }
            if let Some(i) = ix.iter().find(|&&i| i as usize >= n) {
                return bad(format!("index {i} out of range for {n} vertices"));
            }
        } else if !n.is_multiple_of(3) {
            return bad(format!("{n} unindexed vertices is not a triangle list"));
        }
        let mut verts = Vec::new();
        pack_vertices(data.positions, data.normals, data.tangents, data.uvs, data.colors, &mut verts);
        let storage = wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST;
        let vertices = buffer(device, "marrow stream 0", bytemuck::cast_slice(&verts), storage);
        let skin = match data.skin {
            Some((joints, weights)) => {
                if joints.len() != n || weights.len() != n {
                    return bad(format!(
                        "skin stream has {}/{} entries for {n} vertices",
                        joints.len(),
                        weights.len()
                    ));
                }
                let sv: Vec<GpuSkinVertex> = joints
                    .iter()
                    .zip(weights)
                    .map(|(j, w)| GpuSkinVertex { joints: *j, weights: *w })
                    .collect();
                Some(buffer(device, "marrow stream 1 (skin)", bytemuck::cast_slice(&sv), storage))
            }
            None => None,
        };
        let seq: Vec<u32>;
        let ix = match data.indices {
            Some(ix) => ix,
            None => {
                seq = (0..n as u32).collect();
                &seq
            }
        };
        let indices = buffer(device, "marrow indices", bytemuck::cast_slice(ix), wgpu::BufferUsages::INDEX);
        let mut bounds = Aabb::point(Vec3::from(data.positions[0]));
        for p in data.positions {
            bounds.grow(Vec3::from(*p));
        }
        Ok(self.insert(GpuMesh {
            vertices,
            skin,
            indices,
            vertex_count: n as u32,
            index_count: ix.len() as u32,
            bounds,
            dynamic: false,
        }))
    }

    fn insert(&mut self, mesh: GpuMesh) -> MeshHandle {
        match self.free.pop() {
            Some(i) => {
                self.meshes[i as usize] = Some(mesh);
                MeshHandle(i)
            }
            None => {
                self.meshes.push(Some(mesh));
                MeshHandle(self.meshes.len() as u32 - 1)
            }
        }
    }

    /// Drops a mesh's buffers; its handle may be given to a later mesh. Returns whether the pool
    /// held it.
    pub fn remove(&mut self, mesh: MeshHandle) -> bool {
        match self.meshes.get_mut(mesh.0 as usize) {
            Some(slot @ Some(_)) => {
                *slot = None;
                self.free.push(mesh.0);
                true
            }
            _ => false,
        }
    }

    /// A morph instance of `base`: its own stream-0 buffer (initialised with the base vertices
    /// by the caller's first [`MeshPool::write_vertices`]), sharing the skin and index buffers.
    pub fn add_dynamic_instance(&mut self, device: &wgpu::Device, base: MeshHandle) -> Option<MeshHandle> {
        let b = self.get(base)?.clone();
        let vertices = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("marrow stream 0 (morphed)"),
            size: b.vertices.size(),
            usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Some(self.insert(GpuMesh { vertices, dynamic: true, ..b }))
    }

    /// Rewrites a mesh's stream 0 (one counted upload). Fails when the count differs.
    pub fn write_vertices(
        &mut self,
        queue: &wgpu::Queue,
        mesh: MeshHandle,
        vertices: &[GpuVertex],
    ) -> Result<(), RenderError> {
        let m = self.get(mesh).ok_or(RenderError::UnknownMesh(mesh.0))?;
        if vertices.len() != m.vertex_count as usize {
            return Err(RenderError::Mesh(format!(
                "{} vertices written to a mesh of {}",
                vertices.len(),
                m.vertex_count
            )));
        }
        queue.write_buffer(&m.vertices, 0, bytemuck::cast_slice(vertices));
        self.vertex_uploads += 1;
        Ok(())
    }

    /// A mesh.
    pub fn get(&self, mesh: MeshHandle) -> Option<&GpuMesh> {
        self.meshes.get(mesh.0 as usize).and_then(Option::as_ref)
    }

    /// Number of meshes held (morph instances included).
    pub fn len(&self) -> usize {
        self.meshes.len() - self.free.len()
    }

    /// Whether the pool holds no mesh.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Uploads an sRGB RGBA8 image as a texture. Fails on a size that does not match the bytes
    /// or exceeds the device's limit.
    pub fn add_texture(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        rgba: &[u8],
        width: u32,
        height: u32,
    ) -> Result<TextureHandle, RenderError> {
        let max = device.limits().max_texture_dimension_2d;
        if width == 0 || height == 0 || width > max || height > max {
            return Err(RenderError::Mesh(format!("a {width} x {height} texture (the device allows {max})")));
        }
        if rgba.len() as u64 != width as u64 * height as u64 * 4 {
            return Err(RenderError::Mesh(format!(
                "{} bytes for a {width} x {height} RGBA texture",
                rgba.len()
            )));
        }
        let texture = srgb_texture(device, queue, "marrow base colour", rgba, width, height);
        let t = GpuTexture { view: texture.create_view(&Default::default()), texture };
        Ok(match self.free_textures.pop() {
            Some(i) => {
                self.textures[i as usize] = Some(t);
                TextureHandle(i)
            }
            None => {
                self.textures.push(Some(t));
                TextureHandle(self.textures.len() as u32 - 1)
            }
        })
    }

    /// Drops a texture; its handle may be given to a later texture.
    pub fn remove_texture(&mut self, t: TextureHandle) -> bool {
        match self.textures.get_mut(t.0 as usize) {
            Some(slot @ Some(_)) => {
                *slot = None;
                self.free_textures.push(t.0);
                self.texture_epoch += 1;
                true
            }
            _ => false,
        }
    }

    /// A texture.
    pub fn texture(&self, t: TextureHandle) -> Option<&GpuTexture> {
        self.textures.get(t.0 as usize).and_then(Option::as_ref)
    }

    /// Bumped whenever a texture is removed (handles may then be reused).
    pub fn texture_epoch(&self) -> u64 {
        self.texture_epoch
    }

    /// How many [`MeshPool::write_vertices`] uploads happened so far (morph uploads).
    pub fn vertex_uploads(&self) -> u64 {
        self.vertex_uploads
    }
}
