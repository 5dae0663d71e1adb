//! The many-chain solves against the single-chain jobs, bit for bit, at every SIMD level and
//! group width, on random and hostile inputs; the many-chain jobs' validity tables.

use glam::{Mat4, Quat, Vec3};

use super::{
    AimJob, AimJoint, AimJointsJob, AimLimits, AimSolution, IkError, TwoBoneIkChain, TwoBoneIkChainsJob,
    TwoBoneIkJob, TwoBoneIkSolution, aim, two_bone,
};
#[cfg(target_arch = "x86_64")]
use crate::simd::{SimdLevel, test_gate};

/// A small deterministic generator (xorshift), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// In `[-1, 1)`.
    fn f(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
    fn v(&mut self) -> Vec3 {
        Vec3::new(self.f(), self.f(), self.f())
    }
    /// One case in `n`.
    fn one_in(&mut self, n: u64) -> bool {
        self.next().is_multiple_of(n)
    }
    fn quat(&mut self) -> Quat {
        let axis = self.v().try_normalize().unwrap_or(Vec3::X);
        Quat::from_axis_angle(axis, self.f() * 3.2)
    }
}

/// A joint matrix: usually a rotation and translation, sometimes scaled (uniformly, unevenly,
/// mirrored) or with a zero axis.
fn joint(rng: &mut Rng, parent: &Mat4, length: f32) -> Mat4 {
    let scale = match rng.next() % 8 {
        0 => Vec3::splat(0.01 + rng.f().abs() * 50.0),
        1 => Vec3::new(1.0, 2.0, 0.5),
        2 => Vec3::new(-1.0, 1.0, 1.0),
        3 if rng.one_in(3) => Vec3::new(1.0, 0.0, 1.0),
        _ => Vec3::ONE,
    };
    let rotation = if rng.one_in(6) { Quat::IDENTITY } else { rng.quat() };
    *parent * Mat4::from_scale_rotation_translation(scale, rotation, Vec3::new(0.0, -length, 0.0))
}

/// Random chains, a share of them hostile: zero-length bones, straight chains, targets on the
/// start joint, beyond reach, 1e30 away; poles zero or along the chain; fractional weights,
/// softening, twists.
fn chains(rng: &mut Rng, n: usize) -> Vec<[Mat4; 3]> {
    (0..n)
        .map(|_| {
            let length = |rng: &mut Rng| if rng.one_in(8) { 0.0 } else { 0.1 + rng.f().abs() };
            let hip = Mat4::from_rotation_translation(rng.quat(), rng.v() * 2.0);
            let (l1, l2) = (length(rng), length(rng));
            let knee = joint(rng, &hip, l1);
            let ankle = joint(rng, &knee, l2);
            [hip, knee, ankle]
        })
        .collect()
}

fn chain_inputs<'a>(rng: &mut Rng, legs: &'a [[Mat4; 3]]) -> Vec<TwoBoneIkChain<'a>> {
    legs.iter()
        .map(|[s, m, e]| {
            let start = s.w_axis.truncate();
            let target = match rng.next() % 10 {
                0 => start,
                1 => e.w_axis.truncate(),
                2 => Vec3::new(1e30, -1e30, 3e29),
                3 => start + rng.v() * 20.0,
                _ => start + rng.v(),
            };
            let pole = match rng.next() % 6 {
                0 => Vec3::ZERO,
                1 => target - start,
                _ => rng.v(),
            };
            let mid_axis = rng.v().try_normalize().unwrap_or(Vec3::X) * (0.5 + rng.f().abs());
            TwoBoneIkChain {
                start: s,
                mid: m,
                end: e,
                target,
                pole,
                mid_axis,
                weight: if rng.one_in(3) { rng.f().abs() } else { 1.0 },
                soften: if rng.one_in(2) { 1.0 } else { rng.f().abs() },
                twist: if rng.one_in(4) { rng.f() * 7.0 } else { 0.0 },
            }
        })
        .collect()
}

fn aim_inputs<'a>(rng: &mut Rng, joints: &'a [[Mat4; 3]]) -> Vec<AimJoint<'a>> {
    joints
        .iter()
        .map(|[_, m, _]| {
            let at = m.w_axis.truncate();
            let target = match rng.next() % 12 {
                0 => at,
                1 => Vec3::new(-1e30, 2e29, 1e30),
                2 => at + rng.v() * 0.01,
                3 => at + Vec3::new(8.0, -3.3e20, 16.0),
                // A distance whose square is finite but not much more (the project mutation
                // run's finding 4: the solve's later squares overflow, not the distance's).
                4 => Vec3::new(8.858337, -1.8446743e19, 15.945007),
                5 => at + rng.v().try_normalize().unwrap_or(Vec3::Y) * 1.8e19,
                _ => at + rng.v() * 5.0,
            };
            let forward = rng.v().try_normalize().unwrap_or(Vec3::Z);
            let up = if rng.one_in(6) { forward * 2.0 } else { rng.v().try_normalize().unwrap_or(Vec3::Y) };
            let limit = |rng: &mut Rng| match rng.next() % 4 {
                0 => std::f32::consts::PI,
                1 => 0.0,
                _ => rng.f().abs() * std::f32::consts::PI,
            };
            AimJoint {
                joint: m,
                target,
                forward,
                offset: if rng.one_in(2) { Vec3::ZERO } else { rng.v() * 0.3 },
                up,
                pole: if rng.one_in(5) { Vec3::ZERO } else { rng.v() },
                twist: if rng.one_in(4) { rng.f() * 7.0 } else { 0.0 },
                limits: AimLimits { yaw: limit(rng), pitch: limit(rng) },
                weight: if rng.one_in(3) { rng.f().abs() } else { 1.0 },
            }
        })
        .collect()
}

fn chain_bits(s: &TwoBoneIkSolution) -> ([u32; 4], [u32; 4], bool) {
    (
        s.start_correction.to_array().map(f32::to_bits),
        s.mid_correction.to_array().map(f32::to_bits),
        s.reached,
    )
}

fn aim_bits(s: &AimSolution) -> ([u32; 4], bool) {
    (s.correction.to_array().map(f32::to_bits), s.reached)
}

/// Each input solved by the single job.
fn single_chains(inputs: &[TwoBoneIkChain]) -> Vec<TwoBoneIkSolution> {
    inputs
        .iter()
        .map(|c| {
            let mut s = TwoBoneIkSolution::default();
            TwoBoneIkJob {
                start: c.start,
                mid: c.mid,
                end: c.end,
                target: c.target,
                pole: c.pole,
                mid_axis: c.mid_axis,
                weight: c.weight,
                soften: c.soften,
                twist: c.twist,
                start_correction: &mut s.start_correction,
                mid_correction: &mut s.mid_correction,
                reached: &mut s.reached,
            }
            .run()
            .expect("the generator makes valid inputs");
            // Unit too: a finite quaternion of no length normalizes to NaN in the caller.
            for q in [s.start_correction, s.mid_correction] {
                assert!(q.is_finite() && (q.length() - 1.0).abs() < 1e-2, "{q} for {c:?}");
            }
            s
        })
        .collect()
}

fn single_aims(inputs: &[AimJoint]) -> Vec<AimSolution> {
    inputs
        .iter()
        .map(|a| {
            let mut s = AimSolution::default();
            AimJob {
                joint: a.joint,
                target: a.target,
                forward: a.forward,
                offset: a.offset,
                up: a.up,
                pole: a.pole,
                twist: a.twist,
                limits: a.limits,
                weight: a.weight,
                correction: &mut s.correction,
                reached: &mut s.reached,
            }
            .run()
            .expect("the generator makes valid inputs");
            // Unit too (found by the project mutation run: a target 3e20 away gave a finite
            // correction of no length, which the LookAt's normalization turned into NaN).
            assert!(
                s.correction.is_finite() && (s.correction.length() - 1.0).abs() < 1e-2,
                "{} for {a:?}",
                s.correction
            );
            s
        })
        .collect()
}

/// `inputs` solved `N` at a time by `solve` (spare lanes repeat the group's last input).
fn by_groups<T, O: Default + Clone, const N: usize>(
    inputs: &[T],
    solve: impl Fn([&T; N], &mut [O]),
) -> Vec<O> {
    let mut out = vec![O::default(); inputs.len()];
    for (group, o) in inputs.chunks(N).zip(out.chunks_mut(N)) {
        solve(std::array::from_fn(|i| &group[i.min(group.len() - 1)]), o);
    }
    out
}

#[test]
fn every_group_width_and_simd_level_solves_each_chain_to_the_bits_of_the_single_job() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let legs = chains(&mut rng, 2000);
    let inputs = chain_inputs(&mut rng, &legs);
    let want: Vec<_> = single_chains(&inputs).iter().map(chain_bits).collect();
    let check = |name: &str, got: Vec<TwoBoneIkSolution>| {
        for (i, (g, w)) in got.iter().map(chain_bits).zip(&want).enumerate() {
            assert_eq!(&g, w, "{name}: chain {i} ({:?})", inputs[i]);
        }
    };
    check("portable x4", by_groups::<_, _, 4>(&inputs, |g, o| two_bone::solve_two_bone(g, o)));
    check("portable x16", by_groups::<_, _, 16>(&inputs, |g, o| two_bone::solve_two_bone(g, o)));
    #[cfg(target_arch = "x86_64")]
    if test_gate(SimdLevel::Avx2, "the AVX2 two-bone groups") {
        // SAFETY: the gate says this CPU has AVX2.
        check("avx2 x4", by_groups::<_, _, 4>(&inputs, |g, o| unsafe { two_bone::solve_avx2(g, o) }));
        check("avx2 x16", by_groups::<_, _, 16>(&inputs, |g, o| unsafe { two_bone::solve_avx2(g, o) }));
    }
    #[cfg(target_arch = "x86_64")]
    if test_gate(SimdLevel::Avx512, "the AVX-512 two-bone groups") {
        // SAFETY: the gate says this CPU has AVX-512F (and so AVX2).
        check("avx512 x16", by_groups::<_, _, 16>(&inputs, |g, o| unsafe { two_bone::solve_avx512(g, o) }));
        check("avx512 x4", by_groups::<_, _, 4>(&inputs, |g, o| unsafe { two_bone::solve_avx512(g, o) }));
    }
    // The job itself, at every count around the group sizes.
    for n in [0, 1, 3, 4, 5, 15, 16, 17, 20, 33, 100] {
        let mut out = vec![TwoBoneIkSolution::default(); n];
        TwoBoneIkChainsJob { chains: &inputs[..n], solutions: &mut out }.run().expect("valid");
        check(&format!("the job on {n}"), out);
    }
}

#[test]
fn every_group_width_and_simd_level_aims_each_joint_to_the_bits_of_the_single_job() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let heads = chains(&mut rng, 2000);
    let inputs = aim_inputs(&mut rng, &heads);
    let want: Vec<_> = single_aims(&inputs).iter().map(aim_bits).collect();
    let check = |name: &str, got: Vec<AimSolution>| {
        for (i, (g, w)) in got.iter().map(aim_bits).zip(&want).enumerate() {
            assert_eq!(&g, w, "{name}: joint {i} ({:?})", inputs[i]);
        }
    };
    check("portable x4", by_groups::<_, _, 4>(&inputs, |g, o| aim::solve_aim(g, o)));
    check("portable x16", by_groups::<_, _, 16>(&inputs, |g, o| aim::solve_aim(g, o)));
    #[cfg(target_arch = "x86_64")]
    if test_gate(SimdLevel::Avx2, "the AVX2 aim groups") {
        // SAFETY: the gate says this CPU has AVX2.
        check("avx2 x4", by_groups::<_, _, 4>(&inputs, |g, o| unsafe { aim::solve_avx2(g, o) }));
        check("avx2 x16", by_groups::<_, _, 16>(&inputs, |g, o| unsafe { aim::solve_avx2(g, o) }));
    }
    for n in [0, 1, 4, 5, 16, 17, 100] {
        let mut out = vec![AimSolution::default(); n];
        AimJointsJob { joints: &inputs[..n], solutions: &mut out }.run().expect("valid");
        check(&format!("the job on {n}"), out);
    }
}

#[test]
fn the_many_chain_jobs_name_a_count_mismatch_and_the_first_bad_input_by_index_and_write_nothing() {
    let mut rng = Rng(7);
    let legs = chains(&mut rng, 8);
    let mut inputs = chain_inputs(&mut rng, &legs);
    let mut out = vec![TwoBoneIkSolution::default(); 7];
    assert_eq!(
        TwoBoneIkChainsJob { chains: &inputs, solutions: &mut out }.run(),
        Err(IkError::Count { job: "two-bone IK chains job", inputs: 8, outputs: 7 })
    );
    let sentinel = TwoBoneIkSolution { start_correction: Quat::from_rotation_x(1.0), ..Default::default() };
    let mut out = vec![sentinel; 8];
    inputs[5].target = Vec3::new(0.0, f32::NAN, 0.0);
    inputs[6].weight = 2.0;
    let err = TwoBoneIkChainsJob { chains: &inputs, solutions: &mut out }.run().unwrap_err();
    assert_eq!(
        err,
        IkError::Item {
            what: "chain",
            index: 5,
            error: Box::new(IkError::NotFinite { job: "two-bone IK job", input: "target" })
        }
    );
    assert_eq!(err.to_string(), "chain 5: two-bone IK job: input target is not finite");
    assert!(out.iter().all(|s| *s == sentinel), "outputs untouched on error");

    let heads = chains(&mut rng, 3);
    let mut aims = aim_inputs(&mut rng, &heads);
    aims[2].limits.pitch = 4.0;
    let mut out = vec![AimSolution::default(); 3];
    let err = AimJointsJob { joints: &aims, solutions: &mut out }.run().unwrap_err();
    assert_eq!(err.to_string(), "joint 2: aim job: input limits.pitch is 4, outside [0, 3.1415927]");
    let mut out = vec![AimSolution::default(); 4];
    assert_eq!(
        AimJointsJob { joints: &aims, solutions: &mut out }.validate(),
        Err(IkError::Count { job: "aim joints job", inputs: 3, outputs: 4 })
    );
}

/// One way to spoil a chain: what it does, and a change to the chain's inputs or its joints.
type Spoiler = (String, Box<dyn Fn(&mut TwoBoneIkChain, &mut [Mat4; 3])>);

/// Every way one chain among twenty can be bad: each of its matrices' sixteen numbers, each
/// vector's three and the twist as NaN, +inf or -inf, a zero mid axis, and each ratio below 0,
/// above 1 or NaN.
fn spoilers() -> Vec<Spoiler> {
    let mut out: Vec<Spoiler> = Vec::new();
    for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
        for joint in 0..3 {
            for k in 0..16 {
                out.push((
                    format!("joint {joint} number {k} = {bad}"),
                    Box::new(move |_, m| m[joint].as_mut()[k] = bad),
                ));
            }
        }
        for k in 0..3 {
            out.push((format!("target[{k}] = {bad}"), Box::new(move |c, _| c.target[k] = bad)));
            out.push((format!("pole[{k}] = {bad}"), Box::new(move |c, _| c.pole[k] = bad)));
            out.push((format!("mid_axis[{k}] = {bad}"), Box::new(move |c, _| c.mid_axis[k] = bad)));
        }
        out.push((format!("twist = {bad}"), Box::new(move |c, _| c.twist = bad)));
    }
    out.push(("mid_axis = 0".into(), Box::new(|c, _| c.mid_axis = Vec3::ZERO)));
    for bad in [-0.01, 1.01, f32::NAN] {
        out.push((format!("weight = {bad}"), Box::new(move |c, _| c.weight = bad)));
        out.push((format!("soften = {bad}"), Box::new(move |c, _| c.soften = bad)));
    }
    out
}

#[test]
fn the_many_chain_jobs_quick_check_refuses_every_bad_number_at_every_level_and_the_job_names_its_chain() {
    let mut rng = Rng(11);
    let legs = chains(&mut rng, 20);
    let good = chain_inputs(&mut rng, &legs);
    let quick = |chains: &[TwoBoneIkChain]| {
        let portable = two_bone::all_plain_portable(chains);
        #[cfg(target_arch = "x86_64")]
        if test_gate(SimdLevel::Avx2, "the AVX2 quick check") {
            // SAFETY: the gate says this CPU has AVX2.
            assert_eq!(unsafe { two_bone::all_plain_avx2(chains) }, portable, "the levels agree");
        }
        portable
    };
    assert!(quick(&good), "twenty good chains pass");
    let bad_chain = 13;
    for (what, spoil) in spoilers() {
        let mut joints = legs[bad_chain];
        let mut chain = good[bad_chain];
        spoil(&mut chain, &mut joints);
        let chain = TwoBoneIkChain { start: &joints[0], mid: &joints[1], end: &joints[2], ..chain };
        let mut inputs = good.clone();
        inputs[bad_chain] = chain;
        assert!(!quick(&inputs), "{what}: the quick check refuses it");
        let mut out = vec![TwoBoneIkSolution::default(); inputs.len()];
        match (TwoBoneIkChainsJob { chains: &inputs, solutions: &mut out }).run() {
            Err(IkError::Item { what: "chain", index, .. }) => assert_eq!(index, bad_chain, "{what}"),
            other => panic!("{what}: {other:?}"),
        }
    }
    // Numbers each finite whose sum overflows: the quick check declines, the job accepts them.
    let huge = Mat4::from_cols_array(&[3e38; 16]);
    let mut inputs = good.clone();
    inputs[bad_chain] = TwoBoneIkChain { start: &huge, mid: &huge, end: &huge, ..good[bad_chain] };
    assert!(!quick(&inputs));
    let mut out = vec![TwoBoneIkSolution::default(); inputs.len()];
    TwoBoneIkChainsJob { chains: &inputs, solutions: &mut out }.run().expect("finite numbers are valid");
}
