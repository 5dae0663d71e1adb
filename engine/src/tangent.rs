//! Tangent modes of CUBICSPLINE keys, as a curve editor authors them (Blender's handle types,
//! Unity's tangent modes), and the tangents the computed modes give.
//!
//! A mode is authored data kept beside a track's keys ([`crate::track::Track::tangent_modes`]);
//! sampling never reads it. The computed modes ([`TangentMode::is_computed`]) say how a key's
//! in and out tangents (slopes in value per second, glTF's CUBICSPLINE convention) follow from
//! its neighbours, and an editor recomputes them ([`compute_tangents`]) whenever a key of the
//! track moves, is added or deleted, or changes value:
//!
//! - Auto ([`TangentMode::Auto`]): `(v[i+1] - v[i-1]) / (t[i+1] - t[i-1])` per component (the
//!   non-uniform Catmull-Rom slope, the same on both sides).
//! - Auto Clamped ([`TangentMode::AutoClamped`]): Auto, but zero at a local extremum (a key not strictly
//!   between its neighbours' values), and otherwise no steeper than three times the gentler of
//!   its two segments' slopes (Fritsch and Carlson's bound), so a segment between two such keys
//!   is monotone and never overshoots its keys.
//! - Flat ([`TangentMode::Flat`]): a zero slope.
//! - The first and the last key of a track get zero slopes in the Auto modes, as Blender's auto
//!   handles do on a curve held constant past its ends (a clip holds its end keys).
//!
//! [`TangentMode::Free`] (Blender's Free, Unity's Broken: in and out independent) and
//! [`TangentMode::Aligned`] (one slope on both sides; dragging one side turns the other) keep
//! the tangents they were given. A track with no modes holds Free keys.
//!
//! Rotations are computed on the quaternion's four components, each neighbour taken on the
//! key's hemisphere; the track normalizes what it samples. Auto Clamped on a rotation bounds the
//! quaternion components, not the Euler angles an editor may plot.
//!
//! Not here: sampling (see [`crate::track`]), drawing handles, deciding when to recompute.

use glam::{Quat, Vec3, Vec4};

use crate::track::Animatable;

/// How a CUBICSPLINE key's tangents are set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum TangentMode {
    /// In and out tangents independent, kept as given (Blender's Free, Unity's Broken). What a
    /// key of a track without modes is.
    #[default]
    Free,
    /// One slope on both sides, kept as given (Blender's Aligned, Unity's Free Smooth).
    Aligned,
    /// Computed: the Catmull-Rom slope through the neighbours.
    Auto,
    /// Computed: Auto, flat at extrema and bounded so no segment overshoots.
    AutoClamped,
    /// Computed: zero slope.
    Flat,
}

impl TangentMode {
    /// Every mode, in menu order.
    pub const ALL: [TangentMode; 5] = [
        TangentMode::AutoClamped,
        TangentMode::Auto,
        TangentMode::Flat,
        TangentMode::Aligned,
        TangentMode::Free,
    ];

    /// True for the modes whose tangents follow from the keys ([`compute_tangents`]).
    pub fn is_computed(self) -> bool {
        matches!(self, TangentMode::Auto | TangentMode::AutoClamped | TangentMode::Flat)
    }

    /// The name an editor shows.
    pub fn name(self) -> &'static str {
        match self {
            TangentMode::Free => "Free (Broken)",
            TangentMode::Aligned => "Aligned",
            TangentMode::Auto => "Auto",
            TangentMode::AutoClamped => "Auto Clamped",
            TangentMode::Flat => "Flat",
        }
    }
}

/// The slope a computed mode gives key `i` of one scalar component, from its neighbours'
/// times and values (`prev`, `next`: `None` at the track's ends). See the module docs.
pub fn scalar_slope(
    mode: TangentMode,
    prev: Option<(f32, f32)>,
    (t, v): (f32, f32),
    next: Option<(f32, f32)>,
) -> f32 {
    let (Some((t0, v0)), Some((t1, v1))) = (prev, next) else { return 0.0 };
    if mode == TangentMode::Flat || !(t1 - t0 > 0.0) {
        return 0.0;
    }
    let auto = (v1 - v0) / (t1 - t0);
    if mode != TangentMode::AutoClamped {
        return if auto.is_finite() { auto } else { 0.0 };
    }
    let (h0, h1) = (t - t0, t1 - t);
    if (v - v0) * (v1 - v) <= 0.0 || !(h0 > 0.0 && h1 > 0.0) {
        return 0.0;
    }
    let (d0, d1) = ((v - v0) / h0, (v1 - v) / h1);
    let bound = 3.0 * d0.abs().min(d1.abs());
    let m = auto.clamp(-bound, bound);
    if m.is_finite() { m } else { 0.0 }
}

/// A value type whose tangents [`compute_tangents`] can set: its components as four lanes.
pub trait TangentLanes: Animatable {
    /// The components (unused lanes zero).
    fn lanes(self) -> Vec4;
    /// From the components.
    fn from_lanes(v: Vec4) -> Self;
    /// `other` as seen from `self` (a rotation's neighbour on `self`'s hemisphere).
    fn beside(self, other: Self) -> Self {
        other
    }
}

impl TangentLanes for Vec3 {
    fn lanes(self) -> Vec4 {
        self.extend(0.0)
    }
    fn from_lanes(v: Vec4) -> Self {
        v.truncate()
    }
}

impl TangentLanes for Quat {
    fn lanes(self) -> Vec4 {
        Vec4::from(self)
    }
    fn from_lanes(v: Vec4) -> Self {
        Quat::from_vec4(v)
    }
    fn beside(self, other: Self) -> Self {
        if self.dot(other) < 0.0 { -other } else { other }
    }
}

impl TangentLanes for f32 {
    fn lanes(self) -> Vec4 {
        Vec4::new(self, 0.0, 0.0, 0.0)
    }
    fn from_lanes(v: Vec4) -> Self {
        v.x
    }
}

/// The tangent (both sides) a computed mode gives key `i` of `times`/`values`.
pub fn computed_tangent<T: TangentLanes>(mode: TangentMode, times: &[f32], values: &[T], i: usize) -> T {
    let v = values[i];
    let prev = i.checked_sub(1).map(|j| (times[j], v.beside(values[j]).lanes()));
    let next = (i + 1 < values.len()).then(|| (times[i + 1], v.beside(values[i + 1]).lanes()));
    let here = v.lanes();
    let lane = |c: usize| {
        scalar_slope(mode, prev.map(|(t, x)| (t, x[c])), (times[i], here[c]), next.map(|(t, x)| (t, x[c])))
    };
    T::from_lanes(Vec4::new(lane(0), lane(1), lane(2), lane(3)))
}

/// Sets the in and out tangents of every key whose mode is computed (`modes` parallel to the
/// keys; empty: every key Free, nothing changes). Keys of the other modes keep theirs.
pub fn compute_tangents<T: TangentLanes>(
    times: &[f32],
    values: &[T],
    modes: &[TangentMode],
    tin: &mut [T],
    tout: &mut [T],
) {
    for (i, mode) in modes.iter().enumerate().take(values.len().min(times.len())) {
        if mode.is_computed() {
            let m = computed_tangent(*mode, times, values, i);
            tin[i] = m;
            tout[i] = m;
        }
    }
}

/// Puts every rotation on the hemisphere of the one before it (`q` and `-q` are one
/// orientation), negating its tangents with it; returns how many keys were negated. Shortest-path
/// interpolation gives the same rotations after; a cubic segment across a flip stops passing
/// through the flip.
pub fn make_sign_continuous(values: &mut [Quat], tin: &mut [Quat], tout: &mut [Quat]) -> usize {
    let mut n = 0;
    for i in 1..values.len() {
        if values[i].dot(values[i - 1]) < 0.0 {
            values[i] = -values[i];
            if let Some(t) = tin.get_mut(i) {
                *t = -*t;
            }
            if let Some(t) = tout.get_mut(i) {
                *t = -*t;
            }
            n += 1;
        }
    }
    n
}

/// Euler angles (radians, glam's `EulerRot::XYZ`) of `q`, chosen among the equivalent triples
/// (the other solution `(x + pi, pi - y, z + pi)`, and whole turns added to any angle) as the
/// one nearest `near`: what a plotted Euler curve takes so it has no 360 degree jumps.
pub fn euler_near(q: Quat, near: Vec3) -> Vec3 {
    use std::f32::consts::{PI, TAU};
    let (x, y, z) = q.to_euler(glam::EulerRot::XYZ);
    let wrap = |a: f32, to: f32| a + ((to - a) / TAU).round() * TAU;
    let pick = |e: Vec3| Vec3::new(wrap(e.x, near.x), wrap(e.y, near.y), wrap(e.z, near.z));
    let a = pick(Vec3::new(x, y, z));
    let b = pick(Vec3::new(x + PI, PI - y, z + PI));
    if (b - near).length_squared() < (a - near).length_squared() { b } else { a }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::track::Track;

    const T: [f32; 5] = [0.0, 1.0, 2.0, 4.0, 5.0];

    #[test]
    fn auto_is_the_catmull_rom_slope_and_flat_ends() {
        let v = [0.0, 1.0, 3.0, 4.0, 8.0];
        assert_eq!(scalar_slope(TangentMode::Auto, Some((0.0, 0.0)), (1.0, 1.0), Some((2.0, 3.0))), 1.5);
        assert_eq!(
            scalar_slope(TangentMode::Auto, Some((2.0, 3.0)), (4.0, 4.0), Some((5.0, 8.0))),
            5.0 / 3.0
        );
        assert_eq!(
            scalar_slope(TangentMode::Auto, None, (0.0, 0.0), Some((1.0, 1.0))),
            0.0,
            "first key flat"
        );
        assert_eq!(scalar_slope(TangentMode::Auto, Some((4.0, 4.0)), (5.0, 8.0), None), 0.0, "last key flat");
        let vals: Vec<Vec3> = v.iter().map(|x| Vec3::new(*x, -*x, 2.0 * x)).collect();
        let m = computed_tangent(TangentMode::Auto, &T, &vals, 2);
        assert_eq!(m, Vec3::new(1.0, -1.0, 2.0), "(4 - 1) / (4 - 1) per component");
        assert_eq!(computed_tangent(TangentMode::Flat, &T, &vals, 2), Vec3::ZERO);
    }

    #[test]
    fn auto_clamped_is_flat_at_an_extremum_and_bounded_elsewhere() {
        // A peak at key 1: Auto slopes it, Auto Clamped does not.
        let peak = (Some((0.0, 0.0)), (1.0, 2.0), Some((3.0, 1.0)));
        assert_eq!(scalar_slope(TangentMode::Auto, peak.0, peak.1, peak.2), 1.0 / 3.0);
        assert_eq!(scalar_slope(TangentMode::AutoClamped, peak.0, peak.1, peak.2), 0.0);
        // A key equal to a neighbour is an extremum too.
        assert_eq!(
            scalar_slope(TangentMode::AutoClamped, Some((0.0, 1.0)), (1.0, 1.0), Some((2.0, 5.0))),
            0.0
        );
        // Monotone but a steep then a very gentle segment: Auto (2.55) is clamped to 3 x 0.1.
        let (p, k, n) = (Some((0.0, 0.0)), (1.0, 5.0), Some((2.0, 5.1)));
        assert!((scalar_slope(TangentMode::Auto, p, k, n) - 2.55).abs() < 1e-6);
        assert!((scalar_slope(TangentMode::AutoClamped, p, k, n) - 0.3).abs() < 1e-6);
        // Unclamped in between: the Auto slope.
        assert_eq!(
            scalar_slope(TangentMode::AutoClamped, Some((0.0, 0.0)), (1.0, 1.0), Some((2.0, 3.0))),
            1.5
        );
    }

    /// The largest value a cubic track takes between its first and last key, sampled finely.
    fn sampled_range(track: &Track<Vec3>) -> (f32, f32) {
        let end = track.last_time().unwrap();
        (0..=2000)
            .map(|i| track.sample(end * i as f32 / 2000.0).unwrap().x)
            .fold((f32::MAX, f32::MIN), |(lo, hi), x| (lo.min(x), hi.max(x)))
    }

    fn cubic(times: &[f32], values: &[f32], mode: TangentMode) -> Track<Vec3> {
        let v: Vec<Vec3> = values.iter().map(|x| Vec3::new(*x, 0.0, 0.0)).collect();
        let modes = vec![mode; v.len()];
        let (mut tin, mut tout) = (vec![Vec3::ZERO; v.len()], vec![Vec3::ZERO; v.len()]);
        compute_tangents(times, &v, &modes, &mut tin, &mut tout);
        let mut t = Track::cubic_from_keys(times.to_vec(), tin, v, tout).unwrap();
        t.set_tangent_modes(modes).unwrap();
        t
    }

    #[test]
    fn auto_clamped_never_overshoots_where_auto_does() {
        // A step-like run: steep rise, then nearly level.
        let times = [0.0, 1.0, 2.0, 3.0, 4.0];
        let values = [0.0, 0.0, 10.0, 10.2, 10.2];
        let (lo, hi) = sampled_range(&cubic(&times, &values, TangentMode::Auto));
        assert!(hi > 10.21 || lo < -0.01, "Auto overshoots this data ({lo}, {hi})");
        let (lo, hi) = sampled_range(&cubic(&times, &values, TangentMode::AutoClamped));
        assert!(lo >= -1e-5 && hi <= 10.2 + 1e-5, "Auto Clamped stays within the keys: ({lo}, {hi})");
    }

    #[test]
    fn free_and_aligned_keys_keep_their_tangents() {
        let v = [Vec3::ZERO, Vec3::ONE, Vec3::ZERO];
        let modes = [TangentMode::Auto, TangentMode::Free, TangentMode::Aligned];
        let mut tin = [Vec3::splat(7.0); 3];
        let mut tout = [Vec3::splat(9.0); 3];
        compute_tangents(&[0.0, 1.0, 2.0], &v, &modes, &mut tin, &mut tout);
        assert_eq!((tin[0], tout[0]), (Vec3::ZERO, Vec3::ZERO), "the first key: flat");
        assert_eq!((tin[1], tout[1]), (Vec3::splat(7.0), Vec3::splat(9.0)));
        assert_eq!((tin[2], tout[2]), (Vec3::splat(7.0), Vec3::splat(9.0)));
    }

    #[test]
    fn rotation_neighbours_are_taken_on_the_keys_hemisphere() {
        let a = Quat::from_rotation_y(0.0);
        let b = Quat::from_rotation_y(0.4);
        let c = Quat::from_rotation_y(0.8);
        let times = [0.0, 1.0, 2.0];
        let plain = computed_tangent(TangentMode::Auto, &times, &[a, b, c], 1);
        let flipped = computed_tangent(TangentMode::Auto, &times, &[-a, b, -c], 1);
        assert!(Vec4::from(plain).abs_diff_eq(Vec4::from(flipped), 1e-6), "{plain:?} vs {flipped:?}");
    }

    #[test]
    fn sign_continuity_negates_keys_and_their_tangents() {
        let mut v = [Quat::IDENTITY, -Quat::from_rotation_x(0.2), Quat::from_rotation_x(0.4)];
        let mut tin = [Quat::IDENTITY; 3];
        let mut tout = [Quat::IDENTITY; 3];
        assert_eq!(make_sign_continuous(&mut v, &mut tin, &mut tout), 1);
        assert!(v.windows(2).all(|w| w[0].dot(w[1]) > 0.0));
        assert_eq!(tin[1], -Quat::IDENTITY);
        assert_eq!(tin[2], Quat::IDENTITY, "key 2 was already beside key 1 once it was negated");
    }

    #[test]
    fn euler_near_unwraps_whole_turns_and_the_other_solution() {
        let q = Quat::from_euler(glam::EulerRot::XYZ, 0.0, 0.0, 3.1);
        let near = Vec3::new(0.0, 0.0, 3.0);
        let e = euler_near(Quat::from_euler(glam::EulerRot::XYZ, 0.0, 0.0, 3.3), near);
        assert!((e.z - 3.3).abs() < 1e-4, "past pi, not -2.98: {e:?}");
        let e = euler_near(q, Vec3::new(0.0, 0.0, 3.1 + std::f32::consts::TAU));
        assert!((e.z - (3.1 + std::f32::consts::TAU)).abs() < 1e-4);
        // Whatever it picks is the same rotation.
        for near in [Vec3::ZERO, Vec3::new(3.0, 3.0, -3.0), Vec3::splat(20.0)] {
            let e = euler_near(q, near);
            let back = Quat::from_euler(glam::EulerRot::XYZ, e.x, e.y, e.z);
            assert!(back.dot(q).abs() > 1.0 - 1e-5);
        }
    }
}
