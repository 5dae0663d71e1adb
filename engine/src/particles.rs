//! Particle skinning: a point cloud bound to a skeleton's bone segments, posed with at most two
//! influences per particle, with damped springs that chase the skinned targets.
//!
//! Points arrive with no weights painted on, so the binding is derived from the skeleton:
//! [`bone_segments`] runs a segment from each bone's origin to each child's origin (in bind
//! space, where the rest points live), and a stub along the incoming direction for a bone with
//! no children, so a limb's tip binds to its last bone. [`bind_nearest`] binds each point to its
//! nearest segment's bone and, when another bone's segment is within `falloff` more distance, to
//! that one too, with a weight that falls smoothly from one half (equidistant: an elbow point
//! belongs half to each arm bone) to zero across the band. [`bind_grouped`] restricts each point
//! to a set of bones (a sword beside the head binds to the hand).
//!
//! Posing is a job ([`ParticlePoseJob`]): per particle two affine transforms and a lerp, with
//! [`ParticleMatrices`] computed once per pose and shared by every cloud on that rig; normals
//! turn with the dominant bone only (a direction, not a renormalized blend). [`skin_one`] is the
//! same arithmetic for one point (where is the hand now). [`ParticleSprings`] lets each particle
//! follow its target through a damped spring, integrated implicitly so that long ticks stay
//! stable; per-group masses make heavy matter lag and light matter overshoot.
//! [`sample_surface`] scatters seeded, area-weighted points over a triangle mesh.
//!
//! This module does not draw (see the renderer's particle pass), read files or choose times; it
//! allocates only when a binding, a matrix set or a spring state is created.

use glam::{Affine3A, Mat3A, Mat4, Vec3, Vec3A};
use rayon::prelude::*;

use crate::math;
use crate::pose::affine_product;
use crate::skeleton::Skeleton;

/// Why a particle job cannot run. Every variant names the input at fault.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ParticleError {
    /// A particle names a bone the matrices do not have (a binding made for another rig).
    #[error(
        "particle {particle} is bound to bone {bone}, but the matrices hold {bones} bones (a binding for another rig?)"
    )]
    BoneOutOfRange {
        /// The particle.
        particle: usize,
        /// The bone it names.
        bone: u16,
        /// How many bones the matrices hold.
        bones: usize,
    },
    /// Two arrays that must be parallel are not.
    #[error("{job}: {input} has {got} entries, expected {expected}")]
    Length {
        /// The job.
        job: &'static str,
        /// Which array.
        input: &'static str,
        /// Expected length.
        expected: usize,
        /// Actual length.
        got: usize,
    },
    /// A spring step of a non-finite or negative duration, or non-finite settings.
    #[error("spring step: {what} is {value}, which must be a finite non-negative number")]
    BadSetting {
        /// The setting.
        what: &'static str,
        /// Its value.
        value: f32,
    },
}

/// One segment of a bone in bind space: from the bone's origin to a child's origin (or a stub).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BoneSegment {
    /// The bone the segment belongs to.
    pub bone: u16,
    /// Start (the bone's origin).
    pub start: Vec3,
    /// End (a child's origin, or the stub's tip).
    pub end: Vec3,
}

/// A childless bone's stub, as a fraction of the segment that led to it.
pub const STUB_FRACTION: f32 = 0.5;

/// The bones' origins in bind space (`inverse(inverseBind)`'s translation; a bone whose inverse
/// bind has no inverse sits at the origin).
pub fn bind_origins(skeleton: &Skeleton) -> Vec<Vec3> {
    skeleton.inverse_bind.iter().map(|ib| math::inverse_or_identity(ib).w_axis.truncate()).collect()
}

/// Every bone's segments in bind space: one per child (origin to the child's origin), or for a
/// bone with no children a stub along the direction it came from ([`STUB_FRACTION`] of that
/// segment; a lone root gets a zero-length segment at its origin).
pub fn bone_segments(skeleton: &Skeleton) -> Vec<BoneSegment> {
    let origin = bind_origins(skeleton);
    let n = origin.len().min(skeleton.parents.len());
    let mut has_child = vec![false; n];
    let mut out = Vec::with_capacity(n + 1);
    for b in 0..n {
        if let Some(p) = skeleton.parent(b).filter(|&p| p < n) {
            has_child[p] = true;
            out.push(BoneSegment { bone: p as u16, start: origin[p], end: origin[b] });
        }
    }
    for b in (0..n).filter(|&b| !has_child[b]) {
        let from = skeleton.parent(b).filter(|&p| p < n).map_or(origin[b], |p| origin[p]);
        let end = origin[b] + (origin[b] - from) * STUB_FRACTION;
        out.push(BoneSegment {
            bone: b as u16,
            start: origin[b],
            end: if end.is_finite() { end } else { origin[b] },
        });
    }
    out
}

fn distance_to_segment(p: Vec3A, a: Vec3A, ab: Vec3A, inv_len2: f32) -> f32 {
    let t = ((p - a).dot(ab) * inv_len2).clamp(0.0, 1.0);
    (p - (a + ab * t)).length()
}

/// One particle's influences: `bones[0]` with weight `1 - weight`, `bones[1]` with `weight`
/// (at most one half: `bones[0]` dominates).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Influence {
    /// The dominant bone, then the second (equal to the first for a rigid binding).
    pub bones: [u16; 2],
    /// The second bone's weight, in `[0, 0.5]`.
    pub weight: f32,
}

impl Influence {
    /// Both weights (`[1 - weight, weight]`), which sum to 1.
    pub fn weights(&self) -> [f32; 2] {
        [1.0 - self.weight, self.weight]
    }
}

/// A point cloud's binding to a skeleton: one [`Influence`] per point.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParticleBinding {
    /// Per point, its influences.
    pub influences: Vec<Influence>,
}

impl ParticleBinding {
    /// Number of bound points.
    pub fn len(&self) -> usize {
        self.influences.len()
    }

    /// True when no point is bound.
    pub fn is_empty(&self) -> bool {
        self.influences.is_empty()
    }
}

/// The second bone's weight for distances `d1 <= d2` across a band of `falloff`: one half when
/// equidistant, falling smoothly (smoothstep) to zero at `falloff` more distance.
pub fn band_weight(d1: f32, d2: f32, falloff: f32) -> f32 {
    if !(falloff > 0.0) || !(d2 - d1 < falloff) {
        return 0.0;
    }
    let x = ((d2 - d1) / falloff).clamp(0.0, 1.0);
    0.5 * (1.0 - x * x * (3.0 - 2.0 * x))
}

/// Binds each point (bind space) to its nearest bone segment and, within `falloff` more
/// distance, to a second bone ([`band_weight`]); `falloff = 0` binds rigidly.
pub fn bind_nearest(points: &[[f32; 3]], skeleton: &Skeleton, falloff: f32) -> ParticleBinding {
    bind_grouped(points, skeleton, falloff, &[], &[])
}

/// [`bind_nearest`] with groups: point `i` may bind only to the bones of
/// `group_bones[groups[i]]`. A point past the end of `groups`, a group index past the end of
/// `group_bones`, or an empty group binds against the whole skeleton.
pub fn bind_grouped(
    points: &[[f32; 3]],
    skeleton: &Skeleton,
    falloff: f32,
    groups: &[u32],
    group_bones: &[Vec<u16>],
) -> ParticleBinding {
    struct Seg {
        bone: u16,
        a: Vec3A,
        ab: Vec3A,
        inv_len2: f32,
    }
    let segs: Vec<Seg> = bone_segments(skeleton)
        .into_iter()
        .map(|s| {
            let ab = Vec3A::from(s.end - s.start);
            let l2 = ab.length_squared();
            Seg { bone: s.bone, a: s.start.into(), ab, inv_len2: if l2 > 0.0 { 1.0 / l2 } else { 0.0 } }
        })
        .collect();
    // Per group, the segments it may use (indices into `segs`); the whole set for no group.
    // (Each group's bones as a set, so a group costs its bones plus the segments, not their
    // product.)
    let all: Vec<u32> = (0..segs.len() as u32).collect();
    let allowed: Vec<Vec<u32>> = group_bones
        .iter()
        .map(|bones| {
            let set: std::collections::HashSet<u16> = bones.iter().copied().collect();
            let list: Vec<u32> =
                (0..segs.len() as u32).filter(|&k| set.contains(&segs[k as usize].bone)).collect();
            if list.is_empty() { all.clone() } else { list }
        })
        .collect();
    let falloff = if falloff.is_finite() { falloff.max(0.0) } else { 0.0 };
    let influences = points
        .par_iter()
        .enumerate()
        .with_min_len(1024)
        .map(|(i, p)| {
            let set = groups.get(i).and_then(|&g| allowed.get(g as usize)).unwrap_or(&all);
            let p = Vec3A::from(*p);
            // Nearest and second-nearest bones (not segments: a bone with two children has two).
            let (mut b1, mut d1, mut b2, mut d2) = (u16::MAX, f32::INFINITY, u16::MAX, f32::INFINITY);
            for &k in set {
                let s = &segs[k as usize];
                let d = distance_to_segment(p, s.a, s.ab, s.inv_len2);
                if !(d < d2) {
                    continue;
                }
                if s.bone == b1 {
                    d1 = d1.min(d);
                } else if d < d1 {
                    (b2, d2) = (b1, d1);
                    (b1, d1) = (s.bone, d);
                } else if s.bone == b2 || d < d2 {
                    (b2, d2) = (s.bone, d);
                }
            }
            if b1 == u16::MAX {
                return Influence::default();
            }
            let w = if b2 == u16::MAX { 0.0 } else { band_weight(d1, d2, falloff) };
            if w > 0.0 {
                Influence { bones: [b1, b2], weight: w }
            } else {
                Influence { bones: [b1, b1], weight: 0.0 }
            }
        })
        .collect();
    ParticleBinding { influences }
}

/// Per-bone skinning transforms for particles (`model_from_bone * inverseBind`, affine), computed
/// once per pose and shared by every cloud on the rig.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParticleMatrices {
    /// One transform per bone.
    pub bones: Vec<Affine3A>,
}

impl ParticleMatrices {
    /// Sized for `skeleton`, at identity.
    pub fn new(skeleton: &Skeleton) -> Self {
        Self { bones: vec![Affine3A::IDENTITY; skeleton.bone_count()] }
    }

    /// Recomputes from a pose's `model` matrices, placed by `world_from_model` (identity keeps
    /// the rig's model space), with no allocation once sized. A bone whose skinning matrix is not
    /// finite (an inverse bind with no inverse: a zero-scale bind joint) follows its model matrix
    /// alone, so degenerate bones never make NaN.
    pub fn update(&mut self, world_from_model: Mat4, model: &[Mat4], skeleton: &Skeleton) {
        self.bones.resize(model.len().min(skeleton.inverse_bind.len()), Affine3A::IDENTITY);
        for ((o, m), ib) in self.bones.iter_mut().zip(model).zip(&skeleton.inverse_bind) {
            // Every input is affine: the palette job's affine product serves.
            let placed = affine_product(&world_from_model, m);
            let s = affine_product(&placed, ib);
            let pick = if s.is_finite() {
                s
            } else if m.is_finite() {
                placed
            } else {
                world_from_model
            };
            *o = Affine3A::from_mat4(pick);
        }
    }
}

/// Where one bound point is: the lerp of its two bones' transforms of `rest` (the same
/// arithmetic as [`ParticlePoseJob`]). Bones past the matrices' end read identity.
#[inline(always)]
pub fn skin_one(matrices: &ParticleMatrices, influence: Influence, rest: [f32; 3]) -> [f32; 3] {
    let m = &matrices.bones;
    let at = |b: u16| m.get(b as usize).unwrap_or(&Affine3A::IDENTITY);
    blend(at(influence.bones[0]), at(influence.bones[1]), influence.weight, rest)
}

/// The blend of two bones' transforms of `rest` by `w`: both transforms and a lerp, with no
/// branch (a rigid particle names its bone twice with `w == 0`; a branch on it measured slower).
#[inline(always)]
fn blend(a: &Affine3A, b: &Affine3A, w: f32, rest: [f32; 3]) -> [f32; 3] {
    let p = Vec3A::from_array(rest);
    let pa = a.transform_point3a(p);
    let pb = b.transform_point3a(p);
    (pa + (pb - pa) * w).to_array()
}

/// Poses a bound point cloud: positions by the linear blend of the two bones' transforms, normals
/// (when given) turned by the dominant bone's linear part. Particles past the binding's end (a
/// cloud longer than its binding) are left where they are.
#[derive(Debug)]
pub struct ParticlePoseJob<'a> {
    /// The rig's particle matrices for this pose.
    pub matrices: &'a ParticleMatrices,
    /// The binding.
    pub binding: &'a ParticleBinding,
    /// Rest positions in bind space.
    pub rest_positions: &'a [[f32; 3]],
    /// Rest normals (or empty).
    pub rest_normals: &'a [[f32; 3]],
    /// Posed positions (as long as `rest_positions`).
    pub positions: &'a mut [[f32; 3]],
    /// Posed normals (as long as `rest_normals`).
    pub normals: &'a mut [[f32; 3]],
}

impl ParticlePoseJob<'_> {
    fn count(&self) -> usize {
        self.binding.len().min(self.rest_positions.len())
    }

    /// Names the first input at fault: output lengths, and every bound bone inside the matrices.
    pub fn validate(&self) -> Result<(), ParticleError> {
        let len = |input, expected, got| {
            if expected == got {
                Ok(())
            } else {
                Err(ParticleError::Length { job: "particle pose", input, expected, got })
            }
        };
        len("positions", self.rest_positions.len(), self.positions.len())?;
        len("normals", self.rest_normals.len(), self.normals.len())?;
        if !self.rest_normals.is_empty() {
            len("rest_normals", self.rest_positions.len(), self.rest_normals.len())?;
        }
        let bones = self.matrices.bones.len();
        for (i, inf) in self.binding.influences[..self.count()].iter().enumerate() {
            if let Some(&b) = inf.bones.iter().find(|&&b| b as usize >= bones) {
                return Err(ParticleError::BoneOutOfRange { particle: i, bone: b, bones });
            }
        }
        Ok(())
    }

    /// Runs on the calling thread.
    pub fn run(self) -> Result<(), ParticleError> {
        self.validate()?;
        let n = self.count();
        pose_range(
            self.matrices,
            &self.binding.influences[..n],
            &self.rest_positions[..n],
            &mut self.positions[..n],
        );
        if !self.rest_normals.is_empty() {
            turn_range(
                self.matrices,
                &self.binding.influences[..n],
                &self.rest_normals[..n],
                &mut self.normals[..n],
            );
        }
        Ok(())
    }

    /// Runs on rayon's pool, in chunks of 8,192 particles.
    pub fn run_parallel(self) -> Result<(), ParticleError> {
        self.validate()?;
        const CHUNK: usize = 8192;
        let n = self.count();
        let (m, inf) = (self.matrices, &self.binding.influences[..n]);
        self.positions[..n]
            .par_chunks_mut(CHUNK)
            .zip(self.rest_positions[..n].par_chunks(CHUNK))
            .zip(inf.par_chunks(CHUNK))
            .for_each(|((out, rest), inf)| pose_range(m, inf, rest, out));
        if !self.rest_normals.is_empty() {
            self.normals[..n]
                .par_chunks_mut(CHUNK)
                .zip(self.rest_normals[..n].par_chunks(CHUNK))
                .zip(inf.par_chunks(CHUNK))
                .for_each(|((out, rest), inf)| turn_range(m, inf, rest, out));
        }
        Ok(())
    }
}

/// Validated input: every bone indexes `m` (`ParticlePoseJob::validate`).
#[inline(always)]
fn pose_range(m: &ParticleMatrices, inf: &[Influence], rest: &[[f32; 3]], out: &mut [[f32; 3]]) {
    let bones = &m.bones[..];
    for ((o, i), r) in out.iter_mut().zip(inf).zip(rest) {
        *o = blend(&bones[i.bones[0] as usize], &bones[i.bones[1] as usize], i.weight, *r);
    }
}

/// Validated input, as [`pose_range`].
#[inline(always)]
fn turn_range(m: &ParticleMatrices, inf: &[Influence], rest: &[[f32; 3]], out: &mut [[f32; 3]]) {
    let bones = &m.bones[..];
    for ((o, i), r) in out.iter_mut().zip(inf).zip(rest) {
        let lin: Mat3A = bones[i.bones[0] as usize].matrix3;
        *o = (lin * Vec3A::from_array(*r)).to_array();
    }
}

/// How a particle's spring behaves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpringSettings {
    /// Stiffness `k` (force per unit of distance from the target).
    pub stiffness: f32,
    /// Damping `c` (force per unit of velocity).
    pub damping: f32,
}

impl Default for SpringSettings {
    fn default() -> Self {
        Self { stiffness: 120.0, damping: 8.0 }
    }
}

/// Particles chasing their skinned targets through damped springs: positions and velocities.
/// Each step is implicit Euler (`v' = (v + dt k/m (target - x)) / (1 + dt c/m + dt² k/m)`,
/// `x' = x + dt v'`), unconditionally stable, so a 0.1 s tick needs no sub-steps.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParticleSprings {
    /// Current positions.
    pub positions: Vec<[f32; 3]>,
    /// Current velocities.
    pub velocities: Vec<[f32; 3]>,
}

impl ParticleSprings {
    /// At rest on `targets`.
    pub fn new(targets: &[[f32; 3]]) -> Self {
        Self { positions: targets.to_vec(), velocities: vec![[0.0; 3]; targets.len()] }
    }

    /// Snaps every particle onto its target, at rest (a cut, a teleport, a clip restart).
    pub fn reset(&mut self, targets: &[[f32; 3]]) {
        self.positions.clear();
        self.positions.extend_from_slice(targets);
        self.velocities.clear();
        self.velocities.resize(targets.len(), [0.0; 3]);
    }

    /// Advances `dt` seconds towards `targets`. Particle `i` has mass `masses[groups[i]]` (1 where
    /// `groups` or `masses` has no entry for it; masses below 1e-6 count as 1e-6).
    pub fn step(
        &mut self,
        targets: &[[f32; 3]],
        settings: SpringSettings,
        groups: &[u32],
        masses: &[f32],
        dt: f32,
    ) -> Result<(), ParticleError> {
        for (what, value) in [("dt", dt), ("stiffness", settings.stiffness), ("damping", settings.damping)] {
            if !(value >= 0.0 && value.is_finite()) {
                return Err(ParticleError::BadSetting { what, value });
            }
        }
        if let Some(&m) = masses.iter().find(|m| !(m.is_finite() && **m >= 0.0)) {
            return Err(ParticleError::BadSetting { what: "mass", value: m });
        }
        if targets.len() != self.positions.len() {
            return Err(ParticleError::Length {
                job: "spring step",
                input: "targets",
                expected: self.positions.len(),
                got: targets.len(),
            });
        }
        let (k, c) = (settings.stiffness, settings.damping);
        for (i, ((x, v), t)) in self.positions.iter_mut().zip(&mut self.velocities).zip(targets).enumerate() {
            let m = groups.get(i).and_then(|&g| masses.get(g as usize)).copied().unwrap_or(1.0).max(1e-6);
            let (x0, v0, t) = (Vec3::from(*x), Vec3::from(*v), Vec3::from(*t));
            let v1 = (v0 + (t - x0) * (dt * k / m)) / (1.0 + dt * c / m + dt * dt * k / m);
            let x1 = x0 + v1 * dt;
            *v = v1.into();
            *x = x1.into();
        }
        Ok(())
    }
}

/// The most particles one cloud may hold.
pub const MAX_PARTICLES: u32 = 2_000_000;

/// One group of a cloud: the particles sampled from the mesh where these bones dominate the skin
/// bind only to these bones, with this mass.
#[derive(Clone, Debug, PartialEq)]
pub struct CloudGroup {
    /// Bone names.
    pub bones: Vec<String>,
    /// Mass of the group's particles (1: the springs' own feel; heavier lags, lighter overshoots).
    pub mass: f32,
}

/// How a cloud is made from a skinned mesh and how it moves: its authored settings.
#[derive(Clone, Debug, PartialEq)]
pub struct CloudSettings {
    /// Points scattered over the mesh's surface.
    pub count: u32,
    /// Scatter seed.
    pub seed: u64,
    /// Binding falloff band (model units; 0 binds rigidly).
    pub falloff: f32,
    /// Disc radius (model units).
    pub radius: f32,
    /// Linear RGBA colour.
    pub color: [f32; 4],
    /// Bone groups (a particle whose source vertex is dominated by a group's bone binds within
    /// the group).
    pub groups: Vec<CloudGroup>,
    /// Springs (`None`: particles sit on their skinned targets).
    pub springs: Option<SpringSettings>,
}

impl Default for CloudSettings {
    fn default() -> Self {
        Self {
            count: 20_000,
            seed: 1,
            falloff: 0.03,
            radius: 0.008,
            color: [0.85, 0.55, 0.3, 1.0],
            groups: Vec::new(),
            springs: Some(SpringSettings::default()),
        }
    }
}

/// Why a cloud cannot be made.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CloudError {
    /// A setting is out of range.
    #[error("particle cloud: {what} is {value}, {expected}")]
    Setting {
        /// The setting.
        what: &'static str,
        /// Its value, as written.
        value: String,
        /// What it must be.
        expected: &'static str,
    },
    /// A group names a bone the skeleton does not have.
    #[error("particle cloud: group {group} names bone {bone:?}, which skeleton {skeleton:?} does not have")]
    UnknownBone {
        /// The group.
        group: usize,
        /// The bone name.
        bone: String,
        /// The skeleton.
        skeleton: String,
    },
    /// The mesh has no triangle to scatter points on.
    #[error("particle cloud: mesh {mesh:?} has no triangles to scatter points on")]
    NoSurface {
        /// The mesh.
        mesh: String,
    },
}

/// A bound cloud ready to play: rest points sampled from a skinned mesh, their binding, groups
/// and springs, and the posed targets. The scene `World` and `marrow particles` share it.
#[derive(Clone, Debug, Default)]
pub struct ParticleCloud {
    /// Rest positions (bind space).
    pub rest_positions: Vec<[f32; 3]>,
    /// Rest normals (bind space).
    pub rest_normals: Vec<[f32; 3]>,
    /// The binding.
    pub binding: ParticleBinding,
    /// Per particle, its group (`u32::MAX`: none).
    pub groups: Vec<u32>,
    /// Per group, its mass.
    pub masses: Vec<f32>,
    /// Springs (`None`: particles sit on their targets).
    pub springs_settings: Option<SpringSettings>,
    /// Skinned targets of the last pose (world space).
    pub targets: Vec<[f32; 3]>,
    /// Normals of the last pose (world space, the dominant bone's).
    pub normals: Vec<[f32; 3]>,
    /// Spring state (world space).
    pub springs: ParticleSprings,
    matrices: ParticleMatrices,
    settled: bool,
}

impl ParticleCloud {
    /// Scatters `settings.count` points over `mesh`'s triangles (bind space), groups each by the
    /// bone that dominates its source vertex's skin (`joint_to_bone` maps skin joints to
    /// `skeleton`'s bones), and binds them ([`bind_grouped`]).
    pub fn from_mesh(
        mesh: &crate::mesh::Mesh,
        joint_to_bone: &[u16],
        skeleton: &Skeleton,
        settings: &CloudSettings,
    ) -> Result<Self, CloudError> {
        let bad = |what, value: String, expected| Err(CloudError::Setting { what, value, expected });
        if settings.count > MAX_PARTICLES {
            return bad("count", settings.count.to_string(), "at most 2,000,000");
        }
        for (what, v) in [("falloff", settings.falloff), ("radius", settings.radius)] {
            if !(v.is_finite() && v >= 0.0) {
                return bad(what, v.to_string(), "a finite non-negative number");
            }
        }
        if let Some(s) = settings.springs
            && !(s.stiffness.is_finite() && s.stiffness >= 0.0 && s.damping.is_finite() && s.damping >= 0.0)
        {
            return bad("springs", format!("{s:?}"), "finite non-negative stiffness and damping");
        }
        let mut group_bones = Vec::with_capacity(settings.groups.len());
        for (g, group) in settings.groups.iter().enumerate() {
            if !(group.mass.is_finite() && group.mass > 0.0) {
                return bad("a group's mass", group.mass.to_string(), "a finite positive number");
            }
            let mut bones = Vec::with_capacity(group.bones.len());
            for name in &group.bones {
                match skeleton.index_of(name) {
                    Some(b) => bones.push(b as u16),
                    None => {
                        return Err(CloudError::UnknownBone {
                            group: g,
                            bone: name.clone(),
                            skeleton: skeleton.name.clone(),
                        });
                    }
                }
            }
            group_bones.push(bones);
        }
        // Every triangle primitive end to end, with each vertex's dominant bone.
        let mut positions: Vec<[f32; 3]> = Vec::new();
        let mut indices: Vec<u32> = Vec::new();
        let mut dominant: Vec<u16> = Vec::new();
        for p in mesh.primitives.iter().filter(|p| p.mode == 4) {
            let base = positions.len() as u32;
            positions.extend_from_slice(&p.positions);
            match &p.indices {
                Some(ix) => indices.extend(ix.iter().map(|i| base + i)),
                None => indices.extend(base..base + p.positions.len() as u32),
            }
            for v in 0..p.positions.len() {
                let bone = p.skin.as_ref().and_then(|s| {
                    let (j, w) = (s.joints.get(v)?, s.weights.get(v)?);
                    let k = (0..4).max_by(|&a, &b| w[a].total_cmp(&w[b]))?;
                    joint_to_bone.get(j[k] as usize).copied()
                });
                dominant.push(bone.unwrap_or(u16::MAX));
            }
        }
        let sample = sample_surface(&positions, Some(&indices), settings.count as usize, settings.seed);
        if sample.positions.is_empty() && settings.count > 0 {
            return Err(CloudError::NoSurface { mesh: mesh.name.clone() });
        }
        // Each bone's first group (one pass over the groups, so each point's lookup is one read
        // however many groups there are).
        let mut group_of: std::collections::HashMap<u16, u32> = std::collections::HashMap::new();
        for (g, bones) in group_bones.iter().enumerate() {
            for &b in bones {
                group_of.entry(b).or_insert(g as u32);
            }
        }
        let groups: Vec<u32> = sample
            .sources
            .iter()
            .map(|(tri, bary)| {
                let k = (0..3).max_by(|&a, &b| bary[a].total_cmp(&bary[b])).unwrap_or(0);
                let bone = dominant.get(tri[k]).copied().unwrap_or(u16::MAX);
                group_of.get(&bone).copied().unwrap_or(u32::MAX)
            })
            .collect();
        let binding = bind_grouped(&sample.positions, skeleton, settings.falloff, &groups, &group_bones);
        let n = sample.positions.len();
        Ok(Self {
            rest_positions: sample.positions,
            rest_normals: sample.normals,
            binding,
            groups,
            masses: settings.groups.iter().map(|g| g.mass).collect(),
            springs_settings: settings.springs,
            targets: vec![[0.0; 3]; n],
            normals: vec![[0.0; 3]; n],
            springs: ParticleSprings::default(),
            matrices: ParticleMatrices::new(skeleton),
            settled: false,
        })
    }

    /// Number of particles.
    pub fn len(&self) -> usize {
        self.rest_positions.len()
    }

    /// True for a cloud of no particles.
    pub fn is_empty(&self) -> bool {
        self.rest_positions.is_empty()
    }

    /// Poses the targets and normals from a rig's `model` matrices, placed by
    /// `world_from_model`.
    pub fn pose(
        &mut self,
        world_from_model: Mat4,
        model: &[Mat4],
        skeleton: &Skeleton,
    ) -> Result<(), ParticleError> {
        self.matrices.update(world_from_model, model, skeleton);
        let job = ParticlePoseJob {
            matrices: &self.matrices,
            binding: &self.binding,
            rest_positions: &self.rest_positions,
            rest_normals: &self.rest_normals,
            positions: &mut self.targets,
            normals: &mut self.normals,
        };
        if self.rest_positions.len() >= 16_384 { job.run_parallel() } else { job.run() }
    }

    /// Moves the particles after a pose: `ticks` spring steps of `tick_seconds` towards the
    /// targets. The first call, a paused frame (`ticks == 0`, a scrub shows the pose exactly)
    /// and a cloud without springs snap them onto the targets.
    pub fn step(&mut self, ticks: u32, tick_seconds: f32) -> Result<(), ParticleError> {
        match self.springs_settings {
            Some(s) if self.settled && ticks > 0 => {
                for _ in 0..ticks {
                    self.springs.step(&self.targets, s, &self.groups, &self.masses, tick_seconds)?;
                }
            }
            _ => {
                self.springs.reset(&self.targets);
                self.settled = true;
            }
        }
        Ok(())
    }

    /// Where the particles are drawn (world space): the springs' positions.
    pub fn positions(&self) -> &[[f32; 3]] {
        &self.springs.positions
    }
}

/// A small seeded generator (SplitMix64) so scattered points are the same for the same seed on
/// every machine.
#[derive(Clone, Debug)]
pub struct SplitMix(u64);

impl SplitMix {
    /// Seeded.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn next_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// Points scattered over a triangle mesh's surface: `count` points, triangles chosen in
/// proportion to their area, positions uniform within each, with the triangle's face normal.
/// Seeded ([`SplitMix`]). `indices` are triangle-list indices (`None`: consecutive vertices);
/// triangles naming vertices past the end, and degenerate ones, are skipped. Returns the points,
/// their normals and, per point, the three vertices and barycentric weights it came from (so the
/// mesh's own skin weights can be carried over when wanted).
pub fn sample_surface(
    positions: &[[f32; 3]],
    indices: Option<&[u32]>,
    count: usize,
    seed: u64,
) -> SurfaceSample {
    let tri_count = indices.map_or(positions.len(), |i| i.len()) / 3;
    let corner = |t: usize, c: usize| -> usize { indices.map_or(3 * t + c, |i| i[3 * t + c] as usize) };
    let mut tris: Vec<[usize; 3]> = Vec::with_capacity(tri_count);
    let mut cdf: Vec<f64> = Vec::with_capacity(tri_count);
    let mut total = 0.0f64;
    for t in 0..tri_count {
        let v = [corner(t, 0), corner(t, 1), corner(t, 2)];
        if v.iter().any(|&k| k >= positions.len()) {
            continue;
        }
        let [a, b, c] = v.map(|k| Vec3::from(positions[k]));
        let area = f64::from((b - a).cross(c - a).length()) * 0.5;
        if !(area > 0.0) || !area.is_finite() {
            continue;
        }
        total += area;
        tris.push(v);
        cdf.push(total);
    }
    let mut out = SurfaceSample::default();
    if tris.is_empty() {
        return out;
    }
    let mut rng = SplitMix::new(seed);
    for _ in 0..count {
        let r = f64::from(rng.next_f32()) * total;
        let t = cdf.partition_point(|&x| x <= r).min(tris.len() - 1);
        let (mut u, mut v) = (rng.next_f32(), rng.next_f32());
        if u + v > 1.0 {
            (u, v) = (1.0 - u, 1.0 - v);
        }
        let bary = [1.0 - u - v, u, v];
        let [a, b, c] = tris[t].map(|k| Vec3::from(positions[k]));
        let p = a * bary[0] + b * bary[1] + c * bary[2];
        out.positions.push(p.into());
        out.normals.push((b - a).cross(c - a).normalize_or_zero().into());
        out.sources.push((tris[t], bary));
    }
    out
}

/// What [`sample_surface`] scattered.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SurfaceSample {
    /// Point positions.
    pub positions: Vec<[f32; 3]>,
    /// Face normals.
    pub normals: Vec<[f32; 3]>,
    /// Per point, its triangle's vertices and its barycentric weights.
    pub sources: Vec<([usize; 3], [f32; 3])>,
}
