//! The authored graph: what the editor's graph panel edits and what a graph file saves.
//!
//! An [`AnimGraph`] is plain data: nodes with stable [`NodeId`]s and editor positions, typed pins,
//! connections (from a node's single output to a named input pin of another node), and parameter
//! declarations with their authored defaults. Clips are named by asset path, bones by name, and
//! parameters by name; nothing here is resolved against a skeleton or a clip library (that is the
//! compiler's job, see [`super::compile`](mod@super::compile)), and nothing here changes while the graph plays (session
//! values live in [`super::eval::GraphInstance`]).
//!
//! ## Pins
//! Every node has at most one output pin (a pose, or a float for a [`NodeKind::Parameter`]; the
//! [`NodeKind::Output`] has none) and a fixed list of named input pins ([`NodeKind::inputs`]).
//! Pose inputs must be connected. A float input may be left unconnected, in which case the node's
//! authored constant for it is used (e.g. [`NodeKind::Blend2`]'s `weight`); connecting a
//! [`NodeKind::Parameter`] node drives it from that parameter instead.

use glam::Vec3;

use super::kinds::InputPin;

/// A node's stable identity. Ids are never reused while the node exists; they are what
/// connections, errors and the editor refer to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct NodeId(pub u32);

impl std::fmt::Display for NodeId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// The type of value a pin carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum PinType {
    /// A local pose (one transform per bone).
    Pose,
    /// A float.
    Float,
    /// A vector (x, y, z): a point or direction in the rig's model space.
    Vec3,
}

impl std::fmt::Display for PinType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PinType::Pose => "pose",
            PinType::Float => "float",
            PinType::Vec3 => "vec3",
        })
    }
}

/// One clip placed on a [`NodeKind::BlendSpace1D`] axis.
#[derive(Clone, Debug, PartialEq)]
pub struct BlendSample {
    /// Clip asset path.
    pub clip: String,
    /// Position on the axis.
    pub position: f32,
    /// Playback speed of this clip (multiplies its contribution to the shared phase rate).
    pub speed: f32,
}

/// One clip placed on a [`NodeKind::BlendSpace2D`] plane.
#[derive(Clone, Debug, PartialEq)]
pub struct BlendSample2D {
    /// Clip asset path.
    pub clip: String,
    /// Position on the plane (x, y).
    pub position: (f32, f32),
    /// Playback speed of this clip (multiplies its contribution to the shared phase rate).
    pub speed: f32,
}

/// A bone below which a [`NodeKind::LookAt`]'s turn is shared (a spine, a neck): it takes
/// `share` of the turn still left when it is reached, root-most first, before the looking bone
/// takes the rest.
#[derive(Clone, Debug, PartialEq)]
pub struct LookLink {
    /// The bone (an ancestor of the looking bone).
    pub bone: String,
    /// Its share of the turn left, in `[0, 1]`.
    pub share: f32,
}

/// The most links a [`NodeKind::LookAt`] chain has.
pub const MAX_LOOK_LINKS: usize = 4;

/// A subtree chosen by a [`NodeKind::Mask`].
#[derive(Clone, Debug, PartialEq)]
pub struct MaskSubtree {
    /// Name of the subtree's root bone.
    pub bone: String,
    /// Layer weight at the root bone, in `[0, 1]`.
    pub weight: f32,
    /// Weight lost per level below the root: a bone `d` levels below takes
    /// `weight * max(0, 1 - falloff * d)`. 0 keeps the whole subtree at `weight`.
    pub falloff: f32,
}

/// What an [`AdjustEntry`] does with its amount. Everything is stated in rig model space, about
/// the bone's own origin, exactly like [`crate::pose::BoneAdjust`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AdjustOp {
    /// Rotate the bone by `amount` radians about a model-space axis.
    Rotate {
        /// Model-space axis (normalized by the compiler).
        axis: Vec3,
    },
    /// Set the bone's final model-space orientation to a rotation of `amount` radians about an axis.
    Orient {
        /// Model-space axis (normalized by the compiler).
        axis: Vec3,
    },
    /// Move the bone's origin by `direction * amount` in model space.
    Offset {
        /// Model-space direction.
        direction: Vec3,
    },
    /// Scale the bone uniformly by `amount` about its origin.
    Scale,
}

/// Where an adjust's amount comes from.
#[derive(Clone, Debug, PartialEq)]
pub enum Drive {
    /// A constant.
    Constant(f32),
    /// The value of a named parameter (a bool reads as 0 or 1).
    Parameter(String),
}

/// One bone adjust of a [`NodeKind::Adjust`] node.
#[derive(Clone, Debug, PartialEq)]
pub struct AdjustEntry {
    /// Name of the bone adjusted.
    pub bone: String,
    /// What the adjust does.
    pub op: AdjustOp,
    /// Its amount (radians for rotations, a length factor for offsets, the factor for a scale).
    pub amount: Drive,
}

/// A node's kind and its authored settings. What each kind is (name, pins, settings, menu
/// entry) is described once in [`super::kinds::KINDS`].
#[derive(Clone, Debug, PartialEq)]
pub enum NodeKind {
    /// Plays one clip. Output: pose.
    Clip {
        /// Clip asset path.
        clip: String,
        /// Playback speed.
        speed: f32,
        /// Whether the playhead wraps at the end (else it holds the last frame).
        looping: bool,
    },
    /// Reads a named parameter. Output: float.
    Parameter {
        /// Parameter name.
        name: String,
    },
    /// Blends pose `a` (weight 0) to pose `b` (weight 1) on local TRS. Inputs: `a`, `b`, `weight`.
    Blend2 {
        /// Weight used when the `weight` pin is unconnected; clamped to `[0, 1]`.
        weight: f32,
    },
    /// N clips on an axis; the two neighbours of the axis value blend, every clip runs on one
    /// shared normalized phase (see [`super::eval`] for the sync rule). Input: `position`.
    BlendSpace1D {
        /// The clips on the axis (any order; sorted by position when compiled).
        samples: Vec<BlendSample>,
        /// Axis value used when the `position` pin is unconnected.
        position: f32,
        /// Whether the shared phase wraps (else it holds at the end).
        looping: bool,
    },
    /// N clips on a plane, Delaunay-triangulated when compiled; the three corners of the
    /// triangle holding the point `(x, y)` (or of the hull's nearest point outside it) blend by
    /// their barycentric weights, every clip on one shared normalized phase as in
    /// [`NodeKind::BlendSpace1D`]. Inputs: `x`, `y`.
    BlendSpace2D {
        /// The clips on the plane (any order).
        samples: Vec<BlendSample2D>,
        /// Plane x used when the `x` pin is unconnected.
        x: f32,
        /// Plane y used when the `y` pin is unconnected.
        y: f32,
        /// Whether the shared phase wraps (else it holds at the end).
        looping: bool,
    },
    /// `base + (layer - reference) * weight`. Inputs: `base`, `layer`, `reference`, `weight`.
    Additive {
        /// Weight used when the `weight` pin is unconnected; clamped to `[0, 1]`.
        weight: f32,
    },
    /// Layered blend: `layer` over `base` with per-bone weights from subtrees, times `weight`.
    /// Bones outside every subtree keep the base. Inputs: `base`, `layer`, `weight`.
    Mask {
        /// Weight used when the `weight` pin is unconnected; clamped to `[0, 1]`.
        weight: f32,
        /// Subtrees in order; a later entry overrides an earlier one on the bones they share.
        subtrees: Vec<MaskSubtree>,
    },
    /// Model-space bone adjusts applied at composition time (see [`super::eval`]). Input: `pose`.
    Adjust {
        /// Adjusts, composed in list order.
        entries: Vec<AdjustEntry>,
    },
    /// Scales the playback rate of everything upstream. Inputs: `pose`, `scale`.
    TimeScale {
        /// Scale used when the `scale` pin is unconnected.
        scale: f32,
    },
    /// Two-bone IK after composition: the chain `start`, `mid`, `end` (hip, knee, ankle) bent so
    /// that `end` reaches the point (`x`, `y`, `z`) in the rig's model space, the mid joint
    /// bending about `mid_axis` (its own local space) toward `pole` (model space), softened near
    /// full reach from `soften` of the chain's length on, by `weight` (see
    /// [`crate::ik::TwoBoneIkJob`]). The pose passes through; the correction is applied when the
    /// pose is composed, like an Adjust's. Inputs: `pose`, `x`, `y`, `z`, `weight`.
    TwoBoneIk {
        /// The chain's first bone (hip, shoulder).
        start: String,
        /// Its child that bends (knee, elbow).
        mid: String,
        /// The mid bone's child that reaches (ankle, wrist).
        end: String,
        /// Target x used when the `x` pin is unconnected (model space).
        x: f32,
        /// Target y used when the `y` pin is unconnected.
        y: f32,
        /// Target z used when the `z` pin is unconnected.
        z: f32,
        /// A bone of the rig the target follows (`x`, `y`, `z` then an offset in its frame, read
        /// each tick); empty: the target is a point in model space.
        target_bone: String,
        /// The direction the mid joint points to (model space).
        pole: Vec3,
        /// The mid joint's bend axis (its local space).
        mid_axis: Vec3,
        /// Where softening starts, as a ratio of the chain's length (1: none).
        soften: f32,
        /// Weight used when the `weight` pin is unconnected; clamped to `[0, 1]`.
        weight: f32,
    },
    /// Turns one bone after composition so that its `forward` axis, from `offset` (both in the
    /// bone's own space), points at (`x`, `y`, `z`) in the rig's model space, its `up` axis toward
    /// model-space up, within `yaw` and `pitch` of its rest direction, by `weight` (see
    /// [`crate::ik::AimJob`]). The pose passes through. Inputs: `pose`, `x`, `y`, `z`, `weight`.
    LookAt {
        /// The bone that turns (a head).
        bone: String,
        /// Target x used when the `x` pin is unconnected (model space).
        x: f32,
        /// Target y used when the `y` pin is unconnected.
        y: f32,
        /// Target z used when the `z` pin is unconnected.
        z: f32,
        /// A bone of the rig the target follows (`x`, `y`, `z` then an offset in its frame, read
        /// each tick); empty: the target is a point in model space.
        target_bone: String,
        /// The axis that aims (bone space).
        forward: Vec3,
        /// The bone's up axis (bone space).
        up: Vec3,
        /// Where the aim starts, bone space (the eyes).
        offset: Vec3,
        /// Most turn about the up axis, radians.
        yaw: f32,
        /// Most turn toward or away from the up axis, radians.
        pitch: f32,
        /// Bones above `bone` that share the turn (a spine, a neck), root-most first; at most
        /// [`MAX_LOOK_LINKS`].
        chain: Vec<LookLink>,
        /// Weight used when the `weight` pin is unconnected; clamped to `[0, 1]`.
        weight: f32,
    },
    /// Ground plant after composition: a walk authored on flat ground keeps its feet on a ground
    /// plane (`height` at the model origin, rising by `slope` radians along model +Z). Each leg's
    /// ankle (`left`, `right`: hip, knee, ankle) moves up or down by the plane's height under it,
    /// held within `max_lift` and `max_drop`; the `hips` move by the lower foot's offset so both
    /// legs reach; each leg is then bent as a [`crate::ik::TwoBoneIkJob`] about `mid_axis` (the
    /// knee's own space) toward where its knee points, and each foot keeps its orientation, tilted
    /// onto the plane. By `weight`. The pose passes through. Inputs: `pose`, `height`, `slope`,
    /// `weight`.
    FootPlant {
        /// The bone above both legs that drops or rises (the pelvis).
        hips: String,
        /// The left leg: hip, knee, ankle.
        left: [String; 3],
        /// The right leg: hip, knee, ankle.
        right: [String; 3],
        /// Plane height at the model origin, used when the `height` pin is unconnected.
        height: f32,
        /// Plane slope along model +Z (radians), used when the `slope` pin is unconnected.
        slope: f32,
        /// The most a foot is lifted.
        max_lift: f32,
        /// The most a foot is lowered.
        max_drop: f32,
        /// The knees' bend axis (their local space).
        mid_axis: Vec3,
        /// Weight used when the `weight` pin is unconnected; clamped to `[0, 1]`.
        weight: f32,
    },
    /// States and transitions: plays one state's source, or blends two during a transition (see
    /// [`super::machine`]). Output: pose.
    StateMachine {
        /// The machine.
        machine: super::machine::StateMachine,
    },
    /// The graph's result. Input: `pose`.
    Output,
    /// A node a graph file names with a kind this build does not know. It is kept, with its
    /// settings as the file wrote them, so that opening and saving such a file loses nothing;
    /// the compiler reports it on the node ([`super::GraphError::UnknownKind`]). It has no pins
    /// the compiler reads and plays nothing; its connections are kept as they are.
    Unknown {
        /// The kind the file names.
        kind: String,
        /// The node's settings as written (RON of the file's node, written back on save).
        settings: String,
    },
}

impl NodeKind {
    /// The kind's name, as saved in graph files and shown as the node's title
    /// ([`KindInfo::name`](super::kinds::KindInfo::name)).
    pub fn name(&self) -> &'static str {
        self.info().name
    }

    /// The input pins, in display order ([`KindInfo::inputs`](super::kinds::KindInfo::inputs)).
    pub fn inputs(&self) -> &'static [InputPin] {
        self.info().inputs
    }

    /// The type of an input pin, or `None` when the kind has no pin of that name.
    pub fn input_type(&self, pin: &str) -> Option<PinType> {
        self.inputs().iter().find(|p| p.name == pin).map(|p| p.ty)
    }

    /// The output pin's type (`None` for the Output node and an unknown kind).
    pub fn output(&self) -> Option<PinType> {
        self.info().output
    }
}

/// A node of the graph.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// Stable id.
    pub id: NodeId,
    /// Position in the editor's canvas.
    pub position: [f32; 2],
    /// Kind and settings.
    pub kind: NodeKind,
}

/// A connection from `from`'s output pin to the input pin `pin` of `to`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Connection {
    /// The node whose output feeds the pin.
    pub from: NodeId,
    /// The node the pin belongs to.
    pub to: NodeId,
    /// The input pin's name.
    pub pin: String,
}

/// A parameter's type and value.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum ParamValue {
    /// A float.
    Float(f32),
    /// A bool (reads as 0 or 1 where a float is wanted).
    Bool(bool),
    /// A trigger: set by a game or a button, it stays set until a state machine transition that
    /// tests it fires, which clears it (reads as 0 or 1 where a float is wanted).
    Trigger(bool),
    /// A vector (a target point in the rig's model space: set by a game, the editor's gizmo, or a
    /// scene entity bound to it). It feeds `vec3` pins only; where a float is wanted it reads as
    /// its length.
    Vec3(Vec3),
}

impl ParamValue {
    /// The value as a float (a bool or trigger is 0 or 1, a vector its length).
    pub fn as_f32(self) -> f32 {
        match self {
            ParamValue::Float(v) => v,
            ParamValue::Bool(b) | ParamValue::Trigger(b) => b as u8 as f32,
            ParamValue::Vec3(v) => v.length(),
        }
    }

    /// Component `k` (0, 1, 2: x, y, z) of a vector; a scalar's value for every `k`.
    pub fn axis(self, k: usize) -> f32 {
        match self {
            ParamValue::Vec3(v) => v.to_array().get(k).copied().unwrap_or(0.0),
            other => other.as_f32(),
        }
    }

    /// Whether every number it holds is finite.
    pub fn is_finite(self) -> bool {
        match self {
            ParamValue::Vec3(v) => v.is_finite(),
            other => other.as_f32().is_finite(),
        }
    }

    /// The type's name: "float", "bool", "trigger" or "vec3".
    pub fn type_name(self) -> &'static str {
        match self {
            ParamValue::Float(_) => "float",
            ParamValue::Bool(_) => "bool",
            ParamValue::Trigger(_) => "trigger",
            ParamValue::Vec3(_) => "vec3",
        }
    }

    /// The type of pin a Parameter node of this value feeds.
    pub fn pin_type(self) -> PinType {
        match self {
            ParamValue::Vec3(_) => PinType::Vec3,
            _ => PinType::Float,
        }
    }
}

/// A parameter declaration with its authored default.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamDecl {
    /// Unique name.
    pub name: String,
    /// Type and default value.
    pub default: ParamValue,
}

/// An authored blend/adjust graph. Fields are public so the editor can edit them directly (the
/// compiler validates everything); the helpers keep ids unique and inputs singly connected.
/// Two graphs are equal when their nodes, connections and parameters are, and they would give
/// the same id to the next node ([`AnimGraph::fresh_id`]).
#[derive(Clone, Debug, Default)]
pub struct AnimGraph {
    /// The nodes, in creation order.
    pub nodes: Vec<Node>,
    /// The connections.
    pub connections: Vec<Connection>,
    /// The parameters.
    pub parameters: Vec<ParamDecl>,
    /// The id the next added node takes (at least one past every id ever used, so ids are
    /// never reused, even after a node is removed and the graph saved and reloaded).
    pub next_id: u32,
}

impl PartialEq for AnimGraph {
    fn eq(&self, other: &Self) -> bool {
        self.nodes == other.nodes
            && self.connections == other.connections
            && self.parameters == other.parameters
            && self.fresh_id() == other.fresh_id()
    }
}

impl AnimGraph {
    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a node at `position`. Its id is [`AnimGraph::next_id`] (raised past any id in the
    /// graph first), so no id is ever used twice.
    pub fn add_node(&mut self, kind: NodeKind, position: [f32; 2]) -> NodeId {
        let id = NodeId(self.fresh_id());
        self.next_id = id.0.saturating_add(1);
        self.nodes.push(Node { id, position, kind });
        id
    }

    /// The id [`AnimGraph::add_node`] would give next.
    pub fn fresh_id(&self) -> u32 {
        self.nodes.iter().map(|n| n.id.0.saturating_add(1)).max().unwrap_or(0).max(self.next_id)
    }

    /// Removes a node and every connection to or from it; returns the node and the
    /// connections removed with it.
    pub fn remove_node(&mut self, id: NodeId) -> Option<(Node, Vec<Connection>)> {
        let i = self.nodes.iter().position(|n| n.id == id)?;
        let mut removed = Vec::new();
        self.connections.retain(|c| {
            let keep = c.from != id && c.to != id;
            if !keep {
                removed.push(c.clone());
            }
            keep
        });
        self.next_id = self.fresh_id();
        Some((self.nodes.remove(i), removed))
    }

    /// The node with id `id`.
    pub fn node(&self, id: NodeId) -> Option<&Node> {
        self.nodes.iter().find(|n| n.id == id)
    }

    /// The node with id `id`, mutably.
    pub fn node_mut(&mut self, id: NodeId) -> Option<&mut Node> {
        self.nodes.iter_mut().find(|n| n.id == id)
    }

    /// Connects `from`'s output to `to`'s input `pin`, replacing whatever fed that pin; returns
    /// the connection replaced. Types are not checked here (the compiler reports mismatches on
    /// the node).
    pub fn connect(&mut self, from: NodeId, to: NodeId, pin: impl Into<String>) -> Option<Connection> {
        let pin = pin.into();
        let old = self.connections.iter().position(|c| c.to == to && c.pin == pin);
        let replaced = old.map(|i| self.connections.remove(i));
        self.connections.retain(|c| !(c.to == to && c.pin == pin));
        self.connections.push(Connection { from, to, pin });
        replaced
    }

    /// Removes the connection feeding `to`'s input `pin`; returns whether there was one.
    pub fn disconnect(&mut self, to: NodeId, pin: &str) -> bool {
        let before = self.connections.len();
        self.connections.retain(|c| !(c.to == to && c.pin == pin));
        before != self.connections.len()
    }

    /// The node feeding `to`'s input `pin` (the first such connection).
    pub fn input(&self, to: NodeId, pin: &str) -> Option<NodeId> {
        self.connections.iter().find(|c| c.to == to && c.pin == pin).map(|c| c.from)
    }

    /// Declares a parameter (or replaces the default of an existing one of that name).
    pub fn add_parameter(&mut self, name: impl Into<String>, default: ParamValue) {
        let name = name.into();
        match self.parameters.iter_mut().find(|p| p.name == name) {
            Some(p) => p.default = default,
            None => self.parameters.push(ParamDecl { name, default }),
        }
    }

    /// The declaration of parameter `name`.
    pub fn parameter(&self, name: &str) -> Option<&ParamDecl> {
        self.parameters.iter().find(|p| p.name == name)
    }

    /// What a node of this graph gives: its kind's output ([`NodeKind::output`]), except that a
    /// Parameter node gives its parameter's type (a vector parameter feeds `vec3` pins; an
    /// unknown parameter reads as a float, and the compiler names it).
    pub fn output_type(&self, kind: &NodeKind) -> Option<PinType> {
        match kind {
            NodeKind::Parameter { name } => {
                Some(self.parameter(name).map_or(PinType::Float, |p| p.default.pin_type()))
            }
            other => other.output(),
        }
    }
}
