//! [`ScenePose`]: an imported scene evaluated at one time of one animation, with the engine's
//! jobs (sampling, local-to-model and palette jobs for rigs; property animations for other
//! nodes; weight tracks for morphs). Buffers are allocated, and the scene's clips compiled
//! ([`crate::clip::Clip::compiled`]), once in [`ScenePose::new`].
//!
//! It holds no playback state (the caller chooses the time); [`ScenePose::placed_vertices`] runs
//! the morph and skinning jobs over a few vertices for inspection (`marrow pose`, the fuzz
//! oracle), allocating as it goes: it is not the renderer's path.

use glam::{Mat4, Vec3};

use super::ImportedScene;
use crate::math::Transform;
use crate::morph::{MorphError, MorphJob, MorphTarget};
use crate::pose::{JobError, LocalToModelJob, PaletteJob, SamplingContext, SamplingJob};
use crate::skinning::{SkinningError, SkinningJob};

/// Why a primitive's vertices could not be placed ([`ScenePose::placed_vertices`]).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PlaceError {
    /// The morph job refused.
    #[error("morph targets: {0}")]
    Morph(#[from] MorphError),
    /// The skinning job refused.
    #[error("skinning: {0}")]
    Skinning(#[from] SkinningError),
}

/// Per-node and per-rig pose buffers for one [`ImportedScene`].
#[derive(Clone, Debug)]
pub struct ScenePose {
    /// Local transform of every node (joint nodes take their bone's sampled transform).
    pub local: Vec<Transform>,
    /// World matrix of every node.
    pub world: Vec<Mat4>,
    /// Per rig: sampled local bone transforms.
    pub rig_local: Vec<Vec<Transform>>,
    /// Per rig: `model_from_bone` matrices (relative to the rig's `root_parent`).
    pub rig_model: Vec<Vec<Mat4>>,
    /// Per rig: `model * inverseBind` in bone order (the rig's palette).
    pub rig_palette: Vec<Vec<Mat4>>,
    /// Per node: current morph weights (empty for nodes without morph targets).
    pub morph_weights: Vec<Vec<f32>>,
    contexts: Vec<SamplingContext>,
}

impl ScenePose {
    /// Buffers sized for `scene`, holding its rest pose.
    pub fn new(scene: &ImportedScene) -> Self {
        // Compile every clip now, so no evaluation builds a compiled form inside a frame.
        for a in &scene.animations {
            for c in &a.clips {
                c.clip.compiled();
            }
        }
        let mut pose = Self {
            local: scene.nodes.iter().map(|n| n.transform).collect(),
            world: vec![Mat4::IDENTITY; scene.nodes.len()],
            rig_local: scene.rigs.iter().map(|r| r.skeleton.bind_pose.clone()).collect(),
            rig_model: scene.rigs.iter().map(|r| vec![Mat4::IDENTITY; r.skeleton.bone_count()]).collect(),
            rig_palette: scene.rigs.iter().map(|r| vec![Mat4::IDENTITY; r.skeleton.bone_count()]).collect(),
            morph_weights: scene.nodes.iter().map(|n| n.morph_weights.clone()).collect(),
            contexts: scene.rigs.iter().map(|r| SamplingContext::new(r.skeleton.bone_count())).collect(),
        };
        // Every rig's head may play any of the scene's clips for it: slots for the largest.
        for a in &scene.animations {
            for c in &a.clips {
                if let Some(ctx) = pose.contexts.get_mut(c.rig) {
                    ctx.prepare(&c.clip);
                }
            }
        }
        // The rest pose of a well-formed scene cannot fail.
        let _ = pose.evaluate(scene, None, 0.0);
        pose
    }

    /// Poses the scene at `time` seconds of animation `animation` (`None`: the rest pose).
    /// Times are passed to the tracks as given (they hold their end keys outside their range).
    pub fn evaluate(
        &mut self,
        scene: &ImportedScene,
        animation: Option<usize>,
        time: f32,
    ) -> Result<(), JobError> {
        if !time.is_finite() {
            return Err(JobError::NonFiniteTime(time));
        }
        for ((l, n), w) in self.local.iter_mut().zip(&scene.nodes).zip(&mut self.morph_weights) {
            *l = n.transform;
            w.clear();
            w.extend_from_slice(&n.morph_weights);
        }
        let anim = animation.and_then(|a| scene.animations.get(a));
        if let Some(a) = anim {
            for na in &a.nodes {
                if let (Some(l), Some(n)) = (self.local.get_mut(na.node), scene.nodes.get(na.node)) {
                    *l = na.animation.sample(time, n.transform);
                }
            }
            for m in &a.morphs {
                if let Some(w) = self.morph_weights.get_mut(m.node) {
                    for (w, t) in w.iter_mut().zip(&m.weights) {
                        *w = t.sample(time).unwrap_or(*w);
                    }
                }
            }
        }
        for (r, rig) in scene.rigs.iter().enumerate() {
            let local = &mut self.rig_local[r];
            match anim.and_then(|a| a.clips.iter().find(|c| c.rig == r)) {
                Some(rc) => SamplingJob {
                    clip: &rc.clip,
                    bind_pose: &rig.skeleton.bind_pose,
                    time,
                    context: &mut self.contexts[r],
                    output: local,
                }
                .run()?,
                None => local.copy_from_slice(&rig.skeleton.bind_pose),
            }
            for (b, &node) in rig.bone_nodes.iter().enumerate() {
                if let (Some(l), Some(t)) = (self.local.get_mut(node), local.get(b)) {
                    *l = *t;
                }
            }
            LocalToModelJob {
                parents: &rig.skeleton.parents,
                local,
                adjusts: &[],
                output: &mut self.rig_model[r],
            }
            .run()?;
            PaletteJob {
                model: &self.rig_model[r],
                inverse_bind: &rig.skeleton.inverse_bind,
                output: &mut self.rig_palette[r],
            }
            .run()?;
        }
        for &i in &scene.order {
            let (Some(node), Some(local)) = (scene.nodes.get(i), self.local.get(i)) else { continue };
            let parent = node.parent.and_then(|p| self.world.get(p).copied()).unwrap_or(Mat4::IDENTITY);
            let m = parent * local.to_mat4();
            if let Some(w) = self.world.get_mut(i) {
                *w = m;
            }
        }
        Ok(())
    }

    /// World matrix of the node above rig `rig`'s root bones (identity at the scene root).
    pub fn rig_world(&self, scene: &ImportedScene, rig: usize) -> Mat4 {
        scene
            .rigs
            .get(rig)
            .and_then(|r| r.root_parent)
            .and_then(|p| self.world.get(p).copied())
            .unwrap_or(Mat4::IDENTITY)
    }

    /// Joint world matrices of glTF skin `skin`, in its joint order, from the rig's pose.
    pub fn joint_world(&self, scene: &ImportedScene, skin: usize, out: &mut [Mat4]) {
        let Some(r) = scene.skins.get(skin).map(|s| s.rig) else { return };
        let (Some(rig), Some(model)) = (scene.rigs.get(r), self.rig_model.get(r)) else { return };
        rig.joint_world(model, self.rig_world(scene, r), out);
    }

    /// The first `count` vertices of primitive `primitive` of mesh node `node` as this pose places
    /// them in the world: morphed by the node's weights, then skinned by its skin into the world
    /// (joint world times inverse bind: glTF ignores a skinned mesh node's own transform), or,
    /// unskinned, through the node's world matrix. Empty for a node without that primitive.
    ///
    /// (Not through [`Self::skinning_matrices`] and back out by the node's world matrix: where
    /// that matrix has no inverse, a zero or a 1e20 scale on one axis, the round trip would
    /// collapse the vertices or carry them past `f32`, against the importer's reach check,
    /// which bounds joint world times inverse bind.)
    pub fn placed_vertices(
        &self,
        scene: &ImportedScene,
        node: usize,
        primitive: usize,
        count: usize,
    ) -> Result<Vec<[f32; 3]>, PlaceError> {
        let Some(n) = scene.nodes.get(node) else { return Ok(Vec::new()) };
        let Some(p) = n.mesh.and_then(|m| scene.meshes.get(m)).and_then(|m| m.primitives.get(primitive))
        else {
            return Ok(Vec::new());
        };
        let k = count.min(p.positions.len());
        let weights = self.morph_weights.get(node).map_or(&[][..], Vec::as_slice);
        let targets: Vec<MorphTarget> = p
            .targets
            .iter()
            .map(|t| MorphTarget {
                positions: t.positions.get(..k).map(<[_]>::to_vec).unwrap_or_default(),
                normals: Vec::new(),
                tangents: Vec::new(),
            })
            .collect();
        let mut morphed = vec![[0.0f32; 3]; k];
        MorphJob {
            base_positions: &p.positions[..k],
            base_normals: &[],
            base_tangents: &[],
            targets: &targets,
            weights: &weights[..p.targets.len().min(weights.len())],
            positions: &mut morphed,
            normals: &mut [],
            tangents: &mut [],
        }
        .run()?;
        let mut out = morphed.clone();
        if let (Some(si), Some(st)) = (n.skin.filter(|&s| s < scene.skins.len()), &p.skin) {
            let mut palette = vec![Mat4::IDENTITY; scene.skins[si].joints.len()];
            if let Some(rig) = scene.rigs.get(scene.skins[si].rig)
                && let Some(model) = self.rig_model.get(scene.skins[si].rig)
            {
                rig.skinning_matrices(
                    model,
                    self.rig_world(scene, scene.skins[si].rig),
                    Mat4::IDENTITY,
                    &mut palette,
                );
            }
            SkinningJob {
                palette: &palette,
                joints: &st.joints[..k],
                weights: &st.weights[..k],
                positions: &morphed,
                normals: &[],
                tangents: &[],
                out_positions: &mut out,
                out_normals: &mut [],
                out_tangents: &mut [],
            }
            .run()?;
            return Ok(out);
        }
        let world = self.world.get(node).copied().unwrap_or(Mat4::IDENTITY);
        Ok(out.iter().map(|v| world.transform_point3(Vec3::from(*v)).to_array()).collect())
    }

    /// Skinning matrices for mesh node `node` with glTF skin `skin`, in its joint order:
    /// `inverse(meshWorld) * jointWorld * inverseBind`.
    pub fn skinning_matrices(&self, scene: &ImportedScene, skin: usize, node: usize, out: &mut [Mat4]) {
        let Some(r) = scene.skins.get(skin).map(|s| s.rig) else { return };
        let (Some(rig), Some(model)) = (scene.rigs.get(r), self.rig_model.get(r)) else { return };
        let mesh_world = self.world.get(node).copied().unwrap_or(Mat4::IDENTITY);
        rig.skinning_matrices(model, self.rig_world(scene, r), mesh_world, out);
    }
}
