//! Damaged clip files: unsorted and NaN key times, an unknown easing name, a zero rotation, a
//! track for a bone the clip does not list, a bad frame rate; each fault is named with its
//! track and key, and the clip keeps everything that is sound. Plus the clip's frame rate
//! round trip, the Animator's temporary pose overrides and `World::pose_at`.

use std::path::Path;
use std::sync::Arc;

use glam::{Quat, Vec3};
use marrow_engine::animator::{Animator, AnimatorSettings};
use marrow_engine::math::Transform;
use marrow_engine::pose::PoseBuffer;
use marrow_engine::project::{ProjectError, clip_from_str, clip_from_str_repairing, clip_to_string};
use marrow_engine::skeleton::{NO_PARENT, Skeleton};

const DAMAGED: &str = r#"(
    version: 1,
    name: "walk",
    skeleton: "rig",
    bones: ["root", "arm"],
    frame_rate: -4.0,
    tracks: [
        (
            bone: "root",
            translation: (
                interpolation: Linear,
                times: [0.0, 1.0, 0.5, NaN],
                values: [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.5, 0.0, 0.0), (9.0, 9.0, 9.0)],
                key_easings: [Some("easeInBogus"), None, None, None],
            ),
        ),
        (
            bone: "arm",
            rotation: (
                interpolation: Linear,
                times: [0.0, 1.0],
                values: [(0.0, 0.0, 0.0, 1.0), (0.0, 0.0, 0.0, 0.0)],
            ),
        ),
        (
            bone: "tail",
            scale: (interpolation: Linear, times: [0.0], values: [(1.0, 1.0, 1.0)]),
        ),
    ],
    markers: [(name: "late", time: 9.0)],
)"#;

#[test]
fn every_fault_of_a_damaged_clip_is_named_and_the_sound_parts_kept() {
    let path = Path::new("clips/walk.clip.ron");
    let strict = clip_from_str(DAMAGED, path);
    assert!(strict.is_err(), "the strict reader refuses it");
    let (clip, faults) = clip_from_str_repairing(DAMAGED, path).unwrap();
    let text: Vec<String> = faults.iter().map(|f| f.to_string()).collect();
    let expect = [
        "walk.clip.ron: tracks/root/translation: key 3 has a non-finite time",
        "walk.clip.ron: tracks/root/translation: the keys are not in time order",
        "walk.clip.ron: tracks/root/translation/key_easings[0]: ",
        "walk.clip.ron: tracks/arm/rotation: key 1 at t = 1 is a zero-length rotation",
        "walk.clip.ron: tracks/tail: no bone \"tail\"",
        "walk.clip.ron: frame_rate: -4 is not a frame rate",
    ];
    for x in expect {
        assert!(text.iter().any(|t| t.contains(x)), "missing {x:?} in {text:#?}");
    }
    assert!(faults.iter().all(|f| matches!(f, ProjectError::Invalid { .. })));
    // The sound parts: the three translation keys in order, the first rotation key.
    let root = clip.clip.channels()[0].translation.as_ref().unwrap();
    assert_eq!(root.times(), &[0.0, 0.5, 1.0]);
    assert_eq!(root.values()[1], Vec3::new(0.5, 0.0, 0.0));
    assert_eq!(clip.clip.channels()[1].rotation.as_ref().unwrap().times(), &[0.0]);
    assert_eq!(clip.clip.frame_rate, 30.0);
    assert_eq!(clip.clip.markers()[0].name, "late", "markers are kept (outside the clip is a clip fault)");
    // What is kept saves and reads back strictly.
    let again = clip_from_str(&clip_to_string(&clip), path).unwrap();
    assert_eq!(again, clip);
}

#[test]
fn a_clip_frame_rate_round_trips_and_thirty_is_not_written() {
    let path = Path::new("c.clip.ron");
    let text = DAMAGED.replace("frame_rate: -4.0,", "frame_rate: 24.0,");
    let (mut clip, _) = clip_from_str_repairing(&text, path).unwrap();
    assert_eq!(clip.clip.frame_rate, 24.0);
    assert!(clip_to_string(&clip).contains("frame_rate: 24.0"));
    Arc::make_mut(&mut clip.clip).frame_rate = 30.0;
    assert!(!clip_to_string(&clip).contains("frame_rate"));
}

fn rig() -> Arc<Skeleton> {
    Arc::new(
        Skeleton::from_bind_pose(
            "rig",
            vec![
                ("root".into(), NO_PARENT, Transform::IDENTITY),
                ("arm".into(), 0, Transform::from_translation(Vec3::X)),
            ],
        )
        .unwrap(),
    )
}

#[test]
fn a_pose_override_replaces_the_sampled_bone_until_cleared() {
    let sk = rig();
    let mut a = Animator::new(sk.clone(), AnimatorSettings::default());
    let mut buf = PoseBuffer::new();
    let slot = buf.add_rig(2);
    let bent = Transform { rotation: Quat::from_rotation_z(1.0), ..Transform::from_translation(Vec3::X) };
    a.set_pose_override(1, Some(bent));
    a.evaluate(buf.rig_mut(slot).unwrap()).unwrap();
    assert_eq!(buf.rig(slot).unwrap().local[1], bent);
    assert_eq!(a.pose_overrides().len(), 1);
    a.set_pose_override(1, None);
    a.evaluate(buf.rig_mut(slot).unwrap()).unwrap();
    assert_eq!(buf.rig(slot).unwrap().local[1], sk.bind_pose[1]);
}

#[test]
fn a_clip_of_a_hundred_thousand_tracks_matches_bones_in_linear_work() {
    use marrow_engine::project::file::{BoneTracksFile, ClipAsset, ClipFileV1};
    let n = 100_000;
    let bones: Vec<String> = (0..n).map(|i| format!("b{i}")).collect();
    let tracks: Vec<BoneTracksFile> = bones
        .iter()
        .rev()
        .map(|b| BoneTracksFile { bone: b.clone(), translation: None, rotation: None, scale: None })
        .collect();
    let mut f = ClipFileV1 {
        version: 1,
        name: "wide".into(),
        skeleton: "rig".into(),
        bones,
        looping: false,
        length: 0.0,
        frame_rate: 30.0,
        default_interpolation: None,
        tracks,
        markers: Vec::new(),
    };
    let asset = ClipAsset::try_from(&f).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(asset.clip.channels().len(), n);
    let (repaired, faults) = ClipAsset::repair(&f);
    assert!(faults.is_empty() && repaired.clip.channels().len() == n);
    // A track naming no bone is named, strict and repairing.
    f.tracks[n - 1].bone = "nope".into();
    assert!(ClipAsset::try_from(&f).unwrap_err().to_string().contains("no bone \"nope\""));
    assert_eq!(ClipAsset::repair(&f).1.len(), 1);
}

/// A two-key rotation clip for `rig()`'s arm, its second key `second`.
fn rotation_clip(second: &str) -> String {
    format!(
        r#"(
    version: 1,
    name: "turn",
    skeleton: "rig",
    bones: ["root", "arm"],
    tracks: [
        (
            bone: "arm",
            rotation: (
                interpolation: Linear,
                times: [0.0, 1.0],
                values: [(0.0, 0.0, 0.0, 1.0), {second}],
            ),
        ),
    ],
)"#
    )
}

#[test]
fn a_rotation_key_off_unit_length_loads_as_its_rotation_and_one_built_too_long_is_refused_by_name() {
    // Found by the project mutation run: a stride key's x set to -1e38. Its square overflowed,
    // the check passed it, and the slerp between it and its neighbour played NaN; a key a
    // little off unit length (a hand-written `(0, 1, 0, 1)`) sampled at its instant as a
    // rotation scaled by its squared length.
    let path = Path::new("clips/turn.clip.ron");
    let half_x = Quat::from_xyzw(-1.0, 0.0, 0.0, 0.0);
    let y90 = Quat::from_rotation_y(std::f32::consts::FRAC_PI_2);
    for (second, want) in [
        ("(-1e38, 0.0, 0.0, 1.0)", half_x),
        ("(0.0, 1.0, 0.0, 1.0)", y90),
        ("(0.0, 70.0, 0.0, 70.0)", y90),
        ("(0.0, 3e30, 0.0, 3e30)", y90),
    ] {
        let clip = clip_from_str(&rotation_clip(second), path).unwrap_or_else(|e| panic!("{second}: {e}"));
        let track = clip.clip.channels()[1].rotation.as_ref().unwrap();
        assert!(track.values()[1].abs_diff_eq(want, 1e-6), "{second}: kept as {}", track.values()[1]);
        assert!(track.find_fault().is_none());
        for k in 0..=20 {
            let t = k as f32 / 20.0;
            let q = track.sample(t).unwrap();
            assert!(q.is_finite() && (q.length() - 1.0).abs() < 1e-5, "{second} at {t}: {q}");
        }
        // Saved, it reads back as the same unit rotation.
        let again = clip_from_str(&clip_to_string(&clip), path).unwrap();
        assert_eq!(again, clip, "{second}");
    }
    // A key already unit to rounding keeps its bits (the samples' goldens rely on it).
    let unit = Quat::from_rotation_x(0.3);
    let text = rotation_clip(&format!("({:?}, 0.0, 0.0, {:?})", unit.x, unit.w));
    let clip = clip_from_str(&text, path).unwrap();
    assert_eq!(clip.clip.channels()[1].rotation.as_ref().unwrap().values()[1].to_array(), unit.to_array());
    // A track built in code (no loader between) with a key too long to interpolate: named.
    use marrow_engine::track::{Interpolation, Track};
    let keys = vec![Quat::IDENTITY, Quat::from_xyzw(0.0, 1e3, 0.0, 0.0)];
    let fault = Track::from_keys(Interpolation::Linear, vec![0.0, 1.0], keys).unwrap_err().to_string();
    assert!(fault.contains("key 1 at t = 1 is a rotation of length 1000, past the 100"), "{fault}");
}
