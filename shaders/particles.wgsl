// Particle clouds: one camera-facing disc per particle (six vertices, no vertex buffer), lit by
// the particle's own normal with the shadow map, in the depth pre-pass, the forward pass and
// the shadow pass (where the disc faces the light). Positions arrive posed (particle skinning
// and springs run on the CPU); this shader only places and shades the discs.

#import common
#import lighting

struct Particle {
    position: vec3<f32>,
    radius: f32,
    normal: vec3<f32>,
    // RGBA8, linear.
    color: u32,
};

@group(1) @binding(0) var<storage, read> particles: array<Particle>;

const CORNERS = array<vec2<f32>, 6>(
    vec2<f32>(-1.0, -1.0), vec2<f32>(1.0, -1.0), vec2<f32>(1.0, 1.0),
    vec2<f32>(-1.0, -1.0), vec2<f32>(1.0, 1.0), vec2<f32>(-1.0, 1.0),
);

// A corner of the disc's square around `center`, in the plane facing `toward`.
fn disc_corner(center: vec3<f32>, radius: f32, corner: vec2<f32>, toward: vec3<f32>) -> vec3<f32> {
    let f = normalize(toward);
    let up0 = select(vec3<f32>(0.0, 1.0, 0.0), vec3<f32>(1.0, 0.0, 0.0), abs(f.y) > 0.99);
    let right = normalize(cross(up0, f));
    let up = cross(f, right);
    return center + (right * corner.x + up * corner.y) * radius;
}

struct DiscOut {
    @builtin(position) @invariant clip: vec4<f32>,
    @location(0) corner: vec2<f32>,
    @location(1) world: vec3<f32>,
    @location(2) normal: vec3<f32>,
    @location(3) color: vec4<f32>,
};

fn facing_camera(vertex: u32, instance: u32) -> DiscOut {
    let p = particles[instance];
    let corner = CORNERS[vertex % 6u];
    let world = disc_corner(p.position, p.radius, corner, frame.camera_position.xyz - p.position);
    var out: DiscOut;
    out.clip = frame.clip_from_world * vec4<f32>(world, 1.0);
    out.corner = corner;
    out.world = world;
    out.normal = p.normal;
    out.color = unpack4x8unorm(p.color);
    return out;
}

@vertex
fn vs_depth(@builtin(vertex_index) vertex: u32, @builtin(instance_index) instance: u32) -> DiscOut {
    return facing_camera(vertex, instance);
}

@vertex
fn vs_forward(@builtin(vertex_index) vertex: u32, @builtin(instance_index) instance: u32) -> DiscOut {
    return facing_camera(vertex, instance);
}

@vertex
fn vs_shadow(@builtin(vertex_index) vertex: u32, @builtin(instance_index) instance: u32) -> DiscOut {
    let p = particles[instance];
    let corner = CORNERS[vertex % 6u];
    let world = disc_corner(p.position, p.radius, corner, -frame.light_direction.xyz);
    var out: DiscOut;
    out.clip = frame.light_clip_from_world * vec4<f32>(world, 1.0);
    out.corner = corner;
    out.world = world;
    out.normal = p.normal;
    out.color = vec4<f32>(1.0);
    return out;
}

// Depth-only passes: the square is cut to its disc.
@fragment
fn fs_disc(in: DiscOut) {
    if (dot(in.corner, in.corner) > 1.0) {
        discard;
    }
}

@fragment
fn fs_forward(in: DiscOut) -> @location(0) vec4<f32> {
    if (dot(in.corner, in.corner) > 1.0) {
        discard;
    }
    let l = -normalize(frame.light_direction.xyz);
    let v = normalize(frame.camera_position.xyz - in.world);
    // A particle's normal is a direction only: one facing away from the camera is lit as the
    // side the camera sees (a disc has no back).
    var n = in.normal;
    if (dot(n, n) < 1e-12) {
        n = v;
    }
    n = normalize(n);
    if (dot(n, v) < 0.0) {
        n = -n;
    }
    let n_dot_l = max(dot(n, l), 0.0);
    let shadow = shadow_factor(in.world, n_dot_l);
    let h = normalize(l + v);
    let spec = pow(max(dot(n, h), 0.0), 24.0) * 0.2 * shadow;
    let diffuse = in.color.rgb * (frame.ambient.rgb + frame.light_color.rgb * n_dot_l * shadow);
    return vec4<f32>(diffuse + vec3<f32>(spec), 1.0);
}
