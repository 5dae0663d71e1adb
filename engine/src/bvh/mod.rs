//! BVH (Biovision hierarchy) motion-capture import: the hierarchy as a skeleton, the motion as a
//! clip, and a generated stick mesh so the result can be seen, all in the [`ImportedScene`]
//! shape glTF import produces (one rig, one animation holding one clip, one skinned mesh), so
//! every command that takes a model takes a `.bvh` through the same path.
//!
//! The grammar (`parse.rs`, our own: the maintained crates neither locate every fault nor bound
//! what a file may make them allocate): `HIERARCHY`, one or more `ROOT name { ... }` blocks
//! holding `OFFSET x y z`, an optional `CHANNELS n names...` (any subset of `Xposition`,
//! `Yposition`, `Zposition`, `Xrotation`, `Yrotation`, `Zrotation` in any order), nested
//! `JOINT name { ... }` and `End Site { OFFSET x y z }` blocks; then `MOTION`, `Frames: n`,
//! `Frame Time: t` and `n` lines of exactly as many numbers as the hierarchy declares channels.
//!
//! What the numbers mean, as the Biovision definition (and every exporter since) has it:
//! - A joint's local transform is `T * R`, where `T` translates by its `OFFSET` (or, for the
//!   axes it has position channels for, by those values instead: positions replace the offset)
//!   and `R` is the product of its rotation channels' axis rotations **in the order the channels
//!   are declared**, angles in degrees: `Zrotation Xrotation Yrotation` is `R = Rz * Rx * Ry`
//!   (column vectors, so `Ry` is applied to a point first). Any of the six orders, or a subset,
//!   is read that way; missing axes do not rotate.
//! - Frame `i` (0-based) is keyed at `i * frame_time` seconds, LINEAR; the clip's frame rate
//!   is `1 / frame_time` rounded as [`crate::frame_rate::standard_rate`] does.
//! - Lengths are scaled by [`BvhOptions::scale`]. BVH states no unit (CMU's files are in
//!   inches-times-something, others centimetres), so the default is 1.0: values as written.
//! - An `End Site` becomes a leaf bone named `PARENT_end` ([`EndSites::Bones`], the default:
//!   it gives the last segment of every chain its length) or is dropped ([`EndSites::Drop`]).
//! - The stick mesh: per bone with a parent and a non-zero offset, a thin box from the parent's
//!   origin to the bone's, skinned rigidly to the parent (the bone whose frame it is fixed in).
//!
//! Bounded cost: at most [`MAX_JOINTS`] blocks, nested at most [`MAX_DEPTH`] deep, at most
//! [`MAX_VALUES`] numbers of motion making at most [`MAX_KEYS`] keys, lengths within [`MAX_COORD`]; the declared frame count is
//! checked against that budget and against the bytes the file has left before anything is
//! allocated from it. Every fault is a [`BvhError`] naming the file, `line:col` and what.
//!
//! Not here: writing BVH, retargeting onto another skeleton, scale channels (BVH has none),
//! guessing units, and any frame count but the one declared (a file with more or fewer frames
//! than its header says is refused, not trimmed).

mod build;
mod parse;

use std::path::{Path, PathBuf};

use crate::gltf::ImportedScene;
use crate::skeleton::SkeletonFault;
use crate::track::TrackFault;

/// The most `ROOT`, `JOINT` and `End Site` blocks a file may hold (a skeleton's bone limit).
pub const MAX_JOINTS: usize = crate::skeleton::MAX_BONES;

/// The deepest a block may be nested (a root is at depth 1).
pub const MAX_DEPTH: usize = 256;

/// The most motion values (frames times channels) a file may hold: 2^24, 64 MiB as `f32`
/// (a 31-joint, 96-channel capture of about 48 minutes at 60 Hz).
pub const MAX_VALUES: usize = 1 << 24;

/// The most keys the clip may get (frames times tracks: one rotation track per joint with
/// rotation channels, one translation track per joint with position channels): 2^23, about
/// 170 MB as quaternions and times (a 31-joint capture of about 36 minutes at 120 Hz).
pub const MAX_KEYS: usize = 1 << 23;

/// The largest length (after scaling) an offset or position may have.
pub const MAX_COORD: f64 = 1.0e6;

/// The largest file read, in bytes.
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// What becomes of `End Site` blocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EndSites {
    /// Each becomes a leaf bone named `PARENT_end`, at its offset.
    #[default]
    Bones,
    /// They are left out.
    Drop,
}

/// How a BVH file is turned into a scene.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BvhOptions {
    /// Every offset and position is multiplied by this (finite, positive); 1.0: as written.
    pub scale: f32,
    /// What becomes of `End Site` blocks.
    pub end_sites: EndSites,
}

impl Default for BvhOptions {
    fn default() -> Self {
        Self { scale: 1.0, end_sites: EndSites::Bones }
    }
}

/// A place in a BVH file: 1-based line and column (in characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    /// Line.
    pub line: usize,
    /// Column.
    pub col: usize,
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// Why a BVH file cannot be imported.
#[derive(Debug, thiserror::Error)]
pub enum BvhError {
    /// The file could not be read.
    #[error("{}: cannot read the file: {source}", file.display())]
    Io {
        /// The file.
        file: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The options cannot be used.
    #[error("{}: scale {scale} is not a finite positive number", file.display())]
    BadScale {
        /// The file.
        file: PathBuf,
        /// The scale given.
        scale: f32,
    },
    /// The file is not valid BVH, or asks for more than the budgets allow.
    #[error("{}:{at}: {fault}", file.display())]
    Invalid {
        /// The file.
        file: PathBuf,
        /// Where.
        at: Position,
        /// What.
        fault: BvhFault,
    },
}

impl BvhError {
    /// The fault and its position, for an [`BvhError::Invalid`].
    pub fn fault(&self) -> Option<(Position, &BvhFault)> {
        match self {
            BvhError::Invalid { at, fault, .. } => Some((*at, fault)),
            _ => None,
        }
    }
}

/// What is wrong at a place in a BVH file.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BvhFault {
    /// The bytes are not UTF-8 text.
    #[error("not UTF-8 text (byte {byte:#04x} cannot start or continue a character)")]
    NotText {
        /// The first bad byte.
        byte: u8,
    },
    /// A token other than the grammar allows here.
    #[error("expected {expected}, found {found}")]
    Expected {
        /// What the grammar allows.
        expected: String,
        /// What is there (quoted), or `the end of the file`.
        found: String,
    },
    /// A token that should be a number is not.
    #[error("{what}: {token:?} is not a number")]
    BadNumber {
        /// Which number.
        what: String,
        /// The token.
        token: String,
    },
    /// A number that is NaN or infinite.
    #[error("{what}: {token:?} is not finite")]
    NotFinite {
        /// Which number.
        what: String,
        /// The token.
        token: String,
    },
    /// `CHANNELS n` followed by another number of channel names.
    #[error("CHANNELS declares {declared} channels but names {named}")]
    ChannelCount {
        /// `n`.
        declared: usize,
        /// How many names follow.
        named: usize,
    },
    /// `CHANNELS n` with `n` over 6.
    #[error("CHANNELS declares {declared} channels; a joint has at most 6")]
    TooManyChannels {
        /// `n`.
        declared: usize,
    },
    /// A channel name that is not one of the six.
    #[error("{name:?} is not a channel (Xposition, Yposition, Zposition, Xrotation, Yrotation or Zrotation)")]
    UnknownChannel {
        /// The name.
        name: String,
    },
    /// A channel named twice for one joint.
    #[error("channel {name} is declared twice for this joint")]
    RepeatedChannel {
        /// The name.
        name: String,
    },
    /// More blocks than [`MAX_JOINTS`].
    #[error("more than {limit} joints (ROOT, JOINT and End Site blocks)")]
    TooManyJoints {
        /// The limit.
        limit: usize,
    },
    /// Blocks nested deeper than [`MAX_DEPTH`].
    #[error("joints nested more than {limit} deep")]
    TooDeep {
        /// The limit.
        limit: usize,
    },
    /// Two blocks with one name.
    #[error("joint name {name:?} is already used by the joint on line {first_line}")]
    DuplicateName {
        /// The name.
        name: String,
        /// Where it was first used.
        first_line: usize,
    },
    /// `Frame Time:` not finite or not positive (as a 32-bit float).
    #[error("frame time {value} must be a finite positive number of seconds")]
    FrameTime {
        /// The value as written or read.
        value: String,
    },
    /// Frames times channels past [`MAX_VALUES`].
    #[error("{frames} frames of {channels} channels is past the budget of {limit} motion values")]
    TooManyValues {
        /// `Frames:`.
        frames: usize,
        /// Channels per frame.
        channels: usize,
        /// The limit.
        limit: usize,
    },
    /// Frames times tracks past [`MAX_KEYS`].
    #[error("{frames} frames of {tracks} tracks is past the budget of {limit} keys")]
    TooManyKeys {
        /// `Frames:`.
        frames: usize,
        /// Tracks the hierarchy's channels make.
        tracks: usize,
        /// The limit.
        limit: usize,
    },
    /// The last frame's time is past what a key time can hold.
    #[error("{frames} frames of {frame_time} s last longer than a key time can hold")]
    TooLong {
        /// `Frames:`.
        frames: usize,
        /// `Frame Time:`.
        frame_time: f64,
    },
    /// The declared frames cannot fit in the bytes the file has left.
    #[error(
        "declares {frames} frames of {channels} values, which take at least {needed} bytes; the file has {left} left"
    )]
    FramesPastFile {
        /// `Frames:`.
        frames: usize,
        /// Channels per frame.
        channels: usize,
        /// The fewest bytes they take.
        needed: usize,
        /// The bytes after `Frame Time:`.
        left: usize,
    },
    /// A frame line with another number of values than the hierarchy declares channels.
    #[error("frame {frame} has {found} values, the hierarchy declares {declared}")]
    FrameLength {
        /// The frame (1-based).
        frame: usize,
        /// Values on its line.
        found: usize,
        /// Channels declared.
        declared: usize,
    },
    /// The file ends before the declared frames do.
    #[error("the file ends after {found} frames; Frames: declares {declared}")]
    MissingFrames {
        /// `Frames:`.
        declared: usize,
        /// Frames found.
        found: usize,
    },
    /// A non-blank line after the declared frames.
    #[error("data past the {declared} frames declared")]
    ExtraFrames {
        /// `Frames:`.
        declared: usize,
    },
    /// An offset or position (after scaling) past [`MAX_COORD`].
    #[error("{what} is {value}, past the limit of {limit} (after scaling)")]
    OutOfRange {
        /// Which value.
        what: String,
        /// The scaled value.
        value: f64,
        /// The limit.
        limit: f64,
    },
    /// The skeleton cannot be built.
    #[error("skeleton: {0}")]
    Skeleton(SkeletonFault),
    /// A track cannot be built from the frames (key times that 32-bit floats cannot tell apart).
    #[error("joint {joint:?}: {fault}")]
    Keys {
        /// The joint.
        joint: String,
        /// The track's fault.
        fault: TrackFault,
    },
}

/// Imports a BVH file (at most [`MAX_FILE_BYTES`], a regular file only).
pub fn import(path: impl AsRef<Path>, options: &BvhOptions) -> Result<ImportedScene, BvhError> {
    let path = path.as_ref();
    let bytes = crate::project::fs::read_regular_file(path, MAX_FILE_BYTES)
        .map_err(|source| BvhError::Io { file: path.to_owned(), source })?;
    import_slice(&bytes, path, options)
}

/// Imports BVH bytes; `file` names the source in errors and names the skeleton and animation
/// (its stem).
pub fn import_slice(bytes: &[u8], file: &Path, options: &BvhOptions) -> Result<ImportedScene, BvhError> {
    if !(options.scale.is_finite() && options.scale > 0.0) {
        return Err(BvhError::BadScale { file: file.to_owned(), scale: options.scale });
    }
    let invalid = |(at, fault): (Position, BvhFault)| BvhError::Invalid { file: file.to_owned(), at, fault };
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let good = &bytes[..e.valid_up_to()];
        let line = good.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        // The prefix is valid UTF-8, so the column counts its characters.
        let col = std::str::from_utf8(&good[line_start..]).map_or(1, |s| s.chars().count() + 1);
        let byte = bytes.get(e.valid_up_to()).copied().unwrap_or(0);
        invalid((Position { line, col }, BvhFault::NotText { byte }))
    })?;
    let parsed = parse::parse(text).map_err(invalid)?;
    build::build(&parsed, file, options).map_err(invalid)
}
