//! A state machine allocates nothing per tick: a counting global allocator watches 600 ticks
//! (transitions with blends, interruptions, triggers, marker sync, state events) after a
//! warm-up. Its own test binary: the counter is process-wide, so it shares its process with no
//! other test.

use std::collections::HashMap;
use std::sync::Arc;

use marrow_engine::clip::Clip;
use marrow_engine::graph::*;
use marrow_engine::math::Transform;
use marrow_engine::synthetic::{chain_skeleton, dense_clip};

mod support;
use support::{Counting, allocations};

#[global_allocator]
static GLOBAL: Counting = Counting;

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
