//! Clip files of format 2 (a key a line): format 1 files still load to the same clip; a re-save
//! is byte-identical, whatever the numbers; rows that do not fit their track are faults named
//! by track and key; and two edits of one clip made apart merge with git's three-way merge into
//! the clip with both edits.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use glam::{Quat, Vec3};
use marrow_engine::clip::Marker;
use marrow_engine::project::file::ClipAsset;
use marrow_engine::project::{ProjectError, clip_from_str, clip_from_str_repairing, clip_to_string, to_ron};
use marrow_engine::synthetic::{mocap_like_clip, mocap_skeleton};
use proptest::prelude::*;

fn path() -> &'static Path {
    Path::new("clips/take.clip.ron")
}

/// A 40-frame capture-like clip at 30 Hz on the 31-joint rig, with three markers.
fn take() -> ClipAsset {
    let sk = mocap_skeleton();
    let mut clip = mocap_like_clip(&sk, "take", 40, 30.0, 7);
    clip.set_markers(vec![
        Marker { name: "heel_l".into(), time: 0.2 },
        Marker { name: "heel_r".into(), time: 0.7 },
        Marker { name: "jump".into(), time: 1.1 },
    ]);
    ClipAsset { clip: Arc::new(clip), bones: sk.bone_names.clone() }
}

fn bone(c: &ClipAsset, name: &str) -> usize {
    c.bones.iter().position(|b| b == name).unwrap()
}

#[test]
fn a_format_1_file_loads_to_the_clip_its_format_2_resave_holds() {
    let old = include_str!("../fixtures/stride_v1.clip.ron");
    assert!(old.contains("version: 1") && old.contains("times: ["), "the fixture is format 1");
    let clip = clip_from_str(old, path()).unwrap();
    let text = clip_to_string(&clip);
    assert!(text.contains("version: 2") && text.contains("keys: [") && !text.contains("times: ["));
    assert_eq!(clip_from_str(&text, path()).unwrap(), clip, "the same clip either way");
    // The format 1 writer's text of any clip loads to it too.
    let a = take();
    let v1 = to_ron(&marrow_engine::project::file::ClipFileV1::from(&a));
    assert_eq!(clip_from_str(&v1, path()).unwrap(), a);
}

#[test]
fn a_key_is_one_line_and_a_resave_is_byte_identical() {
    let a = take();
    let text = clip_to_string(&a);
    assert_eq!(clip_to_string(&clip_from_str(&text, path()).unwrap()), text);
    let keys: usize = a.clip.key_count();
    let rows = text.lines().filter(|l| l.trim_start().starts_with("(time: ")).count();
    assert_eq!(rows, keys, "a row a key");
    // Adding one key changes one line: the new one.
    let mut b = a.clone();
    let knee = bone(&b, "LeftKnee");
    let clip = Arc::make_mut(&mut b.clip);
    clip.channels_mut()[knee].rotation.as_mut().unwrap().insert(0.05, Quat::from_rotation_x(0.3));
    let edited = clip_to_string(&b);
    let (before, after): (Vec<&str>, Vec<&str>) = (text.lines().collect(), edited.lines().collect());
    assert_eq!(after.len(), before.len() + 1);
    let first = before.iter().zip(&after).position(|(x, y)| x != y).unwrap();
    assert_eq!(&after[first + 1..], &before[first..], "only the new key's line differs");
    assert!(after[first].contains("time: 0.05"), "{}", after[first]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Any finite numbers: written, read and written again, the same bytes.
    #[test]
    fn any_numbers_resave_to_the_same_bytes(
        times in proptest::collection::btree_set(0u32..1_000_000, 1..12),
        seed in any::<u64>(),
    ) {
        let sk = mocap_skeleton();
        let mut clip = mocap_like_clip(&sk, "p", 2, 30.0, seed);
        let mut state = seed | 1;
        let mut x = move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            f32::from_bits(((state >> 41) as u32) | 0x3f80_0000) - 1.5 + (state >> 60) as f32 * 1e-7
        };
        let track = clip.channels_mut()[0].translation.as_mut().unwrap();
        for t in &times {
            track.insert(*t as f32 * 1.37e-4, Vec3::new(x(), x() * 1e-6, x() * 3e4));
        }
        let a = ClipAsset { clip: Arc::new(clip), bones: sk.bone_names.clone() };
        let text = clip_to_string(&a);
        let back = clip_from_str(&text, path()).unwrap();
        prop_assert_eq!(&back, &a);
        prop_assert_eq!(clip_to_string(&back), text);
    }
}

#[test]
fn rows_that_do_not_fit_their_track_are_named_by_track_and_key() {
    let file = |rows: &str, interpolation: &str| {
        format!(
            "(version: 2, name: \"c\", skeleton: \"s\", bones: [\"root\"], tracks: [(bone: \"root\", translation: \
             (interpolation: {interpolation}, keys: [{rows}]))])"
        )
    };
    // A CubicSpline key without its tangents, an out tangent on a Linear key.
    let cases = [
        (
            file(
                "(time: 0.0, value: (0, 0, 0), in: (0, 0, 0), out: (0, 0, 0)), (time: 1.0, value: (1, 0, 0))",
                "CubicSpline",
            ),
            "tracks/root/translation: key 1 at t = 1 has no in tangent (a CubicSpline key needs both); zero is used",
        ),
        (
            file("(time: 0.0, value: (0, 0, 0)), (time: 0.5, value: (1, 0, 0), out: (1, 1, 1))", "Linear"),
            "tracks/root/translation: key 1 at t = 0.5 has an out tangent, which only CubicSpline keys have; it is ignored",
        ),
        (
            file("(time: 0.0, value: (0, 0, 0)), (time: NaN, value: (1, 0, 0))", "Linear"),
            "tracks/root/translation: key 1 has a non-finite time (NaN); the key is dropped",
        ),
    ];
    for (text, expected) in cases {
        let strict = clip_from_str(&text, path()).unwrap_err().to_string();
        let (_, faults) = clip_from_str_repairing(&text, path()).unwrap();
        let faults: Vec<String> = faults.iter().map(ToString::to_string).collect();
        assert!(faults.iter().any(|f| f.ends_with(expected)), "{expected:?} not in {faults:?}");
        assert!(strict.contains("tracks/root/translation"), "{strict}");
    }
    // A newer format is refused as such.
    let newer = file("", "Linear").replace("version: 2", "version: 3");
    assert!(matches!(
        clip_from_str(&newer, path()),
        Err(ProjectError::Version { found: 3, supported: 2, .. })
    ));
}

/// Applies the two branches' edits: `a` adds a key near the start of the left knee; `b` moves a
/// key near the end of the right hip by a third of a frame and renames a marker.
fn edit_a(c: &mut ClipAsset) {
    let knee = bone(c, "LeftKnee");
    let clip = Arc::make_mut(&mut c.clip);
    clip.channels_mut()[knee].rotation.as_mut().unwrap().insert(0.05, Quat::from_rotation_x(0.25));
}

fn edit_b(c: &mut ClipAsset) {
    let hip = bone(c, "RightHip");
    let clip = Arc::make_mut(&mut c.clip);
    let track = clip.channels_mut()[hip].rotation.as_mut().unwrap();
    let k = track.len() - 3;
    let (t, v) = track.remove(k).unwrap();
    track.insert(t + 0.01, v);
    let mut markers = clip.markers().to_vec();
    markers[2].name = "leap".into();
    clip.set_markers(markers);
}

#[test]
fn two_edits_of_one_clip_made_on_two_branches_merge_without_conflict() {
    let base = take();
    let (mut a, mut b) = (base.clone(), base.clone());
    edit_a(&mut a);
    edit_b(&mut b);
    let dir = std::env::temp_dir().join(format!("marrow-clip-merge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, c: &ClipAsset| {
        let p = dir.join(name);
        std::fs::write(&p, clip_to_string(c)).unwrap();
        p
    };
    let (ours, old, theirs) = (write("ours.ron", &a), write("base.ron", &base), write("theirs.ron", &b));
    let out = match Command::new("git").arg("merge-file").arg("-p").args([&ours, &old, &theirs]).output() {
        Ok(out) => out,
        Err(e) => panic!("git is needed for this test (git merge-file): {e}"),
    };
    assert_eq!(out.status.code(), Some(0), "conflicts:\n{}", String::from_utf8_lossy(&out.stdout));
    let _ = std::fs::remove_dir_all(&dir);
    let merged = clip_from_str(std::str::from_utf8(&out.stdout).unwrap(), path()).unwrap();
    let mut both = base.clone();
    edit_a(&mut both);
    edit_b(&mut both);
    assert_eq!(merged, both, "the merged file is the clip with both edits");
    assert_eq!(
        clip_to_string(&merged),
        String::from_utf8(out.stdout).unwrap(),
        "and it is as Marrow writes it"
    );
}
