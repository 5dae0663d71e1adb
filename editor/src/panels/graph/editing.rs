//! Editing the graph's nodes as a whole: the command table's Copy, Cut, Paste, Duplicate,
//! Delete, Select All and Frame, and the node menu's Disconnect All; the graph clipboard.

use super::*;

impl GraphPanel {
    pub(super) fn keys(&mut self, ui: &egui::Ui, cx: &mut Cx, path: &str, graph: &AnimGraph) {
        // The editing commands come from the command table (shortcuts, egui-winit's clipboard
        // events, the Edit menu) through the app.
        let actions = std::mem::take(&mut cx.ui.edit_actions);
        let has = |a: UiCommand| actions.contains(&a);
        let sel = cx.ui.graph_selection.clone();
        if (has(UiCommand::Copy) || has(UiCommand::Cut) || has(UiCommand::Duplicate)) && !sel.is_empty() {
            copy(cx, graph, &sel);
            ui.ctx().copy_text(clipboard_text(&cx.ui.graph_clipboard));
        }
        if (has(UiCommand::Delete) || has(UiCommand::Cut)) && !sel.is_empty() {
            delete(cx, path, &sel);
        }
        if has(UiCommand::Paste) {
            paste(cx, path, graph, None, "Paste");
        }
        if has(UiCommand::Duplicate) && !sel.is_empty() {
            paste(cx, path, graph, None, "Duplicate");
        }
        if has(UiCommand::SelectAll) {
            cx.ui.graph_selection = graph.nodes.iter().map(|n| n.id).collect();
        }
        if has(UiCommand::Frame) {
            self.frame_all();
        }
        if ui.ctx().input_mut(|i| i.consume_key(Modifiers::NONE, Key::Escape)) {
            cx.ui.graph_selection.clear();
        }
    }
}

pub(super) fn copy(cx: &mut Cx, graph: &AnimGraph, ids: &[NodeId]) {
    let nodes: Vec<Node> = graph.nodes.iter().filter(|n| ids.contains(&n.id)).cloned().collect();
    let wires: Vec<Connection> =
        graph.connections.iter().filter(|c| ids.contains(&c.from) && ids.contains(&c.to)).cloned().collect();
    cx.ui.graph_clipboard = GraphClipboard { nodes, wires };
}

/// The copied nodes as text for the system clipboard: one title per line.
fn clipboard_text(clip: &GraphClipboard) -> String {
    let mut out = format!("Marrow nodes ({})\n", clip.nodes.len());
    for n in &clip.nodes {
        out.push_str(&crate::document::graph_ops::node_title(n));
        out.push('\n');
    }
    out
}

/// Pastes the clipboard with fresh ids (its internal wires follow), at `at` (graph space) or
/// offset from where the nodes were. An Output is left out when the graph has one.
pub(super) fn paste(cx: &mut Cx, path: &str, graph: &AnimGraph, at: Option<Pos2>, verb: &str) {
    let clip = cx.ui.graph_clipboard.clone();
    let has_output = graph.nodes.iter().any(|n| matches!(n.kind, NodeKind::Output));
    let src: Vec<&Node> =
        clip.nodes.iter().filter(|n| !(has_output && matches!(n.kind, NodeKind::Output))).collect();
    if src.is_empty() {
        return;
    }
    let min = src.iter().fold(Pos2::new(f32::INFINITY, f32::INFINITY), |m, n| {
        Pos2::new(m.x.min(n.position[0]), m.y.min(n.position[1]))
    });
    let offset = match at {
        Some(p) => p - min,
        None => Vec2::new(40.0, 40.0),
    };
    let mut next = graph.fresh_id();
    let mut map = HashMap::new();
    let nodes: Vec<Node> = src
        .iter()
        .map(|n| {
            let id = NodeId(next);
            next += 1;
            map.insert(n.id, id);
            Node { id, position: [n.position[0] + offset.x, n.position[1] + offset.y], kind: n.kind.clone() }
        })
        .collect();
    let connections: Vec<Connection> = clip
        .wires
        .iter()
        .filter_map(|c| {
            Some(Connection { from: *map.get(&c.from)?, to: *map.get(&c.to)?, pin: c.pin.clone() })
        })
        .collect();
    let label = if nodes.len() == 1 {
        format!("{verb} {}", nodes[0].kind.name())
    } else {
        format!("{verb} {} Nodes", nodes.len())
    };
    cx.ui.graph_selection = nodes.iter().map(|n| n.id).collect();
    // The next paste lands further on.
    for n in &mut cx.ui.graph_clipboard.nodes {
        n.position = [n.position[0] + offset.x, n.position[1] + offset.y];
    }
    cx.edit(Op::Graph { path: path.to_owned(), op: GraphOp::AddNodes { label, nodes, connections } });
}

pub(super) fn delete(cx: &mut Cx, path: &str, ids: &[NodeId]) {
    cx.edit(Op::Graph { path: path.to_owned(), op: GraphOp::RemoveNodes(ids.to_vec()) });
    cx.ui.graph_selection.retain(|n| !ids.contains(n));
}

pub(super) fn disconnect_all(cx: &mut Cx, path: &str, graph: &AnimGraph, node: NodeId) {
    let ops: Vec<Op> = graph
        .connections
        .iter()
        .filter(|c| c.from == node || c.to == node)
        .map(|c| Op::Graph {
            path: path.to_owned(),
            op: GraphOp::Disconnect { to: c.to, pin: c.pin.clone() },
        })
        .collect();
    if ops.is_empty() {
        return;
    }
    let title = graph.node(node).map_or_else(|| node.to_string(), crate::document::graph_ops::node_title);
    cx.edit(Op::Batch { label: format!("Disconnect {title}"), ops });
}
