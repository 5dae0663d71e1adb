//! Build a rig and a clip in code (a three-bone arm waving with eased keys and a `wave` marker
//! at the top of the swing), play it on an Animator and print the marker events as they come.
//!
//! `cargo run -p marrow-engine --example custom_rig`

use std::sync::Arc;

use marrow_engine::prelude::*;
use marrow_engine::skeleton::NO_PARENT;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let at = |y: f32| Transform::from_translation(Vec3::new(0.0, y, 0.0));
    let skeleton = Arc::new(Skeleton::from_bind_pose(
        "arm",
        vec![
            ("shoulder".to_owned(), NO_PARENT, at(1.5)),
            ("elbow".to_owned(), 0, at(0.3)),
            ("wrist".to_owned(), 1, at(0.25)),
        ],
    )?);

    // The elbow swings 0 -> 1.2 rad -> 0 over a second, eased in and out; a marker at the top.
    let mut clip = Clip::new("wave", &skeleton);
    clip.looping = true;
    let rot = |a: f32| Quat::from_rotation_z(a);
    let mut track = Track::from_keys_unchecked(
        Interpolation::Linear,
        vec![0.0, 0.5, 1.0],
        vec![rot(0.0), rot(1.2), rot(0.0)],
    )?;
    track.set_key_easing(0, Some(Ease::Named(Easing::InOutSine)));
    track.set_key_easing(1, Some(Ease::Named(Easing::InOutBack)));
    clip.channels_mut()[1] = BoneChannels { rotation: Some(track), ..BoneChannels::default() };
    clip.add_marker("wave", 0.5);
    let clip = Arc::new(clip);

    let mut animator = Animator::new(skeleton.clone(), AnimatorSettings::default());
    animator.play_clip(clip, true);
    let n = skeleton.bone_count();
    let (mut local, mut model, mut palette) =
        (vec![Transform::IDENTITY; n], vec![Mat4::IDENTITY; n], vec![Mat4::IDENTITY; n]);
    let mut heard = 0;
    for tick in 1..=150 {
        animator.advance(1.0 / 60.0);
        for e in animator.deliver_events() {
            heard += 1;
            println!("tick {tick:3}: marker {:?} of clip {:?} (lap {})", e.name(), e.clip.name, e.lap);
        }
    }
    animator.evaluate(RigPoseMut { local: &mut local, model: &mut model, palette: &mut palette })?;
    let wrist = model[2].w_axis.truncate();
    println!(
        "after 2.5 s: {heard} markers; the wrist is at ({:+.3}, {:+.3}, {:+.3})",
        wrist.x, wrist.y, wrist.z
    );
    Ok(())
}
