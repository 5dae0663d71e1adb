//! State machines: the authored form of a [`NodeKind::StateMachine`](super::NodeKind::StateMachine)
//! node, what it compiles to, and how it plays.
//!
//! A [`StateMachine`] is plain data, keyed by names: states (each playing a [`StateSource`]: a
//! clip, a 1D blend space or another graph asset), one entry state, and [`Transition`]s from a
//! state or from Any State to a state, each with [`Condition`]s on the graph's parameters, an
//! optional exit time, a duration, a blend curve (one of the 31 named easings), an
//! [`Interruption`] rule and a [`SyncRule`] for the destination's start.
//!
//! - [`compile`](mod@compile) checks a machine (every fault named on the state or transition it
//!   concerns) and turns it into a [`CompiledMachine`]: states as small graph programs of their
//!   own, transitions with resolved state and parameter indices;
//! - [`eval`] plays it: [`MachineInstance`] (session state: the current state, each state's time,
//!   the transition in progress, the snapshot an interruption blends from) ticks once per graph
//!   advance and samples at most a snapshot and two states;
//! - [`check`] finds what compiles but cannot work as authored (unreachable states, states that
//!   cannot be stayed in, rings of instant transitions): warnings for `marrow check`.
//!
//! The tick, its order and its events are described in [`eval`]. Not here: drawing the state
//! canvas (the editor), recording and rewinding ticks (the editor's session).

pub mod check;
pub mod compile;
pub mod eval;
pub mod file;

pub use check::{MachineWarning, machine_warnings};
pub use compile::{CompiledMachine, CompiledState, CompiledTransition};
pub use eval::{MachineInstance, StateEvent, StateEventKind};

use super::model::BlendSample;
use crate::easing::Easing;

/// What a state plays.
#[derive(Clone, Debug, PartialEq)]
pub enum StateSource {
    /// One clip.
    Clip {
        /// Clip asset path.
        clip: String,
        /// Playback speed.
        speed: f32,
        /// Whether it wraps (else it holds its last frame).
        looping: bool,
    },
    /// Clips on an axis driven by a float parameter, on one synchronized phase (as a
    /// [`NodeKind::BlendSpace1D`](super::NodeKind::BlendSpace1D) node).
    BlendSpace {
        /// The clips on the axis.
        samples: Vec<BlendSample>,
        /// The float parameter giving the axis value.
        parameter: String,
        /// Whether the phase wraps.
        looping: bool,
    },
    /// Another graph asset, played whole (its parameters read the host graph's parameters of
    /// the same name). A graph may nest machines that play graphs; a cycle is a compile fault.
    Graph {
        /// Graph asset path.
        graph: String,
    },
}

impl StateSource {
    /// A short label for the source ("clip", "blend space", "graph") and what it names.
    pub fn label(&self) -> String {
        match self {
            StateSource::Clip { clip, .. } => format!("clip {clip}"),
            StateSource::BlendSpace { parameter, samples, .. } => {
                format!("blend space of {} clips on {parameter}", samples.len())
            }
            StateSource::Graph { graph } => format!("graph {graph}"),
        }
    }
}

/// A state of a machine.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// Unique name within the machine (what transitions name).
    pub name: String,
    /// What it plays.
    pub source: StateSource,
    /// Position on the state canvas.
    pub at: [f32; 2],
}

/// How a condition tests its parameter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Test {
    /// A float parameter is greater than the constant.
    Greater(f32),
    /// A float parameter is less than the constant.
    Less(f32),
    /// A float parameter is at least the constant.
    AtLeast(f32),
    /// A float parameter is at most the constant.
    AtMost(f32),
    /// A bool parameter is true.
    IsTrue,
    /// A bool parameter is false.
    IsFalse,
    /// A trigger parameter is set (the transition that fires consumes it).
    Triggered,
}

impl Test {
    /// Every test, with a representative constant, in the order an editor offers them.
    pub const ALL: [Test; 7] = [
        Test::Greater(0.0),
        Test::Less(0.0),
        Test::AtLeast(0.0),
        Test::AtMost(0.0),
        Test::IsTrue,
        Test::IsFalse,
        Test::Triggered,
    ];

    /// The operator as shown and saved (`>`, `<`, `>=`, `<=`, `true`, `false`, `triggered`).
    pub fn operator(self) -> &'static str {
        match self {
            Test::Greater(_) => ">",
            Test::Less(_) => "<",
            Test::AtLeast(_) => ">=",
            Test::AtMost(_) => "<=",
            Test::IsTrue => "true",
            Test::IsFalse => "false",
            Test::Triggered => "triggered",
        }
    }

    /// The test named by `operator` with constant `value` (ignored by bool and trigger tests).
    pub fn from_operator(operator: &str, value: f32) -> Option<Test> {
        Some(match operator {
            ">" => Test::Greater(value),
            "<" => Test::Less(value),
            ">=" => Test::AtLeast(value),
            "<=" => Test::AtMost(value),
            "true" => Test::IsTrue,
            "false" => Test::IsFalse,
            "triggered" => Test::Triggered,
            _ => return None,
        })
    }

    /// The constant a float test compares against.
    pub fn value(self) -> Option<f32> {
        match self {
            Test::Greater(v) | Test::Less(v) | Test::AtLeast(v) | Test::AtMost(v) => Some(v),
            Test::IsTrue | Test::IsFalse | Test::Triggered => None,
        }
    }

    /// The type of parameter the test reads: "float", "bool" or "trigger".
    pub fn wants(self) -> &'static str {
        match self {
            Test::Greater(_) | Test::Less(_) | Test::AtLeast(_) | Test::AtMost(_) => "float",
            Test::IsTrue | Test::IsFalse => "bool",
            Test::Triggered => "trigger",
        }
    }
}

/// One condition of a transition: a parameter tested.
#[derive(Clone, Debug, PartialEq)]
pub struct Condition {
    /// The parameter's name.
    pub parameter: String,
    /// The test.
    pub test: Test,
}

/// What a transition's duration is measured in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DurationUnit {
    /// Seconds.
    Seconds,
    /// A fraction of the source state's length (its lead clip's duration at its speed).
    Normalized,
}

/// Which transitions may interrupt a transition in progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Interruption {
    /// None: the transition always finishes.
    None,
    /// The transitions leaving its source state (and Any State's).
    Source,
    /// The transitions leaving its destination state (and Any State's).
    Destination,
}

impl Interruption {
    /// Every rule.
    pub const ALL: [Interruption; 3] = [Interruption::None, Interruption::Source, Interruption::Destination];

    /// The rule's name as saved and shown.
    pub fn name(self) -> &'static str {
        match self {
            Interruption::None => "none",
            Interruption::Source => "source",
            Interruption::Destination => "destination",
        }
    }
}

/// Where the destination state starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SyncRule {
    /// At its start.
    FromStart,
    /// At the source's normalized phase.
    Phase,
    /// So that the destination's next marker named like the source's next marker arrives at the
    /// same moment (footsteps stay in step); the phase when either has no such marker.
    Markers,
}

impl SyncRule {
    /// Every rule.
    pub const ALL: [SyncRule; 3] = [SyncRule::FromStart, SyncRule::Phase, SyncRule::Markers];

    /// The rule's name as saved and shown.
    pub fn name(self) -> &'static str {
        match self {
            SyncRule::FromStart => "start",
            SyncRule::Phase => "phase",
            SyncRule::Markers => "markers",
        }
    }
}

/// A transition from a state (or Any State) to a state.
#[derive(Clone, Debug, PartialEq)]
pub struct Transition {
    /// The source state's name; `None` for Any State.
    pub from: Option<String>,
    /// The destination state's name.
    pub to: String,
    /// Conditions, all of which must hold (none: always).
    pub conditions: Vec<Condition>,
    /// The normalized time of the source the transition waits for (on every lap of a looping
    /// source when below 1; once when 1 or more); `None`: no wait.
    pub exit_time: Option<f32>,
    /// The blend's length.
    pub duration: f32,
    /// What `duration` is measured in.
    pub unit: DurationUnit,
    /// The blend curve (destination weight over the blend's progress).
    pub curve: Easing,
    /// Which transitions may interrupt this one.
    pub interruption: Interruption,
    /// Where the destination starts.
    pub sync: SyncRule,
}

impl Transition {
    /// A transition from `from` to `to` with no condition, no exit time, a 0.2 s linear blend,
    /// no interruption and the destination from its start.
    pub fn new(from: Option<&str>, to: &str) -> Self {
        Transition {
            from: from.map(str::to_owned),
            to: to.to_owned(),
            conditions: Vec::new(),
            exit_time: None,
            duration: 0.2,
            unit: DurationUnit::Seconds,
            curve: Easing::Linear,
            interruption: Interruption::None,
            sync: SyncRule::FromStart,
        }
    }

    /// "Idle -> Walk" (Any State reads "Any State").
    pub fn label(&self) -> String {
        format!("{} -> {}", self.from.as_deref().unwrap_or(ANY_STATE), self.to)
    }
}

/// What Any State is called where a transition's source is shown.
pub const ANY_STATE: &str = "Any State";

/// A state machine: the settings of a [`NodeKind::StateMachine`](super::NodeKind::StateMachine)
/// node.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct StateMachine {
    /// The states, in authored order.
    pub states: Vec<State>,
    /// The entry state's name.
    pub entry: String,
    /// The transitions; those leaving one state are tried in this order (Any State's first).
    pub transitions: Vec<Transition>,
    /// Where the Any State marker sits on the state canvas.
    pub any_at: [f32; 2],
}

impl StateMachine {
    /// The state named `name`.
    pub fn state(&self, name: &str) -> Option<&State> {
        self.states.iter().find(|s| s.name == name)
    }

    /// The index of the state named `name`.
    pub fn state_index(&self, name: &str) -> Option<usize> {
        self.states.iter().position(|s| s.name == name)
    }

    /// A name not taken by a state: `base`, else `base 2`, `base 3`...
    pub fn fresh_state_name(&self, base: &str) -> String {
        if self.state(base).is_none() {
            return base.to_owned();
        }
        (2..).map(|k| format!("{base} {k}")).find(|n| self.state(n).is_none()).unwrap_or_default()
    }

    /// Renames a state and every transition naming it (and the entry); false when `from` does
    /// not exist or `to` is taken.
    pub fn rename_state(&mut self, from: &str, to: &str) -> bool {
        if from == to || self.state(to).is_some() || self.state(from).is_none() {
            return false;
        }
        for s in &mut self.states {
            if s.name == from {
                s.name = to.to_owned();
            }
        }
        for t in &mut self.transitions {
            if t.from.as_deref() == Some(from) {
                t.from = Some(to.to_owned());
            }
            if t.to == from {
                t.to = to.to_owned();
            }
        }
        if self.entry == from {
            self.entry = to.to_owned();
        }
        true
    }

    /// The clip asset paths the states play.
    pub fn clip_refs(&self) -> Vec<&str> {
        let mut out = Vec::new();
        for s in &self.states {
            match &s.source {
                StateSource::Clip { clip, .. } => out.push(clip.as_str()),
                StateSource::BlendSpace { samples, .. } => {
                    out.extend(samples.iter().map(|m| m.clip.as_str()))
                }
                StateSource::Graph { .. } => {}
            }
        }
        out
    }

    /// The clip asset paths the states play, to rewrite.
    pub fn clip_refs_mut(&mut self) -> Vec<&mut String> {
        let mut out = Vec::new();
        for s in &mut self.states {
            match &mut s.source {
                StateSource::Clip { clip, .. } => out.push(clip),
                StateSource::BlendSpace { samples, .. } => {
                    out.extend(samples.iter_mut().map(|m| &mut m.clip))
                }
                StateSource::Graph { .. } => {}
            }
        }
        out
    }

    /// The parameters the machine reads (conditions, blend space axes).
    pub fn param_refs(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for s in &self.states {
            if let StateSource::BlendSpace { parameter, .. } = &s.source {
                out.push(parameter);
            }
        }
        out.extend(self.transitions.iter().flat_map(|t| t.conditions.iter().map(|c| c.parameter.as_str())));
        out
    }

    /// The parameters the machine reads, to rewrite.
    pub fn param_refs_mut(&mut self) -> Vec<&mut String> {
        let mut out: Vec<&mut String> = Vec::new();
        for s in &mut self.states {
            if let StateSource::BlendSpace { parameter, .. } = &mut s.source {
                out.push(parameter);
            }
        }
        out.extend(
            self.transitions.iter_mut().flat_map(|t| t.conditions.iter_mut().map(|c| &mut c.parameter)),
        );
        out
    }

    /// The graph asset paths the states play.
    pub fn graph_refs(&self) -> Vec<&str> {
        self.states
            .iter()
            .filter_map(|s| match &s.source {
                StateSource::Graph { graph } => Some(graph.as_str()),
                _ => None,
            })
            .collect()
    }
}
