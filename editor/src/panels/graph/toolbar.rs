//! The Graph tab's toolbar: the graph edited, New Graph, the preview (rig, play, scrub), Frame
//! All, the side-panel toggles and Align.

use super::*;

impl GraphPanel {
    pub(super) fn toolbar(&mut self, ui: &mut egui::Ui, cx: &mut Cx) {
        let (mut show_params, mut show_details) = (!self.hide_params, !self.hide_details);
        // Wraps onto a second row in a narrow dock rather than widening the tab.
        ui.horizontal_wrapped(|ui| {
            let graphs = cx.doc.project().manifest.graphs.clone();
            let current = shown_graph(cx);
            let r = egui::ComboBox::from_id_salt("graph picker tab")
                .selected_text(current.as_deref().unwrap_or("(no graph)"))
                .width(180.0)
                .show_ui(ui, |ui| {
                    for g in &graphs {
                        if ui.selectable_label(current.as_deref() == Some(g), g).clicked() {
                            cx.ui.graph = Some(g.clone());
                            cx.ui.graph_selection.clear();
                            self.frame = Some(Framing::Open);
                        }
                    }
                });
            crate::widgets::named(r.response, egui::WidgetType::ComboBox, "Graph");
            if ui.button("New Graph").on_hover_text("An empty graph file in graphs/").clicked() {
                cx.send(Command::NewGraph);
            }
            let Some(path) = current else { return };
            ui.separator();
            self.preview_controls(ui, cx, &path);
            ui.separator();
            let frame_all = ui.button("Frame All").on_hover_text("F");
            crate::probe::mark(ui.ctx(), "graph:frame_all", frame_all.rect);
            if frame_all.clicked() {
                self.frame_all();
            }
            // The side-panel toggles and Align wrap to the next row together (never a pair split).
            let n = cx.ui.graph_selection.len();
            crate::widgets::wrap_group(ui, "panels and align", |ui| {
                ui.toggle_value(&mut show_params, "Parameters").on_hover_text("Show the parameters panel");
                ui.toggle_value(&mut show_details, "Details").on_hover_text("Show the node details panel");
                ui.add_enabled_ui(n > 1, |ui| {
                    ui.menu_button("Align", |ui| {
                        for (label, how) in [
                            ("Left", Align::Left),
                            ("Top", Align::Top),
                            ("Distribute Vertically", Align::Column),
                        ] {
                            if ui.button(label).clicked() {
                                self.align(cx, &path, how);
                                ui.close();
                            }
                        }
                    });
                });
            });
        });
        self.hide_params = !show_params;
        self.hide_details = !show_details;
        let general = self.status.general.clone();
        let message = self.message.clone();
        let preview_error = cx.session.preview().and_then(|p| p.error.clone());
        if !general.is_empty() || message.is_some() || preview_error.is_some() {
            ui.horizontal_wrapped(|ui| {
                for g in general {
                    ui.colored_label(Color32::from_rgb(0xff, 0x80, 0x80), format!("⚠ {g}"));
                }
                if let Some(m) = message {
                    ui.colored_label(Color32::from_rgb(0xff, 0xc0, 0x60), m);
                }
                if let Some(e) = preview_error {
                    ui.colored_label(
                        Color32::from_rgb(0xff, 0x80, 0x80),
                        format!("The preview does not play: {}", e.lines().next().unwrap_or("")),
                    )
                    .on_hover_text(e);
                }
            });
        }
    }

    fn preview_controls(&mut self, ui: &mut egui::Ui, cx: &mut Cx, path: &str) {
        let world = cx.session.world();
        let rigs: Vec<String> =
            world.rigs().filter(|r| world.animator(*r).is_some()).filter_map(|r| world.path(r)).collect();
        if self.preview_rig.as_ref().is_none_or(|r| !rigs.contains(r)) {
            // The selected rig, else one whose Animator plays this graph, else the first.
            let selected =
                cx.ui.selection.entity().filter(|s| rigs.iter().any(|r| r == s)).map(str::to_owned);
            let plays = cx.scene().and_then(|(_, scene)| {
                rigs.iter()
                    .find(|r| {
                        crate::document::tree::find(scene, r)
                            .and_then(|e| e.animator.as_ref())
                            .is_some_and(|a| a.graph.as_deref() == Some(path))
                    })
                    .cloned()
            });
            self.preview_rig = selected.or(plays).or_else(|| rigs.first().cloned());
        }
        let active = cx.session.preview().filter(|p| p.graph == path).cloned();
        ui.label("Preview on");
        egui::ComboBox::from_id_salt("graph preview rig")
            .selected_text(self.preview_rig.as_deref().unwrap_or("(no rig)"))
            .width(120.0)
            .show_ui(ui, |ui| {
                for r in &rigs {
                    if ui.selectable_label(self.preview_rig.as_deref() == Some(r), r).clicked() {
                        self.preview_rig = Some(r.clone());
                        if active.is_some() {
                            cx.send(Command::PreviewGraph(Some((r.clone(), path.to_owned()))));
                        }
                    }
                }
            });
        match (&active, &self.preview_rig) {
            (Some(_), _) => {
                let stop = ui.button("■ Stop Preview");
                crate::probe::mark(ui.ctx(), "graph:stop_preview", stop.rect);
                if stop.clicked() {
                    cx.send(Command::PreviewGraph(None));
                }
            }
            (None, Some(rig)) => {
                let start =
                    ui.button("▶ Preview").on_hover_text("Play this graph on the rig in the viewport");
                crate::probe::mark(ui.ctx(), "graph:preview", start.rect);
                if start.clicked() {
                    cx.send(Command::PreviewGraph(Some((rig.clone(), path.to_owned()))));
                }
            }
            (None, None) => {
                ui.add_enabled(false, egui::Button::new("▶ Preview"))
                    .on_disabled_hover_text("The scene has no rig with an Animator");
            }
        }
        if let Some(p) = &active
            && let Some(e) = cx.session.entity(&p.rig)
            && let Some(a) = cx.session.world().animator(e)
        {
            let playing = cx.session.is_playing();
            if ui.button(if playing { "⏸" } else { "▶" }).on_hover_text("Play / Pause (Space)").clicked()
            {
                cx.send(if playing { Command::Pause } else { Command::Play });
            }
            let len = cx.session.head_length(e);
            let mut t = a.time();
            let shown = if playing { t % len.max(1e-3) } else { t };
            let mut s = shown.min(len);
            ui.spacing_mut().slider_width = 110.0;
            // Shown to two decimals, never rounded to them: a slider with `max_decimals` rounds
            // the value it is given on every frame, which read as a change and seeked the
            // playing preview back each frame.
            let r = ui.add(
                egui::Slider::new(&mut s, 0.0..=len).suffix(" s").custom_formatter(|v, _| format!("{v:.2}")),
            );
            if crate::widgets::named(r, egui::WidgetType::Slider, "Preview time").changed() {
                t = s;
                cx.send(Command::Seek { rig: p.rig.clone(), time: t });
            }
        }
    }

    fn align(&mut self, cx: &mut Cx, path: &str, how: Align) {
        let Some(graph) = cx.doc.project().graphs.get(path) else { return };
        let nodes: Vec<&Node> = cx.ui.graph_selection.iter().filter_map(|n| graph.node(*n)).collect();
        if nodes.len() < 2 {
            return;
        }
        let min_x = nodes.iter().map(|n| n.position[0]).fold(f32::INFINITY, f32::min);
        let min_y = nodes.iter().map(|n| n.position[1]).fold(f32::INFINITY, f32::min);
        let mut moves: Vec<(NodeId, [f32; 2])> = match how {
            Align::Left => nodes.iter().map(|n| (n.id, [min_x, n.position[1]])).collect(),
            Align::Top => nodes.iter().map(|n| (n.id, [n.position[0], min_y])).collect(),
            Align::Column => {
                let mut sorted = nodes.clone();
                sorted.sort_by(|a, b| a.position[1].total_cmp(&b.position[1]));
                let mut y = min_y;
                sorted
                    .iter()
                    .map(|n| {
                        let h = self.rects.get(&n.id).map_or(80.0, |r| r.height());
                        let at = (n.id, [min_x, y]);
                        y += h + 24.0;
                        at
                    })
                    .collect()
            }
        };
        moves.retain(|(id, p)| graph.node(*id).is_some_and(|n| n.position != *p));
        if !moves.is_empty() {
            cx.edit(Op::Graph { path: path.to_owned(), op: GraphOp::MoveNodes(moves) });
        }
    }
}

/// How Align lines the selection up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Align {
    Left,
    Top,
    Column,
}
