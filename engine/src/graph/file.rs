//! Graph files: the versioned RON form of an [`AnimGraph`].
//!
//! The file mirrors the authored graph with serde types of its own ([`GraphFile`]): nodes by id
//! with their kind by name and only the settings that kind uses, connections by node id and pin
//! name, clips by asset path, parameters with their defaults, and a `version`
//! ([`GRAPH_FILE_VERSION`]). [`save_graph`] writes with one fixed [`ron::ser::PrettyConfig`], so
//! the same graph always gives the same bytes.
//!
//! Loading never panics. [`load_graph`] fails outright only on a syntax error (reported with its
//! RON line and column) or an unsupported version; everything else loads as far as it can, with
//! each problem reported on its node: a node of an unknown kind is kept as [`NodeKind::Unknown`]
//! (its settings and connections written back unchanged on save), a node missing a setting gets an
//! empty one (the compiler then refuses it on the node), a dangling connection is dropped, and
//! structural faults
//! that the editor should show (a cycle, a pin type mismatch, an unknown pin, a doubled input,
//! an extra Output) stay in the graph and are reported. [`TryFrom<GraphFile>`] for [`AnimGraph`]
//! is the strict form: any problem is an error.
//!
//! Not here: resolving clips or bones (the compiler does that), editor-only view state.

// Load-time errors carry the whole graph error for the node at fault; their size never matters on
// a hot path.
#![allow(clippy::result_large_err)]

use glam::Vec3;
use serde::{Deserialize, Serialize};

use super::compile::{GraphError, validate_structure};
use super::machine::file::MachineFile;
use super::model::{
    AdjustEntry, AdjustOp, AnimGraph, BlendSample, BlendSample2D, Connection, Drive, LookLink, MaskSubtree,
    Node, NodeId, NodeKind, ParamDecl, ParamValue,
};

/// The graph file version this build reads and writes.
pub const GRAPH_FILE_VERSION: u32 = 1;

/// A graph file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GraphFile {
    /// Format version ([`GRAPH_FILE_VERSION`]).
    pub version: u32,
    /// Parameters with their defaults.
    #[serde(default)]
    pub parameters: Vec<ParamFile>,
    /// Nodes.
    #[serde(default)]
    pub nodes: Vec<NodeFile>,
    /// Connections.
    #[serde(default)]
    pub connections: Vec<ConnectionFile>,
    /// The id the next node takes, written only when it is past every node's id (nodes were
    /// removed): ids are never reused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_id: Option<u32>,
}

/// A parameter in a file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ParamFile {
    /// Name.
    pub name: String,
    /// Type and default.
    pub default: ParamValue,
}

/// A node in a file: its kind by name and the settings that kind uses (the others are omitted).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeFile {
    /// Node id.
    pub id: u32,
    /// Kind name ([`NodeKind::name`]).
    pub kind: String,
    /// Editor position.
    #[serde(default)]
    pub at: (f32, f32),
    /// Clip asset path (Clip).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clip: Option<String>,
    /// Speed (Clip).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<f32>,
    /// Looping (Clip, BlendSpace1D, BlendSpace2D).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub looping: Option<bool>,
    /// Parameter name (Parameter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Constant weight (Blend2, Additive, Mask).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<f32>,
    /// Constant axis value (BlendSpace1D).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<f32>,
    /// Constant plane x (BlendSpace2D).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x: Option<f32>,
    /// Constant plane y (BlendSpace2D); target y (TwoBoneIk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub y: Option<f32>,
    /// Target z (TwoBoneIk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub z: Option<f32>,
    /// Constant rate factor (TimeScale).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f32>,
    /// Clips on the axis (BlendSpace1D).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<Vec<SampleFile>>,
    /// Clips on the plane (BlendSpace2D).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples2d: Option<Vec<Sample2DFile>>,
    /// Subtrees (Mask).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subtrees: Option<Vec<SubtreeFile>>,
    /// Adjusts (Adjust).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<AdjustFile>>,
    /// The chain's first bone (TwoBoneIk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// The chain's bending bone (TwoBoneIk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mid: Option<String>,
    /// The chain's reaching bone (TwoBoneIk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<String>,
    /// The pole, model space (TwoBoneIk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pole: Option<[f32; 3]>,
    /// The mid joint's bend axis, its local space (TwoBoneIk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mid_axis: Option<[f32; 3]>,
    /// Where softening starts (TwoBoneIk).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub soften: Option<f32>,
    /// The bone that turns (LookAt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bone: Option<String>,
    /// The aiming axis, bone space (LookAt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forward: Option<[f32; 3]>,
    /// The up axis, bone space (LookAt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up: Option<[f32; 3]>,
    /// The aim's origin, bone space (LookAt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<[f32; 3]>,
    /// The yaw limit, radians (LookAt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub yaw: Option<f32>,
    /// The pitch limit, radians (LookAt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pitch: Option<f32>,
    /// The bone a target follows (TwoBoneIk, LookAt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_bone: Option<String>,
    /// The bones that share the turn, root-most first (LookAt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chain: Option<Vec<LookLinkFile>>,
    /// The hips (FootPlant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hips: Option<String>,
    /// The left leg: hip, knee, ankle (FootPlant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left: Option<(String, String, String)>,
    /// The right leg: hip, knee, ankle (FootPlant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub right: Option<(String, String, String)>,
    /// The ground plane's height at the model origin (FootPlant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<f32>,
    /// The ground plane's slope along +Z, radians (FootPlant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slope: Option<f32>,
    /// The most a foot is lifted (FootPlant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_lift: Option<f32>,
    /// The most a foot is lowered (FootPlant).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_drop: Option<f32>,
    /// The state machine (StateMachine).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<MachineFile>,
}

/// A bone sharing a LookAt's turn, in a file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LookLinkFile {
    /// The bone.
    pub bone: String,
    /// Its share of the turn left.
    pub share: f32,
}

/// A blend space clip in a file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SampleFile {
    /// Clip asset path.
    pub clip: String,
    /// Axis position.
    pub position: f32,
    /// Speed.
    #[serde(default = "one")]
    pub speed: f32,
}

/// A 2D blend space clip in a file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sample2DFile {
    /// Clip asset path.
    pub clip: String,
    /// Plane position (x, y).
    pub position: (f32, f32),
    /// Speed.
    #[serde(default = "one")]
    pub speed: f32,
}

fn one() -> f32 {
    1.0
}

/// A mask subtree in a file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SubtreeFile {
    /// Root bone name.
    pub bone: String,
    /// Weight.
    pub weight: f32,
    /// Falloff per level.
    #[serde(default)]
    pub falloff: f32,
}

/// An adjust operation in a file.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum AdjustOpFile {
    /// [`AdjustOp::Rotate`].
    Rotate {
        /// Model-space axis.
        axis: [f32; 3],
    },
    /// [`AdjustOp::Orient`].
    Orient {
        /// Model-space axis.
        axis: [f32; 3],
    },
    /// [`AdjustOp::Offset`].
    Offset {
        /// Model-space direction.
        direction: [f32; 3],
    },
    /// [`AdjustOp::Scale`].
    Scale,
}

/// An adjust amount in a file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum DriveFile {
    /// A constant.
    Constant(f32),
    /// A parameter by name.
    Parameter(String),
}

/// An adjust entry in a file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AdjustFile {
    /// Bone name.
    pub bone: String,
    /// Operation.
    pub op: AdjustOpFile,
    /// Amount.
    pub amount: DriveFile,
}

/// A connection in a file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConnectionFile {
    /// Source node id.
    pub from: u32,
    /// Target node id.
    pub to: u32,
    /// Target input pin name.
    pub pin: String,
}

/// A problem found while loading a graph file.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum GraphFileError {
    /// The text is not valid RON for a graph file.
    #[error("line {line}, column {column}: {message}")]
    Syntax {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// The parser's message.
        message: String,
    },
    /// The file's version is not one this build reads.
    #[error("graph file version {found} is not supported (this build reads version {supported})")]
    Version {
        /// The file's version.
        found: u32,
        /// The supported version.
        supported: u32,
    },
    /// A node names a kind that does not exist; the node is kept as [`NodeKind::Unknown`].
    #[error("node {node}: unknown node kind {kind:?}")]
    UnknownNodeKind {
        /// The node.
        node: NodeId,
        /// The kind named.
        kind: String,
    },
    /// A node lacks a setting its kind needs; the node is kept with an empty value there.
    #[error("node {node} ({kind}): missing {field:?}")]
    MissingField {
        /// The node.
        node: NodeId,
        /// Its kind.
        kind: &'static str,
        /// The setting.
        field: &'static str,
    },
    /// A setting could not be read as written; what could be read was kept.
    #[error("node {node} ({kind}): {what}")]
    BadSetting {
        /// The node.
        node: NodeId,
        /// Its kind.
        kind: &'static str,
        /// What was wrong and what was done.
        what: String,
    },
    /// A structural fault of the loaded graph (dangling connection, cycle, pin mismatch...).
    #[error("{0}")]
    Graph(GraphError),
}

impl GraphFileError {
    /// The node at fault, if any.
    pub fn node(&self) -> Option<NodeId> {
        match self {
            GraphFileError::UnknownNodeKind { node, .. }
            | GraphFileError::MissingField { node, .. }
            | GraphFileError::BadSetting { node, .. } => Some(*node),
            GraphFileError::Graph(e) => e.node(),
            _ => None,
        }
    }
}

fn v3(a: [f32; 3]) -> Vec3 {
    Vec3::from_array(a)
}

impl From<&AnimGraph> for GraphFile {
    fn from(g: &AnimGraph) -> Self {
        let nodes = g
            .nodes
            .iter()
            .map(|n| {
                let mut f = NodeFile {
                    id: n.id.0,
                    kind: n.kind.name().to_owned(),
                    at: (n.position[0], n.position[1]),
                    ..NodeFile::default()
                };
                match &n.kind {
                    NodeKind::Clip { clip, speed, looping } => {
                        f.clip = Some(clip.clone());
                        f.speed = Some(*speed);
                        f.looping = Some(*looping);
                    }
                    NodeKind::Parameter { name } => f.name = Some(name.clone()),
                    NodeKind::Blend2 { weight } | NodeKind::Additive { weight } => f.weight = Some(*weight),
                    NodeKind::BlendSpace1D { samples, position, looping } => {
                        f.samples = Some(
                            samples
                                .iter()
                                .map(|s| SampleFile {
                                    clip: s.clip.clone(),
                                    position: s.position,
                                    speed: s.speed,
                                })
                                .collect(),
                        );
                        f.position = Some(*position);
                        f.looping = Some(*looping);
                    }
                    NodeKind::BlendSpace2D { samples, x, y, looping } => {
                        f.samples2d = Some(
                            samples
                                .iter()
                                .map(|s| Sample2DFile {
                                    clip: s.clip.clone(),
                                    position: s.position,
                                    speed: s.speed,
                                })
                                .collect(),
                        );
                        f.x = Some(*x);
                        f.y = Some(*y);
                        f.looping = Some(*looping);
                    }
                    NodeKind::Mask { weight, subtrees } => {
                        f.weight = Some(*weight);
                        f.subtrees = Some(
                            subtrees
                                .iter()
                                .map(|s| SubtreeFile {
                                    bone: s.bone.clone(),
                                    weight: s.weight,
                                    falloff: s.falloff,
                                })
                                .collect(),
                        );
                    }
                    NodeKind::Adjust { entries } => {
                        f.entries = Some(
                            entries
                                .iter()
                                .map(|e| AdjustFile {
                                    bone: e.bone.clone(),
                                    op: match e.op {
                                        AdjustOp::Rotate { axis } => {
                                            AdjustOpFile::Rotate { axis: axis.to_array() }
                                        }
                                        AdjustOp::Orient { axis } => {
                                            AdjustOpFile::Orient { axis: axis.to_array() }
                                        }
                                        AdjustOp::Offset { direction } => {
                                            AdjustOpFile::Offset { direction: direction.to_array() }
                                        }
                                        AdjustOp::Scale => AdjustOpFile::Scale,
                                    },
                                    amount: match &e.amount {
                                        Drive::Constant(c) => DriveFile::Constant(*c),
                                        Drive::Parameter(p) => DriveFile::Parameter(p.clone()),
                                    },
                                })
                                .collect(),
                        );
                    }
                    NodeKind::TimeScale { scale } => f.scale = Some(*scale),
                    kind @ (NodeKind::TwoBoneIk { .. } | NodeKind::LookAt { .. }) => write_aim(kind, &mut f),
                    kind @ NodeKind::FootPlant { .. } => write_foot_plant(kind, &mut f),
                    NodeKind::StateMachine { machine } => f.machine = Some(MachineFile::from(machine)),
                    NodeKind::Output => {}
                    NodeKind::Unknown { kind, settings } => {
                        // Written back as read (the settings were made by `node_kind` below).
                        let kept: NodeFile = ron_options().from_str(settings).unwrap_or_default();
                        f = NodeFile { id: f.id, kind: kind.clone(), at: f.at, ..kept };
                    }
                }
                f
            })
            .collect();
        GraphFile {
            version: GRAPH_FILE_VERSION,
            parameters: g
                .parameters
                .iter()
                .map(|p| ParamFile { name: p.name.clone(), default: p.default })
                .collect(),
            nodes,
            connections: g
                .connections
                .iter()
                .map(|c| ConnectionFile { from: c.from.0, to: c.to.0, pin: c.pin.clone() })
                .collect(),
            next_id: {
                let past = g.nodes.iter().map(|n| n.id.0.saturating_add(1)).max().unwrap_or(0);
                (g.next_id > past).then_some(g.next_id)
            },
        }
    }
}

/// The node's kind; a missing setting takes an empty value (reported, so the editor shows it on
/// the node and the compiler refuses it) and an unknown kind becomes [`NodeKind::Unknown`].
fn node_kind(f: &NodeFile, errors: &mut Vec<GraphFileError>) -> NodeKind {
    let node = NodeId(f.id);
    let mut need = |kind: &'static str, field: &'static str, present: bool| {
        if !present {
            errors.push(GraphFileError::MissingField { node, kind, field });
        }
    };
    match f.kind.as_str() {
        "Clip" => {
            need("Clip", "clip", f.clip.is_some());
            NodeKind::Clip {
                clip: f.clip.clone().unwrap_or_default(),
                speed: f.speed.unwrap_or(1.0),
                looping: f.looping.unwrap_or(true),
            }
        }
        "Parameter" => {
            need("Parameter", "name", f.name.is_some());
            NodeKind::Parameter { name: f.name.clone().unwrap_or_default() }
        }
        "Blend2" => NodeKind::Blend2 { weight: f.weight.unwrap_or(0.0) },
        "BlendSpace1D" => {
            need("BlendSpace1D", "samples", f.samples.is_some());
            NodeKind::BlendSpace1D {
                samples: f
                    .samples
                    .iter()
                    .flatten()
                    .map(|s| BlendSample { clip: s.clip.clone(), position: s.position, speed: s.speed })
                    .collect(),
                position: f.position.unwrap_or(0.0),
                looping: f.looping.unwrap_or(true),
            }
        }
        "BlendSpace2D" => {
            need("BlendSpace2D", "samples2d", f.samples2d.is_some());
            NodeKind::BlendSpace2D {
                samples: f
                    .samples2d
                    .iter()
                    .flatten()
                    .map(|s| BlendSample2D { clip: s.clip.clone(), position: s.position, speed: s.speed })
                    .collect(),
                x: f.x.unwrap_or(0.0),
                y: f.y.unwrap_or(0.0),
                looping: f.looping.unwrap_or(true),
            }
        }
        "Additive" => NodeKind::Additive { weight: f.weight.unwrap_or(1.0) },
        "Mask" => NodeKind::Mask {
            weight: f.weight.unwrap_or(1.0),
            subtrees: f
                .subtrees
                .iter()
                .flatten()
                .map(|s| MaskSubtree { bone: s.bone.clone(), weight: s.weight, falloff: s.falloff })
                .collect(),
        },
        "Adjust" => NodeKind::Adjust {
            entries: f
                .entries
                .iter()
                .flatten()
                .map(|e| AdjustEntry {
                    bone: e.bone.clone(),
                    op: match e.op {
                        AdjustOpFile::Rotate { axis } => AdjustOp::Rotate { axis: v3(axis) },
                        AdjustOpFile::Orient { axis } => AdjustOp::Orient { axis: v3(axis) },
                        AdjustOpFile::Offset { direction } => AdjustOp::Offset { direction: v3(direction) },
                        AdjustOpFile::Scale => AdjustOp::Scale,
                    },
                    amount: match &e.amount {
                        DriveFile::Constant(c) => Drive::Constant(*c),
                        DriveFile::Parameter(p) => Drive::Parameter(p.clone()),
                    },
                })
                .collect(),
        },
        "TimeScale" => NodeKind::TimeScale { scale: f.scale.unwrap_or(1.0) },
        "TwoBoneIk" => {
            for (field, present) in
                [("start", f.start.is_some()), ("mid", f.mid.is_some()), ("end", f.end.is_some())]
            {
                need("TwoBoneIk", field, present);
            }
            NodeKind::TwoBoneIk {
                start: f.start.clone().unwrap_or_default(),
                mid: f.mid.clone().unwrap_or_default(),
                end: f.end.clone().unwrap_or_default(),
                x: f.x.unwrap_or(0.0),
                y: f.y.unwrap_or(0.0),
                z: f.z.unwrap_or(0.0),
                target_bone: f.target_bone.clone().unwrap_or_default(),
                pole: f.pole.map_or(Vec3::Z, v3),
                mid_axis: f.mid_axis.map_or(Vec3::X, v3),
                soften: f.soften.unwrap_or(1.0),
                weight: f.weight.unwrap_or(1.0),
            }
        }
        "LookAt" => {
            need("LookAt", "bone", f.bone.is_some());
            look_at_of(f)
        }
        "FootPlant" => {
            for (field, present) in
                [("hips", f.hips.is_some()), ("left", f.left.is_some()), ("right", f.right.is_some())]
            {
                need("FootPlant", field, present);
            }
            foot_plant_of(f)
        }
        "StateMachine" => {
            need("StateMachine", "machine", f.machine.is_some());
            let (machine, dropped) = f.machine.clone().unwrap_or_default().into_machine();
            errors.extend(dropped.into_iter().map(|what| GraphFileError::BadSetting {
                node,
                kind: "StateMachine",
                what,
            }));
            NodeKind::StateMachine { machine }
        }
        "Output" => NodeKind::Output,
        other => {
            need_unknown(errors, node, other);
            let settings = NodeFile { id: 0, kind: String::new(), at: (0.0, 0.0), ..f.clone() };
            NodeKind::Unknown {
                kind: other.to_owned(),
                settings: ron::ser::to_string_pretty(&settings, pretty_config().new_line(" ").indentor(""))
                    .unwrap_or_default(),
            }
        }
    }
}

fn need_unknown(errors: &mut Vec<GraphFileError>, node: NodeId, kind: &str) {
    errors.push(GraphFileError::UnknownNodeKind { node, kind: kind.to_owned() });
}

impl GraphFile {
    /// Converts to an [`AnimGraph`] as far as possible, returning every problem found (see the
    /// module docs for what is dropped and what is kept). A graph without an Output is not a
    /// problem here (the compiler reports it).
    pub fn into_graph_lossy(self) -> (AnimGraph, Vec<GraphFileError>) {
        let mut errors = Vec::new();
        let mut graph = AnimGraph::new();
        if self.version != GRAPH_FILE_VERSION {
            errors.push(GraphFileError::Version { found: self.version, supported: GRAPH_FILE_VERSION });
        }
        graph.parameters =
            self.parameters.into_iter().map(|p| ParamDecl { name: p.name, default: p.default }).collect();
        for f in &self.nodes {
            let kind = node_kind(f, &mut errors);
            graph.nodes.push(Node { id: NodeId(f.id), position: [f.at.0, f.at.1], kind });
        }
        let titles: std::collections::HashMap<NodeId, &'static str> =
            graph.nodes.iter().map(|n| (n.id, n.kind.name())).collect();
        for c in self.connections {
            let (from, to) = (NodeId(c.from), NodeId(c.to));
            let (has_from, has_to) = (titles.contains_key(&from), titles.contains_key(&to));
            if !(has_from && has_to) {
                let (node, missing) = if has_to { (to, from) } else { (from, to) };
                let title = titles.get(&node).copied().unwrap_or("?");
                errors.push(GraphFileError::Graph(GraphError::DanglingConnection {
                    node,
                    title,
                    pin: c.pin,
                    missing,
                }));
                continue;
            }
            graph.connections.push(Connection { from, to, pin: c.pin });
        }
        graph.next_id = self.next_id.unwrap_or(0);
        let (structural, _) = validate_structure(&graph);
        // Unknown kinds were reported above, as file faults.
        errors.extend(
            structural
                .into_iter()
                .filter(|e| *e != GraphError::NoOutput && !matches!(e, GraphError::UnknownKind { .. }))
                .map(GraphFileError::Graph),
        );
        (graph, errors)
    }
}

impl TryFrom<GraphFile> for AnimGraph {
    type Error = Vec<GraphFileError>;

    fn try_from(file: GraphFile) -> Result<Self, Self::Error> {
        let (graph, errors) = file.into_graph_lossy();
        if errors.is_empty() { Ok(graph) } else { Err(errors) }
    }
}

/// The fixed pretty-printing used for graph files.
pub fn pretty_config() -> ron::ser::PrettyConfig {
    ron::ser::PrettyConfig::new()
        .indentor("    ")
        .new_line("\n")
        .struct_names(false)
        .separate_tuple_members(false)
        .enumerate_arrays(false)
        .compact_arrays(false)
        .extensions(ron::extensions::Extensions::IMPLICIT_SOME)
}

/// The RON options graph files are read with: `implicit_some` on, so optional settings are
/// written bare (`clip: "walk.clip"`, not `clip: Some("walk.clip")`).
pub fn ron_options() -> ron::Options {
    ron::Options::default()
        .with_default_extension(ron::extensions::Extensions::IMPLICIT_SOME)
        .with_recursion_limit(MAX_NESTING)
}

/// How deeply a file may nest (RON values inside values): about 1,300 levels of entities in a
/// scene. Files are read and written on a thread with a stack large enough for this depth.
pub const MAX_NESTING: usize = 4096;

/// How deeply RON text nests its brackets (outside strings): one linear scan, so a reader can
/// stay on its own stack for ordinary files and take a deep one ([`with_deep_stack`]) only
/// for deeply nested ones.
pub fn text_nesting(text: &str) -> usize {
    let (mut depth, mut max, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for b in text.bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'(' | b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// Nesting up to which (de)serialization runs on the caller's own stack.
pub const SHALLOW_NESTING: usize = 64;

/// Runs `f` here when `nesting` is at most [`SHALLOW_NESTING`], else on a deep stack
/// ([`with_deep_stack`]).
pub fn with_stack_for<R: Send>(nesting: usize, f: impl FnOnce() -> R + Send) -> R {
    if nesting <= SHALLOW_NESTING { f() } else { with_deep_stack(f) }
}

/// Runs `f` on a thread whose stack holds [`MAX_NESTING`] levels of (de)serialization, or
/// here when no thread can be started.
pub fn with_deep_stack<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    let mut f = Some(f);
    let mut out = None;
    std::thread::scope(|s| {
        let spawned = std::thread::Builder::new()
            .name("marrow-ron".into())
            .stack_size(256 << 20)
            .spawn_scoped(s, || f.take().map(|f| f()));
        if let Ok(h) = spawned {
            match h.join() {
                Ok(r) => out = r,
                Err(p) => std::panic::resume_unwind(p),
            }
        }
    });
    match (out, f) {
        (Some(r), _) => r,
        (None, Some(f)) => f(),
        (None, None) => unreachable_result(),
    }
}

/// The thread ran `f` and returned nothing: cannot happen (its closure always returns `Some`).
#[cold]
fn unreachable_result<R>() -> R {
    unreachable!("the RON thread took the closure and returned no value")
}

/// The `version` a RON file states at its top level, if it parses that far (read first, so a
/// file from a newer Marrow is reported as such rather than as an error about a field this
/// build does not know). Project, scene, clip, skeleton and graph files all use it.
///
/// Marrow writes `version` as the first field: that is read from the file's first characters
/// (after its `#![...]` attributes and comments) without parsing the rest, which for a clip of
/// tens of thousands of keys was a second full parse. Any other shape is parsed whole.
pub fn probe_version(text: &str) -> Option<u32> {
    #[derive(Deserialize)]
    struct VersionProbe {
        version: u32,
    }
    leading_version(text).or_else(|| ron_options().from_str::<VersionProbe>(text).ok().map(|p| p.version))
}

/// The version of a file that opens with `(version: N,` (after attributes, comments and
/// whitespace); `None` for any other opening.
fn leading_version(text: &str) -> Option<u32> {
    let mut s = text;
    loop {
        s = s.trim_start();
        if let Some(r) = s.strip_prefix("//") {
            s = r.split_once('\n').map_or("", |(_, rest)| rest);
        } else if let Some(r) = s.strip_prefix("/*") {
            let (comment, rest) = r.split_once("*/")?;
            if comment.contains("/*") {
                return None; // nested block comments: left to the parser
            }
            s = rest;
        } else if let Some(r) = s.strip_prefix("#!") {
            s = r.split_once(']')?.1;
        } else {
            break;
        }
    }
    let s = s
        .strip_prefix('(')?
        .trim_start()
        .strip_prefix("version")?
        .trim_start()
        .strip_prefix(':')?
        .trim_start();
    let end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let rest = s[end..].trim_start();
    if end == 0 || !(rest.starts_with(',') || rest.starts_with(')')) {
        return None;
    }
    s[..end].parse().ok()
}

/// A parser's message, with the nesting limit said plainly (ron's own advice is for developers).
pub fn ron_message(code: &ron::Error) -> String {
    match code {
        ron::Error::ExceededRecursionLimit => {
            format!("the file nests deeper than {MAX_NESTING} levels (about 1,300 entities deep in a scene)")
        }
        other => other.to_string(),
    }
}

/// Writes `graph` as RON (stable: the same graph always gives the same text).
pub fn save_graph(graph: &AnimGraph) -> Result<String, ron::Error> {
    let file = GraphFile::from(graph);
    ron::Options::default().without_recursion_limit().to_string_pretty(&file, pretty_config())
}

/// Reads a graph file. `Err` on a syntax error or an unsupported version; otherwise the graph as
/// far as it loads, with every problem found (empty when the file is sound).
pub fn load_graph(text: &str) -> Result<(AnimGraph, Vec<GraphFileError>), GraphFileError> {
    with_stack_for(text_nesting(text), || load_graph_here(text))
}

fn load_graph_here(text: &str) -> Result<(AnimGraph, Vec<GraphFileError>), GraphFileError> {
    // The version first, so a file from a newer Marrow is reported as such, not as a syntax error
    // about a field this version does not know.
    if let Some(found) = probe_version(text).filter(|v| *v != GRAPH_FILE_VERSION) {
        return Err(GraphFileError::Version { found, supported: GRAPH_FILE_VERSION });
    }
    let file: GraphFile = ron_options().from_str(text).map_err(|e| GraphFileError::Syntax {
        line: e.span.start.line,
        column: e.span.start.col,
        message: ron_message(&e.code),
    })?;
    if file.version != GRAPH_FILE_VERSION {
        return Err(GraphFileError::Version { found: file.version, supported: GRAPH_FILE_VERSION });
    }
    Ok(file.into_graph_lossy())
}

/// Writes a TwoBoneIk's or LookAt's settings into `f`.
fn write_aim(kind: &NodeKind, f: &mut NodeFile) {
    let tb = |b: &String| (!b.is_empty()).then(|| b.clone());
    match kind {
        NodeKind::TwoBoneIk { start, mid, end, x, y, z, target_bone, pole, mid_axis, soften, weight } => {
            f.weight = Some(*weight);
            f.target_bone = tb(target_bone);
            (f.x, f.y, f.z) = (Some(*x), Some(*y), Some(*z));
            (f.start, f.mid, f.end) = (Some(start.clone()), Some(mid.clone()), Some(end.clone()));
            f.pole = Some(pole.to_array());
            f.mid_axis = Some(mid_axis.to_array());
            f.soften = Some(*soften);
        }
        NodeKind::LookAt { bone, x, y, z, target_bone, forward, up, offset, yaw, pitch, chain, weight } => {
            f.weight = Some(*weight);
            f.target_bone = tb(target_bone);
            f.chain = (!chain.is_empty()).then(|| {
                chain.iter().map(|l| LookLinkFile { bone: l.bone.clone(), share: l.share }).collect()
            });
            (f.x, f.y, f.z) = (Some(*x), Some(*y), Some(*z));
            f.bone = Some(bone.clone());
            (f.forward, f.up, f.offset) =
                (Some(forward.to_array()), Some(up.to_array()), Some(offset.to_array()));
            (f.yaw, f.pitch) = (Some(*yaw), Some(*pitch));
        }
        _ => {}
    }
}

/// A LookAt node read from `f` (its bone checked present by the caller).
fn look_at_of(f: &NodeFile) -> NodeKind {
    NodeKind::LookAt {
        bone: f.bone.clone().unwrap_or_default(),
        x: f.x.unwrap_or(0.0),
        y: f.y.unwrap_or(0.0),
        z: f.z.unwrap_or(0.0),
        target_bone: f.target_bone.clone().unwrap_or_default(),
        forward: f.forward.map_or(Vec3::Z, v3),
        up: f.up.map_or(Vec3::Y, v3),
        offset: f.offset.map_or(Vec3::ZERO, v3),
        yaw: f.yaw.unwrap_or(std::f32::consts::PI),
        pitch: f.pitch.unwrap_or(std::f32::consts::PI),
        chain: f.chain.iter().flatten().map(|l| LookLink { bone: l.bone.clone(), share: l.share }).collect(),
        weight: f.weight.unwrap_or(1.0),
    }
}

/// A FootPlant node read from `f` (its bones checked present by the caller).
fn foot_plant_of(f: &NodeFile) -> NodeKind {
    let leg = |l: &Option<(String, String, String)>| l.clone().map(|(a, b, c)| [a, b, c]).unwrap_or_default();
    NodeKind::FootPlant {
        hips: f.hips.clone().unwrap_or_default(),
        left: leg(&f.left),
        right: leg(&f.right),
        height: f.height.unwrap_or(0.0),
        slope: f.slope.unwrap_or(0.0),
        max_lift: f.max_lift.unwrap_or(0.4),
        max_drop: f.max_drop.unwrap_or(0.4),
        mid_axis: f.mid_axis.map_or(Vec3::X, v3),
        weight: f.weight.unwrap_or(1.0),
    }
}

/// Writes a FootPlant node's settings into `f`.
fn write_foot_plant(kind: &NodeKind, f: &mut NodeFile) {
    let NodeKind::FootPlant { hips, left, right, height, slope, max_lift, max_drop, mid_axis, weight } = kind
    else {
        return;
    };
    f.weight = Some(*weight);
    (f.height, f.slope) = (Some(*height), Some(*slope));
    f.hips = Some(hips.clone());
    let leg = |l: &[String; 3]| (l[0].clone(), l[1].clone(), l[2].clone());
    (f.left, f.right) = (Some(leg(left)), Some(leg(right)));
    (f.max_lift, f.max_drop) = (Some(*max_lift), Some(*max_drop));
    f.mid_axis = Some(mid_axis.to_array());
}

#[cfg(test)]
mod tests {
    use super::probe_version;

    #[test]
    fn the_version_is_read_from_the_opening_or_by_a_whole_parse() {
        let cases: [(&str, Option<u32>); 9] = [
            ("#![enable(implicit_some)]\n(\n    version: 1,\n    name: \"x\",\n)", Some(1)),
            ("(version: 7)", Some(7)),
            ("// a note\n/* another */ (version : 2 , a: [1, 2])", Some(2)),
            // Not first: the whole parse finds it.
            ("(name: \"x\", version: 3)", Some(3)),
            // Nested block comment: left to the parser, which reads it.
            ("/* a /* b */ c */ (version: 4)", Some(4)),
            ("(version: -1)", None),
            ("(version: 1x)", None),
            ("(name: \"x\")", None),
            ("", None),
        ];
        for (text, want) in cases {
            assert_eq!(probe_version(text), want, "{text:?}");
        }
    }
}
