//! Cameras and visibility: a perspective [`Camera`] (`clip_from_world` with wgpu's 0..1 depth),
//! framing on a box, the [`Frustum`] test used for culling, and the directional light's
//! orthographic `light_clip_from_world` fitted to the shadow casters' bounds.
//!
//! It does not own GPU state.

use glam::camera::rh::proj::directx;
use glam::camera::rh::view::look_at_mat4;
use glam::{Mat4, Vec3, Vec4};

use crate::skinning::Aabb;

/// A perspective camera.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Camera {
    /// Eye position (world).
    pub eye: Vec3,
    /// Point looked at (world).
    pub target: Vec3,
    /// Up direction.
    pub up: Vec3,
    /// Vertical field of view, radians.
    pub fov_y: f32,
    /// Near plane distance.
    pub near: f32,
    /// Far plane distance.
    pub far: f32,
}

impl Default for Camera {
    fn default() -> Self {
        Self {
            eye: Vec3::new(0.0, 1.0, 4.0),
            target: Vec3::ZERO,
            up: Vec3::Y,
            fov_y: 0.8,
            near: 0.05,
            far: 100.0,
        }
    }
}

impl Camera {
    /// A three-quarter front view (from +Z, slightly right and above, Y up) that fits `bounds`
    /// in view at aspect ratio `aspect` (width / height).
    pub fn framing(bounds: Aabb, aspect: f32) -> Self {
        let center = (bounds.min + bounds.max) * 0.5;
        let radius = ((bounds.max - bounds.min).length() * 0.5).max(1e-3);
        let fov_y: f32 = 0.7;
        let half = (fov_y * 0.5).tan().min((fov_y * 0.5).tan() * aspect.max(1e-3));
        let dir = Vec3::new(0.45, 0.3, 1.0).normalize();
        let at = |distance: f32| Self {
            eye: center + dir * distance,
            target: center,
            up: Vec3::Y,
            fov_y,
            near: (distance - radius).max(distance * 0.02) * 0.8,
            far: distance + radius * 4.0,
        };
        // The bounding sphere always fits; move in while the box's eight corners stay within
        // 90% of the view.
        let fits = |cam: &Self| {
            let m = cam.clip_from_world(aspect);
            (0..8).all(|i| {
                let c = Vec3::new(
                    if i & 1 == 0 { bounds.min.x } else { bounds.max.x },
                    if i & 2 == 0 { bounds.min.y } else { bounds.max.y },
                    if i & 4 == 0 { bounds.min.z } else { bounds.max.z },
                );
                let p = m * c.extend(1.0);
                p.w > 0.0 && (p.x / p.w).abs() <= 0.9 && (p.y / p.w).abs() <= 0.9 && p.z >= 0.0
            })
        };
        let (mut lo, mut hi) = (radius * 0.5, radius / half.atan().sin() * 1.12);
        for _ in 0..20 {
            let mid = (lo + hi) * 0.5;
            if fits(&at(mid)) { hi = mid } else { lo = mid }
        }
        at(hi)
    }

    /// `view_from_world`.
    pub fn view_from_world(&self) -> Mat4 {
        look_at_mat4(self.eye, self.target, self.up)
    }

    /// `clip_from_world` for an aspect ratio (width / height).
    pub fn clip_from_world(&self, aspect: f32) -> Mat4 {
        directx::perspective(self.fov_y, aspect.max(1e-6), self.near, self.far) * self.view_from_world()
    }
}

/// The six planes of a `clip_from_world` matrix (wgpu depth 0..1), pointing inwards.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frustum {
    planes: [Vec4; 6],
}

impl Frustum {
    /// The frustum of `clip_from_world`.
    pub fn new(clip_from_world: &Mat4) -> Self {
        let m = clip_from_world.transpose();
        let (r0, r1, r2, r3) = (m.x_axis, m.y_axis, m.z_axis, m.w_axis);
        let planes = [r3 + r0, r3 - r0, r3 + r1, r3 - r1, r2, r3 - r2];
        Self { planes }
    }

    /// Whether any part of `b` may be inside (conservative).
    pub fn intersects(&self, b: &Aabb) -> bool {
        self.planes.iter().all(|p| {
            let n = p.truncate();
            let v = Vec3::select(n.cmpge(Vec3::ZERO), b.max, b.min);
            n.dot(v) + p.w >= 0.0
        })
    }
}

/// The directional light's `light_clip_from_world`: an orthographic box along `direction`
/// (the way the light travels) around `casters`, so no caster's shadow is clipped.
pub fn light_clip_from_world(direction: Vec3, casters: Aabb) -> Mat4 {
    let dir = direction.try_normalize().unwrap_or(Vec3::NEG_Y);
    let center = (casters.min + casters.max) * 0.5;
    let radius = ((casters.max - casters.min).length() * 0.5).max(1e-3) * 1.05;
    let up = if dir.abs().dot(Vec3::Y) > 0.99 { Vec3::Z } else { Vec3::Y };
    let view = look_at_mat4(center - dir * radius * 2.0, center, up);
    directx::orthographic(-radius, radius, -radius, radius, radius * 0.5, radius * 3.5) * view
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frustum_keeps_framed_box_and_drops_box_behind() {
        let b = Aabb { min: Vec3::new(-0.5, 0.0, -0.5), max: Vec3::new(0.5, 2.0, 0.5) };
        let cam = Camera::framing(b, 1.0);
        let f = Frustum::new(&cam.clip_from_world(1.0));
        assert!(f.intersects(&b));
        let behind =
            Aabb { min: cam.eye + (cam.eye - cam.target), max: cam.eye + (cam.eye - cam.target) * 1.1 };
        assert!(!f.intersects(&behind));
        let corner = cam.clip_from_world(1.0).project_point3(b.max);
        assert!(corner.abs().max_element() <= 1.0, "the framed box is inside the view: {corner}");
    }

    #[test]
    fn light_box_holds_every_caster_corner() {
        let b = Aabb { min: Vec3::new(-3.0, 0.0, 1.0), max: Vec3::new(2.0, 1.5, 4.0) };
        for dir in [Vec3::new(-0.45, -1.0, -0.55), Vec3::NEG_Y, Vec3::new(1.0, -0.2, 0.0)] {
            let m = light_clip_from_world(dir, b);
            for i in 0..8 {
                let c = Vec3::new(
                    if i & 1 == 0 { b.min.x } else { b.max.x },
                    if i & 2 == 0 { b.min.y } else { b.max.y },
                    if i & 4 == 0 { b.min.z } else { b.max.z },
                );
                let p = m.project_point3(c);
                assert!(
                    p.x.abs() <= 1.0 && p.y.abs() <= 1.0 && (0.0..=1.0).contains(&p.z),
                    "{dir} {c} -> {p}"
                );
            }
        }
    }
}
