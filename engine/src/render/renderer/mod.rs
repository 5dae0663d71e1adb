//! The renderer, split as in re_renderer: long-lived state ([`Renderer`]: bind group layouts,
//! pipelines built from `shaders/`, the shadow map, growable per-frame buffers) and per-frame
//! draw data ([`FrameData`]: camera, light, objects, the packed palette, overlay lines) that the
//! caller refills every frame without reallocating.
//!
//! A frame: objects are culled against the camera frustum using their world bounds (dynamic
//! bounds for skinned meshes), sorted into runs (skinned first, then material, then mesh), and
//! drawn by a shadow pass, a depth pre-pass and a forward pass (LEQUAL, depth writes off) that
//! shares its depth buffer, plus the optional screen-space outline and skeleton overlay. The
//! palette buffer is uploaded only when a skinned object is drawn and the palette version moved.
//!
//! It does not pose anything (callers fill the palette from the pose jobs) and does not own a
//! window or surface: it draws into a [`RenderTarget`] (offscreen, or a texture the editor shows).
//!
//! The files split it as re_renderer splits renderers from draw phases: this file holds the
//! [`Renderer`] itself (creation, targets, shader reload, the frame's entry points `render` and
//! `encode`, buffer growth, crowd budgets); `frame` the per-frame draw data; `pipelines` the
//! layouts, pipelines and bind groups; `passes` a frame's preparation and its passes; `timing`
//! the GPU timestamps; `pick` picking and read-back.

use glam::{Mat4, Vec3};

use super::RenderError;
use super::gpu::GpuContext;
use super::mesh::MeshPool;
use super::shader::{ShaderError, ShaderSource, ShaderWatcher};
use super::types::{GpuCrowdClip, GpuCrowdInstance, GpuFrame, GpuObject, ParticleInstance};

mod frame;
mod passes;
mod pick;
mod pipelines;
mod timing;

pub use frame::{CrowdData, CrowdDraw, DrawObject, FrameData, FrameStats};
use passes::Run;
pub(crate) use passes::particle_bounds;
pub use pick::PickRequest;
use pick::PickTarget;
use pipelines::{
    Layouts, Pipelines, build_pipelines, make_layouts, material_group, objects_group, particles_group,
};
pub(crate) use pipelines::{fullscreen_pipeline, texture_sampler_layout};
pub use timing::PassTimes;
use timing::{PASS_COUNT, Pass, Timing};

/// The colour format of [`RenderTarget`]s.
pub const COLOR_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8UnormSrgb;
/// The depth format of targets and of the shadow map.
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

/// Long-lived renderer options.
#[derive(Clone, Debug, PartialEq)]
pub struct RendererSettings {
    /// Where shader text comes from (embedded, or a directory that can be hot-reloaded).
    pub shaders: ShaderSource,
    /// Shadow map width and height in texels.
    pub shadow_map_size: u32,
    /// Measure GPU time with timestamp queries when the device supports them.
    pub gpu_timing: bool,
}

impl Default for RendererSettings {
    fn default() -> Self {
        Self { shaders: ShaderSource::Embedded, shadow_map_size: 1024, gpu_timing: false }
    }
}

/// A directional light.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Light {
    /// Direction the light travels (world).
    pub direction: Vec3,
    /// Colour (linear).
    pub color: Vec3,
    /// Ambient colour (linear).
    pub ambient: Vec3,
}

impl Default for Light {
    fn default() -> Self {
        Self {
            direction: Vec3::new(-0.45, -1.0, -0.55).normalize(),
            color: Vec3::splat(0.9),
            ambient: Vec3::new(0.16, 0.17, 0.2),
        }
    }
}

/// An offscreen colour + depth target.
#[derive(Debug)]
pub struct RenderTarget {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Colour texture ([`COLOR_FORMAT`]).
    pub color: wgpu::Texture,
    /// Its view.
    pub color_view: wgpu::TextureView,
    /// Depth texture ([`DEPTH_FORMAT`]).
    pub depth: wgpu::Texture,
    /// Its view.
    pub depth_view: wgpu::TextureView,
    /// The outline mask ([`MASK_FORMAT`]): silhouettes of the outlined objects.
    pub mask: wgpu::Texture,
    /// Its view.
    pub mask_view: wgpu::TextureView,
}

/// The format of a target's outline mask.
pub const MASK_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::R8Unorm;

/// The long-lived renderer.
pub struct Renderer {
    ctx: GpuContext,
    settings: RendererSettings,
    layouts: Layouts,
    pipelines: Pipelines,
    frame_buffer: wgpu::Buffer,
    frame_group: wgpu::BindGroup,
    objects_buffer: wgpu::Buffer,
    palette_buffer: wgpu::Buffer,
    objects_group: wgpu::BindGroup,
    crowd_buffers: CrowdBuffers,
    /// Version of the crowd data on the GPU (`None`: none uploaded).
    uploaded_crowd_version: Option<u64>,
    /// This frame's crowd draws: (index in `FrameData::crowd_draws`, visible, casts).
    crowd_runs: Vec<(u32, bool, bool)>,
    /// Why the last frame left its crowds out ([`Renderer::check_crowd_work`]), if it did.
    crowd_refusal: Option<String>,
    particles_buffer: wgpu::Buffer,
    particles_group: wgpu::BindGroup,
    /// Particles uploaded for this frame.
    particle_count: u32,
    /// Whether this frame's particles go into the shadow map ([`FrameData::shadows`]).
    particles_cast_shadows: bool,
    lines_buffer: wgpu::Buffer,
    shadow_texture: wgpu::Texture,
    shadow_view: wgpu::TextureView,
    shadow_group: wgpu::BindGroup,
    timing: Option<Timing>,
    pick_target: Option<PickTarget>,
    /// Material bind groups by [`DrawObject::material`] (0: the white texel), rebuilt when the
    /// pool's textures change.
    materials: std::collections::HashMap<u32, wgpu::BindGroup>,
    materials_epoch: u64,
    material_sampler: wgpu::Sampler,
    // Per-frame scratch, reused.
    order: Vec<(u64, u32, u8)>,
    gpu_objects: Vec<GpuObject>,
    runs: Vec<Run>,
    /// This frame's onion skin ghosts, one run each (their objects follow the sorted ones).
    ghost_runs: Vec<Run>,
    uploaded_palette_version: u64,
    palette_uploads: u64,
    shader_error: Option<ShaderError>,
    shader_reloads: u64,
    watcher: Option<ShaderWatcher>,
}

impl std::fmt::Debug for Renderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Renderer")
            .field("settings", &self.settings)
            .field("palette_uploads", &self.palette_uploads)
            .field("shader_error", &self.shader_error)
            .finish_non_exhaustive()
    }
}

/// The size to create a storage buffer holding `bytes` at (grown to a power of two, but never
/// past the device's limits); `RenderError::Limit` naming `what` when `bytes` itself is past
/// `max_storage_buffer_binding_size` or `max_buffer_size`.
fn storage_size(device: &wgpu::Device, what: &str, bytes: u64) -> Result<u64, RenderError> {
    let l = device.limits();
    let max = l.max_storage_buffer_binding_size.min(l.max_buffer_size);
    if bytes > max {
        return Err(RenderError::Limit(format!(
            "{what}: {} MB in one buffer; this device binds at most {} MB",
            bytes.div_ceil(1 << 20),
            max >> 20
        )));
    }
    Ok(bytes.next_power_of_two().min(max))
}

/// Refuses a `width` x `height` target the device cannot create or read back: a side past
/// `max_texture_dimension_2d`, or rows (padded to the copy alignment, `texel` bytes a pixel)
/// past `max_buffer_size`.
pub(crate) fn check_target_size(
    device: &wgpu::Device,
    width: u32,
    height: u32,
    texel: u32,
) -> Result<(), RenderError> {
    let l = device.limits();
    let side = l.max_texture_dimension_2d;
    if width > side || height > side {
        return Err(RenderError::Limit(format!(
            "an image of {width}x{height}; this device's textures are at most {side} pixels a side"
        )));
    }
    let row = u64::from(width) * u64::from(texel);
    let padded = row.next_multiple_of(u64::from(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT));
    let bytes = padded * u64::from(height);
    if bytes > l.max_buffer_size {
        return Err(RenderError::Limit(format!(
            "an image of {width}x{height} reads back through {} MB; this device's buffers hold at most {} MB",
            bytes.div_ceil(1 << 20),
            l.max_buffer_size >> 20
        )));
    }
    Ok(())
}

fn storage_buffer(device: &wgpu::Device, label: &str, size: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: size.max(256),
        usage: usage | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

/// The crowd's three storage buffers (table, clips, instances), grown as needed.
struct CrowdBuffers {
    table: wgpu::Buffer,
    clips: wgpu::Buffer,
    instances: wgpu::Buffer,
}

impl CrowdBuffers {
    /// Buffers for `data` (refused, naming the buffer, when one is past the device's limits).
    fn new(device: &wgpu::Device, data: Option<&CrowdData>) -> Result<Self, RenderError> {
        let size = |n: usize, each: usize| (n as u64).saturating_mul(each as u64);
        let (t, c, i) = data.map_or((0, 0, 0), |d| {
            (size(d.table.len(), 48), size(d.clips.len(), 32), size(d.instances.len(), 64))
        });
        let u = wgpu::BufferUsages::STORAGE;
        let (t, c, i) = (
            storage_size(device, "the crowd's baked table", t)?,
            storage_size(device, "the crowd's clips", c)?,
            storage_size(device, "the crowd's instances", i)?,
        );
        Ok(Self {
            table: storage_buffer(device, "marrow crowd table", t, u),
            clips: storage_buffer(device, "marrow crowd clips", c, u),
            instances: storage_buffer(device, "marrow crowd instances", i, u),
        })
    }

    fn fits(&self, d: &CrowdData) -> bool {
        (d.table.len() * size_of::<[f32; 12]>()) as u64 <= self.table.size()
            && (d.clips.len() * size_of::<GpuCrowdClip>()) as u64 <= self.clips.size()
            && (d.instances.len() * size_of::<GpuCrowdInstance>()) as u64 <= self.instances.size()
    }
}

fn mat(m: &Mat4) -> [[f32; 4]; 4] {
    m.to_cols_array_2d()
}

impl Renderer {
    /// Builds the layouts, pipelines and frame resources. When the shader directory fails to
    /// compile, the embedded shaders are used and the error is kept ([`Renderer::shader_error`]).
    pub fn new(ctx: &GpuContext, settings: RendererSettings) -> Result<Self, RenderError> {
        let device = &ctx.device;
        let layouts = make_layouts(device);
        let mut shader_error = None;
        let pipelines = match build_pipelines(device, &layouts, &settings.shaders) {
            Ok(p) => p,
            Err(e) => {
                log::error!("{e}; falling back to the embedded shaders");
                shader_error = Some(e);
                build_pipelines(device, &layouts, &ShaderSource::Embedded).map_err(RenderError::Shader)?
            }
        };
        use wgpu::BufferUsages as U;
        let material_sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("marrow base colour"),
            address_mode_u: wgpu::AddressMode::Repeat,
            address_mode_v: wgpu::AddressMode::Repeat,
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            ..Default::default()
        });
        let white = super::mesh::srgb_texture(device, &ctx.queue, "marrow white texel", &[255; 4], 1, 1);
        let mut materials = std::collections::HashMap::new();
        materials.insert(
            0,
            material_group(
                device,
                &layouts.material,
                &white.create_view(&Default::default()),
                &material_sampler,
            ),
        );
        let frame_buffer = storage_buffer(device, "marrow frame", size_of::<GpuFrame>() as u64, U::UNIFORM);
        let frame_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("marrow frame"),
            layout: &layouts.frame,
            entries: &[wgpu::BindGroupEntry { binding: 0, resource: frame_buffer.as_entire_binding() }],
        });
        let objects_buffer =
            storage_buffer(device, "marrow objects", 64 * size_of::<GpuObject>() as u64, U::STORAGE);
        let palette_buffer =
            storage_buffer(device, "marrow palette", 64 * size_of::<Mat4>() as u64, U::STORAGE);
        let crowd_buffers = CrowdBuffers::new(device, None)?;
        let objects_group =
            objects_group(device, &layouts.objects, &objects_buffer, &palette_buffer, &crowd_buffers);
        let particles_buffer = storage_buffer(
            device,
            "marrow particles",
            1024 * size_of::<ParticleInstance>() as u64,
            U::STORAGE,
        );
        let particles_group = particles_group(device, &layouts.particles, &particles_buffer);
        let lines_buffer = storage_buffer(device, "marrow overlay lines", 1024 * 28, U::VERTEX);
        let size = settings.shadow_map_size.clamp(16, 8192);
        let shadow_texture = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("marrow shadow map"),
            size: wgpu::Extent3d { width: size, height: size, depth_or_array_layers: 1 },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: DEPTH_FORMAT,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT
                | wgpu::TextureUsages::TEXTURE_BINDING
                | wgpu::TextureUsages::COPY_SRC,
            view_formats: &[],
        });
        let shadow_view = shadow_texture.create_view(&Default::default());
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("marrow shadow sampler"),
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            compare: Some(wgpu::CompareFunction::LessEqual),
            ..Default::default()
        });
        let shadow_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("marrow shadow map"),
            layout: &layouts.shadow,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::TextureView(&shadow_view),
                },
                wgpu::BindGroupEntry { binding: 1, resource: wgpu::BindingResource::Sampler(&sampler) },
            ],
        });
        let timing = (settings.gpu_timing && device.features().contains(wgpu::Features::TIMESTAMP_QUERY))
            .then(|| Timing {
                queries: device.create_query_set(&wgpu::QuerySetDescriptor {
                    label: Some("marrow timestamps"),
                    ty: wgpu::QueryType::Timestamp,
                    count: PASS_COUNT as u32 * 2,
                }),
                resolve: device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("marrow timestamps resolve"),
                    size: PASS_COUNT as u64 * 2 * size_of::<u64>() as u64,
                    usage: U::QUERY_RESOLVE | U::COPY_SRC,
                    mapped_at_creation: false,
                }),
                readback: device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("marrow timestamps readback"),
                    size: PASS_COUNT as u64 * 2 * size_of::<u64>() as u64,
                    usage: U::MAP_READ | U::COPY_DST,
                    mapped_at_creation: false,
                }),
                period_ns: ctx.queue.get_timestamp_period(),
                submitted: None,
                mapped: Default::default(),
                mapping: false,
                last: None,
            });
        Ok(Self {
            ctx: ctx.clone(),
            settings,
            layouts,
            pipelines,
            frame_buffer,
            frame_group,
            objects_buffer,
            palette_buffer,
            objects_group,
            crowd_buffers,
            uploaded_crowd_version: None,
            crowd_runs: Vec::new(),
            crowd_refusal: None,
            particles_buffer,
            particles_group,
            particle_count: 0,
            particles_cast_shadows: false,
            lines_buffer,
            shadow_texture,
            shadow_view,
            shadow_group,
            timing,
            pick_target: None,
            materials,
            materials_epoch: 0,
            material_sampler,
            order: Vec::new(),
            gpu_objects: Vec::new(),
            ghost_runs: Vec::new(),
            runs: Vec::new(),
            uploaded_palette_version: 0,
            palette_uploads: 0,
            shader_error,
            shader_reloads: 0,
            watcher: None,
        })
    }

    /// The settings it was built with.
    pub fn settings(&self) -> &RendererSettings {
        &self.settings
    }

    /// Refuses (with [`RenderError::Limit`]) a target of `width` x `height` pixels that this
    /// device cannot create or read back, before anything is created.
    pub fn check_target(&self, width: u32, height: u32) -> Result<(), RenderError> {
        check_target_size(&self.ctx.device, width, height, 4)
    }

    /// A colour + depth target of `width` x `height` pixels (at least 1 x 1).
    pub fn create_target(&self, width: u32, height: u32) -> RenderTarget {
        let size = wgpu::Extent3d { width: width.max(1), height: height.max(1), depth_or_array_layers: 1 };
        let tex = |label: &str, format, usage| {
            self.ctx.device.create_texture(&wgpu::TextureDescriptor {
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
        let color = self.ctx.device.create_texture(&wgpu::TextureDescriptor {
            label: Some("marrow color"),
            size,
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: COLOR_FORMAT,
            usage: T::RENDER_ATTACHMENT | T::COPY_SRC | T::TEXTURE_BINDING,
            // A raw (not sRGB-decoding) view lets a presenter copy the encoded bytes as they are.
            view_formats: &[COLOR_FORMAT.remove_srgb_suffix()],
        });
        let depth = tex("marrow depth", DEPTH_FORMAT, T::RENDER_ATTACHMENT | T::COPY_SRC);
        let mask = tex("marrow outline mask", MASK_FORMAT, T::RENDER_ATTACHMENT | T::TEXTURE_BINDING);
        RenderTarget {
            width: size.width,
            height: size.height,
            color_view: color.create_view(&Default::default()),
            depth_view: depth.create_view(&Default::default()),
            mask_view: mask.create_view(&Default::default()),
            color,
            depth,
            mask,
        }
    }

    /// Total palette uploads since creation.
    #[doc(hidden)]
    pub fn palette_uploads(&self) -> u64 {
        self.palette_uploads
    }

    /// The last shader (re)load error, if the last attempt failed (for display).
    pub fn shader_error(&self) -> Option<&ShaderError> {
        self.shader_error.as_ref()
    }

    /// How many shader reloads succeeded.
    pub fn shader_reloads(&self) -> u64 {
        self.shader_reloads
    }

    /// Recompiles every pipeline from the shader source. On failure the error is logged, kept
    /// for display and returned, and the last good pipelines keep drawing.
    pub fn reload_shaders(&mut self) -> Result<(), ShaderError> {
        match build_pipelines(&self.ctx.device, &self.layouts, &self.settings.shaders) {
            Ok(p) => {
                self.pipelines = p;
                self.shader_error = None;
                self.shader_reloads += 1;
                log::info!("shaders reloaded");
                Ok(())
            }
            Err(e) => {
                log::error!("shader reload failed, keeping the last good pipelines: {e}");
                self.shader_error = Some(e.clone());
                Err(e)
            }
        }
    }

    /// Starts watching the shader directory (no-op for embedded shaders).
    pub fn watch_shaders(&mut self) -> Result<(), ShaderError> {
        if let ShaderSource::Directory(dir) = &self.settings.shaders {
            self.watcher = Some(ShaderWatcher::new(dir, std::time::Duration::from_millis(50))?);
        }
        Ok(())
    }

    /// When the watcher saw a change, reloads and returns the outcome; `None` when nothing
    /// changed (or nothing is watched).
    pub fn poll_shader_changes(&mut self) -> Option<Result<(), ShaderError>> {
        if self.watcher.as_ref()?.changed() { Some(self.reload_shaders()) } else { None }
    }

    /// Blocks up to `timeout` for the watcher to see a change, then reloads (tests).
    pub fn wait_shader_change(&mut self, timeout: std::time::Duration) -> Option<Result<(), ShaderError>> {
        if self.watcher.as_ref()?.wait_changed(timeout) { Some(self.reload_shaders()) } else { None }
    }

    fn grow(&mut self, objects: u64, palette: u64) {
        let device = &self.ctx.device;
        let mut rebind = false;
        if objects > self.objects_buffer.size() {
            self.objects_buffer = storage_buffer(
                device,
                "marrow objects",
                objects.next_power_of_two(),
                wgpu::BufferUsages::STORAGE,
            );
            rebind = true;
        }
        if palette > self.palette_buffer.size() {
            self.palette_buffer = storage_buffer(
                device,
                "marrow palette",
                palette.next_power_of_two(),
                wgpu::BufferUsages::STORAGE,
            );
            self.uploaded_palette_version = 0;
            rebind = true;
        }
        if rebind {
            self.objects_group = objects_group(
                device,
                &self.layouts.objects,
                &self.objects_buffer,
                &self.palette_buffer,
                &self.crowd_buffers,
            );
        }
    }

    /// Culls, sorts, uploads and encodes one frame into `target`, and submits it.
    pub fn render(
        &mut self,
        pool: &MeshPool,
        frame: &FrameData,
        target: &RenderTarget,
    ) -> Result<FrameStats, RenderError> {
        let mut encoder = self.ctx.device.create_command_encoder(&Default::default());
        let stats = self.encode(&mut encoder, pool, frame, target)?;
        self.ctx.queue.submit([encoder.finish()]);
        Ok(stats)
    }

    /// Like [`Renderer::render`] but records into the caller's encoder without submitting
    /// (buffer writes go through the queue and land before the caller's submit). The editor
    /// calls this from egui-wgpu's paint callback `prepare`, then shows `target.color`.
    ///
    /// Passes, in order: shadow, depth pre-pass, forward, outline (when
    /// [`FrameData::outline_width`] is set), overlay (when there are lines).
    pub fn encode(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        pool: &MeshPool,
        frame: &FrameData,
        target: &RenderTarget,
    ) -> Result<FrameStats, RenderError> {
        // Crowds past the adapter's budget are left out and the rest drawn (a fault never
        // hides the scene); callers that must not draw a partial frame check first.
        self.crowd_refusal = self.check_crowd_work(pool, frame).err().map(|e| e.to_string());
        let mut stats = FrameStats { objects: frame.objects.len() as u32, ..Default::default() };
        let aspect = target.width as f32 / target.height as f32;
        self.prepare(pool, frame, aspect, &mut stats)?;
        let queries = self.timing.as_ref().filter(|t| !t.busy()).map(|t| t.queries.clone());
        let stamps = queries.as_ref();
        let mut ran = 0u8;
        self.shadow_pass(encoder, pool, frame, stamps, &mut stats);
        ran |= 1 << Pass::Shadow as u8;
        self.depth_pass(encoder, pool, frame, target, stamps, &mut stats);
        ran |= 1 << Pass::Depth as u8;
        self.forward_pass(encoder, pool, frame, target, stamps, &mut stats);
        ran |= 1 << Pass::Forward as u8;
        if frame.outline_width.is_some_and(|w| w > 0.0) {
            self.outline_pass(encoder, pool, target, stamps, &mut stats);
            ran |= 1 << Pass::Outline as u8;
        }
        if !frame.lines.is_empty() || !frame.depth_lines.is_empty() {
            self.overlay_pass(encoder, frame, target, stamps, &mut stats);
            ran |= 1 << Pass::Overlay as u8;
        }
        if let Some(t) = self.timing.as_mut().filter(|t| !t.busy()) {
            encoder.resolve_query_set(&t.queries, 0..PASS_COUNT as u32 * 2, &t.resolve, 0);
            encoder.copy_buffer_to_buffer(&t.resolve, 0, &t.readback, 0, t.resolve.size());
            t.submitted = Some(ran);
        }
        Ok(stats)
    }

    /// Culling, run sorting and the uploads of one frame (objects, palette, frame uniform,
    /// overlay lines).
    /// Why the last encoded frame left its crowds out (past [`GpuContext::crowd_vertex_budget`]),
    /// or `None` when it drew them.
    pub fn crowd_refusal(&self) -> Option<&str> {
        self.crowd_refusal.as_deref()
    }

    /// Refuses (with [`RenderError::Limit`], naming the count and the limit) a frame whose
    /// crowd draws ask more vertices of the adapter than [`GpuContext::crowd_vertex_budget`].
    /// [`Renderer::encode`] draws such a frame without its crowds; an offline render that must
    /// be whole calls this first.
    pub fn check_crowd_work(&self, pool: &MeshPool, frame: &FrameData) -> Result<(), RenderError> {
        let mut vertices = 0u64;
        let mut instances = 0u64;
        for d in &frame.crowd_draws {
            let mesh = pool.get(d.mesh).ok_or(RenderError::UnknownMesh(d.mesh.0))?;
            vertices = vertices.saturating_add(u64::from(mesh.vertex_count) * u64::from(d.count));
            instances = instances.max(u64::from(d.first) + u64::from(d.count));
        }
        let budget = self.ctx.crowd_vertex_budget();
        if vertices > budget {
            return Err(RenderError::Limit(format!(
                "a crowd frame of {instances} instances asks {vertices} skinned vertices of {}; the limit \
                 there is {budget} (fewer instances, or a lighter mesh)",
                self.ctx.describe()
            )));
        }
        Ok(())
    }
}
