//! Editor workflows driven through the UI as a user would (egui_kittest, headless, no GPU):
//! select, scrub, play, pause and step, edit a transform by dragging, rename and reparent an
//! entity, change the Animator's clip; then undo all (the saved files equal the originals byte
//! for byte), redo all (equal to the edited state), save and reopen (equal), and a save after
//! play, scrub and pause writes no session state.

mod support;

use egui::accesskit::Role;
use egui::{Key, Modifiers};
use egui_kittest::kittest::Queryable;
use marrow_editor::document::Document;
use marrow_editor::ui_state::Selection;
use support::*;

fn rig_time(h: &egui_kittest::Harness<'_, marrow_editor::EditorApp>) -> f32 {
    let app = h.state();
    let w = app.session.world();
    w.animator(w.find("Runner").unwrap()).unwrap().time()
}

fn limb_world(h: &egui_kittest::Harness<'_, marrow_editor::EditorApp>) -> glam::Mat4 {
    let w = h.state().session.world();
    w.world_matrix(w.find("Runner/LeftThigh").unwrap()).unwrap()
}

#[test]
fn runner_workflow_undo_all_redo_all_save_and_reopen() {
    let dir = sample("runner");
    let original = files(dir.path());
    let mut h = editor(dir.path());
    assert_eq!(h.state().title(), "Marrow — runner");

    // Select the rig.
    click_row(&mut h, "Runner");
    assert_eq!(h.state().ui.selection, Selection::Entity("Runner".into()));

    // Scrub while paused: the pose and the socketed limb move; no undo step, not dirty.
    let limb0 = limb_world(&h);
    let slider = h.get_by_role_and_label(Role::Slider, "Time").rect();
    drag(
        &mut h,
        slider.left_center() + egui::vec2(2.0, 0.0),
        slider.left_center() + egui::vec2(slider.width() * 0.3, 0.0),
        6,
    );
    let t = rig_time(&h);
    assert!(t > 0.1 && t < 0.45, "scrubbed into the first half of the 1 s stride: {t}");
    assert!(
        !limb_world(&h).abs_diff_eq(limb0, 1e-4),
        "the socketed limb follows the scrub: {limb0} {} t={t} pv={}",
        limb_world(&h),
        h.state().session.pose_version()
    );
    assert_eq!(h.state().doc.steps().count(), 0);
    assert!(!h.state().doc.is_dirty());
    assert!(!h.state().session.is_playing());

    // Play advances the head, Pause stops it, Step advances exactly one tick.
    click(&mut h, Role::Button, "Play");
    let before = rig_time(&h);
    h.run_steps(10);
    let played = rig_time(&h);
    assert_ne!(played, before, "playing moves the head");
    click(&mut h, Role::Button, "Pause");
    let paused = rig_time(&h);
    h.run_steps(10);
    assert_eq!(rig_time(&h), paused, "paused: the head holds");
    click(&mut h, Role::Button, "Step");
    let tick = h.state().session.clock().tick_seconds() as f32;
    let stepped = rig_time(&h);
    let expect = if paused + tick >= 1.0 { paused + tick - 1.0 } else { paused + tick };
    assert!((stepped - expect).abs() < 1e-5, "one tick: {paused:?} -> {stepped:?} (want {expect:?})");
    h.run_steps(5);
    assert_eq!(rig_time(&h), stepped);
    assert_eq!(h.state().doc.steps().count(), 0, "the transport pushes no undo step");
    assert!(!h.state().doc.is_dirty());

    // Edit a transform by dragging: one undo step.
    click_row(&mut h, "Ground");
    let field = h.get_by_label("Position X").rect();
    drag(&mut h, field.center(), field.center() + egui::vec2(60.0, 0.0), 8);
    assert_eq!(h.state().doc.steps().count(), 1, "a drag is one step");
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Edit Transform"));
    let x =
        h.state().doc.project().scenes["scenes/main.scene.ron"].entities[0].transform.unwrap().translation.x;
    assert!(x > 0.1, "dragged right: {x}");

    // Rename with F2.
    key(&mut h, Modifiers::NONE, Key::F2);
    h.get_by_label("New name").type_text("Floor");
    h.run();
    key(&mut h, Modifiers::NONE, Key::Enter);
    let names: Vec<String> = h.state().doc.project().scenes["scenes/main.scene.ron"]
        .entities
        .iter()
        .map(|e| e.name.clone())
        .collect();
    assert!(names.contains(&"Floor".to_owned()), "the typed name replaces the old one: {names:?}");

    // Reparent by dragging the row onto the rig.
    let renamed = "Floor";
    let from = h.get_by_role_and_label(Role::Button, renamed).rect().center();
    let to = h.get_by_role_and_label(Role::Button, "Runner").rect().center();
    drag(&mut h, from, to, 6);
    let scene = &h.state().doc.project().scenes["scenes/main.scene.ron"];
    assert!(
        scene
            .entities
            .iter()
            .find(|e| e.name == "Runner")
            .unwrap()
            .children
            .iter()
            .any(|c| c.name == renamed),
        "reparented under Runner"
    );

    // Change the Animator's clip.
    click_row(&mut h, "Runner");
    // The timeline names the clip too; the inspector's picker is the combo box.
    h.get_by(|n| n.role() == Role::ComboBox && n.value().as_deref() == Some("clips/stride.clip.ron")).click();
    h.run();
    h.get_by_label("(none)").click();
    h.run();
    let scene = &h.state().doc.project().scenes["scenes/main.scene.ron"];
    let runner = scene.entities.iter().find(|e| e.name == "Runner").unwrap();
    assert_eq!(runner.animator.as_ref().unwrap().clip, None);

    let steps = h.state().doc.steps().count();
    assert_eq!(steps, 4, "transform, rename, reparent, clip");
    assert!(h.state().title().ends_with(" *"), "the title marks unsaved changes");
    let edited = h.state().doc.files();

    // Undo all: the saved files equal the originals, byte for byte.
    for _ in 0..steps {
        key(&mut h, Modifiers::COMMAND, Key::Z);
    }
    assert!(!h.state().doc.is_dirty());
    key(&mut h, Modifiers::COMMAND, Key::S);
    assert_eq!(files(dir.path()), original, "undo all = original bytes");

    // Redo all: equal to the edited state.
    for _ in 0..steps {
        key(&mut h, Modifiers::COMMAND | Modifiers::SHIFT, Key::Z);
    }
    assert_eq!(h.state().doc.files(), edited, "redo all = edited state");
    key(&mut h, Modifiers::COMMAND, Key::S);
    let saved = files(dir.path());
    let reopened = Document::open(dir.path()).unwrap();
    assert_eq!(reopened.files(), edited, "save, reopen: equal");

    // Play, scrub and pause, then save: no session state reaches the files.
    click(&mut h, Role::Button, "Play");
    h.run_steps(20);
    click(&mut h, Role::Button, "Pause");
    key(&mut h, Modifiers::COMMAND, Key::S);
    assert_eq!(files(dir.path()), saved, "a save after play and pause writes the same bytes");
}
