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

// The one skinning of a position: `skin` is the blended skinning matrix (a palette's, from
// `skin_matrix`, or a crowd instance's baked one, from `crowd_skin_matrix`).
fn skinned_world_position(world_from_model: mat4x4<f32>, skin: mat4x4<f32>, position: vec3<f32>) -> vec3<f32> {
    let model_position = skin * vec4<f32>(position, 1.0);
    return (world_from_model * model_position).xyz;
}

fn skinned_world_normal(world_from_model: mat4x4<f32>, skin: mat4x4<f32>, normal: vec3<f32>) -> vec3<f32> {
    let n = (world_from_model * (skin * vec4<f32>(normal, 0.0))).xyz;
    let l2 = dot(n, n);
    if (l2 > 1e-20) {
        return n * inverseSqrt(l2);
    }
    return normal;
}

fn skinned_world_tangent(world_from_model: mat4x4<f32>, skin: mat4x4<f32>, tangent: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(skinned_world_normal(world_from_model, skin, tangent.xyz), tangent.w);
}

#ifdef CROWD
// Crowds from baked poses (`marrow_engine::crowd`): the table holds every baked skinning matrix
// as three rows (clip-major, then frame, then bone); an instance picks its clip, phase and speed,
// and `frame.params.w` is the crowd's time. The palette fetch becomes a fetch of two frames and
// a blend (the CPU reference: `BakedPoses::palette_at`).

struct CrowdClip {
    offset: u32,
    frames: u32,
    bones: u32,
    looping: u32,
    duration: f32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
};

struct CrowdInstance {
    row0: vec4<f32>,
    row1: vec4<f32>,
    row2: vec4<f32>,
    clip: u32,
    phase: f32,
    speed: f32,
    tint: u32,
};

@group(1) @binding(2) var<storage, read> crowd_table: array<vec4<f32>>;
@group(1) @binding(3) var<storage, read> crowd_clips: array<CrowdClip>;
@group(1) @binding(4) var<storage, read> crowd_instances: array<CrowdInstance>;

fn affine_rows(r0: vec4<f32>, r1: vec4<f32>, r2: vec4<f32>) -> mat4x4<f32> {
    return transpose(mat4x4<f32>(r0, r1, r2, vec4<f32>(0.0, 0.0, 0.0, 1.0)));
}

fn crowd_world(c: CrowdInstance) -> mat4x4<f32> {
    return affine_rows(c.row0, c.row1, c.row2);
}

// The two bracketing frames' first matrices (bone 0) and the blend between them
// (`marrow_engine::crowd::frame_pair`).
struct CrowdFrames {
    base0: u32,
    base1: u32,
    t: f32,
};

fn crowd_frames(c: CrowdInstance) -> CrowdFrames {
    let clip = crowd_clips[c.clip];
    var out: CrowdFrames;
    out.base0 = clip.offset;
    out.base1 = clip.offset;
    out.t = 0.0;
    let frames = max(clip.frames, 1u);
    let d = clip.duration;
    if (!(d > 0.0) || frames == 1u) {
        return out;
    }
    let local = c.phase * d + frame.params.w * c.speed;
    var f0 = 0u;
    var f1 = 0u;
    var x = 0.0;
    if (clip.looping != 0u) {
        x = fract(local / d) * f32(frames);
        f0 = min(u32(floor(x)), frames - 1u);
        f1 = (f0 + 1u) % frames;
    } else {
        x = clamp(local / d, 0.0, 1.0) * f32(frames - 1u);
        f0 = min(u32(floor(x)), frames - 2u);
        f1 = f0 + 1u;
    }
    out.base0 = clip.offset + f0 * clip.bones;
    out.base1 = clip.offset + f1 * clip.bones;
    out.t = clamp(x - f32(f0), 0.0, 1.0);
    return out;
}

fn crowd_bone(f: CrowdFrames, bone: u32) -> mat4x4<f32> {
    let a = (f.base0 + bone) * 3u;
    let b = (f.base1 + bone) * 3u;
    return affine_rows(
        mix(crowd_table[a], crowd_table[b], f.t),
        mix(crowd_table[a + 1u], crowd_table[b + 1u], f.t),
        mix(crowd_table[a + 2u], crowd_table[b + 2u], f.t),
    );
}

fn crowd_skin_matrix(c: CrowdInstance, joints: vec4<u32>, weights: vec4<f32>) -> mat4x4<f32> {
    let f = crowd_frames(c);
    return crowd_bone(f, joints.x) * weights.x
        + crowd_bone(f, joints.y) * weights.y
        + crowd_bone(f, joints.z) * weights.z
        + crowd_bone(f, joints.w) * weights.w;
}
#endif
