//! `marrow simplify MODEL --tolerance T`: removes the keys a glTF model's animation can do
//! without so that no bone origin moves more than T (model units) from where the animation puts
//! it, and reports keys before and after and the largest error reached, per rig. With `--out
//! FILE.clip.ron` the first rig's reduced clip is written as a project clip file (atomically).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use marrow_engine::gltf;
use marrow_engine::project::file::ClipAsset;
use marrow_engine::project::{clip_to_string, write_atomic};

/// Arguments of `marrow simplify`.
#[derive(Debug, clap::Args)]
pub struct SimplifyArgs {
    /// A .gltf or .glb file with an animation.
    pub model: PathBuf,
    /// The largest distance a bone origin may move, in model units.
    #[arg(long)]
    pub tolerance: f32,
    /// Animation: an index or a name (default: the first).
    #[arg(long)]
    pub anim: Option<String>,
    /// Write the first rig's reduced clip here, as a clip file (`.clip.ron`).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Runs `marrow simplify`.
pub fn run(args: &SimplifyArgs) -> anyhow::Result<ExitCode> {
    if !(args.tolerance.is_finite() && args.tolerance >= 0.0) {
        bail!("--tolerance {}: must be a finite non-negative number", args.tolerance);
    }
    if let Some(out) = &args.out
        && !out.to_string_lossy().ends_with(".clip.ron")
    {
        bail!("--out {}: a clip file's name ends in .clip.ron", out.display());
    }
    let scene = gltf::import(&args.model).with_context(|| format!("importing {}", args.model.display()))?;
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
        let (reduced, r) = rc.clip.simplify(sk, args.tolerance);
        println!(
            "{}: animation {:?}, rig {:?}: {} of {} keys kept ({:.1}%), largest bone-origin error {:e} (tolerance {:e})",
            args.model.display(),
            a.name,
            sk.name,
            r.keys_after,
            r.keys_before,
            100.0 * r.keys_after as f64 / r.keys_before.max(1) as f64,
            r.max_error,
            args.tolerance
        );
        first.get_or_insert((reduced, sk.bone_names.clone()));
    }
    if let (Some(out), Some((clip, bones))) = (&args.out, first) {
        write_atomic(out, clip_to_string(&ClipAsset { clip, bones }).as_bytes())?;
        println!("wrote {}", out.display());
    }
    Ok(ExitCode::SUCCESS)
}
