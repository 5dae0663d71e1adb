// Presenting a rendered target inside another pass (the editor's viewport in egui's pass): a
// full-screen triangle sampling the target's colour. The pipeline picks the target view whose
// encoding matches the output format, so colours are neither encoded twice nor left linear.

@group(0) @binding(0) var source: texture_2d<f32>;
@group(0) @binding(1) var source_sampler: sampler;

struct PresentOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) uv: vec2<f32>,
};

@vertex
fn vs_present(@builtin(vertex_index) i: u32) -> PresentOut {
    var out: PresentOut;
    let x = f32((i << 1u) & 2u);
    let y = f32(i & 2u);
    out.clip = vec4<f32>(x * 2.0 - 1.0, 1.0 - y * 2.0, 0.0, 1.0);
    out.uv = vec2<f32>(x, y);
    return out;
}

@fragment
fn fs_present(in: PresentOut) -> @location(0) vec4<f32> {
    return textureSample(source, source_sampler, in.uv);
}
