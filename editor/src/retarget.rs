//! Applying a retarget map to clips: each source clip through the project's `*.retarget.ron`
//! map becomes a clip file of the target rig, all of them one undoable step
//! ([`Op::AddFiles`]: "Retarget 2 Clips onto Armature"). The Retarget window's Apply and
//! `marrow retarget` both build their step here.
//!
//! Not here: the retargeting itself (`marrow_engine::retarget`), editing the map
//! ([`crate::document::retarget_ops`]).

use std::path::Path;
use std::sync::Arc;

use marrow_engine::clip::Clip;
use marrow_engine::project::file::ClipAsset;
use marrow_engine::project::{Library, Project};
use marrow_engine::retarget::{RetargetMap, RetargetPlan};
use marrow_engine::skeleton::Skeleton;

use crate::document::{Op, Slot, Value};
use crate::import::{sanitize, unique_path};

/// The rigs a map names, found in the library by skeleton name: (source, target).
pub fn rigs_of(library: &Library, map: &RetargetMap) -> Result<(Arc<Skeleton>, Arc<Skeleton>), String> {
    let find = |side: &str, name: &str| {
        library
            .skeleton_named(name)
            .map(|(_, s)| s.clone())
            .ok_or_else(|| format!("the project has no {side} rig named {name:?}"))
    };
    Ok((find("source", &map.source)?, find("target", &map.target)?))
}

/// Every clip of the skeleton named `rig` with its library reference: the project's clip files
/// first, then the clips models hold that no clip file of the rig already holds under the same
/// name (an imported model's clips are its clip files), each in reference order.
pub fn clips_of_rig<'a>(library: &'a Library, rig: &str) -> Vec<(&'a str, &'a Arc<Clip>)> {
    let of_rig = |r: &'a str| Some((r, library.clips(r).iter().find(|c| c.skeleton == rig)?));
    let (files, models): (Vec<_>, Vec<_>) =
        library.clip_refs().filter_map(of_rig).partition(|(r, _)| r.ends_with(".clip.ron"));
    let mut out = files;
    for (r, c) in models {
        if !out.iter().any(|(_, f)| f.name == c.name) {
            out.push((r, c));
        }
    }
    out
}

/// The step retargeting the clips at `clips` (library references) through the map at
/// `map_path`: one clip file each, `clips/<clip>_<target rig>.clip.ron` (numbered when taken),
/// holding the clip under its own name. Every fault comes back (a missing map or rig, a map
/// that does not fit its rigs, a reference with no clip for the source rig); nothing is made
/// unless all of them retarget.
pub fn retarget_op(
    project: &Project,
    library: &Library,
    root: &Path,
    map_path: &str,
    clips: &[String],
) -> Result<Op, Vec<String>> {
    let map =
        project.retargets.get(map_path).ok_or_else(|| vec![format!("no retarget file {map_path:?}")])?;
    let (source, target) = rigs_of(library, map).map_err(|e| vec![format!("{map_path}: {e}")])?;
    let plan = RetargetPlan::new(map, &source, &target).map_err(|e| vec![format!("{map_path}: {e}")])?;
    if clips.is_empty() {
        return Err(vec!["no clips chosen to retarget".into()]);
    }
    let mut planned = project.clone();
    let mut files = Vec::new();
    let mut faults = Vec::new();
    for r in clips {
        let Some(clip) = library.clips(r).iter().find(|c| c.skeleton == source.name) else {
            faults.push(format!("{r}: no clip for the source rig {:?}", source.name));
            continue;
        };
        match plan.retarget_clip(clip) {
            Ok(out) => {
                let stem = format!("{}_{}", sanitize(&clip.name), sanitize(&target.name));
                let path = unique_path(&planned, root, "clips", &stem, ".clip.ron");
                planned.manifest.clips.push(path.clone());
                let asset = ClipAsset { clip: Arc::new(out), bones: target.bone_names.clone() };
                files.push((Slot::Clip(path), Value::Clip(Arc::new(asset))));
            }
            Err(e) => faults.push(format!("{r}: {e}")),
        }
    }
    if !faults.is_empty() {
        return Err(faults);
    }
    let n = files.len();
    Ok(Op::AddFiles {
        label: format!("Retarget {n} Clip{} onto {}", if n == 1 { "" } else { "s" }, target.name),
        binary: Vec::new(),
        files,
        entity: None,
    })
}

/// The clip `clip_ref` (a library reference of the map's source rig) retargeted through the map
/// at `map_path`, in memory (for a preview: nothing is added to the project), or why not.
pub fn retarget_preview(
    project: &Project,
    library: &Library,
    map_path: &str,
    clip_ref: &str,
) -> Result<Arc<Clip>, String> {
    let map = project.retargets.get(map_path).ok_or_else(|| format!("no retarget file {map_path:?}"))?;
    let (source, target) = rigs_of(library, map).map_err(|e| format!("{map_path}: {e}"))?;
    let plan = RetargetPlan::new(map, &source, &target).map_err(|e| format!("{map_path}: {e}"))?;
    let clip = library
        .clips(clip_ref)
        .iter()
        .find(|c| c.skeleton == source.name)
        .ok_or_else(|| format!("{clip_ref}: no clip for the source rig {:?}", source.name))?;
    plan.retarget_clip(clip).map(Arc::new).map_err(|e| format!("{clip_ref}: {e}"))
}

/// The step adding a new retarget file from `source` to `target` (skeleton names), filled by
/// the humanoid auto-map, at `retargets/<source>_to_<target>.retarget.ron` (numbered when
/// taken). Returns the step and the file's path.
pub fn new_map_op(project: &Project, root: &Path, source: &Skeleton, target: &Skeleton) -> (Op, String) {
    let map = marrow_engine::retarget::auto_map(source, target);
    let stem = format!("{}_to_{}", sanitize(&source.name), sanitize(&target.name));
    let path = unique_path(project, root, "retargets", &stem, ".retarget.ron");
    let op = Op::AddFiles {
        label: format!("New Retarget Map {} to {}", source.name, target.name),
        binary: Vec::new(),
        files: vec![(Slot::Retarget(path.clone()), Value::Retarget(Arc::new(map)))],
        entity: None,
    };
    (op, path)
}
