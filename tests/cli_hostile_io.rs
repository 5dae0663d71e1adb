//! The `marrow` binary's writes against hostile targets (issue 29, file safety): `--out` naming a
//! device, a link, a folder or a read-only folder; and the kill-9 harness, which kills a save,
//! an export (`.glb` and `.gltf` + `.bin`) and `simplify --out` at random moments (seeded) and
//! checks after each kill that the target is the old version or the new one, whole, with no
//! journal or temp left that changes the next load. `MARROW_KILL_RUNS=N` sets the kills per
//! command (default 40). Unix only (links, device nodes, SIGKILL).
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use marrow_engine::project::Project;

fn marrow(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_marrow")).args(args).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), text)
}

fn model(m: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/gltf").join(m).display().to_string()
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("marrow-cli-hostile-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn is_char_device(p: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(p).is_ok_and(|m| m.file_type().is_char_device())
}

/// The two writing commands, each with `--out` set to `out`.
fn writers(out: &Path) -> [Vec<String>; 2] {
    let out = out.display().to_string();
    [
        vec!["export".into(), model("CesiumMan/CesiumMan.glb"), "--out".into(), out.clone()],
        vec![
            "simplify".into(),
            model("CesiumMan/CesiumMan.glb"),
            "--tolerance".into(),
            "0.01".into(),
            "--out".into(),
            out,
        ],
    ]
}

fn run(args: &[String]) -> (i32, String) {
    marrow(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

#[test]
fn out_naming_dev_full_is_refused_and_the_device_stays() {
    assert!(is_char_device(Path::new("/dev/full")), "/dev/full is not a character device here");
    let dir = temp_dir("dev-full");
    for (args, ext) in writers(&dir.join("x")).iter().zip(["glb", "clip.ron"]) {
        // `--out` must end in the command's extension, so /dev/full is reached through a link.
        let link = dir.join(format!("full.{ext}"));
        std::os::unix::fs::symlink("/dev/full", &link).unwrap();
        let mut args = args.clone();
        *args.last_mut().unwrap() = link.display().to_string();
        let (code, out) = run(&args);
        assert_ne!(code, 0, "{args:?} wrote over /dev/full: {out}");
        assert!(out.contains("a character device") && !out.contains("wrote"), "{out}");
        assert!(is_char_device(Path::new("/dev/full")), "/dev/full was replaced");
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was replaced");
        // A device node under the output's own name (made only where this user may make one).
        let node = dir.join(format!("node.{ext}"));
        let made = Command::new("mknod").arg(&node).args(["c", "1", "7"]).status().is_ok_and(|s| s.success());
        if made {
            *args.last_mut().unwrap() = node.display().to_string();
            let (code, out) = run(&args);
            assert_ne!(code, 0, "{out}");
            assert!(is_char_device(&node), "the device node was replaced: {out}");
        } else {
            eprintln!("SKIPPED: the device-node case of {ext} (mknod is not allowed here)");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn out_through_a_link_writes_the_linked_file_and_keeps_the_link() {
    let dir = temp_dir("through-link");
    std::fs::create_dir_all(dir.join("real")).unwrap();
    for (args, ext) in writers(&dir.join("x")).iter().zip(["glb", "clip.ron"]) {
        let (target, link) = (dir.join(format!("real/target.{ext}")), dir.join(format!("link.{ext}")));
        std::fs::write(&target, "old").unwrap();
        std::os::unix::fs::symlink("real/".to_owned() + &format!("target.{ext}"), &link).unwrap();
        let mut args = args.clone();
        *args.last_mut().unwrap() = link.display().to_string();
        let (code, out) = run(&args);
        assert_eq!(code, 0, "{out}");
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was replaced");
        let written = std::fs::read(&target).unwrap();
        assert!(written != b"old" && written.len() > 100, "the linked file was not written");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn out_replaced_by_a_folder_or_in_a_read_only_folder_is_a_named_error_and_nothing_is_lost() {
    let dir = temp_dir("folder-target");
    for (args, ext) in writers(&dir.join("x")).iter().zip(["glb", "clip.ron"]) {
        let target = dir.join(format!("folder.{ext}"));
        std::fs::create_dir_all(target.join("kept")).unwrap();
        let mut args = args.clone();
        *args.last_mut().unwrap() = target.display().to_string();
        let (code, out) = run(&args);
        assert_ne!(code, 0, "{out}");
        assert!(out.contains("is a folder, not a regular file") && !out.contains("wrote"), "{out}");
        assert!(target.join("kept").is_dir());
    }
    // SAFETY of the check: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        eprintln!(
            "SKIPPED LOUDLY: the read-only folder case (running as root, which ignores permissions); \
             the folder-in-place-of-a-file case above stands in for it"
        );
    } else {
        use std::os::unix::fs::PermissionsExt;
        let ro = dir.join("read-only");
        std::fs::create_dir_all(&ro).unwrap();
        for (args, ext) in writers(&dir.join("x")).iter().zip(["glb", "clip.ron"]) {
            let target = ro.join(format!("old.{ext}"));
            std::fs::write(&target, "old").unwrap();
            std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
            let mut args = args.clone();
            *args.last_mut().unwrap() = target.display().to_string();
            let (code, out) = run(&args);
            std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
            assert_ne!(code, 0, "{out}");
            assert!(out.contains("old.") && !out.contains("wrote"), "{out}");
            assert_eq!(std::fs::read(&target).unwrap(), b"old");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A small tmpfs mounted for one test (unmounted on drop), or `None` with a loud skip where this
/// process may not mount (not root, or no `CAP_SYS_ADMIN`).
struct SmallDisk(PathBuf);

impl SmallDisk {
    fn mount(at: &Path, size: &str) -> Option<Self> {
        std::fs::create_dir_all(at).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            eprintln!(
                "SKIPPED LOUDLY: cannot mount a {size} tmpfs at {} (needs root with CAP_SYS_ADMIN)",
                at.display()
            );
        }
        ok.then(|| Self(at.to_owned()))
    }

    fn read_only(&self) {
        let ok = Command::new("mount").args(["-o", "remount,ro"]).arg(&self.0).status().unwrap();
        assert!(ok.success(), "remount read-only failed");
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

#[test]
fn a_full_disk_or_a_read_only_disk_is_a_named_error_and_the_old_file_stays() {
    let dir = temp_dir("small-disk");
    // 64 KiB holds the old files but not CesiumMan's export (about 450 KB) or its clip.
    for (i, ro) in [false, true].into_iter().enumerate() {
        let Some(disk) = SmallDisk::mount(&dir.join(format!("disk{i}")), "64k") else { return };
        let commands = writers(&dir.join("x"));
        let targets = ["glb", "clip.ron"].map(|ext| disk.0.join(format!("old.{ext}")));
        for t in &targets {
            std::fs::write(t, "old").unwrap();
        }
        if ro {
            disk.read_only();
        }
        for (args, target) in commands.iter().zip(&targets) {
            let mut args = args.clone();
            *args.last_mut().unwrap() = target.display().to_string();
            let (code, out) = run(&args);
            assert_ne!(code, 0, "{out}");
            let why = if ro { "Read-only file system" } else { "No space left on device" };
            assert!(out.contains("old.") && out.contains(why) && !out.contains("wrote"), "{out}");
            assert_eq!(std::fs::read(target).unwrap(), b"old", "{} changed", target.display());
        }
        let mut left: Vec<_> = std::fs::read_dir(&disk.0)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["old.clip.ron", "old.glb"], "only the old files stay (no temp)");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn check_of_a_fifo_or_a_device_named_as_a_gltf_file_is_refused_quickly() {
    let dir = temp_dir("check-kinds");
    let fifo = dir.join("pipe.glb");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success(), "mkfifo failed");
    let zero = dir.join("zero.glb");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    for (file, kind) in [(&fifo, "a FIFO"), (&zero, "a character device")] {
        let started = Instant::now();
        let mut child = Command::new(env!("CARGO_BIN_EXE_marrow"))
            .arg("check")
            .arg(file)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        while child.try_wait().unwrap().is_none() {
            if started.elapsed() > Duration::from_secs(10) {
                let _ = child.kill();
                panic!("check {} hangs (over 10 s)", file.display());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        let text =
            format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(!out.status.success(), "{text}");
        assert!(
            text.contains(&*file.file_name().unwrap().to_string_lossy()) && text.contains(kind),
            "{text}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_gltf_export_names_a_new_buffer_and_removes_the_old_one() {
    let dir = temp_dir("gltf-pair");
    let out = dir.join("scene.gltf");
    let out_s = out.display().to_string();
    std::fs::write(dir.join("scene.bin"), "an old build's buffer").unwrap();
    std::fs::write(&out, r#"{"asset":{"version":"2.0"},"buffers":[{"uri":"scene.bin","byteLength":21}]}"#)
        .unwrap();
    let m = model("CesiumMan/CesiumMan.glb");
    let bins = || -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".bin"))
            .collect();
        v.sort();
        v
    };
    for weights in ["float", "unorm8"] {
        let (code, text) = marrow(&["export", &m, "--out", &out_s, "--weights", weights]);
        assert_eq!(code, 0, "{text}");
        let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
        let uri = json["buffers"][0]["uri"].as_str().unwrap().to_owned();
        assert!(uri.starts_with("scene.") && uri.len() == "scene.12345678.bin".len(), "{uri}");
        assert_eq!(bins(), vec![uri], "only the buffer the new .gltf names is left");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A seeded xorshift64* generator (the kill delays).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n.max(1)
    }
}

/// Runs `args` and kills it with SIGKILL after `delay` (if it is still running); returns whether
/// it finished by itself.
fn run_killed(args: &[String], delay: Duration) -> bool {
    let mut child = Command::new(env!("CARGO_BIN_EXE_marrow"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(delay);
    let finished = child.try_wait().unwrap().is_some();
    if !finished {
        child.kill().unwrap(); // SIGKILL on Unix
    }
    child.wait().unwrap();
    finished
}

/// The names below `dir` that are Marrow temps or journals.
fn leftovers(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else if name.contains(".marrow-tmp-") || name.starts_with(".marrow-save-journal") {
                out.push(e.path().display().to_string());
            }
        }
    }
    out
}

/// How long one uninterrupted run of `args` takes.
fn duration_of(args: &[String]) -> Duration {
    let start = Instant::now();
    let (code, out) = run(args);
    assert_eq!(code, 0, "{args:?}: {out}");
    start.elapsed()
}

/// Kill counts per command: `MARROW_KILL_RUNS` or 40.
fn kill_runs() -> usize {
    std::env::var("MARROW_KILL_RUNS").ok().and_then(|s| s.parse().ok()).unwrap_or(40)
}

/// Kills `versions[i % 2]` (two commands writing the same target differently) `runs` times at
/// random moments within a full run's time; after each kill `state()` must be one of the two
/// whole versions (or the one before the first). Returns (kills that landed, runs that finished).
fn harness(
    versions: &[Vec<String>; 2],
    state: &dyn Fn() -> String,
    expect: &[String; 2],
    rng: &mut Rng,
) -> (usize, usize) {
    let full = duration_of(&versions[0]).max(duration_of(&versions[1]));
    let (mut killed, mut finished) = (0, 0);
    for i in 0..kill_runs() {
        let before = state();
        let delay = Duration::from_micros(rng.below(full.as_micros() as u64 * 5 / 4));
        if run_killed(&versions[i % 2], delay) {
            finished += 1;
        } else {
            killed += 1;
        }
        let after = state();
        assert!(
            after == before || after == expect[i % 2],
            "kill {i} after {delay:?}: the target is neither the old version nor the new one:\n{after}"
        );
    }
    (killed, finished)
}

#[test]
fn writes_killed_at_any_moment_leave_the_old_or_the_new_version_whole() {
    let dir = temp_dir("kill9");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut figures = Vec::new();

    // The project save (the editor's save_files, through `marrow resave`).
    let project = dir.join("project");
    let p = project.display().to_string();
    assert_eq!(marrow(&["gen-runner", "--out", &p]).0, 0);
    let resave = |name: &str| vec!["resave".to_owned(), p.clone(), "--rename".to_owned(), name.to_owned()];
    let project_state = || -> String {
        // The next load (which finishes or refuses what a kill left) must give one whole version.
        let loaded = Project::load(&project).unwrap();
        let names: Vec<&str> = loaded.scenes.values().map(|s| s.name.as_str()).collect();
        assert!(
            names.iter().all(|n| *n == loaded.manifest.name),
            "half a save: {} vs {names:?}",
            loaded.manifest.name
        );
        assert!(leftovers(&project).is_empty(), "left after the load: {:?}", leftovers(&project));
        loaded.manifest.name
    };
    let (k, f) = harness(
        &[resave("alpha"), resave("beta")],
        &project_state,
        &["alpha".into(), "beta".into()],
        &mut rng,
    );
    figures.push(("resave", k, f));

    // Export to .glb, .gltf + .bin, and simplify --out: each target byte for byte the old or the new
    // output, taken from uninterrupted runs.
    let m = model("CesiumMan/CesiumMan.glb");
    for (tag, out_name) in
        [("export-glb", "out.glb"), ("export-gltf", "out.gltf"), ("simplify", "out.clip.ron")]
    {
        let out = dir.join(tag).join(out_name);
        std::fs::create_dir_all(out.parent().unwrap()).unwrap();
        let o = out.display().to_string();
        let versions: [Vec<String>; 2] = if tag == "simplify" {
            ["0.001", "0.05"].map(|t| {
                vec!["simplify".into(), m.clone(), "--tolerance".into(), t.into(), "--out".into(), o.clone()]
            })
        } else {
            ["float", "unorm8"].map(|w| {
                vec!["export".into(), m.clone(), "--out".into(), o.clone(), "--weights".into(), w.into()]
            })
        };
        let state = || -> String {
            let Ok(bytes) = std::fs::read(&out) else { return "none".into() };
            let mut s = format!("{:016x}", fnv(&bytes));
            if tag == "export-gltf" {
                // The buffer it names is there, whole.
                let json: serde_json::Value = serde_json::from_slice(&bytes).expect("a whole .gltf");
                let bin = out.with_file_name(json["buffers"][0]["uri"].as_str().unwrap());
                s += &format!(" {:016x}", fnv(&std::fs::read(&bin).expect("the buffer the .gltf names")));
            }
            s
        };
        let mut expect = [String::new(), String::new()];
        for (i, v) in versions.iter().enumerate() {
            assert_eq!(run(v).0, 0);
            expect[i] = state();
        }
        assert_ne!(expect[0], expect[1], "{tag}: the two versions must differ");
        let (k, f) = harness(&versions, &state, &expect, &mut rng);
        figures.push((tag, k, f));
        // One more uninterrupted run: whatever the kills left (temps, orphaned buffers) is gone.
        assert_eq!(run(&versions[0]).0, 0);
        assert!(leftovers(out.parent().unwrap()).is_empty(), "{tag}: {:?}", leftovers(out.parent().unwrap()));
        let files = std::fs::read_dir(out.parent().unwrap()).unwrap().count();
        assert_eq!(files, if tag == "export-gltf" { 2 } else { 1 }, "{tag}: stray files left");
    }
    for (tag, k, f) in &figures {
        eprintln!("kill-9 {tag}: {k} killed midway, {f} finished first, 0 partial or unloadable");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}
