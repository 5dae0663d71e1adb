//! The transform gizmo, drawn with egui's painter through the viewport camera (no gizmo crate
//! fits the toolchain): translate arrows, rotate rings, scale handles. Hit testing is in
//! screen space; a drag turns the cursor into a new local transform of the edited thing (an
//! entity's transform in its parent's frame, or a socket's offset in its bone's frame).
//!
//! Not here: which entity is edited or how the result becomes an edit (`crate::panels::viewport`).

use egui::{Color32, Painter, Pos2, Rect, Stroke};
use glam::{Mat4, Quat, Vec2, Vec3};
use marrow_engine::math::{Transform, rotation_of};

/// What the gizmo does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GizmoMode {
    /// Arrows along the axes.
    #[default]
    Translate,
    /// Rings around the axes.
    Rotate,
    /// Handles along the object's axes.
    Scale,
}

impl GizmoMode {
    /// The mode's name.
    pub fn name(self) -> &'static str {
        match self {
            GizmoMode::Translate => "Move",
            GizmoMode::Rotate => "Rotate",
            GizmoMode::Scale => "Scale",
        }
    }
}

/// Axis colours (X red, Y green, Z blue).
pub const AXIS_COLORS: [Color32; 3] =
    [Color32::from_rgb(230, 70, 70), Color32::from_rgb(110, 200, 80), Color32::from_rgb(80, 130, 240)];

/// How the viewport maps the world to the screen.
#[derive(Clone, Copy, Debug)]
pub struct View {
    /// The camera's `clip_from_world`.
    pub clip_from_world: Mat4,
    /// The viewport rectangle on screen (points).
    pub rect: Rect,
}

impl View {
    /// A world point on screen (`None` behind the camera).
    pub fn project(&self, p: Vec3) -> Option<Pos2> {
        let c = self.clip_from_world * p.extend(1.0);
        if c.w <= 1e-6 {
            return None;
        }
        let n = c.truncate() / c.w;
        Some(Pos2::new(
            self.rect.left() + (n.x * 0.5 + 0.5) * self.rect.width(),
            self.rect.top() + (0.5 - n.y * 0.5) * self.rect.height(),
        ))
    }

    /// The world ray under a screen point: (origin on the near plane, unit direction).
    pub fn ray(&self, at: Pos2) -> (Vec3, Vec3) {
        let x = (at.x - self.rect.left()) / self.rect.width().max(1.0) * 2.0 - 1.0;
        let y = 1.0 - (at.y - self.rect.top()) / self.rect.height().max(1.0) * 2.0;
        let inv = self.clip_from_world.inverse();
        let near = inv.project_point3(Vec3::new(x, y, 0.0));
        let far = inv.project_point3(Vec3::new(x, y, 1.0));
        (near, (far - near).normalize_or(Vec3::NEG_Z))
    }
}

/// A part of the gizmo.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handle {
    /// Translate along axis `i`.
    Move(usize),
    /// Rotate about axis `i`.
    Turn(usize),
    /// Scale along axis `i`.
    Stretch(usize),
}

/// The gizmo placed on an object.
#[derive(Clone, Copy, Debug)]
pub struct Gizmo {
    /// The mode.
    pub mode: GizmoMode,
    /// The edited thing's world matrix.
    pub world: Mat4,
    /// Its parent frame: `world = parent * local`.
    pub parent: Mat4,
    /// Its local transform.
    pub local: Transform,
    /// Length of an arrow in world units.
    pub size: f32,
}

/// A drag in progress.
#[derive(Clone, Copy, Debug)]
pub struct Drag {
    /// The handle held.
    pub handle: Handle,
    /// The gizmo when the drag started.
    pub start: Gizmo,
    /// The cursor when the drag started.
    pub cursor: Pos2,
    /// The axis parameter (translate/scale) at the start.
    pub param: f32,
}

fn origin(m: &Mat4) -> Vec3 {
    m.w_axis.truncate()
}

/// The parameter along the line `(p, dir)` closest to the ray `(o, d)`.
fn closest_param(p: Vec3, dir: Vec3, o: Vec3, d: Vec3) -> Option<f32> {
    let w = p - o;
    let (a, b, c) = (dir.dot(dir), dir.dot(d), d.dot(d));
    let (dd, e) = (dir.dot(w), d.dot(w));
    let den = a * c - b * b;
    if den.abs() < 1e-9 {
        return None;
    }
    Some((b * e - c * dd) / den)
}

fn dist_to_segment(p: Pos2, a: Pos2, b: Pos2) -> f32 {
    let ab = b - a;
    let t = ((p - a).dot(ab) / ab.length_sq().max(1e-6)).clamp(0.0, 1.0);
    (a + ab * t).distance(p)
}

impl Gizmo {
    /// The three axes the gizmo shows: world axes for moving and turning, the object's own
    /// (normalized) axes for scaling.
    pub fn axes(&self) -> [Vec3; 3] {
        match self.mode {
            GizmoMode::Scale => [self.world.x_axis, self.world.y_axis, self.world.z_axis]
                .map(|a| a.truncate().normalize_or(Vec3::X)),
            _ => [Vec3::X, Vec3::Y, Vec3::Z],
        }
    }

    fn ring(&self, view: &View, i: usize) -> Vec<Pos2> {
        let axis = self.axes()[i];
        let (u, v) = axis.any_orthonormal_pair();
        let o = origin(&self.world);
        (0..=48)
            .filter_map(|k| {
                let a = k as f32 / 48.0 * std::f32::consts::TAU;
                view.project(o + (u * a.cos() + v * a.sin()) * self.size * 0.8)
            })
            .collect()
    }

    /// A point on a handle: along an arrow at `param` of its length, or on a ring at angle
    /// `param` (radians, from the axis's first orthonormal direction). Tools and tests drive
    /// the gizmo through it.
    pub fn handle_point(&self, view: &View, handle: Handle, param: f32) -> Option<Pos2> {
        let o = origin(&self.world);
        match handle {
            Handle::Move(i) | Handle::Stretch(i) => view.project(o + self.axes()[i] * self.size * param),
            Handle::Turn(i) => {
                let (u, v) = self.axes()[i].any_orthonormal_pair();
                view.project(o + (u * param.cos() + v * param.sin()) * self.size * 0.8)
            }
        }
    }

    /// The handle under `cursor` (within 8 points), if any.
    pub fn hit(&self, view: &View, cursor: Pos2) -> Option<Handle> {
        let o = origin(&self.world);
        let center = view.project(o)?;
        let mut best: Option<(f32, Handle)> = None;
        let mut consider = |d: f32, h: Handle| {
            if d <= 8.0 && best.is_none_or(|(bd, _)| d < bd) {
                best = Some((d, h));
            }
        };
        for (i, axis) in self.axes().into_iter().enumerate() {
            match self.mode {
                GizmoMode::Translate | GizmoMode::Scale => {
                    let Some(tip) = view.project(o + axis * self.size) else { continue };
                    let h =
                        if self.mode == GizmoMode::Translate { Handle::Move(i) } else { Handle::Stretch(i) };
                    consider(dist_to_segment(cursor, center, tip), h);
                }
                GizmoMode::Rotate => {
                    let ring = self.ring(view, i);
                    let d =
                        ring.windows(2).map(|w| dist_to_segment(cursor, w[0], w[1])).fold(f32::MAX, f32::min);
                    consider(d, Handle::Turn(i));
                }
            }
        }
        best.map(|(_, h)| h)
    }

    /// Starts dragging `handle` at `cursor`.
    pub fn begin(&self, view: &View, handle: Handle, cursor: Pos2) -> Drag {
        let param = match handle {
            Handle::Move(i) | Handle::Stretch(i) => {
                let (ro, rd) = view.ray(cursor);
                closest_param(origin(&self.world), self.axes()[i], ro, rd).unwrap_or(0.0)
            }
            Handle::Turn(_) => 0.0,
        };
        Drag { handle, start: *self, cursor, param }
    }

    /// Paints the gizmo; `hot` is highlighted.
    pub fn paint(&self, painter: &Painter, view: &View, hot: Option<Handle>) {
        let o = origin(&self.world);
        let Some(center) = view.project(o) else { return };
        for (i, axis) in self.axes().into_iter().enumerate() {
            let color = AXIS_COLORS[i];
            match self.mode {
                GizmoMode::Translate | GizmoMode::Scale => {
                    let Some(tip) = view.project(o + axis * self.size) else { continue };
                    let on = hot == Some(Handle::Move(i)) || hot == Some(Handle::Stretch(i));
                    let c = if on { Color32::YELLOW } else { color };
                    painter.line_segment([center, tip], Stroke::new(if on { 3.5 } else { 2.5 }, c));
                    if self.mode == GizmoMode::Translate {
                        let dir = (tip - center).normalized();
                        let side = egui::vec2(-dir.y, dir.x) * 5.0;
                        painter.add(egui::Shape::convex_polygon(
                            vec![tip + dir * 10.0, tip + side, tip - side],
                            c,
                            Stroke::NONE,
                        ));
                    } else {
                        painter.rect_filled(Rect::from_center_size(tip, egui::vec2(9.0, 9.0)), 1.0, c);
                    }
                }
                GizmoMode::Rotate => {
                    let on = hot == Some(Handle::Turn(i));
                    let ring = self.ring(view, i);
                    painter.add(egui::Shape::line(
                        ring,
                        Stroke::new(if on { 3.5 } else { 2.0 }, if on { Color32::YELLOW } else { color }),
                    ));
                }
            }
        }
        painter.circle_filled(center, 3.0, Color32::WHITE);
    }
}

impl Drag {
    /// The local transform the drag gives with the cursor at `cursor` (`None` when the cursor
    /// ray runs parallel to the axis).
    pub fn local_at(&self, view: &View, cursor: Pos2) -> Option<Transform> {
        let g = &self.start;
        let mut local = g.local;
        let o = origin(&g.world);
        match self.handle {
            Handle::Move(i) => {
                let (ro, rd) = view.ray(cursor);
                let s = closest_param(o, g.axes()[i], ro, rd)?;
                let world_pos = o + g.axes()[i] * (s - self.param);
                local.translation = g.parent.inverse().transform_point3(world_pos);
            }
            Handle::Stretch(i) => {
                let (ro, rd) = view.ray(cursor);
                let s = closest_param(o, g.axes()[i], ro, rd)?;
                let factor = (1.0 + (s - self.param) / g.size.max(1e-6)).max(0.01);
                local.scale[i] = g.local.scale[i] * factor;
            }
            Handle::Turn(i) => {
                let center = view.project(o)?;
                let a0 = self.cursor - center;
                let a1 = cursor - center;
                let mut angle = a1.y.atan2(a1.x) - a0.y.atan2(a0.x);
                // Screen y points down; turn so the ring follows the cursor when the axis
                // points at the camera.
                let (ro, _) = view.ray(center);
                if g.axes()[i].dot(ro - o) > 0.0 {
                    angle = -angle;
                }
                let world_rot = Quat::from_axis_angle(g.axes()[i], angle) * rotation_of(&g.world);
                let parent_rot = rotation_of(&g.parent);
                local.rotation = (parent_rot.inverse() * world_rot).normalize();
            }
        }
        local.is_finite().then_some(local)
    }
}

/// The gizmo's size in world units for a point at `at`: about `pixels` points long on screen.
pub fn size_for(view: &View, at: Vec3, pixels: f32) -> f32 {
    let Some(p) = view.project(at) else { return 1.0 };
    let (o, d) = view.ray(p + egui::vec2(pixels, 0.0));
    // Distance from the point to the ray through a pixel offset, at the point's depth.
    let (o2, _) = view.ray(p);
    let depth = (at - o2).length();
    let off = (o + d * depth) - at;
    off.length().max(1e-4)
}

/// A screen position as a `Vec2`.
pub fn vec2(p: Pos2) -> Vec2 {
    Vec2::new(p.x, p.y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::viewport::camera::OrbitCamera;

    fn view() -> View {
        let cam = OrbitCamera { target: Vec3::ZERO, yaw: 0.0, pitch: 0.0, distance: 5.0, fov_y: 0.8 };
        View {
            clip_from_world: cam.clip_from_world(1.0),
            rect: Rect::from_min_size(Pos2::ZERO, egui::vec2(400.0, 400.0)),
        }
    }

    fn gizmo(mode: GizmoMode) -> Gizmo {
        Gizmo { mode, world: Mat4::IDENTITY, parent: Mat4::IDENTITY, local: Transform::IDENTITY, size: 1.0 }
    }

    #[test]
    fn dragging_the_x_arrow_moves_along_x_only() {
        let v = view();
        let g = gizmo(GizmoMode::Translate);
        let tip = v.project(Vec3::X * 0.8).unwrap();
        assert_eq!(g.hit(&v, tip), Some(Handle::Move(0)));
        let drag = g.begin(&v, Handle::Move(0), tip);
        let to = v.project(Vec3::new(1.8, 0.0, 0.0)).unwrap();
        let t = drag.local_at(&v, to).unwrap();
        assert!((t.translation.x - 1.0).abs() < 1e-3, "{t:?}");
        assert!(t.translation.y.abs() < 1e-6 && t.translation.z.abs() < 1e-6);
        // Off the axis on screen, the move still stays on the axis.
        let t = drag.local_at(&v, to + egui::vec2(0.0, 30.0)).unwrap();
        assert!((t.translation.x - 1.0).abs() < 2e-2 && t.translation.y == 0.0, "{t:?}");
    }

    #[test]
    fn a_parent_frame_is_undone() {
        let v = view();
        let mut g = gizmo(GizmoMode::Translate);
        g.parent = Mat4::from_scale(Vec3::splat(2.0));
        g.world = g.parent;
        let at = v.project(Vec3::X * 0.5).unwrap();
        let drag = g.begin(&v, Handle::Move(0), at);
        let t = drag.local_at(&v, v.project(Vec3::X * 1.5).unwrap()).unwrap();
        assert!((t.translation.x - 0.5).abs() < 1e-3, "world 1.0 is local 0.5: {t:?}");
    }

    #[test]
    fn turning_the_z_ring_a_quarter_turns_about_z() {
        let v = view();
        let g = gizmo(GizmoMode::Rotate);
        let on_ring = |a: f32| v.project(Vec3::new(a.cos(), a.sin(), 0.0) * 0.8).unwrap();
        let start = on_ring(0.3);
        assert_eq!(g.hit(&v, start), Some(Handle::Turn(2)));
        let drag = g.begin(&v, Handle::Turn(2), start);
        let t = drag.local_at(&v, on_ring(0.3 + std::f32::consts::FRAC_PI_2)).unwrap();
        let x = t.rotation * Vec3::X;
        assert!((x - Vec3::Y).length() < 1e-3, "X turns onto Y: {x}");
    }
}
