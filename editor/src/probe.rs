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
//! - `dope`: the dope sheet's ruler and rows rectangles, its rows (`kind`, centre `y`), and the
//!   first drawn row's key positions (`t`, `x`; at most 4,000), when the dope sheet was drawn;
//! - `graph`: the graph canvas and its nodes' rectangles by id, when the canvas was drawn;
//! - `focus`, `keys_selected`, `nodes_selected`, `steps` (the document's head) and `dirty`, so a
//!   test can wait for the editor to have taken an event.
//!
//! Without the variable nothing is marked or written. Not here: anything the editor reads back.

use std::path::PathBuf;
use std::sync::OnceLock;

use egui::{Id, Rect};
use serde_json::{Value, json};

use crate::document::Document;
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
fn report(ctx: &egui::Context, panels: &Panels, ui: &UiState, doc: &Document) -> Value {
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
        json!({
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
        "dirty": doc.is_dirty(),
    })
}

/// Writes this frame's probe file when the probe is on and the content changed since `last`.
pub fn write(ctx: &egui::Context, panels: &Panels, ui: &UiState, doc: &Document, last: &mut String) {
    let Some(path) = target() else { return };
    let text = report(ctx, panels, ui, doc).to_string();
    if text == *last {
        return;
    }
    let tmp = path.with_extension("tmp");
    if std::fs::write(&tmp, &text).and_then(|()| std::fs::rename(&tmp, path)).is_ok() {
        *last = text;
    }
}
