//! `marrow cook PROJECT --out DIR`: writes every clip of a project (its clip files and the
//! animations of its imported models) in the compressed runtime form a game ships, one cooked
//! file (`*.clip.bin`, see `marrow_engine::compressed::cooked`) each, to a shell-error tolerance
//! (`--tolerance`, 0.01 cm by default, ACL's; `--shell`, 3 cm). For each clip it reports the
//! bytes before (raw samples, the full and compact compiled forms) and after, and the worst error
//! with its bone and time. The tolerance and the shell are in world units (the scenes' metres):
//! a rig the project's scenes place at another scale (a capture in inches under a scale of
//! 0.0254) gets both divided by the largest such scale, so the error allowed is the same on
//! screen for every rig, and the worst error is reported in world units too. The project is only read; each file is written atomically. A clip that
//! cannot be compressed (another rig's, or keys no grid up to 960 Hz follows within the
//! tolerance) is reported by name and the command ends with status 1 after cooking the rest.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use marrow_engine::clip::Clip;
use marrow_engine::compiled_clip::{CompiledClip, Precision};
use marrow_engine::compressed::{CompressOptions, CompressedClip};
use marrow_engine::project::{Library, Project, project_root, write_atomic};

/// Arguments of `marrow cook`.
#[derive(Debug, clap::Args)]
pub struct CookArgs {
    /// The project (its folder or `project.ron`).
    pub project: PathBuf,
    /// The folder the cooked files go to (created if missing).
    #[arg(long)]
    pub out: PathBuf,
    /// The largest distance a shell vertex of a bone may move, in world units (divided by the scale the scenes place each rig at).
    #[arg(long, default_value_t = CompressOptions::DEFAULT_TOLERANCE)]
    pub tolerance: f32,
    /// How far each bone's virtual shell vertices lie from its origin (world units, divided the same way).
    #[arg(long, default_value_t = marrow_engine::simplify::SimplifyOptions::DEFAULT_SHELL)]
    pub shell: f32,
}

/// A file name part: letters, digits, `-` and `_` kept, the rest `_`.
fn part(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

/// The cooked file's name for the clip at `reference` (`clips/walk.clip.ron` gives `walk`, a
/// model's animation `assets/Man.glb#Run` gives `Man.Run`), with the rig when a reference holds
/// clips for several; unique among `taken`.
fn file_name(reference: &str, clip: &Clip, several: bool, taken: &mut BTreeSet<String>) -> String {
    let (path, anim) = reference.split_once('#').unwrap_or((reference, ""));
    let file = Path::new(path).file_name().and_then(|f| f.to_str()).unwrap_or(path);
    let stem =
        file.strip_suffix(".clip.ron").unwrap_or_else(|| file.rsplit_once('.').map_or(file, |(s, _)| s));
    let mut name = part(stem);
    if !anim.is_empty() {
        name = format!("{name}.{}", part(anim));
    }
    if several {
        name = format!("{name}.{}", part(&clip.skeleton));
    }
    let mut unique = name.clone();
    let mut k = 2;
    while !taken.insert(unique.clone()) {
        unique = format!("{name}.{k}");
        k += 1;
    }
    format!("{unique}.clip.bin")
}

/// Runs `marrow cook`.
pub fn run(args: &CookArgs) -> anyhow::Result<ExitCode> {
    if !(args.tolerance.is_finite() && args.tolerance >= 0.0) {
        bail!("--tolerance {}: must be a finite non-negative number", args.tolerance);
    }
    if !(args.shell.is_finite() && args.shell >= 0.0) {
        bail!("--shell {}: must be a finite non-negative number", args.shell);
    }
    let project = Project::load(&args.project)?;
    let root = project_root(&args.project);
    let library = Library::load(&project, &root).with_context(|| format!("loading {}", root.display()))?;
    std::fs::create_dir_all(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    let options = CompressOptions { tolerance: args.tolerance, shell_distance: args.shell };
    let scales = library.rig_scales(&project);
    let mut seen: Vec<*const Clip> = Vec::new();
    let mut taken = BTreeSet::new();
    let (mut cooked, mut failed) = (0usize, Vec::new());
    let (mut raw_total, mut packed_total) = (0usize, 0usize);
    for reference in library.clip_refs() {
        let clips = library.clips(reference);
        for clip in clips {
            // A model's first clips come under its path and under `path#name`: cooked once.
            if seen.contains(&Arc::as_ptr(clip)) {
                continue;
            }
            seen.push(Arc::as_ptr(clip));
            let Some((_, skeleton)) = library.skeleton_named(&clip.skeleton) else {
                eprintln!(
                    "{reference}: clip {:?} names skeleton {:?}, which the project lacks",
                    clip.name, clip.skeleton
                );
                failed.push(reference.to_owned());
                continue;
            };
            // The tolerance is on screen: a rig placed at scale 0.05 gets 20 times more in its units.
            let scale = scales.get(&skeleton.name).copied().unwrap_or(1.0);
            let in_rig = options.in_rig_units(scale);
            let units = if scale == 1.0 {
                String::new()
            } else {
                format!(
                    "; the project's scenes place rig {:?} at scale {scale}: tolerance {:e}, shell {} in its units",
                    skeleton.name, in_rig.tolerance, in_rig.shell_distance
                )
            };
            let (packed, r) = match CompressedClip::compress(clip, skeleton, &in_rig) {
                Ok(v) => v,
                Err(e) => {
                    eprintln!("{reference}: {e}{units}");
                    failed.push(reference.to_owned());
                    continue;
                }
            };
            let out = args.out.join(file_name(reference, clip, clips.len() > 1, &mut taken));
            write_atomic(&out, &packed.to_cooked())?;
            let full = CompiledClip::build_with(clip.channels(), Precision::Full).bytes();
            let compact = CompiledClip::build_with(clip.channels(), Precision::Compact).bytes();
            let worst = match r.worst_bone.and_then(|b| skeleton.bone_names.get(b)) {
                Some(bone) => format!("at bone {bone:?}, t = {:.4} s", r.worst_time),
                None => "(no error)".to_owned(),
            };
            println!(
                "{reference}: clip {:?} on {:?}: {} -> {} bytes ({:.2}:1 against raw f32 samples; compiled full {full}, compact {compact}), worst error {:e} {worst} (tolerance {:e}, shell {}{units}; {} frames at {:.3} Hz, {} animated / {} constant / {} default tracks, {:.2} bits per value) -> {}",
                clip.name,
                skeleton.name,
                r.raw_bytes,
                r.bytes,
                r.ratio(),
                r.max_error * scale,
                args.tolerance,
                args.shell,
                r.frames,
                r.rate,
                r.animated_tracks,
                r.constant_tracks,
                r.default_tracks,
                r.mean_bits,
                out.display()
            );
            raw_total += r.raw_bytes;
            packed_total += r.bytes;
            cooked += 1;
        }
    }
    println!(
        "cooked {cooked} clip(s) of {}: {raw_total} -> {packed_total} bytes ({:.2}:1) in {}",
        root.display(),
        raw_total as f64 / packed_total.max(1) as f64,
        args.out.display()
    );
    if !failed.is_empty() {
        eprintln!("{} clip(s) not cooked: {}", failed.len(), failed.join(", "));
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
