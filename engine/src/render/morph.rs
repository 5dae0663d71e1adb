//! A morphed primitive's GPU stream: the blended attributes on the CPU, their packed form and the
//! dynamic mesh instance they are written to, rebuilt from the base only when the weights'
//! version moves. Shared by the world and the imported-scene renderers.
//!
//! It does not decide which weights apply (the callers set them on [`MorphStream::state`]) or
//! when a stream is dropped.

use glam::Vec3;

use super::RenderError;
use super::mesh::{MeshHandle, MeshPool, pack_vertices};
use super::types::GpuVertex;
use crate::mesh::Primitive;
use crate::morph::{MorphJob, MorphState};

/// Per morph target of `prim`, the longest position delta (how far the target moves a vertex at
/// weight 1).
pub(crate) fn max_deltas(prim: &Primitive) -> Vec<f32> {
    prim.targets
        .iter()
        .map(|t| t.positions.iter().map(|d| Vec3::from(*d).length()).fold(0.0, f32::max))
        .collect()
}

/// How far `weights` can move a vertex from the base, given the targets' [`max_deltas`]: what a
/// box around the base positions is padded by.
pub(crate) fn inflation(weights: &[f32], max_deltas: &[f32]) -> f32 {
    weights.iter().zip(max_deltas).map(|(w, d)| w.abs() * d).sum()
}

/// One morphed primitive instance: its weights, the dynamic mesh it draws with and the buffers
/// it blends into (kept between frames, so a rebuild does not allocate).
#[derive(Debug)]
pub(crate) struct MorphStream {
    /// The dynamic instance drawn in place of the base mesh.
    pub handle: MeshHandle,
    /// The weights and their version.
    pub state: MorphState,
    uploaded_version: u64,
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    tangents: Vec<[f32; 4]>,
    packed: Vec<GpuVertex>,
}

impl MorphStream {
    /// A stream for `prim` drawn with the dynamic instance `handle`, starting at `weights`
    /// (nothing uploaded yet).
    pub fn new(handle: MeshHandle, prim: &Primitive, weights: &[f32]) -> Self {
        let n = prim.positions.len();
        Self {
            handle,
            state: MorphState::new(weights),
            uploaded_version: 0,
            positions: vec![[0.0; 3]; n],
            normals: vec![[0.0; 3]; prim.normals.len()],
            tangents: vec![[0.0; 4]; prim.tangents.len()],
            packed: Vec::with_capacity(n),
        }
    }

    /// Blends `prim` (the primitive the stream was made for) by the current weights and writes
    /// the result to the instance, when the weights changed since the last upload; returns
    /// whether it uploaded.
    pub fn upload(
        &mut self,
        prim: &Primitive,
        pool: &mut MeshPool,
        queue: &wgpu::Queue,
    ) -> Result<bool, RenderError> {
        if self.state.version() == self.uploaded_version {
            return Ok(false);
        }
        MorphJob {
            base_positions: &prim.positions,
            base_normals: &prim.normals,
            base_tangents: &prim.tangents,
            targets: &prim.targets,
            weights: self.state.weights(),
            positions: &mut self.positions,
            normals: &mut self.normals,
            tangents: &mut self.tangents,
        }
        .run()
        .map_err(|e| RenderError::Mesh(e.to_string()))?;
        pack_vertices(
            &self.positions,
            &self.normals,
            &self.tangents,
            &prim.uvs,
            &prim.colors,
            &mut self.packed,
        );
        pool.write_vertices(queue, self.handle, &self.packed)?;
        self.uploaded_version = self.state.version();
        Ok(true)
    }
}
