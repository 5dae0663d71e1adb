//! Root motion: laps compose without drift, the root plays in place while the character moves
//! exactly as authored, deltas blend with the pose weights (crossfades, Blend2, blend spaces,
//! state machine transitions), seeks place the character, bad settings and NaN keys move nothing,
//! and the setting round trips through scene files by bone name.

use std::collections::HashMap;
use std::f32::consts::PI;
use std::sync::Arc;

use crate::support::RigBuffers;

use glam::{DVec3, Quat, Vec3};
use marrow_engine::animator::{Animator, AnimatorSettings};
use marrow_engine::clip::Clip;
use marrow_engine::graph::machine::{self, State, StateMachine, StateSource, Transition};
use marrow_engine::graph::*;
use marrow_engine::math::Transform;
use marrow_engine::playback::PlaybackStep;
use marrow_engine::root_motion::{RootDelta, RootMotion, clip_delta, motion_frame};
use marrow_engine::skeleton::{NO_PARENT, Skeleton};
use marrow_engine::track::{Interpolation, Track};

type Lib = HashMap<String, Arc<Clip>>;

const DT: f32 = 1.0 / 60.0;

/// root (top-level, at the origin), hips above it, a leg below the hips.
fn rig() -> Arc<Skeleton> {
    let t = |x: f32, y: f32, z: f32| Transform { translation: Vec3::new(x, y, z), ..Transform::IDENTITY };
    Arc::new(
        Skeleton::from_bind_pose(
            "walker",
            vec![
                ("root".into(), NO_PARENT, Transform::IDENTITY),
                ("hips".into(), 0, t(0.0, 1.0, 0.0)),
                ("leg".into(), 1, t(0.1, -0.5, 0.0)),
            ],
        )
        .unwrap(),
    )
}

/// A looping walk of `duration` seconds: the root goes `stride` metres along its heading with a
/// sideways sway and a bob, and turns by `turn` radians over the lap; the leg swings.
fn walk(sk: &Skeleton, name: &str, duration: f32, stride: f32, turn: f32) -> Clip {
    let n = 24;
    let times: Vec<f32> = (0..=n).map(|i| duration * i as f32 / n as f32).collect();
    let u = |t: f32| t / duration;
    let pos = times
        .iter()
        .map(|&t| {
            let s = (2.0 * PI * u(t)).sin();
            // Along a gentle arc: the heading turns linearly, the position follows it.
            let yaw = turn * u(t);
            let along = stride * u(t);
            let (sx, cz) = if turn.abs() > 1e-6 {
                let r = stride / turn;
                (r * (1.0 - yaw.cos()), r * yaw.sin())
            } else {
                (0.0, along)
            };
            Vec3::new(sx + 0.05 * s, 0.03 * (4.0 * PI * u(t)).sin(), cz)
        })
        .collect();
    let rot =
        times.iter().map(|&t| Quat::from_rotation_y(turn * u(t)) * Quat::from_rotation_z(0.02)).collect();
    let leg = times.iter().map(|&t| Quat::from_rotation_x(0.6 * (2.0 * PI * u(t)).sin())).collect();
    let mut c = Clip::new(name, sk);
    c.looping = true;
    let ch = c.channels_mut();
    ch[0].translation = Some(Track::from_keys(Interpolation::Linear, times.clone(), pos).unwrap());
    ch[0].rotation = Some(Track::from_keys(Interpolation::Linear, times.clone(), rot).unwrap());
    ch[2].rotation = Some(Track::from_keys(Interpolation::Linear, times, leg).unwrap());
    c
}

fn animator(sk: &Arc<Skeleton>, clip: Clip, root: Option<RootMotion>) -> Animator {
    let settings =
        AnimatorSettings { clip: Some(Arc::new(clip)), root_motion: root, ..AnimatorSettings::default() };
    Animator::new(sk.clone(), settings)
}

/// Where the character is: its accumulated motion as an `f64` position and yaw.
fn at(a: &Animator) -> (DVec3, f64) {
    (a.root_motion().translation, a.root_motion().yaw)
}

/// `lap` composed `n` times, in `f64`.
fn laps_f64(lap: RootDelta, n: usize) -> (DVec3, f64) {
    let (mut p, mut yaw) = (DVec3::ZERO, 0.0f64);
    for _ in 0..n {
        p += glam::DQuat::from_rotation_y(yaw) * lap.translation.as_dvec3();
        yaw += f64::from(lap.yaw);
    }
    (p, yaw)
}

#[test]
fn a_hundred_laps_end_where_a_hundred_times_one_lap_does() {
    let sk = rig();
    // 1.1 s laps do not divide into 1/60 s ticks: the wrap falls mid-tick on most laps.
    for (turn, stride) in [(0.0, 1.4), (0.5, 1.4), (-2.0, 0.8)] {
        let clip = walk(&sk, "walk", 1.1, stride, turn);
        let rm = RootMotion::planar(0);
        let step = PlaybackStep { from: 0.0, to: 1.1, travel: 1.1 };
        let lap = clip_delta(&rm, &clip, &sk.bind_pose[0], &step, 1.1, false);
        assert!((lap.translation.length() - stride).abs() < 0.2, "{lap:?}");
        assert!((lap.yaw - turn).abs() < 1e-5, "{lap:?}");
        let mut a = animator(&sk, clip, Some(rm));
        // 100 laps of 66 ticks each: 6,600 ticks of 1/60 s = 110 s exactly in f64; in the
        // f32 playhead's arithmetic the end lands within a tick of the 100th lap's end.
        let ticks = 6600;
        for _ in 0..ticks {
            a.advance(DT);
        }
        // What is left past (or short of) the 100th lap, measured from the clip itself.
        let rest = a.time();
        let (p, yaw) = at(&a);
        let clip = a.current_clip().unwrap();
        let partial = if rest < 0.55 {
            let step = PlaybackStep { from: 0.0, to: rest, travel: rest };
            clip_delta(&rm, clip, &sk.bind_pose[0], &step, 1.1, false)
        } else {
            // The head has not quite finished lap 100: the remainder is a step back from its end.
            let step = PlaybackStep { from: 1.1, to: rest, travel: rest - 1.1 };
            clip_delta(&rm, clip, &sk.bind_pose[0], &step, 1.1, false)
        };
        let (want_p, want_yaw) = laps_f64(lap, 100);
        let want_p = want_p + glam::DQuat::from_rotation_y(want_yaw) * partial.translation.as_dvec3();
        let want_yaw = want_yaw + f64::from(partial.yaw);
        let tol = 1e-4 * f64::from(stride);
        assert!(
            (p - want_p).length() < tol,
            "turn {turn}: at {p:?}, want {want_p:?} (off {})",
            (p - want_p).length()
        );
        assert!((yaw - want_yaw).abs() < 1e-4, "turn {turn}: yaw {yaw}, want {want_yaw}");
    }
}

#[test]
fn the_root_plays_in_place_and_the_character_moves_as_authored() {
    let sk = rig();
    let clip = walk(&sk, "walk", 1.0, 1.2, 0.8);
    let authored = clip.clone();
    let mut a = animator(&sk, clip, Some(RootMotion::planar(0)));
    let mut pose = RigBuffers::new(3);
    for tick in 0..59 {
        a.advance(DT);
        a.evaluate(pose.rig()).unwrap();
        let t = a.time();
        // In place: X and Z at rest, heading at rest, the bob (Y) and the lean kept.
        let root = pose.local[0];
        let want = sample_root(&authored, t);
        assert!(root.translation.x.abs() < 1e-5 && root.translation.z.abs() < 1e-5, "tick {tick}: {root:?}");
        assert!((root.translation.y - want.translation.y).abs() < 1e-6, "tick {tick}: the bob is lost");
        let fwd = root.rotation * Vec3::Z;
        assert!(fwd.x.abs() < 1e-5, "tick {tick}: the heading stays in the pose ({fwd})");
        // The character (offset then the in-place root) is where the clip put the root.
        let world = a.root_motion().offset().to_mat4() * root.to_mat4();
        let (_, r, p) = world.to_scale_rotation_translation();
        assert!((p - want.translation).length() < 1e-4, "tick {tick}: at {p}, authored {}", want.translation);
        // The angle between them from the vector part (acos near 1 is too coarse in f32).
        let angle = 2.0 * (r * want.rotation.inverse()).xyz().length();
        assert!(angle < 1e-5, "tick {tick}: turned {angle}");
    }
}

fn sample_root(clip: &Clip, t: f32) -> Transform {
    let ch = &clip.channels()[0];
    Transform {
        translation: ch.translation.as_ref().unwrap().sample(t).unwrap(),
        rotation: ch.rotation.as_ref().unwrap().sample(t).unwrap().normalize(),
        scale: Vec3::ONE,
    }
}

#[test]
fn without_root_motion_nothing_moves_and_the_pose_is_unchanged() {
    let sk = rig();
    let clip = walk(&sk, "walk", 1.0, 1.2, 0.3);
    let (mut with, mut without) = (RigBuffers::new(3), RigBuffers::new(3));
    let mut a = animator(&sk, clip.clone(), None);
    let mut b = animator(&sk, clip, Some(RootMotion { bone: 0, axes: [false; 3], yaw: false }));
    for _ in 0..30 {
        a.advance(DT);
        b.advance(DT);
    }
    a.evaluate(without.rig()).unwrap();
    b.evaluate(with.rig()).unwrap();
    assert!(a.root_motion().is_identity() && b.root_motion().is_identity());
    assert_eq!(with.local, without.local, "taking nothing leaves the pose as authored");
}

#[test]
fn a_crossfade_blends_the_two_clips_motion_by_its_weights() {
    let sk = rig();
    let walk_clip = Arc::new(walk(&sk, "walk", 1.0, 1.0, 0.0));
    let run_clip = Arc::new(walk(&sk, "run", 0.6, 1.8, 0.4));
    let rm = RootMotion::planar(0);
    let mut a = Animator::new(
        sk.clone(),
        AnimatorSettings {
            clip: Some(walk_clip.clone()),
            root_motion: Some(rm),
            ..AnimatorSettings::default()
        },
    );
    for _ in 0..10 {
        a.advance(DT);
    }
    a.cross_fade_to(run_clip.clone(), 0.5, true);
    for tick in 0..20 {
        let (walk_from, run_from) = (a.outgoing_time().unwrap(), a.time());
        a.advance(DT);
        let w = a.fade_weight();
        let step = |from: f32, d: f32| PlaybackStep { from, to: (from + DT).rem_euclid(d), travel: DT };
        let dw = clip_delta(&rm, &walk_clip, &sk.bind_pose[0], &step(walk_from, 1.0), 1.0, true);
        let dr = clip_delta(&rm, &run_clip, &sk.bind_pose[0], &step(run_from, 0.6), 0.6, true);
        let want = dw.weighted(1.0 - w).plus(dr.weighted(w));
        let got = a.root_motion_step();
        assert!(w > 0.0 && w < 1.0, "tick {tick}: weight {w}");
        assert!((got.translation - want.translation).length() < 1e-6, "tick {tick}: {got:?} vs {want:?}");
        assert!((got.yaw - want.yaw).abs() < 1e-6, "tick {tick}");
    }
}

fn lib(sk: &Skeleton) -> Lib {
    let mut lib = Lib::new();
    lib.insert("walk".into(), Arc::new(walk(sk, "walk", 1.0, 1.0, 0.0)));
    lib.insert("run".into(), Arc::new(walk(sk, "run", 1.0, 3.0, 0.5)));
    lib
}

fn graph_animator(sk: &Arc<Skeleton>, g: &AnimGraph) -> Animator {
    let program = Arc::new(compile(g, sk, &lib(sk)).unwrap_or_else(|e| panic!("{e:?}")));
    let settings = AnimatorSettings {
        graph: Some(program),
        root_motion: Some(RootMotion::planar(0)),
        ..AnimatorSettings::default()
    };
    Animator::new(sk.clone(), settings)
}

/// One tick's motion of `clip` (both test clips last 1 s and start together) from `from`.
fn tick_of(sk: &Skeleton, clip: &str, from: f32, dt: f32) -> RootDelta {
    let c = lib(sk).remove(clip).unwrap();
    let step = PlaybackStep { from, to: (from + dt).rem_euclid(1.0), travel: dt };
    clip_delta(&RootMotion::planar(0), &c, &sk.bind_pose[0], &step, 1.0, true)
}

fn assert_close(got: RootDelta, want: RootDelta, what: &str) {
    assert!((got.translation - want.translation).length() < 1e-6, "{what}: {got:?} vs {want:?}");
    assert!((got.yaw - want.yaw).abs() < 1e-6, "{what}: {got:?} vs {want:?}");
}

#[test]
fn a_blend2_moves_the_character_by_its_weight() {
    let sk = rig();
    let mut g = AnimGraph::new();
    let a = g.add_node(NodeKind::Clip { clip: "walk".into(), speed: 1.0, looping: true }, [0.0, 0.0]);
    let b = g.add_node(NodeKind::Clip { clip: "run".into(), speed: 1.0, looping: true }, [0.0, 0.0]);
    let blend = g.add_node(NodeKind::Blend2 { weight: 0.25 }, [0.0, 0.0]);
    let o = g.add_node(NodeKind::Output, [0.0, 0.0]);
    g.connect(a, blend, "a");
    g.connect(b, blend, "b");
    g.connect(blend, o, "pose");
    let mut anim = graph_animator(&sk, &g);
    let mut t = 0.0f32;
    for tick in 0..80 {
        anim.advance(DT);
        let want = tick_of(&sk, "walk", t, DT).weighted(0.75).plus(tick_of(&sk, "run", t, DT).weighted(0.25));
        assert_close(anim.root_motion_step(), want, &format!("tick {tick}"));
        t = (t + DT).rem_euclid(1.0);
    }
}

#[test]
fn a_blend_space_moves_the_character_by_its_members_weights() {
    let sk = rig();
    let mut g = AnimGraph::new();
    let samples = vec![
        BlendSample { clip: "walk".into(), position: 0.0, speed: 1.0 },
        BlendSample { clip: "run".into(), position: 1.0, speed: 1.0 },
    ];
    let s = g.add_node(NodeKind::BlendSpace1D { samples, position: 0.4, looping: true }, [0.0, 0.0]);
    let o = g.add_node(NodeKind::Output, [0.0, 0.0]);
    g.connect(s, o, "pose");
    let mut anim = graph_animator(&sk, &g);
    let mut t = 0.0f32;
    for tick in 0..80 {
        anim.advance(DT);
        let want = tick_of(&sk, "walk", t, DT).weighted(0.6).plus(tick_of(&sk, "run", t, DT).weighted(0.4));
        let got = anim.root_motion_step();
        // The members run on a shared phase (both last 1 s, so phase = clip time).
        assert!((got.translation - want.translation).length() < 1e-5, "tick {tick}: {got:?} vs {want:?}");
        t = (t + DT).rem_euclid(1.0);
    }
}

#[test]
fn a_state_machine_transition_hands_the_motion_over_by_its_weight() {
    let sk = rig();
    let state = |name: &str, clip: &str| State {
        name: name.into(),
        source: StateSource::Clip { clip: clip.into(), speed: 1.0, looping: true },
        at: [0.0, 0.0],
    };
    let mut go = Transition::new(Some("Walk"), "Run");
    go.duration = 0.5;
    go.conditions = vec![machine::Condition { parameter: "fast".into(), test: machine::Test::IsTrue }];
    let machine = StateMachine {
        states: vec![state("Walk", "walk"), state("Run", "run")],
        entry: "Walk".into(),
        transitions: vec![go],
        any_at: [0.0, 0.0],
    };
    let mut g = AnimGraph::new();
    g.add_parameter("fast", ParamValue::Bool(false));
    let m = g.add_node(NodeKind::StateMachine { machine }, [0.0, 0.0]);
    let o = g.add_node(NodeKind::Output, [0.0, 0.0]);
    g.connect(m, o, "pose");
    let mut anim = graph_animator(&sk, &g);
    for _ in 0..6 {
        anim.advance(DT);
    }
    let walk_only = anim.root_motion_step();
    assert!(walk_only.translation.length() > 0.0);
    anim.current_graph_mut().unwrap().set_bool("fast", true);
    let mut seen_between = false;
    for tick in 0..60 {
        anim.advance(DT);
        let got = anim.root_motion_step();
        // Within the transition the speed is between a walk's (1 m/s) and a run's (3 m/s).
        let speed = got.translation.length() / DT;
        assert!((0.5..3.5).contains(&speed), "tick {tick}: {speed} m/s");
        seen_between |= speed > 1.3 && speed < 2.7;
    }
    assert!(seen_between, "the transition never blended the two motions");
    let run_speed = anim.root_motion_step().translation.length() / DT;
    assert!(run_speed > 2.5, "after the transition the run moves the character ({run_speed} m/s)");
}

#[test]
fn seeking_places_the_character_where_playing_there_would() {
    let sk = rig();
    let clip = walk(&sk, "walk", 1.0, 1.2, 0.8);
    let mut played = animator(&sk, clip.clone(), Some(RootMotion::planar(0)));
    for _ in 0..30 {
        played.advance(DT);
    }
    let mut sought = animator(&sk, clip, Some(RootMotion::planar(0)));
    sought.seek(played.time());
    let (p, yaw) = at(&played);
    let (q, yaw2) = at(&sought);
    assert!((p - q).length() < 1e-5 && (yaw - yaw2).abs() < 1e-5, "{p:?} {q:?}");
    sought.reset_session();
    assert!(sought.root_motion().is_identity());
}

#[test]
fn bad_settings_and_bad_keys_move_nothing_and_never_panic() {
    let sk = rig();
    let mut pose = RigBuffers::new(3);
    // A bone the rig does not have.
    let mut a = animator(&sk, walk(&sk, "walk", 1.0, 1.0, 0.0), Some(RootMotion::planar(40)));
    for _ in 0..10 {
        a.advance(DT);
    }
    a.evaluate(pose.rig()).unwrap();
    assert!(a.root_motion().is_identity());
    // NaN keys on the root.
    let mut c = walk(&sk, "walk", 1.0, 1.0, 0.0);
    let times = vec![0.0, 0.5, 1.0];
    let nan = Vec3::splat(f32::NAN);
    c.channels_mut()[0].translation = Some(
        Track::from_keys_unchecked(Interpolation::Linear, times, vec![Vec3::ZERO, nan, Vec3::ONE]).unwrap(),
    );
    let mut a = animator(&sk, c, Some(RootMotion::planar(0)));
    for _ in 0..90 {
        a.advance(DT);
        a.evaluate(pose.rig()).unwrap();
        let m = a.root_motion();
        assert!(m.translation.is_finite() && m.yaw.is_finite());
    }
    // A step spanning a billion laps composes in log time.
    let clip = walk(&sk, "walk", 1.0, 1.0, 0.0);
    let rm = RootMotion::planar(0);
    let d = clip_delta(
        &rm,
        &clip,
        &sk.bind_pose[0],
        &PlaybackStep { from: 0.0, to: 0.0, travel: 1e9 },
        1.0,
        true,
    );
    assert!(d.is_finite() && (d.translation.z - 1e9).abs() / 1e9 < 1e-3, "{d:?}");
    // The motion frame of a rest pose is the rest's own translation with no yaw.
    let f = motion_frame(&rm, &sk.bind_pose[1], &sk.bind_pose[1]);
    assert_eq!(f, RootDelta { translation: Vec3::ZERO, yaw: 0.0 });
}

#[test]
fn root_motion_is_saved_by_bone_name_and_checked_on_load() {
    use marrow_engine::project::file::SceneFile;
    use marrow_engine::scene::{RootMotionDesc, SceneDesc};
    let src = r#"(version: 1, name: "s", entities: [(name: "walker", transform: None,
        animator: Some((rig: "rig.glb", clip: None, root_motion: Some((bone: "hips", translate: "XZ", yaw: true)))))])"#;
    let file: SceneFile = ron::from_str(src).unwrap();
    let desc = SceneDesc::try_from(&file).unwrap();
    let a = desc.entities[0].animator.as_ref().unwrap();
    assert_eq!(a.root_motion, Some(RootMotionDesc::planar("hips")));
    let back = SceneFile::from(&desc);
    assert_eq!(back, file, "the setting round trips");
    let bad = src.replace("\"XZ\"", "\"XQ\"");
    let err = SceneDesc::try_from(&ron::from_str::<SceneFile>(&bad).unwrap()).unwrap_err().to_string();
    assert!(err.contains("root_motion.translate") && err.contains("XQ"), "{err}");
    // Target bindings round trip too, and an empty one is refused naming where.
    let bound =
        src.replace("yaw: true)))", "yaw: true)), targets: [(parameter: \"look\", entity: \"Target\")])");
    let file: SceneFile = ron::from_str(&bound).unwrap();
    let desc = SceneDesc::try_from(&file).unwrap();
    let t = &desc.entities[0].animator.as_ref().unwrap().targets;
    assert_eq!(t.len(), 1);
    assert_eq!(t[0].parameters(), ["look_x", "look_y", "look_z"].map(String::from));
    assert_eq!(SceneFile::from(&desc), file);
    let empty = bound.replace("entity: \"Target\"", "entity: \"\"");
    let err = SceneDesc::try_from(&ron::from_str::<SceneFile>(&empty).unwrap()).unwrap_err().to_string();
    assert!(err.contains("animator.targets[0]"), "{err}");
    assert_eq!(RootMotionDesc::parse_axes("xz"), Some([true, false, true]));
    assert_eq!(RootMotionDesc::parse_axes("XX"), None);
    assert_eq!(RootMotionDesc::planar("a").axes_letters(), "XZ");
}

#[test]
fn a_playheads_cursor_gives_the_same_deltas_bit_for_bit() {
    use marrow_engine::playback::advance_head;
    use marrow_engine::root_motion::{RootCursor, clip_delta_cursor};
    let sk = rig();
    let clip = walk(&sk, "walk", 1.1, 1.3, 0.7);
    let mut cursor = RootCursor::default();
    let mut t = 0.0f32;
    // Forward, a big step across laps, backward, and a change of bone in between.
    let steps = [DT; 40].into_iter().chain([2.5, -0.3, DT, DT]).chain([DT; 20]);
    for (i, travel) in steps.enumerate() {
        let rm =
            if i < 50 { RootMotion::planar(0) } else { RootMotion { bone: 1, axes: [true; 3], yaw: false } };
        let (step, _) = advance_head(t, travel, 1.1, true);
        let fresh = clip_delta(&rm, &clip, &sk.bind_pose[usize::from(rm.bone)], &step, 1.1, true);
        let kept =
            clip_delta_cursor(&rm, &clip, &sk.bind_pose[usize::from(rm.bone)], &step, 1.1, true, &mut cursor);
        assert_eq!(fresh, kept, "step {i}");
        t = step.to;
    }
}
