//! The `runner` sample, built in code: a five-bone rig, one looping stride clip with a
//! `footstep` marker at each instant a leg is vertical, four limb boxes held on bone sockets, and
//! [`RunnerBehaviour`], which turns the marker events into footstep sounds while the runner is
//! grounded.
//!
//! [`runner_project`] builds the whole project; `marrow gen-runner` writes it to
//! `projects/runner` and a test keeps the committed files equal to what it writes.
//!
//! The stride is a sine swing made exactly from eased keys: a thigh's angle is
//! `A sin(2 pi t / T)`, keyed at quarter periods with `easeOutSine` segments leaving zero and
//! `easeInSine` segments returning to it. The legs are vertical at `t = 0` and `t = T/2`, where
//! the markers sit. The Animator's one `speed` drives both the swing and the marker sweep, so
//! footsteps stay in step however the run accelerates.
//!
//! Sound goes through the [`FootstepSink`] trait so tests count footsteps without audio. This
//! module plays nothing itself.

use std::sync::Arc;

use glam::{Quat, Vec3};

use super::Project;
use super::file::{ClipAsset, Manifest};
use crate::clip::{BoneChannels, Clip, Marker};
use crate::easing::{Ease, Easing};
use crate::math::Transform;
use crate::scene::{AnimatorDesc, Entity, EntityDesc, MeshDesc, SceneDesc, SocketDesc, World};
use crate::skeleton::{NO_PARENT, Skeleton};
use crate::track::{Interpolation, Track};

/// The stride's period, seconds of clip time.
pub const STRIDE_PERIOD: f32 = 1.0;
/// Thigh swing amplitude, radians.
pub const THIGH_SWING: f32 = 0.6;
/// Knee bend at the back of the swing, radians.
pub const KNEE_BEND: f32 = 0.9;
/// The marker name.
pub const FOOTSTEP: &str = "footstep";
/// Paths of the files the generator writes.
pub const SKELETON_PATH: &str = "assets/runner.skeleton.ron";
/// The stride clip's path.
pub const CLIP_PATH: &str = "clips/stride.clip.ron";
/// The scene's path.
pub const SCENE_PATH: &str = "scenes/main.scene.ron";

/// The runner's five-bone skeleton: hips, and a thigh and shin per leg (legs hang along -Y). It
/// faces +Z (glTF's forward), so its left (`_l`) side is +X.
pub fn runner_skeleton() -> Skeleton {
    let t = |x: f32, y: f32| Transform::from_translation(Vec3::new(x, y, 0.0));
    let bones = vec![
        ("hips".to_owned(), NO_PARENT, t(0.0, 1.0)),
        ("thigh_l".to_owned(), 0, t(0.12, -0.05)),
        ("shin_l".to_owned(), 1, t(0.0, -0.45)),
        ("thigh_r".to_owned(), 0, t(-0.12, -0.05)),
        ("shin_r".to_owned(), 3, t(0.0, -0.45)),
    ];
    // The bones above are well formed; a failure here is a programming error caught by the tests.
    Skeleton::from_bind_pose("runner", bones).unwrap_or_else(|_| Skeleton::empty("runner"))
}

fn eased_track<T: crate::track::Animatable>(times: &[f32], values: Vec<T>, easings: &[Easing]) -> Track<T> {
    let mut t = Track::from_keys_unchecked(Interpolation::Linear, times.to_vec(), values)
        .unwrap_or_else(|_| Track::new(Interpolation::Linear));
    for (i, e) in easings.iter().enumerate() {
        t.set_key_easing(i, Some(Ease::Named(*e)));
    }
    t
}

/// The thigh angle of the stride at clip time `t` (left leg; the right is its negative).
pub fn thigh_angle(t: f32) -> f32 {
    THIGH_SWING * (std::f32::consts::TAU * t / STRIDE_PERIOD).sin()
}

/// The looping stride clip, with a `footstep` marker where the legs are vertical.
pub fn stride_clip(skeleton: &Skeleton) -> Clip {
    gait_clip(skeleton, "stride", STRIDE_PERIOD, THIGH_SWING, KNEE_BEND, 0.04)
}

/// A looping gait like the stride: period `p` seconds, thigh swing `a` and knee bend `knee`
/// radians, hips dropping by `bob` at mid-swing; `footstep` markers where the legs are vertical.
pub fn gait_clip(skeleton: &Skeleton, name: &str, p: f32, a: f32, knee: f32, bob: f32) -> Clip {
    gait_clip_toward(skeleton, name, [p, a, knee, bob], 0.0)
}

/// A looping gait stepping toward `heading` radians about +Y from straight ahead (+Z; positive
/// turns toward +X): the thighs swing about the axis across that heading, the knees bend about
/// x. `gait` is `[period, thigh swing, knee bend, hips bob]` as for [`gait_clip`].
pub fn gait_clip_toward(skeleton: &Skeleton, name: &str, gait: [f32; 4], heading: f32) -> Clip {
    let [p, a, knee, bob] = gait;
    let times = [0.0, 0.25 * p, 0.5 * p, 0.75 * p, p];
    let sine = [Easing::OutSine, Easing::InSine, Easing::OutSine, Easing::InSine];
    let x = |a: f32| Quat::from_rotation_x(a);
    let across = Quat::from_rotation_y(heading) * Vec3::X;
    // Straight ahead is exactly about x (no signed zeros in the files).
    let swing = |a: f32| if heading == 0.0 { x(a) } else { Quat::from_axis_angle(across, a) };
    let mut clip = Clip::new(name, skeleton);
    clip.looping = true;
    clip.channels_mut()[0] = BoneChannels {
        translation: Some(eased_track(
            &times,
            vec![
                Vec3::new(0.0, 1.0, 0.0),
                Vec3::new(0.0, 1.0 - bob, 0.0),
                Vec3::new(0.0, 1.0, 0.0),
                Vec3::new(0.0, 1.0 - bob, 0.0),
                Vec3::new(0.0, 1.0, 0.0),
            ],
            &[Easing::InOutSine; 4],
        )),
        ..BoneChannels::default()
    };
    let thigh = |s: f32| BoneChannels {
        rotation: Some(eased_track(
            &times,
            vec![swing(0.0), swing(s * a), swing(0.0), swing(-s * a), swing(0.0)],
            &sine,
        )),
        ..BoneChannels::default()
    };
    let shin = |back: usize| {
        let mut v = vec![x(0.0); 5];
        v[back] = x(knee);
        BoneChannels {
            rotation: Some(eased_track(&times, v, &[Easing::InOutSine; 4])),
            ..BoneChannels::default()
        }
    };
    clip.channels_mut()[1] = thigh(1.0);
    clip.channels_mut()[2] = shin(3);
    clip.channels_mut()[3] = thigh(-1.0);
    clip.channels_mut()[4] = shin(1);
    clip.set_markers(vec![
        Marker { name: FOOTSTEP.to_owned(), time: 0.0 },
        Marker { name: FOOTSTEP.to_owned(), time: 0.5 * p },
    ]);
    clip
}

/// The runner scene: a ground box, and the runner rig with four limb boxes on sockets.
pub fn runner_scene() -> SceneDesc {
    let limb = |name: &str, bone: &str| EntityDesc {
        name: name.to_owned(),
        transform: Some(Transform::IDENTITY),
        mesh: Some(MeshDesc::Box { half_extents: Vec3::new(0.05, 0.22, 0.05) }),
        socket: Some(SocketDesc {
            bone: bone.to_owned(),
            offset: Transform::from_translation(Vec3::new(0.0, -0.22, 0.0)),
        }),
        ..EntityDesc::default()
    };
    SceneDesc {
        name: "runner".to_owned(),
        entities: vec![
            EntityDesc {
                name: "Ground".to_owned(),
                transform: Some(Transform::from_translation(Vec3::new(0.0, -0.01, 0.0))),
                mesh: Some(MeshDesc::Box { half_extents: Vec3::new(4.0, 0.01, 4.0) }),
                ..EntityDesc::default()
            },
            EntityDesc {
                name: "Runner".to_owned(),
                transform: Some(Transform::IDENTITY),
                animator: Some(AnimatorDesc {
                    rig: SKELETON_PATH.to_owned(),
                    clip: Some(CLIP_PATH.to_owned()),
                    graph: None,
                    looping: None,
                    speed: 1.0,
                    play_on_start: true,
                    root_motion: None,
                    targets: Vec::new(),
                }),
                children: vec![
                    limb("LeftThigh", "thigh_l"),
                    limb("LeftShin", "shin_l"),
                    limb("RightThigh", "thigh_r"),
                    limb("RightShin", "shin_r"),
                ],
                ..EntityDesc::default()
            },
        ],
    }
}

/// The whole runner project.
pub fn runner_project() -> Project {
    let skeleton = runner_skeleton();
    let clip = ClipAsset { clip: Arc::new(stride_clip(&skeleton)), bones: skeleton.bone_names.clone() };
    let mut p = Project {
        manifest: Manifest {
            name: "runner".to_owned(),
            scenes: vec![SCENE_PATH.to_owned()],
            assets: vec![SKELETON_PATH.to_owned()],
            clips: vec![CLIP_PATH.to_owned()],
            graphs: Vec::new(),
            ..Manifest::default()
        },
        ..Project::default()
    };
    p.skeletons.insert(SKELETON_PATH.to_owned(), Arc::new(skeleton));
    p.clips.insert(CLIP_PATH.to_owned(), Arc::new(clip));
    p.scenes.insert(SCENE_PATH.to_owned(), Arc::new(runner_scene()));
    p
}

/// The locomotion sample's graph path.
pub const LOCOMOTION_GRAPH: &str = "graphs/locomotion.graph.ron";

/// The locomotion sample's character controller (a state machine) path.
pub const CONTROLLER_GRAPH: &str = "graphs/controller.graph.ron";

/// A one-shot or looping pose sequence of the runner keyed at `times`: the hips' height, and
/// the left and right thigh and shin angles (radians about x) at each time; ease-in-out keys.
#[allow(clippy::too_many_arguments)]
fn pose_clip(
    skeleton: &Skeleton,
    name: &str,
    looping: bool,
    times: &[f32],
    hips: &[f32],
    legs: [&[f32]; 4],
    markers: &[(&str, f32)],
) -> Clip {
    let mut clip = Clip::new(name, skeleton);
    clip.looping = looping;
    let ease = vec![Easing::InOutSine; times.len().saturating_sub(1)];
    let hips: Vec<Vec3> = hips.iter().map(|&y| Vec3::new(0.0, y, 0.0)).collect();
    clip.channels_mut()[0] =
        BoneChannels { translation: Some(eased_track(times, hips, &ease)), ..BoneChannels::default() };
    for (bone, angles) in legs.into_iter().enumerate() {
        let keys: Vec<Quat> = angles.iter().map(|&a| Quat::from_rotation_x(a)).collect();
        clip.channels_mut()[bone + 1] =
            BoneChannels { rotation: Some(eased_track(times, keys, &ease)), ..BoneChannels::default() };
    }
    clip.set_markers(markers.iter().map(|(n, t)| Marker { name: (*n).to_owned(), time: *t }).collect());
    clip
}

/// The controller's clips: a jump (crouch and push off, one-shot), a fall (legs paddling,
/// looping) and a land (absorb and stand, one-shot, a footstep at touch-down).
pub(super) fn air_clips(skeleton: &Skeleton) -> [(&'static str, Clip); 3] {
    let (crouch, push) = ([0.0, 0.6, -0.1, 0.3], [0.0, 1.1, 0.0, 0.5]);
    let jump = pose_clip(
        skeleton,
        "jump",
        false,
        &[0.0, 0.15, 0.35, 0.6],
        &[1.0, 0.82, 1.25, 1.35],
        [&crouch, &push, &crouch, &push],
        &[("takeoff", 0.3)],
    );
    let fall = pose_clip(
        skeleton,
        "fall",
        true,
        &[0.0, 0.3, 0.6],
        &[1.35, 1.3, 1.35],
        [&[0.3, 0.45, 0.3], &[0.5, 0.7, 0.5], &[0.45, 0.3, 0.45], &[0.7, 0.5, 0.7]],
        &[],
    );
    let (absorb, knees) = ([0.3, 0.7, 0.0], [0.5, 1.2, 0.0]);
    let land = pose_clip(
        skeleton,
        "land",
        false,
        &[0.0, 0.12, 0.5],
        &[1.05, 0.8, 1.0],
        [&absorb, &knees, &absorb, &knees],
        &[(FOOTSTEP, 0.05)],
    );
    [("clips/jump.clip.ron", jump), ("clips/fall.clip.ron", fall), ("clips/land.clip.ron", land)]
}

/// The character controller: a state machine of Idle, Move (the stride and sprint on a blend
/// space driven by `speed`), Jump (on the `jump` trigger while `grounded`, from any state), Fall
/// (when the jump ends) and Land (when `grounded`), back to Idle or Move when the landing ends.
/// Idle, Move and Land start each other lined up on their footstep markers.
pub fn controller_graph() -> crate::graph::AnimGraph {
    use crate::graph::machine::{Condition, State, StateMachine, StateSource, SyncRule, Test, Transition};
    use crate::graph::{AnimGraph, BlendSample, NodeKind, ParamValue};
    let clip = |path: &str, looping: bool| StateSource::Clip { clip: path.to_owned(), speed: 1.0, looping };
    let state = |name: &str, source: StateSource, at: [f32; 2]| State { name: name.to_owned(), source, at };
    let sample = |clip: &str, position: f32| BlendSample { clip: clip.to_owned(), position, speed: 1.0 };
    let when = |from: Option<&str>, to: &str, conditions: &[(&str, Test)], seconds: f32| {
        let mut t = Transition::new(from, to);
        t.duration = seconds;
        t.conditions = conditions
            .iter()
            .map(|(p, test)| Condition { parameter: (*p).to_owned(), test: *test })
            .collect();
        t
    };
    let stepping = |mut t: Transition| {
        t.sync = SyncRule::Markers;
        t
    };
    let after = |mut t: Transition, exit: f32| {
        t.exit_time = Some(exit);
        t
    };
    let machine = StateMachine {
        states: vec![
            state("Idle", clip("clips/idle.clip.ron", true), [0.0, 0.0]),
            state(
                "Move",
                StateSource::BlendSpace {
                    samples: vec![sample(CLIP_PATH, 1.0), sample("clips/sprint.clip.ron", 2.0)],
                    parameter: "speed".to_owned(),
                    looping: true,
                },
                [320.0, 0.0],
            ),
            state("Jump", clip("clips/jump.clip.ron", false), [0.0, -180.0]),
            state("Fall", clip("clips/fall.clip.ron", true), [320.0, -180.0]),
            state("Land", clip("clips/land.clip.ron", false), [160.0, 170.0]),
        ],
        entry: "Idle".to_owned(),
        transitions: vec![
            stepping(when(Some("Idle"), "Move", &[("speed", Test::Greater(0.1))], 0.25)),
            stepping(when(Some("Move"), "Idle", &[("speed", Test::AtMost(0.1))], 0.3)),
            when(None, "Jump", &[("jump", Test::Triggered), ("grounded", Test::IsTrue)], 0.1),
            after(when(Some("Jump"), "Fall", &[], 0.15), 1.0),
            when(Some("Fall"), "Land", &[("grounded", Test::IsTrue)], 0.1),
            after(stepping(when(Some("Land"), "Move", &[("speed", Test::Greater(0.1))], 0.2)), 0.9),
            after(when(Some("Land"), "Idle", &[("speed", Test::AtMost(0.1))], 0.25), 0.9),
        ],
        any_at: [-300.0, -180.0],
    };
    let mut g = AnimGraph::new();
    g.add_parameter("speed", ParamValue::Float(0.0));
    g.add_parameter("grounded", ParamValue::Bool(true));
    g.add_parameter("jump", ParamValue::Trigger(false));
    let m = g.add_node(NodeKind::StateMachine { machine }, [0.0, 0.0]);
    let out = g.add_node(NodeKind::Output, [320.0, 20.0]);
    g.connect(m, out, "pose");
    g
}

pub use super::locomotion::locomotion_project;

/// The locomotion sample's speed graph ([`LOCOMOTION_GRAPH`]): idle, stride and sprint on a 1D
/// blend space driven by a `speed` parameter, and a `lean` parameter tilting the hips through an
/// Adjust node.
pub fn speed_graph() -> crate::graph::AnimGraph {
    use crate::graph::{AdjustEntry, AdjustOp, AnimGraph, BlendSample, Drive, NodeKind, ParamValue};
    let mut g = AnimGraph::new();
    g.add_parameter("speed", ParamValue::Float(1.0));
    g.add_parameter("lean", ParamValue::Float(0.0));
    let speed = g.add_node(NodeKind::Parameter { name: "speed".to_owned() }, [0.0, 150.0]);
    let sample = |clip: &str, position: f32| BlendSample { clip: clip.to_owned(), position, speed: 1.0 };
    let space = g.add_node(
        NodeKind::BlendSpace1D {
            samples: vec![
                sample("clips/idle.clip.ron", 0.0),
                sample(CLIP_PATH, 1.0),
                sample("clips/sprint.clip.ron", 2.0),
            ],
            position: 0.0,
            looping: true,
        },
        [200.0, 40.0],
    );
    let lean = g.add_node(
        NodeKind::Adjust {
            entries: vec![AdjustEntry {
                bone: "hips".to_owned(),
                op: AdjustOp::Rotate { axis: Vec3::X },
                amount: Drive::Parameter("lean".to_owned()),
            }],
        },
        [500.0, 60.0],
    );
    let out = g.add_node(NodeKind::Output, [720.0, 80.0]);
    g.connect(speed, space, "position");
    g.connect(space, lean, "pose");
    g.connect(lean, out, "pose");
    g
}

/// Where footstep sounds go.
pub trait FootstepSink {
    /// A footstep of `entity` (the rig), from marker `marker` of its clip.
    fn footstep(&mut self, entity: Entity, marker: &Marker);
}

/// A sink that counts footsteps (for tests and headless runs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CountingSink {
    /// Footsteps heard.
    pub count: usize,
}

impl FootstepSink for CountingSink {
    fn footstep(&mut self, _entity: Entity, _marker: &Marker) {
        self.count += 1;
    }
}

/// Listens for the runner's `footstep` marker events and plays them through a sink, only while
/// the runner is grounded (its world height at or below [`RunnerBehaviour::ground_height`]).
#[derive(Clone, Debug)]
pub struct RunnerBehaviour<S: FootstepSink> {
    /// The runner's rig entity.
    pub runner: Entity,
    /// Where footsteps go.
    pub sink: S,
    /// The runner counts as grounded while its world height is at most this.
    pub ground_height: f32,
}

impl<S: FootstepSink> RunnerBehaviour<S> {
    /// A behaviour for `runner`.
    pub fn new(runner: Entity, sink: S) -> Self {
        Self { runner, sink, ground_height: 1e-3 }
    }

    /// Whether the runner stands on the ground in the world's last frame.
    pub fn grounded(&self, world: &World) -> bool {
        world.world_matrix(self.runner).is_some_and(|m| m.w_axis.y <= self.ground_height)
    }

    /// Sets the run speed: the Animator's one speed drives the swing and the markers alike.
    pub fn set_speed(&self, world: &mut World, speed: f32) {
        if let Some(a) = world.animator_mut(self.runner) {
            a.set_speed(speed);
        }
    }

    /// Handles the events the world's last frame published; returns the footsteps played.
    pub fn update(&mut self, world: &World) -> usize {
        if !self.grounded(world) {
            return 0;
        }
        let mut n = 0;
        for e in world.events() {
            if e.entity == self.runner && e.event.name() == FOOTSTEP {
                self.sink.footstep(e.entity, &e.event.clip.markers()[e.event.marker]);
                n += 1;
            }
        }
        n
    }
}
