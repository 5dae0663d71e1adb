//! The Stats panel: smoothed CPU timings of each stage of a frame (each row's tooltip says what
//! it covers: the UI, then what eframe does after it, then the whole frame), FPS, this frame's
//! palettes, joint matrices and uploads (0 while paused and unscrubbed), per-pass GPU time from
//! timestamp queries (a pending reading is shown as pending, never as 0) and a plot of the
//! frame time history.
//!
//! Not here: measuring (`crate::app`, `crate::stats`).

use egui_plot::{Line, Plot, PlotPoints};

use crate::cx::Cx;
use crate::session::Ema;

/// The Stats panel.
#[derive(Debug, Default)]
pub struct StatsPanel;

fn ms(e: &Ema) -> String {
    e.get().map_or("–".to_owned(), |v| format!("{v:.3} ms"))
}

impl StatsPanel {
    /// Draws the panel.
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut Cx) {
        let s = cx.stats;
        ui.columns(2, |cols| {
            egui::Grid::new("cpu").num_columns(2).striped(true).show(&mut cols[0], |ui| {
                for (name, e, covers) in [
                    ("animation", &s.animation, "sampling, blending, composition, palettes"),
                    ("skinning / palette", &s.palette, "packing rig palettes for the GPU"),
                    ("morph", &s.morph, "rebuilding morph instances"),
                    ("extraction", &s.extraction, "the world into the viewport's draw data"),
                    ("render submit", &s.submit, "encoding the viewport's passes"),
                    ("UI", &s.ui, "the editor's frame function: panels, session, commands (extraction excluded)"),
                    (
                        "tessellate + paint",
                        &s.after_ui,
                        "after the UI: egui's end of pass, tessellation, uploads, render pass (whole frame − UI)",
                    ),
                    (
                        "whole frame CPU",
                        &s.whole_frame,
                        "eframe's CPU time of the previous frame: UI, tessellation, painting (vsync wait excluded)",
                    ),
                    ("frame interval", &s.interval, "time between frames"),
                ] {
                    ui.label(name).on_hover_text(covers);
                    ui.monospace(ms(e)).on_hover_text(covers);
                    ui.end_row();
                }
                ui.label("FPS");
                ui.monospace(s.fps().map_or("–".to_owned(), |f| format!("{f:.1}")));
                ui.end_row();
            });
            egui::Grid::new("counts").num_columns(2).striped(true).show(&mut cols[1], |ui| {
                for (name, v) in [
                    ("palettes", s.palettes),
                    ("joint matrices", s.joint_matrices),
                    ("palette uploads", s.palette_uploads),
                    ("morph uploads", s.morph_uploads),
                ] {
                    ui.label(name);
                    ui.monospace(v.to_string());
                    ui.end_row();
                }
                let gpu = |v: Option<f64>| v.map_or("–".to_owned(), |x| format!("{x:.3} ms"));
                match (s.gpu_timing, s.gpu) {
                    (false, _) => {
                        ui.label("GPU time");
                        ui.weak("no timestamp queries on this device");
                        ui.end_row();
                    }
                    (true, None) => {
                        ui.label("GPU time");
                        ui.weak("pending…");
                        ui.end_row();
                    }
                    (true, Some(p)) => {
                        for (name, v) in [
                            ("GPU shadow", p.shadow),
                            ("GPU depth", p.depth),
                            ("GPU forward", p.forward),
                            ("GPU outline", p.outline),
                            ("GPU overlay", p.overlay),
                        ] {
                            ui.label(name);
                            ui.monospace(gpu(v));
                            ui.end_row();
                        }
                    }
                }
            });
        });
        let points: PlotPoints = s.history.iter().enumerate().map(|(i, v)| [i as f64, *v]).collect();
        Plot::new("frame times")
            .height(ui.available_height().clamp(60.0, 160.0))
            .allow_drag(false)
            .allow_zoom(false)
            .allow_scroll(false)
            .include_y(0.0)
            .include_y(20.0)
            .y_axis_label("ms")
            .show(ui, |p| p.line(Line::new("frame time", points)));
    }
}
