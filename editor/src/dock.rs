//! The dock's tabs and layout: which panels exist as tabs, the default arrangement, and
//! bringing a tab to the front. The app owns the `DockState` (kept in eframe's storage, never
//! in the project); panels ask for a tab with [`crate::command::Command::ShowTab`].
//!
//! Not here: drawing the panels (`crate::panels`), storage (`crate::app`).

use serde::{Deserialize, Serialize};

/// The panels a dock tab can show.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Tab {
    /// The 3D view.
    Viewport,
    /// The entity tree.
    Outliner,
    /// Cards for the selection.
    Inspector,
    /// Skeletons, clips, graphs.
    Assets,
    /// Undo history.
    History,
    /// Timings and counters.
    Stats,
    /// Faults and warnings.
    Log,
    /// Clip authoring: dope sheet, curves, markers.
    Timeline,
    /// The blend/adjust graph editor.
    Graph,
}

impl Tab {
    /// The tab's title.
    pub fn title(self) -> &'static str {
        match self {
            Tab::Viewport => "Viewport",
            Tab::Outliner => "Outliner",
            Tab::Inspector => "Inspector",
            Tab::Assets => "Assets",
            Tab::History => "History",
            Tab::Stats => "Stats",
            Tab::Log => "Log",
            Tab::Timeline => "Timeline",
            Tab::Graph => "Graph",
        }
    }

    /// Every tab.
    pub const ALL: [Tab; 9] = [
        Tab::Viewport,
        Tab::Outliner,
        Tab::Inspector,
        Tab::Assets,
        Tab::History,
        Tab::Stats,
        Tab::Log,
        Tab::Timeline,
        Tab::Graph,
    ];
}

/// The default dock layout: outliner and assets on the left, the viewport in the middle, the
/// inspector on the right, the timeline (with log, stats and history) below.
pub fn default_layout() -> egui_dock::DockState<Tab> {
    use egui_dock::NodeIndex;
    let mut ds = egui_dock::DockState::new(vec![Tab::Viewport]);
    let s = ds.main_surface_mut();
    let [center, left] = s.split_left(NodeIndex::root(), 0.2, vec![Tab::Outliner]);
    let _ = s.split_below(left, 0.6, vec![Tab::Assets]);
    let [center, _right] = s.split_right(center, 0.72, vec![Tab::Inspector]);
    let _ = s.split_below(center, 0.5, vec![Tab::Timeline, Tab::Graph, Tab::Log, Tab::Stats, Tab::History]);
    ds
}

/// Brings `tab` to the front of its leaf, adding it next to the Timeline (or to the focused leaf)
/// when the layout lacks it (a layout saved by an older build).
pub fn show_tab(dock: &mut egui_dock::DockState<Tab>, tab: Tab) {
    if dock.find_tab(&tab).is_none() {
        match dock.find_tab(&Tab::Timeline) {
            Some(at) => {
                let path = egui_dock::NodePath { surface: at.surface, node: at.node };
                if let Ok(leaf) = dock.leaf_mut(path) {
                    leaf.append_tab(tab);
                }
            }
            None => dock.push_to_focused_leaf(tab),
        }
    }
    if let Some(at) = dock.find_tab(&tab) {
        let _ = dock.set_active_tab(at);
    }
}
