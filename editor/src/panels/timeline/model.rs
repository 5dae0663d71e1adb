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
    /// Per bone, the sorted times at which one of its channels' keys starts an eased segment.
    pub bone_eased: Vec<Vec<f32>>,
    /// The sorted times at which any key starts an eased segment.
    pub all_eased: Vec<f32>,
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
        self.bone_eased.clear();
        self.all_eased.clear();
        self.key_count = 0;
        for b in 0..clip.clip.channels().len() {
            let (mut t, mut eased): (Vec<f32>, Vec<f32>) = (Vec::new(), Vec::new());
            for info in CHANNELS.iter().filter_map(|ch| track_info(clip, b, *ch)) {
                self.key_count += info.times.len();
                t = merge_times(&t, info.times);
                let here: Vec<f32> =
                    info.times.iter().enumerate().filter(|(i, _)| info.eased(*i)).map(|(_, x)| *x).collect();
                if !here.is_empty() {
                    eased = merge_times(&eased, &here);
                }
            }
            self.all_times = merge_times(&self.all_times, &t);
            if !eased.is_empty() {
                self.all_eased = merge_times(&self.all_eased, &eased);
            }
            self.bone_times.push(t);
            self.bone_eased.push(eased);
        }
        self.key = Some((revision, path.to_owned()));
    }
}

/// Whether the sorted `times` hold `t` (within the 1e-6 the index merges times by).
pub fn holds(times: &[f32], t: f32) -> bool {
    let i = times.partition_point(|x| *x < t - 1e-6);
    times.get(i).is_some_and(|x| (*x - t).abs() < 1e-6)
}

/// Whether bone `b` of the clip has any key.
pub fn bone_has_keys(clip: &ClipAsset, b: usize) -> bool {
    clip.clip.channels().get(b).is_some_and(|c| !c.is_empty())
}

/// What drawing and the easing picker read of one channel's track, whatever its value type.
struct TrackInfo<'a> {
    interpolation: Interpolation,
    times: &'a [f32],
    easings: &'a [Option<Ease>],
    default: Ease,
}

impl TrackInfo<'_> {
    /// Whether key `i` starts an eased segment (drawn as such): a LINEAR track whose key (or
    /// track default) easing is not linear.
    fn eased(&self, i: usize) -> bool {
        let ease = self.easings.get(i).copied().flatten().unwrap_or(self.default);
        !ease.is_linear() && self.interpolation == Interpolation::Linear
    }
}

fn track_info(clip: &ClipAsset, b: usize, ch: Channel) -> Option<TrackInfo<'_>> {
    let c = clip.clip.channels().get(b)?;
    macro_rules! info {
        ($t:expr) => {
            $t.as_ref().map(|t| TrackInfo {
                interpolation: t.interpolation(),
                times: t.times(),
                easings: t.key_easings(),
                default: t.default_easing(),
            })
        };
    }
    match ch {
        Channel::Translation => info!(c.translation),
        Channel::Rotation => info!(c.rotation),
        Channel::Scale => info!(c.scale),
    }
}

/// The times of a channel's keys (empty without a track).
pub fn channel_times(clip: &ClipAsset, b: usize, ch: Channel) -> &[f32] {
    track_info(clip, b, ch).map_or(&[], |t| t.times)
}

/// How key `i` of a channel looks.
pub fn key_look(clip: &ClipAsset, b: usize, ch: Channel, i: usize) -> KeyLook {
    track_info(clip, b, ch).map_or(KeyLook { interpolation: Interpolation::Linear, eased: false }, |t| {
        KeyLook { interpolation: t.interpolation, eased: t.eased(i) }
    })
}

/// The easing key `k` holds for the segment it starts (`Some(None)`: the track's default), or
/// `None` when the clip has no such key.
pub fn key_ease(clip: &ClipAsset, k: KeyId) -> Option<Option<Ease>> {
    let t = track_info(clip, k.bone as usize, k.channel)?;
    let i = t.times.iter().position(|x| x.to_bits() == k.time)?;
    Some(t.easings.get(i).copied().flatten())
}

/// The dope sheet's rows: the summary, then each bone (with keys, unless `all_bones`) in tree
/// order from `parents` (each bone followed by its subtree, indented by its depth; in the clip's
/// order, flat, without them), followed by its channel rows when open.
pub fn rows(clip: &ClipAsset, parents: Option<&[u16]>, open: &BTreeSet<usize>, all_bones: bool) -> Vec<Row> {
    let mut out = vec![Row { kind: RowKind::Summary, depth: 0 }];
    let order = match parents.filter(|ps| ps.len() == clip.bones.len()) {
        Some(ps) => marrow_engine::skeleton::tree_order(ps),
        None => (0..clip.bones.len()).map(|b| (b, 0)).collect(),
    };
    for (b, depth) in order {
        if !all_bones && !bone_has_keys(clip, b) {
            continue;
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
