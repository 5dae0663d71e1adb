//! The compressed runtime form of a clip: what a game ships when memory matters more than the
//! last bit of precision, built to a stated error ([`CompressedClip::compress`]) and sampled by
//! [`CompressedSamplingJob`]; [`cooked`] reads and writes it as a `*.clip.bin` file.
//!
//! It is the third precision beside the compiled clip's full and compact key blocks
//! ([`crate::compiled_clip::Precision`]): those keep every key (compact halves the bytes at a
//! fixed precision); this one keeps what a **shell-error tolerance** needs, measured as the
//! Animation Compression Library (ACL) measures it and as key reduction does
//! ([`crate::simplify`]): for every bone, its origin and three virtual vertices at the shell
//! distance (3 cm by default) along its local axes, placed in model space by the original clip
//! and by the compressed one; the error is the largest distance between the two placements,
//! over every bone, at every frame of the clip's rate, three times between each two frames (four
//! times the rate), and every key time of the original with three times between its keys.
//!
//! **How it is stored** (ACL's approach, with ozz-animation's key stripping where it is smaller):
//! - The clip is sampled on a uniform grid of frames at its rate (the rate its keys are on: a
//!   120 Hz capture keeps its 120 Hz frames exactly; see [`CompressOptions`]). A few keys
//!   between the frames (a frame's keys pasted at a playhead, dragged with snapping off) do not
//!   change the rate: each gives its nearest frame its own time, which the clip keeps
//!   ([`CompressedClip::frame_time`]).
//! - A track (translation, rotation or scale of one bone) that stays within its error budget of
//!   the bind pose is a **default** track and stores nothing; one that stays within it of one
//!   value is a **constant** track, stored once as full floats.
//! - Every other track is **animated**: its range (per component minimum and extent over the
//!   clip) is stored once as floats, and the frames are cut into segments of
//!   [`SEGMENT_FRAMES`]. Per segment, each animated track has a one-byte header (its bit rate:
//!   0, 1 to 16 bits per component, or raw floats) and its range within the clip's range (8 bits
//!   per component for the minimum and the extent: ACL's segment range reduction). A track's
//!   segment is **uniform** (every frame stored) or **keyed** (a 16-bit mask of which frames
//!   are keys, the segment's first always; the keys between come from Ramer-Douglas-Peucker over
//!   the frames): whichever is smaller for that track and segment. Rotations are stored as the
//!   `x, y, z` of the quaternion with `w >= 0`; `w` is rebuilt on decode.
//! - The bit rate of each track and segment is the smallest that keeps the track within its
//!   error budget (a translation within the bone's budget, a rotation within it over the bone's
//!   lever arm); the budgets start at half the tolerance and the whole clip is then **measured
//!   down the hierarchy** with the decoder itself; where a bone's shell error passes the tolerance,
//!   the budgets of that bone and its ancestors in that segment are tightened and the clip is
//!   encoded again (at most [`MAX_PASSES`] times; then every segment raw). The reported worst
//!   error is therefore the decoder's true worst error at the measured times, and never over the
//!   tolerance: a clip that cannot meet it even raw (its keys are off any grid up to
//!   [`MAX_RATE`]) is refused with a named error.
//!
//! **How it is sampled**: [`CompressedSamplingJob`] reads borrowed data and writes a `&mut`
//! slice of local transforms; its [`CompressedContext`] (one per playing head) keeps the two
//! segments around the playhead parsed (bit offsets and dequantization factors per track) and
//! each track's two decoded keys, so forward playback decodes only the keys it passes and
//! parses each segment once; a random seek parses at most two segments (found by a per-segment
//! offset table, no search) and decodes two keys per track: the same work as the forward sample
//! that enters a segment. Nothing is allocated per sample. The context lays a clip's animated
//! tracks out in groups of four of one kind (rotations first), each field a four-lane column:
//! the tracks a segment stores at every frame are decoded four at a time, every group's in one
//! pass, the others (keyed or raw in the segment, or keys across a segment's end) one at a
//! time; then translations and scales are interpolated four lanes at a time and, once every
//! group's keys are in, the rotations. The decoder is one piece of code built twice: for the
//! target's baseline (a group's uniform tracks read one at a time, scalar bit reads; rotations
//! four lanes at a time), and at the `avx2` SIMD level and above for AVX2 with the bit-counting
//! instructions (a group's four values read by one gather and decoded by lane shifts and masks;
//! rotations two groups at a time, eight lanes per instruction, in stages); the same operations
//! on every value in the same order, so every level samples the same bits (tested against each
//! other, seen failing on a one-ulp change).
//!
//! It is derived and never edited: the editor keeps editing the authored clip, and `marrow cook`
//! writes this form for every clip of a project. Players (the Animator, graphs, crowds) play it
//! through a [`crate::clip::Clip`] that carries it: [`crate::clip::Clip::compress`] attaches it
//! to an authored clip, [`crate::clip::Clip::from_compressed`] makes a clip of a loaded cooked
//! file (with its markers); [`crate::pose::SamplingJob`] then decodes it, and root motion reads
//! its root through [`CompressedClip::sample_bone`]. It does not blend, loop or decide times
//! (see [`crate::pose`] and [`crate::animator`]).

mod decode;
mod encode;
#[cfg(test)]
mod tests;

pub mod cooked;

use crate::math::Transform;
use crate::pose::JobError;

pub use decode::CompressedContext;
pub use encode::{CompressError, CompressOptions, CompressReport};

/// Frames per segment: a keyed segment's mask is 16 bits.
pub const SEGMENT_FRAMES: usize = 16;

/// At most this many encodings run, each with tighter budgets where the last one's measurement
/// found an error over the tolerance.
pub const MAX_PASSES: usize = 32;

/// The highest sampling rate a clip is compressed at (Hz): a clip whose keys need a finer grid
/// to meet its tolerance is refused.
pub const MAX_RATE: f32 = 960.0;

/// The most frames a compressed clip holds (a clip that would need more is refused).
pub const MAX_FRAMES: usize = 1 << 22;

/// Segment header bit rate that means raw `f32` components.
pub(crate) const RAW_BITS: u8 = 31;

/// Segment header flag: the segment is keyed (a frame mask follows the range).
pub(crate) const KEYED_FLAG: u8 = 0x80;

/// Which part of a bone's local transform a track drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum TrackKind {
    /// Translation (`x, y, z`).
    Translation = 0,
    /// Rotation (a unit quaternion; stored as `x, y, z` with `w >= 0`).
    Rotation = 1,
    /// Scale (`x, y, z`).
    Scale = 2,
}

impl TrackKind {
    /// The kind with this file code (0, 1 or 2).
    pub fn from_code(code: u8) -> Option<TrackKind> {
        match code {
            0 => Some(TrackKind::Translation),
            1 => Some(TrackKind::Rotation),
            2 => Some(TrackKind::Scale),
            _ => None,
        }
    }

    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            TrackKind::Translation => "translation",
            TrackKind::Rotation => "rotation",
            TrackKind::Scale => "scale",
        }
    }
}

/// A track stored once: every sample takes `value` (`x, y, z`, and `w` for a rotation).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConstantTrack {
    /// The bone.
    pub bone: u16,
    /// What it drives.
    pub kind: TrackKind,
    /// The value (`x, y, z, w`; `w` unused for a translation or a scale).
    pub value: [f32; 4],
}

/// An animated track: its per-component range over the clip; its samples live in the segments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AnimatedTrack {
    /// The bone.
    pub bone: u16,
    /// What it drives.
    pub kind: TrackKind,
    /// Per component (`x, y, z`) minimum over the clip.
    pub min: [f32; 3],
    /// Per component extent (maximum minus minimum) over the clip.
    pub extent: [f32; 3],
}

/// A clip in its compressed runtime form. See the module docs.
#[derive(Clone, Debug, PartialEq)]
pub struct CompressedClip {
    /// The clip's name.
    pub name: String,
    /// The name of the skeleton it was compressed for.
    pub skeleton: String,
    /// That skeleton's bone names, in bone order (what a runtime checks a rig against).
    pub bone_names: Vec<String>,
    /// The first frame's time (seconds).
    pub(crate) start: f32,
    /// Frames per second of the grid.
    pub(crate) rate: f32,
    /// Frames on the grid (at least 1).
    pub(crate) frames: u32,
    /// The clip's duration (seconds; `max(last key, length)` of the original).
    pub(crate) duration: f32,
    /// Whether the original loops (for players).
    pub looping: bool,
    /// The original's markers, sorted by time: what a player announces as events (footsteps).
    pub markers: Vec<crate::clip::Marker>,
    /// Frames whose time is not the grid's (`start + frame / rate`): a key of the original off
    /// the grid by more than rounding keeps its exact time (frame, time; sorted by frame).
    pub(crate) frame_times: Vec<(u32, f32)>,
    pub(crate) constants: Vec<ConstantTrack>,
    pub(crate) tracks: Vec<AnimatedTrack>,
    /// The byte offset of each segment in `data`, and the end of the last (`segments + 1`
    /// entries).
    pub(crate) segment_offsets: Vec<u32>,
    /// The segments, then [`DATA_PADDING`] zero bytes (so a bit read may load 8 bytes).
    pub(crate) data: Vec<u8>,
    /// Identifies this form to the sampling contexts (unique per build or load).
    pub(crate) id: u64,
}

/// Zero bytes after the last segment: the bit reader loads 8 bytes at a time.
pub(crate) const DATA_PADDING: usize = 8;

impl CompressedClip {
    /// Bones the clip is for.
    pub fn bone_count(&self) -> usize {
        self.bone_names.len()
    }

    /// The grid's rate (frames per second).
    pub fn rate(&self) -> f32 {
        self.rate
    }

    /// Frames on the grid.
    pub fn frame_count(&self) -> usize {
        self.frames as usize
    }

    /// The time of the grid's first frame (seconds).
    pub fn start(&self) -> f32 {
        self.start
    }

    /// The clip's duration (seconds).
    pub fn duration(&self) -> f32 {
        self.duration
    }

    /// The time of frame `f`: its kept key time, or the grid's.
    #[inline]
    pub fn frame_time(&self, f: u32) -> f32 {
        match self.frame_times.binary_search_by_key(&f, |&(g, _)| g) {
            Ok(i) => self.frame_times[i].1,
            Err(_) => self.start + f as f32 / self.rate,
        }
    }

    /// The constant tracks.
    pub fn constant_tracks(&self) -> &[ConstantTrack] {
        &self.constants
    }

    /// The animated tracks.
    pub fn animated_tracks(&self) -> &[AnimatedTrack] {
        &self.tracks
    }

    /// Segments on the grid.
    pub fn segment_count(&self) -> usize {
        self.segment_offsets.len().saturating_sub(1)
    }

    /// Bytes of the runtime form: the sample data (padding included) and every table (names not
    /// counted).
    pub fn bytes(&self) -> usize {
        self.data.len()
            + self.segment_offsets.len() * 4
            + self.frame_times.len() * 8
            + self.constants.len() * std::mem::size_of::<ConstantTrack>()
            + self.tracks.len() * std::mem::size_of::<AnimatedTrack>()
            + std::mem::size_of::<Self>()
    }

    /// A fresh identity for a built or loaded form.
    pub(crate) fn next_id() -> u64 {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(1);
        NEXT.fetch_add(1, Ordering::Relaxed)
    }
}

/// Samples a [`CompressedClip`] at a time into local transforms: bones without an animated or
/// constant track take the bind pose. Times before the first frame hold it, times after the last
/// hold the last.
pub struct CompressedSamplingJob<'a> {
    /// The clip.
    pub clip: &'a CompressedClip,
    /// The skeleton's bind pose (one entry per bone of the clip).
    pub bind_pose: &'a [Transform],
    /// Time in seconds.
    pub time: f32,
    /// The playing head's cache (see [`CompressedContext`]).
    pub context: &'a mut CompressedContext,
    /// Output local transforms (at least one per bone).
    pub output: &'a mut [Transform],
}

impl CompressedSamplingJob<'_> {
    /// Checks that the inputs fit together, naming the first that does not.
    pub fn validate(&self) -> Result<(), JobError> {
        let n = self.clip.bone_count();
        crate::pose::check_in("compressed sampling job", "bind_pose", n, self.bind_pose.len())?;
        crate::pose::check_out("compressed sampling job", "output", n, self.output.len())?;
        if self.context.max_bones() < n {
            return Err(JobError::ContextTooSmall {
                clip: self.clip.name.clone(),
                bones: n,
                capacity: self.context.max_bones(),
            });
        }
        if !self.time.is_finite() {
            return Err(JobError::NonFiniteTime(self.time));
        }
        Ok(())
    }

    /// Validates, then samples (allocating nothing).
    pub fn run(self) -> Result<(), JobError> {
        self.validate()?;
        let n = self.clip.bone_count();
        self.context.sample(self.clip, &self.bind_pose[..n], self.time, &mut self.output[..n]);
        Ok(())
    }
}
