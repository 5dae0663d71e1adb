//! The dockable panels. Each is a small struct in its own file with
//! `fn ui(&mut self, ui, cx: &mut Cx)`: it reads the document and the session through the
//! narrow [`Cx`], may change UI state (selection, camera) directly, and changes the project only
//! by sending commands that the app applies after the UI ran.
//!
//! Not here: applying commands, saving, the dock layout's storage (see `crate::app`).

pub mod assets;
pub mod cloud_card;
pub mod crowd_card;
pub mod damaged_view;
pub mod export_dialog;
pub mod graph;
pub mod history;
pub mod inspector;
pub mod log_panel;
pub mod outliner;
pub mod stats;
pub mod timeline;
pub mod viewport;

use egui_dock::TabViewer;
use egui_wgpu::RenderState;
use marrow_engine::scene::SceneDesc;
use serde::{Deserialize, Serialize};

use crate::command::Command;
use crate::document::{Document, Op};
use crate::log::EditorLog;
use crate::session::Session;
use crate::stats::Stats;
use crate::ui_state::UiState;

/// What a panel sees: the document and session to read, UI state to change, and the command
/// queue to send edits and transport requests to.
pub struct Cx<'a> {
    /// The document (read only: change it with [`Cx::edit`]).
    pub doc: &'a Document,
    /// The running session (read only: change it with commands).
    pub session: &'a Session,
    /// UI state (selection, camera, view toggles).
    pub ui: &'a mut UiState,
    /// The log.
    pub log: &'a EditorLog,
    /// Frame statistics.
    pub stats: &'a Stats,
    /// eframe's wgpu state (none in logic-only tests).
    pub render: Option<&'a RenderState>,
    commands: &'a mut Vec<Command>,
}

impl<'a> Cx<'a> {
    /// A context over the app's parts.
    pub fn new(
        doc: &'a Document,
        session: &'a Session,
        ui: &'a mut UiState,
        log: &'a EditorLog,
        stats: &'a Stats,
        render: Option<&'a RenderState>,
        commands: &'a mut Vec<Command>,
    ) -> Self {
        Self { doc, session, ui, log, stats, render, commands }
    }

    /// Queues a command.
    pub fn send(&mut self, c: Command) {
        self.commands.push(c);
    }

    /// Queues an authored change.
    pub fn edit(&mut self, op: Op) {
        self.commands.push(Command::Edit(Box::new(op)));
    }

    /// A mark in the command queue, for [`Cx::withhold_edits_since`].
    pub fn command_mark(&self) -> usize {
        self.commands.len()
    }

    /// Drops the authored changes queued since `mark` (a read-only view: its gestures send no
    /// edit), keeping every other command; returns how many were dropped.
    pub fn withhold_edits_since(&mut self, mark: usize) -> usize {
        let before = self.commands.len();
        let mut i = 0;
        self.commands.retain(|c| {
            i += 1;
            i <= mark || !matches!(c, Command::Edit(_))
        });
        before - self.commands.len()
    }

    /// The active scene: its path and authored description.
    pub fn scene(&self) -> Option<(&'a str, &'a SceneDesc)> {
        let path = self.session.scene()?;
        let (k, d) = self.doc.project().scenes.get_key_value(path)?;
        Some((k.as_str(), d))
    }
}

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

/// Every panel's own state.
#[derive(Debug, Default)]
pub struct Panels {
    /// The outliner.
    pub outliner: outliner::Outliner,
    /// The viewport.
    pub viewport: viewport::ViewportPanel,
    /// The inspector.
    pub inspector: inspector::Inspector,
    /// The assets panel.
    pub assets: assets::AssetsPanel,
    /// The history panel.
    pub history: history::HistoryPanel,
    /// The stats panel.
    pub stats: stats::StatsPanel,
    /// The log panel.
    pub log: log_panel::LogPanel,
    /// The timeline.
    pub timeline: timeline::TimelinePanel,
    /// The graph editor.
    pub graph: graph::GraphPanel,
    /// The File > Export glTF window.
    pub export: export_dialog::ExportDialog,
}

/// The dock's tab viewer over the panels.
pub struct Viewer<'p, 'c> {
    /// The panels.
    pub panels: &'p mut Panels,
    /// Their context.
    pub cx: Cx<'c>,
}

impl TabViewer for Viewer<'_, '_> {
    type Tab = Tab;

    fn id(&mut self, tab: &mut Tab) -> egui::Id {
        egui::Id::new(("marrow tab", *tab))
    }

    fn title(&mut self, tab: &mut Tab) -> egui::WidgetText {
        tab.title().into()
    }

    fn ui(&mut self, ui: &mut egui::Ui, tab: &mut Tab) {
        let cx = &mut self.cx;
        match tab {
            Tab::Viewport => self.panels.viewport.ui(ui, cx),
            Tab::Outliner => self.panels.outliner.ui(ui, cx),
            Tab::Inspector => self.panels.inspector.ui(ui, cx),
            Tab::Assets => self.panels.assets.ui(ui, cx),
            Tab::History => self.panels.history.ui(ui, cx),
            Tab::Stats => self.panels.stats.ui(ui, cx),
            Tab::Log => self.panels.log.ui(ui, cx),
            Tab::Timeline => self.panels.timeline.ui(ui, cx),
            Tab::Graph => self.panels.graph.ui(ui, cx),
        }
    }

    fn on_tab_button(&mut self, tab: &mut Tab, response: &egui::Response) {
        // Tab titles are painted text; give them a label so tests and screen readers find them.
        let title = tab.title();
        response.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Button, true, title));
    }

    fn is_closeable(&self, _tab: &Tab) -> bool {
        false
    }

    fn scroll_bars(&self, tab: &Tab) -> [bool; 2] {
        match tab {
            Tab::Viewport | Tab::Timeline | Tab::Graph => [false, false],
            _ => [true, true],
        }
    }
}
