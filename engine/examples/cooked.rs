//! Ship a clip cooked and play it: compress CesiumMan's walk to ACL's default error (0.01 cm at a
//! 3 cm shell), write the `*.clip.bin` a game ships (`marrow cook` writes one per clip of a
//! project), read it back (one read, every count checked) and play it on an Animator like any
//! clip, beside the authored walk: the head moves within the tolerance of where the authored clip
//! puts it, and the cooked file's markers fire as events.
//!
//! `cargo run -p marrow-engine --example cooked`

use std::sync::Arc;

use marrow_engine::compressed::{CompressOptions, CompressedClip};
use marrow_engine::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/gltf/CesiumMan/CesiumMan.glb");
    let scene = gltf::import(file)?;
    let skeleton = Arc::new(scene.rigs[0].skeleton.clone());
    let mut walk = scene.animations[0].clips[0].clip.clone();
    walk.add_marker("footstep", 0.5);
    walk.add_marker("footstep", 1.5);
    let walk = Arc::new(walk);

    // What `marrow cook` does for this clip, and what the game reads.
    let (packed, report) = CompressedClip::compress(&walk, &skeleton, &CompressOptions::default())?;
    let path = std::env::temp_dir().join(format!("marrow-example-{}.clip.bin", std::process::id()));
    std::fs::write(&path, packed.to_cooked())?;
    let bytes = std::fs::read(&path)?;
    std::fs::remove_file(&path)?;
    let cooked = Arc::new(Clip::from_compressed(Arc::new(CompressedClip::from_cooked(&bytes)?)));
    println!(
        "{:?}: {} bytes raw -> {} cooked ({:.1}:1), worst shell error {:.1e} m, {} markers",
        cooked.name,
        report.raw_bytes,
        bytes.len(),
        report.raw_bytes as f64 / bytes.len() as f64,
        report.max_error,
        cooked.markers().len()
    );

    let n = skeleton.bone_count();
    let head = skeleton.index_of("Skeleton_neck_joint_2").ok_or("CesiumMan has no neck joint")?;
    let mut players = [walk, cooked].map(|clip| {
        let mut a = Animator::new(skeleton.clone(), AnimatorSettings::default());
        a.play_clip(clip, true);
        (a, (vec![Transform::IDENTITY; n], vec![Mat4::IDENTITY; n], vec![Mat4::IDENTITY; n]))
    });
    for tick in 0..=120 {
        let mut heads = [Vec3::ZERO; 2];
        for (k, (a, (local, model, palette))) in players.iter_mut().enumerate() {
            if tick > 0 {
                a.advance(1.0 / 60.0);
            }
            let t = a.time();
            for e in a.deliver_events() {
                if k == 1 {
                    println!("t = {t:.2} s  event {:?} from the cooked clip", e.name());
                }
            }
            a.evaluate(RigPoseMut { local, model, palette })?;
            heads[k] = model[head].w_axis.truncate();
        }
        if tick % 30 == 0 {
            let p = heads[1];
            let off = (heads[1] - heads[0]).length();
            println!(
                "t = {:.2} s  head at ({:+.3}, {:+.3}, {:+.3}), {off:.1e} m from the authored walk's",
                players[1].0.time(),
                p.x,
                p.y,
                p.z
            );
        }
    }
    Ok(())
}
