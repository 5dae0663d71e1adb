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
    /// Turns limb IK on or off ([`RetargetMap::limb_ik`]: feet and hands placed where the
    /// source's are).
    SetLimbIk(bool),
}

impl RetargetOp {
    /// The undo step's name.
    pub fn label(&self) -> String {
        match self {
            RetargetOp::SetSource { target, source: Some(_) } => format!("Map Bone {target}"),
            RetargetOp::SetSource { target, source: None } => format!("Unmap Bone {target}"),
            RetargetOp::Fill(_) => "Auto-Map Bones".to_owned(),
            RetargetOp::Clear => "Clear Bone Map".to_owned(),
            RetargetOp::SetLimbIk(true) => "Place Feet and Hands by IK".to_owned(),
            RetargetOp::SetLimbIk(false) => "Stop Placing Feet and Hands by IK".to_owned(),
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
                if let Some(p) = pairs.iter().find(|p| p.target.is_empty() || p.source.is_empty()) {
                    return Err(EditError::Invalid(format!(
                        "a bone pair needs both bones named (target {:?}, source {:?})",
                        p.target, p.source
                    )));
                }
                let mut seen = std::collections::HashSet::new();
                if let Some(p) = pairs.iter().find(|p| !seen.insert(p.target.as_str())) {
                    return Err(EditError::Invalid(format!("bone {:?} is mapped twice", p.target)));
                }
                next.bones = pairs.clone();
            }
            RetargetOp::Clear => next.bones.clear(),
            RetargetOp::SetLimbIk(on) => next.limb_ik = *on,
        }
        Ok(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(t: &str, s: &str) -> BonePair {
        BonePair { target: t.into(), source: s.into() }
    }

    /// Every edit the file format could not load again is refused, naming what is wrong.
    #[test]
    fn edits_that_would_save_an_unloadable_map_are_refused() {
        let map = RetargetMap {
            source: "a".into(),
            target: "b".into(),
            bones: vec![pair("hips", "hips")],
            limb_ik: false,
        };
        let refused = [
            RetargetOp::Fill(vec![pair("hips", "")]),
            RetargetOp::Fill(vec![pair("", "hips")]),
            RetargetOp::Fill(vec![pair("hips", "hips"), pair("hips", "spine")]),
            RetargetOp::SetSource { target: String::new(), source: Some("hips".into()) },
            RetargetOp::SetSource { target: "hips".into(), source: Some(String::new()) },
            RetargetOp::SetSource { target: "spine".into(), source: None },
        ];
        for op in refused {
            assert!(matches!(op.apply(&map), Err(EditError::Invalid(_))), "{op:?} was applied");
        }
        let filled =
            RetargetOp::Fill(vec![pair("hips", "root"), pair("spine", "spine")]).apply(&map).unwrap();
        assert_eq!(filled.bones, vec![pair("hips", "root"), pair("spine", "spine")]);
        assert!(RetargetOp::Clear.apply(&map).unwrap().bones.is_empty());
        assert!(RetargetOp::SetLimbIk(true).apply(&map).unwrap().limb_ik);
    }
}
