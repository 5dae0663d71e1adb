//! Pose kernels with AVX-512F: the palette product and the two-layer blend.
//!
//! **Palette**: one bone's `model * inverse_bind` in one 512-bit register. Each 128-bit lane of the register is one output column. The model's columns are broadcast to
//! all four lanes straight from memory, the inverse bind's x, y and z are spread across each
//! lane with an in-lane shuffle, and the sum runs in [`super::affine_product`]'s order (products,
//! then additions, no fused multiply-add; the model's translation added to the fourth column
//! only), so the result is the scalar path's to the bit.
//!
//! **Two-layer blend**: four [`Transform`]s (192 bytes) are three registers, read and written in
//! place with masked loads and stores (the structs' padding is never read or written), so the
//! pose keeps its array-of-structs layout. Translations and scales are blended where they lie.
//! A transform's rotation sits on a 16-byte boundary, so the four rotations of a group fall in
//! four different 128-bit lanes of the three registers (lane `(3k + r) mod 4` for transform `k`):
//! two masked blends gather them into one register, where the hemisphere test, the weighted sum
//! and the normalization (one square root and one division for four bones) run, and one masked
//! blend per register puts them back. Dots and lengths sum in glam's order (`(x + z) + (y + w)`),
//! products and sums are separate (no fused multiply-add) and the normalization divides, so the
//! result is [`super::blend2_one`]'s to the bit.
//!
//! Not here: choosing the path (see [`super::PaletteJob::run`] and [`super::BlendingJob::run`]).

use std::arch::x86_64::*;
use std::mem::{offset_of, size_of};

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

/// True when [`Transform`] has the layout [`blend2`] assumes: 48 bytes with the rotation on a
/// 16-byte boundary (glam's SIMD `Quat`). With glam's scalar math the portable path runs.
pub(super) const BLEND_LAYOUT: bool =
    size_of::<Transform>() == 48 && offset_of!(Transform, rotation) % 16 == 0;

/// The float lanes of four consecutive transforms (48 floats) that hold `len` floats at byte
/// `offset` of each, as bits of a 48-bit mask.
const fn lanes_of_four(offset: usize, len: usize) -> u64 {
    let mut mask = 0u64;
    let mut k = 0;
    while k < 4 {
        let mut j = 0;
        while j < len {
            mask |= 1 << (12 * k + offset / 4 + j);
            j += 1;
        }
        k += 1;
    }
    mask
}

const ROTATION_LANES: u64 = lanes_of_four(offset_of!(Transform, rotation), 4);
const DATA_LANES: u64 = ROTATION_LANES
    | lanes_of_four(offset_of!(Transform, translation), 3)
    | lanes_of_four(offset_of!(Transform, scale), 3);

/// The 16 lanes of `mask` that register `j` of a four-transform group covers.
const fn part(mask: u64, j: usize) -> __mmask16 {
    ((mask >> (16 * j)) & 0xFFFF) as __mmask16
}

/// In every 128-bit lane, the sum of its four floats in glam's `Vec4::dot` order
/// (`(x + z) + (y + w)`), in all four places.
#[inline]
#[target_feature(enable = "avx512f")]
fn lane_sums(p: __m512) -> __m512 {
    let s = _mm512_add_ps(p, _mm512_permute_ps(p, 0b01_00_11_10));
    _mm512_add_ps(s, _mm512_permute_ps(s, 0b10_11_00_01))
}

/// `out[i] = blend2_one(a[i], b[i], wa, wb)` for every bone; the lengths are a multiple of 4.
///
/// # Safety
/// The CPU must support AVX-512F; [`BLEND_LAYOUT`] must hold; the three slices must have the
/// same length, a multiple of four.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn blend2(a: &[Transform], b: &[Transform], wa: f32, wb: f32, out: &mut [Transform]) {
    let groups = out.len().min(a.len()).min(b.len()) / 4;
    let (pa, pb) = (a.as_ptr() as *const f32, b.as_ptr() as *const f32);
    let po = out.as_mut_ptr() as *mut f32;
    let data = [part(DATA_LANES, 0), part(DATA_LANES, 1), part(DATA_LANES, 2)];
    let rot = [part(ROTATION_LANES, 0), part(ROTATION_LANES, 1), part(ROTATION_LANES, 2)];
    let (va, vb, nb) = (_mm512_set1_ps(wa), _mm512_set1_ps(wb), _mm512_set1_ps(-wb));
    let (zero, tiny) = (_mm512_setzero_ps(), _mm512_set1_ps(1e-12));
    for g in 0..groups {
        // SAFETY: g < groups, so the group's 48 floats lie inside each slice; only the lanes of
        // the transforms' fields are read or written (`data`), never their padding.
        unsafe {
            let load = |p: *const f32, j: usize| _mm512_maskz_loadu_ps(data[j], p.add(48 * g + 16 * j));
            let (a0, a1, a2) = (load(pa, 0), load(pa, 1), load(pa, 2));
            let (b0, b1, b2) = (load(pb, 0), load(pb, 1), load(pb, 2));
            // The four rotations of each side in one register, each in its own 128-bit lane.
            let gather = |r0, r1, r2| _mm512_mask_blend_ps(rot[2], _mm512_mask_blend_ps(rot[1], r0, r1), r2);
            let (qa, qb) = (gather(a0, a1, a2), gather(b0, b1, b2));
            let flip = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(lane_sums(_mm512_mul_ps(qa, qb)), zero);
            let wq = _mm512_mask_mov_ps(vb, flip, nb);
            let r = _mm512_add_ps(_mm512_mul_ps(qa, va), _mm512_mul_ps(qb, wq));
            let len = _mm512_sqrt_ps(lane_sums(_mm512_mul_ps(r, r)));
            let ok = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(len, tiny);
            let q = _mm512_mask_mov_ps(qb, ok, _mm512_div_ps(r, len));
            let blend = |x, y, j: usize| {
                let lin = _mm512_add_ps(_mm512_mul_ps(x, va), _mm512_mul_ps(y, vb));
                _mm512_mask_storeu_ps(po.add(48 * g + 16 * j), data[j], _mm512_mask_mov_ps(lin, rot[j], q));
            };
            blend(a0, b0, 0);
            blend(a1, b1, 1);
            blend(a2, b2, 2);
        }
    }
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
    fn the_rotation_lanes_of_four_transforms_are_four_different_128_bit_lanes() {
        const { assert!(super::BLEND_LAYOUT, "glam's Quat should be 16-byte aligned here") };
        let mut seen = 0u8;
        for k in 0..4 {
            let first = 12 * k + (super::ROTATION_LANES >> (12 * k)).trailing_zeros() as usize;
            let lane = (first % 16) / 4;
            assert_eq!(first % 4, 0);
            seen |= 1 << lane;
        }
        assert_eq!(seen, 0b1111);
        assert_eq!(super::DATA_LANES.count_ones(), 40);
    }

    #[test]
    fn the_avx512_blend_is_the_scalar_two_layer_blend_to_the_bit() {
        if crate::simd::test_gate(crate::simd::SimdLevel::Avx512, "this AVX-512F kernel test") {
            // SAFETY: AVX-512F checked just above; the layout holds (asserted by the test above).
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
