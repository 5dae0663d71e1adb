//! The Inspector under real work (issue 24): the Animator card's clip picker offers only the
//! clips made for the entity's rig (other rigs' clips greyed out under their own heading), and
//! its warning about a clip for another rig wraps inside the Inspector instead of running past
//! its edge; a bone's pose fields stay in place whether the bone has children or not. Root
//! motion is set on the Animator card (its bone, axes and heading) and moves the character.

mod support;

use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use marrow_editor::EditorApp;
use marrow_editor::ui_state::Selection;
use support::*;

const CESIUM_CLIP: &str = "assets/CesiumMan.glb#animation0";

/// The runner sample with CesiumMan's model among its assets: clips for two rigs. With
/// `runner_clip`, the Runner's Animator plays that clip.
fn two_rigs(runner_clip: Option<&str>) -> TempDir {
    let dir = sample("runner");
    std::fs::copy(
        repo().join("assets/gltf/CesiumMan/CesiumMan.glb"),
        dir.path().join("assets/CesiumMan.glb"),
    )
    .unwrap();
    let edit = |rel: &str, from: &str, to: &str| {
        let p = dir.path().join(rel);
        let text = std::fs::read_to_string(&p).unwrap();
        assert!(text.contains(from), "{rel} holds {from}");
        std::fs::write(&p, text.replacen(from, to, 1)).unwrap();
    };
    edit(
        "project.ron",
        "\"assets/runner.skeleton.ron\",",
        "\"assets/runner.skeleton.ron\",\n        \"assets/CesiumMan.glb\",",
    );
    if let Some(c) = runner_clip {
        edit("scenes/main.scene.ron", "clip: \"clips/stride.clip.ron\"", &format!("clip: {c:?}"));
    }
    dir
}

#[test]
fn the_clip_picker_offers_the_rigs_clips_and_greys_out_other_rigs_clips() {
    let dir = two_rigs(None);
    let mut h = editor(dir.path());
    assert!(
        h.state().session.library().clip_refs().any(|c| c == CESIUM_CLIP),
        "CesiumMan's walk is in the library"
    );
    click_row(&mut h, "Runner");
    // The Assets panel lists the clips too: the menu's entries are the nodes the click adds.
    let ids = |h: &Harness<'_, EditorApp>, label: &str| -> Vec<_> {
        h.get_all_by_label(label).map(|n| n.accesskit_node().id()).collect()
    };
    let before = [ids(&h, "clips/stride.clip.ron"), ids(&h, CESIUM_CLIP)];
    click(&mut h, Role::ComboBox, "Clip");
    let entry = |h: &Harness<'_, EditorApp>, k: usize, label: &str| {
        let new: Vec<_> =
            h.get_all_by_label(label).filter(|n| !before[k].contains(&n.accesskit_node().id())).collect();
        assert_eq!(new.len(), 1, "one menu entry {label}");
        new[0].accesskit_node().is_disabled()
    };
    assert!(!entry(&h, 0, "clips/stride.clip.ron"), "the runner's own clip can be picked");
    assert!(entry(&h, 1, CESIUM_CLIP), "a clip for CesiumMan's skeleton cannot be picked for the runner");
    assert!(h.query_by_label("For other rigs:").is_some(), "under its own heading");
    let other =
        h.get_all_by_label(CESIUM_CLIP).find(|n| !before[1].contains(&n.accesskit_node().id())).unwrap();
    other.click();
    settle(&mut h);
    assert_eq!(h.state().doc.head(), 0, "clicking it changed nothing");
}

#[test]
fn the_warning_about_another_rigs_clip_wraps_inside_the_inspector() {
    let dir = two_rigs(Some(CESIUM_CLIP));
    let mut h = editor(dir.path());
    click_row(&mut h, "Runner");
    h.run_steps(2);
    let window = egui::Rect::from_min_size(egui::Pos2::ZERO, egui::vec2(1440.0, 900.0));
    let warning = h
        .query_all_by(|n| {
            n.role() == Role::Label
                && n.value().is_some_and(|l| l.starts_with('⚠') && l.contains("was authored for skeleton"))
        })
        .next()
        .expect("the Animator card names the clip made for another rig");
    let r = warning.rect();
    let inspector_left = h.get_by_role_and_label(Role::ComboBox, "Clip").rect().left() - 120.0;
    assert!(window.contains_rect(r), "the warning {r:?} lies inside the window {window:?}");
    assert!(r.left() >= inspector_left, "inside the Inspector: {r:?}");
    assert!(r.height() > 20.0, "it wraps onto more than one line: {r:?}");
}

#[test]
fn the_animator_cards_pickers_and_time_slider_stay_inside_the_inspector_with_a_long_clip_path() {
    // The mocap sample's CesiumMan plays a retargeted clip whose path is longer than the
    // Inspector is wide: its picker cuts the text (an ellipsis) instead of running past the
    // panel's edge, and the transport's slider leaves room for its value and label.
    let dir = sample("mocap");
    for size in [egui::vec2(1440.0, 900.0), egui::vec2(1280.0, 800.0)] {
        let mut h = editor_sized(dir.path(), size);
        click_row(&mut h, "CesiumMan");
        h.run_steps(2);
        let window = egui::Rect::from_min_size(egui::Pos2::ZERO, size);
        let clip = h.get_by_role_and_label(Role::ComboBox, "Clip").rect();
        let inspector_left = clip.left() - 120.0;
        for (role, label) in [(Role::ComboBox, "Rig"), (Role::ComboBox, "Clip"), (Role::Slider, "Time")] {
            let r = h.get_by_role_and_label(role, label).rect();
            assert!(window.contains_rect(r), "at {size:?} the {label} widget {r:?} lies inside the window");
            assert!(r.left() >= inspector_left, "at {size:?} the {label} widget {r:?} is in the Inspector");
        }
    }
}

/// The rectangles of the bone Inspector's pose fields, by label.
fn pose_fields(h: &Harness<'_, EditorApp>) -> Vec<(String, egui::Rect)> {
    let mut out = Vec::new();
    for part in ["Position", "Rotation", "Scale"] {
        for axis in ["X", "Y", "Z"] {
            let label = format!("Pose {part} {axis}");
            let r = h.get_by_label(&label).rect();
            out.push((label, r));
        }
    }
    out
}

fn select_bone(h: &mut Harness<'_, EditorApp>, bone: &str) {
    h.state_mut().ui.selection =
        marrow_editor::ui_state::Selection::Bone { rig: "Runner".into(), bone: bone.into() };
    settle(h);
    h.run_steps(2);
}

#[test]
fn the_pose_fields_stay_in_place_between_bones_with_and_without_children() {
    let dir = sample("runner");
    let mut h = editor(dir.path());
    click_row(&mut h, "Runner");
    // thigh_l has a child (shin_l); shin_l has none; hips is a root with two.
    select_bone(&mut h, "thigh_l");
    let parent = pose_fields(&h);
    for bone in ["shin_l", "hips"] {
        select_bone(&mut h, bone);
        assert_eq!(pose_fields(&h), parent, "{bone}'s pose fields lie where thigh_l's did");
    }
    // A click where thigh_l's Rotation X was lands in shin_l's Rotation X.
    select_bone(&mut h, "shin_l");
    let at = parent.iter().find(|(l, _)| l == "Pose Rotation X").unwrap().1.center();
    h.hover_at(at);
    h.run();
    h.drag_at(at);
    h.run();
    h.drop_at(at);
    settle(&mut h);
    assert!(h.get_by_label("Pose Rotation X").is_focused(), "the click focused the same field");
}

#[test]
fn root_motion_set_on_the_animator_card_moves_the_capture_and_undoes_to_the_original_bytes() {
    let dir = sample("mocap");
    let original = files(dir.path());
    let mut h = editor(dir.path());
    let rig = "cmu_131_01/cmu_131_01";
    h.state_mut().ui.selection = Selection::Entity(rig.into());
    settle(&mut h);
    let scene = |h: &Harness<'_, EditorApp>| {
        let files = h.state().doc.files();
        files.into_iter().find(|(p, _)| p.ends_with(".scene.ron")).unwrap().1
    };
    assert!(!scene(&h).contains("root_motion"));
    h.get_by_role_and_label(Role::CheckBox, "Root Motion").click();
    settle(&mut h);
    assert_eq!(h.state().doc.head(), 1, "turning root motion on is one undo step");
    let text = scene(&h);
    assert!(text.contains("bone: \"Hips\"") && text.contains("translate: \"XZ\""), "{text}");
    assert_eq!(h.get_by_role_and_label(Role::ComboBox, "Root Motion Bone").value().as_deref(), Some("Hips"));
    h.get_by_label("Yaw").click();
    settle(&mut h);
    assert_eq!(h.state().doc.head(), 2);
    assert!(scene(&h).contains("yaw: false"), "the heading is left in the pose");

    // Playing moves the character, not its hips: the hips play in place on X and Z.
    key(&mut h, egui::Modifiers::NONE, egui::Key::Space);
    assert!(h.state().session.is_playing());
    for _ in 0..60 {
        h.step();
    }
    {
        let world = h.state().session.world();
        let e = world.find(rig).unwrap();
        let a = world.animator(e).unwrap();
        let moved = a.root_motion().translation;
        assert!(moved.length() > 1.0, "a second of the capture walks the character (moved {moved:?})");
        assert_eq!(a.root_motion().yaw, 0.0, "the heading is not taken");
        let rest = a.skeleton().bind_pose[0].translation;
        let hips = world.rig_pose(e).unwrap().local[0].translation;
        assert!(
            (hips.x - rest.x).abs() < 1e-4 && (hips.z - rest.z).abs() < 1e-4,
            "in place: {hips} vs {rest}"
        );
    }
    key(&mut h, egui::Modifiers::NONE, egui::Key::Space);
    assert_eq!(h.state().doc.head(), 2, "playing is not an edit");
    undo_all_redo_all(&mut h, dir.path(), &original);
}

#[test]
fn dragging_the_look_target_with_the_gizmo_turns_the_captures_head_toward_it() {
    use marrow_editor::viewport::gizmo::{GizmoMode, Handle};
    let dir = sample("mocap");
    let mut h = editor(dir.path());
    h.state_mut().ui.selection = Selection::Entity("LookTarget".into());
    settle(&mut h);
    let view = viewport_view(&h);
    let g = app_gizmo(&h, &view, GizmoMode::Translate).expect("the LookTarget's gizmo");
    let before = g.world.w_axis.truncate();
    let a = g.handle_point(&view, Handle::Move(0), 0.9).unwrap();
    let b = g.handle_point(&view, Handle::Move(0), 1.8).unwrap();
    assert!(view.rect.contains(a) && view.rect.contains(b), "the handle is in the viewport");
    drag(&mut h, a, b, 8);
    h.run_steps(4);
    assert_eq!(h.state().doc.head(), 1, "moving the target is one edit");
    let world = h.state().session.world();
    let target = world.find("LookTarget").unwrap();
    let spot = world.world_matrix(target).unwrap().w_axis.truncate();
    assert!((spot - before).x.abs() > 0.05, "the box moved along X: {before} -> {spot}");
    // The capture's head looks at the box where it is now (the binding reads it each frame).
    let rig = world.find("cmu_131_01/cmu_131_01").unwrap();
    let sk = world.animator(rig).unwrap().skeleton();
    let head = sk.index_of("Head").unwrap();
    let head_world = world.world_matrix(rig).unwrap() * world.rig_pose(rig).unwrap().model[head];
    let forward = head_world.transform_vector3(glam::Vec3::Z).normalize();
    let to = (spot - head_world.w_axis.truncate()).normalize();
    let miss = forward.cross(to).length().atan2(forward.dot(to));
    assert!(miss < 0.02, "the head looks {miss} rad off the box");
}

#[test]
fn the_mesh_card_counts_a_boxs_vertices_in_one_primitive() {
    let dir = sample("runner");
    let mut h = editor(dir.path());
    click_row(&mut h, "Ground");
    h.run_steps(2);
    assert!(h.query_by_label("24 vertices in 1 primitive").is_some(), "one primitive, singular");
}

#[test]
fn a_rig_playing_a_graph_shows_its_time_in_the_transport_not_a_clip_of_no_frames() {
    // The locomotion sample's Runner plays its steering graph: the transport once read
    // "frame 86 / 0 at 30 fps · 0.000 s · 0 channels" and its slider spanned a millisecond.
    let dir = sample("locomotion");
    let mut h = editor(dir.path());
    click_row(&mut h, "Runner");
    play_for(&mut h, 1.5);
    let s = &h.state().session;
    let rig = s.entity("Runner").unwrap();
    let (time, length) = (s.world().animator(rig).unwrap().time(), s.head_length(rig));
    assert!(time > 1.0 && length >= 1.0, "the graph played 1.5 s ({time}); its longest clip {length}");
    let line = format!("a graph · {time:.3} s since it started");
    assert!(h.query_by_label_contains(&line).is_some(), "the transport says {line:?}");
    assert!(h.query_by_label_contains("0 channels").is_none(), "no clip of no channels");
    let slider = h.get_by_role_and_label(Role::Slider, "Time");
    let max = slider.accesskit_node().max_numeric_value();
    assert_eq!(max, Some(length as f64), "the slider spans the graph's longest clip");
}

#[test]
fn dragging_a_pose_rotation_field_turns_the_bone_past_ninety_degrees() {
    // The fields showed a rotation as its canonical Euler triple (pitch within ±90 degrees):
    // past 90 the shown triple turned over to its twin (roll and yaw near 180, pitch falling),
    // so a drag of Rotation Y stuck near 90 and never turned the bone further.
    let dir = sample("runner");
    let mut h = editor(dir.path());
    click_row(&mut h, "Runner");
    select_bone(&mut h, "shin_l");
    let value = |h: &Harness<'_, EditorApp>, label: &str| -> f32 {
        let v = h.get_by_label(label).accesskit_node().numeric_value().unwrap();
        v as f32
    };
    let y0 = value(&h, "Pose Rotation Y");
    let field = h.get_by_label("Pose Rotation Y").rect();
    // 0.5 degrees a point: 240 points turn the bone 120 degrees about its pitch axis.
    drag(&mut h, field.center(), field.center() + egui::vec2(240.0, 0.0), 24);
    let y1 = value(&h, "Pose Rotation Y");
    assert!((y1 - (y0 + 120.0)).abs() < 2.0, "Rotation Y went from {y0} to {y1}, not {}", y0 + 120.0);
    let (x, z) = (value(&h, "Pose Rotation X"), value(&h, "Pose Rotation Z"));
    let app = h.state();
    let w = app.session.world();
    let rig = w.find("Runner").unwrap();
    let bone = w.animator(rig).unwrap().skeleton().bone_names.iter().position(|b| b == "shin_l").unwrap();
    let q = w.rig_pose(rig).unwrap().local[bone].rotation;
    let r = |d: f32| d.to_radians();
    let want = glam::Quat::from_euler(glam::EulerRot::XYZ, r(x), r(y1), r(z));
    assert!(q.dot(want).abs() > 0.9999, "the pose is the fields' rotation: {q:?} against {want:?}");
}
