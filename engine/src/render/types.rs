//! The `#[repr(C)]` structs the GPU reads, each with a size assertion matching its WGSL
//! declaration in `shaders/`. Plain data only: no buffers, no logic.

use bytemuck::{Pod, Zeroable};

/// One vertex of stream 0 (every mesh): position, normal, tangent (handedness in `w`), uv and
/// vertex colour.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuVertex {
    /// Model-space position.
    pub position: [f32; 3],
    /// Model-space normal.
    pub normal: [f32; 3],
    /// Model-space tangent, handedness in `w`.
    pub tangent: [f32; 4],
    /// Texture coordinate.
    pub uv: [f32; 2],
    /// Vertex colour, RGBA as unsigned normalized bytes (linear; white without `COLOR_0`).
    pub color: [u8; 4],
}
const _: () = assert!(size_of::<GpuVertex>() == 52);

/// One vertex of stream 1 (skinned meshes only): four bone indices of the mesh's rig and
/// their weights.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuSkinVertex {
    /// Bone indices (rig bone order, offset by the object's `palette_offset` on the GPU).
    pub joints: [u16; 4],
    /// Weights (sum 1).
    pub weights: [f32; 4],
}
const _: () = assert!(size_of::<GpuSkinVertex>() == 24);

/// The per-frame uniform (`Frame` in `shaders/common.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuFrame {
    /// Camera projection times view.
    pub clip_from_world: [[f32; 4]; 4],
    /// The shadow map's projection times view.
    pub light_clip_from_world: [[f32; 4]; 4],
    /// Camera position (`w` = 1).
    pub camera_position: [f32; 4],
    /// Direction the light travels (`w` unused).
    pub light_direction: [f32; 4],
    /// Light colour.
    pub light_color: [f32; 4],
    /// Ambient colour.
    pub ambient: [f32; 4],
    /// x: outline width, y: shadow texel size, z: shadow bias, w: unused.
    pub params: [f32; 4],
    /// Colour of the outline pass (linear RGBA).
    pub outline_color: [f32; 4],
}
const _: () = assert!(size_of::<GpuFrame>() == 224);

/// One drawn object (`Object` in `shaders/common.wgsl`), indexed by the instance index.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuObject {
    /// `world_from_model` (for a skinned mesh: the world matrix of its rig's root parent).
    pub world_from_model: [[f32; 4]; 4],
    /// Base colour (linear RGBA).
    pub color: [f32; 4],
    /// Where the object's rig's palette starts in the frame's palette buffer.
    pub palette_offset: u32,
    /// Flags: bit 0 ([`OBJECT_OUTLINED`]) draws the object in the outline pass.
    pub flags: u32,
    /// The id the picking pass writes for the object (0: not pickable).
    pub pick_id: u32,
    /// Padding.
    pub pad: u32,
}

/// [`GpuObject::flags`] bit: the outline pass draws this object.
pub const OBJECT_OUTLINED: u32 = 1;
const _: () = assert!(size_of::<GpuObject>() == 96);

/// One particle disc (`Particle` in `shaders/particles.wgsl`): drawn camera-facing, lit by its
/// normal, in the depth, forward and shadow passes.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct ParticleInstance {
    /// World-space centre.
    pub position: [f32; 3],
    /// Disc radius (world units).
    pub radius: f32,
    /// World-space normal (a direction; need not be unit length).
    pub normal: [f32; 3],
    /// Linear RGBA8 colour, red in the low byte (`unpack4x8unorm`).
    pub color: u32,
}
const _: () = assert!(size_of::<ParticleInstance>() == 32);

impl ParticleInstance {
    /// Packs a linear RGBA colour (components clamped to `[0, 1]`) into [`ParticleInstance::color`].
    pub fn pack_color(rgba: [f32; 4]) -> u32 {
        rgba.iter()
            .enumerate()
            .fold(0u32, |c, (i, v)| c | (((v.clamp(0.0, 1.0) * 255.0).round() as u32) << (8 * i)))
    }
}

/// One baked clip of a crowd (`CrowdClip` in `shaders/skinning.wgsl`): where its frames start in
/// the crowd table and how it plays (see [`crate::crowd::frame_pair`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuCrowdClip {
    /// First matrix (frame 0, bone 0) in the table.
    pub offset: u32,
    /// Frames baked.
    pub frames: u32,
    /// Bones per frame.
    pub bones: u32,
    /// 1 when the clip loops.
    pub looping: u32,
    /// Duration in seconds.
    pub duration: f32,
    /// Padding.
    pub pad: [u32; 3],
}
const _: () = assert!(size_of::<GpuCrowdClip>() == 32);

/// One crowd instance (`CrowdInstance` in `shaders/skinning.wgsl`): where it stands and how it
/// plays. Uploaded when the crowd changes, never per frame: the frame uniform carries the time.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct GpuCrowdInstance {
    /// `world_from_model` as three rows of an affine matrix.
    pub world: [[f32; 4]; 3],
    /// Index into the crowd's clip table ([`GpuCrowdClip`]).
    pub clip: u32,
    /// Phase (fraction of the clip) at time 0.
    pub phase: f32,
    /// Playback speed.
    pub speed: f32,
    /// Tint, linear RGBA8, red in the low byte.
    pub tint: u32,
}
const _: () = assert!(size_of::<GpuCrowdInstance>() == 64);

/// One vertex of the skeleton overlay's line list.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub struct LineVertex {
    /// World-space position.
    pub position: [f32; 3],
    /// Linear RGBA colour.
    pub color: [f32; 4],
}
const _: () = assert!(size_of::<LineVertex>() == 28);

/// Uniform of the skinning read-back pass (`DebugParams` in `shaders/skin_debug.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Pod, Zeroable)]
pub(crate) struct GpuDebugParams {
    pub object: u32,
    pub count: u32,
    pub pad: [u32; 2],
}
const _: () = assert!(size_of::<GpuDebugParams>() == 16);
