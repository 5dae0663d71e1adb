//! What the rewind debugger's recording costs: `cargo bench -p marrow-editor --bench rewind`.
//!
//! The character is the locomotion sample's `Runner` playing its controller graph (a state
//! machine of five states: idle, a walk/run blend space, jump, fall, land), driven at 60 ticks a
//! second by a scripted player: the speed swings between 0 and 2, a jump is triggered every
//! three seconds and the ground comes back a second later. Each frame is recorded as the editor
//! records a previewed graph ([`Recording::begin_frame`] before the ticks, [`Recording::end_frame`]
//! after, with the frame's events).
//!
//! Before the benchmarks, the memory figures are printed (`memory ...`), counted by this
//! binary's allocator: the bytes the recording holds after one and after two minutes of play
//! (it keeps the last 30 seconds, so both are the cost of 30 seconds; doubled, the cost of a
//! minute), against the budget of 1 MB a minute a character.
//!
//! - `rewind/record_frame`: one recorded frame (begin, one tick of the world, end), the world's
//!   tick included (`rewind/plain_frame` is the same tick unrecorded, for the difference).
//! - `rewind/replay_worst`: posing the rig at the recorded frame furthest from its
//!   checkpoint (the replay a drag on the rewind timeline runs).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use criterion::{Criterion, criterion_group, criterion_main};
use marrow_editor::rewind::Recording;
use marrow_engine::graph::ParamValue;
use marrow_engine::project::Library;
use marrow_engine::project::runner::{CONTROLLER_GRAPH, SCENE_PATH, locomotion_project};
use marrow_engine::scene::{Entity, World};

#[path = "support/counting.rs"]
mod counting;

use counting::LIVE;

const TICK: f32 = 1.0 / 60.0;

/// The world of the locomotion sample with its runner playing the controller graph.
fn controller_world() -> (World, Entity) {
    let project = locomotion_project();
    let library = Library::load(&project, Path::new(".")).expect("the sample's library loads");
    let mut world = library.instantiate(&project, SCENE_PATH).expect("the sample's scene loads");
    let rig = world.find("Runner").expect("the sample has a Runner");
    let skeleton = world.animator(rig).unwrap().skeleton().clone();
    let program = library.compile_graph(CONTROLLER_GRAPH, &skeleton).expect("the controller compiles");
    world.animator_mut(rig).unwrap().play_graph(Arc::new(program));
    (world, rig)
}

/// The scripted player's input at `tick`: the speed, and whether the jump trigger is pressed
/// and the character is on the ground.
fn input(tick: u64) -> (f32, bool, bool) {
    let t = tick as f32 * TICK;
    let speed = 1.0 - (t * 0.7).cos();
    let phase = t % 3.0;
    (speed, tick % 180 == 90, !(1.5..2.5).contains(&phase))
}

/// Sets the controller's parameters for `tick`.
fn drive(world: &mut World, rig: Entity, tick: u64) {
    let (speed, jump, grounded) = input(tick);
    let g = world.animator_mut(rig).unwrap().current_graph_mut().unwrap();
    let index =
        |g: &marrow_engine::graph::GraphInstance, name: &str| g.program().parameter_index(name).unwrap();
    let (s, gr, j) = (index(g, "speed"), index(g, "grounded"), index(g, "jump"));
    g.set_parameter(s, ParamValue::Float(speed));
    g.set_parameter(gr, ParamValue::Bool(grounded));
    if jump {
        g.set_parameter(j, ParamValue::Trigger(true));
    }
}

/// One recorded frame of one tick.
fn recorded_frame(world: &mut World, rig: Entity, rec: &mut Recording, tick: u64) {
    drive(world, rig, tick);
    let a = world.animator(rig).unwrap();
    rec.begin_frame(a.current_graph().unwrap(), a.time());
    world.frame(1, TICK);
    let kinds: Vec<_> =
        world.events().iter().filter(|e| e.entity == rig).map(|e| e.event.kind.clone()).collect();
    rec.end_frame(world.animator(rig).unwrap().current_graph().unwrap(), 1, kinds.into_iter());
}

/// Plays `seconds` recorded; the recording and the tick count after.
fn record(world: &mut World, rig: Entity, seconds: f32) -> (Recording, u64) {
    let mut rec = Recording::new(rig, TICK, 1.0);
    let ticks = (seconds / TICK).round() as u64;
    for tick in 0..ticks {
        recorded_frame(world, rig, &mut rec, tick);
    }
    (rec, ticks)
}

fn kib(bytes: usize) -> f64 {
    bytes as f64 / 1024.0
}

/// Prints what the recording holds after one and two minutes of play.
fn print_memory() {
    for minutes in [1.0f32, 2.0] {
        let (mut world, rig) = controller_world();
        let before = LIVE.load(Ordering::Relaxed);
        let (rec, ticks) = record(&mut world, rig, minutes * 60.0);
        // The world's own growth (event buffers) is not the recording's: measured apart.
        let with = LIVE.load(Ordering::Relaxed) - before;
        drop(rec);
        let without = LIVE.load(Ordering::Relaxed) - before;
        let held = with - without;
        eprintln!(
            "memory: rewind recording after {minutes} min ({ticks} ticks, 30 s kept): {:.1} KiB held, \
             {:.1} KiB a minute of recording (budget 1024 KiB)",
            kib(held),
            kib(held) * 2.0
        );
    }
}

fn bench(c: &mut Criterion) {
    print_memory();
    let mut group = c.benchmark_group("rewind");
    {
        let (mut world, rig) = controller_world();
        let (mut rec, mut tick) = record(&mut world, rig, 30.0);
        group.bench_function("record_frame", |b| {
            b.iter(|| {
                recorded_frame(&mut world, rig, &mut rec, tick);
                tick += 1;
            })
        });
    }
    {
        let (mut world, rig) = controller_world();
        let mut tick = 0;
        group.bench_function("plain_frame", |b| {
            b.iter(|| {
                drive(&mut world, rig, tick);
                world.frame(1, TICK);
                tick += 1;
            })
        });
    }
    {
        let (mut world, rig) = controller_world();
        let (rec, _) = record(&mut world, rig, 40.0);
        // The frame just before a checkpoint replays the most ticks.
        let worst = rec
            .frames()
            .iter()
            .filter(|f| rec.replay(f.end).is_some())
            .max_by_key(|f| (f.end + 239) % 240)
            .map(|f| f.end)
            .expect("frames are recorded");
        group.bench_function("replay_worst", |b| {
            b.iter(|| std::hint::black_box(rec.replay(std::hint::black_box(worst))))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
