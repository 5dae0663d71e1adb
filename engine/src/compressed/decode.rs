//! Decoding: the bit reader, a segment's per-track layout, dequantization (shared with the
//! encoder, so what it measures is what plays) and the per-head [`CompressedContext`].

use glam::{Quat, Vec4};

use super::{AnimatedTrack, CompressedClip, KEYED_FLAG, RAW_BITS, SEGMENT_FRAMES, TrackKind};
use crate::math::{self, Transform};

/// How close to a frame (in frames) a sample time is taken as that frame.
const FRAME_SNAP: f32 = 1e-3;

/// The 64 bits of `data` from bit `at` on, shifted down (the top `at % 8` bits are zero).
#[inline(always)]
pub(crate) fn read_bits64(data: &[u8], at: usize) -> u64 {
    let byte = at >> 3;
    match data.get(byte..byte + 8) {
        Some(b) => u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]) >> (at & 7),
        None => 0,
    }
}

/// `bits` bits of `data` from bit `at` (LSB first). The data is padded, so the 8-byte load
/// stays inside it for every bit the segments hold.
#[inline(always)]
pub(crate) fn read_bits(data: &[u8], at: usize, bits: u32) -> u32 {
    let byte = at >> 3;
    let word = match data.get(byte..byte + 8) {
        Some(b) => u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
        None => 0,
    };
    ((word >> (at & 7)) & ((1u64 << bits) - 1)) as u32
}

/// How one animated track is stored in one segment, as the decoder reads it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct SegTrack {
    /// Bits per component (0..=16, or [`RAW_BITS`]).
    pub bits: u8,
    /// Which frames of the segment are stored (bit `i`: frame `first + i`); all of them for a
    /// uniform segment.
    pub mask: u32,
    /// The absolute bit offset of its first stored value in the clip's data.
    pub bit: usize,
    /// Dequantization: `offset + scale * q` per component.
    pub offset: Vec4,
    /// See `offset`.
    pub scale: Vec4,
}

/// The dequantization factors of a track's segment: `offset + scale * q` gives the component
/// for the quantized value `q` of `bits` bits, in the segment range `min8/255 ..
/// (min8 + ext8)/255` of the clip range. For 0 bits, `value16` (the components at 16 bits in the
/// clip range) is the value of every frame. Shared by the encoder and the decoder.
#[inline]
pub(crate) fn seg_affine(track: &AnimatedTrack, bits: u8, range: [u8; 6]) -> (Vec4, Vec4) {
    let min = Vec4::new(track.min[0], track.min[1], track.min[2], 0.0);
    let ext = Vec4::new(track.extent[0], track.extent[1], track.extent[2], 0.0);
    if bits == 0 {
        let v = Vec4::new(
            u16::from_le_bytes([range[0], range[1]]) as f32,
            u16::from_le_bytes([range[2], range[3]]) as f32,
            u16::from_le_bytes([range[4], range[5]]) as f32,
            0.0,
        );
        (min + ext * (v * (1.0 / 65535.0)), Vec4::ZERO)
    } else {
        let smin = Vec4::new(range[0] as f32, range[1] as f32, range[2] as f32, 0.0) * (1.0 / 255.0);
        let sext = Vec4::new(range[3] as f32, range[4] as f32, range[5] as f32, 0.0) * (1.0 / 255.0);
        (min + ext * smin, ext * sext * INV_MAXQ.get(bits as usize).copied().unwrap_or(0.0))
    }
}

/// `1 / (2^bits - 1)` for 1 to 16 bits: the segment parse multiplies instead of dividing (a
/// seek parses every track's header of one or two segments).
const INV_MAXQ: [f32; 17] = {
    let mut t = [0.0f32; 17];
    let mut b = 1;
    while b < 17 {
        t[b] = 1.0 / ((1u32 << b) - 1) as f32;
        b += 1;
    }
    t
};

/// Bytes of a segment header for a track: the header byte, the range (6 bytes unless raw) and
/// the mask (2 bytes when keyed).
#[inline]
pub(crate) fn header_bytes(header: u8) -> usize {
    let bits = header & !KEYED_FLAG;
    1 + if bits == RAW_BITS { 0 } else { 6 } + if header & KEYED_FLAG != 0 { 2 } else { 0 }
}

/// Bits one stored value takes: three components of `bits`, or four raw floats (a raw rotation
/// keeps its `w`, so raw segments reproduce the keys exactly).
#[inline]
pub(crate) fn value_bits(bits: u8) -> usize {
    if bits == RAW_BITS { 128 } else { 3 * bits as usize }
}

/// Frames in segment `s` of a clip of `frames` frames.
#[inline]
pub(crate) fn segment_frames(frames: u32, s: usize) -> usize {
    (frames as usize - s * SEGMENT_FRAMES).min(SEGMENT_FRAMES)
}

/// Parses segment `s`'s headers into `out` (one entry per animated track). The clip was
/// validated when it was built or loaded, so every header is whole and every value inside the
/// data.
pub(crate) fn parse_segment(clip: &CompressedClip, s: usize, out: &mut [SegTrack]) {
    let mut at = clip.segment_offsets[s] as usize;
    let full_mask = (1u32 << segment_frames(clip.frames, s)) - 1;
    let mut sizes = 0usize;
    for (track, seg) in clip.tracks.iter().zip(out.iter_mut()) {
        let (header, next) = read_header(&clip.data, at, full_mask);
        *seg = header.seg(track, sizes);
        sizes += header.value_bits();
        at = next;
    }
    let base = at * 8;
    for seg in out.iter_mut() {
        seg.bit += base;
    }
}

/// One track's header in a segment, as stored.
#[derive(Clone, Copy)]
struct Header {
    bits: u8,
    range: [u8; 6],
    mask: u32,
}

impl Header {
    /// Bits its stored values take.
    #[inline(always)]
    fn value_bits(&self) -> usize {
        self.mask.count_ones() as usize * value_bits(self.bits)
    }

    /// Its layout for `track`, its values `bit` bits after the segment's headers.
    #[inline(always)]
    fn seg(&self, track: &AnimatedTrack, bit: usize) -> SegTrack {
        let (offset, scale) = if self.bits == RAW_BITS {
            (Vec4::ZERO, Vec4::ZERO)
        } else {
            seg_affine(track, self.bits, self.range)
        };
        SegTrack { bits: self.bits, mask: self.mask, bit, offset, scale }
    }
}

/// The header at byte `at` of `data` (a uniform segment's mask is `full_mask`) and the byte
/// after it.
#[inline(always)]
fn read_header(data: &[u8], at: usize, full_mask: u32) -> (Header, usize) {
    let header = data[at];
    let bits = header & !KEYED_FLAG;
    let mut range = [0u8; 6];
    let mut p = at + 1;
    if bits != RAW_BITS {
        range.copy_from_slice(&data[p..p + 6]);
        p += 6;
    }
    let mask = if header & KEYED_FLAG != 0 {
        let m = u16::from_le_bytes([data[p], data[p + 1]]) as u32;
        p += 2;
        m
    } else {
        full_mask
    };
    (Header { bits, range, mask }, p)
}

/// The stored value number `index` of a track's segment, dequantized, in full form (a
/// quantized rotation's `w` rebuilt; `w = 0` for translations and scales).
#[inline(always)]
pub(crate) fn decode_value(data: &[u8], seg: &SegTrack, index: u32, rotation: bool) -> Vec4 {
    let bits = seg.bits as u32;
    if seg.bits == RAW_BITS {
        let at = seg.bit + index as usize * 128;
        return Vec4::new(
            f32::from_bits(read_bits(data, at, 32)),
            f32::from_bits(read_bits(data, at + 32, 32)),
            f32::from_bits(read_bits(data, at + 64, 32)),
            f32::from_bits(read_bits(data, at + 96, 32)),
        );
    }
    let v = if bits == 0 {
        seg.offset
    } else {
        // Three components of at most 16 bits and a shift under 8: one 64-bit load holds them.
        let at = seg.bit + index as usize * 3 * bits as usize;
        let word = read_bits64(data, at);
        let m = (1u64 << bits) - 1;
        let q =
            Vec4::new((word & m) as f32, ((word >> bits) & m) as f32, ((word >> (2 * bits)) & m) as f32, 0.0);
        seg.offset + seg.scale * q
    };
    // A quantized rotation's `w` is rebuilt where the rotations are interpolated, four at a
    // time ([`REBUILD_W`] marks it; raw rotations keep theirs, always `>= 0`).
    if rotation { v.truncate().extend(REBUILD_W) } else { v }
}

/// The `w` of a decoded rotation whose `w` is still to be rebuilt from `x, y, z`.
pub(crate) const REBUILD_W: f32 = -1.0;

/// `w` rebuilt where [`REBUILD_W`] marks it, four lanes at once: `x`, `y`, `z`, `w` of four
/// rotations. The arithmetic is [`with_w`]'s, lane by lane (the same bits).
#[inline(always)]
fn rebuild_w4(x: Vec4, y: Vec4, z: Vec4, w: Vec4) -> Vec4 {
    let w2 = Vec4::ONE - (x * x + y * y + z * z);
    Vec4::select(w.cmplt(Vec4::ZERO), w2.max(Vec4::ZERO).sqrt(), w)
}

/// A rotation's full quaternion from its stored `x, y, z` (`w >= 0` rebuilt).
#[inline(always)]
pub(crate) fn with_w(v: Vec4) -> Vec4 {
    let w2 = 1.0 - (v.x * v.x + v.y * v.y + v.z * v.z);
    Vec4::new(v.x, v.y, v.z, w2.max(0.0).sqrt())
}

/// The rotation between `a` and `b` at `u` (both full quaternions), as the sampling job
/// interpolates: on `a`'s hemisphere, slerp weights, renormalized.
#[inline(always)]
pub(crate) fn slerp_parts(a: Vec4, b: Vec4, u: f32) -> Quat {
    let mut d = a.dot(b);
    let mut e = b;
    if d < 0.0 {
        e = -b;
        d = -d;
    }
    let (wa, wb) = math::slerp_weights(u, d.min(1.0));
    math::renormalize(a * wa + e * wb)
}

/// The frame whose span holds `time` (`f`, at most the last), the position on the grid (`p`,
/// in frames, clamped to the clip) and whether the clip keeps exact frame times (then the
/// parameter between keys comes from their times).
#[inline(always)]
fn frame_at(clip: &CompressedClip, time: f32) -> (u32, f32, bool) {
    let last = clip.frames - 1;
    let mut p = ((time - clip.start) * clip.rate).clamp(0.0, last as f32);
    // A time within a thousandth of a frame of one is that frame: a key time of the original
    // lands on its frame exactly, whatever the rounding of `time * rate` (a capture's
    // neighbouring keys can be half a turn apart, where a 1e-5 step of `u` shows).
    let nearest = p.round();
    if (p - nearest).abs() < FRAME_SNAP {
        p = nearest;
    }
    let mut f = (p as u32).min(last);
    // Frames that keep an off-grid key's exact time: the frame is the one whose time span
    // holds `time`, and the parameter comes from those times (the original's arithmetic).
    let exact = !clip.frame_times.is_empty();
    if exact {
        if f > 0 && time < clip.frame_time(f) {
            f -= 1;
        } else if f < last && time >= clip.frame_time(f + 1) {
            f += 1;
        }
    }
    (f, p, exact)
}

/// Track `i`'s header in segment `s`, parsed alone (the headers before it walked for the offset
/// of its values): what [`parse_segment`] gives for it.
fn segment_track(clip: &CompressedClip, s: usize, i: usize) -> SegTrack {
    let mut at = clip.segment_offsets[s] as usize;
    let full_mask = (1u32 << segment_frames(clip.frames, s)) - 1;
    let (mut sizes, mut mine) = (0usize, SegTrack::default());
    for (j, track) in clip.tracks.iter().enumerate() {
        let (header, next) = read_header(&clip.data, at, full_mask);
        if j == i {
            mine = header.seg(track, sizes);
        }
        sizes += header.value_bits();
        at = next;
    }
    mine.bit += at * 8;
    mine
}

impl CompressedClip {
    /// Bone `bone`'s local transform at `time` (`rest` where the clip stores nothing for it),
    /// decoded alone with nothing cached and nothing allocated: what root motion reads of a
    /// compressed clip (a step reads the root twice). The same keys and parameter as
    /// [`CompressedContext`]'s sample; a rotation is interpolated one lane at a time, which may
    /// differ from the four-lane pass in the last bit.
    pub fn sample_bone(&self, bone: usize, rest: &Transform, time: f32) -> Transform {
        let mut out = *rest;
        for c in self.constants.iter().filter(|c| c.bone as usize == bone) {
            let v = Vec4::from_array(c.value);
            match c.kind {
                TrackKind::Translation => out.translation = v.truncate(),
                TrackKind::Rotation => out.rotation = Quat::from_vec4(v),
                TrackKind::Scale => out.scale = v.truncate(),
            }
        }
        if self.tracks.is_empty() || !time.is_finite() {
            return out;
        }
        let last = self.frames - 1;
        let (f, p, exact) = frame_at(self, time);
        let s = f as usize / SEGMENT_FRAMES;
        let first = (s * SEGMENT_FRAMES) as u32;
        for (i, track) in self.tracks.iter().enumerate().filter(|(_, t)| t.bone as usize == bone) {
            let seg = segment_track(self, s, i);
            let local = f - first;
            let below = seg.mask & ((2u32 << local) - 1);
            let above = seg.mask & !((2u32 << local) - 1);
            let fa = first + (31 - below.leading_zeros());
            let rotation = track.kind == TrackKind::Rotation;
            let a = decode_value(&self.data, &seg, below.count_ones() - 1, rotation);
            let (fb, b) = if f == last {
                (fa, a)
            } else if above != 0 {
                (first + above.trailing_zeros(), decode_value(&self.data, &seg, below.count_ones(), rotation))
            } else {
                let next = segment_track(self, s + 1, i);
                (first + SEGMENT_FRAMES as u32, decode_value(&self.data, &next, 0, rotation))
            };
            let u = if fb <= fa {
                0.0
            } else if exact {
                exact_u(time, self.frame_time(fa), self.frame_time(fb), fb - fa)
            } else {
                (p - fa as f32) / (fb - fa) as f32
            };
            match track.kind {
                TrackKind::Translation => out.translation = (a + (b - a) * u).truncate(),
                TrackKind::Scale => out.scale = (a + (b - a) * u).truncate(),
                TrackKind::Rotation => {
                    let fix = |v: Vec4| if v.w < 0.0 { with_w(v) } else { v };
                    out.rotation = slerp_parts(fix(a), fix(b), u);
                }
            }
        }
        out
    }
}

/// The slot of `slots` holding segment `s` parsed (parsed into the other slot than `keep` when
/// neither does).
#[inline]
fn slot_for(
    segs: &mut [usize; 2],
    slots: &mut [Vec<SegTrack>; 2],
    clip: &CompressedClip,
    s: usize,
    keep: usize,
) -> usize {
    if segs[0] == s {
        return 0;
    }
    if segs[1] == s {
        return 1;
    }
    // With none to keep, the slot not holding the segment after.
    let k = match keep {
        0 => 1,
        1 => 0,
        _ => usize::from(segs[0] == s + 1),
    };
    let n = clip.tracks.len();
    parse_segment(clip, s, &mut slots[k][..n]);
    segs[k] = s;
    k
}

/// The sampling cache of one playing head over a [`CompressedClip`]: the two segments around
/// the playhead parsed, and per animated track the frames and decoded values of the two keys it
/// interpolates between. Tied to the clip it last sampled (another clip, or the same one rebuilt,
/// starts it over); correct at any time, fastest forward. Size it for the largest clip it samples
/// ([`CompressedContext::new`]); sampling allocates nothing.
#[derive(Clone, Debug, Default)]
pub struct CompressedContext {
    max_bones: usize,
    clip: u64,
    /// The segments parsed in `slots[0]` and `slots[1]` (`usize::MAX`: none).
    segs: [usize; 2],
    slots: [Vec<SegTrack>; 2],
    /// Per animated track: the two keys it interpolates between.
    keys: Vec<Keys>,
    /// The rotations of this sample, gathered for the four-wide slerp.
    rotations: Vec<RotationLane>,
}

/// The parameter between two keys at times `ta` and `tb`, `frames` apart: from the times (as
/// the original's sampler computes it), snapped to an end within [`FRAME_SNAP`] of a frame.
#[inline]
fn exact_u(time: f32, ta: f32, tb: f32, frames: u32) -> f32 {
    let d = tb - ta;
    if !(d > 0.0) {
        return 0.0;
    }
    let u = ((time - ta) / d).clamp(0.0, 1.0);
    let snap = FRAME_SNAP / frames as f32;
    if u < snap {
        0.0
    } else if u > 1.0 - snap {
        1.0
    } else {
        u
    }
}

/// The two keys a track interpolates between: frames `fa <= f < fb` (or `fa == fb`, held at the
/// last frame), their times where the clip keeps exact frame times, and their values in full
/// form.
#[derive(Clone, Copy, Debug, Default)]
struct Keys {
    fa: u32,
    fb: u32,
    ta: f32,
    tb: f32,
    a: Vec4,
    b: Vec4,
}

/// One rotation to interpolate: its bone, its ends as decoded (`w` maybe still to rebuild) and
/// the parameter.
#[derive(Clone, Copy, Debug, Default)]
struct RotationLane {
    bone: u32,
    a: Vec4,
    b: Vec4,
    u: f32,
}

impl CompressedContext {
    /// A context for clips of up to `max_bones` bones (three tracks each).
    pub fn new(max_bones: usize) -> Self {
        let mut c = CompressedContext::default();
        c.resize(max_bones);
        c
    }

    /// Bones of the largest clip it serves.
    pub fn max_bones(&self) -> usize {
        self.max_bones
    }

    /// Resizes for clips of up to `max_bones` bones (allocates; not a per-frame call).
    pub fn resize(&mut self, max_bones: usize) {
        let tracks = max_bones * 3;
        self.max_bones = max_bones;
        for slot in &mut self.slots {
            slot.resize(tracks, SegTrack::default());
        }
        self.keys.resize(tracks, Keys::default());
        // Room for a last group of four filled up with copies (see `sample`).
        self.rotations.resize(tracks + 3, RotationLane::default());
        self.invalidate();
    }

    /// Forgets every parsed segment and decoded key.
    pub fn invalidate(&mut self) {
        self.clip = 0;
        self.segs = [usize::MAX; 2];
        self.keys.fill(Keys { fa: u32::MAX, ..Keys::default() });
    }

    /// Bytes this context holds.
    pub fn bytes(&self) -> usize {
        self.slots.iter().map(|s| s.len() * std::mem::size_of::<SegTrack>()).sum::<usize>()
            + self.keys.len() * std::mem::size_of::<Keys>()
            + self.rotations.len() * std::mem::size_of::<RotationLane>()
    }

    /// Samples `clip` at `time` into `out` (one entry per bone; inputs validated by the job).
    /// At the `avx2` level and above the same code is compiled for AVX2 with the bit-counting
    /// instructions (a segment mask's keys are counted per track): the same operations in the
    /// same order (no fused multiply-add: Rust never contracts), so the same bits.
    pub(crate) fn sample(
        &mut self,
        clip: &CompressedClip,
        bind: &[Transform],
        time: f32,
        out: &mut [Transform],
    ) {
        #[cfg(target_arch = "x86_64")]
        if crate::simd::avx2() {
            // SAFETY: the `avx2` level needs every feature `sample_avx2` enables.
            return unsafe { self.sample_avx2(clip, bind, time, out) };
        }
        self.sample_with(clip, bind, time, out)
    }

    /// [`Self::sample_with`] compiled for AVX2, POPCNT, LZCNT, BMI1 and BMI2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx,avx2,popcnt,lzcnt,bmi1,bmi2")]
    pub(crate) fn sample_avx2(
        &mut self,
        clip: &CompressedClip,
        bind: &[Transform],
        time: f32,
        out: &mut [Transform],
    ) {
        self.sample_with(clip, bind, time, out)
    }

    /// The sample itself (see [`Self::sample`]); the portable build where called directly.
    #[inline(always)]
    pub(super) fn sample_with(
        &mut self,
        clip: &CompressedClip,
        bind: &[Transform],
        time: f32,
        out: &mut [Transform],
    ) {
        if self.clip != clip.id {
            self.invalidate();
            self.clip = clip.id;
        }
        out.copy_from_slice(bind);
        for c in &clip.constants {
            if let Some(o) = out.get_mut(c.bone as usize) {
                let v = Vec4::from_array(c.value);
                match c.kind {
                    TrackKind::Translation => o.translation = v.truncate(),
                    TrackKind::Rotation => o.rotation = Quat::from_vec4(v),
                    TrackKind::Scale => o.scale = v.truncate(),
                }
            }
        }
        if clip.tracks.is_empty() {
            return;
        }
        let last = clip.frames - 1;
        let (f, p, exact) = frame_at(clip, time);
        let s = f as usize / SEGMENT_FRAMES;
        let first = (s * SEGMENT_FRAMES) as u32;
        let data = &clip.data[..];
        let mut here = usize::MAX;
        let mut rotations = 0usize;
        let n = clip.tracks.len();
        for (i, (track, keys)) in clip.tracks.iter().zip(&mut self.keys[..n]).enumerate() {
            if !(keys.fa <= f && (f < keys.fb || (keys.fa == f && f == last))) {
                if here == usize::MAX || self.segs[here] != s {
                    here = slot_for(&mut self.segs, &mut self.slots, clip, s, usize::MAX);
                }
                let seg = self.slots[here][i];
                let local = f - first;
                // The key at or before f (bit 0 is always set), then the next one.
                let below = seg.mask & ((2u32 << local) - 1);
                let ka = 31 - below.leading_zeros();
                let above = seg.mask & !((2u32 << local) - 1);
                let fa = first + ka;
                let rotation = track.kind == TrackKind::Rotation;
                let a = decode_value(data, &seg, below.count_ones() - 1, rotation);
                let (fb, b) = if f == last {
                    (fa, a)
                } else if above != 0 {
                    let kb = above.trailing_zeros();
                    (first + kb, decode_value(data, &seg, below.count_ones(), rotation))
                } else {
                    // The next segment's first frame (always stored).
                    let next = slot_for(&mut self.segs, &mut self.slots, clip, s + 1, here);
                    let nseg = self.slots[next][i];
                    (first + SEGMENT_FRAMES as u32, decode_value(data, &nseg, 0, rotation))
                };
                let (ta, tb) = if exact { (clip.frame_time(fa), clip.frame_time(fb)) } else { (0.0, 0.0) };
                *keys = Keys { fa, fb, ta, tb, a, b };
            }
            let Keys { fa, fb, ta, tb, a, b } = *keys;
            let u = if fb <= fa {
                0.0
            } else if exact {
                exact_u(time, ta, tb, fb - fa)
            } else {
                (p - fa as f32) / (fb - fa) as f32
            };
            match track.kind {
                TrackKind::Translation => out[track.bone as usize].translation = (a + (b - a) * u).truncate(),
                TrackKind::Scale => out[track.bone as usize].scale = (a + (b - a) * u).truncate(),
                TrackKind::Rotation => {
                    self.rotations[rotations] = RotationLane { bone: track.bone as u32, a, b, u };
                    rotations += 1;
                }
            }
        }
        // Rotations four lanes at a time (their `w` rebuilt, the far end brought to the near
        // end's hemisphere, slerp weights), as the sampling job interpolates loose ones.
        // A last group of fewer than four filled up with copies of its last lane (which write
        // the same rotation to the same bone again): every rotation goes four lanes at a time.
        let padded = rotations.div_ceil(4) * 4;
        if padded > rotations {
            let last = self.rotations[rotations - 1];
            self.rotations[rotations..padded].fill(last);
        }
        for c in self.rotations[..padded].chunks_exact(4) {
            let col = |f: fn(&RotationLane) -> Vec4, k: usize| {
                Vec4::new(f(&c[0])[k], f(&c[1])[k], f(&c[2])[k], f(&c[3])[k])
            };
            let (ax, ay, az) = (col(|r| r.a, 0), col(|r| r.a, 1), col(|r| r.a, 2));
            let (bx, by, bz) = (col(|r| r.b, 0), col(|r| r.b, 1), col(|r| r.b, 2));
            let aw = rebuild_w4(ax, ay, az, col(|r| r.a, 3));
            let bw = rebuild_w4(bx, by, bz, col(|r| r.b, 3));
            let dot = ((ax * bx + ay * by) + az * bz) + aw * bw;
            let sign = Vec4::select(dot.cmplt(Vec4::ZERO), Vec4::NEG_ONE, Vec4::ONE);
            let u = Vec4::new(c[0].u, c[1].u, c[2].u, c[3].u);
            let (wa, wb) = math::slerp_weights4(u, (dot * sign).min(Vec4::ONE));
            let wb = wb * sign;
            // `renormalize(a * wa + b * wb)` for the four lanes at once: the same products, sums
            // and length (glam's `(x + z) + (y + w)`), lane by lane (the same bits).
            let (rx, ry, rz, rw) =
                (ax * wa + bx * wb, ay * wa + by * wb, az * wa + bz * wb, aw * wa + bw * wb);
            let q = math::renormalize4([rx, ry, rz, rw], (rx * rx + rz * rz) + (ry * ry + rw * rw));
            for (r, q) in c.iter().zip(q) {
                out[r.bone as usize].rotation = q;
            }
        }
    }
}
