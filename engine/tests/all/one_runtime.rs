//! One runtime: a glTF model run through the scene `World` (as the editor runs it, built with
//! `gltf::model_entity` and the project `Library`) poses exactly as `ScenePose` evaluates the
//! imported file: every joint's world matrix and every skinning matrix agree at every key
//! time, both ends and between.

use crate::support;

use marrow_engine::gltf::{ScenePose, import, model_entity};
use marrow_engine::project::{Library, Project};
use marrow_engine::scene::{SceneDesc, World};
use support::gltf_dir;

fn check(model: &str, file: &str) {
    let root = gltf_dir().join(model);
    let scene = import(root.join(file)).unwrap();
    let Some(anim) = scene.animations.iter().position(|a| !a.clips.is_empty()) else {
        panic!("{model} has no skeletal animation");
    };
    let aname = scene.animations[anim].name.clone();
    let entity = model_entity(&scene, file, model, &|_| Some(format!("{file}#{aname}")));
    let mut project = Project::default();
    project.manifest.assets.push(file.to_owned());
    let (lib, errors) = Library::load_cached(&project, &root, &mut Default::default());
    assert!(errors.is_empty(), "{errors:?}");
    let mut world =
        World::instantiate(&SceneDesc { name: "s".into(), entities: vec![entity] }, &lib).unwrap();
    let rigs: Vec<_> = world.rigs().collect();
    assert_eq!(rigs.len(), scene.rigs.len());
    let mut pose = ScenePose::new(&scene);
    let duration = scene.animations[anim].duration;
    let mut times: Vec<f32> = (0..=22).map(|i| duration * i as f32 / 22.0).collect();
    for c in &scene.animations[anim].clips {
        for ch in c.clip.channels() {
            if let Some(t) = &ch.rotation {
                times.extend_from_slice(t.times());
            }
        }
    }
    for &t in &times {
        for &r in &rigs {
            world.animator_mut(r).unwrap().seek(t);
        }
        world.frame(0, 1.0 / 60.0);
        pose.evaluate(&scene, Some(anim), t).unwrap();
        for (i, &r) in rigs.iter().enumerate() {
            let rig_world = world.world_matrix(r).unwrap();
            let rp = world.rig_pose(r).unwrap();
            let want_world = pose.rig_world(&scene, i);
            for b in 0..rp.model.len() {
                let got = rig_world * rp.model[b];
                let want = want_world * pose.rig_model[i][b];
                assert!(got.abs_diff_eq(want, 2e-5), "{model} t = {t} rig {i} bone {b}: {got} vs {want}");
                assert!(
                    rp.palette[b].abs_diff_eq(pose.rig_palette[i][b], 2e-5),
                    "{model} t = {t} rig {i} bone {b} palette"
                );
            }
        }
    }
}

#[test]
fn cesium_man_poses_the_same_in_the_world_and_scene_pose() {
    check("CesiumMan", "CesiumMan.glb");
}

#[test]
fn rigged_figure_poses_the_same_in_the_world_and_scene_pose() {
    check("RiggedFigure", "RiggedFigure.glb");
}

#[test]
fn rigged_simple_and_simple_skin_pose_the_same_in_the_world_and_scene_pose() {
    check("RiggedSimple", "RiggedSimple.glb");
    check("SimpleSkin", "SimpleSkin.gltf");
}
