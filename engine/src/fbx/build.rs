//! A loaded ufbx scene as an [`ImportedScene`]: the rig (bones and the nodes between them,
//! parents first, what lies above the roots folded into them), the skinned and static meshes,
//! and a clip per animation stack. See the module docs of [`super`] for the rules.

use std::path::Path;

use glam::{Mat4, Quat, Vec3};

use super::FbxError;
use crate::clip::Clip;
use crate::gltf::{
    Animation, ImportedScene, Location, MeshBinding, MorphAnimation, Node, Rig, RigClip, Warning,
};
use crate::math::{Transform, decompose};
use crate::mesh::{Image, Material, Mesh, Primitive, SkinStream};
use crate::morph::MorphTarget;
use crate::skeleton::{NO_PARENT, Skeleton};
use crate::skinning::Aabb;
use crate::track::{Interpolation, Track};

/// ufbx's affine matrix as a `Mat4` (columns: the three axes, then the translation).
pub(crate) fn mat4(m: &ufbx::Matrix) -> Mat4 {
    Mat4::from_cols_array(&[
        m.m00 as f32,
        m.m10 as f32,
        m.m20 as f32,
        0.0,
        m.m01 as f32,
        m.m11 as f32,
        m.m21 as f32,
        0.0,
        m.m02 as f32,
        m.m12 as f32,
        m.m22 as f32,
        0.0,
        m.m03 as f32,
        m.m13 as f32,
        m.m23 as f32,
        1.0,
    ])
}

fn vec3(v: ufbx::Vec3) -> Vec3 {
    Vec3::new(v.x as f32, v.y as f32, v.z as f32)
}

fn quat(q: ufbx::Quat) -> Quat {
    Quat::from_xyzw(q.x as f32, q.y as f32, q.z as f32, q.w as f32)
}

fn transform(t: &ufbx::Transform) -> Transform {
    Transform {
        translation: vec3(t.translation),
        rotation: quat(t.rotation).normalize(),
        scale: vec3(t.scale),
    }
}

/// The rig's bones: which nodes (by `typed_id`) are bones, in bone order, with each bone's
/// parent bone and bind transform.
struct Bones {
    /// Node `typed_id` of each bone.
    nodes: Vec<usize>,
    /// Bone index of each node (`typed_id`).
    of_node: Vec<Option<usize>>,
    /// World transform of what lies above each root bone (identity for other bones).
    above: Vec<Mat4>,
}

fn find_bones(scene: &ufbx::Scene) -> Bones {
    let n = scene.nodes.len();
    let mut marked = vec![false; n];
    for node in scene.nodes.iter() {
        if node.bone.is_some() {
            marked[node.element.typed_id as usize] = true;
        }
    }
    for cluster in scene.skin_clusters.iter() {
        if let Some(b) = &cluster.bone_node {
            marked[b.element.typed_id as usize] = true;
        }
    }
    // The nodes between two bones are bones too (a rig is one connected tree per root).
    let first: Vec<usize> = (0..n).filter(|&i| marked[i]).collect();
    for i in first {
        let mut between = Vec::new();
        let mut at = scene.nodes[i].parent.as_ref();
        while let Some(p) = at {
            let id = p.element.typed_id as usize;
            if marked[id] {
                for b in between.drain(..) {
                    marked[b] = true;
                }
                break;
            }
            if p.is_root {
                break;
            }
            between.push(id);
            at = p.parent.as_ref();
        }
    }
    let mut nodes: Vec<usize> = (0..n).filter(|&i| marked[i]).collect();
    nodes.sort_by_key(|&i| (scene.nodes[i].node_depth, i));
    let mut of_node = vec![None; n];
    for (b, &i) in nodes.iter().enumerate() {
        of_node[i] = Some(b);
    }
    let above = nodes
        .iter()
        .map(|&i| match scene.nodes[i].parent.as_ref() {
            Some(p) if of_node[p.element.typed_id as usize].is_none() => mat4(&p.node_to_world),
            _ => Mat4::IDENTITY,
        })
        .collect();
    Bones { nodes, of_node, above }
}

/// The materials and images of the scene, each ufbx material and texture once.
#[derive(Default)]
struct Looks<'a> {
    materials: Vec<Material>,
    images: Vec<Image>,
    of_material: std::collections::HashMap<u32, usize>,
    of_texture: std::collections::HashMap<u32, Option<usize>>,
    /// The FBX file's folder, where a texture that is not embedded is looked for (`None`: a file
    /// read from memory, embedded textures only).
    folder: Option<&'a Path>,
}

/// The image file a texture that is not embedded names, read from the FBX file's `folder`: its
/// relative file name, else the file name alone of the path it names (an absolute path from the
/// author's machine is never read), through the same rules as a glTF's image URIs (nothing outside the folder, no
/// link leading out, regular files up to the image limit). The bytes, or why not.
fn texture_beside(t: &ufbx::Texture, folder: Option<&Path>) -> Result<Vec<u8>, String> {
    let base_name = |name: &str| name.rsplit(['/', '\\']).next().unwrap_or("").to_owned();
    let mut tried: Vec<String> = Vec::new();
    let mut last = String::new();
    for name in [
        t.relative_filename.to_string(),
        base_name(&t.filename),
        base_name(&t.absolute_filename),
        base_name(&t.relative_filename),
    ] {
        if name.is_empty() || tried.contains(&name) {
            continue;
        }
        match crate::gltf::load::read_inside(folder, &name, crate::gltf::load::MAX_IMAGE_BYTES) {
            Ok(bytes) => return Ok(bytes),
            Err(e) => last = e,
        }
        tried.push(name);
    }
    Err(format!("is not embedded, and no file it names could be read beside the FBX file ({last})"))
}

impl Looks<'_> {
    /// The index of `m` among the scene's materials (its base colour, and the embedded image of
    /// its base colour texture; a texture that is not embedded is said once and left out).
    fn material(&mut self, m: &ufbx::Material, warnings: &mut Vec<Warning>) -> usize {
        if let Some(&i) = self.of_material.get(&m.element.typed_id) {
            return i;
        }
        let map = if m.pbr.base_color.has_value || m.pbr.base_color.texture.is_some() {
            &m.pbr.base_color
        } else {
            &m.fbx.diffuse_color
        };
        let v = map.value_vec4;
        let mut base_color = [v.x as f32, v.y as f32, v.z as f32, 1.0];
        if !map.has_value || base_color.iter().any(|c| !c.is_finite()) {
            base_color = [1.0; 4];
        }
        let texture = map.texture.as_ref().or(m.fbx.diffuse_color.texture.as_ref());
        let folder = self.folder;
        let base_color_texture = texture.and_then(|t| {
            *self.of_texture.entry(t.element.typed_id).or_insert_with(|| {
                // Embedded, or the image file it names beside the FBX file.
                let beside = if t.content.is_empty() { Some(texture_beside(t, folder)) } else { None };
                let bytes: &[u8] = match &beside {
                    Some(Ok(b)) => b,
                    _ => &t.content,
                };
                let mime = if bytes.starts_with(b"\x89PNG") {
                    Some("image/png")
                } else if bytes.starts_with(&[0xFF, 0xD8]) {
                    Some("image/jpeg")
                } else {
                    None
                };
                match mime {
                    Some(mime) => {
                        self.images.push(Image {
                            name: t.element.name.to_string(),
                            mime_type: Some(mime.into()),
                            bytes: std::sync::Arc::from(bytes),
                        });
                        Some(self.images.len() - 1)
                    }
                    None => {
                        let why = match beside {
                            Some(Err(e)) => e,
                            Some(Ok(_)) => "names a file that is not a PNG or JPEG".to_owned(),
                            None => "is not embedded as PNG or JPEG".to_owned(),
                        };
                        warnings.push(Warning::new(
                            Location::Material(self.materials.len()),
                            format!("texture {:?} ({}) {why}: left out", t.element.name, t.filename),
                        ));
                        None
                    }
                }
            })
        });
        self.materials.push(Material { name: m.element.name.to_string(), base_color, base_color_texture });
        self.of_material.insert(m.element.typed_id, self.materials.len() - 1);
        self.materials.len() - 1
    }
}

/// A mesh's node in the imported scene.
struct MeshNode {
    name: String,
    /// Where it stands (identity for a skinned mesh: its rig places it).
    place: Transform,
    /// Index into the scene's meshes.
    mesh: usize,
    skinned: bool,
    /// Per bone, the box of the vertices it moves (skinned meshes).
    joint_bounds: Vec<Option<Aabb>>,
    /// Its morph targets (see [`blend_shapes`]): each target's channel and its place there.
    blend: Vec<BlendTarget>,
}

/// One morph target of a blend channel: a channel with in-between shapes (FBX `FullWeights`
/// below 100) gives a target per shape, each weighted by a hat function of the channel's weight
/// (0 to 1): rising from the shape before it to its own full weight, falling to the next one's
/// (the first rises from 0, the last keeps rising past its full weight), which is how FBX
/// interpolates in-betweens.
#[derive(Clone, Copy, Debug)]
struct BlendTarget {
    /// The channel's element id (its `DeformPercent` is what a stack animates).
    channel: u32,
    /// The channel's default weight, 0 to 1.
    default: f32,
    /// The full weights of the shape before, this shape, and the shape after (`None`: first or
    /// last).
    before: Option<f32>,
    at: f32,
    after: Option<f32>,
}

impl BlendTarget {
    /// This target's weight when its channel's weight is `c`.
    fn weight(&self, c: f32) -> f32 {
        let rise = |lo: f32| if self.at > lo { (c - lo) / (self.at - lo) } else { 1.0 };
        if c <= self.at {
            match self.before {
                None => rise(0.0),
                Some(lo) => rise(lo).max(0.0),
            }
        } else {
            match self.after {
                None => rise(self.before.unwrap_or(0.0)),
                Some(hi) if hi > self.at => ((hi - c) / (hi - self.at)).max(0.0),
                Some(_) => 0.0,
            }
        }
    }
}

/// A mesh's blend channels as targets: a target per shape of each channel, in-betweens first
/// (ordered by full weight), named after the channel (an in-between as `channel@50`).
fn blend_shapes(mesh: &ufbx::Mesh) -> Vec<(BlendTarget, String, &ufbx::BlendShape)> {
    let Some(deformer) = mesh.blend_deformers.first() else { return Vec::new() };
    let mut out = Vec::new();
    for channel in deformer.channels.iter() {
        let default = Some(channel.weight as f32).filter(|w| w.is_finite()).unwrap_or(0.0);
        let mut keys: Vec<(f32, &ufbx::BlendShape)> = channel
            .keyframes
            .iter()
            .map(|k| (k.target_weight as f32, &*k.shape))
            .filter(|(w, _)| w.is_finite())
            .collect();
        if keys.is_empty()
            && let Some(shape) = &channel.target_shape
        {
            keys.push((1.0, &**shape));
        }
        keys.sort_by(|a, b| a.0.total_cmp(&b.0));
        let n = keys.len();
        for (i, (at, shape)) in keys.iter().enumerate() {
            let target = BlendTarget {
                channel: channel.element.element_id,
                default,
                before: (i > 0).then(|| keys[i - 1].0),
                at: *at,
                after: (i + 1 < n).then(|| keys[i + 1].0),
            };
            let name = if i + 1 == n {
                channel.element.name.to_string()
            } else {
                format!("{}@{}", channel.element.name, (at * 100.0).round())
            };
            out.push((target, name, *shape));
        }
    }
    out
}

/// `name`, or `node<i>` when empty, made unique among `taken`.
fn unique(name: &str, i: usize, taken: &mut std::collections::HashSet<String>) -> String {
    let base = if name.is_empty() { format!("node{i}") } else { name.to_owned() };
    let mut out = base.clone();
    let mut k = 2;
    while !taken.insert(out.clone()) {
        out = format!("{base}.{k}");
        k += 1;
    }
    out
}

/// The uniform scales taken out of a rig's bind pose ([`unit_scales`]): per bone, its own
/// (divided out of its scale) and the product of its ancestors' (multiplied into its
/// translation).
struct UnitScales {
    own: Vec<f32>,
    inherited: Vec<f32>,
}

/// Takes uniform scales out of the bind pose (an exporter's armature at x100 over bones in
/// metres): each bone's translation carries its ancestors' uniform scale and its scale loses
/// its own, so the rig poses the same with unit-scaled bones. A bone whose scale is not uniform
/// keeps it.
fn unit_scales(bones: &mut [(String, u16, Transform)]) -> UnitScales {
    let n = bones.len();
    let (mut own, mut inherited) = (vec![1.0f32; n], vec![1.0f32; n]);
    for b in 0..n {
        let (_, parent, t) = &mut bones[b];
        let s = t.scale;
        let f = (s.x + s.y + s.z) / 3.0;
        if f > 0.0 && (s - Vec3::splat(f)).abs().max_element() <= 1e-4 * f {
            own[b] = f;
        }
        if *parent != NO_PARENT {
            let p = *parent as usize;
            inherited[b] = inherited[p] * own[p];
        }
        t.translation *= inherited[b];
        t.scale = if own[b] == 1.0 { t.scale } else { Vec3::ONE };
    }
    UnitScales { own, inherited }
}

/// `above * local` as a transform (a root bone's place in the rig's model space).
fn folded(above: &Mat4, local: &Transform) -> Transform {
    if *above == Mat4::IDENTITY {
        return *local;
    }
    let (s, r, t) = decompose(&(*above * local.to_mat4()));
    Transform { translation: t, rotation: r, scale: s }
}

pub(super) fn build(
    scene: &ufbx::Scene,
    file: &Path,
    folder: Option<&Path>,
) -> Result<ImportedScene, FbxError> {
    let name =
        file.file_stem().and_then(|s| s.to_str()).filter(|s| !s.is_empty()).unwrap_or("fbx").to_owned();
    let invalid = |at: String, what: String| FbxError::Invalid { file: file.to_owned(), at, what };
    let bones = find_bones(scene);
    if bones.nodes.len() > crate::skeleton::MAX_BONES {
        return Err(invalid(
            "nodes".into(),
            format!("{} bones is more than the limit of {}", bones.nodes.len(), crate::skeleton::MAX_BONES),
        ));
    }
    let mut warnings = vec![Warning::new(
        Location::File,
        format!(
            "the file's up axis {:?} and units of {} m, converted to Y up and metres",
            scene.settings.original_axis_up, scene.settings.original_unit_meters
        ),
    )];
    let mut taken = std::collections::HashSet::new();
    let mut list = Vec::with_capacity(bones.nodes.len());
    for (b, &i) in bones.nodes.iter().enumerate() {
        let node = &scene.nodes[i];
        let parent = node
            .parent
            .as_ref()
            .and_then(|p| bones.of_node[p.element.typed_id as usize])
            .map_or(NO_PARENT, |p| p as u16);
        let local = folded(&bones.above[b], &transform(&node.local_transform));
        list.push((unique(&node.element.name, i, &mut taken), parent, local));
    }
    let units = unit_scales(&mut list);
    let mut skeleton = Skeleton::from_bind_pose(name.clone(), list)
        .map_err(|f| invalid("skeleton".into(), f.to_string()))?;
    // The skin's inverse binds where a cluster gives one (the scale the bone no longer has
    // taken out of it).
    for cluster in scene.skin_clusters.iter() {
        if let Some(b) = cluster.bone_node.as_ref().and_then(|n| bones.of_node[n.element.typed_id as usize]) {
            skeleton.inverse_bind[b] = Mat4::from_scale(Vec3::splat(units.inherited[b] * units.own[b]))
                * mat4(&cluster.geometry_to_bone);
        }
    }
    let mut meshes = Vec::new();
    let mut mesh_nodes: Vec<MeshNode> = Vec::new();
    let mut looks = Looks { folder, ..Looks::default() };
    for (k, mesh) in scene.meshes.iter().enumerate() {
        let Some(instance) = mesh.element.instances.first() else { continue };
        let at = format!("mesh {:?}", mesh.element.name);
        // A primitive per material the mesh's faces use (one when it has none).
        let parts: Vec<(Vec<ufbx::Face>, Option<usize>)> =
            if mesh.materials.is_empty() || mesh.material_parts.is_empty() {
                vec![(mesh.faces.to_vec(), None)]
            } else {
                mesh.material_parts
                    .iter()
                    .filter(|part| part.num_triangles > 0)
                    .map(|part| {
                        let faces = part
                            .face_indices
                            .iter()
                            .filter_map(|&f| mesh.faces.get(f as usize).copied())
                            .collect();
                        let material =
                            mesh.materials.get(part.index as usize).map(|m| looks.material(m, &mut warnings));
                        (faces, material)
                    })
                    .collect()
            };
        let (mut prims, mut skinned, mut more_than_four) = (Vec::new(), false, 0);
        for (faces, material) in &parts {
            let (prim, s, more) = primitive(mesh, faces, *material, &bones, &skeleton)
                .map_err(|what| invalid(at.clone(), what))?;
            prims.push(prim);
            skinned |= s;
            more_than_four += more;
        }
        if more_than_four > 0 {
            warnings.push(Warning::new(
                Location::Mesh(k),
                format!("{more_than_four} vertices have more than four influences: the four heaviest kept, renormalised"),
            ));
        }
        let joint_bounds = if skinned { joint_bounds(&prims, &skeleton) } else { Vec::new() };
        let shapes = blend_shapes(mesh);
        let place = if skinned {
            Transform::IDENTITY
        } else {
            folded(&mat4(&instance.node_to_world), &Transform::IDENTITY)
        };
        let blend: Vec<BlendTarget> = shapes.iter().map(|(t, ..)| *t).collect();
        let weights: Vec<f32> = blend.iter().map(|t| t.weight(t.default)).collect();
        mesh_nodes.push(MeshNode {
            name: unique(&instance.element.name, k, &mut taken),
            place,
            mesh: meshes.len(),
            skinned,
            joint_bounds,
            blend,
        });
        meshes.push(Mesh {
            name: mesh.element.name.to_string(),
            primitives: prims,
            weights,
            target_names: shapes.iter().map(|(_, name, _)| name.clone()).collect(),
        });
    }
    let mut animations = Vec::new();
    // The mesh nodes follow the bones' nodes (see `assemble`).
    let blends: Vec<(usize, &[BlendTarget])> = mesh_nodes
        .iter()
        .enumerate()
        .filter(|(_, m)| !m.blend.is_empty())
        .map(|(i, m)| (skeleton.bone_count() + i, m.blend.as_slice()))
        .collect();
    for (k, stack) in scene.anim_stacks.iter().enumerate() {
        let (clip, morphs, report) = stack_clip(scene, stack, &bones, &units, &skeleton, &blends)
            .map_err(|what| invalid(format!("animation stack {:?}", stack.element.name), what))?;
        if let Some(report) = report {
            warnings.push(Warning::new(Location::Animation(k), report));
        }
        animations.push(Animation {
            name: stack.element.name.to_string(),
            duration: clip.duration(),
            clips: vec![RigClip { rig: 0, clip }],
            nodes: Vec::new(),
            morphs,
        });
    }
    let mut scene_out = assemble(file, name, skeleton, meshes, mesh_nodes, animations, warnings);
    if let Some((at, what)) = past_reach(&scene_out) {
        return Err(invalid(at, what));
    }
    scene_out.materials = looks.materials;
    scene_out.images = looks.images;
    Ok(scene_out)
}

/// One mesh as a triangle primitive: a vertex per face corner; skinned when a skin deformer's
/// clusters name bones of the rig. Also how many vertices had more than four influences.
fn primitive(
    mesh: &ufbx::Mesh,
    faces: &[ufbx::Face],
    material: Option<usize>,
    bones: &Bones,
    skeleton: &Skeleton,
) -> Result<(Primitive, bool, usize), String> {
    let skin = mesh.skin_deformers.first();
    let cluster_bone: Vec<Option<usize>> = skin.map_or(Vec::new(), |s| {
        s.clusters
            .iter()
            .map(|c| c.bone_node.as_ref().and_then(|n| bones.of_node[n.element.typed_id as usize]))
            .collect()
    });
    let skinned = cluster_bone.iter().any(Option::is_some) && skeleton.bone_count() > 0;
    let mut prim = Primitive {
        mode: 4,
        material,
        positions: Vec::with_capacity(mesh.num_triangles * 3),
        normals: Vec::new(),
        tangents: Vec::new(),
        uvs: Vec::new(),
        colors: Vec::new(),
        indices: None,
        skin: skinned.then(SkinStream::default),
        targets: Vec::new(),
        bounds: None,
    };
    let mut scratch = vec![0u32; mesh.max_face_triangles * 3];
    // The mesh vertex of each corner written (for the blend shapes' offsets).
    let mut corner_vertex: Vec<u32> = Vec::with_capacity(mesh.num_triangles * 3);
    let mut more_than_four = 0usize;
    for face in faces {
        let tris = mesh.triangulate_face(&mut scratch, *face) as usize;
        for &ix in &scratch[..tris * 3] {
            let ix = ix as usize;
            let p = vec3(mesh.vertex_position[ix]);
            if !p.is_finite() {
                return Err(format!("vertex position {ix} is not finite"));
            }
            prim.positions.push(p.to_array());
            corner_vertex.push(mesh.vertex_indices.get(ix).copied().unwrap_or(u32::MAX));
            if mesh.vertex_normal.exists {
                prim.normals.push(vec3(mesh.vertex_normal[ix]).normalize_or_zero().to_array());
            }
            if mesh.vertex_uv.exists {
                let uv = mesh.vertex_uv[ix];
                prim.uvs.push([uv.x as f32, 1.0 - uv.y as f32]);
            }
            if let (Some(stream), Some(s)) = (prim.skin.as_mut(), skin) {
                let v = mesh.vertex_indices[ix] as usize;
                let (mut joints, mut weights) = ([0u16; 4], [0f32; 4]);
                if let Some(sv) = s.vertices.get(v) {
                    let range = sv.weight_begin as usize..(sv.weight_begin + sv.num_weights) as usize;
                    let mut infl: Vec<(usize, f32)> = range
                        .filter_map(|w| s.weights.get(w))
                        .filter_map(|w| {
                            Some((
                                cluster_bone.get(w.cluster_index as usize).copied().flatten()?,
                                w.weight as f32,
                            ))
                        })
                        .filter(|(_, w)| *w > 0.0 && w.is_finite())
                        .collect();
                    infl.sort_by(|a, b| b.1.total_cmp(&a.1));
                    if infl.len() > 4 {
                        more_than_four += 1;
                        infl.truncate(4);
                    }
                    let sum: f32 = infl.iter().map(|i| i.1).sum();
                    for (k, (b, w)) in infl.into_iter().enumerate() {
                        joints[k] = b as u16;
                        weights[k] = if sum > 0.0 { w / sum } else { 0.0 };
                    }
                }
                stream.joints.push(joints);
                stream.weights.push(weights);
            }
        }
    }
    prim.targets = blend_targets(mesh, &corner_vertex);
    prim.bounds = prim.positions.iter().map(|&p| Aabb::point(Vec3::from(p))).reduce(Aabb::union);
    Ok((prim, skinned, more_than_four))
}

/// The mesh's blend shapes as morph targets ([`blend_shapes`]' order: position and, when the
/// file has them, normal offsets), one delta per corner written.
fn blend_targets(mesh: &ufbx::Mesh, corner_vertex: &[u32]) -> Vec<MorphTarget> {
    let mut out = Vec::new();
    for (_, _, shape) in blend_shapes(mesh) {
        let mut offset_of = vec![u32::MAX; mesh.num_vertices];
        let mut target = MorphTarget {
            positions: vec![[0.0; 3]; corner_vertex.len()],
            normals: Vec::new(),
            tangents: Vec::new(),
        };
        {
            for (k, &v) in shape.offset_vertices.iter().enumerate() {
                if let Some(slot) = offset_of.get_mut(v as usize) {
                    *slot = k as u32;
                }
            }
            let normals = shape.normal_offsets.len() == shape.offset_vertices.len();
            if normals {
                target.normals = vec![[0.0; 3]; corner_vertex.len()];
            }
            for (c, &v) in corner_vertex.iter().enumerate() {
                let Some(&k) = offset_of.get(v as usize).filter(|k| **k != u32::MAX) else { continue };
                let d = vec3(shape.position_offsets[k as usize]);
                target.positions[c] = if d.is_finite() { d.to_array() } else { [0.0; 3] };
                if normals {
                    let n = vec3(shape.normal_offsets[k as usize]);
                    target.normals[c] = if n.is_finite() { n.to_array() } else { [0.0; 3] };
                }
            }
        }
        out.push(target);
    }
    out
}

/// Per bone, the box in its bind space of the vertices it moves.
fn joint_bounds(prims: &[Primitive], skeleton: &Skeleton) -> Vec<Option<Aabb>> {
    let mut out: Vec<Option<Aabb>> = vec![None; skeleton.bone_count()];
    for prim in prims {
        let Some(skin) = &prim.skin else { continue };
        for ((p, j), w) in prim.positions.iter().zip(&skin.joints).zip(&skin.weights) {
            for k in 0..4 {
                if w[k] > 0.0 {
                    let b = j[k] as usize;
                    let local = skeleton.inverse_bind[b].transform_point3(Vec3::from(*p));
                    out[b] = Some(out[b].map_or(Aabb::point(local), |a| a.union(Aabb::point(local))));
                }
            }
        }
    }
    out
}

/// The clip of one animation stack, baked by ufbx: keys at the curves' own times where they are
/// linear or constant (rotations: where they need no resampling), resampled at the file's frame
/// rate elsewhere; times from the stack's start. With it, the report of what was resampled.
fn stack_clip(
    scene: &ufbx::Scene,
    stack: &ufbx::AnimStack,
    bones: &Bones,
    units: &UnitScales,
    skeleton: &Skeleton,
    blends: &[(usize, &[BlendTarget])],
) -> Result<(Clip, Vec<MorphAnimation>, Option<String>), String> {
    let fps = scene.settings.frames_per_second;
    let rate = if fps.is_finite() && fps > 0.0 { fps } else { 30.0 };
    let opts = ufbx::BakeOpts { resample_rate: rate, ..Default::default() };
    let baked = ufbx::bake_anim(scene, &stack.anim, opts)
        .map_err(|e| format!("cannot be baked: {}", e.description))?;
    let begin = stack.time_begin;
    let mut clip = Clip::new(stack.element.name.to_string(), skeleton);
    clip.frame_rate = crate::frame_rate::standard_rate(rate as f32);
    let channels = clip.channels_mut();
    for node in baked.nodes.iter() {
        let Some(b) = bones.of_node.get(node.typed_id as usize).copied().flatten() else { continue };
        let bone_name = &skeleton.bone_names[b];
        let above = bones.above[b];
        let bind = skeleton.bind_pose[b];
        let fault = |what: &str, f: crate::track::TrackFault| format!("bone {bone_name:?} {what}: {f}");
        let time = |t: f64| (t - begin) as f32;
        // A root bone's keys carry what lies above it, as its bind pose does.
        let (above_s, above_r, _) = decompose(&above);
        // Uniform scales are carried by the translations below them (see `unit_scales`).
        let (inherited, own) = (units.inherited[b], units.own[b]);
        let folded_point =
            |v: Vec3| inherited * if above == Mat4::IDENTITY { v } else { above.transform_point3(v) };
        let folded_rot = |q: Quat| if above == Mat4::IDENTITY { q } else { (above_r * q).normalize() };
        // Translation and scale tracks that only hold the bind pose (an exporter keys every
        // channel of every bone) are left out: the bone keeps its bind there.
        let times = |keys: &[ufbx::BakedVec3]| keys.iter().map(|k| time(k.time)).collect::<Vec<f32>>();
        let values: Vec<Vec3> = node.translation_keys.iter().map(|k| folded_point(vec3(k.value))).collect();
        if !holds(&values, bind.translation) {
            channels[b].translation = Some(
                Track::from_keys(Interpolation::Linear, times(&node.translation_keys), values)
                    .map_err(|f| fault("translation", f))?,
            );
        }
        if !(node.constant_rotation && node.rotation_keys.len() <= 1) {
            let times = node.rotation_keys.iter().map(|k| time(k.time)).collect();
            let values = node.rotation_keys.iter().map(|k| folded_rot(quat(k.value))).collect();
            channels[b].rotation = Some(
                Track::from_keys(Interpolation::Linear, times, values).map_err(|f| fault("rotation", f))?,
            );
        }
        let values: Vec<Vec3> = node.scale_keys.iter().map(|k| vec3(k.value) * above_s / own).collect();
        if !holds(&values, bind.scale) {
            channels[b].scale = Some(
                Track::from_keys(Interpolation::Linear, times(&node.scale_keys), values)
                    .map_err(|f| fault("scale", f))?,
            );
        }
    }
    clip.length = ((stack.time_end - begin) as f32).max(0.0);
    let report = curve_report(scene, stack, &baked, clip.frame_rate);
    let morphs = blends
        .iter()
        .filter_map(|&(node, channels)| morph_weights(&baked, begin, node, channels).transpose())
        .collect::<Result<Vec<_>, _>>()?;
    Ok((clip, morphs, report))
}

/// The weights a stack gives one mesh node's morph targets: each target's hat function (see
/// [`BlendTarget`]) of its channel's `DeformPercent` (0 to 100, as 0 to 1), keyed at the
/// channel's keys and wherever the channel's weight crosses a shape's full weight between them
/// (so the piecewise linear weights are exact); a target whose channel the stack leaves alone
/// holds its default. `None` when the stack animates none of the node's channels.
fn morph_weights(
    baked: &ufbx::BakedAnim,
    begin: f64,
    node: usize,
    targets: &[BlendTarget],
) -> Result<Option<MorphAnimation>, String> {
    let keys = |id: u32| {
        baked
            .elements
            .iter()
            .find(|e| e.element_id == id)?
            .props
            .iter()
            .find(|p| p.name.as_ref() == "DeformPercent")
            .filter(|p| !p.keys.is_empty())
    };
    if targets.iter().all(|t| keys(t.channel).is_none()) {
        return Ok(None);
    }
    let mut weights = Vec::with_capacity(targets.len());
    for (k, target) in targets.iter().enumerate() {
        let (times, values): (Vec<f32>, Vec<f32>) = match keys(target.channel) {
            Some(p) => {
                let channel: Vec<(f32, f32)> = p
                    .keys
                    .iter()
                    .map(|key| ((key.time - begin) as f32, key.value.x as f32 / 100.0))
                    .collect();
                // The channel's keys, and its crossings of the shapes' full weights.
                let marks: Vec<f32> =
                    [target.before, Some(target.at), target.after].into_iter().flatten().collect();
                let mut at: Vec<(f32, f32)> = Vec::with_capacity(channel.len() * 2);
                for (i, &(t0, c0)) in channel.iter().enumerate() {
                    at.push((t0, c0));
                    if let Some(&(t1, c1)) = channel.get(i + 1) {
                        let mut cross: Vec<(f32, f32)> = marks
                            .iter()
                            .filter(|&&w| (c0 < w && w < c1) || (c1 < w && w < c0))
                            .map(|&w| (t0 + (w - c0) / (c1 - c0) * (t1 - t0), w))
                            .filter(|&(t, _)| t > t0 && t < t1)
                            .collect();
                        cross.sort_by(|a, b| a.0.total_cmp(&b.0));
                        at.extend(cross);
                    }
                }
                at.iter().map(|&(t, c)| (t, target.weight(c))).unzip()
            }
            None => (vec![0.0], vec![target.weight(target.default)]),
        };
        weights.push(
            Track::from_keys(Interpolation::Linear, times, values)
                .map_err(|f| format!("morph target {k} weights: {f}"))?,
        );
    }
    Ok(Some(MorphAnimation { node, weights }))
}

/// What the bake did to a stack's animated channels, for the import report: how many kept their
/// own keys (every baked key at a key time of the channel's curves: linear or constant curves) and
/// how many were resampled at `rate` (cubic curves, and Euler rotations, which ufbx samples so
/// that their quaternions follow the angles), naming the first few resampled (`node property`).
/// `None` for a stack that animates no bone.
fn curve_report(
    scene: &ufbx::Scene,
    stack: &ufbx::AnimStack,
    baked: &ufbx::BakedAnim,
    rate: f32,
) -> Option<String> {
    // Each animated property's key times, by (element id, property name).
    let mut sources: std::collections::HashMap<(u32, &str), Vec<f64>> = std::collections::HashMap::new();
    for layer in stack.layers.iter() {
        for prop in layer.anim_props.iter() {
            let times = sources.entry((prop.element.element_id, prop.prop_name.as_ref())).or_default();
            for curve in prop.anim_value.curves.iter().flatten() {
                times.extend(curve.keyframes.iter().map(|k| k.time));
            }
        }
    }
    for times in sources.values_mut() {
        times.sort_by(f64::total_cmp);
        times.dedup();
    }
    // Whether `t` is (to a microsecond) one of the sorted `times`.
    let has = |times: &[f64], t: f64| {
        let i = times.partition_point(|&k| k < t - 1e-6);
        times.get(i).is_some_and(|&k| (k - t).abs() <= 1e-6)
    };
    let (mut kept, mut resampled) = (0usize, Vec::<String>::new());
    for node in baked.nodes.iter() {
        let Some(source) = scene.nodes.get(node.typed_id as usize) else { continue };
        let channels: [(&str, Vec<f64>); 3] = [
            ("Lcl Translation", node.translation_keys.iter().map(|k| k.time).collect()),
            ("Lcl Rotation", node.rotation_keys.iter().map(|k| k.time).collect()),
            ("Lcl Scaling", node.scale_keys.iter().map(|k| k.time).collect()),
        ];
        for (prop, baked_times) in channels {
            let Some(times) = sources.get(&(node.element_id, prop)) else { continue };
            let own = baked_times.iter().all(|&t| has(times, t));
            if own {
                kept += 1;
            } else {
                resampled.push(format!("{} {prop}", source.element.name));
            }
        }
    }
    if kept + resampled.len() == 0 {
        return None;
    }
    let mut text = format!(
        "animation stack {:?}: {kept} channel(s) kept at their own keys, {} resampled at {rate} fps",
        stack.element.name.to_string(),
        resampled.len()
    );
    if !resampled.is_empty() {
        let shown: Vec<&str> = resampled.iter().take(4).map(String::as_str).collect();
        text.push_str(&format!(" (cubic curves, Euler rotations): {}", shown.join(", ")));
        if resampled.len() > shown.len() {
            text.push_str(&format!(" and {} more", resampled.len() - shown.len()));
        }
    }
    Some(text)
}

/// Whether every value of a baked channel is `bind` (to a millionth of its size): a channel that
/// only holds the bind pose.
fn holds(values: &[Vec3], bind: Vec3) -> bool {
    let tolerance = 1e-6 * bind.abs().max_element().max(1e-3);
    values.iter().all(|v| (*v - bind).abs().max_element() <= tolerance)
}

/// Where the scene reaches past what 32-bit floats hold, and what: values the file holds as
/// finite doubles can still pass it (an offset of 1e101) or compound past it down the hierarchy.
/// The glTF importer's reach check ([`crate::gltf::reach_faults`]); its first fault (its
/// descendants follow from it), the node or mesh named.
fn past_reach(s: &ImportedScene) -> Option<(String, String)> {
    let f = crate::gltf::reach_faults(&s.nodes, &s.order, &s.meshes, &s.skins, &s.rigs, &s.animations)
        .into_iter()
        .next()?;
    let at = match f.at {
        crate::gltf::Location::Node(i) => format!("node {:?}", s.nodes[i].name),
        crate::gltf::Location::Primitive { mesh, primitive } => {
            format!("mesh {:?} part {primitive}", s.meshes[mesh].name)
        }
        other => other.to_string(),
    };
    Some((at, f.message))
}

/// The scene: a node per bone (parents first), then a node per mesh; one skin over every bone
/// in bone order (when a mesh is skinned), one rig, the animations.
fn assemble(
    file: &Path,
    name: String,
    skeleton: Skeleton,
    meshes: Vec<Mesh>,
    mesh_nodes: Vec<MeshNode>,
    animations: Vec<Animation>,
    warnings: Vec<Warning>,
) -> ImportedScene {
    let n = skeleton.bone_count();
    let mut nodes = crate::gltf::Node::bones_of(&skeleton, 0);
    let has_rig = n > 0;
    let mut bindings = Vec::new();
    for MeshNode { name: node_name, place, mesh, skinned, joint_bounds, .. } in mesh_nodes {
        let skinned = skinned && has_rig;
        if skinned {
            bindings.push(MeshBinding { node: nodes.len(), skin: 0, mesh, joint_bounds });
        }
        nodes.push(Node {
            name: node_name,
            parent: None,
            children: Vec::new(),
            transform: place,
            mesh: Some(mesh),
            skin: skinned.then_some(0),
            morph_weights: meshes[mesh].weights.clone(),
            bones: Vec::new(),
        });
    }
    let roots: Vec<usize> = (0..nodes.len()).filter(|&i| nodes[i].parent.is_none()).collect();
    let (skins, rigs, animations) = if has_rig {
        let (skin, rig) = Rig::of_whole_skeleton(skeleton, name.clone(), bindings);
        (vec![skin], vec![rig], animations)
    } else {
        // No rig to play clips on: what animates morph weights is kept.
        let morphs_only = animations
            .into_iter()
            .filter(|a| !a.morphs.is_empty())
            .map(|a| Animation { clips: Vec::new(), ..a })
            .collect();
        (Vec::new(), Vec::new(), morphs_only)
    };
    ImportedScene {
        source: file.to_owned(),
        order: (0..nodes.len()).collect(),
        nodes,
        roots,
        meshes,
        skins,
        rigs,
        animations,
        materials: Vec::new(),
        images: Vec::new(),
        warnings,
    }
}
