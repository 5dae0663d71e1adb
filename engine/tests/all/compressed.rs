//! The compressed runtime form (`CompressedClip`): the job's validity table; the promise (the
//! worst shell error, measured here independently of the encoder at four times the key rate, is
//! what the report says and never over the tolerance) on real motion capture, on capture-shaped
//! clips and on random rigs and clips; forward playback, random seeks and a cooked file's
//! round trip sample the same bits; and every hostile cooked file is a named error.

use std::path::Path;

use crate::support;

use glam::{Mat4, Quat, Vec3};
use marrow_engine::bvh::{self, BvhOptions, EndSites};
use marrow_engine::clip::Clip;
use marrow_engine::compressed::cooked::CookedError;
use marrow_engine::compressed::{
    CompressError, CompressOptions, CompressReport, CompressedClip, CompressedContext, CompressedSamplingJob,
};
use marrow_engine::math::Transform;
use marrow_engine::pose::{JobError, LocalToModelJob, SamplingContext, SamplingJob};
use marrow_engine::skeleton::{NO_PARENT, Skeleton};
use marrow_engine::synthetic::{chain_skeleton, dense_clip, mocap_like_clip, mocap_skeleton};
use marrow_engine::track::{Interpolation, Track};
use proptest::prelude::*;

/// The CMU capture (`assets/bvh/README.md`) in metres, end sites dropped: 31 joints, 994
/// frames at 120 Hz.
fn cmu() -> (Skeleton, Clip) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/bvh/cmu_131_01.bvh");
    let scene = bvh::import(&path, &BvhOptions { scale: 0.0254, end_sites: EndSites::Drop }).unwrap();
    (scene.rigs[0].skeleton.clone(), scene.animations[0].clips[0].clip.clone())
}

/// The worst distance between the origin and the three shell vertices (`shell` along each
/// local axis) of every bone as the original clip and the compressed one place it, at every
/// key time of the original and three times evenly between each two (four times the key rate):
/// computed here with the jobs and `Mat4::transform_point3`, not with the encoder's measurement.
fn independent_worst_error(
    sk: &Skeleton,
    clip: &Clip,
    packed: &CompressedClip,
    shell: f32,
) -> (f32, usize, f32) {
    let times = support::four_times_key_rate(clip);
    let n = sk.bone_count();
    let mut sctx = SamplingContext::new(n);
    let mut cctx = CompressedContext::new(n);
    let (mut la, mut lb) = (sk.bind_pose.clone(), sk.bind_pose.clone());
    let (mut ma, mut mb) = (vec![Mat4::IDENTITY; n], vec![Mat4::IDENTITY; n]);
    let mut worst = (0.0f32, 0usize, 0.0f32);
    for &t in &times {
        SamplingJob { clip, bind_pose: &sk.bind_pose, time: t, context: &mut sctx, output: &mut la }
            .run()
            .unwrap();
        CompressedSamplingJob {
            clip: packed,
            bind_pose: &sk.bind_pose,
            time: t,
            context: &mut cctx,
            output: &mut lb,
        }
        .run()
        .unwrap();
        LocalToModelJob { parents: &sk.parents, local: &la, adjusts: &[], output: &mut ma }.run().unwrap();
        LocalToModelJob { parents: &sk.parents, local: &lb, adjusts: &[], output: &mut mb }.run().unwrap();
        for b in 0..n {
            for p in [Vec3::ZERO, Vec3::X * shell, Vec3::Y * shell, Vec3::Z * shell] {
                let e = ma[b].transform_point3(p).distance(mb[b].transform_point3(p));
                if e > worst.0 {
                    worst = (e, b, t);
                }
            }
        }
    }
    worst
}

/// Compresses, then checks the promise: the independent worst error is within rounding of the
/// reported one (the encoder measures those times and more) and never over the tolerance.
fn compress_and_check(sk: &Skeleton, clip: &Clip, tolerance: f32) -> (CompressedClip, CompressReport) {
    let options = CompressOptions::new(tolerance);
    let (packed, report) = CompressedClip::compress(clip, sk, &options).unwrap();
    let (error, bone, time) = independent_worst_error(sk, clip, &packed, options.shell_distance);
    // The same arithmetic up to the order of the shell vertex sums: rounding of the positions.
    let slack = 2e-6 + 1e-5 * tolerance;
    assert!(
        error <= report.max_error + slack,
        "{}: independent worst {error:e} at bone {bone} t={time} passes the reported {:e}",
        clip.name,
        report.max_error
    );
    assert!(
        error <= tolerance + slack,
        "{}: independent worst {error:e} over the tolerance {tolerance:e}",
        clip.name
    );
    assert!(
        report.max_error <= tolerance,
        "{}: reported {:e} over {tolerance:e}",
        clip.name,
        report.max_error
    );
    (packed, report)
}

/// Samples `packed` at `times` in that order with one context: every bone's bits.
fn sample_bits(sk: &Skeleton, packed: &CompressedClip, times: &[f32]) -> Vec<[u32; 10]> {
    let n = sk.bone_count();
    let mut ctx = CompressedContext::new(n);
    let mut out = sk.bind_pose.clone();
    let mut all = Vec::new();
    for &t in times {
        CompressedSamplingJob {
            clip: packed,
            bind_pose: &sk.bind_pose,
            time: t,
            context: &mut ctx,
            output: &mut out,
        }
        .run()
        .unwrap();
        for x in &out {
            let (a, b, c) = (x.translation.to_array(), x.rotation.to_array(), x.scale.to_array());
            all.push([a[0], a[1], a[2], b[0], b[1], b[2], b[3], c[0], c[1], c[2]].map(f32::to_bits));
        }
    }
    all
}

#[test]
fn the_compressed_sampling_job_names_every_input_that_does_not_fit() {
    let sk = chain_skeleton(4);
    let clip = dense_clip(&sk, "c", 1.0, 30.0, 0);
    let (packed, _) = CompressedClip::compress(&clip, &sk, &CompressOptions::default()).unwrap();
    let run = |bind: &[Transform], outputs: usize, capacity: usize, time: f32| {
        let mut out = vec![Transform::IDENTITY; outputs];
        let mut context = CompressedContext::new(capacity);
        CompressedSamplingJob {
            clip: &packed,
            bind_pose: bind,
            time,
            context: &mut context,
            output: &mut out,
        }
        .run()
    };
    assert_eq!(run(&sk.bind_pose, 4, 4, 0.5), Ok(()));
    let e = run(&sk.bind_pose[..3], 4, 4, 0.5).unwrap_err();
    assert!(matches!(e, JobError::InputLength { expected: 4, got: 3, .. }), "bind pose of 3: {e}");
    let e = run(&sk.bind_pose, 3, 4, 0.5).unwrap_err();
    assert!(matches!(e, JobError::OutputTooSmall { needed: 4, got: 3, .. }), "output of 3: {e}");
    let e = run(&sk.bind_pose, 4, 3, 0.5).unwrap_err();
    assert!(matches!(e, JobError::ContextTooSmall { bones: 4, capacity: 3, .. }), "context for 3: {e}");
    for t in [f32::NAN, f32::INFINITY] {
        let e = run(&sk.bind_pose, 4, 4, t).unwrap_err();
        assert!(matches!(e, JobError::NonFiniteTime(_)), "time {t}: {e}");
    }
}

#[test]
fn compression_refuses_bad_options_and_a_clip_for_another_rig_with_named_errors() {
    let sk = chain_skeleton(4);
    let clip = dense_clip(&sk, "c", 1.0, 30.0, 0);
    for (options, name) in [
        (CompressOptions { tolerance: f32::NAN, shell_distance: 0.03 }, "tolerance"),
        (CompressOptions { tolerance: 1e-4, shell_distance: -1.0 }, "shell distance"),
    ] {
        match CompressedClip::compress(&clip, &sk, &options) {
            Err(CompressError::BadOption { option, .. }) => assert_eq!(option, name),
            other => panic!("{name}: {other:?}"),
        }
    }
    let other = chain_skeleton(6);
    let e = CompressedClip::compress(&clip, &other, &CompressOptions::default()).unwrap_err();
    assert!(matches!(e, CompressError::Fault(_)), "{e}");
}

/// The goal's data (real motion capture at ACL's default error, 0.01 cm at a 3 cm shell): the
/// promise holds, checked independently at four times the key rate, and the size is stated.
#[test]
fn real_motion_capture_compresses_within_the_tolerance_it_was_given() {
    let (sk, clip) = cmu();
    for tolerance in [1e-4, 4.95e-4, 1e-3] {
        let (packed, r) = compress_and_check(&sk, &clip, tolerance);
        eprintln!(
            "cmu_131_01 at {tolerance:e}: {} bytes of {} raw ({:.2}:1), worst {:e} at {:?} t={}, {} default / {} constant / {} animated tracks, {} uniform / {} keyed / {} raw segments, {:.2} mean bits, {} passes",
            r.bytes,
            r.raw_bytes,
            r.ratio(),
            r.max_error,
            r.worst_bone.map(|b| &sk.bone_names[b]),
            r.worst_time,
            r.default_tracks,
            r.constant_tracks,
            r.animated_tracks,
            r.uniform_segments,
            r.keyed_segments,
            r.raw_segments,
            r.mean_bits,
            r.passes
        );
        assert_eq!(r.frames, 994, "the capture's own 120 Hz frames");
        assert_eq!(packed.frame_count(), 994);
        assert!(r.ratio() > 8.0, "at {tolerance:e}: {:.2}:1", r.ratio());
    }
}

#[test]
fn capture_shaped_clips_keep_the_promise_at_every_tolerance() {
    let sk = mocap_skeleton();
    let clip = mocap_like_clip(&sk, "walk", 240, 120.0, 7);
    let mut last = usize::MAX;
    for tolerance in [1e-5, 1e-4, 1e-3, 1e-2] {
        let (_, r) = compress_and_check(&sk, &clip, tolerance);
        assert!(r.bytes <= last, "bytes grow as the tolerance grows: {} after {last}", r.bytes);
        last = r.bytes;
    }
}

/// A random rig (parents before children, offsets up to 30 cm, some zero-length joints) and
/// clip (translation, rotation and scale tracks with their own key times, capture-like noise,
/// rotations near half turns between keys, some constant and some held tracks).
fn random_rig_and_clip(bones: usize, seed: u64) -> (Skeleton, Clip) {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut rnd = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 40) as f32 / (1u64 << 24) as f32
    };
    let mut list = Vec::new();
    for b in 0..bones {
        let parent = if b == 0 { NO_PARENT } else { (rnd() * b as f32) as u16 };
        let offset = if rnd() < 0.2 { Vec3::ZERO } else { Vec3::new(rnd() - 0.5, rnd(), rnd() - 0.5) * 0.3 };
        list.push((format!("b{b}"), parent, Transform::from_translation(offset)));
    }
    let sk = Skeleton::from_bind_pose("random", list).unwrap();
    let mut clip = Clip::new("random", &sk);
    let hz = [24.0, 30.0, 60.0, 120.0][(rnd() * 4.0) as usize % 4];
    let frames = 20 + (rnd() * 60.0) as usize;
    for (b, ch) in clip.channels_mut().iter_mut().enumerate() {
        let times: Vec<f32> = (0..frames).map(|k| k as f32 / hz).collect();
        let kind = rnd();
        let (w, amp, noise) = (1.0 + rnd() * 6.0, rnd() * 1.5, rnd() * 0.01);
        if kind < 0.15 {
            continue;
        }
        let q: Vec<Quat> = times
            .iter()
            .map(|&t| {
                let big = if kind > 0.9 { 2.9 } else { 1.0 };
                Quat::from_euler(
                    glam::EulerRot::ZYX,
                    big * amp * (w * t).sin() + noise * (rnd() - 0.5),
                    amp * 0.3 * (w * t * 0.7).cos() + noise * (rnd() - 0.5),
                    noise * (rnd() - 0.5),
                )
            })
            .collect();
        ch.rotation = Track::from_keys(Interpolation::Linear, times.clone(), q).ok();
        if rnd() < 0.3 {
            let tt: Vec<f32> = times.iter().step_by(2).copied().collect();
            let v = tt
                .iter()
                .map(|&t| sk.bind_pose[b].translation + Vec3::new((w * t).sin(), 0.0, t) * 0.05)
                .collect();
            ch.translation = Track::from_keys(Interpolation::Linear, tt, v).ok();
        }
        if rnd() < 0.15 {
            let v = times.iter().map(|&t| Vec3::splat(1.0 + 0.2 * (w * t).sin())).collect();
            ch.scale = Track::from_keys(Interpolation::Linear, times.clone(), v).ok();
        } else if rnd() < 0.1 {
            ch.scale = Track::from_keys(Interpolation::Linear, vec![0.0], vec![Vec3::splat(1.0)]).ok();
        }
    }
    if clip.key_count() == 0 {
        clip.channels_mut()[0].rotation =
            Track::from_keys(Interpolation::Linear, vec![0.0], vec![Quat::IDENTITY]).ok();
    }
    (sk, clip)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// The promise over random rigs and clips: the reported worst error is the true one (within
    /// rounding of the independent measurement at four times the key rate) and never over the
    /// tolerance.
    #[test]
    fn the_reported_worst_error_is_the_true_one_and_within_the_tolerance(
        bones in 2usize..24,
        seed in any::<u64>(),
        tol in prop::sample::select(vec![1e-4f32, 1e-3, 1e-2]),
    ) {
        let (sk, clip) = random_rig_and_clip(bones, seed);
        compress_and_check(&sk, &clip, tol);
    }
}

#[test]
fn forward_playback_random_seeks_and_a_cooked_round_trip_sample_the_same_bits() {
    let sk = mocap_skeleton();
    let clip = mocap_like_clip(&sk, "walk", 200, 120.0, 3);
    let (packed, _) = CompressedClip::compress(&clip, &sk, &CompressOptions::default()).unwrap();
    let forward: Vec<f32> = (0..400).map(|k| k as f32 / 240.0).collect();
    let mut shuffled = forward.clone();
    // A fixed scramble: every 37th time, wrapping.
    for (i, t) in forward.iter().enumerate() {
        shuffled[(i * 37) % forward.len()] = *t;
    }
    let a = sample_bits(&sk, &packed, &forward);
    let per_time: Vec<Vec<[u32; 10]>> = forward.iter().map(|&t| sample_bits(&sk, &packed, &[t])).collect();
    let b = sample_bits(&sk, &packed, &shuffled);
    let n = sk.bone_count();
    for (i, t) in forward.iter().enumerate() {
        assert_eq!(a[i * n..(i + 1) * n], per_time[i][..], "forward vs fresh at t={t}");
        let j = (i * 37) % forward.len();
        assert_eq!(b[j * n..(j + 1) * n], per_time[i][..], "seek vs fresh at t={t}");
    }
    let cooked = packed.to_cooked();
    let back = CompressedClip::from_cooked(&cooked).unwrap();
    assert_eq!(back.to_cooked(), cooked, "the file reads back to the same bytes");
    assert_eq!(sample_bits(&sk, &back, &forward), a, "the loaded clip samples the same bits");
    assert_eq!(back.bone_names, sk.bone_names);
    assert_eq!(back.frame_count(), packed.frame_count());
}

#[test]
fn a_clip_held_in_the_bind_pose_stores_nothing_and_plays_the_bind_pose() {
    let sk = mocap_skeleton();
    let mut clip = Clip::new("still", &sk);
    for (b, ch) in clip.channels_mut().iter_mut().enumerate() {
        let times = vec![0.0, 0.5, 1.0];
        ch.rotation = Track::from_keys(Interpolation::Linear, times, vec![sk.bind_pose[b].rotation; 3]).ok();
    }
    let (packed, r) = CompressedClip::compress(&clip, &sk, &CompressOptions::default()).unwrap();
    assert_eq!((r.animated_tracks, r.constant_tracks), (0, 0), "{r:?}");
    assert_eq!(r.max_error, 0.0);
    let bits = sample_bits(&sk, &packed, &[0.3]);
    let bind = sample_bits(&sk, &packed, &[0.0]);
    assert_eq!(bits, bind);
}

/// Rewrites a cooked file's checksum so a mutation reaches the payload checks.
fn reseal(bytes: &mut [u8]) {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for &b in &bytes[32..] {
        h ^= b as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    }
    bytes[24..32].copy_from_slice(&h.to_le_bytes());
}

#[test]
fn hostile_cooked_files_are_named_errors_never_a_panic() {
    let sk = mocap_skeleton();
    let clip = mocap_like_clip(&sk, "walk", 120, 120.0, 5);
    let (packed, _) = CompressedClip::compress(&clip, &sk, &CompressOptions::new(1e-3)).unwrap();
    let good = packed.to_cooked();
    // Every truncation.
    for len in 0..good.len() {
        let e = CompressedClip::from_cooked(&good[..len]).expect_err("truncated");
        assert!(
            matches!(e, CookedError::Truncated { .. } | CookedError::Magic { .. }),
            "truncated to {len}: {e}"
        );
    }
    // A damaged payload byte: the checksum names it.
    let mut bad = good.clone();
    let last = bad.len() - 1;
    bad[last] ^= 0x40;
    assert!(matches!(CompressedClip::from_cooked(&bad), Err(CookedError::Checksum { .. })));
    // A future version, the other byte order, another file.
    let mut future = good.clone();
    future[8..12].copy_from_slice(&2u32.to_le_bytes());
    assert!(matches!(CompressedClip::from_cooked(&future), Err(CookedError::Version { found: 2 })));
    let mut swapped = good.clone();
    swapped[12..16].copy_from_slice(&0x0A0B_0C0Du32.to_be_bytes());
    assert!(matches!(CompressedClip::from_cooked(&swapped), Err(CookedError::ByteOrder { .. })));
    assert!(matches!(
        CompressedClip::from_cooked(b"glTF\x02\0\0\0 not a clip at all......."),
        Err(CookedError::Magic { .. })
    ));
    // Counts that overflow: the bone count (after the two names) set to u32::MAX, resealed.
    let names = 4 + packed.name.len() + 4 + packed.skeleton.len();
    let mut huge = good.clone();
    huge[32 + names..32 + names + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    reseal(&mut huge);
    let e = CompressedClip::from_cooked(&huge).unwrap_err();
    assert!(matches!(e, CookedError::Truncated { what: "bone names", .. }), "{e}");
    // More tracks than the bones hold (a second rotation track for bone 0), resealed.
    let sk2 = chain_skeleton(2);
    let mut two = Clip::new("two", &sk2);
    for ch in two.channels_mut() {
        ch.rotation = Track::from_keys(
            Interpolation::Linear,
            vec![0.0, 1.0],
            vec![Quat::IDENTITY, Quat::from_rotation_z(1.0)],
        )
        .ok();
    }
    let (p2, _) = CompressedClip::compress(&two, &sk2, &CompressOptions::default()).unwrap();
    assert_eq!(p2.animated_tracks().len(), 2);
    let mut dup = p2.to_cooked();
    // The second track's bone (after the names, the clip fields and the track count) set to 0.
    let at = 32
        + 4
        + 3
        + 4
        + sk2.name.len()
        + 4
        + sk2.bone_names.iter().map(|b| 4 + b.len()).sum::<usize>()
        + 20
        + 4
        + 4
        + 28;
    assert_eq!(dup[at..at + 2], 1u16.to_le_bytes());
    dup[at..at + 2].copy_from_slice(&0u16.to_le_bytes());
    reseal(&mut dup);
    let e = CompressedClip::from_cooked(&dup).unwrap_err();
    assert!(e.to_string().contains("a second rotation track for bone 0"), "{e}");
    // A declared payload past the file.
    let mut long = good.clone();
    long[16..24].copy_from_slice(&u64::MAX.to_le_bytes());
    assert!(matches!(
        CompressedClip::from_cooked(&long),
        Err(CookedError::Truncated { what: "payload", .. })
    ));
    // Every single-byte change of the payload, resealed: refused with a named error, or loaded
    // and sampled finite at every frame.
    let times: Vec<f32> = (0..60).map(|k| k as f32 / 60.0).collect();
    let (mut refused, mut loaded) = (0, 0);
    for at in 32..good.len() {
        for flip in [0x01u8, 0x80, 0xFF] {
            let mut m = good.clone();
            m[at] ^= flip;
            reseal(&mut m);
            match CompressedClip::from_cooked(&m) {
                Err(e) => {
                    assert!(!e.to_string().is_empty());
                    refused += 1;
                }
                Ok(c) => {
                    loaded += 1;
                    let n = c.bone_count();
                    let bind = vec![Transform::IDENTITY; n];
                    let mut ctx = CompressedContext::new(n);
                    let mut out = bind.clone();
                    for &t in &times {
                        CompressedSamplingJob {
                            clip: &c,
                            bind_pose: &bind,
                            time: t,
                            context: &mut ctx,
                            output: &mut out,
                        }
                        .run()
                        .unwrap();
                        assert!(
                            out.iter().all(Transform::is_finite),
                            "byte {at} ^ {flip:#x} loaded and sampled non-finite"
                        );
                    }
                }
            }
        }
    }
    assert!(refused > 0 && loaded > 0, "refused {refused}, loaded {loaded}");
}

/// Writes the cooked clip the fuzz corpus and its regressions start from
/// (`fuzz/regressions/cooked_clip/sound-walk.clip.bin`) when `MARROW_BLESS=1`; otherwise checks
/// the committed one loads and names the capture-shaped rig it was cooked for.
#[test]
fn the_cooked_seed_file_loads() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions/cooked_clip/sound-walk.clip.bin");
    if std::env::var_os("MARROW_BLESS").is_some() {
        let sk = mocap_skeleton();
        let clip = mocap_like_clip(&sk, "walk", 40, 120.0, 9);
        let (packed, _) = CompressedClip::compress(&clip, &sk, &CompressOptions::new(1e-3)).unwrap();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, packed.to_cooked()).unwrap();
    }
    let clip = CompressedClip::from_cooked(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!((clip.name.as_str(), clip.skeleton.as_str(), clip.frame_count()), ("walk", "cmu31", 40));
}

/// A capture whose frame time is a 7-digit 1/120 s, with one frame's keys replaced by those of
/// ten frames earlier and moved 3.3 us off their frame (what a ten-frame key drag in the editor
/// leaves): the grid keeps that frame's exact time, and the promise holds at 0.01 cm.
#[test]
fn a_key_moved_off_the_captures_grid_keeps_its_time_and_the_promise() {
    let sk = mocap_skeleton();
    let mut clip = mocap_like_clip(&sk, "capture", 300, 1.0 / 0.008333, 131);
    let moved = 100.0 * 0.008333 + 10.0 / 120.0;
    for ch in clip.channels_mut() {
        if let Some(r) = &ch.rotation {
            let (mut t, mut v) = (r.times().to_vec(), r.values().to_vec());
            (t[110], v[110]) = (moved, v[100]);
            ch.rotation = Track::from_keys(Interpolation::Linear, t, v).ok();
        }
        if let Some(r) = &ch.translation {
            let (mut t, mut v) = (r.times().to_vec(), r.values().to_vec());
            (t[110], v[110]) = (moved, v[100]);
            ch.translation = Track::from_keys(Interpolation::Linear, t, v).ok();
        }
    }
    let (packed, r) = compress_and_check(&sk, &clip, 1e-4);
    assert_eq!(r.frames, 300);
    assert_eq!(packed.frame_time(110), moved, "the moved keys' time kept");
    assert!((packed.frame_time(111) - 111.0 * 0.008333).abs() < 1e-6);
    let back = CompressedClip::from_cooked(&packed.to_cooked()).unwrap();
    assert_eq!(back.frame_time(110), packed.frame_time(110));
}

/// The capture of the test above with one frame's keys (every track's) replaced by those of
/// another frame, `off` frames past the captures' grid: 0.0015 frames is what pasting a frame's
/// keys at a playhead on true 1/120 s frames leaves in a capture whose key times are 7-digit
/// 1/120 s (found in the editor: the clip could not be compressed at all, "no grid up to 960 Hz"),
/// 0.3 and -0.45 frames a key dragged with snapping off. The grid stays the capture's 120 Hz,
/// that frame keeps the pasted keys' exact time, and the promise holds at 0.01 cm.
#[test]
fn keys_pasted_between_the_captures_frames_keep_their_time_and_the_promise() {
    let sk = mocap_skeleton();
    let base = mocap_like_clip(&sk, "capture", 300, 1.0 / 0.008333, 131);
    for off in [0.0015f32, 0.3, -0.45] {
        let mut clip = base.clone();
        let pasted = (120.0 + off) * 0.008333;
        fn replace<T: marrow_engine::track::Animatable>(track: &Track<T>, at: f32) -> Track<T> {
            let (mut t, mut v) = (track.times().to_vec(), track.values().to_vec());
            (t[120], v[120]) = (at, v[40]);
            Track::from_keys(Interpolation::Linear, t, v).unwrap()
        }
        for ch in clip.channels_mut() {
            ch.rotation = ch.rotation.as_ref().map(|r| replace(r, pasted));
            ch.translation = ch.translation.as_ref().map(|r| replace(r, pasted));
        }
        let (packed, r) = compress_and_check(&sk, &clip, 1e-4);
        assert_eq!((r.frames, r.rate.round()), (300, 120.0), "{off} frames off: the capture's grid kept");
        assert_eq!(packed.frame_time(120), pasted, "{off} frames off: the pasted keys' time kept");
        for f in [119, 121] {
            assert!((packed.frame_time(f) - f as f32 * 0.008333).abs() < 1e-6, "{off}: frame {f}");
        }
        let back = CompressedClip::from_cooked(&packed.to_cooked()).unwrap();
        assert_eq!(
            sample_bits(&sk, &back, &[pasted, 1.0, pasted - 0.004]),
            sample_bits(&sk, &packed, &[pasted, 1.0, pasted - 0.004])
        );
    }
}
