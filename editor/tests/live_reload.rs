//! Files changed outside the editor while it has the project open (the real folder watcher,
//! the harness's frames): a rewritten clip reloads as one undo step at the same playhead and the
//! viewport's rig takes its pose; a file with unsaved edits asks (keep mine, take theirs, show
//! both in the Log); a broken file keeps the last good version and names the fault; a deleted one
//! is reported and kept; the editor's own save is not taken back as a change; and a model file
//! replaced on disk (a re-export) reloads its rig and meshes.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use egui::accesskit::Role;
use egui::{Key, Modifiers};
use egui_kittest::Harness;
use marrow_editor::EditorApp;
use marrow_editor::app::Modal;
use marrow_editor::document::Op;
use marrow_editor::document::clip_ops::{ClipOp, KeyRef};
use marrow_engine::clip::Channel;
use marrow_engine::project::clip_to_string;
use marrow_engine::project::file::ClipAsset;
use support::*;

const STRIDE: &str = "clips/stride.clip.ron";

/// Runs frames until `done` holds (the watcher's thread reports within its debounce); panics
/// naming `what` after ten seconds. Returns how long it took.
fn frames_until(h: &mut Harness<'_, EditorApp>, what: &str, done: impl Fn(&EditorApp) -> bool) -> Duration {
    let start = Instant::now();
    while !done(h.state()) {
        assert!(start.elapsed() < Duration::from_secs(10), "{what}: not within ten seconds");
        h.run_steps(1);
        std::thread::sleep(Duration::from_millis(15));
    }
    start.elapsed()
}

/// Frames for `d` of wall time (nothing is expected to happen).
fn frames_for(h: &mut Harness<'_, EditorApp>, d: Duration) {
    let start = Instant::now();
    while start.elapsed() < d {
        h.run_steps(1);
        std::thread::sleep(Duration::from_millis(15));
    }
}

fn stride(h: &Harness<'_, EditorApp>) -> ClipAsset {
    (*h.state().doc.project().clips[STRIDE]).clone()
}

/// The stride with its hips `lift` higher (what an exporter would write).
fn lifted(c: &ClipAsset, lift: f32) -> ClipAsset {
    let mut c = c.clone();
    let hips = Arc::make_mut(&mut c.clip).channels_mut()[0].translation.as_mut().unwrap();
    for k in 0..hips.len() {
        let ease = hips.key_easings().get(k).cloned().flatten();
        let (t, v) = hips.remove(k).unwrap();
        hips.insert(t, v + glam::Vec3::Y * lift);
        hips.set_key_easing(k, ease);
    }
    c
}

fn hips_y(h: &Harness<'_, EditorApp>) -> f32 {
    let w = h.state().session.world();
    let rig = w.find("Runner").unwrap();
    w.rig_pose(rig).unwrap().local[0].translation.y
}

/// An unsaved edit of the stride: its hips key at `t` moved 0.05 s later.
fn move_hips_key(h: &mut Harness<'_, EditorApp>, t: f32) {
    h.state_mut().send(marrow_editor::command::Command::Edit(Box::new(Op::Clip {
        path: STRIDE.into(),
        op: ClipOp::MoveKeys { keys: vec![KeyRef::new("hips", Channel::Translation, t)], delta: 0.05 },
    })));
    h.run_steps(2);
}

fn logged(h: &Harness<'_, EditorApp>, needle: &str) -> bool {
    h.state().log.count_containing(needle) > 0
}

#[test]
fn a_clip_rewritten_on_disk_reloads_as_one_undo_step_at_the_same_playhead() {
    let dir = sample("runner");
    let mut h = editor(dir.path());
    h.run_steps(20);
    h.state_mut().send(marrow_editor::command::Command::Pause);
    h.run_steps(2);
    let rig = h.state().session.world().find("Runner").unwrap();
    let time = |h: &Harness<'_, EditorApp>| h.state().session.world().animator(rig).unwrap().time();
    let (playhead, y0) = (time(&h), hips_y(&h));
    let old = stride(&h);
    let new = lifted(&old, 0.25);
    std::fs::write(dir.path().join(STRIDE), clip_to_string(&new)).unwrap();

    let took = frames_until(&mut h, "the reload", |app| app.doc.project().clips[STRIDE].clip == new.clip);
    eprintln!("reloaded {took:?} after the write (debounce {:?})", Duration::from_millis(200));
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Reloaded clips/stride.clip.ron from disk"));
    assert!(!h.state().doc.is_dirty(), "the document holds what is on disk");
    assert!(logged(&h, "reloaded clips/stride.clip.ron from disk"));
    h.run_steps(2);
    assert_eq!(time(&h), playhead, "the playhead stays");
    assert!((hips_y(&h) - y0 - 0.25).abs() < 1e-4, "the rig takes the new pose: {} vs {y0}", hips_y(&h));

    // Undo brings the old clip (and pose) back; the document now differs from the file.
    key(&mut h, Modifiers::COMMAND, Key::Z);
    h.run_steps(2);
    assert_eq!(stride(&h), old);
    assert!((hips_y(&h) - y0).abs() < 1e-6);
    assert!(h.state().doc.is_dirty());
    assert_eq!(time(&h), playhead);
}

#[test]
fn the_editors_own_save_is_not_taken_back_as_a_change() {
    let dir = sample("runner");
    let mut h = editor(dir.path());
    h.run_steps(3);
    move_hips_key(&mut h, 0.25);
    key(&mut h, Modifiers::COMMAND, Key::S);
    assert!(!h.state().doc.is_dirty());
    let steps = h.state().doc.steps().count();
    frames_for(&mut h, Duration::from_millis(800));
    assert_eq!(h.state().doc.steps().count(), steps, "no reload step");
    assert!(!logged(&h, "from disk") && h.state().modal.is_none());
}

#[test]
fn a_file_with_unsaved_edits_read_or_rewritten_unchanged_by_another_program_asks_nothing() {
    let dir = sample("runner");
    let mut h = editor(dir.path());
    h.run_steps(3);
    move_hips_key(&mut h, 0.25);
    let mine = stride(&h);
    let steps = h.state().doc.steps().count();
    // A reader (git, grep, a backup) opens the file: the watcher reports the open.
    let on_disk = std::fs::read(dir.path().join(STRIDE)).unwrap();
    frames_for(&mut h, Duration::from_millis(800));
    // A tool writes the same bytes back.
    std::fs::write(dir.path().join(STRIDE), &on_disk).unwrap();
    frames_for(&mut h, Duration::from_millis(800));
    assert!(h.state().modal.is_none(), "no question: the disk holds what was opened");
    assert_eq!(stride(&h), mine, "the edit stays");
    assert_eq!(h.state().doc.steps().count(), steps, "no reload step");
    assert!(h.state().doc.is_dirty() && !logged(&h, "from disk"));
}

#[test]
fn a_file_changed_while_it_has_unsaved_edits_asks_which_to_keep() {
    let dir = sample("runner");
    let mut h = editor(dir.path());
    h.run_steps(3);
    move_hips_key(&mut h, 0.25);
    move_hips_key(&mut h, 0.5);
    let mine = stride(&h);
    let theirs = lifted(&stride(&h), 0.5);
    std::fs::write(dir.path().join(STRIDE), clip_to_string(&theirs)).unwrap();
    frames_until(&mut h, "the conflict dialog", |app| matches!(app.modal, Some(Modal::Reload { .. })));
    h.run_steps(3);
    assert_eq!(stride(&h), mine, "nothing is taken before the answer");
    click(&mut h, Role::Button, "Show Both in Log");
    let log: Vec<String> = h.state().log.entries().iter().map(|e| e.text.clone()).collect();
    assert!(
        logged(&h, "clips/stride.clip.ron, only in yours")
            && logged(&h, "clips/stride.clip.ron, only on disk"),
        "{log:#?}"
    );
    assert!(matches!(h.state().modal, Some(Modal::Reload { .. })), "the dialog stays to choose");
    click(&mut h, Role::Button, "Take Theirs");
    assert_eq!(stride(&h).clip, theirs.clip);
    assert!(h.state().modal.is_none());
    key(&mut h, Modifiers::COMMAND, Key::Z);
    assert_eq!(stride(&h), mine, "undo brings the edits back");

    // Again, keeping mine this time.
    let other = lifted(&mine, -0.5);
    std::fs::write(dir.path().join(STRIDE), clip_to_string(&other)).unwrap();
    frames_until(&mut h, "the second dialog", |app| matches!(app.modal, Some(Modal::Reload { .. })));
    h.run_steps(3);
    click(&mut h, Role::Button, "Keep Mine");
    assert_eq!(stride(&h), mine);
    assert!(h.state().modal.is_none() && h.state().doc.is_dirty());
    assert!(logged(&h, "kept the editor's clips/stride.clip.ron"));
}

#[test]
fn a_broken_or_deleted_file_keeps_the_last_good_version_and_says_so() {
    let dir = sample("runner");
    let mut h = editor(dir.path());
    h.run_steps(3);
    let good = stride(&h);
    let revision = h.state().doc.revision();
    std::fs::write(dir.path().join(STRIDE), "(version: 2, name: \"stride\", skeleton: ").unwrap();
    frames_until(&mut h, "the fault in the Log", |app| app.log.count_containing("does not load") > 0);
    assert!(logged(
        &h,
        "clips/stride.clip.ron changed on disk but does not load, so the last good version stays"
    ));
    assert_eq!(stride(&h), good);
    assert_eq!(h.state().doc.revision(), revision, "no edit");
    std::fs::remove_file(dir.path().join(STRIDE)).unwrap();
    frames_until(&mut h, "the deletion in the Log", |app| {
        app.log.count_containing("was deleted on disk") > 0
    });
    assert!(logged(&h, "clips/stride.clip.ron was deleted on disk but the project uses it"));
    assert_eq!(stride(&h), good);
    // A save writes it back.
    key(&mut h, Modifiers::COMMAND, Key::S);
    let back = marrow_engine::project::clip_from_str(
        &std::fs::read_to_string(dir.path().join(STRIDE)).unwrap(),
        std::path::Path::new(STRIDE),
    )
    .unwrap();
    assert_eq!(back, good);
}

#[test]
fn a_model_replaced_on_disk_reloads_its_rig_and_meshes() {
    use marrow_engine::gltf::export::{ExportOptions, export_glb};
    const GLB: &str = "assets/CesiumMan.glb";
    let dir = sample("cesium_man");
    let mut h = editor(dir.path());
    h.run_steps(3);
    let body = |h: &Harness<'_, EditorApp>| {
        let w = h.state().session.world();
        let e = w.find("CesiumMan/Body").or_else(|| w.find("Body")).expect("the body entity");
        w.mesh(e).unwrap().asset.mesh.primitives[0].positions[0]
    };
    let before = body(&h);
    let bind = |h: &Harness<'_, EditorApp>| {
        let w = h.state().session.world();
        let rig = w.find("CesiumMan").unwrap();
        let sk = w.animator(rig).unwrap().skeleton().clone();
        sk.bind_pose[sk.bone_count() - 1].translation
    };
    let bind_before = bind(&h);
    // The model re-exported twice as large, its last joint twice as far from its parent.
    let mut scene = marrow_engine::gltf::import(dir.path().join(GLB)).unwrap();
    let rig = &mut scene.rigs[0];
    let last = rig.skeleton.bone_count() - 1;
    rig.skeleton.bind_pose[last].translation *= 2.0;
    let node = rig.bone_nodes[last];
    scene.nodes[node].transform.translation *= 2.0;
    for m in &mut scene.meshes {
        for p in &mut m.primitives {
            for v in &mut p.positions {
                *v = v.map(|x| x * 2.0);
            }
        }
    }
    let (bytes, _) = export_glb(&scene, &ExportOptions::default()).unwrap();
    std::fs::write(dir.path().join(GLB), bytes).unwrap();
    frames_until(&mut h, "the model reload", |app| {
        let w = app.session.world();
        w.find("CesiumMan/Body")
            .or_else(|| w.find("Body"))
            .and_then(|e| w.mesh(e))
            .is_some_and(|m| m.asset.mesh.primitives[0].positions[0] != before)
    });
    let after = body(&h);
    for k in 0..3 {
        assert!((after[k] - before[k] * 2.0).abs() < 1e-5, "{after:?} vs {before:?}");
    }
    assert!(logged(&h, "reloaded assets/CesiumMan.glb from disk"));
    assert!(
        (bind(&h) - bind_before * 2.0).length() < 1e-5,
        "the rig's bind pose: {} vs {bind_before}",
        bind(&h)
    );
    assert!(
        h.state().doc.steps().count() == 0 && !h.state().doc.is_dirty(),
        "a model is not an authored file"
    );
}
