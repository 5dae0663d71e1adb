//! Reach: the largest magnitudes an imported scene can produce when it plays, bounded before it
//! plays, so that what the import (and `marrow check`) accepts evaluates to finite numbers at
//! every time of every animation, in `pose`, `render` and the editor alike.
//!
//! Each node's local transform is bounded over its rest value and every key (cubic tangents
//! included) of every animation that moves it; the bounds compound down the hierarchy (a child's
//! world scale is at most its parent's times its own; its reach adds its own translation, scaled).
//! A vertex's reach is its largest position plus the largest morph offsets its weights can make,
//! carried by the node (or, skinned, by each joint and inverse bind). Anything past
//! [`REACH_LIMIT`] is a fault naming the node or primitive. Bounds are computed in f64, in one
//! pass over nodes, keys and vertices. The FBX importer runs the same check on the scene it
//! builds ([`reach_faults`]).
//!
//! It does not bound values the runtime normalizes (rotations) or clamps, and it does not judge
//! whether large values are sensible: a scene a kilometre wide in millimetres is well inside.

use super::*;
use crate::track::Track;

/// The largest scale or distance a world transform, or a placed vertex, may reach. `f32` holds
/// 3.4e38; the room left covers the renderer's camera, projection and normal products.
pub(crate) const REACH_LIMIT: f64 = 1e30;

const SQRT3: f64 = 1.732_050_807_568_877_2;

/// The largest absolute component any time of `values` (with `in_tangents`/`out_tangents` for
/// cubic tracks) can take: the Hermite basis keeps a segment within its end values plus its
/// tangents times the segment length.
fn track_reach<T: crate::track::Animatable>(t: &Track<T>, component_max: impl Fn(&T) -> f64) -> f64 {
    let max = |vals: &[T]| vals.iter().map(&component_max).fold(0.0, f64::max);
    let mut r = max(t.values());
    if t.interpolation() == Interpolation::CubicSpline {
        let dt = t.times().windows(2).map(|w| f64::from(w[1] - w[0])).fold(0.0, f64::max);
        r += dt * (max(t.in_tangents()) + max(t.out_tangents()));
    }
    r
}

fn vec3_max(v: &Vec3) -> f64 {
    f64::from(v.abs().max_element())
}

/// A node's local bound: largest scale factor and largest translation length.
#[derive(Clone, Copy, Default)]
struct Local {
    scale: f64,
    translation: f64,
}

impl Local {
    fn grow(&mut self, translation: Option<&Track<Vec3>>, scale: Option<&Track<Vec3>>) {
        if let Some(t) = translation {
            self.translation = self.translation.max(SQRT3 * track_reach(t, vec3_max));
        }
        if let Some(s) = scale {
            self.scale = self.scale.max(track_reach(s, vec3_max));
        }
    }
}

/// Each node's local reach (largest scale and translation, at rest or animated) and its largest
/// |morph weight| per target.
fn animated_reach(nodes: &[Node], rigs: &[Rig], animations: &[Animation]) -> (Vec<Local>, Vec<Vec<f64>>) {
    let mut local: Vec<Local> = nodes
        .iter()
        .map(|nd| Local {
            scale: vec3_max(&nd.transform.scale),
            translation: f64::from(nd.transform.translation.length()),
        })
        .collect();
    // Largest |morph weight| per node and target.
    let mut weights: Vec<Vec<f64>> =
        nodes.iter().map(|nd| nd.morph_weights.iter().map(|w| f64::from(w.abs())).collect()).collect();
    for a in animations {
        for na in &a.nodes {
            if let Some(l) = local.get_mut(na.node) {
                l.grow(na.animation.translation.as_ref(), na.animation.scale.as_ref());
            }
        }
        for rc in &a.clips {
            let Some(rig) = rigs.get(rc.rig) else { continue };
            for (b, ch) in rc.clip.channels().iter().enumerate() {
                if let Some(l) = rig.bone_nodes.get(b).and_then(|&nd| local.get_mut(nd)) {
                    l.grow(ch.translation.as_ref(), ch.scale.as_ref());
                }
            }
        }
        for m in &a.morphs {
            let Some(w) = weights.get_mut(m.node) else { continue };
            for (k, t) in m.weights.iter().enumerate() {
                let r = track_reach(t, |v: &f32| f64::from(v.abs()));
                match w.get_mut(k) {
                    Some(x) => *x = x.max(r),
                    None => w.push(r),
                }
            }
        }
    }
    (local, weights)
}

/// The faults of every node whose world transform, every skin whose skinning matrices and every
/// primitive whose vertices can reach past [`REACH_LIMIT`] at some time of some animation, in
/// the order found (none: the scene plays finite). The glTF importer reports them with its
/// other faults; the FBX importer refuses a scene that has one.
pub(crate) fn reach_faults(
    nodes: &[Node],
    order: &[usize],
    meshes: &[Mesh],
    skins: &[Skin],
    rigs: &[Rig],
    animations: &[Animation],
) -> Vec<Fault> {
    let mut faults = Vec::new();
    let mut fault = |at: Location, message: String| faults.push(Fault::new(at, message));
    let n = nodes.len();
    let (local, weights) = animated_reach(nodes, rigs, animations);
    // World bounds, parents first: (scale, reach of the origin).
    let mut world = vec![(1.0f64, 0.0f64); n];
    let mut over = vec![false; n];
    for &i in order {
        let (ps, pt, parent_over) = match nodes[i].parent {
            Some(p) if p < n => (world[p].0, world[p].1, over[p]),
            _ => (1.0, 0.0, false),
        };
        let s = ps * local[i].scale;
        let t = pt + ps * local[i].translation;
        world[i] = (s, t);
        over[i] = parent_over || !(s <= REACH_LIMIT && t <= REACH_LIMIT);
        if over[i] && !parent_over {
            fault(
                Location::Node(i),
                format!(
                    "its world transform can reach a scale of {:.1e} and a distance of {:.1e} (its and its parents' translations, scales or matrices, at rest or animated, compound past the {REACH_LIMIT:.0e} that 32-bit floats leave room for)",
                    s, t
                ),
            );
        }
    }
    // Skinning matrices: joint world times inverse bind. With the joint's world bound (scale
    // `s`, distance `t`) and the inverse bind's linear part `L`, translation `T`, bottom row
    // `(r, w)`: the product's linear part is `world.linear L + world.t r` (at most
    // `s |L| + t |r|`) and its translation `world.linear T + world.t w` (at most
    // `s |T| + t |w|`). An inverse bind whose bottom row is not (0, 0, 0, 1) (a projective row
    // from a damaged or odd file) carries the joint's distance into every column.
    let skin_bound = |(s, t): (f64, f64), m: &Mat4| {
        // In f64: the squares of a bottom row of 1e35 pass what f32 holds.
        let sq = |v: Vec3| v.as_dvec3().length_squared();
        let linear = (sq(m.x_axis.truncate()) + sq(m.y_axis.truncate()) + sq(m.z_axis.truncate())).sqrt();
        let row = sq(Vec3::new(m.x_axis.w, m.y_axis.w, m.z_axis.w)).sqrt();
        (s * linear + t * row, s * sq(m.w_axis.truncate()).sqrt() + t * f64::from(m.w_axis.w.abs()))
    };
    // Per skin, each joint's skinning matrix bound (linear part, translation), found once for
    // the skin check and every primitive it skins.
    let joint_bounds: Vec<Vec<(f64, f64)>> = skins
        .iter()
        .map(|skin| {
            skin.joints
                .iter()
                .zip(&skin.inverse_bind)
                .filter(|(j, _)| **j < n && !over[**j])
                .map(|(&j, ib)| skin_bound(world[j], ib))
                .collect()
        })
        .collect();
    let mut skin_ok = vec![true; skins.len()];
    for (si, bounds) in joint_bounds.iter().enumerate() {
        let worst = bounds.iter().map(|&(linear, translation)| linear.max(translation)).fold(0.0, f64::max);
        if !(worst <= REACH_LIMIT) {
            skin_ok[si] = false;
            fault(
                Location::Skin(si),
                format!(
                    "its skinning matrices (joint world times inverse bind) can reach {worst:.1e}, past the {REACH_LIMIT:.0e} that 32-bit floats leave room for"
                ),
            );
        }
    }
    // Vertices, placed in the world.
    for (ni, nd) in nodes.iter().enumerate() {
        let Some(mesh) = nd.mesh.and_then(|m| meshes.get(m).map(|x| (m, x))) else { continue };
        if over[ni] {
            continue;
        }
        let (mi, mesh) = mesh;
        let w = &weights[ni];
        if let Some(k) = w.iter().position(|x| !(*x <= REACH_LIMIT)) {
            fault(
                Location::Node(ni),
                format!(
                    "its morph weight {k} can reach {:.1e} (default or animated, tangents included), past the {REACH_LIMIT:.0e} that 32-bit floats leave room for",
                    w[k]
                ),
            );
            continue;
        }
        for (pi, p) in mesh.primitives.iter().enumerate() {
            let max_len =
                |v: &[[f32; 3]]| v.iter().map(|x| vec3_max(&Vec3::from(*x))).fold(0.0, f64::max) * SQRT3;
            let morph: f64 = p
                .targets
                .iter()
                .enumerate()
                .map(|(k, t)| w.get(k).copied().unwrap_or(0.0) * max_len(&t.positions))
                .sum();
            let reach_p = max_len(&p.positions) + morph;
            let placed = match nd.skin.and_then(|si| joint_bounds.get(si).map(|b| (si, b))) {
                Some((si, _)) if !skin_ok[si] => continue,
                Some((_, bounds)) if p.skin.is_some() => bounds
                    .iter()
                    .map(|&(linear, translation)| linear * reach_p + translation)
                    .fold(0.0, f64::max),
                _ => world[ni].0 * reach_p + world[ni].1,
            };
            if !(placed <= REACH_LIMIT) {
                fault(
                    Location::Primitive { mesh: mi, primitive: pi },
                    format!(
                        "drawn by node {ni}, its vertices (positions, morph offsets times their weights, carried by the node or its joints) can reach {placed:.1e}, past the {REACH_LIMIT:.0e} that 32-bit floats leave room for"
                    ),
                );
            }
        }
    }
    faults
}
