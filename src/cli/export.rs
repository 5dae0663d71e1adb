//! `marrow export INPUT --out FILE.glb|FILE.gltf`: a project scene (`--scene NAME`, default its
//! first) or a glTF file (re-exported through Marrow's own model) written as glTF: nodes, rigs as
//! joint nodes with skins, meshes with their skin attributes and morph targets, sockets as
//! children of their bones, and the clips as animations with their keys exactly as held where
//! glTF can say them (eased segments baked to a bound, or written linear) and their markers in
//! `extras`. Written atomically; a scene with faults is refused with every fault named and
//! nothing written.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use marrow_engine::gltf::{
    self, EasedKeys, ExportOptions, JointChoice, JointFormat, WeightChoice, WeightFormat,
};
use marrow_engine::project::export::{scene_for_export, write_export};
use marrow_engine::project::{Library, Project, project_root};

/// Arguments of `marrow export`.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// A project (its folder or `project.ron`), or a .gltf, .glb or .bvh file.
    pub input: PathBuf,
    /// Output file: `.glb` (one file) or `.gltf` (with its buffer beside it as `.bin`).
    #[arg(long)]
    pub out: PathBuf,
    /// The project's scene to export (its name or file stem; default the first).
    #[arg(long)]
    pub scene: Option<String>,
    /// Export only this clip (repeatable; default every clip).
    #[arg(long = "clip")]
    pub clips: Vec<String>,
    /// Samples a second to bake eased segments from (default each clip's frame rate).
    #[arg(long)]
    pub bake_rate: Option<f32>,
    /// The largest error a baked segment may have (scene units for translations and scales,
    /// radians for rotations).
    #[arg(long, default_value_t = gltf::DEFAULT_BAKE_BOUND)]
    pub bake_bound: f32,
    /// Write eased segments as plain linear keys instead of baking them.
    #[arg(long)]
    pub linear_easing: bool,
    /// Joint index type: as-imported, smallest, u8 or u16.
    #[arg(long, default_value = "as-imported")]
    pub joints: String,
    /// Weight type: as-imported, smallest, float, unorm16 or unorm8.
    #[arg(long, default_value = "as-imported")]
    pub weights: String,
    /// How a BVH file is read.
    #[command(flatten)]
    pub bvh: super::model::BvhArgs,
}

fn joint_choice(s: &str) -> anyhow::Result<JointChoice> {
    Ok(match s {
        "as-imported" => JointChoice::AsImported,
        "smallest" => JointChoice::Smallest,
        "u8" => JointChoice::Exactly(JointFormat::U8),
        "u16" => JointChoice::Exactly(JointFormat::U16),
        _ => bail!("--joints {s:?}: expected as-imported, smallest, u8 or u16"),
    })
}

fn weight_choice(s: &str) -> anyhow::Result<WeightChoice> {
    Ok(match s {
        "as-imported" => WeightChoice::AsImported,
        "smallest" => WeightChoice::Smallest,
        "float" => WeightChoice::Exactly(WeightFormat::Float),
        "unorm16" => WeightChoice::Exactly(WeightFormat::Unorm16),
        "unorm8" => WeightChoice::Exactly(WeightFormat::Unorm8),
        _ => bail!("--weights {s:?}: expected as-imported, smallest, float, unorm16 or unorm8"),
    })
}

impl ExportArgs {
    /// The export options these arguments ask for.
    pub fn options(&self) -> anyhow::Result<ExportOptions> {
        Ok(ExportOptions {
            clips: if self.clips.is_empty() { None } else { Some(self.clips.clone()) },
            eased: if self.linear_easing {
                EasedKeys::Linear
            } else {
                EasedKeys::Bake { rate: self.bake_rate, bound: self.bake_bound }
            },
            joints: joint_choice(&self.joints)?,
            weights: weight_choice(&self.weights)?,
        })
    }
}

/// Runs `marrow export`.
pub fn run(args: &ExportArgs) -> anyhow::Result<ExitCode> {
    let opts = args.options()?;
    let is_project = args.input.is_dir() || args.input.file_name().is_some_and(|n| n == "project.ron");
    let (scene, notes) = if is_project {
        let project = Project::load(&args.input)?;
        let lib = Library::load(&project, &project_root(&args.input))?;
        let export = scene_for_export(&project, &lib, args.scene.as_deref()).map_err(|e| {
            anyhow::anyhow!(
                "{}: export refused, nothing written:\n  {}",
                args.input.display(),
                e.faults().join("\n  ")
            )
        })?;
        (export.scene, export.notes)
    } else {
        if args.scene.is_some() {
            bail!("--scene names a project's scene; {} is a glTF file", args.input.display());
        }
        let scene = super::model::import(&args.input, &args.bvh)?;
        // What the import changed (influences cut to four, skins dropped) is said, not hidden.
        let notes = scene.warnings.iter().map(|w| format!("import: {w}")).collect();
        (scene, notes)
    };
    let report =
        write_export(&scene, &opts, &args.out).with_context(|| format!("writing {}", args.out.display()))?;
    for n in &notes {
        println!("note: {n}");
    }
    println!(
        "wrote {} ({} nodes, {} meshes, {} skins, {} animations; {} eased segments baked with {} keys, {} written linear)",
        args.out.display(),
        scene.nodes.len(),
        scene.meshes.len(),
        scene.skins.len(),
        report.animations,
        report.baked_segments,
        report.baked_keys,
        report.linearized_segments
    );
    Ok(ExitCode::SUCCESS)
}
