//! The compiled form of a clip: what [`crate::pose::SamplingJob`] reads at run time.
//!
//! A [`Clip`](crate::clip::Clip) is authored state: one [`Track`] per channel, each with its
//! own key times, easing and interpolation, laid out for editing. Sampling it track by track
//! costs a key search and a division per track and touches three scattered arrays per track.
//! Most clips do not need that: glTF exporters commonly bake every channel at the same instants
//! (samplers then share one `input` accessor), and Marrow's own dense clips key every track on
//! one grid.
//!
//! [`CompiledClip`] groups the plain LINEAR tracks (no easing) that share one key-time array
//! into a [`KeyBlock`]: one time array, one search per sample, and the values stored frame-major
//! (all of the block's values at key `k` in one contiguous row), four tracks of a kind per SIMD
//! lane group (SoA: `x0 x1 x2 x3 | y0 ..`). Sampling a block reads two contiguous rows and
//! interpolates four bones per instruction; the result is the track sampler's arithmetic
//! ([`Track::sample_with_cursor`]): translations and scales bit for bit, rotations to rounding
//! (the four-lane dot product sums in another order and is capped at 1, as the loose four-wide
//! pass does). A held end or a too-short segment copies the key exactly.
//!
//! Everything else (STEP, CUBICSPLINE, eased tracks, tracks whose times are shared by no other
//! track, missing channels) stays "loose": sampled through its track, as before.
//!
//! The compiled form is derived: [`Clip::compiled`](crate::clip::Clip::compiled) builds it
//! (players call it when a clip starts playing) and
//! [`Clip::channels_mut`](crate::clip::Clip::channels_mut) drops it. The sampling job never
//! builds it: on a clip not compiled (yet, or since an edit) every track samples loose. It
//! duplicates the grouped key values (the authored tracks stay the source of truth) and is never
//! saved. Per-head state (the block cursors) lives in the [`crate::pose::SamplingContext`], so a
//! crowd playing one clip shares one compiled form.
//!
//! This module does not decide playback (times, looping, fades): see [`crate::animator`].

use std::collections::HashMap;

use glam::{Mat4, Quat, Vec3, Vec4};

use crate::channels::BoneChannels;
use crate::math;
use crate::track::{self, Segment, Track, segment};

/// Channel bit: translation.
const T: u8 = 1;
/// Channel bit: rotation.
const R: u8 = 2;
/// Channel bit: scale.
const S: u8 = 4;

/// The smallest group of tracks worth a block (a block of one track costs more than the track).
const MIN_BLOCK_TRACKS: usize = 2;

/// A clip compiled for sampling. See the module docs.
#[derive(Clone, Debug, Default)]
pub struct CompiledClip {
    blocks: Vec<KeyBlock>,
    loose: Vec<LooseBone>,
}

/// A bone with at least one channel that no block covers (a loose track or a missing channel).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LooseBone {
    /// Bone index.
    pub(crate) bone: u32,
    /// Channels (`T | R | S` bits) that blocks write; the sampler skips them here.
    pub(crate) in_block: u8,
}

impl LooseBone {
    /// True when a block writes this bone's translation.
    #[inline(always)]
    pub fn block_translation(self) -> bool {
        self.in_block & T != 0
    }
    /// True when a block writes this bone's rotation.
    #[inline(always)]
    pub fn block_rotation(self) -> bool {
        self.in_block & R != 0
    }
    /// True when a block writes this bone's scale.
    #[inline(always)]
    pub fn block_scale(self) -> bool {
        self.in_block & S != 0
    }
}

/// Plain LINEAR tracks sharing one key-time array, stored frame-major in SoA lane groups.
#[derive(Clone, Debug)]
pub struct KeyBlock {
    times: Vec<f32>,
    /// The sampling-context cursor this block uses: the slot (`3 * bone + channel`) of its first
    /// track, which no loose track uses.
    cursor: u32,
    /// Bones of each group of four translation tracks (a short last group repeats its last lane).
    t_lanes: Vec<[u32; 4]>,
    /// Bones of each group of four rotation tracks.
    r_lanes: Vec<[u32; 4]>,
    /// Bones of each group of four scale tracks.
    s_lanes: Vec<[u32; 4]>,
    /// `Vec4`s per key row: `3 * t_groups + 4 * r_groups + 3 * s_groups`.
    stride: usize,
    /// `times.len()` rows of `stride` lane vectors: translations (x, y, z per group), rotations
    /// (x, y, z, w per group), scales (x, y, z per group).
    rows: Vec<Vec4>,
}

impl CompiledClip {
    /// Bytes it holds: each block's key times, lane tables and value rows, and the loose list
    /// (loose tracks are sampled from the authored clip and counted there).
    pub fn bytes(&self) -> usize {
        self.blocks
            .iter()
            .map(|b| {
                b.times.len() * 4
                    + (b.t_lanes.len() + b.r_lanes.len() + b.s_lanes.len()) * 16
                    + b.rows.len() * 16
            })
            .sum::<usize>()
            + self.loose.len() * size_of::<LooseBone>()
    }
}

impl KeyBlock {
    /// Number of tracks in the block.
    pub fn track_count(&self) -> usize {
        let lanes = |g: &[[u32; 4]]| -> usize {
            g.iter().map(|l| 1 + (1..4).filter(|&k| l[k] != l[k - 1]).count()).sum()
        };
        lanes(&self.t_lanes) + lanes(&self.r_lanes) + lanes(&self.s_lanes)
    }

    /// Number of keys (rows).
    pub fn key_count(&self) -> usize {
        self.times.len()
    }
}

/// Track identity while grouping: bone and channel bit.
type TrackRef = (u32, u8);

impl CompiledClip {
    /// Compiles a clip's channel table (allocates; done once per clip, see [`Clip::compiled`](crate::clip::Clip::compiled)).
    pub fn build(channels: &[BoneChannels]) -> Self {
        // Group plain LINEAR tracks by the bits of their key times, in bone order.
        fn plain<T: track::Animatable>(t: &Option<Track<T>>) -> Option<&[f32]> {
            t.as_ref().filter(|t| t.is_plain_linear()).map(|t| t.times())
        }
        let mut groups: Vec<(&[f32], Vec<TrackRef>)> = Vec::new();
        let mut by_times: HashMap<Vec<u32>, usize> = HashMap::new();
        for (bone, ch) in channels.iter().enumerate() {
            let tracks = [(plain(&ch.translation), T), (plain(&ch.rotation), R), (plain(&ch.scale), S)];
            for (times, bit) in tracks {
                let Some(times) = times else { continue };
                let key: Vec<u32> = times.iter().map(|t| t.to_bits()).collect();
                let g = *by_times.entry(key).or_insert_with(|| {
                    groups.push((times, Vec::new()));
                    groups.len() - 1
                });
                groups[g].1.push((bone as u32, bit));
            }
        }
        let mut in_block = vec![0u8; channels.len()];
        let mut blocks = Vec::new();
        for (times, tracks) in groups {
            if tracks.len() < MIN_BLOCK_TRACKS {
                continue;
            }
            for &(bone, bit) in &tracks {
                in_block[bone as usize] |= bit;
            }
            blocks.push(KeyBlock::build(times, &tracks, channels));
        }
        let loose = channels
            .iter()
            .enumerate()
            .filter_map(|(bone, ch)| {
                let present = (ch.translation.is_some() as u8 * T)
                    | (ch.rotation.is_some() as u8 * R)
                    | (ch.scale.is_some() as u8 * S);
                let covered = in_block[bone];
                // A bone is loose unless blocks write all three channels.
                (covered != T | R | S).then_some(LooseBone { bone: bone as u32, in_block: covered & present })
            })
            .collect();
        Self { blocks, loose }
    }

    /// The key blocks.
    pub fn blocks(&self) -> &[KeyBlock] {
        &self.blocks
    }

    /// Number of tracks sampled one by one (not in a block).
    pub fn loose_track_count(&self, channels: &[BoneChannels]) -> usize {
        self.loose
            .iter()
            .map(|l| {
                let ch = &channels[l.bone as usize];
                (ch.translation.is_some() && !l.block_translation()) as usize
                    + (ch.rotation.is_some() && !l.block_rotation()) as usize
                    + (ch.scale.is_some() && !l.block_scale()) as usize
            })
            .sum()
    }

    /// Bones with a channel no block writes, in bone order.
    pub(crate) fn loose(&self) -> &[LooseBone] {
        &self.loose
    }

    /// Samples every block at `time` into `out` (indexed by bone), using and updating the block
    /// cursors in `cursors` (one slot per track, `3 * bone + channel`). The caller has checked that
    /// `out` and `cursors` cover the clip's bones.
    #[inline]
    pub(crate) fn sample_blocks(&self, time: f32, cursors: &mut [u32], out: &mut [crate::math::Transform]) {
        for b in &self.blocks {
            let seg = segment(&b.times, time, &mut cursors[b.cursor as usize]);
            match seg {
                Segment::Hold(k) => b.hold(k, out),
                Segment::Lerp(i, u) => b.lerp(i, u, out),
            }
        }
    }
}

/// Four lanes of `(x, y, z)` as four `Vec3`s.
#[inline(always)]
fn lanes3(x: Vec4, y: Vec4, z: Vec4) -> [Vec3; 4] {
    let m = Mat4::from_cols(x, y, z, Vec4::ZERO).transpose();
    [m.x_axis.truncate(), m.y_axis.truncate(), m.z_axis.truncate(), m.w_axis.truncate()]
}

/// Four lanes of `(x, y, z, w)` as four quaternions.
#[inline(always)]
fn lanes4(x: Vec4, y: Vec4, z: Vec4, w: Vec4) -> [Quat; 4] {
    let m = Mat4::from_cols(x, y, z, w).transpose();
    [
        Quat::from_vec4(m.x_axis),
        Quat::from_vec4(m.y_axis),
        Quat::from_vec4(m.z_axis),
        Quat::from_vec4(m.w_axis),
    ]
}

impl KeyBlock {
    fn build(times: &[f32], tracks: &[TrackRef], channels: &[BoneChannels]) -> Self {
        let pick = |bit: u8| -> Vec<[u32; 4]> {
            let bones: Vec<u32> = tracks.iter().filter(|t| t.1 == bit).map(|t| t.0).collect();
            bones
                .chunks(4)
                .map(|c| {
                    let last = c[c.len() - 1];
                    [c[0], *c.get(1).unwrap_or(&last), *c.get(2).unwrap_or(&last), *c.get(3).unwrap_or(&last)]
                })
                .collect()
        };
        let (t_lanes, r_lanes, s_lanes) = (pick(T), pick(R), pick(S));
        let stride = 3 * t_lanes.len() + 4 * r_lanes.len() + 3 * s_lanes.len();
        let n = times.len();
        let mut rows = Vec::with_capacity(n * stride);
        let vec3 = |t: &Option<Track<Vec3>>, k: usize| t.as_ref().map_or(Vec3::ZERO, |t| t.values()[k]);
        for k in 0..n {
            for lanes in &t_lanes {
                let v = lanes.map(|b| vec3(&channels[b as usize].translation, k));
                rows.extend([0, 1, 2].map(|a| Vec4::new(v[0][a], v[1][a], v[2][a], v[3][a])));
            }
            for lanes in &r_lanes {
                let q = lanes.map(|b| {
                    Vec4::from(
                        channels[b as usize].rotation.as_ref().map_or(Quat::IDENTITY, |t| t.values()[k]),
                    )
                });
                rows.extend([0, 1, 2, 3].map(|a| Vec4::new(q[0][a], q[1][a], q[2][a], q[3][a])));
            }
            for lanes in &s_lanes {
                let v = lanes.map(|b| vec3(&channels[b as usize].scale, k));
                rows.extend([0, 1, 2].map(|a| Vec4::new(v[0][a], v[1][a], v[2][a], v[3][a])));
            }
        }
        let (bone, bit) = tracks[0];
        let channel = match bit {
            T => 0,
            R => 1,
            _ => 2,
        };
        Self { times: times.to_vec(), cursor: 3 * bone + channel, t_lanes, r_lanes, s_lanes, stride, rows }
    }

    /// Writes key `k` of every track, exactly.
    fn hold(&self, k: usize, out: &mut [crate::math::Transform]) {
        let row = &self.rows[k * self.stride..(k + 1) * self.stride];
        let (t, rest) = row.split_at(3 * self.t_lanes.len());
        let (r, s) = rest.split_at(4 * self.r_lanes.len());
        for (lanes, v) in self.t_lanes.iter().zip(t.chunks_exact(3)) {
            for (&b, v) in lanes.iter().zip(lanes3(v[0], v[1], v[2])) {
                out[b as usize].translation = v;
            }
        }
        for (lanes, q) in self.r_lanes.iter().zip(r.chunks_exact(4)) {
            for (&b, q) in lanes.iter().zip(lanes4(q[0], q[1], q[2], q[3])) {
                out[b as usize].rotation = q;
            }
        }
        for (lanes, v) in self.s_lanes.iter().zip(s.chunks_exact(3)) {
            for (&b, v) in lanes.iter().zip(lanes3(v[0], v[1], v[2])) {
                out[b as usize].scale = v;
            }
        }
    }

    /// Interpolates segment `i` at parameter `u` (rows `i` and `i + 1`).
    #[inline(always)]
    fn lerp(&self, i: usize, u: f32, out: &mut [crate::math::Transform]) {
        let st = self.stride;
        let (r0, r1) = self.rows[i * st..(i + 2) * st].split_at(st);
        let nt = 3 * self.t_lanes.len();
        let nr = 4 * self.r_lanes.len();
        let uu = Vec4::splat(u);
        let lerp3 = |a: &[Vec4], b: &[Vec4]| {
            lanes3(a[0] + (b[0] - a[0]) * uu, a[1] + (b[1] - a[1]) * uu, a[2] + (b[2] - a[2]) * uu)
        };
        for ((lanes, a), b) in self.t_lanes.iter().zip(r0[..nt].chunks_exact(3)).zip(r1[..nt].chunks_exact(3))
        {
            for (&bone, v) in lanes.iter().zip(lerp3(a, b)) {
                out[bone as usize].translation = v;
            }
        }
        for ((lanes, a), b) in
            self.r_lanes.iter().zip(r0[nt..nt + nr].chunks_exact(4)).zip(r1[nt..nt + nr].chunks_exact(4))
        {
            for (&bone, q) in lanes.iter().zip(slerp_lanes(a, b, uu)) {
                out[bone as usize].rotation = q;
            }
        }
        for ((lanes, a), b) in
            self.s_lanes.iter().zip(r0[nt + nr..].chunks_exact(3)).zip(r1[nt + nr..].chunks_exact(3))
        {
            for (&bone, v) in lanes.iter().zip(lerp3(a, b)) {
                out[bone as usize].scale = v;
            }
        }
    }
}

/// Shortest-path normalized slerp of four quaternion lanes (SoA `x, y, z, w`) at one parameter:
/// the arithmetic of [`math::slerp`], four bones at a time.
#[inline(always)]
fn slerp_lanes(a: &[Vec4], b: &[Vec4], u: Vec4) -> [Quat; 4] {
    let (ax, ay, az, aw) = (a[0], a[1], a[2], a[3]);
    let d = ax * b[0] + ay * b[1] + az * b[2] + aw * b[3];
    // Flip the far end into the near hemisphere (multiplying by -1 is exact).
    let sign = Vec4::select(d.cmplt(Vec4::ZERO), Vec4::NEG_ONE, Vec4::ONE);
    let (bx, by, bz, bw) = (b[0] * sign, b[1] * sign, b[2] * sign, b[3] * sign);
    let (wa, wb) = math::slerp_weights4(u, (d * sign).min(Vec4::ONE));
    let (x, y, z, w) = (ax * wa + bx * wb, ay * wa + by * wb, az * wa + bz * wb, aw * wa + bw * wb);
    let len2 = x * x + y * y + z * z + w * w;
    // `math::renormalize`, per lane: one Newton step near unit length, else an exact division.
    let near = (len2 - Vec4::ONE).abs().cmplt(Vec4::splat(1e-3));
    if near.all() {
        let f = Vec4::splat(1.5) - Vec4::splat(0.5) * len2;
        lanes4(x * f, y * f, z * f, w * f)
    } else {
        let f = Vec4::splat(1.5) - Vec4::splat(0.5) * len2;
        let len = len2.sqrt();
        let pick = |c: Vec4| Vec4::select(near, c * f, c / len);
        lanes4(pick(x), pick(y), pick(z), pick(w))
    }
}

/// The lazily built compiled form held inside a [`Clip`](crate::clip::Clip): derived state, so a clone starts
/// without it, and it takes no part in equality.
#[derive(Default)]
pub(crate) struct CompiledCache(std::sync::OnceLock<CompiledClip>);

impl CompiledCache {
    pub(crate) fn get_or_init(&self, f: impl FnOnce() -> CompiledClip) -> &CompiledClip {
        self.0.get_or_init(f)
    }
    pub(crate) fn get(&self) -> Option<&CompiledClip> {
        self.0.get()
    }
    pub(crate) fn clear(&mut self) {
        self.0 = std::sync::OnceLock::new();
    }
}

impl Clone for CompiledCache {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl PartialEq for CompiledCache {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for CompiledCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() { "compiled" } else { "not compiled" })
    }
}
