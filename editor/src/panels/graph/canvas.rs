//! The Graph tab's canvas: the egui-snarl view of the document's graph, live weights on the
//! wires while a preview runs, the measurements tests read, selection and node drags (one step
//! when the pointer is released), and the requests the canvas made sent as edits.

use super::editing::{copy, delete, disconnect_all, paste};
use super::*;

impl GraphPanel {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn canvas(
        &mut self,
        ui: &mut egui::Ui,
        cx: &mut Cx,
        path: &str,
        graph: &AnimGraph,
        inst: Option<&GraphInstance>,
        clips: &[String],
    ) {
        let shown_before = self.view.shows(path);
        if self.view.sync(cx.doc.revision(), path, graph) && !shown_before {
            self.frame = Some(Framing::Open); // a graph opened: readable, centred on its nodes
            self.last_snarl_selection.clear();
        }
        // Nodes deleted (or undone away) leave the selection.
        cx.ui.graph_selection.retain(|n| graph.node(*n).is_some());
        let canvas = ui.available_rect_before_wrap();
        // A press over the canvas, not over a menu or window above it.
        if ui.input(|i| i.pointer.any_pressed()) && ui.rect_contains_pointer(canvas) {
            cx.ui.focus = Focus::Graph;
        }
        if cx.ui.focus == Focus::Graph && !ui.ctx().egui_wants_keyboard_input() {
            self.keys(ui, cx, path, graph);
        }
        let selection = cx.ui.graph_selection.clone();
        let live: HashMap<NodeId, view::Live> = inst.map(|i| view::live_map(i, graph)).unwrap_or_default();
        let previewing = inst.is_some();
        self.index.refresh(cx.doc.revision(), path, graph);
        let mut viewer = GraphViewer {
            graph,
            index: &self.index,
            faults: &self.status.faults,
            live,
            previewing,
            clips,
            selection: &selection,
            search: &mut self.search,
            ops: Vec::new(),
            actions: Vec::new(),
            message: None,
            rects: HashMap::new(),
            in_rows: HashMap::new(),
            out_rows: HashMap::new(),
            transform: TSTransform::IDENTITY,
            set_transform: None,
            can_paste: !cx.ui.graph_clipboard.nodes.is_empty(),
            paste_at: None,
            visible: (self.transform.inverse() * canvas).expand(40.0),
            prev_rects: &self.rects,
            body_sizes: std::mem::take(&mut self.body_sizes),
        };
        // A framing holds for a few frames: the first uses estimated node sizes (and may be
        // discarded by a first layout), the next ones the measured rectangles
        // (Ten frames: side panels may still settle their widths from stored sizes; a press on
        // the canvas ends it early.)
        if let Some(how) = self.frame.take() {
            self.framing = Some((how, 10));
            self.framing_cap = 1.0;
        }
        if ui.input(|i| i.pointer.any_down())
            && ui.input(|i| i.pointer.interact_pos()).is_some_and(|p| canvas.contains(p))
        {
            self.framing = None;
        }
        if let Some((how, left)) = self.framing {
            self.framing = (left > 1).then_some((how, left - 1));
            let t = framing::transform(viewer.prev_rects, graph, canvas, how, self.framing_cap);
            if framing::measured(viewer.prev_rects, graph) {
                self.framing_cap = t.scaling;
            }
            viewer.set_transform = Some(t);
            ui.ctx().request_repaint();
        }
        let id = canvas_id();
        ui.style_mut().interaction.selectable_labels = false;
        let response = SnarlWidget::new().id(id).style(STYLE).show(&mut self.view.snarl, &mut viewer, ui);
        if graph.nodes.is_empty() {
            ui.painter().text(
                canvas.center(),
                egui::Align2::CENTER_CENTER,
                "Right-click to add nodes. A graph plays the pose fed to its Output.",
                egui::FontId::proportional(14.0),
                Color32::GRAY,
            );
        }
        let transform = viewer.transform;
        self.transform = transform;
        let visible = transform.inverse() * canvas;
        self.body_sizes = std::mem::take(&mut viewer.body_sizes);
        let drawn = Drawn {
            rects: std::mem::take(&mut viewer.rects),
            in_rows: std::mem::take(&mut viewer.in_rows),
            out_rows: std::mem::take(&mut viewer.out_rows),
            live: std::mem::take(&mut viewer.live),
            transform,
        };
        // What the canvas asked for.
        let ops = std::mem::take(&mut viewer.ops);
        let actions = std::mem::take(&mut viewer.actions);
        let paste_at = viewer.paste_at;
        if viewer.message.is_some() {
            self.message = viewer.message.take();
        } else if !ops.is_empty() {
            self.message = None;
        }
        drop(viewer);
        let labels = if previewing { self.paint_weights(ui, graph, &drawn, visible) } else { 0 };
        self.report = self.measure(&drawn, canvas, labels);
        self.rects = drawn.rects;
        apply_requests(cx, path, graph, ops, actions, paste_at);
        self.selection_and_drags(ui, cx, path, graph, &response);
    }

    /// Paints the weight flowing through each visible wire at its middle; returns how many.
    fn paint_weights(&self, ui: &egui::Ui, graph: &AnimGraph, d: &Drawn, visible: Rect) -> usize {
        let painter = ui
            .ctx()
            .layer_painter(egui::LayerId::new(ui.layer_id().order, canvas_id()))
            .with_clip_rect(visible);
        let mut labels = 0;
        for c in &graph.connections {
            let (Some(fr), Some(tr)) = (d.rects.get(&c.from), d.rects.get(&c.to)) else {
                continue;
            };
            let Some(k) = self.index.pins(c.to).iter().position(|(p, _)| *p == c.pin) else {
                continue;
            };
            let (Some(&y0), Some(&y1)) = (d.out_rows.get(&c.from), d.in_rows.get(&(c.to, k))) else {
                continue;
            };
            let a = Pos2::new(fr.right(), y0);
            let mid = a + (Pos2::new(tr.left(), y1) - a) * 0.5;
            if !visible.contains(mid) {
                continue; // off screen: no text to lay out
            }
            let source = d.live.get(&c.from).copied().unwrap_or_default();
            let text = match (source.weight, source.value, source.vector) {
                (Some(w), ..) => format!("{w:.2}"),
                (None, Some(v), _) => format!("= {v:.2}"),
                (None, None, Some(v)) => format!("= ({:.2}, {:.2}, {:.2})", v.x, v.y, v.z),
                _ => continue,
            };
            let galley = painter.layout_no_wrap(text, egui::FontId::proportional(11.0), Color32::WHITE);
            let r = Rect::from_center_size(mid, galley.size() + Vec2::new(8.0, 2.0));
            painter.rect_filled(r, 3.0, Color32::from_black_alpha(190));
            painter.galley(r.center() - galley.size() * 0.5, galley, Color32::WHITE);
            labels += 1;
        }
        labels
    }

    /// This frame's measurements in screen space (nodes and pins), for tests and benchmarks.
    fn measure(&self, d: &Drawn, canvas: Rect, weight_labels: usize) -> GraphReport {
        let t = d.transform;
        let mut report =
            GraphReport { canvas: Some(canvas), scale: t.scaling, weight_labels, ..GraphReport::default() };
        for (n, r) in &d.rects {
            report.node_rects.insert(*n, t * *r);
            if let Some(&y) = d.out_rows.get(n) {
                report.out_pins.insert(*n, t * Pos2::new(r.right(), y));
            }
            for (k, (pin, _)) in self.index.pins(*n).iter().enumerate() {
                if let Some(&y) = d.in_rows.get(&(*n, k)) {
                    report.in_pins.insert((*n, pin.clone()), t * Pos2::new(r.left(), y));
                }
            }
        }
        report
    }

    /// Selection (clicks, snarl's shift/rectangle selection) and node drags (the selection moves
    /// together; one undo step when the pointer is released).
    fn selection_and_drags(
        &mut self,
        ui: &egui::Ui,
        cx: &mut Cx,
        path: &str,
        graph: &AnimGraph,
        response: &egui::Response,
    ) {
        let ctx = ui.ctx().clone();
        let id = canvas_id();
        let modifiers = ui.input(|i| i.modifiers);
        let mut clicked_node = None;
        // Only a frame with a press or a release can click or start dragging a node.
        let pointer_event = ui.input(|i| i.pointer.any_pressed() || i.pointer.any_released());
        for (&nid, &sid) in self.view.ids.iter().filter(|_| pointer_event) {
            if let Some(r) = ctx.read_response(id.with(("snarl-node", sid)).with("frame"))
                && (r.clicked() || r.drag_started())
            {
                clicked_node = Some(nid);
            }
        }
        // A double-click on a StateMachine node opens its state canvas.
        let opened = self.view.ids.iter().filter(|_| pointer_event).find_map(|(&nid, &sid)| {
            let r = ctx.read_response(id.with(("snarl-node", sid)).with("frame"))?;
            let machine = matches!(graph.node(nid).map(|n| &n.kind), Some(NodeKind::StateMachine { .. }));
            (r.double_clicked() && machine).then_some(nid)
        });
        if let Some(n) = opened {
            self.open_machine(n);
        }
        if let Some(n) = clicked_node {
            if modifiers.shift || modifiers.command {
                let sel = &mut cx.ui.graph_selection;
                if modifiers.command {
                    sel.retain(|x| *x != n);
                } else if !sel.contains(&n) {
                    sel.push(n);
                }
            } else if !cx.ui.graph_selection.contains(&n) || ui.input(|i| i.pointer.primary_released()) {
                // A press on an unselected node selects it (a drag then moves it alone); a click
                // on a selected one narrows the selection to it.
                let dragging_group =
                    cx.ui.graph_selection.contains(&n) && !ui.input(|i| i.pointer.primary_released());
                if !dragging_group {
                    cx.ui.graph_selection = vec![n];
                }
            }
        } else if response.clicked() && !modifiers.shift {
            cx.ui.graph_selection.clear();
        }
        // Snarl's own selection changes on a rectangle drag (Shift+drag on the canvas): adopt it,
        // adding to ours while Shift is held. Clicks are ours (handled above).
        let snarl_sel = get_selected_nodes(id, &ctx);
        if snarl_sel != self.last_snarl_selection {
            if clicked_node.is_none() {
                let mapped: Vec<NodeId> =
                    snarl_sel.iter().filter_map(|s| self.view.snarl.get_node(*s).copied()).collect();
                if modifiers.shift {
                    for n in mapped {
                        if !cx.ui.graph_selection.contains(&n) {
                            cx.ui.graph_selection.push(n);
                        }
                    }
                } else if !mapped.is_empty() || !self.last_snarl_selection.is_empty() {
                    cx.ui.graph_selection = mapped;
                }
            }
            self.last_snarl_selection = snarl_sel;
        }
        // Drags: snarl moved the dragged node (and its own selection); move the rest of ours.
        let mut now: HashMap<NodeId, Pos2> =
            self.view.snarl.nodes_pos_ids().map(|(_, p, n)| (*n, p)).collect();
        let moved: Vec<(NodeId, Vec2)> = now
            .iter()
            .filter_map(|(n, p)| self.view.last_pos.get(n).filter(|o| *o != p).map(|o| (*n, *p - *o)))
            .collect();
        if let Some(&(_, d)) = moved.first() {
            for n in cx.ui.graph_selection.clone() {
                if moved.iter().any(|(m, _)| *m == n) {
                    continue;
                }
                if let Some(&sid) = self.view.ids.get(&n)
                    && let Some(info) = self.view.snarl.get_node_info_mut(sid)
                {
                    info.pos += d;
                    now.insert(n, info.pos);
                }
            }
        }
        if !ui.input(|i| i.pointer.any_down()) {
            let mut moves: Vec<(NodeId, [f32; 2])> = graph
                .nodes
                .iter()
                .filter_map(|n| {
                    let p = now.get(&n.id)?;
                    (p.x != n.position[0] || p.y != n.position[1]).then_some((n.id, [p.x, p.y]))
                })
                .collect();
            moves.sort_by_key(|(n, _)| *n);
            if !moves.is_empty() {
                cx.edit(Op::Graph { path: path.to_owned(), op: GraphOp::MoveNodes(moves) });
            }
        }
        self.view.last_pos = now;
    }
}

/// What the canvas drew this frame (graph space), read after snarl is done.
struct Drawn {
    rects: HashMap<NodeId, Rect>,
    in_rows: HashMap<(NodeId, usize), f32>,
    out_rows: HashMap<NodeId, f32>,
    live: HashMap<NodeId, view::Live>,
    transform: TSTransform,
}

/// Sends what the canvas asked for: its edits (a new node becomes the selection) and the node
/// menu's requests (copy, duplicate, delete, disconnect all), and a paste at a canvas point.
fn apply_requests(
    cx: &mut Cx,
    path: &str,
    graph: &AnimGraph,
    ops: Vec<GraphOp>,
    actions: Vec<(NodeId, NodeAction)>,
    paste_at: Option<Pos2>,
) {
    for op in ops {
        if let GraphOp::AddNodes { nodes, .. } = &op {
            cx.ui.graph_selection = nodes.iter().map(|n| n.id).collect();
        }
        cx.edit(Op::Graph { path: path.to_owned(), op });
    }
    for (node, action) in actions {
        let targets =
            if cx.ui.graph_selection.contains(&node) { cx.ui.graph_selection.clone() } else { vec![node] };
        match action {
            NodeAction::Copy => copy(cx, graph, &targets),
            NodeAction::Duplicate => {
                copy(cx, graph, &targets);
                paste(cx, path, graph, None, "Duplicate");
            }
            NodeAction::Delete => delete(cx, path, &targets),
            NodeAction::Disconnect => disconnect_all(cx, path, graph, node),
        }
    }
    if let Some(at) = paste_at {
        paste(cx, path, graph, Some(at), "Paste");
    }
}
