//! The two-bone solve: [`TwoBoneIkJob`] for one chain, [`TwoBoneIkChainsJob`] for many, both
//! over the one lane-wise solve ([`solve_two_bone`]).

use glam::{Mat4, Quat, Vec3};

use super::lanes::{F, Q, V3};
use super::{
    EPSILON, IkError, abouts, arcs, axis_in, directions_out_of, finite_in, frames, half_angles, in_groups,
    nearer, ratio_in, toward_pole, twisted, unit, usable, validate_each, weighted,
};

const JOB: &str = "two-bone IK job";
const JOBS: &str = "two-bone IK chains job";

fn finite(name: &'static str, ok: bool) -> Result<(), IkError> {
    finite_in(JOB, name, ok)
}

fn ratio(name: &'static str, v: f32) -> Result<(), IkError> {
    ratio_in(JOB, name, v)
}

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

impl TwoBoneIkJob<'_> {
    /// This job's inputs as one chain of [`TwoBoneIkChainsJob`].
    fn chain(&self) -> TwoBoneIkChain<'_> {
        TwoBoneIkChain {
            start: self.start,
            mid: self.mid,
            end: self.end,
            target: self.target,
            pole: self.pole,
            mid_axis: self.mid_axis,
            weight: self.weight,
            soften: self.soften,
            twist: self.twist,
        }
    }

    /// Checks the inputs; every failure is named.
    pub fn validate(&self) -> Result<(), IkError> {
        self.chain().validate()
    }

    /// Validates and writes the corrections and `reached`. On error the outputs are untouched.
    pub fn run(self) -> Result<(), IkError> {
        self.validate()?;
        let mut solution = [TwoBoneIkSolution::default()];
        solve_group::<1>([&self.chain()], &mut solution);
        *self.start_correction = solution[0].start_correction;
        *self.mid_correction = solution[0].mid_correction;
        *self.reached = solution[0].reached;
        Ok(())
    }
}

/// One chain of a [`TwoBoneIkChainsJob`]: the inputs of a [`TwoBoneIkJob`], without its outputs.
#[derive(Clone, Copy, Debug)]
pub struct TwoBoneIkChain<'a> {
    /// `model_from_bone` of the start joint (hip, shoulder).
    pub start: &'a Mat4,
    /// `model_from_bone` of the mid joint (knee, elbow), a child of the start.
    pub mid: &'a Mat4,
    /// `model_from_bone` of the end joint (ankle, wrist), a child of the mid.
    pub end: &'a Mat4,
    /// Where the end joint should be, model space.
    pub target: Vec3,
    /// The direction the mid joint should point to, model space.
    pub pole: Vec3,
    /// The mid joint's bend axis in its own local space (any length but zero).
    pub mid_axis: Vec3,
    /// How much of the correction applies, `[0, 1]`.
    pub weight: f32,
    /// Where softening starts, as a ratio of the chain's length, `[0, 1]`.
    pub soften: f32,
    /// A rotation of the whole chain about the start-to-target line, radians.
    pub twist: f32,
}

impl TwoBoneIkChain<'_> {
    /// [`TwoBoneIkChain::validate`]'s usual case in one pass and without a branch: every number
    /// finite, the axis long enough, the ratios in range. `false` says only that the checks that
    /// name the failure must run (a sum of finite numbers can overflow).
    #[inline(always)]
    fn plain(&self) -> bool {
        let numbers = (self.start.x_axis + self.start.y_axis + self.start.z_axis + self.start.w_axis)
            + (self.mid.x_axis + self.mid.y_axis + self.mid.z_axis + self.mid.w_axis)
            + (self.end.x_axis + self.end.y_axis + self.end.z_axis + self.end.w_axis);
        // A finite number times zero is zero; NaN or an infinity gives NaN.
        (numbers * 0.0).cmpeq(glam::Vec4::ZERO).all() & self.plain_but_matrices()
    }

    /// [`TwoBoneIkChain::plain`] without the matrices.
    #[inline(always)]
    fn plain_but_matrices(&self) -> bool {
        let v = self.target + self.pole + self.mid_axis;
        let numbers = v.x + v.y + v.z + self.twist;
        (numbers * 0.0 == 0.0)
            & (self.mid_axis.length_squared() >= EPSILON * EPSILON)
            & (self.weight >= 0.0)
            & (self.weight <= 1.0)
            & (self.soften >= 0.0)
            & (self.soften <= 1.0)
    }

    /// Checks the inputs; every failure is named (see [`TwoBoneIkJob::validate`]).
    pub fn validate(&self) -> Result<(), IkError> {
        // The usual case in one pass; otherwise the checks below name the first failure.
        if self.plain() {
            return Ok(());
        }
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
}

/// Whether every chain passes [`TwoBoneIkChain::plain`] (and so [`TwoBoneIkChain::validate`]),
/// checked without a branch per chain; `false` says only that the checks that name the failure
/// must run. Checking chain by chain with a branch each was a tenth of a sixty-four-chain job.
fn all_plain(chains: &[TwoBoneIkChain]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::avx2() {
        // SAFETY: `simd::avx2()` says this CPU has AVX and AVX2.
        return unsafe { all_plain_avx2(chains) };
    }
    all_plain_portable(chains)
}

/// [`all_plain`] at the `portable` level.
pub(super) fn all_plain_portable(chains: &[TwoBoneIkChain]) -> bool {
    chains.iter().fold(true, |ok, c| ok & c.plain())
}

/// [`all_plain`] with each chain's three matrices summed eight floats at a time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2")]
pub(super) fn all_plain_avx2(chains: &[TwoBoneIkChain]) -> bool {
    use std::arch::x86_64::*;
    let zero = _mm256_setzero_ps();
    let mut nan = zero;
    let mut ok = true;
    for c in chains {
        // SAFETY: a `Mat4` is sixteen `f32`: two unaligned loads of eight read it.
        let halves = |m: &Mat4| unsafe {
            let p = m as *const Mat4 as *const f32;
            _mm256_add_ps(_mm256_loadu_ps(p), _mm256_loadu_ps(p.add(8)))
        };
        let sum = _mm256_add_ps(_mm256_add_ps(halves(c.start), halves(c.mid)), halves(c.end));
        // A finite number times zero is zero; NaN or an infinity gives NaN, which stays.
        nan = _mm256_add_ps(nan, _mm256_mul_ps(sum, zero));
        ok &= c.plain_but_matrices();
    }
    ok && _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_EQ_OQ>(nan, zero)) == 0xff
}

/// What a two-bone solve gives one chain: the outputs of a [`TwoBoneIkJob`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoBoneIkSolution {
    /// The start joint's local correction.
    pub start_correction: Quat,
    /// The mid joint's local correction.
    pub mid_correction: Quat,
    /// Whether the end reaches the target.
    pub reached: bool,
}

impl Default for TwoBoneIkSolution {
    /// No correction, not reached.
    fn default() -> Self {
        TwoBoneIkSolution { start_correction: Quat::IDENTITY, mid_correction: Quat::IDENTITY, reached: false }
    }
}

/// Solves many two-bone chains at once (a character's legs and arms, a crowd's): each chain
/// gets exactly what a [`TwoBoneIkJob`] on its own inputs gives, bit for bit, but sixteen chains
/// are solved side by side, one in each lane of the same instructions, which is where the speed
/// per chain comes from (one chain's solve is a long run of dependent square roots and
/// divisions that leaves the CPU's vector units idle).
#[derive(Debug)]
pub struct TwoBoneIkChainsJob<'a> {
    /// The chains' inputs.
    pub chains: &'a [TwoBoneIkChain<'a>],
    /// Out: one solution per chain, in the chains' order.
    pub solutions: &'a mut [TwoBoneIkSolution],
}

impl TwoBoneIkChainsJob<'_> {
    /// Checks the inputs: as many solutions as chains, and every chain's inputs (the first
    /// failure named with its chain's index).
    pub fn validate(&self) -> Result<(), IkError> {
        if self.chains.len() == self.solutions.len() && all_plain(self.chains) {
            return Ok(());
        }
        validate_each(JOBS, "chain", self.chains, self.solutions.len(), TwoBoneIkChain::validate)
    }

    /// Validates and writes every solution. On error the outputs are untouched.
    pub fn run(self) -> Result<(), IkError> {
        self.validate()?;
        in_groups(self.chains, self.solutions, solve_group::<4>, solve_sixteen);
        Ok(())
    }
}

/// `N` chains solved side by side, compiled for AVX2 at the `avx2` SIMD level and above (the
/// AVX-512 build of the same code measured slower on an AMD Zen 4, and for one or four lanes on
/// an Intel Xeon; groups of sixteen on Intel take it: [`solve_sixteen`]), for the target's
/// baseline otherwise: the same operations in the same order either way (no fused multiply-add:
/// Rust never contracts), so the same bits.
fn solve_group<const N: usize>(group: [&TwoBoneIkChain; N], out: &mut [TwoBoneIkSolution]) {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::avx2() {
        // SAFETY: `simd::avx2()` says this CPU has AVX and AVX2.
        return unsafe { solve_avx2(group, out) };
    }
    solve_two_bone(group, out)
}

/// Sixteen chains side by side: [`solve_group`], or on an Intel CPU at the `avx512` level the
/// AVX-512 build ([`crate::simd::intel_avx512`]): the same bits either way.
fn solve_sixteen(group: [&TwoBoneIkChain; 16], out: &mut [TwoBoneIkSolution]) {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::intel_avx512() {
        // SAFETY: `intel_avx512()` says the level is avx512, so the CPU has AVX-512F, AVX2 and AVX.
        return unsafe { solve_avx512(group, out) };
    }
    solve_group(group, out)
}

/// [`solve_two_bone`] compiled for AVX-512F (sixteen lanes to a register).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2,avx512f")]
pub(super) fn solve_avx512<const N: usize>(group: [&TwoBoneIkChain; N], out: &mut [TwoBoneIkSolution]) {
    solve_two_bone(group, out)
}

/// [`solve_two_bone`] compiled for AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2")]
pub(super) fn solve_avx2<const N: usize>(group: [&TwoBoneIkChain; N], out: &mut [TwoBoneIkSolution]) {
    solve_two_bone(group, out)
}

/// The turns of the lower bones `to_end` about `axis` (unit), as cosines and sines, that put
/// the start joints, at `to_start` from the mid joints, `wanted` from the ends. Exact for any
/// axis: the parts of both bones along the axis do not turn, so only their parts across it (`u`,
/// `v`) open or close, by the law of cosines in that plane; the bend keeps its side (a knee does
/// not flip). An axis along a bone leaves the joint as it is (`(1, 0)`); a distance the axis
/// cannot give gets the nearest.
#[inline(always)]
fn mid_turns<const N: usize>(to_start: V3<N>, to_end: V3<N>, axis: V3<N>, wanted: F<N>) -> (F<N>, F<N>) {
    let u = to_start - axis.scale(to_start.dot(axis));
    let v = to_end - axis.scale(to_end.dot(axis));
    let (lu2, lv2) = (u.length_squared(), v.length_squared());
    // |to_start - R to_end|^2 = |w|^2 + |v|^2 - 2 |u| |v| cos(theta), w = to_start - (to_end along the axis).
    let w = to_start - axis.scale(to_end.dot(axis));
    let one = F::splat(1.0);
    let inv = one / (lu2 * lv2).sqrt(); // 1 / (|u| |v|)
    let goal_cos = ((w.length_squared() + lv2 - wanted * wanted) * (inv * 0.5)).clamp(-one, one);
    // The angle between u and v now, and the goal on the same side.
    let (now_cos, now_sin) = (u.dot(v) * inv, u.cross(v).dot(axis) * inv);
    let goal_sin = (one - goal_cos * goal_cos).max(F::splat(0.0)).sqrt();
    let goal_sin = now_sin.lt(F::splat(0.0)).select(-goal_sin, goal_sin);
    // cos and sin of goal - now.
    let (c, s) = (goal_cos * now_cos + goal_sin * now_sin, goal_sin * now_cos - goal_cos * now_sin);
    let tiny = F::splat(EPSILON * EPSILON);
    let ok = lu2.gt(tiny).and(lv2.gt(tiny)).and(inv.finite());
    (ok.select(c, one), ok.select(s, F::splat(0.0)))
}

/// The distances targets `distance` away are reached at, for chains of length `full` softened
/// from `soften * full` on: unchanged below that, then approaching `full` smoothly (never past
/// it), with the same slope where the softening starts.
#[inline(always)]
fn soften_distances<const N: usize>(distance: F<N>, full: F<N>, soften: F<N>) -> F<N> {
    let start = full * soften;
    let span = full - start;
    let plain = distance.le(start).or(span.le(F::splat(EPSILON)));
    let x = -(distance - start) / span;
    let fade = x.exp_to_zero();
    plain.select(distance, start + span * (F::splat(1.0) - fade))
}

/// Solves `N` chains side by side (validated inputs) into the first `out.len()` (at most `N`) of
/// `out`; see [`TwoBoneIkJob`] for the solution. Each lane's result depends on that lane's inputs
/// only, and is the same whatever `N` is.
#[inline(always)]
pub(super) fn solve_two_bone<const N: usize>(c: [&TwoBoneIkChain; N], out: &mut [TwoBoneIkSolution]) {
    let (zero, one, eps) = (F::splat(0.0), F::<N>::splat(1.0), F::splat(EPSILON));
    let s = V3::from_fn(|i| c[i].start.w_axis.truncate());
    let m = V3::from_fn(|i| c[i].mid.w_axis.truncate());
    let e = V3::from_fn(|i| c[i].end.w_axis.truncate());
    let target = V3::from_fn(|i| c[i].target);
    let mid_axis = V3::from_fn(|i| c[i].mid_axis);
    let (upper, lower) = ((m - s).length(), (e - m).length());
    // A target past `FAR` is taken at `FAR` along its line: a chain that cannot reach it only
    // turns toward it (and the softening has long reached full extension there).
    let to_target = target - s;
    let to_target = to_target.scale(nearer(to_target));
    let distance = to_target.length();

    // The distance the end should be at: softened near full reach, then what the chain can span.
    let full = upper + lower;
    let soft = soften_distances(distance, full, F::from_fn(|i| c[i].soften));
    let wanted = soft.clamp((upper - lower).abs(), full);

    // Mid joint: the bend that puts the end at `wanted` from the start (as a cosine and sine:
    // the solve needs no trigonometry).
    let bend_axis = directions_out_of(std::array::from_fn(|i| c[i].mid), mid_axis);
    let (cos, sin) = mid_turns(s - m, e - m, bend_axis, wanted);
    let bones = upper.gt(eps).and(lower.gt(eps));
    let half = half_angles(bones.select(cos, one), bones.select(sin, zero));
    let end_bent = m + abouts(bend_axis, half).rotate(e - m);

    // Start joint: the end onto the start-to-target line, the mid joint toward the pole, then
    // the twist, all about the start joint.
    let line = to_target.scale(one / distance);
    let reach_now = end_bent - s;
    let reach_length = reach_now.length();
    // (The mid joint turned by the normalized arc, not by `Q::sandwich` of the raw one: that
    // measured 13% slower sixteen lanes at a time and no faster for one chain.)
    let turn = arcs(reach_now, reach_length, line).normalize();
    let turn = toward_pole(turn, line, turn.rotate(m - s), V3::from_fn(|i| c[i].pole));
    let turn = twisted(turn, line, F::from_fn(|i| c[i].twist));
    let solvable = distance.gt(eps).and(reach_length.gt(eps));
    let turn = Q::select(solvable, turn, Q::identity());
    let end_solved = s + turn.rotate(end_bent - s);

    let start_local = frames(std::array::from_fn(|i| c[i].start)).conjugate(turn);
    let mid_local = abouts(unit(mid_axis), half);
    // Finite inputs can still meet float limits (a target 1e30 away): never hand out NaN.
    let fine = usable(start_local).and(usable(mid_local));
    let (start_local, mid_local) =
        (Q::select(fine, start_local, Q::identity()), Q::select(fine, mid_local, Q::identity()));
    let miss = (end_solved - target).length_squared();
    let reach = full.max(eps) * 1e-4;
    let reach = reach * reach;
    let (starts, mids, near) = (start_local.quats(), mid_local.quats(), miss.le(reach));
    for (i, o) in out.iter_mut().enumerate().take(N) {
        *o = TwoBoneIkSolution {
            start_correction: weighted(starts[i], c[i].weight),
            mid_correction: weighted(mids[i], c[i].weight),
            reached: c[i].weight >= 1.0 && near.lane(i),
        };
    }
}

/// A chain as a plant or a retarget solves it: full weight, no softening or twist, the mid
/// joint kept pointing where it points now (its offset from the start-to-end line; `fallback`
/// for a straight chain).
pub fn keeping_bend<'a>(
    [start, mid, end]: [&'a Mat4; 3],
    target: Vec3,
    mid_axis: Vec3,
    fallback: Vec3,
) -> TwoBoneIkChain<'a> {
    let (s, m, e) = (start.w_axis.truncate(), mid.w_axis.truncate(), end.w_axis.truncate());
    let line = e - s;
    let along = if line.length_squared() > 0.0 { (m - s).dot(line) / line.length_squared() } else { 0.0 };
    let pole = (m - (s + line * along)).try_normalize().unwrap_or(fallback);
    TwoBoneIkChain { start, mid, end, target, pole, mid_axis, weight: 1.0, soften: 1.0, twist: 0.0 }
}

/// Solves one [`keeping_bend`] chain: the start and mid corrections, or `None` when the job
/// refuses its inputs (see [`TwoBoneIkJob::validate`]).
pub fn solve_keeping_bend(
    joints: [&Mat4; 3],
    target: Vec3,
    mid_axis: Vec3,
    fallback: Vec3,
) -> Option<(Quat, Quat)> {
    let chain = keeping_bend(joints, target, mid_axis, fallback);
    chain.validate().ok()?;
    let mut solution = [TwoBoneIkSolution::default()];
    solve_group::<1>([&chain], &mut solution);
    Some((solution[0].start_correction, solution[0].mid_correction))
}
