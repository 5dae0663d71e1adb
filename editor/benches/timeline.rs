//! CPU time of a whole editor frame of the Timeline panel: `cargo bench -p marrow-editor --bench
//! timeline`.
//!
//! The workload is motion capture: the CMU 31-joint rig's shape ([`mocap_skeleton`]) with
//! [`mocap_like_clip`] at 120 Hz for 1,125 frames (32 channels: 36,000 keys), the clip fit to a
//! 1400 x 700 point window (pixels per point 1), bone rows closed as the editor opens them.
//!
//! One iteration is one frame, end to end on the CPU, as eframe pays it:
//! 1. the UI pass (`egui::Context::run_ui` with the panel in a central panel: the session's
//!    sync and clock, the rows, the keys, the input, and the edits the panel queued applied to
//!    the document, as the app applies them at the end of its frame);
//! 2. egui's tessellation of the frame's shapes (`Context::tessellate`);
//! 3. the paint submission on a real wgpu device (the engine's `render::test_device`, lavapipe
//!    here): texture deltas, `egui_wgpu::Renderer::update_buffers`, one render pass over the
//!    primitives into a 1400 x 700 target, `queue.submit`. Waiting for the GPU to finish is not
//!    counted (it is the GPU's time, and it happens in parallel with the next frame).
//!
//! Without a GPU adapter the paint stage cannot run: the benchmark prints a loud SKIPPED line
//! and measures up to tessellation (fails with `MARROW_REQUIRE_GPU=1`).
//!
//! Workloads: playing with the keys fit to view, a box selection being dragged across the rows,
//! 16,000 selected keys being dragged (each frame moves them: an edit, a new revision), and the
//! curve view of one mocap rotation channel. Before the benchmarks run, each workload's mean per
//! stage over 60 frames (`MARROW_BENCH_STAGE_FRAMES`) is printed (`stages ...`), which is where
//! BENCHMARKS.md's breakdown comes from.
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use egui::{Pos2, vec2};
use marrow_editor::panels::timeline::model::{KeyId, RowKind};
use marrow_editor::ui_state::Selection;
use marrow_engine::clip::Channel;
use marrow_engine::project::Project;
use marrow_engine::synthetic::{mocap_like_clip, mocap_skeleton, one_rig_project};

#[path = "support/driver.rs"]
mod driver;

use driver::Driver;

const FRAMES: usize = 1125;
const HZ: f32 = 120.0;

fn project() -> Project {
    let sk = mocap_skeleton();
    let mut clip = mocap_like_clip(&sk, "mocap", FRAMES, HZ, 7);
    clip.frame_rate = HZ;
    one_rig_project(sk, vec![("clips/mocap.clip.ron", clip)])
}
fn bench(c: &mut Criterion) {
    // 1. Playing, the keys fit to view.
    let mut d = Driver::new(project(), |s| s.session.play());
    d.playing = true;
    assert!(!d.state.panel.layout.rows.is_empty(), "rows are drawn");
    d.bench(c, "timeline/frame/36k_keys_fit_playing", |_| {});

    // 2. A box selection in progress: press in the rows away from keys (past the clip's end),
    //    then move every frame.
    let mut d = Driver::new(project(), |_| {});
    let rows = d.state.panel.layout.rows_rect;
    let a = Pos2::new(rows.right() - 4.0, rows.top() + 30.0);
    d.pointer(a);
    d.button(a, true);
    d.frame();
    let mut flip = false;
    d.bench(c, "timeline/frame/36k_keys_box_select", |d| {
        flip = !flip;
        d.pointer(rows.center() + vec2(if flip { -300.0 } else { -340.0 }, 100.0));
    });

    // 3. Dragging 16,000 selected keys (the first 500 frames of every channel).
    let mut d = Driver::new(project(), |s| {
        let clip = &s.doc.project().clips["clips/mocap.clip.ron"];
        for b in 0..clip.bones.len() {
            for ch in [Channel::Translation, Channel::Rotation] {
                let times = marrow_editor::panels::timeline::model::channel_times(clip, b, ch);
                s.panel.selection.extend(times.iter().take(500).map(|t| KeyId::new(b, ch, *t)));
            }
        }
        assert_eq!(s.panel.selection.len(), 16_000);
    });
    let t = 250.0 / HZ;
    let p = d.key_at(RowKind::Bone(3), t);
    d.bench_drag(c, "timeline/frame/16k_keys_drag", p);

    // 4. The curve view of one mocap rotation channel (LeftKnee), fit to view.
    let mut d = Driver::new(project(), |s| {
        s.panel.curves = true;
        s.ui.selection = Selection::Bone { rig: "Rig".into(), bone: "LeftKnee".into() };
    });
    d.bench(c, "timeline/frame/curves_mocap_channel", |_| {});
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(4)).warm_up_time(Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
