//! Small math pieces shared by the animation core: the local [`Transform`] (TRS), an accurate
//! polynomial quaternion slerp for the sampling hot loop, and matrix decomposition helpers.
//!
//! Everything here is plain `glam`; this module deliberately holds no animation logic.

use glam::{Mat3, Mat4, Quat, Vec3, Vec4};

/// A local transform: translation, rotation, scale (applied scale, then rotation, then translation).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Transform {
    /// Translation.
    pub translation: Vec3,
    /// Rotation (unit quaternion).
    pub rotation: Quat,
    /// Per-axis scale.
    pub scale: Vec3,
}

impl Default for Transform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Transform {
    /// The identity transform.
    pub const IDENTITY: Transform =
        Transform { translation: Vec3::ZERO, rotation: Quat::IDENTITY, scale: Vec3::ONE };

    /// A pure translation.
    pub fn from_translation(t: Vec3) -> Self {
        Self { translation: t, ..Self::IDENTITY }
    }

    /// A pure rotation.
    pub fn from_rotation(r: Quat) -> Self {
        Self { rotation: r, ..Self::IDENTITY }
    }

    /// The matrix `T * R * S`.
    #[inline]
    pub fn to_mat4(&self) -> Mat4 {
        Mat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }

    /// True when every component is finite.
    pub fn is_finite(&self) -> bool {
        self.translation.is_finite() && self.rotation.is_finite() && self.scale.is_finite()
    }
}

/// Shortest-path spherical interpolation from `a` to `b`, normalized.
///
/// Follows the glTF definition (`slerp` with the sign of `b` flipped when `dot(a, b) < 0`). For
/// segments up to 120 degrees apart (`dot >= 0.5`, every densely keyed clip) the weights
/// `sin(t*theta)/sin(theta)` come from Eberly's series in `cos(theta) - 1` ("A Fast and Accurate
/// Algorithm for Computing SLERP"; see [`slerp_weights`]), with no trigonometry, square root or
/// division; wider segments use polynomial `acos`/`sin` accurate to ~1e-7. The result is
/// normalized ([`renormalize`]).
#[inline(always)]
pub fn slerp(a: Quat, b: Quat, t: f32) -> Quat {
    let va = Vec4::from(a);
    let mut vb = Vec4::from(b);
    let mut d = va.dot(vb);
    if d < 0.0 {
        vb = -vb;
        d = -d;
    }
    let (wa, wb) = slerp_weights(t, d);
    renormalize(va * wa + vb * wb)
}

/// The slerp weights `(sin((1-t)θ)/sin θ, sin(tθ)/sin θ)` for `x = cos θ` in `[0, 1]` (the
/// shortest-path dot product): Eberly's series for `x >= 0.5` (4 terms for `x >= 0.95`, error
/// < 2e-9; else 8 terms with the last scaled by 1.5, error < 5e-7), polynomial trig below.
#[inline(always)]
pub fn slerp_weights(t: f32, x: f32) -> (f32, f32) {
    if x >= 0.95 {
        series::<4>(t, x, 1.0)
    } else if x >= 0.5 {
        series::<8>(t, x, 1.5)
    } else {
        let theta = acos_poly(x.clamp(0.0, 1.0));
        let inv_sin = 1.0 / sin_poly(theta);
        (sin_poly((1.0 - t) * theta) * inv_sin, sin_poly(t * theta) * inv_sin)
    }
}

/// [`slerp_weights`] for four independent `(t, x)` lanes at once. Every lane takes the branch
/// the scalar version takes, so the weights agree with it to rounding.
#[inline(always)]
pub fn slerp_weights4(t: Vec4, x: Vec4) -> (Vec4, Vec4) {
    let (lo, hi) = (x.min_element(), x.max_element());
    if lo >= 0.95 {
        series4::<4>(t, x, 1.0)
    } else if lo >= 0.5 && hi < 0.95 {
        series4::<8>(t, x, 1.5)
    } else {
        let (a0, b0) = slerp_weights(t.x, x.x);
        let (a1, b1) = slerp_weights(t.y, x.y);
        let (a2, b2) = slerp_weights(t.z, x.z);
        let (a3, b3) = slerp_weights(t.w, x.w);
        (Vec4::new(a0, a1, a2, a3), Vec4::new(b0, b1, b2, b3))
    }
}

/// Eberly's slerp-series coefficients `u_i = 1 / (i (2i + 1))`, `i = 1..=8`.
pub(crate) const SLERP_U: [f32; 8] =
    [1.0 / 3.0, 1.0 / 10.0, 1.0 / 21.0, 1.0 / 36.0, 1.0 / 55.0, 1.0 / 78.0, 1.0 / 105.0, 1.0 / 136.0];
/// Eberly's slerp-series coefficients `v_i = i / (2i + 1)`, `i = 1..=8`.
pub(crate) const SLERP_V: [f32; 8] =
    [1.0 / 3.0, 2.0 / 5.0, 3.0 / 7.0, 4.0 / 9.0, 5.0 / 11.0, 6.0 / 13.0, 7.0 / 15.0, 8.0 / 17.0];

/// Eberly's series with `N` terms, the last scaled by `mu`.
#[inline(always)]
fn series<const N: usize>(t: f32, x: f32, mu: f32) -> (f32, f32) {
    let xm1 = x - 1.0;
    let s = 1.0 - t;
    let (t2, s2) = (t * t, s * s);
    let mut at = 1.0 + (SLERP_U[N - 1] * t2 - SLERP_V[N - 1]) * xm1 * mu;
    let mut as_ = 1.0 + (SLERP_U[N - 1] * s2 - SLERP_V[N - 1]) * xm1 * mu;
    let mut i = N - 1;
    while i > 0 {
        i -= 1;
        at = 1.0 + (SLERP_U[i] * t2 - SLERP_V[i]) * xm1 * at;
        as_ = 1.0 + (SLERP_U[i] * s2 - SLERP_V[i]) * xm1 * as_;
    }
    (s * as_, t * at)
}

/// [`series`] over four lanes.
#[inline(always)]
fn series4<const N: usize>(t: Vec4, x: Vec4, mu: f32) -> (Vec4, Vec4) {
    let xm1 = x - Vec4::ONE;
    let s = Vec4::ONE - t;
    let (t2, s2) = (t * t, s * s);
    let mut at = Vec4::ONE + (Vec4::splat(SLERP_U[N - 1]) * t2 - Vec4::splat(SLERP_V[N - 1])) * xm1 * mu;
    let mut as_ = Vec4::ONE + (Vec4::splat(SLERP_U[N - 1]) * s2 - Vec4::splat(SLERP_V[N - 1])) * xm1 * mu;
    let mut i = N - 1;
    while i > 0 {
        i -= 1;
        at = Vec4::ONE + (Vec4::splat(SLERP_U[i]) * t2 - Vec4::splat(SLERP_V[i])) * xm1 * at;
        as_ = Vec4::ONE + (Vec4::splat(SLERP_U[i]) * s2 - Vec4::splat(SLERP_V[i])) * xm1 * as_;
    }
    (s * as_, t * at)
}

/// [`renormalize`] for four quaternions in SoA rows (`q[0]` the x of all four, then y, z, w),
/// given their squared lengths `len2` (summed in whichever order the caller's scalar reference
/// sums them): per lane one Newton step near unit length, else an exact division. Returns the
/// four quaternions.
#[inline(always)]
pub fn renormalize4(q: [Vec4; 4], len2: Vec4) -> [Quat; 4] {
    let near = (len2 - Vec4::ONE).abs().cmplt(Vec4::splat(1e-3));
    let f = Vec4::splat(1.5) - Vec4::splat(0.5) * len2;
    let rows = if near.all() {
        q.map(|c| c * f)
    } else {
        let len = len2.sqrt();
        q.map(|c| Vec4::select(near, c * f, c / len))
    };
    let m = glam::Mat4::from_cols(rows[0], rows[1], rows[2], rows[3]).transpose();
    [m.x_axis, m.y_axis, m.z_axis, m.w_axis].map(Quat::from_vec4)
}

/// Normalizes a quaternion that is already close to unit length with one Newton step of
/// `1/sqrt` about 1 (`(3 - |q|^2) / 2`: error ~1e-12 when `| |q|^2 - 1 | < 1e-3`), falling back
/// to an exact normalization otherwise.
#[inline(always)]
pub fn renormalize(r: Vec4) -> Quat {
    let len2 = r.length_squared();
    if (len2 - 1.0).abs() < 1e-3 {
        Quat::from_vec4(r * (1.5 - 0.5 * len2))
    } else {
        Quat::from_vec4(r / len2.sqrt())
    }
}

/// `q` scaled to unit length, or `None` for a zero or non-finite quaternion. Scaled by its
/// largest component first, so magnitudes whose squares overflow `f32` (1e20) or underflow it
/// (1e-30) normalize like any other.
pub fn normalize_quat(q: Quat) -> Option<Quat> {
    let v = Vec4::from(q);
    let m = v.abs().max_element();
    if !(m > 0.0) || !m.is_finite() {
        return None;
    }
    let u = v / m;
    Some(Quat::from_vec4(u / u.length()))
}

/// The inverse of `m`, or identity where `m` has none that `f32` can hold (a zero scale, a zero
/// matrix, a scale so small its inverse overflows): callers that only need a finite answer for
/// degenerate input (a collapsed node) use it.
///
/// A matrix whose determinant alone leaves `f32` (a node scaled by 1e20 has one of 1e60, one
/// scaled by 1e-20 one of 1e-60) still has its inverse: where the plain inverse is not finite,
/// an affine matrix's linear part is inverted divided by its largest entry (and the result
/// divided by it again), any other matrix likewise as a whole. The plain inverse is kept
/// wherever it is finite, to the bit.
pub fn inverse_or_identity(m: &Mat4) -> Mat4 {
    let inv = m.inverse();
    if inv.is_finite() {
        return inv;
    }
    let largest = |v: &[f32]| v.iter().fold(0.0f32, |a, x| a.max(x.abs()));
    let scaled = if m.row(3) == Vec4::W {
        let linear = Mat3::from_mat4(*m);
        let s = largest(&linear.to_cols_array());
        let inv_linear = (linear * (1.0 / s)).inverse() * (1.0 / s);
        let translation = -(inv_linear * m.w_axis.truncate());
        Mat4::from_cols(
            inv_linear.x_axis.extend(0.0),
            inv_linear.y_axis.extend(0.0),
            inv_linear.z_axis.extend(0.0),
            translation.extend(1.0),
        )
    } else {
        let s = largest(&m.to_cols_array());
        (*m * (1.0 / s)).inverse() * (1.0 / s)
    };
    if scaled.is_finite() { scaled } else { Mat4::IDENTITY }
}

/// `acos(x)` for `x` in `[0, 1]` (Abramowitz & Stegun 4.4.46, |error| <= 2e-8).
#[inline]
pub fn acos_poly(x: f32) -> f32 {
    let p = -0.0012624911f32;
    let p = p * x + 0.0066700901;
    let p = p * x - 0.0170881256;
    let p = p * x + 0.0308918810;
    let p = p * x - 0.0501743046;
    let p = p * x + 0.0889789874;
    let p = p * x - 0.2145988016;
    let p = p * x + 1.5707963050;
    (1.0 - x).max(0.0).sqrt() * p
}

/// `sin(x)` for `x` in `[0, pi]` (odd minimax-style polynomial about pi/2 via `sin(pi - x)`).
#[inline]
pub fn sin_poly(x: f32) -> f32 {
    use std::f32::consts::{FRAC_PI_2, PI};
    let x = if x > FRAC_PI_2 { PI - x } else { x };
    let x2 = x * x;
    // Taylor to x^13 on [0, pi/2]: |error| < 6e-10 before rounding.
    let p = -1.0 / 6227020800.0f32;
    let p = p * x2 + 1.0 / 39916800.0;
    let p = p * x2 - 1.0 / 362880.0;
    let p = p * x2 + 1.0 / 5040.0;
    let p = p * x2 - 1.0 / 120.0;
    let p = p * x2 + 1.0 / 6.0;
    x - x * x2 * p
}

/// The rotation of a matrix whose upper 3x3 may carry scale (even a near-zero or mirrored one):
/// columns are normalized, a missing column is rebuilt from the others, and a mirrored basis is
/// flipped on one axis, so the answer is always a unit quaternion, never NaN.
pub fn rotation_of(m: &Mat4) -> Quat {
    let (_, r, _) = decompose(m);
    r
}

/// Splits a matrix into scale, rotation and translation, without NaN for degenerate input.
///
/// - Translations, rotations and uniform or per-axis scale come back exactly (to rounding).
/// - A mirrored basis comes back as a negative scale on the X axis.
/// - Shear is dropped (the basis is re-orthogonalized, X first).
/// - An axis scaled to zero gets its direction from the surviving axes; when two are gone the
///   survivor keeps its direction and the others are completed to an orthonormal frame; when all
///   three are gone the rotation is the identity.
pub fn decompose(m: &Mat4) -> (Vec3, Quat, Vec3) {
    const EPS: f32 = 1e-12;
    let t = m.w_axis.truncate();
    let cols = [m.x_axis.truncate(), m.y_axis.truncate(), m.z_axis.truncate()];
    let lens = [cols[0].length(), cols[1].length(), cols[2].length()];
    let alive = [lens[0] > EPS, lens[1] > EPS, lens[2] > EPS];
    let mut axes = [Vec3::X, Vec3::Y, Vec3::Z];
    let n_alive = alive.iter().filter(|a| **a).count();
    match n_alive {
        0 => {}
        1 => {
            let i = alive.iter().position(|a| *a).unwrap();
            let a = cols[i] / lens[i];
            let (b, c) = a.any_orthonormal_pair();
            // Keep a right-handed frame with the survivor in its own slot.
            axes[i] = a;
            axes[(i + 1) % 3] = b;
            axes[(i + 2) % 3] = c;
        }
        _ => {
            // Gram-Schmidt over the surviving axes, in X, Y, Z order.
            let mut done: [Option<Vec3>; 3] = [None; 3];
            for i in 0..3 {
                if !alive[i] {
                    continue;
                }
                let mut v = cols[i];
                for u in done.iter().flatten() {
                    v -= *u * u.dot(v);
                }
                let l = v.length();
                if l > EPS {
                    done[i] = Some(v / l);
                }
            }
            let k = done.iter().filter(|d| d.is_some()).count();
            if k < 2 {
                // Parallel survivors: treat as one.
                let i = done.iter().position(|d| d.is_some()).unwrap_or(0);
                let a = done[i].unwrap_or(Vec3::X);
                let (b, c) = a.any_orthonormal_pair();
                axes[i] = a;
                axes[(i + 1) % 3] = b;
                axes[(i + 2) % 3] = c;
            } else {
                for i in 0..3 {
                    if let Some(v) = done[i] {
                        axes[i] = v;
                    }
                }
                for i in 0..3 {
                    if done[i].is_none() {
                        axes[i] = axes[(i + 1) % 3].cross(axes[(i + 2) % 3]);
                    }
                }
            }
        }
    }
    let mut scale = Vec3::new(
        if alive[0] { cols[0].dot(axes[0]) } else { 0.0 },
        if alive[1] { cols[1].dot(axes[1]) } else { 0.0 },
        if alive[2] { cols[2].dot(axes[2]) } else { 0.0 },
    );
    // A mirrored basis: flip X so the rotation is proper, carry it as a negative X scale.
    if axes[0].cross(axes[1]).dot(axes[2]) < 0.0 {
        // Find an axis to flip: prefer one whose scale came from a live column.
        axes[0] = -axes[0];
        scale.x = -scale.x;
        if !alive[0] {
            scale.x = 0.0;
        }
    }
    let r = Quat::from_mat3(&Mat3::from_cols(axes[0], axes[1], axes[2])).normalize();
    let r = if r.is_finite() { r } else { Quat::IDENTITY };
    (scale, r, t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_or_identity_inverts_matrices_whose_determinant_leaves_f32_and_only_those_lack_one() {
        let at = Vec3::new(3.0, -2.0, 0.5);
        let turn = Quat::from_rotation_y(0.7);
        for scale in [1e20f32, -3e25, 1e-20, 2e-30, 1e30] {
            let m = Mat4::from_scale_rotation_translation(Vec3::splat(scale), turn, at);
            assert!(!m.inverse().is_finite(), "the plain inverse of scale {scale} is finite: no case");
            let inv = inverse_or_identity(&m);
            let want = glam::DMat4::from_scale_rotation_translation(
                glam::DVec3::splat(scale as f64),
                turn.as_dquat(),
                at.as_dvec3(),
            )
            .inverse();
            for (got, want) in inv.to_cols_array().iter().zip(want.to_cols_array()) {
                let tolerance = 1e-5 * want.abs().max(1.0 / (scale as f64).abs().max(1.0));
                assert!((*got as f64 - want).abs() <= tolerance, "scale {scale}: {inv} against {want}");
            }
        }
        // A projective matrix scaled past f32's determinant: inverted as a whole.
        let p =
            Mat4::from_cols(Vec4::new(1e20, 0.0, 0.0, 2e19), Vec4::Y * 1e20, Vec4::Z * 1e20, Vec4::W * 1e20);
        let round = inverse_or_identity(&p) * p;
        assert!(round.abs_diff_eq(Mat4::IDENTITY, 1e-5), "{round}");
        // No inverse in f32: identity.
        for m in
            [Mat4::ZERO, Mat4::from_scale(Vec3::new(1.0, 0.0, 1.0)), Mat4::from_scale(Vec3::splat(1e-39))]
        {
            assert_eq!(inverse_or_identity(&m), Mat4::IDENTITY, "{m}");
        }
        // A sound matrix keeps the plain inverse's bits.
        let m = Mat4::from_scale_rotation_translation(Vec3::new(2.0, 0.5, 3.0), turn, at);
        assert_eq!(
            inverse_or_identity(&m).to_cols_array().map(f32::to_bits),
            m.inverse().to_cols_array().map(f32::to_bits)
        );
    }

    #[test]
    fn polynomial_trig_matches_std() {
        for i in 0..=1000 {
            let x = i as f32 / 1000.0;
            assert!((acos_poly(x) - x.acos()).abs() < 2e-6, "acos {x}");
            let y = x * std::f32::consts::PI;
            assert!((sin_poly(y) - y.sin()).abs() < 2e-6, "sin {y}");
        }
    }

    #[test]
    fn slerp_matches_f64_slerp_over_all_angles() {
        // Against a double-precision slerp, from tiny to nearly opposite rotations.
        for k in 0..=60 {
            let angle = k as f64 / 60.0 * 3.1;
            let axis = glam::DVec3::new(0.3, -0.8, 0.5).normalize();
            let a = glam::DQuat::from_rotation_y(0.4);
            let b = glam::DQuat::from_axis_angle(axis, angle) * a;
            for i in 0..=16 {
                let t = i as f64 / 16.0;
                let want = a.slerp(b, t);
                let got = slerp(a.as_quat(), b.as_quat(), t as f32).as_dquat();
                let err = (got - want).length().min((got + want).length());
                assert!(err < 2e-6, "angle {angle} t {t}: error {err}");
                assert!((got.length() - 1.0).abs() < 1e-6);
            }
        }
    }

    #[test]
    fn four_lane_weights_match_the_scalar_weights() {
        let xs = [1.0, 0.999, 0.96, 0.95, 0.9, 0.6, 0.5, 0.3, 0.0];
        for (i, &x0) in xs.iter().enumerate() {
            let x = Vec4::new(x0, xs[(i + 1) % xs.len()], xs[(i + 3) % xs.len()], 0.97);
            let t = Vec4::new(0.1, 0.5, 0.77, 1.0);
            let (wa, wb) = slerp_weights4(t, x);
            for lane in 0..4 {
                let (a, b) = slerp_weights(t[lane], x[lane]);
                assert!((wa[lane] - a).abs() < 1e-6 && (wb[lane] - b).abs() < 1e-6, "x = {}", x[lane]);
            }
        }
    }

    #[test]
    fn slerp_matches_glam_slerp() {
        let a = Quat::from_rotation_y(0.3);
        let b = Quat::from_rotation_x(2.0) * Quat::from_rotation_z(-1.0);
        for i in 0..=20 {
            let t = i as f32 / 20.0;
            let ours = slerp(a, b, t);
            let theirs = a.slerp(b, t);
            assert!(ours.abs_diff_eq(theirs, 1e-5) || ours.abs_diff_eq(-theirs, 1e-5), "{t}");
        }
    }

    #[test]
    fn decompose_mirrored_and_zero_scale_without_nan() {
        let m = Mat4::from_scale_rotation_translation(
            Vec3::new(-2.0, 3.0, 4.0),
            Quat::from_rotation_z(0.7),
            Vec3::new(1.0, 2.0, 3.0),
        );
        let (s, r, t) = decompose(&m);
        let back = Mat4::from_scale_rotation_translation(s, r, t);
        assert!(back.abs_diff_eq(m, 1e-5), "{back:?} vs {m:?}");
        assert!(s.x < 0.0);
        for zero in [Vec3::new(0.0, 1.0, 1.0), Vec3::new(0.0, 0.0, 2.0), Vec3::ZERO] {
            let m = Mat4::from_scale_rotation_translation(zero, Quat::from_rotation_x(0.4), Vec3::ONE);
            let (s, r, t) = decompose(&m);
            assert!(s.is_finite() && r.is_finite() && t.is_finite());
            assert!((r.length() - 1.0).abs() < 1e-5);
            let back = Mat4::from_scale_rotation_translation(s, r, t);
            assert!(back.abs_diff_eq(m, 1e-5), "{zero}: {back:?} vs {m:?}");
        }
    }
}

/// A number as a message shows it: the shortest form that reads back the same, except that a
/// tiny or huge magnitude is written in exponent form (`1e-45`, not 45 zeros after the point).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Num(pub f32);

impl std::fmt::Display for Num {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = self.0;
        if v != 0.0 && v.is_finite() && (v.abs() < 1e-4 || v.abs() >= 1e7) {
            write!(f, "{v:e}")
        } else {
            write!(f, "{v}")
        }
    }
}
