// Mesh drawing: forward shading with a directional light and a shadow map, the depth pre-pass,
// the shadow pass and the outline (inverse hull) pass. Compiled three times: as is for static
// meshes, with `#define SKINNED` for skinned ones (a second vertex stream, posed by
// skinning.wgsl from the frame's palette), and with `SKINNED` and `CROWD` for crowd instances
// (posed from the baked table; the instance index is the crowd instance's).

#import common
#import skinning
#import lighting

// The object's base colour texture (a white texel when it has none).
@group(3) @binding(0) var base_color_texture: texture_2d<f32>;
@group(3) @binding(1) var base_color_sampler: sampler;

struct VertexIn {
    @builtin(instance_index) instance: u32,
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) tangent: vec4<f32>,
    @location(3) uv: vec2<f32>,
    @location(6) color: vec4<f32>,
#ifdef SKINNED
    @location(4) joints: vec4<u32>,
    @location(5) weights: vec4<f32>,
#endif
};

fn world_position(v: VertexIn) -> vec3<f32> {
#ifdef CROWD
    let c = crowd_instances[v.instance];
    return skinned_world_position(crowd_world(c), crowd_skin_matrix(c, v.joints, v.weights), v.position);
#else
    let o = objects[v.instance];
#ifdef SKINNED
    return skinned_world_position(o.world_from_model, skin_matrix(o.palette_offset, v.joints, v.weights), v.position);
#else
    return (o.world_from_model * vec4<f32>(v.position, 1.0)).xyz;
#endif
#endif
}

fn world_normal(v: VertexIn) -> vec3<f32> {
#ifdef CROWD
    let c = crowd_instances[v.instance];
    return skinned_world_normal(crowd_world(c), crowd_skin_matrix(c, v.joints, v.weights), v.normal);
#else
    let o = objects[v.instance];
#ifdef SKINNED
    return skinned_world_normal(o.world_from_model, skin_matrix(o.palette_offset, v.joints, v.weights), v.normal);
#else
    return normalize((o.world_from_model * vec4<f32>(v.normal, 0.0)).xyz);
#endif
#endif
}

// The object's base colour (a crowd instance's tint).
fn base_factor(instance: u32) -> vec4<f32> {
#ifdef CROWD
    return unpack4x8unorm(crowd_instances[instance].tint);
#else
    return objects[instance].color;
#endif
}

struct DepthOut {
    @builtin(position) @invariant clip: vec4<f32>,
};

// Depth pre-pass (camera) and shadow pass (light): positions only.
@vertex
fn vs_depth(v: VertexIn) -> DepthOut {
    var out: DepthOut;
    out.clip = frame.clip_from_world * vec4<f32>(world_position(v), 1.0);
    return out;
}

@vertex
fn vs_shadow(v: VertexIn) -> DepthOut {
    var out: DepthOut;
    out.clip = frame.light_clip_from_world * vec4<f32>(world_position(v), 1.0);
    return out;
}

struct ForwardOut {
    @builtin(position) @invariant clip: vec4<f32>,
    @location(0) world: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) @interpolate(flat) instance: u32,
    @location(3) uv: vec2<f32>,
    @location(4) color: vec4<f32>,
};

@vertex
fn vs_forward(v: VertexIn) -> ForwardOut {
    var out: ForwardOut;
    let world = world_position(v);
    out.clip = frame.clip_from_world * vec4<f32>(world, 1.0);
    out.world = world;
    out.normal = world_normal(v);
    out.instance = v.instance;
    out.uv = v.uv;
    out.color = v.color;
    return out;
}

@fragment
fn fs_forward(in: ForwardOut) -> @location(0) vec4<f32> {
    let n = normalize(in.normal);
    let l = -normalize(frame.light_direction.xyz);
    let n_dot_l = max(dot(n, l), 0.0);
    let shadow = shadow_factor(in.world, n_dot_l);
    let v = normalize(frame.camera_position.xyz - in.world);
    let h = normalize(l + v);
    let spec = pow(max(dot(n, h), 0.0), 32.0) * 0.25 * shadow;
    let base = base_factor(in.instance).rgb * textureSample(base_color_texture, base_color_sampler, in.uv).rgb * in.color.rgb;
    let diffuse = base * (frame.ambient.rgb + frame.light_color.rgb * n_dot_l * shadow);
    return vec4<f32>(diffuse + vec3<f32>(spec), 1.0);
}

// Onion skins: a ghost of a rig at another time, in its object's colour, lit softly (no texture,
// no shadow) and translucent by the colour's alpha.
@fragment
fn fs_ghost(in: ForwardOut) -> @location(0) vec4<f32> {
    let n = normalize(in.normal);
    let l = -normalize(frame.light_direction.xyz);
    let tint = base_factor(in.instance);
    let shade = 0.6 + 0.4 * max(dot(n, l), 0.0);
    return vec4<f32>(tint.rgb * shade, tint.a);
}

// Outline mask: the silhouettes of the objects flagged for the outline (the others are moved
// behind the near plane, clipped away); outline.wgsl then draws around them.
@vertex
fn vs_mask(v: VertexIn) -> DepthOut {
    var out: DepthOut;
    if ((objects[v.instance].flags & 1u) == 0u) {
        out.clip = vec4<f32>(0.0, 0.0, -2.0, 1.0);
        return out;
    }
    out.clip = frame.clip_from_world * vec4<f32>(world_position(v), 1.0);
    return out;
}

@fragment
fn fs_mask() -> @location(0) vec4<f32> {
    return vec4<f32>(1.0);
}

// Picking: every visible object writes its pick id into an R32Uint target.
@fragment
fn fs_pick(in: ForwardOut) -> @location(0) u32 {
    return objects[in.instance].pick_id;
}
