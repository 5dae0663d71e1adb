//! Timeline workflows through the UI (egui_kittest, headless): create a clip, key a bone at two
//! times with the rotate gizmo in Auto Key, ease the first key with easeInOutBack, move a key
//! by dragging, box-select and delete, copy and paste, scale keys about the playhead, add,
//! drag and rename a marker. The pose at a chosen time equals the engine's evaluation of the
//! edited clip; undo all gives the original bytes, redo all the edited ones, and a save and
//! reload gives them back. Scrubbing across a marker while paused puts exactly one event in the
//! event lane, and scrubbing back across it one more. A clip eased on the timeline and exported
//! through File > Export glTF plays, in a glTF LINEAR evaluator written from the specification,
//! within the bake bound of Marrow's own curve.

mod support;

use egui::accesskit::Role;
use egui::{Key, Modifiers, Pos2};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use marrow_editor::EditorApp;
use marrow_editor::document::Document;
use marrow_editor::panels::timeline::model::RowKind;
use marrow_editor::ui_state::Selection;
use marrow_editor::viewport::gizmo::{GizmoMode, Handle};
use marrow_engine::easing::{Ease, Easing};
use marrow_engine::math::Transform;
use marrow_engine::pose::{SamplingContext, SamplingJob};
use support::*;

const NEW_CLIP: &str = "clips/runner_new.clip.ron";

fn clip(h: &Harness<'_, EditorApp>) -> marrow_engine::project::file::ClipAsset {
    (*h.state().doc.project().clips[NEW_CLIP]).clone()
}

fn rotation_times(h: &Harness<'_, EditorApp>) -> Vec<f32> {
    let c = clip(h);
    c.clip.channels()[1].rotation.as_ref().map_or(Vec::new(), |t| t.times().to_vec())
}

fn seek(h: &mut Harness<'_, EditorApp>, t: f32) {
    h.state_mut().send(marrow_editor::command::Command::Seek { rig: "Runner".into(), time: t });
    settle(h);
}

/// Turns the selected bone with the gizmo's X ring by `angle` radians of ring travel.
fn turn_x_ring(h: &mut Harness<'_, EditorApp>, angle: f32) {
    let v = viewport_view(h);
    let g = app_gizmo(h, &v, GizmoMode::Rotate).expect("a bone gizmo");
    let a = g.handle_point(&v, Handle::Turn(0), 0.9).unwrap();
    let b = g.handle_point(&v, Handle::Turn(0), 0.9 + angle).unwrap();
    drag(h, a, b, 6);
}

fn key_at(h: &Harness<'_, EditorApp>, kind: RowKind, t: f32) -> Pos2 {
    h.state().panels.timeline.layout.key(kind, t).unwrap_or_else(|| panic!("no row {kind:?} drawn"))
}

/// The point on the Timeline's ruler at time `t` (as last drawn).
fn on_ruler(h: &Harness<'_, EditorApp>, t: f32) -> Pos2 {
    let l = &h.state().panels.timeline.layout;
    Pos2::new(l.map.unwrap().x(t), l.ruler.center().y)
}

fn click_at(h: &mut Harness<'_, EditorApp>, p: Pos2, modifiers: Modifiers) {
    h.hover_at(p);
    h.run();
    if modifiers.shift {
        h.event(egui::Event::ModifiersChanged(modifiers));
    }
    h.drag_at(p);
    h.drop_at(p);
    settle(h);
    if modifiers.shift {
        h.event(egui::Event::ModifiersChanged(Modifiers::NONE));
        settle(h);
    }
}

#[test]
fn author_a_clip_on_the_timeline_then_undo_redo_save_and_reload() {
    let dir = sample("runner");
    let original = files(dir.path());
    let mut h = editor(dir.path());
    click_row(&mut h, "Runner");

    // Create a clip for the rig.
    click(&mut h, Role::Button, "New Clip");
    assert!(h.state().doc.project().clips.contains_key(NEW_CLIP));
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("New Clip"));

    // Key the left thigh at two times with the rotate gizmo, Auto Key on.
    click(&mut h, Role::Button, "⏺ Auto Key");
    assert!(h.state().ui.auto_key);
    h.state_mut().ui.selection = Selection::Bone { rig: "Runner".into(), bone: "thigh_l".into() };
    h.state_mut().ui.gizmo = GizmoMode::Rotate;
    settle(&mut h);
    turn_x_ring(&mut h, 0.5);
    assert_eq!(rotation_times(&h), [0.0], "the drag keyed the rotation at the playhead");
    let steps = h.state().doc.steps().count();
    seek(&mut h, 0.5);
    turn_x_ring(&mut h, -0.8);
    assert_eq!(rotation_times(&h), [0.0, 0.5]);
    assert_eq!(h.state().doc.steps().count(), steps + 1, "one drag, one step");
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Key Pose"));

    // The dope sheet shows the bone; its row holds both keys. Ease the first: right-click it,
    // Easing…, easeInOutBack.
    let bone_row = RowKind::Bone(1);
    open_easing_picker(&mut h, bone_row, 0.0);
    h.get_by_label("easeInOutBack").click();
    settle(&mut h);
    let eased = clip(&h).clip.channels()[1].rotation.as_ref().unwrap().key_easings()[0];
    assert_eq!(eased, Some(Ease::Named(Easing::InOutBack)));

    // Move the key at 0.5 to 0.6 by dragging (snapped to frames).
    let k1 = key_at(&h, bone_row, 0.5);
    let map = h.state().panels.timeline.layout.map.unwrap();
    drag(&mut h, k1, Pos2::new(map.x(0.6), k1.y), 6);
    assert_eq!(rotation_times(&h), [0.0, 0.6]);
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Move Key"));

    // Key the pose at 0.8 (K), box-select that key and delete it.
    seek(&mut h, 0.8);
    key(&mut h, Modifiers::NONE, Key::K);
    assert!(rotation_times(&h).contains(&0.8));
    let k2 = key_at(&h, bone_row, 0.8);
    drag(&mut h, k2 + egui::vec2(-12.0, -8.0), k2 + egui::vec2(12.0, 8.0), 4);
    assert_eq!(h.state().panels.timeline.selection.len(), 3, "T, R and S keyed at 0.8");
    key(&mut h, Modifiers::NONE, Key::Delete);
    assert_eq!(rotation_times(&h), [0.0, 0.6]);

    // Copy the key at 0 and paste it at 0.3.
    let p = key_at(&h, bone_row, 0.0);
    click_at(&mut h, p, Modifiers::NONE);
    let text = copy(&mut h).expect("a copy puts the keys on the system clipboard too");
    seek(&mut h, 0.3);
    paste(&mut h, &text);
    assert_eq!(rotation_times(&h), [0.0, 0.3, 0.6]);

    // Scale the keys at 0 and 0.3 about the playhead (at 0) by 2: S, move, click.
    seek(&mut h, 0.0);
    let p = key_at(&h, bone_row, 0.0);
    click_at(&mut h, p, Modifiers::NONE);
    let p = key_at(&h, bone_row, 0.3);
    click_at(&mut h, p, Modifiers::SHIFT);
    assert_eq!(h.state().panels.timeline.selection.len(), 2);
    let start = key_at(&h, bone_row, 0.3) + egui::vec2(0.0, 40.0);
    h.hover_at(start);
    h.run();
    key(&mut h, Modifiers::NONE, Key::S);
    h.hover_at(start + egui::vec2(200.0, 0.0));
    h.step();
    h.step();
    h.drag_at(start + egui::vec2(200.0, 0.0));
    h.drop_at(start + egui::vec2(200.0, 0.0));
    settle(&mut h);
    assert_eq!(rotation_times(&h), [0.0, 0.6], "0.3 scaled by 2 about 0 lands on 0.6 and replaces it");
    assert!(
        h.state().doc.undo_label().unwrap().starts_with("Scale Keys"),
        "{:?}",
        h.state().doc.undo_label()
    );

    // A marker: M at the playhead, drag it to 0.4, double-click to rename it "hit".
    seek(&mut h, 0.2);
    key(&mut h, Modifiers::NONE, Key::M);
    assert_eq!(clip(&h).clip.markers().len(), 1);
    let lane = h.state().panels.timeline.layout.markers;
    let map = h.state().panels.timeline.layout.map.unwrap();
    drag(&mut h, Pos2::new(map.x(0.2), lane.center().y), Pos2::new(map.x(0.4), lane.center().y), 5);
    assert_eq!(clip(&h).clip.markers()[0].time, 0.4);
    let at = Pos2::new(map.x(0.4), lane.center().y);
    h.hover_at(at);
    h.run();
    for _ in 0..2 {
        h.hover_at(at);
        h.drag_at(at);
        h.event(egui::Event::PointerButton {
            pos: at,
            button: egui::PointerButton::Primary,
            pressed: false,
            modifiers: Modifiers::NONE,
        });
    }
    settle(&mut h);
    h.get_by_label("Marker name").type_text("hit");
    h.run();
    key(&mut h, Modifiers::NONE, Key::Enter);
    assert_eq!(clip(&h).clip.markers()[0].name, "hit");

    // The pose at a chosen time is the engine's evaluation of the edited clip.
    seek(&mut h, 0.45);
    let edited_clip = clip(&h).clip;
    let app = h.state();
    let rig = app.session.entity("Runner").unwrap();
    let sk = app.session.world().animator(rig).unwrap().skeleton().clone();
    let mut want = vec![Transform::IDENTITY; sk.bone_count()];
    SamplingJob {
        clip: &edited_clip,
        bind_pose: &sk.bind_pose,
        time: 0.45,
        context: &mut SamplingContext::new(sk.bone_count()),
        output: &mut want,
    }
    .run()
    .unwrap();
    let got = app.session.world().rig_pose(rig).unwrap().local.to_vec();
    assert_eq!(got, want, "the previewed pose is the edited clip's");

    // Scrub across the marker while paused: one event; back across it: one more.
    seek(&mut h, 0.3);
    let before = h.state().panels.timeline.event_count();
    let (a, b) = (on_ruler(&h, 0.3), on_ruler(&h, 0.5));
    drag(&mut h, a, b, 6);
    assert!(!h.state().session.is_playing());
    assert_eq!(h.state().panels.timeline.event_count(), before + 1, "scrubbing across the marker: one event");
    drag(&mut h, b, a, 6);
    assert_eq!(h.state().panels.timeline.event_count(), before + 2, "and back across it: one more");
    assert!(h.state().panels.timeline.events.iter().rev().take(2).all(|e| e.name == "hit" && e.scrub));

    // Undo all: the original bytes; redo all: the edited ones; save and reload: equal.
    let edited = undo_all_redo_all(&mut h, dir.path(), &original);
    key(&mut h, Modifiers::COMMAND, Key::S);
    assert_eq!(Document::open(dir.path()).unwrap().files(), edited, "save and reload: equal");
}

#[test]
fn a_damaged_clip_opens_repaired_with_each_fault_named_and_stays_editable() {
    let dir = sample("runner");
    let path = dir.path().join("clips/stride.clip.ron");
    let text = std::fs::read_to_string(&path).unwrap();
    // hips translation: key 1 NaN, keys 2 and 3 swapped; an unknown easing; a marker past the end.
    let broken = text
        .replacen("(time: 0.25, value: (0.0, 0.96", "(time: NaN, value: (0.0, 0.96", 1)
        .replacen("(time: 0.5, value: (0.0, 1.0", "(time: 0.75, value: (0.0, 1.0", 1)
        .replacen("(time: 0.75, value: (0.0, 0.96", "(time: 0.5, value: (0.0, 0.96", 1)
        .replacen("\"easeInOutSine\"", "\"easeInOutWobble\"", 1)
        .replacen("            time: 0.5,\n", "            time: 7.5,\n", 1);
    assert_ne!(broken, text);
    std::fs::write(&path, &broken).unwrap();
    let damaged = files(dir.path());
    let mut h = editor(dir.path());
    let app = h.state();
    let log: Vec<String> = app.log.entries().iter().map(|e| e.text.clone()).collect();
    for want in [
        "stride.clip.ron: tracks/hips/translation: key 1 has a non-finite time",
        "stride.clip.ron: tracks/hips/translation: the keys are not in time order",
        "stride.clip.ron: tracks/hips/translation/keys[0]/easing: ",
    ] {
        assert!(log.iter().any(|l| l.contains(want)), "missing {want:?} in {log:#?}");
    }
    assert!(
        matches!(app.modal, Some(marrow_editor::app::Modal::Error { .. })),
        "a dialog says what was repaired"
    );
    assert!(app.doc.is_dirty(), "the repaired clip differs from its file");
    let c = &app.doc.project().clips["clips/stride.clip.ron"];
    assert_eq!(c.clip.channels()[0].translation.as_ref().unwrap().times(), &[0.0, 0.5, 0.75, 1.0]);
    // The marker past the end is shown as a fault on the lane; the clip is still editable.
    h.get_by_label("OK").click();
    settle(&mut h);
    click_row(&mut h, "Runner");
    let t = h.state().panels.timeline.layout.map.unwrap().x(7.5);
    assert!(t.is_finite());
    h.state_mut().send(marrow_editor::command::Command::Edit(Box::new(marrow_editor::document::Op::Clip {
        path: "clips/stride.clip.ron".into(),
        op: marrow_editor::document::clip_ops::ClipOp::MoveMarker { index: 1, time: 0.5 },
    })));
    settle(&mut h);
    assert_eq!(h.state().doc.project().clips["clips/stride.clip.ron"].clip.markers()[1].time, 0.5);
    assert_eq!(files(dir.path()), damaged, "nothing is written until a save");
}

/// glTF LINEAR rotation evaluation from the specification (f64 slerp, shortest path), written
/// here independently of Marrow's sampler: what any glTF player does with the exported keys.
fn gltf_slerp(times: &[f32], values: &[f32], t: f32) -> [f64; 4] {
    let at = |k: usize| -> [f64; 4] { std::array::from_fn(|c| values[4 * k + c] as f64) };
    let n = times.len();
    if t <= times[0] {
        return at(0);
    }
    if t >= times[n - 1] {
        return at(n - 1);
    }
    let k = times.partition_point(|&s| s <= t) - 1;
    let u = (t as f64 - times[k] as f64) / (times[k + 1] as f64 - times[k] as f64);
    let (a, mut b) = (at(k), at(k + 1));
    let mut dot: f64 = (0..4).map(|c| a[c] * b[c]).sum();
    if dot < 0.0 {
        b = b.map(|x| -x);
        dot = -dot;
    }
    if dot > 0.999_999 {
        let v: [f64; 4] = std::array::from_fn(|c| a[c] + (b[c] - a[c]) * u);
        let l = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        return v.map(|x| x / l);
    }
    let th = dot.min(1.0).acos();
    let (sa, sb) = (((1.0 - u) * th).sin() / th.sin(), (u * th).sin() / th.sin());
    std::array::from_fn(|c| a[c] * sa + b[c] * sb)
}

#[test]
fn a_clip_eased_on_the_timeline_exports_within_the_bake_bound_of_marrows_evaluation() {
    let dir = sample("runner");
    let mut h = editor(dir.path());
    click_row(&mut h, "Runner");
    click(&mut h, Role::Button, "New Clip");
    click(&mut h, Role::Button, "⏺ Auto Key");
    h.state_mut().ui.selection = Selection::Bone { rig: "Runner".into(), bone: "thigh_l".into() };
    h.state_mut().ui.gizmo = GizmoMode::Rotate;
    settle(&mut h);
    turn_x_ring(&mut h, 0.5);
    seek(&mut h, 0.5);
    turn_x_ring(&mut h, -0.8);
    // Ease the first key through the dope sheet's menu: easeInOutBack overshoots, so linear
    // keys cannot say it without baking.
    open_easing_picker(&mut h, RowKind::Bone(1), 0.0);
    h.get_by_label("easeInOutBack").click();
    settle(&mut h);
    let authored = clip(&h).clip;
    let track = authored.channels()[1].rotation.clone().unwrap();
    assert_eq!(track.key_easings()[0], Some(Ease::Named(Easing::InOutBack)));
    // File > Export glTF with the default bake (the clip's 30 fps, bound 1e-4 rad).
    click(&mut h, Role::Button, "File");
    click(&mut h, Role::Button, "Export glTF…");
    click(&mut h, Role::Button, "Export");
    let bytes = std::fs::read(dir.path().join("export/main.glb")).expect("the export is written");
    let len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let json: serde_json::Value = serde_json::from_slice(&bytes[20..20 + len]).unwrap();
    let bin = &bytes[20 + len + 8..];
    let floats = |a: u64| -> Vec<f32> {
        let acc = &json["accessors"][a as usize];
        let view = &json["bufferViews"][acc["bufferView"].as_u64().unwrap() as usize];
        let off = view["byteOffset"].as_u64().unwrap_or(0) as usize;
        let n = acc["count"].as_u64().unwrap() as usize * if acc["type"] == "VEC4" { 4 } else { 1 };
        (0..n).map(|i| f32::from_le_bytes(bin[off + 4 * i..off + 4 * i + 4].try_into().unwrap())).collect()
    };
    let anim = json["animations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == serde_json::json!(authored.name))
        .expect("the new clip is an animation");
    let baked = &anim["extras"]["baked"];
    assert_eq!(baked["segments"][0]["easing"], "easeInOutBack");
    assert_eq!(baked["segments"][0]["node"], "thigh_l");
    let bound = baked["bound"].as_f64().unwrap();
    let thigh = json["nodes"].as_array().unwrap().iter().position(|n| n["name"] == "thigh_l").unwrap();
    let channel = anim["channels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["target"]["node"] == serde_json::json!(thigh) && c["target"]["path"] == "rotation")
        .unwrap();
    let sampler = &anim["samplers"][channel["sampler"].as_u64().unwrap() as usize];
    let (times, values) =
        (floats(sampler["input"].as_u64().unwrap()), floats(sampler["output"].as_u64().unwrap()));
    assert!(times.len() > 2, "the eased segment is baked into keys");
    // 1,000 probes over the segment: the player's rotation within the bound of Marrow's own.
    let mut worst = 0.0f64;
    for i in 0..=1000 {
        let t = 0.5 * i as f32 / 1000.0;
        let p = gltf_slerp(&times, &values, t);
        let m = track.sample(t).unwrap().as_dquat().normalize();
        let r = m.conjugate() * glam::DQuat::from_xyzw(p[0], p[1], p[2], p[3]).normalize();
        worst = worst.max(2.0 * glam::DVec3::new(r.x, r.y, r.z).length().atan2(r.w.abs()));
    }
    assert!(
        worst <= bound * 1.001 + 1e-6,
        "the export strays {worst} rad from Marrow's curve (bound {bound})"
    );
    // Exporting edited nothing: the new clip and its keys are the only steps.
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Set Easing"));
}

/// Right-clicks the key at `t` on `row` and opens Easing… from its menu.
fn open_easing_picker(h: &mut Harness<'_, EditorApp>, row: RowKind, t: f32) {
    let k = key_at(h, row, t);
    h.hover_at(k);
    h.run();
    for pressed in [true, false] {
        h.event(egui::Event::PointerButton {
            pos: k,
            button: egui::PointerButton::Secondary,
            pressed,
            modifiers: Modifiers::NONE,
        });
    }
    settle(h);
    h.get_by_label("Easing…").click();
    settle(h);
}

fn picker_selects(h: &Harness<'_, EditorApp>, name: &str) -> bool {
    h.get_by_label(name).accesskit_node().toggled() == Some(egui::accesskit::Toggled::True)
}

#[test]
fn the_easing_picker_names_and_selects_the_current_easing_of_the_key() {
    let dir = sample("runner");
    let original = files(dir.path());
    let mut h = editor(dir.path());
    click_row(&mut h, "Runner");
    // The hips' translation key at 0 eases its segment with easeInOutSine (the sample's file).
    open_easing_picker(&mut h, RowKind::Bone(0), 0.0);
    assert!(h.query_by_label("Now: easeInOutSine").is_some(), "the picker names the key's easing");
    assert!(picker_selects(&h, "easeInOutSine"), "its entry is shown selected");
    assert!(!picker_selects(&h, "easeInOutBack") && !picker_selects(&h, "Track default"));
    h.get_by_label("easeInOutBack").click();
    settle(&mut h);
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Set Easing"));
    // Opened again, it shows the easing just chosen.
    open_easing_picker(&mut h, RowKind::Bone(0), 0.0);
    assert!(h.query_by_label("Now: easeInOutBack").is_some());
    assert!(picker_selects(&h, "easeInOutBack") && !picker_selects(&h, "easeInOutSine"));
    // The last key starts no segment: the track default.
    h.get_by_label("Close window").click();
    settle(&mut h);
    open_easing_picker(&mut h, RowKind::Bone(0), 1.0);
    assert!(h.query_by_label("Now: the track default").is_some());
    assert!(picker_selects(&h, "Track default"));
    h.get_by_label("Close window").click();
    settle(&mut h);
    undo_all_redo_all(&mut h, dir.path(), &original);
}

/// The key glyph drawn at `at` (the cached key marks), as (corner count, fill).
fn glyph_at(h: &Harness<'_, EditorApp>, at: Pos2) -> (usize, egui::Color32) {
    let shapes = h.state().panels.timeline.key_marks().shapes();
    let found = shapes.iter().find_map(|s| match s {
        egui::Shape::Path(p)
            if s.visual_bounding_rect().contains(at) && s.visual_bounding_rect().height() < 16.0 =>
        {
            Some((p.points.len(), p.fill))
        }
        _ => None,
    });
    found.unwrap_or_else(|| panic!("no key glyph at {at:?}"))
}

#[test]
fn an_eased_key_has_its_own_glyph_on_its_bone_row_and_the_summary() {
    let dir = sample("runner");
    let mut h = editor(dir.path());
    click_row(&mut h, "Runner");
    h.run_steps(2);
    // Every key at 0 starts an eased segment; the keys at 1 (the clip's end) start none.
    for row in [RowKind::Bone(0), RowKind::Summary] {
        let (eased, eased_fill) = glyph_at(&h, key_at(&h, row, 0.0));
        let (plain, plain_fill) = glyph_at(&h, key_at(&h, row, 1.0));
        assert_eq!(plain, 4, "{row:?}: a plain LINEAR key is a diamond");
        assert_ne!(eased, plain, "{row:?}: an eased key has another shape");
        assert_ne!(eased_fill, plain_fill, "{row:?}: and another colour");
    }
}

#[test]
fn the_timeline_toolbar_wraps_its_groups_whole_so_the_view_toggle_is_never_split() {
    // The runner's header at the default size once put "Dope Sheet" at the end of one line and
    // "Curves" at the start of the next.
    for size in [egui::vec2(1440.0, 900.0), egui::vec2(1280.0, 800.0), egui::vec2(1600.0, 1000.0)] {
        let dir = sample("runner");
        let mut h = editor_sized(dir.path(), size);
        click_row(&mut h, "Runner");
        // The header's sizes are measured on a worker: the line is full once they arrive.
        wait_for_clip_sizes(&mut h);
        h.run_steps(2);
        let (dope, curves) = (h.get_by_label("Dope Sheet").rect(), h.get_by_label("Curves").rect());
        assert_eq!(
            dope.top(),
            curves.top(),
            "at {size:?}: Dope Sheet {dope:?} and Curves {curves:?} share a line"
        );
        assert!(curves.left() > dope.right(), "at {size:?}: side by side");
        let (auto, key) = (h.get_by_label_contains("Auto Key").rect(), h.get_by_label("Key").rect());
        assert_eq!(auto.top(), key.top(), "at {size:?}: Auto Key and Key share a line");
    }
}

/// The Runner's animator in the harness's world.
fn runner_animator(h: &Harness<'_, EditorApp>) -> marrow_engine::animator::Animator {
    let s = &h.state().session;
    s.world().animator(s.entity("Runner").unwrap()).unwrap().clone()
}

#[test]
fn a_rig_playing_a_graph_keys_nothing_at_its_playhead_until_the_timeline_shows_the_clip_in_its_place() {
    // The locomotion sample's Runner plays its steering graph; the Timeline shows its scene
    // clip, the stride (a one-second loop). Played three seconds, paused and keyed with K, the
    // key once landed at the graph's 3 s and stretched the stride to three seconds.
    const STRIDE: &str = "clips/stride.clip.ron";
    let dir = sample("locomotion");
    let original = files(dir.path());
    let mut h = editor(dir.path());
    click_row(&mut h, "Runner");
    h.state_mut().ui.selection = Selection::Bone { rig: "Runner".into(), bone: "upperarm_l".into() };
    settle(&mut h);
    let duration = |h: &Harness<'_, EditorApp>| h.state().doc.project().clips[STRIDE].clip.duration();
    assert!(runner_animator(&h).current_graph().is_some(), "the Runner plays its graph");
    play_for(&mut h, 3.0);
    assert!(runner_animator(&h).time() > 2.0, "the graph's time runs past the stride's second");
    let revision = h.state().doc.revision();
    h.state_mut().ui.focus = marrow_editor::ui_state::Focus::Timeline;
    key(&mut h, Modifiers::NONE, Key::K);
    key(&mut h, Modifiers::NONE, Key::M);
    assert_eq!(h.state().doc.revision(), revision, "nothing keyed or marked at the graph's time");
    assert!(
        h.get_by_role_and_label(Role::Button, "Key").accesskit_node().is_disabled(),
        "Key is off while the graph plays"
    );
    assert!(
        h.query_by_label_contains("Runner plays graphs/steering.graph.ron").is_some(),
        "the Timeline says what the rig plays"
    );
    let shown = |h: &Harness<'_, EditorApp>| h.state().panels.timeline.layout.shown.unwrap();
    assert!(!shown(&h).live, "no playhead is drawn for the graph's time");

    // Show This Clip: the Runner plays the stride, its playhead inside the stride's second.
    click(&mut h, Role::Button, "Show This Clip");
    let a = runner_animator(&h);
    assert!(a.current_graph().is_none() && a.current_clip().is_some_and(|c| c.name == "stride"));
    assert!(shown(&h).live, "the playhead is the stride's");
    play_for(&mut h, 2.5);
    let t = runner_animator(&h).time();
    assert!((0.0..=1.0).contains(&t), "the playhead loops inside the stride: {t}");
    h.state_mut().ui.focus = marrow_editor::ui_state::Focus::Timeline;
    key(&mut h, Modifiers::NONE, Key::K);
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Key Pose"));
    assert_eq!(duration(&h), 1.0, "the stride stays a second long");
    let stride = h.state().doc.project().clips[STRIDE].clone();
    let bone = stride.bones.iter().position(|b| b == "upperarm_l").unwrap();
    let keyed = stride.clip.channels()[bone].translation.as_ref().map(|t| t.times().to_vec());
    let frame = (t * 30.0).round() / 30.0;
    assert_eq!(keyed, Some(vec![frame]), "upperarm_l's position keyed at the stride's frame of {t}");
    let keys = stride.clip.key_count();
    assert_eq!(
        runner_animator(&h).current_clip().map(|c| c.key_count()),
        Some(keys),
        "the rig plays the edited stride"
    );

    // Back to Scene: the graph plays again; the edit stays.
    click(&mut h, Role::Button, "Back to Scene");
    settle(&mut h);
    assert!(runner_animator(&h).current_graph().is_some(), "the Runner plays its graph again");
    undo_all_redo_all(&mut h, dir.path(), &original);
}

#[test]
fn scrubbing_the_ruler_of_a_clip_the_rig_does_not_play_shows_that_clip_at_the_scrubbed_time() {
    // The locomotion sample's Runner plays its steering graph; dragging the stride's ruler once
    // seeked the graph instead. Now the Runner shows the stride where the ruler was let go.
    let dir = sample("locomotion");
    let mut h = editor(dir.path());
    click_row(&mut h, "Runner");
    settle(&mut h);
    assert!(runner_animator(&h).current_graph().is_some(), "the Runner plays its graph");
    let revision = h.state().doc.revision();
    let (a, b) = (on_ruler(&h, 0.2), on_ruler(&h, 0.5));
    drag(&mut h, a, b, 6);
    let a = runner_animator(&h);
    assert!(a.current_graph().is_none(), "the scrub shows the clip in the graph's place");
    assert_eq!(a.current_clip().map(|c| c.name.as_str()), Some("stride"));
    assert!((a.time() - 0.5).abs() < 1e-4, "at the scrubbed time: {}", a.time());
    assert_eq!(h.state().doc.revision(), revision, "scrubbing is not an edit");
    assert!(h.query_by_label("Back to Scene").is_some(), "the way back is offered");
}

#[test]
fn a_click_on_the_ruler_whose_press_and_release_share_a_frame_seeks_there() {
    // xdotool's click, a touchpad's tap and a press and release on a busy frame reach egui in
    // one frame: the ruler scrubbed only on a press seen held (or a drag), so such a click did
    // nothing in the real window.
    let dir = sample("runner");
    let mut h = editor(dir.path());
    click_row(&mut h, "Runner");
    settle(&mut h);
    let revision = h.state().doc.revision();
    let (half, later) = (on_ruler(&h, 0.5), on_ruler(&h, 0.3));
    let animator = |h: &Harness<'_, EditorApp>| runner_animator(h).time();
    let fps = h.state().doc.project().clips["clips/stride.clip.ron"].clip.frame_rate;
    let frame = |t: f32| (t * fps).round() / fps;
    assert!(animator(&h) < 0.1, "the playhead starts near 0: {}", animator(&h));
    tap(&mut h, half);
    assert!((animator(&h) - frame(0.5)).abs() < 1e-4, "the click seeks to its frame: {}", animator(&h));
    tap(&mut h, later);
    assert!((animator(&h) - frame(0.3)).abs() < 1e-4, "and a second click to its own: {}", animator(&h));
    assert!(!h.state().session.is_playing());
    assert_eq!(h.state().doc.revision(), revision, "seeking is not an edit");
}

#[test]
fn shift_k_keys_every_bone_and_k_only_the_selected_one() {
    // egui's `consume_key` ignores an extra Shift: K, read first, once took Shift+K and keyed
    // only the selected bone (none in the real window: nothing happened).
    const STRIDE: &str = "clips/stride.clip.ron";
    let dir = sample("runner");
    let mut h = editor(dir.path());
    click_row(&mut h, "Runner");
    h.state_mut().ui.selection = Selection::Bone { rig: "Runner".into(), bone: "thigh_l".into() };
    settle(&mut h);
    let keyed_at = |h: &Harness<'_, EditorApp>, t: f32| -> Vec<String> {
        let c = &h.state().doc.project().clips[STRIDE];
        c.bones
            .iter()
            .zip(c.clip.channels())
            .filter(|(_, ch)| {
                ch.rotation.as_ref().is_some_and(|r| r.times().iter().any(|&x| (x - t).abs() < 1e-4))
            })
            .map(|(b, _)| b.clone())
            .collect()
    };
    let bones = h.state().doc.project().clips[STRIDE].bones.clone();
    assert!(bones.len() > 1, "a rig of several bones");
    seek(&mut h, 0.4);
    h.state_mut().ui.focus = marrow_editor::ui_state::Focus::Timeline;
    key(&mut h, Modifiers::NONE, Key::K);
    assert_eq!(keyed_at(&h, 0.4), ["thigh_l"], "K keys the selected bone");
    seek(&mut h, 0.6);
    h.state_mut().ui.focus = marrow_editor::ui_state::Focus::Timeline;
    key(&mut h, Modifiers::SHIFT, Key::K);
    assert_eq!(keyed_at(&h, 0.6), bones, "Shift+K keys every bone");
}

#[test]
fn a_rig_numbered_level_by_level_lists_each_bone_under_its_parent_in_the_outliner_and_dope_sheet() {
    // FBX rigs come numbered level by level (the hips, both thighs, both shins); both lists
    // went in index order, indented by depth, which put the left shin under the right thigh.
    let dir = sample("runner");
    let swap = |rel: &str, first: &str, second: &str, end: &str| {
        let p = dir.path().join(rel);
        let text = std::fs::read_to_string(&p).unwrap();
        let (a, b, c) = (text.find(first).unwrap(), text.find(second).unwrap(), text.find(end).unwrap());
        std::fs::write(&p, format!("{}{}{}{}", &text[..a], &text[b..c], &text[a..b], &text[c..])).unwrap();
    };
    let block = |name: &str| format!("        (\n            name: \"{name}\",");
    swap("assets/runner.skeleton.ron", &block("shin_l"), &block("thigh_r"), &block("shin_r"));
    swap("clips/stride.clip.ron", "        \"shin_l\",", "        \"thigh_r\",", "        \"shin_r\",");
    let mut h = editor(dir.path());
    click_row(&mut h, "Runner");
    h.state_mut().ui.selection = Selection::Bone { rig: "Runner".into(), bone: "hips".into() };
    settle(&mut h);
    let sk = {
        let app = h.state();
        let w = app.session.world();
        w.animator(w.find("Runner").unwrap()).unwrap().skeleton().clone()
    };
    assert_eq!(sk.bone_names, ["hips", "thigh_l", "thigh_r", "shin_l", "shin_r"], "numbered level by level");
    let tree = ["hips", "thigh_l", "shin_l", "thigh_r", "shin_r"];
    let ys: Vec<f32> = tree.iter().map(|b| h.get_by_label(&format!("• {b}")).rect().top()).collect();
    assert!(ys.is_sorted() && ys.windows(2).all(|w| w[0] < w[1]), "the Outliner's rows: {tree:?} at {ys:?}");
    let clip = &h.state().doc.project().clips["clips/stride.clip.ron"];
    let rows: Vec<&str> = (h.state().panels.timeline.layout.rows.iter())
        .filter_map(|(k, _)| match k {
            RowKind::Bone(b) => Some(clip.bones[*b].as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(rows, tree, "the dope sheet's bone rows");
}
