//! Retarget files (`*.retarget.ron`, listed among a project's `assets`): an authored
//! [`RetargetMap`] (which target bone follows which source bone, by the skeletons' names and
//! their bones' names), format 1.
//!
//! ```ron
//! (
//!     version: 1,
//!     source: "cmu_131_01",
//!     target: "Armature",
//!     bones: [
//!         (target: "Skeleton_torso_joint_1", source: "Hips"),
//!         (target: "leg_joint_L_1", source: "LeftHip"),
//!     ],
//! )
//! ```
//!
//! [`RetargetMap::try_from`] checks what the file alone can tell (names not empty, no target
//! bone twice, at most [`crate::skeleton::MAX_BONES`] pairs); whether the names exist in the
//! rigs is [`crate::retarget::RetargetPlan::new`]'s check, made when the map is used. Not here:
//! reading or writing the file (the project does, atomically), finding the rigs.

use std::collections::HashMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::ProjectError;
use super::file::{FieldError, field_error};
use crate::retarget::{BonePair, RetargetMap};

/// The retarget file format this build reads and writes.
pub const RETARGET_FILE_VERSION: u32 = 1;

/// A retarget file as written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetargetFile {
    /// Format version ([`RETARGET_FILE_VERSION`]).
    pub version: u32,
    /// The source skeleton's name.
    pub source: String,
    /// The target skeleton's name.
    pub target: String,
    /// The pairs, one a line.
    #[serde(default)]
    pub bones: Vec<BonePair>,
    /// Feet and hands placed by IK where the source's are ([`RetargetMap::limb_ik`]); written
    /// only when on, so a file from before it reads and writes the same bytes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub limb_ik: bool,
}

impl TryFrom<RetargetFile> for RetargetMap {
    type Error = FieldError;
    fn try_from(f: RetargetFile) -> Result<Self, FieldError> {
        for (at, name) in [("source", &f.source), ("target", &f.target)] {
            if name.trim().is_empty() {
                return Err(field_error(at, "names no skeleton"));
            }
        }
        if f.bones.len() > crate::skeleton::MAX_BONES {
            return Err(field_error(
                "bones",
                format!("{} pairs is more than the limit of {}", f.bones.len(), crate::skeleton::MAX_BONES),
            ));
        }
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (i, p) in f.bones.iter().enumerate() {
            if p.target.is_empty() || p.source.is_empty() {
                return Err(field_error(
                    format!("bones[{i}]"),
                    "a pair needs both a target and a source bone",
                ));
            }
            if let Some(first) = seen.insert(p.target.as_str(), i) {
                return Err(field_error(
                    format!("bones[{i}]/target"),
                    format!("bone {:?} is mapped already, by bones[{first}]", p.target),
                ));
            }
        }
        Ok(RetargetMap { source: f.source, target: f.target, bones: f.bones, limb_ik: f.limb_ik })
    }
}

impl From<&RetargetMap> for RetargetFile {
    fn from(m: &RetargetMap) -> Self {
        RetargetFile {
            version: RETARGET_FILE_VERSION,
            source: m.source.clone(),
            target: m.target.clone(),
            bones: m.bones.clone(),
            limb_ik: m.limb_ik,
        }
    }
}

/// Whether `path` names a retarget file.
pub fn is_retarget_file(path: &str) -> bool {
    path.ends_with(".retarget.ron")
}

/// Parses retarget file text (`path` names it in errors, with the RON location of a syntax
/// error and the field of a semantic one).
pub fn retarget_from_str(text: &str, path: &Path) -> Result<RetargetMap, ProjectError> {
    let f: RetargetFile = super::parse_file_versioned(text, path, RETARGET_FILE_VERSION)?;
    RetargetMap::try_from(f).map_err(|error| ProjectError::Invalid { path: path.to_owned(), error })
}

/// A retarget map's file text: a pair a line, so a change to one mapping is a change to one
/// line.
pub fn retarget_to_string(map: &RetargetMap) -> String {
    // The file (1), its pair list (2): a pair is below them.
    let config = crate::graph::file::pretty_config().depth_limit(2);
    let mut s =
        ron::Options::default().to_string_pretty(&RetargetFile::from(map), config).unwrap_or_default();
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map() -> RetargetMap {
        RetargetMap {
            source: "cmu".into(),
            target: "Armature".into(),
            bones: vec![
                BonePair { target: "pelvis".into(), source: "Hips".into() },
                BonePair { target: "thigh_l".into(), source: "LeftHip".into() },
            ],
            limb_ik: false,
        }
    }

    #[test]
    fn a_map_round_trips_through_its_text() {
        let text = retarget_to_string(&map());
        assert_eq!(retarget_from_str(&text, Path::new("a.retarget.ron")).unwrap(), map());
        assert!(text.contains("version: 1"));
        assert!(
            text.contains("\n        (target: \"thigh_l\", source: \"LeftHip\"),\n"),
            "a pair a line:\n{text}"
        );
    }

    #[test]
    fn faults_name_their_field_and_syntax_its_place() {
        let p = Path::new("x.retarget.ron");
        let twice = "(version: 1, source: \"a\", target: \"b\", bones: [(target: \"t\", source: \"s\"), (target: \"t\", source: \"u\")])";
        match retarget_from_str(twice, p) {
            Err(ProjectError::Invalid { error, .. }) => assert_eq!(error.at, "bones[1]/target"),
            other => panic!("{other:?}"),
        }
        let empty = "(version: 1, source: \"\", target: \"b\")";
        match retarget_from_str(empty, p) {
            Err(ProjectError::Invalid { error, .. }) => assert_eq!(error.at, "source"),
            other => panic!("{other:?}"),
        }
        match retarget_from_str("(version: 1, source: \"a\",\n target: 3)", p) {
            Err(ProjectError::Syntax { line, .. }) => assert_eq!(line, 2),
            other => panic!("{other:?}"),
        }
        match retarget_from_str("(version: 2, source: \"a\", target: \"b\")", p) {
            Err(ProjectError::Version { found, .. }) => assert_eq!(found, 2),
            other => panic!("{other:?}"),
        }
    }
}
