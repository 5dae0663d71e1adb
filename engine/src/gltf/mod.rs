//! glTF 2.0 import: rigs, clips, node animations, meshes and morph targets, exactly as authored.
//!
//! [`import`] reads a `.gltf` (with `.bin` files or base64 data URIs) or a `.glb` into an
//! [`ImportedScene`]: the node hierarchy, one [`Rig`] per distinct skin (its joints become the
//! bones of a [`Skeleton`] in `parent < index` order, with the map back to glTF joint order),
//! meshes with CPU vertex data, skin streams (four influences) and morph targets, and per
//! animation one [`Clip`] per rig it touches, a [`PropertyAnimation`] per animated non-joint
//! node and `Track<f32>` weight tracks per morphed node. Keys are kept as authored: no
//! resampling, no Euler angles; STEP, LINEAR and CUBICSPLINE survive as such.
//!
//! Bad input never panics: every fault found is returned in [`ImportError::Invalid`], each naming
//! the file and the glTF object at fault. [`ScenePose`] evaluates the imported scene at a time
//! with the engine's pose jobs (the `marrow pose` command and the tests use it).
//!
//! Deliberately not here: materials, textures, images, cameras, lights, extensions (a file that
//! *requires* one is refused), GPU upload, and any project/scene format.

mod entity;
mod error;
mod evaluate;
pub mod export;
mod import;
mod json;
pub(crate) mod load;

use std::path::PathBuf;

use glam::Mat4;

pub use crate::mesh::{Image, JointFormat, Material, Mesh, Primitive, SkinFormat, SkinStream, WeightFormat};
pub use entity::{entity_name, model_entity};
pub use error::{Fault, ImportError, Location, Warning};
pub use evaluate::{PlaceError, ScenePose};
pub use export::{
    DEFAULT_BAKE_BOUND, EasedKeys, ExportError, ExportOptions, ExportReport, JointChoice, WeightChoice,
    export_glb, export_gltf, export_gltf_named,
};
pub(crate) use import::reach_faults;
pub use import::{BUILD_BUDGET_BYTES, import, import_slice};

use crate::clip::Clip;
use crate::math::Transform;
use crate::property::PropertyAnimation;
use crate::skeleton::Skeleton;
use crate::skinning::Aabb;
use crate::track::Track;

/// Everything imported from one glTF file.
#[derive(Clone, Debug)]
pub struct ImportedScene {
    /// The file it came from.
    pub source: PathBuf,
    /// All nodes, in glTF order.
    pub nodes: Vec<Node>,
    /// Nodes without a parent that belong to the default scene (or every parentless node when
    /// the file names no scene).
    pub roots: Vec<usize>,
    /// Every node, parents before children (the order world transforms are composed in).
    pub order: Vec<usize>,
    /// Meshes, in glTF order.
    pub meshes: Vec<Mesh>,
    /// Skins as authored, in glTF order.
    pub skins: Vec<Skin>,
    /// Rigs: one per distinct skin (skins with identical joint lists and inverse bind matrices,
    /// compared exactly, share one rig and so one palette).
    pub rigs: Vec<Rig>,
    /// Animations, in glTF order.
    pub animations: Vec<Animation>,
    /// Materials (their base colour), in glTF order.
    pub materials: Vec<Material>,
    /// Images, still encoded (PNG or JPEG), in glTF order.
    pub images: Vec<Image>,
    /// Everything the importer changed to keep the file usable.
    pub warnings: Vec<Warning>,
}

/// Where a node sits in a rig.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BoneRef {
    /// Index into [`ImportedScene::rigs`].
    pub rig: usize,
    /// Bone index in that rig's skeleton.
    pub bone: usize,
}

/// A glTF node. Joint nodes (those with a non-empty `bones`) spawn no entities of their own;
/// their pose comes from their rig.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The node's name, or `node<N>` when unnamed.
    pub name: String,
    /// Parent node.
    pub parent: Option<usize>,
    /// Child nodes.
    pub children: Vec<usize>,
    /// Local transform (a `matrix` is decomposed; shear is dropped with a warning).
    pub transform: Transform,
    /// Mesh drawn at this node.
    pub mesh: Option<usize>,
    /// Skin deforming that mesh (the node's own transform is then ignored for skinning).
    pub skin: Option<usize>,
    /// Default morph weights: the node's `weights`, else the mesh's, else zeros.
    pub morph_weights: Vec<f32>,
    /// The rig bones this node is (empty for non-joint nodes).
    pub bones: Vec<BoneRef>,
}

impl Node {
    /// A node per bone of `skeleton` (rig `rig`), in bone order, in bind pose, with their
    /// children: how an importer whose format has no node list of its own (BVH, FBX) lays a
    /// rig out as glTF would.
    pub(crate) fn bones_of(skeleton: &crate::skeleton::Skeleton, rig: usize) -> Vec<Node> {
        let n = skeleton.bone_count();
        let mut nodes: Vec<Node> = (0..n)
            .map(|b| Node {
                name: skeleton.bone_names[b].clone(),
                parent: skeleton.parent(b),
                children: Vec::new(),
                transform: skeleton.bind_pose[b],
                mesh: None,
                skin: None,
                morph_weights: Vec::new(),
                bones: vec![BoneRef { rig, bone: b }],
            })
            .collect();
        for b in 0..n {
            if let Some(p) = skeleton.parent(b) {
                nodes[p].children.push(b);
            }
        }
        nodes
    }
}

impl Rig {
    /// Rig 0 of a scene whose one skin (named `name`) lists every bone of `skeleton` in bone
    /// order, with the skeleton's inverse binds: how the BVH and FBX importers, whose formats
    /// have no skin of glTF's shape, make theirs. `bindings` are the meshes it deforms.
    pub(crate) fn of_whole_skeleton(
        skeleton: crate::skeleton::Skeleton,
        name: String,
        bindings: Vec<MeshBinding>,
    ) -> (Skin, Rig) {
        let n = skeleton.bone_count();
        let joints: Vec<usize> = (0..n).collect();
        let inverse_bind = skeleton.inverse_bind.clone();
        let skin = Skin {
            name,
            joints: joints.clone(),
            inverse_bind: inverse_bind.clone(),
            skeleton_root: None,
            rig: 0,
        };
        let rig = Rig {
            skeleton,
            skins: vec![0],
            bone_nodes: joints.clone(),
            joint_nodes: joints,
            joint_to_bone: (0..n as u16).collect(),
            inverse_bind,
            root_parent: None,
            bindings,
        };
        (skin, rig)
    }
}

/// A glTF skin as authored, in glTF joint order.
#[derive(Clone, Debug, PartialEq)]
pub struct Skin {
    /// The skin's name, or `skin<N>`.
    pub name: String,
    /// Joint node indices.
    pub joints: Vec<usize>,
    /// Inverse bind matrices, one per joint (identity when the file gives none).
    pub inverse_bind: Vec<Mat4>,
    /// The `skeleton` root node, if given.
    pub skeleton_root: Option<usize>,
    /// Index of the rig built for it.
    pub rig: usize,
}

/// A skeleton built from a skin, and everything needed to drive the meshes that use it.
#[derive(Clone, Debug, PartialEq)]
pub struct Rig {
    /// The skeleton. Its name is the skin's name (or `skin<N>`), made unique; bone names are the
    /// joint node names (`joint<N>`/`node<N>` when unnamed), made unique; bind pose = the nodes'
    /// local transforms; inverse binds = the skin's (bone order).
    pub skeleton: Skeleton,
    /// The glTF skins this rig serves.
    pub skins: Vec<usize>,
    /// The glTF node of each bone. Bones that are not joints fill gaps between joints.
    pub bone_nodes: Vec<usize>,
    /// Joint node indices in glTF joint order.
    pub joint_nodes: Vec<usize>,
    /// Bone index of each glTF joint (vertex joint indices are in glTF joint order).
    pub joint_to_bone: Vec<u16>,
    /// Inverse bind matrices in glTF joint order.
    pub inverse_bind: Vec<Mat4>,
    /// The node above the root bones, whose world transform places the rig (`None`: the scene
    /// origin).
    pub root_parent: Option<usize>,
    /// Every mesh node this rig deforms (one animator drives them all).
    pub bindings: Vec<MeshBinding>,
}

impl Rig {
    /// Joint world matrices in glTF joint order: `rig_world * model[joint_to_bone[j]]`.
    /// Writes `min(out.len(), joints)` entries.
    pub fn joint_world(&self, model: &[Mat4], rig_world: Mat4, out: &mut [Mat4]) {
        for (o, &b) in out.iter_mut().zip(&self.joint_to_bone) {
            *o = rig_world * model.get(b as usize).copied().unwrap_or(Mat4::IDENTITY);
        }
    }

    /// Skinning matrices for a mesh node, in glTF joint order:
    /// `inverse(mesh_world) * rig_world * model[bone] * inverseBind[j]`. A mesh node with no
    /// inverse (a zero scale, animated or not) collapses its vertices instead of making them
    /// NaN: the inverse is taken as identity (see [`crate::math::inverse_or_identity`]).
    pub fn skinning_matrices(&self, model: &[Mat4], rig_world: Mat4, mesh_world: Mat4, out: &mut [Mat4]) {
        let pre = crate::math::inverse_or_identity(&mesh_world) * rig_world;
        for ((o, &b), ib) in out.iter_mut().zip(&self.joint_to_bone).zip(&self.inverse_bind) {
            *o = pre * model.get(b as usize).copied().unwrap_or(Mat4::IDENTITY) * *ib;
        }
    }
}

/// A mesh node deformed by a rig.
#[derive(Clone, Debug, PartialEq)]
pub struct MeshBinding {
    /// The mesh node.
    pub node: usize,
    /// The glTF skin it names.
    pub skin: usize,
    /// The mesh.
    pub mesh: usize,
    /// Per glTF joint, the box (in the joint's bind space, `inverseBind * p`) around the base
    /// vertices it influences; `None` for joints that move no vertex. Morph deltas are not
    /// included. See [`crate::skinning::posed_bounds`].
    pub joint_bounds: Vec<Option<Aabb>>,
}

/// One glTF animation, split by what it drives.
#[derive(Clone, Debug, PartialEq)]
pub struct Animation {
    /// The animation's name, or `animation<N>`.
    pub name: String,
    /// The last key time over all its samplers (every clip's `length` is set to it).
    pub duration: f32,
    /// One clip per rig whose joints it animates.
    pub clips: Vec<RigClip>,
    /// Transform animations of non-joint nodes.
    pub nodes: Vec<NodeAnimation>,
    /// Morph weight animations.
    pub morphs: Vec<MorphAnimation>,
}

/// A clip for one rig.
#[derive(Clone, Debug, PartialEq)]
pub struct RigClip {
    /// Index into [`ImportedScene::rigs`].
    pub rig: usize,
    /// The clip (named after the animation, for the rig's skeleton).
    pub clip: Clip,
}

/// A transform animation of a non-joint node.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeAnimation {
    /// The node.
    pub node: usize,
    /// Its tracks.
    pub animation: PropertyAnimation,
}

/// A morph weight animation: one track per target, all with the glTF sampler's keys.
#[derive(Clone, Debug, PartialEq)]
pub struct MorphAnimation {
    /// The mesh node.
    pub node: usize,
    /// One track per morph target.
    pub weights: Vec<Track<f32>>,
}

impl ImportedScene {
    /// Index of the animation named `name`.
    pub fn animation_index(&self, name: &str) -> Option<usize> {
        self.animations.iter().position(|a| a.name == name)
    }
}
