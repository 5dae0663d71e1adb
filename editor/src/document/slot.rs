//! File slots: the unit of change of the document. A project's authored content is a set of
//! files (the manifest, scenes, clips, skeletons, graphs, retarget maps); an edit replaces the value of one or
//! more slots, and its inverse puts the old values back.
//!
//! Not here: what an edit computes (see [`super::op`]) or the undo record ([`super::Document`]).

use marrow_engine::project::Project;

/// One authored file of a project, by kind and path relative to the project folder.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Slot {
    /// `project.ron`.
    Manifest,
    /// A scene file.
    Scene(String),
    /// A clip file.
    Clip(String),
    /// A skeleton file.
    Skeleton(String),
    /// A graph file.
    Graph(String),
    /// A retarget file.
    Retarget(String),
}

/// The value held in a [`Slot`]: the engine's [`marrow_engine::project::reload::AssetFile`], the
/// file's `Arc`, shared with the project and the other undo steps that hold the same state of
/// that file (cloning a value copies no file; comparing two is one pointer comparison when they
/// are the same state).
pub use marrow_engine::project::reload::AssetFile as Value;

impl Slot {
    /// The value of this slot in `p` (`None`: no such file).
    pub fn get(&self, p: &Project) -> Option<Value> {
        match self {
            Slot::Manifest => Some(Value::Manifest(p.manifest.clone())),
            Slot::Scene(k) => p.scenes.get(k).cloned().map(Value::Scene),
            Slot::Clip(k) => p.clips.get(k).cloned().map(Value::Clip),
            Slot::Skeleton(k) => p.skeletons.get(k).cloned().map(Value::Skeleton),
            Slot::Graph(k) => p.graphs.get(k).cloned().map(Value::Graph),
            Slot::Retarget(k) => p.retargets.get(k).cloned().map(Value::Retarget),
        }
    }

    /// Puts `value` into this slot of `p` (`None` removes the file; a value of another kind
    /// than the slot's is ignored).
    pub fn set(&self, p: &mut Project, value: Option<Value>) {
        match (self, value) {
            (Slot::Manifest, Some(Value::Manifest(m))) => p.manifest = m,
            (Slot::Manifest, _) => {}
            (Slot::Scene(k), Some(Value::Scene(s))) => {
                p.scenes.insert(k.clone(), s);
            }
            (Slot::Scene(k), None) => {
                p.scenes.remove(k);
            }
            (Slot::Clip(k), Some(Value::Clip(c))) => {
                p.clips.insert(k.clone(), c);
            }
            (Slot::Clip(k), None) => {
                p.clips.remove(k);
            }
            (Slot::Skeleton(k), Some(Value::Skeleton(s))) => {
                p.skeletons.insert(k.clone(), s);
            }
            (Slot::Skeleton(k), None) => {
                p.skeletons.remove(k);
            }
            (Slot::Graph(k), Some(Value::Graph(g))) => {
                p.graphs.insert(k.clone(), g);
            }
            (Slot::Graph(k), None) => {
                p.graphs.remove(k);
            }
            (Slot::Retarget(k), Some(Value::Retarget(r))) => {
                p.retargets.insert(k.clone(), r);
            }
            (Slot::Retarget(k), None) => {
                p.retargets.remove(k);
            }
            _ => {}
        }
    }

    /// The slot of the authored file at `path`, by its name (`None`: not an authored file of a
    /// project, a model among them).
    pub fn of_asset(path: &str) -> Option<Slot> {
        use marrow_engine::project::reload::{AssetKind, asset_kind};
        let p = path.to_owned();
        Some(match asset_kind(path)? {
            AssetKind::Manifest => Slot::Manifest,
            AssetKind::Scene => Slot::Scene(p),
            AssetKind::Clip => Slot::Clip(p),
            AssetKind::Skeleton => Slot::Skeleton(p),
            AssetKind::Graph => Slot::Graph(p),
            AssetKind::Retarget => Slot::Retarget(p),
            AssetKind::Model => return None,
        })
    }

    /// The file path (relative to the project folder).
    pub fn path(&self) -> &str {
        match self {
            Slot::Manifest => marrow_engine::project::PROJECT_FILE,
            Slot::Scene(k) | Slot::Clip(k) | Slot::Skeleton(k) | Slot::Graph(k) | Slot::Retarget(k) => k,
        }
    }
}

/// A change of one slot: its value before and after.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// The file.
    pub slot: Slot,
    /// Its value before the edit (`None`: it did not exist).
    pub before: Option<Value>,
    /// Its value after the edit (`None`: it is removed).
    pub after: Option<Value>,
}
