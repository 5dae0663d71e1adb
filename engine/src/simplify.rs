//! Key reduction: [`Clip::simplify`] removes the keys a clip can do without, track by track, so
//! that no bone origin moves more than a tolerance in model space, the error measured down the
//! hierarchy (a wrist's error counts the forearm's).
//!
//! The tolerance is split evenly over the deepest chain (each bone may contribute
//! `tolerance / (depth + 1)` to a descendant's error) and turned into per-channel bounds through
//! each bone's lever arm (the farthest descendant origin, or for a leaf the length of the bone
//! that leads to it): a translation may deviate by the bone's share, a rotation by the share over
//! the lever arm (radians: the arc it swings a descendant), a scale by the same ratio. Each
//! LINEAR track without easing is then reduced by Ramer-Douglas-Peucker over its own keys (the
//! key farthest from the line between two kept keys is kept, recursively), so every track keeps
//! its own key times: the shape of hand-keyed and optimised animation. STEP tracks drop keys
//! that repeat the previous value; CUBICSPLINE and eased tracks are kept as they are.
//!
//! It does not resample, quantize or reorder, and it never adds a key.

use glam::{Mat4, Quat, Vec3};

use crate::clip::{BoneChannels, Clip};
use crate::math::Transform;
use crate::pose::{LocalToModelJob, SamplingContext, SamplingJob};
use crate::skeleton::{NO_PARENT, Skeleton};
use crate::track::{Interpolation, Track};

/// What [`Clip::simplify`] did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimplifyReport {
    /// Keys before (every track of every channel).
    pub keys_before: usize,
    /// Keys after.
    pub keys_after: usize,
    /// The largest distance between a bone origin posed by the original and by the simplified
    /// clip, over 8 samples per original key interval (model units).
    pub max_error: f32,
}

/// Indices of the keys to keep of `n` keys (times `t`), by Ramer-Douglas-Peucker with
/// `deviation(i, a, b)`: how far key `i` lies from the interpolation between kept keys `a` and
/// `b`.
fn rdp(n: usize, tolerance: f32, deviation: impl Fn(usize, usize, usize) -> f32) -> Vec<usize> {
    if n <= 2 {
        return (0..n).collect();
    }
    let mut keep = vec![false; n];
    keep[0] = true;
    keep[n - 1] = true;
    let mut stack = vec![(0usize, n - 1)];
    while let Some((a, b)) = stack.pop() {
        if b <= a + 1 {
            continue;
        }
        let (mut worst, mut at) = (0.0f32, a);
        for i in a + 1..b {
            let d = deviation(i, a, b);
            if !(d <= worst) {
                (worst, at) = (d, i);
            }
        }
        if !(worst <= tolerance) {
            keep[at] = true;
            stack.push((a, at));
            stack.push((at, b));
        }
    }
    (0..n).filter(|&i| keep[i]).collect()
}

/// The reduced copy of a LINEAR or STEP track (others unchanged).
fn reduce<T: crate::track::Animatable>(
    track: &Track<T>,
    tolerance: f32,
    distance: impl Fn(T, T) -> f32,
) -> Track<T> {
    let plain = track.is_plain_linear();
    let step = track.interpolation() == Interpolation::Step;
    if !(plain || step) || track.len() <= 2 {
        return track.clone();
    }
    let (t, v) = (track.times(), track.values());
    let keep: Vec<usize> = if step {
        (0..t.len()).filter(|&i| i == 0 || i + 1 == t.len() || v[i] != v[i - 1]).collect()
    } else {
        rdp(t.len(), tolerance, |i, a, b| {
            let u = (t[i] - t[a]) / (t[b] - t[a]);
            distance(v[i], T::interpolate(v[a], v[b], u))
        })
    };
    if keep.len() == t.len() {
        return track.clone();
    }
    let times = keep.iter().map(|&i| t[i]).collect();
    let values = keep.iter().map(|&i| v[i]).collect();
    Track::from_keys(track.interpolation(), times, values).unwrap_or_else(|_| track.clone())
}

fn angle(a: Quat, b: Quat) -> f32 {
    2.0 * a.dot(b).abs().min(1.0).acos()
}

/// Per bone: its depth below the root and its lever arm (the farthest descendant origin in the
/// bind pose; for a leaf, the length of the bone leading to it), with the deepest depth.
fn levers(skeleton: &Skeleton) -> (Vec<f32>, usize) {
    let n = skeleton.bone_count();
    let mut model = vec![Mat4::IDENTITY; n];
    let _ = LocalToModelJob {
        parents: &skeleton.parents,
        local: &skeleton.bind_pose,
        adjusts: &[],
        output: &mut model,
    }
    .run();
    let origin: Vec<Vec3> = model.iter().map(|m| m.w_axis.truncate()).collect();
    let mut depth = vec![0usize; n];
    let mut lever = vec![0.0f32; n];
    for b in 0..n {
        let p = skeleton.parents[b];
        if p != NO_PARENT {
            depth[b] = depth[p as usize] + 1;
        }
    }
    // Every ancestor's lever reaches every descendant origin (parents come before children).
    for b in (0..n).rev() {
        let mut a = skeleton.parents[b];
        while a != NO_PARENT {
            let d = origin[b].distance(origin[a as usize]);
            lever[a as usize] = lever[a as usize].max(d);
            a = skeleton.parents[a as usize];
        }
    }
    for b in 0..n {
        if lever[b] == 0.0 {
            let p = skeleton.parents[b];
            lever[b] = if p == NO_PARENT { 0.0 } else { origin[b].distance(origin[p as usize]) };
        }
    }
    (lever, depth.into_iter().max().unwrap_or(0))
}

/// Largest distance between the bone origins of two poses (model space).
fn origin_distance(a: &[Mat4], b: &[Mat4]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x.w_axis.truncate().distance(y.w_axis.truncate())).fold(0.0, f32::max)
}

impl Clip {
    /// A copy with the keys it can do without removed so that no bone origin of `skeleton`
    /// moves more than `tolerance` (model units) from where this clip puts it (see the module
    /// docs), with what it did: keys before and after and the largest error measured.
    pub fn simplify(&self, skeleton: &Skeleton, tolerance: f32) -> (Clip, SimplifyReport) {
        let tolerance = if tolerance.is_finite() { tolerance.max(0.0) } else { 0.0 };
        let (lever, depth) = levers(skeleton);
        let share = tolerance / (depth + 1) as f32;
        let mut out = self.clone();
        let count = |c: &BoneChannels| {
            c.translation.as_ref().map_or(0, Track::len)
                + c.rotation.as_ref().map_or(0, Track::len)
                + c.scale.as_ref().map_or(0, Track::len)
        };
        let keys_before = self.channels().iter().map(count).sum();
        for (b, ch) in out.channels_mut().iter_mut().enumerate() {
            let arm = lever.get(b).copied().unwrap_or(0.0).max(1e-6);
            if let Some(t) = &ch.translation {
                ch.translation = Some(reduce(t, share, |x: Vec3, y: Vec3| x.distance(y)));
            }
            if let Some(r) = &ch.rotation {
                ch.rotation = Some(reduce(r, share / arm, angle));
            }
            if let Some(s) = &ch.scale {
                ch.scale = Some(reduce(s, share / arm, |x: Vec3, y: Vec3| (x - y).abs().max_element()));
            }
        }
        let keys_after = out.channels().iter().map(count).sum();
        // Measure: both clips posed at 8 samples per original key interval.
        let times: Vec<f32> = self
            .channels()
            .iter()
            .flat_map(|c| c.rotation.as_ref().map(|t| t.times().to_vec()).unwrap_or_default())
            .collect();
        let duration = self.duration();
        let steps = (times.len().max(2) * 8).min(4096);
        let n = skeleton.bone_count();
        let (mut la, mut lb) = (skeleton.bind_pose.clone(), skeleton.bind_pose.clone());
        let (mut ma, mut mb) = (vec![Mat4::IDENTITY; n], vec![Mat4::IDENTITY; n]);
        let (mut ca, mut cb) = (SamplingContext::new(n), SamplingContext::new(n));
        let mut max_error = 0.0f32;
        for k in 0..=steps {
            let time = duration * k as f32 / steps as f32;
            let pose = |clip: &Clip,
                        ctx: &mut SamplingContext,
                        local: &mut [Transform],
                        model: &mut [Mat4]| {
                let sampled =
                    SamplingJob { clip, bind_pose: &skeleton.bind_pose, time, context: ctx, output: local }
                        .run();
                let composed =
                    LocalToModelJob { parents: &skeleton.parents, local, adjusts: &[], output: model }.run();
                sampled.is_ok() && composed.is_ok()
            };
            if pose(self, &mut ca, &mut la, &mut ma) && pose(&out, &mut cb, &mut lb, &mut mb) {
                max_error = max_error.max(origin_distance(&ma, &mb));
            }
        }
        (out, SimplifyReport { keys_before, keys_after, max_error })
    }
}
