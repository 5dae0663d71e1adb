//! Bone sockets: placement (`rigWorld * global[bone] * offset`) on the first frame and after the
//! rig moves, the memoised lookup, every socket fault logged once per gap, and mirrored and
//! zero-scaled bones decomposed without NaN.

use std::f32::consts::FRAC_PI_2;
use std::sync::Arc;

use glam::{Mat4, Quat, Vec3};
use marrow_engine::animator::{Animator, AnimatorSettings};
use marrow_engine::clip::{BoneChannels, Clip};
use marrow_engine::math::Transform;
use marrow_engine::scene::{AnimatorComponent, BoneSocket, Entity, SocketFault, World, socket_local};
use marrow_engine::skeleton::{NO_PARENT, Skeleton};
use marrow_engine::track::{Interpolation, Track};

const DT: f32 = 1.0 / 60.0;

fn skeleton(name: &str, arm_scale: Vec3) -> Arc<Skeleton> {
    let bones = vec![
        ("root".to_owned(), NO_PARENT, Transform::from_translation(Vec3::new(0.0, 1.0, 0.0))),
        (
            "arm".to_owned(),
            0,
            Transform {
                translation: Vec3::new(0.5, 0.0, 0.0),
                rotation: Quat::from_rotation_z(0.3),
                scale: arm_scale,
            },
        ),
        ("hand".to_owned(), 1, Transform::from_translation(Vec3::new(0.4, 0.1, 0.0))),
    ];
    match Skeleton::from_bind_pose(name, bones.clone()) {
        Ok(sk) => Arc::new(sk),
        // A zero-scaled bind pose has no inverse bind: build it by hand (sockets do not need one).
        Err(_) => Arc::new(Skeleton {
            name: name.into(),
            bone_names: bones.iter().map(|b| b.0.clone()).collect(),
            parents: bones.iter().map(|b| b.1).collect(),
            bind_pose: bones.iter().map(|b| b.2).collect(),
            inverse_bind: vec![Mat4::IDENTITY; bones.len()],
        }),
    }
}

/// A looping clip swinging the arm about Y.
fn swing(sk: &Skeleton) -> Arc<Clip> {
    let mut clip = Clip::new("swing", sk);
    clip.looping = true;
    let q = |a: f32| Quat::from_rotation_y(a) * sk.bind_pose[1].rotation;
    clip.channels_mut()[1] = BoneChannels {
        rotation: Some(
            Track::from_keys(Interpolation::Linear, vec![0.0, 0.5, 1.0], vec![q(0.0), q(FRAC_PI_2), q(0.0)])
                .unwrap(),
        ),
        ..BoneChannels::default()
    };
    Arc::new(clip)
}

fn rig(world: &mut World, name: &str, sk: Arc<Skeleton>, clip: Option<Arc<Clip>>, at: Transform) -> Entity {
    let e = world.spawn(name);
    world.set_transform(e, Some(at)).unwrap();
    let animator =
        Animator::new(sk, AnimatorSettings { clip, speed: 1.0, play_on_start: true, ..Default::default() });
    world
        .set_animator(
            e,
            AnimatorComponent {
                rig: "rig".into(),
                clip: None,
                graph: None,
                looping: None,
                root_motion: None,
                targets: Vec::new(),
                animator,
            },
        )
        .unwrap();
    e
}

fn socket(world: &mut World, parent: Option<Entity>, bone: &str, offset: Transform) -> Entity {
    let s = world.spawn("held");
    world.set_transform(s, Some(Transform::IDENTITY)).unwrap();
    world.set_parent(s, parent).unwrap();
    world.set_socket(s, Some(BoneSocket::new(bone, offset))).unwrap();
    s
}

fn offset() -> Transform {
    Transform {
        translation: Vec3::new(0.1, 0.2, -0.05),
        rotation: Quat::from_rotation_x(0.4),
        scale: Vec3::splat(1.5),
    }
}

fn expected(world: &World, rig: Entity, bone: usize, offset: &Transform) -> Mat4 {
    world.world_matrix(rig).unwrap() * world.rig_pose(rig).unwrap().model[bone] * offset.to_mat4()
}

fn assert_close(a: Mat4, b: Mat4, what: &str) {
    assert!(a.is_finite() && b.is_finite(), "{what}: not finite");
    assert!(a.abs_diff_eq(b, 1e-5), "{what}: {a:?} vs {b:?}");
}

#[test]
fn socket_sits_on_its_bone_on_the_first_frame_and_after_the_rig_moves() {
    let sk = skeleton("arm_rig", Vec3::ONE);
    let clip = swing(&sk);
    let mut w = World::new();
    let r = rig(&mut w, "Rig", sk, Some(clip), Transform::from_translation(Vec3::new(3.0, 0.0, -2.0)));
    let s = socket(&mut w, Some(r), "hand", offset());
    // First frame, first tick: already on the bone.
    w.frame(1, DT);
    assert_close(w.world_matrix(s).unwrap(), expected(&w, r, 2, &offset()), "first frame");
    assert_eq!(w.socket(s).unwrap().resolved_bone(), Some(2));
    // The rig moves (and the clip swings) in the same frame: the socket follows that frame.
    for i in 0..40 {
        let t = Transform {
            translation: Vec3::new(3.0 + i as f32 * 0.1, 0.0, -2.0),
            rotation: Quat::from_rotation_y(i as f32 * 0.05),
            scale: Vec3::splat(1.0 + i as f32 * 0.01),
        };
        w.set_transform(r, Some(t)).unwrap();
        w.frame(1, DT);
        assert_close(w.world_matrix(s).unwrap(), expected(&w, r, 2, &offset()), &format!("frame {i}"));
    }
    // The arm really swung (the check above is not on a still pose).
    let model = w.rig_pose(r).unwrap().model[1];
    assert!(!model.abs_diff_eq(Mat4::from_translation(Vec3::Y) * sk_bind_arm(), 1e-3));
    // A paused frame recomposes the same placement.
    let before = w.world_matrix(s).unwrap();
    w.frame(0, DT);
    assert_close(w.world_matrix(s).unwrap(), before, "paused frame");
    assert!(w.faults().entries().is_empty(), "{:?}", w.faults().entries());
}

fn sk_bind_arm() -> Mat4 {
    Mat4::from_scale_rotation_translation(Vec3::ONE, Quat::from_rotation_z(0.3), Vec3::new(0.5, 0.0, 0.0))
}

#[test]
fn lookup_is_memoised_failures_included_and_redone_when_rig_or_name_changes() {
    let sk = skeleton("arm_rig", Vec3::ONE);
    let mut w = World::new();
    let a = rig(&mut w, "A", sk.clone(), None, Transform::IDENTITY);
    let b = rig(&mut w, "B", skeleton("other_rig", Vec3::ONE), None, Transform::from_translation(Vec3::X));
    let s = socket(&mut w, Some(a), "arm", Transform::IDENTITY);
    for _ in 0..10 {
        w.frame(1, DT);
    }
    assert_eq!(w.bone_lookups(), 1);
    w.socket_mut(s).unwrap().bone = "nope".into();
    for _ in 0..10 {
        w.frame(1, DT);
    }
    assert_eq!(w.bone_lookups(), 2, "a failed lookup is memoised too");
    assert_eq!(w.socket(s).unwrap().resolved_bone(), None);
    w.socket_mut(s).unwrap().bone = "hand".into();
    w.frame(1, DT);
    assert_eq!(w.bone_lookups(), 3);
    assert_eq!(w.socket(s).unwrap().resolved_bone(), Some(2));
    // Another rig: re-resolved at once, and placed on the new rig's bone.
    w.set_parent(s, Some(b)).unwrap();
    w.frame(1, DT);
    assert_eq!(w.bone_lookups(), 4);
    assert_close(w.world_matrix(s).unwrap(), expected(&w, b, 2, &Transform::IDENTITY), "new rig");
}

#[test]
fn every_socket_fault_is_logged_once_per_gap() {
    let sk = skeleton("arm_rig", Vec3::ONE);
    let mut w = World::new();
    let r = rig(&mut w, "Rig", sk, None, Transform::IDENTITY);
    let plain = w.spawn("Plain");
    w.set_transform(plain, Some(Transform::IDENTITY)).unwrap();
    // A new socket starts with the empty name: "no bone of that name".
    let s = socket(&mut w, Some(r), "", Transform::IDENTITY);
    let unknown = SocketFault::UnknownBone.describe();
    // Before any frame since the load: no pose published.
    w.transform_stage();
    assert_eq!(w.faults().count_containing(SocketFault::NoPose.describe()), 1);
    for _ in 0..5 {
        w.frame(1, DT);
    }
    assert_eq!(w.faults().count_containing(unknown), 1, "{:?}", w.faults().entries());
    w.socket_mut(s).unwrap().bone = "hand".into();
    for _ in 0..3 {
        w.frame(1, DT);
    }
    w.socket_mut(s).unwrap().bone = "hnad".into();
    for _ in 0..5 {
        w.frame(1, DT);
    }
    assert_eq!(w.faults().count_containing(unknown), 2, "logged again after a gap");
    w.socket_mut(s).unwrap().bone = "hand".into();
    // No Transform.
    w.set_transform(s, None).unwrap();
    for _ in 0..4 {
        w.frame(1, DT);
    }
    assert_eq!(w.faults().count_containing(SocketFault::NoTransform.describe()), 1);
    w.set_transform(s, Some(Transform::IDENTITY)).unwrap();
    // Not a direct child of a rig: under a plain entity, then at the root, then under a child of the rig.
    w.set_parent(s, Some(plain)).unwrap();
    for _ in 0..4 {
        w.frame(1, DT);
    }
    w.set_parent(s, None).unwrap();
    for _ in 0..4 {
        w.frame(1, DT);
    }
    let not_child = SocketFault::NotRigChild.describe();
    assert_eq!(w.faults().count_containing(not_child), 1, "one gap, though the parent changed");
    w.set_parent(s, Some(r)).unwrap();
    w.frame(1, DT);
    w.set_parent(plain, Some(r)).unwrap();
    w.set_parent(s, Some(plain)).unwrap();
    for _ in 0..4 {
        w.frame(1, DT);
    }
    assert_eq!(w.faults().count_containing(not_child), 2);
    // A rig with no bones.
    let empty = rig(
        &mut w,
        "Empty",
        Arc::new(Skeleton::from_bind_pose("empty", vec![]).unwrap()),
        None,
        Transform::IDENTITY,
    );
    w.set_parent(s, Some(empty)).unwrap();
    for _ in 0..4 {
        w.frame(1, DT);
    }
    assert_eq!(w.faults().count_containing(SocketFault::NoBones.describe()), 1);
    // Each message names the socket's path.
    assert!(w.faults().entries().iter().all(|m| m.contains("held")), "{:?}", w.faults().entries());
    // A reload publishes no pose until the frame that recomposes.
    assert_eq!(w.faults().count_containing(SocketFault::NoPose.describe()), 1);
}

#[test]
fn mirrored_and_zero_scaled_bones_place_sockets_without_nan() {
    // (bone scale, whether `global * offset` is exactly a TRS: the rotated offset shears a
    // non-uniformly scaled basis, and two vanished axes leave a rank-one basis).
    for (scale, exact) in [
        (Vec3::new(-1.0, 1.0, 1.0), true),
        (Vec3::new(2.0, -2.0, 2.0), true),
        (Vec3::new(0.0, 1.0, 1.0), true),
        (Vec3::ZERO, true),
        (Vec3::new(2.0, -3.0, 1.5), false),
        (Vec3::new(0.0, 0.0, 2.0), false),
    ] {
        let sk = skeleton("scaled", scale);
        let mut w = World::new();
        let r = rig(&mut w, "Rig", sk, None, Transform::from_translation(Vec3::new(0.0, 0.0, 1.0)));
        let s = socket(&mut w, Some(r), "arm", offset());
        w.frame(1, DT);
        let local = w.local(s).unwrap();
        assert!(local.is_finite(), "{scale}: {local:?}");
        assert!((local.rotation.length() - 1.0).abs() < 1e-5, "{scale}");
        let m = w.world_matrix(s).unwrap();
        assert!(m.is_finite(), "{scale}");
        if exact {
            assert_close(m, expected(&w, r, 1, &offset()), &format!("scale {scale}"));
        }
        if scale.x < 0.0 || scale.y < 0.0 {
            // Mirrored: carried as a negative scale on one axis.
            assert_eq!(local.scale.to_array().iter().filter(|c| **c < 0.0).count(), 1, "{scale}: {local:?}");
        }
    }
    // Shear is dropped, never NaN.
    let sheared = Mat4::from_cols_array(&[
        1.0, 0.0, 0.0, 0.0, 0.5, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
    ]);
    let t = socket_local(&sheared, &Transform::IDENTITY);
    assert!(t.is_finite());
    assert_eq!(t.rotation, Quat::IDENTITY);
}
