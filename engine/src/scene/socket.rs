//! Bone sockets: an entity held on a named bone of its parent rig.
//!
//! A [`BoneSocket`] names its bone (never an index) and carries an `offset` in the bone's frame.
//! Each frame, in the transform stage, the socket's local transform (relative to the rig entity,
//! its parent) becomes `global[bone] * offset` decomposed back to TRS with
//! [`crate::math::decompose`]: exact for translations, rotations and uniform scale; a mirrored
//! basis comes back as a negative scale on one axis; shear is dropped; an axis scaled to zero
//! gets its rotation from the surviving axes. Never NaN.
//!
//! The bone lookup is memoised against the rig (entity and skeleton `Arc`) and the name, failures
//! included; it is redone as soon as either changes. Faults are named by [`SocketFault`].
//!
//! Not here: the frame order and the fault latches (see [`crate::scene`]).

use std::sync::Arc;

use glam::Mat4;

use super::Entity;
use crate::math::{Transform, decompose};
use crate::skeleton::Skeleton;

/// An entity held on a rig's bone. Authored: `bone` and `offset`. The resolution cache is
/// derived and never saved.
#[derive(Clone, Debug, Default)]
pub struct BoneSocket {
    /// The bone's name in the parent rig's skeleton (empty on a new socket: a fault until set).
    pub bone: String,
    /// Transform in the bone's frame.
    pub offset: Transform,
    pub(super) cache: Option<Resolution>,
    pub(super) latches: [super::FaultLatch; SocketFault::COUNT],
}

impl PartialEq for BoneSocket {
    fn eq(&self, other: &Self) -> bool {
        self.bone == other.bone && self.offset == other.offset
    }
}

/// A memoised bone lookup.
#[derive(Clone, Debug)]
pub(super) struct Resolution {
    pub(super) rig: Entity,
    pub(super) skeleton: Arc<Skeleton>,
    pub(super) name: String,
    pub(super) bone: Option<u16>,
}

impl BoneSocket {
    /// A socket on `bone` with `offset`.
    pub fn new(bone: impl Into<String>, offset: Transform) -> Self {
        Self { bone: bone.into(), offset, ..Self::default() }
    }

    /// The bone index the last resolution found (derived; `None` before one or on failure).
    pub fn resolved_bone(&self) -> Option<usize> {
        self.cache.as_ref().and_then(|c| c.bone).map(usize::from)
    }

    /// Resolves the bone against `rig`/`skeleton`, reusing the memo when neither the rig nor the
    /// name changed. Returns the index and whether a lookup was made.
    pub(super) fn resolve(&mut self, rig: Entity, skeleton: &Arc<Skeleton>) -> (Option<u16>, bool) {
        if let Some(c) = &self.cache
            && c.rig == rig
            && Arc::ptr_eq(&c.skeleton, skeleton)
            && c.name == self.bone
        {
            return (c.bone, false);
        }
        let bone = if self.bone.is_empty() { None } else { skeleton.index_of(&self.bone).map(|i| i as u16) };
        self.cache = Some(Resolution { rig, skeleton: skeleton.clone(), name: self.bone.clone(), bone });
        (bone, true)
    }
}

/// Why a socket could not be placed this frame. Each kind has its own latch on each socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SocketFault {
    /// The rig has published no pose for this world (not evaluated yet since it was loaded).
    NoPose,
    /// The socket entity has no Transform component to write.
    NoTransform,
    /// The socket's parent is not an entity with an Animator.
    NotRigChild,
    /// The rig's evaluation failed this frame.
    RigPosedNothing,
    /// The rig's skeleton has no bones.
    NoBones,
    /// No bone of the socket's name (including the empty name).
    UnknownBone,
}

impl SocketFault {
    /// The number of kinds.
    pub const COUNT: usize = 6;

    /// Every kind, in latch order.
    pub const ALL: [SocketFault; Self::COUNT] = [
        SocketFault::NoPose,
        SocketFault::NoTransform,
        SocketFault::NotRigChild,
        SocketFault::RigPosedNothing,
        SocketFault::NoBones,
        SocketFault::UnknownBone,
    ];

    /// What the fault means, for log lines.
    pub fn describe(self) -> &'static str {
        match self {
            SocketFault::NoPose => "its rig has published no pose",
            SocketFault::NoTransform => "it has no Transform",
            SocketFault::NotRigChild => "it is not a direct child of a rig (an entity with an Animator)",
            SocketFault::RigPosedNothing => "its rig posed nothing (evaluation failed)",
            SocketFault::NoBones => "its rig has no bones",
            SocketFault::UnknownBone => "its rig has no bone of that name",
        }
    }
}

/// A socket's local transform: `global_bone * offset`, decomposed to TRS (never NaN).
pub fn socket_local(global_bone: &Mat4, offset: &Transform) -> Transform {
    let (scale, rotation, translation) = decompose(&(*global_bone * offset.to_mat4()));
    Transform { translation, rotation, scale }
}
