//! Every node kind, from its one description (`graph::kinds`): described consistently, saved
//! and read back, compiled and evaluated, naming its clips and parameters. The tests loop over
//! `NodeKind::examples()`, so a kind added without one of these fails here.

use std::collections::HashMap;
use std::sync::Arc;

use marrow_engine::clip::Clip;
use marrow_engine::graph::compile::GraphError;
use marrow_engine::graph::kinds::{EXAMPLE_BONE, EXAMPLE_CLIP, EXAMPLE_PARAMETER};
use marrow_engine::graph::*;
use marrow_engine::math::Transform;
use marrow_engine::synthetic::{chain_skeleton, dense_clip};

/// A graph holding `kind` with everything it needs to play: a clip on each pose pin, its output
/// into the Output (through a Blend2's weight for a float output), the example parameter declared.
fn graph_around(kind: &NodeKind) -> (AnimGraph, NodeId) {
    let mut g = AnimGraph::new();
    g.add_parameter(EXAMPLE_PARAMETER, ParamValue::Float(0.5));
    let n = g.add_node(kind.clone(), [100.0, 0.0]);
    let clip = |g: &mut AnimGraph| {
        g.add_node(NodeKind::Clip { clip: EXAMPLE_CLIP.into(), speed: 1.0, looping: true }, [0.0, 0.0])
    };
    for pin in kind.inputs() {
        if pin.ty == PinType::Pose {
            let c = clip(&mut g);
            g.connect(c, n, pin.name);
        }
    }
    let result = match kind.output() {
        Some(PinType::Pose) => Some(n),
        Some(PinType::Float) => {
            let (a, b) = (clip(&mut g), clip(&mut g));
            let blend = g.add_node(NodeKind::Blend2 { weight: 0.0 }, [200.0, 0.0]);
            g.connect(a, blend, "a");
            g.connect(b, blend, "b");
            g.connect(n, blend, "weight");
            Some(blend)
        }
        // (A vector comes from a vec3 parameter's Parameter node, never a kind by itself.)
        Some(PinType::Vec3) | None => None,
    };
    let is_output = matches!(kind, NodeKind::Output);
    if !is_output {
        let from = result.unwrap_or_else(|| clip(&mut g));
        let o = g.add_node(NodeKind::Output, [300.0, 0.0]);
        g.connect(from, o, "pose");
    }
    (g, n)
}

#[test]
fn every_kind_has_one_consistent_description() {
    let examples = NodeKind::examples();
    assert_eq!(examples.len(), KINDS.len());
    let mut names = std::collections::HashSet::new();
    for (i, (info, example)) in KINDS.iter().zip(&examples).enumerate() {
        assert!(names.insert(info.name), "{} described twice", info.name);
        assert_eq!(example.index(), i, "{}'s example is another kind", info.name);
        assert!(std::ptr::eq(example.info(), info), "{}", info.name);
        let start = (info.start)(&Start { clip: EXAMPLE_CLIP, parameter: EXAMPLE_PARAMETER });
        assert_eq!(start.index(), i, "{}'s menu entry adds another kind", info.name);
        for pin in info.inputs {
            // A float pin has a range and a constant (the setting of its name); a pose pin neither.
            let float = pin.ty == PinType::Float;
            assert_eq!(pin.range.is_some(), float, "{}.{}", info.name, pin.name);
            assert_eq!(example.constant(pin.name).is_some(), float, "{}.{}", info.name, pin.name);
            assert_eq!(start.constant(pin.name).is_some(), float, "{}.{}", info.name, pin.name);
            if float {
                assert!(
                    info.settings.iter().any(|s| s.name == pin.name && s.ty == SettingType::Float),
                    "{}.{}: its constant is a setting",
                    info.name,
                    pin.name
                );
                let mut changed = example.clone();
                *changed.constant_mut(pin.name).unwrap() = 0.125;
                assert_eq!(changed.constant(pin.name), Some(0.125), "{}.{}", info.name, pin.name);
                assert!(example.input_range(pin.name).is_some(), "{}.{}", info.name, pin.name);
            }
        }
        assert_eq!(example.constant("no such pin"), None);
        assert_eq!(NodeKind::info_named(info.name).is_some(), info.family != Family::Unknown);
    }
}

#[test]
fn every_kind_names_its_clips_and_parameters() {
    for example in NodeKind::examples() {
        let info = example.info();
        let has = |t: SettingType| info.settings.iter().any(|s| s.ty == t);
        // A machine's states play clips and its conditions read parameters.
        let names_clips = has(SettingType::Clip)
            || has(SettingType::Samples)
            || has(SettingType::Samples2D)
            || has(SettingType::Machine);
        let names_params =
            has(SettingType::Parameter) || has(SettingType::Adjusts) || has(SettingType::Machine);
        assert_eq!(example.clip_refs().contains(&EXAMPLE_CLIP), names_clips, "{}", info.name);
        assert_eq!(example.param_refs().contains(&EXAMPLE_PARAMETER), names_params, "{}", info.name);
        // The mutable views rewrite exactly what the shared ones name.
        let mut renamed = example.clone();
        for c in renamed.clip_refs_mut() {
            *c = "clips/renamed.clip.ron".into();
        }
        for p in renamed.param_refs_mut() {
            *p = "renamed".into();
        }
        assert!(!renamed.clip_refs().contains(&EXAMPLE_CLIP), "{}", info.name);
        assert!(!renamed.param_refs().contains(&EXAMPLE_PARAMETER), "{}", info.name);
        assert_eq!(renamed.clip_refs().len(), example.clip_refs().len(), "{}", info.name);
        assert_eq!(renamed.param_refs().len(), example.param_refs().len(), "{}", info.name);
        if names_clips || names_params {
            assert_ne!(renamed, example, "{}", info.name);
        }
    }
}

#[test]
fn every_kind_round_trips_through_its_file() {
    for example in NodeKind::examples() {
        let info = example.info();
        let (g, n) = graph_around(&example);
        let text = save_graph(&g).unwrap();
        if info.family != Family::Unknown {
            // The file writes exactly the settings the description lists.
            let file = GraphFile::from(&g);
            let node = file.nodes.iter().find(|f| f.id == n.0).unwrap();
            let written = match ron::from_str::<ron::Value>(&ron::to_string(node).unwrap()).unwrap() {
                ron::Value::Map(m) => m
                    .keys()
                    .filter_map(|k| match k {
                        ron::Value::String(k) => Some(k.clone()),
                        _ => None,
                    })
                    .filter(|k| !["id", "kind", "at"].contains(&k.as_str()))
                    .collect::<std::collections::BTreeSet<_>>(),
                other => panic!("{other:?}"),
            };
            let described: std::collections::BTreeSet<String> =
                info.settings.iter().map(|s| s.name.to_owned()).collect();
            assert_eq!(written, described, "{}", info.name);
        }
        let (back, errors) = load_graph(&text).unwrap();
        assert_eq!(back, g, "{}", info.name);
        let unknown = info.family == Family::Unknown;
        if unknown {
            assert!(
                matches!(errors.as_slice(), [GraphFileError::UnknownNodeKind { .. }]),
                "{}: {errors:?}",
                info.name
            );
        } else {
            assert!(errors.is_empty(), "{}: {errors:?}", info.name);
        }
        assert_eq!(save_graph(&back).unwrap(), text, "{}: the bytes move", info.name);
    }
}

#[test]
fn every_kind_compiles_and_evaluates() {
    let sk = chain_skeleton(8);
    assert!(sk.index_of(EXAMPLE_BONE).is_some());
    let mut clips: HashMap<String, Arc<Clip>> = HashMap::new();
    clips.insert(EXAMPLE_CLIP.into(), Arc::new(dense_clip(&sk, "example", 1.0, 30.0, 0)));
    for example in NodeKind::examples() {
        let info = example.info();
        let (g, n) = graph_around(&example);
        let program = compile(&g, &sk, &clips);
        if info.family == Family::Unknown {
            let errors = program.expect_err(info.name);
            assert!(
                errors.iter().any(|e| matches!(e, GraphError::UnknownKind { node, .. } if *node == n)),
                "{errors:?}"
            );
            continue;
        }
        let program = program.unwrap_or_else(|e| panic!("{}: {e:?}", info.name));
        let mut inst = GraphInstance::new(Arc::new(program));
        let mut out = vec![Transform::IDENTITY; sk.bone_count()];
        for _ in 0..4 {
            inst.advance(0.1);
            inst.evaluate(&sk, &mut out).unwrap_or_else(|e| panic!("{}: {e}", info.name));
            assert!(
                out.iter()
                    .all(|t| t.translation.is_finite() && t.rotation.is_finite() && t.scale.is_finite()),
                "{}",
                info.name
            );
        }
    }
}

/// Today's sample graph file (version 1), kept as it was written: it still loads with no fault,
/// to the graph the locomotion generator builds, and the project's writer gives the same bytes.
#[test]
fn the_version_1_sample_graph_still_loads_to_the_same_graph() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(root.join("tests/fixtures/graphs/locomotion.v1.graph.ron")).unwrap();
    let (graph, errors) = load_graph(&text).unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    let project = marrow_engine::project::runner::locomotion_project();
    let generated = &project.graphs[marrow_engine::project::runner::LOCOMOTION_GRAPH];
    assert_eq!(&graph, &**generated);
    // The project writes it with its one pretty-printer (and a final newline).
    assert_eq!(marrow_engine::project::to_ron(&GraphFile::from(&graph)), text);
}
