//! Scenes at run time: a [`World`] of entities with generational ids in a hierarchy, their
//! components, and the frame that animates them.
//!
//! Components: a name, a local [`Transform`] (TRS), an Animator on a rig entity (it drives every
//! mesh under it), a [`MeshComponent`] (skinned exactly when its [`MeshAsset`] has a skeleton; the
//! rig driving it is the nearest Animator at or above it), a [`BoneSocket`], a property animation
//! and default morph weights, and a particle cloud ([`crate::particles::ParticleCloud`], scattered
//! over a skinned mesh and driven, like a mesh, by the nearest Animator at or above it), and a
//! crowd ([`Crowd`]: clips baked into a table when the scene is instantiated, instances placed
//! around the entity, all playing on the crowd's own clock).
//!
//! ## Frame order ([`World::frame`])
//! 1. Simulation: for each tick every Animator advances (in parallel); property animations too.
//!    A frame with no tick advances by zero (a paused frame recomposes a zero-length step).
//! 2. Target bindings (only in a scene that has one): world matrices are resolved from the
//!    locals, and each bound entity's position in its rig's model space sets the rig's graph
//!    parameters (`prefix_x/_y/_z`). Then every rig is evaluated into its slice of one [`PoseBuffer`] (in parallel with rayon); the
//!    marker events are then published serially into [`World::events`].
//! 3. Transform stage ([`World::transform_stage`]): local transforms (authored, property
//!    animated; a rig's accumulated root motion after its own, see [`crate::root_motion`]), then
//!    sockets placed on their bones, then world matrices resolved parents first,
//!    so a socket sits on its bone the frame the character moves, including the first.
//! 4. Mesh bindings are checked.
//! 5. Particle clouds are posed from their rig (world space) and their springs stepped once per
//!    tick; a paused frame snaps them onto the pose.
//! 6. Crowd clocks advance by the frame's ticks.
//!
//! Allocation: none per frame once warmed up (fault messages are built only on a rising edge;
//! the event list keeps its capacity; several rigs are evaluated in parallel through
//! [`PoseBuffer::par_for_each_rig_mut`], which splits the packed buffer without allocating).
//!
//! Pose slices are keyed by (entity, generation, epoch): [`World::load`] bumps the epoch and that
//! frame recomposes every rig; an entity slot reused with a new generation is never posed from
//! the old rig's slice.
//!
//! Faults are named once per gap through [`FaultLatch`]es (each fault kind on its own latch) into
//! the [`FaultLog`] (and `log::warn!`): a skinned mesh whose skeleton is not its rig's, a skinned
//! mesh below its rig sitting off the rig's origin, a skinned mesh with no rig, a clip for another
//! rig (the bind pose stands), every [`SocketFault`], and a particle cloud with no rig or bound
//! to another rig's skeleton.
//!
//! What cannot play shows its bind pose: [`World::load_lenient`] (the editor's load) keeps a rig
//! whose clip or graph does not resolve, with its bones and everything under it, and returns the
//! faults instead of refusing the scene.
//!
//! Not here: files (see [`crate::project`]), rendering, editor selection, behaviours.

mod desc;
pub mod fault;
pub mod socket;
mod totals;

use std::sync::Arc;

use glam::{Mat4, Vec3};
use rayon::prelude::*;

pub use desc::{
    AnimatorDesc, AssetSource, CrowdDesc, EntityDesc, MeshDesc, ParticleCloudDesc, RootMotionDesc, SceneDesc,
    SocketDesc, TargetBinding,
};
pub use fault::{FaultLatch, FaultLog};
pub use socket::{BoneSocket, SocketFault, socket_local};
pub use totals::{MAX_SCENE_INSTANCES, MAX_SCENE_PARTICLES, MAX_SCENE_TABLE_BYTES, check_totals};

use crate::animator::{Animator, AnimatorSettings, MarkerEvent};
use crate::clip::Clip;
use crate::graph::{ParamValue, TargetSlots};
use crate::math::Transform;
use crate::mesh;
use crate::pose::{PoseBuffer, RigPose, RigPoseMut, RigSlot};
use crate::property::{PropertyAnimation, PropertyPlayer};
use crate::skeleton::Skeleton;
use crate::skinning::Aabb;

const NONE: u32 = u32::MAX;

/// An entity id: a slot index and the generation that slot had when the entity was spawned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Entity {
    /// Slot index.
    pub index: u32,
    /// Generation of the slot.
    pub generation: u32,
}

/// CPU mesh data a [`MeshComponent`] draws. Skinned exactly when `skeleton` is `Some`.
#[derive(Clone, Debug, PartialEq)]
pub struct MeshAsset {
    /// The mesh (primitives with vertex data).
    pub mesh: mesh::Mesh,
    /// The skeleton its skin was bound to (`None`: a rigid mesh).
    pub skeleton: Option<Arc<Skeleton>>,
    /// Bone index of each skin joint (vertex joint indices are in skin joint order).
    pub joint_to_bone: Vec<u16>,
    /// The materials its primitives name (by index), with the images they use.
    pub materials: Vec<mesh::Material>,
    /// The images the materials name (by index), encoded.
    pub images: Vec<mesh::Image>,
}

impl MeshAsset {
    /// Whether the mesh is skinned.
    pub fn is_skinned(&self) -> bool {
        self.skeleton.is_some()
    }

    /// An unskinned box with the given half extents (24 vertices with normals, 36 indices).
    pub fn cuboid(name: &str, half_extents: Vec3) -> Self {
        let h = half_extents;
        let mut positions = Vec::with_capacity(24);
        let mut normals = Vec::with_capacity(24);
        let mut indices = Vec::with_capacity(36);
        for axis in 0..3 {
            for sign in [1.0f32, -1.0] {
                let mut n = Vec3::ZERO;
                n[axis] = sign;
                let u = n.any_orthonormal_pair().0;
                let w = n.cross(u);
                let base = positions.len() as u32;
                for (a, b) in [(-1.0f32, -1.0f32), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                    let p = (n + u * a + w * b) * h;
                    positions.push(p.to_array());
                    normals.push(n.to_array());
                }
                indices.extend_from_slice(&[base, base + 1, base + 2, base, base + 2, base + 3]);
            }
        }
        let primitive = mesh::Primitive {
            mode: 4,
            material: None,
            positions,
            normals,
            tangents: Vec::new(),
            uvs: Vec::new(),
            colors: Vec::new(),
            indices: Some(indices),
            skin: None,
            targets: Vec::new(),
            bounds: Some(Aabb { min: -h, max: h }),
        };
        MeshAsset {
            mesh: mesh::Mesh {
                name: name.to_owned(),
                primitives: vec![primitive],
                weights: Vec::new(),
                target_names: Vec::new(),
            },
            skeleton: None,
            joint_to_bone: Vec::new(),
            materials: Vec::new(),
            images: Vec::new(),
        }
    }
}

/// A mesh on an entity: the authored description and the asset it resolved to.
#[derive(Clone, Debug)]
pub struct MeshComponent {
    /// What was authored.
    pub desc: MeshDesc,
    /// The CPU mesh.
    pub asset: Arc<MeshAsset>,
    rig: Option<Entity>,
    latches: [FaultLatch; 3],
}

impl MeshComponent {
    /// A mesh component.
    pub fn new(desc: MeshDesc, asset: Arc<MeshAsset>) -> Self {
        Self { desc, asset, rig: None, latches: Default::default() }
    }

    /// Derived each frame: the rig driving this mesh (the nearest Animator at or above it), for
    /// a skinned mesh.
    pub fn rig(&self) -> Option<Entity> {
        self.rig
    }
}

/// An Animator component with the references it was authored with.
#[derive(Clone, Debug)]
pub struct AnimatorComponent {
    /// The rig reference (its skeleton).
    pub rig: String,
    /// The authored clip reference.
    pub clip: Option<String>,
    /// The authored graph reference (played instead of the clip).
    pub graph: Option<String>,
    /// The authored override of the clip's looping.
    pub looping: Option<bool>,
    /// The authored root motion (its bone by name).
    pub root_motion: Option<RootMotionDesc>,
    /// The authored target bindings, with the parameter names they set.
    pub targets: Vec<BoundTarget>,
    /// The animator.
    pub animator: Animator,
}

/// A [`TargetBinding`] as a rig holds it: the three parameter names made once at load.
#[derive(Clone, Debug)]
pub struct BoundTarget {
    /// The authored binding.
    pub binding: TargetBinding,
    /// `{parameter}_x`, `_y`, `_z`.
    pub parameters: [String; 3],
}

impl From<&TargetBinding> for BoundTarget {
    fn from(b: &TargetBinding) -> Self {
        BoundTarget { binding: b.clone(), parameters: b.parameters() }
    }
}

/// A marker event published by a rig this frame.
#[derive(Clone, Debug)]
pub struct SceneEvent {
    /// The rig entity.
    pub entity: Entity,
    /// The event.
    pub event: MarkerEvent,
}

/// Why a scene operation failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SceneError {
    /// The entity is not alive.
    #[error("entity {0:?} is not alive")]
    Dead(Entity),
    /// Parenting would make a cycle.
    #[error("entity {child} cannot be parented under {parent}: that would make a cycle")]
    Cycle {
        /// The child's path.
        child: String,
        /// The parent's path.
        parent: String,
    },
    /// A reference in an authored entity did not resolve.
    #[error("entity {entity:?}, {field}: {message}")]
    Reference {
        /// Entity path.
        entity: String,
        /// Field.
        field: &'static str,
        /// What went wrong.
        message: String,
    },
    /// Two siblings share a name.
    #[error("entity {entity:?}: another entity at the same level has this name")]
    DuplicateName {
        /// Entity path.
        entity: String,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PoseState {
    Unposed,
    Posed { epoch: u64 },
    Failed { epoch: u64 },
}

#[derive(Clone, Debug)]
struct RigEntry {
    entity: Entity,
    component: AnimatorComponent,
    slot: RigSlot,
    state: PoseState,
    clip_latch: FaultLatch,
    target_latch: FaultLatch,
}

/// A particle cloud component: its authored form, the cloud bound to the sampled mesh's
/// skeleton, and its fault latches (no rig, another rig's skeleton).
#[derive(Clone, Debug)]
struct CloudEntry {
    desc: ParticleCloudDesc,
    skeleton: Arc<Skeleton>,
    cloud: crate::particles::ParticleCloud,
    latches: [FaultLatch; 2],
}

/// A crowd component: its authored form, the mesh its instances draw, the baked table and the
/// placements (relative to the entity), and its clock.
#[derive(Clone, Debug)]
pub struct Crowd {
    /// The authored crowd.
    pub desc: CrowdDesc,
    /// The mesh every instance draws (skinned, on the rig's skeleton).
    pub mesh: Arc<MeshAsset>,
    /// The baked clips (derived from the clips when the scene was instantiated).
    pub baked: Arc<crate::crowd::BakedPoses>,
    /// The instances, in the entity's frame.
    pub placements: Vec<crate::crowd::layout::Placement>,
    /// The crowd's clock: simulation time since the scene was instantiated (session state).
    pub time: f32,
    /// Changes whenever the table or the placements do (renderers re-upload then).
    pub version: u64,
}

#[derive(Clone, Debug)]
struct PropertyEntry {
    animation: PropertyAnimation,
    player: PropertyPlayer,
}

/// A scene at run time. See the module docs for the frame order.
#[derive(Clone, Debug, Default)]
pub struct World {
    name: String,
    table: EntityTable,
    hierarchy: Hierarchy,
    components: Components,
    frame_state: FrameState,
    /// The reference each clip playing here is saved under, keyed by the clip's address.
    clip_refs: std::collections::HashMap<usize, (Arc<Clip>, String)>,
}

/// The entity table: per slot, its generation, whether it is alive and its name; the free slots.
#[derive(Clone, Debug, Default)]
struct EntityTable {
    generations: Vec<u32>,
    alive: Vec<bool>,
    free: Vec<u32>,
    names: Vec<String>,
}

/// The hierarchy: per slot, its parent and children; the roots; and the parents-first order the
/// transform stage walks (rebuilt when dirty, with its traversal stack kept for reuse).
#[derive(Clone, Debug, Default)]
struct Hierarchy {
    parents: Vec<Option<Entity>>,
    children: Vec<Vec<Entity>>,
    roots: Vec<Entity>,
    order: Vec<u32>,
    stack: Vec<u32>,
    order_dirty: bool,
}

/// The components, one column per kind (indexed by slot), with the rig list the Animators live
/// in (`rig_of`: a slot's index into `rigs`, or `NONE`) and the slots that hold a socket.
#[derive(Clone, Debug, Default)]
struct Components {
    transforms: Vec<Option<Transform>>,
    rig_of: Vec<u32>,
    rigs: Vec<RigEntry>,
    meshes: Vec<Option<MeshComponent>>,
    sockets: Vec<Option<BoneSocket>>,
    socket_list: Vec<u32>,
    animations: Vec<Option<PropertyEntry>>,
    morphs: Vec<Option<Vec<f32>>>,
    particles: Vec<Option<CloudEntry>>,
    crowds: Vec<Option<Crowd>>,
}

/// The frame state: what each frame derives (local transforms, world matrices, the rigs' poses)
/// and publishes (events, faults), the pose epoch and the socket lookup counter.
#[derive(Clone, Debug, Default)]
struct FrameState {
    locals: Vec<Transform>,
    worlds: Vec<Mat4>,
    poses: PoseBuffer,
    slots_dirty: bool,
    epoch: u64,
    events: Vec<SceneEvent>,
    faults: FaultLog,
    lookups: u64,
}

impl Hierarchy {
    /// A reused slot's links: no parent, no children.
    fn reset_slot(&mut self, u: usize) {
        self.parents[u] = None;
        self.children[u].clear();
    }

    /// A new slot's links.
    fn push_slot(&mut self) {
        self.parents.push(None);
        self.children.push(Vec::new());
    }
}

impl Components {
    /// A reused slot's components: none.
    fn reset_slot(&mut self, u: usize) {
        self.transforms[u] = None;
        self.rig_of[u] = NONE;
        self.meshes[u] = None;
        self.sockets[u] = None;
        self.animations[u] = None;
        self.morphs[u] = None;
        self.particles[u] = None;
        self.crowds[u] = None;
    }

    /// A new slot's components: none.
    fn push_slot(&mut self) {
        self.transforms.push(None);
        self.rig_of.push(NONE);
        self.meshes.push(None);
        self.sockets.push(None);
        self.animations.push(None);
        self.morphs.push(None);
        self.particles.push(None);
        self.crowds.push(None);
    }
}

impl FrameState {
    /// A reused slot's derived transforms: identity.
    fn reset_slot(&mut self, u: usize) {
        self.locals[u] = Transform::IDENTITY;
        self.worlds[u] = Mat4::IDENTITY;
    }

    /// A new slot's derived transforms: identity.
    fn push_slot(&mut self) {
        self.locals.push(Transform::IDENTITY);
        self.worlds.push(Mat4::IDENTITY);
    }
}

fn path_of(names: &[String], parents: &[Option<Entity>], index: u32) -> String {
    let mut parts = vec![names[index as usize].as_str()];
    let mut p = parents[index as usize];
    while let Some(e) = p {
        parts.push(names[e.index as usize].as_str());
        p = parents[e.index as usize];
    }
    parts.reverse();
    parts.join("/")
}

impl World {
    /// An empty world.
    pub fn new() -> Self {
        Self::default()
    }

    /// The scene's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Sets the scene's name.
    pub fn set_name(&mut self, name: impl Into<String>) {
        self.name = name.into();
    }

    /// The load epoch (bumped by [`World::load`] and [`World::clear`]).
    pub fn epoch(&self) -> u64 {
        self.frame_state.epoch
    }

    // ---------------------------------------------------------------- entities

    /// Spawns an entity named `name` at the root (no Transform yet).
    pub fn spawn(&mut self, name: impl Into<String>) -> Entity {
        let name = name.into();
        let index = match self.table.free.pop() {
            Some(i) => {
                let u = i as usize;
                self.table.alive[u] = true;
                self.table.names[u] = name;
                self.hierarchy.reset_slot(u);
                self.components.reset_slot(u);
                self.frame_state.reset_slot(u);
                i
            }
            None => {
                self.table.generations.push(0);
                self.table.alive.push(true);
                self.table.names.push(name);
                self.hierarchy.push_slot();
                self.components.push_slot();
                self.frame_state.push_slot();
                self.table.generations.len() as u32 - 1
            }
        };
        self.hierarchy.order_dirty = true;
        let e = Entity { index, generation: self.table.generations[index as usize] };
        self.hierarchy.roots.push(e);
        e
    }

    /// Whether `e` is alive (its slot holds the same generation).
    pub fn is_alive(&self, e: Entity) -> bool {
        let i = e.index as usize;
        i < self.table.alive.len() && self.table.alive[i] && self.table.generations[i] == e.generation
    }

    fn check(&self, e: Entity) -> Result<usize, SceneError> {
        if self.is_alive(e) { Ok(e.index as usize) } else { Err(SceneError::Dead(e)) }
    }

    fn entity_at(&self, index: u32) -> Entity {
        Entity { index, generation: self.table.generations[index as usize] }
    }

    /// Despawns `e` and its whole subtree; their slots' generations are bumped.
    pub fn despawn(&mut self, e: Entity) -> Result<(), SceneError> {
        let i = self.check(e)?;
        match self.hierarchy.parents[i] {
            Some(p) => self.hierarchy.children[p.index as usize].retain(|c| *c != e),
            None => self.hierarchy.roots.retain(|c| *c != e),
        }
        let mut stack = vec![e];
        while let Some(x) = stack.pop() {
            let u = x.index as usize;
            stack.append(&mut self.hierarchy.children[u]);
            self.remove_rig(u);
            self.set_socket_slot(u, None);
            self.table.alive[u] = false;
            self.table.generations[u] = self.table.generations[u].wrapping_add(1);
            self.hierarchy.parents[u] = None;
            self.components.meshes[u] = None;
            self.components.animations[u] = None;
            self.components.morphs[u] = None;
            self.components.particles[u] = None;
            self.components.crowds[u] = None;
            self.components.transforms[u] = None;
            self.table.free.push(x.index);
        }
        self.hierarchy.order_dirty = true;
        Ok(())
    }

    /// Removes every entity (all ids become dead) and bumps the epoch.
    pub fn clear(&mut self) {
        for i in 0..self.table.alive.len() {
            if self.table.alive[i] {
                let e = self.entity_at(i as u32);
                let _ = self.despawn(e);
            }
        }
        // Slots are reused lowest first, so a scene loaded again takes the same slots (what is
        // derived from a slot, like a prop's colour or a pick id, does not shuffle on a reload).
        self.table.free.sort_unstable_by(|a, b| b.cmp(a));
        self.frame_state.epoch += 1;
        self.frame_state.events.clear();
        self.clip_refs.clear();
        self.frame_state.slots_dirty = true;
    }

    /// Every live entity, in slot order.
    pub fn entities(&self) -> impl Iterator<Item = Entity> + '_ {
        (0..self.table.alive.len() as u32)
            .filter(|&i| self.table.alive[i as usize])
            .map(|i| self.entity_at(i))
    }

    /// The entity's name.
    pub fn name_of(&self, e: Entity) -> Option<&str> {
        self.check(e).ok().map(|i| self.table.names[i].as_str())
    }

    /// The entity's path (`Root/Child/Grandchild`).
    pub fn path(&self, e: Entity) -> Option<String> {
        self.check(e).ok().map(|i| path_of(&self.table.names, &self.hierarchy.parents, i as u32))
    }

    /// The entity at `path` (names joined by `/`).
    pub fn find(&self, path: &str) -> Option<Entity> {
        find_path(&self.table.names, &self.hierarchy.children, &self.hierarchy.roots, path)
    }

    /// The entity's parent.
    pub fn parent(&self, e: Entity) -> Option<Entity> {
        self.check(e).ok().and_then(|i| self.hierarchy.parents[i])
    }

    /// The root entities, in order.
    pub fn roots(&self) -> &[Entity] {
        &self.hierarchy.roots
    }

    /// The entity's children, in order.
    pub fn children(&self, e: Entity) -> &[Entity] {
        self.check(e).map_or(&[], |i| &self.hierarchy.children[i])
    }

    /// Moves `child` under `parent` (or to the root). Refuses a cycle.
    pub fn set_parent(&mut self, child: Entity, parent: Option<Entity>) -> Result<(), SceneError> {
        let ci = self.check(child)?;
        if let Some(p) = parent {
            self.check(p)?;
            let mut a = Some(p);
            while let Some(x) = a {
                if x == child {
                    return Err(SceneError::Cycle {
                        child: path_of(&self.table.names, &self.hierarchy.parents, child.index),
                        parent: path_of(&self.table.names, &self.hierarchy.parents, p.index),
                    });
                }
                a = self.hierarchy.parents[x.index as usize];
            }
        }
        match self.hierarchy.parents[ci] {
            Some(old) => self.hierarchy.children[old.index as usize].retain(|c| *c != child),
            None => self.hierarchy.roots.retain(|c| *c != child),
        }
        self.hierarchy.parents[ci] = parent;
        match parent {
            Some(p) => self.hierarchy.children[p.index as usize].push(child),
            None => self.hierarchy.roots.push(child),
        }
        self.hierarchy.order_dirty = true;
        Ok(())
    }

    // ---------------------------------------------------------------- components

    /// The authored local transform (`None`: no Transform component).
    pub fn transform(&self, e: Entity) -> Option<Transform> {
        self.check(e).ok().and_then(|i| self.components.transforms[i])
    }

    /// Sets (or removes) the authored local transform.
    pub fn set_transform(&mut self, e: Entity, t: Option<Transform>) -> Result<(), SceneError> {
        let i = self.check(e)?;
        self.components.transforms[i] = t;
        Ok(())
    }

    /// The local transform the last transform stage used (authored, animated or socket-placed).
    pub fn local(&self, e: Entity) -> Option<Transform> {
        self.check(e).ok().map(|i| self.frame_state.locals[i])
    }

    /// The world matrix resolved by the last transform stage.
    pub fn world_matrix(&self, e: Entity) -> Option<Mat4> {
        self.check(e).ok().map(|i| self.frame_state.worlds[i])
    }

    /// Puts an Animator on `e`, making it a rig (replacing any animator it had).
    pub fn set_animator(&mut self, e: Entity, component: AnimatorComponent) -> Result<(), SceneError> {
        let i = self.check(e)?;
        self.remove_rig(i);
        self.components.rig_of[i] = self.components.rigs.len() as u32;
        self.components.rigs.push(RigEntry {
            entity: e,
            component,
            slot: RigSlot(0),
            state: PoseState::Unposed,
            clip_latch: FaultLatch::default(),
            target_latch: FaultLatch::default(),
        });
        self.frame_state.slots_dirty = true;
        Ok(())
    }

    /// Removes the Animator from `e`.
    pub fn remove_animator(&mut self, e: Entity) -> Result<(), SceneError> {
        let i = self.check(e)?;
        self.remove_rig(i);
        Ok(())
    }

    fn remove_rig(&mut self, i: usize) {
        let r = self.components.rig_of[i];
        if r == NONE {
            return;
        }
        self.components.rigs.swap_remove(r as usize);
        if let Some(moved) = self.components.rigs.get(r as usize) {
            self.components.rig_of[moved.entity.index as usize] = r;
        }
        self.components.rig_of[i] = NONE;
        self.frame_state.slots_dirty = true;
    }

    /// The Animator on `e`.
    pub fn animator(&self, e: Entity) -> Option<&Animator> {
        self.animator_component(e).map(|c| &c.animator)
    }

    /// The Animator on `e`, mutably (session control: play, fades, adjusts, speed).
    pub fn animator_mut(&mut self, e: Entity) -> Option<&mut Animator> {
        let i = self.check(e).ok()?;
        let r = self.components.rig_of[i];
        self.components.rigs.get_mut(r as usize).map(|r| &mut r.component.animator)
    }

    /// The Animator component on `e`.
    pub fn animator_component(&self, e: Entity) -> Option<&AnimatorComponent> {
        let i = self.check(e).ok()?;
        self.components.rigs.get(self.components.rig_of[i] as usize).map(|r| &r.component)
    }

    /// Every rig entity, in slot order.
    pub fn rigs(&self) -> impl Iterator<Item = Entity> + '_ {
        self.components.rigs.iter().map(|r| r.entity)
    }

    /// The pose `e`'s animator published for this world (none before its first evaluation after
    /// a load, or when its evaluation failed).
    pub fn rig_pose(&self, e: Entity) -> Option<RigPose<'_>> {
        let i = self.check(e).ok()?;
        let r = self.components.rigs.get(self.components.rig_of[i] as usize)?;
        (r.entity == e && r.state == PoseState::Posed { epoch: self.frame_state.epoch })
            .then(|| self.frame_state.poses.rig(r.slot))?
    }

    /// `rig`'s `model_from_bone` matrices with its current head at `time` (clamped to its clip),
    /// without touching the running animator (a copy is posed: allocates; for editor previews
    /// such as onion skins, not per-frame runtime work).
    pub fn pose_at(&self, rig: Entity, time: f32) -> Option<Vec<Mat4>> {
        self.pose_and_palette_at(rig, time).map(|(model, _)| model)
    }

    /// [`World::pose_at`] with the skinning palette of that pose (`model_from_bone *
    /// bone_from_bind` per bone, as the rig's meshes are skinned with): what a mesh onion skin
    /// draws with.
    pub fn pose_and_palette_at(&self, rig: Entity, time: f32) -> Option<(Vec<Mat4>, Vec<Mat4>)> {
        let mut a = self.animator(rig)?.clone();
        a.seek(time);
        a.advance(0.0);
        let mut buf = PoseBuffer::new();
        let slot = buf.add_rig(a.skeleton().bone_count());
        a.evaluate(buf.rig_mut(slot)?).ok()?;
        let pose = buf.rig(slot)?;
        Some((pose.model.to_vec(), pose.palette.to_vec()))
    }

    /// The packed pose buffer (all rigs' palettes, for one GPU upload).
    pub fn pose_buffer(&self) -> &PoseBuffer {
        &self.frame_state.poses
    }

    /// The mesh on `e`.
    pub fn mesh(&self, e: Entity) -> Option<&MeshComponent> {
        self.check(e).ok().and_then(|i| self.components.meshes[i].as_ref())
    }

    /// Sets (or removes) the mesh on `e`.
    pub fn set_mesh(&mut self, e: Entity, mesh: Option<MeshComponent>) -> Result<(), SceneError> {
        let i = self.check(e)?;
        self.components.meshes[i] = mesh;
        Ok(())
    }

    /// The socket on `e`.
    pub fn socket(&self, e: Entity) -> Option<&BoneSocket> {
        self.check(e).ok().and_then(|i| self.components.sockets[i].as_ref())
    }

    /// The socket on `e`, mutably (renaming its bone re-resolves it on the next frame).
    pub fn socket_mut(&mut self, e: Entity) -> Option<&mut BoneSocket> {
        self.check(e).ok().and_then(|i| self.components.sockets[i].as_mut())
    }

    /// Sets (or removes) the socket on `e`.
    pub fn set_socket(&mut self, e: Entity, socket: Option<BoneSocket>) -> Result<(), SceneError> {
        let i = self.check(e)?;
        self.set_socket_slot(i, socket);
        Ok(())
    }

    fn set_socket_slot(&mut self, i: usize, socket: Option<BoneSocket>) {
        let had = self.components.sockets[i].is_some();
        let has = socket.is_some();
        self.components.sockets[i] = socket;
        if had && !has {
            self.components.socket_list.retain(|&s| s as usize != i);
        } else if has && !had {
            self.components.socket_list.push(i as u32);
        }
    }

    /// The property animation on `e`, with its session player.
    pub fn animation(&self, e: Entity) -> Option<(&PropertyAnimation, &PropertyPlayer)> {
        self.check(e)
            .ok()
            .and_then(|i| self.components.animations[i].as_ref())
            .map(|p| (&p.animation, &p.player))
    }

    /// Sets (or removes) the property animation on `e` (its player starts fresh).
    pub fn set_animation(
        &mut self,
        e: Entity,
        animation: Option<PropertyAnimation>,
    ) -> Result<(), SceneError> {
        let i = self.check(e)?;
        self.components.animations[i] =
            animation.map(|animation| PropertyEntry { animation, player: PropertyPlayer::default() });
        Ok(())
    }

    /// The default morph weights on `e`.
    pub fn morph_weights(&self, e: Entity) -> Option<&[f32]> {
        self.check(e).ok().and_then(|i| self.components.morphs[i].as_deref())
    }

    /// Sets (or removes) the default morph weights on `e`.
    pub fn set_morph_weights(&mut self, e: Entity, weights: Option<Vec<f32>>) -> Result<(), SceneError> {
        let i = self.check(e)?;
        self.components.morphs[i] = weights;
        Ok(())
    }

    /// The particle cloud on `e` (its authored form and the playing cloud).
    pub fn particle_cloud(
        &self,
        e: Entity,
    ) -> Option<(&ParticleCloudDesc, &crate::particles::ParticleCloud)> {
        self.check(e).ok().and_then(|i| self.components.particles[i].as_ref()).map(|c| (&c.desc, &c.cloud))
    }

    /// Every entity with a particle cloud.
    pub fn particle_clouds(&self) -> impl Iterator<Item = Entity> + '_ {
        self.having(&self.components.particles)
    }

    /// The entities whose slot in a component column is filled.
    fn having<'a, T>(&'a self, column: &'a [Option<T>]) -> impl Iterator<Item = Entity> + 'a {
        column.iter().enumerate().filter(|(_, c)| c.is_some()).map(|(i, _)| self.entity_at(i as u32))
    }

    /// Sets (or removes) the particle cloud on `e`: scattered over `mesh` (which must be skinned)
    /// and bound to its skeleton now; it plays once a rig with that skeleton is at or above `e`.
    pub fn set_particle_cloud(
        &mut self,
        e: Entity,
        cloud: Option<(ParticleCloudDesc, Arc<MeshAsset>)>,
    ) -> Result<(), SceneError> {
        let i = self.check(e)?;
        self.components.particles[i] = match cloud {
            None => None,
            Some((desc, mesh)) => {
                let fault = |message: String| SceneError::Reference {
                    entity: self.path(e).unwrap_or_default(),
                    field: "particles",
                    message,
                };
                let Some(skeleton) = mesh.skeleton.clone() else {
                    return Err(fault(format!(
                        "mesh {:?} is not skinned: a cloud needs a skeleton",
                        desc.mesh
                    )));
                };
                let cloud = crate::particles::ParticleCloud::from_mesh(
                    &mesh.mesh,
                    &mesh.joint_to_bone,
                    &skeleton,
                    &desc.settings,
                )
                .map_err(|err| fault(err.to_string()))?;
                Some(CloudEntry { desc, skeleton, cloud, latches: Default::default() })
            }
        };
        Ok(())
    }

    /// The crowd on `e`.
    pub fn crowd(&self, e: Entity) -> Option<&Crowd> {
        self.check(e).ok().and_then(|i| self.components.crowds[i].as_ref())
    }

    /// Every entity with a crowd.
    pub fn crowds(&self) -> impl Iterator<Item = Entity> + '_ {
        self.having(&self.components.crowds)
    }

    /// Sets (or removes) the crowd on `e`, baking its clips now: `assets` resolves its rig, mesh
    /// and clips. Fails naming the field at fault (a mesh that is not skinned or not on the rig,
    /// a clip for another rig, frames or counts out of range).
    pub fn set_crowd(
        &mut self,
        e: Entity,
        desc: Option<CrowdDesc>,
        assets: &dyn AssetSource,
    ) -> Result<(), SceneError> {
        let i = self.check(e)?;
        let Some(desc) = desc else {
            self.components.crowds[i] = None;
            return Ok(());
        };
        let path = self.path(e).unwrap_or_default();
        let fault = |field: &'static str, message: String| SceneError::Reference {
            entity: path.clone(),
            field,
            message,
        };
        if desc.count > crate::crowd::MAX_INSTANCES {
            return Err(fault(
                "crowd.count",
                format!("{} instances; at most {}", desc.count, crate::crowd::MAX_INSTANCES),
            ));
        }
        let skeleton = assets.skeleton(&desc.rig).map_err(|m| fault("crowd.rig", m))?;
        let mesh = assets.mesh(&desc.mesh).map_err(|m| fault("crowd.mesh", m))?;
        match &mesh.skeleton {
            None => return Err(fault("crowd.mesh", format!("mesh {:?} is not skinned", desc.mesh))),
            Some(m) if !m.same_rig(&skeleton) => {
                return Err(fault(
                    "crowd.mesh",
                    format!(
                        "mesh {:?} is skinned to skeleton {:?}, not the rig's ({:?})",
                        desc.mesh, m.name, skeleton.name
                    ),
                ));
            }
            _ => {}
        }
        let mut clips = Vec::with_capacity(desc.clips.len());
        for c in &desc.clips {
            clips.push(assets.clip(c, &skeleton).map_err(|m| fault("crowd.clips", m))?);
        }
        let refs: Vec<&Clip> = clips.iter().map(|c| &**c).collect();
        let baked = crate::crowd::BakeJob { skeleton: &skeleton, clips: &refs, frames: desc.frames }
            .run()
            .map_err(|err| fault("crowd.clips", err.to_string()))?;
        let placements = crate::crowd::layout::place(
            desc.count,
            baked.clips.len() as u32,
            desc.layout,
            desc.speed,
            desc.seed,
        );
        let version = self.components.crowds[i].as_ref().map_or(0, |c| c.version) + 1;
        self.components.crowds[i] =
            Some(Crowd { desc, mesh, baked: Arc::new(baked), placements, time: 0.0, version });
        Ok(())
    }

    /// Poses every particle cloud from the nearest rig at or above it (placed by the rig's world
    /// matrix) and steps its springs `ticks` times; faults (no rig, another skeleton) are latched.
    fn update_particles(&mut self, ticks: u32, tick_seconds: f32) {
        let World {
            table: EntityTable { names, generations, .. },
            hierarchy: Hierarchy { parents, .. },
            components: Components { particles, rig_of, rigs, .. },
            frame_state: FrameState { poses, worlds, faults, epoch, .. },
            ..
        } = self;
        for (i, slot) in particles.iter_mut().enumerate() {
            let Some(c) = slot.as_mut() else { continue };
            let rig = rig_at_or_above(i, generations, rig_of, rigs, parents);
            let other = rig.is_some_and(|r| {
                let rs = r.component.animator.skeleton();
                !c.skeleton.same_rig(rs)
            });
            let path = || path_of(names, parents, i as u32);
            c.latches[0].update(rig.is_none(), faults, || {
                format!("particle cloud {}: no Animator at or above it drives it", path())
            });
            c.latches[1].update(other, faults, || {
                format!(
                    "particle cloud {}: its mesh's skeleton {:?} is not its rig's; it stays where it is",
                    path(),
                    c.skeleton.name
                )
            });
            let Some(r) = rig.filter(|_| !other) else { continue };
            if !matches!(r.state, PoseState::Posed { epoch: e } if e == *epoch) {
                continue;
            }
            let Some(pose) = poses.rig(r.slot) else { continue };
            let world = worlds[r.entity.index as usize];
            let moved =
                c.cloud.pose(world, pose.model, &c.skeleton).and_then(|()| c.cloud.step(ticks, tick_seconds));
            if let Err(e) = moved {
                log::debug!("particle cloud {}: {e}", path());
            }
        }
    }

    // ---------------------------------------------------------------- frame

    /// The events published by the last frame.
    pub fn events(&self) -> &[SceneEvent] {
        &self.frame_state.events
    }

    /// Every fault raised so far.
    pub fn faults(&self) -> &FaultLog {
        &self.frame_state.faults
    }

    /// Socket bone lookups made so far (a memoised socket makes none).
    #[doc(hidden)]
    pub fn bone_lookups(&self) -> u64 {
        self.frame_state.lookups
    }

    fn rebuild_slots(&mut self) {
        self.frame_state.poses.clear();
        for r in &mut self.components.rigs {
            r.slot = self.frame_state.poses.add_rig(r.component.animator.skeleton().bone_count());
            r.state = PoseState::Unposed;
        }
        self.frame_state.slots_dirty = false;
    }

    fn rebuild_order(&mut self) {
        self.hierarchy.order.clear();
        self.hierarchy.stack.clear();
        self.hierarchy.stack.extend(self.hierarchy.roots.iter().rev().map(|r| r.index));
        while let Some(i) = self.hierarchy.stack.pop() {
            self.hierarchy.order.push(i);
            for c in self.hierarchy.children[i as usize].iter().rev() {
                self.hierarchy.stack.push(c.index);
            }
        }
        self.hierarchy.order_dirty = false;
    }

    /// Runs one frame: `ticks` simulation ticks of `tick_seconds` (0 ticks: a paused frame that
    /// recomposes a zero-length step), evaluation, event publication and the transform stage.
    pub fn frame(&mut self, ticks: u32, tick_seconds: f32) {
        self.frame_state.events.clear();
        if self.frame_state.slots_dirty {
            self.rebuild_slots();
        }
        // 1. Simulation.
        if ticks == 0 {
            for r in &mut self.components.rigs {
                r.component.animator.advance(0.0);
            }
        } else {
            for _ in 0..ticks {
                if self.components.rigs.len() > 1 {
                    self.components.rigs.par_iter_mut().for_each(|r| {
                        r.component.animator.advance(tick_seconds);
                    });
                } else {
                    for r in &mut self.components.rigs {
                        r.component.animator.advance(tick_seconds);
                    }
                }
                for p in self.components.animations.iter_mut().flatten() {
                    p.player.advance(&p.animation, tick_seconds, 1.0);
                }
            }
        }
        // Target bindings: bound entities' positions (this frame's, sockets where the last frame
        // placed them) into their rigs' graph parameters.
        if self.components.rigs.iter().any(|r| !r.component.targets.is_empty()) {
            self.authored_locals(true);
            self.resolve_worlds();
            self.bind_targets();
        }
        // 2. Evaluation (parallel), then events (serial).
        let epoch = self.frame_state.epoch;
        let eval = |r: &mut RigEntry, pose: RigPoseMut<'_>| {
            r.state = match r.component.animator.evaluate(pose) {
                Ok(()) => PoseState::Posed { epoch },
                Err(e) => {
                    log::debug!("rig {:?}: evaluation failed: {e}", r.entity);
                    PoseState::Failed { epoch }
                }
            };
        };
        if self.components.rigs.len() == 1 {
            let r = &mut self.components.rigs[0];
            if let Some(pose) = self.frame_state.poses.rig_mut(r.slot) {
                eval(r, pose);
            }
        } else if !self.components.rigs.is_empty() {
            // Rig `i` owns slot `i`; the split allocates nothing.
            self.frame_state.poses.par_for_each_rig_mut(&mut self.components.rigs, eval);
        }
        let World {
            table: EntityTable { names, .. },
            hierarchy: Hierarchy { parents, .. },
            components: Components { rigs, .. },
            frame_state: FrameState { events, faults, .. },
            ..
        } = self;
        for r in rigs.iter_mut() {
            let entity = r.entity;
            for ev in r.component.animator.deliver_events() {
                events.push(SceneEvent { entity, event: ev.clone() });
            }
            let fault = r.component.animator.current_fault();
            r.clip_latch.update(fault.is_some(), faults, || {
                format!(
                    "rig {}: {}; the bind pose stands",
                    path_of(names, parents, entity.index),
                    fault.map(|f| f.to_string()).unwrap_or_default()
                )
            });
        }
        // 3. Transform stage.
        self.transform_stage();
        // 5. Particle clouds.
        if self.components.particles.iter().any(Option::is_some) {
            self.update_particles(ticks, tick_seconds);
        }
        // 6. Crowds play on their own clock (the vertex shader reads it).
        for c in self.components.crowds.iter_mut().flatten() {
            c.time += ticks as f32 * tick_seconds;
        }
    }

    /// Sets each rig's bound graph parameters to its target entities' positions in the rig's
    /// model space, from world matrices resolved this frame before the rigs are evaluated. A
    /// binding whose entity is gone, or whose graph has no parameter for it, sets nothing and is
    /// named once per occurrence gap (the first such binding of the rig).
    fn bind_targets(&mut self) {
        let World {
            table: EntityTable { names, .. },
            hierarchy: Hierarchy { parents, children, roots, .. },
            components: Components { rigs, .. },
            frame_state: FrameState { worlds, faults, .. },
            ..
        } = self;
        for r in rigs.iter_mut() {
            if r.component.targets.is_empty() {
                continue;
            }
            let rig_from_world = worlds[r.entity.index as usize].inverse();
            // The first binding that cannot be applied, and whether for its parameter (else
            // for its entity).
            let mut missing: Option<(&BoundTarget, bool)> = None;
            for t in &r.component.targets {
                let Some(e) = find_path(names, children, roots, &t.binding.entity) else {
                    missing.get_or_insert((t, false));
                    continue;
                };
                let p = rig_from_world.transform_point3(worlds[e.index as usize].w_axis.truncate());
                let Some(g) = r.component.animator.current_graph_mut() else { continue };
                let Some(slots) = g.program().target_slots(&t.binding.parameter, &t.parameters) else {
                    missing.get_or_insert((t, true));
                    continue;
                };
                if !p.is_finite() {
                    continue;
                }
                match slots {
                    TargetSlots::Vector(i) => {
                        g.set_parameter(i, ParamValue::Vec3(p));
                    }
                    TargetSlots::Floats(each) => {
                        for (i, v) in each.into_iter().zip(p.to_array()) {
                            g.set_parameter(i, ParamValue::Float(v));
                        }
                    }
                }
            }
            let entity = r.entity;
            r.target_latch.update(missing.is_some(), faults, || {
                let rig = path_of(names, parents, entity.index);
                match missing {
                    Some((t, true)) => format!(
                        "rig {rig}: its graph has no vector parameter {:?} (nor floats {:?}) for target entity {:?} to set",
                        t.binding.parameter, t.parameters, t.binding.entity
                    ),
                    Some((t, false)) => format!(
                        "rig {rig}: target entity {:?} is not in the scene; its parameters keep their values",
                        t.binding.entity
                    ),
                    None => String::new(),
                }
            });
        }
    }

    /// The transform stage alone: local transforms, sockets on their bones, world matrices,
    /// mesh binding checks. [`World::frame`] runs it after the simulation.
    pub fn transform_stage(&mut self) {
        self.authored_locals(false);
        if !self.components.socket_list.is_empty() {
            self.place_sockets();
        }
        self.resolve_worlds();
        self.check_meshes();
    }

    /// Local transforms as authored or property-animated (sockets not placed yet). With
    /// `keep_sockets`, a socket entity keeps the local its last placement gave it (the bone's
    /// pose of the last frame): what target bindings read before this frame's poses exist.
    fn authored_locals(&mut self, keep_sockets: bool) {
        if self.hierarchy.order_dirty {
            self.rebuild_order();
        }
        for &i in &self.hierarchy.order {
            let i = i as usize;
            if keep_sockets && self.components.sockets[i].is_some() {
                continue;
            }
            let base = self.components.transforms[i].unwrap_or(Transform::IDENTITY);
            self.frame_state.locals[i] = match &self.components.animations[i] {
                Some(p) => p.animation.sample(p.player.time, base),
                None => base,
            };
        }
    }

    /// World matrices from the locals, parents first (a rig's root motion after its own).
    fn resolve_worlds(&mut self) {
        for &i in &self.hierarchy.order {
            let i = i as usize;
            let mut local = self.frame_state.locals[i].to_mat4();
            // A rig's root motion carries it (and everything under it) after its own transform.
            if let Some(r) = self.components.rigs.get(self.components.rig_of[i] as usize)
                && !r.component.animator.root_motion().is_identity()
            {
                local *= r.component.animator.root_motion().offset().to_mat4();
            }
            self.frame_state.worlds[i] = match self.hierarchy.parents[i] {
                Some(p) => self.frame_state.worlds[p.index as usize] * local,
                None => local,
            };
        }
    }

    fn place_sockets(&mut self) {
        let World {
            table: EntityTable { names, .. },
            hierarchy: Hierarchy { parents, .. },
            components: Components { socket_list, sockets, transforms, rig_of, rigs, .. },
            frame_state: FrameState { poses, locals, faults, epoch, lookups, .. },
            ..
        } = self;
        for &si in socket_list.iter() {
            let i = si as usize;
            let Some(sock) = sockets[i].as_mut() else { continue };
            let placed: Result<Transform, SocketFault> = 'place: {
                if transforms[i].is_none() {
                    break 'place Err(SocketFault::NoTransform);
                }
                let Some(parent) = parents[i] else { break 'place Err(SocketFault::NotRigChild) };
                let Some(rig) = rigs.get(rig_of[parent.index as usize] as usize) else {
                    break 'place Err(SocketFault::NotRigChild);
                };
                match rig.state {
                    PoseState::Posed { epoch: e } if e == *epoch => {}
                    PoseState::Failed { epoch: e } if e == *epoch => {
                        break 'place Err(SocketFault::RigPosedNothing);
                    }
                    _ => break 'place Err(SocketFault::NoPose),
                }
                let skeleton = rig.component.animator.skeleton();
                if skeleton.bone_count() == 0 {
                    break 'place Err(SocketFault::NoBones);
                }
                let (bone, looked) = sock.resolve(rig.entity, skeleton);
                *lookups += looked as u64;
                let Some(bone) = bone else { break 'place Err(SocketFault::UnknownBone) };
                match poses.rig(rig.slot) {
                    Some(pose) if (bone as usize) < pose.model.len() => {
                        Ok(socket_local(&pose.model[bone as usize], &sock.offset))
                    }
                    _ => Err(SocketFault::NoPose),
                }
            };
            for (k, kind) in SocketFault::ALL.into_iter().enumerate() {
                let bone = &sock.bone;
                sock.latches[k].update(placed == Err(kind), faults, || {
                    format!("socket {} (bone {bone:?}): {}", path_of(names, parents, si), kind.describe())
                });
            }
            if let Ok(t) = placed {
                locals[i] = t;
            }
        }
    }

    fn check_meshes(&mut self) {
        let World {
            table: EntityTable { names, generations, .. },
            hierarchy: Hierarchy { parents, .. },
            components: Components { meshes, rig_of, rigs, .. },
            frame_state: FrameState { worlds, faults, .. },
            ..
        } = self;
        for i in 0..meshes.len() {
            let Some(m) = meshes[i].as_mut() else { continue };
            let rig = rig_at_or_above(i, generations, rig_of, rigs, parents);
            m.rig = rig.map(|r| r.entity);
            let skin = m.asset.skeleton.as_ref();
            let no_rig = skin.is_some() && rig.is_none();
            let other = match (skin, rig) {
                (Some(s), Some(r)) => {
                    let rs = r.component.animator.skeleton();
                    !s.same_rig(rs)
                }
                _ => false,
            };
            let off = match (skin, rig) {
                (Some(_), Some(r)) => {
                    let ri = r.entity.index as usize;
                    ri != i && !worlds[i].abs_diff_eq(worlds[ri], 1e-4)
                }
                _ => false,
            };
            let rig_sk = rig.map(|r| r.component.animator.skeleton().name.as_str()).unwrap_or("");
            let mesh_sk = skin.map(|s| s.name.as_str()).unwrap_or("");
            let path = || path_of(names, parents, i as u32);
            m.latches[0].update(no_rig, faults, || {
                format!("skinned mesh {}: no Animator at or above it drives it", path())
            });
            m.latches[1].update(other, faults, || {
                format!("skinned mesh {}: its skeleton {mesh_sk:?} is not its rig's ({rig_sk:?})", path())
            });
            m.latches[2].update(off, faults, || {
                format!(
                    "skinned mesh {}: it sits off its rig's origin (skinning ignores its own transform)",
                    path()
                )
            });
        }
    }

    // ---------------------------------------------------------------- authored state

    /// Builds a world from an authored scene, resolving references through `assets`.
    pub fn instantiate(desc: &SceneDesc, assets: &dyn AssetSource) -> Result<World, SceneError> {
        let mut w = World::new();
        w.load(desc, assets)?;
        Ok(w)
    }

    /// Replaces this world's contents with `desc` and bumps the epoch (the next frame recomposes
    /// every rig; no old slice dresses a new entity). On error the world is left empty.
    pub fn load(&mut self, desc: &SceneDesc, assets: &dyn AssetSource) -> Result<(), SceneError> {
        self.load_with(desc, assets, None)
    }

    /// Like [`World::load`], but what cannot play shows its bind pose: a rig whose clip or graph
    /// does not resolve (missing, for another rig, not compiling) keeps its entity, its bones and
    /// everything under it, with an Animator playing nothing (the bind pose); a missing rig
    /// skeleton leaves the entity without an Animator, a missing mesh, particle mesh or crowd asset
    /// leaves that component off. Each such fault is returned (a [`SceneError::Reference`] naming
    /// the entity and field) and the rest of the scene loads. Only faults of the scene's shape
    /// (two siblings sharing a name) refuse it, leaving the world empty, as [`World::load`] does.
    pub fn load_lenient(
        &mut self,
        desc: &SceneDesc,
        assets: &dyn AssetSource,
    ) -> Result<Vec<SceneError>, SceneError> {
        let mut faults = Vec::new();
        self.load_with(desc, assets, Some(&mut faults))?;
        Ok(faults)
    }

    /// [`World::load`] (`faults` is `None`) or [`World::load_lenient`] (reference faults go to
    /// `faults` and the entity loads without what they name).
    fn load_with(
        &mut self,
        desc: &SceneDesc,
        assets: &dyn AssetSource,
        mut faults: Option<&mut Vec<SceneError>>,
    ) -> Result<(), SceneError> {
        self.clear();
        self.name = desc.name.clone();
        for (reference, clip) in assets.all_clips() {
            self.register_clip(clip, reference);
        }
        check_sibling_names(desc)?;
        check_totals(desc, assets)?;
        let mut stack: Vec<(&EntityDesc, Option<Entity>)> =
            desc.entities.iter().rev().map(|d| (d, None)).collect();
        while let Some((d, parent)) = stack.pop() {
            if let Err(e) = self.spawn_desc(d, parent, assets, &mut stack, &mut faults) {
                self.clear();
                return Err(e);
            }
        }
        Ok(())
    }

    fn spawn_desc<'a>(
        &mut self,
        d: &'a EntityDesc,
        parent: Option<Entity>,
        assets: &dyn AssetSource,
        stack: &mut Vec<(&'a EntityDesc, Option<Entity>)>,
        faults: &mut Option<&mut Vec<SceneError>>,
    ) -> Result<(), SceneError> {
        // Sibling names were checked for the whole scene before spawning (`check_sibling_names`).
        let e = self.spawn(d.name.clone());
        if let Some(p) = parent {
            // A fresh entity cannot close a cycle: move it from the roots (it is the last one)
            // under its parent directly, in constant time.
            self.check(p)?;
            self.hierarchy.roots.pop();
            self.hierarchy.parents[e.index as usize] = Some(p);
            self.hierarchy.children[p.index as usize].push(e);
        }
        // The path names faults only; an entity that can have none skips it (a deep chain of
        // plain entities would otherwise build a path per level: quadratic).
        let may_fault = d.animator.is_some()
            || matches!(d.mesh, Some(MeshDesc::Asset(_)))
            || d.particles.is_some()
            || d.crowd.is_some();
        let path = if may_fault { self.path(e).unwrap_or_default() } else { String::new() };
        self.set_transform(e, d.transform)?;
        if let Some(a) = &d.animator
            && let Some(skeleton) = soft(faults, &path, "animator.rig", assets.skeleton(&a.rig))?
        {
            let graph = match &a.graph {
                Some(g) => soft(faults, &path, "animator.graph", assets.graph(g, &skeleton))?,
                None => None,
            };
            // A graph that cannot play leaves the bind pose, not the clip under it.
            let clip = match &a.clip {
                Some(_) if a.graph.is_some() && graph.is_none() => None,
                Some(c) => {
                    soft(faults, &path, "animator.clip", assets.clip(c, &skeleton))?.map(|mut clip| {
                        if let Some(l) = a.looping
                            && l != clip.looping
                        {
                            let mut looped = (*clip).clone();
                            looped.looping = l;
                            clip = Arc::new(looped);
                        }
                        self.register_clip(clip.clone(), c.clone());
                        clip
                    })
                }
                None => None,
            };
            let root_motion = match &a.root_motion {
                Some(r) => soft(faults, &path, "animator.root_motion.bone", root_motion_of(r, &skeleton))?,
                None => None,
            };
            let settings =
                AnimatorSettings { clip, graph, speed: a.speed, play_on_start: a.play_on_start, root_motion };
            let animator = Animator::new(skeleton, settings);
            let component = AnimatorComponent {
                rig: a.rig.clone(),
                clip: a.clip.clone(),
                graph: a.graph.clone(),
                looping: a.looping,
                root_motion: a.root_motion.clone(),
                targets: a.targets.iter().map(BoundTarget::from).collect(),
                animator,
            };
            self.set_animator(e, component)?;
        }
        if let Some(m) = &d.mesh {
            let asset = match m {
                MeshDesc::Asset(r) => soft(faults, &path, "mesh", assets.mesh(r))?,
                MeshDesc::Box { half_extents } => Some(Arc::new(MeshAsset::cuboid(&d.name, *half_extents))),
            };
            if let Some(asset) = asset {
                self.set_mesh(e, Some(MeshComponent::new(m.clone(), asset)))?;
            }
        }
        if let Some(s) = &d.socket {
            self.set_socket(e, Some(BoneSocket::new(s.bone.clone(), s.offset)))?;
        }
        self.set_animation(e, d.animation.clone())?;
        self.set_morph_weights(e, d.morph_weights.clone())?;
        if let Some(p) = &d.particles
            && let Some(mesh) = soft(faults, &path, "particles.mesh", assets.mesh(&p.mesh))?
        {
            self.set_particle_cloud(e, Some((p.clone(), mesh)))?;
        }
        if d.crowd.is_some() {
            match (self.set_crowd(e, d.crowd.clone(), assets), faults.as_deref_mut()) {
                (Err(f @ SceneError::Reference { .. }), Some(list)) => list.push(f),
                (r, _) => r?,
            }
        }
        stack.extend(d.children.iter().rev().map(|c| (c, Some(e))));
        Ok(())
    }

    /// Follows an edit of the clips at `references` without rebuilding the world: every rig whose
    /// Animator plays one of them as its authored clip takes the clip as `assets` resolves it now
    /// (with the entity's looping override), keeping its playhead, play state, adjusts and
    /// temporary pose ([`Animator::rebind_clip`]); the clips' saved references follow. Returns
    /// how many rigs were re-bound.
    ///
    /// Refused, changing nothing, when a re-bind cannot stand for a rebuild: a rig plays a graph
    /// (its compiled program may sample the clips), a crowd baked one of them, a rig that should
    /// play one has no head (a fault a rebuild may clear), or one no longer resolves for its rig.
    pub fn rebind_clips(&mut self, references: &[String], assets: &dyn AssetSource) -> Result<usize, String> {
        let uses = |r: &Option<String>| r.as_ref().is_some_and(|r| references.contains(r));
        for c in self.components.crowds.iter().flatten() {
            if let Some(r) = c.desc.clips.iter().find(|r| references.contains(r)) {
                return Err(format!("a crowd baked clip {r}"));
            }
        }
        let mut plan: Vec<(usize, Arc<Clip>)> = Vec::new();
        for (i, rig) in self.components.rigs.iter().enumerate() {
            let c = &rig.component;
            if c.graph.is_some() {
                return Err(format!("rig {} plays graph {}", c.rig, c.graph.as_deref().unwrap_or_default()));
            }
            if !uses(&c.clip) {
                continue;
            }
            let reference = c.clip.as_deref().unwrap_or_default();
            if c.animator.settings().clip.is_none() {
                return Err(format!("a rig playing clip {reference} had no clip to play"));
            }
            let mut clip = assets.clip(reference, c.animator.skeleton())?;
            if let Some(l) = c.looping
                && l != clip.looping
            {
                let mut looped = (*clip).clone();
                looped.looping = l;
                clip = Arc::new(looped);
            }
            plan.push((i, clip));
        }
        self.clip_refs.retain(|_, (_, r)| !references.contains(r));
        for r in references {
            for clip in assets.clips_at(r) {
                self.register_clip(clip, r.clone());
            }
        }
        let n = plan.len();
        for (i, clip) in plan {
            let rig = &mut self.components.rigs[i];
            if let Some(r) = rig.component.clip.clone() {
                self.clip_refs.entry(Arc::as_ptr(&clip) as usize).or_insert_with(|| (clip.clone(), r));
            }
            rig.component.animator.rebind_clip(clip);
        }
        Ok(n)
    }

    /// Follows an edit of the skeleton files at `references` without rebuilding the world: every
    /// rig driven by one takes it as `assets` resolves it now, in place (its heads play on; a new
    /// bind pose shows on the next frame). Returns how many rigs were re-bound.
    ///
    /// Refused, changing nothing, when the skeleton's bones changed (names, order or parents:
    /// clips, graphs and sockets were bound to them) or a particle cloud or crowd of the world
    /// was bound to its old bind pose: instantiate the world again then.
    pub fn rebind_skeletons(
        &mut self,
        references: &[String],
        assets: &dyn AssetSource,
    ) -> Result<usize, String> {
        let clouds = self.components.particles.iter().any(Option::is_some);
        let crowds = self.components.crowds.iter().any(Option::is_some);
        let mut plan = Vec::new();
        for (i, rig) in self.components.rigs.iter().enumerate() {
            let c = &rig.component;
            if !references.contains(&c.rig) {
                continue;
            }
            if clouds || crowds {
                return Err(format!(
                    "skeleton {}: particle clouds and crowds were bound to its bind pose",
                    c.rig
                ));
            }
            let new = assets.skeleton(&c.rig)?;
            let old = c.animator.skeleton();
            if !old.same_rig(&new) || old.parents != new.parents {
                return Err(format!("skeleton {} changed its bones (names, order or parents)", c.rig));
            }
            plan.push((i, new));
        }
        let n = plan.len();
        for (i, skeleton) in plan {
            self.components.rigs[i].component.animator.rebind_skeleton(skeleton);
        }
        Ok(n)
    }

    /// Follows an edit of the graphs at `references` (or of a clip one of them plays: pass the
    /// graphs of the rigs that play it) without rebuilding the world: every rig whose Animator
    /// plays one of them compiles it anew as `assets` resolves it now and takes the program at
    /// the same time ([`Animator::rebind_graph`]). Returns how many rigs were re-bound.
    ///
    /// Refused, changing nothing, when a graph no longer compiles for a rig that plays it (the
    /// error names the rig and the graph's faults).
    pub fn rebind_graphs(
        &mut self,
        references: &[String],
        assets: &dyn AssetSource,
    ) -> Result<usize, String> {
        let mut plan = Vec::new();
        for (i, rig) in self.components.rigs.iter().enumerate() {
            let c = &rig.component;
            let Some(reference) = c.graph.as_ref().filter(|g| references.contains(g)) else { continue };
            if c.animator.current_graph().is_none() {
                continue;
            }
            let program = assets
                .graph(reference, c.animator.skeleton())
                .map_err(|e| format!("rig {} cannot play graph {reference}: {e}", c.rig))?;
            plan.push((i, program));
        }
        let n = plan.len();
        for (i, program) in plan {
            self.components.rigs[i].component.animator.rebind_graph(program);
        }
        Ok(n)
    }

    /// Registers the reference a clip is saved under (so a fade to it saves by that name).
    pub fn register_clip(&mut self, clip: Arc<Clip>, reference: impl Into<String>) {
        // Keyed by the clip's address (the Arc held beside it keeps the address taken).
        self.clip_refs.entry(Arc::as_ptr(&clip) as usize).or_insert_with(|| (clip, reference.into()));
    }

    /// The authored state of this world. Session state is never read: an animator saves the clip
    /// it plays (or is fading to), its speed and `play_on_start`, never its time, fade, adjusts or
    /// events; a socket's placed transform is derived and its authored one is saved.
    pub fn to_desc(&self) -> SceneDesc {
        fn build(w: &World, e: Entity) -> EntityDesc {
            let i = e.index as usize;
            let animator = w.animator_component(e).map(|c| {
                let a = &c.animator;
                let clip = a
                    .current_clip()
                    .and_then(|cur| w.clip_refs.get(&(Arc::as_ptr(cur) as usize)))
                    .map(|(_, r)| r.clone())
                    .or_else(|| c.clip.clone());
                // The authored override belongs to the authored clip; a clip faded to at run time
                // is saved with the looping its head plays with (when that is not its own).
                let looping = if clip == c.clip {
                    c.looping
                } else {
                    match (a.current_looping(), a.current_clip()) {
                        (Some(l), Some(k)) if l != k.looping => Some(l),
                        _ => None,
                    }
                };
                AnimatorDesc {
                    rig: c.rig.clone(),
                    clip,
                    graph: c.graph.clone(),
                    looping,
                    speed: a.settings().speed,
                    play_on_start: a.settings().play_on_start,
                    root_motion: c.root_motion.clone(),
                    targets: c.targets.iter().map(|t| t.binding.clone()).collect(),
                }
            });
            EntityDesc {
                name: w.table.names[i].clone(),
                transform: w.components.transforms[i],
                animator,
                mesh: w.components.meshes[i].as_ref().map(|m| m.desc.clone()),
                socket: w.components.sockets[i]
                    .as_ref()
                    .map(|s| SocketDesc { bone: s.bone.clone(), offset: s.offset }),
                animation: w.components.animations[i].as_ref().map(|p| p.animation.clone()),
                morph_weights: w.components.morphs[i].clone(),
                particles: w.components.particles[i].as_ref().map(|c| c.desc.clone()),
                crowd: w.components.crowds[i].as_ref().map(|c| c.desc.clone()),
                children: Vec::with_capacity(w.hierarchy.children[i].len()),
            }
        }
        // Iteratively (a scene may nest deeper than a recursion's stack): every entity in
        // parents-first order with its parent's position, built without children, then each
        // moved into its parent from the last one back (children arrive reversed).
        let mut order: Vec<(Entity, Option<usize>)> = Vec::new();
        let mut stack: Vec<(Entity, Option<usize>)> =
            self.hierarchy.roots.iter().rev().map(|e| (*e, None)).collect();
        while let Some((e, parent)) = stack.pop() {
            let at = order.len();
            order.push((e, parent));
            stack.extend(self.hierarchy.children[e.index as usize].iter().rev().map(|c| (*c, Some(at))));
        }
        let mut built: Vec<Option<EntityDesc>> = order.iter().map(|(e, _)| Some(build(self, *e))).collect();
        let mut entities = Vec::with_capacity(self.hierarchy.roots.len());
        for k in (0..order.len()).rev() {
            let Some(mut d) = built[k].take() else { continue };
            d.children.reverse();
            match order[k].1.and_then(|p| built[p].as_mut()) {
                Some(parent) => parent.children.push(d),
                None => entities.push(d),
            }
        }
        entities.reverse();
        SceneDesc { name: self.name.clone(), entities }
    }
}

/// The entity at `path` (names joined by `/` from a root), without allocating.
fn find_path(names: &[String], children: &[Vec<Entity>], roots: &[Entity], path: &str) -> Option<Entity> {
    let mut at: Option<Entity> = None;
    for part in path.split('/') {
        let among = match at {
            None => roots,
            Some(p) => &children[p.index as usize][..],
        };
        at = Some(among.iter().copied().find(|c| names[c.index as usize] == part)?);
    }
    at
}

/// The runtime root motion of `desc` on `skeleton` (its bone found by name).
fn root_motion_of(
    desc: &RootMotionDesc,
    skeleton: &Skeleton,
) -> Result<crate::root_motion::RootMotion, String> {
    let bone =
        skeleton.bone_names.iter().position(|n| *n == desc.bone).ok_or_else(|| {
            format!("root motion bone {:?} is not in skeleton {:?}", desc.bone, skeleton.name)
        })?;
    Ok(crate::root_motion::RootMotion { bone: bone as u16, axes: desc.axes, yaw: desc.yaw })
}

/// A reference that did not resolve (`r`'s error), for the entity at `path`: refused by
/// [`World::load`] (`faults` is `None`), set aside by [`World::load_lenient`] (the error joins
/// `faults` and the entity loads without what it names).
fn soft<T>(
    faults: &mut Option<&mut Vec<SceneError>>,
    path: &str,
    field: &'static str,
    r: Result<T, String>,
) -> Result<Option<T>, SceneError> {
    match (r, faults.as_deref_mut()) {
        (Ok(v), _) => Ok(Some(v)),
        (Err(message), None) => Err(SceneError::Reference { entity: path.to_owned(), field, message }),
        (Err(message), Some(list)) => {
            list.push(SceneError::Reference { entity: path.to_owned(), field, message });
            Ok(None)
        }
    }
}

/// The nearest Animator at or above entity slot `i` (the rig that drives its mesh or cloud).
fn rig_at_or_above<'a>(
    i: usize,
    generations: &[u32],
    rig_of: &[u32],
    rigs: &'a [RigEntry],
    parents: &[Option<Entity>],
) -> Option<&'a RigEntry> {
    let mut at = Some(Entity { index: i as u32, generation: generations[i] });
    while let Some(e) = at {
        let r = rig_of[e.index as usize];
        if r != NONE {
            return rigs.get(r as usize);
        }
        at = parents[e.index as usize];
    }
    None
}

/// Every sibling list of `desc` names each entity once (checked in one pass over the scene,
/// before anything is spawned): the first repeated name, by its path.
fn check_sibling_names(desc: &SceneDesc) -> Result<(), SceneError> {
    let mut stack: Vec<(&[EntityDesc], String)> = vec![(&desc.entities, String::new())];
    while let Some((list, parent)) = stack.pop() {
        let mut seen = std::collections::HashSet::with_capacity(list.len());
        for e in list {
            let path = if parent.is_empty() { e.name.clone() } else { format!("{parent}/{}", e.name) };
            if !seen.insert(e.name.as_str()) {
                return Err(SceneError::DuplicateName { entity: path });
            }
            if !e.children.is_empty() {
                stack.push((&e.children, path));
            }
        }
    }
    Ok(())
}
