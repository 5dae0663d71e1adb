//! Presenting a rendered [`RenderTarget`] inside another render pass: [`Presenter`] draws the
//! target's colour as a full-screen triangle into whatever viewport the pass has set (the
//! editor's viewport rectangle inside egui's pass). The target is sampled through the view
//! whose encoding matches the output format (the sRGB view for an sRGB output, the raw view
//! otherwise), so colours arrive exactly as rendered.
//!
//! It does not render scenes (see [`super::renderer`]) or own a window.

use super::renderer::{COLOR_FORMAT, RenderTarget, fullscreen_pipeline, texture_sampler_layout};
use super::shader::{ShaderError, ShaderSource};

/// The long-lived presenting pipeline for one output format, and the bind group of the target
/// it presents (rebuilt by [`Presenter::bind`] when the target changes).
#[derive(Debug)]
pub struct Presenter {
    pipeline: wgpu::RenderPipeline,
    layout: wgpu::BindGroupLayout,
    sampler: wgpu::Sampler,
    output: wgpu::TextureFormat,
    group: Option<wgpu::BindGroup>,
}

impl Presenter {
    /// A presenter writing into passes of format `output`.
    pub fn new(device: &wgpu::Device, output: wgpu::TextureFormat) -> Result<Self, ShaderError> {
        let src = ShaderSource::Embedded.compose("present", &[])?;
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("present.wgsl"),
            source: wgpu::ShaderSource::Wgsl(src.into()),
        });
        let layout = texture_sampler_layout(device, "marrow present");
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("marrow present"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = fullscreen_pipeline(
            device,
            "marrow present",
            &pipeline_layout,
            (&module, "vs_present", "fs_present"),
            output,
            None,
        );
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("marrow present"),
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            ..Default::default()
        });
        Ok(Self { pipeline, layout, sampler, output, group: None })
    }

    /// Binds `target` as the image to present.
    pub fn bind(&mut self, device: &wgpu::Device, target: &RenderTarget) {
        let format = if self.output.is_srgb() { COLOR_FORMAT } else { COLOR_FORMAT.remove_srgb_suffix() };
        let view = target
            .color
            .create_view(&wgpu::TextureViewDescriptor { format: Some(format), ..Default::default() });
        self.group = Some(device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("marrow present"),
            layout: &self.layout,
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: wgpu::BindingResource::TextureView(&view) },
                wgpu::BindGroupEntry { binding: 1, resource: wgpu::BindingResource::Sampler(&self.sampler) },
            ],
        }));
    }

    /// Draws the bound target over the pass's current viewport (nothing when none is bound).
    pub fn draw(&self, pass: &mut wgpu::RenderPass<'_>) {
        if let Some(g) = &self.group {
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, g, &[]);
            pass.draw(0..3, 0..1);
        }
    }
}
