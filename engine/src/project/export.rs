//! A project scene as glTF: [`scene_for_export`] turns one scene of a [`Project`] into the
//! glTF-shaped [`ImportedScene`] that [`crate::gltf::export_glb`] writes, and [`write_export`]
//! writes it to a `.glb` or a `.gltf` with its `.bin`, atomically.
//!
//! The shape: each entity is a node (its name and local transform); an entity with an Animator
//! holds its rig's bones as joint nodes in their bind pose under it, and a skin (the skeleton's
//! inverse binds, joints in bone order); a socketed entity is a child of its bone's node with
//! the socket offset as its transform; a skinned mesh sits on a root node (glTF ignores a
//! skinned mesh node's transform, and the Khronos validator warns about one that is not a root)
//! with its joints remapped to the rig's bone order; box meshes are written as meshes. Every clip
//! of the project for a rig's skeleton becomes one glTF animation (played by every rig of that
//! skeleton), and property animations are one animation of their own, named after the scene (in
//! Marrow they play beside every clip; a property animation on a socketed entity is left out, as
//! its socket places it).
//!
//! Refused, with every fault named and nothing written: an Animator whose rig, clip or graph
//! does not resolve or whose clip is for another rig, a non-finite key, transform or weight, a
//! skinned mesh with no rig at or above it or skinned to another skeleton (a mesh on a rig that
//! is not skinned for it), a particle cloud or crowd whose mesh has no skin, a socket whose
//! parent has no rig or whose bone the rig lacks.
//!
//! Not exported (named in the report's notes): particle clouds and crowds (glTF has neither) and
//! graphs (their clips are exported; a blend has no glTF form).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use super::{Library, Project};
use crate::clip::{Clip, find_clip_fault};
use crate::gltf::{
    Animation, BoneRef, ExportError, ExportOptions, ExportReport, ImportedScene, Node, NodeAnimation, Rig,
    RigClip, Skin,
};
use crate::math::Transform;
use crate::mesh::Mesh;
use crate::scene::{AssetSource, EntityDesc, MeshAsset, MeshDesc, SceneDesc};
use crate::skeleton::{NO_PARENT, Skeleton};
use crate::track::{Animatable, Track, TrackFault};

/// A project scene ready to write, and what it leaves out.
#[derive(Clone, Debug)]
pub struct SceneExport {
    /// The scene in glTF's shape.
    pub scene: ImportedScene,
    /// What is not exported and why (particle clouds, crowds, graphs).
    pub notes: Vec<String>,
}

/// The scene of `project` named `scene` (its name, its path, or its file stem; `None`: the
/// first scene of the manifest) in glTF's shape, with `library`'s skeletons, clips and meshes.
/// Every fault is collected before any is returned.
pub fn scene_for_export(
    project: &Project,
    library: &Library,
    scene: Option<&str>,
) -> Result<SceneExport, ExportError> {
    let desc = find_scene(project, scene)?;
    let mut b = Builder {
        lib: library,
        out: empty_scene(),
        faults: Vec::new(),
        notes: Vec::new(),
        rigs: Vec::new(),
        meshes: HashMap::new(),
        properties: Vec::new(),
    };
    for e in &desc.entities {
        b.entity(e, None, None, None, "");
    }
    b.clips();
    if !b.faults.is_empty() {
        return Err(ExportError::Refused { faults: b.faults });
    }
    b.finish(&desc.name);
    Ok(SceneExport { scene: b.out, notes: b.notes })
}

/// A scene file's name without its folder and `.scene.ron` (`scenes/main.scene.ron` -> `main`):
/// how the export names a scene.
pub fn scene_stem(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path).trim_end_matches(".ron").trim_end_matches(".scene")
}

fn find_scene<'a>(project: &'a Project, wanted: Option<&str>) -> Result<&'a SceneDesc, ExportError> {
    let stem = |p: &str| scene_stem(p).to_owned();
    let found = project.manifest.scenes.iter().find(|p| match wanted {
        None => true,
        Some(w) => p.as_str() == w || stem(p) == w || project.scenes.get(*p).is_some_and(|s| s.name == w),
    });
    found.and_then(|p| project.scenes.get(p)).map(|s| &**s).ok_or_else(|| {
        let known: Vec<String> = project.manifest.scenes.iter().map(|p| stem(p)).collect();
        ExportError::Refused {
            faults: vec![match wanted {
                Some(w) => format!("no scene {w:?} in the project (scenes: {})", known.join(", ")),
                None => "the project has no scene".to_owned(),
            }],
        }
    })
}

fn empty_scene() -> ImportedScene {
    ImportedScene {
        source: Default::default(),
        nodes: Vec::new(),
        roots: Vec::new(),
        order: Vec::new(),
        meshes: Vec::new(),
        skins: Vec::new(),
        rigs: Vec::new(),
        animations: Vec::new(),
        materials: Vec::new(),
        images: Vec::new(),
        warnings: Vec::new(),
    }
}

/// A rig entity of the scene.
struct RigEntity {
    skeleton: Arc<Skeleton>,
    path: String,
}

struct Builder<'a> {
    lib: &'a Library,
    out: ImportedScene,
    faults: Vec<String>,
    notes: Vec<String>,
    /// Parallel to `out.rigs`.
    rigs: Vec<RigEntity>,
    /// glTF mesh index per mesh asset (by address; the asset is held so no other takes it).
    meshes: HashMap<*const MeshAsset, (usize, Arc<MeshAsset>)>,
    /// Property animations by node.
    properties: Vec<(usize, crate::property::PropertyAnimation)>,
}

/// What is wrong with `track` for glTF: no keys, or [`Track::find_fault`]'s fault (a
/// non-finite value said as "key K at T s is not finite").
fn track_fault<T: Animatable>(track: &Track<T>) -> Option<String> {
    if track.is_empty() {
        return Some("has no keys".to_owned());
    }
    Some(match track.find_fault()? {
        TrackFault::NonFiniteValue { index, time } => format!("key {index} at {time} s is not finite"),
        f => f.to_string(),
    })
}

fn transform_finite(t: &Transform) -> bool {
    t.translation.is_finite() && t.rotation.is_finite() && t.scale.is_finite()
}

impl Builder<'_> {
    fn push_node(&mut self, name: &str, parent: Option<usize>, transform: Transform) -> usize {
        let i = self.out.nodes.len();
        self.out.nodes.push(Node {
            name: name.to_owned(),
            parent,
            children: Vec::new(),
            transform,
            mesh: None,
            skin: None,
            morph_weights: Vec::new(),
            bones: Vec::new(),
        });
        match parent {
            Some(p) => self.out.nodes[p].children.push(i),
            None => self.out.roots.push(i),
        }
        i
    }

    /// The node an entity hangs from: its parent's, or, for a socket, its bone's.
    fn attach(
        &mut self,
        e: &EntityDesc,
        parent: Option<usize>,
        parent_rig: Option<usize>,
        path: &str,
    ) -> (Option<usize>, Transform) {
        let own = e.transform.unwrap_or_default();
        let Some(s) = &e.socket else { return (parent, own) };
        let Some(r) = parent_rig else {
            self.faults.push(format!(
                "entity {path}: its socket on bone {:?} needs a parent with an Animator",
                s.bone
            ));
            return (parent, own);
        };
        let sk = &self.rigs[r].skeleton;
        match sk.bone_names.iter().position(|n| *n == s.bone) {
            Some(b) => (Some(self.out.rigs[r].bone_nodes[b]), s.offset),
            None => {
                self.faults.push(format!(
                    "entity {path}: its socket names bone {:?}, which the rig's skeleton {:?} does not have",
                    s.bone, sk.name
                ));
                (parent, own)
            }
        }
    }

    fn entity(
        &mut self,
        e: &EntityDesc,
        parent: Option<usize>,
        rig_above: Option<usize>,
        parent_rig: Option<usize>,
        at: &str,
    ) {
        let path = if at.is_empty() { e.name.clone() } else { format!("{at}/{}", e.name) };
        let (parent, transform) = self.attach(e, parent, parent_rig, &path);
        if !transform_finite(&transform) {
            self.faults.push(format!("entity {path}: its transform is not finite"));
        }
        let node = self.push_node(&e.name, parent, transform);
        let own_rig = e.animator.as_ref().and_then(|a| self.rig(a, node, &path));
        let rig = own_rig.or(rig_above);
        let holder = e.mesh.as_ref().and_then(|m| self.mesh(m, e, node, rig, &path));
        if e.animation.is_some() && e.socket.is_some() {
            self.notes.push(format!(
                "entity {path}: its property animation is not exported (its socket places it, as in Marrow)"
            ));
        } else if let Some(a) = &e.animation {
            for (what, fault) in [
                ("translation", a.translation.as_ref().and_then(track_fault)),
                ("rotation", a.rotation.as_ref().and_then(track_fault)),
                ("scale", a.scale.as_ref().and_then(track_fault)),
            ] {
                if let Some(f) = fault {
                    self.faults.push(format!("entity {path}: property animation {what} {f}"));
                }
            }
            self.properties.push((node, a.clone()));
        }
        if let Some(w) = &e.morph_weights {
            self.morph_weights(w, holder, &path);
        }
        if let Some(p) = &e.particles {
            self.needs_skin(&p.mesh, "particle cloud", &path);
            self.notes.push(format!(
                "entity {path}: its particle cloud is not exported (glTF has no particle clouds)"
            ));
        }
        if let Some(c) = &e.crowd {
            self.needs_skin(&c.mesh, "crowd", &path);
            self.notes.push(format!("entity {path}: its crowd is not exported (glTF has no crowds)"));
        }
        for c in &e.children {
            self.entity(c, Some(node), rig, own_rig, &path);
        }
    }

    /// An entity's own morph weights on the node holding its mesh (one per morph target).
    fn morph_weights(&mut self, w: &[f32], holder: Option<usize>, path: &str) {
        if w.iter().any(|x| !x.is_finite()) {
            self.faults.push(format!("entity {path}: its morph weights are not finite"));
        }
        let Some(h) = holder else { return };
        let targets = self.out.nodes[h].mesh.map_or(0, |m| self.out.meshes[m].weights.len());
        if w.len() != targets {
            self.faults.push(format!(
                "entity {path}: it has {} morph weights for a mesh with {targets} morph targets",
                w.len()
            ));
            return;
        }
        self.out.nodes[h].morph_weights = w.to_vec();
    }

    fn needs_skin(&mut self, reference: &str, what: &str, path: &str) {
        match self.lib.mesh(reference) {
            Ok(m) if m.is_skinned() => {}
            Ok(_) => self.faults.push(format!("entity {path}: the {what}'s mesh {reference:?} has no skin")),
            Err(e) => self.faults.push(format!("entity {path}: {what} mesh: {e}")),
        }
    }

    /// The rig of an Animator entity at `node`: its bones as joint nodes and a skin.
    fn rig(&mut self, a: &crate::scene::AnimatorDesc, node: usize, path: &str) -> Option<usize> {
        let sk = match self.lib.skeleton(&a.rig) {
            Ok(s) => s,
            Err(e) => {
                self.faults.push(format!("entity {path}: its Animator's rig: {e}"));
                return None;
            }
        };
        if let Some(c) = &a.clip {
            match self.lib.clip(c, &sk) {
                Ok(clip) if clip.skeleton != sk.name => self.faults.push(format!(
                    "entity {path}: its clip {c:?} is for skeleton {:?}, not the rig's {:?}",
                    clip.skeleton, sk.name
                )),
                Ok(clip) => {
                    if let Some(f) = find_clip_fault(&clip, &sk) {
                        self.faults.push(format!("entity {path}: its clip {c:?}: {f}"));
                    }
                }
                Err(e) => self.faults.push(format!("entity {path}: its Animator's clip: {e}")),
            }
        }
        if let Some(g) = &a.graph {
            if let Err(e) = self.lib.graph(g, &sk) {
                self.faults.push(format!("entity {path}: its Animator's graph: {e}"));
            }
            self.notes.push(format!("entity {path}: its graph {g:?} is not exported (its clips are)"));
        }
        if sk.bone_count() == 0 {
            self.faults.push(format!(
                "entity {path}: its rig's skeleton {:?} has no bones (a glTF skin needs a joint)",
                sk.name
            ));
            return None;
        }
        let r = self.out.rigs.len();
        let mut bone_nodes = Vec::with_capacity(sk.bone_count());
        for b in 0..sk.bone_count() {
            let p = sk.parents[b];
            let parent = if p == NO_PARENT { node } else { bone_nodes[p as usize] };
            let n = self.push_node(&sk.bone_names[b], Some(parent), sk.bind_pose[b]);
            self.out.nodes[n].bones.push(BoneRef { rig: r, bone: b });
            bone_nodes.push(n);
        }
        let skin = self.out.skins.len();
        self.out.skins.push(Skin {
            name: sk.name.clone(),
            joints: bone_nodes.clone(),
            inverse_bind: sk.inverse_bind.clone(),
            skeleton_root: None,
            rig: r,
        });
        self.out.rigs.push(Rig {
            skeleton: (*sk).clone(),
            skins: vec![skin],
            joint_nodes: bone_nodes.clone(),
            bone_nodes,
            joint_to_bone: (0..sk.bone_count() as u16).collect(),
            inverse_bind: sk.inverse_bind.clone(),
            root_parent: Some(node),
            bindings: Vec::new(),
        });
        self.rigs.push(RigEntity { skeleton: sk, path: path.to_owned() });
        Some(r)
    }

    /// The entity's mesh on its node (or, skinned, on a root node): the node holding it.
    fn mesh(
        &mut self,
        m: &MeshDesc,
        e: &EntityDesc,
        node: usize,
        rig: Option<usize>,
        path: &str,
    ) -> Option<usize> {
        let asset = match m {
            MeshDesc::Box { half_extents } => Arc::new(MeshAsset::cuboid(&e.name, *half_extents)),
            MeshDesc::Asset(r) => match self.lib.mesh(r) {
                Ok(a) => a,
                Err(err) => {
                    self.faults.push(format!("entity {path}: its mesh: {err}"));
                    return None;
                }
            },
        };
        let Some(mesh_sk) = asset.skeleton.clone() else {
            let index = self.mesh_index(&asset, None);
            self.out.nodes[node].mesh = Some(index);
            self.out.nodes[node].morph_weights = self.out.meshes[index].weights.clone();
            return Some(node);
        };
        let Some(r) = rig else {
            self.faults.push(format!(
                "entity {path}: its mesh is skinned to skeleton {:?} but no Animator at or above it drives it",
                mesh_sk.name
            ));
            return None;
        };
        if !mesh_sk.same_rig(&self.rigs[r].skeleton) {
            self.faults.push(format!(
                "entity {path}: its mesh is skinned to skeleton {:?}, not to its rig's ({:?}, on {})",
                mesh_sk.name, self.rigs[r].skeleton.name, self.rigs[r].path
            ));
            return None;
        }
        let index = self.mesh_index(&asset, Some(&asset.joint_to_bone));
        // The skinned mesh on a root node of its own (the entity's node keeps its place and
        // children); glTF places skinned vertices by the joints alone.
        let holder = if e.children.is_empty() && e.animator.is_none() {
            self.detach(node);
            node
        } else {
            self.push_node(&e.name, None, Transform::IDENTITY)
        };
        let n = &mut self.out.nodes[holder];
        n.mesh = Some(index);
        n.skin = self.out.rigs[r].skins.first().copied();
        n.morph_weights = self.out.meshes[index].weights.clone();
        Some(holder)
    }

    /// Moves `node` (a leaf) to the scene's roots with an identity transform.
    fn detach(&mut self, node: usize) {
        if let Some(p) = self.out.nodes[node].parent.take() {
            self.out.nodes[p].children.retain(|&c| c != node);
            self.out.roots.push(node);
        }
        self.out.nodes[node].transform = Transform::IDENTITY;
    }

    /// The glTF mesh of `asset` (written once), joints remapped to bone order when skinned.
    fn mesh_index(&mut self, asset: &Arc<MeshAsset>, joint_to_bone: Option<&[u16]>) -> usize {
        if let Some((i, _)) = self.meshes.get(&Arc::as_ptr(asset)) {
            return *i;
        }
        let mut mesh: Mesh = asset.mesh.clone();
        if let Some(map) = joint_to_bone {
            for p in &mut mesh.primitives {
                if let Some(s) = &mut p.skin {
                    s.joints = s.joints_to_bones(map);
                }
            }
        }
        // The asset's materials and images join the scene's, their indices moved along.
        let (m0, i0) = (self.out.materials.len(), self.out.images.len());
        self.out.images.extend(asset.images.iter().cloned());
        self.out.materials.extend(asset.materials.iter().map(|m| crate::mesh::Material {
            base_color_texture: m.base_color_texture.map(|t| t + i0),
            ..m.clone()
        }));
        for p in &mut mesh.primitives {
            p.material = p.material.filter(|&m| m < asset.materials.len()).map(|m| m + m0);
        }
        let i = self.out.meshes.len();
        self.out.meshes.push(mesh);
        self.meshes.insert(Arc::as_ptr(asset), (i, asset.clone()));
        i
    }

    /// Every clip of the project that fits a rig of the scene (its skeleton's name and bone
    /// count), one animation per clip (a glTF asset's reference can hold one clip per
    /// skeleton), played by every rig it fits.
    fn clips(&mut self) {
        let mut entries: Vec<(String, Arc<Clip>, Vec<usize>)> = Vec::new();
        for (reference, clip) in self.lib.all_clips() {
            let fits = |r: &RigEntity| {
                clip.skeleton == r.skeleton.name && clip.channels().len() == r.skeleton.bone_count()
            };
            let rigs: Vec<usize> = (0..self.rigs.len()).filter(|&r| fits(&self.rigs[r])).collect();
            let Some(&first) = rigs.first() else {
                if self.rigs.iter().any(|r| r.skeleton.name == clip.skeleton) {
                    self.notes.push(format!(
                        "clip {reference:?} names skeleton {:?} but has another bone count than the scene's rig of that name: not exported",
                        clip.skeleton
                    ));
                }
                continue;
            };
            let skeleton = self.rigs[first].skeleton.clone();
            self.clip_faults(&reference, &clip, &skeleton);
            entries.push((reference, clip, rigs));
        }
        // Names: the clip's own, or its reference where two clips share a name (and the
        // skeleton's where one reference holds clips for several).
        let mut count: HashMap<&str, usize> = HashMap::new();
        let mut per_ref: HashMap<&str, usize> = HashMap::new();
        for (reference, clip, _) in &entries {
            *count.entry(clip.name.as_str()).or_default() += 1;
            *per_ref.entry(reference.as_str()).or_default() += 1;
        }
        let mut animations = Vec::with_capacity(entries.len());
        for (reference, clip, rigs) in &entries {
            let name = if per_ref[reference.as_str()] > 1 {
                format!("{reference} ({})", clip.skeleton)
            } else if count[clip.name.as_str()] > 1 || clip.name.is_empty() {
                reference.clone()
            } else {
                clip.name.clone()
            };
            animations.push(Animation {
                name,
                duration: clip.duration(),
                clips: rigs.iter().map(|&r| RigClip { rig: r, clip: (**clip).clone() }).collect(),
                nodes: Vec::new(),
                morphs: Vec::new(),
            });
        }
        self.out.animations = animations;
    }

    /// Every fault of a clip that fits a rig: each non-finite key, and the clip's own checks
    /// (its length, markers outside it).
    fn clip_faults(&mut self, reference: &str, clip: &Clip, skeleton: &Skeleton) {
        if let Some(f) = find_clip_fault(clip, skeleton)
            && !matches!(f, crate::clip::ClipFault::Track { .. })
        {
            self.faults.push(format!("clip {reference:?}: {f}"));
        }
        for (b, ch) in clip.channels().iter().enumerate() {
            let bone = skeleton.bone_names.get(b).cloned().unwrap_or_else(|| format!("#{b}"));
            for (what, fault) in [
                ("translation", ch.translation.as_ref().and_then(track_fault)),
                ("rotation", ch.rotation.as_ref().and_then(track_fault)),
                ("scale", ch.scale.as_ref().and_then(track_fault)),
            ] {
                if let Some(f) = fault {
                    self.faults.push(format!("clip {reference:?}: bone {bone:?} {what} {f}"));
                }
            }
        }
        if let Some(m) = clip.markers().iter().find(|m| !m.time.is_finite()) {
            self.faults.push(format!("clip {reference:?}: marker {:?} has a non-finite time", m.name));
        }
    }

    /// Property animations as one animation of their own (named after the scene: they play
    /// beside every clip in Marrow, and tying them to one clip's length would change both), then
    /// the node order.
    fn finish(&mut self, scene_name: &str) {
        let props: Vec<NodeAnimation> =
            self.properties.drain(..).map(|(node, animation)| NodeAnimation { node, animation }).collect();
        if !props.is_empty() {
            let duration = props.iter().map(|p| p.animation.duration()).fold(0.0, f32::max);
            let taken = |n: &str| self.out.animations.iter().any(|a| a.name == n);
            let mut name = format!("{scene_name} properties");
            while taken(&name) {
                name.push('\'');
            }
            self.out.animations.push(Animation {
                name,
                duration,
                clips: Vec::new(),
                nodes: props,
                morphs: Vec::new(),
            });
        }
        // Parents first: walk from the roots.
        let mut order = Vec::with_capacity(self.out.nodes.len());
        let mut stack: Vec<usize> = self.out.roots.iter().rev().copied().collect();
        while let Some(n) = stack.pop() {
            order.push(n);
            stack.extend(self.out.nodes[n].children.iter().rev());
        }
        self.out.order = order;
    }
}

/// Writes `scene` to `path`: a `.glb` (buffer embedded) or a `.gltf` with its buffer beside it
/// as `<stem>.<8 hex digits of the buffer's hash>.bin`. Each file is written whole or not at
/// all ([`super::write_atomic`]: through a link to its file; a device, FIFO or folder refused).
/// For a `.gltf` the new buffer is written first under its new name, which only the new JSON
/// names, and the JSON is renamed into place last; then the buffers the old JSON named (this
/// writer's `<stem>.bin` or `<stem>.<hash>.bin`) go, so a kill at any point leaves the old pair
/// or the new pair. On any fault nothing is replaced.
pub fn write_export(
    scene: &ImportedScene,
    opts: &ExportOptions,
    path: &Path,
) -> Result<ExportReport, ExportError> {
    let ext = path.extension().map(|e| e.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    let write =
        |p: &Path, bytes: &[u8]| super::write_atomic(p, bytes).map_err(|e| ExportError::Write(e.to_string()));
    match ext.as_str() {
        "glb" => {
            let (bytes, report) = crate::gltf::export_glb(scene, opts)?;
            write(path, &bytes)?;
            Ok(report)
        }
        "gltf" => {
            let target =
                super::fs::resolve_write_target(path).map_err(|e| ExportError::Write(e.to_string()))?;
            let stem = target
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "scene".into());
            let (json, bin, bin_name, report) = crate::gltf::export_gltf_named(scene, opts, |bin| {
                format!("{stem}.{:08x}.bin", super::journal::fnv1a(bin) >> 32)
            })?;
            let old_bins = own_buffers(&target, &stem);
            let bin_path = target.with_file_name(&bin_name);
            if !bin.is_empty() {
                write(&bin_path, &bin)?;
            }
            if let Err(e) = write(&target, &json) {
                if !bin.is_empty() && !old_bins.contains(&bin_name) {
                    let _ = std::fs::remove_file(&bin_path);
                }
                return Err(e);
            }
            for old in old_bins.iter().filter(|b| **b != bin_name || bin.is_empty()) {
                let old = target.with_file_name(old);
                if std::fs::symlink_metadata(&old).is_ok_and(|m| m.file_type().is_file()) {
                    let _ = std::fs::remove_file(old);
                }
            }
            Ok(report)
        }
        _ => Err(ExportError::Option(format!("{}: the file must end in .glb or .gltf", path.display()))),
    }
}

/// The buffer file names beside `gltf` that this writer owns and may remove when it replaces
/// that file: those the current file names that are `<stem>.bin` or `<stem>.<8 hex>.bin`, and any
/// `<stem>.<8 hex>.bin` no file names (left by a write killed before its JSON was renamed). The
/// temps of such buffers whose writer is gone are removed here too.
fn own_buffers(gltf: &Path, stem: &str) -> Vec<String> {
    let ours = |name: &str| {
        name == format!("{stem}.bin")
            || name
                .strip_prefix(stem)
                .and_then(|r| r.strip_prefix('.'))
                .and_then(|r| r.strip_suffix(".bin"))
                .is_some_and(|h| {
                    h.len() == 8 && h.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
                })
    };
    let mut out: Vec<String> = Vec::new();
    if let Ok(bytes) = super::fs::read_regular(gltf, gltf)
        && let Ok(doc) = serde_json::from_slice::<serde_json::Value>(&bytes)
        && let Some(buffers) = doc.get("buffers").and_then(|b| b.as_array())
    {
        out.extend(
            buffers.iter().filter_map(|b| b.get("uri")?.as_str()).filter(|u| ours(u)).map(str::to_owned),
        );
    }
    let dir = gltf.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    super::fs::remove_dead_temps(dir, &ours);
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if ours(&name) && name != format!("{stem}.bin") && !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}
