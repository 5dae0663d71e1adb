//! Key reduction (`Clip::simplify`): every bone origin stays within the tolerance in model space,
//! keys fall as the tolerance grows, tracks keep their own key times, and the figures for the
//! sample models (keys kept, largest error reached) are measured and stated.

use crate::support;

use marrow_engine::gltf::import;
use marrow_engine::synthetic::{chain_skeleton, dense_clip};
use support::gltf_dir;

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
