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
//! eight (one square root and four divisions serve eight bones), the next group's sums issued
//! before this group's divisions; a bone's translation and scale blended with one unaligned
//! eight-float access from its rotation's z (the six floats after the rotation, where the
//! compiler puts them: [`LINEAR_LAYOUT`]), so the pose keeps its array-of-structs layout and
//! the struct's padding is never read or written. The hemisphere test, the weighted sum and the
//! normalization run in [`super::blend2_one`]'s order (dots `(x + z) + (y + w)`, separate
//! products and sums, a division by the length), so the result is the scalar path's to the bit.
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

/// True when a transform's translation and scale fill the six floats after its rotation: the
/// rotation at byte 0, the translation and the scale at bytes 16 and 28 (in either order), 48
/// bytes in all. Then the eight floats from byte 8 are the rotation's z and w and those six, and
/// [`blend2`] reads and writes a transform's translation and scale with one unaligned access each,
/// never touching the struct's padding (bytes 40-47).
pub(super) const LINEAR_LAYOUT: bool = size_of::<Transform>() == 48
    && offset_of!(Transform, rotation) == 0
    && matches!((offset_of!(Transform, translation), offset_of!(Transform, scale)), (16, 28) | (28, 16));

/// Where a transform's eight-float window of translation and scale starts (the rotation's z).
const LINEAR_AT: usize = 2;

/// In every 128-bit half, the sum of its four floats in glam's `Vec4::dot` order
/// (`(x + z) + (y + w)`), in all four places.
#[inline]
#[target_feature(enable = "avx")]
fn half_sums(p: __m256) -> __m256 {
    let s = _mm256_add_ps(p, _mm256_permute_ps::<0b01_00_11_10>(p));
    _mm256_add_ps(s, _mm256_permute_ps::<0b10_11_00_01>(s))
}

/// The first half of eight bones' rotation blend (bones `8g` to `8g + 7`, from float `base`):
/// the rotations read into the halves of four registers (bones `k` and `k + 4` share one),
/// transposed to x, y, z, w rows of eight, flipped into `a`'s hemisphere and weighted; returns
/// the weighted sums' rows and their lengths (the square root under way).
///
/// # Safety
/// The CPU must support AVX; the 96 floats from `base` lie inside both inputs.
#[inline]
#[target_feature(enable = "avx")]
unsafe fn rotation_sums(pa: *const f32, pb: *const f32, base: usize, w: &Weights) -> ([__m256; 4], __m256) {
    // SAFETY: rotations of bones 0-7 of the group, inside both inputs (the caller's guarantee).
    let load = |p: *const f32, k: usize| unsafe {
        _mm256_loadu2_m128(p.add(base + 12 * (k + 4)), p.add(base + 12 * k))
    };
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
    (r, len)
}

/// Bone `t`'s translation and scale blended (`a * wa + b * wb`, the weights splat in `wa`,
/// `wb`), written with the eight-float window from its rotation's z ([`LINEAR_LAYOUT`]): the
/// rotation's z and w are written too, with a value the caller overwrites afterwards. Shared
/// with the AVX-512 kernel.
///
/// # Safety
/// The CPU must support AVX; [`LINEAR_LAYOUT`] must hold; bone `t` lies inside all three slices.
#[inline]
#[target_feature(enable = "avx")]
pub(super) unsafe fn linear(
    pa: *const f32,
    pb: *const f32,
    po: *mut f32,
    t: usize,
    (wa, wb): (__m256, __m256),
) {
    let at = 12 * t + LINEAR_AT;
    // SAFETY: floats 2-9 of bone t: its rotation's z and w, translation and scale, no padding.
    unsafe {
        let lin = _mm256_add_ps(
            _mm256_mul_ps(_mm256_loadu_ps(pa.add(at)), wa),
            _mm256_mul_ps(_mm256_loadu_ps(pb.add(at)), wb),
        );
        _mm256_storeu_ps(po.add(at), lin);
    }
}

/// `out[i] = blend2_one(a[i], b[i], wa, wb)` for every bone; the lengths are even.
///
/// Eight bones at a time ([`rotation_sums`]: rotations transposed to rows of eight, as ozz keeps
/// them, so one square root and four divisions serve eight bones), software-pipelined: the next
/// group's sums and square root are issued before this group's translations and scales (one
/// unaligned eight-float access per bone, [`LINEAR_LAYOUT`]) and divisions, so the divider's
/// latency is hidden behind independent work. A length not above 1e-12 (`b`'s rotation is
/// taken) is rare: it is set after the group's stores. Bones left over after the last group of
/// eight go one pair to a register.
///
/// # Safety
/// The CPU must support AVX; [`LINEAR_LAYOUT`] must hold; the three slices must have the same
/// length, a multiple of two.
#[target_feature(enable = "avx")]
pub(super) unsafe fn blend2(a: &[Transform], b: &[Transform], wa: f32, wb: f32, out: &mut [Transform]) {
    let n = out.len().min(a.len()).min(b.len()) / 2 * 2;
    let (pa, pb) = (a.as_ptr() as *const f32, b.as_ptr() as *const f32);
    let po = out.as_mut_ptr() as *mut f32;
    let w = Weights::new(wa, wb);
    let groups = n / 8;
    if groups > 0 {
        // SAFETY: group 0's 96 floats lie inside both inputs (groups > 0).
        let (mut r, mut len) = unsafe { rotation_sums(pa, pb, 0, &w) };
        for g in 0..groups {
            let base = 96 * g;
            // SAFETY: g + 1 < groups, so the next group lies inside both inputs.
            let next =
                if g + 1 < groups { unsafe { rotation_sums(pa, pb, base + 96, &w) } } else { (r, len) };
            for t in 8 * g..8 * g + 8 {
                // SAFETY: t < 8 * groups <= n; LINEAR_LAYOUT is the caller's guarantee.
                unsafe { linear(pa, pb, po, t, (w.a, w.b)) };
            }
            let ok = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_GT_OQ>(len, w.tiny));
            let q = transpose([0, 1, 2, 3].map(|k| _mm256_div_ps(r[k], len)));
            for (k, q) in q.into_iter().enumerate() {
                // SAFETY: bones 8g + k and 8g + k + 4 lie inside the output; written after
                // their translations and scales, over the rotation lanes `linear` wrote.
                unsafe { _mm256_storeu2_m128(po.add(base + 12 * (k + 4)), po.add(base + 12 * k), q) };
            }
            if ok != 0xFF {
                // Register k held bones k and k + 4 in its halves, so lane k of the rows is
                // bone k of the group.
                for t in (0..8).filter(|k| ok & (1 << k) == 0).map(|k| 8 * g + k) {
                    // SAFETY: t < n; written through the output's pointer, as every store here.
                    unsafe { (*(po as *mut Transform).add(t)).rotation = b[t].rotation };
                }
            }
            (r, len) = next;
        }
    }
    for p in groups * 4..n / 2 {
        let (t0, t1) = (2 * p, 2 * p + 1);
        // SAFETY: t1 < n, so both bones lie inside each slice; their translations and scales
        // are written before their rotations.
        unsafe {
            linear(pa, pb, po, t0, (w.a, w.b));
            linear(pa, pb, po, t1, (w.a, w.b));
            let load = |p: *const f32| _mm256_loadu2_m128(p.add(12 * t1), p.add(12 * t0));
            let (qa, qb) = (load(pa), load(pb));
            let flip = _mm256_cmp_ps::<_CMP_LT_OQ>(half_sums(_mm256_mul_ps(qa, qb)), w.zero);
            let wq = _mm256_blendv_ps(w.b, w.nb, flip);
            let r = _mm256_add_ps(_mm256_mul_ps(qa, w.a), _mm256_mul_ps(qb, wq));
            let len = _mm256_sqrt_ps(half_sums(_mm256_mul_ps(r, r)));
            let ok = _mm256_cmp_ps::<_CMP_GT_OQ>(len, w.tiny);
            let q = _mm256_blendv_ps(qb, _mm256_div_ps(r, len), ok);
            _mm256_storeu2_m128(po.add(12 * t1), po.add(12 * t0), q);
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
        // The AVX blend runs only where this holds: a layout change would silently take the
        // portable path.
        const { assert!(super::LINEAR_LAYOUT, "a transform's translation and scale should follow its rotation") };
        if crate::simd::test_gate(crate::simd::SimdLevel::Avx2, "this AVX kernel test") {
            // SAFETY: AVX checked just above; the layout asserted above.
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
