// Debug read-back: runs the renderer's own `skinned_world_position` (skinning.wgsl) over a
// skinned mesh's vertex streams, bound as storage buffers, and writes world positions out.
// Tests compare the result with the CPU reference skinning. With `CROWD`, `params.object` is a
// crowd instance, posed from the baked table at the frame's crowd time.

#import common
#import skinning

struct DebugParams {
    object: u32,
    count: u32,
    pad0: u32,
    pad1: u32,
};

// Stream 0: 13 words per vertex (position 3, normal 3, tangent 4, uv 2, colour 1).
@group(2) @binding(0) var<storage, read> vertices: array<f32>;
// Stream 1: 6 words per vertex (four u16 joints in two words, four f32 weights).
@group(2) @binding(1) var<storage, read> skin: array<u32>;
@group(2) @binding(2) var<storage, read_write> out_positions: array<vec4<f32>>;
@group(2) @binding(3) var<uniform> params: DebugParams;

@compute @workgroup_size(64)
fn cs_skin(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if (i >= params.count) {
        return;
    }
    let p = vec3<f32>(vertices[i * 13u], vertices[i * 13u + 1u], vertices[i * 13u + 2u]);
    let j01 = skin[i * 6u];
    let j23 = skin[i * 6u + 1u];
    let joints = vec4<u32>(j01 & 0xffffu, j01 >> 16u, j23 & 0xffffu, j23 >> 16u);
    let weights = vec4<f32>(
        bitcast<f32>(skin[i * 6u + 2u]),
        bitcast<f32>(skin[i * 6u + 3u]),
        bitcast<f32>(skin[i * 6u + 4u]),
        bitcast<f32>(skin[i * 6u + 5u]),
    );
#ifdef CROWD
    let c = crowd_instances[params.object];
    let world = skinned_world_position(crowd_world(c), crowd_skin_matrix(c, joints, weights), p);
#else
    let o = objects[params.object];
    let world = skinned_world_position(o.world_from_model, skin_matrix(o.palette_offset, joints, weights), p);
#endif
    out_positions[i] = vec4<f32>(world, 1.0);
}
