//! The cooked clip file (`*.clip.bin`): a [`CompressedClip`] as a game ships it, written by
//! `marrow cook` and read back with one read and no per-key allocation (each table is one
//! allocation, the sample data one more).
//!
//! Layout, every number little-endian:
//!
//! | bytes | what |
//! |---|---|
//! | 8 | magic `MRWCLIP` and `0x1A` |
//! | 4 | version ([`VERSION`]) |
//! | 4 | byte-order mark `0x0A0B0C0D` (a reader that finds it reversed refuses the file) |
//! | 8 | payload length |
//! | 8 | FNV-1a 64 checksum of the payload |
//! | n | payload |
//!
//! Payload: the clip name, the skeleton name, the bone count and each bone name (strings are a
//! `u32` length and UTF-8 bytes); `start`, `rate` (`f32`), `frames` (`u32`), `duration`
//! (`f32`), `looping` (`u8`) and 3 zero bytes; the markers (`u32` count; each a name and an `f32`
//! time inside the clip; from version 2: a version 1 file has none and is still read); the constant tracks (`u32` count; each `u16`
//! bone, `u8` kind, `u8` 0, four `f32`); the animated tracks (`u32` count; each `u16` bone,
//! `u8` kind, `u8` 0, three `f32` minimums, three `f32` extents); the kept frame times (`u32`
//! count; each a `u32` frame and an `f32` time); the segments (`u32` count,
//! then count + 1 `u32` byte offsets into the data); the data (`u32` length, then the bytes).
//!
//! Reading checks everything before it is used: a short file, a wrong magic, byte order,
//! version or checksum, a count whose table would pass the bytes left, a bone or kind out of
//! range, a non-finite number, a segment whose headers or values pass its bytes: each is a
//! named [`CookedError`] with the byte offset, never a panic and never an allocation past the
//! file's own size. A clip that loads samples finite values.

use crate::clip::Marker;

use super::decode::{header_bytes, read_bits, segment_frames, value_bits};
use super::{
    AnimatedTrack, CompressedClip, ConstantTrack, DATA_PADDING, KEYED_FLAG, MAX_FRAMES, RAW_BITS,
    SEGMENT_FRAMES, TrackKind,
};

/// The file's first 8 bytes.
pub const MAGIC: [u8; 8] = *b"MRWCLIP\x1a";

/// The version this build writes; it reads this one and version 1 (written before markers were
/// kept: read with none).
pub const VERSION: u32 = 2;

/// The byte-order mark, as written.
const BYTE_ORDER: u32 = 0x0A0B_0C0D;

/// Bytes before the payload.
const HEADER: usize = 32;

/// Why a cooked clip file was refused. Offsets are bytes from the start of the file.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CookedError {
    /// The file ends before what it declares.
    #[error("cooked clip: {what} at byte {at} needs {needed} bytes; the file has {left} left")]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Where.
        at: usize,
        /// Bytes it needs.
        needed: u64,
        /// Bytes left.
        left: usize,
    },
    /// Not a cooked clip file.
    #[error("cooked clip: not a cooked clip file (magic {found:02x?}, expected {MAGIC:02x?})")]
    Magic {
        /// The first bytes found.
        found: Vec<u8>,
    },
    /// Written by another version.
    #[error("cooked clip: version {found}; this build reads version {VERSION} (cook the project again)")]
    Version {
        /// The file's version.
        found: u32,
    },
    /// Written in the other byte order.
    #[error(
        "cooked clip: byte-order mark {found:#010x}, expected {BYTE_ORDER:#010x}: written for another byte order"
    )]
    ByteOrder {
        /// The mark as read.
        found: u32,
    },
    /// The payload is damaged.
    #[error("cooked clip: checksum {found:#018x} of the payload does not match the stored {stored:#018x}")]
    Checksum {
        /// The stored checksum.
        stored: u64,
        /// The payload's.
        found: u64,
    },
    /// A value that cannot be.
    #[error("cooked clip: {what} at byte {at}: {why}")]
    Invalid {
        /// What.
        what: &'static str,
        /// Where (the payload byte it was read from, or the segment's).
        at: usize,
        /// Why it is refused.
        why: String,
    },
}

/// FNV-1a, 64 bits.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    h
}

impl CompressedClip {
    /// The cooked file's bytes (see the module docs).
    pub fn to_cooked(&self) -> Vec<u8> {
        let mut p = Vec::with_capacity(self.data.len() + 256);
        let put_str = |p: &mut Vec<u8>, s: &str| {
            p.extend_from_slice(&(s.len() as u32).to_le_bytes());
            p.extend_from_slice(s.as_bytes());
        };
        put_str(&mut p, &self.name);
        put_str(&mut p, &self.skeleton);
        p.extend_from_slice(&(self.bone_names.len() as u32).to_le_bytes());
        for b in &self.bone_names {
            put_str(&mut p, b);
        }
        for x in [self.start.to_bits(), self.rate.to_bits(), self.frames, self.duration.to_bits()] {
            p.extend_from_slice(&x.to_le_bytes());
        }
        p.extend_from_slice(&[self.looping as u8, 0, 0, 0]);
        p.extend_from_slice(&(self.markers.len() as u32).to_le_bytes());
        for m in &self.markers {
            put_str(&mut p, &m.name);
            p.extend_from_slice(&m.time.to_le_bytes());
        }
        p.extend_from_slice(&(self.constants.len() as u32).to_le_bytes());
        for c in &self.constants {
            p.extend_from_slice(&c.bone.to_le_bytes());
            p.extend_from_slice(&[c.kind as u8, 0]);
            for v in c.value {
                p.extend_from_slice(&v.to_le_bytes());
            }
        }
        p.extend_from_slice(&(self.tracks.len() as u32).to_le_bytes());
        for t in &self.tracks {
            p.extend_from_slice(&t.bone.to_le_bytes());
            p.extend_from_slice(&[t.kind as u8, 0]);
            for v in t.min.iter().chain(&t.extent) {
                p.extend_from_slice(&v.to_le_bytes());
            }
        }
        p.extend_from_slice(&(self.frame_times.len() as u32).to_le_bytes());
        for (f, t) in &self.frame_times {
            p.extend_from_slice(&f.to_le_bytes());
            p.extend_from_slice(&t.to_le_bytes());
        }
        p.extend_from_slice(&(self.segment_count() as u32).to_le_bytes());
        for o in &self.segment_offsets {
            p.extend_from_slice(&o.to_le_bytes());
        }
        let data = &self.data[..self.data.len() - DATA_PADDING];
        p.extend_from_slice(&(data.len() as u32).to_le_bytes());
        p.extend_from_slice(data);
        let mut out = Vec::with_capacity(HEADER + p.len());
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&BYTE_ORDER.to_le_bytes());
        out.extend_from_slice(&(p.len() as u64).to_le_bytes());
        out.extend_from_slice(&fnv1a(&p).to_le_bytes());
        out.extend_from_slice(&p);
        out
    }

    /// Reads a cooked file's bytes, checking everything (see the module docs).
    pub fn from_cooked(bytes: &[u8]) -> Result<CompressedClip, CookedError> {
        if bytes.len() < 8 || bytes[..8] != MAGIC {
            if bytes.len() < 8 && MAGIC.starts_with(bytes) {
                return Err(CookedError::Truncated {
                    what: "header",
                    at: 0,
                    needed: HEADER as u64,
                    left: bytes.len(),
                });
            }
            return Err(CookedError::Magic { found: bytes[..bytes.len().min(8)].to_vec() });
        }
        if bytes.len() < HEADER {
            return Err(CookedError::Truncated {
                what: "header",
                at: 0,
                needed: HEADER as u64,
                left: bytes.len(),
            });
        }
        let u32_at = |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        let version = u32_at(8);
        let order = u32_at(12);
        if order != BYTE_ORDER {
            return Err(CookedError::ByteOrder { found: order });
        }
        if !(1..=VERSION).contains(&version) {
            return Err(CookedError::Version { found: version });
        }
        let len = u64_at(16);
        let payload = &bytes[HEADER..];
        if len > payload.len() as u64 {
            return Err(CookedError::Truncated {
                what: "payload",
                at: HEADER,
                needed: len,
                left: payload.len(),
            });
        }
        if len < payload.len() as u64 {
            return Err(CookedError::Invalid {
                what: "payload length",
                at: 16,
                why: format!("{len} bytes declared, {} follow the header", payload.len()),
            });
        }
        let stored = u64_at(24);
        let found = fnv1a(payload);
        if stored != found {
            return Err(CookedError::Checksum { stored, found });
        }
        let mut r = Reader { bytes: payload, at: 0, version };
        let clip = r.clip()?;
        validate(&clip)?;
        Ok(clip)
    }
}

/// Reads the payload; offsets in errors are file offsets.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    /// The file's version (1 has no markers).
    version: u32,
}

impl<'a> Reader<'a> {
    fn take(&mut self, what: &'static str, n: u64) -> Result<&'a [u8], CookedError> {
        let left = self.bytes.len() - self.at;
        if n > left as u64 {
            return Err(CookedError::Truncated { what, at: HEADER + self.at, needed: n, left });
        }
        let out = &self.bytes[self.at..self.at + n as usize];
        self.at += n as usize;
        Ok(out)
    }
    fn u32(&mut self, what: &'static str) -> Result<u32, CookedError> {
        let b = self.take(what, 4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn f32(&mut self, what: &'static str) -> Result<f32, CookedError> {
        let at = HEADER + self.at;
        let v = f32::from_bits(self.u32(what)?);
        if !v.is_finite() {
            return Err(CookedError::Invalid { what, at, why: format!("{v} is not finite") });
        }
        Ok(v)
    }
    fn string(&mut self, what: &'static str) -> Result<String, CookedError> {
        let n = self.u32(what)?;
        let at = HEADER + self.at;
        let b = self.take(what, n as u64)?;
        String::from_utf8(b.to_vec()).map_err(|e| CookedError::Invalid { what, at, why: e.to_string() })
    }
    /// A table's count, refused when `count * each` passes the bytes left.
    fn count(&mut self, what: &'static str, each: u64) -> Result<usize, CookedError> {
        let n = self.u32(what)?;
        let left = self.bytes.len() - self.at;
        let needed = n as u64 * each;
        if needed > left as u64 {
            return Err(CookedError::Truncated { what, at: HEADER + self.at, needed, left });
        }
        Ok(n as usize)
    }
    fn kind(&mut self, what: &'static str) -> Result<(u16, TrackKind), CookedError> {
        let at = HEADER + self.at;
        let b = self.take(what, 4)?;
        let bone = u16::from_le_bytes([b[0], b[1]]);
        let kind = TrackKind::from_code(b[2]).ok_or_else(|| CookedError::Invalid {
            what,
            at: at + 2,
            why: format!("track kind {} (0, 1 or 2)", b[2]),
        })?;
        Ok((bone, kind))
    }

    fn clip(&mut self) -> Result<CompressedClip, CookedError> {
        let name = self.string("clip name")?;
        let skeleton = self.string("skeleton name")?;
        let bones = self.count("bone names", 4)?;
        let mut bone_names = Vec::new();
        for _ in 0..bones {
            bone_names.push(self.string("bone name")?);
        }
        let start = self.f32("start")?;
        let rate = self.f32("rate")?;
        let frames_at = HEADER + self.at;
        let frames = self.u32("frames")?;
        let duration = self.f32("duration")?;
        let flags = self.take("flags", 4)?;
        let looping = flags[0] != 0;
        if !(1..=MAX_FRAMES as u32).contains(&frames) {
            return Err(CookedError::Invalid {
                what: "frames",
                at: frames_at,
                why: format!("{frames} frames (1 to {MAX_FRAMES})"),
            });
        }
        let mut markers = Vec::new();
        if self.version >= 2 {
            let n = self.count("markers", 8)?;
            markers.reserve(n);
            for _ in 0..n {
                let name = self.string("marker name")?;
                let at = HEADER + self.at;
                let time = self.f32("marker time")?;
                if !(time >= 0.0 && time <= duration)
                    || markers.last().is_some_and(|m: &Marker| m.time > time)
                {
                    return Err(CookedError::Invalid {
                        what: "marker time",
                        at,
                        why: format!("{time} s: markers lie in order inside the clip (0 to {duration} s)"),
                    });
                }
                markers.push(Marker { name, time });
            }
        }
        let n = self.count("constant tracks", 20)?;
        let mut constants = Vec::with_capacity(n);
        for _ in 0..n {
            let (bone, kind) = self.kind("constant track")?;
            let mut value = [0.0; 4];
            for v in &mut value {
                *v = self.f32("constant value")?;
            }
            constants.push(ConstantTrack { bone, kind, value });
        }
        let n = self.count("animated tracks", 28)?;
        let mut tracks = Vec::with_capacity(n);
        for _ in 0..n {
            let (bone, kind) = self.kind("animated track")?;
            let (mut min, mut extent) = ([0.0; 3], [0.0; 3]);
            for v in min.iter_mut().chain(extent.iter_mut()) {
                *v = self.f32("track range")?;
            }
            tracks.push(AnimatedTrack { bone, kind, min, extent });
        }
        let n = self.count("frame times", 8)?;
        let mut frame_times = Vec::with_capacity(n);
        for _ in 0..n {
            let f = self.u32("frame time")?;
            frame_times.push((f, self.f32("frame time")?));
        }
        let segments_at = HEADER + self.at;
        let segments = self.count("segments", 4)?;
        if segments != (frames as usize).div_ceil(SEGMENT_FRAMES) {
            return Err(CookedError::Invalid {
                what: "segments",
                at: segments_at,
                why: format!("{segments} segments for {frames} frames of {SEGMENT_FRAMES}"),
            });
        }
        let table = self.take("segment offsets", (segments as u64 + 1) * 4)?;
        let segment_offsets: Vec<u32> =
            table.chunks_exact(4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        let len = self.count("data", 1)?;
        let raw = self.take("data", len as u64)?;
        if self.at != self.bytes.len() {
            return Err(CookedError::Invalid {
                what: "payload",
                at: HEADER + self.at,
                why: format!("{} bytes after the data", self.bytes.len() - self.at),
            });
        }
        let mut data = Vec::with_capacity(len + DATA_PADDING);
        data.extend_from_slice(raw);
        data.extend_from_slice(&[0; DATA_PADDING]);
        Ok(CompressedClip {
            name,
            skeleton,
            bone_names,
            start,
            rate,
            frames,
            duration,
            looping,
            markers,
            constants,
            tracks,
            frame_times,
            segment_offsets,
            data,
            id: CompressedClip::next_id(),
        })
    }
}

/// Every check that keeps sampling inside the data and finite (offsets here are into the data).
fn validate(clip: &CompressedClip) -> Result<(), CookedError> {
    let bad = |what: &'static str, at: usize, why: String| Err(CookedError::Invalid { what, at, why });
    if !(clip.rate > 0.0) || clip.duration < 0.0 {
        return bad(
            "rate",
            0,
            format!("rate {} and duration {} (a rate > 0, a duration >= 0)", clip.rate, clip.duration),
        );
    }
    // Kept frame times: frames in order inside the clip, every frame's time after the one before.
    let mut last = None;
    for &(f, _) in &clip.frame_times {
        if f >= clip.frames || last.is_some_and(|l| f <= l) {
            return bad("frame times", 0, format!("frame {f} (of {}) out of order or range", clip.frames));
        }
        last = Some(f);
        for g in [f.checked_sub(1), Some(f)].into_iter().flatten() {
            if g + 1 < clip.frames && !(clip.frame_time(g) < clip.frame_time(g + 1)) {
                return bad("frame times", 0, format!("frame {} is not after frame {g}", g + 1));
            }
        }
    }
    let bones = clip.bone_names.len();
    // At most one track of each kind per bone (the sampling context holds three per bone).
    let mut seen = vec![false; 3 * bones];
    for (bone, kind) in
        clip.constants.iter().map(|c| (c.bone, c.kind)).chain(clip.tracks.iter().map(|t| (t.bone, t.kind)))
    {
        let Some(slot) = seen.get_mut(3 * bone as usize + kind as usize) else {
            return bad("track", 0, format!("{} of bone {bone}; the clip has {bones} bones", kind.name()));
        };
        if std::mem::replace(slot, true) {
            return bad("track", 0, format!("a second {} track for bone {bone}", kind.name()));
        }
    }
    for c in &clip.constants {
        if c.bone as usize >= bones {
            return bad("constant track", 0, format!("bone {} of {bones}", c.bone));
        }
        if c.kind == TrackKind::Rotation {
            let len = c.value.iter().map(|v| v * v).sum::<f32>().sqrt();
            if !((len - 1.0).abs() < 1e-3) {
                return bad("constant track", 0, format!("rotation of length {len}, not a unit quaternion"));
            }
        }
    }
    for t in &clip.tracks {
        if t.bone as usize >= bones {
            return bad("animated track", 0, format!("bone {} of {bones}", t.bone));
        }
        for c in 0..3 {
            let max = t.min[c] + t.extent[c];
            let unit = t.kind != TrackKind::Rotation || (t.min[c] >= -1.001 && max <= 1.001);
            if !(t.extent[c] >= 0.0 && max.is_finite() && unit) {
                return bad(
                    "track range",
                    0,
                    format!("{} minimum {} and extent {}", t.kind.name(), t.min[c], t.extent[c]),
                );
            }
        }
    }
    let data_len = clip.data.len() - DATA_PADDING;
    let offsets = &clip.segment_offsets;
    if offsets.first() != Some(&0)
        || offsets.last().map(|&o| o as usize) != Some(data_len)
        || offsets.windows(2).any(|w| w[1] < w[0])
    {
        return bad(
            "segment offsets",
            0,
            format!("must start at 0, never decrease and end at the data's {data_len} bytes"),
        );
    }
    for s in 0..clip.segment_count() {
        let (from, to) = (offsets[s] as usize, offsets[s + 1] as usize);
        let frames = segment_frames(clip.frames, s);
        let full = (1u32 << frames) - 1;
        let mut at = from;
        let mut bits = 0usize;
        let mut raws = Vec::new();
        for track in &clip.tracks {
            let Some(&header) = clip.data[..to].get(at) else {
                return bad("segment header", at, format!("segment {s}'s headers pass its end at {to}"));
            };
            let rate = header & !KEYED_FLAG;
            if !(rate <= 16 || rate == RAW_BITS) {
                return bad(
                    "segment header",
                    at,
                    format!("bit rate {rate} (0 to 16, or {RAW_BITS} for raw)"),
                );
            }
            if at + header_bytes(header) > to {
                return bad("segment header", at, format!("segment {s}'s headers pass its end at {to}"));
            }
            let mask = if header & KEYED_FLAG != 0 {
                let p = at + header_bytes(header) - 2;
                let m = u16::from_le_bytes([clip.data[p], clip.data[p + 1]]) as u32;
                let last_needed = s + 1 == clip.segment_count();
                if m & 1 == 0 || m & !full != 0 || (last_needed && m & (1 << (frames - 1)) == 0) {
                    return bad(
                        "key mask",
                        p,
                        format!(
                            "{m:#06x} for {frames} frames (the first must be set, and the last of the clip)"
                        ),
                    );
                }
                m
            } else {
                full
            };
            if rate == RAW_BITS {
                raws.push((bits, mask.count_ones() as usize, track.kind));
            }
            bits += mask.count_ones() as usize * value_bits(rate);
            at += header_bytes(header);
        }
        if at * 8 + bits > to * 8 {
            return bad(
                "segment values",
                at,
                format!("segment {s} needs {bits} bits of values; it has {} bytes", to - at),
            );
        }
        for (first, count, kind) in raws {
            for k in 0..count {
                let bit = at * 8 + first + 128 * k;
                let v: [f32; 4] =
                    std::array::from_fn(|c| f32::from_bits(read_bits(&clip.data, bit + 32 * c, 32)));
                let len = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                if !v.iter().all(|x| x.is_finite())
                    || (kind == TrackKind::Rotation && !((len - 1.0).abs() < 1e-3))
                {
                    return bad(
                        "raw value",
                        bit / 8,
                        format!("{} {v:?} is not finite or not a unit rotation", kind.name()),
                    );
                }
            }
        }
    }
    Ok(())
}
