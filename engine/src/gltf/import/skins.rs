//! Skins into rigs: each glTF skin checked (joints, inverse binds, a tree), identical skins
//! sharing one rig, bones ordered depth-first through joints and the nodes between them; then
//! the mesh nodes each rig deforms, with every vertex's joints checked.

use super::*;

impl Builder<'_> {
    pub(super) fn skins(&mut self, nodes: &mut [Node], meshes: &[Mesh]) -> (Vec<super::Skin>, Vec<Rig>) {
        let root = self.root;
        let mut skins: Vec<Skin> = Vec::new();
        let mut rigs: Vec<Rig> = Vec::new();
        let mut names = RigNames::default();
        // glTF skin index -> index into `skins` (skins at fault have none).
        let mut skin_ids: HashMap<usize, usize> = HashMap::new();
        for (si, s) in root.skins.iter().enumerate() {
            if let Some(skin) = self.skin(si, s, nodes, &mut rigs, &mut names) {
                skin_ids.insert(si, skins.len());
                skins.push(skin);
            }
        }
        self.bind_meshes(nodes, meshes, &skins, &skin_ids, &mut rigs);
        (skins, rigs)
    }

    /// Skin `si`: checked (joints, inverse binds, a tree) and given a rig (an identical earlier
    /// skin's, or a new one whose bones are ordered depth-first through the joints and the
    /// nodes between them). `None` (with the fault said) when it cannot become one.
    fn skin(
        &mut self,
        si: usize,
        s: &json::Skin,
        nodes: &mut [Node],
        rigs: &mut Vec<Rig>,
        names: &mut RigNames,
    ) -> Option<Skin> {
        let root = self.root;
        let at = Location::Skin(si);
        let name = s.name.clone().unwrap_or_else(|| format!("skin{si}"));
        let nj = s.joints.len();
        if nj == 0 {
            self.fault(at, "has no joints");
            return None;
        }
        // The limit first, before the per-joint work it protects.
        if nj > crate::skeleton::MAX_BONES {
            self.fault(
                at,
                format!("has {nj} joints; a rig holds at most {} bones", crate::skeleton::MAX_BONES),
            );
            return None;
        }
        if let Some(&j) = s.joints.iter().find(|&&j| j >= nodes.len()) {
            self.fault(at, format!("names joint node {j}, but the file has {} nodes", nodes.len()));
            return None;
        }
        let mut seen = HashMap::new();
        let mut dup = false;
        for (k, &j) in s.joints.iter().enumerate() {
            if let Some(prev) = seen.insert(j, k) {
                self.fault(at.clone(), format!("lists node {j} twice (joints {prev} and {k})"));
                dup = true;
            }
        }
        if dup {
            return None;
        }
        if let Some(r) = s.skeleton.filter(|&r| r >= nodes.len()) {
            self.fault(at.clone(), format!("skeleton root {r} does not exist"));
        }
        let inverse_bind = match s.inverse_bind_matrices {
            Some(a) => {
                let d = self.read_n(a, 16, None, "inverseBindMatrices")?;
                if d.count < nj {
                    self.fault(
                        Location::Accessor(a),
                        format!(
                            "inverseBindMatrices has {} matrices for the {nj} joints of skin {si}",
                            d.count
                        ),
                    );
                    return None;
                }
                d.values
                    .chunks_exact(16)
                    .take(nj)
                    .map(|c| Mat4::from_cols_array(&std::array::from_fn(|i| c[i] as f32)))
                    .collect()
            }
            None => vec![Mat4::IDENTITY; nj],
        };
        let JointTree { is_joint, extra_bones, root_joints, root_parent } =
            self.joint_tree(at.clone(), s, nodes)?;
        // Reuse an identical earlier skin's rig (exact comparison; rigs found by a hash of
        // their joints and inverse binds, so many skins cost no more than one pass).
        let key = rig_key(&s.joints, &inverse_bind);
        let same = |r: &Rig| {
            r.joint_nodes == s.joints
                && r.inverse_bind
                    .iter()
                    .zip(&inverse_bind)
                    .all(|(a, b)| a.to_cols_array().map(f32::to_bits) == b.to_cols_array().map(f32::to_bits))
        };
        let found = names.by_key.get(&key).and_then(|list| list.iter().copied().find(|&r| same(&rigs[r])));
        if let Some(r) = found {
            rigs[r].skins.push(si);
            return Some(Skin {
                name,
                joints: s.joints.clone(),
                inverse_bind,
                skeleton_root: s.skeleton,
                rig: r,
            });
        }
        // Bone order: depth-first from the root joints through joint/gap nodes.
        let extra: std::collections::HashSet<usize> = extra_bones.iter().copied().collect();
        let in_rig = |x: usize| is_joint.contains_key(&x) || extra.contains(&x);
        let mut bone_nodes = Vec::new();
        let mut stack: Vec<usize> = root_joints.iter().rev().map(|r| r.0).collect();
        while let Some(x) = stack.pop() {
            bone_nodes.push(x);
            stack.extend(nodes[x].children.iter().rev().copied().filter(|&c| in_rig(c)));
        }
        let bone_of: HashMap<usize, usize> = bone_nodes.iter().enumerate().map(|(b, &nd)| (nd, b)).collect();
        let joint_to_bone: Vec<u16> =
            s.joints.iter().map(|j| bone_of.get(j).map_or(0, |&b| b as u16)).collect();
        let mut bone_names: Vec<String> = bone_nodes
            .iter()
            .map(|&nd| match (&root.nodes[nd].name, is_joint.get(&nd)) {
                (Some(n), _) => n.clone(),
                (None, Some(k)) => format!("joint{k}"),
                (None, None) => format!("node{nd}"),
            })
            .collect();
        unique(&mut bone_names);
        let parents: Vec<u16> = bone_nodes
            .iter()
            .map(|&nd| nodes[nd].parent.and_then(|p| bone_of.get(&p)).map_or(NO_PARENT, |&b| b as u16))
            .collect();
        let bind_pose: Vec<Transform> = bone_nodes.iter().map(|&nd| nodes[nd].transform).collect();
        let mut model = vec![Mat4::IDENTITY; bone_nodes.len()];
        let mut bone_ib = vec![Mat4::IDENTITY; bone_nodes.len()];
        for b in 0..bone_nodes.len() {
            let local = bind_pose[b].to_mat4();
            model[b] = match parents[b] {
                NO_PARENT => local,
                p => model.get(p as usize).copied().unwrap_or(Mat4::IDENTITY) * local,
            };
            bone_ib[b] = match is_joint.get(&bone_nodes[b]) {
                Some(&k) => inverse_bind[k],
                None => math::inverse_or_identity(&model[b]),
            };
        }
        let sk_name = names.names.unique(&name);
        let skeleton = Skeleton { name: sk_name, bone_names, parents, bind_pose, inverse_bind: bone_ib };
        if let Some(f) = find_skeleton_fault(&skeleton) {
            self.fault(at, format!("cannot become a skeleton: {f}"));
            return None;
        }
        let r = rigs.len();
        names.by_key.entry(key).or_default().push(r);
        for (b, &nd) in bone_nodes.iter().enumerate() {
            nodes[nd].bones.push(BoneRef { rig: r, bone: b });
        }
        rigs.push(Rig {
            skeleton,
            skins: vec![si],
            bone_nodes,
            joint_nodes: s.joints.clone(),
            joint_to_bone,
            inverse_bind: inverse_bind.clone(),
            root_parent,
            bindings: Vec::new(),
        });
        Some(Skin { name, joints: s.joints.clone(), inverse_bind, skeleton_root: s.skeleton, rig: r })
    }

    /// Bindings: each mesh node with a skin, its rig, and every vertex's joints checked (with
    /// the bind-space bounds of each joint's vertices).
    fn bind_meshes(
        &mut self,
        nodes: &[Node],
        meshes: &[Mesh],
        skins: &[Skin],
        skin_ids: &HashMap<usize, usize>,
        rigs: &mut [Rig],
    ) {
        let root = self.root;
        for (ni, node) in nodes.iter().enumerate() {
            let Some(si) = node.skin else { continue };
            let Some(skin) = skin_ids.get(&si).and_then(|&k| skins.get(k)) else {
                continue;
            };
            let rig = skin.rig;
            let Some(mi) = node.mesh else {
                self.warn(Location::Node(ni), format!("has skin {si} but no mesh; the skin is ignored"));
                continue;
            };
            let Some(mesh) = meshes.get(mi) else { continue };
            let nj = skin.joints.len();
            let mut bounds: Vec<Option<Aabb>> = vec![None; nj];
            for (pi, p) in mesh.primitives.iter().enumerate() {
                let Some(st) = &p.skin else {
                    self.fault(
                        Location::Primitive { mesh: mi, primitive: pi },
                        format!("is drawn by node {ni} with skin {si} but has no JOINTS_0/WEIGHTS_0"),
                    );
                    continue;
                };
                let acc = root
                    .meshes
                    .get(mi)
                    .and_then(|m| m.primitives.get(pi))
                    .and_then(|p| p.attributes.get("JOINTS_0").copied());
                for (v, (js, ws)) in st.joints.iter().zip(&st.weights).enumerate() {
                    for (j, w) in js.iter().zip(ws) {
                        if *w == 0.0 {
                            continue;
                        }
                        let Some(b) = bounds.get_mut(*j as usize) else {
                            let at = acc
                                .map_or(Location::Primitive { mesh: mi, primitive: pi }, Location::Accessor);
                            self.fault(at, format!("JOINTS_0 of mesh {mi} primitive {pi}: vertex {v} names joint {j}, but skin {si} (used by node {ni}) has {nj} joints"));
                            break;
                        };
                        let q = skin.inverse_bind[*j as usize].transform_point3(Vec3::from(p.positions[v]));
                        match b {
                            Some(b) => b.grow(q),
                            None => *b = Some(Aabb::point(q)),
                        }
                    }
                    if self.faults.len() > 64 {
                        break;
                    }
                }
            }
            rigs[rig].bindings.push(MeshBinding { node: ni, skin: si, mesh: mi, joint_bounds: bounds });
        }
    }

    /// The tree check of a skin: every joint's nearest joint ancestor (the nodes between become
    /// bones too); the root joints must share one parent. `None` (with the fault said) when
    /// they do not.
    fn joint_tree(&mut self, at: Location, s: &json::Skin, nodes: &[Node]) -> Option<JointTree> {
        let is_joint: HashMap<usize, usize> = s.joints.iter().enumerate().map(|(k, &j)| (j, k)).collect();
        let mut extra_bones: Vec<usize> = Vec::new();
        let mut extra_set: std::collections::HashSet<usize> = std::collections::HashSet::new();
        let mut root_joints: Vec<(usize, Option<usize>)> = Vec::new();
        for &j in &s.joints {
            let mut gap = Vec::new();
            let mut p = nodes[j].parent;
            let mut found = false;
            while let Some(x) = p {
                if is_joint.contains_key(&x) {
                    found = true;
                    break;
                }
                gap.push(x);
                p = nodes[x].parent;
            }
            if found {
                for g in gap {
                    if extra_set.insert(g) {
                        extra_bones.push(g);
                    }
                }
            } else {
                root_joints.push((j, nodes[j].parent));
            }
        }
        let root_parent = root_joints.first().and_then(|r| r.1);
        if let Some(&(other, op)) = root_joints.iter().find(|r| r.1 != root_parent) {
            let (first, fp) = root_joints[0];
            let name_of = |p: Option<usize>| p.map_or("the scene root".to_string(), |p| format!("node {p}"));
            self.fault(
                at,
                format!(
                    "joints do not form a tree: root joints {first} (under {}) and {other} (under {}) have different parents",
                    name_of(fp),
                    name_of(op)
                ),
            );
            return None;
        }
        Some(JointTree { is_joint, extra_bones, root_joints, root_parent })
    }
}

/// The skeleton names given so far (`name`, then `name#2`, ...) and the rigs by [`rig_key`],
/// so each skin finds its name and an identical earlier rig in constant time.
struct RigNames {
    /// Every skeleton name given.
    names: crate::gltf::entity::UniqueNames,
    /// Rigs by the hash of their joints and inverse binds.
    by_key: HashMap<u64, Vec<usize>>,
}

impl Default for RigNames {
    fn default() -> Self {
        Self { names: crate::gltf::entity::UniqueNames::new("#"), by_key: HashMap::new() }
    }
}

/// A hash of a skin's joints and the bits of its inverse bind matrices.
fn rig_key(joints: &[usize], inverse_bind: &[Mat4]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    joints.hash(&mut h);
    for m in inverse_bind {
        m.to_cols_array().map(f32::to_bits).hash(&mut h);
    }
    h.finish()
}

/// What [`Builder::joint_tree`] found.
struct JointTree {
    /// Joint node -> its index in the skin.
    is_joint: HashMap<usize, usize>,
    /// Nodes between joints, which become bones too (in discovery order).
    extra_bones: Vec<usize>,
    /// Joints with no joint above them, and their parent node.
    root_joints: Vec<(usize, Option<usize>)>,
    /// The parent node every root joint shares.
    root_parent: Option<usize>,
}
