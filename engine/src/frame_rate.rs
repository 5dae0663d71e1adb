//! A clip's frame rate read from its keys: what an import sets [`Clip::frame_rate`] to when the
//! file does not say (glTF has no word for it; Marrow's own export writes it in `extras`, which
//! the importer reads back and which wins over this).
//!
//! The rate is measured from the spacing of the sampled channels: every positive gap between
//! consecutive key times of every STEP or LINEAR track. The most common gap (the densest window
//! of gaps within [`MODE_WINDOW`] of each other) is refined to the mean of every gap within
//! [`REFINE_BAND`] of it, so key times rounded to a coarse clock (milliseconds: 8 and 9 ms gaps for
//! 120 Hz) still measure their true rate, and gaps of two or more frames (keys a simplifier
//! dropped) and the odd long hold do not count. A measured rate within [`SNAP_TOLERANCE`] of a
//! standard one ([`STANDARD_RATES`]) is that standard rate; otherwise the measured rate stands.
//!
//! Not here: resampling or snapping keys to the rate (keys between frames stay between frames),
//! cubic-spline tracks (their keys are control points, not samples), reading files.

use crate::clip::Clip;
use crate::track::Interpolation;

/// The rates a measured rate is rounded to when close: film, PAL, NTSC (drop-frame) and their
/// doubles, and the common capture rates.
pub const STANDARD_RATES: [f32; 12] =
    [24.0, 25.0, 29.97, 30.0, 48.0, 50.0, 59.94, 60.0, 90.0, 100.0, 120.0, 240.0];

/// How far (relative) a measured rate may be from a standard rate and still be taken as it.
pub const SNAP_TOLERANCE: f32 = 0.01;

/// Gaps within this ratio of the smallest gap of a window count as one spacing when the most
/// common spacing is looked for.
pub const MODE_WINDOW: f64 = 1.05;

/// Gaps within this ratio (either way) of the most common spacing are averaged into the measure.
pub const REFINE_BAND: f64 = 1.25;

/// Gaps shorter than this (seconds) are not frames (coincident or near-duplicate keys).
const MIN_GAP: f64 = 1.0e-6;

/// The frame rate the key times of `tracks` (each sorted ascending) are sampled at, or `None`
/// when no two keys of one track are apart (no track has two distinct keys).
pub fn detect_frame_rate<'a>(tracks: impl IntoIterator<Item = &'a [f32]>) -> Option<f32> {
    let mut gaps: Vec<f64> = tracks
        .into_iter()
        .flat_map(|t| t.windows(2).map(|w| f64::from(w[1]) - f64::from(w[0])))
        .filter(|g| g.is_finite() && *g > MIN_GAP)
        .collect();
    if gaps.is_empty() {
        return None;
    }
    gaps.sort_by(f64::total_cmp);
    // The densest window [gaps[i], gaps[i] * MODE_WINDOW] (two pointers over the sorted gaps).
    let (mut best, mut best_count, mut end) = (0, 0, 0);
    for i in 0..gaps.len() {
        end = end.max(i);
        while end < gaps.len() && gaps[end] <= gaps[i] * MODE_WINDOW {
            end += 1;
        }
        if end - i > best_count {
            (best, best_count) = (i, end - i);
        }
    }
    let mode = gaps[best + best_count / 2];
    let near: Vec<f64> =
        gaps.iter().copied().filter(|g| *g >= mode / REFINE_BAND && *g <= mode * REFINE_BAND).collect();
    let spacing = near.iter().sum::<f64>() / near.len() as f64;
    Some(standard_rate((1.0 / spacing) as f32))
}

/// `rate` as the nearest of [`STANDARD_RATES`] when one is within [`SNAP_TOLERANCE`], else as is
/// (to a hundredth of a frame per second).
pub fn standard_rate(rate: f32) -> f32 {
    STANDARD_RATES
        .iter()
        .copied()
        .filter(|s| ((rate - s) / s).abs() <= SNAP_TOLERANCE)
        .min_by(|a, b| (rate - a).abs().total_cmp(&(rate - b).abs()))
        .unwrap_or((rate * 100.0).round() / 100.0)
}

/// The frame rate `clip`'s STEP and LINEAR tracks are sampled at ([`detect_frame_rate`] over
/// every such translation, rotation and scale track), or `None` when they do not say.
pub fn clip_frame_rate(clip: &Clip) -> Option<f32> {
    fn sampled<T: crate::track::Animatable>(t: &Option<crate::track::Track<T>>) -> Option<&[f32]> {
        t.as_ref().filter(|t| t.interpolation() != Interpolation::CubicSpline).map(|t| t.times())
    }
    let tracks = clip
        .channels()
        .iter()
        .flat_map(|c| [sampled(&c.translation), sampled(&c.rotation), sampled(&c.scale)])
        .flatten();
    detect_frame_rate(tracks)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` key times at `rate`, each moved by `jitter(i)` seconds.
    fn keys(rate: f64, n: usize, jitter: impl Fn(usize) -> f64) -> Vec<f32> {
        (0..n).map(|i| (i as f64 / rate + jitter(i)) as f32).collect()
    }

    #[test]
    fn rates_of_24_30_and_120_hz_are_found() {
        for rate in [24.0, 30.0, 120.0] {
            let t = keys(rate, 200, |_| 0.0);
            assert_eq!(detect_frame_rate([&t[..]]), Some(rate as f32));
        }
    }

    #[test]
    fn ntsc_rates_are_told_from_their_round_neighbours() {
        let t = keys(30_000.0 / 1001.0, 300, |_| 0.0);
        assert_eq!(detect_frame_rate([&t[..]]), Some(29.97));
        let t = keys(60_000.0 / 1001.0, 300, |_| 0.0);
        assert_eq!(detect_frame_rate([&t[..]]), Some(59.94));
    }

    #[test]
    fn jittered_and_millisecond_rounded_times_measure_their_rate() {
        // A deterministic jitter of up to a fifth of a millisecond.
        let jitter = |i: usize| ((i * 7919) % 13) as f64 / 12.0 * 4.0e-4 - 2.0e-4;
        let t = keys(120.0, 995, jitter);
        assert_eq!(detect_frame_rate([&t[..]]), Some(120.0));
        // Times written to the millisecond: gaps of 8 and 9 ms.
        let t: Vec<f32> = keys(120.0, 995, |_| 0.0).iter().map(|t| (t * 1000.0).round() / 1000.0).collect();
        assert_eq!(detect_frame_rate([&t[..]]), Some(120.0));
    }

    #[test]
    fn one_key_or_none_says_nothing() {
        assert_eq!(detect_frame_rate([&[0.5f32][..]]), None);
        assert_eq!(detect_frame_rate([&[][..], &[1.0f32, 1.0][..]]), None);
    }

    #[test]
    fn the_most_common_spacing_wins_over_holds_and_thinned_tracks() {
        let dense = keys(24.0, 100, |_| 0.0);
        let thinned = keys(12.0, 50, |_| 0.0); // every other frame
        let hold = [0.0f32, 4.125];
        let one = [2.0f32];
        let tracks = [&dense[..], &thinned[..], &hold[..], &one[..], &dense[..]];
        assert_eq!(detect_frame_rate(tracks), Some(24.0));
    }

    #[test]
    fn an_uncommon_rate_stands_as_measured() {
        let t = keys(37.0, 100, |_| 0.0);
        assert_eq!(detect_frame_rate([&t[..]]), Some(37.0));
        assert_eq!(standard_rate(24.1), 24.0);
        assert_eq!(standard_rate(26.0), 26.0);
    }

    #[test]
    fn cubic_spline_tracks_are_not_samples() {
        use crate::track::Track;
        use glam::Vec3;
        let sk = crate::synthetic::chain_skeleton(1);
        let mut clip = Clip::new("c", &sk);
        let times = keys(60.0, 30, |_| 0.0);
        let n = times.len();
        let cubic = Track::<Vec3>::from_keys_unchecked(
            Interpolation::CubicSpline,
            times.clone(),
            vec![Vec3::ZERO; n],
        );
        let half: Vec<f32> = times.iter().copied().step_by(2).collect();
        let linear =
            Track::<Vec3>::from_keys(Interpolation::Linear, half.clone(), vec![Vec3::ZERO; half.len()]);
        clip.channels_mut()[0].translation = Some(cubic.unwrap());
        assert_eq!(clip_frame_rate(&clip), None);
        clip.channels_mut()[0].scale = Some(linear.unwrap());
        assert_eq!(clip_frame_rate(&clip), Some(30.0));
    }
}
