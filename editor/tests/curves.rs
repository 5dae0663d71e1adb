//! The curve view through the UI (egui_kittest, headless): tangent modes set from its toolbar
//! (each one undo step, the tangents as `marrow_engine::tangent` specifies them: Auto the
//! Catmull-Rom slope, Auto Clamped flat at an extremum, bounded elsewhere, never overshooting),
//! a handle drag on an Auto Clamped key (one step, the key turns Aligned) and on a Free key (only
//! that side), the value range re-fitting when a dragged key ends outside it (not during the
//! drag), the Euler filter (one step; every rotation key beside the one before; the pose at 401
//! times the same up to sign; the plotted Euler angles without a jump), and the default
//! interpolation (File > Project Settings and the clip header) used by new channels and written
//! to `project.ron` and the clip file. Each workflow ends with undo all = the original bytes,
//! redo all = the edited ones, and old files re-save byte for byte.

mod support;

use egui::accesskit::Role;
use egui::{Key, Modifiers, Pos2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use glam::{Quat, Vec3};
use marrow_editor::EditorApp;
use marrow_editor::command::Command;
use marrow_editor::document::clip_ops::{ClipOp, InsertKind, KeyRef, KeyValue, KeyWrite};
use marrow_editor::document::{Document, Op};
use marrow_editor::panels::timeline::curves::CurveLayout;
use marrow_editor::panels::timeline::model::KeyId;
use marrow_editor::ui_state::Selection;
use marrow_engine::clip::Channel;
use marrow_engine::project::file::ClipAsset;
use marrow_engine::tangent::TangentMode;
use marrow_engine::track::{Interpolation, Track};
use support::*;

const STRIDE: &str = "clips/stride.clip.ron";
/// shin_l gets a translation channel of these keys: a rise, a steep then a gentle step, a peak.
const TIMES: [f32; 5] = [0.0, 0.25, 0.5, 0.75, 1.0];
const XS: [f32; 5] = [0.0, 1.0, 3.0, 3.2, 1.0];
const SHIN: usize = 2;

fn clip(h: &Harness<'_, EditorApp>) -> ClipAsset {
    (*h.state().doc.project().clips[STRIDE]).clone()
}

fn shin(h: &Harness<'_, EditorApp>) -> Track<Vec3> {
    clip(h).clip.channels()[SHIN].translation.clone().expect("shin_l has a translation channel")
}

fn edit(h: &mut Harness<'_, EditorApp>, op: ClipOp) {
    h.state_mut().send(Command::Edit(Box::new(Op::Clip { path: STRIDE.into(), op })));
    settle(h);
}

fn curve(h: &Harness<'_, EditorApp>) -> CurveLayout {
    h.state().panels.timeline.layout.curve.clone().expect("the curve view is drawn")
}

fn select(h: &mut Harness<'_, EditorApp>, keys: impl IntoIterator<Item = KeyId>) {
    h.state_mut().panels.timeline.selection = keys.into_iter().collect();
    settle(h);
}

fn shin_key(i: usize) -> KeyId {
    KeyId::new(SHIN, Channel::Translation, TIMES[i])
}

/// Opens the runner sample in the curve view with shin_l's translation keyed (one step) and
/// made Cubic (one step), every key selected.
fn open_with_cubic_shin(dir: &TempDir) -> Harness<'static, EditorApp> {
    let mut h = editor(dir.path());
    click_row(&mut h, "Runner");
    let keys = TIMES
        .iter()
        .zip(XS)
        .map(|(t, x)| KeyWrite {
            key: KeyRef::new("shin_l", Channel::Translation, *t),
            value: KeyValue::Vec3(Vec3::new(x, 0.5, 0.0)),
        })
        .collect();
    edit(&mut h, ClipOp::InsertKeys { keys, kind: InsertKind::Insert });
    assert_eq!(shin(&h).interpolation(), Interpolation::Linear, "the project's default: Linear");
    edit(
        &mut h,
        ClipOp::SetInterpolation {
            bone: "shin_l".into(),
            channel: Channel::Translation,
            interpolation: Interpolation::CubicSpline,
        },
    );
    click(&mut h, Role::Button, "Curves");
    select(&mut h, (0..5).map(shin_key));
    h
}

/// The x slopes of the keys (in and out).
fn slopes(t: &Track<Vec3>) -> Vec<(f32, f32)> {
    t.in_tangents().iter().zip(t.out_tangents()).map(|(a, b)| (a.x, b.x)).collect()
}

fn close(a: f32, b: f32) -> bool {
    (a - b).abs() <= 1e-5 * (1.0 + b.abs())
}

#[test]
fn tangent_modes_and_handle_drags_in_the_curve_view_then_undo_redo_save_and_reload() {
    let dir = sample("runner");
    let original = files(dir.path());
    let mut h = open_with_cubic_shin(&dir);
    // Made Cubic: every key Auto Clamped. Key 2 (3.0 between 1.0 and 3.2) is bounded by three
    // times its gentle side, 3 x 0.8; key 3 is a peak: flat; the ends: flat.
    let t = shin(&h);
    assert_eq!(t.tangent_modes(), &[TangentMode::AutoClamped; 5]);
    let want = [0.0, 6.0, 2.4, 0.0, 0.0];
    for (i, (a, b)) in slopes(&t).into_iter().enumerate() {
        assert!(close(a, want[i]) && a == b, "key {i}: ({a}, {b}), want {}", want[i]);
    }

    // Auto from the toolbar: one step, the Catmull-Rom slopes (v[i+1] - v[i-1]) / (t[i+1] - t[i-1]).
    let steps = h.state().doc.head();
    click(&mut h, Role::Button, "Auto");
    assert_eq!(h.state().doc.head(), steps + 1, "one step");
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Set Tangents to Auto"));
    let t = shin(&h);
    assert_eq!(t.tangent_modes(), &[TangentMode::Auto; 5]);
    for i in 1..4 {
        let cr = (XS[i + 1] - XS[i - 1]) / (TIMES[i + 1] - TIMES[i - 1]);
        assert!(close(t.out_tangents()[i].x, cr), "key {i}: {:?} vs {cr}", slopes(&t)[i]);
    }
    let peak = (0..=400).map(|s| t.sample(s as f32 / 400.0).unwrap().x).fold(f32::MIN, f32::max);
    assert!(peak > 3.2 + 1e-3, "Auto overshoots the peak key ({peak})");

    // Back to Auto Clamped: within the keys' values everywhere.
    click(&mut h, Role::Button, "Auto Clamped");
    assert_eq!(h.state().doc.head(), steps + 2);
    let t = shin(&h);
    for s in 0..=400 {
        let x = t.sample(s as f32 / 400.0).unwrap().x;
        assert!((-1e-5..=3.2 + 1e-5).contains(&x), "Auto Clamped overshoots: {x} at {}", s as f32 / 400.0);
    }

    // Drag key 2's out handle up: one step; the key turns Aligned, both sides one slope.
    select(&mut h, [shin_key(2)]);
    let handle = curve(&h).handle(shin_key(2), 0, true).expect("the selected key's handle is drawn");
    drag(&mut h, handle, handle - egui::vec2(0.0, 30.0), 5);
    assert_eq!(h.state().doc.head(), steps + 3, "one drag, one step");
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Edit Tangents"));
    let t = shin(&h);
    let (a, b) = slopes(&t)[2];
    assert!(a == b && a > 2.4 + 0.1, "both sides steeper: ({a}, {b})");
    assert_eq!(t.tangent_mode(2), TangentMode::Aligned);
    assert_eq!((t.in_tangents()[2].y, t.in_tangents()[2].z), (0.0, 0.0), "only x moved");

    // Free (Broken), then drag the out handle down: the in side stays.
    click(&mut h, Role::Button, "Free (Broken)");
    let before = slopes(&shin(&h))[2];
    let handle = curve(&h).handle(shin_key(2), 0, true).unwrap();
    drag(&mut h, handle, handle + egui::vec2(0.0, 60.0), 5);
    let t = shin(&h);
    assert_eq!(t.tangent_mode(2), TangentMode::Free);
    assert_eq!(slopes(&t)[2].0, before.0, "the in side is untouched");
    assert!(slopes(&t)[2].1 < before.1 - 0.1, "the out side turned down: {before:?} -> {:?}", slopes(&t)[2]);
    assert_eq!(h.state().doc.head(), steps + 5, "the mode and the drag: two steps");

    // Neighbours of a moved key recompute: move key 1's value; key 2 (Free) keeps its tangents,
    // key 1 (Auto Clamped) is re-bounded.
    let free = slopes(&shin(&h))[2];
    edit(
        &mut h,
        ClipOp::SetKeyValue {
            key: KeyRef::new("shin_l", Channel::Translation, 0.25),
            value: KeyValue::Vec3(Vec3::new(2.9, 0.5, 0.0)),
        },
    );
    let t = shin(&h);
    assert_eq!(slopes(&t)[2], free);
    assert!(close(t.out_tangents()[1].x, 3.0 * 0.4), "key 1 bounded by 3 x (3.0 - 2.9) / 0.25");

    let edited = undo_all_redo_all(&mut h, dir.path(), &original);
    key(&mut h, Modifiers::COMMAND, Key::S);
    assert_eq!(Document::open(dir.path()).unwrap().files(), edited, "save and reload: equal");
    let text = std::fs::read_to_string(dir.path().join(STRIDE)).unwrap();
    assert!(text.contains(", tangent: "), "the modes are saved, a key's on its row:\n{text}");
}

#[test]
fn the_value_range_refits_when_a_dragged_key_ends_outside_it_not_during_the_drag() {
    let dir = sample("runner");
    let original = files(dir.path());
    let mut h = open_with_cubic_shin(&dir);
    select(&mut h, [shin_key(3)]);
    let c = curve(&h);
    assert!(c.y_max < 4.0, "framed on the keys: {c:?}");
    let map = h.state().panels.timeline.layout.map.unwrap();
    let a = Pos2::new(map.x(TIMES[3]), c.y(3.2));
    let b = Pos2::new(a.x, c.plot.top() - 120.0);
    h.hover_at(a);
    h.run();
    h.drag_at(a);
    h.run();
    for i in 1..=6 {
        h.hover_at(a + (b - a) * (i as f32 / 6.0));
        h.step();
    }
    let during = curve(&h);
    assert_eq!((during.y_min, during.y_max), (c.y_min, c.y_max), "no re-fit while dragging");
    let raised = shin(&h).values()[3].x;
    assert!(raised > c.y_max, "the key is dragged above the view ({raised} > {})", c.y_max);
    h.drop_at(b);
    settle(&mut h);
    let after = curve(&h);
    assert!(after.y_max >= raised && after.y_min <= 0.0, "re-fitted to the curves: {after:?}");
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Edit Key Value"));
    undo_all_redo_all(&mut h, dir.path(), &original);
}

#[test]
fn the_euler_filter_removes_sign_flips_and_keeps_the_pose_at_every_time() {
    let dir = sample("runner");
    let original = files(dir.path());
    let mut h = editor(dir.path());
    click_row(&mut h, "Runner");
    // hips rotation: a turn of four radians about Y in five keys, keys 1 and 3 written negated.
    let keys: Vec<KeyWrite> = (0..5)
        .map(|i| {
            let q = Quat::from_rotation_y(i as f32);
            KeyWrite {
                key: KeyRef::new("hips", Channel::Rotation, TIMES[i]),
                value: KeyValue::Quat(if i % 2 == 1 { -q } else { q }),
            }
        })
        .collect();
    edit(&mut h, ClipOp::InsertKeys { keys, kind: InsertKind::Insert });
    let before = clip(&h).clip.channels()[0].rotation.clone().unwrap();
    assert!(before.values().windows(2).any(|w| w[0].dot(w[1]) < 0.0), "the keys flip sign");
    click(&mut h, Role::Button, "Curves");
    select(&mut h, TIMES.iter().map(|t| KeyId::new(0, Channel::Rotation, *t)));
    let steps = h.state().doc.head();
    click(&mut h, Role::Button, "Euler Filter");
    assert_eq!(h.state().doc.head(), steps + 1, "one step");
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Euler Filter (2 keys flipped)"));
    let after = clip(&h).clip.channels()[0].rotation.clone().unwrap();
    assert!(after.values().windows(2).all(|w| w[0].dot(w[1]) >= 0.0), "no flip left");
    for i in 0..=400 {
        let t = 1.2 * i as f32 / 400.0;
        let (p, q) = (before.sample(t).unwrap(), after.sample(t).unwrap());
        assert!(p.dot(q).abs() > 1.0 - 1e-6, "the pose at {t} changed: {p:?} vs {q:?}");
    }
    // The plotted Euler angles have no jump (a turn past 90 degrees about Y flips glam's
    // canonical angles by 180): unwrapped, each key within 90 degrees of the one before.
    let eulers = marrow_editor::panels::timeline::curves::key_eulers(&clip(&h), 0, Channel::Rotation);
    let canonical: Vec<Vec3> = after
        .values()
        .iter()
        .map(|q| Vec3::from(q.to_euler(glam::EulerRot::XYZ)).map(f32::to_degrees))
        .collect();
    assert!(canonical.windows(2).any(|w| (w[1] - w[0]).abs().max_element() > 150.0), "{canonical:?}");
    assert!(eulers.windows(2).all(|w| (w[1] - w[0]).abs().max_element() < 90.0), "{eulers:?}");
    assert!((eulers[4].y - 4f32.to_degrees()).abs() < 0.1, "Y reaches 229 degrees: {eulers:?}");
    // Again: nothing left to flip. No step, and the status bar says so (it once did nothing
    // visible at all).
    click(&mut h, Role::Button, "Euler Filter");
    assert_eq!(h.state().doc.head(), steps + 1, "no step for nothing flipped");
    let notice = h.state().notice.clone().map(|n| n.text).unwrap_or_default();
    assert!(notice.contains("nothing flipped"), "the notice: {notice:?}");
    assert!(h.query_by_label_contains("nothing flipped").is_some(), "shown in the status bar");
    undo_all_redo_all(&mut h, dir.path(), &original);
}

#[test]
fn the_default_interpolation_is_used_for_new_channels_and_round_trips_through_the_files() {
    let dir = sample("runner");
    let original = files(dir.path());
    let mut h = editor(dir.path());
    click_row(&mut h, "Runner");
    // File > Project Settings > Cubic.
    click(&mut h, Role::Button, "File");
    h.get_by_label_contains("Project Settings").click();
    settle(&mut h);
    h.get_by_label("Cubic").click();
    settle(&mut h);
    assert_eq!(h.state().doc.project().manifest.default_interpolation, Interpolation::CubicSpline);
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Set Project Default Interpolation"));
    // A key on shin_l (the toolbar's Key) starts Cubic channels, their keys Auto Clamped.
    h.state_mut().ui.selection = Selection::Bone { rig: "Runner".into(), bone: "shin_l".into() };
    settle(&mut h);
    click(&mut h, Role::Button, "Key");
    let c = clip(&h);
    let t = c.clip.channels()[SHIN].translation.as_ref().expect("keyed");
    assert_eq!(t.interpolation(), Interpolation::CubicSpline);
    assert_eq!(t.tangent_modes(), &[TangentMode::AutoClamped]);
    // The existing rotation channel keeps its interpolation: the default is for new channels.
    assert_eq!(c.clip.channels()[SHIN].rotation.as_ref().unwrap().interpolation(), Interpolation::Linear);
    // The clip header overrides it: New channels = Step, then a key on the hips' scale.
    click(&mut h, Role::ComboBox, "New channels");
    h.get_by_label("Step").click();
    settle(&mut h);
    assert_eq!(clip(&h).clip.default_interpolation, Some(Interpolation::Step));
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Set Default Interpolation"));
    h.state_mut().ui.selection = Selection::Bone { rig: "Runner".into(), bone: "hips".into() };
    settle(&mut h);
    click(&mut h, Role::Button, "Key");
    let scale = clip(&h).clip.channels()[0].scale.clone().expect("hips scale keyed");
    assert_eq!(scale.interpolation(), Interpolation::Step);

    let edited = undo_all_redo_all(&mut h, dir.path(), &original);
    key(&mut h, Modifiers::COMMAND, Key::S);
    assert_eq!(Document::open(dir.path()).unwrap().files(), edited, "save and reload: equal");
    let manifest = std::fs::read_to_string(dir.path().join("project.ron")).unwrap();
    assert!(manifest.contains("default_interpolation: CubicSpline"), "{manifest}");
    let text = std::fs::read_to_string(dir.path().join(STRIDE)).unwrap();
    assert!(text.contains("default_interpolation: Step"), "{text}");
}

#[test]
fn files_without_the_new_fields_load_and_resave_byte_for_byte() {
    for name in ["runner", "locomotion"] {
        let dir = sample(name);
        let original = files(dir.path());
        let mut doc = Document::open(dir.path()).unwrap();
        let out = TempDir::new("resave");
        doc.save_as(out.path()).unwrap();
        let saved = files(out.path());
        for (path, bytes) in &original {
            if path.ends_with(".ron") {
                assert_eq!(saved.get(path), Some(bytes), "{name}/{path} re-saves byte for byte");
            }
        }
    }
    // A Cubic track written before tangent modes existed: its tangents are kept as written and
    // it re-saves without a tangent_modes field.
    let text = "#![enable(implicit_some)]\n(\n    version: 1,\n    name: \"c\",\n    skeleton: \"s\",\n    bones: [\n        \"a\",\n    ],\n    tracks: [\n        (\n            bone: \"a\",\n            translation: (\n                interpolation: CubicSpline,\n                times: [\n                    0.0,\n                    1.0,\n                ],\n                values: [\n                    (0.0, 0.0, 0.0),\n                    (1.0, 0.0, 0.0),\n                ],\n                in_tangents: [\n                    (7.0, 0.0, 0.0),\n                    (0.5, 0.0, 0.0),\n                ],\n                out_tangents: [\n                    (3.0, 0.0, 0.0),\n                    (0.0, 0.0, 0.0),\n                ],\n            ),\n        ),\n    ],\n    markers: [],\n)\n";
    let path = std::path::Path::new("c.clip.ron");
    let c = marrow_engine::project::clip_from_str(text, path).unwrap();
    let t = c.clip.channels()[0].translation.as_ref().unwrap();
    assert!(t.tangent_modes().is_empty() && t.tangent_mode(0) == TangentMode::Free);
    assert_eq!(t.out_tangents()[0], Vec3::new(3.0, 0.0, 0.0));
    // Re-saved in the current format: a row a key with its tangents as written, no modes.
    let resaved = marrow_engine::project::clip_to_string(&c);
    assert!(!resaved.contains("tangent:"), "{resaved}");
    assert!(
        resaved.contains("(time: 0.0, value: (0.0, 0.0, 0.0), in: (7.0, 0.0, 0.0), out: (3.0, 0.0, 0.0)),"),
        "{resaved}"
    );
    let again = marrow_engine::project::clip_from_str(&resaved, path).unwrap();
    assert_eq!(again, c);
    assert_eq!(marrow_engine::project::clip_to_string(&again), resaved, "and re-saves byte for byte");

    // One mode for two keys: refused by name, or repaired with the missing one Free.
    let short = text.replace(
        "                ],\n            ),\n        ),\n    ],\n    markers",
        "                ],\n                tangent_modes: [\n                    Auto,\n                ],\n            ),\n        ),\n    ],\n    markers",
    );
    assert_ne!(short, text);
    let e = marrow_engine::project::clip_from_str(&short, path).unwrap_err().to_string();
    assert!(e.contains("tracks/a/translation/tangent_modes: 1 entry for 2 keys"), "{e}");
    let (c, faults) = marrow_engine::project::clip_from_str_repairing(&short, path).unwrap();
    assert_eq!(faults.len(), 1, "{faults:?}");
    let t = c.clip.channels()[0].translation.as_ref().unwrap();
    assert_eq!(t.tangent_modes(), &[TangentMode::Auto, TangentMode::Free]);
}

/// The Euler rates (degrees per second) of the hips rotation just after (`out`) or before key
/// time `t`, measured on the sampled curve.
fn measured_rates(h: &Harness<'_, EditorApp>, t: f32, out: bool) -> Vec3 {
    let c = clip(h);
    let track = c.clip.channels()[0].rotation.clone().unwrap();
    let e = |time: f32| {
        let near = Vec3::from(track.sample(t).unwrap().to_euler(glam::EulerRot::XYZ));
        marrow_engine::tangent::euler_near(track.sample(time).unwrap(), near).map(f32::to_degrees)
    };
    let eps = 1e-3;
    if out { (e(t + eps) - e(t)) / eps } else { (e(t) - e(t - eps)) / eps }
}

#[test]
fn a_rotation_handle_shows_and_sets_one_euler_angles_rate() {
    let dir = sample("runner");
    let original = files(dir.path());
    let mut h = editor(dir.path());
    click_row(&mut h, "Runner");
    let keys: Vec<KeyWrite> = (0..5)
        .map(|i| {
            let a = i as f32;
            KeyWrite {
                key: KeyRef::new("hips", Channel::Rotation, TIMES[i]),
                value: KeyValue::Quat(Quat::from_euler(
                    glam::EulerRot::XYZ,
                    0.1 * a,
                    0.3 * a * a / 4.0,
                    -0.05 * a,
                )),
            }
        })
        .collect();
    edit(&mut h, ClipOp::InsertKeys { keys, kind: InsertKind::Insert });
    edit(
        &mut h,
        ClipOp::SetInterpolation {
            bone: "hips".into(),
            channel: Channel::Rotation,
            interpolation: Interpolation::CubicSpline,
        },
    );
    click(&mut h, Role::Button, "Curves");
    let k = KeyId::new(0, Channel::Rotation, 0.5);
    select(&mut h, [k]);
    let c = curve(&h);
    let map = h.state().panels.timeline.layout.map.unwrap();
    let value = |y: f32| c.y_min + (c.plot.bottom() - y) / c.plot.height() * (c.y_max - c.y_min);
    // Each handle's slope is the plotted curve's rate there.
    let before = measured_rates(&h, 0.5, true);
    let e = marrow_editor::panels::timeline::curves::key_eulers(&clip(&h), 0, Channel::Rotation)[2];
    for comp in 0..3 {
        let p = c.handle(k, comp, true).expect("a rotation key's handle is drawn");
        let slope = (value(p.y) - e[comp]) / (map.t(p.x) - 0.5);
        assert!(
            (slope - before[comp]).abs() <= 0.02 * before[comp].abs().max(5.0),
            "comp {comp}: the handle says {slope} deg/s, the curve {}",
            before[comp]
        );
    }
    // Drag the Y handle up: Y turns faster, X and Z keep their rates; one step.
    let steps = h.state().doc.head();
    let p = c.handle(k, 1, true).unwrap();
    drag(&mut h, p, p - egui::vec2(0.0, 25.0), 5);
    let labels: Vec<String> = h.state().doc.steps().map(|s| s.label().to_owned()).collect();
    assert_eq!(h.state().doc.head(), steps + 1, "{labels:?}");
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Edit Tangents"));
    let after = measured_rates(&h, 0.5, true);
    assert!(after.y > before.y + 5.0, "Y rate {} -> {}", before.y, after.y);
    for comp in [0, 2] {
        assert!(
            (after[comp] - before[comp]).abs() <= 0.02 * before[comp].abs().max(5.0),
            "comp {comp}: {} -> {}",
            before[comp],
            after[comp]
        );
    }
    // An Auto Clamped key dragged: Aligned, the in side turned with it.
    let t = clip(&h).clip.channels()[0].rotation.clone().unwrap();
    assert_eq!(t.tangent_mode(2), TangentMode::Aligned);
    assert_eq!(t.in_tangents()[2], t.out_tangents()[2]);
    undo_all_redo_all(&mut h, dir.path(), &original);
}
