//! IK job benchmarks: `cargo bench -p marrow-engine --bench ik`.
//!
//! `ik/two_bone/chains64` and `ik/aim/joints64`: the same 64 chains (heads) solved by one
//! many-chain job (`TwoBoneIkChainsJob`, `AimJointsJob`: sixteen lanes side by side, compiled for
//! AVX2 at the `avx2` level and above, the two-bone groups for AVX-512 at the `avx512` level on
//! an Intel CPU), so the time per chain is the reported time / 64;
//! `ik/two_bone/chains4`: four of them in one job (a character's limbs; one four-lane group), time
//! per chain / 4. These run at the SIMD level `MARROW_SIMD` picks.
//! `ik/two_bone/chain`: one iteration is one two-bone chain solved (`TwoBoneIkJob::run`, validation included): a leg
//! (hip, knee, ankle) with 64 targets in turn around it, inside and beyond reach, so the
//! straight, bent and softened cases all run (the single job is one lane of the lane solve,
//! compiled for AVX2 at the `avx2` level and above). `ik/aim/joint`: one head aimed (`AimJob::run`) from an eye offset at 64
//! targets in turn, with its up axis toward a pole and yaw and pitch limits;
//! `ik/aim/joint_no_limits` the same without limits (`AimLimits::NONE`: ozz-animation's
//! `IKAimJob` has none, so this is the row to set beside it). Target (#27): at most
//! 60 ns per chain or joint on one thread. `ik/character/*`: one Animator tick (advance and
//! evaluate: sample, compose, palette) of the 31-joint capture rig walking through a graph, with
//! and without a two-foot FootPlant on a slope and a LookAt on the head shared by the chest and
//! neck (the difference is what the solves and their recompositions cost a character per tick),
//! and with root motion taken from the hips (what extracting and blending it costs).
//! `ik/character64/*`: the same on the capture rig grown to 64 bones (fingers, jaw, eyes), the
//! size the issue names for a game character.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::collections::HashMap;
use std::sync::Arc;

use glam::{Mat4, Quat, Vec3};
use marrow_engine::animator::{Animator, AnimatorSettings};
use marrow_engine::graph::{AnimGraph, LookLink, NodeKind, compile};
use marrow_engine::ik::{
    AimJob, AimJoint, AimJointsJob, AimLimits, AimSolution, TwoBoneIkChain, TwoBoneIkChainsJob, TwoBoneIkJob,
    TwoBoneIkSolution,
};
use marrow_engine::math::Transform;
use marrow_engine::pose::RigPoseMut;
use marrow_engine::root_motion::RootMotion;
use marrow_engine::skeleton::Skeleton;
use marrow_engine::synthetic::{mocap_like_clip, mocap_skeleton};

/// The capture rig grown to 64 bones: five three-joint fingers on each hand (30), a jaw and two
/// eyes under the head (3): what a game character's skeleton holds besides its body.
fn character_skeleton_64() -> Skeleton {
    let base = mocap_skeleton();
    let mut bones: Vec<(String, u16, Transform)> = (0..base.bone_count())
        .map(|i| (base.bone_names[i].clone(), base.parents[i], base.bind_pose[i]))
        .collect();
    let at = |x: f32, y: f32, z: f32| Transform::from_translation(Vec3::new(x, y, z));
    for (hand, side) in [("lhand", 1.0f32), ("rhand", -1.0)] {
        let h = base.index_of(hand).expect("the capture rig has hands") as u16;
        for f in 0..5 {
            let mut parent = h;
            for j in 0..3 {
                let offset =
                    if j == 0 { at(side * 0.01 * f as f32, -0.08, 0.0) } else { at(0.0, -0.025, 0.0) };
                bones.push((format!("{hand}_finger{f}_{j}"), parent, offset));
                parent = (bones.len() - 1) as u16;
            }
        }
    }
    let head = base.index_of("Head").expect("the capture rig has a head") as u16;
    for (name, offset) in
        [("jaw", at(0.0, -0.03, 0.05)), ("eye_l", at(0.03, 0.05, 0.08)), ("eye_r", at(-0.03, 0.05, 0.08))]
    {
        bones.push((name.to_owned(), head, offset));
    }
    Skeleton::from_bind_pose("character64", bones).expect("a well-formed rig")
}

/// The capture rig walking through `solves` (nodes between the clip and the output, in order).
fn character(solves: Vec<NodeKind>, root_motion: Option<RootMotion>) -> Animator {
    character_on(Arc::new(mocap_skeleton()), solves, root_motion)
}

/// `sk` walking through `solves`.
fn character_on(sk: Arc<Skeleton>, solves: Vec<NodeKind>, root_motion: Option<RootMotion>) -> Animator {
    let mut lib = HashMap::new();
    lib.insert("walk".to_owned(), Arc::new(mocap_like_clip(&sk, "walk", 240, 60.0, 7)));
    let mut g = AnimGraph::new();
    let mut last = g.add_node(NodeKind::Clip { clip: "walk".into(), speed: 1.0, looping: true }, [0.0, 0.0]);
    for kind in solves {
        let n = g.add_node(kind, [0.0, 0.0]);
        g.connect(last, n, "pose");
        last = n;
    }
    let o = g.add_node(NodeKind::Output, [0.0, 0.0]);
    g.connect(last, o, "pose");
    let program = Arc::new(compile(&g, &sk, &lib).expect("compiles"));
    Animator::new(sk, AnimatorSettings { graph: Some(program), root_motion, ..Default::default() })
}

fn character_ticks(c: &mut Criterion) {
    let leg = |s: &str| [format!("{s}Hip"), format!("{s}Knee"), format!("{s}Ankle")];
    let plant = NodeKind::FootPlant {
        hips: "Hips".into(),
        left: leg("Left"),
        right: leg("Right"),
        height: 0.02,
        slope: 0.12,
        max_lift: 0.3,
        max_drop: 0.3,
        mid_axis: Vec3::X,
        weight: 1.0,
    };
    let look = NodeKind::LookAt {
        bone: "Head".into(),
        x: 0.5,
        y: 1.6,
        z: 2.0,
        target_bone: String::new(),
        forward: Vec3::Z,
        up: Vec3::Y,
        offset: Vec3::ZERO,
        yaw: 1.2,
        pitch: 0.6,
        chain: vec![
            LookLink { bone: "Chest".into(), share: 0.2 },
            LookLink { bone: "Neck".into(), share: 0.4 },
        ],
        weight: 1.0,
    };
    let root = Some(RootMotion::planar(0));
    let sk64 = Arc::new(character_skeleton_64());
    assert_eq!(sk64.bone_count(), 64);
    for (name, solves, root_motion, sk) in [
        ("ik/character/walk", vec![], None, None),
        ("ik/character/walk_root_motion", vec![], root, None),
        ("ik/character/plant_and_look", vec![plant.clone(), look.clone()], None, None),
        ("ik/character64/walk", vec![], None, Some(sk64.clone())),
        ("ik/character64/plant_and_look", vec![plant, look], None, Some(sk64.clone())),
    ] {
        let mut a = match sk {
            Some(sk) => character_on(sk, solves, root_motion),
            None => character(solves, root_motion),
        };
        let n = a.skeleton().bone_count();
        let (mut local, mut model, mut palette) =
            (vec![Transform::IDENTITY; n], vec![Mat4::IDENTITY; n], vec![Mat4::IDENTITY; n]);
        c.bench_function(name, |b| {
            b.iter(|| {
                a.advance(1.0 / 60.0);
                a.evaluate(RigPoseMut { local: &mut local, model: &mut model, palette: &mut palette })
                    .expect("evaluates");
                black_box(&palette);
            })
        });
    }
}

fn bench(c: &mut Criterion) {
    let hip = Mat4::from_rotation_translation(Quat::from_rotation_x(-0.2), Vec3::new(0.1, 1.0, 0.0));
    let knee = hip * Mat4::from_rotation_translation(Quat::from_rotation_x(0.4), Vec3::new(0.0, -0.45, 0.0));
    let ankle = knee * Mat4::from_translation(Vec3::new(0.0, -0.42, 0.0));
    let targets: Vec<Vec3> = (0..64)
        .map(|i| {
            let a = i as f32 * 0.7;
            Vec3::new(0.1 + 0.3 * a.cos(), 1.0 - 0.2 * (i % 7) as f32, 0.3 * a.sin())
        })
        .collect();
    let mut i = 0;
    c.bench_function("ik/two_bone/chain", |b| {
        b.iter(|| {
            i = (i + 1) % targets.len();
            let (mut start, mut mid, mut reached) = (Quat::IDENTITY, Quat::IDENTITY, false);
            TwoBoneIkJob {
                start: black_box(&hip),
                mid: black_box(&knee),
                end: black_box(&ankle),
                target: black_box(targets[i]),
                pole: Vec3::Z,
                mid_axis: Vec3::X,
                weight: 1.0,
                soften: 0.95,
                twist: 0.0,
                start_correction: &mut start,
                mid_correction: &mut mid,
                reached: &mut reached,
            }
            .run()
            .expect("valid");
            black_box((start, mid, reached))
        })
    });
    // The same leg and targets as 64 chains solved by one many-chain job: one iteration is 64
    // chains, so the time per chain is the reported time / 64.
    let chains: Vec<TwoBoneIkChain> = targets
        .iter()
        .map(|&target| TwoBoneIkChain {
            start: &hip,
            mid: &knee,
            end: &ankle,
            target,
            pole: Vec3::Z,
            mid_axis: Vec3::X,
            weight: 1.0,
            soften: 0.95,
            twist: 0.0,
        })
        .collect();
    let mut solutions = vec![TwoBoneIkSolution::default(); chains.len()];
    let mut group = c.benchmark_group("ik/two_bone");
    group.throughput(Throughput::Elements(chains.len() as u64));
    group.bench_function("chains64", |b| {
        b.iter(|| {
            TwoBoneIkChainsJob { chains: black_box(&chains), solutions: &mut solutions }
                .run()
                .expect("valid");
            black_box(&solutions);
        })
    });
    // A character's four limbs in one job (one group of four lanes): time per chain is / 4.
    let mut four = [TwoBoneIkSolution::default(); 4];
    let mut k4 = 0;
    group.throughput(Throughput::Elements(4));
    group.bench_function("chains4", |b| {
        b.iter(|| {
            k4 = (k4 + 4) % chains.len();
            TwoBoneIkChainsJob { chains: black_box(&chains[k4..k4 + 4]), solutions: &mut four }
                .run()
                .expect("valid");
            black_box(&four);
        })
    });
    group.finish();
    let head = Mat4::from_rotation_translation(Quat::from_rotation_y(0.3), Vec3::new(0.0, 1.6, 0.0));
    for (name, limits) in
        [("ik/aim/joint", AimLimits { yaw: 1.2, pitch: 0.6 }), ("ik/aim/joint_no_limits", AimLimits::NONE)]
    {
        let mut k = 0;
        c.bench_function(name, |b| {
            b.iter(|| {
                k = (k + 1) % targets.len();
                let (mut correction, mut reached) = (Quat::IDENTITY, false);
                AimJob {
                    joint: black_box(&head),
                    target: black_box(targets[k] * 4.0 + Vec3::Z),
                    forward: Vec3::Z,
                    offset: Vec3::new(0.0, 0.08, 0.1),
                    up: Vec3::Y,
                    pole: Vec3::Y,
                    twist: 0.0,
                    limits,
                    weight: 1.0,
                    correction: &mut correction,
                    reached: &mut reached,
                }
                .run()
                .expect("valid");
                black_box((correction, reached))
            })
        });
    }
    // The same head and targets as 64 joints aimed by one many-joint job (time per joint: the
    // reported time / 64).
    let aims: Vec<AimJoint> = targets
        .iter()
        .map(|&t| AimJoint {
            joint: &head,
            target: t * 4.0 + Vec3::Z,
            forward: Vec3::Z,
            offset: Vec3::new(0.0, 0.08, 0.1),
            up: Vec3::Y,
            pole: Vec3::Y,
            twist: 0.0,
            limits: AimLimits { yaw: 1.2, pitch: 0.6 },
            weight: 1.0,
        })
        .collect();
    let mut aimed = vec![AimSolution::default(); aims.len()];
    let mut group = c.benchmark_group("ik/aim");
    group.throughput(Throughput::Elements(aims.len() as u64));
    group.bench_function("joints64", |b| {
        b.iter(|| {
            AimJointsJob { joints: black_box(&aims), solutions: &mut aimed }.run().expect("valid");
            black_box(&aimed);
        })
    });
    group.finish();
}

criterion_group!(benches, bench, character_ticks);
criterion_main!(benches);
