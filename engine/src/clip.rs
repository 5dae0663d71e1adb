//! Clips: per-bone translation/rotation/scale tracks for one skeleton, looping, an optional held
//! `length`, and named markers.
//!
//! The channel table is parallel to the bones of the skeleton the clip names. A clip's duration is
//! derived on read ([`Clip::duration`]: the later of its last key and `length`); it is never
//! stored. [`find_clip_fault`] names everything that would make a clip unusable with a skeleton.
//!
//! A clip also carries its compiled form ([`Clip::compiled`], see [`crate::compiled_clip`]):
//! derived from the channels on first use, dropped by [`Clip::channels_mut`], never saved.
//!
//! Or it plays its **compressed form** instead ([`Clip::compressed`], the third precision beside
//! the compiled form's full and compact, see [`crate::compressed`]): attached by
//! [`Clip::compress`] (built from the tracks for a skeleton, to a shell-error tolerance) or the
//! whole of a clip made from a cooked file ([`Clip::from_compressed`], what a game ships: no
//! tracks, the cooked markers and looping). Every player samples it through
//! [`crate::pose::SamplingJob`] once [`crate::pose::SamplingContext::prepare`] has sized the
//! context for it, and root motion reads its root bone from it. Never saved; an edit of the
//! tracks drops it.
//!
//! Playback, blending and marker events are not here: see [`crate::pose`] and [`crate::animator`].

use std::sync::Arc;

use crate::compressed::{CompressError, CompressOptions, CompressReport, CompressedClip};
use crate::math::Num;

pub use crate::channels::BoneChannels;
use crate::compiled_clip::{CompiledCache, CompiledClip, Precision};
use crate::skeleton::Skeleton;
use crate::track::{Track, TrackFault};

/// The frame rate a clip has unless it says otherwise.
pub const DEFAULT_FRAME_RATE: f32 = 30.0;

/// A named instant in a clip.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Marker {
    /// Marker name (several markers may share one, e.g. `footstep`).
    pub name: String,
    /// Time in seconds from the clip's start.
    pub time: f32,
}

/// An animation clip for one skeleton.
#[derive(Clone, Debug, PartialEq)]
pub struct Clip {
    /// Clip name.
    pub name: String,
    /// Name of the skeleton the clip was authored for.
    pub skeleton: String,
    /// One entry per bone of that skeleton, in bone order (read with [`Clip::channels`], edit
    /// with [`Clip::channels_mut`], which drops the compiled form).
    channels: Vec<BoneChannels>,
    /// Whether playback wraps at the end (a property of the clip).
    pub looping: bool,
    /// Holds the clip open past its last key; the duration is `max(last key, length)`.
    pub length: f32,
    /// Frames per second for snapping and display in an editor (authored; playback does not
    /// use it). 30 unless set.
    pub frame_rate: f32,
    /// The interpolation a key gives a channel it starts (authored, for an editor; `None`: the
    /// project's setting). Playback does not use it.
    pub default_interpolation: Option<crate::track::Interpolation>,
    markers: Vec<Marker>,
    /// Derived: the sampling form, built on first use ([`Clip::compiled`]).
    compiled: CompiledCache,
    /// The compressed form played instead of the tracks ([`Clip::compressed`]).
    shipped: Shipped,
}

/// The compressed form a clip plays, if any: shared on clone (a clip made from a cooked file has
/// nothing else), compared by identity (two clips play the same form only if they share it).
#[derive(Clone, Default)]
struct Shipped(Option<Arc<CompressedClip>>);

impl PartialEq for Shipped {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

impl std::fmt::Debug for Shipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Some(c) => write!(f, "compressed ({} bytes)", c.bytes()),
            None => f.write_str("tracks"),
        }
    }
}

impl Clip {
    /// An empty clip for `skeleton` with one (empty) channel entry per bone.
    pub fn new(name: impl Into<String>, skeleton: &Skeleton) -> Self {
        Self {
            name: name.into(),
            skeleton: skeleton.name.clone(),
            channels: vec![BoneChannels::default(); skeleton.bone_count()],
            looping: false,
            length: 0.0,
            frame_rate: DEFAULT_FRAME_RATE,
            default_interpolation: None,
            markers: Vec::new(),
            compiled: CompiledCache::default(),
            shipped: Shipped::default(),
        }
    }

    /// A clip that plays a compressed form (a loaded cooked file): its name, skeleton, looping,
    /// duration (as `length`), rate (as `frame_rate`) and markers, one empty channel entry per
    /// bone it was compressed for, and the form itself, which every player samples.
    pub fn from_compressed(compressed: Arc<CompressedClip>) -> Self {
        let c = &*compressed;
        Self {
            name: c.name.clone(),
            skeleton: c.skeleton.clone(),
            channels: vec![BoneChannels::default(); c.bone_count()],
            looping: c.looping,
            length: c.duration(),
            frame_rate: c.rate(),
            default_interpolation: None,
            markers: c.markers.clone(),
            compiled: CompiledCache::default(),
            shipped: Shipped(Some(compressed)),
        }
    }

    /// Compresses this clip's tracks for `skeleton` to `options` and plays that form from now on
    /// (its tracks are kept: editing them drops the form). A clip that cannot be compressed keeps
    /// playing its tracks.
    pub fn compress(
        &mut self,
        skeleton: &Skeleton,
        options: &CompressOptions,
    ) -> Result<CompressReport, CompressError> {
        let (packed, report) = CompressedClip::compress(self, skeleton, options)?;
        self.shipped = Shipped(Some(Arc::new(packed)));
        Ok(report)
    }

    /// The compressed form this clip plays instead of its tracks, if it has one.
    pub fn compressed(&self) -> Option<&Arc<CompressedClip>> {
        self.shipped.0.as_ref()
    }

    /// The channel table: one entry per bone of the clip's skeleton, in bone order.
    pub fn channels(&self) -> &[BoneChannels] {
        &self.channels
    }

    /// The keys of every track (translation, rotation and scale of every bone).
    pub fn key_count(&self) -> usize {
        self.channels
            .iter()
            .map(|c| {
                c.translation.as_ref().map_or(0, |t| t.len())
                    + c.rotation.as_ref().map_or(0, |t| t.len())
                    + c.scale.as_ref().map_or(0, |t| t.len())
            })
            .sum()
    }

    /// The key-time array of every track (translation, rotation and scale of every bone, in
    /// bone order; missing tracks skipped).
    pub fn key_time_arrays(&self) -> impl Iterator<Item = &[f32]> + '_ {
        self.channels.iter().flat_map(|c| {
            [
                c.translation.as_ref().map(|t| t.times()),
                c.rotation.as_ref().map(|t| t.times()),
                c.scale.as_ref().map(|t| t.times()),
            ]
            .into_iter()
            .flatten()
        })
    }

    /// Every finite key time of every track, sorted, without repeats.
    pub fn key_times(&self) -> Vec<f32> {
        let mut keys: Vec<f32> =
            self.key_time_arrays().flatten().copied().filter(|t| t.is_finite()).collect();
        keys.sort_by(f32::total_cmp);
        keys.dedup();
        keys
    }

    /// Bytes the authored tracks and markers hold (the compiled form is counted by
    /// [`CompiledClip::bytes`]).
    pub fn bytes(&self) -> usize {
        let ch = |c: &BoneChannels| {
            c.translation.as_ref().map_or(0, Track::bytes)
                + c.rotation.as_ref().map_or(0, Track::bytes)
                + c.scale.as_ref().map_or(0, Track::bytes)
        };
        self.channels().iter().map(ch).sum::<usize>()
            + self.markers().iter().map(|m| m.name.len() + 4).sum::<usize>()
    }

    /// The channel table, for editing. Drops the compiled form ([`Clip::compiled`] rebuilds it)
    /// and a compressed one.
    pub fn channels_mut(&mut self) -> &mut Vec<BoneChannels> {
        self.compiled.clear();
        self.shipped = Shipped::default();
        &mut self.channels
    }

    /// The compiled form the sampling job reads, built on the first call (which allocates).
    /// Players call it when a clip starts playing (the Animator's heads, graph compilation,
    /// [`crate::gltf::ScenePose::new`]), so frames never build it.
    pub fn compiled(&self) -> &CompiledClip {
        self.compiled.get_or_init(|precision| CompiledClip::build_with(&self.channels, precision))
    }

    /// How the compiled form stores its key blocks ([`Precision::Full`] unless set).
    pub fn precision(&self) -> Precision {
        self.compiled.precision()
    }

    /// Chooses how the compiled form stores its key blocks: [`Precision::Compact`] halves their
    /// bytes at a stated precision cost (a runtime choice for crowds and embedders: derived,
    /// never saved, not part of equality). Drops a form built at another precision.
    pub fn set_precision(&mut self, precision: Precision) {
        self.compiled.set_precision(precision);
    }

    /// The compiled form if [`Clip::compiled`] has built it since the last edit, else `None`
    /// (never builds: this is what the allocation-free sampling job reads).
    pub fn compiled_if_built(&self) -> Option<&CompiledClip> {
        self.compiled.get()
    }

    /// The derived duration: the later of the last key over all tracks and `length`.
    pub fn duration(&self) -> f32 {
        self.channels.iter().filter_map(BoneChannels::last_key_time).fold(self.length.max(0.0), f32::max)
    }

    /// Markers, sorted by time (stable for equal times).
    pub fn markers(&self) -> &[Marker] {
        &self.markers
    }

    /// Adds a marker, keeping the list sorted; returns its index.
    pub fn add_marker(&mut self, name: impl Into<String>, time: f32) -> usize {
        let i = self.markers.partition_point(|m| m.time <= time);
        self.markers.insert(i, Marker { name: name.into(), time });
        i
    }

    /// Removes marker `index`.
    pub fn remove_marker(&mut self, index: usize) -> Option<Marker> {
        (index < self.markers.len()).then(|| self.markers.remove(index))
    }

    /// Replaces all markers (sorted here, stably by time).
    pub fn set_markers(&mut self, mut markers: Vec<Marker>) {
        markers.sort_by(|a, b| a.time.total_cmp(&b.time));
        self.markers = markers;
    }

    /// Number of tracks (present channels) in the clip.
    pub fn track_count(&self) -> usize {
        self.channels
            .iter()
            .map(|c| {
                c.translation.is_some() as usize + c.rotation.is_some() as usize + c.scale.is_some() as usize
            })
            .sum()
    }
}

/// One of a bone's three channels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Channel {
    /// Translation.
    Translation,
    /// Rotation.
    Rotation,
    /// Scale.
    Scale,
}

impl std::fmt::Display for Channel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Channel::Translation => "translation",
            Channel::Rotation => "rotation",
            Channel::Scale => "scale",
        })
    }
}

/// Why a clip cannot be played on a skeleton.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ClipFault {
    /// The clip names another skeleton.
    #[error("clip {clip:?} was authored for skeleton {clip_skeleton:?}, not {skeleton:?}")]
    OtherRig {
        /// Clip name.
        clip: String,
        /// The skeleton the clip names.
        clip_skeleton: String,
        /// The skeleton it was played on.
        skeleton: String,
    },
    /// The channel table is not parallel to the skeleton's bones.
    #[error("clip {clip:?} has {channels} channel entries but skeleton {skeleton:?} has {bones} bones")]
    NotParallel {
        /// Clip name.
        clip: String,
        /// Channel entries.
        channels: usize,
        /// Skeleton name.
        skeleton: String,
        /// Bone count.
        bones: usize,
    },
    /// A track's keys are unsorted, non-finite, or its arrays not parallel.
    #[error("clip {clip:?}, bone {bone} ({bone_name:?}) {channel}: {fault}")]
    Track {
        /// Clip name.
        clip: String,
        /// Bone index.
        bone: usize,
        /// Bone name.
        bone_name: String,
        /// Which channel.
        channel: Channel,
        /// The track's fault.
        fault: TrackFault,
    },
    /// A marker lies before 0 or after the clip's duration, or at a non-finite time.
    #[error("clip {clip:?}: marker {marker:?} at t = {} lies outside the clip [0, {}]", Num(*time), Num(*duration))]
    MarkerOutside {
        /// Clip name.
        clip: String,
        /// Marker name.
        marker: String,
        /// Marker time.
        time: f32,
        /// Clip duration.
        duration: f32,
    },
    /// The clip's compressed form was made for a rig whose bones differ (a cooked file of an
    /// earlier version of the rig).
    #[error("clip {clip:?}: its compressed form's bone {bone} is {cooked:?}, the skeleton's is {rig:?}")]
    CompressedBones {
        /// The clip.
        clip: String,
        /// The first bone that differs.
        bone: usize,
        /// Its name in the compressed form.
        cooked: String,
        /// Its name in the skeleton.
        rig: String,
    },
    /// `length` is negative or not finite.
    #[error("clip {clip:?}: length {length} is not a finite, non-negative number of seconds")]
    BadLength {
        /// Clip name.
        clip: String,
        /// The length.
        length: f32,
    },
}

/// The first fault that makes `clip` unplayable on `skeleton`, or `None`.
pub fn find_clip_fault(clip: &Clip, skeleton: &Skeleton) -> Option<ClipFault> {
    if clip.skeleton != skeleton.name {
        return Some(ClipFault::OtherRig {
            clip: clip.name.clone(),
            clip_skeleton: clip.skeleton.clone(),
            skeleton: skeleton.name.clone(),
        });
    }
    if clip.channels.len() != skeleton.bone_count() {
        return Some(ClipFault::NotParallel {
            clip: clip.name.clone(),
            channels: clip.channels.len(),
            skeleton: skeleton.name.clone(),
            bones: skeleton.bone_count(),
        });
    }
    if let Some(c) = clip.compressed()
        && let Some(bone) = (0..c.bone_count()).find(|&i| c.bone_names.get(i) != skeleton.bone_names.get(i))
    {
        return Some(ClipFault::CompressedBones {
            clip: clip.name.clone(),
            bone,
            cooked: c.bone_names[bone].clone(),
            rig: skeleton.bone_names.get(bone).cloned().unwrap_or_default(),
        });
    }
    if !clip.length.is_finite() || clip.length < 0.0 {
        return Some(ClipFault::BadLength { clip: clip.name.clone(), length: clip.length });
    }
    for (bone, ch) in clip.channels.iter().enumerate() {
        let faults = [
            (Channel::Translation, ch.translation.as_ref().and_then(Track::find_fault)),
            (Channel::Rotation, ch.rotation.as_ref().and_then(Track::find_fault)),
            (Channel::Scale, ch.scale.as_ref().and_then(Track::find_fault)),
        ];
        for (channel, fault) in faults {
            if let Some(fault) = fault {
                return Some(ClipFault::Track {
                    clip: clip.name.clone(),
                    bone,
                    bone_name: skeleton.bone_names.get(bone).cloned().unwrap_or_default(),
                    channel,
                    fault,
                });
            }
        }
    }
    let duration = clip.duration();
    for m in &clip.markers {
        if !(m.time >= 0.0 && m.time <= duration) {
            return Some(ClipFault::MarkerOutside {
                clip: clip.name.clone(),
                marker: m.name.clone(),
                time: m.time,
                duration,
            });
        }
    }
    None
}
