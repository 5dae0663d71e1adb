//! CPU time of one editor frame: `cargo bench -p marrow-editor --bench frame`.
//!
//! The whole editor (egui_kittest harness, default layout, 1440 x 900) on the CesiumMan sample
//! with the clip playing and the skeleton overlay on. One measured frame is the UI build with
//! the session update (clock, world frame) and the viewport's extraction, plus encoding and
//! submitting the viewport's passes; waiting for the GPU (lavapipe here) is not counted. Without
//! a GPU adapter the benchmark skips loudly (fails with `MARROW_REQUIRE_GPU=1`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use egui_kittest::Harness;
use marrow_editor::command::Command;
use marrow_editor::viewport::gpu::ViewportGpu;
use marrow_editor::{AppOptions, EditorApp};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), dst).unwrap();
        }
    }
}

fn bench(c: &mut Criterion) {
    if marrow_engine::render::test_device().is_none() {
        return;
    }
    let dir: PathBuf = std::env::temp_dir().join(format!("marrow-bench-frame-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../projects/cesium_man"), &dir);
    let p = dir.clone();
    let setup = marrow_editor::wgpu_setup(egui_kittest::wgpu::default_wgpu_setup());
    let mut h: Harness<'_, EditorApp> = Harness::builder()
        .with_size(egui::vec2(1440.0, 900.0))
        .with_step_dt(1.0 / 60.0)
        .wgpu_setup(setup)
        .build_eframe(move |cc| {
            let render = cc.wgpu_render_state.clone();
            let _ = render;
            EditorApp::new(cc, AppOptions { project: Some(p), ..Default::default() })
        });
    let rs = h.state().render_state().cloned().expect("the harness has a wgpu device");
    h.state_mut().ui.show_skeletons = true;
    h.state_mut().ui.selection = marrow_editor::ui_state::Selection::Entity("CesiumMan".into());
    h.state_mut().send(Command::Play);
    h.run_steps(10);
    let _ = h.render();
    c.bench_function("editor/frame/cesium_man_playing_overlay", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let t0 = Instant::now();
                h.step();
                ViewportGpu::with(&rs, |g| {
                    let mut encoder = g.ctx.device.create_command_encoder(&Default::default());
                    g.encode(&mut encoder);
                    g.ctx.queue.submit([encoder.finish()]);
                });
                total += t0.elapsed();
                // The GPU's own work is not the frame's CPU time.
                let _ = rs.device.poll(egui_wgpu::wgpu::PollType::wait_indefinitely());
            }
            total
        })
    });
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(30).measurement_time(Duration::from_secs(8));
    targets = bench
}
criterion_main!(benches);
