//! FBX import (binary and ASCII, 6.x to 7.x) through the `ufbx` library, into the
//! [`ImportedScene`] shape glTF and BVH import produce, so every command and the editor take an
//! `.fbx` through the same path.
//!
//! What comes in, and how:
//! - Axes and units: ufbx converts the file's axis system and unit scale to Marrow's (Y up,
//!   metres) on load, in the geometry and the transforms (`SpaceConversion::ModifyGeometry`);
//!   the first warning states what the file had (`axes ... and units of N m, converted`).
//! - The skeleton: every node that is a bone (an FBX `LimbNode`) or deforms a skinned mesh, and
//!   every node between two of them, parents before children (`parent < index`, as glTF
//!   joints are reordered). What lies above the root bones (an `Armature` node, an axis
//!   helper) is folded into the root bones' bind pose and keys, so the rig's model space is the
//!   file's world space. Pre/post rotations and pivots are in each node's local transform as
//!   ufbx evaluates it.
//! - Skinned meshes: triangulated, one vertex per face corner (positions, normals, first UV
//!   set), up to four influences a vertex: a vertex with more keeps its four heaviest, weights
//!   renormalised, said once per mesh; the inverse bind of each deforming bone is its cluster's
//!   `geometry_to_bone`. Meshes with no skin come in as static meshes at their nodes.
//! - Materials: a primitive per material a mesh's faces use, each material's base colour and
//!   the embedded PNG or JPEG of its base colour (diffuse) texture; a texture that is not
//!   embedded is said once and left out.
//! - Blend shapes: each channel of a mesh's blend deformer is a morph target (its shape's
//!   position offsets, and normal offsets when the file has them, per corner), named after the
//!   channel, its weight the mesh's default; a stack animating a channel's `DeformPercent`
//!   gives the animation a morph weight track per target (0 to 100 read as 0 to 1; a target it
//!   leaves alone holds its default), kept even in a file without a skeleton. A channel with
//!   in-between shapes gives a target per shape (`name@50` for the one at 50%), each weighted as
//!   FBX interpolates them (rising from the shape before to its own full weight, falling to the
//!   next), keyed exactly where the channel crosses a shape's weight.
//! - Animation: every animation stack is an animation with one clip for the rig, baked by ufbx
//!   (`bake_anim`): curves that are linear or constant keep their own keys, the others are
//!   resampled at the file's frame rate (so are Euler rotations: FBX interpolates the angles,
//!   which a quaternion key pair would not follow); keys are LINEAR. Times start at the stack's
//!   start. The import report says, per stack, how many channels kept their keys and which were
//!   resampled.
//! - Faults: a file ufbx rejects is named with ufbx's reason; what the file builds is checked as
//!   any import is (skeleton faults, non-finite keys), named with the node, and the built scene
//!   goes through the glTF importer's reach check (every world transform, skinning matrix and
//!   placed vertex, at rest and at every key, within what 32-bit floats hold): a double the file
//!   holds as finite can be infinite as a float (an offset of 1e101) or compound past the limit
//!   down the hierarchy, and is refused naming the node.
//! - Bounded cost: at most [`MAX_FILE_BYTES`] read; ufbx's allocators capped at
//!   [`MAX_MEMORY_BYTES`] each; nodes at most [`crate::skeleton::MAX_BONES`] bones.
//!
//! - Textures: embedded images, or (read from a file, [`import`]) the image file a texture names
//!   in the FBX file's folder (its relative name, else its file name alone: an absolute path from
//!   the author's machine is never read; nothing outside the folder, as for a glTF's URIs).
//!
//! Not here: cameras and lights.

mod build;

use std::path::{Path, PathBuf};

use crate::gltf::ImportedScene;

/// The largest FBX file read (256 MiB).
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// The most memory ufbx may use for the loaded scene, and again for its temporary work (1 GiB).
pub const MAX_MEMORY_BYTES: usize = 1 << 30;

/// Why an FBX file did not import.
#[derive(Debug, thiserror::Error)]
pub enum FbxError {
    /// The file could not be read.
    #[error("{}: {source}", file.display())]
    Io {
        /// The file.
        file: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// ufbx refused the file.
    #[error("{}: not a readable FBX file: {reason}", file.display())]
    Rejected {
        /// The file.
        file: PathBuf,
        /// ufbx's description of the fault (with where, when it says).
        reason: String,
    },
    /// The file loads, but what it describes cannot be used.
    #[error("{}: {at}: {what}", file.display())]
    Invalid {
        /// The file.
        file: PathBuf,
        /// Where: the node, mesh or animation stack.
        at: String,
        /// What is wrong.
        what: String,
    },
}

/// Imports the FBX file at `path`.
pub fn import(path: impl AsRef<Path>) -> Result<ImportedScene, FbxError> {
    let path = path.as_ref();
    let bytes = crate::project::fs::read_regular_file(path, MAX_FILE_BYTES)
        .map_err(|source| FbxError::Io { file: path.to_owned(), source })?;
    import_slice_in(&bytes, path, path.parent())
}

/// The load options every import uses: Y up, metres, memory capped.
fn load_opts() -> ufbx::LoadOpts<'static> {
    let cap = || ufbx::AllocatorOpts { memory_limit: MAX_MEMORY_BYTES, ..Default::default() };
    ufbx::LoadOpts {
        temp_allocator: cap(),
        result_allocator: cap(),
        target_axes: ufbx::CoordinateAxes::right_handed_y_up(),
        target_unit_meters: 1.0,
        space_conversion: ufbx::SpaceConversion::ModifyGeometry,
        geometry_transform_handling: ufbx::GeometryTransformHandling::ModifyGeometry,
        node_depth_limit: crate::bvh::MAX_DEPTH as u32,
        load_external_files: false,
        ..Default::default()
    }
}

/// Imports FBX bytes; `file` names the source in errors and names the rig (its stem). Only
/// embedded textures are read (see [`import_slice_in`]).
pub fn import_slice(bytes: &[u8], file: &Path) -> Result<ImportedScene, FbxError> {
    import_slice_in(bytes, file, None)
}

/// The image files the textures of an FBX file name and do not embed, as [`import`] looks for
/// them in the file's folder (relative names; an absolute path reduced to its file name): what
/// an import copying the file into a project copies beside it. Empty for a file ufbx rejects.
pub fn texture_files(bytes: &[u8]) -> Vec<String> {
    let Ok(scene) = ufbx::load_memory(bytes, load_opts()) else { return Vec::new() };
    let mut out: Vec<String> = Vec::new();
    for t in scene.textures.iter().filter(|t| t.content.is_empty()) {
        let base_name = |name: &str| name.rsplit(['/', '\\']).next().unwrap_or("").to_owned();
        for name in [t.relative_filename.to_string(), base_name(&t.filename), base_name(&t.absolute_filename)]
        {
            if !name.is_empty() && !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// As [`import_slice`], reading a texture that is not embedded from `folder` (the FBX file's
/// own: the file it names there, or its file name alone; nothing outside the folder).
pub fn import_slice_in(bytes: &[u8], file: &Path, folder: Option<&Path>) -> Result<ImportedScene, FbxError> {
    let scene = ufbx::load_memory(bytes, load_opts()).map_err(|e| FbxError::Rejected {
        file: file.to_owned(),
        reason: format!(
            "{}{}",
            e.description,
            if e.info().is_empty() { String::new() } else { format!(" ({})", e.info()) }
        ),
    })?;
    build::build(&scene, file, folder)
}

/// Loads FBX bytes as ufbx does for [`import_slice`] (the same axes, units and limits) and
/// returns ufbx's world transform of each named node at `time` seconds of animation stack
/// `stack`, evaluated by ufbx itself: the independent oracle the importer's tests compare
/// Marrow's poses against.
pub fn ufbx_world_transforms(
    bytes: &[u8],
    stack: usize,
    time: f64,
) -> Result<Vec<(String, glam::Mat4)>, String> {
    let scene = ufbx::load_memory(bytes, load_opts()).map_err(|e| e.description.to_string())?;
    let anim = &scene.anim_stacks.get(stack).ok_or("no such animation stack")?.anim;
    let begin = scene.anim_stacks[stack].time_begin;
    let evaluated = ufbx::evaluate_scene(&scene, anim, begin + time, ufbx::EvaluateOpts::default())
        .map_err(|e| e.description.to_string())?;
    Ok(evaluated.nodes.iter().map(|n| (n.element.name.to_string(), build::mat4(&n.node_to_world))).collect())
}
