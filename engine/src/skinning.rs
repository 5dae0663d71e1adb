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
        #[cfg(target_arch = "x86_64")]
        if self.tangents.is_empty() || !self.normals.is_empty() {
            let n = self.positions.len();
            let palette = self.palette;
            let bad = |vertex: usize, j: [u16; 4]| joint_out_of_range(palette.len(), vertex, j);
            let (has_n, has_t) = (!self.normals.is_empty(), !self.tangents.is_empty());
            // The SIMD loops read a matrix as two 32-byte halves (AVX2) or one 64-byte load
            // (AVX-512): from a palette not on a 64-byte boundary some of those reads cross a
            // cache line (8% of the AVX2 loop at 100k vertices for a 16-byte-aligned `Vec`), so
            // a small palette is copied to an aligned buffer on the stack first.
            let mut aligned = std::mem::MaybeUninit::<AlignedPalette>::uninit();
            let palette = aligned_palette(palette, n, &mut aligned);
            let first_bad = |from: usize| {
                let i = from
                    + self.joints[from..]
                        .iter()
                        .position(|j| j.iter().any(|&x| x as usize >= palette.len()))
                        .unwrap_or(0);
                bad(i, self.joints[i])
            };
            // Positions and normals take the AVX2 loop on Intel CPUs (`simd::wide_kernels`: the
            // AVX-512 one measured 10-20% slower on an Emerald Rapids Xeon).
            // Tangents (with normals) take the AVX2 loop at either level.
            if crate::simd::avx512() && !has_t && (!has_n || crate::simd::wide_kernels()) {
                // The AVX-512 loops check the joints block by block as they go (a separate pass
                // over the array cost 12% at a million vertices: the indices came from memory
                // twice).
                // SAFETY: the level is avx512, so the CPU has AVX-512F and AVX2 (`simd::level`); the slices' lengths by `validate`.
                let done = unsafe {
                    if has_n {
                        avx::positions_normals512(
                            palette,
                            self.joints,
                            self.weights,
                            self.positions,
                            self.normals,
                            self.out_positions,
                            self.out_normals,
                        )
                    } else {
                        avx::positions512(
                            palette,
                            self.joints,
                            self.weights,
                            self.positions,
                            self.out_positions,
                        )
                    }
                };
                return done.map_err(first_bad);
            }
            if crate::simd::avx2() {
                // The AVX2 loops check the joint indices a block ahead of their palette reads,
                // as the AVX-512 loops check theirs (no separate pass over the array).
                // SAFETY: the level is avx2 or above (AVX2 and FMA, `simd::level`); the slices'
                // lengths by `validate`.
                let done = unsafe {
                    if has_t {
                        avx::positions_normals_tangents(
                            palette,
                            self.joints,
                            self.weights,
                            self.positions,
                            (self.normals, self.out_normals),
                            (self.tangents, self.out_tangents),
                            self.out_positions,
                        )
                    } else if has_n {
                        avx::positions_normals(
                            palette,
                            self.joints,
                            self.weights,
                            self.positions,
                            self.normals,
                            self.out_positions,
                            self.out_normals,
                        )
                    } else {
                        avx::positions(palette, self.joints, self.weights, self.positions, self.out_positions)
                    }
                };
                return done.map_err(first_bad);
            }
        }
        // Tangents without normals, or a CPU without the SIMD paths.
        self.run_general()
    }

    /// The general loop over validated inputs: one vertex at a time, bounds checked, a
    /// direction divided by its length. [`run`](Self::run)'s path for tangents without
    /// normals and on CPUs without the SIMD loops, and what the SIMD loops are tested against.
    fn run_general(self) -> Result<(), SkinningError> {
        let n = self.positions.len();
        let palette = self.palette;
        let bad = |vertex: usize, j: [u16; 4]| joint_out_of_range(palette.len(), vertex, j);
        let (has_n, has_t) = (!self.normals.is_empty(), !self.tangents.is_empty());
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

/// The error for vertex `vertex`, whose joints `j` name one past a palette of `len` matrices
/// (the first such joint).
fn joint_out_of_range(len: usize, vertex: usize, j: [u16; 4]) -> SkinningError {
    let joint = j.into_iter().find(|&x| x as usize >= len).unwrap_or(j[0]);
    SkinningError::JointOutOfRange { vertex, joint, palette: len }
}

/// The most matrices [`aligned_palette`] copies (16 KiB of stack).
const ALIGNED_PALETTE: usize = 256;

/// Stack room for a palette of up to [`ALIGNED_PALETTE`] matrices on a 64-byte boundary.
#[repr(C, align(64))]
struct AlignedPalette([std::mem::MaybeUninit<Mat4>; ALIGNED_PALETTE]);

/// `palette` itself when it starts on a 64-byte boundary, is larger than [`ALIGNED_PALETTE`]
/// or serves fewer than sixteen vertices per matrix (the copy would cost more than it saves);
/// else a copy of it in `room`, on a 64-byte boundary. The same matrices either way.
#[cfg(target_arch = "x86_64")]
fn aligned_palette<'a>(
    palette: &'a [Mat4],
    vertices: usize,
    room: &'a mut std::mem::MaybeUninit<AlignedPalette>,
) -> &'a [Mat4] {
    let len = palette.len();
    if (palette.as_ptr() as usize).is_multiple_of(64) || len > ALIGNED_PALETTE || vertices < 16 * len {
        return palette;
    }
    let dst = room.as_mut_ptr() as *mut Mat4;
    // SAFETY: `room` holds ALIGNED_PALETTE >= len matrices and does not overlap `palette`
    // (it is this function's exclusive borrow); the first `len` are written here before the
    // slice over them is made, and it lives as long as `room`'s borrow.
    unsafe {
        std::ptr::copy_nonoverlapping(palette.as_ptr(), dst, len);
        std::slice::from_raw_parts(dst, len)
    }
}

/// The SIMD loops. With AVX-512F a vertex's blended matrix is one 512-bit register; sixteen
/// vertices go together, four at a time through the column sums, their points stored as three
/// full registers and their normals normalized sixteen-wide. With AVX2 + FMA a palette matrix is
/// two 256-bit halves (columns 0-1 and 2-3), vertices go eight to a block ([`avx::skin8`]: each
/// matrix blended a pair ahead, two vertices' points and normals through one register of
/// paired columns, a block's normals normalized together in registers before they are stored;
/// with tangents, a block's eight tangents normalized together after its normals).
#[cfg(target_arch = "x86_64")]
mod avx {
    use std::arch::x86_64::*;

    use glam::Mat4;

    /// True when every joint index in `joints` is below `limit` (flattened, a u16 max
    /// reduction, which vectorizes).
    #[inline(always)]
    pub(super) fn in_range(joints: &[[u16; 4]], limit: usize) -> bool {
        (joints.as_flattened().iter().copied().max().unwrap_or(0) as usize) < limit
    }

    /// The palette matrices of a vertex's four joints (`base` + 16 floats per joint): the four
    /// indices read as one `u64` and split with shifts, integer work, so the compiler does not
    /// widen them in a vector register and extract each lane again on the way to the addresses.
    ///
    /// # Safety
    /// `base` must point at a palette holding every joint in `j`.
    #[inline(always)]
    unsafe fn matrices(base: *const f32, j: &[u16; 4]) -> [*const f32; 4] {
        // SAFETY: `[u16; 4]` and `[u8; 8]` have the same size and any bits are valid for both.
        let bits = u64::from_le_bytes(unsafe { std::mem::transmute::<[u16; 4], [u8; 8]>(*j) });
        // SAFETY: the caller guarantees every joint indexes the palette.
        std::array::from_fn(|k| unsafe { base.add(16 * ((bits >> (16 * k)) & 0xffff) as usize) })
    }

    /// The four influences' palette matrices blended by their weights, in one 512-bit register.
    ///
    /// # Safety
    /// The CPU must support AVX-512F; `base` must point at a palette holding every joint in `j`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn blend512(base: *const f32, j: &[u16; 4], w: &[f32; 4]) -> __m512 {
        // SAFETY: the caller guarantees the joints index the palette at `base`.
        unsafe {
            let rows = matrices(base, j);
            let m = |k: usize| _mm512_loadu_ps(rows[k]);
            let mut acc = _mm512_mul_ps(m(0), _mm512_set1_ps(w[0]));
            acc = _mm512_fmadd_ps(m(1), _mm512_set1_ps(w[1]), acc);
            acc = _mm512_fmadd_ps(m(2), _mm512_set1_ps(w[2]), acc);
            _mm512_fmadd_ps(m(3), _mm512_set1_ps(w[3]), acc)
        }
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

    /// Positions with AVX-512F, sixteen vertices at a time: the block's joint indices checked
    /// (they are then in cache for the palette reads: no separate pass over the array), each
    /// vertex's blended matrix in one 512-bit register ([`blend512`]), four vertices' points
    /// through them together ([`points4`]), and sixteen points stored as three full registers
    /// ([`store_xyz16`]). The last vertices take the same steps one at a time. Stops at the
    /// first block (or last vertex) naming a joint past the palette and returns where it starts;
    /// the outputs from there on are not written.
    ///
    /// # Safety
    /// The CPU must support AVX-512F and AVX2; the four other slices must hold at least as many
    /// entries as `out` (`positions` may hold more).
    #[target_feature(enable = "avx512f,avx2")]
    pub(super) unsafe fn positions512(
        palette: &[Mat4],
        joints: &[[u16; 4]],
        weights: &[[f32; 4]],
        positions: &[[f32; 3]],
        out: &mut [[f32; 3]],
    ) -> Result<(), usize> {
        let base = palette.as_ptr() as *const f32;
        let n = out.len().min(joints.len()).min(weights.len()).min(positions.len());
        let pp = positions.as_ptr() as *const f32;
        // SAFETY (the closure and the blocks below): indices stay below n, every vertex passed
        // to it has had its joints checked, and the caller guarantees the CPU features.
        let blended = |i: usize| unsafe { blend512(base, joints.get_unchecked(i), weights.get_unchecked(i)) };
        // Points are read sixteen bytes at a time (the next vertex's first float rides along,
        // unused), so every block needs one more position after it.
        let blocks = n.min(positions.len().saturating_sub(1)) / 16;
        for b in 0..blocks {
            let start = 16 * b;
            if !in_range(&joints[start..start + 16], palette.len()) {
                return Err(start);
            }
            let pts: [__m512; 4] = std::array::from_fn(|g| {
                let i = start + 4 * g;
                // SAFETY: vertex i + 3 has a position after it, so sixteen bytes stay in the slice.
                let p = std::array::from_fn(|k| unsafe { _mm_loadu_ps(pp.add(3 * (i + k))) });
                points4(std::array::from_fn(|k| blended(i + k)), p)
            });
            // SAFETY: vertices start..start + 16 are below n.
            unsafe { store_xyz16(pts, out.as_mut_ptr().add(start) as *mut f32) };
        }
        for (i, p) in positions.iter().enumerate().take(n).skip(16 * blocks) {
            if !in_range(&joints[i..i + 1], palette.len()) {
                return Err(i);
            }
            let r = points4([blended(i); 4], [_mm_set_ps(0.0, p[2], p[1], p[0]); 4]);
            // SAFETY: i < n.
            unsafe { store3(out.get_unchecked_mut(i), _mm512_castps512_ps128(r)) };
        }
        Ok(())
    }

    /// `[x0 + x2 | x1 + x3 | y0 + y2 | y1 + y3]` over the 128-bit lanes of `x` and `y`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn fold_halves(x: __m512, y: __m512) -> __m512 {
        _mm512_add_ps(_mm512_shuffle_f32x4(x, y, 0b01_00_01_00), _mm512_shuffle_f32x4(x, y, 0b11_10_11_10))
    }

    /// `[x0 + x1 | x2 + x3 | y0 + y1 | y2 + y3]` over the 128-bit lanes of `x` and `y`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn fold_pairs(x: __m512, y: __m512) -> __m512 {
        _mm512_add_ps(_mm512_shuffle_f32x4(x, y, 0b10_00_10_00), _mm512_shuffle_f32x4(x, y, 0b11_01_11_01))
    }

    /// The blended matrix `acc` times `(v, w)` with each column's factor spread over its lane:
    /// `w` is 1 (a point) or 0 (a direction); lane 3 of `v` is never read.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn columns_times(acc: __m512, v: __m128, w: __m512) -> __m512 {
        // Indices 16 and up name the second source: lanes 12-15 take `w`.
        let idx = _mm512_set_epi32(16, 16, 16, 16, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
        _mm512_mul_ps(acc, _mm512_permutex2var_ps(_mm512_castps128_ps512(v), idx, w))
    }

    /// Four vertices' points `(p, 1)` through their blended matrices `acc`, the column sums
    /// reduced together in the order `(c0 + c2) + (c1 + c3)`. Returns
    /// `[Pa | Pb | Pc | Pd]`, one point per 128-bit lane.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn points4(acc: [__m512; 4], p: [__m128; 4]) -> __m512 {
        let t: [__m512; 4] = std::array::from_fn(|k| columns_times(acc[k], p[k], _mm512_set1_ps(1.0)));
        fold_pairs(fold_halves(t[0], t[1]), fold_halves(t[2], t[3]))
    }

    /// Four vertices' points `(p, 1)` and directions `(d, 0)` through their blended matrices
    /// `acc`, the eight column sums reduced together in the same order as [`points4`]. Returns
    /// `([Pa | Pb | Pc | Pd], [Na | Nb | Nc | Nd])`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn points_and_dirs4(acc: [__m512; 4], p: [__m128; 4], d: [__m128; 4]) -> (__m512, __m512) {
        // [P02 | P13 | N02 | N13] per vertex, then [Pa | Na | Pb | Nb] per pair.
        let s: [__m512; 4] = std::array::from_fn(|k| {
            fold_halves(
                columns_times(acc[k], p[k], _mm512_set1_ps(1.0)),
                columns_times(acc[k], d[k], _mm512_setzero_ps()),
            )
        });
        let (ab, cd) = (fold_pairs(s[0], s[1]), fold_pairs(s[2], s[3]));
        (_mm512_shuffle_f32x4(ab, cd, 0b10_00_10_00), _mm512_shuffle_f32x4(ab, cd, 0b11_01_11_01))
    }

    /// Stores the x, y and z of four registers of four `[x, y, z, _]` each (sixteen vectors)
    /// as 48 packed floats at `dst`.
    ///
    /// # Safety
    /// The CPU must support AVX-512F; `dst` must be valid for 48 floats.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn store_xyz16(r: [__m512; 4], dst: *mut f32) {
        // Indices 16 and up name the second source.
        let i0 = _mm512_set_epi32(20, 18, 17, 16, 14, 13, 12, 10, 9, 8, 6, 5, 4, 2, 1, 0);
        let i1 = _mm512_set_epi32(25, 24, 22, 21, 20, 18, 17, 16, 14, 13, 12, 10, 9, 8, 6, 5);
        let i2 = _mm512_set_epi32(30, 29, 28, 26, 25, 24, 22, 21, 20, 18, 17, 16, 14, 13, 12, 10);
        // SAFETY: the caller guarantees 48 floats at `dst`.
        unsafe {
            _mm512_storeu_ps(dst, _mm512_permutex2var_ps(r[0], i0, r[1]));
            _mm512_storeu_ps(dst.add(16), _mm512_permutex2var_ps(r[1], i1, r[2]));
            _mm512_storeu_ps(dst.add(32), _mm512_permutex2var_ps(r[2], i2, r[3]));
        }
    }

    /// Normalizes sixteen directions at once and stores them in `out` (`n / |n|`, the scalar
    /// path's rule; a result whose squared length is not above `1e-20` keeps its input from
    /// `fallback`). `z[g]` holds directions `4g..4g + 4`, one per 128-bit lane (`w` ignored).
    /// They are turned into sixteen-wide x, y and z rows, so one square root and three divisions
    /// serve all sixteen, then turned back and stored twelve floats at a time.
    ///
    /// # Safety
    /// The CPU must support AVX-512F; `out` and `fallback` must hold sixteen entries.
    #[inline]
    #[target_feature(enable = "avx512f")]
    unsafe fn store_units16(z: [__m512; 4], fallback: &[[f32; 3]], out: &mut [[f32; 3]]) {
        let lo_pd = |a: __m512, b: __m512| {
            _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)))
        };
        let hi_pd = |a: __m512, b: __m512| {
            _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(a), _mm512_castps_pd(b)))
        };
        // Row lane `4L + e` holds direction `4e + L`.
        let (t0, t1) = (_mm512_unpacklo_ps(z[0], z[1]), _mm512_unpackhi_ps(z[0], z[1]));
        let (t2, t3) = (_mm512_unpacklo_ps(z[2], z[3]), _mm512_unpackhi_ps(z[2], z[3]));
        let (x, y, zz) = (lo_pd(t0, t2), hi_pd(t0, t2), lo_pd(t1, t3));
        // (x*x + y*y) + z*z, glam's order for a length.
        let l2 =
            _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(x, x), _mm512_mul_ps(y, y)), _mm512_mul_ps(zz, zz));
        let keep = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(l2, _mm512_set1_ps(1e-20));
        let s = _mm512_sqrt_ps(l2);
        let (x, y, zz) = (_mm512_div_ps(x, s), _mm512_div_ps(y, s), _mm512_div_ps(zz, s));
        let zero = _mm512_setzero_ps();
        let (a, b) = (_mm512_unpacklo_ps(x, y), _mm512_unpackhi_ps(x, y));
        let (c, d) = (_mm512_unpacklo_ps(zz, zero), _mm512_unpackhi_ps(zz, zero));
        // SAFETY: `out` holds sixteen directions, 48 floats.
        unsafe {
            store_xyz16([lo_pd(a, c), hi_pd(a, c), lo_pd(b, d), hi_pd(b, d)], out.as_mut_ptr() as *mut f32)
        };
        if keep != 0xffff {
            for k in 0..16 {
                if keep & (1 << (4 * (k % 4) + k / 4)) == 0 {
                    out[k] = fallback[k];
                }
            }
        }
    }

    /// Positions and normals with AVX-512F, sixteen vertices at a time: each vertex's blended
    /// matrix in one 512-bit register (four fused multiply-adds, as [`positions512`]), four
    /// vertices' points and normals through them together ([`points_and_dirs4`]); sixteen points
    /// stored as three full registers ([`store_xyz16`]), sixteen normals normalized together
    /// ([`store_units16`]). The last vertices take the same steps one at a time.
    ///
    /// Joint indices are checked block by block as [`positions512`] checks them, with the same
    /// answer.
    ///
    /// # Safety
    /// The CPU must support AVX-512F and AVX2; the six other slices must hold at least as many
    /// entries as `out` (`positions` and `normals` may hold more).
    #[target_feature(enable = "avx512f,avx2")]
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn positions_normals512(
        palette: &[Mat4],
        joints: &[[u16; 4]],
        weights: &[[f32; 4]],
        positions: &[[f32; 3]],
        normals: &[[f32; 3]],
        out: &mut [[f32; 3]],
        out_normals: &mut [[f32; 3]],
    ) -> Result<(), usize> {
        let base = palette.as_ptr() as *const f32;
        let n = out.len().min(joints.len()).min(weights.len()).min(positions.len());
        let n = n.min(normals.len()).min(out_normals.len());
        let (pp, np) = (positions.as_ptr() as *const f32, normals.as_ptr() as *const f32);
        // SAFETY (the closure and the blocks below): indices stay below n, every vertex passed
        // to it has had its joints checked, and the caller guarantees the CPU features.
        let blended = |i: usize| unsafe { blend512(base, joints.get_unchecked(i), weights.get_unchecked(i)) };
        // A block's points and normals are read sixteen bytes at a time (the next vertex's first
        // float rides along, unused), so every block needs one more of each after it.
        let blocks = n.min(positions.len().min(normals.len()).saturating_sub(1)) / 16;
        for b in 0..blocks {
            let start = 16 * b;
            if !in_range(&joints[start..start + 16], palette.len()) {
                return Err(start);
            }
            let mut pts = [_mm512_setzero_ps(); 4];
            let mut dirs = [_mm512_setzero_ps(); 4];
            for g in 0..4 {
                let i = start + 4 * g;
                // SAFETY: vertex i + 3 has a position and a normal after it, so sixteen bytes stay in each slice.
                let (p, d) = unsafe {
                    (
                        std::array::from_fn(|k| _mm_loadu_ps(pp.add(3 * (i + k)))),
                        std::array::from_fn(|k| _mm_loadu_ps(np.add(3 * (i + k)))),
                    )
                };
                (pts[g], dirs[g]) = points_and_dirs4(std::array::from_fn(|k| blended(i + k)), p, d);
            }
            // SAFETY: vertices start..start + 16 are below n, so the 48 floats of each output
            // and the sixteen fallback normals lie in their slices.
            unsafe {
                store_xyz16(pts, out.as_mut_ptr().add(start) as *mut f32);
                store_units16(
                    dirs,
                    normals.get_unchecked(start..start + 16),
                    out_normals.get_unchecked_mut(start..start + 16),
                )
            };
        }
        // The rest one at a time (the same steps, the vertex repeated in all four places).
        for i in 16 * blocks..n {
            if !in_range(&joints[i..i + 1], palette.len()) {
                return Err(i);
            }
            let (p, nv) = (positions[i], normals[i]);
            let (p, d) = (_mm_set_ps(0.0, p[2], p[1], p[0]), _mm_set_ps(0.0, nv[2], nv[1], nv[0]));
            let (r, rn) = points_and_dirs4([blended(i); 4], [p; 4], [d; 4]);
            // SAFETY: i < n; SSE4.1 comes with AVX-512F.
            unsafe {
                store3(out.get_unchecked_mut(i), _mm512_castps512_ps128(r));
                store_unit(out_normals.get_unchecked_mut(i), _mm512_castps512_ps128(rn), &normals[i])
            };
        }
        Ok(())
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
            let rows = matrices(base, j);
            let m = |k: usize| rows[k];
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

    /// The joint index check of the AVX2 loops, run a block ahead of the palette reads (the
    /// indices are then in cache: no separate pass over the array).
    struct JointCheck<'a> {
        joints: &'a [[u16; 4]],
        limit: usize,
        /// The largest valid index, in every 16-bit lane (65535 for a palette of 65536 or more,
        /// where every index is valid).
        last: __m256i,
    }

    impl<'a> JointCheck<'a> {
        /// The check of `joints` against a palette of `limit` (at least one) matrices.
        #[inline]
        #[target_feature(enable = "avx2")]
        fn new(joints: &'a [[u16; 4]], limit: usize) -> Self {
            let last = (limit.min(1 << 16) - 1) as u16;
            Self { joints, limit, last: _mm256_set1_epi16(last as i16) }
        }

        /// True when every joint of the eight vertices from `from` (`from + 8 <= joints.len()`)
        /// is below the limit: 64 bytes at once with an unsigned maximum and a saturating
        /// difference. The loop's check: no branch to a general range in it (the loop with
        /// one measured 13% slower, the compiler's code around it the cause).
        ///
        /// # Safety
        /// `from + 8 <= joints.len()`.
        #[inline]
        #[target_feature(enable = "avx2")]
        unsafe fn eight(&self, from: usize) -> bool {
            // SAFETY: the caller guarantees vertices from..from + 8 in `joints`: 64 bytes, two
            // 32-byte reads.
            let (a, b) = unsafe {
                let p = self.joints.as_ptr().add(from) as *const __m256i;
                (_mm256_loadu_si256(p), _mm256_loadu_si256(p.add(1)))
            };
            let over = _mm256_subs_epu16(_mm256_max_epu16(a, b), self.last);
            _mm256_testz_si256(over, over) == 1
        }

        /// True when every joint of vertices `from..to` (`to <= joints.len()`) is below the
        /// limit ([`in_range`]).
        fn vertices(&self, from: usize, to: usize) -> bool {
            in_range(&self.joints[from..to], self.limit)
        }
    }

    /// Two vertices' blended matrices (as [`blend_halves`] gives them, `a` and `b`) as four
    /// columns across the two 128-bit lanes: `[a's column k | b's column k]` for k in 0..4
    /// (four lane-crossing permutes a pair, where one vertex at a time took two extracts).
    #[inline]
    #[target_feature(enable = "avx")]
    fn pair_columns(a: (__m256, __m256), b: (__m256, __m256)) -> [__m256; 4] {
        [
            _mm256_permute2f128_ps::<0x20>(a.0, b.0),
            _mm256_permute2f128_ps::<0x31>(a.0, b.0),
            _mm256_permute2f128_ps::<0x20>(a.1, b.1),
            _mm256_permute2f128_ps::<0x31>(a.1, b.1),
        ]
    }

    /// Two vertices' inputs (positions or normals, `[f32; 3]` a vertex) from `p` as `[x y z _ |
    /// x' y' z' _]`: one sixteen-byte read at each vertex (the second reads the float after the
    /// pair: the caller guarantees it is there).
    ///
    /// # Safety
    /// The CPU must support AVX; seven floats readable at `p`.
    #[inline]
    #[target_feature(enable = "avx")]
    unsafe fn pair_inputs(p: *const f32) -> __m256 {
        // SAFETY: the caller guarantees floats p..p + 7.
        unsafe { _mm256_loadu2_m128(p.add(3), p) }
    }

    /// The paired columns ([`pair_columns`]) times each lane's point `(x, y, z, 1)` (`v` as
    /// [`pair_inputs`] gives it): `c0 * x + (c1 * y + (c2 * z + c3))`, the factors splat within
    /// each lane. Lane 3 of each half is the matrix's `w` row sum (unused).
    #[inline]
    #[target_feature(enable = "avx,fma")]
    fn points2(c: &[__m256; 4], v: __m256) -> __m256 {
        let (x, y, z) =
            (_mm256_permute_ps::<0x00>(v), _mm256_permute_ps::<0x55>(v), _mm256_permute_ps::<0xaa>(v));
        _mm256_fmadd_ps(c[0], x, _mm256_fmadd_ps(c[1], y, _mm256_fmadd_ps(c[2], z, c[3])))
    }

    /// The paired columns' upper 3x3 times each lane's direction: `c0 * x + (c1 * y + c2 * z)`,
    /// as [`points2`] (not normalized).
    #[inline]
    #[target_feature(enable = "avx,fma")]
    fn directions2(c: &[__m256; 4], v: __m256) -> __m256 {
        let (x, y, z) =
            (_mm256_permute_ps::<0x00>(v), _mm256_permute_ps::<0x55>(v), _mm256_permute_ps::<0xaa>(v));
        _mm256_fmadd_ps(c[0], x, _mm256_fmadd_ps(c[1], y, _mm256_mul_ps(c[2], z)))
    }

    /// The vertex of each lane of [`normalize8`]'s mask: its rows hold vertices
    /// `[0 2 4 6 | 1 3 5 7]`.
    const NORMALIZE8_LANES: [usize; 8] = [0, 2, 4, 6, 1, 3, 5, 7];

    /// Eight directions, held as [`directions2`] gives four pairs (`q[k]` = vertices `2k` and
    /// `2k + 1`), each divided by its length in registers: split into x, y and z rows with
    /// seven in-lane shuffles (the rows hold vertices `[0 2 4 6 | 1 3 5 7]`), the length squared
    /// summed `(x * x + y * y) + z * z`, its reciprocal square root taken as the CPU's
    /// approximation `r0` and one Newton step, `r0 * (1.5 - (l2 / 2) r0 r0)` (within two units
    /// in the last place of `1 / |n|`, and no divider on the loop's path), and each pair
    /// multiplied by its two factors splat within their lanes (no shuffle back). Returns the
    /// pairs and a mask with bit `l` set where the length squared of the vertex
    /// `NORMALIZE8_LANES[l]` is above 1e-20 (clear: zero or NaN, the caller keeps the input).
    ///
    /// The approximation's bits are the CPU's own (they can differ between CPU makers in the
    /// last place, never between this loop's blocks and [`one_vertex`] on one machine).
    #[inline]
    #[target_feature(enable = "avx,fma")]
    fn normalize8(q: [__m256; 4]) -> ([__m256; 4], i32) {
        let xy02 = _mm256_unpacklo_ps(q[0], q[1]); // x0 x2 y0 y2 | x1 x3 y1 y3
        let xy46 = _mm256_unpacklo_ps(q[2], q[3]); // x4 x6 y4 y6 | x5 x7 y5 y7
        let z02 = _mm256_unpackhi_ps(q[0], q[1]); // z0 z2 _ _ | z1 z3 _ _
        let z46 = _mm256_unpackhi_ps(q[2], q[3]); // z4 z6 _ _ | z5 z7 _ _
        let x = _mm256_shuffle_ps::<0b01_00_01_00>(xy02, xy46);
        let y = _mm256_shuffle_ps::<0b11_10_11_10>(xy02, xy46);
        let z = _mm256_shuffle_ps::<0b01_00_01_00>(z02, z46);
        let l2 = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(x, x), _mm256_mul_ps(y, y)), _mm256_mul_ps(z, z));
        let keep = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_GT_OQ>(l2, _mm256_set1_ps(1e-20)));
        let r0 = _mm256_rsqrt_ps(l2);
        let h = _mm256_mul_ps(_mm256_mul_ps(l2, _mm256_set1_ps(0.5)), r0);
        let r = _mm256_mul_ps(r0, _mm256_fnmadd_ps(h, r0, _mm256_set1_ps(1.5)));
        let scaled = [
            _mm256_mul_ps(q[0], _mm256_permute_ps::<0x00>(r)),
            _mm256_mul_ps(q[1], _mm256_permute_ps::<0x55>(r)),
            _mm256_mul_ps(q[2], _mm256_permute_ps::<0xaa>(r)),
            _mm256_mul_ps(q[3], _mm256_permute_ps::<0xff>(r)),
        ];
        (scaled, keep)
    }

    /// Copies the input over the output of each direction whose bit in `keep` ([`normalize8`]'s
    /// mask) is clear: the eight directions are those of eight vertices, `stride` floats each
    /// (normals three, at `src` + 3v and `dst` + 3v; tangents four, copied whole with their
    /// handedness).
    ///
    /// # Safety
    /// `8 * stride` floats readable at `src` and writable at `dst`.
    #[cold]
    unsafe fn keep_inputs(keep: i32, src: *const f32, dst: *mut f32, stride: usize) {
        for l in (0..8).filter(|l| keep & (1 << l) == 0) {
            let v = NORMALIZE8_LANES[l];
            // SAFETY: vertex v < 8 of the caller's floats.
            unsafe { std::ptr::copy_nonoverlapping(src.add(stride * v), dst.add(stride * v), stride) }
        }
    }

    /// Stores a pair's two results (`[f32; 3]` a vertex) at `dst` as two sixteen-byte writes,
    /// the first vertex's first: each fourth lane lands on the next vertex's x, which a later
    /// write covers (the caller guarantees the float after the pair is in the output).
    ///
    /// # Safety
    /// The CPU must support AVX; seven floats writable at `dst`.
    #[inline]
    #[target_feature(enable = "avx")]
    unsafe fn store_pair(dst: *mut f32, r: __m256) {
        // SAFETY: the caller guarantees floats dst..dst + 7.
        unsafe {
            _mm_storeu_ps(dst, _mm256_castps256_ps128(r));
            _mm_storeu_ps(dst.add(3), _mm256_extractf128_ps::<1>(r));
        }
    }

    /// One vertex alone (the loops' last vertices), with the blocks' arithmetic: the vertex in
    /// both lanes of its pair and in all four pairs of [`normalize8`], so its point, normal and
    /// tangent have the bits they would have in a block. A tangent's fourth float (its
    /// handedness) is copied.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA; `base` must point at a palette holding every joint in `j`.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn one_vertex(
        base: *const f32,
        (j, w): (&[u16; 4], &[f32; 4]),
        p: &[f32; 3],
        out: &mut [f32; 3],
        normal: Option<(&[f32; 3], &mut [f32; 3])>,
        tangent: Option<(&[f32; 4], &mut [f32; 4])>,
    ) {
        // SAFETY: the caller's guarantees; `v` holds eight floats.
        unsafe {
            let m = blend_halves(base, j, w);
            let c = pair_columns(m, m);
            let both =
                |v: &[f32; 3]| _mm256_loadu_ps([v[0], v[1], v[2], 0.0, v[0], v[1], v[2], 0.0].as_ptr());
            // The direction's unit vector as a block gives it, or the input where that keeps it.
            let unit = |d: &[f32; 3]| {
                let (q, keep) = normalize8([directions2(&c, both(d)); 4]);
                let mut r = *d;
                if keep & 1 != 0 {
                    store3(&mut r, _mm256_castps256_ps128(q[0]));
                }
                r
            };
            store3(out, _mm256_castps256_ps128(points2(&c, both(p))));
            if let Some((d, o)) = normal {
                *o = unit(d);
            }
            if let Some((t, o)) = tangent {
                let [x, y, z] = unit(&[t[0], t[1], t[2]]);
                *o = [x, y, z, t[3]];
            }
        }
    }

    /// Finishes a block's tangents: the eight vertices' directions from `t` (tangents, four
    /// floats a vertex), which the loop stored at `ot` not normalized, read back as four pairs,
    /// normalized together ([`normalize8`]) and stored again as four 32-byte writes with their
    /// fourth floats (handedness) from the input; a zero-length or NaN direction keeps its
    /// input. (Holding the directions, or the pairs' columns, in registers until the block's
    /// end made the compiler spill: the loop measured 4-10% slower.)
    ///
    /// # Safety
    /// The CPU must support AVX and FMA; 32 floats readable at `t` and writable at `ot`, the
    /// latter holding the block's directions.
    #[inline]
    #[target_feature(enable = "avx,fma")]
    unsafe fn tangent_block(t: *const f32, ot: *mut f32) {
        // SAFETY: the caller guarantees the block's 32 floats at `t` and `ot`.
        unsafe {
            let d = |k: usize| _mm256_loadu_ps(ot.add(8 * k));
            let (u, keep) = normalize8([d(0), d(1), d(2), d(3)]);
            for (k, u) in u.into_iter().enumerate() {
                let handed = _mm256_blend_ps::<0b1000_1000>(u, _mm256_loadu_ps(t.add(8 * k)));
                _mm256_storeu_ps(ot.add(8 * k), handed);
            }
            if keep != 0xff {
                keep_inputs(keep, t, ot, 4);
            }
        }
    }

    /// Skins eight vertices at a time with AVX2 + FMA, two at a time through the transforms:
    /// each vertex's matrix blended as two 256-bit halves ([`blend_halves`]) a pair ahead of
    /// its use (the palette reads and the four-deep multiply-add chain overlap the transforms
    /// of the pair before it), a pair's matrices turned into shared columns
    /// ([`pair_columns`]), its points ([`points2`]) stored sixteen bytes a vertex (the fourth
    /// lane lands on the next vertex's x, which that vertex then overwrites); with normals, a
    /// block's four pairs of normals ([`directions2`]) normalized together in registers
    /// ([`normalize8`]) and stored the same way; with tangents too, each pair's tangent
    /// directions stored as they come (one 32-byte write) and the block's eight normalized
    /// after its normals ([`tangent_block`]). The last vertex (which has no vertex after it:
    /// the pairs read and write one float past themselves) and those after the last block go
    /// one at a time ([`one_vertex`]: the same bits).
    ///
    /// Joint indices are checked a block ahead of the palette reads ([`JointCheck`]); the loop
    /// stops before reading a block that names a joint past the palette and returns a vertex
    /// with no such joint before it (the outputs from some vertex before it on are not
    /// written).
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA; the other slices must hold at least as many entries
    /// as `out` (with `NORMALS`, `normals` and `out_normals` too, with `TANGENTS`, which needs
    /// `NORMALS`, the tangents too; without, they are not read).
    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn skin8<const NORMALS: bool, const TANGENTS: bool>(
        palette: &[Mat4],
        joints: &[[u16; 4]],
        weights: &[[f32; 4]],
        positions: &[[f32; 3]],
        (normals, out_normals): (&[[f32; 3]], &mut [[f32; 3]]),
        (tangents, out_tangents): (&[[f32; 4]], &mut [[f32; 4]]),
        out: &mut [[f32; 3]],
    ) -> Result<(), usize> {
        const { assert!(NORMALS || !TANGENTS, "tangents come with normals") };
        let (with_normals, with_tangents) = (NORMALS, TANGENTS);
        let mut n = out.len().min(joints.len()).min(weights.len()).min(positions.len());
        if with_normals {
            n = n.min(normals.len()).min(out_normals.len());
        }
        if with_tangents {
            n = n.min(tangents.len()).min(out_tangents.len());
        }
        if n == 0 {
            return Ok(());
        }
        if palette.is_empty() {
            return Err(0);
        }
        let check = JointCheck::new(joints, palette.len());
        // The vertices after the last multiple of eight first (a bad joint there returns 0:
        // nothing read, nothing written), then vertices 0..min(16, n); at the start of block b,
        // the eight vertices of block b + 1 when they are all there (else they are the ones
        // checked first), so every vertex is checked before its blend is read, two ahead.
        if !check.vertices(8 * (n / 8), n) {
            return Err(0);
        }
        if !check.vertices(0, n.min(8)) {
            return Err(0);
        }
        if n > 8 && !check.vertices(8, n.min(16)) {
            return Err(8);
        }
        let base = palette.as_ptr() as *const f32;
        let (op, on) = (out.as_mut_ptr() as *mut f32, out_normals.as_mut_ptr() as *mut f32);
        let (ip, inn) = (positions.as_ptr() as *const f32, normals.as_ptr() as *const f32);
        let (it, ot) = (tangents.as_ptr() as *const f32, out_tangents.as_mut_ptr() as *mut f32);
        // SAFETY (the closure): the callers pass i < n, a checked vertex; the CPU features
        // are the caller's guarantee.
        let blend =
            |i: usize| unsafe { blend_halves(base, joints.get_unchecked(i), weights.get_unchecked(i)) };
        let blocks = (n - 1) / 8;
        let last = n - 1;
        let mut next = (blend(0), blend(1.min(last)));
        for b in 0..blocks {
            let ahead = 8 * b + 16;
            // SAFETY: ahead <= n <= joints.len().
            if ahead <= n && !unsafe { check.eight(ahead - 8) } {
                return Err(ahead - 8);
            }
            // One pair of the block: its matrices were blended a pair ago; the next pair
            // (checked: at most vertex 8b + 9 < 8b + 16) is blended now (two pairs ahead kept
            // sixteen registers of matrices and directions live: spills, 6% slower). Returns
            // its normals' directions (where the loop skins them).
            macro_rules! pair {
                ($k:expr) => {{
                    let i = 8 * b + 2 * $k;
                    let (m0, m1) = next;
                    next = (blend((i + 2).min(last)), blend((i + 3).min(last)));
                    let c = pair_columns(m0, m1);
                    // SAFETY: i + 1 < 8 * blocks <= n - 1, so vertex i + 2 exists: the reads
                    // and writes of seven floats from vertex i stay in the slices.
                    unsafe {
                        // The directions before the points' store (the loads of the normals
                        // then do not follow a store in program order: 7% faster measured).
                        let p = points2(&c, pair_inputs(ip.add(3 * i)));
                        let q =
                            if with_normals { directions2(&c, pair_inputs(inn.add(3 * i))) } else { c[0] };
                        if with_tangents {
                            // The pair's tangents (eight floats from vertex i) as they come,
                            // normalized at the block's end.
                            let t = directions2(&c, _mm256_loadu_ps(it.add(4 * i)));
                            _mm256_storeu_ps(ot.add(4 * i), t);
                        }
                        store_pair(op.add(3 * i), p);
                        q
                    }
                }};
            }
            let q = [pair!(0), pair!(1), pair!(2), pair!(3)];
            if with_normals {
                let (q, keep) = normalize8(q);
                // SAFETY: as in `pair!`; the kept inputs are the block's vertices.
                unsafe {
                    let at = on.add(24 * b);
                    store_pair(at, q[0]);
                    store_pair(at.add(6), q[1]);
                    store_pair(at.add(12), q[2]);
                    store_pair(at.add(18), q[3]);
                    if keep != 0xff {
                        keep_inputs(keep, inn.add(24 * b), at, 3);
                    }
                }
            }
            if with_tangents {
                // SAFETY: the block's eight vertices lie in the slices.
                unsafe { tangent_block(it.add(32 * b), ot.add(32 * b)) };
            }
        }
        for i in 8 * blocks..n {
            let normal = with_normals.then(|| (&normals[i], &mut out_normals[i]));
            let tangent = with_tangents.then(|| (&tangents[i], &mut out_tangents[i]));
            let inputs = (&joints[i], &weights[i]);
            // SAFETY: vertex i was checked (the last block's look-ahead, or the first check).
            unsafe { one_vertex(base, inputs, &positions[i], &mut out[i], normal, tangent) };
        }
        Ok(())
    }

    /// Positions and normals with AVX2 + FMA ([`skin8`]).
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA; the six other slices must hold at least as many
    /// entries as `out`.
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
    ) -> Result<(), usize> {
        let n = out.len().min(normals.len()).min(out_normals.len());
        // SAFETY: the caller's guarantees; `normals` trimmed to the output's length.
        unsafe {
            let directions = (&normals[..n], out_normals);
            skin8::<true, false>(
                palette,
                joints,
                weights,
                positions,
                directions,
                (&[], &mut []),
                &mut out[..n],
            )
        }
    }

    /// Positions, normals and tangents with AVX2 + FMA ([`skin8`] with tangents: the same
    /// points and normals as without them).
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA; the other slices must hold at least as many entries
    /// as `out`.
    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn positions_normals_tangents(
        palette: &[Mat4],
        joints: &[[u16; 4]],
        weights: &[[f32; 4]],
        positions: &[[f32; 3]],
        normals: (&[[f32; 3]], &mut [[f32; 3]]),
        tangents: (&[[f32; 4]], &mut [[f32; 4]]),
        out: &mut [[f32; 3]],
    ) -> Result<(), usize> {
        // SAFETY: the caller's guarantees.
        unsafe { skin8::<true, true>(palette, joints, weights, positions, normals, tangents, out) }
    }

    /// Positions with AVX2 + FMA ([`skin8`] without normals: the same points).
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA; the four other slices must hold at least as many
    /// entries as `out`.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn positions(
        palette: &[Mat4],
        joints: &[[u16; 4]],
        weights: &[[f32; 4]],
        positions: &[[f32; 3]],
        out: &mut [[f32; 3]],
    ) -> Result<(), usize> {
        // SAFETY: the caller's guarantees.
        unsafe {
            skin8::<false, false>(palette, joints, weights, positions, (&[], &mut []), (&[], &mut []), out)
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
    use glam::Quat;

    use super::*;

    /// `n` palette matrices, each from a uniform scale, a rotation and a translation of its index.
    fn palette_of(n: usize, f: impl Fn(f32) -> (f32, Quat, Vec3)) -> Vec<Mat4> {
        (0..n)
            .map(|i| {
                let (s, r, t) = f(i as f32);
                Mat4::from_scale_rotation_translation(Vec3::splat(s), r, t)
            })
            .collect()
    }

    /// Outputs of a job: positions, normals, tangents.
    type Skinned = (Vec<[f32; 3]>, Vec<[f32; 3]>, Vec<[f32; 4]>);
    /// A job's vertex inputs: positions, normals, tangents.
    type Vertices<'a> = (&'a [[f32; 3]], &'a [[f32; 3]], &'a [[f32; 4]]);

    /// Runs one job over whole arrays (each output as long as its input) and returns the outputs.
    fn run_job(
        palette: &[Mat4],
        joints: &[[u16; 4]],
        weights: &[[f32; 4]],
        positions: &[[f32; 3]],
        normals: &[[f32; 3]],
        tangents: &[[f32; 4]],
    ) -> Result<Skinned, SkinningError> {
        skin_with(palette, joints, weights, (positions, normals, tangents), |job| job.run())
    }

    /// [`run_job`] through the general loop (validated first), whatever the CPU.
    fn run_general(
        palette: &[Mat4],
        joints: &[[u16; 4]],
        weights: &[[f32; 4]],
        positions: &[[f32; 3]],
        normals: &[[f32; 3]],
        tangents: &[[f32; 4]],
    ) -> Result<Skinned, SkinningError> {
        let general = |job: SkinningJob| job.validate().and_then(|()| job.run_general());
        skin_with(palette, joints, weights, (positions, normals, tangents), general)
    }

    /// A job over the inputs with outputs of their lengths, run by `run`.
    fn skin_with(
        palette: &[Mat4],
        joints: &[[u16; 4]],
        weights: &[[f32; 4]],
        (positions, normals, tangents): Vertices,
        run: impl FnOnce(SkinningJob) -> Result<(), SkinningError>,
    ) -> Result<Skinned, SkinningError> {
        let mut out =
            (vec![[0.0; 3]; positions.len()], vec![[0.0; 3]; normals.len()], vec![[0.0; 4]; tangents.len()]);
        run(SkinningJob {
            palette,
            joints,
            weights,
            positions,
            normals,
            tangents,
            out_positions: &mut out.0,
            out_normals: &mut out.1,
            out_tangents: &mut out.2,
        })?;
        Ok(out)
    }

    #[test]
    fn the_positions_and_normals_fast_path_matches_the_general_loop() {
        // Normals, with or without tangents, take a SIMD path where the CPU has one; the general
        // loop must agree with it (within rounding: fused multiply-adds round once, and the
        // SIMD loops divide by an approximate square root refined once).
        let palette = palette_of(64, |i| {
            (
                1.0 + i * 0.01,
                Quat::from_rotation_y(i * 0.1) * Quat::from_rotation_x(0.3),
                Vec3::new(i, 0.5, -1.0),
            )
        });
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
        let mut tangents: Vec<[f32; 4]> = (0..n)
            .map(|i| {
                let t = Vec3::new(0.2, -1.0, i as f32 * 0.01).normalize();
                [t.x, t.y, t.z, if i % 3 == 0 { -1.0 } else { 1.0 }]
            })
            .collect();
        tangents[7] = [0.0, 0.0, 0.0, -1.0]; // zero length: kept as given, handedness and all
        let (p1, n1, _) = run_job(&palette, &joints, &weights, &positions, &normals, &[]).unwrap();
        let (p2, n2, t2) = run_job(&palette, &joints, &weights, &positions, &normals, &tangents).unwrap();
        let (p3, n3, t3) = run_general(&palette, &joints, &weights, &positions, &normals, &tangents).unwrap();
        for i in 0..n {
            assert!(Vec3::from(p1[i]).abs_diff_eq(Vec3::from(p3[i]), 1e-4), "position {i}");
            // (On an AVX-512 CPU normals alone may take the AVX-512 loop, tangents the AVX2 one.)
            assert!(Vec3::from(p2[i]).abs_diff_eq(Vec3::from(p1[i]), 1e-5), "position {i}, with tangents");
            assert!(
                Vec3::from(n1[i]).abs_diff_eq(Vec3::from(n3[i]), 1e-5),
                "normal {i}: {:?} vs {:?}",
                n1[i],
                n3[i]
            );
            assert!(Vec3::from(n2[i]).abs_diff_eq(Vec3::from(n1[i]), 1e-6), "normal {i}, with tangents");
            assert!(
                Vec4::from(t2[i]).abs_diff_eq(Vec4::from(t3[i]), 1e-5),
                "tangent {i}: {:?} vs {:?}",
                t2[i],
                t3[i]
            );
            assert_eq!(t2[i][3], tangents[i][3], "tangent {i}'s handedness");
        }
        assert_eq!(n1[3], [0.0; 3]);
        assert_eq!(t2[7], [0.0, 0.0, 0.0, -1.0]);
        // A joint past the palette is still refused on the fast path.
        let mut bad = joints.clone();
        bad[500][2] = 64;
        let err = run_job(&palette, &bad, &weights, &positions, &normals, &[]).unwrap_err();
        assert!(matches!(err, SkinningError::JointOutOfRange { vertex: 500, joint: 64, .. }), "{err}");
    }

    /// The direct loop tests' mesh: 77 vertices over 32 joints, the normals at `zero` of zero
    /// length, and what the general loop makes of them.
    #[cfg(target_arch = "x86_64")]
    struct Mesh {
        palette: Vec<Mat4>,
        joints: Vec<[u16; 4]>,
        weights: Vec<[f32; 4]>,
        positions: Vec<[f32; 3]>,
        normals: Vec<[f32; 3]>,
        want_p: Vec<[f32; 3]>,
        want_n: Vec<[f32; 3]>,
    }

    #[cfg(target_arch = "x86_64")]
    fn mesh77(zero: &[usize]) -> Mesh {
        let palette =
            palette_of(32, |i| (1.0 + i * 0.02, Quat::from_rotation_x(i * 0.2), Vec3::new(i, -2.0, 0.5)));
        let n = 77;
        let joints: Vec<[u16; 4]> = (0..n).map(|i| [(i % 32) as u16, ((i * 3) % 32) as u16, 5, 31]).collect();
        let weights = vec![[0.4, 0.3, 0.2, 0.1]; n];
        let positions: Vec<[f32; 3]> = (0..n).map(|i| [i as f32 * 0.1, 1.0, -0.5]).collect();
        let mut normals: Vec<[f32; 3]> =
            (0..n).map(|i| Vec3::new(1.0, i as f32, 2.0).normalize().to_array()).collect();
        for &i in zero {
            normals[i] = [0.0; 3];
        }
        Mesh::of(palette, joints, weights, (positions, normals))
    }

    #[cfg(target_arch = "x86_64")]
    impl Mesh {
        /// The mesh of these inputs, with what the general loop makes of them.
        fn of(
            palette: Vec<Mat4>,
            joints: Vec<[u16; 4]>,
            weights: Vec<[f32; 4]>,
            (positions, normals): (Vec<[f32; 3]>, Vec<[f32; 3]>),
        ) -> Self {
            let (want_p, want_n, _) =
                run_general(&palette, &joints, &weights, &positions, &normals, &[]).unwrap();
            Mesh { palette, joints, weights, positions, normals, want_p, want_n }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_avx2_loops_match_the_general_loop() {
        // On a CPU with AVX-512 the job never picks the AVX2 loops, so they are run directly.
        if !crate::simd::test_gate(crate::simd::SimdLevel::Avx2, "the AVX2 skinning loops' test") {
            return;
        }
        let n = 77;
        let Mesh { palette, joints, weights, positions, normals, want_p, want_n } = mesh77(&[]);
        let (mut p, mut nr, mut p_only) = (vec![[0.0; 3]; n], vec![[0.0; 3]; n], vec![[0.0; 3]; n]);
        // SAFETY: AVX2 and FMA checked above; every joint below 32; the slices of one length.
        unsafe {
            avx::positions_normals(&palette, &joints, &weights, &positions, &normals, &mut p, &mut nr)
                .unwrap();
            avx::positions(&palette, &joints, &weights, &positions, &mut p_only).unwrap();
        }
        for i in 0..n {
            assert!(Vec3::from(p[i]).abs_diff_eq(Vec3::from(want_p[i]), 1e-4), "position {i}");
            assert_eq!(p_only[i], p[i], "position {i}, positions only");
            assert!(Vec3::from(nr[i]).abs_diff_eq(Vec3::from(want_n[i]), 1e-5), "normal {i}");
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_avx512_loops_match_the_general_loop_and_refuse_a_bad_joint() {
        // On an Intel CPU the job skins positions and normals with the AVX2 loop even at the
        // avx512 level (`simd::wide_kernels`), so both AVX-512 loops are run here directly.
        if !crate::simd::test_gate(crate::simd::SimdLevel::Avx512, "the AVX-512 skinning loops' test") {
            return;
        }
        // 77 vertices: four blocks of sixteen and a tail.
        let n = 77;
        let Mesh { palette, mut joints, weights, positions, normals, want_p, want_n } = mesh77(&[9]);
        let (mut p, mut nr, mut p_only) = (vec![[0.0; 3]; n], vec![[0.0; 3]; n], vec![[0.0; 3]; n]);
        // SAFETY: AVX-512F and AVX2 checked above; every joint below 32; the slices of one length.
        unsafe {
            avx::positions_normals512(&palette, &joints, &weights, &positions, &normals, &mut p, &mut nr)
                .unwrap();
            avx::positions512(&palette, &joints, &weights, &positions, &mut p_only).unwrap();
        }
        for i in 0..n {
            assert!(Vec3::from(p[i]).abs_diff_eq(Vec3::from(want_p[i]), 1e-4), "position {i}");
            assert!(Vec3::from(p_only[i]).abs_diff_eq(Vec3::from(want_p[i]), 1e-4), "position {i}, alone");
            assert!(Vec3::from(nr[i]).abs_diff_eq(Vec3::from(want_n[i]), 1e-5), "normal {i}");
        }
        assert_eq!(nr[9], [0.0; 3], "a zero normal stays zero");
        // Each vertex alone (the loops' one-vertex tail) gives the bits it got in its block.
        let bits = |v: &[[f32; 3]]| v.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
        for i in 0..n {
            let (mut p1, mut n1) = ([[0.0; 3]], [[0.0; 3]]);
            let r = i..i + 1;
            // SAFETY: as above.
            unsafe {
                avx::positions_normals512(
                    &palette,
                    &joints[r.clone()],
                    &weights[r.clone()],
                    &positions[r.clone()],
                    &normals[r],
                    &mut p1,
                    &mut n1,
                )
                .unwrap()
            };
            assert_eq!((bits(&p1), bits(&n1)), (bits(&p[i..i + 1]), bits(&nr[i..i + 1])), "vertex {i}");
        }
        // A joint past the palette in a block and in the tail: the loops stop with its vertex.
        for v in [40, 75] {
            joints[v][1] = 32;
            // SAFETY: as above; the loops check the joints themselves.
            let (a, b) = unsafe {
                (
                    avx::positions_normals512(
                        &palette, &joints, &weights, &positions, &normals, &mut p, &mut nr,
                    ),
                    avx::positions512(&palette, &joints, &weights, &positions, &mut p_only),
                )
            };
            assert!(a.is_err() && b.is_err(), "vertex {v}: {a:?} {b:?}");
            joints[v][1] = 3;
        }
    }

    /// The block test's mesh: `n` vertices over 16 joints of scaled, rotated and moved
    /// matrices, unit normals, and what the general loop makes of them.
    #[cfg(target_arch = "x86_64")]
    fn block_mesh(n: usize) -> Mesh {
        let palette = palette_of(16, |i| {
            (0.5 + i * 0.1, Quat::from_rotation_z(i * 0.4), Vec3::new(i * 0.3, -1.5, 2.0))
        });
        let joints: Vec<[u16; 4]> = (0..n).map(|i| [(i % 16) as u16, ((i * 5) % 16) as u16, 3, 15]).collect();
        let weights: Vec<[f32; 4]> = (0..n).map(|i| [0.4, 0.3 - (i % 7) as f32 * 0.01, 0.2, 0.1]).collect();
        let positions: Vec<[f32; 3]> =
            (0..n).map(|i| [(i as f32 * 0.37).sin(), i as f32 * 0.01, 1.0]).collect();
        let normals: Vec<[f32; 3]> = (0..n)
            .map(|i| Vec3::new((i as f32).cos(), 0.3, (i as f32).sin()).normalize().to_array())
            .collect();
        Mesh::of(palette, joints, weights, (positions, normals))
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_avx2_eight_vertex_blocks_match_one_vertex_at_a_time_to_the_bit() {
        if !crate::simd::test_gate(crate::simd::SimdLevel::Avx2, "the AVX2 skinning loops' test") {
            return;
        }
        // 43 vertices: five blocks of eight and a tail of three; zero-length and NaN normals and
        // tangents in both halves of a block's registers, apart and on one vertex, and in the
        // tail keep their inputs. With tangents the points and normals are the bits they are
        // without.
        let n = 43;
        let Mesh { palette, joints, weights, positions, mut normals, .. } = block_mesh(n);
        for i in [1, 6, 15, 41] {
            normals[i] = [0.0; 3];
        }
        normals[20] = [f32::NAN, 0.0, 1.0];
        let mut tangents: Vec<[f32; 4]> = (0..n)
            .map(|i| {
                let t = Vec3::new(-(i as f32).sin(), 0.1, (i as f32).cos()).normalize();
                [t.x, t.y, t.z, if i % 2 == 0 { 1.0 } else { -1.0 }]
            })
            .collect();
        for i in [2, 15, 21, 42] {
            tangents[i] = [0.0, 0.0, 0.0, -1.0];
        }
        tangents[30] = [f32::NAN, 0.0, 1.0, 1.0];
        let kept_tangents = [2, 15, 21, 30, 42];
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let run = |r: std::ops::Range<usize>| {
            let m = r.len();
            let (mut p, mut nr) = (vec![[0.0f32; 3]; m], vec![[0.0f32; 3]; m]);
            let (mut pt, mut nt, mut t) = (vec![[0.0f32; 3]; m], vec![[0.0f32; 3]; m], vec![[0.0f32; 4]; m]);
            let (j, w, pos) = (&joints[r.clone()], &weights[r.clone()], &positions[r.clone()]);
            // SAFETY: AVX2 and FMA checked above; every joint below 16; the slices of one length.
            unsafe {
                avx::positions_normals(&palette, j, w, pos, &normals[r.clone()], &mut p, &mut nr).unwrap();
                let directions = ((&normals[r.clone()], &mut nt[..]), (&tangents[r], &mut t[..]));
                avx::positions_normals_tangents(&palette, j, w, pos, directions.0, directions.1, &mut pt)
                    .unwrap();
            }
            assert_eq!(bits(pt.as_flattened()), bits(p.as_flattened()), "points with and without tangents");
            assert_eq!(bits(nt.as_flattened()), bits(nr.as_flattened()), "normals with and without tangents");
            (p, nr, t)
        };
        let (p, nr, t) = run(0..n);
        for i in 0..n {
            let (p1, n1, t1) = run(i..i + 1);
            assert_eq!(bits(&p[i]), bits(&p1[0]), "position {i}");
            assert_eq!(bits(&nr[i]), bits(&n1[0]), "normal {i}");
            assert_eq!(bits(&t[i]), bits(&t1[0]), "tangent {i}");
        }
        for i in [1, 6, 15, 20, 41] {
            assert_eq!(bits(&nr[i]), bits(&normals[i]), "normal {i} kept");
        }
        for i in kept_tangents {
            assert_eq!(bits(&t[i]), bits(&tangents[i]), "tangent {i} kept");
        }
        let len = Vec3::from(nr[30]).length();
        assert!((len - 1.0).abs() < 1e-6, "normal 30 has length {len}");
        let (_, _, want) = run_general(&palette, &joints, &weights, &positions, &normals, &tangents).unwrap();
        for i in (0..n).filter(|i| !kept_tangents.contains(i)) {
            assert!(
                Vec4::from(t[i]).abs_diff_eq(Vec4::from(want[i]), 1e-5),
                "tangent {i}: {:?} vs {:?}",
                t[i],
                want[i]
            );
            assert_eq!(t[i][3], tangents[i][3], "tangent {i}'s handedness");
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_avx2_loops_stop_before_reading_a_joint_past_the_palette_wherever_it_falls() {
        if !crate::simd::test_gate(crate::simd::SimdLevel::Avx2, "the AVX2 skinning loops' test") {
            return;
        }
        // 43 vertices: blocks of eight read joints two vertices ahead and check a block ahead
        // (the vertices after the last multiple of eight first),
        // so a bad joint is planted at each position of a block, at the block edges, in the
        // look-ahead of the last block and in the tail. The loops must return a vertex from
        // which the first bad joint is the planted one (nothing bad before it is skipped).
        let palette = vec![Mat4::IDENTITY; 8];
        let n = 43;
        let (positions, normals, weights) =
            (vec![[1.0, 2.0, 3.0]; n], vec![[0.0, 1.0, 0.0]; n], vec![[0.25; 4]; n]);
        let tangents = vec![[1.0, 0.0, 0.0, 1.0]; n];
        let first_bad_from =
            |joints: &[[u16; 4]], from: usize| (from..n).find(|&i| joints[i].iter().any(|&j| j >= 8));
        for (vertex, joint) in (0..n).map(|v| (v, if v % 3 == 0 { u16::MAX } else { 8 + v as u16 })) {
            let mut joints = vec![[1u16, 2, 3, 7]; n];
            joints[vertex][vertex % 4] = joint;
            let (mut p, mut nr) = (vec![[0.0; 3]; n], vec![[0.0; 3]; n]);
            // SAFETY: AVX2 and FMA checked above; the slices of one length.
            let mut t = vec![[0.0; 4]; n];
            let (with, without, tangent) = unsafe {
                (
                    avx::positions_normals(
                        &palette, &joints, &weights, &positions, &normals, &mut p, &mut nr,
                    ),
                    avx::positions(&palette, &joints, &weights, &positions, &mut p),
                    avx::positions_normals_tangents(
                        &palette,
                        &joints,
                        &weights,
                        &positions,
                        (&normals, &mut nr),
                        (&tangents, &mut t),
                        &mut p,
                    ),
                )
            };
            for (what, got) in
                [("with normals", with), ("positions only", without), ("with tangents", tangent)]
            {
                let from = got.expect_err(what);
                assert!(from <= vertex, "{what}: vertex {vertex} planted, stopped at {from}");
                assert_eq!(first_bad_from(&joints, from), Some(vertex), "{what}: vertex {vertex}");
            }
        }
        let (mut p, mut nr) = (vec![[0.0; 3]; n], vec![[0.0; 3]; n]);
        let joints = vec![[0u16; 4]; n];
        // SAFETY: AVX2 and FMA checked above; the slices of one length.
        let got =
            unsafe { avx::positions_normals(&[], &joints, &weights, &positions, &normals, &mut p, &mut nr) };
        assert_eq!(got, Err(0), "an empty palette");
    }

    #[test]
    fn a_palette_gives_the_same_bits_wherever_it_lies_in_memory() {
        // A palette off a 64-byte boundary is copied to an aligned buffer for the SIMD loops
        // (when it is small against the vertex count); the result must not depend on where the
        // caller's palette lies (at 0, 16, 32 and 48 bytes past a 64-byte boundary), nor on
        // whether it was copied (1,000 vertices for 64 matrices are too few for the copy).
        #[repr(C, align(64))]
        struct Room([Vec4; 4 * 65]);
        let matrices =
            palette_of(64, |i| (1.0 + i * 0.01, Quat::from_rotation_y(i * 0.1), Vec3::new(i, 0.5, -1.0)));
        let n = 2000;
        let joints: Vec<[u16; 4]> = (0..n).map(|i| [(i % 64) as u16, ((i * 7) % 64) as u16, 63, 0]).collect();
        let weights = vec![[0.4, 0.3, 0.2, 0.1]; n];
        let positions: Vec<[f32; 3]> = (0..n).map(|i| [i as f32 * 0.01, 1.0, -0.5]).collect();
        let normals: Vec<[f32; 3]> =
            (0..n).map(|i| Vec3::new(1.0, i as f32, 2.0).normalize().to_array()).collect();
        let mut room = Room([Vec4::ZERO; 4 * 65]);
        let mut results = Vec::new();
        for (offset, vertices) in [(0, n), (1, n), (2, n), (3, n), (1, 1000)] {
            let room = &mut room.0[offset..offset + 4 * 64];
            // SAFETY: a Mat4 is four Vec4 columns (16-byte aligned, no padding); the 256 Vec4
            // from `offset` are 64 matrices inside `room`, borrowed mutably here only.
            let palette = unsafe { std::slice::from_raw_parts_mut(room.as_mut_ptr() as *mut Mat4, 64) };
            palette.copy_from_slice(&matrices);
            assert_eq!(palette.as_ptr() as usize % 64, 16 * offset, "the palette's place");
            let r = ..vertices;
            let (p, nr, _) =
                run_job(palette, &joints[r], &weights[r], &positions[r], &normals[r], &[]).unwrap();
            results.push((p, nr));
        }
        for (k, (p, nr)) in results.iter().enumerate().skip(1) {
            let m = p.len();
            assert_eq!(p[..], results[0].0[..m], "positions, case {k}");
            assert_eq!(nr[..], results[0].1[..m], "normals, case {k}");
        }
    }

    #[test]
    fn sixteen_vertex_blocks_match_one_vertex_at_a_time_to_the_bit() {
        // Jobs of 1 to 16 vertices take the one-at-a-time path (a block needs a vertex after
        // it); the 150-vertex job takes nine blocks and a tail of six; every vertex alone is
        // a one-vertex job. Every vertex must come out
        // with the same bits either way, zero-length and NaN normals keeping their inputs in
        // whichever lane of a block they fall.
        let palette = palette_of(16, |i| {
            (
                0.5 + i * 0.1,
                Quat::from_rotation_z(i * 0.4) * Quat::from_rotation_x(0.7),
                Vec3::new(i * 0.3, -1.5, 2.0),
            )
        });
        let n = 150;
        let joints: Vec<[u16; 4]> = (0..n).map(|i| [(i % 16) as u16, ((i * 5) % 16) as u16, 3, 15]).collect();
        let weights: Vec<[f32; 4]> = (0..n).map(|i| [0.4, 0.3 - (i % 7) as f32 * 0.01, 0.2, 0.1]).collect();
        let positions: Vec<[f32; 3]> =
            (0..n).map(|i| [(i as f32 * 0.37).sin(), i as f32 * 0.01, -(i as f32 * 0.11).cos()]).collect();
        let mut normals: Vec<[f32; 3]> = (0..n)
            .map(|i| Vec3::new((i as f32).cos(), 0.3, (i as f32).sin()).normalize().to_array())
            .collect();
        for i in [16, 17, 22, 27, 31, 40, 149] {
            normals[i] = [0.0; 3];
        }
        normals[53] = [f32::NAN, 0.0, 1.0];
        let run = |r: std::ops::Range<usize>, with_normals: bool| {
            let nr = if with_normals { &normals[r.clone()] } else { &[] };
            let (p, nr, _) =
                run_job(&palette, &joints[r.clone()], &weights[r.clone()], &positions[r], nr, &[]).unwrap();
            (p, nr)
        };
        let bits = |v: &[[f32; 3]]| v.iter().flatten().map(|x| x.to_bits()).collect::<Vec<_>>();
        for with_normals in [false, true] {
            let (p, nr) = run(0..n, with_normals);
            for i in 0..n {
                let (p1, n1) = run(i..i + 1, with_normals);
                assert_eq!(bits(&p[i..i + 1]), bits(&p1), "position {i}");
                if with_normals {
                    assert_eq!(bits(&nr[i..i + 1]), bits(&n1), "normal {i}");
                }
            }
            if with_normals {
                for i in [16, 17, 22, 27, 31, 40, 53, 149] {
                    assert_eq!(bits(&nr[i..i + 1]), bits(&normals[i..i + 1]), "normal {i} kept");
                }
                let len = Vec3::from(nr[100]).length();
                assert!((len - 1.0).abs() < 1e-6, "normal 100 has length {len}");
            }
        }
    }

    #[test]
    fn a_joint_past_the_palette_is_reported_at_its_vertex_wherever_it_falls() {
        // Vertex 37 sits in the third sixteen-vertex block, vertex 148 in the tail of a
        // 150-vertex job; both paths (with normals and without) must name the vertex and the
        // joint, and an empty palette refuses the first vertex.
        let palette = vec![Mat4::IDENTITY; 8];
        let n = 150;
        let positions = vec![[1.0, 2.0, 3.0]; n];
        let normals = vec![[0.0, 1.0, 0.0]; n];
        let weights = vec![[0.25; 4]; n];
        for (vertex, joint) in [(37, 8u16), (148, u16::MAX), (0, 9)] {
            let mut joints = vec![[1u16, 2, 3, 7]; n];
            joints[vertex][3] = joint;
            for with_normals in [false, true] {
                let nr = if with_normals { &normals[..] } else { &[] };
                let err = run_job(&palette, &joints, &weights, &positions, nr, &[]).unwrap_err();
                assert_eq!(
                    err,
                    SkinningError::JointOutOfRange { vertex, joint, palette: 8 },
                    "normals {with_normals}"
                );
            }
        }
        let err = run_job(&[], &vec![[0u16; 4]; n], &weights, &positions, &[], &[]).unwrap_err();
        assert_eq!(err, SkinningError::JointOutOfRange { vertex: 0, joint: 0, palette: 0 });
    }

    #[test]
    fn blends_four_influences_and_reports_bad_joint() {
        let palette = [Mat4::from_translation(Vec3::X), Mat4::from_translation(Vec3::Y)];
        let weights = [[0.25, 0.75, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]];
        let err = run_job(
            &palette,
            &[[0, 1, 0, 0], [0, 2, 0, 0]],
            &weights,
            &[[1.0, 1.0, 1.0], [0.0; 3]],
            &[],
            &[],
        )
        .unwrap_err();
        assert_eq!(err, SkinningError::JointOutOfRange { vertex: 1, joint: 2, palette: 2 });
        for normals in [&[][..], &[[0.0, 0.0, 1.0]][..]] {
            let (out, nrm, _) =
                run_job(&palette, &[[0, 1, 0, 0]], &weights[..1], &[[1.0, 1.0, 1.0]], normals, &[]).unwrap();
            assert_eq!(out[0], [1.25, 1.75, 1.0]);
            // A translation turns no normal: the same normal, within the two units in the last
            // place the `avx2` level's normalization allows (a reciprocal square root and one
            // Newton step, whose last bit differs between CPU makers: 0.99999994 for 1 on an
            // Intel Xeon, 1 on an AMD EPYC).
            assert_eq!(nrm.len(), normals.len());
            for (got, want) in nrm.iter().zip(normals) {
                for (g, w) in got.iter().zip(want) {
                    assert!((g - w).abs() <= 2.0 * f32::EPSILON * w.abs().max(1.0), "{got:?} for {want:?}");
                }
            }
        }
    }
}
