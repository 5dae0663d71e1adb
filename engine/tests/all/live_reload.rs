//! A game's live reload of a graph file: the locomotion sample runs from its folder, its graph
//! file is rewritten (a blend space sample moved), and `Project::reload_file`,
//! `Library::replace_graphs` and `World::rebind_graphs` put the recompiled graph under the rig at
//! the same time with its parameters kept: the next frame is the new graph's pose, bit for bit a
//! fresh world's at that time with those parameters. A graph that no longer compiles is refused
//! and the rig plays on.

use std::path::{Path, PathBuf};

use marrow_engine::graph::ParamValue;
use marrow_engine::project::reload::{AssetKind, Reloaded};
use marrow_engine::project::runner::{LOCOMOTION_GRAPH, locomotion_project};
use marrow_engine::project::{Library, Project};
use marrow_engine::scene::{Entity, World};

const DT: f32 = 1.0 / 60.0;

fn temp_project(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("marrow-live-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // The Runner plays the speed graph (the sample's own plays the steering graph).
    let mut project = locomotion_project();
    let scene = std::sync::Arc::make_mut(project.scenes.values_mut().next().unwrap());
    let runner = scene.entities.iter_mut().find(|e| e.name == "Runner").unwrap();
    runner.animator.as_mut().unwrap().graph = Some(LOCOMOTION_GRAPH.to_owned());
    project.save(&dir).unwrap();
    dir
}

fn running(project: &Project, root: &Path) -> (Library, World, Entity) {
    let library = Library::load(project, root).unwrap();
    let mut world = library.instantiate(project, &project.manifest.scenes[0]).unwrap();
    let rig = world.find("Runner").unwrap();
    world.frame(1, DT);
    let g = world.animator_mut(rig).unwrap().current_graph_mut().expect("the runner plays its graph");
    for (name, v) in [("speed", 1.5), ("lean", 0.2)] {
        let i = g.program().parameter_index(name).unwrap();
        g.set_parameter(i, ParamValue::Float(v));
    }
    (library, world, rig)
}

#[test]
fn a_rewritten_graph_file_recompiles_under_its_rig_at_the_same_time_with_its_parameters() {
    let root = temp_project("graph");
    let mut project = Project::load(&root).unwrap();
    let (mut library, mut world, rig) = running(&project, &root);
    for _ in 0..45 {
        world.frame(1, DT);
    }
    let time = world.animator(rig).unwrap().time();
    let file = root.join(LOCOMOTION_GRAPH);
    let text = std::fs::read_to_string(&file).unwrap();
    let moved = text.replacen("position: 2.0,", "position: 3.0,", 1);
    assert_ne!(moved, text);
    std::fs::write(&file, moved).unwrap();
    assert_eq!(project.reload_file(&root, LOCOMOTION_GRAPH).unwrap(), Reloaded::Replaced(AssetKind::Graph));
    library.replace_graphs(&project, &[LOCOMOTION_GRAPH.to_owned()]);
    assert_eq!(world.rebind_graphs(&[LOCOMOTION_GRAPH.to_owned()], &library), Ok(1));
    let a = world.animator(rig).unwrap();
    assert_eq!(a.time(), time, "the head keeps its time");
    let g = a.current_graph().unwrap();
    assert_eq!(g.parameter_at(g.program().parameter_index("speed").unwrap()), Some(ParamValue::Float(1.5)));
    world.frame(1, DT);
    let after = world.rig_pose(rig).unwrap().local.to_vec();

    let (_, mut fresh, r) = running(&project, &root);
    fresh.animator_mut(r).unwrap().seek(time);
    fresh.frame(1, DT);
    assert_eq!(after, fresh.rig_pose(r).unwrap().local, "the new graph's pose, bit for bit");

    // A graph that no longer compiles (a sample naming a missing clip) is refused; the rig plays
    // on with the program it had.
    let broken =
        std::fs::read_to_string(&file).unwrap().replace("clips/sprint.clip.ron", "clips/gone.clip.ron");
    std::fs::write(&file, broken).unwrap();
    assert_eq!(project.reload_file(&root, LOCOMOTION_GRAPH).unwrap(), Reloaded::Replaced(AssetKind::Graph));
    library.replace_graphs(&project, &[LOCOMOTION_GRAPH.to_owned()]);
    let e = world.rebind_graphs(&[LOCOMOTION_GRAPH.to_owned()], &library).unwrap_err();
    assert!(
        e.contains("cannot play graph graphs/locomotion.graph.ron") && e.contains("gone.clip.ron"),
        "{e}"
    );
    let before = world.animator(rig).unwrap().time();
    world.frame(1, DT);
    assert!(world.animator(rig).unwrap().time() > before, "the rig plays on");
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_file_that_does_not_parse_is_an_error_and_the_project_keeps_its_last_good_version() {
    let root = temp_project("broken");
    let mut project = Project::load(&root).unwrap();
    let good = project.graphs[LOCOMOTION_GRAPH].clone();
    std::fs::write(root.join(LOCOMOTION_GRAPH), "(version: 1, nodes: [").unwrap();
    let e = project.reload_file(&root, LOCOMOTION_GRAPH).unwrap_err().to_string();
    assert!(e.contains("graphs/locomotion.graph.ron"), "{e}");
    assert!(std::sync::Arc::ptr_eq(&project.graphs[LOCOMOTION_GRAPH], &good));
    std::fs::remove_file(root.join(LOCOMOTION_GRAPH)).unwrap();
    assert_eq!(project.reload_file(&root, LOCOMOTION_GRAPH).unwrap(), Reloaded::Missing);
    assert!(std::sync::Arc::ptr_eq(&project.graphs[LOCOMOTION_GRAPH], &good), "kept");
    // Only authored files are read; a path leaving the folder is refused.
    assert!(project.reload_file(&root, "../outside.clip.ron").is_err());
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_rewritten_skeleton_file_takes_its_new_bind_pose_in_place_and_a_renamed_bone_is_refused() {
    use marrow_engine::project::runner::{SKELETON_PATH, runner_project};
    use marrow_engine::project::skeleton_to_string;
    let root = std::env::temp_dir().join(format!("marrow-live-skeleton-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    runner_project().save(&root).unwrap();
    let mut project = Project::load(&root).unwrap();
    let mut library = Library::load(&project, &root).unwrap();
    let mut world = library.instantiate(&project, &project.manifest.scenes[0]).unwrap();
    let rig = world.find("Runner").unwrap();
    for _ in 0..30 {
        world.frame(1, DT);
    }
    let time = world.animator(rig).unwrap().time();
    // Longer shins: the shins' bind translation (not animated) grows.
    let old = project.skeletons[SKELETON_PATH].clone();
    let bones = (0..old.bone_count())
        .map(|i| {
            let mut t = old.bind_pose[i];
            if old.bone_names[i].starts_with("shin") {
                t.translation *= 1.5;
            }
            (old.bone_names[i].clone(), old.parents[i], t)
        })
        .collect();
    let longer = marrow_engine::skeleton::Skeleton::from_bind_pose(old.name.clone(), bones).unwrap();
    std::fs::write(root.join(SKELETON_PATH), skeleton_to_string(&longer)).unwrap();
    assert_eq!(project.reload_file(&root, SKELETON_PATH).unwrap(), Reloaded::Replaced(AssetKind::Skeleton));
    library.replace_skeletons(&project, &[SKELETON_PATH.to_owned()]);
    assert_eq!(world.rebind_skeletons(&[SKELETON_PATH.to_owned()], &library), Ok(1));
    assert_eq!(world.animator(rig).unwrap().time(), time, "the head keeps its time");
    world.frame(1, DT);
    let after = world.rig_pose(rig).unwrap().model.to_vec();
    let mut fresh = library.instantiate(&project, &project.manifest.scenes[0]).unwrap();
    let r = fresh.find("Runner").unwrap();
    fresh.frame(1, DT);
    fresh.animator_mut(r).unwrap().seek(time);
    fresh.frame(1, DT);
    assert_eq!(after, fresh.rig_pose(r).unwrap().model, "the new bind pose, bit for bit");

    // A renamed bone changes what clips and sockets were bound to: refused, the rig plays on.
    let mut renamed = longer.clone();
    renamed.bone_names[1] = "thigh_left".into();
    std::fs::write(root.join(SKELETON_PATH), skeleton_to_string(&renamed)).unwrap();
    project.reload_file(&root, SKELETON_PATH).unwrap();
    library.replace_skeletons(&project, &[SKELETON_PATH.to_owned()]);
    let e = world.rebind_skeletons(&[SKELETON_PATH.to_owned()], &library).unwrap_err();
    assert!(e.contains("changed its bones"), "{e}");
    world.frame(1, DT);
    assert!(world.animator(rig).unwrap().skeleton().bone_names[1] == "thigh_l");
    let _ = std::fs::remove_dir_all(&root);
}
