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

use glam::{Mat4, Vec3};

use super::RenderError;
use super::camera::{Camera, Frustum, light_clip_from_world};
use super::gpu::GpuContext;
use super::mesh::{MeshHandle, MeshPool, TextureHandle};
use super::shader::{ShaderError, ShaderSource, ShaderWatcher};
use super::types::{
    GpuCrowdClip, GpuCrowdInstance, GpuDebugParams, GpuFrame, GpuObject, LineVertex, OBJECT_OUTLINED,
    ParticleInstance,
};
use crate::skinning::Aabb;

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

/// One object to draw this frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DrawObject {
    /// The mesh (skinned when it has a skin stream).
    pub mesh: MeshHandle,
    /// `world_from_model` (for skinned meshes: the world matrix of the rig's root parent).
    pub world_from_model: Mat4,
    /// Base colour (linear RGBA).
    pub color: [f32; 4],
    /// Material key (runs are sorted by it after skinned-ness).
    pub material: u32,
    /// Start of the object's rig in [`FrameData::palette`] (skinned meshes only).
    pub palette_offset: u32,
    /// World bounds used for culling and for fitting the shadow map (`None`: the mesh's bind
    /// bounds moved by `world_from_model`).
    pub bounds: Option<Aabb>,
    /// Whether it casts a shadow.
    pub casts_shadow: bool,
    /// Whether the outline pass draws it (the editor's selection; characters in `marrow render`).
    pub outlined: bool,
    /// The id [`Renderer::pick`] reports for it (0: not pickable).
    pub pick_id: u32,
}

impl DrawObject {
    /// An object drawing `mesh` at `world_from_model`: white, material 0, palette offset 0,
    /// bounds from the mesh, casting a shadow, not outlined, not pickable.
    pub fn new(mesh: MeshHandle, world_from_model: Mat4) -> Self {
        Self {
            mesh,
            world_from_model,
            color: [1.0; 4],
            material: 0,
            palette_offset: 0,
            bounds: None,
            casts_shadow: true,
            outlined: false,
            pick_id: 0,
        }
    }
}

/// Everything drawn in one frame. Refill it each frame (`clear` keeps the allocations).
#[derive(Clone, Debug, PartialEq)]
pub struct FrameData {
    /// The camera.
    pub camera: Camera,
    /// The light.
    pub light: Light,
    /// Objects.
    pub objects: Vec<DrawObject>,
    /// Every posed rig's palette (`model_from_bone * bone_from_bind`), packed end to end.
    pub palette: Vec<Mat4>,
    /// Version of `palette`: the upload is skipped when it equals the last uploaded one.
    pub palette_version: u64,
    /// Overlay line list (pairs of vertices), drawn over everything.
    pub lines: Vec<LineVertex>,
    /// Line list (pairs of vertices) drawn with depth testing before the overlay (the ground
    /// grid: meshes hide it).
    pub depth_lines: Vec<LineVertex>,
    /// Outline width in pixels, 1 to 8 (`None`: no outline pass). Only objects with
    /// [`DrawObject::outlined`] are outlined, around their visible silhouette.
    pub outline_width: Option<f32>,
    /// Outline colour (linear RGBA).
    pub outline_color: [f32; 4],
    /// Whether to render the shadow map.
    pub shadows: bool,
    /// Background colour (linear).
    pub clear_color: [f64; 4],
    /// Particle discs (posed, world space): drawn camera-facing in the depth, forward and shadow
    /// passes (see [`ParticleInstance`]).
    pub particles: Vec<ParticleInstance>,
    /// The crowds' baked table, clips and instances, uploaded only when its version moves (a
    /// playing crowd uploads nothing per frame but the frame uniform).
    pub crowd: Option<std::sync::Arc<CrowdData>>,
    /// Crowd draws: one instanced draw per mesh primitive per pass.
    pub crowd_draws: Vec<CrowdDraw>,
    /// The crowds' clock (seconds), read by the vertex shader.
    pub crowd_time: f32,
}

/// Every crowd's GPU data: the baked matrices (three rows each), the baked clips, the instances.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CrowdData {
    /// Changes whenever anything below does (0 uploads every frame).
    pub version: u64,
    /// Baked matrices, three rows each ([`crate::crowd::BakedPoses::matrices`], end to end).
    pub table: Vec<[f32; 12]>,
    /// Baked clips (offsets into `table`).
    pub clips: Vec<GpuCrowdClip>,
    /// Instances.
    pub instances: Vec<GpuCrowdInstance>,
}

impl CrowdData {
    /// Bytes uploaded when it changes.
    pub fn bytes(&self) -> u64 {
        (self.table.len() * size_of::<[f32; 12]>()
            + self.clips.len() * size_of::<GpuCrowdClip>()
            + self.instances.len() * size_of::<GpuCrowdInstance>()) as u64
    }
}

/// One instanced draw of a crowd: a skinned mesh (joint indices are the baked skeleton's bones)
/// drawn for `count` instances from `first` in [`CrowdData::instances`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CrowdDraw {
    /// The mesh (skinned).
    pub mesh: MeshHandle,
    /// First instance.
    pub first: u32,
    /// Instances.
    pub count: u32,
    /// World box holding every instance at every baked frame (culling and the light's box).
    pub bounds: Aabb,
    /// Whether it casts shadows.
    pub casts_shadow: bool,
    /// The entity it belongs to, as a pick id (`index + 1`; 0: none): framing a selection uses it.
    pub pick_id: u32,
}

impl Default for FrameData {
    fn default() -> Self {
        Self {
            camera: Camera::default(),
            light: Light::default(),
            objects: Vec::new(),
            palette: Vec::new(),
            palette_version: 0,
            lines: Vec::new(),
            depth_lines: Vec::new(),
            outline_width: None,
            outline_color: [0.02, 0.02, 0.03, 1.0],
            shadows: true,
            clear_color: [0.32, 0.36, 0.42, 1.0],
            particles: Vec::new(),
            crowd: None,
            crowd_draws: Vec::new(),
            crowd_time: 0.0,
        }
    }
}

impl FrameData {
    /// Empties the object, palette and line lists (keeping their capacity).
    pub fn clear(&mut self) {
        self.objects.clear();
        self.palette.clear();
        self.lines.clear();
        self.depth_lines.clear();
        self.particles.clear();
        self.crowd_draws.clear();
    }
}

/// What one [`Renderer::render`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameStats {
    /// Objects submitted.
    pub objects: u32,
    /// Objects inside the camera frustum.
    pub visible: u32,
    /// Objects culled by the camera frustum.
    pub culled: u32,
    /// Objects drawn into the shadow map.
    pub shadow_casters: u32,
    /// Draw calls over all passes.
    pub draw_calls: u32,
    /// Times a skinned pipeline was bound (over all passes).
    pub skinned_pipeline_binds: u32,
    /// Whether the palette was uploaded this frame.
    pub palette_uploaded: bool,
    /// Bytes of palette uploaded this frame.
    pub palette_bytes: u64,
    /// Particle discs drawn (each pass that draws them draws them all in one instanced call).
    pub particles: u32,
    /// Crowd instances inside the camera frustum (by their crowd draw's bounds).
    pub crowd_instances: u32,
    /// Whether the crowd data was uploaded this frame, and its bytes.
    pub crowd_bytes: u64,
    /// Crowd draws left out of this frame because together they ask more of the adapter than
    /// [`GpuContext::crowd_vertex_budget`] (the rest of the frame is drawn; the reason is
    /// [`Renderer::crowd_refusal`]).
    pub crowds_refused: u32,
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

struct Layouts {
    frame: wgpu::BindGroupLayout,
    objects: wgpu::BindGroupLayout,
    particles: wgpu::BindGroupLayout,
    particle_forward: wgpu::PipelineLayout,
    particle_depth: wgpu::PipelineLayout,
    shadow: wgpu::BindGroupLayout,
    material: wgpu::BindGroupLayout,
    mask: wgpu::BindGroupLayout,
    outline: wgpu::PipelineLayout,
    debug: wgpu::BindGroupLayout,
    forward: wgpu::PipelineLayout,
    depth: wgpu::PipelineLayout,
    overlay: wgpu::PipelineLayout,
    compute: wgpu::PipelineLayout,
}

/// Pipelines indexed `[static, skinned]`.
struct Pipelines {
    forward: [wgpu::RenderPipeline; 2],
    depth: [wgpu::RenderPipeline; 2],
    shadow: [wgpu::RenderPipeline; 2],
    /// Outline mask (silhouettes), then the full-screen outline.
    mask: [wgpu::RenderPipeline; 2],
    outline: wgpu::RenderPipeline,
    pick: [wgpu::RenderPipeline; 2],
    /// Particle discs: forward, depth pre-pass, shadow.
    particles: [wgpu::RenderPipeline; 3],
    /// Crowd instances (mesh.wgsl with `SKINNED` and `CROWD`): forward, depth pre-pass, shadow.
    crowd: [wgpu::RenderPipeline; 3],
    /// The skinning read-back of a crowd instance.
    skin_debug_crowd: wgpu::ComputePipeline,
    overlay: wgpu::RenderPipeline,
    overlay_depth: wgpu::RenderPipeline,
    skin_debug: wgpu::ComputePipeline,
}

#[derive(Clone, Copy, Debug)]
struct Run {
    key: u64,
    material: u32,
    mesh: MeshHandle,
    skinned: bool,
    visible: (u32, u32),
    casters: (u32, u32),
}

/// The timed passes, in encode order (each has a begin and an end timestamp).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pass {
    Shadow = 0,
    Depth = 1,
    Forward = 2,
    Outline = 3,
    Overlay = 4,
}

const PASS_COUNT: usize = 5;

/// GPU time of each pass of one frame, in milliseconds (`None`: the pass did not run).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PassTimes {
    /// Shadow map.
    pub shadow: Option<f64>,
    /// Depth pre-pass.
    pub depth: Option<f64>,
    /// Forward shading.
    pub forward: Option<f64>,
    /// Outline.
    pub outline: Option<f64>,
    /// Skeleton overlay.
    pub overlay: Option<f64>,
}

impl PassTimes {
    /// The sum over the passes that ran.
    pub fn total_ms(&self) -> f64 {
        [self.shadow, self.depth, self.forward, self.outline, self.overlay].iter().flatten().sum()
    }
}

fn pass_stamps(stamps: Option<&wgpu::QuerySet>, pass: Pass) -> Option<wgpu::RenderPassTimestampWrites<'_>> {
    stamps.map(|q| wgpu::RenderPassTimestampWrites {
        query_set: q,
        beginning_of_pass_write_index: Some(pass as u32 * 2),
        end_of_pass_write_index: Some(pass as u32 * 2 + 1),
    })
}

fn depth_attachment(view: &wgpu::TextureView, clear: bool) -> wgpu::RenderPassDepthStencilAttachment<'_> {
    wgpu::RenderPassDepthStencilAttachment {
        view,
        depth_ops: Some(wgpu::Operations {
            load: if clear { wgpu::LoadOp::Clear(1.0) } else { wgpu::LoadOp::Load },
            store: wgpu::StoreOp::Store,
        }),
        stencil_ops: None,
    }
}

fn color_attachment(
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

/// Timestamp queries with one read-back in flight at a time: a frame's stamps are resolved
/// only while no earlier read-back is pending, then mapped on a later poll.
struct Timing {
    queries: wgpu::QuerySet,
    resolve: wgpu::Buffer,
    readback: wgpu::Buffer,
    period_ns: f32,
    /// The passes of the frame whose stamps were copied into `readback` (not yet mapped).
    submitted: Option<u8>,
    /// Set by the map callback: `Some(ok)` once the mapping finished.
    mapped: std::sync::Arc<std::sync::Mutex<Option<bool>>>,
    mapping: bool,
    last: Option<PassTimes>,
}

impl Timing {
    fn busy(&self) -> bool {
        self.submitted.is_some()
    }

    fn request_map(&mut self) {
        if self.submitted.is_some() && !self.mapping {
            self.mapping = true;
            let flag = self.mapped.clone();
            self.readback.slice(..).map_async(wgpu::MapMode::Read, move |r| {
                if let Ok(mut f) = flag.lock() {
                    *f = Some(r.is_ok());
                }
            });
        }
    }

    /// Reads the mapped stamps when the mapping finished; returns whether a reading was taken.
    fn finish_read(&mut self) -> Option<()> {
        let done = self.mapped.lock().ok()?.take()?;
        self.mapping = false;
        let ran = self.submitted.take()?;
        if !done {
            return None;
        }
        let times = {
            let view = self.readback.slice(..).get_mapped_range().ok()?;
            let ts: &[u64] = bytemuck::try_cast_slice(&view).ok()?;
            let ms = |p: Pass| {
                let i = p as usize * 2;
                (ran & (1 << p as u8) != 0)
                    .then(|| ts[i + 1].saturating_sub(ts[i]) as f64 * self.period_ns as f64 / 1e6)
            };
            PassTimes {
                shadow: ms(Pass::Shadow),
                depth: ms(Pass::Depth),
                forward: ms(Pass::Forward),
                outline: ms(Pass::Outline),
                overlay: ms(Pass::Overlay),
            }
        };
        self.readback.unmap();
        self.last = Some(times);
        Some(())
    }
}

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
struct PickTarget {
    width: u32,
    height: u32,
    ids: wgpu::Texture,
    ids_view: wgpu::TextureView,
    depth_view: wgpu::TextureView,
}

/// The format of the picking pass's id target.
const PICK_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::R32Uint;

impl PickTarget {
    fn new(device: &wgpu::Device, width: u32, height: u32) -> Self {
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

fn storage_entry(
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

fn uniform_entry(binding: u32, visibility: wgpu::ShaderStages) -> wgpu::BindGroupLayoutEntry {
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

fn make_layouts(device: &wgpu::Device) -> Layouts {
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

const VERTEX_ATTRIBUTES: [wgpu::VertexAttribute; 5] =
    wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x3, 2 => Float32x4, 3 => Float32x2, 6 => Unorm8x4];
const SKIN_ATTRIBUTES: [wgpu::VertexAttribute; 2] = wgpu::vertex_attr_array![4 => Uint16x4, 5 => Float32x4];
const LINE_ATTRIBUTES: [wgpu::VertexAttribute; 2] = wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x4];

fn vertex_layouts(skinned: bool) -> Vec<Option<wgpu::VertexBufferLayout<'static>>> {
    let mut v = vec![Some(wgpu::VertexBufferLayout {
        array_stride: size_of::<super::types::GpuVertex>() as u64,
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

struct MeshPipelineDesc<'a> {
    label: &'a str,
    module: &'a wgpu::ShaderModule,
    layout: &'a wgpu::PipelineLayout,
    /// The vertex streams (none for shaders that expand instances from storage).
    buffers: &'a [Option<wgpu::VertexBufferLayout<'a>>],
    vs: &'a str,
    fs: Option<&'a str>,
    cull: Option<wgpu::Face>,
    depth_write: bool,
    compare: wgpu::CompareFunction,
    bias: wgpu::DepthBiasState,
    /// The colour target (`None`: a depth-only pass whose fragment stage only discards).
    format: Option<wgpu::TextureFormat>,
}

fn mesh_pipeline(device: &wgpu::Device, d: MeshPipelineDesc<'_>) -> wgpu::RenderPipeline {
    let targets: Vec<Option<wgpu::ColorTargetState>> = d
        .format
        .map(|format| wgpu::ColorTargetState { format, blend: None, write_mask: wgpu::ColorWrites::ALL })
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
fn particle_pipelines(
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
fn mesh_pass_desc<'a>(
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
        },
    }
}

/// An overlay line pipeline (`compare`: whether the lines are depth tested).
fn line_pipeline(
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

fn build_pipelines(
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

fn objects_group(
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

fn particles_group(
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

fn material_group(
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

fn mat(m: &Mat4) -> [[f32; 4]; 4] {
    m.to_cols_array_2d()
}

/// Reads a whole buffer back (blocking).
fn read_buffer(ctx: &GpuContext, buffer: &wgpu::Buffer) -> Result<Vec<u8>, RenderError> {
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

    fn prepare(
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
        let any_skinned = self.runs.iter().any(|r| r.skinned);
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
    fn build_runs(&mut self, pool: &MeshPool, frame: &FrameData) {
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
    }

    /// Material bind groups for this frame's textures (0 is the white texel).
    fn prepare_materials(&mut self, pool: &MeshPool) {
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
    fn prepare_crowds(
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
    fn prepare_particles(
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
    fn shadow_pass(
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
    fn depth_pass(
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
    fn draw_crowds(
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
    fn draw_particles(&self, pass: &mut wgpu::RenderPass<'_>, which: usize, stats: &mut FrameStats) {
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
    fn forward_pass(
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
    }

    /// The outline: the visible silhouettes of the objects flagged [`DrawObject::outlined`]
    /// into the target's mask (depth-tested against the pre-pass), then a full-screen pass that
    /// paints the outline colour around the mask.
    fn outline_pass(
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
    fn overlay_pass(
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

    /// GPU time of the last timed frame (shadow pass start to the last pass's end) from
    /// timestamp queries; `None` without [`RendererSettings::gpu_timing`] or device support.
    /// Blocks until the frame's queries are read.
    pub fn last_gpu_time_ms(&mut self) -> Option<f64> {
        let ctx = self.ctx.clone();
        let t = self.timing.as_mut()?;
        t.request_map();
        ctx.wait_idle();
        t.finish_read()?;
        t.last.map(|p| p.total_ms())
    }

    /// Per-pass GPU times of the last frame whose queries have been read, without blocking:
    /// each call maps the pending read-back if there is one and reads it once the GPU is done.
    /// `None` until a first reading exists (a pending query is never shown as 0).
    pub fn poll_pass_times(&mut self) -> Option<PassTimes> {
        let ctx = self.ctx.clone();
        let t = self.timing.as_mut()?;
        t.request_map();
        let _ = ctx.device.poll(wgpu::PollType::Poll);
        t.finish_read();
        t.last
    }

    /// Whether GPU timing is on (the setting asked for it and the device has timestamp queries).
    pub fn has_gpu_timing(&self) -> bool {
        self.timing.is_some()
    }

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

    fn read_texture(
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

    fn read_skinned(
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

fn draw_runs(
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
fn draw_runs_with(
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
