//! The compile status of the graph shown: each fault on its node (the compiler's, against the
//! skeleton the graph is checked with, and what opening the file dropped), cached per revision,
//! graph, scene and preview.

use super::*;

/// Compile status of the graph shown, cached per revision.
#[derive(Debug, Default)]
pub(super) struct Status {
    /// What the status was computed for.
    pub(super) key: Option<StatusKey>,
    /// Messages per node.
    pub(super) faults: HashMap<NodeId, Vec<String>>,
    /// Messages on no node (no Output, a doubled parameter).
    pub(super) general: Vec<String>,
    /// A StateMachine node's faults by where they are (the machine, a state, a transition).
    pub(super) machine_faults: HashMap<NodeId, HashMap<marrow_engine::graph::MachinePlace, Vec<String>>>,
    /// The skeleton the graph was checked against.
    pub(super) skeleton: Option<Arc<Skeleton>>,
}

/// What a [`Status`] depends on: the document revision, the graph, the scene shown and the
/// preview (rig, graph).
#[derive(Debug)]
pub(super) struct StatusKey {
    revision: u64,
    graph: String,
    scene: Option<String>,
    preview: Option<(String, String)>,
}

impl StatusKey {
    /// Whether this key was made for these inputs (compared without building a new key).
    fn is(&self, revision: u64, graph: &str, scene: Option<&str>, preview: Option<(&str, &str)>) -> bool {
        self.revision == revision
            && self.graph == graph
            && self.scene.as_deref() == scene
            && self.preview.as_ref().map(|(a, b)| (a.as_str(), b.as_str())) == preview
    }
}

impl GraphPanel {
    pub(super) fn refresh_status(&mut self, cx: &Cx, path: &str, graph: &AnimGraph) {
        // The skeleton chosen and the errors found change only with the document, the scene
        // shown or the preview: a frame that changes none of them does no work here.
        let preview = cx.session.preview().map(|p| (p.rig.as_str(), p.graph.as_str()));
        let scene = cx.session.scene();
        let revision = cx.doc.revision();
        if self.status.key.as_ref().is_some_and(|k| k.is(revision, path, scene, preview)) {
            return;
        }
        let key = StatusKey {
            revision,
            graph: path.to_owned(),
            scene: scene.map(str::to_owned),
            preview: preview.map(|(a, b)| (a.to_owned(), b.to_owned())),
        };
        let skeleton = graph_skeleton(cx, path, graph);
        let errors: Vec<GraphError> = match &skeleton {
            Some(sk) => cx.session.library().compile_graph(path, sk).err().unwrap_or_default(),
            None => marrow_engine::graph::compile::validate_structure(graph).0,
        };
        let mut faults: HashMap<NodeId, Vec<String>> = HashMap::new();
        let mut general = Vec::new();
        let mut machine_faults: HashMap<NodeId, HashMap<_, Vec<String>>> = HashMap::new();
        for e in errors {
            let place = match &e {
                GraphError::Machine { node, at, what, .. } => Some((*node, at.clone(), what.clone())),
                GraphError::GraphCycle { node, state, .. } => Some((
                    *node,
                    marrow_engine::graph::MachinePlace::State(state.clone()),
                    strip_node(&e.to_string()),
                )),
                _ => None,
            };
            if let Some((node, at, what)) = place {
                machine_faults.entry(node).or_default().entry(at).or_default().push(what);
            }
            let text = strip_node(&e.to_string());
            match e.node() {
                Some(n) => faults.entry(n).or_default().push(text),
                None if matches!(e, GraphError::NoOutput) => general
                    .push("The graph has no Output node: right-click the canvas to add one.".to_owned()),
                None => general.push(text),
            }
        }
        // Of the faults found on open, only what the graph no longer holds (a dropped dangling
        // wire): the rest (cycles, mismatched wires, unknown kinds, empty settings) are still
        // there and the compiler reports them live, so they go away when fixed.
        for (p, e) in &cx.ui.graph_load_faults {
            let dropped = matches!(
                e,
                marrow_engine::graph::GraphFileError::Graph(GraphError::DanglingConnection { .. })
            );
            if p == path && dropped {
                let text = format!("on open: {}", strip_node(&e.to_string()));
                match e.node() {
                    Some(n) if graph.node(n).is_some() => faults.entry(n).or_default().push(text),
                    _ => general.push(text),
                }
            }
        }
        self.status = Status { key: Some(key), faults, general, skeleton, machine_faults };
    }
}

/// An error's text without the "node #3 (Blend2): " prefix (the node shows it).
fn strip_node(text: &str) -> String {
    match (text.starts_with("node #"), text.find("): ")) {
        (true, Some(i)) => text[i + 3..].to_owned(),
        _ => text.to_owned(),
    }
}

/// The skeleton a graph is checked against: the previewed rig's, else the rig of an Animator
/// that plays it, else the skeleton its clips are for, else the first rig's.
fn graph_skeleton(cx: &Cx, path: &str, graph: &AnimGraph) -> Option<Arc<Skeleton>> {
    let world = cx.session.world();
    let of_rig =
        |rig: &str| cx.session.entity(rig).and_then(|e| world.animator(e)).map(|a| a.skeleton().clone());
    if let Some(p) = cx.session.preview().filter(|p| p.graph == path)
        && let Some(sk) = of_rig(&p.rig)
    {
        return Some(sk);
    }
    if let Some((_, scene)) = cx.scene() {
        for r in world.rigs() {
            let Some(rp) = world.path(r) else { continue };
            if crate::document::tree::find(scene, &rp)
                .and_then(|e| e.animator.as_ref())
                .is_some_and(|a| a.graph.as_deref() == Some(path))
                && let Some(sk) = of_rig(&rp)
            {
                return Some(sk);
            }
        }
    }
    let lib = cx.session.library();
    let clip_skeleton = graph
        .nodes
        .iter()
        .flat_map(|n| crate::document::graph_ops::node_clip_refs(&n.kind))
        .find_map(|c| lib.clips(c).first().map(|c| c.skeleton.clone()));
    if let Some(name) = clip_skeleton {
        for r in lib.skeleton_refs() {
            if let Ok(sk) = lib.skeleton(r)
                && sk.name == name
            {
                return Some(sk);
            }
        }
    }
    world.rigs().next().and_then(|r| world.animator(r)).map(|a| a.skeleton().clone())
}
