//! Edits of a clip file's content: clip properties, keys, easing, interpolation, markers.
//! Keys are addressed by bone name, channel and time (never by index), so an op stays valid
//! while other keys move.
//!
//! Not here: the timeline's drawing or selection (see `crate::panels::timeline`).

use marrow_engine::project::file::ClipAsset;

use super::op::EditError;

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
    },
}

impl ClipOp {
    /// The undo step's name.
    pub fn label(&self) -> String {
        match self {
            ClipOp::SetProperties { .. } => "Edit Clip".to_owned(),
        }
    }

    /// The drag target (see [`super::Op::merge_target`]).
    pub fn merge_target(&self) -> Option<String> {
        match self {
            ClipOp::SetProperties { .. } => Some("properties".to_owned()),
        }
    }

    /// The clip after the op.
    pub fn apply(&self, c: &ClipAsset) -> Result<ClipAsset, EditError> {
        let mut c = c.clone();
        match self {
            ClipOp::SetProperties { name, looping, length } => {
                if let Some(n) = name {
                    if n.trim().is_empty() {
                        return Err(EditError::Invalid("a clip name cannot be empty".to_owned()));
                    }
                    c.clip.name = n.clone();
                }
                if let Some(l) = looping {
                    c.clip.looping = *l;
                }
                if let Some(l) = length {
                    if !(l.is_finite() && *l >= 0.0) {
                        return Err(EditError::Invalid(
                            "the length must be a finite, non-negative number".into(),
                        ));
                    }
                    c.clip.length = *l;
                }
            }
        }
        Ok(c)
    }
}
