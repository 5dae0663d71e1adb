//! Pose jobs: validity tables, then exact behaviour (local blending, composition, adjusts,
//! palette, the packed pose buffer).

use std::f32::consts::FRAC_PI_2;

use glam::{Mat4, Quat, Vec3};
use marrow_engine::clip::Clip;
use marrow_engine::math::Transform;
use marrow_engine::pose::{
    BlendLayer, BlendingJob, BoneAdjust, JobError, LocalToModelJob, PaletteJob, PoseBuffer, SamplingContext,
    SamplingJob, insert_adjust,
};
use marrow_engine::skeleton::{NO_PARENT, Skeleton};
use marrow_engine::synthetic::{chain_skeleton, dense_clip};
use marrow_engine::track::{Interpolation, Track};

fn compose(sk: &Skeleton, local: &[Transform], adjusts: &[BoneAdjust]) -> Vec<Mat4> {
    let mut model = vec![Mat4::IDENTITY; sk.bone_count()];
    LocalToModelJob { parents: &sk.parents, local, adjusts, output: &mut model }.run().unwrap();
    model
}

fn origin(m: &Mat4) -> Vec3 {
    m.w_axis.truncate()
}

// ---------------------------------------------------------------------------------------------
// Validity tables

/// One row of a validity table: what is wrong, the job's result, and a check of the error.
type Row<'a, T> = (&'a str, T, fn(&JobError) -> bool);

#[test]
fn sampling_job_validity_table() {
    let sk = chain_skeleton(8);
    let clip = dense_clip(&sk, "c", 1.0, 30.0, 0);
    let mut out = vec![Transform::IDENTITY; 8];
    let mut short = vec![Transform::IDENTITY; 7];
    let mut ctx = SamplingContext::new(8);
    let mut small_ctx = SamplingContext::new(4);
    let bind = sk.bind_pose.clone();

    let ok = SamplingJob { clip: &clip, bind_pose: &bind, time: 0.5, context: &mut ctx, output: &mut out };
    assert_eq!(ok.validate(), Ok(()));
    let rows: Vec<Row<Result<(), JobError>>> = vec![
        (
            "output too small",
            SamplingJob { clip: &clip, bind_pose: &bind, time: 0.5, context: &mut ctx, output: &mut short }
                .validate(),
            |e| matches!(e, JobError::OutputTooSmall { needed: 8, got: 7, .. }),
        ),
        (
            "bind pose length",
            SamplingJob {
                clip: &clip,
                bind_pose: &bind[..5],
                time: 0.5,
                context: &mut ctx,
                output: &mut out,
            }
            .validate(),
            |e| matches!(e, JobError::InputLength { expected: 8, got: 5, .. }),
        ),
        (
            "context too small",
            SamplingJob {
                clip: &clip,
                bind_pose: &bind,
                time: 0.5,
                context: &mut small_ctx,
                output: &mut out,
            }
            .validate(),
            |e| matches!(e, JobError::ContextTooSmall { bones: 8, capacity: 4, .. }),
        ),
        (
            "NaN time",
            SamplingJob {
                clip: &clip,
                bind_pose: &bind,
                time: f32::NAN,
                context: &mut ctx,
                output: &mut out,
            }
            .validate(),
            |e| matches!(e, JobError::NonFiniteTime(_)),
        ),
    ];
    for (what, result, expect) in rows {
        let err = result.expect_err(what);
        assert!(expect(&err), "{what}: {err}");
    }
}

#[test]
fn blending_job_validity_table() {
    let rest = [Transform::IDENTITY; 4];
    let pose = [Transform::IDENTITY; 4];
    let short = [Transform::IDENTITY; 3];
    let mask = [1.0f32; 3];
    let mut out = [Transform::IDENTITY; 4];
    let mut out_short = [Transform::IDENTITY; 2];
    let layer = |pose, weight, mask| BlendLayer { pose, weight, mask };
    // (what, layers, short output, expected error)
    type BlendRow<'a> = (&'a str, Vec<BlendLayer<'a>>, bool, fn(&JobError) -> bool);
    let cases: Vec<BlendRow> = vec![
        (
            "short layer pose",
            vec![layer(&short[..], 1.0, None)],
            false,
            |e| matches!(e, JobError::InputLength { input, .. } if input == "layer 0 pose"),
        ),
        (
            "short mask",
            vec![layer(&pose[..], 1.0, None), layer(&pose[..], 1.0, Some(&mask[..]))],
            false,
            |e| matches!(e, JobError::InputLength { input, .. } if input == "layer 1 mask"),
        ),
        ("negative weight", vec![layer(&pose[..], -1.0, None)], false, |e| {
            matches!(e, JobError::BadWeight { layer: 0, .. })
        }),
        ("NaN weight", vec![layer(&pose[..], f32::NAN, None)], false, |e| {
            matches!(e, JobError::BadWeight { .. })
        }),
        ("output too small", vec![layer(&pose[..], 1.0, None)], true, |e| {
            matches!(e, JobError::OutputTooSmall { needed: 4, got: 2, .. })
        }),
    ];
    for (what, layers, short_out, expect) in cases {
        let output = if short_out { &mut out_short[..] } else { &mut out[..] };
        let err =
            BlendingJob { layers: &layers, rest_pose: &rest, threshold: 0.0, output }.run().expect_err(what);
        assert!(expect(&err), "{what}: {err}");
    }
}

#[test]
fn local_to_model_and_palette_validity_table() {
    let local = vec![Transform::IDENTITY; 3];
    let mut out = vec![Mat4::IDENTITY; 3];
    let parents_bad = [NO_PARENT, 2, 1];
    let parents = [NO_PARENT, 0, 1];
    let err = LocalToModelJob { parents: &parents_bad, local: &local, adjusts: &[], output: &mut out }
        .run()
        .unwrap_err();
    assert_eq!(err, JobError::ParentNotBefore { bone: 1, parent: 2 });
    let err = LocalToModelJob {
        parents: &parents,
        local: &local,
        adjusts: &[BoneAdjust::rotate(3, Quat::IDENTITY)],
        output: &mut out,
    }
    .run()
    .unwrap_err();
    assert_eq!(err, JobError::AdjustBoneOutOfRange { index: 0, bone: 3, bones: 3 });
    let err = LocalToModelJob {
        parents: &parents,
        local: &local,
        adjusts: &[BoneAdjust::rotate(2, Quat::IDENTITY), BoneAdjust::rotate(1, Quat::IDENTITY)],
        output: &mut out,
    }
    .run()
    .unwrap_err();
    assert_eq!(err, JobError::AdjustsUnsorted { index: 1, bone: 1 });
    let err = LocalToModelJob {
        parents: &parents,
        local: &local,
        adjusts: &[BoneAdjust::offset(1, Vec3::NAN)],
        output: &mut out,
    }
    .run()
    .unwrap_err();
    assert_eq!(err, JobError::AdjustNotFinite { index: 0, bone: 1 });
    let err = LocalToModelJob { parents: &parents, local: &local[..2], adjusts: &[], output: &mut out }
        .run()
        .unwrap_err();
    assert!(matches!(err, JobError::InputLength { expected: 3, got: 2, .. }));
    let err = PaletteJob { model: &out.clone(), inverse_bind: &[Mat4::IDENTITY; 2], output: &mut out }
        .run()
        .unwrap_err();
    assert!(matches!(err, JobError::InputLength { expected: 3, got: 2, .. }));
    // Nothing panics, and messages name the job.
    assert!(err.to_string().starts_with("palette job"));
}

// ---------------------------------------------------------------------------------------------
// Behaviour

/// Root at the origin, child one unit along +X.
fn two_bones() -> Skeleton {
    Skeleton::from_bind_pose(
        "arm",
        vec![
            ("root".into(), NO_PARENT, Transform::IDENTITY),
            ("tip".into(), 0, Transform::from_translation(Vec3::X)),
        ],
    )
    .unwrap()
}

#[test]
fn local_blend_keeps_the_child_one_unit_from_its_root_at_every_weight() {
    let sk = two_bones();
    let a = sk.bind_pose.clone();
    let mut b = sk.bind_pose.clone();
    b[0].rotation = Quat::from_rotation_z(FRAC_PI_2);
    let mut out = vec![Transform::IDENTITY; 2];
    for i in 0..=20 {
        let w = i as f32 / 20.0;
        BlendingJob {
            layers: &[
                BlendLayer { pose: &a, weight: 1.0 - w, mask: None },
                BlendLayer { pose: &b, weight: w, mask: None },
            ],
            rest_pose: &sk.bind_pose,
            threshold: 1e-6,
            output: &mut out,
        }
        .run()
        .unwrap();
        let model = compose(&sk, &out, &[]);
        let d = origin(&model[1]).length();
        assert!((d - 1.0).abs() < 1e-6, "weight {w}: tip at distance {d}");
    }
    // Blending the composed matrices instead would pull the tip inwards halfway.
    let ma = compose(&sk, &a, &[]);
    let mb = compose(&sk, &b, &[]);
    let naive = (origin(&ma[1]) + origin(&mb[1])) * 0.5;
    assert!((naive.length() - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
}

#[test]
fn blend_with_a_single_contributor_copies_it_exactly_and_masks_select_bones() {
    let sk = chain_skeleton(9);
    let a = dense_clip(&sk, "a", 1.0, 30.0, 0);
    let b = dense_clip(&sk, "b", 1.0, 30.0, 1);
    let sample = |clip: &Clip| {
        let mut out = vec![Transform::IDENTITY; 9];
        SamplingJob {
            clip,
            bind_pose: &sk.bind_pose,
            time: 0.37,
            context: &mut SamplingContext::new(9),
            output: &mut out,
        }
        .run()
        .unwrap();
        out
    };
    let (pa, pb) = (sample(&a), sample(&b));
    let mut out = vec![Transform::IDENTITY; 9];
    BlendingJob {
        layers: &[
            BlendLayer { pose: &pa, weight: 1.0, mask: None },
            BlendLayer { pose: &pb, weight: 0.0, mask: None },
        ],
        rest_pose: &sk.bind_pose,
        threshold: 1e-6,
        output: &mut out,
    }
    .run()
    .unwrap();
    assert_eq!(out, pa);
    // Mask: layer b only on bones 1..=8 (chain), a only on the root.
    let mask_b: Vec<f32> = (0..9).map(|i| if i == 0 { 0.0 } else { 1.0 }).collect();
    let mask_a: Vec<f32> = mask_b.iter().map(|m| 1.0 - m).collect();
    BlendingJob {
        layers: &[
            BlendLayer { pose: &pa, weight: 1.0, mask: Some(&mask_a) },
            BlendLayer { pose: &pb, weight: 1.0, mask: Some(&mask_b) },
        ],
        rest_pose: &sk.bind_pose,
        threshold: 1e-6,
        output: &mut out,
    }
    .run()
    .unwrap();
    assert_eq!(out[0], pa[0]);
    assert_eq!(&out[1..], &pb[1..]);
    // No weight anywhere: the rest pose.
    BlendingJob {
        layers: &[BlendLayer { pose: &pa, weight: 0.0, mask: None }],
        rest_pose: &sk.bind_pose,
        threshold: 1e-6,
        output: &mut out,
    }
    .run()
    .unwrap();
    assert_eq!(out, sk.bind_pose);
}

#[test]
fn sampling_takes_missing_channels_from_the_bind_pose() {
    let sk = two_bones();
    let mut clip = Clip::new("c", &sk);
    clip.channels_mut()[1].rotation = Some(
        Track::from_keys(
            Interpolation::Linear,
            vec![0.0, 1.0],
            vec![Quat::IDENTITY, Quat::from_rotation_y(1.0)],
        )
        .unwrap(),
    );
    let mut out = vec![Transform::IDENTITY; 2];
    SamplingJob {
        clip: &clip,
        bind_pose: &sk.bind_pose,
        time: 1.0,
        context: &mut SamplingContext::new(2),
        output: &mut out,
    }
    .run()
    .unwrap();
    assert_eq!(out[0], sk.bind_pose[0]);
    assert_eq!(out[1].translation, Vec3::X);
    assert!(out[1].rotation.abs_diff_eq(Quat::from_rotation_y(1.0), 1e-6));
}

#[test]
fn compose_is_parent_times_local_and_palette_is_model_times_inverse_bind() {
    let sk = chain_skeleton(17);
    let clip = dense_clip(&sk, "c", 1.0, 30.0, 2);
    let mut local = vec![Transform::IDENTITY; 17];
    SamplingJob {
        clip: &clip,
        bind_pose: &sk.bind_pose,
        time: 0.61,
        context: &mut SamplingContext::new(17),
        output: &mut local,
    }
    .run()
    .unwrap();
    let model = compose(&sk, &local, &[]);
    for i in 0..17 {
        let want = match sk.parent(i) {
            Some(p) => model[p] * local[i].to_mat4(),
            None => local[i].to_mat4(),
        };
        assert_eq!(model[i], want, "bone {i}");
    }
    let mut palette = vec![Mat4::IDENTITY; 17];
    PaletteJob { model: &model, inverse_bind: &sk.inverse_bind, output: &mut palette }.run().unwrap();
    for i in 0..17 {
        assert_eq!(palette[i], model[i] * sk.inverse_bind[i]);
    }
    // At the bind pose the palette is the identity.
    let bind_model = compose(&sk, &sk.bind_pose, &[]);
    PaletteJob { model: &bind_model, inverse_bind: &sk.inverse_bind, output: &mut palette }.run().unwrap();
    for p in &palette {
        assert!(p.abs_diff_eq(Mat4::IDENTITY, 1e-5));
    }
}

/// hips (root) -> spine -> neck -> head, 1 unit apart along +Y.
fn spine(hips_yaw: f32) -> Skeleton {
    let up = Transform::from_translation(Vec3::Y);
    Skeleton::from_bind_pose(
        "spine",
        vec![
            ("hips".into(), NO_PARENT, Transform::from_rotation(Quat::from_rotation_y(hips_yaw))),
            ("spine".into(), 0, up),
            ("neck".into(), 1, up),
            ("head".into(), 2, up),
        ],
    )
    .unwrap()
}

#[test]
fn the_same_bend_on_a_yawed_spine_still_swings_the_head_to_model_plus_z() {
    // A model-space quarter turn about +X swings +Y to +Z.
    let bend = BoneAdjust::rotate(1, Quat::from_rotation_x(FRAC_PI_2));
    for yaw in [0.0, FRAC_PI_2, -FRAC_PI_2, 2.0] {
        let sk = spine(yaw);
        let model = compose(&sk, &sk.bind_pose, &[bend]);
        let spine_at = origin(&model[1]);
        let head = origin(&model[3]);
        let dir = (head - spine_at).normalize();
        assert!(dir.abs_diff_eq(Vec3::Z, 1e-5), "yaw {yaw}: head direction {dir}");
        assert!((head - Vec3::new(0.0, 1.0, 2.0)).length() < 1e-5, "yaw {yaw}: head at {head}");
    }
    // Applying the same rotation in the bone's local frame instead would not (sanity check).
    let sk = spine(FRAC_PI_2);
    let mut local = sk.bind_pose.clone();
    local[1].rotation = Quat::from_rotation_x(FRAC_PI_2) * local[1].rotation;
    let model = compose(&sk, &local, &[]);
    let dir = (origin(&model[3]) - origin(&model[1])).normalize();
    assert!(!dir.abs_diff_eq(Vec3::Z, 1e-3));
}

#[test]
fn adjusts_on_one_bone_compose_in_list_order_and_absolute_sets_the_orientation() {
    let sk = spine(0.7);
    let r1 = Quat::from_rotation_x(0.5);
    let r2 = Quat::from_rotation_z(0.8);
    let mut list = Vec::new();
    insert_adjust(&mut list, BoneAdjust::rotate(2, r1));
    insert_adjust(&mut list, BoneAdjust::rotate(1, Quat::IDENTITY));
    insert_adjust(&mut list, BoneAdjust::rotate(2, r2));
    assert_eq!(list.iter().map(|a| a.bone).collect::<Vec<_>>(), [1, 2, 2]);
    let model = compose(&sk, &sk.bind_pose, &list);
    let bind = compose(&sk, &sk.bind_pose, &[]);
    let got = Quat::from_mat4(&model[2]);
    let want = r2 * r1 * Quat::from_mat4(&bind[2]);
    assert!(got.abs_diff_eq(want, 1e-5) || got.abs_diff_eq(-want, 1e-5), "{got:?} vs {want:?}");

    let target = Quat::from_rotation_z(1.0);
    let model = compose(&sk, &sk.bind_pose, &[BoneAdjust::orient(2, target)]);
    let got = Quat::from_mat4(&model[2]);
    assert!(got.abs_diff_eq(target, 1e-5) || got.abs_diff_eq(-target, 1e-5));

    // An offset moves the bone's origin by exactly that much in model space.
    let model = compose(&sk, &sk.bind_pose, &[BoneAdjust::offset(2, Vec3::new(0.0, 0.0, 0.5))]);
    assert!((origin(&model[2]) - origin(&bind[2]) - Vec3::new(0.0, 0.0, 0.5)).length() < 1e-5);
}

#[test]
fn a_zero_scale_collapses_the_skin_but_leaves_a_usable_orientation() {
    let sk = spine(0.4);
    let adjusts = [BoneAdjust::scale(2, 0.0), BoneAdjust::rotate(3, Quat::from_rotation_x(0.3))];
    let model = compose(&sk, &sk.bind_pose, &adjusts);
    assert!(model.iter().all(|m| m.is_finite()));
    // The neck's skin collapses: a vertex one unit off the bone lands (almost) on its origin.
    let vertex_in_bone = Vec3::new(1.0, 0.0, 0.0);
    let p = model[2].transform_point3(vertex_in_bone);
    assert!((p - origin(&model[2])).length() < 1e-3);
    // Its orientation is still readable and unit.
    let r = marrow_engine::math::rotation_of(&model[2]);
    assert!(r.is_finite() && (r.length() - 1.0).abs() < 1e-5);
    let bind = compose(&sk, &sk.bind_pose, &[]);
    let want = Quat::from_mat4(&bind[2]);
    assert!(r.abs_diff_eq(want, 1e-4) || r.abs_diff_eq(-want, 1e-4), "{r:?} vs {want:?}");
}

#[test]
fn pose_buffer_packs_rigs_end_to_end() {
    let mut buf = PoseBuffer::new();
    let a = buf.add_rig(3);
    let b = buf.add_rig(5);
    assert_eq!(buf.range(a), Some(0..3));
    assert_eq!(buf.range(b), Some(3..8));
    buf.rig_mut(b).unwrap().palette[0] = Mat4::from_translation(Vec3::X);
    assert_eq!(buf.palettes().len(), 8);
    assert_eq!(buf.palettes()[3], Mat4::from_translation(Vec3::X));
    let mut seen = vec![(0usize, 0usize); 3];
    for (i, s) in seen.iter_mut().enumerate() {
        s.0 = i;
    }
    buf.par_for_each_rig_mut(&mut seen, |(i, len), pose| {
        *len = pose.local.len();
        pose.local[0].translation = Vec3::splat(*i as f32);
    });
    // Two rigs: the third item is skipped.
    assert_eq!(seen, [(0, 3), (1, 5), (2, 0)]);
    assert_eq!(buf.rig(b).unwrap().local[0].translation, Vec3::ONE);
    assert_eq!(buf.rig(a).unwrap().local[0].translation, Vec3::ZERO);
    assert!(buf.rig(marrow_engine::pose::RigSlot(7)).is_none());
}

#[test]
fn the_two_layer_fast_path_matches_the_general_blend_within_a_rounding_step() {
    // 67 bones: 16 groups of four through the SoA lanes, three through the scalar tail.
    let sk = chain_skeleton(67);
    let sample = |clip: &Clip, t: f32| {
        let mut out = vec![Transform::IDENTITY; 67];
        SamplingJob {
            clip,
            bind_pose: &sk.bind_pose,
            time: t,
            context: &mut SamplingContext::new(67),
            output: &mut out,
        }
        .run()
        .unwrap();
        out
    };
    let (pa, pb) =
        (sample(&dense_clip(&sk, "a", 1.0, 30.0, 0), 0.3), sample(&dense_clip(&sk, "b", 1.0, 30.0, 2), 0.8));
    let ones = vec![1.0f32; 67];
    for w in [0.1f32, 0.5, 0.93] {
        let run = |mask: Option<&[f32]>| {
            let mut out = vec![Transform::IDENTITY; 67];
            BlendingJob {
                layers: &[
                    BlendLayer { pose: &pa, weight: 1.0 - w, mask },
                    BlendLayer { pose: &pb, weight: w, mask },
                ],
                rest_pose: &sk.bind_pose,
                threshold: 1e-6,
                output: &mut out,
            }
            .run()
            .unwrap();
            out
        };
        // No masks: the fast path; all-ones masks: the general loop, the same blend.
        let (fast, general) = (run(None), run(Some(&ones)));
        for (i, (f, g)) in fast.iter().zip(&general).enumerate() {
            assert!(f.translation.abs_diff_eq(g.translation, 1e-6), "bone {i}");
            assert!(f.scale.abs_diff_eq(g.scale, 1e-6), "bone {i}");
            assert!(f.rotation.abs_diff_eq(g.rotation, 1e-6), "bone {i}: {} vs {}", f.rotation, g.rotation);
        }
    }
}
