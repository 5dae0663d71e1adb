//! The tracks that drive one bone ([`BoneChannels`]): the channel type a clip is a table of and
//! its compiled form is built from. It sits below both [`crate::clip`] (which re-exports it as
//! `clip::BoneChannels`) and [`crate::compiled_clip`], so neither imports the other's data.

use glam::{Quat, Vec3};

use crate::track::Track;

/// The tracks that drive one bone. A missing channel leaves that part of the bone at its bind pose.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BoneChannels {
    /// Translation track.
    pub translation: Option<Track<Vec3>>,
    /// Rotation track.
    pub rotation: Option<Track<Quat>>,
    /// Scale track.
    pub scale: Option<Track<Vec3>>,
}

impl BoneChannels {
    /// The time of the last key over the three channels.
    pub fn last_key_time(&self) -> Option<f32> {
        [
            self.translation.as_ref().and_then(|t| t.last_time()),
            self.rotation.as_ref().and_then(|t| t.last_time()),
            self.scale.as_ref().and_then(|t| t.last_time()),
        ]
        .into_iter()
        .flatten()
        .reduce(f32::max)
    }

    /// True when no channel is present.
    pub fn is_empty(&self) -> bool {
        self.translation.is_none() && self.rotation.is_none() && self.scale.is_none()
    }
}
