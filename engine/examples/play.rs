//! Play CesiumMan's walk and print where its head goes over one second: the few calls a game
//! makes (import, play, advance each tick, evaluate, read a joint's `model_from_bone`).
//!
//! `cargo run -p marrow-engine --example play`

use std::sync::Arc;

use marrow_engine::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/gltf/CesiumMan/CesiumMan.glb");
    let scene = gltf::import(file)?;
    let skeleton = Arc::new(scene.rigs[0].skeleton.clone());
    let walk = Arc::new(scene.animations[0].clips[0].clip.clone());
    println!(
        "{}: {} bones, clip {:?} of {:.2} s",
        skeleton.name,
        skeleton.bone_count(),
        walk.name,
        walk.duration()
    );

    let mut animator = Animator::new(skeleton.clone(), AnimatorSettings::default());
    animator.play_clip(walk, true);
    let n = skeleton.bone_count();
    let (mut local, mut model, mut palette) =
        (vec![Transform::IDENTITY; n], vec![Mat4::IDENTITY; n], vec![Mat4::IDENTITY; n]);
    let head = skeleton.index_of("Skeleton_neck_joint_2").ok_or("CesiumMan has no neck joint")?;
    for tick in 0..=60 {
        if tick > 0 {
            animator.advance(1.0 / 60.0);
        }
        if tick % 6 == 0 {
            animator.evaluate(RigPoseMut { local: &mut local, model: &mut model, palette: &mut palette })?;
            let p = model[head].w_axis.truncate();
            println!("t = {:.2} s  head at ({:+.3}, {:+.3}, {:+.3})", animator.time(), p.x, p.y, p.z);
        }
    }
    Ok(())
}
