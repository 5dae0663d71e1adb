//! File and asset workflows through the UI: importing a glTF model into a project and setting
//! an expression (morph) weight on it, refusing to delete a clip a scene uses, the
//! unsaved-changes prompt on quit and on a window close, autosave recovery after a crash, and
//! opening a damaged project (faults in the Log, a dialog naming the file and location, the
//! editor usable, nothing overwritten), and editing a particle cloud in its Inspector card.

mod support;

use egui::accesskit::Role;
use egui::{Key, Modifiers};
use egui_kittest::kittest::{NodeT, Queryable};
use marrow_editor::app::{After, Modal};
use marrow_editor::command::Command;
use marrow_editor::document::Document;
use marrow_editor::ui_state::Selection;
use marrow_editor::{AppOptions, EditorApp};
use support::*;

fn wait_for_import(h: &mut egui_kittest::Harness<'_, EditorApp>) {
    for _ in 0..600 {
        h.step();
        if h.state().doc.head() > 0 || h.state().modal.is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

#[test]
fn import_a_model_then_set_an_expression_weight_undo_restores_the_bytes() {
    let dir = sample("runner");
    let original = files(dir.path());
    let mut h = editor(dir.path());
    let model = repo().join("assets/gltf/AnimatedMorphCube/AnimatedMorphCube.glb");
    h.state_mut().send(Command::Import(model));
    wait_for_import(&mut h);
    settle(&mut h);
    let app = h.state();
    assert_eq!(app.doc.undo_label().as_deref(), Some("Import AnimatedMorphCube.glb"));
    assert!(
        dir.path().join("assets/AnimatedMorphCube.glb").is_file(),
        "the model is copied into the project"
    );
    let mesh = "AnimatedMorphCube/AnimatedMorphCube";
    assert!(app.session.entity(mesh).is_some(), "the model's mesh entity is in the scene");

    // The Expressions card: one slider per morph target.
    h.state_mut().ui.selection = Selection::Entity(mesh.into());
    settle(&mut h);
    let slider = h.get_by_role_and_label(Role::Slider, "target0").rect();
    drag(
        &mut h,
        slider.left_center() + egui::vec2(1.0, 0.0),
        slider.left_center() + egui::vec2(slider.width() * 0.6, 0.0),
        5,
    );
    let app = h.state();
    assert_eq!(app.doc.undo_label().as_deref(), Some("Set Expression"));
    assert_eq!(app.doc.steps().count(), 2, "import + one expression drag");
    let w = app.session.world().morph_weights(app.session.entity(mesh).unwrap()).unwrap().to_vec();
    assert!(w[0] > 0.3 && w[0] < 0.9 && w[1] == 0.0, "{w:?}");

    // Undo both and save: the project's files are the originals again (the copied binary stays
    // in the folder, unlisted).
    key(&mut h, Modifiers::COMMAND, Key::Z);
    key(&mut h, Modifiers::COMMAND, Key::Z);
    key(&mut h, Modifiers::COMMAND, Key::S);
    let mut now = files(dir.path());
    now.remove("assets/AnimatedMorphCube.glb");
    assert_eq!(now, original);
}

#[test]
fn deleting_a_clip_a_scene_uses_is_refused_with_its_users() {
    let dir = sample("runner");
    let mut h = editor(dir.path());
    h.get_by_role_and_label(Role::Button, "clips/stride.clip.ron").click_secondary();
    settle(&mut h);
    h.get_by_label("Delete").click();
    settle(&mut h);
    let app = h.state();
    match &app.modal {
        Some(Modal::Error { body, .. }) => {
            assert!(body.contains("Runner (clip)") && body.contains("scenes/main.scene.ron"), "{body}")
        }
        m => panic!("expected a refusal dialog, got {m:?}"),
    }
    assert!(app.doc.project().clips.contains_key("clips/stride.clip.ron"));
    assert_eq!(app.doc.steps().count(), 0);
    h.get_by_label("OK").click();
    settle(&mut h);
    assert!(h.state().modal.is_none());
}

/// Makes an unsaved change the way a user does: drags the Ground's Position Y field.
fn unsaved_change(h: &mut egui_kittest::Harness<'_, EditorApp>) {
    click_row(h, "Ground");
    let field = h.get_by_label("Position Y").rect();
    drag(h, field.center(), field.center() + egui::vec2(40.0, 0.0), 4);
}

#[test]
fn quitting_with_unsaved_changes_asks_first() {
    let dir = sample("runner");
    let mut h = editor(dir.path());
    unsaved_change(&mut h);
    assert!(h.state().doc.is_dirty());

    // Ctrl+Q: the prompt; Cancel keeps the editor open.
    key(&mut h, Modifiers::COMMAND, Key::Q);
    assert_eq!(h.state().modal, Some(Modal::Unsaved(After::Quit)));
    h.get_by_label("Cancel").click();
    settle(&mut h);
    assert!(h.state().modal.is_none() && !h.state().quitting());

    // A window close request: cancelled, and the prompt shows.
    h.input_mut()
        .viewports
        .entry(egui::ViewportId::ROOT)
        .or_default()
        .events
        .push(egui::ViewportEvent::Close);
    h.step();
    let cancelled = h.output().viewport_output[&egui::ViewportId::ROOT]
        .commands
        .contains(&egui::ViewportCommand::CancelClose);
    assert!(cancelled, "the close is cancelled while there are unsaved changes");
    assert_eq!(h.state().modal, Some(Modal::Unsaved(After::Quit)));

    // Save: the changes are written, then the editor quits.
    h.get_by_label("Save").click();
    settle(&mut h);
    assert!(h.state().quitting());
    assert!(!h.state().doc.is_dirty());
    let reopened = Document::open(dir.path()).unwrap();
    assert_eq!(reopened.files(), h.state().doc.files());
}

#[test]
fn dont_save_discards_and_quits() {
    let dir = sample("runner");
    let original = files(dir.path());
    let mut h = editor(dir.path());
    unsaved_change(&mut h);
    key(&mut h, Modifiers::COMMAND, Key::Q);
    h.get_by_label("Don't Save").click();
    settle(&mut h);
    assert!(h.state().quitting());
    assert_eq!(files(dir.path()), original, "nothing written");
}

#[test]
fn an_autosave_is_offered_after_a_crash_and_recovers_the_changes() {
    let dir = sample("runner");
    let original = files(dir.path());
    let edited = {
        let mut h = editor(dir.path());
        unsaved_change(&mut h);
        // The minute passes: the autosave writes the recovery file.
        h.state_mut().autosave_now().unwrap();
        assert!(dir.path().join(marrow_editor::recovery::RECOVERY_FILE).is_file());
        h.state().doc.files()
        // The harness is dropped without saving: the crash.
    };
    assert_eq!(files(dir.path()), original, "the project files were not touched");

    let mut h = editor(dir.path());
    assert!(matches!(h.state().modal, Some(Modal::Recover { .. })), "the recovery is offered");
    h.get_by_label("Recover").click();
    settle(&mut h);
    let app = h.state();
    assert!(app.modal.is_none());
    assert_eq!(app.doc.files(), edited, "the autosaved changes are back");
    assert!(app.doc.is_dirty(), "recovered changes are unsaved until saved");
    assert_eq!(app.doc.undo_label().as_deref(), Some("Recover Unsaved Changes"));
    // A save clears the recovery file.
    key(&mut h, Modifiers::COMMAND, Key::S);
    assert!(!dir.path().join(marrow_editor::recovery::RECOVERY_FILE).exists());
}

#[test]
fn discarding_a_recovery_removes_it() {
    let dir = sample("runner");
    {
        let mut h = editor(dir.path());
        unsaved_change(&mut h);
        h.state_mut().autosave_now().unwrap();
    }
    let mut h = editor(dir.path());
    h.get_by_label("Discard").click();
    settle(&mut h);
    assert!(!h.state().doc.is_dirty());
    assert!(!dir.path().join(marrow_editor::recovery::RECOVERY_FILE).exists());
}

#[test]
fn a_damaged_project_shows_its_faults_and_the_editor_stays_usable() {
    let good = sample("runner");
    let bad = sample("runner");
    // A damaged clip, graph, skeleton or scene file opens the rest of the project (see
    // tests/faults.rs); a damaged manifest cannot: nothing says which files there are.
    let manifest = bad.path().join("project.ron");
    let text = std::fs::read_to_string(&manifest).unwrap();
    // Break the RON on line 4 (a missing comma after a field): the parser stops on line 5.
    let broken = text.replacen("name: \"runner\",", "name: \"runner\"", 1);
    std::fs::write(&manifest, &broken).unwrap();
    let before = files(bad.path());

    // Opened first thing: the editor starts on a new project with the dialog.
    let mut h = editor(bad.path());
    match &h.state().modal {
        Some(Modal::Error { title, body }) => {
            assert!(title.contains("Cannot open"), "{title}");
            assert!(body.contains("project.ron:5:"), "the file and line are named: {body}");
        }
        m => panic!("expected an error dialog, got {m:?}"),
    }
    assert!(h.state().log.count_containing("project.ron:5:") >= 1, "the fault is in the Log");
    h.get_by_label("OK").click();
    settle(&mut h);

    // Opening it over a good project keeps the good project.
    h.state_mut().send(Command::Open(good.path().to_owned()));
    settle(&mut h);
    assert_eq!(h.state().doc.root(), Some(good.path()));
    h.state_mut().send(Command::Open(bad.path().to_owned()));
    settle(&mut h);
    assert!(matches!(h.state().modal, Some(Modal::Error { .. })));
    assert_eq!(h.state().doc.root(), Some(good.path()), "the open project stays");
    h.get_by_label("OK").click();
    settle(&mut h);
    click_row(&mut h, "Runner");
    assert_eq!(h.state().ui.selection, Selection::Entity("Runner".into()), "still usable");
    assert_eq!(files(bad.path()), before, "nothing was overwritten");
}

#[test]
fn opening_a_project_shows_it_and_titles_the_window() {
    let dir = sample("cesium_man");
    let mut h = editor(dir.path());
    assert_eq!(h.state().title(), "Marrow — cesium_man");
    assert!(h.state().session.entity("CesiumMan/Hat").is_some());
    let opts = AppOptions { project: None, ..Default::default() };
    let fresh = EditorApp::headless(opts, None);
    assert_eq!(fresh.title(), "Marrow — untitled");
    h.step();
}

#[test]
fn the_particle_cloud_card_edits_the_cloud_and_undo_restores_the_bytes() {
    let dir = sample("particle_figure");
    let original = files(dir.path());
    let mut h = editor(dir.path());
    click_row(&mut h, "Figure");
    settle(&mut h);
    let figure = h.state().session.entity("Figure").unwrap();
    let before = h.state().session.world().particle_cloud(figure).unwrap().0.settings.radius;
    assert!(h.query_by_label_contains("40000 particles").is_some(), "the card shows the playing cloud");
    // Drag the disc radius: one undo step, the session's cloud rebuilt with it.
    let field = h.get_by_role_and_label(Role::SpinButton, "Particle radius").rect();
    drag(&mut h, field.center(), field.center() + egui::vec2(30.0, 0.0), 5);
    let app = h.state();
    assert_eq!(app.doc.undo_label().as_deref(), Some("Edit Particle Cloud"));
    assert_eq!(app.doc.steps().count(), 1, "one drag, one step");
    let after =
        app.session.world().particle_cloud(app.session.entity("Figure").unwrap()).unwrap().0.settings.radius;
    assert!(after > before, "{before} -> {after}");
    // Springs off: a second step; the cloud then sits on its targets.
    h.get_by_label("Particle springs").click();
    settle(&mut h);
    let app = h.state();
    assert_eq!(app.doc.steps().count(), 2);
    let (desc, _) = app.session.world().particle_cloud(app.session.entity("Figure").unwrap()).unwrap();
    assert!(desc.settings.springs.is_none());
    undo_all_redo_all(&mut h, dir.path(), &original);
}

#[test]
fn the_crowd_card_edits_the_crowd_and_the_session_rebakes_it() {
    let dir = sample("crowd");
    let original = files(dir.path());
    let mut h = editor(dir.path());
    click_row(&mut h, "Crowd");
    settle(&mut h);
    let count = |h: &egui_kittest::Harness<'_, EditorApp>| {
        let app = h.state();
        app.session.world().crowd(app.session.entity("Crowd").unwrap()).unwrap().placements.len()
    };
    assert_eq!(count(&h), 400);
    assert!(h.query_by_label_contains("1 clip(s) x 60 frames x 19 bones baked").is_some());
    let field = h.get_by_role_and_label(Role::SpinButton, "Crowd count").rect();
    drag(&mut h, field.center(), field.center() - egui::vec2(20.0, 0.0), 4);
    let app = h.state();
    assert_eq!(app.doc.undo_label().as_deref(), Some("Edit Crowd"));
    assert_eq!(app.doc.steps().count(), 1, "one drag, one step");
    let fewer = count(&h);
    assert!(fewer < 400, "the session re-instantiated the crowd: {fewer}");
    // Frames per clip: a re-bake.
    let field = h.get_by_role_and_label(Role::SpinButton, "Crowd frames").rect();
    drag(&mut h, field.center(), field.center() + egui::vec2(15.0, 0.0), 3);
    let app = h.state();
    let frames =
        app.session.world().crowd(app.session.entity("Crowd").unwrap()).unwrap().baked.clips[0].frames;
    assert!(frames > 60, "re-baked at {frames} frames");
    undo_all_redo_all(&mut h, dir.path(), &original);
}

#[test]
fn export_gltf_from_the_file_menu_writes_the_scene_and_edits_nothing() {
    let dir = sample("runner");
    let original = files(dir.path());
    let mut h = editor(dir.path());
    click(&mut h, Role::Button, "File");
    click(&mut h, Role::Button, "Export glTF…");
    assert!(h.state().panels.export.open, "the Export glTF window opens");
    // The window lists the scene's clip, ticked; the default path is the project's export/.
    h.get_by_role_and_label(Role::CheckBox, "stride");
    let default = h.state().panels.export.path.clone();
    assert!(default.ends_with("export/main.glb"), "{default}");
    // glTF + .bin, eased keys written linear, compact joints.
    click(&mut h, Role::RadioButton, "glTF + .bin");
    assert!(h.state().panels.export.path.ends_with("export/main.gltf"));
    click(&mut h, Role::RadioButton, "Write linear");
    h.state_mut().panels.export.joints = marrow_engine::gltf::JointChoice::Smallest;
    settle(&mut h);
    click(&mut h, Role::Button, "Export");
    let out = dir.path().join("export/main.gltf");
    assert!(!h.state().panels.export.open, "the window closes on export");
    assert!(h.state().modal.is_none(), "{:?}", h.state().modal);
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    // The buffer beside it is named after its content (`main.<8 hex>.bin`).
    let bin = json["buffers"][0]["uri"].as_str().unwrap();
    assert!(
        bin.starts_with("main.") && dir.path().join("export").join(bin).is_file(),
        "written beside the project"
    );
    let anim = &json["animations"][0];
    assert_eq!(anim["name"], "stride");
    assert!(
        anim["extras"]["linearized"].as_array().is_some_and(|l| !l.is_empty()),
        "eased segments listed as written linear"
    );
    assert!(anim["extras"]["markers"].as_array().is_some_and(|m| m.len() == 2));
    let back = marrow_engine::gltf::import(&out).unwrap();
    assert_eq!(
        back.rigs[0].skeleton.bone_names,
        h.state().doc.project().skeletons["assets/runner.skeleton.ron"].bone_names
    );
    // An export is not an edit: nothing to undo, the project's files untouched.
    assert_eq!(h.state().doc.head(), 0);
    assert!(!h.state().doc.is_dirty());
    let mut now = files(dir.path());
    now.retain(|k, _| !k.starts_with("export/"));
    assert_eq!(now, original);
}

#[test]
fn export_gltf_lists_every_fault_and_offers_no_export_until_they_are_mended() {
    use marrow_editor::document::{EntityOp, Op};
    use marrow_engine::scene::SocketDesc;
    let dir = sample("runner");
    let mut h = editor(dir.path());
    // A socket on a bone the runner's skeleton lacks: the scene cannot be exported as it stands.
    let bad = SocketDesc { bone: "no_such_bone".into(), offset: marrow_engine::math::Transform::IDENTITY };
    h.state_mut().send(Command::Edit(Box::new(Op::Entity {
        scene: "scenes/main.scene.ron".into(),
        entity: "Runner/LeftThigh".into(),
        op: EntityOp::SetSocket(Some(bad)),
    })));
    settle(&mut h);
    click(&mut h, Role::Button, "File");
    click(&mut h, Role::Button, "Export glTF…");
    h.get_by_label_contains("Cannot export: 1 fault(s)");
    h.get_by_label_contains("entity Runner/LeftThigh: its socket names bone \"no_such_bone\"");
    assert!(
        {
            use egui_kittest::kittest::NodeT;
            h.get_by_role_and_label(Role::Button, "Export").accesskit_node().is_disabled()
        },
        "no export while the scene has faults"
    );
    // Undo the edit: the window follows the document and offers the export again.
    key(&mut h, Modifiers::COMMAND, Key::Z);
    h.get_by_role_and_label(Role::CheckBox, "stride");
    assert!(!{
        use egui_kittest::kittest::NodeT;
        h.get_by_role_and_label(Role::Button, "Export").accesskit_node().is_disabled()
    });
    assert!(!dir.path().join("export").exists(), "nothing written");
}

#[cfg(unix)]
#[test]
fn an_import_into_a_project_whose_assets_folder_links_outside_copies_nothing_there() {
    // Issue 29: the copy into `assets/` followed a linked folder out of the project.
    let base = std::env::temp_dir().join(format!("marrow-import-link-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let (root, outside) = (base.join("project"), base.join("outside"));
    let project = marrow_engine::project::runner::runner_project();
    project.save(&root).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::remove_dir_all(root.join("assets")).unwrap();
    std::os::unix::fs::symlink(&outside, root.join("assets")).unwrap();
    let model =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/gltf/SimpleSkin/SimpleSkin.gltf");
    let faults = marrow_editor::import::run(&model, &root, "scenes/main.scene.ron", &project)
        .map(|_| ())
        .expect_err("the import must be refused");
    assert!(faults.iter().any(|f| f.contains("outside the project folder")), "{faults:?}");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0, "a file was written outside the project");
    std::fs::remove_dir_all(&base).unwrap();
}

/// A byte count as people read it (the rule the status bar uses: bytes, KiB, MiB).
fn readable(bytes: u64) -> String {
    match bytes {
        0..1024 => format!("{bytes} bytes"),
        1024..1_048_576 => format!("{:.1} KiB", bytes as f64 / 1024.0),
        _ => format!("{:.1} MiB", bytes as f64 / 1_048_576.0),
    }
}

#[test]
fn an_export_says_when_it_is_done_naming_the_file_and_its_size_and_a_failure_names_the_file() {
    let dir = sample("runner");
    let mut h = editor(dir.path());
    click(&mut h, Role::Button, "File");
    click(&mut h, Role::Button, "Export glTF…");
    click(&mut h, Role::Button, "Export");
    let out = dir.path().join("export/main.glb");
    let size = readable(std::fs::metadata(&out).expect("the export was written").len());
    // The status bar says so, with the file and its size, and so does the Log.
    let line = format!("Exported main.glb, {size}");
    assert!(h.query_by_label(&line).is_some(), "the status bar shows {line:?}");
    assert_eq!(
        h.state().log.count_containing(&format!("{}, {size}", out.display())),
        1,
        "the Log names file and size"
    );
    // It goes away by itself.
    let now = h.ctx.input(|i| i.time);
    h.input_mut().time = Some(now + 30.0);
    h.run_steps(2);
    assert!(h.query_by_label(&line).is_none(), "the notice is transient");
    // An export that cannot be written (its folder is a file) names the file, in the Log too.
    let bad = dir.path().join("project.ron").join("main.glb");
    click(&mut h, Role::Button, "File");
    click(&mut h, Role::Button, "Export glTF…");
    h.state_mut().panels.export.path = bad.display().to_string();
    settle(&mut h);
    click(&mut h, Role::Button, "Export");
    assert!(matches!(&h.state().modal, Some(Modal::Error { title, .. }) if title.contains("main.glb")));
    let named = h
        .state()
        .log
        .entries()
        .iter()
        .filter(|e| e.source == "export" && e.text.contains(&bad.display().to_string()));
    assert_eq!(named.count(), 1, "the Log's error names {}: {:?}", bad.display(), h.state().log.entries());
    assert!(h.query_by_label_contains("Export of").is_some(), "the status bar says it failed");
}

#[test]
fn the_import_dialog_opens_in_the_project_and_lists_only_gltf_files() {
    let dir = sample("runner");
    std::fs::copy(repo().join("assets/gltf/CesiumMan/CesiumMan.glb"), dir.path().join("CesiumMan.glb"))
        .unwrap();
    std::fs::write(dir.path().join("notes.txt"), "not a model").unwrap();
    std::fs::create_dir(dir.path().join("reference_folder")).unwrap();
    let mut h = editor(dir.path());
    click(&mut h, Role::Button, "File");
    // The entry's label carries its shortcut too.
    h.get_by_label_contains("Import Model…").click();
    settle(&mut h);
    // The dialog may read the folder on a thread: give it a moment.
    for _ in 0..100 {
        if h.query_by_label_contains("CesiumMan.glb").is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        h.step();
    }
    assert!(h.query_by_label_contains("CesiumMan.glb").is_some(), "the project's model is listed");
    assert!(h.query_by_label_contains("reference_folder").is_some(), "folders are listed");
    for other in ["project.ron", "notes.txt"] {
        assert!(h.query_by_label_contains(other).is_none(), "{other} is filtered out");
    }
    let shows_filter = h
        .query_all_by(|n| {
            [n.label(), n.value()].into_iter().flatten().any(|t| t.contains(marrow_editor::app::GLTF_FILTER))
        })
        .next()
        .is_some();
    assert!(shows_filter, "the filter is named in the dialog");
}

/// Steps the editor (with short sleeps, for the file dialog's and the import's threads) until
/// `done` holds; false if it never did within about four seconds.
fn step_until(
    h: &mut egui_kittest::Harness<'_, EditorApp>,
    done: impl Fn(&egui_kittest::Harness<'_, EditorApp>) -> bool,
) -> bool {
    for _ in 0..200 {
        if done(h) {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        h.step();
    }
    done(h)
}

/// File > Import Model: picks `file` (in the project folder) at `units` and waits for the import's
/// undo step.
fn import_through_the_dialog(h: &mut egui_kittest::Harness<'_, EditorApp>, file: &str, units: &str) {
    click(h, Role::Button, "File");
    h.get_by_label_contains("Import Model…").click();
    settle(h);
    assert!(step_until(h, |h| h.query_by_label_contains(file).is_some()), "{file} is listed");
    click(h, Role::ComboBox, "Units");
    h.get_by_label(units).click();
    settle(h);
    h.get_by_label_contains(file).click();
    settle(h);
    h.get_by_label("🗀  Open").click();
    settle(h);
    assert!(
        step_until(h, |h| h.state().doc.head() == 1),
        "the import finished: {:?}",
        h.state().log.entries()
    );
}

#[test]
fn a_model_made_in_centimetres_imports_at_a_hundredth_in_one_undo_step() {
    let dir = sample("runner");
    std::fs::copy(repo().join("assets/gltf/CesiumMan/CesiumMan.glb"), dir.path().join("CesiumMan.glb"))
        .unwrap();
    let original = files(dir.path());
    let mut h = editor(dir.path());
    // The dialog asks for the file's units beside the list.
    import_through_the_dialog(&mut h, "CesiumMan.glb", "centimetres (x0.01)");
    assert_eq!(h.state().import_scale, 0.01);
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Import CesiumMan.glb"));
    let scene = &h.state().doc.project().scenes["scenes/main.scene.ron"];
    let model = scene.entities.iter().find(|e| e.name.starts_with("CesiumMan")).expect("the model's entity");
    let t = model.transform.expect("a transform");
    assert_eq!(t.scale, glam::Vec3::splat(0.01), "the entity is scaled to the scene's metres");
    undo_all_redo_all(&mut h, dir.path(), &original);
}

#[test]
fn real_motion_capture_imported_from_the_file_dialog_plays_on_its_rig_and_the_project_reopens() {
    let dir = sample("runner");
    std::fs::copy(repo().join("assets/bvh/cmu_131_01.bvh"), dir.path().join("cmu_131_01.bvh")).unwrap();
    let original = files(dir.path());
    let mut h = editor(dir.path());
    // Listed beside the glTF files; CMU's captures are in inches.
    import_through_the_dialog(&mut h, "cmu_131_01.bvh", "inches (x0.0254)");
    let app = h.state();
    assert_eq!(app.doc.undo_label().as_deref(), Some("Import cmu_131_01.bvh"));
    let m = &app.doc.project().manifest;
    // A file already inside the project is listed where it is.
    assert!(m.assets.iter().any(|a| a == "cmu_131_01.bvh"), "{:?}", m.assets);
    let clip_path =
        m.clips.iter().find(|c| c.contains("cmu_131_01")).expect("the capture's clip file").clone();
    let clip = &app.doc.project().clips[&clip_path];
    assert!(clip.clip.key_count() > 10_000, "every frame of the capture: {}", clip.clip.key_count());
    // Its rig plays it: the session's world has the rig with the clip, no fault.
    let rig = app.session.world().rigs().find(|r| {
        app.session.world().animator(*r).is_some_and(|a| a.skeleton().bone_count() == clip.bones.len())
    });
    let rig = rig.expect("the capture's rig is in the scene");
    assert!(app.session.world().animator(rig).unwrap().current_clip().is_some());
    let path = app.session.world().path(rig).unwrap();
    assert_eq!(app.session.entity_faults(&path).count(), 0, "the rig stands without a fault");
    let lines: Vec<&str> = app.log.entries().iter().map(|e| e.text.as_str()).collect();
    assert!(!lines.iter().any(|l| l.contains("cmu_131_01") && l.contains("fault")), "{lines:#?}");
    // Saved and reopened: the project lists the .bvh as an asset and loads it again.
    key(&mut h, Modifiers::COMMAND, Key::S);
    let reopened = Document::open(dir.path()).expect("the project reopens");
    assert_eq!(reopened.files(), h.state().doc.files());
    let report = marrow_engine::project::check_project(dir.path());
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    undo_all_redo_all(&mut h, dir.path(), &original);
}

#[test]
fn a_folder_of_models_imports_in_one_step_with_a_report_per_file_and_counts_its_progress() {
    let dir = sample("runner");
    let incoming = dir.path().join("incoming");
    std::fs::create_dir(&incoming).unwrap();
    for f in ["bvh/cmu_131_01.bvh", "bvh/capture.bvh", "fbx/CesiumMan.fbx"] {
        let from = repo().join("assets").join(f);
        std::fs::copy(&from, incoming.join(from.file_name().unwrap())).unwrap();
    }
    std::fs::write(incoming.join("broken.bvh"), "HIERARCHY\nROOT Hips\n{\n  OFFSET 0 0").unwrap();
    std::fs::write(incoming.join("notes.txt"), "not a model").unwrap();
    let original = files(dir.path());
    // The job behind the status bar's progress bar counts the model files (not notes.txt).
    let doc = Document::open(dir.path()).unwrap();
    let mut job = marrow_editor::import::FolderImportJob::start(
        incoming.clone(),
        dir.path().to_owned(),
        "scenes/main.scene.ron".into(),
        doc.project().clone(),
        1.0,
    );
    assert_eq!(job.progress().1, 4);
    let finished = (0..500).find_map(|_| {
        std::thread::sleep(std::time::Duration::from_millis(10));
        job.poll()
    });
    assert_eq!(finished.expect("the job finishes").reports.len(), 4);
    assert_eq!(job.progress(), (4, 4));
    let mut h = editor(dir.path());
    click(&mut h, Role::Button, "File");
    h.get_by_label("Import Folder…").click();
    settle(&mut h);
    // The dialog lists the folder (with its icon) among the project's.
    assert!(
        step_until(&mut h, |h| h.query_all_by_label_contains("incoming").next().is_some()),
        "the folder is listed"
    );
    h.query_all_by_label_contains("incoming").next().unwrap().click();
    settle(&mut h);
    h.get_by_label("🗀  Open").click();
    settle(&mut h);
    assert!(
        step_until(&mut h, |h| matches!(h.state().modal, Some(Modal::Report { .. }))),
        "the import finished: {:?}",
        h.state().log.entries()
    );
    let app = h.state();
    assert_eq!(app.doc.undo_label().as_deref(), Some("Import Folder incoming (3 models)"));
    assert_eq!(app.doc.head(), 1, "one step for the whole folder");
    let Some(Modal::Report { title, lines }) = &app.modal else { unreachable!() };
    assert!(title.starts_with("Imported 3 of 4 model(s) from"), "{title}");
    assert!(lines[0].starts_with("CesiumMan.fbx: 1 clip, 1 rig"), "{lines:?}");
    assert!(lines[1].starts_with("broken.bvh: not imported: "), "{lines:?}");
    assert!(
        lines[2].starts_with("capture.bvh: 1 clip, 1 rig")
            && lines[3].starts_with("cmu_131_01.bvh: 1 clip, 1 rig"),
        "{lines:?}"
    );
    let m = &app.doc.project().manifest;
    for asset in ["incoming/CesiumMan.fbx", "incoming/capture.bvh", "incoming/cmu_131_01.bvh"] {
        assert!(m.assets.iter().any(|a| a == asset), "{asset} in {:?}", m.assets);
    }
    let scene = &app.doc.project().scenes["scenes/main.scene.ron"];
    let names: Vec<&str> = scene.entities.iter().map(|e| e.name.as_str()).collect();
    for n in ["CesiumMan", "capture", "cmu_131_01"] {
        assert!(names.contains(&n), "{n} in {names:?}");
    }
    assert!(app.log.entries().iter().any(|e| e.text.starts_with("broken.bvh: not imported")));
    h.get_by_label("OK").click();
    settle(&mut h);
    undo_all_redo_all(&mut h, dir.path(), &original);
}

#[test]
fn a_new_project_is_created_in_a_new_or_empty_folder_and_opens_there() {
    let root = TempDir::new("new-project");
    // A folder that does not exist yet, and an empty one.
    let fresh = root.path().join("walk cycle");
    let empty = root.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for dir in [&fresh, &empty] {
        marrow_editor::create_project(dir).unwrap();
        let mut names = files(dir).into_keys().collect::<Vec<_>>();
        names.sort();
        assert_eq!(names, ["project.ron", "scenes/main.scene.ron"], "{}", dir.display());
        let doc = Document::open(dir).unwrap();
        let want = dir.file_name().unwrap().to_str().unwrap();
        assert_eq!(doc.project().manifest.name, want, "named after its folder");
        let scene = &doc.project().scenes["scenes/main.scene.ron"];
        assert_eq!(scene.entities.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(), ["Ground"]);
        assert!(!doc.is_dirty());
        // The editor opens it as any project, titled with its name.
        let h = editor(dir);
        assert_eq!(h.state().title(), format!("Marrow — {want}"));
    }
}

#[test]
fn a_new_project_is_refused_in_a_folder_that_holds_anything_and_the_folder_is_left_as_it_was() {
    let root = TempDir::new("new-project-refused");
    // A project already there, and a folder of someone's other files.
    let project = sample("runner");
    let other = root.path().join("notes");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("todo.txt"), b"keep me").unwrap();
    for dir in [project.path(), other.as_path()] {
        let before = files(dir);
        let err = marrow_editor::create_project(dir).unwrap_err().to_string();
        assert!(err.contains("is not empty") && err.contains(&dir.display().to_string()), "{err}");
        assert_eq!(files(dir), before, "{} untouched", dir.display());
    }
}

#[test]
fn the_import_dialog_measures_the_selected_model_and_says_what_size_the_units_make_it() {
    use marrow_editor::import::{SizeProbe, rest_size, size_line};
    // CesiumMan stands 1.5 m tall in its file's metres (its rest pose, mesh and joints); the
    // capture BVH is in centimetres. The line names the size the chosen scale gives and flags
    // one under 5 cm or over 20 m.
    let glb = repo().join("assets/gltf/CesiumMan/CesiumMan.glb");
    let scene = marrow_engine::project::import_model(&glb).unwrap();
    let size = rest_size(&scene).expect("CesiumMan has vertices");
    assert!((1.4..1.6).contains(&size.y), "CesiumMan is {size} across");
    assert_eq!(size_line(size, 1.0), format!("at this scale the model stands {:.2} m tall", size.y));
    assert_eq!(
        size_line(size, 0.1),
        format!("at this scale the model stands {:.1} cm tall", size.y * 10.0),
        "a tenth of its size"
    );
    assert_eq!(
        size_line(size, 0.01),
        format!("at this scale the model stands {:.1} cm tall: check the units", size.y),
        "a metre-sized model read as centimetres is flagged"
    );
    assert!(size_line(size, 100.0).ends_with(": check the units"));
    // Lying down (taller across than up): its largest extent.
    assert_eq!(size_line(glam::Vec3::new(4.0, 0.5, 2.0), 1.0), "at this scale the model is 4.00 m across");

    // The probe measures on its own thread; a file that does not import says why.
    let bvh = repo().join("assets/bvh/capture.bvh");
    let broken = TempDir::new("probe");
    let junk = broken.path().join("junk.glb");
    std::fs::write(&junk, b"not a model").unwrap();
    let mut probes = [SizeProbe::start(bvh.clone()), SizeProbe::start(junk.clone())];
    for _ in 0..500 {
        if probes.iter_mut().all(|p| p.poll().is_some()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(probes[0].path(), bvh);
    let capture = rest_size(&marrow_engine::project::import_model(&bvh).unwrap()).unwrap();
    assert_eq!(probes[0].poll(), Some(&Ok(Some(capture))));
    assert!(capture.y > 100.0, "the capture is in centimetres: {capture}");
    assert!(size_line(capture, 1.0).ends_with(": check the units"));
    assert!(!size_line(capture, 0.01).ends_with(": check the units"), "{}", size_line(capture, 0.01));
    match probes[1].poll() {
        Some(Err(fault)) => assert!(!fault.is_empty()),
        other => panic!("a junk file measures as {other:?}"),
    }
}

#[test]
fn the_import_dialog_shows_the_selected_models_size_at_the_units_and_a_typed_scale_imports_it() {
    let dir = sample("runner");
    std::fs::copy(repo().join("assets/gltf/CesiumMan/CesiumMan.glb"), dir.path().join("CesiumMan.glb"))
        .unwrap();
    let original = files(dir.path());
    let mut h = editor(dir.path());
    click(&mut h, Role::Button, "File");
    h.get_by_label_contains("Import Model…").click();
    settle(&mut h);
    assert!(step_until(&mut h, |h| h.query_by_label_contains("CesiumMan.glb").is_some()));
    assert!(h.query_by_label_contains("at this scale").is_none(), "nothing selected, nothing measured");
    h.get_by_label_contains("CesiumMan.glb").click();
    settle(&mut h);
    let line = |h: &egui_kittest::Harness<'_, EditorApp>| {
        h.query_by_label_contains("at this scale the model").map(|n| {
            let a = n.accesskit_node();
            [a.value(), a.label()].into_iter().flatten().find(|t| !t.is_empty()).unwrap_or_default()
        })
    };
    assert!(step_until(&mut h, |h| line(h).is_some()), "the selected model is measured");
    let metres = line(&h).unwrap();
    assert!(
        metres.starts_with("at this scale the model stands 1.") && metres.ends_with(" m tall"),
        "{metres}"
    );
    click(&mut h, Role::ComboBox, "Units");
    h.get_by_label("millimetres (x0.001)").click();
    settle(&mut h);
    let mm = line(&h).unwrap();
    assert!(mm.ends_with("cm tall: check the units"), "at millimetres: {mm}");
    // A scale of the file's own (a capture in units of 5.6 cm): typed, then imported at it.
    // Clicked and typed, as a keyboard types (key and text events, what egui-winit sends).
    h.get_by_role_and_label(Role::SpinButton, "Import Scale").click();
    settle(&mut h);
    key(&mut h, Modifiers::COMMAND, Key::A);
    for c in ["0", ".", "5"] {
        h.event(egui::Event::Text(c.into()));
        settle(&mut h);
    }
    key(&mut h, Modifiers::NONE, Key::Enter);
    assert_eq!(h.state().import_scale, 0.5);
    assert!(line(&h).unwrap().ends_with(" cm tall"), "{:?}", line(&h));
    h.get_by_label("🗀  Open").click();
    settle(&mut h);
    assert!(step_until(&mut h, |h| h.state().doc.head() == 1), "{:?}", h.state().log.entries());
    let scene = &h.state().doc.project().scenes["scenes/main.scene.ron"];
    let model = scene.entities.iter().find(|e| e.name.starts_with("CesiumMan")).expect("the model's entity");
    assert_eq!(model.transform.expect("a transform").scale, glam::Vec3::splat(0.5));
    undo_all_redo_all(&mut h, dir.path(), &original);
}

#[test]
fn ctrl_n_starts_a_new_project_asking_first_about_unsaved_changes() {
    let dir = sample("runner");
    let original = files(dir.path());
    let mut h = editor(dir.path());
    unsaved_change(&mut h);
    assert!(h.state().doc.is_dirty());
    // Ctrl+N, as File > New Project: the unsaved changes are asked about first.
    key(&mut h, Modifiers::COMMAND, Key::N);
    assert_eq!(h.state().modal, Some(Modal::Unsaved(After::New)));
    h.get_by_label("Cancel").click();
    settle(&mut h);
    assert!(h.state().modal.is_none() && h.state().doc.is_dirty(), "cancelled: the project stays");
    assert_eq!(h.state().title(), "Marrow — runner *");
    key(&mut h, Modifiers::COMMAND, Key::N);
    h.get_by_label("Don't Save").click();
    settle(&mut h);
    assert_eq!(h.state().title(), "Marrow — untitled", "a new project, never saved");
    assert_eq!(h.state().doc.root(), None);
    assert_eq!(files(dir.path()), original, "the discarded changes were not written");
}
