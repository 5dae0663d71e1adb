//! Long-lived GPU state built once per shader set: bind group layouts, the mesh (static,
//! skinned, crowd), particle and line pipelines for each pass, and the bind groups over the
//! renderer's buffers. A shader reload rebuilds [`Pipelines`] and keeps the last good one on
//! failure (the parent module does that).
//!
//! Not here: what is drawn each frame (`passes`), the frame's data (`frame`).

use super::pick::PICK_FORMAT;
use super::{COLOR_FORMAT, CrowdBuffers, DEPTH_FORMAT, MASK_FORMAT};
use crate::render::shader::{ShaderError, ShaderSource};
use crate::render::types::LineVertex;

pub(super) struct Layouts {
    pub(super) frame: wgpu::BindGroupLayout,
    pub(super) objects: wgpu::BindGroupLayout,
    pub(super) particles: wgpu::BindGroupLayout,
    pub(super) particle_forward: wgpu::PipelineLayout,
    pub(super) particle_depth: wgpu::PipelineLayout,
    pub(super) shadow: wgpu::BindGroupLayout,
    pub(super) material: wgpu::BindGroupLayout,
    pub(super) mask: wgpu::BindGroupLayout,
    pub(super) outline: wgpu::PipelineLayout,
    pub(super) debug: wgpu::BindGroupLayout,
    pub(super) forward: wgpu::PipelineLayout,
    pub(super) depth: wgpu::PipelineLayout,
    pub(super) overlay: wgpu::PipelineLayout,
    pub(super) compute: wgpu::PipelineLayout,
}

/// Pipelines indexed `[static, skinned]`.
pub(super) struct Pipelines {
    pub(super) forward: [wgpu::RenderPipeline; 2],
    /// Onion skin ghosts: the forward pass's vertex stage, a soft tint, alpha blended, no depth
    /// writes.
    pub(super) ghost: [wgpu::RenderPipeline; 2],
    pub(super) depth: [wgpu::RenderPipeline; 2],
    pub(super) shadow: [wgpu::RenderPipeline; 2],
    /// Outline mask (silhouettes), then the full-screen outline.
    pub(super) mask: [wgpu::RenderPipeline; 2],
    pub(super) outline: wgpu::RenderPipeline,
    pub(super) pick: [wgpu::RenderPipeline; 2],
    /// Particle discs: forward, depth pre-pass, shadow.
    pub(super) particles: [wgpu::RenderPipeline; 3],
    /// Crowd instances (mesh.wgsl with `SKINNED` and `CROWD`): forward, depth pre-pass, shadow.
    pub(super) crowd: [wgpu::RenderPipeline; 3],
    /// The skinning read-back of a crowd instance.
    pub(super) skin_debug_crowd: wgpu::ComputePipeline,
    pub(super) overlay: wgpu::RenderPipeline,
    pub(super) overlay_depth: wgpu::RenderPipeline,
    pub(super) skin_debug: wgpu::ComputePipeline,
}

pub(super) fn storage_entry(
    binding: u32,
    visibility: wgpu::ShaderStages,
    read_only: bool,
) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

pub(super) fn uniform_entry(binding: u32, visibility: wgpu::ShaderStages) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

pub(super) fn make_layouts(device: &wgpu::Device) -> Layouts {
    use wgpu::ShaderStages as S;
    let all = S::VERTEX | S::FRAGMENT | S::COMPUTE;
    let frame = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("marrow frame"),
        entries: &[uniform_entry(0, all)],
    });
    let objects = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("marrow objects + palette"),
        entries: &[
            storage_entry(0, all, true),
            storage_entry(1, S::VERTEX | S::COMPUTE, true),
            storage_entry(2, S::VERTEX | S::COMPUTE, true),
            storage_entry(3, S::VERTEX | S::COMPUTE, true),
            storage_entry(4, all, true),
        ],
    });
    let particles = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("marrow particles"),
        entries: &[storage_entry(0, S::VERTEX, true)],
    });
    let shadow = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("marrow shadow map"),
        entries: &[
            wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: S::FRAGMENT,
                ty: wgpu::BindingType::Texture {
                    sample_type: wgpu::TextureSampleType::Depth,
                    view_dimension: wgpu::TextureViewDimension::D2,
                    multisampled: false,
                },
                count: None,
            },
            wgpu::BindGroupLayoutEntry {
                binding: 1,
                visibility: S::FRAGMENT,
                ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Comparison),
                count: None,
            },
        ],
    });
    let material = texture_sampler_layout(device, "marrow material");
    let mask = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("marrow outline mask"),
        entries: &[wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: S::FRAGMENT,
            ty: wgpu::BindingType::Texture {
                sample_type: wgpu::TextureSampleType::Float { filterable: false },
                view_dimension: wgpu::TextureViewDimension::D2,
                multisampled: false,
            },
            count: None,
        }],
    });
    let debug = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some("marrow skin debug"),
        entries: &[
            storage_entry(0, S::COMPUTE, true),
            storage_entry(1, S::COMPUTE, true),
            storage_entry(2, S::COMPUTE, false),
            uniform_entry(3, S::COMPUTE),
        ],
    });
    let pl = |label: &str, groups: &[Option<&wgpu::BindGroupLayout>]| {
        device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some(label),
            bind_group_layouts: groups,
            immediate_size: 0,
        })
    };
    Layouts {
        forward: pl("marrow forward", &[Some(&frame), Some(&objects), Some(&shadow), Some(&material)]),
        depth: pl("marrow depth", &[Some(&frame), Some(&objects)]),
        particle_forward: pl("marrow particles forward", &[Some(&frame), Some(&particles), Some(&shadow)]),
        particle_depth: pl("marrow particles depth", &[Some(&frame), Some(&particles)]),
        overlay: pl("marrow overlay", &[Some(&frame)]),
        outline: pl("marrow outline", &[Some(&frame), Some(&mask)]),
        compute: pl("marrow skin debug", &[Some(&frame), Some(&objects), Some(&debug)]),
        frame,
        objects,
        particles,
        shadow,
        material,
        mask,
        debug,
    }
}

pub(super) const VERTEX_ATTRIBUTES: [wgpu::VertexAttribute; 5] =
    wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x3, 2 => Float32x4, 3 => Float32x2, 6 => Unorm8x4];
pub(super) const SKIN_ATTRIBUTES: [wgpu::VertexAttribute; 2] =
    wgpu::vertex_attr_array![4 => Uint16x4, 5 => Float32x4];
pub(super) const LINE_ATTRIBUTES: [wgpu::VertexAttribute; 2] =
    wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x4];

pub(super) fn vertex_layouts(skinned: bool) -> Vec<Option<wgpu::VertexBufferLayout<'static>>> {
    let mut v = vec![Some(wgpu::VertexBufferLayout {
        array_stride: size_of::<crate::render::types::GpuVertex>() as u64,
        step_mode: wgpu::VertexStepMode::Vertex,
        attributes: &VERTEX_ATTRIBUTES,
    })];
    if skinned {
        v.push(Some(wgpu::VertexBufferLayout {
            array_stride: 24,
            step_mode: wgpu::VertexStepMode::Vertex,
            attributes: &SKIN_ATTRIBUTES,
        }));
    }
    v
}

pub(super) struct MeshPipelineDesc<'a> {
    pub(super) label: &'a str,
    pub(super) module: &'a wgpu::ShaderModule,
    pub(super) layout: &'a wgpu::PipelineLayout,
    /// The vertex streams (none for shaders that expand instances from storage).
    pub(super) buffers: &'a [Option<wgpu::VertexBufferLayout<'a>>],
    pub(super) vs: &'a str,
    pub(super) fs: Option<&'a str>,
    pub(super) cull: Option<wgpu::Face>,
    pub(super) depth_write: bool,
    pub(super) compare: wgpu::CompareFunction,
    pub(super) bias: wgpu::DepthBiasState,
    /// The colour target (`None`: a depth-only pass whose fragment stage only discards).
    pub(super) format: Option<wgpu::TextureFormat>,
    /// Blending into the colour target (`None`: replace).
    pub(super) blend: Option<wgpu::BlendState>,
}

pub(super) fn mesh_pipeline(device: &wgpu::Device, d: MeshPipelineDesc<'_>) -> wgpu::RenderPipeline {
    let targets: Vec<Option<wgpu::ColorTargetState>> = d
        .format
        .map(|format| wgpu::ColorTargetState { format, blend: d.blend, write_mask: wgpu::ColorWrites::ALL })
        .into_iter()
        .map(Some)
        .collect();
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some(d.label),
        layout: Some(d.layout),
        vertex: wgpu::VertexState {
            module: d.module,
            entry_point: Some(d.vs),
            compilation_options: Default::default(),
            buffers: d.buffers,
        },
        primitive: wgpu::PrimitiveState {
            topology: wgpu::PrimitiveTopology::TriangleList,
            front_face: wgpu::FrontFace::Ccw,
            cull_mode: d.cull,
            ..Default::default()
        },
        depth_stencil: Some(wgpu::DepthStencilState {
            format: DEPTH_FORMAT,
            depth_write_enabled: Some(d.depth_write),
            depth_compare: Some(d.compare),
            stencil: Default::default(),
            bias: d.bias,
        }),
        multisample: Default::default(),
        fragment: d.fs.map(|fs| wgpu::FragmentState {
            module: d.module,
            entry_point: Some(fs),
            compilation_options: Default::default(),
            targets: &targets,
        }),
        multiview_mask: None,
        cache: None,
    })
}

/// A fragment-stage bind group layout of a filterable 2D texture (binding 0) and its filtering
/// sampler (binding 1).
pub(crate) fn texture_sampler_layout(device: &wgpu::Device, label: &str) -> wgpu::BindGroupLayout {
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(label),
        entries: &[
            wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Texture {
                    sample_type: wgpu::TextureSampleType::Float { filterable: true },
                    view_dimension: wgpu::TextureViewDimension::D2,
                    multisampled: false,
                },
                count: None,
            },
            wgpu::BindGroupLayoutEntry {
                binding: 1,
                visibility: wgpu::ShaderStages::FRAGMENT,
                ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                count: None,
            },
        ],
    })
}

/// A pipeline drawing one full-screen triangle (no vertex buffers, no depth) from `shader`'s
/// (module, vertex entry, fragment entry) into one `format` target.
pub(crate) fn fullscreen_pipeline(
    device: &wgpu::Device,
    label: &str,
    layout: &wgpu::PipelineLayout,
    (module, vs, fs): (&wgpu::ShaderModule, &str, &str),
    format: wgpu::TextureFormat,
    blend: Option<wgpu::BlendState>,
) -> wgpu::RenderPipeline {
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some(label),
        layout: Some(layout),
        vertex: wgpu::VertexState {
            module,
            entry_point: Some(vs),
            compilation_options: Default::default(),
            buffers: &[],
        },
        primitive: Default::default(),
        depth_stencil: None,
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module,
            entry_point: Some(fs),
            compilation_options: Default::default(),
            targets: &[Some(wgpu::ColorTargetState { format, blend, write_mask: wgpu::ColorWrites::ALL })],
        }),
        multiview_mask: None,
        cache: None,
    })
}

/// The particle discs' pipelines: forward (colour, LEQUAL against the pre-pass, no depth
/// writes), depth pre-pass and shadow (depth only, the fragment stage cutting the disc).
pub(super) fn particle_pipelines(
    device: &wgpu::Device,
    layouts: &Layouts,
    module: &wgpu::ShaderModule,
) -> [wgpu::RenderPipeline; 3] {
    let make = |label, layout, vs, fs, color: bool, bias| {
        mesh_pipeline(
            device,
            MeshPipelineDesc {
                label,
                module,
                layout,
                buffers: &[],
                vs,
                fs: Some(fs),
                cull: None,
                depth_write: !color,
                compare: wgpu::CompareFunction::LessEqual,
                bias,
                format: color.then_some(COLOR_FORMAT),
                blend: None,
            },
        )
    };
    let none = wgpu::DepthBiasState::default();
    let shadow_bias = wgpu::DepthBiasState { constant: 2, slope_scale: 2.0, clamp: 0.0 };
    [
        make("marrow particles forward", &layouts.particle_forward, "vs_forward", "fs_forward", true, none),
        make("marrow particles depth", &layouts.particle_depth, "vs_depth", "fs_disc", false, none),
        make("marrow particles shadow", &layouts.particle_depth, "vs_shadow", "fs_disc", false, shadow_bias),
    ]
}

/// The description of a mesh pass's pipeline (`kind`: forward, depth, shadow, pick or the
/// outline mask) over `module` and the vertex `streams`.
pub(super) fn mesh_pass_desc<'a>(
    layouts: &'a Layouts,
    m: &'a wgpu::ShaderModule,
    skinned: &'a [Option<wgpu::VertexBufferLayout<'a>>],
    kind: &str,
) -> MeshPipelineDesc<'a> {
    let none = wgpu::DepthBiasState::default();
    match kind {
        "forward" => MeshPipelineDesc {
            label: "marrow forward",
            module: m,
            layout: &layouts.forward,
            buffers: skinned,
            vs: "vs_forward",
            fs: Some("fs_forward"),
            cull: None,
            depth_write: false,
            compare: wgpu::CompareFunction::LessEqual,
            bias: none,
            format: Some(COLOR_FORMAT),
            blend: None,
        },
        "ghost" => MeshPipelineDesc {
            label: "marrow onion ghost",
            module: m,
            layout: &layouts.forward,
            buffers: skinned,
            vs: "vs_forward",
            fs: Some("fs_ghost"),
            cull: Some(wgpu::Face::Back),
            depth_write: false,
            compare: wgpu::CompareFunction::LessEqual,
            bias: none,
            format: Some(COLOR_FORMAT),
            blend: Some(wgpu::BlendState::ALPHA_BLENDING),
        },
        "depth" => MeshPipelineDesc {
            label: "marrow depth pre-pass",
            module: m,
            layout: &layouts.depth,
            buffers: skinned,
            vs: "vs_depth",
            fs: None,
            cull: None,
            depth_write: true,
            compare: wgpu::CompareFunction::LessEqual,
            bias: none,
            format: Some(COLOR_FORMAT),
            blend: None,
        },
        "shadow" => MeshPipelineDesc {
            label: "marrow shadow",
            module: m,
            layout: &layouts.depth,
            buffers: skinned,
            vs: "vs_shadow",
            fs: None,
            cull: None,
            depth_write: true,
            compare: wgpu::CompareFunction::LessEqual,
            bias: wgpu::DepthBiasState { constant: 2, slope_scale: 2.0, clamp: 0.0 },
            format: Some(COLOR_FORMAT),
            blend: None,
        },
        "pick" => MeshPipelineDesc {
            label: "marrow pick",
            module: m,
            layout: &layouts.depth,
            buffers: skinned,
            vs: "vs_forward",
            fs: Some("fs_pick"),
            cull: None,
            depth_write: true,
            compare: wgpu::CompareFunction::LessEqual,
            bias: none,
            format: Some(PICK_FORMAT),
            blend: None,
        },
        _ => MeshPipelineDesc {
            label: "marrow outline mask",
            module: m,
            layout: &layouts.depth,
            buffers: skinned,
            vs: "vs_mask",
            fs: Some("fs_mask"),
            cull: None,
            depth_write: false,
            compare: wgpu::CompareFunction::LessEqual,
            bias: none,
            format: Some(MASK_FORMAT),
            blend: None,
        },
    }
}

/// An overlay line pipeline (`compare`: whether the lines are depth tested).
pub(super) fn line_pipeline(
    device: &wgpu::Device,
    layouts: &Layouts,
    overlay_module: &wgpu::ShaderModule,
    label: &str,
    compare: wgpu::CompareFunction,
) -> wgpu::RenderPipeline {
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some(label),
        layout: Some(&layouts.overlay),
        vertex: wgpu::VertexState {
            module: overlay_module,
            entry_point: Some("vs_line"),
            compilation_options: Default::default(),
            buffers: &[Some(wgpu::VertexBufferLayout {
                array_stride: size_of::<LineVertex>() as u64,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &LINE_ATTRIBUTES,
            })],
        },
        primitive: wgpu::PrimitiveState { topology: wgpu::PrimitiveTopology::LineList, ..Default::default() },
        depth_stencil: Some(wgpu::DepthStencilState {
            format: DEPTH_FORMAT,
            depth_write_enabled: Some(false),
            depth_compare: Some(compare),
            stencil: Default::default(),
            bias: Default::default(),
        }),
        multisample: Default::default(),
        fragment: Some(wgpu::FragmentState {
            module: overlay_module,
            entry_point: Some("fs_line"),
            compilation_options: Default::default(),
            targets: &[Some(wgpu::ColorTargetState {
                format: COLOR_FORMAT,
                blend: Some(wgpu::BlendState::ALPHA_BLENDING),
                write_mask: wgpu::ColorWrites::ALL,
            })],
        }),
        multiview_mask: None,
        cache: None,
    })
}

pub(super) fn build_pipelines(
    device: &wgpu::Device,
    layouts: &Layouts,
    source: &ShaderSource,
) -> Result<Pipelines, ShaderError> {
    // Compose and validate everything first (readable naga errors), then create the device
    // objects inside an error scope so a late failure is reported, not fatal.
    let mesh_src = [source.compose("mesh", &[])?, source.compose("mesh", &["SKINNED"])?];
    let crowd_src = source.compose("mesh", &["SKINNED", "CROWD"])?;
    let debug_src = source.compose("skin_debug", &[])?;
    let debug_crowd_src = source.compose("skin_debug", &["CROWD"])?;
    let overlay_src = source.compose("overlay", &[])?;
    let outline_src = source.compose("outline", &[])?;
    let particles_src = source.compose("particles", &[])?;
    let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let module = |label: &str, src: &str| {
        device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some(label),
            source: wgpu::ShaderSource::Wgsl(src.into()),
        })
    };
    let mesh = [
        module("mesh.wgsl", &mesh_src[0]),
        module("mesh.wgsl SKINNED", &mesh_src[1]),
        module("mesh.wgsl SKINNED CROWD", &crowd_src),
    ];
    let streams = [vertex_layouts(false), vertex_layouts(true)];
    // `which`: 0 static, 1 skinned, 2 crowd (skinned streams).
    let make = |which: usize, kind: &str| {
        let skinned = which > 0;
        let skinned = &streams[skinned as usize][..];
        mesh_pipeline(device, mesh_pass_desc(layouts, &mesh[which], skinned, kind))
    };
    let particles = particle_pipelines(device, layouts, &module("particles.wgsl", &particles_src));
    let overlay_module = module("overlay.wgsl", &overlay_src);
    let overlay =
        line_pipeline(device, layouts, &overlay_module, "marrow overlay", wgpu::CompareFunction::Always);
    let overlay_depth = line_pipeline(
        device,
        layouts,
        &overlay_module,
        "marrow overlay (depth tested)",
        wgpu::CompareFunction::LessEqual,
    );
    let outline_module = module("outline.wgsl", &outline_src);
    let outline_pipeline = fullscreen_pipeline(
        device,
        "marrow outline",
        &layouts.outline,
        (&outline_module, "vs_fullscreen", "fs_outline"),
        COLOR_FORMAT,
        Some(wgpu::BlendState::ALPHA_BLENDING),
    );
    let compute = |label: &str, src: &str| {
        let m = module(label, src);
        device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some(label),
            layout: Some(&layouts.compute),
            module: &m,
            entry_point: Some("cs_skin"),
            compilation_options: Default::default(),
            cache: None,
        })
    };
    let skin_debug = compute("skin_debug.wgsl", &debug_src);
    let skin_debug_crowd = compute("skin_debug.wgsl CROWD", &debug_crowd_src);
    let pipelines = Pipelines {
        forward: [make(0, "forward"), make(1, "forward")],
        ghost: [make(0, "ghost"), make(1, "ghost")],
        depth: [make(0, "depth"), make(1, "depth")],
        shadow: [make(0, "shadow"), make(1, "shadow")],
        mask: [make(0, "mask"), make(1, "mask")],
        outline: outline_pipeline,
        pick: [make(0, "pick"), make(1, "pick")],
        particles,
        crowd: [make(2, "forward"), make(2, "depth"), make(2, "shadow")],
        skin_debug_crowd,
        overlay,
        overlay_depth,
        skin_debug,
    };
    if let Some(e) = pollster::block_on(scope.pop()) {
        return Err(ShaderError::Device { file: "pipelines".into(), message: e.to_string() });
    }
    Ok(pipelines)
}

pub(super) fn objects_group(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    objects: &wgpu::Buffer,
    palette: &wgpu::Buffer,
    crowd: &CrowdBuffers,
) -> wgpu::BindGroup {
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("marrow objects + palette + crowd"),
        layout,
        entries: &[
            wgpu::BindGroupEntry { binding: 0, resource: objects.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 1, resource: palette.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 2, resource: crowd.table.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 3, resource: crowd.clips.as_entire_binding() },
            wgpu::BindGroupEntry { binding: 4, resource: crowd.instances.as_entire_binding() },
        ],
    })
}

pub(super) fn particles_group(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    buffer: &wgpu::Buffer,
) -> wgpu::BindGroup {
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("marrow particles"),
        layout,
        entries: &[wgpu::BindGroupEntry { binding: 0, resource: buffer.as_entire_binding() }],
    })
}

pub(super) fn material_group(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    view: &wgpu::TextureView,
    sampler: &wgpu::Sampler,
) -> wgpu::BindGroup {
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("marrow material"),
        layout,
        entries: &[
            wgpu::BindGroupEntry { binding: 0, resource: wgpu::BindingResource::TextureView(view) },
            wgpu::BindGroupEntry { binding: 1, resource: wgpu::BindingResource::Sampler(sampler) },
        ],
    })
}
