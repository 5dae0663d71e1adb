//! The editor under real work (issue 24): faults never hide the scene (a rig whose graph or clip
//! cannot play stays in the world with its bones and socketed meshes, in its bind pose, and the
//! fault is on its Animator card and in the Log, once per occurrence gap); a damaged file opens the
//! rest of the project and is never written over; an imported clip can be looked at and scrubbed
//! in the Timeline, read-only.

mod support;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use marrow_editor::EditorApp;
use marrow_editor::command::Command;
use marrow_editor::document::Op;
use marrow_editor::document::graph_ops::GraphOp;
use marrow_engine::graph::{Connection, Node, NodeId, NodeKind};
use support::*;

/// The graph the sample's Runner plays.
const G: &str = "graphs/steering.graph.ron";

/// The rig at `path` is in the world with its bones and every socketed child entity, and its
/// evaluated local pose is its skeleton's bind pose.
fn assert_rig_in_bind_pose(h: &Harness<'_, EditorApp>, path: &str, children: &[&str]) {
    let s = &h.state().session;
    let rig = s.entity(path).unwrap_or_else(|| panic!("{path} vanished from the world"));
    let a = s.world().animator(rig).expect("the rig keeps its Animator");
    let sk = a.skeleton().clone();
    assert!(sk.bone_count() > 1);
    for c in children {
        let e = s.entity(&format!("{path}/{c}")).unwrap_or_else(|| panic!("{path}/{c} vanished"));
        assert!(s.world().mesh(e).is_some(), "{c} keeps its mesh");
    }
    let pose = s.world().rig_pose(rig).expect("the rig is posed");
    assert_eq!(pose.local[..sk.bone_count()], sk.bind_pose[..], "bind pose");
    // The Outliner lists the rig's bones.
    assert!(h.query_by_label_contains(&format!("Bones ({})", sk.bone_count())).is_some(), "bones listed");
}

#[test]
fn an_unfinished_blend2_wired_into_the_output_leaves_the_rig_in_bind_pose_with_the_fault_shown() {
    let dir = sample("locomotion");
    let mut h = editor(dir.path());
    settle(&mut h);
    click_row(&mut h, "Runner");
    let g = h.state().doc.project().graphs[G].clone();
    let output = g.nodes.iter().find(|n| matches!(n.kind, NodeKind::Output)).unwrap().id;
    let blend = NodeId(g.nodes.iter().map(|n| n.id.0).max().unwrap() + 1);
    h.state_mut().send(Command::Edit(Box::new(Op::Graph {
        path: G.into(),
        op: GraphOp::AddNodes {
            label: "Add Blend2".into(),
            nodes: vec![Node { id: blend, position: [700.0, 300.0], kind: NodeKind::Blend2 { weight: 0.5 } }],
            connections: vec![Connection { from: blend, to: output, pin: "pose".into() }],
        },
    })));
    settle(&mut h);
    h.run_steps(3);
    assert_rig_in_bind_pose(&h, "Runner", &["LeftThigh", "LeftShin"]);
    let card = h.query_by_label_contains("⚠ animator.graph:");
    assert!(card.is_some(), "the fault is on the Animator card");
    let log = |h: &Harness<'_, EditorApp>| h.state().log.count_containing("animator.graph");
    assert_eq!(log(&h), 1, "{:?}", h.state().log.entries());
    // Another edit while the fault stands does not log it again; undo clears it.
    h.state_mut().send(Command::Edit(Box::new(Op::RenameProject("renamed".into()))));
    settle(&mut h);
    assert_eq!(log(&h), 1, "{:?}", h.state().log.entries());
    h.state_mut().send(Command::Undo);
    h.state_mut().send(Command::Undo);
    settle(&mut h);
    assert!(h.query_by_label_contains("⚠ animator.graph:").is_none());
    assert!(
        h.state()
            .session
            .world()
            .animator(h.state().session.entity("Runner").unwrap())
            .unwrap()
            .current_graph()
            .is_some()
    );
}

#[test]
fn a_scene_naming_a_missing_clip_opens_with_the_rig_in_bind_pose_and_says_the_clip_is_missing() {
    let dir = sample("runner");
    let scene = dir.path().join("scenes/main.scene.ron");
    let text = std::fs::read_to_string(&scene).unwrap();
    assert!(text.contains("\"clips/stride.clip.ron\""));
    std::fs::write(&scene, text.replace("\"clips/stride.clip.ron\"", "\"assets/walk.clip.ron\"")).unwrap();
    let mut h = editor(dir.path());
    settle(&mut h);
    click_row(&mut h, "Runner");
    assert_rig_in_bind_pose(&h, "Runner", &["LeftThigh", "LeftShin"]);
    let missing = "clip assets/walk.clip.ron is missing";
    assert_eq!(h.state().log.count_containing(missing), 1, "{:?}", h.state().log.entries());
    assert!(h.query_by_label_contains(&format!("⚠ animator.clip: {missing}")).is_some(), "on the card");
    assert!(h.query_by_label_contains("is inside an imported model").is_none());
    assert_eq!(h.query_all_by_label_contains(missing).count(), 2, "said on the card and in the Timeline");
    assert!(h.query_by_label("Make Editable").is_none(), "nothing to make editable");
}

/// The locomotion sample with `clips/sprint.clip.ron` cut in half (a save killed by a full disk,
/// a bad copy): returns the folder and the damaged file's bytes.
fn truncated_sprint() -> (TempDir, Vec<u8>) {
    let dir = sample("locomotion");
    let file = dir.path().join("clips/sprint.clip.ron");
    let bytes = std::fs::read(&file).unwrap();
    let cut = bytes[..bytes.len() / 2].to_vec();
    std::fs::write(&file, &cut).unwrap();
    (dir, cut)
}

#[test]
fn a_project_with_a_truncated_clip_opens_with_everything_else_editable_and_the_save_leaves_it_untouched() {
    let (dir, damaged_bytes) = truncated_sprint();
    let mut h = editor(dir.path());
    settle(&mut h);
    let (path, location) = {
        let d: Vec<_> = h.state().doc.damaged().cloned().collect();
        assert_eq!(d.len(), 1, "{:?}", h.state().log.entries());
        (d[0].path.clone(), d[0].location().expect("a syntax error has a line and column"))
    };
    assert_eq!(path, "clips/sprint.clip.ron");
    // Listed as damaged in the Assets panel and the Log, with file:line:col.
    let at = format!("{path}:{}:{}", location.0, location.1);
    assert!(h.query_by_label_contains(&format!("⚠ {at} damaged")).is_some(), "Assets lists {at}");
    assert_eq!(h.state().log.count_containing(&at), 1, "{:?}", h.state().log.entries());
    // Everything else opened: the other clips, the graph, the scene with its rig.
    let p = h.state().doc.project();
    assert!(p.clips.contains_key("clips/idle.clip.ron") && p.clips.contains_key("clips/stride.clip.ron"));
    assert!(p.graphs.contains_key(G));
    assert!(h.state().session.entity("Runner").is_some());
    // Edit another clip, save, reload: the edit is there and the damaged file is untouched.
    h.state_mut().send(Command::Edit(Box::new(Op::Clip {
        path: "clips/idle.clip.ron".into(),
        op: marrow_editor::document::clip_ops::ClipOp::SetProperties {
            name: Some("idle edited".into()),
            looping: None,
            length: None,
            frame_rate: None,
        },
    })));
    settle(&mut h);
    assert_eq!(h.state().doc.project().clips["clips/idle.clip.ron"].clip.name, "idle edited");
    h.state_mut().send(Command::Save);
    settle(&mut h);
    assert!(!h.state().doc.is_dirty(), "{:?}", h.state().log.entries());
    assert_eq!(std::fs::read(dir.path().join(&path)).unwrap(), damaged_bytes, "the save left it as it was");
    let (reopened, _) = marrow_editor::document::Document::open_repairing(dir.path()).unwrap();
    assert_eq!(reopened.project().clips["clips/idle.clip.ron"].clip.name, "idle edited");
    assert_eq!(reopened.damaged().count(), 1, "still listed, still damaged");
    // Save As elsewhere: the new folder gets the damaged file's bytes as they were.
    let other = TempDir::new("damaged-save-as");
    h.state_mut().send(Command::SaveAs(other.path().to_owned()));
    settle(&mut h);
    assert_eq!(std::fs::read(other.path().join(&path)).unwrap(), damaged_bytes, "copied unchanged");
    assert_eq!(std::fs::read(dir.path().join(&path)).unwrap(), damaged_bytes);
}

#[test]
fn a_damaged_file_opens_as_text_at_its_error_and_is_removed_from_the_project_undoably() {
    // An unused clip file the manifest lists, cut short.
    let dir = sample("locomotion");
    let manifest = dir.path().join("project.ron");
    let m = std::fs::read_to_string(&manifest).unwrap();
    let listed = "        \"clips/sprint.clip.ron\",\n";
    assert!(m.contains(listed));
    std::fs::write(&manifest, m.replace(listed, &format!("{listed}        \"clips/broken.clip.ron\",\n")))
        .unwrap();
    let idle = std::fs::read(dir.path().join("clips/idle.clip.ron")).unwrap();
    let broken = idle[..idle.len() * 2 / 3].to_vec();
    std::fs::write(dir.path().join("clips/broken.clip.ron"), &broken).unwrap();
    let mut h = editor(dir.path());
    settle(&mut h);
    click(&mut h, egui::accesskit::Role::Button, "View Text");
    let view = h.state().panels.assets.viewing.clone().expect("the text view is open");
    assert_eq!(view.path, "clips/broken.clip.ron");
    let line = view.line().expect("the error line is highlighted");
    let text = String::from_utf8_lossy(&broken).into_owned();
    let shown = format!("{line:>5}  {}", text.lines().nth(line - 1).unwrap_or(""));
    assert!(h.query_by_label(&shown).is_some(), "line {line} shown: {shown:?}");
    // Remove from Project: one undoable step; the file stays on disk, a save does not remove it.
    click(&mut h, egui::accesskit::Role::Button, "Remove from Project");
    assert_eq!(h.state().doc.damaged().count(), 0);
    assert!(!h.state().doc.project().manifest.clips.iter().any(|c| c == "clips/broken.clip.ron"));
    assert!(h.state().panels.assets.viewing.is_none(), "its view closed with it");
    h.state_mut().send(Command::Undo);
    settle(&mut h);
    assert_eq!(h.state().doc.damaged().count(), 1, "undo lists it again");
    h.state_mut().send(Command::Redo);
    h.state_mut().send(Command::Save);
    settle(&mut h);
    assert_eq!(std::fs::read(dir.path().join("clips/broken.clip.ron")).unwrap(), broken, "left on disk");
    assert!(!std::fs::read_to_string(&manifest).unwrap().contains("broken.clip.ron"));
    let reopened = marrow_editor::document::Document::open(dir.path()).expect("opens cleanly without it");
    assert_eq!(reopened.project().clips.len(), 8);
}

#[test]
fn an_imported_clip_shows_read_only_in_the_timeline_with_keys_and_a_ruler_that_scrubs_on_its_frames() {
    use marrow_editor::panels::timeline::model::RowKind;
    let dir = sample("cesium_man");
    let mut h = editor(dir.path());
    settle(&mut h);
    click_row(&mut h, "CesiumMan");
    h.run_steps(2);
    let reference = "assets/CesiumMan.glb#animation0";
    let clip = h.state().session.library().clips(reference)[0].clone();
    assert!(h.query_by_label_contains("Read-only: this clip is inside an imported model").is_some());
    assert!(h.query_by_label("Make Editable").is_some(), "Make Editable beside it");
    assert!(h.query_by_label(&format!("{} fps", clip.frame_rate)).is_some(), "its rate in the toolbar");
    // The dope sheet shows its rows and keys: a bone row per animated bone, and a key is there
    // to be clicked (selected: a view state, not an edit).
    let layout = h.state().panels.timeline.layout.clone();
    let bones = layout.rows.iter().filter(|(k, _)| matches!(k, RowKind::Bone(_))).count();
    let animated = clip.channels().iter().filter(|c| c.rotation.is_some() || c.translation.is_some()).count();
    assert!(bones > 0 && bones <= animated, "{bones} bone rows for {animated} animated bones");
    let t = clip.channels().iter().find_map(|c| c.rotation.as_ref().map(|r| r.times()[1])).unwrap();
    let at = layout.key(RowKind::Summary, t).expect("the summary row is drawn");
    h.hover_at(at);
    h.run();
    h.drag_at(at);
    h.drop_at(at);
    settle(&mut h);
    assert!(!h.state().panels.timeline.selection.is_empty(), "a key was under the pointer at {t}");
    // Dragging the key sends no edit.
    drag(&mut h, at, at + egui::vec2(60.0, 0.0), 6);
    assert_eq!(h.state().doc.steps().count(), 0, "no edit is recorded");
    assert!(!h.state().doc.is_dirty());
    // A drag on the ruler moves the playhead, onto a frame of the clip's rate.
    let map = layout.map.unwrap();
    let y = layout.ruler.center().y;
    let (from, to) = (clip.duration() * 0.2, clip.duration() * 0.55);
    drag(&mut h, egui::Pos2::new(map.x(from), y), egui::Pos2::new(map.x(to), y), 6);
    let rig = h.state().session.entity("CesiumMan").unwrap();
    let time = h.state().session.world().animator(rig).unwrap().time();
    assert!((time - to).abs() <= 1.0 / clip.frame_rate, "playhead {time} near {to}");
    let frames = time * clip.frame_rate;
    assert!((frames - frames.round()).abs() < 1e-3, "{time} s is on a frame at {} fps", clip.frame_rate);
    assert_eq!(h.state().doc.steps().count(), 0);
    // The Inspector's scrub slider snaps to the clip's frames too.
    let between = (10.4 / clip.frame_rate) as f64;
    set_value(&mut h, egui::accesskit::Role::Slider, "Time", between);
    let time = h.state().session.world().animator(rig).unwrap().time();
    assert_eq!(time, 10.0 / clip.frame_rate, "the slider's {between} s snapped to frame 10");
}

#[test]
fn a_damaged_scene_file_opens_the_rest_of_the_project_with_its_location_named() {
    let dir = sample("runner");
    let scene = dir.path().join("scenes/main.scene.ron");
    let text = std::fs::read_to_string(&scene).unwrap();
    // A missing comma on line 7: the parser stops on line 8.
    std::fs::write(&scene, text.replacen("name: \"Ground\",", "name: \"Ground\"", 1)).unwrap();
    let before = files(dir.path());
    let mut h = editor(dir.path());
    settle(&mut h);
    assert_eq!(h.state().doc.root(), Some(dir.path()), "the project opened");
    let d: Vec<_> = h.state().doc.damaged().cloned().collect();
    assert_eq!(d.len(), 1);
    assert_eq!((d[0].path.as_str(), d[0].location().map(|l| l.0)), ("scenes/main.scene.ron", Some(8)));
    assert!(h.state().doc.project().clips.contains_key("clips/stride.clip.ron"), "the clip opened");
    assert_eq!(h.state().log.count_containing("main.scene.ron:8:"), 1, "{:?}", h.state().log.entries());
    assert!(h.query_by_label_contains("⚠ scenes/main.scene.ron:8:").is_some(), "listed in Assets");
    assert_eq!(files(dir.path()), before, "nothing was written");
}

#[test]
fn the_log_counts_one_entry_in_the_singular() {
    let dir = sample("locomotion");
    let mut h = editor(dir.path());
    click(&mut h, egui::accesskit::Role::Button, "Log");
    assert_eq!(h.state().log.entries().len(), 1, "{:?}", h.state().log.entries());
    assert!(h.query_by_label("1 entry").is_some(), "the Log's count reads '1 entry'");
}
