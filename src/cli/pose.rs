//! `marrow pose FILE`: imports a glTF or BVH file, evaluates one animation at a list of times with the
//! engine's jobs (sampling, local-to-model, palette, morph, skinning) and prints one JSON object
//! with joint world matrices, skinning matrices and world-space vertex positions.
//! Matrices are column-major arrays of 16 numbers.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use glam::Mat4;
use marrow_engine::glam;
use marrow_engine::gltf::{ImportedScene, ScenePose};
use serde_json::{Value, json};

/// How times outside the animation are mapped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LoopMode {
    /// Clamp to `[0, duration]`.
    Once,
    /// Wrap into `[0, duration]` (times already inside are kept).
    Repeat,
}

/// Arguments of `marrow pose`.
#[derive(Debug, clap::Args)]
pub struct PoseArgs {
    /// A .gltf, .glb or .bvh file.
    pub file: PathBuf,
    /// Animation: an index, a name, or `none` (default: the first animation, if any).
    #[arg(long)]
    pub anim: Option<String>,
    /// Comma-separated times in seconds; `a:b:step` is an inclusive range
    /// (default: 0 and the animation's duration).
    #[arg(long)]
    pub times: Option<String>,
    /// How many vertices of each primitive to print.
    #[arg(long, default_value_t = 3)]
    pub vertices: usize,
    /// Mapping of times outside the animation.
    #[arg(long = "loop", value_enum, default_value_t = LoopMode::Once)]
    pub loop_mode: LoopMode,
    /// How a BVH file is read.
    #[command(flatten)]
    pub bvh: super::model::BvhArgs,
}

/// The most times one `pose` run samples (each time prints every joint and vertex asked for).
pub const MAX_TIMES: usize = 10_000;

/// Parses a `--times` list (at most [`MAX_TIMES`] times in all).
pub fn parse_times(text: &str) -> anyhow::Result<Vec<f32>> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let parts: Vec<&str> = item.split(':').collect();
        let num = |s: &str| -> anyhow::Result<f32> {
            let v: f32 = s.trim().parse().with_context(|| format!("--times: {s:?} is not a number"))?;
            if !v.is_finite() {
                bail!("--times: {s:?} is not finite");
            }
            Ok(v)
        };
        match parts.as_slice() {
            [t] => {
                if out.len() >= MAX_TIMES {
                    bail!("--times: more than {MAX_TIMES} times");
                }
                out.push(num(t)?)
            }
            [a, b, step] => {
                let (a, b, step) = (num(a)?, num(b)?, num(step)?);
                if step.is_nan() || step <= 0.0 {
                    bail!("--times: step in {item:?} must be positive");
                }
                let n = ((b - a) / step + 1e-4).floor();
                if !(n >= 0.0) {
                    bail!("--times: range {item:?} is empty (its end comes before its start)");
                }
                if n + 1.0 + out.len() as f32 > MAX_TIMES as f32 {
                    bail!(
                        "--times: {item:?} asks for {} times; a run samples at most {MAX_TIMES} (use a larger step)",
                        n as u64 + 1
                    );
                }
                for i in 0..=(n as usize) {
                    out.push(a + step * i as f32);
                }
            }
            _ => bail!("--times: {item:?} is neither a time nor a:b:step"),
        }
    }
    if out.is_empty() {
        bail!("--times: no times given");
    }
    Ok(out)
}

fn mat(m: &Mat4) -> Value {
    json!(m.to_cols_array())
}

fn pick_animation(scene: &ImportedScene, anim: Option<&str>) -> anyhow::Result<Option<usize>> {
    match anim {
        None => Ok((!scene.animations.is_empty()).then_some(0)),
        Some("none") => Ok(None),
        Some(s) => {
            if let Some(i) = scene.animation_index(s) {
                return Ok(Some(i));
            }
            match s.parse::<usize>() {
                Ok(i) if i < scene.animations.len() => Ok(Some(i)),
                _ => bail!(
                    "--anim {s:?}: no such animation (the file has {}: {})",
                    scene.animations.len(),
                    scene
                        .animations
                        .iter()
                        .enumerate()
                        .map(|(i, a)| format!("{i} {:?}", a.name))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        }
    }
}

/// Runs `marrow pose`.
pub fn run(args: &PoseArgs) -> anyhow::Result<ExitCode> {
    let scene = super::model::import(&args.file, &args.bvh)?;
    let anim = pick_animation(&scene, args.anim.as_deref())?;
    let duration = anim.and_then(|a| scene.animations.get(a)).map_or(0.0, |a| a.duration);
    let times = match &args.times {
        Some(t) => parse_times(t)?,
        None if duration > 0.0 => vec![0.0, duration],
        None => vec![0.0],
    };
    let mut pose = ScenePose::new(&scene);
    let skins_json: Vec<Value> = scene
        .skins
        .iter()
        .enumerate()
        .map(|(i, s)| {
            json!({
                "index": i,
                "name": s.name,
                "jointNodes": s.joints,
                "jointNames": s.joints.iter().map(|&j| scene.nodes.get(j).map_or("", |n| n.name.as_str())).collect::<Vec<_>>(),
                "inverseBindMatrices": s.inverse_bind.iter().map(mat).collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut samples = Vec::with_capacity(times.len());
    let mut matrices: Vec<Mat4> = Vec::new();
    for &t in &times {
        let time = match args.loop_mode {
            LoopMode::Once => t.clamp(0.0, duration),
            LoopMode::Repeat if duration > 0.0 && !(0.0..=duration).contains(&t) => t.rem_euclid(duration),
            LoopMode::Repeat => t.clamp(0.0, duration),
        };
        let file = args.file.display();
        let anim_name = anim.and_then(|a| scene.animations.get(a)).map_or("(rest pose)", |a| a.name.as_str());
        pose.evaluate(&scene, anim, time)
            .with_context(|| format!("{file}: animation {anim_name:?} at t = {time}"))?;
        let mut skins_out = Vec::new();
        for (si, s) in scene.skins.iter().enumerate() {
            matrices.resize(s.joints.len(), Mat4::IDENTITY);
            pose.joint_world(&scene, si, &mut matrices);
            let joint_world: Vec<Value> = matrices.iter().map(mat).collect();
            let mut per_mesh = Vec::new();
            for b in
                scene.rigs.get(s.rig).map_or(&[][..], |r| &r.bindings[..]).iter().filter(|b| b.skin == si)
            {
                pose.skinning_matrices(&scene, si, b.node, &mut matrices);
                per_mesh.push(
                    json!({ "meshNode": b.node, "matrices": matrices.iter().map(mat).collect::<Vec<_>>() }),
                );
            }
            skins_out.push(json!({ "index": si, "jointWorld": joint_world, "skinningMatrices": per_mesh }));
        }
        let mut meshes_out = Vec::new();
        for (ni, node) in scene.nodes.iter().enumerate() {
            let Some(mesh) = node.mesh.and_then(|m| scene.meshes.get(m)) else { continue };
            let weights = pose.morph_weights.get(ni).cloned().unwrap_or_default();
            let mut prims = Vec::new();
            for pi in 0..mesh.primitives.len() {
                let positions = pose
                    .placed_vertices(&scene, ni, pi, args.vertices)
                    .with_context(|| format!("{file}: node {ni} mesh primitive {pi} at t = {time}"))?;
                prims.push(json!({ "primitive": pi, "positions": positions }));
            }
            meshes_out
                .push(json!({ "node": ni, "skin": node.skin, "morphWeights": weights, "primitives": prims }));
        }
        samples.push(json!({ "t": t, "skins": skins_out, "meshes": meshes_out }));
    }
    let animation = anim
        .and_then(|a| scene.animations.get(a).map(|x| (a, x)))
        .map(|(i, a)| json!({ "index": i, "name": a.name, "duration": a.duration }));
    let out = json!({
        "file": args.file.display().to_string(),
        "animation": animation,
        "skins": skins_json,
        "samples": samples,
    });
    println!("{}", serde_json::to_string(&out)?);
    Ok(ExitCode::SUCCESS)
}
