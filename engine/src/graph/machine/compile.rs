//! Compiling a [`StateMachine`]: every fault named on the state or transition it concerns, then
//! a [`CompiledMachine`] whose states are graph programs of their own (a clip state is a one-clip
//! program, a blend space state a one-space program, a graph state the other graph's program) and
//! whose transitions hold resolved state and parameter indices.
//!
//! How a state's source compiles is the caller's business (the graph compiler passes a function
//! that compiles nested graphs, refusing a cycle of graphs); this module checks the machine's own
//! structure, the conditions against the host graph's parameters, and binds each state program's
//! parameters to the host's of the same name and type.

use std::sync::Arc;

use super::{DurationUnit, Interruption, StateMachine, StateSource, SyncRule, Test, Transition};
use crate::clip::Clip;
use crate::easing::Easing;
use crate::graph::compile::{GraphError, GraphProgram, MachinePlace};
use crate::graph::model::{AnimGraph, NodeId, ParamDecl};
use crate::math::Transform;
use crate::skeleton::Skeleton;

/// A compiled condition: a host parameter index and its test.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CompiledCondition {
    /// Index into the host program's parameters.
    pub param: u16,
    /// The test.
    pub test: Test,
}

/// A compiled transition (states by index).
#[derive(Clone, Debug, PartialEq)]
pub struct CompiledTransition {
    /// Source state (`None`: Any State).
    pub from: Option<u16>,
    /// Destination state.
    pub to: u16,
    /// Conditions, all of which must hold.
    pub conditions: Vec<CompiledCondition>,
    /// Exit time (normalized), if any.
    pub exit_time: Option<f32>,
    /// Duration in `unit`s (finite, >= 0).
    pub duration: f32,
    /// Its unit.
    pub unit: DurationUnit,
    /// The blend curve.
    pub curve: Easing,
    /// The interruption rule.
    pub interruption: Interruption,
    /// The destination's sync rule.
    pub sync: SyncRule,
    /// "Idle -> Walk", for events and messages.
    pub label: Arc<str>,
    /// The source's name for events ("Any State" for Any State).
    pub from_name: Arc<str>,
}

/// A compiled state.
#[derive(Clone, Debug)]
pub struct CompiledState {
    /// Its name (shared by the events that name it).
    pub name: Arc<str>,
    /// Its source's program.
    pub program: Arc<GraphProgram>,
    /// `(host parameter, state program parameter)` pairs of the same name and type: the state
    /// program reads the host's value each tick (a trigger it consumes is cleared in the host).
    pub bindings: Vec<(u16, u16)>,
    /// The clip the state's events carry (its source's first clip, or an empty clip).
    pub clip: Arc<Clip>,
}

/// A compiled machine: what [`super::MachineInstance`] plays.
#[derive(Clone, Debug)]
pub struct CompiledMachine {
    /// The StateMachine node.
    pub node: NodeId,
    /// The states, in authored order.
    pub states: Vec<CompiledState>,
    /// The entry state.
    pub entry: u16,
    /// The transitions, in authored order.
    pub transitions: Vec<CompiledTransition>,
    /// Any State's transitions (indices into `transitions`), in authored order.
    pub any: Vec<u16>,
    /// Per state: the transitions leaving it, in authored order.
    pub leaving: Vec<Vec<u16>>,
    /// Per state: what is tried while the machine rests in it (no transition running): Any
    /// State's transitions to another state, then the state's own, in authored order.
    pub resting: Vec<Vec<u16>>,
    /// The rig's bind pose (what an interruption's snapshot is sampled against).
    pub bind: Arc<[Transform]>,
    /// The host program's pose slots the machine uses as scratch (a transition's source and
    /// destination; an interruption's snapshot is computed in them).
    pub scratch: (u16, u16),
}

impl CompiledMachine {
    /// The index of state `name`.
    pub fn state_index(&self, name: &str) -> Option<usize> {
        self.states.iter().position(|s| &*s.name == name)
    }
}

/// A one-node graph playing a clip or blend space state's source (with the host's declaration
/// of the blend space's parameter); `None` for a graph source.
pub fn source_graph(source: &StateSource, host: &[ParamDecl]) -> Option<AnimGraph> {
    use crate::graph::model::NodeKind;
    let mut g = AnimGraph::new();
    match source {
        StateSource::Clip { clip, speed, looping } => {
            let c =
                g.add_node(NodeKind::Clip { clip: clip.clone(), speed: *speed, looping: *looping }, [0.0; 2]);
            let o = g.add_node(NodeKind::Output, [0.0; 2]);
            g.connect(c, o, "pose");
        }
        StateSource::BlendSpace { samples, parameter, looping } => {
            let p = g.add_node(NodeKind::Parameter { name: parameter.clone() }, [0.0; 2]);
            let s = g.add_node(
                NodeKind::BlendSpace1D { samples: samples.clone(), position: 0.0, looping: *looping },
                [0.0; 2],
            );
            let o = g.add_node(NodeKind::Output, [0.0; 2]);
            g.connect(p, s, "position");
            g.connect(s, o, "pose");
            if let Some(d) = host.iter().find(|d| &d.name == parameter) {
                g.parameters.push(d.clone());
            }
        }
        StateSource::Graph { .. } => return None,
    }
    Some(g)
}

/// Checks `machine` (node `node` of a graph declaring `params`) and compiles it, compiling each
/// state's source with `source` (which names its own faults). Every fault is pushed to `errors`;
/// `None` when there was one.
pub fn compile_machine(
    node: NodeId,
    machine: &StateMachine,
    params: &[ParamDecl],
    skeleton: &Skeleton,
    mut source: impl FnMut(&super::State) -> Result<Arc<GraphProgram>, String>,
    errors: &mut Vec<GraphError>,
) -> Option<CompiledMachine> {
    let before = errors.len();
    let title = "StateMachine";
    let fault = |errors: &mut Vec<GraphError>, at: MachinePlace, what: String| {
        errors.push(GraphError::Machine { node, title, at, what })
    };
    if machine.states.is_empty() {
        fault(errors, MachinePlace::Machine, "the machine has no state".into());
    } else if machine.entry.is_empty() {
        fault(errors, MachinePlace::Machine, "the machine has no entry state".into());
    } else if machine.state(&machine.entry).is_none() {
        fault(errors, MachinePlace::Machine, format!("the entry state {:?} does not exist", machine.entry));
    }
    let mut seen = std::collections::HashSet::new();
    for s in &machine.states {
        if s.name.is_empty() {
            fault(errors, MachinePlace::State(s.name.clone()), "a state has no name".into());
        } else if !seen.insert(s.name.as_str()) {
            fault(errors, MachinePlace::State(s.name.clone()), format!("two states are named {:?}", s.name));
        }
    }
    let mut states = Vec::with_capacity(machine.states.len());
    for s in &machine.states {
        match source(s) {
            Ok(program) => {
                let bindings = bind_parameters(&program, params, s, errors, node);
                let clip = lead_clip(&program, &s.name, skeleton);
                states.push(CompiledState { name: Arc::from(s.name.as_str()), program, bindings, clip });
            }
            Err(what) => fault(errors, MachinePlace::State(s.name.clone()), what),
        }
    }
    let mut transitions = Vec::with_capacity(machine.transitions.len());
    for (k, t) in machine.transitions.iter().enumerate() {
        if let Some(c) = compile_transition(machine, params, t, k, errors, node) {
            transitions.push(c);
        }
    }
    if errors.len() > before {
        return None;
    }
    let index = |name: &str| machine.state_index(name).unwrap_or(0) as u16;
    let mut leaving = vec![Vec::new(); machine.states.len()];
    let mut any = Vec::new();
    for (k, t) in transitions.iter().enumerate() {
        match t.from {
            Some(f) => leaving[f as usize].push(k as u16),
            None => any.push(k as u16),
        }
    }
    let resting = (0..machine.states.len())
        .map(|s| {
            let any = any.iter().copied().filter(|&k| transitions[k as usize].to as usize != s);
            any.chain(leaving[s].iter().copied()).collect()
        })
        .collect();
    Some(CompiledMachine {
        node,
        states,
        entry: index(&machine.entry),
        transitions,
        any,
        leaving,
        resting,
        bind: Arc::from(&skeleton.bind_pose[..]),
        scratch: (0, 0),
    })
}

/// The state program's parameters bound to the host's of the same name; a same-named parameter
/// of another type is a fault on the state.
fn bind_parameters(
    program: &GraphProgram,
    host: &[ParamDecl],
    s: &super::State,
    errors: &mut Vec<GraphError>,
    node: NodeId,
) -> Vec<(u16, u16)> {
    let mut out = Vec::new();
    for (j, d) in program.parameters().iter().enumerate() {
        let Some(h) = host.iter().position(|p| p.name == d.name) else { continue };
        let (ht, st) = (host[h].default.type_name(), d.default.type_name());
        if ht != st {
            errors.push(GraphError::Machine {
                node,
                title: "StateMachine",
                at: MachinePlace::State(s.name.clone()),
                what: format!(
                    "its source reads parameter {:?} as a {st}, but the graph declares a {ht}",
                    d.name
                ),
            });
            continue;
        }
        out.push((h as u16, j as u16));
    }
    out
}

/// The first clip a program plays (an empty clip when it plays none of its own).
fn lead_clip(program: &GraphProgram, state: &str, skeleton: &Skeleton) -> Arc<Clip> {
    program
        .players()
        .first()
        .map(|p| p.clip.clone())
        .or_else(|| program.members().first().map(|m| m.clip.clone()))
        .unwrap_or_else(|| Arc::new(Clip::new(state, skeleton)))
}

fn compile_transition(
    machine: &StateMachine,
    params: &[ParamDecl],
    t: &Transition,
    k: usize,
    errors: &mut Vec<GraphError>,
    node: NodeId,
) -> Option<CompiledTransition> {
    let before = errors.len();
    let mut fault = |what: String| {
        errors.push(GraphError::Machine {
            node,
            title: "StateMachine",
            at: MachinePlace::Transition(k, t.label()),
            what,
        })
    };
    let from = match &t.from {
        None => None,
        Some(f) => match machine.state_index(f) {
            Some(i) => Some(i as u16),
            None => {
                fault(format!("its source state {f:?} does not exist"));
                None
            }
        },
    };
    let to = machine.state_index(&t.to);
    if to.is_none() {
        fault(format!("its destination state {:?} does not exist", t.to));
    }
    let mut conditions = Vec::with_capacity(t.conditions.len());
    for c in &t.conditions {
        let Some(p) = params.iter().position(|p| p.name == c.parameter) else {
            fault(format!("a condition reads parameter {:?}, which the graph does not declare", c.parameter));
            continue;
        };
        let has = params[p].default.type_name();
        if has != c.test.wants() {
            fault(format!(
                "a condition tests {:?} as a {} ({}), but it is a {has}",
                c.parameter,
                c.test.wants(),
                c.test.operator()
            ));
            continue;
        }
        if c.test.value().is_some_and(|v| !v.is_finite()) {
            fault(format!("a condition compares {:?} with a value that is not finite", c.parameter));
            continue;
        }
        conditions.push(CompiledCondition { param: p as u16, test: c.test });
    }
    if let Some(e) = t.exit_time
        && !(e.is_finite() && e >= 0.0)
    {
        fault(format!("exit time {e} is not a finite number >= 0"));
    }
    if !(t.duration.is_finite() && t.duration >= 0.0) {
        fault(format!("duration {} is not a finite number >= 0", t.duration));
    }
    if errors.len() > before {
        return None;
    }
    Some(CompiledTransition {
        from,
        to: to? as u16,
        conditions,
        exit_time: t.exit_time,
        duration: t.duration,
        unit: t.unit,
        curve: t.curve,
        interruption: t.interruption,
        sync: t.sync,
        label: Arc::from(t.label().as_str()),
        from_name: Arc::from(t.from.as_deref().unwrap_or(super::ANY_STATE)),
    })
}
