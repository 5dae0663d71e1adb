//! `marrow play`: the locomotion sample's controller (a state machine) driven headless by a
//! parameter script gives, tick for tick, the states and the poses (bit for bit, by their
//! fingerprints) that a game embedding the engine gets from the same script, and the same output
//! on every run; scripts naming what the graph does not have are refused before anything runs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use marrow_engine::graph::ParamValue;
use marrow_engine::project::{Library, Project};

const GRAPH: &str = "graphs/controller.graph.ron";

fn marrow(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_marrow")).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn locomotion() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("projects/locomotion")
}

/// The script: idle, walk, run, a jump while running, a fall and a land into the run, slow down
/// to idle, and a second jump fired while the slow-down still blends (the trigger waits, set,
/// until that blend ends: the sample's transitions are not interruptible).
const SCRIPT: &[(f32, &str, Option<&str>)] = &[
    (0.0, "speed", Some("0")),
    (0.5, "speed", Some("1.2")),
    (1.2, "speed", Some("1.9")),
    (1.6, "jump", None),
    (1.9, "grounded", Some("false")),
    (2.5, "grounded", Some("true")),
    (3.4, "speed", Some("0.3")),
    (3.5, "speed", Some("0")),
    (3.55, "jump", None),
    (4.2, "grounded", Some("false")),
    (4.25, "grounded", Some("true")),
];

/// FNV-1a over the pose's floats, written apart from the command's (so a bug in one does not
/// hide in both).
fn fingerprint(local: &[marrow_engine::math::Transform]) -> u64 {
    let floats: Vec<f32> = local
        .iter()
        .flat_map(|t| {
            let mut v = t.translation.to_array().to_vec();
            v.extend(t.rotation.to_array());
            v.extend(t.scale.to_array());
            v
        })
        .collect();
    let bytes: Vec<u8> = floats.iter().flat_map(|f| f.to_le_bytes()).collect();
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3))
}

/// What a game gets, tick by tick: (tick, the machine's state or transition, the fingerprint).
fn embedded(seconds: f32) -> Vec<(u64, String, u64)> {
    let root = locomotion();
    let project = Project::load(&root).unwrap();
    let library = Library::load(&project, &root).unwrap();
    let mut world = library.instantiate(&project, &project.manifest.scenes[0]).unwrap();
    let rig = world.find("Runner").unwrap();
    let a = world.animator_mut(rig).unwrap();
    let program = library.compile_graph(GRAPH, a.skeleton()).unwrap();
    a.play_graph(Arc::new(program));
    let mut out = Vec::new();
    let ticks = (seconds * 60.0).round() as u64;
    for tick in 1..=ticks {
        let g = world.animator_mut(rig).unwrap().current_graph_mut().unwrap();
        for (t, name, value) in SCRIPT {
            if (t * 60.0).ceil() as u64 == tick - 1 {
                let i = g.program().parameter_index(name).unwrap();
                let v = match (*name, value) {
                    ("speed", Some(v)) => ParamValue::Float(v.parse().unwrap()),
                    ("grounded", Some(v)) => ParamValue::Bool(*v == "true"),
                    _ => ParamValue::Trigger(true),
                };
                g.set_parameter(i, v);
            }
        }
        world.frame(1, 1.0 / 60.0);
        let g = world.animator(rig).unwrap().current_graph().unwrap();
        let (c, m) = g.machines().next().unwrap();
        let state = match m.transition(c) {
            Some(t) => format!(
                "{} -> {} {:.6}",
                t.from.map_or("(snapshot)", |f| &c.states[f].name),
                c.states[t.to].name,
                t.progress
            ),
            None => c.states[m.active_state()].name.to_string(),
        };
        out.push((tick, state, fingerprint(world.rig_pose(rig).unwrap().local)));
    }
    out
}

/// The command's tick lines, parsed like the embedded run's.
fn parse(stdout: &str) -> Vec<(u64, String, u64)> {
    stdout
        .lines()
        .filter(|l| l.starts_with("tick "))
        .map(|l| {
            let tick = l["tick ".len()..].split(' ').next().unwrap().parse().unwrap();
            let state = l.split(" machine 0: ").nth(1).unwrap().split(" pose ").next().unwrap().to_owned();
            let pose = u64::from_str_radix(l.rsplit(' ').next().unwrap(), 16).unwrap();
            (tick, state, pose)
        })
        .collect()
}

fn script_args() -> Vec<String> {
    SCRIPT
        .iter()
        .flat_map(|(t, n, v)| {
            let set = match v {
                Some(v) => format!("{t}:{n}={v}"),
                None => format!("{t}:{n}"),
            };
            ["--set".to_owned(), set]
        })
        .collect()
}

#[test]
fn play_gives_the_states_and_poses_of_the_embedded_engine_bit_for_bit_on_every_run() {
    let root = locomotion();
    let mut args =
        vec!["play", root.to_str().unwrap(), "--entity", "Runner", "--graph", GRAPH, "--seconds", "5"];
    let script = script_args();
    args.extend(script.iter().map(String::as_str));
    let (code, first, err) = marrow(&args);
    assert_eq!(code, 0, "{err}");
    let headless = parse(&first);
    let game = embedded(5.0);
    assert_eq!(headless.len(), 300, "a line a tick");
    for (h, g) in headless.iter().zip(&game) {
        assert_eq!(h, g, "tick {}: the command and the embedded engine differ", g.0);
    }
    // The script went through every state, a transition from a snapshot included.
    for state in ["Idle", "Move", "Jump", "Fall", "Land"] {
        assert!(game.iter().any(|(_, s, _)| s == state), "{state} was reached");
    }
    // And the same bytes on a second run.
    let (_, second, _) = marrow(&args);
    assert_eq!(first, second, "a second run prints the same");
}

#[test]
fn play_refuses_a_script_the_graph_cannot_take_before_running() {
    let root = locomotion();
    let p = root.to_str().unwrap();
    for (set, expected) in [
        ("1:nope=2", "the graph has no parameter \"nope\" (it has: speed, grounded, jump)"),
        ("1:grounded=3", "\"grounded\" is a bool; give true or false"),
        ("1:speed=NaN", "\"speed\" is a float; \"NaN\" is not a finite number"),
        ("1:jump=true", "\"jump\" is a trigger; fire it with TIME:jump"),
        ("soon:jump", "the time \"soon\" is not a number of seconds"),
    ] {
        let (code, out, err) = marrow(&["play", p, "--entity", "Runner", "--graph", GRAPH, "--set", set]);
        assert_eq!(code, 1, "{set}");
        assert!(out.is_empty(), "nothing ran: {out}");
        assert!(err.contains(expected), "{set}: {err}");
    }
    let (code, _, err) = marrow(&["play", p, "--entity", "Nobody"]);
    assert_eq!(code, 1);
    assert!(err.contains("has no entity named \"Nobody\""), "{err}");
    let (code, _, err) = marrow(&["play", p, "--entity", "Runner", "--graph", "graphs/missing.graph.ron"]);
    assert_eq!(code, 1);
    assert!(err.contains("the project has no graph \"graphs/missing.graph.ron\""), "{err}");
}
