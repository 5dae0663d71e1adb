//! Pose kernels with AVX (256-bit), for CPUs without AVX-512: the local matrices of eight bones
//! at once for the local-to-model loop, the palette product and the two-layer blend.
//!
//! **Local rows**: eight rotations are loaded as four registers (bones `k` and `k + 4` in the
//! two halves), transposed in-lane to x, y, z, w rows, and turned into the upper 3x3 with the
//! portable path's arithmetic ([`super::local_soa`]: glam's `Mat3A::from_quat`, then the scale
//! per column), so the rows are the same to the bit, eight bones per instruction.
//!
//! **Palette**: one bone's `model * inverse_bind` in two registers (output columns 0-1 and
//! 2-3, one per 128-bit half): the model's columns broadcast to both halves straight from
//! memory, the inverse bind's x, y and z spread within each half by an in-lane shuffle, sums in
//! [`super::affine_product`]'s order (products, then additions, no fused multiply-add), so the
//! result is the scalar path's to the bit.
//!
//! **Two-layer blend**: eight bones at a time, rotations transposed to x, y, z, w rows of
//! eight; translations and scales blended in place, two transforms (96 bytes) to three
//! registers read with masked loads (the structs' padding is never read) and written whole
//! (the padding lanes hold zeros), so the pose keeps its array-of-structs layout. The hemisphere
//! test, the weighted sum and the normalization run in [`super::blend2_one`]'s order (dots
//! `(x + z) + (y + w)`, separate products and sums, a division by the length), so the result is
//! the scalar path's to the bit.
//!
//! Not here: choosing the path (see [`super::LocalToModelJob::run`], [`super::PaletteJob::run`]
//! and [`super::BlendingJob::run`]).

use std::arch::x86_64::*;
use std::mem::offset_of;

use glam::Mat4;

use crate::math::Transform;

/// `out[i] = affine_product(model[i], inverse_bind[i])` for every bone.
///
/// # Safety
/// The CPU must support AVX; the three slices must have the same length.
#[target_feature(enable = "avx")]
pub(super) unsafe fn palette(model: &[Mat4], inverse_bind: &[Mat4], out: &mut [Mat4]) {
    let n = out.len().min(model.len()).min(inverse_bind.len());
    let m = model.as_ptr() as *const f32;
    let b = inverse_bind.as_ptr() as *const f32;
    let o = out.as_mut_ptr() as *mut f32;
    for i in 0..n {
        // SAFETY: i < n, so each 16-float read and write stays inside its slice; the caller
        // guarantees the CPU feature.
        unsafe {
            let mi = m.add(16 * i);
            let col = |k: usize| _mm256_broadcast_ps(&*(mi.add(4 * k) as *const __m128));
            let (c0, c1, c2) = (col(0), col(1), col(2));
            let half = |ib: __m256| {
                let x = _mm256_permute_ps::<0b00_00_00_00>(ib);
                let y = _mm256_permute_ps::<0b01_01_01_01>(ib);
                let z = _mm256_permute_ps::<0b10_10_10_10>(ib);
                _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(c0, x), _mm256_mul_ps(c1, y)), _mm256_mul_ps(c2, z))
            };
            let lo = half(_mm256_loadu_ps(b.add(16 * i)));
            let hi = half(_mm256_loadu_ps(b.add(16 * i + 8)));
            // The translation column (the upper half of `hi`) gains the model's own translation;
            // column 2 is untouched (adding a zero could turn a -0.0 into +0.0).
            let hi = _mm256_blend_ps::<0xF0>(hi, _mm256_add_ps(hi, col(3)));
            _mm256_storeu_ps(o.add(16 * i), lo);
            _mm256_storeu_ps(o.add(16 * i + 8), hi);
        }
    }
}

/// The float lanes of two consecutive transforms (24 floats) that hold `len` floats at byte
/// `offset` of each, as bits of a 24-bit mask.
const fn lanes_of_two(offset: usize, len: usize) -> u32 {
    let mut mask = 0u32;
    let mut k = 0;
    while k < 2 {
        let mut j = 0;
        while j < len {
            mask |= 1 << (12 * k + offset / 4 + j);
            j += 1;
        }
        k += 1;
    }
    mask
}

/// The lanes of a pair's translations and scales (not their rotations, not the padding).
const TS_LANES: u32 =
    lanes_of_two(offset_of!(Transform, translation), 3) | lanes_of_two(offset_of!(Transform, scale), 3);

/// The 8 lanes of `mask` that register `j` of a pair covers.
const fn part(mask: u32, j: usize) -> i32 {
    ((mask >> (8 * j)) & 0xFF) as i32
}

/// A maskload mask: all ones in the lanes of `bits`.
#[inline]
#[target_feature(enable = "avx")]
fn lane_mask(bits: i32) -> __m256i {
    let on = |k: i32| if bits & (1 << k) != 0 { -1 } else { 0 };
    _mm256_setr_epi32(on(0), on(1), on(2), on(3), on(4), on(5), on(6), on(7))
}

/// In every 128-bit half, the sum of its four floats in glam's `Vec4::dot` order
/// (`(x + z) + (y + w)`), in all four places.
#[inline]
#[target_feature(enable = "avx")]
fn half_sums(p: __m256) -> __m256 {
    let s = _mm256_add_ps(p, _mm256_permute_ps::<0b01_00_11_10>(p));
    _mm256_add_ps(s, _mm256_permute_ps::<0b10_11_00_01>(s))
}

/// `out[i] = blend2_one(a[i], b[i], wa, wb)` for every bone; the lengths are even.
///
/// Eight bones at a time: their rotations read straight into the halves of four registers
/// (bones `k` and `k + 4` share one), transposed in-lane to x, y, z, w rows of eight (as ozz
/// keeps them), so one square root and four divisions serve eight bones; while those run, the
/// four pairs' translations and scales are blended where they lie (three registers per pair,
/// the rotation lanes written as zeros), and the rotations are then written over the zeros.
/// Bones left over after the last group of eight go one pair to a register.
///
/// # Safety
/// The CPU must support AVX; [`super::avx512::BLEND_LAYOUT`] must hold; the three slices must
/// have the same length, a multiple of two.
#[target_feature(enable = "avx")]
pub(super) unsafe fn blend2(a: &[Transform], b: &[Transform], wa: f32, wb: f32, out: &mut [Transform]) {
    let n = out.len().min(a.len()).min(b.len()) / 2 * 2;
    let (pa, pb) = (a.as_ptr() as *const f32, b.as_ptr() as *const f32);
    let po = out.as_mut_ptr() as *mut f32;
    let data = [0, 1, 2].map(|j| lane_mask(part(TS_LANES, j)));
    let w = Weights::new(wa, wb);
    // The translations and scales of pair `g`, blended where they lie; its rotation lanes are
    // written as zeros, for the rotation pass to overwrite.
    let pair = |g: usize| {
        // SAFETY: the callers pass g < n / 2, so the pair's 24 floats lie inside each slice;
        // only the lanes of the translations and scales are read (`data`); the whole pair is
        // written, rotations and padding as zeros, which the output slice owns.
        unsafe {
            let load = |p: *const f32| [0, 1, 2].map(|j| _mm256_maskload_ps(p.add(24 * g + 8 * j), data[j]));
            let (xa, xb) = (load(pa), load(pb));
            let o = po.add(24 * g);
            for j in 0..3 {
                let lin = _mm256_add_ps(_mm256_mul_ps(xa[j], w.a), _mm256_mul_ps(xb[j], w.b));
                _mm256_storeu_ps(o.add(8 * j), lin);
            }
        }
    };
    let at = |t: usize| 12 * t + offset_of!(Transform, rotation) / 4;
    let eights = n / 8;
    for g in 0..eights {
        // SAFETY: g < eights, so the eight rotations (four floats each, at `at`) lie inside
        // each slice.
        unsafe {
            let load =
                |p: *const f32, k: usize| _mm256_loadu2_m128(p.add(at(8 * g + k + 4)), p.add(at(8 * g + k)));
            let qa = transpose([0, 1, 2, 3].map(|k| load(pa, k)));
            let qb = transpose([0, 1, 2, 3].map(|k| load(pb, k)));
            let dot = |p: [__m256; 4], q: [__m256; 4]| {
                let m = |k: usize| _mm256_mul_ps(p[k], q[k]);
                _mm256_add_ps(_mm256_add_ps(m(0), m(2)), _mm256_add_ps(m(1), m(3)))
            };
            let flip = _mm256_cmp_ps::<_CMP_LT_OQ>(dot(qa, qb), w.zero);
            let wq = _mm256_blendv_ps(w.b, w.nb, flip);
            let r = [0, 1, 2, 3].map(|k| _mm256_add_ps(_mm256_mul_ps(qa[k], w.a), _mm256_mul_ps(qb[k], wq)));
            let len = _mm256_sqrt_ps(dot(r, r));
            let ok = _mm256_cmp_ps::<_CMP_GT_OQ>(len, w.tiny);
            let q = transpose([0, 1, 2, 3].map(|k| _mm256_blendv_ps(qb[k], _mm256_div_ps(r[k], len), ok)));
            // The group's translations and scales, independent of the rotations: the core
            // runs them while the square root and divisions are under way.
            for k in 0..4 {
                pair(4 * g + k);
            }
            for (k, q) in q.into_iter().enumerate() {
                _mm256_storeu2_m128(po.add(at(8 * g + k + 4)), po.add(at(8 * g + k)), q);
            }
        }
    }
    for g in eights * 4..n / 2 {
        pair(g);
        // SAFETY: g < n / 2, so the pair's two rotations lie inside each slice.
        unsafe {
            let load = |p: *const f32| _mm256_loadu2_m128(p.add(at(2 * g + 1)), p.add(at(2 * g)));
            let (qa, qb) = (load(pa), load(pb));
            let flip = _mm256_cmp_ps::<_CMP_LT_OQ>(half_sums(_mm256_mul_ps(qa, qb)), w.zero);
            let wq = _mm256_blendv_ps(w.b, w.nb, flip);
            let r = _mm256_add_ps(_mm256_mul_ps(qa, w.a), _mm256_mul_ps(qb, wq));
            let len = _mm256_sqrt_ps(half_sums(_mm256_mul_ps(r, r)));
            let ok = _mm256_cmp_ps::<_CMP_GT_OQ>(len, w.tiny);
            let q = _mm256_blendv_ps(qb, _mm256_div_ps(r, len), ok);
            _mm256_storeu2_m128(po.add(at(2 * g + 1)), po.add(at(2 * g)), q);
        }
    }
}

/// The blend's constants, splat.
struct Weights {
    a: __m256,
    b: __m256,
    nb: __m256,
    zero: __m256,
    tiny: __m256,
}

impl Weights {
    #[inline]
    #[target_feature(enable = "avx")]
    fn new(wa: f32, wb: f32) -> Self {
        let s = _mm256_set1_ps;
        Self { a: s(wa), b: s(wb), nb: s(-wb), zero: _mm256_setzero_ps(), tiny: s(1e-12) }
    }
}

/// The eight transforms' local 3x3 in SoA rows: `rows[3 * c + r][k]` is row `r` of column `c` of
/// transform `k`.
///
/// # Safety
/// The CPU must support AVX.
#[inline]
#[target_feature(enable = "avx")]
pub(super) unsafe fn local_rows8(t: &[Transform; 8]) -> [[f32; 8]; 9] {
    // SAFETY: each load reads one field of a transform in `t`: a rotation's four floats, or a
    // scale's three (the masked load leaves the fourth lane unread).
    let (q, s) = unsafe {
        let q = |k: usize| _mm_loadu_ps(t[k].rotation.as_ref().as_ptr());
        let three = _mm_castsi128_ps(_mm_set_epi32(0, -1, -1, -1));
        let s = |k: usize| _mm_maskload_ps(t[k].scale.as_ref().as_ptr(), _mm_castps_si128(three));
        (
            [0, 1, 2, 3].map(|k| _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(q(k)), q(k + 4))),
            [0, 1, 2, 3].map(|k| _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(s(k)), s(k + 4))),
        )
    };
    let [x, y, z, w] = transpose(q);
    let [sx, sy, sz, _] = transpose(s);
    let rows = super::quat_scale_rows(
        [x, y, z, w],
        [sx, sy, sz],
        _mm256_set1_ps(1.0),
        |a, b| _mm256_add_ps(a, b),
        |a, b| _mm256_sub_ps(a, b),
        |a, b| _mm256_mul_ps(a, b),
    );
    let mut out = [[0.0f32; 8]; 9];
    for (o, r) in out.iter_mut().zip(rows) {
        // SAFETY: each row of `out` holds eight floats.
        unsafe { _mm256_storeu_ps(o.as_mut_ptr(), r) };
    }
    out
}

/// Four registers of four floats per half, transposed within each half: lane `k` of output `j`
/// is element `j` of input `k` (and the same in the upper half). Its own inverse. (Also used by
/// the skinning job's AVX2 loop, for eight normals.)
#[inline]
#[target_feature(enable = "avx")]
pub(crate) fn transpose(r: [__m256; 4]) -> [__m256; 4] {
    let t0 = _mm256_unpacklo_ps(r[0], r[1]);
    let t1 = _mm256_unpackhi_ps(r[0], r[1]);
    let t2 = _mm256_unpacklo_ps(r[2], r[3]);
    let t3 = _mm256_unpackhi_ps(r[2], r[3]);
    [
        _mm256_shuffle_ps::<0b01_00_01_00>(t0, t2),
        _mm256_shuffle_ps::<0b11_10_11_10>(t0, t2),
        _mm256_shuffle_ps::<0b01_00_01_00>(t1, t3),
        _mm256_shuffle_ps::<0b11_10_11_10>(t1, t3),
    ]
}

#[cfg(test)]
mod tests {
    use glam::{Quat, Vec3};

    use crate::math::Transform;

    #[test]
    fn the_avx_blend_is_the_scalar_two_layer_blend_to_the_bit() {
        if crate::simd::test_gate(crate::simd::SimdLevel::Avx2, "this AVX kernel test") {
            // SAFETY: AVX checked just above; the layout holds (pose::avx512's layout test).
            unsafe { super::super::tests::check_blend2_kernel(super::blend2) };
        }
    }

    #[test]
    fn the_avx_palette_is_the_affine_product_to_the_bit() {
        if crate::simd::test_gate(crate::simd::SimdLevel::Avx2, "this AVX kernel test") {
            // SAFETY: AVX checked just above.
            unsafe { super::super::tests::check_palette_kernel(super::palette) };
        }
    }

    #[test]
    fn the_avx_local_rows_are_the_portable_rows_to_the_bit() {
        if !crate::simd::test_gate(crate::simd::SimdLevel::Avx2, "the AVX local rows test") {
            return;
        }
        let t: [Transform; 8] = std::array::from_fn(|k| {
            let f = k as f32;
            Transform {
                translation: Vec3::new(f, 1.0, -2.0),
                rotation: Quat::from_rotation_y(0.4 * f) * Quat::from_rotation_z(0.1 - 0.3 * f),
                scale: Vec3::new(1.0 + 0.1 * f, -0.5, if k == 3 { -0.0 } else { 2.0 }),
            }
        });
        // SAFETY: AVX checked above.
        let rows = unsafe { super::local_rows8(&t) };
        let (lo, hi) = (super::super::local_soa(&t[..4]), super::super::local_soa(&t[4..]));
        for j in 0..9 {
            for k in 0..8 {
                let want = if k < 4 { lo[j][k] } else { hi[j][k - 4] };
                assert_eq!(rows[j][k].to_bits(), want.to_bits(), "row {j}, bone {k}");
            }
        }
    }
}
