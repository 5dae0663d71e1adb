//! Frame statistics (the Stats panel's data): smoothed CPU timings of each stage of an editor
//! frame, per-frame counters, per-pass GPU times and the frame time history. Session state:
//! never saved.
//!
//! The UI figure covers the editor's own frame function only (panels built, session stepped,
//! commands applied; viewport extraction taken out). What eframe does after it (egui's end of
//! pass, tessellation of every shape, the texture and vertex uploads, the render pass and
//! present's CPU side) is not visible from inside the frame function: the whole frame's CPU time
//! comes from eframe (`Frame::info().cpu_usage`, the previous frame, vsync waiting excluded),
//! and the part after the UI is that minus the same frame's UI figure.
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
    /// The editor's frame function, viewport extraction excluded (ms).
    pub ui: Ema,
    /// The whole frame's CPU time as eframe measures it: the UI, egui's end of pass and
    /// tessellation, painting and presenting, vsync waiting excluded (ms; `None` outside
    /// eframe, as in tests).
    pub whole_frame: Ema,
    /// The part of the whole frame after the UI: egui's end of pass, tessellation and the
    /// paint submission (ms; the whole frame minus that frame's UI figure).
    pub after_ui: Ema,
    /// The last frame's UI figure, unsmoothed (ms).
    last_ui: Option<f64>,
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

    /// Records the UI figure of this frame (ms).
    pub fn record_ui(&mut self, ms: f64) {
        self.ui.add(ms);
        self.last_ui = Some(ms);
    }

    /// Records eframe's CPU time of the previous frame (ms), which the last recorded UI figure
    /// belongs to: the whole frame, and the part after the UI.
    pub fn record_whole_frame(&mut self, ms: f64) {
        self.whole_frame.add(ms);
        if let Some(ui) = self.last_ui.take() {
            self.after_ui.add((ms - ui).max(0.0));
        }
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

    #[test]
    fn the_part_after_the_ui_is_the_whole_frame_minus_that_frames_ui() {
        let mut s = Stats::default();
        // No UI figure yet: the whole frame is known, the part after the UI is not.
        s.record_whole_frame(9.0);
        assert_eq!((s.whole_frame.get(), s.after_ui.get()), (Some(9.0), None));
        s.record_ui(3.0);
        s.record_whole_frame(12.0);
        assert_eq!(s.after_ui.get(), Some(9.0));
        assert_eq!(s.ui.get(), Some(3.0));
        // A whole-frame reading without a new UI figure does not reuse the old one.
        s.record_whole_frame(50.0);
        assert_eq!(s.after_ui.get(), Some(9.0));
    }
}
