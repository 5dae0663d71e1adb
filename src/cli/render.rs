//! `marrow render FILE --out frame.png`: renders one frame of a glTF file, or of a project's
//! scene, offscreen with the engine's wgpu renderer (GPU skinning, morphs, textures, a
//! directional light with a shadow map, optionally the skeleton overlay) and a camera framed on
//! the posed bounds, and writes a PNG. A project renders through the scene `World` and its
//! extraction, exactly as the editor's viewport draws it. Needs a wgpu adapter (lavapipe
//! works); fails with a clear error without one.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use marrow_engine::gltf::ImportedScene;
use marrow_engine::render::scene::{RenderRequest, render_gltf};
use marrow_engine::render::{GpuContext, ShaderSource};

/// Arguments of `marrow render`.
#[derive(Debug, clap::Args)]
pub struct RenderArgs {
    /// A .gltf, .glb or .bvh file, or a project (its folder or `project.ron`).
    pub file: PathBuf,
    /// For a project: the scene to render (default: its first).
    #[arg(long)]
    pub scene: Option<String>,
    /// Animation: an index, a name, or `none` for the rest pose (default: the first animation,
    /// if any).
    #[arg(long)]
    pub anim: Option<String>,
    /// Time in seconds.
    #[arg(long, default_value_t = 0.0)]
    pub time: f32,
    /// Image size, `WIDTHxHEIGHT`.
    #[arg(long, default_value = "512x512")]
    pub size: String,
    /// Draw the skeleton overlay (bones, joints, axis triads).
    #[arg(long)]
    pub overlay: bool,
    /// Draw an outline this many pixels wide (1 to 8) around the characters.
    #[arg(long)]
    pub outline: Option<f32>,
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

/// Parses `WIDTHxHEIGHT` (each 1..=8192).
pub fn parse_size(text: &str) -> anyhow::Result<(u32, u32)> {
    let (w, h) =
        text.split_once(['x', 'X']).with_context(|| format!("--size {text:?}: expected WIDTHxHEIGHT"))?;
    let num = |s: &str| -> anyhow::Result<u32> {
        match s.trim().parse::<u32>() {
            Ok(v) if (1..=8192).contains(&v) => Ok(v),
            _ => bail!("--size {text:?}: {s:?} is not a size from 1 to 8192"),
        }
    };
    Ok((num(w)?, num(h)?))
}

fn pick_animation(scene: &ImportedScene, anim: Option<&str>) -> anyhow::Result<Option<usize>> {
    match anim {
        None => Ok((!scene.animations.is_empty()).then_some(0)),
        Some("none") => Ok(None),
        Some(s) => match (scene.animation_index(s), s.parse::<usize>()) {
            (Some(i), _) => Ok(Some(i)),
            (None, Ok(i)) if i < scene.animations.len() => Ok(Some(i)),
            _ => bail!("--anim {s:?}: no such animation (the file has {})", scene.animations.len()),
        },
    }
}

/// Runs `marrow render`.
pub fn run(args: &RenderArgs) -> anyhow::Result<ExitCode> {
    let (width, height) = parse_size(&args.size)?;
    if !args.time.is_finite() {
        bail!("--time {}: not a finite number", args.time);
    }
    if let Some(w) = args.outline
        && !(w.is_finite() && (1.0..=8.0).contains(&w))
    {
        bail!("--outline {w}: must be a width from 1 to 8 pixels");
    }
    let is_project = args.file.is_dir() || args.file.file_name().is_some_and(|n| n == "project.ron");
    if is_project {
        return run_project(args, width, height);
    }
    let scene = super::model::import(&args.file, &args.bvh)?;
    let animation = pick_animation(&scene, args.anim.as_deref())?;
    let ctx = GpuContext::headless().context("marrow render needs a GPU adapter (lavapipe works)")?;
    let request = RenderRequest {
        animation,
        time: args.time,
        width,
        height,
        overlay: args.overlay,
        outline: args.outline,
        shaders: ShaderSource::resolve(args.shaders.as_deref()),
    };
    let image = render_gltf(&ctx, &scene, &request)?;
    image.save_png(&args.out)?;
    println!(
        "wrote {} ({}x{}, {} draw calls, {} objects visible) on {}",
        args.out.display(),
        image.width,
        image.height,
        image.stats.draw_calls,
        image.stats.visible,
        ctx.describe()
    );
    Ok(ExitCode::SUCCESS)
}

/// `marrow render PROJECT`: the scene's world, every rig at `--time`, drawn by the world
/// extraction the editor uses.
fn run_project(args: &RenderArgs, width: u32, height: u32) -> anyhow::Result<ExitCode> {
    use marrow_engine::project::{Library, Project, project_root};
    let project = Project::load(&args.file)?;
    let root = project_root(&args.file);
    let lib = Library::load(&project, &root)?;
    let scene = match &args.scene {
        Some(s) => s.clone(),
        None => project.manifest.scenes.first().cloned().context("the project has no scene")?,
    };
    let mut world = lib.instantiate(&project, &scene)?;
    let rigs: Vec<_> = world.rigs().collect();
    for r in rigs {
        if let Some(a) = world.animator_mut(r) {
            a.seek(args.time);
        }
    }
    world.frame(0, 1.0 / 60.0);
    let ctx = GpuContext::headless().context("marrow render needs a GPU adapter (lavapipe works)")?;
    let image = marrow_engine::render::render_world(
        &ctx,
        &world,
        width,
        height,
        args.overlay,
        ShaderSource::resolve(args.shaders.as_deref()),
    )?;
    image.save_png(&args.out)?;
    println!(
        "wrote {} ({}x{}, scene {scene}, {} draw calls, {} objects visible) on {}",
        args.out.display(),
        image.width,
        image.height,
        image.stats.draw_calls,
        image.stats.visible,
        ctx.describe()
    );
    Ok(ExitCode::SUCCESS)
}
