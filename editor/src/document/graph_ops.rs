//! Edits of a graph file's content: nodes, wires, settings, parameters, positions.
//!
//! Not here: drawing the graph (see `crate::panels::graph`).

use marrow_engine::graph::{AnimGraph, NodeKind};

use super::op::EditError;

/// The clip references a node holds.
pub fn node_clip_refs(kind: &NodeKind) -> Vec<&str> {
    match kind {
        NodeKind::Clip { clip, .. } => vec![clip.as_str()],
        NodeKind::BlendSpace1D { samples, .. } => samples.iter().map(|s| s.clip.as_str()).collect(),
        _ => Vec::new(),
    }
}

/// Rewrites a node's clip references with `f`; returns whether any changed.
pub fn rename_node_clip_refs(kind: &mut NodeKind, f: &dyn Fn(&mut String) -> bool) -> bool {
    match kind {
        NodeKind::Clip { clip, .. } => f(clip),
        NodeKind::BlendSpace1D { samples, .. } => {
            samples.iter_mut().fold(false, |acc, s| f(&mut s.clip) | acc)
        }
        _ => false,
    }
}

/// A change to a graph.
#[derive(Clone, Debug, PartialEq)]
pub enum GraphOp {
    /// Moves nodes to new canvas positions.
    MoveNodes(Vec<(marrow_engine::graph::NodeId, [f32; 2])>),
}

impl GraphOp {
    /// The undo step's name.
    pub fn label(&self) -> String {
        match self {
            GraphOp::MoveNodes(_) => "Move Nodes".to_owned(),
        }
    }

    /// The drag target (see [`super::Op::merge_target`]).
    pub fn merge_target(&self) -> Option<String> {
        match self {
            GraphOp::MoveNodes(_) => Some("positions".to_owned()),
        }
    }

    /// The graph after the op.
    pub fn apply(&self, g: &AnimGraph) -> Result<AnimGraph, EditError> {
        let mut g = g.clone();
        match self {
            GraphOp::MoveNodes(moves) => {
                for (id, pos) in moves {
                    if !(pos[0].is_finite() && pos[1].is_finite()) {
                        return Err(EditError::Invalid("a node position is not finite".to_owned()));
                    }
                    let n = g.node_mut(*id).ok_or_else(|| EditError::Invalid(format!("no node {id}")))?;
                    n.position = *pos;
                }
            }
        }
        Ok(g)
    }
}
