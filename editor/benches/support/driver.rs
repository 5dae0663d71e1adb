//! The timeline benchmarks' driver: an egui context running the Timeline panel over a document
//! and session frame by frame with synthetic pointer input, timing each whole frame on the CPU
//! (UI pass with the session's sync and the edits applied, tessellation, paint submission on a
//! real wgpu device). Shared by `timeline.rs` and `edit_cost.rs`.

// Each benchmark uses part of the driver.
#![allow(dead_code)]

use std::time::{Duration, Instant};

use criterion::Criterion;
use egui::{Pos2, Rect, vec2};
use egui_wgpu::wgpu;
use marrow_editor::command::Command;
use marrow_editor::cx::Cx;
use marrow_editor::document::Document;
use marrow_editor::log::EditorLog;
use marrow_editor::panels::timeline::TimelinePanel;
use marrow_editor::panels::timeline::model::RowKind;
use marrow_editor::session::Session;
use marrow_editor::stats::Stats;
use marrow_editor::ui_state::{Selection, UiState};
use marrow_engine::project::Project;

/// The panel's size in points (pixels per point 1).
pub const SIZE: egui::Vec2 = vec2(1400.0, 700.0);

/// The editor state the panel works on.
pub struct State {
    pub panel: TimelinePanel,
    pub doc: Document,
    pub session: Session,
    pub ui: UiState,
    pub log: EditorLog,
    pub stats: Stats,
    pub gesture: u64,
}

/// egui_wgpu's paint submission on a real device.
pub struct Paint {
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
pub struct Times {
    pub ui: Duration,
    /// The part of `ui` spent applying the panel's edits to the document.
    pub edit: Duration,
    pub tessellate: Duration,
    pub paint: Duration,
}

impl Times {
    pub fn total(&self) -> Duration {
        self.ui + self.tessellate + self.paint
    }
}

/// An egui context driving the panel frame by frame with synthetic pointer input.
pub struct Driver {
    pub ctx: egui::Context,
    pub state: State,
    pub paint: Option<Paint>,
    pub time: f64,
    pub events: Vec<egui::Event>,
    pub playing: bool,
}

impl Driver {
    /// A driver over `project` (its first scene's rig selected), `setup` run before the first
    /// frames.
    pub fn new(project: Project, setup: impl FnOnce(&mut State)) -> Self {
        let doc = Document::new(project, None);
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
    pub fn frame(&mut self) -> Times {
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

    pub fn pointer(&mut self, p: Pos2) {
        self.events.push(egui::Event::PointerMoved(p));
    }

    pub fn button(&mut self, p: Pos2, pressed: bool) {
        self.events.push(egui::Event::PointerButton {
            pos: p,
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: egui::Modifiers::NONE,
        });
    }

    /// Prints the mean stage times of `n` frames, each after `each` (the workload's input).
    pub fn print_stages(&mut self, name: &str, n: usize, mut each: impl FnMut(&mut Self)) {
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
    pub fn bench(&mut self, c: &mut Criterion, name: &str, mut each: impl FnMut(&mut Self)) {
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

    /// Presses on the key drawn at `p`, drags it 20 points, then measures whole frames of the drag
    /// going on (the pointer between 40 and 60 points right of `p`: every frame an edit). The
    /// button stays down.
    pub fn bench_drag(&mut self, c: &mut Criterion, name: &str, p: Pos2) {
        self.pointer(p);
        self.button(p, true);
        self.frame();
        self.pointer(p + vec2(20.0, 0.0));
        self.frame();
        let mut flip = false;
        self.bench(c, name, |d| {
            flip = !flip;
            d.pointer(p + vec2(if flip { 40.0 } else { 60.0 }, 0.0));
        });
    }

    /// Where the panel drew the key of `kind` at `t` last frame.
    pub fn key_at(&self, kind: RowKind, t: f32) -> Pos2 {
        self.state.panel.layout.key(kind, t).expect("the row is drawn")
    }
}
