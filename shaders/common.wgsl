// Shared declarations: the per-frame uniform (group 0) and the per-object table (group 1,
// binding 0). Imported by every Marrow shader with `#import common`.

struct Frame {
    clip_from_world: mat4x4<f32>,
    light_clip_from_world: mat4x4<f32>,
    camera_position: vec4<f32>,
    // Direction the light travels, in world space (w unused).
    light_direction: vec4<f32>,
    light_color: vec4<f32>,
    ambient: vec4<f32>,
    // x: outline width (world units), y: shadow texel size, z: shadow depth bias, w: unused.
    params: vec4<f32>,
    outline_color: vec4<f32>,
};

struct Object {
    world_from_model: mat4x4<f32>,
    color: vec4<f32>,
    palette_offset: u32,
    // Bit 0: drawn by the outline pass.
    flags: u32,
    // Written by the picking pass (0: not pickable).
    pick_id: u32,
    pad0: u32,
};

@group(0) @binding(0) var<uniform> frame: Frame;
@group(1) @binding(0) var<storage, read> objects: array<Object>;
