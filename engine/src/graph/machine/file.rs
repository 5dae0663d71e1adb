//! A state machine in a graph file: the `machine` setting of a StateMachine node, keyed by state
//! names (never indices), with only what was authored.
//!
//! Loading is lossy in the graph file's way: an unknown condition operator is reported and the
//! condition dropped; everything else a machine can get wrong (a transition naming a missing
//! state, a condition on an unknown parameter) loads as written and is reported by the compiler
//! on the state or transition.

use serde::{Deserialize, Serialize};

use super::{
    Condition, DurationUnit, Interruption, State, StateMachine, StateSource, SyncRule, Test, Transition,
};
use crate::easing::Easing;
use crate::graph::file::SampleFile;
use crate::graph::model::BlendSample;

/// A machine in a file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MachineFile {
    /// The entry state's name.
    #[serde(default)]
    pub entry: String,
    /// Where the Any State marker sits.
    #[serde(default)]
    pub any_at: (f32, f32),
    /// The states.
    #[serde(default)]
    pub states: Vec<StateFile>,
    /// The transitions.
    #[serde(default)]
    pub transitions: Vec<TransitionFile>,
}

/// A state in a file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StateFile {
    /// Its name.
    pub name: String,
    /// Position on the state canvas.
    #[serde(default)]
    pub at: (f32, f32),
    /// What it plays.
    pub source: SourceFile,
}

/// A state's source in a file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum SourceFile {
    /// [`StateSource::Clip`].
    Clip {
        /// Clip asset path.
        clip: String,
        /// Speed.
        #[serde(default = "one")]
        speed: f32,
        /// Looping.
        #[serde(default = "yes")]
        looping: bool,
    },
    /// [`StateSource::BlendSpace`].
    BlendSpace {
        /// The clips on the axis.
        #[serde(default)]
        samples: Vec<SampleFile>,
        /// The axis parameter.
        parameter: String,
        /// Looping.
        #[serde(default = "yes")]
        looping: bool,
    },
    /// [`StateSource::Graph`].
    Graph {
        /// Graph asset path.
        graph: String,
    },
}

fn one() -> f32 {
    1.0
}

fn yes() -> bool {
    true
}

fn fifth() -> f32 {
    0.2
}

/// A condition in a file: `(parameter: "speed", test: ">", value: 0.1)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConditionFile {
    /// The parameter.
    pub parameter: String,
    /// The operator ([`Test::operator`]).
    pub test: String,
    /// The constant of a float test.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f32>,
}

/// [`DurationUnit`] in a file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum UnitFile {
    /// Seconds.
    #[default]
    Seconds,
    /// A fraction of the source's length.
    Normalized,
}

/// [`Interruption`] in a file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum InterruptionFile {
    /// Never interrupted.
    #[default]
    None,
    /// By the source's transitions.
    Source,
    /// By the destination's transitions.
    Destination,
}

/// [`SyncRule`] in a file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub enum SyncFile {
    /// From the start.
    #[default]
    Start,
    /// At the source's phase.
    Phase,
    /// Lined up on markers.
    Markers,
}

/// A transition in a file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TransitionFile {
    /// The source state; absent for Any State.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The destination state.
    pub to: String,
    /// Conditions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<ConditionFile>,
    /// Exit time (normalized).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_time: Option<f32>,
    /// Duration.
    #[serde(default = "fifth")]
    pub duration: f32,
    /// Its unit.
    #[serde(default)]
    pub unit: UnitFile,
    /// The blend curve's name.
    #[serde(default = "linear")]
    pub curve: Easing,
    /// The interruption rule.
    #[serde(default)]
    pub interruption: InterruptionFile,
    /// The sync rule.
    #[serde(default)]
    pub sync: SyncFile,
}

fn linear() -> Easing {
    Easing::Linear
}

impl From<&StateMachine> for MachineFile {
    fn from(m: &StateMachine) -> Self {
        MachineFile {
            entry: m.entry.clone(),
            any_at: (m.any_at[0], m.any_at[1]),
            states: m
                .states
                .iter()
                .map(|s| StateFile {
                    name: s.name.clone(),
                    at: (s.at[0], s.at[1]),
                    source: match &s.source {
                        StateSource::Clip { clip, speed, looping } => {
                            SourceFile::Clip { clip: clip.clone(), speed: *speed, looping: *looping }
                        }
                        StateSource::BlendSpace { samples, parameter, looping } => SourceFile::BlendSpace {
                            samples: samples
                                .iter()
                                .map(|x| SampleFile {
                                    clip: x.clip.clone(),
                                    position: x.position,
                                    speed: x.speed,
                                })
                                .collect(),
                            parameter: parameter.clone(),
                            looping: *looping,
                        },
                        StateSource::Graph { graph } => SourceFile::Graph { graph: graph.clone() },
                    },
                })
                .collect(),
            transitions: m
                .transitions
                .iter()
                .map(|t| TransitionFile {
                    from: t.from.clone(),
                    to: t.to.clone(),
                    conditions: t
                        .conditions
                        .iter()
                        .map(|c| ConditionFile {
                            parameter: c.parameter.clone(),
                            test: c.test.operator().to_owned(),
                            value: c.test.value(),
                        })
                        .collect(),
                    exit_time: t.exit_time,
                    duration: t.duration,
                    unit: match t.unit {
                        DurationUnit::Seconds => UnitFile::Seconds,
                        DurationUnit::Normalized => UnitFile::Normalized,
                    },
                    curve: t.curve,
                    interruption: match t.interruption {
                        Interruption::None => InterruptionFile::None,
                        Interruption::Source => InterruptionFile::Source,
                        Interruption::Destination => InterruptionFile::Destination,
                    },
                    sync: match t.sync {
                        SyncRule::FromStart => SyncFile::Start,
                        SyncRule::Phase => SyncFile::Phase,
                        SyncRule::Markers => SyncFile::Markers,
                    },
                })
                .collect(),
        }
    }
}

impl MachineFile {
    /// The authored machine, and a message for each condition dropped (an unknown operator).
    pub fn into_machine(self) -> (StateMachine, Vec<String>) {
        let mut dropped = Vec::new();
        let states = self
            .states
            .into_iter()
            .map(|s| State {
                name: s.name,
                at: [s.at.0, s.at.1],
                source: match s.source {
                    SourceFile::Clip { clip, speed, looping } => StateSource::Clip { clip, speed, looping },
                    SourceFile::BlendSpace { samples, parameter, looping } => StateSource::BlendSpace {
                        samples: samples
                            .into_iter()
                            .map(|x| BlendSample { clip: x.clip, position: x.position, speed: x.speed })
                            .collect(),
                        parameter,
                        looping,
                    },
                    SourceFile::Graph { graph } => StateSource::Graph { graph },
                },
            })
            .collect();
        let transitions = self
            .transitions
            .into_iter()
            .enumerate()
            .map(|(k, t)| {
                let mut out = Transition::new(t.from.as_deref(), &t.to);
                for c in t.conditions {
                    match Test::from_operator(&c.test, c.value.unwrap_or(0.0)) {
                        Some(test) => out.conditions.push(Condition { parameter: c.parameter, test }),
                        None => dropped.push(format!(
                            "transition {} ({}): condition on {:?} has unknown test {:?} (expected >, <, >=, <=, true, false or triggered); dropped",
                            k + 1,
                            out.label(),
                            c.parameter,
                            c.test
                        )),
                    }
                }
                out.exit_time = t.exit_time;
                out.duration = t.duration;
                out.unit = match t.unit {
                    UnitFile::Seconds => DurationUnit::Seconds,
                    UnitFile::Normalized => DurationUnit::Normalized,
                };
                out.curve = t.curve;
                out.interruption = match t.interruption {
                    InterruptionFile::None => Interruption::None,
                    InterruptionFile::Source => Interruption::Source,
                    InterruptionFile::Destination => Interruption::Destination,
                };
                out.sync = match t.sync {
                    SyncFile::Start => SyncRule::FromStart,
                    SyncFile::Phase => SyncRule::Phase,
                    SyncFile::Markers => SyncRule::Markers,
                };
                out
            })
            .collect();
        (
            StateMachine { states, entry: self.entry, transitions, any_at: [self.any_at.0, self.any_at.1] },
            dropped,
        )
    }
}
