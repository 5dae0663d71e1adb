//! Graph files: round trip, stable bytes, broken files load with errors and no panic.

use glam::Vec3;
use marrow_engine::graph::compile::GraphError;
use marrow_engine::graph::*;

/// A graph using every node kind.
fn every_kind() -> AnimGraph {
    let mut g = AnimGraph::new();
    g.add_parameter("speed", ParamValue::Float(0.5));
    g.add_parameter("aim_yaw", ParamValue::Float(0.0));
    g.add_parameter("crouch", ParamValue::Bool(false));
    let idle =
        g.add_node(NodeKind::Clip { clip: "clips/idle.clip".into(), speed: 1.0, looping: true }, [0.0, 0.0]);
    let space = g.add_node(
        NodeKind::BlendSpace1D {
            samples: vec![
                BlendSample { clip: "clips/walk.clip".into(), position: 1.0, speed: 1.0 },
                BlendSample { clip: "clips/run.clip".into(), position: 3.5, speed: 1.25 },
            ],
            position: 0.0,
            looping: true,
        },
        [10.0, 20.0],
    );
    let speed = g.add_node(NodeKind::Parameter { name: "speed".into() }, [-40.0, 20.0]);
    let blend = g.add_node(NodeKind::Blend2 { weight: 0.5 }, [80.0, 0.0]);
    let crouch = g.add_node(NodeKind::Parameter { name: "crouch".into() }, [-40.0, 60.0]);
    let lean = g.add_node(
        NodeKind::Clip { clip: "clips/lean.clip".into(), speed: -0.5, looping: false },
        [0.0, 90.0],
    );
    let add = g.add_node(NodeKind::Additive { weight: 1.0 }, [120.0, 0.0]);
    let mask = g.add_node(
        NodeKind::Mask {
            weight: 1.0,
            subtrees: vec![MaskSubtree { bone: "spine".into(), weight: 1.0, falloff: 0.25 }],
        },
        [160.0, 0.0],
    );
    let adjust = g.add_node(
        NodeKind::Adjust {
            entries: vec![
                AdjustEntry {
                    bone: "neck".into(),
                    op: AdjustOp::Rotate { axis: Vec3::Y },
                    amount: Drive::Parameter("aim_yaw".into()),
                },
                AdjustEntry {
                    bone: "head".into(),
                    op: AdjustOp::Orient { axis: Vec3::X },
                    amount: Drive::Constant(0.1),
                },
                AdjustEntry {
                    bone: "hips".into(),
                    op: AdjustOp::Offset { direction: Vec3::new(0.0, -1.0, 0.0) },
                    amount: Drive::Constant(0.2),
                },
                AdjustEntry { bone: "head".into(), op: AdjustOp::Scale, amount: Drive::Constant(1.1) },
            ],
        },
        [200.0, 0.0],
    );
    let ts = g.add_node(NodeKind::TimeScale { scale: 1.5 }, [240.0, 0.0]);
    let out = g.add_node(NodeKind::Output, [280.0, 0.0]);
    g.connect(speed, space, "position");
    g.connect(idle, blend, "a");
    g.connect(space, blend, "b");
    g.connect(crouch, blend, "weight");
    g.connect(blend, add, "base");
    g.connect(lean, add, "layer");
    g.connect(idle, add, "reference");
    g.connect(add, mask, "base");
    g.connect(lean, mask, "layer");
    g.connect(mask, adjust, "pose");
    g.connect(adjust, ts, "pose");
    g.connect(ts, out, "pose");
    g
}

#[test]
fn round_trip_is_exact_and_bytes_are_stable() {
    let g = every_kind();
    let text = save_graph(&g).unwrap();
    assert!(text.contains("version: 1"), "{text}");
    assert!(text.contains("kind: \"BlendSpace1D\""));
    assert!(text.contains("clip: \"clips/walk.clip\""));
    assert!(text.contains("pin: \"reference\""));
    let (back, errors) = load_graph(&text).unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(back, g);
    assert_eq!(save_graph(&back).unwrap(), text);
    assert_eq!(save_graph(&g.clone()).unwrap(), text);
    // The strict conversion accepts it too.
    let file: GraphFile = file::ron_options().from_str(&text).unwrap();
    assert_eq!(AnimGraph::try_from(file).unwrap(), g);
}

#[test]
fn syntax_errors_report_line_and_column() {
    let text =
        "(\n    version: 1,\n    nodes: [\n        (id: 0, kind: \"Output\" at: (0.0, 0.0)),\n    ],\n)\n";
    match load_graph(text) {
        Err(GraphFileError::Syntax { line, column, .. }) => {
            assert_eq!(line, 4);
            assert!(column > 20, "column {column}");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(load_graph(""), Err(GraphFileError::Syntax { .. })));
    assert!(matches!(load_graph("(version: 7)"), Err(GraphFileError::Version { found: 7, supported: 1 })));
    // A newer file whose fields this version cannot read is still reported by its version.
    let newer = "(version: 2, nodes: \"a newer layout\", connections: 3)";
    assert!(
        matches!(load_graph(newer), Err(GraphFileError::Version { found: 2, supported: 1 })),
        "{:?}",
        load_graph(newer).err()
    );
}

#[test]
fn broken_files_load_with_errors_on_their_nodes() {
    let text = r#"(
    version: 1,
    parameters: [],
    nodes: [
        (id: 0, kind: "Clip", at: (0.0, 0.0), clip: "clips/walk.clip"),
        (id: 1, kind: "Adjust", at: (0.0, 0.0), entries: []),
        (id: 2, kind: "TimeScale", at: (0.0, 0.0), scale: 1.0),
        (id: 3, kind: "Output", at: (0.0, 0.0)),
        (id: 4, kind: "Teleport", at: (5.0, 6.0), weight: 0.25, name: "far"),
        (id: 5, kind: "Clip", at: (0.0, 0.0)),
    ],
    connections: [
        (from: 1, to: 2, pin: "pose"),
        (from: 2, to: 1, pin: "pose"),
        (from: 2, to: 3, pin: "pose"),
        (from: 9, to: 3, pin: "extra"),
        (from: 4, to: 3, pin: "pose"),
        (from: 0, to: 2, pin: "scale"),
    ],
)"#;
    let (graph, errors) = load_graph(text).unwrap();
    assert_eq!(
        errors,
        vec![
            GraphFileError::UnknownNodeKind { node: NodeId(4), kind: "Teleport".into() },
            GraphFileError::MissingField { node: NodeId(5), kind: "Clip", field: "clip" },
            GraphFileError::Graph(GraphError::DanglingConnection {
                node: NodeId(3),
                title: "Output",
                pin: "extra".into(),
                missing: NodeId(9),
            }),
            GraphFileError::Graph(GraphError::PinTypeMismatch {
                node: NodeId(2),
                title: "TimeScale",
                pin: "scale".into(),
                expected: PinType::Float,
                from: NodeId(0),
                found: Some(PinType::Pose),
            }),
            GraphFileError::Graph(GraphError::Cycle {
                node: NodeId(1),
                title: "Adjust",
                cycle: vec![NodeId(1), NodeId(2)],
            }),
        ]
    );
    for e in &errors {
        assert!(e.node().is_some(), "{e}");
    }
    // What loaded: every node (the unknown one kept as written, the Clip missing its clip with an
    // empty one), the cycle and the mismatched wire kept for the editor to show, the dangling
    // connection dropped.
    let ids: Vec<u32> = graph.nodes.iter().map(|n| n.id.0).collect();
    assert_eq!(ids, vec![0, 1, 2, 3, 4, 5]);
    assert_eq!(graph.connections.len(), 5);
    assert!(
        matches!(&graph.node(NodeId(4)).unwrap().kind, NodeKind::Unknown { kind, .. } if kind == "Teleport")
    );
    assert!(matches!(&graph.node(NodeId(5)).unwrap().kind, NodeKind::Clip { clip, .. } if clip.is_empty()));
    // Saving writes the unknown node back with its settings and wires; it reloads the same.
    let saved = save_graph(&graph).unwrap();
    assert!(
        saved.contains("kind: \"Teleport\"") && saved.contains("weight: 0.25") && saved.contains("\"far\""),
        "{saved}"
    );
    let (again, again_errors) = load_graph(&saved).unwrap();
    assert_eq!(again, graph);
    // All but the dropped dangling wire and the missing field (saved as an empty clip path).
    assert_eq!(again_errors.len(), errors.len() - 2, "{again_errors:?}");
    // The compiler names the unknown node.
    let (structural, _) = marrow_engine::graph::compile::validate_structure(&graph);
    assert!(structural.contains(&GraphError::UnknownKind { node: NodeId(4), kind: "Teleport".into() }));
    // The strict conversion refuses it.
    let file: GraphFile = file::ron_options().from_str(text).unwrap();
    assert_eq!(AnimGraph::try_from(file).unwrap_err().len(), 5);
}

#[test]
fn garbage_never_panics() {
    let good = save_graph(&every_kind()).unwrap();
    // Every prefix of a good file, and a few mangled ones.
    for end in (0..good.len()).step_by(7) {
        if good.is_char_boundary(end) {
            let _ = load_graph(&good[..end]);
        }
    }
    for bad in [
        "(version: 1, nodes: [(id: 0, kind: 5)])",
        "[]",
        "(version: -1)",
        "(version: 1, connections: [(from: 0)])",
    ] {
        assert!(load_graph(bad).is_err(), "{bad}");
    }
}

#[test]
fn node_ids_are_never_reused_even_across_a_save_and_reload() {
    use marrow_engine::graph::{AnimGraph, NodeId, NodeKind};
    let mut g = AnimGraph::new();
    let a = g.add_node(NodeKind::Clip { clip: "c.clip.ron".into(), speed: 1.0, looping: true }, [0.0, 0.0]);
    let b = g.add_node(NodeKind::Blend2 { weight: 0.5 }, [1.0, 0.0]);
    let out = g.add_node(NodeKind::Output, [2.0, 0.0]);
    assert_eq!(g.connect(a, b, "a"), None, "nothing fed the pin");
    g.connect(b, out, "pose");
    let replaced = g.connect(a, out, "pose").expect("the wire from b is replaced");
    assert_eq!((replaced.from, replaced.to, replaced.pin.as_str()), (b, out, "pose"));
    let (node, wires) = g.remove_node(out).unwrap();
    assert_eq!(node.id, out);
    assert_eq!(wires.len(), 1, "the removed node's wire is reported");
    // The next id is past the removed one, and stays so through the file.
    let text = marrow_engine::graph::save_graph(&g).unwrap();
    let (mut back, errors) = marrow_engine::graph::load_graph(&text).unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(back, g);
    let fresh = back.add_node(NodeKind::Output, [3.0, 0.0]);
    assert_eq!(fresh, NodeId(out.0 + 1), "the removed node's id {out} is not given again");
}
