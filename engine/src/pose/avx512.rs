//! The palette product with AVX-512F: one bone's `model * inverse_bind` in one 512-bit register.
//!
//! Each 128-bit lane of the register is one output column. The model's columns are broadcast to
//! all four lanes straight from memory, the inverse bind's x, y and z are spread across each
//! lane with an in-lane shuffle, and the sum runs in [`super::affine_product`]'s order (products,
//! then additions, no fused multiply-add; the model's translation added to the fourth column
//! only), so the result is the scalar path's to the bit.
//!
//! Not here: choosing the path (see [`super::PaletteJob::run`]).

use std::arch::x86_64::*;

use glam::Mat4;

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

#[cfg(test)]
mod tests {
    use glam::{Mat4, Quat, Vec3};

    use super::super::affine_product;

    #[test]
    fn the_avx512_palette_is_the_affine_product_to_the_bit() {
        if !std::arch::is_x86_feature_detected!("avx512f") {
            eprintln!("SKIPPED: this CPU has no AVX-512F");
            return;
        }
        let mut model = Vec::new();
        let mut ib = Vec::new();
        for i in 0..37 {
            let f = i as f32;
            model.push(Mat4::from_scale_rotation_translation(
                Vec3::new(1.0 + f * 0.01, 0.9, 1.1),
                Quat::from_rotation_y(f * 0.3) * Quat::from_rotation_x(f * 0.11),
                Vec3::new(f, -0.5 * f, 0.25),
            ));
            ib.push(
                Mat4::from_scale_rotation_translation(
                    Vec3::splat(0.5),
                    Quat::from_rotation_z(f * 0.2),
                    Vec3::new(-f, 0.0, 2.0),
                )
                .inverse(),
            );
        }
        // Signed zeros survive: a column of -0.0 times zeros stays -0.0 where the scalar path's does.
        model[3] = Mat4::from_cols_array(&[
            -0.0, 0.0, -0.0, 0.0, 0.0, -0.0, 0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, -0.0, -0.0, 1.0,
        ]);
        ib[3] = Mat4::IDENTITY;
        let mut out = vec![Mat4::ZERO; model.len()];
        // SAFETY: AVX-512F checked above; equal lengths.
        unsafe { super::palette(&model, &ib, &mut out) };
        for i in 0..model.len() {
            let want = affine_product(&model[i], &ib[i]);
            let (a, b) = (out[i].to_cols_array(), want.to_cols_array());
            for k in 0..16 {
                assert_eq!(a[k].to_bits(), b[k].to_bits(), "bone {i} element {k}: {} vs {}", a[k], b[k]);
            }
        }
    }
}
