//! Picking (an id target drawn on demand, read around a pixel) and read-back of colour, depth,
//! the shadow map and GPU-skinned positions (for tests and offline renders).
//!
//! Not here: drawing frames (`passes`).

use glam::Mat4;

use super::passes::{depth_attachment, draw_runs};
use super::pipelines::objects_group;
use super::{
    DEPTH_FORMAT, DrawObject, FrameData, FrameStats, RenderTarget, Renderer, check_target_size, mat,
};
use crate::render::RenderError;
use crate::render::gpu::GpuContext;
use crate::render::mesh::{MeshHandle, MeshPool};
use crate::render::types::{GpuDebugParams, GpuObject};

/// Where [`Renderer::pick`] looks: a `width` x `height` image (the viewport's) and the pixel
/// `(x, y)` in it, accepting the nearest object within `radius` pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PickRequest {
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    /// Pixel column.
    pub x: u32,
    /// Pixel row.
    pub y: u32,
    /// Search radius in pixels.
    pub radius: u32,
}

/// The id target of the picking pass (R32Uint colour + depth), kept while its size holds.
pub(super) struct PickTarget {
    pub(super) width: u32,
    pub(super) height: u32,
    pub(super) ids: wgpu::Texture,
    pub(super) ids_view: wgpu::TextureView,
    pub(super) depth_view: wgpu::TextureView,
}

/// The format of the picking pass's id target.
pub(super) const PICK_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::R32Uint;

impl PickTarget {
    pub(super) fn new(device: &wgpu::Device, width: u32, height: u32) -> Self {
        let size = wgpu::Extent3d { width, height, depth_or_array_layers: 1 };
        let tex = |label: &str, format, usage| {
            device.create_texture(&wgpu::TextureDescriptor {
                label: Some(label),
                size,
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage,
                view_formats: &[],
            })
        };
        use wgpu::TextureUsages as T;
        let ids = tex("marrow pick ids", PICK_FORMAT, T::RENDER_ATTACHMENT | T::COPY_SRC);
        let depth = tex("marrow pick depth", DEPTH_FORMAT, T::RENDER_ATTACHMENT);
        Self {
            width,
            height,
            ids_view: ids.create_view(&Default::default()),
            depth_view: depth.create_view(&Default::default()),
            ids,
        }
    }
}

/// Reads a whole buffer back (blocking).
pub(super) fn read_buffer(ctx: &GpuContext, buffer: &wgpu::Buffer) -> Result<Vec<u8>, RenderError> {
    let slice = buffer.slice(..);
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    ctx.wait_idle();
    rx.recv()
        .map_err(|e| RenderError::Readback(e.to_string()))?
        .map_err(|e| RenderError::Readback(e.to_string()))?;
    let bytes = slice.get_mapped_range().map_err(|e| RenderError::Readback(e.to_string()))?.to_vec();
    buffer.unmap();
    Ok(bytes)
}

impl Renderer {
    /// Renders the id pass of `frame` at the request's size and returns the pick id under its
    /// pixel (or the nearest non-zero id within its radius; `None`: nothing there). Objects write
    /// their [`DrawObject::pick_id`]; 0 is background. Blocks on the read-back.
    pub fn pick(
        &mut self,
        pool: &MeshPool,
        frame: &FrameData,
        request: PickRequest,
    ) -> Result<Option<u32>, RenderError> {
        let PickRequest { width, height, x, y, radius } = request;
        let (width, height) = (width.max(1), height.max(1));
        if x >= width || y >= height {
            return Ok(None);
        }
        let mut stats = FrameStats::default();
        self.prepare(pool, frame, width as f32 / height as f32, &mut stats)?;
        let device = &self.ctx.device;
        if self.pick_target.as_ref().is_none_or(|t| t.width != width || t.height != height) {
            self.pick_target = Some(PickTarget::new(device, width, height));
        }
        let target = self.pick_target.as_ref().expect("created above");
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("marrow pick pass"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: &target.ids_view,
                    depth_slice: None,
                    resolve_target: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color::TRANSPARENT),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: Some(depth_attachment(&target.depth_view, true)),
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            pass.set_bind_group(0, &self.frame_group, &[]);
            pass.set_bind_group(1, &self.objects_group, &[]);
            draw_runs(&mut pass, pool, &self.runs, &self.pipelines.pick, |r| r.visible, &mut stats);
        }
        // Read a (2r+1)^2 window around the pixel, clamped to the target.
        let x0 = x.saturating_sub(radius);
        let y0 = y.saturating_sub(radius);
        let w = (x + radius + 1).min(width) - x0;
        let h = (y + radius + 1).min(height) - y0;
        let row = (w * 4).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
        let read = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("marrow pick read"),
            size: (row * h) as u64,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        encoder.copy_texture_to_buffer(
            wgpu::TexelCopyTextureInfo {
                texture: &target.ids,
                mip_level: 0,
                origin: wgpu::Origin3d { x: x0, y: y0, z: 0 },
                aspect: wgpu::TextureAspect::All,
            },
            wgpu::TexelCopyBufferInfo {
                buffer: &read,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(row),
                    rows_per_image: Some(h),
                },
            },
            wgpu::Extent3d { width: w, height: h, depth_or_array_layers: 1 },
        );
        self.ctx.queue.submit([encoder.finish()]);
        let bytes = read_buffer(&self.ctx, &read)?;
        let mut best: Option<(u32, u32)> = None;
        for j in 0..h {
            for i in 0..w {
                let at = (j * row + i * 4) as usize;
                let id = u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
                if id == 0 {
                    continue;
                }
                let (dx, dy) = ((x0 + i).abs_diff(x), (y0 + j).abs_diff(y));
                let d = dx * dx + dy * dy;
                if d <= radius * radius && best.is_none_or(|(bd, _)| d < bd) {
                    best = Some((d, id));
                }
            }
        }
        Ok(best.map(|(_, id)| id))
    }

    /// Reads a target's colour back as tightly packed RGBA8 rows (sRGB-encoded). Blocks.
    pub fn read_color(&self, target: &RenderTarget) -> Result<Vec<u8>, RenderError> {
        self.read_texture(&target.color, target.width, target.height, 4)
    }

    /// Reads a target's depth back (one value per pixel, row-major; 1.0 = far). Blocks.
    pub fn read_depth(&self, target: &RenderTarget) -> Result<Vec<f32>, RenderError> {
        let bytes = self.read_texture(&target.depth, target.width, target.height, 4)?;
        Ok(bytemuck::pod_collect_to_vec(&bytes))
    }

    /// Reads the shadow map back (one depth per texel, row-major). Blocks.
    pub fn read_shadow_map(&self) -> Result<Vec<f32>, RenderError> {
        let (w, h) = (self.shadow_texture.width(), self.shadow_texture.height());
        let bytes = self.read_texture(&self.shadow_texture, w, h, 4)?;
        Ok(bytemuck::pod_collect_to_vec(&bytes))
    }

    pub(super) fn read_texture(
        &self,
        texture: &wgpu::Texture,
        w: u32,
        h: u32,
        texel: u32,
    ) -> Result<Vec<u8>, RenderError> {
        check_target_size(&self.ctx.device, w, h, texel)?;
        let row = w * texel;
        let padded = row.div_ceil(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) * wgpu::COPY_BYTES_PER_ROW_ALIGNMENT;
        let buffer = self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("marrow read-back"),
            size: u64::from(padded) * u64::from(h),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = self.ctx.device.create_command_encoder(&Default::default());
        encoder.copy_texture_to_buffer(
            wgpu::TexelCopyTextureInfo {
                texture,
                mip_level: 0,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            wgpu::TexelCopyBufferInfo {
                buffer: &buffer,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(padded),
                    rows_per_image: Some(h),
                },
            },
            wgpu::Extent3d { width: w, height: h, depth_or_array_layers: 1 },
        );
        self.ctx.queue.submit([encoder.finish()]);
        let bytes = read_buffer(&self.ctx, &buffer)?;
        let mut out = Vec::with_capacity((row * h) as usize);
        for y in 0..h as usize {
            out.extend_from_slice(&bytes[y * padded as usize..][..row as usize]);
        }
        Ok(out)
    }

    /// Debug read-back: runs the renderer's `skinned_world_position` (shaders/skinning.wgsl)
    /// in a compute pass over `object`'s mesh with `palette`, and returns the world positions.
    /// Fails for a static mesh or an unknown handle. Allocates (debug only).
    pub fn skinned_positions(
        &self,
        pool: &MeshPool,
        object: &DrawObject,
        palette: &[Mat4],
    ) -> Result<Vec<[f32; 3]>, RenderError> {
        use wgpu::util::DeviceExt;
        let device = &self.ctx.device;
        let init = |label: &str, bytes: &[u8]| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytes,
                usage: wgpu::BufferUsages::STORAGE,
            })
        };
        let obj = GpuObject {
            world_from_model: mat(&object.world_from_model),
            color: object.color,
            palette_offset: object.palette_offset,
            flags: 0,
            pick_id: 0,
            pad: 0,
        };
        let objects = init("debug objects", bytemuck::bytes_of(&obj));
        let mut pal: Vec<[[f32; 4]; 4]> = palette.iter().map(mat).collect();
        if pal.is_empty() {
            pal.push(mat(&Mat4::IDENTITY));
        }
        let palette_buf = init("debug palette", bytemuck::cast_slice(&pal));
        let og = objects_group(device, &self.layouts.objects, &objects, &palette_buf, &self.crowd_buffers);
        self.read_skinned(pool, object.mesh, &og, &self.pipelines.skin_debug, 0)
    }

    /// Debug read-back of crowd instance `instance` drawn with `mesh`: the crowd vertex shader's
    /// skinning (the baked table's two frames blended, at the crowd time) over the mesh, with the
    /// crowd data and frame uniform of the last [`Renderer::render`]. World positions out.
    pub fn crowd_skinned_positions(
        &self,
        pool: &MeshPool,
        mesh: MeshHandle,
        instance: u32,
    ) -> Result<Vec<[f32; 3]>, RenderError> {
        self.read_skinned(pool, mesh, &self.objects_group, &self.pipelines.skin_debug_crowd, instance)
    }

    pub(super) fn read_skinned(
        &self,
        pool: &MeshPool,
        handle: MeshHandle,
        objects: &wgpu::BindGroup,
        pipeline: &wgpu::ComputePipeline,
        object: u32,
    ) -> Result<Vec<[f32; 3]>, RenderError> {
        use wgpu::BufferUsages as U;
        use wgpu::util::DeviceExt;
        let device = &self.ctx.device;
        let mesh = pool.get(handle).ok_or(RenderError::UnknownMesh(handle.0))?;
        let skin = mesh
            .skin
            .as_ref()
            .ok_or(RenderError::Mesh("a skinning read-back needs a skinned mesh".into()))?;
        let n = mesh.vertex_count;
        let params = GpuDebugParams { object, count: n, pad: [0; 2] };
        let params_buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("debug params"),
            contents: bytemuck::bytes_of(&params),
            usage: U::UNIFORM,
        });
        let out_size = n as u64 * size_of::<[f32; 4]>() as u64;
        let out = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("debug out"),
            size: out_size,
            usage: U::STORAGE | U::COPY_SRC,
            mapped_at_creation: false,
        });
        let read = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("debug read"),
            size: out_size,
            usage: U::MAP_READ | U::COPY_DST,
            mapped_at_creation: false,
        });
        let dg = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("debug streams"),
            layout: &self.layouts.debug,
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: mesh.vertices.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: skin.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 2, resource: out.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 3, resource: params_buf.as_entire_binding() },
            ],
        });
        let mut encoder = device.create_command_encoder(&Default::default());
        {
            let mut pass = encoder.begin_compute_pass(&Default::default());
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &self.frame_group, &[]);
            pass.set_bind_group(1, objects, &[]);
            pass.set_bind_group(2, &dg, &[]);
            pass.dispatch_workgroups(n.div_ceil(64), 1, 1);
        }
        encoder.copy_buffer_to_buffer(&out, 0, &read, 0, out_size);
        self.ctx.queue.submit([encoder.finish()]);
        let bytes = read_buffer(&self.ctx, &read)?;
        let v: Vec<[f32; 4]> = bytemuck::pod_collect_to_vec(&bytes);
        Ok(v.into_iter().map(|p| [p[0], p[1], p[2]]).collect())
    }
}
