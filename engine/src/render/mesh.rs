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
    /// Triangle list indices.
    pub indices: Option<&'a [u32]>,
    /// Skin stream: bone indices (of the rig the mesh is drawn with) and weights, one per vertex.
    pub skin: Option<SkinSlices<'a>>,
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
}

/// Packs CPU attributes into stream-0 vertices (writing into `out`, reusing its allocation).
pub fn pack_vertices(
    positions: &[[f32; 3]],
    normals: &[[f32; 3]],
    tangents: &[[f32; 4]],
    uvs: &[[f32; 2]],
    out: &mut Vec<GpuVertex>,
) {
    out.clear();
    out.extend(positions.iter().enumerate().map(|(i, p)| GpuVertex {
        position: *p,
        normal: normals.get(i).copied().unwrap_or([0.0, 1.0, 0.0]),
        tangent: tangents.get(i).copied().unwrap_or([1.0, 0.0, 0.0, 1.0]),
        uv: uvs.get(i).copied().unwrap_or([0.0, 0.0]),
    }));
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
        for (name, len) in
            [("normals", data.normals.len()), ("tangents", data.tangents.len()), ("uvs", data.uvs.len())]
        {
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
        pack_vertices(data.positions, data.normals, data.tangents, data.uvs, &mut verts);
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

    /// How many [`MeshPool::write_vertices`] uploads happened so far (morph uploads).
    pub fn vertex_uploads(&self) -> u64 {
        self.vertex_uploads
    }
}
