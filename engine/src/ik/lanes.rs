//! Lane arithmetic for the IK solves: `N` independent problems side by side, one `f32` of each
//! in a lane, so that one solve written once runs one chain (`N = 1`, the single-chain jobs) or
//! four or sixteen (the many-chain jobs, which the compiler turns into SSE or AVX instructions).
//!
//! Every operation is the same IEEE operation in every lane, in the same order whatever `N` is
//! (no fused multiply-add, no reassociation), so a chain solved among fifteen others gets the very
//! bits it gets alone: the many-chain jobs are tested against the single-chain ones bit for bit.
//! Branches of the scalar solve become [`M::select`]: both sides are computed in every lane and
//! the lane's condition picks one, so a side that would divide by zero in a lane that does not
//! take it may hold NaN there, never in the result. A branch that only some inputs take (a
//! non-uniform scale, a half turn, a twist) is computed only when some lane takes it, the same
//! value either way.
//!
//! The transcendental functions the solves need on their common paths are polynomials here
//! ([`F::exp_to_zero`], [`F::sin_cos_to_pi`]), pure arithmetic like the rest; the rare ones (a
//! twist's sine and cosine, a fractional weight's slerp) are the standard library's and glam's,
//! called lane by lane, the same functions either way.
//!
//! Not here: any IK logic.

use std::ops::{Add, Div, Mul, Neg, Sub};

use glam::{Quat, Vec3};

/// `N` floats, one per lane.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct F<const N: usize>(pub [f32; N]);

/// `N` conditions, one per lane, each all ones (holds) or all zeros, as the CPU's vector
/// comparisons write them, so that comparing, combining and selecting stay vector instructions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct M<const N: usize>([u32; N]);

/// `[f(0), .., f(N - 1)]`, written into a zeroed array (which the compiler keeps in registers;
/// `std::array::from_fn`'s partly initialised array and drop guard measured 20% of a one-lane
/// solve).
#[inline(always)]
fn each<T: Copy + Default, const N: usize>(f: impl Fn(usize) -> T) -> [T; N] {
    let mut out = [T::default(); N];
    for (i, o) in out.iter_mut().enumerate() {
        *o = f(i);
    }
    out
}

/// `v` as it is; for one lane on x86-64, passed through an empty `asm!` statement that the
/// compiler cannot look into. The one-lane solves are scalar code over `x, y, z` (and `w`)
/// triples, which LLVM's SLP vectorizer otherwise packs into SSE registers operation by
/// operation, with a shuffle or a register copy around each (one `AimJob::run` held 152
/// `shufps` and 317 `movaps`). A product whose value the compiler cannot see is no seed for
/// that packing: one aim 15% faster on a Zen 3 (115 against 135 ns), one two-bone chain 1.5%
/// slower (BENCHMARKS.md, stop 60). Wider groups (`N > 1`) compile as before; the values are
/// the same bits either way.
#[inline(always)]
fn opaque<const N: usize>(v: F<N>) -> F<N> {
    #[cfg(target_arch = "x86_64")]
    if N == 1 {
        let mut x = v.0[0];
        // SAFETY: an empty statement that reads and writes one register (no memory, no stack,
        // no flags).
        unsafe {
            std::arch::asm!("/* {0} */", inout(xmm_reg) x, options(pure, nomem, nostack, preserves_flags));
        }
        let mut out = v;
        out.0[0] = x;
        return out;
    }
    v
}

macro_rules! lanewise {
    ($trait:ident, $f:ident, $op:tt, $wrap:path) => {
        impl<const N: usize> $trait for F<N> {
            type Output = F<N>;
            #[inline(always)]
            fn $f(self, o: F<N>) -> F<N> {
                $wrap(F(each(|i| self.0[i] $op o.0[i])))
            }
        }
        impl<const N: usize> $trait<f32> for F<N> {
            type Output = F<N>;
            #[inline(always)]
            fn $f(self, o: f32) -> F<N> {
                $wrap(F(each(|i| self.0[i] $op o)))
            }
        }
    };
}
lanewise!(Add, add, +, std::convert::identity);
lanewise!(Sub, sub, -, std::convert::identity);
lanewise!(Mul, mul, *, opaque);
lanewise!(Div, div, /, std::convert::identity);

impl<const N: usize> Neg for F<N> {
    type Output = F<N>;
    #[inline(always)]
    fn neg(self) -> F<N> {
        F(self.0.map(|v| -v))
    }
}

macro_rules! compare {
    ($name:ident, $op:tt) => {
        #[doc = concat!("Lane by lane `self ", stringify!($op), " o`.")]
        #[inline(always)]
        pub(crate) fn $name(self, o: F<N>) -> M<N> {
            M(each(|i| if self.0[i] $op o.0[i] { u32::MAX } else { 0 }))
        }
    };
}

impl<const N: usize> F<N> {
    /// Every lane `v`.
    #[inline(always)]
    pub(crate) fn splat(v: f32) -> F<N> {
        F([v; N])
    }
    /// Lane `i` from `f(i)`.
    #[inline(always)]
    pub(crate) fn from_fn(f: impl Fn(usize) -> f32) -> F<N> {
        F(each(f))
    }
    /// Square root, lane by lane.
    #[inline(always)]
    pub(crate) fn sqrt(self) -> F<N> {
        F(each(|i| self.0[i].sqrt()))
    }
    /// Absolute value, lane by lane.
    #[inline(always)]
    pub(crate) fn abs(self) -> F<N> {
        F(each(|i| self.0[i].abs()))
    }
    /// The smaller, lane by lane: `self` where it is less than `o`, else `o` (so `o` where
    /// either is NaN: the `minps` rule, one instruction where `f32::min` takes several).
    #[inline(always)]
    pub(crate) fn min(self, o: F<N>) -> F<N> {
        F(each(|i| if self.0[i] < o.0[i] { self.0[i] } else { o.0[i] }))
    }
    /// The larger, lane by lane: `self` where it is greater than `o`, else `o` (`maxps`).
    #[inline(always)]
    pub(crate) fn max(self, o: F<N>) -> F<N> {
        F(each(|i| if self.0[i] > o.0[i] { self.0[i] } else { o.0[i] }))
    }
    /// `self` clamped to `[lo, hi]` lane by lane, as `max(lo).min(hi)` (a NaN lane gives `lo`).
    #[inline(always)]
    pub(crate) fn clamp(self, lo: F<N>, hi: F<N>) -> F<N> {
        self.max(lo).min(hi)
    }
    /// Whether each lane is neither NaN nor infinite.
    #[inline(always)]
    pub(crate) fn finite(self) -> M<N> {
        M(each(|i| if self.0[i].is_finite() { u32::MAX } else { 0 }))
    }
    /// The sine and cosine of each lane, an angle in `[0, PI]`, from a polynomial (within 2e-7
    /// of the true values): pure arithmetic, so the same bits in every lane and at every `N`.
    #[inline(always)]
    pub(crate) fn sin_cos_to_pi(self) -> (F<N>, F<N>) {
        use std::f32::consts::{FRAC_PI_2, PI};
        // sin on [0, PI/2] by its Taylor series to the 11th power (error under 6e-8 there).
        let sin_q = |t: F<N>| {
            let t2 = t * t;
            let p = F::splat(-1.0 / 39_916_800.0);
            let p = p * t2 + 1.0 / 362_880.0;
            let p = p * t2 - 1.0 / 5_040.0;
            let p = p * t2 + 1.0 / 120.0;
            let p = p * t2 - 1.0 / 6.0;
            let p = p * t2 + 1.0;
            p * t
        };
        // sin(x) = sin(PI - x); cos(x) = sin(PI/2 - x), negative past PI/2.
        let folded = self.gt(F::splat(FRAC_PI_2)).select(F::splat(PI) - self, self);
        let quarter = F::splat(FRAC_PI_2) - self;
        (sin_q(folded), sin_q(quarter))
    }
    /// `e` to the power of each lane, a number at most 0 (a lane below -87 gives `e^-87`), from
    /// a range reduction by `ln 2` and a polynomial (within 3e-7 relative): pure arithmetic, so
    /// the same bits in every lane, at every `N` and SIMD level, without a call per lane.
    #[inline(always)]
    pub(crate) fn exp_to_zero(self) -> F<N> {
        use std::f32::consts::LOG2_E;
        let x = self.max(F::splat(-87.0)).min(F::splat(0.0));
        // k = round(x / ln 2) by the 1.5 * 2^23 trick (exact for |k| < 2^22), r = x - k ln 2 in
        // two parts so r keeps its precision.
        let magic = 12_582_912.0;
        let k = (x * LOG2_E + magic) - magic;
        let r = x - k * 0.693_145_75 - k * 1.428_606_8e-6;
        let p = F::splat(1.0 / 720.0);
        let p = p * r + 1.0 / 120.0;
        let p = p * r + 1.0 / 24.0;
        let p = p * r + 1.0 / 6.0;
        let p = p * r + 0.5;
        let p = p * r + 1.0;
        let p = p * r + 1.0;
        // 2^k from its exponent bits (k is in [-126, 0]).
        let two_k = F(each(|i| f32::from_bits(((k.0[i] as i32 + 127) as u32) << 23)));
        p * two_k
    }
    compare!(lt, <);
    compare!(le, <=);
    compare!(gt, >);
    compare!(ge, >=);
    compare!(ne, !=);
}

impl<const N: usize> M<N> {
    /// Lane `i`'s condition.
    #[inline(always)]
    pub(crate) fn lane(self, i: usize) -> bool {
        self.0[i] != 0
    }
    /// Lane by lane: `a` where the condition holds, else `b` (a NaN on the side not taken never
    /// reaches the result).
    #[inline(always)]
    pub(crate) fn select(self, a: F<N>, b: F<N>) -> F<N> {
        F(each(|i| f32::from_bits((a.0[i].to_bits() & self.0[i]) | (b.0[i].to_bits() & !self.0[i]))))
    }
    /// Both conditions.
    #[inline(always)]
    pub(crate) fn and(self, o: M<N>) -> M<N> {
        M(each(|i| self.0[i] & o.0[i]))
    }
    /// Either condition.
    #[inline(always)]
    pub(crate) fn or(self, o: M<N>) -> M<N> {
        M(each(|i| self.0[i] | o.0[i]))
    }
    /// The opposite condition.
    #[inline(always)]
    pub(crate) fn not(self) -> M<N> {
        M(each(|i| !self.0[i]))
    }
    /// Whether every lane holds.
    #[inline(always)]
    pub(crate) fn all(self) -> bool {
        self.0.iter().fold(u32::MAX, |a, &b| a & b) != 0
    }
    /// Whether any lane holds.
    #[inline(always)]
    pub(crate) fn any(self) -> bool {
        self.0.iter().fold(0, |a, &b| a | b) != 0
    }
}

/// `N` 3-vectors, one per lane (structure of arrays).
#[derive(Clone, Copy, Debug)]
pub(crate) struct V3<const N: usize> {
    pub x: F<N>,
    pub y: F<N>,
    pub z: F<N>,
}

impl<const N: usize> V3<N> {
    /// Every lane `v`.
    #[inline(always)]
    pub(crate) fn splat(v: Vec3) -> V3<N> {
        V3 { x: F::splat(v.x), y: F::splat(v.y), z: F::splat(v.z) }
    }
    /// Lane `i` from `f(i)`.
    #[inline(always)]
    pub(crate) fn from_fn(f: impl Fn(usize) -> Vec3) -> V3<N> {
        // Three passes over the lanes (`f` is a field read): each component loaded straight into
        // its lane, with no array of vectors in between.
        V3 { x: F::from_fn(|i| f(i).x), y: F::from_fn(|i| f(i).y), z: F::from_fn(|i| f(i).z) }
    }
    /// Lane `i`.
    #[cfg(test)]
    pub(crate) fn lane(self, i: usize) -> Vec3 {
        Vec3::new(self.x.0[i], self.y.0[i], self.z.0[i])
    }
    /// `x·x' + y·y' + z·z'`, summed in that order.
    #[inline(always)]
    pub(crate) fn dot(self, o: V3<N>) -> F<N> {
        self.x * o.x + self.y * o.y + self.z * o.z
    }
    /// The cross product.
    #[inline(always)]
    pub(crate) fn cross(self, o: V3<N>) -> V3<N> {
        V3 { x: self.y * o.z - self.z * o.y, y: self.z * o.x - self.x * o.z, z: self.x * o.y - self.y * o.x }
    }
    /// The squared length.
    #[inline(always)]
    pub(crate) fn length_squared(self) -> F<N> {
        self.dot(self)
    }
    /// The length.
    #[inline(always)]
    pub(crate) fn length(self) -> F<N> {
        self.dot(self).sqrt()
    }
    /// Each component times `s`.
    #[inline(always)]
    pub(crate) fn scale(self, s: F<N>) -> V3<N> {
        V3 { x: self.x * s, y: self.y * s, z: self.z * s }
    }
    /// Lane by lane: `a` where the condition holds, else `b`.
    #[inline(always)]
    pub(crate) fn select(m: M<N>, a: V3<N>, b: V3<N>) -> V3<N> {
        V3 { x: m.select(a.x, b.x), y: m.select(a.y, b.y), z: m.select(a.z, b.z) }
    }
    /// Whether all three components of each lane are finite.
    #[inline(always)]
    pub(crate) fn finite(self) -> M<N> {
        self.x.finite().and(self.y.finite()).and(self.z.finite())
    }
}

impl<const N: usize> Add for V3<N> {
    type Output = V3<N>;
    #[inline(always)]
    fn add(self, o: V3<N>) -> V3<N> {
        V3 { x: self.x + o.x, y: self.y + o.y, z: self.z + o.z }
    }
}

impl<const N: usize> Sub for V3<N> {
    type Output = V3<N>;
    #[inline(always)]
    fn sub(self, o: V3<N>) -> V3<N> {
        V3 { x: self.x - o.x, y: self.y - o.y, z: self.z - o.z }
    }
}

/// `N` quaternions, one per lane (not necessarily unit until normalized).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Q<const N: usize> {
    pub x: F<N>,
    pub y: F<N>,
    pub z: F<N>,
    pub w: F<N>,
}

impl<const N: usize> Q<N> {
    /// The identity in every lane.
    #[inline(always)]
    pub(crate) fn identity() -> Q<N> {
        Q { x: F::splat(0.0), y: F::splat(0.0), z: F::splat(0.0), w: F::splat(1.0) }
    }
    /// A vector part and a scalar part.
    #[inline(always)]
    pub(crate) fn new(v: V3<N>, w: F<N>) -> Q<N> {
        Q { x: v.x, y: v.y, z: v.z, w }
    }
    /// Lane `i` from `f(i)`.
    #[cfg(test)]
    pub(crate) fn from_fn(f: impl Fn(usize) -> Quat) -> Q<N> {
        Q {
            x: F::from_fn(|i| f(i).x),
            y: F::from_fn(|i| f(i).y),
            z: F::from_fn(|i| f(i).z),
            w: F::from_fn(|i| f(i).w),
        }
    }
    /// Lane `i`.
    #[inline(always)]
    pub(crate) fn lane(self, i: usize) -> Quat {
        Quat::from_xyzw(self.x.0[i], self.y.0[i], self.z.0[i], self.w.0[i])
    }
    /// Every lane as a quaternion, taken out all at once before a loop over the lanes uses
    /// them: read lane by lane inside such a loop ([`Q::lane`]), the sixteen-lane solves copied
    /// the whole quaternion to the stack again for every lane (13% of a sixteen-chain solve).
    #[inline(always)]
    pub(crate) fn quats(self) -> [Quat; N] {
        each(|i| self.lane(i))
    }
    /// The vector part.
    #[inline(always)]
    pub(crate) fn xyz(self) -> V3<N> {
        V3 { x: self.x, y: self.y, z: self.z }
    }
    /// The Hamilton product `self · o` (`o` applied first).
    #[inline(always)]
    pub(crate) fn mul(self, o: Q<N>) -> Q<N> {
        let (a, b) = (self, o);
        Q {
            x: a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
            y: a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
            z: a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
            w: a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
        }
    }
    /// `v` turned by this (unit) quaternion: `v + w·t + q×t` with `t = 2·(q×v)`.
    #[inline(always)]
    pub(crate) fn rotate(self, v: V3<N>) -> V3<N> {
        let q = self.xyz();
        let c = q.cross(v);
        let t = c + c;
        v + t.scale(self.w) + q.cross(t)
    }
    /// `q v q*`: `v` turned by this quaternion's rotation and scaled by its squared length, so
    /// a quaternion not yet normalized gives the turned direction without waiting for its
    /// normalization.
    #[inline(always)]
    pub(crate) fn sandwich(self, v: V3<N>) -> V3<N> {
        let q = self.xyz();
        let (qq, qv) = (q.dot(q), q.dot(v));
        v.scale(self.w * self.w - qq) + q.scale(qv * 2.0) + q.cross(v).scale(self.w * 2.0)
    }
    /// Divided by its length.
    #[inline(always)]
    pub(crate) fn normalize(self) -> Q<N> {
        let r =
            F::splat(1.0) / (self.x * self.x + self.y * self.y + self.z * self.z + self.w * self.w).sqrt();
        Q { x: self.x * r, y: self.y * r, z: self.z * r, w: self.w * r }
    }
    /// Lane by lane: `a` where the condition holds, else `b`.
    #[inline(always)]
    pub(crate) fn select(m: M<N>, a: Q<N>, b: Q<N>) -> Q<N> {
        Q { x: m.select(a.x, b.x), y: m.select(a.y, b.y), z: m.select(a.z, b.z), w: m.select(a.w, b.w) }
    }
    /// Whether all four components of each lane are finite.
    #[inline(always)]
    pub(crate) fn finite(self) -> M<N> {
        self.x.finite().and(self.y.finite()).and(self.z.finite()).and(self.w.finite())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lane_products_match_glam_within_rounding_and_each_lane_is_independent() {
        let qs = [
            Quat::from_rotation_x(0.3),
            Quat::from_axis_angle(Vec3::new(1.0, 2.0, -0.5).normalize(), 2.5),
            Quat::from_rotation_z(-1.2),
            Quat::IDENTITY,
        ];
        let vs = [Vec3::X, Vec3::new(0.2, -3.0, 1.5), Vec3::new(-1.0, 0.5, 0.25), Vec3::new(7.0, 8.0, 9.0)];
        let q4 = Q::<4>::from_fn(|i| qs[i]);
        let v4 = V3::<4>::from_fn(|i| vs[i]);
        let turned = q4.rotate(v4);
        let product = q4.mul(Q::from_fn(|i| qs[(i + 1) % 4]));
        for i in 0..4 {
            assert!(turned.lane(i).abs_diff_eq(qs[i] * vs[i], 1e-5), "lane {i}");
            assert!(product.lane(i).abs_diff_eq(qs[i] * qs[(i + 1) % 4], 1e-6), "lane {i}");
            // Twice the length: four times the turned vector.
            let doubled = Q::new(q4.xyz().scale(F::splat(2.0)), q4.w * 2.0).sandwich(v4);
            assert!((doubled.lane(i) / 4.0).abs_diff_eq(qs[i] * vs[i], 1e-5), "lane {i}");
            // One lane alone gets the same bits as among four.
            let one = Q::<1>::from_fn(|_| qs[i]).rotate(V3::from_fn(|_| vs[i]));
            assert_eq!(one.lane(0).to_array(), turned.lane(i).to_array(), "lane {i}");
        }
    }

    #[test]
    fn the_sine_and_cosine_polynomial_is_within_2e_7_over_zero_to_pi() {
        let mut worst = 0.0f32;
        for k in 0..=100_000 {
            let x = std::f32::consts::PI * k as f32 / 100_000.0;
            let (s, c) = F::<1>([x]).sin_cos_to_pi();
            let (ws, wc) = (x as f64).sin_cos();
            worst = worst.max((s.0[0] as f64 - ws).abs() as f32).max((c.0[0] as f64 - wc).abs() as f32);
        }
        assert!(worst <= 2e-7, "worst error {worst}");
    }

    #[test]
    fn the_exponential_is_within_3e_7_relative_from_minus_87_to_zero() {
        let mut worst = 0.0f64;
        for k in 0..=200_000 {
            let x = -87.0 * k as f32 / 200_000.0;
            let got = F::<1>([x]).exp_to_zero().0[0] as f64;
            let want = (x as f64).exp();
            worst = worst.max((got - want).abs() / want);
        }
        assert!(worst <= 3e-7, "worst relative error {worst}");
        assert_eq!(F::<1>([-1000.0]).exp_to_zero().0[0], F::<1>([-87.0]).exp_to_zero().0[0]);
    }

    #[test]
    fn select_takes_the_side_of_each_lanes_condition_even_over_nan() {
        let a = F([1.0, f32::NAN, 3.0, 4.0]);
        let b = F([-1.0, -2.0, f32::NAN, -4.0]);
        let m = a.gt(F::splat(2.0)).or(a.ne(a));
        let s = m.not().select(b, a);
        assert_eq!(s.0[0], -1.0);
        assert!(s.0[1].is_nan());
        assert_eq!(s.0[2], 3.0);
        assert_eq!(s.0[3], 4.0);
        assert!(m.any());
        assert!(!F::<4>::splat(1.0).lt(F::splat(0.0)).any());
        assert!(F::<4>::splat(1.0).gt(F::splat(0.0)).all());
        assert!(!m.all());
    }
}
