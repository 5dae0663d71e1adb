//! The edit kinds: every change the editor can make to a project, as data. An [`Op`] computes,
//! from the current project, the new values of the files it touches ([`Op::apply`]), or refuses
//! with an [`EditError`] naming what is wrong; the document turns the result into an undoable
//! edit holding both the old and the new values.
//!
//! Ops address entities by scene path and entity path, assets by project path, never by
//! runtime index. Timeline and graph edits live in their own modules and plug in through
//! [`Op::Clip`] and [`Op::Graph`].
//!
//! Not here: the undo record, merging of drags, saving (see [`super::Document`]).

use std::sync::Arc;

use marrow_engine::math::Transform;
use marrow_engine::project::Project;
use marrow_engine::scene::{
    AnimatorDesc, CrowdDesc, EntityDesc, MeshDesc, ParticleCloudDesc, SceneDesc, SocketDesc,
};

use super::clip_ops::ClipOp;
use super::graph_ops::GraphOp;
use super::slot::{Slot, Value};
use super::tree;

/// Why an edit was refused. Nothing changes when an op fails.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum EditError {
    /// The scene is not in the project.
    #[error("no scene {0:?} in the project")]
    NoScene(String),
    /// No entity at that path.
    #[error("no entity {entity:?} in scene {scene:?}")]
    NoEntity {
        /// Scene path.
        scene: String,
        /// Entity path.
        entity: String,
    },
    /// No asset at that path.
    #[error("no asset {0:?} in the project")]
    NoAsset(String),
    /// A name or value is not acceptable.
    #[error("{0}")]
    Invalid(String),
    /// The asset is used and cannot be deleted.
    #[error("{asset} is used by {}", users.join(", "))]
    InUse {
        /// The asset.
        asset: String,
        /// Who uses it (entity paths, graph nodes).
        users: Vec<String>,
    },
}

/// A change to one entity of a scene.
#[derive(Clone, Debug, PartialEq)]
pub enum EntityOp {
    /// Sets (or removes) the authored local transform.
    SetTransform(Option<Transform>),
    /// Renames the entity.
    Rename(String),
    /// Moves the entity under another parent (`None`: the root) at `index` (`None`: last).
    Reparent {
        /// The new parent's path.
        parent: Option<String>,
        /// Position among the new siblings.
        index: Option<usize>,
    },
    /// Deletes the entity and its subtree.
    Delete,
    /// Sets (or removes) the Animator.
    SetAnimator(Option<AnimatorDesc>),
    /// Sets (or removes) the bone socket.
    SetSocket(Option<SocketDesc>),
    /// Sets (or removes) the default morph weights (the Expressions card).
    SetMorphWeights(Option<Vec<f32>>),
    /// Sets (or removes) the mesh.
    SetMesh(Option<MeshDesc>),
    /// Sets (or removes) the particle cloud.
    SetParticles(Option<ParticleCloudDesc>),
    /// Sets (or removes) the crowd.
    SetCrowd(Option<CrowdDesc>),
}

/// Every edit kind of the editor.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// A change to an entity at `entity` in scene `scene`.
    Entity {
        /// Scene path.
        scene: String,
        /// Entity path.
        entity: String,
        /// What changes.
        op: EntityOp,
    },
    /// Adds an entity (with its subtree) under `parent` (`None`: the root); its name is made
    /// unique among its new siblings.
    AddEntity {
        /// Scene path.
        scene: String,
        /// Parent path.
        parent: Option<String>,
        /// The entity.
        entity: EntityDesc,
    },
    /// Renames an asset file (clip, graph, skeleton file), updating every reference to it.
    RenameAsset {
        /// Current path.
        from: String,
        /// New path.
        to: String,
    },
    /// Deletes an asset; refused while anything uses it.
    DeleteAsset {
        /// Its path.
        path: String,
    },
    /// Adds files to the project (an import, a new clip or graph): each goes into its
    /// manifest list; an entity may be added to a scene in the same step.
    AddFiles {
        /// What the step is called ("Import CesiumMan.glb").
        label: String,
        /// Binary assets (`.glb`, `.gltf`) to list, already copied into the project folder.
        binary: Vec<String>,
        /// Authored files to add.
        files: Vec<(Slot, Value)>,
        /// An entity to add: (scene, parent, entity).
        entity: Option<(String, Option<String>, EntityDesc)>,
    },
    /// Renames the project.
    RenameProject(String),
    /// Sets the interpolation a key gives a channel it starts, in clips that set none (the
    /// project's setting, in `project.ron`).
    SetDefaultInterpolation(marrow_engine::track::Interpolation),
    /// Replaces the whole project (recovering unsaved changes from an autosave).
    ReplaceProject {
        /// What the step is called.
        label: String,
        /// The project to put in place.
        project: Box<Project>,
    },
    /// A change to a clip file's content (timeline edits).
    Clip {
        /// Clip file path.
        path: String,
        /// What changes.
        op: ClipOp,
    },
    /// Several ops as one step, each computed on the result of the ones before (New Clip:
    /// add the clip file and make it the Animator's clip).
    Batch {
        /// What the step is called.
        label: String,
        /// The ops, in order.
        ops: Vec<Op>,
    },
    /// A change to a graph file's content (graph editor edits).
    Graph {
        /// Graph file path.
        path: String,
        /// What changes.
        op: GraphOp,
    },
    /// A change to a retarget file's bone map.
    Retarget {
        /// Retarget file path.
        path: String,
        /// What changes.
        op: super::retarget_ops::RetargetOp,
    },
    /// A file changed outside the editor, taken as it now is on disk ("Reloaded FILE from
    /// disk": undo brings back what the document held).
    Reload {
        /// The file.
        slot: Slot,
        /// Its value as read from disk.
        value: Value,
    },
}

/// The new value of each slot an op touches.
pub type Outcome = Vec<(Slot, Option<Value>)>;

fn scene_of<'a>(p: &'a Project, scene: &str) -> Result<&'a SceneDesc, EditError> {
    p.scenes.get(scene).map(|s| &**s).ok_or_else(|| EditError::NoScene(scene.to_owned()))
}

fn check_finite(t: &Transform) -> Result<(), EditError> {
    if !t.is_finite() {
        return Err(EditError::Invalid("a transform value is not finite".to_owned()));
    }
    let len = t.rotation.length();
    if !(len > 1e-6) {
        return Err(EditError::Invalid("the rotation has zero length".to_owned()));
    }
    Ok(())
}

/// A cloud's numbers as the scene file accepts them (see `ParticleCloudFile::to_desc`).
fn check_cloud(s: &marrow_engine::particles::CloudSettings) -> Result<(), EditError> {
    let bad = |what: &str| Err(EditError::Invalid(format!("the particle cloud's {what} is out of range")));
    if s.count > marrow_engine::particles::MAX_PARTICLES {
        return bad("count");
    }
    if !(s.falloff.is_finite() && s.falloff >= 0.0) {
        return bad("falloff");
    }
    if !(s.radius.is_finite() && s.radius >= 0.0) {
        return bad("radius");
    }
    if s.color.iter().any(|c| !(0.0..=1.0).contains(c)) {
        return bad("colour");
    }
    if s.groups.iter().any(|g| !(g.mass.is_finite() && g.mass > 0.0)) {
        return bad("group mass");
    }
    if s.springs.is_some_and(|p| {
        !(p.stiffness.is_finite() && p.stiffness >= 0.0 && p.damping.is_finite() && p.damping >= 0.0)
    }) {
        return bad("springs");
    }
    Ok(())
}

impl EntityOp {
    fn label(&self) -> &'static str {
        match self {
            EntityOp::SetTransform(_) => "Edit Transform",
            EntityOp::Rename(_) => "Rename Entity",
            EntityOp::Reparent { .. } => "Reparent Entity",
            EntityOp::Delete => "Delete Entity",
            EntityOp::SetAnimator(_) => "Edit Animator",
            EntityOp::SetSocket(_) => "Edit Socket",
            EntityOp::SetMorphWeights(_) => "Set Expression",
            EntityOp::SetMesh(_) => "Edit Mesh",
            EntityOp::SetParticles(_) => "Edit Particle Cloud",
            EntityOp::SetCrowd(_) => "Edit Crowd",
        }
    }

    fn apply(&self, s: &mut SceneDesc, scene: &str, path: &str) -> Result<(), EditError> {
        let missing = || EditError::NoEntity { scene: scene.to_owned(), entity: path.to_owned() };
        if tree::find(s, path).is_none() {
            return Err(missing());
        }
        match self {
            EntityOp::Rename(name) => {
                tree::check_name(name).map_err(EditError::Invalid)?;
                let old = tree::leaf_name(path);
                if !tree::name_free(s, tree::parent_path(path), name, Some(old)) {
                    return Err(EditError::Invalid(format!("a sibling is already named {name:?}")));
                }
                tree::find_mut(s, path).ok_or_else(missing)?.name = name.clone();
            }
            EntityOp::Reparent { parent, index } => {
                if let Some(p) = parent {
                    if tree::is_within(p, path) {
                        return Err(EditError::Invalid(format!(
                            "{path} cannot move under {p}: that is inside itself"
                        )));
                    }
                    if tree::find(s, p).is_none() {
                        return Err(EditError::NoEntity { scene: scene.to_owned(), entity: p.clone() });
                    }
                }
                let same_parent = tree::parent_path(path) == parent.as_deref();
                let (entity, old_index) = tree::take(s, path).ok_or_else(missing)?;
                // Within one list, an index after the old slot shifts left once it is removed.
                let index = match (same_parent, index) {
                    (true, Some(i)) if *i > old_index => Some(i - 1),
                    (_, i) => *i,
                };
                tree::insert(s, parent.as_deref(), index, entity).map_err(EditError::Invalid)?;
            }
            EntityOp::Delete => {
                tree::take(s, path).ok_or_else(missing)?;
            }
            op => {
                let e = tree::find_mut(s, path).ok_or_else(missing)?;
                match op {
                    EntityOp::SetTransform(t) => {
                        if let Some(t) = t {
                            check_finite(t)?;
                        }
                        e.transform = *t;
                    }
                    EntityOp::SetAnimator(a) => {
                        if let Some(a) = a
                            && !a.speed.is_finite()
                        {
                            return Err(EditError::Invalid("the speed is not finite".to_owned()));
                        }
                        e.animator = a.clone();
                    }
                    EntityOp::SetSocket(sock) => {
                        if let Some(sk) = sock {
                            check_finite(&sk.offset)?;
                        }
                        e.socket = sock.clone();
                    }
                    EntityOp::SetMorphWeights(w) => {
                        if w.as_ref().is_some_and(|w| w.iter().any(|x| !x.is_finite())) {
                            return Err(EditError::Invalid("a morph weight is not finite".to_owned()));
                        }
                        e.morph_weights = w.clone();
                    }
                    EntityOp::SetMesh(m) => e.mesh = m.clone(),
                    EntityOp::SetParticles(p) => {
                        if let Some(p) = p {
                            check_cloud(&p.settings)?;
                        }
                        e.particles = p.clone();
                    }
                    EntityOp::SetCrowd(c) => {
                        if let Some(c) = c {
                            // The scene file's rules, so the document never holds what it cannot save.
                            marrow_engine::project::file::CrowdFile::from(c)
                                .to_desc("crowd")
                                .map_err(|e| EditError::Invalid(e.to_string()))?;
                        }
                        e.crowd = c.clone();
                    }
                    _ => unreachable!("handled above"),
                }
            }
        }
        Ok(())
    }
}

/// Replaces references equal to `from` or starting with `from#` by `to` (keeping the `#name`).
fn rename_ref(r: &mut String, from: &str, to: &str) -> bool {
    if r == from {
        *r = to.to_owned();
        return true;
    }
    if let Some(rest) = r.strip_prefix(from)
        && rest.starts_with('#')
    {
        *r = format!("{to}{rest}");
        return true;
    }
    false
}

fn refers_to(r: &str, asset: &str) -> bool {
    r == asset || r.strip_prefix(asset).is_some_and(|rest| rest.starts_with('#'))
}

/// Every user of `asset`: entity paths in scenes (`scene: path (field)`) and graph nodes.
pub fn asset_users(p: &Project, asset: &str) -> Vec<String> {
    let mut users = Vec::new();
    for (sp, scene) in &p.scenes {
        for path in tree::all_paths(scene) {
            let Some(e) = tree::find(scene, &path) else { continue };
            if let Some(a) = &e.animator {
                if refers_to(&a.rig, asset) {
                    users.push(format!("{sp}: {path} (rig)"));
                }
                if a.clip.as_deref().is_some_and(|c| refers_to(c, asset)) {
                    users.push(format!("{sp}: {path} (clip)"));
                }
                if a.graph.as_deref().is_some_and(|g| refers_to(g, asset)) {
                    users.push(format!("{sp}: {path} (graph)"));
                }
            }
            if let Some(MeshDesc::Asset(m)) = &e.mesh
                && refers_to(m, asset)
            {
                users.push(format!("{sp}: {path} (mesh)"));
            }
        }
    }
    for (gp, g) in &p.graphs {
        for n in &g.nodes {
            if super::graph_ops::node_clip_refs(&n.kind).iter().any(|c| refers_to(c, asset)) {
                users.push(format!("{gp}: node {} ({})", n.id.0, n.kind.name()));
            }
        }
    }
    users
}

/// The slot an asset path lives in.
pub fn asset_slot(p: &Project, path: &str) -> Option<Slot> {
    if p.clips.contains_key(path) {
        Some(Slot::Clip(path.to_owned()))
    } else if p.graphs.contains_key(path) {
        Some(Slot::Graph(path.to_owned()))
    } else if p.skeletons.contains_key(path) {
        Some(Slot::Skeleton(path.to_owned()))
    } else if p.scenes.contains_key(path) {
        Some(Slot::Scene(path.to_owned()))
    } else if p.retargets.contains_key(path) {
        Some(Slot::Retarget(path.to_owned()))
    } else {
        None
    }
}

/// A path a new file can take: inside the project, not listed yet.
pub fn check_new_path(p: &Project, path: &str) -> Result<(), EditError> {
    if path.is_empty() || path.starts_with('/') || path.split(['/', '\\']).any(|c| c == ".." || c.is_empty())
    {
        return Err(EditError::Invalid(format!("{path:?} is not a path inside the project folder")));
    }
    let m = &p.manifest;
    if [&m.scenes, &m.assets, &m.clips, &m.graphs].iter().any(|l| l.iter().any(|x| x == path)) {
        return Err(EditError::Invalid(format!("{path:?} is already a file of the project")));
    }
    Ok(())
}

/// The suffix a file kind must keep.
fn kind_suffix(slot: &Slot) -> &'static str {
    match slot {
        Slot::Manifest => "project.ron",
        Slot::Scene(_) => ".scene.ron",
        Slot::Clip(_) => ".clip.ron",
        Slot::Skeleton(_) => ".skeleton.ron",
        Slot::Graph(_) => ".graph.ron",
        Slot::Retarget(_) => ".retarget.ron",
    }
}

impl Op {
    /// What the undo step is called ("Rename Entity", "Move Key").
    pub fn label(&self) -> String {
        match self {
            Op::Entity { op, .. } => op.label().to_owned(),
            Op::AddEntity { .. } => "Add Entity".to_owned(),
            Op::RenameAsset { .. } => "Rename Asset".to_owned(),
            Op::DeleteAsset { .. } => "Delete Asset".to_owned(),
            Op::AddFiles { label, .. } | Op::ReplaceProject { label, .. } | Op::Batch { label, .. } => {
                label.clone()
            }
            Op::RenameProject(_) => "Rename Project".to_owned(),
            Op::SetDefaultInterpolation(_) => "Set Project Default Interpolation".to_owned(),
            Op::Clip { op, .. } => op.label(),
            Op::Graph { op, .. } => op.label(),
            Op::Reload { slot, .. } => format!("Reloaded {} from disk", slot.path()),
            Op::Retarget { op, .. } => op.label(),
        }
    }

    /// The target a drag keeps editing (consecutive ops of one gesture on one target merge
    /// into one undo step); `None` for ops that never merge.
    pub fn merge_target(&self) -> Option<String> {
        match self {
            Op::Entity { scene, entity, op } => match op {
                EntityOp::SetTransform(_)
                | EntityOp::SetSocket(_)
                | EntityOp::SetMorphWeights(_)
                | EntityOp::SetParticles(_)
                | EntityOp::SetCrowd(_)
                | EntityOp::SetAnimator(_) => Some(format!("{scene}:{entity}:{}", op.label())),
                _ => None,
            },
            Op::Clip { path, op } => op.merge_target().map(|t| format!("{path}:{t}")),
            Op::Graph { path, op } => op.merge_target().map(|t| format!("{path}:{t}")),
            _ => None,
        }
    }

    /// As [`Op::apply`], with the step's name (which can depend on the outcome: "Move Keys
    /// (replaces 1 key)").
    pub fn apply_labelled(&self, p: &Project) -> Result<(Outcome, String), EditError> {
        if let Op::Clip { path, op } = self {
            let clip = p.clips.get(path).ok_or_else(|| EditError::NoAsset(path.clone()))?;
            let (next, label) = op.apply(clip, p.manifest.default_interpolation)?;
            return Ok((vec![(Slot::Clip(path.clone()), Some(Value::Clip(Arc::new(next))))], label));
        }
        if let Op::Graph { path, op } = self {
            let g = p.graphs.get(path).ok_or_else(|| EditError::NoAsset(path.clone()))?;
            let (next, label) = op.apply(g)?;
            return Ok((vec![(Slot::Graph(path.clone()), Some(Value::Graph(Arc::new(next))))], label));
        }
        Ok((self.apply(p)?, self.label()))
    }

    /// The new value of every slot the op changes, computed from `p`.
    pub fn apply(&self, p: &Project) -> Result<Outcome, EditError> {
        match self {
            Op::Reload { slot, value } => Ok(vec![(slot.clone(), Some(value.clone()))]),
            Op::Retarget { path, op } => {
                let map = p.retargets.get(path).ok_or_else(|| EditError::NoAsset(path.clone()))?;
                Ok(vec![(Slot::Retarget(path.clone()), Some(Value::Retarget(Arc::new(op.apply(map)?))))])
            }
            Op::Entity { scene, entity, op } => {
                let mut s = scene_of(p, scene)?.clone();
                op.apply(&mut s, scene, entity)?;
                Ok(vec![(Slot::Scene(scene.clone()), Some(Value::Scene(Arc::new(s))))])
            }
            Op::AddEntity { scene, parent, entity } => {
                let mut s = scene_of(p, scene)?.clone();
                let mut e = entity.clone();
                tree::check_name(&e.name).map_err(EditError::Invalid)?;
                e.name = tree::unique_name(&s, parent.as_deref(), &e.name);
                tree::insert(&mut s, parent.as_deref(), None, e).map_err(EditError::Invalid)?;
                Ok(vec![(Slot::Scene(scene.clone()), Some(Value::Scene(Arc::new(s))))])
            }
            Op::RenameAsset { from, to } => self.rename_asset(p, from, to),
            Op::DeleteAsset { path } => {
                let in_manifest = {
                    let m = &p.manifest;
                    [&m.scenes, &m.assets, &m.clips, &m.graphs].iter().any(|l| l.contains(path))
                };
                if !in_manifest {
                    return Err(EditError::NoAsset(path.clone()));
                }
                let users = asset_users(p, path);
                if !users.is_empty() {
                    return Err(EditError::InUse { asset: path.clone(), users });
                }
                let mut m = p.manifest.clone();
                for l in [&mut m.scenes, &mut m.assets, &mut m.clips, &mut m.graphs] {
                    l.retain(|x| x != path);
                }
                let mut out = vec![(Slot::Manifest, Some(Value::Manifest(m)))];
                if let Some(slot) = asset_slot(p, path) {
                    out.push((slot, None));
                }
                Ok(out)
            }
            Op::AddFiles { binary, files, entity, .. } => {
                let mut m = p.manifest.clone();
                let mut out = Vec::new();
                for b in binary {
                    if !m.assets.contains(b) {
                        check_new_path(p, b)?;
                        m.assets.push(b.clone());
                    }
                }
                for (slot, value) in files {
                    check_new_path(p, slot.path())?;
                    match slot {
                        Slot::Scene(k) => m.scenes.push(k.clone()),
                        Slot::Clip(k) => m.clips.push(k.clone()),
                        Slot::Skeleton(k) | Slot::Retarget(k) => m.assets.push(k.clone()),
                        Slot::Graph(k) => m.graphs.push(k.clone()),
                        Slot::Manifest => {
                            return Err(EditError::Invalid("the manifest is not a file to add".into()));
                        }
                    }
                    out.push((slot.clone(), Some(value.clone())));
                }
                if let Some((scene, parent, e)) = entity {
                    // The scene may be one of the files added.
                    let mut s = match files.iter().find(|(sl, _)| *sl == Slot::Scene(scene.clone())) {
                        Some((_, Value::Scene(s))) => (**s).clone(),
                        _ => scene_of(p, scene)?.clone(),
                    };
                    let mut e = e.clone();
                    e.name = tree::unique_name(&s, parent.as_deref(), &e.name);
                    tree::insert(&mut s, parent.as_deref(), None, e).map_err(EditError::Invalid)?;
                    out.retain(|(sl, _)| *sl != Slot::Scene(scene.clone()));
                    out.push((Slot::Scene(scene.clone()), Some(Value::Scene(Arc::new(s)))));
                }
                out.push((Slot::Manifest, Some(Value::Manifest(m))));
                Ok(out)
            }
            Op::ReplaceProject { project, .. } => {
                let mut slots = vec![Slot::Manifest];
                for q in [p, &**project] {
                    slots.extend(q.scenes.keys().map(|k| Slot::Scene(k.clone())));
                    slots.extend(q.clips.keys().map(|k| Slot::Clip(k.clone())));
                    slots.extend(q.skeletons.keys().map(|k| Slot::Skeleton(k.clone())));
                    slots.extend(q.graphs.keys().map(|k| Slot::Graph(k.clone())));
                    slots.extend(q.retargets.keys().map(|k| Slot::Retarget(k.clone())));
                }
                slots.sort();
                slots.dedup();
                Ok(slots
                    .into_iter()
                    .map(|s| {
                        let v = s.get(project);
                        (s, v)
                    })
                    .collect())
            }
            Op::Batch { ops, .. } => {
                let mut work = p.clone();
                let mut touched: Vec<Slot> = Vec::new();
                for op in ops {
                    for (slot, value) in op.apply(&work)? {
                        slot.set(&mut work, value);
                        if !touched.contains(&slot) {
                            touched.push(slot);
                        }
                    }
                }
                Ok(touched
                    .into_iter()
                    .map(|s| {
                        let v = s.get(&work);
                        (s, v)
                    })
                    .collect())
            }
            Op::RenameProject(name) => {
                if name.trim().is_empty() {
                    return Err(EditError::Invalid("a project name cannot be empty".to_owned()));
                }
                let mut m = p.manifest.clone();
                m.name = name.clone();
                Ok(vec![(Slot::Manifest, Some(Value::Manifest(m)))])
            }
            Op::SetDefaultInterpolation(i) => {
                let mut m = p.manifest.clone();
                m.default_interpolation = *i;
                Ok(vec![(Slot::Manifest, Some(Value::Manifest(m)))])
            }
            Op::Clip { path, op } => {
                let clip = p.clips.get(path).ok_or_else(|| EditError::NoAsset(path.clone()))?;
                let (next, _) = op.apply(clip, p.manifest.default_interpolation)?;
                Ok(vec![(Slot::Clip(path.clone()), Some(Value::Clip(Arc::new(next))))])
            }
            Op::Graph { path, op } => {
                let g = p.graphs.get(path).ok_or_else(|| EditError::NoAsset(path.clone()))?;
                let (next, _) = op.apply(g)?;
                Ok(vec![(Slot::Graph(path.clone()), Some(Value::Graph(Arc::new(next))))])
            }
        }
    }

    fn rename_asset(&self, p: &Project, from: &str, to: &str) -> Result<Outcome, EditError> {
        let slot = asset_slot(p, from).ok_or_else(|| {
            if p.manifest.assets.iter().any(|a| a == from) {
                EditError::Invalid(format!("{from} is a binary asset: its file keeps its name"))
            } else {
                EditError::NoAsset(from.to_owned())
            }
        })?;
        if from == to {
            return Ok(Vec::new());
        }
        check_new_path(p, to)?;
        let suffix = kind_suffix(&slot);
        if !to.ends_with(suffix) {
            return Err(EditError::Invalid(format!("{to:?} must end with {suffix}")));
        }
        let mut out: Outcome = Vec::new();
        let mut m = p.manifest.clone();
        for l in [&mut m.scenes, &mut m.assets, &mut m.clips, &mut m.graphs] {
            for x in l.iter_mut() {
                if x == from {
                    *x = to.to_owned();
                }
            }
        }
        out.push((Slot::Manifest, Some(Value::Manifest(m))));
        let value = slot.get(p);
        let new_slot = match &slot {
            Slot::Scene(_) => Slot::Scene(to.to_owned()),
            Slot::Clip(_) => Slot::Clip(to.to_owned()),
            Slot::Skeleton(_) => Slot::Skeleton(to.to_owned()),
            Slot::Graph(_) => Slot::Graph(to.to_owned()),
            Slot::Retarget(_) => Slot::Retarget(to.to_owned()),
            Slot::Manifest => return Err(EditError::Invalid("the manifest cannot be renamed".into())),
        };
        out.push((slot, None));
        // A renamed scene's references are updated below on its new value.
        let mut renamed_scene = None;
        match value {
            Some(Value::Scene(s)) => renamed_scene = Some(s),
            v => out.push((new_slot.clone(), v)),
        }
        for (sp, scene) in &p.scenes {
            let base = if sp == from { renamed_scene.take().unwrap_or_default() } else { scene.clone() };
            let base: SceneDesc = (*base).clone();
            let mut s = base;
            let mut changed = sp == from;
            for path in tree::all_paths(&s.clone()) {
                let Some(e) = tree::find_mut(&mut s, &path) else { continue };
                if let Some(a) = &mut e.animator {
                    changed |= rename_ref(&mut a.rig, from, to);
                    if let Some(c) = &mut a.clip {
                        changed |= rename_ref(c, from, to);
                    }
                    if let Some(g) = &mut a.graph {
                        changed |= rename_ref(g, from, to);
                    }
                }
                if let Some(MeshDesc::Asset(r)) = &mut e.mesh {
                    changed |= rename_ref(r, from, to);
                }
            }
            if changed {
                let key = if sp == from { to.to_owned() } else { sp.clone() };
                out.push((Slot::Scene(key), Some(Value::Scene(Arc::new(s)))));
            }
        }
        for (gp, g) in &p.graphs {
            let mut g2: marrow_engine::graph::AnimGraph = if gp == from { continue } else { (**g).clone() };
            let mut changed = false;
            for n in &mut g2.nodes {
                changed |= super::graph_ops::rename_node_clip_refs(&mut n.kind, &|r: &mut String| {
                    rename_ref(r, from, to)
                });
            }
            if changed {
                out.push((Slot::Graph(gp.clone()), Some(Value::Graph(Arc::new(g2)))));
            }
        }
        // A renamed graph's own node references.
        if let Some((_, Some(Value::Graph(g)))) = out.iter_mut().find(|(s, _)| *s == new_slot) {
            for n in &mut Arc::make_mut(g).nodes {
                super::graph_ops::rename_node_clip_refs(&mut n.kind, &|r: &mut String| {
                    rename_ref(r, from, to)
                });
            }
        }
        Ok(out)
    }
}
