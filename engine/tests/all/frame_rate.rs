//! Import detects a clip's frame rate from its keys when the file does not say it (a glTF
//! written by another tool), keeps Marrow's own `extras.frameRate`, and moves no key.

use std::path::{Path, PathBuf};

use marrow_engine::clip::Clip;
use marrow_engine::gltf::{ExportOptions, ImportedScene, import_slice};
use marrow_engine::project::Library;
use marrow_engine::synthetic::{mocap_like_clip, mocap_skeleton, one_rig_project};
use marrow_engine::track::{Interpolation, Track};

/// `clip` on the mocap rig, exported as `.gltf` + `.bin` into a fresh folder, with Marrow's
/// frame-rate extras removed unless `keep_rate`, and imported back.
fn round_trip(clip: Clip, keep_rate: bool, tag: &str) -> ImportedScene {
    let project = one_rig_project(mocap_skeleton(), vec![("clips/walk.clip.ron", clip)]);
    let (lib, errors) = Library::load_cached(&project, Path::new("."), &mut Default::default());
    assert!(errors.is_empty(), "{errors:?}");
    let scene = marrow_engine::project::export::scene_for_export(&project, &lib, None).unwrap().scene;
    let (json, bin, _) =
        marrow_engine::gltf::export_gltf(&scene, &ExportOptions::default(), "walk.bin").unwrap();
    let mut root: serde_json::Value = serde_json::from_slice(&json).unwrap();
    let mut removed = 0;
    for a in root["animations"].as_array_mut().unwrap() {
        if !keep_rate && let Some(e) = a.get_mut("extras").and_then(|e| e.as_object_mut()) {
            removed += usize::from(e.remove("frameRate").is_some());
        }
    }
    assert_eq!(removed, usize::from(!keep_rate), "the export wrote the rate once");
    let dir: PathBuf = std::env::temp_dir().join(format!("marrow-frame-rate-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("walk.bin"), bin).unwrap();
    let file = dir.join("walk.gltf");
    let text = serde_json::to_vec(&root).unwrap();
    let out = import_slice(&text, &file, Some(&dir)).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    out
}

fn imported_clip(s: &ImportedScene) -> &Clip {
    assert_eq!(s.animations.len(), 1);
    assert_eq!(s.animations[0].clips.len(), 1);
    &s.animations[0].clips[0].clip
}

#[test]
fn a_120_hz_capture_without_marrow_extras_imports_at_120_fps() {
    let sk = mocap_skeleton();
    let clip = mocap_like_clip(&sk, "walk", 995, 120.0, 7);
    assert_eq!(clip.frame_rate, 30.0, "the clip itself does not say");
    let s = round_trip(clip, false, "120");
    let c = imported_clip(&s);
    assert_eq!(c.frame_rate, 120.0);
    let keys: usize = c.channels().iter().map(|ch| ch.rotation.as_ref().map_or(0, |t| t.len())).sum();
    assert_eq!(keys, 31 * 995, "every rotation key comes back");
}

#[test]
fn a_24_fps_clip_imports_at_24_and_a_key_a_third_into_a_frame_stays_there() {
    let sk = mocap_skeleton();
    let mut clip = mocap_like_clip(&sk, "walk", 48, 24.0, 3);
    let third = 10.0f32 / 24.0 + 1.0 / 72.0;
    let times = vec![0.0, third, 47.0 / 24.0];
    let values = vec![glam::Vec3::ONE, glam::Vec3::splat(1.1), glam::Vec3::ONE];
    clip.channels_mut()[1].scale = Some(Track::from_keys(Interpolation::Linear, times, values).unwrap());
    let s = round_trip(clip, false, "24");
    let c = imported_clip(&s);
    assert_eq!(c.frame_rate, 24.0);
    let scales: Vec<_> = c.channels().iter().filter_map(|ch| ch.scale.as_ref()).collect();
    assert_eq!(scales.len(), 1, "the scale track comes back");
    let scale = scales[0];
    assert_eq!(scale.times()[1], third, "the key between frames stays between frames");
}

#[test]
fn marrow_s_own_frame_rate_extras_win_over_the_key_spacing() {
    let sk = mocap_skeleton();
    let mut clip = mocap_like_clip(&sk, "walk", 120, 120.0, 5);
    clip.frame_rate = 25.0;
    let s = round_trip(clip, true, "extras");
    assert_eq!(imported_clip(&s).frame_rate, 25.0);
}
