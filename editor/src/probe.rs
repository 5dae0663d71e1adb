//! The test probe: where things are on screen, for tests that drive the real window with real
//! mouse events (`tests/real_window.rs` runs the `marrow` binary under Xvfb with xdotool).
//!
//! Only when the environment variable `MARROW_TEST_PROBE` names a file: after each frame whose
//! content changed, the editor writes there (through a `.tmp` file and a rename, so a reader
//! never sees half of it) one JSON object, in physical pixels relative to the window's inside:
//!
//! - `rects`: named rectangles `[x0, y0, x1, y1]` marked this frame with [`mark`]: the menu bar
//!   buttons (`menu:File`, `menu:Edit`, …), the entries of an open menu (`menu:Copy`, …), the
//!   outliner's entity rows (`outliner:Runner`);
//! - `dope`: the dope sheet's ruler and rows rectangles, its rows (`kind`, centre `y`), the
//!   first drawn row's key positions (`t`, `x`; at most 4,000), and the clip shown (`clip`: its
//!   `fps`, whether it is `read_only`, the playhead `time`), when the dope sheet was drawn;
//! - `graph`: the graph canvas and its nodes' rectangles by id, when the canvas was drawn;
//! - `focus`, `keys_selected`, `nodes_selected`, `steps` (the document's head) and `dirty`, so a
//!   test can wait for the editor to have taken an event;
//! - `log_lines` (the Log's entry count), `log_tail` (its last eight lines, `source: text`) and
//!   `frames`: the frames drawn since start, the
//!   seconds since the first, and every gap between two frames over 100 ms (`stalls`: its end
//!   in seconds since the first frame and its length in ms, the last 256 kept; `stall_count` all
//!   of them), for the soak (`scripts/soak.py`).
//!
//! Without the variable nothing is marked or written. Not here: anything the editor reads back.

use std::path::PathBuf;
use std::sync::OnceLock;

use egui::{Id, Rect};
use serde_json::{Value, json};

use crate::document::Document;
use crate::log::EditorLog;
use crate::panels::Panels;
use crate::ui_state::UiState;

fn target() -> Option<&'static PathBuf> {
    static PATH: OnceLock<Option<PathBuf>> = OnceLock::new();
    PATH.get_or_init(|| std::env::var_os("MARROW_TEST_PROBE").filter(|p| !p.is_empty()).map(PathBuf::from))
        .as_ref()
}

/// Whether the probe is on (`MARROW_TEST_PROBE` set).
pub fn enabled() -> bool {
    target().is_some()
}

/// Frame gaps over this are stalls.
const STALL_MS: f64 = 100.0;

/// The frame clock the probe reports (`frames`).
#[derive(Default)]
struct FrameClock {
    first: Option<std::time::Instant>,
    last: Option<std::time::Instant>,
    frames: u64,
    stalls: std::collections::VecDeque<(f64, f64)>,
    stall_count: u64,
}

impl FrameClock {
    fn tick(&mut self) -> Value {
        let now = std::time::Instant::now();
        let first = *self.first.get_or_insert(now);
        let since = now.duration_since(first).as_secs_f64();
        if let Some(last) = self.last {
            let gap = now.duration_since(last).as_secs_f64() * 1e3;
            if gap > STALL_MS {
                self.stall_count += 1;
                if self.stalls.len() == 256 {
                    self.stalls.pop_front();
                }
                self.stalls.push_back((since, gap));
            }
        }
        self.last = Some(now);
        self.frames += 1;
        let stalls: Vec<Value> = self.stalls.iter().map(|(t, ms)| json!([t, ms])).collect();
        json!({ "count": self.frames, "seconds": since, "stalls": stalls, "stall_count": self.stall_count })
    }
}

fn clock() -> &'static std::sync::Mutex<FrameClock> {
    static CLOCK: OnceLock<std::sync::Mutex<FrameClock>> = OnceLock::new();
    CLOCK.get_or_init(Default::default)
}

#[derive(Clone, Default)]
struct Marks(Vec<(String, Rect)>);

fn marks_id() -> Id {
    Id::new("marrow test probe marks")
}

/// Marks `rect` (points) under `name` for this frame's probe file; nothing when the probe is
/// off.
pub fn mark(ctx: &egui::Context, name: impl Into<String>, rect: Rect) {
    if enabled() {
        let name = name.into();
        ctx.data_mut(|d| d.get_temp_mut_or_default::<Marks>(marks_id()).0.push((name, rect)));
    }
}

fn px(r: Rect, ppp: f32) -> Value {
    json!([r.min.x * ppp, r.min.y * ppp, r.max.x * ppp, r.max.y * ppp])
}

/// The probe's JSON for this frame (the marks taken out of `ctx`).
fn report(ctx: &egui::Context, panels: &Panels, ui: &UiState, doc: &Document, log: &EditorLog) -> Value {
    let ppp = ctx.pixels_per_point();
    let marks = ctx.data_mut(|d| d.remove_temp::<Marks>(marks_id())).unwrap_or_default();
    let rects: serde_json::Map<String, Value> = marks.0.into_iter().map(|(n, r)| (n, px(r, ppp))).collect();
    let t = &panels.timeline;
    let dope = t.layout.map.filter(|_| !t.layout.rows.is_empty()).map(|map| {
        let rows: Vec<Value> =
            t.layout.rows.iter().map(|(k, y)| json!({ "kind": format!("{k:?}"), "y": y * ppp })).collect();
        let (t0, t1) = map.visible();
        let keys: Vec<Value> = t
            .shown_times()
            .iter()
            .filter(|x| (t0..=t1).contains(*x))
            .take(4000)
            .map(|x| json!({ "t": x, "x": map.x(*x) * ppp }))
            .collect();
        let shown = t.layout.shown.map(
            |s| json!({ "fps": s.frame_rate, "read_only": s.read_only, "time": s.time, "live": s.live }),
        );
        json!({
            "clip": shown,
            "ruler": px(t.layout.ruler, ppp),
            "rows_rect": px(t.layout.rows_rect, ppp),
            "rows": rows,
            "keys": keys,
        })
    });
    let g = &panels.graph.report;
    let graph = g.canvas.map(|c| {
        let nodes: serde_json::Map<String, Value> =
            g.node_rects.iter().map(|(id, r)| (id.0.to_string(), px(*r, ppp))).collect();
        json!({ "canvas": px(c, ppp), "nodes": nodes })
    });
    json!({
        "rects": rects,
        "dope": dope,
        "graph": graph,
        "focus": format!("{:?}", ui.focus),
        "keys_selected": t.selection.len(),
        "nodes_selected": ui.graph_selection.len(),
        "steps": doc.head(),
        "undo": doc.undo_label(),
        "dirty": doc.is_dirty(),
        "log_lines": log.entries().len(),
        "log_tail": log.entries().iter().rev().take(8).rev().map(|e| format!("{}: {}", e.source, e.text)).collect::<Vec<_>>(),
        "frames": clock().lock().map_or(Value::Null, |mut c| c.tick()),
    })
}

/// Writes this frame's probe file when the probe is on.
pub fn write(
    ctx: &egui::Context,
    panels: &Panels,
    ui: &UiState,
    doc: &Document,
    log: &EditorLog,
    last: &mut String,
) {
    let Some(path) = target() else { return };
    let text = report(ctx, panels, ui, doc, log).to_string();
    if text == *last {
        return;
    }
    let tmp = path.with_extension("tmp");
    if std::fs::write(&tmp, &text).and_then(|()| std::fs::rename(&tmp, path)).is_ok() {
        *last = text;
    }
}
