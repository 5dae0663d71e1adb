//! State machines: a validity table of the faults a machine can have (each named on its state or
//! transition), then exact behaviour: conditions, exit time on every lap, duration and curve
//! weight, interruption from a held snapshot, sync by phase and by markers, triggers consumed
//! once, at most one transition per tick, Any State, nested machines in graph assets, events in
//! order, paused frames and seeks announcing nothing, check warnings, file round trips, and a
//! property test: a parameter sequence replayed gives the same states and poses bit for bit.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use marrow_engine::animator::EventKind;
use marrow_engine::clip::Clip;
use marrow_engine::easing::Easing;
use marrow_engine::graph::machine::*;
use marrow_engine::graph::*;
use marrow_engine::math::Transform;
use marrow_engine::skeleton::Skeleton;
use marrow_engine::synthetic::{chain_skeleton, dense_clip};
use proptest::prelude::*;

type Lib = HashMap<String, Arc<Clip>>;

/// Ticks of 1/16 s: every time below is exact in binary.
const DT: f32 = 0.0625;

/// Clips "idle" (2 s), "walk" (1 s, footsteps at 0.25 and 0.75), "run" (0.5 s, footsteps at 0.1
/// and 0.35), "jump" (1 s).
fn library(sk: &Skeleton) -> Lib {
    let mut lib = Lib::new();
    for (i, (name, d)) in [("idle", 2.0), ("walk", 1.0), ("run", 0.5), ("jump", 1.0)].into_iter().enumerate()
    {
        let mut c = dense_clip(sk, name, d, 32.0, i as u32 + 1);
        match name {
            "walk" => {
                c.add_marker("foot", 0.25);
                c.add_marker("foot", 0.75);
            }
            "run" => {
                c.add_marker("foot", 0.1);
                c.add_marker("foot", 0.35);
            }
            _ => {}
        }
        lib.insert(name.into(), Arc::new(c));
    }
    lib
}

fn clip_state(name: &str, clip: &str, looping: bool) -> State {
    State {
        name: name.into(),
        source: StateSource::Clip { clip: clip.into(), speed: 1.0, looping },
        at: [0.0, 0.0],
    }
}

fn when(from: Option<&str>, to: &str, conditions: &[(&str, Test)]) -> Transition {
    let mut t = Transition::new(from, to);
    t.duration = 0.0;
    t.conditions =
        conditions.iter().map(|(p, test)| Condition { parameter: (*p).into(), test: *test }).collect();
    t
}

/// Idle, Walk, Run, Jump playing their clips; the parameters speed (float), grounded (bool) and
/// jump (trigger).
fn locomotion(transitions: Vec<Transition>) -> StateMachine {
    StateMachine {
        states: vec![
            clip_state("Idle", "idle", true),
            clip_state("Walk", "walk", true),
            clip_state("Run", "run", true),
            clip_state("Jump", "jump", false),
        ],
        entry: "Idle".into(),
        transitions,
        any_at: [0.0, 0.0],
    }
}

fn graph_of(machine: StateMachine) -> (AnimGraph, NodeId) {
    let mut g = AnimGraph::new();
    g.add_parameter("speed", ParamValue::Float(0.0));
    g.add_parameter("grounded", ParamValue::Bool(true));
    g.add_parameter("jump", ParamValue::Trigger(false));
    let m = g.add_node(NodeKind::StateMachine { machine }, [0.0, 0.0]);
    let o = g.add_node(NodeKind::Output, [0.0, 0.0]);
    g.connect(m, o, "pose");
    (g, m)
}

struct Rig {
    sk: Skeleton,
    inst: GraphInstance,
}

impl Rig {
    fn new(machine: StateMachine) -> Rig {
        let sk = chain_skeleton(4);
        let lib = library(&sk);
        let (g, _) = graph_of(machine);
        let program = compile(&g, &sk, &lib).unwrap_or_else(|e| panic!("{e:?}"));
        Rig { inst: GraphInstance::new(Arc::new(program)), sk }
    }

    fn machine(&self) -> (&CompiledMachine, &MachineInstance) {
        let (c, m) = self.inst.machines().next().unwrap();
        (c, m)
    }

    /// The state that counts as current (a transition's destination while it runs).
    fn state(&self) -> String {
        let (c, m) = self.machine();
        c.states[m.active_state()].name.to_string()
    }

    fn tick(&mut self) -> Vec<String> {
        self.inst.advance(DT);
        self.inst.events().iter().map(describe).collect()
    }

    fn pose(&mut self) -> Vec<Transform> {
        let mut out = vec![Transform::IDENTITY; self.sk.bone_count()];
        self.inst.evaluate(&self.sk, &mut out).unwrap();
        out
    }
}

fn describe(e: &GraphMarkerEvent) -> String {
    match &e.kind {
        EventKind::Marker => format!("marker {} of {}", e.name(), e.clip.name),
        EventKind::State(s) => match &s.from {
            Some(f) => format!("{} {f} -> {}", s.kind.name(), s.state),
            None => format!("{} {}", s.kind.name(), s.state),
        },
    }
}

/// The faults of `machine` in a graph (with the parameters of [`graph_of`]).
fn faults(machine: StateMachine, graphs: &BTreeMap<String, Arc<AnimGraph>>) -> Vec<GraphError> {
    let sk = chain_skeleton(4);
    let lib = library(&sk);
    let (g, _) = graph_of(machine);
    compile_in(&g, "graphs/main.graph.ron", &sk, &lib, graphs).err().unwrap_or_default()
}

#[test]
fn machine_faults_are_named_on_the_machine_state_or_transition() {
    let base = || locomotion(Vec::new());
    let place = |e: &GraphError| match e {
        GraphError::Machine { at, .. } => at.clone(),
        other => panic!("not a machine fault: {other}"),
    };
    type Row = (&'static str, StateMachine, MachinePlace, &'static str);
    let rows: Vec<Row> = vec![
        ("no state", StateMachine::default(), MachinePlace::Machine, "has no state"),
        (
            "no entry",
            StateMachine { entry: String::new(), ..base() },
            MachinePlace::Machine,
            "no entry state",
        ),
        (
            "missing entry",
            StateMachine { entry: "Sleep".into(), ..base() },
            MachinePlace::Machine,
            "entry state \"Sleep\" does not exist",
        ),
        (
            "two states of one name",
            StateMachine {
                states: vec![clip_state("Idle", "idle", true), clip_state("Idle", "walk", true)],
                ..base()
            },
            MachinePlace::State("Idle".into()),
            "two states are named",
        ),
        (
            "a destination that does not exist",
            locomotion(vec![when(Some("Idle"), "Fly", &[])]),
            MachinePlace::Transition(0, "Idle -> Fly".into()),
            "destination state \"Fly\" does not exist",
        ),
        (
            "a source that does not exist",
            locomotion(vec![when(Some("Fly"), "Idle", &[])]),
            MachinePlace::Transition(0, "Fly -> Idle".into()),
            "source state \"Fly\" does not exist",
        ),
        (
            "an unknown parameter",
            locomotion(vec![when(Some("Idle"), "Walk", &[("velocity", Test::Greater(0.1))])]),
            MachinePlace::Transition(0, "Idle -> Walk".into()),
            "parameter \"velocity\", which the graph does not declare",
        ),
        (
            "a float compared as a bool",
            locomotion(vec![when(Some("Idle"), "Walk", &[("speed", Test::IsTrue)])]),
            MachinePlace::Transition(0, "Idle -> Walk".into()),
            "tests \"speed\" as a bool (true), but it is a float",
        ),
        (
            "a trigger compared as a float",
            locomotion(vec![when(Some("Idle"), "Jump", &[("jump", Test::Greater(0.5))])]),
            MachinePlace::Transition(0, "Idle -> Jump".into()),
            "tests \"jump\" as a float (>), but it is a trigger",
        ),
        (
            "a bool tested as a trigger",
            locomotion(vec![when(Some("Idle"), "Jump", &[("grounded", Test::Triggered)])]),
            MachinePlace::Transition(0, "Idle -> Jump".into()),
            "as a trigger (triggered), but it is a bool",
        ),
        (
            "a duration that is not finite",
            locomotion(vec![Transition { duration: f32::NAN, ..when(Some("Idle"), "Walk", &[]) }]),
            MachinePlace::Transition(0, "Idle -> Walk".into()),
            "duration NaN is not a finite number",
        ),
        (
            "a negative exit time",
            locomotion(vec![Transition { exit_time: Some(-0.5), ..when(Some("Idle"), "Walk", &[]) }]),
            MachinePlace::Transition(0, "Idle -> Walk".into()),
            "exit time -0.5",
        ),
        (
            "a state whose clip does not exist",
            StateMachine { states: vec![clip_state("Idle", "nothing", true)], ..base() },
            MachinePlace::State("Idle".into()),
            "no clip at \"nothing\"",
        ),
        (
            "a state whose graph does not exist",
            StateMachine {
                states: vec![State {
                    name: "Idle".into(),
                    source: StateSource::Graph { graph: "graphs/none.graph.ron".into() },
                    at: [0.0; 2],
                }],
                ..base()
            },
            MachinePlace::State("Idle".into()),
            "no graph at \"graphs/none.graph.ron\"",
        ),
    ];
    for (what, machine, at, message) in rows {
        let errors = faults(machine, &BTreeMap::new());
        let found = errors.iter().find(|e| place(e) == at && e.to_string().contains(message));
        assert!(found.is_some(), "{what}: expected a fault at {at:?} saying {message:?}, got {errors:#?}");
        assert!(
            found.unwrap().to_string().starts_with("node #0 (StateMachine): "),
            "{what}: the message names the node: {}",
            found.unwrap()
        );
    }
}

/// A graph asset playing one state machine whose only state plays graph `next`.
fn graph_playing(next: &str) -> Arc<AnimGraph> {
    let machine = StateMachine {
        states: vec![State {
            name: "Inner".into(),
            source: StateSource::Graph { graph: next.into() },
            at: [0.0; 2],
        }],
        entry: "Inner".into(),
        transitions: Vec::new(),
        any_at: [0.0; 2],
    };
    Arc::new(graph_of(machine).0)
}

#[test]
fn a_ring_of_graphs_is_a_compile_fault_naming_the_path() {
    let mut graphs = BTreeMap::new();
    graphs.insert("graphs/a.graph.ron".to_owned(), graph_playing("graphs/b.graph.ron"));
    graphs.insert("graphs/b.graph.ron".to_owned(), graph_playing("graphs/a.graph.ron"));
    let sk = chain_skeleton(4);
    let lib = library(&sk);
    let a = graphs["graphs/a.graph.ron"].clone();
    let errors = compile_in(&a, "graphs/a.graph.ron", &sk, &lib, &graphs).unwrap_err();
    let ring = errors
        .iter()
        .find_map(|e| match e {
            GraphError::GraphCycle { path, state, .. } => Some((path.clone(), state.clone())),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no ring reported: {errors:#?}"));
    assert_eq!(ring.0, vec!["graphs/a.graph.ron", "graphs/b.graph.ron", "graphs/a.graph.ron"]);
    assert_eq!(ring.1, "Inner");
    let text = errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n");
    assert!(text.contains("graphs/a.graph.ron → graphs/b.graph.ron → graphs/a.graph.ron"), "{text}");
    // A graph playing itself is the shortest ring.
    graphs.insert("graphs/self.graph.ron".to_owned(), graph_playing("graphs/self.graph.ron"));
    let s = graphs["graphs/self.graph.ron"].clone();
    let errors = compile_in(&s, "graphs/self.graph.ron", &sk, &lib, &graphs).unwrap_err();
    assert!(
        errors.iter().any(|e| matches!(e, GraphError::GraphCycle { path, .. } if path.len() == 2)),
        "{errors:#?}"
    );
}

#[test]
fn conditions_all_hold_before_a_transition_fires() {
    let mut rig = Rig::new(locomotion(vec![when(
        Some("Idle"),
        "Walk",
        &[("speed", Test::Greater(0.1)), ("grounded", Test::IsTrue)],
    )]));
    rig.tick();
    assert_eq!(rig.state(), "Idle");
    assert!(rig.inst.set_float("speed", 0.5));
    assert!(rig.inst.set_bool("grounded", false));
    rig.tick();
    assert_eq!(rig.state(), "Idle", "one condition of two holds");
    rig.inst.set_bool("grounded", true);
    rig.tick();
    assert_eq!(rig.state(), "Walk");
    // Every comparison, on its boundary.
    for (test, at, holds) in [
        (Test::Greater(0.5), 0.5, false),
        (Test::AtLeast(0.5), 0.5, true),
        (Test::Less(0.5), 0.5, false),
        (Test::AtMost(0.5), 0.5, true),
    ] {
        let mut rig = Rig::new(locomotion(vec![when(Some("Idle"), "Walk", &[("speed", test)])]));
        rig.inst.set_float("speed", at);
        rig.tick();
        assert_eq!(rig.state() == "Walk", holds, "{test:?} at {at}");
    }
}

/// Walk (1 s, looping) -> Idle at exit time 0.5 when grounded is false, which it becomes
/// before tick `k`: the tick the machine reaches Idle.
fn walk_stops_after(k: usize) -> Option<usize> {
    let mut back = when(Some("Walk"), "Idle", &[("grounded", Test::IsFalse)]);
    back.exit_time = Some(0.5);
    let mut m = locomotion(vec![back]);
    m.entry = "Walk".into();
    let mut rig = Rig::new(m);
    (1..=40).find(|&tick| {
        if tick == k {
            rig.inst.set_bool("grounded", false);
        }
        rig.tick();
        rig.state() == "Idle"
    })
}

#[test]
fn exit_time_waits_for_the_phase_on_every_lap_of_a_looping_source() {
    // The condition holds from 0.25 s on, but the transition waits for 0.5.
    assert_eq!(walk_stops_after(4), Some(8), "fires in the tick that reaches 0.5 s");
    // The condition only becomes true at 0.75 s, past this lap's 0.5: it waits for the next lap.
    assert_eq!(walk_stops_after(12), Some(24), "fires at 1.5 s, the next lap's 0.5");
    // On a one-shot source an exit time of 1 waits for its end, then holds true.
    let mut land = when(Some("Jump"), "Idle", &[]);
    land.exit_time = Some(1.0);
    let mut m = locomotion(vec![land]);
    m.entry = "Jump".into();
    let mut rig = Rig::new(m);
    let ticks = (1..=40).find(|_| {
        rig.tick();
        rig.state() == "Idle"
    });
    assert_eq!(ticks, Some(16), "the 1 s jump lands after 16 ticks");
}

#[test]
fn a_transition_blends_over_its_duration_on_its_curve() {
    let mut go = when(Some("Idle"), "Walk", &[("speed", Test::Greater(0.1))]);
    go.duration = 0.5;
    go.curve = Easing::InQuad;
    let mut rig = Rig::new(locomotion(vec![go]));
    rig.tick();
    let idle_only = rig.pose();
    rig.inst.set_float("speed", 1.0);
    rig.tick();
    let (c, m) = rig.machine();
    let view = m.transition(c).expect("a transition runs");
    assert_eq!((view.progress, view.weight), (0.0, 0.0));
    assert_ne!(rig.pose(), idle_only, "the source moved on");
    for k in 1..=8 {
        rig.tick();
        let (c, m) = rig.machine();
        let expected = (k as f32 * DT) / 0.5;
        match m.transition(c) {
            Some(view) => {
                assert_eq!(view.progress, expected, "tick {k}");
                assert_eq!(view.weight, Easing::InQuad.apply(expected), "tick {k}");
                assert_eq!(m.weights(c)[1], (Some(1), Easing::InQuad.apply(expected)));
            }
            None => assert_eq!(k, 8, "the blend ends when its duration is reached"),
        }
    }
    assert_eq!(rig.state(), "Walk");
    // Once it ends the pose is Walk's alone, at Walk's time.
    let (_, m) = rig.machine();
    let walk_time = m.state(1).unwrap().playheads().next().unwrap().1;
    assert_eq!(walk_time, 8.0 * DT, "Walk started at 0 and played the blend's eight ticks");
    let sk = chain_skeleton(4);
    let lib = library(&sk);
    let mut alone = GraphInstance::new(Arc::new(compile(&clip_graph("walk"), &sk, &lib).unwrap()));
    alone.advance(walk_time);
    let mut expected = vec![Transform::IDENTITY; sk.bone_count()];
    alone.evaluate(&sk, &mut expected).unwrap();
    assert_eq!(rig.pose(), expected);
}

fn clip_graph(clip: &str) -> AnimGraph {
    let mut g = AnimGraph::new();
    let c = g.add_node(NodeKind::Clip { clip: clip.into(), speed: 1.0, looping: true }, [0.0; 2]);
    let o = g.add_node(NodeKind::Output, [0.0; 2]);
    g.connect(c, o, "pose");
    g
}

#[test]
fn an_interruption_blends_from_the_pose_held_at_that_moment() {
    let mut go = when(Some("Idle"), "Walk", &[("speed", Test::Greater(0.1))]);
    go.duration = 1.0;
    go.interruption = Interruption::Destination;
    let mut jump = when(Some("Walk"), "Jump", &[("jump", Test::Triggered)]);
    jump.duration = 0.5;
    let mut rig = Rig::new(locomotion(vec![go, jump]));
    rig.inst.set_float("speed", 1.0);
    for _ in 0..5 {
        rig.tick();
    }
    // What the blend would show on the next tick, had nothing interrupted it.
    let mut uninterrupted = rig.inst.clone();
    uninterrupted.advance(DT);
    let mut held = vec![Transform::IDENTITY; rig.sk.bone_count()];
    uninterrupted.evaluate(&rig.sk, &mut held).unwrap();
    assert!(rig.inst.set_trigger("jump"));
    let events = rig.tick();
    assert_eq!(
        events,
        [
            "transition end Idle -> Walk",
            "exit Idle",
            "exit Walk",
            "transition start Walk -> Jump",
            "enter Jump"
        ]
    );
    let (c, m) = rig.machine();
    let view = m.transition(c).unwrap();
    assert_eq!((view.from, view.to, view.weight), (None, 3, 0.0), "from the snapshot to Jump");
    assert_eq!(rig.pose(), held, "at weight 0 the snapshot is the pose of the interruption");
    // The snapshot is held: half way, the pose is the held pose blended with Jump, whatever the
    // interrupted states would have done since.
    for _ in 0..4 {
        rig.tick();
    }
    let (c, m) = rig.machine();
    let w = m.transition(c).unwrap().weight;
    assert_eq!(w, 0.5);
    let mut jump_pose = vec![Transform::IDENTITY; rig.sk.bone_count()];
    m.state(3).unwrap().clone().evaluate(&rig.sk, &mut jump_pose).unwrap();
    let mut expected = vec![Transform::IDENTITY; rig.sk.bone_count()];
    let layers = [
        marrow_engine::pose::BlendLayer { pose: &held, weight: 0.5, mask: None },
        marrow_engine::pose::BlendLayer { pose: &jump_pose, weight: 0.5, mask: None },
    ];
    marrow_engine::pose::BlendingJob {
        layers: &layers,
        rest_pose: &rig.sk.bind_pose,
        threshold: 1e-6,
        output: &mut expected,
    }
    .run()
    .unwrap();
    assert_eq!(rig.pose(), expected);
    for _ in 0..4 {
        rig.tick();
    }
    assert!(rig.machine().1.transition(rig.machine().0).is_none());
    assert_eq!(rig.state(), "Jump");
}

#[test]
fn without_an_interruption_rule_a_transition_always_finishes() {
    let mut go = when(Some("Idle"), "Walk", &[("speed", Test::Greater(0.1))]);
    go.duration = 1.0;
    let jump = when(Some("Walk"), "Jump", &[("jump", Test::Triggered)]);
    let mut rig = Rig::new(locomotion(vec![go, jump]));
    rig.inst.set_float("speed", 1.0);
    rig.tick();
    rig.inst.set_trigger("jump");
    for _ in 0..15 {
        rig.tick();
        assert_eq!(rig.state(), "Walk");
        assert_eq!(rig.inst.parameter("jump"), Some(ParamValue::Trigger(true)), "not consumed");
    }
    rig.tick();
    // The blend ended this tick; the trigger fires the next transition at once.
    assert_eq!(rig.state(), "Jump");
    assert_eq!(rig.inst.parameter("jump"), Some(ParamValue::Trigger(false)));
}

#[test]
fn sync_by_phase_starts_the_destination_at_the_source_phase() {
    let mut go = when(Some("Walk"), "Run", &[("speed", Test::Greater(2.0))]);
    go.sync = SyncRule::Phase;
    let mut m = locomotion(vec![go]);
    m.entry = "Walk".into();
    let mut rig = Rig::new(m);
    for _ in 0..5 {
        rig.tick();
    }
    rig.inst.set_float("speed", 3.0);
    rig.tick();
    let (_, m) = rig.machine();
    assert_eq!(m.state_phase(1), Some(0.375), "walk at 6/16 of its second");
    assert_eq!(m.state_phase(2), Some(0.375), "run starts at the same phase");
    assert_eq!(m.state(2).unwrap().playheads().next().unwrap().1, 0.1875);
}

#[test]
fn sync_by_markers_keeps_footsteps_in_step() {
    let mut go = when(Some("Walk"), "Run", &[("speed", Test::Greater(2.0))]);
    go.sync = SyncRule::Markers;
    go.duration = 0.25;
    let mut m = locomotion(vec![go]);
    m.entry = "Walk".into();
    let mut rig = Rig::new(m);
    for _ in 0..9 {
        rig.tick();
    }
    rig.inst.set_float("speed", 3.0);
    let events = rig.tick();
    assert!(events.contains(&"transition start Walk -> Run".to_owned()), "{events:?}");
    // Walk is at 0.625 s: its next footstep (0.75) is 0.125 s away; run's first footstep (0.1)
    // must be 0.125 s away too, so run starts at -0.025, that is 0.475 of its 0.5 s.
    let (_, m) = rig.machine();
    let run_time = m.state(2).unwrap().playheads().next().unwrap().1;
    assert!((run_time - 0.475).abs() < 1e-6, "run starts at {run_time}");
    // Two ticks later both footsteps are due at once: walk's at 0.75, run's at 0.1.
    rig.tick();
    let events = rig.tick();
    let (_, m) = rig.machine();
    let time = |s: usize| m.state(s).unwrap().playheads().next().unwrap().1;
    assert_eq!(time(1), 0.75);
    assert!((time(2) - 0.1).abs() < 1e-5, "run at {}", time(2));
    assert!(events.contains(&"marker foot of walk".to_owned()), "the heavier (walk) speaks: {events:?}");
}

#[test]
fn a_trigger_is_consumed_by_the_one_transition_that_fires() {
    let jump = when(Some("Idle"), "Jump", &[("jump", Test::Triggered)]);
    let again = when(Some("Jump"), "Walk", &[("jump", Test::Triggered)]);
    let mut rig = Rig::new(locomotion(vec![jump, again]));
    rig.tick();
    assert!(rig.inst.set_trigger("jump"));
    rig.tick();
    assert_eq!(rig.state(), "Jump");
    assert_eq!(rig.inst.parameter("jump"), Some(ParamValue::Trigger(false)));
    for _ in 0..8 {
        rig.tick();
    }
    assert_eq!(rig.state(), "Jump", "the trigger fired one transition, not two");
    rig.inst.set_trigger("jump");
    rig.tick();
    assert_eq!(rig.state(), "Walk");
}

#[test]
fn at_most_one_transition_fires_per_tick_and_check_reports_the_ring() {
    let ring =
        vec![when(Some("Idle"), "Walk", &[]), when(Some("Walk"), "Run", &[]), when(Some("Run"), "Idle", &[])];
    let m = locomotion(ring);
    let warnings = machine_warnings(&m);
    assert!(
        warnings.contains(&MachineWarning::InstantRing {
            states: vec!["Idle".into(), "Walk".into(), "Run".into(), "Idle".into()]
        }),
        "{warnings:#?}"
    );
    assert!(
        warnings.iter().any(|w| matches!(w, MachineWarning::CannotStay { state, .. } if state == "Walk"))
    );
    assert!(warnings.contains(&MachineWarning::Unreachable { state: "Jump".into() }));
    let mut rig = Rig::new(m);
    let mut seen = Vec::new();
    for _ in 0..6 {
        rig.tick();
        seen.push(rig.state());
    }
    assert_eq!(seen, ["Walk", "Run", "Idle", "Walk", "Run", "Idle"]);
}

#[test]
fn any_state_transitions_leave_every_state_but_their_destination() {
    let jump = when(None, "Jump", &[("jump", Test::Triggered)]);
    let walk = when(Some("Idle"), "Walk", &[("speed", Test::Greater(0.1))]);
    let mut land = when(Some("Jump"), "Idle", &[]);
    land.exit_time = Some(1.0);
    let mut rig = Rig::new(locomotion(vec![jump, walk, land]));
    for from in ["Idle", "Walk"] {
        if from == "Walk" {
            rig.inst.set_float("speed", 1.0);
            rig.tick();
        }
        assert_eq!(rig.state(), from);
        rig.inst.set_trigger("jump");
        let events = rig.tick();
        assert_eq!(rig.state(), "Jump", "from {from}");
        assert!(events.contains(&"transition start Any State -> Jump".to_owned()), "{events:?}");
        // Set again while in Jump: Any State does not go from Jump to Jump.
        rig.inst.set_trigger("jump");
        rig.tick();
        assert_eq!(rig.inst.parameter("jump"), Some(ParamValue::Trigger(true)));
        rig.inst.set_parameter(2, ParamValue::Trigger(false));
        rig.inst.set_float("speed", 0.0);
        while rig.state() == "Jump" {
            rig.tick();
        }
    }
}

#[test]
fn events_come_in_order_with_the_markers() {
    let mut go = when(Some("Idle"), "Walk", &[("speed", Test::Greater(0.1))]);
    go.duration = 0.125;
    let mut rig = Rig::new(locomotion(vec![go]));
    let first = rig.tick();
    assert_eq!(first, ["enter Idle"], "the entry is entered on the first tick");
    rig.inst.set_float("speed", 1.0);
    assert_eq!(rig.tick(), ["transition start Idle -> Walk", "enter Walk"]);
    assert_eq!(rig.tick(), Vec::<String>::new());
    assert_eq!(rig.tick(), ["exit Idle", "transition end Idle -> Walk"]);
    // Walk's footstep at 0.25 s (its fourth tick) follows.
    let mut all = Vec::new();
    for _ in 0..2 {
        all.extend(rig.tick());
    }
    assert_eq!(all, ["marker foot of walk"]);
    // Zero-length: the four events in one tick.
    let mut cut = when(Some("Walk"), "Idle", &[("speed", Test::Less(0.1))]);
    cut.duration = 0.0;
    let mut m = locomotion(vec![cut]);
    m.entry = "Walk".into();
    let mut rig = Rig::new(m);
    rig.inst.set_float("speed", 0.0);
    assert_eq!(
        rig.tick(),
        [
            "enter Walk",
            "transition start Walk -> Idle",
            "enter Idle",
            "exit Walk",
            "transition end Walk -> Idle"
        ]
    );
}

#[test]
fn paused_frames_and_seeks_announce_nothing() {
    let go = when(Some("Idle"), "Walk", &[("speed", Test::Greater(0.1))]);
    let mut rig = Rig::new(locomotion(vec![go]));
    rig.tick();
    rig.inst.set_float("speed", 1.0);
    rig.inst.advance(0.0);
    assert!(rig.inst.events().is_empty(), "a paused frame ticks nothing");
    assert_eq!(rig.state(), "Idle", "and fires nothing");
    rig.inst.advance_with(DT, false);
    assert!(rig.inst.events().is_empty(), "a silent advance (a seek) announces nothing");
    assert_eq!(rig.state(), "Walk", "but the machine moved");
    // A reset goes back to the entry, and announces it again on the next tick.
    rig.inst.reset_playheads();
    assert_eq!(rig.state(), "Idle");
    assert_eq!(rig.tick()[0], "enter Idle");
}

#[test]
fn a_state_playing_a_graph_nests_a_machine_that_reads_the_host_parameters() {
    // The inner graph: a machine Calm -> Angry when speed > 1 (its own declaration of speed).
    let inner = {
        let m = StateMachine {
            states: vec![clip_state("Calm", "idle", true), clip_state("Angry", "run", true)],
            entry: "Calm".into(),
            transitions: vec![when(Some("Calm"), "Angry", &[("speed", Test::Greater(1.0))])],
            any_at: [0.0; 2],
        };
        Arc::new(graph_of(m).0)
    };
    let mut graphs = BTreeMap::new();
    graphs.insert("graphs/inner.graph.ron".to_owned(), inner);
    let outer = StateMachine {
        states: vec![
            clip_state("Idle", "idle", true),
            State {
                name: "Mood".into(),
                source: StateSource::Graph { graph: "graphs/inner.graph.ron".into() },
                at: [0.0; 2],
            },
        ],
        entry: "Idle".into(),
        transitions: vec![when(Some("Idle"), "Mood", &[("speed", Test::Greater(0.1))])],
        any_at: [0.0; 2],
    };
    let sk = chain_skeleton(4);
    let lib = library(&sk);
    let (g, _) = graph_of(outer);
    let program = compile_in(&g, "graphs/outer.graph.ron", &sk, &lib, &graphs).unwrap();
    let mut inst = GraphInstance::new(Arc::new(program));
    let inner_state = |inst: &GraphInstance| {
        let (_, outer) = inst.machines().next().unwrap();
        let mood = outer.state(1).unwrap();
        let (c, m) = mood.machines().next().unwrap();
        c.states[m.active_state()].name.to_string()
    };
    inst.set_float("speed", 0.5);
    inst.advance(DT);
    assert_eq!(inst.machines().next().unwrap().1.active_state(), 1, "outer: Mood");
    assert_eq!(inner_state(&inst), "Calm");
    inst.set_float("speed", 2.0);
    inst.advance(DT);
    assert_eq!(inner_state(&inst), "Angry", "the inner machine read the host's speed");
    let names: Vec<String> = inst.events().iter().map(describe).collect();
    assert!(names.contains(&"enter Angry".to_owned()), "nested events reach the host: {names:?}");
    let mut out = vec![Transform::IDENTITY; sk.bone_count()];
    inst.evaluate(&sk, &mut out).unwrap();
}

#[test]
fn a_machine_round_trips_through_its_file_and_an_unknown_test_is_named() {
    let mut go = when(Some("Idle"), "Walk", &[("speed", Test::AtLeast(0.25)), ("grounded", Test::IsTrue)]);
    go.exit_time = Some(0.75);
    go.duration = 0.5;
    go.unit = DurationUnit::Normalized;
    go.curve = Easing::OutBack;
    go.interruption = Interruption::Source;
    go.sync = SyncRule::Markers;
    let m = locomotion(vec![go, when(None, "Jump", &[("jump", Test::Triggered)])]);
    let (g, _) = graph_of(m);
    let text = save_graph(&g).unwrap();
    let (back, errors) = load_graph(&text).unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(back, g);
    assert_eq!(save_graph(&back).unwrap(), text, "saving again gives the same bytes");
    assert!(text.contains("test: \">=\""), "{text}");
    assert!(text.contains("curve: \"easeOutBack\""), "{text}");
    let bad = text.replace("test: \">=\"", "test: \"~\"");
    let (loaded, errors) = load_graph(&bad).unwrap();
    assert_eq!(errors.len(), 1, "{errors:?}");
    let message = errors[0].to_string();
    assert!(message.contains("transition 1 (Idle -> Walk)") && message.contains("\"~\""), "{message}");
    let NodeKind::StateMachine { machine } = &loaded.nodes[0].kind else { panic!() };
    assert_eq!(machine.transitions[0].conditions.len(), 1, "the readable condition is kept");
}

#[test]
fn a_ten_thousand_state_machine_compiles_checks_and_plays() {
    let states: Vec<State> = (0..10_000).map(|i| clip_state(&format!("S{i}"), "walk", true)).collect();
    let transitions: Vec<Transition> =
        (0..10_000).map(|i| when(Some(&format!("S{i}")), &format!("S{}", (i + 1) % 10_000), &[])).collect();
    let m = StateMachine { states, entry: "S0".into(), transitions, any_at: [0.0; 2] };
    let warnings = machine_warnings(&m);
    assert!(
        warnings
            .iter()
            .any(|w| matches!(w, MachineWarning::InstantRing { states } if states.len() == 10_001))
    );
    let mut rig = Rig::new(m);
    for _ in 0..3 {
        rig.tick();
    }
    assert_eq!(rig.state(), "S3");
    rig.pose();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn a_parameter_sequence_replayed_gives_the_same_states_and_poses_bit_for_bit(
        steps in proptest::collection::vec((0.0f32..4.0, any::<bool>(), any::<bool>(), 0.01f32..0.1), 1..120)
    ) {
        let machine = || {
            let mut walk = when(Some("Idle"), "Walk", &[("speed", Test::Greater(0.5))]);
            walk.duration = 0.3;
            walk.interruption = Interruption::Destination;
            walk.sync = SyncRule::Markers;
            let mut run = when(Some("Walk"), "Run", &[("speed", Test::Greater(2.0))]);
            run.duration = 0.25;
            run.sync = SyncRule::Phase;
            run.curve = Easing::InOutCubic;
            let slow = Transition { duration: 0.2, ..when(Some("Run"), "Walk", &[("speed", Test::AtMost(2.0))]) };
            let stop = Transition { duration: 0.4, exit_time: Some(0.5), ..when(Some("Walk"), "Idle", &[("speed", Test::Less(0.5))]) };
            let mut jump = when(None, "Jump", &[("jump", Test::Triggered), ("grounded", Test::IsTrue)]);
            jump.duration = 0.1;
            jump.interruption = Interruption::Source;
            let land = Transition { exit_time: Some(0.8), duration: 0.2, ..when(Some("Jump"), "Idle", &[]) };
            locomotion(vec![walk, run, slow, stop, jump, land])
        };
        let run = |steps: &[(f32, bool, bool, f32)]| {
            let mut rig = Rig::new(machine());
            let mut trace = Vec::new();
            for &(speed, grounded, jump, dt) in steps {
                rig.inst.set_float("speed", speed);
                rig.inst.set_bool("grounded", grounded);
                if jump {
                    rig.inst.set_trigger("jump");
                }
                rig.inst.advance(dt);
                let events: Vec<String> = rig.inst.events().iter().map(describe).collect();
                let pose: Vec<[u32; 10]> = rig.pose().iter().map(|t| {
                    let f = [t.translation.x, t.translation.y, t.translation.z, t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w, t.scale.x, t.scale.y, t.scale.z];
                    f.map(f32::to_bits)
                }).collect();
                trace.push((rig.state(), events, pose));
            }
            trace
        };
        let a = run(&steps);
        let b = run(&steps);
        prop_assert_eq!(a, b);
    }
}

/// The locomotion sample's files with the controller graph replaced by `text`.
fn locomotion_with_controller(text: &str) -> (std::path::PathBuf, Vec<(String, String)>) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../projects/locomotion");
    let project = marrow_engine::project::Project::load(&root).unwrap();
    let mut files = project.to_files();
    for (path, t) in &mut files {
        if path == marrow_engine::project::runner::CONTROLLER_GRAPH {
            *t = text.to_owned();
        }
    }
    (root, files)
}

#[test]
fn check_names_every_machine_fault_and_warns_of_rings_and_unreachable_states() {
    let text = r#"(
    version: 1,
    parameters: [(name: "speed", default: Float(0.0)), (name: "jump", default: Trigger(false))],
    nodes: [
        (id: 0, kind: "StateMachine", at: (0.0, 0.0), machine: (
            entry: "Idle",
            states: [
                (name: "Idle", source: Clip(clip: "clips/idle.clip.ron")),
                (name: "Walk", source: Clip(clip: "clips/stride.clip.ron")),
                (name: "Run", source: Clip(clip: "clips/sprint.clip.ron")),
                (name: "Lost", source: Clip(clip: "clips/idle.clip.ron")),
            ],
            transitions: [
                (from: "Idle", to: "Fly"),
                (from: "Idle", to: "Walk", conditions: [(parameter: "velocity", test: ">", value: 0.1)]),
                (from: "Idle", to: "Walk", conditions: [(parameter: "speed", test: "true")]),
                (from: "Walk", to: "Run", duration: 0.0),
                (from: "Run", to: "Walk", duration: 0.0),
            ],
        )),
        (id: 1, kind: "Output", at: (300.0, 0.0)),
    ],
    connections: [(from: 0, to: 1, pin: "pose")],
)"#;
    let (root, files) = locomotion_with_controller(text);
    let report = marrow_engine::project::check_project_files(&root, &files);
    let errors: Vec<String> = report.errors.iter().map(ToString::to_string).collect();
    let all = errors.join("\n");
    for expected in [
        "controller.graph.ron",
        "transition 1 (Idle -> Fly): its destination state \"Fly\" does not exist",
        "transition 2 (Idle -> Walk): a condition reads parameter \"velocity\", which the graph does not declare",
        "transition 3 (Idle -> Walk): a condition tests \"speed\" as a bool (true), but it is a float",
    ] {
        assert!(all.contains(expected), "missing {expected:?} in:\n{all}");
    }
    let warnings = report.warnings.join("\n");
    for expected in [
        "states \"Walk\" → \"Run\" → \"Walk\" form a ring of zero-length transitions",
        "state \"Lost\" cannot be reached",
        "state \"Walk\" cannot be stayed in",
    ] {
        assert!(warnings.contains(expected), "missing {expected:?} in:\n{warnings}");
    }
}
