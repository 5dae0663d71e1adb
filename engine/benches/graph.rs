//! Blend graph benchmarks: `cargo bench -p marrow-engine --bench graph`.
//!
//! `graph/blendspace4/64`: a BlendSpace1D of four clips (T, R and S keyed at 30 Hz; 2, 2.5, 3 and
//! 1.5 s long) on the 64-joint synthetic skeleton (a root plus chains of 8), its axis parameter
//! between two samples, played forward at 60 Hz. One iteration is one tick of one character:
//! `GraphInstance::advance` (phase sync, markers) and `GraphInstance::evaluate` (two samples and
//! a blend into the local pose). Throughput is in joints, so time per element is ns/joint.

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use marrow_engine::clip::Clip;
use marrow_engine::graph::{AnimGraph, BlendSample, GraphInstance, NodeKind, ParamValue, compile};
use marrow_engine::math::Transform;
use marrow_engine::synthetic::{chain_skeleton, dense_clip};

const DT: f32 = 1.0 / 60.0;

fn graph(c: &mut Criterion) {
    let mut g = c.benchmark_group("graph");
    let n = 64usize;
    let sk = chain_skeleton(n);
    let mut lib: HashMap<String, Arc<Clip>> = HashMap::new();
    for (i, seconds) in [2.0f32, 2.5, 3.0, 1.5].into_iter().enumerate() {
        let name = format!("clip{i}");
        lib.insert(name.clone(), Arc::new(dense_clip(&sk, &name, seconds, 30.0, i as u32)));
    }
    let mut graph = AnimGraph::new();
    graph.add_parameter("speed", ParamValue::Float(1.3));
    let samples =
        (0..4).map(|i| BlendSample { clip: format!("clip{i}"), position: i as f32, speed: 1.0 }).collect();
    let space = graph.add_node(NodeKind::BlendSpace1D { samples, position: 0.0, looping: true }, [0.0, 0.0]);
    let p = graph.add_node(NodeKind::Parameter { name: "speed".into() }, [0.0, 0.0]);
    let out = graph.add_node(NodeKind::Output, [0.0, 0.0]);
    graph.connect(p, space, "position");
    graph.connect(space, out, "pose");
    let program = Arc::new(compile(&graph, &sk, &lib).unwrap_or_else(|e| panic!("{e:?}")));
    let mut inst = GraphInstance::new(program);
    let mut local = vec![Transform::IDENTITY; n];
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function(BenchmarkId::new("blendspace4", n), |bench| {
        bench.iter(|| {
            inst.advance(DT);
            inst.evaluate(&sk, &mut local).unwrap();
            black_box(&local);
        })
    });
    g.finish();
}

criterion_group!(benches, graph);
criterion_main!(benches);
