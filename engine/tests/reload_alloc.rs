//! A game's live reload of a clip: the runner sample runs from its folder, an `AssetWatcher`
//! reports the clip file rewritten beside it, and `Project::reload_file`, `Library::replace_clips`
//! and `World::rebind_clips` put the new clip under the head playing it: the head keeps its time,
//! the next frame is the new clip's pose (bit for bit a fresh world's at that time), and the
//! frames after allocate nothing. A counting allocator watches, so this is a binary of its own.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use marrow_engine::project::reload::{AssetKind, AssetWatcher, Reloaded};
use marrow_engine::project::runner::{CLIP_PATH, runner_project};
use marrow_engine::project::{Library, Project, clip_to_string};
use marrow_engine::scene::World;

mod support;
use support::{Counting, allocations};

#[global_allocator]
static GLOBAL: Counting = Counting;

const DT: f32 = 1.0 / 60.0;

fn temp_project() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("marrow-reload-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    runner_project().save(&dir).unwrap();
    dir
}

fn world_of(project: &Project, root: &Path) -> (Library, World) {
    let library = Library::load(project, root).unwrap();
    let world = library.instantiate(project, &project.manifest.scenes[0]).unwrap();
    (library, world)
}

#[test]
fn a_watched_clip_reloads_under_its_head_at_the_same_time_and_frames_after_allocate_nothing() {
    let root = temp_project();
    let mut project = Project::load(&root).unwrap();
    let (mut library, mut world) = world_of(&project, &root);
    let runner = world.find("Runner").unwrap();
    let watcher = AssetWatcher::new(&root, Duration::from_millis(50)).unwrap();
    for _ in 0..37 {
        world.frame(1, DT);
    }
    let time = world.animator(runner).unwrap().time();
    assert!(time > 0.5, "the run is under way ({time})");
    let before = world.rig_pose(runner).unwrap().local.to_vec();

    // Someone re-exports the stride: the hips ride 0.3 higher.
    let mut clip = (*project.clips[CLIP_PATH]).clone();
    let c = Arc::make_mut(&mut clip.clip);
    let hips = c.channels_mut()[0].translation.as_mut().unwrap();
    for k in 0..hips.len() {
        let (t, v) = hips.remove(k).unwrap();
        assert_eq!(hips.insert(t, v + glam::Vec3::Y * 0.3), k);
    }
    std::fs::write(root.join(CLIP_PATH), clip_to_string(&clip)).unwrap();

    let changed = watcher.wait_changed(Duration::from_secs(10));
    assert_eq!(changed, [CLIP_PATH], "the watcher names the clip file");
    assert_eq!(project.reload_file(&root, CLIP_PATH).unwrap(), Reloaded::Replaced(AssetKind::Clip));
    assert_eq!(project.reload_file(&root, CLIP_PATH).unwrap(), Reloaded::Unchanged, "read once");
    library.replace_clips(&project, &[CLIP_PATH.to_owned()]);
    world.rebind_clips(&[CLIP_PATH.to_owned()], &library).unwrap();
    assert_eq!(world.animator(runner).unwrap().time(), time, "the head keeps its time");

    world.frame(1, DT);
    let after = world.rig_pose(runner).unwrap().local.to_vec();
    // A fresh world of the reloaded project, its head put at the same time.
    let (_, mut fresh) = world_of(&project, &root);
    let r = fresh.find("Runner").unwrap();
    fresh.frame(1, DT);
    fresh.animator_mut(r).unwrap().seek(time);
    fresh.frame(1, DT);
    assert_eq!(after, fresh.rig_pose(r).unwrap().local, "the new clip's pose, bit for bit");
    assert!((after[0].translation.y - before[0].translation.y - 0.3).abs() < 0.05, "the hips ride higher");

    // The watcher's own threads are the host's; the world's frames are what is counted. The
    // watcher is dropped and its threads given time to end (until nothing allocates for 100 ms).
    drop(watcher);
    let quiet = std::time::Instant::now();
    loop {
        let a = allocations();
        std::thread::sleep(Duration::from_millis(100));
        if allocations() == a || quiet.elapsed() > Duration::from_secs(5) {
            break;
        }
    }
    for _ in 0..60 {
        world.frame(1, DT);
    }
    let start = allocations();
    for i in 0..600 {
        world.frame(if i % 7 == 0 { 0 } else { 1 }, DT);
    }
    assert_eq!(allocations() - start, 0, "frames after the reload allocate nothing");
    let _ = std::fs::remove_dir_all(&root);
}
