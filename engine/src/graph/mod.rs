//! The blend/adjust graph: how an animator combines clips.
//!
//! Three kinds of state, kept apart:
//! - **authored** ([`model`]): [`AnimGraph`], nodes with stable ids, editor positions, typed pins,
//!   each kind described once in [`kinds`] (name, family, pins, settings, menu entry, the clips
//!   and parameters it names),
//!   connections and parameter declarations; what the editor edits and what [`file`](mod@file) saves as RON;
//! - **compiled** ([`compile`](mod@compile)): [`GraphProgram`], a flat list of sample / blend / add / mask
//!   instructions over a few reusable pose slots, with clips and bones resolved; derived from the
//!   authored graph and rebuilt only when it changes ([`GraphCache`]);
//! - **session** ([`eval`]): [`GraphInstance`], parameter values, playheads, phases and pose slot
//!   storage for one character; never saved.
//!
//! The [`crate::animator::Animator`] plays a program in place of a clip
//! ([`crate::animator::Animator::cross_fade_to_graph`]), with the same crossfade rules.
//!
//! Not here: the editor's graph panel (it edits [`AnimGraph`] directly), clip import, undo.

// The compiler and the evaluator's internals (instructions, flows, players) are reached by the
// editor and the tests; an embedder uses `GraphProgram` and `GraphInstance` (re-exported here).
#[doc(hidden)]
pub mod compile;
#[doc(hidden)]
pub mod eval;
pub mod file;
pub mod kinds;
pub mod machine;
pub mod model;
pub mod plane;

#[doc(hidden)]
pub use compile::Instruction;
pub use compile::{
    ClipSource, GraphCache, GraphError, GraphProgram, GraphSource, MachinePlace, NoGraphs, TargetSlots,
    compile, compile_in,
};
pub use eval::{AdditiveJob, EventKind, GraphAim, GraphIk, GraphInstance, GraphMarkerEvent, GraphPlant};
pub use file::{GRAPH_FILE_VERSION, GraphFile, GraphFileError, load_graph, save_graph};
pub use kinds::{Family, FloatRange, InputPin, KINDS, KindInfo, Palette, SettingInfo, SettingType, Start};
pub use model::{
    AdjustEntry, AdjustOp, AnimGraph, BlendSample, BlendSample2D, Connection, Drive, LookLink,
    MAX_LOOK_LINKS, MaskSubtree, Node, NodeId, NodeKind, ParamDecl, ParamValue, PinType,
};
pub use plane::{TriangulationError, plane_weights, triangulate};
