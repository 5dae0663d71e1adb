//! End-to-end tests of the `marrow` binary: help/version (no arguments opens the editor), `pose` JSON against hand-checked
//! values, `--times` ranges and `--loop`, and `check` exit statuses on good and broken files.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn gltf_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/gltf");
    assert!(dir.join("SimpleSkin").is_dir(), "the glTF sample models are missing from {}", dir.display());
    dir
}

fn marrow(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_marrow")).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn model(m: &str) -> String {
    gltf_dir().join(m).display().to_string()
}

#[test]
fn help_lists_the_commands_and_version_prints() {
    // With no arguments `marrow` opens the editor (a window); `--help` lists the commands.
    let (code, out, _) = marrow(&["--help"]);
    assert_eq!(code, 0);
    assert!(out.contains("edit"), "{out}");
    assert!(out.contains("Usage") && out.contains("pose") && out.contains("check"), "{out}");
    let (code, out, _) = marrow(&["--version"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("marrow "), "{out}");
}

#[test]
fn pose_simple_skin_hand_checked() {
    let (code, out, err) =
        marrow(&["pose", &model("SimpleSkin/SimpleSkin.gltf"), "--times", "0,1.0", "--vertices", "10"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["animation"]["index"], 0);
    assert_eq!(v["animation"]["duration"], 5.5);
    assert_eq!(v["skins"][0]["jointNodes"], serde_json::json!([1, 2]));
    assert_eq!(v["skins"][0]["inverseBindMatrices"][1][13], -1.0);
    let s = &v["samples"][1];
    assert_eq!(s["t"], 1.0);
    // Joint 1 at t = 1: T(0, 1, 0) * Rz(90 degrees); column-major.
    let jw: Vec<f64> = serde_json::from_value(s["skins"][0]["jointWorld"][1].clone()).unwrap();
    let want = [0.0, 1.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0];
    for (a, b) in jw.iter().zip(want) {
        assert!((a - b).abs() < 1e-6, "{jw:?}");
    }
    assert_eq!(s["skins"][0]["skinningMatrices"][0]["meshNode"], 0);
    let p: Vec<[f64; 3]> =
        serde_json::from_value(s["meshes"][0]["primitives"][0]["positions"].clone()).unwrap();
    assert_eq!(p.len(), 10);
    for (a, b) in p[8].iter().zip([-1.0, 0.5, 0.0]) {
        assert!((a - b).abs() < 1e-6, "{:?}", p[8]);
    }
    for (a, b) in p[4].iter().zip([-0.25, 0.75, 0.0]) {
        assert!((a - b).abs() < 1e-6, "{:?}", p[4]);
    }
}

#[test]
fn pose_times_ranges_loop_and_animation_by_name() {
    let f = model("InterpolationTest/InterpolationTest.glb");
    let (code, out, err) =
        marrow(&["pose", &f, "--anim", "Linear Scale", "--times", "0:1:0.25,3", "--vertices", "1"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["animation"]["name"], "Linear Scale");
    let ts: Vec<f64> = v["samples"].as_array().unwrap().iter().map(|s| s["t"].as_f64().unwrap()).collect();
    assert_eq!(ts, [0.0, 0.25, 0.5, 0.75, 1.0, 3.0]);
    // Node 1 (Cube.001, at x = -3.4) vertex 0 (-1, 1, 1): scale 0.5 at t = 0.25.
    let p = &v["samples"][1]["meshes"][1]["primitives"][0]["positions"][0];
    assert!(
        (p[0].as_f64().unwrap() + 3.9).abs() < 1e-6 && (p[1].as_f64().unwrap() - 0.5).abs() < 1e-6,
        "{p}"
    );
    // --loop once clamps 3 to the end (scale 1); --loop repeat wraps 3 to 1 (scale 1 too), 2.25 to 0.25.
    let end = &v["samples"][5]["meshes"][1]["primitives"][0]["positions"][0];
    assert!((end[1].as_f64().unwrap() - 1.0).abs() < 1e-6, "{end}");
    let (_, out, _) =
        marrow(&["pose", &f, "--anim", "1", "--times", "2.25", "--loop", "repeat", "--vertices", "1"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let p = &v["samples"][0]["meshes"][1]["primitives"][0]["positions"][0];
    assert!((p[1].as_f64().unwrap() - 0.5).abs() < 1e-5, "{p}");
    let (_, out, _) = marrow(&["pose", &f, "--anim", "none", "--vertices", "0"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v["animation"].is_null());
    assert_eq!(v["samples"].as_array().unwrap().len(), 1);
    let (code, _, err) = marrow(&["pose", &f, "--anim", "Nope"]);
    assert_eq!(code, 1);
    assert!(err.contains("no such animation"), "{err}");
}

#[test]
fn check_good_and_bad_files() {
    let (code, out, _) = marrow(&["check", &model("CesiumMan/CesiumMan.glb")]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("ok"), "{out}");
    let dir = std::env::temp_dir().join(format!("marrow-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // A node cycle and a missing .bin, both reported, with where they are.
    let bad = dir.join("bad.gltf");
    std::fs::write(
        &bad,
        r#"{"asset": {"version": "2.0"}, "nodes": [{"children": [1]}, {"children": [0]}],
            "buffers": [{"uri": "nowhere.bin", "byteLength": 4}]}"#,
    )
    .unwrap();
    let (code, out, _) = marrow(&["check", bad.to_str().unwrap()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("bad.gltf: error: buffer 0: cannot read") && out.contains("nowhere.bin"), "{out}");
    assert!(out.contains("error: node 0: is its own ancestor"), "{out}");
    // Wrong magic: `pose` and `check` both exit 1 with a message naming the file.
    let glb = dir.join("bad.glb");
    std::fs::write(&glb, b"NOPE\x02\x00\x00\x00\x0c\x00\x00\x00").unwrap();
    let (code, out, _) = marrow(&["check", glb.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(out.contains("wrong magic"), "{out}");
    let (code, _, err) = marrow(&["pose", glb.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("bad.glb") && err.contains("wrong magic"), "{err}");
}

#[test]
fn a_reader_that_goes_away_ends_the_command_quietly() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_marrow"))
        .args(["pose", &model("CesiumMan/CesiumMan.glb"), "--times", "0:2:0.001", "--vertices", "50"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut first = [0u8; 10];
    out.read_exact(&mut first).unwrap();
    drop(out); // like `| head -c 10`
    let status = child.wait().unwrap();
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{err}");
    assert_ne!(status.code(), Some(101), "no panic exit: {status:?}");
}

#[test]
fn numeric_flags_that_would_hang_or_exhaust_memory_are_refused_with_the_flag_named() {
    let (code, _, err) = marrow(&["pose", &model("CesiumMan/CesiumMan.glb"), "--times", "0:1:0.000001"]);
    assert_eq!(code, 1);
    assert!(err.contains("asks for 1000001 times") && err.contains("at most 10000"), "{err}");
    let (code, _, err) = marrow(&["pose", &model("CesiumMan/CesiumMan.glb"), "--times", "1:0:0.1"]);
    assert_eq!(code, 1);
    assert!(err.contains("is empty"), "{err}");
    for (flag, value) in [("--seconds", "inf"), ("--from-speed", "NaN"), ("--to-speed", "-inf")] {
        let (code, out, err) = marrow(&["runner", &format!("{flag}={value}")]);
        assert_eq!(code, 1, "{flag} {value}: {out}");
        assert!(err.contains(flag) && err.contains("finite"), "{err}");
    }
}

#[test]
fn simplify_reports_keys_kept_within_the_tolerance_and_writes_a_clip_file() {
    let out = std::env::temp_dir().join(format!("marrow-simplify-{}.clip.ron", std::process::id()));
    let (code, stdout, stderr) = marrow(&[
        "simplify",
        &model("CesiumMan/CesiumMan.glb"),
        "--tolerance",
        "0.001",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("873 of 2736 keys kept"), "{stdout}");
    let text = std::fs::read_to_string(&out).unwrap();
    let clip = marrow_engine::project::clip_from_str(&text, &out).unwrap();
    assert_eq!(clip.clip.name, "animation0");
    let _ = std::fs::remove_file(&out);
    let (code, _, err) = marrow(&["simplify", &model("CesiumMan/CesiumMan.glb"), "--tolerance=-1"]);
    assert_eq!(code, 1);
    assert!(err.contains("--tolerance -1: must be a finite non-negative number"), "{err}");
    let (code, _, err) =
        marrow(&["simplify", &model("CesiumMan/CesiumMan.glb"), "--tolerance", "0.1", "--out", "x.glb"]);
    assert_eq!(code, 1);
    assert!(err.contains("ends in .clip.ron"), "{err}");
}

#[test]
fn export_writes_a_glb_that_poses_as_the_source_does() {
    let out = std::env::temp_dir().join(format!("marrow-export-{}.glb", std::process::id()));
    let src = model("CesiumMan/CesiumMan.glb");
    let (code, stdout, stderr) = marrow(&["export", &src, "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("1 animations"), "{stdout}");
    let pose = |file: &str| {
        let (code, out, err) = marrow(&["pose", file, "--times", "0:2:0.1", "--vertices", "40"]);
        assert_eq!(code, 0, "{err}");
        serde_json::from_str::<Value>(&out).unwrap()
    };
    let (a, b) = (pose(&src), pose(out.to_str().unwrap()));
    let flat = |v: &Value| -> Vec<f64> {
        let mut out = Vec::new();
        fn walk(v: &Value, out: &mut Vec<f64>) {
            match v {
                Value::Number(n) => out.push(n.as_f64().unwrap()),
                Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
                // Skinning matrices are relative to the skinned mesh node, which the export moves
                // to the root (glTF ignores its transform): the placed vertices and joint world
                // matrices are what must agree.
                Value::Object(o) => o
                    .iter()
                    .filter(|(k, _)| *k != "file" && *k != "skinningMatrices")
                    .for_each(|(_, x)| walk(x, out)),
                _ => {}
            }
        }
        walk(v, &mut out);
        out
    };
    let (fa, fb) = (flat(&a), flat(&b));
    assert_eq!(fa.len(), fb.len());
    let worst = fa.iter().zip(&fb).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
    assert!(worst <= 1e-5, "pose of the export differs by {worst}");
    let _ = std::fs::remove_file(&out);
    let (code, _, err) = marrow(&["export", &src, "--out", "x.fbx"]);
    assert_eq!(code, 1);
    assert!(err.contains("must end in .glb or .gltf"), "{err}");
    assert!(!std::path::Path::new("x.fbx").exists());
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn export_of_a_project_writes_gltf_with_its_bin_and_a_broken_one_is_refused_with_nothing_written() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("projects");
    let dir = std::env::temp_dir().join(format!("marrow-export-project-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("runner.gltf");
    let runner = root.join("runner");
    let (code, stdout, stderr) = marrow(&[
        "export",
        runner.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--bake-bound",
        "0.001",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("eased segments baked"), "{stdout}");
    let json: Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let bin = json["buffers"][0]["uri"].as_str().unwrap();
    assert!(bin.starts_with("runner.") && bin.ends_with(".bin") && dir.join(bin).is_file(), "{bin}");
    let (code, stdout, stderr) = marrow(&["check", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    // A copy of the CesiumMan project whose Animator plays the runner's clip and whose hat sits
    // on a bone the rig lacks.
    let broken = dir.join("broken");
    copy_dir(&root.join("cesium_man"), &broken);
    std::fs::create_dir_all(broken.join("clips")).unwrap();
    std::fs::copy(runner.join("clips/stride.clip.ron"), broken.join("clips/stride.clip.ron")).unwrap();
    std::fs::copy(runner.join("assets/runner.skeleton.ron"), broken.join("assets/runner.skeleton.ron"))
        .unwrap();
    let manifest = std::fs::read_to_string(broken.join("project.ron")).unwrap();
    let manifest = manifest
        .replace("clips: [],", "clips: [\"clips/stride.clip.ron\"],")
        .replace("\"assets/CesiumMan.glb\",", "\"assets/CesiumMan.glb\", \"assets/runner.skeleton.ron\",");
    std::fs::write(broken.join("project.ron"), manifest).unwrap();
    let scene_path = broken.join("scenes/main.scene.ron");
    let scene = std::fs::read_to_string(&scene_path).unwrap();
    let scene = scene
        .replace("clip: \"assets/CesiumMan.glb#animation0\"", "clip: \"clips/stride.clip.ron\"")
        .replace("bone: \"Skeleton_neck_joint_2\"", "bone: \"no_such_bone\"");
    std::fs::write(&scene_path, scene).unwrap();
    let bad_out = dir.join("broken.glb");
    let (code, _, err) = marrow(&["export", broken.to_str().unwrap(), "--out", bad_out.to_str().unwrap()]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("export refused, nothing written"), "{err}");
    assert!(err.contains("is for skeleton \"runner\""), "{err}");
    assert!(err.contains("entity CesiumMan/Hat: its socket names bone \"no_such_bone\""), "{err}");
    assert!(!bad_out.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A two-joint BVH: the root with all six channels (`Zrotation Xrotation Yrotation`), a joint
/// rotating `Zrotation Xrotation Yrotation`, an End Site; two frames at 30 Hz.
const BVH: &str = "HIERARCHY
ROOT Hips
{
  OFFSET 0 0 0
  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation
  JOINT Chest
  {
    OFFSET 0 1 0
    CHANNELS 3 Zrotation Xrotation Yrotation
    End Site
    {
      OFFSET 0 1 0
    }
  }
}
MOTION
Frames: 2
Frame Time: 0.5
0 0 0 0 0 0 0 0 0
1 2 3 90 0 0 0 90 0
";

/// The keys of a JSON object, sorted.
fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().map(|o| o.keys().cloned().collect()).unwrap_or_default();
    k.sort();
    k
}

#[test]
fn bvh_files_check_pose_and_export_as_gltf_files_do() {
    let dir = std::env::temp_dir().join(format!("marrow-cli-bvh-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("walk.bvh");
    std::fs::write(&file, BVH).unwrap();
    let f = file.display().to_string();
    let (code, out, err) = marrow(&["check", &f]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("ok (3 bones, 2 frames at 2 Hz)"), "{out}");

    let bad = dir.join("bad.bvh");
    std::fs::write(&bad, BVH.replace(" Xrotation Yrotation\n  JOINT", " Xrotation\n  JOINT")).unwrap();
    let (code, out, _) = marrow(&["check", &bad.display().to_string()]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("error: line 5:3: CHANNELS declares 6 channels but names 5"), "{out}");
    let (code, _, err) = marrow(&["pose", &bad.display().to_string()]);
    assert_eq!(code, 1);
    assert!(err.contains("bad.bvh:5:3: CHANNELS declares 6 channels but names 5"), "{err}");

    // The same JSON shape as a glTF file's.
    let (code, gl, err) = marrow(&["pose", &model("SimpleSkin/SimpleSkin.gltf"), "--times", "0"]);
    assert_eq!(code, 0, "{err}");
    let gl: Value = serde_json::from_str(&gl).unwrap();
    let (code, out, err) = marrow(&["pose", &f, "--times", "0,0.5", "--vertices", "4"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(keys(&v), keys(&gl));
    assert_eq!(keys(&v["samples"][0]), keys(&gl["samples"][0]));
    assert_eq!(keys(&v["skins"][0]), keys(&gl["skins"][0]));
    assert_eq!(keys(&v["samples"][0]["skins"][0]), keys(&gl["samples"][0]["skins"][0]));
    assert_eq!(v["animation"]["name"], "walk");
    assert_eq!(v["skins"][0]["jointNames"], serde_json::json!(["Hips", "Chest", "Chest_end"]));
    // Frame 2: the root at (1, 2, 3) turned 90 degrees about Z; the chest turned 90 about X
    // (its own Xrotation): the end site 1 along the chest's +Y, which Rz * Rx takes to +Z.
    let jw = &v["samples"][1]["skins"][0]["jointWorld"];
    let at = |j: usize| -> Vec<f64> { (12..15).map(|k| jw[j][k].as_f64().unwrap()).collect() };
    for (got, want) in [(at(0), [1.0, 2.0, 3.0]), (at(1), [0.0, 2.0, 3.0]), (at(2), [0.0, 2.0, 4.0])] {
        assert!(got.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-6), "{got:?} vs {want:?}");
    }
    assert_eq!(v["samples"][1]["meshes"][0]["primitives"][0]["positions"].as_array().unwrap().len(), 4);

    // Exported as GLB, it poses the same.
    let glb = dir.join("walk.glb");
    let (code, out, err) = marrow(&["export", &f, "--out", &glb.display().to_string()]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) =
        marrow(&["pose", &glb.display().to_string(), "--times", "0,0.5", "--vertices", "4"]);
    assert_eq!(code, 0, "{err}");
    let e: Value = serde_json::from_str(&out).unwrap();
    let flat = |v: &Value| -> Vec<f64> {
        v["samples"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|s| {
                s["skins"][0]["jointWorld"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .flat_map(|m| m.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()))
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    let (a, b) = (flat(&v), flat(&e));
    assert_eq!(a.len(), b.len());
    assert!(a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-5), "{a:?} vs {b:?}");
    std::fs::remove_dir_all(&dir).ok();
}
