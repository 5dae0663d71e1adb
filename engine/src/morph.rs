//! Morph targets on the CPU: the data ([`MorphTarget`]), the application job ([`MorphJob`]:
//! `base + sum(w_i * delta_i)`, normals and tangents renormalized with a fallback to the base
//! direction when the sum degenerates), and the per-instance weights ([`MorphState`]: clamped to
//! `[0, 1]`, an active-target count, and a version that moves only on a real change).
//!
//! Morphing runs before skinning. This module does not animate weights (weight tracks are
//! `Track<f32>`s, see [`crate::track`]) and does not upload anything to a GPU.

use glam::{Vec3, Vec3A};

/// One morph target's per-vertex deltas. An empty array means the target does not move that
/// attribute; otherwise it has one entry per vertex of its primitive.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MorphTarget {
    /// Position deltas.
    pub positions: Vec<[f32; 3]>,
    /// Normal deltas.
    pub normals: Vec<[f32; 3]>,
    /// Tangent deltas (xyz; the handedness `w` is never morphed).
    pub tangents: Vec<[f32; 3]>,
}

/// Why a [`MorphJob`] cannot run. Each variant names the input at fault.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum MorphError {
    /// An input or output array has the wrong length.
    #[error("morph job: {input} has {got} entries, expected {expected}")]
    Length {
        /// Which array (e.g. `target 2 normals`).
        input: String,
        /// Expected length.
        expected: usize,
        /// Actual length.
        got: usize,
    },
    /// A weight is NaN or infinite.
    #[error("morph job: weight {target} is {weight}, not a finite number")]
    NonFiniteWeight {
        /// Target index.
        target: usize,
        /// The weight.
        weight: f32,
    },
}

/// Applies weighted morph targets to a primitive's base attributes. Optional attributes are
/// passed as empty slices (then their output must be empty too). Allocates nothing.
#[derive(Debug)]
pub struct MorphJob<'a> {
    /// Base positions.
    pub base_positions: &'a [[f32; 3]],
    /// Base normals (or empty).
    pub base_normals: &'a [[f32; 3]],
    /// Base tangents with handedness in `w` (or empty).
    pub base_tangents: &'a [[f32; 4]],
    /// The targets.
    pub targets: &'a [MorphTarget],
    /// One weight per target (targets with weight 0 are skipped).
    pub weights: &'a [f32],
    /// Output positions (same length as `base_positions`).
    pub positions: &'a mut [[f32; 3]],
    /// Output normals (same length as `base_normals`).
    pub normals: &'a mut [[f32; 3]],
    /// Output tangents (same length as `base_tangents`).
    pub tangents: &'a mut [[f32; 4]],
}

fn len_check(input: impl FnOnce() -> String, expected: usize, got: usize) -> Result<(), MorphError> {
    if expected == got { Ok(()) } else { Err(MorphError::Length { input: input(), expected, got }) }
}

impl MorphJob<'_> {
    /// Checks that every array fits the vertex count and that the weights are finite.
    pub fn validate(&self) -> Result<(), MorphError> {
        let n = self.base_positions.len();
        len_check(|| "positions (output)".into(), n, self.positions.len())?;
        if !self.base_normals.is_empty() {
            len_check(|| "base normals".into(), n, self.base_normals.len())?;
        }
        len_check(|| "normals (output)".into(), self.base_normals.len(), self.normals.len())?;
        if !self.base_tangents.is_empty() {
            len_check(|| "base tangents".into(), n, self.base_tangents.len())?;
        }
        len_check(|| "tangents (output)".into(), self.base_tangents.len(), self.tangents.len())?;
        len_check(|| "weights".into(), self.targets.len(), self.weights.len())?;
        for (i, (t, &w)) in self.targets.iter().zip(self.weights).enumerate() {
            if !w.is_finite() {
                return Err(MorphError::NonFiniteWeight { target: i, weight: w });
            }
            for (name, len) in [
                ("positions", t.positions.len()),
                ("normals", t.normals.len()),
                ("tangents", t.tangents.len()),
            ] {
                if len != 0 {
                    len_check(|| format!("target {i} {name}"), n, len)?;
                }
            }
        }
        Ok(())
    }

    /// Validates, then writes `base + sum(w_i * delta_i)`; normals and tangents are renormalized
    /// (a degenerate sum keeps the base direction).
    pub fn run(self) -> Result<(), MorphError> {
        self.validate()?;
        self.positions.copy_from_slice(self.base_positions);
        self.normals.copy_from_slice(self.base_normals);
        self.tangents.copy_from_slice(self.base_tangents);
        let live = || self.targets.iter().zip(self.weights.iter().copied()).filter(|(_, w)| *w != 0.0);
        for (t, w) in live() {
            add_scaled(self.positions, &t.positions, w);
            if !self.normals.is_empty() {
                add_scaled(self.normals, &t.normals, w);
            }
            if !self.tangents.is_empty() && !t.tangents.is_empty() {
                for (o, d) in self.tangents.iter_mut().zip(&t.tangents) {
                    o[0] += w * d[0];
                    o[1] += w * d[1];
                    o[2] += w * d[2];
                }
            }
        }
        for (o, b) in self.normals.iter_mut().zip(self.base_normals) {
            *o = renormalize(Vec3::from(*o), Vec3::from(*b)).to_array();
        }
        for (o, b) in self.tangents.iter_mut().zip(self.base_tangents) {
            let v = renormalize(Vec3::new(o[0], o[1], o[2]), Vec3::new(b[0], b[1], b[2]));
            *o = [v.x, v.y, v.z, b[3]];
        }
        Ok(())
    }
}

#[inline]
fn add_scaled(out: &mut [[f32; 3]], deltas: &[[f32; 3]], w: f32) {
    for (o, d) in out.iter_mut().zip(deltas) {
        let v = Vec3A::from(*o) + Vec3A::from(*d) * w;
        *o = v.to_array();
    }
}

/// `v` normalized, or `base` normalized when `v` is (nearly) zero or not finite, or `base`
/// itself when that is degenerate too.
#[inline]
fn renormalize(v: Vec3, base: Vec3) -> Vec3 {
    let l2 = v.length_squared();
    if l2 > 1e-20 && l2.is_finite() { v / l2.sqrt() } else { base.try_normalize().unwrap_or(base) }
}

/// One instance's morph weights: clamped to `[0, 1]` (NaN becomes 0), the number of non-zero
/// (active) targets, and a version that changes only when a weight really changes. Version 0
/// is reserved for "never computed" in caches keyed by it; a new state starts at 1.
#[derive(Clone, Debug, PartialEq)]
pub struct MorphState {
    weights: Vec<f32>,
    active: usize,
    version: u64,
}

fn clamp_weight(w: f32) -> f32 {
    if w.is_nan() { 0.0 } else { w.clamp(0.0, 1.0) }
}

impl MorphState {
    /// A state holding `defaults` (clamped), at version 1.
    pub fn new(defaults: &[f32]) -> Self {
        let weights: Vec<f32> = defaults.iter().copied().map(clamp_weight).collect();
        let active = weights.iter().filter(|w| **w != 0.0).count();
        Self { weights, active, version: 1 }
    }

    /// The weights, one per target.
    pub fn weights(&self) -> &[f32] {
        &self.weights
    }

    /// How many weights are non-zero.
    pub fn active_count(&self) -> usize {
        self.active
    }

    /// The version: bumped by every call that changes a weight, never 0.
    pub fn version(&self) -> u64 {
        self.version
    }

    fn bump(&mut self) {
        self.version = self.version.wrapping_add(1).max(1);
        self.active = self.weights.iter().filter(|w| **w != 0.0).count();
    }

    /// Sets weight `target` (clamped). Returns true when the stored weight changed; false when it
    /// did not, or when there is no such target.
    pub fn set_weight(&mut self, target: usize, weight: f32) -> bool {
        let w = clamp_weight(weight);
        match self.weights.get_mut(target) {
            Some(slot) if slot.to_bits() != w.to_bits() => {
                *slot = w;
                self.bump();
                true
            }
            _ => false,
        }
    }

    /// Sets every weight from `weights` (clamped; extra entries are ignored, missing ones keep
    /// their value). Returns true when anything changed (the version then moves once).
    pub fn set_weights(&mut self, weights: &[f32]) -> bool {
        let mut changed = false;
        for (slot, &w) in self.weights.iter_mut().zip(weights) {
            let w = clamp_weight(w);
            if slot.to_bits() != w.to_bits() {
                *slot = w;
                changed = true;
            }
        }
        if changed {
            self.bump();
        }
        changed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn morph_sums_deltas_and_falls_back_on_degenerate_normals() {
        let targets = vec![
            MorphTarget {
                positions: vec![[1.0, 0.0, 0.0]],
                normals: vec![[0.0, -1.0, 0.0]],
                tangents: vec![],
            },
            MorphTarget { positions: vec![[0.0, 2.0, 0.0]], normals: vec![], tangents: vec![] },
        ];
        let mut p = [[0.0; 3]];
        let mut n = [[0.0; 3]];
        MorphJob {
            base_positions: &[[1.0, 1.0, 1.0]],
            base_normals: &[[0.0, 1.0, 0.0]],
            base_tangents: &[],
            targets: &targets,
            weights: &[1.0, 0.5],
            positions: &mut p,
            normals: &mut n,
            tangents: &mut [],
        }
        .run()
        .unwrap();
        assert_eq!(p, [[2.0, 2.0, 1.0]]);
        assert_eq!(n, [[0.0, 1.0, 0.0]], "a zero normal falls back to the base normal");
    }

    #[test]
    fn morph_state_clamps_counts_and_versions() {
        let mut s = MorphState::new(&[0.5, 2.0, -1.0]);
        assert_eq!(s.weights(), &[0.5, 1.0, 0.0]);
        assert_eq!((s.active_count(), s.version()), (2, 1));
        assert!(!s.set_weight(0, 0.5));
        assert!(!s.set_weights(&[0.5, 3.0]));
        assert_eq!(s.version(), 1);
        assert!(!s.set_weight(2, f32::NAN), "NaN clamps to 0, the stored value");
        assert!(s.set_weight(2, 0.25));
        assert_eq!((s.active_count(), s.version()), (3, 2));
        assert!(!s.set_weight(9, 1.0));
    }
}
