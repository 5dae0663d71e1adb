//! Crowds from baked poses: the bake job's validity table, then the per-instance rule against
//! direct sampling (the interpolation error, measured and falling as frames per clip rise), the
//! loop seam, phases, clamped ends, bounds and placement.

use crate::support;

use std::sync::Arc;

use glam::{Mat4, Vec3};
use marrow_engine::clip::Clip;
use marrow_engine::crowd::layout::{Layout, place};
use marrow_engine::crowd::{BakeError, BakeJob, BakedPoses, bone_boxes, frame_pair};
use marrow_engine::pose::{LocalToModelJob, PaletteJob, SamplingContext, SamplingJob};
use marrow_engine::skeleton::Skeleton;
use marrow_engine::synthetic::{chain_skeleton, dense_clip};

/// The palette of `clip` sampled directly at `time`.
fn direct(sk: &Skeleton, clip: &Clip, time: f32) -> Vec<Mat4> {
    let n = sk.bone_count();
    let mut local = sk.bind_pose.clone();
    SamplingJob {
        clip,
        bind_pose: &sk.bind_pose,
        time,
        context: &mut SamplingContext::new(n),
        output: &mut local,
    }
    .run()
    .unwrap();
    let mut model = vec![Mat4::IDENTITY; n];
    LocalToModelJob { parents: &sk.parents, local: &local, adjusts: &[], output: &mut model }.run().unwrap();
    let mut palette = vec![Mat4::IDENTITY; n];
    PaletteJob { model: &model, inverse_bind: &sk.inverse_bind, output: &mut palette }.run().unwrap();
    palette
}

/// Largest distance between where the two palettes put each bone's bind origin.
fn origin_error(sk: &Skeleton, a: &[Mat4], b: &[Mat4]) -> f32 {
    sk.inverse_bind
        .iter()
        .zip(a.iter().zip(b))
        .map(|(ib, (x, y))| {
            let o = ib.inverse().w_axis.truncate();
            x.transform_point3(o).distance(y.transform_point3(o))
        })
        .fold(0.0, f32::max)
}

#[test]
fn bake_job_validity_table() {
    let sk = chain_skeleton(16);
    let other = chain_skeleton(8);
    let walk = dense_clip(&sk, "walk", 1.0, 30.0, 0);
    let mut clamped = walk.clone();
    clamped.looping = false;
    let foreign = dense_clip(&other, "foreign", 1.0, 30.0, 0);
    let cases: Vec<(&str, Vec<&Clip>, u32, Option<&str>)> = vec![
        ("sound", vec![&walk], 30, None),
        ("no clips", vec![], 30, Some("no clip to bake")),
        ("zero frames", vec![&walk], 0, Some("0 frames per clip")),
        ("one frame of a clamped clip", vec![&clamped], 1, Some("1 frames per clip")),
        ("one frame of a looping clip", vec![&walk], 1, None),
        ("too many frames", vec![&walk], 5000, Some("at most 4096")),
        ("another rig", vec![&walk, &foreign], 30, Some("clip \"foreign\" animates skeleton")),
    ];
    for (name, clips, frames, expect) in cases {
        let job = BakeJob { skeleton: &sk, clips: &clips, frames };
        match (job.validate(), expect) {
            (Ok(()), None) => {}
            (Err(e), Some(text)) => assert!(e.to_string().contains(text), "{name}: {e}"),
            (got, want) => panic!("{name}: got {got:?}, want {want:?}"),
        }
    }
    assert!(matches!(BakeJob { skeleton: &sk, clips: &[], frames: 4 }.run(), Err(BakeError::NoClips)));
}

#[test]
fn the_table_is_clips_by_frames_by_bones_and_exact_at_frame_times() {
    let sk = chain_skeleton(64);
    let clips = [dense_clip(&sk, "a", 2.0, 30.0, 0), dense_clip(&sk, "b", 1.5, 30.0, 1)];
    let refs: Vec<&Clip> = clips.iter().collect();
    let baked = BakeJob { skeleton: &sk, clips: &refs, frames: 60 }.run().unwrap();
    assert_eq!(baked.bones, 64);
    assert_eq!(baked.matrices.len(), 2 * 60 * 64);
    assert_eq!(baked.bytes(), 2 * 60 * 64 * 48);
    assert_eq!((baked.clips[1].offset, baked.clips[1].frames), (60 * 64, 60));
    // At a frame's own time the rule picks that frame alone: the palette equals direct sampling.
    let d = baked.clips[1].duration;
    let mut out = vec![Mat4::IDENTITY; 64];
    for f in [0u32, 7, 59] {
        let t = d * f as f32 / 60.0;
        assert!(baked.palette_at(1, t, 0.0, 1.0, &mut out));
        let want = direct(&sk, &clips[1], t);
        assert!(origin_error(&sk, &out, &want) < 1e-5, "frame {f}");
    }
}

#[test]
fn the_cpu_reference_is_within_the_interpolation_error_which_falls_as_frames_rise() {
    // A smooth source (keyed at 240 Hz) so the error measured is the bake's, not the source's.
    let sk = chain_skeleton(64);
    let clip = dense_clip(&sk, "smooth", 2.0, 240.0, 0);
    let extent = 0.1 * 8.0; // the rig's chains are 8 bones of 0.1
    let mut last = f32::INFINITY;
    let mut errors = Vec::new();
    for frames in [8u32, 16, 32, 64, 128] {
        let baked = BakeJob { skeleton: &sk, clips: &[&clip], frames }.run().unwrap();
        let mut out = vec![Mat4::IDENTITY; 64];
        let mut worst = 0.0f32;
        for k in 0..200 {
            let t = k as f32 * 0.01;
            assert!(baked.palette_at(0, t, 0.0, 1.0, &mut out));
            worst = worst.max(origin_error(&sk, &out, &direct(&sk, &clip, t)));
        }
        errors.push((frames, worst));
        assert!(worst < last * 0.5, "{frames} frames: {worst} (fewer frames: {last})");
        last = worst;
    }
    eprintln!("crowd bake error, synthetic (max bone-origin distance, chain length {extent}): {errors:?}");
    // The stated bound for this deliberately violent motion (every bone swinging +-0.6 rad per
    // cycle down 8-bone chains): at 32 frames per second of clip, under 1% of a chain's length.
    let at_64 = errors.iter().find(|(f, _)| *f == 64).unwrap().1;
    assert!(at_64 < 0.01 * extent, "{at_64}");
}

#[test]
fn cesium_mans_walk_baked_at_30_frames_a_second_is_within_half_a_percent_of_its_height() {
    let scene = marrow_engine::gltf::import(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/gltf/CesiumMan/CesiumMan.glb"),
    )
    .unwrap();
    let sk = &scene.rigs[0].skeleton;
    let clip = &scene.animations[0].clips[0].clip;
    let height = 1.5; // CesiumMan stands about 1.5 units tall
    let mut errors = Vec::new();
    for fps in [10.0f32, 30.0, 60.0] {
        let frames = (clip.duration() * fps).round() as u32;
        let baked = BakeJob { skeleton: sk, clips: &[clip], frames }.run().unwrap();
        let mut out = vec![Mat4::IDENTITY; sk.bone_count()];
        let mut worst = 0.0f32;
        for k in 0..300 {
            let t = k as f32 * clip.duration() / 300.0;
            baked.palette_at(0, t, 0.0, 1.0, &mut out);
            worst = worst.max(origin_error(sk, &out, &direct(sk, clip, t)));
        }
        errors.push((fps, worst));
    }
    eprintln!("crowd bake error, CesiumMan walk (max bone-origin distance, height {height}): {errors:?}");
    // Measured: 29 mm at 10 fps, 5.6 mm at 30, 3.5 mm at 60 (the walk is itself keyed linearly,
    // so frames between its keys stop paying off sooner than on a smooth curve).
    assert!(errors[1].1 < 0.005 * height, "30 fps: {:?}", errors[1]);
    assert!(errors[2].1 <= errors[1].1 && errors[1].1 < errors[0].1, "{errors:?}");
}

#[test]
fn a_looping_clip_at_phase_0_999_blends_into_frame_0() {
    let sk = chain_skeleton(16);
    let clip = dense_clip(&sk, "walk", 1.0, 30.0, 0);
    let baked = BakeJob { skeleton: &sk, clips: &[&clip], frames: 30 }.run().unwrap();
    let (f0, f1, t) = frame_pair(&baked.clips[0], 0.0, 0.999, 1.0);
    assert_eq!((f0, f1), (29, 0), "the last frame blends into the first");
    assert!((t - 0.97).abs() < 1e-3, "{t}");
    // Almost all the way round, the palette is frame 0's.
    let mut out = vec![Mat4::IDENTITY; 16];
    baked.palette_at(0, 0.0, 0.99999, 1.0, &mut out);
    let frame0 = direct(&sk, &clip, 0.0);
    assert!(origin_error(&sk, &out, &frame0) < 1e-4);
    // Time wraps the same way: one whole lap later is where it started.
    let mut lap = vec![Mat4::IDENTITY; 16];
    baked.palette_at(0, 1.0, 0.25, 1.0, &mut lap);
    baked.palette_at(0, 0.0, 0.25, 1.0, &mut out);
    assert!(origin_error(&sk, &out, &lap) < 1e-4);
}

#[test]
fn two_instances_with_different_phases_differ_and_a_clamped_clip_holds_its_end() {
    let sk = chain_skeleton(16);
    let mut clip = dense_clip(&sk, "once", 1.0, 30.0, 0);
    clip.looping = false;
    let baked = BakeJob { skeleton: &sk, clips: &[&clip], frames: 31 }.run().unwrap();
    let (mut a, mut b) = (vec![Mat4::IDENTITY; 16], vec![Mat4::IDENTITY; 16]);
    baked.palette_at(0, 0.2, 0.0, 1.0, &mut a);
    baked.palette_at(0, 0.2, 0.3, 1.0, &mut b);
    assert!(origin_error(&sk, &a, &b) > 1e-3, "different phases, different poses");
    // Past the end: the last frame, exactly the clip's end.
    assert_eq!(frame_pair(&baked.clips[0], 5.0, 0.5, 1.0), (29, 30, 1.0));
    baked.palette_at(0, 5.0, 0.5, 1.0, &mut a);
    assert!(origin_error(&sk, &a, &direct(&sk, &clip, 1.0)) < 1e-5);
    // Speed scales time; a negative speed plays backwards into the start, held.
    assert_eq!(frame_pair(&baked.clips[0], 2.0, 0.0, -1.0), (0, 1, 0.0));
}

#[test]
fn baked_bounds_hold_every_vertex_at_every_time() {
    let scene = marrow_engine::gltf::import(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/gltf/CesiumMan/CesiumMan.glb"),
    )
    .unwrap();
    let rig = &scene.rigs[0];
    let b = &rig.bindings[0];
    let prim = &scene.meshes[b.mesh].primitives[0];
    let skin = prim.skin.as_ref().unwrap();
    let joints = skin.joints_to_bones(&rig.joint_to_bone);
    let sk = &rig.skeleton;
    let clip: Arc<Clip> = Arc::new(scene.animations[0].clips[0].clip.clone());
    let baked: BakedPoses = BakeJob { skeleton: sk, clips: &[&clip], frames: 24 }.run().unwrap();
    let boxes = bone_boxes(sk.bone_count(), &prim.positions, &joints, &skin.weights);
    let bounds = baked.bounds(&boxes).unwrap();
    let mut palette = vec![Mat4::IDENTITY; sk.bone_count()];
    for k in 0..40 {
        baked.palette_at(0, k as f32 * 0.0537, 0.1, 1.0, &mut palette);
        for (i, p) in prim.positions.iter().enumerate().step_by(7) {
            let (j, w) = (joints[i], skin.weights[i]);
            let m = (0..4).fold(Mat4::ZERO, |acc, k| acc + palette[j[k] as usize] * w[k]);
            let q = m.transform_point3(Vec3::from(*p));
            assert!(
                q.cmpge(bounds.min - 1e-4).all() && q.cmple(bounds.max + 1e-4).all(),
                "vertex {i} at step {k}: {q} outside {bounds:?}"
            );
        }
    }
}

#[test]
fn placement_deals_clips_spreads_phases_and_lays_a_grid() {
    let p = place(9, 2, Layout::Grid { spacing: 2.0 }, (0.8, 1.2), 5);
    assert_eq!(p.len(), 9);
    assert_eq!(p.iter().map(|x| x.clip).collect::<Vec<_>>(), [0, 1, 0, 1, 0, 1, 0, 1, 0]);
    let xs: Vec<f32> = p.iter().map(|x| x.world.w_axis.x).collect();
    assert_eq!(&xs[..3], &[-2.0, 0.0, 2.0]);
    let mut phases: Vec<f32> = p.iter().map(|x| x.phase).collect();
    phases.sort_by(f32::total_cmp);
    assert!(phases.windows(2).all(|w| w[1] - w[0] > 0.02), "no two in step: {phases:?}");
    assert!(p.iter().all(|x| (0.8..=1.2).contains(&x.speed)));
    let s = place(100, 3, Layout::Scattered { extent: 10.0 }, (1.0, 1.0), 9);
    assert!(s.iter().all(|x| x.world.w_axis.x.abs() <= 5.0 && x.world.w_axis.z.abs() <= 5.0));
    assert_eq!(s, place(100, 3, Layout::Scattered { extent: 10.0 }, (1.0, 1.0), 9), "seeded");
}

// ---- The Crowd component: World, project check, scene file ----

mod component {
    use std::path::PathBuf;

    use marrow_engine::project::{Library, Project, check_project_files};

    fn dir() -> PathBuf {
        super::support::project_dir("crowd")
    }

    fn files(scene: impl Fn(String) -> String) -> Vec<(String, String)> {
        super::support::one_scene_files("crowd", scene)
    }

    #[test]
    fn the_crowd_sample_bakes_on_instantiate_plays_on_its_clock_and_saves_only_what_was_authored() {
        let p = Project::load(&dir()).unwrap();
        let lib = Library::load(&p, &dir()).unwrap();
        let mut w = lib.instantiate(&p, "scenes/main.scene.ron").unwrap();
        let e = w.find("Crowd").unwrap();
        let c = w.crowd(e).unwrap();
        assert_eq!(c.placements.len(), 400);
        assert_eq!((c.baked.clips.len(), c.baked.clips[0].frames, c.baked.bones), (1, 60, 19));
        assert!(c.placements.iter().all(|p| (0.6..=1.4).contains(&p.speed)));
        let version = c.version;
        w.frame(3, 0.25);
        assert_eq!(w.crowd(e).unwrap().time, 0.75, "the clock advances by the ticks");
        w.frame(0, 0.25);
        assert_eq!(w.crowd(e).unwrap().time, 0.75, "a paused frame holds it");
        assert_eq!(w.crowd(e).unwrap().version, version, "playing never re-bakes");
        // Saved: the authored crowd, no table, no clock.
        let saved = w.to_desc();
        let authored = p.scenes["scenes/main.scene.ron"].entities[1].crowd.clone();
        assert_eq!(saved.entities[1].crowd, authored);
        assert!(w.faults().entries().is_empty());
    }

    #[test]
    fn crowd_faults_are_named_with_their_entity_and_field() {
        let cases: [(&str, &str, &str); 5] = [
            ("#Cesium_Man\"", "#Nobody\"", "crowd.mesh"),
            ("#animation0\"", "#animation9\"", "crowd.clips"),
            ("frames: 60", "frames: 0", "crowd.frames"),
            ("count: 400", "count: 2000000", "crowd.count"),
            ("spacing: 1.4", "spacing: -1.0", "crowd.layout"),
        ];
        for (from, to, field) in cases {
            let broken = files(|s| s.replacen(from, to, 1));
            let report = check_project_files(&dir(), &broken);
            assert_eq!(report.errors.len(), 1, "{to}: {:?}", report.errors);
            let e = report.errors[0].to_string();
            assert!(e.contains("Crowd") && e.contains(field), "{to}: {e}");
        }
        assert!(check_project_files(&dir(), &files(|s| s)).errors.is_empty());
    }
}
