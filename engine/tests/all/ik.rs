//! Two-bone IK (`marrow_engine::ik::TwoBoneIkJob`): a validity table naming every bad input, then
//! exact behaviour on a leg (hip, knee, ankle) composed here by hand: reachable targets reached to
//! 1e-5 of the chain's length, the knee on the pole's side, a soft stop near full reach, the chain
//! untouched at weight 0 and the correction's angle linear in the weight; and hostile chains
//! (zero-length bones, a target on the hip, a straight leg, a pole along the chain, far targets)
//! giving finite results.

use glam::{Mat4, Quat, Vec3};
use marrow_engine::ik::{IkError, TwoBoneIkJob};

/// A leg: hip at `hip`, local rotations `r` (hip, knee), bones `upper` and `lower` long along -Y.
#[derive(Clone, Copy)]
struct Leg {
    hip: Vec3,
    hip_rot: Quat,
    knee_rot: Quat,
    upper: f32,
    lower: f32,
}

impl Leg {
    /// A leg slightly bent forward at the knee (a knee bends about local X).
    fn new() -> Self {
        Leg {
            hip: Vec3::new(0.1, 1.0, 0.0),
            hip_rot: Quat::from_rotation_x(-0.2),
            knee_rot: Quat::from_rotation_x(0.4),
            upper: 0.45,
            lower: 0.42,
        }
    }

    /// `model_from_bone` of hip, knee and ankle.
    fn model(&self) -> [Mat4; 3] {
        let hip = Mat4::from_rotation_translation(self.hip_rot, self.hip);
        let knee = hip * Mat4::from_rotation_translation(self.knee_rot, Vec3::new(0.0, -self.upper, 0.0));
        let ankle = knee * Mat4::from_translation(Vec3::new(0.0, -self.lower, 0.0));
        [hip, knee, ankle]
    }

    fn ankle(&self) -> Vec3 {
        self.model()[2].w_axis.truncate()
    }

    fn knee(&self) -> Vec3 {
        self.model()[1].w_axis.truncate()
    }

    /// The job's corrections applied to the local rotations.
    fn corrected(&self, c: &Solved) -> Leg {
        Leg { hip_rot: self.hip_rot * c.start, knee_rot: self.knee_rot * c.mid, ..*self }
    }
}

#[derive(Debug)]
struct Solved {
    start: Quat,
    mid: Quat,
    reached: bool,
}

struct Setup {
    target: Vec3,
    pole: Vec3,
    mid_axis: Vec3,
    weight: f32,
    soften: f32,
    twist: f32,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            target: Vec3::new(0.2, 0.3, 0.3),
            pole: Vec3::Z,
            mid_axis: Vec3::X,
            weight: 1.0,
            soften: 1.0,
            twist: 0.0,
        }
    }
}

fn solve_model(model: [Mat4; 3], s: &Setup) -> Result<Solved, IkError> {
    let (mut start, mut mid, mut reached) = (Quat::from_xyzw(9.0, 9.0, 9.0, 9.0), Quat::IDENTITY, false);
    TwoBoneIkJob {
        start: &model[0],
        mid: &model[1],
        end: &model[2],
        target: s.target,
        pole: s.pole,
        mid_axis: s.mid_axis,
        weight: s.weight,
        soften: s.soften,
        twist: s.twist,
        start_correction: &mut start,
        mid_correction: &mut mid,
        reached: &mut reached,
    }
    .run()?;
    Ok(Solved { start, mid, reached })
}

fn solve(leg: &Leg, s: &Setup) -> Solved {
    solve_model(leg.model(), s).expect("valid inputs")
}

#[test]
fn every_bad_input_is_named() {
    let leg = Leg::new();
    let nan = f32::NAN;
    let cases: Vec<(&str, Setup, IkError)> = vec![
        (
            "target NaN",
            Setup { target: Vec3::new(nan, 0.0, 0.0), ..Default::default() },
            IkError::NotFinite { job: "two-bone IK job", input: "target" },
        ),
        (
            "target infinite",
            Setup { target: Vec3::splat(f32::INFINITY), ..Default::default() },
            IkError::NotFinite { job: "two-bone IK job", input: "target" },
        ),
        (
            "pole NaN",
            Setup { pole: Vec3::new(0.0, nan, 0.0), ..Default::default() },
            IkError::NotFinite { job: "two-bone IK job", input: "pole" },
        ),
        (
            "mid axis zero",
            Setup { mid_axis: Vec3::ZERO, ..Default::default() },
            IkError::ZeroAxis { job: "two-bone IK job", input: "mid_axis" },
        ),
        (
            "weight above 1",
            Setup { weight: 1.5, ..Default::default() },
            IkError::OutOfRange { job: "two-bone IK job", input: "weight", value: 1.5, most: 1.0 },
        ),
        (
            "weight NaN",
            Setup { weight: nan, ..Default::default() },
            IkError::NotFinite { job: "two-bone IK job", input: "weight" },
        ),
        (
            "soften negative",
            Setup { soften: -0.1, ..Default::default() },
            IkError::OutOfRange { job: "two-bone IK job", input: "soften", value: -0.1, most: 1.0 },
        ),
        (
            "twist infinite",
            Setup { twist: f32::INFINITY, ..Default::default() },
            IkError::NotFinite { job: "two-bone IK job", input: "twist" },
        ),
    ];
    for (name, setup, want) in cases {
        let got = solve_model(leg.model(), &setup).expect_err(name);
        assert_eq!(got, want, "{name}");
        assert!(!got.to_string().is_empty());
    }
    let mut model = leg.model();
    model[1].w_axis.x = nan;
    assert_eq!(
        solve_model(model, &Setup::default()).unwrap_err(),
        IkError::NotFinite { job: "two-bone IK job", input: "mid" }
    );
}

/// Deterministic points in a box, from a small LCG.
fn points(n: usize, seed: u32) -> Vec<Vec3> {
    let mut x = seed;
    let mut next = || {
        x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (x >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
    };
    (0..n).map(|_| Vec3::new(next(), next(), next())).collect()
}

#[test]
fn reachable_targets_are_reached_with_the_knee_toward_the_pole() {
    let leg = Leg::new();
    let full = leg.upper + leg.lower;
    let mut tried = 0;
    for p in points(400, 7) {
        let target = leg.hip + p * full;
        let d = target.distance(leg.hip);
        // Inside the reachable shell, with a margin from both of its bounds.
        if d < (leg.upper - leg.lower).abs() + 0.02 || d > full - 0.01 {
            continue;
        }
        tried += 1;
        let pole = Vec3::new(0.3, 0.1, 1.0);
        let s = Setup { target, pole, ..Default::default() };
        let solved = solve(&leg, &s);
        let after = leg.corrected(&solved);
        let miss = after.ankle().distance(target);
        assert!(miss <= 1e-5 * full, "target {target}: the ankle misses by {miss}");
        assert!(solved.reached, "target {target}");
        // Bone lengths kept (corrections are rotations).
        assert!((after.knee().distance(leg.hip) - leg.upper).abs() < 1e-5);
        // The knee lies in the plane of the hip-target line and the pole, on the pole's side.
        let line = (target - leg.hip).normalize();
        let knee_off = (after.knee() - leg.hip) - line * (after.knee() - leg.hip).dot(line);
        let pole_off = pole - line * pole.dot(line);
        if knee_off.length() > 1e-3 && pole_off.length() > 1e-3 {
            let cos = knee_off.normalize().dot(pole_off.normalize());
            assert!(cos > 1.0 - 1e-4, "target {target}: the knee is off the pole plane (cos {cos})");
        }
    }
    assert!(tried > 100, "{tried} targets tried");
}

#[test]
fn beyond_reach_the_chain_straightens_toward_the_target_and_softening_stops_short_smoothly() {
    let leg = Leg::new();
    let full = leg.upper + leg.lower;
    let dir = Vec3::new(0.2, -1.0, 0.3).normalize();
    // soften 1: a far target straightens the leg along the line.
    let far = leg.hip + dir * full * 3.0;
    let solved = solve(&leg, &Setup { target: far, ..Default::default() });
    let after = leg.corrected(&solved);
    assert!(!solved.reached);
    assert!((after.ankle() - (leg.hip + dir * full)).length() < 1e-4, "straight toward the target");
    // soften 0.8: from 80% of the reach on, the ankle lags the target and never reaches full reach;
    // its distance grows with the target's, smoothly.
    let mut last = 0.0;
    for k in 0..40 {
        let d = full * (0.5 + 0.025 * k as f32);
        let solved = solve(&leg, &Setup { target: leg.hip + dir * d, soften: 0.8, ..Default::default() });
        let reached = leg.corrected(&solved).ankle().distance(leg.hip);
        if d <= 0.8 * full {
            assert!((reached - d).abs() < 1e-4, "below the soft start the target is met: {d} vs {reached}");
            assert!(solved.reached);
        } else {
            assert!(reached < d && reached < full, "softened: {reached} for {d}");
            assert!(!solved.reached);
        }
        assert!(reached > last, "the ankle follows the target outward");
        // No jump: one step of the target moves the ankle no more than it moved the target.
        if k > 0 {
            assert!(reached - last <= 0.025 * full + 1e-4);
        }
        last = reached;
    }
}

/// A target across the world (past what `f32` squares: 1.8e19, 1e30, 3e38 away) still
/// straightens the leg along its line, as a target three lengths away does; before stop 65 the
/// solve's squares overflowed and it handed out no turn.
#[test]
fn a_target_across_the_world_straightens_the_chain_along_its_line() {
    let leg = Leg::new();
    let full = leg.upper + leg.lower;
    let dir = Vec3::new(0.2, -1.0, 0.3).normalize();
    for far in [1e16f32, 1.8446743e19, 3.3e20, 1e30, 3e38] {
        for soften in [1.0, 0.8] {
            let solved = solve(&leg, &Setup { target: leg.hip + dir * far, soften, ..Default::default() });
            let after = leg.corrected(&solved);
            assert!(!solved.reached);
            let ankle = after.ankle();
            assert!(
                (ankle - (leg.hip + dir * full)).length() < 1e-4,
                "{far} away (soften {soften}): {ankle}"
            );
        }
    }
}

#[test]
fn weight_zero_leaves_the_chain_and_the_correction_grows_linearly_with_the_weight() {
    let leg = Leg::new();
    let target = leg.hip + Vec3::new(0.3, -0.5, 0.2);
    let zero = solve(&leg, &Setup { target, weight: 0.0, ..Default::default() });
    assert_eq!(zero.start, Quat::IDENTITY);
    assert_eq!(zero.mid, Quat::IDENTITY);
    assert!(!zero.reached, "weight 0 reaches nothing");
    let one = solve(&leg, &Setup { target, ..Default::default() });
    for w in [0.25, 0.5, 0.75] {
        let part = solve(&leg, &Setup { target, weight: w, ..Default::default() });
        for (a, b, name) in [(part.start, one.start, "start"), (part.mid, one.mid, "mid")] {
            let (angle, full_angle) = (a.angle_between(Quat::IDENTITY), b.angle_between(Quat::IDENTITY));
            assert!((angle - w * full_angle).abs() < 1e-4, "{name} at {w}: {angle} vs {full_angle}");
            // Same axis as the full correction.
            let (axis, full_axis) = (a.to_axis_angle().0, b.to_axis_angle().0);
            assert!(axis.dot(full_axis) > 0.999, "{name}");
        }
        assert!(!part.reached);
    }
}

#[test]
fn twist_turns_the_knee_about_the_hip_target_line() {
    let leg = Leg::new();
    let target = leg.hip + Vec3::new(0.1, -0.6, 0.2);
    let plain = leg.corrected(&solve(&leg, &Setup { target, ..Default::default() }));
    let twisted = leg.corrected(&solve(&leg, &Setup { target, twist: 0.7, ..Default::default() }));
    assert!(twisted.ankle().distance(target) < 1e-5, "the end stays on the target");
    let line = (target - leg.hip).normalize();
    let off = |l: &Leg| {
        let k = l.knee() - leg.hip;
        k - line * k.dot(line)
    };
    let angle = off(&plain).angle_between(off(&twisted));
    assert!((angle - 0.7).abs() < 1e-4, "turned by the twist: {angle}");
}

#[test]
fn hostile_chains_give_finite_corrections() {
    let leg = Leg::new();
    let finite = |s: &Solved| {
        s.start.is_finite() && s.mid.is_finite() && s.start.is_normalized() && s.mid.is_normalized()
    };
    let mut cases: Vec<(&str, Leg, Setup)> = vec![
        ("target on the hip", leg, Setup { target: leg.hip, ..Default::default() }),
        ("target far away", leg, Setup { target: Vec3::splat(1e30), ..Default::default() }),
        ("target at the origin of the model", leg, Setup { target: Vec3::ZERO, ..Default::default() }),
        ("pole along the chain", leg, Setup { pole: (leg.ankle() - leg.hip), ..Default::default() }),
        ("pole zero", leg, Setup { pole: Vec3::ZERO, ..Default::default() }),
        ("zero-length upper bone", Leg { upper: 0.0, ..leg }, Setup::default()),
        ("zero-length lower bone", Leg { lower: 0.0, ..leg }, Setup::default()),
        ("both bones zero", Leg { upper: 0.0, lower: 0.0, ..leg }, Setup::default()),
        (
            "straight leg",
            Leg { knee_rot: Quat::IDENTITY, ..leg },
            Setup { target: leg.hip - Vec3::Y * 0.5, ..Default::default() },
        ),
        (
            "fully folded leg",
            Leg { knee_rot: Quat::from_rotation_x(std::f32::consts::PI), ..leg },
            Setup::default(),
        ),
        ("mid axis along the bone", leg, Setup { mid_axis: Vec3::Y, ..Default::default() }),
        ("huge twist", leg, Setup { twist: 1e9, ..Default::default() }),
    ];
    // A straight leg still bends to reach a nearer target (the bend axis decides the side).
    cases.push((
        "straight leg, near target",
        Leg { knee_rot: Quat::IDENTITY, ..leg },
        Setup { target: leg.hip + Vec3::new(0.0, -0.6, 0.0), ..Default::default() },
    ));
    for (name, leg, setup) in cases {
        let s = solve(&leg, &setup);
        assert!(finite(&s), "{name}: {s:?}");
        assert!(leg.corrected(&s).ankle().is_finite(), "{name}");
    }
    let straight = Leg { knee_rot: Quat::IDENTITY, ..leg };
    let target = straight.hip + Vec3::new(0.0, -0.6, 0.0);
    let s = solve(&straight, &Setup { target, ..Default::default() });
    assert!(straight.corrected(&s).ankle().distance(target) < 1e-5, "a straight leg bends to reach");
}

// ---- AimJob: a head (forward +Z, up +Y) turned toward a target.

use marrow_engine::ik::{AimJob, AimLimits};

struct Aim {
    target: Vec3,
    forward: Vec3,
    offset: Vec3,
    up: Vec3,
    pole: Vec3,
    twist: f32,
    limits: AimLimits,
    weight: f32,
}

impl Default for Aim {
    fn default() -> Self {
        Aim {
            target: Vec3::new(1.0, 2.0, 3.0),
            forward: Vec3::Z,
            offset: Vec3::ZERO,
            up: Vec3::Y,
            pole: Vec3::Y,
            twist: 0.0,
            limits: AimLimits::NONE,
            weight: 1.0,
        }
    }
}

/// The head: at (0, 1.6, 0), turned a little about Y and X.
fn head() -> Mat4 {
    Mat4::from_rotation_translation(
        Quat::from_rotation_y(0.3) * Quat::from_rotation_x(-0.1),
        Vec3::new(0.0, 1.6, 0.0),
    )
}

fn aim(joint: &Mat4, a: &Aim) -> Result<(Quat, bool), IkError> {
    let (mut correction, mut reached) = (Quat::from_xyzw(9.0, 9.0, 9.0, 9.0), false);
    AimJob {
        joint,
        target: a.target,
        forward: a.forward,
        offset: a.offset,
        up: a.up,
        pole: a.pole,
        twist: a.twist,
        limits: a.limits,
        weight: a.weight,
        correction: &mut correction,
        reached: &mut reached,
    }
    .run()?;
    Ok((correction, reached))
}

#[test]
fn every_bad_aim_input_is_named() {
    let j = head();
    let named = |input: &'static str| IkError::NotFinite { job: "aim job", input };
    let cases: Vec<(Aim, IkError)> = vec![
        (Aim { target: Vec3::splat(f32::NAN), ..Default::default() }, named("target")),
        (
            Aim { forward: Vec3::ZERO, ..Default::default() },
            IkError::ZeroAxis { job: "aim job", input: "forward" },
        ),
        (Aim { up: Vec3::ZERO, ..Default::default() }, IkError::ZeroAxis { job: "aim job", input: "up" }),
        (Aim { offset: Vec3::new(f32::INFINITY, 0.0, 0.0), ..Default::default() }, named("offset")),
        (Aim { pole: Vec3::splat(f32::NAN), ..Default::default() }, named("pole")),
        (Aim { twist: f32::NAN, ..Default::default() }, named("twist")),
        (
            Aim { weight: -1.0, ..Default::default() },
            IkError::OutOfRange { job: "aim job", input: "weight", value: -1.0, most: 1.0 },
        ),
        (
            Aim { limits: AimLimits { yaw: 4.0, pitch: 1.0 }, ..Default::default() },
            IkError::OutOfRange {
                job: "aim job",
                input: "limits.yaw",
                value: 4.0,
                most: std::f32::consts::PI,
            },
        ),
    ];
    for (a, want) in cases {
        assert_eq!(aim(&j, &a).unwrap_err(), want);
    }
    let limit = Aim { limits: AimLimits { yaw: 1.0, pitch: -0.5 }, ..Default::default() };
    assert_eq!(
        aim(&j, &limit).unwrap_err().to_string(),
        "aim job: input limits.pitch is -0.5, outside [0, 3.1415927]"
    );
    let mut bad = head();
    bad.x_axis.y = f32::NAN;
    assert_eq!(aim(&bad, &Aim::default()).unwrap_err(), named("joint"));
}

#[test]
fn the_forward_ray_from_the_offset_passes_through_the_target_with_up_toward_the_pole() {
    let j = head();
    for (i, p) in points(200, 11).into_iter().enumerate() {
        let target = j.w_axis.truncate() + p * 3.0;
        let offset = if i % 2 == 0 { Vec3::ZERO } else { Vec3::new(0.0, 0.08, 0.1) };
        if (target - j.w_axis.truncate()).length() < 0.5 {
            continue;
        }
        let a = Aim { target, offset, pole: Vec3::new(0.2, 1.0, 0.1), ..Default::default() };
        let (c, reached) = aim(&j, &a).unwrap();
        assert!(reached);
        let turned = j * Mat4::from_quat(c);
        let origin = turned.transform_point3(offset);
        let dir = turned.transform_vector3(Vec3::Z).normalize();
        // atan2 of the cross and dot products: acos near 1 cannot resolve angles under 3e-4 rad.
        let to = (target - origin).normalize();
        let miss = dir.cross(to).length().atan2(dir.dot(to));
        assert!(miss <= 1e-5, "target {target}, offset {offset}: the aim misses by {miss} rad");
        // Up leans toward the pole: in the plane of the aim line and the pole, on its side.
        let line = dir;
        let up = turned.transform_vector3(Vec3::Y);
        let up_off = up - line * up.dot(line);
        let pole_off = a.pole - line * a.pole.dot(line);
        assert!(up_off.normalize().dot(pole_off.normalize()) > 1.0 - 1e-4, "target {target}");
    }
}

/// A target across the world (1e16 to 3e38 away: past what `f32` squares) is aimed at along
/// its line, the offset included, as a near one is; before stop 65 the head did not turn.
#[test]
fn a_target_across_the_world_is_aimed_at_along_its_line() {
    let j = head();
    let at = j.w_axis.truncate();
    let dir = Vec3::new(0.6, -0.3, -0.74).normalize();
    for far in [1e16f32, 1.8446743e19, 3.3e20, 1e30, 3e38] {
        for offset in [Vec3::ZERO, Vec3::new(0.0, 0.08, 0.1)] {
            let a =
                Aim { target: at + dir * far, offset, pole: Vec3::new(0.2, 1.0, 0.1), ..Default::default() };
            let (c, reached) = aim(&j, &a).unwrap();
            assert!(reached, "{far} away");
            let turned = (j * Mat4::from_quat(c)).transform_vector3(Vec3::Z).normalize();
            let miss = turned.cross(dir).length().atan2(turned.dot(dir));
            assert!(miss <= 1e-5, "{far} away, offset {offset}: the aim misses its line by {miss} rad");
        }
    }
}

#[test]
fn aim_limits_hold_yaw_and_pitch_and_weight_zero_is_the_identity() {
    let j = Mat4::from_translation(Vec3::new(0.0, 1.6, 0.0));
    let limits = AimLimits { yaw: 0.5, pitch: 0.2 };
    // Far to the side and above: both limits bite.
    let a = Aim { target: j.w_axis.truncate() + Vec3::new(5.0, 3.0, 1.0), limits, ..Default::default() };
    let (c, reached) = aim(&j, &a).unwrap();
    assert!(!reached, "held by the limits");
    let d = c * Vec3::Z;
    let yaw = d.x.atan2(d.z);
    let pitch = d.y.atan2((d.x * d.x + d.z * d.z).sqrt());
    assert!((yaw - 0.5).abs() < 1e-4 && (pitch - 0.2).abs() < 1e-4, "yaw {yaw} pitch {pitch}");
    // Within the limits: reached.
    let a = Aim { target: j.w_axis.truncate() + Vec3::new(0.3, 0.1, 2.0), limits, ..Default::default() };
    assert!(aim(&j, &a).unwrap().1);
    // Weight 0 and between.
    let (zero, r) = aim(&j, &Aim { weight: 0.0, ..Default::default() }).unwrap();
    assert_eq!(zero, Quat::IDENTITY);
    assert!(!r);
    let (full, _) = aim(&j, &Aim::default()).unwrap();
    let (half, _) = aim(&j, &Aim { weight: 0.5, ..Default::default() }).unwrap();
    assert!((half.angle_between(Quat::IDENTITY) - 0.5 * full.angle_between(Quat::IDENTITY)).abs() < 1e-4);
}

/// Yaw limits under and past a quarter turn, pitch limits, targets all the way round: a
/// direction within both limits is aimed at exactly (and reached), one past a limit is held on
/// it, on its own side. Limits past a quarter turn hold targets behind the joint (the comparison
/// of the forward part against the limit's cosine changes sign there).
#[test]
fn aim_limits_hold_all_the_way_round_under_and_past_a_quarter_turn() {
    let j = Mat4::from_translation(Vec3::new(0.0, 1.6, 0.0));
    let at = j.w_axis.truncate();
    for (yaw_limit, pitch_limit) in [(0.3f32, 0.2f32), (1.2, 0.6), (2.0, 1.0), (2.8, 1.4)] {
        let limits = AimLimits { yaw: yaw_limit, pitch: pitch_limit };
        for k in 0..72 {
            // Yaw from -pi to pi in 5-degree steps (offset half a step: never exactly a limit),
            // pitch a third of the limit inside or 0.3 outside it (under a quarter turn).
            let yaw = -std::f32::consts::PI + (k as f32 + 0.5) * std::f32::consts::PI / 36.0;
            for pitch in [pitch_limit / 3.0, -(pitch_limit + 0.3).min(1.5)] {
                let dir = Vec3::new(yaw.sin() * pitch.cos(), pitch.sin(), yaw.cos() * pitch.cos());
                let a = Aim { target: at + dir * 3.0, limits, ..Default::default() };
                let (c, reached) = aim(&j, &a).unwrap();
                let d = c * Vec3::Z;
                let (got_yaw, got_pitch) = (d.x.atan2(d.z), d.y.atan2((d.x * d.x + d.z * d.z).sqrt()));
                let inside = yaw.abs() <= yaw_limit && pitch.abs() <= pitch_limit;
                let want_yaw = yaw.clamp(-yaw_limit, yaw_limit);
                let want_pitch = pitch.clamp(-pitch_limit, pitch_limit);
                let what = format!("limits {yaw_limit}/{pitch_limit}, target yaw {yaw} pitch {pitch}");
                assert_eq!(reached, inside, "{what}");
                assert!((got_yaw - want_yaw).abs() < 1e-4, "{what}: yaw {got_yaw}, want {want_yaw}");
                assert!(
                    (got_pitch - want_pitch).abs() < 1e-4,
                    "{what}: pitch {got_pitch}, want {want_pitch}"
                );
            }
        }
    }
}

#[test]
fn hostile_aims_give_finite_corrections() {
    let j = head();
    let at = j.w_axis.truncate();
    let cases = [
        Aim { target: at, ..Default::default() },
        Aim { target: at, offset: Vec3::new(0.0, 0.1, 0.1), ..Default::default() },
        // Inside the offset's reach: not reachable.
        Aim {
            target: at + Vec3::new(0.0, 0.0, 0.01),
            offset: Vec3::new(0.0, 0.5, 0.0),
            ..Default::default()
        },
        Aim { target: Vec3::splat(1e30), ..Default::default() },
        Aim { up: Vec3::Z, ..Default::default() },
        Aim { pole: Vec3::ZERO, ..Default::default() },
        Aim { pole: Vec3::new(1.0, 2.0, 3.0) - at, ..Default::default() },
        Aim { target: at - Vec3::Z * 2.0, limits: AimLimits { yaw: 0.0, pitch: 0.0 }, ..Default::default() },
        Aim { twist: 1e9, ..Default::default() },
    ];
    for (i, a) in cases.iter().enumerate() {
        let (c, _) = aim(&j, a).unwrap();
        assert!(c.is_finite() && c.is_normalized(), "case {i}: {c}");
    }
    let (_, reached) = aim(&j, &cases[2]).unwrap();
    assert!(!reached, "a target inside the offset's reach is not reached");
}

// ---- The TwoBoneIk node: a graph's leg reaching a target through the Animator.

mod node {
    use std::collections::HashMap;
    use std::sync::Arc;

    use glam::{Mat4, Vec3};
    use marrow_engine::animator::{Animator, AnimatorSettings};
    use marrow_engine::clip::Clip;
    use marrow_engine::graph::{AnimGraph, GraphError, NodeKind, ParamValue, compile};
    use marrow_engine::math::Transform;
    use marrow_engine::pose::RigPoseMut;
    use marrow_engine::synthetic::{mocap_like_clip, mocap_skeleton};

    fn leg(start: &str, mid: &str, end: &str) -> NodeKind {
        NodeKind::TwoBoneIk {
            start: start.into(),
            mid: mid.into(),
            end: end.into(),
            x: 0.25,
            y: 0.25,
            z: 0.2,
            target_bone: String::new(),
            pole: Vec3::Z,
            mid_axis: Vec3::X,
            soften: 1.0,
            weight: 1.0,
        }
    }

    /// A walk clip into a TwoBoneIk on the left leg into the Output; the target's x driven by a
    /// parameter `reach_x`.
    fn graph(kind: NodeKind) -> AnimGraph {
        let mut g = AnimGraph::new();
        g.add_parameter("reach_x", ParamValue::Float(0.25));
        let c = g.add_node(NodeKind::Clip { clip: "walk".into(), speed: 1.0, looping: true }, [0.0, 0.0]);
        let ik = g.add_node(kind, [200.0, 0.0]);
        let x = g.add_node(NodeKind::Parameter { name: "reach_x".into() }, [0.0, 200.0]);
        let o = g.add_node(NodeKind::Output, [400.0, 0.0]);
        g.connect(c, ik, "pose");
        g.connect(x, ik, "x");
        g.connect(ik, o, "pose");
        g
    }

    #[test]
    fn a_two_bone_ik_node_puts_the_foot_on_its_target_and_follows_its_parameter() {
        let sk = Arc::new(mocap_skeleton());
        let mut lib: HashMap<String, Arc<Clip>> = HashMap::new();
        lib.insert("walk".into(), Arc::new(mocap_like_clip(&sk, "walk", 60, 30.0, 3)));
        let program = compile(&graph(leg("LeftHip", "LeftKnee", "LeftAnkle")), &sk, &lib).expect("compiles");
        let settings = AnimatorSettings {
            graph: Some(Arc::new(program)),
            speed: 1.0,
            play_on_start: true,
            ..Default::default()
        };
        let mut anim = Animator::new(sk.clone(), settings);
        let n = sk.bone_count();
        let (mut local, mut model, mut palette) =
            (vec![Transform::IDENTITY; n], vec![Mat4::IDENTITY; n], vec![Mat4::IDENTITY; n]);
        let ankle = sk.index_of("LeftAnkle").unwrap();
        let toe = sk.index_of("LeftToe").unwrap();
        for (step, x) in [0.25, 0.3, 0.2].into_iter().enumerate() {
            anim.current_graph_mut().unwrap().set_parameter(0, ParamValue::Float(x));
            anim.advance(0.1 * step as f32);
            anim.evaluate(RigPoseMut { local: &mut local, model: &mut model, palette: &mut palette })
                .unwrap();
            let target = Vec3::new(x, 0.25, 0.2);
            let at = model[ankle].w_axis.truncate();
            assert!(at.distance(target) < 1e-4, "x {x}: the ankle is at {at}, the target {target}");
            // The toe comes along: its offset from the ankle, in the ankle's frame, is the bind's.
            let toe_local = model[ankle].inverse() * model[toe];
            assert!((toe_local.w_axis.truncate() - sk.bind_pose[toe].translation).length() < 1e-4);
        }
    }

    #[test]
    fn a_two_bone_ik_node_on_bones_that_are_not_a_chain_does_not_compile() {
        let sk = mocap_skeleton();
        let mut lib: HashMap<String, Arc<Clip>> = HashMap::new();
        lib.insert("walk".into(), Arc::new(mocap_like_clip(&sk, "walk", 10, 30.0, 3)));
        for (start, mid, end) in [("LeftKnee", "LeftHip", "LeftAnkle"), ("LeftHip", "RightKnee", "LeftAnkle")]
        {
            let errors = compile(&graph(leg(start, mid, end)), &sk, &lib).unwrap_err();
            assert!(
                errors
                    .iter()
                    .any(|e| matches!(e, GraphError::BadValue { what, .. } if what.contains("not a chain"))),
                "{errors:?}"
            );
        }
        let errors = compile(&graph(leg("LeftHip", "LeftKnee", "Nope")), &sk, &lib).unwrap_err();
        assert!(
            errors.iter().any(|e| matches!(e, GraphError::UnknownBone { bone, .. } if bone == "Nope")),
            "{errors:?}"
        );
    }
}

// ---- The LookAt node: a head turned toward a target through the Animator.

mod look_at_node {
    use std::collections::HashMap;
    use std::sync::Arc;

    use glam::{Mat4, Vec3};
    use marrow_engine::animator::{Animator, AnimatorSettings};
    use marrow_engine::clip::Clip;
    use marrow_engine::graph::{AnimGraph, GraphError, LookLink, NodeKind, compile};
    use marrow_engine::math::Transform;
    use marrow_engine::pose::RigPoseMut;
    use marrow_engine::skeleton::Skeleton;
    use marrow_engine::synthetic::{mocap_like_clip, mocap_skeleton};

    fn look(bone: &str, target: Vec3, yaw: f32) -> NodeKind {
        NodeKind::LookAt {
            bone: bone.into(),
            x: target.x,
            y: target.y,
            z: target.z,
            target_bone: String::new(),
            forward: Vec3::Z,
            up: Vec3::Y,
            offset: Vec3::ZERO,
            yaw,
            pitch: std::f32::consts::PI,
            chain: Vec::new(),
            weight: 1.0,
        }
    }

    /// `look` with the turn shared by `links` (bone, share) above the head.
    fn look_chain(target: Vec3, links: &[(&str, f32)]) -> NodeKind {
        let mut k = look("Head", target, std::f32::consts::PI);
        if let NodeKind::LookAt { chain, .. } = &mut k {
            *chain = links.iter().map(|(b, s)| LookLink { bone: (*b).into(), share: *s }).collect();
        }
        k
    }

    /// The capture's model pose after a LookAt `kind` at 0.2 s of its walk.
    fn posed(kind: NodeKind) -> (Vec<Mat4>, Vec<Transform>, Skeleton) {
        let sk = Arc::new(mocap_skeleton());
        let mut lib: HashMap<String, Arc<Clip>> = HashMap::new();
        lib.insert("walk".into(), Arc::new(mocap_like_clip(&sk, "walk", 30, 30.0, 5)));
        let program = compile(&graph(kind), &sk, &lib).expect("compiles");
        let settings = AnimatorSettings { graph: Some(Arc::new(program)), ..Default::default() };
        let mut anim = Animator::new(sk.clone(), settings);
        let n = sk.bone_count();
        let (mut local, mut model, mut palette) =
            (vec![Transform::IDENTITY; n], vec![Mat4::IDENTITY; n], vec![Mat4::IDENTITY; n]);
        anim.advance(0.2);
        anim.evaluate(RigPoseMut { local: &mut local, model: &mut model, palette: &mut palette }).unwrap();
        (model, local, (*sk).clone())
    }

    #[test]
    fn a_look_at_chain_shares_the_turn_down_the_spine_and_the_head_still_looks_at_the_target() {
        let target = Vec3::new(1.5, 2.2, 2.0);
        let (_, alone_local, sk) = posed(look("Head", target, std::f32::consts::PI));
        let (model, local, _) = posed(look_chain(target, &[("Chest", 0.3), ("Neck", 0.5)]));
        let head = sk.index_of("Head").unwrap();
        let at = model[head].w_axis.truncate();
        let forward = model[head].transform_vector3(Vec3::Z).normalize();
        let to = (target - at).normalize();
        let miss = forward.cross(to).length().atan2(forward.dot(to));
        assert!(miss < 1e-3, "the head looks {miss} rad off its target");
        let angle = |a: glam::Quat, b: glam::Quat| 2.0 * (a * b.inverse()).xyz().length();
        for bone in ["Chest", "Neck"] {
            let b = sk.index_of(bone).unwrap();
            let turned = angle(local[b].rotation, alone_local[b].rotation);
            assert!(turned > 0.02, "{bone} shares the turn: {turned} rad");
        }
        // The head turns less of its own when the spine and neck have taken their shares.
        let mut still = look("Head", target, std::f32::consts::PI);
        if let NodeKind::LookAt { weight, .. } = &mut still {
            *weight = 0.0;
        }
        let (_, walk_local, _) = posed(still);
        let alone_turn = angle(alone_local[head].rotation, walk_local[head].rotation);
        let chain_turn = angle(local[head].rotation, walk_local[head].rotation);
        assert!(chain_turn < alone_turn, "the head turned {chain_turn} with the chain, {alone_turn} alone");
    }

    #[test]
    fn a_look_at_chain_out_of_order_or_with_a_bad_share_does_not_compile() {
        let sk = mocap_skeleton();
        let mut lib: HashMap<String, Arc<Clip>> = HashMap::new();
        lib.insert("walk".into(), Arc::new(mocap_like_clip(&sk, "walk", 10, 30.0, 5)));
        for (links, says) in [
            (vec![("Neck", 0.5), ("Chest", 0.3)], "is not above"),
            (vec![("Chest", 1.5)], "share"),
            (vec![("LeftKnee", 0.5)], "is not above"),
            (vec![("Chest", 0.1); 5], "at most"),
        ] {
            let errors = compile(&graph(look_chain(Vec3::ONE, &links)), &sk, &lib).unwrap_err();
            assert!(errors.iter().any(|e| e.to_string().contains(says)), "{links:?}: {errors:?}");
        }
    }

    fn graph(kind: NodeKind) -> AnimGraph {
        let mut g = AnimGraph::new();
        let c = g.add_node(NodeKind::Clip { clip: "walk".into(), speed: 1.0, looping: true }, [0.0, 0.0]);
        let l = g.add_node(kind, [200.0, 0.0]);
        let o = g.add_node(NodeKind::Output, [400.0, 0.0]);
        g.connect(c, l, "pose");
        g.connect(l, o, "pose");
        g
    }

    fn head_forward(kind: NodeKind) -> (Vec3, Vec3) {
        let sk = Arc::new(mocap_skeleton());
        let mut lib: HashMap<String, Arc<Clip>> = HashMap::new();
        lib.insert("walk".into(), Arc::new(mocap_like_clip(&sk, "walk", 30, 30.0, 5)));
        let program = compile(&graph(kind), &sk, &lib).expect("compiles");
        let settings = AnimatorSettings {
            graph: Some(Arc::new(program)),
            speed: 1.0,
            play_on_start: true,
            ..Default::default()
        };
        let mut anim = Animator::new(sk.clone(), settings);
        let n = sk.bone_count();
        let (mut local, mut model, mut palette) =
            (vec![Transform::IDENTITY; n], vec![Mat4::IDENTITY; n], vec![Mat4::IDENTITY; n]);
        anim.advance(0.2);
        anim.evaluate(RigPoseMut { local: &mut local, model: &mut model, palette: &mut palette }).unwrap();
        let head = model[sk.index_of("Head").unwrap()];
        (head.w_axis.truncate(), head.transform_vector3(Vec3::Z).normalize())
    }

    #[test]
    fn a_look_at_node_turns_the_head_to_its_target_within_its_limits() {
        let target = Vec3::new(1.0, 2.0, 3.0);
        let (at, forward) = head_forward(look("Head", target, std::f32::consts::PI));
        let to = (target - at).normalize();
        let miss = forward.cross(to).length().atan2(forward.dot(to));
        assert!(miss < 1e-4, "the head looks {miss} rad off its target");
        // Behind the character with a 30 degree yaw limit: it cannot look there.
        let behind = Vec3::new(0.0, 1.6, -5.0);
        let (at, forward) = head_forward(look("Head", behind, 0.5));
        let to = (behind - at).normalize();
        assert!(forward.dot(to) < 0.0, "held by the limit");
    }

    #[test]
    fn a_look_at_node_with_a_bad_bone_or_limit_does_not_compile() {
        let sk = mocap_skeleton();
        let mut lib: HashMap<String, Arc<Clip>> = HashMap::new();
        lib.insert("walk".into(), Arc::new(mocap_like_clip(&sk, "walk", 10, 30.0, 5)));
        let errors = compile(&graph(look("Nope", Vec3::ONE, 1.0)), &sk, &lib).unwrap_err();
        assert!(errors.iter().any(|e| matches!(e, GraphError::UnknownBone { bone, .. } if bone == "Nope")));
        let errors = compile(&graph(look("Head", Vec3::ONE, 4.0)), &sk, &lib).unwrap_err();
        assert!(
            errors
                .iter()
                .any(|e| matches!(e, GraphError::BadValue { what, .. } if what.contains("yaw limit"))),
            "{errors:?}"
        );
    }
}

// ---- The FootPlant node: a walk authored on flat ground kept on a sloped plane.

mod foot_plant_node {
    use std::collections::HashMap;
    use std::sync::Arc;

    use glam::{Mat4, Quat, Vec3};
    use marrow_engine::animator::{Animator, AnimatorSettings};
    use marrow_engine::clip::Clip;
    use marrow_engine::graph::{AnimGraph, GraphError, NodeKind, ParamValue, compile};
    use marrow_engine::math::Transform;
    use marrow_engine::pose::RigPoseMut;
    use marrow_engine::skeleton::Skeleton;
    use marrow_engine::synthetic::{mocap_like_clip, mocap_skeleton};

    /// A FootPlant on the capture's legs below `hips`, the left leg's bones `left`.
    fn custom(hips: &str, left: [&str; 3], plane: (f32, f32), limits: (f32, f32), weight: f32) -> NodeKind {
        NodeKind::FootPlant {
            hips: hips.into(),
            left: left.map(String::from),
            right: ["RightHip".into(), "RightKnee".into(), "RightAnkle".into()],
            height: plane.0,
            slope: plane.1,
            max_lift: limits.0,
            max_drop: limits.1,
            mid_axis: Vec3::X,
            weight,
        }
    }

    const LEFT: [&str; 3] = ["LeftHip", "LeftKnee", "LeftAnkle"];

    fn plant(height: f32, slope: f32, weight: f32) -> NodeKind {
        custom("Hips", LEFT, (height, slope), (100.0, 100.0), weight)
    }

    /// The walk into a FootPlant (its slope driven by a parameter `slope`) into the Output.
    fn graph(kind: Option<NodeKind>) -> AnimGraph {
        let mut g = AnimGraph::new();
        g.add_parameter("slope", ParamValue::Float(0.15));
        let c = g.add_node(NodeKind::Clip { clip: "walk".into(), speed: 1.0, looping: true }, [0.0, 0.0]);
        let o = g.add_node(NodeKind::Output, [400.0, 0.0]);
        match kind {
            Some(k) => {
                let p = g.add_node(k, [200.0, 0.0]);
                let s = g.add_node(NodeKind::Parameter { name: "slope".into() }, [0.0, 200.0]);
                g.connect(c, p, "pose");
                g.connect(s, p, "slope");
                g.connect(p, o, "pose");
            }
            None => {
                g.connect(c, o, "pose");
            }
        }
        g
    }

    fn animator(sk: &Arc<Skeleton>, kind: Option<NodeKind>) -> Animator {
        let mut lib: HashMap<String, Arc<Clip>> = HashMap::new();
        lib.insert("walk".into(), Arc::new(mocap_like_clip(sk, "walk", 120, 30.0, 5)));
        let program = compile(&graph(kind), sk, &lib).expect("compiles");
        let settings = AnimatorSettings { graph: Some(Arc::new(program)), ..Default::default() };
        Animator::new(sk.clone(), settings)
    }

    fn pose(a: &mut Animator, n: usize) -> Vec<Mat4> {
        let (mut local, mut model, mut palette) =
            (vec![Transform::IDENTITY; n], vec![Mat4::IDENTITY; n], vec![Mat4::IDENTITY; n]);
        a.evaluate(RigPoseMut { local: &mut local, model: &mut model, palette: &mut palette }).unwrap();
        model
    }

    #[test]
    fn both_feet_stay_on_a_sloped_plane_through_a_walk_cycle() {
        let sk = Arc::new(mocap_skeleton());
        let n = sk.bone_count();
        let (height, slope) = (-0.3, 0.15);
        let mut flat = animator(&sk, None);
        let mut planted = animator(&sk, Some(plant(height, 0.0, 1.0)));
        planted.current_graph_mut().unwrap().set_float("slope", slope);
        let ankles = ["LeftAnkle", "RightAnkle"].map(|b| sk.index_of(b).unwrap());
        let hips = sk.index_of("Hips").unwrap();
        let ground = |p: Vec3| height + slope.tan() * p.z;
        // Two seconds of the 4 s walk, every tick: both feet on the plane as they were on the floor.
        for tick in 0..120 {
            flat.advance(1.0 / 60.0);
            planted.advance(1.0 / 60.0);
            let (f, p) = (pose(&mut flat, n), pose(&mut planted, n));
            let mut offsets = [0.0f32; 2];
            for (k, &a) in ankles.iter().enumerate() {
                let (was, is) = (f[a].w_axis.truncate(), p[a].w_axis.truncate());
                offsets[k] = ground(was);
                let above = is.y - ground(is);
                assert!(
                    (above - was.y).abs() < 1e-3
                        && (is.x - was.x).abs() < 1e-3
                        && (is.z - was.z).abs() < 1e-3,
                    "tick {tick}, ankle {a}: {is} ({above} above the plane), on the floor {was}"
                );
                // The foot keeps its orientation, tilted onto the plane.
                let (_, rw, _) = f[a].to_scale_rotation_translation();
                let (_, ri, _) = p[a].to_scale_rotation_translation();
                let want = Quat::from_rotation_x(-slope) * rw;
                let off = 2.0 * (ri * want.inverse()).xyz().length();
                assert!(off < 1e-3, "tick {tick}, ankle {a}: the foot turned {off} rad off the plane");
            }
            // The hips went down (or up) by the lower foot's offset.
            let drop = p[hips].w_axis.y - f[hips].w_axis.y;
            assert!((drop - offsets[0].min(offsets[1])).abs() < 1e-4, "tick {tick}: hips moved {drop}");
        }
    }

    #[test]
    fn weight_zero_leaves_the_walk_and_limits_hold_the_feet() {
        let sk = Arc::new(mocap_skeleton());
        let n = sk.bone_count();
        let mut flat = animator(&sk, None);
        let mut off = animator(&sk, Some(plant(0.5, 0.0, 0.0)));
        off.current_graph_mut().unwrap().set_float("slope", 0.0);
        let mut held = animator(&sk, Some(custom("Hips", LEFT, (0.5, 0.0), (0.1, 0.0), 1.0)));
        held.current_graph_mut().unwrap().set_float("slope", 0.0);
        let ankle = sk.index_of("LeftAnkle").unwrap();
        for _ in 0..20 {
            for a in [&mut flat, &mut off, &mut held] {
                a.advance(1.0 / 60.0);
            }
            let (f, o, h) = (pose(&mut flat, n), pose(&mut off, n), pose(&mut held, n));
            assert_eq!(f, o, "weight 0 changes nothing");
            let lift = h[ankle].w_axis.y - f[ankle].w_axis.y;
            assert!((lift - 0.1).abs() < 1e-3, "a plane 0.5 up lifts the foot only by max_lift: {lift}");
        }
    }

    #[test]
    fn a_foot_plant_on_bones_that_are_not_legs_below_the_hips_does_not_compile() {
        let sk = mocap_skeleton();
        let mut lib: HashMap<String, Arc<Clip>> = HashMap::new();
        lib.insert("walk".into(), Arc::new(mocap_like_clip(&sk, "walk", 10, 30.0, 3)));
        let bad = |kind: NodeKind, says: &str| {
            let errors = compile(&graph(Some(kind)), &sk, &lib).unwrap_err();
            assert!(errors.iter().any(|e| e.to_string().contains(says)), "expected {says:?} in {errors:?}");
        };
        bad(custom("Hips", ["LeftKnee", "LeftHip", "LeftAnkle"], (0.0, 0.0), (1.0, 1.0), 1.0), "not a chain");
        bad(custom("LeftKnee", LEFT, (0.0, 0.0), (1.0, 1.0), 1.0), "not below the hips");
        bad(custom("Hips", LEFT, (0.0, 0.0), (1.0, -1.0), 1.0), "max_drop");
        bad(custom("Hips", LEFT, (0.0, 2.0), (1.0, 1.0), 1.0), "slope");
        let errors =
            compile(&graph(Some(custom("Nope", LEFT, (0.0, 0.0), (1.0, 1.0), 1.0))), &sk, &lib).unwrap_err();
        assert!(errors.iter().any(|e| matches!(e, GraphError::UnknownBone { bone, .. } if bone == "Nope")));
    }
}

// ---- Targets that follow a bone of the rig.

mod target_bone {
    use std::collections::HashMap;
    use std::sync::Arc;

    use glam::{Mat4, Vec3};
    use marrow_engine::animator::{Animator, AnimatorSettings};
    use marrow_engine::clip::Clip;
    use marrow_engine::graph::{AnimGraph, GraphError, NodeKind, compile};
    use marrow_engine::math::Transform;
    use marrow_engine::pose::RigPoseMut;
    use marrow_engine::synthetic::{mocap_like_clip, mocap_skeleton};

    fn run(kinds: Vec<NodeKind>, seconds: f32) -> Result<Vec<Mat4>, Vec<GraphError>> {
        let sk = Arc::new(mocap_skeleton());
        let mut lib: HashMap<String, Arc<Clip>> = HashMap::new();
        lib.insert("walk".into(), Arc::new(mocap_like_clip(&sk, "walk", 60, 30.0, 9)));
        let mut g = AnimGraph::new();
        let mut last =
            g.add_node(NodeKind::Clip { clip: "walk".into(), speed: 1.0, looping: true }, [0.0, 0.0]);
        for k in kinds {
            let n = g.add_node(k, [0.0, 0.0]);
            g.connect(last, n, "pose");
            last = n;
        }
        let o = g.add_node(NodeKind::Output, [0.0, 0.0]);
        g.connect(last, o, "pose");
        let program = compile(&g, &sk, &lib)?;
        let mut anim = Animator::new(
            sk.clone(),
            AnimatorSettings { graph: Some(Arc::new(program)), ..Default::default() },
        );
        let n = sk.bone_count();
        let (mut local, mut model, mut palette) =
            (vec![Transform::IDENTITY; n], vec![Mat4::IDENTITY; n], vec![Mat4::IDENTITY; n]);
        anim.advance(seconds);
        anim.evaluate(RigPoseMut { local: &mut local, model: &mut model, palette: &mut palette }).unwrap();
        Ok(model)
    }

    fn reach(target_bone: &str, offset: Vec3) -> NodeKind {
        NodeKind::TwoBoneIk {
            start: "LeftHip".into(),
            mid: "LeftKnee".into(),
            end: "LeftAnkle".into(),
            x: offset.x,
            y: offset.y,
            z: offset.z,
            target_bone: target_bone.into(),
            pole: Vec3::Z,
            mid_axis: Vec3::X,
            soften: 1.0,
            weight: 1.0,
        }
    }

    #[test]
    fn a_target_that_follows_a_bone_is_read_in_that_bones_frame_each_tick() {
        let sk = mocap_skeleton();
        let (left, right) = (sk.index_of("LeftAnkle").unwrap(), sk.index_of("RightAnkle").unwrap());
        let head = sk.index_of("Head").unwrap();
        let offset = Vec3::new(0.15, 0.05, 0.0);
        for seconds in [0.1, 0.7, 1.3] {
            let model = run(vec![reach("RightAnkle", offset)], seconds).unwrap();
            // The left ankle sits at the offset from the right one, as the right one moves.
            let want = model[right].transform_point3(offset);
            let at = model[left].w_axis.truncate();
            let p = |b: &str| model[sk.index_of(b).unwrap()].w_axis.truncate();
            let (hip, knee) = (p("LeftHip"), p("LeftKnee"));
            let reach = hip.distance(knee) + knee.distance(at);
            if hip.distance(want) < 0.999 * reach {
                assert!(
                    at.distance(want) < 1e-3,
                    "{seconds} s: the left ankle at {at}, the target at {want}"
                );
            } else {
                // Out of reach: the leg points straight at it.
                let (a, b) = ((at - hip).normalize(), (want - hip).normalize());
                assert!(
                    a.angle_between(b) < 2e-3,
                    "{seconds} s: the leg points {} rad off",
                    a.angle_between(b)
                );
            }
            // The head looks at the right ankle.
            let look = NodeKind::LookAt {
                bone: "Head".into(),
                x: 0.0,
                y: 0.0,
                z: 0.0,
                target_bone: "RightAnkle".into(),
                forward: Vec3::Z,
                up: Vec3::Y,
                offset: Vec3::ZERO,
                yaw: std::f32::consts::PI,
                pitch: std::f32::consts::PI,
                chain: Vec::new(),
                weight: 1.0,
            };
            let model = run(vec![look], seconds).unwrap();
            let forward = model[head].transform_vector3(Vec3::Z).normalize();
            let to = (model[right].w_axis.truncate() - model[head].w_axis.truncate()).normalize();
            let miss = forward.cross(to).length().atan2(forward.dot(to));
            assert!(miss < 1e-3, "{seconds} s: the head looks {miss} rad off the ankle");
        }
        let errors = run(vec![reach("Nope", Vec3::ZERO)], 0.1).unwrap_err();
        assert!(errors.iter().any(|e| matches!(e, GraphError::UnknownBone { bone, .. } if bone == "Nope")));
    }
}

// ---- Targets the scene drives: an entity's position into a graph's parameters.

mod target_entity {
    use std::collections::HashMap;
    use std::sync::Arc;

    use glam::{Quat, Vec3};
    use marrow_engine::animator::{Animator, AnimatorSettings};
    use marrow_engine::clip::Clip;
    use marrow_engine::graph::{AnimGraph, NodeKind, ParamValue, compile};
    use marrow_engine::math::Transform;
    use marrow_engine::scene::{AnimatorComponent, BoundTarget, TargetBinding, World};
    use marrow_engine::synthetic::{mocap_like_clip, mocap_skeleton};

    /// A capture rig (turned and moved in the world) whose head looks at the graph's
    /// `look_x`, `look_y`, `look_z`, bound to the entity `Target`.
    fn scene() -> (World, marrow_engine::scene::Entity, marrow_engine::scene::Entity) {
        let sk = Arc::new(mocap_skeleton());
        let mut lib: HashMap<String, Arc<Clip>> = HashMap::new();
        lib.insert("walk".into(), Arc::new(mocap_like_clip(&sk, "walk", 60, 30.0, 9)));
        let mut g = AnimGraph::new();
        let c = g.add_node(NodeKind::Clip { clip: "walk".into(), speed: 1.0, looping: true }, [0.0, 0.0]);
        let l = g.add_node(
            NodeKind::LookAt {
                bone: "Head".into(),
                x: 0.0,
                y: 0.0,
                z: 0.0,
                target_bone: String::new(),
                forward: Vec3::Z,
                up: Vec3::Y,
                offset: Vec3::ZERO,
                yaw: std::f32::consts::PI,
                pitch: std::f32::consts::PI,
                chain: Vec::new(),
                weight: 1.0,
            },
            [0.0, 0.0],
        );
        for (k, pin) in ["x", "y", "z"].into_iter().enumerate() {
            let name = format!("look_{pin}");
            g.add_parameter(name.clone(), ParamValue::Float(k as f32));
            let p = g.add_node(NodeKind::Parameter { name }, [0.0, 0.0]);
            g.connect(p, l, pin);
        }
        let o = g.add_node(NodeKind::Output, [0.0, 0.0]);
        g.connect(c, l, "pose");
        g.connect(l, o, "pose");
        let program = Arc::new(compile(&g, &sk, &lib).unwrap());
        let mut w = World::new();
        let rig = w.spawn("Walker");
        let placed = Transform {
            translation: Vec3::new(2.0, 0.0, -1.0),
            rotation: Quat::from_rotation_y(0.7),
            ..Transform::IDENTITY
        };
        w.set_transform(rig, Some(placed)).unwrap();
        let animator = Animator::new(sk, AnimatorSettings { graph: Some(program), ..Default::default() });
        let binding = TargetBinding { parameter: "look".into(), entity: "Target".into() };
        let component = AnimatorComponent {
            rig: "capture".into(),
            clip: None,
            graph: Some("look.graph.ron".into()),
            looping: None,
            root_motion: None,
            targets: vec![BoundTarget::from(&binding)],
            animator,
        };
        w.set_animator(rig, component).unwrap();
        let target = w.spawn("Target");
        (w, rig, target)
    }

    #[test]
    fn a_bound_entity_drives_the_look_target_as_it_moves() {
        let (mut w, rig, target) = scene();
        let head = mocap_skeleton().index_of("Head").unwrap();
        for spot in [Vec3::new(3.0, 1.8, 2.0), Vec3::new(-1.0, 0.5, 0.0), Vec3::new(2.5, 2.5, -4.0)] {
            w.set_transform(target, Some(Transform::from_translation(spot))).unwrap();
            // The frame that sees the target moved poses the rig with it.
            w.frame(1, 1.0 / 60.0);
            let rig_world = w.world_matrix(rig).unwrap();
            let model = w.rig_pose(rig).unwrap().model;
            let head_world = rig_world * model[head];
            let forward = head_world.transform_vector3(Vec3::Z).normalize();
            let to = (spot - head_world.w_axis.truncate()).normalize();
            let miss = forward.cross(to).length().atan2(forward.dot(to));
            assert!(miss < 1e-3, "looking at {spot}: {miss} rad off");
            let g = w.animator(rig).unwrap().current_graph().unwrap();
            let local = rig_world.inverse().transform_point3(spot);
            assert!((g.parameter("look_x").unwrap().as_f32() - local.x).abs() < 1e-4, "in the rig's space");
        }
        // The entity gone: the parameters keep their values and the fault is named once.
        w.despawn(target).unwrap();
        for _ in 0..3 {
            w.frame(1, 1.0 / 60.0);
        }
        assert_eq!(w.faults().count_containing("target entity"), 1, "{:?}", w.faults().entries());
    }
}

// ---- Hostile inputs through the new solves: finite poses, no panic.

mod hostile_solves {
    use std::collections::HashMap;
    use std::sync::Arc;

    use glam::{Mat4, Vec3};
    use marrow_engine::animator::{Animator, AnimatorSettings};
    use marrow_engine::clip::Clip;
    use marrow_engine::graph::{AnimGraph, LookLink, NodeKind, ParamValue, compile};
    use marrow_engine::math::Transform;
    use marrow_engine::pose::RigPoseMut;
    use marrow_engine::skeleton::{NO_PARENT, Skeleton};
    use marrow_engine::synthetic::dense_clip;

    /// Hips, two legs whose knees sit on their hips (zero-length thighs), a spine and a head on
    /// the spine's origin (a zero-length neck).
    fn broken_rig() -> Skeleton {
        let t = |x: f32, y: f32, z: f32| Transform::from_translation(Vec3::new(x, y, z));
        Skeleton::from_bind_pose(
            "broken",
            vec![
                ("hips".into(), NO_PARENT, t(0.0, 1.0, 0.0)),
                ("thigh_l".into(), 0, t(-0.1, 0.0, 0.0)),
                ("shin_l".into(), 1, t(0.0, 0.0, 0.0)),
                ("foot_l".into(), 2, t(0.0, -0.9, 0.0)),
                ("thigh_r".into(), 0, t(0.1, 0.0, 0.0)),
                ("shin_r".into(), 4, t(0.0, -0.5, 0.0)),
                ("foot_r".into(), 5, t(0.0, -0.5, 0.0)),
                ("spine".into(), 0, t(0.0, 0.3, 0.0)),
                ("head".into(), 7, t(0.0, 0.0, 0.0)),
            ],
        )
        .unwrap()
    }

    #[test]
    fn foot_plants_and_look_chains_stay_finite_on_degenerate_rigs_and_wild_parameters() {
        let sk = Arc::new(broken_rig());
        let mut lib: HashMap<String, Arc<Clip>> = HashMap::new();
        lib.insert("c".into(), Arc::new(dense_clip(&sk, "c", 1.0, 30.0, 3)));
        let mut g = AnimGraph::new();
        for p in ["height", "slope", "lx", "ly", "lz"] {
            g.add_parameter(p, ParamValue::Float(0.0));
        }
        let c = g.add_node(NodeKind::Clip { clip: "c".into(), speed: 1.0, looping: true }, [0.0, 0.0]);
        let leg = |s: &str| [format!("thigh_{s}"), format!("shin_{s}"), format!("foot_{s}")];
        let plant = g.add_node(
            NodeKind::FootPlant {
                hips: "hips".into(),
                left: leg("l"),
                right: leg("r"),
                height: 0.0,
                slope: 0.0,
                max_lift: 1.0,
                max_drop: 1.0,
                mid_axis: Vec3::X,
                weight: 1.0,
            },
            [0.0, 0.0],
        );
        let look = g.add_node(
            NodeKind::LookAt {
                bone: "head".into(),
                x: 0.0,
                y: 0.0,
                z: 0.0,
                target_bone: String::new(),
                forward: Vec3::Z,
                up: Vec3::Y,
                offset: Vec3::new(0.0, 0.1, 0.1),
                yaw: 1.0,
                pitch: 1.0,
                chain: vec![LookLink { bone: "spine".into(), share: 0.5 }],
                weight: 1.0,
            },
            [0.0, 0.0],
        );
        let o = g.add_node(NodeKind::Output, [0.0, 0.0]);
        for (name, node, pin) in [
            ("height", plant, "height"),
            ("slope", plant, "slope"),
            ("lx", look, "x"),
            ("ly", look, "y"),
            ("lz", look, "z"),
        ] {
            let p = g.add_node(NodeKind::Parameter { name: name.into() }, [0.0, 0.0]);
            g.connect(p, node, pin);
        }
        g.connect(c, plant, "pose");
        g.connect(plant, look, "pose");
        g.connect(look, o, "pose");
        let program = Arc::new(compile(&g, &sk, &lib).expect("a degenerate rig still compiles"));
        let mut a =
            Animator::new(sk.clone(), AnimatorSettings { graph: Some(program), ..Default::default() });
        let n = sk.bone_count();
        let (mut local, mut model, mut palette) =
            (vec![Transform::IDENTITY; n], vec![Mat4::IDENTITY; n], vec![Mat4::IDENTITY; n]);
        let wild = [0.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1e30, -1e30, 1.0];
        for (i, &v) in wild.iter().enumerate() {
            let g = a.current_graph_mut().unwrap();
            g.set_float("height", v);
            g.set_float("slope", wild[(i + 1) % wild.len()]);
            // The look target: on the head itself, at NaN, at infinity, far away.
            g.set_float("lx", wild[(i + 2) % wild.len()]);
            g.set_float("ly", if i == 0 { 1.3 } else { v });
            g.set_float("lz", wild[(i + 3) % wild.len()]);
            a.advance(1.0 / 30.0);
            a.evaluate(RigPoseMut { local: &mut local, model: &mut model, palette: &mut palette }).unwrap();
            assert!(model.iter().all(|m| m.is_finite()), "step {i} ({v}): a pose went non-finite");
            assert!(local.iter().all(|t| t.rotation.is_finite() && t.translation.is_finite()), "step {i}");
        }
    }
}

// ---- Vector parameters: a `vec3` parameter on a TwoBoneIk's or LookAt's `target` pin.

mod vector_target {
    use std::collections::HashMap;
    use std::sync::Arc;

    use glam::Vec3;
    use marrow_engine::animator::{Animator, AnimatorSettings};
    use marrow_engine::clip::Clip;
    use marrow_engine::graph::file::{load_graph, save_graph};
    use marrow_engine::graph::machine::{Condition, State, StateMachine, StateSource, Test, Transition};
    use marrow_engine::graph::{
        AdjustEntry, AdjustOp, AnimGraph, Drive, NodeKind, ParamValue, PinType, compile,
    };
    use marrow_engine::synthetic::{mocap_like_clip, mocap_skeleton};

    use crate::support::RigBuffers;

    fn leg() -> NodeKind {
        NodeKind::TwoBoneIk {
            start: "LeftHip".into(),
            mid: "LeftKnee".into(),
            end: "LeftAnkle".into(),
            x: 9.0,
            y: 9.0,
            z: 9.0,
            target_bone: String::new(),
            pole: Vec3::Z,
            mid_axis: Vec3::X,
            soften: 1.0,
            weight: 1.0,
        }
    }

    /// A walk into a TwoBoneIk whose `target` is the vector parameter `reach` (its x, y, z
    /// constants far off: the vector takes their place) into the Output.
    fn graph() -> (AnimGraph, [marrow_engine::graph::NodeId; 2]) {
        let mut g = AnimGraph::new();
        g.add_parameter("reach", ParamValue::Vec3(Vec3::new(0.25, 0.25, 0.2)));
        let c = g.add_node(NodeKind::Clip { clip: "walk".into(), speed: 1.0, looping: true }, [0.0, 0.0]);
        let ik = g.add_node(leg(), [200.0, 0.0]);
        let p = g.add_node(NodeKind::Parameter { name: "reach".into() }, [0.0, 200.0]);
        let o = g.add_node(NodeKind::Output, [400.0, 0.0]);
        g.connect(c, ik, "pose");
        g.connect(p, ik, "target");
        g.connect(ik, o, "pose");
        (g, [ik, p])
    }

    fn library(sk: &marrow_engine::skeleton::Skeleton) -> HashMap<String, Arc<Clip>> {
        HashMap::from([("walk".to_owned(), Arc::new(mocap_like_clip(sk, "walk", 60, 30.0, 3)))])
    }

    #[test]
    fn a_vector_parameter_on_the_target_pin_puts_the_foot_on_it_as_it_moves() {
        let sk = Arc::new(mocap_skeleton());
        let program = compile(&graph().0, &sk, &library(&sk)).expect("compiles");
        let settings = AnimatorSettings {
            graph: Some(Arc::new(program)),
            speed: 1.0,
            play_on_start: true,
            ..Default::default()
        };
        let mut anim = Animator::new(sk.clone(), settings);
        let mut rig = RigBuffers::new(sk.bone_count());
        let ankle = sk.index_of("LeftAnkle").unwrap();
        for (step, target) in
            [Vec3::new(0.25, 0.25, 0.2), Vec3::new(0.3, 0.35, 0.1), Vec3::new(0.15, 0.2, 0.3)]
                .into_iter()
                .enumerate()
        {
            if step > 0 {
                assert!(anim.current_graph_mut().unwrap().set_vec3("reach", target));
            }
            anim.advance(0.1);
            anim.evaluate(rig.rig()).unwrap();
            let at = rig.model[ankle].w_axis.truncate();
            assert!(at.distance(target) < 1e-4, "the ankle is at {at}, the target {target}");
        }
        // A float cannot be set into a vector parameter (nor the reverse).
        let g = anim.current_graph_mut().unwrap();
        assert!(!g.set_float("reach", 1.0));
        assert_eq!(g.parameter("reach"), Some(ParamValue::Vec3(Vec3::new(0.15, 0.2, 0.3))));
    }

    #[test]
    fn vectors_and_floats_do_not_mix_and_each_mix_is_named() {
        let sk = mocap_skeleton();
        let lib = library(&sk);
        let (good, [ik, p]) = graph();
        assert_eq!(good.output_type(&good.node(p).unwrap().kind), Some(PinType::Vec3));
        // The vector on a float pin.
        let mut g = good.clone();
        g.connections.retain(|c| c.pin != "target");
        g.connect(p, ik, "x");
        let e =
            compile(&g, &sk, &lib).unwrap_err().iter().map(|e| e.to_string()).collect::<Vec<_>>().join(" | ");
        assert!(e.contains("input \"x\" takes a float") && e.contains("gives vec3"), "{e}");
        // A float on the vector pin.
        let mut g = good.clone();
        g.add_parameter("r", ParamValue::Float(0.0));
        let f = g.add_node(NodeKind::Parameter { name: "r".into() }, [0.0, 300.0]);
        g.connections.retain(|c| c.pin != "target");
        g.connect(f, ik, "target");
        let e =
            compile(&g, &sk, &lib).unwrap_err().iter().map(|e| e.to_string()).collect::<Vec<_>>().join(" | ");
        assert!(e.contains("input \"target\" takes a vec3") && e.contains("gives float"), "{e}");
        // An Adjust amount reading the vector, a transition testing it, a non-finite default.
        let mut g = good.clone();
        let adjust = g.add_node(
            NodeKind::Adjust {
                entries: vec![AdjustEntry {
                    bone: "Hips".into(),
                    op: AdjustOp::Rotate { axis: Vec3::X },
                    amount: Drive::Parameter("reach".into()),
                }],
            },
            [300.0, 0.0],
        );
        let out = g.nodes.iter().find(|n| matches!(n.kind, NodeKind::Output)).unwrap().id;
        g.connections.retain(|c| c.to != out);
        g.connect(ik, adjust, "pose");
        g.connect(adjust, out, "pose");
        let e =
            compile(&g, &sk, &lib).unwrap_err().iter().map(|e| e.to_string()).collect::<Vec<_>>().join(" | ");
        assert!(e.contains("amount reads \"reach\", a vec3, where a float is wanted"), "{e}");
        let mut g = good.clone();
        let walk = |n: &str| State {
            name: n.into(),
            source: StateSource::Clip { clip: "walk".into(), speed: 1.0, looping: true },
            at: [0.0, 0.0],
        };
        let mut t = Transition::new(Some("A"), "B");
        t.conditions = vec![Condition { parameter: "reach".into(), test: Test::Greater(0.5) }];
        let machine = StateMachine {
            states: vec![walk("A"), walk("B")],
            entry: "A".into(),
            transitions: vec![t],
            any_at: [0.0, 0.0],
        };
        let m = g.add_node(NodeKind::StateMachine { machine }, [0.0, -200.0]);
        g.connections.retain(|c| !(c.to == ik && c.pin == "pose"));
        g.connect(m, ik, "pose");
        let e =
            compile(&g, &sk, &lib).unwrap_err().iter().map(|e| e.to_string()).collect::<Vec<_>>().join(" | ");
        assert!(e.contains("tests \"reach\" as a float") && e.contains("it is a vec3"), "{e}");
        let mut g = good.clone();
        g.add_parameter("reach", ParamValue::Vec3(Vec3::new(0.0, f32::NAN, 0.0)));
        let e =
            compile(&g, &sk, &lib).unwrap_err().iter().map(|e| e.to_string()).collect::<Vec<_>>().join(" | ");
        assert!(e.contains("parameter \"reach\"") && e.contains("not a finite number"), "{e}");
    }

    #[test]
    fn a_vector_parameter_round_trips_through_a_graph_file() {
        let (g, _) = graph();
        let text = save_graph(&g).unwrap();
        assert!(text.contains("Vec3((0.25, 0.25, 0.2))"), "{text}");
        let (back, faults) = load_graph(&text).unwrap();
        assert!(faults.is_empty(), "{faults:?}");
        assert_eq!(back, g);
        assert_eq!(save_graph(&back).unwrap(), text);
    }
}
