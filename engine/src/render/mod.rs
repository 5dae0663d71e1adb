//! The wgpu renderer (cargo feature `render`): GPU skinning through the forward, depth and
//! shadow passes, morph targets, dynamic bounds, the skeleton overlay, hot-reloaded shaders and
//! offscreen rendering to images.
//!
//! Split as in rerun's re_renderer: long-lived objects ([`GpuContext`], [`MeshPool`],
//! [`Renderer`] with its pipelines and shadow map) versus per-frame draw data ([`FrameData`]),
//! which callers refill each frame. [`scene::SceneRenderer`] drives it from an imported glTF
//! scene and its [`crate::gltf::ScenePose`]; [`scene::render_gltf`] renders one frame to RGBA.
//!
//! - [`gpu`]: the device, and `gpu::test_device` for GPU tests (skips loudly without an
//!   adapter, panics when `MARROW_REQUIRE_GPU=1`).
//! - [`types`]: the `#[repr(C)]` GPU structs.
//! - [`shader`]: embedded / directory shader sources, `#import`/`#ifdef` composition, naga
//!   validation, the notify watcher.
//! - [`mesh`]: the mesh pool (static and skinned layouts, morph instances).
//! - [`camera`]: camera, frustum culling, the light's shadow projection.
//! - [`renderer`]: pipelines, passes, palette upload, read-back.
//! - [`scene`]: glTF scenes: upload, extraction (palettes, morphs, dynamic bounds), overlay.
//! - [`world`]: a running `World`: upload, extraction (palettes, morphs, selection outline,
//!   picking ids, grid, skeleton overlay), bone picking, [`render_world`].
//! - [`present`]: drawing a rendered target inside another pass (the editor's viewport).
//!
//! Deliberately not here: windows and surfaces (the editor owns them and hands its device in
//! with [`GpuContext::from_parts`]), materials and textures (objects carry a flat colour), and
//! posing (the animation core does that; the renderer only reads palettes).

pub mod camera;
pub mod crowd;
pub mod gpu;
pub mod mesh;
mod morph;
pub mod present;
pub mod renderer;
pub mod scene;
pub mod shader;
pub mod types;
pub mod world;

pub use camera::{Camera, Frustum};
pub use gpu::GpuContext;
#[doc(hidden)]
pub use gpu::test_device;
pub use mesh::{MeshData, MeshHandle, MeshPool};
pub use present::Presenter;
pub use renderer::{
    CrowdData, CrowdDraw, DrawObject, FrameData, FrameStats, Light, PassTimes, PickRequest, RenderTarget,
    Renderer, RendererSettings,
};
pub use shader::{ShaderError, ShaderSource};
pub use types::{GpuCrowdClip, GpuCrowdInstance, ParticleInstance};
pub use world::{ExtractStats, Ghost, WorldRenderer, WorldView, pick_bone, render_world, rig_shows_itself};

pub use wgpu;

/// Why a renderer operation failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RenderError {
    /// No adapter could be found.
    #[error("no GPU adapter: {0}")]
    NoAdapter(String),
    /// The adapter refused to create a device.
    #[error("cannot create the GPU device: {0}")]
    RequestDevice(String),
    /// Shaders failed to compile (initially, with no last good pipeline to keep).
    #[error(transparent)]
    Shader(#[from] ShaderError),
    /// Mesh data is unusable.
    #[error("mesh: {0}")]
    Mesh(String),
    /// A mesh handle that the pool does not hold.
    #[error("unknown mesh handle {0}")]
    UnknownMesh(u32),
    /// Reading a buffer or texture back failed.
    #[error("GPU read-back failed: {0}")]
    Readback(String),
    /// Posing the scene failed.
    #[error("posing failed: {0}")]
    Pose(String),
    /// Encoding the image failed.
    #[error("image: {0}")]
    Image(String),
    /// A texture or buffer past what the device allows (`wgpu::Limits`), refused before it is
    /// created.
    #[error("too large for this GPU: {0}")]
    Limit(String),
}
