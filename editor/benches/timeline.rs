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

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use egui::{Pos2, Rect, vec2};
use egui_wgpu::wgpu;
use marrow_editor::command::Command;
use marrow_editor::cx::Cx;
use marrow_editor::document::Document;
use marrow_editor::log::EditorLog;
use marrow_editor::panels::timeline::TimelinePanel;
use marrow_editor::panels::timeline::model::{KeyId, RowKind};
use marrow_editor::session::Session;
use marrow_editor::stats::Stats;
use marrow_editor::ui_state::{Selection, UiState};
use marrow_engine::clip::Channel;
use marrow_engine::project::Project;
use marrow_engine::synthetic::{mocap_like_clip, mocap_skeleton, one_rig_project};

const SIZE: egui::Vec2 = vec2(1400.0, 700.0);
const FRAMES: usize = 1125;
const HZ: f32 = 120.0;

/// The editor state the panel works on.
struct State {
    panel: TimelinePanel,
    doc: Document,
    session: Session,
    ui: UiState,
    log: EditorLog,
    stats: Stats,
    gesture: u64,
}

fn project() -> Project {
    let sk = mocap_skeleton();
    let mut clip = mocap_like_clip(&sk, "mocap", FRAMES, HZ, 7);
    clip.frame_rate = HZ;
    one_rig_project(sk, vec![("clips/mocap.clip.ron", clip)])
}

/// egui_wgpu's paint submission on a real device.
struct Paint {
    device: wgpu::Device,
    queue: wgpu::Queue,
    renderer: egui_wgpu::Renderer,
    view: wgpu::TextureView,
}

impl Paint {
    fn new() -> Option<Self> {
        let gpu = marrow_engine::render::test_device()?;
        eprintln!("paint submission on {}", gpu.describe());
        let format = wgpu::TextureFormat::Rgba8Unorm;
        let renderer = egui_wgpu::Renderer::new(&gpu.device, format, egui_wgpu::RendererOptions::default());
        let target = gpu.device.create_texture(&wgpu::TextureDescriptor {
            label: Some("bench target"),
            size: wgpu::Extent3d { width: SIZE.x as u32, height: SIZE.y as u32, depth_or_array_layers: 1 },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format,
            usage: wgpu::TextureUsages::RENDER_ATTACHMENT,
            view_formats: &[],
        });
        let view = target.create_view(&Default::default());
        Some(Self { device: gpu.device, queue: gpu.queue, renderer, view })
    }

    /// Uploads the frame's textures and vertex data, encodes the render pass and submits it.
    fn submit(&mut self, prims: &[egui::ClippedPrimitive], textures: &egui::TexturesDelta) {
        for (id, deltas) in &textures.set {
            for delta in deltas {
                self.renderer.update_texture(&self.device, &self.queue, *id, delta);
            }
        }
        let sd = egui_wgpu::ScreenDescriptor {
            size_in_pixels: [SIZE.x as u32, SIZE.y as u32],
            pixels_per_point: 1.0,
        };
        let mut encoder = self.device.create_command_encoder(&Default::default());
        let extra = self.renderer.update_buffers(&self.device, &self.queue, &mut encoder, prims, &sd);
        {
            let mut pass = encoder
                .begin_render_pass(&wgpu::RenderPassDescriptor {
                    label: Some("egui"),
                    color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                        view: &self.view,
                        resolve_target: None,
                        depth_slice: None,
                        ops: wgpu::Operations {
                            load: wgpu::LoadOp::Clear(wgpu::Color::BLACK),
                            store: wgpu::StoreOp::Store,
                        },
                    })],
                    ..Default::default()
                })
                .forget_lifetime();
            self.renderer.render(&mut pass, prims, &sd);
        }
        self.queue.submit(extra.into_iter().chain([encoder.finish()]));
        for id in &textures.free {
            self.renderer.free_texture(id);
        }
    }

    fn wait(&self) {
        let _ = self.device.poll(wgpu::PollType::wait_indefinitely());
    }
}

/// Per-stage times of one frame.
#[derive(Clone, Copy, Default)]
struct Times {
    ui: Duration,
    /// The part of `ui` spent applying the panel's edits to the document.
    edit: Duration,
    tessellate: Duration,
    paint: Duration,
}

impl Times {
    fn total(&self) -> Duration {
        self.ui + self.tessellate + self.paint
    }
}

/// An egui context driving the panel frame by frame with synthetic pointer input.
struct Driver {
    ctx: egui::Context,
    state: State,
    paint: Option<Paint>,
    time: f64,
    events: Vec<egui::Event>,
    playing: bool,
}

impl Driver {
    fn new(setup: impl FnOnce(&mut State)) -> Self {
        let doc = Document::new(project(), None);
        let mut session = Session::new();
        session.sync(&doc);
        session.update(0.0);
        let mut ui = UiState::new();
        ui.selection = Selection::Entity("Rig".into());
        let mut state = State {
            panel: TimelinePanel::default(),
            doc,
            session,
            ui,
            log: EditorLog::default(),
            stats: Stats::default(),
            gesture: 1,
        };
        setup(&mut state);
        let paint = Paint::new();
        if paint.is_none() {
            eprintln!("==============================================================");
            eprintln!("NO GPU ADAPTER: the timeline benchmarks measure UI + tessellation only");
            eprintln!("==============================================================");
        }
        let mut d = Self {
            ctx: egui::Context::default(),
            state,
            paint,
            time: 0.0,
            events: Vec::new(),
            playing: false,
        };
        for _ in 0..3 {
            d.frame();
        }
        d
    }

    /// One whole frame; returns its stage times.
    fn frame(&mut self) -> Times {
        self.time += 1.0 / 60.0;
        let input = egui::RawInput {
            screen_rect: Some(Rect::from_min_size(Pos2::ZERO, SIZE)),
            time: Some(self.time),
            predicted_dt: 1.0 / 60.0,
            events: std::mem::take(&mut self.events),
            ..Default::default()
        };
        let playing = self.playing;
        let mut edit = Duration::ZERO;
        let t0 = Instant::now();
        let s = &mut self.state;
        let out = self.ctx.run_ui(input, |ui| {
            s.session.sync(&s.doc);
            s.session.update(if playing { 1.0 / 60.0 } else { 0.0 });
            let mut commands = Vec::new();
            egui::CentralPanel::default().show(ui, |ui| {
                let mut cx = Cx::new(&s.doc, &s.session, &mut s.ui, &s.log, &s.stats, None, &mut commands);
                s.panel.ui(ui, &mut cx);
            });
            let e0 = Instant::now();
            for c in commands {
                if let Command::Edit(op) = c {
                    let _ = s.doc.apply(&op, s.gesture);
                }
            }
            edit = e0.elapsed();
        });
        let t1 = Instant::now();
        let prims = self.ctx.tessellate(out.shapes, out.pixels_per_point);
        let t2 = Instant::now();
        let mut textures = out.textures_delta;
        if let Some(p) = &mut self.paint {
            p.submit(&prims, &textures);
        }
        textures.clear();
        let t3 = Instant::now();
        if let Some(p) = &self.paint {
            p.wait();
        }
        Times { ui: t1 - t0, edit, tessellate: t2 - t1, paint: t3 - t2 }
    }

    fn pointer(&mut self, p: Pos2) {
        self.events.push(egui::Event::PointerMoved(p));
    }

    fn button(&mut self, p: Pos2, pressed: bool) {
        self.events.push(egui::Event::PointerButton {
            pos: p,
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: egui::Modifiers::NONE,
        });
    }

    /// Prints the mean stage times of `n` frames, each after `each` (the workload's input).
    fn print_stages(&mut self, name: &str, n: usize, mut each: impl FnMut(&mut Self)) {
        let mut sum = Times::default();
        for _ in 0..n {
            each(self);
            let t = self.frame();
            sum.ui += t.ui;
            sum.edit += t.edit;
            sum.tessellate += t.tessellate;
            sum.paint += t.paint;
        }
        let ms = |d: Duration| d.as_secs_f64() * 1e3 / n as f64;
        eprintln!(
            "stages {name}: UI {:.3} ms (of which applying edits {:.3} ms), tessellation {:.3} ms, \
             paint submission {:.3} ms, total {:.3} ms",
            ms(sum.ui),
            ms(sum.edit),
            ms(sum.tessellate),
            ms(sum.paint),
            ms(sum.total())
        );
    }

    /// A criterion measurement of whole frames (GPU waits excluded), `each` before every one.
    fn bench(&mut self, c: &mut Criterion, name: &str, mut each: impl FnMut(&mut Self)) {
        let n = std::env::var("MARROW_BENCH_STAGE_FRAMES").ok().and_then(|v| v.parse().ok()).unwrap_or(60);
        self.print_stages(name, n, &mut each);
        c.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    each(self);
                    total += self.frame().total();
                }
                total
            })
        });
    }

    /// Where the panel drew the key of `kind` at `t` last frame.
    fn key_at(&self, kind: RowKind, t: f32) -> Pos2 {
        self.state.panel.layout.key(kind, t).expect("the row is drawn")
    }
}

fn bench(c: &mut Criterion) {
    // 1. Playing, the keys fit to view.
    let mut d = Driver::new(|s| s.session.play());
    d.playing = true;
    assert!(!d.state.panel.layout.rows.is_empty(), "rows are drawn");
    d.bench(c, "timeline/frame/36k_keys_fit_playing", |_| {});

    // 2. A box selection in progress: press in the rows away from keys (past the clip's end),
    //    then move every frame.
    let mut d = Driver::new(|_| {});
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
    let mut d = Driver::new(|s| {
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
    d.pointer(p);
    d.button(p, true);
    d.frame();
    d.pointer(p + vec2(20.0, 0.0));
    d.frame();
    let mut flip = false;
    d.bench(c, "timeline/frame/16k_keys_drag", |d| {
        flip = !flip;
        d.pointer(p + vec2(if flip { 40.0 } else { 60.0 }, 0.0));
    });

    // 4. The curve view of one mocap rotation channel (LeftKnee), fit to view.
    let mut d = Driver::new(|s| {
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
