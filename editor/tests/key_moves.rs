//! Key moves on a clip with the shape of real motion capture (`support::mocap`: the CMU 31-joint
//! rig, 995 frames sampled every 0.008333 s as a CMU BVH file's `Frame Time` gives them, so the
//! keys drift off the exact 120 Hz grid by up to 0.33 ms; 31,840 keys),
//! driven through the Timeline's dope sheet: a selection dragged by ten frames and back keeps
//! every key and value it did not land on, keys of one channel never end up a fraction of a
//! millisecond apart, the undo step says how many keys it replaced, and undo all gives the
//! clip file's original bytes. The same move on the real capture in the repository (CMU 131_01,
//! `assets/bvh/cmu_131_01.bvh`): its rate detected, every key and value kept.

mod support;

use egui::Pos2;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use marrow_editor::EditorApp;
use marrow_editor::panels::timeline::model::{KeyId, RowKind};
use marrow_engine::clip::Channel;
use marrow_engine::project::file::ClipAsset;
use support::mocap::{CLIP, FRAME_TIME, FRAMES};
use support::*;

/// A temporary folder holding the mocap project.
fn mocap_project() -> TempDir {
    let dir = TempDir::new("mocap");
    mocap::write_project(dir.path());
    dir
}

fn clip(h: &Harness<'_, EditorApp>) -> ClipAsset {
    (*h.state().doc.project().clips[CLIP]).clone()
}

/// Every key of the clip: (bone, channel, time, value bits).
fn keys(c: &ClipAsset) -> Vec<(usize, Channel, f32, Vec<u32>)> {
    let mut out = Vec::new();
    for (b, ch) in c.clip.channels().iter().enumerate() {
        if let Some(t) = &ch.translation {
            for (time, v) in t.times().iter().zip(t.values()) {
                out.push((b, Channel::Translation, *time, v.to_array().map(f32::to_bits).to_vec()));
            }
        }
        if let Some(t) = &ch.rotation {
            for (time, v) in t.times().iter().zip(t.values()) {
                out.push((b, Channel::Rotation, *time, v.to_array().map(f32::to_bits).to_vec()));
            }
        }
    }
    out
}

/// The closest two keys of one channel come, seconds.
fn closest_pair(c: &ClipAsset) -> f32 {
    let mut best = f32::INFINITY;
    for ch in c.clip.channels() {
        for times in [ch.translation.as_ref().map(|t| t.times()), ch.rotation.as_ref().map(|t| t.times())]
            .into_iter()
            .flatten()
        {
            for w in times.windows(2) {
                best = best.min(w[1] - w[0]);
            }
        }
    }
    best
}

/// Opens the project with the Actor selected (the Timeline shows its clip).
fn open(dir: &TempDir) -> Harness<'static, EditorApp> {
    let mut h = editor(dir.path());
    click_row(&mut h, "Actor");
    assert!(h.state().panels.timeline.layout.map.is_some(), "the dope sheet is drawn");
    h
}

/// Drags the summary row's key at `t` by `frames` frames of 120 Hz (one gesture): past the
/// target by a few points first, so that egui sees a drag however short the move, then onto it.
fn drag_summary_key(h: &mut Harness<'_, EditorApp>, t: f32, frames: f32) {
    let map = h.state().panels.timeline.layout.map.unwrap();
    let a = h.state().panels.timeline.layout.key(RowKind::Summary, t).expect("the summary row is drawn");
    let b = Pos2::new(map.x(t + frames / 120.0), a.y);
    let past = egui::vec2(24.0 * frames.signum(), 0.0);
    h.hover_at(a);
    h.run();
    h.drag_at(a);
    h.run();
    for p in [a + past * 0.5, b + past, b] {
        h.hover_at(p);
        h.step();
    }
    h.drop_at(b);
    settle(h);
}

fn select(h: &mut Harness<'_, EditorApp>, c: &ClipAsset, pick: impl Fn(usize) -> bool) -> usize {
    let sel: std::collections::BTreeSet<KeyId> = keys(c)
        .iter()
        .filter(|(_, _, t, _)| pick((t / FRAME_TIME).round() as usize))
        .map(|(b, ch, t, _)| KeyId::new(*b, *ch, *t))
        .collect();
    let n = sel.len();
    h.state_mut().panels.timeline.selection = sel;
    settle(h);
    n
}

#[test]
fn every_other_key_of_a_mocap_clip_dragged_ten_frames_and_back_keeps_every_key_and_value() {
    let dir = mocap_project();
    let original = files(dir.path());
    let mut h = open(&dir);
    let before = keys(&clip(&h));
    assert_eq!(before.len(), 31_840);
    let c = clip(&h);
    let n = select(&mut h, &c, |frame| frame % 2 == 0);
    assert_eq!(n, 498 * 32);

    drag_summary_key(&mut h, 100.0 * FRAME_TIME, 10.0);
    let moved = keys(&clip(&h));
    assert_eq!(moved.len(), 31_840, "no key dropped: {:?}", h.state().doc.undo_label());
    assert!(closest_pair(&clip(&h)) > 0.004, "no two keys of a channel closer than the spacing");

    drag_summary_key(&mut h, 110.0 * FRAME_TIME, -10.0);
    let back = keys(&clip(&h));
    assert_eq!(back.len(), before.len());
    for (a, b) in before.iter().zip(&back) {
        assert_eq!((a.0, a.1, &a.3), (b.0, b.1, &b.3), "every value unchanged, bit for bit");
        // Two f32 roundings (t + d - d): within a few ulps, far below the 1e-5 s of one instant.
        assert!((a.2 - b.2).abs() <= 4e-6, "time {} came back as {}", a.2, b.2);
    }
    assert_eq!(h.state().doc.head(), 2, "two drags, two steps");
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Move 15,936 keys"));
    undo_all_redo_all(&mut h, dir.path(), &original);
}

#[test]
fn the_first_half_of_a_mocap_clip_dragged_ten_frames_replaces_only_the_keys_it_lands_on() {
    let dir = mocap_project();
    let original = files(dir.path());
    let mut h = open(&dir);
    let before = keys(&clip(&h));
    let c = clip(&h);
    let n = select(&mut h, &c, |frame| frame < FRAMES / 2);
    assert_eq!(n, 497 * 32);

    // The moved keys of frames 487..=496 land on the resting keys of 497..=506 (3.3 us off
    // in this capture's timing: the same instant), which they replace; nothing else changes.
    drag_summary_key(&mut h, 200.0 * FRAME_TIME, 10.0);
    let c = clip(&h);
    assert_eq!(keys(&c).len(), 31_840 - 10 * 32, "only the ten frames landed on are replaced");
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Move 15,904 keys (320 replaced)"));
    assert!(closest_pair(&c) > 0.004, "no key left a fraction of a millisecond beside another");
    let resting: Vec<_> = before.iter().filter(|k| (k.2 / FRAME_TIME).round() as usize >= 507).collect();
    let now = keys(&c);
    for k in resting {
        assert!(now.contains(k), "the unselected key {k:?} is untouched");
    }

    // And back (a second gesture): the moved keys return to their times; the ten frames they
    // replaced stay gone (that was the first step; undo brings them back).
    drag_summary_key(&mut h, 210.0 * FRAME_TIME, -10.0);
    let c = clip(&h);
    assert_eq!(keys(&c).len(), 31_840 - 10 * 32);
    assert!(closest_pair(&c) > 0.004);
    undo_all_redo_all(&mut h, dir.path(), &original);
}

#[test]
fn a_single_key_dragged_ten_frames_replaces_the_key_it_lands_on_instead_of_sitting_beside_it() {
    let dir = mocap_project();
    let mut h = open(&dir);
    let before = keys(&clip(&h));
    let (b, ch) = (0, Channel::Rotation);
    let t = clip(&h).clip.channels()[b].rotation.as_ref().unwrap().times()[300];
    h.state_mut().panels.timeline.selection = [KeyId::new(b, ch, t)].into_iter().collect();
    settle(&mut h);
    drag_summary_key(&mut h, t, 10.0);
    let after = keys(&clip(&h));
    assert_eq!(after.len(), before.len() - 1, "the key lands on the one ten frames on, replacing it");
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Move Key (1 replaced)"));
    assert!(closest_pair(&clip(&h)) > 0.004, "not two keys 0.16 ms apart");
}

/// The real capture's project (CMU 131_01, imported by the engine's BVH importer).
fn real_project() -> TempDir {
    let dir = TempDir::new("cmu");
    mocap::write_real_project(dir.path(), &repo().join(mocap::REAL_BVH));
    dir
}

#[test]
fn real_motion_capture_every_other_frame_dragged_ten_frames_and_back_keeps_every_key_and_value() {
    let dir = real_project();
    let original = files(dir.path());
    let mut h = open(&dir);
    let c = clip(&h);
    assert_eq!(c.clip.frame_rate, 120.0, "the import rate, detected from the file");
    let before = keys(&c);
    let total = before.len();
    assert!(total > 30_000, "a real capture's keys: {total}");
    let n = select(&mut h, &c, |frame| frame % 2 == 0);
    assert!(n * 2 >= total - 64 && n * 2 <= total + 64, "about half: {n} of {total}");

    drag_summary_key(&mut h, 100.0 * FRAME_TIME, 10.0);
    assert_eq!(keys(&clip(&h)).len(), total, "no key dropped: {:?}", h.state().doc.undo_label());
    assert!(closest_pair(&clip(&h)) > 0.004, "no two keys of a channel closer than the spacing");
    drag_summary_key(&mut h, 110.0 * FRAME_TIME, -10.0);
    let back = keys(&clip(&h));
    assert_eq!(back.len(), total);
    for (a, b) in before.iter().zip(&back) {
        assert_eq!((a.0, a.1, &a.3), (b.0, b.1, &b.3), "every value unchanged, bit for bit");
        assert!((a.2 - b.2).abs() <= 4e-6, "time {} came back as {}", a.2, b.2);
    }
    assert_eq!(h.state().doc.head(), 2, "two drags, two steps");
    undo_all_redo_all(&mut h, dir.path(), &original);
}

/// The Timeline's header states the clip's bytes at each runtime precision: the compressed form
/// is measured in the background once the clip has settled and shown when ready (under the
/// compact key blocks, which are under the full ones), without an edit; an edit of the clip
/// measures the new clip once the drag has ended.
#[test]
fn the_timeline_header_shows_the_clips_bytes_at_each_precision_without_an_edit() {
    use marrow_editor::panels::timeline::clip_size::Compressed;
    let dir = mocap_project();
    let mut h = open(&dir);
    let wait = |h: &mut Harness<'static, EditorApp>| {
        for _ in 0..600 {
            if let Some(s) = h.state().panels.timeline.sizes.last() {
                return s;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
            h.run();
        }
        panic!("the compressed size was not measured within 12 s");
    };
    let s = wait(&mut h);
    let Compressed::Done { bytes, error } = s.compressed else { panic!("the capture compresses") };
    settle(&mut h);
    assert!(s.compact < s.full, "compact {} under full {}", s.compact, s.full);
    assert!(bytes * 2 < s.compact, "compressed {bytes} under half the compact {}", s.compact);
    assert!(error <= 1e-4, "within ACL's default error: {error}");
    let label = h.get_by_label_contains("· compressed ");
    let node = label.accesskit_node();
    let text = [node.label(), node.value()].into_iter().flatten().collect::<Vec<_>>().join(" ");
    assert!(text.contains("KB"), "{text}");
    assert_eq!(h.state().doc.head(), 0, "showing sizes is no edit");
    // An edit makes a new clip: measured anew (the moved keys sit 3.3 us off the capture's
    // grid beside a ten-frame jump: the compressed form keeps their time).
    let before = clip(&h).clip.clone();
    drag_summary_key(&mut h, 100.0 * FRAME_TIME, 10.0);
    assert_eq!(h.state().doc.head(), 1);
    assert!(!std::sync::Arc::ptr_eq(&before, &clip(&h).clip));
    let again = wait(&mut h).compressed;
    settle(&mut h);
    let shown = h.get_by_label_contains("· compressed").accesskit_node();
    let text = [shown.label(), shown.value()].into_iter().flatten().collect::<Vec<_>>().join(" ");
    assert!(matches!(again, Compressed::Done { error, .. } if error <= 1e-4), "{again:?}");
    assert!(text.contains("KB"), "{text}");
}

/// A rig placed at another scale gets the compressed size measured on screen: the mocap sample's
/// capture, in its file's units under a 0.056444 scale, compresses to 0.01 cm in the scene's
/// metres (its worst error given in them), where 0.01 of its own units could not be met at all.
#[test]
fn the_size_label_measures_a_scaled_rig_with_the_tolerance_on_screen() {
    use marrow_editor::panels::timeline::clip_size::Compressed;
    let dir = sample("mocap");
    let mut h = editor(dir.path());
    h.state_mut().ui.selection = marrow_editor::ui_state::Selection::Entity("cmu_131_01/cmu_131_01".into());
    settle(&mut h);
    let mut sizes = None;
    for _ in 0..900 {
        sizes = h.state().panels.timeline.sizes.last();
        if sizes.is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        h.run();
    }
    let s = sizes.expect("the capture's sizes were measured within 18 s");
    let Compressed::Done { bytes, error } = s.compressed else { panic!("{:?}", s.compressed) };
    assert!(error > 0.0 && error <= 1e-4, "within 0.01 cm on screen: {error}");
    assert!(bytes * 3 < s.compact, "compressed {bytes} against compact {}", s.compact);
    settle(&mut h);
    let label = h.get_by_label_contains("· compressed ").accesskit_node();
    let text = [label.label(), label.value()].into_iter().flatten().collect::<Vec<_>>().join(" ");
    assert!(text.contains("KB"), "{text}");
    assert_eq!(h.state().doc.head(), 0, "no edit");
}

/// The sample capture (`projects/mocap`: CesiumMan playing CMU 131_01 retargeted, 19,880 keys
/// every 0.0083333 s): one frame's keys copied with Ctrl+C and pasted at 4 s with Ctrl+V replace
/// that frame's keys at 4 s, one undo step, as on a hand-keyed clip.
#[test]
fn a_frame_of_the_sample_capture_copied_and_pasted_at_four_seconds_replaces_that_frames_keys() {
    const RETARGETED: &str = "clips/cmu_131_01_Armature.clip.ron";
    let dir = sample("mocap");
    let original = files(dir.path());
    let mut h = editor(dir.path());
    click_row(&mut h, "CesiumMan");
    let c = (*h.state().doc.project().clips[RETARGETED]).clone();
    let total = keys(&c).len();
    let frame = 0.0083333f32;
    let sel: std::collections::BTreeSet<KeyId> = keys(&c)
        .iter()
        .filter(|(_, _, t, _)| (t / frame).round() as usize == 60)
        .map(|(b, ch, t, _)| KeyId::new(*b, *ch, *t))
        .collect();
    let n = sel.len();
    assert!(n >= 16, "a frame of the capture keys every bone: {n}");
    // A click on the summary row's key at that frame selects the frame (and focuses the
    // Timeline, as in the real window).
    let t = sel.iter().next().unwrap().t();
    let p = h.state().panels.timeline.layout.key(RowKind::Summary, t).expect("the summary row is drawn");
    h.hover_at(p);
    h.run();
    h.drag_at(p);
    h.drop_at(p);
    settle(&mut h);
    assert_eq!(h.state().panels.timeline.selection, sel, "the click selects the frame's keys");
    let text = copy(&mut h).expect("the copied keys go to the system clipboard");
    assert!(text.starts_with(&format!("Marrow keys ({n})")), "{text}");
    h.state_mut().send(marrow_editor::command::Command::Seek { rig: "CesiumMan".into(), time: 4.0 });
    settle(&mut h);
    paste(&mut h, &text);
    assert_eq!(h.state().doc.head(), 1, "the paste is one undo step: {:?}", h.state().doc.undo_label());
    let after = (*h.state().doc.project().clips[RETARGETED]).clone();
    assert_eq!(keys(&after).len(), total, "the pasted keys replace the frame at 4 s");
    undo_all_redo_all(&mut h, dir.path(), &original);
}

/// A second of the real capture dragged three seconds on: across 360 frames this capture's
/// timing drifts 12 us off its own frames, so a moved key lands beside the key of its frame
/// rather than on it; it replaces that key (a key dropped within half a frame of another of its
/// channel takes its place), leaving no two keys of a channel a fraction of a frame apart.
#[test]
fn real_motion_capture_a_second_dragged_three_seconds_on_replaces_the_frames_it_lands_on() {
    let dir = real_project();
    let mut h = open(&dir);
    let c = clip(&h);
    let total = keys(&c).len();
    let n = select(&mut h, &c, |frame| frame < 120);
    drag_summary_key(&mut h, 60.0 * FRAME_TIME, 360.0);
    let after = clip(&h);
    assert!(closest_pair(&after) > 0.004, "no key left a fraction of a frame beside another");
    assert_eq!(keys(&after).len(), total - n, "each moved key replaced the key of its frame");
    assert_eq!(
        h.state().doc.undo_label().as_deref(),
        Some(format!("Move {} keys ({} replaced)", thousands(n), thousands(n)).as_str())
    );
}

fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
