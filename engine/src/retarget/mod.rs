//! Retargeting: playing a clip made for one skeleton on another.
//!
//! A [`RetargetMap`] (authored: the `*.retarget.ron` asset, see
//! [`crate::project::retarget_file`]) pairs target bones with source bones by name; [`auto_map`]
//! fills one from the humanoid profile ([`humanoid`]) and from bones both rigs name alike.
//! [`RetargetPlan::new`] compiles a map against the two skeletons (checking every name) into
//! flat per-bone arrays, and [`RetargetPlan::retarget_clip`] turns a source clip into a clip of
//! the target rig.
//!
//! How motion transfers, for each target bone `t` mapped to a source bone `s`:
//! - Rotation: the source bone's rotation relative to its rest, taken in model space
//!   (`D = model_rot_s(time) * model_rest_s⁻¹`), is applied to the target's rest in model space,
//!   after an alignment `A` that turns the target's rest bone direction (toward its mapped
//!   child) onto the source's: `model_rot_t(time) = B·D·B⁻¹ · A · model_rest_t`. So rigs whose
//!   rest poses differ (arms out against arms down, bones along other axes) point their bones
//!   the same way at every key. `B` turns the source's model axes into the target's (found from
//!   each rig's up and left directions, hips to head and right leg to left leg, by the humanoid
//!   roles of each rig or, where a rig's names say nothing, of the bones the map pairs them
//!   with), so a Z-up rig takes motion from a Y-up capture.
//! - Translation: the topmost mapped bones (the hips) take the source's model-space position
//!   scaled by the ratio of hip heights (hips above the feet, in rest); other bones keep their
//!   own rest translation, so the target keeps its proportions.
//! - Unmapped target bones keep their rest (local) transform; unmapped source bones still move
//!   the mapped bones below them.
//! - Where nothing differs (same rest transform, parent mapped to parent all the way up, same
//!   axes and height), the bone's tracks are copied as they are, keys, easings and tangents and
//!   all: identical rigs give the source clip back bit for bit.
//! - Other bones are keyed at every key time of the source clip, and at every frame of its frame
//!   rate too when a source track is not plain LINEAR (eased, cubic or step), LINEAR, each
//!   rotation on the hemisphere of the one before.
//!
//! Not here: IK fix-up of feet and hands for contact, per-chain scale, finger curl profiles,
//! and scale channels on bones that do not copy (they keep their rest scale).

pub mod humanoid;

use glam::{Mat3, Mat4, Quat, Vec3};

use crate::clip::{Clip, find_clip_fault};
use crate::math::Transform;
use crate::skeleton::{NO_PARENT, Skeleton};
use crate::track::{Interpolation, Track};

pub use humanoid::{HumanoidBones, HumanoidRole, find_humanoid};

/// One pairing of a retarget map: the target bone that plays what the source bone does.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BonePair {
    /// Bone of the target skeleton.
    pub target: String,
    /// Bone of the source skeleton.
    pub source: String,
}

/// Which source bone each target bone follows, by name (authored; no runtime indices).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RetargetMap {
    /// The source skeleton's name (the rig the clips were made for).
    pub source: String,
    /// The target skeleton's name (the rig the clips are made to play on).
    pub target: String,
    /// The pairs, in the target's bone order when [`auto_map`] made them.
    pub bones: Vec<BonePair>,
    /// Whether feet and hands are put where the source's are: after the rotations transfer,
    /// each of the target's legs and arms whose three humanoid bones (upper, lower, end) are
    /// mapped is bent by [`crate::ik::TwoBoneIkJob`] so its end lands on the source end's
    /// position, scaled by the hip ratio as the hips' translation is (contact kept where the
    /// rigs' proportions differ: feet that do not slide or sink), the end keeping its
    /// orientation.
    pub limb_ik: bool,
}

impl RetargetMap {
    /// The source bone `target_bone` follows, if it is mapped.
    pub fn source_of(&self, target_bone: &str) -> Option<&str> {
        self.bones.iter().find(|p| p.target == target_bone).map(|p| p.source.as_str())
    }

    /// Maps `target_bone` to `source_bone` (`None`: unmaps it). A pair re-mapped keeps its place;
    /// a new pair goes last.
    pub fn set(&mut self, target_bone: &str, source_bone: Option<&str>) {
        match (self.bones.iter().position(|p| p.target == target_bone), source_bone) {
            (Some(i), Some(s)) => self.bones[i].source = s.to_owned(),
            (Some(i), None) => {
                self.bones.remove(i);
            }
            (None, Some(s)) => {
                self.bones.push(BonePair { target: target_bone.to_owned(), source: s.to_owned() })
            }
            (None, None) => {}
        }
    }
}

/// Why a map cannot be compiled, or a clip cannot be retargeted.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum RetargetFault {
    /// The map names a skeleton other than the one given.
    #[error("retarget map is for {side} skeleton {expected:?}, but {given:?} was given")]
    OtherSkeleton {
        /// `source` or `target`.
        side: &'static str,
        /// The skeleton the map names.
        expected: String,
        /// The skeleton given.
        given: String,
    },
    /// A pair names a bone its skeleton does not have.
    #[error("retarget map pair {pair}: {side} skeleton {skeleton:?} has no bone {bone:?}")]
    UnknownBone {
        /// Index of the pair in the map.
        pair: usize,
        /// `source` or `target`.
        side: &'static str,
        /// That skeleton's name.
        skeleton: String,
        /// The bone named.
        bone: String,
    },
    /// Two pairs give one target bone.
    #[error("retarget map pairs {first} and {second} both map target bone {bone:?}")]
    TargetMappedTwice {
        /// The bone.
        bone: String,
        /// First pair.
        first: usize,
        /// Second pair.
        second: usize,
    },
    /// The map pairs no bones.
    #[error("retarget map from {source_rig:?} to {target_rig:?} maps no bones")]
    Empty {
        /// Source skeleton.
        source_rig: String,
        /// Target skeleton.
        target_rig: String,
    },
    /// A skeleton's rest pose is not finite.
    #[error("{side} skeleton {skeleton:?}: bone {bone:?} has a rest transform that is not finite")]
    NonFiniteRest {
        /// `source` or `target`.
        side: &'static str,
        /// Skeleton name.
        skeleton: String,
        /// Bone name.
        bone: String,
    },
    /// The clip cannot play on the map's source skeleton.
    #[error("clip {clip:?} cannot be retargeted: {fault}")]
    Clip {
        /// The clip.
        clip: String,
        /// Why.
        fault: crate::clip::ClipFault,
    },
}

/// Fills a map from `source` to `target`: first every humanoid role found in both rigs
/// ([`find_humanoid`]), then every other target bone whose name the source has too (a
/// namespace before `:` aside). Pairs are
/// in the target's bone order.
pub fn auto_map(source: &Skeleton, target: &Skeleton) -> RetargetMap {
    let (hs, ht) = (find_humanoid(source), find_humanoid(target));
    let mut by_target: Vec<Option<usize>> = vec![None; target.bone_count()];
    for role in HumanoidRole::ALL {
        if let (Some(s), Some(t)) = (hs.get(role), ht.get(role)) {
            by_target[t] = Some(s);
        }
    }
    let taken: Vec<usize> = by_target.iter().flatten().copied().collect();
    // Other bones by name, a namespace before `:` aside (`mixamorig:LeftHandIndex1`).
    let bare = |n: &str| n.rsplit(':').next().unwrap_or(n).to_owned();
    let by_name: std::collections::HashMap<String, usize> =
        source.bone_names.iter().enumerate().rev().map(|(i, n)| (bare(n), i)).collect();
    for (t, slot) in by_target.iter_mut().enumerate() {
        if slot.is_none()
            && ht.role_of(t).is_none()
            && let Some(&s) = by_name.get(&bare(&target.bone_names[t]))
            && !taken.contains(&s)
            && hs.role_of(s).is_none()
        {
            *slot = Some(s);
        }
    }
    RetargetMap {
        source: source.name.clone(),
        target: target.name.clone(),
        bones: by_target
            .iter()
            .enumerate()
            .filter_map(|(t, s)| {
                Some(BonePair {
                    target: target.bone_names[t].clone(),
                    source: source.bone_names[(*s)?].clone(),
                })
            })
            .collect(),
        limb_ik: false,
    }
}

/// Rest pose of a skeleton in model space: rotation, position and (component-wise) scale.
struct RestModel {
    rotation: Vec<Quat>,
    position: Vec<Vec3>,
}

fn rest_model(skeleton: &Skeleton) -> RestModel {
    let n = skeleton.bone_count();
    let mut rotation = Vec::with_capacity(n);
    let mut position = Vec::with_capacity(n);
    let mut scale: Vec<Vec3> = Vec::with_capacity(n);
    for i in 0..n {
        let l = skeleton.bind_pose[i];
        match skeleton.parent(i) {
            Some(p) => {
                rotation.push(rotation[p] * l.rotation);
                position.push(position[p] + rotation[p] * (scale[p] * l.translation));
                scale.push(scale[p] * l.scale);
            }
            None => {
                rotation.push(l.rotation);
                position.push(l.translation);
                scale.push(l.scale);
            }
        }
    }
    RestModel { rotation, position }
}

/// A rig's model-space frame from its humanoid roles `h`: columns left, up, forward, and the
/// hips' height above the feet; `None` when the hips, a head or chest, or both legs are missing.
fn body_frame(h: &HumanoidBones, rest: &RestModel) -> Option<(Mat3, f32)> {
    use HumanoidRole as R;
    let hips = rest.position[h.get(R::Hips)?];
    let top = [R::Head, R::Neck, R::UpperChest, R::Chest, R::Spine].into_iter().find_map(|r| h.get(r))?;
    let (l, r) = (rest.position[h.get(R::LeftUpperLeg)?], rest.position[h.get(R::RightUpperLeg)?]);
    let up = (rest.position[top] - hips).try_normalize()?;
    let left = (l - r).reject_from_normalized(up).try_normalize()?;
    let forward = left.cross(up);
    let feet: Vec<Vec3> =
        [R::LeftFoot, R::RightFoot].into_iter().filter_map(|r| h.get(r)).map(|b| rest.position[b]).collect();
    let height = feet.iter().map(|f| (hips - *f).dot(up)).sum::<f32>() / feet.len().max(1) as f32;
    Some((Mat3::from_cols(left, up, forward), height))
}

/// The humanoid roles of both rigs as a plan of `map` sees them: each rig's own, found by
/// [`find_humanoid`], with each side's gaps filled through the map from the other's, so a rig
/// whose bone names say nothing (CesiumMan's `Skeleton_torso_joint_1`) has the hips, legs and
/// head of the bones its map gives it. Pairs naming a bone a rig lacks are passed over
/// ([`RetargetPlan::new`] refuses them by name).
pub fn mapped_roles(
    map: &RetargetMap,
    source: &Skeleton,
    target: &Skeleton,
) -> (HumanoidBones, HumanoidBones) {
    let mut by_target: Vec<Option<u16>> = vec![None; target.bone_count()];
    for pair in &map.bones {
        if let (Some(t), Some(s)) = (target.index_of(&pair.target), source.index_of(&pair.source)) {
            by_target[t] = u16::try_from(s).ok();
        }
    }
    roles_through(&by_target, source, target)
}

/// The humanoid roles of both rigs, each side's gaps filled through the map from the other's
/// (a rig whose names say nothing still gets its hips, legs and head from what they follow).
fn roles_through(
    map: &[Option<u16>],
    source: &Skeleton,
    target: &Skeleton,
) -> (HumanoidBones, HumanoidBones) {
    let (mut hs, mut ht) = (find_humanoid(source), find_humanoid(target));
    for role in HumanoidRole::ALL {
        match (hs.get(role), ht.get(role)) {
            (Some(s), None) => ht.set(role, map.iter().position(|m| *m == Some(s as u16))),
            (None, Some(t)) => hs.set(role, map[t].map(usize::from)),
            _ => {}
        }
    }
    (hs, ht)
}

/// The alignment of one target bone's rest onto its source's: the rotation taking the target's
/// rest directions toward its mapped children onto the source's (in target axes).
fn rest_alignment(primary: (Vec3, Vec3), secondary: Option<(Vec3, Vec3)>) -> Option<Quat> {
    let (pt, ps) = (primary.0.try_normalize()?, primary.1.try_normalize()?);
    let second = secondary.and_then(|(t, s)| {
        Some((t.reject_from_normalized(pt).try_normalize()?, s.reject_from_normalized(ps).try_normalize()?))
    });
    if pt == ps && second.is_none_or(|(t, s)| t == s) {
        return Some(Quat::IDENTITY);
    }
    Some(match second {
        Some((st, ss)) => {
            let ft = Mat3::from_cols(pt, st, pt.cross(st));
            let fs = Mat3::from_cols(ps, ss, ps.cross(ss));
            Quat::from_mat3(&(fs * ft.transpose())).normalize()
        }
        None => Quat::from_rotation_arc(pt, ps),
    })
}

/// A limb a plan places by two-bone IK ([`RetargetMap::limb_ik`]).
#[derive(Clone, Copy, Debug)]
struct Limb {
    /// The target's upper, lower and end bones (each the parent of the next).
    bones: [usize; 3],
    /// The source bone the end follows.
    source_end: usize,
    /// The joint's bend axis in the lower bone's own frame (from the rest pose and the body's
    /// forward: knees bend back, elbows forward).
    axis: Vec3,
}

/// A retarget map compiled against its two skeletons: flat per-bone arrays, checked once.
#[derive(Clone, Debug)]
pub struct RetargetPlan {
    source_name: String,
    target: Skeleton,
    source_parents: Vec<u16>,
    source_rest: Vec<Transform>,
    /// Per target bone: its source bone.
    map: Vec<Option<u16>>,
    /// Per target bone: `A · model_rest_t`.
    aligned_rest: Vec<Quat>,
    /// Per source bone: `model_rest_s⁻¹`.
    source_rest_inv: Vec<Quat>,
    /// Source model axes to target model axes.
    basis: Quat,
    /// Target hip height over source hip height.
    ratio: f32,
    /// Per target bone: whether its tracks copy from its source bone unchanged.
    copy: Vec<bool>,
    /// Per target bone: whether it is mapped and no ancestor is (takes the model position).
    topmost: Vec<bool>,
    /// The limbs placed by IK (empty unless the map asks).
    limbs: Vec<Limb>,
}

fn check_rest(side: &'static str, skeleton: &Skeleton) -> Result<(), RetargetFault> {
    match skeleton.bind_pose.iter().position(|t| !t.is_finite()) {
        Some(b) => Err(RetargetFault::NonFiniteRest {
            side,
            skeleton: skeleton.name.clone(),
            bone: skeleton.bone_names[b].clone(),
        }),
        None => Ok(()),
    }
}

impl RetargetPlan {
    /// Compiles `map` for `source` and `target`, naming every name that does not resolve.
    pub fn new(map: &RetargetMap, source: &Skeleton, target: &Skeleton) -> Result<Self, RetargetFault> {
        for (side, expected, given) in
            [("source", &map.source, &source.name), ("target", &map.target, &target.name)]
        {
            if expected != given {
                return Err(RetargetFault::OtherSkeleton {
                    side,
                    expected: expected.clone(),
                    given: given.clone(),
                });
            }
        }
        if map.bones.is_empty() {
            return Err(RetargetFault::Empty {
                source_rig: source.name.clone(),
                target_rig: target.name.clone(),
            });
        }
        check_rest("source", source)?;
        check_rest("target", target)?;
        let mut by_target: Vec<Option<u16>> = vec![None; target.bone_count()];
        let mut pair_of: Vec<Option<usize>> = vec![None; target.bone_count()];
        for (i, pair) in map.bones.iter().enumerate() {
            let unknown = |side, skeleton: &Skeleton, bone: &str| RetargetFault::UnknownBone {
                pair: i,
                side,
                skeleton: skeleton.name.clone(),
                bone: bone.to_owned(),
            };
            let t = target.index_of(&pair.target).ok_or_else(|| unknown("target", target, &pair.target))?;
            let s = source.index_of(&pair.source).ok_or_else(|| unknown("source", source, &pair.source))?;
            if let Some(first) = pair_of[t] {
                return Err(RetargetFault::TargetMappedTwice { bone: pair.target.clone(), first, second: i });
            }
            pair_of[t] = Some(i);
            by_target[t] = Some(s as u16);
        }
        Ok(Self::compile(source, target, by_target, map.limb_ik))
    }

    fn compile(source: &Skeleton, target: &Skeleton, map: Vec<Option<u16>>, limb_ik: bool) -> Self {
        let (rs, rt) = (rest_model(source), rest_model(target));
        let (hs, ht) = roles_through(&map, source, target);
        let forward = body_frame(&ht, &rt).map_or(Vec3::Z, |(ft, _)| ft.z_axis);
        let (basis, ratio) = match (body_frame(&hs, &rs), body_frame(&ht, &rt)) {
            (Some((fs, hs)), Some((ft, ht))) => {
                let basis = if fs == ft {
                    Quat::IDENTITY
                } else {
                    Quat::from_mat3(&(ft * fs.transpose())).normalize()
                };
                let ratio = if hs == ht {
                    1.0
                } else if hs > 1e-6 && ht > 1e-6 {
                    ht / hs
                } else {
                    1.0
                };
                (basis, ratio)
            }
            _ => (Quat::IDENTITY, 1.0),
        };
        let n = target.bone_count();
        let mapped_ancestor = |mut b: usize| -> Option<usize> {
            while let Some(p) = target.parent(b) {
                if map[p].is_some() {
                    return Some(p);
                }
                b = p;
            }
            None
        };
        let mut copy = vec![false; n];
        let mut topmost = vec![false; n];
        for t in 0..n {
            let Some(s) = map[t].map(usize::from) else { continue };
            topmost[t] = mapped_ancestor(t).is_none();
            let parents_match = match (target.parent(t), source.parent(s)) {
                (None, None) => true,
                (Some(tp), Some(sp)) => map[tp] == Some(sp as u16) && copy[tp],
                _ => false,
            };
            copy[t] = parents_match
                && basis == Quat::IDENTITY
                && ratio == 1.0
                && target.bind_pose[t] == source.bind_pose[s];
        }
        // The nearest mapped bones below each mapped bone, with how many mapped bones hang below them.
        let mut below: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut weight = vec![0usize; n];
        for t in (0..n).rev() {
            if map[t].is_some()
                && let Some(a) = mapped_ancestor(t)
            {
                below[a].push(t);
                weight[a] += 1 + weight[t];
            }
        }
        let mut align = vec![Quat::IDENTITY; n];
        for t in 0..n {
            let Some(s) = map[t].map(usize::from) else { continue };
            let mut kids = below[t].clone();
            kids.sort_by_key(|&c| (std::cmp::Reverse(weight[c]), c));
            let dirs = |c: usize| {
                let sc = map[c].map(usize::from).unwrap_or(s);
                (rt.position[c] - rt.position[t], basis * (rs.position[sc] - rs.position[s]))
            };
            let found = kids.first().and_then(|&c| rest_alignment(dirs(c), kids.get(1).map(|&c2| dirs(c2))));
            align[t] = match found {
                Some(a) => a,
                None => mapped_ancestor(t).map_or(Quat::IDENTITY, |a| align[a]),
            };
        }
        let aligned_rest = (0..n).map(|t| (align[t] * rt.rotation[t]).normalize()).collect();
        let limbs = if limb_ik { limbs(target, &map, &ht, &rt, forward) } else { Vec::new() };
        // A limb's upper and lower bones are keyed (their rotations change), never copied.
        for l in &limbs {
            for &b in &l.bones {
                copy[b] = false;
            }
        }
        RetargetPlan {
            source_name: source.name.clone(),
            target: target.clone(),
            source_parents: source.parents.clone(),
            source_rest: source.bind_pose.clone(),
            map,
            aligned_rest,
            source_rest_inv: rs.rotation.iter().map(|r| r.inverse()).collect(),
            basis,
            ratio,
            copy,
            topmost,
            limbs,
        }
    }

    /// Target hip height over source hip height (the scale hips' translation takes).
    pub fn hip_ratio(&self) -> f32 {
        self.ratio
    }

    /// The rotation from the source's model axes to the target's.
    pub fn basis(&self) -> Quat {
        self.basis
    }

    /// Which target bones copy their source bone's tracks unchanged (see the module docs).
    pub fn copies(&self) -> &[bool] {
        &self.copy
    }

    /// Makes a clip of the target rig from `clip`, a clip of the source rig; it keeps the
    /// source's name, looping, length, frame rate and markers.
    pub fn retarget_clip(&self, clip: &Clip) -> Result<Clip, RetargetFault> {
        let source = Skeleton {
            name: self.source_name.clone(),
            bone_names: vec![String::new(); self.source_parents.len()],
            parents: self.source_parents.clone(),
            bind_pose: self.source_rest.clone(),
            inverse_bind: Vec::new(),
        };
        if let Some(fault) = find_clip_fault(clip, &source) {
            return Err(RetargetFault::Clip { clip: clip.name.clone(), fault });
        }
        let times = key_times(clip);
        let mut out = Clip::new(clip.name.clone(), &self.target);
        out.looping = clip.looping;
        out.length = clip.length;
        out.frame_rate = clip.frame_rate;
        out.default_interpolation = clip.default_interpolation;
        out.set_markers(clip.markers().to_vec());
        let n = self.target.bone_count();
        let keyed: Vec<bool> = (0..n).map(|t| self.map[t].is_some() && !self.copy[t]).collect();
        let mut rotations: Vec<Vec<Quat>> =
            keyed.iter().map(|&k| if k { Vec::with_capacity(times.len()) } else { Vec::new() }).collect();
        let mut positions: Vec<Vec<Vec3>> = (0..n)
            .map(|t| if keyed[t] && self.topmost[t] { Vec::with_capacity(times.len()) } else { Vec::new() })
            .collect();
        let mut frame = Frame::new(self.source_parents.len(), n, clip.channels().len());
        for &time in &times {
            self.pose_at(clip, time, &mut frame);
            self.place_limbs(&mut frame);
            for t in 0..n {
                if keyed[t] {
                    let mut q = frame.target_local[t].rotation;
                    if let Some(prev) = rotations[t].last()
                        && prev.dot(q) < 0.0
                    {
                        q = -q;
                    }
                    rotations[t].push(q);
                    if self.topmost[t] {
                        positions[t].push(frame.target_local[t].translation);
                    }
                }
            }
        }
        let channels = out.channels_mut();
        for t in 0..n {
            let Some(s) = self.map[t].map(usize::from) else { continue };
            if self.copy[t] {
                channels[t] = clip.channels()[s].clone();
                continue;
            }
            if times.is_empty() {
                continue;
            }
            channels[t].rotation = Some(linear(&times, std::mem::take(&mut rotations[t])));
            if self.topmost[t] {
                channels[t].translation = Some(linear(&times, std::mem::take(&mut positions[t])));
            }
        }
        Ok(out)
    }

    /// The source pose at `time` and the target's local pose from it, into `frame`.
    fn pose_at(&self, clip: &Clip, time: f32, frame: &mut Frame) {
        for (s, ch) in clip.channels().iter().enumerate() {
            let rest = self.source_rest[s];
            let cur = &mut frame.cursors[s];
            let local = Transform {
                translation: ch
                    .translation
                    .as_ref()
                    .and_then(|tr| tr.sample_with_cursor(time, &mut cur[0]))
                    .unwrap_or(rest.translation),
                rotation: ch
                    .rotation
                    .as_ref()
                    .and_then(|tr| tr.sample_with_cursor(time, &mut cur[1]))
                    .unwrap_or(rest.rotation),
                scale: ch
                    .scale
                    .as_ref()
                    .and_then(|tr| tr.sample_with_cursor(time, &mut cur[2]))
                    .unwrap_or(rest.scale),
            };
            frame.source_local[s] = local;
            let p = self.source_parents[s];
            frame.source_model[s] = if p == NO_PARENT {
                (local.rotation, local.translation, local.scale)
            } else {
                let (pr, pp, ps) = frame.source_model[p as usize];
                (pr * local.rotation, pp + pr * (ps * local.translation), ps * local.scale)
            };
        }
        let basis_inv = self.basis.inverse();
        for t in 0..self.target.bone_count() {
            let rest = self.target.bind_pose[t];
            let (pr, pp, ps) = match self.target.parent(t) {
                Some(p) => frame.target_model[p],
                None => (Quat::IDENTITY, Vec3::ZERO, Vec3::ONE),
            };
            let mut local = rest;
            if let Some(s) = self.map[t].map(usize::from) {
                if self.copy[t] {
                    local = frame.source_local[s];
                } else {
                    let (sr, sp, _) = frame.source_model[s];
                    let delta = self.basis * (sr * self.source_rest_inv[s]) * basis_inv;
                    local.rotation = (pr.inverse() * (delta * self.aligned_rest[t])).normalize();
                    if self.topmost[t] {
                        let want = self.basis * sp * self.ratio;
                        local.translation = (pr.inverse() * (want - pp)) / ps;
                    }
                }
            }
            frame.target_local[t] = local;
            frame.target_model[t] =
                (pr * local.rotation, pp + pr * (ps * local.translation), ps * local.scale);
        }
    }
}

/// The target's legs and arms that can be placed by IK: their three humanoid bones found, each
/// the parent of the next, all mapped; each with its bend axis in its lower bone's frame.
fn limbs(
    target: &Skeleton,
    map: &[Option<u16>],
    h: &HumanoidBones,
    rest: &RestModel,
    forward: Vec3,
) -> Vec<Limb> {
    use HumanoidRole as R;
    let chains = [
        ([R::LeftUpperLeg, R::LeftLowerLeg, R::LeftFoot], true),
        ([R::RightUpperLeg, R::RightLowerLeg, R::RightFoot], true),
        ([R::LeftUpperArm, R::LeftLowerArm, R::LeftHand], false),
        ([R::RightUpperArm, R::RightLowerArm, R::RightHand], false),
    ];
    let mut out = Vec::new();
    for (roles, leg) in chains {
        let [Some(u), Some(l), Some(e)] = roles.map(|r| h.get(r)) else { continue };
        if target.parent(l) != Some(u) || target.parent(e) != Some(l) {
            continue;
        }
        let (Some(_), Some(_), Some(source_end)) = (map[u], map[l], map[e]) else { continue };
        // The bend axis: across the limb and the body's forward, knees bending back, elbows
        // forward; the rest bend's own axis where the rest limb is bent.
        let (a, b) = (rest.position[l] - rest.position[u], rest.position[e] - rest.position[l]);
        let straight = if leg { forward.cross(a + b) } else { (a + b).cross(forward) };
        let Some(axis) = a.cross(b).try_normalize().or_else(|| straight.try_normalize()) else { continue };
        out.push(Limb {
            bones: [u, l, e],
            source_end: usize::from(source_end),
            axis: rest.rotation[l].inverse() * axis,
        });
    }
    out
}

impl RetargetPlan {
    /// Bends each IK limb so its end lands where the source's end is (scaled as the hips are),
    /// the end keeping its model orientation (see [`RetargetMap::limb_ik`]).
    fn place_limbs(&self, frame: &mut Frame) {
        let mat = |(r, p, s): (Quat, Vec3, Vec3)| Mat4::from_scale_rotation_translation(s, r, p);
        for limb in &self.limbs {
            let [u, l, e] = limb.bones;
            let goal = self.basis * frame.source_model[limb.source_end].1 * self.ratio;
            let (mu, ml, me) =
                (mat(frame.target_model[u]), mat(frame.target_model[l]), mat(frame.target_model[e]));
            // The middle joint keeps pointing where it points (a straight limb: across its bend axis).
            let straight = ml.transform_vector3(limb.axis).cross(me.w_axis.truncate() - mu.w_axis.truncate());
            let Some((start, mid)) =
                crate::ik::solve_keeping_bend([&mu, &ml, &me], goal, limb.axis, straight.normalize_or_zero())
            else {
                continue;
            };
            let end_rotation = frame.target_model[e].0;
            let (pr, pp, ps) = match self.target.parent(u) {
                Some(p) => frame.target_model[p],
                None => (Quat::IDENTITY, Vec3::ZERO, Vec3::ONE),
            };
            let lu = &mut frame.target_local[u];
            lu.rotation = (lu.rotation * start).normalize();
            let upper = (pr * lu.rotation, pp + pr * (ps * lu.translation), ps * lu.scale);
            let ll = &mut frame.target_local[l];
            ll.rotation = (ll.rotation * mid).normalize();
            let lower =
                (upper.0 * ll.rotation, upper.1 + upper.0 * (upper.2 * ll.translation), upper.2 * ll.scale);
            let le = &mut frame.target_local[e];
            le.rotation = (lower.0.inverse() * end_rotation).normalize();
            let endm = (end_rotation, lower.1 + lower.0 * (lower.2 * le.translation), lower.2 * le.scale);
            frame.target_model[u] = upper;
            frame.target_model[l] = lower;
            frame.target_model[e] = endm;
        }
    }
}

/// Scratch for one retargeted instant.
struct Frame {
    cursors: Vec<[u32; 3]>,
    source_local: Vec<Transform>,
    source_model: Vec<(Quat, Vec3, Vec3)>,
    target_local: Vec<Transform>,
    target_model: Vec<(Quat, Vec3, Vec3)>,
}

impl Frame {
    fn new(source: usize, target: usize, channels: usize) -> Self {
        let m = (Quat::IDENTITY, Vec3::ZERO, Vec3::ONE);
        Frame {
            cursors: vec![[0; 3]; channels],
            source_local: vec![Transform::IDENTITY; source],
            source_model: vec![m; source],
            target_local: vec![Transform::IDENTITY; target],
            target_model: vec![m; target],
        }
    }
}

fn linear<T: crate::track::Animatable>(times: &[f32], values: Vec<T>) -> Track<T> {
    Track::from_keys_unchecked(Interpolation::Linear, times.to_vec(), values)
        .expect("retarget builds one value per key time")
}

/// The instants a retargeted clip is keyed at: every key time of the source clip, and every
/// frame of its frame rate up to its last key when any track is not plain LINEAR.
fn key_times(clip: &Clip) -> Vec<f32> {
    let mut times: Vec<f32> = Vec::new();
    let mut smooth = true;
    for ch in clip.channels() {
        if let Some(t) = &ch.translation {
            times.extend_from_slice(t.times());
            smooth &= t.is_plain_linear();
        }
        if let Some(t) = &ch.rotation {
            times.extend_from_slice(t.times());
            smooth &= t.is_plain_linear();
        }
        if let Some(t) = &ch.scale {
            times.extend_from_slice(t.times());
            smooth &= t.is_plain_linear();
        }
    }
    let last = times.iter().copied().fold(0.0f32, f32::max);
    if !smooth && clip.frame_rate > 0.0 && clip.frame_rate.is_finite() {
        let frames = (last * clip.frame_rate).floor() as usize;
        times.extend((0..=frames.min(1 << 20)).map(|i| i as f32 / clip.frame_rate));
    }
    times.sort_by(f32::total_cmp);
    times.dedup();
    times
}
