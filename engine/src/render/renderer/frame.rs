//! Per-frame draw data (re_renderer's draw data): [`FrameData`] (camera, light, objects, the
//! packed palette, overlay lines, crowds, particles), which the caller refills every frame
//! without reallocating, and [`FrameStats`], what a frame drew.
//!
//! Not here: GPU resources (the parent module's [`Renderer`]) or passes (`passes`).

use glam::Mat4;

use super::Light;
use crate::render::camera::Camera;
use crate::render::mesh::MeshHandle;
use crate::render::types::{GpuCrowdClip, GpuCrowdInstance, LineVertex, ParticleInstance};
use crate::skinning::Aabb;

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
    /// Onion skin ghosts: meshes drawn translucent in their colour's alpha at the end of the
    /// forward pass (depth-tested against the scene, writing no depth), never in the depth,
    /// shadow, outline or pick passes. Their `palette_offset` points at palettes appended to
    /// [`FrameData::palette`] for the ghost poses.
    pub ghosts: Vec<DrawObject>,
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
            ghosts: Vec::new(),
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
        self.ghosts.clear();
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
