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
        (min + ext * smin, ext * sext * INV_MAXQ[(bits & 31) as usize])
    }
}

/// `1 / (2^bits - 1)` for 1 to 16 bits, zero for 0 and past 16: the segment parse multiplies
/// instead of dividing (a seek parses every track's header of one or two segments). 32 entries,
/// so a validated bit rate (0 to 16, or [`RAW_BITS`]) masked to five bits indexes it without a
/// bound check.
const INV_MAXQ: [f32; 32] = {
    let mut t = [0.0f32; 32];
    let mut b = 1;
    while b < 17 {
        t[b] = 1.0 / ((1u32 << b) - 1) as f32;
        b += 1;
    }
    t
};

/// [`INV_MAXQ`] of four lanes' bit rates.
#[inline(always)]
fn inv_maxq(bits: &[u64; LANES]) -> Vec4 {
    Vec4::from_array(bits.map(|b| INV_MAXQ[(b & 31) as usize]))
}

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
    // A quantized rotation's `w` is rebuilt by the caller ([`REBUILD_W`] marks it; raw rotations
    // keep theirs, always `>= 0`).
    if rotation { v.truncate().extend(REBUILD_W) } else { v }
}

/// The `w` of a decoded rotation whose `w` is still to be rebuilt from `x, y, z`.
pub(crate) const REBUILD_W: f32 = -1.0;

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
                exact_u(time, self.frame_time(fa), self.frame_time(fb))
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

/// Animated tracks per lane group: the context works on four tracks of one kind at a time.
const LANES: usize = 4;

/// The order of the context's groups by kind: the rotations first (their slerps run together),
/// then the translations, then the scales. The encoder writes a clip's tracks in this order (each
/// kind in bone order), so a group's tracks are consecutive headers of a segment.
pub(crate) const LANE_KINDS: [TrackKind; 3] = [TrackKind::Rotation, TrackKind::Translation, TrackKind::Scale];

/// Four animated tracks of one kind as the context lays them out for a clip: the rotations, then
/// the translations, then the scales, each in track order; a last group of fewer than four is
/// filled up with copies of its last track (which write the same value to the same bone again).
#[derive(Clone, Copy, Debug)]
struct LaneGroup {
    kind: TrackKind,
    /// Real tracks in the group (1 to 4).
    len: u8,
    /// Each lane's bone.
    bone: [u32; LANES],
    /// Each lane's track (its index among the clip's animated tracks).
    track: [u32; LANES],
    /// The lanes' clip ranges by component: minimum and extent ([`AnimatedTrack`]'s).
    min: [Vec4; 3],
    /// See `min`.
    ext: [Vec4; 3],
}

/// An empty group (what the context holds before it lays out a clip).
const NO_GROUP: LaneGroup = LaneGroup {
    kind: TrackKind::Translation,
    len: 0,
    bone: [0; LANES],
    track: [0; LANES],
    min: [Vec4::ZERO; 3],
    ext: [Vec4::ZERO; 3],
};

/// The two keys each lane of a group interpolates between: frames `fa <= f < fb` (or `fa ==
/// fb`, held at the last frame), their times where the clip keeps exact frame times, and their
/// values by component (`x`, `y`, `z`, `w`: a rotation's `w` rebuilt, `0` otherwise), lane `l`
/// of each component being the track in lane `l`.
#[derive(Clone, Copy, Debug)]
struct KeyGroup {
    fa: [u32; LANES],
    fb: [u32; LANES],
    ta: [f32; LANES],
    tb: [f32; LANES],
    a: [Vec4; 4],
    b: [Vec4; 4],
}

/// Keys no sample time lies between (every lane is decoded at the next sample).
const STALE_KEYS: KeyGroup = KeyGroup {
    fa: [u32::MAX; LANES],
    fb: [0; LANES],
    ta: [0.0; LANES],
    tb: [0.0; LANES],
    a: [Vec4::ZERO; 4],
    b: [Vec4::ZERO; 4],
};

/// How a group's tracks are stored in one segment, lane by lane ([`SegTrack`]'s fields as
/// columns, so four tracks decode at once).
#[derive(Clone, Copy, Debug, Default)]
struct SegGroup {
    /// The absolute bit offset of each lane's first stored value.
    bit: [u64; LANES],
    /// Bits one stored value takes.
    stride: [u64; LANES],
    /// Bits per component (0..=16, or [`RAW_BITS`]).
    bits: [u64; LANES],
    /// `2^bits - 1` where quantized (0 for raw lanes).
    qmask: [u64; LANES],
    /// Which frames of the segment are stored.
    mask: [u32; LANES],
    /// Dequantization by component: `offset + scale * q` (a zero-bit lane's scale is `-0.0`, so
    /// the sum is its offset to the bit).
    offset: [Vec4; 3],
    /// See `offset`.
    scale: [Vec4; 3],
    /// Lanes stored at every frame of the segment, quantized, every value's 8-byte load inside
    /// the data (bit `l`: lane `l`): those the four-lane decode reads.
    uniform: u8,
    /// Lanes quantized whose first stored value's 8-byte load lies inside the data: those the
    /// four-lane decode reads the segment's first frame of (a key across the segment before's
    /// end).
    first: u8,
}

impl SegGroup {
    /// Lane `l` as one track's layout.
    #[inline(always)]
    fn lane(&self, l: usize) -> SegTrack {
        let zero_bits = self.bits[l] == 0;
        let scale = |c: usize| if zero_bits { 0.0 } else { self.scale[c][l] };
        SegTrack {
            bits: self.bits[l] as u8,
            mask: self.mask[l],
            bit: self.bit[l] as usize,
            offset: Vec4::new(self.offset[0][l], self.offset[1][l], self.offset[2][l], 0.0),
            scale: Vec4::new(scale(0), scale(1), scale(2), 0.0),
        }
    }
}

/// What the parse keeps beside the groups' layouts: where each animated track sits in them, and
/// each group's range bytes while a segment is parsed.
#[derive(Clone, Debug, Default)]
struct ParseScratch {
    /// Per animated track: its group times [`LANES`] plus its lane.
    slot: Vec<u32>,
    /// Per group: its lanes' six range bytes (see [`seg_affine`]), little-endian in the low 48
    /// bits (for a clip whose tracks are not in the groups' order).
    ranges: Vec<[u64; LANES]>,
    /// Whether the clip's tracks are in the groups' order ([`LANE_KINDS`]; every clip this
    /// build's encoder writes): then the parse walks group by group ([`Walk::groups`]).
    in_file_order: bool,
}

/// The 8 bytes of `data` from byte `at` as a little-endian number (zero past the end).
#[inline(always)]
fn read_u64(data: &[u8], at: usize) -> u64 {
    match data.get(at..at + 8) {
        Some(b) => u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
        None => 0,
    }
}

/// Parses segment `s`'s headers into `out`, one [`SegGroup`] per group of `groups`: first the
/// header walk, group by group where the clip's tracks are in the groups' order ([`Walk::groups`],
/// every clip this build writes: four usual headers read at once, each group's factors computed
/// as it is read) or track by track into the tracks' lanes otherwise ([`Walk::tracks`], a file
/// written before), each lane's bits and value offset packed in its `bit` column (its mask beside
/// where that is not the full one); then group by group each lane's bits, mask, stride, bit mask
/// and uniformity ([`finish_lanes`], four lanes at once with AVX2 in the `AVX2` build, once the
/// values' first byte is known) and, after a track-by-track walk, the padding lanes and factors
/// ([`lane_affine`]), each written as a whole column (the decode's vector loads of them are not
/// held up by narrower stores).
/// The clip was validated when it was built or loaded, so every header is whole and every value
/// inside the data (and a segment's values take far fewer than `2^55` bits, below the packed
/// column's flags).
#[inline(always)]
fn parse_groups<const AVX2: bool>(
    clip: &CompressedClip,
    s: usize,
    scratch: &mut ParseScratch,
    groups: &[LaneGroup],
    out: &mut [SegGroup],
) {
    let data = &clip.data[..];
    let frames = segment_frames(clip.frames, s);
    let full_mask = (1u32 << frames) - 1;
    // A uniform segment's values: frames times three components.
    let walk = Walk { data, frames3: 3 * frames as u64, full_mask };
    let start = clip.segment_offsets[s] as usize;
    let in_order = scratch.in_file_order;
    let at = if in_order {
        walk.groups::<AVX2>(start, groups, out)
    } else {
        walk.tracks(start, &scratch.slot[..clip.tracks.len()], &mut scratch.ranges[..groups.len()], out)
    };
    let ends = LaneEnds { base: at as u64 * 8, end: data.len() as u64, last: frames as u64 - 1, full_mask };
    for ((o, group), range) in out.iter_mut().zip(groups).zip(scratch.ranges.iter_mut()) {
        if !in_order {
            let len = (group.len as usize).clamp(1, LANES);
            for l in len..LANES {
                (o.mask[l], o.bit[l], range[l]) = (o.mask[len - 1], o.bit[len - 1], range[len - 1]);
            }
        }
        #[cfg(target_arch = "x86_64")]
        if AVX2 {
            // SAFETY: `AVX2` is only set by `parse_groups_avx2` (the CPU has AVX2).
            unsafe { finish_lanes_avx2(o, ends) }
        } else {
            finish_lanes(o, ends)
        }
        #[cfg(not(target_arch = "x86_64"))]
        finish_lanes(o, ends);
        if !in_order {
            (o.offset, o.scale) = lane_affine::<AVX2>(group, &o.bits, range);
        }
    }
}

/// A segment's header walk: the clip's data, the segment's frames times three and its
/// every-frame mask.
struct Walk<'a> {
    data: &'a [u8],
    frames3: u64,
    full_mask: u32,
}

/// The low 48 bits: a usual header's six range bytes after its header byte.
const RANGE_BYTES: u64 = 0xFFFF_FFFF_FFFF;

impl Walk<'_> {
    /// A usual header (quantized, uniform; its byte below [`RAW_BITS`]) read as `word`, the 8
    /// bytes from its byte, the values before it taking `sizes` bits: its lane's packed column
    /// ([`PACKED_BITS_AT`]), its range bytes and its values' bits. Its length is 7 bytes.
    #[inline(always)]
    fn usual(&self, word: u64, sizes: u64) -> (u64, u64, u64) {
        let bits = word as u8 as u64;
        (sizes | bits << PACKED_BITS_AT, (word >> 8) & RANGE_BYTES, self.frames3 * bits)
    }

    /// The header at byte `at` when it is not a usual one ([`other_header`]), the values before
    /// it taking `sizes` bits: its lane's packed column (with [`PACKED_MASK`]), its mask, its
    /// range bytes, its bit rate, its length in bytes and its values' bits.
    #[inline(always)]
    fn other(&self, at: usize, sizes: u64) -> (u64, u32, u64, u64, usize, u64) {
        let (bits, mask, range, len) = other_header(self.data, at, self.full_mask);
        let packed = sizes | (bits as u64) << PACKED_BITS_AT | PACKED_MASK;
        (packed, mask, range, bits as u64, len, mask.count_ones() as u64 * value_bits(bits) as u64)
    }

    /// Walks the headers from byte `at` in track order, each track written into its group's
    /// lane (`slots`: group times [`LANES`] plus lane): its packed column (and its mask where
    /// that is not the full one: two stores for the usual header, [`finish_lanes`] sets the
    /// full mask) and its range bytes into `ranges`. Returns the byte after the last header
    /// (where the values start).
    #[inline(always)]
    fn tracks(
        &self,
        mut at: usize,
        slots: &[u32],
        ranges: &mut [[u64; LANES]],
        out: &mut [SegGroup],
    ) -> usize {
        let mut sizes = 0u64;
        for &slot in slots {
            let (g, l) = (slot as usize / LANES, slot as usize % LANES);
            // The header byte and, for the usual header (quantized, uniform), its range bytes.
            let word = read_u64(self.data, at);
            let header = word as u8;
            // The next header's place as a branch, not a data dependency: the processor runs on
            // to the next track's loads on its prediction (the usual header) instead of waiting
            // for this header's byte.
            if header < RAW_BITS {
                let (packed, range, size) = self.usual(word, sizes);
                (out[g].bit[l], ranges[g][l]) = (packed, range);
                (sizes, at) = (sizes + size, at + 7);
            } else {
                let (packed, mask, range, _, len, size) = self.other(at, sizes);
                (out[g].bit[l], out[g].mask[l], ranges[g][l]) = (packed, mask, range);
                (sizes, at) = (sizes + size, at + len);
            }
        }
        at
    }

    /// Walks the headers from byte `at` group by group, for a clip whose tracks are in the
    /// groups' order ([`LANE_KINDS`]): a group's tracks are the next `len` headers. Four usual
    /// headers in a row (the common case) are read at once, their places known from the first
    /// (seven bytes each), so their loads do not wait on each other; any other group goes
    /// header by header. Each group's padding lanes copy its last track, and its
    /// dequantization factors are computed while its range bytes are in registers
    /// ([`lane_affine`]). Returns the byte after the last header.
    #[inline(always)]
    fn groups<const AVX2: bool>(&self, mut at: usize, groups: &[LaneGroup], out: &mut [SegGroup]) -> usize {
        let mut sizes = 0u64;
        for (o, group) in out.iter_mut().zip(groups) {
            let len = (group.len as usize).clamp(1, LANES);
            let (mut bits, mut range) = ([0u64; LANES], [0u64; LANES]);
            // A word past the data reads as zero, but only words at true header places are
            // trusted: the first header that is not a usual one fails the test where it is.
            let w = [0, 7, 14, 21].map(|d| read_u64(self.data, at + d));
            if len == LANES && w.iter().all(|&w| (w as u8) < RAW_BITS) {
                for l in 0..LANES {
                    let (packed, r, size) = self.usual(w[l], sizes);
                    (o.bit[l], range[l], bits[l]) = (packed, r, w[l] as u8 as u64);
                    sizes += size;
                }
                at += 4 * 7;
            } else {
                for l in 0..LANES {
                    if l < len {
                        let word = read_u64(self.data, at);
                        if (word as u8) < RAW_BITS {
                            let (packed, r, size) = self.usual(word, sizes);
                            (o.bit[l], range[l], bits[l]) = (packed, r, word as u8 as u64);
                            (sizes, at) = (sizes + size, at + 7);
                        } else {
                            let (packed, mask, r, b, n, size) = self.other(at, sizes);
                            (o.bit[l], o.mask[l], range[l], bits[l]) = (packed, mask, r, b);
                            (sizes, at) = (sizes + size, at + n);
                        }
                    } else {
                        (o.bit[l], o.mask[l], range[l], bits[l]) =
                            (o.bit[l - 1], o.mask[l - 1], range[l - 1], bits[l - 1]);
                    }
                }
            }
            (o.offset, o.scale) = lane_affine::<AVX2>(group, &bits, &range);
        }
        at
    }
}

/// A group's dequantization factors: [`quantized_affine_avx2`] in the `AVX2` build where no lane
/// is raw or zero-bit, else [`group_affine`] (the same bits either way).
#[inline(always)]
fn lane_affine<const AVX2: bool>(
    group: &LaneGroup,
    bits: &[u64; LANES],
    range: &[u64; LANES],
) -> ([Vec4; 3], [Vec4; 3]) {
    let (mut zero, mut raw) = (0u8, 0u8);
    for (l, &b) in bits.iter().enumerate() {
        zero |= u8::from(b == 0) << l;
        raw |= u8::from(b == RAW_BITS as u64) << l;
    }
    #[cfg(target_arch = "x86_64")]
    if AVX2 && raw | zero == 0 {
        // SAFETY: `AVX2` is only set by `parse_groups_avx2` (the CPU has AVX2).
        return unsafe { quantized_affine_avx2(group, bits, range) };
    }
    group_affine(group, bits, range, (zero, raw))
}

/// Where a segment's values lie, for [`finish_lanes`]: the first bit of its data, the clip
/// data's length in bytes, its last frame's index and its every-frame mask.
#[derive(Clone, Copy)]
struct LaneEnds {
    base: u64,
    end: u64,
    last: u64,
    full_mask: u32,
}

/// Where the header walk packs a lane's bit rate in its `bit` column, above the value offset.
const PACKED_BITS_AT: i32 = 56;
/// Where the packed column flags a lane whose frame mask the walk stored (not the full one).
const PACKED_MASK_AT: i32 = 55;
/// See [`PACKED_MASK_AT`].
const PACKED_MASK: u64 = 1 << PACKED_MASK_AT;

/// A parsed group's per-lane layout from what the header walk wrote in its `bit` column (each
/// lane's bit rate at [`PACKED_BITS_AT`], [`PACKED_MASK`] where it stored the lane's frame mask,
/// the segment-relative value offset below): each lane's bits, mask, stride, absolute offset and
/// quantization mask, and the group's `uniform` and `first` lanes ([`SegGroup`]).
#[inline(always)]
fn finish_lanes(o: &mut SegGroup, e: LaneEnds) {
    let (mut uniform, mut first) = (0u8, 0u8);
    for l in 0..LANES {
        let packed = o.bit[l];
        o.bits[l] = packed >> PACKED_BITS_AT;
        if packed & PACKED_MASK == 0 {
            o.mask[l] = e.full_mask;
        }
        o.bit[l] = packed & (PACKED_MASK - 1);
        let raw = o.bits[l] == RAW_BITS as u64;
        let stride = if raw { 128 } else { 3 * o.bits[l] };
        let bit = o.bit[l] + e.base;
        (o.stride[l], o.bit[l]) = (stride, bit);
        o.qmask[l] = if raw { 0 } else { (1u64 << o.bits[l]) - 1 };
        // The four-lane decode loads 8 bytes at each value's byte without a bound check: a
        // lane is uniform only where its last value's 8 bytes lie inside the data.
        let inside = (bit + stride * e.last) / 8 + 8 <= e.end;
        uniform |= u8::from(!raw && o.mask[l] == e.full_mask && inside) << l;
        first |= u8::from(!raw && bit / 8 + 8 <= e.end) << l;
    }
    (o.uniform, o.first) = (uniform, first);
}

/// [`finish_lanes`] four lanes at once with AVX2 (integer arithmetic: the same values). The
/// offsets stay below `2^63` and a stride times the last frame below `2^32` (at most 128 x 15),
/// so signed 64-bit compares and a 32-bit multiply are exact.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx,avx2")]
unsafe fn finish_lanes_avx2(o: &mut SegGroup, e: LaneEnds) {
    use std::arch::x86_64::*;
    let splat = |v: u64| _mm256_set1_epi64x(v as i64);
    let lanes = |v: __m256i| _mm256_movemask_pd(_mm256_castsi256_pd(v)) as u8;
    // SAFETY: each array is four u64 or u32 (32 or 16 bytes), read and written unaligned.
    unsafe {
        let packed = _mm256_loadu_si256(o.bit.as_ptr().cast());
        let bits = _mm256_srli_epi64::<PACKED_BITS_AT>(packed);
        // The lanes whose mask the walk stored (the flag moved to the sign bit).
        let stored = lanes(_mm256_slli_epi64::<{ 63 - PACKED_MASK_AT }>(packed));
        let stored = _mm_load_si128(LANE_MASKS.0[stored as usize].as_ptr().cast());
        let full = _mm_set1_epi32(e.full_mask as i32);
        let mask = _mm_blendv_epi8(full, _mm_loadu_si128(o.mask.as_ptr().cast()), stored);
        let raw = _mm256_cmpeq_epi64(bits, splat(RAW_BITS as u64));
        let three = _mm256_add_epi64(bits, _mm256_add_epi64(bits, bits));
        let stride = _mm256_blendv_epi8(three, splat(128), raw);
        let bit = _mm256_add_epi64(_mm256_and_si256(packed, splat(PACKED_MASK - 1)), splat(e.base));
        // `(1 << bits) - 1` as `!(!0 << bits)`; zero where raw.
        let ones = _mm256_set1_epi64x(-1);
        let qmask = _mm256_andnot_si256(raw, _mm256_andnot_si256(_mm256_sllv_epi64(ones, bits), ones));
        let beyond = |at: __m256i| {
            let byte = _mm256_add_epi64(_mm256_srli_epi64::<3>(at), splat(8));
            lanes(_mm256_cmpgt_epi64(byte, splat(e.end)))
        };
        let last_bit = _mm256_add_epi64(bit, _mm256_mul_epu32(stride, splat(e.last)));
        let full = _mm_cmpeq_epi32(mask, full);
        let full = _mm_movemask_ps(_mm_castsi128_ps(full)) as u8;
        let raw = lanes(raw);
        o.uniform = !raw & full & !beyond(last_bit) & 0b1111;
        o.first = !raw & !beyond(bit) & 0b1111;
        _mm256_storeu_si256(o.stride.as_mut_ptr().cast(), stride);
        _mm256_storeu_si256(o.bit.as_mut_ptr().cast(), bit);
        _mm256_storeu_si256(o.qmask.as_mut_ptr().cast(), qmask);
        _mm256_storeu_si256(o.bits.as_mut_ptr().cast(), bits);
        _mm_storeu_si128(o.mask.as_mut_ptr().cast(), mask);
    }
}

/// The header at byte `at` of `data` when it is not a quantized uniform one (raw, or keyed):
/// its bit rate, frame mask, range bytes (little-endian in the low 48 bits; zero for raw) and
/// length in bytes. Kept out of line so the parse's usual case stays a predicted branch.
#[cold]
#[inline(never)]
fn other_header(data: &[u8], at: usize, full_mask: u32) -> (u8, u32, u64, usize) {
    let (header, next) = read_header(data, at, full_mask);
    let mut range = [0u8; 8];
    range[..6].copy_from_slice(&header.range);
    (header.bits, header.mask, u64::from_le_bytes(range), next - at)
}

/// The six range bytes of four tracks (little-endian in the low 48 bits of each) as four-lane
/// columns of floats: byte `c` of each (`c` in `0..6`), and the three 16-bit numbers of bytes
/// `2c, 2c + 1` (exact conversions, so however they are made they are the same bits).
#[inline(always)]
fn range_columns(r: [u64; LANES]) -> ([Vec4; 6], [Vec4; 3]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86_64.
        unsafe {
            let zero = _mm_setzero_si128();
            let (r01, r23) =
                (_mm_set_epi64x(r[1] as i64, r[0] as i64), _mm_set_epi64x(r[3] as i64, r[2] as i64));
            // Bytes of lanes 0 and 1 interleaved, and of 2 and 3; then by byte, four lanes each:
            // `lo` holds bytes 0..4 (a column of four per 32 bits), `hi` bytes 4..8.
            let (p, q) = (
                _mm_unpacklo_epi8(r01, _mm_srli_si128::<8>(r01)),
                _mm_unpacklo_epi8(r23, _mm_srli_si128::<8>(r23)),
            );
            let (lo, hi) = (_mm_unpacklo_epi16(p, q), _mm_unpackhi_epi16(p, q));
            // Each column's four bytes widened to 32-bit lanes.
            let widen = |v: __m128i| {
                let w = _mm_unpacklo_epi8(v, zero);
                let h = _mm_unpackhi_epi8(v, zero);
                [
                    _mm_unpacklo_epi16(w, zero),
                    _mm_unpackhi_epi16(w, zero),
                    _mm_unpacklo_epi16(h, zero),
                    _mm_unpackhi_epi16(h, zero),
                ]
            };
            let (a, b) = (widen(lo), widen(hi));
            let col = [a[0], a[1], a[2], a[3], b[0], b[1]];
            let bytes = col.map(|v| Vec4::from(_mm_cvtepi32_ps(v)));
            let word = |c: usize| {
                Vec4::from(_mm_cvtepi32_ps(_mm_or_si128(col[2 * c], _mm_slli_epi32::<8>(col[2 * c + 1]))))
            };
            (bytes, [word(0), word(1), word(2)])
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let byte = |c: usize| Vec4::from_array(r.map(|v| (v >> (8 * c)) as u8 as f32));
        let word = |c: usize| Vec4::from_array(r.map(|v| (v >> (16 * c)) as u16 as f32));
        ([byte(0), byte(1), byte(2), byte(3), byte(4), byte(5)], [word(0), word(1), word(2)])
    }
}

/// [`seg_affine`] for a group's four tracks at once, lane by lane the same operations (so the
/// same bits): `offset` and `scale` by component. A zero-bit lane's scale is `-0.0` (`offset +
/// -0.0 * 0` is its offset to the bit); a raw lane's factors are zero (unused).
#[inline(always)]
fn group_affine(
    group: &LaneGroup,
    bits: &[u64; LANES],
    range: &[u64; LANES],
    (zero, raw): (u8, u8),
) -> ([Vec4; 3], [Vec4; 3]) {
    let inv = inv_maxq(bits);
    let (bytes, words) = range_columns(*range);
    let (mut offset, mut scale) = ([Vec4::ZERO; 3], [Vec4::ZERO; 3]);
    for c in 0..3 {
        let (min, ext) = (group.min[c], group.ext[c]);
        let smin = bytes[c] * (1.0 / 255.0);
        let sext = bytes[3 + c] * (1.0 / 255.0);
        (offset[c], scale[c]) = (min + ext * smin, ext * sext * inv);
    }
    // Raw and zero-bit lanes are rare: their factors only where a lane is one.
    if raw | zero != 0 {
        for c in 0..3 {
            let (min, ext) = (group.min[c], group.ext[c]);
            let o0 = min + ext * (words[c] * (1.0 / 65535.0));
            offset[c] = blend(zero, o0, blend(raw, Vec4::ZERO, offset[c]));
            scale[c] = blend(zero, Vec4::splat(-0.0), blend(raw, Vec4::ZERO, scale[c]));
        }
    }
    (offset, scale)
}

/// [`group_affine`] for a group whose lanes are all quantized with at least one bit (no raw or
/// zero-bit lane), with AVX2: the four lanes' range bytes become columns by one byte shuffle and
/// two word unpacks, each component's minimum and extent bytes then convert and scale in one
/// eight-lane register. The same operations on each value as [`group_affine`] (exact
/// conversions, then the same products and sums in the same order), so the same bits.
///
/// # Safety
/// The CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx,avx2")]
unsafe fn quantized_affine_avx2(
    group: &LaneGroup,
    bits: &[u64; LANES],
    range: &[u64; LANES],
) -> ([Vec4; 3], [Vec4; 3]) {
    use std::arch::x86_64::*;
    let inv: __m128 = inv_maxq(bits).into();
    let (mut offset, mut scale) = ([Vec4::ZERO; 3], [Vec4::ZERO; 3]);
    // SAFETY: `range` is four u64 (32 bytes), read unaligned.
    let r = unsafe { _mm256_loadu_si256(range.as_ptr().cast()) };
    // In each 128-bit half (two lanes of eight bytes): the pairs of the two lanes' byte c, c in
    // 0..6, as 16-bit words.
    let pairs = _mm256_setr_epi8(
        0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, -1, -1, -1, -1, 0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, -1,
        -1, -1, -1,
    );
    let p = _mm256_shuffle_epi8(r, pairs);
    let (lo, hi) = (_mm256_castsi256_si128(p), _mm256_extracti128_si256::<1>(p));
    // Byte c of the four lanes as 32-bit lane c (c in 0..6).
    let cols = _mm256_inserti128_si256::<1>(
        _mm256_castsi128_si256(_mm_unpacklo_epi16(lo, hi)),
        _mm_unpackhi_epi16(lo, hi),
    );
    let k = _mm256_set1_ps(1.0 / 255.0);
    for c in 0..3 {
        // Component c's minimum bytes (range byte c) in the low half, its extent bytes (byte
        // 3 + c) in the high half.
        let pick =
            _mm256_permutevar8x32_epi32(cols, _mm256_setr_epi32(c as i32, c as i32 + 3, 0, 0, 0, 0, 0, 0));
        let v = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm256_castsi256_si128(pick))), k);
        let ext: __m128 = group.ext[c].into();
        let t = _mm256_mul_ps(_mm256_set_m128(ext, ext), v);
        let min: __m128 = group.min[c].into();
        offset[c] = Vec4::from(_mm_add_ps(min, _mm256_castps256_ps128(t)));
        scale[c] = Vec4::from(_mm_mul_ps(_mm256_extractf128_ps::<1>(t), inv));
    }
    (offset, scale)
}

/// The slot of `slots` holding segment `s` parsed (parsed into the other slot than `keep` when
/// neither does). `AVX2`: parse with the AVX2 build (only from [`CompressedContext::sample_avx2`]).
#[inline]
fn slot_for<const AVX2: bool>(
    segs: &mut [usize; 2],
    slots: &mut [Vec<SegGroup>; 2],
    clip: &CompressedClip,
    s: usize,
    keep: usize,
    scratch: &mut ParseScratch,
    groups: &[LaneGroup],
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
    let out = &mut slots[k][..groups.len()];
    #[cfg(target_arch = "x86_64")]
    if AVX2 {
        // SAFETY: `AVX2` is only set by `sample_avx2` (the CPU has AVX2 and the bit counts).
        unsafe { parse_groups_avx2(clip, s, scratch, groups, out) }
    } else {
        parse_groups::<false>(clip, s, scratch, groups, out)
    }
    #[cfg(not(target_arch = "x86_64"))]
    parse_groups::<false>(clip, s, scratch, groups, out);
    segs[k] = s;
    k
}

/// [`parse_groups`] compiled for AVX2, POPCNT, LZCNT, BMI1 and BMI2.
///
/// # Safety
/// The CPU has those features.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2,popcnt,lzcnt,bmi1,bmi2")]
unsafe fn parse_groups_avx2(
    clip: &CompressedClip,
    s: usize,
    scratch: &mut ParseScratch,
    groups: &[LaneGroup],
    out: &mut [SegGroup],
) {
    parse_groups::<true>(clip, s, scratch, groups, out)
}

/// Two keys for the `lanes` of a group (bit `l`: lane `l`; each one quantized, its values'
/// 8-byte loads inside the data: a uniform lane, or a `first` lane's first value; the other
/// lanes' values are not to be used): stored value `ka` of segment layout `sa` and value `kb` of
/// `sb` (the same segment's next frame, or the next segment's first), by component (`w` rebuilt
/// for rotations, else zero): what [`decode_pair_avx2`] gives with AVX2, in the baseline
/// build. Each lane's 64 bits are read one lane at a time and its three quantized components
/// taken by shifts and masks into component columns; then per component the four lanes at once,
/// `offset + scale * q` (a zero-bit lane's scale is `-0.0` and its `q` zero: its offset to the
/// bit, as [`decode_value`] gives it), the same operations on every value as [`decode_value`],
/// so the same bits, with no per-lane layout built and no transpose.
#[inline(always)]
fn decode_pair_lanes(
    data: &[u8],
    (sa, ka): (&SegGroup, u32),
    (sb, kb): (&SegGroup, u32),
    lanes: u8,
    rotation: bool,
) -> ([Vec4; 4], [Vec4; 4]) {
    (decode_key_lanes(data, sa, ka, lanes, rotation), decode_key_lanes(data, sb, kb, lanes, rotation))
}

/// One key of [`decode_pair_lanes`]: value `k` of layout `sg` for `lanes`, by component.
#[inline(always)]
fn decode_key_lanes(data: &[u8], sg: &SegGroup, k: u32, lanes: u8, rotation: bool) -> [Vec4; 4] {
    let mut q = [[0i32; LANES]; 3];
    for l in (0..LANES).filter(|l| lanes & (1 << l) != 0) {
        let word = read_bits64(data, (sg.bit[l] + sg.stride[l] * k as u64) as usize);
        let (bits, qmask) = (sg.bits[l], sg.qmask[l]);
        q[0][l] = (word & qmask) as i32;
        q[1][l] = ((word >> bits) & qmask) as i32;
        q[2][l] = ((word >> (2 * bits)) & qmask) as i32;
    }
    // Components of at most 16 bits: exact as `i32` and as `f32`.
    let v = |c: usize| sg.offset[c] + sg.scale[c] * Vec4::from_array(q[c].map(|x| x as f32));
    let (x, y, z) = (v(0), v(1), v(2));
    [x, y, z, if rotation { w_of(x, y, z) } else { Vec4::ZERO }]
}

/// Two keys for the `lanes` of a group (bit `l`: lane `l`), four tracks at once, both side by
/// side in eight lanes: value `ka` of segment layout `sa` and value `kb` of `sb` (the same
/// segment's next frame, or the next segment's first); per key one masked gather of each
/// lane's 64 bits (the other lanes load nothing and read as zero) and lane shifts, then per
/// component the two keys' quantized values in one vector (key `a` in the low half, `b` in the
/// high half, so each half's factors are its own layout's four lanes, joined as they are stored),
/// `offset + scale * q` (a multiply, then an add: the same operations as [`decode_value`], so the
/// same bits) and, for rotations, `w` ([`w_of`]'s arithmetic).
///
/// # Safety
/// The CPU has AVX2, and the values asked for of every lane in `lanes` lie inside `data` with 8
/// bytes to spare.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2")]
#[inline]
unsafe fn decode_pair_avx2(
    data: &[u8],
    (sa, ka): (&SegGroup, u32),
    (sb, kb): (&SegGroup, u32),
    lanes: u8,
    rotation: bool,
) -> ([Vec4; 4], [Vec4; 4]) {
    use std::arch::x86_64::*;
    // SAFETY (the load): the table entry is 16 aligned bytes.
    let only =
        _mm256_cvtepi32_epi64(unsafe { _mm_load_si128(LANE_MASKS.0[(lanes & 15) as usize].as_ptr().cast()) });
    let load = |v: &[u64; LANES]| unsafe { _mm256_loadu_si256(v.as_ptr().cast()) };
    let offset = |sg: &SegGroup, k: u32| {
        _mm256_add_epi64(load(&sg.bit), _mm256_mul_epu32(load(&sg.stride), _mm256_set1_epi64x(k as i64)))
    };
    let (off_a, off_b) = (offset(sa, ka), offset(sb, kb));
    let word = |off: __m256i| {
        // SAFETY: the caller's promise (each lane asked for has its 8 bytes inside `data`).
        let w = unsafe {
            _mm256_mask_i64gather_epi64::<1>(
                _mm256_setzero_si256(),
                data.as_ptr().cast(),
                _mm256_srli_epi64::<3>(off),
                only,
            )
        };
        _mm256_srlv_epi64(w, _mm256_and_si256(off, _mm256_set1_epi64x(7)))
    };
    let (wa, wb) = (word(off_a), word(off_b));
    let (bits_a, bits_b) = (load(&sa.bits), load(&sb.bits));
    let (qmask_a, qmask_b) = (load(&sa.qmask), load(&sb.qmask));
    // Lane `l`'s key `a` in 32-bit lane `l`, its key `b` in lane `4 + l` (a component has at
    // most 16 bits): interleaved in each 64-bit lane, then the even 32-bit lanes (`a`) moved low
    // and the odd ones (`b`) high, so each key's factors are its layout's own four lanes.
    let split = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    let pair = |qa: __m256i, qb: __m256i| {
        let ab = _mm256_or_si256(
            _mm256_and_si256(qa, qmask_a),
            _mm256_slli_epi64::<32>(_mm256_and_si256(qb, qmask_b)),
        );
        _mm256_permutevar8x32_epi32(ab, split)
    };
    let q = [
        pair(wa, wb),
        pair(_mm256_srlv_epi64(wa, bits_a), _mm256_srlv_epi64(wb, bits_b)),
        pair(
            _mm256_srlv_epi64(wa, _mm256_add_epi64(bits_a, bits_a)),
            _mm256_srlv_epi64(wb, _mm256_add_epi64(bits_b, bits_b)),
        ),
    ];
    // Each key's factors in its half.
    let join = |x: Vec4, y: Vec4| _mm256_insertf128_ps(_mm256_castps128_ps256(x.into()), y.into(), 1);
    let v: [__m256; 3] = std::array::from_fn(|c| {
        _mm256_add_ps(
            join(sa.offset[c], sb.offset[c]),
            _mm256_mul_ps(join(sa.scale[c], sb.scale[c]), _mm256_cvtepi32_ps(q[c])),
        )
    });
    let w = if rotation {
        let (add, mul) = (|x, y| _mm256_add_ps(x, y), |x, y| _mm256_mul_ps(x, y));
        let len2 = add(add(mul(v[0], v[0]), mul(v[1], v[1])), mul(v[2], v[2]));
        _mm256_sqrt_ps(_mm256_max_ps(_mm256_sub_ps(_mm256_set1_ps(1.0), len2), _mm256_setzero_ps()))
    } else {
        _mm256_setzero_ps()
    };
    // One vector per key: its half.
    let (mut a, mut b) = ([Vec4::ZERO; 4], [Vec4::ZERO; 4]);
    for (c, x) in [v[0], v[1], v[2], w].into_iter().enumerate() {
        (a[c], b[c]) = (Vec4::from(_mm256_castps256_ps128(x)), Vec4::from(_mm256_extractf128_ps::<1>(x)));
    }
    (a, b)
}

/// Per lane mask bits (`0..16`): the four-lane mask with lane `l` all ones where bit `l` is set.
#[repr(C, align(16))]
struct LaneMasks([[u32; LANES]; 16]);

static LANE_MASKS: LaneMasks = {
    let mut t = [[0u32; LANES]; 16];
    let mut m = 0;
    while m < 16 {
        let mut l = 0;
        while l < LANES {
            if m & (1 << l) != 0 {
                t[m][l] = u32::MAX;
            }
            l += 1;
        }
        m += 1;
    }
    LaneMasks(t)
};

/// `new` in the lanes `m` marks (bit `l`: lane `l`), `old` in the others: one vector blend
/// (writing a key group's lanes as whole vectors, so the next vector load of them is not held up
/// by four narrower stores).
#[inline(always)]
fn blend(m: u8, new: Vec4, old: Vec4) -> Vec4 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86_64; the table entry is 16 aligned bytes.
        unsafe {
            let mask = _mm_load_ps(LANE_MASKS.0[(m & 15) as usize].as_ptr().cast());
            Vec4::from(_mm_or_ps(_mm_and_ps(mask, new.into()), _mm_andnot_ps(mask, old.into())))
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    Vec4::from_array(std::array::from_fn(|l| if m & (1 << l) != 0 { new[l] } else { old[l] }))
}

/// [`blend`] for frame numbers.
#[inline(always)]
fn blend_frames(m: u8, new: [u32; LANES], old: [u32; LANES]) -> [u32; LANES] {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86_64; the table entry is 16 aligned bytes, the arrays 16
        // bytes each (unaligned loads and stores).
        unsafe {
            let mask = _mm_load_si128(LANE_MASKS.0[(m & 15) as usize].as_ptr().cast());
            let (n, o) = (_mm_loadu_si128(new.as_ptr().cast()), _mm_loadu_si128(old.as_ptr().cast()));
            let mut r = [0u32; LANES];
            _mm_storeu_si128(
                r.as_mut_ptr().cast(),
                _mm_or_si128(_mm_and_si128(mask, n), _mm_andnot_si128(mask, o)),
            );
            r
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    std::array::from_fn(|l| if m & (1 << l) != 0 { new[l] } else { old[l] })
}

/// The lanes of `keys` (bit `l`: lane `l`) whose keys do not hold frame `f` (`last`: the clip's
/// last frame, where a lane holds its last key): `!(fa <= f && (f < fb || fa == f == last))`.
#[inline(always)]
fn stale_lanes(keys: &KeyGroup, f: u32, last: u32) -> u8 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::*;
        // SAFETY: SSE2 is part of x86_64; the frame arrays are 16 bytes each.
        unsafe {
            // Unsigned order as signed order with the top bit flipped.
            let flip = _mm_set1_epi32(i32::MIN);
            let fa = _mm_loadu_si128(keys.fa.as_ptr().cast());
            let fb = _mm_loadu_si128(keys.fb.as_ptr().cast());
            let fv = _mm_set1_epi32(f as i32);
            let (fa_s, fb_s, f_s) =
                (_mm_xor_si128(fa, flip), _mm_xor_si128(fb, flip), _mm_xor_si128(fv, flip));
            let after = _mm_cmpgt_epi32(fa_s, f_s);
            let before_end = _mm_cmpgt_epi32(fb_s, f_s);
            let held = if f == last { _mm_cmpeq_epi32(fa, fv) } else { _mm_setzero_si128() };
            let fresh = _mm_andnot_si128(after, _mm_or_si128(before_end, held));
            (!_mm_movemask_ps(_mm_castsi128_ps(fresh)) & 0b1111) as u8
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut m = 0u8;
        for l in 0..LANES {
            if !(keys.fa[l] <= f && (f < keys.fb[l] || (keys.fa[l] == f && f == last))) {
                m |= 1 << l;
            }
        }
        m
    }
}

/// Each lane's parameter between its keys at `time` (`p`: the position on the grid in frames):
/// `(p - fa) / (fb - fa)`, or from the keys' times where the clip keeps exact frame times; 0
/// where a lane holds its key (`fb <= fa`).
#[inline(always)]
fn parameter(keys: &KeyGroup, time: f32, p: f32, exact: bool) -> Vec4 {
    if exact {
        Vec4::from_array(std::array::from_fn(|l| {
            let (fa, fb) = (keys.fa[l], keys.fb[l]);
            if fb <= fa { 0.0 } else { exact_u(time, keys.ta[l], keys.tb[l]) }
        }))
    } else {
        let fa = Vec4::from_array(keys.fa.map(|v| v as f32));
        let span = Vec4::from_array(std::array::from_fn(|l| keys.fb[l].wrapping_sub(keys.fa[l]) as f32));
        let held = glam::BVec4A::new(
            keys.fb[0] <= keys.fa[0],
            keys.fb[1] <= keys.fa[1],
            keys.fb[2] <= keys.fa[2],
            keys.fb[3] <= keys.fa[3],
        );
        Vec4::select(held, Vec4::ZERO, (Vec4::splat(p) - fa) / span)
    }
}

/// A rotation's `w` from its `x, y, z`, four lanes at once ([`with_w`]'s arithmetic).
#[inline(always)]
fn w_of(x: Vec4, y: Vec4, z: Vec4) -> Vec4 {
    let w2 = Vec4::ONE - (x * x + y * y + z * z);
    w2.max(Vec4::ZERO).sqrt()
}

/// The sampling cache of one playing head over a [`CompressedClip`]: the two segments around
/// the playhead parsed, and per animated track the frames and decoded values of the two keys it
/// interpolates between, four tracks of one kind to a group (each component a four-lane column,
/// so groups decode, interpolate and slerp four tracks at once). Tied to the clip it last sampled
/// (another clip, or the same one rebuilt, starts it over); correct at any time, fastest forward.
/// Size it for the largest clip it samples ([`CompressedContext::new`]); sampling allocates
/// nothing.
#[derive(Clone, Debug, Default)]
pub struct CompressedContext {
    max_bones: usize,
    clip: u64,
    /// Groups of the clip it samples.
    groups: usize,
    /// Per group: its kind and its lanes' bones.
    lanes: Vec<LaneGroup>,
    /// Where each animated track sits in the groups, and the range bytes of a parse.
    scratch: ParseScratch,
    /// The segments parsed in `slots[0]` and `slots[1]` (`usize::MAX`: none).
    segs: [usize; 2],
    slots: [Vec<SegGroup>; 2],
    /// Per group: the two keys its lanes interpolate between.
    keys: Vec<KeyGroup>,
    /// Per group: this sample's parameter between its keys, lane by lane.
    u: Vec<Vec4>,
    /// The clip's rotation groups (the first groups).
    rotation_groups: usize,
    /// Per group, during a sample: its lanes that need new keys.
    stale: Vec<u8>,
}

/// The parameter between two keys at times `ta` and `tb`: from the times, as the original's
/// sampler computes it, snapped to an end within [`TIME_SNAP`] of it. A frame's time is its
/// key's exact time or within rounding of it (the encoder keeps every other time), so the snap
/// is rounding wide: a time a thousandth of a frame before a pasted key is that far along the
/// steep segment into it, not the key (the original's value there; a frame-wide snap held the
/// key 8 us early and missed a pasted pose by 0.1% of its jump).
#[inline]
fn exact_u(time: f32, ta: f32, tb: f32) -> f32 {
    let d = tb - ta;
    if !(d > 0.0) {
        return 0.0;
    }
    let near = |t: f32| (time - t).abs() <= TIME_SNAP * time.abs().max(t.abs()).max(1e-3);
    if near(ta) {
        0.0
    } else if near(tb) {
        1.0
    } else {
        ((time - ta) / d).clamp(0.0, 1.0)
    }
}

/// How close to a kept frame time (relative, as `f32` rounding) a sample time is that time:
/// twice the encoder's rounding allowance between a key time and its frame's grid time.
const TIME_SNAP: f32 = 8.0 * f32::EPSILON;

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
        // Each kind's last group may be partial.
        let groups = tracks.div_ceil(LANES) + 3;
        self.max_bones = max_bones;
        self.lanes.resize(groups, NO_GROUP);
        self.scratch.slot.resize(tracks, 0);
        self.scratch.ranges.resize(groups, [0; LANES]);
        for slot in &mut self.slots {
            slot.resize(groups, SegGroup::default());
        }
        self.keys.resize(groups, STALE_KEYS);
        self.u.resize(groups, Vec4::ZERO);
        self.stale.resize(groups, 0);
        self.invalidate();
    }

    /// Forgets every parsed segment and decoded key.
    pub fn invalidate(&mut self) {
        self.clip = 0;
        self.groups = 0;
        self.rotation_groups = 0;
        self.segs = [usize::MAX; 2];
        self.keys.fill(STALE_KEYS);
    }

    /// Bytes this context holds.
    pub fn bytes(&self) -> usize {
        self.slots.iter().map(|s| s.len() * std::mem::size_of::<SegGroup>()).sum::<usize>()
            + self.keys.len() * std::mem::size_of::<KeyGroup>()
            + self.lanes.len() * std::mem::size_of::<LaneGroup>()
            + self.scratch.slot.len() * 4
            + self.scratch.ranges.len() * std::mem::size_of::<[u64; LANES]>()
            + self.u.len() * std::mem::size_of::<Vec4>()
            + self.stale.len()
    }

    /// Lays out `clip`'s animated tracks in groups (see [`LaneGroup`]) and forgets the last
    /// clip's keys. Within the capacity [`Self::resize`] gave (a validated clip has at most
    /// three tracks per bone), so it allocates nothing.
    fn lay_out(&mut self, clip: &CompressedClip) {
        self.invalidate();
        self.clip = clip.id;
        let mut g = 0;
        for kind in LANE_KINDS {
            let mut lane = 0;
            for (i, track) in clip.tracks.iter().enumerate().filter(|(_, t)| t.kind == kind) {
                if lane == 0 {
                    self.lanes[g] = LaneGroup { kind, ..NO_GROUP };
                }
                let group = &mut self.lanes[g];
                group.bone[lane] = track.bone as u32;
                group.track[lane] = i as u32;
                self.scratch.slot[i] = (g * LANES + lane) as u32;
                for c in 0..3 {
                    (group.min[c][lane], group.ext[c][lane]) = (track.min[c], track.extent[c]);
                }
                group.len += 1;
                lane += 1;
                if lane == LANES {
                    (lane, g) = (0, g + 1);
                }
            }
            if lane != 0 {
                let group = &mut self.lanes[g];
                for l in lane..LANES {
                    group.bone[l] = group.bone[lane - 1];
                    group.track[l] = group.track[lane - 1];
                    for c in 0..3 {
                        (group.min[c][l], group.ext[c][l]) = (group.min[c][lane - 1], group.ext[c][lane - 1]);
                    }
                }
                g += 1;
            }
            if kind == TrackKind::Rotation {
                self.rotation_groups = g;
            }
        }
        self.groups = g;
        // The groups in order take the tracks in file order (each group its next `len`).
        let mut next = 0;
        self.scratch.in_file_order = self.lanes[..g].iter().all(|group| {
            let len = group.len as usize;
            let ok = (0..len).all(|l| group.track[l] as usize == next + l);
            next += len;
            ok
        }) && next == clip.tracks.len();
    }

    /// The slot holding segment `s` of `clip` parsed ([`slot_for`]; `keep`: a slot not to
    /// parse into).
    #[inline(always)]
    fn slot<const AVX2: bool>(&mut self, clip: &CompressedClip, s: usize, keep: usize) -> usize {
        let groups = &self.lanes[..self.groups];
        slot_for::<AVX2>(&mut self.segs, &mut self.slots, clip, s, keep, &mut self.scratch, groups)
    }

    /// Frames `f` and `f + 1` for the uniform lanes of every group with a stale one, four lanes
    /// at a time, every group's in one pass (their decodes are independent, so the processor
    /// overlaps them): frame `f` is value `k` of the segment parsed in slot `here`, frame `f + 1`
    /// value `k + 1` of it or, where `f` is the segment's last frame, the first value of the next
    /// segment parsed in slot `next` (then a lane needs that value quantized too). `times`: the
    /// two frames' times where the clip keeps exact frame times (else zeros). Clears those lanes
    /// from the groups' stale masks.
    #[inline(always)]
    fn decode_uniform<const AVX2: bool>(
        &mut self,
        data: &[u8],
        (here, next): (usize, usize),
        (f, k): (u32, u32),
        (tf, tf1): (f32, f32),
    ) {
        let kb = if next == here { k + 1 } else { 0 };
        for gi in 0..self.groups {
            let (sa, sb) = (&self.slots[here][gi], &self.slots[next][gi]);
            let lanes = if next == here { sa.uniform } else { sa.uniform & sb.first };
            if lanes & self.stale[gi] == 0 {
                continue;
            }
            let rotation = self.lanes[gi].kind == TrackKind::Rotation;
            let (a, b) = {
                #[cfg(target_arch = "x86_64")]
                if AVX2 {
                    // SAFETY: `AVX2` is only set by `sample_avx2` (the CPU has AVX2); a uniform
                    // lane's every value lies inside the data with 8 bytes to spare, and a
                    // `first` lane's first value (`parse_groups` checks both); `k + 1` is below
                    // the segment's frames where `next == here`.
                    unsafe { decode_pair_avx2(data, (sa, k), (sb, kb), lanes, rotation) }
                } else {
                    decode_pair_lanes(data, (sa, k), (sb, kb), lanes, rotation)
                }
                #[cfg(not(target_arch = "x86_64"))]
                decode_pair_lanes(data, (sa, k), (sb, kb), lanes, rotation)
            };
            let keys = &mut self.keys[gi];
            if lanes == 0b1111 {
                // Every lane uniform (the usual case): whole groups, no blends.
                (keys.a, keys.b) = (a, b);
                (keys.fa, keys.fb) = ([f; LANES], [f + 1; LANES]);
                (keys.ta, keys.tb) = ([tf; LANES], [tf1; LANES]);
            } else {
                for c in 0..4 {
                    keys.a[c] = blend(lanes, a[c], keys.a[c]);
                    keys.b[c] = blend(lanes, b[c], keys.b[c]);
                }
                keys.fa = blend_frames(lanes, [f; LANES], keys.fa);
                keys.fb = blend_frames(lanes, [f + 1; LANES], keys.fb);
                let (ta, tb) = (Vec4::from_array(keys.ta), Vec4::from_array(keys.tb));
                keys.ta = blend(lanes, Vec4::splat(tf), ta).to_array();
                keys.tb = blend(lanes, Vec4::splat(tf1), tb).to_array();
            }
            self.stale[gi] &= !lanes;
        }
    }

    /// Samples `clip` at `time` into `out` (one entry per bone; inputs validated by the job).
    /// At the `avx2` level and above the same code is compiled for AVX2 with the bit-counting
    /// instructions, and a group's uniform tracks are decoded four at once with AVX2 gathers and
    /// shifts: the same operations on each value in the same order (no fused multiply-add: Rust
    /// never contracts), so the same bits.
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
        self.sample_with::<false>(clip, bind, time, out)
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
        self.sample_with::<true>(clip, bind, time, out)
    }

    /// The sample itself (see [`Self::sample`]); `AVX2`: decode uniform lanes with AVX2 (only
    /// from [`Self::sample_avx2`]), else one lane at a time (the portable build).
    #[inline(always)]
    pub(super) fn sample_with<const AVX2: bool>(
        &mut self,
        clip: &CompressedClip,
        bind: &[Transform],
        time: f32,
        out: &mut [Transform],
    ) {
        if self.clip != clip.id {
            self.lay_out(clip);
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
        let k = f - first;
        // Uniform lanes' keys are frames `f` and `f + 1` (none at the clip's last frame): both in
        // this segment, or at its last frame `f + 1` the next segment's first.
        let in_segment = f != last && (k as usize) + 1 < segment_frames(clip.frames, s);
        let data = &clip.data[..];
        let groups = self.groups;
        // Which lanes need new keys, group by group.
        let mut any = 0u8;
        for (keys, stale) in self.keys[..groups].iter().zip(&mut self.stale[..groups]) {
            let m = stale_lanes(keys, f, last);
            *stale = m;
            any |= m;
        }
        let here = if any != 0 { self.slot::<AVX2>(clip, s, usize::MAX) } else { usize::MAX };
        if any != 0 && f != last {
            // At a segment's last frame the next key is the next segment's first.
            let next = if in_segment { here } else { self.slot::<AVX2>(clip, s + 1, here) };
            let times = if exact { (clip.frame_time(f), clip.frame_time(f + 1)) } else { (0.0, 0.0) };
            self.decode_uniform::<AVX2>(data, (here, next), (f, k), times);
        }
        for gi in 0..groups {
            let group = self.lanes[gi];
            let rotation = group.kind == TrackKind::Rotation;
            let stale = self.stale[gi];
            if stale != 0 {
                // The other stale lanes one at a time: the key at or before `f` (a segment's
                // first frame is always stored), then the next one. A quantized rotation's `w`
                // is rebuilt after, four lanes at once ([`REBUILD_W`] marks it).
                for l in 0..LANES {
                    if stale & (1 << l) == 0 {
                        continue;
                    }
                    let seg = self.slots[here][gi].lane(l);
                    let below = seg.mask & ((2u32 << k) - 1);
                    let above = seg.mask & !((2u32 << k) - 1);
                    let fa = first + (31 - below.leading_zeros());
                    let a = decode_value(data, &seg, below.count_ones() - 1, rotation);
                    let (fb, b) = if f == last {
                        (fa, a)
                    } else if above != 0 {
                        let kb = above.trailing_zeros();
                        (first + kb, decode_value(data, &seg, below.count_ones(), rotation))
                    } else {
                        // The next segment's first frame (always stored).
                        let next = self.slot::<AVX2>(clip, s + 1, here);
                        let nseg = self.slots[next][gi].lane(l);
                        (first + SEGMENT_FRAMES as u32, decode_value(data, &nseg, 0, rotation))
                    };
                    let (ta, tb) =
                        if exact { (clip.frame_time(fa), clip.frame_time(fb)) } else { (0.0, 0.0) };
                    let keys = &mut self.keys[gi];
                    let m = 1 << l;
                    keys.fa = blend_frames(m, [fa; LANES], keys.fa);
                    keys.fb = blend_frames(m, [fb; LANES], keys.fb);
                    (keys.ta[l], keys.tb[l]) = (ta, tb);
                    for c in 0..4 {
                        keys.a[c] = blend(m, Vec4::splat(a[c]), keys.a[c]);
                        keys.b[c] = blend(m, Vec4::splat(b[c]), keys.b[c]);
                    }
                }
                if rotation {
                    // [`with_w`] where `w < 0` (raw rotations keep theirs, always `>= 0`).
                    let keys = &mut self.keys[gi];
                    for ends in [&mut keys.a, &mut keys.b] {
                        let [x, y, z, w] = *ends;
                        ends[3] = Vec4::select(w.cmplt(Vec4::ZERO), w_of(x, y, z), w);
                    }
                }
            }
            let keys = &self.keys[gi];
            let u = parameter(keys, time, p, exact);
            self.u[gi] = u;
            if !rotation {
                let [ax, ay, az, _] = keys.a;
                let [bx, by, bz, _] = keys.b;
                let (x, y, z) = (ax + (bx - ax) * u, ay + (by - ay) * u, az + (bz - az) * u);
                for l in 0..group.len as usize {
                    let v = glam::Vec3::new(x[l], y[l], z[l]);
                    let o = &mut out[group.bone[l] as usize];
                    if group.kind == TrackKind::Translation { o.translation = v } else { o.scale = v }
                }
            }
        }
        // The rotations once every group's keys are in: two groups at a time with AVX (the
        // same bits), in stages so the groups' slerp series overlap; the rest four lanes at a
        // time.
        let rotations = self.rotation_groups;
        #[allow(unused_mut)]
        let mut done = 0;
        #[cfg(target_arch = "x86_64")]
        if AVX2 {
            // SAFETY: `AVX2` is only set by `sample_avx2` (the CPU has AVX2).
            done = unsafe {
                slerp_pairs(&self.keys[..rotations], &self.u[..rotations], &self.lanes[..rotations], out)
            };
        }
        for gi in done..rotations {
            slerp_group(&self.keys[gi], self.u[gi], &self.lanes[gi], out);
        }
    }
}

/// A rotation group's four lanes at `u`, as the sampling job interpolates loose rotations: the
/// far end brought to the near end's hemisphere, slerp weights, renormalized; written to the
/// group's bones.
#[inline(always)]
fn slerp_group(keys: &KeyGroup, u: Vec4, group: &LaneGroup, out: &mut [Transform]) {
    let [ax, ay, az, aw] = keys.a;
    let [bx, by, bz, bw] = keys.b;
    let dot = ((ax * bx + ay * by) + az * bz) + aw * bw;
    let sign = Vec4::select(dot.cmplt(Vec4::ZERO), Vec4::NEG_ONE, Vec4::ONE);
    let (wa, wb) = math::slerp_weights4(u, (dot * sign).min(Vec4::ONE));
    let wb = wb * sign;
    // `renormalize(a * wa + b * wb)` for the four lanes at once: the same products, sums and
    // length (glam's `(x + z) + (y + w)`), lane by lane.
    let (rx, ry, rz, rw) = (ax * wa + bx * wb, ay * wa + by * wb, az * wa + bz * wb, aw * wa + bw * wb);
    let q = math::renormalize4([rx, ry, rz, rw], (rx * rx + rz * rz) + (ry * ry + rw * rw));
    for l in 0..group.len as usize {
        out[group.bone[l] as usize].rotation = q[l];
    }
}

/// Rotation groups two at a time, eight lanes per AVX instruction: [`slerp_group`]'s arithmetic
/// lane by lane (the same operations in the same order, so the same bits), in stages of up to
/// four pairs (the hemisphere tests, then the slerp series, the long chain, then the rest) so
/// the processor overlaps the pairs' chains. Returns how many groups it did (an odd last one is
/// left to [`slerp_group`]).
///
/// # Safety
/// The CPU has AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn slerp_pairs(keys: &[KeyGroup], u: &[Vec4], groups: &[LaneGroup], out: &mut [Transform]) -> usize {
    use crate::compiled_clip::pairs::{columns, hemisphere, renormalize8, slerp_weights8};
    use std::arch::x86_64::*;
    const STAGE: usize = 4;
    let join = |lo: Vec4, hi: Vec4| _mm256_insertf128_ps(_mm256_castps128_ps256(lo.into()), hi.into(), 1);
    let (add, mul) = (|x, y| _mm256_add_ps(x, y), |x, y| _mm256_mul_ps(x, y));
    let zero = _mm256_setzero_ps();
    let pairs = keys.len().min(u.len()).min(groups.len()) / 2;
    let mut start = 0;
    while start < pairs {
        let n = (pairs - start).min(STAGE);
        // Both ends of pair `j` (read again where needed rather than kept: no stage array to
        // clear).
        let ends = |j: usize| -> [[__m256; 4]; 2] {
            let g = 2 * (start + j);
            let (k0, k1) = (&keys[g], &keys[g + 1]);
            [std::array::from_fn(|c| join(k0.a[c], k1.a[c])), std::array::from_fn(|c| join(k0.b[c], k1.b[c]))]
        };
        let mut heads = [(zero, zero); STAGE];
        let mut w = [(zero, zero); STAGE];
        for (j, head) in heads.iter_mut().enumerate().take(n) {
            *head = hemisphere(&ends(j));
        }
        for (j, (w, head)) in w.iter_mut().zip(&heads).enumerate().take(n) {
            let g = 2 * (start + j);
            *w = slerp_weights8(join(u[g], u[g + 1]), head.1);
        }
        for j in 0..n {
            let [a, b] = &ends(j);
            let (sign, (wa, wb)) = (heads[j].0, w[j]);
            let wb = mul(wb, sign);
            let q: [__m256; 4] = std::array::from_fn(|c| add(mul(a[c], wa), mul(b[c], wb)));
            let len2 = add(add(mul(q[0], q[0]), mul(q[2], q[2])), add(mul(q[1], q[1]), mul(q[3], q[3])));
            let q = renormalize8(q, len2);
            let g = 2 * (start + j);
            for (l, v) in columns(q[0], q[1], q[2], q[3]).into_iter().enumerate() {
                let group = &groups[g + l / LANES];
                if l % LANES < group.len as usize {
                    out[group.bone[l % LANES] as usize].rotation = Quat::from_vec4(Vec4::from(v));
                }
            }
        }
        start += n;
    }
    2 * pairs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compressed::CompressOptions;
    use crate::synthetic::{mocap_like_clip, mocap_skeleton};

    /// The context's parse (a group's four tracks as lane columns, their factors computed four
    /// lanes at once) gives every track of every segment the layout the one-track parse gives
    /// (`parse_segment`, what the encoder and `sample_bone` read): the same bits, mask, value
    /// offset and dequantization factors, to the bit.
    #[test]
    fn the_lane_group_parse_gives_each_track_the_one_track_layout() {
        let sk = mocap_skeleton();
        let walk = mocap_like_clip(&sk, "walk", 200, 120.0, 3);
        let (mut seen, mut keyed) = ([false; 3], false);
        let mut clips: Vec<CompressedClip> = [3e-2, 1e-2, 1e-3, 1e-4, 2e-6]
            .map(|tolerance| {
                CompressedClip::compress(&walk, &sk, &CompressOptions::new(tolerance)).unwrap().0
            })
            .into();
        // A clip cooked before the encoder wrote its tracks in the groups' order (bone by bone):
        // the parse walks it track by track.
        let seed = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fuzz/regressions/cooked_clip/sound-walk.clip.bin");
        clips.push(CompressedClip::from_cooked(&std::fs::read(seed).unwrap()).unwrap());
        let mut walks = [0; 2];
        for clip in clips {
            let mut ctx = CompressedContext::new(sk.bone_count());
            ctx.lay_out(&clip);
            walks[usize::from(ctx.scratch.in_file_order)] += 1;
            let n = clip.tracks.len();
            let mut want = vec![SegTrack::default(); n];
            let mut got = vec![SegGroup::default(); ctx.groups];
            for s in 0..clip.segment_count() {
                parse_segment(&clip, s, &mut want);
                parse_groups::<false>(&clip, s, &mut ctx.scratch, &ctx.lanes[..ctx.groups], &mut got);
                #[cfg(target_arch = "x86_64")]
                if crate::simd::avx2() {
                    // The AVX2 build's parse gives every field the same bits.
                    let mut avx2 = vec![SegGroup::default(); ctx.groups];
                    // SAFETY: `simd::avx2()` says the CPU has what the build enables.
                    unsafe {
                        parse_groups_avx2(&clip, s, &mut ctx.scratch, &ctx.lanes[..ctx.groups], &mut avx2)
                    };
                    for (g, (a, b)) in avx2.iter().zip(&got).enumerate() {
                        let f = |v: &[Vec4; 3]| v.map(|c| c.to_array().map(f32::to_bits));
                        assert_eq!(
                            (a.bit, a.stride, a.bits, a.qmask, a.mask, a.uniform, a.first),
                            (b.bit, b.stride, b.bits, b.qmask, b.mask, b.uniform, b.first),
                            "segment {s} group {g}"
                        );
                        assert_eq!(
                            (f(&a.offset), f(&a.scale)),
                            (f(&b.offset), f(&b.scale)),
                            "segment {s} group {g}"
                        );
                    }
                }
                let full = (1u32 << segment_frames(clip.frames, s)) - 1;
                let last = segment_frames(clip.frames, s) - 1;
                for (g, group) in ctx.lanes[..ctx.groups].iter().enumerate() {
                    for l in 0..LANES {
                        let track = group.track[l] as usize;
                        let (w, lane) = (want[track], got[g].lane(l));
                        seen[usize::from(w.bits == 0) + usize::from(w.bits == RAW_BITS) * 2] = true;
                        keyed |= w.mask != full;
                        assert_eq!(
                            (w.bits, w.mask, w.bit),
                            (lane.bits, lane.mask, lane.bit),
                            "segment {s} track {track}"
                        );
                        // The four-lane decode's inputs: stride, mask, and which lanes it reads.
                        let raw = w.bits == RAW_BITS;
                        let stride = value_bits(w.bits);
                        let qmask = if raw { 0 } else { (1u64 << w.bits) - 1 };
                        let fits = |bit: usize| bit / 8 + 8 <= clip.data.len();
                        let uniform = !raw && w.mask == full && fits(w.bit + stride * last);
                        let first = !raw && fits(w.bit);
                        let o = &got[g];
                        assert_eq!(
                            (o.stride[l], o.qmask[l], o.uniform >> l & 1 == 1, o.first >> l & 1 == 1),
                            (stride as u64, qmask, uniform, first),
                            "segment {s} track {track} lane layout"
                        );
                        if w.bits != RAW_BITS {
                            let bits = |v: Vec4| v.to_array().map(f32::to_bits);
                            assert_eq!(bits(w.offset), bits(lane.offset), "segment {s} track {track} offset");
                            assert_eq!(bits(w.scale), bits(lane.scale), "segment {s} track {track} scale");
                        }
                    }
                }
            }
        }
        assert_eq!(seen, [true, true, true], "quantized, zero-bit and raw lanes all seen");
        assert!(keyed, "a keyed lane (a mask of some frames) seen");
        assert_eq!(walks, [1, 5], "the seed walked track by track, the new clips group by group");
    }
}
