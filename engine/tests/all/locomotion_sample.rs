//! The committed `projects/locomotion` sample does what it shows: the Runner steers on a 2D blend
//! space, its feet stay on the tilted ground through whole gait cycles (each ankle exactly where
//! the flat-ground walk puts it, lifted by the plane's height under it), and its head looks at
//! `LookTarget` (bound to its `look` vector parameter), following it when the entity moves, or
//! when it rides a bone socket.

use std::path::Path;

use glam::{Mat4, Vec3};
use marrow_engine::graph::ParamValue;
use marrow_engine::math::Transform;
use marrow_engine::project::locomotion::{GROUND_SLOPE, LOOK_TARGET};
use marrow_engine::project::{Library, Project};
use marrow_engine::scene::{Entity, World};

const DT: f32 = 1.0 / 60.0;

fn sample() -> (World, Entity) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../projects/locomotion");
    let project = Project::load(&root).unwrap();
    let library = Library::load(&project, &root).unwrap();
    let world = library.instantiate(&project, "scenes/main.scene.ron").unwrap();
    let runner = world.find("Runner").unwrap();
    (world, runner)
}

fn set(world: &mut World, rig: Entity, name: &str, v: f32) {
    let g = world.animator_mut(rig).unwrap().current_graph_mut().expect("the Runner plays a graph");
    let i = g.program().parameter_index(name).unwrap_or_else(|| panic!("no parameter {name}"));
    assert!(g.set_parameter(i, ParamValue::Float(v)));
}

fn model(world: &World, rig: Entity, bone: &str) -> Mat4 {
    let a = world.animator(rig).unwrap();
    let i = a.skeleton().index_of(bone).unwrap();
    world.rig_pose(rig).unwrap().model[i]
}

fn ankles(world: &World, rig: Entity) -> [Vec3; 2] {
    ["foot_l", "foot_r"].map(|b| model(world, rig, b).w_axis.truncate())
}

#[test]
fn the_feet_stay_on_the_slope_through_every_gait_of_the_blend_space() {
    let rise = GROUND_SLOPE.tan();
    for (speed, direction) in [(1.0, 0.0), (2.0, 0.0), (0.0, 0.0), (1.0, -1.0), (1.0, 1.0), (1.4, 0.5)] {
        let (mut tilted, rig) = sample();
        let (mut flat, flat_rig) = sample();
        for (w, r, slope) in [(&mut tilted, rig, GROUND_SLOPE), (&mut flat, flat_rig, 0.0)] {
            set(w, r, "speed", speed);
            set(w, r, "direction", direction);
            set(w, r, "slope", slope);
        }
        let (mut lifted, mut lowered) = (f32::MIN, f32::MAX);
        // Two seconds: at least one whole cycle of every gait (the idle's is two seconds).
        for tick in 0..120 {
            tilted.frame(1, DT);
            flat.frame(1, DT);
            for (k, (on, off)) in ankles(&tilted, rig).into_iter().zip(ankles(&flat, flat_rig)).enumerate() {
                let want = off + Vec3::Y * (rise * off.z);
                // A planted leg is straight: at full extension the solve's angle is ill-conditioned
                // (an arc cosine at 1), so it holds to a fraction of a millimetre, not to 1e-5.
                assert!(
                    on.abs_diff_eq(want, 1e-3),
                    "speed {speed} direction {direction} tick {tick} foot {k}: {on} (flat {off}, want {want})"
                );
                lifted = lifted.max(want.y - off.y);
                lowered = lowered.min(want.y - off.y);
            }
        }
        if speed > 0.0 {
            // The stride plants behind the hips: the feet follow the plane over a few centimetres.
            assert!(lifted - lowered > 0.02, "the feet step along the slope: {lifted} {lowered}");
        }
    }
}

#[test]
fn the_head_looks_at_the_target_and_follows_it_when_it_moves() {
    let (mut world, rig) = sample();
    let target = world.find("LookTarget").unwrap();
    let aim_error = |world: &World, at: Vec3| {
        let head = model(world, rig, "head");
        let eye = head.transform_point3(Vec3::new(0.0, 0.1, 0.1));
        let forward = head.transform_vector3(Vec3::Z).normalize();
        forward.angle_between((at - eye).normalize())
    };
    for _ in 0..30 {
        world.frame(1, DT);
        assert!(aim_error(&world, LOOK_TARGET) < 1e-3, "{}", aim_error(&world, LOOK_TARGET));
    }
    // The user drags the target to the runner's other side, lower down.
    let moved = Vec3::new(-1.2, 1.1, 1.5);
    world.set_transform(target, Some(Transform::from_translation(moved))).unwrap();
    for _ in 0..30 {
        world.frame(1, DT);
        assert!(aim_error(&world, moved) < 1e-3, "{}", aim_error(&world, moved));
    }
    // The spine and neck share the turn: the chest turns, but less than the head.
    let yaw = |m: Mat4| {
        let f = m.transform_vector3(Vec3::Z);
        f.x.atan2(f.z)
    };
    let (chest, head) = (yaw(model(&world, rig, "chest")), yaw(model(&world, rig, "head")));
    assert!(chest < -0.05 && head < chest, "chest {chest} head {head}");
}

#[test]
fn a_look_target_on_a_bone_socket_follows_the_bone_one_frame_behind() {
    // LookTarget moved onto a socket of the Runner's left foot, 10 cm ahead of it: the head
    // follows the foot. The binding reads the socket where the last frame placed it (this frame's
    // pose does not exist yet when the graph reads its parameters).
    use marrow_engine::scene::SocketDesc;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../projects/locomotion");
    let mut project = Project::load(&root).unwrap();
    let library = Library::load(&project, &root).unwrap();
    let scene = std::sync::Arc::make_mut(project.scenes.get_mut("scenes/main.scene.ron").unwrap());
    let at = scene.entities.iter().position(|e| e.name == "LookTarget").unwrap();
    let mut target = scene.entities.remove(at);
    target.transform = Some(Transform::IDENTITY);
    target.socket = Some(SocketDesc {
        bone: "foot_l".into(),
        offset: Transform::from_translation(Vec3::new(0.0, 0.0, 0.1)),
    });
    let runner = scene.entities.iter_mut().find(|e| e.name == "Runner").unwrap();
    runner.children.push(target);
    runner.animator.as_mut().unwrap().targets[0].entity = "Runner/LookTarget".into();
    let mut world = library.instantiate(&project, "scenes/main.scene.ron").unwrap();
    let (rig, target) = (world.find("Runner").unwrap(), world.find("Runner/LookTarget").unwrap());
    let look = |world: &World| {
        let g = world.animator(rig).unwrap().current_graph().unwrap();
        match g.parameter("look") {
            Some(ParamValue::Vec3(v)) => v,
            other => panic!("the look parameter is a vector: {other:?}"),
        }
    };
    let mut placed = None;
    let mut moved = 0.0f32;
    for _ in 0..60 {
        world.frame(1, DT);
        if let Some(p) = placed {
            assert!(look(&world).abs_diff_eq(p, 1e-5), "{} vs the socket's last place {p}", look(&world));
            moved = moved.max(p.distance(LOOK_TARGET));
        }
        let rig_from_world = world.world_matrix(rig).unwrap().inverse();
        let socket = rig_from_world.transform_point3(world.world_matrix(target).unwrap().w_axis.truncate());
        let foot = model(&world, rig, "foot_l").transform_point3(Vec3::new(0.0, 0.0, 0.1));
        assert!(socket.abs_diff_eq(foot, 1e-5), "the socket sits on the foot: {socket} {foot}");
        placed = Some(socket);
    }
    assert!(moved > 1.0, "the target is on the foot, far from where LookTarget stood");
}

/// The locomotion sample's files with `from` replaced by `to` in its scene (once).
fn scene_edited(from: &str, to: &str) -> Vec<(String, String)> {
    let mut files = crate::oracle::locomotion_files();
    let scene = files.iter_mut().find(|(p, _)| p == "scenes/main.scene.ron").unwrap();
    assert_eq!(scene.1.matches(from).count(), 1, "{from} once in the scene");
    scene.1 = scene.1.replace(from, to);
    files
}

#[test]
fn a_target_binding_to_a_missing_entity_or_parameter_is_refused_by_check_and_named_while_playing() {
    // Found by the project mutation run: the LookTarget entity renamed, the binding left naming
    // it. `marrow check` passed it and the runtime logged a fault every play.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../projects/locomotion");
    for (from, to, field, says, fault) in [
        (
            "name: \"LookTarget\"",
            "name: \"Gaze\"",
            "animator.targets[0].entity",
            "no entity at path \"LookTarget\" in scene",
            "target entity \"LookTarget\" is not in the scene",
        ),
        (
            "parameter: \"look\"",
            "parameter: \"gaze\"",
            "animator.targets[0].parameter",
            "the graph has no vector parameter \"gaze\"",
            "its graph has no vector parameter \"gaze\"",
        ),
    ] {
        let files = scene_edited(from, to);
        let report = marrow_engine::project::check_project_files(&root, &files);
        let errors: Vec<String> = report.errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(errors.len(), 1, "{to}: {errors:?}");
        assert!(errors[0].contains("main.scene.ron") && errors[0].contains("Runner"), "{}", errors[0]);
        assert!(errors[0].contains(field) && errors[0].contains(says), "{}", errors[0]);
        // Played anyway (the editor opens what fails the check): the head keeps its look, the
        // fault is logged once however many frames play, and the Runner still walks.
        let project = Project::from_files(&root, &files).unwrap();
        let library = Library::load(&project, &root).unwrap();
        let mut world = library.instantiate(&project, "scenes/main.scene.ron").unwrap();
        let rig = world.find("Runner").unwrap();
        world.frame(1, DT);
        let start = model(&world, rig, "foot_l");
        world.frame(30, DT);
        let named: Vec<&String> = world.faults().entries().iter().filter(|f| f.contains(fault)).collect();
        assert_eq!(named.len(), 1, "{:?}", world.faults().entries());
        assert!(named[0].contains("rig Runner"), "{}", named[0]);
        assert!(model(&world, rig, "foot_l").w_axis.distance(start.w_axis) > 0.01, "the Runner walks");
    }
    // The sample as committed passes.
    let sound = marrow_engine::project::check_project_files(&root, &crate::oracle::locomotion_files());
    assert!(sound.errors.is_empty(), "{:?}", sound.errors);
}
