//! The simulation clock: a fixed-tick accumulator (60 Hz by default).
//!
//! Pause, time scale and single-step act only through whether a tick happens: every tick is the
//! same `tick_seconds` of simulation time, so animation, markers and fades behave identically at
//! any time scale. A frame with no tick is a paused frame; the caller then composes a zero-length
//! step (`Animator::advance(0.0)`) so a scrub while paused shows the pose it names.
//!
//! The clock does not own animators or call them; the frame loop does.

/// A fixed-tick accumulator.
#[derive(Clone, Debug)]
pub struct Clock {
    tick_seconds: f64,
    accumulator: f64,
    /// Scale applied to real time before it is accumulated (1 = real time).
    pub time_scale: f64,
    paused: bool,
    step_requested: bool,
    /// At most this many ticks run in one frame (the rest of the backlog is dropped), so a long
    /// hitch does not spiral.
    pub max_ticks_per_frame: u32,
    ticks: u64,
}

impl Default for Clock {
    fn default() -> Self {
        Self::new(60.0)
    }
}

impl Clock {
    /// A clock ticking `hz` times per simulated second (falls back to 60 for a non-positive rate).
    pub fn new(hz: f64) -> Self {
        let hz = if hz.is_finite() && hz > 0.0 { hz } else { 60.0 };
        Self {
            tick_seconds: 1.0 / hz,
            accumulator: 0.0,
            time_scale: 1.0,
            paused: false,
            step_requested: false,
            max_ticks_per_frame: 8,
            ticks: 0,
        }
    }

    /// Seconds of simulation per tick.
    pub fn tick_seconds(&self) -> f64 {
        self.tick_seconds
    }

    /// Ticks run so far.
    pub fn ticks(&self) -> u64 {
        self.ticks
    }

    /// Whether the clock is paused.
    pub fn is_paused(&self) -> bool {
        self.paused
    }

    /// Pauses or resumes. Pausing drops the partial tick accumulated so far.
    pub fn set_paused(&mut self, paused: bool) {
        self.paused = paused;
        if paused {
            self.accumulator = 0.0;
        }
    }

    /// Asks for exactly one tick on the next frame (used while paused).
    pub fn request_step(&mut self) {
        self.step_requested = true;
    }

    /// Feeds `real_seconds` of wall time and returns how many ticks to run this frame.
    pub fn advance(&mut self, real_seconds: f64) -> u32 {
        let mut n = 0;
        if self.paused {
            if self.step_requested {
                n = 1;
            }
        } else {
            let dt = if real_seconds.is_finite() { real_seconds.max(0.0) } else { 0.0 };
            let scale = if self.time_scale.is_finite() { self.time_scale.max(0.0) } else { 0.0 };
            self.accumulator += dt * scale;
            // Tolerate rounding so that feeding exactly one tick of time yields one tick.
            let eps = self.tick_seconds * 1e-6;
            while self.accumulator + eps >= self.tick_seconds && n < self.max_ticks_per_frame {
                self.accumulator -= self.tick_seconds;
                n += 1;
            }
            if n == self.max_ticks_per_frame && self.accumulator >= self.tick_seconds {
                self.accumulator = 0.0;
            }
            self.accumulator = self.accumulator.max(0.0);
            if self.step_requested && n == 0 {
                n = 1;
            }
        }
        self.step_requested = false;
        self.ticks += n as u64;
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_follow_time_scale_pause_and_step() {
        let mut c = Clock::new(60.0);
        assert_eq!(c.advance(1.0 / 60.0), 1);
        assert_eq!(c.advance(0.5 / 60.0), 0);
        assert_eq!(c.advance(0.5 / 60.0), 1);
        c.time_scale = 2.0;
        assert_eq!(c.advance(1.0 / 60.0), 2);
        c.set_paused(true);
        assert_eq!(c.advance(1.0), 0);
        c.request_step();
        assert_eq!(c.advance(0.0), 1);
        assert_eq!(c.advance(1.0), 0);
        assert_eq!(c.ticks(), 5);
    }
}
