//! Requests that used to travel on side channels (flags in the UI state the app polled, outboxes
//! it drained) reach the app as commands, and the keys of the command table reach the app: a
//! marker crossed with the timeline's Audio on plays its sound, the Assets panel's New Graph
//! opens the graph in the Graph tab, the Outliner's Import asks for the file dialog, and the
//! gizmo, rename and transport keys come from the one table.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use egui::accesskit::Role;
use egui::{Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use marrow_editor::EditorApp;
use marrow_editor::app::{AppOptions, MarkerSound};
use marrow_editor::command_table::UiCommand;
use marrow_editor::ui_state::Selection;
use marrow_editor::viewport::gizmo::GizmoMode;
use support::*;

/// The runner sample with a sound player that counts the sounds it is asked to play.
fn editor_with_sound(project: &std::path::Path, played: Arc<AtomicUsize>) -> Harness<'static, EditorApp> {
    let p = project.to_owned();
    let sound = MarkerSound(Arc::new(move |name: &str| {
        assert_eq!(name, "footstep");
        played.fetch_add(1, Ordering::SeqCst);
    }));
    Harness::builder()
        .with_size(egui::vec2(1440.0, 900.0))
        .with_step_dt(1.0 / 60.0)
        .with_max_steps(60)
        .build_eframe(move |cc| {
            EditorApp::new(
                cc,
                AppOptions { project: Some(p), marker_sound: Some(sound), ..Default::default() },
            )
        })
}

#[test]
fn a_marker_crossed_with_audio_on_plays_its_sound_once_per_crossing() {
    let dir = sample("runner");
    let played = Arc::new(AtomicUsize::new(0));
    let mut h = editor_with_sound(dir.path(), played.clone());
    click_row(&mut h, "Runner");
    h.get_by_role_and_label(Role::CheckBox, "Audio").click();
    settle(&mut h);
    key(&mut h, Modifiers::NONE, Key::Space);
    assert!(h.state().session.is_playing());
    // The stride is 1 s long with a footstep marker at each instant a leg is vertical (two a
    // lap): 1.5 s of play crosses at least two, and each crossing the event lane flashes plays
    // once.
    for _ in 0..90 {
        h.step();
    }
    let n = played.load(Ordering::SeqCst);
    assert!(n >= 2, "{n} footsteps in 1.5 s of a stride with two a second");
    assert_eq!(n, h.state().panels.timeline.event_count(), "one sound per marker crossed");
    key(&mut h, Modifiers::NONE, Key::Space);
    let paused = played.load(Ordering::SeqCst);
    for _ in 0..30 {
        h.step();
    }
    assert_eq!(played.load(Ordering::SeqCst), paused, "no sound while paused");
}

#[test]
fn new_graph_in_assets_adds_a_graph_and_opens_it_in_the_graph_tab_in_one_step() {
    let dir = sample("runner");
    let original = files(dir.path());
    let mut h = editor(dir.path());
    h.get_all_by_role_and_label(Role::Button, "New Graph").next().unwrap().click();
    settle(&mut h);
    let app = h.state();
    assert_eq!(app.ui.graph.as_deref(), Some("graphs/graph.graph.ron"));
    assert!(app.doc.project().graphs.contains_key("graphs/graph.graph.ron"));
    assert_eq!(app.doc.undo_label().as_deref(), Some("New Graph"));
    assert_eq!(app.doc.head(), 1, "one undo step");
    undo_all_redo_all(&mut h, dir.path(), &original);
}

#[test]
fn the_gizmo_rename_and_transport_keys_come_from_the_command_table() {
    let dir = sample("runner");
    let mut h = editor(dir.path());
    for (k, mode) in [(Key::E, GizmoMode::Rotate), (Key::R, GizmoMode::Scale), (Key::W, GizmoMode::Translate)]
    {
        key(&mut h, Modifiers::NONE, k);
        assert_eq!(h.state().ui.gizmo, mode, "{k:?}");
    }
    // Every key the handler reads is a row of the table, shown in a menu where it has one.
    for c in [UiCommand::GizmoMove, UiCommand::GizmoRotate, UiCommand::GizmoScale, UiCommand::Rename] {
        assert!(!c.shortcuts().is_empty(), "{c:?} has its key in the table");
    }
    click(&mut h, Role::Button, "View");
    assert!(h.query_all_by_label_contains("Show Skeletons").next().is_some());
    h.get_all_by_role_and_label(Role::Button, "Rotate").last().unwrap().click();
    settle(&mut h);
    assert_eq!(h.state().ui.gizmo, GizmoMode::Rotate, "View > Rotate");

    click_row(&mut h, "Runner");
    key(&mut h, Modifiers::NONE, Key::F2);
    assert_eq!(h.state().ui.renaming.as_ref().map(|(p, _)| p.as_str()), Some("Runner"));
    key(&mut h, Modifiers::NONE, Key::Escape);

    // A frame on and back, on the clip's frame grid (the runner's stride is at 30 fps).
    h.state_mut().ui.selection = Selection::Entity("Runner".into());
    key(&mut h, Modifiers::NONE, Key::ArrowRight);
    key(&mut h, Modifiers::NONE, Key::ArrowRight);
    let time = |h: &Harness<'_, EditorApp>| {
        let s = &h.state().session;
        s.world().animator(s.entity("Runner").unwrap()).unwrap().time()
    };
    assert!((time(&h) - 2.0 / 30.0).abs() < 1e-5, "two frames on: {}", time(&h));
    key(&mut h, Modifiers::NONE, Key::End);
    assert!((time(&h) - 1.0).abs() < 1e-4, "End: {}", time(&h));
}
