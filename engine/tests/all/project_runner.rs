//! The runner sample's behaviour: footstep events counted over single-stepped ticks match the
//! arithmetic at speeds 1.0 and 1.5, stay in step with the legs while the run accelerates, and
//! play only while the runner is grounded.

use std::path::Path;

use glam::Vec3;
use marrow_engine::clip::Marker;
use marrow_engine::math::Transform;
use marrow_engine::project::Library;
use marrow_engine::project::runner::{
    CountingSink, FootstepSink, RunnerBehaviour, STRIDE_PERIOD, THIGH_SWING, runner_project, thigh_angle,
};
use marrow_engine::scene::{Entity, World};

const DT: f32 = 1.0 / 60.0;

fn runner_world() -> (World, Entity) {
    let p = runner_project();
    let lib = Library::load(&p, Path::new(".")).unwrap();
    let w = lib.instantiate(&p, &p.manifest.scenes[0]).unwrap();
    let r = w.find("Runner").unwrap();
    (w, r)
}

/// Footsteps over `ticks` single-stepped ticks at a constant speed.
fn footsteps(speed: f32, ticks: usize) -> usize {
    let (mut w, r) = runner_world();
    let mut b = RunnerBehaviour::new(r, CountingSink::default());
    b.set_speed(&mut w, speed);
    for _ in 0..ticks {
        w.frame(1, DT);
        b.update(&w);
    }
    b.sink.count
}

#[test]
fn footsteps_over_single_stepped_ticks_match_the_arithmetic() {
    // Markers at 0 and T/2 of each lap; the head starts on the first one, which a departure
    // does not announce (the sweep's departure end is open): a travel of d clip seconds sweeps
    // floor(2 d / T) footsteps.
    for (speed, ticks) in [(1.0f32, 170usize), (1.5, 170), (1.0, 610), (1.5, 601)] {
        let travel = ticks as f32 * DT * speed;
        let expected = (2.0 * travel / STRIDE_PERIOD).floor() as usize;
        assert_eq!(footsteps(speed, ticks), expected, "speed {speed}, {ticks} ticks");
    }
    assert_eq!(footsteps(1.0, 170), 5);
    assert_eq!(footsteps(1.5, 170), 8);
}

/// Counts footsteps, checking each comes from a marker where the legs are vertical.
#[derive(Default)]
struct Vertical {
    count: usize,
}

impl FootstepSink for Vertical {
    fn footstep(&mut self, _: Entity, marker: &Marker) {
        assert!(marker.time == 0.0 || marker.time == 0.5 * STRIDE_PERIOD, "{marker:?}");
        assert!(thigh_angle(marker.time).abs() < 1e-6);
        self.count += 1;
    }
}

#[test]
fn footsteps_stay_in_step_with_the_legs_as_the_run_accelerates() {
    let (mut w, r) = runner_world();
    let mut b = RunnerBehaviour::new(r, Vertical::default());
    let ticks = 900;
    let mut travel = 0.0f64;
    let mut max_step = 0.0f32;
    let mut steps_at_vertical = 0;
    for k in 0..ticks {
        let speed = 1.0 + 1.5 * k as f32 / ticks as f32;
        b.set_speed(&mut w, speed);
        w.frame(1, DT);
        travel += (DT * speed) as f64;
        max_step = max_step.max(DT * speed);
        if b.update(&w) > 0 {
            // The leg is vertical within the one tick of swing that swept the marker.
            let q = w.rig_pose(r).unwrap().local[1].rotation;
            let angle = 2.0 * q.x.atan2(q.w);
            let bound = THIGH_SWING * std::f32::consts::TAU * DT * speed / STRIDE_PERIOD;
            assert!(
                angle.abs() <= bound + 1e-4,
                "tick {k}: thigh at {angle} rad at a footstep (bound {bound})"
            );
            let t = w.animator(r).unwrap().time();
            assert!((angle - thigh_angle(t)).abs() < 1e-3, "the pose is the stride at the head's time");
            steps_at_vertical += 1;
        }
    }
    let expected = (2.0 * travel / STRIDE_PERIOD as f64).floor() as usize;
    assert_eq!(b.sink.count, expected);
    assert_eq!(steps_at_vertical, expected, "never two footsteps in one tick at these speeds");
    assert!(max_step < 0.5 * STRIDE_PERIOD);
}

#[test]
fn no_footsteps_while_the_runner_is_airborne() {
    let (mut w, r) = runner_world();
    let mut b = RunnerBehaviour::new(r, CountingSink::default());
    w.set_transform(r, Some(Transform::from_translation(Vec3::new(0.0, 0.6, 0.0)))).unwrap();
    let mut published = 0;
    for _ in 0..120 {
        w.frame(1, DT);
        published += w.events().len();
        b.update(&w);
    }
    assert_eq!(published, 3, "the clip still announces its markers");
    assert_eq!(b.sink.count, 0, "but nothing plays in the air");
    w.set_transform(r, Some(Transform::IDENTITY)).unwrap();
    for _ in 0..60 {
        w.frame(1, DT);
        b.update(&w);
    }
    assert_eq!(b.sink.count, 2, "landed: footsteps again");
}
