//! Inverse kinematics jobs, in the style of the pose jobs (and of ozz-animation's `IKTwoBoneJob`
//! and `IKAimJob`, whose inputs and outputs they share): each borrows model-space matrices of a
//! composed pose, writes local-space corrections through `&mut` outputs, has a `validate()`
//! naming every input at fault, and allocates nothing.
//!
//! - [`TwoBoneIkJob`]: a start, mid and end joint (hip, knee, ankle; shoulder, elbow, wrist)
//!   bent so that the end reaches a target, the mid joint bending about its own axis and pointing
//!   toward a pole, with a soft limit so the chain does not snap straight at full reach, a twist
//!   about the start-to-target line and a weight. [`TwoBoneIkChainsJob`] solves many chains at
//!   once (a character's limbs, a crowd's), each to the same bits as alone.
//! - [`AimJob`]: one joint turned so that an axis of it (a head's forward, from an offset such
//!   as the eyes) points at a target, its up axis toward a pole, within yaw and pitch limits
//!   (ozz's `IKAimJob`, plus the limits). [`AimJointsJob`] aims many joints at once.
//!
//! Both solves are written once over lanes (`lanes`): a single job is one lane, a many-chain job
//! sixteen side by side (four for a group of four or fewer), compiled for AVX2 where the CPU has
//! it (two-bone groups of sixteen for AVX-512 on Intel CPUs, [`crate::simd::intel_avx512`]);
//! lanes never mix, so a chain's result does not depend on what it is solved beside.
//!
//! A correction is a rotation to multiply onto a joint's local rotation (`local * correction`);
//! the caller recomposes the joints below it (a foot or hand takes its children along).
//!
//! Not here: choosing targets (a graph node, a socket, a game), composing poses ([`crate::pose`]).

use glam::{Mat4, Quat, Vec3};

mod aim;
mod lanes;
#[cfg(test)]
mod tests;
mod two_bone;

pub use aim::{AimJob, AimJoint, AimJointsJob, AimLimits, AimSolution};
pub use two_bone::{
    TwoBoneIkChain, TwoBoneIkChainsJob, TwoBoneIkJob, TwoBoneIkSolution, keeping_bend, solve_keeping_bend,
};

use lanes::{F, M, Q, V3};

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
    /// A ratio (weight, soften) is outside `[0, 1]`, an aim limit outside `[0, PI]`.
    #[error("{job}: input {input} is {value}, outside [0, {most}]")]
    OutOfRange {
        /// Job name.
        job: &'static str,
        /// Which input.
        input: &'static str,
        /// Its value.
        value: f32,
        /// The largest value it may take (the least is 0).
        most: f32,
    },
    /// A many-chain job has a different number of outputs than inputs.
    #[error("{job}: {inputs} inputs but {outputs} outputs")]
    Count {
        /// Job name.
        job: &'static str,
        /// How many inputs (chains, joints).
        inputs: usize,
        /// How many outputs.
        outputs: usize,
    },
    /// One input of a many-chain job is bad.
    #[error("{what} {index}: {error}")]
    Item {
        /// What the job takes many of: `chain`, `joint`.
        what: &'static str,
        /// Its index in the job's inputs.
        index: usize,
        /// What is wrong with it.
        #[source]
        error: Box<IkError>,
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

/// Lengths under this (model units) are treated as zero: a bone that short, a target that close
/// to the start, a pole that parallel to the chain leave the part of the solution they would
/// decide unchanged instead of dividing by them.
const EPSILON: f32 = 1e-6;

fn finite_in(job: &'static str, name: &'static str, ok: bool) -> Result<(), IkError> {
    if ok { Ok(()) } else { Err(IkError::NotFinite { job, input: name }) }
}

fn ratio_in(job: &'static str, name: &'static str, v: f32) -> Result<(), IkError> {
    finite_in(job, name, v.is_finite())?;
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(IkError::OutOfRange { job, input: name, value: v, most: 1.0 })
    }
}

fn axis_in(job: &'static str, name: &'static str, v: Vec3) -> Result<(), IkError> {
    finite_in(job, name, v.is_finite())?;
    if v.length_squared() < EPSILON * EPSILON { Err(IkError::ZeroAxis { job, input: name }) } else { Ok(()) }
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

/// Joint frames' rotations as their three unit axes, a lane each ([`frames`]): enough to turn
/// vectors into the joints' frames without building quaternions.
#[derive(Clone, Copy)]
struct Frames<const N: usize> {
    x: V3<N>,
    y: V3<N>,
    z: V3<N>,
}

/// Joint matrices' axes as they stand (scaled), with what [`frames`] and [`directions_out_of`]
/// both read from them: the axes' squared lengths, the smallest, whether the matrix mirrors and
/// whether its scale is uniform.
struct Axes<const N: usize> {
    x: V3<N>,
    y: V3<N>,
    z: V3<N>,
    /// Squared lengths of the three axes.
    squares: (F<N>, F<N>, F<N>),
    /// The smallest of them: a matrix whose smallest is not above `EPSILON^2` has no frame.
    lo: F<N>,
    /// -1 for a mirroring matrix (x flipped to keep the frame a rotation), else 1.
    flip: F<N>,
    /// Whether the three lengths agree to 1e-6.
    uniform: M<N>,
}

/// The axes of `ms`.
#[inline(always)]
fn axes<const N: usize>(ms: [&Mat4; N]) -> Axes<N> {
    let x = V3::from_fn(|i| ms[i].x_axis.truncate());
    let y = V3::from_fn(|i| ms[i].y_axis.truncate());
    let z = V3::from_fn(|i| ms[i].z_axis.truncate());
    let (sx, sy, sz) = (x.length_squared(), y.length_squared(), z.length_squared());
    let (lo, hi) = (sx.min(sy).min(sz), sx.max(sy).max(sz));
    let flip = x.cross(y).dot(z).lt(F::splat(0.0)).select(F::splat(-1.0), F::splat(1.0));
    Axes { x, y, z, squares: (sx, sy, sz), lo, flip, uniform: (hi - lo).le(hi * 1e-6) }
}

impl<const N: usize> Axes<N> {
    /// Whether a lane has a frame ([`Axes::lo`]).
    #[inline(always)]
    fn framed(&self) -> M<N> {
        self.lo.gt(F::splat(EPSILON * EPSILON))
    }

    /// One over each axis's length; a uniform scale (the usual case) with one square root, the
    /// other two only where some lane's scale is not uniform (the same values either way: a
    /// uniform lane takes the first).
    #[inline(always)]
    fn inverse_lengths(&self) -> (F<N>, F<N>, F<N>) {
        let one = F::splat(1.0);
        let (sx, sy, sz) = self.squares;
        let ix = one / sx.sqrt();
        if self.uniform.all() {
            (ix, ix, ix)
        } else {
            (ix, self.uniform.select(ix, one / sy.sqrt()), self.uniform.select(ix, one / sz.sqrt()))
        }
    }
}

/// The frames of `ms` (the matrices' columns with their scale divided out, x flipped for a
/// mirrored matrix so the frame stays a rotation), the identity for a matrix with a zero axis.
#[inline(always)]
fn frames<const N: usize>(ms: [&Mat4; N]) -> Frames<N> {
    let a = axes(ms);
    let (ix, iy, iz) = a.inverse_lengths();
    let f = Frames { x: a.x.scale(a.flip * ix), y: a.y.scale(iy), z: a.z.scale(iz) };
    let ok = a.framed().and(f.x.finite()).and(f.y.finite()).and(f.z.finite());
    Frames {
        x: V3::select(ok, f.x, V3::splat(Vec3::X)),
        y: V3::select(ok, f.y, V3::splat(Vec3::Y)),
        z: V3::select(ok, f.z, V3::splat(Vec3::Z)),
    }
}

/// `v` (joint space, not zero) as a unit direction in model space: `v` through [`frames`]' axes
/// made unit, without the frames' square root and division on the way for a uniformly scaled
/// joint (the usual case: its scale divides out when the result is made unit). The direction of
/// `v` itself for a joint [`frames`] reads as the identity.
#[inline(always)]
fn directions_out_of<const N: usize>(ms: [&Mat4; N], v: V3<N>) -> V3<N> {
    let a = axes(ms);
    let along_x = v.x * a.flip;
    let (ax, ay, az) = if a.uniform.all() {
        (along_x, v.y, v.z)
    } else {
        let (ix, iy, iz) = a.inverse_lengths();
        let u = a.uniform;
        (u.select(along_x, along_x * ix), u.select(v.y, v.y * iy), u.select(v.z, v.z * iz))
    };
    let d = unit(a.x.scale(ax) + a.y.scale(ay) + a.z.scale(az));
    V3::select(a.framed().and(d.finite()), d, unit(v))
}

impl<const N: usize> Frames<N> {
    /// `v` (model space) in joint space.
    #[inline(always)]
    fn inward(&self, v: V3<N>) -> V3<N> {
        V3 { x: self.x.dot(v), y: self.y.dot(v), z: self.z.dot(v) }
    }

    /// A model-space rotation `q` as seen in the joints' frames (`R⁻¹·q·R`): its axis taken in.
    #[inline(always)]
    fn conjugate(&self, q: Q<N>) -> Q<N> {
        Q::new(self.inward(q.xyz()), q.w)
    }
}

/// Whether each lane of `q` is a correction to hand out: finite and of unit length (within
/// 1%). Finite inputs can meet float limits part way (a target so far that its squared distance
/// overflows turns the look line to zero), which can leave a finite quaternion of no length:
/// such a lane gets the identity instead, never a quaternion whose normalization is NaN.
#[inline(always)]
fn usable<const N: usize>(q: Q<N>) -> M<N> {
    let len2 = q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w;
    q.finite().and((len2 - 1.0).abs().lt(F::splat(1e-2)))
}

/// How far a target may be (in its largest coordinate from the joint) before the solves take it
/// nearer along the same line: squares of distances up to this stay far inside `f32`, and a
/// chain or an aim that cannot reach it only needs its direction.
const FAR: f32 = 1e15;

/// The factor that brings `v` within [`FAR`] in its largest coordinate (a target across the
/// world, 1e30 away, or one whose squared distance overflows): exactly 1 for a lane already
/// within it, so that every ordinary input keeps its bits.
#[inline(always)]
fn nearer<const N: usize>(v: V3<N>) -> F<N> {
    let largest = v.x.abs().max(v.y.abs()).max(v.z.abs());
    largest.gt(F::splat(FAR)).select(F::splat(FAR) / largest, F::splat(1.0))
}

/// `v` divided by its length (NaN in a lane of length zero: callers select around it).
#[inline(always)]
fn unit<const N: usize>(v: V3<N>) -> V3<N> {
    v.scale(F::splat(1.0) / v.length())
}

/// The cosine and sine of half the angle whose cosine and sine are `c` and `s` (a unit pair, to
/// rounding), without trigonometry: from `(1 + c, s)`, or from `(s, 1 - c)` near half a turn,
/// where the first loses its precision. `(1, 0)` for a degenerate pair.
#[inline(always)]
fn half_angles<const N: usize>(c: F<N>, s: F<N>) -> (F<N>, F<N>) {
    let one = F::splat(1.0);
    let front = c.ge(F::splat(0.0));
    let (w, k) = (front.select(one + c, s), front.select(s, one - c));
    let n = (w * w + k * k).sqrt();
    let ok = n.gt(F::splat(EPSILON)).and(n.finite());
    let r = one / n;
    (ok.select(w * r, one), ok.select(k * r, F::splat(0.0)))
}

/// The rotations about the unit `axis` by half angles `(w, k)` ([`half_angles`]).
#[inline(always)]
fn abouts<const N: usize>(axis: V3<N>, (w, k): (F<N>, F<N>)) -> Q<N> {
    Q::new(axis.scale(k), w)
}

/// The shortest rotations taking `from` (of length `from_length`, not zero) onto unit `to`, not
/// yet normalized (half a turn about a vector square to `from` when they are opposite; the
/// identity when they agree; both unit). `from` need not be unit: the quaternion
/// `(from × to, |from| + from · to)` is normalized by the caller anyway, and a caller that only
/// needs a direction turned by it can use [`Q::sandwich`] without waiting for that.
#[inline(always)]
fn arcs<const N: usize>(from: V3<N>, from_length: F<N>, to: V3<N>) -> Q<N> {
    let d = from.dot(to);
    let general = Q::new(from.cross(to), from_length + d);
    let eps = 2.0 * f32::EPSILON;
    let opposed = d.lt(from_length * (-1.0 + eps));
    let turned = if opposed.any() {
        // Any vector square to `from`: built from its two larger components.
        let wide = from.x.abs().gt(from.y.abs());
        let zero = F::splat(0.0);
        let side = V3 {
            x: wide.select(-from.z, zero),
            y: wide.select(zero, from.z),
            z: wide.select(from.x, -from.y),
        };
        Q::select(opposed, Q::new(unit(side), zero), general)
    } else {
        general
    };
    Q::select(d.gt(from_length * (1.0 - eps)), Q::identity(), turned)
}

/// `turn` followed by the turns about unit `line` that take `lean` (a direction already turned
/// by `turn`, of any length) toward `pole`, in the plane square to the line: the knee toward its
/// pole, the head's up toward its. The half angle comes from the two directions' dot and cross products
/// scaled by `|lean| |pole|` ([`half_angles`]' rule without dividing by that first: the
/// normalization divides it out). Lanes where either has no part across the line, or whose
/// numbers overflow, keep `turn`.
#[inline(always)]
fn toward_pole<const N: usize>(turn: Q<N>, line: V3<N>, lean: V3<N>, pole: V3<N>) -> Q<N> {
    let lean_off = lean - line.scale(lean.dot(line));
    let pole_off = pole - line.scale(pole.dot(line));
    let (l2, p2) = (lean_off.length_squared(), pole_off.length_squared());
    let ab = (l2 * p2).sqrt(); // |lean_off| |pole_off|
    let (d, c) = (lean_off.dot(pole_off), lean_off.cross(pole_off).dot(line));
    // (1 + cos, sin) or, past a quarter turn, (sin, 1 - cos), each times |lean_off| |pole_off|.
    let zero = F::splat(0.0);
    let front = d.ge(zero);
    let (w, k) = (front.select(ab + d, c), front.select(c, ab - d));
    let r = F::splat(1.0) / (w * w + k * k).sqrt();
    let swing = abouts(line, (w * r, k * r)).mul(turn);
    let tiny = F::splat(EPSILON * EPSILON);
    Q::select(l2.gt(tiny).and(p2.gt(tiny)).and(r.finite()).and(r.gt(zero)), swing, turn)
}

/// `turn` followed by `twist` radians about unit `line` (lanes with no twist keep `turn`; the
/// sine and cosine are the standard library's, lane by lane, only where some lane twists).
#[inline(always)]
fn twisted<const N: usize>(turn: Q<N>, line: V3<N>, twist: F<N>) -> Q<N> {
    let twisting = twist.ne(F::splat(0.0));
    if !twisting.any() {
        return turn;
    }
    let half = F::<N>::from_fn(|i| if twisting.lane(i) { twist.0[i] * 0.5 } else { 0.0 });
    let (sin, cos) = (F::from_fn(|i| half.0[i].sin()), F::from_fn(|i| half.0[i].cos()));
    Q::select(twisting, abouts(line, (cos, sin)).mul(turn), turn)
}

/// A many-input job's checks: as many outputs as inputs, then each input's own `check`, the first
/// failure named with `what` and its index.
fn validate_each<T>(
    job: &'static str,
    what: &'static str,
    inputs: &[T],
    outputs: usize,
    check: impl Fn(&T) -> Result<(), IkError>,
) -> Result<(), IkError> {
    if inputs.len() != outputs {
        return Err(IkError::Count { job, inputs: inputs.len(), outputs });
    }
    for (index, input) in inputs.iter().enumerate() {
        check(input).map_err(|error| IkError::Item { what, index, error: Box::new(error) })?;
    }
    Ok(())
}

/// Runs `solve` over `inputs` and `outputs` (the same length) in groups: sixteen lanes at a time,
/// a last group of four or fewer in four lanes; a group's spare lanes repeat its last input.
fn in_groups<T, O>(
    inputs: &[T],
    outputs: &mut [O],
    mut four: impl FnMut([&T; 4], &mut [O]),
    mut sixteen: impl FnMut([&T; 16], &mut [O]),
) {
    for (group, out) in inputs.chunks(16).zip(outputs.chunks_mut(16)) {
        let last = group.len() - 1;
        if group.len() <= 4 {
            four(std::array::from_fn(|i| &group[i.min(last)]), out);
        } else {
            sixteen(std::array::from_fn(|i| &group[i.min(last)]), out);
        }
    }
}
