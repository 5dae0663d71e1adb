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
    // Three clips, a graph, a skeleton and a scene.
    let mut doc = Document::new(locomotion_project(), None);
    let before = doc.project().clone();
    assert_eq!(sharing(&before, doc.project()).len(), 6);
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
