//! Crowds on the GPU: a [`BakedPoses`] table and a list of placements turned into the
//! renderer's [`CrowdData`] (uploaded once, when the crowd changes) and one [`CrowdDraw`] per
//! skinned primitive (one instanced draw per pass for the whole crowd), and [`render_crowd`],
//! one frame of a glTF model's crowd offscreen (`marrow crowd`).
//!
//! It does not bake (see [`crate::crowd`]) and does not hold per-frame state: the crowd's time is
//! [`FrameData::crowd_time`].

use glam::{Mat4, Vec3};

use super::mesh::{MeshData, MeshHandle, MeshPool};
use super::renderer::{CrowdData, CrowdDraw, FrameData, Renderer, RendererSettings};
use super::scene::RenderedImage;
use super::types::{GpuCrowdClip, GpuCrowdInstance, ParticleInstance};
use super::{Camera, GpuContext, RenderError, ShaderSource};
use crate::crowd::BakedPoses;
use crate::crowd::layout::Placement;
use crate::gltf::ImportedScene;
use crate::skinning::Aabb;

/// Gentle tints dealt to crowd instances in turn, so neighbours read apart.
pub const DEFAULT_TINTS: [[f32; 4]; 4] =
    [[0.95, 0.95, 0.95, 1.0], [0.8, 0.9, 1.0, 1.0], [1.0, 0.85, 0.75, 1.0], [0.85, 1.0, 0.85, 1.0]];

/// The renderer's crowd data for `baked` and `placements` (instance `i` tinted `tints[i %
/// tints.len()]`, white without tints), at `version`.
pub fn crowd_data(
    baked: &BakedPoses,
    placements: &[Placement],
    tints: &[[f32; 4]],
    version: u64,
) -> CrowdData {
    let clips = baked
        .clips
        .iter()
        .map(|c| GpuCrowdClip {
            offset: c.offset,
            frames: c.frames,
            bones: baked.bones,
            looping: c.looping as u32,
            duration: c.duration,
            pad: [0; 3],
        })
        .collect();
    let last_clip = baked.clips.len().saturating_sub(1) as u32;
    let instances = placements
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let rows = crate::crowd::rows_of(&p.world);
            GpuCrowdInstance {
                world: [
                    [rows[0], rows[1], rows[2], rows[3]],
                    [rows[4], rows[5], rows[6], rows[7]],
                    [rows[8], rows[9], rows[10], rows[11]],
                ],
                clip: p.clip.min(last_clip),
                phase: p.phase,
                speed: p.speed,
                tint: ParticleInstance::pack_color(if tints.is_empty() {
                    [1.0; 4]
                } else {
                    tints[i % tints.len()]
                }),
            }
        })
        .collect();
    CrowdData { version, table: baked.matrices.clone(), clips, instances }
}

/// The world box of every placement's `local` box (the box of a member at every baked frame).
pub fn crowd_bounds(local: Aabb, placements: &[Placement]) -> Option<Aabb> {
    placements.iter().map(|p| local.transformed(&p.world)).reduce(Aabb::union)
}

/// A glTF model's first skinned rig as a crowd member: its skinned primitives uploaded (joint
/// indices remapped to the rig's bones) and the per-bone bind-space boxes of their vertices.
pub struct CrowdMesh {
    /// The rig.
    pub rig: usize,
    /// One uploaded mesh per skinned primitive.
    pub meshes: Vec<MeshHandle>,
    /// Per bone, the box of the vertices it moves (bind space).
    pub bone_boxes: Vec<Option<Aabb>>,
    /// The rig's own placement at rest (the world matrix of the node above its root bones: a
    /// Z-up model's turn to Y-up): an instance stands at `placement * rest_world`.
    pub rest_world: Mat4,
}

impl CrowdMesh {
    /// Uploads the skinned primitives of `scene`'s first rig that has a mesh.
    pub fn upload(ctx: &GpuContext, pool: &mut MeshPool, scene: &ImportedScene) -> Result<Self, RenderError> {
        let (rig, r) =
            scene.rigs.iter().enumerate().find(|(_, r)| !r.bindings.is_empty()).ok_or_else(|| {
                RenderError::Mesh("the model has no skinned mesh to draw a crowd with".into())
            })?;
        let bones = r.skeleton.bone_count();
        let mut meshes = Vec::new();
        let mut boxes: Vec<Option<Aabb>> = vec![None; bones];
        for b in &r.bindings {
            let Some(mesh) = scene.meshes.get(b.mesh) else { continue };
            for p in mesh.primitives.iter().filter(|p| p.mode == 4) {
                let Some(s) = &p.skin else { continue };
                let joints = s.joints_to_bones(&r.joint_to_bone);
                meshes.push(pool.add(&ctx.device, &MeshData::of_primitive(p, Some(&joints)))?);
                for (k, b) in
                    crate::crowd::bone_boxes(bones, &p.positions, &joints, &s.weights).into_iter().enumerate()
                {
                    if let Some(b) = b {
                        boxes[k] = Some(boxes[k].map_or(b, |x| x.union(b)));
                    }
                }
            }
        }
        let rest_world = crate::gltf::ScenePose::new(scene).rig_world(scene, rig);
        Ok(Self { rig, meshes, bone_boxes: boxes, rest_world })
    }

    /// One crowd draw per primitive, all instances, bounded by `bounds`.
    pub fn draws(&self, count: u32, bounds: Aabb, out: &mut Vec<CrowdDraw>) {
        out.extend(self.meshes.iter().map(|&mesh| CrowdDraw {
            mesh,
            first: 0,
            count,
            bounds,
            casts_shadow: true,
            pick_id: 0,
        }));
    }
}

/// Renders one frame of a crowd of `scene`'s first skinned rig: the `baked` table, `placements`,
/// at crowd time `time`, with a ground plane and a camera framed on the crowd.
#[allow(clippy::too_many_arguments)]
pub fn render_crowd(
    ctx: &GpuContext,
    scene: &ImportedScene,
    baked: &BakedPoses,
    placements: &[Placement],
    tints: &[[f32; 4]],
    time: f32,
    width: u32,
    height: u32,
    shaders: ShaderSource,
) -> Result<RenderedImage, RenderError> {
    let mut renderer = Renderer::new(ctx, RendererSettings { shaders, ..Default::default() })?;
    let mut pool = MeshPool::new();
    let member = CrowdMesh::upload(ctx, &mut pool, scene)?;
    let placements: Vec<Placement> =
        placements.iter().map(|p| Placement { world: p.world * member.rest_world, ..*p }).collect();
    let placements = &placements[..];
    let local = baked
        .bounds(&member.bone_boxes)
        .ok_or_else(|| RenderError::Mesh("the crowd has no vertices".into()))?;
    let bounds = crowd_bounds(local, placements);
    let mut frame = FrameData {
        crowd: Some(std::sync::Arc::new(crowd_data(baked, placements, tints, 1))),
        crowd_time: time,
        ..Default::default()
    };
    if let Some(b) = bounds {
        member.draws(placements.len() as u32, b, &mut frame.crowd_draws);
        let ground = super::scene::ground_quad(&ctx.device, &mut pool)?;
        frame.objects.push(super::scene::ground_under(ground, b, b.min.y.min(0.0), 1.0));
        // A three-quarter view from above the crowd's near corner.
        let mut camera = Camera::framing(b, width as f32 / height.max(1) as f32);
        let dir = Vec3::new(0.55, 0.6, 1.0).normalize();
        camera.eye = camera.target + dir * (camera.eye - camera.target).length() * 0.75;
        frame.camera = camera;
    }
    renderer.check_target(width, height)?;
    renderer.check_crowd_work(&pool, &frame)?;
    let target = renderer.create_target(width, height);
    let stats = renderer.render(&pool, &frame, &target)?;
    let rgba = renderer.read_color(&target)?;
    Ok(RenderedImage { width: target.width, height: target.height, rgba, stats, bounds })
}
