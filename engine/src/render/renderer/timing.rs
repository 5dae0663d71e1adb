//! GPU timing: timestamp queries around each pass, read back without stalling (a map is
//! requested only when the previous read finished), as per-pass milliseconds ([`PassTimes`]).
//!
//! Not here: the passes themselves (`passes`).

use super::Renderer;

/// The timed passes, in encode order (each has a begin and an end timestamp).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pass {
    Shadow = 0,
    Depth = 1,
    Forward = 2,
    Outline = 3,
    Overlay = 4,
}

pub(super) const PASS_COUNT: usize = 5;

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

pub(super) fn pass_stamps(
    stamps: Option<&wgpu::QuerySet>,
    pass: Pass,
) -> Option<wgpu::RenderPassTimestampWrites<'_>> {
    stamps.map(|q| wgpu::RenderPassTimestampWrites {
        query_set: q,
        beginning_of_pass_write_index: Some(pass as u32 * 2),
        end_of_pass_write_index: Some(pass as u32 * 2 + 1),
    })
}

/// Timestamp queries with one read-back in flight at a time: a frame's stamps are resolved
/// only while no earlier read-back is pending, then mapped on a later poll.
pub(super) struct Timing {
    pub(super) queries: wgpu::QuerySet,
    pub(super) resolve: wgpu::Buffer,
    pub(super) readback: wgpu::Buffer,
    pub(super) period_ns: f32,
    /// The passes of the frame whose stamps were copied into `readback` (not yet mapped).
    pub(super) submitted: Option<u8>,
    /// Set by the map callback: `Some(ok)` once the mapping finished.
    pub(super) mapped: std::sync::Arc<std::sync::Mutex<Option<bool>>>,
    pub(super) mapping: bool,
    pub(super) last: Option<PassTimes>,
}

impl Timing {
    pub(super) fn busy(&self) -> bool {
        self.submitted.is_some()
    }

    pub(super) fn request_map(&mut self) {
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
    pub(super) fn finish_read(&mut self) -> Option<()> {
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

impl Renderer {
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
}
