//! The one time <-> x mapping of the timeline, shared by the ruler, the marker and event
//! lanes, the key rows, the curve view and the playhead. The view (`start`, seconds per point)
//! is UI state; zoom and pan return a new view instead of mutating in place (as rerun's time
//! panel does), so the mapping used for drawing and for hit testing in one frame is the same.
//!
//! Not here: drawing (see the sibling modules).

/// What part of the time axis is shown.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeView {
    /// Time at the left edge, seconds.
    pub start: f64,
    /// Seconds per point (screen unit).
    pub seconds_per_point: f64,
}

impl Default for TimeView {
    fn default() -> Self {
        Self { start: -0.05, seconds_per_point: 1.0 / 300.0 }
    }
}

impl TimeView {
    /// The view showing `[t0, t1]` across `width` points, with a margin on both sides.
    pub fn fit(t0: f32, t1: f32, width: f32) -> Self {
        let span = ((t1 - t0) as f64).max(0.1);
        let margin = span * 0.04;
        Self { start: t0 as f64 - margin, seconds_per_point: (span + 2.0 * margin) / width.max(10.0) as f64 }
    }

    /// Zoomed by `factor` (> 1 zooms in) keeping the time under `x` (relative to the left
    /// edge) in place.
    pub fn zoomed(self, factor: f64, x: f32) -> Self {
        let at = self.start + x as f64 * self.seconds_per_point;
        let spp = (self.seconds_per_point / factor.max(1e-3)).clamp(1e-5, 10.0);
        Self { start: at - x as f64 * spp, seconds_per_point: spp }
    }

    /// Panned by `dx` points (positive moves the content right, showing earlier times).
    pub fn panned(self, dx: f32) -> Self {
        Self { start: self.start - dx as f64 * self.seconds_per_point, ..self }
    }
}

/// The view placed on screen: `left` is the x of the view's start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Mapping {
    /// The view.
    pub view: TimeView,
    /// Screen x of the view's start.
    pub left: f32,
    /// Screen x of the right edge.
    pub right: f32,
}

impl Mapping {
    /// The mapping of `view` over `[left, right]`.
    pub fn new(view: TimeView, left: f32, right: f32) -> Self {
        Self { view, left, right }
    }

    /// Screen x of time `t`.
    pub fn x(&self, t: f32) -> f32 {
        self.left + ((t as f64 - self.view.start) / self.view.seconds_per_point) as f32
    }

    /// Time at screen x.
    pub fn t(&self, x: f32) -> f32 {
        (self.view.start + (x - self.left) as f64 * self.view.seconds_per_point) as f32
    }

    /// The times visible, `[t(left), t(right)]`.
    pub fn visible(&self) -> (f32, f32) {
        (self.t(self.left), self.t(self.right))
    }

    /// Points per second.
    pub fn points_per_second(&self) -> f32 {
        (1.0 / self.view.seconds_per_point) as f32
    }

    /// Ruler ticks for a clip at `fps`: (frame step between ticks, labelled every n-th tick),
    /// so labelled ticks are at least 48 points apart and ticks at least 6.
    pub fn frame_ticks(&self, fps: f32) -> (u32, u32) {
        let px_per_frame = self.points_per_second() / fps.max(1.0);
        let steps = [1u32, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1200, 3000, 6000];
        let step = steps.iter().copied().find(|s| *s as f32 * px_per_frame >= 6.0).unwrap_or(6000);
        let label = steps
            .iter()
            .copied()
            .find(|s| *s >= step && *s % step == 0 && *s as f32 * px_per_frame >= 48.0)
            .unwrap_or(6000);
        (step, (label / step).max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_and_x_invert_and_zoom_keeps_the_pointer_time() {
        let m = Mapping::new(TimeView::fit(0.0, 2.0, 400.0), 100.0, 500.0);
        for t in [0.0f32, 0.37, 2.0] {
            assert!((m.t(m.x(t)) - t).abs() < 1e-5);
        }
        assert!(m.x(0.0) > 100.0 && m.x(2.0) < 500.0, "the fit leaves a margin");
        let under = m.t(250.0);
        let z = Mapping::new(m.view.zoomed(2.0, 150.0), 100.0, 500.0);
        assert!((z.t(250.0) - under).abs() < 1e-5);
        assert!((z.points_per_second() - 2.0 * m.points_per_second()).abs() < 1e-2);
        let p = Mapping::new(m.view.panned(40.0), 100.0, 500.0);
        assert!((p.x(1.0) - (m.x(1.0) + 40.0)).abs() < 1e-3);
    }

    #[test]
    fn ruler_ticks_stay_readable() {
        let m = Mapping::new(TimeView::fit(0.0, 1.0, 600.0), 0.0, 600.0);
        let (step, every) = m.frame_ticks(30.0);
        let px = m.points_per_second() / 30.0;
        assert!(step as f32 * px >= 6.0 && (step * every) as f32 * px >= 48.0, "{step} {every}");
    }
}
