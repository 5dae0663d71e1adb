//! Key reduction: [`Clip::simplify`] removes the keys a clip can do without, track by track, so
//! that no point of a rigid shell around any bone moves more than a tolerance in model space,
//! the error measured down the hierarchy (a wrist's error counts the forearm's).
//!
//! **The error is measured as ACL measures it**: for every bone, its origin and three virtual
//! vertices at the shell distance (3 cm by default, in model units: [`SimplifyOptions`]) along
//! its local axes, placed by the original and by the reduced clip in model space; the error is
//! the largest distance between the two placements, over every bone and every measured time:
//! every key time of every track and three times evenly between each two consecutive ones (four
//! times the key rate). [`SimplifyReport`] says the worst error, where (bone, time) and the keys
//! kept per bone. The reduction is checked by that measurement: when it finds an error over the
//! tolerance, the bounds of the bone where it was found and of its ancestors are tightened and
//! the reduction runs again (at most [`MAX_PASSES`] times; the original clip, error zero, if
//! none fits), so the reported worst error never exceeds the tolerance.
//!
//! The tolerance is split evenly over the deepest chain (each bone may contribute
//! `tolerance / (depth + 1)` to a descendant's error) and turned into per-channel bounds through
//! each bone's lever arm (the farthest descendant origin, or for a leaf the length of the bone
//! that leads to it, and never less than the shell distance): a translation may deviate by the bone's share, a rotation by the share over
//! the lever arm (radians: the arc it swings a descendant), a scale by the same ratio. Each
//! LINEAR track without easing is then reduced by Ramer-Douglas-Peucker over its own keys (the
//! key farthest from the line between two kept keys is kept, recursively), so every track keeps
//! its own key times: the shape of hand-keyed and optimised animation. STEP tracks drop keys
//! that repeat the previous value; CUBICSPLINE and eased tracks are kept as they are.
//!
//! Rotation deviations are measured from the chord between unit quaternions (`4 asin(|a - b| / 2)`
//! on the same hemisphere), which resolves angles down to f32's precision; `2 acos(|a . b|)`
//! cannot see angles under about 7e-4 rad in f32, which let real motion capture's small
//! rotations go (the reported error then stayed at 9e-4 for any tolerance below it).
//!
//! It does not resample, quantize or reorder, and it never adds a key.

use glam::{Mat4, Quat, Vec3};

use crate::clip::{BoneChannels, Clip};
use crate::pose::{LocalToModelJob, SamplingContext, SamplingJob};
use crate::skeleton::{NO_PARENT, Skeleton};
use crate::track::{Interpolation, Track};

/// How [`Clip::simplify_with`] reduces and measures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimplifyOptions {
    /// The largest error allowed (model units): no shell vertex of any bone moves farther.
    pub tolerance: f32,
    /// How far the virtual vertices lie from each bone's origin, along its local axes (model
    /// units; ACL's default is 3 cm).
    pub shell_distance: f32,
}

impl SimplifyOptions {
    /// ACL's default shell: 3 cm, for models in metres.
    pub const DEFAULT_SHELL: f32 = 0.03;

    /// `tolerance` with the default shell distance.
    pub fn new(tolerance: f32) -> Self {
        SimplifyOptions { tolerance, shell_distance: Self::DEFAULT_SHELL }
    }
}

/// At most this many reductions run, each with tighter bounds where the last one's measurement
/// found an error over the tolerance.
pub const MAX_PASSES: usize = 24;

/// Measurements past this many poses (times x bones) sample the clip evenly instead of at every
/// key time and between (the report's `times_measured` says how many times were measured).
pub const MAX_MEASURED_POSES: usize = 1 << 24;

/// What [`Clip::simplify`] did.
#[derive(Clone, Debug, PartialEq)]
pub struct SimplifyReport {
    /// Keys before (every track of every channel).
    pub keys_before: usize,
    /// Keys after.
    pub keys_after: usize,
    /// The worst shell error reached (model units; see the module docs): never over the
    /// tolerance.
    pub max_error: f32,
    /// The bone where the worst error was found (`None`: no error at all).
    pub worst_bone: Option<usize>,
    /// When (seconds).
    pub worst_time: f32,
    /// Keys kept per bone (translation, rotation and scale keys together), in bone order.
    pub keys_per_bone: Vec<usize>,
    /// The shell distance the error was measured at.
    pub shell_distance: f32,
    /// How many times the error was measured at.
    pub times_measured: usize,
    /// How many reductions ran (the later ones with tighter bounds).
    pub passes: usize,
}

/// Indices of the keys to keep of `n` keys (times `t`), by Ramer-Douglas-Peucker with
/// `deviation(i, a, b)`: how far key `i` lies from the interpolation between kept keys `a` and
/// `b`.
pub(crate) fn rdp(n: usize, tolerance: f32, deviation: impl Fn(usize, usize, usize) -> f32) -> Vec<usize> {
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
        // `at > a`: a key was found (a negative tolerance with every key on the line finds none).
        if !(worst <= tolerance) && at > a {
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

/// The angle of the rotation between two unit quaternions (radians), from their chord on one
/// hemisphere: exact to f32's precision for small angles, where `2 acos(|a . b|)` is not.
pub(crate) fn angle(a: Quat, b: Quat) -> f32 {
    let chord = if a.dot(b) >= 0.0 { (a - b).length() } else { (a + b).length() };
    4.0 * (0.5 * chord).min(1.0).asin()
}

/// Per bone: its depth below the root and its lever arm (the farthest descendant origin in the
/// bind pose; for a leaf, the length of the bone leading to it), with the deepest depth.
pub(crate) fn levers(skeleton: &Skeleton) -> (Vec<f32>, usize) {
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

/// The shell error of one bone between two placements: the largest distance between its
/// origin and its three shell vertices (`shell` along each local axis) placed by `a` and by `b`.
pub fn shell_distance_error(a: &Mat4, b: &Mat4, shell: f32) -> f32 {
    let dw = a.w_axis.truncate() - b.w_axis.truncate();
    let dx = (a.x_axis.truncate() - b.x_axis.truncate()) * shell;
    let dy = (a.y_axis.truncate() - b.y_axis.truncate()) * shell;
    let dz = (a.z_axis.truncate() - b.z_axis.truncate()) * shell;
    dw.length().max((dw + dx).length()).max((dw + dy).length()).max((dw + dz).length())
}

/// The times the error is measured at: every key time of every track and three evenly between
/// each two consecutive ones (sorted, without repeats), or evenly spaced ones when that would
/// exceed [`MAX_MEASURED_POSES`] poses.
pub(crate) fn measurement_times(clip: &Clip, bones: usize) -> Vec<f32> {
    let keys = clip.key_times();
    let budget = (MAX_MEASURED_POSES / bones.max(1)).max(2);
    if keys.len() * 4 > budget {
        let (first, last) = (keys.first().copied().unwrap_or(0.0), keys.last().copied().unwrap_or(0.0));
        return (0..budget).map(|k| first + (last - first) * k as f32 / (budget - 1) as f32).collect();
    }
    let mut times = Vec::with_capacity(keys.len() * 4);
    for w in keys.windows(2) {
        times.push(w[0]);
        for j in 1..4 {
            let t = w[0] + (w[1] - w[0]) * j as f32 / 4.0;
            if t > w[0] && t < w[1] {
                times.push(t);
            }
        }
    }
    times.extend(keys.last());
    if times.is_empty() {
        times.push(0.0);
    }
    times
}

/// Model-space poses of `clip` at `times` (bone-major per time: `times.len() * bones`); `None`
/// when a job refuses (the clip does not fit the skeleton).
pub(crate) fn model_poses(clip: &Clip, skeleton: &Skeleton, times: &[f32]) -> Option<Vec<Mat4>> {
    let n = skeleton.bone_count();
    let mut local = skeleton.bind_pose.clone();
    let mut ctx = SamplingContext::new(n);
    let mut all = vec![Mat4::IDENTITY; n * times.len()];
    for (k, &time) in times.iter().enumerate() {
        SamplingJob { clip, bind_pose: &skeleton.bind_pose, time, context: &mut ctx, output: &mut local }
            .run()
            .ok()?;
        let model = &mut all[k * n..(k + 1) * n];
        LocalToModelJob { parents: &skeleton.parents, local: &local, adjusts: &[], output: model }
            .run()
            .ok()?;
    }
    Some(all)
}

/// The worst shell error of `clip` against the `reference` poses at `times`: (error, bone, time).
fn worst_error(
    clip: &Clip,
    skeleton: &Skeleton,
    reference: &[Mat4],
    times: &[f32],
    shell: f32,
) -> (f32, Option<usize>, f32) {
    let n = skeleton.bone_count();
    let Some(poses) = model_poses(clip, skeleton, times) else { return (f32::INFINITY, None, 0.0) };
    let mut worst = (0.0f32, None, 0.0f32);
    for (k, &time) in times.iter().enumerate() {
        for b in 0..n {
            let e = shell_distance_error(&reference[k * n + b], &poses[k * n + b], shell);
            if !(e <= worst.0) {
                worst = (e, Some(b), time);
            }
        }
    }
    worst
}

fn key_count(c: &BoneChannels) -> usize {
    c.translation.as_ref().map_or(0, Track::len)
        + c.rotation.as_ref().map_or(0, Track::len)
        + c.scale.as_ref().map_or(0, Track::len)
}

/// The clip with every track reduced to its bone's bounds (`share[b]`, model units; `arm[b]`,
/// the lever arm).
fn reduce_clip(clip: &Clip, share: &[f32], arm: &[f32]) -> Clip {
    let mut out = clip.clone();
    for (b, ch) in out.channels_mut().iter_mut().enumerate() {
        let (share, arm) = (share.get(b).copied().unwrap_or(0.0), arm.get(b).copied().unwrap_or(1.0));
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
    out
}

impl Clip {
    /// A copy with the keys it can do without removed so that no shell vertex of `skeleton`'s
    /// bones (3 cm out, [`SimplifyOptions::DEFAULT_SHELL`]) moves more than `tolerance` (model
    /// units) from where this clip puts it (see the module docs), with what it did.
    pub fn simplify(&self, skeleton: &Skeleton, tolerance: f32) -> (Clip, SimplifyReport) {
        self.simplify_with(skeleton, &SimplifyOptions::new(tolerance))
    }

    /// [`Clip::simplify`] with a chosen shell distance.
    pub fn simplify_with(&self, skeleton: &Skeleton, options: &SimplifyOptions) -> (Clip, SimplifyReport) {
        let finite = |x: f32| if x.is_finite() { x.max(0.0) } else { 0.0 };
        let (tolerance, shell) = (finite(options.tolerance), finite(options.shell_distance));
        let n = skeleton.bone_count();
        let (lever, depth) = levers(skeleton);
        let arm: Vec<f32> =
            (0..n).map(|b| lever.get(b).copied().unwrap_or(0.0).max(shell).max(1e-6)).collect();
        let mut share = vec![tolerance / (depth + 1) as f32; n];
        let keys_before = self.channels().iter().map(key_count).sum();
        let times = measurement_times(self, n);
        let report = |clip: &Clip, (max_error, worst_bone, worst_time): (f32, Option<usize>, f32), passes| {
            SimplifyReport {
                keys_before,
                keys_after: clip.channels().iter().map(key_count).sum(),
                max_error,
                worst_bone,
                worst_time,
                keys_per_bone: clip.channels().iter().map(key_count).collect(),
                shell_distance: shell,
                times_measured: times.len(),
                passes,
            }
        };
        let Some(reference) = model_poses(self, skeleton, &times) else {
            // A clip that does not fit its skeleton is not reduced.
            return (self.clone(), report(self, (0.0, None, 0.0), 0));
        };
        for pass in 1..=MAX_PASSES {
            let out = reduce_clip(self, &share, &arm);
            let worst = worst_error(&out, skeleton, &reference, &times, shell);
            if worst.0 <= tolerance {
                let r = report(&out, worst, pass);
                return (out, r);
            }
            // Tighten the bounds of the bone where the error was found and of its ancestors
            // (the error there is their sum), by how far over the tolerance it was.
            let factor = (tolerance / worst.0).clamp(0.05, 0.7);
            let mut b = worst.1.map_or(NO_PARENT, |b| b as u16);
            if b == NO_PARENT {
                share.iter_mut().for_each(|s| *s *= factor);
            }
            while b != NO_PARENT {
                share[b as usize] *= factor;
                b = skeleton.parents[b as usize];
            }
        }
        (self.clone(), report(self, (0.0, None, 0.0), MAX_PASSES))
    }
}
