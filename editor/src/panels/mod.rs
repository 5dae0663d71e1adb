//! The dockable panels. Each is a small struct in its own file (or folder) with
//! `fn ui(&mut self, ui, cx: &mut Cx)`: it reads the document and the session through the
//! narrow [`Cx`], may change UI state (selection, camera) directly, and changes anything else
//! (the project, the transport, the dock, the Log, sounds) only by sending
//! [`crate::command::Command`]s that the app applies after the UI ran. No panel imports
//! another panel's file: what two panels share lives outside `panels/` (`crate::cx`,
//! `crate::widgets`, `crate::posing`, `crate::dock`, `crate::document`), and
//! `scripts/panel-imports.py` (run by `.ci/run`) fails on a sibling import.
//!
//! Not here: applying commands, saving, the dock layout and its storage (`crate::app`,
//! `crate::dock`).

pub mod assets;
pub mod export_dialog;
pub mod graph;
pub mod history;
pub mod inspector;
pub mod log_panel;
pub mod outliner;
pub mod retarget_dialog;
pub mod stats;
pub mod timeline;
pub mod viewport;

use egui_dock::TabViewer;

use crate::cx::Cx;
use crate::dock::Tab;

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
    /// The File > Retarget Clips window.
    pub retarget: retarget_dialog::RetargetDialog,
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
