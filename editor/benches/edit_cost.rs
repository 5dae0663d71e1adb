//! What an edit costs in a big project: `cargo bench -p marrow-editor --bench edit_cost`.
//!
//! The project is a motion library: the CMU 31-joint rig ([`mocap_skeleton`]) and 200 clips of
//! [`mocap_like_clip`] at 120 Hz for 1,125 frames (36,000 keys each, 7.2 million in all); its
//! scene's one rig plays the first clip, which the Timeline shows.
//!
//! - `edit_cost/frame/drag_one_key_200x36k`: one whole frame of dragging one key of the shown
//!   clip (each frame moves it: an edit, a new revision), end to end on the CPU as the timeline
//!   benchmarks time it (the UI pass with the session's sync and the edit applied to the
//!   document, tessellation, the paint submission on a real wgpu device; see `support/driver.rs`).
//! - `edit_cost/frame/undo_drag_200x36k` and `.../redo_drag_200x36k`: `Document::undo` (or
//!   `redo`) of that drag's step followed by one whole frame (the session following the
//!   revision, the panel drawing the clip as it was).
//! - `edit_cost/open_200x36k`: opening the saved project from disk as the editor does, up to
//!   its first frame (`Document::open_deferring`: the manifest, rig, scene and the clip the scene
//!   plays read, parsed and checked, the clips no scene or graph plays left to load in the
//!   background; the session's first sync and frame: library, world, the shown clip compiled).
//!   Printed beside it, each timed once: when the last background clip arrived, and a load of
//!   every file before the first frame (`Document::open_repairing`).
//!
//! - `edit_cost/reload_clip_200x36k`: the shown clip's file rewritten on disk (alternately two
//!   versions, written untimed) and taken back in, as the editor does when its watcher reports
//!   it: the main thread's time, `Document::take_read_file` (the undo step) and the session
//!   following it (the heads re-bound, the pose recomposed); printed beside it, the read, parse
//!   and check, which the editor runs on a thread of its own.
//! - `edit_cost/watcher_idle_poll`: the folder watcher's poll when nothing changed (what it costs
//!   every frame).
//!
//! Before the benchmarks, two memory figures are printed (`memory ...`), counted by this
//! binary's allocator: the project's own size in memory, and what 100 undo steps of
//! single-key drags (each its own step, spread over ten clips) add to the document.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use egui::vec2;
use marrow_editor::app::DEFER_CLIPS_ABOVE;
use marrow_editor::document::clip_ops::{ClipOp, KeyRef};
use marrow_editor::document::{Document, Op, ReloadOutcome};
use marrow_editor::panels::timeline::model::{KeyId, RowKind};
use marrow_editor::session::Session;
use marrow_engine::clip::Channel;
use marrow_engine::project::reload::{AssetWatcher, read_asset_file};
use marrow_engine::project::{Project, clip_to_string};
use marrow_engine::synthetic::{mocap_like_clip, mocap_skeleton, one_rig_project};

#[path = "support/driver.rs"]
mod driver;

use driver::Driver;

#[path = "support/counting.rs"]
mod counting;

use counting::LIVE;

const FRAMES: usize = 1125;

/// The library's clips: 200 under `cargo bench`; 4 when the benchmark runs once as a test
/// (`cargo test --benches`, which passes no `--bench`), so CI's pass stays quick.
fn clip_count() -> usize {
    if std::env::args().any(|a| a == "--bench") { 200 } else { 4 }
}
const HZ: f32 = 120.0;

fn clip_path(i: usize) -> String {
    format!("clips/take_{i:03}.clip.ron")
}

/// The motion library: 200 clips of 36,000 keys.
fn project() -> Project {
    let sk = mocap_skeleton();
    let paths: Vec<String> = (0..clip_count()).map(clip_path).collect();
    let clips = paths
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut clip = mocap_like_clip(&sk, &format!("take_{i:03}"), FRAMES, HZ, i as u64 + 1);
            clip.frame_rate = HZ;
            (p.as_str(), clip)
        })
        .collect();
    one_rig_project(sk, clips)
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Prints the project's size in memory and what 100 single-key drag steps add to it.
fn print_memory() {
    let before = LIVE.load(Ordering::Relaxed);
    let mut doc = Document::new(project(), None);
    let own = LIVE.load(Ordering::Relaxed) - before;
    let keys: usize = doc.project().clips.values().map(|c| c.clip.key_count()).sum();
    for step in 0..100 {
        let path = clip_path(step % clip_count().min(10));
        let t = (1 + step) as f32 / HZ;
        let op = Op::Clip {
            path,
            op: ClipOp::MoveKeys {
                keys: vec![KeyRef::new("LeftKnee", Channel::Rotation, t)],
                delta: 0.25 / HZ,
            },
        };
        // Each drag its own gesture, so its own step.
        doc.apply(&op, step as u64 + 1).expect("a key moves");
    }
    assert_eq!(doc.steps().count(), 100, "every drag is its own step");
    let with_steps = LIVE.load(Ordering::Relaxed) - before;
    eprintln!(
        "memory: project {:.1} MiB ({} clips, {} keys); with 100 undo steps of single-key drags \
         {:.1} MiB: the steps add {:.1} MiB = {:.2}x the project",
        mib(own),
        doc.project().clips.len(),
        keys,
        mib(with_steps),
        mib(with_steps - own),
        (with_steps - own) as f64 / own as f64
    );
}

fn bench(c: &mut Criterion) {
    print_memory();

    // 1. Dragging one key of the shown clip.
    let first = clip_path(0);
    let t = 250.0 / HZ;
    let bone = 3;
    let mut d = Driver::new(project(), |s| {
        let clip = &s.doc.project().clips[&first];
        assert_eq!(clip.clip.key_count(), 36_000);
        s.panel.selection.extend([KeyId::new(bone, Channel::Rotation, t)]);
    });
    let p = d.key_at(RowKind::Bone(bone), t);
    d.bench_drag(c, "edit_cost/frame/drag_one_key_200x36k", p);
    // Release: the drag is one undo step.
    d.button(p + vec2(60.0, 0.0), false);
    d.frame();
    d.frame();
    assert_eq!(d.state.doc.steps().count(), 1, "the drag is one step");

    // 2. Undo and redo of that drag, each with the frame that follows it.
    let mut undo_redo = |c: &mut Criterion, name: &str, undo: bool| {
        let mut sync = Duration::ZERO;
        let mut n = 0u32;
        c.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    // Put the document where the measured step starts, untimed.
                    if undo {
                        d.state.doc.redo();
                    } else {
                        d.state.doc.undo();
                    }
                    d.frame();
                    let t0 = Instant::now();
                    if undo {
                        d.state.doc.undo();
                    } else {
                        d.state.doc.redo();
                    }
                    let t1 = Instant::now();
                    d.state.session.sync(&d.state.doc);
                    sync += t1.elapsed();
                    n += 1;
                    total += (t1 - t0) + d.frame().total();
                }
                total
            })
        });
        eprintln!(
            "stages {name}: the {} and the session's sync {:.3} ms (mean of {n})",
            if undo { "undo" } else { "redo" },
            sync.as_secs_f64() * 1e3 / n.max(1) as f64
        );
    };
    undo_redo(c, "edit_cost/frame/undo_drag_200x36k", true);
    undo_redo(c, "edit_cost/frame/redo_drag_200x36k", false);
    drop(d);

    // 3. Opening the project from disk, as the editor does: what the scene shows is read before
    //    the first frame; the clips no scene or graph plays arrive in the background.
    let dir = std::env::temp_dir().join(format!("marrow-edit-cost-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    Document::new(project(), None).save_as(&dir).expect("the project saves");
    let bytes: u64 =
        std::fs::read_dir(dir.join("clips")).unwrap().map(|e| e.unwrap().metadata().unwrap().len()).sum();
    let open = || {
        let (doc, faults) = Document::open_deferring(&dir, DEFER_CLIPS_ABOVE).expect("the project opens");
        assert!(faults.is_empty());
        let mut session = Session::new();
        session.sync(&doc);
        session.update(0.0);
        (doc, session)
    };
    // The whole library: until the last clip arrived, and a load of everything before the
    // first frame (what opening cost before the deferral), each timed once.
    let t0 = Instant::now();
    let (mut doc, _) = open();
    let shown = t0.elapsed();
    doc.finish_loading();
    let all = t0.elapsed();
    assert_eq!(doc.project().clips.len(), clip_count());
    let t0 = Instant::now();
    let (whole, _) = Document::open_repairing(&dir).expect("the project opens");
    let blocking = t0.elapsed();
    drop(whole);
    eprintln!(
        "stages edit_cost/open_200x36k: {:.0} MiB of clip files; first frame after {:.3} s, every clip in after \
         {:.2} s; loading everything before the first frame {:.2} s",
        mib(bytes as usize),
        shown.as_secs_f64(),
        all.as_secs_f64(),
        blocking.as_secs_f64()
    );
    let mut group = c.benchmark_group("edit_cost");
    group.sample_size(10).measurement_time(Duration::from_secs(10));
    group.bench_function("open_200x36k", |b| b.iter(open));
    group.finish();

    // 4. A clip file rewritten outside the editor (a re-export, a git pull): the reload's
    //    main-thread time, from reading the file to the session following it (the heads playing
    //    it re-bound, the pose recomposed). The shown clip alternates between two versions on
    //    disk, written untimed.
    let (mut doc, faults) = Document::open_repairing(&dir).expect("the project opens");
    assert!(faults.is_empty());
    let mut session = Session::new();
    session.sync(&doc);
    session.update(0.0);
    let shown = clip_path(0);
    let original = doc.project().clips[&shown].clone();
    let mut lifted = (*original).clone();
    let knee = lifted.bones.iter().position(|b| b == "LeftKnee").unwrap();
    let track = std::sync::Arc::make_mut(&mut lifted.clip).channels_mut()[knee].rotation.as_mut().unwrap();
    track.insert(0.5 / HZ, glam::Quat::from_rotation_x(0.4));
    let texts = [clip_to_string(&lifted), clip_to_string(&original)];
    let mut k = 0usize;
    let (mut read_time, mut reads) = (Duration::ZERO, 0u32);
    c.bench_function("edit_cost/reload_clip_200x36k", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                std::fs::write(dir.join(&shown), &texts[k % 2]).unwrap();
                k += 1;
                // Off the main thread in the editor: the file read, parsed and checked.
                let t0 = Instant::now();
                let read = read_asset_file(&dir, &shown);
                read_time += t0.elapsed();
                reads += 1;
                let t0 = Instant::now();
                let outcome = doc.take_read_file(&shown, read);
                session.sync(&doc);
                session.update(0.0);
                total += t0.elapsed();
                assert_eq!(outcome, ReloadOutcome::Reloaded);
            }
            total
        })
    });
    eprintln!(
        "stages edit_cost/reload_clip_200x36k: the read, parse and check on the reading thread {:.1} ms \
         (mean of {reads}); the time above is the main thread's (taking it and the session following)",
        read_time.as_secs_f64() * 1e3 / f64::from(reads.max(1))
    );
    // What watching the folder costs a frame when nothing changed.
    let watcher = AssetWatcher::new(&dir, Duration::from_millis(200)).expect("the folder is watched");
    std::thread::sleep(Duration::from_millis(400));
    let _ = watcher.changed();
    c.bench_function("edit_cost/watcher_idle_poll", |b| b.iter(|| watcher.changed()));
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(4)).warm_up_time(Duration::from_secs(1));
    targets = bench
}
criterion_main!(benches);
