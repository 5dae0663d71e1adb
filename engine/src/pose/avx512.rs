//! Pose kernels with AVX-512F: the palette product and the two-layer blend.
//!
//! **Palette**: one bone's `model * inverse_bind` in one 512-bit register. Each 128-bit lane of the register is one output column. The model's columns are broadcast to
//! all four lanes straight from memory, the inverse bind's x, y and z are spread across each
//! lane with an in-lane shuffle, and the sum runs in [`super::affine_product`]'s order (products,
//! then additions, no fused multiply-add; the model's translation added to the fourth column
//! only), so the result is the scalar path's to the bit.
//!
//! **Two-layer blend**: the AVX kernel's method ([`super::avx`]) sixteen bones at a time:
//! rotations loaded four to a register and transposed in-lane to rows of sixteen (one square
//! root and four divisions for sixteen bones), the next group's sums issued before this group's
//! divisions, a bone's translation and scale blended with one unaligned eight-float access, in
//! [`super::blend2_one`]'s order of operations, so the result is the scalar path's to the bit.
//! (It replaced a kernel that gathered four rotations from masked loads: 146 -> about 120 ns
//! for 64 bones on a Zen 4.)
//!
//! Not here: choosing the path (see [`super::PaletteJob::run`] and [`super::BlendingJob::run`]).

use std::arch::x86_64::*;

use glam::Mat4;

use crate::math::Transform;

/// `out[i] = affine_product(model[i], inverse_bind[i])` for every bone.
///
/// # Safety
/// The CPU must support AVX-512F; the three slices must have the same length.
#[target_feature(enable = "avx512f")]
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
            let ib = _mm512_loadu_ps(b.add(16 * i));
            let col = |k: usize| _mm512_broadcast_f32x4(_mm_loadu_ps(mi.add(4 * k)));
            let x = _mm512_permute_ps(ib, 0b00_00_00_00);
            let y = _mm512_permute_ps(ib, 0b01_01_01_01);
            let z = _mm512_permute_ps(ib, 0b10_10_10_10);
            let mut acc = _mm512_mul_ps(col(0), x);
            acc = _mm512_add_ps(acc, _mm512_mul_ps(col(1), y));
            acc = _mm512_add_ps(acc, _mm512_mul_ps(col(2), z));
            // The translation column gains the model's own translation; the others are untouched
            // (adding a zero could turn a -0.0 into +0.0).
            acc = _mm512_mask_add_ps(acc, 0xF000, acc, col(3));
            _mm512_storeu_ps(o.add(16 * i), acc);
        }
    }
}

/// The blend's constants, splat: 512-bit for the rotation rows, 256-bit for a bone's
/// translation and scale window.
struct Weights {
    a: __m512,
    b: __m512,
    nb: __m512,
    tiny: __m512,
    a8: __m256,
    b8: __m256,
}

/// The first half of sixteen bones' rotation blend (from float `base`): the rotations read four
/// to a register (bones `j`, `j + 4`, `j + 8`, `j + 12` in the 128-bit lanes of register `j`),
/// transposed in-lane to x, y, z, w rows of sixteen (lane `k` of a row is bone `k`), flipped into
/// `a`'s hemisphere and weighted; returns the weighted sums' rows and their lengths (the square
/// root under way).
///
/// # Safety
/// The CPU must support AVX-512F; the 192 floats from `base` lie inside both inputs.
#[inline]
#[target_feature(enable = "avx512f")]
unsafe fn rotation_sums(pa: *const f32, pb: *const f32, base: usize, w: &Weights) -> ([__m512; 4], __m512) {
    // SAFETY: the rotations of the group's sixteen bones, inside both inputs (the caller's
    // guarantee).
    let load = |p: *const f32, j: usize| unsafe {
        let q = |k: usize| _mm_loadu_ps(p.add(base + 12 * (j + 4 * k)));
        let r = _mm512_insertf32x4::<1>(_mm512_castps128_ps512(q(0)), q(1));
        _mm512_insertf32x4::<3>(_mm512_insertf32x4::<2>(r, q(2)), q(3))
    };
    let qa = transpose16([0, 1, 2, 3].map(|j| load(pa, j)));
    let qb = transpose16([0, 1, 2, 3].map(|j| load(pb, j)));
    let dot = |p: [__m512; 4], q: [__m512; 4]| {
        let m = |k: usize| _mm512_mul_ps(p[k], q[k]);
        _mm512_add_ps(_mm512_add_ps(m(0), m(2)), _mm512_add_ps(m(1), m(3)))
    };
    let flip = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(dot(qa, qb), _mm512_setzero_ps());
    let wq = _mm512_mask_blend_ps(flip, w.b, w.nb);
    let r = [0, 1, 2, 3].map(|k| _mm512_add_ps(_mm512_mul_ps(qa[k], w.a), _mm512_mul_ps(qb[k], wq)));
    (r, _mm512_sqrt_ps(dot(r, r)))
}

/// `out[i] = blend2_one(a[i], b[i], wa, wb)` for every bone; the lengths are even.
///
/// The AVX kernel's method ([`super::avx::blend2`]) sixteen bones at a time: rotations in rows
/// of sixteen ([`rotation_sums`], one square root and four divisions for sixteen bones), the
/// next group's sums issued before this group's divisions, a bone's translation and scale
/// blended with one unaligned eight-float access from its rotation's z
/// ([`super::avx::LINEAR_LAYOUT`]), a length not above 1e-12 set from `b` after the stores. The
/// bones after the last group of sixteen go to the AVX kernel (the same bits).
///
/// # Safety
/// The CPU must support AVX-512F and AVX; [`super::avx::LINEAR_LAYOUT`] must hold; the three
/// slices must have the same length, a multiple of two.
#[target_feature(enable = "avx512f,avx")]
pub(super) unsafe fn blend2(a: &[Transform], b: &[Transform], wa: f32, wb: f32, out: &mut [Transform]) {
    let n = out.len().min(a.len()).min(b.len());
    let groups = n / 16;
    let (pa, pb) = (a.as_ptr() as *const f32, b.as_ptr() as *const f32);
    let po = out.as_mut_ptr() as *mut f32;
    let w = Weights {
        a: _mm512_set1_ps(wa),
        b: _mm512_set1_ps(wb),
        nb: _mm512_set1_ps(-wb),
        tiny: _mm512_set1_ps(1e-12),
        a8: _mm256_set1_ps(wa),
        b8: _mm256_set1_ps(wb),
    };
    if groups > 0 {
        // SAFETY: group 0's 192 floats lie inside both inputs (groups > 0).
        let (mut r, mut len) = unsafe { rotation_sums(pa, pb, 0, &w) };
        for g in 0..groups {
            let base = 192 * g;
            // SAFETY: g + 1 < groups, so the next group lies inside both inputs.
            let next =
                if g + 1 < groups { unsafe { rotation_sums(pa, pb, base + 192, &w) } } else { (r, len) };
            for t in 16 * g..16 * g + 16 {
                // SAFETY: t < 16 * groups <= n; AVX and LINEAR_LAYOUT are the caller's
                // guarantees; the rotation lanes written here are overwritten below.
                unsafe { super::avx::linear(pa, pb, po, t, (w.a8, w.b8)) };
            }
            let ok = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(len, w.tiny);
            let q = transpose16([0, 1, 2, 3].map(|k| _mm512_div_ps(r[k], len)));
            for (j, q) in q.into_iter().enumerate() {
                // SAFETY: bones 16g + j + 4L (L < 4) lie inside the output.
                unsafe {
                    let at = |l: usize| po.add(base + 12 * (j + 4 * l));
                    _mm_storeu_ps(at(0), _mm512_castps512_ps128(q));
                    _mm_storeu_ps(at(1), _mm512_extractf32x4_ps::<1>(q));
                    _mm_storeu_ps(at(2), _mm512_extractf32x4_ps::<2>(q));
                    _mm_storeu_ps(at(3), _mm512_extractf32x4_ps::<3>(q));
                }
            }
            if ok != 0xFFFF {
                // Lane k of the rows is bone k of the group.
                for t in (0..16).filter(|k| ok & (1 << k) == 0).map(|k| 16 * g + k) {
                    // SAFETY: t < n; written through the output's pointer, as every store here.
                    unsafe { (*(po as *mut Transform).add(t)).rotation = b[t].rotation };
                }
            }
            (r, len) = next;
        }
    }
    let rest = 16 * groups..n;
    // SAFETY: AVX (the caller's guarantee); the same layout; equal lengths, even (n is).
    unsafe { super::avx::blend2(&a[rest.clone()], &b[rest.clone()], wa, wb, &mut out[rest]) };
}

/// Sixteen transforms' local 3x3 in SoA rows (`rows[3 * c + r][k]`: row `r` of column `c` of
/// transform `k`), with [`super::local_soa`]'s arithmetic to the bit: the sixteen rotations and
/// scales loaded four to a register (transforms `k`, `k + 4`, `k + 8`, `k + 12` in its four
/// 128-bit lanes), transposed in-lane, then the same products and sums sixteen bones at a time.
///
/// # Safety
/// The CPU must support AVX-512F.
#[inline]
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn local_rows16(t: &[Transform; 16]) -> [[f32; 16]; 9] {
    // SAFETY: each load reads one field of a transform in `t`: a rotation's four floats, or a
    // scale's three (the masked load leaves the fourth lane unread).
    let (q, s) = unsafe {
        let q = |k: usize| _mm_loadu_ps(t[k].rotation.as_ref().as_ptr());
        let three = _mm_castsi128_ps(_mm_set_epi32(0, -1, -1, -1));
        let s = |k: usize| _mm_maskload_ps(t[k].scale.as_ref().as_ptr(), _mm_castps_si128(three));
        let four = |a: __m128, b: __m128, c: __m128, d: __m128| {
            let lo = _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(a), b);
            let hi = _mm256_insertf128_ps::<1>(_mm256_castps128_ps256(c), d);
            let wide = _mm512_castpd256_pd512(_mm256_castps_pd(lo));
            _mm512_castpd_ps(_mm512_insertf64x4::<1>(wide, _mm256_castps_pd(hi)))
        };
        (
            [0, 1, 2, 3].map(|k| four(q(k), q(k + 4), q(k + 8), q(k + 12))),
            [0, 1, 2, 3].map(|k| four(s(k), s(k + 4), s(k + 8), s(k + 12))),
        )
    };
    let [x, y, z, w] = transpose16(q);
    let [sx, sy, sz, _] = transpose16(s);
    let rows = super::quat_scale_rows(
        [x, y, z, w],
        [sx, sy, sz],
        _mm512_set1_ps(1.0),
        |a, b| _mm512_add_ps(a, b),
        |a, b| _mm512_sub_ps(a, b),
        |a, b| _mm512_mul_ps(a, b),
    );
    let mut out = [[0.0f32; 16]; 9];
    for (o, r) in out.iter_mut().zip(rows) {
        // SAFETY: each row of `out` holds sixteen floats.
        unsafe { _mm512_storeu_ps(o.as_mut_ptr(), r) };
    }
    out
}

/// Four registers of four floats per 128-bit lane, transposed within each lane: element `k` of
/// output `j` is element `j` of input `k`, in every 128-bit lane. As [`local_rows16`] loads them
/// (transform `k + 4l` in lane `l` of input `k`), element `4l + k` of output `j` is component `j`
/// of transform `4l + k`.
#[inline]
#[target_feature(enable = "avx512f")]
fn transpose16(r: [__m512; 4]) -> [__m512; 4] {
    let t0 = _mm512_unpacklo_ps(r[0], r[1]);
    let t1 = _mm512_unpackhi_ps(r[0], r[1]);
    let t2 = _mm512_unpacklo_ps(r[2], r[3]);
    let t3 = _mm512_unpackhi_ps(r[2], r[3]);
    [
        _mm512_shuffle_ps::<0b01_00_01_00>(t0, t2),
        _mm512_shuffle_ps::<0b11_10_11_10>(t0, t2),
        _mm512_shuffle_ps::<0b01_00_01_00>(t1, t3),
        _mm512_shuffle_ps::<0b11_10_11_10>(t1, t3),
    ]
}

#[cfg(test)]
mod tests {
    use glam::{Quat, Vec3};

    use crate::math::Transform;

    #[test]
    fn the_sixteen_wide_local_rows_are_the_portable_rows_to_the_bit() {
        if !crate::simd::test_gate(crate::simd::SimdLevel::Avx512, "this AVX-512F kernel test") {
            return;
        }
        let t: [Transform; 16] = std::array::from_fn(|k| {
            let f = k as f32;
            Transform {
                translation: Vec3::new(f, 1.0, -2.0),
                rotation: Quat::from_rotation_y(0.4 * f) * Quat::from_rotation_z(0.1 - 0.3 * f),
                scale: Vec3::new(1.0 + 0.1 * f, -0.5, if k == 3 { -0.0 } else { 2.0 }),
            }
        });
        // SAFETY: AVX-512F checked above.
        let rows = unsafe { super::local_rows16(&t) };
        for q in 0..4 {
            let want = super::super::local_soa(&t[4 * q..4 * q + 4]);
            for j in 0..9 {
                for k in 0..4 {
                    assert_eq!(
                        rows[j][4 * q + k].to_bits(),
                        want[j][k].to_bits(),
                        "row {j}, bone {}",
                        4 * q + k
                    );
                }
            }
        }
    }

    #[test]
    fn the_avx512_blend_is_the_scalar_two_layer_blend_to_the_bit() {
        const {
            assert!(
                crate::pose::avx::LINEAR_LAYOUT,
                "a transform's translation and scale should follow its rotation"
            )
        };
        if crate::simd::test_gate(crate::simd::SimdLevel::Avx512, "this AVX-512F kernel test") {
            // SAFETY: AVX-512F (and so AVX) checked just above; the layout asserted above.
            unsafe { super::super::tests::check_blend2_kernel(super::blend2) };
        }
    }

    #[test]
    fn the_avx512_palette_is_the_affine_product_to_the_bit() {
        if crate::simd::test_gate(crate::simd::SimdLevel::Avx512, "this AVX-512F kernel test") {
            // SAFETY: AVX-512F checked just above.
            unsafe { super::super::tests::check_palette_kernel(super::palette) };
        }
    }
}
