//! Tracks (insertion, endpoints, interpolation values) and the skeleton/clip validity tables.

use glam::{Mat4, Quat, Vec3};
use marrow_engine::clip::{BoneChannels, Channel, Clip, ClipFault, find_clip_fault};
use marrow_engine::easing::{Ease, Easing};
use marrow_engine::math::Transform;
use marrow_engine::skeleton::{MAX_BONES, NO_PARENT, Skeleton, SkeletonFault, find_skeleton_fault};
use marrow_engine::track::{Interpolation, MIN_SEGMENT, Track, TrackFault};

fn lin(times: &[f32], values: &[f32]) -> Track<f32> {
    Track::from_keys(Interpolation::Linear, times.to_vec(), values.to_vec()).unwrap()
}

#[test]
fn insertion_keeps_time_order() {
    let mut t: Track<f32> = Track::new(Interpolation::Linear);
    for (time, v) in [(2.0, 20.0), (0.0, 0.0), (1.0, 10.0), (3.0, 30.0), (0.5, 5.0)] {
        t.insert(time, v);
    }
    assert_eq!(t.times(), &[0.0, 0.5, 1.0, 2.0, 3.0]);
    assert_eq!(t.values(), &[0.0, 5.0, 10.0, 20.0, 30.0]);
    assert_eq!(t.key_easings().len(), 5);
}

#[test]
fn insert_at_an_existing_time_replaces_the_key() {
    let mut t = lin(&[0.0, 1.0, 2.0], &[0.0, 1.0, 2.0]);
    t.set_key_easing(1, Some(Ease::Named(Easing::InQuad)));
    let i = t.insert(1.0, 7.0);
    assert_eq!(i, 1);
    assert_eq!(t.len(), 3);
    assert_eq!(t.values(), &[0.0, 7.0, 2.0]);
    // The replaced key keeps its segment easing.
    assert_eq!(t.segment_easing(1), Ease::Named(Easing::InQuad));
}

#[test]
fn before_first_and_after_last_key_hold_the_end_values() {
    let t = lin(&[1.0, 2.0], &[10.0, 20.0]);
    assert_eq!(t.sample(-5.0), Some(10.0));
    assert_eq!(t.sample(1.0), Some(10.0));
    assert_eq!(t.sample(2.0), Some(20.0));
    assert_eq!(t.sample(100.0), Some(20.0));
    let empty: Track<f32> = Track::new(Interpolation::Linear);
    assert_eq!(empty.sample(0.0), None);
}

#[test]
fn one_key_track_is_constant() {
    let t = lin(&[0.7], &[3.0]);
    for time in [-1.0, 0.0, 0.7, 5.0] {
        assert_eq!(t.sample(time), Some(3.0));
    }
}

#[test]
fn interval_below_epsilon_samples_the_right_value() {
    let eps = MIN_SEGMENT * 0.25;
    let t = lin(&[0.0, 1.0, 1.0 + eps, 2.0], &[0.0, 1.0, 5.0, 5.0]);
    assert_eq!(t.sample(1.0 + eps * 0.5), Some(5.0));
}

#[test]
fn step_holds_the_left_key() {
    let t = Track::from_keys(Interpolation::Step, vec![0.0, 1.0, 2.0], vec![1.0f32, 2.0, 3.0]).unwrap();
    assert_eq!(t.sample(0.0), Some(1.0));
    assert_eq!(t.sample(0.999), Some(1.0));
    assert_eq!(t.sample(1.0), Some(2.0));
    assert_eq!(t.sample(1.5), Some(2.0));
    assert_eq!(t.sample(2.0), Some(3.0));
}

#[test]
fn linear_values_are_exact() {
    let t = lin(&[0.0, 2.0, 4.0], &[0.0, 10.0, 0.0]);
    assert_eq!(t.sample(0.5), Some(2.5));
    assert_eq!(t.sample(1.0), Some(5.0));
    assert_eq!(t.sample(3.0), Some(5.0));
    let v =
        Track::from_keys(Interpolation::Linear, vec![0.0, 1.0], vec![Vec3::ZERO, Vec3::new(2.0, 4.0, -8.0)])
            .unwrap();
    assert_eq!(v.sample(0.25), Some(Vec3::new(0.5, 1.0, -2.0)));
}

#[test]
fn eased_segments_use_the_key_easing_then_the_track_default() {
    let mut t = lin(&[0.0, 1.0, 2.0], &[0.0, 1.0, 2.0]);
    t.set_default_easing(Ease::Named(Easing::InQuad));
    t.set_key_easing(1, Some(Ease::Named(Easing::OutQuad)));
    // Segment 0 uses the default (InQuad): 0.5 -> 0.25.
    assert_eq!(t.sample(0.5), Some(0.25));
    // Segment 1 uses its own (OutQuad): 0.5 -> 0.75.
    assert_eq!(t.sample(1.5), Some(1.75));
    // Clearing the override falls back to the default.
    t.set_key_easing(1, None);
    assert_eq!(t.sample(1.5), Some(1.25));
}

#[test]
fn cubicspline_values_match_the_gltf_hermite() {
    // Keys (t, v): (0, 0) out-tangent 1; (2, 1) in-tangent 0.
    let t =
        Track::cubic_from_keys(vec![0.0, 2.0], vec![0.0f32, 0.0], vec![0.0, 1.0], vec![1.0, 0.0]).unwrap();
    // s = 0.5, dt = 2: h00 = 0.5, h10 = 0.125, h01 = 0.5, h11 = -0.125
    // p = 0.5*0 + 0.125*2*1 + 0.5*1 + (-0.125)*2*0 = 0.75
    assert_eq!(t.sample(1.0), Some(0.75));
    // s = 0.25: h10 = 0.140625, h01 = 0.15625 -> 0.140625*2 + 0.15625 = 0.4375
    assert_eq!(t.sample(0.5), Some(0.4375));
    assert_eq!(t.sample(2.0), Some(1.0));
}

#[test]
fn quaternion_linear_takes_the_shortest_path_and_is_normalized() {
    let a = Quat::from_rotation_z(0.0);
    // The same rotation as +90 degrees about Z, stored with the opposite sign.
    let b = -Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    let t = Track::from_keys(Interpolation::Linear, vec![0.0, 1.0], vec![a, b]).unwrap();
    let mid = t.sample(0.5).unwrap();
    let want = Quat::from_rotation_z(std::f32::consts::FRAC_PI_4);
    assert!(mid.abs_diff_eq(want, 1e-6) || mid.abs_diff_eq(-want, 1e-6), "{mid:?}");
    assert!((mid.length() - 1.0).abs() < 1e-6);
    // Exact slerp at a quarter: 22.5 degrees.
    let q = t.sample(0.25).unwrap();
    let want = Quat::from_rotation_z(std::f32::consts::FRAC_PI_8);
    assert!(q.abs_diff_eq(want, 1e-6) || q.abs_diff_eq(-want, 1e-6), "{q:?}");
    // Wide angles (beyond the series range) are exact too.
    let wide = Track::from_keys(
        Interpolation::Linear,
        vec![0.0, 1.0],
        vec![Quat::IDENTITY, Quat::from_rotation_x(3.0)],
    )
    .unwrap();
    let q = wide.sample(1.0 / 3.0).unwrap();
    assert!(q.abs_diff_eq(Quat::from_rotation_x(1.0), 1e-6), "{q:?}");
}

#[test]
fn quaternion_cubicspline_is_normalized() {
    let q0 = Quat::IDENTITY;
    let q1 = Quat::from_rotation_y(1.0);
    let z = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
    let t = Track::cubic_from_keys(vec![0.0, 1.0], vec![z, z], vec![q0, q1], vec![z, z]).unwrap();
    let q = t.sample(0.5).unwrap();
    assert!((q.length() - 1.0).abs() < 1e-6);
    // Zero tangents: the Hermite midpoint is (q0 + q1) / 2, normalized.
    let want = Quat::from_vec4((glam::Vec4::from(q0) + glam::Vec4::from(q1)) * 0.5).normalize();
    assert!(q.abs_diff_eq(want, 1e-6));
}

#[test]
fn forward_cursor_sampling_agrees_with_binary_search() {
    let times: Vec<f32> = (0..50).map(|i| i as f32 * 0.1).collect();
    let values: Vec<f32> = (0..50).map(|i| ((i * 7) % 11) as f32).collect();
    let t = Track::from_keys(Interpolation::Linear, times, values).unwrap();
    let mut cursor = 0;
    for i in 0..600 {
        let time = (i as f32 * 0.013) % 5.2 - 0.1;
        assert_eq!(t.sample_with_cursor(time, &mut cursor), t.sample(time), "t = {time}");
    }
}

#[test]
fn track_constructor_rejects_bad_keys() {
    assert_eq!(
        Track::from_keys(Interpolation::Linear, vec![0.0, 1.0], vec![1.0f32]),
        Err(TrackFault::NotParallel { times: 2, values: 1, tangents: 0 })
    );
    assert_eq!(
        Track::from_keys(Interpolation::Linear, vec![0.0, 2.0, 1.0], vec![1.0f32, 2.0, 3.0]),
        Err(TrackFault::Unsorted { index: 2, time: 1.0, previous: 2.0 })
    );
    assert_eq!(
        Track::from_keys(Interpolation::Linear, vec![0.0, 1.0], vec![1.0f32, f32::NAN]),
        Err(TrackFault::NonFiniteValue { index: 1, time: 1.0 })
    );
    assert!(matches!(
        Track::from_keys(Interpolation::Linear, vec![f32::INFINITY], vec![1.0f32]),
        Err(TrackFault::NonFiniteTime { index: 0, .. })
    ));
}

// ---------------------------------------------------------------------------------------------
// Validity tables

/// One row of a validity table: what is wrong, the broken input, and a check of the fault found.
type Row<T, F> = (&'static str, T, fn(&F) -> bool);

fn bone(name: &str, parent: u16) -> (String, u16, Transform) {
    (name.to_owned(), parent, Transform::from_translation(Vec3::Y))
}

fn three_bones() -> Skeleton {
    Skeleton::from_bind_pose("rig", vec![bone("root", NO_PARENT), bone("a", 0), bone("b", 1)]).unwrap()
}

#[test]
fn skeleton_fault_table() {
    let good = three_bones();
    assert_eq!(find_skeleton_fault(&good), None);

    let mut parent_after = good.clone();
    parent_after.parents[1] = 2;
    let mut parent_self = good.clone();
    parent_self.parents[2] = 2;
    let mut duplicate = good.clone();
    duplicate.bone_names[2] = "a".into();
    let mut too_many = good.clone();
    let n = MAX_BONES + 1;
    too_many.bone_names = (0..n).map(|i| format!("b{i}")).collect();
    too_many.parents = (0..n).map(|i| if i == 0 { NO_PARENT } else { (i - 1) as u16 }).collect();
    too_many.bind_pose = vec![Transform::IDENTITY; n];
    too_many.inverse_bind = vec![Mat4::IDENTITY; n];
    let mut not_parallel = good.clone();
    not_parallel.parents.pop();
    let mut nan_bind = good.clone();
    nan_bind.bind_pose[1].translation.x = f32::NAN;

    let table: Vec<Row<Skeleton, SkeletonFault>> = vec![
        ("parent after child", parent_after, |f| {
            matches!(f, SkeletonFault::ParentNotBefore { bone: 1, parent: 2, .. })
        }),
        ("parent is self", parent_self, |f| {
            matches!(f, SkeletonFault::ParentNotBefore { bone: 2, parent: 2, .. })
        }),
        (
            "duplicate names",
            duplicate,
            |f| matches!(f, SkeletonFault::DuplicateName { name, first: 1, second: 2, .. } if name == "a"),
        ),
        (
            "too many bones",
            too_many,
            |f| matches!(f, SkeletonFault::TooManyBones { count, .. } if *count == MAX_BONES + 1),
        ),
        ("arrays not parallel", not_parallel, |f| matches!(f, SkeletonFault::NotParallel { parents: 2, .. })),
        ("non-finite bind", nan_bind, |f| matches!(f, SkeletonFault::NonFiniteBind { bone: 1, .. })),
    ];
    for (what, sk, expect) in table {
        let fault = find_skeleton_fault(&sk).unwrap_or_else(|| panic!("{what}: no fault found"));
        assert!(expect(&fault), "{what}: unexpected fault {fault}");
        // The message names the skeleton.
        assert!(fault.to_string().contains("\"rig\""), "{what}: {fault}");
    }
}

fn good_clip(sk: &Skeleton) -> Clip {
    let mut c = Clip::new("walk", sk);
    c.channels_mut()[1].rotation = Some(
        Track::from_keys(
            Interpolation::Linear,
            vec![0.0, 1.0],
            vec![Quat::IDENTITY, Quat::from_rotation_x(1.0)],
        )
        .unwrap(),
    );
    c.add_marker("step", 0.5);
    c
}

#[test]
fn clip_fault_table() {
    let sk = three_bones();
    let good = good_clip(&sk);
    assert_eq!(find_clip_fault(&good, &sk), None);

    let mut other_rig = good.clone();
    other_rig.skeleton = "dragon".into();
    let mut not_parallel = good.clone();
    not_parallel.channels_mut().push(BoneChannels::default());
    let mut unsorted = good.clone();
    unsorted.channels_mut()[2].translation = Some(
        Track::from_keys_unchecked(Interpolation::Linear, vec![0.0, 2.0, 1.0], vec![Vec3::ZERO; 3]).unwrap(),
    );
    let mut nan_key = good.clone();
    nan_key.channels_mut()[0].scale = Some(
        Track::from_keys_unchecked(Interpolation::Linear, vec![0.0, 1.0], vec![Vec3::ONE, Vec3::NAN])
            .unwrap(),
    );
    let mut nan_time = good.clone();
    nan_time.channels_mut()[0].scale = Some(
        Track::from_keys_unchecked(Interpolation::Step, vec![0.0, f32::NAN], vec![Vec3::ONE, Vec3::ONE])
            .unwrap(),
    );
    let mut marker_outside = good.clone();
    marker_outside.add_marker("late", 1.5);
    let mut marker_negative = good.clone();
    marker_negative.add_marker("early", -0.1);
    let mut bad_length = good.clone();
    bad_length.length = f32::NAN;

    let table: Vec<Row<Clip, ClipFault>> = vec![
        (
            "other rig",
            other_rig,
            |f| matches!(f, ClipFault::OtherRig { clip_skeleton, .. } if clip_skeleton == "dragon"),
        ),
        ("table not parallel", not_parallel, |f| {
            matches!(f, ClipFault::NotParallel { channels: 4, bones: 3, .. })
        }),
        ("unsorted keys", unsorted, |f| {
            matches!(
                f,
                ClipFault::Track {
                    bone: 2,
                    channel: Channel::Translation,
                    fault: TrackFault::Unsorted { index: 2, .. },
                    ..
                }
            )
        }),
        ("non-finite value", nan_key, |f| {
            matches!(
                f,
                ClipFault::Track {
                    bone: 0,
                    channel: Channel::Scale,
                    fault: TrackFault::NonFiniteValue { index: 1, .. },
                    ..
                }
            )
        }),
        ("non-finite time", nan_time, |f| {
            matches!(f, ClipFault::Track { bone: 0, fault: TrackFault::NonFiniteTime { index: 1, .. }, .. })
        }),
        (
            "marker after the end",
            marker_outside,
            |f| matches!(f, ClipFault::MarkerOutside { marker, .. } if marker == "late"),
        ),
        (
            "marker before 0",
            marker_negative,
            |f| matches!(f, ClipFault::MarkerOutside { marker, .. } if marker == "early"),
        ),
        ("bad length", bad_length, |f| matches!(f, ClipFault::BadLength { .. })),
    ];
    for (what, clip, expect) in table {
        let fault = find_clip_fault(&clip, &sk).unwrap_or_else(|| panic!("{what}: no fault found"));
        assert!(expect(&fault), "{what}: unexpected fault {fault}");
        assert!(fault.to_string().contains("\"walk\""), "{what}: message does not name the clip: {fault}");
    }
}

#[test]
fn clip_duration_is_derived_from_keys_and_length() {
    let sk = three_bones();
    let mut c = good_clip(&sk);
    assert_eq!(c.duration(), 1.0);
    c.length = 3.0;
    assert_eq!(c.duration(), 3.0);
    c.length = 0.5;
    assert_eq!(c.duration(), 1.0);
}

#[test]
fn markers_are_kept_sorted() {
    let sk = three_bones();
    let mut c = Clip::new("c", &sk);
    c.length = 2.0;
    c.add_marker("b", 1.0);
    c.add_marker("a", 0.2);
    c.add_marker("c", 1.5);
    c.add_marker("b2", 1.0);
    let names: Vec<&str> = c.markers().iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "b2", "c"]);
}

#[test]
fn tiny_and_huge_times_read_in_exponent_form_in_messages() {
    use marrow_engine::math::Num;
    assert_eq!(Num(1e-45).to_string(), "1e-45");
    assert_eq!(Num(3.0e38).to_string(), "3e38");
    assert_eq!(Num(0.5).to_string(), "0.5");
    assert_eq!(Num(0.0).to_string(), "0");
    assert_eq!(Num(f32::NAN).to_string(), "NaN");
    let t = marrow_engine::track::Track::from_keys(
        marrow_engine::track::Interpolation::Linear,
        vec![0.0, 1e-45, 1e-45],
        vec![0.0f32, 1.0, 2.0],
    );
    let e = t.map(|_| ()).expect_err("equal times are refused").to_string();
    assert!(e.contains("t = 1e-45") && e.len() < 120, "{e}");
}
