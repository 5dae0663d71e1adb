//! Node kinds described in one place: the table every pass reads.
//!
//! Each [`NodeKind`] variant has one [`KindInfo`] in [`KINDS`]: its name (as files save it and
//! titles show it), its [`Family`] (and so its header colour), the Add Node menu's hint and how the
//! menu offers it ([`Palette`]), its input pins with their types and, for float pins, the setting
//! that holds the constant used while the pin is unconnected and the range a slider spans
//! ([`FloatRange`]), its output type, the settings a file writes for it ([`SettingInfo`]), the
//! node the menu adds, and an example used by the tests that loop over every kind.
//!
//! The methods every pass needs are here too, each an exhaustive `match` (no `_ =>` arm), so a new
//! variant does not compile until it says which clips ([`NodeKind::clip_refs`]) and parameters
//! ([`NodeKind::param_refs`]) it names and which settings hold its float pins' constants
//! ([`NodeKind::constant`]). The compiler (pins, float constants), the project checks and the
//! editor (palette, node bodies, sliders, clip and parameter renames, clip deletes refused while
//! used) read these instead of matching on kinds themselves; the file writes each kind's own
//! settings (`file.rs`), which the every-kind tests hold to [`KindInfo::settings`].
//!
//! How to add a kind: add the variant (`model.rs`) with its settings, its `KindInfo` here (and its
//! index in [`NodeKind::index`]), its arms in this file's methods, its file settings
//! (`file.rs`), its checks and instruction (`compile.rs`, `eval.rs`); a bespoke editor only if its
//! settings need one. The every-kind tests (`engine/tests/all/node_kinds.rs`,
//! `editor/tests/graph_editor.rs`) then cover it through [`NodeKind::examples`].
//!
//! Not here: what a kind does when it plays (`compile.rs` and `eval.rs` decide that), drawing.

use glam::Vec3;

use super::machine::{Condition, State, StateMachine, StateSource, SyncRule, Test, Transition};
use super::model::{
    AdjustEntry, AdjustOp, BlendSample, BlendSample2D, Drive, LookLink, MaskSubtree, NodeKind, PinType,
};

/// A group of kinds that play a similar part (the editor gives each a header colour).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    /// Produces a pose from clips.
    Source,
    /// Reads a parameter (drives float pins).
    Parameter,
    /// Combines poses.
    Blend,
    /// Changes one pose (adjusts, time).
    Modifier,
    /// The graph's result.
    Output,
    /// A kind this build does not know.
    Unknown,
}

impl Family {
    /// The family's header colour (sRGB).
    pub fn color(self) -> [u8; 3] {
        match self {
            Family::Source => [0x2c, 0x4a, 0x66],
            Family::Parameter => [0x3a, 0x55, 0x2c],
            Family::Blend => [0x55, 0x3a, 0x66],
            Family::Modifier => [0x66, 0x4f, 0x2c],
            Family::Output => [0x6a, 0x2c, 0x2c],
            Family::Unknown => [0x55, 0x55, 0x55],
        }
    }
}

/// The values a float pin's constant (or the parameter driving it) usually takes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FloatRange {
    /// The node clamps the value to this range: a slider over it.
    Clamped(f32, f32),
    /// Any value; a live slider spans this range (widened to the value).
    Typical(f32, f32),
    /// Any value; a live slider spans the positions of the node's samples (on a plane: their
    /// coordinate of the pin's name, `x` or `y`).
    SamplePositions,
}

/// An input pin of a kind.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct InputPin {
    /// The pin's name (what connections name).
    pub name: &'static str,
    /// The type it takes.
    pub ty: PinType,
    /// For a float pin: its range. The constant used while it is unconnected is the node's
    /// setting of the same name ([`NodeKind::constant`]). `None` for a pose pin.
    pub range: Option<FloatRange>,
}

const fn pose(name: &'static str) -> InputPin {
    InputPin { name, ty: PinType::Pose, range: None }
}

const fn float(name: &'static str, range: FloatRange) -> InputPin {
    InputPin { name, ty: PinType::Float, range: Some(range) }
}

const fn vec3(name: &'static str) -> InputPin {
    InputPin { name, ty: PinType::Vec3, range: None }
}

/// What a setting holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SettingType {
    /// A clip asset path.
    Clip,
    /// A parameter name.
    Parameter,
    /// A float.
    Float,
    /// A bool.
    Bool,
    /// A list of clips on an axis ([`BlendSample`]s).
    Samples,
    /// A list of clips on a plane ([`BlendSample2D`]s).
    Samples2D,
    /// A list of bone subtrees ([`MaskSubtree`]s).
    Subtrees,
    /// A list of bone adjusts ([`AdjustEntry`]s).
    Adjusts,
    /// A bone name.
    Bone,
    /// A chain of three bone names (hip, knee, ankle).
    Chain,
    /// The bones that share a look's turn ([`LookLink`]s).
    LookChain,
    /// A vector (x, y, z).
    Vector,
    /// A state machine (states, entry, transitions).
    Machine,
}

/// A setting of a kind, as a graph file names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SettingInfo {
    /// The setting's name in a graph file.
    pub name: &'static str,
    /// What it holds.
    pub ty: SettingType,
}

const fn setting(name: &'static str, ty: SettingType) -> SettingInfo {
    SettingInfo { name, ty }
}

/// How the Add Node menu offers a kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Palette {
    /// One entry.
    Always,
    /// One entry per parameter of the graph.
    PerParameter,
    /// One entry while the graph has no node of the kind.
    OncePerGraph,
    /// Never (a kind only a file can name).
    Never,
}

/// What a new node starts from: the project's first clip, the parameter it is for.
#[derive(Clone, Copy, Debug, Default)]
pub struct Start<'a> {
    /// A clip asset path (the project's first clip, or empty).
    pub clip: &'a str,
    /// A parameter name (for [`Palette::PerParameter`] kinds).
    pub parameter: &'a str,
}

/// The description of one node kind.
#[derive(Clone, Copy, Debug)]
pub struct KindInfo {
    /// The kind's name, as saved in graph files and shown as the node's title.
    pub name: &'static str,
    /// Its family.
    pub family: Family,
    /// One line for the Add Node menu's hover text.
    pub hint: &'static str,
    /// How the Add Node menu offers it.
    pub palette: Palette,
    /// The input pins, in display order.
    pub inputs: &'static [InputPin],
    /// The output pin's type (`None`: no output).
    pub output: Option<PinType>,
    /// The settings a graph file writes for it, in the order of the file's fields.
    pub settings: &'static [SettingInfo],
    /// The node the Add Node menu adds.
    pub start: fn(&Start<'_>) -> NodeKind,
    /// An example with every list setting non-empty, naming [`EXAMPLE_CLIP`],
    /// [`EXAMPLE_PARAMETER`] and [`EXAMPLE_BONE`] wherever the kind names a clip, a parameter or a
    /// bone (what the every-kind tests use).
    pub example: fn() -> NodeKind,
}

/// The clip the examples name.
pub const EXAMPLE_CLIP: &str = "clips/example.clip.ron";
/// The parameter the examples name.
pub const EXAMPLE_PARAMETER: &str = "example";
/// The bone the examples name.
pub const EXAMPLE_BONE: &str = "bone1";

use FloatRange::{Clamped, SamplePositions, Typical};
use SettingType as S;

/// The pins of a kind that changes a pose toward a target point (TwoBoneIk, LookAt): the pose,
/// the target's model-space x, y and z, the target as one vector (a `vec3` parameter; when wired
/// it takes the place of x, y and z), and the weight.
const TARGET_INPUTS: &[InputPin] = &[
    pose("pose"),
    float("x", Typical(-2.0, 2.0)),
    float("y", Typical(-2.0, 2.0)),
    float("z", Typical(-2.0, 2.0)),
    vec3("target"),
    float("weight", Clamped(0.0, 1.0)),
];

/// Every kind, in the Add Node menu's order; [`NodeKind::index`] is a kind's place here.
pub static KINDS: [KindInfo; 15] = [
    KindInfo {
        name: "Clip",
        family: Family::Source,
        hint: "Plays one clip",
        palette: Palette::Always,
        inputs: &[],
        output: Some(PinType::Pose),
        settings: &[setting("clip", S::Clip), setting("speed", S::Float), setting("looping", S::Bool)],
        start: |s| NodeKind::Clip { clip: s.clip.to_owned(), speed: 1.0, looping: true },
        example: || NodeKind::Clip { clip: EXAMPLE_CLIP.into(), speed: 1.25, looping: false },
    },
    KindInfo {
        name: "Blend2",
        family: Family::Blend,
        hint: "Blends pose a to pose b by a weight",
        palette: Palette::Always,
        inputs: &[pose("a"), pose("b"), float("weight", Clamped(0.0, 1.0))],
        output: Some(PinType::Pose),
        settings: &[setting("weight", S::Float)],
        start: |_| NodeKind::Blend2 { weight: 0.5 },
        example: || NodeKind::Blend2 { weight: 0.25 },
    },
    KindInfo {
        name: "BlendSpace1D",
        family: Family::Source,
        hint: "Clips on an axis, blended by a position, on one synchronized phase",
        palette: Palette::Always,
        inputs: &[float("position", SamplePositions)],
        output: Some(PinType::Pose),
        settings: &[
            setting("looping", S::Bool),
            setting("position", S::Float),
            setting("samples", S::Samples),
        ],
        start: |_| NodeKind::BlendSpace1D { samples: Vec::new(), position: 0.0, looping: true },
        example: || NodeKind::BlendSpace1D {
            samples: vec![
                BlendSample { clip: EXAMPLE_CLIP.into(), position: 0.0, speed: 1.0 },
                BlendSample { clip: EXAMPLE_CLIP.into(), position: 2.0, speed: 1.5 },
            ],
            position: 0.5,
            looping: true,
        },
    },
    KindInfo {
        name: "BlendSpace2D",
        family: Family::Source,
        hint: "Clips on a plane, triangulated, blended by a point, on one synchronized phase",
        palette: Palette::Always,
        inputs: &[float("x", SamplePositions), float("y", SamplePositions)],
        output: Some(PinType::Pose),
        settings: &[
            setting("looping", S::Bool),
            setting("x", S::Float),
            setting("y", S::Float),
            setting("samples2d", S::Samples2D),
        ],
        start: |_| NodeKind::BlendSpace2D { samples: Vec::new(), x: 0.0, y: 0.0, looping: true },
        example: || NodeKind::BlendSpace2D {
            samples: vec![
                BlendSample2D { clip: EXAMPLE_CLIP.into(), position: (0.0, 0.0), speed: 1.0 },
                BlendSample2D { clip: EXAMPLE_CLIP.into(), position: (2.0, 0.0), speed: 1.5 },
                BlendSample2D { clip: EXAMPLE_CLIP.into(), position: (0.0, 1.0), speed: 0.5 },
            ],
            x: 0.5,
            y: 0.25,
            looping: true,
        },
    },
    KindInfo {
        name: "Additive",
        family: Family::Blend,
        hint: "Adds (layer - reference) onto base",
        palette: Palette::Always,
        inputs: &[pose("base"), pose("layer"), pose("reference"), float("weight", Clamped(0.0, 1.0))],
        output: Some(PinType::Pose),
        settings: &[setting("weight", S::Float)],
        start: |_| NodeKind::Additive { weight: 1.0 },
        example: || NodeKind::Additive { weight: 0.75 },
    },
    KindInfo {
        name: "Mask",
        family: Family::Blend,
        hint: "Layers a pose over base on chosen bones",
        palette: Palette::Always,
        inputs: &[pose("base"), pose("layer"), float("weight", Clamped(0.0, 1.0))],
        output: Some(PinType::Pose),
        settings: &[setting("weight", S::Float), setting("subtrees", S::Subtrees)],
        start: |_| NodeKind::Mask { weight: 1.0, subtrees: Vec::new() },
        example: || NodeKind::Mask {
            weight: 0.5,
            subtrees: vec![MaskSubtree { bone: EXAMPLE_BONE.into(), weight: 1.0, falloff: 0.25 }],
        },
    },
    KindInfo {
        name: "Adjust",
        family: Family::Modifier,
        hint: "Rotates, aims, offsets or scales bones in model space",
        palette: Palette::Always,
        inputs: &[pose("pose")],
        output: Some(PinType::Pose),
        settings: &[setting("entries", S::Adjusts)],
        start: |_| NodeKind::Adjust { entries: Vec::new() },
        example: || NodeKind::Adjust {
            entries: vec![
                AdjustEntry {
                    bone: EXAMPLE_BONE.into(),
                    op: AdjustOp::Rotate { axis: Vec3::Y },
                    amount: Drive::Parameter(EXAMPLE_PARAMETER.into()),
                },
                AdjustEntry { bone: EXAMPLE_BONE.into(), op: AdjustOp::Scale, amount: Drive::Constant(1.1) },
            ],
        },
    },
    KindInfo {
        name: "TimeScale",
        family: Family::Modifier,
        hint: "Scales the playback rate of everything upstream",
        palette: Palette::Always,
        inputs: &[pose("pose"), float("scale", Typical(0.0, 2.0))],
        output: Some(PinType::Pose),
        settings: &[setting("scale", S::Float)],
        start: |_| NodeKind::TimeScale { scale: 1.0 },
        example: || NodeKind::TimeScale { scale: 1.5 },
    },
    KindInfo {
        name: "TwoBoneIk",
        family: Family::Modifier,
        hint: "Bends a limb (hip, knee, ankle) so its end reaches a target point",
        palette: Palette::Always,
        inputs: TARGET_INPUTS,
        output: Some(PinType::Pose),
        settings: &[
            setting("weight", S::Float),
            setting("x", S::Float),
            setting("y", S::Float),
            setting("z", S::Float),
            setting("target_bone", S::Bone),
            setting("start", S::Bone),
            setting("mid", S::Bone),
            setting("end", S::Bone),
            setting("pole", S::Vector),
            setting("mid_axis", S::Vector),
            setting("soften", S::Float),
        ],
        start: |_| NodeKind::TwoBoneIk {
            start: String::new(),
            mid: String::new(),
            end: String::new(),
            x: 0.0,
            y: 0.0,
            z: 0.0,
            target_bone: String::new(),
            pole: Vec3::Z,
            mid_axis: Vec3::X,
            soften: 0.97,
            weight: 1.0,
        },
        example: || NodeKind::TwoBoneIk {
            start: EXAMPLE_BONE.into(),
            mid: "bone2".into(),
            end: "bone3".into(),
            x: 0.1,
            y: 0.15,
            z: 0.05,
            target_bone: "bone0".into(),
            pole: Vec3::Z,
            mid_axis: Vec3::X,
            soften: 0.9,
            weight: 0.75,
        },
    },
    KindInfo {
        name: "LookAt",
        family: Family::Modifier,
        hint: "Turns a bone (a head) to look at a target point, within limits",
        palette: Palette::Always,
        inputs: TARGET_INPUTS,
        output: Some(PinType::Pose),
        settings: &[
            setting("weight", S::Float),
            setting("x", S::Float),
            setting("y", S::Float),
            setting("z", S::Float),
            setting("target_bone", S::Bone),
            setting("bone", S::Bone),
            setting("forward", S::Vector),
            setting("up", S::Vector),
            setting("offset", S::Vector),
            setting("yaw", S::Float),
            setting("pitch", S::Float),
            setting("chain", S::LookChain),
        ],
        start: |_| NodeKind::LookAt {
            bone: String::new(),
            x: 0.0,
            y: 1.6,
            z: 1.0,
            target_bone: String::new(),
            forward: Vec3::Z,
            up: Vec3::Y,
            offset: Vec3::ZERO,
            yaw: 1.2,
            pitch: 0.7,
            chain: Vec::new(),
            weight: 1.0,
        },
        example: || NodeKind::LookAt {
            bone: EXAMPLE_BONE.into(),
            x: 0.3,
            y: 0.2,
            z: 0.5,
            target_bone: "bone0".into(),
            forward: Vec3::Z,
            up: Vec3::Y,
            offset: Vec3::new(0.0, 0.05, 0.05),
            yaw: 1.0,
            pitch: 0.5,
            chain: vec![LookLink { bone: "bone0".into(), share: 0.3 }],
            weight: 0.5,
        },
    },
    KindInfo {
        name: "FootPlant",
        family: Family::Modifier,
        hint: "Keeps both feet on a sloped or raised ground plane, dropping the hips to reach",
        palette: Palette::Always,
        inputs: &[
            pose("pose"),
            float("height", Typical(-0.5, 0.5)),
            float("slope", Typical(-0.5, 0.5)),
            float("weight", Clamped(0.0, 1.0)),
        ],
        output: Some(PinType::Pose),
        settings: &[
            setting("weight", S::Float),
            setting("height", S::Float),
            setting("slope", S::Float),
            setting("hips", S::Bone),
            setting("left", S::Chain),
            setting("right", S::Chain),
            setting("max_lift", S::Float),
            setting("max_drop", S::Float),
            setting("mid_axis", S::Vector),
        ],
        start: |_| NodeKind::FootPlant {
            hips: String::new(),
            left: Default::default(),
            right: Default::default(),
            height: 0.0,
            slope: 0.0,
            max_lift: 0.4,
            max_drop: 0.4,
            mid_axis: Vec3::X,
            weight: 1.0,
        },
        example: || NodeKind::FootPlant {
            hips: EXAMPLE_BONE.into(),
            left: ["bone2".into(), "bone3".into(), "bone4".into()],
            right: ["bone5".into(), "bone6".into(), "bone7".into()],
            height: 0.05,
            slope: 0.1,
            max_lift: 0.3,
            max_drop: 0.2,
            mid_axis: Vec3::X,
            weight: 0.8,
        },
    },
    KindInfo {
        name: "StateMachine",
        family: Family::Source,
        hint: "States and transitions: plays one state, blends two while a transition runs",
        palette: Palette::Always,
        inputs: &[],
        output: Some(PinType::Pose),
        settings: &[setting("machine", S::Machine)],
        start: |s| NodeKind::StateMachine { machine: start_machine(s.clip) },
        example: || NodeKind::StateMachine { machine: example_machine() },
    },
    KindInfo {
        name: "Parameter",
        family: Family::Parameter,
        hint: "Reads a parameter (drives a float pin)",
        palette: Palette::PerParameter,
        inputs: &[],
        output: Some(PinType::Float),
        settings: &[setting("name", S::Parameter)],
        start: |s| NodeKind::Parameter { name: s.parameter.to_owned() },
        example: || NodeKind::Parameter { name: EXAMPLE_PARAMETER.into() },
    },
    KindInfo {
        name: "Output",
        family: Family::Output,
        hint: "The graph's result",
        palette: Palette::OncePerGraph,
        inputs: &[pose("pose")],
        output: None,
        settings: &[],
        start: |_| NodeKind::Output,
        example: || NodeKind::Output,
    },
    KindInfo {
        name: "Unknown",
        family: Family::Unknown,
        hint: "A node of a kind this build does not know, kept as the file wrote it",
        palette: Palette::Never,
        inputs: &[],
        output: None,
        settings: &[],
        start: |_| NodeKind::Unknown { kind: "Unknown".into(), settings: String::new() },
        example: unknown_example,
    },
];

/// A new machine: one state, named Idle, playing `clip`, which is the entry.
fn start_machine(clip: &str) -> StateMachine {
    StateMachine {
        states: vec![State {
            name: "Idle".into(),
            source: StateSource::Clip { clip: clip.to_owned(), speed: 1.0, looping: true },
            at: [0.0, 0.0],
        }],
        entry: "Idle".into(),
        transitions: Vec::new(),
        any_at: [0.0, -120.0],
    }
}

/// A machine of two states on [`EXAMPLE_CLIP`] (a clip and a blend space on
/// [`EXAMPLE_PARAMETER`]) with a transition each way, one conditional.
fn example_machine() -> StateMachine {
    let mut there = Transition::new(Some("Idle"), "Move");
    there.conditions.push(Condition { parameter: EXAMPLE_PARAMETER.into(), test: Test::Greater(0.1) });
    there.sync = SyncRule::Phase;
    let mut back = Transition::new(Some("Move"), "Idle");
    back.exit_time = Some(0.5);
    back.curve = crate::easing::Easing::InOutSine;
    StateMachine {
        states: vec![
            State {
                name: "Idle".into(),
                source: StateSource::Clip { clip: EXAMPLE_CLIP.into(), speed: 1.0, looping: true },
                at: [0.0, 0.0],
            },
            State {
                name: "Move".into(),
                source: StateSource::BlendSpace {
                    samples: vec![BlendSample { clip: EXAMPLE_CLIP.into(), position: 0.0, speed: 1.0 }],
                    parameter: EXAMPLE_PARAMETER.into(),
                    looping: true,
                },
                at: [200.0, 0.0],
            },
        ],
        entry: "Idle".into(),
        transitions: vec![there, back],
        any_at: [0.0, -120.0],
    }
}

/// A node of a kind from a newer Marrow naming a clip, as a graph file reads it.
fn unknown_example() -> NodeKind {
    const FILE: &str =
        "(version: 1, nodes: [(id: 0, kind: \"FromTheFuture\", clip: \"clips/future.clip.ron\")])";
    super::file::load_graph(FILE).ok().and_then(|(g, _)| g.nodes.into_iter().next()).map_or_else(
        || NodeKind::Unknown { kind: "FromTheFuture".into(), settings: String::new() },
        |n| n.kind,
    )
}

impl NodeKind {
    /// The kind's place in [`KINDS`].
    pub fn index(&self) -> usize {
        match self {
            NodeKind::Clip { .. } => 0,
            NodeKind::Blend2 { .. } => 1,
            NodeKind::BlendSpace1D { .. } => 2,
            NodeKind::BlendSpace2D { .. } => 3,
            NodeKind::Additive { .. } => 4,
            NodeKind::Mask { .. } => 5,
            NodeKind::Adjust { .. } => 6,
            NodeKind::TimeScale { .. } => 7,
            NodeKind::TwoBoneIk { .. } => 8,
            NodeKind::LookAt { .. } => 9,
            NodeKind::FootPlant { .. } => 10,
            NodeKind::StateMachine { .. } => 11,
            NodeKind::Parameter { .. } => 12,
            NodeKind::Output => 13,
            NodeKind::Unknown { .. } => 14,
        }
    }

    /// The kind's description.
    pub fn info(&self) -> &'static KindInfo {
        &KINDS[self.index()]
    }

    /// The description of the kind a file names `name`, if this build knows it.
    pub fn info_named(name: &str) -> Option<&'static KindInfo> {
        KINDS.iter().find(|k| k.name == name && k.family != Family::Unknown)
    }

    /// One example of every kind, in [`KINDS`] order (see [`KindInfo::example`]).
    pub fn examples() -> Vec<NodeKind> {
        KINDS.iter().map(|k| (k.example)()).collect()
    }

    /// The clip asset paths the node names.
    pub fn clip_refs(&self) -> Vec<&str> {
        match self {
            NodeKind::Clip { clip, .. } => vec![clip.as_str()],
            NodeKind::BlendSpace1D { samples, .. } => samples.iter().map(|s| s.clip.as_str()).collect(),
            NodeKind::BlendSpace2D { samples, .. } => samples.iter().map(|s| s.clip.as_str()).collect(),
            NodeKind::StateMachine { machine } => machine.clip_refs(),
            NodeKind::Parameter { .. }
            | NodeKind::Blend2 { .. }
            | NodeKind::Additive { .. }
            | NodeKind::Mask { .. }
            | NodeKind::Adjust { .. }
            | NodeKind::TimeScale { .. }
            | NodeKind::TwoBoneIk { .. }
            | NodeKind::LookAt { .. }
            | NodeKind::FootPlant { .. }
            | NodeKind::Output
            | NodeKind::Unknown { .. } => Vec::new(),
        }
    }

    /// The clip asset paths the node names, to rewrite (a clip renamed or moved).
    pub fn clip_refs_mut(&mut self) -> Vec<&mut String> {
        match self {
            NodeKind::Clip { clip, .. } => vec![clip],
            NodeKind::BlendSpace1D { samples, .. } => samples.iter_mut().map(|s| &mut s.clip).collect(),
            NodeKind::BlendSpace2D { samples, .. } => samples.iter_mut().map(|s| &mut s.clip).collect(),
            NodeKind::StateMachine { machine } => machine.clip_refs_mut(),
            NodeKind::Parameter { .. }
            | NodeKind::Blend2 { .. }
            | NodeKind::Additive { .. }
            | NodeKind::Mask { .. }
            | NodeKind::Adjust { .. }
            | NodeKind::TimeScale { .. }
            | NodeKind::TwoBoneIk { .. }
            | NodeKind::LookAt { .. }
            | NodeKind::FootPlant { .. }
            | NodeKind::Output
            | NodeKind::Unknown { .. } => Vec::new(),
        }
    }

    /// The parameter names the node reads (a Parameter node's name, an adjust's driver).
    pub fn param_refs(&self) -> Vec<&str> {
        match self {
            NodeKind::Parameter { name } => vec![name.as_str()],
            NodeKind::Adjust { entries } => entries
                .iter()
                .filter_map(|e| match &e.amount {
                    Drive::Parameter(p) => Some(p.as_str()),
                    Drive::Constant(_) => None,
                })
                .collect(),
            NodeKind::StateMachine { machine } => machine.param_refs(),
            NodeKind::Clip { .. }
            | NodeKind::Blend2 { .. }
            | NodeKind::BlendSpace1D { .. }
            | NodeKind::BlendSpace2D { .. }
            | NodeKind::Additive { .. }
            | NodeKind::Mask { .. }
            | NodeKind::TimeScale { .. }
            | NodeKind::TwoBoneIk { .. }
            | NodeKind::LookAt { .. }
            | NodeKind::FootPlant { .. }
            | NodeKind::Output
            | NodeKind::Unknown { .. } => Vec::new(),
        }
    }

    /// The parameter names the node reads, to rewrite (a parameter renamed).
    pub fn param_refs_mut(&mut self) -> Vec<&mut String> {
        match self {
            NodeKind::Parameter { name } => vec![name],
            NodeKind::Adjust { entries } => entries
                .iter_mut()
                .filter_map(|e| match &mut e.amount {
                    Drive::Parameter(p) => Some(p),
                    Drive::Constant(_) => None,
                })
                .collect(),
            NodeKind::StateMachine { machine } => machine.param_refs_mut(),
            NodeKind::Clip { .. }
            | NodeKind::Blend2 { .. }
            | NodeKind::BlendSpace1D { .. }
            | NodeKind::BlendSpace2D { .. }
            | NodeKind::Additive { .. }
            | NodeKind::Mask { .. }
            | NodeKind::TimeScale { .. }
            | NodeKind::TwoBoneIk { .. }
            | NodeKind::LookAt { .. }
            | NodeKind::FootPlant { .. }
            | NodeKind::Output
            | NodeKind::Unknown { .. } => Vec::new(),
        }
    }

    /// The authored constant of float pin `pin`: the value used while the pin is unconnected
    /// (`None` when the kind has no float pin of that name).
    pub fn constant(&self, pin: &str) -> Option<f32> {
        let (name, value) = match self {
            NodeKind::Blend2 { weight } | NodeKind::Additive { weight } | NodeKind::Mask { weight, .. } => {
                ("weight", *weight)
            }
            NodeKind::BlendSpace1D { position, .. } => ("position", *position),
            NodeKind::BlendSpace2D { x, y, .. } => match pin {
                "x" => ("x", *x),
                _ => ("y", *y),
            },
            NodeKind::TimeScale { scale } => ("scale", *scale),
            NodeKind::TwoBoneIk { x, y, z, weight, .. } | NodeKind::LookAt { x, y, z, weight, .. } => {
                match pin {
                    "x" => ("x", *x),
                    "y" => ("y", *y),
                    "z" => ("z", *z),
                    _ => ("weight", *weight),
                }
            }
            NodeKind::FootPlant { height, slope, weight, .. } => match pin {
                "height" => ("height", *height),
                "slope" => ("slope", *slope),
                _ => ("weight", *weight),
            },
            NodeKind::Clip { .. }
            | NodeKind::Parameter { .. }
            | NodeKind::Adjust { .. }
            | NodeKind::StateMachine { .. }
            | NodeKind::Output
            | NodeKind::Unknown { .. } => return None,
        };
        (name == pin).then_some(value)
    }

    /// The authored constant of float pin `pin`, to change (see [`NodeKind::constant`]).
    pub fn constant_mut(&mut self, pin: &str) -> Option<&mut f32> {
        let (name, value) = match self {
            NodeKind::Blend2 { weight } | NodeKind::Additive { weight } | NodeKind::Mask { weight, .. } => {
                ("weight", weight)
            }
            NodeKind::BlendSpace1D { position, .. } => ("position", position),
            NodeKind::BlendSpace2D { x, y, .. } => match pin {
                "x" => ("x", x),
                _ => ("y", y),
            },
            NodeKind::TimeScale { scale } => ("scale", scale),
            NodeKind::TwoBoneIk { x, y, z, weight, .. } | NodeKind::LookAt { x, y, z, weight, .. } => {
                match pin {
                    "x" => ("x", x),
                    "y" => ("y", y),
                    "z" => ("z", z),
                    _ => ("weight", weight),
                }
            }
            NodeKind::FootPlant { height, slope, weight, .. } => match pin {
                "height" => ("height", height),
                "slope" => ("slope", slope),
                _ => ("weight", weight),
            },
            NodeKind::Clip { .. }
            | NodeKind::Parameter { .. }
            | NodeKind::Adjust { .. }
            | NodeKind::StateMachine { .. }
            | NodeKind::Output
            | NodeKind::Unknown { .. } => return None,
        };
        (name == pin).then_some(value)
    }

    /// The range of float pin `pin`'s values (a live slider's span): the description's, with
    /// [`FloatRange::SamplePositions`] read from the node's samples (`None`: no such float pin,
    /// or no samples).
    pub fn input_range(&self, pin: &str) -> Option<(f32, f32)> {
        let range = self.info().inputs.iter().find(|p| p.name == pin)?.range?;
        match range {
            Clamped(lo, hi) | Typical(lo, hi) => Some((lo, hi)),
            SamplePositions => {
                let positions = self.sample_positions(pin);
                let lo = positions.iter().copied().fold(f32::INFINITY, f32::min);
                let hi = positions.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                (lo <= hi).then_some((lo, hi))
            }
        }
    }

    /// The positions of the node's samples along float pin `pin`'s axis (for
    /// [`FloatRange::SamplePositions`]): a 1D space's axis, a 2D space's `x` or `y` coordinates.
    pub fn sample_positions(&self, pin: &str) -> Vec<f32> {
        match self {
            NodeKind::BlendSpace1D { samples, .. } => samples.iter().map(|s| s.position).collect(),
            NodeKind::BlendSpace2D { samples, .. } => match pin {
                "x" => samples.iter().map(|s| s.position.0).collect(),
                "y" => samples.iter().map(|s| s.position.1).collect(),
                _ => Vec::new(),
            },
            NodeKind::Clip { .. }
            | NodeKind::Parameter { .. }
            | NodeKind::Blend2 { .. }
            | NodeKind::Additive { .. }
            | NodeKind::Mask { .. }
            | NodeKind::Adjust { .. }
            | NodeKind::TimeScale { .. }
            | NodeKind::TwoBoneIk { .. }
            | NodeKind::LookAt { .. }
            | NodeKind::FootPlant { .. }
            | NodeKind::StateMachine { .. }
            | NodeKind::Output
            | NodeKind::Unknown { .. } => Vec::new(),
        }
    }
}
