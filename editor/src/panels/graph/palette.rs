//! The node palette: what the Add Node menus offer (read from the kinds' descriptions,
//! [`marrow_engine::graph::KINDS`]), each entry's starting settings, and the searchable menu
//! shared by the canvas's right-click menu and the dropped-wire menu.
//!
//! Not here: adding the node (the panel turns a pick into a `GraphOp::AddNodes`).

use egui::Color32;
use marrow_engine::graph::{AnimGraph, KINDS, NodeKind, Palette, PinType, Start};

/// One entry of the Add Node menu.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// What the menu shows ("Clip", "Parameter: speed").
    pub label: String,
    /// A one-line description (hover text).
    pub hint: &'static str,
    /// The node it adds.
    pub kind: NodeKind,
}

/// The colour of a pin type (pins and wires).
pub fn pin_color(t: PinType) -> Color32 {
    match t {
        PinType::Pose => Color32::from_rgb(0x4f, 0xa8, 0xe8),
        PinType::Float => Color32::from_rgb(0x8c, 0xd0, 0x5a),
        PinType::Vec3 => Color32::from_rgb(0xe8, 0xb0, 0x4f),
    }
}

/// The header colour of a node kind: its family's ([`marrow_engine::graph::Family::color`]).
pub fn header_color(kind: &NodeKind) -> Color32 {
    let [r, g, b] = kind.info().family.color();
    Color32::from_rgb(r, g, b)
}

/// Every node the graph can take, from the kinds' descriptions ([`KINDS`], in its order), with
/// starting settings (the project's first clip, the graph's parameters as Parameter nodes). A
/// kind offered once per graph (the Output) is offered only while the graph has none.
pub fn entries(graph: &AnimGraph, clips: &[String]) -> Vec<Entry> {
    let clip = clips.first().map_or("", String::as_str);
    let mut out = Vec::new();
    for info in &KINDS {
        let entry = |label: String, parameter: &str| Entry {
            label,
            hint: info.hint,
            kind: (info.start)(&Start { clip, parameter }),
        };
        match info.palette {
            Palette::Always => out.push(entry(info.name.to_owned(), "")),
            Palette::PerParameter => {
                for p in &graph.parameters {
                    out.push(entry(format!("{}: {}", info.name, p.name), &p.name));
                }
            }
            Palette::OncePerGraph => {
                if !graph.nodes.iter().any(|n| std::ptr::eq(n.kind.info(), info)) {
                    out.push(entry(info.name.to_owned(), ""));
                }
            }
            Palette::Never => {}
        }
    }
    out
}

/// Whether `entry` matches the search text (case-insensitive substring; empty matches all).
pub fn matches(entry: &Entry, search: &str) -> bool {
    let s = search.trim().to_lowercase();
    s.is_empty() || entry.label.to_lowercase().contains(&s) || entry.hint.to_lowercase().contains(&s)
}

/// Draws a searchable list of `entries` (the search box takes the keyboard when the menu
/// opens; Enter picks the first match). Returns the picked entry.
pub fn menu(ui: &mut egui::Ui, search: &mut String, entries: &[Entry]) -> Option<Entry> {
    ui.set_min_width(200.0);
    let r = ui.add(egui::TextEdit::singleline(search).hint_text("Search nodes…").desired_width(190.0));
    if !r.has_focus() && search.is_empty() {
        r.request_focus();
    }
    let shown: Vec<&Entry> = entries.iter().filter(|e| matches(e, search)).collect();
    // A single-line field gives up the focus on Enter, in the frame Enter arrives.
    if (r.has_focus() || r.lost_focus()) && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
        return shown.first().map(|e| (*e).clone());
    }
    ui.separator();
    if shown.is_empty() {
        ui.weak("No node matches");
    }
    let mut picked = None;
    for e in shown {
        if ui.button(&e.label).on_hover_text(e.hint).clicked() {
            picked = Some(e.clone());
        }
    }
    picked
}
