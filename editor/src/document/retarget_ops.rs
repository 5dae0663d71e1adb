//! Edits of a retarget file (`*.retarget.ron`): map or unmap one target bone, fill the whole
//! map (the humanoid auto-map, computed by the caller from the rigs), clear it. Each is one
//! undo step; the file is addressed by its project path and bones by name.
//!
//! Not here: finding the rigs or computing the auto-map (`marrow_engine::retarget`), applying
//! a map to clips (`crate::retarget`).

use marrow_engine::retarget::{BonePair, RetargetMap};

use super::op::EditError;

/// One change to a retarget map.
#[derive(Clone, Debug, PartialEq)]
pub enum RetargetOp {
    /// `target` follows `source` (`None`: unmaps it, so it keeps its rest).
    SetSource {
        /// Target bone.
        target: String,
        /// Source bone.
        source: Option<String>,
    },
    /// Replaces every pair (Auto-Map fills the map with what it found).
    Fill(Vec<BonePair>),
    /// Unmaps every bone.
    Clear,
}

impl RetargetOp {
    /// The undo step's name.
    pub fn label(&self) -> String {
        match self {
            RetargetOp::SetSource { target, source: Some(_) } => format!("Map Bone {target}"),
            RetargetOp::SetSource { target, source: None } => format!("Unmap Bone {target}"),
            RetargetOp::Fill(_) => "Auto-Map Bones".to_owned(),
            RetargetOp::Clear => "Clear Bone Map".to_owned(),
        }
    }

    /// The map after the change.
    pub fn apply(&self, map: &RetargetMap) -> Result<RetargetMap, EditError> {
        let mut next = map.clone();
        match self {
            RetargetOp::SetSource { target, source } => {
                if target.is_empty() || source.as_ref().is_some_and(String::is_empty) {
                    return Err(EditError::Invalid("a bone pair needs both bones named".into()));
                }
                if source.is_none() && next.source_of(target).is_none() {
                    return Err(EditError::Invalid(format!("bone {target:?} is not mapped")));
                }
                next.set(target, source.as_deref());
            }
            RetargetOp::Fill(pairs) => {
                let mut seen = std::collections::HashSet::new();
                if let Some(p) = pairs.iter().find(|p| !seen.insert(p.target.as_str())) {
                    return Err(EditError::Invalid(format!("bone {:?} is mapped twice", p.target)));
                }
                next.bones = pairs.clone();
            }
            RetargetOp::Clear => next.bones.clear(),
        }
        Ok(next)
    }
}
