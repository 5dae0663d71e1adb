//! Clip files, format 2: a key a line, so clip files diff and merge.
//!
//! Format 1 ([`ClipFileV1`]) stored each track as parallel arrays (`times: [...]`, then
//! `values: [...]`, then `key_easings: [...]`), one element a line: adding one key changed lines
//! in three distant places and two people editing one clip got conflicts git could not resolve.
//! Format 2 writes each key as one row, `(time: 0.15, value: (0.0, 0.82, 0.0), easing:
//! "easeInOutSine")`, keys in time order, a track's rows together; a CUBICSPLINE key adds `in:` and
//! `out:` (its tangents) and `tangent:` (its mode). Numbers are written as the shortest decimal
//! that reads back as the same `f32`, so a re-save never changes a line nobody edited; markers
//! are a name line and a time line each. A change to one key is a change to one line, and edits
//! to different keys, or to a key and a marker, merge with git's three-way merge.
//!
//! Format 1 files still load ([`parse_clip_text`] reads either by the file's `version`); every
//! clip is written as format 2. The conversion goes through format 1's types, whose checks
//! ([`ClipAsset::try_from`], [`ClipAsset::repair`]) are the one place a clip file is validated.
//! Not here: reading or writing files (the project does, atomically).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::file::{
    BoneTracksFile, ClipAsset, ClipFileV1, FieldError, MarkerFile, TrackFile, default_frame_rate,
    field_error, is_default_frame_rate, is_false, is_linear_name, is_zero, linear_name,
};
use super::{ProjectError, parse_file_versioned};
use crate::math::Num;
use crate::tangent::TangentMode;
use crate::track::Interpolation;

/// The clip file format this build writes (format 1 is still read).
pub const CLIP_FILE_VERSION: u32 = 2;

/// A clip file of format 2: the clip's settings, its skeleton's bone names, its tracks by bone
/// (each a list of key rows) and its markers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClipFile {
    /// Format version ([`CLIP_FILE_VERSION`]).
    pub version: u32,
    /// Clip name.
    pub name: String,
    /// The skeleton it was authored for.
    pub skeleton: String,
    /// That skeleton's bone names, in bone order.
    pub bones: Vec<String>,
    /// Wrap at the end.
    #[serde(default, skip_serializing_if = "is_false")]
    pub looping: bool,
    /// Hold past the last key, seconds.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub length: f32,
    /// Frames per second for snapping and display (30 when absent).
    #[serde(default = "default_frame_rate", skip_serializing_if = "is_default_frame_rate")]
    pub frame_rate: f32,
    /// The interpolation a key gives a channel it starts (absent: the project's setting).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_interpolation: Option<Interpolation>,
    /// Tracks by bone, in bone order.
    #[serde(default)]
    pub tracks: Vec<BoneKeysFile>,
    /// Markers, in time order.
    #[serde(default)]
    pub markers: Vec<MarkerFile>,
}

/// One bone's tracks in a format 2 clip file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoneKeysFile {
    /// Bone name.
    pub bone: String,
    /// Translation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub translation: Option<KeyTrackFile<(f32, f32, f32)>>,
    /// Rotation (x, y, z, w).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotation: Option<KeyTrackFile<(f32, f32, f32, f32)>>,
    /// Scale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<KeyTrackFile<(f32, f32, f32)>>,
}

/// A track of key rows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, bound(deserialize = "V: Deserialize<'de>"))]
pub struct KeyTrackFile<V> {
    /// Interpolation (`Step`, `Linear`, `CubicSpline`).
    pub interpolation: Interpolation,
    /// The easing of LINEAR segments whose key names none.
    #[serde(default = "linear_name", skip_serializing_if = "is_linear_name")]
    pub easing: String,
    /// The keys, one row each, in time order.
    pub keys: Vec<KeyFile<V>>,
}

/// One key: a row of the file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, bound(deserialize = "V: Deserialize<'de>"))]
pub struct KeyFile<V> {
    /// Time, seconds.
    pub time: f32,
    /// Value.
    pub value: V,
    /// The easing of the segment this key starts, by name (absent: the track's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub easing: Option<String>,
    /// CUBICSPLINE in tangent.
    #[serde(default, rename = "in", skip_serializing_if = "Option::is_none")]
    pub in_tangent: Option<V>,
    /// CUBICSPLINE out tangent.
    #[serde(default, rename = "out", skip_serializing_if = "Option::is_none")]
    pub out_tangent: Option<V>,
    /// CUBICSPLINE tangent mode (absent: `Free`, the tangents as written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tangent: Option<TangentMode>,
}

impl<V: Copy> From<&TrackFile<V>> for KeyTrackFile<V> {
    /// The rows of a track (its arrays are parallel, as a track's file form always is).
    fn from(t: &TrackFile<V>) -> Self {
        let keys = t
            .times
            .iter()
            .zip(&t.values)
            .enumerate()
            .map(|(i, (&time, &value))| KeyFile {
                time,
                value,
                easing: t.key_easings.get(i).cloned().flatten(),
                in_tangent: t.in_tangents.get(i).copied(),
                out_tangent: t.out_tangents.get(i).copied(),
                tangent: t.tangent_modes.get(i).copied(),
            })
            .collect();
        KeyTrackFile { interpolation: t.interpolation, easing: t.easing.clone(), keys }
    }
}

impl<V: Copy + Default> KeyTrackFile<V> {
    /// The track's arrays, with the faults of rows that do not fit them (`at` names the track):
    /// a CUBICSPLINE key without a tangent (zero is used) or another kind of key with one (it is
    /// ignored). The arrays' own checks come after, in [`TrackFile::to_track`] or
    /// [`TrackFile::repair`].
    fn to_arrays(&self, at: &str) -> (TrackFile<V>, Vec<FieldError>) {
        let mut faults = Vec::new();
        let cubic = self.interpolation == Interpolation::CubicSpline;
        let mut tangent = |i: usize, k: &KeyFile<V>, side: &str, v: Option<V>| match (cubic, v) {
            (true, Some(v)) => Some(v),
            (true, None) => {
                faults.push(field_error(
                    at,
                    format!("key {i} at t = {} has no {side} tangent (a CubicSpline key needs both); zero is used", Num(k.time)),
                ));
                Some(V::default())
            }
            (false, Some(_)) => {
                faults.push(field_error(
                    at,
                    format!("key {i} at t = {} has an {side} tangent, which only CubicSpline keys have; it is ignored", Num(k.time)),
                ));
                None
            }
            (false, None) => None,
        };
        let mut in_tangents = Vec::new();
        let mut out_tangents = Vec::new();
        for (i, k) in self.keys.iter().enumerate() {
            in_tangents.extend(tangent(i, k, "in", k.in_tangent));
            out_tangents.extend(tangent(i, k, "out", k.out_tangent));
        }
        let eased = self.keys.iter().any(|k| k.easing.is_some());
        let moded = self.keys.iter().any(|k| k.tangent.is_some());
        let track = TrackFile {
            interpolation: self.interpolation,
            easing: self.easing.clone(),
            times: self.keys.iter().map(|k| k.time).collect(),
            values: self.keys.iter().map(|k| k.value).collect(),
            in_tangents,
            out_tangents,
            key_easings: if eased {
                self.keys.iter().map(|k| k.easing.clone()).collect()
            } else {
                Vec::new()
            },
            tangent_modes: if moded && cubic {
                self.keys.iter().map(|k| k.tangent.unwrap_or_default()).collect()
            } else {
                Vec::new()
            },
        };
        if moded && !cubic {
            faults.push(field_error(at, "tangent modes belong to CubicSpline keys; they are ignored"));
        }
        (track, faults)
    }
}

impl From<&ClipFileV1> for ClipFile {
    /// A format 1 file's clip in format 2: the same clip, a key a row.
    fn from(f: &ClipFileV1) -> Self {
        ClipFile {
            version: CLIP_FILE_VERSION,
            name: f.name.clone(),
            skeleton: f.skeleton.clone(),
            bones: f.bones.clone(),
            looping: f.looping,
            length: f.length,
            frame_rate: f.frame_rate,
            default_interpolation: f.default_interpolation,
            tracks: f
                .tracks
                .iter()
                .map(|t| BoneKeysFile {
                    bone: t.bone.clone(),
                    translation: t.translation.as_ref().map(KeyTrackFile::from),
                    rotation: t.rotation.as_ref().map(KeyTrackFile::from),
                    scale: t.scale.as_ref().map(KeyTrackFile::from),
                })
                .collect(),
            markers: f.markers.clone(),
        }
    }
}

impl From<&ClipAsset> for ClipFile {
    fn from(c: &ClipAsset) -> Self {
        ClipFile::from(&ClipFileV1::from(c))
    }
}

impl ClipFile {
    /// The clip in format 1's form, with the faults of rows that do not fit it (see
    /// [`KeyTrackFile`]).
    pub fn to_v1(&self) -> (ClipFileV1, Vec<FieldError>) {
        fn arrays<V: Copy + Default>(
            at: String,
            t: Option<&KeyTrackFile<V>>,
            faults: &mut Vec<FieldError>,
        ) -> Option<TrackFile<V>> {
            t.map(|t| {
                let (track, f) = t.to_arrays(&at);
                faults.extend(f);
                track
            })
        }
        let mut faults = Vec::new();
        let mut tracks = Vec::with_capacity(self.tracks.len());
        for t in &self.tracks {
            let at = format!("tracks/{}", t.bone);
            let translation = arrays(format!("{at}/translation"), t.translation.as_ref(), &mut faults);
            let rotation = arrays(format!("{at}/rotation"), t.rotation.as_ref(), &mut faults);
            let scale = arrays(format!("{at}/scale"), t.scale.as_ref(), &mut faults);
            tracks.push(BoneTracksFile { bone: t.bone.clone(), translation, rotation, scale });
        }
        let v1 = ClipFileV1 {
            version: 1,
            name: self.name.clone(),
            skeleton: self.skeleton.clone(),
            bones: self.bones.clone(),
            looping: self.looping,
            length: self.length,
            frame_rate: self.frame_rate,
            default_interpolation: self.default_interpolation,
            tracks,
            markers: self.markers.clone(),
        };
        (v1, faults)
    }
}

impl TryFrom<&ClipFile> for ClipAsset {
    type Error = FieldError;
    /// The clip, or the first fault of the file.
    fn try_from(f: &ClipFile) -> Result<Self, FieldError> {
        let (v1, faults) = f.to_v1();
        match faults.into_iter().next() {
            Some(fault) => Err(fault),
            None => ClipAsset::try_from(&v1).map_err(row_place),
        }
    }
}

/// A fault found in format 1's form, placed where a format 2 file has it: a key's easing is
/// `keys[i]/easing` (format 1's `key_easings[i]`), a key's tangent mode `keys/tangent`.
fn row_place(mut e: FieldError) -> FieldError {
    if let Some((track, rest)) = e.at.split_once("/key_easings[")
        && let Some((i, tail)) = rest.split_once(']')
    {
        e.at = format!("{track}/keys[{i}]/easing{tail}");
    } else if let Some(track) = e.at.strip_suffix("/key_easings") {
        e.at = format!("{track}/keys");
    } else if let Some(track) = e.at.strip_suffix("/tangent_modes") {
        e.at = format!("{track}/keys/tangent");
    }
    e
}

/// A clip file's contents, as read: either format.
#[derive(Clone, Debug, PartialEq)]
pub enum ParsedClip {
    /// Format 1 (parallel arrays).
    V1(ClipFileV1),
    /// Format 2 (a key a row).
    V2(ClipFile),
}

impl ParsedClip {
    /// The clip, or the first fault of the file.
    pub fn to_asset(&self) -> Result<ClipAsset, FieldError> {
        match self {
            ParsedClip::V1(f) => ClipAsset::try_from(f),
            ParsedClip::V2(f) => ClipAsset::try_from(f),
        }
    }

    /// The clip as far as it is sound, with every fault (see [`ClipAsset::repair`]).
    pub fn repair(&self) -> (ClipAsset, Vec<FieldError>) {
        match self {
            ParsedClip::V1(f) => ClipAsset::repair(f),
            ParsedClip::V2(f) => {
                let (v1, mut faults) = f.to_v1();
                let (clip, more) = ClipAsset::repair(&v1);
                faults.extend(more.into_iter().map(row_place));
                (clip, faults)
            }
        }
    }
}

/// Parses clip file text of either format, by its `version` (`path` names it in errors; a
/// version other than 1 and 2 is refused as a newer file).
pub fn parse_clip_text(text: &str, path: &Path) -> Result<ParsedClip, ProjectError> {
    if crate::graph::file::probe_version(text) == Some(1) {
        parse_file_versioned(text, path, 1).map(ParsedClip::V1)
    } else {
        parse_file_versioned(text, path, CLIP_FILE_VERSION).map(ParsedClip::V2)
    }
}

/// The RON writer's settings for clip files: the project's, with everything below a track's
/// key list (the rows) written on one line.
pub fn clip_pretty_config() -> ron::ser::PrettyConfig {
    // The file (1), its tracks (2), a bone's tracks (3), a track (4), its keys (5): a row is
    // below them.
    crate::graph::file::pretty_config().depth_limit(5)
}
