//! A parsed BVH file as an [`ImportedScene`]: the skeleton (bind pose = the offsets), the clip
//! (one rotation track per joint with rotation channels, one translation track per joint with
//! position channels), the stick mesh, and the nodes, skin and rig glTF import would make of
//! them.

use std::path::Path;

use glam::{DQuat, DVec3, Quat, Vec3};

use super::parse::{ChannelKind, JointDecl, Parsed};
use super::{BvhFault, BvhOptions, EndSites, MAX_COORD, Position};
use crate::clip::Clip;
use crate::gltf::{Animation, ImportedScene, MeshBinding, Node, Rig, RigClip};
use crate::math::Transform;
use crate::mesh::{Mesh, Primitive, SkinStream};
use crate::skeleton::{NO_PARENT, Skeleton};
use crate::skinning::Aabb;
use crate::track::{Interpolation, Track};

type Fail = (Position, BvhFault);

/// `v * scale`, refused past [`MAX_COORD`].
fn scaled(v: [f64; 3], scale: f64, what: impl Fn(usize) -> String, at: Position) -> Result<Vec3, Fail> {
    let mut out = [0.0f32; 3];
    for (k, (o, x)) in out.iter_mut().zip(v).enumerate() {
        let s = x * scale;
        if !(s.abs() <= MAX_COORD) {
            return Err((at, BvhFault::OutOfRange { what: what(k), value: s, limit: MAX_COORD }));
        }
        *o = s as f32;
    }
    Ok(Vec3::from(out))
}

const AXES: [&str; 3] = ["x", "y", "z"];

/// The scene built from `p`.
pub(crate) fn build(p: &Parsed, file: &Path, options: &BvhOptions) -> Result<ImportedScene, Fail> {
    let scale = f64::from(options.scale);
    let name =
        file.file_stem().and_then(|s| s.to_str()).filter(|s| !s.is_empty()).unwrap_or("bvh").to_owned();
    let mut bone_of: Vec<Option<usize>> = Vec::with_capacity(p.joints.len());
    let mut decls: Vec<&JointDecl> = Vec::with_capacity(p.joints.len());
    let mut bones = Vec::with_capacity(p.joints.len());
    for d in &p.joints {
        if d.end_site && options.end_sites == EndSites::Drop {
            bone_of.push(None);
            continue;
        }
        let offset = scaled(d.offset, scale, |k| format!("OFFSET {} of {:?}", AXES[k], d.name), d.at)?;
        let parent = d.parent.and_then(|j| bone_of.get(j).copied().flatten()).map_or(NO_PARENT, |b| b as u16);
        bone_of.push(Some(bones.len()));
        decls.push(d);
        bones.push((d.name.clone(), parent, Transform::from_translation(offset)));
    }
    let first = p.joints.first().map_or(Position { line: 1, col: 1 }, |j| j.at);
    let skeleton =
        Skeleton::from_bind_pose(name.clone(), bones).map_err(|f| (first, BvhFault::Skeleton(f)))?;
    let clip = motion(p, &skeleton, &decls, &name, scale)?;
    let (mesh, joint_bounds) = stick_mesh(&skeleton, 0.05 * options.scale);
    Ok(assemble(file, name, skeleton, clip, mesh, joint_bounds))
}

/// A joint's rotation in one frame: the declared rotation channels' axis rotations multiplied
/// left to right in their declared order (degrees).
pub(crate) fn rotation(channels: &[ChannelKind], row: &[f32]) -> Quat {
    let mut q = DQuat::IDENTITY;
    for (c, &v) in channels.iter().zip(row) {
        if c.is_rotation() {
            let mut axis = DVec3::ZERO;
            axis[c.axis()] = 1.0;
            q *= DQuat::from_axis_angle(axis, f64::from(v).to_radians());
        }
    }
    let q = q.normalize();
    Quat::from_xyzw(q.x as f32, q.y as f32, q.z as f32, q.w as f32)
}

/// The clip: frame `i` keyed at `i * frame_time`, LINEAR.
fn motion(
    p: &Parsed,
    skeleton: &Skeleton,
    decls: &[&JointDecl],
    name: &str,
    scale: f64,
) -> Result<Clip, Fail> {
    let times: Vec<f32> = (0..p.frames).map(|i| (i as f64 * p.frame_time) as f32).collect();
    let mut clip = Clip::new(name, skeleton);
    clip.frame_rate = crate::frame_rate::standard_rate((1.0 / p.frame_time) as f32);
    clip.length = times.last().copied().unwrap_or(0.0);
    if p.frames == 0 {
        return Ok(clip);
    }
    let row = |d: &JointDecl, i: usize| {
        let start = i * p.channels + d.first_value;
        p.values.get(start..start + d.channels.len()).unwrap_or(&[])
    };
    let keys_fault = |d: &JointDecl, fault| (d.at, BvhFault::Keys { joint: d.name.clone(), fault });
    let channels = clip.channels_mut();
    for (ch, d) in channels.iter_mut().zip(decls) {
        if d.channels.iter().any(|c| c.is_rotation()) {
            let r: Vec<Quat> = (0..p.frames).map(|i| rotation(&d.channels, row(d, i))).collect();
            let track =
                Track::from_keys(Interpolation::Linear, times.clone(), r).map_err(|f| keys_fault(d, f))?;
            ch.rotation = Some(track);
        }
        if d.channels.iter().any(|c| !c.is_rotation()) {
            let mut t = Vec::with_capacity(p.frames);
            for i in 0..p.frames {
                let mut v = d.offset;
                for (c, &x) in d.channels.iter().zip(row(d, i)) {
                    if !c.is_rotation() {
                        v[c.axis()] = f64::from(x);
                    }
                }
                let what =
                    |k: usize| format!("frame {} {}position of {:?}", i + 1, AXES[k].to_uppercase(), d.name);
                t.push(scaled(v, scale, what, p.frames_at)?);
            }
            let track =
                Track::from_keys(Interpolation::Linear, times.clone(), t).map_err(|f| keys_fault(d, f))?;
            ch.translation = Some(track);
        }
    }
    Ok(clip)
}

/// The four corners of a square of half-width `h` about `c`, across `u` and `v`.
fn square(c: Vec3, u: Vec3, v: Vec3, h: f32) -> [Vec3; 4] {
    [c + (-u - v) * h, c + (u - v) * h, c + (u + v) * h, c + (-u + v) * h]
}

/// The stick mesh: a thin box from each parent's origin to its child's (bind pose), skinned
/// rigidly to the parent; a cube of half-width `fallback` on the first root when no bone has
/// length. Also each bone's box of the vertices it moves, in its bind space.
fn stick_mesh(skeleton: &Skeleton, fallback: f32) -> (Mesh, Vec<Option<Aabb>>) {
    let n = skeleton.bone_count();
    let origin: Vec<Vec3> = skeleton.inverse_bind.iter().map(|m| m.inverse().w_axis.truncate()).collect();
    let mut segments: Vec<(usize, Vec3, Vec3)> = Vec::new();
    for (b, &p) in skeleton.parents.iter().enumerate() {
        let Some((&a, &c)) = origin.get(p as usize).zip(origin.get(b)) else { continue };
        if (c - a).length() > 1e-6 * (a.length().max(c.length()).max(1.0)) {
            segments.push((p as usize, a, c));
        }
    }
    if segments.is_empty() && n > 0 {
        let c = origin[0];
        segments.push((0, c - Vec3::Y * fallback, c + Vec3::Y * fallback));
    }
    let mut prim = Primitive {
        mode: 4,
        material: None,
        positions: Vec::with_capacity(segments.len() * 24),
        normals: Vec::with_capacity(segments.len() * 24),
        tangents: Vec::new(),
        uvs: Vec::new(),
        colors: Vec::new(),
        indices: Some(Vec::with_capacity(segments.len() * 36)),
        skin: Some(SkinStream::default()),
        targets: Vec::new(),
        bounds: None,
    };
    let mut bounds: Vec<Option<Aabb>> = vec![None; n];
    for &(bone, a, c) in &segments {
        let d = (c - a).normalize();
        let (u, v) = d.any_orthonormal_pair();
        let h = ((c - a).length() * 0.06).max(fallback * 0.2);
        let (s, e) = (square(a, u, v, h), square(c, u, v, h));
        // Six faces, each four corners counter-clockwise seen from outside, with its normal.
        let faces: [([Vec3; 4], Vec3); 6] = [
            ([s[0], s[3], s[2], s[1]], -d),
            ([e[0], e[1], e[2], e[3]], d),
            ([s[0], s[1], e[1], e[0]], -v),
            ([s[1], s[2], e[2], e[1]], u),
            ([s[2], s[3], e[3], e[2]], v),
            ([s[3], s[0], e[0], e[3]], -u),
        ];
        for (corners, normal) in faces {
            let base = prim.positions.len() as u32;
            for q in corners {
                prim.positions.push(q.to_array());
                prim.normals.push(normal.to_array());
                let local = skeleton.inverse_bind[bone].transform_point3(q);
                match &mut bounds[bone] {
                    Some(b) => b.grow(local),
                    None => bounds[bone] = Some(Aabb::point(local)),
                }
            }
            if let (Some(idx), Some(st)) = (prim.indices.as_mut(), prim.skin.as_mut()) {
                idx.extend([base, base + 1, base + 2, base, base + 2, base + 3]);
                st.joints.extend([[bone as u16, 0, 0, 0]; 4]);
                st.weights.extend([[1.0, 0.0, 0.0, 0.0]; 4]);
            }
        }
    }
    prim.bounds = prim.positions.iter().map(|&p| Aabb::point(Vec3::from(p))).reduce(Aabb::union);
    (
        Mesh { name: "stick".into(), primitives: vec![prim], weights: Vec::new(), target_names: Vec::new() },
        bounds,
    )
}

/// The scene: one node per bone (parents before children), a mesh node after them, one skin
/// over every bone in bone order, one rig, one animation with the clip.
fn assemble(
    file: &Path,
    name: String,
    skeleton: Skeleton,
    clip: Clip,
    mesh: Mesh,
    joint_bounds: Vec<Option<Aabb>>,
) -> ImportedScene {
    let n = skeleton.bone_count();
    let mut nodes = crate::gltf::Node::bones_of(&skeleton, 0);
    nodes.push(Node {
        name: format!("{name}_stick"),
        parent: None,
        children: Vec::new(),
        transform: Transform::IDENTITY,
        mesh: Some(0),
        skin: Some(0),
        morph_weights: Vec::new(),
        bones: Vec::new(),
    });
    let roots: Vec<usize> = (0..=n).filter(|&i| nodes[i].parent.is_none()).collect();
    let (skin, rig) = Rig::of_whole_skeleton(
        skeleton,
        name.clone(),
        vec![MeshBinding { node: n, skin: 0, mesh: 0, joint_bounds }],
    );
    let animation = Animation {
        name,
        duration: clip.duration(),
        clips: vec![RigClip { rig: 0, clip }],
        nodes: Vec::new(),
        morphs: Vec::new(),
    };
    ImportedScene {
        source: file.to_owned(),
        nodes,
        roots,
        order: (0..=n).collect(),
        meshes: vec![mesh],
        skins: vec![skin],
        rigs: vec![rig],
        animations: vec![animation],
        materials: Vec::new(),
        images: Vec::new(),
        warnings: Vec::new(),
    }
}
