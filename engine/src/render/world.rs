//! Drawing a running [`World`]: [`WorldRenderer`] uploads the meshes its entities use (once per
//! mesh asset, skinned primitives with their joints remapped to the rig's bone order, so every
//! mesh of a rig shares the rig's palette slice), and each frame extracts the world into
//! [`FrameData`]: the packed palette of every posed rig, one draw object per primitive (skinned
//! meshes at their rig's world matrix with posed bounds, static meshes at their entity's), morph
//! instances rebuilt when their weights change, the selection outline, picking ids, a ground
//! grid and the skeleton overlay. [`pick_bone`] finds the joint under a cursor on the CPU.
//!
//! The editor's viewport and `marrow render` both draw through it. It does not pose anything (the
//! world's frame does) and does not own the device or a window.

use std::collections::HashMap;
use std::sync::Arc;

use glam::{Mat4, Vec2, Vec3};

use super::RenderError;
use super::gpu::GpuContext;
use super::mesh::{MeshData, MeshHandle, MeshPool, TextureHandle, upload_material_textures};
use super::morph::{self, MorphStream};
use super::renderer::{DrawObject, FrameData};
use super::types::LineVertex;
use crate::scene::{Entity, MeshAsset, MeshDesc, World};
use crate::skinning::Aabb;

/// Colours of unskinned meshes (boxes and props), by entity.
const PROP_COLORS: [[f32; 4]; 5] = [
    [0.55, 0.57, 0.6, 1.0],
    [0.35, 0.5, 0.75, 1.0],
    [0.6, 0.7, 0.45, 1.0],
    [0.7, 0.45, 0.6, 1.0],
    [0.75, 0.6, 0.35, 1.0],
];
/// Colour of skinned meshes (characters) without a material colour.
const SKIN_COLOR: [f32; 4] = [0.78, 0.6, 0.48, 1.0];

/// What the extraction draws besides the meshes.
#[derive(Clone, Debug, PartialEq)]
pub struct WorldView {
    /// Draw every posed rig's skeleton (bone segments and joint dots).
    pub skeletons: bool,
    /// Draw a ground grid on the `y = 0` plane.
    pub grid: bool,
    /// Selected entities: outlined (with everything below them) and, for rigs, axis triads.
    pub selected: Vec<Entity>,
    /// A selected bone (rig, bone index): highlighted in the overlay.
    pub selected_bone: Option<(Entity, usize)>,
    /// Onion skins: extra poses of a rig, each drawn as a tinted skeleton and, when the ghost
    /// carries a palette, its skinned meshes translucent in the tint (see [`Ghost`]).
    pub ghosts: Vec<Ghost>,
}

/// How much of a ghost's tint alpha its meshes are drawn with (its skeleton lines take all of
/// it): a mesh ghost covers more of the view than its lines, so it is fainter.
pub const GHOST_MESH_ALPHA: f32 = 0.4;

/// A rig's pose at another time (onion skins): its skeleton drawn in the tint, and its skinned
/// meshes drawn translucent in the tint (alpha: the tint's) when `palette` is given.
#[derive(Clone, Debug, PartialEq)]
pub struct Ghost {
    /// The rig.
    pub rig: Entity,
    /// Its `model_from_bone` matrices at that time.
    pub model: Vec<Mat4>,
    /// Its skinning palette at that time (`model_from_bone * bone_from_bind`, one per bone, as
    /// [`World::pose_and_palette_at`] gives it); empty: skeleton lines only.
    pub palette: Vec<Mat4>,
    /// Linear RGBA tint.
    pub color: [f32; 4],
}

impl Default for WorldView {
    fn default() -> Self {
        Self { skeletons: false, grid: true, selected: Vec::new(), selected_bone: None, ghosts: Vec::new() }
    }
}

/// What the last [`WorldRenderer::extract`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExtractStats {
    /// Rig palettes packed.
    pub palettes: u32,
    /// Joint matrices packed.
    pub joint_matrices: u32,
    /// Draw objects pushed.
    pub objects: u32,
    /// Morph instances whose vertices were rebuilt and uploaded.
    pub morph_uploads: u32,
    /// Meshes uploaded (first use of a mesh asset).
    pub mesh_uploads: u32,
    /// Particle discs extracted.
    pub particles: u32,
    /// Crowd instances drawn.
    pub crowd_instances: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum MeshKey {
    /// A mesh asset, by the address of its shared `Arc` (the upload keeps the `Arc` alive).
    Asset(usize),
    /// A box, by the bits of its half extents.
    Box([u32; 3]),
}

#[derive(Debug)]
struct PrimUpload {
    index: usize,
    handle: MeshHandle,
    /// The primitive's material: its base colour and texture (0: none).
    color: Option<[f32; 4]>,
    material: u32,
    /// Per morph target, the longest position delta (empty without targets).
    max_delta: Vec<f32>,
}

#[derive(Debug)]
struct MeshUpload {
    asset: Arc<MeshAsset>,
    prims: Vec<PrimUpload>,
    textures: Vec<TextureHandle>,
    /// Per rig bone, a box around the bind-pose vertices it influences, in the bone's space.
    bone_bounds: Vec<Option<Aabb>>,
    used: u64,
}

#[derive(Debug)]
struct MorphSlot {
    stream: MorphStream,
    /// The extraction frame that last drew it.
    used: u64,
}

/// A world's GPU meshes and its per-frame extraction state.
#[derive(Debug, Default)]
pub struct WorldRenderer {
    uploads: HashMap<MeshKey, MeshUpload>,
    morphs: HashMap<(Entity, MeshKey, usize), MorphSlot>,
    rig_offsets: Vec<(Entity, u32)>,
    /// The crowds' GPU data and draws, rebuilt when a crowd (its version or its entity's world
    /// matrix) changes: keyed by (entity, version, world matrix bits) of every crowd.
    crowd_key: Vec<(Entity, u64, [u32; 16])>,
    crowd_data: Option<Arc<super::CrowdData>>,
    crowd_draws: Vec<super::CrowdDraw>,
    crowd_version: u64,
    bounds: Option<Aabb>,
    frame: u64,
    stats: ExtractStats,
    /// What is drawn besides the meshes.
    pub view: WorldView,
}

fn key_of(desc: &MeshDesc, asset: &Arc<MeshAsset>) -> MeshKey {
    match desc {
        MeshDesc::Box { half_extents } => MeshKey::Box(half_extents.to_array().map(f32::to_bits)),
        MeshDesc::Asset(_) => MeshKey::Asset(Arc::as_ptr(asset) as usize),
    }
}

fn upload(
    ctx: &GpuContext,
    pool: &mut MeshPool,
    asset: &Arc<MeshAsset>,
    frame: u64,
) -> Result<MeshUpload, RenderError> {
    let mut prims = Vec::new();
    let per_material =
        upload_material_textures(&ctx.device, &ctx.queue, pool, &asset.materials, &asset.images);
    let bones = asset.skeleton.as_ref().map_or(0, |s| s.bone_count());
    let mut bone_bounds: Vec<Option<Aabb>> = vec![None; bones];
    for (index, prim) in asset.mesh.primitives.iter().enumerate() {
        if prim.mode != 4 || prim.positions.is_empty() {
            continue;
        }
        let remapped = match (&asset.skeleton, &prim.skin) {
            (Some(_), Some(stream)) => Some(stream.joints_to_bones(&asset.joint_to_bone)),
            _ => None,
        };
        if let (Some(sk), Some(joints), Some(stream)) = (&asset.skeleton, &remapped, &prim.skin) {
            for ((p, j), w) in prim.positions.iter().zip(joints).zip(&stream.weights) {
                for k in 0..4 {
                    let b = j[k] as usize;
                    if w[k] <= 0.0 || b >= bones {
                        continue;
                    }
                    let local = sk.inverse_bind[b].transform_point3(Vec3::from(*p));
                    match &mut bone_bounds[b] {
                        Some(bb) => bb.grow(local),
                        slot @ None => *slot = Some(Aabb::point(local)),
                    }
                }
            }
        }
        let handle = pool.add(&ctx.device, &MeshData::of_primitive(prim, remapped.as_deref()))?;
        let max_delta = morph::max_deltas(prim);
        let material =
            prim.material.and_then(|m| per_material.get(m).copied().flatten()).map_or(0, |t| t.0 + 1);
        let color = prim.material.and_then(|m| asset.materials.get(m)).map(|m| m.base_color);
        prims.push(PrimUpload { index, handle, color, material, max_delta });
    }
    let mut textures: Vec<TextureHandle> = per_material.into_iter().flatten().collect();
    textures.sort();
    textures.dedup();
    Ok(MeshUpload { asset: asset.clone(), prims, textures, bone_bounds, used: frame })
}

impl WorldRenderer {
    /// A renderer with nothing uploaded yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// World bounds of every mesh drawn by the last extraction.
    pub fn bounds(&self) -> Option<Aabb> {
        self.bounds
    }

    /// What the last extraction did.
    pub fn stats(&self) -> ExtractStats {
        self.stats
    }

    /// Mesh assets currently uploaded.
    pub fn uploaded_meshes(&self) -> usize {
        self.uploads.len()
    }

    /// The entity a pick id stands for (the inverse of the ids extraction writes).
    pub fn entity_of_pick(world: &World, id: u32) -> Option<Entity> {
        let index = id.checked_sub(1)?;
        world.entities().find(|e| e.index == index)
    }

    /// Appends `world` to `frame`: palettes (as version `pose_version`), draw objects, the
    /// grid and the skeleton overlay. Meshes are uploaded on first use; uploads no entity used
    /// this frame are released.
    pub fn extract(
        &mut self,
        ctx: &GpuContext,
        pool: &mut MeshPool,
        world: &World,
        pose_version: u64,
        frame: &mut FrameData,
    ) -> Result<(), RenderError> {
        self.frame += 1;
        let now = self.frame;
        let mut stats = ExtractStats::default();
        frame.palette_version = pose_version;
        self.extract_palettes(world, frame, &mut stats);
        let mut all: Option<Aabb> = None;
        // The skinned primitives of each rig (for its onion skin ghosts).
        let mut rig_prims: Vec<(Entity, MeshHandle)> = Vec::new();
        let selected = |e: Entity| {
            let mut at = Some(e);
            while let Some(x) = at {
                if self.view.selected.contains(&x) {
                    return true;
                }
                at = world.parent(x);
            }
            false
        };
        for e in world.entities() {
            let Some(m) = world.mesh(e) else { continue };
            let key = key_of(&m.desc, &m.asset);
            let up = match self.uploads.entry(key) {
                std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
                std::collections::hash_map::Entry::Vacant(v) => {
                    stats.mesh_uploads += 1;
                    v.insert(upload(ctx, pool, &m.asset, now)?)
                }
            };
            up.used = now;
            let entity_world = world.world_matrix(e).unwrap_or(Mat4::IDENTITY);
            // A skinned mesh draws at its rig's world matrix with the rig's palette; without a
            // posed rig it draws as a static mesh at its own transform (identity palette).
            let rig = m.rig().filter(|_| up.asset.is_skinned());
            let posed = rig.and_then(|r| {
                let offset = self.rig_offsets.iter().find(|(x, _)| *x == r)?.1;
                Some((r, offset, world.rig_pose(r)?))
            });
            let (world_from_model, palette_offset, skinned_bounds) = match posed {
                Some((r, offset, pose)) => {
                    let rig_world = world.world_matrix(r).unwrap_or(Mat4::IDENTITY);
                    let b = up
                        .bone_bounds
                        .iter()
                        .zip(pose.model)
                        .filter_map(|(b, m)| b.map(|b| b.transformed(&(rig_world * *m))))
                        .reduce(Aabb::union);
                    (rig_world, offset, b)
                }
                None if up.asset.is_skinned() => {
                    let offset = frame.palette.len() as u32;
                    let n = up.asset.skeleton.as_ref().map_or(1, |s| s.bone_count().max(1));
                    frame.palette.extend(std::iter::repeat_n(Mat4::IDENTITY, n));
                    (entity_world, offset, None)
                }
                None => (entity_world, 0, None),
            };
            let outlined = selected(e);
            let color = if up.asset.is_skinned() {
                SKIN_COLOR
            } else {
                PROP_COLORS[e.index as usize % PROP_COLORS.len()]
            };
            let defaults = world.morph_weights(e).unwrap_or(&up.asset.mesh.weights);
            for p in &up.prims {
                let Some(prim) = up.asset.mesh.primitives.get(p.index) else { continue };
                let mut mesh = p.handle;
                let mut inflate = 0.0;
                if !prim.targets.is_empty() {
                    let slot = match self.morphs.entry((e, key, p.index)) {
                        std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
                        std::collections::hash_map::Entry::Vacant(v) => {
                            let handle = pool
                                .add_dynamic_instance(&ctx.device, p.handle)
                                .ok_or(RenderError::UnknownMesh(p.handle.0))?;
                            v.insert(MorphSlot {
                                stream: MorphStream::new(handle, prim, defaults),
                                used: now,
                            })
                        }
                    };
                    slot.used = now;
                    slot.stream.state.set_weights(defaults);
                    if slot.stream.upload(prim, pool, &ctx.queue)? {
                        stats.morph_uploads += 1;
                    }
                    mesh = slot.stream.handle;
                    inflate = morph::inflation(slot.stream.state.weights(), &p.max_delta);
                }
                if let Some((r, _, _)) = posed {
                    rig_prims.push((r, p.handle));
                }
                let gpu = pool.get(mesh).ok_or(RenderError::UnknownMesh(mesh.0))?;
                let base = skinned_bounds.unwrap_or_else(|| gpu.bounds.transformed(&world_from_model));
                let scale = world_from_model
                    .x_axis
                    .truncate()
                    .length()
                    .max(world_from_model.y_axis.truncate().length())
                    .max(world_from_model.z_axis.truncate().length());
                let pad = Vec3::splat(inflate * scale.max(1e-6));
                let bounds = Aabb { min: base.min - pad, max: base.max + pad };
                all = Some(all.map_or(bounds, |a| a.union(bounds)));
                frame.objects.push(DrawObject {
                    mesh,
                    world_from_model,
                    color: p.color.unwrap_or(color),
                    material: p.material,
                    palette_offset,
                    bounds: Some(bounds),
                    casts_shadow: true,
                    outlined,
                    pick_id: e.index + 1,
                });
                stats.objects += 1;
            }
        }
        self.extract_crowds(ctx, pool, world, now, frame, &mut all, &mut stats)?;
        Self::extract_particles(world, frame, &mut all, &mut stats);
        self.bounds = all;
        self.release_unused(pool, now);
        if self.view.grid {
            grid_lines(all, &mut frame.depth_lines);
        }
        // A rig with nothing else to show (a capture or a skeleton imported without its mesh)
        // shows its bones with the overlay off, so that an import never looks like nothing.
        self.skeleton_lines(world, self.view.skeletons, &mut frame.lines);
        self.ghost_lines(world, &mut frame.lines);
        self.ghost_meshes(world, &rig_prims, frame);
        self.stats = stats;
        Ok(())
    }

    /// The posed rigs' palettes appended to `frame`, each rig's offset noted.
    fn extract_palettes(&mut self, world: &World, frame: &mut FrameData, stats: &mut ExtractStats) {
        self.rig_offsets.clear();
        for rig in world.rigs() {
            if let Some(pose) = world.rig_pose(rig) {
                self.rig_offsets.push((rig, frame.palette.len() as u32));
                frame.palette.extend_from_slice(pose.palette);
                stats.palettes += 1;
                stats.joint_matrices += pose.palette.len() as u32;
            }
        }
    }

    /// Releases the uploads and morph streams no entity used this frame (`now`).
    fn release_unused(&mut self, pool: &mut MeshPool, now: u64) {
        let uploads = &mut self.uploads;
        uploads.retain(|_, u| {
            let keep = u.used == now;
            if !keep {
                for p in &u.prims {
                    pool.remove(p.handle);
                }
                for t in &u.textures {
                    pool.remove_texture(*t);
                }
            }
            keep
        });
        self.morphs.retain(|_, m| {
            let keep = m.used == now;
            if !keep {
                pool.remove(m.stream.handle);
            }
            keep
        });
    }

    /// The crowd part of [`WorldRenderer::extract`]: one instanced draw per primitive per crowd;
    /// the data rebuilt (and re-uploaded by the renderer) only when a crowd changes.
    #[allow(clippy::too_many_arguments)]
    fn extract_crowds(
        &mut self,
        ctx: &GpuContext,
        pool: &mut MeshPool,
        world: &World,
        now: u64,
        frame: &mut FrameData,
        all: &mut Option<Aabb>,
        stats: &mut ExtractStats,
    ) -> Result<(), RenderError> {
        // Crowds: one instanced draw per primitive per crowd; the data (table, clips, instances)
        // is rebuilt and re-uploaded only when a crowd changes, so a playing crowd costs the
        // renderer nothing but its clock.
        // Compared in place: a playing crowd allocates nothing here.
        let key_of = |e: Entity| {
            let c = world.crowd(e)?;
            let m = world.world_matrix(e).unwrap_or(Mat4::IDENTITY).to_cols_array().map(f32::to_bits);
            Some((e, c.version, m))
        };
        let mut same = 0;
        let mut changed = false;
        for k in world.crowds().filter_map(key_of) {
            changed |= self.crowd_key.get(same) != Some(&k);
            same += 1;
        }
        if changed || same != self.crowd_key.len() {
            self.rebuild_crowds(ctx, pool, world, now)?;
            self.crowd_key.clear();
            self.crowd_key.extend(world.crowds().filter_map(key_of));
        }
        for &(e, _, _) in &self.crowd_key {
            if let Some(c) = world.crowd(e) {
                let k = MeshKey::Asset(Arc::as_ptr(&c.mesh) as usize);
                if let Some(up) = self.uploads.get_mut(&k) {
                    up.used = now;
                }
                frame.crowd_time = c.time;
            }
        }
        if !self.crowd_draws.is_empty() {
            frame.crowd = self.crowd_data.clone();
            frame.crowd_draws.extend_from_slice(&self.crowd_draws);
            for d in &self.crowd_draws {
                *all = Some(all.map_or(d.bounds, |a| a.union(d.bounds)));
                stats.crowd_instances += d.count;
            }
        }
        Ok(())
    }

    /// The particle part of [`WorldRenderer::extract`]: every cloud's discs where its springs
    /// hold them.
    fn extract_particles(
        world: &World,
        frame: &mut FrameData,
        all: &mut Option<Aabb>,
        stats: &mut ExtractStats,
    ) {
        // Particle clouds: their discs where the springs hold them (world space).
        for e in world.particle_clouds() {
            let Some((desc, cloud)) = world.particle_cloud(e) else { continue };
            let color = super::ParticleInstance::pack_color(desc.settings.color);
            let radius = desc.settings.radius;
            let start = frame.particles.len();
            frame.particles.extend(
                cloud.positions().iter().zip(&cloud.normals).map(|(p, n)| super::ParticleInstance {
                    position: *p,
                    radius,
                    normal: *n,
                    color,
                }),
            );
            if let Some(b) = super::renderer::particle_bounds(&frame.particles[start..]) {
                *all = Some(all.map_or(b, |a| a.union(b)));
            }
            stats.particles += (frame.particles.len() - start) as u32;
        }
    }

    /// Rebuilds the crowds' GPU data: every crowd's table end to end (clip offsets shifted),
    /// instances placed by their entity's world matrix, one draw per primitive bounded by every
    /// instance at every baked frame.
    fn rebuild_crowds(
        &mut self,
        ctx: &GpuContext,
        pool: &mut MeshPool,
        world: &World,
        now: u64,
    ) -> Result<(), RenderError> {
        self.crowd_version += 1;
        self.crowd_draws.clear();
        let mut data = super::CrowdData { version: self.crowd_version, ..Default::default() };
        for e in world.crowds() {
            let Some(c) = world.crowd(e) else { continue };
            let k = MeshKey::Asset(Arc::as_ptr(&c.mesh) as usize);
            let up = match self.uploads.entry(k) {
                std::collections::hash_map::Entry::Occupied(o) => o.into_mut(),
                std::collections::hash_map::Entry::Vacant(v) => v.insert(upload(ctx, pool, &c.mesh, now)?),
            };
            let Some(sk) = &c.mesh.skeleton else { continue };
            // The bones' boxes in bind space (the table's matrices take bind space to model).
            let boxes: Vec<Option<Aabb>> = up
                .bone_bounds
                .iter()
                .zip(&sk.inverse_bind)
                .map(|(b, ib)| b.map(|b| b.transformed(&crate::math::inverse_or_identity(ib))))
                .collect();
            let Some(local) = c.baked.bounds(&boxes) else { continue };
            let entity_world = world.world_matrix(e).unwrap_or(Mat4::IDENTITY);
            let member = c.desc.member.to_mat4();
            let placed: Vec<crate::crowd::layout::Placement> = c
                .placements
                .iter()
                .map(|p| crate::crowd::layout::Placement { world: entity_world * p.world * member, ..*p })
                .collect();
            let Some(bounds) = super::crowd::crowd_bounds(local, &placed) else { continue };
            let part = super::crowd::crowd_data(&c.baked, &placed, &super::crowd::DEFAULT_TINTS, 0);
            let (table0, clip0, first) =
                (data.table.len() as u32, data.clips.len() as u32, data.instances.len() as u32);
            data.table.extend_from_slice(&part.table);
            data.clips.extend(part.clips.into_iter().map(|mut x| {
                x.offset += table0;
                x
            }));
            data.instances.extend(part.instances.into_iter().map(|mut x| {
                x.clip += clip0;
                x
            }));
            for p in &up.prims {
                self.crowd_draws.push(super::CrowdDraw {
                    mesh: p.handle,
                    first,
                    count: placed.len() as u32,
                    bounds,
                    casts_shadow: true,
                    pick_id: e.index + 1,
                });
            }
        }
        self.crowd_data = Some(Arc::new(data));
        Ok(())
    }

    /// Appends the onion skins' meshes: each ghost with a palette gets it appended to the
    /// frame's palette and a translucent draw of each skinned primitive of its rig
    /// (`rig_prims`, the rig's drawn primitives without their morphs) in its tint. A frame with
    /// ghosts uploads its palette every frame (version 0): the ghost palettes change with the
    /// onion settings, which the pose version does not count.
    fn ghost_meshes(&self, world: &World, rig_prims: &[(Entity, MeshHandle)], frame: &mut FrameData) {
        for g in self.view.ghosts.iter().filter(|g| !g.palette.is_empty()) {
            let rig_world = world.world_matrix(g.rig).unwrap_or(Mat4::IDENTITY);
            let offset = frame.palette.len() as u32;
            let mut any = false;
            for (_, mesh) in rig_prims.iter().filter(|(r, _)| *r == g.rig) {
                any = true;
                frame.ghosts.push(DrawObject {
                    mesh: *mesh,
                    world_from_model: rig_world,
                    color: [g.color[0], g.color[1], g.color[2], g.color[3] * GHOST_MESH_ALPHA],
                    material: 0,
                    palette_offset: offset,
                    bounds: None,
                    casts_shadow: false,
                    outlined: false,
                    pick_id: 0,
                });
            }
            if any {
                frame.palette.extend_from_slice(&g.palette);
                frame.palette_version = 0;
            }
        }
    }

    /// Appends the onion skins: each ghost's skeleton, bone to parent, in its tint.
    pub fn ghost_lines(&self, world: &World, out: &mut Vec<LineVertex>) {
        for g in &self.view.ghosts {
            let Some(a) = world.animator(g.rig) else { continue };
            let sk = a.skeleton();
            let rig_world = world.world_matrix(g.rig).unwrap_or(Mat4::IDENTITY);
            for (b, m) in g.model.iter().enumerate() {
                if let Some(p) = sk.parent(b)
                    && let Some(pm) = g.model.get(p)
                {
                    out.push(LineVertex {
                        position: (rig_world * *pm).w_axis.truncate().to_array(),
                        color: g.color,
                    });
                    out.push(LineVertex {
                        position: (rig_world * *m).w_axis.truncate().to_array(),
                        color: g.color,
                    });
                }
            }
        }
    }

    /// Appends the skeleton overlay of every posed rig (`all`), or of the rigs nothing else
    /// shows ([`rig_shows_itself`] false: their bones are all there is to see): per bone a
    /// segment to its parent and a joint dot (a small cross); the selected rig also gets an
    /// axis triad per bone (X red, Y green, Z blue) and the selected bone is drawn highlighted.
    pub fn skeleton_lines(&self, world: &World, all: bool, out: &mut Vec<LineVertex>) {
        let size = self.bounds.map_or(0.05, |b| (b.max - b.min).length() * 0.01).clamp(0.005, 0.5);
        let line = |out: &mut Vec<LineVertex>, a: Vec3, b: Vec3, color: [f32; 4]| {
            out.push(LineVertex { position: a.to_array(), color });
            out.push(LineVertex { position: b.to_array(), color });
        };
        let shown = if all { Default::default() } else { rigs_shown(world) };
        for rig in world.rigs().filter(|r| all || !shown.contains(r)) {
            let Some(pose) = world.rig_pose(rig) else { continue };
            let Some(animator) = world.animator(rig) else { continue };
            let sk = animator.skeleton();
            let rig_world = world.world_matrix(rig).unwrap_or(Mat4::IDENTITY);
            let on = self.view.selected.contains(&rig);
            let bone_color = if on { [1.0, 0.75, 0.2, 1.0] } else { [0.85, 0.85, 0.55, 0.8] };
            for (b, m) in pose.model.iter().enumerate() {
                let world_from_bone = rig_world * *m;
                let p = world_from_bone.w_axis.truncate();
                let hot = self.view.selected_bone == Some((rig, b));
                let color = if hot { [0.2, 0.9, 1.0, 1.0] } else { bone_color };
                if let Some(parent) = sk.parent(b)
                    && let Some(pm) = pose.model.get(parent)
                {
                    line(out, (rig_world * *pm).w_axis.truncate(), p, color);
                }
                let dot = if hot { size * 1.6 } else { size };
                for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
                    line(out, p - axis * dot * 0.5, p + axis * dot * 0.5, [1.0, 1.0, 1.0, 1.0]);
                }
                if on || hot {
                    let cols = [[1.0, 0.15, 0.15, 1.0], [0.2, 1.0, 0.2, 1.0], [0.25, 0.4, 1.0, 1.0]];
                    for (axis, c) in [world_from_bone.x_axis, world_from_bone.y_axis, world_from_bone.z_axis]
                        .into_iter()
                        .zip(cols)
                    {
                        let dir = axis.truncate().try_normalize().unwrap_or(Vec3::ZERO);
                        line(out, p, p + dir * size * 2.5, c);
                    }
                }
            }
        }
    }
}

/// A ground grid on `y = 0` around `bounds` (1 m lines, every fifth brighter; X axis red, Z axis
/// blue), depth-tested.
pub fn grid_lines(bounds: Option<Aabb>, out: &mut Vec<LineVertex>) {
    let extent = bounds.map_or(5.0, |b| {
        let r = b.min.abs().max(b.max.abs());
        r.x.max(r.z).max(2.0) * 2.0
    });
    let n = (extent.ceil() as i32).clamp(2, 50);
    let e = n as f32;
    for i in -n..=n {
        let t = i as f32;
        let (cx, cz) = match i {
            0 => ([0.75, 0.25, 0.25, 0.9], [0.25, 0.4, 0.8, 0.9]),
            _ if i % 5 == 0 => ([0.5, 0.5, 0.5, 0.6], [0.5, 0.5, 0.5, 0.6]),
            _ => ([0.42, 0.42, 0.42, 0.35], [0.42, 0.42, 0.42, 0.35]),
        };
        // A line along X at z = t (coloured as the X axis at t = 0), and one along Z at x = t.
        out.push(LineVertex { position: [-e, 0.0, t], color: cx });
        out.push(LineVertex { position: [e, 0.0, t], color: cx });
        out.push(LineVertex { position: [t, 0.0, -e], color: cz });
        out.push(LineVertex { position: [t, 0.0, e], color: cz });
    }
}

/// Whether something of `rig` is drawn besides its bones: a mesh skinned to it, or a mesh or
/// particle cloud on it or on an entity below it (a prop on a socket). A rig without (a motion
/// capture, a skeleton imported without its mesh) draws its bones even with the skeleton
/// overlay off ([`WorldRenderer::skeleton_lines`]), and its joints can be picked.
pub fn rig_shows_itself(world: &World, rig: Entity) -> bool {
    rigs_shown(world).contains(&rig)
}

/// Every rig [`rig_shows_itself`] holds for, in one pass over the entities (each drawn one
/// marks the rig it is skinned to and every entity above it), so a frame's overlay and a pick
/// ask it once, not once per rig.
fn rigs_shown(world: &World) -> std::collections::HashSet<Entity> {
    let mut shown = std::collections::HashSet::new();
    for e in world.entities() {
        let mesh = world.mesh(e);
        if mesh.is_none() && world.particle_cloud(e).is_none() {
            continue;
        }
        if let Some(m) = mesh.filter(|m| m.asset.is_skinned()) {
            shown.extend(m.rig());
        }
        shown.extend(std::iter::successors(Some(e), |x| world.parent(*x)));
    }
    shown
}

/// The joint under `cursor` (pixels from the viewport's top-left, of a viewport `size` pixels
/// big): the nearest projected joint within `radius` pixels, in front of the camera, of any
/// posed rig (`all`) or of the rigs that show only their bones ([`rig_shows_itself`] false).
/// Returns the rig and the bone index.
pub fn pick_bone(
    world: &World,
    clip_from_world: Mat4,
    size: Vec2,
    cursor: Vec2,
    radius: f32,
    all: bool,
) -> Option<(Entity, usize)> {
    let mut best: Option<(f32, Entity, usize)> = None;
    let shown = if all { Default::default() } else { rigs_shown(world) };
    for rig in world.rigs().filter(|r| all || !shown.contains(r)) {
        let Some(pose) = world.rig_pose(rig) else { continue };
        let rig_world = world.world_matrix(rig).unwrap_or(Mat4::IDENTITY);
        for (b, m) in pose.model.iter().enumerate() {
            let p = (rig_world * *m).w_axis.truncate();
            let Some(s) = project(clip_from_world, size, p) else { continue };
            let d = s.distance(cursor);
            if d <= radius && best.is_none_or(|(bd, _, _)| d < bd) {
                best = Some((d, rig, b));
            }
        }
    }
    best.map(|(_, r, b)| (r, b))
}

/// Projects a world point to pixels (top-left origin) in a viewport of `size` pixels; `None`
/// behind the camera.
pub fn project(clip_from_world: Mat4, size: Vec2, p: Vec3) -> Option<Vec2> {
    let c = clip_from_world * p.extend(1.0);
    if c.w <= 1e-6 {
        return None;
    }
    let ndc = c.truncate() / c.w;
    Some(Vec2::new((ndc.x * 0.5 + 0.5) * size.x, (0.5 - ndc.y * 0.5) * size.y))
}

/// Renders `world` as it stands (posed by its last frame) offscreen at `width` x `height`, with a
/// camera framed on the drawn bounds, a shadow, the grid, and optionally the skeleton overlay;
/// `marrow render PROJECT` uses it.
pub fn render_world(
    ctx: &GpuContext,
    world: &World,
    width: u32,
    height: u32,
    skeletons: bool,
    shaders: super::ShaderSource,
) -> Result<super::scene::RenderedImage, RenderError> {
    let mut renderer = super::Renderer::new(ctx, super::RendererSettings { shaders, ..Default::default() })?;
    let mut pool = MeshPool::new();
    let mut wr = WorldRenderer::new();
    wr.view.skeletons = skeletons;
    let mut frame = FrameData::default();
    wr.extract(ctx, &mut pool, world, 1, &mut frame)?;
    // The overlay sizes its joints from the bounds of the first extraction.
    frame.clear();
    wr.extract(ctx, &mut pool, world, 1, &mut frame)?;
    // Frame the characters (what is at or below a rig, particle clouds included, and crowds) when
    // there are any, else everything.
    let characters: Vec<Entity> = world.rigs().chain(world.crowds()).collect();
    let bounds = drawn_bounds(world, &frame, &characters).or(wr.bounds());
    if let Some(b) = bounds {
        frame.camera = super::Camera::framing(b, width as f32 / height.max(1) as f32);
    }
    renderer.check_target(width, height)?;
    renderer.check_crowd_work(&pool, &frame)?;
    let target = renderer.create_target(width, height);
    let stats = renderer.render(&pool, &frame, &target)?;
    let rgba = renderer.read_color(&target)?;
    Ok(super::scene::RenderedImage { width: target.width, height: target.height, rgba, stats, bounds })
}

/// `e` and every entity below it.
pub fn subtree(world: &World, e: Entity) -> impl Iterator<Item = Entity> + '_ {
    let mut stack = vec![e];
    std::iter::from_fn(move || {
        let x = stack.pop()?;
        stack.extend(world.children(x).iter().copied());
        Some(x)
    })
}

/// The union of the drawn bounds of `roots` and everything below them in `frame` (extracted from
/// `world`), their crowds and particle clouds included; `None` when none of them drew anything.
pub fn drawn_bounds(world: &World, frame: &FrameData, roots: &[Entity]) -> Option<Aabb> {
    let entities: Vec<Entity> = roots.iter().flat_map(|r| subtree(world, *r)).collect();
    drawn_bounds_of(world, frame, &entities)
}

/// The union of the drawn bounds of exactly `entities` (not what lies below them) in `frame`,
/// their crowds and particle clouds included; `None` when none of them drew anything.
pub fn drawn_bounds_of(world: &World, frame: &FrameData, entities: &[Entity]) -> Option<Aabb> {
    let ids: Vec<u32> = entities.iter().map(|e| e.index + 1).collect();
    let meshes = frame.objects.iter().filter(|o| ids.contains(&o.pick_id)).filter_map(|o| o.bounds);
    let crowds = frame.crowd_draws.iter().filter(|d| ids.contains(&d.pick_id)).map(|d| d.bounds);
    let clouds = entities.iter().filter_map(|&e| {
        let (desc, cloud) = world.particle_cloud(e)?;
        let r = desc.settings.radius;
        cloud
            .positions()
            .iter()
            .filter(|p| p.iter().all(|v| v.is_finite()))
            .map(|p| Aabb { min: Vec3::from(*p) - r, max: Vec3::from(*p) + r })
            .reduce(Aabb::union)
    });
    meshes.chain(crowds).chain(clouds).reduce(Aabb::union)
}
