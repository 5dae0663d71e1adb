//! Graph evaluation allocates nothing per tick: a counting global allocator watches 600 ticks of
//! advance + evaluate (and the Animator playing the graph) after a warm-up.

use std::collections::HashMap;
use std::sync::Arc;

use glam::{Mat4, Vec3};
use marrow_engine::animator::{Animator, AnimatorSettings};
use marrow_engine::clip::Clip;
use marrow_engine::graph::*;
use marrow_engine::math::Transform;
use marrow_engine::pose::{LocalToModelJob, RigPoseMut};
use marrow_engine::synthetic::{chain_skeleton, dense_clip};

mod support;
use support::{Counting, allocations};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn evaluation_allocates_nothing_per_tick() {
    let sk = Arc::new(chain_skeleton(32));
    let mut lib: HashMap<String, Arc<Clip>> = HashMap::new();
    for (i, name) in ["a", "b", "c", "d"].iter().enumerate() {
        let mut clip = dense_clip(&sk, name, 1.0 + i as f32 * 0.5, 30.0, i as u32);
        clip.add_marker("step", 0.5);
        lib.insert((*name).into(), Arc::new(clip));
    }
    // Blend space -> Mask over a Clip -> Additive -> Adjust -> TimeScale -> Blend2 with a 2D blend
    // space -> Output.
    let mut g = AnimGraph::new();
    g.add_parameter("x", ParamValue::Float(0.0));
    g.add_parameter("aim", ParamValue::Float(0.0));
    let samples = ["a", "b", "c", "d"]
        .iter()
        .enumerate()
        .map(|(i, c)| BlendSample { clip: (*c).into(), position: i as f32, speed: 1.0 })
        .collect();
    let space = g.add_node(NodeKind::BlendSpace1D { samples, position: 0.0, looping: true }, [0.0, 0.0]);
    let x = g.add_node(NodeKind::Parameter { name: "x".into() }, [0.0, 0.0]);
    g.connect(x, space, "position");
    let layer = g.add_node(NodeKind::Clip { clip: "b".into(), speed: 1.0, looping: true }, [0.0, 0.0]);
    let mask = g.add_node(
        NodeKind::Mask {
            weight: 0.8,
            subtrees: vec![MaskSubtree { bone: "bone9".into(), weight: 1.0, falloff: 0.1 }],
        },
        [0.0, 0.0],
    );
    g.connect(space, mask, "base");
    g.connect(layer, mask, "layer");
    let add = g.add_node(NodeKind::Additive { weight: 0.5 }, [0.0, 0.0]);
    let reference = g.add_node(NodeKind::Clip { clip: "c".into(), speed: 1.0, looping: true }, [0.0, 0.0]);
    g.connect(mask, add, "base");
    g.connect(layer, add, "layer");
    g.connect(reference, add, "reference");
    let adjust = g.add_node(
        NodeKind::Adjust {
            entries: vec![AdjustEntry {
                bone: "bone2".into(),
                op: AdjustOp::Rotate { axis: Vec3::Y },
                amount: Drive::Parameter("aim".into()),
            }],
        },
        [0.0, 0.0],
    );
    g.connect(add, adjust, "pose");
    let ts = g.add_node(NodeKind::TimeScale { scale: 1.2 }, [0.0, 0.0]);
    g.connect(adjust, ts, "pose");
    // A 2D blend space on "x" and "aim" (inside its hull and, as x grows, outside it), blended
    // in at the end.
    let samples2d = [("a", (0.0, 0.0)), ("b", (1.0, 0.0)), ("c", (0.0, 0.5)), ("d", (2.0, 1.0))]
        .iter()
        .map(|(c, p)| BlendSample2D { clip: (*c).into(), position: *p, speed: 1.0 })
        .collect();
    let plane =
        g.add_node(NodeKind::BlendSpace2D { samples: samples2d, x: 0.0, y: 0.0, looping: true }, [0.0, 0.0]);
    g.connect(x, plane, "x");
    let aim = g.add_node(NodeKind::Parameter { name: "aim".into() }, [0.0, 0.0]);
    g.connect(aim, plane, "y");
    let last = g.add_node(NodeKind::Blend2 { weight: 0.5 }, [0.0, 0.0]);
    g.connect(ts, last, "a");
    g.connect(plane, last, "b");
    let out = g.add_node(NodeKind::Output, [0.0, 0.0]);
    g.connect(last, out, "pose");
    let program = Arc::new(compile(&g, &sk, &lib).unwrap());

    let n = sk.bone_count();
    let mut inst = GraphInstance::new(program.clone());
    let mut local = vec![Transform::IDENTITY; n];
    let mut model = vec![Mat4::IDENTITY; n];
    let mut palette = vec![Mat4::IDENTITY; n];
    let mut anim = Animator::new(sk.clone(), AnimatorSettings::default());
    anim.play_graph(program.clone());
    let mut tick = |k: usize, inst: &mut GraphInstance, anim: &mut Animator| {
        let x = (k as f32 * 0.01) % 3.0;
        inst.set_parameter(0, ParamValue::Float(x));
        inst.set_parameter(1, ParamValue::Float(x * 0.3));
        inst.advance(1.0 / 60.0);
        inst.evaluate(&sk, &mut local).unwrap();
        LocalToModelJob { parents: &sk.parents, local: &local, adjusts: inst.adjusts(), output: &mut model }
            .run()
            .unwrap();
        anim.current_graph_mut().unwrap().set_parameter(0, ParamValue::Float(x));
        anim.advance(1.0 / 60.0);
        anim.deliver_events();
        anim.evaluate(RigPoseMut { local: &mut local, model: &mut model, palette: &mut palette }).unwrap();
    };
    for k in 0..120 {
        tick(k, &mut inst, &mut anim);
    }
    let before = allocations();
    for k in 120..720 {
        tick(k, &mut inst, &mut anim);
    }
    let after = allocations();
    assert_eq!(after - before, 0, "allocations during 600 ticks");
}

/// A state machine allocates nothing per tick either: states, transitions with blends,
/// interruptions (a snapshot), triggers consumed, marker sync and state events, after a warm-up
/// that went through every path.
#[test]
fn a_state_machine_allocates_nothing_per_tick() {
    use marrow_engine::graph::machine::*;
    let sk = Arc::new(chain_skeleton(16));
    let mut lib: HashMap<String, Arc<Clip>> = HashMap::new();
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        let mut clip = dense_clip(&sk, name, 0.5 + i as f32 * 0.25, 30.0, i as u32);
        clip.add_marker("step", 0.2);
        lib.insert((*name).into(), Arc::new(clip));
    }
    let state = |name: &str, clip: &str| State {
        name: name.into(),
        source: StateSource::Clip { clip: clip.into(), speed: 1.0, looping: true },
        at: [0.0; 2],
    };
    let when = |from: Option<&str>, to: &str, p: &str, test: Test| {
        let mut t = Transition::new(from, to);
        t.conditions.push(Condition { parameter: p.into(), test });
        t.duration = 0.15;
        t.interruption = Interruption::Destination;
        t.sync = SyncRule::Markers;
        t
    };
    let machine = StateMachine {
        states: vec![state("A", "a"), state("B", "b"), state("C", "c")],
        entry: "A".into(),
        transitions: vec![
            when(Some("A"), "B", "x", Test::Greater(0.5)),
            when(Some("B"), "C", "x", Test::Greater(1.5)),
            when(Some("C"), "A", "x", Test::Less(0.5)),
            when(Some("B"), "A", "x", Test::Less(0.5)),
            when(None, "C", "go", Test::Triggered),
        ],
        any_at: [0.0; 2],
    };
    let mut g = AnimGraph::new();
    g.add_parameter("x", ParamValue::Float(0.0));
    g.add_parameter("go", ParamValue::Trigger(false));
    let m = g.add_node(NodeKind::StateMachine { machine }, [0.0, 0.0]);
    let out = g.add_node(NodeKind::Output, [0.0, 0.0]);
    g.connect(m, out, "pose");
    let program = Arc::new(compile(&g, &sk, &lib).unwrap());
    let mut inst = GraphInstance::new(program);
    let mut local = vec![Transform::IDENTITY; sk.bone_count()];
    let mut states = std::collections::HashSet::new();
    let mut tick = |k: usize, inst: &mut GraphInstance| {
        // x sweeps 0 -> 2 -> 0 every 90 ticks; a trigger every 37.
        let x = 2.0 - ((k % 90) as f32 / 22.5 - 2.0).abs();
        inst.set_parameter(0, ParamValue::Float(x));
        if k.is_multiple_of(37) {
            inst.set_parameter(1, ParamValue::Trigger(true));
        }
        inst.advance(1.0 / 60.0);
        inst.evaluate(&sk, &mut local).unwrap();
        inst.machines().next().map_or(0, |(_, m)| m.active_state())
    };
    for k in 0..400 {
        states.insert(tick(k, &mut inst));
    }
    assert_eq!(states.len(), 3, "the warm-up visited every state");
    let before = allocations();
    for k in 400..1000 {
        tick(k, &mut inst);
    }
    assert_eq!(allocations() - before, 0, "allocations during 600 ticks of a state machine");
}
