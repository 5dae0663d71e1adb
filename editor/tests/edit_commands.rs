//! The Edit menu and its shortcuts on the scene: the menu lists the command table's editing
//! commands with their shortcuts, and with the Outliner focused, copy / paste / duplicate /
//! cut act on the selected entity (its subtree included) the way they act on keys and nodes in
//! their panels. The clipboard steps send what egui-winit sends (`Event::Copy`, `Event::Paste`).

mod support;

use egui::accesskit::Role;
use egui::{Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use marrow_editor::EditorApp;
use marrow_editor::command_table::UiCommand;
use marrow_editor::ui_state::Selection;
use support::*;

fn roots(h: &Harness<'_, EditorApp>) -> Vec<String> {
    h.state().doc.project().scenes["scenes/main.scene.ron"].entities.iter().map(|e| e.name.clone()).collect()
}

#[test]
fn the_edit_menu_lists_the_editing_commands_with_their_shortcuts() {
    let dir = sample("runner");
    let mut h = editor(dir.path());
    assert!(h.query_by_label_contains("Select All").is_none(), "not before the menu opens");
    click(&mut h, Role::Button, "Edit");
    for c in &UiCommand::EDIT_MENU[2..] {
        assert!(h.query_all_by_label_contains(c.text()).next().is_some(), "{c:?} is in the Edit menu");
    }
}

#[test]
fn an_entity_copied_pasted_duplicated_and_cut_with_the_outliner_focused() {
    let dir = sample("runner");
    let original = files(dir.path());
    let mut h = editor(dir.path());
    click_row(&mut h, "Runner");
    assert_eq!(h.state().ui.selection, Selection::Entity("Runner".into()));

    copy(&mut h);
    paste(&mut h, "Runner");
    assert_eq!(roots(&h), ["Ground", "Runner", "Runner 2"]);
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Paste Entity"));
    assert_eq!(h.state().ui.selection, Selection::Entity("Runner 2".into()), "the copy is selected");
    let scene = &h.state().doc.project().scenes["scenes/main.scene.ron"];
    assert_eq!(scene.entities[2].children.len(), scene.entities[1].children.len(), "with its children");

    key(&mut h, Modifiers::COMMAND, Key::D);
    assert_eq!(roots(&h), ["Ground", "Runner", "Runner 2", "Runner 3"]);
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Duplicate Entity"));

    cut(&mut h);
    assert_eq!(roots(&h), ["Ground", "Runner", "Runner 2"], "the duplicate cut");
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Cut Entity"));
    undo_all_redo_all(&mut h, dir.path(), &original);
}

#[test]
fn with_the_timeline_focused_home_goes_to_the_start_and_select_all_takes_every_key() {
    let dir = sample("runner");
    let mut h = editor(dir.path());
    click_row(&mut h, "Runner");
    let map = h.state().panels.timeline.layout.map.expect("the dope sheet is drawn");
    let y = h.state().panels.timeline.layout.rows[0].1;
    // A click on the dope sheet gives the timeline the keyboard's editing keys.
    let at = egui::Pos2::new(map.x(0.6), y);
    h.hover_at(at);
    h.run();
    h.drag_at(at);
    h.drop_at(at);
    settle(&mut h);
    h.state_mut().send(marrow_editor::command::Command::Seek { rig: "Runner".into(), time: 0.5 });
    settle(&mut h);
    let time = |h: &Harness<'_, EditorApp>| {
        let e = h.state().session.entity("Runner").unwrap();
        h.state().session.world().animator(e).unwrap().time()
    };
    assert_eq!(time(&h), 0.5);
    key(&mut h, Modifiers::NONE, Key::Home);
    assert_eq!(time(&h), 0.0, "Home goes to the start (it used to fit the view)");
    key(&mut h, Modifiers::COMMAND, Key::A);
    assert_eq!(h.state().panels.timeline.selection.len(), 25, "every key of the stride clip");
}
