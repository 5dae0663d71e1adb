//! Blend graph: compile errors, exact blends, blend spaces and phase sync, additive, masks,
//! model-space adjusts, slot reuse, markers, time scale, the program cache.

use crate::support;
use support::{blend, sample};

use std::collections::HashMap;
use std::f32::consts::FRAC_PI_2;
use std::sync::Arc;

use glam::{Mat4, Quat, Vec3};
use marrow_engine::clip::Clip;
use marrow_engine::graph::compile::GraphError;
use marrow_engine::graph::eval::neighbour_weights;
use marrow_engine::graph::*;
use marrow_engine::math::Transform;
use marrow_engine::pose::LocalToModelJob;
use marrow_engine::skeleton::{NO_PARENT, Skeleton};
use marrow_engine::synthetic::{chain_skeleton, dense_clip};
use marrow_engine::track::{Interpolation, Track};

type Lib = HashMap<String, Arc<Clip>>;

fn rig() -> Skeleton {
    chain_skeleton(24)
}

/// Clips "a", "b" (2 s), "c" (1 s), "d" (1.5 s) and "other" (for another rig).
fn library(sk: &Skeleton) -> Lib {
    let mut lib = Lib::new();
    lib.insert("a".into(), Arc::new(dense_clip(sk, "a", 2.0, 30.0, 0)));
    lib.insert("b".into(), Arc::new(dense_clip(sk, "b", 2.0, 30.0, 1)));
    lib.insert("c".into(), Arc::new(dense_clip(sk, "c", 1.0, 30.0, 2)));
    lib.insert("d".into(), Arc::new(dense_clip(sk, "d", 1.5, 30.0, 3)));
    let other = chain_skeleton(8);
    lib.insert("other".into(), Arc::new(dense_clip(&other, "other", 1.0, 30.0, 0)));
    lib
}

fn clip_node(g: &mut AnimGraph, path: &str) -> NodeId {
    g.add_node(NodeKind::Clip { clip: path.into(), speed: 1.0, looping: true }, [0.0, 0.0])
}

fn output(g: &mut AnimGraph, from: NodeId) -> NodeId {
    let o = g.add_node(NodeKind::Output, [0.0, 0.0]);
    g.connect(from, o, "pose");
    o
}

fn blend2(g: &mut AnimGraph, a: NodeId, b: NodeId, weight: f32) -> NodeId {
    let n = g.add_node(NodeKind::Blend2 { weight }, [0.0, 0.0]);
    g.connect(a, n, "a");
    g.connect(b, n, "b");
    n
}

fn run(sk: &Skeleton, program: GraphProgram) -> GraphInstance {
    let _ = sk;
    GraphInstance::new(Arc::new(program))
}

fn eval(sk: &Skeleton, inst: &mut GraphInstance) -> Vec<Transform> {
    let mut out = vec![Transform::IDENTITY; sk.bone_count()];
    inst.evaluate(sk, &mut out).unwrap();
    out
}

// ---------------------------------------------------------------------------------------------
// Compile errors
// ---------------------------------------------------------------------------------------------

#[test]
fn compile_error_table() {
    let sk = rig();
    let lib = library(&sk);
    // Each row: a name, a graph builder returning the expected errors.
    type Row = (&'static str, fn() -> (AnimGraph, Vec<GraphError>));
    let rows: Vec<Row> = vec![
        ("no output", || {
            let mut g = AnimGraph::new();
            clip_node(&mut g, "a");
            (g, vec![GraphError::NoOutput])
        }),
        ("two outputs", || {
            let mut g = AnimGraph::new();
            let a = clip_node(&mut g, "a");
            let first = output(&mut g, a);
            let second = output(&mut g, a);
            (g, vec![GraphError::ExtraOutput { node: second, title: "Output", first }])
        }),
        ("cycle", || {
            let mut g = AnimGraph::new();
            let x = g.add_node(NodeKind::Adjust { entries: vec![] }, [0.0, 0.0]);
            let y = g.add_node(NodeKind::TimeScale { scale: 1.0 }, [0.0, 0.0]);
            g.connect(x, y, "pose");
            g.connect(y, x, "pose");
            output(&mut g, y);
            (g, vec![GraphError::Cycle { node: x, title: "Adjust", cycle: vec![x, y] }])
        }),
        ("pin type mismatch", || {
            let mut g = AnimGraph::new();
            let a = clip_node(&mut g, "a");
            let b = clip_node(&mut g, "b");
            let n = blend2(&mut g, a, b, 0.5);
            g.connect(a, n, "weight"); // a pose into a float pin
            output(&mut g, n);
            let e = GraphError::PinTypeMismatch {
                node: n,
                title: "Blend2",
                pin: "weight".into(),
                expected: PinType::Float,
                from: a,
                found: Some(PinType::Pose),
            };
            (g, vec![e])
        }),
        ("unknown pin", || {
            let mut g = AnimGraph::new();
            let a = clip_node(&mut g, "a");
            let o = output(&mut g, a);
            g.connections.push(Connection { from: a, to: o, pin: "nope".into() });
            (g, vec![GraphError::UnknownPin { node: o, title: "Output", pin: "nope".into() }])
        }),
        ("dangling connection", || {
            let mut g = AnimGraph::new();
            let a = clip_node(&mut g, "a");
            let o = output(&mut g, a);
            g.connections.push(Connection { from: NodeId(99), to: a, pin: "pose".into() });
            let _ = o;
            let e = GraphError::DanglingConnection {
                node: a,
                title: "Clip",
                pin: "pose".into(),
                missing: NodeId(99),
            };
            (g, vec![e])
        }),
        ("missing pose input", || {
            let mut g = AnimGraph::new();
            let a = clip_node(&mut g, "a");
            let n = g.add_node(NodeKind::Blend2 { weight: 0.5 }, [0.0, 0.0]);
            g.connect(a, n, "a");
            output(&mut g, n);
            (g, vec![GraphError::MissingInput { node: n, title: "Blend2", pin: "b".into() }])
        }),
        ("missing clip", || {
            let mut g = AnimGraph::new();
            let a = clip_node(&mut g, "nowhere");
            output(&mut g, a);
            (g, vec![GraphError::MissingClip { node: a, title: "Clip", path: "nowhere".into() }])
        }),
        ("clip for another rig", || {
            let mut g = AnimGraph::new();
            let a = clip_node(&mut g, "other");
            output(&mut g, a);
            let e = GraphError::OtherRig {
                node: a,
                title: "Clip",
                path: "other".into(),
                clip_skeleton: "chain8".into(),
                skeleton: "chain24".into(),
            };
            (g, vec![e])
        }),
        ("bone the rig lacks (mask)", || {
            let mut g = AnimGraph::new();
            let a = clip_node(&mut g, "a");
            let b = clip_node(&mut g, "b");
            let m = g.add_node(
                NodeKind::Mask {
                    weight: 1.0,
                    subtrees: vec![MaskSubtree { bone: "tail".into(), weight: 1.0, falloff: 0.0 }],
                },
                [0.0, 0.0],
            );
            g.connect(a, m, "base");
            g.connect(b, m, "layer");
            output(&mut g, m);
            let e = GraphError::UnknownBone {
                node: m,
                title: "Mask",
                bone: "tail".into(),
                skeleton: "chain24".into(),
            };
            (g, vec![e])
        }),
        ("bone the rig lacks (adjust)", || {
            let mut g = AnimGraph::new();
            let a = clip_node(&mut g, "a");
            let entries =
                vec![AdjustEntry { bone: "wing".into(), op: AdjustOp::Scale, amount: Drive::Constant(1.0) }];
            let adj = g.add_node(NodeKind::Adjust { entries }, [0.0, 0.0]);
            g.connect(a, adj, "pose");
            output(&mut g, adj);
            let e = GraphError::UnknownBone {
                node: adj,
                title: "Adjust",
                bone: "wing".into(),
                skeleton: "chain24".into(),
            };
            (g, vec![e])
        }),
        ("unknown parameter (node)", || {
            let mut g = AnimGraph::new();
            let a = clip_node(&mut g, "a");
            let b = clip_node(&mut g, "b");
            let n = blend2(&mut g, a, b, 0.5);
            let p = g.add_node(NodeKind::Parameter { name: "speed".into() }, [0.0, 0.0]);
            g.connect(p, n, "weight");
            output(&mut g, n);
            (g, vec![GraphError::UnknownParameter { node: p, title: "Parameter", parameter: "speed".into() }])
        }),
        ("unknown parameter (adjust)", || {
            let mut g = AnimGraph::new();
            let a = clip_node(&mut g, "a");
            let entries = vec![AdjustEntry {
                bone: "bone1".into(),
                op: AdjustOp::Rotate { axis: Vec3::Y },
                amount: Drive::Parameter("aim".into()),
            }];
            let adj = g.add_node(NodeKind::Adjust { entries }, [0.0, 0.0]);
            g.connect(a, adj, "pose");
            output(&mut g, adj);
            (g, vec![GraphError::UnknownParameter { node: adj, title: "Adjust", parameter: "aim".into() }])
        }),
    ];
    assert_eq!(rows.len(), 13);
    for (name, build) in rows {
        let (g, expected) = build();
        let got = compile(&g, &sk, &lib).map(|_| ()).unwrap_err();
        assert_eq!(got, expected, "row {name:?}");
        for e in &got {
            // Every error but NoOutput names its node; the message names it too.
            if let Some(node) = e.node() {
                assert!(e.to_string().contains(&node.to_string()), "{name}: {e}");
            }
        }
    }
}

#[test]
fn compile_collects_every_error() {
    let sk = rig();
    let lib = library(&sk);
    let mut g = AnimGraph::new();
    let a = clip_node(&mut g, "nowhere");
    let b = clip_node(&mut g, "other");
    let n = blend2(&mut g, a, b, 0.5);
    output(&mut g, n);
    output(&mut g, n);
    let errors = compile(&g, &sk, &lib).map(|_| ()).unwrap_err();
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(matches!(errors[0], GraphError::ExtraOutput { .. }));
    assert!(matches!(&errors[1], GraphError::MissingClip { node, .. } if *node == a));
    assert!(matches!(&errors[2], GraphError::OtherRig { node, .. } if *node == b));
}

#[test]
fn a_skeleton_too_large_to_address_is_named_not_an_empty_error_list() {
    // Skeleton fields are public, so a hand-built one can exceed what a program's u16 bone
    // indices address; the compiler must say so rather than fail with no error.
    let n = u16::MAX as usize + 1;
    let huge = marrow_engine::skeleton::Skeleton {
        name: "huge".into(),
        bone_names: (0..n).map(|i| format!("b{i}")).collect(),
        parents: vec![marrow_engine::skeleton::NO_PARENT; n],
        bind_pose: vec![Transform::IDENTITY; n],
        inverse_bind: vec![glam::Mat4::IDENTITY; n],
    };
    let mut g = AnimGraph::new();
    let a = clip_node(&mut g, "a");
    output(&mut g, a);
    let errors = compile(&g, &huge, &HashMap::<String, Arc<Clip>>::new()).map(|_| ()).unwrap_err();
    assert!(
        errors.iter().any(|e| matches!(e, GraphError::TooManyBones { bones, .. } if *bones == n)),
        "{errors:?}"
    );
}

#[test]
fn unfinished_nodes_off_to_the_side_do_not_block_compiling() {
    let sk = rig();
    let lib = library(&sk);
    let mut g = AnimGraph::new();
    let a = clip_node(&mut g, "a");
    output(&mut g, a);
    g.add_node(NodeKind::Blend2 { weight: 0.5 }, [0.0, 0.0]); // no inputs
    clip_node(&mut g, "nowhere");
    assert!(compile(&g, &sk, &lib).is_ok());
}

// ---------------------------------------------------------------------------------------------
// Blend2, BlendSpace1D
// ---------------------------------------------------------------------------------------------

#[test]
fn blend2_at_0_half_1_is_a_the_local_blend_and_b_exactly() {
    let sk = rig();
    let lib = library(&sk);
    let mut g = AnimGraph::new();
    g.add_parameter("w", ParamValue::Float(0.0));
    let a = clip_node(&mut g, "a");
    let b = clip_node(&mut g, "b");
    let n = blend2(&mut g, a, b, 0.0);
    let p = g.add_node(NodeKind::Parameter { name: "w".into() }, [0.0, 0.0]);
    g.connect(p, n, "weight");
    output(&mut g, n);
    let mut inst = run(&sk, compile(&g, &sk, &lib).unwrap());
    inst.advance(0.3);
    let ta = inst.player_time(a).unwrap();
    let tb = inst.player_time(b).unwrap();
    assert_eq!((ta, tb), (0.3, 0.3));
    let pa = sample(&sk, &lib["a"], ta);
    let pb = sample(&sk, &lib["b"], tb);
    assert_eq!(eval(&sk, &mut inst), pa);
    assert!(inst.set_float("w", 0.5));
    let half = eval(&sk, &mut inst);
    assert_eq!(half, blend(&sk, &pa, &pb, 0.5));
    assert_ne!(half, pa);
    assert_ne!(half, pb);
    assert!(inst.set_float("w", 1.0));
    assert_eq!(eval(&sk, &mut inst), pb);
    // Out-of-range weights clamp.
    assert!(inst.set_float("w", 7.0));
    assert_eq!(eval(&sk, &mut inst), pb);
    // A float parameter cannot be set as a bool, nor an unknown one.
    assert!(!inst.set_bool("w", true));
    assert!(!inst.set_float("nope", 1.0));
}

fn blend_space(g: &mut AnimGraph, clips: &[(&str, f32)]) -> NodeId {
    let samples =
        clips.iter().map(|(c, p)| BlendSample { clip: (*c).into(), position: *p, speed: 1.0 }).collect();
    g.add_node(NodeKind::BlendSpace1D { samples, position: 0.0, looping: true }, [0.0, 0.0])
}

#[test]
fn blend_space_weights_at_and_between_the_sample_points() {
    let positions = [0.0, 1.0, 3.0];
    assert_eq!(neighbour_weights(&positions, -1.0), Some((0, 0, 0.0)));
    assert_eq!(neighbour_weights(&positions, 0.0), Some((0, 0, 0.0)));
    assert_eq!(neighbour_weights(&positions, 0.25), Some((0, 1, 0.25)));
    assert_eq!(neighbour_weights(&positions, 1.0), Some((1, 1, 0.0)));
    assert_eq!(neighbour_weights(&positions, 2.5), Some((1, 2, 0.75)));
    assert_eq!(neighbour_weights(&positions, 3.0), Some((2, 2, 0.0)));
    assert_eq!(neighbour_weights(&positions, 9.0), Some((2, 2, 0.0)));
    assert_eq!(neighbour_weights(&[], 1.0), None);

    let sk = rig();
    let lib = library(&sk);
    let mut g = AnimGraph::new();
    g.add_parameter("x", ParamValue::Float(0.0));
    // Authored out of order: the compiler sorts by position.
    let s = blend_space(&mut g, &[("d", 3.0), ("a", 0.0), ("c", 1.0)]);
    let p = g.add_node(NodeKind::Parameter { name: "x".into() }, [0.0, 0.0]);
    g.connect(p, s, "position");
    output(&mut g, s);
    let mut inst = run(&sk, compile(&g, &sk, &lib).unwrap());
    let mut w = [0.0f32; 3];
    for (x, expect) in [
        (-1.0, [1.0, 0.0, 0.0]),
        (0.0, [1.0, 0.0, 0.0]),
        (0.5, [0.5, 0.5, 0.0]),
        (1.0, [0.0, 1.0, 0.0]),
        (1.5, [0.0, 0.75, 0.25]),
        (3.0, [0.0, 0.0, 1.0]),
        (4.0, [0.0, 0.0, 1.0]),
    ] {
        inst.set_float("x", x);
        assert!(inst.space_weights(s, &mut w));
        assert_eq!(w, expect, "x = {x}");
    }
    // Poses: at a sample point, that clip exactly; between, the local blend of the neighbours.
    inst.set_float("x", 1.0);
    inst.advance(0.4);
    let phase = inst.space_phase(s).unwrap();
    assert_eq!(phase, 0.4); // rate 1 / 1 s
    assert_eq!(eval(&sk, &mut inst), sample(&sk, &lib["c"], phase * 1.0));
    inst.set_float("x", 1.5);
    let pc = sample(&sk, &lib["c"], inst.member_time(s, 1).unwrap());
    let pd = sample(&sk, &lib["d"], inst.member_time(s, 2).unwrap());
    assert_eq!(eval(&sk, &mut inst), blend(&sk, &pc, &pd, 0.25));
}

#[test]
fn phase_sync_keeps_clips_of_different_lengths_at_the_same_normalized_time() {
    let sk = rig();
    let lib = library(&sk);
    let mut g = AnimGraph::new();
    g.add_parameter("x", ParamValue::Float(0.5));
    let s = blend_space(&mut g, &[("c", 0.0), ("a", 1.0)]); // 1 s and 2 s
    let p = g.add_node(NodeKind::Parameter { name: "x".into() }, [0.0, 0.0]);
    g.connect(p, s, "position");
    output(&mut g, s);
    let mut inst = run(&sk, compile(&g, &sk, &lib).unwrap());
    let dt = 1.0 / 60.0;
    let mut expected_phase = 0.0f32;
    for tick in 0..200 {
        if tick == 100 {
            inst.set_float("x", 0.8);
        }
        let x = if tick < 100 { 0.5 } else { 0.8 };
        // Phase rate: weight-blended 1 / duration of the two clips.
        expected_phase = (expected_phase + dt * ((1.0 - x) / 1.0 + x / 2.0)).rem_euclid(1.0);
        inst.advance(dt);
        let phase = inst.space_phase(s).unwrap();
        assert!((phase - expected_phase).abs() < 1e-4, "tick {tick}: {phase} vs {expected_phase}");
        let tc = inst.member_time(s, 0).unwrap();
        let ta = inst.member_time(s, 1).unwrap();
        assert_eq!(tc / 1.0, phase);
        assert_eq!(ta / 2.0, phase);
    }
    let pc = sample(&sk, &lib["c"], inst.member_time(s, 0).unwrap());
    let pa = sample(&sk, &lib["a"], inst.member_time(s, 1).unwrap());
    assert_eq!(eval(&sk, &mut inst), blend(&sk, &pc, &pa, 0.8));
}

// ---------------------------------------------------------------------------------------------
// Additive, Mask
// ---------------------------------------------------------------------------------------------

#[test]
fn additive_with_layer_equal_to_reference_leaves_the_base_unchanged() {
    let sk = rig();
    let lib = library(&sk);
    for weight in [1.0, 0.7, 0.0] {
        let mut g = AnimGraph::new();
        let base = clip_node(&mut g, "a");
        let layer = clip_node(&mut g, "b");
        let add = g.add_node(NodeKind::Additive { weight }, [0.0, 0.0]);
        g.connect(base, add, "base");
        g.connect(layer, add, "layer");
        g.connect(layer, add, "reference");
        output(&mut g, add);
        let mut inst = run(&sk, compile(&g, &sk, &lib).unwrap());
        inst.advance(0.55);
        assert_eq!(eval(&sk, &mut inst), sample(&sk, &lib["a"], 0.55), "weight {weight}");
    }
    // A layer that differs from its reference adds the difference.
    let mut g = AnimGraph::new();
    let base = clip_node(&mut g, "a");
    let layer = clip_node(&mut g, "b");
    let reference = clip_node(&mut g, "d");
    let add = g.add_node(NodeKind::Additive { weight: 1.0 }, [0.0, 0.0]);
    g.connect(base, add, "base");
    g.connect(layer, add, "layer");
    g.connect(reference, add, "reference");
    output(&mut g, add);
    let mut inst = run(&sk, compile(&g, &sk, &lib).unwrap());
    inst.advance(0.25);
    let out = eval(&sk, &mut inst);
    let (pa, pb, pd) =
        (sample(&sk, &lib["a"], 0.25), sample(&sk, &lib["b"], 0.25), sample(&sk, &lib["d"], 0.25));
    for i in 0..sk.bone_count() {
        let t = pa[i].translation + (pb[i].translation - pd[i].translation);
        assert!(out[i].translation.abs_diff_eq(t, 1e-6));
        let r = pa[i].rotation * (pd[i].rotation.conjugate() * pb[i].rotation);
        assert!(out[i].rotation.abs_diff_eq(r, 1e-5) || out[i].rotation.abs_diff_eq(-r, 1e-5));
    }
}

fn mask_graph(subtrees: Vec<MaskSubtree>, weight: f32) -> (AnimGraph, NodeId) {
    let mut g = AnimGraph::new();
    let base = clip_node(&mut g, "a");
    let layer = clip_node(&mut g, "b");
    let m = g.add_node(NodeKind::Mask { weight, subtrees }, [0.0, 0.0]);
    g.connect(base, m, "base");
    g.connect(layer, m, "layer");
    output(&mut g, m);
    (g, m)
}

#[test]
fn mask_with_weight_zero_on_a_subtree_leaves_it_at_the_base() {
    let sk = rig();
    let lib = library(&sk);
    // Whole rig to the layer, except the chain under bone9, held at weight 0.
    let (g, _) = mask_graph(
        vec![
            MaskSubtree { bone: "bone0".into(), weight: 1.0, falloff: 0.0 },
            MaskSubtree { bone: "bone9".into(), weight: 0.0, falloff: 0.0 },
        ],
        1.0,
    );
    let mut inst = run(&sk, compile(&g, &sk, &lib).unwrap());
    inst.advance(0.7);
    let out = eval(&sk, &mut inst);
    let (pa, pb) = (sample(&sk, &lib["a"], 0.7), sample(&sk, &lib["b"], 0.7));
    let b9 = sk.index_of("bone9").unwrap();
    for i in 0..sk.bone_count() {
        if sk.is_in_subtree(b9, i) {
            assert_eq!(out[i], pa[i], "bone {i} in the masked-out subtree");
        } else {
            assert_eq!(out[i], pb[i], "bone {i}");
        }
    }
    // Falloff: bone1 at 1, bone2 at 0.5, bone3 and below at 0 (base); a weight-0 node is the base.
    let (g, _) = mask_graph(vec![MaskSubtree { bone: "bone1".into(), weight: 1.0, falloff: 0.5 }], 1.0);
    let mut inst = run(&sk, compile(&g, &sk, &lib).unwrap());
    inst.advance(0.7);
    let out = eval(&sk, &mut inst);
    assert_eq!(out[1], pb[1]);
    assert_eq!(out[2], blend(&sk, &pa, &pb, 0.5)[2]);
    for i in 3..=8 {
        assert_eq!(out[i], pa[i]);
    }
    assert_eq!(out[0], pa[0]);
    let (g, _) = mask_graph(vec![MaskSubtree { bone: "bone0".into(), weight: 1.0, falloff: 0.0 }], 0.0);
    let mut inst = run(&sk, compile(&g, &sk, &lib).unwrap());
    inst.advance(0.7);
    assert_eq!(eval(&sk, &mut inst), pa);
}

// ---------------------------------------------------------------------------------------------
// Adjust: model space, composition order
// ---------------------------------------------------------------------------------------------

/// hips -> spine -> neck -> head, each 1 unit along +Y; a clip holding the hips yawed a quarter
/// turn about Y.
fn spine_rig() -> (Skeleton, Lib) {
    let up = Transform::from_translation(Vec3::Y);
    let sk = Skeleton::from_bind_pose(
        "spine",
        vec![
            ("hips".into(), NO_PARENT, Transform::IDENTITY),
            ("spine".into(), 0, up),
            ("neck".into(), 1, up),
            ("head".into(), 2, up),
        ],
    )
    .unwrap();
    let mut clip = Clip::new("yaw", &sk);
    clip.channels_mut()[0].rotation = Some(
        Track::from_keys(Interpolation::Linear, vec![0.0], vec![Quat::from_rotation_y(FRAC_PI_2)]).unwrap(),
    );
    clip.length = 1.0;
    let mut lib = Lib::new();
    lib.insert("yaw".into(), Arc::new(clip));
    (sk, lib)
}

fn rotate(bone: &str, axis: Vec3, amount: Drive) -> AdjustEntry {
    AdjustEntry { bone: bone.into(), op: AdjustOp::Rotate { axis }, amount }
}

fn model_of(sk: &Skeleton, inst: &mut GraphInstance) -> Vec<Mat4> {
    let local = eval(sk, inst);
    let mut model = vec![Mat4::IDENTITY; sk.bone_count()];
    LocalToModelJob { parents: &sk.parents, local: &local, adjusts: inst.adjusts(), output: &mut model }
        .run()
        .unwrap();
    model
}

fn head_from_spine(model: &[Mat4]) -> Vec3 {
    model[3].w_axis.truncate() - model[1].w_axis.truncate()
}

#[test]
fn adjust_nodes_act_in_model_space_with_the_hips_yawed() {
    let (sk, lib) = spine_rig();
    let mut g = AnimGraph::new();
    g.add_parameter("bend", ParamValue::Float(FRAC_PI_2));
    let clip = clip_node(&mut g, "yaw");
    let adj = g.add_node(
        NodeKind::Adjust { entries: vec![rotate("spine", Vec3::X, Drive::Parameter("bend".into()))] },
        [0.0, 0.0],
    );
    g.connect(clip, adj, "pose");
    output(&mut g, adj);
    let mut inst = run(&sk, compile(&g, &sk, &lib).unwrap());
    inst.advance(0.1);
    let model = model_of(&sk, &mut inst);
    // Hips yawed: the hips' own X axis is model -Z, but the bend is about MODEL X: head to +Z.
    assert!(model[0].x_axis.truncate().abs_diff_eq(-Vec3::Z, 1e-6));
    let d = head_from_spine(&model);
    assert!(d.abs_diff_eq(Vec3::new(0.0, 0.0, 2.0), 1e-5), "{d}");
    // Driven by the parameter: zero bend, head straight up.
    inst.set_float("bend", 0.0);
    let d = head_from_spine(&model_of(&sk, &mut inst));
    assert!(d.abs_diff_eq(Vec3::new(0.0, 2.0, 0.0), 1e-5), "{d}");
}

#[test]
fn adjust_nodes_compose_in_graph_order() {
    let (sk, lib) = spine_rig();
    let mut g = AnimGraph::new();
    let clip = clip_node(&mut g, "yaw");
    let first = g.add_node(
        NodeKind::Adjust { entries: vec![rotate("spine", Vec3::X, Drive::Constant(FRAC_PI_2))] },
        [0.0, 0.0],
    );
    let second = g.add_node(
        NodeKind::Adjust { entries: vec![rotate("spine", Vec3::Y, Drive::Constant(-FRAC_PI_2))] },
        [0.0, 0.0],
    );
    g.connect(clip, first, "pose");
    g.connect(first, second, "pose");
    output(&mut g, second);
    let mut inst = run(&sk, compile(&g, &sk, &lib).unwrap());
    inst.advance(0.1);
    // First the bend (+Y -> +Z), then the yaw about model Y by -90 degrees (+Z -> -X).
    let d = head_from_spine(&model_of(&sk, &mut inst));
    assert!(d.abs_diff_eq(Vec3::new(-2.0, 0.0, 0.0), 1e-5), "{d}");
    assert_eq!(inst.adjusts().len(), 2);
    // Reversed order: the yaw leaves +Y alone, then the bend: +Z.
    let mut g2 = AnimGraph::new();
    let clip = clip_node(&mut g2, "yaw");
    let yaw = g2.add_node(
        NodeKind::Adjust { entries: vec![rotate("spine", Vec3::Y, Drive::Constant(-FRAC_PI_2))] },
        [0.0, 0.0],
    );
    let bend = g2.add_node(
        NodeKind::Adjust { entries: vec![rotate("spine", Vec3::X, Drive::Constant(FRAC_PI_2))] },
        [0.0, 0.0],
    );
    g2.connect(clip, yaw, "pose");
    g2.connect(yaw, bend, "pose");
    output(&mut g2, bend);
    let mut inst = run(&sk, compile(&g2, &sk, &lib).unwrap());
    inst.advance(0.1);
    let d = head_from_spine(&model_of(&sk, &mut inst));
    assert!(d.abs_diff_eq(Vec3::new(0.0, 0.0, 2.0), 1e-5), "{d}");
}

#[test]
fn adjust_through_a_half_blend_applies_half() {
    let (sk, lib) = spine_rig();
    let mut g = AnimGraph::new();
    let a = clip_node(&mut g, "yaw");
    let b = clip_node(&mut g, "yaw");
    let adj = g.add_node(
        NodeKind::Adjust { entries: vec![rotate("spine", Vec3::X, Drive::Constant(FRAC_PI_2))] },
        [0.0, 0.0],
    );
    g.connect(b, adj, "pose");
    let n = blend2(&mut g, a, adj, 0.5);
    output(&mut g, n);
    let mut inst = run(&sk, compile(&g, &sk, &lib).unwrap());
    inst.advance(0.1);
    let _ = eval(&sk, &mut inst);
    let adjusts = inst.adjusts();
    assert_eq!(adjusts.len(), 1);
    let expect = Quat::from_rotation_x(FRAC_PI_2 * 0.5);
    assert!(adjusts[0].rotation.abs_diff_eq(expect, 1e-5), "{:?}", adjusts[0].rotation);
}

// ---------------------------------------------------------------------------------------------
// Slots, markers, time scale, cache
// ---------------------------------------------------------------------------------------------

#[test]
fn programs_reuse_slots() {
    let sk = rig();
    let lib = library(&sk);
    // Four-clip blend space: destination plus two scratch slots.
    let mut g = AnimGraph::new();
    let s = blend_space(&mut g, &[("a", 0.0), ("b", 1.0), ("c", 2.0), ("d", 3.0)]);
    output(&mut g, s);
    let p = compile(&g, &sk, &lib).unwrap();
    assert_eq!(p.slot_count(), 3);
    assert_eq!(p.instructions().len(), 1);
    // A chain of Blend2 over four clips: three slots.
    let mut g = AnimGraph::new();
    let c: Vec<NodeId> = ["a", "b", "c", "d"].iter().map(|c| clip_node(&mut g, c)).collect();
    let ab = blend2(&mut g, c[0], c[1], 0.5);
    let abc = blend2(&mut g, ab, c[2], 0.5);
    let abcd = blend2(&mut g, abc, c[3], 0.5);
    output(&mut g, abcd);
    let p = compile(&g, &sk, &lib).unwrap();
    assert_eq!(p.instructions().len(), 7);
    assert_eq!(p.slot_count(), 3);
    // A balanced tree of Blend2 over four clips: four slots (not seven).
    let mut g = AnimGraph::new();
    let c: Vec<NodeId> = ["a", "b", "c", "d"].iter().map(|c| clip_node(&mut g, c)).collect();
    let ab = blend2(&mut g, c[0], c[1], 0.5);
    let cd = blend2(&mut g, c[2], c[3], 0.5);
    let all = blend2(&mut g, ab, cd, 0.5);
    output(&mut g, all);
    let p = compile(&g, &sk, &lib).unwrap();
    assert_eq!(p.instructions().len(), 7);
    assert_eq!(p.slot_count(), 4);
    // And it still evaluates to the nested blend.
    let mut inst = run(&sk, p);
    inst.advance(0.2);
    let pose = |c: &str| sample(&sk, &lib[c], 0.2);
    let expect =
        blend(&sk, &blend(&sk, &pose("a"), &pose("b"), 0.5), &blend(&sk, &pose("c"), &pose("d"), 0.5), 0.5);
    assert_eq!(eval(&sk, &mut inst), expect);
}

fn marked(sk: &Skeleton, name: &str, marker: &str, at: f32, seconds: f32) -> Arc<Clip> {
    let mut c = dense_clip(sk, name, seconds, 30.0, 0);
    c.add_marker(marker, at);
    Arc::new(c)
}

fn names(inst: &GraphInstance) -> Vec<String> {
    inst.events().iter().map(|e| e.name().to_owned()).collect()
}

#[test]
fn markers_come_from_the_dominant_clip_once_per_crossing() {
    let sk = rig();
    let mut lib = library(&sk);
    lib.insert("ma".into(), marked(&sk, "ma", "step_a", 0.25, 1.0));
    lib.insert("mb".into(), marked(&sk, "mb", "step_b", 0.25, 1.0));
    let mut g = AnimGraph::new();
    g.add_parameter("w", ParamValue::Float(0.3));
    let a = clip_node(&mut g, "ma");
    let b = clip_node(&mut g, "mb");
    let n = blend2(&mut g, a, b, 0.0);
    let p = g.add_node(NodeKind::Parameter { name: "w".into() }, [0.0, 0.0]);
    g.connect(p, n, "weight");
    output(&mut g, n);
    let mut inst = run(&sk, compile(&g, &sk, &lib).unwrap());
    // Landing exactly on the marker announces it once; moving off announces nothing.
    inst.advance(0.25);
    assert_eq!(names(&inst), vec!["step_a"]);
    assert_eq!(inst.events()[0].node, a);
    inst.advance(0.25);
    assert!(inst.events().is_empty());
    // Two laps at 60 Hz at weight 0.3: a speaks twice, b never.
    let mut all = Vec::new();
    for _ in 0..120 {
        inst.advance(1.0 / 60.0);
        all.extend(names(&inst));
    }
    assert_eq!(all, vec!["step_a", "step_a"]);
    // At 0.5 (a tie) and above, only b speaks.
    inst.set_float("w", 0.5);
    let mut all = Vec::new();
    for _ in 0..120 {
        inst.advance(1.0 / 60.0);
        all.extend(names(&inst));
    }
    assert_eq!(all, vec!["step_b", "step_b"]);
    assert_eq!(inst.node_weight(a), Some((0.5, false)));
    assert_eq!(inst.node_weight(b), Some((0.5, true)));
    // advance_with(.., false): nobody speaks.
    inst.advance_with(1.0, false);
    assert!(inst.events().is_empty());
}

#[test]
fn blend_space_markers_come_from_the_heavier_member() {
    let sk = rig();
    let mut lib = library(&sk);
    lib.insert("walk".into(), marked(&sk, "walk", "walk_step", 0.5, 1.0));
    lib.insert("run".into(), marked(&sk, "run", "run_step", 0.25, 0.5));
    let mut g = AnimGraph::new();
    g.add_parameter("x", ParamValue::Float(0.4));
    let s = blend_space(&mut g, &[("walk", 0.0), ("run", 1.0)]);
    let p = g.add_node(NodeKind::Parameter { name: "x".into() }, [0.0, 0.0]);
    g.connect(p, s, "position");
    output(&mut g, s);
    let mut inst = run(&sk, compile(&g, &sk, &lib).unwrap());
    let mut all = Vec::new();
    // One full phase cycle takes 1 / (0.6 / 1 + 0.4 / 0.5) = 0.714 s: ~43 ticks; run two cycles.
    for _ in 0..86 {
        inst.advance(1.0 / 60.0);
        all.extend(names(&inst));
    }
    assert_eq!(all, vec!["walk_step", "walk_step"]);
    inst.set_float("x", 0.6);
    let mut all = Vec::new();
    for _ in 0..80 {
        inst.advance(1.0 / 60.0);
        all.extend(names(&inst));
    }
    assert_eq!(all, vec!["run_step", "run_step"]);
}

#[test]
fn time_scale_scales_everything_upstream() {
    let sk = rig();
    let lib = library(&sk);
    let mut g = AnimGraph::new();
    g.add_parameter("rate", ParamValue::Float(2.0));
    let a = clip_node(&mut g, "a");
    let ts = g.add_node(NodeKind::TimeScale { scale: 1.0 }, [0.0, 0.0]);
    let p = g.add_node(NodeKind::Parameter { name: "rate".into() }, [0.0, 0.0]);
    g.connect(a, ts, "pose");
    g.connect(p, ts, "scale");
    output(&mut g, ts);
    let program = compile(&g, &sk, &lib).unwrap();
    assert_eq!(program.slot_count(), 1);
    let mut inst = run(&sk, program);
    inst.advance(0.25);
    assert_eq!(inst.player_time(a), Some(0.5));
    inst.set_float("rate", 0.0);
    inst.advance(0.25);
    assert_eq!(inst.player_time(a), Some(0.5));
    assert_eq!(eval(&sk, &mut inst), sample(&sk, &lib["a"], 0.5));
}

#[test]
fn cache_recompiles_only_when_the_revision_or_skeleton_changes() {
    let sk = Arc::new(rig());
    let lib = library(&sk);
    let mut g = AnimGraph::new();
    let a = clip_node(&mut g, "a");
    let b = clip_node(&mut g, "b");
    let n = blend2(&mut g, a, b, 0.5);
    output(&mut g, n);
    let mut cache = GraphCache::new();
    let p1 = cache.get(1, &g, &sk, &lib).unwrap();
    let p2 = cache.get(1, &g.clone(), &sk, &lib).unwrap();
    assert!(Arc::ptr_eq(&p1, &p2));
    assert_eq!(cache.compile_count(), 1);
    g.node_mut(n).unwrap().kind = NodeKind::Blend2 { weight: 0.25 };
    let p3 = cache.get(2, &g, &sk, &lib).unwrap();
    assert!(!Arc::ptr_eq(&p1, &p3));
    assert_eq!(cache.compile_count(), 2);
    // Errors are cached too; the editor can ask every frame.
    g.remove_node(b);
    assert!(cache.get(3, &g, &sk, &lib).is_err());
    assert!(cache.get(3, &g, &sk, &lib).is_err());
    assert_eq!(cache.compile_count(), 3);
    cache.invalidate();
    assert!(cache.get(3, &g, &sk, &lib).is_err());
    assert_eq!(cache.compile_count(), 4);
    // Another skeleton (a new Arc) recompiles at the same revision.
    let other = Arc::new(rig());
    let _ = cache.get(3, &g, &other, &lib);
    assert_eq!(cache.compile_count(), 5);
}

#[test]
fn evaluate_rejects_the_wrong_skeleton_without_panicking() {
    let sk = rig();
    let lib = library(&sk);
    let mut g = AnimGraph::new();
    let a = clip_node(&mut g, "a");
    output(&mut g, a);
    let mut inst = run(&sk, compile(&g, &sk, &lib).unwrap());
    let other = chain_skeleton(8);
    let mut out = vec![Transform::IDENTITY; 24];
    assert!(inst.evaluate(&other, &mut out).is_err());
    let mut short = vec![Transform::IDENTITY; 3];
    assert!(inst.evaluate(&sk, &mut short).is_err());
}

#[test]
fn a_hundred_thousand_node_chain_and_cycle_are_checked_in_near_linear_work() {
    // A TimeScale chain 100,000 long feeding the Output, then the same chain closed into a
    // cycle: the structural pass, the node checks and the file loader visit each node and wire
    // a bounded number of times (quadratic passes would take hours here).
    // (Built with pushes: `add_node` and `connect` keep their own invariants by scanning, which
    // is what an editor's single edit wants, not a 100,000-node build.)
    let n = 100_000u32;
    let node = |id: u32, kind: NodeKind| Node { id: NodeId(id), position: [0.0, 0.0], kind };
    let wire = |from: u32, to: u32| Connection { from: NodeId(from), to: NodeId(to), pin: "pose".into() };
    let mut g = AnimGraph::new();
    g.nodes.push(node(0, NodeKind::Clip { clip: "a".into(), speed: 1.0, looping: true }));
    for i in 1..=n {
        g.nodes.push(node(i, NodeKind::TimeScale { scale: 1.0 }));
        g.connections.push(wire(i - 1, i));
    }
    g.nodes.push(node(n + 1, NodeKind::Output));
    g.connections.push(wire(n, n + 1));
    let (first, prev, n) = (NodeId(1), NodeId(n), n as usize);
    let (errors, order) = marrow_engine::graph::compile::validate_structure(&g);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(order.map(|o| o.len()), Some(n + 2));
    let text = save_graph(&g).unwrap();
    let (loaded, faults) = load_graph(&text).unwrap();
    assert!(faults.is_empty());
    assert_eq!(loaded.nodes.len(), n + 2);
    // Close it: the last TimeScale feeds the first.
    g.connect(prev, first, "pose");
    let (errors, _) = marrow_engine::graph::compile::validate_structure(&g);
    let cycle = errors.iter().find(|e| matches!(e, GraphError::Cycle { .. })).expect("the cycle is named");
    let GraphError::Cycle { cycle: ids, .. } = cycle else { unreachable!() };
    assert_eq!(ids.len(), n);
    let text = cycle.to_string();
    assert!(text.contains(&format!("({n} nodes)")) && text.len() < 200, "{text}");
}
