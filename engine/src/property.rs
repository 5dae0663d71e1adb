//! Property animation: translation/rotation/scale tracks on an entity (a prop, a door, a camera),
//! for things that are not bones. glTF node animations of non-joint nodes play through here.
//!
//! [`PropertyAnimation`] is authored (tracks, looping, `length` hold, `play_on_start`);
//! [`PropertyPlayer`] is session state (`playing`, `time`, the `started` latch) and is never saved.
//! The duration is derived on read, as for clips.

use glam::{Quat, Vec3};

use crate::math::Transform;
use crate::playback::{PlaybackStep, advance_head};
use crate::track::Track;

/// Authored tracks on an entity's transform.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PropertyAnimation {
    /// Translation track.
    pub translation: Option<Track<Vec3>>,
    /// Rotation track.
    pub rotation: Option<Track<Quat>>,
    /// Scale track.
    pub scale: Option<Track<Vec3>>,
    /// Wrap at the end.
    pub looping: bool,
    /// Holds the animation open past its last key.
    pub length: f32,
    /// Start playing on the first step with non-zero simulation time.
    pub play_on_start: bool,
}

impl PropertyAnimation {
    /// Derived: the later of the last key and `length`.
    pub fn duration(&self) -> f32 {
        [
            self.translation.as_ref().and_then(|t| t.last_time()),
            self.rotation.as_ref().and_then(|t| t.last_time()),
            self.scale.as_ref().and_then(|t| t.last_time()),
        ]
        .into_iter()
        .flatten()
        .fold(self.length.max(0.0), f32::max)
    }

    /// The entity's transform at `time`; channels without a track keep `base`'s part.
    pub fn sample(&self, time: f32, base: Transform) -> Transform {
        Transform {
            translation: self.translation.as_ref().and_then(|t| t.sample(time)).unwrap_or(base.translation),
            rotation: self.rotation.as_ref().and_then(|t| t.sample(time)).unwrap_or(base.rotation),
            scale: self.scale.as_ref().and_then(|t| t.sample(time)).unwrap_or(base.scale),
        }
    }
}

/// Session playback state of a [`PropertyAnimation`]; never saved.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PropertyPlayer {
    /// Whether time advances.
    pub playing: bool,
    /// Playhead, seconds.
    pub time: f32,
    started: bool,
}

impl PropertyPlayer {
    /// Whether the first simulation step has happened.
    pub fn started(&self) -> bool {
        self.started
    }

    /// Advances by `dt` simulation seconds at `speed`; the first step with `dt > 0` turns
    /// `play_on_start` into `playing`, once.
    pub fn advance(&mut self, anim: &PropertyAnimation, dt: f32, speed: f32) -> PlaybackStep {
        let sim = dt > 0.0 && dt.is_finite();
        if sim && !self.started {
            self.started = true;
            self.playing |= anim.play_on_start;
        }
        if !self.playing || !sim {
            return PlaybackStep::still(self.time);
        }
        let (step, ended) = advance_head(self.time, dt * speed, anim.duration(), anim.looping);
        self.time = step.to;
        if ended {
            self.playing = false;
        }
        step
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::track::Interpolation;

    #[test]
    fn play_on_start_latches_on_first_sim_step_and_length_holds() {
        let anim = PropertyAnimation {
            translation: Some(
                Track::from_keys(Interpolation::Linear, vec![0.0, 1.0], vec![Vec3::ZERO, Vec3::X]).unwrap(),
            ),
            length: 2.0,
            play_on_start: true,
            ..Default::default()
        };
        assert_eq!(anim.duration(), 2.0);
        let mut p = PropertyPlayer::default();
        p.advance(&anim, 0.0, 1.0);
        assert!(!p.playing && !p.started());
        p.advance(&anim, 0.5, 1.0);
        assert!(p.playing && p.started());
        assert_eq!(anim.sample(p.time, Transform::IDENTITY).translation, Vec3::new(0.5, 0.0, 0.0));
        p.advance(&anim, 2.0, 1.0);
        assert_eq!(p.time, 2.0);
        assert!(!p.playing);
        assert_eq!(anim.sample(p.time, Transform::IDENTITY).translation, Vec3::X);
    }
}
