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
//! interpolates four bones per instruction (eight, two lane groups at once, where the CPU has
//! AVX: `pairs`, the same bits); the result is the track sampler's arithmetic
//! ([`Track::sample_with_cursor`]): translations and scales bit for bit, rotations to rounding
//! (the four-lane dot product sums in another order and is capped at 1, as the loose four-wide
//! pass does). A held end or a too-short segment copies the key exactly.
//!
//! A plain LINEAR track whose strictly increasing key times it shares with fewer than seven
//! other tracks (hand-keyed and key-reduced clips, where every track keeps its own times) is a
//! **stream**, ozz-animation's scheme. Each playing head keeps, per stream, the segment it is in
//! (its start and length, both end values) in the `StreamSlots` of its
//! [`crate::pose::SamplingContext`], four tracks of a kind per SIMD lane group as in a block row.
//! The compiled clip holds every stream segment in one list ordered by the time a head enters
//! it (`StreamKey`: 32 bytes, the segment's end value only, since its start value is the
//! previous segment's end). Forward playback applies the keys passed since the last sample,
//! then interpolates four tracks per instruction from the slots (eight, two lane groups at
//! once, where the CPU has AVX: `pairs`, the same bits), with the track sampler's
//! arithmetic (`u = (t - t0) / dt`, `a + (b - a) * u`; a held end or a too-short segment is the
//! key exactly); the tracks' own arrays are not touched. A seek back (a loop wrapping, scrubbing)
//! replays the list from the first keys when few keys have passed, else finds every lane's
//! segment in its track. The slots are sized by
//! [`SamplingContext::prepare`](crate::pose::SamplingContext::prepare) (nothing for a clip made
//! only of blocks, so a crowd of dense clips pays nothing); a head not prepared samples the
//! streams through their tracks (the same translations and scales, rotations to rounding).
//! Reverse playback costs a reset per sample (a replay or a search per lane): streams serve
//! forward playback.
//!
//! Everything else (STEP, CUBICSPLINE, eased tracks, times not strictly increasing, missing
//! channels) stays "loose": sampled through its track, as before.
//!
//! Key blocks store full `f32` values unless a clip asks for [`Precision::Compact`]
//! ([`Clip::set_precision`](crate::clip::Clip::set_precision), a runtime choice for crowds and
//! embedders): ozz-animation's trade, half-float translations and scales and 16-bit rotation
//! components, half the bytes (the 64-joint 2 s synthetic clip: 79,092 against 157,172; ozz's
//! runtime clip for the same data is 105,956) at a stated precision cost, decoded as the two
//! rows of a sample are read. The default stays full, and every conformance test runs on it.
//!
//! The compiled form is derived: [`Clip::compiled`](crate::clip::Clip::compiled) builds it
//! (players call it when a clip starts playing) and
//! [`Clip::channels_mut`](crate::clip::Clip::channels_mut) drops it. The sampling job never
//! builds it: on a clip not compiled (yet, or since an edit) every track samples loose. It
//! duplicates the grouped key values (the authored tracks stay the source of truth) and is never
//! saved. Per-head state (the block cursors, the stream slots) lives in the
//! [`crate::pose::SamplingContext`], so a crowd playing one clip shares one compiled form.
//!
//! This module does not decide playback (times, looping, fades): see [`crate::animator`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use glam::{BVec4A, Mat4, Quat, Vec3, Vec4};

use crate::channels::BoneChannels;
use crate::math;
use crate::track::{self, Segment, Track, segment};

#[cfg(target_arch = "x86_64")]
pub(crate) mod pairs;

/// Channel bit: translation.
const T: u8 = 1;
/// Channel bit: rotation.
const R: u8 = 2;
/// Channel bit: scale.
const S: u8 = 4;

/// The smallest group of tracks worth a block (a block of one track costs more than the track).
const MIN_BLOCK_TRACKS: usize = 2;

/// Groups of fewer tracks than this whose times strictly increase sample as streams: a small
/// block pays its key search and lane setup for few tracks, a stream lane only when its segment
/// ends (measured on the key-reduced benchmark clip: 2-7 track blocks 558 ns, streams 398 ns).
const STREAM_BELOW: usize = 8;

/// A clip compiled for sampling. See the module docs.
#[derive(Clone, Debug, Default)]
pub struct CompiledClip {
    blocks: Vec<KeyBlock>,
    streams: Streams,
    /// Every stream segment, ordered by the time a playing head enters it (see [`StreamKey`]).
    stream_keys: Vec<StreamKey>,
    /// The stream slots before the first key (every lane holding its first key): where a head
    /// that wraps around a loop starts over.
    stream_start: Vec<Vec4>,
    loose: Vec<LooseBone>,
    /// Identifies this compiled form to the per-head stream slots (a rebuilt form is another
    /// clip to them); unique per build, 0 for the empty default.
    id: u64,
}

/// The stream tracks' bones, four per lane group and kind (a short last group repeats its last
/// lane, as blocks do).
#[derive(Clone, Debug, Default)]
struct Streams {
    t: Vec<[u32; 4]>,
    r: Vec<[u32; 4]>,
    s: Vec<[u32; 4]>,
}

/// One segment of one stream lane, in the clip's time-ordered key list: when forward playback
/// passes `start`, the lane enters the segment that ends at `end` (ozz-animation's scheme: a head
/// walks one sorted list instead of searching every track). The segment's first value is the
/// previous segment's last (`a` takes the lane's old `b`), so a key carries only its new value.
#[derive(Clone, Copy, Debug)]
struct StreamKey {
    /// The time a head enters the segment (its first key's time).
    start: f32,
    /// The lane's segment start and length as the interpolation reads them (`start` and
    /// `next key - start`; 0 and +inf when held).
    t0: f32,
    dt: f32,
    /// The lane's first float in [`StreamSlots`] (`4 * first row + lane`), with [`KEY_HELD`] in
    /// the high bit.
    at: u32,
    /// The segment's end value (`b`), x, y, z (and w for rotations).
    value: [f32; 4],
}

/// [`StreamKey::at`] flag: a held segment (a too-short one, or after the last key): `a` and `b`
/// both take the value and the lane copies it.
const KEY_HELD: u32 = 1 << 31;

/// `Vec4`s per group of four translation or scale streams in [`StreamSlots`]: segment start and
/// length (+inf: held), then `a` (x, y, z, unused) and `b` (x, y, z, unused): the rotations'
/// layout, so applying a key of any kind writes the same rows (no branch on its kind).
const VEC3_SLOT: usize = 10;
/// `Vec4`s per group of four rotation streams: segment start and length, `a` and `b` (x, y, z,
/// w).
const QUAT_SLOT: usize = 10;

const _: () = assert!(std::mem::size_of::<Vec4>() == 16);

/// One head's cached stream segments (see the module docs), owned by its
/// [`crate::pose::SamplingContext`] and sized by
/// [`SamplingContext::prepare`](crate::pose::SamplingContext::prepare) for the clips it will
/// play (nothing for clips without streams, so a crowd of dense clips pays no bytes for them);
/// tied to one compiled clip at a time (sampling another refills every lane on first use).
#[derive(Clone, Debug, Default)]
pub(crate) struct StreamSlots {
    owner: u64,
    data: Vec<Vec4>,
    /// The next [`StreamKey`] to apply, and the time last sampled (playing backwards or seeking
    /// back refills every lane).
    next_key: usize,
    last: f32,
}

impl StreamSlots {
    /// Room for `clip`'s streams (allocates when it grows; never shrinks).
    pub(crate) fn reserve(&mut self, clip: &CompiledClip) {
        let rows = clip.stream_rows();
        if self.data.len() < rows {
            self.data.resize(rows, Vec4::ZERO);
            self.owner = 0;
        }
    }

    /// True when these slots can hold `clip`'s streams.
    pub(crate) fn fits(&self, clip: &CompiledClip) -> bool {
        self.data.len() >= clip.stream_rows()
    }

    /// Forgets every cached segment.
    pub(crate) fn invalidate(&mut self) {
        self.owner = 0;
    }

    /// Bytes this head keeps for its streams.
    pub(crate) fn bytes(&self) -> usize {
        self.data.len() * std::mem::size_of::<Vec4>()
    }
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A bone with at least one channel that no block or stream covers (a loose track or a missing
/// channel).
#[derive(Clone, Copy, Debug)]
pub(crate) struct LooseBone {
    /// Bone index.
    pub(crate) bone: u32,
    /// Channels (`T | R | S` bits) that blocks or streams write; the sampler skips them here.
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
    /// (x, y, z, w per group), scales (x, y, z per group). Empty when the block is compact.
    rows: Vec<Vec4>,
    /// The same rows quantized ([`Precision::Compact`]): translations and scales as IEEE half
    /// floats, rotation components as signed 16-bit fractions of 1. Empty when full.
    packed: Vec<[u16; 4]>,
}

/// How a clip's key blocks store their values (derived state: chosen at run time with
/// [`Clip::set_precision`](crate::clip::Clip::set_precision), never saved).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Precision {
    /// Full `f32` values: sampling is the track sampler's arithmetic (translations and scales
    /// bit for bit). The default, and what every conformance test runs.
    #[default]
    Full,
    /// ozz-animation's trade: translations and scales as half floats (relative error up to
    /// 2^-11, 0.49 mm a metre), rotation components as 16-bit fractions (after
    /// renormalization, up to about 6e-5 rad): half the bytes of a full block. A block with a
    /// value a half float cannot hold (beyond 65504 or not finite) stays full. Streams and loose
    /// tracks are not quantized.
    Compact,
}

impl CompiledClip {
    /// Bytes it holds: each block's key times, lane tables and value rows, the loose list, and
    /// the streams' lane tables, key list and start slots (loose tracks are sampled from the
    /// authored clip and counted there).
    pub fn bytes(&self) -> usize {
        self.blocks
            .iter()
            .map(|b| {
                b.times.len() * 4
                    + (b.t_lanes.len() + b.r_lanes.len() + b.s_lanes.len()) * 16
                    + b.rows.len() * 16
                    + b.packed.len() * 8
            })
            .sum::<usize>()
            + self.loose.len() * size_of::<LooseBone>()
            + (self.streams.t.len() + self.streams.r.len() + self.streams.s.len()) * 16
            + self.stream_keys.len() * size_of::<StreamKey>()
            + self.stream_start.len() * size_of::<Vec4>()
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
        Self::build_with(channels, Precision::Full)
    }

    /// [`CompiledClip::build`] with the key blocks stored at `precision`.
    pub fn build_with(channels: &[BoneChannels], precision: Precision) -> Self {
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
        let mut streamed: [Vec<u32>; 3] = Default::default();
        for (times, tracks) in groups {
            if tracks.len() < STREAM_BELOW && times.windows(2).all(|w| w[0] < w[1]) {
                for &(bone, bit) in &tracks {
                    in_block[bone as usize] |= bit;
                    streamed[bit.trailing_zeros() as usize].push(bone);
                }
                continue;
            }
            if tracks.len() < MIN_BLOCK_TRACKS {
                continue;
            }
            for &(bone, bit) in &tracks {
                in_block[bone as usize] |= bit;
            }
            let block = KeyBlock::build(times, &tracks, channels);
            blocks.push(if precision == Precision::Compact { block.compacted() } else { block });
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
        let fours = |bones: &mut Vec<u32>| -> Vec<[u32; 4]> {
            bones.sort_unstable();
            bones.chunks(4).map(|c| std::array::from_fn(|l| c[l.min(c.len() - 1)])).collect()
        };
        let [st, sr, ss] = &mut streamed;
        let streams = Streams { t: fours(st), r: fours(sr), s: fours(ss) };
        let (stream_keys, stream_start) = stream_keys(&streams, channels);
        let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
        Self { blocks, streams, stream_keys, stream_start, loose, id }
    }

    /// Number of entries in the streams' time-ordered key list (one per segment of each stream
    /// lane, plus the hold after its last key).
    pub fn stream_key_count(&self) -> usize {
        self.stream_keys.len()
    }

    /// Bytes of one entry of the streams' key list.
    pub fn stream_key_bytes(&self) -> usize {
        size_of::<StreamKey>()
    }

    /// `Vec4` rows a head's [`StreamSlots`] need for this clip's streams.
    fn stream_rows(&self) -> usize {
        VEC3_SLOT * (self.streams.t.len() + self.streams.s.len()) + QUAT_SLOT * self.streams.r.len()
    }

    /// Samples every stream at `time` into `out` through its track (a head whose context was not
    /// prepared for this clip: correct, and as slow as loose tracks; allocates nothing).
    pub(crate) fn sample_streams_by_track(
        &self,
        time: f32,
        channels: &[BoneChannels],
        cursors: &mut [u32],
        out: &mut [crate::math::Transform],
    ) {
        for &b in self.streams.t.iter().flatten() {
            let b = b as usize;
            if let Some(v) =
                channels[b].translation.as_ref().and_then(|t| t.sample_with_cursor(time, &mut cursors[3 * b]))
            {
                out[b].translation = v;
            }
        }
        for &b in self.streams.r.iter().flatten() {
            let b = b as usize;
            if let Some(q) = channels[b]
                .rotation
                .as_ref()
                .and_then(|t| t.sample_with_cursor(time, &mut cursors[3 * b + 1]))
            {
                out[b].rotation = q;
            }
        }
        for &b in self.streams.s.iter().flatten() {
            let b = b as usize;
            if let Some(v) =
                channels[b].scale.as_ref().and_then(|t| t.sample_with_cursor(time, &mut cursors[3 * b + 2]))
            {
                out[b].scale = v;
            }
        }
    }

    /// Number of stream tracks (plain LINEAR tracks with their own key times, sampled from
    /// per-head segment slots; see the module docs).
    pub fn stream_track_count(&self) -> usize {
        let count = |g: &[[u32; 4]]| {
            g.iter().map(|l| 1 + l.windows(2).filter(|w| w[0] != w[1]).count()).sum::<usize>()
        };
        count(&self.streams.t) + count(&self.streams.r) + count(&self.streams.s)
    }

    /// The key blocks.
    pub fn blocks(&self) -> &[KeyBlock] {
        &self.blocks
    }

    /// Number of tracks sampled one by one (in neither a block nor a stream).
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
    #[inline(always)]
    pub(crate) fn sample_blocks(&self, time: f32, cursors: &mut [u32], out: &mut [crate::math::Transform]) {
        for b in &self.blocks {
            let seg = segment(&b.times, time, &mut cursors[b.cursor as usize]);
            match seg {
                Segment::Hold(k) if b.packed.is_empty() => b.hold(k, out),
                Segment::Lerp(i, u) if b.packed.is_empty() => b.lerp(i, u, out),
                Segment::Hold(k) => b.hold_packed(k, out),
                Segment::Lerp(i, u) => b.lerp_packed(i, u, out),
            }
        }
    }
}

impl CompiledClip {
    /// Samples every stream at `time` into `out` from the head's `slots`: forward, the key list
    /// moves the lanes into the segments entered since the last sample; after a seek back or on
    /// a head new to the clip, every lane finds its segment in its track (through its cursor in
    /// `cursors`). The caller has checked that `out` and `cursors` cover the clip's bones and
    /// that the slots fit ([`StreamSlots::fits`]).
    #[inline(always)]
    pub(crate) fn sample_streams(
        &self,
        time: f32,
        channels: &[BoneChannels],
        cursors: &mut [u32],
        slots: &mut StreamSlots,
        out: &mut [crate::math::Transform],
    ) {
        if slots.owner != self.id || time < slots.last {
            // Another clip's segments, or time went back (a loop wrapped, a seek). Near the start
            // (fewer keys to replay than slot rows), start over from the first keys and replay the
            // list; further in, every lane finds its segment in its track, and the list resumes
            // at the first key starting after `time`.
            slots.owner = self.id;
            let passed = self.stream_keys.partition_point(|k| k.start <= time);
            if passed <= self.stream_start.len() {
                slots.data[..self.stream_start.len()].copy_from_slice(&self.stream_start);
                slots.next_key = 0;
            } else {
                self.refill_streams(time, channels, cursors, slots);
                slots.next_key = passed;
            }
        }
        // The segments entered since the last sample, in time order (the apply stops at the
        // first key after `time`: one pass, no separate count).
        let rest = &self.stream_keys[slots.next_key..];
        #[cfg(target_arch = "x86_64")]
        let applied = if crate::simd::avx512() {
            // SAFETY: the level is avx512, so the CPU has AVX-512F; every key's lane lies in the slots (`fits`).
            unsafe { apply_keys_avx512(rest, time, &mut slots.data) }
        } else {
            apply_keys(rest, time, &mut slots.data)
        };
        #[cfg(not(target_arch = "x86_64"))]
        let applied = apply_keys(rest, time, &mut slots.data);
        let end = slots.next_key + applied;
        slots.next_key = end;
        slots.last = time;
        let tv = Vec4::splat(time);
        let (t_data, rest) = slots.data.split_at_mut(self.streams.t.len() * VEC3_SLOT);
        let (r_data, s_data) = rest.split_at_mut(self.streams.r.len() * QUAT_SLOT);
        // Groups done two at a time (eight lanes per instruction, the same bits), per kind.
        #[allow(unused_mut)]
        let mut done = [0usize; 3];
        #[cfg(target_arch = "x86_64")]
        if crate::simd::avx2() {
            use pairs::sample_pairs;
            // SAFETY: the level is avx2 or above, so the CPU has AVX (`simd::level`).
            unsafe {
                done[0] = sample_pairs::<false>(&self.streams.t, t_data, time, out, |o, v| {
                    o.translation = Vec4::from(v).truncate()
                });
                done[1] = sample_pairs::<true>(&self.streams.r, r_data, time, out, |o, v| {
                    o.rotation = Quat::from_vec4(Vec4::from(v))
                });
                done[2] = sample_pairs::<false>(&self.streams.s, s_data, time, out, |o, v| {
                    o.scale = Vec4::from(v).truncate()
                });
            }
        }
        for (lanes, slot) in self.streams.t.iter().zip(t_data.chunks_exact_mut(VEC3_SLOT)).skip(done[0]) {
            for (&bone, v) in lanes.iter().zip(lerp_slot(slot, tv)) {
                out[bone as usize].translation = v;
            }
        }
        for (lanes, slot) in self.streams.r.iter().zip(r_data.chunks_exact_mut(QUAT_SLOT)).skip(done[1]) {
            for (&bone, q) in lanes.iter().zip(slerp_slot(slot, tv)) {
                out[bone as usize].rotation = q;
            }
        }
        for (lanes, slot) in self.streams.s.iter().zip(s_data.chunks_exact_mut(VEC3_SLOT)).skip(done[2]) {
            for (&bone, v) in lanes.iter().zip(lerp_slot(slot, tv)) {
                out[bone as usize].scale = v;
            }
        }
    }
}

impl CompiledClip {
    /// Every stream lane's segment at `time`, found in its track (a seek, or a head new to
    /// this clip).
    #[cold]
    #[inline(never)]
    fn refill_streams(
        &self,
        time: f32,
        channels: &[BoneChannels],
        cursors: &mut [u32],
        slots: &mut StreamSlots,
    ) {
        let (t_data, rest) = slots.data.split_at_mut(self.streams.t.len() * VEC3_SLOT);
        let (r_data, s_data) = rest.split_at_mut(self.streams.r.len() * QUAT_SLOT);
        for (lanes, slot) in self.streams.t.iter().zip(t_data.chunks_exact_mut(VEC3_SLOT)) {
            refill(slot, lanes, time, |b| (channels[b].translation.as_ref(), 3 * b), cursors);
        }
        for (lanes, slot) in self.streams.r.iter().zip(r_data.chunks_exact_mut(QUAT_SLOT)) {
            refill(slot, lanes, time, |b| (channels[b].rotation.as_ref(), 3 * b + 1), cursors);
        }
        for (lanes, slot) in self.streams.s.iter().zip(s_data.chunks_exact_mut(VEC3_SLOT)) {
            refill(slot, lanes, time, |b| (channels[b].scale.as_ref(), 3 * b + 2), cursors);
        }
    }
}

/// The time-ordered segment list of every stream lane (see [`StreamKey`]): for each segment of
/// each lane's track, its interval and values as [`refill`] would cache them; the last key's
/// hold after it. (Before the first key is the reset's business: a head starts by refilling.)
fn stream_keys(streams: &Streams, channels: &[BoneChannels]) -> (Vec<StreamKey>, Vec<Vec4>) {
    fn lane_keys<T: track::Animatable + SlotLanes>(
        track: &Track<T>,
        at: u32,
        keys: &mut Vec<StreamKey>,
        start: &mut [Vec4],
    ) {
        let (times, values) = (track.times(), track.values());
        let n = times.len();
        // Before the first key: held (a one-key track holds everywhere).
        let mut first = [0.0; QUAT_SLOT];
        first[..2].copy_from_slice(&[0.0, f32::INFINITY]);
        values[0].write_lanes(&mut first[2..6]);
        values[0].write_lanes(&mut first[6..10]);
        let (row, lane) = (at as usize / 4, at as usize % 4);
        for (v, &x) in start[row..row + QUAT_SLOT].iter_mut().zip(&first) {
            v[lane] = x;
        }
        let mut push = |start: f32, dt: Option<f32>, b: T| {
            let mut value = [0.0; 4];
            b.write_lanes(&mut value);
            let (t0, dt, held) = match dt {
                Some(dt) => (start, dt, 0),
                None => (0.0, f32::INFINITY, KEY_HELD),
            };
            keys.push(StreamKey { start, t0, dt, at: at | held, value });
        };
        for k in 0..n.saturating_sub(1) {
            // The segment's length as `segment` computes it; a too-short one holds its end.
            let dt = times[k + 1] - times[k];
            push(times[k], (dt >= track::MIN_SEGMENT).then_some(dt), values[k + 1]);
        }
        if n > 1 {
            push(times[n - 1], None, values[n - 1]);
        }
    }
    let mut keys = Vec::new();
    let rows = VEC3_SLOT * (streams.t.len() + streams.s.len()) + QUAT_SLOT * streams.r.len();
    let mut start = vec![Vec4::INFINITY; rows];
    let mut row = 0u32;
    for lanes in &streams.t {
        for (l, &b) in lanes.iter().enumerate() {
            if let Some(t) = &channels[b as usize].translation {
                lane_keys(t, 4 * row + l as u32, &mut keys, &mut start);
            }
        }
        row += VEC3_SLOT as u32;
    }
    for lanes in &streams.r {
        for (l, &b) in lanes.iter().enumerate() {
            if let Some(t) = &channels[b as usize].rotation {
                lane_keys(t, 4 * row + l as u32, &mut keys, &mut start);
            }
        }
        row += QUAT_SLOT as u32;
    }
    for lanes in &streams.s {
        for (l, &b) in lanes.iter().enumerate() {
            if let Some(t) = &channels[b as usize].scale {
                lane_keys(t, 4 * row + l as u32, &mut keys, &mut start);
            }
        }
        row += VEC3_SLOT as u32;
    }
    keys.sort_by(|a, b| a.start.total_cmp(&b.start));
    (keys, start)
}

/// Moves each key's lane into the segment it starts, up to the first key starting after `time`
/// (returns how many it applied): segment start and length, `a` from the
/// lane's old `b` (or the value, when held), `b` the key's value. Each lane is written a whole
/// vector at a time (lane-sized stores read back by the interpolation's vector loads would stall
/// them).
fn apply_keys(keys: &[StreamKey], time: f32, data: &mut [Vec4]) -> usize {
    const LANE: [BVec4A; 4] = [
        BVec4A::from_array([true, false, false, false]),
        BVec4A::from_array([false, true, false, false]),
        BVec4A::from_array([false, false, true, false]),
        BVec4A::from_array([false, false, false, true]),
    ];
    let mut applied = 0;
    for k in keys.iter().take_while(|k| k.start <= time) {
        applied += 1;
        let at = (k.at & !KEY_HELD) as usize;
        let held = k.at & KEY_HELD != 0;
        let lane = LANE[at % 4];
        // Every slot has four components per value (a translation's fourth is unused), so every
        // key writes the same rows.
        let rows = &mut data[at / 4..at / 4 + QUAT_SLOT];
        let put = |row: &mut Vec4, x: Vec4| *row = Vec4::select(lane, x, *row);
        put(&mut rows[0], Vec4::splat(k.t0));
        put(&mut rows[1], Vec4::splat(k.dt));
        for c in 0..4 {
            let x = Vec4::splat(k.value[c]);
            let a = if held { x } else { rows[6 + c] };
            put(&mut rows[2 + c], a);
            put(&mut rows[6 + c], x);
        }
    }
    applied
}

/// [`apply_keys`] with AVX-512F: a slot's ten rows are read and written as one 256-bit and two
/// 512-bit vectors (rows 0-1, 2-5, 6-9), the key's lane blended in under a mask; `a` (rows 2-5)
/// takes the old `b` (rows 6-9) lane as it is. The same values as [`apply_keys`] (tested).
///
/// # Safety
/// The CPU must support AVX-512F; every key's ten rows must lie inside `data`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn apply_keys_avx512(keys: &[StreamKey], time: f32, data: &mut [Vec4]) -> usize {
    use std::arch::x86_64::*;
    let base = data.as_mut_ptr().cast::<f32>();
    let len = data.len() * 4;
    // Each component of the value repeated four times: rows b0, b1, b2, b3.
    let spread = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
    let head_masks = [0, 1, 2, 3].map(|l| _mm256_castsi256_ps(lane_mask8(l)));
    let mut applied = 0;
    for k in keys.iter().take_while(|k| k.start <= time) {
        applied += 1;
        let at = (k.at & !KEY_HELD) as usize;
        let first = at - at % 4;
        assert!(first + 4 * QUAT_SLOT <= len, "stream key past its slots");
        let lane16 = (0x1111u16) << (at % 4);
        // SAFETY: the assertion above keeps the ten rows (40 floats from `first`) in `data`;
        // the CPU feature is the caller's guarantee.
        unsafe {
            let p = base.add(first);
            // Whole-vector loads and stores only (see `opaque512`): a later key's load of the same
            // rows then takes its data straight from this key's store.
            let head = _mm256_setr_m128(_mm_set1_ps(k.t0), _mm_set1_ps(k.dt));
            let old_head = opaque256(_mm256_loadu_ps(p));
            let blend8 = _mm256_blendv_ps(old_head, head, head_masks[at % 4]);
            _mm256_storeu_ps(p, blend8);
            let value = _mm512_permutexvar_ps(spread, _mm512_castps128_ps512(_mm_loadu_ps(k.value.as_ptr())));
            let old_b = opaque512(_mm512_loadu_ps(p.add(24)));
            let a_src = if k.at & KEY_HELD != 0 { value } else { old_b };
            let old_a = opaque512(_mm512_loadu_ps(p.add(8)));
            _mm512_storeu_ps(p.add(8), _mm512_mask_mov_ps(old_a, lane16, a_src));
            _mm512_storeu_ps(p.add(24), _mm512_mask_mov_ps(old_b, lane16, value));
        }
    }
    applied
}

/// `v`, with its origin hidden from the optimizer (an empty `asm!`, no instruction). A vector
/// loaded, blended and stored back to the same place would otherwise become a masked store,
/// and a later load of those bytes cannot take its data from a masked store: on Zen 4 it waits
/// for the store to reach the cache, which was half of [`apply_keys_avx512`]'s time (measured).
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
fn opaque512(mut v: std::arch::x86_64::__m512) -> std::arch::x86_64::__m512 {
    // SAFETY: an empty template: no instruction, no memory, no flags.
    unsafe { std::arch::asm!("/* {0} */", inout(zmm_reg) v, options(pure, nomem, nostack, preserves_flags)) };
    v
}

/// [`opaque512`] for a 256-bit vector.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
fn opaque256(mut v: std::arch::x86_64::__m256) -> std::arch::x86_64::__m256 {
    // SAFETY: an empty template: no instruction, no memory, no flags.
    unsafe { std::arch::asm!("/* {0} */", inout(ymm_reg) v, options(pure, nomem, nostack, preserves_flags)) };
    v
}

/// All bits set in lane `l` of each of two rows (a 256-bit blend mask).
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
fn lane_mask8(l: usize) -> std::arch::x86_64::__m256i {
    use std::arch::x86_64::*;
    let one = |i: usize| if i % 4 == l { -1 } else { 0 };
    _mm256_setr_epi32(one(0), one(1), one(2), one(3), one(4), one(5), one(6), one(7))
}

/// Fills the four lanes of one slot group with their tracks' segments at `time` (found through
/// their cursors, as [`Track::sample_with_cursor`] finds them): the interval where that answer
/// stays the same and the values to interpolate.
fn refill<'t, T: track::Animatable + SlotLanes + 't>(
    slot: &mut [Vec4],
    lanes: &[u32; 4],
    time: f32,
    track_of: impl Fn(usize) -> (Option<&'t Track<T>>, usize),
    cursors: &mut [u32],
) {
    let mut fresh = [[0.0f32; QUAT_SLOT]; 4];
    for l in 0..4 {
        let (track, cursor) = track_of(lanes[l] as usize);
        let Some(track) = track else { continue };
        let (times, values) = (track.times(), track.values());
        let n = times.len();
        // Exactly at the first key the search's answer depends on the cursor ("hold the first
        // key", or segment 0 from its start); the key list has entered segment 0 there (a
        // too-short one holds its end), which is what a search from the first key answers.
        if n > 1 && time == times[0] {
            cursors[cursor] = 0;
        }
        let seg = segment(times, time, &mut cursors[cursor]);
        // A length of +inf marks a held lane (copied, not interpolated).
        let (t0, dt, a, b) = match seg {
            Segment::Lerp(i, _) => (times[i], times[i + 1] - times[i], values[i], values[i + 1]),
            Segment::Hold(k) => (0.0, f32::INFINITY, values[k], values[k]),
        };
        let row = &mut fresh[l];
        row[..2].copy_from_slice(&[t0, dt]);
        a.write_lanes(&mut row[2..6]);
        b.write_lanes(&mut row[6..10]);
    }
    for (r, v) in slot.iter_mut().enumerate() {
        *v = Vec4::new(fresh[0][r], fresh[1][r], fresh[2][r], fresh[3][r]);
    }
}

/// A value's components, written to the first consecutive floats of `out`.
trait SlotLanes {
    fn write_lanes(self, out: &mut [f32]);
}

impl SlotLanes for Vec3 {
    fn write_lanes(self, out: &mut [f32]) {
        out[..3].copy_from_slice(&self.to_array());
    }
}

impl SlotLanes for Quat {
    fn write_lanes(self, out: &mut [f32]) {
        out[..4].copy_from_slice(&self.to_array());
    }
}

/// The four `Vec3` lanes of a translation or scale slot at `tv`: `a + (b - a) * u` with
/// `u = (t - t0) / dt`, or `a` exactly where the lane is held.
#[inline(always)]
fn lerp_slot(slot: &[Vec4], tv: Vec4) -> [Vec3; 4] {
    let u = (tv - slot[0]) / slot[1];
    let held = slot[1].cmpeq(Vec4::INFINITY);
    let lerp = |a: Vec4, b: Vec4| Vec4::select(held, a, a + (b - a) * u);
    lanes3(lerp(slot[2], slot[6]), lerp(slot[3], slot[7]), lerp(slot[4], slot[8]))
}

/// The four quaternion lanes of a rotation slot at `tv`: [`slerp_lanes`] with
/// `u = (t - t0) / dt`, or `a` exactly where the lane is held.
#[inline(always)]
fn slerp_slot(slot: &[Vec4], tv: Vec4) -> [Quat; 4] {
    let (dt, a, b) = (slot[1], &slot[2..6], &slot[6..10]);
    let mut q = slerp_lanes(a, b, (tv - slot[0]) / dt);
    let held = dt.cmpeq(Vec4::INFINITY);
    if held.any() {
        let exact = lanes4(a[0], a[1], a[2], a[3]);
        let m = held.bitmask();
        for l in (0..4).filter(|l| m & (1 << l) != 0) {
            q[l] = exact[l];
        }
    }
    q
}

/// The scale of a quantized rotation component: `round(c * 32767)`.
const SNORM: f32 = 32767.0;

/// Four IEEE half floats (finite: compact blocks hold no others) as four `f32`s, exactly: the
/// exponent and mantissa moved into place and rebased by 2^112 (subnormals included), the sign
/// copied.
#[inline(always)]
fn half4(h: [u16; 4]) -> Vec4 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86_64; the load reads the eight bytes of `h`.
        unsafe {
            let x = _mm_unpacklo_epi16(_mm_loadl_epi64(h.as_ptr().cast()), _mm_setzero_si128());
            let sign = _mm_slli_epi32(_mm_and_si128(x, _mm_set1_epi32(0x8000)), 16);
            let mag = _mm_slli_epi32(_mm_and_si128(x, _mm_set1_epi32(0x7fff)), 13);
            let v = _mm_mul_ps(_mm_castsi128_ps(mag), _mm_set1_ps(f32::from_bits(0x7780_0000)));
            Vec4::from(_mm_or_ps(v, _mm_castsi128_ps(sign)))
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    Vec4::from_array(h.map(|b| half::f16::from_bits(b).to_f32()))
}

/// Four signed 16-bit fractions (a quantized rotation component row) as `f32`s.
#[inline(always)]
fn snorm4(q: [u16; 4]) -> Vec4 {
    Vec4::from_array(q.map(|b| b as i16 as f32)) * (1.0 / SNORM)
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
        Self {
            times: times.to_vec(),
            cursor: 3 * bone + channel,
            t_lanes,
            r_lanes,
            s_lanes,
            stride,
            rows,
            packed: Vec::new(),
        }
    }

    /// This block with its rows quantized (see [`Precision::Compact`]), or unchanged when a
    /// translation or scale does not fit a half float.
    fn compacted(mut self) -> Self {
        let (nt, nr) = (3 * self.t_lanes.len(), 4 * self.r_lanes.len());
        let mut packed = Vec::with_capacity(self.rows.len());
        for (i, row) in self.rows.iter().enumerate() {
            let j = i % self.stride;
            let q = if j >= nt && j < nt + nr {
                row.to_array().map(|c| ((c.clamp(-1.0, 1.0) * SNORM).round() as i16) as u16)
            } else {
                let h = row.to_array().map(half::f16::from_f32);
                if h.iter().any(|h| !h.is_finite()) {
                    return self;
                }
                h.map(half::f16::to_bits)
            };
            packed.push(q);
        }
        self.packed = packed;
        self.rows = Vec::new();
        self
    }

    /// The compact form of [`KeyBlock::hold`]: key `k` decoded, rotations renormalized.
    fn hold_packed(&self, k: usize, out: &mut [crate::math::Transform]) {
        let row = &self.packed[k * self.stride..(k + 1) * self.stride];
        let (t, rest) = row.split_at(3 * self.t_lanes.len());
        let (r, s) = rest.split_at(4 * self.r_lanes.len());
        for (lanes, v) in self.t_lanes.iter().zip(t.chunks_exact(3)) {
            for (&b, v) in lanes.iter().zip(lanes3(half4(v[0]), half4(v[1]), half4(v[2]))) {
                out[b as usize].translation = v;
            }
        }
        for (lanes, q) in self.r_lanes.iter().zip(r.chunks_exact(4)) {
            for (&b, q) in lanes.iter().zip(lanes4(snorm4(q[0]), snorm4(q[1]), snorm4(q[2]), snorm4(q[3]))) {
                out[b as usize].rotation = math::renormalize(Vec4::from(q));
            }
        }
        for (lanes, v) in self.s_lanes.iter().zip(s.chunks_exact(3)) {
            for (&b, v) in lanes.iter().zip(lanes3(half4(v[0]), half4(v[1]), half4(v[2]))) {
                out[b as usize].scale = v;
            }
        }
    }

    /// The compact form of [`KeyBlock::lerp`]: each group's two rows decoded, then the same
    /// interpolation.
    #[inline(always)]
    fn lerp_packed(&self, i: usize, u: f32, out: &mut [crate::math::Transform]) {
        let st = self.stride;
        let (r0, r1) = self.packed[i * st..(i + 2) * st].split_at(st);
        let nt = 3 * self.t_lanes.len();
        let nr = 4 * self.r_lanes.len();
        let uu = Vec4::splat(u);
        let lerp3 = |a: &[[u16; 4]], b: &[[u16; 4]]| {
            let l = |k: usize| {
                let (x, y) = (half4(a[k]), half4(b[k]));
                x + (y - x) * uu
            };
            lanes3(l(0), l(1), l(2))
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
            let (qa, qb) = ([0, 1, 2, 3].map(|k| snorm4(a[k])), [0, 1, 2, 3].map(|k| snorm4(b[k])));
            for (&bone, q) in lanes.iter().zip(slerp_lanes(&qa, &qb, uu)) {
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
        // Groups done two at a time (eight lanes per instruction, the same bits), per kind.
        #[allow(unused_mut)]
        let mut done = [0usize; 3];
        #[cfg(target_arch = "x86_64")]
        if crate::simd::avx2() {
            use pairs::block_pairs;
            let (rt, rr, rs) = (
                (&r0[..nt], &r1[..nt]),
                (&r0[nt..nt + nr], &r1[nt..nt + nr]),
                (&r0[nt + nr..], &r1[nt + nr..]),
            );
            // SAFETY: AVX checked just above.
            unsafe {
                done[0] = block_pairs(&self.t_lanes, rt, 3, u, out, |o, v| {
                    o.translation = Vec4::from(v).truncate()
                });
                done[1] = block_pairs(&self.r_lanes, rr, 4, u, out, |o, v| {
                    o.rotation = Quat::from_vec4(Vec4::from(v))
                });
                done[2] =
                    block_pairs(&self.s_lanes, rs, 3, u, out, |o, v| o.scale = Vec4::from(v).truncate());
            }
        }
        for ((lanes, a), b) in
            self.t_lanes.iter().zip(r0[..nt].chunks_exact(3)).zip(r1[..nt].chunks_exact(3)).skip(done[0])
        {
            for (&bone, v) in lanes.iter().zip(lerp3(a, b)) {
                out[bone as usize].translation = v;
            }
        }
        for ((lanes, a), b) in self
            .r_lanes
            .iter()
            .zip(r0[nt..nt + nr].chunks_exact(4))
            .zip(r1[nt..nt + nr].chunks_exact(4))
            .skip(done[1])
        {
            for (&bone, q) in lanes.iter().zip(slerp_lanes(a, b, uu)) {
                out[bone as usize].rotation = q;
            }
        }
        for ((lanes, a), b) in self
            .s_lanes
            .iter()
            .zip(r0[nt + nr..].chunks_exact(3))
            .zip(r1[nt + nr..].chunks_exact(3))
            .skip(done[2])
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
    math::renormalize4([x, y, z, w], x * x + y * y + z * z + w * w)
}

/// The lazily built compiled form held inside a [`Clip`](crate::clip::Clip): derived state, so a clone starts
/// without it, and it takes no part in equality.
#[derive(Default)]
pub(crate) struct CompiledCache(std::sync::OnceLock<CompiledClip>, Precision);

impl CompiledCache {
    pub(crate) fn get_or_init(&self, f: impl FnOnce(Precision) -> CompiledClip) -> &CompiledClip {
        self.0.get_or_init(|| f(self.1))
    }
    pub(crate) fn get(&self) -> Option<&CompiledClip> {
        self.0.get()
    }
    pub(crate) fn clear(&mut self) {
        self.0 = std::sync::OnceLock::new();
    }
    pub(crate) fn precision(&self) -> Precision {
        self.1
    }
    /// Sets the precision the next build uses, dropping a form built at another.
    pub(crate) fn set_precision(&mut self, precision: Precision) {
        if self.1 != precision {
            self.1 = precision;
            self.clear();
        }
    }
}

impl Clone for CompiledCache {
    /// A clone starts without the compiled form, at the same precision.
    fn clone(&self) -> Self {
        Self(std::sync::OnceLock::new(), self.1)
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

#[cfg(test)]
mod tests {
    #[test]
    fn every_finite_half_float_decodes_exactly() {
        for bits in 0..=u16::MAX {
            let h = half::f16::from_bits(bits);
            if !h.is_finite() {
                continue;
            }
            let got = super::half4([bits, 0, bits, 0x3c00]).to_array();
            assert_eq!(got[0].to_bits(), h.to_f32().to_bits(), "half {bits:#06x}");
            assert_eq!(got[2].to_bits(), h.to_f32().to_bits(), "half {bits:#06x}");
            assert_eq!((got[1], got[3]), (0.0, 1.0));
        }
    }

    #[test]
    fn the_avx512_key_apply_writes_what_the_portable_one_does() {
        #[cfg(target_arch = "x86_64")]
        {
            use glam::Vec4;
            if !crate::simd::test_gate(crate::simd::SimdLevel::Avx512, "the AVX-512 key apply test") {
                return;
            }
            // Three slot groups of ten rows; keys on every lane of each, some held, in an order
            // that revisits lanes (so `a` takes a `b` an earlier key wrote).
            let mut state = 0x1234_5678u32;
            let mut rnd = move || {
                state ^= state << 13;
                state ^= state >> 17;
                state ^= state << 5;
                state as f32 / u32::MAX as f32 - 0.5
            };
            let mut data: Vec<Vec4> = (0..30).map(|_| Vec4::new(rnd(), rnd(), -0.0, rnd())).collect();
            let keys: Vec<super::StreamKey> = (0..40)
                .map(|i| {
                    let (group, lane) = ((i * 7) % 3, (i * 5) % 4);
                    let held = if i % 6 == 0 { super::KEY_HELD } else { 0 };
                    super::StreamKey {
                        start: i as f32,
                        t0: rnd(),
                        dt: if held != 0 { f32::INFINITY } else { rnd() },
                        at: (4 * 10 * group + lane) as u32 | held,
                        value: [rnd(), -0.0, rnd(), rnd()],
                    }
                })
                .collect();
            let mut portable = data.clone();
            super::apply_keys(&keys, f32::INFINITY, &mut portable);
            // SAFETY: AVX-512F checked above; every key's rows lie in the thirty.
            unsafe { super::apply_keys_avx512(&keys, f32::INFINITY, &mut data) };
            let bits = |d: &[Vec4]| d.iter().flat_map(|v| v.to_array().map(f32::to_bits)).collect::<Vec<_>>();
            assert_eq!(bits(&data), bits(&portable));
        }
    }

    #[test]
    fn rotation_components_quantize_to_within_half_a_step() {
        for c in [-1.0f32, -std::f32::consts::FRAC_1_SQRT_2, -1e-6, 0.0, 0.3, 0.999, 1.0] {
            let q = ((c * super::SNORM).round() as i16) as u16;
            let back = super::snorm4([q; 4]).x;
            assert!((back - c).abs() <= 0.5 / super::SNORM + 1e-7, "{c} -> {back}");
        }
    }
}
