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

/// Adds `add` as one group of a wrapping row (`horizontal_wrapped`), moved to the next line whole
/// when the room left on this line is narrower than the group measured last frame: egui wraps
/// widget by widget, so a toggle pair could be split across two lines or run past the panel's
/// edge. The first frame a group is seen is measured and discarded (never shown half-placed).
pub fn wrap_group<R>(
    ui: &mut egui::Ui,
    id_salt: impl std::hash::Hash + std::fmt::Debug,
    add: impl FnOnce(&mut egui::Ui) -> R,
) -> R {
    let id = ui.id().with(("wrap group", id_salt));
    let width: Option<f32> = ui.ctx().data(|d| d.get_temp(id));
    // (A wrapping layout's `available_width` is the whole line's: the room left is to the cursor.)
    let room = ui.max_rect().right() - ui.cursor().min.x;
    // Not measured yet: on a line of its own (that pass is discarded below), never past the edge.
    if width.is_none_or(|w| w > room) {
        ui.end_row();
    }
    // Sized to the group itself, not `horizontal`: that claims the rest of the line (egui sizes
    // it to the room before wrapping, in a wrapping layout the whole line's width from the
    // cursor, past the panel's edge).
    let size = egui::vec2(width.unwrap_or(0.0), ui.spacing().interact_size.y);
    let r = ui.allocate_ui_with_layout(size, egui::Layout::left_to_right(egui::Align::Center), add);
    let now = r.response.rect.width();
    if width.is_none_or(|w| (w - now).abs() > 0.5) {
        ui.ctx().data_mut(|d| d.insert_temp(id, now));
        if width.is_none() {
            ui.ctx().request_discard("a toolbar group measured for the first time");
        }
    }
    r.inner
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
