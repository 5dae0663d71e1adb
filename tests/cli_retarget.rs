//! `marrow retarget`: a real CMU capture imported into the runner project, then retargeted onto
//! the runner's rig through a new auto-mapped retarget file (written into the project) and again
//! through that file by name; the project checks clean and the clips play on the runner. A
//! missing map, an unknown rig or clip is refused by name with nothing written.

use std::collections::BTreeMap;
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

/// The runner sample with the CMU capture imported into it.
fn project(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("marrow-cli-retarget-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (code, out, _) = marrow(&["gen-runner", "--out", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    let bvh = repo().join("assets/bvh/cmu_131_01.bvh");
    let (code, out, err) = marrow(&["import", bvh.to_str().unwrap(), "--into", dir.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}{err}");
    dir
}

fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn a_capture_retargets_onto_the_runner_through_a_new_map_and_again_through_it_by_name() {
    let dir = project("ok");
    let d = dir.to_str().unwrap();
    let (code, out, err) =
        marrow(&["retarget", "--into", d, "--from", "cmu_131_01", "--to", "runner", "--all"]);
    assert_eq!(code, 0, "{out}{err}");
    let map = "retargets/cmu_131_01_to_runner.retarget.ron";
    assert!(out.contains(&format!("new retarget file {map}: 5 bone(s) auto-mapped")), "{out}");
    assert!(out.contains("1 clip(s) retargeted from cmu_131_01 onto runner"), "{out}");
    let text = std::fs::read_to_string(dir.join(map)).unwrap();
    for pair in ["(target: \"hips\", source: \"Hips\")", "(target: \"shin_r\", source: \"RightKnee\")"] {
        assert!(text.contains(pair), "{pair} in\n{text}");
    }
    let report = marrow_engine::project::check_project(&dir);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let project = marrow_engine::project::Project::load(&dir).unwrap();
    let retargeted: Vec<&String> = project.clips.keys().filter(|k| k.ends_with("_runner.clip.ron")).collect();
    assert_eq!(retargeted.len(), 1, "{:?}", project.clips.keys());
    let asset = &project.clips[retargeted[0]];
    assert_eq!(asset.clip.skeleton, "runner");
    let source = project.clips.values().find(|c| c.clip.skeleton == "cmu_131_01").unwrap();
    let frames = source.clip.channels()[0].rotation.as_ref().unwrap().len();
    assert_eq!(asset.clip.channels()[0].rotation.as_ref().unwrap().len(), frames, "a key a captured frame");
    // Through the map by name, for one clip named by its reference: a second clip file.
    let clip_ref = project.manifest.clips.iter().find(|c| c.contains("cmu_131_01")).unwrap().clone();
    let (code, out, err) = marrow(&["retarget", "--into", d, "--map", map, "--limb-ik", &clip_ref]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("_runner_2.clip.ron"), "{out}");
    // --limb-ik turned the map's limb IK on, saved in its file.
    assert!(out.contains(&format!("{map}: feet and hands placed by IK")), "{out}");
    assert!(std::fs::read_to_string(dir.join(map)).unwrap().contains("limb_ik: true"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_missing_map_rig_or_clip_is_refused_by_name_with_nothing_written() {
    let dir = project("bad");
    let d = dir.to_str().unwrap();
    let before = files(&dir);
    let cases: [(&[&str], &str); 4] = [
        (&["--map", "retargets/none.retarget.ron", "--all"], "no such retarget file"),
        (&["--from", "nobody", "--to", "runner", "--all"], "no rig named \"nobody\""),
        (
            &["--from", "cmu_131_01", "--to", "runner", "clips/none.clip.ron"],
            "clips/none.clip.ron: no clip for the source rig",
        ),
        (&["--from", "runner", "--to", "cmu_131_01"], "no clips to retarget"),
    ];
    for (args, says) in cases {
        let mut all = vec!["retarget", "--into", d];
        all.extend_from_slice(args);
        let (code, out, err) = marrow(&all);
        assert_eq!(code, 1, "{args:?}: {out}{err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(files(&dir), before, "{args:?} wrote nothing");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
