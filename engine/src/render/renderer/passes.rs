//! One frame's work: preparing the frame's buffers (culling, runs sorted skinned / material /
//! mesh, palette, materials, crowds, particles) and the passes that draw them (shadow, depth
//! pre-pass, forward, outline, overlay).
//!
//! Not here: building pipelines (`pipelines`), GPU timing (`timing`), picking and read-back
//! (`pick`).

use glam::{Mat4, Vec3};

use super::pipelines::{material_group, objects_group, particles_group};
use super::timing::{Pass, pass_stamps};
use super::{CrowdBuffers, FrameData, FrameStats, RenderTarget, Renderer, mat, storage_buffer, storage_size};
use crate::render::RenderError;
use crate::render::camera::{Frustum, light_clip_from_world};
use crate::render::mesh::{MeshHandle, MeshPool, TextureHandle};
use crate::render::types::{GpuFrame, GpuObject, LineVertex, OBJECT_OUTLINED, ParticleInstance};
use crate::skinning::Aabb;

#[derive(Clone, Copy, Debug)]
pub(super) struct Run {
    pub(super) key: u64,
    pub(super) material: u32,
    pub(super) mesh: MeshHandle,
    pub(super) skinned: bool,
    pub(super) visible: (u32, u32),
    pub(super) casters: (u32, u32),
}

pub(super) fn depth_attachment(
    view: &wgpu::TextureView,
    clear: bool,
) -> wgpu::RenderPassDepthStencilAttachment<'_> {
    wgpu::RenderPassDepthStencilAttachment {
        view,
        depth_ops: Some(wgpu::Operations {
            load: if clear { wgpu::LoadOp::Clear(1.0) } else { wgpu::LoadOp::Load },
            store: wgpu::StoreOp::Store,
        }),
        stencil_ops: None,
    }
}

pub(super) fn color_attachment(
    view: &wgpu::TextureView,
    load: wgpu::LoadOp<wgpu::Color>,
) -> wgpu::RenderPassColorAttachment<'_> {
    wgpu::RenderPassColorAttachment {
        view,
        depth_slice: None,
        resolve_target: None,
        ops: wgpu::Operations { load, store: wgpu::StoreOp::Store },
    }
}

/// The box around every particle disc (centre plus radius); `None` for no (finite) particle.
pub(crate) fn particle_bounds(particles: &[ParticleInstance]) -> Option<Aabb> {
    particles
        .iter()
        .filter(|p| p.position.iter().all(|v| v.is_finite()) && p.radius.is_finite())
        .map(|p| {
            let c = Vec3::from(p.position);
            let r = Vec3::splat(p.radius.abs());
            Aabb { min: c - r, max: c + r }
        })
        .reduce(Aabb::union)
}

pub(super) fn draw_runs(
    pass: &mut wgpu::RenderPass<'_>,
    pool: &MeshPool,
    runs: &[Run],
    pipelines: &[wgpu::RenderPipeline; 2],
    range: impl Fn(&Run) -> (u32, u32),
    stats: &mut FrameStats,
) {
    draw_runs_with(pass, pool, runs, pipelines, range, stats, None);
}

/// Draws `runs` (the instance range `range` gives each) with the static or skinned pipeline,
/// binding each run's material into group 3 when `materials` is given (a missing one falls back
/// to the white texel, 0).
pub(super) fn draw_runs_with(
    pass: &mut wgpu::RenderPass<'_>,
    pool: &MeshPool,
    runs: &[Run],
    pipelines: &[wgpu::RenderPipeline; 2],
    range: impl Fn(&Run) -> (u32, u32),
    stats: &mut FrameStats,
    materials: Option<&std::collections::HashMap<u32, wgpu::BindGroup>>,
) {
    let mut bound: Option<bool> = None;
    let mut material: Option<u32> = None;
    for r in runs {
        let (start, end) = range(r);
        if start == end {
            continue;
        }
        let Some(mesh) = pool.get(r.mesh) else { continue };
        if let Some(m) = materials {
            let id = if m.contains_key(&r.material) { r.material } else { 0 };
            if material != Some(id)
                && let Some(g) = m.get(&id)
            {
                pass.set_bind_group(3, g, &[]);
                material = Some(id);
            }
        }
        if bound != Some(r.skinned) {
            pass.set_pipeline(&pipelines[r.skinned as usize]);
            bound = Some(r.skinned);
            stats.skinned_pipeline_binds += r.skinned as u32;
        }
        pass.set_vertex_buffer(0, mesh.vertices.slice(..));
        if let Some(skin) = &mesh.skin {
            pass.set_vertex_buffer(1, skin.slice(..));
        }
        pass.set_index_buffer(mesh.indices.slice(..), wgpu::IndexFormat::Uint32);
        pass.draw_indexed(0..mesh.index_count, 0, start..end);
        stats.draw_calls += 1;
    }
}

impl Renderer {
    pub(super) fn prepare(
        &mut self,
        pool: &MeshPool,
        frame: &FrameData,
        aspect: f32,
        stats: &mut FrameStats,
    ) -> Result<(), RenderError> {
        let clip_from_world = frame.camera.clip_from_world(aspect);
        let frustum = Frustum::new(&clip_from_world);
        // Visibility classes, sorted so that within one mesh the camera-visible objects and the
        // casters are each one contiguous instance range: 0 visible only, 1 both, 2 caster only.
        self.order.clear();
        let mut casters: Option<Aabb> = None;
        for (i, o) in frame.objects.iter().enumerate() {
            let mesh = pool.get(o.mesh).ok_or(RenderError::UnknownMesh(o.mesh.0))?;
            let bounds = o.bounds.unwrap_or_else(|| mesh.bounds.transformed(&o.world_from_model));
            let visible = frustum.intersects(&bounds);
            let casts = frame.shadows && o.casts_shadow;
            if casts {
                casters = Some(casters.map_or(bounds, |c| c.union(bounds)));
            }
            let class = match (visible, casts) {
                (true, false) => 0,
                (true, true) => 1,
                (false, true) => 2,
                (false, false) => {
                    stats.culled += 1;
                    continue;
                }
            };
            stats.visible += visible as u32;
            stats.shadow_casters += casts as u32;
            let key = ((!mesh.is_skinned()) as u64) << 63
                | (o.material as u64) << 31
                | o.mesh.0 as u64 & 0x7fff_ffff;
            self.order.push((key, i as u32, class));
        }
        self.order.sort_unstable_by_key(|&(k, i, c)| (k, c, i));
        self.prepare_crowds(frame, &frustum, &mut casters, stats)?;
        self.prepare_particles(frame, &mut casters, stats)?;

        self.build_runs(pool, frame);
        self.prepare_materials(pool);
        let any_skinned = self.runs.iter().chain(&self.ghost_runs).any(|r| r.skinned);
        let palette_bytes = (frame.palette.len() * size_of::<[[f32; 4]; 4]>()) as u64;
        self.grow(
            (self.gpu_objects.len() * size_of::<GpuObject>()) as u64,
            if any_skinned { palette_bytes } else { 0 },
        );
        let queue = &self.ctx.queue;
        if !self.gpu_objects.is_empty() {
            queue.write_buffer(&self.objects_buffer, 0, bytemuck::cast_slice(&self.gpu_objects));
        }
        if any_skinned
            && !frame.palette.is_empty()
            && (frame.palette_version != self.uploaded_palette_version || frame.palette_version == 0)
        {
            queue.write_buffer(&self.palette_buffer, 0, bytemuck::cast_slice(&frame.palette));
            self.uploaded_palette_version = frame.palette_version;
            self.palette_uploads += 1;
            stats.palette_uploaded = true;
            stats.palette_bytes = palette_bytes;
        }
        let light_clip =
            casters.map(|c| light_clip_from_world(frame.light.direction, c)).unwrap_or(Mat4::IDENTITY);
        let radius = casters.map_or(1.0, |c| (c.max - c.min).length() * 0.5);
        let gpu_frame = GpuFrame {
            clip_from_world: mat(&clip_from_world),
            light_clip_from_world: mat(&light_clip),
            camera_position: frame.camera.eye.extend(1.0).to_array(),
            light_direction: frame.light.direction.extend(0.0).to_array(),
            light_color: frame.light.color.extend(1.0).to_array(),
            ambient: frame.light.ambient.extend(1.0).to_array(),
            params: [
                frame.outline_width.unwrap_or(0.0),
                1.0 / self.shadow_texture.width() as f32,
                0.0015 * radius.max(1e-3).recip().clamp(0.25, 1.0),
                frame.crowd_time,
            ],
            outline_color: frame.outline_color,
        };
        queue.write_buffer(&self.frame_buffer, 0, bytemuck::bytes_of(&gpu_frame));
        // One line buffer: the depth-tested lines, then the overlay lines.
        let depth_bytes = (frame.depth_lines.len() * size_of::<LineVertex>()) as u64;
        let line_bytes = depth_bytes + (frame.lines.len() * size_of::<LineVertex>()) as u64;
        if line_bytes > self.lines_buffer.size() {
            self.lines_buffer = storage_buffer(
                &self.ctx.device,
                "marrow overlay lines",
                line_bytes.next_power_of_two(),
                wgpu::BufferUsages::VERTEX,
            );
        }
        if depth_bytes > 0 {
            queue.write_buffer(&self.lines_buffer, 0, bytemuck::cast_slice(&frame.depth_lines));
        }
        if !frame.lines.is_empty() {
            queue.write_buffer(&self.lines_buffer, depth_bytes, bytemuck::cast_slice(&frame.lines));
        }
        Ok(())
    }

    /// The sorted objects as GPU objects and draw runs (one per mesh and material, each with its
    /// camera-visible and caster instance ranges).
    pub(super) fn build_runs(&mut self, pool: &MeshPool, frame: &FrameData) {
        self.gpu_objects.clear();
        self.runs.clear();
        for (n, &(key, i, class)) in self.order.iter().enumerate() {
            let o = &frame.objects[i as usize];
            self.gpu_objects.push(GpuObject {
                world_from_model: mat(&o.world_from_model),
                color: o.color,
                palette_offset: o.palette_offset,
                flags: if o.outlined { OBJECT_OUTLINED } else { 0 },
                pick_id: o.pick_id,
                pad: 0,
            });
            let n = n as u32;
            let skinned = pool.get(o.mesh).is_some_and(|m| m.is_skinned());
            let same = self.runs.last().is_some_and(|r| r.key == key);
            if !same {
                self.runs.push(Run {
                    key,
                    material: o.material,
                    mesh: o.mesh,
                    skinned,
                    visible: (n, n),
                    casters: (n, n),
                });
            }
            let r = self.runs.last_mut().expect("pushed above");
            if class <= 1 {
                if r.visible.0 == r.visible.1 {
                    r.visible = (n, n);
                }
                r.visible.1 = n + 1;
            }
            if class >= 1 {
                if r.casters.0 == r.casters.1 {
                    r.casters = (n, n);
                }
                r.casters.1 = n + 1;
            }
        }
        // Onion skin ghosts after the sorted objects, one run each (drawn in order).
        self.ghost_runs.clear();
        for g in &frame.ghosts {
            let Some(mesh) = pool.get(g.mesh) else { continue };
            let n = self.gpu_objects.len() as u32;
            self.gpu_objects.push(GpuObject {
                world_from_model: mat(&g.world_from_model),
                color: g.color,
                palette_offset: g.palette_offset,
                flags: 0,
                pick_id: 0,
                pad: 0,
            });
            self.ghost_runs.push(Run {
                key: 0,
                material: 0,
                mesh: g.mesh,
                skinned: mesh.is_skinned(),
                visible: (n, n + 1),
                casters: (n, n),
            });
        }
    }

    /// Material bind groups for this frame's textures (0 is the white texel).
    pub(super) fn prepare_materials(&mut self, pool: &MeshPool) {
        if pool.texture_epoch() != self.materials_epoch {
            self.materials.retain(|k, _| *k == 0);
            self.materials_epoch = pool.texture_epoch();
        }
        for r in &self.runs {
            if r.material != 0
                && !self.materials.contains_key(&r.material)
                && let Some(t) = pool.texture(TextureHandle(r.material - 1))
            {
                let g =
                    material_group(&self.ctx.device, &self.layouts.material, &t.view, &self.material_sampler);
                self.materials.insert(r.material, g);
            }
        }
    }

    /// The crowd part of [`Renderer::prepare`]: each crowd draw culled as a whole (its bounds
    /// join the shadow casters), the crowd data uploaded only when its version moved.
    pub(super) fn prepare_crowds(
        &mut self,
        frame: &FrameData,
        frustum: &Frustum,
        casters: &mut Option<Aabb>,
        stats: &mut FrameStats,
    ) -> Result<(), RenderError> {
        // Crowds: each draw culled as a whole by the bounds of every instance at every baked
        // frame; its data uploaded only when its version moves. None past the budget.
        self.crowd_runs.clear();
        if self.crowd_refusal.is_some() {
            stats.crowds_refused = frame.crowd_draws.len() as u32;
            return Ok(());
        }
        for (k, d) in frame.crowd_draws.iter().enumerate() {
            let visible = frustum.intersects(&d.bounds);
            let casts = frame.shadows && d.casts_shadow;
            if casts {
                *casters = Some(casters.map_or(d.bounds, |c| c.union(d.bounds)));
            }
            if visible || casts {
                self.crowd_runs.push((k as u32, visible, casts));
            }
            if visible {
                stats.crowd_instances += d.count;
            }
        }
        if let Some(c) = &frame.crowd
            && (self.uploaded_crowd_version != Some(c.version) || c.version == 0)
        {
            if !self.crowd_buffers.fits(c) {
                self.crowd_buffers = CrowdBuffers::new(&self.ctx.device, Some(c))?;
                self.objects_group = objects_group(
                    &self.ctx.device,
                    &self.layouts.objects,
                    &self.objects_buffer,
                    &self.palette_buffer,
                    &self.crowd_buffers,
                );
            }
            let queue = &self.ctx.queue;
            queue.write_buffer(&self.crowd_buffers.table, 0, bytemuck::cast_slice(&c.table));
            queue.write_buffer(&self.crowd_buffers.clips, 0, bytemuck::cast_slice(&c.clips));
            queue.write_buffer(&self.crowd_buffers.instances, 0, bytemuck::cast_slice(&c.instances));
            self.uploaded_crowd_version = Some(c.version);
            stats.crowd_bytes = c.bytes();
        }
        Ok(())
    }

    /// The particle part of [`Renderer::prepare`]: the discs uploaded (the buffer grown as
    /// needed), their bounds in the light's box when they cast shadows.
    pub(super) fn prepare_particles(
        &mut self,
        frame: &FrameData,
        casters: &mut Option<Aabb>,
        stats: &mut FrameStats,
    ) -> Result<(), RenderError> {
        // Particles: one instanced draw per pass for the whole set; their bounds (radius
        // included) join the shadow casters so the light's box covers them.
        self.particle_count = frame.particles.len() as u32;
        self.particles_cast_shadows = frame.shadows;
        if frame.shadows
            && let Some(b) = particle_bounds(&frame.particles)
        {
            *casters = Some(casters.map_or(b, |c| c.union(b)));
        }
        stats.particles = self.particle_count;
        let bytes = (frame.particles.len() as u64).saturating_mul(size_of::<ParticleInstance>() as u64);
        if bytes > self.particles_buffer.size() {
            let size = storage_size(&self.ctx.device, "the particles", bytes)?;
            self.particles_buffer =
                storage_buffer(&self.ctx.device, "marrow particles", size, wgpu::BufferUsages::STORAGE);
            self.particles_group =
                particles_group(&self.ctx.device, &self.layouts.particles, &self.particles_buffer);
        }
        if bytes > 0 {
            self.ctx.queue.write_buffer(&self.particles_buffer, 0, bytemuck::cast_slice(&frame.particles));
        }
        Ok(())
    }

    /// The shadow pass (always cleared, so a frame without casters leaves no stale shadow).
    pub(super) fn shadow_pass(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        pool: &MeshPool,
        frame: &FrameData,
        stamps: Option<&wgpu::QuerySet>,
        stats: &mut FrameStats,
    ) {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("marrow shadow pass"),
            color_attachments: &[],
            depth_stencil_attachment: Some(depth_attachment(&self.shadow_view, true)),
            timestamp_writes: pass_stamps(stamps, Pass::Shadow),
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_bind_group(0, &self.frame_group, &[]);
        pass.set_bind_group(1, &self.objects_group, &[]);
        draw_runs(&mut pass, pool, &self.runs, &self.pipelines.shadow, |r| r.casters, stats);
        self.draw_crowds(&mut pass, pool, frame, 2, stats);
        if self.particles_cast_shadows {
            self.draw_particles(&mut pass, 2, stats);
        }
    }

    /// The depth pre-pass over the camera-visible objects.
    pub(super) fn depth_pass(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        pool: &MeshPool,
        frame: &FrameData,
        target: &RenderTarget,
        stamps: Option<&wgpu::QuerySet>,
        stats: &mut FrameStats,
    ) {
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("marrow depth pre-pass"),
            color_attachments: &[],
            depth_stencil_attachment: Some(depth_attachment(&target.depth_view, true)),
            timestamp_writes: pass_stamps(stamps, Pass::Depth),
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_bind_group(0, &self.frame_group, &[]);
        pass.set_bind_group(1, &self.objects_group, &[]);
        draw_runs(&mut pass, pool, &self.runs, &self.pipelines.depth, |r| r.visible, stats);
        self.draw_crowds(&mut pass, pool, frame, 1, stats);
        self.draw_particles(&mut pass, 1, stats);
    }

    /// The frame's visible (or, for the shadow pass, casting) crowd draws, one instanced draw
    /// each, with crowd pipeline `which` (0 forward, 1 depth pre-pass, 2 shadow). Group 1 must be
    /// the objects group (it carries the crowd buffers).
    pub(super) fn draw_crowds(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        pool: &MeshPool,
        frame: &FrameData,
        which: usize,
        stats: &mut FrameStats,
    ) {
        let mut bound = false;
        for &(k, visible, casts) in &self.crowd_runs {
            if !(if which == 2 { casts } else { visible }) {
                continue;
            }
            let Some(d) = frame.crowd_draws.get(k as usize) else { continue };
            let Some(mesh) = pool.get(d.mesh) else { continue };
            let Some(skin) = &mesh.skin else { continue };
            if !bound {
                pass.set_pipeline(&self.pipelines.crowd[which]);
                pass.set_bind_group(1, &self.objects_group, &[]);
                if which == 0
                    && let Some(white) = self.materials.get(&0)
                {
                    pass.set_bind_group(3, white, &[]);
                }
                bound = true;
            }
            pass.set_vertex_buffer(0, mesh.vertices.slice(..));
            pass.set_vertex_buffer(1, skin.slice(..));
            pass.set_index_buffer(mesh.indices.slice(..), wgpu::IndexFormat::Uint32);
            pass.draw_indexed(0..mesh.index_count, 0, d.first..d.first + d.count);
            stats.draw_calls += 1;
        }
    }

    /// The frame's particle discs in one instanced draw, with pipeline `which` (0 forward,
    /// 1 depth pre-pass, 2 shadow); the particles' group replaces the objects' in group 1.
    pub(super) fn draw_particles(
        &self,
        pass: &mut wgpu::RenderPass<'_>,
        which: usize,
        stats: &mut FrameStats,
    ) {
        if self.particle_count == 0 {
            return;
        }
        pass.set_pipeline(&self.pipelines.particles[which]);
        pass.set_bind_group(1, &self.particles_group, &[]);
        pass.draw(0..6, 0..self.particle_count);
        stats.draw_calls += 1;
    }

    /// The forward pass (LEQUAL against the pre-pass depth, depth writes off), cleared to the
    /// frame's background colour.
    pub(super) fn forward_pass(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        pool: &MeshPool,
        frame: &FrameData,
        target: &RenderTarget,
        stamps: Option<&wgpu::QuerySet>,
        stats: &mut FrameStats,
    ) {
        let [r, g, b, a] = frame.clear_color;
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("marrow forward pass"),
            color_attachments: &[Some(color_attachment(
                &target.color_view,
                wgpu::LoadOp::Clear(wgpu::Color { r, g, b, a }),
            ))],
            depth_stencil_attachment: Some(depth_attachment(&target.depth_view, false)),
            timestamp_writes: pass_stamps(stamps, Pass::Forward),
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_bind_group(0, &self.frame_group, &[]);
        pass.set_bind_group(1, &self.objects_group, &[]);
        pass.set_bind_group(2, &self.shadow_group, &[]);
        draw_runs_with(
            &mut pass,
            pool,
            &self.runs,
            &self.pipelines.forward,
            |r| r.visible,
            stats,
            Some(&self.materials),
        );
        self.draw_crowds(&mut pass, pool, frame, 0, stats);
        self.draw_particles(&mut pass, 0, stats);
        // Translucent ghosts last, over the opaque scene.
        draw_runs(&mut pass, pool, &self.ghost_runs, &self.pipelines.ghost, |r| r.visible, stats);
    }

    /// The outline: the visible silhouettes of the objects flagged [`DrawObject::outlined`]
    /// into the target's mask (depth-tested against the pre-pass), then a full-screen pass that
    /// paints the outline colour around the mask.
    pub(super) fn outline_pass(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        pool: &MeshPool,
        target: &RenderTarget,
        stamps: Option<&wgpu::QuerySet>,
        stats: &mut FrameStats,
    ) {
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("marrow outline mask"),
                color_attachments: &[Some(color_attachment(
                    &target.mask_view,
                    wgpu::LoadOp::Clear(wgpu::Color::TRANSPARENT),
                ))],
                depth_stencil_attachment: Some(depth_attachment(&target.depth_view, false)),
                timestamp_writes: stamps.map(|q| wgpu::RenderPassTimestampWrites {
                    query_set: q,
                    beginning_of_pass_write_index: Some(Pass::Outline as u32 * 2),
                    end_of_pass_write_index: None,
                }),
                occlusion_query_set: None,
                multiview_mask: None,
            });
            pass.set_bind_group(0, &self.frame_group, &[]);
            pass.set_bind_group(1, &self.objects_group, &[]);
            let outlined = |r: &Run| {
                let (s, e) = r.visible;
                if self.gpu_objects[s as usize..e as usize].iter().any(|o| o.flags & OBJECT_OUTLINED != 0) {
                    (s, e)
                } else {
                    (0, 0)
                }
            };
            draw_runs(&mut pass, pool, &self.runs, &self.pipelines.mask, outlined, stats);
        }
        let mask_group = self.ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("marrow outline mask"),
            layout: &self.layouts.mask,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: wgpu::BindingResource::TextureView(&target.mask_view),
            }],
        });
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("marrow outline"),
            color_attachments: &[Some(color_attachment(&target.color_view, wgpu::LoadOp::Load))],
            depth_stencil_attachment: None,
            timestamp_writes: stamps.map(|q| wgpu::RenderPassTimestampWrites {
                query_set: q,
                beginning_of_pass_write_index: None,
                end_of_pass_write_index: Some(Pass::Outline as u32 * 2 + 1),
            }),
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_pipeline(&self.pipelines.outline);
        pass.set_bind_group(0, &self.frame_group, &[]);
        pass.set_bind_group(1, &mask_group, &[]);
        pass.draw(0..3, 0..1);
        stats.draw_calls += 1;
    }

    /// The overlay pass: the depth-tested lines (the grid), then the line list over everything.
    pub(super) fn overlay_pass(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        frame: &FrameData,
        target: &RenderTarget,
        stamps: Option<&wgpu::QuerySet>,
        stats: &mut FrameStats,
    ) {
        let depth_count = frame.depth_lines.len() as u32;
        let count = depth_count + frame.lines.len() as u32;
        let line_bytes = count as u64 * size_of::<LineVertex>() as u64;
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("marrow overlay pass"),
            color_attachments: &[Some(color_attachment(&target.color_view, wgpu::LoadOp::Load))],
            depth_stencil_attachment: Some(depth_attachment(&target.depth_view, false)),
            timestamp_writes: pass_stamps(stamps, Pass::Overlay),
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_bind_group(0, &self.frame_group, &[]);
        pass.set_vertex_buffer(0, self.lines_buffer.slice(..line_bytes));
        if depth_count > 0 {
            pass.set_pipeline(&self.pipelines.overlay_depth);
            pass.draw(0..depth_count, 0..1);
            stats.draw_calls += 1;
        }
        if count > depth_count {
            pass.set_pipeline(&self.pipelines.overlay);
            pass.draw(depth_count..count, 0..1);
            stats.draw_calls += 1;
        }
    }
}
