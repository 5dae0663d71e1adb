//! The graph compiler: validates an [`AnimGraph`] against a skeleton and a clip library and emits
//! a flat [`GraphProgram`] (instructions over a few reusable pose slots), plus [`GraphCache`],
//! which recompiles only when the graph changes.
//!
//! ## Validation
//! Every failure is collected (never just the first) as a [`GraphError`] naming the node at fault:
//! no Output or more than one, a cycle, a pin type mismatch, an unknown pin, a dangling or doubled
//! connection, an unconnected pose input, a missing clip, a clip for another rig (or otherwise
//! faulty), a bone name the rig lacks, an unknown parameter, a bad constant, 2D blend space
//! positions that do not triangulate (fewer than three, a duplicate, all on one line, not finite;
//! see [`super::plane`]). Cycles and connection faults are reported anywhere in the graph; the
//! other checks cover only the nodes that feed the Output, so nodes off to the side may be
//! unfinished.
//!
//! ## Emission
//! Nodes are ordered depth-first from the Output (inputs in pin order, so the order is
//! deterministic and each input's subtree is finished before the next starts). Each pose
//! node gets a slot; Adjust and TimeScale nodes pass their input's slot through. Slots are
//! allocated like registers: a node's destination is taken before its inputs are released, and a
//! slot is freed after its last reader, so a four-clip blend space needs three slots and a
//! balanced tree of three Blend2 nodes over four clips needs four.
//!
//! The compiler does not play anything; session state lives in [`super::eval::GraphInstance`].

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use glam::Vec3;

use super::machine::CompiledMachine;
use super::model::{
    AdjustOp, AnimGraph, Drive, LookLink, MAX_LOOK_LINKS, NodeId, NodeKind, ParamDecl, ParamValue, PinType,
};
use crate::clip::{Clip, ClipFault, find_clip_fault};
use crate::skeleton::Skeleton;

/// Why a graph does not compile. Every variant but [`GraphError::NoOutput`] and
/// [`GraphError::DuplicateParameter`] names the node at fault and its kind (`title`).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum GraphError {
    /// The graph has no Output node.
    #[error("the graph has no Output node")]
    NoOutput,
    /// The skeleton has more bones than a compiled program can address.
    #[error("skeleton {skeleton:?} has {bones} bones; a graph program addresses at most {max}")]
    TooManyBones {
        /// Skeleton name.
        skeleton: String,
        /// Its bone count.
        bones: usize,
        /// The limit.
        max: usize,
    },
    /// A second (or later) Output node.
    #[error("node {node} ({title}): more than one Output node (the first is {first})")]
    ExtraOutput {
        /// The extra Output.
        node: NodeId,
        /// Its title.
        title: &'static str,
        /// The first Output.
        first: NodeId,
    },
    /// Two nodes share an id.
    #[error("node {node} ({title}): another node has the same id")]
    DuplicateNodeId {
        /// The id.
        node: NodeId,
        /// The second node's title.
        title: &'static str,
    },
    /// The node lies on a cycle.
    #[error("node {node} ({title}): lies on a cycle through {}", path_text(cycle))]
    Cycle {
        /// The lowest id on the cycle.
        node: NodeId,
        /// Its title.
        title: &'static str,
        /// The nodes on the cycle, in flow order starting at `node`.
        cycle: Vec<NodeId>,
    },
    /// A connection joins pins of different types.
    #[error(
        "node {node} ({title}): input {pin:?} takes a {expected}, but node {from} gives {}",
        found.map_or_else(|| "nothing".to_owned(), |t| t.to_string())
    )]
    PinTypeMismatch {
        /// The node whose input it is.
        node: NodeId,
        /// Its title.
        title: &'static str,
        /// The input pin.
        pin: String,
        /// The pin's type.
        expected: PinType,
        /// The node feeding it.
        from: NodeId,
        /// What that node's output gives (`None`: it has no output).
        found: Option<PinType>,
    },
    /// A connection names an input pin the node does not have.
    #[error("node {node} ({title}): has no input pin {pin:?}")]
    UnknownPin {
        /// The node.
        node: NodeId,
        /// Its title.
        title: &'static str,
        /// The pin named.
        pin: String,
    },
    /// A connection names a node that does not exist.
    #[error("node {node} ({title}): connection on pin {pin:?} names missing node {missing}")]
    DanglingConnection {
        /// The existing end of the connection.
        node: NodeId,
        /// Its title.
        title: &'static str,
        /// The input pin of the connection.
        pin: String,
        /// The missing node.
        missing: NodeId,
    },
    /// Two connections feed one input.
    #[error("node {node} ({title}): input {pin:?} is connected more than once")]
    DuplicateInput {
        /// The node.
        node: NodeId,
        /// Its title.
        title: &'static str,
        /// The pin.
        pin: String,
    },
    /// A pose input is not connected.
    #[error("node {node} ({title}): pose input {pin:?} is not connected")]
    MissingInput {
        /// The node.
        node: NodeId,
        /// Its title.
        title: &'static str,
        /// The pin.
        pin: String,
    },
    /// The clip library has no clip at this path.
    #[error("node {node} ({title}): no clip at {path:?}")]
    MissingClip {
        /// The node.
        node: NodeId,
        /// Its title.
        title: &'static str,
        /// The asset path.
        path: String,
    },
    /// The clip was authored for another skeleton.
    #[error("node {node} ({title}): clip {path:?} is for skeleton {clip_skeleton:?}, not {skeleton:?}")]
    OtherRig {
        /// The node.
        node: NodeId,
        /// Its title.
        title: &'static str,
        /// The asset path.
        path: String,
        /// The skeleton the clip names.
        clip_skeleton: String,
        /// The skeleton compiled for.
        skeleton: String,
    },
    /// The clip is unplayable on the skeleton for another reason.
    #[error("node {node} ({title}): clip {path:?}: {fault}")]
    BadClip {
        /// The node.
        node: NodeId,
        /// Its title.
        title: &'static str,
        /// The asset path.
        path: String,
        /// The clip's fault.
        fault: ClipFault,
    },
    /// A bone name the skeleton lacks.
    #[error("node {node} ({title}): skeleton {skeleton:?} has no bone {bone:?}")]
    UnknownBone {
        /// The node.
        node: NodeId,
        /// Its title.
        title: &'static str,
        /// The bone name.
        bone: String,
        /// The skeleton.
        skeleton: String,
    },
    /// A parameter name the graph does not declare.
    #[error("node {node} ({title}): no parameter named {parameter:?}")]
    UnknownParameter {
        /// The node.
        node: NodeId,
        /// Its title.
        title: &'static str,
        /// The name.
        parameter: String,
    },
    /// An authored constant is unusable (non-finite, out of range, an empty blend space, a zero axis).
    #[error("node {node} ({title}): {what}")]
    BadValue {
        /// The node.
        node: NodeId,
        /// Its title.
        title: &'static str,
        /// What is wrong.
        what: String,
    },
    /// A node of a kind this build does not know (kept from a graph file, see
    /// [`NodeKind::Unknown`]): the graph cannot play until it is replaced or removed.
    #[error("node {node}: unknown node kind {kind:?} (replace or delete it)")]
    UnknownKind {
        /// The node.
        node: NodeId,
        /// The kind named.
        kind: String,
    },
    /// A parameter's default is not a finite number.
    #[error("parameter {name:?} has the default {value}, which is not a finite number")]
    BadDefault {
        /// The name.
        name: String,
        /// The default.
        value: f32,
    },
    /// Two parameters share a name.
    #[error("parameter {name:?} is declared more than once")]
    DuplicateParameter {
        /// The name.
        name: String,
    },
    /// A state machine fault, on the machine, one of its states or one of its transitions.
    #[error("node {node} ({title}): {at}{what}")]
    Machine {
        /// The StateMachine node.
        node: NodeId,
        /// Its title.
        title: &'static str,
        /// Where in the machine.
        at: MachinePlace,
        /// What is wrong.
        what: String,
    },
    /// Graphs play each other in a ring (through state machine states).
    #[error("node {node} ({title}): state {state:?} plays graph {graph:?}, which leads back to itself: {}", path.join(" → "))]
    GraphCycle {
        /// The StateMachine node.
        node: NodeId,
        /// Its title.
        title: &'static str,
        /// The state.
        state: String,
        /// The graph it plays.
        graph: String,
        /// The ring of graph paths, from the outermost graph on the ring back to itself.
        path: Vec<String>,
    },
}

/// Where in a state machine a [`GraphError::Machine`] is.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum MachinePlace {
    /// The machine as a whole.
    Machine,
    /// The state of this name.
    State(String),
    /// Transition `index` (authored order), with its label ("Idle -> Walk").
    Transition(usize, String),
}

impl std::fmt::Display for MachinePlace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MachinePlace::Machine => Ok(()),
            MachinePlace::State(s) => write!(f, "state {s:?}: "),
            MachinePlace::Transition(k, label) => write!(f, "transition {} ({label}): ", k + 1),
        }
    }
}

/// A cycle's nodes as the user reads them: `#5 → #6 → #5`.
fn path_text(cycle: &[NodeId]) -> String {
    let mut out: Vec<String> = if cycle.len() > 12 {
        // A long cycle is named by its ends and its length.
        let n = cycle.len();
        cycle[..6]
            .iter()
            .map(|x| x.to_string())
            .chain([format!("... ({n} nodes) ...")])
            .chain(cycle[n - 3..].iter().map(|x| x.to_string()))
            .collect()
    } else {
        cycle.iter().map(|x| x.to_string()).collect()
    };
    if let Some(first) = cycle.first() {
        out.push(first.to_string());
    }
    out.join(" → ")
}

impl GraphError {
    /// The node at fault, if the error is on a node.
    pub fn node(&self) -> Option<NodeId> {
        use GraphError::*;
        match self {
            NoOutput | TooManyBones { .. } | DuplicateParameter { .. } | BadDefault { .. } => None,
            ExtraOutput { node, .. }
            | DuplicateNodeId { node, .. }
            | Cycle { node, .. }
            | PinTypeMismatch { node, .. }
            | UnknownPin { node, .. }
            | DanglingConnection { node, .. }
            | DuplicateInput { node, .. }
            | MissingInput { node, .. }
            | MissingClip { node, .. }
            | OtherRig { node, .. }
            | BadClip { node, .. }
            | UnknownBone { node, .. }
            | UnknownParameter { node, .. }
            | BadValue { node, .. }
            | Machine { node, .. }
            | GraphCycle { node, .. }
            | UnknownKind { node, .. } => Some(*node),
        }
    }
}

/// Resolves clip asset paths to clips at compile time.
pub trait ClipSource {
    /// The clip at `path`, if any.
    fn clip(&self, path: &str) -> Option<Arc<Clip>>;
}

impl ClipSource for HashMap<String, Arc<Clip>> {
    fn clip(&self, path: &str) -> Option<Arc<Clip>> {
        self.get(path).cloned()
    }
}

impl<F: Fn(&str) -> Option<Arc<Clip>>> ClipSource for F {
    fn clip(&self, path: &str) -> Option<Arc<Clip>> {
        self(path)
    }
}

/// Resolves graph asset paths to authored graphs at compile time (the graphs a state machine's
/// states play).
pub trait GraphSource {
    /// The graph at `path`, if any.
    fn graph(&self, path: &str) -> Option<Arc<AnimGraph>>;
}

impl GraphSource for HashMap<String, Arc<AnimGraph>> {
    fn graph(&self, path: &str) -> Option<Arc<AnimGraph>> {
        self.get(path).cloned()
    }
}

impl GraphSource for std::collections::BTreeMap<String, Arc<AnimGraph>> {
    fn graph(&self, path: &str) -> Option<Arc<AnimGraph>> {
        self.get(path).cloned()
    }
}

/// No graphs (a state playing a graph does not compile).
pub struct NoGraphs;

impl GraphSource for NoGraphs {
    fn graph(&self, _: &str) -> Option<Arc<AnimGraph>> {
        None
    }
}

/// A float operand: an authored constant or a parameter (by index into the program's parameters).
#[derive(Clone, Copy, Debug, PartialEq)]
#[doc(hidden)]
pub enum FloatRef {
    /// A constant.
    Constant(f32),
    /// Parameter `index`.
    Param(u16),
    /// Component `axis` (0, 1, 2: x, y, z) of vector parameter `index`.
    ParamAxis(u16, u8),
}

/// One instruction of a [`GraphProgram`]. Slots are indices into the instance's pose slots; a
/// destination never equals one of the instruction's sources.
#[derive(Clone, Copy, Debug, PartialEq)]
#[doc(hidden)]
pub enum Instruction {
    /// Samples clip player `player` at its playhead into `dst`.
    Sample {
        /// Index into [`GraphProgram::players`].
        player: u16,
        /// Destination slot.
        dst: u16,
    },
    /// Samples the two active members of blend space `space` (into `a` and `b`) and blends them
    /// into `dst`; a member at weight 1 is sampled straight into `dst`.
    BlendSpace {
        /// Index into [`GraphProgram::spaces`].
        space: u16,
        /// Destination slot.
        dst: u16,
        /// Scratch slot for the lower neighbour.
        a: u16,
        /// Scratch slot for the upper neighbour.
        b: u16,
    },
    /// Samples the (up to) three weighted members of 2D blend space `space` (into `a`, `b`, `c`)
    /// and blends them into `dst`; a member at weight 1 is sampled straight into `dst`.
    BlendSpace2D {
        /// Index into [`GraphProgram::spaces`].
        space: u16,
        /// Destination slot.
        dst: u16,
        /// Scratch slot for the first corner.
        a: u16,
        /// Scratch slot for the second corner.
        b: u16,
        /// Scratch slot for the third corner.
        c: u16,
    },
    /// Local-TRS blend of `a` (weight `1 - w`) and `b` (weight `w`), `w` clamped to `[0, 1]`.
    Blend {
        /// First pose.
        a: u16,
        /// Second pose.
        b: u16,
        /// Weight of `b`.
        weight: FloatRef,
        /// Destination slot.
        dst: u16,
    },
    /// `base + (layer - reference) * weight`.
    Additive {
        /// Base pose.
        base: u16,
        /// Layer pose.
        layer: u16,
        /// Reference pose.
        reference: u16,
        /// Weight, clamped to `[0, 1]`.
        weight: FloatRef,
        /// Destination slot.
        dst: u16,
    },
    /// State machine `machine`'s pose into `dst` (its transition's source and destination into
    /// scratch slots `a` and `b`, then blended).
    Machine {
        /// Index into the program's machines.
        machine: u16,
        /// Destination slot.
        dst: u16,
        /// Scratch slot for a transition's source.
        a: u16,
        /// Scratch slot for a transition's destination.
        b: u16,
    },
    /// Layered blend of `layer` over `base` with the per-bone weights of mask `mask` times `weight`.
    Mask {
        /// Base pose.
        base: u16,
        /// Layer pose.
        layer: u16,
        /// Index into the program's masks.
        mask: u16,
        /// Weight, clamped to `[0, 1]`.
        weight: FloatRef,
        /// Destination slot.
        dst: u16,
    },
}

/// A clip played by a Clip node.
#[derive(Clone, Debug)]
#[doc(hidden)]
pub struct ClipPlayer {
    /// The Clip node.
    pub node: NodeId,
    /// The resolved clip.
    pub clip: Arc<Clip>,
    /// Its duration.
    pub duration: f32,
    /// Speed.
    pub speed: f32,
    /// Whether the playhead wraps.
    pub looping: bool,
}

/// A clip on a blend space axis.
#[derive(Clone, Debug)]
#[doc(hidden)]
pub struct SpaceMember {
    /// The resolved clip.
    pub clip: Arc<Clip>,
    /// Its duration.
    pub duration: f32,
    /// Speed.
    pub speed: f32,
}

/// A compiled blend space.
#[derive(Clone, Debug)]
#[doc(hidden)]
pub struct CompiledSpace {
    /// The BlendSpace1D or BlendSpace2D node.
    pub node: NodeId,
    /// Its members' range in [`GraphProgram::members`] (a 1D space's sorted by position; a 2D
    /// space's in sample order).
    pub members: Range<usize>,
    /// The axis value (a 2D space's x).
    pub position: FloatRef,
    /// A 2D space's y (`None`: a 1D space).
    pub y: Option<FloatRef>,
    /// A 2D space's Delaunay triangles in [`GraphProgram::triangles`] (member indices local to
    /// the space); empty for a 1D space.
    pub triangles: Range<usize>,
    /// Whether the phase wraps.
    pub looping: bool,
}

/// A compiled adjust entry (bone resolved, axis normalized).
#[derive(Clone, Copy, Debug, PartialEq)]
#[doc(hidden)]
pub struct CompiledAdjust {
    /// Bone index.
    pub bone: u16,
    /// The operation.
    pub op: AdjustOp,
    /// Its amount.
    pub amount: FloatRef,
}

/// How one pose node contributes to its inputs' weight, speaking and rate (used by the instance's
/// per-tick reverse pass). Indices are into [`GraphProgram::flow`].
#[derive(Clone, Copy, Debug, PartialEq)]
#[doc(hidden)]
pub enum Flow {
    /// Clip player `player`.
    Clip {
        /// Player index.
        player: u16,
    },
    /// Blend space `space`.
    Space {
        /// Space index.
        space: u16,
    },
    /// State machine `machine` (its states are programs of their own).
    Machine {
        /// Index into the program's machines.
        machine: u16,
    },
    /// A Blend2.
    Blend2 {
        /// Input `a`.
        a: u16,
        /// Input `b`.
        b: u16,
        /// Weight of `b`.
        weight: FloatRef,
    },
    /// An Additive.
    Additive {
        /// Base.
        base: u16,
        /// Layer.
        layer: u16,
        /// Reference (contributes nothing to weights or markers).
        reference: u16,
        /// Weight.
        weight: FloatRef,
    },
    /// A Mask.
    Mask {
        /// Base.
        base: u16,
        /// Layer.
        layer: u16,
        /// Weight.
        weight: FloatRef,
        /// The largest per-bone weight of the mask.
        layer_max: f32,
    },
    /// An Adjust node; its entries are `first..first + count` in [`GraphProgram::adjust_entries`].
    Adjust {
        /// Input.
        input: u16,
        /// Entry range.
        first: u32,
        /// Entry count.
        count: u32,
    },
    /// A TimeScale.
    TimeScale {
        /// Input.
        input: u16,
        /// Rate factor.
        scale: FloatRef,
    },
    /// A LookAt node; its solve is [`GraphProgram::aims`]`[aim]`.
    LookAt {
        /// Input.
        input: u16,
        /// Index into the program's look-ats.
        aim: u16,
    },
    /// A TwoBoneIk node; its solve is [`GraphProgram::iks`]`[ik]`.
    TwoBoneIk {
        /// Input.
        input: u16,
        /// Index into the program's IK chains.
        ik: u16,
    },
    /// A FootPlant node; its solve is `GraphProgram::plants[plant]`.
    FootPlant {
        /// Input.
        input: u16,
        /// Index into the program's foot plants.
        plant: u16,
    },
}

/// A compiled graph: a flat instruction list over pose slots, with clips and bones resolved.
/// Derived data: rebuilt whenever the authored graph changes, shared by all instances.
#[derive(Clone, Debug)]
pub struct GraphProgram {
    pub(crate) skeleton: String,
    pub(crate) bone_count: usize,
    pub(crate) parameters: Vec<ParamDecl>,
    pub(crate) instructions: Vec<Instruction>,
    pub(crate) slot_count: usize,
    pub(crate) result: u16,
    pub(crate) players: Vec<ClipPlayer>,
    pub(crate) spaces: Vec<CompiledSpace>,
    pub(crate) members: Vec<SpaceMember>,
    pub(crate) member_positions: Vec<f32>,
    pub(crate) member_points: Vec<(f32, f32)>,
    pub(crate) triangles: Vec<[usize; 3]>,
    pub(crate) masks: Vec<Vec<f32>>,
    pub(crate) flow: Vec<Flow>,
    pub(crate) flow_nodes: Vec<NodeId>,
    pub(crate) root: u16,
    pub(crate) adjust_entries: Vec<CompiledAdjust>,
    pub(crate) iks: Vec<CompiledTwoBoneIk>,
    pub(crate) aims: Vec<CompiledLookAt>,
    pub(crate) plants: Vec<CompiledFootPlant>,
    pub(crate) machines: Vec<CompiledMachine>,
    /// Whether evaluation gathers anything for composition (adjusts, IK, look-ats, machines).
    pub(crate) composes: bool,
}

/// A compiled LookAt node: its bone resolved, its target and weight as float operands, its axes
/// normalized.
#[derive(Clone, Copy, Debug, PartialEq)]
#[doc(hidden)]
pub struct CompiledLookAt {
    /// The bone that turns.
    pub bone: u16,
    /// The bone the target follows ([`NO_TARGET_BONE`]: none).
    pub target_bone: u16,
    /// The bones that share the turn and their shares, root-most first (the first `links`).
    pub chain: [(u16, f32); MAX_LOOK_LINKS],
    /// How many of `chain` are used.
    pub links: u8,
    /// The target's x, y, z (model space).
    pub target: [FloatRef; 3],
    /// The weight.
    pub weight: FloatRef,
    /// The aiming axis (bone space), unit length.
    pub forward: Vec3,
    /// The up axis (bone space), unit length.
    pub up: Vec3,
    /// The aim's origin (bone space).
    pub offset: Vec3,
    /// Yaw and pitch limits.
    pub limits: crate::ik::AimLimits,
}

/// A compiled FootPlant node: its bones resolved (each leg a chain below the hips), its plane
/// and weight as float operands, its axis normalized.
#[derive(Clone, Copy, Debug, PartialEq)]
#[doc(hidden)]
pub struct CompiledFootPlant {
    /// The hips.
    pub hips: u16,
    /// Left and right legs: hip, knee, ankle.
    pub legs: [[u16; 3]; 2],
    /// The plane's height at the model origin.
    pub height: FloatRef,
    /// The plane's slope along +Z, radians.
    pub slope: FloatRef,
    /// The weight.
    pub weight: FloatRef,
    /// The most a foot is lifted.
    pub max_lift: f32,
    /// The most a foot is lowered.
    pub max_drop: f32,
    /// The knees' bend axis, unit length.
    pub mid_axis: Vec3,
}

/// A compiled target that follows no bone (its point is in model space).
pub const NO_TARGET_BONE: u16 = u16::MAX;

/// A compiled TwoBoneIk node: its bones resolved (`start` an ancestor of `mid`, `mid` of `end`),
/// its target and weight as float operands, its axes normalized.
#[derive(Clone, Copy, Debug, PartialEq)]
#[doc(hidden)]
pub struct CompiledTwoBoneIk {
    /// The chain's bones.
    pub bones: [u16; 3],
    /// The bone the target follows ([`NO_TARGET_BONE`]: none).
    pub target_bone: u16,
    /// The target's x, y, z (model space).
    pub target: [FloatRef; 3],
    /// The weight.
    pub weight: FloatRef,
    /// The pole (model space).
    pub pole: Vec3,
    /// The mid joint's bend axis (its local space), unit length.
    pub mid_axis: Vec3,
    /// Where softening starts.
    pub soften: f32,
}

impl GraphProgram {
    /// The skeleton the program was compiled for.
    pub fn skeleton(&self) -> &str {
        &self.skeleton
    }

    /// Bones in that skeleton.
    pub fn bone_count(&self) -> usize {
        self.bone_count
    }

    /// The compiled state machines, in program order.
    pub fn machines(&self) -> &[CompiledMachine] {
        &self.machines
    }

    /// The parameters with their authored defaults (index = parameter index).
    pub fn parameters(&self) -> &[ParamDecl] {
        &self.parameters
    }

    /// The instructions, in execution order.
    #[doc(hidden)]
    pub fn instructions(&self) -> &[Instruction] {
        &self.instructions
    }

    /// Pose slots an instance needs.
    #[doc(hidden)]
    pub fn slot_count(&self) -> usize {
        self.slot_count
    }

    /// The slot holding the result after the last instruction.
    #[doc(hidden)]
    pub fn result_slot(&self) -> u16 {
        self.result
    }

    /// The Clip nodes' players.
    #[doc(hidden)]
    pub fn players(&self) -> &[ClipPlayer] {
        &self.players
    }

    /// The blend spaces.
    #[doc(hidden)]
    pub fn spaces(&self) -> &[CompiledSpace] {
        &self.spaces
    }

    /// All blend space members, grouped by space, each group sorted by position.
    #[doc(hidden)]
    pub fn members(&self) -> &[SpaceMember] {
        &self.members
    }

    /// Axis positions parallel to [`GraphProgram::members`].
    #[doc(hidden)]
    pub fn member_positions(&self) -> &[f32] {
        &self.member_positions
    }

    /// Plane positions parallel to [`GraphProgram::members`] (a 1D member's is `(position, 0)`).
    #[doc(hidden)]
    pub fn member_points(&self) -> &[(f32, f32)] {
        &self.member_points
    }

    /// The Delaunay triangles of every 2D space (see [`CompiledSpace::triangles`]).
    #[doc(hidden)]
    pub fn triangles(&self) -> &[[usize; 3]] {
        &self.triangles
    }

    /// The pose nodes that feed the Output, in topological order (parallel to the flow table).
    #[doc(hidden)]
    pub fn flow_nodes(&self) -> &[NodeId] {
        &self.flow_nodes
    }

    /// The flow table (how weights, marker speaking and rates pass to inputs).
    #[doc(hidden)]
    pub fn flow(&self) -> &[Flow] {
        &self.flow
    }

    /// The compiled adjust entries of all Adjust nodes, in graph order.
    #[doc(hidden)]
    pub fn adjust_entries(&self) -> &[CompiledAdjust] {
        &self.adjust_entries
    }

    /// Index of parameter `name`.
    pub fn parameter_index(&self, name: &str) -> Option<usize> {
        self.parameters.iter().position(|p| p.name == name)
    }

    /// The parameters a target binding of parameter name `vector` sets (the one rule `marrow
    /// check` and the World apply): the vector parameter of that name, else the three float
    /// parameters `floats` (`{vector}_x`, `_y`, `_z`), else `None`.
    pub fn target_slots(&self, vector: &str, floats: &[String; 3]) -> Option<TargetSlots> {
        let of_kind = |name: &str, want: ParamValue| {
            self.parameter_index(name).filter(|&i| {
                std::mem::discriminant(&self.parameters[i].default) == std::mem::discriminant(&want)
            })
        };
        if let Some(i) = of_kind(vector, ParamValue::Vec3(Vec3::ZERO)) {
            return Some(TargetSlots::Vector(i));
        }
        let [x, y, z] = floats.each_ref().map(|n| of_kind(n, ParamValue::Float(0.0)));
        Some(TargetSlots::Floats([x?, y?, z?]))
    }
}

/// Where a target binding's point goes in a program's parameters
/// ([`GraphProgram::target_slots`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetSlots {
    /// The vector parameter at this index takes the point whole.
    Vector(usize),
    /// The float parameters at these indices take its x, y and z.
    Floats([usize; 3]),
}

/// Checks the graph's structure only (no skeleton or clips): Output count, duplicate ids and
/// parameters, connections, cycles. Returns every error found and, when there is no cycle, the
/// nodes (indices into `graph.nodes`) in topological order.
pub fn validate_structure(graph: &AnimGraph) -> (Vec<GraphError>, Option<Vec<usize>>) {
    let a = analyze(graph);
    (a.errors, a.order)
}

/// An input pin, typed (files and the model name pins by string; the compiler by this).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Pin {
    Pose,
    A,
    B,
    Weight,
    Position,
    Base,
    Layer,
    Reference,
    Scale,
    X,
    Y,
    Z,
    Height,
    Slope,
    Target,
}

impl Pin {
    /// The pin named `name` on some kind (every name [`NodeKind::inputs`] uses parses).
    fn parse(name: &str) -> Option<Pin> {
        Some(match name {
            "pose" => Pin::Pose,
            "a" => Pin::A,
            "b" => Pin::B,
            "weight" => Pin::Weight,
            "position" => Pin::Position,
            "base" => Pin::Base,
            "layer" => Pin::Layer,
            "reference" => Pin::Reference,
            "scale" => Pin::Scale,
            "x" => Pin::X,
            "y" => Pin::Y,
            "z" => Pin::Z,
            "height" => Pin::Height,
            "slope" => Pin::Slope,
            "target" => Pin::Target,
            _ => return None,
        })
    }

    /// The pin's name (the inverse of [`Pin::parse`]).
    fn name(self) -> &'static str {
        match self {
            Pin::Pose => "pose",
            Pin::A => "a",
            Pin::B => "b",
            Pin::Weight => "weight",
            Pin::Position => "position",
            Pin::Base => "base",
            Pin::Layer => "layer",
            Pin::Reference => "reference",
            Pin::Scale => "scale",
            Pin::X => "x",
            Pin::Y => "y",
            Pin::Z => "z",
            Pin::Height => "height",
            Pin::Slope => "slope",
            Pin::Target => "target",
        }
    }

    /// The pins of a kind, in display order.
    fn of(kind: &NodeKind) -> impl Iterator<Item = (Pin, PinType)> + '_ {
        kind.inputs().iter().filter_map(|p| Some((Pin::parse(p.name)?, p.ty)))
    }
}

/// The accepted wiring of a graph: node index by id, and the node feeding each input pin
/// (only connections whose pin exists, whose types match and that are not doubled).
#[derive(Debug, Default)]
struct Wiring {
    index: HashMap<NodeId, usize>,
    inputs: HashMap<(usize, Pin), usize>,
}

impl Wiring {
    /// The node (index) feeding node `i`'s pin `pin`.
    fn input(&self, i: usize, pin: Pin) -> Option<usize> {
        self.inputs.get(&(i, pin)).copied()
    }
}

/// What the structural pass found: every error, the topological order when acyclic, the wiring.
struct Analysis {
    errors: Vec<GraphError>,
    order: Option<Vec<usize>>,
    wiring: Wiring,
}

/// The structural pass (see [`validate_structure`]), keeping the index and wiring it builds for
/// the compiler.
fn analyze(graph: &AnimGraph) -> Analysis {
    let mut errors = Vec::new();
    let mut wiring = Wiring::default();
    for (i, n) in graph.nodes.iter().enumerate() {
        if let std::collections::hash_map::Entry::Vacant(slot) = wiring.index.entry(n.id) {
            slot.insert(i);
        } else {
            errors.push(GraphError::DuplicateNodeId { node: n.id, title: n.kind.name() });
        }
    }
    let index = std::mem::take(&mut wiring.index);
    let index_of = |id: NodeId| index.get(&id).copied();
    for (i, p) in graph.parameters.iter().enumerate() {
        if graph.parameters[..i].iter().any(|q| q.name == p.name) {
            errors.push(GraphError::DuplicateParameter { name: p.name.clone() });
        }
        if !p.default.is_finite() {
            errors.push(GraphError::BadDefault { name: p.name.clone(), value: p.default.as_f32() });
        }
    }
    let mut first_output: Option<NodeId> = None;
    for n in &graph.nodes {
        if matches!(n.kind, NodeKind::Output) {
            match first_output {
                None => first_output = Some(n.id),
                Some(first) => {
                    errors.push(GraphError::ExtraOutput { node: n.id, title: n.kind.name(), first })
                }
            }
        }
    }
    if first_output.is_none() {
        errors.push(GraphError::NoOutput);
    }
    for n in &graph.nodes {
        if let NodeKind::Unknown { kind, .. } = &n.kind {
            errors.push(GraphError::UnknownKind { node: n.id, kind: kind.clone() });
        }
    }
    // Connections: endpoints, pins, types, doubles. Only good connections form edges.
    let mut inputs: Vec<Vec<usize>> = vec![Vec::new(); graph.nodes.len()];
    let mut seen: std::collections::HashSet<(NodeId, &str)> =
        std::collections::HashSet::with_capacity(graph.connections.len());
    for c in &graph.connections {
        let (Some(fi), Some(ti)) = (index_of(c.from), index_of(c.to)) else {
            let (node, missing) = match index_of(c.to) {
                Some(_) => (c.to, c.from),
                None => (c.from, c.to),
            };
            let title = index_of(node).map_or("?", |i| graph.nodes[i].kind.name());
            errors.push(GraphError::DanglingConnection { node, title, pin: c.pin.clone(), missing });
            continue;
        };
        let to = &graph.nodes[ti];
        let unknown = |k: &NodeKind| matches!(k, NodeKind::Unknown { .. });
        if unknown(&to.kind) || unknown(&graph.nodes[fi].kind) {
            continue; // kept as written; the unknown node's own error covers it
        }
        let title = to.kind.name();
        let Some(expected) = to.kind.input_type(&c.pin) else {
            errors.push(GraphError::UnknownPin { node: c.to, title, pin: c.pin.clone() });
            continue;
        };
        let found = graph.output_type(&graph.nodes[fi].kind);
        if found != Some(expected) {
            errors.push(GraphError::PinTypeMismatch {
                node: c.to,
                title,
                pin: c.pin.clone(),
                expected,
                from: c.from,
                found,
            });
            continue;
        }
        if seen.contains(&(c.to, c.pin.as_str())) {
            errors.push(GraphError::DuplicateInput { node: c.to, title, pin: c.pin.clone() });
            continue;
        }
        seen.insert((c.to, c.pin.as_str()));
        inputs[ti].push(fi);
        if let Some(pin) = Pin::parse(&c.pin) {
            wiring.inputs.insert((ti, pin), fi);
        }
    }
    wiring.index = index;
    // Kahn's algorithm, smallest id first among the ready nodes.
    let n = graph.nodes.len();
    let mut outputs: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut pending: Vec<usize> = vec![0; n];
    for (ti, ins) in inputs.iter().enumerate() {
        for &fi in ins {
            outputs[fi].push(ti);
            pending[ti] += 1;
        }
    }
    let mut ready: std::collections::BTreeSet<(NodeId, usize)> =
        (0..n).filter(|&i| pending[i] == 0).map(|i| (graph.nodes[i].id, i)).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(first) = ready.pop_first() {
        let i = first.1;
        order.push(i);
        for &o in &outputs[i] {
            pending[o] -= 1;
            if pending[o] == 0 {
                ready.insert((graph.nodes[o].id, o));
            }
        }
    }
    if order.len() == n {
        return Analysis { errors, order: Some(order), wiring };
    }
    report_cycles(graph, &inputs, &pending, &mut errors);
    Analysis { errors, order: None, wiring }
}

/// Names each cycle once (from its lowest id, in flow order), walking inputs among the nodes
/// Kahn's pass could not order (`pending > 0`) until a node repeats.
fn report_cycles(graph: &AnimGraph, inputs: &[Vec<usize>], pending: &[usize], errors: &mut Vec<GraphError>) {
    let n = graph.nodes.len();
    let mut reported = vec![false; n];
    let mut left: Vec<usize> = (0..n).filter(|&i| pending[i] > 0).collect();
    left.sort_by_key(|&i| graph.nodes[i].id);
    // Where each node sits on the current walk (so finding the cycle's start is O(1)).
    let mut on_path: Vec<Option<usize>> = vec![None; n];
    for &start in &left {
        if reported[start] {
            continue;
        }
        let mut path: Vec<usize> = vec![start];
        on_path[start] = Some(0);
        let mut at = start;
        let cycle = loop {
            let Some(&next) = inputs[at].iter().find(|&&f| pending[f] > 0) else { break None };
            if let Some(p) = on_path[next] {
                break Some(path[p..].to_vec());
            }
            if reported[next] {
                break None;
            }
            on_path[next] = Some(path.len());
            path.push(next);
            at = next;
        };
        for &p in &path {
            reported[p] = true;
            on_path[p] = None;
        }
        if let Some(mut cycle) = cycle {
            // Walked against the flow: reverse into flow order, start at the lowest id.
            cycle.reverse();
            let lo = (0..cycle.len()).min_by_key(|&k| graph.nodes[cycle[k]].id).unwrap_or(0);
            cycle.rotate_left(lo);
            let ids: Vec<NodeId> = cycle.iter().map(|&k| graph.nodes[k].id).collect();
            let first = &graph.nodes[cycle[0]];
            errors.push(GraphError::Cycle { node: first.id, title: first.kind.name(), cycle: ids });
        }
    }
}

/// Validates `graph` for `skeleton` with clips from `clips` and compiles it. Returns every error
/// found when it does not compile.
pub fn compile(
    graph: &AnimGraph,
    skeleton: &Skeleton,
    clips: &dyn ClipSource,
) -> Result<GraphProgram, Vec<GraphError>> {
    compile_in(graph, "", skeleton, clips, &NoGraphs)
}

/// [`compile`] for the graph at asset path `path`, with the graphs its state machines' states
/// play taken from `graphs` (compiled once each, a ring of graphs refused on the state that
/// closes it).
pub fn compile_in(
    graph: &AnimGraph,
    path: &str,
    skeleton: &Skeleton,
    clips: &dyn ClipSource,
    graphs: &dyn GraphSource,
) -> Result<GraphProgram, Vec<GraphError>> {
    let nest = std::cell::RefCell::new(Nest { graphs, stack: vec![path.to_owned()], done: HashMap::new() });
    compile_nested(graph, skeleton, clips, &nest)
}

/// What nested compilation shares: the graph source, the graphs being compiled (outermost
/// first) and the programs already compiled, by path.
struct Nest<'a> {
    graphs: &'a dyn GraphSource,
    stack: Vec<String>,
    done: HashMap<String, Result<Arc<GraphProgram>, String>>,
}

fn compile_nested(
    graph: &AnimGraph,
    skeleton: &Skeleton,
    clips: &dyn ClipSource,
    nest: &std::cell::RefCell<Nest<'_>>,
) -> Result<GraphProgram, Vec<GraphError>> {
    let Analysis { mut errors, order, wiring } = analyze(graph);
    if skeleton.bone_count() > u16::MAX as usize {
        errors.push(GraphError::TooManyBones {
            skeleton: skeleton.name.clone(),
            bones: skeleton.bone_count(),
            max: u16::MAX as usize,
        });
    }
    let output = graph.nodes.iter().position(|n| matches!(n.kind, NodeKind::Output));
    let reach = reachable(graph, &wiring, output);
    let checker = Checker { graph, skeleton, clips, nest };
    let resolved = checker.check(&reach, &mut errors);
    let (Some(_), Some(output), true) = (order, output, errors.is_empty()) else {
        return Err(errors);
    };
    let order = emission_order(graph, &wiring, output);
    Ok(Emitter::new(graph, skeleton, &wiring, resolved).run(&order, output))
}

/// The nodes the Output reads, directly or not.
fn reachable(graph: &AnimGraph, wiring: &Wiring, output: Option<usize>) -> Vec<bool> {
    let mut reach = vec![false; graph.nodes.len()];
    let mut stack: Vec<usize> = output.into_iter().collect();
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut reach[i], true) {
            continue;
        }
        stack.extend(Pin::of(&graph.nodes[i].kind).filter_map(|(pin, _)| wiring.input(i, pin)));
    }
    reach
}

/// Emission order: depth-first post-order from the Output, inputs in pin order. It is a
/// topological order of the reachable nodes (the graph is acyclic here) that finishes each
/// input's subtree before starting the next, which keeps few slots live.
fn emission_order(graph: &AnimGraph, wiring: &Wiring, output: usize) -> Vec<usize> {
    let n = graph.nodes.len();
    let mut order = Vec::with_capacity(n);
    let mut done = vec![false; n];
    let mut stack: Vec<(usize, usize)> = vec![(output, 0)];
    while let Some((i, k)) = stack.pop() {
        let pins: Vec<Pin> = Pin::of(&graph.nodes[i].kind).map(|(p, _)| p).collect();
        if let Some(&pin) = pins.get(k) {
            stack.push((i, k + 1));
            if let Some(f) = wiring.input(i, pin)
                && !done[f]
            {
                stack.push((f, 0));
            }
        } else if !done[i] {
            done[i] = true;
            order.push(i);
        }
    }
    order
}

/// The clips a node plays, resolved by the checks: a Clip node's clip, a blend space's clip per
/// sample (in sample order; `None` where it failed).
struct Resolved {
    clips: Vec<Option<Arc<Clip>>>,
    space_clips: Vec<Vec<Option<Arc<Clip>>>>,
    machines: Vec<Option<CompiledMachine>>,
}

/// The node-local checks of the nodes the Output reads: settings, clips, bones, parameters.
struct Checker<'a, 'n> {
    graph: &'a AnimGraph,
    skeleton: &'a Skeleton,
    clips: &'a dyn ClipSource,
    nest: &'a std::cell::RefCell<Nest<'n>>,
}

impl Checker<'_, '_> {
    fn param_known(&self, name: &str) -> bool {
        self.graph.parameters.iter().any(|p| p.name == name)
    }

    /// Resolves the clip at `path` for the skeleton, or names why it cannot play.
    fn resolve(
        &self,
        errors: &mut Vec<GraphError>,
        id: NodeId,
        title: &'static str,
        path: &str,
    ) -> Option<Arc<Clip>> {
        let Some(clip) = self.clips.clip(path) else {
            errors.push(GraphError::MissingClip { node: id, title, path: path.to_owned() });
            return None;
        };
        match find_clip_fault(&clip, self.skeleton) {
            None => {
                // Compiled here, once per clip, so evaluation never builds it in a frame.
                clip.compiled();
                Some(clip)
            }
            Some(ClipFault::OtherRig { clip_skeleton, skeleton, .. }) => {
                errors.push(GraphError::OtherRig {
                    node: id,
                    title,
                    path: path.to_owned(),
                    clip_skeleton,
                    skeleton,
                });
                None
            }
            Some(fault) => {
                errors.push(GraphError::BadClip { node: id, title, path: path.to_owned(), fault });
                None
            }
        }
    }

    fn unknown_bone(&self, errors: &mut Vec<GraphError>, id: NodeId, title: &'static str, bone: &str) {
        if self.skeleton.index_of(bone).is_none() {
            errors.push(GraphError::UnknownBone {
                node: id,
                title,
                bone: bone.to_owned(),
                skeleton: self.skeleton.name.clone(),
            });
        }
    }

    /// Checks every node in `reach`, resolving the clips they play.
    fn check(&self, reach: &[bool], errors: &mut Vec<GraphError>) -> Resolved {
        let n = self.graph.nodes.len();
        let mut resolved = Resolved {
            clips: vec![None; n],
            space_clips: vec![Vec::new(); n],
            machines: (0..n).map(|_| None).collect(),
        };
        // Every pin some connection feeds, faulty or not.
        let fed: std::collections::HashSet<(NodeId, &str)> =
            self.graph.connections.iter().map(|c| (c.to, c.pin.as_str())).collect();
        for i in (0..n).filter(|&i| reach[i]) {
            let node = &self.graph.nodes[i];
            for input in node.kind.inputs() {
                // A pin fed by a faulty connection is reported on that connection, not here.
                let wired = fed.contains(&(node.id, input.name));
                if input.ty == PinType::Pose && !wired {
                    errors.push(GraphError::MissingInput {
                        node: node.id,
                        title: node.kind.name(),
                        pin: input.name.to_owned(),
                    });
                }
            }
            self.check_node(node, i, errors, &mut resolved);
        }
        resolved
    }

    /// Checks a TwoBoneIk node: finite target and weight, known bones making a chain, the pole,
    /// the bend axis and the soften ratio.
    fn check_two_bone_ik(
        &self,
        kind: &NodeKind,
        id: NodeId,
        title: &'static str,
        errors: &mut Vec<GraphError>,
    ) {
        let NodeKind::TwoBoneIk { start, mid, end, x, y, z, target_bone, pole, mid_axis, soften, weight } =
            kind
        else {
            return;
        };
        let mut bads = Vec::new();
        for (what, v) in [("x", *x), ("y", *y), ("z", *z), ("weight", *weight)] {
            if !v.is_finite() {
                bads.push(format!("{what} {v} is not finite"));
            }
        }
        let index = |b: &str| self.skeleton.index_of(b);
        if let (Some(s), Some(m), Some(e)) = (index(start), index(mid), index(end))
            && (!below(self.skeleton, m, s) || !below(self.skeleton, e, m))
        {
            bads.push(format!(
                "{start:?}, {mid:?}, {end:?} are not a chain (each bone below the one before)"
            ));
        }
        if !pole.is_finite() {
            bads.push("the pole must be finite".into());
        }
        if mid_axis.try_normalize().is_none() {
            bads.push("the mid axis must be finite and non-zero".into());
        }
        if !(soften.is_finite() && (0.0..=1.0).contains(soften)) {
            bads.push(format!("soften {soften} is not in [0, 1]"));
        }
        errors.extend(bads.into_iter().map(|what| GraphError::BadValue { node: id, title, what }));
        if !target_bone.is_empty() {
            self.unknown_bone(errors, id, title, target_bone);
        }
        for bone in [start, mid, end] {
            self.unknown_bone(errors, id, title, bone);
        }
    }

    /// Checks a LookAt node's chain: at most [`MAX_LOOK_LINKS`] known bones, each above the next
    /// and the last above the looking bone, shares in `[0, 1]`.
    fn check_look_chain(
        &self,
        bone: &str,
        chain: &[LookLink],
        id: NodeId,
        title: &'static str,
        errors: &mut Vec<GraphError>,
    ) {
        let mut bad = |what: String| errors.push(GraphError::BadValue { node: id, title, what });
        if chain.len() > MAX_LOOK_LINKS {
            bad(format!("{} bones share the turn; at most {MAX_LOOK_LINKS} can", chain.len()));
        }
        for l in chain {
            if !(l.share.is_finite() && (0.0..=1.0).contains(&l.share)) {
                bad(format!("bone {:?}: its share {} is not in [0, 1]", l.bone, l.share));
            }
        }
        let sk = self.skeleton;
        let mut below_it: Option<usize> = sk.index_of(bone);
        for l in chain.iter().rev() {
            let Some(b) = sk.index_of(&l.bone) else { continue };
            if let Some(c) = below_it
                && !below(sk, c, b)
            {
                bad(format!(
                    "bone {:?} is not above {:?} (the chain runs root-most first to the looking bone)",
                    l.bone, sk.bone_names[c]
                ));
            }
            below_it = Some(b);
        }
        for l in chain {
            self.unknown_bone(errors, id, title, &l.bone);
        }
    }

    /// Checks a FootPlant node: finite plane and weight, a slope short of vertical, limits, the
    /// knee axis, known bones, each leg a chain below the hips.
    fn check_foot_plant(
        &self,
        kind: &NodeKind,
        id: NodeId,
        title: &'static str,
        errors: &mut Vec<GraphError>,
    ) {
        let NodeKind::FootPlant { hips, left, right, height, slope, max_lift, max_drop, mid_axis, weight } =
            kind
        else {
            return;
        };
        let mut bad = |what: String| errors.push(GraphError::BadValue { node: id, title, what });
        for (what, v) in [("height", *height), ("slope", *slope), ("weight", *weight)] {
            if !v.is_finite() {
                bad(format!("{what} {v} is not finite"));
            }
        }
        if !(slope.abs() < 1.4) {
            bad(format!("slope {slope} is not within 1.4 rad of level"));
        }
        for (what, v) in [("max_lift", *max_lift), ("max_drop", *max_drop)] {
            if !(v.is_finite() && v >= 0.0) {
                bad(format!("{what} {v} is not a finite, non-negative distance"));
            }
        }
        if mid_axis.try_normalize().is_none() {
            bad("the knees' bend axis must be finite and non-zero".into());
        }
        let sk = self.skeleton;
        let chain = |leg: &[String; 3]| leg.iter().map(|b| sk.index_of(b)).collect::<Option<Vec<_>>>();
        for (side, leg) in [("left", left), ("right", right)] {
            let (Some(h), Some(c)) = (sk.index_of(hips), chain(leg)) else { continue };
            if !below(sk, c[1], c[0]) || !below(sk, c[2], c[1]) {
                bad(format!("the {side} leg {leg:?} is not a chain (each bone below the one before)"));
            } else if !sk.is_in_subtree(h, c[0]) {
                bad(format!("the {side} leg's hip {:?} is not below the hips {hips:?}", leg[0]));
            }
        }
        self.unknown_bone(errors, id, title, hips);
        for bone in left.iter().chain(right) {
            self.unknown_bone(errors, id, title, bone);
        }
    }

    fn check_node(
        &self,
        node: &super::model::Node,
        i: usize,
        errors: &mut Vec<GraphError>,
        resolved: &mut Resolved,
    ) {
        let (id, title) = (node.id, node.kind.name());
        let bad = |errors: &mut Vec<GraphError>, what: String| {
            errors.push(GraphError::BadValue { node: id, title, what })
        };
        let finite = |errors: &mut Vec<GraphError>, what: &str, v: f32| {
            if !v.is_finite() {
                bad(errors, format!("{what} {v} is not finite"));
            }
        };
        match &node.kind {
            NodeKind::Clip { clip, speed, .. } => {
                finite(errors, "speed", *speed);
                resolved.clips[i] = self.resolve(errors, id, title, clip);
            }
            NodeKind::Parameter { name } => {
                if !self.param_known(name) {
                    errors.push(GraphError::UnknownParameter { node: id, title, parameter: name.clone() });
                }
            }
            NodeKind::Blend2 { weight } | NodeKind::Additive { weight } => finite(errors, "weight", *weight),
            NodeKind::BlendSpace1D { samples, position, .. } => {
                if samples.is_empty() {
                    bad(errors, "a blend space needs at least one clip".to_owned());
                }
                finite(errors, "position", *position);
                for s in samples {
                    if !s.position.is_finite() || !s.speed.is_finite() {
                        bad(errors, format!("clip {:?}: position and speed must be finite", s.clip));
                    }
                    resolved.space_clips[i].push(self.resolve(errors, id, title, &s.clip));
                }
            }
            NodeKind::BlendSpace2D { samples, x, y, .. } => {
                finite(errors, "x", *x);
                finite(errors, "y", *y);
                let points: Vec<(f32, f32)> = samples.iter().map(|s| s.position).collect();
                if let Err(e) = super::plane::triangulate(&points) {
                    bad(errors, e.to_string());
                }
                for s in samples {
                    if !s.speed.is_finite() {
                        bad(errors, format!("clip {:?}: speed must be finite", s.clip));
                    }
                    resolved.space_clips[i].push(self.resolve(errors, id, title, &s.clip));
                }
            }
            NodeKind::Mask { weight, subtrees } => {
                finite(errors, "weight", *weight);
                for s in subtrees {
                    self.unknown_bone(errors, id, title, &s.bone);
                    if !(s.weight.is_finite() && s.falloff.is_finite() && s.falloff >= 0.0) {
                        bad(errors, format!("subtree {:?}: weight and falloff must be finite", s.bone));
                    }
                }
            }
            NodeKind::Adjust { entries } => {
                for e in entries {
                    self.unknown_bone(errors, id, title, &e.bone);
                    match &e.amount {
                        Drive::Parameter(p) if !self.param_known(p) => errors
                            .push(GraphError::UnknownParameter { node: id, title, parameter: p.clone() }),
                        Drive::Parameter(p)
                            if self
                                .graph
                                .parameter(p)
                                .is_some_and(|d| d.default.pin_type() == PinType::Vec3) =>
                        {
                            bad(
                                errors,
                                format!(
                                    "bone {:?}: amount reads {p:?}, a vec3, where a float is wanted",
                                    e.bone
                                ),
                            )
                        }
                        Drive::Constant(c) if !c.is_finite() => {
                            bad(errors, format!("bone {:?}: amount {c} is not finite", e.bone))
                        }
                        _ => {}
                    }
                    let axis = match e.op {
                        AdjustOp::Rotate { axis } | AdjustOp::Orient { axis } => Some(axis),
                        AdjustOp::Offset { direction } => direction.is_finite().then_some(Vec3::X),
                        AdjustOp::Scale => Some(Vec3::X),
                    };
                    if axis.and_then(Vec3::try_normalize).is_none() {
                        bad(errors, format!("bone {:?}: the axis must be finite and non-zero", e.bone));
                    }
                }
            }
            NodeKind::TimeScale { scale } => finite(errors, "scale", *scale),
            kind @ NodeKind::TwoBoneIk { .. } => self.check_two_bone_ik(kind, id, title, errors),
            kind @ NodeKind::FootPlant { .. } => self.check_foot_plant(kind, id, title, errors),
            NodeKind::LookAt {
                bone,
                x,
                y,
                z,
                target_bone,
                forward,
                up,
                offset,
                yaw,
                pitch,
                chain,
                weight,
            } => {
                for (what, v) in [("x", *x), ("y", *y), ("z", *z), ("weight", *weight)] {
                    finite(errors, what, v);
                }
                if !target_bone.is_empty() {
                    self.unknown_bone(errors, id, title, target_bone);
                }
                self.unknown_bone(errors, id, title, bone);
                self.check_look_chain(bone, chain, id, title, errors);
                for (what, v) in [("forward", *forward), ("up", *up)] {
                    if v.try_normalize().is_none() {
                        bad(errors, format!("the {what} axis must be finite and non-zero"));
                    }
                }
                if !offset.is_finite() {
                    bad(errors, "the offset must be finite".into());
                }
                for (what, v) in [("yaw", *yaw), ("pitch", *pitch)] {
                    if !(v.is_finite() && (0.0..=std::f32::consts::PI).contains(&v)) {
                        bad(errors, format!("the {what} limit {v} is not in [0, PI]"));
                    }
                }
            }
            NodeKind::StateMachine { machine } => {
                resolved.machines[i] = self.machine(id, machine, errors);
            }
            NodeKind::Output | NodeKind::Unknown { .. } => {}
        }
    }

    /// Checks and compiles a StateMachine node's machine, compiling each state's source.
    fn machine(
        &self,
        id: NodeId,
        machine: &super::machine::StateMachine,
        errors: &mut Vec<GraphError>,
    ) -> Option<CompiledMachine> {
        let mut cycles = Vec::new();
        let out = super::machine::compile::compile_machine(
            id,
            machine,
            &self.graph.parameters,
            self.skeleton,
            |s| self.state_program(id, s, &mut cycles),
            errors,
        );
        errors.extend(cycles);
        out
    }

    /// The program of a state's source: a one-node graph for a clip or blend space, the other
    /// graph's (compiled once per top-level compile) for a graph. A ring of graphs is pushed to
    /// `cycles`; other faults come back as one message for the state.
    fn state_program(
        &self,
        id: NodeId,
        s: &super::machine::State,
        cycles: &mut Vec<GraphError>,
    ) -> Result<Arc<GraphProgram>, String> {
        let messages = |errors: Vec<GraphError>| {
            let n = errors.len();
            let first = errors.first().map(ToString::to_string).unwrap_or_default();
            if n > 1 { format!("{first} (and {} more)", n - 1) } else { first }
        };
        let super::machine::StateSource::Graph { graph: path } = &s.source else {
            let g =
                super::machine::compile::source_graph(&s.source, &self.graph.parameters).unwrap_or_default();
            return compile_nested(&g, self.skeleton, self.clips, self.nest).map(Arc::new).map_err(messages);
        };
        let (on_stack, known, graph) = {
            let nest = self.nest.borrow();
            let at = nest.stack.iter().position(|p| p == path);
            (at.map(|k| nest.stack[k..].to_vec()), nest.done.get(path).cloned(), nest.graphs.graph(path))
        };
        // A ring is reported on this state, found here or further in.
        let ring = |ring: Vec<String>| GraphError::GraphCycle {
            node: id,
            title: "StateMachine",
            state: s.name.clone(),
            graph: path.clone(),
            path: ring,
        };
        if let Some(mut found) = on_stack {
            found.push(path.clone());
            cycles.push(ring(found));
            return Err(format!("graph {path:?} leads back to itself"));
        }
        if let Some(done) = known {
            return done;
        }
        let Some(graph) = graph else { return Err(format!("no graph at {path:?}")) };
        self.nest.borrow_mut().stack.push(path.clone());
        let result = compile_nested(&graph, self.skeleton, self.clips, self.nest);
        self.nest.borrow_mut().stack.pop();
        let result = match result {
            Ok(p) => Ok(Arc::new(p)),
            Err(errors) => {
                // A ring further in is reported once, by the state that closes it.
                let (rings, other): (Vec<_>, Vec<_>) =
                    errors.into_iter().partition(|e| matches!(e, GraphError::GraphCycle { .. }));
                for inner in rings {
                    if let GraphError::GraphCycle { path: found, .. } = inner {
                        cycles.push(ring(found));
                    }
                }
                Err(if other.is_empty() {
                    format!("graph {path:?} plays a ring of graphs")
                } else {
                    format!("graph {path:?}: {}", messages(other))
                })
            }
        };
        self.nest.borrow_mut().done.insert(path.clone(), result.clone());
        result
    }
}

/// Pose slots handed out like registers: the lowest free one first (so numbers stay small and
/// deterministic), a new one when none is free.
#[derive(Debug, Default)]
struct Slots {
    free: Vec<u16>,
    count: u16,
}

impl Slots {
    fn take(&mut self) -> u16 {
        match self.free.iter().enumerate().min_by_key(|(_, s)| **s).map(|(k, _)| k) {
            Some(k) => self.free.swap_remove(k),
            None => {
                self.count += 1;
                self.count - 1
            }
        }
    }

    fn release(&mut self, slot: u16) {
        self.free.push(slot);
    }
}

/// Emits a checked graph's program node by node (see the module docs for the slot rules).
struct Emitter<'a> {
    graph: &'a AnimGraph,
    skeleton: &'a Skeleton,
    wiring: &'a Wiring,
    resolved: Resolved,
    /// Per node: its index in the flow table (pose nodes the program runs).
    flow_index: Vec<u16>,
    /// Per node: the node whose slot holds its value (Adjust and TimeScale alias their input).
    root: Vec<usize>,
    /// Per value root: readers not yet emitted.
    uses: Vec<u32>,
    /// Per node: its slot.
    slot: Vec<u16>,
    slots: Slots,
    program: GraphProgram,
}

impl<'a> Emitter<'a> {
    fn new(graph: &'a AnimGraph, skeleton: &'a Skeleton, wiring: &'a Wiring, resolved: Resolved) -> Self {
        let n = graph.nodes.len();
        Emitter {
            graph,
            skeleton,
            wiring,
            resolved,
            flow_index: vec![u16::MAX; n],
            root: (0..n).collect(),
            uses: vec![0; n],
            slot: vec![u16::MAX; n],
            slots: Slots::default(),
            program: GraphProgram {
                skeleton: skeleton.name.clone(),
                bone_count: skeleton.bone_count(),
                parameters: graph.parameters.clone(),
                instructions: Vec::new(),
                slot_count: 0,
                result: 0,
                players: Vec::new(),
                spaces: Vec::new(),
                members: Vec::new(),
                member_positions: Vec::new(),
                member_points: Vec::new(),
                triangles: Vec::new(),
                masks: Vec::new(),
                flow: Vec::new(),
                flow_nodes: Vec::new(),
                root: 0,
                adjust_entries: Vec::new(),
                iks: Vec::new(),
                aims: Vec::new(),
                plants: Vec::new(),
                machines: Vec::new(),
                composes: false,
            },
        }
    }

    /// The node feeding `i`'s `pin` (the checks made sure a pose pin is fed; an unfed one reads
    /// the node itself, which cannot happen here).
    fn input(&self, i: usize, pin: Pin) -> usize {
        self.wiring.input(i, pin).unwrap_or(i)
    }

    /// The slot holding the value fed to `i`'s `pin`.
    fn slot_of(&self, i: usize, pin: Pin) -> u16 {
        self.slot[self.root[self.input(i, pin)]]
    }

    /// The flow index of the node feeding `i`'s `pin`.
    fn flow_of(&self, i: usize, pin: Pin) -> u16 {
        self.flow_index[self.input(i, pin)]
    }

    fn param(&self, name: &str) -> u16 {
        self.graph.parameters.iter().position(|p| p.name == name).unwrap_or(0) as u16
    }

    /// A float operand: the Parameter node wired to `pin`, else the node's authored constant.
    fn float_of(&self, i: usize, pin: Pin) -> FloatRef {
        match self.wiring.input(i, pin).map(|f| &self.graph.nodes[f].kind) {
            Some(NodeKind::Parameter { name }) => FloatRef::Param(self.param(name)),
            _ => FloatRef::Constant(self.graph.nodes[i].kind.constant(pin.name()).unwrap_or(0.0)),
        }
    }

    /// The compiled form of TwoBoneIk node `i` (`kind`): bones resolved, target and weight operands.
    fn two_bone_ik(&self, i: usize, kind: &NodeKind) -> CompiledTwoBoneIk {
        let bone = |b: &str| self.skeleton.index_of(b).unwrap_or(0) as u16;
        let (bones, target_bone, pole, mid_axis, soften) = match kind {
            NodeKind::TwoBoneIk { start, mid, end, target_bone, pole, mid_axis, soften, .. } => (
                [bone(start), bone(mid), bone(end)],
                self.target_bone(target_bone),
                *pole,
                *mid_axis,
                *soften,
            ),
            _ => ([0; 3], NO_TARGET_BONE, Vec3::Z, Vec3::X, 1.0),
        };
        CompiledTwoBoneIk {
            bones,
            target_bone,
            target: self.target_of(i),
            weight: self.float_of(i, Pin::Weight),
            pole,
            mid_axis: mid_axis.normalize_or(Vec3::X),
            soften,
        }
    }

    /// The compiled form of FootPlant node `i` (`kind`): bones resolved, plane and weight operands.
    fn foot_plant(&self, i: usize, kind: &NodeKind) -> CompiledFootPlant {
        let bone = |b: &str| self.skeleton.index_of(b).unwrap_or(0) as u16;
        let leg = |l: &[String; 3]| [bone(&l[0]), bone(&l[1]), bone(&l[2])];
        let (hips, legs, limits, axis) = match kind {
            NodeKind::FootPlant { hips, left, right, max_lift, max_drop, mid_axis, .. } => {
                (bone(hips), [leg(left), leg(right)], (*max_lift, *max_drop), *mid_axis)
            }
            _ => (0, [[0; 3]; 2], (0.0, 0.0), Vec3::X),
        };
        CompiledFootPlant {
            hips,
            legs,
            height: self.float_of(i, Pin::Height),
            slope: self.float_of(i, Pin::Slope),
            weight: self.float_of(i, Pin::Weight),
            max_lift: limits.0,
            max_drop: limits.1,
            mid_axis: axis.normalize_or(Vec3::X),
        }
    }

    /// The bone a target follows (`""`: [`NO_TARGET_BONE`]).
    fn target_bone(&self, name: &str) -> u16 {
        if name.is_empty() {
            NO_TARGET_BONE
        } else {
            self.skeleton.index_of(name).map_or(NO_TARGET_BONE, |b| b as u16)
        }
    }

    /// The target point's operands of a TwoBoneIk or LookAt node (its `x`, `y`, `z` pins).
    fn target_of(&self, i: usize) -> [FloatRef; 3] {
        // A vector parameter on `target` takes the place of x, y and z.
        if let Some(NodeKind::Parameter { name }) =
            self.wiring.input(i, Pin::Target).map(|f| &self.graph.nodes[f].kind)
        {
            let p = self.param(name);
            return [0, 1, 2].map(|k| FloatRef::ParamAxis(p, k));
        }
        [self.float_of(i, Pin::X), self.float_of(i, Pin::Y), self.float_of(i, Pin::Z)]
    }

    /// Runs the emission over `order` (see [`emission_order`]).
    fn run(mut self, order: &[usize], output: usize) -> GraphProgram {
        let is_pose = |kind: &NodeKind| kind.output() == Some(PinType::Pose);
        let aliases = |kind: &NodeKind| {
            matches!(
                kind,
                NodeKind::Adjust { .. }
                    | NodeKind::TimeScale { .. }
                    | NodeKind::TwoBoneIk { .. }
                    | NodeKind::LookAt { .. }
                    | NodeKind::FootPlant { .. }
            )
        };
        let flow: Vec<usize> =
            order.iter().copied().filter(|&i| is_pose(&self.graph.nodes[i].kind)).collect();
        for (k, &i) in flow.iter().enumerate() {
            self.flow_index[i] = k as u16;
            if aliases(&self.graph.nodes[i].kind) {
                self.root[i] = self.root[self.input(i, Pin::Pose)];
            }
        }
        for &i in &flow {
            if !aliases(&self.graph.nodes[i].kind) {
                for (pin, ty) in Pin::of(&self.graph.nodes[i].kind) {
                    if ty == PinType::Pose {
                        let r = self.root[self.input(i, pin)];
                        self.uses[r] += 1;
                    }
                }
            }
        }
        let result_root = self.root[self.input(output, Pin::Pose)];
        self.uses[result_root] += 1; // the Output reads it last; never freed
        self.program.flow_nodes = flow.iter().map(|&i| self.graph.nodes[i].id).collect();
        self.program.root = self.flow_of(output, Pin::Pose);
        for &i in &flow {
            self.emit(i);
        }
        self.program.slot_count = self.slots.count as usize;
        let p = &self.program;
        // A machine composes when one of its states' programs does.
        let states_compose = p.machines.iter().any(|m| m.states.iter().any(|s| s.program.composes));
        self.program.composes = states_compose
            || !(p.adjust_entries.is_empty() && p.iks.is_empty() && p.aims.is_empty() && p.plants.is_empty());
        self.program.result = self.slot[result_root];
        self.program
    }

    /// Emits node `i`: its flow entry and instruction, its slot, and the release of its inputs'.
    fn emit(&mut self, i: usize) {
        let graph = self.graph;
        let node = &graph.nodes[i];
        let (flow, ins) = match &node.kind {
            NodeKind::Clip { speed, looping, .. } => {
                let clip =
                    self.resolved.clips[i].clone().unwrap_or_else(|| Arc::new(Clip::new("", self.skeleton)));
                let player = self.program.players.len() as u16;
                self.program.players.push(ClipPlayer {
                    node: node.id,
                    duration: clip.duration(),
                    clip,
                    speed: *speed,
                    looping: *looping,
                });
                let dst = self.dst(i);
                (Flow::Clip { player }, Some(Instruction::Sample { player, dst }))
            }
            NodeKind::BlendSpace1D { samples, looping, .. } => {
                let space = self.space(i, samples, *looping);
                let dst = self.dst(i);
                // Two scratch slots for the neighbours, free again once the blend is written.
                let (a, b) = (self.slots.take(), self.slots.take());
                self.slots.release(a);
                self.slots.release(b);
                (Flow::Space { space }, Some(Instruction::BlendSpace { space, dst, a, b }))
            }
            NodeKind::BlendSpace2D { samples, looping, .. } => {
                let space = self.space_2d(i, samples, *looping);
                let dst = self.dst(i);
                // Three scratch slots for the corners, free again once the blend is written.
                let (a, b, c) = (self.slots.take(), self.slots.take(), self.slots.take());
                for s in [a, b, c] {
                    self.slots.release(s);
                }
                (Flow::Space { space }, Some(Instruction::BlendSpace2D { space, dst, a, b, c }))
            }
            NodeKind::Blend2 { .. } => {
                let weight = self.float_of(i, Pin::Weight);
                let (a, b) = (self.slot_of(i, Pin::A), self.slot_of(i, Pin::B));
                let dst = self.dst(i);
                let flow = Flow::Blend2 { a: self.flow_of(i, Pin::A), b: self.flow_of(i, Pin::B), weight };
                (flow, Some(Instruction::Blend { a, b, weight, dst }))
            }
            NodeKind::Additive { .. } => {
                let weight = self.float_of(i, Pin::Weight);
                let (base, layer) = (self.slot_of(i, Pin::Base), self.slot_of(i, Pin::Layer));
                let reference = self.slot_of(i, Pin::Reference);
                let dst = self.dst(i);
                let flow = Flow::Additive {
                    base: self.flow_of(i, Pin::Base),
                    layer: self.flow_of(i, Pin::Layer),
                    reference: self.flow_of(i, Pin::Reference),
                    weight,
                };
                (flow, Some(Instruction::Additive { base, layer, reference, weight, dst }))
            }
            NodeKind::Mask { subtrees, .. } => {
                let weight = self.float_of(i, Pin::Weight);
                let (mask, layer_max) = self.mask(subtrees);
                let (base, layer) = (self.slot_of(i, Pin::Base), self.slot_of(i, Pin::Layer));
                let dst = self.dst(i);
                let flow = Flow::Mask {
                    base: self.flow_of(i, Pin::Base),
                    layer: self.flow_of(i, Pin::Layer),
                    weight,
                    layer_max,
                };
                (flow, Some(Instruction::Mask { base, layer, mask, weight, dst }))
            }
            NodeKind::Adjust { entries } => {
                let first = self.program.adjust_entries.len() as u32;
                for e in entries {
                    let adjust = self.adjust(e);
                    self.program.adjust_entries.push(adjust);
                }
                self.slot[i] = self.slot[self.root[i]];
                (Flow::Adjust { input: self.flow_of(i, Pin::Pose), first, count: entries.len() as u32 }, None)
            }
            NodeKind::TimeScale { .. } => {
                self.slot[i] = self.slot[self.root[i]];
                (
                    Flow::TimeScale {
                        input: self.flow_of(i, Pin::Pose),
                        scale: self.float_of(i, Pin::Scale),
                    },
                    None,
                )
            }
            kind @ NodeKind::TwoBoneIk { .. } => {
                let ik = self.program.iks.len() as u16;
                let compiled = self.two_bone_ik(i, kind);
                self.program.iks.push(compiled);
                self.slot[i] = self.slot[self.root[i]];
                (Flow::TwoBoneIk { input: self.flow_of(i, Pin::Pose), ik }, None)
            }
            kind @ NodeKind::FootPlant { .. } => {
                let plant = self.program.plants.len() as u16;
                let compiled = self.foot_plant(i, kind);
                self.program.plants.push(compiled);
                self.slot[i] = self.slot[self.root[i]];
                (Flow::FootPlant { input: self.flow_of(i, Pin::Pose), plant }, None)
            }
            NodeKind::LookAt { bone, target_bone, forward, up, offset, yaw, pitch, chain, .. } => {
                let aim = self.program.aims.len() as u16;
                let mut links = [(0u16, 0.0f32); MAX_LOOK_LINKS];
                for (slot, l) in links.iter_mut().zip(chain) {
                    *slot = (self.skeleton.index_of(&l.bone).unwrap_or(0) as u16, l.share);
                }
                self.program.aims.push(CompiledLookAt {
                    bone: self.skeleton.index_of(bone).unwrap_or(0) as u16,
                    target_bone: self.target_bone(target_bone),
                    chain: links,
                    links: chain.len().min(MAX_LOOK_LINKS) as u8,
                    target: self.target_of(i),
                    weight: self.float_of(i, Pin::Weight),
                    forward: forward.normalize_or(Vec3::Z),
                    up: up.normalize_or(Vec3::Y),
                    offset: *offset,
                    limits: crate::ik::AimLimits { yaw: *yaw, pitch: *pitch },
                });
                self.slot[i] = self.slot[self.root[i]];
                (Flow::LookAt { input: self.flow_of(i, Pin::Pose), aim }, None)
            }
            NodeKind::StateMachine { .. } => {
                let Some(m) = self.resolved.machines[i].take() else { return };
                let machine = self.program.machines.len() as u16;
                self.program.machines.push(m);
                let dst = self.dst(i);
                // Two scratch slots for a transition's source and destination.
                let (a, b) = (self.slots.take(), self.slots.take());
                self.slots.release(a);
                self.slots.release(b);
                self.program.machines[machine as usize].scratch = (a, b);
                (Flow::Machine { machine }, Some(Instruction::Machine { machine, dst, a, b }))
            }
            NodeKind::Parameter { .. } | NodeKind::Output | NodeKind::Unknown { .. } => return,
        };
        self.program.flow.push(flow);
        if let Some(ins) = ins {
            self.program.instructions.push(ins);
            self.release_inputs(i);
        }
    }

    /// Takes node `i`'s destination slot (before its inputs are released, so it never aliases
    /// one of them).
    fn dst(&mut self, i: usize) -> u16 {
        let dst = self.slots.take();
        self.slot[i] = dst;
        dst
    }

    /// Frees the slots of `i`'s pose inputs after their last reader, and `i`'s own when nobody
    /// reads it (cannot happen for reachable nodes).
    fn release_inputs(&mut self, i: usize) {
        for (pin, ty) in Pin::of(&self.graph.nodes[i].kind) {
            if ty == PinType::Pose {
                let r = self.root[self.input(i, pin)];
                self.uses[r] -= 1;
                if self.uses[r] == 0 {
                    self.slots.release(self.slot[r]);
                }
            }
        }
        if self.uses[i] == 0 {
            self.slots.release(self.slot[i]);
        }
    }

    /// A blend space's members, sorted by position; returns its index.
    fn space(&mut self, i: usize, samples: &[super::model::BlendSample], looping: bool) -> u16 {
        let mut members: Vec<(f32, SpaceMember)> = samples
            .iter()
            .zip(&self.resolved.space_clips[i])
            .filter_map(|(s, c)| {
                let clip = c.clone()?;
                Some((s.position, SpaceMember { duration: clip.duration(), clip, speed: s.speed }))
            })
            .collect();
        members.sort_by(|a, b| a.0.total_cmp(&b.0));
        let start = self.program.members.len();
        for (p, m) in members {
            self.program.member_positions.push(p);
            self.program.member_points.push((p, 0.0));
            self.program.members.push(m);
        }
        let space = self.program.spaces.len() as u16;
        let position = self.float_of(i, Pin::Position);
        let t = self.program.triangles.len();
        self.program.spaces.push(CompiledSpace {
            node: self.graph.nodes[i].id,
            members: start..self.program.members.len(),
            position,
            y: None,
            triangles: t..t,
            looping,
        });
        space
    }

    /// A 2D blend space's members (in sample order) and Delaunay triangles; returns its index.
    /// The checks made sure every clip resolved and the positions triangulate.
    fn space_2d(&mut self, i: usize, samples: &[super::model::BlendSample2D], looping: bool) -> u16 {
        let start = self.program.members.len();
        for (s, c) in samples.iter().zip(&self.resolved.space_clips[i]) {
            let clip = c.clone().unwrap_or_else(|| Arc::new(Clip::new("", self.skeleton)));
            self.program.member_positions.push(s.position.0);
            self.program.member_points.push(s.position);
            self.program.members.push(SpaceMember { duration: clip.duration(), clip, speed: s.speed });
        }
        let points: Vec<(f32, f32)> = samples.iter().map(|s| s.position).collect();
        let t = self.program.triangles.len();
        self.program.triangles.extend(super::plane::triangulate(&points).unwrap_or_default());
        let space = self.program.spaces.len() as u16;
        self.program.spaces.push(CompiledSpace {
            node: self.graph.nodes[i].id,
            members: start..self.program.members.len(),
            position: self.float_of(i, Pin::X),
            y: Some(self.float_of(i, Pin::Y)),
            triangles: t..self.program.triangles.len(),
            looping,
        });
        space
    }

    /// A mask's per-bone weights (later subtrees override earlier ones); returns its index and
    /// its largest weight.
    fn mask(&mut self, subtrees: &[super::model::MaskSubtree]) -> (u16, f32) {
        let sk = self.skeleton;
        let mut m = vec![0.0f32; sk.bone_count()];
        for s in subtrees {
            let Some(r) = sk.index_of(&s.bone) else { continue };
            for (b, mb) in m.iter_mut().enumerate() {
                if let Some(d) = sk.depth_below(r, b) {
                    *mb = (s.weight * (1.0 - s.falloff * d as f32).max(0.0)).clamp(0.0, 1.0);
                }
            }
        }
        let layer_max = m.iter().copied().fold(0.0, f32::max);
        self.program.masks.push(m);
        ((self.program.masks.len() - 1) as u16, layer_max)
    }

    /// An adjust entry with its bone resolved and its axis normalized.
    fn adjust(&self, e: &super::model::AdjustEntry) -> CompiledAdjust {
        let bone = self.skeleton.index_of(&e.bone).unwrap_or(0) as u16;
        let op = match e.op {
            AdjustOp::Rotate { axis } => AdjustOp::Rotate { axis: axis.normalize_or(Vec3::X) },
            AdjustOp::Orient { axis } => AdjustOp::Orient { axis: axis.normalize_or(Vec3::X) },
            other => other,
        };
        let amount = match &e.amount {
            Drive::Constant(c) => FloatRef::Constant(*c),
            Drive::Parameter(p) => FloatRef::Param(self.param(p)),
        };
        CompiledAdjust { bone, op, amount }
    }
}

/// Caches a compiled program, keyed by the authored graph's revision (a number its owner bumps
/// whenever the graph, or a clip it plays, changes; the editor uses its document revision) and
/// the skeleton (by pointer). No deep comparison of graphs: asking again with the same
/// revision and skeleton returns the cached program (or errors) at once.
#[derive(Debug, Default)]
pub struct GraphCache {
    key: Option<(u64, Arc<Skeleton>)>,
    program: Option<Result<Arc<GraphProgram>, Vec<GraphError>>>,
    compiles: u64,
}

impl GraphCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The program for `graph` (at `revision`) on `skeleton`, compiling only when the revision
    /// or the skeleton changed since the last call (or after [`GraphCache::invalidate`]).
    /// Errors are cached too.
    pub fn get(
        &mut self,
        revision: u64,
        graph: &AnimGraph,
        skeleton: &Arc<Skeleton>,
        clips: &dyn ClipSource,
    ) -> Result<Arc<GraphProgram>, Vec<GraphError>> {
        let fresh = self.key.as_ref().is_some_and(|(r, s)| *r == revision && Arc::ptr_eq(s, skeleton));
        if !fresh || self.program.is_none() {
            self.compiles += 1;
            self.program = Some(compile(graph, skeleton, clips).map(Arc::new));
            self.key = Some((revision, skeleton.clone()));
        }
        self.program.clone().unwrap_or_else(|| Err(Vec::new()))
    }

    /// Forgets the cached program (e.g. when a clip in the library was reloaded).
    pub fn invalidate(&mut self) {
        self.program = None;
    }

    /// How many times this cache has compiled.
    #[doc(hidden)]
    pub fn compile_count(&self) -> u64 {
        self.compiles
    }
}

/// Whether `child` is below `ancestor` in `skeleton` (strictly).
fn below(skeleton: &Skeleton, child: usize, ancestor: usize) -> bool {
    skeleton.depth_below(ancestor, child).is_some_and(|d| d > 0)
}
