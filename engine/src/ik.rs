//! Inverse kinematics jobs, in the style of the pose jobs (and of ozz-animation's `IKTwoBoneJob`,
//! whose inputs and outputs they share): each borrows model-space matrices of a composed pose,
//! writes local-space corrections through `&mut` outputs, has a `validate()` naming every input
//! at fault, and allocates nothing.
//!
//! - [`TwoBoneIkJob`]: a start, mid and end joint (hip, knee, ankle; shoulder, elbow, wrist)
//!   bent so that the end reaches a target, the mid joint bending about its own axis and pointing
//!   toward a pole, with a soft limit so the chain does not snap straight at full reach, a twist
//!   about the start-to-target line and a weight.
//! - [`AimJob`]: one joint turned so that an axis of it (a head's forward, from an offset such
//!   as the eyes) points at a target, its up axis toward a pole, within yaw and pitch limits
//!   (ozz's `IKAimJob`, plus the limits).
//!
//! A correction is a rotation to multiply onto a joint's local rotation (`local * correction`);
//! the caller recomposes the joints below it (a foot or hand takes its children along).
//!
//! Not here: choosing targets (a graph node, a socket, a game), composing poses ([`crate::pose`]).

use glam::{Mat4, Quat, Vec3};

/// An input of an IK job that cannot be used. Every variant names the job and the input.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum IkError {
    /// An input holds NaN or an infinity.
    #[error("{job}: input {input} is not finite")]
    NotFinite {
        /// Job name.
        job: &'static str,
        /// Which input.
        input: &'static str,
    },
    /// A ratio (weight, soften) is outside [0, 1].
    #[error("{job}: input {input} is {value}, outside [0, 1]")]
    OutOfRange {
        /// Job name.
        job: &'static str,
        /// Which input.
        input: &'static str,
        /// Its value.
        value: f32,
    },
    /// An axis has no direction.
    #[error("{job}: input {input} is a zero vector; it must give a direction")]
    ZeroAxis {
        /// Job name.
        job: &'static str,
        /// Which input.
        input: &'static str,
    },
}

const JOB: &str = "two-bone IK job";
const AIM: &str = "aim job";

/// Lengths under this (model units) are treated as zero: a bone that short, a target that close
/// to the start, a pole that parallel to the chain leave the part of the solution they would
/// decide unchanged instead of dividing by them.
const EPSILON: f32 = 1e-6;

/// Bends a chain of three joints so that the end joint reaches `target`.
///
/// The solution: the mid joint turns about `mid_axis` (its bend axis, in its own local space)
/// until the start-to-end distance is the target's distance (clamped to what the chain can
/// reach, and softened near full reach by `soften`), then the start joint turns so that the end
/// lies on the start-to-target line, then about that line so that the mid joint lies on the
/// side of `pole`, then by `twist` about it. Both corrections are blended from the identity by
/// `weight`. Degenerate inputs (a zero-length bone, a target on the start joint, a pole along the
/// chain) leave the part they would decide unchanged; the results stay finite.
#[derive(Debug)]
pub struct TwoBoneIkJob<'a> {
    /// `model_from_bone` of the start joint (hip, shoulder).
    pub start: &'a Mat4,
    /// `model_from_bone` of the mid joint (knee, elbow), a child of the start.
    pub mid: &'a Mat4,
    /// `model_from_bone` of the end joint (ankle, wrist), a child of the mid.
    pub end: &'a Mat4,
    /// Where the end joint should be, model space.
    pub target: Vec3,
    /// The direction the mid joint should point to, model space (a knee's forward).
    pub pole: Vec3,
    /// The mid joint's bend axis in its own local space (any length but zero).
    pub mid_axis: Vec3,
    /// How much of the correction applies: 0 leaves the chain, 1 applies all of it.
    pub weight: f32,
    /// Where softening starts, as a ratio of the chain's length: 1 reaches in a straight line
    /// (and snaps straight there), below 1 the end approaches full reach smoothly and never
    /// quite gets there.
    pub soften: f32,
    /// A rotation of the whole chain about the start-to-target line, radians.
    pub twist: f32,
    /// Out: the start joint's local correction.
    pub start_correction: &'a mut Quat,
    /// Out: the mid joint's local correction.
    pub mid_correction: &'a mut Quat,
    /// Out: whether the end reaches the target (the target within reach after softening, and a
    /// weight of 1).
    pub reached: &'a mut bool,
}

fn finite_in(job: &'static str, name: &'static str, ok: bool) -> Result<(), IkError> {
    if ok { Ok(()) } else { Err(IkError::NotFinite { job, input: name }) }
}

fn finite(name: &'static str, ok: bool) -> Result<(), IkError> {
    finite_in(JOB, name, ok)
}

fn ratio_in(job: &'static str, name: &'static str, v: f32) -> Result<(), IkError> {
    finite_in(job, name, v.is_finite())?;
    if (0.0..=1.0).contains(&v) { Ok(()) } else { Err(IkError::OutOfRange { job, input: name, value: v }) }
}

fn ratio(name: &'static str, v: f32) -> Result<(), IkError> {
    ratio_in(JOB, name, v)
}

fn axis_in(job: &'static str, name: &'static str, v: Vec3) -> Result<(), IkError> {
    finite_in(job, name, v.is_finite())?;
    if v.length_squared() < EPSILON * EPSILON { Err(IkError::ZeroAxis { job, input: name }) } else { Ok(()) }
}

/// A joint frame's rotation as its three unit axes (the matrix's columns with their scale
/// divided out, x flipped for a mirrored matrix so the frame stays a rotation), without
/// building a quaternion: enough to turn vectors into and out of the joint's frame.
#[derive(Clone, Copy)]
struct Frame {
    x: Vec3,
    y: Vec3,
    z: Vec3,
}

impl Frame {
    /// The frame of `m`, or the identity for a matrix with a zero axis.
    fn of(m: &Mat4) -> Frame {
        let (x, y, z) = (m.x_axis.truncate(), m.y_axis.truncate(), m.z_axis.truncate());
        let (sx, sy, sz) = (x.length_squared(), y.length_squared(), z.length_squared());
        let (lo, hi) = (sx.min(sy).min(sz), sx.max(sy).max(sz));
        let frame = if lo <= EPSILON * EPSILON {
            None
        } else {
            let flip = if x.cross(y).dot(z) < 0.0 { -1.0 } else { 1.0 };
            // A uniform scale (the usual case) is divided out with one square root.
            let (ix, iy, iz) = if hi - lo <= 1e-6 * hi {
                let i = 1.0 / sx.sqrt();
                (i, i, i)
            } else {
                (1.0 / sx.sqrt(), 1.0 / sy.sqrt(), 1.0 / sz.sqrt())
            };
            Some(Frame { x: x * (flip * ix), y: y * iy, z: z * iz })
        };
        frame.filter(|f| f.x.is_finite() && f.y.is_finite() && f.z.is_finite()).unwrap_or(Frame {
            x: Vec3::X,
            y: Vec3::Y,
            z: Vec3::Z,
        })
    }

    /// `v` (joint space) in model space.
    fn out_of(&self, v: Vec3) -> Vec3 {
        self.x * v.x + self.y * v.y + self.z * v.z
    }

    /// `v` (model space) in joint space.
    fn inward(&self, v: Vec3) -> Vec3 {
        Vec3::new(self.x.dot(v), self.y.dot(v), self.z.dot(v))
    }

    /// A model-space rotation `q` as seen in the joint's frame (`R⁻¹·q·R`): its axis taken in.
    fn conjugate(&self, q: Quat) -> Quat {
        let v = self.inward(Vec3::new(q.x, q.y, q.z));
        Quat::from_xyzw(v.x, v.y, v.z, q.w)
    }
}

/// The cosine and sine of half the angle whose cosine and sine are `c` and `s` (a unit pair, to
/// rounding), without trigonometry: from `(1 + c, s)`, or from `(s, 1 - c)` near half a turn,
/// where the first loses its precision. `(1, 0)` for a degenerate pair.
fn half_angle(c: f32, s: f32) -> (f32, f32) {
    let (w, k) = if c >= 0.0 { (1.0 + c, s) } else { (s, 1.0 - c) };
    let n = (w * w + k * k).sqrt();
    if n > EPSILON && n.is_finite() { (w / n, k / n) } else { (1.0, 0.0) }
}

/// The rotation about the unit `axis` by half angle `(w, k)` ([`half_angle`]).
fn about(axis: Vec3, (w, k): (f32, f32)) -> Quat {
    Quat::from_xyzw(axis.x * k, axis.y * k, axis.z * k, w)
}

/// The rotation about the unit `axis` by the angle whose cosine and sine are `c` and `s`.
fn axis_cos_sin(axis: Vec3, c: f32, s: f32) -> Quat {
    about(axis, half_angle(c, s))
}

/// `correction` scaled by `weight` from the identity (the whole of it at 1, none at 0).
fn weighted(correction: Quat, weight: f32) -> Quat {
    if weight >= 1.0 {
        correction
    } else if weight <= 0.0 {
        Quat::IDENTITY
    } else {
        Quat::IDENTITY.slerp(correction, weight).normalize()
    }
}

impl TwoBoneIkJob<'_> {
    /// Checks the inputs; every failure is named.
    pub fn validate(&self) -> Result<(), IkError> {
        finite("start", self.start.is_finite())?;
        finite("mid", self.mid.is_finite())?;
        finite("end", self.end.is_finite())?;
        finite("target", self.target.is_finite())?;
        finite("pole", self.pole.is_finite())?;
        axis_in(JOB, "mid_axis", self.mid_axis)?;
        ratio("weight", self.weight)?;
        ratio("soften", self.soften)?;
        finite("twist", self.twist.is_finite())
    }

    /// Validates and writes the corrections and `reached`. On error the outputs are untouched.
    pub fn run(self) -> Result<(), IkError> {
        self.validate()?;
        let s = self.start.w_axis.truncate();
        let m = self.mid.w_axis.truncate();
        let e = self.end.w_axis.truncate();
        let (upper, lower) = (m.distance(s), e.distance(m));
        let to_target = self.target - s;
        let distance = to_target.length();

        // The distance the end should be at: softened near full reach, then what the chain can
        // span.
        let full = upper + lower;
        let soft = soften_distance(distance, full, self.soften);
        let wanted = soft.clamp((upper - lower).abs(), full);

        // Mid joint: the bend that puts the end at `wanted` from the start (as a cosine and
        // sine: the solve needs no trigonometry).
        let mid_frame = Frame::of(self.mid);
        let bend_axis = mid_frame.out_of(self.mid_axis).normalize();
        let (c, sn) = if upper > EPSILON && lower > EPSILON {
            mid_turn(s - m, e - m, bend_axis, wanted)
        } else {
            (1.0, 0.0)
        };
        let half = half_angle(c, sn);
        let mid_turn = about(bend_axis, half);
        let end_bent = m + mid_turn * (e - m);

        // Start joint: the end onto the start-to-target line, the mid joint toward the pole,
        // then the twist, all about the start joint.
        let mut turn = Quat::IDENTITY;
        if distance > EPSILON && end_bent.distance(s) > EPSILON {
            let line = to_target / distance;
            turn = Quat::from_rotation_arc((end_bent - s).normalize(), line);
            let mid_now = turn * (m - s);
            let mid_off = mid_now - line * mid_now.dot(line);
            let pole_off = self.pole - line * self.pole.dot(line);
            let (lm, lp) = (mid_off.length(), pole_off.length());
            if lm > EPSILON && lp > EPSILON {
                let (a, b) = (mid_off / lm, pole_off / lp);
                turn = axis_cos_sin(line, a.dot(b), a.cross(b).dot(line)) * turn;
            }
            if self.twist != 0.0 {
                turn = Quat::from_axis_angle(line, self.twist) * turn;
            }
        }
        let end_solved = s + turn * (end_bent - s);

        let start_local = Frame::of(self.start).conjugate(turn);
        let mid_local = about(self.mid_axis.normalize(), half);
        // Finite inputs can still meet float limits (a target 1e30 away): never hand out NaN.
        let (start_local, mid_local) = if start_local.is_finite() && mid_local.is_finite() {
            (start_local, mid_local)
        } else {
            (Quat::IDENTITY, Quat::IDENTITY)
        };
        *self.start_correction = weighted(start_local, self.weight);
        *self.mid_correction = weighted(mid_local, self.weight);
        *self.reached = self.weight >= 1.0 && end_solved.distance(self.target) <= 1e-4 * full.max(EPSILON);
        Ok(())
    }
}

/// Solves a chain as a plant or a retarget wants it: full weight, no softening or twist, the mid
/// joint kept pointing where it points now (its offset from the start-to-end line; `fallback`
/// for a straight chain). The start and mid corrections, or `None` when the job refuses its
/// inputs (see [`TwoBoneIkJob::validate`]).
pub fn solve_keeping_bend(
    [start, mid, end]: [&Mat4; 3],
    target: Vec3,
    mid_axis: Vec3,
    fallback: Vec3,
) -> Option<(Quat, Quat)> {
    let (s, m, e) = (start.w_axis.truncate(), mid.w_axis.truncate(), end.w_axis.truncate());
    let line = e - s;
    let along = if line.length_squared() > 0.0 { (m - s).dot(line) / line.length_squared() } else { 0.0 };
    let pole = (m - (s + line * along)).try_normalize().unwrap_or(fallback);
    let (mut start_correction, mut mid_correction, mut reached) = (Quat::IDENTITY, Quat::IDENTITY, false);
    TwoBoneIkJob {
        start,
        mid,
        end,
        target,
        pole,
        mid_axis,
        weight: 1.0,
        soften: 1.0,
        twist: 0.0,
        start_correction: &mut start_correction,
        mid_correction: &mut mid_correction,
        reached: &mut reached,
    }
    .run()
    .ok()?;
    Some((start_correction, mid_correction))
}

/// The turn of the lower bone `to_end` about `axis` (unit), as its cosine and sine, that puts
/// the start joint, at `to_start` from the mid joint, `wanted` from the end. Exact for any axis:
/// the parts of both bones along the axis do not turn, so only their parts across it (`u`, `v`)
/// open or close, by the law of cosines in that plane; the bend keeps its side (a knee does not
/// flip). An axis along a bone leaves the joint as it is; a distance the axis cannot give gets
/// the nearest.
fn mid_turn(to_start: Vec3, to_end: Vec3, axis: Vec3, wanted: f32) -> (f32, f32) {
    let u = to_start - axis * to_start.dot(axis);
    let v = to_end - axis * to_end.dot(axis);
    let (lu, lv) = (u.length(), v.length());
    if lu <= EPSILON || lv <= EPSILON {
        return (1.0, 0.0);
    }
    // |to_start - R to_end|^2 = |w|^2 + |v|^2 - 2 |u| |v| cos(theta), w = to_start - (to_end along the axis).
    let w = to_start - axis * to_end.dot(axis);
    let goal_cos = ((w.length_squared() + lv * lv - wanted * wanted) / (2.0 * lu * lv)).clamp(-1.0, 1.0);
    // The angle between u and v now, and the goal on the same side.
    let inv = 1.0 / (lu * lv);
    let (now_cos, now_sin) = (u.dot(v) * inv, u.cross(v).dot(axis) * inv);
    let goal_sin = (1.0 - goal_cos * goal_cos).max(0.0).sqrt();
    let goal_sin = if now_sin < 0.0 { -goal_sin } else { goal_sin };
    // cos and sin of goal - now.
    (goal_cos * now_cos + goal_sin * now_sin, goal_sin * now_cos - goal_cos * now_sin)
}

/// The distance a target `distance` away is reached at, for a chain of length `full` softened
/// from `soften * full` on: unchanged below that, then approaching `full` smoothly (never past
/// it), with the same slope where the softening starts.
fn soften_distance(distance: f32, full: f32, soften: f32) -> f32 {
    let start = full * soften;
    let span = full - start;
    if distance <= start || span <= EPSILON {
        return distance;
    }
    start + span * (1.0 - (-(distance - start) / span).exp())
}

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
    /// Checks the inputs; every failure is named.
    pub fn validate(&self) -> Result<(), IkError> {
        finite_in(AIM, "joint", self.joint.is_finite())?;
        finite_in(AIM, "target", self.target.is_finite())?;
        axis_in(AIM, "forward", self.forward)?;
        finite_in(AIM, "offset", self.offset.is_finite())?;
        axis_in(AIM, "up", self.up)?;
        finite_in(AIM, "pole", self.pole.is_finite())?;
        finite_in(AIM, "twist", self.twist.is_finite())?;
        for (name, v) in [("limits.yaw", self.limits.yaw), ("limits.pitch", self.limits.pitch)] {
            finite_in(AIM, name, v.is_finite())?;
            if !(0.0..=std::f32::consts::PI).contains(&v) {
                return Err(IkError::OutOfRange { job: AIM, input: name, value: v });
            }
        }
        ratio_in(AIM, "weight", self.weight)
    }

    /// Validates and writes the correction and `reached`. On error the outputs are untouched.
    pub fn run(self) -> Result<(), IkError> {
        self.validate()?;
        let forward = self.forward.normalize();
        let up = self.up.normalize();
        let frame = Frame::of(self.joint);
        // The target in the joint's frame (translation and rotation; scale divided out).
        let local = frame.inward(self.target - self.joint.w_axis.truncate());
        let distance = local.length();
        let mut reached = distance > EPSILON;
        // The point of the rest ray (offset + t * forward, t >= 0) that should land on the target:
        // the one as far from the joint as the target is.
        let along = self.offset.dot(forward);
        // sqrt(distance^2 - across^2), as distance * sqrt(1 - across^2 / distance^2) so that a
        // far target (1e30) does not overflow the square.
        let across = (self.offset.length_squared() - along * along).max(0.0);
        let q = if distance > 0.0 { 1.0 - (across / distance) / distance } else { -1.0 };
        let root = distance * q.max(0.0).sqrt();
        let aimed = if q >= 0.0 && -along + root >= 0.0 {
            self.offset + forward * (-along + root)
        } else {
            reached = false;
            forward
        };
        let mut turn = Quat::IDENTITY;
        if distance > EPSILON && aimed.length() > EPSILON {
            let line = local / distance;
            turn = Quat::from_rotation_arc(aimed.normalize(), line);
            let pole = frame.inward(self.pole);
            let up_now = turn * up;
            let up_off = up_now - line * up_now.dot(line);
            let pole_off = pole - line * pole.dot(line);
            let (lu, lp) = (up_off.length(), pole_off.length());
            if lu > EPSILON && lp > EPSILON {
                let (a, b) = (up_off / lu, pole_off / lp);
                turn = axis_cos_sin(line, a.dot(b), a.cross(b).dot(line)) * turn;
            }
            if self.twist != 0.0 {
                turn = Quat::from_axis_angle(line, self.twist) * turn;
            }
        }
        let (limited, clamped) = limit(turn, forward, up, self.limits);
        let limited = if limited.is_finite() { limited } else { Quat::IDENTITY };
        *self.correction = weighted(limited, self.weight);
        *self.reached = reached && !clamped && self.weight >= 1.0;
        Ok(())
    }
}

/// `turn` with the direction it gives `forward` held within `limits` of `forward` (yaw about
/// `up`, pitch toward it), and whether it had to be.
fn limit(turn: Quat, forward: Vec3, up: Vec3, limits: AimLimits) -> (Quat, bool) {
    // A frame at rest: x to the side, y up (made square to forward), z forward.
    let z = forward;
    let x = up.cross(z);
    if x.length() < EPSILON {
        return (turn, false); // up along forward: no frame to measure yaw in
    }
    let x = x.normalize();
    let y = z.cross(x);
    let d = turn * forward;
    let (dx, dy, dz) = (d.dot(x), d.dot(y), d.dot(z));
    // Within both limits (the common case) is read from cosines, without an arctangent: yaw
    // within its limit when the direction's part in the x-z plane is that near +z, pitch within
    // its limit when the direction is that near the plane.
    let h = (dx * dx + dz * dz).sqrt();
    let yaw_ok = limits.yaw >= std::f32::consts::PI || dz >= limits.yaw.cos() * h;
    let pitch_ok =
        limits.pitch >= std::f32::consts::FRAC_PI_2 || h >= limits.pitch.cos() * (h * h + dy * dy).sqrt();
    if yaw_ok && pitch_ok {
        return (turn, false);
    }
    let yaw = dx.atan2(dz);
    let pitch = dy.atan2(h);
    let (y2, p2) = (yaw.clamp(-limits.yaw, limits.yaw), pitch.clamp(-limits.pitch, limits.pitch));
    if y2 == yaw && p2 == pitch {
        return (turn, false);
    }
    let held = (x * y2.sin() + z * y2.cos()) * p2.cos() + y * p2.sin();
    (Quat::from_rotation_arc(d, held) * turn, true)
}
