//! Building an [`ImportedScene`] from parsed glTF: nodes, meshes, skins/rigs, animations.
//! Every check records a [`Fault`] and carries on where it can, so one run lists all faults.

use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;

mod animations;
mod cost;
mod reach;
mod skins;

use glam::{Mat4, Quat, Vec3};

use super::error::{Fault, ImportError, Location, Warning};
use super::json::{self, Root};
use super::load::{self, Decoded, Reader};
use super::{
    Animation, BoneRef, ImportedScene, Mesh, MeshBinding, MorphAnimation, Node, NodeAnimation, Primitive,
    Rig, RigClip, Skin, SkinStream,
};
use crate::clip::Clip;
use crate::math::{self, Transform};
use crate::morph::MorphTarget;
use crate::property::PropertyAnimation;
use crate::skeleton::{NO_PARENT, Skeleton, find_skeleton_fault};
use crate::skinning::Aabb;
use crate::track::{Animatable, Interpolation, Track};

/// The largest `.gltf` or `.glb` file [`import`] reads (1 GiB, the decode budget
/// [`DECODE_BUDGET_BYTES`]: a larger file could not be decoded within it anyway).
pub const MAX_FILE_BYTES: u64 = DECODE_BUDGET_BYTES as u64;

/// Imports a `.gltf` or `.glb` file (buffers are resolved relative to its folder). Only a regular
/// file of at most `MAX_FILE_BYTES` is read: a FIFO, a device or a folder is an
/// [`ImportError::Io`] saying what it is.
pub fn import(path: impl AsRef<Path>) -> Result<ImportedScene, ImportError> {
    let path = path.as_ref();
    let bytes = crate::project::fs::read_regular_file(path, MAX_FILE_BYTES)
        .map_err(|source| ImportError::Io { file: path.to_owned(), what: "the file".into(), source })?;
    import_slice(&bytes, path, path.parent())
}

/// Imports glTF or GLB bytes. `file` names the source in errors; external buffers are read from
/// `base_dir`, the file's folder (none: only data: URIs and the GLB chunk; see the URI rules
/// of `load::read_inside`).
pub fn import_slice(
    bytes: &[u8],
    file: &Path,
    base_dir: Option<&Path>,
) -> Result<ImportedScene, ImportError> {
    let container = load::parse_container(file, bytes)?;
    let root = container.root;
    let mut faults = Vec::new();
    let buffers = load::load_buffers(&root, container.bin, base_dir, &mut faults);
    let mut b = Builder {
        root: &root,
        base_dir,
        reader: Reader { root: &root, buffers: &buffers },
        faults,
        warnings: Vec::new(),
        decoded: HashMap::new(),
        decoded_bytes: 0,
        built_bytes: 0,
    };
    let scene = b.build(file);
    if b.faults.is_empty() {
        let mut scene = scene;
        scene.warnings = b.warnings;
        Ok(scene)
    } else {
        Err(ImportError::Invalid { file: file.to_owned(), faults: b.faults })
    }
}

/// How many bytes of decoded accessor values one import may hold (each accessor is decoded
/// once, however many primitives or samplers share it).
pub const DECODE_BUDGET_BYTES: usize = 1 << 30;

pub use cost::BUILD_BUDGET_BYTES;
pub(crate) use reach::reach_faults;

struct Builder<'a> {
    root: &'a Root,
    base_dir: Option<&'a Path>,
    reader: Reader<'a>,
    faults: Vec<Fault>,
    warnings: Vec<Warning>,
    /// Accessors decoded so far, shared by every reader.
    decoded: HashMap<usize, Rc<Decoded>>,
    /// Their bytes, against [`DECODE_BUDGET_BYTES`].
    decoded_bytes: usize,
    /// Bytes the import will build (counted before building), against [`BUILD_BUDGET_BYTES`].
    built_bytes: u64,
}

fn vec3(v: &Option<Vec<f32>>, default: Vec3) -> Option<Vec3> {
    match v {
        None => Some(default),
        Some(v) if v.len() == 3 => Some(Vec3::new(v[0], v[1], v[2])),
        _ => None,
    }
}

/// What is wrong with a number read from JSON as an f32 that is not finite (JSON has no NaN or
/// infinity: a value past the f32 range, like 1e39, reads as infinity).
fn json_number(v: f32) -> &'static str {
    if v.is_nan() { "is not a number" } else { "is past the 32-bit float range (about 3.4e38)" }
}

/// `q` at unit length: kept bit for bit when it already is to f32 precision (so a file's
/// rotations survive import and export unchanged), normalized otherwise.
fn try_normalize_q(q: Quat) -> Option<Quat> {
    let l2 = q.length_squared();
    if (l2 - 1.0).abs() <= 4.0 * f32::EPSILON { Some(q) } else { math::normalize_quat(q) }
}

/// The scene of an import refused before its meshes were built (its faults say why).
fn unbuilt(file: &Path, nodes: Vec<Node>, roots: Vec<usize>, order: Vec<usize>) -> ImportedScene {
    ImportedScene {
        source: file.to_owned(),
        nodes,
        roots,
        order,
        meshes: Vec::new(),
        skins: Vec::new(),
        rigs: Vec::new(),
        animations: Vec::new(),
        materials: Vec::new(),
        images: Vec::new(),
        warnings: Vec::new(),
    }
}

/// Makes `names` unique: the k-th use of a name becomes `name#k` (or the next free `name#j`).
/// Linear in the names: each base name remembers where its last probe ended, and every
/// `name#j` below that is taken for good (names are only ever added).
fn unique(names: &mut [String]) {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut probed: HashMap<String, usize> = HashMap::new();
    for n in names.iter_mut() {
        let count = seen.entry(n.clone()).or_insert(0);
        *count += 1;
        if *count > 1 {
            let mut k = (*count).max(probed.get(n.as_str()).copied().unwrap_or(0));
            let mut candidate = format!("{n}#{k}");
            while seen.contains_key(&candidate) {
                k += 1;
                candidate = format!("{n}#{k}");
            }
            probed.insert(n.clone(), k + 1);
            seen.insert(candidate.clone(), 1);
            *n = candidate;
        }
    }
}

impl Builder<'_> {
    fn fault(&mut self, at: Location, msg: impl Into<String>) {
        self.faults.push(Fault::new(at, msg));
    }

    fn warn(&mut self, at: Location, msg: impl Into<String>) {
        self.warnings.push(Fault::new(at, msg));
    }

    /// The decoded accessor (decoded once; refused, with a fault, when it would pass the
    /// import's budget of decoded bytes).
    fn read(&mut self, accessor: usize) -> Option<Rc<Decoded>> {
        if let Some(d) = self.decoded.get(&accessor) {
            return Some(d.clone());
        }
        if let Some(acc) = self.root.accessors.get(accessor) {
            let per = load::component_count(&acc.kind).unwrap_or(1);
            let need = acc.count.saturating_mul(per).saturating_mul(std::mem::size_of::<f64>());
            if self.decoded_bytes.saturating_add(need) > DECODE_BUDGET_BYTES {
                let f = Fault::new(
                    Location::Accessor(accessor),
                    format!(
                        "its {} elements would decode to {} MiB, past the import's budget of {} MiB of accessor data ({} MiB decoded already)",
                        acc.count,
                        need >> 20,
                        DECODE_BUDGET_BYTES >> 20,
                        self.decoded_bytes >> 20
                    ),
                );
                if !self.faults.contains(&f) {
                    self.faults.push(f);
                }
                return None;
            }
        }
        match self.reader.read(accessor) {
            Ok(d) => {
                self.decoded_bytes += d.values.len() * std::mem::size_of::<f64>();
                let d = Rc::new(d);
                self.decoded.insert(accessor, d.clone());
                Some(d)
            }
            Err(f) => {
                if !self.faults.contains(&f) {
                    self.faults.push(f);
                }
                None
            }
        }
    }

    /// Reads an accessor expecting `components` per element (and, when `count` is given, that
    /// element count), checking every value is finite.
    fn read_n(
        &mut self,
        accessor: usize,
        components: usize,
        count: Option<usize>,
        what: &str,
    ) -> Option<Rc<Decoded>> {
        let d = self.read(accessor)?;
        let at = Location::Accessor(accessor);
        if d.components != components {
            self.fault(
                at,
                format!("{what}: has {} components per element, expected {components}", d.components),
            );
            return None;
        }
        if let Some(c) = count.filter(|&c| c != d.count) {
            self.fault(at, format!("{what}: has {} elements, expected {c}", d.count));
            return None;
        }
        if let Some(i) = d.values.iter().position(|v| !(*v as f32).is_finite()) {
            self.fault(at, format!("{what}: element {} is not finite ({})", i / components, d.values[i]));
            return None;
        }
        Some(d)
    }

    fn build(&mut self, file: &Path) -> ImportedScene {
        let root = self.root;
        match &root.asset {
            Some(a) if a.version.starts_with("2.") => {}
            Some(a) => self.fault(
                Location::File,
                format!("asset.version is {:?}, only glTF 2.x is supported", a.version),
            ),
            None => self.fault(Location::File, "has no asset object (is this a glTF 2.0 file?)"),
        }
        for ext in &root.extensions_required {
            if ext != "KHR_mesh_quantization" {
                self.fault(Location::File, format!("requires extension {ext:?}, which is not supported"));
            }
        }
        for (i, v) in root.buffer_views.iter().enumerate() {
            // The schema's range, checked on every view (an attribute Marrow does not read is
            // still the file's, and exported files must be valid).
            if let Some(s) = v.byte_stride.filter(|s| !(4..=252).contains(s)) {
                self.fault(
                    Location::BufferView(i),
                    format!("byteStride is {s}; the glTF schema allows 4 to 252 (bytes between vertex attribute elements)"),
                );
            }
        }
        let (mut nodes, order, tree_ok) = self.nodes();
        let roots = self.roots(&nodes);
        if !self.check_mesh_cost() {
            return unbuilt(file, nodes, roots, order);
        }
        let meshes = self.meshes();
        for (i, n) in nodes.iter_mut().enumerate() {
            let targets = n.mesh.and_then(|m| meshes.get(m)).map_or(0, |m| m.weights.len());
            let own = root.nodes.get(i).and_then(|j| j.weights.clone());
            n.morph_weights = match own {
                Some(w) if w.iter().any(|v| !v.is_finite()) => {
                    let k = w.iter().position(|v| !v.is_finite()).unwrap_or(0);
                    self.fault(Location::Node(i), format!("morph weight {k} {}", json_number(w[k])));
                    Vec::new()
                }
                Some(w) if w.len() == targets => w,
                Some(w) => {
                    self.warn(
                        Location::Node(i),
                        format!(
                            "has {} weights but its mesh has {targets} morph targets; using the mesh's",
                            w.len()
                        ),
                    );
                    n.mesh.and_then(|m| meshes.get(m)).map_or(Vec::new(), |m| m.weights.clone())
                }
                None => n.mesh.and_then(|m| meshes.get(m)).map_or(Vec::new(), |m| m.weights.clone()),
            };
        }
        let (skins, rigs) = if tree_ok { self.skins(&mut nodes, &meshes) } else { (Vec::new(), Vec::new()) };
        let animations = if tree_ok { self.animations(&nodes, &meshes, &rigs) } else { Vec::new() };
        if tree_ok {
            self.faults.extend(reach::reach_faults(&nodes, &order, &meshes, &skins, &rigs, &animations));
        }
        let (materials, images) = self.materials();
        ImportedScene {
            source: file.to_owned(),
            nodes,
            roots,
            order,
            meshes,
            skins,
            rigs,
            animations,
            materials,
            images,
            warnings: Vec::new(),
        }
    }

    /// Materials' base colours and the images they use. A broken image or texture reference
    /// is a warning (the material keeps its factor): a model never fails over its textures.
    fn materials(&mut self) -> (Vec<super::Material>, Vec<super::Image>) {
        let root = self.root;
        let mut images = Vec::with_capacity(root.images.len());
        // Images naming one bufferView share its bytes (one copy, however many name it).
        let mut by_view: HashMap<usize, std::sync::Arc<[u8]>> = HashMap::new();
        for (i, im) in root.images.iter().enumerate() {
            let at = Location::Image(i);
            if let Some(bytes) = im.buffer_view.and_then(|bv| by_view.get(&bv)) {
                images.push(super::Image {
                    name: im.name.clone().unwrap_or_else(|| format!("image {i}")),
                    mime_type: im.mime_type.clone(),
                    bytes: bytes.clone(),
                });
                continue;
            }
            let bytes: Result<Vec<u8>, String> = match (&im.uri, im.buffer_view) {
                (_, Some(bv)) => match root.buffer_views.get(bv) {
                    Some(v) => match self.reader.buffers.get(v.buffer).and_then(|b| b.as_ref()) {
                        Some(b) => v
                            .byte_offset
                            .checked_add(v.byte_length)
                            .and_then(|end| b.get(v.byte_offset..end))
                            .map(<[u8]>::to_vec)
                            .ok_or_else(|| format!("bufferView {bv} runs past its buffer")),
                        None => Err(format!("bufferView {bv} names a buffer that could not be read")),
                    },
                    None => Err(format!("bufferView {bv} does not exist")),
                },
                (Some(uri), None) if uri.starts_with("data:") => uri
                    .split_once(";base64,")
                    .and_then(|(_, payload)| load::decode_base64(payload))
                    .ok_or_else(|| "data URI is not valid base64".to_owned()),
                (Some(uri), None) => load::read_inside(self.base_dir, uri, load::MAX_IMAGE_BYTES),
                (None, None) => Err("has neither a uri nor a bufferView".to_owned()),
            };
            let bytes = bytes.unwrap_or_else(|m| {
                self.warn(at, format!("{m}; drawn without this texture"));
                Vec::new()
            });
            let bytes: std::sync::Arc<[u8]> = bytes.into();
            if let Some(bv) = im.buffer_view.filter(|_| !bytes.is_empty()) {
                by_view.insert(bv, bytes.clone());
            }
            images.push(super::Image {
                name: im.name.clone().unwrap_or_else(|| format!("image {i}")),
                mime_type: im.mime_type.clone(),
                bytes,
            });
        }
        let mut materials = Vec::with_capacity(root.materials.len());
        for (i, m) in root.materials.iter().enumerate() {
            let pbr = m.pbr_metallic_roughness.as_ref();
            let factor = pbr.and_then(|p| p.base_color_factor.as_ref());
            let base_color = match factor {
                Some(f) if f.len() == 4 && f.iter().all(|x| x.is_finite()) => [f[0], f[1], f[2], f[3]],
                Some(_) => {
                    self.warn(
                        Location::Material(i),
                        "baseColorFactor is not four finite numbers; using white",
                    );
                    [1.0; 4]
                }
                None => [1.0; 4],
            };
            let texture = pbr.and_then(|p| p.base_color_texture.as_ref()).and_then(|t| {
                let source = root.textures.get(t.index).and_then(|x| x.source);
                match source {
                    Some(s) if images.get(s).is_some_and(|im| !im.bytes.is_empty()) && t.tex_coord == 0 => {
                        Some(s)
                    }
                    _ => {
                        self.warn(
                            Location::Material(i),
                            format!(
                                "baseColorTexture {} is not a usable image on TEXCOORD_0; drawn untextured",
                                t.index
                            ),
                        );
                        None
                    }
                }
            });
            materials.push(super::Material {
                name: m.name.clone().unwrap_or_else(|| format!("material {i}")),
                base_color,
                base_color_texture: texture,
            });
        }
        (materials, images)
    }

    fn nodes(&mut self) -> (Vec<Node>, Vec<usize>, bool) {
        let root = self.root;
        let n = root.nodes.len();
        let mut ok = true;
        let mut parent: Vec<Option<usize>> = vec![None; n];
        let mut nodes = Vec::with_capacity(n);
        for (i, j) in root.nodes.iter().enumerate() {
            let at = Location::Node(i);
            for &c in &j.children {
                if c >= n {
                    self.fault(at.clone(), format!("has child {c}, but the file has {n} nodes"));
                    ok = false;
                } else if let Some(p) = parent[c] {
                    self.fault(
                        at.clone(),
                        format!("has child {c}, which is already a child of node {p} (not a tree)"),
                    );
                    ok = false;
                } else {
                    parent[c] = Some(i);
                }
            }
            if let Some(m) = j.mesh.filter(|&m| m >= root.meshes.len()) {
                self.fault(at.clone(), format!("names mesh {m}, but the file has {}", root.meshes.len()));
            }
            if let Some(s) = j.skin.filter(|&s| s >= root.skins.len()) {
                self.fault(at.clone(), format!("names skin {s}, but the file has {}", root.skins.len()));
            }
            let transform = match &j.matrix {
                Some(m) if m.len() == 16 && m.iter().all(|v| v.is_finite()) => {
                    let mat = Mat4::from_cols_slice(m);
                    let (s, r, t) = math::decompose(&mat);
                    let back = Mat4::from_scale_rotation_translation(s, r, t);
                    if !back.abs_diff_eq(
                        mat,
                        1e-5 * mat.abs().to_cols_array().iter().fold(1.0f32, |a, b| a.max(*b)),
                    ) {
                        self.warn(at.clone(), "matrix has shear or a projection part, which is dropped");
                    }
                    Transform { translation: t, rotation: r, scale: s }
                }
                Some(_) => {
                    self.fault(at.clone(), "matrix must be 16 finite numbers");
                    Transform::IDENTITY
                }
                None => {
                    let t = vec3(&j.translation, Vec3::ZERO);
                    let s = vec3(&j.scale, Vec3::ONE);
                    let r = match &j.rotation {
                        None => Some(Quat::IDENTITY),
                        Some(r) if r.len() == 4 => Some(Quat::from_xyzw(r[0], r[1], r[2], r[3])),
                        _ => None,
                    };
                    match (t, r, s) {
                        (Some(t), Some(r), Some(s)) if t.is_finite() && r.is_finite() && s.is_finite() => {
                            let r = if (r.length() - 1.0).abs() > 1e-3 {
                                self.warn(
                                    at.clone(),
                                    format!("rotation has length {}, normalized", r.length()),
                                );
                                try_normalize_q(r).unwrap_or(Quat::IDENTITY)
                            } else {
                                try_normalize_q(r).unwrap_or(r)
                            };
                            Transform { translation: t, rotation: r, scale: s }
                        }
                        _ => {
                            self.fault(
                                at.clone(),
                                "translation/rotation/scale must have 3/4/3 finite numbers",
                            );
                            Transform::IDENTITY
                        }
                    }
                }
            };
            nodes.push(Node {
                name: j.name.clone().unwrap_or_else(|| format!("node{i}")),
                parent: None,
                children: j.children.iter().copied().filter(|&c| c < n).collect(),
                transform,
                mesh: j.mesh.filter(|&m| m < root.meshes.len()),
                skin: j.skin.filter(|&s| s < root.skins.len()),
                morph_weights: Vec::new(),
                bones: Vec::new(),
            });
        }
        // Cycle detection, linear in the node count: walk up from each node not seen yet,
        // marking the walk; meeting the walk itself is a cycle, meeting a finished node is not.
        let mut state = vec![0u8; n]; // 0 unseen, 1 on the current walk, 2 finished
        let mut walk: Vec<usize> = Vec::new();
        for first in 0..n {
            walk.clear();
            let mut at = Some(first);
            while let Some(x) = at {
                match state[x] {
                    0 => {
                        state[x] = 1;
                        walk.push(x);
                        at = parent[x];
                    }
                    1 => {
                        // The walk from x back to x is a cycle: name it from its lowest node.
                        let k = walk.iter().position(|&w| w == x).unwrap_or(0);
                        let cycle = &walk[k..];
                        let lo = (0..cycle.len()).min_by_key(|&i| cycle[i]).unwrap_or(0);
                        let up: Vec<usize> = cycle[lo..].iter().chain(&cycle[..lo]).copied().collect();
                        let mut path: Vec<String> = std::iter::once(up[0])
                            .chain(up.iter().skip(1).rev().copied())
                            .map(|c| c.to_string())
                            .collect();
                        if path.len() > 12 {
                            // A long cycle is named by its ends and its length.
                            let len = path.len();
                            path.splice(6..len - 3, [format!("... ({len} nodes) ...")]);
                        }
                        self.fault(
                            Location::Node(up[0]),
                            format!(
                                "is its own ancestor: node cycle {} -> {} (parent -> child)",
                                path.join(" -> "),
                                up[0]
                            ),
                        );
                        ok = false;
                        break;
                    }
                    _ => break,
                }
            }
            for &w in &walk {
                state[w] = 2;
            }
        }
        let mut order = Vec::with_capacity(n);
        if ok {
            for (i, node) in nodes.iter_mut().enumerate() {
                node.parent = parent[i];
            }
            let mut stack: Vec<usize> = (0..n).rev().filter(|&i| parent[i].is_none()).collect();
            while let Some(i) = stack.pop() {
                order.push(i);
                stack.extend(nodes[i].children.iter().rev().copied());
            }
        }
        (nodes, order, ok)
    }

    fn roots(&mut self, nodes: &[Node]) -> Vec<usize> {
        let root = self.root;
        let scene = root.scene.or(if root.scenes.is_empty() { None } else { Some(0) });
        match scene {
            Some(s) => match root.scenes.get(s) {
                Some(sc) => {
                    let mut out = Vec::new();
                    for &r in &sc.nodes {
                        match nodes.get(r) {
                            Some(nd) if nd.parent.is_none() => out.push(r),
                            Some(_) => self.fault(
                                Location::Scene(s),
                                format!("lists node {r}, which is not a root node"),
                            ),
                            None => self.fault(
                                Location::Scene(s),
                                format!("lists node {r}, but the file has {}", nodes.len()),
                            ),
                        }
                    }
                    out
                }
                None => {
                    self.fault(Location::File, format!("scene {s} does not exist"));
                    Vec::new()
                }
            },
            None => (0..nodes.len()).filter(|&i| nodes[i].parent.is_none()).collect(),
        }
    }

    fn meshes(&mut self) -> Vec<Mesh> {
        let root = self.root;
        let mut out = Vec::with_capacity(root.meshes.len());
        for (mi, m) in root.meshes.iter().enumerate() {
            let mut prims = Vec::new();
            let mut target_count: Option<usize> = None;
            for (pi, p) in m.primitives.iter().enumerate() {
                if let Some(tc) = target_count {
                    if tc != p.targets.len() {
                        self.fault(
                            Location::Primitive { mesh: mi, primitive: pi },
                            format!(
                                "has {} morph targets, the mesh's first primitive has {tc}",
                                p.targets.len()
                            ),
                        );
                    }
                } else {
                    target_count = Some(p.targets.len());
                }
                prims.push(self.primitive(mi, pi, p));
            }
            let targets = target_count.unwrap_or(0);
            let weights = match &m.weights {
                Some(w) if w.iter().any(|v| !v.is_finite()) => {
                    let k = w.iter().position(|v| !v.is_finite()).unwrap_or(0);
                    self.fault(Location::Mesh(mi), format!("default weight {k} {}", json_number(w[k])));
                    vec![0.0; targets]
                }
                Some(w) if w.len() == targets => w.clone(),
                Some(w) => {
                    self.fault(
                        Location::Mesh(mi),
                        format!("has {} default weights for {targets} morph targets", w.len()),
                    );
                    vec![0.0; targets]
                }
                None => vec![0.0; targets],
            };
            let names: Option<Vec<String>> =
                m.extras.as_ref().and_then(|e| e.get("targetNames")).and_then(|v| v.as_array()).map(|a| {
                    a.iter()
                        .enumerate()
                        .map(|(i, v)| v.as_str().map_or_else(|| format!("target{i}"), str::to_owned))
                        .collect()
                });
            let mut target_names = match names {
                Some(n) if n.len() == targets => n,
                Some(n) => {
                    self.warn(
                        Location::Mesh(mi),
                        format!(
                            "extras.targetNames has {} names for {targets} targets; using target<N>",
                            n.len()
                        ),
                    );
                    (0..targets).map(|i| format!("target{i}")).collect()
                }
                None => (0..targets).map(|i| format!("target{i}")).collect(),
            };
            unique(&mut target_names);
            out.push(Mesh {
                name: m.name.clone().unwrap_or_else(|| format!("mesh{mi}")),
                primitives: prims.into_iter().flatten().collect(),
                weights,
                target_names,
            });
        }
        out
    }

    fn vecs<const N: usize>(
        &mut self,
        acc: usize,
        count: Option<usize>,
        what: &str,
    ) -> Option<Vec<[f32; N]>> {
        let d = self.read_n(acc, N, count, what)?;
        Some(d.values.chunks_exact(N).map(|c| std::array::from_fn(|i| c[i] as f32)).collect())
    }

    fn primitive(&mut self, mi: usize, pi: usize, p: &json::Primitive) -> Option<Primitive> {
        let at = Location::Primitive { mesh: mi, primitive: pi };
        let Some(&pos) = p.attributes.get("POSITION") else {
            self.fault(at, "has no POSITION attribute");
            return None;
        };
        let positions: Vec<[f32; 3]> = self.vecs::<3>(pos, None, "POSITION")?;
        let n = Some(positions.len());
        let attr = |name: &str| p.attributes.get(name).copied();
        let normals = match attr("NORMAL") {
            Some(a) => self.vecs::<3>(a, n, "NORMAL")?,
            None => Vec::new(),
        };
        let tangents = match attr("TANGENT") {
            Some(a) => self.vecs::<4>(a, n, "TANGENT")?,
            None => Vec::new(),
        };
        let uvs = match attr("TEXCOORD_0") {
            Some(a) => self.vecs::<2>(a, n, "TEXCOORD_0")?,
            None => Vec::new(),
        };
        let colors = match attr("COLOR_0") {
            Some(a) => match self.root.accessors.get(a).map(|x| x.kind.as_str()) {
                Some("VEC3") => {
                    self.vecs::<3>(a, n, "COLOR_0")?.into_iter().map(|c| [c[0], c[1], c[2], 1.0]).collect()
                }
                _ => self.vecs::<4>(a, n, "COLOR_0")?,
            },
            None => Vec::new(),
        };
        let indices = match p.indices {
            Some(a) => {
                let d = self.read_n(a, 1, None, "indices")?;
                if let Some(k) = d.values.iter().position(|&v| v < 0.0 || v >= positions.len() as f64) {
                    self.fault(
                        Location::Accessor(a),
                        format!(
                            "index {k} is {}, past the {} vertices of mesh {mi} primitive {pi}",
                            d.values[k],
                            positions.len()
                        ),
                    );
                    return None;
                }
                Some(d.values.iter().map(|&v| v as u32).collect())
            }
            None => None,
        };
        let skin = match (attr("JOINTS_0"), attr("WEIGHTS_0")) {
            (Some(j0), Some(w0)) => {
                let j0d = self.read_n(j0, 4, n, "JOINTS_0")?;
                if !matches!(j0d.component_type, 5121 | 5123) {
                    self.fault(Location::Accessor(j0), "JOINTS_0 must be unsigned bytes or shorts");
                    return None;
                }
                let w0d = self.read_n(w0, 4, n, "WEIGHTS_0")?;
                let extra = match (attr("JOINTS_1"), attr("WEIGHTS_1")) {
                    (Some(j1), Some(w1)) => {
                        Some((self.read_n(j1, 4, n, "JOINTS_1")?, self.read_n(w1, 4, n, "WEIGHTS_1")?))
                    }
                    _ => None,
                };
                Some(self.skin_stream(&at, j0, &j0d, &w0d, extra.as_ref())?)
            }
            (None, None) => None,
            _ => {
                self.fault(at, "has only one of JOINTS_0 and WEIGHTS_0");
                return None;
            }
        };
        let mut targets = Vec::with_capacity(p.targets.len());
        for t in &p.targets {
            let mut mt = MorphTarget::default();
            if let Some(&a) = t.get("POSITION") {
                mt.positions = self.vecs::<3>(a, n, "morph target POSITION")?;
            }
            if let Some(&a) = t.get("NORMAL") {
                mt.normals = self.vecs::<3>(a, n, "morph target NORMAL")?;
            }
            if let Some(&a) = t.get("TANGENT") {
                mt.tangents = self.vecs::<3>(a, n, "morph target TANGENT")?;
            }
            targets.push(mt);
        }
        let bounds = positions.iter().map(|p| Aabb::point(Vec3::from(*p))).reduce(Aabb::union);
        Some(Primitive {
            mode: p.mode.unwrap_or(4),
            material: p.material,
            positions,
            normals,
            tangents,
            uvs,
            colors,
            indices,
            skin,
            targets,
            bounds,
        })
    }

    /// Up to eight influences per vertex: duplicates merged, the four largest kept, renormalized.
    fn skin_stream(
        &mut self,
        at: &Location,
        joints_accessor: usize,
        j0: &Decoded,
        w0: &Decoded,
        extra: Option<&(Rc<Decoded>, Rc<Decoded>)>,
    ) -> Option<SkinStream> {
        let n = j0.count;
        use crate::mesh::{JointFormat, SkinFormat, WeightFormat};
        let format = SkinFormat {
            joints: if j0.component_type == 5121 { JointFormat::U8 } else { JointFormat::U16 },
            weights: match w0.component_type {
                5121 => WeightFormat::Unorm8,
                5123 => WeightFormat::Unorm16,
                _ => WeightFormat::Float,
            },
        };
        let mut out = SkinStream { joints: Vec::with_capacity(n), weights: Vec::with_capacity(n), format };
        let mut reduced = 0usize;
        let mut unnormalized = 0usize;
        for v in 0..n {
            // Weights are summed and normalized in f64: two weights of 3e38 would overflow an
            // f32 sum (zeroing the vertex), and a 1e-40 beside 1e38 must not keep a joint.
            let mut inf: [(u32, f64); 8] = [(0, 0.0); 8];
            let mut k = 0;
            let sets = std::iter::once((j0, w0)).chain(extra.map(|(a, b)| (&**a, &**b)));
            for (jd, wd) in sets {
                for c in 0..4 {
                    let j = jd.values[v * 4 + c];
                    let w = wd.values[v * 4 + c];
                    if !(j >= 0.0 && j <= u16::MAX as f64) {
                        self.fault(
                            Location::Accessor(joints_accessor),
                            format!("vertex {v} has joint index {j}, which does not fit 16 bits"),
                        );
                        return None;
                    }
                    if w < 0.0 {
                        self.fault(at.clone(), format!("vertex {v} has negative weight {w}"));
                        return None;
                    }
                    if w == 0.0 {
                        continue;
                    }
                    let j = j as u32;
                    if let Some(e) = inf[..k].iter_mut().find(|e| e.0 == j) {
                        e.1 += w;
                    } else {
                        inf[k] = (j, w);
                        k += 1;
                    }
                }
            }
            let infl = &mut inf[..k];
            infl.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            if k > 4 {
                reduced += 1;
            }
            let kept = &infl[..k.min(4)];
            let sum: f64 = kept.iter().map(|e| e.1).sum();
            let mut joints = [0u16; 4];
            let mut weights = [0.0f32; 4];
            if sum > 0.0 {
                if (sum - 1.0).abs() > 1e-3 && k <= 4 {
                    unnormalized += 1;
                }
                // An influence that normalizes to zero is dropped with its joint (joint 0,
                // weight 0), so no joint index the skin does not have survives unchecked.
                let mut slot = 0;
                for e in kept {
                    let w = (e.1 / sum) as f32;
                    if w > 0.0 {
                        joints[slot] = e.0 as u16;
                        weights[slot] = w;
                        slot += 1;
                    }
                }
            } else {
                unnormalized += 1;
                weights[0] = 1.0;
            }
            out.joints.push(joints);
            out.weights.push(weights);
        }
        if reduced > 0 {
            self.warn(
                at.clone(),
                format!("{reduced} vertices had more than 4 influences; kept the 4 largest and renormalized"),
            );
        }
        if unnormalized > 0 {
            self.warn(
                at.clone(),
                format!("{unnormalized} vertices had weights not summing to 1; renormalized"),
            );
        }
        Some(out)
    }
}
