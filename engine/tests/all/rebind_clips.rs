//! `World::rebind_clips` follows an edit of clips without a rebuild: the heads playing them take
//! the new clips and keep their session; where a re-bind cannot stand for a rebuild it is refused
//! and the world is left as it was.

use std::path::Path;
use std::sync::Arc;

use marrow_engine::project::runner::{CLIP_PATH, locomotion_project, runner_project};
use marrow_engine::project::{Library, Project};
use marrow_engine::scene::World;

fn world(p: &Project) -> (Library, World) {
    let lib = Library::load(p, Path::new(".")).unwrap();
    let w = lib.instantiate(p, &p.manifest.scenes[0]).unwrap();
    (lib, w)
}

/// `p` with the stride's first key moved (a new clip `Arc`), and the library following it.
fn edited(p: &Project, lib: &mut Library) -> Project {
    let mut next = p.clone();
    let asset = Arc::make_mut(next.clips.get_mut(CLIP_PATH).unwrap());
    let clip = Arc::make_mut(&mut asset.clip);
    clip.length += 0.5;
    lib.replace_clips(&next, &[CLIP_PATH.to_owned()]);
    next
}

#[test]
fn refusals_name_why_and_change_nothing() {
    // A rig that plays a graph over the clip: its compiled program samples the old clip.
    let p = locomotion_project();
    let (mut lib, mut w) = world(&p);
    let rig = w.find("Runner").unwrap();
    let before = w.animator(rig).unwrap().settings().clip.clone();
    edited(&p, &mut lib);
    let why = w.rebind_clips(&[CLIP_PATH.to_owned()], &lib).unwrap_err();
    assert!(why.contains("graph"), "{why}");
    let after = w.animator(rig).unwrap().settings().clip.clone();
    assert_eq!(before.map(|c| Arc::as_ptr(&c)), after.map(|c| Arc::as_ptr(&c)), "nothing was re-bound");

    // A clip that no longer resolves (its file left the project).
    let p = runner_project();
    let (mut lib, mut w) = world(&p);
    let mut gone = p.clone();
    gone.clips.remove(CLIP_PATH);
    lib.replace_clips(&gone, &[CLIP_PATH.to_owned()]);
    let why = w.rebind_clips(&[CLIP_PATH.to_owned()], &lib).unwrap_err();
    assert!(why.contains(CLIP_PATH), "{why}");
}

#[test]
fn a_rebound_head_plays_the_new_clip_from_the_same_time() {
    let p = runner_project();
    let (mut lib, mut w) = world(&p);
    let rig = w.find("Runner").unwrap();
    w.animator_mut(rig).unwrap().play();
    w.frame(12, 1.0 / 30.0);
    let t = w.animator(rig).unwrap().time();
    assert!(t > 0.3, "{t}");
    let next = edited(&p, &mut lib);
    assert_eq!(w.rebind_clips(&[CLIP_PATH.to_owned()], &lib), Ok(1));
    let a = w.animator(rig).unwrap();
    assert!(Arc::ptr_eq(a.current_clip().unwrap(), &next.clips[CLIP_PATH].clip));
    assert!(Arc::ptr_eq(a.settings().clip.as_ref().unwrap(), &next.clips[CLIP_PATH].clip));
    assert_eq!(a.time(), t);
    assert!(a.is_playing(), "it keeps playing");
    assert_eq!(a.current_duration(), next.clips[CLIP_PATH].clip.duration());
    // The world saves the clip by its reference still.
    let desc = w.to_desc();
    let runner = desc.entities.iter().find(|e| e.name == "Runner").unwrap();
    assert_eq!(runner.animator.as_ref().unwrap().clip.as_deref(), Some(CLIP_PATH));
    // A clip no rig plays is re-bound nowhere.
    assert_eq!(w.rebind_clips(&["clips/other.clip.ron".to_owned()], &lib), Ok(0));
}
