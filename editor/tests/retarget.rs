//! Retargeting through the UI (File > Retarget Clips): a new retarget map between two rigs of a
//! project, filled by the humanoid auto-map; one mapping edited in the table; the map applied
//! to two clips in one step, each a clip file of the target rig that plays on it; saved, the
//! project reopens with the map; undo all gives the original bytes back, redo all the edited
//! state.

mod support;

use egui::accesskit::Role;
use egui::{Key, Modifiers};
use egui_kittest::kittest::Queryable;
use marrow_editor::document::Document;
use support::*;

/// The locomotion sample (six clips on the five-bone `runner` rig) with a CMU capture's rig
/// listed beside it.
fn two_rig_project() -> TempDir {
    let dir = sample("locomotion");
    std::fs::copy(repo().join("assets/bvh/cmu_131_01.bvh"), dir.path().join("assets/cmu_131_01.bvh"))
        .unwrap();
    let manifest = dir.path().join("project.ron");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let text = text.replacen(
        "\"assets/runner.skeleton.ron\",",
        "\"assets/runner.skeleton.ron\",\n        \"assets/cmu_131_01.bvh\",",
        1,
    );
    std::fs::write(&manifest, text).unwrap();
    dir
}

/// Picks `option` in the combo box labelled `combo` (the popup's entry: the last widget with
/// that label).
fn choose(h: &mut egui_kittest::Harness<'_, marrow_editor::EditorApp>, combo: &str, option: &str) {
    click(h, Role::ComboBox, combo);
    let entry = h.query_all_by_label(option).last().unwrap_or_else(|| panic!("{option:?} in {combo:?}"));
    entry.click();
    settle(h);
}

#[test]
fn a_retarget_map_made_edited_and_applied_to_two_clips_in_the_window_undoes_to_the_original_bytes() {
    let dir = two_rig_project();
    let original = files(dir.path());
    let mut h = editor_sized(dir.path(), egui::vec2(1600.0, 1100.0));
    click(&mut h, Role::Button, "File");
    h.get_by_label("Retarget Clips…").click();
    settle(&mut h);
    choose(&mut h, "Source rig", "runner");
    choose(&mut h, "Target rig", "cmu_131_01");
    h.get_by_label("Create Map").click();
    settle(&mut h);
    let path = "retargets/runner_to_cmu_131_01.retarget.ron";
    {
        let app = h.state();
        assert_eq!(app.doc.undo_label().as_deref(), Some("New Retarget Map runner to cmu_131_01"));
        let map = &app.doc.project().retargets[path];
        // The humanoid auto-map found every bone of the sample's figure in the capture's rig.
        for (target, source) in [
            ("Hips", "hips"),
            ("LeftHip", "thigh_l"),
            ("LeftKnee", "shin_l"),
            ("LeftAnkle", "foot_l"),
            ("LeftToe", "toe_l"),
            ("RightHip", "thigh_r"),
            ("RightKnee", "shin_r"),
            ("RightAnkle", "foot_r"),
            ("RightToe", "toe_r"),
            ("lowerback", "spine"),
            ("Chest", "chest"),
            ("lowerneck", "neck"),
            ("Head", "head"),
            ("LeftShoulder", "upperarm_l"),
            ("LeftElbow", "forearm_l"),
            ("RightShoulder", "upperarm_r"),
            ("RightElbow", "forearm_r"),
        ] {
            assert_eq!(map.source_of(target), Some(source), "{target}");
        }
        assert_eq!(map.bones.len(), 17);
    }
    // One mapping edited in the table: the capture's left hip joint follows the runner's hips too.
    choose(&mut h, "source of LHipJoint", "hips");
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Map Bone LHipJoint"));
    assert_eq!(h.state().doc.project().retargets[path].source_of("LHipJoint"), Some("hips"));
    // Feet and hands placed by IK where the runner's are: one more step, saved in the map.
    h.get_by_role_and_label(Role::CheckBox, "Place feet and hands by IK").click();
    settle(&mut h);
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Place Feet and Hands by IK"));
    assert!(h.state().doc.project().retargets[path].limb_ik);
    if let Ok(image) = h.render()
        && let Ok(dir) = std::env::var("MARROW_SCREENSHOT_DIR")
    {
        image.save(std::path::Path::new(&dir).join("retarget_window.png")).unwrap();
    }
    // Two of the runner's clips, applied in one step.
    // (The Assets panel lists the same files: the window's ticks are the checkboxes.)
    h.get_by_role_and_label(Role::CheckBox, "clips/stride.clip.ron").click();
    h.get_by_role_and_label(Role::CheckBox, "clips/idle.clip.ron").click();
    settle(&mut h);
    h.get_by_label("Apply to 2 Clips").click();
    settle(&mut h);
    let app = h.state();
    assert_eq!(app.doc.undo_label().as_deref(), Some("Retarget 2 Clips onto cmu_131_01"));
    assert_eq!(app.doc.head(), 4);
    let lib = app.session.library();
    let (_, cmu) = lib.skeleton_named("cmu_131_01").unwrap();
    for (file, name) in
        [("clips/stride_cmu_131_01.clip.ron", "stride"), ("clips/idle_cmu_131_01.clip.ron", "idle")]
    {
        let clip = &app.doc.project().clips.get(file).unwrap_or_else(|| panic!("{file}")).clip;
        assert_eq!((clip.name.as_str(), clip.skeleton.as_str()), (name, "cmu_131_01"));
        assert!(
            marrow_engine::clip::find_clip_fault(clip, cmu).is_none(),
            "{file} plays on the capture's rig"
        );
        let hips = cmu.index_of("Hips").unwrap();
        assert!(
            clip.channels()[hips].rotation.as_ref().is_some_and(|t| t.len() > 1),
            "{file}: the hips move"
        );
    }
    assert!(
        app.log.entries().iter().all(|e| e.level != marrow_editor::log::Level::Error),
        "{:?}",
        app.log.entries()
    );
    // Saved, the project reopens with the map and the clips.
    key(&mut h, Modifiers::COMMAND, Key::S);
    let reopened = Document::open(dir.path()).expect("the project reopens");
    assert_eq!(reopened.files(), h.state().doc.files());
    let saved = std::fs::read_to_string(dir.path().join(path)).unwrap();
    assert!(saved.contains("target: \"LHipJoint\"") && saved.contains("limb_ik: true"), "{saved}");
    undo_all_redo_all(&mut h, dir.path(), &original);
}

/// Preview: the capture's clip, retargeted in memory onto the locomotion figure, loops on the
/// scene's Runner before anything is applied; a map edit previews again; Stop gives the Runner
/// back its graph; the document holds only the new map.
#[test]
fn a_retarget_is_previewed_on_the_scenes_rig_before_it_is_applied_and_the_preview_is_no_edit() {
    let dir = two_rig_project();
    let mut h = editor_sized(dir.path(), egui::vec2(1600.0, 1100.0));
    click(&mut h, Role::Button, "File");
    h.get_by_label("Retarget Clips…").click();
    settle(&mut h);
    choose(&mut h, "Source rig", "cmu_131_01");
    choose(&mut h, "Target rig", "runner");
    h.get_by_label("Create Map").click();
    settle(&mut h);
    let map = "retargets/cmu_131_01_to_runner.retarget.ron";
    assert_eq!(h.state().doc.head(), 1);
    let capture =
        h.state().panels.retarget.ticked.keys().next().cloned().expect("the capture's clip is listed");
    h.get_by_role_and_label(Role::CheckBox, &capture).click();
    settle(&mut h);
    h.get_by_label("Preview on Runner").click();
    settle(&mut h);
    let preview = h.state().session.clip_preview().cloned().expect("a clip preview runs");
    assert_eq!((preview.rig.as_str(), preview.error.as_deref()), ("Runner", None));
    assert_eq!(preview.clip.skeleton, "runner");
    h.state_mut().send(marrow_editor::command::Command::Play);
    h.run_steps(20);
    // The Runner plays the retargeted clip: its pose is the clip's at the Runner's time.
    let (time, pose) = {
        let s = &h.state().session;
        let rig = s.entity("Runner").unwrap();
        let a = s.world().animator(rig).unwrap();
        assert!(a.current_graph().is_none() && a.is_playing(), "the clip plays in place of the graph");
        (a.time(), s.world().rig_pose(rig).unwrap().local.to_vec())
    };
    assert!(time > 0.1, "it plays: {time}");
    if let Ok(image) = h.render()
        && let Ok(dir) = std::env::var("MARROW_SCREENSHOT_DIR")
    {
        image.save(std::path::Path::new(&dir).join("retarget_preview.png")).unwrap();
    }
    let thigh = 1; // thigh_l
    let want = preview.clip.channels()[thigh].rotation.as_ref().unwrap().sample(time).unwrap();
    assert!(pose[thigh].rotation.angle_between(want) < 1e-4, "{:?} vs {want:?}", pose[thigh].rotation);
    // A map edit while it runs previews the edited map.
    h.get_by_role_and_label(egui::accesskit::Role::CheckBox, "Place feet and hands by IK").click();
    settle(&mut h);
    h.run_steps(2);
    let again = h.state().session.clip_preview().cloned().unwrap();
    assert!(h.state().doc.project().retargets[map].limb_ik);
    assert!(!std::sync::Arc::ptr_eq(&again.clip, &preview.clip), "previewed again after the edit");
    // Stop: the Runner plays its own graph again; the preview never was an edit.
    h.get_by_label("Stop Preview").click();
    settle(&mut h);
    h.run_steps(2);
    assert!(h.state().session.clip_preview().is_none());
    let s = &h.state().session;
    let runner = s.world().animator(s.entity("Runner").unwrap()).unwrap();
    assert!(runner.current_graph().is_some(), "back on its steering graph");
    assert_eq!(h.state().doc.head(), 2, "the new map and the IK toggle: nothing else");
    assert_eq!(h.state().doc.project().clips.len(), 8, "no clip added by previewing");
}

/// Side by side: in the mocap sample (the CMU capture and CesiumMan in one scene), previewing
/// the capture's clip through the sample's map plays it retargeted on CesiumMan and the source
/// clip on the capture's own rig, in step.
#[test]
fn a_retarget_preview_plays_the_source_beside_the_target_in_step() {
    let dir = sample("mocap");
    let mut h = editor_sized(dir.path(), egui::vec2(1600.0, 1100.0));
    click(&mut h, Role::Button, "File");
    h.get_by_label("Retarget Clips…").click();
    settle(&mut h);
    h.state_mut().panels.retarget.map = "retargets/cmu_131_01_to_Armature.retarget.ron".into();
    h.run_steps(3);
    let capture = "assets/cmu_131_01.bvh#cmu_131_01";
    h.get_by_role_and_label(Role::CheckBox, capture).click();
    settle(&mut h);
    h.get_by_label("Preview on CesiumMan").click();
    settle(&mut h);
    let preview = h.state().session.clip_preview().cloned().expect("a preview runs");
    let (source_rig, source_clip) = preview.beside.clone().expect("the capture's rig plays beside it");
    assert_eq!(
        (preview.rig.as_str(), source_rig.as_str(), preview.error.as_deref()),
        ("CesiumMan", "cmu_131_01/cmu_131_01", None)
    );
    h.state_mut().send(marrow_editor::command::Command::Play);
    h.run_steps(15);
    let s = &h.state().session;
    let animator = |path: &str| s.world().animator(s.entity(path).unwrap()).unwrap();
    let (target, source) = (animator("CesiumMan"), animator("cmu_131_01/cmu_131_01"));
    assert!(
        std::sync::Arc::ptr_eq(target.current_clip().unwrap(), &preview.clip),
        "the retargeted clip on CesiumMan"
    );
    assert!(
        std::sync::Arc::ptr_eq(source.current_clip().unwrap(), &source_clip),
        "the source clip on the capture"
    );
    assert!(
        target.time() > 0.05 && target.time() == source.time(),
        "in step: {} {}",
        target.time(),
        source.time()
    );
    assert_eq!(h.state().doc.head(), 0, "previewing is no edit");
}

#[test]
fn a_target_rig_whose_names_say_nothing_shows_the_roles_its_map_gives_it_and_no_false_warning() {
    // The mocap sample maps the CMU capture onto CesiumMan, whose bones are named
    // `Skeleton_torso_joint_1` and the like: the roles come through the map (the plan places
    // its feet and hands by them), so the window shows them and does not say they are missing.
    let dir = sample("mocap");
    let mut h = editor(dir.path());
    click(&mut h, Role::Button, "File");
    h.get_by_label_contains("Retarget Clips…").click();
    settle(&mut h);
    assert!(h.query_by_label_contains("19 of 19 bones mapped").is_some(), "the sample's map is shown");
    assert!(
        h.query_by_label_contains("has no bone recognised").is_none(),
        "no warning about roles the map gives"
    );
    for role in ["Hips", "Head", "LeftFoot", "RightHand"] {
        assert!(h.query_by_label(role).is_some(), "the Role column names {role}");
    }
}
