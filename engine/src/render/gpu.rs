//! The wgpu device: [`GpuContext`] (instance, adapter, device, queue) created headless, and
//! [`test_device`], the one helper every GPU test and benchmark uses to get a device or skip.
//!
//! This module does not create windows or surfaces: the editor hands its own egui-wgpu device
//! to [`GpuContext::from_parts`].

use super::RenderError;

/// [`GpuContext::crowd_vertex_budget`] on a CPU renderer: lavapipe shades a crowd's skinned
/// vertices (every pass of a frame) at about 0.1 million a second on this project's 2-core CI
/// machine, so this is a frame of about 40 s there (1,200 CesiumMan instances).
pub const CPU_CROWD_VERTICES: u64 = 4_000_000;

/// [`GpuContext::crowd_vertex_budget`] on a GPU: 2^32 vertices, a million instances of a
/// 4,000-vertex character.
pub const GPU_CROWD_VERTICES: u64 = 1 << 32;

/// One wgpu device and its queue (shared by every renderer object).
#[derive(Clone, Debug)]
pub struct GpuContext {
    /// The instance the adapter came from.
    pub instance: wgpu::Instance,
    /// The adapter.
    pub adapter: wgpu::Adapter,
    /// The device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
}

impl GpuContext {
    /// A headless device on the default adapter (`WGPU_BACKEND` and friends are honoured).
    /// Timestamp queries are enabled when the adapter has them.
    pub fn headless() -> Result<Self, RenderError> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        }))
        .map_err(|e| RenderError::NoAdapter(e.to_string()))?;
        let wanted = wgpu::Features::TIMESTAMP_QUERY;
        // Downlevel limits (GL works too), but the skinning read-back pass binds five storage
        // buffers in one compute stage.
        let available = adapter.limits();
        let mut limits = wgpu::Limits::downlevel_defaults().using_resolution(available.clone());
        limits.max_storage_buffers_per_shader_stage = available.max_storage_buffers_per_shader_stage.min(8);
        let device_descriptor = wgpu::DeviceDescriptor {
            label: Some("marrow"),
            required_features: adapter.features() & wanted,
            required_limits: limits,
            ..Default::default()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&device_descriptor))
            .map_err(|e| RenderError::RequestDevice(e.to_string()))?;
        Ok(Self { instance, adapter, device, queue })
    }

    /// Wraps a device created elsewhere (the editor's egui-wgpu render state).
    pub fn from_parts(
        instance: wgpu::Instance,
        adapter: wgpu::Adapter,
        device: wgpu::Device,
        queue: wgpu::Queue,
    ) -> Self {
        Self { instance, adapter, device, queue }
    }

    /// The most crowd vertices one frame may ask of this adapter: the skinned mesh's vertices
    /// times its instances, summed over a frame's crowd draws ([`CPU_CROWD_VERTICES`] on a
    /// CPU renderer such as lavapipe, [`GPU_CROWD_VERTICES`] on a GPU). A frame past it is
    /// refused with [`RenderError::Limit`] before anything is drawn, so a huge crowd is a
    /// named error and not a frame that takes hours.
    pub fn crowd_vertex_budget(&self) -> u64 {
        if self.adapter.get_info().device_type == wgpu::DeviceType::Cpu {
            CPU_CROWD_VERTICES
        } else {
            GPU_CROWD_VERTICES
        }
    }

    /// A one-line description of the adapter (name and backend).
    pub fn describe(&self) -> String {
        let info = self.adapter.get_info();
        format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type)
    }

    /// Blocks until the queue is idle.
    pub fn wait_idle(&self) {
        let _ = self.device.poll(wgpu::PollType::wait_indefinitely());
    }
}

/// The device for GPU tests and benchmarks. With no adapter it prints
/// `SKIPPED: no GPU adapter ...` to stderr and returns `None` (the caller returns early), unless
/// the environment variable `MARROW_REQUIRE_GPU=1` is set: then it panics, so CI (which installs
/// lavapipe) can never skip silently.
#[doc(hidden)]
pub fn test_device() -> Option<GpuContext> {
    match GpuContext::headless() {
        Ok(ctx) => Some(ctx),
        Err(e) => {
            if std::env::var("MARROW_REQUIRE_GPU").is_ok_and(|v| v == "1") {
                panic!("MARROW_REQUIRE_GPU=1 but no GPU device is available: {e}");
            }
            eprintln!("==============================================================");
            eprintln!("SKIPPED: no GPU adapter ({e}); set MARROW_REQUIRE_GPU=1 to fail");
            eprintln!("==============================================================");
            None
        }
    }
}
