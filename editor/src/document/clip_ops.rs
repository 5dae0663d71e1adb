//! Edits of a clip file's content: clip properties, keys (insert, delete, move, scale, value,
//! tangents, tangent modes, the Euler filter), easing, interpolation and markers. Keys are addressed by bone name, channel and
//! time ([`KeyRef`]), never by index, so an op stays valid while other keys change. A key that
//! lands on another key of its channel replaces it (only inside that channel), and the step's
//! name says how many keys were replaced ("Move 15,920 keys (3 replaced)", "Paste Keys
//! (replaces 1 key)").
//!
//! A move shifts every named key by one delta, in plain f32 arithmetic (`time + delta`): it never
//! re-quantizes a key to a frame grid (the caller snaps the delta so the dragged key lands on a
//! frame), so keys between frames stay between frames and keys the user did not name never
//! move or merge, except an unselected key that a moved key lands on.
//!
//! Edits that a drag repeats (move, scale, value, tangents, marker move) are stated relative to
//! the state at the start of the gesture (the document recomputes a merging op from there), so
//! a key dragged across another and beyond does not swallow it.
//!
//! Tangent modes ([`marrow_engine::tangent`]) are kept per key through every edit: a key of a
//! CUBICSPLINE track whose mode is computed (Auto, Auto Clamped, Flat) has its tangents
//! recomputed from its neighbours whenever any key of its track is written, moved, scaled,
//! deleted or re-valued, inside the op, so the step's before and after values hold them and undo
//! restores them exactly. A written key takes the mode and tangents of the key it replaces, or
//! Auto Clamped (Blender's and Unity's default) when it is new. A channel a key starts gets the
//! clip's default interpolation, or the project's ([`ClipOp::apply`]'s `project_default`).
//!
//! Not here: the timeline's drawing or selection (see `crate::panels::timeline`).

use std::sync::Arc;

use glam::{Quat, Vec3};
use marrow_engine::clip::{BoneChannels, Channel, Marker};
use marrow_engine::easing::Ease;
use marrow_engine::project::file::ClipAsset;
use marrow_engine::tangent::{TangentLanes, TangentMode};
use marrow_engine::track::{Interpolation, MIN_SEGMENT, Track};

use super::op::EditError;

/// A key of a clip: bone, channel and time.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyRef {
    /// Bone name.
    pub bone: String,
    /// Channel.
    pub channel: Channel,
    /// Key time, seconds.
    pub time: f32,
}

impl KeyRef {
    /// A key reference.
    pub fn new(bone: impl Into<String>, channel: Channel, time: f32) -> Self {
        Self { bone: bone.into(), channel, time }
    }
}

/// A key's value: a vector (translation, scale) or a rotation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum KeyValue {
    /// Translation or scale.
    Vec3(Vec3),
    /// Rotation.
    Quat(Quat),
}

/// A key to write.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyWrite {
    /// Which key.
    pub key: KeyRef,
    /// Its value.
    pub value: KeyValue,
}

/// Why keys are inserted (the step's name).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InsertKind {
    /// Keys written one by one ("Insert Key").
    Insert,
    /// The pose on screen keyed (K, auto-key).
    KeyPose,
    /// A paste.
    Paste,
    /// A duplicate.
    Duplicate,
}

/// A change to a clip.
#[derive(Clone, Debug, PartialEq)]
pub enum ClipOp {
    /// Sets the clip's properties (`None`: unchanged).
    SetProperties {
        /// New name.
        name: Option<String>,
        /// Looping.
        looping: Option<bool>,
        /// Held length past the last key, seconds.
        length: Option<f32>,
        /// Frames per second for snapping and display.
        frame_rate: Option<f32>,
    },
    /// Writes keys (a key at the time of an existing one replaces its value, keeping its
    /// tangent mode). A channel that has no track yet gets the clip's default interpolation (or
    /// the project's).
    InsertKeys {
        /// The keys.
        keys: Vec<KeyWrite>,
        /// Why.
        kind: InsertKind,
    },
    /// Deletes keys (an emptied track is removed).
    DeleteKeys(Vec<KeyRef>),
    /// Moves keys in time by `delta` seconds, all by the same delta (no key is re-snapped). A
    /// key that would land before 0 is refused (the caller clamps the delta).
    MoveKeys {
        /// The keys, at their times when the gesture started.
        keys: Vec<KeyRef>,
        /// Seconds.
        delta: f32,
    },
    /// Scales key times about `pivot` by `factor` (a retime), each key snapped to `snap` frames
    /// per second when given.
    ScaleKeys {
        /// The keys, at their times when the gesture started.
        keys: Vec<KeyRef>,
        /// The time that stays.
        pivot: f32,
        /// The factor (positive).
        factor: f32,
        /// Frame rate to snap to.
        snap: Option<f32>,
    },
    /// Sets the easing of the segment each key starts (`None`: the track's default).
    SetEasing {
        /// The keys.
        keys: Vec<KeyRef>,
        /// The easing.
        ease: Option<Ease>,
    },
    /// Sets a channel's interpolation. To CUBICSPLINE, every key becomes Auto Clamped (its
    /// tangents computed from its neighbours); from it, tangents and modes are dropped.
    SetInterpolation {
        /// Bone name.
        bone: String,
        /// Channel.
        channel: Channel,
        /// The interpolation.
        interpolation: Interpolation,
    },
    /// Sets one key's value (the curve view's drag).
    SetKeyValue {
        /// The key.
        key: KeyRef,
        /// Its value.
        value: KeyValue,
    },
    /// Sets a CUBICSPLINE key's tangents (slopes in value per second). The key's mode becomes
    /// Aligned when both sides are equal and it was not Free, else Free (a dragged Auto handle
    /// turns Aligned, as in Blender).
    SetTangents {
        /// The key.
        key: KeyRef,
        /// In tangent.
        tangent_in: KeyValue,
        /// Out tangent.
        tangent_out: KeyValue,
    },
    /// Sets the tangent mode of the named keys of CUBICSPLINE channels (the others are left
    /// alone; refused when none is cubic). Computed modes recompute the tangents; Aligned gives
    /// both sides their mean; Free keeps them.
    SetTangentMode {
        /// The keys.
        keys: Vec<KeyRef>,
        /// The mode.
        mode: TangentMode,
    },
    /// The Euler filter of the rotation channels of the named bones: each rotation key put on
    /// the hemisphere of the one before (with its tangents), so no interpolation passes through
    /// a sign flip. Shortest-path (LINEAR, STEP) poses are unchanged at every time.
    EulerFilter(Vec<String>),
    /// Sets the interpolation new channels of this clip get (`None`: the project's).
    SetDefaultInterpolation(Option<Interpolation>),
    /// Adds a marker.
    AddMarker {
        /// Name.
        name: String,
        /// Time.
        time: f32,
    },
    /// Moves marker `index` (in time order, at the gesture's start) to `time`.
    MoveMarker {
        /// Marker index.
        index: usize,
        /// New time.
        time: f32,
    },
    /// Renames marker `index`.
    RenameMarker {
        /// Marker index.
        index: usize,
        /// New name.
        name: String,
    },
    /// Deletes markers by index.
    DeleteMarkers(Vec<usize>),
}

/// One key of a track, exploded for editing.
#[derive(Clone, Copy, Debug)]
struct EditKey<T> {
    time: f32,
    value: T,
    tin: T,
    tout: T,
    easing: Option<Ease>,
    mode: TangentMode,
    /// Whether this key was moved or written by the op (it wins a collision).
    moved: bool,
    /// Whether this key is a written value (it takes the tangents and mode of a key it replaces).
    written: bool,
}

fn explode<T: TangentLanes>(t: &Track<T>) -> Vec<EditKey<T>> {
    let cubic = t.interpolation() == Interpolation::CubicSpline;
    (0..t.len())
        .map(|i| EditKey {
            time: t.times()[i],
            value: t.values()[i],
            tin: if cubic { t.in_tangents()[i] } else { T::ZERO },
            tout: if cubic { t.out_tangents()[i] } else { T::ZERO },
            easing: t.key_easings().get(i).copied().flatten(),
            mode: t.tangent_mode(i),
            moved: false,
            written: false,
        })
        .collect()
}

/// How close a moved or written key must land to a resting key of its channel to replace it:
/// under half a frame at the clip's `frame_rate`, so that a key dropped on a frame replaces the
/// key of that frame even where a capture's own timing has drifted off the exact frame grid (a
/// BVH `Frame Time` of 0.008333 s drifts 0.33 ms per thousand frames; two keys of one channel
/// 16 us apart is never what a paste or a drag means). Two keys that are both moved, or both
/// resting, collide only at the same instant (`SAME_INSTANT`).
pub fn landing_distance(frame_rate: f32) -> f32 {
    if frame_rate.is_finite() && frame_rate > 0.0 {
        (0.499 / frame_rate).max(SAME_INSTANT)
    } else {
        SAME_INSTANT
    }
}

/// Two keys closer than this are at the same instant (f32 rounding of a time).
const SAME_INSTANT: f32 = if MIN_SEGMENT > 1e-5 { MIN_SEGMENT } else { 1e-5 };

/// Sorts the keys and resolves collisions (a moved key replaces the resting keys it lands
/// within `land` of; a written value keeps the tangents and mode of the key it replaces),
/// recomputes the tangents of computed modes (CUBICSPLINE); returns the track and how many keys
/// were replaced.
fn assemble<T: TangentLanes>(
    interp: Interpolation,
    default: Ease,
    mut keys: Vec<EditKey<T>>,
    land: f32,
) -> Result<(Option<Track<T>>, usize), EditError> {
    if keys.iter().any(|k| !k.time.is_finite() || !k.value.is_finite_value()) {
        return Err(EditError::Invalid("a key time or value is not finite".into()));
    }
    if keys.iter().any(|k| k.value.is_zero_rotation()) {
        return Err(EditError::Invalid("a rotation key has zero length".into()));
    }
    if let Some(length) = keys.iter().find_map(|k| k.value.oversized_rotation()) {
        return Err(EditError::Invalid(format!(
            "a rotation key has length {length}, past the {} a rotation key may have",
            marrow_engine::track::MAX_ROTATION_KEY_LENGTH
        )));
    }
    keys.sort_by(|a, b| a.time.total_cmp(&b.time).then(a.moved.cmp(&b.moved)));
    let mut out: Vec<EditKey<T>> = Vec::with_capacity(keys.len());
    let mut replaced = 0;
    for k in keys {
        let reach = |last: &EditKey<T>| if k.moved == last.moved { SAME_INSTANT } else { land };
        match out.last_mut() {
            Some(last) if (k.time - last.time).abs() < reach(last) => {
                // The moved key wins; two resting keys cannot collide (the track was sound).
                if k.moved || !last.moved {
                    let kept = *last;
                    *last = k;
                    if k.written && !kept.written {
                        (last.tin, last.tout, last.mode) = (kept.tin, kept.tout, kept.mode);
                    }
                }
                replaced += 1;
            }
            _ => out.push(k),
        }
    }
    if out.is_empty() {
        return Ok((None, replaced));
    }
    let times: Vec<f32> = out.iter().map(|k| k.time).collect();
    let values: Vec<T> = out.iter().map(|k| k.value).collect();
    let cubic = interp == Interpolation::CubicSpline;
    let modes: Vec<TangentMode> = out.iter().map(|k| k.mode).collect();
    let track = if cubic {
        let mut tin: Vec<T> = out.iter().map(|k| k.tin).collect();
        let mut tout: Vec<T> = out.iter().map(|k| k.tout).collect();
        marrow_engine::tangent::compute_tangents(&times, &values, &modes, &mut tin, &mut tout);
        Track::cubic_from_keys(times, tin, values, tout)
    } else {
        Track::from_keys(interp, times, values)
    }
    .map_err(|e| EditError::Invalid(e.to_string()))?;
    let mut track = track;
    if cubic {
        track.set_tangent_modes(modes).map_err(|e| EditError::Invalid(e.to_string()))?;
    }
    track.set_default_easing(default);
    for (i, k) in out.iter().enumerate() {
        if k.easing.is_some() {
            track.set_key_easing(i, k.easing);
        }
    }
    Ok((Some(track), replaced))
}

/// A channel's track on a bone, as either value type.
enum AnyTrack<'a> {
    Vec3(&'a mut Option<Track<Vec3>>),
    Quat(&'a mut Option<Track<Quat>>),
}

fn channel_of(c: &mut BoneChannels, ch: Channel) -> AnyTrack<'_> {
    match ch {
        Channel::Translation => AnyTrack::Vec3(&mut c.translation),
        Channel::Rotation => AnyTrack::Quat(&mut c.rotation),
        Channel::Scale => AnyTrack::Vec3(&mut c.scale),
    }
}

/// What [`edit_tracks`] runs on each (bone, channel): the vector keys (translation, scale) or
/// the rotation keys, exploded.
type TrackEdit<'f> =
    dyn FnMut(&str, Channel, &mut Vec<EditKey<Vec3>>, &mut Vec<EditKey<Quat>>) -> Result<(), EditError> + 'f;

/// Applies `f` to the exploded keys of every (bone, channel) named in `refs`, reassembling
/// each track; returns the keys replaced by collisions.
fn edit_tracks(
    c: &mut ClipAsset,
    refs: &[(String, Channel)],
    fresh: Interpolation,
    f: &mut TrackEdit<'_>,
) -> Result<usize, EditError> {
    let mut pairs: Vec<(String, Channel)> = refs.to_vec();
    pairs.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(&b.1)));
    pairs.dedup();
    let mut replaced = 0;
    let land = landing_distance(c.clip.frame_rate);
    for (bone, ch) in pairs {
        let i = c
            .bones
            .iter()
            .position(|b| *b == bone)
            .ok_or_else(|| EditError::Invalid(format!("the clip has no bone {bone:?}")))?;
        let channels = Arc::make_mut(&mut c.clip).channels_mut();
        if channels.len() <= i {
            channels.resize(i + 1, BoneChannels::default());
        }
        match channel_of(&mut channels[i], ch) {
            AnyTrack::Vec3(slot) => {
                let (interp, default) = slot
                    .as_ref()
                    .map_or((fresh, Ease::default()), |t| (t.interpolation(), t.default_easing()));
                let mut keys = slot.as_ref().map(explode).unwrap_or_default();
                f(&bone, ch, &mut keys, &mut Vec::new())?;
                let (t, r) = assemble(interp, default, keys, land)?;
                *slot = t;
                replaced += r;
            }
            AnyTrack::Quat(slot) => {
                let (interp, default) = slot
                    .as_ref()
                    .map_or((fresh, Ease::default()), |t| (t.interpolation(), t.default_easing()));
                let mut keys = slot.as_ref().map(explode).unwrap_or_default();
                f(&bone, ch, &mut Vec::new(), &mut keys)?;
                let (t, r) = assemble(interp, default, keys, land)?;
                *slot = t;
                replaced += r;
            }
        }
    }
    Ok(replaced)
}

/// The keys an op names, grouped per (bone, channel) with sorted times, so that finding whether
/// a track's key is named costs a binary search, not a scan of every named key (a box
/// selection of half a mocap clip names 16k keys).
struct KeySet<'a> {
    /// Per bone name, the named times of its translation, rotation and scale keys.
    by_bone: std::collections::HashMap<&'a str, [Vec<f32>; 3]>,
}

fn channel_index(ch: Channel) -> usize {
    match ch {
        Channel::Translation => 0,
        Channel::Rotation => 1,
        Channel::Scale => 2,
    }
}

impl<'a> KeySet<'a> {
    fn new(keys: &'a [KeyRef]) -> Self {
        let mut by_bone: std::collections::HashMap<&'a str, [Vec<f32>; 3]> = Default::default();
        for k in keys {
            by_bone.entry(k.bone.as_str()).or_default()[channel_index(k.channel)].push(k.time);
        }
        for v in by_bone.values_mut().flat_map(|c| c.iter_mut()) {
            v.sort_by(f32::total_cmp);
        }
        Self { by_bone }
    }

    /// The named times of `bone`/`ch` (sorted).
    fn times(&self, bone: &str, ch: Channel) -> &[f32] {
        self.by_bone.get(bone).map_or(&[], |c| c[channel_index(ch)].as_slice())
    }
}

/// Whether sorted `times` holds `t` (within the key-matching tolerance of [`same`]).
fn named(times: &[f32], t: f32) -> bool {
    let i = times.partition_point(|x| *x < t);
    times.get(i).is_some_and(|x| same(*x, t)) || (i > 0 && same(times[i - 1], t))
}

fn pairs(keys: &[KeyRef]) -> Vec<(String, Channel)> {
    keys.iter().map(|k| (k.bone.clone(), k.channel)).collect()
}

fn same(a: f32, b: f32) -> bool {
    (a - b).abs() < 1e-5
}

fn snapped(t: f32, snap: Option<f32>) -> f32 {
    match snap {
        Some(fps) if fps > 0.0 => (t * fps).round() / fps,
        _ => t,
    }
}

/// Marks and retimes the keys of `bone`/`ch` that `keys` names, with `to(t)` giving new times.
fn retime<T: Copy>(
    keys: &KeySet<'_>,
    bone: &str,
    ch: Channel,
    list: &mut [EditKey<T>],
    to: &dyn Fn(f32) -> f32,
) -> usize {
    let times = keys.times(bone, ch);
    let mut n = 0;
    for k in list.iter_mut() {
        if named(times, k.time) {
            k.time = to(k.time);
            k.moved = true;
            n += 1;
        }
    }
    n
}

/// The interpolation of a bone's channel, when it has a track.
pub fn interpolation_of(c: &ClipAsset, bone: &str, ch: Channel) -> Option<Interpolation> {
    let i = c.bones.iter().position(|b| b == bone)?;
    let bc = c.clip.channels().get(i)?;
    match ch {
        Channel::Translation => bc.translation.as_ref().map(|t| t.interpolation()),
        Channel::Rotation => bc.rotation.as_ref().map(|t| t.interpolation()),
        Channel::Scale => bc.scale.as_ref().map(|t| t.interpolation()),
    }
}

fn key_label(n: usize) -> String {
    if n == 1 { "1 key".to_owned() } else { format!("{} keys", thousands(n)) }
}

/// `n` with a comma between each group of three digits ("15,920").
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A move's step name: "Move Key", "Move 15,920 keys", with " (3 replaced)" when it landed on
/// keys.
fn move_label(moved: usize, replaced: usize) -> String {
    let what = if moved == 1 { "Move Key".to_owned() } else { format!("Move {}", key_label(moved)) };
    if replaced > 0 { format!("{what} ({} replaced)", thousands(replaced)) } else { what }
}

impl ClipOp {
    /// The undo step's name (before any key was replaced; see [`ClipOp::apply`]).
    pub fn label(&self) -> String {
        match self {
            ClipOp::SetProperties { .. } => "Edit Clip".to_owned(),
            ClipOp::InsertKeys { keys, kind } => match kind {
                InsertKind::Insert if keys.len() == 1 => "Insert Key".to_owned(),
                InsertKind::Insert => "Insert Keys".to_owned(),
                InsertKind::KeyPose => "Key Pose".to_owned(),
                InsertKind::Paste => "Paste Keys".to_owned(),
                InsertKind::Duplicate => "Duplicate Keys".to_owned(),
            },
            ClipOp::DeleteKeys(k) if k.len() == 1 => "Delete Key".to_owned(),
            ClipOp::DeleteKeys(_) => "Delete Keys".to_owned(),
            ClipOp::MoveKeys { keys, .. } => move_label(keys.len(), 0),
            ClipOp::ScaleKeys { .. } => "Scale Keys".to_owned(),
            ClipOp::SetEasing { .. } => "Set Easing".to_owned(),
            ClipOp::SetInterpolation { .. } => "Set Interpolation".to_owned(),
            ClipOp::SetKeyValue { .. } => "Edit Key Value".to_owned(),
            ClipOp::SetTangents { .. } => "Edit Tangents".to_owned(),
            ClipOp::SetTangentMode { mode, .. } => format!("Set Tangents to {}", mode.name()),
            ClipOp::EulerFilter(_) => "Euler Filter".to_owned(),
            ClipOp::SetDefaultInterpolation(_) => "Set Default Interpolation".to_owned(),
            ClipOp::AddMarker { .. } => "Add Marker".to_owned(),
            ClipOp::MoveMarker { .. } => "Move Marker".to_owned(),
            ClipOp::RenameMarker { .. } => "Rename Marker".to_owned(),
            ClipOp::DeleteMarkers(m) if m.len() == 1 => "Delete Marker".to_owned(),
            ClipOp::DeleteMarkers(_) => "Delete Markers".to_owned(),
        }
    }

    /// The drag target (see [`super::Op::merge_target`]).
    pub fn merge_target(&self) -> Option<String> {
        Some(match self {
            ClipOp::SetProperties { .. } => "properties".to_owned(),
            ClipOp::MoveKeys { .. } => "move keys".to_owned(),
            ClipOp::ScaleKeys { .. } => "scale keys".to_owned(),
            ClipOp::SetKeyValue { key, .. } => format!("value {}:{}", key.bone, key.channel),
            ClipOp::SetTangents { key, .. } => format!("tangents {}:{}", key.bone, key.channel),
            ClipOp::MoveMarker { index, .. } => format!("marker {index}"),
            ClipOp::InsertKeys { kind: InsertKind::KeyPose, .. } => "key pose".to_owned(),
            _ => return None,
        })
    }

    /// The clip after the op, and the step's name when keys were replaced. `project_default`
    /// is the interpolation a new channel gets when the clip sets none (the project's setting).
    pub fn apply(
        &self,
        c: &ClipAsset,
        project_default: Interpolation,
    ) -> Result<(ClipAsset, String), EditError> {
        let mut c = c.clone();
        let mut replaced = 0;
        match self {
            ClipOp::SetProperties { name, looping, length, frame_rate } => {
                set_properties(&mut c, name, looping, length, frame_rate)?
            }
            ClipOp::InsertKeys { keys, .. } => {
                let fresh = c.clip.default_interpolation.unwrap_or(project_default);
                replaced = insert_keys(&mut c, keys, fresh)?
            }
            ClipOp::SetTangentMode { keys, mode } => set_tangent_mode(&mut c, keys, *mode)?,
            ClipOp::EulerFilter(bones) => {
                let flipped = euler_filter(&mut c, bones)?;
                let label = match flipped {
                    0 => "Euler Filter".to_owned(),
                    1 => "Euler Filter (1 key flipped)".to_owned(),
                    n => format!("Euler Filter ({} keys flipped)", thousands(n)),
                };
                return Ok((c, label));
            }
            ClipOp::SetDefaultInterpolation(i) => Arc::make_mut(&mut c.clip).default_interpolation = *i,
            ClipOp::DeleteKeys(keys) => {
                let mut found = 0;
                let set = KeySet::new(keys);
                edit_tracks(&mut c, &pairs(keys), Interpolation::Linear, &mut |bone, ch, v3, q| {
                    let times = set.times(bone, ch);
                    let hit = |t: f32| named(times, t);
                    let before = v3.len() + q.len();
                    v3.retain(|k| !hit(k.time));
                    q.retain(|k| !hit(k.time));
                    found += before - v3.len() - q.len();
                    Ok(())
                })?;
                if found == 0 {
                    return Err(EditError::Invalid("no such keys".into()));
                }
            }
            ClipOp::MoveKeys { keys, delta } => {
                let (moved, r) = move_keys(&mut c, keys, *delta)?;
                return Ok((c, move_label(moved, r)));
            }
            ClipOp::ScaleKeys { keys, pivot, factor, snap } => {
                if !(factor.is_finite() && *factor > 0.0 && pivot.is_finite()) {
                    return Err(EditError::Invalid("a scale needs a positive, finite factor".into()));
                }
                let to = |t: f32| snapped((pivot + (t - pivot) * factor).max(0.0), *snap);
                let set = KeySet::new(keys);
                replaced =
                    edit_tracks(&mut c, &pairs(keys), Interpolation::Linear, &mut |bone, ch, v3, q| {
                        retime(&set, bone, ch, v3, &to);
                        retime(&set, bone, ch, q, &to);
                        Ok(())
                    })?;
            }
            ClipOp::SetEasing { keys, ease } => {
                let set = KeySet::new(keys);
                edit_tracks(&mut c, &pairs(keys), Interpolation::Linear, &mut |bone, ch, v3, q| {
                    let times = set.times(bone, ch);
                    let hit = |t: f32| named(times, t);
                    v3.iter_mut().filter(|k| hit(k.time)).for_each(|k| k.easing = *ease);
                    q.iter_mut().filter(|k| hit(k.time)).for_each(|k| k.easing = *ease);
                    Ok(())
                })?;
            }
            ClipOp::SetInterpolation { bone, channel, interpolation } => {
                set_interpolation(&mut c, bone, *channel, *interpolation)?
            }
            ClipOp::SetKeyValue { key, value } => set_key_value(&mut c, key, value, None)?,
            ClipOp::SetTangents { key, tangent_in, tangent_out } => {
                set_key_value(&mut c, key, tangent_in, Some((*tangent_in, *tangent_out)))?
            }
            ClipOp::AddMarker { name, time } => {
                if name.trim().is_empty() || !(time.is_finite() && *time >= 0.0) {
                    return Err(EditError::Invalid("a marker needs a name and a time in the clip".into()));
                }
                Arc::make_mut(&mut c.clip).add_marker(name.clone(), *time);
            }
            ClipOp::MoveMarker { index, time } => {
                if !(time.is_finite() && *time >= 0.0) {
                    return Err(EditError::Invalid("a marker time must be finite and not negative".into()));
                }
                let mut m: Vec<Marker> = c.clip.markers().to_vec();
                let x = m.get_mut(*index).ok_or_else(|| EditError::Invalid(format!("no marker {index}")))?;
                x.time = *time;
                Arc::make_mut(&mut c.clip).set_markers(m);
            }
            ClipOp::RenameMarker { index, name } => {
                if name.trim().is_empty() {
                    return Err(EditError::Invalid("a marker name cannot be empty".into()));
                }
                let mut m: Vec<Marker> = c.clip.markers().to_vec();
                m.get_mut(*index).ok_or_else(|| EditError::Invalid(format!("no marker {index}")))?.name =
                    name.clone();
                Arc::make_mut(&mut c.clip).set_markers(m);
            }
            ClipOp::DeleteMarkers(indices) => {
                let m: Vec<Marker> = c
                    .clip
                    .markers()
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| !indices.contains(i))
                    .map(|(_, m)| m.clone())
                    .collect();
                if m.len() == c.clip.markers().len() {
                    return Err(EditError::Invalid("no such markers".into()));
                }
                Arc::make_mut(&mut c.clip).set_markers(m);
            }
        }
        let mut label = self.label();
        // Keying the pose over existing keys is the point of keying; anything else that
        // lands on a key says so.
        if replaced > 0
            && !matches!(self, ClipOp::InsertKeys { kind: InsertKind::KeyPose | InsertKind::Insert, .. })
        {
            label = format!("{label} (replaces {})", key_label(replaced));
        }
        Ok((c, label))
    }
}

/// Moves the named keys by `delta` (`time + delta`, nothing re-rounded); returns how many keys
/// moved and how many unselected keys they replaced.
fn move_keys(c: &mut ClipAsset, keys: &[KeyRef], delta: f32) -> Result<(usize, usize), EditError> {
    if !delta.is_finite() {
        return Err(EditError::Invalid("the move is not finite".into()));
    }
    let set = KeySet::new(keys);
    let to = |t: f32| t + delta;
    let mut moved = 0;
    let mut early = false;
    let replaced = edit_tracks(c, &pairs(keys), Interpolation::Linear, &mut |bone, ch, v3, q| {
        moved += retime(&set, bone, ch, v3, &to) + retime(&set, bone, ch, q, &to);
        early |= v3.iter().any(|k| k.moved && k.time < 0.0) || q.iter().any(|k| k.moved && k.time < 0.0);
        Ok(())
    })?;
    if moved == 0 {
        return Err(EditError::Invalid("no such keys".into()));
    }
    if early {
        return Err(EditError::Invalid(format!("the move by {delta} s puts a key before the clip's start")));
    }
    Ok((moved, replaced))
}

/// Clip properties: name, looping, length and frame rate, each checked.
fn set_properties(
    c: &mut ClipAsset,
    name: &Option<String>,
    looping: &Option<bool>,
    length: &Option<f32>,
    frame_rate: &Option<f32>,
) -> Result<(), EditError> {
    if let Some(n) = name {
        if n.trim().is_empty() {
            return Err(EditError::Invalid("a clip name cannot be empty".to_owned()));
        }
        Arc::make_mut(&mut c.clip).name = n.clone();
    }
    if let Some(l) = looping {
        Arc::make_mut(&mut c.clip).looping = *l;
    }
    if let Some(l) = length {
        if !(l.is_finite() && *l >= 0.0) {
            return Err(EditError::Invalid("the length must be a finite, non-negative number".into()));
        }
        Arc::make_mut(&mut c.clip).length = *l;
    }
    if let Some(f) = frame_rate {
        if !(f.is_finite() && *f > 0.0 && *f <= 1000.0) {
            return Err(EditError::Invalid("the frame rate must be in (0, 1000]".into()));
        }
        Arc::make_mut(&mut c.clip).frame_rate = *f;
    }
    Ok(())
}

/// Writes `keys` (a write at a key's time replaces its value); a channel without a track gets a
/// `fresh` one; returns how many keys were replaced.
fn insert_keys(c: &mut ClipAsset, keys: &[KeyWrite], fresh: Interpolation) -> Result<usize, EditError> {
    let refs: Vec<KeyRef> = keys.iter().map(|k| k.key.clone()).collect();
    edit_tracks(c, &pairs(&refs), fresh, &mut |bone, ch, v3, q| {
        for w in keys.iter().filter(|w| w.key.bone == bone && w.key.channel == ch) {
            if !(w.key.time.is_finite() && w.key.time >= 0.0) {
                return Err(EditError::Invalid(format!(
                    "a key time of {} is not a time in the clip",
                    w.key.time
                )));
            }
            match (w.value, ch) {
                (KeyValue::Quat(v), Channel::Rotation) => q.push(EditKey {
                    time: w.key.time,
                    value: v.normalize(),
                    tin: Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
                    tout: Quat::from_xyzw(0.0, 0.0, 0.0, 0.0),
                    easing: None,
                    mode: TangentMode::AutoClamped,
                    moved: true,
                    written: true,
                }),
                (KeyValue::Vec3(v), Channel::Translation | Channel::Scale) => v3.push(EditKey {
                    time: w.key.time,
                    value: v,
                    tin: Vec3::ZERO,
                    tout: Vec3::ZERO,
                    easing: None,
                    mode: TangentMode::AutoClamped,
                    moved: true,
                    written: true,
                }),
                _ => return Err(EditError::Invalid(format!("a {ch} key needs a {ch} value"))),
            }
        }
        Ok(())
    })
}

/// A channel's interpolation; going to CUBICSPLINE makes its keys Auto Clamped.
fn set_interpolation(
    c: &mut ClipAsset,
    bone: &str,
    channel: Channel,
    interpolation: Interpolation,
) -> Result<(), EditError> {
    let i = c
        .bones
        .iter()
        .position(|b| b == bone)
        .ok_or_else(|| EditError::Invalid(format!("the clip has no bone {bone:?}")))?;
    let channels = Arc::make_mut(&mut c.clip).channels_mut();
    let Some(bc) = channels.get_mut(i) else {
        return Err(EditError::Invalid("no such track".into()));
    };
    match channel_of(bc, channel) {
        AnyTrack::Vec3(slot) => {
            let t = slot.as_ref().ok_or_else(|| EditError::Invalid("no such track".into()))?;
            let mut keys = explode(t);
            if interpolation == Interpolation::CubicSpline && t.interpolation() != Interpolation::CubicSpline
            {
                keys.iter_mut().for_each(|k| k.mode = TangentMode::AutoClamped);
            }
            *slot = assemble(interpolation, t.default_easing(), keys, SAME_INSTANT)?.0;
        }
        AnyTrack::Quat(slot) => {
            let t = slot.as_ref().ok_or_else(|| EditError::Invalid("no such track".into()))?;
            let mut keys = explode(t);
            if interpolation == Interpolation::CubicSpline && t.interpolation() != Interpolation::CubicSpline
            {
                keys.iter_mut().for_each(|k| k.mode = TangentMode::AutoClamped);
            }
            *slot = assemble(interpolation, t.default_easing(), keys, SAME_INSTANT)?.0;
        }
    }
    Ok(())
}

/// A key's value, or (`tangents` given) its CUBICSPLINE tangents.
fn set_key_value(
    c: &mut ClipAsset,
    key: &KeyRef,
    value: &KeyValue,
    tangents: Option<(KeyValue, KeyValue)>,
) -> Result<(), EditError> {
    if tangents.is_some() && interpolation_of(c, &key.bone, key.channel) != Some(Interpolation::CubicSpline) {
        return Err(EditError::Invalid("tangents belong to CUBICSPLINE keys".into()));
    }
    let mut found = false;
    edit_tracks(c, &pairs(std::slice::from_ref(key)), Interpolation::Linear, &mut |_, ch, v3, q| {
        match (ch, value) {
            (Channel::Rotation, KeyValue::Quat(v)) => {
                if let Some(k) = q.iter_mut().find(|k| same(k.time, key.time)) {
                    found = true;
                    match tangents {
                        Some((KeyValue::Quat(a), KeyValue::Quat(b))) => {
                            (k.tin, k.tout, k.mode) = (a, b, edited_mode(k.mode, a == b))
                        }
                        Some(_) => {
                            return Err(EditError::Invalid("rotation tangents are rotations".into()));
                        }
                        None => k.value = v.normalize(),
                    }
                }
            }
            (Channel::Translation | Channel::Scale, KeyValue::Vec3(v)) => {
                if let Some(k) = v3.iter_mut().find(|k| same(k.time, key.time)) {
                    found = true;
                    match tangents {
                        Some((KeyValue::Vec3(a), KeyValue::Vec3(b))) => {
                            (k.tin, k.tout, k.mode) = (a, b, edited_mode(k.mode, a == b))
                        }
                        Some(_) => {
                            return Err(EditError::Invalid("vector tangents are vectors".into()));
                        }
                        None => k.value = *v,
                    }
                }
            }
            _ => return Err(EditError::Invalid(format!("a {ch} key needs a {ch} value"))),
        }
        Ok(())
    })?;
    if !found {
        return Err(EditError::Invalid("no such key".into()));
    }
    Ok(())
}

/// A key's mode after its tangents were set by hand: Aligned when both sides are equal and it
/// was not Free, else Free.
fn edited_mode(mode: TangentMode, equal: bool) -> TangentMode {
    if equal && mode != TangentMode::Free { TangentMode::Aligned } else { TangentMode::Free }
}

/// One named key's new mode (see [`ClipOp::SetTangentMode`]).
fn set_mode<T: TangentLanes + std::ops::Add<Output = T> + std::ops::Mul<f32, Output = T>>(
    k: &mut EditKey<T>,
    mode: TangentMode,
) {
    k.mode = mode;
    if mode == TangentMode::Aligned {
        let m = (k.tin + k.tout) * 0.5;
        (k.tin, k.tout) = (m, m);
    }
}

/// Sets the mode of the named keys of CUBICSPLINE channels; refused when none is cubic.
fn set_tangent_mode(c: &mut ClipAsset, keys: &[KeyRef], mode: TangentMode) -> Result<(), EditError> {
    let cubic: Vec<KeyRef> = keys
        .iter()
        .filter(|k| interpolation_of(c, &k.bone, k.channel) == Some(Interpolation::CubicSpline))
        .cloned()
        .collect();
    if cubic.is_empty() {
        return Err(EditError::Invalid(
            "tangent modes belong to keys of Cubic channels: set the channel's interpolation to Cubic first"
                .into(),
        ));
    }
    let set = KeySet::new(&cubic);
    let mut found = 0;
    edit_tracks(c, &pairs(&cubic), Interpolation::Linear, &mut |bone, ch, v3, q| {
        let times = set.times(bone, ch);
        for k in v3.iter_mut().filter(|k| named(times, k.time)) {
            set_mode(k, mode);
            found += 1;
        }
        for k in q.iter_mut().filter(|k| named(times, k.time)) {
            set_mode(k, mode);
            found += 1;
        }
        Ok(())
    })?;
    if found == 0 {
        return Err(EditError::Invalid("no such keys".into()));
    }
    Ok(())
}

/// The Euler filter on the rotation tracks of `bones`; returns how many keys were negated.
fn euler_filter(c: &mut ClipAsset, bones: &[String]) -> Result<usize, EditError> {
    let refs: Vec<(String, Channel)> = bones
        .iter()
        .filter(|b| interpolation_of(c, b, Channel::Rotation).is_some())
        .map(|b| (b.clone(), Channel::Rotation))
        .collect();
    if refs.is_empty() {
        return Err(EditError::Invalid("the Euler filter needs a rotation channel".into()));
    }
    let mut flipped = 0;
    edit_tracks(c, &refs, Interpolation::Linear, &mut |_, _, _, q| {
        for i in 1..q.len() {
            if q[i].value.dot(q[i - 1].value) < 0.0 {
                let k = &mut q[i];
                (k.value, k.tin, k.tout) = (-k.value, -k.tin, -k.tout);
                flipped += 1;
            }
        }
        Ok(())
    })?;
    Ok(flipped)
}

#[cfg(test)]
mod tests {
    use super::*;
    use marrow_engine::clip::Clip;
    use marrow_engine::synthetic::chain_skeleton;

    /// A 30 fps clip whose first bone has translation keys at `times` (x = index).
    fn clip(times: &[f32]) -> ClipAsset {
        let skeleton = chain_skeleton(2);
        let mut c = Clip::new("c", &skeleton);
        c.length = 2.0;
        let values = (0..times.len()).map(|i| Vec3::new(i as f32, 0.0, 0.0)).collect();
        c.channels_mut()[0].translation =
            Some(Track::from_keys(Interpolation::Linear, times.to_vec(), values).unwrap());
        ClipAsset { clip: Arc::new(c), bones: skeleton.bone_names.clone() }
    }

    fn times(c: &ClipAsset) -> Vec<f32> {
        c.clip.channels()[0].translation.as_ref().unwrap().times().to_vec()
    }

    fn write(c: &ClipAsset, t: f32, x: f32) -> (ClipAsset, String) {
        let bone = c.bones[0].clone();
        let keys = vec![KeyWrite {
            key: KeyRef::new(bone, Channel::Translation, t),
            value: KeyValue::Vec3(Vec3::X * x),
        }];
        ClipOp::InsertKeys { keys, kind: InsertKind::Paste }.apply(c, Interpolation::Linear).unwrap()
    }

    #[test]
    fn a_key_written_within_half_a_frame_of_a_key_replaces_it_and_one_further_sits_beside_it() {
        let frame = 1.0 / 30.0;
        // A capture-like key 16 us before the frame at 1 s: a key written on the frame takes
        // its place (and its time), one written 0.6 frame on is a key of its own.
        let c = clip(&[0.0, 1.0 - 16e-6, 1.5]);
        let (pasted, _) = write(&c, 1.0, 9.0);
        assert_eq!(times(&pasted), [0.0, 1.0, 1.5]);
        let (beside, _) = write(&c, 1.0 + 0.6 * frame, 9.0);
        assert_eq!(times(&beside).len(), 4);
        // Within half a frame on either side; the resting keys themselves never merge.
        let (before, _) = write(&c, 1.5 - 0.45 * frame, 9.0);
        assert_eq!(times(&before), [0.0, 1.0 - 16e-6, 1.5 - 0.45 * frame]);
        assert_eq!(landing_distance(0.0), SAME_INSTANT, "no frame rate: the same instant only");
    }

    #[test]
    fn keys_moved_together_keep_their_spacing_and_replace_only_resting_keys() {
        let frame = 1.0 / 30.0;
        let c = clip(&[0.0, 0.2 * frame, 1.0, 1.0 + 16e-6 + frame]);
        let bone = c.bones[0].clone();
        // Two keys a fifth of a frame apart (a free, Alt placement) move a second and a frame
        // on: the first lands 16 us from the capture-like key past that frame and replaces it;
        // the second stays its own key (keys moved together never merge), and so does the
        // resting key at 1 s, a whole frame from both.
        let keys = vec![
            KeyRef::new(bone.clone(), Channel::Translation, 0.0),
            KeyRef::new(bone, Channel::Translation, 0.2 * frame),
        ];
        let (moved, label) =
            ClipOp::MoveKeys { keys, delta: 1.0 + frame }.apply(&c, Interpolation::Linear).unwrap();
        assert_eq!(times(&moved), [1.0, 1.0 + frame, 1.0 + 1.2 * frame]);
        assert_eq!(label, "Move 2 keys (1 replaced)");
    }
}
