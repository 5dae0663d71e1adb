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
    /// The size of `a`'s largest component, in the units of [`Measure::distance`] (what
    /// 32-bit floats resolve near `a` is a few units in the last place of it).
    fn magnitude(a: Self) -> f32;
}

impl Measure for Vec3 {
    fn distance(a: Self, b: Self) -> f32 {
        (a - b).length()
    }
    fn magnitude(a: Self) -> f32 {
        a.abs().max_element()
    }
}

impl Measure for Quat {
    fn distance(a: Self, b: Self) -> f32 {
        // The angle of the rotation between them (precise for small angles too).
        let d = a * b.conjugate();
        2.0 * Vec3::new(d.x, d.y, d.z).length().atan2(d.w.abs())
    }
    fn magnitude(_: Self) -> f32 {
        // Unit quaternions: their components resolve to about 1e-7, angles the same.
        1.0
    }
}

impl Measure for f32 {
    fn distance(a: Self, b: Self) -> f32 {
        (a - b).abs()
    }
    fn magnitude(a: Self) -> f32 {
        a.abs()
    }
}

/// The most keys one baked track may have (an hour at 60 a second, 216,000, fits): a track the
/// rate or the bound would split finer is refused, naming its segment, rather than written as
/// millions of keys.
pub const MAX_BAKED_KEYS: usize = 1 << 18;

/// The finest error 32-bit floats resolve between values of magnitude `m` (4 units in the last
/// place of the larger of `m` and 1): a bound finer than this is never met by halving, so the
/// bake holds each sub-interval to this instead.
fn resolution(m: f32) -> f32 {
    4.0 * f32::EPSILON * m.max(1.0)
}

/// A bake refused: the keys it would write pass [`MAX_BAKED_KEYS`].
#[derive(Clone, Debug, PartialEq)]
pub(super) struct TooManyKeys {
    /// The eased segment at which the count passed the limit (its start and end times).
    pub from: f32,
    /// Its end.
    pub to: f32,
    /// The easing's name.
    pub easing: String,
}

/// What a bake gives: the key times, the values and the baked segments.
pub(super) type Baked<T> = (Vec<f32>, Vec<T>, Vec<BakedSegment>);

/// The keys a bake writes, with the limit on their count.
struct Out<T> {
    t: Vec<f32>,
    v: Vec<T>,
}

impl<T> Out<T> {
    fn push(&mut self, t: f32, v: T) {
        self.t.push(t);
        self.v.push(v);
    }
    fn full(&self) -> bool {
        self.t.len() > MAX_BAKED_KEYS
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
/// the track's own evaluation (or within what 32-bit floats resolve at the values' magnitude,
/// when that is coarser): `rate` samples a second to start with, then halving. Returns the
/// times, the values and the baked segments; refused when the keys would pass
/// [`MAX_BAKED_KEYS`].
pub(super) fn bake<T: Measure>(track: &Track<T>, rate: f32, bound: f32) -> Result<Baked<T>, TooManyKeys> {
    let eased = eased_segments(track);
    let (times, values) = (track.times(), track.values());
    let mut out = Out { t: Vec::with_capacity(times.len()), v: Vec::with_capacity(times.len()) };
    let mut segments = Vec::with_capacity(eased.len());
    let mut next = eased.iter().peekable();
    for i in 0..times.len() {
        out.push(times[i], values[i]);
        let Some(&(_, ease)) = next.next_if(|(k, _)| *k == i) else { continue };
        let (t0, t1) = (times[i], times[i + 1]);
        let refused = || TooManyKeys { from: t0, to: t1, easing: ease_name(ease) };
        let before = out.t.len();
        let steps = ((t1 - t0) * rate).ceil().clamp(1.0, 1.0e6) as usize;
        if before.saturating_add(steps) > MAX_BAKED_KEYS {
            return Err(refused());
        }
        let mut a = (t0, values[i]);
        let mut error = 0.0f32;
        for k in 1..=steps {
            let b = if k == steps {
                (t1, values[i + 1])
            } else {
                let t = t0 + (t1 - t0) * k as f32 / steps as f32;
                (t, eval(track, t))
            };
            error = error.max(refine(track, a, b, bound, 0, &mut out));
            if out.full() {
                return Err(refused());
            }
            if k < steps && b.0 > a.0 && b.0 < t1 {
                out.push(b.0, b.1);
            }
            a = b;
        }
        segments.push(BakedSegment {
            from: t0,
            to: t1,
            easing: ease_name(ease),
            samples: out.t.len() - before,
            error,
        });
    }
    Ok((out.t, out.v, segments))
}

/// The track's value at `t` (a non-empty track always has one).
fn eval<T: Animatable>(track: &Track<T>, t: f32) -> T {
    track.sample(t).unwrap_or(T::ZERO)
}

/// Pushes the keys strictly inside `(a, b)` that linear interpolation from `a` to `b` needs to
/// stay within `bound` of the track (halving where a probe strays; never finer than 32-bit
/// floats resolve at the values' magnitude; stopping once `out` is past the limit); returns
/// the largest error left at the probes of the sub-intervals kept.
fn refine<T: Measure>(
    track: &Track<T>,
    a: (f32, T),
    b: (f32, T),
    bound: f32,
    depth: u32,
    out: &mut Out<T>,
) -> f32 {
    let error = (1..8)
        .map(|j| {
            let u = j as f32 / 8.0;
            let t = a.0 + (b.0 - a.0) * u;
            T::distance(T::interpolate(a.1, b.1, u), eval(track, t))
        })
        .fold(0.0f32, f32::max);
    let mid = a.0 + (b.0 - a.0) * 0.5;
    let floor = resolution(T::magnitude(a.1).max(T::magnitude(b.1)));
    if error <= bound.max(floor) || depth >= MAX_DEPTH || mid <= a.0 || mid >= b.0 || out.full() {
        return error;
    }
    let m = (mid, eval(track, mid));
    let left = refine(track, a, m, bound, depth + 1, out);
    out.push(m.0, m.1);
    left.max(refine(track, m, b, bound, depth + 1, out))
}
