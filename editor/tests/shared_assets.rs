//! An edit costs what it changes: the document, its undo steps and the session share every file
//! the edit did not touch (the same `Arc`), an undo puts back the very value the step took away,
//! and the session follows a clip edit by re-binding the heads that play the clip, keeping the
//! world and its playheads, while an edit of anything else rebuilds the world.

use std::sync::Arc;

use marrow_editor::document::clip_ops::{ClipOp, KeyRef};
use marrow_editor::document::{Document, EntityOp, Op, Slot, Value};
use marrow_editor::session::{Session, SyncKind};
use marrow_engine::clip::Channel;
use marrow_engine::project::Project;
use marrow_engine::project::runner::{CLIP_PATH, SCENE_PATH, locomotion_project, runner_project};

const IDLE: &str = "clips/idle.clip.ron";

/// Moves the hips' translation key at 0.25 s by `delta` seconds.
fn move_stride_key(delta: f32) -> Op {
    move_hips_key(0.25, delta)
}

/// Moves the hips' translation key at `time` by `delta` seconds.
fn move_hips_key(time: f32, delta: f32) -> Op {
    Op::Clip {
        path: CLIP_PATH.into(),
        op: ClipOp::MoveKeys { keys: vec![KeyRef::new("hips", Channel::Translation, time)], delta },
    }
}

/// Every file of `a` and `b` by kind and path, with whether the two hold the same `Arc`.
fn sharing(a: &Project, b: &Project) -> Vec<(String, bool)> {
    fn same<T>(
        kind: &str,
        x: &std::collections::BTreeMap<String, Arc<T>>,
        y: &std::collections::BTreeMap<String, Arc<T>>,
    ) -> Vec<(String, bool)> {
        x.iter().map(|(k, v)| (format!("{kind} {k}"), y.get(k).is_some_and(|w| Arc::ptr_eq(v, w)))).collect()
    }
    let mut out = same("scene", &a.scenes, &b.scenes);
    out.extend(same("clip", &a.clips, &b.clips));
    out.extend(same("skeleton", &a.skeletons, &b.skeletons));
    out.extend(same("graph", &a.graphs, &b.graphs));
    out
}

#[test]
fn an_edit_of_one_clip_leaves_every_other_asset_shared_with_the_previous_step() {
    // Eight clips, three graphs, a skeleton and a scene.
    let mut doc = Document::new(locomotion_project(), None);
    let before = doc.project().clone();
    assert_eq!(sharing(&before, doc.project()).len(), 13);
    assert!(doc.apply(&move_stride_key(0.1), 1).unwrap());

    // The step holds the one file it changed, its "before" the very value the project held.
    let step = doc.steps().last().unwrap();
    assert_eq!(step.changes().len(), 1, "{:?}", step.changes().iter().map(|c| &c.slot).collect::<Vec<_>>());
    let change = &step.changes()[0];
    assert_eq!(change.slot, Slot::Clip(CLIP_PATH.into()));
    let (Some(Value::Clip(old)), Some(Value::Clip(new))) = (change.before.clone(), change.after.clone())
    else {
        panic!("a clip change holds clips");
    };
    assert!(
        Arc::ptr_eq(&old, &before.clips[CLIP_PATH]),
        "the step's before is the project's value, not a copy"
    );
    assert!(Arc::ptr_eq(&new, &doc.project().clips[CLIP_PATH]), "the project holds the step's after");

    // Every other file is the same Arc as before the edit; the edited one is not.
    for (file, shared) in sharing(doc.project(), &before) {
        let edited = file == format!("clip {CLIP_PATH}");
        assert_eq!(shared, !edited, "{file}: shared {shared}");
    }
    // Not even the edited clip's bone list was copied twice: the other clips' samples are shared
    // down to the clip (the library hands out these Arcs).
    assert!(Arc::ptr_eq(&doc.project().clips[IDLE].clip, &before.clips[IDLE].clip));

    // A second step on the same clip shares the first step's after as its before.
    assert!(doc.apply(&move_hips_key(0.35, -0.1), 2).unwrap());
    assert_eq!(doc.steps().count(), 2);
    let second = doc.steps().last().unwrap();
    let Some(Value::Clip(second_before)) = &second.changes()[0].before else {
        panic!("{:?}", second.changes()[0].slot)
    };
    assert!(Arc::ptr_eq(second_before, &new), "consecutive steps share the state between them");

    // Undo puts back the very values: the project is the opened one, file for file.
    doc.undo();
    doc.undo();
    assert!(sharing(doc.project(), &before).iter().all(|(_, s)| *s), "{:?}", sharing(doc.project(), &before));
}

#[test]
fn a_drag_merged_into_one_step_still_shares_the_other_files() {
    let mut doc = Document::new(locomotion_project(), None);
    let before = doc.project().clone();
    for i in 1..=20 {
        doc.apply(&move_stride_key(0.005 * i as f32), 7).unwrap();
    }
    assert_eq!(doc.steps().count(), 1);
    let step = doc.steps().next().unwrap();
    let Some(Value::Clip(old)) = &step.changes()[0].before else { panic!() };
    assert!(Arc::ptr_eq(old, &before.clips[CLIP_PATH]), "the gesture's start is kept, not copied");
    for (file, shared) in sharing(doc.project(), &before) {
        assert_eq!(shared, file != format!("clip {CLIP_PATH}"), "{file}");
    }
}

/// The runner with a second clip the scene does not play.
fn runner_with_idle() -> Project {
    let mut p = runner_project();
    let mut idle = (*p.clips[CLIP_PATH]).clone();
    Arc::make_mut(&mut idle.clip).name = "idle".into();
    p.manifest.clips.push(IDLE.into());
    p.clips.insert(IDLE.into(), Arc::new(idle));
    p
}

#[test]
fn a_clip_edit_rebinds_the_heads_playing_it_and_keeps_the_world() {
    let mut doc = Document::new(runner_with_idle(), None);
    let mut session = Session::new();
    assert!(session.sync(&doc));
    assert_eq!(session.last_sync(), SyncKind::Rebuilt);
    session.update(0.0);
    let rig = session.entity("Runner").expect("the runner rig");
    session.seek(rig, 0.4);
    session.update(0.0);
    let idle_before = session.library().clips(IDLE)[0].clone();
    assert!(
        Arc::ptr_eq(&idle_before, &doc.project().clips[IDLE].clip),
        "the library shares the project's clips"
    );

    assert!(doc.apply(&move_stride_key(0.1), 1).unwrap());
    assert!(session.sync(&doc));
    assert_eq!(session.last_sync(), SyncKind::Rebound, "a clip edit re-binds, it does not rebuild");
    assert_eq!(session.entity("Runner"), Some(rig), "the world was not rebuilt: the entity stands");
    let a = session.world().animator(rig).unwrap();
    assert!(
        Arc::ptr_eq(a.current_clip().unwrap(), &doc.project().clips[CLIP_PATH].clip),
        "the head plays the edited clip itself"
    );
    assert_eq!(a.time(), 0.4, "the playhead stays where it was");
    assert!(Arc::ptr_eq(&session.library().clips(IDLE)[0], &idle_before), "the other clip is untouched");
    session.update(0.0);
    assert!(session.world().rig_pose(rig).is_some(), "the rig poses with the edited clip");

    // Undo is a clip edit too: the head goes back to the original clip's Arc.
    let original = doc.steps().last().unwrap().changes()[0].before.clone();
    doc.undo();
    assert!(session.sync(&doc));
    assert_eq!(session.last_sync(), SyncKind::Rebound);
    let Some(Value::Clip(original)) = original else { panic!() };
    assert!(Arc::ptr_eq(session.world().animator(rig).unwrap().current_clip().unwrap(), &original.clip));

    // The same revision twice is no work.
    assert!(!session.sync(&doc));

    // An edit of the scene rebuilds the world.
    let op = Op::Entity {
        scene: SCENE_PATH.into(),
        entity: "Runner".into(),
        op: EntityOp::SetTransform(Some(marrow_engine::math::Transform::from_translation(glam::Vec3::X))),
    };
    assert!(doc.apply(&op, 2).unwrap());
    assert!(session.sync(&doc));
    assert_eq!(session.last_sync(), SyncKind::Rebuilt);
    let rig = session.entity("Runner").unwrap();
    assert_eq!(session.world().animator(rig).unwrap().time(), 0.4, "a rebuild puts the playhead back");
}

#[test]
fn a_clip_edit_under_a_graph_rebuilds_so_the_graph_samples_the_edit() {
    let mut doc = Document::new(locomotion_project(), None);
    let mut session = Session::new();
    session.sync(&doc);
    assert!(doc.apply(&move_stride_key(0.1), 1).unwrap());
    assert!(session.sync(&doc));
    assert_eq!(session.last_sync(), SyncKind::Rebuilt, "the Runner plays a graph over the stride");
    let rig = session.entity("Runner").unwrap();
    assert!(session.world().animator(rig).unwrap().current_graph().is_some());
}

/// A fresh empty folder under the system's temporary folder.
fn temp_dir(tag: &str) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!("marrow-shared-assets-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(&p).unwrap();
    p
}

/// Every file of the folder `root` (relative path, bytes), sorted.
fn folder_bytes(root: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                out.push((rel, std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_big_project_opens_with_what_it_shows_and_the_other_clips_arrive_in_the_background() {
    let dir = temp_dir("deferred");
    runner_with_idle().save(&dir).unwrap();
    std::fs::write(dir.join("clips/broken.clip.ron"), "(version: 1, name: ").unwrap();
    // List the broken clip too: a deferred file that is damaged is kept as one, as a whole load
    // keeps it.
    let manifest = std::fs::read_to_string(dir.join("project.ron")).unwrap();
    std::fs::write(
        dir.join("project.ron"),
        manifest.replace(
            "\"clips/idle.clip.ron\",",
            "\"clips/idle.clip.ron\",\n        \"clips/broken.clip.ron\",",
        ),
    )
    .unwrap();
    let before = folder_bytes(&dir);

    // Any size defers: the stride (the scene plays it) is read now, idle and broken later.
    let (mut doc, faults) = Document::open_deferring(&dir, 0).unwrap();
    assert!(faults.is_empty(), "{faults:?}");
    assert!(doc.project().clips.contains_key(CLIP_PATH), "the clip the scene plays is there at once");
    let whole = Document::open_repairing(&dir).unwrap().0;
    let mut arrived = doc.poll_loading();
    while doc.loading().is_some() {
        std::thread::sleep(std::time::Duration::from_millis(5));
        let more = doc.poll_loading();
        arrived.clips += more.clips;
        arrived.damaged.extend(more.damaged);
    }
    assert_eq!(arrived.clips, 1, "idle arrived");
    assert_eq!(arrived.damaged.len(), 1, "broken is damaged: {:?}", arrived.damaged);
    assert_eq!(doc.project(), whole.project(), "the same project as a whole load");
    assert_eq!(
        doc.damaged().map(|d| d.path.clone()).collect::<Vec<_>>(),
        whole.damaged().map(|d| d.path.clone()).collect::<Vec<_>>()
    );
    assert!(!doc.is_dirty(), "arrivals are the opened state, not edits");
    assert_eq!(doc.steps().count(), 0);

    // A save writes the same bytes and removes nothing; an edit waits for loading.
    doc.save().unwrap();
    assert_eq!(folder_bytes(&dir), before);
    let (mut doc, _) = Document::open_deferring(&dir, 0).unwrap();
    assert!(doc.apply(&move_stride_key(0.1), 1).unwrap());
    assert!(doc.loading().is_none(), "the edit waited for the rest");
    assert!(doc.project().clips.contains_key(IDLE));
    doc.undo();
    doc.save().unwrap();
    assert_eq!(folder_bytes(&dir), before, "undo all and save gives the opened bytes");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unsaved_files_are_the_manifest_and_what_changed_since_the_save() {
    let dir = temp_dir("unsaved");
    runner_with_idle().save(&dir).unwrap();
    let (mut doc, _) = Document::open_repairing(&dir).unwrap();
    let paths = |d: &Document| d.unsaved_files().into_iter().map(|(p, _)| p).collect::<Vec<_>>();
    assert_eq!(paths(&doc), ["project.ron"]);
    assert!(doc.apply(&move_stride_key(0.1), 1).unwrap());
    assert_eq!(paths(&doc), ["project.ron", CLIP_PATH]);
    // What a recovery file holds, read back over the folder, is the edited project.
    let recovered = Project::from_files_over_disk(&dir, &doc.unsaved_files()).unwrap();
    assert_eq!(&recovered, doc.project());
    doc.undo();
    assert_eq!(paths(&doc), ["project.ron"], "undone to the saved value");
    doc.redo();
    doc.save().unwrap();
    assert_eq!(paths(&doc), ["project.ron"], "saved");
    let _ = std::fs::remove_dir_all(&dir);
}
