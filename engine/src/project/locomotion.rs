//! The `locomotion` sample, built in code: the runner of [`super::runner`] grown into a figure
//! (feet, a spine to a head, arms) on a tilted ground, with a character controller to preview and
//! a steering graph its Animator plays: a 2D blend space over `direction` (x: -1 strafe left,
//! +1 strafe right) and `speed` (y: idle 0, stride 1, sprint 2), a [`NodeKind::FootPlant`] that
//! keeps both feet on the slope, and a [`NodeKind::LookAt`] turning the spine, neck and head
//! toward `LookTarget`, an entity the user drags in the viewport (bound to the `look` vector
//! parameter, on the LookAt's `target` pin, through the Animator's targets).
//!
//! The rig keeps the runner's five bones first, in their order, and appends the rest, so every
//! clip and graph written for the runner's bones reads the same bones here. `marrow gen-runner
//! --sample locomotion` writes the project to `projects/locomotion`; a test keeps the committed
//! files equal to what it writes. Nothing here plays anything: it only builds the data.
//!
//! [`NodeKind::FootPlant`]: crate::graph::NodeKind::FootPlant
//! [`NodeKind::LookAt`]: crate::graph::NodeKind::LookAt

use std::sync::Arc;

use glam::{Quat, Vec3};

use super::Project;
use super::file::ClipAsset;
use super::runner::{
    CLIP_PATH, CONTROLLER_GRAPH, KNEE_BEND, LOCOMOTION_GRAPH, SCENE_PATH, SKELETON_PATH, STRIDE_PERIOD,
    THIGH_SWING, controller_graph, gait_clip_toward, runner_project, runner_skeleton,
};
use crate::clip::{BoneChannels, Clip};
use crate::graph::{AnimGraph, BlendSample2D, LookLink, NodeKind, ParamValue};
use crate::math::Transform;
use crate::scene::{EntityDesc, MeshDesc, SceneDesc, SocketDesc, TargetBinding};
use crate::skeleton::Skeleton;
use crate::track::{Interpolation, Track};

/// The steering graph's path (what the Runner plays).
pub const STEERING_GRAPH: &str = "graphs/steering.graph.ron";

/// The ground's slope: it rises along +Z by this many radians (the steering graph's `slope`).
pub const GROUND_SLOPE: f32 = 0.15;

/// Where the look target starts (world = the Runner's model space: the Runner stands at the
/// origin, unturned).
pub const LOOK_TARGET: Vec3 = Vec3::new(1.4, 1.5, 1.2);

/// The bones appended to the runner's five: `(name, parent, bind translation)`.
const FIGURE: [(&str, &str, [f32; 3]); 12] = [
    ("foot_l", "shin_l", [0.0, -0.45, 0.0]),
    ("foot_r", "shin_r", [0.0, -0.45, 0.0]),
    ("spine", "hips", [0.0, 0.12, 0.0]),
    ("chest", "spine", [0.0, 0.25, 0.0]),
    ("neck", "chest", [0.0, 0.22, 0.0]),
    ("head", "neck", [0.0, 0.1, 0.0]),
    ("upperarm_l", "chest", [0.22, 0.16, 0.0]),
    ("forearm_l", "upperarm_l", [0.0, -0.28, 0.0]),
    ("upperarm_r", "chest", [-0.22, 0.16, 0.0]),
    ("forearm_r", "upperarm_r", [0.0, -0.28, 0.0]),
    ("toe_l", "foot_l", [0.0, -0.05, 0.16]),
    ("toe_r", "foot_r", [0.0, -0.05, 0.16]),
];

/// The figure's skeleton: the runner's five bones, then feet, spine, chest, neck, head, arms and
/// toes (named `runner` like the runner's, so the runner's clips play on it).
pub fn figure_skeleton() -> Skeleton {
    let runner = runner_skeleton();
    let mut bones: Vec<(String, u16, Transform)> = runner
        .bone_names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), runner.parents[i], runner.bind_pose[i]))
        .collect();
    for (name, parent, at) in FIGURE {
        let parent = bones.iter().position(|(n, ..)| n == parent).map_or(0, |p| p as u16);
        bones.push((name.to_owned(), parent, Transform::from_translation(Vec3::from(at))));
    }
    // Well formed by construction (parents come first); a failure is a programming error the
    // generator test catches.
    Skeleton::from_bind_pose("runner", bones).unwrap_or_else(|_| runner_skeleton())
}

/// A gait of the figure: [`gait_clip_toward`] for the legs, and the arms swinging against the
/// legs (each upper arm opposite its own thigh, by half; the elbows bent a little forward).
fn figure_gait(skeleton: &Skeleton, name: &str, gait: [f32; 4], heading: f32) -> Clip {
    let mut clip = gait_clip_toward(skeleton, name, gait, heading);
    let [p, a, ..] = gait;
    let times = [0.0, 0.25 * p, 0.5 * p, 0.75 * p, p];
    let x = |a: f32| Quat::from_rotation_x(a);
    let track = |keys: Vec<Quat>| {
        Track::from_keys_unchecked(Interpolation::Linear, times.to_vec(), keys)
            .unwrap_or_else(|_| Track::new(Interpolation::Linear))
    };
    // The left thigh reaches x(-a) (forward) at 3/4; its arm reaches back then.
    for (arm, forearm, s) in [("upperarm_l", "forearm_l", 1.0f32), ("upperarm_r", "forearm_r", -1.0)] {
        let (Some(u), Some(f)) = (skeleton.index_of(arm), skeleton.index_of(forearm)) else {
            continue;
        };
        let swing = 0.5 * a;
        clip.channels_mut()[u] = BoneChannels {
            rotation: Some(track(vec![x(0.0), x(-s * swing), x(0.0), x(s * swing), x(0.0)])),
            ..BoneChannels::default()
        };
        clip.channels_mut()[f] =
            BoneChannels { rotation: Some(track(vec![x(-0.35 - 0.4 * a); 5])), ..BoneChannels::default() };
    }
    clip
}

/// The figure's looping clips by path: idle, stride, sprint, and a strafe each way (stride speed,
/// stepping sideways).
fn figure_clips(skeleton: &Skeleton) -> Vec<(&'static str, Clip)> {
    let half_turn = std::f32::consts::FRAC_PI_2;
    let stride = [STRIDE_PERIOD, THIGH_SWING, KNEE_BEND, 0.04];
    vec![
        (CLIP_PATH, figure_gait(skeleton, "stride", stride, 0.0)),
        ("clips/idle.clip.ron", figure_gait(skeleton, "idle", [2.0, 0.04, 0.06, 0.015], 0.0)),
        ("clips/sprint.clip.ron", figure_gait(skeleton, "sprint", [0.7, 0.95, 1.4, 0.07], 0.0)),
        // The figure faces +Z: its left is +X, a quarter turn toward it.
        ("clips/strafe_l.clip.ron", figure_gait(skeleton, "strafe_l", [1.0, 0.35, 0.5, 0.03], half_turn)),
        ("clips/strafe_r.clip.ron", figure_gait(skeleton, "strafe_r", [1.0, 0.35, 0.5, 0.03], -half_turn)),
    ]
}

/// The steering graph: `direction` and `speed` on a 2D blend space of the figure's gaits, the
/// feet planted on the ground's slope, the spine, neck and head turned toward the `look` vector.
pub fn steering_graph() -> AnimGraph {
    let mut g = AnimGraph::new();
    g.add_parameter("speed", ParamValue::Float(1.0));
    g.add_parameter("direction", ParamValue::Float(0.0));
    g.add_parameter("slope", ParamValue::Float(GROUND_SLOPE));
    g.add_parameter("look", ParamValue::Vec3(LOOK_TARGET));
    let param = |g: &mut AnimGraph, name: &str, at: [f32; 2]| {
        g.add_node(NodeKind::Parameter { name: name.to_owned() }, at)
    };
    let direction = param(&mut g, "direction", [0.0, 0.0]);
    let speed = param(&mut g, "speed", [0.0, 90.0]);
    let sample =
        |clip: &str, x: f32, y: f32| BlendSample2D { clip: clip.to_owned(), position: (x, y), speed: 1.0 };
    let space = g.add_node(
        NodeKind::BlendSpace2D {
            samples: vec![
                sample("clips/idle.clip.ron", 0.0, 0.0),
                sample(CLIP_PATH, 0.0, 1.0),
                sample("clips/sprint.clip.ron", 0.0, 2.0),
                sample("clips/strafe_l.clip.ron", -1.0, 1.0),
                sample("clips/strafe_r.clip.ron", 1.0, 1.0),
            ],
            x: 0.0,
            y: 1.0,
            looping: true,
        },
        [260.0, 20.0],
    );
    let slope = param(&mut g, "slope", [260.0, 220.0]);
    let leg = |side: &str| ["thigh", "shin", "foot"].map(|b| format!("{b}_{side}"));
    let plant = g.add_node(
        NodeKind::FootPlant {
            hips: "hips".to_owned(),
            left: leg("l"),
            right: leg("r"),
            height: 0.0,
            slope: GROUND_SLOPE,
            max_lift: 0.3,
            max_drop: 0.3,
            mid_axis: Vec3::X,
            weight: 1.0,
        },
        [520.0, 20.0],
    );
    let look = g.add_node(
        NodeKind::LookAt {
            bone: "head".to_owned(),
            x: 0.0,
            y: 0.0,
            z: 0.0,
            target_bone: String::new(),
            forward: Vec3::Z,
            up: Vec3::Y,
            offset: Vec3::new(0.0, 0.1, 0.1),
            yaw: 1.3,
            pitch: 0.8,
            chain: [("spine", 0.15), ("chest", 0.25), ("neck", 0.35)]
                .map(|(bone, share)| LookLink { bone: bone.to_owned(), share })
                .to_vec(),
            weight: 1.0,
        },
        [880.0, 20.0],
    );
    let target = param(&mut g, "look", [520.0, 220.0]);
    let out = g.add_node(NodeKind::Output, [1240.0, 40.0]);
    g.connect(target, look, "target");
    g.connect(direction, space, "x");
    g.connect(speed, space, "y");
    g.connect(space, plant, "pose");
    g.connect(slope, plant, "slope");
    g.connect(plant, look, "pose");
    g.connect(look, out, "pose");
    g
}

/// A box on a bone socket: `half` extents, its centre at `at` in the bone's frame.
fn part(name: &str, bone: &str, half: [f32; 3], at: [f32; 3]) -> EntityDesc {
    EntityDesc {
        name: name.to_owned(),
        transform: Some(Transform::IDENTITY),
        mesh: Some(MeshDesc::Box { half_extents: Vec3::from(half) }),
        socket: Some(SocketDesc {
            bone: bone.to_owned(),
            offset: Transform::from_translation(Vec3::from(at)),
        }),
        ..EntityDesc::default()
    }
}

/// The figure's scene: the runner's, with the ground tilted to [`GROUND_SLOPE`], boxes for the
/// new bones, the Runner playing the steering graph with its `look` target bound to `LookTarget`.
fn figure_scene(scene: &mut SceneDesc) {
    if let Some(ground) = scene.entities.iter_mut().find(|e| e.name == "Ground") {
        // Rising along +Z: turned about -X, through the origin.
        let mut t = Transform::from_translation(Vec3::new(0.0, -0.01, 0.0));
        t.rotation = Quat::from_rotation_x(-GROUND_SLOPE);
        ground.transform = Some(t);
    }
    if let Some(runner) = scene.entities.iter_mut().find(|e| e.name == "Runner") {
        if let Some(a) = runner.animator.as_mut() {
            a.graph = Some(STEERING_GRAPH.to_owned());
            a.targets = vec![TargetBinding { parameter: "look".to_owned(), entity: "LookTarget".to_owned() }];
        }
        runner.children.extend([
            part("LeftFoot", "foot_l", [0.05, 0.03, 0.1], [0.0, -0.03, 0.07]),
            part("RightFoot", "foot_r", [0.05, 0.03, 0.1], [0.0, -0.03, 0.07]),
            part("Pelvis", "hips", [0.16, 0.07, 0.09], [0.0, -0.01, 0.0]),
            part("Belly", "spine", [0.13, 0.12, 0.08], [0.0, 0.12, 0.0]),
            part("Chest", "chest", [0.18, 0.13, 0.1], [0.0, 0.1, 0.0]),
            part("Head", "head", [0.1, 0.12, 0.11], [0.0, 0.1, 0.0]),
            part("Nose", "head", [0.02, 0.02, 0.03], [0.0, 0.1, 0.13]),
            part("LeftUpperArm", "upperarm_l", [0.04, 0.14, 0.04], [0.0, -0.14, 0.0]),
            part("LeftForearm", "forearm_l", [0.035, 0.13, 0.035], [0.0, -0.13, 0.0]),
            part("RightUpperArm", "upperarm_r", [0.04, 0.14, 0.04], [0.0, -0.14, 0.0]),
            part("RightForearm", "forearm_r", [0.035, 0.13, 0.035], [0.0, -0.13, 0.0]),
        ]);
    }
    scene.entities.push(EntityDesc {
        name: "LookTarget".to_owned(),
        transform: Some(Transform::from_translation(LOOK_TARGET)),
        mesh: Some(MeshDesc::Box { half_extents: Vec3::splat(0.05) }),
        ..EntityDesc::default()
    });
}

/// The `locomotion` sample: the figure on a tilted ground playing [`steering_graph`]; beside it
/// `graphs/locomotion.graph.ron` (idle, stride and sprint on a 1D blend space driven by `speed`,
/// a `lean` parameter tilting the hips through an Adjust node) and [`controller_graph`] (a state
/// machine with a jump, a fall and a landing), both to preview on the Runner. `marrow gen-runner
/// --sample locomotion` writes it to `projects/locomotion` beside the runner.
pub fn locomotion_project() -> Project {
    let mut p = runner_project();
    p.manifest.name = "locomotion".to_owned();
    let skeleton = figure_skeleton();
    let bones = skeleton.bone_names.clone();
    let asset = |clip: Clip| Arc::new(ClipAsset { clip: Arc::new(clip), bones: bones.clone() });
    for (path, clip) in figure_clips(&skeleton) {
        if !p.manifest.clips.iter().any(|c| c == path) {
            p.manifest.clips.push(path.to_owned());
        }
        p.clips.insert(path.to_owned(), asset(clip));
    }
    p.manifest.graphs.push(LOCOMOTION_GRAPH.to_owned());
    p.graphs.insert(LOCOMOTION_GRAPH.to_owned(), Arc::new(super::runner::speed_graph()));
    for (path, clip) in super::runner::air_clips(&skeleton) {
        p.manifest.clips.push(path.to_owned());
        p.clips.insert(path.to_owned(), asset(clip));
    }
    p.manifest.graphs.push(CONTROLLER_GRAPH.to_owned());
    p.graphs.insert(CONTROLLER_GRAPH.to_owned(), Arc::new(controller_graph()));
    p.manifest.graphs.push(STEERING_GRAPH.to_owned());
    p.graphs.insert(STEERING_GRAPH.to_owned(), Arc::new(steering_graph()));
    p.skeletons.insert(SKELETON_PATH.to_owned(), Arc::new(skeleton));
    if let Some(scene) = p.scenes.get_mut(SCENE_PATH).map(Arc::make_mut) {
        figure_scene(scene);
    }
    p
}
