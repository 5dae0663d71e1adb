//! An imported model as a scene entity (what the editor's File > Import adds and what tests use
//! to run a glTF file through the [`crate::scene::World`]): a root entity holding one rig entity
//! per rig, placed at the rig's root parent's world transform with an Animator on the model's
//! skeleton, the skinned meshes beneath their rig, and the static meshes at their nodes' world
//! transforms. Assets are named by reference (`{asset}#{name}`), never by index.
//!
//! Not here: writing clip files or copying the model (the editor does that).

use std::collections::{HashMap, HashSet};

use crate::math::{Transform, decompose};
use crate::scene::{AnimatorDesc, EntityDesc, MeshDesc};

use super::{ImportedScene, ScenePose};

/// A usable entity name: `/` replaced, spaces trimmed, never empty.
pub fn entity_name(name: &str, fallback: &str) -> String {
    let n = name.replace('/', "_");
    let n = n.trim();
    if n.is_empty() { fallback.to_owned() } else { n.to_owned() }
}

/// Names handed out unique among themselves: a name, or the first free `name{sep}k` (k from 2).
/// Naming each costs the same however many there are: each name remembers the suffix its last
/// probe ended at, and every `name{sep}k` below it stays taken (names are only added).
pub(crate) struct UniqueNames {
    sep: &'static str,
    taken: HashSet<String>,
    next: HashMap<String, usize>,
}

impl UniqueNames {
    /// No name taken yet; suffixes joined by `sep`.
    pub(crate) fn new(sep: &'static str) -> Self {
        Self { sep, taken: HashSet::new(), next: HashMap::new() }
    }

    /// `name`, or the first free `name{sep}k` (k from 2), now taken.
    pub(crate) fn unique(&mut self, name: &str) -> String {
        let mut out = name.to_owned();
        if self.taken.contains(&out) {
            let mut k = self.next.get(name).copied().unwrap_or(2);
            loop {
                out = format!("{name}{}{k}", self.sep);
                k += 1;
                if !self.taken.contains(&out) {
                    break;
                }
            }
            self.next.insert(name.to_owned(), k);
        }
        self.taken.insert(out.clone());
        out
    }
}

fn transform_of(m: &glam::Mat4) -> Transform {
    let (scale, rotation, translation) = decompose(m);
    Transform { translation, rotation, scale }
}

/// The entity of `scene` (listed in a project as `asset`) named `name`. `clip(rig)` names the
/// clip each rig's Animator starts on (looping, as a preview would).
pub fn model_entity(
    scene: &ImportedScene,
    asset: &str,
    name: &str,
    clip: &dyn Fn(usize) -> Option<String>,
) -> EntityDesc {
    let pose = ScenePose::new(scene);
    let mut root = EntityDesc {
        name: entity_name(name, "model"),
        transform: Some(Transform::IDENTITY),
        ..Default::default()
    };
    let mut rigs: Vec<EntityDesc> = scene
        .rigs
        .iter()
        .enumerate()
        .map(|(r, rig)| {
            let c = clip(r);
            EntityDesc {
                name: entity_name(&rig.skeleton.name, "rig"),
                transform: Some(transform_of(&pose.rig_world(scene, r))),
                animator: Some(AnimatorDesc {
                    rig: format!("{asset}#{}", rig.skeleton.name),
                    looping: c.as_ref().map(|_| true),
                    clip: c,
                    graph: None,
                    speed: 1.0,
                    play_on_start: true,
                    root_motion: None,
                    targets: Vec::new(),
                }),
                ..Default::default()
            }
        })
        .collect();
    let mut rig_names: Vec<UniqueNames> = rigs.iter().map(|_| UniqueNames::new(" ")).collect();
    let mut root_names = UniqueNames::new(" ");
    for (n, node) in scene.nodes.iter().enumerate() {
        let Some(mesh) = node.mesh.and_then(|m| scene.meshes.get(m)) else { continue };
        let mut e = EntityDesc {
            name: entity_name(&node.name, &mesh.name),
            transform: Some(Transform::IDENTITY),
            mesh: Some(MeshDesc::Asset(format!("{asset}#{}", mesh.name))),
            ..Default::default()
        };
        match node.skin.and_then(|s| scene.skins.get(s)).map(|s| s.rig) {
            Some(r) if r < rigs.len() => {
                e.name = rig_names[r].unique(&e.name);
                rigs[r].children.push(e);
            }
            _ => {
                e.transform = Some(transform_of(&pose.world[n]));
                e.name = root_names.unique(&e.name);
                root.children.push(e);
            }
        }
    }
    for mut r in rigs {
        r.name = root_names.unique(&r.name);
        root.children.push(r);
    }
    root
}
