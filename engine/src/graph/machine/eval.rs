//! Playing a compiled state machine: [`MachineInstance`], one character's session state for one
//! StateMachine node (never saved, never in an undo step).
//!
//! ## The tick
//! The host graph's [`advance`](crate::graph::GraphInstance::advance) ticks each machine once,
//! after its parameters were set and before anything is sampled, in this order:
//! 1. The first tick after a reset announces entering the entry state.
//! 2. The active states advance by the tick (a state reads the host's parameters of the same
//!    name; a trigger it consumes is cleared in the host). During a transition the source (unless
//!    it is a snapshot) and the destination both advance; the one of weight >= 0.5 speaks.
//! 3. A transition in progress whose blend is complete ends: the destination becomes current.
//! 4. At most one transition fires: while no transition runs, Any State's transitions (in
//!    authored order, skipping one to the current state) and then the current state's; during a
//!    transition, only if its interruption rule allows, Any State's and then those of its source
//!    state (rule `source`) or its destination (rule `destination`), never one to the state it is
//!    already going to. A transition is taken when all its conditions hold and its exit time (if
//!    any) was reached this tick: below 1 on a looping source, when the source's normalized time
//!    crossed `k + exit` for some lap `k` during the tick; otherwise once its normalized time since
//!    it was entered is at least `exit`. Taking it clears the triggers its conditions test.
//! 5. The destination restarts where its sync rule says (start, the source's phase, or lined up
//!    on the next marker of the source's next marker's name); an interruption, or a transition
//!    back into the state it leaves, freezes the pose of that moment as a snapshot and blends from
//!    it. A transition of zero length ends in the tick it fires.
//!
//! So a ring of condition-free zero-length transitions moves one state per tick, never loops
//! within a tick.
//!
//! ## Events
//! Announced (only while the graph speaks, so never on a seek or a paused frame, where nothing
//! ticks) into the host's event list after the states' own marker events of the tick:
//! a transition's start announces `TransitionStart` (from, to) then `Enter` (to); its end `Exit`
//! (from) then `TransitionEnd`. An interruption ends the interrupted transition first
//! (`TransitionEnd`, then `Exit` of its source and destination) before the new one starts (its
//! end then exits nothing: the snapshot has no state). A transition back into the state it leaves
//! announces `Exit` and `Enter` of that state at its start.
//!
//! Nothing here allocates per tick (events beyond the host's preallocated capacity aside).

use std::sync::Arc;

use super::compile::{CompiledMachine, CompiledTransition};
use super::{DurationUnit, Interruption, SyncRule, Test};
use crate::graph::eval::{GraphInstance, GraphMarkerEvent, blend_two, views};
use crate::graph::model::{NodeId, ParamValue};
use crate::math::Transform;
use crate::pose::JobError;
use crate::root_motion::{RootDelta, RootMotion};

/// What happened to a state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum StateEventKind {
    /// The state was entered.
    Enter,
    /// The state was left.
    Exit,
    /// A transition started.
    TransitionStart,
    /// A transition ended (completed, or was interrupted).
    TransitionEnd,
}

impl StateEventKind {
    /// A word for logs and the event lane.
    pub fn name(self) -> &'static str {
        match self {
            StateEventKind::Enter => "enter",
            StateEventKind::Exit => "exit",
            StateEventKind::TransitionStart => "transition start",
            StateEventKind::TransitionEnd => "transition end",
        }
    }
}

/// A state machine event (see the module docs for when each is announced).
#[derive(Clone, Debug, PartialEq)]
pub struct StateEvent {
    /// What happened.
    pub kind: StateEventKind,
    /// The StateMachine node.
    pub machine: NodeId,
    /// The state entered or left; a transition's destination.
    pub state: Arc<str>,
    /// A transition's source ("Any State" for Any State); `None` for enter and exit.
    pub from: Option<Arc<str>>,
}

/// A transition in progress.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Active {
    /// Index into the machine's transitions.
    transition: u16,
    /// The source state blended from (`None`: the snapshot).
    from: Option<u16>,
    /// The state whose transitions interrupt under the `source` rule.
    origin: u16,
    /// The destination.
    to: u16,
    /// Seconds blended so far.
    elapsed: f32,
    /// The blend's length in seconds.
    duration: f32,
}

/// A transition in progress, as [`MachineInstance::transition`] reports it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TransitionView {
    /// Index into the machine's transitions (authored order).
    pub transition: usize,
    /// The source state (`None`: blending from a snapshot after an interruption).
    pub from: Option<usize>,
    /// The destination state.
    pub to: usize,
    /// Progress in `[0, 1]`.
    pub progress: f32,
    /// The destination's weight (the curve at `progress`).
    pub weight: f32,
}

/// One character's session state for one compiled state machine.
#[derive(Clone, Debug)]
pub struct MachineInstance {
    states: Vec<GraphInstance>,
    current: u16,
    /// Per state: its normalized time since it was entered, after this tick's advance.
    norm: Vec<f32>,
    /// Per state: the same before this tick's advance.
    norm_before: Vec<f32>,
    transition: Option<Active>,
    started: bool,
    snapshot: Vec<Transform>,
    /// The root motion of the last tick: the states' own, by the transition's weights.
    root_delta: RootDelta,
}

/// Two scratch poses (the host's pose slots the machine owns) for an interruption's snapshot.
pub(crate) type Scratch<'a> = Option<(&'a mut [Transform], &'a mut [Transform])>;

/// The host's pose slots and the two the machine may use, split only when a snapshot is taken.
pub(crate) struct HostSlots<'a> {
    /// The host's flat pose slots.
    pub slots: &'a mut [Transform],
    /// Bones per slot.
    pub n: usize,
    /// The machine's two scratch slots.
    pub pair: (u16, u16),
}

impl HostSlots<'_> {
    fn split(&mut self) -> Scratch<'_> {
        two_slots(self.slots, self.n, self.pair.0, self.pair.1)
    }
}

/// Slots `a` and `b` (distinct) of flat slot storage of `n` bones each, both mutable.
pub(crate) fn two_slots(slots: &mut [Transform], n: usize, a: u16, b: u16) -> Scratch<'_> {
    let (a, b) = (a as usize, b as usize);
    let (lo, hi) = (a.min(b), a.max(b));
    if a == b || (hi + 1) * n > slots.len() {
        return None;
    }
    let (first, second) = slots.split_at_mut(hi * n);
    let (low, high) = (&mut first[lo * n..lo * n + n], &mut second[..n]);
    Some(if a < b { (low, high) } else { (high, low) })
}

fn holds(test: Test, v: ParamValue) -> bool {
    let f = v.as_f32();
    match test {
        Test::Greater(c) => f > c,
        Test::Less(c) => f < c,
        Test::AtLeast(c) => f >= c,
        Test::AtMost(c) => f <= c,
        Test::IsTrue | Test::Triggered => f != 0.0,
        Test::IsFalse => f == 0.0,
    }
}

fn weight_of(m: &CompiledMachine, a: &Active) -> f32 {
    if a.duration > 0.0 {
        m.transitions[a.transition as usize].curve.apply(a.elapsed / a.duration)
    } else {
        1.0
    }
}

impl MachineInstance {
    /// An instance in the entry state, every state at its start.
    pub fn new(m: &CompiledMachine) -> Self {
        let n = m.bind.len();
        let states: Vec<GraphInstance> =
            m.states.iter().map(|s| GraphInstance::new(s.program.clone())).collect();
        let count = states.len();
        MachineInstance {
            states,
            current: m.entry,
            norm: vec![0.0; count],
            norm_before: vec![0.0; count],
            transition: None,
            started: false,
            snapshot: vec![Transform::IDENTITY; n],
            root_delta: RootDelta::IDENTITY,
        }
    }

    /// Takes root motion in every state (see [`GraphInstance::set_root_motion`]).
    pub fn set_root_motion(&mut self, root: Option<(RootMotion, Transform)>) {
        for s in &mut self.states {
            s.set_root_motion(root);
        }
    }

    /// The root motion of the last tick: the playing state's, or the two states of a transition
    /// by its weights (only the destination's when it started from a held snapshot).
    pub fn root_delta(&self) -> RootDelta {
        self.root_delta
    }

    /// Back to the entry state, every state at its start, nothing announced yet.
    pub fn reset(&mut self, m: &CompiledMachine) {
        for s in &mut self.states {
            s.reset_playheads();
        }
        self.current = m.entry;
        self.norm.fill(0.0);
        self.norm_before.fill(0.0);
        self.transition = None;
        self.started = false;
    }

    /// The state that counts as current for a user: the destination of a transition in
    /// progress, else the current state.
    pub fn active_state(&self) -> usize {
        self.transition.map_or(self.current as usize, |a| a.to as usize)
    }

    /// The transition in progress (see [`TransitionView`]).
    pub fn transition(&self, m: &CompiledMachine) -> Option<TransitionView> {
        let a = self.transition?;
        let progress = if a.duration > 0.0 { (a.elapsed / a.duration).clamp(0.0, 1.0) } else { 1.0 };
        Some(TransitionView {
            transition: a.transition as usize,
            from: a.from.map(|f| f as usize),
            to: a.to as usize,
            progress,
            weight: weight_of(m, &a),
        })
    }

    /// State `s`'s normalized time since it was entered (laps counted).
    pub fn state_time(&self, s: usize) -> Option<f32> {
        self.norm.get(s).copied()
    }

    /// State `s`'s normalized phase in `[0, 1]`.
    pub fn state_phase(&self, s: usize) -> Option<f32> {
        self.states.get(s).map(GraphInstance::lead_phase)
    }

    /// State `s`'s graph instance (its playheads, nested machines).
    pub fn state(&self, s: usize) -> Option<&GraphInstance> {
        self.states.get(s)
    }

    /// The states that contribute to the pose, with their weights: the current state alone, or a
    /// transition's source (`None` when it is the snapshot) and destination.
    pub fn weights(&self, m: &CompiledMachine) -> [(Option<usize>, f32); 2] {
        match self.transition {
            None => [(Some(self.current as usize), 1.0), (None, 0.0)],
            Some(a) => {
                let w = weight_of(m, &a);
                [(a.from.map(|f| f as usize), 1.0 - w), (Some(a.to as usize), w)]
            }
        }
    }

    fn say(
        &self,
        m: &CompiledMachine,
        kind: super::StateEventKind,
        state: u16,
        from: Option<Arc<str>>,
        out: &mut Vec<GraphMarkerEvent>,
    ) {
        let s = &m.states[state as usize];
        out.push(GraphMarkerEvent::state(
            m.node,
            s.clip.clone(),
            StateEvent { kind, machine: m.node, state: s.name.clone(), from },
        ));
    }

    /// One tick of `dt` seconds (see the module docs). `params` are the host's; a consumed
    /// trigger is cleared there. Events go to `events` when `speaks`.
    pub(crate) fn tick(
        &mut self,
        m: &CompiledMachine,
        params: &mut [ParamValue],
        dt: f32,
        speaks: bool,
        events: &mut Vec<GraphMarkerEvent>,
        scratch: HostSlots<'_>,
    ) {
        if m.states.is_empty() {
            return;
        }
        if !std::mem::replace(&mut self.started, true) && speaks {
            self.say(m, StateEventKind::Enter, self.current, None, events);
        }
        self.root_delta = RootDelta::IDENTITY;
        match self.transition {
            Some(a) => {
                let w = weight_of(m, &a);
                if let Some(f) = a.from {
                    self.advance_state(m, f, params, dt, speaks && w < 0.5, events);
                }
                self.advance_state(m, a.to, params, dt, speaks && w >= 0.5, events);
                // From a held snapshot (an interruption) only the destination moves the root.
                let to = self.states[a.to as usize].root_delta();
                self.root_delta = match a.from {
                    Some(f) => self.states[f as usize].root_delta().weighted(1.0 - w).plus(to.weighted(w)),
                    None => to,
                };
                let active = self.transition.as_mut().expect("checked above");
                active.elapsed += dt.abs();
                if active.elapsed >= active.duration {
                    self.finish(m, speaks, events);
                }
            }
            None => {
                self.advance_state(m, self.current, params, dt, speaks, events);
                self.root_delta = self.states[self.current as usize].root_delta();
            }
        }
        if let Some(k) = self.choose(m, params) {
            self.fire(m, k, params, speaks, events, scratch);
        }
    }

    fn advance_state(
        &mut self,
        m: &CompiledMachine,
        s: u16,
        params: &mut [ParamValue],
        dt: f32,
        speaks: bool,
        events: &mut Vec<GraphMarkerEvent>,
    ) {
        let st = &m.states[s as usize];
        let inst = &mut self.states[s as usize];
        for &(h, j) in &st.bindings {
            inst.set_parameter(j as usize, params[h as usize]);
        }
        let (p0, _, _) = inst.lead_state();
        inst.advance_with(dt, speaks);
        if !inst.events().is_empty() {
            events.extend(inst.events().iter().cloned());
        }
        for &(h, j) in &st.bindings {
            if let ParamValue::Trigger(_) = params[h as usize]
                && let Some(v) = inst.parameter_at(j as usize)
            {
                params[h as usize] = v;
            }
        }
        let (p1, looping, laps_per_second) = inst.lead_state();
        let mut travel = p1 - p0;
        if looping {
            let expected = if laps_per_second.is_finite() { dt * laps_per_second } else { travel };
            // Whole laps the phase hides: the nearest integer to the difference (by casts, not
            // a rounding call, on this per-tick path).
            let d = expected - travel;
            if d.is_finite() && d.abs() >= 0.5 {
                travel += if d > 0.0 { (d + 0.5) as i64 as f32 } else { -((0.5 - d) as i64 as f32) };
            }
        }
        let k = s as usize;
        self.norm_before[k] = self.norm[k];
        self.norm[k] += travel;
    }

    fn finish(&mut self, m: &CompiledMachine, speaks: bool, events: &mut Vec<GraphMarkerEvent>) {
        let Some(a) = self.transition.take() else { return };
        self.current = a.to;
        if speaks {
            let t = &m.transitions[a.transition as usize];
            if let Some(f) = a.from {
                self.say(m, StateEventKind::Exit, f, None, events);
            }
            self.say(m, StateEventKind::TransitionEnd, a.to, Some(t.from_name.clone()), events);
        }
    }

    fn exit_reached(&self, t: &CompiledTransition, s: u16) -> bool {
        let Some(e) = t.exit_time else { return true };
        let (u0, u1) = (self.norm_before[s as usize], self.norm[s as usize]);
        if e < 1.0 && self.states[s as usize].lead_looping() {
            u1 > u0 && (u1 - e).floor() > (u0 - e).floor()
        } else {
            u1 >= e
        }
    }

    fn choose(&self, m: &CompiledMachine, params: &[ParamValue]) -> Option<u16> {
        let ok = |t: &CompiledTransition| {
            t.conditions.iter().all(|c| params.get(c.param as usize).is_some_and(|v| holds(c.test, *v)))
        };
        match self.transition {
            None => {
                let cur = self.current;
                m.resting[cur as usize].iter().copied().find(|&k| {
                    let t = &m.transitions[k as usize];
                    ok(t) && self.exit_reached(t, cur)
                })
            }
            Some(a) => {
                let from = match m.transitions[a.transition as usize].interruption {
                    Interruption::None => return None,
                    Interruption::Source => a.origin,
                    Interruption::Destination => a.to,
                };
                let any = m.any.iter().copied().map(|k| (k, a.to));
                let own = m.leaving[from as usize].iter().copied().map(|k| (k, from));
                any.chain(own).find_map(|(k, s)| {
                    let t = &m.transitions[k as usize];
                    (k != a.transition && t.to != a.to && ok(t) && self.exit_reached(t, s)).then_some(k)
                })
            }
        }
    }

    /// Takes transition `k` (see the module docs).
    fn fire(
        &mut self,
        m: &CompiledMachine,
        k: u16,
        params: &mut [ParamValue],
        speaks: bool,
        events: &mut Vec<GraphMarkerEvent>,
        mut scratch: HostSlots<'_>,
    ) {
        let t = &m.transitions[k as usize];
        for c in &t.conditions {
            if c.test == Test::Triggered {
                params[c.param as usize] = ParamValue::Trigger(false);
            }
        }
        let interrupted = self.transition;
        // The state the destination syncs to and a normalized duration measures.
        let src = match interrupted {
            None => self.current,
            Some(a) => match m.transitions[a.transition as usize].interruption {
                Interruption::Source if t.from == Some(a.origin) => a.origin,
                _ => a.to,
            },
        };
        let duration = match t.unit {
            DurationUnit::Seconds => t.duration,
            DurationUnit::Normalized => t.duration * self.states[src as usize].lead_length().abs(),
        };
        let duration = if duration.is_finite() { duration } else { 0.0 };
        let snapshot = interrupted.is_some() || t.to == self.current;
        if snapshot {
            self.take_snapshot(m, scratch.split());
        }
        // The source's phase is read before the destination restarts (they may be one state).
        let src_phase = self.states[src as usize].lead_phase();
        let to = t.to as usize;
        self.states[to].reset_playheads();
        let phase = match t.sync {
            SyncRule::FromStart => None,
            SyncRule::Phase => Some(src_phase),
            SyncRule::Markers => {
                Some(marker_phase(&self.states[src as usize], &self.states[to]).unwrap_or(src_phase))
            }
        };
        if let Some(p) = phase {
            self.states[to].set_phase(p);
        }
        let start = self.states[to].lead_phase();
        self.norm[to] = start;
        self.norm_before[to] = start;
        if speaks {
            if let Some(a) = interrupted {
                let old = &m.transitions[a.transition as usize];
                self.say(m, StateEventKind::TransitionEnd, a.to, Some(old.from_name.clone()), events);
                if let Some(f) = a.from {
                    self.say(m, StateEventKind::Exit, f, None, events);
                }
                self.say(m, StateEventKind::Exit, a.to, None, events);
            }
            self.say(m, StateEventKind::TransitionStart, t.to, Some(t.from_name.clone()), events);
            if interrupted.is_none() && t.to == self.current {
                self.say(m, StateEventKind::Exit, t.to, None, events);
            }
            self.say(m, StateEventKind::Enter, t.to, None, events);
        }
        self.transition = Some(Active {
            transition: k,
            from: if snapshot { None } else { Some(self.current) },
            origin: t.from.unwrap_or(src),
            to: t.to,
            elapsed: 0.0,
            duration,
        });
        if duration <= 0.0 {
            self.finish(m, speaks, events);
        }
    }

    /// Freezes the machine's present pose (the current state, or the transition's blend) into
    /// the snapshot, sampled against the bind pose the machine was compiled with.
    fn take_snapshot(&mut self, m: &CompiledMachine, scratch: Scratch<'_>) {
        let bind = &m.bind[..];
        match (self.transition, scratch) {
            (None, _) => {
                let c = self.current as usize;
                if self.states[c].run(bind, &mut self.snapshot).is_err() {
                    self.snapshot.copy_from_slice(bind);
                }
            }
            // No scratch (cannot happen for a compiled machine): the bind pose is held.
            (Some(_), None) => self.snapshot.copy_from_slice(bind),
            (Some(a), Some((a_buf, b_buf))) => {
                let w = weight_of(m, &a);
                if let Some(f) = a.from {
                    if self.states[f as usize].run(bind, a_buf).is_err() {
                        a_buf.copy_from_slice(bind);
                    }
                } else {
                    a_buf.copy_from_slice(&self.snapshot);
                }
                if self.states[a.to as usize].run(bind, b_buf).is_err() {
                    b_buf.copy_from_slice(bind);
                }
                blend_two(a_buf, 1.0 - w, None, b_buf, w, None, bind, &mut self.snapshot);
            }
        }
    }

    /// Writes the machine's pose into `out` (scratch slots `a`, `b` for a transition).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn evaluate_into(
        &mut self,
        m: &CompiledMachine,
        bind: &[Transform],
        slots: &mut [Transform],
        n: usize,
        a: u16,
        b: u16,
        out: &mut [Transform],
    ) -> Result<(), JobError> {
        match self.transition {
            None => self.states[self.current as usize].run(bind, out),
            Some(t) => {
                let w = weight_of(m, &t);
                if let Some(f) = t.from {
                    let ([], o) = views(slots, n, [], a)?;
                    self.states[f as usize].run(bind, o)?;
                }
                let ([], o) = views(slots, n, [], b)?;
                self.states[t.to as usize].run(bind, o)?;
                let (pa, pb) = (a as usize * n, b as usize * n);
                let source = if t.from.is_some() { &slots[pa..pa + n] } else { &self.snapshot[..] };
                blend_two(source, 1.0 - w, None, &slots[pb..pb + n], w, None, bind, out);
                Ok(())
            }
        }
    }

    /// Writes the machine's pose into slot `dst` (scratch slots `a`, `b` for a transition).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn evaluate(
        &mut self,
        m: &CompiledMachine,
        bind: &[Transform],
        slots: &mut [Transform],
        n: usize,
        dst: u16,
        a: u16,
        b: u16,
    ) -> Result<(), JobError> {
        match self.transition {
            None => {
                let ([], out) = views(slots, n, [], dst)?;
                self.states[self.current as usize].run(bind, out)
            }
            Some(t) => {
                let w = weight_of(m, &t);
                if let Some(f) = t.from {
                    let ([], out) = views(slots, n, [], a)?;
                    self.states[f as usize].run(bind, out)?;
                }
                {
                    let ([], out) = views(slots, n, [], b)?;
                    self.states[t.to as usize].run(bind, out)?;
                }
                let ([pa, pb], out) = views(slots, n, [a, b], dst)?;
                let source = if t.from.is_some() { pa } else { &self.snapshot[..] };
                blend_two(source, 1.0 - w, None, pb, w, None, bind, out);
                Ok(())
            }
        }
    }
}

/// The phase at which `dst` (reset to its start) should start so that its next marker named
/// like `src`'s next marker arrives when that one does; `None` when either has no such marker or
/// `src` does not move forward.
fn marker_phase(src: &GraphInstance, dst: &GraphInstance) -> Option<f32> {
    let s = src.lead_marker()?;
    if !(s.rate > 0.0) {
        return None;
    }
    let markers = s.clip.markers();
    let after = markers.iter().filter(|k| k.time > s.time).min_by(|x, y| x.time.total_cmp(&y.time));
    let (name, wait) = match after {
        Some(k) => (&k.name, (k.time - s.time) / s.rate),
        None if s.looping => {
            let k = markers.iter().min_by(|x, y| x.time.total_cmp(&y.time))?;
            (&k.name, (k.time + s.duration - s.time) / s.rate)
        }
        None => return None,
    };
    let d = dst.lead_marker()?;
    if !(d.duration > 0.0) {
        return None;
    }
    let k = d.clip.markers().iter().find(|k| &k.name == name)?;
    let t = k.time - wait * d.rate;
    let t = if d.looping { t.rem_euclid(d.duration) } else { t.clamp(0.0, d.duration) };
    Some((t / d.duration).clamp(0.0, 1.0))
}
