//! Frame statistics (the Stats panel's data): smoothed CPU timings of each stage of an editor
//! frame, per-frame counters, per-pass GPU times and the frame time history. Session state:
//! never saved.
//!
//! Not here: drawing them (`crate::panels::stats`).

use std::collections::VecDeque;

use marrow_engine::render::PassTimes;

use crate::session::Ema;

/// How many frame intervals the history keeps.
pub const HISTORY: usize = 300;

/// The editor's frame statistics.
#[derive(Debug, Default)]
pub struct Stats {
    /// World frame: sampling, blending, composition, palettes (ms).
    pub animation: Ema,
    /// Packing rig palettes for the GPU (ms).
    pub palette: Ema,
    /// Rebuilding morph instances (ms).
    pub morph: Ema,
    /// Extraction of the world into draw data, total (ms).
    pub extraction: Ema,
    /// Encoding the viewport's passes (ms).
    pub submit: Ema,
    /// Building the UI (ms).
    pub ui: Ema,
    /// Time between frames (ms).
    pub interval: Ema,
    /// Rig palettes packed this frame.
    pub palettes: u32,
    /// Joint matrices packed this frame.
    pub joint_matrices: u32,
    /// Palette uploads to the GPU this frame.
    pub palette_uploads: u32,
    /// Morph vertex uploads this frame.
    pub morph_uploads: u32,
    /// Per-pass GPU times (`None` until a reading came back, or without timestamp queries).
    pub gpu: Option<PassTimes>,
    /// Whether the device measures GPU time at all.
    pub gpu_timing: bool,
    /// Frame intervals (ms), oldest first.
    pub history: VecDeque<f64>,
}

impl Stats {
    /// Frames per second from the smoothed interval.
    pub fn fps(&self) -> Option<f64> {
        self.interval.get().filter(|ms| *ms > 0.0).map(|ms| 1000.0 / ms)
    }

    /// Records a frame interval.
    pub fn frame_interval(&mut self, ms: f64) {
        self.interval.add(ms);
        if self.history.len() == HISTORY {
            self.history.pop_front();
        }
        self.history.push_back(ms);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ema_takes_the_first_sample_then_smooths_by_a_tenth() {
        let mut e = Ema::default();
        assert_eq!(e.get(), None);
        e.add(10.0);
        assert_eq!(e.get(), Some(10.0));
        e.add(20.0);
        assert_eq!(e.get(), Some(11.0));
        let mut s = Stats::default();
        s.frame_interval(20.0);
        assert_eq!(s.fps(), Some(50.0));
    }
}
