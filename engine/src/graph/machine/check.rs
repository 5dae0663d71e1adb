//! What compiles but cannot work as authored: the warnings `marrow check` and the editor show
//! for a state machine. Faults that stop a machine from compiling are the compiler's
//! ([`crate::graph::GraphError::Machine`]); these never stop it.
//!
//! Linear in states plus transitions, so a machine of ten thousand states is checked at once.

use super::{ANY_STATE, StateMachine, Transition};

/// A state machine warning.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MachineWarning {
    /// No transition path leads from the entry (or Any State) to the state.
    Unreachable {
        /// The state.
        state: String,
    },
    /// A transition without conditions or exit time leaves the state at once, so the machine
    /// never stays in it.
    CannotStay {
        /// The state.
        state: String,
        /// The transition (authored order).
        transition: usize,
        /// Its label.
        label: String,
    },
    /// Condition-free, exit-time-free transitions of zero length lead around a ring: the machine
    /// moves one state per tick around it forever.
    InstantRing {
        /// The states of the ring, in order, the first repeated at the end.
        states: Vec<String>,
    },
}

impl std::fmt::Display for MachineWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MachineWarning::Unreachable { state } => {
                write!(f, "state {state:?} cannot be reached from the entry or {ANY_STATE}")
            }
            MachineWarning::CannotStay { state, transition, label } => write!(
                f,
                "state {state:?} cannot be stayed in: transition {} ({label}) has no condition and no exit time",
                transition + 1
            ),
            MachineWarning::InstantRing { states } => write!(
                f,
                "states {} form a ring of zero-length transitions without conditions or exit time",
                states.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(" → ")
            ),
        }
    }
}

fn unconditional(t: &Transition) -> bool {
    t.conditions.is_empty() && t.exit_time.is_none()
}

/// The warnings for `m`, in a stable order: unreachable states, states that cannot be stayed
/// in, rings of instant transitions. Transitions naming missing states are skipped (the
/// compiler reports them).
pub fn machine_warnings(m: &StateMachine) -> Vec<MachineWarning> {
    let n = m.states.len();
    let index: std::collections::HashMap<&str, usize> =
        m.states.iter().enumerate().rev().map(|(i, s)| (s.name.as_str(), i)).collect();
    let edges: Vec<(Option<usize>, usize, usize)> = m
        .transitions
        .iter()
        .enumerate()
        .filter_map(|(k, t)| {
            let to = *index.get(t.to.as_str())?;
            let from = match &t.from {
                None => None,
                Some(f) => Some(*index.get(f.as_str())?),
            };
            Some((from, to, k))
        })
        .collect();
    let mut out = Vec::new();
    // Reachability from the entry and Any State's destinations.
    let mut leaving = vec![Vec::new(); n];
    let mut seen = vec![false; n];
    let mut stack: Vec<usize> = index.get(m.entry.as_str()).copied().into_iter().collect();
    for &(from, to, _) in &edges {
        match from {
            Some(f) => leaving[f].push(to),
            None => stack.push(to),
        }
    }
    while let Some(s) = stack.pop() {
        if !std::mem::replace(&mut seen[s], true) {
            stack.extend(leaving[s].iter().copied());
        }
    }
    if index.contains_key(m.entry.as_str()) {
        out.extend(
            (0..n)
                .filter(|&s| !seen[s])
                .map(|s| MachineWarning::Unreachable { state: m.states[s].name.clone() }),
        );
    }
    // States left at once.
    let mut flagged = vec![false; n];
    for &(from, to, k) in &edges {
        let t = &m.transitions[k];
        if !unconditional(t) {
            continue;
        }
        let states: Vec<usize> = match from {
            Some(f) => vec![f],
            None => (0..n).filter(|&s| s != to).collect(),
        };
        for s in states {
            if !std::mem::replace(&mut flagged[s], true) {
                out.push(MachineWarning::CannotStay {
                    state: m.states[s].name.clone(),
                    transition: k,
                    label: t.label(),
                });
            }
        }
    }
    // Rings of instant transitions (state to state; Any State's cannot ring by themselves).
    let mut instant = vec![Vec::new(); n];
    for &(from, to, k) in &edges {
        let t = &m.transitions[k];
        if let Some(f) = from
            && unconditional(t)
            && t.duration == 0.0
        {
            instant[f].push(to);
        }
    }
    // Iterative colouring DFS: 0 unvisited, 1 on the path, 2 done.
    let mut colour = vec![0u8; n];
    for root in 0..n {
        if colour[root] != 0 {
            continue;
        }
        let mut path: Vec<(usize, usize)> = vec![(root, 0)];
        colour[root] = 1;
        while let Some(&mut (s, ref mut next)) = path.last_mut() {
            if let Some(&to) = instant[s].get(*next) {
                *next += 1;
                match colour[to] {
                    0 => {
                        colour[to] = 1;
                        path.push((to, 0));
                    }
                    1 => {
                        let at = path.iter().position(|&(p, _)| p == to).unwrap_or(0);
                        let mut states: Vec<String> =
                            path[at..].iter().map(|&(p, _)| m.states[p].name.clone()).collect();
                        states.push(m.states[to].name.clone());
                        out.push(MachineWarning::InstantRing { states });
                    }
                    _ => {}
                }
            } else {
                colour[s] = 2;
                path.pop();
            }
        }
    }
    out
}
