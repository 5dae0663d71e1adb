//! The saved forms: versioned serde mirror types for `project.ron`, scene files, clip files and
//! skeleton files, converted with `TryFrom` into the authored runtime types (and back with
//! `From`).
//!
//! Only authored fields exist here. There is no field for `playing`, a playhead time, fade
//! state, adjusts, events or editor selection, so none can be written. Easings are written by
//! name (`easeInOutSine`, or `cubic-bezier(x1, y1, x2, y2)`); bones, entities and assets by
//! name and path, never by runtime index or handle. Vectors are tuples, so they print on one
//! line.
//!
//! Not here: reading or writing files (see [`super`]), resolving references.

use std::sync::Arc;

use crate::math::Num;
use glam::{Quat, Vec3};
use serde::{Deserialize, Serialize};

use crate::clip::{BoneChannels, Clip, Marker};
use crate::easing::{CubicBezier, Ease, Easing};
use crate::math::Transform;
use crate::particles::{CloudGroup, CloudSettings, SpringSettings};
use crate::property::PropertyAnimation;
use crate::scene::{
    AnimatorDesc, CrowdDesc, EntityDesc, MeshDesc, ParticleCloudDesc, RootMotionDesc, SceneDesc, SocketDesc,
    TargetBinding,
};
use crate::skeleton::{NO_PARENT, Skeleton};
use crate::tangent::TangentMode;
use crate::track::{Animatable, Interpolation, Track};

/// The version of every file kind this build reads and writes.
pub const FILE_VERSION: u32 = 1;

/// A semantic problem in a file: where (`at`, a field path) and what.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{at}: {message}")]
pub struct FieldError {
    /// Where in the file (`entities/Runner/animator/speed`, `tracks/hips/rotation`...).
    pub at: String,
    /// What is wrong.
    pub message: String,
}

pub(crate) fn field_error(at: impl Into<String>, message: impl ToString) -> FieldError {
    FieldError { at: at.into(), message: message.to_string() }
}

fn one() -> f32 {
    1.0
}

pub(crate) fn default_frame_rate() -> f32 {
    crate::clip::DEFAULT_FRAME_RATE
}

pub(crate) fn is_default_frame_rate(f: &f32) -> bool {
    *f == crate::clip::DEFAULT_FRAME_RATE
}

fn yes() -> bool {
    true
}

pub(crate) fn is_false(b: &bool) -> bool {
    !*b
}

pub(crate) fn is_zero(x: &f32) -> bool {
    *x == 0.0
}

// ------------------------------------------------------------------------------------ project

/// `project.ron`: the project's name and its files by path (relative to the project folder).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectFile {
    /// Format version ([`FILE_VERSION`]).
    pub version: u32,
    /// Project name.
    pub name: String,
    /// Scene files.
    #[serde(default)]
    pub scenes: Vec<String>,
    /// Asset files (`.glb`, `.gltf`, `.skeleton.ron`).
    #[serde(default)]
    pub assets: Vec<String>,
    /// Clip files (`.clip.ron`).
    #[serde(default)]
    pub clips: Vec<String>,
    /// Graph files (`.graph.ron`).
    #[serde(default)]
    pub graphs: Vec<String>,
    /// The interpolation a key gives a channel it starts, unless its clip says otherwise
    /// (absent: `Linear`).
    #[serde(default, skip_serializing_if = "is_linear")]
    pub default_interpolation: Interpolation,
}

fn is_linear(i: &Interpolation) -> bool {
    *i == Interpolation::Linear
}

/// The authored project manifest.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Manifest {
    /// Project name.
    pub name: String,
    /// Scene file paths.
    pub scenes: Vec<String>,
    /// Asset file paths.
    pub assets: Vec<String>,
    /// Clip file paths.
    pub clips: Vec<String>,
    /// Graph file paths.
    pub graphs: Vec<String>,
    /// The interpolation a key gives a channel it starts, unless its clip overrides it.
    pub default_interpolation: Interpolation,
}

impl TryFrom<ProjectFile> for Manifest {
    type Error = FieldError;
    fn try_from(f: ProjectFile) -> Result<Self, FieldError> {
        let lists =
            [("scenes", &f.scenes), ("assets", &f.assets), ("clips", &f.clips), ("graphs", &f.graphs)];
        // Each file once, however it is spelled (`./scenes/a.ron`, `scenes//a.ron`).
        let mut all: std::collections::HashMap<String, &String> = std::collections::HashMap::new();
        for (field, list) in lists {
            for p in list.iter() {
                let first = p.split(['/', '\\']).next().unwrap_or("");
                if p.is_empty()
                    || p.starts_with(['/', '\\'])
                    || first.contains(':')
                    || p.split(['/', '\\']).any(|c| c == "..")
                {
                    return Err(field_error(field, format!("{p:?} is not a path inside the project folder")));
                }
                let key: Vec<&str> = p.split(['/', '\\']).filter(|c| !c.is_empty() && *c != ".").collect();
                if let Some(other) = all.insert(key.join("/"), p) {
                    return Err(field_error(
                        field,
                        if other == p {
                            format!("{p:?} is listed twice")
                        } else {
                            format!("{p:?} and {other:?} name the same file")
                        },
                    ));
                }
            }
        }
        Ok(Manifest {
            name: f.name,
            scenes: f.scenes,
            assets: f.assets,
            clips: f.clips,
            graphs: f.graphs,
            default_interpolation: f.default_interpolation,
        })
    }
}

impl From<&Manifest> for ProjectFile {
    fn from(m: &Manifest) -> Self {
        ProjectFile {
            version: FILE_VERSION,
            name: m.name.clone(),
            scenes: m.scenes.clone(),
            assets: m.assets.clone(),
            clips: m.clips.clone(),
            graphs: m.graphs.clone(),
            default_interpolation: m.default_interpolation,
        }
    }
}

// ------------------------------------------------------------------------------------ transforms

/// A TRS transform in a file.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransformFile {
    /// Translation.
    #[serde(default)]
    pub translation: (f32, f32, f32),
    /// Rotation quaternion `(x, y, z, w)`.
    #[serde(default = "identity_rotation")]
    pub rotation: (f32, f32, f32, f32),
    /// Scale.
    #[serde(default = "unit_scale")]
    pub scale: (f32, f32, f32),
}

fn identity_rotation() -> (f32, f32, f32, f32) {
    (0.0, 0.0, 0.0, 1.0)
}

fn unit_scale() -> (f32, f32, f32) {
    (1.0, 1.0, 1.0)
}

impl Default for TransformFile {
    fn default() -> Self {
        Self::from(&Transform::IDENTITY)
    }
}

fn is_identity(t: &TransformFile) -> bool {
    *t == TransformFile::default()
}

impl From<&Transform> for TransformFile {
    fn from(t: &Transform) -> Self {
        TransformFile {
            translation: t.translation.into(),
            rotation: t.rotation.into(),
            scale: t.scale.into(),
        }
    }
}

impl TransformFile {
    /// Converts, refusing non-finite values and a zero-length rotation (which is normalized).
    pub fn to_transform(&self, at: &str) -> Result<Transform, FieldError> {
        let t = Transform {
            translation: self.translation.into(),
            rotation: Quat::from_xyzw(self.rotation.0, self.rotation.1, self.rotation.2, self.rotation.3),
            scale: self.scale.into(),
        };
        if !t.is_finite() {
            return Err(field_error(at, "a transform value is not finite"));
        }
        let len = t.rotation.length();
        if len.is_nan() || len <= 1e-6 {
            return Err(field_error(at, "the rotation quaternion has zero length"));
        }
        if (len - 1.0).abs() > 1e-4 {
            return Err(field_error(at, format!("the rotation quaternion has length {len}, not 1")));
        }
        Ok(t)
    }
}

// ------------------------------------------------------------------------------------ tracks

/// A keyframe track in a file: parallel `times`/`values`, tangents for CUBICSPLINE, the track's
/// default easing by name and per-key easings by name (`None`: the default).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrackFile<V> {
    /// Interpolation (`Step`, `Linear`, `CubicSpline`).
    pub interpolation: Interpolation,
    /// Default easing name for LINEAR segments.
    #[serde(default = "linear_name", skip_serializing_if = "is_linear_name")]
    pub easing: String,
    /// Key times, seconds.
    pub times: Vec<f32>,
    /// Key values.
    pub values: Vec<V>,
    /// CUBICSPLINE in tangents.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub in_tangents: Vec<V>,
    /// CUBICSPLINE out tangents.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub out_tangents: Vec<V>,
    /// Per-key easing of the segment each key starts (by name).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub key_easings: Vec<Option<String>>,
    /// CUBICSPLINE keys' tangent modes, one per key (absent: every key `Free`, its tangents as
    /// written).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tangent_modes: Vec<TangentMode>,
}

pub(crate) fn linear_name() -> String {
    "linear".to_owned()
}

pub(crate) fn is_linear_name(s: &String) -> bool {
    s == "linear"
}

/// The name an easing is written as.
pub fn ease_name(e: &Ease) -> String {
    match e {
        Ease::Named(n) => n.name().to_owned(),
        Ease::Bezier(b) => format!("cubic-bezier({}, {}, {}, {})", b.x1, b.y1, b.x2, b.y2),
    }
}

/// Reads an easing name (a named curve or `cubic-bezier(x1, y1, x2, y2)`).
pub fn parse_ease(name: &str) -> Result<Ease, String> {
    if let Some(args) = name.strip_prefix("cubic-bezier(").and_then(|r| r.strip_suffix(')')) {
        let v: Vec<f32> = args
            .split(',')
            .map(|a| a.trim().parse::<f32>())
            .collect::<Result<_, _>>()
            .map_err(|e| format!("{name:?}: {e}"))?;
        if v.len() != 4 {
            return Err(format!("{name:?}: a cubic-bezier takes four numbers"));
        }
        return CubicBezier::new(v[0], v[1], v[2], v[3]).map(Ease::Bezier).map_err(|e| e.to_string());
    }
    Easing::from_name(name).map(Ease::Named).map_err(|e| e.to_string())
}

/// A value type written as a tuple.
pub trait TupleValue: Animatable {
    /// The tuple form.
    type Tuple: Serialize + for<'de> Deserialize<'de> + Clone + Copy + std::fmt::Debug + PartialEq;
    /// To the tuple.
    fn to_tuple(self) -> Self::Tuple;
    /// From the tuple.
    fn from_tuple(t: Self::Tuple) -> Self;
}

impl TupleValue for Vec3 {
    type Tuple = (f32, f32, f32);
    fn to_tuple(self) -> Self::Tuple {
        self.into()
    }
    fn from_tuple(t: Self::Tuple) -> Self {
        t.into()
    }
}

impl TupleValue for Quat {
    type Tuple = (f32, f32, f32, f32);
    fn to_tuple(self) -> Self::Tuple {
        self.into()
    }
    fn from_tuple(t: Self::Tuple) -> Self {
        Quat::from_xyzw(t.0, t.1, t.2, t.3)
    }
}

impl<T: TupleValue> From<&Track<T>> for TrackFile<T::Tuple> {
    fn from(t: &Track<T>) -> Self {
        let key_easings: Vec<Option<String>> =
            t.key_easings().iter().map(|e| e.as_ref().map(ease_name)).collect();
        TrackFile {
            interpolation: t.interpolation(),
            easing: ease_name(&t.default_easing()),
            times: t.times().to_vec(),
            values: t.values().iter().map(|v| v.to_tuple()).collect(),
            in_tangents: t.in_tangents().iter().map(|v| v.to_tuple()).collect(),
            out_tangents: t.out_tangents().iter().map(|v| v.to_tuple()).collect(),
            key_easings: if key_easings.iter().all(Option::is_none) { Vec::new() } else { key_easings },
            tangent_modes: t.tangent_modes().to_vec(),
        }
    }
}

impl<V: Copy> TrackFile<V> {
    /// Converts to a track, checking it ([`Track::find_fault`]) and every easing name.
    pub fn to_track<T: TupleValue<Tuple = V>>(&self, at: &str) -> Result<Track<T>, FieldError> {
        let values = self.values.iter().map(|v| T::from_tuple(*v)).collect();
        let mut track = if self.interpolation == Interpolation::CubicSpline {
            Track::cubic_from_keys(
                self.times.clone(),
                self.in_tangents.iter().map(|v| T::from_tuple(*v)).collect(),
                values,
                self.out_tangents.iter().map(|v| T::from_tuple(*v)).collect(),
            )
        } else {
            // LINEAR and STEP rotation keys are unit quaternions ([`Animatable::unit_key`]).
            let values = values.into_iter().map(|v: T| if v.is_finite_value() { v.unit_key() } else { v });
            Track::from_keys(self.interpolation, self.times.clone(), values.collect())
        }
        .map_err(|e| field_error(at, e))?;
        track.set_default_easing(
            parse_ease(&self.easing).map_err(|e| field_error(format!("{at}/easing"), e))?,
        );
        if !self.key_easings.is_empty() && self.key_easings.len() != self.times.len() {
            return Err(field_error(
                format!("{at}/key_easings"),
                entries_for_keys(self.key_easings.len(), self.times.len()),
            ));
        }
        for (i, e) in self.key_easings.iter().enumerate() {
            if let Some(name) = e {
                let ease = parse_ease(name).map_err(|m| field_error(format!("{at}/key_easings[{i}]"), m))?;
                track.set_key_easing(i, Some(ease));
            }
        }
        if !self.tangent_modes.is_empty() {
            let n = self.tangent_modes.len();
            track.set_tangent_modes(self.tangent_modes.clone()).map_err(|_| {
                field_error(
                    format!("{at}/tangent_modes"),
                    if self.interpolation == Interpolation::CubicSpline {
                        entries_for_keys(n, self.times.len())
                    } else {
                        "tangent modes belong to CubicSpline tracks".to_owned()
                    },
                )
            })?;
        }
        Ok(track)
    }

    /// Converts as much of the track as is sound, naming every fault (`at` and the key): keys
    /// with a non-finite time, value or tangent (or a zero rotation) are dropped, keys out of
    /// order are put in order (a key at the time of an earlier one is dropped), unknown easing
    /// names fall back to linear, and arrays that are not parallel are cut to the shortest.
    /// Returns `None` when no key survives.
    pub fn repair<T: TupleValue<Tuple = V>>(&self, at: &str) -> (Option<Track<T>>, Vec<FieldError>) {
        let mut faults = Vec::new();
        let cubic = self.interpolation == Interpolation::CubicSpline;
        let mut n = self.times.len().min(self.values.len());
        if cubic {
            n = n.min(self.in_tangents.len()).min(self.out_tangents.len());
        }
        if n != self.times.len()
            || n != self.values.len()
            || (cubic && (n != self.in_tangents.len() || n != self.out_tangents.len()))
        {
            let tangents = if cubic { self.in_tangents.len().min(self.out_tangents.len()) } else { 0 };
            faults.push(field_error(
                at,
                format!(
                    "{}; the keys past {n} are dropped",
                    crate::track::TrackFault::NotParallel {
                        times: self.times.len(),
                        values: self.values.len(),
                        tangents
                    }
                ),
            ));
        }
        let default = parse_ease(&self.easing).unwrap_or_else(|m| {
            faults.push(field_error(format!("{at}/easing"), format!("{m}; linear is used")));
            Ease::default()
        });
        if !self.key_easings.is_empty() && self.key_easings.len() != self.times.len() {
            faults.push(field_error(
                format!("{at}/key_easings"),
                format!(
                    "{}; the missing ones are the default",
                    entries_for_keys(self.key_easings.len(), self.times.len())
                ),
            ));
        }
        // (time, value, in, out, easing, original index)
        type Key<T> = (f32, T, T, T, Option<Ease>, usize);
        let mut keys: Vec<Key<T>> = Vec::with_capacity(n);
        for i in 0..n {
            let t = self.times[i];
            let v = T::from_tuple(self.values[i]);
            let (a, b) = if cubic {
                (T::from_tuple(self.in_tangents[i]), T::from_tuple(self.out_tangents[i]))
            } else {
                (T::ZERO, T::ZERO)
            };
            if !t.is_finite() {
                faults.push(field_error(
                    at,
                    format!("key {i} has a non-finite time ({t}); the key is dropped"),
                ));
                continue;
            }
            if !(v.is_finite_value() && a.is_finite_value() && b.is_finite_value()) {
                faults.push(field_error(
                    at,
                    format!("key {i} at t = {} has a non-finite value; the key is dropped", Num(t)),
                ));
                continue;
            }
            if T::is_zero_rotation(&v) {
                faults.push(field_error(
                    at,
                    format!("key {i} at t = {} is a zero-length rotation; the key is dropped", Num(t)),
                ));
                continue;
            }
            // LINEAR and STEP rotation keys are unit quaternions: one off unit length (a hand-
            // written `(0, 0, 1, 1)`, or `(-1e38, 0, 0, 1)`) is kept as its rotation.
            let v = if cubic { v } else { v.unit_key() };
            let easing = match self.key_easings.get(i).cloned().flatten() {
                Some(name) => match parse_ease(&name) {
                    Ok(e) => Some(e),
                    Err(m) => {
                        faults.push(field_error(
                            format!("{at}/key_easings[{i}]"),
                            format!("{m}; the track's default is used"),
                        ));
                        None
                    }
                },
                None => None,
            };
            keys.push((t, v, a, b, easing, i));
        }
        let sorted = keys.windows(2).all(|w| w[0].0 < w[1].0);
        if !sorted {
            keys.sort_by(|x, y| x.0.total_cmp(&y.0));
            let mut kept: Vec<Key<T>> = Vec::with_capacity(keys.len());
            for k in keys {
                match kept.last() {
                    Some(last) if last.0 == k.0 => faults.push(field_error(
                        at,
                        format!(
                            "key {} at t = {} has the time of key {}; the key is dropped",
                            k.5,
                            Num(k.0),
                            last.5
                        ),
                    )),
                    _ => kept.push(k),
                }
            }
            faults.push(field_error(at, "the keys are not in time order; they are put in order"));
            keys = kept;
        }
        if keys.is_empty() {
            return (None, faults);
        }
        let times: Vec<f32> = keys.iter().map(|k| k.0).collect();
        let values: Vec<T> = keys.iter().map(|k| k.1).collect();
        let built = if cubic {
            Track::cubic_from_keys_unchecked(
                times,
                keys.iter().map(|k| k.2).collect(),
                values,
                keys.iter().map(|k| k.3).collect(),
            )
        } else {
            Track::from_keys_unchecked(self.interpolation, times, values)
        };
        let Ok(mut track) = built else { return (None, faults) };
        track.set_default_easing(default);
        for (j, k) in keys.iter().enumerate() {
            if let Some(e) = k.4 {
                track.set_key_easing(j, Some(e));
            }
        }
        let kept: Vec<usize> = keys.iter().map(|k| k.5).collect();
        self.repair_tangent_modes(at, &kept, &mut track, &mut faults);
        (Some(track), faults)
    }

    /// The tangent modes of a repaired track: those of the keys kept (`kept`: their indices in
    /// the file), a missing one Free; dropped with a fault on a track that is not CUBICSPLINE.
    fn repair_tangent_modes<T: TupleValue<Tuple = V>>(
        &self,
        at: &str,
        kept: &[usize],
        track: &mut Track<T>,
        faults: &mut Vec<FieldError>,
    ) {
        if self.tangent_modes.is_empty() {
            return;
        }
        let at = format!("{at}/tangent_modes");
        if self.interpolation != Interpolation::CubicSpline {
            faults.push(field_error(at, "tangent modes belong to CubicSpline tracks; they are dropped"));
            return;
        }
        if self.tangent_modes.len() != self.times.len() {
            let (n, keys) = (self.tangent_modes.len(), self.times.len());
            faults.push(field_error(at, format!("{}; the missing ones are Free", entries_for_keys(n, keys))));
        }
        let modes = kept.iter().map(|i| self.tangent_modes.get(*i).copied().unwrap_or_default());
        let _ = track.set_tangent_modes(modes.collect());
    }
}

/// A property animation in a file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PropertyAnimationFile {
    /// Translation track.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub translation: Option<TrackFile<(f32, f32, f32)>>,
    /// Rotation track.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotation: Option<TrackFile<(f32, f32, f32, f32)>>,
    /// Scale track.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<TrackFile<(f32, f32, f32)>>,
    /// Wrap at the end.
    #[serde(default, skip_serializing_if = "is_false")]
    pub looping: bool,
    /// Hold past the last key.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub length: f32,
    /// Start playing on the first simulation step.
    #[serde(default = "yes")]
    pub play_on_start: bool,
}

impl From<&PropertyAnimation> for PropertyAnimationFile {
    fn from(a: &PropertyAnimation) -> Self {
        PropertyAnimationFile {
            translation: a.translation.as_ref().map(TrackFile::from),
            rotation: a.rotation.as_ref().map(TrackFile::from),
            scale: a.scale.as_ref().map(TrackFile::from),
            looping: a.looping,
            length: a.length,
            play_on_start: a.play_on_start,
        }
    }
}

impl PropertyAnimationFile {
    /// Converts, checking every track.
    pub fn to_animation(&self, at: &str) -> Result<PropertyAnimation, FieldError> {
        if !(self.length.is_finite() && self.length >= 0.0) {
            return Err(field_error(format!("{at}/length"), "not a finite, non-negative number of seconds"));
        }
        Ok(PropertyAnimation {
            translation: self
                .translation
                .as_ref()
                .map(|t| t.to_track(&format!("{at}/translation")))
                .transpose()?,
            rotation: self.rotation.as_ref().map(|t| t.to_track(&format!("{at}/rotation"))).transpose()?,
            scale: self.scale.as_ref().map(|t| t.to_track(&format!("{at}/scale"))).transpose()?,
            looping: self.looping,
            length: self.length,
            play_on_start: self.play_on_start,
        })
    }
}

// ------------------------------------------------------------------------------------ scenes

/// A scene file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SceneFile {
    /// Format version ([`FILE_VERSION`]).
    pub version: u32,
    /// Scene name.
    pub name: String,
    /// Root entities.
    #[serde(default)]
    pub entities: Vec<EntityFile>,
}

/// An entity in a scene file, with its children.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EntityFile {
    /// Name (unique among siblings).
    pub name: String,
    /// Local transform (absent: no Transform component).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transform: Option<TransformFile>,
    /// Animator (makes the entity a rig).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub animator: Option<AnimatorFile>,
    /// Mesh.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mesh: Option<MeshFile>,
    /// Bone socket.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<SocketFile>,
    /// Property animation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub animation: Option<PropertyAnimationFile>,
    /// Default morph weights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub morph_weights: Option<Vec<f32>>,
    /// Particle cloud.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub particles: Option<ParticleCloudFile>,
    /// Crowd.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crowd: Option<CrowdFile>,
    /// Children.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<EntityFile>,
}

/// An Animator in a scene file: only its authored settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnimatorFile {
    /// Rig (skeleton) reference: `path` or `path#skeleton name`.
    pub rig: String,
    /// Starting clip reference: a clip file path or `path#animation name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clip: Option<String>,
    /// A blend graph played instead of the clip: a `.graph.ron` path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph: Option<String>,
    /// Overrides the clip's own looping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub looping: Option<bool>,
    /// Playback speed.
    #[serde(default = "one")]
    pub speed: f32,
    /// Start playing on the first simulation step.
    #[serde(default = "yes")]
    pub play_on_start: bool,
    /// Root motion taken from a bone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_motion: Option<RootMotionFile>,
    /// Entities whose positions drive the graph's vector parameters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<TargetFile>,
}

/// A target binding in a scene file: `(parameter: "look", entity: "LookTarget")` sets the
/// graph's `look_x`, `look_y`, `look_z` to the entity's position in the rig's model space.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetFile {
    /// The parameters' prefix.
    pub parameter: String,
    /// The entity's path.
    pub entity: String,
}

/// Root motion in a scene file: `(bone: "hips", translate: "XZ", yaw: true)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RootMotionFile {
    /// The bone that carries the motion, by name.
    pub bone: String,
    /// Translation axes taken, as letters (`"XZ"`; `""` for none).
    #[serde(default = "xz")]
    pub translate: String,
    /// Whether the heading (yaw about +Y) is taken.
    #[serde(default = "yes")]
    pub yaw: bool,
}

fn xz() -> String {
    "XZ".to_owned()
}

impl From<&RootMotionDesc> for RootMotionFile {
    fn from(d: &RootMotionDesc) -> Self {
        RootMotionFile { bone: d.bone.clone(), translate: d.axes_letters(), yaw: d.yaw }
    }
}

impl RootMotionFile {
    fn to_desc(&self, at: &str) -> Result<RootMotionDesc, FieldError> {
        if self.bone.is_empty() {
            return Err(field_error(format!("{at}: animator.root_motion.bone"), "names no bone"));
        }
        let axes = RootMotionDesc::parse_axes(&self.translate).ok_or_else(|| {
            field_error(
                format!("{at}: animator.root_motion.translate"),
                format!("{:?} is not a set of axes (letters X, Y, Z, each once)", self.translate),
            )
        })?;
        Ok(RootMotionDesc { bone: self.bone.clone(), axes, yaw: self.yaw })
    }
}

/// A mesh in a scene file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum MeshFile {
    /// A mesh in an asset: `path#mesh name`.
    Asset(String),
    /// A box primitive.
    Box {
        /// Half extents.
        half_extents: (f32, f32, f32),
    },
}

/// A particle cloud in a scene file: points scattered over a skinned mesh, bound to the rig at or
/// above the entity. Every field but the mesh has a default.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParticleCloudFile {
    /// The skinned mesh sampled: `path#mesh name`.
    pub mesh: String,
    /// Number of points.
    #[serde(default = "cloud_count")]
    pub count: u32,
    /// Scatter seed.
    #[serde(default = "cloud_seed")]
    pub seed: u64,
    /// Binding falloff band (model units; 0 binds rigidly).
    #[serde(default = "cloud_falloff")]
    pub falloff: f32,
    /// Disc radius (model units).
    #[serde(default = "cloud_radius")]
    pub radius: f32,
    /// Linear RGBA colour.
    #[serde(default = "cloud_color")]
    pub color: (f32, f32, f32, f32),
    /// Bone groups, each with its mass.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<CloudGroupFile>,
    /// Springs (absent: particles sit on their skinned targets).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub springs: Option<SpringFile>,
}

/// A bone group of a particle cloud.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CloudGroupFile {
    /// Bone names.
    pub bones: Vec<String>,
    /// Mass.
    #[serde(default = "one")]
    pub mass: f32,
}

/// A particle cloud's springs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpringFile {
    /// Stiffness.
    pub stiffness: f32,
    /// Damping.
    pub damping: f32,
}

fn cloud_count() -> u32 {
    CloudSettings::default().count
}
fn cloud_seed() -> u64 {
    CloudSettings::default().seed
}
fn cloud_falloff() -> f32 {
    CloudSettings::default().falloff
}
fn cloud_radius() -> f32 {
    CloudSettings::default().radius
}
fn cloud_color() -> (f32, f32, f32, f32) {
    CloudSettings::default().color.into()
}

impl From<&ParticleCloudDesc> for ParticleCloudFile {
    fn from(d: &ParticleCloudDesc) -> Self {
        let s = &d.settings;
        ParticleCloudFile {
            mesh: d.mesh.clone(),
            count: s.count,
            seed: s.seed,
            falloff: s.falloff,
            radius: s.radius,
            color: s.color.into(),
            groups: s
                .groups
                .iter()
                .map(|g| CloudGroupFile { bones: g.bones.clone(), mass: g.mass })
                .collect(),
            springs: s.springs.map(|p| SpringFile { stiffness: p.stiffness, damping: p.damping }),
        }
    }
}

impl ParticleCloudFile {
    /// The authored cloud; `at` names the entity for errors. Numbers must be finite and
    /// non-negative (masses positive), the count at most [`crate::particles::MAX_PARTICLES`].
    pub fn to_desc(&self, at: &str) -> Result<ParticleCloudDesc, FieldError> {
        let check = |what: &str, v: f32, positive: bool| {
            if v.is_finite() && (v > 0.0 || (!positive && v == 0.0)) {
                Ok(())
            } else {
                Err(field_error(
                    format!("{at}: particles.{what}"),
                    if positive {
                        "must be a finite positive number"
                    } else {
                        "must be a finite non-negative number"
                    },
                ))
            }
        };
        check("falloff", self.falloff, false)?;
        check("radius", self.radius, false)?;
        if self.count > crate::particles::MAX_PARTICLES {
            return Err(field_error(format!("{at}: particles.count"), "must be at most 2000000"));
        }
        let (r, g, b, a) = self.color;
        for (k, v) in [r, g, b, a].into_iter().enumerate() {
            if !(0.0..=1.0).contains(&v) {
                return Err(field_error(format!("{at}: particles.color[{k}]"), "must be within 0 and 1"));
            }
        }
        for (k, grp) in self.groups.iter().enumerate() {
            check(&format!("groups[{k}].mass"), grp.mass, true)?;
        }
        if let Some(sp) = &self.springs {
            check("springs.stiffness", sp.stiffness, false)?;
            check("springs.damping", sp.damping, false)?;
        }
        Ok(ParticleCloudDesc {
            mesh: self.mesh.clone(),
            settings: CloudSettings {
                count: self.count,
                seed: self.seed,
                falloff: self.falloff,
                radius: self.radius,
                color: [r, g, b, a],
                groups: self
                    .groups
                    .iter()
                    .map(|g| CloudGroup { bones: g.bones.clone(), mass: g.mass })
                    .collect(),
                springs: self
                    .springs
                    .as_ref()
                    .map(|p| SpringSettings { stiffness: p.stiffness, damping: p.damping }),
            },
        })
    }
}

/// A crowd in a scene file: a skinned mesh on a rig, the clips baked for it, and how many
/// instances stand where. The baked table is derived (never in the file).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrowdFile {
    /// Rig (skeleton) reference.
    pub rig: String,
    /// Skinned mesh reference (`path#mesh name`).
    pub mesh: String,
    /// Clip references baked (instance `i` plays clip `i % clips`).
    pub clips: Vec<String>,
    /// Frames baked per clip.
    #[serde(default = "crowd_frames")]
    pub frames: u32,
    /// Instances.
    pub count: u32,
    /// Placement.
    #[serde(default = "crowd_layout")]
    pub layout: CrowdLayoutFile,
    /// Placement seed.
    #[serde(default = "crowd_seed")]
    pub seed: u64,
    /// Slowest and fastest playback speed.
    #[serde(default = "crowd_speed")]
    pub speed: (f32, f32),
    /// Each member's own transform inside its placement (e.g. a Z-up model turned Y-up).
    #[serde(default, skip_serializing_if = "is_identity")]
    pub member: TransformFile,
}

/// How a crowd's instances are placed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum CrowdLayoutFile {
    /// Rows and columns `spacing` apart.
    Grid {
        /// Distance between neighbours.
        spacing: f32,
    },
    /// Scattered over a square of side `extent` (by the crowd's seed).
    Scattered {
        /// Side of the square.
        extent: f32,
    },
}

fn crowd_frames() -> u32 {
    30
}
fn crowd_layout() -> CrowdLayoutFile {
    CrowdLayoutFile::Grid { spacing: 1.5 }
}
fn crowd_seed() -> u64 {
    1
}
fn crowd_speed() -> (f32, f32) {
    (0.9, 1.1)
}

impl From<&CrowdDesc> for CrowdFile {
    fn from(d: &CrowdDesc) -> Self {
        use crate::crowd::layout::Layout;
        CrowdFile {
            rig: d.rig.clone(),
            mesh: d.mesh.clone(),
            clips: d.clips.clone(),
            frames: d.frames,
            count: d.count,
            layout: match d.layout {
                Layout::Grid { spacing } => CrowdLayoutFile::Grid { spacing },
                Layout::Scattered { extent } => CrowdLayoutFile::Scattered { extent },
            },
            seed: d.seed,
            speed: d.speed,
            member: (&d.member).into(),
        }
    }
}

impl CrowdFile {
    /// The authored crowd; `at` names the entity for errors. At least one clip, frames from 1 to
    /// [`crate::crowd::MAX_FRAMES`], at most [`crate::crowd::MAX_INSTANCES`] instances, finite
    /// positive spacing or extent, a finite speed range low to high.
    pub fn to_desc(&self, at: &str) -> Result<CrowdDesc, FieldError> {
        use crate::crowd::layout::Layout;
        let err = |field: &str, msg: &str| Err(field_error(format!("{at}: crowd.{field}"), msg));
        if self.clips.is_empty() {
            return err("clips", "a crowd needs at least one clip");
        }
        if self.frames == 0 || self.frames > crate::crowd::MAX_FRAMES {
            return err("frames", "must be from 1 to 4096");
        }
        if self.count > crate::crowd::MAX_INSTANCES {
            return err("count", "must be at most 1000000");
        }
        let layout = match self.layout {
            CrowdLayoutFile::Grid { spacing } if spacing.is_finite() && spacing > 0.0 => {
                Layout::Grid { spacing }
            }
            CrowdLayoutFile::Scattered { extent } if extent.is_finite() && extent > 0.0 => {
                Layout::Scattered { extent }
            }
            _ => return err("layout", "spacing and extent must be finite positive numbers"),
        };
        let (lo, hi) = self.speed;
        if !(lo.is_finite() && hi.is_finite() && lo <= hi) {
            return err("speed", "must be two finite numbers, low then high");
        }
        Ok(CrowdDesc {
            rig: self.rig.clone(),
            mesh: self.mesh.clone(),
            clips: self.clips.clone(),
            frames: self.frames,
            count: self.count,
            layout,
            seed: self.seed,
            speed: self.speed,
            member: self.member.to_transform(&format!("{at}: crowd.member"))?,
        })
    }
}

/// A bone socket in a scene file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SocketFile {
    /// Bone name.
    pub bone: String,
    /// Offset in the bone's frame.
    #[serde(default, skip_serializing_if = "is_identity")]
    pub offset: TransformFile,
}

impl From<&EntityDesc> for EntityFile {
    fn from(d: &EntityDesc) -> Self {
        EntityFile {
            name: d.name.clone(),
            transform: d.transform.as_ref().map(TransformFile::from),
            animator: d.animator.as_ref().map(|a| AnimatorFile {
                rig: a.rig.clone(),
                clip: a.clip.clone(),
                graph: a.graph.clone(),
                looping: a.looping,
                speed: a.speed,
                play_on_start: a.play_on_start,
                root_motion: a.root_motion.as_ref().map(RootMotionFile::from),
                targets: a
                    .targets
                    .iter()
                    .map(|t| TargetFile { parameter: t.parameter.clone(), entity: t.entity.clone() })
                    .collect(),
            }),
            mesh: d.mesh.as_ref().map(|m| match m {
                MeshDesc::Asset(r) => MeshFile::Asset(r.clone()),
                MeshDesc::Box { half_extents } => MeshFile::Box { half_extents: (*half_extents).into() },
            }),
            socket: d
                .socket
                .as_ref()
                .map(|s| SocketFile { bone: s.bone.clone(), offset: (&s.offset).into() }),
            animation: d.animation.as_ref().map(PropertyAnimationFile::from),
            morph_weights: d.morph_weights.clone(),
            particles: d.particles.as_ref().map(ParticleCloudFile::from),
            crowd: d.crowd.as_ref().map(CrowdFile::from),
            children: d.children.iter().map(EntityFile::from).collect(),
        }
    }
}

impl From<&SceneDesc> for SceneFile {
    fn from(s: &SceneDesc) -> Self {
        SceneFile {
            version: FILE_VERSION,
            name: s.name.clone(),
            entities: s.entities.iter().map(EntityFile::from).collect(),
        }
    }
}

fn entity_desc(f: &EntityFile, parent: &str) -> Result<EntityDesc, FieldError> {
    let at = if parent.is_empty() { format!("entity {}", f.name) } else { format!("{parent}/{}", f.name) };
    if f.name.is_empty() || f.name.contains('/') {
        return Err(field_error(&at, "an entity name must be non-empty and contain no '/'"));
    }
    let animator = match &f.animator {
        Some(a) => {
            if !a.speed.is_finite() {
                return Err(field_error(format!("{at}: animator.speed"), "not finite"));
            }
            Some(AnimatorDesc {
                rig: a.rig.clone(),
                clip: a.clip.clone(),
                graph: a.graph.clone(),
                looping: a.looping,
                speed: a.speed,
                play_on_start: a.play_on_start,
                root_motion: a.root_motion.as_ref().map(|r| r.to_desc(&at)).transpose()?,
                targets: a
                    .targets
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        if t.parameter.is_empty() || t.entity.is_empty() {
                            Err(field_error(
                                format!("{at}: animator.targets[{i}]"),
                                "a target needs a parameter prefix and an entity path",
                            ))
                        } else {
                            Ok(TargetBinding { parameter: t.parameter.clone(), entity: t.entity.clone() })
                        }
                    })
                    .collect::<Result<_, _>>()?,
            })
        }
        None => None,
    };
    let mesh = match &f.mesh {
        Some(MeshFile::Asset(r)) => Some(MeshDesc::Asset(r.clone())),
        Some(MeshFile::Box { half_extents }) => {
            let h = Vec3::from(*half_extents);
            if !h.is_finite() || h.min_element() < 0.0 {
                return Err(field_error(
                    format!("{at}: mesh.half_extents"),
                    "must be finite and non-negative",
                ));
            }
            Some(MeshDesc::Box { half_extents: h })
        }
        None => None,
    };
    let mut children: Vec<EntityDesc> = Vec::with_capacity(f.children.len());
    for c in &f.children {
        let d = entity_desc(c, &at)?;
        if children.iter().any(|x| x.name == d.name) {
            return Err(field_error(
                format!("{at}/{}", d.name),
                "another child of the same parent has this name",
            ));
        }
        children.push(d);
    }
    Ok(EntityDesc {
        name: f.name.clone(),
        transform: f.transform.as_ref().map(|t| t.to_transform(&format!("{at}: transform"))).transpose()?,
        animator,
        mesh,
        socket: f
            .socket
            .as_ref()
            .map(|s| {
                Ok::<_, FieldError>(SocketDesc {
                    bone: s.bone.clone(),
                    offset: s.offset.to_transform(&format!("{at}: socket.offset"))?,
                })
            })
            .transpose()?,
        animation: f.animation.as_ref().map(|a| a.to_animation(&format!("{at}: animation"))).transpose()?,
        morph_weights: match &f.morph_weights {
            Some(w) if w.iter().any(|x| !x.is_finite()) => {
                return Err(field_error(format!("{at}: morph_weights"), "a weight is not finite"));
            }
            w => w.clone(),
        },
        particles: f.particles.as_ref().map(|p| p.to_desc(&at)).transpose()?,
        crowd: f.crowd.as_ref().map(|c| c.to_desc(&at)).transpose()?,
        children,
    })
}

impl TryFrom<&SceneFile> for SceneDesc {
    type Error = FieldError;
    fn try_from(f: &SceneFile) -> Result<Self, FieldError> {
        let mut entities: Vec<EntityDesc> = Vec::with_capacity(f.entities.len());
        for e in &f.entities {
            let d = entity_desc(e, "")?;
            if entities.iter().any(|x| x.name == d.name) {
                return Err(field_error(format!("entity {}", d.name), "another root entity has this name"));
            }
            entities.push(d);
        }
        Ok(SceneDesc { name: f.name.clone(), entities })
    }
}

// ------------------------------------------------------------------------------------ clips

/// A clip file of format 1: an authored clip for a named skeleton, with the skeleton's bone names
/// (so the clip's channel table can be rebuilt without it) and tracks by bone name, each track's
/// keys as parallel arrays (`times`, `values`, ...). Still read; written as format 2
/// ([`super::clip_file::ClipFile`], a key a line), which converts through this form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClipFileV1 {
    /// Format version ([`FILE_VERSION`]).
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
    /// Tracks by bone.
    #[serde(default)]
    pub tracks: Vec<BoneTracksFile>,
    /// Markers.
    #[serde(default)]
    pub markers: Vec<MarkerFile>,
}

/// One bone's tracks in a clip file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoneTracksFile {
    /// Bone name.
    pub bone: String,
    /// Translation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub translation: Option<TrackFile<(f32, f32, f32)>>,
    /// Rotation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotation: Option<TrackFile<(f32, f32, f32, f32)>>,
    /// Scale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<TrackFile<(f32, f32, f32)>>,
}

/// A marker in a clip file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MarkerFile {
    /// Name.
    pub name: String,
    /// Time, seconds.
    pub time: f32,
}

/// An authored clip with the bone names of the skeleton it was authored for.
///
/// The clip is shared: the project, the editor's undo steps and the running library hold the
/// same `Arc` (and with it the clip's compiled form) until an edit replaces it
/// (`Arc::make_mut` copies it then).
#[derive(Clone, Debug, PartialEq)]
pub struct ClipAsset {
    /// The clip.
    pub clip: Arc<Clip>,
    /// Bone names of its skeleton, in bone order (parallel to `Clip::channels()`).
    pub bones: Vec<String>,
}

impl From<&ClipAsset> for ClipFileV1 {
    fn from(c: &ClipAsset) -> Self {
        let clip = &c.clip;
        ClipFileV1 {
            version: FILE_VERSION,
            name: clip.name.clone(),
            skeleton: clip.skeleton.clone(),
            bones: c.bones.clone(),
            looping: clip.looping,
            length: clip.length,
            frame_rate: clip.frame_rate,
            default_interpolation: clip.default_interpolation,
            tracks: clip
                .channels()
                .iter()
                .zip(&c.bones)
                .filter(|(ch, _)| !ch.is_empty())
                .map(|(ch, bone)| BoneTracksFile {
                    bone: bone.clone(),
                    translation: ch.translation.as_ref().map(TrackFile::from),
                    rotation: ch.rotation.as_ref().map(TrackFile::from),
                    scale: ch.scale.as_ref().map(TrackFile::from),
                })
                .collect(),
            markers: clip
                .markers()
                .iter()
                .map(|m| MarkerFile { name: m.name.clone(), time: m.time })
                .collect(),
        }
    }
}

impl ClipFileV1 {
    /// Each bone name's index in the clip's bone list (the first where a name repeats), so
    /// matching tracks to bones is one lookup each.
    fn bone_index(&self) -> std::collections::HashMap<&str, usize> {
        let mut out = std::collections::HashMap::with_capacity(self.bones.len());
        for (i, b) in self.bones.iter().enumerate() {
            out.entry(b.as_str()).or_insert(i);
        }
        out
    }
}

impl TryFrom<&ClipFileV1> for ClipAsset {
    type Error = FieldError;
    fn try_from(f: &ClipFileV1) -> Result<Self, FieldError> {
        let mut channels = vec![BoneChannels::default(); f.bones.len()];
        let bone_index = f.bone_index();
        for t in &f.tracks {
            let at = format!("tracks/{}", t.bone);
            let Some(&i) = bone_index.get(t.bone.as_str()) else {
                return Err(field_error(at, format!("no bone {:?} in the clip's bone list", t.bone)));
            };
            if !channels[i].is_empty() {
                return Err(field_error(at, "this bone's tracks are given twice"));
            }
            channels[i] = BoneChannels {
                translation: t
                    .translation
                    .as_ref()
                    .map(|x| x.to_track(&format!("{at}/translation")))
                    .transpose()?,
                rotation: t.rotation.as_ref().map(|x| x.to_track(&format!("{at}/rotation"))).transpose()?,
                scale: t.scale.as_ref().map(|x| x.to_track(&format!("{at}/scale"))).transpose()?,
            };
        }
        if !(f.length.is_finite() && f.length >= 0.0) {
            return Err(field_error("length", "not a finite, non-negative number of seconds"));
        }
        if !(f.frame_rate.is_finite() && f.frame_rate > 0.0 && f.frame_rate <= 1000.0) {
            return Err(field_error("frame_rate", "not a number of frames per second in (0, 1000]"));
        }
        let mut clip = Clip::new(f.name.clone(), &Skeleton::empty(&f.skeleton));
        *clip.channels_mut() = channels;
        clip.looping = f.looping;
        clip.length = f.length;
        clip.frame_rate = f.frame_rate;
        clip.default_interpolation = f.default_interpolation;
        // Markers outside the clip are a clip fault (`find_clip_fault`), named by the project
        // check; the file itself is sound.
        clip.set_markers(f.markers.iter().map(|m| Marker { name: m.name.clone(), time: m.time }).collect());
        Ok(ClipAsset { clip: Arc::new(clip), bones: f.bones.clone() })
    }
}

impl ClipAsset {
    /// Reads a clip file keeping everything that is sound and naming every fault with its
    /// place (track and key): faulty keys are dropped or reordered (see [`TrackFile::repair`]),
    /// tracks of unknown or repeated bones are dropped, a bad length or frame rate takes its
    /// default. The strict `TryFrom` refuses the first of these faults instead.
    pub fn repair(f: &ClipFileV1) -> (ClipAsset, Vec<FieldError>) {
        let mut faults = Vec::new();
        let mut channels = vec![BoneChannels::default(); f.bones.len()];
        let mut seen = vec![false; f.bones.len()];
        let bone_index = f.bone_index();
        for t in &f.tracks {
            let at = format!("tracks/{}", t.bone);
            let Some(&i) = bone_index.get(t.bone.as_str()) else {
                faults.push(field_error(
                    at,
                    format!("no bone {:?} in the clip's bone list; the tracks are dropped", t.bone),
                ));
                continue;
            };
            if std::mem::replace(&mut seen[i], true) {
                faults.push(field_error(at, "this bone's tracks are given twice; the second set is dropped"));
                continue;
            }
            let mut one = |x: Option<&TrackFile<(f32, f32, f32)>>, ch: &str| {
                x.and_then(|x| {
                    let (track, f) = x.repair::<Vec3>(&format!("{at}/{ch}"));
                    faults.extend(f);
                    track
                })
            };
            let translation = one(t.translation.as_ref(), "translation");
            let scale = one(t.scale.as_ref(), "scale");
            let rotation = t.rotation.as_ref().and_then(|x| {
                let (track, f) = x.repair::<Quat>(&format!("{at}/rotation"));
                faults.extend(f);
                track
            });
            channels[i] = BoneChannels { translation, rotation, scale };
        }
        let mut clip = Clip::new(f.name.clone(), &Skeleton::empty(&f.skeleton));
        *clip.channels_mut() = channels;
        clip.looping = f.looping;
        clip.length = if f.length.is_finite() && f.length >= 0.0 {
            f.length
        } else {
            faults.push(field_error(
                "length",
                format!("{} is not a finite, non-negative number of seconds; 0 is used", f.length),
            ));
            0.0
        };
        clip.frame_rate = if f.frame_rate.is_finite() && f.frame_rate > 0.0 && f.frame_rate <= 1000.0 {
            f.frame_rate
        } else {
            faults.push(field_error(
                "frame_rate",
                format!("{} is not a frame rate in (0, 1000]; 30 is used", f.frame_rate),
            ));
            crate::clip::DEFAULT_FRAME_RATE
        };
        clip.default_interpolation = f.default_interpolation;
        clip.set_markers(f.markers.iter().map(|m| Marker { name: m.name.clone(), time: m.time }).collect());
        (ClipAsset { clip: Arc::new(clip), bones: f.bones.clone() }, faults)
    }
}

// ------------------------------------------------------------------------------------ skeletons

/// A skeleton file: bones in order (parents before children) with their bind pose; inverse bind
/// matrices are derived from it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkeletonFile {
    /// Format version ([`FILE_VERSION`]).
    pub version: u32,
    /// Skeleton name (clips name it).
    pub name: String,
    /// Bones.
    pub bones: Vec<BoneFile>,
}

/// A bone in a skeleton file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoneFile {
    /// Name.
    pub name: String,
    /// Parent bone name (it must come earlier).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Bind-pose local transform.
    #[serde(default)]
    pub bind: TransformFile,
}

impl From<&Skeleton> for SkeletonFile {
    fn from(s: &Skeleton) -> Self {
        SkeletonFile {
            version: FILE_VERSION,
            name: s.name.clone(),
            bones: (0..s.bone_count())
                .map(|i| BoneFile {
                    name: s.bone_names[i].clone(),
                    parent: s.parent(i).map(|p| s.bone_names[p].clone()),
                    bind: (&s.bind_pose[i]).into(),
                })
                .collect(),
        }
    }
}

impl TryFrom<&SkeletonFile> for Skeleton {
    type Error = FieldError;
    fn try_from(f: &SkeletonFile) -> Result<Self, FieldError> {
        // The limit first, before any work it protects.
        if f.bones.len() > crate::skeleton::MAX_BONES {
            return Err(field_error(
                "bones",
                format!("{} bones is more than the limit of {}", f.bones.len(), crate::skeleton::MAX_BONES),
            ));
        }
        let mut bones = Vec::with_capacity(f.bones.len());
        // Bones listed so far, by name (the first of a name wins; duplicates are named below).
        let mut before: std::collections::HashMap<&str, u16> = std::collections::HashMap::new();
        for (i, b) in f.bones.iter().enumerate() {
            let at = format!("bones/{}", b.name);
            let parent = match &b.parent {
                None => NO_PARENT,
                Some(p) => match before.get(p.as_str()) {
                    Some(&j) => j,
                    None => {
                        return Err(field_error(at, format!("parent {p:?} is not a bone listed before it")));
                    }
                },
            };
            before.entry(b.name.as_str()).or_insert(i as u16);
            bones.push((b.name.clone(), parent, b.bind.to_transform(&format!("{at}/bind"))?));
        }
        Skeleton::from_bind_pose(f.name.clone(), bones).map_err(|e| field_error("bones", e))
    }
}

/// "`n` entries for `keys` keys", in the singular where a count is one (a per-key list whose
/// length is not the track's key count).
fn entries_for_keys(n: usize, keys: usize) -> String {
    let entries = if n == 1 { "entry" } else { "entries" };
    let k = if keys == 1 { "key" } else { "keys" };
    format!("{n} {entries} for {keys} {k}")
}

#[cfg(test)]
mod tests {
    use super::entries_for_keys;

    #[test]
    fn a_per_key_list_of_the_wrong_length_is_counted_in_the_singular_where_one() {
        for (n, keys, want) in [
            (1, 2, "1 entry for 2 keys"),
            (3, 1, "3 entries for 1 key"),
            (0, 4, "0 entries for 4 keys"),
            (2, 5, "2 entries for 5 keys"),
        ] {
            assert_eq!(entries_for_keys(n, keys), want);
        }
    }
}
