//! `marrow retarget --into PROJECT (--map FILE | --from RIG --to RIG) [--limb-ik] [--all | CLIP...]`:
//! File > Retarget Clips, headless and in bulk. The clips (library references such as
//! `clips/walk.clip.ron` or `assets/walk.bvh#walk`, or `--all`: every clip of the source rig)
//! go through the project's retarget map `--map`, or through a new map from rig `--from` to rig
//! `--to` (skeleton names) filled by the humanoid auto-map and written as a retarget file of the
//! project. Each clip becomes a clip file of the target rig (`marrow_editor::retarget`, the
//! window's own step); the project is saved once, with the editor's all-or-nothing save. Any
//! fault (a rig or clip that is not there, a map that does not fit its rigs) stops it before
//! anything is written. Not here: the retargeting itself (`marrow_engine::retarget`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use marrow_editor::document::{Document, Op};
use marrow_engine::project::Library;

/// Arguments of `marrow retarget`.
#[derive(Debug, clap::Args)]
pub struct RetargetArgs {
    /// Clip references of the project to retarget (see `--all`).
    pub clips: Vec<String>,
    /// The project (its folder or `project.ron`).
    #[arg(long)]
    pub into: PathBuf,
    /// The project's retarget file to use (`retargets/a_to_b.retarget.ron`).
    #[arg(long, conflicts_with_all = ["from", "to"])]
    pub map: Option<String>,
    /// Source rig (skeleton name) of a new, auto-mapped retarget file.
    #[arg(long, requires = "to")]
    pub from: Option<String>,
    /// Target rig (skeleton name) of a new, auto-mapped retarget file.
    #[arg(long, requires = "from")]
    pub to: Option<String>,
    /// Every clip of the source rig.
    #[arg(long, conflicts_with = "clips")]
    pub all: bool,
    /// Turn the map's limb IK on (saved in its file): feet and hands placed where the source's
    /// are, scaled by the hip ratio.
    #[arg(long)]
    pub limb_ik: bool,
}

/// Runs `marrow retarget`.
pub fn run(args: &RetargetArgs) -> anyhow::Result<ExitCode> {
    let mut doc = Document::open(&args.into)
        .map_err(|e| anyhow::anyhow!("{}: cannot open the project: {e}", args.into.display()))?;
    let root = doc.root().map(Path::to_owned).unwrap_or_default();
    let library = Library::load(doc.project(), &root)
        .map_err(|e| anyhow::anyhow!("{}: cannot load the project's assets: {e}", root.display()))?;
    let map_path = match (&args.map, &args.from, &args.to) {
        (Some(m), _, _) => {
            if !doc.project().retargets.contains_key(m) {
                let known: Vec<&String> = doc.project().retargets.keys().collect();
                anyhow::bail!("--map {m:?}: the project has no such retarget file (it has {known:?})");
            }
            m.clone()
        }
        (None, Some(from), Some(to)) => {
            let rig = |name: &str| {
                library.skeleton_named(name).map(|(_, s)| s.clone()).ok_or_else(|| {
                    let mut names: Vec<&str> = library.rigs().map(|(_, s)| s.name.as_str()).collect();
                    names.dedup();
                    anyhow::anyhow!("the project has no rig named {name:?} (it has {names:?})")
                })
            };
            let (source, target) = (rig(from)?, rig(to)?);
            let (op, path) = marrow_editor::retarget::new_map_op(doc.project(), &root, &source, &target);
            doc.apply(&op, 1).map_err(|e| anyhow::anyhow!("the new retarget file does not apply: {e}"))?;
            let map = &doc.project().retargets[&path];
            println!("new retarget file {path}: {} bone(s) auto-mapped", map.bones.len());
            path
        }
        _ => anyhow::bail!("say which map: --map FILE, or --from RIG --to RIG for a new one"),
    };
    if args.limb_ik && !doc.project().retargets[&map_path].limb_ik {
        let op = Op::Retarget {
            path: map_path.clone(),
            op: marrow_editor::document::retarget_ops::RetargetOp::SetLimbIk(true),
        };
        doc.apply(&op, 3).map_err(|e| anyhow::anyhow!("limb IK does not apply to {map_path}: {e}"))?;
        println!("{map_path}: feet and hands placed by IK");
    }
    let map = doc.project().retargets[&map_path].clone();
    let clips: Vec<String> = if args.all {
        marrow_editor::retarget::clips_of_rig(&library, &map.source)
            .into_iter()
            .map(|(r, _)| r.to_owned())
            .collect()
    } else {
        args.clips.clone()
    };
    if clips.is_empty() {
        anyhow::bail!("no clips to retarget: name them, or --all for every clip of rig {:?}", map.source);
    }
    let op = marrow_editor::retarget::retarget_op(doc.project(), &library, &root, &map_path, &clips)
        .map_err(|faults| anyhow::anyhow!("nothing retargeted:\n  {}", faults.join("\n  ")))?;
    if let Op::AddFiles { files, .. } = &op {
        for ((slot, _), from) in files.iter().zip(&clips) {
            println!("{from} -> {}", slot.path());
        }
    }
    doc.apply(&op, 2).map_err(|e| anyhow::anyhow!("the retargeted clips do not apply: {e}"))?;
    doc.save().map_err(|e| anyhow::anyhow!("saving {}: {e}", root.display()))?;
    println!("{} clip(s) retargeted from {} onto {} through {map_path}", clips.len(), map.source, map.target);
    Ok(ExitCode::SUCCESS)
}
