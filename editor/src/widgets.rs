//! Small widget helpers shared by several panels (accessibility labels and the like).
//!
//! Not here: whole widgets with their own state (they live with the panel that owns them).

/// Labels the last widget for accessibility (tests and screen readers find it by this label).
pub fn named(r: egui::Response, kind: egui::WidgetType, label: &str) -> egui::Response {
    let label = label.to_owned();
    r.widget_info(move || egui::WidgetInfo::labeled(kind, true, &label));
    r
}
