//! Keyframe tracks: [`Track<T>`] holds keys as parallel, time-sorted arrays and samples them with
//! STEP, LINEAR (eased) or CUBICSPLINE (glTF Hermite) interpolation.
//!
//! Layout: `times` and `values` are two parallel arrays (not an array of key structs), with
//! `in_tangents`/`out_tangents` present only for CUBICSPLINE tracks and a parallel array of optional
//! per-key easings (the easing of the segment a key starts; `None` means the track's default)
//! and, for CUBICSPLINE tracks, optional authored tangent modes ([`crate::tangent`]), which
//! sampling never reads.
//!
//! Sampling rules: before the first key / after the last key, that key's value; one key, its value;
//! a segment shorter than [`MIN_SEGMENT`], the right key's value. Quaternions take the shortest path
//! and are normalized after interpolation.
//!
//! This module does not know about bones, clips or playback; [`crate::clip`] groups tracks and the
//! sampling job in [`crate::pose`] drives the tracks that [`crate::compiled_clip`] leaves loose
//! with per-track cursors (tracks in key blocks are read from the compiled form).

use crate::math::Num;
use glam::{Quat, Vec3};

use crate::easing::Ease;
use crate::math;
use crate::tangent::TangentMode;

/// Segments shorter than this (seconds) sample as their right key.
pub const MIN_SEGMENT: f32 = 1e-6;

/// How a track interpolates between keys. The names follow glTF's `sampler.interpolation`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Interpolation {
    /// Hold the left key's value until the next key.
    Step,
    /// Interpolate linearly (slerp for rotations), with the segment's easing applied to the parameter.
    #[default]
    Linear,
    /// glTF cubic Hermite spline with per-key in/out tangents (scaled by the segment duration).
    CubicSpline,
}

impl Interpolation {
    /// The glTF name (`STEP`, `LINEAR`, `CUBICSPLINE`).
    pub fn name(self) -> &'static str {
        match self {
            Interpolation::Step => "STEP",
            Interpolation::Linear => "LINEAR",
            Interpolation::CubicSpline => "CUBICSPLINE",
        }
    }
}

/// A value type a track can hold.
pub trait Animatable: Copy + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    /// The value used for a missing tangent.
    const ZERO: Self;
    /// Linear interpolation (shortest-path normalized slerp for rotations).
    fn interpolate(a: Self, b: Self, t: f32) -> Self;
    /// glTF cubic Hermite: `v0`, its out tangent `b0`, `v1`, its in tangent `a1`, parameter `s`,
    /// segment duration `dt`. Rotations are normalized afterwards.
    fn hermite(v0: Self, b0: Self, v1: Self, a1: Self, s: f32, dt: f32) -> Self;
    /// True when every component is finite.
    fn is_finite_value(&self) -> bool;
    /// True for a rotation of (near) zero length, which has no orientation (never for other
    /// value types).
    fn is_zero_rotation(&self) -> bool {
        false
    }
    /// The length of a rotation longer than [`MAX_ROTATION_KEY_LENGTH`] (infinite where its
    /// square overflows); `None` for any other value (and every value of other types): rotation
    /// keys are unit quaternions, and interpolating one that long overflows.
    fn oversized_rotation(&self) -> Option<f32> {
        None
    }
    /// A LINEAR or STEP key's value as a file loader keeps it: rotations off unit length
    /// (beyond rounding) normalized, whatever their length (a key of length 1e38 is a rotation
    /// like any other); other values as they are. Sampling returns such keys as they are at
    /// their instants and the slerp reads their dot product as a cosine, so a key must be unit.
    fn unit_key(self) -> Self {
        self
    }
    /// A CUBICSPLINE key's value as sampled exactly at its key: rotations are normalized there as
    /// between keys (glTF stores cubic rotation keys unnormalized); other values as they are.
    fn cubic_key(self) -> Self {
        self
    }
}

#[inline]
fn hermite_basis(s: f32) -> (f32, f32, f32, f32) {
    let s2 = s * s;
    let s3 = s2 * s;
    (2.0 * s3 - 3.0 * s2 + 1.0, s3 - 2.0 * s2 + s, -2.0 * s3 + 3.0 * s2, s3 - s2)
}

impl Animatable for f32 {
    const ZERO: Self = 0.0;
    #[inline]
    fn interpolate(a: Self, b: Self, t: f32) -> Self {
        a + (b - a) * t
    }
    #[inline]
    fn hermite(v0: Self, b0: Self, v1: Self, a1: Self, s: f32, dt: f32) -> Self {
        let (h00, h10, h01, h11) = hermite_basis(s);
        h00 * v0 + h10 * dt * b0 + h01 * v1 + h11 * dt * a1
    }
    fn is_finite_value(&self) -> bool {
        self.is_finite()
    }
}

impl Animatable for Vec3 {
    const ZERO: Self = Vec3::ZERO;
    #[inline]
    fn interpolate(a: Self, b: Self, t: f32) -> Self {
        a + (b - a) * t
    }
    #[inline]
    fn hermite(v0: Self, b0: Self, v1: Self, a1: Self, s: f32, dt: f32) -> Self {
        let (h00, h10, h01, h11) = hermite_basis(s);
        v0 * h00 + b0 * (h10 * dt) + v1 * h01 + a1 * (h11 * dt)
    }
    fn is_finite_value(&self) -> bool {
        self.is_finite()
    }
}

impl Animatable for Quat {
    const ZERO: Self = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
    #[inline(always)]
    fn interpolate(a: Self, b: Self, t: f32) -> Self {
        math::slerp(a, b, t)
    }
    #[inline]
    fn hermite(v0: Self, b0: Self, v1: Self, a1: Self, s: f32, dt: f32) -> Self {
        let (h00, h10, h01, h11) = hermite_basis(s);
        let combine = |k: f32| {
            glam::Vec4::from(v0) * (h00 * k)
                + glam::Vec4::from(b0) * (h10 * dt * k)
                + glam::Vec4::from(v1) * (h01 * k)
                + glam::Vec4::from(a1) * (h11 * dt * k)
        };
        let v = combine(1.0);
        let len = v.length();
        if len > 1e-12 && len.is_finite() {
            return Quat::from_vec4(v / len);
        }
        // Keys so large that the sum (or its length) overflows: the same curve, scaled down
        // (normalization removes the scale). A curve through zero has no orientation there: the
        // segment's start holds.
        let m = [v0, b0, v1, a1].iter().map(|q| glam::Vec4::from(*q).abs().max_element()).fold(0.0, f32::max);
        let scaled = if m.is_finite() && m > 1.0 { combine(1.0 / m) } else { v };
        math::normalize_quat(Quat::from_vec4(scaled))
            .or_else(|| math::normalize_quat(v0))
            .unwrap_or(Quat::IDENTITY)
    }
    fn is_finite_value(&self) -> bool {
        self.is_finite()
    }
    fn is_zero_rotation(&self) -> bool {
        !(self.length_squared() > 1e-12)
    }
    fn oversized_rotation(&self) -> Option<f32> {
        // Finite components whose squares overflow count too.
        let l2 = self.length_squared();
        (!(l2 <= MAX_ROTATION_KEY_LENGTH * MAX_ROTATION_KEY_LENGTH)).then(|| l2.sqrt())
    }
    fn cubic_key(self) -> Self {
        math::normalize_quat(self).unwrap_or(Quat::IDENTITY)
    }
    fn unit_key(self) -> Self {
        if (self.length_squared() - 1.0).abs() <= 4.0 * f32::EPSILON {
            self
        } else {
            math::normalize_quat(self).unwrap_or(self)
        }
    }
}

/// The longest rotation key a LINEAR or STEP track takes. Rotation keys are unit quaternions
/// (every importer, the clip file loader ([`Animatable::unit_key`]) and the editor make them
/// so); the slerp between two keys reads their dot product as a cosine, and from about a
/// thousand times unit length its series overflows 32-bit floats. A track built in code with
/// keys past this length is refused by name ([`TrackFault::OversizedRotation`]) rather than
/// played as NaN. (CUBICSPLINE keys may be unnormalized: their sampling scales them.)
pub const MAX_ROTATION_KEY_LENGTH: f32 = 100.0;

/// A structural fault in a track's keys.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TrackFault {
    /// The parallel arrays have different lengths.
    #[error(
        "track arrays are not parallel: {times} times, {values} values, {tangents} tangent pairs (expected {times} each)"
    )]
    NotParallel {
        /// Number of key times.
        times: usize,
        /// Number of values.
        values: usize,
        /// Number of in/out tangents (CUBICSPLINE only; 0 otherwise).
        tangents: usize,
    },
    /// Key `index` is not after key `index - 1`.
    #[error("key {index} at t = {} is not after the previous key at t = {}", Num(*time), Num(*previous))]
    Unsorted {
        /// The offending key.
        index: usize,
        /// Its time.
        time: f32,
        /// The previous key's time.
        previous: f32,
    },
    /// Key `index` has a non-finite time.
    #[error("key {index} has a non-finite time ({time})")]
    NonFiniteTime {
        /// The offending key.
        index: usize,
        /// Its time.
        time: f32,
    },
    /// Key `index` has a non-finite value or tangent.
    #[error("key {index} at t = {} has a non-finite value", Num(*time))]
    NonFiniteValue {
        /// The offending key.
        index: usize,
        /// Its time.
        time: f32,
    },
    /// Key `index` is a rotation of zero length (no orientation).
    #[error("key {index} at t = {} is a zero-length rotation", Num(*time))]
    ZeroRotation {
        /// The offending key.
        index: usize,
        /// Its time.
        time: f32,
    },
    /// Key `index` is a rotation longer than [`MAX_ROTATION_KEY_LENGTH`].
    #[error(
        "key {index} at t = {} is a rotation of length {}, past the {MAX_ROTATION_KEY_LENGTH} a rotation key may have (rotation keys are unit quaternions)",
        Num(*time),
        Num(*length)
    )]
    OversizedRotation {
        /// The offending key.
        index: usize,
        /// Its time.
        time: f32,
        /// Its length (infinite where its square overflows).
        length: f32,
    },
}

/// A keyframe track of `T`. See the module docs for the sampling rules.
#[derive(Clone, Debug, PartialEq)]
pub struct Track<T: Animatable> {
    times: Vec<f32>,
    values: Vec<T>,
    in_tangents: Vec<T>,
    out_tangents: Vec<T>,
    easings: Vec<Option<Ease>>,
    /// Authored tangent modes of CUBICSPLINE keys: empty (every key Free) or parallel to
    /// `times`. Sampling never reads them.
    tangent_modes: Vec<TangentMode>,
    interpolation: Interpolation,
    default_easing: Ease,
    /// Derived: true when any segment of a LINEAR track uses a non-linear easing.
    eased: bool,
}

impl<T: Animatable> Default for Track<T> {
    fn default() -> Self {
        Self::new(Interpolation::Linear)
    }
}

impl<T: Animatable> Track<T> {
    /// Bytes its keys hold (times, values, tangents and easings; not the allocation's spare room).
    pub fn bytes(&self) -> usize {
        let v = size_of::<T>();
        self.times.len() * 4
            + (self.values.len() + self.in_tangents.len() + self.out_tangents.len()) * v
            + self.easings.len() * size_of::<Option<Ease>>()
            + self.tangent_modes.len() * size_of::<TangentMode>()
    }

    /// An empty track.
    pub fn new(interpolation: Interpolation) -> Self {
        Self {
            times: Vec::new(),
            values: Vec::new(),
            in_tangents: Vec::new(),
            out_tangents: Vec::new(),
            easings: Vec::new(),
            tangent_modes: Vec::new(),
            interpolation,
            default_easing: Ease::default(),
            eased: false,
        }
    }

    /// Builds a STEP or LINEAR track from parallel arrays, checking lengths, order (strictly
    /// increasing) and finiteness.
    pub fn from_keys(
        interpolation: Interpolation,
        times: Vec<f32>,
        values: Vec<T>,
    ) -> Result<Self, TrackFault> {
        let track = Self::from_keys_unchecked(interpolation, times, values)?;
        track.find_fault().map_or(Ok(track), Err)
    }

    /// Builds a track from parallel arrays checking only that they are parallel (the structure
    /// sampling relies on). A CUBICSPLINE track built here gets zero tangents; use
    /// [`Track::cubic_from_keys_unchecked`] to give them. Order and finiteness are left to [`Track::find_fault`], for importers
    /// that report every fault of a file at once. Sampling an unsorted track never panics.
    pub fn from_keys_unchecked(
        interpolation: Interpolation,
        times: Vec<f32>,
        values: Vec<T>,
    ) -> Result<Self, TrackFault> {
        if interpolation == Interpolation::CubicSpline {
            let n = times.len();
            return Self::cubic_from_keys_unchecked(times, vec![T::ZERO; n], values, vec![T::ZERO; n]);
        }
        if times.len() != values.len() {
            return Err(TrackFault::NotParallel { times: times.len(), values: values.len(), tangents: 0 });
        }
        let n = times.len();
        Ok(Self {
            times,
            values,
            in_tangents: Vec::new(),
            out_tangents: Vec::new(),
            easings: vec![None; n],
            tangent_modes: Vec::new(),
            interpolation,
            default_easing: Ease::default(),
            eased: false,
        })
    }

    /// Builds a CUBICSPLINE track from parallel arrays (glTF order: in tangent, value, out
    /// tangent per key), checking lengths, order and finiteness.
    pub fn cubic_from_keys(
        times: Vec<f32>,
        in_tangents: Vec<T>,
        values: Vec<T>,
        out_tangents: Vec<T>,
    ) -> Result<Self, TrackFault> {
        let track = Self::cubic_from_keys_unchecked(times, in_tangents, values, out_tangents)?;
        track.find_fault().map_or(Ok(track), Err)
    }

    /// As [`Track::cubic_from_keys`], checking only that the arrays are parallel.
    pub fn cubic_from_keys_unchecked(
        times: Vec<f32>,
        in_tangents: Vec<T>,
        values: Vec<T>,
        out_tangents: Vec<T>,
    ) -> Result<Self, TrackFault> {
        let n = times.len();
        if values.len() != n || in_tangents.len() != n || out_tangents.len() != n {
            return Err(TrackFault::NotParallel {
                times: n,
                values: values.len(),
                tangents: in_tangents.len().min(out_tangents.len()),
            });
        }
        Ok(Self {
            times,
            values,
            in_tangents,
            out_tangents,
            easings: vec![None; n],
            tangent_modes: Vec::new(),
            interpolation: Interpolation::CubicSpline,
            default_easing: Ease::default(),
            eased: false,
        })
    }

    /// The first fault in the keys: unsorted (not strictly increasing) or non-finite times or values.
    pub fn find_fault(&self) -> Option<TrackFault> {
        for (i, &t) in self.times.iter().enumerate() {
            if !t.is_finite() {
                return Some(TrackFault::NonFiniteTime { index: i, time: t });
            }
            if i > 0 && t <= self.times[i - 1] {
                return Some(TrackFault::Unsorted { index: i, time: t, previous: self.times[i - 1] });
            }
            let finite = self.values[i].is_finite_value()
                && self.in_tangents.get(i).is_none_or(|v| v.is_finite_value())
                && self.out_tangents.get(i).is_none_or(|v| v.is_finite_value());
            if !finite {
                return Some(TrackFault::NonFiniteValue { index: i, time: t });
            }
            if self.values[i].is_zero_rotation() {
                return Some(TrackFault::ZeroRotation { index: i, time: t });
            }
            if let Some(length) = self.values[i]
                .oversized_rotation()
                .filter(|_| self.interpolation != Interpolation::CubicSpline)
            {
                return Some(TrackFault::OversizedRotation { index: i, time: t, length });
            }
        }
        None
    }

    /// The interpolation mode.
    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }

    /// Key times, sorted.
    pub fn times(&self) -> &[f32] {
        &self.times
    }

    /// Key values, parallel to [`Track::times`].
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// In tangents (CUBICSPLINE tracks; empty otherwise).
    pub fn in_tangents(&self) -> &[T] {
        &self.in_tangents
    }

    /// Out tangents (CUBICSPLINE tracks; empty otherwise).
    pub fn out_tangents(&self) -> &[T] {
        &self.out_tangents
    }

    /// Per-key easing overrides, parallel to [`Track::times`] (`None`: the track's default).
    pub fn key_easings(&self) -> &[Option<Ease>] {
        &self.easings
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.times.len()
    }

    /// True when the track has no keys.
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }

    /// Time of the last key, if any.
    pub fn last_time(&self) -> Option<f32> {
        self.times.last().copied()
    }

    /// The tangent modes of the keys (CUBICSPLINE tracks): empty when every key is
    /// [`TangentMode::Free`], else parallel to [`Track::times`]. See [`crate::tangent`].
    pub fn tangent_modes(&self) -> &[TangentMode] {
        &self.tangent_modes
    }

    /// Key `index`'s tangent mode ([`TangentMode::Free`] when the track holds none).
    pub fn tangent_mode(&self, index: usize) -> TangentMode {
        self.tangent_modes.get(index).copied().unwrap_or_default()
    }

    /// Sets the keys' tangent modes: `modes` empty, or one per key of a CUBICSPLINE track. Only
    /// the modes change (the tangents are the caller's: see [`crate::tangent::compute_tangents`]).
    /// Modes that are all Free are kept as none.
    pub fn set_tangent_modes(&mut self, modes: Vec<TangentMode>) -> Result<(), TrackFault> {
        if !modes.is_empty()
            && (modes.len() != self.times.len() || self.interpolation != Interpolation::CubicSpline)
        {
            return Err(TrackFault::NotParallel {
                times: self.times.len(),
                values: self.values.len(),
                tangents: modes.len(),
            });
        }
        self.tangent_modes = if modes.iter().all(|m| *m == TangentMode::Free) { Vec::new() } else { modes };
        Ok(())
    }

    /// The easing used by segments whose starting key has no override.
    pub fn default_easing(&self) -> Ease {
        self.default_easing
    }

    /// Sets the track's default easing.
    pub fn set_default_easing(&mut self, ease: Ease) {
        self.default_easing = ease;
        self.refresh_eased();
    }

    /// Sets (or clears, with `None`) the easing of the segment that key `index` starts.
    /// Returns false when there is no such key.
    pub fn set_key_easing(&mut self, index: usize, ease: Option<Ease>) -> bool {
        let Some(slot) = self.easings.get_mut(index) else { return false };
        *slot = ease;
        self.refresh_eased();
        true
    }

    /// The easing that applies to the segment starting at key `index`.
    pub fn segment_easing(&self, index: usize) -> Ease {
        self.easings.get(index).copied().flatten().unwrap_or(self.default_easing)
    }

    /// True for a non-empty LINEAR track without easing: one whose interpolation [`Track::lerp_parts`] can hand to a batched sampler.
    #[inline]
    pub fn is_plain_linear(&self) -> bool {
        self.interpolation == Interpolation::Linear && !self.eased && !self.times.is_empty()
    }

    /// For a plain LINEAR track (see [`Track::is_plain_linear`]): the two values to interpolate
    /// at `time` and the parameter `u` between them (a held end, one key or a segment below
    /// [`MIN_SEGMENT`] give the same value twice and `u = 0`), using and updating `cursor` as
    /// [`Track::sample_with_cursor`] does. `None` for other tracks, so the caller can batch the
    /// interpolation itself.
    #[inline(always)]
    pub fn lerp_parts(&self, time: f32, cursor: &mut u32) -> Option<(T, T, f32)> {
        if !self.is_plain_linear() {
            return None;
        }
        let values = &self.values[..];
        Some(match segment(&self.times, time, cursor) {
            Segment::Hold(k) => (values[k], values[k], 0.0),
            Segment::Lerp(i, u) => (values[i], values[i + 1], u),
        })
    }

    fn refresh_eased(&mut self) {
        self.eased = !self.default_easing.is_linear()
            || self.easings.iter().any(|e| e.is_some_and(|e| !e.is_linear()));
    }

    /// Inserts a key, keeping times sorted. A key within [`MIN_SEGMENT`] of an existing key's
    /// time replaces that key's value (and keeps its easing). Returns the key's index.
    /// On a CUBICSPLINE track the new key gets zero tangents.
    pub fn insert(&mut self, time: f32, value: T) -> usize {
        self.insert_key(time, value, T::ZERO, T::ZERO)
    }

    /// Inserts a CUBICSPLINE key with tangents (ignored on other tracks); see [`Track::insert`].
    pub fn insert_key(&mut self, time: f32, value: T, in_tangent: T, out_tangent: T) -> usize {
        let i = self.times.partition_point(|&t| t < time);
        let cubic = self.interpolation == Interpolation::CubicSpline;
        let existing = [i.checked_sub(1), Some(i)]
            .into_iter()
            .flatten()
            .find(|&j| j < self.times.len() && (self.times[j] - time).abs() < MIN_SEGMENT);
        if let Some(j) = existing {
            self.values[j] = value;
            if cubic {
                self.in_tangents[j] = in_tangent;
                self.out_tangents[j] = out_tangent;
            }
            return j;
        }
        self.times.insert(i, time);
        self.values.insert(i, value);
        self.easings.insert(i, None);
        if !self.tangent_modes.is_empty() {
            self.tangent_modes.insert(i, TangentMode::Free);
        }
        if cubic {
            self.in_tangents.insert(i, in_tangent);
            self.out_tangents.insert(i, out_tangent);
        }
        i
    }

    /// Removes key `index`, returning its time and value.
    pub fn remove(&mut self, index: usize) -> Option<(f32, T)> {
        if index >= self.times.len() {
            return None;
        }
        let t = self.times.remove(index);
        let v = self.values.remove(index);
        self.easings.remove(index);
        if index < self.tangent_modes.len() {
            self.tangent_modes.remove(index);
        }
        if self.interpolation == Interpolation::CubicSpline {
            self.in_tangents.remove(index);
            self.out_tangents.remove(index);
        }
        self.refresh_eased();
        Some((t, v))
    }

    /// Samples the track at `time` (binary search). Panics never; an empty track returns `None`.
    pub fn sample(&self, time: f32) -> Option<T> {
        let mut cursor = 0;
        self.sample_with_cursor(time, &mut cursor)
    }

    /// Samples the track at `time`, starting the interval search at `*cursor` (the interval found
    /// last time) and updating it. Forward playback then costs O(1) per sample; any other time
    /// falls back to a binary search. A stale cursor is always safe.
    #[inline(always)]
    pub fn sample_with_cursor(&self, time: f32, cursor: &mut u32) -> Option<T> {
        let n = self.times.len();
        if n == 0 {
            return None;
        }
        let values = &self.values[..n];
        let (i, u) = match segment(&self.times, time, cursor) {
            Segment::Hold(k) if self.interpolation == Interpolation::CubicSpline => {
                return Some(values[k].cubic_key());
            }
            Segment::Hold(k) => return Some(values[k]),
            Segment::Lerp(i, u) => (i, u),
        };
        Some(match self.interpolation {
            Interpolation::Step => values[i],
            Interpolation::Linear => {
                let u = if self.eased { self.segment_easing(i).apply(u) } else { u };
                T::interpolate(values[i], values[i + 1], u)
            }
            Interpolation::CubicSpline => {
                let dt = self.times[i + 1] - self.times[i];
                T::hermite(values[i], self.out_tangents[i], values[i + 1], self.in_tangents[i + 1], u, dt)
            }
        })
    }
}

/// Where a sample falls in a key-time array: one key held exactly, or segment `i` and the
/// parameter `u` in it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Segment {
    /// Key `k`'s value, exactly (before the first key, after the last, one key, or a segment
    /// shorter than [`MIN_SEGMENT`]: its right key).
    Hold(usize),
    /// Interpolate keys `i` and `i + 1` at `u`.
    Lerp(usize, f32),
}

/// The sampling rules over a non-empty key-time array (see the module docs), starting the search
/// at `*cursor` and updating it. Shared by [`Track::sample_with_cursor`], [`Track::lerp_parts`]
/// and the key blocks of [`crate::compiled_clip`].
#[inline(always)]
pub(crate) fn segment(times: &[f32], time: f32, cursor: &mut u32) -> Segment {
    let n = times.len();
    // Fast path: the cursor's interval still holds `time` (forward playback). Checked before
    // the ends so a playing head touches only the two keys it interpolates.
    let c = *cursor as usize;
    let i = if c + 1 < n && times[c] <= time && time < times[c + 1] {
        c
    } else {
        if n == 1 || time <= times[0] || time.is_nan() {
            return Segment::Hold(0);
        }
        if time >= times[n - 1] {
            return Segment::Hold(n - 1);
        }
        locate(times, time, cursor)
    };
    let (t0, t1) = (times[i], times[i + 1]);
    let dt = t1 - t0;
    if !(dt >= MIN_SEGMENT) {
        return Segment::Hold(i + 1);
    }
    Segment::Lerp(i, (time - t0) / dt)
}

/// Finds `i` with `times[i] <= t < times[i + 1]`, given `times[0] < t < times[n - 1]` (or an
/// unsorted array, where any in-bounds answer is acceptable). Tries the cursor and its successor
/// before a binary search.
#[inline(always)]
fn locate(times: &[f32], t: f32, cursor: &mut u32) -> usize {
    let n = times.len();
    let c = *cursor as usize;
    if c + 1 < n && times[c] <= t {
        if t < times[c + 1] {
            return c;
        }
        if c + 2 < n && t < times[c + 2] {
            *cursor = (c + 1) as u32;
            return c + 1;
        }
    }
    let i = times.partition_point(|&x| x <= t).clamp(1, n - 1) - 1;
    *cursor = i as u32;
    i
}
