//! Edits of a graph file's content: nodes, wires, settings, parameters, positions.
//!
//! Each [`GraphOp`] computes the next graph from the current one and names its undo step from
//! what it found there ("Connect Clip #1 -> Blend2 #3.a (replaces Clip #2)", "Delete 2 Nodes and
//! 3 Wires"). Ops refer to nodes by their stable [`NodeId`]s and to parameters by name, never by
//! the view's indices, so a step replays the same on a rebuilt view. Node ids are chosen by the
//! panel when it builds an op (fresh ids from [`AnimGraph::fresh_id`]) so that redo gives the same
//! ids again.
//!
//! Not here: drawing the graph (see `crate::panels::graph`), compiling it (the engine).

use marrow_engine::graph::{AnimGraph, Connection, Node, NodeId, NodeKind, ParamValue};

use super::op::EditError;

/// The clip references a node holds ([`NodeKind::clip_refs`]).
pub fn node_clip_refs(kind: &NodeKind) -> Vec<&str> {
    kind.clip_refs()
}

/// Rewrites a node's clip references with `f` ([`NodeKind::clip_refs_mut`]); returns whether
/// any changed.
pub fn rename_node_clip_refs(kind: &mut NodeKind, f: &dyn Fn(&mut String) -> bool) -> bool {
    kind.clip_refs_mut().into_iter().fold(false, |acc, c| f(c) | acc)
}

/// A node's name in undo steps and messages: its kind and id (`Blend2 #3`), or the kind a file
/// The arrow of a wire in step names ("Connect Clip #1 -> Blend2 #3.a"): plain ASCII, which
/// every font draws (the default fonts have no U+2192, which showed as a box in the History).
pub const ARROW: &str = "->";

/// named for an unknown node.
pub fn node_title(node: &Node) -> String {
    match &node.kind {
        NodeKind::Unknown { kind, .. } => format!("{kind}? {}", node.id),
        k => format!("{} {}", k.name(), node.id),
    }
}

/// The nodes that use parameter `name` (a Parameter node reading it, an adjust driven by it).
pub fn parameter_uses(g: &AnimGraph, name: &str) -> Vec<NodeId> {
    g.nodes.iter().filter(|n| n.kind.param_refs().contains(&name)).map(|n| n.id).collect()
}

fn plural(n: usize, one: &str) -> String {
    if n == 1 { format!("1 {one}") } else { format!("{n} {one}s") }
}

/// A change to a graph.
#[derive(Clone, Debug, PartialEq)]
pub enum GraphOp {
    /// Moves nodes to new canvas positions (a drag: consecutive moves merge into one step).
    MoveNodes(Vec<(NodeId, [f32; 2])>),
    /// Adds nodes with the ids they carry (fresh ones) and connections that touch them (Add Node,
    /// Add and Connect from a dropped wire, Paste, Duplicate). A connection into an input that is
    /// already fed replaces the old wire.
    AddNodes {
        /// What the step is called ("Add Clip", "Paste 3 Nodes").
        label: String,
        /// The nodes.
        nodes: Vec<Node>,
        /// Connections among them, or between them and nodes already in the graph.
        connections: Vec<Connection>,
    },
    /// Deletes nodes and every wire to or from them.
    RemoveNodes(Vec<NodeId>),
    /// Connects `from`'s output to `to`'s input `pin`, replacing the wire that fed it.
    Connect {
        /// Source node.
        from: NodeId,
        /// Target node.
        to: NodeId,
        /// Target pin.
        pin: String,
    },
    /// Removes the wire feeding `to`'s input `pin`.
    Disconnect {
        /// Target node.
        to: NodeId,
        /// Target pin.
        pin: String,
    },
    /// Replaces a node's settings (its kind stays). `field` names what changed, so that a drag
    /// on one setting merges into one step.
    SetNode {
        /// The node.
        node: NodeId,
        /// The new settings.
        kind: NodeKind,
        /// The setting changed ("weight", "samples"); drags on the same field merge.
        field: String,
    },
    /// Declares a parameter.
    AddParameter {
        /// Unique name.
        name: String,
        /// Type and default.
        default: ParamValue,
    },
    /// Renames a parameter and every use of it (Parameter nodes, adjust drives).
    RenameParameter {
        /// Current name.
        from: String,
        /// New name.
        to: String,
    },
    /// Deletes a parameter; refused while a node uses it.
    DeleteParameter {
        /// Its name.
        name: String,
    },
    /// Sets a parameter's authored default (its type may change).
    SetParameterDefault {
        /// Its name.
        name: String,
        /// The new default.
        value: ParamValue,
    },
}

impl GraphOp {
    /// The undo step's name, before looking at the graph.
    pub fn label(&self) -> String {
        match self {
            GraphOp::MoveNodes(m) => format!("Move {}", plural(m.len(), "Node")),
            GraphOp::AddNodes { label, .. } => label.clone(),
            GraphOp::RemoveNodes(ids) => format!("Delete {}", plural(ids.len(), "Node")),
            GraphOp::Connect { .. } => "Connect".to_owned(),
            GraphOp::Disconnect { .. } => "Disconnect".to_owned(),
            GraphOp::SetNode { field, .. } => format!("Set {field}"),
            GraphOp::AddParameter { name, .. } => format!("Add Parameter {name}"),
            GraphOp::RenameParameter { from, to } => format!("Rename Parameter {from} {ARROW} {to}"),
            GraphOp::DeleteParameter { name } => format!("Delete Parameter {name}"),
            GraphOp::SetParameterDefault { name, .. } => format!("Set Default of {name}"),
        }
    }

    /// The drag target (see [`super::Op::merge_target`]): moves merge with moves, a setting's
    /// drag with itself, a default's drag with itself.
    pub fn merge_target(&self) -> Option<String> {
        match self {
            GraphOp::MoveNodes(_) => Some("positions".to_owned()),
            GraphOp::SetNode { node, field, .. } => Some(format!("node {node} {field}")),
            GraphOp::SetParameterDefault { name, .. } => Some(format!("default {name}")),
            _ => None,
        }
    }

    /// The graph after the op and the undo step's name.
    pub fn apply(&self, g: &AnimGraph) -> Result<(AnimGraph, String), EditError> {
        let bad = |m: String| EditError::Invalid(m);
        let mut g = g.clone();
        let mut label = self.label();
        let title = |g: &AnimGraph, id: NodeId| g.node(id).map_or_else(|| format!("#{}", id.0), node_title);
        match self {
            GraphOp::MoveNodes(moves) => {
                for (id, pos) in moves {
                    if !(pos[0].is_finite() && pos[1].is_finite()) {
                        return Err(bad("a node position is not finite".to_owned()));
                    }
                    let n = g.node_mut(*id).ok_or_else(|| bad(format!("no node {id}")))?;
                    n.position = *pos;
                }
            }
            GraphOp::AddNodes { nodes, connections, .. } => {
                let fresh = g.fresh_id();
                for n in nodes {
                    if n.id.0 < fresh || nodes.iter().filter(|m| m.id == n.id).count() > 1 {
                        return Err(bad(format!("node id {} is already taken", n.id)));
                    }
                    if !(n.position[0].is_finite() && n.position[1].is_finite()) {
                        return Err(bad("a node position is not finite".to_owned()));
                    }
                }
                g.nodes.extend(nodes.iter().cloned());
                g.next_id = g.fresh_id();
                let mut replaced = Vec::new();
                for c in connections {
                    check_wire(&g, c.from, c.to, &c.pin)?;
                    if let Some(old) = g.connect(c.from, c.to, c.pin.clone()) {
                        replaced.push(title(&g, old.from));
                    }
                }
                if !replaced.is_empty() {
                    label = format!("{label} (replaces {})", replaced.join(", "));
                }
            }
            GraphOp::RemoveNodes(ids) => {
                if let [one] = ids.as_slice() {
                    label = format!("Delete {}", title(&g, *one));
                }
                let mut wires = 0;
                for id in ids {
                    let (_, removed) = g.remove_node(*id).ok_or_else(|| bad(format!("no node {id}")))?;
                    wires += removed.len();
                }
                if wires > 0 {
                    label = format!("{label} and {}", plural(wires, "Wire"));
                }
            }
            GraphOp::Connect { from, to, pin } => {
                let (f, t) = check_wire(&g, *from, *to, pin)?;
                label = format!("Connect {} {ARROW} {}.{pin}", node_title(&f), node_title(&t));
                if g.input(*to, pin) == Some(*from) {
                    return Ok((g, label)); // already so: the document records no step
                }
                if let Some(old) = g.connect(*from, *to, pin.clone()) {
                    label = format!("{label} (replaces {})", title(&g, old.from));
                }
            }
            GraphOp::Disconnect { to, pin } => {
                let from = g.input(*to, pin).ok_or_else(|| bad(format!("nothing feeds {to}.{pin}")))?;
                label = format!("Disconnect {} {ARROW} {}.{pin}", title(&g, from), title(&g, *to));
                g.disconnect(*to, pin);
            }
            GraphOp::SetNode { node, kind, field } => {
                let n = g.node_mut(*node).ok_or_else(|| bad(format!("no node {node}")))?;
                if std::mem::discriminant(&n.kind) != std::mem::discriminant(kind) {
                    return Err(bad(format!("{} cannot change its kind", n.id)));
                }
                n.kind = kind.clone();
                label = format!("Set {} {field}", node_title(n));
            }
            GraphOp::AddParameter { name, default } => {
                check_name(name)?;
                if !default.is_finite() {
                    return Err(bad(format!("the default of {name:?} is not finite")));
                }
                if g.parameter(name).is_some() {
                    return Err(bad(format!("a parameter named {name:?} exists already")));
                }
                g.add_parameter(name.clone(), *default);
            }
            GraphOp::RenameParameter { from, to } => {
                check_name(to)?;
                if from == to {
                    return Ok((g, label));
                }
                if g.parameter(to).is_some() {
                    return Err(bad(format!("a parameter named {to:?} exists already")));
                }
                let p = g
                    .parameters
                    .iter_mut()
                    .find(|p| p.name == *from)
                    .ok_or_else(|| bad(format!("no parameter {from:?}")))?;
                p.name = to.clone();
                for n in &mut g.nodes {
                    for p in n.kind.param_refs_mut() {
                        if p == from {
                            *p = to.clone();
                        }
                    }
                }
            }
            GraphOp::DeleteParameter { name } => {
                let uses = parameter_uses(&g, name);
                if !uses.is_empty() {
                    let names: Vec<String> = uses.iter().map(|&id| title(&g, id)).collect();
                    return Err(EditError::InUse { asset: format!("parameter {name:?}"), users: names });
                }
                let before = g.parameters.len();
                g.parameters.retain(|p| p.name != *name);
                if g.parameters.len() == before {
                    return Err(bad(format!("no parameter {name:?}")));
                }
            }
            GraphOp::SetParameterDefault { name, value } => {
                if !value.is_finite() {
                    return Err(bad(format!("the default of {name:?} is not finite")));
                }
                let p = g
                    .parameters
                    .iter_mut()
                    .find(|p| p.name == *name)
                    .ok_or_else(|| bad(format!("no parameter {name:?}")))?;
                // A parameter keeps its type: the wires it feeds were checked against it.
                if p.default.type_name() != value.type_name() {
                    return Err(bad(format!(
                        "{name:?} is a {}; its default cannot become a {}",
                        p.default.type_name(),
                        value.type_name()
                    )));
                }
                p.default = *value;
            }
        }
        Ok((g, label))
    }
}

/// The two ends of a wire `from` -> `to.pin`, or why the wire cannot be made (a missing node,
/// a node feeding itself, a pin the node lacks, types that differ, a cycle it would close).
pub fn check_wire(g: &AnimGraph, from: NodeId, to: NodeId, pin: &str) -> Result<(Node, Node), EditError> {
    let bad = |m: String| EditError::Invalid(m);
    let (Some(f), Some(t)) = (g.node(from), g.node(to)) else {
        return Err(bad(format!("a wire names a missing node ({from} {ARROW} {to})")));
    };
    if from == to {
        return Err(bad("a node cannot feed itself".to_owned()));
    }
    let want =
        t.kind.input_type(pin).ok_or_else(|| bad(format!("{} has no input {pin:?}", node_title(t))))?;
    let have = g.output_type(&f.kind);
    if have != Some(want) {
        return Err(bad(format!(
            "{} gives {}, {}.{pin} takes a {want}",
            node_title(f),
            have.map_or("nothing".to_owned(), |t| format!("a {t}")),
            node_title(t)
        )));
    }
    if feeds(g, to, from) {
        return Err(bad(format!(
            "{} {ARROW} {}.{pin} would make a cycle ({} already feeds {})",
            node_title(f),
            node_title(t),
            node_title(t),
            node_title(f)
        )));
    }
    Ok((f.clone(), t.clone()))
}

/// Whether `a`'s output reaches `b` through the graph's wires.
fn feeds(g: &AnimGraph, a: NodeId, b: NodeId) -> bool {
    let mut stack = vec![a];
    let mut seen = std::collections::HashSet::new();
    while let Some(n) = stack.pop() {
        if n == b {
            return true;
        }
        if seen.insert(n) {
            stack.extend(g.connections.iter().filter(|c| c.from == n).map(|c| c.to));
        }
    }
    false
}

fn check_name(name: &str) -> Result<(), EditError> {
    if name.trim().is_empty() || name.trim() != name {
        return Err(EditError::Invalid(format!(
            "a parameter name cannot be empty or start or end with a space ({name:?})"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod glyph_tests {
    #[test]
    fn the_wire_arrow_of_step_names_is_drawn_by_the_default_fonts() {
        let ctx = egui::Context::default();
        ctx.run_ui(egui::RawInput::default(), |_| {}).textures_delta.clear();
        let font = egui::FontId::proportional(13.0);
        let label = format!("Connect Adjust #2 {} TimeScale #4.pose", super::ARROW);
        assert!(ctx.fonts_mut(|f| f.has_glyphs(&font, &label)), "{label}");
    }
}
