// Shared lighting: the shadow map (group 2) and its 3x3 PCF lookup. Imported with
// `#import lighting` (after `#import common`) by the mesh and particle shaders.

@group(2) @binding(0) var shadow_map: texture_depth_2d;
@group(2) @binding(1) var shadow_sampler: sampler_comparison;

fn shadow_factor(world: vec3<f32>, n_dot_l: f32) -> f32 {
    let light_clip = frame.light_clip_from_world * vec4<f32>(world, 1.0);
    let ndc = light_clip.xyz / light_clip.w;
    let uv = vec2<f32>(ndc.x * 0.5 + 0.5, 0.5 - ndc.y * 0.5);
    let bias = frame.params.z * (1.0 + 2.0 * (1.0 - n_dot_l));
    let depth = ndc.z - bias;
    let texel = frame.params.y;
    var lit = 0.0;
    for (var y = -1; y <= 1; y++) {
        for (var x = -1; x <= 1; x++) {
            let offset = vec2<f32>(f32(x), f32(y)) * texel;
            lit += textureSampleCompareLevel(shadow_map, shadow_sampler, uv + offset, depth);
        }
    }
    lit = lit / 9.0;
    let outside = any(uv < vec2<f32>(0.0)) || any(uv > vec2<f32>(1.0)) || ndc.z > 1.0;
    return select(lit, 1.0, outside);
}
