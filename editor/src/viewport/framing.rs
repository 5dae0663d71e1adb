//! What F frames in the viewport: the box around what the selection shows, tight for
//! characters. A skinned mesh is skinned on the CPU at the pose on screen (its drawn bounds
//! are a union of per-bone boxes, loose enough to leave a character small in the view), a rig
//! adds its joints (so a rig that draws nothing, or nothing yet, still frames by its
//! skeleton), and everything else adds its drawn bounds (rigid meshes, crowds, particle clouds).
//!
//! Not here: the camera's fit (`super::camera::OrbitCamera::frame`), drawing.

use glam::Vec3;
use marrow_engine::render::FrameData;
use marrow_engine::render::world::{drawn_bounds_of, subtree};
use marrow_engine::scene::{Entity, World};
use marrow_engine::skinning::{Aabb, SkinningJob};

/// The world-space box around the posed joints of every rig at or below `roots` (`None` when
/// there is none, or none is posed yet).
pub fn skeleton_bounds(world: &World, roots: &[Entity]) -> Option<Aabb> {
    roots
        .iter()
        .flat_map(|r| subtree(world, *r))
        .filter_map(|e| Some((world.rig_pose(e)?, world.world_matrix(e)?)))
        .flat_map(|(pose, m)| pose.model.iter().map(move |b| m.transform_point3(b.w_axis.truncate())))
        .filter(|p| p.is_finite())
        .map(Aabb::point)
        .reduce(Aabb::union)
}

/// The world-space box of `e`'s skinned mesh at its rig's current pose, skinned on the CPU
/// (morph targets left out); `None` for a rigid mesh, an unposed rig or a mesh that does not
/// skin (a joint outside the rig).
pub fn skinned_bounds(world: &World, e: Entity) -> Option<Aabb> {
    let mesh = world.mesh(e)?;
    let rig = mesh.rig()?;
    let asset = &mesh.asset;
    asset.skeleton.as_ref()?;
    let (pose, rig_world) = (world.rig_pose(rig)?, world.world_matrix(rig)?);
    let mut out: Option<Aabb> = None;
    for prim in &asset.mesh.primitives {
        let Some(stream) = &prim.skin else { continue };
        let joints = stream.joints_to_bones(&asset.joint_to_bone);
        let mut positions = vec![[0.0f32; 3]; prim.positions.len()];
        let job = SkinningJob {
            palette: pose.palette,
            joints: &joints,
            weights: &stream.weights,
            positions: &prim.positions,
            normals: &[],
            tangents: &[],
            out_positions: &mut positions,
            out_normals: &mut [],
            out_tangents: &mut [],
        };
        job.run().ok()?;
        let b = positions
            .iter()
            .map(|p| rig_world.transform_point3(Vec3::from(*p)))
            .filter(|p| p.is_finite())
            .map(Aabb::point)
            .reduce(Aabb::union);
        out = match (out, b) {
            (Some(a), Some(b)) => Some(a.union(b)),
            (a, b) => a.or(b),
        };
    }
    out
}

/// The box F frames for `roots` (the selection, or the characters): their skinned meshes
/// skinned at the current pose, their rigs' joints, and the drawn bounds of the rest of what
/// lies at or below them; `None` when none of it shows anything.
pub fn framing_bounds(world: &World, frame: &FrameData, roots: &[Entity]) -> Option<Aabb> {
    let entities: Vec<Entity> = roots.iter().flat_map(|r| subtree(world, *r)).collect();
    let mut rest = Vec::new();
    let mut skinned = Vec::new();
    for &e in &entities {
        match skinned_bounds(world, e) {
            Some(b) => skinned.push(b),
            None => rest.push(e),
        }
    }
    let parts = [drawn_bounds_of(world, frame, &rest), skeleton_bounds(world, roots)];
    skinned.into_iter().chain(parts.into_iter().flatten()).reduce(Aabb::union)
}
