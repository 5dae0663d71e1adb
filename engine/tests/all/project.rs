//! Project files: every project under `projects/` loads, saves byte-identically and reloads equal
//! (set `MARROW_BLESS=1` to rewrite them through the saver); the runner's committed files equal
//! what its generator writes; a scene saved mid-fade or paused holds no session state; damaged
//! files are named with line and column; saves are atomic and stable; `check_project` names
//! every fault.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use glam::{Quat, Vec3};
use marrow_engine::pose::BoneAdjust;
use marrow_engine::project::file::ClipAsset;
use marrow_engine::project::runner::{CLIP_PATH, SCENE_PATH, runner_project};
use marrow_engine::project::{
    Library, Project, ProjectError, check_project, clip_from_str, scene_from_str, scene_to_string,
    write_atomic,
};
use marrow_engine::scene::{AssetSource, World};

const DT: f32 = 1.0 / 60.0;

fn projects_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../projects")
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("marrow-project-test-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn project_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(projects_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("project.ron").is_file())
        .collect();
    dirs.sort();
    dirs
}

/// Copies the binary assets (the files the saver does not write) of `p` from `from` to `to`.
fn copy_binary_assets(p: &Project, from: &Path, to: &Path) {
    for a in p.manifest.assets.iter().filter(|a| !a.ends_with(".ron")) {
        std::fs::create_dir_all(to.join(a).parent().unwrap()).unwrap();
        std::fs::copy(from.join(a), to.join(a)).unwrap();
    }
}

#[test]
fn every_project_loads_saves_byte_identically_and_reloads_equal() {
    let dirs = project_dirs();
    let names: Vec<String> =
        dirs.iter().map(|d| d.file_name().unwrap().to_string_lossy().into_owned()).collect();
    assert_eq!(names, ["cesium_man", "crowd", "locomotion", "mocap", "particle_figure", "runner"]);
    for dir in dirs {
        let p = Project::load(&dir).unwrap_or_else(|e| panic!("{e}"));
        if std::env::var_os("MARROW_BLESS").is_some() {
            p.save(&dir).unwrap();
        }
        for (path, text) in p.to_files() {
            let on_disk = std::fs::read_to_string(dir.join(&path)).unwrap();
            assert_eq!(on_disk, text, "{}: saving changes {path}", dir.display());
        }
        let tmp = temp_dir(&dir.file_name().unwrap().to_string_lossy());
        copy_binary_assets(&p, &dir, &tmp);
        p.save(&tmp).unwrap();
        let q = Project::load(&tmp).unwrap();
        assert_eq!(p, q, "{}: reloads equal", dir.display());
        for (path, _) in p.to_files() {
            assert_eq!(
                std::fs::read(tmp.join(&path)).unwrap(),
                std::fs::read(dir.join(&path)).unwrap(),
                "{path}"
            );
        }
        // Every scene instantiates and runs without a fault; the project checks clean.
        let lib = Library::load(&p, &dir).unwrap();
        for s in &p.manifest.scenes {
            let mut w = lib.instantiate(&p, s).unwrap();
            for _ in 0..120 {
                w.frame(1, DT);
            }
            assert!(w.faults().entries().is_empty(), "{s}: {:?}", w.faults().entries());
            // `mocap` shows the capture beside the character it was retargeted onto.
            let characters = if dir.ends_with("mocap") { 2 } else { 1 };
            assert_eq!(w.rigs().count() + w.crowds().count(), characters, "{s}: one character or one crowd");
        }
        let report = check_project(&dir);
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}

#[test]
fn the_committed_runner_files_are_what_the_generator_writes() {
    let dir = projects_dir().join("runner");
    let generated = runner_project();
    let files = generated.to_files();
    assert_eq!(files.len(), 4);
    for (path, text) in files {
        assert_eq!(
            std::fs::read_to_string(dir.join(&path)).unwrap(),
            text,
            "{path} drifted: run `marrow gen-runner`"
        );
    }
    assert_eq!(Project::load(&dir).unwrap(), generated);
}

#[test]
fn the_committed_locomotion_files_are_what_the_generator_writes() {
    let dir = projects_dir().join("locomotion");
    let generated = marrow_engine::project::runner::locomotion_project();
    for (path, text) in generated.to_files() {
        assert_eq!(
            std::fs::read_to_string(dir.join(&path)).unwrap_or_default(),
            text,
            "{path} drifted: run `marrow gen-runner --sample locomotion`"
        );
    }
    assert_eq!(Project::load(&dir).unwrap(), generated);
    assert!(check_project(&dir).errors.is_empty(), "{:#?}", check_project(&dir).errors);
}

#[test]
fn cesium_man_walks_on_a_loop_with_a_hat_on_its_head() {
    let dir = projects_dir().join("cesium_man");
    assert!(dir.join("CREDITS.md").is_file() && dir.join("assets/CesiumMan.README.md").is_file());
    let p = Project::load(&dir).unwrap();
    let lib = Library::load(&p, &dir).unwrap();
    let mut w = lib.instantiate(&p, "scenes/main.scene.ron").unwrap();
    let man = w.find("CesiumMan").unwrap();
    let hat = w.find("CesiumMan/Hat").unwrap();
    let duration = w.animator(man).unwrap().current_clip().unwrap().duration();
    assert!(duration > 1.5);
    let ticks = (duration / DT) as usize + 30;
    let head = w.animator(man).unwrap().skeleton().index_of("Skeleton_neck_joint_2").unwrap();
    let offset = w.socket(hat).unwrap().offset;
    for _ in 0..ticks {
        w.frame(1, DT);
        let want = w.world_matrix(man).unwrap() * w.rig_pose(man).unwrap().model[head] * offset.to_mat4();
        assert!(w.world_matrix(hat).unwrap().abs_diff_eq(want, 1e-5));
    }
    assert!(w.animator(man).unwrap().is_playing(), "still walking after a lap: it loops");
    assert!(w.world_matrix(hat).unwrap().w_axis.y > 1.2, "the hat is up on the head");
    assert_eq!(w.mesh(w.find("CesiumMan/Body").unwrap()).unwrap().rig(), Some(man));
}

#[test]
fn a_skinned_mesh_moved_off_its_rig_is_refused_by_check_and_named_while_playing() {
    // Found by the project mutation run: CesiumMan's Body moved 32,769 m along x. Skinning
    // places the vertices from the rig's bones and ignores the mesh entity's transform, so the
    // World logged "sits off its rig's origin" every play, yet `marrow check` passed the scene.
    let dir = projects_dir().join("cesium_man");
    let files = crate::oracle::sample_files("cesium_man");
    let body = "name: \"Body\",\n                    transform: (\n                        translation: (0.0, 0.0, 0.0),";
    let scene = files.iter().position(|(p, _)| p == "scenes/main.scene.ron").unwrap();
    assert_eq!(files[scene].1.matches(body).count(), 1);
    for (moved, off) in
        [("(0.5, 0.0, 0.0)", true), ("(0.00001, 0.0, 0.0)", false), ("(0.0, 0.0, 0.0)", false)]
    {
        let mut files = files.clone();
        files[scene].1 = files[scene].1.replace(body, &body.replace("(0.0, 0.0, 0.0)", moved));
        let errors: Vec<String> = marrow_engine::project::check_project_files(&dir, &files)
            .errors
            .iter()
            .map(|e| e.to_string())
            .collect();
        let p = Project::from_files(&dir, &files).unwrap();
        let lib = Library::load(&p, &dir).unwrap();
        let mut w = lib.instantiate(&p, "scenes/main.scene.ron").unwrap();
        w.frame(3, DT);
        let faults = w.faults().entries().iter().filter(|f| f.contains("sits off its rig's origin")).count();
        if off {
            assert_eq!(errors.len(), 1, "{errors:?}");
            assert!(
                errors[0].contains("CesiumMan/Body") && errors[0].contains("sits off its rig's origin"),
                "{}",
                errors[0]
            );
            assert_eq!(faults, 1, "{:?}", w.faults().entries());
        } else {
            assert!(errors.is_empty(), "{moved}: {errors:?}");
            assert_eq!(faults, 0, "{moved}: {:?}", w.faults().entries());
        }
    }
}

/// The runner project with a second clip (`idle`, a copy of the stride) to fade to.
fn runner_with_idle() -> (Project, Library, Arc<marrow_engine::clip::Clip>) {
    let mut p = runner_project();
    let mut idle: ClipAsset = (*p.clips[CLIP_PATH]).clone();
    Arc::make_mut(&mut idle.clip).name = "idle".into();
    p.manifest.clips.push("clips/idle.clip.ron".into());
    p.clips.insert("clips/idle.clip.ron".into(), idle.into());
    let lib = Library::load(&p, Path::new(".")).unwrap();
    let sk = lib.skeleton("assets/runner.skeleton.ron").unwrap();
    let idle = lib.clip("clips/idle.clip.ron", &sk).unwrap();
    (p, lib, idle)
}

#[test]
fn a_scene_saved_mid_fade_holds_no_session_state_and_reloads_as_the_clip_faded_to() {
    let (p, lib, idle) = runner_with_idle();
    let mut w = lib.instantiate(&p, SCENE_PATH).unwrap();
    let runner = w.find("Runner").unwrap();
    for _ in 0..30 {
        w.frame(1, DT);
    }
    let a = w.animator_mut(runner).unwrap();
    a.cross_fade_to(idle.clone(), 0.5, true);
    a.add_adjust(BoneAdjust::rotate(1, Quat::from_rotation_x(0.3)));
    for _ in 0..10 {
        w.frame(1, DT);
    }
    let a = w.animator(runner).unwrap();
    assert!(a.fade_weight() > 0.2 && a.fade_weight() < 0.8 && a.outgoing_clip().is_some(), "mid-fade");
    assert!(!w.events().is_empty() || a.is_playing());
    let text = scene_to_string(&w.to_desc());
    for session in
        ["playing", "time", "fade", "adjust", "event", "selection", "weight", "started", "remaining"]
    {
        assert!(!text.contains(session), "{session:?} in the saved scene:\n{text}");
    }
    assert!(text.contains("clip: \"clips/idle.clip.ron\""), "{text}");
    let desc = scene_from_str(&text, Path::new("saved.scene.ron")).unwrap();
    let w2 = World::instantiate(&desc, &lib).unwrap();
    let a2 = w2.animator(w2.find("Runner").unwrap()).unwrap();
    assert!(Arc::ptr_eq(a2.current_clip().unwrap(), &idle));
    assert_eq!(a2.time(), 0.0);
    assert!(!a2.is_playing() && a2.outgoing_clip().is_none() && a2.adjusts().is_empty());
    assert_eq!(a2.fade_weight(), 1.0);
}

#[test]
fn a_clip_faded_to_as_a_one_shot_is_saved_and_reloaded_as_a_one_shot() {
    let (p, lib, idle) = runner_with_idle();
    assert!(idle.looping, "the idle clip loops on its own");
    let mut w = lib.instantiate(&p, SCENE_PATH).unwrap();
    let runner = w.find("Runner").unwrap();
    w.frame(1, DT);
    w.animator_mut(runner).unwrap().cross_fade_to(idle.clone(), 0.2, false);
    w.frame(1, DT);
    let text = scene_to_string(&w.to_desc());
    assert!(text.contains("looping: false") || text.contains("looping: Some(false)"), "{text}");
    let w2 = World::instantiate(&scene_from_str(&text, Path::new("s.ron")).unwrap(), &lib).unwrap();
    let a2 = w2.animator(w2.find("Runner").unwrap()).unwrap();
    assert_eq!(a2.current_clip().unwrap().name, "idle");
    assert_eq!(a2.current_looping(), Some(false));
}

#[test]
fn a_scene_saved_paused_mid_clip_reloads_at_the_clip_start_and_saves_the_same_bytes() {
    let (p, lib, _) = runner_with_idle();
    let mut w = lib.instantiate(&p, SCENE_PATH).unwrap();
    let runner = w.find("Runner").unwrap();
    for _ in 0..40 {
        w.frame(1, DT);
    }
    w.animator_mut(runner).unwrap().stop();
    w.frame(0, DT);
    assert!(w.animator(runner).unwrap().time() > 0.5);
    let text = scene_to_string(&w.to_desc());
    assert_eq!(text, scene_to_string(&p.scenes[SCENE_PATH]), "nothing authored changed");
    let w2 = World::instantiate(&scene_from_str(&text, Path::new("s.ron")).unwrap(), &lib).unwrap();
    let a2 = w2.animator(w2.find("Runner").unwrap()).unwrap();
    assert_eq!(a2.time(), 0.0);
    assert!(!a2.is_playing());
}

#[test]
fn damaged_files_are_named_with_line_and_column() {
    let path = Path::new("scenes/bad.scene.ron");
    let text = "(\n    version: 1,\n    name: \"x\",\n    entities: [(name: 5)],\n)\n";
    let e = scene_from_str(text, path).unwrap_err();
    match &e {
        ProjectError::Syntax { line, column, .. } => assert_eq!((*line, *column), (4, 22), "{e}"),
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().starts_with("scenes/bad.scene.ron:4:22: "), "{e}");
    let e = scene_from_str("(version: 2, name: \"x\", entities: [])", path).unwrap_err();
    assert!(matches!(e, ProjectError::Version { found: 2, supported: 1, .. }), "{e}");
    // Semantic errors name the entity or field.
    let text = concat!(
        "(version: 1, name: \"x\", entities: [(name: \"A\", children: [",
        "(name: \"B\", transform: (rotation: (0.0, 0.0, 0.0, 0.0)))])])"
    );
    let e = scene_from_str(text, path).unwrap_err().to_string();
    assert!(e.contains("entity A/B: transform") && e.contains("zero length"), "{e}");
    let clip = marrow_engine::project::clip_to_string(&runner_project().clips[CLIP_PATH])
        .replace("easeOutSine", "easeOutSlowly");
    let e = clip_from_str(&clip, Path::new("clips/stride.clip.ron")).unwrap_err().to_string();
    assert!(
        e.contains("clips/stride.clip.ron: tracks/thigh_l/rotation/keys[0]/easing")
            && e.contains("easeOutSlowly"),
        "{e}"
    );
    // A project with a damaged scene names that file.
    let dir = temp_dir("damaged");
    runner_project().save(&dir).unwrap();
    std::fs::write(dir.join(SCENE_PATH), "(version: 1, name: \"runner\", entities: [(name: \"A\",]").unwrap();
    let e = Project::load(&dir).unwrap_err().to_string();
    assert!(e.contains("main.scene.ron:1:"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn saves_are_atomic_and_stable() {
    let dir = temp_dir("atomic");
    let p = runner_project();
    p.save(&dir).unwrap();
    let first: Vec<Vec<u8>> = p.to_files().iter().map(|(f, _)| std::fs::read(dir.join(f)).unwrap()).collect();
    p.save(&dir).unwrap();
    let second: Vec<Vec<u8>> =
        p.to_files().iter().map(|(f, _)| std::fs::read(dir.join(f)).unwrap()).collect();
    assert_eq!(first, second);
    let mut leftovers = Vec::new();
    for sub in ["", "scenes", "clips", "assets"] {
        for e in std::fs::read_dir(dir.join(sub)).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            if name.contains(".tmp") || name.contains(".marrow-tmp-") {
                leftovers.push(name);
            }
        }
    }
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // A save that cannot complete leaves what was there and no temporary file.
    let target = dir.join("scenes/blocked.scene.ron");
    std::fs::create_dir_all(target.join("inside")).unwrap();
    assert!(write_atomic(&target, b"new").is_err());
    assert!(target.join("inside").is_dir());
    let names: Vec<_> =
        std::fs::read_dir(dir.join("scenes")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn check_project_names_every_fault() {
    let dir = temp_dir("check");
    let mut p = runner_project();
    let scene = p.scenes.get_mut(SCENE_PATH).map(std::sync::Arc::make_mut).unwrap();
    let runner = &mut scene.entities[1];
    runner.children[0].socket.as_mut().unwrap().bone = "nope".into();
    runner.children[1].socket.as_mut().unwrap().bone = String::new();
    let mut stray = runner.children[2].clone();
    stray.name = "Stray".into();
    scene.entities.push(stray);
    let mut twin = scene.entities[1].clone();
    twin.name = "Twin".into();
    twin.children.clear();
    twin.animator.as_mut().unwrap().clip = Some("clips/missing.clip.ron".into());
    twin.mesh = Some(marrow_engine::scene::MeshDesc::Asset("assets/none.glb#x".into()));
    scene.entities.push(twin);
    let mut clip = p.clips[CLIP_PATH].clone();
    Arc::make_mut(&mut Arc::make_mut(&mut clip).clip).add_marker("late", 3.0);
    p.clips.insert(CLIP_PATH.into(), clip);
    p.save(&dir).unwrap();
    let report = check_project(&dir);
    let errors: Vec<String> = report.errors.iter().map(|e| e.to_string()).collect();
    let expect = [
        "entity Runner/LeftThigh, socket: skeleton \"runner\" has no bone \"nope\"",
        "entity Runner/LeftShin, socket: skeleton \"runner\" has no bone \"\"",
        "entity Stray, socket: not a direct child of a rig",
        "entity Twin, animator.clip: no clip \"clips/missing.clip.ron\"",
        "entity Twin, mesh: no mesh \"assets/none.glb#x\"",
        "stride.clip.ron: clip \"stride\": marker \"late\" at t = 3 lies outside the clip",
    ];
    for x in expect {
        assert!(errors.iter().any(|e| e.contains(x)), "missing {x:?} in {errors:#?}");
    }
    // The scene's own clip reference names the marker fault too.
    assert_eq!(errors.len(), expect.len() + 1, "{errors:#?}");
    // Scene faults carry their location as data: the entity's path and the field.
    let located: Vec<(&str, &str)> = report
        .errors
        .iter()
        .filter_map(|e| match e {
            ProjectError::Entity { entity, field, .. } => Some((entity.as_str(), field.as_str())),
            _ => None,
        })
        .collect();
    for want in
        [("Runner/LeftThigh", "socket"), ("Stray", "socket"), ("Twin", "animator.clip"), ("Twin", "mesh")]
    {
        assert!(located.contains(&want), "{want:?} not located in {located:?}");
    }
    assert_eq!(report.files, 4);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn check_project_compiles_graphs_and_names_their_faults() {
    use marrow_engine::graph::{AnimGraph, NodeKind};
    let dir = temp_dir("graphs");
    let mut p = runner_project();
    let mut good = AnimGraph::new();
    let c = good.add_node(NodeKind::Clip { clip: CLIP_PATH.into(), speed: 1.0, looping: true }, [0.0, 0.0]);
    let out = good.add_node(NodeKind::Output, [1.0, 0.0]);
    good.connect(c, out, "pose");
    let mut bad = good.clone();
    let missing = bad.add_node(
        NodeKind::Clip { clip: "clips/missing.clip.ron".into(), speed: 1.0, looping: true },
        [0.0, 1.0],
    );
    let blend = bad.add_node(NodeKind::Blend2 { weight: 0.5 }, [0.5, 0.0]);
    bad.connect(c, blend, "a");
    bad.connect(missing, blend, "b");
    bad.connect(blend, out, "pose");
    for (path, g) in [("graphs/good.graph.ron", good), ("graphs/bad.graph.ron", bad)] {
        p.manifest.graphs.push(path.into());
        p.graphs.insert(path.into(), g.into());
    }
    p.save(&dir).unwrap();
    assert_eq!(Project::load(&dir).unwrap(), p, "graphs round-trip through the project");
    let errors: Vec<String> = check_project(&dir).errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(
        errors[0].contains("bad.graph.ron") && errors[0].contains("no clip at \"clips/missing.clip.ron\""),
        "{errors:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_scene_whose_animator_plays_a_graph_round_trips_and_check_locates_bad_graph_references() {
    use marrow_engine::graph::{AnimGraph, NodeKind};
    let dir = temp_dir("graph-scene");
    let mut p = runner_project();
    let mut g = AnimGraph::new();
    let c = g.add_node(NodeKind::Clip { clip: CLIP_PATH.into(), speed: 0.5, looping: true }, [0.0, 0.0]);
    let out = g.add_node(NodeKind::Output, [200.0, 0.0]);
    g.connect(c, out, "pose");
    let mut broken = g.clone();
    broken.connections.clear(); // an Output fed by nothing
    for (path, g) in [("graphs/walk.graph.ron", g), ("graphs/broken.graph.ron", broken)] {
        p.manifest.graphs.push(path.into());
        p.graphs.insert(path.into(), g.into());
    }
    let scene = p.scenes.get_mut(SCENE_PATH).map(std::sync::Arc::make_mut).unwrap();
    scene.entities[1].animator.as_mut().unwrap().graph = Some("graphs/walk.graph.ron".into());
    p.save(&dir).unwrap();
    let reloaded = Project::load(&dir).unwrap();
    assert_eq!(reloaded, p, "the scene and its graph reload equal");
    assert_eq!(
        reloaded.scenes[SCENE_PATH].entities[1].animator.as_ref().unwrap().graph.as_deref(),
        Some("graphs/walk.graph.ron")
    );
    let first: Vec<String> = check_project(&dir).errors.iter().map(|e| e.to_string()).collect();
    assert_eq!(first.len(), 1, "only the broken graph's own fault: {first:#?}");
    assert!(first[0].contains("broken.graph.ron") && first[0].contains("node #1 (Output)"), "{first:?}");
    // The world plays the graph: the rig's animator runs it, not the clip.
    let lib = Library::load(&reloaded, &dir).unwrap();
    let mut world = World::instantiate(&reloaded.scenes[SCENE_PATH], &lib).unwrap();
    world.frame(1, DT);
    let rig = world.find("Runner").unwrap();
    assert!(world.animator(rig).unwrap().current_graph().is_some());

    // A missing graph and a graph that does not compile, each located on its entity and field.
    let scene = p.scenes.get_mut(SCENE_PATH).map(std::sync::Arc::make_mut).unwrap();
    let mut twin = scene.entities[1].clone();
    twin.name = "Twin".into();
    twin.children.clear();
    twin.animator.as_mut().unwrap().graph = Some("graphs/missing.graph.ron".into());
    let mut third = twin.clone();
    third.name = "Third".into();
    third.animator.as_mut().unwrap().graph = Some("graphs/broken.graph.ron".into());
    scene.entities.extend([twin, third]);
    p.save(&dir).unwrap();
    let report = check_project(&dir);
    let located: Vec<(String, String, String)> = report
        .errors
        .iter()
        .filter_map(|e| match e {
            ProjectError::Entity { entity, field, message, .. } => {
                Some((entity.clone(), field.clone(), message.clone()))
            }
            _ => None,
        })
        .collect();
    assert!(
        located.iter().any(|(e, f, m)| e == "Twin"
            && f == "animator.graph"
            && m.contains("no graph \"graphs/missing.graph.ron\"")),
        "{located:#?}"
    );
    assert!(
        located.iter().any(|(e, f, m)| e == "Third"
            && f == "animator.graph"
            && m.contains("broken.graph.ron")
            && m.contains("pose input \"pose\" is not connected")),
        "{located:#?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_hand_written_session_field_is_refused_with_its_line() {
    let text = concat!(
        "(\n    version: 1,\n    name: \"x\",\n    entities: [\n",
        "        (name: \"A\", playing: true),\n    ],\n)\n"
    );
    let e = scene_from_str(text, Path::new("s.scene.ron")).unwrap_err();
    assert!(matches!(e, ProjectError::Syntax { line: 5, .. }), "{e}");
    assert!(e.to_string().contains("playing"), "{e}");
}

#[test]
fn every_authored_field_round_trips_through_a_scene_file() {
    use marrow_engine::easing::{CubicBezier, Ease, Easing};
    use marrow_engine::math::Transform;
    use marrow_engine::property::PropertyAnimation;
    use marrow_engine::scene::{AnimatorDesc, EntityDesc, MeshDesc, SceneDesc, SocketDesc};
    use marrow_engine::track::{Interpolation, Track};
    let mut translation =
        Track::from_keys(Interpolation::Linear, vec![0.0, 0.5, 2.0], vec![Vec3::ZERO, Vec3::X, Vec3::Y])
            .unwrap();
    translation.set_default_easing(Ease::Bezier(CubicBezier::new(0.25, 0.1, 0.25, 1.0).unwrap()));
    translation.set_key_easing(1, Some(Ease::Named(Easing::InOutBack)));
    let rotation = Track::cubic_from_keys(
        vec![0.0, 1.0],
        vec![Quat::IDENTITY, Quat::from_xyzw(0.0, 0.1, 0.0, 0.0)],
        vec![Quat::IDENTITY, Quat::from_rotation_y(1.0)],
        vec![Quat::from_xyzw(0.0, 0.2, 0.0, 0.0), Quat::IDENTITY],
    )
    .unwrap();
    let scale =
        Track::from_keys(Interpolation::Step, vec![0.0, 1.5], vec![Vec3::ONE, Vec3::splat(2.0)]).unwrap();
    let scene = SceneDesc {
        name: "all".into(),
        entities: vec![
            EntityDesc {
                name: "Door".into(),
                transform: Some(Transform {
                    translation: Vec3::new(1.0, -2.5, 0.125),
                    rotation: Quat::from_rotation_z(0.3),
                    scale: Vec3::new(1.0, 2.0, 3.0),
                }),
                animation: Some(PropertyAnimation {
                    translation: Some(translation),
                    rotation: Some(rotation),
                    scale: Some(scale),
                    looping: true,
                    length: 3.0,
                    play_on_start: false,
                }),
                morph_weights: Some(vec![0.0, 0.25, 1.0]),
                mesh: Some(MeshDesc::Asset("assets/door.glb#door".into())),
                ..EntityDesc::default()
            },
            EntityDesc {
                name: "Rig".into(),
                animator: Some(AnimatorDesc {
                    rig: "assets/a.glb#Armature".into(),
                    clip: None,
                    graph: None,
                    looping: Some(false),
                    speed: -0.5,
                    play_on_start: false,
                    root_motion: None,
                    targets: Vec::new(),
                }),
                children: vec![EntityDesc {
                    name: "Held".into(),
                    socket: Some(SocketDesc {
                        bone: String::new(),
                        offset: Transform::from_translation(Vec3::Z),
                    }),
                    ..EntityDesc::default()
                }],
                ..EntityDesc::default()
            },
        ],
    };
    let text = scene_to_string(&scene);
    assert!(text.contains("easing: \"cubic-bezier(0.25, 0.1, 0.25, 1)\""), "{text}");
    assert!(text.contains("\"easeInOutBack\""), "{text}");
    let back = scene_from_str(&text, Path::new("all.scene.ron")).unwrap();
    assert_eq!(back, scene);
    assert_eq!(scene_to_string(&back), text, "stable");
}

#[test]
fn check_compiles_graphs_that_play_no_clip_and_names_bad_defaults() {
    use marrow_engine::graph::{AnimGraph, NodeKind, ParamValue};
    let dir = temp_dir("rigless-graphs");
    let mut p = runner_project();
    let empty = AnimGraph::new();
    let mut unconnected = AnimGraph::new();
    unconnected.add_node(NodeKind::Output, [0.0, 0.0]);
    let mut nan_scale = AnimGraph::new();
    let ts = nan_scale.add_node(NodeKind::TimeScale { scale: f32::NAN }, [0.0, 0.0]);
    let out = nan_scale.add_node(NodeKind::Output, [200.0, 0.0]);
    nan_scale.connect(ts, out, "pose");
    let mut bad_default = AnimGraph::new();
    bad_default.add_parameter("speed", ParamValue::Float(f32::INFINITY));
    let c = bad_default
        .add_node(NodeKind::Clip { clip: CLIP_PATH.into(), speed: 1.0, looping: true }, [0.0, 0.0]);
    let o = bad_default.add_node(NodeKind::Output, [200.0, 0.0]);
    bad_default.connect(c, o, "pose");
    for (path, g) in [
        ("graphs/empty.graph.ron", empty),
        ("graphs/unconnected.graph.ron", unconnected),
        ("graphs/nan.graph.ron", nan_scale),
        ("graphs/default.graph.ron", bad_default),
    ] {
        p.manifest.graphs.push(path.into());
        p.graphs.insert(path.into(), g.into());
    }
    p.save(&dir).unwrap();
    let errors: Vec<String> = check_project(&dir).errors.iter().map(|e| e.to_string()).collect();
    let has = |file: &str, what: &str| errors.iter().any(|e| e.contains(file) && e.contains(what));
    assert!(has("empty.graph.ron", "no Output node"), "{errors:#?}");
    assert!(has("unconnected.graph.ron", "pose input \"pose\" is not connected"), "{errors:#?}");
    assert!(has("nan.graph.ron", "scale NaN is not finite"), "{errors:#?}");
    assert!(has("default.graph.ron", "parameter \"speed\" has the default inf"), "{errors:#?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_cycle_is_named_by_node_ids_not_debug_text() {
    use marrow_engine::graph::{AnimGraph, NodeKind, compile::validate_structure};
    let mut g = AnimGraph::new();
    let a = g.add_node(NodeKind::TimeScale { scale: 1.0 }, [0.0, 0.0]);
    let b = g.add_node(NodeKind::Adjust { entries: Vec::new() }, [0.0, 0.0]);
    g.connect(a, b, "pose");
    g.connect(b, a, "pose");
    let (errors, _) = validate_structure(&g);
    let text: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
    assert!(text.iter().any(|t| t.contains("lies on a cycle through #0 → #1 → #0")), "{text:?}");
    assert!(text.iter().all(|t| !t.contains("NodeId(")), "{text:?}");
}

#[test]
fn manifest_paths_stay_inside_the_project_and_name_each_file_once() {
    let dir = temp_dir("manifest-paths");
    for (scenes, want) in [
        (r#""./scenes/a.scene.ron", "scenes//a.scene.ron""#, "name the same file"),
        (r#""C:/Windows/a.scene.ron""#, "is not a path inside the project folder"),
        (r#""\\\\server\\share\\a.scene.ron""#, "is not a path inside the project folder"),
        (r#""scenes/../../a.scene.ron""#, "is not a path inside the project folder"),
    ] {
        let text =
            format!("(version: 1, name: \"x\", scenes: [{scenes}], assets: [], clips: [], graphs: [])");
        std::fs::write(dir.join("project.ron"), text).unwrap();
        let e = Project::load(&dir).unwrap_err().to_string();
        assert!(e.contains(want) && e.contains("scenes"), "{scenes}: {e}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_scene_five_hundred_entities_deep_saves_and_loads() {
    use marrow_engine::scene::EntityDesc;
    let dir = temp_dir("deep-scene");
    let mut p = runner_project();
    let mut e = EntityDesc { name: "level499".into(), ..EntityDesc::default() };
    for i in (0..499).rev() {
        e = EntityDesc { name: format!("level{i}"), children: vec![e], ..EntityDesc::default() };
    }
    p.scenes.get_mut(SCENE_PATH).map(std::sync::Arc::make_mut).unwrap().entities.push(e);
    // Saving runs on this (test) thread: the deep tree must not need a large stack here.
    p.save(&dir).unwrap();
    let text = std::fs::read_to_string(dir.join(SCENE_PATH)).unwrap();
    assert!(text.contains("level499"), "the deep scene was written whole");
    let back = Project::load(&dir).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back, p);
    // Past the nesting limit, the error says so plainly (no advice for developers).
    let levels = 3000;
    let open: String = (0..levels).map(|i| format!("(name: \"e{i}\", children: [")).collect();
    let close: String = (0..levels).map(|_| "])").collect();
    let bad = format!("(version: 1, name: \"x\", entities: [{open}{close}])");
    std::fs::write(dir.join(SCENE_PATH), bad).unwrap();
    let e = Project::load(&dir).unwrap_err().to_string();
    assert!(e.contains("nests deeper than") && !e.contains("serde_stacker"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_save_killed_midway_is_finished_or_forgotten_on_the_next_load() {
    use marrow_engine::project::{SAVE_JOURNAL, stage_save};
    let dir = temp_dir("interrupted-save");
    let (old, new, files) = saved_and_renamed(&dir);
    let temps = |dir: &Path| -> usize {
        walk(dir).iter().filter(|p| p.file_name().unwrap().to_string_lossy().contains(".marrow-tmp-")).count()
    };

    // Killed after the journal was written, before any rename: the load finishes the save.
    let staged = stage_save(&dir, &files, &[]).unwrap();
    std::mem::forget(staged); // the process "dies" here
    assert!(dir.join(SAVE_JOURNAL).is_file());
    assert_eq!(Project::load(&dir).unwrap(), new, "the whole new project, not half of it");
    assert!(!dir.join(SAVE_JOURNAL).exists() && temps(&dir) == 0);

    // Killed while writing the temps (no journal yet): the load forgets them; the old project stands.
    // (The writer's process id, 2147483646, is one no process has.)
    old.save(&dir).unwrap();
    for (rel, bytes) in &files {
        let target = dir.join(rel);
        let name = target.file_name().unwrap().to_string_lossy().into_owned();
        let tmp = format!(".{name}.marrow-tmp-2147483646-00000000000000{:02x}", bytes.len() % 256);
        std::fs::write(target.with_file_name(tmp), bytes).unwrap();
    }
    assert!(temps(&dir) > 0);
    assert_eq!(Project::load(&dir).unwrap(), old);
    assert_eq!(temps(&dir), 0, "stale temps are removed on the next load");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The runner project saved in `dir`, a renamed copy (project and scene), and the renamed
/// copy's files as a save writes them: (old, new, new files).
pub(crate) fn saved_and_renamed(dir: &Path) -> (Project, Project, Vec<(String, Vec<u8>)>) {
    let old = runner_project();
    old.save(dir).unwrap();
    let mut new = old.clone();
    new.manifest.name = "renamed".into();
    new.scenes.get_mut(SCENE_PATH).map(std::sync::Arc::make_mut).unwrap().name = "renamed scene".into();
    let files = new.to_files().into_iter().map(|(p, t)| (p, t.into_bytes())).collect();
    (old, new, files)
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() { out.extend(walk(&p)) } else { out.push(p) }
    }
    out
}

/// `Library::rig_scales`: the capture in the mocap sample sits under a scale of 0.056444 (its
/// file's units to metres) and CesiumMan at 1; a rig placed twice takes the larger scale, down
/// nested entities, a negative (mirroring) scale counting by its size; a rig no scene places
/// is absent.
#[test]
fn rig_scales_are_the_largest_scale_the_scenes_place_each_rig_at() {
    let dir = projects_dir().join("mocap");
    let mut p = Project::load(&dir).unwrap();
    let lib = Library::load(&p, &dir).unwrap();
    let scales = lib.rig_scales(&p);
    assert_eq!(scales.len(), 2, "{scales:?}");
    assert_eq!(scales["cmu_131_01"], 0.056444);
    assert_eq!(scales["Armature"], 1.0);
    // The capture placed again, deeper and larger: (2, -3, 1) under (0.5, 0.5, 0.5) is 1.5.
    let path = "scenes/main.scene.ron";
    let mut scene = (*p.scenes[path]).clone();
    let capture = scene.entities.iter().find(|e| e.name == "cmu_131_01").unwrap().children[0].clone();
    let mut inner = capture;
    inner.name = "big".into();
    inner.transform.as_mut().unwrap().scale = Vec3::new(2.0, -3.0, 1.0);
    let mut outer = marrow_engine::scene::EntityDesc { name: "holder".into(), ..Default::default() };
    outer.transform = Some(marrow_engine::math::Transform {
        scale: Vec3::splat(0.5),
        ..marrow_engine::math::Transform::IDENTITY
    });
    outer.children.push(inner);
    scene.entities.push(outer);
    // CesiumMan removed: its rig is placed nowhere.
    scene.entities.retain(|e| e.name != "CesiumMan");
    p.scenes.insert(path.into(), Arc::new(scene));
    let scales = lib.rig_scales(&p);
    assert_eq!(scales.len(), 1, "{scales:?}");
    assert_eq!(scales["cmu_131_01"], 1.5);
}
