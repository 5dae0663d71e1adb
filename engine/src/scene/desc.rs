//! The authored form of a scene: what a scene file holds, with engine types (transforms, property
//! animations) but no runtime handles. Entities are identified by name within their parent;
//! assets by reference strings (`path` or `path#name`, resolved by an [`AssetSource`]).
//!
//! Nothing here is derived or session state: no world matrices, no resolved bone indices, no
//! playheads, fades, adjusts, events or selection.

use std::sync::Arc;

use glam::Vec3;

use super::MeshAsset;
use crate::clip::Clip;
use crate::graph::GraphProgram;
use crate::math::Transform;
use crate::particles::CloudSettings;
use crate::property::PropertyAnimation;
use crate::skeleton::Skeleton;

/// An authored scene.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SceneDesc {
    /// The scene's name.
    pub name: String,
    /// Root entities, each with its children.
    pub entities: Vec<EntityDesc>,
}

impl SceneDesc {
    /// The entity at `path` (names joined by `/`, from a root), as the World finds a target
    /// binding's entity or a socket's parent.
    pub fn entity(&self, path: &str) -> Option<&EntityDesc> {
        let mut among = &self.entities;
        let mut at = None;
        for part in path.split('/') {
            let e = among.iter().find(|e| e.name == part)?;
            among = &e.children;
            at = Some(e);
        }
        at
    }
}

/// An authored entity and its subtree.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EntityDesc {
    /// Name (unique among its siblings).
    pub name: String,
    /// Local transform (`None`: the entity has no Transform component).
    pub transform: Option<Transform>,
    /// An Animator, making this entity a rig.
    pub animator: Option<AnimatorDesc>,
    /// A mesh.
    pub mesh: Option<MeshDesc>,
    /// A bone socket (the entity must be a direct child of a rig).
    pub socket: Option<SocketDesc>,
    /// A property animation of this entity's transform.
    pub animation: Option<PropertyAnimation>,
    /// Default morph weights.
    pub morph_weights: Option<Vec<f32>>,
    /// A particle cloud scattered over a skinned mesh and driven by the rig at or above.
    pub particles: Option<ParticleCloudDesc>,
    /// A crowd of baked-pose instances placed around this entity.
    pub crowd: Option<CrowdDesc>,
    /// Child entities.
    pub children: Vec<EntityDesc>,
}

/// An authored Animator.
#[derive(Clone, Debug, PartialEq)]
pub struct AnimatorDesc {
    /// The rig's skeleton, by reference.
    pub rig: String,
    /// The clip it starts on, by reference.
    pub clip: Option<String>,
    /// A blend graph it plays instead of the clip, by reference (a `.graph.ron` path).
    pub graph: Option<String>,
    /// Overrides the clip's own looping (e.g. to loop an imported glTF animation).
    pub looping: Option<bool>,
    /// Playback speed.
    pub speed: f32,
    /// Start playing on the first simulation step.
    pub play_on_start: bool,
    /// Root motion taken from a bone (see [`crate::root_motion`]).
    pub root_motion: Option<RootMotionDesc>,
    /// Entities whose positions drive the graph's vector parameters.
    pub targets: Vec<TargetBinding>,
}

/// An entity of the scene whose position, in the rig's model space, drives the Animator's graph
/// each frame: its `vec3` parameter named `parameter`, or, when it has none, the three float
/// parameters `{parameter}_x`, `{parameter}_y` and `{parameter}_z` (a look-at's or a reach's
/// target the user can drag in the viewport). A socket
/// entity (on this rig's bone or another's) is read where the last frame placed it: this frame's
/// poses are what the graph is about to compute.
#[derive(Clone, Debug, PartialEq)]
pub struct TargetBinding {
    /// The parameters' common prefix.
    pub parameter: String,
    /// The entity, by path.
    pub entity: String,
}

impl TargetBinding {
    /// The three parameter names the binding sets.
    pub fn parameters(&self) -> [String; 3] {
        ["x", "y", "z"].map(|a| format!("{}_{a}", self.parameter))
    }
}

/// Authored root motion: the bone by name, the translation axes taken and whether the heading is.
#[derive(Clone, Debug, PartialEq)]
pub struct RootMotionDesc {
    /// The bone that carries the motion.
    pub bone: String,
    /// Translation axes taken (X, Y, Z).
    pub axes: [bool; 3],
    /// Whether the heading (yaw about +Y) is taken.
    pub yaw: bool,
}

impl RootMotionDesc {
    /// Ground-plane translation and heading from `bone` (what a new setting starts as).
    pub fn planar(bone: impl Into<String>) -> Self {
        Self { bone: bone.into(), axes: [true, false, true], yaw: true }
    }

    /// The axes as letters (`"XZ"`), as files write them.
    pub fn axes_letters(&self) -> String {
        ["X", "Y", "Z"].iter().zip(self.axes).filter(|(_, on)| *on).map(|(l, _)| *l).collect()
    }

    /// Reads axes letters (any of `X`, `Y`, `Z`, once each, any case); `None` for anything else.
    pub fn parse_axes(letters: &str) -> Option<[bool; 3]> {
        let mut axes = [false; 3];
        for c in letters.chars() {
            let i = match c.to_ascii_uppercase() {
                'X' => 0,
                'Y' => 1,
                'Z' => 2,
                _ => return None,
            };
            if std::mem::replace(&mut axes[i], true) {
                return None;
            }
        }
        Some(axes)
    }
}

/// An authored mesh.
#[derive(Clone, Debug, PartialEq)]
pub enum MeshDesc {
    /// A mesh inside an imported asset, by reference (`path#mesh name`).
    Asset(String),
    /// A box primitive (unskinned) with these half extents.
    Box {
        /// Half extents.
        half_extents: Vec3,
    },
}

/// An authored bone socket.
#[derive(Clone, Debug, PartialEq)]
pub struct SocketDesc {
    /// Bone name.
    pub bone: String,
    /// Offset in the bone's frame.
    pub offset: Transform,
}

/// An authored particle cloud: points scattered over a skinned mesh's surface, bound to the
/// skeleton of the rig at or above the entity ([`crate::particles`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ParticleCloudDesc {
    /// The skinned mesh whose surface is sampled, by reference (`path#mesh name`).
    pub mesh: String,
    /// Count, seed, falloff, radius, colour, groups by bone names and springs.
    pub settings: CloudSettings,
}

/// An authored crowd: a skinned mesh on a rig, its clips baked into a table of poses, and
/// `count` instances laid out around the entity ([`crate::crowd`]). The table is derived: baked
/// when the scene is instantiated, never saved.
#[derive(Clone, Debug, PartialEq)]
pub struct CrowdDesc {
    /// The rig's skeleton, by reference.
    pub rig: String,
    /// The skinned mesh each instance draws, by reference (its skeleton must be the rig's).
    pub mesh: String,
    /// The clips baked, by reference (instance `i` plays clip `i % clips`).
    pub clips: Vec<String>,
    /// Frames baked per clip.
    pub frames: u32,
    /// Instances.
    pub count: u32,
    /// Placement (in the entity's frame).
    pub layout: crate::crowd::layout::Layout,
    /// Placement seed (speeds, and a scattered layout).
    pub seed: u64,
    /// Slowest and fastest playback speed.
    pub speed: (f32, f32),
    /// Each member's own transform inside its placement (e.g. a Z-up model turned Y-up).
    pub member: Transform,
}

/// Resolves asset references while a scene is instantiated.
pub trait AssetSource {
    /// The skeleton named by `reference`.
    fn skeleton(&self, reference: &str) -> Result<Arc<Skeleton>, String>;
    /// The clip named by `reference`, for `skeleton` (a file holding clips for several rigs picks
    /// the one for this skeleton when it can).
    fn clip(&self, reference: &str, skeleton: &Skeleton) -> Result<Arc<Clip>, String>;
    /// The mesh named by `reference`.
    fn mesh(&self, reference: &str) -> Result<Arc<MeshAsset>, String>;
    /// The graph named by `reference`, compiled for `skeleton` (none by default).
    fn graph(&self, reference: &str, _skeleton: &Arc<Skeleton>) -> Result<Arc<GraphProgram>, String> {
        Err(format!("no graph {reference:?}: this source holds no graphs"))
    }
    /// Every clip at `reference` (one per rig it animates), for re-registering an edited clip;
    /// by default those [`AssetSource::all_clips`] lists under it.
    fn clips_at(&self, reference: &str) -> Vec<Arc<Clip>> {
        self.all_clips().into_iter().filter(|(r, _)| r == reference).map(|(_, c)| c).collect()
    }
    /// Every clip the source holds with its reference, so a world can save a clip it was told to
    /// play at run time by reference (none by default).
    fn all_clips(&self) -> Vec<(String, Arc<Clip>)> {
        Vec::new()
    }
}
