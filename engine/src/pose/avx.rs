//! Pose kernels with AVX (256-bit): the local matrices of eight bones at once for the
//! local-to-model loop.
//!
//! Eight rotations are loaded as four registers (bones `k` and `k + 4` in the two halves),
//! transposed in-lane to x, y, z, w rows, and turned into the upper 3x3 with the portable path's
//! arithmetic ([`super::local_soa`]: glam's `Mat3A::from_quat`, then the scale per column), so
//! the rows are the same to the bit, eight bones per instruction.
//!
//! Not here: choosing the path (see [`super::LocalToModelJob::run`]).

use std::arch::x86_64::*;

use crate::math::Transform;

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
/// is element `j` of input `k` (and the same in the upper half).
#[inline]
#[target_feature(enable = "avx")]
fn transpose(r: [__m256; 4]) -> [__m256; 4] {
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
