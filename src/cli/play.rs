//! `marrow play PROJECT --entity NAME [--graph PATH] --seconds S --set T:NAME=VALUE ...` plays a
//! project's scene headless at 60 ticks a second, as a game embedding the engine would: the
//! entity's Animator plays its graph (or `--graph`), each `--set` sets a graph parameter at the
//! first tick at or after time `T` (a trigger with `T:NAME`), and each printed tick says every
//! state machine's state, the transition in progress and a fingerprint of the local pose.
//!
//! The lines (one per `--every` ticks, the last tick always; then one per state event):
//!
//! ```text
//! tick 60 t=1.000000 machine 0: Move pose 5f1c0a7e3d2b9c41
//! tick 61 t=1.016667 machine 0: Move -> Jump 0.062500 pose 0c9d2e...
//! event tick 61: start Move -> Jump
//! ```
//!
//! The pose fingerprint is FNV-1a (64-bit) over the little-endian bits of every bone's local
//! translation (x, y, z), rotation (x, y, z, w) and scale (x, y, z), bones in skeleton order: two
//! runs with the same inputs print the same fingerprints exactly when their poses are equal bit
//! for bit. Not here: rendering, audio, anything that writes a file.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use marrow_engine::graph::{EventKind, ParamValue};
use marrow_engine::project::{Library, Project};

/// Ticks a second.
const HZ: f32 = 60.0;

/// Arguments of `marrow play`.
#[derive(Debug, clap::Args)]
pub struct PlayArgs {
    /// The project folder (or its `project.ron`).
    pub project: PathBuf,
    /// The entity whose Animator plays (its graph, or `--graph`).
    #[arg(long)]
    pub entity: String,
    /// A graph of the project to play instead of the entity's own.
    #[arg(long)]
    pub graph: Option<String>,
    /// The scene (default: the project's first).
    #[arg(long)]
    pub scene: Option<String>,
    /// Simulated seconds to run (at 60 ticks a second).
    #[arg(long, default_value_t = 4.0)]
    pub seconds: f32,
    /// `T:NAME=VALUE` sets parameter NAME at time T (seconds): a number for a float, true or
    /// false for a bool; `T:NAME` fires a trigger. Repeatable; applied in the order given.
    #[arg(long = "set")]
    pub sets: Vec<String>,
    /// Print every Nth tick (the last one always).
    #[arg(long, default_value_t = 1)]
    pub every: u64,
}

/// One scheduled parameter change.
#[derive(Clone, Debug, PartialEq)]
struct SetAt {
    tick: u64,
    name: String,
    value: Option<String>,
}

/// Parses `T:NAME=VALUE` / `T:NAME` into its tick (the first at or after T).
fn parse_set(text: &str) -> anyhow::Result<SetAt> {
    let (time, rest) = text
        .split_once(':')
        .ok_or_else(|| anyhow::anyhow!("--set {text:?}: expected TIME:NAME=VALUE or TIME:NAME"))?;
    let t: f32 = time
        .trim()
        .parse()
        .map_err(|_| anyhow::anyhow!("--set {text:?}: the time {time:?} is not a number of seconds"))?;
    if !t.is_finite() || t < 0.0 {
        anyhow::bail!("--set {text:?}: the time must be a finite number of seconds at or after 0");
    }
    let (name, value) = match rest.split_once('=') {
        Some((n, v)) => (n.trim(), Some(v.trim().to_owned())),
        None => (rest.trim(), None),
    };
    if name.is_empty() {
        anyhow::bail!("--set {text:?}: no parameter name");
    }
    Ok(SetAt { tick: (t * HZ).ceil() as u64, name: name.to_owned(), value })
}

/// The value `set` gives a parameter whose default (so type) is `default`.
fn value_of(set: &SetAt, default: ParamValue) -> anyhow::Result<ParamValue> {
    let (name, ty) = (&set.name, default.type_name());
    Ok(match (default, set.value.as_deref()) {
        (ParamValue::Trigger(_), None) => ParamValue::Trigger(true),
        (ParamValue::Trigger(_), Some(v)) => {
            anyhow::bail!("--set {name}={v}: {name:?} is a trigger; fire it with TIME:{name}")
        }
        (_, None) => anyhow::bail!("--set {name}: a value is needed ({name:?} is a {ty})"),
        (ParamValue::Float(_), Some(v)) => match v.parse::<f32>() {
            Ok(x) if x.is_finite() => ParamValue::Float(x),
            _ => anyhow::bail!("--set {name}={v}: {name:?} is a float; {v:?} is not a finite number"),
        },
        (ParamValue::Bool(_), Some(v)) => match v {
            "true" => ParamValue::Bool(true),
            "false" => ParamValue::Bool(false),
            _ => anyhow::bail!("--set {name}={v}: {name:?} is a bool; give true or false"),
        },
        (ParamValue::Vec3(_), Some(v)) => {
            let parts: Vec<Option<f32>> =
                v.split(',').map(|p| p.trim().parse::<f32>().ok().filter(|x| x.is_finite())).collect();
            match parts.as_slice() {
                [Some(x), Some(y), Some(z)] => ParamValue::Vec3(marrow_engine::glam::Vec3::new(*x, *y, *z)),
                _ => {
                    anyhow::bail!("--set {name}={v}: {name:?} is a vec3; give three finite numbers as X,Y,Z")
                }
            }
        }
    })
}

/// FNV-1a (64-bit) over the bits of a local pose (see the module docs).
pub fn pose_fingerprint(local: &[marrow_engine::math::Transform]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for t in local {
        let s = t.translation.to_array();
        let r = t.rotation.to_array();
        let k = t.scale.to_array();
        for x in s.iter().chain(&r).chain(&k) {
            for b in x.to_bits().to_le_bytes() {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        }
    }
    h
}

/// Runs the scene headless and prints its ticks.
pub fn run(args: &PlayArgs) -> anyhow::Result<ExitCode> {
    if !args.seconds.is_finite() || !(0.0..=86_400.0).contains(&args.seconds) {
        anyhow::bail!("--seconds must be between 0 and 86400 (got {})", args.seconds);
    }
    let sets: Vec<SetAt> = args.sets.iter().map(|s| parse_set(s)).collect::<anyhow::Result<_>>()?;
    let root: &Path = if args.project.file_name().is_some_and(|n| n == "project.ron") {
        args.project.parent().unwrap_or(Path::new("."))
    } else {
        &args.project
    };
    super::runner::ensure_plays(root)?;
    let project = Project::load(root)?;
    let library = Library::load(&project, root)?;
    let scene = match &args.scene {
        Some(s) => s.clone(),
        None => project
            .manifest
            .scenes
            .first()
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("the project has no scene"))?,
    };
    let mut world = library.instantiate(&project, &scene)?;
    let rig = world
        .find(&args.entity)
        .ok_or_else(|| anyhow::anyhow!("scene {scene:?} has no entity named {:?}", args.entity))?;
    let animator =
        world.animator_mut(rig).ok_or_else(|| anyhow::anyhow!("{:?} has no Animator", args.entity))?;
    if let Some(graph) = &args.graph {
        let program = library.compile_graph(graph, animator.skeleton()).map_err(|errors| {
            if errors.is_empty() {
                anyhow::anyhow!("the project has no graph {graph:?}")
            } else {
                let list: Vec<String> = errors.iter().map(ToString::to_string).collect();
                anyhow::anyhow!("graph {graph:?} does not compile: {}", list.join("; "))
            }
        })?;
        animator.play_graph(Arc::new(program));
    }
    let graph = animator
        .current_graph()
        .ok_or_else(|| anyhow::anyhow!("{:?} plays no graph (give --graph)", args.entity))?;
    // Every --set names a parameter of the right type before anything runs.
    let params = graph.program().parameters();
    let mut schedule = Vec::with_capacity(sets.len());
    for s in &sets {
        let Some(i) = graph.program().parameter_index(&s.name) else {
            let known: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
            anyhow::bail!(
                "--set {}: the graph has no parameter {:?} (it has: {})",
                s.name,
                s.name,
                known.join(", ")
            );
        };
        schedule.push((s.tick, i, value_of(s, params[i].default)?));
    }
    let dt = 1.0 / HZ;
    let ticks = (args.seconds * HZ).round() as u64;
    let every = args.every.max(1);
    for tick in 1..=ticks {
        // Parameters set "at" a tick are read by that tick.
        if let Some(g) = world.animator_mut(rig).and_then(|a| a.current_graph_mut()) {
            for (_, i, v) in schedule.iter().filter(|(t, ..)| *t == tick - 1) {
                g.set_parameter(*i, *v);
            }
        }
        world.frame(1, dt);
        if tick % every == 0 || tick == ticks {
            println!("{}", tick_line(&world, rig, tick));
        }
        for e in world.events().iter().filter(|e| e.entity == rig) {
            if let EventKind::State(s) = &e.event.kind {
                match &s.from {
                    Some(f) => println!("event tick {tick}: {} {f} -> {}", s.kind.name(), s.state),
                    None => println!("event tick {tick}: {} {}", s.kind.name(), s.state),
                }
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One tick's line: time, each machine's state (and transition), the pose fingerprint.
fn tick_line(world: &marrow_engine::scene::World, rig: marrow_engine::scene::Entity, tick: u64) -> String {
    use std::fmt::Write as _;
    let mut line = format!("tick {tick} t={:.6}", world.animator(rig).map_or(0.0, |a| a.time()));
    if let Some(g) = world.animator(rig).and_then(|a| a.current_graph()) {
        for (k, (c, m)) in g.machines().enumerate() {
            let name = |s: usize| c.states.get(s).map_or("?", |x| x.name.as_ref());
            let _ = write!(line, " machine {k}: ");
            match m.transition(c) {
                Some(t) => {
                    let from = t.from.map_or("(snapshot)", name);
                    let _ = write!(line, "{from} -> {} {:.6}", name(t.to), t.progress);
                }
                None => line.push_str(name(m.active_state())),
            }
        }
    }
    let pose = world.rig_pose(rig).map_or(0, |p| pose_fingerprint(p.local));
    let _ = write!(line, " pose {pose:016x}");
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_is_parsed_to_the_first_tick_at_or_after_its_time() {
        let s = parse_set("0.5:speed=1.5").unwrap();
        assert_eq!(s, SetAt { tick: 30, name: "speed".into(), value: Some("1.5".into()) });
        assert_eq!(parse_set("0.51:jump").unwrap().tick, 31);
        assert_eq!(parse_set("0:jump").unwrap().value, None);
        for bad in ["speed=1", "x:speed=1", "-1:speed=1", "NaN:speed=1", "1:=2"] {
            assert!(parse_set(bad).is_err(), "{bad} is refused");
        }
    }

    #[test]
    fn values_are_checked_against_the_parameter_type() {
        let set = |v: Option<&str>| SetAt { tick: 0, name: "p".into(), value: v.map(str::to_owned) };
        let (float, bool, trigger) =
            (ParamValue::Float(0.0), ParamValue::Bool(true), ParamValue::Trigger(false));
        assert_eq!(value_of(&set(Some("2")), float).unwrap(), ParamValue::Float(2.0));
        assert_eq!(value_of(&set(Some("false")), bool).unwrap(), ParamValue::Bool(false));
        assert_eq!(value_of(&set(None), trigger).unwrap(), ParamValue::Trigger(true));
        let vec3 = ParamValue::Vec3(marrow_engine::glam::Vec3::ZERO);
        assert_eq!(
            value_of(&set(Some("1, -2.5,3")), vec3).unwrap(),
            ParamValue::Vec3(marrow_engine::glam::Vec3::new(1.0, -2.5, 3.0))
        );
        for bad in ["1,2", "1,2,3,4", "1,x,3", "1,2,inf", ""] {
            let e = value_of(&set(Some(bad)), vec3).unwrap_err().to_string();
            assert!(e.contains("is a vec3") && e.contains("X,Y,Z"), "{bad}: {e}");
        }
        for (v, ty) in [(Some("yes"), bool), (Some("inf"), float), (None, float), (Some("1"), trigger)] {
            assert!(value_of(&set(v), ty).is_err(), "{v:?} as {ty:?} is refused");
        }
    }
}
