//! `marrow crowd MODEL --count N --time T --out crowd.png`: bakes a glTF model's animations into
//! a table of skinning matrices (frames per clip at `--fps`), places N instances (a grid or a
//! seeded scatter; clips dealt in turn, phases spread so no two move in step, speeds from a
//! range), and renders the crowd at time T in one instanced draw per mesh primitive per pass.
//! Given a project instead (its folder or `project.ron`), renders its first scene with its
//! authored crowds (their count, layout and clips as the scene says) at time T.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use marrow_engine::crowd::BakeJob;
use marrow_engine::crowd::layout::{Layout, place};
use marrow_engine::render::crowd::render_crowd;
use marrow_engine::render::{GpuContext, ShaderSource};

use super::render::parse_size;

/// The most instances one run draws.
pub const MAX_COUNT: u32 = 1_000_000;

/// Arguments of `marrow crowd`.
#[derive(Debug, clap::Args)]
pub struct CrowdArgs {
    /// A .gltf, .glb or .bvh file with a skinned, animated mesh, or a project with a Crowd.
    pub model: PathBuf,
    /// Instances.
    #[arg(long, default_value_t = 100)]
    pub count: u32,
    /// Crowd time in seconds.
    #[arg(long, default_value_t = 0.0)]
    pub time: f32,
    /// Baked frames per second of clip.
    #[arg(long, default_value_t = 30.0)]
    pub fps: f32,
    /// Scatter the instances over a square (seeded) instead of a grid.
    #[arg(long)]
    pub scatter: bool,
    /// Placement seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Slowest and fastest playback speed, `LOW:HIGH`.
    #[arg(long, default_value = "0.8:1.25")]
    pub speed: String,
    /// Image size, `WIDTHxHEIGHT`.
    #[arg(long, default_value = "640x400")]
    pub size: String,
    /// Shader directory (default: `./shaders` when it exists, else the embedded shaders).
    #[arg(long)]
    pub shaders: Option<PathBuf>,
    /// Output PNG.
    #[arg(long)]
    pub out: PathBuf,
    /// How a BVH file is read.
    #[command(flatten)]
    pub bvh: super::model::BvhArgs,
}

fn parse_speed(text: &str) -> anyhow::Result<(f32, f32)> {
    let (a, b) = text.split_once(':').with_context(|| format!("--speed {text:?}: expected LOW:HIGH"))?;
    let num = |s: &str| -> anyhow::Result<f32> {
        match s.trim().parse::<f32>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => bail!("--speed {text:?}: {s:?} is not a finite number"),
        }
    };
    let (a, b) = (num(a)?, num(b)?);
    if a > b {
        bail!("--speed {text:?}: the low end is above the high end");
    }
    Ok((a, b))
}

/// Runs `marrow crowd`.
pub fn run(args: &CrowdArgs) -> anyhow::Result<ExitCode> {
    let (width, height) = parse_size(&args.size)?;
    let speed = parse_speed(&args.speed)?;
    if !args.time.is_finite() {
        bail!("--time {}: not a finite number", args.time);
    }
    if !(args.fps.is_finite() && args.fps > 0.0 && args.fps <= 240.0) {
        bail!("--fps {}: must be above 0 and at most 240", args.fps);
    }
    if args.count == 0 || args.count > MAX_COUNT {
        bail!("--count {}: must be from 1 to {MAX_COUNT}", args.count);
    }
    if args.model.is_dir() || args.model.file_name().is_some_and(|n| n == "project.ron") {
        return run_project(args, width, height);
    }
    let scene = super::model::import(&args.model, &args.bvh)?;
    let (r, rig) = scene
        .rigs
        .iter()
        .enumerate()
        .find(|(_, r)| !r.bindings.is_empty())
        .with_context(|| format!("{}: no skinned mesh to draw a crowd with", args.model.display()))?;
    let clips: Vec<&marrow_engine::clip::Clip> = scene
        .animations
        .iter()
        .flat_map(|a| a.clips.iter().filter(|c| c.rig == r).map(|c| &c.clip))
        .collect();
    if clips.is_empty() {
        bail!(
            "{}: no animation moves rig {:?}; a crowd needs a clip",
            args.model.display(),
            rig.skeleton.name
        );
    }
    let longest = clips.iter().map(|c| c.duration()).fold(0.0f32, f32::max);
    let frames = ((longest * args.fps).round() as u32).clamp(2, marrow_engine::crowd::MAX_FRAMES);
    let started = std::time::Instant::now();
    let baked = BakeJob { skeleton: &rig.skeleton, clips: &clips, frames }.run()?;
    let bake_ms = started.elapsed().as_secs_f64() * 1e3;
    let member_size = scene
        .meshes
        .iter()
        .flat_map(|m| &m.primitives)
        .filter_map(|p| p.bounds)
        .reduce(|a, b| a.union(b))
        .map_or(1.0, |b| (b.max - b.min).max_element());
    let spacing = member_size * 1.1;
    let layout = if args.scatter {
        Layout::Scattered { extent: spacing * (args.count as f32).sqrt() * 1.4 }
    } else {
        Layout::Grid { spacing }
    };
    let placements = place(args.count, clips.len() as u32, layout, speed, args.seed);
    let ctx = GpuContext::headless().context("marrow crowd needs a GPU adapter (lavapipe works)")?;
    let image = render_crowd(
        &ctx,
        &scene,
        &baked,
        &placements,
        &marrow_engine::render::crowd::DEFAULT_TINTS,
        args.time,
        width,
        height,
        ShaderSource::resolve(args.shaders.as_deref()),
    )?;
    image.save_png(&args.out)?;
    println!(
        "wrote {} ({}x{}, {} instances of {} clip(s), {} frames each, table {} KiB baked in {:.1} ms, {} draw calls) on {}",
        args.out.display(),
        image.width,
        image.height,
        args.count,
        clips.len(),
        frames,
        baked.bytes() / 1024,
        bake_ms,
        image.stats.draw_calls,
        ctx.describe()
    );
    Ok(ExitCode::SUCCESS)
}

/// `marrow crowd PROJECT`: the project's first scene, its crowds as authored, at `--time`.
fn run_project(args: &CrowdArgs, width: u32, height: u32) -> anyhow::Result<ExitCode> {
    use marrow_engine::project::{Library, Project, project_root};
    let project = Project::load(&args.model)?;
    let root = project_root(&args.model);
    let lib = Library::load(&project, &root)?;
    let scene = project.manifest.scenes.first().cloned().context("the project has no scene")?;
    let mut world = lib.instantiate(&project, &scene)?;
    if world.crowds().next().is_none() {
        bail!("{}: scene {scene} has no crowd", args.model.display());
    }
    // The crowds' clock runs with the frame's ticks: one step to the asked time.
    world.frame(1, args.time);
    let instances: usize = world.crowds().filter_map(|e| world.crowd(e)).map(|c| c.placements.len()).sum();
    let ctx = GpuContext::headless().context("marrow crowd needs a GPU adapter (lavapipe works)")?;
    let image = marrow_engine::render::render_world(
        &ctx,
        &world,
        width,
        height,
        false,
        ShaderSource::resolve(args.shaders.as_deref()),
    )?;
    image.save_png(&args.out)?;
    println!(
        "wrote {} ({}x{}, scene {scene}, {instances} crowd instances, {} draw calls) on {}",
        args.out.display(),
        image.width,
        image.height,
        image.stats.draw_calls,
        ctx.describe()
    );
    Ok(ExitCode::SUCCESS)
}
