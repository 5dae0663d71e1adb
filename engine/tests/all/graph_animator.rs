//! The Animator playing graphs: crossfades clip -> graph, graph -> clip, graph -> graph, the
//! crossfade table's rules for graphs, markers and model-space adjusts through the Animator.

use crate::support;
use support::{RigBuffers, blend, sample};

use std::collections::HashMap;
use std::f32::consts::FRAC_PI_2;
use std::sync::Arc;

use glam::{Quat, Vec3};
use marrow_engine::animator::{Animator, AnimatorSettings};
use marrow_engine::clip::Clip;
use marrow_engine::graph::*;
use marrow_engine::math::Transform;
use marrow_engine::pose::BoneAdjust;
use marrow_engine::skeleton::{NO_PARENT, Skeleton};
use marrow_engine::synthetic::{chain_skeleton, dense_clip};
use marrow_engine::track::{Interpolation, Track};

type Lib = HashMap<String, Arc<Clip>>;

fn setup() -> (Arc<Skeleton>, Lib) {
    let sk = Arc::new(chain_skeleton(16));
    let mut lib = Lib::new();
    lib.insert("a".into(), Arc::new(dense_clip(&sk, "a", 2.0, 30.0, 0)));
    lib.insert("b".into(), Arc::new(dense_clip(&sk, "b", 2.0, 30.0, 1)));
    let mut m = dense_clip(&sk, "m", 1.0, 30.0, 2);
    m.add_marker("step", 0.5);
    lib.insert("m".into(), Arc::new(m));
    (sk, lib)
}

/// A graph playing one clip (so its pose is that clip's, exactly).
fn single(sk: &Skeleton, lib: &Lib, path: &str) -> (Arc<GraphProgram>, NodeId) {
    let mut g = AnimGraph::new();
    let c = g.add_node(NodeKind::Clip { clip: path.into(), speed: 1.0, looping: true }, [0.0, 0.0]);
    let o = g.add_node(NodeKind::Output, [0.0, 0.0]);
    g.connect(c, o, "pose");
    (Arc::new(compile(&g, sk, lib).unwrap()), c)
}

#[test]
fn clip_to_graph_to_clip_crossfades() {
    let (sk, lib) = setup();
    let n = sk.bone_count();
    let settings = AnimatorSettings {
        clip: Some(lib["a"].clone()),
        speed: 1.0,
        play_on_start: true,
        ..Default::default()
    };
    let mut anim = Animator::new(sk.clone(), settings);
    let mut pose = RigBuffers::new(n);
    anim.advance(0.5);
    let (program, clip_b) = single(&sk, &lib, "b");
    anim.cross_fade_to_graph(program.clone(), 0.5);
    assert!(anim.current_clip().is_none());
    assert!(anim.current_graph().is_some());
    assert!(Arc::ptr_eq(anim.outgoing_clip().unwrap(), &lib["a"]));
    anim.advance(0.25);
    assert_eq!(anim.fade_weight(), 0.5);
    anim.evaluate(pose.rig()).unwrap();
    let t_out = anim.outgoing_time().unwrap();
    let t_graph = anim.current_graph().unwrap().player_time(clip_b).unwrap();
    assert_eq!((t_out, t_graph), (0.75, 0.25));
    let expect = blend(&sk, &sample(&sk, &lib["a"], t_out), &sample(&sk, &lib["b"], t_graph), 0.5);
    assert_eq!(pose.local, expect);
    // Fade completes: the graph alone.
    anim.advance(0.25);
    assert!(anim.outgoing_clip().is_none());
    anim.evaluate(pose.rig()).unwrap();
    assert_eq!(pose.local, sample(&sk, &lib["b"], 0.5));
    // Graph -> clip.
    anim.cross_fade_to(lib["a"].clone(), 1.0, true);
    assert!(anim.outgoing_graph().is_some());
    assert!(anim.outgoing_clip().is_none());
    anim.advance(0.25);
    anim.evaluate(pose.rig()).unwrap();
    let expect = blend(&sk, &sample(&sk, &lib["b"], 0.75), &sample(&sk, &lib["a"], 0.25), 0.25);
    assert_eq!(pose.local, expect);
    anim.advance(1.0);
    assert!(anim.outgoing_graph().is_none());
    anim.evaluate(pose.rig()).unwrap();
    assert_eq!(pose.local, sample(&sk, &lib["a"], 1.25));
}

#[test]
fn graph_to_graph_follows_the_crossfade_table() {
    let (sk, lib) = setup();
    let n = sk.bone_count();
    let mut anim = Animator::new(sk.clone(), AnimatorSettings::default());
    let mut pose = RigBuffers::new(n);
    let (ga, _) = single(&sk, &lib, "a");
    let (gb, _) = single(&sk, &lib, "b");
    // No current head: a cut.
    anim.cross_fade_to_graph(ga.clone(), 0.5);
    assert!(anim.current_graph().is_some() && anim.outgoing_graph().is_none());
    anim.advance(0.5);
    // The graph already playing: left alone (no restart, no fade).
    anim.cross_fade_to_graph(ga.clone(), 0.5);
    assert!(anim.outgoing_graph().is_none());
    assert_eq!(anim.time(), 0.5);
    // Graph -> graph fade.
    anim.cross_fade_to_graph(gb.clone(), 1.0);
    assert!(Arc::ptr_eq(anim.outgoing_graph().unwrap().program(), &ga));
    anim.advance(0.5);
    anim.evaluate(pose.rig()).unwrap();
    let expect = blend(&sk, &sample(&sk, &lib["a"], 1.0), &sample(&sk, &lib["b"], 0.5), 0.5);
    assert_eq!(pose.local, expect);
    // Again mid-fade: the outgoing graph is dropped, the blend runs from the one being faded to.
    anim.cross_fade_to_graph(ga.clone(), 1.0);
    assert!(Arc::ptr_eq(anim.outgoing_graph().unwrap().program(), &gb));
    // The same graph, stopped: played again from its start.
    anim.play_graph(gb.clone());
    anim.advance(0.3);
    anim.stop();
    anim.cross_fade_to_graph(gb.clone(), 1.0);
    assert!(anim.is_playing());
    assert_eq!(anim.time(), 0.0);
    anim.evaluate(pose.rig()).unwrap();
    assert_eq!(pose.local, sample(&sk, &lib["b"], 0.0));
    // Parameters are reachable through the animator.
    assert!(!anim.current_graph_mut().unwrap().set_float("nope", 1.0));
}

#[test]
fn graph_markers_reach_the_animator_events() {
    let (sk, lib) = setup();
    let (gm, _) = single(&sk, &lib, "m");
    let mut anim = Animator::new(sk.clone(), AnimatorSettings::default());
    anim.play_graph(gm);
    let mut names = Vec::new();
    for _ in 0..120 {
        anim.advance(1.0 / 60.0);
        names.extend(anim.deliver_events().iter().map(|e| e.name().to_owned()));
    }
    assert_eq!(names, vec!["step", "step"]);
    // While fading out (weight of the outgoing graph below 0.5 after the first tick), it is silent.
    anim.cross_fade_to(lib["a"].clone(), 1.0 / 60.0, true);
    anim.deliver_events();
    for _ in 0..60 {
        anim.advance(1.0 / 60.0);
    }
    assert!(anim.deliver_events().is_empty());
}

#[test]
fn graph_adjusts_apply_in_model_space_through_the_animator() {
    let up = Transform::from_translation(Vec3::Y);
    let sk = Arc::new(
        Skeleton::from_bind_pose(
            "spine",
            vec![
                ("hips".into(), NO_PARENT, Transform::IDENTITY),
                ("spine".into(), 0, up),
                ("neck".into(), 1, up),
                ("head".into(), 2, up),
            ],
        )
        .unwrap(),
    );
    let mut clip = Clip::new("yaw", &sk);
    clip.channels_mut()[0].rotation = Some(
        Track::from_keys(Interpolation::Linear, vec![0.0], vec![Quat::from_rotation_y(FRAC_PI_2)]).unwrap(),
    );
    clip.length = 1.0;
    let mut lib = Lib::new();
    lib.insert("yaw".into(), Arc::new(clip));
    let mut g = AnimGraph::new();
    g.add_parameter("bend", ParamValue::Float(FRAC_PI_2));
    let c = g.add_node(NodeKind::Clip { clip: "yaw".into(), speed: 1.0, looping: true }, [0.0, 0.0]);
    let adj = g.add_node(
        NodeKind::Adjust {
            entries: vec![AdjustEntry {
                bone: "spine".into(),
                op: AdjustOp::Rotate { axis: Vec3::X },
                amount: Drive::Parameter("bend".into()),
            }],
        },
        [0.0, 0.0],
    );
    let o = g.add_node(NodeKind::Output, [0.0, 0.0]);
    g.connect(c, adj, "pose");
    g.connect(adj, o, "pose");
    let program = Arc::new(compile(&g, &sk, &lib).unwrap());
    let mut anim = Animator::new(sk.clone(), AnimatorSettings::default());
    anim.play_graph(program);
    anim.advance(0.1);
    let mut pose = RigBuffers::new(4);
    anim.evaluate(pose.rig()).unwrap();
    let head = |p: &RigBuffers| p.model[3].w_axis.truncate() - p.model[1].w_axis.truncate();
    assert!(head(&pose).abs_diff_eq(Vec3::new(0.0, 0.0, 2.0), 1e-5), "{}", head(&pose));
    // The animator's own adjusts apply after the graph's: a further model-space yaw of -90 degrees.
    anim.add_adjust(BoneAdjust::rotate(1, Quat::from_rotation_y(-FRAC_PI_2)));
    anim.evaluate(pose.rig()).unwrap();
    assert!(head(&pose).abs_diff_eq(Vec3::new(-2.0, 0.0, 0.0), 1e-5), "{}", head(&pose));
    assert_eq!(anim.adjusts().len(), 1);
    // A parameter set through the animator drives the adjust.
    anim.clear_adjusts();
    anim.current_graph_mut().unwrap().set_float("bend", 0.0);
    anim.evaluate(pose.rig()).unwrap();
    assert!(head(&pose).abs_diff_eq(Vec3::new(0.0, 2.0, 0.0), 1e-5), "{}", head(&pose));
}

#[test]
fn a_graph_for_another_rig_leaves_the_bind_pose() {
    let (sk, lib) = setup();
    let (program, _) = single(&sk, &lib, "a");
    let other = Arc::new(chain_skeleton(8));
    let mut anim = Animator::new(other.clone(), AnimatorSettings::default());
    anim.play_graph(program);
    assert!(anim.current_fault().is_some());
    anim.advance(0.1);
    let mut pose = RigBuffers::new(8);
    anim.evaluate(pose.rig()).unwrap();
    assert_eq!(pose.local, other.bind_pose);
}

#[test]
fn seeking_a_graph_replays_it_from_its_start() {
    let (sk, lib) = setup();
    let mut g = AnimGraph::new();
    let a = g.add_node(NodeKind::Clip { clip: "a".into(), speed: 1.0, looping: true }, [0.0, 0.0]);
    let b = g.add_node(NodeKind::Clip { clip: "m".into(), speed: 1.5, looping: true }, [0.0, 0.0]);
    let w = g.add_node(NodeKind::Parameter { name: "w".into() }, [0.0, 0.0]);
    let bl = g.add_node(NodeKind::Blend2 { weight: 0.0 }, [0.0, 0.0]);
    let o = g.add_node(NodeKind::Output, [0.0, 0.0]);
    g.add_parameter("w", ParamValue::Float(0.3));
    g.connect(a, bl, "a");
    g.connect(b, bl, "b");
    g.connect(w, bl, "weight");
    g.connect(bl, o, "pose");
    let program = Arc::new(compile(&g, &sk, &lib).unwrap());
    let n = sk.bone_count();

    // Reference: a bare instance advanced by 1.3 s from its start.
    let mut inst = GraphInstance::new(program.clone());
    inst.set_float("w", 0.7);
    inst.advance(1.3);
    let mut expected = vec![Transform::IDENTITY; n];
    inst.evaluate(&sk, &mut expected).unwrap();

    // The animator: played somewhere else first, then seeks back to 1.3 s with w = 0.7.
    let mut an = Animator::new(sk.clone(), AnimatorSettings::default());
    an.play_graph(program);
    an.current_graph_mut().unwrap().set_float("w", 0.7);
    for _ in 0..40 {
        an.advance(1.0 / 30.0);
    }
    an.deliver_events();
    an.seek(1.3);
    assert_eq!(an.time(), 1.3);
    assert_eq!(an.current_graph().unwrap().player_time(b), Some((1.3f32 * 1.5) % 1.0));
    let mut pose = RigBuffers::new(n);
    an.evaluate(pose.rig()).unwrap();
    assert_eq!(pose.local, expected, "a seek lands where a replay from the start does");
    assert!(an.deliver_events().is_empty(), "a seek announces no markers");
}
