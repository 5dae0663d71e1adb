//! Pose jobs, in the style of ozz-animation's runtime jobs: each job borrows its inputs, writes a
//! `&mut` output slice, has a `validate()` that names every failure, and allocates nothing.
//! Caches (the sampling cursors) live in an explicit [`SamplingContext`].
//!
//! - [`SamplingJob`]: a clip at time `t` into local TRS, read from the clip's compiled form
//!   ([`crate::compiled_clip`]: key blocks and streams four bones at a time, loose tracks one
//!   by one).
//! - [`BlendingJob`]: N layers blended on LOCAL TRS with normalized weights and optional per-bone
//!   masks; two full-body layers (the crossfade) with AVX-512F in place, four bones at a time.
//! - [`LocalToModelJob`]: one forward loop `model[i] = model[parent[i]] * local[i]`, applying
//!   [`BoneAdjust`]s (stated in model space) as each bone is reached; local matrices built in
//!   SoA rows (sixteen bones at a time with AVX-512F, eight with AVX) and read back by broadcast.
//! - [`PaletteJob`]: `palette[i] = model[i] * inverse_bind[i]`, derived from the pose.
//! - [`PoseBuffer`]: all rigs' local, model and palette arrays packed end to end.
//!
//! Playback state (time, fades, events) is not here; see [`crate::animator`].

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx;
#[cfg(target_arch = "x86_64")]
mod avx512;

use std::ops::Range;

use glam::{Affine3A, Mat3, Mat4, Quat, Vec3, Vec4};

use crate::clip::Clip;
use crate::compiled_clip::{LooseBone, StreamSlots};
use crate::compressed::CompressedContext;
use crate::math::{self, Transform};
use crate::skeleton::NO_PARENT;

/// A job's inputs do not fit together. Every variant names the job and the input at fault.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum JobError {
    /// An output slice is shorter than the pose.
    #[error("{job}: output {output} holds {got} bones, needs {needed}")]
    OutputTooSmall {
        /// Job name.
        job: &'static str,
        /// Which output.
        output: &'static str,
        /// Bones needed.
        needed: usize,
        /// Bones available.
        got: usize,
    },
    /// An input slice has the wrong length.
    #[error("{job}: input {input} has {got} entries, expected {expected}")]
    InputLength {
        /// Job name.
        job: &'static str,
        /// Which input.
        input: String,
        /// Expected length.
        expected: usize,
        /// Actual length.
        got: usize,
    },
    /// The sampling context has fewer cursors than the clip has bones.
    #[error("sampling job: context holds cursors for {capacity} bones, clip {clip:?} has {bones}")]
    ContextTooSmall {
        /// Clip name.
        clip: String,
        /// Bones in the clip.
        bones: usize,
        /// Context capacity in bones.
        capacity: usize,
    },
    /// The sample time is NaN or infinite.
    #[error("sampling job: time {0} is not finite")]
    NonFiniteTime(f32),
    /// The clip plays a compressed form the context was not prepared for.
    #[error(
        "sampling job: clip {clip:?} plays a compressed form of {bones} bones; the context was prepared for {capacity} (call SamplingContext::prepare when it starts playing)"
    )]
    NotPrepared {
        /// Clip name.
        clip: String,
        /// Bones of its compressed form.
        bones: usize,
        /// Bones the context's compressed decoder holds.
        capacity: usize,
    },
    /// A layer weight is negative, NaN or infinite.
    #[error("blending job: layer {layer} has weight {weight}, which is not a finite number >= 0")]
    BadWeight {
        /// Layer index.
        layer: usize,
        /// The weight.
        weight: f32,
    },
    /// A parent index is not before its bone.
    #[error("local-to-model job: bone {bone} has parent {parent}, which is not before it")]
    ParentNotBefore {
        /// Bone index.
        bone: usize,
        /// Parent index.
        parent: u16,
    },
    /// A bone adjust names a bone past the end of the pose.
    #[error("local-to-model job: adjust {index} names bone {bone}, but the pose has {bones} bones")]
    AdjustBoneOutOfRange {
        /// Adjust index.
        index: usize,
        /// The bone it names.
        bone: u16,
        /// Bones in the pose.
        bones: usize,
    },
    /// Adjusts are not sorted by bone.
    #[error(
        "local-to-model job: adjust {index} (bone {bone}) comes after an adjust on a later bone; keep adjusts sorted by bone"
    )]
    AdjustsUnsorted {
        /// Adjust index.
        index: usize,
        /// The bone it names.
        bone: u16,
    },
    /// A bone adjust has a non-finite component.
    #[error("local-to-model job: adjust {index} (bone {bone}) is not finite")]
    AdjustNotFinite {
        /// Adjust index.
        index: usize,
        /// The bone it names.
        bone: u16,
    },
}

pub(crate) fn check_out(
    job: &'static str,
    output: &'static str,
    needed: usize,
    got: usize,
) -> Result<(), JobError> {
    if got < needed { Err(JobError::OutputTooSmall { job, output, needed, got }) } else { Ok(()) }
}

pub(crate) fn check_in(
    job: &'static str,
    input: impl Into<String>,
    expected: usize,
    got: usize,
) -> Result<(), JobError> {
    if got != expected {
        Err(JobError::InputLength { job, input: input.into(), expected, got })
    } else {
        Ok(())
    }
}

/// The sampling cache of one playing head: one interval cursor per track slot (a key block uses
/// the slot of its first track), so forward playback finds each segment in O(1), scratch space
/// for the four-wide rotation pass of loose tracks, and the segments of the clip's streams
/// (sized by [`SamplingContext::prepare`]). One context per head; size it for the largest clip
/// it samples. Cursors are hints and the stream segments are tied to the compiled clip they came
/// from: a context used with another clip, or at a random time, stays correct.
#[derive(Clone, Debug, Default)]
pub struct SamplingContext {
    cursors: Vec<u32>,
    /// Rotations gathered for the four-wide slerp: bone, endpoints (the end in the start's
    /// hemisphere), parameter and `dot` of the endpoints.
    rot_bones: Vec<u32>,
    rot_ends: Vec<[Vec4; 2]>,
    rot_ux: Vec<[f32; 2]>,
    /// Every bone loose, for clips not compiled yet.
    all_loose: Vec<LooseBone>,
    /// The segments of the clip's streams this head is in (see [`crate::compiled_clip`]).
    streams: StreamSlots,
    /// The decoder's cache for a clip that plays a compressed form ([`Clip::compressed`]),
    /// made by [`SamplingContext::prepare`] (boxed: most heads never play one).
    compressed: Option<Box<CompressedContext>>,
}

impl SamplingContext {
    /// A context for clips of up to `max_bones` bones.
    pub fn new(max_bones: usize) -> Self {
        let mut c = Self::default();
        c.resize(max_bones);
        c
    }

    /// Number of bones this context can serve.
    pub fn max_bones(&self) -> usize {
        self.cursors.len() / 3
    }

    /// Resizes for clips of up to `max_bones` bones (allocates; not a per-frame call).
    pub fn resize(&mut self, max_bones: usize) {
        self.cursors.resize(max_bones * 3, 0);
        self.rot_bones.resize(max_bones, 0);
        self.rot_ends.resize(max_bones, [Vec4::ZERO; 2]);
        self.rot_ux.resize(max_bones, [0.0; 2]);
        self.all_loose = (0..max_bones as u32).map(|bone| LooseBone { bone, in_block: 0 }).collect();
    }

    /// Readies this context for `clip`: compiles the clip (once per clip, shared by every head)
    /// and sizes the head's stream slots for it (allocates when they grow; nothing for a clip
    /// whose tracks all sit in key blocks). Call it where the clip starts playing, not per frame;
    /// a head not prepared samples the clip's stream tracks one by one instead (the same pose:
    /// translations and scales to the bit, rotations to rounding).
    pub fn prepare(&mut self, clip: &Clip) {
        if let Some(c) = clip.compressed() {
            // The compressed form plays instead of the tracks: no key blocks to build.
            let cc = self.compressed.get_or_insert_with(Box::default);
            if cc.max_bones() < c.bone_count() {
                cc.resize(c.bone_count());
            }
            return;
        }
        self.streams.reserve(clip.compiled());
    }

    /// Forgets all cursors and cached stream segments.
    pub fn invalidate(&mut self) {
        self.cursors.fill(0);
        self.streams.invalidate();
        if let Some(cc) = &mut self.compressed {
            cc.invalidate();
        }
    }

    /// Bytes of per-head state this context holds (cursors, scratch and stream slots).
    pub fn bytes(&self) -> usize {
        use std::mem::size_of_val;
        size_of_val(&self.cursors[..])
            + size_of_val(&self.rot_bones[..])
            + size_of_val(&self.rot_ends[..])
            + size_of_val(&self.rot_ux[..])
            + size_of_val(&self.all_loose[..])
            + self.streams.bytes()
            + self.compressed.as_ref().map_or(0, |c| c.bytes())
    }
}

/// Samples a clip at a time into local transforms. Bones whose channel is missing take the
/// corresponding part of the bind pose.
pub struct SamplingJob<'a> {
    /// The clip.
    pub clip: &'a Clip,
    /// The skeleton's bind pose (one entry per bone of the clip).
    pub bind_pose: &'a [Transform],
    /// Time in seconds (clamped by the tracks to their first/last keys).
    pub time: f32,
    /// Cursors: one slot per track (`3 * bone + channel`); a key block uses its first track's slot.
    pub context: &'a mut SamplingContext,
    /// Output local transforms.
    pub output: &'a mut [Transform],
}

impl SamplingJob<'_> {
    /// Checks that the inputs fit together.
    pub fn validate(&self) -> Result<(), JobError> {
        let n = self.clip.channels().len();
        check_in("sampling job", "bind_pose", n, self.bind_pose.len())?;
        check_out("sampling job", "output", n, self.output.len())?;
        if self.context.max_bones() < n {
            return Err(JobError::ContextTooSmall {
                clip: self.clip.name.clone(),
                bones: n,
                capacity: self.context.max_bones(),
            });
        }
        if !self.time.is_finite() {
            return Err(JobError::NonFiniteTime(self.time));
        }
        if let Some(c) = self.clip.compressed() {
            let capacity = self.context.compressed.as_ref().map_or(0, |c| c.max_bones());
            if c.bone_count() != n || capacity < n {
                return Err(JobError::NotPrepared {
                    clip: self.clip.name.clone(),
                    bones: c.bone_count(),
                    capacity,
                });
            }
        }
        Ok(())
    }

    /// Validates, then samples. A clip that plays a compressed form ([`Clip::compressed`]) is
    /// decoded from it ([`crate::compressed`]; the context prepared for it). Tracks grouped into key blocks by the clip's compiled form
    /// ([`Clip::compiled`]; call it once when the clip starts playing: the job reads only a form
    /// already built, and samples a clip without one track by track, allocating nothing either
    /// way) are sampled block by block, four bones per instruction; the rest
    /// ("loose" tracks) through their cursors, with the rotations of plain LINEAR loose tracks
    /// gathered and interpolated four at a time ([`math::slerp_weights4`]). Missing channels take
    /// the bind pose.
    pub fn run(self) -> Result<(), JobError> {
        self.validate()?;
        self.sample();
        Ok(())
    }

    /// The sampling itself, over validated inputs.
    #[inline(always)]
    fn sample(self) {
        let t = self.time;
        let n = self.clip.channels().len();
        if let Some(c) = self.clip.compressed()
            && let Some(cc) = &mut self.context.compressed
        {
            cc.sample(c, &self.bind_pose[..n], t, &mut self.output[..n]);
            return;
        }
        let compiled = self.clip.compiled_if_built();
        let ctx = &mut *self.context;
        let cursors = &mut ctx.cursors[..n * 3];
        let rot_bones = &mut ctx.rot_bones[..n];
        let rot_ends = &mut ctx.rot_ends[..n];
        let rot_ux = &mut ctx.rot_ux[..n];
        let channels = self.clip.channels();
        let bind = &self.bind_pose[..n];
        let out = &mut self.output[..n];
        let mut rotations = 0usize;
        // Not compiled yet: every bone is loose (the job never compiles; players do it up front).
        let loose_bones = match compiled {
            Some(c) => c.loose(),
            None => &ctx.all_loose[..n],
        };
        for &loose in loose_bones {
            let i = loose.bone as usize;
            let (ch, b) = (&channels[i], &bind[i]);
            let o = &mut out[i];
            if !loose.block_translation() {
                o.translation = match &ch.translation {
                    Some(tr) => tr.sample_with_cursor(t, &mut cursors[3 * i]).unwrap_or(b.translation),
                    None => b.translation,
                };
            }
            if !loose.block_rotation() {
                o.rotation = b.rotation;
                if let Some(tr) = &ch.rotation {
                    match tr.lerp_parts(t, &mut cursors[3 * i + 1]) {
                        Some((q0, q1, u)) => {
                            let (a, mut e) = (Vec4::from(q0), Vec4::from(q1));
                            let mut d = a.dot(e);
                            if d < 0.0 {
                                e = -e;
                                d = -d;
                            }
                            rot_bones[rotations] = i as u32;
                            rot_ends[rotations] = [a, e];
                            rot_ux[rotations] = [u, d.min(1.0)];
                            rotations += 1;
                        }
                        None => {
                            if let Some(q) = tr.sample_with_cursor(t, &mut cursors[3 * i + 1]) {
                                o.rotation = q;
                            }
                        }
                    }
                }
            }
            if !loose.block_scale() {
                o.scale = match &ch.scale {
                    Some(tr) => tr.sample_with_cursor(t, &mut cursors[3 * i + 2]).unwrap_or(b.scale),
                    None => b.scale,
                };
            }
        }
        if let Some(c) = compiled {
            c.sample_blocks(t, cursors, out);
            if ctx.streams.fits(c) {
                c.sample_streams(t, channels, cursors, &mut ctx.streams, out);
            } else {
                c.sample_streams_by_track(t, channels, cursors, out);
            }
        }
        // Loose rotations, four lanes at a time.
        let (bones, ends, ux) = (&rot_bones[..rotations], &rot_ends[..rotations], &rot_ux[..rotations]);
        let mut k = 0;
        while k + 4 <= rotations {
            let u4 = Vec4::new(ux[k][0], ux[k + 1][0], ux[k + 2][0], ux[k + 3][0]);
            let x4 = Vec4::new(ux[k][1], ux[k + 1][1], ux[k + 2][1], ux[k + 3][1]);
            let (wa, wb) = math::slerp_weights4(u4, x4);
            for lane in 0..4 {
                let [a, e] = ends[k + lane];
                out[bones[k + lane] as usize].rotation = math::renormalize(a * wa[lane] + e * wb[lane]);
            }
            k += 4;
        }
        for j in k..rotations {
            let [a, e] = ends[j];
            let (wa, wb) = math::slerp_weights(ux[j][0], ux[j][1]);
            out[bones[j] as usize].rotation = math::renormalize(a * wa + e * wb);
        }
    }
}

/// One input of a [`BlendingJob`].
#[derive(Clone, Copy, Debug)]
pub struct BlendLayer<'a> {
    /// The layer's local pose.
    pub pose: &'a [Transform],
    /// Layer weight (>= 0).
    pub weight: f32,
    /// Optional per-bone weights multiplying `weight`.
    pub mask: Option<&'a [f32]>,
}

/// Blends layers on local TRS: translations and scales are weighted averages, rotations a
/// normalized weighted sum with each quaternion flipped into the first contributor's hemisphere.
/// Weights are normalized per bone. A bone with a single contributing layer copies it exactly;
/// a bone whose total weight is below `threshold` takes the rest pose.
pub struct BlendingJob<'a> {
    /// The layers.
    pub layers: &'a [BlendLayer<'a>],
    /// Pose used where the total weight is below `threshold`.
    pub rest_pose: &'a [Transform],
    /// Minimum total weight per bone.
    pub threshold: f32,
    /// Output local transforms.
    pub output: &'a mut [Transform],
}

impl BlendingJob<'_> {
    /// Checks that the inputs fit together.
    pub fn validate(&self) -> Result<(), JobError> {
        let n = self.rest_pose.len();
        check_out("blending job", "output", n, self.output.len())?;
        for (i, l) in self.layers.iter().enumerate() {
            // The input's name is only formatted on failure: validation allocates nothing.
            if l.pose.len() != n {
                check_in("blending job", format!("layer {i} pose"), n, l.pose.len())?;
            }
            if let Some(m) = l.mask
                && m.len() != n
            {
                check_in("blending job", format!("layer {i} mask"), n, m.len())?;
            }
            if !(l.weight.is_finite() && l.weight >= 0.0) {
                return Err(JobError::BadWeight { layer: i, weight: l.weight });
            }
        }
        Ok(())
    }

    /// Validates, then blends.
    pub fn run(self) -> Result<(), JobError> {
        self.validate()?;
        let n = self.rest_pose.len();
        if let [a, b] = self.layers
            && a.mask.is_none()
            && b.mask.is_none()
            && a.weight > 0.0
            && b.weight > 0.0
            && a.weight + b.weight >= self.threshold
        {
            // The common crossfade: two full-body layers, both contributing. The same blend as the
            // general loop below (pre-normalized weights), without its per-layer branches.
            let inv = 1.0 / (a.weight + b.weight);
            let (wa, wb) = (a.weight * inv, b.weight * inv);
            // With AVX-512F sixteen bones at a time, with AVX eight (rotations in rows of sixteen
            // or eight, translations and scales one unaligned access a bone; bit for bit
            // `blend2_one`), else four at a time with rotations in SoA lanes (x, y, z, w of four
            // quaternions), as ozz keeps them. The rest one by one.
            let four = n / 4 * 4;
            let (fa, fb, fo) = (&a.pose[..four], &b.pose[..four], &mut self.output[..four]);
            #[cfg(target_arch = "x86_64")]
            if avx::LINEAR_LAYOUT && crate::simd::wide_kernels() {
                // SAFETY: AVX-512F (and AVX, which the avx512 level implies) and the layout
                // checked just above; equal lengths, a multiple of 4.
                unsafe { avx512::blend2(fa, fb, wa, wb, fo) };
            } else if avx::LINEAR_LAYOUT && crate::simd::avx2() {
                // SAFETY: AVX (the avx2 level) and the layout checked just above; equal lengths,
                // a multiple of 4.
                unsafe { avx::blend2(fa, fb, wa, wb, fo) };
            } else {
                blend2_soa(fa, fb, wa, wb, fo);
            }
            #[cfg(not(target_arch = "x86_64"))]
            blend2_soa(fa, fb, wa, wb, fo);
            for ((o, x), y) in self.output[four..n].iter_mut().zip(&a.pose[four..n]).zip(&b.pose[four..n]) {
                *o = blend2_one(x, y, wa, wb);
            }
            return Ok(());
        }
        for i in 0..n {
            let mut total = 0.0f32;
            let mut count = 0u32;
            let mut last = Transform::IDENTITY;
            let mut t = Vec3::ZERO;
            let mut s = Vec3::ZERO;
            let mut r = Vec4::ZERO;
            let mut first_r = Vec4::ZERO;
            for l in self.layers {
                let mut w = l.weight;
                if let Some(m) = l.mask {
                    w *= m[i].max(0.0);
                }
                if !(w > 0.0) {
                    continue;
                }
                let x = l.pose[i];
                let q = Vec4::from(x.rotation);
                if count == 0 {
                    first_r = q;
                    r = q * w;
                } else {
                    r += if q.dot(first_r) < 0.0 { -q * w } else { q * w };
                }
                t += x.translation * w;
                s += x.scale * w;
                total += w;
                count += 1;
                last = x;
            }
            self.output[i] = if count == 0 || total < self.threshold {
                self.rest_pose[i]
            } else if count == 1 {
                last
            } else {
                let inv = 1.0 / total;
                let len = r.length();
                Transform {
                    translation: t * inv,
                    rotation: if len > 1e-12 { Quat::from_vec4(r / len) } else { last.rotation },
                    scale: s * inv,
                }
            };
        }
        Ok(())
    }
}

/// Adjusts a bone after sampling and blending, before composition. Everything is stated in rig
/// model space about the bone's own origin; the compose loop brings it into the parent's frame
/// (rotation conjugated by the parent's composed rotation, offset through the inverse of the
/// parent's upper 3x3). Entries on one bone compose in list order.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BoneAdjust {
    /// Bone index.
    pub bone: u16,
    /// Model-space rotation about the bone's origin (or, when `absolute`, the bone's final
    /// model-space orientation).
    pub rotation: Quat,
    /// Model-space offset of the bone's origin.
    pub offset: Vec3,
    /// When true, `rotation` is the orientation the bone ends with in model space.
    pub absolute: bool,
    /// Uniform scale about the bone's origin; clamped to at least [`MIN_ADJUST_SCALE`], so a
    /// zero collapses the bone's skin while its orientation stays recoverable.
    pub scale: f32,
}

/// The smallest scale an adjust applies: small enough to collapse a skin to a point on screen,
/// large enough that the bone's orientation can still be read back from its matrix.
pub const MIN_ADJUST_SCALE: f32 = 1e-4;

impl BoneAdjust {
    /// A model-space rotation of `bone`.
    pub fn rotate(bone: u16, rotation: Quat) -> Self {
        Self { bone, rotation, offset: Vec3::ZERO, absolute: false, scale: 1.0 }
    }

    /// Sets `bone`'s final model-space orientation.
    pub fn orient(bone: u16, rotation: Quat) -> Self {
        Self { bone, rotation, offset: Vec3::ZERO, absolute: true, scale: 1.0 }
    }

    /// A model-space offset of `bone`'s origin.
    pub fn offset(bone: u16, offset: Vec3) -> Self {
        Self { bone, rotation: Quat::IDENTITY, offset, absolute: false, scale: 1.0 }
    }

    /// A uniform scale of `bone` about its origin.
    pub fn scale(bone: u16, scale: f32) -> Self {
        Self { bone, rotation: Quat::IDENTITY, offset: Vec3::ZERO, absolute: false, scale }
    }

    fn is_finite(&self) -> bool {
        self.rotation.is_finite() && self.offset.is_finite() && self.scale.is_finite()
    }
}

/// Inserts `adjust` into a list kept sorted by bone, after existing entries of the same bone (so
/// entries on one bone keep their list order). Returns the index.
pub fn insert_adjust(list: &mut Vec<BoneAdjust>, adjust: BoneAdjust) -> usize {
    // The same order as `sort_adjusts`: by bone, earlier entries first on one bone.
    let i = list.partition_point(|a| a.bone <= adjust.bone);
    list.insert(i, adjust);
    i
}

/// Sorts adjusts by bone, stably (entries on one bone keep their order: they compose in it), in
/// place and without allocating (an insertion sort: the lists a frame builds are short). The
/// Animator and the graph evaluator both order their adjusts with it.
pub fn sort_adjusts(list: &mut [BoneAdjust]) {
    for i in 1..list.len() {
        let mut j = i;
        while j > 0 && list[j - 1].bone > list[j].bone {
            list.swap(j - 1, j);
            j -= 1;
        }
    }
}

/// Composes local transforms into model space in one forward loop (no recursion):
/// `model[i] = model[parent[i]] * local[i]`, roots relative to the model origin. Adjusts (sorted by
/// bone) are applied to a bone's local transform as the loop reaches it.
pub struct LocalToModelJob<'a> {
    /// Parent indices (`parent < index`, [`NO_PARENT`] for roots).
    pub parents: &'a [u16],
    /// Local transforms.
    pub local: &'a [Transform],
    /// Bone adjusts, sorted by bone.
    pub adjusts: &'a [BoneAdjust],
    /// Output `model_from_bone` matrices.
    pub output: &'a mut [Mat4],
}

impl LocalToModelJob<'_> {
    /// Checks that the inputs fit together.
    pub fn validate(&self) -> Result<(), JobError> {
        let n = self.parents.len();
        check_in("local-to-model job", "local", n, self.local.len())?;
        check_out("local-to-model job", "output", n, self.output.len())?;
        // One pass without an early exit (it vectorizes: it runs every frame), then the first
        // offender found only when there is one.
        // `p + 1 <= i` in 16-bit wrapping arithmetic is "no parent (u16::MAX) or p < i", and
        // it vectorizes in 32-bit lanes. From bone 65536 on every 16-bit parent is before its
        // bone, so only the first 65536 are looked at.
        const _: () = assert!(NO_PARENT == u16::MAX);
        let ok = self
            .parents
            .iter()
            .take(1 << 16)
            .zip(0u32..)
            .fold(true, |ok, (&p, i)| ok & (u32::from(p.wrapping_add(1)) <= i));
        if !ok {
            let before = |i: usize, p: u16| p == NO_PARENT || (p as usize) < i;
            let (bone, &parent) =
                self.parents.iter().enumerate().find(|&(i, &p)| !before(i, p)).unwrap_or((0, &0));
            return Err(JobError::ParentNotBefore { bone, parent });
        }
        let mut prev = 0u16;
        for (i, a) in self.adjusts.iter().enumerate() {
            if a.bone as usize >= n {
                return Err(JobError::AdjustBoneOutOfRange { index: i, bone: a.bone, bones: n });
            }
            if a.bone < prev {
                return Err(JobError::AdjustsUnsorted { index: i, bone: a.bone });
            }
            if !a.is_finite() {
                return Err(JobError::AdjustNotFinite { index: i, bone: a.bone });
            }
            prev = a.bone;
        }
        Ok(())
    }

    /// Validates, then composes.
    pub fn run(self) -> Result<(), JobError> {
        self.validate()?;
        let n = self.parents.len();
        #[cfg(target_arch = "x86_64")]
        if crate::simd::wide_kernels() {
            // SAFETY: the level is avx512, so the CPU has AVX-512F (`simd::level`).
            unsafe { compose_avx512(self.parents, self.local, self.adjusts, &mut self.output[..n]) };
            return Ok(());
        } else if crate::simd::avx2() {
            // SAFETY: the level is avx2 or above, so the CPU has AVX (`simd::level`).
            unsafe { compose_avx(self.parents, self.local, self.adjusts, &mut self.output[..n]) };
            return Ok(());
        }
        compose(self.parents, self.local, self.adjusts, &mut self.output[..n], local_rows8);
        Ok(())
    }
}

/// [`compose`] compiled with AVX: the same arithmetic, with each local matrix entry broadcast
/// straight from memory (`vbroadcastss`, a load) instead of a shuffle.
///
/// # Safety
/// The CPU must support AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn compose_avx(parents: &[u16], local: &[Transform], adjusts: &[BoneAdjust], out: &mut [Mat4]) {
    // SAFETY: AVX is enabled for this function (the caller checked the CPU).
    compose(parents, local, adjusts, out, |t| unsafe { avx::local_rows8(t) });
}

/// [`compose`] compiled with AVX-512F: local matrices built sixteen bones at a time.
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn compose_avx512(parents: &[u16], local: &[Transform], adjusts: &[BoneAdjust], out: &mut [Mat4]) {
    // SAFETY: AVX-512F is enabled for this function (the caller checked the CPU).
    compose(parents, local, adjusts, out, |t| unsafe { avx512::local_rows16(t) });
}

/// The local-to-model loop over validated inputs (`out` as long as `parents`).
///
/// Local matrices are built `W` bones at a time in SoA rows (`rows_of`: [`local_soa`]'s arithmetic,
/// kept in that layout, no transposes back), then each bone's `parent * local` takes the parent's columns as they
/// are (a chain's parent from registers, another from the store) and each local entry broadcast
/// from the SoA rows. The products and sums run in glam's order (`(x + y) + z`, then the
/// translation), so every model matrix is glam's `parent * local` to the bit in x, y and z; the
/// fourth row is written as exactly `0 0 0 1`.
#[inline(always)]
fn compose<const W: usize>(
    parents: &[u16],
    local: &[Transform],
    adjusts: &[BoneAdjust],
    out: &mut [Mat4],
    rows_of: impl Fn(&[Transform; W]) -> [[f32; W]; 9],
) {
    let n = out.len();
    let (parents, local) = (&parents[..n], &local[..n]);
    let mut next_adjust = 0usize;
    // The bone of the next adjust (past the pose when none is left): one compare per bone.
    let adjust_bone = |next: usize| adjusts.get(next).map_or(usize::MAX, |a| a.bone as usize);
    let mut next_bone = adjust_bone(0);
    let mut previous = Mat4::IDENTITY;
    for start in (0..n).step_by(W) {
        let rows = match local.get(start..start + W) {
            Some(group) => rows_of(group.try_into().expect("a group of W transforms")),
            None => {
                let mut pad = [Transform::IDENTITY; W];
                pad[..n - start].copy_from_slice(&local[start..n]);
                rows_of(&pad)
            }
        };
        for i in start..(start + W).min(n) {
            let k = i - start;
            // SAFETY: `i < start + W`, so `k < W`: the rows' bounds checks can go.
            unsafe { std::hint::assert_unchecked(k < W) };
            let p = parents[i];
            let model = if i == next_bone {
                let parent = if p == NO_PARENT { None } else { Some(out[p as usize]) };
                let m = adjusted(parent.as_ref(), local[i], adjusts, &mut next_adjust);
                next_bone = adjust_bone(next_adjust);
                m
            } else if p == NO_PARENT {
                let t = local[i].translation;
                Mat4::from_cols(
                    Vec4::new(rows[0][k], rows[1][k], rows[2][k], 0.0),
                    Vec4::new(rows[3][k], rows[4][k], rows[5][k], 0.0),
                    Vec4::new(rows[6][k], rows[7][k], rows[8][k], 0.0),
                    t.extend(1.0),
                )
            } else if p as usize + 1 == i {
                times_local(&previous, &rows, k, local[i].translation)
            } else {
                times_local(&out[p as usize], &rows, k, local[i].translation)
            };
            // The chain carries the columns as computed; the store gets exact zeros in the
            // fourth row of the first three columns (a product's could be -0.0, or NaN from a
            // non-finite local, which never reaches x, y, z). The translation's fourth element
            // is the parent's 1 plus three zeros: exactly 1.
            out[i] = exact_fourth_row(&model);
            previous = model;
        }
    }
}

/// The portable [`local_soa`] for eight transforms.
fn local_rows8(t: &[Transform; 8]) -> [[f32; 8]; 9] {
    let (lo, hi) = (local_soa(&t[..4]), local_soa(&t[4..]));
    std::array::from_fn(|j| std::array::from_fn(|k| if k < 4 { lo[j][k] } else { hi[j][k - 4] }))
}

/// `m * local` where the local matrix is lane `k` of `rows` (see [`local_soa`]) with translation
/// `t`: each local entry broadcast, products and sums in glam's order.
#[inline(always)]
fn times_local<const W: usize>(m: &Mat4, rows: &[[f32; W]; 9], k: usize, t: Vec3) -> Mat4 {
    let e = |j: usize| Vec4::splat(rows[j][k]);
    let col = |c: usize| m.x_axis * e(3 * c) + m.y_axis * e(3 * c + 1) + m.z_axis * e(3 * c + 2);
    let tr = m.x_axis * Vec4::splat(t.x) + m.y_axis * Vec4::splat(t.y) + m.z_axis * Vec4::splat(t.z);
    Mat4::from_cols(col(0), col(1), col(2), tr + m.w_axis)
}

/// `m` with the fourth element of its first three columns set to exactly 0.
#[inline(always)]
fn exact_fourth_row(m: &Mat4) -> Mat4 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128, _mm_and_ps, _mm_castsi128_ps, _mm_set_epi32};
        // SAFETY: SSE2 is part of x86_64.
        let xyz = unsafe { _mm_castsi128_ps(_mm_set_epi32(0, -1, -1, -1)) };
        let and = |v: Vec4| Vec4::from(unsafe { _mm_and_ps(__m128::from(v), xyz) });
        Mat4::from_cols(and(m.x_axis), and(m.y_axis), and(m.z_axis), m.w_axis)
    }
    #[cfg(not(target_arch = "x86_64"))]
    Mat4::from_cols(
        m.x_axis.truncate().extend(0.0),
        m.y_axis.truncate().extend(0.0),
        m.z_axis.truncate().extend(0.0),
        m.w_axis,
    )
}

/// A bone with adjusts: its local transform adjusted in the parent's frame (see [`BoneAdjust`]),
/// then `parent * local` as affine matrices. Advances `next_adjust` past the bone's adjusts.
#[cold]
#[inline(never)]
fn adjusted(
    parent: Option<&Mat4>,
    mut l: Transform,
    adjusts: &[BoneAdjust],
    next_adjust: &mut usize,
) -> Mat4 {
    let i = adjusts[*next_adjust].bone;
    let root = parent.is_none();
    let parent = parent.copied().unwrap_or(Mat4::IDENTITY);
    let parent_rot = math::rotation_of(&parent);
    let parent_rot_inv = parent_rot.conjugate();
    let parent_lin_inv = Mat3::from_mat4(parent).inverse();
    while *next_adjust < adjusts.len() && adjusts[*next_adjust].bone == i {
        let a = &adjusts[*next_adjust];
        let r = a.rotation.normalize();
        l.rotation =
            if a.absolute { parent_rot_inv * r } else { (parent_rot_inv * r * parent_rot) * l.rotation }
                .normalize();
        if a.offset != Vec3::ZERO {
            let d = parent_lin_inv * a.offset;
            if d.is_finite() {
                l.translation += d;
            }
        }
        let s = if a.scale.abs() < MIN_ADJUST_SCALE {
            MIN_ADJUST_SCALE.copysign(if a.scale == 0.0 { 1.0 } else { a.scale })
        } else {
            a.scale
        };
        l.scale *= s;
        *next_adjust += 1;
    }
    if root { Mat4::from(affine(&l)) } else { Mat4::from(Affine3A::from_mat4(parent) * affine(&l)) }
}

/// The two-layer blend of one bone with normalized weights `wa + wb = 1`: translations and
/// scales weighted, the rotations' weighted sum (`b`'s flipped into `a`'s hemisphere) divided by
/// its length, `b`'s rotation where that length is not above 1e-12. The fast path's reference:
/// the AVX-512 kernel is this to the bit.
#[inline(always)]
fn blend2_one(x: &Transform, y: &Transform, wa: f32, wb: f32) -> Transform {
    let qa = Vec4::from(x.rotation);
    let qb = Vec4::from(y.rotation);
    let wq = if qa.dot(qb) < 0.0 { -wb } else { wb };
    let r = qa * wa + qb * wq;
    let len = r.length();
    Transform {
        translation: x.translation * wa + y.translation * wb,
        rotation: if len > 1e-12 { Quat::from_vec4(r / len) } else { y.rotation },
        scale: x.scale * wa + y.scale * wb,
    }
}

/// The two-layer blend of `xa` and `xb` (lengths a multiple of 4) with normalized weights
/// `wa + wb = 1` into `out`: the arithmetic of the scalar path (a per-bone hemisphere flip, the
/// weighted sum, a division by its length; identity-length sums take `xb`), rotations four
/// bones to a register, sums in glam's order: [`blend2_one`] to the bit, as the AVX-512 kernel
/// is, so a crossfade gives the same bits on every CPU.
#[inline(always)]
fn blend2_soa(xa: &[Transform], xb: &[Transform], wa: f32, wb: f32, out: &mut [Transform]) {
    let (va, vb, nb) = (Vec4::splat(wa), Vec4::splat(wb), Vec4::splat(-wb));
    let tiny = Vec4::splat(1e-12);
    for ((o, a), b) in out.chunks_exact_mut(4).zip(xa.chunks_exact(4)).zip(xb.chunks_exact(4)) {
        let qa = Mat4::from_cols(
            Vec4::from(a[0].rotation),
            Vec4::from(a[1].rotation),
            Vec4::from(a[2].rotation),
            Vec4::from(a[3].rotation),
        )
        .transpose();
        let qb = Mat4::from_cols(
            Vec4::from(b[0].rotation),
            Vec4::from(b[1].rotation),
            Vec4::from(b[2].rotation),
            Vec4::from(b[3].rotation),
        )
        .transpose();
        // Sums in glam's `Vec4::dot` order, `(x + z) + (y + w)`, as `blend2_one` and the
        // AVX-512 kernel: every path gives the same bits.
        let dot =
            (qa.x_axis * qb.x_axis + qa.z_axis * qb.z_axis) + (qa.y_axis * qb.y_axis + qa.w_axis * qb.w_axis);
        let wq = Vec4::select(dot.cmplt(Vec4::ZERO), nb, vb);
        let r = Mat4::from_cols(
            qa.x_axis * va + qb.x_axis * wq,
            qa.y_axis * va + qb.y_axis * wq,
            qa.z_axis * va + qb.z_axis * wq,
            qa.w_axis * va + qb.w_axis * wq,
        );
        let len = ((r.x_axis * r.x_axis + r.z_axis * r.z_axis) + (r.y_axis * r.y_axis + r.w_axis * r.w_axis))
            .sqrt();
        let ok = len.cmpgt(tiny);
        let rot = Mat4::from_cols(r.x_axis / len, r.y_axis / len, r.z_axis / len, r.w_axis / len).transpose();
        let lanes = [rot.x_axis, rot.y_axis, rot.z_axis, rot.w_axis];
        let ok = ok.bitmask();
        for k in 0..4 {
            o[k] = Transform {
                translation: a[k].translation * wa + b[k].translation * wb,
                rotation: if ok & (1 << k) != 0 { Quat::from_vec4(lanes[k]) } else { b[k].rotation },
                scale: a[k].scale * wa + b[k].scale * wb,
            };
        }
    }
}

#[inline(always)]
fn affine(t: &Transform) -> Affine3A {
    Affine3A::from_scale_rotation_translation(t.scale, t.rotation, t.translation)
}

/// The upper 3x3 of four transforms' local matrices in SoA rows: `rows[3 * c + r][k]` is row `r`
/// of column `c` of transform `k`, with [`affine`]'s arithmetic (glam's `Mat3A::from_quat`, then
/// the scale per column), four transforms per instruction. `t` holds at least four transforms.
#[inline(always)]
fn local_soa(t: &[Transform]) -> [[f32; 4]; 9] {
    let q = Mat4::from_cols(
        Vec4::from(t[0].rotation),
        Vec4::from(t[1].rotation),
        Vec4::from(t[2].rotation),
        Vec4::from(t[3].rotation),
    )
    .transpose();
    let s = Mat4::from_cols(
        t[0].scale.extend(0.0),
        t[1].scale.extend(0.0),
        t[2].scale.extend(0.0),
        t[3].scale.extend(0.0),
    )
    .transpose();
    let rows = quat_scale_rows(
        [q.x_axis, q.y_axis, q.z_axis, q.w_axis],
        [s.x_axis, s.y_axis, s.z_axis],
        Vec4::ONE,
        |a, b| a + b,
        |a, b| a - b,
        |a, b| a * b,
    );
    rows.map(|r| r.to_array())
}

/// The upper 3x3 of local matrices from rotation rows `q` (x, y, z, w) and scale rows `s`
/// (x, y, z) in SoA lanes of any width (`V`: four, eight or sixteen lanes, with its `add`,
/// `sub`, `mul` and `one`): glam's `Mat3A::from_quat`, then the scale per column, in that
/// order, so every width gives the same bits. `rows[3 * c + r]` is row `r` of column `c`.
#[inline(always)]
pub(crate) fn quat_scale_rows<V: Copy>(
    q: [V; 4],
    s: [V; 3],
    one: V,
    add: impl Fn(V, V) -> V,
    sub: impl Fn(V, V) -> V,
    mul: impl Fn(V, V) -> V,
) -> [V; 9] {
    let [x, y, z, w] = q;
    let [sx, sy, sz] = s;
    let (x2, y2, z2) = (add(x, x), add(y, y), add(z, z));
    let (xx, xy, xz) = (mul(x, x2), mul(x, y2), mul(x, z2));
    let (yy, yz, zz) = (mul(y, y2), mul(y, z2), mul(z, z2));
    let (wx, wy, wz) = (mul(w, x2), mul(w, y2), mul(w, z2));
    [
        mul(sub(one, add(yy, zz)), sx),
        mul(add(xy, wz), sx),
        mul(sub(xz, wy), sx),
        mul(sub(xy, wz), sy),
        mul(sub(one, add(xx, zz)), sy),
        mul(add(yz, wx), sy),
        mul(add(xz, wy), sz),
        mul(sub(yz, wx), sz),
        mul(sub(one, add(xx, yy)), sz),
    ]
}

/// Builds the skinning palette from the pose: `palette[i] = model[i] * inverse_bind[i]`.
pub struct PaletteJob<'a> {
    /// `model_from_bone` matrices.
    pub model: &'a [Mat4],
    /// `bone_from_model` at bind time.
    pub inverse_bind: &'a [Mat4],
    /// Output skinning matrices.
    pub output: &'a mut [Mat4],
}

impl PaletteJob<'_> {
    /// Checks that the inputs fit together.
    pub fn validate(&self) -> Result<(), JobError> {
        check_in("palette job", "inverse_bind", self.model.len(), self.inverse_bind.len())?;
        check_out("palette job", "output", self.model.len(), self.output.len())
    }

    /// Validates, then multiplies.
    pub fn run(self) -> Result<(), JobError> {
        self.validate()?;
        #[cfg(target_arch = "x86_64")]
        if crate::simd::avx512() {
            // SAFETY: the level is avx512, so the CPU has AVX-512F; the lengths match (`validate`).
            unsafe { avx512::palette(self.model, self.inverse_bind, self.output) };
            return Ok(());
        } else if crate::simd::avx2() {
            // SAFETY: the level is avx2 or above, so the CPU has AVX; the lengths match.
            unsafe { avx::palette(self.model, self.inverse_bind, self.output) };
            return Ok(());
        }
        for ((o, m), ib) in self.output.iter_mut().zip(self.model).zip(self.inverse_bind) {
            *o = affine_product(m, ib);
        }
        Ok(())
    }
}

/// `m * b` for affine matrices (last row `0 0 0 1`): three columns of three products and the
/// translation with `m`'s own added, in glam's summation order, so the result is `m * b` to the
/// bit when both are affine (the skipped terms are exact zeros); 21 vector operations instead of
/// 28. The palette's inputs are affine: model matrices compose TRS, and glTF requires affine
/// inverse binds (a projective fourth row would be ignored here).
#[inline(always)]
pub fn affine_product(m: &Mat4, b: &Mat4) -> Mat4 {
    let col = |c: Vec4| m.x_axis * c.x + m.y_axis * c.y + m.z_axis * c.z;
    Mat4::from_cols(col(b.x_axis), col(b.y_axis), col(b.z_axis), col(b.w_axis) + m.w_axis)
}

/// Addresses one rig's slice in a [`PoseBuffer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RigSlot(pub u32);

/// One rig's pose, borrowed from a [`PoseBuffer`].
#[derive(Clone, Copy, Debug)]
pub struct RigPose<'a> {
    /// Local transforms.
    pub local: &'a [Transform],
    /// `model_from_bone` matrices.
    pub model: &'a [Mat4],
    /// Skinning matrices.
    pub palette: &'a [Mat4],
}

/// One rig's pose, mutably borrowed from a [`PoseBuffer`].
#[derive(Debug)]
pub struct RigPoseMut<'a> {
    /// Local transforms.
    pub local: &'a mut [Transform],
    /// `model_from_bone` matrices.
    pub model: &'a mut [Mat4],
    /// Skinning matrices.
    pub palette: &'a mut [Mat4],
}

/// All rigs' poses packed end to end (so palettes upload as one buffer), each addressed by a
/// [`RigSlot`].
#[derive(Clone, Debug, Default)]
pub struct PoseBuffer {
    local: Vec<Transform>,
    model: Vec<Mat4>,
    palette: Vec<Mat4>,
    ranges: Vec<Range<usize>>,
}

impl PoseBuffer {
    /// An empty buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a rig of `bones` bones (allocates; call when rigs are added, not per frame).
    pub fn add_rig(&mut self, bones: usize) -> RigSlot {
        let start = self.local.len();
        self.local.resize(start + bones, Transform::IDENTITY);
        self.model.resize(start + bones, Mat4::IDENTITY);
        self.palette.resize(start + bones, Mat4::IDENTITY);
        self.ranges.push(start..start + bones);
        RigSlot(self.ranges.len() as u32 - 1)
    }

    /// Removes every rig.
    pub fn clear(&mut self) {
        self.local.clear();
        self.model.clear();
        self.palette.clear();
        self.ranges.clear();
    }

    /// Number of rigs.
    pub fn rig_count(&self) -> usize {
        self.ranges.len()
    }

    /// The bone range of a rig within the packed arrays.
    pub fn range(&self, slot: RigSlot) -> Option<Range<usize>> {
        self.ranges.get(slot.0 as usize).cloned()
    }

    /// A rig's pose.
    pub fn rig(&self, slot: RigSlot) -> Option<RigPose<'_>> {
        let r = self.range(slot)?;
        Some(RigPose {
            local: &self.local[r.clone()],
            model: &self.model[r.clone()],
            palette: &self.palette[r],
        })
    }

    /// A rig's pose, mutably.
    pub fn rig_mut(&mut self, slot: RigSlot) -> Option<RigPoseMut<'_>> {
        let r = self.range(slot)?;
        Some(RigPoseMut {
            local: &mut self.local[r.clone()],
            model: &mut self.model[r.clone()],
            palette: &mut self.palette[r],
        })
    }

    /// Calls `f(item, pose)` for each rig, in parallel on rayon's pool: `items[i]` is paired with
    /// rig slot `i` (extra items or rigs are skipped). The packed arrays are split recursively
    /// with `split_at_mut`, so this allocates nothing.
    pub fn par_for_each_rig_mut<T: Send>(
        &mut self,
        items: &mut [T],
        f: impl Fn(&mut T, RigPoseMut<'_>) + Sync,
    ) {
        let n = items.len().min(self.ranges.len());
        fn go<T: Send>(
            ranges: &[Range<usize>],
            items: &mut [T],
            base: usize,
            (local, model, palette): (&mut [Transform], &mut [Mat4], &mut [Mat4]),
            f: &(impl Fn(&mut T, RigPoseMut<'_>) + Sync),
        ) {
            match ranges {
                [] => {}
                [r] => {
                    let span = r.start - base..r.end - base;
                    if let Some(item) = items.first_mut() {
                        f(
                            item,
                            RigPoseMut {
                                local: &mut local[span.clone()],
                                model: &mut model[span.clone()],
                                palette: &mut palette[span],
                            },
                        );
                    }
                }
                _ => {
                    let mid = ranges.len() / 2;
                    let cut = ranges[mid].start - base;
                    let (l0, l1) = local.split_at_mut(cut);
                    let (m0, m1) = model.split_at_mut(cut);
                    let (p0, p1) = palette.split_at_mut(cut);
                    let (i0, i1) = items.split_at_mut(mid);
                    rayon::join(
                        || go(&ranges[..mid], i0, base, (l0, m0, p0), f),
                        || go(&ranges[mid..], i1, base + cut, (l1, m1, p1), f),
                    );
                }
            }
        }
        go(&self.ranges[..n], &mut items[..n], 0, (&mut self.local, &mut self.model, &mut self.palette), &f);
    }

    /// All palettes, packed (for one GPU upload).
    pub fn palettes(&self) -> &[Mat4] {
        &self.palette
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use glam::{Mat4, Quat, Vec3, Vec4};

    use super::{affine_product, blend2_one, blend2_soa};
    use crate::math::Transform;
    use crate::skeleton::NO_PARENT;

    /// `n` varied transforms (signed zeros in the scales), as the blend tests use them.
    pub(crate) fn test_pose(n: usize, seed: f32) -> Vec<Transform> {
        (0..n)
            .map(|i| {
                let f = i as f32 + seed;
                Transform {
                    translation: Vec3::new(f.sin(), -0.3 * f, 1.0 / (1.0 + f)),
                    rotation: Quat::from_rotation_y(f * 0.7) * Quat::from_rotation_x(seed - f * 0.13),
                    scale: Vec3::new(1.0 + 0.01 * f, 0.5, -0.0),
                }
            })
            .collect()
    }

    /// A transform's ten floats as bits (signed zeros and NaN payloads compared too).
    pub(crate) fn bits(t: &Transform) -> Vec<u32> {
        let (x, y, z) = (t.translation.to_array(), t.rotation.to_array(), t.scale.to_array());
        x.iter().chain(&y).chain(&z).map(|v| v.to_bits()).collect()
    }

    /// A two-layer blend kernel (`a`, `b`, `wa`, `wb`, `out`).
    pub(crate) type Blend2Kernel = unsafe fn(&[Transform], &[Transform], f32, f32, &mut [Transform]);

    /// Runs a two-layer blend kernel over 44 bones (groups and what is left after them) with
    /// every branch of the rotation blend (opposite hemispheres, a zero sum, NaN) and signed zeros
    /// and infinities in translations and scales, at four weight pairs, and asserts every bone is
    /// [`blend2_one`]'s to the bit.
    ///
    /// # Safety
    /// The CPU must support what `kernel` needs.
    pub(crate) unsafe fn check_blend2_kernel(kernel: Blend2Kernel) {
        let n = 44;
        let (mut a, mut b) = (test_pose(n, 0.0), test_pose(n, 1.7));
        b[5].rotation = -a[5].rotation;
        b[6].rotation = Quat::from_xyzw(-0.0, 0.0, 0.0, 0.0);
        a[6].rotation = Quat::from_xyzw(0.0, -0.0, 0.0, 0.0);
        a[9].rotation = Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0);
        b[10].translation = Vec3::new(-0.0, f32::INFINITY, 0.0);
        b[11].scale = Vec3::new(-0.0, 1.0, f32::NAN);
        b[12].rotation = -a[12].rotation;
        // A zero sum in the high half of a group of eight's registers (bone 7 of group 2).
        a[23].rotation = Quat::from_xyzw(0.0, 0.0, -0.0, 0.0);
        b[23].rotation = Quat::from_xyzw(0.0, 0.0, 0.0, -0.0);
        // The same past the last group of eight (or four).
        b[41].rotation = -a[41].rotation;
        a[43].rotation = Quat::from_xyzw(0.0, f32::NAN, 0.0, 1.0);
        for &(wa, wb) in &[(0.5f32, 0.5f32), (0.1, 0.9), (0.93, 0.07000001), (1.0, 0.0)] {
            let mut out = vec![Transform::IDENTITY; n];
            // SAFETY: the caller's CPU guarantee; equal lengths, a multiple of four.
            unsafe { kernel(&a, &b, wa, wb, &mut out) };
            for i in 0..n {
                let want = blend2_one(&a[i], &b[i], wa, wb);
                assert_eq!(
                    bits(&out[i]),
                    bits(&want),
                    "bone {i}, weights {wa} {wb}: {:?} vs {want:?}",
                    out[i]
                );
            }
        }
    }

    /// A palette kernel (`model`, `inverse_bind`, `out`).
    pub(crate) type PaletteKernel = unsafe fn(&[Mat4], &[Mat4], &mut [Mat4]);

    /// Runs a palette kernel over 37 bones (signed zeros included) and asserts every entry is
    /// [`affine_product`]'s to the bit.
    ///
    /// # Safety
    /// The CPU must support what `kernel` needs.
    pub(crate) unsafe fn check_palette_kernel(kernel: PaletteKernel) {
        let mut model = Vec::new();
        let mut ib = Vec::new();
        for i in 0..37 {
            let f = i as f32;
            model.push(Mat4::from_scale_rotation_translation(
                Vec3::new(1.0 + f * 0.01, 0.9, 1.1),
                Quat::from_rotation_y(f * 0.3) * Quat::from_rotation_x(f * 0.11),
                Vec3::new(f, -0.5 * f, 0.25),
            ));
            ib.push(
                Mat4::from_scale_rotation_translation(
                    Vec3::splat(0.5),
                    Quat::from_rotation_z(f * 0.2),
                    Vec3::new(-f, 0.0, 2.0),
                )
                .inverse(),
            );
        }
        // Signed zeros survive: a column of -0.0 times zeros stays -0.0 where the scalar path's does.
        model[3] = Mat4::from_cols_array(&[
            -0.0, 0.0, -0.0, 0.0, 0.0, -0.0, 0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, -0.0, -0.0, 1.0,
        ]);
        ib[3] = Mat4::IDENTITY;
        let mut out = vec![Mat4::ZERO; model.len()];
        // SAFETY: the caller's CPU guarantee; equal lengths.
        unsafe { kernel(&model, &ib, &mut out) };
        for i in 0..model.len() {
            let want = affine_product(&model[i], &ib[i]);
            let (a, b) = (out[i].to_cols_array(), want.to_cols_array());
            for k in 0..16 {
                assert_eq!(a[k].to_bits(), b[k].to_bits(), "bone {i} element {k}: {} vs {}", a[k], b[k]);
            }
        }
    }

    /// The local-to-model loop with each kernel the jobs may dispatch to (eight-lane AVX, and
    /// sixteen-lane AVX-512, which `simd::wide_kernels` leaves out on Intel CPUs, so it is run
    /// here directly) gives the portable loop's matrices to the bit, on many shapes: the
    /// benchmark's chains of eight, one long chain, a star, random trees, several roots, sizes
    /// around the groups of eight and sixteen, with and without adjusts (relative and
    /// absolute), and a bone with an infinite translation.
    #[test]
    fn every_local_to_model_kernel_composes_the_portable_matrices_to_the_bit() {
        let mut seed = 0x2545_f491u32;
        let mut random = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed as usize
        };
        let chains = |i: usize| if i % 8 == 1 { 0 } else { i - 1 };
        for n in [1usize, 3, 7, 8, 9, 16, 17, 31, 64, 70, 131] {
            let mut shapes: Vec<Vec<u16>> = vec![
                (0..n).map(|i| if i == 0 { NO_PARENT } else { chains(i) as u16 }).collect(),
                (0..n).map(|i| if i == 0 { NO_PARENT } else { (i - 1) as u16 }).collect(),
                (0..n).map(|i| if i == 0 { NO_PARENT } else { 0 }).collect(),
            ];
            for _ in 0..3 {
                shapes.push((0..n).map(|i| if i == 0 { NO_PARENT } else { (random() % i) as u16 }).collect());
            }
            // Several roots, and parents a few bones back.
            shapes.push(
                (0..n)
                    .map(|i| if i % 11 == 0 { NO_PARENT } else { (i - 1 - random() % i.min(3)) as u16 })
                    .collect(),
            );
            for (shape, parents) in shapes.iter().enumerate() {
                // `test_pose`'s scales have a zero z, which would hide every z column's term:
                // z scales here are non-zero but for a signed zero now and then.
                let mut local = test_pose(n, 0.1 * shape as f32);
                for (i, t) in local.iter_mut().enumerate() {
                    t.scale.z = if i % 13 == 12 { -0.0 } else { 1.1 - 0.02 * i as f32 };
                }
                if shape == 3 && n > 5 {
                    local[5].translation.y = f32::INFINITY;
                }
                let adjusts: Vec<super::BoneAdjust> = [3usize, 17, 40, 69, 70]
                    .iter()
                    .filter(|&&bone| bone < n)
                    .map(|&bone| super::BoneAdjust {
                        bone: bone as u16,
                        rotation: Quat::from_rotation_z(0.1 * bone as f32),
                        offset: Vec3::new(0.01, -0.02, 0.0),
                        absolute: bone == 17,
                        scale: 1.0 + 0.01 * bone as f32,
                    })
                    .collect();
                for adjusts in [&[][..], &adjusts[..]] {
                    let what = format!("{n} bones, shape {shape}, {} adjusts", adjusts.len());
                    check_compose_kernels(parents, &local, adjusts, &what);
                }
            }
        }
    }

    /// Every local-to-model kernel this CPU runs against the portable loop, to the bit; the
    /// portable loop's fourth rows are `0 0 0 1` wherever the translation is finite.
    fn check_compose_kernels(
        parents: &[u16],
        local: &[Transform],
        adjusts: &[super::BoneAdjust],
        what: &str,
    ) {
        let n = parents.len();
        let bits_of =
            |m: &[Mat4]| m.iter().flat_map(|m| m.to_cols_array().map(f32::to_bits)).collect::<Vec<_>>();
        let mut want = vec![Mat4::ZERO; n];
        super::compose(parents, local, adjusts, &mut want, super::local_rows8);
        for (i, m) in want.iter().enumerate().filter(|(_, m)| m.w_axis.is_finite()) {
            assert_eq!(m.row(3), Vec4::W, "{what}: bone {i}'s fourth row");
        }
        #[cfg(target_arch = "x86_64")]
        {
            use crate::simd::{SimdLevel, test_gate};
            if test_gate(SimdLevel::Avx2, "the AVX local-to-model") {
                let mut got = vec![Mat4::ZERO; n];
                // SAFETY: the CPU has AVX (the gate above).
                unsafe { super::compose_avx(parents, local, adjusts, &mut got) };
                assert_eq!(bits_of(&got), bits_of(&want), "{what}: AVX");
            }
            if test_gate(SimdLevel::Avx512, "the AVX-512 local-to-model") {
                let mut got = vec![Mat4::ZERO; n];
                // SAFETY: the CPU has AVX-512F (the gate above).
                unsafe { super::compose_avx512(parents, local, adjusts, &mut got) };
                assert_eq!(bits_of(&got), bits_of(&want), "{what}: AVX-512");
            }
        }
    }

    #[test]
    fn the_portable_four_wide_blend_is_the_scalar_two_layer_blend_to_the_bit() {
        let (a, mut b) = (test_pose(24, 0.0), test_pose(24, 1.7));
        b[5].rotation = -a[5].rotation;
        b[6].rotation = Quat::from_xyzw(0.0, 0.0, 0.0, 0.0);
        for &(wa, wb) in &[(0.5f32, 0.5f32), (0.1, 0.9), (0.93, 0.07000001)] {
            let mut out = vec![Transform::IDENTITY; 24];
            blend2_soa(&a, &b, wa, wb, &mut out);
            for i in 0..24 {
                let want = blend2_one(&a[i], &b[i], wa, wb);
                assert_eq!(bits(&out[i]), bits(&want), "bone {i}, weights {wa} {wb}");
            }
        }
    }
}
