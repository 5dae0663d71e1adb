//! Skeletons: bone names, parent indices (`parent < index`), bind-pose local TRS and inverse bind
//! matrices, as flat parallel arrays for the pose jobs' hot loops.
//!
//! A skeleton is runtime data: it is built by an importer or a generator and checked once with
//! [`find_skeleton_fault`]. It deliberately holds no per-frame state (see [`crate::pose`]).

use glam::Mat4;

use crate::math::Transform;

/// The parent index of a root bone.
pub const NO_PARENT: u16 = u16::MAX;

/// The most bones a skeleton may have.
pub const MAX_BONES: usize = 1024;

/// A skeleton. Fields are public, parallel arrays indexed by bone; the invariant that every
/// parent index is lower than its child's (so a single forward loop composes the pose) is checked
/// by [`find_skeleton_fault`], which every constructor of untrusted data must call.
#[derive(Clone, Debug, PartialEq)]
pub struct Skeleton {
    /// The skeleton's name; clips name the skeleton they were authored for.
    pub name: String,
    /// Bone names, unique.
    pub bone_names: Vec<String>,
    /// Parent of each bone, [`NO_PARENT`] for roots; always lower than the bone's own index.
    pub parents: Vec<u16>,
    /// Bind-pose local transform of each bone.
    pub bind_pose: Vec<Transform>,
    /// Inverse bind matrix of each bone (`bone_from_model` at bind time).
    pub inverse_bind: Vec<Mat4>,
}

/// Why a skeleton cannot be used.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SkeletonFault {
    /// The per-bone arrays have different lengths.
    #[error(
        "skeleton {skeleton:?}: per-bone arrays are not parallel ({names} names, {parents} parents, {bind} bind transforms, {inverse_bind} inverse bind matrices)"
    )]
    NotParallel {
        /// Skeleton name.
        skeleton: String,
        /// Number of names.
        names: usize,
        /// Number of parents.
        parents: usize,
        /// Number of bind transforms.
        bind: usize,
        /// Number of inverse bind matrices.
        inverse_bind: usize,
    },
    /// A bone's parent index is at or after the bone itself.
    #[error("skeleton {skeleton:?}: bone {bone} ({name:?}) has parent {parent}, which is not before it")]
    ParentNotBefore {
        /// Skeleton name.
        skeleton: String,
        /// Bone index.
        bone: usize,
        /// Bone name.
        name: String,
        /// Its parent index.
        parent: u16,
    },
    /// Two bones share a name.
    #[error("skeleton {skeleton:?}: bones {first} and {second} are both named {name:?}")]
    DuplicateName {
        /// Skeleton name.
        skeleton: String,
        /// The duplicated name.
        name: String,
        /// First bone with it.
        first: usize,
        /// Second bone with it.
        second: usize,
    },
    /// More than [`MAX_BONES`] bones.
    #[error("skeleton {skeleton:?}: {count} bones is more than the limit of {max}")]
    TooManyBones {
        /// Skeleton name.
        skeleton: String,
        /// Bone count.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// A bind transform or inverse bind matrix is not finite.
    #[error("skeleton {skeleton:?}: bone {bone} ({name:?}) has a non-finite bind transform")]
    NonFiniteBind {
        /// Skeleton name.
        skeleton: String,
        /// Bone index.
        bone: usize,
        /// Bone name.
        name: String,
    },
}

/// The first fault that makes `skeleton` unusable, or `None`.
pub fn find_skeleton_fault(skeleton: &Skeleton) -> Option<SkeletonFault> {
    let s = &skeleton.name;
    let n = skeleton.bone_names.len();
    if skeleton.parents.len() != n || skeleton.bind_pose.len() != n || skeleton.inverse_bind.len() != n {
        return Some(SkeletonFault::NotParallel {
            skeleton: s.clone(),
            names: n,
            parents: skeleton.parents.len(),
            bind: skeleton.bind_pose.len(),
            inverse_bind: skeleton.inverse_bind.len(),
        });
    }
    if n > MAX_BONES {
        return Some(SkeletonFault::TooManyBones { skeleton: s.clone(), count: n, max: MAX_BONES });
    }
    for (i, &p) in skeleton.parents.iter().enumerate() {
        if p != NO_PARENT && p as usize >= i {
            return Some(SkeletonFault::ParentNotBefore {
                skeleton: s.clone(),
                bone: i,
                name: skeleton.bone_names[i].clone(),
                parent: p,
            });
        }
        if !skeleton.bind_pose[i].is_finite() || !skeleton.inverse_bind[i].is_finite() {
            return Some(SkeletonFault::NonFiniteBind {
                skeleton: s.clone(),
                bone: i,
                name: skeleton.bone_names[i].clone(),
            });
        }
    }
    let mut sorted: Vec<(&str, usize)> =
        skeleton.bone_names.iter().enumerate().map(|(i, n)| (n.as_str(), i)).collect();
    sorted.sort();
    for w in sorted.windows(2) {
        if w[0].0 == w[1].0 {
            return Some(SkeletonFault::DuplicateName {
                skeleton: s.clone(),
                name: w[0].0.to_owned(),
                first: w[0].1,
                second: w[1].1,
            });
        }
    }
    None
}

impl Skeleton {
    /// A skeleton with no bones (what a graph that plays no clip is checked against).
    pub fn empty(name: &str) -> Skeleton {
        Skeleton {
            name: name.to_owned(),
            bone_names: Vec::new(),
            parents: Vec::new(),
            bind_pose: Vec::new(),
            inverse_bind: Vec::new(),
        }
    }

    /// Builds a skeleton whose inverse bind matrices are computed from the bind pose, and checks it.
    pub fn from_bind_pose(
        name: impl Into<String>,
        bones: Vec<(String, u16, Transform)>,
    ) -> Result<Self, SkeletonFault> {
        let mut sk = Skeleton {
            name: name.into(),
            bone_names: Vec::with_capacity(bones.len()),
            parents: Vec::with_capacity(bones.len()),
            bind_pose: Vec::with_capacity(bones.len()),
            inverse_bind: Vec::new(),
        };
        for (n, p, t) in bones {
            sk.bone_names.push(n);
            sk.parents.push(p);
            sk.bind_pose.push(t);
        }
        // Compose with a checked loop: the parent check must come before indexing.
        sk.inverse_bind = vec![Mat4::IDENTITY; sk.bone_names.len()];
        if let Some(f) = find_skeleton_fault(&sk) {
            return Err(f);
        }
        let mut model = vec![Mat4::IDENTITY; sk.bone_count()];
        for i in 0..sk.bone_count() {
            let local = sk.bind_pose[i].to_mat4();
            let p = sk.parents[i];
            model[i] = if p == NO_PARENT { local } else { model[p as usize] * local };
            sk.inverse_bind[i] = model[i].inverse();
        }
        match find_skeleton_fault(&sk) {
            Some(f) => Err(f),
            None => Ok(sk),
        }
    }

    /// Whether `other` is the same rig: the same skeleton name and bone names in the same order
    /// (what a skinned mesh, a particle cloud or a crowd needs of the rig that drives it).
    pub fn same_rig(&self, other: &Skeleton) -> bool {
        std::ptr::eq(self, other) || (self.name == other.name && self.bone_names == other.bone_names)
    }

    /// Number of bones.
    #[inline]
    pub fn bone_count(&self) -> usize {
        self.parents.len()
    }

    /// Index of the bone named `name`.
    ///
    /// This is a linear scan over the names: resolve names once (when a clip, socket or graph is
    /// bound) and keep the index; it is **not** a per-frame call.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.bone_names.iter().position(|n| n == name)
    }

    /// The parent of bone `i`, if it has one.
    #[inline]
    pub fn parent(&self, i: usize) -> Option<usize> {
        match self.parents.get(i) {
            Some(&p) if p != NO_PARENT => Some(p as usize),
            _ => None,
        }
    }

    /// True when bone `descendant` is `ancestor` or lies below it.
    pub fn is_in_subtree(&self, ancestor: usize, descendant: usize) -> bool {
        let mut b = Some(descendant);
        while let Some(i) = b {
            if i == ancestor {
                return true;
            }
            b = self.parent(i);
        }
        false
    }

    /// Depth of `descendant` below `ancestor` (0 for the bone itself), or `None` outside the subtree.
    pub fn depth_below(&self, ancestor: usize, descendant: usize) -> Option<usize> {
        let mut b = Some(descendant);
        let mut depth = 0;
        while let Some(i) = b {
            if i == ancestor {
                return Some(depth);
            }
            depth += 1;
            b = self.parent(i);
        }
        None
    }
}

/// Bones in tree order, as an outliner lists them: each bone followed by its subtree, children
/// and roots in index order, with each one's depth (a root's 0). `parents[i]` is bone `i`'s
/// parent, [`NO_PARENT`] for a root. Index order alone is a tree's order only when the bones
/// were numbered depth first; a rig numbered level by level (as FBX files bring them), listed
/// in index order and indented by depth, shows knees under the chest.
///
/// Takes any list: a parent out of range or naming the bone itself counts as a root, and bones
/// on a cycle (never reached from a root) follow, each cycle from its lowest index at depth 0.
/// Every index appears once.
pub fn tree_order(parents: &[u16]) -> Vec<(usize, usize)> {
    let n = parents.len();
    let parent = |i: usize| Some(parents[i] as usize).filter(|&p| parents[i] != NO_PARENT && p < n && p != i);
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    for i in 0..n {
        if let Some(p) = parent(i) {
            children[p].push(i);
        }
    }
    let mut out = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    let mut stack: Vec<(usize, usize)> = Vec::new();
    let starts: Vec<usize> = (0..n).filter(|&i| parent(i).is_none()).chain(0..n).collect();
    for start in starts {
        if seen[start] {
            continue;
        }
        stack.push((start, 0));
        while let Some((b, depth)) = stack.pop() {
            if std::mem::replace(&mut seen[b], true) {
                continue;
            }
            out.push((b, depth));
            stack.extend(children[b].iter().rev().filter(|c| !seen[**c]).map(|&c| (c, depth + 1)));
        }
    }
    out
}

#[cfg(test)]
mod tree_order_tests {
    use super::{NO_PARENT as R, tree_order};

    #[test]
    fn bones_come_in_tree_order_with_their_depths_whatever_their_numbering() {
        type Case = (&'static str, &'static [u16], &'static [(usize, usize)]);
        let cases: [Case; 6] = [
            ("empty", &[], &[]),
            ("numbered depth first", &[R, 0, 1, 0], &[(0, 0), (1, 1), (2, 2), (3, 1)]),
            // hips; two thighs; two knees: level by level, as FBX and BVH rigs come.
            ("numbered level by level", &[R, 0, 0, 1, 2], &[(0, 0), (1, 1), (3, 2), (2, 1), (4, 2)]),
            ("two roots", &[R, R, 0, 1], &[(0, 0), (2, 1), (1, 0), (3, 1)]),
            ("a parent out of range or the bone itself: a root", &[5, 0, 2], &[(0, 0), (1, 1), (2, 0)]),
            (
                "a cycle after the tree, from its lowest index",
                &[R, 2, 1, 2],
                &[(0, 0), (1, 0), (2, 1), (3, 2)],
            ),
        ];
        for (what, parents, want) in cases {
            assert_eq!(tree_order(parents), want, "{what}");
        }
    }
}
