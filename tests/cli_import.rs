//! `marrow import`: models and folders of them imported into a project headless, as File >
//! Import Model does (copied into `assets/`, clips as clip files, an entity each, one save); a
//! file that fails is named with its fault and the others still go in (exit status 1); arguments
//! that are not models, unknown units and a missing scene are refused before anything is written.

use std::path::{Path, PathBuf};
use std::process::Command;

fn marrow(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_marrow")).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A fresh copy of the runner sample.
fn runner_copy(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("marrow-cli-import-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (code, out, _) = marrow(&["gen-runner", "--out", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    dir
}

#[test]
fn a_folder_of_captures_and_a_gltf_model_import_into_a_project_that_checks_clean() {
    let dir = runner_copy("ok");
    let bvh = repo().join("assets/bvh");
    let glb = repo().join("assets/gltf/CesiumMan/CesiumMan.glb");
    let (code, out, err) =
        marrow(&["import", bvh.to_str().unwrap(), glb.to_str().unwrap(), "--into", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(&format!("3 of 3 model(s) imported into {}", dir.display())), "{out}");
    for f in ["assets/capture.bvh", "assets/cmu_131_01.bvh", "assets/CesiumMan.glb"] {
        assert!(dir.join(f).is_file(), "{f} copied in");
    }
    for f in ["clips/capture.clip.ron", "clips/cmu_131_01.clip.ron", "clips/CesiumMan_animation0.clip.ron"] {
        assert!(dir.join(f).is_file(), "{f} written");
    }
    let report = marrow_engine::project::check_project(&dir);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let project = marrow_engine::project::Project::load(&dir).unwrap();
    let scene = &project.scenes["scenes/main.scene.ron"];
    let names: Vec<&str> = scene.entities.iter().map(|e| e.name.as_str()).collect();
    for n in ["Runner", "capture", "cmu_131_01", "CesiumMan"] {
        assert!(names.contains(&n), "{n} in {names:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_broken_file_is_named_and_the_others_still_go_in() {
    let dir = runner_copy("broken");
    let bad = dir.join("bad.bvh");
    std::fs::write(&bad, "HIERARCHY\nROOT x\n").unwrap();
    let good = repo().join("assets/bvh/capture.bvh");
    let (code, out, err) =
        marrow(&["import", bad.to_str().unwrap(), good.to_str().unwrap(), "--into", dir.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("bad.bvh: not imported") && err.contains("bad.bvh:3:1: expected \"{\""), "{err}");
    assert!(out.contains("1 of 2 model(s) imported"), "{out}");
    let project = marrow_engine::project::Project::load(&dir).unwrap();
    assert!(project.manifest.assets.iter().any(|a| a == "assets/capture.bvh"));
    assert!(!project.manifest.assets.iter().any(|a| a.contains("bad")));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn arguments_that_cannot_import_are_refused_before_anything_is_written() {
    let dir = runner_copy("refused");
    let before = std::fs::read(dir.join("project.ron")).unwrap();
    let glb = repo().join("assets/gltf/CesiumMan/CesiumMan.glb");
    let (g, d) = (glb.to_str().unwrap(), dir.to_str().unwrap());
    for (args, expected) in [
        (
            vec!["import", "README.md", "--into", d],
            "not a model file (.gltf, .glb, .bvh or .fbx) or a folder",
        ),
        (vec!["import", g, "--into", d, "--units", "furlongs"], "one of metres, centimetres"),
        (vec!["import", g, "--into", d, "--scene", "scenes/none.scene.ron"], "the project has no such scene"),
        (vec!["import", g, "--into", "/nonexistent/project"], "cannot open the project"),
    ] {
        let (code, out, err) = marrow(&args);
        assert_eq!(code, 1, "{args:?}: {out}");
        assert!(err.contains(expected), "{args:?}: {err}");
    }
    assert_eq!(std::fs::read(dir.join("project.ron")).unwrap(), before, "nothing written");
    assert!(!dir.join("assets/CesiumMan.glb").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_fbx_whose_texture_sits_beside_it_imports_with_the_texture_copied_in() {
    let dir = runner_copy("texture");
    let fbx = repo().join("assets/fbx/textured_quad/quad.fbx");
    let (code, out, err) = marrow(&["import", fbx.to_str().unwrap(), "--into", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("left out") && !err.contains("left out"), "{out}{err}");
    for f in ["assets/quad.fbx", "assets/quad.png"] {
        assert!(dir.join(f).is_file(), "{f} copied in");
    }
    assert_eq!(
        std::fs::read(dir.join("assets/quad.png")).unwrap(),
        std::fs::read(fbx.with_file_name("quad.png")).unwrap()
    );
    // In the project, the copy finds its texture beside it.
    let scene = marrow_engine::fbx::import(dir.join("assets/quad.fbx")).unwrap();
    assert!(scene.materials[0].base_color_texture.is_some(), "{:?}", scene.warnings);
    let report = marrow_engine::project::check_project(&dir);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let _ = std::fs::remove_dir_all(&dir);
}
