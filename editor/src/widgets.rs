//! Small widget helpers shared by several panels (accessibility labels and the like).
//!
//! Not here: whole widgets with their own state (they live with the panel that owns them).

/// A picker (combo box) at most `most` points wide and never wider than the room left in its row,
/// its selected text cut with an ellipsis where it does not fit: a long asset path in a narrow
/// Inspector shows its start (and, where the caller adds it, the whole on hover) instead of
/// pushing the picker's arrow past the panel's edge.
pub fn picker(
    ui: &egui::Ui,
    id_salt: impl std::hash::Hash + std::fmt::Debug,
    selected: impl Into<egui::WidgetText>,
    most: f32,
) -> egui::ComboBox {
    egui::ComboBox::from_id_salt(id_salt)
        .selected_text(selected)
        .width(ui.available_width().clamp(60.0, most))
        .truncate()
}

/// Labels the last widget for accessibility (tests and screen readers find it by this label).
pub fn named(r: egui::Response, kind: egui::WidgetType, label: &str) -> egui::Response {
    let label = label.to_owned();
    r.widget_info(move || egui::WidgetInfo::labeled(kind, true, &label));
    r
}

/// A slider over a value that showing must not rewrite (an authored value; a live parameter a
/// binding or a game sets). egui's slider clamps the value it is given to its range and
/// rounds it to `max_decimals` on every frame it is drawn, which reads as a change: a value a file
/// holds outside the range (or between the rounded steps) would be rewritten, one edit per frame,
/// just by being shown. This one keeps the value as it is until the user moves the slider (then
/// the range applies) and shows `decimals` decimals without rounding the value itself.
pub fn authored_slider<N: egui::emath::Numeric>(
    value: &mut N,
    range: std::ops::RangeInclusive<N>,
    decimals: usize,
) -> egui::Slider<'_> {
    egui::Slider::new(value, range)
        .clamping(egui::SliderClamping::Edits)
        .custom_formatter(move |v, _| format!("{v:.decimals$}"))
}

/// A drag value over an authored value with a range: a value a file holds outside the range is
/// kept as it is until the user drags or types (egui's default clamps it on every frame it is
/// drawn, which reads as an edit).
pub fn authored_drag<N: egui::emath::Numeric>(value: &mut N) -> egui::DragValue<'_> {
    egui::DragValue::new(value).clamp_existing_to_range(false)
}
