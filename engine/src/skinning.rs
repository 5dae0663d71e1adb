//! CPU reference skinning: [`SkinningJob`] blends four palette matrices per vertex and
//! transforms positions, normals and tangents; [`Aabb`] and [`posed_bounds`] bound a posed mesh
//! from joint-local boxes.
//!
//! The job follows the pose jobs' conventions (borrowed inputs, `&mut` outputs, `validate()`,
//! no allocation). The palette is in the vertex joint indices' order, already including the
//! mesh's own frame (for glTF: `inverse(meshWorld) * jointWorld * inverseBind`). Normals and
//! tangents use the blended matrix's upper 3x3 and are renormalized, which is exact for rigid
//! and uniformly scaled joints (the usual case) and not for non-uniform scale. Morphs are applied
//! before this job ([`crate::morph`]); GPU skinning is not here.

use glam::{Mat4, Vec3, Vec3A, Vec4};

/// Why a [`SkinningJob`] cannot run.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SkinningError {
    /// An input or output array has the wrong length.
    #[error("skinning job: {input} has {got} entries, expected {expected}")]
    Length {
        /// Which array.
        input: &'static str,
        /// Expected length.
        expected: usize,
        /// Actual length.
        got: usize,
    },
    /// A vertex names a joint past the end of the palette (the outputs are then unspecified).
    #[error("skinning job: vertex {vertex} names joint {joint}, but the palette has {palette} matrices")]
    JointOutOfRange {
        /// The vertex.
        vertex: usize,
        /// The joint index.
        joint: u16,
        /// Palette length.
        palette: usize,
    },
}

/// Skins vertices with four influences each. Optional attributes are empty slices (then their
/// outputs must be empty too). Weights are used as given (importers normalize them).
#[derive(Debug)]
pub struct SkinningJob<'a> {
    /// Skinning matrices, indexed by the vertices' joint indices.
    pub palette: &'a [Mat4],
    /// Four joint indices per vertex.
    pub joints: &'a [[u16; 4]],
    /// Four weights per vertex.
    pub weights: &'a [[f32; 4]],
    /// Input positions.
    pub positions: &'a [[f32; 3]],
    /// Input normals (or empty).
    pub normals: &'a [[f32; 3]],
    /// Input tangents, handedness in `w` (or empty).
    pub tangents: &'a [[f32; 4]],
    /// Output positions.
    pub out_positions: &'a mut [[f32; 3]],
    /// Output normals (same length as `normals`).
    pub out_normals: &'a mut [[f32; 3]],
    /// Output tangents (same length as `tangents`).
    pub out_tangents: &'a mut [[f32; 4]],
}

fn check(input: &'static str, expected: usize, got: usize) -> Result<(), SkinningError> {
    if expected == got { Ok(()) } else { Err(SkinningError::Length { input, expected, got }) }
}

#[inline(always)]
fn blend(palette: &[Mat4], j: [u16; 4], w: [f32; 4]) -> Option<[Vec4; 4]> {
    let m0 = palette.get(j[0] as usize)?;
    let m1 = palette.get(j[1] as usize)?;
    let m2 = palette.get(j[2] as usize)?;
    let m3 = palette.get(j[3] as usize)?;
    let (w0, w1, w2, w3) = (w[0], w[1], w[2], w[3]);
    Some([
        m0.x_axis * w0 + m1.x_axis * w1 + m2.x_axis * w2 + m3.x_axis * w3,
        m0.y_axis * w0 + m1.y_axis * w1 + m2.y_axis * w2 + m3.y_axis * w3,
        m0.z_axis * w0 + m1.z_axis * w1 + m2.z_axis * w2 + m3.z_axis * w3,
        m0.w_axis * w0 + m1.w_axis * w1 + m2.w_axis * w2 + m3.w_axis * w3,
    ])
}

#[inline(always)]
fn dir(m: &[Vec4; 4], v: Vec3) -> Vec3 {
    let r = m[0] * v.x + m[1] * v.y + m[2] * v.z;
    let r = Vec3A::from_vec4(r);
    let l2 = r.length_squared();
    if l2 > 1e-20 { Vec3::from(r / l2.sqrt()) } else { v }
}

impl SkinningJob<'_> {
    /// Checks that the arrays fit together (joint indices are checked while running).
    pub fn validate(&self) -> Result<(), SkinningError> {
        let n = self.positions.len();
        check("joints", n, self.joints.len())?;
        check("weights", n, self.weights.len())?;
        check("out_positions", n, self.out_positions.len())?;
        if !self.normals.is_empty() {
            check("normals", n, self.normals.len())?;
        }
        check("out_normals", self.normals.len(), self.out_normals.len())?;
        if !self.tangents.is_empty() {
            check("tangents", n, self.tangents.len())?;
        }
        check("out_tangents", self.tangents.len(), self.out_tangents.len())
    }

    /// Validates, then skins every vertex.
    pub fn run(self) -> Result<(), SkinningError> {
        self.validate()?;
        let n = self.positions.len();
        let palette = self.palette;
        let bad = |vertex: usize, j: [u16; 4]| {
            let joint = j.into_iter().find(|&x| x as usize >= palette.len()).unwrap_or(j[0]);
            SkinningError::JointOutOfRange { vertex, joint, palette: palette.len() }
        };
        let has_n = !self.normals.is_empty();
        let has_t = !self.tangents.is_empty();
        if !has_t {
            // Joint indices are checked in one vectorizable pass first, so the hot loop reads the
            // palette without per-influence bounds checks.
            // Flattened, the scan is a plain u16 max reduction, which vectorizes.
            let max = self.joints.as_flattened().iter().copied().max().unwrap_or(0);
            if max as usize >= palette.len() {
                let i = self
                    .joints
                    .iter()
                    .position(|j| j.iter().any(|&x| x as usize >= palette.len()))
                    .unwrap_or(0);
                return Err(bad(i, self.joints[i]));
            }
        }
        #[cfg(target_arch = "x86_64")]
        if has_n && !has_t && std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: AVX-512F checked just above; the joints and lengths as below.
            unsafe {
                avx::positions_normals512(
                    palette,
                    self.joints,
                    self.weights,
                    self.positions,
                    self.normals,
                    self.out_positions,
                    self.out_normals,
                )
            };
            return Ok(());
        }
        #[cfg(target_arch = "x86_64")]
        if has_n
            && !has_t
            && std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: AVX2 and FMA checked just above, every joint index below `palette.len()`
            // (checked above), and the slices of equal lengths (`validate`).
            unsafe {
                avx::positions_normals(
                    palette,
                    self.joints,
                    self.weights,
                    self.positions,
                    self.normals,
                    self.out_positions,
                    self.out_normals,
                )
            };
            return Ok(());
        }
        if !has_n && !has_t {
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx512f") {
                // SAFETY: as below, with AVX-512F checked just above.
                unsafe {
                    avx::positions512(palette, self.joints, self.weights, self.positions, self.out_positions)
                };
                return Ok(());
            }
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
                // SAFETY: the CPU supports AVX2 and FMA (checked just above), every joint index is
                // below `palette.len()` (checked above), and the slices have equal lengths
                // (checked by `validate`).
                unsafe {
                    avx::positions(palette, self.joints, self.weights, self.positions, self.out_positions)
                };
                return Ok(());
            }
            let lanes =
                self.joints.iter().zip(self.weights).zip(self.positions).zip(self.out_positions.iter_mut());
            for (((j, w), p), o) in lanes {
                let [m0, m1, m2, m3] = j.map(|x| &palette[x as usize]);
                let m = [
                    m0.x_axis * w[0] + m1.x_axis * w[1] + m2.x_axis * w[2] + m3.x_axis * w[3],
                    m0.y_axis * w[0] + m1.y_axis * w[1] + m2.y_axis * w[2] + m3.y_axis * w[3],
                    m0.z_axis * w[0] + m1.z_axis * w[1] + m2.z_axis * w[2] + m3.z_axis * w[3],
                    m0.w_axis * w[0] + m1.w_axis * w[1] + m2.w_axis * w[2] + m3.w_axis * w[3],
                ];
                let r = m[0] * p[0] + m[1] * p[1] + m[2] * p[2] + m[3];
                *o = [r.x, r.y, r.z];
            }
            return Ok(());
        }
        for i in 0..n {
            let j = self.joints[i];
            let Some(m) = blend(palette, j, self.weights[i]) else { return Err(bad(i, j)) };
            let p = self.positions[i];
            let r = m[0] * p[0] + m[1] * p[1] + m[2] * p[2] + m[3];
            self.out_positions[i] = [r.x, r.y, r.z];
            if has_n {
                self.out_normals[i] = dir(&m, Vec3::from(self.normals[i])).to_array();
            }
            if has_t {
                let t = self.tangents[i];
                let d = dir(&m, Vec3::new(t[0], t[1], t[2]));
                self.out_tangents[i] = [d.x, d.y, d.z, t[3]];
            }
        }
        Ok(())
    }
}

/// The positions-only loop with AVX2 + FMA: a palette matrix is two 256-bit halves (columns
/// 0-1 and 2-3); four fused multiply-adds per half blend the influences, and one more pair
/// transforms the point.
#[cfg(target_arch = "x86_64")]
mod avx {
    use std::arch::x86_64::*;

    use glam::Mat4;

    /// The four influences' palette matrices blended by their weights, in one 512-bit register.
    ///
    /// # Safety
    /// The CPU must support AVX-512F; `base` must point at a palette holding every joint in `j`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn blend512(base: *const f32, j: &[u16; 4], w: &[f32; 4]) -> __m512 {
        // SAFETY: the caller guarantees the joints index the palette at `base`.
        unsafe {
            let m = |k: usize| _mm512_loadu_ps(base.add(16 * j[k] as usize));
            let mut acc = _mm512_mul_ps(m(0), _mm512_set1_ps(w[0]));
            acc = _mm512_fmadd_ps(m(1), _mm512_set1_ps(w[1]), acc);
            acc = _mm512_fmadd_ps(m(2), _mm512_set1_ps(w[2]), acc);
            _mm512_fmadd_ps(m(3), _mm512_set1_ps(w[3]), acc)
        }
    }

    /// The blended matrix `acc` times `(v, w)` (`w = 1` places a point, `w = 0` turns a
    /// direction): `v` spread over the four columns, multiplied, the columns summed.
    ///
    /// # Safety
    /// The CPU must support AVX-512F.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn transform512(acc: __m512, v: &[f32; 3], w: f32) -> __m128 {
        let spread = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
        let vv = _mm512_permutexvar_ps(spread, _mm512_castps128_ps512(_mm_set_ps(w, v[2], v[1], v[0])));
        let t = _mm512_mul_ps(acc, vv);
        let lo = _mm512_castps512_ps256(t);
        let hi = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(t), 1));
        let s = _mm256_add_ps(lo, hi);
        _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1))
    }

    /// Stores the first three lanes of `r` in `o`.
    ///
    /// # Safety
    /// SSE2 (always on x86-64).
    #[inline]
    unsafe fn store3(o: &mut [f32; 3], r: __m128) {
        // SAFETY: `o` holds three floats: eight bytes then four.
        unsafe {
            let p = o.as_mut_ptr();
            _mm_store_sd(p as *mut f64, _mm_castps_pd(r));
            _mm_store_ss(p.add(2), _mm_movehl_ps(r, r));
        }
    }

    /// Stores `n / |n|` (the first three lanes of `rn`) in `o`, the scalar path's rule: a
    /// zero-length result keeps the input normal `fallback`.
    ///
    /// # Safety
    /// The CPU must support SSE4.1.
    #[inline]
    #[target_feature(enable = "sse4.1")]
    unsafe fn store_unit(o: &mut [f32; 3], rn: __m128, fallback: &[f32; 3]) {
        let l2 = _mm_dp_ps(rn, rn, 0x7f);
        if _mm_cvtss_f32(l2) > 1e-20 {
            // SAFETY: `o` holds three floats.
            unsafe { store3(o, _mm_div_ps(rn, _mm_sqrt_ps(l2))) };
        } else {
            *o = *fallback;
        }
    }

    /// # Safety
    /// The CPU must support AVX-512F; every joint index must be below `palette.len()`; the four
    /// other slices must have the same length.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn positions512(
        palette: &[Mat4],
        joints: &[[u16; 4]],
        weights: &[[f32; 4]],
        positions: &[[f32; 3]],
        out: &mut [[f32; 3]],
    ) {
        let base = palette.as_ptr() as *const f32;
        let n = out.len().min(joints.len()).min(weights.len()).min(positions.len());
        for i in 0..n {
            // SAFETY: i < n, and the caller guarantees the joint indices and the CPU features.
            unsafe {
                let acc = blend512(base, joints.get_unchecked(i), weights.get_unchecked(i));
                store3(out.get_unchecked_mut(i), transform512(acc, positions.get_unchecked(i), 1.0));
            }
        }
    }

    /// Positions and normals with AVX-512F: the blended matrix in one 512-bit register (four
    /// fused multiply-adds, as [`positions512`]); the point `(p, 1)` and the normal `(n, 0)`
    /// each spread over its four columns, multiplied and summed; the normal then normalized
    /// (`n / |n|`, the scalar path's rule; a zero-length result keeps the input).
    ///
    /// # Safety
    /// The CPU must support AVX-512F; every joint index must be below `palette.len()`; the six
    /// other slices must have the same length.
    #[target_feature(enable = "avx512f")]
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn positions_normals512(
        palette: &[Mat4],
        joints: &[[u16; 4]],
        weights: &[[f32; 4]],
        positions: &[[f32; 3]],
        normals: &[[f32; 3]],
        out: &mut [[f32; 3]],
        out_normals: &mut [[f32; 3]],
    ) {
        let base = palette.as_ptr() as *const f32;
        let n = out.len().min(joints.len()).min(weights.len()).min(positions.len());
        let n = n.min(normals.len()).min(out_normals.len());
        for i in 0..n {
            // SAFETY: i < n, and the caller guarantees the joint indices and the CPU features.
            unsafe {
                let nv = normals.get_unchecked(i);
                let acc = blend512(base, joints.get_unchecked(i), weights.get_unchecked(i));
                store3(out.get_unchecked_mut(i), transform512(acc, positions.get_unchecked(i), 1.0));
                store_unit(out_normals.get_unchecked_mut(i), transform512(acc, nv, 0.0), nv);
            }
        }
    }

    /// The four influences' palette matrices blended by their weights, as two 256-bit halves
    /// (columns 0-1 and 2-3).
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA; `base` must point at a palette holding every joint in `j`.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn blend_halves(base: *const f32, j: &[u16; 4], w: &[f32; 4]) -> (__m256, __m256) {
        // SAFETY: the caller guarantees the joints index the palette at `base`.
        unsafe {
            let m = |k: usize| base.add(16 * j[k] as usize);
            let mut lo = _mm256_mul_ps(_mm256_loadu_ps(m(0)), _mm256_set1_ps(w[0]));
            let mut hi = _mm256_mul_ps(_mm256_loadu_ps(m(0).add(8)), _mm256_set1_ps(w[0]));
            for (k, &wk) in w.iter().enumerate().skip(1) {
                let wk = _mm256_set1_ps(wk);
                lo = _mm256_fmadd_ps(_mm256_loadu_ps(m(k)), wk, lo);
                hi = _mm256_fmadd_ps(_mm256_loadu_ps(m(k).add(8)), wk, hi);
            }
            (lo, hi)
        }
    }

    /// The blended matrix (as [`blend_halves`] gives it) times `(v, w)`: `w = 1` places a point,
    /// `w = 0` turns a direction. `[x_axis | y_axis] * [vx | vy] + [z_axis | w_axis] * [vz | w]`.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn transform_halves(lo: __m256, hi: __m256, v: &[f32; 3], w: f32) -> __m128 {
        let xy = _mm256_set_m128(_mm_set1_ps(v[1]), _mm_set1_ps(v[0]));
        let zw = _mm256_set_m128(_mm_set1_ps(w), _mm_set1_ps(v[2]));
        let t = _mm256_fmadd_ps(lo, xy, _mm256_mul_ps(hi, zw));
        _mm_add_ps(_mm256_castps256_ps128(t), _mm256_extractf128_ps(t, 1))
    }

    /// Positions and normals with AVX2 + FMA: the blended matrix as two 256-bit halves (as
    /// [`positions`]), the point through all four columns, the normal through the first three,
    /// then normalized (`n / |n|`, the scalar path's rule; a zero-length result keeps the input).
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA; every joint index must be below `palette.len()`; the
    /// six other slices must have the same length.
    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn positions_normals(
        palette: &[Mat4],
        joints: &[[u16; 4]],
        weights: &[[f32; 4]],
        positions: &[[f32; 3]],
        normals: &[[f32; 3]],
        out: &mut [[f32; 3]],
        out_normals: &mut [[f32; 3]],
    ) {
        let base = palette.as_ptr() as *const f32;
        let n = out.len().min(joints.len()).min(weights.len()).min(positions.len());
        let n = n.min(normals.len()).min(out_normals.len());
        for i in 0..n {
            // SAFETY: i < n, and the caller guarantees the joint indices and the CPU features.
            unsafe {
                let j = joints.get_unchecked(i);
                let w = weights.get_unchecked(i);
                let p = positions.get_unchecked(i);
                let nv = normals.get_unchecked(i);
                let (lo, hi) = blend_halves(base, j, w);
                store3(out.get_unchecked_mut(i), transform_halves(lo, hi, p, 1.0));
                store_unit(out_normals.get_unchecked_mut(i), transform_halves(lo, hi, nv, 0.0), nv);
            }
        }
    }

    /// # Safety
    /// The CPU must support AVX2 and FMA; every joint index must be below `palette.len()`; the
    /// four other slices must have the same length.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn positions(
        palette: &[Mat4],
        joints: &[[u16; 4]],
        weights: &[[f32; 4]],
        positions: &[[f32; 3]],
        out: &mut [[f32; 3]],
    ) {
        let base = palette.as_ptr() as *const f32;
        let n = out.len().min(joints.len()).min(weights.len()).min(positions.len());
        for i in 0..n {
            // SAFETY: i < n, and the caller guarantees the joint indices and the CPU features.
            unsafe {
                let j = joints.get_unchecked(i);
                let w = weights.get_unchecked(i);
                let p = positions.get_unchecked(i);
                let (lo, hi) = blend_halves(base, j, w);
                store3(out.get_unchecked_mut(i), transform_halves(lo, hi, p, 1.0));
            }
        }
    }
}

/// An axis-aligned box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Aabb {
    /// Minimum corner.
    pub min: Vec3,
    /// Maximum corner.
    pub max: Vec3,
}

impl Aabb {
    /// The box around one point.
    pub fn point(p: Vec3) -> Self {
        Self { min: p, max: p }
    }

    /// Grows the box to hold `p`.
    pub fn grow(&mut self, p: Vec3) {
        self.min = self.min.min(p);
        self.max = self.max.max(p);
    }

    /// The smallest box holding both.
    pub fn union(self, other: Aabb) -> Aabb {
        Aabb { min: self.min.min(other.min), max: self.max.max(other.max) }
    }

    /// The box around this box's eight corners transformed by `m`.
    pub fn transformed(&self, m: &Mat4) -> Aabb {
        let c = (self.min + self.max) * 0.5;
        let e = (self.max - self.min) * 0.5;
        let center = m.transform_point3(c);
        let ext = m.x_axis.truncate().abs() * e.x
            + m.y_axis.truncate().abs() * e.y
            + m.z_axis.truncate().abs() * e.z;
        Aabb { min: center - ext, max: center + ext }
    }
}

/// Bounds of a posed skinned mesh: each joint's local box (from the vertices it influences) moved
/// by its skinning matrix's joint part, unioned. `joint_bounds[j]` is in joint `j`'s bind space
/// (`inverseBind * p`); `joint_world[j]` places joint `j`. `None` when no joint has a box.
pub fn posed_bounds(joint_bounds: &[Option<Aabb>], joint_world: &[Mat4]) -> Option<Aabb> {
    joint_bounds.iter().zip(joint_world).filter_map(|(b, m)| b.map(|b| b.transformed(m))).reduce(Aabb::union)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_positions_and_normals_fast_path_matches_the_general_loop() {
        // Normals alone take the AVX2 path where the CPU has it; adding tangents forces the
        // general loop. Both must agree (within rounding: fused multiply-adds round once).
        let palette: Vec<Mat4> = (0..64)
            .map(|i| {
                Mat4::from_scale_rotation_translation(
                    glam::Vec3::splat(1.0 + i as f32 * 0.01),
                    glam::Quat::from_rotation_y(i as f32 * 0.1) * glam::Quat::from_rotation_x(0.3),
                    glam::Vec3::new(i as f32, 0.5, -1.0),
                )
            })
            .collect();
        let n = 1000;
        let joints: Vec<[u16; 4]> =
            (0..n).map(|i| [(i % 64) as u16, ((i * 7) % 64) as u16, ((i * 13) % 64) as u16, 0]).collect();
        let weights: Vec<[f32; 4]> = (0..n)
            .map(|i| {
                let a = (i % 10) as f32 / 10.0;
                [0.5 * a, 0.5 * (1.0 - a), 0.5, 0.0]
            })
            .collect();
        let positions: Vec<[f32; 3]> = (0..n).map(|i| [i as f32 * 0.01, 1.0, -(i as f32) * 0.02]).collect();
        let mut normals: Vec<[f32; 3]> =
            (0..n).map(|i| Vec3::new(1.0, i as f32 * 0.1, 0.5).normalize().to_array()).collect();
        normals[3] = [0.0; 3]; // zero length: kept as given
        let tangents = vec![[1.0, 0.0, 0.0, 1.0]; n];
        let (mut p1, mut n1) = (vec![[0.0; 3]; n], vec![[0.0; 3]; n]);
        let (mut p2, mut n2, mut t2) = (vec![[0.0; 3]; n], vec![[0.0; 3]; n], vec![[0.0; 4]; n]);
        SkinningJob {
            palette: &palette,
            joints: &joints,
            weights: &weights,
            positions: &positions,
            normals: &normals,
            tangents: &[],
            out_positions: &mut p1,
            out_normals: &mut n1,
            out_tangents: &mut [],
        }
        .run()
        .unwrap();
        SkinningJob {
            palette: &palette,
            joints: &joints,
            weights: &weights,
            positions: &positions,
            normals: &normals,
            tangents: &tangents,
            out_positions: &mut p2,
            out_normals: &mut n2,
            out_tangents: &mut t2,
        }
        .run()
        .unwrap();
        for i in 0..n {
            assert!(Vec3::from(p1[i]).abs_diff_eq(Vec3::from(p2[i]), 1e-4), "position {i}");
            assert!(
                Vec3::from(n1[i]).abs_diff_eq(Vec3::from(n2[i]), 1e-5),
                "normal {i}: {:?} vs {:?}",
                n1[i],
                n2[i]
            );
        }
        assert_eq!(n1[3], [0.0; 3]);
        // A joint past the palette is still refused on the fast path.
        let mut bad = joints.clone();
        bad[500][2] = 64;
        let err = SkinningJob {
            palette: &palette,
            joints: &bad,
            weights: &weights,
            positions: &positions,
            normals: &normals,
            tangents: &[],
            out_positions: &mut p1,
            out_normals: &mut n1,
            out_tangents: &mut [],
        }
        .run()
        .unwrap_err();
        assert!(matches!(err, SkinningError::JointOutOfRange { vertex: 500, joint: 64, .. }), "{err}");
    }

    #[test]
    fn blends_four_influences_and_reports_bad_joint() {
        let palette = [Mat4::from_translation(Vec3::X), Mat4::from_translation(Vec3::Y)];
        let mut out = [[0.0; 3]; 2];
        let err = SkinningJob {
            palette: &palette,
            joints: &[[0, 1, 0, 0], [0, 2, 0, 0]],
            weights: &[[0.25, 0.75, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]],
            positions: &[[1.0, 1.0, 1.0], [0.0; 3]],
            normals: &[],
            tangents: &[],
            out_positions: &mut out,
            out_normals: &mut [],
            out_tangents: &mut [],
        }
        .run()
        .unwrap_err();
        assert_eq!(err, SkinningError::JointOutOfRange { vertex: 1, joint: 2, palette: 2 });
        let mut out = [[0.0; 3]];
        let mut nrm = [[0.0; 3]];
        for normals in [&[][..], &[[0.0, 0.0, 1.0]][..]] {
            SkinningJob {
                palette: &palette,
                joints: &[[0, 1, 0, 0]],
                weights: &[[0.25, 0.75, 0.0, 0.0]],
                positions: &[[1.0, 1.0, 1.0]],
                normals,
                tangents: &[],
                out_positions: &mut out,
                out_normals: if normals.is_empty() { &mut [] } else { &mut nrm },
                out_tangents: &mut [],
            }
            .run()
            .unwrap();
            assert_eq!(out[0], [1.25, 1.75, 1.0]);
        }
        assert_eq!(nrm[0], [0.0, 0.0, 1.0]);
    }
}
