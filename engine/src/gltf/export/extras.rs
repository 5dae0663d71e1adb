//! The `extras` Marrow's export writes, as typed values: what glTF has no words for (a clip's
//! markers, looping, frame rate and length; the channels added only to hold a clip's length; the
//! eased segments baked or linearized; a mesh's morph target names), which Marrow's importer
//! reads back (`import/animations.rs`, `import/mod.rs`).
//!
//! Times, rates and bounds are written as the `f64` of their `f32` (what `serde_json` wrote for
//! them before these types), so a reader comparing them with an `f32` widened to `f64` sees the
//! same number. Not here: deciding what goes in them (the writer in `mod.rs` does).

use serde::Serialize;

use super::ExportError;

/// `value` as the raw JSON a `gltf_json` object's `extras` holds.
pub(super) fn raw(value: &impl Serialize) -> Result<Box<gltf_json::extras::RawValue>, ExportError> {
    serde_json::value::to_raw_value(value).map_err(|e| ExportError::Write(format!("extras: {e}")))
}

/// A mesh's `extras`: the names of its morph targets.
#[derive(Serialize)]
pub(super) struct MeshExtras<'a> {
    /// One name per morph target, in order.
    #[serde(rename = "targetNames")]
    pub target_names: &'a [String],
}

/// One marker of a clip.
#[derive(Serialize)]
pub(super) struct Marker<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its time in seconds.
    pub time: f64,
}

/// A channel that only holds a clip open to its length (import drops it again).
#[derive(Serialize)]
pub(super) struct Hold {
    /// The node index it targets.
    pub node: usize,
    /// The path it targets (`translation`, `rotation` or `scale`).
    pub path: &'static str,
}

/// An eased segment written as LINEAR keys: baked (with `samples`) or linearized (without).
#[derive(Serialize)]
pub(super) struct Segment {
    /// The name of the node the track drives.
    pub node: String,
    /// The path the track drives.
    pub path: &'static str,
    /// The time of the segment's first key.
    pub from: f64,
    /// The time of its last key.
    pub to: f64,
    /// The easing's name (`cubic-bezier(x1, y1, x2, y2)` for a Bézier).
    pub easing: String,
    /// Keys added inside the segment (baked segments only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub samples: Option<usize>,
}

/// The record of baked segments: the rate sampling started from, the bound asked for, the
/// largest error left and the segments.
#[derive(Serialize)]
pub(super) struct Baked {
    /// Samples a second the bake started from.
    pub rate: f64,
    /// The bound asked for.
    pub bound: f64,
    /// The largest error the baked keys were left with.
    pub error: f64,
    /// Every segment baked.
    pub segments: Vec<Segment>,
}

/// An animation's `extras`; absent fields are not written.
#[derive(Default, Serialize)]
pub(super) struct AnimationExtras<'a> {
    /// The clip's markers, in time order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub markers: Vec<Marker<'a>>,
    /// Whether the clip loops.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub looping: Option<bool>,
    /// The clip's frame rate.
    #[serde(rename = "frameRate", skip_serializing_if = "Option::is_none")]
    pub frame_rate: Option<f64>,
    /// The clip's length, when it has one of its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub length: Option<f64>,
    /// The channels that only hold the clip to its length.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub holds: Vec<Hold>,
    /// The eased segments baked into LINEAR keys.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub baked: Option<Baked>,
    /// The eased segments written linear.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub linearized: Vec<Segment>,
}

impl AnimationExtras<'_> {
    /// True when there is nothing to write (the animation then carries no `extras`).
    pub fn is_empty(&self) -> bool {
        self.markers.is_empty()
            && self.looping.is_none()
            && self.frame_rate.is_none()
            && self.length.is_none()
            && self.holds.is_empty()
            && self.baked.is_none()
            && self.linearized.is_empty()
    }
}
