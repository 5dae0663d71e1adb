// Screen-space selection outline: the outlined objects' silhouettes were drawn into a mask;
// this full-screen pass paints the outline colour on every pixel outside the mask that has a
// masked pixel within the outline width (frame.params.x, in pixels), so the outline follows
// the silhouette whatever the mesh's normals are.

#import common

@group(1) @binding(0) var mask: texture_2d<f32>;

struct OutlineOut {
    @builtin(position) clip: vec4<f32>,
};

@vertex
fn vs_fullscreen(@builtin(vertex_index) i: u32) -> OutlineOut {
    var out: OutlineOut;
    let x = f32((i << 1u) & 2u);
    let y = f32(i & 2u);
    out.clip = vec4<f32>(x * 2.0 - 1.0, 1.0 - y * 2.0, 0.0, 1.0);
    return out;
}

@fragment
fn fs_outline(in: OutlineOut) -> @location(0) vec4<f32> {
    let size = vec2<i32>(textureDimensions(mask));
    let p = vec2<i32>(in.clip.xy);
    if (textureLoad(mask, p, 0).r > 0.5) {
        discard;
    }
    let r = i32(clamp(frame.params.x, 1.0, 8.0));
    var hit = 0.0;
    for (var dy = -r; dy <= r; dy++) {
        for (var dx = -r; dx <= r; dx++) {
            if (dx * dx + dy * dy > r * r) {
                continue;
            }
            let q = clamp(p + vec2<i32>(dx, dy), vec2<i32>(0), size - vec2<i32>(1));
            hit = max(hit, textureLoad(mask, q, 0).r);
        }
    }
    if (hit < 0.5) {
        discard;
    }
    return frame.outline_color;
}
