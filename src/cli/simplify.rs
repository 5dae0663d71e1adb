//! `marrow simplify MODEL --tolerance T`: removes the keys a glTF model's animation can do
//! without so that no vertex of a rigid shell around any bone (`--shell`, 3 cm by default, as ACL
//! measures) moves more than T (model units) from where the animation puts it, and reports, per
//! rig, keys and bytes before and after and the worst error reached with its bone and time
//! (`--per-bone`: the keys kept per bone). With `--out
//! FILE.clip.ron` the first rig's reduced clip is written as a project clip file (atomically).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};

use marrow_engine::project::file::ClipAsset;
use marrow_engine::project::{clip_to_string, write_atomic};

/// Arguments of `marrow simplify`.
#[derive(Debug, clap::Args)]
pub struct SimplifyArgs {
    /// A .gltf, .glb or .bvh file with an animation.
    pub model: PathBuf,
    /// The largest distance a shell vertex of a bone may move, in model units.
    #[arg(long)]
    pub tolerance: f32,
    /// How far each bone's virtual shell vertices lie from its origin (model units).
    #[arg(long, default_value_t = marrow_engine::simplify::SimplifyOptions::DEFAULT_SHELL)]
    pub shell: f32,
    /// Also list the keys kept per bone.
    #[arg(long)]
    pub per_bone: bool,
    /// Animation: an index or a name (default: the first).
    #[arg(long)]
    pub anim: Option<String>,
    /// Write the first rig's reduced clip here, as a clip file (`.clip.ron`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// How a BVH file is read.
    #[command(flatten)]
    pub bvh: super::model::BvhArgs,
}

/// Runs `marrow simplify`.
pub fn run(args: &SimplifyArgs) -> anyhow::Result<ExitCode> {
    if !(args.tolerance.is_finite() && args.tolerance >= 0.0) {
        bail!("--tolerance {}: must be a finite non-negative number", args.tolerance);
    }
    if !(args.shell.is_finite() && args.shell >= 0.0) {
        bail!("--shell {}: must be a finite non-negative number", args.shell);
    }
    if let Some(out) = &args.out
        && !out.to_string_lossy().ends_with(".clip.ron")
    {
        bail!("--out {}: a clip file's name ends in .clip.ron", out.display());
    }
    let scene = super::model::import(&args.model, &args.bvh)?;
    let anim = match args.anim.as_deref() {
        None => 0,
        Some(s) => scene
            .animation_index(s)
            .or_else(|| s.parse().ok().filter(|&i: &usize| i < scene.animations.len()))
            .with_context(|| format!("--anim {s:?}: no such animation"))?,
    };
    let a = scene.animations.get(anim).with_context(|| format!("{}: no animation", args.model.display()))?;
    if a.clips.is_empty() {
        bail!("{}: animation {:?} moves no rig", args.model.display(), a.name);
    }
    let mut first = None;
    for rc in &a.clips {
        let sk = &scene.rigs[rc.rig].skeleton;
        let options = marrow_engine::simplify::SimplifyOptions {
            tolerance: args.tolerance,
            shell_distance: args.shell,
        };
        let (reduced, r) = rc.clip.simplify_with(sk, &options);
        let bytes = |c: &marrow_engine::clip::Clip| c.bytes() + c.compiled().bytes();
        let worst = match r.worst_bone.and_then(|b| sk.bone_names.get(b)) {
            Some(bone) => format!("at bone {bone:?}, t = {:.4} s", r.worst_time),
            None => "(no error)".to_owned(),
        };
        println!(
            "{}: animation {:?}, rig {:?}: {} of {} keys kept ({:.1}%), {} -> {} bytes (authored + compiled), worst error {:e} {worst} (tolerance {:e}, shell {} measured at {} times: every key and three between)",
            args.model.display(),
            a.name,
            sk.name,
            r.keys_after,
            r.keys_before,
            100.0 * r.keys_after as f64 / r.keys_before.max(1) as f64,
            bytes(&rc.clip),
            bytes(&reduced),
            r.max_error,
            args.tolerance,
            r.shell_distance,
            r.times_measured,
        );
        if args.per_bone {
            for (name, (kept, before)) in
                sk.bone_names.iter().zip(r.keys_per_bone.iter().zip(rc.clip.channels().iter().map(|c| {
                    c.translation.as_ref().map_or(0, |t| t.len())
                        + c.rotation.as_ref().map_or(0, |t| t.len())
                        + c.scale.as_ref().map_or(0, |t| t.len())
                })))
            {
                println!("  {name}: {kept} of {before} keys");
            }
        }
        first.get_or_insert((reduced, sk.bone_names.clone()));
    }
    if let (Some(out), Some((clip, bones))) = (&args.out, first) {
        write_atomic(out, clip_to_string(&ClipAsset { clip: std::sync::Arc::new(clip), bones }).as_bytes())?;
        println!("wrote {}", out.display());
    }
    Ok(ExitCode::SUCCESS)
}
