//! The decoder's builds against each other: the AVX2 build samples the portable build's bits.

use super::{CompressOptions, CompressedClip, CompressedContext};
use crate::math::Transform;
use crate::synthetic::{mocap_like_clip, mocap_skeleton};
use crate::track::{Interpolation, Track};

/// Every component's bits of one sampled pose.
fn bits(pose: &[Transform]) -> Vec<u32> {
    pose.iter()
        .flat_map(|t| {
            t.translation.to_array().into_iter().chain(t.rotation.to_array()).chain(t.scale.to_array())
        })
        .map(f32::to_bits)
        .collect()
}

/// Forward at two rates, backward, past both ends and a scramble of seeks, in one run (one
/// context: what it caches from each sample is used by the next).
fn times(duration: f32) -> Vec<f32> {
    let mut t: Vec<f32> = (0..=300).map(|k| k as f32 / 60.0).collect();
    t.extend((0..=600).map(|k| k as f32 / 120.0));
    t.extend((0..=200).rev().map(|k| k as f32 * duration / 200.0));
    t.extend([-1.0, duration + 1.0, 0.0, duration]);
    t.extend((0..997).map(|k| ((k * 389) % 997) as f32 / 997.0 * duration));
    t
}

#[test]
fn the_avx2_build_samples_the_portable_builds_bits() {
    #[cfg(target_arch = "x86_64")]
    {
        use crate::simd::{SimdLevel, test_gate};
        if !test_gate(SimdLevel::Avx2, "the AVX2 build of the compressed decoder") {
            return;
        }
        let sk = mocap_skeleton();
        let n = sk.bone_count();
        // Keyed segments (0.1 cm), uniform ones (0.01 cm), raw ones (0.0002 cm: no 16-bit rate
        // meets it), and a capture at 7-digit frame times with one frame's keys pasted between
        // frames (that frame keeps their exact time).
        let walk = mocap_like_clip(&sk, "walk", 200, 120.0, 3);
        let mut capture = mocap_like_clip(&sk, "capture", 300, 1.0 / 0.008333, 131);
        // Frame 120's keys pasted 0.3 frames past it.
        fn paste<T: crate::track::Animatable>(track: &Track<T>) -> Track<T> {
            let (mut t, mut v) = (track.times().to_vec(), track.values().to_vec());
            (t[120], v[120]) = (120.3 * 0.008333, v[40]);
            Track::from_keys(Interpolation::Linear, t, v).unwrap()
        }
        for ch in capture.channels_mut() {
            ch.rotation = ch.rotation.as_ref().map(paste);
            ch.translation = ch.translation.as_ref().map(paste);
        }
        let mut cases = Vec::new();
        for (clip, tolerance) in [(&walk, 1e-3), (&walk, 1e-4), (&walk, 2e-6), (&capture, 1e-4)] {
            let (packed, report) =
                CompressedClip::compress(clip, &sk, &CompressOptions::new(tolerance)).unwrap();
            cases.push((packed, report));
        }
        assert!(cases.iter().any(|(_, r)| r.keyed_segments > 0), "a case with keyed segments");
        assert!(cases.iter().any(|(_, r)| r.raw_segments > 0), "a case with raw segments");
        assert!(cases.iter().any(|(c, _)| !c.frame_times.is_empty()), "a case with exact frame times");
        for (packed, _) in &cases {
            let (mut portable, mut avx2) = (CompressedContext::new(n), CompressedContext::new(n));
            let (mut a, mut b) = (sk.bind_pose.clone(), sk.bind_pose.clone());
            for t in times(packed.duration()) {
                portable.sample_with::<false>(packed, &sk.bind_pose, t, &mut a);
                // SAFETY: the gate says this CPU has the `avx2` level's features.
                unsafe { avx2.sample_avx2(packed, &sk.bind_pose, t, &mut b) };
                let (want, got) = (bits(&a), bits(&b));
                if let Some(k) = (0..want.len()).find(|&k| want[k] != got[k]) {
                    panic!(
                        "{} at t={t}: bone {} component {}: portable {:e}, avx2 {:e}",
                        packed.name,
                        k / 10,
                        k % 10,
                        f32::from_bits(want[k]),
                        f32::from_bits(got[k])
                    );
                }
            }
        }
    }
}
