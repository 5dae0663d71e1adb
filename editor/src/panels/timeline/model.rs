//! What the dope sheet shows, derived from a clip: the rows (a summary, then one per bone in
//! hierarchy order, each opening onto its translation, rotation and scale channels), the key
//! times of each row (bone and summary rows merge their channels' times; cached per document
//! revision, since a 36k-key clip should not be merged every frame), and key identities for
//! selection. Culling by the visible time range is a binary search on these sorted times.
//!
//! Not here: drawing or input (`super::dope`), edits (`crate::document::clip_ops`).

use std::collections::BTreeSet;

use marrow_engine::clip::Channel;
use marrow_engine::easing::Ease;
use marrow_engine::project::file::ClipAsset;
use marrow_engine::track::Interpolation;

use crate::document::clip_ops::KeyRef;

/// The three channels, in row order.
pub const CHANNELS: [Channel; 3] = [Channel::Translation, Channel::Rotation, Channel::Scale];

/// A key's identity in the panel: bone index in the clip, channel, time (by bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyId {
    /// Bone index in the clip's bone list.
    pub bone: u32,
    /// Channel.
    pub channel: Channel,
    /// The time's bits.
    pub time: u32,
}

impl KeyId {
    /// The key of `bone`/`channel` at `time`.
    pub fn new(bone: usize, channel: Channel, time: f32) -> Self {
        Self { bone: bone as u32, channel, time: time.to_bits() }
    }

    /// The key's time.
    pub fn t(&self) -> f32 {
        f32::from_bits(self.time)
    }

    /// As a document key reference.
    pub fn to_ref(&self, clip: &ClipAsset) -> Option<KeyRef> {
        Some(KeyRef::new(clip.bones.get(self.bone as usize)?.clone(), self.channel, self.t()))
    }
}

/// A row of the dope sheet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowKind {
    /// Every key of the clip.
    Summary,
    /// Every key of a bone.
    Bone(usize),
    /// One channel of a bone.
    Channel(usize, Channel),
}

/// A row with its indent.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// What the row shows.
    pub kind: RowKind,
    /// Indent level.
    pub depth: usize,
}

/// How a key is drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KeyLook {
    /// The channel's interpolation.
    pub interpolation: Interpolation,
    /// Whether the segment the key starts is eased (a named curve other than linear, or a
    /// Bézier).
    pub eased: bool,
}

/// Derived per clip: merged key times per bone and for the summary.
#[derive(Clone, Debug, Default)]
pub struct ClipIndex {
    /// The document revision and clip it was built from.
    pub key: Option<(u64, String)>,
    /// Per bone, the sorted, deduplicated times of all its channels' keys.
    pub bone_times: Vec<Vec<f32>>,
    /// The sorted, deduplicated times of every key.
    pub all_times: Vec<f32>,
    /// Total number of keys.
    pub key_count: usize,
}

/// Merges two sorted time lists into one sorted list, times within 1e-6 of the last one kept
/// dropped (one linear walk: a 36k-key clip is re-indexed on every frame of a key drag).
pub fn merge_times(a: &[f32], b: &[f32]) -> Vec<f32> {
    let mut out: Vec<f32> = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() || j < b.len() {
        let t = if j >= b.len() || (i < a.len() && a[i] <= b[j]) {
            i += 1;
            a[i - 1]
        } else {
            j += 1;
            b[j - 1]
        };
        if out.last().is_none_or(|l| t - *l >= 1e-6) {
            out.push(t);
        }
    }
    out
}

impl ClipIndex {
    /// Rebuilds the index when `revision` or `path` differ from what it was built from.
    pub fn refresh(&mut self, revision: u64, path: &str, clip: &ClipAsset) {
        if self.key.as_ref().is_some_and(|(r, p)| *r == revision && p == path) {
            return;
        }
        self.bone_times.clear();
        self.all_times.clear();
        self.key_count = 0;
        for ch in clip.clip.channels() {
            let mut t: Vec<f32> = Vec::new();
            for times in [
                ch.translation.as_ref().map(|x| x.times()),
                ch.rotation.as_ref().map(|x| x.times()),
                ch.scale.as_ref().map(|x| x.times()),
            ]
            .into_iter()
            .flatten()
            {
                self.key_count += times.len();
                t = merge_times(&t, times);
            }
            self.all_times = merge_times(&self.all_times, &t);
            self.bone_times.push(t);
        }
        self.key = Some((revision, path.to_owned()));
    }
}

/// Whether bone `b` of the clip has any key.
pub fn bone_has_keys(clip: &ClipAsset, b: usize) -> bool {
    clip.clip.channels().get(b).is_some_and(|c| !c.is_empty())
}

/// The times of a channel's keys (empty without a track).
pub fn channel_times(clip: &ClipAsset, b: usize, ch: Channel) -> &[f32] {
    let Some(c) = clip.clip.channels().get(b) else { return &[] };
    match ch {
        Channel::Translation => c.translation.as_ref().map_or(&[], |t| t.times()),
        Channel::Rotation => c.rotation.as_ref().map_or(&[], |t| t.times()),
        Channel::Scale => c.scale.as_ref().map_or(&[], |t| t.times()),
    }
}

/// How key `i` of a channel looks.
pub fn key_look(clip: &ClipAsset, b: usize, ch: Channel, i: usize) -> KeyLook {
    let eased = |e: Option<&Option<Ease>>, d: Ease| e.copied().flatten().unwrap_or(d);
    let Some(c) = clip.clip.channels().get(b) else {
        return KeyLook { interpolation: Interpolation::Linear, eased: false };
    };
    let (interpolation, ease) = match ch {
        Channel::Translation => c
            .translation
            .as_ref()
            .map(|t| (t.interpolation(), eased(t.key_easings().get(i), t.default_easing()))),
        Channel::Rotation => c
            .rotation
            .as_ref()
            .map(|t| (t.interpolation(), eased(t.key_easings().get(i), t.default_easing()))),
        Channel::Scale => {
            c.scale.as_ref().map(|t| (t.interpolation(), eased(t.key_easings().get(i), t.default_easing())))
        }
    }
    .unwrap_or((Interpolation::Linear, Ease::default()));
    KeyLook { interpolation, eased: !ease.is_linear() && interpolation == Interpolation::Linear }
}

/// The dope sheet's rows: the summary, then each bone (with keys, unless `all_bones`) in bone
/// order (parents first) with `depth` from `parents`, followed by its channel rows when open.
pub fn rows(clip: &ClipAsset, parents: Option<&[u16]>, open: &BTreeSet<usize>, all_bones: bool) -> Vec<Row> {
    let mut out = vec![Row { kind: RowKind::Summary, depth: 0 }];
    for b in 0..clip.bones.len() {
        if !all_bones && !bone_has_keys(clip, b) {
            continue;
        }
        let mut depth = 0;
        if let Some(ps) = parents {
            let mut p = ps.get(b).copied().unwrap_or(u16::MAX);
            while p != u16::MAX && depth < 64 {
                depth += 1;
                p = ps.get(p as usize).copied().unwrap_or(u16::MAX);
            }
        }
        out.push(Row { kind: RowKind::Bone(b), depth });
        if open.contains(&b) {
            for ch in CHANNELS {
                if all_bones || !channel_times(clip, b, ch).is_empty() {
                    out.push(Row { kind: RowKind::Channel(b, ch), depth: depth + 1 });
                }
            }
        }
    }
    out
}

/// The key ids a row stands for at time `t` (a summary or bone row: every channel key there).
pub fn ids_at(clip: &ClipAsset, row: RowKind, t: f32) -> Vec<KeyId> {
    let hit = |b: usize, ch: Channel| {
        let times = channel_times(clip, b, ch);
        let i = times.partition_point(|x| *x < t - 1e-6);
        times.get(i).filter(|x| (**x - t).abs() < 1e-6).map(|x| KeyId::new(b, ch, *x))
    };
    match row {
        RowKind::Channel(b, ch) => hit(b, ch).into_iter().collect(),
        RowKind::Bone(b) => CHANNELS.iter().filter_map(|ch| hit(b, *ch)).collect(),
        RowKind::Summary => {
            (0..clip.bones.len()).flat_map(|b| CHANNELS.iter().filter_map(move |ch| hit(b, *ch))).collect()
        }
    }
}

/// Every key of the clip.
pub fn all_ids(clip: &ClipAsset) -> Vec<KeyId> {
    let mut out = Vec::new();
    for b in 0..clip.bones.len() {
        for ch in CHANNELS {
            out.extend(channel_times(clip, b, ch).iter().map(|t| KeyId::new(b, ch, *t)));
        }
    }
    out
}

/// The indices `[i0, i1)` of the sorted `times` within `[t0, t1]`.
pub fn visible_range(times: &[f32], t0: f32, t1: f32) -> (usize, usize) {
    (times.partition_point(|t| *t < t0), times.partition_point(|t| *t <= t1))
}
