//! Scene-wide totals: what all the crowds and particle clouds of one scene hold together, each
//! within its own limit but bounded as a sum too (40 crowds of a million instances, or 30
//! clouds of two million particles, would each pass alone and together run the renderer out of
//! memory). Checked from the scene's description before anything is built, by
//! [`super::World::load`] and by the project check alike.
//!
//! Not here: the per-crowd and per-cloud limits ([`crate::crowd`], [`crate::particles`]).

use super::{AssetSource, EntityDesc, SceneDesc, SceneError};

/// Crowd instances one scene may hold in all (one crowd may hold as many alone).
pub const MAX_SCENE_INSTANCES: u64 = crate::crowd::MAX_INSTANCES as u64;

/// Particles one scene's clouds may hold in all (one cloud may hold as many alone).
pub const MAX_SCENE_PARTICLES: u64 = crate::particles::MAX_PARTICLES as u64;

/// Bytes of baked crowd tables one scene may hold in all (four crowds at the per-crowd limit,
/// [`crate::crowd::MAX_TABLE_BYTES`]).
pub const MAX_SCENE_TABLE_BYTES: u64 = 4 * crate::crowd::MAX_TABLE_BYTES;

/// The first entity (in depth-first order) at which one of the scene's totals passes its limit,
/// as a [`SceneError::Reference`] naming the total, the limit and the field; a crowd's rig that
/// does not resolve counts no table bytes (its own check says why).
pub fn check_totals(desc: &SceneDesc, assets: &dyn AssetSource) -> Result<(), SceneError> {
    let (mut instances, mut particles, mut table) = (0u64, 0u64, 0u64);
    let mut stack: Vec<(&EntityDesc, String)> =
        desc.entities.iter().rev().map(|e| (e, e.name.clone())).collect();
    while let Some((e, path)) = stack.pop() {
        let over = |field: &'static str, what: &str, total: String, limit: String| SceneError::Reference {
            entity: path.clone(),
            field,
            message: format!(
                "the scene's {what} come to {total} with this one; the limit is {limit} per scene"
            ),
        };
        if let Some(c) = &e.crowd {
            instances += u64::from(c.count);
            if instances > MAX_SCENE_INSTANCES {
                return Err(over(
                    "crowd.count",
                    "crowds' instances",
                    instances.to_string(),
                    MAX_SCENE_INSTANCES.to_string(),
                ));
            }
            let bones = assets.skeleton(&c.rig).map_or(0, |s| s.bone_count());
            table = table.saturating_add(crate::crowd::table_bytes(c.clips.len(), c.frames, bones));
            if table > MAX_SCENE_TABLE_BYTES {
                return Err(over(
                    "crowd.clips",
                    "crowds' baked tables",
                    format!("{} MB", table >> 20),
                    format!("{} MB", MAX_SCENE_TABLE_BYTES >> 20),
                ));
            }
        }
        if let Some(p) = &e.particles {
            particles += u64::from(p.settings.count);
            if particles > MAX_SCENE_PARTICLES {
                return Err(over(
                    "particles.count",
                    "clouds' particles",
                    particles.to_string(),
                    MAX_SCENE_PARTICLES.to_string(),
                ));
            }
        }
        stack.extend(e.children.iter().rev().map(|c| (c, format!("{path}/{}", c.name))));
    }
    Ok(())
}
