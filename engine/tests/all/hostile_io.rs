//! Hostile projects on disk (issue 29, file safety): planted save journals, links that leave the
//! project, devices and FIFOs where files should be, and `check` changing nothing. Every case
//! leaves everything outside the project byte for byte as it was. Unix only (links, FIFOs,
//! devices).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use marrow_engine::project::runner::{CLIP_PATH, SCENE_PATH, SKELETON_PATH, runner_project};
use marrow_engine::project::{
    Project, REFUSED_JOURNAL, SAVE_JOURNAL, check_project, finish_interrupted_save, stage_save,
};

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("marrow-hostile-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every entry below `dir` (not following links): its kind and, for files, its bytes; for
/// links, where they point.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let t = e.file_type().unwrap();
            let v = if t.is_symlink() {
                format!("link {}", std::fs::read_link(&p).unwrap().display())
            } else if t.is_dir() {
                stack.push(p.clone());
                "folder".to_owned()
            } else if t.is_file() {
                format!("file {:?}", std::fs::read(&p).unwrap())
            } else {
                "other".to_owned()
            };
            out.insert(p.strip_prefix(dir).unwrap().to_owned(), v);
        }
    }
    out
}

/// 64-bit FNV-1a, the journal format's checksum (written out here so the tests build journals
/// the way a forger would, from the documented format).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// A whole, well-formed journal of `entries` (tab-separated fields).
fn journal(entries: &[&str]) -> String {
    let mut s = "marrow-save-journal 2\n".to_owned();
    for e in entries {
        s.push_str(e);
        s.push('\n');
    }
    let sum = fnv1a(s.as_bytes());
    s.push_str(&format!("end\t{}\t{sum:016x}\n", entries.len()));
    s
}

/// A saved runner project in `<tag>/project` and an outside folder `<tag>/outside` holding a
/// victim file, reachable from the project through the link `project/link`.
fn project_and_outside(tag: &str) -> (PathBuf, PathBuf, PathBuf) {
    let base = temp_dir(tag);
    let (project, outside) = (base.join("project"), base.join("outside"));
    runner_project().save(&project).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("victim.ron"), "a user's file outside the project").unwrap();
    std::fs::write(outside.join(".main.scene.ron.marrow-tmp-1-0123456789abcdef"), "planted").unwrap();
    std::os::unix::fs::symlink(&outside, project.join("link")).unwrap();
    (base, project, outside)
}

#[test]
fn a_planted_journal_through_a_linked_folder_touches_nothing_outside() {
    let planted: [&[&str]; 4] = [
        // delete a file outside
        &["remove\tlink/victim.ron"],
        // move an outside file over a project file
        &["rename\tlink/.main.scene.ron.marrow-tmp-1-0123456789abcdef\tscenes/main.scene.ron"],
        // the same through names that match (temp and target in the linked folder)
        &["rename\tlink/.main.scene.ron.marrow-tmp-1-0123456789abcdef\tlink/main.scene.ron"],
        // move a project file out of the project
        &["rename\tscenes/main.scene.ron\tlink/stolen.ron"],
    ];
    for (i, entries) in planted.iter().enumerate() {
        let (base, project, outside) = project_and_outside(&format!("planted-{i}"));
        let before_outside = snapshot(&outside);
        let before_project = Project::load(&project).unwrap();
        std::fs::write(project.join(SAVE_JOURNAL), journal(entries)).unwrap();
        let recovery = finish_interrupted_save(&project).unwrap();
        assert_eq!(
            snapshot(&outside),
            before_outside,
            "journal {entries:?} touched a file outside the project"
        );
        assert!(recovery.done.iter().all(|d| !d.contains("finished")), "{recovery:?}");
        assert!(
            recovery.refused.iter().any(|r| r.contains("not honoured")),
            "the refusal is reported: {recovery:?}"
        );
        assert!(!project.join(SAVE_JOURNAL).exists() && project.join(REFUSED_JOURNAL).is_file());
        assert_eq!(Project::load(&project).unwrap(), before_project, "the project loads as it was");
        assert_eq!(snapshot(&outside), before_outside);
        std::fs::remove_dir_all(&base).unwrap();
    }
}

#[test]
fn a_journal_renaming_onto_a_folder_is_refused_and_the_project_still_loads() {
    let (base, project, _) = project_and_outside("onto-folder");
    let before = Project::load(&project).unwrap();
    std::fs::create_dir_all(project.join("clips/extra.clip.ron/inside")).unwrap();
    std::fs::write(project.join("clips/.extra.clip.ron.marrow-tmp-1-0123456789abcdef"), "x").unwrap();
    let entries = ["rename\tclips/.extra.clip.ron.marrow-tmp-1-0123456789abcdef\tclips/extra.clip.ron"];
    std::fs::write(project.join(SAVE_JOURNAL), journal(&entries)).unwrap();
    // Loaded twice: neither load fails, the folder stays.
    assert_eq!(Project::load(&project).unwrap(), before);
    assert_eq!(Project::load(&project).unwrap(), before);
    assert!(project.join("clips/extra.clip.ron/inside").is_dir());
    assert!(project.join(REFUSED_JOURNAL).is_file());
    std::fs::remove_dir_all(&base).unwrap();
}

#[test]
fn a_truncated_journal_is_not_acted_on() {
    let dir = temp_dir("truncated");
    let (old, _, files) = crate::project::saved_and_renamed(&dir);
    let staged = stage_save(&dir, &files, &[]).unwrap();
    std::mem::forget(staged); // the process "dies" here
    // The journal loses its last line (as a cut copy would).
    let text = std::fs::read_to_string(dir.join(SAVE_JOURNAL)).unwrap();
    let cut = &text[..text.trim_end().rfind('\n').unwrap() + 1];
    std::fs::write(dir.join(SAVE_JOURNAL), cut).unwrap();
    let recovery = finish_interrupted_save(&dir).unwrap();
    assert!(recovery.refused.iter().any(|r| r.contains("not whole")), "{recovery:?}");
    assert_eq!(Project::load(&dir).unwrap(), old, "the old project, whole: not half of the new one");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn check_changes_nothing_on_disk() {
    let (base, project, _) = project_and_outside("check-read-only");
    std::fs::write(project.join("assets/.notes.2024.12.tmp"), "a user's notes").unwrap();
    std::fs::write(project.join("scenes/.main.scene.ron.marrow-tmp-2147483646-0123456789abcdef"), "x")
        .unwrap();
    let entries =
        ["rename\tscenes/.main.scene.ron.marrow-tmp-2147483646-0123456789abcdef\tscenes/main.scene.ron"];
    std::fs::write(project.join(SAVE_JOURNAL), journal(&entries)).unwrap();
    let before = snapshot(&base);
    let report = check_project(&project);
    assert_eq!(snapshot(&base), before, "check deleted, moved or wrote something");
    assert!(
        report.warnings.iter().any(|w| w.contains("interrupted save journal is present")),
        "{:?}",
        report.warnings
    );
    assert!(report.warnings.iter().any(|w| w.contains(".notes.2024.12.tmp")), "{:?}", report.warnings);
    std::fs::remove_dir_all(&base).unwrap();
}

/// The first error loading `project`, as text (it must fail).
fn load_error(project: &Path) -> String {
    Project::load(project).map(|_| ()).unwrap_err().to_string()
}

#[test]
fn project_paths_through_links_that_leave_the_project_are_refused() {
    // A skeleton file.
    let (base, project, outside) = project_and_outside("escape-skeleton");
    std::fs::rename(project.join(SKELETON_PATH), outside.join("runner.skeleton.ron")).unwrap();
    std::os::unix::fs::symlink(outside.join("runner.skeleton.ron"), project.join(SKELETON_PATH)).unwrap();
    let e = load_error(&project);
    assert!(e.contains("runner.skeleton.ron") && e.contains("outside the project folder"), "{e}");
    std::fs::remove_dir_all(&base).unwrap();

    // A clip folder.
    let (base, project, outside) = project_and_outside("escape-clips");
    std::fs::rename(project.join("clips"), outside.join("clips")).unwrap();
    std::os::unix::fs::symlink(outside.join("clips"), project.join("clips")).unwrap();
    let e = load_error(&project);
    assert!(e.contains(CLIP_PATH) && e.contains("outside the project folder"), "{e}");
    std::fs::remove_dir_all(&base).unwrap();

    // A .glb.
    let (base, project, outside) = project_and_outside("escape-glb");
    let glb = crate::support::gltf_dir().join("CesiumMan/CesiumMan.glb");
    std::fs::copy(&glb, outside.join("CesiumMan.glb")).unwrap();
    std::os::unix::fs::symlink(outside.join("CesiumMan.glb"), project.join("assets/CesiumMan.glb")).unwrap();
    let mut p = Project::load(&project).unwrap();
    p.manifest.assets.push("assets/CesiumMan.glb".into());
    std::fs::write(project.join("project.ron"), &p.to_files()[0].1).unwrap();
    let report = check_project(&project);
    assert!(
        report.errors.iter().any(|e| {
            let e = e.to_string();
            e.contains("CesiumMan.glb") && e.contains("outside the project folder")
        }),
        "{:?}",
        report.errors
    );
    std::fs::remove_dir_all(&base).unwrap();
}

/// Runs `f` on a thread and fails the test if it takes over 5 s.
fn within_5s<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(5)).expect("the load hangs (over 5 s)")
}

#[test]
fn a_device_or_a_fifo_as_a_scene_file_is_refused_quickly() {
    for (tag, device) in [("zero", "/dev/zero"), ("urandom", "/dev/urandom")] {
        let (base, project, _) = project_and_outside(tag);
        std::fs::remove_file(project.join(SCENE_PATH)).unwrap();
        std::os::unix::fs::symlink(device, project.join(SCENE_PATH)).unwrap();
        let p = project.clone();
        let e = within_5s(move || load_error(&p));
        assert!(e.contains("main.scene.ron") && e.contains(device), "{e}");
        std::fs::remove_dir_all(&base).unwrap();
    }
    let (base, project, _) = project_and_outside("fifo");
    std::fs::remove_file(project.join(SCENE_PATH)).unwrap();
    let made = std::process::Command::new("mkfifo").arg(project.join(SCENE_PATH)).status().unwrap();
    assert!(made.success(), "mkfifo failed");
    let p = project.clone();
    let e = within_5s(move || load_error(&p));
    assert!(e.contains("main.scene.ron") && e.contains("a FIFO, not a regular file"), "{e}");
    let p = project.clone();
    let report = within_5s(move || check_project(&p));
    assert!(report.errors.iter().any(|e| e.to_string().contains("a FIFO")), "{:?}", report.errors);
    std::fs::remove_dir_all(&base).unwrap();
}
