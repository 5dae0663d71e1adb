//! The one place the model-taking commands (`check`, `pose`, `render`, `export`, `simplify`,
//! `crowd`, `particles`) read a model file: glTF (`.gltf`, `.glb`), BVH (`.bvh`) or FBX (`.fbx`),
//! chosen by the extension, each into the same [`ImportedScene`], so every command treats them
//! alike.
//!
//! Not here: which faults a command prints or how (see `check.rs`).

use std::path::Path;

use anyhow::Context;
use marrow_engine::bvh::{self, BvhOptions, EndSites};
use marrow_engine::gltf::{self, ImportedScene};

/// How a BVH file becomes a scene (ignored for glTF files).
#[derive(Clone, Copy, Debug, clap::Args)]
pub struct BvhArgs {
    /// BVH only: multiply every offset and position by this (BVH states no unit; 0.01 reads
    /// centimetres as metres).
    #[arg(long, default_value_t = 1.0)]
    pub bvh_scale: f32,
    /// BVH only: leave out End Site blocks instead of making each a leaf bone `PARENT_end`.
    #[arg(long)]
    pub bvh_drop_end_sites: bool,
}

impl BvhArgs {
    /// The importer's options.
    pub fn options(&self) -> BvhOptions {
        BvhOptions {
            scale: self.bvh_scale,
            end_sites: if self.bvh_drop_end_sites { EndSites::Drop } else { EndSites::Bones },
        }
    }
}

/// Whether `path` names a BVH file (by its extension, any case).
pub fn is_bvh(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("bvh"))
}

/// Imports a glTF, BVH or FBX file (by the extension), the error naming the file.
pub fn import(path: &Path, bvh_args: &BvhArgs) -> anyhow::Result<ImportedScene> {
    if is_bvh(path) {
        // The BVH error names the file and the line:col already.
        Ok(bvh::import(path, &bvh_args.options())?)
    } else if path.extension().is_some_and(|e| e.eq_ignore_ascii_case("fbx")) {
        // The FBX error names the file and where.
        Ok(marrow_engine::fbx::import(path)?)
    } else {
        gltf::import(path).with_context(|| format!("importing {}", path.display()))
    }
}
