//! The viewport's GPU side. [`ViewportGpu`] (the engine [`Renderer`], its mesh pool, the
//! [`WorldRenderer`] extraction state, the frame data, the offscreen target and a
//! [`Presenter`]) lives in egui-wgpu's callback resources, on eframe's own device. Each frame
//! the panel extracts the world into it from the UI thread ([`ViewportGpu::extract`]); the
//! paint callback ([`ViewportCallback`]) encodes the engine's passes in `prepare` and presents
//! the target inside egui's pass in `paint`.
//!
//! Not here: input, the camera or the gizmo (see `crate::panels::viewport`).

use std::sync::Mutex;
use std::time::Instant;

use egui_wgpu::wgpu;
use egui_wgpu::{CallbackResources, CallbackTrait, RenderState, ScreenDescriptor};
use marrow_engine::render::{
    FrameData, FrameStats, GpuContext, MeshPool, PassTimes, Presenter, RenderError, RenderTarget, Renderer,
    RendererSettings, ShaderSource, WorldRenderer,
};
use marrow_engine::scene::World;

/// Everything the viewport draws with.
#[derive(Debug)]
pub struct ViewportGpu {
    /// The device (eframe's).
    pub ctx: GpuContext,
    /// The engine renderer.
    pub renderer: Renderer,
    /// Its meshes.
    pub pool: MeshPool,
    /// The world extraction state (uploads, morph instances, view options).
    pub world: WorldRenderer,
    /// This frame's draw data.
    pub frame: FrameData,
    target: Option<RenderTarget>,
    presenter: Presenter,
    /// What the last encode did.
    pub stats: Option<FrameStats>,
    /// CPU time of the last extraction, ms.
    pub extract_ms: f64,
    /// CPU time of the last encode (render submit), ms.
    pub submit_ms: f64,
    /// Whether the last extraction ran (false while paused with nothing to redraw).
    pub extracted: bool,
    /// Palette uploads seen at the last stats read.
    pub palette_uploads: u64,
}

impl ViewportGpu {
    /// Builds the renderer on `rs`'s device (shaders from `shaders`, hot-reloaded when it is a
    /// directory; GPU timing when the device has timestamp queries).
    pub fn new(rs: &RenderState, shaders: ShaderSource) -> Result<Self, RenderError> {
        let ctx = GpuContext::from_parts(
            rs.instance.clone(),
            rs.adapter.clone(),
            rs.device.clone(),
            rs.queue.clone(),
        );
        let mut renderer =
            Renderer::new(&ctx, RendererSettings { shaders, gpu_timing: true, ..Default::default() })?;
        if let Err(e) = renderer.watch_shaders() {
            log::warn!("{e}");
        }
        let presenter = Presenter::new(&rs.device, rs.target_format)?;
        Ok(Self {
            ctx,
            renderer,
            pool: MeshPool::new(),
            world: WorldRenderer::new(),
            frame: FrameData { clear_color: [0.045, 0.05, 0.06, 1.0], ..FrameData::default() },
            target: None,
            presenter,
            stats: None,
            extract_ms: 0.0,
            submit_ms: 0.0,
            extracted: false,
            palette_uploads: 0,
        })
    }

    /// Puts a fresh `ViewportGpu` into `rs`'s callback resources (kept if one is there).
    pub fn install(rs: &RenderState, shaders: ShaderSource) -> Result<(), RenderError> {
        let mut r = rs.renderer.write();
        if r.callback_resources.get::<Mutex<ViewportGpu>>().is_none() {
            let gpu = ViewportGpu::new(rs, shaders)?;
            r.callback_resources.insert(Mutex::new(gpu));
        }
        Ok(())
    }

    /// Runs `f` on the installed `ViewportGpu` (none installed: `None`).
    pub fn with<R>(rs: &RenderState, f: impl FnOnce(&mut ViewportGpu) -> R) -> Option<R> {
        let mut r = rs.renderer.write();
        let m = r.callback_resources.get_mut::<Mutex<ViewportGpu>>()?;
        let g = m.get_mut().ok()?;
        Some(f(g))
    }

    /// Makes the offscreen target `width` x `height` pixels (recreated on a size change).
    pub fn ensure_target(&mut self, width: u32, height: u32) {
        let (width, height) = (width.clamp(1, 8192), height.clamp(1, 8192));
        if self.target.as_ref().is_none_or(|t| t.width != width || t.height != height) {
            let t = self.renderer.create_target(width, height);
            self.presenter.bind(&self.ctx.device, &t);
            self.target = Some(t);
        }
    }

    /// The target's size.
    pub fn target_size(&self) -> Option<(u32, u32)> {
        self.target.as_ref().map(|t| (t.width, t.height))
    }

    /// Refills the frame data from `world` (uploads meshes on first use).
    pub fn extract(&mut self, world: &World, pose_version: u64) -> Result<(), RenderError> {
        let t0 = Instant::now();
        self.frame.clear();
        let r = self.world.extract(&self.ctx, &mut self.pool, world, pose_version, &mut self.frame);
        self.extract_ms = t0.elapsed().as_secs_f64() * 1e3;
        self.extracted = true;
        r
    }

    /// Encodes the frame into the target (what the callback's `prepare` does).
    pub fn encode(&mut self, encoder: &mut wgpu::CommandEncoder) {
        let Some(target) = &self.target else { return };
        let t0 = Instant::now();
        match self.renderer.encode(encoder, &self.pool, &self.frame, target) {
            Ok(s) => self.stats = Some(s),
            Err(e) => log::error!("viewport: {e}"),
        }
        self.submit_ms = t0.elapsed().as_secs_f64() * 1e3;
    }

    /// Per-pass GPU times, when the device measures them (never a pending 0).
    pub fn pass_times(&mut self) -> Option<PassTimes> {
        self.renderer.poll_pass_times()
    }
}

/// The paint callback drawing the viewport: encode in `prepare`, present in `paint`.
#[derive(Clone, Copy, Debug, Default)]
pub struct ViewportCallback;

impl CallbackTrait for ViewportCallback {
    fn prepare(
        &self,
        _device: &wgpu::Device,
        _queue: &wgpu::Queue,
        _screen: &ScreenDescriptor,
        encoder: &mut wgpu::CommandEncoder,
        resources: &mut CallbackResources,
    ) -> Vec<wgpu::CommandBuffer> {
        if let Some(g) = resources.get_mut::<Mutex<ViewportGpu>>().and_then(|m| m.get_mut().ok()) {
            g.encode(encoder);
        }
        Vec::new()
    }

    fn paint(
        &self,
        _info: egui::PaintCallbackInfo,
        pass: &mut wgpu::RenderPass<'static>,
        resources: &CallbackResources,
    ) {
        if let Some(g) = resources.get::<Mutex<ViewportGpu>>().and_then(|m| m.lock().ok()) {
            g.presenter.draw(pass);
        }
    }
}
