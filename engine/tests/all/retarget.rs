//! Retargeting (`marrow_engine::retarget`): the humanoid profile found through each naming
//! scheme (Mixamo, the Unreal mannequin, Rigify with twist bones, Blender's `.L`, a real CMU
//! capture); the compile faults by name; identical rigs give the clip back bit for bit; a rig
//! twice the size gives the same rotations and twice the hip travel; a rig whose arms rest down
//! against one whose arms rest out points every bone the same way at every key; a Y-up capture
//! onto a Z-up rig; and real motion capture retargeted onto another rig plays.

use std::path::Path;

use glam::{Quat, Vec3};
use marrow_engine::bvh::{self, BvhOptions};
use marrow_engine::clip::Clip;
use marrow_engine::math::Transform;
use marrow_engine::retarget::{
    BonePair, HumanoidRole as R, RetargetFault, RetargetMap, RetargetPlan, auto_map, find_humanoid,
};
use marrow_engine::skeleton::{NO_PARENT, Skeleton};
use marrow_engine::synthetic::{mocap_like_clip, mocap_skeleton};
use marrow_engine::track::{Interpolation, Track};

/// The bones of the test humanoid, parents first: role (if any), parent, offset.
const BODY: [(Option<R>, i32, [f32; 3]); 22] = [
    (Some(R::Hips), -1, [0.0, 1.0, 0.0]),
    (Some(R::Spine), 0, [0.0, 0.1, 0.0]),
    (Some(R::Chest), 1, [0.0, 0.15, 0.0]),
    (Some(R::UpperChest), 2, [0.0, 0.15, 0.0]),
    (Some(R::Neck), 3, [0.0, 0.1, 0.0]),
    (Some(R::Head), 4, [0.0, 0.1, 0.0]),
    (Some(R::LeftShoulder), 3, [0.05, 0.08, 0.0]),
    (Some(R::LeftUpperArm), 6, [0.12, 0.0, 0.0]),
    (Some(R::LeftLowerArm), 7, [0.28, 0.0, 0.0]),
    (Some(R::LeftHand), 8, [0.25, 0.0, 0.0]),
    (Some(R::RightShoulder), 3, [-0.05, 0.08, 0.0]),
    (Some(R::RightUpperArm), 10, [-0.12, 0.0, 0.0]),
    (Some(R::RightLowerArm), 11, [-0.28, 0.0, 0.0]),
    (Some(R::RightHand), 12, [-0.25, 0.0, 0.0]),
    (Some(R::LeftUpperLeg), 0, [0.1, -0.05, 0.0]),
    (Some(R::LeftLowerLeg), 14, [0.0, -0.45, 0.0]),
    (Some(R::LeftFoot), 15, [0.0, -0.45, 0.0]),
    (Some(R::LeftToes), 16, [0.0, -0.05, 0.12]),
    (Some(R::RightUpperLeg), 0, [-0.1, -0.05, 0.0]),
    (Some(R::RightLowerLeg), 18, [0.0, -0.45, 0.0]),
    (Some(R::RightFoot), 19, [0.0, -0.45, 0.0]),
    (Some(R::RightToes), 20, [0.0, -0.05, 0.12]),
];

/// How a test rig differs from the plain one.
#[derive(Clone, Copy, Default)]
struct Shape {
    /// Every offset times this.
    scale: f32,
    /// Upper arms rest rotated 75 degrees down (an A-pose) instead of straight out.
    arms_down: bool,
    /// A twist bone (`<upper arm>.001`, no offset) between each upper and lower arm.
    twist: bool,
}

/// The test humanoid with bones named by `name(role)`.
fn humanoid(rig: &str, name: impl Fn(R) -> String, shape: Shape) -> Skeleton {
    let scale = if shape.scale == 0.0 { 1.0 } else { shape.scale };
    let mut bones: Vec<(String, u16, Transform)> = Vec::new();
    let mut index_of_body = Vec::new();
    for (role, parent, [x, y, z]) in BODY {
        let mut parent = if parent < 0 { NO_PARENT } else { index_of_body[parent as usize] };
        let role = role.unwrap();
        if shape.twist && matches!(role, R::LeftLowerArm | R::RightLowerArm) {
            let upper = &bones[parent as usize].0;
            bones.push((format!("{upper}.001"), parent, Transform::IDENTITY));
            parent = (bones.len() - 1) as u16;
        }
        let mut t = Transform::from_translation(Vec3::new(x, y, z) * scale);
        if shape.arms_down {
            match role {
                R::LeftUpperArm => t.rotation = Quat::from_rotation_z(-75f32.to_radians()),
                R::RightUpperArm => t.rotation = Quat::from_rotation_z(75f32.to_radians()),
                _ => {}
            }
        }
        index_of_body.push(bones.len() as u16);
        bones.push((name(role), parent, t));
    }
    Skeleton::from_bind_pose(rig, bones).unwrap()
}

/// Names each role's bone in one naming scheme.
type Namer = fn(R) -> String;

fn mixamo(r: R) -> String {
    let n = match r {
        R::Hips => "Hips",
        R::Spine => "Spine",
        R::Chest => "Spine1",
        R::UpperChest => "Spine2",
        R::Neck => "Neck",
        R::Head => "Head",
        R::LeftShoulder => "LeftShoulder",
        R::LeftUpperArm => "LeftArm",
        R::LeftLowerArm => "LeftForeArm",
        R::LeftHand => "LeftHand",
        R::RightShoulder => "RightShoulder",
        R::RightUpperArm => "RightArm",
        R::RightLowerArm => "RightForeArm",
        R::RightHand => "RightHand",
        R::LeftUpperLeg => "LeftUpLeg",
        R::LeftLowerLeg => "LeftLeg",
        R::LeftFoot => "LeftFoot",
        R::LeftToes => "LeftToeBase",
        R::RightUpperLeg => "RightUpLeg",
        R::RightLowerLeg => "RightLeg",
        R::RightFoot => "RightFoot",
        R::RightToes => "RightToeBase",
    };
    format!("mixamorig:{n}")
}

fn unreal(r: R) -> String {
    let (base, side) = match r {
        R::Hips => ("pelvis", ""),
        R::Spine => ("spine_01", ""),
        R::Chest => ("spine_02", ""),
        R::UpperChest => ("spine_03", ""),
        R::Neck => ("neck_01", ""),
        R::Head => ("head", ""),
        R::LeftShoulder | R::RightShoulder => ("clavicle", ""),
        R::LeftUpperArm | R::RightUpperArm => ("upperarm", ""),
        R::LeftLowerArm | R::RightLowerArm => ("lowerarm", ""),
        R::LeftHand | R::RightHand => ("hand", ""),
        R::LeftUpperLeg | R::RightUpperLeg => ("thigh", ""),
        R::LeftLowerLeg | R::RightLowerLeg => ("calf", ""),
        R::LeftFoot | R::RightFoot => ("foot", ""),
        R::LeftToes | R::RightToes => ("ball", ""),
    };
    let side = if r.name().starts_with("Left") {
        "_l"
    } else if r.name().starts_with("Right") {
        "_r"
    } else {
        side
    };
    format!("{base}{side}")
}

fn rigify(r: R) -> String {
    let (base, center) = match r {
        R::Hips => ("spine", true),
        R::Spine => ("spine.001", true),
        R::Chest => ("spine.002", true),
        R::UpperChest => ("spine.003", true),
        R::Neck => ("spine.004", true),
        R::Head => ("spine.005", true),
        R::LeftShoulder | R::RightShoulder => ("shoulder", false),
        R::LeftUpperArm | R::RightUpperArm => ("upper_arm", false),
        R::LeftLowerArm | R::RightLowerArm => ("forearm", false),
        R::LeftHand | R::RightHand => ("hand", false),
        R::LeftUpperLeg | R::RightUpperLeg => ("thigh", false),
        R::LeftLowerLeg | R::RightLowerLeg => ("shin", false),
        R::LeftFoot | R::RightFoot => ("foot", false),
        R::LeftToes | R::RightToes => ("toe", false),
    };
    if center {
        format!("DEF-{base}")
    } else {
        format!("DEF-{base}.{}", if r.name().starts_with("Left") { "L" } else { "R" })
    }
}

fn role_names(r: R) -> String {
    r.name().to_owned()
}

fn blender(r: R) -> String {
    let n = r.name();
    match n.strip_prefix("Left").map(|b| (b, "L")).or_else(|| n.strip_prefix("Right").map(|b| (b, "R"))) {
        Some((b, side)) => format!("{}.{side}", b.to_lowercase()),
        None => n.to_lowercase(),
    }
}

#[test]
fn the_humanoid_profile_is_found_through_every_naming_scheme() {
    let schemes: [(&str, Namer, Shape); 5] = [
        ("mixamo", mixamo, Shape::default()),
        ("unreal", unreal, Shape::default()),
        ("rigify", rigify, Shape { twist: true, ..Shape::default() }),
        ("blender", blender, Shape { arms_down: true, ..Shape::default() }),
        ("roles", role_names, Shape::default()),
    ];
    for (scheme, name, shape) in schemes {
        let sk = humanoid(scheme, name, shape);
        let found = find_humanoid(&sk);
        for role in R::ALL {
            let bone = found.get(role).map(|b| sk.bone_names[b].as_str());
            assert_eq!(bone, Some(name(role).as_str()), "{scheme}: {}", role.name());
        }
        assert!(found.missing_required().is_empty(), "{scheme}");
    }
}

#[test]
fn a_real_cmu_capture_is_read_as_a_humanoid() {
    let scene = bvh::import(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/bvh/cmu_131_01.bvh"),
        &BvhOptions::default(),
    )
    .unwrap();
    let sk = &scene.rigs[0].skeleton;
    let found = find_humanoid(sk);
    let expect = [
        (R::Hips, "Hips"),
        (R::Spine, "lowerback"),
        (R::LeftShoulder, "LeftCollar"),
        (R::LeftUpperArm, "LeftShoulder"),
        (R::LeftLowerArm, "LeftElbow"),
        (R::LeftHand, "LeftWrist"),
        (R::RightUpperArm, "RightShoulder"),
        (R::RightHand, "RightWrist"),
        (R::LeftUpperLeg, "LeftHip"),
        (R::LeftLowerLeg, "LeftKnee"),
        (R::LeftFoot, "LeftAnkle"),
        (R::LeftToes, "LeftToe"),
        (R::RightFoot, "RightAnkle"),
        (R::Head, "Head"),
    ];
    for (role, bone) in expect {
        assert_eq!(found.get(role).map(|b| sk.bone_names[b].as_str()), Some(bone), "{}", role.name());
    }
    assert!(found.missing_required().is_empty());
}

/// A clip of `frames` keys at 30 Hz moving every bone of `sk` (and the root's position).
fn motion(sk: &Skeleton, frames: usize) -> Clip {
    motion_at(sk, frames, 30.0)
}

/// [`motion`] keyed at `hz`.
fn motion_at(sk: &Skeleton, frames: usize, hz: f32) -> Clip {
    let times: Vec<f32> = (0..frames).map(|k| k as f32 / hz).collect();
    let mut clip = Clip::new("walk", sk);
    for (b, ch) in clip.channels_mut().iter_mut().enumerate() {
        let rest = sk.bind_pose[b];
        let rot: Vec<Quat> = times
            .iter()
            .map(|&t| {
                let p = b as f32 * 0.7;
                rest.rotation
                    * Quat::from_euler(
                        glam::EulerRot::ZYX,
                        0.6 * (2.0 * t + p).sin(),
                        0.4 * (3.0 * t + p).cos(),
                        0.5 * (1.5 * t - p).sin(),
                    )
            })
            .collect();
        ch.rotation = Some(Track::from_keys(Interpolation::Linear, times.clone(), rot).unwrap());
        if b == 0 {
            let pos = times
                .iter()
                .map(|&t| rest.translation + Vec3::new(0.1 * t.sin(), 0.05 * (4.0 * t).cos(), 1.2 * t))
                .collect();
            ch.translation = Some(Track::from_keys(Interpolation::Linear, times.clone(), pos).unwrap());
        }
    }
    clip.looping = true;
    clip.add_marker("step", 0.5);
    clip
}

/// Model-space rotation and position of every bone of `sk` playing `clip` at `time`.
fn model_pose(sk: &Skeleton, clip: &Clip, time: f32) -> Vec<(Quat, Vec3)> {
    let mut out: Vec<(Quat, Vec3)> = Vec::new();
    for b in 0..sk.bone_count() {
        let rest = sk.bind_pose[b];
        let ch = &clip.channels()[b];
        let r = ch.rotation.as_ref().and_then(|t| t.sample(time)).unwrap_or(rest.rotation);
        let t = ch.translation.as_ref().and_then(|t| t.sample(time)).unwrap_or(rest.translation);
        out.push(match sk.parent(b) {
            Some(p) => (out[p].0 * r, out[p].1 + out[p].0 * t),
            None => (r, t),
        });
    }
    out
}

#[test]
fn identical_rigs_give_the_source_clip_back_bit_for_bit() {
    let sk = humanoid("a", mixamo, Shape::default());
    let clip = motion(&sk, 40);
    let map = auto_map(&sk, &sk);
    assert_eq!(map.bones.len(), sk.bone_count());
    let plan = RetargetPlan::new(&map, &sk, &sk).unwrap();
    assert!(plan.copies().iter().all(|&c| c));
    assert_eq!(plan.retarget_clip(&clip).unwrap(), clip);
    // The same holds for real capture and its own rig.
    let cmu = mocap_skeleton();
    let capture = mocap_like_clip(&cmu, "capture", 120, 120.0, 7);
    let plan = RetargetPlan::new(&auto_map(&cmu, &cmu), &cmu, &cmu).unwrap();
    assert_eq!(plan.retarget_clip(&capture).unwrap(), capture);
}

#[test]
fn a_rig_twice_the_size_gets_the_same_rotations_and_twice_the_hip_travel() {
    let source = humanoid("small", mixamo, Shape::default());
    let target = humanoid("big", unreal, Shape { scale: 2.0, ..Shape::default() });
    let clip = motion(&source, 30);
    let map = auto_map(&source, &target);
    assert_eq!(map.bones.len(), 22, "{map:?}");
    let plan = RetargetPlan::new(&map, &source, &target).unwrap();
    assert!((plan.hip_ratio() - 2.0).abs() < 1e-6, "{}", plan.hip_ratio());
    let out = plan.retarget_clip(&clip).unwrap();
    assert_eq!(out.skeleton, "big");
    assert_eq!(out.markers(), clip.markers());
    assert!(out.looping);
    for pair in &map.bones {
        let (s, t) = (source.index_of(&pair.source).unwrap(), target.index_of(&pair.target).unwrap());
        let (sr, tr) =
            (clip.channels()[s].rotation.as_ref().unwrap(), out.channels()[t].rotation.as_ref().unwrap());
        assert_eq!(sr.times(), tr.times(), "{}", pair.target);
        for (a, b) in sr.values().iter().zip(tr.values()) {
            assert!(a.dot(*b).abs() > 1.0 - 1e-6, "{}: {a} vs {b}", pair.target);
        }
    }
    let (sh, th) =
        (clip.channels()[0].translation.as_ref().unwrap(), out.channels()[0].translation.as_ref().unwrap());
    for (a, b) in sh.values().iter().zip(th.values()) {
        assert!((*a * 2.0 - *b).length() < 1e-5, "{a} * 2 vs {b}");
    }
    // Only the hips carry a translation track: every other bone keeps the big rig's lengths.
    assert!(out.channels()[1..].iter().all(|c| c.translation.is_none()));
}

/// The angle between two directions, radians (by `atan2`, exact near zero where `acos` of an
/// `f32` dot product is not).
fn angle(a: Vec3, b: Vec3) -> f32 {
    a.cross(b).length().atan2(a.dot(b))
}

#[test]
fn arms_resting_down_move_like_arms_resting_out_at_every_key() {
    let source = humanoid("tpose", mixamo, Shape::default());
    let target = humanoid("apose", blender, Shape { arms_down: true, ..Shape::default() });
    let clip = motion(&source, 45);
    let map = auto_map(&source, &target);
    let out = RetargetPlan::new(&map, &source, &target).unwrap().retarget_clip(&clip).unwrap();
    // Bones with one mapped child: their direction toward it is the bone's direction.
    let chains = [
        (R::Spine, R::Chest),
        (R::Chest, R::UpperChest),
        (R::Neck, R::Head),
        (R::LeftShoulder, R::LeftUpperArm),
        (R::LeftUpperArm, R::LeftLowerArm),
        (R::LeftLowerArm, R::LeftHand),
        (R::RightUpperArm, R::RightLowerArm),
        (R::RightLowerArm, R::RightHand),
        (R::LeftUpperLeg, R::LeftLowerLeg),
        (R::LeftLowerLeg, R::LeftFoot),
        (R::RightLowerLeg, R::RightFoot),
        (R::LeftFoot, R::LeftToes),
    ];
    let (hs, ht) = (find_humanoid(&source), find_humanoid(&target));
    let times = clip.channels()[0].rotation.as_ref().unwrap().times().to_vec();
    let mut worst = 0.0f32;
    for &time in &times {
        let (ps, pt) = (model_pose(&source, &clip, time), model_pose(&target, &out, time));
        for (bone, child) in chains {
            let ds = ps[hs.get(child).unwrap()].1 - ps[hs.get(bone).unwrap()].1;
            let dt = pt[ht.get(child).unwrap()].1 - pt[ht.get(bone).unwrap()].1;
            let a = angle(ds, dt);
            worst = worst.max(a);
            assert!(a < 1e-4, "{} at {time}: {a} rad", bone.name());
        }
    }
    // The rest poses do differ: played as they are, the arms would point 75 degrees apart.
    let rest_s = model_pose(&source, &Clip::new("rest", &source), 0.0);
    let rest_t = model_pose(&target, &Clip::new("rest", &target), 0.0);
    let arm = |p: &[(Quat, Vec3)], h: &marrow_engine::retarget::HumanoidBones| {
        p[h.get(R::LeftLowerArm).unwrap()].1 - p[h.get(R::LeftUpperArm).unwrap()].1
    };
    assert!(angle(arm(&rest_s, &hs), arm(&rest_t, &ht)) > 1.0);
    assert!(worst < 1e-4);
}

#[test]
fn a_y_up_capture_drives_a_z_up_rig_with_its_bones_pointing_alike() {
    let source = humanoid("yup", mixamo, Shape::default());
    // The same body lying in Z-up axes: its root rotated +90 degrees about X.
    let mut target = humanoid("zup", unreal, Shape::default());
    let lay = Quat::from_rotation_x(90f32.to_radians());
    target.bind_pose[0].rotation = lay;
    target.bind_pose[0].translation = lay * target.bind_pose[0].translation;
    let clip = motion(&source, 20);
    let map = auto_map(&source, &target);
    let plan = RetargetPlan::new(&map, &source, &target).unwrap();
    assert!(plan.basis().dot(lay).abs() > 1.0 - 1e-6, "{}", plan.basis());
    let out = plan.retarget_clip(&clip).unwrap();
    let (hs, ht) = (find_humanoid(&source), find_humanoid(&target));
    for k in 0..20 {
        let time = k as f32 / 30.0;
        let (ps, pt) = (model_pose(&source, &clip, time), model_pose(&target, &out, time));
        for (bone, child) in
            [(R::LeftUpperArm, R::LeftLowerArm), (R::RightLowerLeg, R::RightFoot), (R::Neck, R::Head)]
        {
            let ds = lay * (ps[hs.get(child).unwrap()].1 - ps[hs.get(bone).unwrap()].1);
            let dt = pt[ht.get(child).unwrap()].1 - pt[ht.get(bone).unwrap()].1;
            assert!(angle(ds, dt) < 1e-4, "{} at {time}", bone.name());
        }
        let hips =
            |p: &[(Quat, Vec3)], h: &marrow_engine::retarget::HumanoidBones| p[h.get(R::Hips).unwrap()].1;
        assert!((lay * hips(&ps, &hs) - hips(&pt, &ht)).length() < 1e-5, "hips at {time}");
    }
}

/// The CMU capture (subject 131, trial 1), in metres.
fn cmu_capture() -> marrow_engine::gltf::ImportedScene {
    bvh::import(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/bvh/cmu_131_01.bvh"),
        &BvhOptions { scale: 0.056444, ..BvhOptions::default() },
    )
    .unwrap()
}

#[test]
fn real_motion_capture_plays_on_another_rig() {
    let scene = cmu_capture();
    let source = &scene.rigs[0].skeleton;
    let clip = &scene.animations[0].clips[0].clip;
    let target = humanoid("mixamo", mixamo, Shape { arms_down: true, ..Shape::default() });
    let map = auto_map(source, &target);
    let mapped: Vec<&str> = map.bones.iter().map(|p| p.target.as_str()).collect();
    assert_eq!(mapped.len(), 22, "{mapped:?}");
    let out = RetargetPlan::new(&map, source, &target).unwrap().retarget_clip(clip).unwrap();
    assert!(marrow_engine::clip::find_clip_fault(&out, &target).is_none());
    let frames = clip.channels()[0].rotation.as_ref().unwrap().len();
    assert_eq!(out.channels()[0].rotation.as_ref().unwrap().len(), frames);
    // The hips travel as far (relative to leg length) as the captured hips do.
    let hips = |c: &Clip, b: usize, t: f32| c.channels()[b].translation.as_ref().unwrap().sample(t).unwrap();
    let end = clip.duration();
    let (s0, s1) = (hips(clip, 0, 0.0), hips(clip, 0, end));
    let (t0, t1) = (hips(&out, 0, 0.0), hips(&out, 0, end));
    let ratio = (t1 - t0).length() / (s1 - s0).length();
    let plan = RetargetPlan::new(&map, source, &target).unwrap();
    assert!((ratio - plan.hip_ratio()).abs() < 1e-3 * plan.hip_ratio(), "{ratio} vs {}", plan.hip_ratio());
}

#[test]
fn a_map_that_does_not_fit_its_rigs_is_refused_by_name() {
    let source = humanoid("src", mixamo, Shape::default());
    let target = humanoid("dst", unreal, Shape::default());
    let pair = |t: &str, s: &str| BonePair { target: t.to_owned(), source: s.to_owned() };
    let map = |bones: Vec<BonePair>| RetargetMap {
        source: "src".into(),
        target: "dst".into(),
        bones,
        limb_ik: false,
    };
    let cases: Vec<(RetargetMap, &Skeleton, RetargetFault)> = vec![
        (
            map(vec![pair("pelvis", "mixamorig:Hips"), pair("tail", "mixamorig:Spine")]),
            &source,
            RetargetFault::UnknownBone {
                pair: 1,
                side: "target",
                skeleton: "dst".into(),
                bone: "tail".into(),
            },
        ),
        (
            map(vec![pair("pelvis", "Hips")]),
            &source,
            RetargetFault::UnknownBone {
                pair: 0,
                side: "source",
                skeleton: "src".into(),
                bone: "Hips".into(),
            },
        ),
        (
            map(vec![
                pair("pelvis", "mixamorig:Hips"),
                pair("head", "mixamorig:Head"),
                pair("pelvis", "mixamorig:Spine"),
            ]),
            &source,
            RetargetFault::TargetMappedTwice { bone: "pelvis".into(), first: 0, second: 2 },
        ),
        (map(vec![]), &source, RetargetFault::Empty { source_rig: "src".into(), target_rig: "dst".into() }),
        (
            map(vec![pair("pelvis", "mixamorig:Hips")]),
            &target,
            RetargetFault::OtherSkeleton { side: "source", expected: "src".into(), given: "dst".into() },
        ),
    ];
    for (map, src, fault) in cases {
        let err = RetargetPlan::new(&map, src, &target).unwrap_err();
        assert_eq!(err, fault);
        assert!(!err.to_string().is_empty());
    }
    let mut broken = source.clone();
    broken.bind_pose[3].translation.x = f32::NAN;
    assert_eq!(
        RetargetPlan::new(&auto_map(&source, &target), &broken, &target).unwrap_err(),
        RetargetFault::NonFiniteRest {
            side: "source",
            skeleton: "src".into(),
            bone: "mixamorig:Spine2".into()
        }
    );
    // A clip for a third rig is refused with the clip's own fault.
    let plan = RetargetPlan::new(&auto_map(&source, &target), &source, &target).unwrap();
    let other = motion(&target, 3);
    match plan.retarget_clip(&other) {
        Err(RetargetFault::Clip { clip, .. }) => assert_eq!(clip, "walk"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn unmapped_target_bones_keep_their_rest_and_eased_sources_are_keyed_every_frame() {
    let source = humanoid("src", mixamo, Shape::default());
    let target = humanoid("dst", unreal, Shape { arms_down: true, ..Shape::default() });
    let mut map = auto_map(&source, &target);
    assert_eq!(map.bones[9].target, "hand_l");
    map.set("hand_l", Some("mixamorig:RightHand"));
    assert_eq!(
        (map.bones[9].target.as_str(), map.source_of("hand_l")),
        ("hand_l", Some("mixamorig:RightHand")),
        "a re-mapped pair keeps its place"
    );
    map.set("hand_l", None);
    assert!(map.source_of("hand_l").is_none());
    let mut clip = motion_at(&source, 10, 10.0);
    let rot = clip.channels_mut()[7].rotation.as_mut().unwrap();
    rot.set_default_easing(marrow_engine::easing::Ease::from(marrow_engine::easing::Easing::InOutSine));
    let out = RetargetPlan::new(&map, &source, &target).unwrap().retarget_clip(&clip).unwrap();
    assert!(out.channels()[target.index_of("hand_l").unwrap()].is_empty());
    // 10 keys at 10 Hz span 0.9 s; the eased track makes every frame of 30 Hz a key as well.
    let keyed = out.channels()[target.index_of("upperarm_l").unwrap()].rotation.as_ref().unwrap();
    assert!(keyed.len() >= 28, "{}", keyed.len());
    for t in clip.channels()[7].rotation.as_ref().unwrap().times() {
        assert!(keyed.times().contains(t), "source key at {t} kept");
    }
    for i in 0..28 {
        assert!(keyed.times().contains(&(i as f32 / 30.0)), "frame {i}");
    }
    assert!(keyed.is_plain_linear());
}

#[test]
fn bones_outside_the_profile_map_by_name_a_namespace_aside() {
    let source = mocap_skeleton();
    let mut target = source.clone();
    target.name = "namespaced".into();
    for name in &mut target.bone_names {
        *name = format!("rig:{name}");
    }
    let map = auto_map(&source, &target);
    assert_eq!(map.bones.len(), source.bone_count(), "{map:?}");
    for pair in &map.bones {
        assert_eq!(pair.target, format!("rig:{}", pair.source));
    }
}

#[test]
fn a_rig_whose_names_say_nothing_takes_its_axes_and_height_through_the_map() {
    let source = humanoid("yup", mixamo, Shape::default());
    let mut target = humanoid("zup", unreal, Shape { scale: 0.5, ..Shape::default() });
    let lay = Quat::from_rotation_x(90f32.to_radians());
    target.bind_pose[0].rotation = lay;
    target.bind_pose[0].translation = lay * target.bind_pose[0].translation;
    let mut map = auto_map(&source, &target);
    // The target's bones renamed to numbers, the map written by hand with them.
    let old = target.bone_names.clone();
    for (i, n) in target.bone_names.iter_mut().enumerate() {
        *n = format!("joint_{i}");
    }
    assert!(find_humanoid(&target).get(R::Hips).is_none(), "no role is recognisable by name");
    for p in &mut map.bones {
        p.target = format!("joint_{}", old.iter().position(|n| *n == p.target).unwrap());
    }
    let plan = RetargetPlan::new(&map, &source, &target).unwrap();
    assert!(plan.basis().dot(lay).abs() > 1.0 - 1e-6, "{}", plan.basis());
    assert!((plan.hip_ratio() - 0.5).abs() < 1e-6, "{}", plan.hip_ratio());
}

#[test]
fn the_mocap_samples_capture_on_cesium_man_points_every_limb_as_the_capture_does() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../projects/mocap");
    let project = marrow_engine::project::Project::load(&root).unwrap();
    let library = marrow_engine::project::Library::load(&project, &root).unwrap();
    let map = &project.retargets["retargets/cmu_131_01_to_Armature.retarget.ron"];
    let source = library.skeleton_named(&map.source).unwrap().1.clone();
    let target = library.skeleton_named(&map.target).unwrap().1.clone();
    let capture = library.clips("assets/cmu_131_01.bvh#cmu_131_01")[0].clone();
    let plan = RetargetPlan::new(map, &source, &target).unwrap();
    let out = plan.retarget_clip(&capture).unwrap();
    // The sample's clip file is this retarget's output, as saved.
    let saved = &project.clips["clips/cmu_131_01_Armature.clip.ron"].clip;
    assert_eq!(saved.channels().len(), out.channels().len());
    assert_eq!(saved.key_count(), out.key_count());
    let chains = [
        ("leg_joint_L_1", "leg_joint_L_2"),
        ("leg_joint_L_2", "leg_joint_L_3"),
        ("leg_joint_R_2", "leg_joint_R_3"),
        ("Skeleton_arm_joint_L__4_", "Skeleton_arm_joint_L__3_"),
        ("Skeleton_arm_joint_L__3_", "Skeleton_arm_joint_L__2_"),
        ("Skeleton_arm_joint_R", "Skeleton_arm_joint_R__2_"),
        ("Skeleton_arm_joint_R__2_", "Skeleton_arm_joint_R__3_"),
    ];
    // (Not the neck: the capture's `Neck` between `lowerneck` and `Head` is unmapped, so the
    // direction from one to the other bends with it in the capture and not on CesiumMan.)
    let b = |sk: &Skeleton, n: &str| sk.index_of(n).unwrap();
    for frame in [0usize, 200, 500, 900] {
        let time = frame as f32 / 120.0;
        let (ps, pt) = (model_pose(&source, &capture, time), model_pose(&target, &out, time));
        for (bone, child) in chains {
            let (sb, sc) =
                (b(&source, map.source_of(bone).unwrap()), b(&source, map.source_of(child).unwrap()));
            let ds = plan.basis() * (ps[sc].1 - ps[sb].1);
            let dt = pt[b(&target, child)].1 - pt[b(&target, bone)].1;
            assert!(angle(ds, dt) < 1e-3, "{bone} at frame {frame}: {} rad", angle(ds, dt));
        }
    }
}

#[test]
fn limb_ik_puts_the_figures_feet_where_the_captured_feet_are_scaled_and_keeps_their_turn() {
    let scene = cmu_capture();
    let source = &scene.rigs[0].skeleton;
    let clip = &scene.animations[0].clips[0].clip;
    // The locomotion sample's figure: legs proportioned unlike the capture's.
    let target = marrow_engine::project::locomotion::figure_skeleton();
    let mut map = auto_map(source, &target);
    let plain = RetargetPlan::new(&map, source, &target).unwrap();
    map.limb_ik = true;
    let plan = RetargetPlan::new(&map, source, &target).unwrap();
    let (fixed, loose) = (plan.retarget_clip(clip).unwrap(), plain.retarget_clip(clip).unwrap());
    assert!(marrow_engine::clip::find_clip_fault(&fixed, &target).is_none());
    let times =
        fixed.channels()[target.index_of("thigh_l").unwrap()].rotation.as_ref().unwrap().times().to_vec();
    let (mut placed, mut loose_error) = (0usize, 0.0f32);
    for &t in times.iter().step_by(3) {
        let (src, on, off) =
            (model_pose(source, clip, t), model_pose(&target, &fixed, t), model_pose(&target, &loose, t));
        for (hip, ankle, captured) in
            [("thigh_l", "foot_l", "LeftAnkle"), ("thigh_r", "foot_r", "RightAnkle")]
        {
            let [h, a, c] =
                [target.index_of(hip), target.index_of(ankle), source.index_of(captured)].map(Option::unwrap);
            let goal = plan.basis() * src[c].1 * plan.hip_ratio();
            loose_error = loose_error.max(off[a].1.distance(goal));
            // Where the goal is within the leg's reach (not at full stretch), the ankle is on it.
            let reach = 0.9 * 0.97;
            if on[h].1.distance(goal) <= reach {
                assert!(
                    on[a].1.distance(goal) < 2e-3,
                    "t {t} {ankle}: at {}, the captured ankle scaled {goal}",
                    on[a].1
                );
                placed += 1;
            } else {
                // Beyond it, the leg reaches straight toward it.
                let off_line = (on[a].1 - on[h].1).angle_between(goal - on[h].1);
                assert!(
                    off_line < 2e-3,
                    "t {t} {ankle}: the stretched leg points {off_line} rad off the goal"
                );
            }
            // The foot keeps the turn the rotations gave it (its axes within 0.1 degree).
            let turned = [Vec3::X, Vec3::Y, Vec3::Z].map(|v| (on[a].0 * v).angle_between(off[a].0 * v));
            assert!(turned.iter().all(|&d| d < 2e-3), "t {t} {ankle}: the foot turned {turned:?}");
        }
    }
    // (The figure's legs are short for the capture's hip height: its feet reach about half the time.)
    let total = 2 * times.len().div_ceil(3);
    assert!(placed * 3 > total, "{placed} of {total} placed");
    assert!(loose_error > 0.02, "without IK the feet miss the captured ones by {loose_error}");
    // The flag is saved in the map's file, and only when on.
    let text = marrow_engine::project::retarget_file::retarget_to_string(&map);
    assert!(text.contains("limb_ik: true"), "{text}");
    let back =
        marrow_engine::project::retarget_file::retarget_from_str(&text, Path::new("m.retarget.ron")).unwrap();
    assert_eq!(back, map);
    map.limb_ik = false;
    assert!(!marrow_engine::project::retarget_file::retarget_to_string(&map).contains("limb_ik"));
}

#[test]
fn a_rig_whose_bone_names_say_nothing_has_the_roles_of_the_bones_its_map_gives_it() {
    use marrow_engine::retarget::mapped_roles;
    // The capture rig, and the same rig with every bone renamed `joint_N` (CesiumMan's
    // `Skeleton_torso_joint_1` kind of names): nothing to find by name.
    let source = mocap_skeleton();
    let bones = (0..source.bone_count())
        .map(|i| (format!("joint_{i}"), source.parents[i], source.bind_pose[i]))
        .collect();
    let target = Skeleton::from_bind_pose("unnamed", bones).unwrap();
    let by_name = find_humanoid(&source);
    assert!(find_humanoid(&target).get(R::Hips).is_none(), "no role found by name");
    assert!(!find_humanoid(&target).missing_required().is_empty());
    let pairs = |n: usize| {
        (0..n)
            .map(|i| BonePair { target: format!("joint_{i}"), source: source.bone_names[i].clone() })
            .collect::<Vec<_>>()
    };
    let map = RetargetMap {
        source: source.name.clone(),
        target: target.name.clone(),
        bones: pairs(source.bone_count()),
        limb_ik: false,
    };
    let (from, to) = mapped_roles(&map, &source, &target);
    for role in R::ALL {
        assert_eq!(to.get(role), by_name.get(role), "{role:?}: the target bone is the one mapped from it");
        assert_eq!(from.get(role), by_name.get(role), "{role:?}: the source keeps its own");
    }
    assert!(to.missing_required().is_empty(), "{:?}", to.missing_required());
    // A pair naming a bone neither rig has is passed over; an unmapped bone gets no role.
    let mut partial = map.clone();
    partial.bones = pairs(1);
    partial.bones.push(BonePair { target: "no such bone".into(), source: "Hips".into() });
    let (_, to) = mapped_roles(&partial, &source, &target);
    let hips = by_name.get(R::Hips).unwrap();
    assert_eq!(to.get(R::Hips), (hips == 0).then_some(0));
    assert!(to.get(R::Head).is_none());
}
