//! `marrow particles MODEL.glb --count N --time T --out cloud.png`: scatters the model's skinned
//! mesh surface (area-weighted, seeded) into N points, binds them to its rig's bone segments,
//! plays its animation from the start to T on a 60 Hz tick with the particles' springs chasing
//! their skinned targets, and renders the cloud (camera-facing discs, lit, with their shadow on a
//! ground plane) to a PNG.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use marrow_engine::gltf::ScenePose;
use marrow_engine::particles::{CloudSettings, ParticleCloud, SpringSettings};
use marrow_engine::render::scene::render_particles;
use marrow_engine::render::{GpuContext, ParticleInstance, ShaderSource};

use super::render::parse_size;

/// The simulation tick of `marrow particles`.
const TICK: f32 = 1.0 / 60.0;

/// Arguments of `marrow particles`.
#[derive(Debug, clap::Args)]
pub struct ParticlesArgs {
    /// A .gltf, .glb or .bvh file with a skinned mesh.
    pub model: PathBuf,
    /// Points scattered over the skinned mesh's surface.
    #[arg(long, default_value_t = 20_000)]
    pub count: u32,
    /// Time in seconds (the animation loops past its end).
    #[arg(long, default_value_t = 0.0)]
    pub time: f32,
    /// Animation: an index or a name (default: the first; `none` for the rest pose).
    #[arg(long)]
    pub anim: Option<String>,
    /// Scatter seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Binding falloff band, as a fraction of the model's height (0 binds rigidly).
    #[arg(long, default_value_t = 0.02)]
    pub falloff: f32,
    /// Disc radius, as a fraction of the model's height.
    #[arg(long, default_value_t = 0.004)]
    pub radius: f32,
    /// Spring stiffness (0: no springs, particles sit on their targets).
    #[arg(long, default_value_t = 160.0)]
    pub stiffness: f32,
    /// Spring damping.
    #[arg(long, default_value_t = 9.0)]
    pub damping: f32,
    /// Image size, `WIDTHxHEIGHT`.
    #[arg(long, default_value = "512x512")]
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

/// Runs `marrow particles`.
pub fn run(args: &ParticlesArgs) -> anyhow::Result<ExitCode> {
    let (width, height) = parse_size(&args.size)?;
    for (flag, v) in [
        ("--time", args.time),
        ("--falloff", args.falloff),
        ("--radius", args.radius),
        ("--stiffness", args.stiffness),
        ("--damping", args.damping),
    ] {
        if !(v.is_finite() && v >= 0.0) {
            bail!("{flag} {v}: must be a finite non-negative number");
        }
    }
    if args.time / TICK > 360_000.0 {
        bail!("--time {}: at most 6000 seconds (the springs run every tick from the start)", args.time);
    }
    let scene = super::model::import(&args.model, &args.bvh)?;
    let (r, binding) = scene
        .rigs
        .iter()
        .enumerate()
        .find_map(|(r, rig)| rig.bindings.first().map(|b| (r, b.clone())))
        .with_context(|| format!("{}: no skinned mesh to scatter particles over", args.model.display()))?;
    let rig = &scene.rigs[r];
    let mesh = &scene.meshes[binding.mesh];
    let model_height = mesh
        .primitives
        .iter()
        .filter_map(|p| p.bounds)
        .reduce(|a, b| a.union(b))
        .map_or(1.0, |b| (b.max - b.min).max_element().max(1e-6));
    let anim = match args.anim.as_deref() {
        None => (!scene.animations.is_empty()).then_some(0),
        Some("none") => None,
        Some(s) => Some(
            scene
                .animation_index(s)
                .or_else(|| s.parse().ok().filter(|&i: &usize| i < scene.animations.len()))
                .with_context(|| format!("--anim {s:?}: no such animation"))?,
        ),
    };
    let settings = CloudSettings {
        count: args.count,
        seed: args.seed,
        falloff: args.falloff * model_height,
        radius: args.radius * model_height,
        color: [0.9, 0.62, 0.32, 1.0],
        groups: Vec::new(),
        springs: (args.stiffness > 0.0)
            .then_some(SpringSettings { stiffness: args.stiffness, damping: args.damping }),
    };
    let mut cloud = ParticleCloud::from_mesh(mesh, &rig.joint_to_bone, &rig.skeleton, &settings)?;
    let duration = anim.map_or(0.0, |a| scene.animations[a].duration);
    let mut pose = ScenePose::new(&scene);
    let ticks = (args.time / TICK).round() as u32;
    for k in 0..=ticks {
        let t = if k == ticks { args.time } else { k as f32 * TICK };
        let t = if duration > 0.0 { t.rem_euclid(duration) } else { 0.0 };
        pose.evaluate(&scene, anim, t).with_context(|| format!("{}: at t = {t}", args.model.display()))?;
        cloud.pose(pose.rig_world(&scene, r), &pose.rig_model[r], &rig.skeleton)?;
        cloud.step(u32::from(k > 0), TICK)?;
    }
    let color = ParticleInstance::pack_color(settings.color);
    let particles: Vec<ParticleInstance> = cloud
        .positions()
        .iter()
        .zip(&cloud.normals)
        .map(|(p, n)| ParticleInstance { position: *p, radius: settings.radius, normal: *n, color })
        .collect();
    let ctx = GpuContext::headless().context("marrow particles needs a GPU adapter (lavapipe works)")?;
    let image =
        render_particles(&ctx, &particles, width, height, ShaderSource::resolve(args.shaders.as_deref()))?;
    image.save_png(&args.out)?;
    let two = cloud.binding.influences.iter().filter(|i| i.weight > 0.0).count();
    println!(
        "wrote {} ({}x{}, {} particles, {} bound to two bones, {} ticks) on {}",
        args.out.display(),
        image.width,
        image.height,
        cloud.len(),
        two,
        ticks,
        ctx.describe()
    );
    Ok(ExitCode::SUCCESS)
}
