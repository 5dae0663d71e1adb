//! The Animator: crossfade table (one test per row), play-on-start, loop/clamp, and marker
//! events counted per frame by a harness that single-steps the clock.

use std::sync::Arc;

use glam::{Mat4, Vec3};
use marrow_engine::animator::{Animator, AnimatorSettings};
use marrow_engine::clip::Clip;
use marrow_engine::clock::Clock;
use marrow_engine::math::Transform;
use marrow_engine::pose::PoseBuffer;
use marrow_engine::skeleton::{NO_PARENT, Skeleton};
use marrow_engine::track::{Interpolation, Track};

fn rig() -> Arc<Skeleton> {
    Arc::new(Skeleton::from_bind_pose("rig", vec![("root".into(), NO_PARENT, Transform::IDENTITY)]).unwrap())
}

/// A clip whose root translation along `axis` equals the clip time (0..duration), so the pose
/// tells the time.
fn ramp(sk: &Skeleton, name: &str, duration: f32, axis: Vec3, looping: bool) -> Arc<Clip> {
    let mut c = Clip::new(name, sk);
    c.channels_mut()[0].translation = Some(
        Track::from_keys(Interpolation::Linear, vec![0.0, duration], vec![Vec3::ZERO, axis * duration])
            .unwrap(),
    );
    c.looping = looping;
    Arc::new(c)
}

fn animator(sk: &Arc<Skeleton>, clip: Option<Arc<Clip>>, speed: f32) -> Animator {
    Animator::new(sk.clone(), AnimatorSettings { clip, speed, play_on_start: true, ..Default::default() })
}

fn root_translation(a: &mut Animator) -> Vec3 {
    let mut buf = PoseBuffer::new();
    let slot = buf.add_rig(1);
    a.evaluate(buf.rig_mut(slot).unwrap()).unwrap();
    buf.rig(slot).unwrap().local[0].translation
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() < 1e-5
}

// ---------------------------------------------------------------------------------------------
// Crossfade table

#[test]
fn crossfade_to_the_clip_already_playing_leaves_it_alone() {
    let sk = rig();
    let walk = ramp(&sk, "walk", 1.0, Vec3::X, true);
    let mut a = animator(&sk, Some(walk.clone()), 1.0);
    a.advance(0.3);
    a.cross_fade_to(walk.clone(), 0.5, true);
    assert!(close(a.time(), 0.3));
    assert!(a.is_playing());
    assert!(a.outgoing_clip().is_none());
    assert_eq!(a.fade_weight(), 1.0);
}

#[test]
fn crossfade_to_the_same_clip_stopped_plays_it_again_from_its_start() {
    let sk = rig();
    let shot = ramp(&sk, "shot", 1.0, Vec3::X, false);
    let mut a = animator(&sk, Some(shot.clone()), 1.0);
    a.advance(1.5);
    assert!(!a.is_playing());
    assert_eq!(a.time(), 1.0);
    a.cross_fade_to(shot.clone(), 0.5, false);
    assert_eq!(a.time(), 0.0);
    assert!(a.is_playing());
    assert!(a.outgoing_clip().is_none());
    a.advance(0.25);
    assert!(close(root_translation(&mut a).x, 0.25));
}

#[test]
fn crossfade_from_a_stopped_clip_blends_out_of_the_held_frame_which_advances() {
    let sk = rig();
    let walk = ramp(&sk, "walk", 1.0, Vec3::X, true);
    let run = ramp(&sk, "run", 1.0, Vec3::Y, true);
    let mut a = animator(&sk, Some(walk.clone()), 1.0);
    a.advance(0.3);
    a.stop();
    a.advance(0.2); // held: time stays
    assert!(close(a.time(), 0.3));
    a.cross_fade_to(run.clone(), 0.5, true);
    assert!(Arc::ptr_eq(a.outgoing_clip().unwrap(), &walk));
    assert!(close(a.outgoing_time().unwrap(), 0.3));
    a.advance(0.1);
    // The held frame advances as it fades.
    assert!(close(a.outgoing_time().unwrap(), 0.4));
    assert!(close(a.fade_weight(), 0.2));
    let t = root_translation(&mut a);
    // Local blend: walk at 0.4 (x) weighted 0.8, run at 0.1 (y) weighted 0.2.
    assert!(close(t.x, 0.4 * 0.8) && close(t.y, 0.1 * 0.2), "{t}");
}

#[test]
fn crossfade_with_no_current_clip_or_zero_seconds_is_a_cut() {
    let sk = rig();
    let walk = ramp(&sk, "walk", 1.0, Vec3::X, true);
    let run = ramp(&sk, "run", 1.0, Vec3::Y, true);
    let mut empty = animator(&sk, None, 1.0);
    empty.cross_fade_to(run.clone(), 0.5, true);
    assert!(empty.outgoing_clip().is_none());
    assert_eq!(empty.fade_weight(), 1.0);
    assert!(Arc::ptr_eq(empty.current_clip().unwrap(), &run));

    let mut a = animator(&sk, Some(walk), 1.0);
    a.advance(0.3);
    a.cross_fade_to(run.clone(), 0.0, true);
    assert!(a.outgoing_clip().is_none());
    assert_eq!(a.time(), 0.0);
    a.cross_fade_to(ramp(&sk, "jump", 1.0, Vec3::Z, false), -1.0, false);
    assert!(a.outgoing_clip().is_none());
    // A fade that could never finish (infinite or NaN seconds) is a cut too, not a stuck blend.
    for seconds in [f32::INFINITY, f32::NAN] {
        a.cross_fade_to(ramp(&sk, "land", 1.0, Vec3::X, false), seconds, false);
        assert!(a.outgoing_clip().is_none(), "{seconds}");
        assert_eq!(a.fade_weight(), 1.0);
    }
}

#[test]
fn crossfade_again_mid_fade_drops_the_outgoing_clip_and_fades_from_the_incoming_one() {
    let sk = rig();
    let walk = ramp(&sk, "walk", 1.0, Vec3::X, true);
    let run = ramp(&sk, "run", 1.0, Vec3::Y, true);
    let jump = ramp(&sk, "jump", 1.0, Vec3::Z, true);
    let mut a = animator(&sk, Some(walk.clone()), 1.0);
    a.advance(0.1);
    a.cross_fade_to(run.clone(), 1.0, true);
    a.advance(0.3);
    a.cross_fade_to(jump.clone(), 0.5, true);
    assert!(Arc::ptr_eq(a.outgoing_clip().unwrap(), &run));
    assert!(close(a.outgoing_time().unwrap(), 0.3));
    assert_eq!(a.fade_weight(), 0.0);
    // Walk no longer contributes: the pose has no X.
    a.advance(0.25);
    let t = root_translation(&mut a);
    assert_eq!(t.x, 0.0);
    assert!(close(t.y, 0.55 * 0.5) && close(t.z, 0.25 * 0.5), "{t}");
}

#[test]
fn the_outgoing_clip_keeps_its_own_head_and_looping() {
    let sk = rig();
    let death = ramp(&sk, "death", 1.0, Vec3::X, false);
    let walk = ramp(&sk, "walk", 1.0, Vec3::Y, true);
    let mut a = animator(&sk, Some(death), 1.0);
    a.advance(0.9);
    a.cross_fade_to(walk, 0.5, true);
    a.advance(0.3);
    // The one-shot clamps at its last frame while it fades out.
    assert_eq!(a.outgoing_time(), Some(1.0));
    assert!(close(a.time(), 0.3));
}

#[test]
fn a_one_shot_shorter_than_its_fade_still_finishes_the_fade() {
    let sk = rig();
    let walk = ramp(&sk, "walk", 1.0, Vec3::X, true);
    let hit = ramp(&sk, "hit", 0.2, Vec3::Y, false);
    let mut a = animator(&sk, Some(walk), 1.0);
    a.advance(0.1);
    a.cross_fade_to(hit, 0.5, false);
    a.advance(0.3);
    assert!(!a.is_playing(), "the one-shot ended");
    assert!(close(a.fade_weight(), 0.6));
    a.advance(0.1);
    assert!(close(a.fade_weight(), 0.8));
    a.advance(0.1);
    assert_eq!(a.fade_weight(), 1.0);
    assert!(a.outgoing_clip().is_none(), "the fade finished");
    let t = root_translation(&mut a);
    assert_eq!(t, Vec3::new(0.0, 0.2, 0.0));
}

#[test]
fn the_fade_countdown_runs_in_unscaled_simulation_seconds_and_only_when_time_passes() {
    let sk = rig();
    let walk = ramp(&sk, "walk", 1.0, Vec3::X, true);
    let run = ramp(&sk, "run", 1.0, Vec3::Y, true);
    let mut a = animator(&sk, Some(walk), 2.0);
    a.advance(0.1);
    a.cross_fade_to(run, 0.5, true);
    a.advance(0.0);
    a.advance(0.0);
    assert_eq!(a.fade_weight(), 0.0, "paused frames do not count down");
    a.advance(0.25);
    assert!(close(a.fade_weight(), 0.5), "speed 2 does not speed up the fade");
    assert!(close(a.time(), 0.5), "but it does speed up the clip");
}

// ---------------------------------------------------------------------------------------------
// Playback

#[test]
fn play_on_start_turns_into_playing_on_the_first_step_with_time() {
    let sk = rig();
    let walk = ramp(&sk, "walk", 1.0, Vec3::X, true);
    let mut a = animator(&sk, Some(walk.clone()), 1.0);
    assert!(!a.is_playing());
    a.advance(0.0);
    assert!(!a.is_playing());
    a.advance(0.1);
    assert!(a.is_playing());
    // Once: a stop stays a stop.
    a.stop();
    a.advance(0.1);
    assert!(!a.is_playing());
    let mut off = Animator::new(
        sk.clone(),
        AnimatorSettings { clip: Some(walk), speed: 1.0, play_on_start: false, ..Default::default() },
    );
    off.advance(0.1);
    assert!(!off.is_playing());
}

#[test]
fn loops_wrap_one_shots_clamp_and_stop_and_negative_speed_plays_backwards() {
    let sk = rig();
    let walk = ramp(&sk, "walk", 1.0, Vec3::X, true);
    let mut a = animator(&sk, Some(walk.clone()), 1.0);
    a.advance(0.75);
    a.advance(0.5);
    assert!(close(a.time(), 0.25));
    assert!(a.is_playing());
    let shot = ramp(&sk, "shot", 1.0, Vec3::X, false);
    let mut b = animator(&sk, Some(shot.clone()), 1.0);
    b.advance(0.75);
    b.advance(0.5);
    assert_eq!(b.time(), 1.0);
    assert!(!b.is_playing());
    let mut back = animator(&sk, Some(shot), -1.0);
    assert_eq!(back.time(), 1.0, "a backwards head starts at the end");
    back.advance(0.25);
    assert!(close(back.time(), 0.75));
    assert!(close(root_translation(&mut back).x, 0.75));
}

#[test]
fn a_clip_for_another_rig_leaves_the_bind_pose_standing() {
    let sk = rig();
    let other = Arc::new(
        Skeleton::from_bind_pose("other", vec![("root".into(), NO_PARENT, Transform::IDENTITY)]).unwrap(),
    );
    let foreign = ramp(&other, "foreign", 1.0, Vec3::X, true);
    let mut a = animator(&sk, Some(foreign), 1.0);
    assert!(a.current_fault().is_some());
    a.advance(0.5);
    let mut buf = PoseBuffer::new();
    let slot = buf.add_rig(1);
    a.evaluate(buf.rig_mut(slot).unwrap()).unwrap();
    assert_eq!(buf.rig(slot).unwrap().model[0], Mat4::IDENTITY);
}

// ---------------------------------------------------------------------------------------------
// Markers, counted per frame with a single-stepped clock

struct Harness {
    clock: Clock,
    animator: Animator,
    last_to: Option<f32>,
}

impl Harness {
    fn new(animator: Animator, hz: f64) -> Self {
        let mut clock = Clock::new(hz);
        clock.set_paused(true);
        Self { clock, animator, last_to: None }
    }

    /// One frame: single-steps the clock; each tick starts a simulation stage (delivering the
    /// events queued by the previous one) and advances the animator. Returns the names delivered
    /// during this frame.
    fn frame(&mut self) -> Vec<String> {
        self.clock.request_step();
        let ticks = self.clock.advance(0.0);
        assert_eq!(ticks, 1);
        let mut names = Vec::new();
        for _ in 0..ticks {
            names.extend(self.animator.deliver_events().iter().map(|e| e.name().to_owned()));
            let step = self.animator.advance(self.clock.tick_seconds() as f32);
            if let Some(prev) = self.last_to {
                assert_eq!(step.from.to_bits(), prev.to_bits(), "from is bit-for-bit the previous to");
            }
            assert_eq!(step.to.to_bits(), self.animator.time().to_bits());
            self.last_to = Some(step.to);
        }
        names
    }

    /// Events per frame over `frames` frames, plus the final delivery.
    fn run(&mut self, frames: usize) -> Vec<usize> {
        let mut counts: Vec<usize> = (0..frames).map(|_| self.frame().len()).collect();
        counts.push(self.animator.deliver_events().len());
        counts
    }
}

fn marker_clip(sk: &Skeleton, duration: f32, markers: &[(&str, f32)], looping: bool) -> Arc<Clip> {
    let mut c = Clip::new("c", sk);
    c.length = duration;
    c.looping = looping;
    for (n, t) in markers {
        c.add_marker(*n, *t);
    }
    Arc::new(c)
}

#[test]
fn landing_exactly_on_a_marker_announces_it_once_and_moving_off_does_not() {
    let sk = rig();
    let clip = marker_clip(&sk, 1.0, &[("hit", 0.5)], false);
    let mut h = Harness::new(animator(&sk, Some(clip), 1.0), 4.0);
    // Ticks land on 0.25, 0.5 (exactly on the marker), 0.75, 1.0. Each frame delivers what
    // the previous frame's tick queued.
    assert_eq!(h.run(4), vec![0, 0, 1, 0, 0]);
}

#[test]
fn a_paused_frame_and_a_seek_announce_nothing() {
    let sk = rig();
    let clip = marker_clip(&sk, 1.0, &[("hit", 0.5)], false);
    let mut a = animator(&sk, Some(clip), 1.0);
    a.advance(0.25);
    a.seek(0.75);
    a.advance(0.0);
    assert!(a.deliver_events().is_empty());
    a.seek(0.25);
    a.stop();
    a.advance(0.5);
    assert!(a.deliver_events().is_empty());
}

#[test]
fn wrapping_on_a_loop_announces_the_marker_on_the_lap_it_wraps_into() {
    let sk = rig();
    let clip = marker_clip(&sk, 1.0, &[("start", 0.0), ("mid", 0.5)], true);
    let mut h = Harness::new(animator(&sk, Some(clip), 1.0), 4.0);
    // 8 ticks = 2 laps: mid at ticks 2 and 6, start (0 == 1.0 on the loop) at ticks 4 and 8.
    assert_eq!(h.run(8), vec![0, 0, 1, 0, 1, 0, 1, 0, 1]);
    let events: Vec<(String, i32)> = {
        let sk = rig();
        let clip = marker_clip(&sk, 1.0, &[("start", 0.0)], true);
        let mut a = animator(&sk, Some(clip), 1.0);
        a.advance(0.9);
        a.advance(0.2);
        a.deliver_events().iter().map(|e| (e.name().to_owned(), e.lap)).collect()
    };
    assert_eq!(events, vec![("start".to_owned(), 1)]);
}

#[test]
fn negative_speed_over_a_marker_announces_it_once() {
    let sk = rig();
    let clip = marker_clip(&sk, 1.0, &[("hit", 0.4)], true);
    let mut h = Harness::new(animator(&sk, Some(clip), -1.0), 10.0);
    // From 1.0 backwards in 0.1 steps: 0.9, 0.8, ..., crossing 0.4 once in the first lap.
    let counts = h.run(9);
    assert_eq!(counts.iter().sum::<usize>(), 1, "{counts:?}");
}

#[test]
fn a_two_second_step_of_a_half_second_clip_announces_each_marker_once() {
    let sk = rig();
    let clip = marker_clip(&sk, 0.5, &[("left", 0.1), ("right", 0.35)], true);
    let mut h = Harness::new(animator(&sk, Some(clip), 1.0), 0.5);
    h.frame();
    let names: Vec<String> = h.animator.deliver_events().iter().map(|e| e.name().to_owned()).collect();
    assert_eq!(names, ["left", "right"]);
}

#[test]
fn markers_of_the_dominant_clip_speak_during_a_crossfade() {
    let sk = rig();
    let a_clip = marker_clip(&sk, 1.0, &[("a", 0.05), ("a", 0.15)], true);
    let b_clip = marker_clip(&sk, 1.0, &[("b", 0.05), ("b", 0.15), ("b", 0.45)], true);
    let mut a = animator(&sk, Some(a_clip), 1.0);
    a.advance(0.0);
    a.cross_fade_to(b_clip, 0.35, true);
    // Incoming weight after each 0.1 tick: 0.29, 0.57, 0.86, 1, 1. The outgoing clip speaks on
    // the first tick only (its 0.05), the incoming one from the second (its 0.15, then 0.45);
    // the markers each clip crosses while the other dominates stay silent.
    let mut heard = Vec::new();
    for _ in 0..5 {
        heard.extend(a.deliver_events().iter().map(|e| e.name().to_owned()));
        a.advance(0.1);
    }
    heard.extend(a.deliver_events().iter().map(|e| e.name().to_owned()));
    assert_eq!(heard, ["a", "b", "b"]);
}

#[test]
fn a_scrub_while_paused_shows_the_pose_it_names() {
    let sk = rig();
    let walk = ramp(&sk, "walk", 1.0, Vec3::X, true);
    let mut a = animator(&sk, Some(walk), 1.0);
    let mut clock = Clock::new(60.0);
    a.advance(clock.tick_seconds() as f32);
    clock.set_paused(true);
    for scrub in [0.7f32, 0.2, 0.55] {
        a.seek(scrub);
        // A paused frame: no tick, so a zero-length step from where the head is.
        assert_eq!(clock.advance(1.0 / 60.0), 0);
        let step = a.advance(0.0);
        assert_eq!((step.from, step.to, step.travel), (scrub, scrub, 0.0));
        assert!(close(root_translation(&mut a).x, scrub));
    }
    assert!(a.deliver_events().is_empty());
}
