//! The orbit camera: a target point, yaw and pitch around it and a distance. Orbit, pan, zoom
//! and framing a box are pure functions of this state; [`OrbitCamera::camera`] gives the
//! engine's camera. UI state only: never saved in a project.

use glam::{Mat4, Vec2, Vec3};
use marrow_engine::render::Camera;
use marrow_engine::skinning::Aabb;

/// A camera orbiting a target.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OrbitCamera {
    /// The point looked at.
    pub target: Vec3,
    /// Rotation about +Y, radians (0 looks down -Z from +Z).
    pub yaw: f32,
    /// Elevation, radians (positive looks down).
    pub pitch: f32,
    /// Distance from the target.
    pub distance: f32,
    /// Vertical field of view, radians.
    pub fov_y: f32,
}

impl Default for OrbitCamera {
    fn default() -> Self {
        Self { target: Vec3::new(0.0, 0.8, 0.0), yaw: 0.45, pitch: 0.3, distance: 4.0, fov_y: 0.8 }
    }
}

impl OrbitCamera {
    /// The eye position.
    pub fn eye(&self) -> Vec3 {
        let (sy, cy) = self.yaw.sin_cos();
        let (sp, cp) = self.pitch.sin_cos();
        self.target + Vec3::new(sy * cp, sp, cy * cp) * self.distance
    }

    /// The engine camera (near/far follow the distance).
    pub fn camera(&self) -> Camera {
        let d = self.distance.max(1e-3);
        Camera {
            eye: self.eye(),
            target: self.target,
            up: Vec3::Y,
            fov_y: self.fov_y,
            near: (d * 0.01).max(1e-3),
            far: d * 100.0 + 100.0,
        }
    }

    /// `clip_from_world` at `aspect` (width / height).
    pub fn clip_from_world(&self, aspect: f32) -> Mat4 {
        self.camera().clip_from_world(aspect)
    }

    /// Orbits by a pointer delta in points.
    pub fn orbit(&mut self, delta: Vec2) {
        self.yaw -= delta.x * 0.008;
        self.pitch = (self.pitch + delta.y * 0.008).clamp(-1.55, 1.55);
    }

    /// Pans by a pointer delta in points, in a viewport `height` points tall (the target moves
    /// with the pointer).
    pub fn pan(&mut self, delta: Vec2, height: f32) {
        let eye = self.eye();
        let forward = (self.target - eye).normalize_or_zero();
        let right = forward.cross(Vec3::Y).normalize_or(Vec3::X);
        let up = right.cross(forward);
        let world_per_point = 2.0 * self.distance * (self.fov_y * 0.5).tan() / height.max(1.0);
        self.target += (-right * delta.x + up * delta.y) * world_per_point;
    }

    /// Zooms by `steps` (positive moves closer), multiplicatively.
    pub fn zoom(&mut self, steps: f32) {
        self.distance = (self.distance * (-steps * 0.1).exp()).clamp(1e-3, 1e5);
    }

    /// The share of the view's smaller half-extent a framed box may fill (the rest is margin).
    pub const FRAME_FILL: f32 = 0.9;

    /// Frames `bounds` from the current direction: the target (the orbit pivot) moves to the
    /// box's centre and the distance is the smallest at which every corner of the box lies
    /// inside [`Self::FRAME_FILL`] of the view at `aspect`, so a tall character fills most of
    /// the view's height rather than the circle around it.
    pub fn frame(&mut self, bounds: Aabb, aspect: f32) {
        let center = (bounds.min + bounds.max) * 0.5;
        // A point or a flat box still gets some room.
        let half = ((bounds.max - bounds.min) * 0.5).max(Vec3::splat(0.025));
        self.target = center;
        let (sy, cy) = self.yaw.sin_cos();
        let (sp, cp) = self.pitch.sin_cos();
        // From the eye towards the target, and the view's right and up.
        let forward = -Vec3::new(sy * cp, sp, cy * cp);
        let right = forward.cross(Vec3::Y).normalize_or(Vec3::X);
        let up = right.cross(forward);
        let tan_v = (self.fov_y * 0.5).tan() * Self::FRAME_FILL;
        let tan_h = (self.fov_y * 0.5).tan() * aspect.max(1e-3) * Self::FRAME_FILL;
        let mut distance: f32 = 0.0;
        for i in 0..8 {
            let sign = |bit: usize| if i & bit == 0 { -1.0 } else { 1.0 };
            let r = Vec3::new(half.x * sign(1), half.y * sign(2), half.z * sign(4));
            // A corner at depth `distance + r·forward` from the eye is inside when its offsets
            // across the view are within the view's half-extents at that depth.
            let along = r.dot(forward);
            distance = distance.max(r.dot(right).abs() / tan_h - along).max(r.dot(up).abs() / tan_v - along);
        }
        // The eye stays outside the box.
        self.distance = distance.max(half.length() * 1.05).clamp(1e-3, 1e5);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framing_puts_the_box_in_view() {
        let mut c = OrbitCamera::default();
        let b = Aabb { min: Vec3::new(9.0, 0.0, -1.0), max: Vec3::new(11.0, 2.0, 1.0) };
        c.frame(b, 1.5);
        assert_eq!(c.target, Vec3::new(10.0, 1.0, 0.0));
        let m = c.clip_from_world(1.5);
        for corner in [b.min, b.max, Vec3::new(9.0, 2.0, 1.0)] {
            let p = m * corner.extend(1.0);
            assert!((p.x / p.w).abs() <= 1.0 && (p.y / p.w).abs() <= 1.0, "{corner} in view");
        }
    }

    #[test]
    fn a_tall_box_fills_most_of_the_views_height() {
        let mut c = OrbitCamera::default();
        // A standing character: 0.5 wide, 1.8 tall, 0.3 deep.
        let b = Aabb { min: Vec3::new(-0.25, 0.0, -0.15), max: Vec3::new(0.25, 1.8, 0.15) };
        c.frame(b, 1.6);
        let m = c.clip_from_world(1.6);
        let (mut lo, mut hi) = (f32::MAX, f32::MIN);
        for i in 0..8 {
            let p = Vec3::new(
                if i & 1 == 0 { b.min.x } else { b.max.x },
                if i & 2 == 0 { b.min.y } else { b.max.y },
                if i & 4 == 0 { b.min.z } else { b.max.z },
            );
            let q = m * p.extend(1.0);
            let (x, y) = (q.x / q.w, q.y / q.w);
            assert!(x.abs() <= 0.91 && y.abs() <= 0.91, "corner {p} at ({x}, {y}) inside the margin");
            lo = lo.min(y);
            hi = hi.max(y);
        }
        assert!((hi - lo) / 2.0 > 0.85, "the box spans {} of the view's height", (hi - lo) / 2.0);
        assert_eq!(c.target, Vec3::new(0.0, 0.9, 0.0), "the pivot is the box's centre");
    }

    #[test]
    fn orbit_keeps_the_distance_and_pitch_is_clamped() {
        let mut c = OrbitCamera::default();
        let d = (c.eye() - c.target).length();
        c.orbit(Vec2::new(100.0, 1e6));
        assert!(((c.eye() - c.target).length() - d).abs() < 1e-4);
        assert!(c.pitch <= 1.55);
    }
}
