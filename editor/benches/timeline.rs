//! CPU time of the timeline panel per frame: `cargo bench -p marrow-editor --bench timeline`.
//!
//! A clip of 200 bones x 3 channels x 61 keys (36,600 keys) on a 200-bone rig, every bone row
//! open onto its channels, the dope sheet zoomed to fit, 1400 x 700 points: one iteration is one
//! frame of the panel alone (egui_kittest, no GPU): the rows, the culled keys, the ruler and the
//! lanes, and egui's tessellation of them. Measured at rest and while a box selection is being
//! dragged across the rows.

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use egui_kittest::Harness;
use marrow_editor::document::Document;
use marrow_editor::log::EditorLog;
use marrow_editor::panels::Cx;
use marrow_editor::panels::timeline::TimelinePanel;
use marrow_editor::session::Session;
use marrow_editor::stats::Stats;
use marrow_editor::ui_state::{Selection, UiState};
use marrow_engine::project::Project;
use marrow_engine::synthetic::{chain_skeleton, dense_clip, one_rig_project};

struct State {
    panel: TimelinePanel,
    doc: Document,
    session: Session,
    ui: UiState,
    log: EditorLog,
    stats: Stats,
}

fn project() -> Project {
    let sk = chain_skeleton(200);
    let clip = dense_clip(&sk, "dense", 2.0, 30.0, 1);
    one_rig_project(sk, vec![("clips/dense.clip.ron", clip)])
}

fn harness() -> Harness<'static, State> {
    let doc = Document::new(project(), None);
    let mut session = Session::new();
    session.sync(&doc);
    session.update(0.0);
    let mut ui = UiState::new();
    ui.selection = Selection::Entity("Rig".into());
    let mut panel = TimelinePanel::default();
    panel.open = (0..200).collect();
    let state = State { panel, doc, session, ui, log: EditorLog::default(), stats: Stats::default() };
    Harness::builder().with_size(egui::vec2(1400.0, 700.0)).build_ui_state(
        |ui, s: &mut State| {
            let mut commands = Vec::new();
            let mut cx = Cx::new(&s.doc, &s.session, &mut s.ui, &s.log, &s.stats, None, &mut commands);
            s.panel.ui(ui, &mut cx);
        },
        state,
    )
}

/// One frame: the UI pass and the tessellation of what it drew (what a real frame also pays
/// on the CPU before the GPU draws it).
fn frame(h: &mut Harness<'static, State>) -> usize {
    h.step();
    let out = h.output();
    let shapes = out.shapes.clone();
    h.ctx.tessellate(shapes, out.pixels_per_point).len()
}

fn bench(c: &mut Criterion) {
    let mut h = harness();
    h.run_steps(3);
    assert!(!h.state().panel.layout.rows.is_empty(), "rows are drawn");
    c.bench_function("timeline/frame/36k_keys_fit", |b| b.iter(|| frame(&mut h)));

    // A box selection in progress: press in the rows, then move every frame.
    let rows = h.state().panel.layout.rows_rect;
    let a = rows.left_top() + egui::vec2(260.0, 30.0);
    h.hover_at(a);
    h.drag_at(a);
    h.step();
    h.step();
    let mut flip = false;
    c.bench_function("timeline/frame/36k_keys_box_select", |b| {
        b.iter(|| {
            flip = !flip;
            let to = rows.center() + egui::vec2(if flip { 200.0 } else { 240.0 }, 100.0);
            h.hover_at(to);
            frame(&mut h);
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(40).measurement_time(Duration::from_secs(6));
    targets = bench
}
criterion_main!(benches);
