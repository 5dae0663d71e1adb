//! Baking eased key segments into LINEAR keys glTF can carry.
//!
//! glTF interpolates LINEAR keys linearly (slerp for rotations); a Marrow segment with a named
//! easing or a cubic Bézier cannot be said there. Such a segment is sampled at a rate (samples
//! per second) and then split where the linear keys still stray from Marrow's own evaluation by
//! more than a bound: each sub-interval is probed at seven interior points and halved until every
//! probe is within the bound. The source keys are kept exactly, at their own times; only keys
//! between them are added.
//!
//! Not here: which tracks to bake (the writer asks for every LINEAR track with an eased segment)
//! or where the record of baked segments goes (the animation's `extras`).

use glam::{Quat, Vec3};

use crate::easing::Ease;
use crate::track::{Animatable, Interpolation, Track};

/// A value type whose distance the bake bound is measured in: metres (or the scene's unit) for
/// translations and scales, radians for rotations, the weight itself for morph weights.
pub(super) trait Measure: Animatable {
    /// How far `a` is from `b`.
    fn distance(a: Self, b: Self) -> f32;
}

impl Measure for Vec3 {
    fn distance(a: Self, b: Self) -> f32 {
        (a - b).length()
    }
}

impl Measure for Quat {
    fn distance(a: Self, b: Self) -> f32 {
        // The angle of the rotation between them (precise for small angles too).
        let d = a * b.conjugate();
        2.0 * Vec3::new(d.x, d.y, d.z).length().atan2(d.w.abs())
    }
}

impl Measure for f32 {
    fn distance(a: Self, b: Self) -> f32 {
        (a - b).abs()
    }
}

/// One eased segment written as LINEAR keys.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct BakedSegment {
    /// Time of the segment's first key.
    pub from: f32,
    /// Time of its last key.
    pub to: f32,
    /// The easing's name (`cubic-bezier(x1, y1, x2, y2)` for a Bézier).
    pub easing: String,
    /// Keys added inside the segment.
    pub samples: usize,
    /// The largest error found at the probes of the final sub-intervals.
    pub error: f32,
}

/// The name an easing is written under.
pub(super) fn ease_name(e: Ease) -> String {
    match e {
        Ease::Named(n) => n.name().to_owned(),
        Ease::Bezier(b) => format!("cubic-bezier({}, {}, {}, {})", b.x1, b.y1, b.x2, b.y2),
    }
}

/// The eased segments of a LINEAR track (start key index and easing); empty for any other track.
pub(super) fn eased_segments<T: Animatable>(track: &Track<T>) -> Vec<(usize, Ease)> {
    if track.interpolation() != Interpolation::Linear || track.is_plain_linear() {
        return Vec::new();
    }
    (0..track.len().saturating_sub(1))
        .map(|i| (i, track.segment_easing(i)))
        .filter(|(_, e)| !e.is_linear())
        .collect()
}

/// Deepest halving of one sub-interval (a 2 s segment halved 24 times is 0.12 µs wide).
const MAX_DEPTH: u32 = 24;

/// `track`'s keys with every eased segment replaced by LINEAR keys that stay within `bound` of
/// the track's own evaluation: `rate` samples a second to start with, then halving. Returns the
/// times, the values and the baked segments.
pub(super) fn bake<T: Measure>(
    track: &Track<T>,
    rate: f32,
    bound: f32,
) -> (Vec<f32>, Vec<T>, Vec<BakedSegment>) {
    let eased = eased_segments(track);
    let (times, values) = (track.times(), track.values());
    let mut out_t = Vec::with_capacity(times.len());
    let mut out_v = Vec::with_capacity(times.len());
    let mut segments = Vec::with_capacity(eased.len());
    let mut next = eased.iter().peekable();
    for i in 0..times.len() {
        out_t.push(times[i]);
        out_v.push(values[i]);
        let Some(&(_, ease)) = next.next_if(|(k, _)| *k == i) else { continue };
        let (t0, t1) = (times[i], times[i + 1]);
        let before = out_t.len();
        let steps = ((t1 - t0) * rate).ceil().clamp(1.0, 1.0e6) as usize;
        let mut a = (t0, values[i]);
        let mut error = 0.0f32;
        for k in 1..=steps {
            let b = if k == steps {
                (t1, values[i + 1])
            } else {
                let t = t0 + (t1 - t0) * k as f32 / steps as f32;
                (t, eval(track, t))
            };
            error = error.max(refine(track, a, b, bound, 0, &mut out_t, &mut out_v));
            if k < steps && b.0 > a.0 && b.0 < t1 {
                out_t.push(b.0);
                out_v.push(b.1);
            }
            a = b;
        }
        segments.push(BakedSegment {
            from: t0,
            to: t1,
            easing: ease_name(ease),
            samples: out_t.len() - before,
            error,
        });
    }
    (out_t, out_v, segments)
}

/// The track's value at `t` (a non-empty track always has one).
fn eval<T: Animatable>(track: &Track<T>, t: f32) -> T {
    track.sample(t).unwrap_or(T::ZERO)
}

/// Pushes the keys strictly inside `(a, b)` that linear interpolation from `a` to `b` needs to
/// stay within `bound` of the track (halving where a probe strays); returns the largest error
/// left at the probes of the sub-intervals kept.
fn refine<T: Measure>(
    track: &Track<T>,
    a: (f32, T),
    b: (f32, T),
    bound: f32,
    depth: u32,
    out_t: &mut Vec<f32>,
    out_v: &mut Vec<T>,
) -> f32 {
    let error = (1..8)
        .map(|j| {
            let u = j as f32 / 8.0;
            let t = a.0 + (b.0 - a.0) * u;
            T::distance(T::interpolate(a.1, b.1, u), eval(track, t))
        })
        .fold(0.0f32, f32::max);
    let mid = a.0 + (b.0 - a.0) * 0.5;
    if error <= bound || depth >= MAX_DEPTH || mid <= a.0 || mid >= b.0 {
        return error;
    }
    let m = (mid, eval(track, mid));
    let left = refine(track, a, m, bound, depth + 1, out_t, out_v);
    out_t.push(m.0);
    out_v.push(m.1);
    left.max(refine(track, m, b, bound, depth + 1, out_t, out_v))
}
