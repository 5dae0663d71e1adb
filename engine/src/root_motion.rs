//! Root motion: a clip's root bone moves the character instead of sliding away from it.
//!
//! A [`RootMotion`] (authored on an Animator) names the bone that carries the motion, the
//! translation axes taken from it and whether its heading (yaw about +Y) is taken. The motion of
//! a root transform is its *motion frame* `M(t)` ([`motion_frame`]): a yaw and a translation on
//! the taken axes, both in the bone's parent space (model space for a top-level bone, which is
//! where roots are). The yaw is the heading of the bone axis that points along model +Z at rest,
//! so a bone's rest has yaw 0 whatever its rest rotation.
//!
//! - **Deltas.** A tick that moves a playhead from `a` to `b` moves the character by
//!   `M(a)⁻¹·M(b)` ([`clip_delta`]); a looping playhead that wraps adds whole laps
//!   (`M(0)⁻¹·M(end)` each) between the partial ends, so laps compose exactly and never drift.
//!   A delta's translation is in the frame the character faced when the step began.
//! - **In place.** The posed root becomes `M(t)⁻¹·M_rest·T(t)` ([`remove_motion`]): on the taken
//!   axes it keeps its rest position, its heading is its rest heading, and the rest of its motion
//!   (a walk's bob, a lean) stays in the pose. So the character's entity is where its root is.
//! - **Blending.** Deltas blend linearly by the weights the poses blend with
//!   ([`RootDelta::weighted`]): crossfades, blends, blend spaces and state machine transitions.
//! - **Accumulation.** [`RootAccumulator`] composes deltas in `f64` so a character walking for
//!   hours does not lose precision; [`RootAccumulator::offset`] is the transform a scene puts
//!   after the entity's own.
//!
//! Not here: where deltas come from per source ([`crate::animator`], [`crate::graph`]), scenes.

use glam::{DQuat, DVec3, Quat, Vec3};

use crate::clip::Clip;
use crate::math::Transform;
use crate::playback::PlaybackStep;

/// Which part of a root bone's motion moves the character (authored; see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RootMotion {
    /// The bone that carries the motion (a top-level bone, mostly the hips or a root).
    pub bone: u16,
    /// Translation axes taken (X, Y, Z of the bone's parent space); usually X and Z.
    pub axes: [bool; 3],
    /// Whether the heading (yaw about +Y) is taken.
    pub yaw: bool,
}

impl RootMotion {
    /// The usual setting: ground-plane translation (X and Z) and heading, from `bone`.
    pub fn planar(bone: u16) -> Self {
        Self { bone, axes: [true, false, true], yaw: true }
    }
}

/// A rigid motion in the ground plane and up: a yaw about +Y, then a translation. Applied to a
/// point `x` it gives `rot_y(yaw)·x + translation`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RootDelta {
    /// Translation.
    pub translation: Vec3,
    /// Yaw about +Y, radians.
    pub yaw: f32,
}

fn rot_y(yaw: f32) -> Quat {
    Quat::from_rotation_y(yaw)
}

impl RootDelta {
    /// No motion.
    pub const IDENTITY: RootDelta = RootDelta { translation: Vec3::ZERO, yaw: 0.0 };

    /// `self` then `next` (next's translation is in the frame `self` ends facing).
    pub fn then(self, next: RootDelta) -> RootDelta {
        RootDelta {
            translation: self.translation + rot_y(self.yaw) * next.translation,
            yaw: self.yaw + next.yaw,
        }
    }

    /// The motion that undoes `self`.
    pub fn inverse(self) -> RootDelta {
        RootDelta { translation: rot_y(-self.yaw) * -self.translation, yaw: -self.yaw }
    }

    /// `self` repeated `n` times (by squaring: a step spanning many laps costs `log n`).
    pub fn repeated(self, mut n: u64) -> RootDelta {
        let (mut out, mut base) = (RootDelta::IDENTITY, self);
        while n > 0 {
            if n & 1 == 1 {
                out = out.then(base);
            }
            base = base.then(base);
            n >>= 1;
        }
        out
    }

    /// `self` scaled by `w`, for a weighted blend of deltas (sum the scaled deltas).
    pub fn weighted(self, w: f32) -> RootDelta {
        RootDelta { translation: self.translation * w, yaw: self.yaw * w }
    }

    /// Sum of two weighted deltas.
    pub fn plus(self, other: RootDelta) -> RootDelta {
        RootDelta { translation: self.translation + other.translation, yaw: self.yaw + other.yaw }
    }

    /// True when both parts are finite.
    pub fn is_finite(self) -> bool {
        self.translation.is_finite() && self.yaw.is_finite()
    }

    /// The delta as a transform (unit scale).
    pub fn to_transform(self) -> Transform {
        Transform { translation: self.translation, rotation: rot_y(self.yaw), scale: Vec3::ONE }
    }
}

/// The heading of `rotation`: the yaw of the bone axis that points along +Z at rest (`rest`).
fn heading(rotation: Quat, rest: Quat) -> f32 {
    let f = rotation * (rest.inverse() * Vec3::Z);
    if f.x.abs() < 1e-12 && f.z.abs() < 1e-12 { 0.0 } else { f.x.atan2(f.z) }
}

/// The motion frame `M` of a root transform `local` (see the module docs); `rest` is the bone's
/// rest (bind) transform.
pub fn motion_frame(settings: &RootMotion, rest: &Transform, local: &Transform) -> RootDelta {
    let t = local.translation;
    let pick = |i: usize, v: f32| if settings.axes[i] { v } else { 0.0 };
    RootDelta {
        translation: Vec3::new(pick(0, t.x), pick(1, t.y), pick(2, t.z)),
        yaw: if settings.yaw { heading(local.rotation, rest.rotation) } else { 0.0 },
    }
}

/// Puts a posed root in place: `local` becomes `M(t)⁻¹·M_rest·local`.
pub fn remove_motion(settings: &RootMotion, rest: &Transform, local: &mut Transform) {
    if settings.axes == [false; 3] && !settings.yaw {
        return;
    }
    let m = motion_frame(settings, rest, local);
    let m_rest = motion_frame(settings, rest, rest);
    let f = m.inverse().then(m_rest);
    if !f.is_finite() {
        return;
    }
    local.translation = f.translation + rot_y(f.yaw) * local.translation;
    if f.yaw != 0.0 {
        local.rotation = (rot_y(f.yaw) * local.rotation).normalize();
    }
}

/// The root's local transform in `clip` at `time` (its compressed form where it plays one, else
/// its channels, or the rest where it has none),
/// its tracks searched from `keys` (interval cursors, updated).
fn sample_root(clip: &Clip, bone: usize, rest: &Transform, time: f32, keys: &mut [u32; 2]) -> Transform {
    if let Some(c) = clip.compressed() {
        // The form the pose plays (its own keys: no cursors to keep).
        let t = c.sample_bone(bone, rest, time);
        return Transform { scale: rest.scale, ..t };
    }
    let Some(ch) = clip.channels().get(bone) else { return *rest };
    let [kt, kr] = keys;
    Transform {
        translation: ch
            .translation
            .as_ref()
            .and_then(|t| t.sample_with_cursor(time, kt))
            .unwrap_or(rest.translation),
        rotation: ch
            .rotation
            .as_ref()
            .and_then(|t| t.sample_with_cursor(time, kr))
            .map_or(rest.rotation, Quat::normalize),
        scale: rest.scale,
    }
}

/// What a playhead remembers between steps so that a step's motion costs one sample of the root,
/// not two: the motion frame where the last step ended (reused when the next starts there) and
/// the root tracks' interval cursors. It remembers the setting and rest it was made with and
/// starts afresh when they change; a head playing another clip keeps its own.
#[derive(Clone, Debug, Default)]
pub struct RootCursor {
    end: Option<(f32, RootDelta)>,
    keys: [u32; 2],
    made_with: Option<(RootMotion, Transform)>,
}

impl RootCursor {
    /// Forgets the last step (a seek, a restart).
    pub fn reset(&mut self) {
        self.end = None;
    }
}

/// The motion frame of `clip`'s root at `t`.
fn frame_at(settings: &RootMotion, clip: &Clip, rest: &Transform, t: f32, keys: &mut [u32; 2]) -> RootDelta {
    motion_frame(settings, rest, &sample_root(clip, usize::from(settings.bone), rest, t, keys))
}

/// `M(a)⁻¹·M(b)` for `clip`: how its root moves from time `a` to time `b` without wrapping
/// (what an editor draws a trajectory with).
pub fn clip_motion_between(
    settings: &RootMotion,
    clip: &Clip,
    rest: &Transform,
    a: f32,
    b: f32,
) -> RootDelta {
    let mut keys = [0; 2];
    let ma = frame_at(settings, clip, rest, a, &mut keys);
    let mb = frame_at(settings, clip, rest, b, &mut keys);
    ma.inverse().then(mb)
}

/// The motion `clip`'s root makes over `step` (see the module docs): whole laps of a looping
/// playhead are composed in. A non-finite result (a clip with NaN keys) is no motion.
pub fn clip_delta(
    settings: &RootMotion,
    clip: &Clip,
    rest: &Transform,
    step: &PlaybackStep,
    duration: f32,
    looping: bool,
) -> RootDelta {
    clip_delta_cursor(settings, clip, rest, step, duration, looping, &mut RootCursor::default())
}

/// [`clip_delta`] for a playhead that keeps a [`RootCursor`]: the same result, bit for bit, with
/// the frame where the last step ended reused.
pub fn clip_delta_cursor(
    settings: &RootMotion,
    clip: &Clip,
    rest: &Transform,
    step: &PlaybackStep,
    duration: f32,
    looping: bool,
    cursor: &mut RootCursor,
) -> RootDelta {
    if step.travel == 0.0 || !step.travel.is_finite() {
        return RootDelta::IDENTITY;
    }
    let (a, b) = (step.from, step.to);
    if cursor.made_with != Some((*settings, *rest)) {
        *cursor = RootCursor { made_with: Some((*settings, *rest)), ..RootCursor::default() };
    }
    let keys = &mut cursor.keys;
    let start = match cursor.end {
        Some((t, f)) if t.to_bits() == a.to_bits() => f,
        _ => frame_at(settings, clip, rest, a, keys),
    };
    let end = frame_at(settings, clip, rest, b, keys);
    cursor.end = Some((b, end));
    let d = if !looping || !(duration > 0.0) {
        start.inverse().then(end)
    } else {
        let unwrapped = f64::from(a) + f64::from(step.travel);
        let laps = ((unwrapped - f64::from(b)) / f64::from(duration)).round();
        if laps == 0.0 {
            start.inverse().then(end)
        } else {
            let first = frame_at(settings, clip, rest, 0.0, keys);
            let last = frame_at(settings, clip, rest, duration, keys);
            let lap = first.inverse().then(last);
            let whole = (laps.abs() - 1.0).clamp(0.0, 1e12) as u64;
            if laps > 0.0 {
                let head = start.inverse().then(last);
                let tail = first.inverse().then(end);
                head.then(lap.repeated(whole)).then(tail)
            } else {
                let head = start.inverse().then(first);
                let tail = last.inverse().then(end);
                head.then(lap.inverse().repeated(whole)).then(tail)
            }
        }
    };
    if d.is_finite() { d } else { RootDelta::IDENTITY }
}

/// The motion a character has accumulated (session state, `f64`): where its root motion has
/// taken it relative to its entity's own transform.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RootAccumulator {
    /// Translation, in the entity's space.
    pub translation: DVec3,
    /// Yaw about +Y, radians.
    pub yaw: f64,
}

impl RootAccumulator {
    /// Composes `delta` after what has accumulated.
    pub fn push(&mut self, delta: RootDelta) {
        if !delta.is_finite() {
            return;
        }
        let r = DQuat::from_rotation_y(self.yaw);
        self.translation += r * delta.translation.as_dvec3();
        self.yaw += f64::from(delta.yaw);
    }

    /// Back to no motion.
    pub fn reset(&mut self) {
        *self = Self::default();
    }

    /// The accumulated motion as a transform (`f32`), to put after the entity's own.
    pub fn offset(&self) -> Transform {
        Transform {
            translation: self.translation.as_vec3(),
            rotation: Quat::from_rotation_y(self.yaw.rem_euclid(std::f64::consts::TAU) as f32),
            scale: Vec3::ONE,
        }
    }

    /// True when nothing has accumulated.
    pub fn is_identity(&self) -> bool {
        self.translation == DVec3::ZERO && self.yaw == 0.0
    }
}
