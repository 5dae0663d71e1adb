//! State machine benchmarks: `cargo bench -p marrow-engine --bench state_machine`.
//!
//! What a machine costs over the states it samples, on the 64-joint synthetic skeleton (clips
//! keyed at 30 Hz, 1 to 2.4 s long), played forward at 60 Hz:
//! - `state_machine/plain/64`: a graph playing one clip (Clip -> Output), one tick of one
//!   character (`advance` + `evaluate`);
//! - `state_machine/machine/64`: a StateMachine of 8 states (each one clip) and 20 transitions
//!   (a ring of 8 on `speed`, 8 back on `speed`, 2 from Any State on a trigger and a bool, 2 with
//!   exit times), resting in one state: the same one clip sampled, plus the machine's tick (its
//!   conditions tried) and its state's own program;
//! - `state_machine/crowd/plain` and `state_machine/crowd/machine`: 1,000 characters each
//!   running the above, one thread, one tick of all of them per iteration.
//!
//! - `state_machine/overhead/64`: `machine - plain` measured directly (chunks of 256 ticks of
//!   each, interleaved, the difference reported per tick).
//!
//! The machine's overhead per character per tick is `overhead` (BENCHMARKS.md). Whole
//! ticks: sampling, the machine, the copy into the local pose; no model-space pass or skinning.

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use marrow_engine::clip::Clip;
use marrow_engine::graph::machine::{Condition, State, StateMachine, StateSource, Test, Transition};
use marrow_engine::graph::{AnimGraph, GraphInstance, NodeKind, ParamValue, compile};
use marrow_engine::math::Transform;
use marrow_engine::skeleton::Skeleton;
use marrow_engine::synthetic::{chain_skeleton, dense_clip};

const DT: f32 = 1.0 / 60.0;
const CROWD: usize = 1000;

fn when(from: Option<&str>, to: &str, conditions: &[(&str, Test)]) -> Transition {
    let mut t = Transition::new(from, to);
    t.conditions =
        conditions.iter().map(|(p, test)| Condition { parameter: (*p).into(), test: *test }).collect();
    t
}

/// 8 states, 20 transitions (see the module docs); `speed` 0 keeps it in S0.
fn machine() -> StateMachine {
    let name = |i: usize| format!("S{i}");
    let states = (0..8)
        .map(|i| State {
            name: name(i),
            source: StateSource::Clip { clip: format!("clip{i}"), speed: 1.0, looping: true },
            at: [0.0; 2],
        })
        .collect();
    let mut transitions = Vec::new();
    for i in 0..8 {
        let up = (i + 1) as f32;
        transitions.push(when(Some(&name(i)), &name((i + 1) % 8), &[("speed", Test::Greater(up))]));
        transitions.push(when(Some(&name((i + 1) % 8)), &name(i), &[("speed", Test::Less(-up))]));
    }
    transitions.push(when(None, "S7", &[("jump", Test::Triggered), ("grounded", Test::IsTrue)]));
    transitions.push(when(None, "S6", &[("grounded", Test::IsFalse)]));
    for (from, to) in [("S0", "S4"), ("S4", "S0")] {
        let mut t = when(Some(from), to, &[("speed", Test::AtLeast(100.0))]);
        t.exit_time = Some(0.5);
        transitions.push(t);
    }
    StateMachine { states, entry: "S0".into(), transitions, any_at: [0.0; 2] }
}

fn output(g: &mut AnimGraph, kind: NodeKind) {
    let n = g.add_node(kind, [0.0; 2]);
    let o = g.add_node(NodeKind::Output, [0.0; 2]);
    g.connect(n, o, "pose");
}

fn instances(sk: &Skeleton, lib: &HashMap<String, Arc<Clip>>) -> (GraphInstance, GraphInstance) {
    let mut plain = AnimGraph::new();
    output(&mut plain, NodeKind::Clip { clip: "clip0".into(), speed: 1.0, looping: true });
    let mut g = AnimGraph::new();
    g.add_parameter("speed", ParamValue::Float(0.0));
    g.add_parameter("grounded", ParamValue::Bool(true));
    g.add_parameter("jump", ParamValue::Trigger(false));
    let m = machine();
    assert_eq!((m.states.len(), m.transitions.len()), (8, 20));
    output(&mut g, NodeKind::StateMachine { machine: m });
    let compiled = |g: &AnimGraph| Arc::new(compile(g, sk, lib).unwrap_or_else(|e| panic!("{e:?}")));
    (GraphInstance::new(compiled(&plain)), GraphInstance::new(compiled(&g)))
}

fn state_machine(c: &mut Criterion) {
    let mut g = c.benchmark_group("state_machine");
    let n = 64usize;
    let sk = chain_skeleton(n);
    let lib: HashMap<String, Arc<Clip>> = (0..8)
        .map(|i| {
            let name = format!("clip{i}");
            let clip = dense_clip(&sk, &name, 1.0 + 0.2 * i as f32, 30.0, i as u32);
            (name, Arc::new(clip))
        })
        .collect();
    let (plain, machine) = instances(&sk, &lib);
    let mut local = vec![Transform::IDENTITY; n];
    g.throughput(Throughput::Elements(1));
    for (label, inst) in [("plain", plain.clone()), ("machine", machine.clone())] {
        let mut inst = inst;
        g.bench_function(BenchmarkId::new(label, n), |b| {
            b.iter(|| {
                inst.advance(DT);
                inst.evaluate(&sk, &mut local).unwrap();
                black_box(&local);
            })
        });
    }
    // The machine's cost over the plain graph, measured directly: chunks of machine ticks and of
    // plain ticks interleaved (so drift of the machine's clock cancels), the difference reported.
    let (mut p, mut m) = (plain.clone(), machine.clone());
    g.bench_function(BenchmarkId::new("overhead", n), |b| {
        b.iter_custom(|iters| {
            let (mut tm, mut tp) = (Duration::ZERO, Duration::ZERO);
            let mut left = iters;
            while left > 0 {
                let k = left.min(256);
                left -= k;
                for (inst, total) in [(&mut m, &mut tm), (&mut p, &mut tp)] {
                    let t0 = Instant::now();
                    for _ in 0..k {
                        inst.advance(DT);
                        inst.evaluate(&sk, &mut local).unwrap();
                        black_box(&local);
                    }
                    *total += t0.elapsed();
                }
            }
            tm.saturating_sub(tp)
        })
    });
    g.throughput(Throughput::Elements(CROWD as u64));
    for (label, inst) in [("plain", plain), ("machine", machine)] {
        let mut crowd = vec![inst; CROWD];
        for (k, c) in crowd.iter_mut().enumerate() {
            c.advance(k as f32 * 0.013);
        }
        let mut poses = vec![Transform::IDENTITY; n * CROWD];
        g.bench_function(BenchmarkId::new("crowd", label), |b| {
            b.iter(|| {
                for (c, out) in crowd.iter_mut().zip(poses.chunks_exact_mut(n)) {
                    c.advance(DT);
                    c.evaluate(&sk, out).unwrap();
                }
                black_box(&poses);
            })
        });
    }
    g.finish();
}

criterion_group!(benches, state_machine);
criterion_main!(benches);
