//! What cannot play shows its bind pose: `World::load_lenient` keeps a rig whose clip or graph
//! does not resolve, with everything under it, and returns the faults; `World::load` still
//! refuses the scene.

use std::path::Path;

use marrow_engine::math::Transform;
use marrow_engine::project::Library;
use marrow_engine::scene::{EntityDesc, MeshDesc, SceneDesc, SceneError, World};
use marrow_engine::synthetic::{mocap_like_clip, mocap_skeleton, one_rig_project};

/// The synthetic one-rig scene with a box child, its Animator's clip (and graph) set as given.
fn scene(clip: Option<&str>, graph: Option<&str>) -> (Library, SceneDesc) {
    let sk = mocap_skeleton();
    let clip_asset = mocap_like_clip(&sk, "walk", 30, 30.0, 1);
    let project = one_rig_project(sk, vec![("clips/walk.clip.ron", clip_asset)]);
    let (lib, errors) = Library::load_cached(&project, Path::new("."), &mut Default::default());
    assert!(errors.is_empty(), "{errors:?}");
    let mut desc = (*project.scenes["scenes/main.scene.ron"]).clone();
    let rig = &mut desc.entities[0];
    let a = rig.animator.as_mut().unwrap();
    a.clip = clip.map(str::to_owned);
    a.graph = graph.map(str::to_owned);
    rig.children.push(EntityDesc {
        name: "Prop".into(),
        transform: Some(Transform::IDENTITY),
        mesh: Some(MeshDesc::Box { half_extents: glam::Vec3::splat(0.1) }),
        ..Default::default()
    });
    (lib, desc)
}

fn assert_bind_pose(w: &mut World) {
    w.frame(3, 1.0 / 30.0);
    let rig = w.find("Rig").expect("the rig stays");
    assert!(w.find("Rig/Prop").and_then(|p| w.mesh(p)).is_some(), "its child keeps its mesh");
    let sk = w.animator(rig).unwrap().skeleton().clone();
    assert_eq!(w.rig_pose(rig).unwrap().local[..sk.bone_count()], sk.bind_pose[..]);
}

#[test]
fn a_missing_clip_leaves_the_rig_in_bind_pose_and_is_returned() {
    let (lib, desc) = scene(Some("clips/gone.clip.ron"), None);
    let mut strict = World::new();
    assert!(matches!(strict.load(&desc, &lib), Err(SceneError::Reference { field: "animator.clip", .. })));
    assert!(strict.find("Rig").is_none(), "load refuses the scene");
    let mut w = World::new();
    let faults = w.load_lenient(&desc, &lib).unwrap();
    assert_eq!(faults.len(), 1, "{faults:?}");
    assert!(
        matches!(&faults[0], SceneError::Reference { entity, field: "animator.clip", .. } if entity == "Rig"),
        "{faults:?}"
    );
    assert_bind_pose(&mut w);
}

#[test]
fn a_graph_that_does_not_resolve_leaves_the_bind_pose_not_the_clip_under_it() {
    let (lib, desc) = scene(Some("clips/walk.clip.ron"), Some("graphs/gone.graph.ron"));
    let mut w = World::new();
    let faults = w.load_lenient(&desc, &lib).unwrap();
    assert!(matches!(&faults[..], [SceneError::Reference { field: "animator.graph", .. }]), "{faults:?}");
    assert!(w.animator(w.find("Rig").unwrap()).unwrap().current_clip().is_none());
    assert_bind_pose(&mut w);
    // The same scene with a clip that resolves plays it: the pose is not the bind pose.
    let (lib, desc) = scene(Some("clips/walk.clip.ron"), None);
    let mut w = World::new();
    assert!(w.load_lenient(&desc, &lib).unwrap().is_empty());
    w.frame(3, 1.0 / 30.0);
    let rig = w.find("Rig").unwrap();
    let sk = w.animator(rig).unwrap().skeleton().clone();
    assert_ne!(w.rig_pose(rig).unwrap().local[..sk.bone_count()], sk.bind_pose[..]);
}
