//! The frame allocates nothing once warmed up, and a scene without sockets makes no bone lookups:
//! a counting global allocator watches frames of a rig with socketed limbs (the runner) and of
//! the same scene with the sockets removed.

use marrow_engine::project::Library;
use marrow_engine::project::runner::{CLIP_PATH, runner_project};
use marrow_engine::scene::World;

mod support;
use support::{Counting, allocations};

#[global_allocator]
static GLOBAL: Counting = Counting;

fn runner_world(sockets: bool) -> World {
    let mut project = runner_project();
    if !sockets {
        for s in project.scenes.values_mut().map(std::sync::Arc::make_mut) {
            for e in &mut s.entities {
                for c in &mut e.children {
                    c.socket = None;
                }
            }
        }
    }
    let lib = Library::load(&project, std::path::Path::new(".")).unwrap();
    let _ = CLIP_PATH;
    lib.instantiate(&project, &project.manifest.scenes[0]).unwrap()
}

/// The runner scene with `copies` runners side by side (each a rig with socketed limbs).
fn crowd_world(copies: usize) -> World {
    let mut project = runner_project();
    for s in project.scenes.values_mut().map(std::sync::Arc::make_mut) {
        let rig = s.entities.iter().find(|e| e.animator.is_some()).cloned().expect("the runner rig");
        for k in 1..copies {
            let mut copy = rig.clone();
            copy.name = format!("{}{k}", rig.name);
            if let Some(t) = &mut copy.transform {
                t.translation.x += 2.0 * k as f32;
            }
            s.entities.push(copy);
        }
    }
    let lib = Library::load(&project, std::path::Path::new(".")).unwrap();
    lib.instantiate(&project, &project.manifest.scenes[0]).unwrap()
}

/// Several rigs, advanced and evaluated on rayon's pool. Called from the one test below: the
/// allocation counter is global, so two tests running at once would count each other's.
///
/// The frame's own work allocates nothing (the pose buffer is split with `split_at_mut`), but a
/// parallel call made from outside rayon's pool goes through its injector queue (crossbeam),
/// which allocates one block per 63 jobs. These frames make at most 3 such calls (two ticks and
/// the evaluation), so the count is bounded by that rate, far below one allocation per frame.
fn several_rigs_allocate_only_in_rayons_injector() {
    let mut w = crowd_world(5);
    assert_eq!(w.rigs().count(), 5);
    allocations_over(&mut w, 120);
    let frames = 600;
    let allocs = allocations_over(&mut w, frames);
    assert!(allocs <= frames * 3 / 63 + 1, "{allocs} allocations over {frames} frames");
    assert!(w.faults().entries().is_empty(), "{:?}", w.faults().entries());
}

fn allocations_over(w: &mut World, frames: usize) -> usize {
    let before = allocations();
    for i in 0..frames {
        w.frame(if i % 7 == 0 { 0 } else { 1 + (i % 2) as u32 }, 1.0 / 60.0);
    }
    allocations() - before
}

#[test]
fn frames_allocate_nothing_once_warmed_up() {
    for sockets in [true, false] {
        let mut w = runner_world(sockets);
        allocations_over(&mut w, 120);
        assert_eq!(allocations_over(&mut w, 600), 0, "sockets: {sockets}");
        assert!(w.faults().entries().is_empty(), "{:?}", w.faults().entries());
        assert_eq!(w.bone_lookups(), if sockets { 4 } else { 0 });
    }
    several_rigs_allocate_only_in_rayons_injector();
}
