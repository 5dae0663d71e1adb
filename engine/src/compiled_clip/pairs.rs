//! Stream groups and key-block groups sampled two at a time with AVX: eight lanes per 256-bit
//! vector, each 128-bit half one group of four tracks, with exactly the arithmetic of the
//! four-lane paths in the parent module (`lerp_slot`, `slerp_slot`, `KeyBlock::lerp`'s loop,
//! `slerp_lanes`): the same IEEE operations in the same order
//! and no fused multiply-adds, so every lane comes out with the same bits. Where the two groups'
//! rotations need different slerp series (or a lane the scalar path), the weights are computed
//! half by half with [`math::slerp_weights4`]; everything else stays eight-wide.
//!
//! Rotations, whose slerp series is a long dependency chain, go in stages over up to eight
//! pairs (the hemisphere tests, then the series, then the rest), so the processor overlaps the
//! pairs' chains.
//!
//! This module only interpolates; applying stream keys, refilling slots, finding a block's
//! segment and holding its ends stay in the parent. The compressed decoder's eight-lane
//! rotations (`compressed::decode`) use its `hemisphere`, `slerp_weights8`, `renormalize8` and
//! `columns`.

use std::arch::x86_64::*;

use glam::Vec4;

use super::{QUAT_SLOT, VEC3_SLOT};
use crate::math::{self, Transform};

// `rows` reads slot rows with aligned 128-bit loads (`_mm_load_ps`): glam's `Vec4` must be
// 16-byte aligned and 16 bytes long (its SSE2 form), checked here at compile time.
const _: () = assert!(std::mem::align_of::<Vec4>() == 16 && std::mem::size_of::<Vec4>() == 16);

/// Row `r` of group `g`'s slot and the same row of group `g + 1` (`stride` rows further) as one
/// 256-bit vector.
///
/// # Safety
/// The CPU must support AVX; `slot` must hold `stride + r + 1` rows.
#[inline]
#[target_feature(enable = "avx")]
unsafe fn rows(slot: &[Vec4], r: usize, stride: usize) -> __m256 {
    debug_assert!(stride + r < slot.len());
    // SAFETY: both rows lie in `slot` (the caller's guarantee); `Vec4` is 16-byte aligned
    // (asserted at compile time above).
    unsafe {
        let p = slot.as_ptr() as *const f32;
        _mm256_insertf128_ps(
            _mm256_castps128_ps256(_mm_load_ps(p.add(4 * r))),
            _mm_load_ps(p.add(4 * (stride + r))),
            1,
        )
    }
}

/// `select(held, a, a + (b - a) * u)`, `lerp_slot`'s per-lane rule.
#[inline]
#[target_feature(enable = "avx")]
fn lerp(a: __m256, b: __m256, u: __m256, held: __m256) -> __m256 {
    _mm256_blendv_ps(_mm256_add_ps(a, _mm256_mul_ps(_mm256_sub_ps(b, a), u)), a, held)
}

/// Four rows (`x, y, z, w`) of eight lanes as eight `[x, y, z, w]` vectors: the lanes of the
/// low half (group `g`) first, then the high half's.
#[inline]
#[target_feature(enable = "avx")]
pub(crate) fn columns(x: __m256, y: __m256, z: __m256, w: __m256) -> [__m128; 8] {
    let (t0, t1) = (_mm256_unpacklo_ps(x, y), _mm256_unpackhi_ps(x, y));
    let (t2, t3) = (_mm256_unpacklo_ps(z, w), _mm256_unpackhi_ps(z, w));
    let q = [
        _mm256_shuffle_ps(t0, t2, 0b01_00_01_00),
        _mm256_shuffle_ps(t0, t2, 0b11_10_11_10),
        _mm256_shuffle_ps(t1, t3, 0b01_00_01_00),
        _mm256_shuffle_ps(t1, t3, 0b11_10_11_10),
    ];
    std::array::from_fn(
        |k| if k < 4 { _mm256_castps256_ps128(q[k]) } else { _mm256_extractf128_ps(q[k - 4], 1) },
    )
}

/// The segment parameter `(t - t0) / dt` of both groups, and where they hold (`dt` infinite).
#[inline]
#[target_feature(enable = "avx")]
fn parameter(slot: &[Vec4], stride: usize, tv: __m256) -> (__m256, __m256) {
    assert!(slot.len() >= stride + 2, "two groups' slots");
    // SAFETY: rows 0 and 1 of both groups lie in `slot` (asserted).
    let (t0, dt) = unsafe { (rows(slot, 0, stride), rows(slot, 1, stride)) };
    (_mm256_div_ps(_mm256_sub_ps(tv, t0), dt), _mm256_cmp_ps::<_CMP_EQ_OQ>(dt, _mm256_set1_ps(f32::INFINITY)))
}

/// Two translation or scale groups (`slot`: both slots, `2 * VEC3_SLOT` rows) at `tv`: eight
/// `[x, y, z, 0]` vectors, group `g`'s four lanes first.
///
/// # Safety
/// The CPU must support AVX; `slot` must hold two slots.
#[inline]
#[target_feature(enable = "avx")]
pub(super) unsafe fn lerp_pair(slot: &[Vec4], tv: __m256) -> [__m128; 8] {
    assert!(slot.len() >= 2 * VEC3_SLOT);
    let (u, held) = parameter(slot, VEC3_SLOT, tv);
    // SAFETY: rows 2..9 of both slots lie in `slot` (asserted).
    let c = |k: usize| unsafe { lerp(rows(slot, 2 + k, VEC3_SLOT), rows(slot, 6 + k, VEC3_SLOT), u, held) };
    columns(c(0), c(1), c(2), _mm256_setzero_ps())
}

/// `math::series4` over eight lanes: Eberly's series with `N` terms, the last scaled by `mu`.
#[inline]
#[target_feature(enable = "avx")]
fn series8<const N: usize>(t: __m256, x: __m256, mu: f32) -> (__m256, __m256) {
    let one = _mm256_set1_ps(1.0);
    let xm1 = _mm256_sub_ps(x, one);
    let s = _mm256_sub_ps(one, t);
    let (t2, s2) = (_mm256_mul_ps(t, t), _mm256_mul_ps(s, s));
    let term = |i: usize, sq: __m256, acc: __m256| {
        let c = _mm256_sub_ps(
            _mm256_mul_ps(_mm256_set1_ps(math::SLERP_U[i]), sq),
            _mm256_set1_ps(math::SLERP_V[i]),
        );
        _mm256_add_ps(one, _mm256_mul_ps(_mm256_mul_ps(c, xm1), acc))
    };
    let mut at = term(N - 1, t2, _mm256_set1_ps(mu));
    let mut as_ = term(N - 1, s2, _mm256_set1_ps(mu));
    for i in (0..N - 1).rev() {
        at = term(i, t2, at);
        as_ = term(i, s2, as_);
    }
    (_mm256_mul_ps(s, as_), _mm256_mul_ps(t, at))
}

/// `math::slerp_weights4` over eight lanes: one series for all when both halves take it, else
/// half by half.
#[inline]
#[target_feature(enable = "avx")]
pub(crate) fn slerp_weights8(t: __m256, x: __m256) -> (__m256, __m256) {
    let all = |m: __m256| _mm256_movemask_ps(m) == 0xff;
    if all(_mm256_cmp_ps::<_CMP_GE_OQ>(x, _mm256_set1_ps(0.95))) {
        series8::<4>(t, x, 1.0)
    } else if all(_mm256_cmp_ps::<_CMP_GE_OQ>(x, _mm256_set1_ps(0.5)))
        && all(_mm256_cmp_ps::<_CMP_LT_OQ>(x, _mm256_set1_ps(0.95)))
    {
        series8::<8>(t, x, 1.5)
    } else {
        let half = |v: __m256, k: usize| {
            Vec4::from(if k == 0 { _mm256_castps256_ps128(v) } else { _mm256_extractf128_ps(v, 1) })
        };
        let (a0, b0) = math::slerp_weights4(half(t, 0), half(x, 0));
        let (a1, b1) = math::slerp_weights4(half(t, 1), half(x, 1));
        let join = |lo: Vec4, hi: Vec4| _mm256_insertf128_ps(_mm256_castps128_ps256(lo.into()), hi.into(), 1);
        (join(a0, a1), join(b0, b1))
    }
}

/// Both ends' `x, y, z, w` rows of two rotation groups: rows `0..4` of `a` and of `b`, the
/// second group's `stride` rows after the first's.
///
/// # Safety
/// The CPU must support AVX; `a` and `b` must hold `stride + 4` rows.
#[inline]
#[target_feature(enable = "avx")]
unsafe fn ends(a: &[Vec4], b: &[Vec4], stride: usize) -> [[__m256; 4]; 2] {
    assert!(a.len() >= stride + 4 && b.len() >= stride + 4);
    // SAFETY: the rows lie in `a` and `b` (asserted).
    [
        std::array::from_fn(|k| unsafe { rows(a, k, stride) }),
        std::array::from_fn(|k| unsafe { rows(b, k, stride) }),
    ]
}

/// `slerp_lanes`' hemisphere test: the `sign` that flips the far end into the near hemisphere
/// (multiplying by -1 is exact) and the capped cosine `x` the slerp weights take.
#[inline]
#[target_feature(enable = "avx")]
pub(crate) fn hemisphere([a, b]: &[[__m256; 4]; 2]) -> (__m256, __m256) {
    let (add, mul) = (|x, y| _mm256_add_ps(x, y), |x, y| _mm256_mul_ps(x, y));
    let d = add(add(add(mul(a[0], b[0]), mul(a[1], b[1])), mul(a[2], b[2])), mul(a[3], b[3]));
    let neg = _mm256_cmp_ps::<_CMP_LT_OQ>(d, _mm256_setzero_ps());
    let sign = _mm256_blendv_ps(_mm256_set1_ps(1.0), _mm256_set1_ps(-1.0), neg);
    (sign, _mm256_min_ps(mul(d, sign), _mm256_set1_ps(1.0)))
}

/// `slerp_lanes`' last steps: the ends weighted by `w` (the far end flipped by `sign`), then
/// `math::renormalize` per lane (one Newton step near unit length, else an exact division).
#[inline]
#[target_feature(enable = "avx")]
fn combine([a, b]: &[[__m256; 4]; 2], sign: __m256, (wa, wb): (__m256, __m256)) -> [__m256; 4] {
    let (add, mul) = (|x, y| _mm256_add_ps(x, y), |x, y| _mm256_mul_ps(x, y));
    let q: [__m256; 4] = std::array::from_fn(|k| add(mul(a[k], wa), mul(mul(b[k], sign), wb)));
    let len2 = add(add(add(mul(q[0], q[0]), mul(q[1], q[1])), mul(q[2], q[2])), mul(q[3], q[3]));
    renormalize8(q, len2)
}

/// `math::renormalize4` over eight lanes: four rows (`x, y, z, w`) given their squared lengths
/// `len2` (summed in whichever order the caller's scalar reference sums them): per lane one
/// Newton step near unit length, else an exact division.
#[inline]
#[target_feature(enable = "avx")]
pub(crate) fn renormalize8(q: [__m256; 4], len2: __m256) -> [__m256; 4] {
    let mul = |x, y| _mm256_mul_ps(x, y);
    let off = _mm256_sub_ps(len2, _mm256_set1_ps(1.0));
    let off = _mm256_andnot_ps(_mm256_set1_ps(-0.0), off);
    let near = _mm256_cmp_ps::<_CMP_LT_OQ>(off, _mm256_set1_ps(1e-3));
    let f = _mm256_sub_ps(_mm256_set1_ps(1.5), mul(_mm256_set1_ps(0.5), len2));
    if _mm256_movemask_ps(near) == 0xff {
        q.map(|c| mul(c, f))
    } else {
        let len = _mm256_sqrt_ps(len2);
        q.map(|c| _mm256_blendv_ps(_mm256_div_ps(c, len), mul(c, f), near))
    }
}

/// The first stage of [`slerp_pair`]: the segment parameter `u`, the held lanes, and the
/// hemisphere `sign` with the capped cosine `x` the slerp weights take.
///
/// # Safety
/// The CPU must support AVX; `slot` must hold two slots.
#[inline]
#[target_feature(enable = "avx")]
unsafe fn slerp_head(slot: &[Vec4], tv: __m256) -> [__m256; 4] {
    assert!(slot.len() >= 2 * QUAT_SLOT);
    let (u, held) = parameter(slot, QUAT_SLOT, tv);
    // SAFETY: rows 2..9 of both slots lie in `slot` (asserted).
    let (sign, x) = hemisphere(&unsafe { ends(&slot[2..], &slot[6..], QUAT_SLOT) });
    [u, held, sign, x]
}

/// The last stage of [`slerp_pair`]: the ends weighted by `w` (the far end flipped by the
/// head's `sign`), renormalized, the held lanes' keys put back, as eight quaternions.
///
/// # Safety
/// The CPU must support AVX; `slot` must hold two slots.
#[inline]
#[target_feature(enable = "avx")]
unsafe fn slerp_tail(slot: &[Vec4], head: &[__m256; 4], w: (__m256, __m256)) -> [__m128; 8] {
    assert!(slot.len() >= 2 * QUAT_SLOT);
    let [_, held, sign, _] = *head;
    // SAFETY: rows 2..9 of both slots lie in `slot` (asserted).
    let ab = unsafe { ends(&slot[2..], &slot[6..], QUAT_SLOT) };
    let q = combine(&ab, sign, w);
    // Held lanes take their key exactly.
    let q: [__m256; 4] = std::array::from_fn(|k| _mm256_blendv_ps(q[k], ab[0][k], held));
    columns(q[0], q[1], q[2], q[3])
}

/// Two rotation groups (`slot`: both slots, `2 * QUAT_SLOT` rows) at `tv`: `slerp_lanes` and the
/// held lanes' exact keys, as eight quaternions, group `g`'s four lanes first.
///
/// # Safety
/// The CPU must support AVX; `slot` must hold two slots.
#[cfg(test)]
#[target_feature(enable = "avx")]
unsafe fn slerp_pair(slot: &[Vec4], tv: __m256) -> [__m128; 8] {
    // SAFETY: the caller's guarantees.
    unsafe {
        let head = slerp_head(slot, tv);
        slerp_tail(slot, &head, slerp_weights8(head[0], head[3]))
    }
}

/// Samples the stream groups two at a time into `out` (`bones`: each group's four bones;
/// `data`: their slots; rotations when `ROTATION`, else translations or scales) and returns how
/// many groups it did (an odd last one is left to the four-lane path). `write` stores one lane's
/// `[x, y, z, w]`.
///
/// # Safety
/// The CPU must support AVX.
#[inline]
#[target_feature(enable = "avx")]
pub(super) unsafe fn sample_pairs<const ROTATION: bool>(
    bones: &[[u32; 4]],
    data: &[Vec4],
    time: f32,
    out: &mut [Transform],
    write: impl Fn(&mut Transform, __m128),
) -> usize {
    let tv = _mm256_set1_ps(time);
    let pairs = bones.len() / 2;
    let slot_rows = if ROTATION { QUAT_SLOT } else { VEC3_SLOT };
    assert!(data.len() >= bones.len() * slot_rows, "a slot per group");
    if ROTATION {
        // In stages over up to eight pairs (each a short chain, so the processor overlaps the
        // pairs' latencies): heads, then weights (the series, the long chain), then the rest.
        const STAGE: usize = 8;
        for (groups, slot) in bones[..2 * pairs].chunks(2 * STAGE).zip(data.chunks(2 * STAGE * QUAT_SLOT)) {
            let n = groups.len() / 2;
            let pair = |j: usize| &slot[2 * j * QUAT_SLOT..];
            let mut heads = [[_mm256_setzero_ps(); 4]; STAGE];
            for (j, h) in heads.iter_mut().enumerate().take(n) {
                // SAFETY: AVX (the caller's guarantee); pair j's two slots lie in `slot`.
                *h = unsafe { slerp_head(pair(j), tv) };
            }
            let mut w = [(_mm256_setzero_ps(), _mm256_setzero_ps()); STAGE];
            for (w, h) in w.iter_mut().zip(&heads).take(n) {
                *w = slerp_weights8(h[0], h[3]);
            }
            for j in 0..n {
                // SAFETY: as above.
                let v = unsafe { slerp_tail(pair(j), &heads[j], w[j]) };
                for (&bone, v) in groups[2 * j..2 * j + 2].iter().flatten().zip(v) {
                    write(&mut out[bone as usize], v);
                }
            }
        }
        return 2 * pairs;
    }
    let rows = if ROTATION { QUAT_SLOT } else { VEC3_SLOT };
    for (lanes, slot) in bones.chunks_exact(2).zip(data.chunks_exact(2 * rows)) {
        // SAFETY: AVX (the caller's guarantee); `slot` holds two slots.
        let v = unsafe { lerp_pair(slot, tv) };
        for (&bone, v) in lanes.iter().flatten().zip(v) {
            write(&mut out[bone as usize], v);
        }
    }
    2 * pairs
}

/// Samples a key block's groups of one kind two at a time between its key rows (`r0`, `r1`: the
/// kind's part of each, `stride` rows per group: 4 for rotations, 3 for translations and
/// scales) at the block's one parameter `u`: `slerp_lanes` or `a + (b - a) * u`, as the
/// block's four-lane loop computes them, to the bit. Returns how many groups it did (an odd last
/// one is left to the four-lane loop). `write` stores one lane's `[x, y, z, w]`.
///
/// # Safety
/// The CPU must support AVX.
#[inline]
#[target_feature(enable = "avx")]
pub(super) unsafe fn block_pairs(
    bones: &[[u32; 4]],
    (r0, r1): (&[Vec4], &[Vec4]),
    stride: usize,
    u: f32,
    out: &mut [Transform],
    write: impl Fn(&mut Transform, __m128),
) -> usize {
    let uu = _mm256_set1_ps(u);
    let pairs = bones.len() / 2;
    assert!(r0.len() >= bones.len() * stride && r1.len() >= bones.len() * stride, "rows per group");
    if stride == 4 {
        // Rotations in stages over up to eight pairs, as the streams do: the hemisphere tests,
        // then the series (the long chain), then the rest.
        const STAGE: usize = 8;
        for (c, chunk) in bones[..2 * pairs].chunks(2 * STAGE).enumerate() {
            let n = chunk.len() / 2;
            let at = |j: usize| 2 * (c * STAGE + j) * stride;
            let mut heads = [(_mm256_setzero_ps(), _mm256_setzero_ps()); STAGE];
            for (j, h) in heads.iter_mut().enumerate().take(n) {
                // SAFETY: AVX (the caller's guarantee); `ends` checks the rows.
                *h = hemisphere(&unsafe { ends(&r0[at(j)..], &r1[at(j)..], 4) });
            }
            let mut w = [(_mm256_setzero_ps(), _mm256_setzero_ps()); STAGE];
            for (w, h) in w.iter_mut().zip(&heads).take(n) {
                *w = slerp_weights8(uu, h.1);
            }
            for j in 0..n {
                // SAFETY: as above.
                let ab = unsafe { ends(&r0[at(j)..], &r1[at(j)..], 4) };
                let q = combine(&ab, heads[j].0, w[j]);
                for (&bone, v) in
                    chunk[2 * j..2 * j + 2].iter().flatten().zip(columns(q[0], q[1], q[2], q[3]))
                {
                    write(&mut out[bone as usize], v);
                }
            }
        }
        return 2 * pairs;
    }
    for (j, groups) in bones.chunks_exact(2).enumerate() {
        let (a, b) = (&r0[2 * j * stride..], &r1[2 * j * stride..]);
        assert!(a.len() >= 2 * stride && b.len() >= 2 * stride);
        // SAFETY: the rows lie in `a` and `b` (asserted).
        let c = |k: usize| unsafe { lerp(rows(a, k, stride), rows(b, k, stride), uu, _mm256_setzero_ps()) };
        let v = columns(c(0), c(1), c(2), _mm256_setzero_ps());
        for (&bone, v) in groups.iter().flatten().zip(v) {
            write(&mut out[bone as usize], v);
        }
    }
    2 * pairs
}

#[cfg(test)]
mod tests {
    use glam::{Quat, Vec3};

    use super::super::{lanes3, lerp_slot, slerp_lanes, slerp_slot};
    use super::*;

    /// A xorshift stream of floats in `[0, 1)`.
    fn uniform(mut seed: u64) -> impl FnMut() -> f32 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 24) as f32
        }
    }

    /// Two groups' slots whose lanes cover every branch: end rotations a few degrees apart (the
    /// four-term series), tens of degrees (eight terms), far apart (the scalar path), in opposite
    /// hemispheres, not of unit length, and held lanes. `pick` chooses each lane's case.
    fn slots(pick: impl Fn(usize) -> usize, next: &mut impl FnMut() -> f32) -> Vec<Vec4> {
        let mut rows = vec![Vec4::ZERO; 2 * QUAT_SLOT];
        for lane in 0..8 {
            let (g, l) = (lane / 4, lane % 4);
            let axis = Vec3::new(next() - 0.5, next() - 0.5, next() - 0.5).normalize_or(Vec3::X);
            let a = Quat::from_axis_angle(axis, next() * 6.0);
            let case = pick(lane);
            let angle = [0.1, 1.2, 2.8, 0.3, 0.5, 0.2][case] * (0.5 + next());
            let mut b = a * Quat::from_axis_angle(axis.any_orthonormal_vector(), angle);
            let (t0, mut dt) = (next(), 0.1 + next());
            match case {
                3 => b = -b,
                4 => b = Quat::from_vec4(Vec4::from(b) * 1.01),
                5 => dt = f32::INFINITY,
                _ => {}
            }
            let row = |r: usize| g * QUAT_SLOT + r;
            rows[row(0)][l] = t0;
            rows[row(1)][l] = dt;
            for (k, (x, y)) in a.to_array().into_iter().zip(b.to_array()).enumerate() {
                rows[row(2 + k)][l] = x;
                rows[row(6 + k)][l] = y;
            }
        }
        rows
    }

    #[test]
    fn two_groups_at_once_match_the_four_lane_path_to_the_bit() {
        if !crate::simd::test_gate(crate::simd::SimdLevel::Avx2, "the eight-lane pairs test") {
            return;
        }
        let mut next = uniform(0x2545F4914F6CDD1Du64);
        let bits4 = |v: [__m128; 8]| v.map(|x| Vec4::from(x).to_array().map(f32::to_bits));
        for round in 0..3000 {
            // The same case in every lane (one series for all eight), the same per group, or
            // mixed lane by lane.
            let (c, d) = (round % 6, (round / 6) % 6);
            let rows = match round % 3 {
                0 => slots(|_| c, &mut next),
                1 => slots(|lane| if lane < 4 { c } else { d }, &mut next),
                _ => slots(|lane| (lane * 7 + round) % 6, &mut next),
            };
            let time = next() * 1.5;
            let tv = Vec4::splat(time);
            // SAFETY: AVX checked above; `rows` holds two slots.
            let (got_r, got_l) =
                unsafe { (slerp_pair(&rows, _mm256_set1_ps(time)), lerp_pair(&rows, _mm256_set1_ps(time))) };
            let mut want_r = [Vec4::ZERO; 8];
            let mut want_l = [Vec4::ZERO; 8];
            for g in 0..2 {
                let slot = &rows[g * QUAT_SLOT..(g + 1) * QUAT_SLOT];
                for (l, q) in slerp_slot(slot, tv).into_iter().enumerate() {
                    want_r[4 * g + l] = Vec4::from(q);
                }
                for (l, v) in lerp_slot(slot, tv).into_iter().enumerate() {
                    want_l[4 * g + l] = v.extend(0.0);
                }
            }
            let bits = |v: [Vec4; 8]| v.map(|x| x.to_array().map(f32::to_bits));
            assert_eq!(bits4(got_r), bits(want_r), "rotations, round {round}");
            assert_eq!(bits4(got_l), bits(want_l), "translations, round {round}");
        }
    }

    #[test]
    fn key_block_groups_two_at_a_time_match_the_four_lane_loop_to_the_bit() {
        if !crate::simd::test_gate(crate::simd::SimdLevel::Avx2, "the eight-lane pairs test") {
            return;
        }
        let mut next = uniform(0x9E3779B97F4A7C15u64);
        let bones: Vec<[u32; 4]> = (0..4).map(|g| std::array::from_fn(|l| 4 * g + l as u32)).collect();
        for round in 0..2000 {
            // A key block's rows: per group four rotation rows (or three translation rows), the
            // segment's two key rows apart; one parameter for every lane.
            let (c, d) = (round % 6, (round / 6) % 6);
            let mut rows = Vec::new();
            for _ in 0..2 {
                rows.extend(match round % 3 {
                    0 => slots(|_| c, &mut next),
                    1 => slots(|lane| if lane < 4 { c } else { d }, &mut next),
                    _ => slots(|lane| (lane * 5 + round) % 6, &mut next),
                });
            }
            let group =
                |g: usize, from: usize, n: usize| &rows[g * QUAT_SLOT + from..g * QUAT_SLOT + from + n];
            let (q0, q1): (Vec<Vec4>, Vec<Vec4>) = (
                (0..4).flat_map(|g| group(g, 2, 4).to_vec()).collect(),
                (0..4).flat_map(|g| group(g, 6, 4).to_vec()).collect(),
            );
            let (t0, t1): (Vec<Vec4>, Vec<Vec4>) = (
                (0..4).flat_map(|g| group(g, 2, 3).to_vec()).collect(),
                (0..4).flat_map(|g| group(g, 6, 3).to_vec()).collect(),
            );
            let u = next() * 1.2 - 0.1;
            let mut out = vec![Transform::IDENTITY; 16];
            // SAFETY: AVX checked above.
            let done = unsafe {
                block_pairs(&bones, (&q0, &q1), 4, u, &mut out, |o, v| {
                    o.rotation = glam::Quat::from_vec4(Vec4::from(v))
                }) + block_pairs(&bones[..3], (&t0, &t1), 3, u, &mut out, |o, v| {
                    o.translation = Vec4::from(v).truncate()
                })
            };
            assert_eq!(done, 4 + 2, "two pairs of rotation groups, one pair of the three translation groups");
            let uu = Vec4::splat(u);
            for g in 0..4 {
                let want = slerp_lanes(&q0[4 * g..4 * g + 4], &q1[4 * g..4 * g + 4], uu);
                let (a, b) = (&t0[3 * g..3 * g + 3], &t1[3 * g..3 * g + 3]);
                let want_t =
                    lanes3(a[0] + (b[0] - a[0]) * uu, a[1] + (b[1] - a[1]) * uu, a[2] + (b[2] - a[2]) * uu);
                for l in 0..4 {
                    let o = &out[4 * g + l];
                    let bits = |q: glam::Quat| q.to_array().map(f32::to_bits);
                    assert_eq!(bits(o.rotation), bits(want[l]), "rotation {g}/{l}, round {round}");
                    if g < 2 {
                        let bits3 = |v: glam::Vec3| v.to_array().map(f32::to_bits);
                        assert_eq!(
                            bits3(o.translation),
                            bits3(want_t[l]),
                            "translation {g}/{l}, round {round}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn more_than_one_stage_of_pairs_keeps_the_bits() {
        // 19 groups: nine pairs (a stage of eight and a second stage of one) and a last group
        // left to the four-lane path, for streams and for a key block's rotations.
        if !crate::simd::test_gate(crate::simd::SimdLevel::Avx2, "the eight-lane pairs test") {
            return;
        }
        let mut next = uniform(0x0123456789ABCDEFu64);
        let bones: Vec<[u32; 4]> = (0..19).map(|g| std::array::from_fn(|l| 4 * g + l as u32)).collect();
        for round in 0..200 {
            let mut rows = Vec::new();
            for k in 0..10 {
                rows.extend(slots(|lane| (lane * 3 + k + round) % 6, &mut next));
            }
            let time = next() * 1.5;
            let tv = Vec4::splat(time);
            let mut out = vec![Transform::IDENTITY; 76];
            // SAFETY: AVX checked above.
            let done = unsafe {
                [
                    sample_pairs::<true>(&bones, &rows, time, &mut out, |o, v| {
                        o.rotation = glam::Quat::from_vec4(Vec4::from(v))
                    }),
                    sample_pairs::<false>(&bones, &rows, time, &mut out, |o, v| {
                        o.scale = Vec4::from(v).truncate()
                    }),
                ]
            };
            assert_eq!(done, [18, 18]);
            let (q0, q1): (Vec<Vec4>, Vec<Vec4>) = (
                rows.chunks_exact(QUAT_SLOT).flat_map(|g| g[2..6].to_vec()).collect(),
                rows.chunks_exact(QUAT_SLOT).flat_map(|g| g[6..10].to_vec()).collect(),
            );
            let u = next();
            let mut block = vec![Transform::IDENTITY; 76];
            // SAFETY: AVX checked above.
            let done = unsafe {
                block_pairs(&bones, (&q0, &q1), 4, u, &mut block, |o, v| {
                    o.rotation = glam::Quat::from_vec4(Vec4::from(v))
                })
            };
            assert_eq!(done, 18);
            let bits = |q: glam::Quat| q.to_array().map(f32::to_bits);
            for (g, slot) in rows.chunks_exact(QUAT_SLOT).enumerate().take(18) {
                let (want_r, want_s) = (slerp_slot(slot, tv), lerp_slot(slot, tv));
                let want_b = slerp_lanes(&q0[4 * g..4 * g + 4], &q1[4 * g..4 * g + 4], Vec4::splat(u));
                for l in 0..4 {
                    let o = &out[4 * g + l];
                    assert_eq!(bits(o.rotation), bits(want_r[l]), "stream rotation {g}/{l}, round {round}");
                    assert_eq!(o.scale.to_array().map(f32::to_bits), want_s[l].to_array().map(f32::to_bits));
                    assert_eq!(bits(block[4 * g + l].rotation), bits(want_b[l]), "block rotation {g}/{l}");
                }
            }
        }
    }
}
