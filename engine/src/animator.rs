//! The Animator: one per character. It owns a character's playback (a current head, an optional
//! crossfade from an outgoing head), its bone adjusts and its marker events, and evaluates the
//! character's pose through the jobs in [`crate::pose`].
//!
//! Authored state is [`AnimatorSettings`] (clip, speed, `play_on_start`, root motion): the only
//! part a scene saves. Everything else here is session state (playing, time, the `started` latch, the fade, the
//! adjust list, queued events) and is never saved.
//!
//! ## Crossfade rules ([`Animator::cross_fade_to`])
//! | Call | Result |
//! |---|---|
//! | the clip already playing | left alone |
//! | the same clip, stopped | played again from its start |
//! | any clip while the current one is stopped | blended out of the held frame, which advances as it fades |
//! | no current clip, or seconds <= 0 (or not finite) | a cut |
//! | again, mid-fade | the outgoing clip is dropped; the blend runs from the one being faded to |
//!
//! The outgoing head keeps advancing at its own time with its own looping. The countdown runs in
//! unscaled simulation seconds and is gated on simulation time (`dt > 0`), not on `playing`.
//! The incoming weight is `1 - remaining / duration`; at weight 1 the outgoing head is not sampled.
//!
//! ## Marker events
//! Each advance sweeps the heads (see [`crate::playback`] for the sweep rule). A head's markers are
//! announced only while it dominates the blend: the incoming head at weight >= 0.5 (always, without
//! a fade), the outgoing head while its weight is above 0.5; so exactly one clip speaks at a time
//! and a crossfade between two walks does not double the footsteps. Events are queued during the
//! advance and delivered by [`Animator::deliver_events`] at the start of the next simulation stage.
//!
//! ## Graphs
//! A compiled blend graph ([`GraphProgram`]) plays in place of a clip:
//! [`Animator::cross_fade_to_graph`] follows the crossfade table above, with "the same graph"
//! meaning the same program `Arc` (a stopped one restarts from its playheads' starts), so fades
//! work clip to graph, graph to clip and graph to graph. A graph head's markers follow the graph's
//! own rule ([`crate::graph::eval`]) and are announced only while the head dominates, as above.
//! Its Adjust nodes' model-space adjusts are applied at composition, ahead of the animator's own
//! adjusts, scaled by the head's fade weight ([`crate::graph::eval::weighted_adjust`]); its
//! FootPlant solves run first on the composed pose (ankles onto the ground plane, hips lowered,
//! legs bent by [`crate::ik::TwoBoneIkJob`], feet turned back and tilted), then its
//! TwoBoneIk solves run on the composed pose ([`crate::ik::TwoBoneIkJob`], each weighted by the
//! head's fade weight), their corrections go onto the chains' local rotations and the pose is
//! composed again, so the bones below a chain follow; its LookAt solves then run the same way
//! ([`crate::ik::AimJob`], the aim's up toward model-space up). A graph
//! head's `time` is the graph time it has advanced; [`Animator::seek`] does not move its playheads.
//!
//! ## Root motion
//! With [`AnimatorSettings::root_motion`] set, each advance computes the heads' root motion
//! ([`crate::root_motion`]): a clip head's from its step (whole laps composed in), a graph head's
//! from its flow, the two heads of a crossfade weighted as their poses are. The sum is
//! [`Animator::root_motion_step`] and accumulates in [`Animator::root_motion`]; evaluation puts
//! the root bone in place. A seek places the character where playing from the start would have;
//! [`Animator::reset_session`] and [`Animator::reset_root_motion`] bring it back.
//!
//! ## Faults
//! A clip (or graph) for another rig leaves the bind pose standing. The animator only notes it
//! ([`Animator::current_fault`], and a `debug` log line); the scene's world warns about it once
//! per occurrence gap through its fault latches, so the warning is not repeated per head.
//!
//! Not here: the fixed-tick clock ([`crate::clock`]), graph compilation ([`crate::graph`]), scenes.

use std::sync::Arc;

use glam::{Mat4, Quat, Vec3};

use crate::clip::{Clip, ClipFault, find_clip_fault};
use crate::graph::eval::weighted_adjust;
use crate::graph::{GraphInstance, GraphProgram};
use crate::math::Transform;
use crate::playback::{PlaybackStep, advance_head, swept_markers};
use crate::pose::{
    BlendLayer, BlendingJob, BoneAdjust, JobError, LocalToModelJob, PaletteJob, RigPoseMut, SamplingContext,
    SamplingJob, insert_adjust,
};
use crate::root_motion::{
    RootAccumulator, RootCursor, RootDelta, RootMotion, clip_delta_cursor, remove_motion,
};
use crate::skeleton::Skeleton;

/// The authored part of an Animator: what a scene file saves. Equality compares clips by value
/// and graph programs by identity (the same compiled `Arc`).
#[derive(Clone, Debug)]
pub struct AnimatorSettings {
    /// The clip the animator starts on.
    pub clip: Option<Arc<Clip>>,
    /// A compiled blend graph the animator starts on instead of a clip (it wins over `clip`).
    pub graph: Option<Arc<GraphProgram>>,
    /// Playback speed (negative plays backwards).
    pub speed: f32,
    /// Start playing on the first step with non-zero simulation time.
    pub play_on_start: bool,
    /// Root motion taken from the root bone (`None`: the root moves in the pose, as authored).
    pub root_motion: Option<RootMotion>,
}

impl PartialEq for AnimatorSettings {
    fn eq(&self, other: &Self) -> bool {
        self.clip == other.clip
            && self.speed == other.speed
            && self.play_on_start == other.play_on_start
            && self.root_motion == other.root_motion
            && match (&self.graph, &other.graph) {
                (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                (None, None) => true,
                _ => false,
            }
    }
}

impl Default for AnimatorSettings {
    fn default() -> Self {
        Self { clip: None, graph: None, speed: 1.0, play_on_start: true, root_motion: None }
    }
}

/// A snapshot of an Animator's session state ([`Animator::session`]); never saved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AnimatorSession {
    /// The current head's time.
    pub time: f32,
    /// Whether the current head plays.
    pub playing: bool,
    /// The current head's looping (`None`: no head).
    pub looping: Option<bool>,
    /// Whether the first simulation step has happened (`play_on_start` has acted).
    pub started: bool,
}

/// What an event of the stream is: a clip's marker, or a state machine's event.
#[derive(Clone, Debug, PartialEq)]
pub enum EventKind {
    /// A marker swept by a playing clip.
    Marker,
    /// A state machine's state entered or left, or a transition started or ended.
    State(crate::graph::machine::StateEvent),
}

/// A marker announced by a playing head, or a state machine's event (see [`EventKind`]).
#[derive(Clone, Debug)]
pub struct MarkerEvent {
    /// The clip the marker belongs to (for a state event: the clip its state plays first).
    pub clip: Arc<Clip>,
    /// Index into the clip's markers (`usize::MAX` for a state event).
    pub marker: usize,
    /// 0 for the lap the step started in, +1/-1 for the lap a looping head wrapped into.
    pub lap: i32,
    /// A marker or a state event.
    pub kind: EventKind,
}

impl MarkerEvent {
    /// The marker's name ("" for an index the clip does not have); a state event's state.
    pub fn name(&self) -> &str {
        match &self.kind {
            EventKind::Marker => marker_name(&self.clip, self.marker),
            EventKind::State(e) => &e.state,
        }
    }

    /// The state machine event, if this is one.
    pub fn state(&self) -> Option<&crate::graph::machine::StateEvent> {
        match &self.kind {
            EventKind::State(e) => Some(e),
            EventKind::Marker => None,
        }
    }

    /// The marker's time in its clip (NaN for an index the clip does not have).
    pub fn time(&self) -> f32 {
        marker_time(&self.clip, self.marker)
    }
}

/// Marker `i`'s name in `clip`, or "" (the one rule both event types follow).
pub(crate) fn marker_name(clip: &Clip, i: usize) -> &str {
    clip.markers().get(i).map_or("", |m| m.name.as_str())
}

/// Marker `i`'s time in `clip`, or NaN.
pub(crate) fn marker_time(clip: &Clip, i: usize) -> f32 {
    clip.markers().get(i).map_or(f32::NAN, |m| m.time)
}

/// What a head plays: a clip (with its derived duration and its sampling cursors) or a graph.
#[derive(Clone, Debug)]
enum Source {
    /// A clip. `duration` is derived from the (immutable) clip when the head is made.
    Clip { clip: Arc<Clip>, duration: f32, context: SamplingContext },
    /// A compiled blend graph's instance (its playheads, parameters and events).
    Graph(Box<GraphInstance>),
}

/// A playing (or held) source: a clip or a graph, and a time.
#[derive(Clone, Debug)]
struct Head {
    source: Source,
    time: f32,
    looping: bool,
    playing: bool,
    /// Cached [`find_clip_fault`] against the animator's skeleton (for a graph: its program
    /// compiled for another rig).
    fault: Option<ClipFault>,
    /// Where a clip head's root motion stepped to last (unused by a graph head).
    root: RootCursor,
}

impl Head {
    fn new(clip: Arc<Clip>, skeleton: &Skeleton, looping: bool, speed: f32) -> Self {
        let duration = clip.duration();
        let fault = find_clip_fault(&clip, skeleton);
        if let Some(f) = &fault {
            log::debug!("animator on skeleton {:?}: {f}; the bind pose stands", skeleton.name);
        }
        let mut context = SamplingContext::new(clip.channels().len());
        if fault.is_none() {
            // Compile the clip now (once per clip, shared by every head) and size this head's
            // stream slots for it, not in a frame.
            context.prepare(&clip);
        }
        Head {
            time: if speed < 0.0 { duration } else { 0.0 },
            looping,
            playing: false,
            fault,
            source: Source::Clip { context, clip, duration },
            root: RootCursor::default(),
        }
    }

    /// A head playing a compiled graph (it has no end: its duration is 0 and it starts at 0). A
    /// program compiled for another skeleton is a fault (the bind pose stands).
    fn new_graph(program: Arc<GraphProgram>, skeleton: &Skeleton) -> Self {
        let mut fault = None;
        if program.skeleton() != skeleton.name || program.bone_count() != skeleton.bone_count() {
            let f = ClipFault::OtherRig {
                clip: "graph".to_owned(),
                clip_skeleton: program.skeleton().to_owned(),
                skeleton: skeleton.name.clone(),
            };
            log::debug!("animator on skeleton {:?}: {f}; the bind pose stands", skeleton.name);
            fault = Some(f);
        }
        Head {
            source: Source::Graph(Box::new(GraphInstance::new(program))),
            time: 0.0,
            looping: true,
            playing: false,
            fault,
            root: RootCursor::default(),
        }
    }

    /// The clip's derived duration (0 for a graph).
    fn duration(&self) -> f32 {
        match &self.source {
            Source::Clip { duration, .. } => *duration,
            Source::Graph(_) => 0.0,
        }
    }

    /// The clip played, if the head plays one.
    fn clip(&self) -> Option<&Arc<Clip>> {
        match &self.source {
            Source::Clip { clip, .. } => Some(clip),
            Source::Graph(_) => None,
        }
    }

    /// The graph played, if the head plays one.
    fn graph(&self) -> Option<&GraphInstance> {
        match &self.source {
            Source::Graph(g) => Some(g),
            Source::Clip { .. } => None,
        }
    }

    fn restart(&mut self, speed: f32) {
        self.time = if speed < 0.0 { self.duration() } else { 0.0 };
        if let Source::Graph(g) = &mut self.source {
            g.reset_playheads();
        }
    }

    /// Advances by `travel`; queues markers when `speaks`.
    fn advance(&mut self, travel: f32, speaks: bool, events: &mut Vec<MarkerEvent>) -> PlaybackStep {
        let speaks = speaks && self.fault.is_none();
        match &mut self.source {
            Source::Graph(g) => {
                let from = self.time;
                if travel == 0.0 || !travel.is_finite() {
                    return PlaybackStep::still(from);
                }
                g.advance_with(travel, speaks);
                let evs = g.events().iter();
                events.extend(evs.map(|e| MarkerEvent {
                    clip: e.clip.clone(),
                    marker: e.marker,
                    lap: e.lap,
                    kind: e.kind.clone(),
                }));
                self.time += travel;
                PlaybackStep { from, to: self.time, travel: self.time - from }
            }
            Source::Clip { clip, duration, .. } => {
                let (step, ended) = advance_head(self.time, travel, *duration, self.looping);
                self.time = step.to;
                if ended {
                    self.playing = false;
                }
                if speaks {
                    let times = clip.markers().iter().map(|m| m.time);
                    swept_markers(times, &step, *duration, self.looping, |marker, lap| {
                        events.push(MarkerEvent { clip: clip.clone(), marker, lap, kind: EventKind::Marker })
                    });
                }
                step
            }
        }
    }

    /// The root motion of the step this head just made (`root`: the setting and the root bone's
    /// rest). A head at fault moves nothing.
    fn root_delta(&mut self, root: &(RootMotion, Transform), step: &PlaybackStep) -> RootDelta {
        if self.fault.is_some() {
            return RootDelta::IDENTITY;
        }
        match &mut self.source {
            Source::Clip { clip, duration, .. } => {
                clip_delta_cursor(&root.0, clip, &root.1, step, *duration, self.looping, &mut self.root)
            }
            Source::Graph(g) => g.root_delta(),
        }
    }

    fn sample(&mut self, skeleton: &Skeleton, out: &mut [Transform]) -> Result<(), JobError> {
        if self.fault.is_some() {
            out[..skeleton.bone_count()].copy_from_slice(&skeleton.bind_pose);
            return Ok(());
        }
        match &mut self.source {
            Source::Graph(g) => g.evaluate(skeleton, out),
            Source::Clip { clip, context, .. } => {
                SamplingJob { clip, bind_pose: &skeleton.bind_pose, time: self.time, context, output: out }
                    .run()
            }
        }
    }
}

#[derive(Clone, Debug)]
struct Fade {
    outgoing: Head,
    remaining: f32,
    duration: f32,
}

/// One character's animation player. See the module docs for the rules it follows.
#[derive(Clone, Debug)]
pub struct Animator {
    skeleton: Arc<Skeleton>,
    settings: AnimatorSettings,
    // ---- session state, never saved ----
    started: bool,
    current: Option<Head>,
    fade: Option<Fade>,
    adjusts: Vec<BoneAdjust>,
    queued: Vec<MarkerEvent>,
    ready: Vec<MarkerEvent>,
    last_step: PlaybackStep,
    scratch_in: Vec<Transform>,
    scratch_out: Vec<Transform>,
    /// Graph adjusts merged with `adjusts` for composition.
    scratch_adjusts: Vec<BoneAdjust>,
    /// Local transforms that replace the sampled ones (an editor's temporary pose), by bone.
    overrides: Vec<(u16, Transform)>,
    /// Where root motion has taken the character.
    root: RootAccumulator,
    /// The root motion of the last advance.
    root_step: RootDelta,
}

impl Animator {
    /// An animator for `skeleton` in its authored starting state (the settings' clip held at its
    /// start, not yet playing).
    pub fn new(skeleton: Arc<Skeleton>, settings: AnimatorSettings) -> Self {
        let n = skeleton.bone_count();
        let mut a = Animator {
            skeleton,
            settings,
            started: false,
            current: None,
            fade: None,
            adjusts: Vec::new(),
            queued: Vec::with_capacity(16),
            ready: Vec::with_capacity(16),
            last_step: PlaybackStep::default(),
            scratch_in: vec![Transform::IDENTITY; n],
            scratch_out: vec![Transform::IDENTITY; n],
            scratch_adjusts: Vec::new(),
            overrides: Vec::new(),
            root: RootAccumulator::default(),
            root_step: RootDelta::IDENTITY,
        };
        a.reset_session();
        a
    }

    /// Drops all session state and returns to the authored starting state.
    pub fn reset_session(&mut self) {
        self.started = false;
        self.root.reset();
        self.root_step = RootDelta::IDENTITY;
        self.fade = None;
        self.adjusts.clear();
        self.queued.clear();
        self.ready.clear();
        self.current = match (&self.settings.graph, &self.settings.clip) {
            (Some(g), _) => Some(Head::new_graph(g.clone(), &self.skeleton)),
            (None, Some(c)) => Some(Head::new(c.clone(), &self.skeleton, c.looping, self.settings.speed)),
            (None, None) => None,
        };
        self.last_step = PlaybackStep::still(self.time());
    }

    /// Replaces the authored clip by `clip` (an edited version of it) keeping the session: when
    /// the current head plays the authored clip, it plays `clip` from the same time, with the same
    /// play state and looping (a fade from it ends; adjusts and temporary poses stay). A head
    /// playing anything else (a graph, another clip faded to) keeps playing it; `clip` is what a
    /// [`Animator::reset_session`] goes back to. Announces no markers.
    pub fn rebind_clip(&mut self, clip: Arc<Clip>) {
        let old = self.settings.clip.replace(clip.clone());
        let plays_old = match (&old, self.current_clip()) {
            (Some(o), Some(c)) => Arc::ptr_eq(o, c),
            _ => false,
        };
        if plays_old {
            let s = self.session();
            let looping = s.looping.unwrap_or(clip.looping);
            self.current = Some(Head::new(clip, &self.skeleton, looping, self.settings.speed));
            self.fade = None;
            self.restore_session(&s);
            self.last_step = PlaybackStep::still(self.time());
        }
    }

    /// The skeleton this animator drives.
    pub fn skeleton(&self) -> &Arc<Skeleton> {
        &self.skeleton
    }

    /// The authored settings.
    pub fn settings(&self) -> &AnimatorSettings {
        &self.settings
    }

    /// Replaces the authored settings and resets the session to them.
    pub fn set_settings(&mut self, settings: AnimatorSettings) {
        self.settings = settings;
        self.reset_session();
    }

    /// Sets the playback speed (authored).
    pub fn set_speed(&mut self, speed: f32) {
        self.settings.speed = speed;
    }

    /// The session state of the current head (time, playing, looping) and the start latch, so
    /// an editor that rebuilds its world after an edit can put the playhead back.
    pub fn session(&self) -> AnimatorSession {
        AnimatorSession {
            time: self.time(),
            playing: self.is_playing(),
            looping: self.current_looping(),
            started: self.started,
        }
    }

    /// Restores a [`Animator::session`] snapshot onto this animator's authored starting state:
    /// the current head seeks to the time (clamped to its clip), plays or holds, and takes the
    /// looping flag; a fade or adjusts are not restored. Announces no markers.
    pub fn restore_session(&mut self, s: &AnimatorSession) {
        self.started = s.started;
        if let Some(h) = &mut self.current {
            h.playing = s.playing;
            if let Some(l) = s.looping {
                h.looping = l;
            }
        }
        self.seek(s.time);
    }

    /// Puts the current graph head at `instance`'s state and at `time` (a rewind debugger's
    /// replay of recorded ticks): nothing is advanced or announced. False when the current head
    /// plays no graph, or a graph compiled from another program.
    pub fn restore_graph(&mut self, instance: &GraphInstance, time: f32) -> bool {
        let Some(h) = &mut self.current else { return false };
        let Source::Graph(g) = &mut h.source else { return false };
        if !Arc::ptr_eq(g.program(), instance.program()) {
            return false;
        }
        (**g).clone_from(instance);
        h.time = time;
        self.last_step = PlaybackStep::still(time);
        true
    }

    /// Takes `skeleton` (this animator's skeleton file changed: its bind pose) in place: the heads
    /// play on as they are. False, changing nothing, unless it is the same rig with the same
    /// parents (what the heads' clips and programs were checked against).
    pub fn rebind_skeleton(&mut self, skeleton: Arc<Skeleton>) -> bool {
        if !self.skeleton.same_rig(&skeleton) || self.skeleton.parents != skeleton.parents {
            return false;
        }
        self.skeleton = skeleton;
        true
    }

    /// Puts `program` (the current graph recompiled: its file or a clip it plays changed) under
    /// the current graph head, with no frame of bind pose between: the parameters keep their
    /// values by name where the new program has one of the same type, the playheads are put at
    /// the head's time as a seek puts them (state machines start at their entry), and the play
    /// state, time, speed and adjusts stay. False, changing nothing, when the current head plays
    /// no graph.
    pub fn rebind_graph(&mut self, program: Arc<GraphProgram>) -> bool {
        let Some(h) = &mut self.current else { return false };
        let Source::Graph(g) = &mut h.source else { return false };
        let mut next = GraphInstance::new(program);
        let names: Vec<(usize, String, &'static str)> = next
            .program()
            .parameters()
            .iter()
            .enumerate()
            .map(|(i, d)| (i, d.name.clone(), d.default.type_name()))
            .collect();
        for (i, name, ty) in names {
            let old = g.program().parameter_index(&name).and_then(|j| g.parameter_at(j));
            if let Some(v) = old.filter(|v| v.type_name() == ty) {
                next.set_parameter(i, v);
            }
        }
        next.advance_with(h.time, false);
        **g = next;
        self.last_step = PlaybackStep::still(h.time);
        true
    }

    /// Sets whether the current head loops (session state: a preview's Loop toggle; the clip's
    /// authored flag is untouched).
    pub fn set_looping(&mut self, looping: bool) {
        if let Some(h) = &mut self.current {
            h.looping = looping;
        }
    }

    /// The duration of the current head's clip (0 for a graph or no head).
    pub fn current_duration(&self) -> f32 {
        self.current.as_ref().map_or(0.0, Head::duration)
    }

    /// The clip being played (or faded to); `None` while a graph plays.
    pub fn current_clip(&self) -> Option<&Arc<Clip>> {
        self.current.as_ref().and_then(Head::clip)
    }

    /// The clip being faded out, if a fade from a clip is running.
    pub fn outgoing_clip(&self) -> Option<&Arc<Clip>> {
        self.fade.as_ref().and_then(|f| f.outgoing.clip())
    }

    /// The graph being played (or faded to), if the current head plays one.
    pub fn current_graph(&self) -> Option<&GraphInstance> {
        self.current.as_ref().and_then(Head::graph)
    }

    /// The graph being played, mutably (to set its parameters).
    pub fn current_graph_mut(&mut self) -> Option<&mut GraphInstance> {
        self.current.as_mut().and_then(|h| match &mut h.source {
            Source::Graph(g) => Some(&mut **g),
            Source::Clip { .. } => None,
        })
    }

    /// The graph being faded out, if a fade from a graph is running.
    pub fn outgoing_graph(&self) -> Option<&GraphInstance> {
        self.fade.as_ref().and_then(|f| f.outgoing.graph())
    }

    /// Whether the current head loops (its clip's own flag, or the one it was faded to with).
    pub fn current_looping(&self) -> Option<bool> {
        self.current.as_ref().map(|h| h.looping)
    }

    /// The current head's time.
    pub fn time(&self) -> f32 {
        self.current.as_ref().map_or(0.0, |h| h.time)
    }

    /// The outgoing head's time, if a fade is running.
    pub fn outgoing_time(&self) -> Option<f32> {
        self.fade.as_ref().map(|f| f.outgoing.time)
    }

    /// Whether the current head is playing.
    pub fn is_playing(&self) -> bool {
        self.current.as_ref().is_some_and(|h| h.playing)
    }

    /// The current clip's fault against this skeleton (its bind pose stands while there is one).
    pub fn current_fault(&self) -> Option<&ClipFault> {
        self.current.as_ref().and_then(|h| h.fault.as_ref())
    }

    /// Weight of the current head: `1 - remaining / duration` during a fade, else 1.
    pub fn fade_weight(&self) -> f32 {
        match &self.fade {
            Some(f) if f.duration > 0.0 => (1.0 - f.remaining / f.duration).clamp(0.0, 1.0),
            _ => 1.0,
        }
    }

    /// The step the last [`Animator::advance`] made on the current head.
    pub fn last_step(&self) -> PlaybackStep {
        self.last_step
    }

    /// Plays the current clip from where it is.
    pub fn play(&mut self) {
        if let Some(h) = &mut self.current {
            h.playing = true;
        }
    }

    /// Stops (holds) the current clip where it is.
    pub fn stop(&mut self) {
        if let Some(h) = &mut self.current {
            h.playing = false;
        }
    }

    /// Moves the current head to `time` (clamped to the clip). A graph head has no end: its
    /// playheads go back to their starts and advance by `time` at the current parameter values,
    /// so seeking to `t` gives the pose an instance advanced by `t` from its start would have.
    /// A seek announces no markers.
    pub fn seek(&mut self, time: f32) {
        let root = self.root_setting();
        if let Some(h) = &mut self.current {
            let time = if time.is_finite() { time } else { 0.0 };
            let from_start = match &mut h.source {
                Source::Graph(g) => {
                    h.time = time.max(0.0);
                    g.set_root_motion(root);
                    g.reset_playheads();
                    g.advance_with(h.time, false);
                    PlaybackStep { from: 0.0, to: h.time, travel: h.time }
                }
                Source::Clip { duration, .. } => {
                    h.time = time.clamp(0.0, *duration);
                    PlaybackStep { from: 0.0, to: h.time, travel: h.time }
                }
            };
            // The character stands where playing from the start to here would have taken it.
            self.root.reset();
            self.root_step = RootDelta::IDENTITY;
            if let Some(r) = &root {
                self.root.push(h.root_delta(r, &from_start));
            }
            self.last_step = PlaybackStep::still(h.time);
        }
    }

    /// Cuts to `clip` (no fade) and plays it.
    pub fn play_clip(&mut self, clip: Arc<Clip>, looping: bool) {
        self.cross_fade_to(clip, 0.0, looping);
    }

    /// Fades to `clip` over `seconds`, following the table in the module docs.
    pub fn cross_fade_to(&mut self, clip: Arc<Clip>, seconds: f32, looping: bool) {
        let speed = self.settings.speed;
        if let Some(cur) = &mut self.current
            && cur.clip().is_some_and(|c| Arc::ptr_eq(c, &clip))
        {
            if !cur.playing {
                cur.restart(speed);
                cur.looping = looping;
                cur.playing = true;
            }
            return;
        }
        self.fade_in(Head::new(clip, &self.skeleton, looping, speed), seconds);
    }

    /// Plays `head` as the current head, fading from the previous one over `seconds` (a cut
    /// with no previous head, or when `seconds` is not a positive finite number).
    fn fade_in(&mut self, mut head: Head, seconds: f32) {
        head.playing = true;
        let cut = !(seconds > 0.0 && seconds.is_finite()) || self.current.is_none();
        let previous = self.current.replace(head);
        // A new fade drops any outgoing head: the blend runs from the head being faded to.
        self.fade = match (cut, previous) {
            (false, Some(outgoing)) => Some(Fade { outgoing, remaining: seconds, duration: seconds }),
            _ => None,
        };
        self.last_step = PlaybackStep::still(self.time());
    }

    /// Cuts to a compiled graph (no fade) and plays it.
    pub fn play_graph(&mut self, program: Arc<GraphProgram>) {
        self.cross_fade_to_graph(program, 0.0);
    }

    /// Fades to a compiled graph over `seconds`, following the table in the module docs (the
    /// same program `Arc` is "the same graph"). The new instance starts at its parameters'
    /// defaults and its playheads' starts.
    pub fn cross_fade_to_graph(&mut self, program: Arc<GraphProgram>, seconds: f32) {
        let speed = self.settings.speed;
        if let Some(cur) = &mut self.current
            && cur.graph().is_some_and(|g| Arc::ptr_eq(g.program(), &program))
        {
            if !cur.playing {
                cur.restart(speed);
                cur.playing = true;
            }
            return;
        }
        self.fade_in(Head::new_graph(program, &self.skeleton), seconds);
    }

    /// Replaces bone `bone`'s sampled local transform by `t` until cleared (`None` clears it):
    /// an editor's temporary pose (session state, never saved). Applied after sampling and
    /// blending, before adjusts and composition.
    pub fn set_pose_override(&mut self, bone: usize, t: Option<Transform>) {
        let Ok(b) = u16::try_from(bone) else { return };
        self.overrides.retain(|(x, _)| *x != b);
        if let Some(t) = t {
            let i = self.overrides.partition_point(|(x, _)| *x < b);
            self.overrides.insert(i, (b, t));
        }
    }

    /// The pose overrides, sorted by bone.
    pub fn pose_overrides(&self) -> &[(u16, Transform)] {
        &self.overrides
    }

    /// Drops every pose override.
    pub fn clear_pose_overrides(&mut self) {
        self.overrides.clear();
    }

    /// Adds a bone adjust (session state). Entries on one bone compose in the order added.
    pub fn add_adjust(&mut self, adjust: BoneAdjust) {
        insert_adjust(&mut self.adjusts, adjust);
    }

    /// Removes every adjust.
    pub fn clear_adjusts(&mut self) {
        self.adjusts.clear();
    }

    /// The adjusts, sorted by bone.
    pub fn adjusts(&self) -> &[BoneAdjust] {
        &self.adjusts
    }

    /// Advances by `dt` seconds of simulation time (a tick; 0 for a paused frame). Queues the
    /// markers swept. Returns the current head's step.
    pub fn advance(&mut self, dt: f32) -> PlaybackStep {
        let sim = dt > 0.0 && dt.is_finite();
        if sim && !self.started {
            self.started = true;
            if self.settings.play_on_start
                && let Some(h) = &mut self.current
            {
                h.playing = true;
            }
        }
        let travel = if sim { dt * self.settings.speed } else { 0.0 };
        // Fade countdown first: the weight after this step decides who speaks.
        let mut weight = 1.0;
        if let Some(f) = &mut self.fade
            && sim
        {
            f.remaining -= dt;
            weight = (1.0 - f.remaining / f.duration).clamp(0.0, 1.0);
        } else if let Some(f) = &self.fade {
            weight = (1.0 - f.remaining / f.duration).clamp(0.0, 1.0);
        }
        let root = self.root_setting();
        let mut motion = RootDelta::IDENTITY;
        if let Some(f) = &mut self.fade {
            if let Source::Graph(g) = &mut f.outgoing.source {
                g.set_root_motion(root);
            }
            let out_step = f.outgoing.advance(travel, 1.0 - weight > 0.5, &mut self.queued);
            if let Some(r) = &root {
                motion = f.outgoing.root_delta(r, &out_step).weighted(1.0 - weight);
            }
            if f.remaining <= 0.0 {
                self.fade = None;
            }
        }
        let step = match &mut self.current {
            Some(h) if h.playing => {
                if let Source::Graph(g) = &mut h.source {
                    g.set_root_motion(root);
                }
                let step = h.advance(travel, weight >= 0.5, &mut self.queued);
                if let Some(r) = &root {
                    motion = motion.plus(h.root_delta(r, &step).weighted(weight));
                }
                step
            }
            Some(h) => PlaybackStep::still(h.time),
            None => PlaybackStep::default(),
        };
        self.root_step = motion;
        self.root.push(motion);
        self.last_step = step;
        step
    }

    /// The root motion setting with the root bone's rest, when one is set for a bone the rig has.
    fn root_setting(&self) -> Option<(RootMotion, Transform)> {
        let rm = self.settings.root_motion?;
        Some((rm, *self.skeleton.bind_pose.get(usize::from(rm.bone))?))
    }

    /// The root motion of the last advance (a game reads it to move a character controller).
    pub fn root_motion_step(&self) -> RootDelta {
        self.root_step
    }

    /// Where root motion has taken the character since the session began (or the last seek or
    /// [`Animator::reset_root_motion`]), in the character's entity space.
    pub fn root_motion(&self) -> &RootAccumulator {
        &self.root
    }

    /// Forgets the accumulated root motion (the character back at its entity's origin).
    pub fn reset_root_motion(&mut self) {
        self.root.reset();
        self.root_step = RootDelta::IDENTITY;
    }

    /// Starts a simulation stage: the events queued by earlier advances become the ready ones
    /// (returned), replacing those of the previous stage. Allocates nothing once warmed up.
    pub fn deliver_events(&mut self) -> &[MarkerEvent] {
        self.ready.clear();
        std::mem::swap(&mut self.ready, &mut self.queued);
        &self.ready
    }

    /// The events delivered at the start of this stage.
    pub fn ready_events(&self) -> &[MarkerEvent] {
        &self.ready
    }

    /// Evaluates the pose at the heads' current times into `out`: sample, blend (during a fade),
    /// adjusts and composition, palette. A clip with a fault leaves the bind pose standing.
    pub fn evaluate(&mut self, out: RigPoseMut<'_>) -> Result<(), JobError> {
        let sk = &*self.skeleton;
        let n = sk.bone_count();
        if out.local.len() < n || out.model.len() < n || out.palette.len() < n {
            return Err(JobError::OutputTooSmall {
                job: "animator",
                output: "rig pose",
                needed: n,
                got: out.local.len().min(out.model.len()).min(out.palette.len()),
            });
        }
        let weight = self.fade_weight();
        match (&mut self.current, &mut self.fade) {
            (Some(cur), Some(fade)) if weight < 1.0 => {
                cur.sample(sk, &mut self.scratch_in)?;
                fade.outgoing.sample(sk, &mut self.scratch_out)?;
                BlendingJob {
                    layers: &[
                        BlendLayer { pose: &self.scratch_out, weight: 1.0 - weight, mask: None },
                        BlendLayer { pose: &self.scratch_in, weight, mask: None },
                    ],
                    rest_pose: &sk.bind_pose,
                    threshold: 1e-6,
                    output: &mut out.local[..n],
                }
                .run()?;
            }
            (Some(cur), _) => cur.sample(sk, &mut out.local[..n])?,
            (None, _) => out.local[..n].copy_from_slice(&sk.bind_pose),
        }
        if let Some(rm) = &self.settings.root_motion
            && let Some(rest) = sk.bind_pose.get(usize::from(rm.bone))
        {
            remove_motion(rm, rest, &mut out.local[usize::from(rm.bone)]);
        }
        for (b, t) in &self.overrides {
            if let Some(l) = out.local.get_mut(*b as usize).filter(|_| (*b as usize) < n) {
                *l = *t;
            }
        }
        let merged = merge_graph_adjusts(
            &mut self.scratch_adjusts,
            self.current.as_ref(),
            self.fade.as_ref().map(|f| &f.outgoing),
            weight,
            &self.adjusts,
        );
        let adjusts = if merged { &self.scratch_adjusts[..] } else { &self.adjusts[..] };
        LocalToModelJob {
            parents: &sk.parents,
            local: &out.local[..n],
            adjusts,
            output: &mut out.model[..n],
        }
        .run()?;
        let heads =
            [(self.fade.as_ref().map(|f| &f.outgoing), 1.0 - weight), (self.current.as_ref(), weight)];
        for (head, w) in heads {
            if let Some(h) = head
                && let Some(g) = h.graph()
                && h.fault.is_none()
            {
                for plant in g.plants() {
                    apply_foot_plant(sk, plant, w, adjusts, &mut out.local[..n], &mut out.model[..n])?;
                }
                for ik in g.iks() {
                    apply_two_bone_ik(sk, ik, w, adjusts, &mut out.local[..n], &mut out.model[..n])?;
                }
                for aim in g.aims() {
                    apply_look_at(sk, aim, w, adjusts, &mut out.local[..n], &mut out.model[..n])?;
                }
            }
        }
        PaletteJob { model: &out.model[..n], inverse_bind: &sk.inverse_bind, output: &mut out.palette[..n] }
            .run()
    }
}

/// Runs a graph's TwoBoneIk solve (its weight times `w`, the head's share of a crossfade) on the
/// composed pose: the chain's local rotations take the corrections and the pose is composed
/// again, so the bones below the chain follow. A solve naming a bone past the pose, or one the
/// job refuses (the compiler checked its settings; a target made non-finite by a parameter is
/// left out when gathered), changes nothing.
fn apply_two_bone_ik(
    sk: &Skeleton,
    ik: &crate::graph::GraphIk,
    w: f32,
    adjusts: &[BoneAdjust],
    local: &mut [Transform],
    model: &mut [Mat4],
) -> Result<(), JobError> {
    let [s, m, e] = ik.bones.map(usize::from);
    let weight = (ik.weight * w).clamp(0.0, 1.0);
    if s.max(m).max(e) >= local.len() || weight <= 0.0 {
        return Ok(());
    }
    let (mut start, mut mid, mut reached) = (Quat::IDENTITY, Quat::IDENTITY, false);
    let solved = crate::ik::TwoBoneIkJob {
        start: &model[s],
        mid: &model[m],
        end: &model[e],
        target: resolve_target(ik.target, ik.target_bone, model),
        pole: ik.pole,
        mid_axis: ik.mid_axis,
        weight,
        soften: ik.soften,
        twist: 0.0,
        start_correction: &mut start,
        mid_correction: &mut mid,
        reached: &mut reached,
    }
    .run();
    if solved.is_err() {
        return Ok(());
    }
    local[s].rotation = (local[s].rotation * start).normalize();
    local[m].rotation = (local[m].rotation * mid).normalize();
    LocalToModelJob { parents: &sk.parents, local, adjusts, output: model }.run()
}

/// Runs a graph's FootPlant solve (its weight times `w`) on the composed pose (see
/// [`crate::graph::NodeKind::FootPlant`]): each ankle's offset is the plane's height under it
/// (held within the limits, scaled by the weight); the hips move by the lower offset, in model Y;
/// each leg is solved as a two-bone chain onto its moved ankle, bending toward where its knee
/// points; each foot keeps its model orientation, tilted by the slope; the pose is composed
/// again. Bones past the pose, or a leg the job refuses, change nothing.
fn apply_foot_plant(
    sk: &Skeleton,
    plant: &crate::graph::GraphPlant,
    w: f32,
    adjusts: &[BoneAdjust],
    local: &mut [Transform],
    model: &mut [Mat4],
) -> Result<(), JobError> {
    let weight = (plant.weight * w).clamp(0.0, 1.0);
    let n = local.len();
    let hips = usize::from(plant.hips);
    if weight <= 0.0 || hips >= n || plant.legs.iter().flatten().any(|&b| usize::from(b) >= n) {
        return Ok(());
    }
    let rise = plant.slope.tan();
    let ground = |p: Vec3| plant.height + rise * p.z;
    let ankle_at = |model: &[Mat4], leg: &[u16; 3]| model[usize::from(leg[2])].w_axis.truncate();
    // Each foot's offset and where its ankle should go (before the hips move).
    let mut goals = [(Vec3::ZERO, Quat::IDENTITY); 2];
    let mut offsets = [0.0f32; 2];
    for (k, leg) in plant.legs.iter().enumerate() {
        let a = ankle_at(model, leg);
        offsets[k] = ground(a).clamp(-plant.max_drop, plant.max_lift) * weight;
        let (_, r, _) = model[usize::from(leg[2])].to_scale_rotation_translation();
        // The foot keeps its orientation, tilted onto the plane (rising along +Z: about -X).
        let tilt = Quat::from_rotation_x(-plant.slope * weight);
        goals[k] = (a + Vec3::Y * offsets[k], (tilt * r).normalize());
    }
    // The hips go down (or up) by the lower foot's offset, so both legs can reach.
    let drop = offsets[0].min(offsets[1]);
    let parent = sk.parents.get(hips).copied().filter(|&p| usize::from(p) < n);
    let parent_model = parent.map_or(Mat4::IDENTITY, |p| model[usize::from(p)]);
    let moved = parent_model.inverse().transform_vector3(Vec3::Y * drop);
    if moved.is_finite() {
        local[hips].translation += moved;
    }
    LocalToModelJob { parents: &sk.parents, local, adjusts, output: model }.run()?;
    // Both legs solved together (one many-chain job), each knee kept pointing where it points:
    // away from its hip-ankle line. A leg the job refuses is left out and changes nothing.
    let chain = |k: usize| {
        let [h, m, a] = plant.legs[k].map(usize::from);
        crate::ik::keeping_bend([&model[h], &model[m], &model[a]], goals[k].0, plant.mid_axis, Vec3::Z)
    };
    let both = [chain(0), chain(1)];
    let (mut chains, mut legs, mut count) = (both, [0usize; 2], 0);
    for (k, c) in both.into_iter().enumerate() {
        if c.validate().is_ok() {
            (chains[count], legs[count]) = (c, k);
            count += 1;
        }
    }
    let mut solved = [crate::ik::TwoBoneIkSolution::default(); 2];
    let job = crate::ik::TwoBoneIkChainsJob { chains: &chains[..count], solutions: &mut solved[..count] };
    if job.run().is_ok() {
        for (&k, s) in legs[..count].iter().zip(&solved) {
            let [h, m, _] = plant.legs[k].map(usize::from);
            local[h].rotation = (local[h].rotation * s.start_correction).normalize();
            local[m].rotation = (local[m].rotation * s.mid_correction).normalize();
        }
    }
    LocalToModelJob { parents: &sk.parents, local, adjusts, output: model }.run()?;
    // Each foot back to its (tilted) orientation under its solved knee.
    for (leg, (_, foot)) in plant.legs.iter().zip(goals) {
        let (k, a) = (usize::from(leg[1]), usize::from(leg[2]));
        let (_, knee_rotation, _) = model[k].to_scale_rotation_translation();
        if sk.parents.get(a).map(|&p| usize::from(p)) == Some(k) {
            local[a].rotation = (knee_rotation.inverse() * foot).normalize();
        }
    }
    LocalToModelJob { parents: &sk.parents, local, adjusts, output: model }.run()
}

/// A solve's target in model space: `target` itself, or (following bone `bone`) `target` as an
/// offset in that bone's frame, read from the pose composed so far.
fn resolve_target(target: Vec3, bone: u16, model: &[Mat4]) -> Vec3 {
    match model.get(usize::from(bone)) {
        Some(m) if bone != crate::graph::compile::NO_TARGET_BONE => m.transform_point3(target),
        _ => target,
    }
}

/// Runs a graph's LookAt solve (its weight times `w`) on the composed pose: first each bone of
/// its chain, root-most first, turns by its share of what is left of the look (the looking
/// bone's forward axis, up axis and offset carried into that bone's frame), then the looking bone
/// takes the rest; each correction goes onto the bone's local rotation and the pose is composed
/// again. As [`apply_two_bone_ik`], a solve the job refuses or naming a bone past the pose changes
/// nothing.
fn apply_look_at(
    sk: &Skeleton,
    aim: &crate::graph::GraphAim,
    w: f32,
    adjusts: &[BoneAdjust],
    local: &mut [Transform],
    model: &mut [Mat4],
) -> Result<(), JobError> {
    let head = usize::from(aim.bone);
    let weight = (aim.weight * w).clamp(0.0, 1.0);
    if head >= local.len() || weight <= 0.0 {
        return Ok(());
    }
    let target = resolve_target(aim.target, aim.target_bone, model);
    let links = &aim.chain[..usize::from(aim.links).min(aim.chain.len())];
    let steps = links.iter().map(|&(b, share)| (usize::from(b), share)).chain([(head, 1.0)]);
    for (b, share) in steps {
        if b >= local.len() {
            continue;
        }
        // The looking bone's axes and eyes, in bone `b`'s frame.
        let into_b = model[b].inverse() * model[head];
        let (forward, up, offset) = if b == head {
            (aim.forward, aim.up, aim.offset)
        } else {
            (
                into_b.transform_vector3(aim.forward),
                into_b.transform_vector3(aim.up),
                into_b.transform_point3(aim.offset),
            )
        };
        let (mut correction, mut reached) = (Quat::IDENTITY, false);
        let solved = crate::ik::AimJob {
            joint: &model[b],
            target,
            forward,
            offset,
            up,
            pole: Vec3::Y,
            twist: 0.0,
            limits: if b == head { aim.limits } else { crate::ik::AimLimits::NONE },
            weight: (weight * share).clamp(0.0, 1.0),
            correction: &mut correction,
            reached: &mut reached,
        }
        .run();
        if solved.is_err() {
            continue;
        }
        local[b].rotation = (local[b].rotation * correction).normalize();
        LocalToModelJob { parents: &sk.parents, local, adjusts, output: model }.run()?;
    }
    Ok(())
}

/// Gathers the graph heads' adjusts (each scaled by its head's fade weight) ahead of the
/// animator's own `own` into `scratch`, sorted stably by bone. False (and `scratch` untouched)
/// when no head plays a graph.
fn merge_graph_adjusts(
    scratch: &mut Vec<BoneAdjust>,
    current: Option<&Head>,
    outgoing: Option<&Head>,
    weight: f32,
    own: &[BoneAdjust],
) -> bool {
    let heads = [(outgoing, 1.0 - weight), (current, weight)];
    if !heads.iter().any(|(h, _)| h.is_some_and(|h| h.graph().is_some())) {
        return false;
    }
    scratch.clear();
    for (head, w) in heads {
        if let Some(h) = head
            && let Some(g) = h.graph()
            && h.fault.is_none()
        {
            scratch.extend(g.adjusts().iter().filter_map(|a| weighted_adjust(*a, w)));
        }
    }
    scratch.extend_from_slice(own);
    crate::pose::sort_adjusts(scratch);
    true
}
