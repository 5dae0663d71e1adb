//! BVH import (`marrow_engine::bvh`): every grammar rule and every fault with its `line:col`;
//! poses equal to forward kinematics computed here, from the file's own numbers, for each of the
//! six rotation orders and for positions on a non-root joint; a CMU-shaped 120 Hz capture; and
//! hostile input refused quickly by name.

use std::path::Path;
use std::time::{Duration, Instant};

use glam::{DMat4, DVec3, Mat4};
use marrow_engine::bvh::{self, BvhError, BvhFault, BvhOptions, EndSites, MAX_JOINTS, MAX_VALUES};
use marrow_engine::gltf::{ImportedScene, ScenePose};
use marrow_engine::synthetic::{mocap_bvh, mocap_skeleton};

fn import_with(bytes: &[u8], options: &BvhOptions) -> Result<ImportedScene, BvhError> {
    bvh::import_slice(bytes, Path::new("test.bvh"), options)
}

fn import(text: &str) -> Result<ImportedScene, BvhError> {
    import_with(text.as_bytes(), &BvhOptions::default())
}

/// The smallest file using every block kind: lines 1-20.
const MIN: &str = "HIERARCHY
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
Frame Time: 0.0333333
0 0 0 0 0 0 0 0 0
1 2 3 10 20 30 40 50 60
";

/// `MIN` with `from` replaced by `to` (which must occur).
fn min_with(from: &str, to: &str) -> String {
    assert!(MIN.contains(from), "{from:?}");
    MIN.replacen(from, to, 1)
}

/// Line and 1-based column of the first `needle` on line `line` of `text` (found independently
/// of the lexer).
fn at(text: &str, line: usize, needle: &str) -> (usize, usize) {
    let l = text.split('\n').nth(line - 1).unwrap_or_else(|| panic!("no line {line}"));
    let i = l.find(needle).unwrap_or_else(|| panic!("{needle:?} not on line {line}: {l:?}"));
    (line, l[..i].chars().count() + 1)
}

/// A hierarchy of `n` joints: flat under the root, or nested each in the one before.
fn many_joints(n: usize, nested: bool) -> String {
    let mut s = String::from("HIERARCHY\nROOT J0\n{\n OFFSET 0 0 0\n");
    for k in 1..n {
        s += &format!("JOINT J{k}\n{{\n OFFSET 0 1 0\n");
        if !nested {
            s += "}\n";
        }
    }
    if nested {
        s += &"}\n".repeat(n - 1);
    }
    s + "}\nMOTION\nFrames: 0\nFrame Time: 0.01\n"
}

type Check = fn(&BvhFault) -> bool;

/// A table row: name, file, where the fault is (when checked), what it must be.
type Case = (&'static str, String, Option<(usize, usize)>, Check);

#[test]
fn each_grammar_fault_is_named_at_its_line_and_column() {
    let m = MIN;
    let big = MIN.replace("Frames: 2", "Frames: 3") + &" ".repeat(60) + "\n";
    let flat = many_joints(MAX_JOINTS + 1, false);
    let deep = many_joints(bvh::MAX_DEPTH + 1, true);
    let flat_line = 1 + 4 * MAX_JOINTS; // the JOINT line of block MAX_JOINTS + 1
    let deep_line = 2 + 3 * bvh::MAX_DEPTH;
    let cmu = mocap_bvh(2, 120.0, 1).replace("Frames: 2", "Frames: 1000000");
    let cmu_frames = cmu.lines().position(|l| l.starts_with("Frames:")).unwrap() + 1;
    let cases: Vec<Case> = vec![
        (
            "empty file",
            String::new(),
            Some((1, 1)),
            |f| matches!(f, BvhFault::Expected { found, .. } if found == "the end of the file"),
        ),
        (
            "not HIERARCHY",
            "HIERARCHIE\n".into(),
            Some((1, 1)),
            |f| matches!(f, BvhFault::Expected { expected, .. } if expected.contains("HIERARCHY")),
        ),
        (
            "no ROOT",
            "HIERARCHY\nMOTION\n".into(),
            Some((2, 1)),
            |f| matches!(f, BvhFault::Expected { expected, found } if expected.contains("ROOT") && found.contains("MOTION")),
        ),
        (
            "ROOT without a name",
            "HIERARCHY\nROOT\n".into(),
            Some((3, 1)),
            |f| matches!(f, BvhFault::Expected { expected, .. } if expected == "a joint name"),
        ),
        (
            "JOINT named {",
            min_with("JOINT Chest", "JOINT {"),
            Some((6, 9)),
            |f| matches!(f, BvhFault::Expected { expected, .. } if expected == "a joint name"),
        ),
        (
            "no {",
            min_with("ROOT Hips\n{\n", "ROOT Hips\n"),
            Some((3, 3)),
            |f| matches!(f, BvhFault::Expected { expected, found } if expected == "\"{\"" && found.contains("OFFSET")),
        ),
        (
            "OFFSET with two numbers",
            min_with("OFFSET 0 1 0\n    CHANNELS", "OFFSET 0 1\n    CHANNELS"),
            Some(at(m, 9, "CHANNELS")),
            |f| matches!(f, BvhFault::BadNumber { what, token } if what == "OFFSET z" && token == "CHANNELS"),
        ),
        (
            "OFFSET NaN",
            min_with("OFFSET 0 1 0\n    CHANNELS", "OFFSET 0 nan 0\n    CHANNELS"),
            Some(at(m, 8, "1")),
            |f| matches!(f, BvhFault::NotFinite { what, .. } if what == "OFFSET y"),
        ),
        (
            "CHANNELS names fewer",
            min_with(" Xrotation Yrotation\n  JOINT", " Xrotation\n  JOINT"),
            Some(at(m, 5, "CHANNELS")),
            |f| *f == BvhFault::ChannelCount { declared: 6, named: 5 },
        ),
        (
            "CHANNELS names more",
            min_with("3 Zrotation Xrotation Yrotation", "3 Zrotation Xrotation Yrotation Xposition"),
            Some(at(m, 9, "CHANNELS")),
            |f| *f == BvhFault::ChannelCount { declared: 3, named: 4 },
        ),
        ("CHANNELS over 6", min_with("CHANNELS 6", "CHANNELS 7"), Some(at(m, 5, "6")), |f| {
            *f == BvhFault::TooManyChannels { declared: 7 }
        }),
        (
            "CHANNELS count not a number",
            min_with("CHANNELS 3", "CHANNELS three"),
            Some(at(m, 9, "3")),
            |f| matches!(f, BvhFault::BadNumber { what, .. } if what == "channel count"),
        ),
        (
            "unknown channel",
            min_with("3 Zrotation Xrotation Yrotation", "3 Zrotation Wrotation Yrotation"),
            Some(at(m, 9, "Xrotation")),
            |f| matches!(f, BvhFault::UnknownChannel { name } if name == "Wrotation"),
        ),
        (
            "repeated channel",
            min_with("3 Zrotation Xrotation Yrotation", "3 Zrotation Xrotation Zrotation"),
            Some(at(m, 9, "Yrotation")),
            |f| matches!(f, BvhFault::RepeatedChannel { name } if name == "Zrotation"),
        ),
        (
            "End Site with CHANNELS",
            min_with("      OFFSET 0 1 0\n    }", "      OFFSET 0 1 0\n      CHANNELS 1 Xrotation\n    }"),
            Some((13, 7)),
            |f| matches!(f, BvhFault::Expected { expected, .. } if expected.contains("End Site")),
        ),
        (
            "End without Site",
            min_with("End Site", "End Sight"),
            Some(at(m, 10, "Site")),
            |f| matches!(f, BvhFault::Expected { expected, .. } if expected == "\"Site\""),
        ),
        (
            "unclosed ROOT",
            min_with("}\nMOTION", "MOTION"),
            Some((15, 1)),
            |f| matches!(f, BvhFault::Expected { found, .. } if found.contains("MOTION")),
        ),
        ("duplicate name", min_with("JOINT Chest", "JOINT Hips"), Some(at(m, 6, "JOINT")), |f| {
            *f == BvhFault::DuplicateName { name: "Hips".into(), first_line: 2 }
        }),
        (
            "no MOTION",
            MIN.split("MOTION").next().unwrap().to_owned(),
            Some((16, 1)),
            |f| matches!(f, BvhFault::Expected { found, .. } if found == "the end of the file"),
        ),
        (
            "Frames misspelt",
            min_with("Frames: 2", "Frame: 2"),
            Some((17, 1)),
            |f| matches!(f, BvhFault::Expected { expected, .. } if expected == "\"Frames:\""),
        ),
        (
            "Frames negative",
            min_with("Frames: 2", "Frames: -2"),
            Some((17, 9)),
            |f| matches!(f, BvhFault::BadNumber { what, .. } if what == "frame count"),
        ),
        ("Frame Time zero", min_with("0.0333333", "0"), Some((18, 13)), |f| {
            matches!(f, BvhFault::FrameTime { .. })
        }),
        ("Frame Time negative", min_with("0.0333333", "-0.1"), Some((18, 13)), |f| {
            matches!(f, BvhFault::FrameTime { .. })
        }),
        ("Frame Time NaN", min_with("0.0333333", "NaN"), Some((18, 13)), |f| {
            matches!(f, BvhFault::FrameTime { .. })
        }),
        ("Frame Time below f32", min_with("0.0333333", "1e-50"), Some((18, 13)), |f| {
            matches!(f, BvhFault::FrameTime { .. })
        }),
        (
            "data on the Frame Time line",
            min_with("0.0333333", "0.0333333 7"),
            Some((18, 23)),
            |f| matches!(f, BvhFault::Expected { expected, .. } if expected == "a new line"),
        ),
        ("a frame short of values", min_with("40 50 60", "40 50"), Some((20, 1)), |f| {
            *f == BvhFault::FrameLength { frame: 2, found: 8, declared: 9 }
        }),
        ("a frame over", min_with("40 50 60", "40 50 60 70"), Some((20, 1)), |f| {
            *f == BvhFault::FrameLength { frame: 2, found: 10, declared: 9 }
        }),
        (
            "NaN in a frame",
            min_with("40 50 60", "40 NaN 60"),
            Some(at(m, 20, "50")),
            |f| matches!(f, BvhFault::NotFinite { what, .. } if what == "frame 2"),
        ),
        ("infinity in a frame", min_with("40 50 60", "40 1e39 60"), Some(at(m, 20, "50")), |f| {
            matches!(f, BvhFault::NotFinite { .. })
        }),
        (
            "word in a frame",
            min_with("1 2 3", "1 two 3"),
            Some((20, 3)),
            |f| matches!(f, BvhFault::BadNumber { what, token } if what == "frame 2" && token == "two"),
        ),
        ("fewer frames than declared", big, Some((22, 1)), |f| {
            *f == BvhFault::MissingFrames { declared: 3, found: 2 }
        }),
        ("more frames than declared", min_with("Frames: 2", "Frames: 1"), Some((20, 1)), |f| {
            *f == BvhFault::ExtraFrames { declared: 1 }
        }),
        (
            "a million frames declared, two given",
            min_with("Frames: 2", "Frames: 1000000"),
            Some((17, 1)),
            |f| matches!(f, BvhFault::FramesPastFile { frames: 1_000_000, channels: 9, .. }),
        ),
        (
            "frames past the value budget",
            cmu,
            Some((cmu_frames, 1)),
            |f| matches!(f, BvhFault::TooManyValues { frames: 1_000_000, channels: 96, limit } if *limit == MAX_VALUES),
        ),
        (
            "frames past the key budget",
            "HIERARCHY\nROOT A\n{\n OFFSET 0 0 0\n CHANNELS 1 Zrotation\n}\nMOTION\nFrames: 9000000\nFrame Time: 0.01\n0\n".into(),
            Some((8, 1)),
            |f| matches!(f, BvhFault::TooManyKeys { frames: 9_000_000, tracks: 1, limit } if *limit == bvh::MAX_KEYS),
        ),
        ("too many joints", flat, Some((flat_line, 1)), |f| {
            *f == BvhFault::TooManyJoints { limit: MAX_JOINTS }
        }),
        ("nested too deep", deep, Some((deep_line, 1)), |f| {
            *f == BvhFault::TooDeep { limit: bvh::MAX_DEPTH }
        }),
        (
            "OFFSET out of range",
            min_with("OFFSET 0 1 0\n    CHANNELS", "OFFSET 0 1e7 0\n    CHANNELS"),
            Some(at(m, 6, "JOINT")),
            |f| matches!(f, BvhFault::OutOfRange { what, .. } if what == "OFFSET y of \"Chest\""),
        ),
        (
            "position out of range",
            min_with("1 2 3", "1 2e7 3"),
            Some((17, 1)),
            |f| matches!(f, BvhFault::OutOfRange { what, .. } if what == "frame 2 Yposition of \"Hips\""),
        ),
    ];
    for (name, text, pos, check) in &cases {
        let err = match import(text) {
            Ok(_) => panic!("{name}: imported"),
            Err(e) => e,
        };
        let (p, fault) = err.fault().unwrap_or_else(|| panic!("{name}: {err}"));
        assert!(check(fault), "{name}: {err}");
        if let Some((line, col)) = pos {
            assert_eq!((p.line, p.col), (*line, *col), "{name}: {err}");
        }
        let shown = err.to_string();
        assert!(shown.starts_with(&format!("test.bvh:{}:{}: ", p.line, p.col)), "{name}: {shown}");
    }
    assert_eq!(cases.len(), 40);
}

#[test]
fn bytes_that_are_not_utf8_are_named_at_their_place() {
    let mut bytes = MIN.as_bytes().to_vec();
    let i = MIN.find("Chest").unwrap() + 2;
    bytes[i] = 0xff;
    let err = import_with(&bytes, &BvhOptions::default()).unwrap_err();
    let (p, f) = err.fault().unwrap();
    assert_eq!((p.line, p.col, f), (6, 11, &BvhFault::NotText { byte: 0xff }), "{err}");
}

#[test]
fn a_scale_that_is_not_finite_and_positive_is_refused() {
    for scale in [0.0, -1.0, f32::NAN, f32::INFINITY] {
        let err = import_with(MIN.as_bytes(), &BvhOptions { scale, ..Default::default() }).unwrap_err();
        assert!(matches!(err, BvhError::BadScale { .. }), "{err}");
    }
}

#[test]
fn each_grammar_rule_is_accepted() {
    let s = import(MIN).unwrap();
    let sk = &s.rigs[0].skeleton;
    assert_eq!(sk.bone_names, ["Hips", "Chest", "Chest_end"]);
    assert_eq!(sk.parents, [u16::MAX, 0, 1]);
    assert_eq!(sk.name, "test");
    let clip = &s.animations[0].clips[0].clip;
    assert_eq!(clip.channels()[0].translation.as_ref().unwrap().len(), 2);
    assert!(clip.channels()[1].translation.is_none() && clip.channels()[2].rotation.is_none());
    assert!((s.animations[0].duration - 0.0333333).abs() < 1e-7);
    assert_eq!(clip.frame_rate, 30.0);

    let dropped =
        import_with(MIN.as_bytes(), &BvhOptions { end_sites: EndSites::Drop, ..Default::default() }).unwrap();
    assert_eq!(dropped.rigs[0].skeleton.bone_names, ["Hips", "Chest"]);

    let crlf = import(&MIN.replace('\n', "\r\n")).unwrap();
    assert_eq!(crlf.rigs[0].skeleton, *sk);
    let tabs = import(&MIN.replace(' ', "\t")).unwrap();
    assert_eq!(tabs.rigs[0].skeleton, *sk);

    // Two roots; a joint with no CHANNELS; CHANNELS 0; positions and rotations interleaved.
    let two = min_with(
        "MOTION",
        "ROOT Prop\n{\n OFFSET 1 0 0\n JOINT Tip\n {\n  OFFSET 0 0 1\n  CHANNELS 0\n }\n}\nMOTION",
    );
    let two = import(&two).unwrap();
    assert_eq!(two.rigs[0].skeleton.parents, [u16::MAX, 0, 1, u16::MAX, 3]);
    let mixed = min_with("3 Zrotation Xrotation Yrotation", "3 Zrotation Xposition Yrotation");
    let mixed = import(&mixed).unwrap();
    let ch = &mixed.animations[0].clips[0].clip.channels()[1];
    assert_eq!(ch.translation.as_ref().unwrap().values()[1].x, 50.0);
    assert_eq!(ch.translation.as_ref().unwrap().values()[1].y, 1.0, "unlisted axes keep the OFFSET");

    // One frame: single-key tracks, a clip of no length that poses that frame.
    let one =
        import(&MIN.replace("Frames: 2", "Frames: 1").replace("1 2 3 10 20 30 40 50 60\n", "")).unwrap();
    assert_eq!(one.animations[0].duration, 0.0);
    assert_eq!(one.animations[0].clips[0].clip.track_count(), 3);

    // No frames: a clip with no keys.
    let none =
        MIN.replace("Frames: 2", "Frames: 0").replace("0 0 0 0 0 0 0 0 0\n1 2 3 10 20 30 40 50 60\n", "");
    let none = import(&none).unwrap();
    assert_eq!(none.animations[0].clips[0].clip.track_count(), 0);
    assert_eq!(none.animations[0].duration, 0.0);

    let scaled = import_with(MIN.as_bytes(), &BvhOptions { scale: 0.01, ..Default::default() }).unwrap();
    assert_eq!(scaled.rigs[0].skeleton.bind_pose[1].translation.y, 0.01);
}

#[test]
fn rotation_channels_multiply_in_their_declared_order() {
    // Zrotation 90 then Xrotation 90: R = Rz * Rx, so the end site's +Y goes to +Z
    // (Rx takes +Y to +Z, Rz keeps +Z). The other order would take it to -X.
    let text = "HIERARCHY\nROOT A\n{\n OFFSET 0 0 0\n CHANNELS 2 Zrotation Xrotation\n End Site\n {\n  OFFSET 0 1 0\n }\n}\nMOTION\nFrames: 1\nFrame Time: 0.1\n90 90\n";
    let s = import(text).unwrap();
    let mut pose = ScenePose::new(&s);
    pose.evaluate(&s, Some(0), 0.0).unwrap();
    let tip = pose.rig_model[0][1].w_axis.truncate();
    assert!((tip - glam::Vec3::Z).length() < 1e-6, "{tip}");
    let swapped = import(&text.replace("Zrotation Xrotation", "Xrotation Zrotation")).unwrap();
    let mut pose = ScenePose::new(&swapped);
    pose.evaluate(&swapped, Some(0), 0.0).unwrap();
    let tip = pose.rig_model[0][1].w_axis.truncate();
    assert!((tip + glam::Vec3::X).length() < 1e-6, "{tip}");
}

/// A joint of a test hierarchy, as the test writes it.
struct J {
    name: String,
    parent: Option<usize>,
    offset: [f64; 3],
    channels: Vec<&'static str>,
    end: bool,
}

/// The test's own BVH writer: the hierarchy, then one line per frame of `values`.
fn write_bvh(joints: &[J], frame_time: f64, values: &[Vec<f64>]) -> String {
    let mut s = String::from("HIERARCHY\n");
    let mut open: Vec<usize> = Vec::new();
    for (i, j) in joints.iter().enumerate() {
        while open.last().copied() != j.parent && !open.is_empty() {
            open.pop();
            s += "}\n";
        }
        let [x, y, z] = j.offset;
        let head = match (j.parent, j.end) {
            (None, _) => format!("ROOT {}", j.name),
            (_, true) => "End Site".into(),
            _ => format!("JOINT {}", j.name),
        };
        s += &format!("{head}\n{{\nOFFSET {x} {y} {z}\n");
        if !j.end {
            s += &format!("CHANNELS {} {}\n", j.channels.len(), j.channels.join(" "));
        }
        open.push(i);
    }
    s += &"}\n".repeat(open.len());
    s += &format!("MOTION\nFrames: {}\nFrame Time: {frame_time}\n", values.len());
    for row in values {
        s += &row.iter().map(f64::to_string).collect::<Vec<_>>().join(" ");
        s += "\n";
    }
    s
}

/// World matrices by forward kinematics in f64 from the numbers as written: each joint's
/// `T(offset, positions replacing their axes) * R(rotations in declared order)`.
fn forward_kinematics(joints: &[J], row: &[f64]) -> Vec<DMat4> {
    let mut world: Vec<DMat4> = Vec::new();
    let mut k = 0;
    for j in joints {
        let mut t = DVec3::from(j.offset);
        let mut r = DMat4::IDENTITY;
        for c in &j.channels {
            let v = row[k];
            k += 1;
            match *c {
                "Xposition" => t.x = v,
                "Yposition" => t.y = v,
                "Zposition" => t.z = v,
                "Xrotation" => r *= DMat4::from_rotation_x(v.to_radians()),
                "Yrotation" => r *= DMat4::from_rotation_y(v.to_radians()),
                "Zrotation" => r *= DMat4::from_rotation_z(v.to_radians()),
                other => panic!("{other}"),
            }
        }
        let local = DMat4::from_translation(t) * r;
        world.push(j.parent.map_or(local, |p| world[p] * local));
    }
    world
}

fn close(a: &Mat4, b: &DMat4, tol: f64) -> bool {
    a.to_cols_array().iter().zip(b.to_cols_array()).all(|(x, y)| (f64::from(*x) - y).abs() <= tol)
}

/// A root with all six channels, and under it one two-joint chain per rotation order; the
/// `YZX` chain's second joint interleaves positions with its rotations, and a joint with two
/// rotation channels hangs under the `ZXY` chain.
fn six_orders() -> Vec<J> {
    let axes = |order: &str| -> Vec<&'static str> {
        order
            .chars()
            .map(|c| match c {
                'X' => "Xrotation",
                'Y' => "Yrotation",
                _ => "Zrotation",
            })
            .collect()
    };
    let mut joints = vec![J {
        name: "Root".into(),
        parent: None,
        offset: [0.1, 0.9, -0.2],
        channels: vec!["Xposition", "Yposition", "Zposition", "Yrotation", "Zrotation", "Xrotation"],
        end: false,
    }];
    for (k, order) in ["XYZ", "XZY", "YXZ", "YZX", "ZXY", "ZYX"].into_iter().enumerate() {
        let a = joints.len();
        let dir = [0.3 * (k as f64).cos(), 0.25, 0.3 * (k as f64).sin()];
        joints.push(J {
            name: format!("A_{order}"),
            parent: Some(0),
            offset: dir,
            channels: axes(order),
            end: false,
        });
        let channels = if order == "YZX" {
            vec!["Yrotation", "Xposition", "Zrotation", "Yposition", "Xrotation", "Zposition"]
        } else {
            axes(order)
        };
        joints.push(J {
            name: format!("B_{order}"),
            parent: Some(a),
            offset: [0.0, 0.4, 0.1],
            channels,
            end: false,
        });
        let b = a + 1;
        if order == "ZXY" {
            joints.push(J {
                name: "C_sub".into(),
                parent: Some(b),
                offset: [0.2, 0.0, 0.0],
                channels: vec!["Zrotation", "Xrotation"],
                end: false,
            });
            joints.push(J {
                name: "C_sub_end".into(),
                parent: Some(b + 1),
                offset: [0.0, 0.0, 0.3],
                channels: vec![],
                end: true,
            });
        }
        joints.push(J {
            name: format!("B_{order}_end"),
            parent: Some(b),
            offset: [0.0, 0.35, 0.0],
            channels: vec![],
            end: true,
        });
    }
    joints
}

#[test]
fn poses_equal_forward_kinematics_for_every_rotation_order() {
    let joints = six_orders();
    let frames = 6;
    let values: Vec<Vec<f64>> = (0..frames)
        .map(|f| {
            let mut k = 0usize;
            let mut row = Vec::new();
            for (j, joint) in joints.iter().enumerate() {
                for c in &joint.channels {
                    let seed = (f * 131 + j * 17 + k * 5) as f64;
                    let v = if c.ends_with("rotation") {
                        (seed * 0.731).sin() * 170.0
                    } else {
                        (seed * 0.53).cos() * 0.8
                    };
                    row.push((v * 1e4).round() / 1e4);
                    k += 1;
                }
            }
            row
        })
        .collect();
    let text = write_bvh(&joints, 0.01, &values);
    let scene = import(&text).unwrap();
    let sk = &scene.rigs[0].skeleton;
    let names: Vec<&str> = joints.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(sk.bone_names, names);
    assert_eq!(scene.animations[0].clips[0].clip.frame_rate, 100.0);
    assert!((scene.animations[0].duration - 0.05).abs() < 1e-6);
    let mut pose = ScenePose::new(&scene);
    let mut joint_world = vec![Mat4::IDENTITY; joints.len()];
    for (f, row) in values.iter().enumerate() {
        let fk = forward_kinematics(&joints, row);
        pose.evaluate(&scene, Some(0), f as f32 * 0.01).unwrap();
        pose.joint_world(&scene, 0, &mut joint_world);
        for (b, (m, want)) in joint_world.iter().zip(&fk).enumerate() {
            assert!(close(m, want, 1e-5), "frame {f} joint {}: {m} vs {want}", names[b]);
        }
    }
}

#[test]
fn the_stick_mesh_follows_the_pose() {
    let joints = six_orders();
    let row: Vec<f64> = (0..joints.iter().map(|j| j.channels.len()).sum::<usize>())
        .map(|k| (k as f64 * 1.3).sin() * 40.0)
        .collect();
    let values = vec![row.iter().map(|v| (v * 1e4).round() / 1e4).collect::<Vec<_>>()];
    let scene = import(&write_bvh(&joints, 0.01, &values)).unwrap();
    let bind: Vec<DMat4> = forward_kinematics(
        &joints
            .iter()
            .map(|j| J {
                channels: vec![],
                name: j.name.clone(),
                parent: j.parent,
                offset: j.offset,
                end: j.end,
            })
            .collect::<Vec<_>>(),
        &[],
    );
    let fk = forward_kinematics(&joints, &values[0]);
    let mut pose = ScenePose::new(&scene);
    pose.evaluate(&scene, Some(0), 0.0).unwrap();
    let node = scene.nodes.iter().position(|n| n.mesh.is_some()).unwrap();
    let prim = &scene.meshes[0].primitives[0];
    // Every bone with a parent and an offset has its box: 24 vertices each.
    let segments =
        joints.iter().filter(|j| j.parent.is_some() && DVec3::from(j.offset).length() > 0.0).count();
    assert_eq!(prim.positions.len(), 24 * segments);
    let placed = pose.placed_vertices(&scene, node, 0, prim.positions.len()).unwrap();
    let skin = prim.skin.as_ref().unwrap();
    for (v, (p, got)) in prim.positions.iter().zip(&placed).enumerate() {
        let b = skin.joints[v][0] as usize;
        assert_eq!(skin.weights[v], [1.0, 0.0, 0.0, 0.0]);
        let want = fk[b] * bind[b].inverse() * DVec3::from(p.map(f64::from)).extend(1.0);
        let got = DVec3::from(got.map(f64::from));
        assert!((got - want.truncate()).length() < 1e-4, "vertex {v}: {got} vs {want}");
    }
}

/// Reads the frame lines of `text` with a plain split (not the importer).
fn frame_rows(text: &str) -> Vec<Vec<f64>> {
    let motion = text.split("Frame Time:").nth(1).unwrap();
    motion.lines().skip(1).map(|l| l.split_whitespace().map(|t| t.parse().unwrap()).collect()).collect()
}

#[test]
fn a_cmu_shaped_capture_imports_and_poses_as_forward_kinematics() {
    let text = mocap_bvh(1000, 120.0, 7);
    let options = BvhOptions { scale: 0.01, end_sites: EndSites::Drop };
    let scene = import_with(text.as_bytes(), &options).unwrap();
    let reference = mocap_skeleton();
    let sk = &scene.rigs[0].skeleton;
    assert_eq!(sk.bone_names, reference.bone_names);
    assert_eq!(sk.parents, reference.parents);
    for (a, b) in sk.bind_pose.iter().zip(&reference.bind_pose) {
        assert!((a.translation - b.translation).length() < 1e-6);
    }
    let clip = &scene.animations[0].clips[0].clip;
    assert_eq!(clip.frame_rate, 120.0);
    assert_eq!(clip.track_count(), 32);
    assert!((scene.animations[0].duration - 999.0 * 0.008333).abs() < 1e-5);
    // Forward kinematics of the CMU convention (root: position then ZYX; joints: ZYX), in
    // metres, from the numbers on the frame lines.
    // Offsets as the file writes them (End Sites, dropped here, left out).
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let offsets: Vec<[f64; 3]> = (2..lines.len())
        .filter(|&i| lines[i].starts_with("OFFSET") && lines[i - 2] != "End Site")
        .map(|i| {
            let v: Vec<f64> = lines[i].split_whitespace().skip(1).map(|t| t.parse().unwrap()).collect();
            [v[0], v[1], v[2]]
        })
        .collect();
    let frame_time: f64 =
        text.split("Frame Time:").nth(1).unwrap().split_whitespace().next().unwrap().parse().unwrap();
    let joints: Vec<J> = reference
        .bone_names
        .iter()
        .enumerate()
        .map(|(b, name)| J {
            name: name.clone(),
            parent: reference.parent(b),
            offset: offsets[b],
            channels: if b == 0 {
                vec!["Xposition", "Yposition", "Zposition", "Zrotation", "Yrotation", "Xrotation"]
            } else {
                vec!["Zrotation", "Yrotation", "Xrotation"]
            },
            end: false,
        })
        .collect();
    let rows = frame_rows(&text);
    assert_eq!(rows.len(), 1000);
    let mut pose = ScenePose::new(&scene);
    let mut world = vec![Mat4::IDENTITY; sk.bone_count()];
    for f in [0usize, 1, 500, 998, 999] {
        let fk = forward_kinematics(&joints, &rows[f]);
        pose.evaluate(&scene, Some(0), (f as f64 * frame_time) as f32).unwrap();
        pose.joint_world(&scene, 0, &mut world);
        for (b, (m, want)) in world.iter().zip(&fk).enumerate() {
            let want = DMat4::from_scale(DVec3::splat(0.01)) * *want * DMat4::from_scale(DVec3::splat(100.0));
            assert!(close(m, &want, 1e-4), "frame {f} joint {}: {m} vs {want}", reference.bone_names[b]);
        }
    }
}

/// Imports `bytes`, asserting it is refused by name within a second.
fn refused_quickly(what: &str, bytes: &[u8]) -> BvhError {
    let start = Instant::now();
    let r = import_with(bytes, &BvhOptions::default());
    let took = start.elapsed();
    assert!(took < Duration::from_secs(1), "{what}: took {took:?}");
    match r {
        Ok(_) => panic!("{what}: imported"),
        Err(e) => e,
    }
}

#[test]
fn hostile_input_is_refused_by_name_quickly() {
    let text = mocap_bvh(50, 120.0, 3);
    assert!(import(&text).is_ok());
    // Truncated anywhere in the hierarchy or the motion: a named fault, never a panic.
    let mut cut = 0;
    while cut < text.len() {
        let e = refused_quickly("truncated", &text.as_bytes()[..cut]);
        assert!(e.fault().is_some(), "{e}");
        cut += 97;
    }
    // Cut at the end of a frame line: the frames missing are named.
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let short: String = lines[..lines.len() - 5].concat();
    let e = refused_quickly("five frames short", short.as_bytes());
    assert!(matches!(e.fault(), Some((_, BvhFault::MissingFrames { declared: 50, .. }))), "{e}");
    assert!(matches!(refused_quickly("empty", b"").fault(), Some((_, BvhFault::Expected { .. }))));
    // Garbage: random bytes, and random printable words.
    let mut state = 0x1234_5678_9abc_def1u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..50 {
        let bytes: Vec<u8> = (0..4096).map(|_| next() as u8).collect();
        refused_quickly("garbage", &bytes);
    }
    // Garbage after a sound header.
    let mut bytes = text.split("Frame Time:").next().unwrap().as_bytes().to_vec();
    bytes.extend((0..4096).map(|_| next() as u8));
    refused_quickly("garbage frames", &bytes);
    // A million frames declared, three given.
    let million = text.replace("Frames: 50", "Frames: 1000000");
    let e = refused_quickly("a million frames", million.as_bytes());
    assert!(
        matches!(e.fault(), Some((_, BvhFault::TooManyValues { .. } | BvhFault::FramesPastFile { .. }))),
        "{e}"
    );
    let small = MIN.replace("Frames: 2", "Frames: 1000000000");
    let e = refused_quickly("a billion frames", small.as_bytes());
    assert!(matches!(e.fault(), Some((_, BvhFault::TooManyValues { frames: 1_000_000_000, .. }))), "{e}");
    let huge = MIN.replace("Frames: 2", "Frames: 99999999999999999999999");
    assert!(matches!(
        refused_quickly("frames past usize", huge.as_bytes()).fault(),
        Some((_, BvhFault::BadNumber { .. }))
    ));
    // NaN on a frame line; channels declared but missing from the frames.
    let mut rows: Vec<String> = text.lines().map(str::to_owned).collect();
    let last = rows.len() - 1;
    let first_value = rows[last].split(' ').next().unwrap().len();
    let mut nan = rows.clone();
    nan[last].replace_range(..first_value, "NaN");
    let e = refused_quickly("nan", nan.join("\n").as_bytes());
    assert!(
        matches!(e.fault(), Some((p, BvhFault::NotFinite { .. })) if p.line == last + 1 && p.col == 1),
        "{e}"
    );
    rows[last] = rows[last].rsplit_once(' ').unwrap().0.to_owned();
    let e = refused_quickly("channels missing", rows.join("\n").as_bytes());
    assert!(
        matches!(e.fault(), Some((_, BvhFault::FrameLength { frame: 50, found: 95, declared: 96 }))),
        "{e}"
    );
}

/// The sample the README's BVH commands use: `assets/bvh/capture.bvh` is the CMU-shaped
/// synthetic capture (`synthetic::mocap_bvh`: 31 joints, 120 Hz, one second) as the generator
/// writes it (`MARROW_BLESS=1` rewrites it), and it imports at the centimetre scale with its
/// 120 frames.
#[test]
fn the_sample_capture_is_the_generators_output_and_imports() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/bvh/capture.bvh");
    let text = mocap_bvh(120, 120.0, 1);
    if std::env::var_os("MARROW_BLESS").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap();
    assert!(
        committed == text,
        "assets/bvh/capture.bvh differs from synthetic::mocap_bvh (MARROW_BLESS=1 rewrites it)"
    );
    let scene =
        import_with(committed.as_bytes(), &BvhOptions { scale: 0.01, ..BvhOptions::default() }).unwrap();
    let clip = &scene.animations[0].clips[0].clip;
    assert_eq!(clip.frame_rate, 120.0);
    // 120 frames at the written frame time (0.008333 s): the last key 119 frame times in.
    assert!((clip.duration() - 119.0 * 0.008333).abs() < 1e-5, "duration {}", clip.duration());
}

/// Real motion capture (CMU subject 131, trial 01, `assets/bvh/README.md`): the file's bytes
/// import whole at its own rate, every frame a key of every channel, the joints named as the
/// file names them.
#[test]
fn the_cmu_capture_imports_at_its_rate_with_every_frame() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/bvh/cmu_131_01.bvh");
    let options = BvhOptions { scale: 0.0254, end_sites: EndSites::Drop };
    let scene = bvh::import(&path, &options).unwrap();
    let skeleton = &scene.rigs[0].skeleton;
    assert_eq!(skeleton.bone_count(), 31, "ROOT Hips and 30 joints");
    assert_eq!(skeleton.bone_names[0], "Hips");
    let clip = &scene.animations[0].clips[0].clip;
    assert_eq!(clip.frame_rate, 120.0, "Frame Time .0083333: 120 Hz, detected");
    let channels = clip.channels();
    let root = channels[0].translation.as_ref().expect("the root moves");
    assert_eq!(root.len(), 994, "every frame a key");
    assert!(channels.iter().all(|c| c.rotation.as_ref().is_some_and(|r| r.len() == 994)));
    assert_eq!(clip.key_count(), 994 * 32);
    assert!((clip.duration() - 993.0 * 0.0083333).abs() < 1e-4, "duration {}", clip.duration());
    // The walk goes somewhere: the root's first and last positions are metres apart.
    let (a, b) = (root.values()[0], root.values()[993]);
    assert!(a.distance(b) > 1.0, "the root moved from {a} to {b}");
}
