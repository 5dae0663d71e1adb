// GPU linear blend skinning: the ONE implementation used by the forward pass, the depth
// pre-pass, the shadow pass, the outline pass and the debug read-back pass. Imported with
// `#import skinning` (after `#import common`).
//
// The palette holds every posed rig's `model_from_bone * bone_from_bind` matrices end to end;
// an object addresses its rig's slice with `palette_offset`. Vertex joint indices are bone
// indices of that rig.

@group(1) @binding(1) var<storage, read> palette: array<mat4x4<f32>>;

fn skin_matrix(palette_offset: u32, joints: vec4<u32>, weights: vec4<f32>) -> mat4x4<f32> {
    return palette[palette_offset + joints.x] * weights.x
        + palette[palette_offset + joints.y] * weights.y
        + palette[palette_offset + joints.z] * weights.z
        + palette[palette_offset + joints.w] * weights.w;
}

fn skinned_world_position(
    world_from_model: mat4x4<f32>,
    palette_offset: u32,
    joints: vec4<u32>,
    weights: vec4<f32>,
    position: vec3<f32>,
) -> vec3<f32> {
    let model_from_bind = skin_matrix(palette_offset, joints, weights);
    let model_position = model_from_bind * vec4<f32>(position, 1.0);
    return (world_from_model * model_position).xyz;
}

fn skinned_world_normal(
    world_from_model: mat4x4<f32>,
    palette_offset: u32,
    joints: vec4<u32>,
    weights: vec4<f32>,
    normal: vec3<f32>,
) -> vec3<f32> {
    let model_from_bind = skin_matrix(palette_offset, joints, weights);
    let n = (world_from_model * (model_from_bind * vec4<f32>(normal, 0.0))).xyz;
    let l2 = dot(n, n);
    if (l2 > 1e-20) {
        return n * inverseSqrt(l2);
    }
    return normal;
}

fn skinned_world_tangent(
    world_from_model: mat4x4<f32>,
    palette_offset: u32,
    joints: vec4<u32>,
    weights: vec4<f32>,
    tangent: vec4<f32>,
) -> vec4<f32> {
    return vec4<f32>(
        skinned_world_normal(world_from_model, palette_offset, joints, weights, tangent.xyz),
        tangent.w,
    );
}
