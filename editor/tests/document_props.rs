//! Property test of the document: random sequences of every edit kind the editor has (entity
//! transforms, renames, reparenting, deletes, additions, animators, sockets, expressions,
//! meshes, asset renames and deletes, added files, project renames, whole-project
//! replacement, clip properties and every timeline edit (keys inserted, deleted, moved, scaled,
//! re-eased, re-interpolated, valued, tangents, tangent modes, Euler filters, the clip's and the
//! project's default interpolation, markers added, moved, renamed, deleted) and
//! every graph edit (nodes moved, added singly or as wired pasted groups, deleted with their
//! wires, wires connected (replacing) and disconnected, node settings, parameters added,
//! renamed, deleted and re-defaulted), retarget files added and their bone maps edited (a bone
//! mapped, re-mapped, unmapped, the map filled and cleared), some merged as drags, with saves and
//! reloads mixed in. After the sequence, undoing everything gives the files of the last
//! opened state byte for byte and redoing everything gives the files after the sequence; a
//! refused edit changes nothing; a reload gives back exactly what was saved.

mod support;

use glam::{Quat, Vec3};
use marrow_editor::document::clip_ops::{ClipOp, InsertKind, KeyRef, KeyValue, KeyWrite};
use marrow_editor::document::graph_ops::GraphOp;
use marrow_editor::document::retarget_ops::RetargetOp;
use marrow_editor::document::{Document, EntityOp, Op, Slot, Value, tree};
use marrow_engine::clip::Channel;
use marrow_engine::easing::{Ease, Easing};
use marrow_engine::graph::machine::{
    Condition, DurationUnit, Interruption, State, StateMachine, StateSource, SyncRule, Test, Transition,
};
use marrow_engine::graph::{
    AnimGraph, BlendSample, BlendSample2D, Connection, LookLink, MaskSubtree, Node, NodeId, NodeKind,
    ParamValue,
};
use marrow_engine::math::Transform;
use marrow_engine::project::Project;
use marrow_engine::project::file::ClipAsset;
use marrow_engine::retarget::{BonePair, RetargetMap};
use marrow_engine::scene::{AnimatorDesc, EntityDesc, MeshDesc, RootMotionDesc, SocketDesc, TargetBinding};
use marrow_engine::tangent::TangentMode;
use marrow_engine::track::Interpolation;
use proptest::prelude::*;
use support::{TempDir, repo};

/// One step of a random session.
#[derive(Clone, Debug)]
enum Step {
    /// An edit: its kind and the numbers it is built from.
    Edit { kind: u8, a: u32, b: u32, x: f32, gesture: u8 },
    /// Save into the temporary folder.
    Save,
    /// Save, then open the folder again (history starts over).
    Reload,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        12 => (0u8..44, any::<u32>(), any::<u32>(), -3.0f32..3.0, 0u8..3)
            .prop_map(|(kind, a, b, x, gesture)| Step::Edit { kind, a, b, x, gesture }),
        1 => Just(Step::Save),
        1 => Just(Step::Reload),
    ]
}

const SCENE: &str = "scenes/main.scene.ron";

fn pick(items: &[String], i: u32) -> Option<&String> {
    (!items.is_empty()).then(|| &items[i as usize % items.len()])
}

/// Builds an op of kind `kind` against the current project (it may be refused; that is part
/// of what is tested).
fn build(p: &Project, kind: u8, a: u32, b: u32, x: f32) -> Op {
    let scene = p.scenes.get(SCENE).cloned().unwrap_or_default();
    let paths = tree::all_paths(&scene);
    let entity = pick(&paths, a).cloned().unwrap_or_else(|| "Runner".into());
    let e = |op| Op::Entity { scene: SCENE.into(), entity: entity.clone(), op };
    let t = Transform {
        translation: Vec3::new(x, x * 0.5, -x),
        rotation: Quat::from_rotation_y(x).normalize(),
        scale: Vec3::splat(1.0 + x.abs() * 0.1),
    };
    let clips: Vec<String> = p.clips.keys().cloned().collect();
    let graphs: Vec<String> = p.graphs.keys().cloned().collect();
    match kind {
        0 => e(EntityOp::SetTransform(Some(t))),
        1 => e(EntityOp::Rename(["Renamed", "Hip", "", "a/b", "Runner", "Ground"][b as usize % 6].into())),
        2 => {
            let parent = if b.is_multiple_of(3) { None } else { pick(&paths, b).cloned() };
            e(EntityOp::Reparent { parent, index: Some(b as usize % 3) })
        }
        3 => e(EntityOp::Delete),
        4 => e(EntityOp::SetAnimator(Some(AnimatorDesc {
            rig: "assets/runner.skeleton.ron".into(),
            clip: pick(&clips, b).cloned(),
            graph: None,
            looping: b.is_multiple_of(2).then_some(b.is_multiple_of(4)),
            speed: x,
            play_on_start: b % 2 == 1,
            // Root motion from a bone of the rig, with other axes, or from a bone it lacks.
            root_motion: match a % 4 {
                0 => None,
                1 => Some(RootMotionDesc::planar("hips")),
                2 => Some(RootMotionDesc { bone: "thigh_l".into(), axes: [true, true, false], yaw: false }),
                _ => Some(RootMotionDesc { bone: "missing".into(), axes: [false, false, true], yaw: true }),
            },
            // A target entity driving vector parameters (or one the scene lacks).
            targets: match b % 3 {
                0 => Vec::new(),
                1 => vec![TargetBinding { parameter: "look".into(), entity: "Ground".into() }],
                _ => vec![TargetBinding { parameter: "reach".into(), entity: "Nowhere".into() }],
            },
        }))),
        5 => e(EntityOp::SetSocket((!b.is_multiple_of(4)).then(|| SocketDesc {
            bone: ["thigh_l", "shin_r", "missing"][b as usize % 3].into(),
            offset: t,
        }))),
        6 if b.is_multiple_of(3) => e(EntityOp::SetParticles((!b.is_multiple_of(9)).then(|| {
            marrow_engine::scene::ParticleCloudDesc {
                mesh: "assets/figure.glb#Body".into(),
                settings: marrow_engine::particles::CloudSettings {
                    count: b % 5000,
                    radius: x.abs() * 0.01,
                    falloff: x * 0.02,
                    ..Default::default()
                },
            }
        }))),
        6 => e(EntityOp::SetMorphWeights(Some(vec![x.abs().min(1.0), 0.5]))),
        7 => e(EntityOp::SetMesh(
            (!b.is_multiple_of(3)).then(|| MeshDesc::Box { half_extents: Vec3::splat(x.abs() + 0.1) }),
        )),
        8 => Op::AddEntity {
            scene: SCENE.into(),
            parent: if b.is_multiple_of(2) { None } else { Some(entity.clone()) },
            entity: EntityDesc { name: "Added".into(), transform: Some(t), ..Default::default() },
        },
        9 => match pick(&clips, a) {
            Some(c) => Op::RenameAsset { from: c.clone(), to: format!("clips/renamed{}.clip.ron", b % 3) },
            None => Op::RenameProject("no clip".into()),
        },
        10 => {
            let all: Vec<String> = clips.iter().chain(&graphs).cloned().collect();
            Op::DeleteAsset { path: pick(&all, a).cloned().unwrap_or_else(|| "nothing".into()) }
        }
        11 => {
            let mut g = AnimGraph::new();
            let c = g.add_node(
                NodeKind::Clip { clip: "clips/stride.clip.ron".into(), speed: 1.0, looping: true },
                [0.0, 0.0],
            );
            let speed = g.add_node(NodeKind::Parameter { name: "speed".into() }, [0.0, 100.0]);
            let ts = g.add_node(NodeKind::TimeScale { scale: 1.0 }, [100.0, 0.0]);
            let o = g.add_node(NodeKind::Output, [200.0, 0.0]);
            g.add_parameter("speed", ParamValue::Float(1.0));
            g.add_parameter("unused", ParamValue::Bool(false));
            g.connect(c, ts, "pose");
            g.connect(speed, ts, "scale");
            g.connect(ts, o, "pose");
            // A state machine beside the chain (its edits are among the settings edits).
            let clip =
                |looping| StateSource::Clip { clip: "clips/stride.clip.ron".into(), speed: 1.0, looping };
            let mut go = Transition::new(Some("Idle"), "Run");
            go.conditions.push(Condition { parameter: "speed".into(), test: Test::Greater(1.0) });
            let machine = StateMachine {
                states: vec![
                    State { name: "Idle".into(), source: clip(true), at: [0.0, 0.0] },
                    State { name: "Run".into(), source: clip(false), at: [200.0, 0.0] },
                ],
                entry: "Idle".into(),
                transitions: vec![go],
                any_at: [0.0, -100.0],
            };
            g.add_node(NodeKind::StateMachine { machine }, [0.0, 200.0]);
            Op::AddFiles {
                label: "New Graph".into(),
                binary: Vec::new(),
                files: vec![(Slot::Graph(format!("graphs/g{}.graph.ron", b % 4)), Value::Graph(g.into()))],
                entity: None,
            }
        }
        12 => Op::RenameProject(if b.is_multiple_of(5) { " ".into() } else { format!("project {}", b % 7) }),
        13 => {
            let mut q = p.clone();
            q.manifest.name = format!("replaced {}", b % 3);
            if let Some(s) = q.scenes.get_mut(SCENE).map(std::sync::Arc::make_mut) {
                s.entities.retain(|e| e.name != "Ground");
            }
            Op::ReplaceProject { label: "Recover".into(), project: Box::new(q) }
        }
        14 => match pick(&clips, a) {
            Some(c) => Op::Clip {
                path: c.clone(),
                op: ClipOp::SetProperties {
                    name: b.is_multiple_of(3).then(|| format!("clip {b}")),
                    looping: Some(b.is_multiple_of(2)),
                    length: Some(x),
                    frame_rate: b.is_multiple_of(5).then_some(24.0),
                },
            },
            None => Op::RenameProject("no clip".into()),
        },
        15 => match pick(&graphs, a) {
            Some(g) => {
                let id = p.graphs[g].nodes.first().map(|n| n.id).unwrap_or(marrow_engine::graph::NodeId(99));
                Op::Graph { path: g.clone(), op: GraphOp::MoveNodes(vec![(id, [x * 100.0, x * 50.0])]) }
            }
            None => Op::RenameProject("no graph".into()),
        },
        16 => e(EntityOp::SetTransform(Some(Transform { translation: Vec3::splat(f32::NAN), ..t }))),
        17..=28 => match pick(&clips, a) {
            Some(c) => Op::Clip { path: c.clone(), op: clip_op(&p.clips[c], kind, a, b, x) },
            None => Op::RenameProject("no clip".into()),
        },
        38..=40 => match pick(&clips, a) {
            Some(c) => Op::Clip { path: c.clone(), op: curve_op(&p.clips[c], kind, a, b) },
            None => Op::RenameProject("no clip".into()),
        },
        41 => Op::SetDefaultInterpolation(INTERPOLATIONS[b as usize % 3]),
        42 => {
            let pair = |t: &str, s: &str| BonePair { target: t.into(), source: s.into() };
            let map = RetargetMap {
                source: "runner".into(),
                target: "runner".into(),
                bones: vec![pair("hips", "hips"), pair("thigh_l", "thigh_r")],
                limb_ik: b.is_multiple_of(2),
            };
            Op::AddFiles {
                label: "New Retarget Map".into(),
                binary: Vec::new(),
                files: vec![(
                    Slot::Retarget(format!("retargets/r{}.retarget.ron", b % 3)),
                    Value::Retarget(map.into()),
                )],
                entity: None,
            }
        }
        43 => {
            let maps: Vec<String> = p.retargets.keys().cloned().collect();
            let bones = ["hips", "thigh_l", "shin_l", "thigh_r", "shin_r", ""];
            let bone = |i: u32| bones[i as usize % bones.len()].to_owned();
            let op = match b % 6 {
                0 | 1 => RetargetOp::SetSource { target: bone(a), source: Some(bone(b / 5)) },
                2 => RetargetOp::SetSource { target: bone(a), source: None },
                3 => RetargetOp::Fill(vec![
                    BonePair { target: bone(a), source: bone(b) },
                    BonePair { target: bone(a / 7), source: bone(b / 7) },
                ]),
                4 => RetargetOp::SetLimbIk(a.is_multiple_of(2)),
                _ => RetargetOp::Clear,
            };
            Op::Retarget {
                path: pick(&maps, a).cloned().unwrap_or_else(|| "retargets/none.retarget.ron".into()),
                op,
            }
        }
        _ => match pick(&graphs, b) {
            Some(g) => Op::Graph { path: g.clone(), op: graph_op(&p.graphs[g], kind, a, b, x) },
            None => Op::RenameProject("no graph".into()),
        },
    }
}

const INTERPOLATIONS: [Interpolation; 3] =
    [Interpolation::Step, Interpolation::Linear, Interpolation::CubicSpline];

/// A curve view edit of kind `kind` (38..=40) on clip `c`: tangent modes, the Euler filter,
/// the clip's default interpolation.
fn curve_op(c: &ClipAsset, kind: u8, a: u32, b: u32) -> ClipOp {
    let keys = keys_of(c);
    match kind {
        38 => ClipOp::SetTangentMode {
            keys: (0..1 + b as usize % 4)
                .filter_map(|i| keys.get((a as usize + i * 3) % keys.len().max(1)).cloned())
                .collect(),
            mode: TangentMode::ALL[b as usize % TangentMode::ALL.len()],
        },
        39 => ClipOp::EulerFilter(
            (0..1 + b as usize % 3).map(|i| c.bones[(a as usize + i) % c.bones.len()].clone()).collect(),
        ),
        _ => ClipOp::SetDefaultInterpolation((!b.is_multiple_of(4)).then(|| INTERPOLATIONS[a as usize % 3])),
    }
}

/// A graph edit of kind `kind` (29..38) against `g`.
fn graph_op(g: &AnimGraph, kind: u8, a: u32, b: u32, x: f32) -> GraphOp {
    let ids: Vec<NodeId> = g.nodes.iter().map(|n| n.id).collect();
    let node = |i: u32| ids.get(i as usize % ids.len().max(1)).copied().unwrap_or(NodeId(77));
    let params: Vec<String> = g.parameters.iter().map(|p| p.name.clone()).collect();
    let param = |i: u32| pick(&params, i).cloned().unwrap_or_else(|| "none".into());
    let names = ["speed", "blend", "unused", "new", " padded", ""];
    match kind {
        29 => {
            // Add one node wired into an existing input, or paste a wired pair.
            let fresh = if b.is_multiple_of(5) { 0 } else { g.fresh_id() };
            let at = [x * 40.0, x * -30.0];
            if a % 6 == 3 {
                // A 2D blend space over the sample's clips (its settings edited by op 33).
                let sample = |clip: &str, position| BlendSample2D { clip: clip.into(), position, speed: 1.0 };
                let samples = vec![
                    sample("clips/idle.clip.ron", (0.0, 0.0)),
                    sample("clips/stride.clip.ron", (1.0, 0.0)),
                    sample("clips/sprint.clip.ron", (0.0, x)),
                ];
                let n = Node {
                    id: NodeId(fresh),
                    position: at,
                    kind: NodeKind::BlendSpace2D { samples, x, y: x * 0.5, looping: true },
                };
                GraphOp::AddNodes {
                    label: "Add BlendSpace2D".into(),
                    connections: Vec::new(),
                    nodes: vec![n],
                }
            } else if a % 6 == 5 {
                // A node that solves after composition (IK, look-at, foot plant), its settings
                // from `x`, on the runner's bones (or a bone it lacks).
                let bone =
                    |i: u32| ["hips", "thigh_l", "shin_l", "thigh_r", "shin_r", "missing"][i as usize % 6];
                let leg = |s: &str| ["hips".to_owned(), format!("thigh_{s}"), format!("shin_{s}")];
                let kind = match b % 3 {
                    0 => NodeKind::TwoBoneIk {
                        start: bone(b / 3).into(),
                        mid: "thigh_l".into(),
                        end: "shin_l".into(),
                        x,
                        y: x * 0.5,
                        z: 0.2,
                        target_bone: String::new(),
                        pole: Vec3::Z,
                        mid_axis: Vec3::X,
                        soften: 0.9,
                        weight: x.abs().min(1.0),
                    },
                    1 => NodeKind::LookAt {
                        bone: bone(b / 3).into(),
                        x,
                        y: 1.5,
                        z: 1.0,
                        target_bone: String::new(),
                        forward: Vec3::Z,
                        up: Vec3::Y,
                        offset: Vec3::ZERO,
                        yaw: 1.0,
                        pitch: 0.5,
                        chain: if x > 0.0 {
                            vec![LookLink { bone: "hips".into(), share: 0.4 }]
                        } else {
                            Vec::new()
                        },
                        weight: 1.0,
                    },
                    _ => NodeKind::FootPlant {
                        hips: bone(b / 3).into(),
                        left: leg("l"),
                        right: leg("r"),
                        height: x * 0.1,
                        slope: x.clamp(-1.0, 1.0) * 0.2,
                        max_lift: 0.3,
                        max_drop: 0.25,
                        mid_axis: Vec3::X,
                        weight: 1.0,
                    },
                };
                let to = node(b);
                let n = Node { id: NodeId(fresh), position: at, kind };
                let name = n.kind.info().name;
                GraphOp::AddNodes {
                    label: format!("Add {name}"),
                    connections: vec![Connection { from: n.id, to, pin: "pose".into() }],
                    nodes: vec![n],
                }
            } else if a.is_multiple_of(3) {
                let n = Node {
                    id: NodeId(fresh),
                    position: at,
                    kind: NodeKind::Blend2 { weight: x.abs().min(1.0) },
                };
                let to = node(b);
                let pin = g.node(to).and_then(|t| t.kind.inputs().first()).map_or("pose", |p| p.name);
                GraphOp::AddNodes {
                    label: "Add Blend2".into(),
                    connections: vec![Connection { from: n.id, to, pin: pin.into() }],
                    nodes: vec![n],
                }
            } else {
                let c = Node {
                    id: NodeId(fresh),
                    position: at,
                    kind: NodeKind::Clip {
                        clip: "clips/stride.clip.ron".into(),
                        speed: x,
                        looping: a.is_multiple_of(2),
                    },
                };
                let t = Node {
                    id: NodeId(fresh + 1),
                    position: [at[0] + 150.0, at[1]],
                    kind: NodeKind::TimeScale { scale: 2.0 },
                };
                GraphOp::AddNodes {
                    label: "Paste 2 Nodes".into(),
                    connections: vec![Connection { from: c.id, to: t.id, pin: "pose".into() }],
                    nodes: vec![c, t],
                }
            }
        }
        30 => {
            GraphOp::RemoveNodes(if a.is_multiple_of(4) { vec![node(b), node(b + 1)] } else { vec![node(b)] })
        }
        31 => {
            let to = node(b);
            let pins = g.node(to).map(|n| n.kind.inputs()).unwrap_or_default();
            let pin = pins.get(a as usize % pins.len().max(1)).map_or("nope", |p| p.name);
            GraphOp::Connect { from: node(a), to, pin: pin.into() }
        }
        32 => match g.connections.get(a as usize % g.connections.len().max(1)) {
            Some(c) if !b.is_multiple_of(6) => GraphOp::Disconnect { to: c.to, pin: c.pin.clone() },
            _ => GraphOp::Disconnect { to: node(a), pin: "nope".into() },
        },
        33 => {
            // Every fourth settings edit goes to a 2D blend space when the graph has one (they
            // arrive only through kind 29, so a node picked at random would seldom be one).
            let plane = g.nodes.iter().find(|n| matches!(n.kind, NodeKind::BlendSpace2D { .. }));
            // And every third to a state machine when the graph has one (the controller does).
            let machine = g.nodes.iter().find(|n| matches!(n.kind, NodeKind::StateMachine { .. }));
            let id = match (plane, machine) {
                (Some(n), _) if b.is_multiple_of(4) => n.id,
                (_, Some(n)) if b % 3 == 1 => n.id,
                _ => node(a),
            };
            let mut k = g.node(id).map_or(NodeKind::Output, |n| n.kind.clone());
            let field = match &mut k {
                NodeKind::Clip { speed, looping, .. } => {
                    *speed = x;
                    *looping = b.is_multiple_of(2);
                    "speed"
                }
                NodeKind::Parameter { name } => {
                    *name = param(b);
                    "parameter"
                }
                NodeKind::TimeScale { scale } => {
                    *scale = if b.is_multiple_of(9) { f32::NAN } else { x };
                    "scale"
                }
                NodeKind::Blend2 { weight } => {
                    *weight = x.clamp(0.0, 1.0);
                    "weight"
                }
                NodeKind::BlendSpace1D { samples, .. } => {
                    samples.push(BlendSample {
                        clip: "clips/stride.clip.ron".into(),
                        position: x,
                        speed: 1.0,
                    });
                    "samples"
                }
                NodeKind::BlendSpace2D { samples, x: px, y: py, looping } => {
                    // Move a sample, or add one, or set the point and the loop.
                    match (b % 3, samples.len()) {
                        (0, n) if n > 0 => samples[a as usize % n].position = (x, x * 0.5),
                        (1, _) => samples.push(BlendSample2D {
                            clip: "clips/stride.clip.ron".into(),
                            position: (x, -x),
                            speed: 1.0,
                        }),
                        _ => {
                            (*px, *py) = (x, -x);
                            *looping = a.is_multiple_of(2);
                        }
                    }
                    "samples"
                }
                NodeKind::StateMachine { machine } => machine_edit(machine, a, b, x),
                NodeKind::Mask { subtrees, .. } => {
                    subtrees.push(MaskSubtree {
                        bone: "hips".into(),
                        weight: x.abs().min(1.0),
                        falloff: 0.0,
                    });
                    "subtrees"
                }
                _ => "nothing",
            };
            let kind = if b.is_multiple_of(11) { NodeKind::Output } else { k };
            GraphOp::SetNode { node: id, kind, field: field.into() }
        }
        34 => GraphOp::AddParameter {
            name: names[b as usize % names.len()].into(),
            default: match a % 4 {
                0 => ParamValue::Float(x),
                1 => ParamValue::Bool(a % 4 == 1),
                2 => ParamValue::Vec3(Vec3::new(x, -x, 0.5)),
                _ => ParamValue::Trigger(false),
            },
        },
        35 => GraphOp::RenameParameter { from: param(a), to: names[b as usize % names.len()].into() },
        36 => GraphOp::DeleteParameter { name: param(a) },
        // A float or a vector default (the wrong type for the parameter is refused, as a
        // non-finite value is).
        _ => GraphOp::SetParameterDefault {
            name: param(a),
            value: match b % 7 {
                0 => ParamValue::Float(f32::NAN),
                1 | 2 => ParamValue::Vec3(Vec3::new(x, 1.0, if b % 7 == 1 { f32::INFINITY } else { x })),
                _ => ParamValue::Float(x),
            },
        },
    }
}

/// One of the state machine edits the state canvas and its inspectors make (picked by `b`),
/// applied to `m`; returns the field the edit names.
fn machine_edit(m: &mut StateMachine, a: u32, b: u32, x: f32) -> &'static str {
    let states: Vec<String> = m.states.iter().map(|s| s.name.clone()).collect();
    let state = |i: u32| states.get(i as usize % states.len().max(1)).cloned().unwrap_or_default();
    let k = a as usize % m.transitions.len().max(1);
    let has_transition = !m.transitions.is_empty();
    match (b / 3) % 13 {
        0 => {
            let name = m.fresh_state_name("State");
            m.states.push(State {
                name,
                source: StateSource::Clip { clip: "clips/idle.clip.ron".into(), speed: 1.0, looping: true },
                at: [x * 10.0, x],
            });
            "add state"
        }
        1 => {
            let gone = state(a);
            m.states.retain(|s| s.name != gone);
            m.transitions.retain(|t| t.to != gone && t.from.as_deref() != Some(gone.as_str()));
            "delete state"
        }
        2 => {
            let (from, to) = (state(a), ["Rest", "Walk 2", ""][b as usize % 3].to_owned());
            m.rename_state(&from, &to);
            "state name"
        }
        3 => {
            m.entry = state(b);
            "entry"
        }
        4 => {
            let from = (!a.is_multiple_of(4)).then(|| state(a));
            m.transitions.push(Transition::new(from.as_deref(), &state(b)));
            "add transition"
        }
        5 if has_transition => {
            m.transitions.remove(k);
            "delete transition"
        }
        6 if has_transition => {
            let tests = [Test::Greater(x), Test::Less(x), Test::IsTrue, Test::Triggered, Test::AtMost(x)];
            let c = Condition { parameter: "speed".into(), test: tests[b as usize % tests.len()] };
            m.transitions[k].conditions.push(c);
            "conditions"
        }
        7 if has_transition => {
            m.transitions[k].exit_time = (!b.is_multiple_of(2)).then_some(x.abs());
            "exit time"
        }
        8 if has_transition => {
            let t = &mut m.transitions[k];
            t.duration = if b.is_multiple_of(10) { f32::NAN } else { x.abs() };
            t.unit = if a.is_multiple_of(2) { DurationUnit::Seconds } else { DurationUnit::Normalized };
            "duration"
        }
        9 if has_transition => {
            let t = &mut m.transitions[k];
            t.curve = Easing::ALL[b as usize % Easing::ALL.len()];
            t.interruption = Interruption::ALL[a as usize % 3];
            t.sync = SyncRule::ALL[b as usize % 3];
            "curve"
        }
        10 if m.transitions.len() > 1 => {
            let next = (k + 1) % m.transitions.len();
            m.transitions.swap(k, next);
            "transition order"
        }
        11 if !m.states.is_empty() => {
            let i = a as usize % m.states.len();
            m.states[i].source = match b % 3 {
                0 => StateSource::Graph { graph: "graphs/locomotion.graph.ron".into() },
                1 => StateSource::BlendSpace {
                    samples: vec![BlendSample {
                        clip: "clips/stride.clip.ron".into(),
                        position: x,
                        speed: 1.0,
                    }],
                    parameter: "speed".into(),
                    looping: true,
                },
                _ => StateSource::Clip { clip: "clips/sprint.clip.ron".into(), speed: x, looping: false },
            };
            "state source"
        }
        _ => {
            if let Some(s) = m.states.get_mut(a as usize % states.len().max(1)) {
                s.at = [s.at[0] + x, s.at[1] - x];
            }
            m.any_at = [x, -x];
            "state position"
        }
    }
}

/// The existing keys of a clip, as references.
fn keys_of(c: &ClipAsset) -> Vec<KeyRef> {
    let mut out = Vec::new();
    for (bone, ch) in c.bones.iter().zip(c.clip.channels()) {
        let mut add =
            |channel, times: &[f32]| out.extend(times.iter().map(|t| KeyRef::new(bone.clone(), channel, *t)));
        if let Some(t) = &ch.translation {
            add(Channel::Translation, t.times());
        }
        if let Some(t) = &ch.rotation {
            add(Channel::Rotation, t.times());
        }
        if let Some(t) = &ch.scale {
            add(Channel::Scale, t.times());
        }
    }
    out
}

/// A timeline edit of kind `kind` (17..) on clip `c`.
fn clip_op(c: &ClipAsset, kind: u8, a: u32, b: u32, x: f32) -> ClipOp {
    let keys = keys_of(c);
    let some = |n: usize| -> Vec<KeyRef> {
        if keys.is_empty() {
            return Vec::new();
        }
        (0..n).map(|i| keys[(a as usize + i * (b as usize % 7 + 1)) % keys.len()].clone()).collect()
    };
    let bone = c.bones[a as usize % c.bones.len()].clone();
    let channel = [Channel::Translation, Channel::Rotation, Channel::Scale][b as usize % 3];
    let value = |ch: Channel| match ch {
        // Odd `b`: the rotation written on the far hemisphere (a sign flip for the Euler filter).
        Channel::Rotation => KeyValue::Quat(Quat::from_rotation_x(x) * if b % 2 == 1 { -1.0 } else { 1.0 }),
        _ => KeyValue::Vec3(Vec3::new(x, 1.0 + x * 0.1, 0.0)),
    };
    let marker = b as usize % (c.clip.markers().len() + 1);
    match kind {
        17 => ClipOp::InsertKeys {
            keys: vec![KeyWrite {
                key: KeyRef::new(bone, channel, (x.abs() * 10.0).round() / 30.0),
                value: value(channel),
            }],
            kind: [InsertKind::Insert, InsertKind::KeyPose, InsertKind::Paste, InsertKind::Duplicate]
                [b as usize % 4],
        },
        18 => ClipOp::DeleteKeys(some(1 + b as usize % 3)),
        19 => ClipOp::MoveKeys { keys: some(1 + b as usize % 3), delta: x * 0.2 },
        20 => ClipOp::ScaleKeys { keys: some(2), pivot: 0.5, factor: 0.5 + x.abs() * 0.3, snap: Some(30.0) },
        21 => ClipOp::SetEasing {
            keys: some(2),
            ease: (!b.is_multiple_of(3)).then_some(Ease::Named(Easing::ALL[b as usize % Easing::ALL.len()])),
        },
        22 => ClipOp::SetInterpolation {
            bone,
            channel,
            interpolation: [Interpolation::Step, Interpolation::Linear, Interpolation::CubicSpline]
                [a as usize % 3],
        },
        23 => match keys.first() {
            Some(k) => ClipOp::SetKeyValue {
                key: some(1).pop().unwrap_or(k.clone()),
                value: value(some(1).pop().unwrap_or(k.clone()).channel),
            },
            None => ClipOp::AddMarker { name: "m".into(), time: 0.1 },
        },
        24 => match some(1).pop() {
            Some(k) => {
                ClipOp::SetTangents { tangent_in: value(k.channel), tangent_out: value(k.channel), key: k }
            }
            None => ClipOp::AddMarker { name: "m".into(), time: 0.1 },
        },
        25 => ClipOp::AddMarker { name: ["step", "", "hit"][b as usize % 3].into(), time: x },
        26 => ClipOp::MoveMarker { index: marker, time: x.abs() },
        27 => ClipOp::RenameMarker {
            index: marker,
            name: if b.is_multiple_of(4) { String::new() } else { "renamed".into() },
        },
        _ => ClipOp::DeleteMarkers(vec![marker]),
    }
}

fn runner() -> Project {
    Project::load(&repo().join("projects/runner")).unwrap()
}

fn run_session(steps: &[Step]) -> Result<(), TestCaseError> {
    let dir = TempDir::new("props");
    let mut doc = Document::new(runner(), None);
    let mut base = doc.files();
    for s in steps {
        match s {
            Step::Edit { kind, a, b, x, gesture } => {
                let before = doc.files();
                let op = build(doc.project(), *kind, *a, *b, *x);
                if doc.apply(&op, *gesture as u64).is_err() {
                    prop_assert_eq!(doc.files(), before, "a refused edit changes nothing: {:?}", op);
                }
            }
            Step::Save => {
                doc.save_as(dir.path()).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert!(!doc.is_dirty());
            }
            Step::Reload => {
                doc.save_as(dir.path()).map_err(|e| TestCaseError::fail(e.to_string()))?;
                let saved = doc.files();
                doc = Document::open(dir.path()).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(doc.files(), saved.clone(), "a reload gives back what was saved");
                base = saved;
            }
        }
    }
    let after = doc.files();
    let n = doc.head();
    for _ in 0..n {
        doc.undo();
    }
    prop_assert_eq!(doc.files(), base, "undo all = the opened state");
    while doc.redo().is_some() {}
    prop_assert_eq!(doc.files(), after, "redo all = the state after the sequence");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, max_shrink_iters: 200, ..ProptestConfig::default() })]

    #[test]
    fn random_edits_undo_to_the_opened_bytes_and_redo_to_the_result(steps in prop::collection::vec(step(), 1..14)) {
        run_session(&steps)?;
    }
}

/// A new graph (kind 11), then a 2D blend space in it (kind 29): what [`plane_step`] edits.
fn plane_prefix() -> Vec<Step> {
    vec![
        Step::Edit { kind: 11, a: 0, b: 0, x: 0.0, gesture: 0 },
        Step::Edit { kind: 29, a: 3, b: 1, x: 0.5, gesture: 1 },
    ]
}

/// A settings edit of the graph's 2D blend space (kind 33 with `b` a multiple of 4: a sample
/// moved or added, the point and the loop set, now and then the node replaced), or a save.
fn plane_step() -> impl Strategy<Value = Step> {
    prop_oneof![
        8 => (any::<u32>(), 1u32..64, -3.0f32..3.0, 0u8..3)
            .prop_map(|(a, k, x, gesture)| Step::Edit { kind: 33, a, b: 4 * k, x, gesture }),
        1 => Just(Step::Save),
        1 => Just(Step::Reload),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 150, max_shrink_iters: 200, ..ProptestConfig::default() })]

    #[test]
    fn a_2d_blend_spaces_setting_edits_undo_to_the_opened_bytes(steps in prop::collection::vec(plane_step(), 1..10)) {
        let mut all = plane_prefix();
        all.extend(steps);
        run_session(&all)?;
    }
}

#[test]
fn the_2d_blend_space_prefix_makes_a_space_its_setting_edits_change() {
    let mut doc = Document::new(runner(), None);
    for s in plane_prefix() {
        let Step::Edit { kind, a, b, x, gesture } = s else { unreachable!() };
        assert_eq!(doc.apply(&build(doc.project(), kind, a, b, x), gesture as u64), Ok(true), "kind {kind}");
    }
    let plane = |doc: &Document| {
        doc.project().graphs.values().flat_map(|g| &g.nodes).find_map(|n| match &n.kind {
            k @ NodeKind::BlendSpace2D { .. } => Some(k.clone()),
            _ => None,
        })
    };
    let before = plane(&doc).expect("the prefix adds a 2D blend space");
    // A sample moved, a sample added, the point set: each changes the space.
    for b in [12, 4, 8] {
        let now = plane(&doc).unwrap();
        assert_eq!(doc.apply(&build(doc.project(), 33, 1, b, 1.75), 2 + b as u64), Ok(true), "b {b}");
        assert_ne!(plane(&doc).unwrap(), now, "b {b}");
    }
    assert_ne!(plane(&doc).unwrap(), before);
}

#[test]
fn every_edit_kind_applies_somewhere() {
    // Each kind builds an op that the runner project accepts at least once (so the property
    // test really exercises every kind, not only refusals).
    for kind in (0u8..16).chain(17..44) {
        let mut ok = false;
        for a in 0..8u32 {
            for b in 0..8u32 {
                let mut doc = Document::new(runner(), None);
                if kind == 15 || kind == 10 || (29..38).contains(&kind) {
                    let add = build(doc.project(), 11, 0, 0, 0.0);
                    doc.apply(&add, 1).unwrap();
                }
                if kind == 43 {
                    doc.apply(&build(doc.project(), 42, 0, 0, 0.0), 1).unwrap();
                }
                if kind == 24 || kind == 38 {
                    // Tangents belong to CUBICSPLINE keys: make every channel cubic first.
                    for bone in 0..5 {
                        for ch in 0..3 {
                            let _ = doc.apply(&build(doc.project(), 22, bone * 3 + 2, ch, 0.0), 1);
                        }
                    }
                }
                if kind == 39 {
                    // The Euler filter changes something only where a key flips sign.
                    let c = &doc.project().clips["clips/stride.clip.ron"];
                    let q = c.clip.channels()[1].rotation.as_ref().unwrap().values()[1];
                    let flip = ClipOp::SetKeyValue {
                        key: KeyRef::new("thigh_l", Channel::Rotation, 0.25),
                        value: KeyValue::Quat(-q),
                    };
                    doc.apply(&Op::Clip { path: "clips/stride.clip.ron".into(), op: flip }, 1).unwrap();
                }
                let op = build(doc.project(), kind, a, b, 1.25);
                ok |= doc.apply(&op, 2).unwrap_or(false);
            }
        }
        assert!(ok, "edit kind {kind} never applied");
    }
}
