//! Key reduction (`Clip::simplify`): every bone's shell vertices stay within the tolerance in
//! model space (measured here independently of the reducer, at every key time and three times
//! between), keys fall as the tolerance grows, tracks keep their own key times, motion-capture
//! shaped clips keep the promise at every tolerance, and the figures for the sample models (keys
//! kept, worst error reached) are measured and stated.

use crate::support;

use glam::{Mat4, Quat, Vec3};
use marrow_engine::clip::Clip;
use marrow_engine::gltf::import;
use marrow_engine::pose::{LocalToModelJob, SamplingContext, SamplingJob};
use marrow_engine::skeleton::{NO_PARENT, Skeleton};
use marrow_engine::synthetic::{chain_skeleton, dense_clip, mocap_like_clip, mocap_skeleton};
use marrow_engine::track::{Interpolation, Track};
use proptest::prelude::*;
use support::gltf_dir;

/// The worst distance between the origin and three shell vertices (`shell` along each local
/// axis) of every bone placed by `a` and by `b`, at every key time of `a` and three evenly
/// between each two: computed here with the jobs and `Mat4::transform_point3`, not with the
/// reducer's own measurement.
fn independent_worst_error(sk: &Skeleton, a: &Clip, b: &Clip, shell: f32) -> (f32, usize, f32) {
    let times = support::four_times_key_rate(a);
    let n = sk.bone_count();
    let pose = |clip: &Clip, time: f32| {
        let (mut local, mut model) = (sk.bind_pose.clone(), vec![Mat4::IDENTITY; n]);
        let mut ctx = SamplingContext::new(n);
        SamplingJob { clip, bind_pose: &sk.bind_pose, time, context: &mut ctx, output: &mut local }
            .run()
            .unwrap();
        LocalToModelJob { parents: &sk.parents, local: &local, adjusts: &[], output: &mut model }
            .run()
            .unwrap();
        model
    };
    let vertices = [Vec3::ZERO, Vec3::X * shell, Vec3::Y * shell, Vec3::Z * shell];
    let mut worst = (0.0f32, 0, 0.0);
    for &t in &times {
        let (pa, pb) = (pose(a, t), pose(b, t));
        for bone in 0..n {
            for v in vertices {
                let e = pa[bone].transform_point3(v).distance(pb[bone].transform_point3(v));
                if e > worst.0 {
                    worst = (e, bone, t);
                }
            }
        }
    }
    worst
}

#[test]
fn a_capture_shaped_clip_keeps_the_promise_at_every_tolerance() {
    // The shape of real motion capture (the CMU rig's 31 joints, zero-length joints included,
    // 120 Hz keys with 0.3 degree jitter and quaternion sign flips): the reported error stayed at
    // 9.3e-4 for every tolerance from 1e-5 to 1e-3 on a CMU walk before rotations were measured
    // by their chord (2 acos(|a.b|) cannot see angles under about 7e-4 rad in f32).
    let sk = mocap_skeleton();
    let clip = mocap_like_clip(&sk, "walk", 240, 120.0, 7);
    let mut last = usize::MAX;
    for tol in [1e-5f32, 1e-4, 1e-3, 1e-2] {
        let (reduced, r) = clip.simplify(&sk, tol);
        let (true_worst, bone, time) = independent_worst_error(&sk, &clip, &reduced, r.shell_distance);
        eprintln!(
            "capture-shaped 31 bones x 240 keys, tolerance {tol:e}: {} of {} keys, reported {:e} at {:?} t={}, \
             independent {true_worst:e} at bone {bone} t={time}, {} passes",
            r.keys_after, r.keys_before, r.max_error, r.worst_bone, r.worst_time, r.passes
        );
        assert!(r.max_error <= tol, "tolerance {tol}: reported {r:?}");
        assert!(
            true_worst <= tol * 1.0001 + 1e-7,
            "tolerance {tol}: the true worst error is {true_worst} at bone {bone}, t = {time}"
        );
        assert!(
            (true_worst - r.max_error).abs() <= 1e-6 + 1e-3 * true_worst,
            "the report ({}) is not the true worst error ({true_worst})",
            r.max_error
        );
        assert!(r.keys_after <= last, "more tolerance, no more keys");
        last = r.keys_after;
        assert_eq!(r.keys_per_bone.iter().sum::<usize>(), r.keys_after);
    }
    // At a tolerance above the capture noise keys go (jitter of 0.3 degrees is signal at 1e-4).
    assert!(
        last * 3
            < clip.channels().iter().map(|c| c.rotation.as_ref().map_or(0, |t| t.len())).sum::<usize>() * 2
    );
}

/// A random chain rig (some bones of zero length) and a noisy clip on it: LINEAR rotations with
/// jitter and sign flips, a root translation, some scale.
fn random_rig_and_clip(seed: u64, bones: usize, keys: usize, jitter: f32) -> (Skeleton, Clip) {
    let mut state = seed | 1;
    let mut rnd = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    };
    let rig: Vec<(String, u16, marrow_engine::math::Transform)> = (0..bones)
        .map(|i| {
            let parent =
                if i == 0 { NO_PARENT } else { ((rnd() * 0.5 + 0.5) * i as f32).min(i as f32 - 1.0) as u16 };
            let len = if rnd() > 0.6 { 0.0 } else { 0.05 + 0.3 * (rnd() * 0.5 + 0.5) };
            let t =
                marrow_engine::math::Transform::from_translation(Vec3::new(rnd() * 0.2, len, rnd() * 0.1));
            (format!("b{i}"), parent, t)
        })
        .collect();
    let sk = Skeleton::from_bind_pose("random", rig).unwrap();
    let times: Vec<f32> = (0..keys).map(|k| k as f32 / 60.0).collect();
    let mut clip = Clip::new("noisy", &sk);
    for (b, ch) in clip.channels_mut().iter_mut().enumerate() {
        let (w, p) = (1.0 + rnd().abs() * 6.0, rnd() * 3.0);
        let r: Vec<Quat> = times
            .iter()
            .enumerate()
            .map(|(k, &t)| {
                let q = Quat::from_euler(
                    glam::EulerRot::XYZ,
                    (w * t + p).sin() + jitter * rnd(),
                    0.3 * (w * t).cos() + jitter * rnd(),
                    jitter * rnd(),
                );
                if (b + k) % 3 == 0 { -q } else { q }
            })
            .collect();
        ch.rotation = Track::from_keys(Interpolation::Linear, times.clone(), r).ok();
        if b == 0 {
            let t: Vec<Vec3> =
                times.iter().map(|&t| Vec3::new(t, 0.9 + 0.02 * (9.0 * t).sin(), jitter * rnd())).collect();
            ch.translation = Track::from_keys(Interpolation::Linear, times.clone(), t).ok();
        }
        if b % 4 == 2 {
            let s: Vec<Vec3> =
                times.iter().map(|&t| Vec3::splat(1.0 + 0.1 * (w * t).sin() + jitter * rnd())).collect();
            ch.scale = Track::from_keys(Interpolation::Linear, times.clone(), s).ok();
        }
    }
    (sk, clip)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn the_reported_worst_error_is_the_true_one_and_within_the_tolerance(
        seed in any::<u64>(),
        bones in 2usize..14,
        keys in 3usize..60,
        jitter_exp in -5.0f32..-1.0,
        tol_exp in -5.0f32..-1.5,
    ) {
        let (sk, clip) = random_rig_and_clip(seed, bones, keys, 10f32.powf(jitter_exp));
        let tol = 10f32.powf(tol_exp);
        let (reduced, r) = clip.simplify(&sk, tol);
        let (true_worst, bone, time) = independent_worst_error(&sk, &clip, &reduced, r.shell_distance);
        prop_assert!(r.max_error <= tol, "reported {:?} over {}", r, tol);
        prop_assert!(true_worst <= tol * 1.0001 + 1e-7, "true worst {} at bone {} t={} over {}", true_worst, bone, time, tol);
        prop_assert!((true_worst - r.max_error).abs() <= 1e-6 + 1e-3 * true_worst, "reported {} true {}", r.max_error, true_worst);
    }
}

#[test]
fn a_dense_clip_reduces_within_the_tolerance_and_more_as_it_grows() {
    let sk = chain_skeleton(64);
    let clip = dense_clip(&sk, "walk", 2.0, 30.0, 0);
    let mut last_keys = usize::MAX;
    for tol in [0.0005f32, 0.002, 0.01] {
        let (reduced, r) = clip.simplify(&sk, tol);
        assert!(r.max_error <= tol, "tolerance {tol}: error {}", r.max_error);
        assert!(r.keys_after < r.keys_before, "{r:?}");
        assert!(r.keys_after <= last_keys, "more tolerance, no more keys: {r:?}");
        last_keys = r.keys_after;
        assert_eq!(reduced.duration(), clip.duration(), "the ends are kept");
        eprintln!(
            "synthetic 64 bones, tolerance {tol}: {} of {} keys, error {}",
            r.keys_after, r.keys_before, r.max_error
        );
    }
    // Tracks keep their own key times: the reduced clip's tracks no longer all share them.
    let (reduced, _) = clip.simplify(&sk, 0.01);
    let times: Vec<Vec<f32>> = reduced
        .channels()
        .iter()
        .flat_map(|c| [c.translation.as_ref(), c.scale.as_ref()])
        .flatten()
        .map(|t| t.times().to_vec())
        .collect();
    assert!(times.iter().any(|t| t != &times[0]), "every track kept the same times");
    // Zero tolerance keeps what it cannot drop exactly.
    let (_, exact) = clip.simplify(&sk, 0.0);
    assert!(exact.max_error <= 1e-5, "{exact:?}");
}

#[test]
fn cesium_man_and_rigged_figure_keys_kept_and_error_reached() {
    for (model, tol) in [("CesiumMan/CesiumMan.glb", 0.001f32), ("RiggedFigure/RiggedFigure.glb", 0.001)] {
        let scene = import(gltf_dir().join(model)).unwrap();
        for rc in &scene.animations[0].clips {
            let sk = &scene.rigs[rc.rig].skeleton;
            let (_, r) = rc.clip.simplify(sk, tol);
            eprintln!(
                "{model}: tolerance {tol}: {} of {} keys kept ({:.0}%), largest bone-origin error {:.6}",
                r.keys_after,
                r.keys_before,
                100.0 * r.keys_after as f32 / r.keys_before as f32,
                r.max_error
            );
            assert!(r.max_error <= tol, "{model}: {r:?}");
            assert!(r.keys_after <= r.keys_before);
        }
    }
}

#[test]
fn clip_bytes_count_the_keys_and_fall_with_reduction() {
    use marrow_engine::track::{Interpolation, Track};
    let t = Track::from_keys(Interpolation::Linear, vec![0.0, 1.0], vec![glam::Vec3::ZERO, glam::Vec3::ONE])
        .unwrap();
    let easing = size_of::<Option<marrow_engine::easing::Ease>>();
    assert_eq!(t.bytes(), 2 * 4 + 2 * 12 + 2 * easing, "two times, two Vec3 values, two easing slots");
    let sk = chain_skeleton(64);
    let clip = dense_clip(&sk, "walk", 2.0, 30.0, 0);
    let (reduced, _) = clip.simplify(&sk, 0.03);
    assert!(reduced.bytes() * 3 < clip.bytes(), "{} vs {}", reduced.bytes(), clip.bytes());
    assert!(clip.compiled().bytes() > 0 && reduced.compiled().bytes() < clip.compiled().bytes());
}
