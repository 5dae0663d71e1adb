//! Playhead arithmetic shared by the [`Animator`](crate::animator::Animator) and property
//! animation: advancing a time with loop wrap or clamp, the [`PlaybackStep`] each advance yields,
//! and which markers a step sweeps over.
//!
//! Marker rule: a marker is announced when the sweep passes it. The arrival end of a step is
//! closed and the departure end open, in both directions, so a head that lands exactly on a marker
//! announces it once and moving off it announces nothing. On a loop, a marker past the wrap is
//! announced on the lap the head wraps into; a step that spans one or more whole laps announces
//! each marker once. A zero-length step (paused frame, seek) announces nothing.

/// One advance of a playhead. `to` is the exact float the head holds afterwards, so it is
/// bit-for-bit the next step's `from`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PlaybackStep {
    /// Head time before the step.
    pub from: f32,
    /// Head time after the step (wrapped or clamped).
    pub to: f32,
    /// Signed distance swept, unwrapped (for a clamped one-shot, only what was actually swept).
    pub travel: f32,
}

impl PlaybackStep {
    /// A step that does not move.
    pub fn still(at: f32) -> Self {
        Self { from: at, to: at, travel: 0.0 }
    }
}

/// Advances a head at `time` by `travel` seconds of clip time. Returns the step and whether a
/// one-shot reached its end (and should stop). Looping heads wrap into `[0, duration)`.
pub fn advance_head(time: f32, travel: f32, duration: f32, looping: bool) -> (PlaybackStep, bool) {
    if travel == 0.0 || !travel.is_finite() {
        return (PlaybackStep::still(time), false);
    }
    if !(duration > 0.0) {
        return (PlaybackStep { from: time, to: 0.0, travel: 0.0 }, !looping);
    }
    let raw = time + travel;
    if looping {
        let mut to = raw.rem_euclid(duration);
        if to >= duration {
            to = 0.0;
        }
        (PlaybackStep { from: time, to, travel }, false)
    } else {
        let to = raw.clamp(0.0, duration);
        let ended = if travel > 0.0 { raw >= duration } else { raw <= 0.0 };
        (PlaybackStep { from: time, to, travel: to - time }, ended)
    }
}

/// Calls `announce(marker_index, lap)` for every marker (times sorted ascending, in `[0, duration]`)
/// that `step` sweeps over, in sweep order. `lap` is 0 for the lap the step started in, +1 / -1
/// for the lap a looping head wrapped into.
pub fn swept_markers(
    marker_times: impl DoubleEndedIterator<Item = f32> + ExactSizeIterator + Clone,
    step: &PlaybackStep,
    duration: f32,
    looping: bool,
    mut announce: impl FnMut(usize, i32),
) {
    let d = step.travel;
    if d == 0.0 || !d.is_finite() {
        return;
    }
    let from = step.from;
    let n = marker_times.len();
    if !looping || !(duration > 0.0) {
        let to = from + d;
        if d > 0.0 {
            for (i, m) in marker_times.enumerate() {
                if from < m && m <= to {
                    announce(i, 0);
                }
            }
        } else {
            for (i, m) in marker_times.enumerate().rev() {
                if to <= m && m < from {
                    announce(i, 0);
                }
            }
        }
        return;
    }
    if d.abs() >= duration {
        // One or more whole laps: every marker once, in sweep order.
        if d > 0.0 {
            for (i, m) in marker_times.clone().enumerate() {
                if m > from {
                    announce(i, 0);
                }
            }
            for (i, m) in marker_times.enumerate() {
                if m <= from {
                    announce(i, 1);
                }
            }
        } else {
            for (i, m) in marker_times.clone().enumerate().rev() {
                if m < from {
                    announce(i, 0);
                }
            }
            for (i, m) in marker_times.enumerate().rev() {
                if m >= from {
                    announce(i, -1);
                }
            }
        }
        let _ = n;
        return;
    }
    if d > 0.0 {
        let hi = from + d;
        for (i, m) in marker_times.clone().enumerate() {
            if from < m && m <= hi {
                announce(i, 0);
            }
        }
        if hi >= duration {
            // The lap wrapped into is judged against `step.to`, the exact float the head now
            // holds (and the next step's `from`), not against the rounded `m + duration <= hi`:
            // the two can differ by an ulp, which would announce a marker twice or never.
            for (i, m) in marker_times.enumerate() {
                if m <= step.to {
                    announce(i, 1);
                }
            }
        }
    } else {
        let lo = from + d;
        for (i, m) in marker_times.clone().enumerate().rev() {
            if lo <= m && m < from {
                announce(i, 0);
            }
        }
        if lo < 0.0 {
            // As above, against the exact wrapped head (a head wrapped onto 0 sits at the end).
            let at = if step.to == 0.0 { duration } else { step.to };
            for (i, m) in marker_times.enumerate().rev() {
                if m >= at {
                    announce(i, -1);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn swept(markers: &[f32], step: PlaybackStep, duration: f32, looping: bool) -> Vec<(usize, i32)> {
        let mut out = Vec::new();
        swept_markers(markers.iter().copied(), &step, duration, looping, |i, lap| out.push((i, lap)));
        out
    }

    #[test]
    fn arrival_closed_departure_open() {
        let m = [0.5];
        assert_eq!(swept(&m, PlaybackStep { from: 0.25, to: 0.5, travel: 0.25 }, 1.0, false), vec![(0, 0)]);
        assert_eq!(swept(&m, PlaybackStep { from: 0.5, to: 0.75, travel: 0.25 }, 1.0, false), vec![]);
        assert_eq!(swept(&m, PlaybackStep { from: 0.75, to: 0.5, travel: -0.25 }, 1.0, false), vec![(0, 0)]);
        assert_eq!(swept(&m, PlaybackStep { from: 0.5, to: 0.25, travel: -0.25 }, 1.0, false), vec![]);
    }

    #[test]
    fn wrap_announces_on_the_new_lap() {
        let m = [0.1, 0.9];
        let step = PlaybackStep { from: 0.95, to: 0.15, travel: 0.2 };
        assert_eq!(swept(&m, step, 1.0, true), vec![(0, 1)]);
        let back = PlaybackStep { from: 0.05, to: 0.85, travel: -0.2 };
        assert_eq!(swept(&m, back, 1.0, true), vec![(1, -1)]);
    }

    /// Steps a looping head by `steps` and counts each marker's announcements.
    fn count_over(markers: &[f32], duration: f32, from: f32, steps: &[f32]) -> Vec<usize> {
        let mut counts = vec![0; markers.len()];
        let mut time = from;
        for &travel in steps {
            let (step, _) = advance_head(time, travel, duration, true);
            assert_eq!(step.from.to_bits(), time.to_bits());
            swept_markers(markers.iter().copied(), &step, duration, true, |i, _| counts[i] += 1);
            time = step.to;
        }
        counts
    }

    #[test]
    fn a_wrap_that_rounds_onto_a_marker_announces_it_exactly_once() {
        // Found by review, replayed in f32: `m + D` rounds down to `from + travel` while the
        // wrapped head stops one ulp short of `m`; the next step must announce it, once.
        assert_eq!(count_over(&[0.10443259], 1.0, 0.9196226, &[0.18480994, 0.1]), vec![1]);
        // Backwards: the head lands exactly on the marker after a wrap, while `m - D` rounds
        // below `from + travel`; the arrival is closed, so it is announced, once.
        assert_eq!(count_over(&[0.8938889], 1.0, 0.03608756, &[-0.14219865, -0.1]), vec![1]);
    }

    #[test]
    fn markers_are_counted_once_per_lap_over_many_irregular_steps() {
        let markers = [0.0, 0.1, 0.37, 0.5, 0.99, 1.0];
        let duration = 1.0;
        // A pseudo-random walk of forward steps, each shorter than a lap.
        let mut steps = Vec::new();
        let mut state = 12345u32;
        let mut total = 0.0f64;
        for _ in 0..2000 {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            let d = (state % 1000) as f32 / 1000.0 * 0.3 + 1e-4;
            steps.push(d);
            total += d as f64;
        }
        let counts = count_over(&markers, duration, 0.0, &steps);
        let laps = total.floor() as usize;
        for (m, c) in markers.iter().zip(&counts) {
            assert!(c.abs_diff(laps) <= 1, "marker {m}: {c} announcements over {total} laps");
        }
    }

    #[test]
    fn advance_wraps_and_clamps() {
        let (s, ended) = advance_head(0.9, 0.2, 1.0, true);
        assert!((s.to - 0.1).abs() < 1e-6 && !ended);
        let (s, ended) = advance_head(0.9, 0.2, 1.0, false);
        assert_eq!(s.to, 1.0);
        assert!(ended);
        assert!((s.travel - 0.1).abs() < 1e-6);
        let (s, ended) = advance_head(0.1, -0.2, 1.0, false);
        assert_eq!(s.to, 0.0);
        assert!(ended);
    }
}
