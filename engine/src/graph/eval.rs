//! Graph session state and evaluation: [`GraphInstance`] holds one character's parameter values,
//! clip playheads, blend space phases, sampling contexts and pose slots (all allocated when the
//! instance is made), advances them each tick and runs the program's instructions with the pose
//! jobs. The additive kernel ([`AdditiveJob`]) lives here, in the style of [`crate::pose`].
//!
//! ## Weights, markers and rates
//! Each tick a reverse pass over the program's flow table gives every pose node an *effective
//! weight* (its share of the final pose: Blend2 splits `1 - w` / `w`, a blend space node passes
//! its weight to its two active clips, an Additive passes its full weight to `base` and
//! `weight` times it to `layer` and nothing to `reference`, a Mask passes its full weight to
//! `base` and `weight * max(mask)` to `layer`), a *speaking* flag and a *rate*.
//!
//! **Marker rule.** A clip's markers are announced (with the sweep rule of [`crate::playback`]:
//! arrival closed, departure open, once per crossing) only while the clip *speaks*. The Output's
//! input speaks; a Blend2 passes speaking to `b` when its weight is >= 0.5 and to `a` otherwise; a
//! blend space passes it to its heavier active clip (the upper neighbour on a tie); Additive and
//! Mask pass it to `base`, and to `layer` too when the layer's weight (`weight`, or
//! `weight * max(mask)`) is >= 0.5; the reference pose never speaks. In a tree of blends exactly
//! one clip speaks at a time, so a blend of two walks does not double the footsteps.
//!
//! **Rates.** A TimeScale multiplies the rate of everything upstream; a node fed to several
//! consumers takes the rate of the last consumer in graph order.
//!
//! **Blend space phase sync.** A blend space keeps one normalized phase in `[0, 1]`. Each tick it
//! advances by `dt * rate * sum(w_i * speed_i / duration_i)` over its two active clips (weights
//! `w_i` from the axis value), wrapping when the space loops; every clip samples at
//! `phase * duration_i`. Clips of different lengths therefore stay at the same normalized time
//! (the left foot of a walk and of a run land together), and the cycle length glides between the
//! clips' lengths as the axis moves.
//!
//! A 2D blend space keeps its phase the same way over the (up to) three corners of the triangle
//! holding its point, weighted barycentrically ([`super::plane`]); its heaviest corner speaks.
//!
//! **Adjusts.** Adjust nodes do not touch the local pose: they act at composition time. After
//! evaluation, [`GraphInstance::adjusts`] holds every Adjust node's entries as
//! [`BoneAdjust`]s in graph order (upstream first, list order within a node), sorted stably by
//! bone, ready for [`crate::pose::LocalToModelJob`]. An Adjust node at effective weight `w < 1`
//! contributes its entries scaled by `w` ([`weighted_adjust`]); an absolute (orient) entry applies
//! only while `w >= 0.5`.
//!
//! Nothing here allocates per tick once the instance exists (marker events beyond the preallocated
//! capacity aside). This module does not compose model matrices; the caller (or the Animator)
//! does.

use std::sync::Arc;

use glam::{Quat, Vec3};

use super::compile::{CompiledSpace, FloatRef, Flow, GraphProgram, Instruction};
use super::machine::eval::HostSlots;
use super::machine::{MachineInstance, StateEvent};
use super::model::{AdjustOp, NodeId, ParamValue};
pub use crate::animator::EventKind;
use crate::clip::Clip;
use crate::math::{self, Transform};
use crate::playback::{PlaybackStep, advance_head, swept_markers};
use crate::pose::{BlendLayer, BlendingJob, BoneAdjust, JobError, SamplingContext, SamplingJob};
use crate::root_motion::{RootCursor, RootDelta, RootMotion, clip_delta_cursor};
use crate::skeleton::Skeleton;

/// A marker announced by a clip of a graph, or a state machine's event (see [`EventKind`]).
#[derive(Clone, Debug)]
pub struct GraphMarkerEvent {
    /// The Clip, BlendSpace1D or BlendSpace2D node the clip plays in (the StateMachine node for
    /// a state event).
    pub node: NodeId,
    /// The clip (for a state event: the clip its state plays first).
    pub clip: Arc<Clip>,
    /// Index into the clip's markers (`usize::MAX` for a state event).
    pub marker: usize,
    /// 0 for the lap the step started in, +1/-1 for the lap a looping head wrapped into.
    pub lap: i32,
    /// A marker, or a state machine event.
    pub kind: EventKind,
}

impl GraphMarkerEvent {
    /// A marker event.
    pub fn marker(node: NodeId, clip: Arc<Clip>, marker: usize, lap: i32) -> Self {
        GraphMarkerEvent { node, clip, marker, lap, kind: EventKind::Marker }
    }

    /// A state machine event of `node`.
    pub fn state(node: NodeId, clip: Arc<Clip>, event: StateEvent) -> Self {
        GraphMarkerEvent { node, clip, marker: usize::MAX, lap: 0, kind: EventKind::State(event) }
    }

    /// The marker's name ("" for an index the clip does not have); a state event's state.
    pub fn name(&self) -> &str {
        match &self.kind {
            EventKind::Marker => crate::animator::marker_name(&self.clip, self.marker),
            EventKind::State(e) => &e.state,
        }
    }

    /// The marker's time in its clip (NaN for an index the clip does not have).
    pub fn time(&self) -> f32 {
        crate::animator::marker_time(&self.clip, self.marker)
    }
}

/// The two active neighbours of axis value `x` among sorted `positions`: `(lower, upper, t)` where
/// the upper member has weight `t` and the lower `1 - t`. Outside the axis the end member takes
/// everything; at a sample point that member has weight 1. `None` when `positions` is empty.
pub fn neighbour_weights(positions: &[f32], x: f32) -> Option<(usize, usize, f32)> {
    let last = positions.len().checked_sub(1)?;
    let x = if x.is_nan() { positions[0] } else { x };
    if last == 0 || x <= positions[0] {
        return Some((0, 0, 0.0));
    }
    if x >= positions[last] {
        return Some((last, last, 0.0));
    }
    // First position > x; x lies in [positions[hi - 1], positions[hi]).
    let hi = positions.partition_point(|&p| p <= x).clamp(1, last);
    let lo = hi - 1;
    let span = positions[hi] - positions[lo];
    if x == positions[lo] || !(span > 0.0) {
        return Some((lo, lo, 0.0));
    }
    Some((lo, hi, ((x - positions[lo]) / span).clamp(0.0, 1.0)))
}

/// The weighted corners of 2D space `s` at the current parameters: three `(member index local
/// to the space, weight)` pairs (see [`super::plane::plane_weights`]). `None` for a 1D space or
/// a space without triangles.
fn corners(program: &GraphProgram, s: &CompiledSpace, params: &[ParamValue]) -> Option<[(usize, f32); 3]> {
    let y = s.y?;
    let points = &program.member_points[s.members.clone()];
    let triangles = &program.triangles[s.triangles.clone()];
    super::plane::plane_weights(points, triangles, (read(params, s.position), read(params, y)))
}

/// A bone adjust scaled by an effective weight: `None` at weight 0 (or NaN); unchanged at weight
/// >= 1; otherwise the rotation slerped from the identity, the offset scaled, the scale lerped from
/// 1. An absolute (orient) adjust applies whole at weight >= 0.5 and not at all below.
pub fn weighted_adjust(a: BoneAdjust, weight: f32) -> Option<BoneAdjust> {
    if !(weight > 0.0) {
        return None;
    }
    if weight >= 1.0 {
        return Some(a);
    }
    if a.absolute {
        return (weight >= 0.5).then_some(a);
    }
    Some(BoneAdjust {
        rotation: math::slerp(Quat::IDENTITY, a.rotation, weight),
        offset: a.offset * weight,
        scale: 1.0 + (a.scale - 1.0) * weight,
        ..a
    })
}

/// Additive blend on local TRS: `base + (layer - reference) * weight`. Translations and scales
/// add the weighted difference; rotations apply the weighted delta `reference⁻¹ · layer` after the
/// base (`base · slerp(1, delta, weight)`). Where the layer's rotation equals the reference's, or
/// the weight is 0, the base comes through exactly.
pub struct AdditiveJob<'a> {
    /// Base pose.
    pub base: &'a [Transform],
    /// Layer pose.
    pub layer: &'a [Transform],
    /// Reference pose the layer is measured against.
    pub reference: &'a [Transform],
    /// Weight in `[0, 1]`.
    pub weight: f32,
    /// Output local transforms.
    pub output: &'a mut [Transform],
}

impl AdditiveJob<'_> {
    /// Checks that the inputs fit together.
    pub fn validate(&self) -> Result<(), JobError> {
        let n = self.base.len();
        let check = |input: &str, got: usize| {
            if got != n {
                Err(JobError::InputLength { job: "additive job", input: input.to_owned(), expected: n, got })
            } else {
                Ok(())
            }
        };
        check("layer", self.layer.len())?;
        check("reference", self.reference.len())?;
        if self.output.len() < n {
            return Err(JobError::OutputTooSmall {
                job: "additive job",
                output: "output",
                needed: n,
                got: self.output.len(),
            });
        }
        if !(self.weight.is_finite() && (0.0..=1.0).contains(&self.weight)) {
            return Err(JobError::BadWeight { layer: 1, weight: self.weight });
        }
        Ok(())
    }

    /// Validates, then adds.
    pub fn run(self) -> Result<(), JobError> {
        self.validate()?;
        let w = self.weight;
        let lanes = self.base.iter().zip(self.layer).zip(self.reference).zip(self.output.iter_mut());
        for (((b, l), r), o) in lanes {
            if w == 0.0 {
                *o = *b;
                continue;
            }
            let rotation = if l.rotation == r.rotation {
                b.rotation
            } else {
                let mut d = (r.rotation.conjugate() * l.rotation).normalize();
                if d.w < 0.0 {
                    d = -d;
                }
                let dw = if w == 1.0 { d } else { math::slerp(Quat::IDENTITY, d, w) };
                (b.rotation * dw).normalize()
            };
            *o = Transform {
                translation: b.translation + (l.translation - r.translation) * w,
                rotation,
                scale: b.scale + (l.scale - r.scale) * w,
            };
        }
        Ok(())
    }
}

/// Two-layer local-TRS blend with optional per-bone masks through [`BlendingJob`] (threshold
/// `1e-6`). Inputs that do not fit (which the compiler rules out) leave the rest pose.
#[allow(clippy::too_many_arguments)]
pub(crate) fn blend_two(
    a: &[Transform],
    wa: f32,
    ma: Option<&[f32]>,
    b: &[Transform],
    wb: f32,
    mb: Option<&[f32]>,
    rest: &[Transform],
    out: &mut [Transform],
) {
    let layers = [BlendLayer { pose: a, weight: wa, mask: ma }, BlendLayer { pose: b, weight: wb, mask: mb }];
    let ok = BlendingJob { layers: &layers, rest_pose: rest, threshold: 1e-6, output: out }.run().is_ok();
    if !ok {
        let n = out.len().min(rest.len());
        out[..n].copy_from_slice(&rest[..n]);
    }
}

/// Advances a 2D space's shared phase by `dt` (rate applied) over its weighted `corners` (as a
/// 1D space does over its two neighbours) and, when it speaks, records the markers its heaviest
/// corner sweeps.
fn advance_space_2d(
    program: &GraphProgram,
    s: &CompiledSpace,
    corners: [(usize, f32); 3],
    phase: &mut f32,
    dt: f32,
    say: bool,
    events: &mut Vec<GraphMarkerEvent>,
) -> PlaybackStep {
    let members = &program.members[s.members.clone()];
    let speed_of = |j: usize| {
        let m = &members[j];
        if m.duration > 0.0 { m.speed / m.duration } else { 0.0 }
    };
    let phase_rate: f32 = corners.iter().map(|&(j, w)| w * speed_of(j)).sum();
    let (step, _) = advance_head(*phase, dt * phase_rate, 1.0, s.looping);
    *phase = step.to;
    if say {
        let (heaviest, _) = corners.iter().copied().fold(corners[0], |b, c| if c.1 > b.1 { c } else { b });
        let m = &members[heaviest];
        let d = m.duration;
        let member_step = PlaybackStep { from: step.from * d, to: step.to * d, travel: step.travel * d };
        let times = m.clip.markers().iter().map(|mk| mk.time);
        swept_markers(times, &member_step, d, s.looping, |marker, lap| {
            events.push(GraphMarkerEvent::marker(s.node, m.clip.clone(), marker, lap))
        });
    }
    step
}

/// Samples a 2D space's weighted `corners` at `phase` and blends them into slot `dst` (a corner
/// at weight 1 straight into `dst`; otherwise each weighted corner into its scratch slot, then
/// one three-layer blend).
#[allow(clippy::too_many_arguments)]
fn blend_corners(
    members: &[super::compile::SpaceMember],
    contexts: &mut [SamplingContext],
    corners: [(usize, f32); 3],
    phase: f32,
    bind: &[Transform],
    slots: &mut [Transform],
    n: usize,
    scratch: [u16; 3],
    dst: u16,
) -> Result<(), JobError> {
    let mut sample = |slots: &mut [Transform], j: usize, slot: u16| -> Result<(), JobError> {
        let (Some(m), Some(context)) = (members.get(j), contexts.get_mut(j)) else { return Ok(()) };
        let ([], out) = views(slots, n, [], slot)?;
        SamplingJob { clip: &m.clip, bind_pose: bind, time: phase * m.duration, context, output: out }.run()
    };
    if let Some(&(j, _)) = corners.iter().find(|c| c.1 >= 1.0) {
        return sample(slots, j, dst);
    }
    for (&(j, w), &slot) in corners.iter().zip(&scratch) {
        if w > 0.0 {
            sample(slots, j, slot)?;
        }
    }
    let (poses, out) = views(slots, n, scratch, dst)?;
    let layers = [0, 1, 2].map(|k| BlendLayer { pose: poses[k], weight: corners[k].1, mask: None });
    let ok = BlendingJob { layers: &layers, rest_pose: bind, threshold: 1e-6, output: out }.run().is_ok();
    if !ok {
        let m = out.len().min(bind.len());
        out[..m].copy_from_slice(&bind[..m]);
    }
    Ok(())
}

#[derive(Clone, Copy, Debug, Default)]
struct FlowState {
    weight: f32,
    /// The share of the root motion (as `weight`, but nothing through an Additive or Mask layer).
    motion: f32,
    speaks: bool,
    rate: f32,
}

/// One character's session state for a [`GraphProgram`]: parameter values, playheads, phases,
/// sampling contexts, pose slots, the adjusts and marker events of the last tick. Never saved.
#[derive(Clone, Debug)]
pub struct GraphInstance {
    program: Arc<GraphProgram>,
    params: Vec<ParamValue>,
    player_times: Vec<f32>,
    player_contexts: Vec<SamplingContext>,
    phases: Vec<f32>,
    member_contexts: Vec<SamplingContext>,
    slots: Vec<Transform>,
    mask_scratch: Vec<f32>,
    flow: Vec<FlowState>,
    adjusts: Vec<BoneAdjust>,
    iks: Vec<GraphIk>,
    aims: Vec<GraphAim>,
    plants: Vec<GraphPlant>,
    events: Vec<GraphMarkerEvent>,
    machines: Vec<MachineInstance>,
    /// The root motion taken and the root bone's rest (`None`: none taken).
    root: Option<(RootMotion, Transform)>,
    /// The root motion of the last advance, blended by the flow's weights.
    root_delta: RootDelta,
    /// Per clip player, then per space member: where its root motion stepped to last.
    root_cursors: Vec<RootCursor>,
}

/// The clip a graph instance's lead source plays, where and how fast (for marker sync).
pub(crate) struct LeadMarker {
    /// The clip.
    pub clip: Arc<Clip>,
    /// Its time.
    pub time: f32,
    /// Clip seconds per second.
    pub rate: f32,
    /// Its duration.
    pub duration: f32,
    /// Whether it wraps.
    pub looping: bool,
}

/// The last instruction of a program run straight into the caller's output.
enum Direct<'a> {
    /// Sample this player (its index) into the output.
    Sample(&'a super::compile::ClipPlayer, usize),
    /// Play this machine (its index, scratch slots) into the output.
    Machine(usize, u16, u16),
}

/// The source that sets a graph's phase: a clip player or a blend space.
#[derive(Clone, Copy)]
enum Lead {
    Player(usize),
    Space(usize),
}

/// A LookAt node's solve for the last evaluation: what the Animator runs
/// ([`crate::ik::AimJob`]) once the pose is composed and the two-bone chains solved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GraphAim {
    /// The bone that turns.
    pub bone: u16,
    /// The bone the target follows: `target` is then an offset in its frame
    /// ([`super::compile::NO_TARGET_BONE`]: none, `target` is in model space).
    pub target_bone: u16,
    /// The bones that share the turn and their shares, root-most first (the first `links`).
    pub chain: [(u16, f32); super::MAX_LOOK_LINKS],
    /// How many of `chain` are used.
    pub links: u8,
    /// The target, model space.
    pub target: Vec3,
    /// The aiming axis, bone space.
    pub forward: Vec3,
    /// The up axis, bone space.
    pub up: Vec3,
    /// The aim's origin, bone space.
    pub offset: Vec3,
    /// Yaw and pitch limits.
    pub limits: crate::ik::AimLimits,
    /// The node's weight (clamped to `[0, 1]`) times its share of the final pose.
    pub weight: f32,
}

/// A FootPlant node's solve for the last evaluation: what the Animator runs once the pose is
/// composed, before the two-bone chains (see [`crate::graph::NodeKind::FootPlant`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GraphPlant {
    /// The hips.
    pub hips: u16,
    /// Left and right legs: hip, knee, ankle.
    pub legs: [[u16; 3]; 2],
    /// The plane's height at the model origin.
    pub height: f32,
    /// The plane's slope along +Z, radians.
    pub slope: f32,
    /// The most a foot is lifted.
    pub max_lift: f32,
    /// The most a foot is lowered.
    pub max_drop: f32,
    /// The knees' bend axis, unit length.
    pub mid_axis: Vec3,
    /// The node's weight (clamped to `[0, 1]`) times its share of the final pose.
    pub weight: f32,
}

/// A TwoBoneIk node's solve for the last evaluation: what the Animator runs
/// ([`crate::ik::TwoBoneIkJob`]) once the pose is composed, in graph order.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GraphIk {
    /// Start, mid and end bone.
    pub bones: [u16; 3],
    /// The bone the target follows: `target` is then an offset in its frame
    /// ([`super::compile::NO_TARGET_BONE`]: none, `target` is in model space).
    pub target_bone: u16,
    /// The target, model space.
    pub target: Vec3,
    /// The pole, model space.
    pub pole: Vec3,
    /// The mid joint's bend axis, its local space.
    pub mid_axis: Vec3,
    /// Where softening starts.
    pub soften: f32,
    /// The node's weight (clamped to `[0, 1]`) times its share of the final pose.
    pub weight: f32,
}

fn read(params: &[ParamValue], f: FloatRef) -> f32 {
    match f {
        FloatRef::Constant(c) => c,
        FloatRef::Param(i) => params.get(i as usize).map_or(0.0, |p| p.as_f32()),
        FloatRef::ParamAxis(i, k) => params.get(i as usize).map_or(0.0, |p| p.axis(usize::from(k))),
    }
}

fn unit(v: f32) -> f32 {
    if v.is_nan() { 0.0 } else { v.clamp(0.0, 1.0) }
}

/// Borrows `K` read slots and one distinct write slot from the flat slot storage.
pub(crate) fn views<const K: usize>(
    slots: &mut [Transform],
    n: usize,
    reads: [u16; K],
    write: u16,
) -> Result<([&[Transform]; K], &mut [Transform]), JobError> {
    let mut r: [Option<&[Transform]>; K] = [None; K];
    let mut w = None;
    let count = slots.len() / n;
    for (i, chunk) in slots.chunks_exact_mut(n).enumerate() {
        if i == write as usize {
            w = Some(chunk);
        } else {
            let c: &[Transform] = chunk;
            for k in 0..K {
                if reads[k] as usize == i {
                    r[k] = Some(c);
                }
            }
        }
    }
    let bad =
        || JobError::InputLength { job: "graph", input: "pose slot".to_owned(), expected: count, got: 0 };
    let w = w.ok_or_else(bad)?;
    let mut out: [&[Transform]; K] = [&[]; K];
    for k in 0..K {
        out[k] = r[k].ok_or_else(bad)?;
    }
    Ok((out, w))
}

/// A sampling context for `n` bones, ready for `clip` (its stream slots sized).
fn prepared(n: usize, clip: &Clip) -> SamplingContext {
    let mut c = SamplingContext::new(n);
    c.prepare(clip);
    c
}

impl GraphInstance {
    /// An instance of `program` at its start: parameters at their defaults, playheads at their
    /// starts (the end for a negative speed). Allocates every buffer evaluation needs.
    pub fn new(program: Arc<GraphProgram>) -> Self {
        let n = program.bone_count;
        let p = &program;
        let mut inst = GraphInstance {
            params: p.parameters.iter().map(|d| d.default).collect(),
            player_times: vec![0.0; p.players.len()],
            player_contexts: p.players.iter().map(|x| prepared(n, &x.clip)).collect(),
            phases: vec![0.0; p.spaces.len()],
            member_contexts: p.members.iter().map(|m| prepared(n, &m.clip)).collect(),
            slots: vec![Transform::IDENTITY; p.slot_count * n],
            mask_scratch: vec![0.0; if p.masks.is_empty() { 0 } else { n }],
            flow: vec![FlowState::default(); p.flow.len()],
            adjusts: Vec::with_capacity(p.adjust_entries.len()),
            iks: Vec::with_capacity(p.iks.len()),
            aims: Vec::with_capacity(p.aims.len()),
            plants: Vec::with_capacity(p.plants.len()),
            events: Vec::with_capacity(
                16 + 2 * p.players.iter().map(|x| x.clip.markers().len()).sum::<usize>()
                    + 8 * p.machines.len(),
            ),
            machines: p.machines.iter().map(MachineInstance::new).collect(),
            root: None,
            root_delta: RootDelta::IDENTITY,
            root_cursors: vec![RootCursor::default(); p.players.len() + p.members.len()],
            program,
        };
        inst.reset_playheads();
        inst
    }

    /// The program this instance runs.
    pub fn program(&self) -> &Arc<GraphProgram> {
        &self.program
    }

    /// Puts every playhead back at its start and every blend space phase at 0.
    pub fn reset_playheads(&mut self) {
        for (t, p) in self.player_times.iter_mut().zip(&self.program.players) {
            *t = if p.speed < 0.0 { p.duration } else { 0.0 };
        }
        self.phases.fill(0.0);
        self.events.clear();
        for (m, c) in self.machines.iter_mut().zip(&self.program.machines) {
            m.reset(c);
        }
    }

    /// Sets every parameter back to its authored default.
    pub fn reset_parameters(&mut self) {
        for (v, d) in self.params.iter_mut().zip(&self.program.parameters) {
            *v = d.default;
        }
    }

    /// The current value of parameter `name`.
    pub fn parameter(&self, name: &str) -> Option<ParamValue> {
        self.program.parameter_index(name).map(|i| self.params[i])
    }

    /// Sets parameter `index` (see [`GraphProgram::parameter_index`]); false when there is no such
    /// parameter or the value's type differs from the declaration's.
    pub fn set_parameter(&mut self, index: usize, value: ParamValue) -> bool {
        match self.params.get_mut(index) {
            Some(v) if std::mem::discriminant(v) == std::mem::discriminant(&value) => {
                *v = value;
                true
            }
            _ => false,
        }
    }

    /// The value of parameter `index`.
    pub fn parameter_at(&self, index: usize) -> Option<ParamValue> {
        self.params.get(index).copied()
    }

    /// Sets trigger parameter `name` (it stays set until a transition consumes it).
    pub fn set_trigger(&mut self, name: &str) -> bool {
        self.program.parameter_index(name).is_some_and(|i| self.set_parameter(i, ParamValue::Trigger(true)))
    }

    /// The state machine of StateMachine node `node`.
    pub fn machine(&self, node: NodeId) -> Option<&MachineInstance> {
        let i = self.program.machines.iter().position(|m| m.node == node)?;
        self.machines.get(i)
    }

    /// Every state machine with its compiled form, in program order.
    pub fn machines(
        &self,
    ) -> impl Iterator<Item = (&super::machine::CompiledMachine, &MachineInstance)> + '_ {
        self.program.machines.iter().zip(&self.machines)
    }

    /// The source that sets the graph's phase: its heaviest clip player or blend space as of the
    /// last advance (the first one in program order on a tie).
    fn lead(&self) -> Option<Lead> {
        // One clip or one space (a state playing a clip or a blend space): no search.
        match self.program.flow.as_slice() {
            [Flow::Clip { player }] => return Some(Lead::Player(*player as usize)),
            [Flow::Space { space }] => return Some(Lead::Space(*space as usize)),
            _ => {}
        }
        let mut best: Option<(Lead, f32)> = None;
        for (k, f) in self.program.flow.iter().enumerate() {
            let lead = match *f {
                Flow::Clip { player } => Lead::Player(player as usize),
                Flow::Space { space } => Lead::Space(space as usize),
                _ => continue,
            };
            let w = self.flow[k].weight;
            if best.is_none_or(|(_, b)| w > b) {
                best = Some((lead, w));
            }
        }
        best.map(|(l, _)| l)
    }

    /// The lead source's normalized phase in `[0, 1]` (0 when the graph plays no clip).
    pub fn lead_phase(&self) -> f32 {
        match self.lead() {
            Some(Lead::Player(p)) => {
                let d = self.program.players[p].duration;
                if d > 0.0 { (self.player_times[p] / d).clamp(0.0, 1.0) } else { 0.0 }
            }
            Some(Lead::Space(s)) => self.phases[s],
            None => 0.0,
        }
    }

    /// The lead source's phase, whether it wraps, and its laps per second (what a machine reads
    /// each tick, with one lookup of the lead).
    pub(crate) fn lead_state(&self) -> (f32, bool, f32) {
        match self.lead() {
            Some(Lead::Player(p)) => {
                let x = &self.program.players[p];
                if x.duration > 0.0 {
                    ((self.player_times[p] / x.duration).clamp(0.0, 1.0), x.looping, x.speed / x.duration)
                } else {
                    (0.0, x.looping, 0.0)
                }
            }
            Some(Lead::Space(s)) => {
                (self.phases[s], self.program.spaces[s].looping, self.space_phase_rate(s))
            }
            None => (0.0, false, 0.0),
        }
    }

    /// Whether the lead source wraps.
    pub fn lead_looping(&self) -> bool {
        match self.lead() {
            Some(Lead::Player(p)) => self.program.players[p].looping,
            Some(Lead::Space(s)) => self.program.spaces[s].looping,
            None => false,
        }
    }

    /// Seconds the lead source takes for one lap at the current parameters (negative when it
    /// plays backwards; infinite when it does not move).
    pub fn lead_length(&self) -> f32 {
        let rate = match self.lead() {
            Some(Lead::Player(p)) => {
                let x = &self.program.players[p];
                if x.duration > 0.0 { x.speed / x.duration } else { 0.0 }
            }
            Some(Lead::Space(s)) => self.space_phase_rate(s),
            None => 0.0,
        };
        1.0 / rate
    }

    /// Normalized phase per second of blend space `s` at the current parameters.
    fn space_phase_rate(&self, s: usize) -> f32 {
        let sp = &self.program.spaces[s];
        let members = &self.program.members[sp.members.clone()];
        let speed_of = |j: usize| {
            let m = &members[j];
            if m.duration > 0.0 { m.speed / m.duration } else { 0.0 }
        };
        if sp.y.is_some() {
            return corners(&self.program, sp, &self.params)
                .map_or(0.0, |c| c.iter().map(|&(j, w)| w * speed_of(j)).sum());
        }
        let positions = &self.program.member_positions[sp.members.clone()];
        neighbour_weights(positions, read(&self.params, sp.position))
            .map_or(0.0, |(lo, hi, t)| (1.0 - t) * speed_of(lo) + t * speed_of(hi))
    }

    /// Puts every clip player at `phase` of its duration and every blend space at `phase`.
    pub fn set_phase(&mut self, phase: f32) {
        let phase = if phase.is_finite() { phase.clamp(0.0, 1.0) } else { 0.0 };
        for (t, p) in self.player_times.iter_mut().zip(&self.program.players) {
            *t = phase * p.duration;
        }
        self.phases.fill(phase);
    }

    /// The lead source's clip, time and rate (a blend space's heaviest member).
    pub(crate) fn lead_marker(&self) -> Option<LeadMarker> {
        match self.lead()? {
            Lead::Player(p) => {
                let x = &self.program.players[p];
                Some(LeadMarker {
                    clip: x.clip.clone(),
                    time: self.player_times[p],
                    rate: x.speed,
                    duration: x.duration,
                    looping: x.looping,
                })
            }
            Lead::Space(s) => {
                let sp = &self.program.spaces[s];
                let count = sp.members.len();
                let mut weights = [0.0f32; 64];
                let heaviest = if count <= weights.len() && self.space_weights(sp.node, &mut weights[..count])
                {
                    (0..count).fold(0, |b, j| if weights[j] > weights[b] { j } else { b })
                } else {
                    0
                };
                let m = &self.program.members[sp.members.start + heaviest];
                Some(LeadMarker {
                    clip: m.clip.clone(),
                    time: self.phases[s] * m.duration,
                    rate: m.duration * self.space_phase_rate(s),
                    duration: m.duration,
                    looping: sp.looping,
                })
            }
        }
    }

    /// Sets float parameter `name` (a linear name lookup; cache the index for hot paths).
    pub fn set_float(&mut self, name: &str, value: f32) -> bool {
        self.program.parameter_index(name).is_some_and(|i| self.set_parameter(i, ParamValue::Float(value)))
    }

    /// Sets vector parameter `name` (a target point in the rig's model space).
    pub fn set_vec3(&mut self, name: &str, value: glam::Vec3) -> bool {
        self.program.parameter_index(name).is_some_and(|i| self.set_parameter(i, ParamValue::Vec3(value)))
    }

    /// Sets bool parameter `name`.
    pub fn set_bool(&mut self, name: &str, value: bool) -> bool {
        self.program.parameter_index(name).is_some_and(|i| self.set_parameter(i, ParamValue::Bool(value)))
    }

    /// The playhead of Clip node `node`.
    pub fn player_time(&self, node: NodeId) -> Option<f32> {
        let i = self.program.players.iter().position(|p| p.node == node)?;
        Some(self.player_times[i])
    }

    /// The normalized phase of BlendSpace1D or BlendSpace2D node `node`.
    pub fn space_phase(&self, node: NodeId) -> Option<f32> {
        let i = self.program.spaces.iter().position(|s| s.node == node)?;
        Some(self.phases[i])
    }

    /// The time member `member` (in position order; a 2D space's in sample order) of
    /// BlendSpace1D or BlendSpace2D node `node` samples at.
    pub fn member_time(&self, node: NodeId, member: usize) -> Option<f32> {
        let i = self.program.spaces.iter().position(|s| s.node == node)?;
        let s = &self.program.spaces[i];
        let m = self.program.members.get(s.members.clone())?.get(member)?;
        Some(self.phases[i] * m.duration)
    }

    /// The weights of BlendSpace1D node `node`'s members (in position order), or of
    /// BlendSpace2D node `node`'s (in sample order), at the current parameter values, written
    /// into `out` (which must have one entry per member).
    pub fn space_weights(&self, node: NodeId, out: &mut [f32]) -> bool {
        let Some(s) = self.program.spaces.iter().find(|s| s.node == node) else { return false };
        let positions = &self.program.member_positions[s.members.clone()];
        if out.len() != positions.len() {
            return false;
        }
        out.fill(0.0);
        if s.y.is_some() {
            for (j, w) in corners(&self.program, s, &self.params).into_iter().flatten() {
                out[j] += w;
            }
            return true;
        }
        if let Some((lo, hi, t)) = neighbour_weights(positions, read(&self.params, s.position)) {
            out[lo] += 1.0 - t;
            out[hi] += t;
        }
        true
    }

    /// The effective weight of pose node `node` in the final pose, and whether its clips speak, as
    /// of the last advance or evaluation.
    pub fn node_weight(&self, node: NodeId) -> Option<(f32, bool)> {
        let k = self.program.flow_nodes.iter().position(|&n| n == node)?;
        Some((self.flow[k].weight, self.flow[k].speaks))
    }

    /// Every pose node's effective weight and speaking flag (as [`GraphInstance::node_weight`]
    /// gives them one by one), in program order: for an editor drawing all of them.
    pub fn node_weights(&self) -> impl Iterator<Item = (NodeId, f32, bool)> + '_ {
        self.program.flow_nodes.iter().zip(&self.flow).map(|(n, s)| (*n, s.weight, s.speaks))
    }

    /// Every Clip node's playhead and its clip's duration.
    pub fn playheads(&self) -> impl Iterator<Item = (NodeId, f32, f32)> + '_ {
        self.program.players.iter().zip(&self.player_times).map(|(p, t)| (p.node, *t, p.duration))
    }

    /// Every BlendSpace1D and BlendSpace2D node's phase.
    pub fn phases(&self) -> impl Iterator<Item = (NodeId, f32)> + '_ {
        self.program.spaces.iter().zip(&self.phases).map(|(s, p)| (s.node, *p))
    }

    /// The marker events of the last [`GraphInstance::advance`].
    pub fn events(&self) -> &[GraphMarkerEvent] {
        &self.events
    }

    /// The model-space adjusts of the last [`GraphInstance::evaluate`], sorted by bone.
    pub fn adjusts(&self) -> &[BoneAdjust] {
        &self.adjusts
    }

    /// The TwoBoneIk solves of the last [`GraphInstance::evaluate`], in graph order (upstream
    /// first); a node at weight 0 gives none.
    pub fn iks(&self) -> &[GraphIk] {
        &self.iks
    }

    /// The LookAt solves of the last [`GraphInstance::evaluate`], in graph order; a node at
    /// weight 0 gives none.
    pub fn aims(&self) -> &[GraphAim] {
        &self.aims
    }

    /// The FootPlant solves of the last evaluation, in graph order (a machine's states' first).
    pub fn plants(&self) -> &[GraphPlant] {
        &self.plants
    }

    /// Takes root motion from `root` (the setting and the root bone's rest), or none; the
    /// states of the instance's machines follow.
    pub fn set_root_motion(&mut self, root: Option<(RootMotion, Transform)>) {
        if self.root == root {
            return;
        }
        self.root = root;
        for m in &mut self.machines {
            m.set_root_motion(root);
        }
    }

    /// The root motion of the last advance, blended by the weights the poses blend with (none
    /// through an Additive or Mask layer); identity when no root motion is taken.
    pub fn root_delta(&self) -> RootDelta {
        self.root_delta
    }

    /// The reverse pass: effective weight, speaking and rate of every pose node.
    fn propagate(&mut self) {
        let program = &*self.program;
        // One source (a clip or a space: a state of a machine, mostly): it is the whole pose.
        if let [only] = self.flow.as_mut_slice()
            && matches!(program.flow[..], [Flow::Clip { .. } | Flow::Space { .. } | Flow::Machine { .. }])
        {
            *only = FlowState { weight: 1.0, motion: 1.0, speaks: true, rate: 1.0 };
            return;
        }
        for s in &mut self.flow {
            *s = FlowState { weight: 0.0, motion: 0.0, speaks: false, rate: f32::NAN };
        }
        let Some(root) = self.flow.get_mut(program.root as usize) else { return };
        *root = FlowState { weight: 1.0, motion: 1.0, speaks: true, rate: 1.0 };
        let params = &self.params;
        let flow = &mut self.flow;
        let give = |flow: &mut [FlowState], i: u16, (weight, motion): (f32, f32), speaks: bool, rate: f32| {
            if let Some(s) = flow.get_mut(i as usize) {
                s.weight += weight;
                s.motion += motion;
                s.speaks |= speaks;
                if s.rate.is_nan() {
                    s.rate = rate;
                }
            }
        };
        for k in (0..program.flow.len()).rev() {
            let s = flow[k];
            let rate = if s.rate.is_nan() { 0.0 } else { s.rate };
            match program.flow[k] {
                Flow::Clip { .. } | Flow::Space { .. } | Flow::Machine { .. } => {}
                Flow::Blend2 { a, b, weight } => {
                    let w = unit(read(params, weight));
                    give(flow, a, (s.weight * (1.0 - w), s.motion * (1.0 - w)), s.speaks && w < 0.5, rate);
                    give(flow, b, (s.weight * w, s.motion * w), s.speaks && w >= 0.5, rate);
                }
                Flow::Additive { base, layer, reference, weight } => {
                    let w = unit(read(params, weight));
                    give(flow, base, (s.weight, s.motion), s.speaks, rate);
                    give(flow, layer, (s.weight * w, 0.0), s.speaks && w >= 0.5, rate);
                    give(flow, reference, (0.0, 0.0), false, rate);
                }
                Flow::Mask { base, layer, weight, layer_max } => {
                    let w = unit(read(params, weight)) * layer_max;
                    give(flow, base, (s.weight, s.motion), s.speaks, rate);
                    give(flow, layer, (s.weight * w, 0.0), s.speaks && w >= 0.5, rate);
                }
                Flow::Adjust { input, .. }
                | Flow::TwoBoneIk { input, .. }
                | Flow::LookAt { input, .. }
                | Flow::FootPlant { input, .. } => give(flow, input, (s.weight, s.motion), s.speaks, rate),
                Flow::TimeScale { input, scale } => {
                    let f = read(params, scale);
                    let f = if f.is_finite() { f } else { 0.0 };
                    give(flow, input, (s.weight, s.motion), s.speaks, rate * f);
                }
            }
        }
    }

    /// Advances every playhead by `dt` seconds (negative plays backwards) and records the markers
    /// swept by speaking clips (see the module docs) in [`GraphInstance::events`].
    pub fn advance(&mut self, dt: f32) {
        self.advance_with(dt, true);
    }

    /// [`GraphInstance::advance`], announcing markers only when `speaks` (an Animator passes
    /// whether this graph dominates its crossfade).
    pub fn advance_with(&mut self, dt: f32, speaks: bool) {
        self.events.clear();
        self.root_delta = RootDelta::IDENTITY;
        if dt == 0.0 || !dt.is_finite() {
            return;
        }
        self.propagate();
        let program = &*self.program;
        let events = &mut self.events;
        let root = self.root.as_ref();
        let mut motion = RootDelta::IDENTITY;
        let cursors = &mut self.root_cursors;
        // Player `i`'s cursor is `cursors[i]`; member `j`'s is `cursors[players + j]`.
        let members_at = program.players.len();
        let moved = |motion: &mut RootDelta,
                     cursor: Option<&mut RootCursor>,
                     clip: &Clip,
                     step: &PlaybackStep,
                     d: f32,
                     looping: bool,
                     w: f32| {
            if let (Some((rm, rest)), Some(cursor)) = (root, cursor)
                && w > 0.0
            {
                let delta = clip_delta_cursor(rm, clip, rest, step, d, looping, cursor);
                *motion = motion.plus(delta.weighted(w));
            }
        };
        for (k, f) in program.flow.iter().enumerate() {
            let st = self.flow[k];
            let rate = if st.rate.is_finite() { st.rate } else { 0.0 };
            let say = speaks && st.speaks;
            match *f {
                Flow::Clip { player } => {
                    let p = &program.players[player as usize];
                    let time = &mut self.player_times[player as usize];
                    let (step, _) = advance_head(*time, dt * rate * p.speed, p.duration, p.looping);
                    *time = step.to;
                    let cursor = cursors.get_mut(player as usize);
                    moved(&mut motion, cursor, &p.clip, &step, p.duration, p.looping, st.motion);
                    if say {
                        let times = p.clip.markers().iter().map(|m| m.time);
                        swept_markers(times, &step, p.duration, p.looping, |marker, lap| {
                            events.push(GraphMarkerEvent::marker(p.node, p.clip.clone(), marker, lap))
                        });
                    }
                }
                Flow::Machine { machine } => {
                    let m = &program.machines[machine as usize];
                    let scratch =
                        HostSlots { slots: &mut self.slots, n: program.bone_count, pair: m.scratch };
                    let mi = &mut self.machines[machine as usize];
                    mi.tick(m, &mut self.params, dt * rate, say, events, scratch);
                    if root.is_some() && st.motion > 0.0 {
                        motion = motion.plus(mi.root_delta().weighted(st.motion));
                    }
                }
                Flow::Space { space } if program.spaces[space as usize].y.is_some() => {
                    let s = &program.spaces[space as usize];
                    let Some(corners) = corners(program, s, &self.params) else { continue };
                    let phase = &mut self.phases[space as usize];
                    let step = advance_space_2d(program, s, corners, phase, dt * rate, say, events);
                    for (j, w) in corners {
                        let m = &program.members[s.members.clone()][j];
                        let d = m.duration;
                        let member =
                            PlaybackStep { from: step.from * d, to: step.to * d, travel: step.travel * d };
                        let cursor = cursors.get_mut(members_at + s.members.start + j);
                        moved(&mut motion, cursor, &m.clip, &member, d, s.looping, st.motion * w);
                    }
                }
                Flow::Space { space } => {
                    let s = &program.spaces[space as usize];
                    let members = &program.members[s.members.clone()];
                    let positions = &program.member_positions[s.members.clone()];
                    let Some((lo, hi, t)) = neighbour_weights(positions, read(&self.params, s.position))
                    else {
                        continue;
                    };
                    let speed_of = |j: usize| {
                        let m = &members[j];
                        if m.duration > 0.0 { m.speed / m.duration } else { 0.0 }
                    };
                    let phase_rate = (1.0 - t) * speed_of(lo) + t * speed_of(hi);
                    let phase = &mut self.phases[space as usize];
                    let (step, _) = advance_head(*phase, dt * rate * phase_rate, 1.0, s.looping);
                    *phase = step.to;
                    for (j, w) in [(lo, 1.0 - t), (hi, t)] {
                        let d = members[j].duration;
                        let member =
                            PlaybackStep { from: step.from * d, to: step.to * d, travel: step.travel * d };
                        let cursor = cursors.get_mut(members_at + s.members.start + j);
                        moved(&mut motion, cursor, &members[j].clip, &member, d, s.looping, st.motion * w);
                    }
                    if say {
                        let m = &members[if t >= 0.5 { hi } else { lo }];
                        let d = m.duration;
                        let member_step =
                            PlaybackStep { from: step.from * d, to: step.to * d, travel: step.travel * d };
                        let times = m.clip.markers().iter().map(|mk| mk.time);
                        swept_markers(times, &member_step, d, s.looping, |marker, lap| {
                            events.push(GraphMarkerEvent::marker(s.node, m.clip.clone(), marker, lap))
                        });
                    }
                }
                _ => {}
            }
        }
        self.root_delta = motion;
    }

    /// Evaluates the graph at the current playheads and parameter values into `out_local`, and
    /// gathers the Adjust nodes' model-space adjusts into [`GraphInstance::adjusts`] (pass them to
    /// [`crate::pose::LocalToModelJob`]). `skeleton` must be the one the program was compiled for.
    pub fn evaluate(&mut self, skeleton: &Skeleton, out_local: &mut [Transform]) -> Result<(), JobError> {
        if skeleton.bone_count() != self.program.bone_count {
            return Err(JobError::InputLength {
                job: "graph",
                input: "skeleton bones".to_owned(),
                expected: self.program.bone_count,
                got: skeleton.bone_count(),
            });
        }
        self.run(&skeleton.bind_pose, out_local)
    }

    /// [`GraphInstance::evaluate`] against a bind pose (one transform per bone).
    pub(crate) fn run(&mut self, bind: &[Transform], out_local: &mut [Transform]) -> Result<(), JobError> {
        let program = &*self.program;
        let n = program.bone_count;
        if bind.len() != n {
            return Err(JobError::InputLength {
                job: "graph",
                input: "bind pose".to_owned(),
                expected: n,
                got: bind.len(),
            });
        }
        if out_local.len() < n {
            return Err(JobError::OutputTooSmall {
                job: "graph",
                output: "out_local",
                needed: n,
                got: out_local.len(),
            });
        }
        if n == 0 {
            self.adjusts.clear();
            self.iks.clear();
            self.aims.clear();
            return Ok(());
        }
        let params = &self.params;
        let slots = &mut self.slots[..];
        // The last instruction, when it samples a clip or plays a machine into the result slot,
        // writes straight into `out_local` (no copy of the pose at the end).
        let direct = match program.instructions.last() {
            Some(&Instruction::Sample { player, dst }) if dst == program.result => {
                let p = &program.players[player as usize];
                Some(Direct::Sample(p, player as usize))
            }
            Some(&Instruction::Machine { machine, dst, a, b }) if dst == program.result => {
                Some(Direct::Machine(machine as usize, a, b))
            }
            _ => None,
        };
        let count = program.instructions.len() - usize::from(direct.is_some());
        for ins in &program.instructions[..count] {
            match *ins {
                Instruction::Sample { player, dst } => {
                    let p = &program.players[player as usize];
                    let ([], out) = views(slots, n, [], dst)?;
                    SamplingJob {
                        clip: &p.clip,
                        bind_pose: bind,
                        time: self.player_times[player as usize],
                        context: &mut self.player_contexts[player as usize],
                        output: out,
                    }
                    .run()?;
                }
                Instruction::BlendSpace { space, dst, a, b } => {
                    let s = &program.spaces[space as usize];
                    let positions = &program.member_positions[s.members.clone()];
                    let Some((lo, hi, t)) = neighbour_weights(positions, read(params, s.position)) else {
                        continue;
                    };
                    let phase = self.phases[space as usize];
                    let mut sample = |j: usize, slot: u16| -> Result<(), JobError> {
                        let m = &program.members[s.members.start + j];
                        let ([], out) = views(slots, n, [], slot)?;
                        SamplingJob {
                            clip: &m.clip,
                            bind_pose: bind,
                            time: phase * m.duration,
                            context: &mut self.member_contexts[s.members.start + j],
                            output: out,
                        }
                        .run()
                    };
                    if t == 0.0 || lo == hi {
                        sample(lo, dst)?;
                    } else if t == 1.0 {
                        sample(hi, dst)?;
                    } else {
                        sample(lo, a)?;
                        sample(hi, b)?;
                        let ([pa, pb], out) = views(slots, n, [a, b], dst)?;
                        blend_two(pa, 1.0 - t, None, pb, t, None, bind, out);
                    }
                }
                Instruction::BlendSpace2D { space, dst, a, b, c } => {
                    let s = &program.spaces[space as usize];
                    let Some(corners) = corners(program, s, params) else { continue };
                    let phase = self.phases[space as usize];
                    let contexts = &mut self.member_contexts[s.members.clone()];
                    let members = &program.members[s.members.clone()];
                    blend_corners(members, contexts, corners, phase, bind, slots, n, [a, b, c], dst)?;
                }
                Instruction::Machine { machine, dst, a, b } => {
                    let m = &program.machines[machine as usize];
                    self.machines[machine as usize].evaluate(m, bind, slots, n, dst, a, b)?;
                }
                Instruction::Blend { a, b, weight, dst } => {
                    let w = unit(read(params, weight));
                    let ([pa, pb], out) = views(slots, n, [a, b], dst)?;
                    blend_two(pa, 1.0 - w, None, pb, w, None, bind, out);
                }
                Instruction::Additive { base, layer, reference, weight, dst } => {
                    let w = unit(read(params, weight));
                    let ([pb, pl, pr], out) = views(slots, n, [base, layer, reference], dst)?;
                    AdditiveJob { base: pb, layer: pl, reference: pr, weight: w, output: out }.run()?;
                }
                Instruction::Mask { base, layer, mask, weight, dst } => {
                    let w = unit(read(params, weight));
                    let m = &program.masks[mask as usize][..];
                    let scratch = &mut self.mask_scratch[..];
                    for (s, &mb) in scratch.iter_mut().zip(m) {
                        *s = 1.0 - w * mb;
                    }
                    let ([pb, pl], out) = views(slots, n, [base, layer], dst)?;
                    blend_two(pb, 1.0, Some(scratch), pl, w, Some(m), bind, out);
                }
            }
        }
        match direct {
            Some(Direct::Sample(p, k)) => SamplingJob {
                clip: &p.clip,
                bind_pose: bind,
                time: self.player_times[k],
                context: &mut self.player_contexts[k],
                output: &mut out_local[..n],
            }
            .run()?,
            Some(Direct::Machine(m, a, b)) => {
                let c = &program.machines[m];
                self.machines[m].evaluate_into(c, bind, slots, n, a, b, &mut out_local[..n])?;
            }
            None => {
                let r = program.result as usize * n;
                out_local[..n].copy_from_slice(&self.slots[r..r + n]);
            }
        }
        self.gather_adjusts();
        Ok(())
    }

    fn gather_adjusts(&mut self) {
        self.adjusts.clear();
        if !self.program.composes {
            // Nothing to gather: no Adjust, TwoBoneIk, LookAt or machine.
            self.iks.clear();
            self.aims.clear();
            self.plants.clear();
            return;
        }
        self.propagate();
        let program = &*self.program;
        for (k, f) in program.flow.iter().enumerate() {
            let Flow::Adjust { first, count, .. } = *f else { continue };
            let w = self.flow[k].weight;
            let entries = program.adjust_entries.get(first as usize..(first + count) as usize).unwrap_or(&[]);
            for e in entries {
                let v = read(&self.params, e.amount);
                if !v.is_finite() {
                    continue;
                }
                let a = match e.op {
                    AdjustOp::Rotate { axis } => BoneAdjust::rotate(e.bone, Quat::from_axis_angle(axis, v)),
                    AdjustOp::Orient { axis } => BoneAdjust::orient(e.bone, Quat::from_axis_angle(axis, v)),
                    AdjustOp::Offset { direction } => BoneAdjust::offset(e.bone, direction * v),
                    AdjustOp::Scale => BoneAdjust::scale(e.bone, v),
                };
                if let Some(a) = weighted_adjust(a, w) {
                    self.adjusts.push(a);
                }
            }
        }
        self.iks.clear();
        self.aims.clear();
        self.plants.clear();
        // A machine's states contribute their own adjusts and solves, scaled by their weight in
        // the machine and the machine's in the pose.
        for (k, f) in program.flow.iter().enumerate() {
            let Flow::Machine { machine } = *f else { continue };
            let (cm, mi) = (&program.machines[machine as usize], &self.machines[machine as usize]);
            for (state, ws) in mi.weights(cm) {
                let (Some(s), w) = (state.and_then(|s| mi.state(s)), ws * self.flow[k].weight) else {
                    continue;
                };
                self.adjusts.extend(s.adjusts().iter().filter_map(|a| weighted_adjust(*a, w)));
                let scaled = |x: f32| (x * w).min(1.0);
                self.iks.extend(
                    s.iks().iter().filter(|_| w > 0.0).map(|i| GraphIk { weight: scaled(i.weight), ..*i }),
                );
                self.aims.extend(
                    s.aims().iter().filter(|_| w > 0.0).map(|i| GraphAim { weight: scaled(i.weight), ..*i }),
                );
                self.plants.extend(
                    s.plants()
                        .iter()
                        .filter(|_| w > 0.0)
                        .map(|i| GraphPlant { weight: scaled(i.weight), ..*i }),
                );
            }
        }
        crate::pose::sort_adjusts(&mut self.adjusts);
        for (k, f) in program.flow.iter().enumerate() {
            let Flow::FootPlant { plant, .. } = *f else { continue };
            let Some(c) = program.plants.get(plant as usize) else { continue };
            let weight = unit(read(&self.params, c.weight)) * self.flow[k].weight;
            let (height, slope) = (read(&self.params, c.height), read(&self.params, c.slope));
            if weight > 0.0 && height.is_finite() && slope.is_finite() {
                self.plants.push(GraphPlant {
                    hips: c.hips,
                    legs: c.legs,
                    height,
                    slope: slope.clamp(-1.4, 1.4),
                    max_lift: c.max_lift,
                    max_drop: c.max_drop,
                    mid_axis: c.mid_axis,
                    weight: weight.min(1.0),
                });
            }
        }
        for (k, f) in program.flow.iter().enumerate() {
            let Flow::TwoBoneIk { ik, .. } = *f else { continue };
            let Some(c) = program.iks.get(ik as usize) else { continue };
            let weight = unit(read(&self.params, c.weight)) * self.flow[k].weight;
            let target = Vec3::from_array(c.target.map(|t| read(&self.params, t)));
            if weight > 0.0 && target.is_finite() {
                self.iks.push(GraphIk {
                    bones: c.bones,
                    target_bone: c.target_bone,
                    target,
                    pole: c.pole,
                    mid_axis: c.mid_axis,
                    soften: c.soften,
                    weight: weight.min(1.0),
                });
            }
        }
        for (k, f) in program.flow.iter().enumerate() {
            let Flow::LookAt { aim, .. } = *f else { continue };
            let Some(c) = program.aims.get(aim as usize) else { continue };
            let weight = unit(read(&self.params, c.weight)) * self.flow[k].weight;
            let target = Vec3::from_array(c.target.map(|t| read(&self.params, t)));
            if weight > 0.0 && target.is_finite() {
                self.aims.push(GraphAim {
                    bone: c.bone,
                    target_bone: c.target_bone,
                    chain: c.chain,
                    links: c.links,
                    target,
                    forward: c.forward,
                    up: c.up,
                    offset: c.offset,
                    limits: c.limits,
                    weight: weight.min(1.0),
                });
            }
        }
    }
}
