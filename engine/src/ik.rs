//! Inverse kinematics jobs, in the style of the pose jobs (and of ozz-animation's `IKTwoBoneJob`,
//! whose inputs and outputs they share): each borrows model-space matrices of a composed pose,
//! writes local-space corrections through `&mut` outputs, has a `validate()` naming every input
//! at fault, and allocates nothing.
//!
//! - [`TwoBoneIkJob`]: a start, mid and end joint (hip, knee, ankle; shoulder, elbow, wrist)
//!   bent so that the end reaches a target, the mid joint bending about its own axis and pointing
//!   toward a pole, with a soft limit so the chain does not snap straight at full reach, a twist
//!   about the start-to-target line and a weight.
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

fn finite(name: &'static str, ok: bool) -> Result<(), IkError> {
    if ok { Ok(()) } else { Err(IkError::NotFinite { job: JOB, input: name }) }
}

fn ratio(name: &'static str, v: f32) -> Result<(), IkError> {
    finite(name, v.is_finite())?;
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(IkError::OutOfRange { job: JOB, input: name, value: v })
    }
}

/// The rotation part of a `model_from_bone` matrix (its scale divided out), or the identity
/// for a matrix with a zero axis.
fn rotation_of(m: &Mat4) -> Quat {
    let (scale, rotation, _) = m.to_scale_rotation_translation();
    if scale.abs().min_element() > EPSILON && rotation.is_finite() {
        rotation.normalize()
    } else {
        Quat::IDENTITY
    }
}

/// The signed angle from `a` to `b` about `axis` (all three non-zero; `a` and `b` at right
/// angles to `axis`).
fn signed_angle(a: Vec3, b: Vec3, axis: Vec3) -> f32 {
    let angle = a.angle_between(b);
    if a.cross(b).dot(axis) < 0.0 { -angle } else { angle }
}

impl TwoBoneIkJob<'_> {
    /// Checks the inputs; every failure is named.
    pub fn validate(&self) -> Result<(), IkError> {
        finite("start", self.start.is_finite())?;
        finite("mid", self.mid.is_finite())?;
        finite("end", self.end.is_finite())?;
        finite("target", self.target.is_finite())?;
        finite("pole", self.pole.is_finite())?;
        finite("mid_axis", self.mid_axis.is_finite())?;
        if self.mid_axis.length_squared() < EPSILON * EPSILON {
            return Err(IkError::ZeroAxis { job: JOB, input: "mid_axis" });
        }
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

        // Mid joint: the bend that puts the end at `wanted` from the start.
        let mid_rotation = rotation_of(self.mid);
        let bend_axis = (mid_rotation * self.mid_axis).normalize();
        let mut mid_angle = 0.0;
        if upper > EPSILON && lower > EPSILON {
            let (to_start, to_end) = (s - m, e - m);
            let now = to_start.angle_between(to_end);
            let cos =
                ((upper * upper + lower * lower - wanted * wanted) / (2.0 * upper * lower)).clamp(-1.0, 1.0);
            let delta = cos.acos() - now;
            // Turning the lower bone about `to_start x to_end` opens the joint.
            let opens = to_start.cross(to_end).dot(bend_axis) >= 0.0;
            mid_angle = if opens { delta } else { -delta };
        }
        let mid_turn = Quat::from_axis_angle(bend_axis, mid_angle);
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
            if mid_off.length() > EPSILON && pole_off.length() > EPSILON {
                turn = Quat::from_axis_angle(line, signed_angle(mid_off, pole_off, line)) * turn;
            }
            turn = Quat::from_axis_angle(line, self.twist) * turn;
        }
        let end_solved = s + turn * (end_bent - s);

        let start_rotation = rotation_of(self.start);
        let start_local = (start_rotation.inverse() * turn * start_rotation).normalize();
        let mid_local = Quat::from_axis_angle(self.mid_axis.normalize(), mid_angle);
        *self.start_correction = Quat::IDENTITY.slerp(start_local, self.weight).normalize();
        *self.mid_correction = Quat::IDENTITY.slerp(mid_local, self.weight).normalize();
        *self.reached = self.weight >= 1.0 && end_solved.distance(self.target) <= 1e-4 * full.max(EPSILON);
        Ok(())
    }
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
