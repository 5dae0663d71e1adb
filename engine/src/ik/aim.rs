//! The aim solve: [`AimJob`] for one joint, [`AimJointsJob`] for many, both over the one
//! lane-wise solve ([`solve_aim`]).

use std::f32::consts::{FRAC_PI_2, PI};

use glam::{Mat4, Quat, Vec3};

use super::lanes::{F, M, Q, V3};
use super::{
    EPSILON, IkError, arcs, axis_in, finite_in, frames, in_groups, nearer, ratio_in, toward_pole, twisted,
    unit, usable, validate_each, weighted,
};

const AIM: &str = "aim job";
const AIMS: &str = "aim joints job";

/// How far an aimed joint may turn from its rest direction, radians: `yaw` about its up axis,
/// `pitch` toward or away from it (each `[0, PI]`; `PI` is no limit).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AimLimits {
    /// Most turn about the up axis, either way.
    pub yaw: f32,
    /// Most turn toward or away from the up axis.
    pub pitch: f32,
}

impl AimLimits {
    /// No limit.
    pub const NONE: AimLimits = AimLimits { yaw: std::f32::consts::PI, pitch: std::f32::consts::PI };
}

/// Turns one joint so that its `forward` axis, from `offset`, points at `target`.
///
/// All of `forward`, `up` and `offset` are in the joint's own local space (a head's forward is
/// often +Z, its eyes a little forward and up). The correction is the rotation that puts the
/// ray from `offset` along `forward` through the target; then turns about that line so that
/// `up` leans toward `pole` (model space), then by `twist`; the forward direction is then held
/// within `limits` of its rest direction (yaw about `up`, pitch toward it), and the whole is
/// blended from the identity by `weight`. A target inside the offset's reach (closer to the
/// joint than the offset can swing) is aimed at as if the offset were zero, and not `reached`.
#[derive(Debug)]
pub struct AimJob<'a> {
    /// `model_from_bone` of the joint.
    pub joint: &'a Mat4,
    /// The point to aim at, model space.
    pub target: Vec3,
    /// The axis that aims, joint space (any length but zero).
    pub forward: Vec3,
    /// The aim's origin, joint space (zero: the joint itself).
    pub offset: Vec3,
    /// The joint's up axis, joint space (any length but zero).
    pub up: Vec3,
    /// The direction `up` should lean toward, model space (zero: no preference).
    pub pole: Vec3,
    /// A rotation about the aim line after the pole, radians.
    pub twist: f32,
    /// How far the forward axis may turn from its rest direction.
    pub limits: AimLimits,
    /// How much of the correction applies.
    pub weight: f32,
    /// Out: the joint's local correction.
    pub correction: &'a mut Quat,
    /// Out: whether the forward ray passes through the target (reachable, within the limits, a
    /// weight of 1).
    pub reached: &'a mut bool,
}

impl AimJob<'_> {
    /// This job's inputs as one joint of [`AimJointsJob`].
    fn joint(&self) -> AimJoint<'_> {
        AimJoint {
            joint: self.joint,
            target: self.target,
            forward: self.forward,
            offset: self.offset,
            up: self.up,
            pole: self.pole,
            twist: self.twist,
            limits: self.limits,
            weight: self.weight,
        }
    }

    /// Checks the inputs; every failure is named.
    pub fn validate(&self) -> Result<(), IkError> {
        self.joint().validate()
    }

    /// Validates and writes the correction and `reached`. On error the outputs are untouched.
    pub fn run(self) -> Result<(), IkError> {
        self.validate()?;
        let mut solution = [AimSolution::default()];
        // One lane at the baseline: the AVX2 build of one lane measured 7% slower here (the
        // two-bone job's 7% faster); the bits are the same either way.
        solve_aim::<1>([&self.joint()], &mut solution);
        *self.correction = solution[0].correction;
        *self.reached = solution[0].reached;
        Ok(())
    }
}

/// One joint of an [`AimJointsJob`]: the inputs of an [`AimJob`], without its outputs.
#[derive(Clone, Copy, Debug)]
pub struct AimJoint<'a> {
    /// `model_from_bone` of the joint.
    pub joint: &'a Mat4,
    /// The point to aim at, model space.
    pub target: Vec3,
    /// The axis that aims, joint space (any length but zero).
    pub forward: Vec3,
    /// The aim's origin, joint space.
    pub offset: Vec3,
    /// The joint's up axis, joint space (any length but zero).
    pub up: Vec3,
    /// The direction `up` should lean toward, model space (zero: no preference).
    pub pole: Vec3,
    /// A rotation about the aim line after the pole, radians.
    pub twist: f32,
    /// How far the forward axis may turn from its rest direction.
    pub limits: AimLimits,
    /// How much of the correction applies, `[0, 1]`.
    pub weight: f32,
}

impl AimJoint<'_> {
    /// Checks the inputs; every failure is named (see [`AimJob::validate`]).
    pub fn validate(&self) -> Result<(), IkError> {
        // The usual case in one pass (every number finite, axes long enough, ratios and limits
        // in range); otherwise the checks below name the first failure.
        let j = self.joint;
        let numbers = (j.x_axis + j.y_axis + j.z_axis + j.w_axis)
            + (self.target + self.forward + self.offset + self.up + self.pole).extend(self.twist);
        let tiny = EPSILON * EPSILON;
        let limited = |v: f32| (0.0..=PI).contains(&v);
        if (numbers * 0.0).cmpeq(glam::Vec4::ZERO).all()
            && self.forward.length_squared() >= tiny
            && self.up.length_squared() >= tiny
            && limited(self.limits.yaw)
            && limited(self.limits.pitch)
            && (0.0..=1.0).contains(&self.weight)
        {
            return Ok(());
        }
        finite_in(AIM, "joint", self.joint.is_finite())?;
        finite_in(AIM, "target", self.target.is_finite())?;
        axis_in(AIM, "forward", self.forward)?;
        finite_in(AIM, "offset", self.offset.is_finite())?;
        axis_in(AIM, "up", self.up)?;
        finite_in(AIM, "pole", self.pole.is_finite())?;
        finite_in(AIM, "twist", self.twist.is_finite())?;
        for (name, v) in [("limits.yaw", self.limits.yaw), ("limits.pitch", self.limits.pitch)] {
            finite_in(AIM, name, v.is_finite())?;
            if !limited(v) {
                return Err(IkError::OutOfRange { job: AIM, input: name, value: v, most: PI });
            }
        }
        ratio_in(AIM, "weight", self.weight)
    }
}

/// What an aim solve gives one joint: the outputs of an [`AimJob`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AimSolution {
    /// The joint's local correction.
    pub correction: Quat,
    /// Whether the forward ray passes through the target.
    pub reached: bool,
}

impl Default for AimSolution {
    /// No correction, not reached.
    fn default() -> Self {
        AimSolution { correction: Quat::IDENTITY, reached: false }
    }
}

/// Aims many joints at once (a crowd's heads, a turret's barrels): each joint gets exactly what
/// an [`AimJob`] on its own inputs gives, bit for bit, sixteen solved side by side (see
/// [`super::TwoBoneIkChainsJob`]).
#[derive(Debug)]
pub struct AimJointsJob<'a> {
    /// The joints' inputs.
    pub joints: &'a [AimJoint<'a>],
    /// Out: one solution per joint, in the joints' order.
    pub solutions: &'a mut [AimSolution],
}

impl AimJointsJob<'_> {
    /// Checks the inputs: as many solutions as joints, and every joint's inputs (the first
    /// failure named with its joint's index).
    pub fn validate(&self) -> Result<(), IkError> {
        validate_each(AIMS, "joint", self.joints, self.solutions.len(), AimJoint::validate)
    }

    /// Validates and writes every solution. On error the outputs are untouched.
    pub fn run(self) -> Result<(), IkError> {
        self.validate()?;
        in_groups(self.joints, self.solutions, solve_group::<4>, solve_group::<16>);
        Ok(())
    }
}

/// `N` joints aimed side by side, compiled for AVX2 where the CPU has it (as the two-bone
/// groups): the same bits either way.
fn solve_group<const N: usize>(group: [&AimJoint; N], out: &mut [AimSolution]) {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::avx2() {
        // SAFETY: `simd::avx2()` says this CPU has AVX and AVX2.
        return unsafe { solve_avx2(group, out) };
    }
    solve_aim(group, out)
}

/// [`solve_aim`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2")]
pub(super) fn solve_avx2<const N: usize>(group: [&AimJoint; N], out: &mut [AimSolution]) {
    solve_aim(group, out)
}

/// Aims `N` joints side by side (validated inputs) into the first `out.len()` (at most `N`) of
/// `out`; see [`AimJob`] for the solution. Each lane's result depends on that lane's inputs
/// only, and is the same whatever `N` is.
#[inline(always)]
pub(super) fn solve_aim<const N: usize>(a: [&AimJoint; N], out: &mut [AimSolution]) {
    let (zero, one, eps) = (F::splat(0.0), F::<N>::splat(1.0), F::splat(EPSILON));
    let forward = unit(V3::from_fn(|i| a[i].forward));
    let up = unit(V3::from_fn(|i| a[i].up));
    let frame = frames(std::array::from_fn(|i| a[i].joint));
    // The target in the joint's frame (translation and rotation; scale divided out).
    let local = frame.inward(V3::from_fn(|i| a[i].target) - V3::from_fn(|i| a[i].joint.w_axis.truncate()));
    // A target past `FAR` is brought within it along its line, the offset with it: the aim is
    // the same at any scale, and the squares below stay finite.
    let near = nearer(local);
    let local = local.scale(near);
    let distance2 = local.length_squared();
    let distance = distance2.sqrt();
    // The point of the rest ray (offset + t * forward, t >= 0) that should land on the target:
    // the one as far from the joint as the target is.
    let offset = V3::from_fn(|i| a[i].offset).scale(near);
    let along = offset.dot(forward);
    // sqrt(distance^2 - across^2), as distance * sqrt(1 - across^2 / distance^2) so that a far
    // target (1e30) does not overflow the square: where distance^2 overflows, across / inf is 0
    // and the root the distance.
    let across = (offset.length_squared() - along * along).max(zero);
    let q = distance.gt(zero).select(one - across / distance2, -one);
    let root = distance * q.max(zero).sqrt();
    let on_ray = q.ge(zero).and((root - along).ge(zero));
    let aimed = V3::select(on_ray, offset + forward.scale(root - along), forward);

    let line = local.scale(one / distance);
    // |aimed| without a square root: on the ray it is the distance (chosen so), else unit forward.
    let aimed_length = on_ray.select(distance, one);
    let arc = arcs(aimed, aimed_length, line);
    let turn = toward_pole(arc.normalize(), line, arc.sandwich(up), frame.inward(V3::from_fn(|i| a[i].pole)));
    let turn = twisted(turn, line, F::from_fn(|i| a[i].twist));
    let solvable = distance.gt(eps).and(aimed_length.gt(eps));
    let turn = Q::select(solvable, turn, Q::identity());
    let limits = (F::from_fn(|i| a[i].limits.yaw), F::from_fn(|i| a[i].limits.pitch));
    let (limited, clamped) = limit(turn, forward, up, limits);
    let limited = Q::select(usable(limited), limited, Q::identity());
    let reached = distance.gt(eps).and(on_ray).and(clamped.not());
    // Every joint at full weight (the usual case): the corrections as solved. Through
    // `weighted` alone, the compiler computed its slerp (an arccosine polynomial) ahead of the
    // weight's test, a tenth of a single aim.
    if a.iter().all(|j| j.weight >= 1.0) {
        for (i, o) in out.iter_mut().enumerate().take(N) {
            *o = AimSolution { correction: limited.lane(i), reached: reached.lane(i) };
        }
        return;
    }
    for (i, o) in out.iter_mut().enumerate().take(N) {
        *o = AimSolution {
            correction: weighted(limited.lane(i), a[i].weight),
            reached: reached.lane(i) && a[i].weight >= 1.0,
        };
    }
}

/// `turn` with the direction it gives `forward` held within `yaw` and `pitch` of `forward` (yaw
/// about `up`, pitch toward it), and whether it had to be. Without an arctangent: yaw is within
/// its limit when the direction's part in the side-forward plane is that near forward, pitch
/// when the direction is that near the plane (cosines compared); a direction past a limit is
/// brought back onto it from the limit's sine and cosine. Lanes whose up is along forward have no
/// frame to measure yaw in and keep `turn`.
#[inline(always)]
fn limit<const N: usize>(turn: Q<N>, forward: V3<N>, up: V3<N>, (yaw, pitch): (F<N>, F<N>)) -> (Q<N>, M<N>) {
    let (zero, one) = (F::splat(0.0), F::<N>::splat(1.0));
    // No lane limited at all (`AimLimits::NONE`, or wider): nothing to hold.
    let free = yaw.ge(F::splat(PI)).and(pitch.ge(F::splat(FRAC_PI_2)));
    if free.all() {
        return (turn, free.not());
    }
    // A frame at rest: x to the side, y up (made square to forward), z forward.
    let z = forward;
    let side = up.cross(z);
    let side_length = side.length();
    let x = side.scale(one / side_length);
    let y = z.cross(x);
    let d = turn.rotate(forward);
    let (dx, dy, dz) = (d.dot(x), d.dot(y), d.dot(z));
    let (yaw_sin, yaw_cos) = yaw.sin_cos_to_pi();
    let (pitch_sin, pitch_cos) = pitch.sin_cos_to_pi();
    // `dz >= yaw_cos h` and `h >= pitch_cos r` (h = |(dx, dz)|, r = |d|) compared squared, so
    // the common case (within both limits) waits on no square root: for a limit under a
    // quarter turn (`yaw_cos >= 0`) dz must be ahead and dz^2 >= yaw_cos^2 h^2; past it, dz
    // ahead or dz^2 <= yaw_cos^2 h^2; a pitch under a quarter turn has pitch_cos >= 0.
    let h2 = dx * dx + dz * dz;
    let r2 = h2 + dy * dy;
    let (ahead, dz2, yc2) = (dz.ge(F::splat(0.0)), dz * dz, yaw_cos * yaw_cos * h2);
    let narrow = yaw_cos.ge(F::splat(0.0));
    let yaw_within = narrow.and(ahead.and(dz2.ge(yc2))).or(narrow.not().and(ahead.or(dz2.le(yc2))));
    let yaw_ok = yaw.ge(F::splat(PI)).or(yaw_within);
    let pitch_ok = pitch.ge(F::splat(FRAC_PI_2)).or(h2.ge(pitch_cos * pitch_cos * r2));
    let clamped = side_length.ge(F::splat(EPSILON)).and(yaw_ok.and(pitch_ok).not());
    if !clamped.any() {
        return (turn, clamped);
    }
    let (h, r) = (h2.sqrt(), r2.sqrt());
    // The held direction's yaw (as a sine and cosine): its own within the limit (forward for a
    // direction straight along up), else the limit on its side.
    let flat = h.gt(zero);
    let (ih, ir) = (one / h, one / r);
    let (own_sin, own_cos) = (flat.select(dx * ih, zero), flat.select(dz * ih, one));
    let yaw_side = dx.ge(zero).select(yaw_sin, -yaw_sin);
    let (ys, yc) = (yaw_ok.select(own_sin, yaw_side), yaw_ok.select(own_cos, yaw_cos));
    let pitch_side = dy.ge(zero).select(pitch_sin, -pitch_sin);
    let (pc, ps) = (pitch_ok.select(h * ir, pitch_cos), pitch_ok.select(dy * ir, pitch_side));
    let held = (x.scale(ys) + z.scale(yc)).scale(pc) + y.scale(ps);
    let limited = arcs(d, one, held).normalize().mul(turn);
    (Q::select(clamped, limited, turn), clamped)
}
