//! `marrow import PATH... --into PROJECT [--scene S] [--units U]`: File > Import Model, headless
//! and in bulk. Each PATH is a model (`.gltf`, `.glb`, `.bvh`, `.fbx`) or a folder, whose model files
//! (not its subfolders) are imported in name order. Each model goes through the editor's import
//! (`marrow_editor::import`: copied into `assets/`, its clips written as clip files, an entity
//! added to the scene), and the project is saved once at the end with the editor's all-or-nothing
//! save. A file that fails is reported with its faults and the others still go in; the exit
//! status is 1 when any failed. Not here: the importers themselves.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use marrow_editor::document::{Document, Op};

/// Arguments of `marrow import`.
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// Model files (`.gltf`, `.glb`, `.bvh`, `.fbx`) or folders of them.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The project to import into (its folder or `project.ron`).
    #[arg(long)]
    pub into: PathBuf,
    /// The scene the models' entities go into (default: the project's first).
    #[arg(long)]
    pub scene: Option<String>,
    /// The units the files were made in: metres, centimetres, millimetres, inches or feet (the
    /// entities are scaled to the scene's metres).
    #[arg(long, default_value = "metres")]
    pub units: String,
}

/// Whether `p` is a model file the import takes.
fn is_model(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| ["gltf", "glb", "bvh", "fbx"].iter().any(|x| e.eq_ignore_ascii_case(x)))
}

/// The model files the arguments name, folders expanded (name order), each once.
fn model_files(paths: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut inside: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| anyhow::anyhow!("{}: cannot list the folder: {e}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.is_file() && is_model(f))
                .collect();
            inside.sort();
            if inside.is_empty() {
                eprintln!("warning: {}: no .gltf, .glb, .bvh or .fbx file in the folder", p.display());
            }
            out.extend(inside);
        } else if is_model(p) {
            out.push(p.clone());
        } else {
            anyhow::bail!("{}: not a model file (.gltf, .glb, .bvh or .fbx) or a folder", p.display());
        }
    }
    out.dedup();
    Ok(out)
}

/// The scale of `units` (the import dialog's names, singular or plural, US spellings and
/// abbreviations too).
fn scale_of(units: &str) -> anyhow::Result<f32> {
    const NAMES: [(&[&str], f32); 5] = [
        (&["metres", "metre", "meters", "meter", "m"], 1.0),
        (&["centimetres", "centimetre", "centimeters", "centimeter", "cm"], 0.01),
        (&["millimetres", "millimetre", "millimeters", "millimeter", "mm"], 0.001),
        (&["inches", "inch", "in"], 0.0254),
        (&["feet", "foot", "ft"], 0.3048),
    ];
    let u = units.trim().to_ascii_lowercase();
    match NAMES.iter().find(|(names, _)| names.contains(&u.as_str())) {
        Some((_, s)) => Ok(*s),
        None => anyhow::bail!("--units {units:?}: one of metres, centimetres, millimetres, inches, feet"),
    }
}

/// Runs `marrow import`.
pub fn run(args: &ImportArgs) -> anyhow::Result<ExitCode> {
    let scale = scale_of(&args.units)?;
    let files = model_files(&args.paths)?;
    let mut doc = Document::open(&args.into)
        .map_err(|e| anyhow::anyhow!("{}: cannot open the project: {e}", args.into.display()))?;
    let root = doc.root().map(Path::to_owned).unwrap_or_default();
    let scene = match &args.scene {
        Some(s) if doc.project().scenes.contains_key(s) => s.clone(),
        Some(s) => anyhow::bail!("--scene {s:?}: the project has no such scene"),
        None => doc
            .project()
            .manifest
            .scenes
            .first()
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("the project has no scene to add the models to"))?,
    };
    let (mut imported, mut failed) = (0usize, 0usize);
    for (k, file) in files.iter().enumerate() {
        match marrow_editor::import::run(file, &root, &scene, doc.project()) {
            Ok(i) => {
                let i = i.scaled(scale);
                let clips = match &i.op {
                    Op::AddFiles { files, .. } => files.len(),
                    _ => 0,
                };
                doc.apply(&i.op, k as u64 + 1)
                    .map_err(|e| anyhow::anyhow!("{}: the import does not apply: {e}", file.display()))?;
                println!(
                    "imported {}: {clips} clip file(s), entity {:?}{}",
                    file.display(),
                    i.entity_path.unwrap_or_default(),
                    if i.warnings.is_empty() {
                        String::new()
                    } else {
                        format!(", {} warning(s)", i.warnings.len())
                    }
                );
                for w in &i.warnings {
                    println!("  warning: {w}");
                }
                imported += 1;
            }
            Err(faults) => {
                eprintln!("error: {}: not imported:", file.display());
                for f in faults {
                    eprintln!("  {f}");
                }
                failed += 1;
            }
        }
    }
    if imported > 0 {
        doc.save().map_err(|e| anyhow::anyhow!("saving {}: {e}", root.display()))?;
    }
    println!("{imported} of {} model(s) imported into {}", files.len(), root.display());
    Ok(if failed > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_named_as_the_import_dialog_names_them() {
        for (u, s) in
            [("metres", 1.0), ("centimetres", 0.01), ("cm", 0.01), ("inches", 0.0254), ("foot", 0.3048)]
        {
            assert_eq!(scale_of(u).unwrap(), s, "{u}");
        }
        assert!(scale_of("furlongs").is_err());
    }
}
