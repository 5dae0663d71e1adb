//! Particle skinning: segments, binding (nearest, banded, grouped), posing (bulk, parallel,
//! one point), springs, and degenerate input. A validity table for the pose job first, then
//! exact-value behaviour.

use crate::support;

use glam::{Mat4, Quat, Vec3};
use marrow_engine::math::Transform;
use marrow_engine::particles::{
    Influence, ParticleBinding, ParticleError, ParticleMatrices, ParticlePoseJob, ParticleSprings,
    SpringSettings, bind_grouped, bind_nearest, bone_segments, sample_surface, skin_one,
};
use marrow_engine::pose::LocalToModelJob;
use marrow_engine::skeleton::{NO_PARENT, Skeleton};

fn t(x: f32, y: f32, z: f32) -> Transform {
    Transform { translation: Vec3::new(x, y, z), ..Transform::IDENTITY }
}

/// shoulder (origin) -> elbow (1, 0, 0) -> wrist (2, 0, 0); a head above the shoulder at (0, 1, 0).
fn arm() -> Skeleton {
    Skeleton::from_bind_pose(
        "arm",
        vec![
            ("shoulder".into(), NO_PARENT, t(0.0, 0.0, 0.0)),
            ("elbow".into(), 0, t(1.0, 0.0, 0.0)),
            ("wrist".into(), 1, t(1.0, 0.0, 0.0)),
            ("head".into(), 0, t(0.0, 1.0, 0.0)),
        ],
    )
    .unwrap()
}

/// Model matrices of `skeleton` with `local` transforms.
fn model(skeleton: &Skeleton, local: &[Transform]) -> Vec<Mat4> {
    let mut out = vec![Mat4::IDENTITY; local.len()];
    LocalToModelJob { parents: &skeleton.parents, local, adjusts: &[], output: &mut out }.run().unwrap();
    out
}

fn matrices(skeleton: &Skeleton, local: &[Transform]) -> ParticleMatrices {
    let mut m = ParticleMatrices::new(skeleton);
    m.update(Mat4::IDENTITY, &model(skeleton, local), skeleton);
    m
}

fn close(a: [f32; 3], b: Vec3, eps: f32) -> bool {
    (Vec3::from(a) - b).length() <= eps
}

#[test]
fn pose_job_validity_table() {
    let sk = arm();
    let m = ParticleMatrices::new(&sk);
    let good = ParticleBinding { influences: vec![Influence { bones: [0, 1], weight: 0.5 }; 2] };
    let stray =
        ParticleBinding { influences: vec![Influence::default(), Influence { bones: [1, 9], weight: 0.2 }] };
    let rest = [[0.0; 3]; 2];
    type Case = (&'static str, usize, usize, usize, bool, Option<&'static str>);
    let cases: [Case; 6] = [
        ("sound", 2, 2, 0, false, None),
        ("with normals", 2, 2, 2, false, None),
        ("positions short", 2, 1, 0, false, Some("positions has 1 entries, expected 2")),
        ("normals short", 2, 2, 2, true, Some("normals has 1 entries, expected 2")),
        ("rest normals short", 2, 2, 1, false, Some("rest_normals has 1 entries, expected 2")),
        ("stray bone", 2, 2, 0, false, Some("particle 1 is bound to bone 9, but the matrices hold 4 bones")),
    ];
    for (name, n_rest, n_out, n_normals, short_normals_out, expect) in cases {
        let binding = if name == "stray bone" { &stray } else { &good };
        let mut pos = vec![[0.0; 3]; n_out];
        let mut nor = vec![[0.0; 3]; if short_normals_out { n_normals - 1 } else { n_normals }];
        let normals_in = vec![[0.0, 1.0, 0.0]; n_normals];
        let job = ParticlePoseJob {
            matrices: &m,
            binding,
            rest_positions: &rest[..n_rest],
            rest_normals: &normals_in,
            positions: &mut pos,
            normals: &mut nor,
        };
        match (job.validate(), expect) {
            (Ok(()), None) => {}
            (Err(e), Some(text)) => assert!(e.to_string().contains(text), "{name}: {e}"),
            (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
        }
    }
}

#[test]
fn segments_run_bone_to_child_and_childless_bones_get_a_stub_along_their_direction() {
    let segs = bone_segments(&arm());
    let find = |bone: u16| segs.iter().filter(|s| s.bone == bone).collect::<Vec<_>>();
    // The shoulder has two children: one segment to each.
    let shoulder = find(0);
    assert_eq!(shoulder.len(), 2);
    assert!(shoulder.iter().any(|s| s.end == Vec3::X) && shoulder.iter().any(|s| s.end == Vec3::Y));
    assert_eq!(find(1)[0].start, Vec3::X);
    assert_eq!(find(1)[0].end, Vec3::new(2.0, 0.0, 0.0));
    // The wrist is a leaf: a stub of half its incoming segment, continuing its direction.
    assert_eq!(find(2)[0].start, Vec3::new(2.0, 0.0, 0.0));
    assert_eq!(find(2)[0].end, Vec3::new(2.5, 0.0, 0.0));
}

#[test]
fn the_elbow_point_is_half_each_arm_bone_and_moves_to_the_average_of_their_transforms() {
    let sk = arm();
    let rest = [[1.0, 0.0, 0.0]];
    let binding = bind_nearest(&rest, &sk, 0.2);
    let inf = binding.influences[0];
    let mut bones = inf.bones;
    bones.sort();
    assert_eq!(bones, [0, 1], "upper arm and forearm");
    assert_eq!(inf.weights(), [0.5, 0.5]);
    // Raise the upper arm 90 degrees about Z and lift the whole arm by 1 in Y.
    let mut local = sk.bind_pose.clone();
    local[0].rotation = Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    local[0].translation = Vec3::Y;
    local[1].rotation = Quat::from_rotation_z(-std::f32::consts::FRAC_PI_2);
    let m = matrices(&sk, &local);
    let mdl = model(&sk, &local);
    let via = |b: usize| mdl[b] * sk.inverse_bind[b];
    let expected = (via(0).transform_point3(Vec3::X) + via(1).transform_point3(Vec3::X)) * 0.5;
    let posed = skin_one(&m, inf, rest[0]);
    assert!(close(posed, expected, 1e-6), "{posed:?} vs {expected}");
    // Both bones carry the elbow to the same place here, (0, 2, 0): the average is it.
    assert!(close(posed, Vec3::new(0.0, 2.0, 0.0), 1e-6), "{posed:?}");
}

#[test]
fn falloff_weights_fall_smoothly_across_the_band_and_zero_falloff_binds_rigidly() {
    let sk = arm();
    // Along the upper arm, moving away from the elbow: the forearm's share falls from 1/2 to 0.
    let points: Vec<[f32; 3]> = (0..=10).map(|k| [1.0 - 0.03 * k as f32, 0.0, 0.0]).collect();
    let b = bind_nearest(&points, &sk, 0.2);
    let shares: Vec<f32> = b.influences.iter().map(|i| i.weight).collect();
    assert_eq!(shares[0], 0.5);
    assert!(shares.windows(2).all(|w| w[1] <= w[0]), "{shares:?}");
    assert!(shares[7..].iter().all(|&w| w == 0.0), "0.21 away and beyond: rigid {shares:?}");
    assert!(shares[3] > 0.0 && shares[3] < 0.5, "{shares:?}");
    let rigid = bind_nearest(&points, &sk, 0.0);
    assert!(rigid.influences.iter().all(|i| i.weight == 0.0 && i.bones[0] == i.bones[1]));
}

#[test]
fn a_leaf_bones_tip_binds_to_its_stub() {
    let sk = arm();
    let b = bind_nearest(&[[2.4, 0.05, 0.0]], &sk, 0.1);
    assert_eq!(b.influences[0], Influence { bones: [2, 2], weight: 0.0 }, "the wrist, rigidly");
}

#[test]
fn grouped_binding_keeps_the_sword_with_the_hand_as_the_head_nods() {
    let sk = arm();
    // A sword point right beside the head (0, 1, 0), nearer the head than the wrist.
    let sword = [[0.1, 1.05, 0.0]];
    let free = bind_nearest(&sword, &sk, 0.0);
    assert_eq!(free.influences[0].bones[0], 3, "ungrouped it goes to the skull");
    let grouped = bind_grouped(&sword, &sk, 0.0, &[0], &[vec![2]]);
    assert_eq!(grouped.influences[0].bones, [2, 2], "the hand");
    let rest_local = sk.bind_pose.clone();
    let mut nod = rest_local.clone();
    nod[3].rotation = Quat::from_rotation_x(0.8);
    let before = skin_one(&matrices(&sk, &rest_local), grouped.influences[0], sword[0]);
    let after = skin_one(&matrices(&sk, &nod), grouped.influences[0], sword[0]);
    assert_eq!(before, after, "the head nods; the sword stays with the hand");
    // An empty group, or a group index past the end, falls back to the whole skeleton.
    let fallback = bind_grouped(&[sword[0], sword[0]], &sk, 0.0, &[0, 7], &[vec![]]);
    assert_eq!(fallback.influences, vec![free.influences[0]; 2]);
}

#[test]
fn weights_always_sum_to_one_with_at_most_two_influences() {
    let sk = marrow_engine::synthetic::chain_skeleton(64);
    let mut rng = marrow_engine::particles::SplitMix::new(7);
    let points: Vec<[f32; 3]> =
        (0..5000).map(|_| [0; 3].map(|_: i32| (rng.next_f32() - 0.5) * 8.0)).collect();
    for falloff in [0.0, 0.05, 0.5, 5.0] {
        let b = bind_nearest(&points, &sk, falloff);
        assert_eq!(b.len(), points.len());
        for inf in &b.influences {
            let [w0, w1] = inf.weights();
            assert!((0.0..=0.5).contains(&w1) && w0 >= w1, "{inf:?}");
            assert_eq!(w0 + w1, 1.0, "{inf:?}");
            assert!((inf.bones[0] as usize) < 64 && (inf.bones[1] as usize) < 64);
        }
    }
}

#[test]
fn skin_one_equals_the_bulk_and_parallel_paths_and_normals_follow_the_dominant_bone() {
    let sk = marrow_engine::synthetic::chain_skeleton(64);
    let clip = marrow_engine::synthetic::dense_clip(&sk, "c", 2.0, 30.0, 0);
    let mut local = sk.bind_pose.clone();
    marrow_engine::pose::SamplingJob {
        clip: &clip,
        bind_pose: &sk.bind_pose,
        time: 0.7,
        context: &mut marrow_engine::pose::SamplingContext::new(64),
        output: &mut local,
    }
    .run()
    .unwrap();
    let m = matrices(&sk, &local);
    let mut rng = marrow_engine::particles::SplitMix::new(3);
    let rest: Vec<[f32; 3]> =
        (0..20_000).map(|_| [0; 3].map(|_: i32| (rng.next_f32() - 0.5) * 6.0)).collect();
    let normals: Vec<[f32; 3]> = rest.iter().map(|p| Vec3::from(*p).normalize_or_zero().into()).collect();
    let binding = bind_nearest(&rest, &sk, 0.3);
    let (mut pos, mut nor) = (vec![[0.0; 3]; rest.len()], vec![[0.0; 3]; rest.len()]);
    ParticlePoseJob {
        matrices: &m,
        binding: &binding,
        rest_positions: &rest,
        rest_normals: &normals,
        positions: &mut pos,
        normals: &mut nor,
    }
    .run()
    .unwrap();
    let (mut pos_par, mut nor_par) = (vec![[0.0; 3]; rest.len()], vec![[0.0; 3]; rest.len()]);
    ParticlePoseJob {
        matrices: &m,
        binding: &binding,
        rest_positions: &rest,
        rest_normals: &normals,
        positions: &mut pos_par,
        normals: &mut nor_par,
    }
    .run_parallel()
    .unwrap();
    assert_eq!(pos, pos_par);
    assert_eq!(nor, nor_par);
    for i in (0..rest.len()).step_by(97) {
        let inf = binding.influences[i];
        assert_eq!(pos[i], skin_one(&m, inf, rest[i]), "particle {i}");
        let dominant = m.bones[inf.bones[0] as usize];
        let expect = dominant.transform_vector3(Vec3::from(normals[i]));
        assert!(close(nor[i], expect, 1e-5), "particle {i}: {:?} vs {expect}", nor[i]);
    }
}

#[test]
fn a_cloud_longer_than_its_binding_leaves_the_extra_particles_where_they_are() {
    let sk = arm();
    let mut local = sk.bind_pose.clone();
    local[0].translation = Vec3::new(0.0, 0.0, 5.0);
    let m = matrices(&sk, &local);
    let rest = [[0.5, 0.0, 0.0], [1.5, 0.0, 0.0], [9.0, 9.0, 9.0]];
    let binding = bind_nearest(&rest[..2], &sk, 0.0);
    let mut pos = [[-1.0; 3]; 3];
    ParticlePoseJob {
        matrices: &m,
        binding: &binding,
        rest_positions: &rest,
        rest_normals: &[],
        positions: &mut pos,
        normals: &mut [],
    }
    .run()
    .unwrap();
    assert_eq!(pos[0], [0.5, 0.0, 5.0]);
    assert_eq!(pos[1], [1.5, 0.0, 5.0]);
    assert_eq!(pos[2], [-1.0; 3], "past the binding: untouched");
}

#[test]
fn degenerate_bones_give_finite_output() {
    // Zero-length segments (a child at its parent's origin), a zero-scale bind joint (its inverse
    // bind does not exist) and a zero-scale pose.
    let zero = Transform { scale: Vec3::ZERO, ..Transform::IDENTITY };
    let sk = Skeleton {
        name: "degenerate".into(),
        bone_names: vec!["a".into(), "b".into(), "c".into()],
        parents: vec![NO_PARENT, 0, 1],
        bind_pose: vec![Transform::IDENTITY, Transform::IDENTITY, zero],
        inverse_bind: vec![Mat4::IDENTITY, Mat4::IDENTITY, Mat4::ZERO.inverse()],
    };
    let segs = bone_segments(&sk);
    assert!(segs.iter().all(|s| s.start.is_finite() && s.end.is_finite()), "{segs:?}");
    let rest = [[0.0, 0.0, 0.0], [0.3, 0.2, 0.1], [f32::MAX, 0.0, 0.0]];
    let binding = bind_nearest(&rest, &sk, 0.5);
    for local in [sk.bind_pose.clone(), vec![zero; 3]] {
        let mut m = ParticleMatrices::new(&sk);
        m.update(Mat4::IDENTITY, &model(&sk, &local), &sk);
        let mut pos = [[0.0; 3]; 3];
        let mut nor = [[0.0; 3]; 3];
        ParticlePoseJob {
            matrices: &m,
            binding: &binding,
            rest_positions: &rest[..2],
            rest_normals: &[[0.0, 1.0, 0.0]; 2],
            positions: &mut pos[..2],
            normals: &mut nor[..2],
        }
        .run()
        .unwrap();
        assert!(pos.iter().chain(&nor).flatten().all(|v| v.is_finite()), "{pos:?} {nor:?}");
    }
}

#[test]
fn springs_converge_to_a_still_target() {
    let target = [[1.0, 2.0, 3.0]];
    let mut s = ParticleSprings::new(&[[0.0; 3]]);
    for _ in 0..600 {
        s.step(&target, SpringSettings::default(), &[], &[], 1.0 / 60.0).unwrap();
    }
    assert!(close(s.positions[0], Vec3::new(1.0, 2.0, 3.0), 1e-4), "{:?}", s.positions[0]);
    assert!(Vec3::from(s.velocities[0]).length() < 1e-3);
}

#[test]
fn springs_lag_a_moving_target_and_heavy_matter_lags_more() {
    let groups = [0, 1];
    let masses = [1.0, 8.0];
    let mut s = ParticleSprings::new(&[[0.0; 3]; 2]);
    let dt = 1.0 / 60.0;
    for k in 1..=30 {
        let x = k as f32 * dt; // 1 m/s along X, for half a second
        s.step(&[[x, 0.0, 0.0]; 2], SpringSettings::default(), &groups, &masses, dt).unwrap();
    }
    let lag_light = 0.5 - s.positions[0][0];
    let lag_heavy = 0.5 - s.positions[1][0];
    assert!(lag_light > 0.01, "trails the target: {lag_light}");
    assert!(lag_heavy > 2.0 * lag_light, "heavy {lag_heavy} vs light {lag_light}");
}

#[test]
fn light_matter_overshoots_a_target_that_stops() {
    let mut s = ParticleSprings::new(&[[0.0; 3]]);
    let light = SpringSettings { stiffness: 200.0, damping: 2.0 };
    let mut peak = 0.0f32;
    for _ in 0..240 {
        s.step(&[[1.0, 0.0, 0.0]], light, &[0], &[0.5], 1.0 / 60.0).unwrap();
        peak = peak.max(s.positions[0][0]);
    }
    assert!(peak > 1.05, "overshoots: peak {peak}");
}

#[test]
fn springs_stay_bounded_with_a_tenth_of_a_second_tick() {
    let stiff = SpringSettings { stiffness: 5000.0, damping: 0.0 };
    let mut s = ParticleSprings::new(&[[0.0; 3]; 3]);
    for k in 0..1000 {
        let x = if k % 2 == 0 { 1.0 } else { -1.0 }; // a target jumping every tick
        s.step(&[[x, 0.0, 0.0]; 3], stiff, &[0, 1, 2], &[0.001, 1.0, 1000.0], 0.1).unwrap();
        for p in &s.positions {
            assert!(p.iter().all(|v| v.is_finite() && v.abs() <= 1.0 + 1e-3), "tick {k}: {p:?}");
        }
    }
    s.reset(&[[4.0, 5.0, 6.0]; 3]);
    assert_eq!(s.positions, vec![[4.0, 5.0, 6.0]; 3]);
    assert_eq!(s.velocities, vec![[0.0; 3]; 3]);
}

#[test]
fn spring_steps_refuse_bad_settings_naming_them() {
    let mut s = ParticleSprings::new(&[[0.0; 3]]);
    let e = s.step(&[[0.0; 3]], SpringSettings::default(), &[], &[], f32::NAN).unwrap_err();
    assert!(matches!(e, ParticleError::BadSetting { what: "dt", .. }), "{e}");
    let e = s.step(&[[0.0; 3]; 2], SpringSettings::default(), &[], &[], 0.1).unwrap_err();
    assert!(e.to_string().contains("targets has 2 entries, expected 1"), "{e}");
    let e = s.step(&[[0.0; 3]], SpringSettings::default(), &[0], &[f32::INFINITY], 0.1).unwrap_err();
    assert!(matches!(e, ParticleError::BadSetting { what: "mass", .. }), "{e}");
}

#[test]
fn surface_samples_are_seeded_area_weighted_and_on_the_surface() {
    // Two triangles in the XY plane: one of area 0.5, one of area 4.5 (9 times larger).
    let positions = [
        [0.0, 0.0, 0.0],
        [1.0, 0.0, 0.0],
        [0.0, 1.0, 0.0],
        [10.0, 0.0, 0.0],
        [13.0, 0.0, 0.0],
        [10.0, 3.0, 0.0],
    ];
    let a = sample_surface(&positions, None, 20_000, 42);
    assert_eq!(a, sample_surface(&positions, None, 20_000, 42), "same seed, same points");
    assert_ne!(a.positions, sample_surface(&positions, None, 20_000, 43).positions);
    let big = a.positions.iter().filter(|p| p[0] >= 10.0).count() as f32 / 20_000.0;
    assert!((big - 0.9).abs() < 0.01, "share on the big triangle: {big}");
    assert!(a.positions.iter().all(|p| p[2] == 0.0 && p[0] >= 0.0 && p[1] >= 0.0));
    assert!(a.normals.iter().all(|n| *n == [0.0, 0.0, 1.0]));
    // Out-of-range indices and degenerate triangles are skipped, never indexed.
    let b = sample_surface(&positions, Some(&[0, 1, 99, 0, 0, 0, 3, 4, 5]), 100, 1);
    assert!(b.positions.iter().all(|p| p[0] >= 10.0));
}

// ---- Particle clouds in a scene: the World, the project check, the file ----

mod cloud {
    use std::path::PathBuf;

    use marrow_engine::project::{Library, Project, check_project_files};

    const DT: f32 = 1.0 / 60.0;

    fn dir() -> PathBuf {
        super::support::project_dir("particle_figure")
    }

    fn files(scene: impl Fn(String) -> String) -> Vec<(String, String)> {
        super::support::one_scene_files("particle_figure", scene)
    }

    #[test]
    fn the_particle_figure_follows_its_rig_its_springs_lag_and_a_paused_frame_snaps() {
        let p = Project::load(&dir()).unwrap();
        let lib = Library::load(&p, &dir()).unwrap();
        let mut w = lib.instantiate(&p, "scenes/main.scene.ron").unwrap();
        let figure = w.find("Figure").unwrap();
        w.frame(0, DT);
        let (desc, cloud) = w.particle_cloud(figure).unwrap();
        let desc = desc.clone();
        assert_eq!(cloud.len(), desc.settings.count as usize);
        assert_eq!(cloud.positions(), &cloud.targets[..], "a paused frame shows the pose exactly");
        let start = cloud.positions().to_vec();
        let mut lagged = 0.0f32;
        for _ in 0..45 {
            w.frame(1, DT);
            let (_, c) = w.particle_cloud(figure).unwrap();
            assert!(c.positions().iter().flatten().all(|v| v.is_finite()));
            let lag = c
                .positions()
                .iter()
                .zip(&c.targets)
                .map(|(a, b)| glam::Vec3::from(*a).distance(glam::Vec3::from(*b)))
                .fold(0.0, f32::max);
            lagged = lagged.max(lag);
        }
        let (_, c) = w.particle_cloud(figure).unwrap();
        let moved = c.positions().iter().zip(&start).filter(|(a, b)| a != b).count();
        assert!(moved > c.len() * 9 / 10, "the figure walks: {moved} of {} moved", c.len());
        assert!(lagged > 0.002, "springs trail the walk: most lag {lagged}");
        // The particles sit on the figure: within its height of the rig's origin.
        let origin = w.world_matrix(figure).unwrap().w_axis.truncate();
        assert!(c.positions().iter().all(|p| glam::Vec3::from(*p).distance(origin) < 2.5));
        w.frame(0, DT);
        let (_, c) = w.particle_cloud(figure).unwrap();
        assert_eq!(c.positions(), &c.targets[..], "paused again: snapped onto the pose");
        assert!(w.faults().entries().is_empty(), "{:?}", w.faults().entries());
        // Saved as authored: the cloud's settings, nothing of its state.
        let saved = w.to_desc();
        assert_eq!(saved.entities[1].particles.as_ref(), Some(&desc));
    }

    #[test]
    fn a_cloud_with_no_rig_is_named_by_check_and_once_by_the_world() {
        // Move the cloud from the figure onto the ground box, which no Animator drives.
        let moved = files(|s| {
            let start = s.find("            particles: (").unwrap();
            let end = s[start..].find("\n            ),\n").unwrap() + start + "\n            ),\n".len();
            let block = s[start..end].to_owned();
            let without = format!("{}{}", &s[..start], &s[end..]);
            without.replacen("            mesh: Box(", &format!("{block}            mesh: Box("), 1)
        });
        let report = check_project_files(&dir(), &moved);
        assert_eq!(report.errors.len(), 1, "{:?}", report.errors);
        let e = report.errors[0].to_string();
        assert!(
            e.contains("Ground") && e.contains("particles") && e.contains("no Animator at or above it"),
            "{e}"
        );
        let p = Project::from_files(&dir(), &moved).unwrap();
        let lib = Library::load(&p, &dir()).unwrap();
        let mut w = lib.instantiate(&p, "scenes/main.scene.ron").unwrap();
        for _ in 0..10 {
            w.frame(1, DT);
        }
        assert_eq!(
            w.faults().count_containing("particle cloud Ground: no Animator at or above it drives it"),
            1
        );
    }

    #[test]
    fn cloud_settings_faults_are_named_with_their_entity_and_field() {
        let bad_bone = files(|s| s.replacen("\"Skeleton_neck_joint_1\"", "\"Skeleton_tail\"", 1));
        let report = check_project_files(&dir(), &bad_bone);
        assert_eq!(report.errors.len(), 1, "{:?}", report.errors);
        let e = report.errors[0].to_string();
        assert!(e.contains("Figure") && e.contains("group 1 names bone \"Skeleton_tail\""), "{e}");
        let negative = files(|s| s.replacen("radius: 0.007", "radius: -0.007", 1));
        let e = check_project_files(&dir(), &negative).errors[0].to_string();
        assert!(e.contains("entity Figure: particles.radius") && e.contains("finite non-negative"), "{e}");
        let too_many = files(|s| s.replacen("count: 40000", "count: 3000000", 1));
        let e = check_project_files(&dir(), &too_many).errors[0].to_string();
        assert!(e.contains("particles.count") && e.contains("at most 2000000"), "{e}");
        let not_skinned = files(|s| s.replacen("#Cesium_Man\"", "#NoSuchMesh\"", 1));
        let e = check_project_files(&dir(), &not_skinned).errors[0].to_string();
        assert!(e.contains("particles.mesh") && e.contains("NoSuchMesh"), "{e}");
    }
}
