//! Crowds from baked poses: each clip sampled once, ahead of time, into a table of skinning
//! matrices (clips x frames x bones, 3x4 affine rows), after which an instance needs only which
//! clip, how far into it (phase) and how fast (speed). This is the engine's answer for crowds
//! that play clips: no per-instance graph, IK or fade; the table is built once.
//!
//! [`BakeJob`] fills a [`BakedPoses`] with the sampling, local-to-model and palette jobs (the
//! matrices are exactly the palette the renderer uses for one character: `model_from_bone *
//! bone_from_bind`). A looping clip is sampled over `[0, duration)` at `duration / frames` steps,
//! so its last frame blends into its first; a clamped clip includes its end (`frames - 1` steps).
//! [`frame_pair`] is the per-instance rule (the CPU reference of the crowd vertex shader): from
//! the global time, the instance's phase (a fraction of the clip) and speed, the two bracketing
//! frames and the fraction between them; [`BakedPoses::palette_at`] blends their matrices
//! linearly (as the shader does).
//!
//! The table is derived data: never saved in a scene, rebuilt from the clips (its format
//! [`BAKE_VERSION`] would key a cache). This module does not draw (see the renderer's crowd
//! pass) and does not place instances (see [`crate::crowd::layout`]).

use glam::{Mat4, Vec3, Vec4};

use crate::clip::Clip;
use crate::pose::{JobError, LocalToModelJob, PaletteJob, SamplingContext, SamplingJob};
use crate::skeleton::Skeleton;
use crate::skinning::Aabb;

/// Version of the baked table's layout (rows of 3x4 affine matrices, clip-major, then frame,
/// then bone).
pub const BAKE_VERSION: u32 = 1;

/// Frames a clip may be baked into, at most.
pub const MAX_FRAMES: u32 = 4096;

/// Instances one crowd may hold, at most.
pub const MAX_INSTANCES: u32 = 1_000_000;

/// The most bytes one crowd's baked table (`clips x frames x bones` matrices of 48 bytes) may
/// hold: what a GPU storage buffer binding holds by default (`wgpu::Limits::default()`), so a
/// crowd that bakes can be drawn. A clip listed many times is baked each time, and counted so.
pub const MAX_TABLE_BYTES: u64 = 128 << 20;

/// The bytes of a table of `clips x frames x bones` matrices.
pub fn table_bytes(clips: usize, frames: u32, bones: usize) -> u64 {
    (clips as u64).saturating_mul(frames as u64).saturating_mul(bones as u64).saturating_mul(48)
}

/// One baked clip's place in the table and how it plays.
#[derive(Clone, Debug, PartialEq)]
pub struct BakedClip {
    /// The clip's name.
    pub name: String,
    /// Index of its first matrix in [`BakedPoses::matrices`] (frame 0, bone 0).
    pub offset: u32,
    /// Frames baked.
    pub frames: u32,
    /// The clip's duration (seconds).
    pub duration: f32,
    /// Whether it loops (sampled over `[0, duration)`) or clamps (over `[0, duration]`).
    pub looping: bool,
}

/// A table of baked skinning matrices: `clips x frames x bones`, each a 3x4 affine matrix
/// stored as its three rows (`[m00 m01 m02 m03, m10 .., m20 ..]`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BakedPoses {
    /// Bones per frame (the skeleton's bone count).
    pub bones: u32,
    /// The clips, in bake order.
    pub clips: Vec<BakedClip>,
    /// Every matrix, as three rows of four.
    pub matrices: Vec<[f32; 12]>,
}

/// Why a bake cannot run.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BakeError {
    /// Frames per clip out of range.
    #[error(
        "bake: {frames} frames per clip; a looping clip needs at least 1, a clamped one 2, and at most {MAX_FRAMES}"
    )]
    Frames {
        /// Frames asked for.
        frames: u32,
    },
    /// A clip animates another skeleton.
    #[error("bake: clip {clip:?} animates skeleton {clip_skeleton:?}, not {skeleton:?}")]
    OtherRig {
        /// The clip.
        clip: String,
        /// Its skeleton.
        clip_skeleton: String,
        /// The skeleton baked for.
        skeleton: String,
    },
    /// No clip to bake.
    #[error("bake: no clip to bake")]
    NoClips,
    /// The table would pass [`MAX_TABLE_BYTES`].
    #[error(
        "bake: {clips} clips x {frames} frames x {bones} bones would bake {} MB of matrices; the limit is {} MB per crowd",
        bytes >> 20,
        MAX_TABLE_BYTES >> 20
    )]
    TooLarge {
        /// Clips (each listing counts).
        clips: usize,
        /// Frames per clip.
        frames: u32,
        /// Bones per frame.
        bones: usize,
        /// The table's bytes.
        bytes: u64,
    },
    /// A pose job refused.
    #[error("bake: clip {clip:?}: {error}")]
    Job {
        /// The clip.
        clip: String,
        /// The job's error.
        error: JobError,
    },
}

/// Bakes `clips` for `skeleton`, `frames` frames each, into a [`BakedPoses`].
#[derive(Debug)]
pub struct BakeJob<'a> {
    /// The rig.
    pub skeleton: &'a Skeleton,
    /// The clips (each for `skeleton`).
    pub clips: &'a [&'a Clip],
    /// Frames per clip.
    pub frames: u32,
}

impl BakeJob<'_> {
    /// Names the first fault: the frame count, a clip for another skeleton, no clip.
    pub fn validate(&self) -> Result<(), BakeError> {
        if self.clips.is_empty() {
            return Err(BakeError::NoClips);
        }
        let (clips, bones) = (self.clips.len(), self.skeleton.bone_count());
        let bytes = table_bytes(clips, self.frames, bones);
        if bytes > MAX_TABLE_BYTES {
            return Err(BakeError::TooLarge { clips, frames: self.frames, bones, bytes });
        }
        for c in self.clips {
            let min = if c.looping { 1 } else { 2 };
            if self.frames < min || self.frames > MAX_FRAMES {
                return Err(BakeError::Frames { frames: self.frames });
            }
            let matches =
                c.skeleton == self.skeleton.name && c.channels().len() == self.skeleton.bone_count();
            if !matches {
                return Err(BakeError::OtherRig {
                    clip: c.name.clone(),
                    clip_skeleton: c.skeleton.clone(),
                    skeleton: self.skeleton.name.clone(),
                });
            }
        }
        Ok(())
    }

    /// Bakes the table.
    pub fn run(&self) -> Result<BakedPoses, BakeError> {
        self.validate()?;
        let sk = self.skeleton;
        let n = sk.bone_count();
        let mut out = BakedPoses {
            bones: n as u32,
            clips: Vec::with_capacity(self.clips.len()),
            matrices: Vec::with_capacity(self.clips.len() * self.frames as usize * n),
        };
        let mut context = SamplingContext::new(n);
        let mut local = sk.bind_pose.clone();
        let mut model = vec![Mat4::IDENTITY; n];
        let mut palette = vec![Mat4::IDENTITY; n];
        for c in self.clips {
            context.prepare(c);
            let duration = c.duration();
            let looping = c.looping;
            let offset = out.matrices.len() as u32;
            let job_err = |error| BakeError::Job { clip: c.name.clone(), error };
            for f in 0..self.frames {
                let time = frame_time(duration, self.frames, looping, f);
                SamplingJob {
                    clip: c,
                    bind_pose: &sk.bind_pose,
                    time,
                    context: &mut context,
                    output: &mut local,
                }
                .run()
                .map_err(job_err)?;
                LocalToModelJob { parents: &sk.parents, local: &local, adjusts: &[], output: &mut model }
                    .run()
                    .map_err(job_err)?;
                PaletteJob { model: &model, inverse_bind: &sk.inverse_bind, output: &mut palette }
                    .run()
                    .map_err(job_err)?;
                out.matrices.extend(palette.iter().map(rows_of));
            }
            out.clips.push(BakedClip {
                name: c.name.clone(),
                offset,
                frames: self.frames,
                duration,
                looping,
            });
        }
        Ok(out)
    }
}

/// The time frame `f` of `frames` samples: `[0, duration)` for a looping clip, `[0, duration]`
/// for a clamped one.
pub fn frame_time(duration: f32, frames: u32, looping: bool, f: u32) -> f32 {
    if looping {
        duration * f as f32 / frames as f32
    } else {
        duration * f as f32 / (frames.max(2) - 1) as f32
    }
}

/// The three rows of an affine matrix.
pub fn rows_of(m: &Mat4) -> [f32; 12] {
    let r = m.transpose();
    let (a, b, c) = (r.x_axis.to_array(), r.y_axis.to_array(), r.z_axis.to_array());
    [a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3], c[0], c[1], c[2], c[3]]
}

/// The affine matrix whose three rows are `rows`.
pub fn from_rows(rows: &[f32; 12]) -> Mat4 {
    Mat4::from_cols(
        Vec4::from_slice(&rows[0..4]),
        Vec4::from_slice(&rows[4..8]),
        Vec4::from_slice(&rows[8..12]),
        Vec4::W,
    )
    .transpose()
}

/// The per-instance rule: at global `time`, an instance playing `clip` from `phase` (a fraction
/// of the clip) at `speed` shows the blend of frames `f0` and `f1` by `frac`. A looping clip
/// wraps (its last frame blends into frame 0); a clamped one holds its ends.
pub fn frame_pair(clip: &BakedClip, time: f32, phase: f32, speed: f32) -> (u32, u32, f32) {
    let frames = clip.frames.max(1);
    let d = clip.duration;
    if !(d > 0.0) || frames == 1 {
        return (0, 0, 0.0);
    }
    let local = phase * d + time * speed;
    if clip.looping {
        let x = (local / d).rem_euclid(1.0) * frames as f32;
        let x = if x.is_finite() { x } else { 0.0 };
        let f0 = (x.floor() as u32).min(frames - 1);
        (f0, (f0 + 1) % frames, (x - f0 as f32).clamp(0.0, 1.0))
    } else {
        let x = (local / d).clamp(0.0, 1.0) * (frames - 1) as f32;
        let x = if x.is_finite() { x } else { 0.0 };
        let f0 = (x.floor() as u32).min(frames - 2);
        (f0, f0 + 1, (x - f0 as f32).clamp(0.0, 1.0))
    }
}

impl BakedPoses {
    /// Bytes of the matrix table (what the GPU holds).
    pub fn bytes(&self) -> usize {
        self.matrices.len() * size_of::<[f32; 12]>()
    }

    /// Bone `bone`'s matrix at frame `frame` of clip `clip`, as rows (`None` past the ends).
    pub fn rows(&self, clip: usize, frame: u32, bone: u32) -> Option<&[f32; 12]> {
        let c = self.clips.get(clip)?;
        if frame >= c.frames || bone >= self.bones {
            return None;
        }
        self.matrices.get((c.offset + frame * self.bones + bone) as usize)
    }

    /// An instance's skinning palette at global `time` (the CPU reference of the crowd vertex
    /// shader): each bone's two bracketing frames blended linearly. `out` holds one matrix per
    /// bone; returns false (leaving `out` as it was) for a clip past the end.
    pub fn palette_at(&self, clip: usize, time: f32, phase: f32, speed: f32, out: &mut [Mat4]) -> bool {
        let Some(c) = self.clips.get(clip) else { return false };
        let (f0, f1, t) = frame_pair(c, time, phase, speed);
        for (b, o) in out.iter_mut().enumerate().take(self.bones as usize) {
            let (Some(a), Some(z)) = (self.rows(clip, f0, b as u32), self.rows(clip, f1, b as u32)) else {
                return false;
            };
            let mut r = [0.0f32; 12];
            for k in 0..12 {
                r[k] = a[k] + (z[k] - a[k]) * t;
            }
            *o = from_rows(&r);
        }
        true
    }

    /// A box holding every vertex of a mesh at every baked frame (so at every blend between
    /// frames too, which stays inside the two frames' boxes): `bone_boxes[b]` bounds, in bind
    /// space, the vertices bone `b` moves.
    pub fn bounds(&self, bone_boxes: &[Option<Aabb>]) -> Option<Aabb> {
        let n = self.bones as usize;
        if n == 0 {
            return None;
        }
        self.matrices
            .chunks_exact(n)
            .flat_map(|frame| {
                frame.iter().zip(bone_boxes).filter_map(|(m, b)| b.map(|b| b.transformed(&from_rows(m))))
            })
            .reduce(Aabb::union)
    }
}

/// Per-bone boxes (bind space) of the vertices each bone moves: `joints`/`weights` as a skinned
/// primitive holds them, with joint indices already the skeleton's bones.
pub fn bone_boxes(
    bones: usize,
    positions: &[[f32; 3]],
    joints: &[[u16; 4]],
    weights: &[[f32; 4]],
) -> Vec<Option<Aabb>> {
    let mut out: Vec<Option<Aabb>> = vec![None; bones];
    for ((p, j), w) in positions.iter().zip(joints).zip(weights) {
        let p = Vec3::from(*p);
        for k in 0..4 {
            if w[k] > 0.0
                && let Some(b) = out.get_mut(j[k] as usize)
            {
                *b = Some(b.map_or(Aabb::point(p), |b| b.union(Aabb::point(p))));
            }
        }
    }
    out
}

/// Instance placement.
pub mod layout {
    use glam::{Mat4, Quat, Vec3};

    use crate::particles::SplitMix;

    /// How a crowd's instances are placed on the ground plane (`y = 0`).
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub enum Layout {
        /// Rows and columns `spacing` apart, centred on the origin, all facing +Z.
        Grid {
            /// Distance between neighbours.
            spacing: f32,
        },
        /// Uniformly scattered (by the placement's seed) over a square of side `extent` centred
        /// on the origin, each facing a random way.
        Scattered {
            /// Side of the square.
            extent: f32,
        },
    }

    /// One placed instance: where it stands and how it plays.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct Placement {
        /// World matrix.
        pub world: Mat4,
        /// Which baked clip.
        pub clip: u32,
        /// Phase (fraction of the clip) at time 0.
        pub phase: f32,
        /// Playback speed.
        pub speed: f32,
    }

    /// `count` placements: clips dealt in turn (instance `i` plays clip `i % clips`), phases
    /// spread by the golden ratio so no two neighbours move in step, speeds drawn uniformly from
    /// `speed` (low, high) by `seed` (which also scatters a scattered layout).
    pub fn place(count: u32, clips: u32, layout: Layout, speed: (f32, f32), seed: u64) -> Vec<Placement> {
        let mut rng = SplitMix::new(seed ^ 0xC20D);
        let side = (count as f32).sqrt().ceil().max(1.0) as u32;
        (0..count)
            .map(|i| {
                let (pos, yaw) = match layout {
                    Layout::Grid { spacing } => {
                        let (x, z) = ((i % side) as f32, (i / side) as f32);
                        let half = (side - 1) as f32 * 0.5;
                        (Vec3::new((x - half) * spacing, 0.0, (z - half) * spacing), 0.0)
                    }
                    Layout::Scattered { extent } => {
                        let x = (rng.next_f32() - 0.5) * extent;
                        let z = (rng.next_f32() - 0.5) * extent;
                        (Vec3::new(x, 0.0, z), rng.next_f32() * std::f32::consts::TAU)
                    }
                };
                let s = rng.next_f32();
                Placement {
                    world: Mat4::from_rotation_translation(Quat::from_rotation_y(yaw), pos),
                    clip: i % clips.max(1),
                    phase: (i as f32 * 0.618_034).fract(),
                    speed: speed.0 + (speed.1 - speed.0) * s,
                }
            })
            .collect()
    }
}
