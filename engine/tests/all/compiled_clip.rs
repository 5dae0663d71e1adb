//! The compiled form of a clip (key blocks of tracks sharing key times, sampled four bones at a
//! time) must sample exactly what the authored tracks say: translations and scales bit for bit,
//! rotations to rounding, held ends and too-short segments exactly, missing channels from the bind
//! pose. It is derived: editing the channels rebuilds it.

use glam::{Quat, Vec3};
use marrow_engine::clip::{BoneChannels, Clip};
use marrow_engine::easing::{Ease, Easing};
use marrow_engine::math::Transform;
use marrow_engine::pose::{SamplingContext, SamplingJob};
use marrow_engine::skeleton::Skeleton;
use marrow_engine::synthetic::{chain_skeleton, dense_clip};
use marrow_engine::track::{Interpolation, Track};

use crate::support;

/// The pose the authored tracks give at `time`, channel by channel ([`Track::sample`]), with the
/// bind pose for missing channels: the reference the compiled sampler must reproduce.
fn reference(sk: &Skeleton, clip: &Clip, time: f32) -> Vec<Transform> {
    clip.channels()
        .iter()
        .zip(&sk.bind_pose)
        .map(|(ch, bind)| Transform {
            translation: ch.translation.as_ref().and_then(|t| t.sample(time)).unwrap_or(bind.translation),
            rotation: ch.rotation.as_ref().and_then(|t| t.sample(time)).unwrap_or(bind.rotation),
            scale: ch.scale.as_ref().and_then(|t| t.sample(time)).unwrap_or(bind.scale),
        })
        .collect()
}

/// Readies the head for the clip (as players do when it starts playing: compiled, stream slots
/// sized; a no-op once done) and samples it.
fn run(sk: &Skeleton, clip: &Clip, time: f32, ctx: &mut SamplingContext, out: &mut [Transform]) {
    ctx.prepare(clip);
    SamplingJob { clip, bind_pose: &sk.bind_pose, time, context: ctx, output: out }.run().unwrap();
}

/// Asserts `got` is the reference: translations and scales bit for bit, rotations within 2e-7
/// per component (the four-lane dot product sums in another order than the scalar one).
fn assert_matches(sk: &Skeleton, clip: &Clip, time: f32, got: &[Transform], what: &str) {
    let want = reference(sk, clip, time);
    for (bone, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.translation, w.translation, "{what}: bone {bone} translation at t = {time}");
        assert_eq!(g.scale, w.scale, "{what}: bone {bone} scale at t = {time}");
        assert!(
            g.rotation.abs_diff_eq(w.rotation, 2e-7),
            "{what}: bone {bone} rotation at t = {time}: {:?} vs {:?}",
            g.rotation,
            w.rotation
        );
        assert!((g.rotation.length() - 1.0).abs() < 1e-6, "{what}: bone {bone} rotation not unit");
    }
}

/// Forward playback at 60 Hz past both ends, exact key times, random seeks, and backwards.
fn times(duration: f32) -> Vec<f32> {
    let mut ts: Vec<f32> = (-3..=((duration * 60.0) as i32 + 3)).map(|f| f as f32 / 60.0).collect();
    ts.extend((0..=(duration * 30.0) as i32).map(|k| k as f32 / 30.0));
    let mut state = 0x2545F491u32;
    ts.extend((0..200).map(|_| {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state as f32 / u32::MAX as f32 * (duration + 0.4) - 0.2
    }));
    ts.extend((0..=(duration * 60.0) as i32).rev().map(|f| f as f32 / 60.0));
    ts
}

fn linear<T: marrow_engine::track::Animatable>(times: &[f32], values: Vec<T>) -> Track<T> {
    Track::from_keys(Interpolation::Linear, times.to_vec(), values).unwrap()
}

/// A 12-bone clip with a bit of everything: a grid shared by most tracks, a second grid shared
/// by two tracks, a track on its own grid, STEP, CUBICSPLINE and eased tracks, one-key tracks,
/// missing channels, rotations more than 120 degrees apart and on opposite hemispheres, and a
/// segment shorter than `MIN_SEGMENT`.
fn mixed() -> (Skeleton, Clip) {
    let sk = chain_skeleton(12);
    let mut clip = Clip::new("mixed", &sk);
    let grid: Vec<f32> = (0..31).map(|k| k as f32 / 30.0).collect();
    let other: Vec<f32> = vec![0.0, 0.25, 0.5, 0.5000001, 0.9];
    let wave = |b: usize, k: usize| (k as f32 * 0.7 + b as f32).sin();
    let rot = |b: usize, k: usize| {
        Quat::from_euler(glam::EulerRot::XYZ, wave(b, k), 0.5 * wave(b + 3, k), 0.3 * wave(b + 5, k))
    };
    let ch = clip.channels_mut();
    for (b, ch) in ch.iter_mut().enumerate().take(8) {
        let n = grid.len();
        ch.translation =
            Some(linear(&grid, (0..n).map(|k| Vec3::new(wave(b, k), 0.1, -wave(b + 1, k))).collect()));
        ch.rotation = Some(linear(&grid, (0..n).map(|k| rot(b, k)).collect()));
        if b % 3 != 0 {
            ch.scale = Some(linear(&grid, (0..n).map(|k| Vec3::splat(1.0 + 0.1 * wave(b, k))).collect()));
        }
    }
    // Opposite hemispheres and wide angles on bone 1 (replaces its grid rotation).
    let n = grid.len();
    ch[1].rotation = Some(linear(
        &grid,
        (0..n)
            .map(|k| {
                let q = Quat::from_rotation_y(k as f32 * 2.3);
                if k % 2 == 1 { -q } else { q }
            })
            .collect(),
    ));
    // A second grid (with a too-short segment) shared by two tracks.
    ch[8].translation = Some(
        Track::from_keys_unchecked(
            Interpolation::Linear,
            other.clone(),
            other.iter().map(|&t| Vec3::splat(t)).collect(),
        )
        .unwrap(),
    );
    ch[9].rotation = Some(
        Track::from_keys_unchecked(
            Interpolation::Linear,
            other.clone(),
            other.iter().map(|&t| Quat::from_rotation_x(t * 3.0)).collect(),
        )
        .unwrap(),
    );
    // A track on its own grid, a STEP track on the main grid, an eased one, a cubic one.
    ch[9].scale = Some(linear(&[0.1, 0.7], vec![Vec3::ONE, Vec3::splat(2.0)]));
    ch[10].translation = Some(
        Track::from_keys(Interpolation::Step, grid.clone(), (0..n).map(|k| Vec3::splat(k as f32)).collect())
            .unwrap(),
    );
    let mut eased = linear(&grid, (0..n).map(|k| rot(10, k)).collect::<Vec<Quat>>());
    eased.set_default_easing(Ease::Named(Easing::from_name("easeInOutQuad").unwrap()));
    ch[10].rotation = Some(eased);
    ch[11].rotation = Some(
        Track::cubic_from_keys(
            vec![0.0, 0.5],
            vec![Quat::IDENTITY; 2],
            vec![Quat::IDENTITY, Quat::from_rotation_z(1.0)],
            vec![Quat::IDENTITY; 2],
        )
        .unwrap(),
    );
    // One-key tracks sharing their single time.
    ch[11].translation = Some(linear(&[0.3], vec![Vec3::new(1.0, 2.0, 3.0)]));
    ch[11].scale = Some(linear(&[0.3], vec![Vec3::splat(0.5)]));
    (sk, clip)
}

#[test]
fn tracks_sharing_key_times_are_grouped_into_blocks() {
    let sk = chain_skeleton(64);
    let clip = dense_clip(&sk, "dense", 2.0, 30.0, 0);
    let compiled = clip.compiled();
    assert_eq!(compiled.blocks().len(), 1, "one grid, one block");
    assert_eq!(compiled.blocks()[0].track_count(), 192);
    assert_eq!(compiled.blocks()[0].key_count(), 61);
    assert_eq!(compiled.loose_track_count(clip.channels()), 0);

    let (_, clip) = mixed();
    let compiled = clip.compiled();
    let counts: Vec<(usize, usize)> =
        compiled.blocks().iter().map(|b| (b.track_count(), b.key_count())).collect();
    // The main grid: 8 translations, 8 rotations, 5 scales. Streams (fewer than eight tracks
    // on strictly increasing times): the second grid's 2 tracks, the one-key time's 2 and the
    // lone track on its own times. Loose: STEP, eased, cubic.
    assert_eq!(counts, vec![(21, 31)]);
    assert_eq!(compiled.stream_track_count(), 5);
    assert_eq!(compiled.loose_track_count(clip.channels()), 3);
}

#[test]
fn compiled_sampling_matches_the_tracks_forward_backward_and_seeking() {
    let (sk, clip) = mixed();
    let mut ctx = SamplingContext::new(sk.bone_count());
    let mut out = vec![Transform::IDENTITY; sk.bone_count()];
    for t in times(1.0) {
        run(&sk, &clip, t, &mut ctx, &mut out);
        assert_matches(&sk, &clip, t, &out, "mixed clip");
    }
    let sk = chain_skeleton(80);
    let clip = dense_clip(&sk, "dense", 2.0, 30.0, 1);
    let mut ctx = SamplingContext::new(80);
    let mut out = vec![Transform::IDENTITY; 80];
    for t in times(2.0) {
        run(&sk, &clip, t, &mut ctx, &mut out);
        assert_matches(&sk, &clip, t, &out, "dense clip");
    }
}

#[test]
fn held_ends_and_short_segments_are_the_exact_keys() {
    let (sk, clip) = mixed();
    let mut ctx = SamplingContext::new(sk.bone_count());
    let mut out = vec![Transform::IDENTITY; sk.bone_count()];
    let key = |b: usize, k: usize| clip.channels()[b].rotation.as_ref().unwrap().values()[k];
    run(&sk, &clip, -1.0, &mut ctx, &mut out);
    assert_eq!(out[0].rotation, key(0, 0), "before the first key: the first key, exactly");
    run(&sk, &clip, 5.0, &mut ctx, &mut out);
    assert_eq!(out[0].rotation, key(0, 30), "after the last key: the last key, exactly");
    // Inside the 1e-7 s segment of the second grid: its right key.
    run(&sk, &clip, 0.50000005, &mut ctx, &mut out);
    assert_eq!(out[8].translation, Vec3::splat(0.5000001));
    assert_eq!(out[9].rotation, key(9, 3));
    // The one-key block holds everywhere.
    for t in [0.0, 0.3, 0.9] {
        run(&sk, &clip, t, &mut ctx, &mut out);
        assert_eq!(out[11].translation, Vec3::new(1.0, 2.0, 3.0));
        assert_eq!(out[11].scale, Vec3::splat(0.5));
    }
    // Channels missing on a bone whose other channels are in a block: the bind pose.
    assert_eq!(out[0].scale, sk.bind_pose[0].scale);
    assert_eq!(out[3].scale, sk.bind_pose[3].scale);
}

#[test]
fn editing_the_channels_rebuilds_the_compiled_form() {
    let sk = chain_skeleton(16);
    let mut clip = dense_clip(&sk, "dense", 1.0, 30.0, 0);
    let mut ctx = SamplingContext::new(16);
    let mut out = vec![Transform::IDENTITY; 16];
    run(&sk, &clip, 0.5, &mut ctx, &mut out);
    assert_eq!(clip.compiled().blocks().len(), 1);
    // Move one key of bone 5's translation: the next sample must see it.
    let tr = clip.channels_mut()[5].translation.as_mut().unwrap();
    tr.insert(0.5, Vec3::new(7.0, 8.0, 9.0));
    run(&sk, &clip, 0.5, &mut ctx, &mut out);
    assert_eq!(out[5].translation, Vec3::new(7.0, 8.0, 9.0));
    assert_matches(&sk, &clip, 0.5, &out, "after a key edit");
    // Give bone 2 its own grid: it leaves the block and samples as a stream.
    clip.channels_mut()[2] = BoneChannels {
        translation: Some(linear(&[0.0, 1.0], vec![Vec3::ZERO, Vec3::X])),
        ..BoneChannels::default()
    };
    assert_eq!(clip.compiled().stream_track_count(), 1);
    assert_eq!(clip.compiled().loose_track_count(clip.channels()), 0);
    for t in [0.0, 0.25, 0.5, 0.8, 1.0] {
        run(&sk, &clip, t, &mut ctx, &mut out);
        assert_matches(&sk, &clip, t, &out, "after replacing a bone's channels");
    }
    // A clone samples the same.
    let copy = clip.clone();
    assert_eq!(copy, clip);
    let mut out2 = out.clone();
    run(&sk, &copy, 0.8, &mut SamplingContext::new(16), &mut out2);
    run(&sk, &clip, 0.8, &mut ctx, &mut out);
    assert_eq!(out, out2);
}

#[test]
fn one_context_serves_several_clips_in_turn() {
    // Block cursors are hints: alternating clips through one context stays exact.
    let sk = chain_skeleton(24);
    let a = dense_clip(&sk, "a", 2.0, 30.0, 0);
    let b = dense_clip(&sk, "b", 1.0, 24.0, 1);
    let mut ctx = SamplingContext::new(24);
    let mut out = vec![Transform::IDENTITY; 24];
    for f in 0..150 {
        let t = f as f32 / 60.0;
        run(&sk, &a, t, &mut ctx, &mut out);
        assert_matches(&sk, &a, t, &out, "clip a");
        run(&sk, &b, 1.0 - t * 0.5, &mut ctx, &mut out);
        assert_matches(&sk, &b, 1.0 - t * 0.5, &out, "clip b");
    }
}

#[test]
fn damaged_shared_times_never_panic() {
    // Unsorted and NaN key times shared by two tracks form a block; sampling it must not panic
    // (the clip is reported by `find_clip_fault`, and players refuse it, but the job stays safe).
    let sk = chain_skeleton(3);
    let mut clip = Clip::new("damaged", &sk);
    for times in [vec![0.0, f32::NAN, 0.5], vec![0.9, 0.1, 0.5, 0.2]] {
        let n = times.len();
        let ch = clip.channels_mut();
        ch[1].translation = Some(
            Track::from_keys_unchecked(Interpolation::Linear, times.clone(), vec![Vec3::ONE; n]).unwrap(),
        );
        ch[2].rotation =
            Some(Track::from_keys_unchecked(Interpolation::Linear, times, vec![Quat::IDENTITY; n]).unwrap());
        assert_eq!(clip.compiled().blocks().len(), 1);
        let mut ctx = SamplingContext::new(3);
        let mut out = vec![Transform::IDENTITY; 3];
        for t in [-1.0, 0.0, 0.15, 0.3, 0.5, 0.7, 2.0, 0.3, 0.1] {
            run(&sk, &clip, t, &mut ctx, &mut out);
            assert_eq!(out[1].translation, Vec3::ONE);
        }
    }
}

#[test]
fn imported_gltf_clips_compile_to_blocks_and_sample_the_same() {
    // glTF exporters key every channel at the same instants (CesiumMan's samplers share one
    // input accessor): the imported clip is one block, and it samples as its tracks do.
    for model in ["CesiumMan/CesiumMan.glb", "RiggedFigure/RiggedFigure.glb"] {
        let scene = marrow_engine::gltf::import(support::gltf_dir().join(model)).unwrap();
        let rig = &scene.rigs[0];
        let clip = &scene.animations[0].clips[0].clip;
        let compiled = clip.compiled();
        let tracks = clip.track_count();
        assert_eq!(compiled.blocks().len(), 1, "{model}: one shared key grid, one block");
        assert_eq!(compiled.blocks()[0].track_count(), tracks, "{model}: every track in the block");
        assert_eq!(compiled.loose_track_count(clip.channels()), 0, "{model}");
        let sk = &rig.skeleton;
        let mut ctx = SamplingContext::new(sk.bone_count());
        let mut out = vec![Transform::IDENTITY; sk.bone_count()];
        for t in times(clip.duration()) {
            run(sk, clip, t, &mut ctx, &mut out);
            assert_matches(sk, clip, t, &out, model);
        }
    }
}

#[test]
fn an_uncompiled_clip_samples_track_by_track_and_stays_uncompiled() {
    // The job never builds the compiled form (that would allocate inside a frame): a clip not
    // compiled yet, or edited since, samples loose, with the same result.
    let (sk, clip) = mixed();
    let mut ctx = SamplingContext::new(sk.bone_count());
    let mut loose = vec![Transform::IDENTITY; sk.bone_count()];
    let mut blocks = loose.clone();
    for t in times(1.0) {
        SamplingJob { clip: &clip, bind_pose: &sk.bind_pose, time: t, context: &mut ctx, output: &mut loose }
            .run()
            .unwrap();
        assert!(clip.compiled_if_built().is_none());
        assert_matches(&sk, &clip, t, &loose, "uncompiled");
        let mut compiled = clip.clone();
        run(&sk, &compiled, t, &mut SamplingContext::new(sk.bone_count()), &mut blocks);
        assert!(compiled.compiled_if_built().is_some());
        for (a, b) in loose.iter().zip(&blocks) {
            assert_eq!(a.translation, b.translation);
            assert_eq!(a.scale, b.scale);
            assert!(a.rotation.abs_diff_eq(b.rotation, 4e-7));
        }
        compiled.channels_mut();
        assert!(compiled.compiled_if_built().is_none(), "an edit drops the compiled form");
    }
    clip.compiled();
    assert!(clip.compiled_if_built().is_some());
}

/// A key-reduced clip: the dense synthetic clip simplified track by track (each track keeps its
/// own key times), as the pose benchmark builds it.
fn reduced(sk: &Skeleton, seed: u32) -> Clip {
    let dense = dense_clip(sk, "dense", 2.0, 30.0, seed);
    dense.simplify(sk, 0.03).0
}

#[test]
fn tracks_with_their_own_key_times_sample_as_streams_exactly() {
    let sk = chain_skeleton(64);
    let clip = reduced(&sk, 0);
    let compiled = clip.compiled();
    // Reduced tracks that keep the same times (both ends only, say) still form blocks; the
    // rest are streams, and nothing is left loose.
    let in_blocks: usize = compiled.blocks().iter().map(|b| b.track_count()).sum();
    assert_eq!(compiled.stream_track_count() + in_blocks, clip.track_count());
    assert!(compiled.stream_track_count() > 64, "{} streams", compiled.stream_track_count());
    assert_eq!(compiled.loose_track_count(clip.channels()), 0);
    let mut ctx = SamplingContext::new(64);
    let mut out = vec![Transform::IDENTITY; 64];
    // Forward at 60 Hz past both ends, every key time, random seeks, backwards.
    for t in times(2.0) {
        run(&sk, &clip, t, &mut ctx, &mut out);
        assert_matches(&sk, &clip, t, &out, "reduced clip");
    }
    // Every key time of every track (segment ends are where the slots refill).
    let mut keys: Vec<f32> = clip
        .channels()
        .iter()
        .flat_map(|c| {
            let t = c.translation.as_ref().map(|t| t.times().to_vec()).unwrap_or_default();
            let r = c.rotation.as_ref().map(|t| t.times().to_vec()).unwrap_or_default();
            t.into_iter().chain(r)
        })
        .collect();
    keys.sort_by(f32::total_cmp);
    for t in keys {
        run(&sk, &clip, t, &mut ctx, &mut out);
        assert_matches(&sk, &clip, t, &out, "at a key time");
    }
}

#[test]
fn stream_held_ends_one_key_tracks_and_short_segments_are_the_exact_keys() {
    let sk = chain_skeleton(6);
    let mut clip = Clip::new("streams", &sk);
    let ch = clip.channels_mut();
    ch[0].translation = Some(linear(&[0.2, 0.6], vec![Vec3::new(-0.0, 1.0, 2.0), Vec3::new(4.0, -0.0, 6.0)]));
    ch[1].rotation = Some(linear(
        &[0.1, 0.5, 0.9],
        vec![Quat::from_rotation_y(0.3), Quat::from_rotation_y(-2.9), Quat::from_rotation_x(1.0)],
    ));
    ch[2].scale = Some(linear(&[0.4], vec![Vec3::new(2.0, -0.0, 0.5)]));
    ch[3].translation = Some(linear(
        &[0.0, 0.5, 0.5000001, 1.0],
        vec![Vec3::ZERO, Vec3::splat(0.5), Vec3::splat(0.75), Vec3::ONE],
    ));
    assert_eq!(clip.compiled().stream_track_count(), 4);
    let mut ctx = SamplingContext::new(6);
    let mut out = vec![Transform::IDENTITY; 6];
    let bits = |v: Vec3| v.to_array().map(f32::to_bits);
    for t in [-1.0, 0.0, 0.2, 0.3, 0.6, 0.7, 2.0, 0.50000005, 0.1, 0.9, 1.5, -0.5] {
        run(&sk, &clip, t, &mut ctx, &mut out);
        assert_matches(&sk, &clip, t, &out, "stream clip");
        let want = |b: usize| clip.channels()[b].translation.as_ref().unwrap().sample(t).unwrap();
        assert_eq!(bits(out[0].translation), bits(want(0)), "signed zeros of a held key at t = {t}");
        assert_eq!(bits(out[2].scale), bits(Vec3::new(2.0, -0.0, 0.5)), "one key holds everywhere");
    }
    run(&sk, &clip, 5.0, &mut ctx, &mut out);
    assert_eq!(out[1].rotation, Quat::from_rotation_x(1.0), "after the last key: the last key, exactly");
    // A head that starts (or seeks back) exactly on a key, then plays on.
    for start in [0.0, 0.1, 0.2, 0.4, 0.5, 0.5000001, 0.6, 0.9, 1.0] {
        let mut fresh = SamplingContext::new(6);
        for t in [start, start + 0.03, start + 0.2, start, start + 0.45] {
            run(&sk, &clip, t, &mut fresh, &mut out);
            assert_matches(&sk, &clip, t, &out, "from a key");
        }
    }
    run(&sk, &clip, 0.50000005, &mut ctx, &mut out);
    assert_eq!(out[3].translation, Vec3::splat(0.75), "inside a too-short segment: its right key");
}

#[test]
fn one_context_alternating_stream_clips_and_edits_stays_exact() {
    // The slots cache values, not hints: another clip or an edited one must never read them.
    let sk = chain_skeleton(24);
    let a = reduced(&sk, 0);
    let mut b = reduced(&sk, 1);
    let mut ctx = SamplingContext::new(24);
    let mut out = vec![Transform::IDENTITY; 24];
    for f in 0..120 {
        let t = f as f32 / 60.0;
        run(&sk, &a, t, &mut ctx, &mut out);
        assert_matches(&sk, &a, t, &out, "clip a");
        run(&sk, &b, t, &mut ctx, &mut out);
        assert_matches(&sk, &b, t, &out, "clip b");
        if f == 60 {
            // Move a key of bone 5's translation to where the head is: the next sample sees it.
            let tr = b.channels_mut()[5].translation.as_mut().unwrap();
            let k = tr.times().iter().position(|&x| x > t).unwrap();
            let at = tr.times()[k];
            tr.insert(at, Vec3::new(7.0, 8.0, 9.0));
            run(&sk, &b, at, &mut ctx, &mut out);
            assert_eq!(out[5].translation, Vec3::new(7.0, 8.0, 9.0));
        }
    }
    // `invalidate` forgets the segments too.
    ctx.invalidate();
    run(&sk, &a, 0.7, &mut ctx, &mut out);
    assert_matches(&sk, &a, 0.7, &out, "after invalidate");
}

#[test]
fn a_head_not_prepared_for_a_clip_samples_its_streams_track_by_track() {
    // Compiled but no slots for its streams (a context made for another clip): the same pose,
    // sampled through the tracks, and nothing allocated.
    let sk = chain_skeleton(64);
    let clip = reduced(&sk, 2);
    clip.compiled();
    assert!(clip.compiled().stream_track_count() > 0);
    let mut bare = SamplingContext::new(64);
    let bytes = bare.bytes();
    let (mut a, mut b) = (vec![Transform::IDENTITY; 64], vec![Transform::IDENTITY; 64]);
    let mut ready = SamplingContext::new(64);
    for t in times(2.0) {
        SamplingJob { clip: &clip, bind_pose: &sk.bind_pose, time: t, context: &mut bare, output: &mut a }
            .run()
            .unwrap();
        assert_matches(&sk, &clip, t, &a, "not prepared");
        run(&sk, &clip, t, &mut ready, &mut b);
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.translation, y.translation);
            assert_eq!(x.scale, y.scale);
            assert!(x.rotation.abs_diff_eq(y.rotation, 4e-7));
        }
    }
    assert_eq!(bare.bytes(), bytes, "sampling never sized the slots");
    assert!(ready.bytes() > bytes, "prepare sized them");
    // A dense clip (key blocks only) needs none.
    let dense = dense_clip(&sk, "dense", 2.0, 30.0, 0);
    let mut head = SamplingContext::new(64);
    let before = head.bytes();
    head.prepare(&dense);
    assert_eq!(head.bytes(), before);
}

#[test]
fn random_stream_clips_under_random_playback_match_the_tracks() {
    // Random clips of streams (each track its own random times: one key, tiny segments, signed
    // zeros, opposite-hemisphere rotations) played with random forward steps, pauses, seeks and
    // backward jumps through one prepared head: every sample is the tracks' own.
    let mut state = 0x9E37_79B9u32;
    let mut rnd = move || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state as f32 / u32::MAX as f32
    };
    for round in 0..12 {
        let sk = chain_skeleton(9);
        let mut clip = Clip::new("random", &sk);
        for b in 0..9 {
            let times = |rnd: &mut dyn FnMut() -> f32| -> Vec<f32> {
                let n = 1 + (rnd() * 6.0) as usize;
                let mut t = rnd() * 0.3 - 0.1;
                (0..n)
                    .map(|_| {
                        let x = t;
                        // Now and then a segment shorter than the sampler's minimum.
                        t += if rnd() < 0.15 { 2e-7 } else { 0.02 + rnd() * 0.4 };
                        x
                    })
                    .collect()
            };
            let tt = times(&mut rnd);
            let tv = tt
                .iter()
                .map(|_| Vec3::new(rnd() - 0.5, if rnd() < 0.3 { -0.0 } else { rnd() }, 0.0))
                .collect();
            let rt = times(&mut rnd);
            let rv = rt
                .iter()
                .map(|_| {
                    let q = Quat::from_euler(glam::EulerRot::YXZ, rnd() * 6.0, rnd() * 3.0, rnd() * 2.0);
                    if rnd() < 0.4 { -q } else { q }
                })
                .collect();
            let ch = &mut clip.channels_mut()[b];
            ch.translation = Some(linear(&tt, tv));
            ch.rotation = Some(linear(&rt, rv));
            if b % 2 == 0 {
                let st = times(&mut rnd);
                let sv = st.iter().map(|_| Vec3::splat(0.5 + rnd())).collect();
                ch.scale = Some(linear(&st, sv));
            }
        }
        assert!(clip.compiled().stream_track_count() > 0, "round {round}");
        let mut ctx = SamplingContext::new(9);
        let mut out = vec![Transform::IDENTITY; 9];
        let mut t = -0.2f32;
        for _ in 0..300 {
            let r = rnd();
            t = if r < 0.05 {
                rnd() * 2.5 - 0.2 // seek anywhere
            } else if r < 0.1 {
                t - rnd() * 0.3 // back a little
            } else if r < 0.15 {
                t // paused
            } else {
                t + rnd() * 0.05 // forward
            };
            run(&sk, &clip, t, &mut ctx, &mut out);
            assert_matches(&sk, &clip, t, &out, &format!("round {round}"));
        }
    }
}

#[test]
fn a_seek_back_onto_a_first_key_that_starts_a_too_short_segment_holds_its_end() {
    // Segment 0 shorter than the sampler's minimum: at its first key the track holds the second
    // key. A busy second track puts many keys behind the head, so the seek back refills every
    // lane from its track (not the replay from the first keys).
    let sk = chain_skeleton(3);
    let mut clip = Clip::new("short first segment", &sk);
    let ch = clip.channels_mut();
    ch[0].translation = Some(linear(&[1.0, 1.0000005, 2.0], vec![Vec3::X, Vec3::Y, Vec3::Z]));
    let busy: Vec<f32> = (0..60).map(|k| k as f32 / 60.0).collect();
    ch[1].translation = Some(linear(&busy, busy.iter().map(|&t| Vec3::splat(t)).collect()));
    assert_eq!(clip.compiled().stream_track_count(), 2);
    let mut ctx = SamplingContext::new(3);
    let mut out = vec![Transform::IDENTITY; 3];
    // 1.7 then 1.5: a seek back that searches, leaving the track's cursor past segment 0.
    for t in [0.5, 1.7, 1.5, 1.0, 1.2, 1.5, 1.0, 1.0000003, 1.7, 2.5, 1.0] {
        run(&sk, &clip, t, &mut ctx, &mut out);
        assert_matches(&sk, &clip, t, &out, "short first segment");
    }
}

/// The angle between two rotations (radians), well conditioned for small angles:
/// `2 asin |xyz|` of the relative rotation (an `acos` of the dot product would lose 3e-4 rad to
/// rounding near 1).
fn angle(a: Quat, b: Quat) -> f32 {
    2.0 * (a.conjugate() * b).xyz().length().min(1.0).asin()
}

#[test]
fn compact_blocks_halve_the_bytes_within_the_stated_precision() {
    use marrow_engine::compiled_clip::Precision;
    let sk = chain_skeleton(64);
    let full = dense_clip(&sk, "dense", 2.0, 30.0, 0);
    let mut compact = full.clone();
    assert_eq!(compact.precision(), Precision::Full, "full unless set");
    compact.set_precision(Precision::Compact);
    let (full_bytes, compact_bytes) = (full.compiled().bytes(), compact.compiled().bytes());
    // ozz-animation's runtime clip for the same data is 105,956 bytes.
    assert!(compact_bytes < 105_956, "compact {compact_bytes} bytes");
    assert!(compact_bytes * 2 < full_bytes + 2_000, "compact {compact_bytes} against full {full_bytes}");
    assert_eq!(compact, full, "precision is not part of equality");
    let (mut a, mut b) = (vec![Transform::IDENTITY; 64], vec![Transform::IDENTITY; 64]);
    let (mut ca, mut cb) = (SamplingContext::new(64), SamplingContext::new(64));
    let (mut worst_t, mut worst_r, mut worst_s) = (0.0f32, 0.0f32, 0.0f32);
    for t in times(2.0) {
        run(&sk, &full, t, &mut ca, &mut a);
        run(&sk, &compact, t, &mut cb, &mut b);
        for (x, y) in a.iter().zip(&b) {
            // Half floats: relative 2^-11 of the larger end value (bind translations here are
            // about a unit long), scales the same; rotations within 1e-4 rad.
            let bound = |v: Vec3| v.abs().max_element() * (1.0 / 2048.0) + 1e-7;
            let dt = (x.translation - y.translation).abs().max_element();
            assert!(dt <= bound(x.translation) * 1.5, "translation {dt} at t = {t}");
            let ds = (x.scale - y.scale).abs().max_element();
            assert!(ds <= bound(x.scale) * 1.5, "scale {ds} at t = {t}");
            let dr = angle(x.rotation, y.rotation);
            assert!(dr <= 1e-4, "rotation {dr} rad at t = {t}");
            assert!((y.rotation.length() - 1.0).abs() < 1e-6, "unit rotations");
            worst_t = worst_t.max(dt);
            worst_r = worst_r.max(dr);
            worst_s = worst_s.max(ds);
        }
    }
    eprintln!(
        "compact 64-joint dense clip: {compact_bytes} bytes (full {full_bytes}); worst translation {worst_t:e}, rotation {worst_r:e} rad, scale {worst_s:e}"
    );
    // A clone keeps the precision; going back to full drops the compact form.
    let copy = compact.clone();
    assert_eq!(copy.precision(), Precision::Compact);
    compact.set_precision(Precision::Full);
    assert!(compact.compiled_if_built().is_none());
    run(&sk, &compact, 0.7, &mut cb, &mut b);
    run(&sk, &full, 0.7, &mut ca, &mut a);
    assert_eq!(a, b, "full again: the exact path");
}

#[test]
fn a_block_whose_values_a_half_float_cannot_hold_stays_full() {
    use marrow_engine::compiled_clip::Precision;
    let sk = chain_skeleton(4);
    let mut clip = Clip::new("far", &sk);
    let grid = [0.0, 0.5, 1.0];
    for b in 0..4 {
        clip.channels_mut()[b].translation =
            Some(linear(&grid, vec![Vec3::ZERO, Vec3::new(70_000.0, 0.0, 0.0), Vec3::ONE]));
    }
    let full_bytes = clip.compiled().bytes();
    clip.set_precision(Precision::Compact);
    assert_eq!(clip.compiled().bytes(), full_bytes, "beyond 65504: kept full");
    let mut ctx = SamplingContext::new(4);
    let mut out = vec![Transform::IDENTITY; 4];
    run(&sk, &clip, 0.5, &mut ctx, &mut out);
    assert_eq!(out[2].translation, Vec3::new(70_000.0, 0.0, 0.0));
}

#[test]
fn imported_clips_sample_compact_within_the_stated_precision() {
    use marrow_engine::compiled_clip::Precision;
    for model in ["CesiumMan/CesiumMan.glb", "RiggedFigure/RiggedFigure.glb"] {
        let scene = marrow_engine::gltf::import(support::gltf_dir().join(model)).unwrap();
        let sk = &scene.rigs[0].skeleton;
        let full = &scene.animations[0].clips[0].clip;
        let mut compact = full.clone();
        compact.set_precision(Precision::Compact);
        assert!(compact.compiled().bytes() < full.compiled().bytes(), "{model}");
        let n = sk.bone_count();
        let (mut a, mut b) = (vec![Transform::IDENTITY; n], vec![Transform::IDENTITY; n]);
        let (mut ca, mut cb) = (SamplingContext::new(n), SamplingContext::new(n));
        for t in times(full.duration()) {
            run(sk, full, t, &mut ca, &mut a);
            run(sk, &compact, t, &mut cb, &mut b);
            for (x, y) in a.iter().zip(&b) {
                let bound = |v: Vec3| v.abs().max_element() * (1.5 / 2048.0) + 1e-7;
                assert!(
                    (x.translation - y.translation).abs().max_element() <= bound(x.translation),
                    "{model}"
                );
                assert!((x.scale - y.scale).abs().max_element() <= bound(x.scale), "{model}");
                assert!(angle(x.rotation, y.rotation) <= 1e-4, "{model} at t = {t}");
            }
        }
    }
}
