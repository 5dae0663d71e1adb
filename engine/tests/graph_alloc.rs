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
