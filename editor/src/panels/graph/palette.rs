//! The node palette: what the Add Node menus offer, each entry's starting settings, and the
//! searchable menu shared by the canvas's right-click menu and the dropped-wire menu.
//!
//! Not here: adding the node (the panel turns a pick into a `GraphOp::AddNodes`).

use egui::Color32;
use marrow_engine::graph::{AnimGraph, NodeKind, PinType};

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
    }
}

/// The header colour of a node kind (a hue per family: sources, blends, modifiers, output).
pub fn header_color(kind: &NodeKind) -> Color32 {
    match kind {
        NodeKind::Clip { .. } | NodeKind::BlendSpace1D { .. } => Color32::from_rgb(0x2c, 0x4a, 0x66),
        NodeKind::Parameter { .. } => Color32::from_rgb(0x3a, 0x55, 0x2c),
        NodeKind::Blend2 { .. } | NodeKind::Additive { .. } | NodeKind::Mask { .. } => {
            Color32::from_rgb(0x55, 0x3a, 0x66)
        }
        NodeKind::Adjust { .. } | NodeKind::TimeScale { .. } => Color32::from_rgb(0x66, 0x4f, 0x2c),
        NodeKind::Output => Color32::from_rgb(0x6a, 0x2c, 0x2c),
        NodeKind::Unknown { .. } => Color32::from_rgb(0x55, 0x55, 0x55),
    }
}

/// Every node the graph can take, with starting settings (the project's first clip, the
/// graph's parameters as Parameter nodes). An Output is offered only while the graph has none.
pub fn entries(graph: &AnimGraph, clips: &[String]) -> Vec<Entry> {
    let clip = clips.first().cloned().unwrap_or_default();
    let mut out = vec![
        Entry {
            label: "Clip".into(),
            hint: "Plays one clip",
            kind: NodeKind::Clip { clip, speed: 1.0, looping: true },
        },
        Entry {
            label: "Blend2".into(),
            hint: "Blends pose a to pose b by a weight",
            kind: NodeKind::Blend2 { weight: 0.5 },
        },
        Entry {
            label: "BlendSpace1D".into(),
            hint: "Clips on an axis, blended by a position, on one synchronized phase",
            kind: NodeKind::BlendSpace1D { samples: Vec::new(), position: 0.0, looping: true },
        },
        Entry {
            label: "Additive".into(),
            hint: "Adds (layer - reference) onto base",
            kind: NodeKind::Additive { weight: 1.0 },
        },
        Entry {
            label: "Mask".into(),
            hint: "Layers a pose over base on chosen bones",
            kind: NodeKind::Mask { weight: 1.0, subtrees: Vec::new() },
        },
        Entry {
            label: "Adjust".into(),
            hint: "Rotates, aims, offsets or scales bones in model space",
            kind: NodeKind::Adjust { entries: Vec::new() },
        },
        Entry {
            label: "TimeScale".into(),
            hint: "Scales the playback rate of everything upstream",
            kind: NodeKind::TimeScale { scale: 1.0 },
        },
    ];
    for p in &graph.parameters {
        out.push(Entry {
            label: format!("Parameter: {}", p.name),
            hint: "Reads a parameter (drives a float pin)",
            kind: NodeKind::Parameter { name: p.name.clone() },
        });
    }
    if !graph.nodes.iter().any(|n| matches!(n.kind, NodeKind::Output)) {
        out.push(Entry { label: "Output".into(), hint: "The graph's result", kind: NodeKind::Output });
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
