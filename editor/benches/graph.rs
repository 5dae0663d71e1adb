//! CPU time of the Graph tab per frame: `cargo bench -p marrow-editor --bench graph`.
//!
//! A graph of 200 nodes (100 Clip nodes folded by 99 Blend2 nodes into an Output) on a 60-bone
//! rig, previewed on the rig while it plays, so every wire carries a live weight label and every
//! Clip node its playhead; 1600 x 900 points with the parameters and details panels open. One
//! iteration is one frame of the panel on a plain `egui::Context` (as eframe runs it when no
//! screen reader asks for the accessibility tree; egui_kittest always builds that tree, which
//! would add about a sixth): the snarl canvas, the side panels, the weight labels, and egui's
//! tessellation of it all. The session advances one 60 Hz frame between iterations (not timed):
//! the weights and playheads change every frame, as they do while a preview plays.

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use marrow_editor::cx::Cx;
use marrow_editor::document::Document;
use marrow_editor::log::EditorLog;
use marrow_editor::panels::graph::GraphPanel;
use marrow_editor::session::Session;
use marrow_editor::stats::Stats;
use marrow_editor::ui_state::UiState;
use marrow_engine::graph::{AnimGraph, NodeKind};
use marrow_engine::project::Project;
use marrow_engine::synthetic::{chain_skeleton, dense_clip, one_rig_project};

const GRAPH: &str = "graphs/big.graph.ron";

struct State {
    panel: GraphPanel,
    doc: Document,
    session: Session,
    ui: UiState,
    log: EditorLog,
    stats: Stats,
}

/// 100 clips folded left to right by Blend2 nodes: 200 nodes, 199 wires.
fn big_graph() -> AnimGraph {
    let mut g = AnimGraph::new();
    let clip = |i: usize| NodeKind::Clip {
        clip: if i.is_multiple_of(2) { "clips/a.clip.ron".into() } else { "clips/b.clip.ron".into() },
        speed: 1.0 + (i % 5) as f32 * 0.1,
        looping: true,
    };
    let at = |i: usize, row: f32| [(i % 20) as f32 * 260.0, (i / 20) as f32 * 320.0 + row];
    let mut acc = g.add_node(clip(0), at(0, 150.0));
    for i in 1..100 {
        let c = g.add_node(clip(i), at(i, 150.0));
        let b = g.add_node(NodeKind::Blend2 { weight: 0.5 }, at(i, 0.0));
        g.connect(acc, b, "a");
        g.connect(c, b, "b");
        acc = b;
    }
    let out = g.add_node(NodeKind::Output, at(100, 0.0));
    g.connect(acc, out, "pose");
    assert_eq!(g.nodes.len(), 200);
    g
}

fn project() -> Project {
    let sk = chain_skeleton(60);
    let clips = [("clips/a.clip.ron", 1), ("clips/b.clip.ron", 2)]
        .map(|(path, seed)| (path, dense_clip(&sk, path, 1.5, 30.0, seed)));
    let mut p = one_rig_project(sk, clips.into());
    p.manifest.graphs.push(GRAPH.into());
    p.graphs.insert(GRAPH.into(), big_graph().into());
    p
}

fn state() -> State {
    let doc = Document::new(project(), None);
    let mut session = Session::new();
    session.sync(&doc);
    session.set_preview(Some(("Rig".into(), GRAPH.into())));
    assert_eq!(session.preview().and_then(|p| p.error.clone()), None, "the graph compiles");
    session.play();
    session.update(1.0 / 60.0);
    let mut ui = UiState::new();
    ui.graph = Some(GRAPH.into());
    State {
        panel: GraphPanel::default(),
        doc,
        session,
        ui,
        log: EditorLog::default(),
        stats: Stats::default(),
    }
}

/// One frame of a `size` screen: the UI pass and the tessellation of what it drew.
fn frame(ctx: &egui::Context, s: &mut State, size: egui::Vec2) -> usize {
    let input = egui::RawInput {
        screen_rect: Some(egui::Rect::from_min_size(egui::Pos2::ZERO, size)),
        ..Default::default()
    };
    let mut out = ctx.run_ui(input, |ui| {
        egui::CentralPanel::default().show(ui, |ui| {
            let mut commands = Vec::new();
            let mut cx = Cx::new(&s.doc, &s.session, &mut s.ui, &s.log, &s.stats, None, &mut commands);
            s.panel.ui(ui, &mut cx);
        });
    });
    // No painter here: the font atlas updates are dropped on purpose.
    out.textures_delta.clear();
    ctx.tessellate(std::mem::take(&mut out.shapes), out.pixels_per_point).len()
}

fn bench(c: &mut Criterion) {
    // 1600 x 900: the graph as it opens (zoom 1), a part of it on screen;
    // 3840 x 2160 after Frame All: all 200 nodes on screen, every body and every weight label drawn.
    for (name, size, frame_all, min_on_screen) in [
        ("graph/frame/200_nodes_live_weights", egui::vec2(1600.0, 900.0), false, 10),
        ("graph/frame/200_nodes_live_weights_all_on_screen", egui::vec2(3840.0, 2160.0), true, 200),
    ] {
        let ctx = egui::Context::default();
        let mut s = state();
        frame(&ctx, &mut s, size);
        if frame_all {
            s.panel.frame_all();
        }
        for _ in 0..12 {
            frame(&ctx, &mut s, size);
        }
        let r = &s.panel.report;
        assert_eq!(r.node_rects.len(), 200, "every node is laid out");
        let canvas = r.canvas.expect("drawn");
        let on_screen = r.node_rects.values().filter(|n| canvas.contains_rect(**n)).count();
        assert!(on_screen >= min_on_screen, "{name}: {on_screen} nodes on screen");
        assert!(r.weight_labels >= min_on_screen / 2, "live weights on the wires: {}", r.weight_labels);
        eprintln!("{name}: {on_screen} of 200 nodes wholly on screen, {} weight labels", r.weight_labels);
        c.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    s.session.update(1.0 / 60.0);
                    let t = Instant::now();
                    std::hint::black_box(frame(&ctx, &mut s, size));
                    total += t.elapsed();
                }
                total
            })
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(40).measurement_time(Duration::from_secs(8));
    targets = bench
}
criterion_main!(benches);
