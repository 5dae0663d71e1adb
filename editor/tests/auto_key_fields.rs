//! Typing a number into the Inspector's pose fields with Auto Key on: the field commits on
//! Enter (or when it loses the focus), so a typed "35" is one key at the playhead and one undo
//! step, not a key for "3" and then another for "35".

mod support;

use egui::accesskit::Role;
use egui::{Key, Modifiers};
use egui_kittest::kittest::Queryable;
use marrow_editor::ui_state::Selection;
use support::*;

#[test]
fn a_number_typed_into_a_rotation_field_with_auto_key_is_one_key_and_one_step() {
    let dir = sample("runner");
    let mut h = editor(dir.path());
    click_row(&mut h, "Runner");
    click(&mut h, Role::Button, "⏺ Auto Key");
    h.state_mut().send(marrow_editor::command::Command::Seek { rig: "Runner".into(), time: 0.4 });
    h.state_mut().ui.selection = Selection::Bone { rig: "Runner".into(), bone: "thigh_l".into() };
    settle(&mut h);
    let times = |h: &egui_kittest::Harness<'_, marrow_editor::EditorApp>| {
        let c = &h.state().doc.project().clips["clips/stride.clip.ron"];
        c.clip.channels()[1].rotation.as_ref().map_or(Vec::new(), |t| t.times().to_vec())
    };
    let before = times(&h);
    assert!(!before.iter().any(|t| (t - 0.4).abs() < 1e-6));
    let steps = h.state().doc.head();

    h.get_by_label("Pose Rotation X").focus();
    settle(&mut h);
    key(&mut h, Modifiers::COMMAND, Key::A);
    // One key press at a time, as a keyboard types.
    for c in ["3", "5"] {
        h.event(egui::Event::Text(c.into()));
        settle(&mut h);
    }
    key(&mut h, Modifiers::NONE, Key::Enter);

    assert_eq!(h.state().doc.head(), steps + 1, "one undo step: {:?}", h.state().doc.undo_label());
    let after = times(&h);
    assert_eq!(after.len(), before.len() + 1, "one key more: {after:?}");
    assert!(after.iter().any(|t| (t - 0.4).abs() < 1e-6), "at the playhead: {after:?}");
}
