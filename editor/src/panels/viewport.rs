//! The Viewport panel: the active scene drawn by the engine's renderer inside an egui-wgpu
//! paint callback on eframe's device, with the orbit camera (middle or right drag orbits,
//! Shift+middle or Shift+right drag pans, the wheel zooms, Alt+left drag orbits), F to frame the
//! selection, a ground grid, the skeleton overlay (View > Show Skeletons), click picking of
//! entities (the renderer's id pass) and bones (the nearest joint on screen), and the transform
//! gizmo (W move, E rotate, R scale) that edits the selected entity's transform, or a socket's
//! offset in its bone's frame.
//!
//! Not here: the GPU objects (`crate::viewport::gpu`), the gizmo's math (`crate::viewport::gizmo`).

use egui::{Color32, Pos2, RichText, Sense};
use egui_wgpu::RenderState;
use glam::{Mat4, Vec2, Vec3};
use marrow_engine::math::Transform;
use marrow_engine::render::{WorldRenderer, WorldView, pick_bone};
use marrow_engine::scene::{Entity, SocketDesc, World};
use marrow_engine::skinning::Aabb;

use crate::command::Command;
use crate::cx::Cx;
use crate::document::{EntityOp, Op, tree};
use crate::log::Level;
use crate::ui_state::Selection;
use crate::viewport::framing::framing_bounds;
use crate::viewport::gizmo::{self, Drag, Gizmo, GizmoMode, View};
use crate::viewport::gpu::{ViewportCallback, ViewportGpu};

/// What the viewport measured this frame (read by the app into the Stats).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ViewportReport {
    /// Whether the world was extracted this frame.
    pub extracted: bool,
    /// Extraction time, ms.
    pub extract_ms: f64,
    /// Encode time of the last rendered frame, ms.
    pub submit_ms: f64,
    /// Palettes packed.
    pub palettes: u32,
    /// Joint matrices packed.
    pub joint_matrices: u32,
    /// Morph uploads.
    pub morph_uploads: u32,
    /// Palette uploads since the last report.
    pub palette_uploads: u32,
    /// Per-pass GPU times, when measured.
    pub gpu: Option<marrow_engine::render::PassTimes>,
    /// Whether the device has timestamp queries.
    pub gpu_timing: bool,
}

/// What a gizmo drag edits.
#[derive(Clone, Debug, PartialEq)]
enum Target {
    /// The entity's transform.
    Transform(String),
    /// The entity's socket offset (bone name kept).
    Socket(String, String),
    /// A bone's local pose: the rig's path and the bone index (posing: keys with Auto Key,
    /// else a temporary pose).
    Bone(String, usize),
    /// An Adjust node's Offset entry (graph path, node, entry), moved in the rig's model space:
    /// the offset and the amount it is scaled by when the drag started.
    AdjustOffset(String, marrow_engine::graph::NodeId, usize, Vec3, f32),
    /// A TwoBoneIk or LookAt node's target point (graph path, node), moved in the rig's model
    /// space, and what feeds it.
    IkPoint(String, marrow_engine::graph::NodeId, TargetFeed),
    /// A TwoBoneIk node's pole (graph path, node), as a point in the rig's model space: the pole
    /// is the direction from the chain's start joint (the third field) to it.
    IkPole(String, marrow_engine::graph::NodeId, Vec3),
}

/// What feeds a TwoBoneIk's or LookAt's target point: a vector parameter on its `target` pin, or
/// per axis the float parameter wired to `x`, `y`, `z` (`None`: the node's constant, edited).
#[derive(Clone, Debug, PartialEq)]
enum TargetFeed {
    /// The vector parameter, by name (set live).
    Vector(String),
    /// The float parameters per axis (set live), or `None` for a constant.
    Axes([Option<String>; 3]),
}

/// The Viewport panel.
#[derive(Debug, Default)]
pub struct ViewportPanel {
    drag: Option<(Drag, Target)>,
    /// This frame's measurements.
    pub report: ViewportReport,
    extract_key: Option<(u64, u64, u64)>,
    framed: bool,
    /// Frame the selection on the next frame (F, the toolbar's Frame, or the app's
    /// [`ViewportPanel::request_frame`]).
    frame_pending: bool,
    /// The viewport's current fault (an extraction error, crowds left out), so each is logged
    /// once per occurrence gap: when it appears, not every frame it lasts.
    fault: Option<String>,
}

fn view_hash(v: &WorldView) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    v.skeletons.hash(&mut h);
    v.grid.hash(&mut h);
    v.selected.hash(&mut h);
    v.selected_bone.hash(&mut h);
    v.ghosts.len().hash(&mut h);
    h.finish()
}

/// The gizmo for the selection, sized as drawn (about 90 points), in `view`.
pub fn selection_gizmo(cx: &Cx, view: &View) -> Option<Gizmo> {
    let (mut g, _) = gizmo_for(cx, cx.session.world(), cx.ui.gizmo)?;
    g.size = gizmo::size_for(view, g.world.w_axis.truncate(), 90.0);
    Some(g)
}

/// The gizmo for the selection: the edited thing's world matrix, parent frame and local value.
fn gizmo_for(cx: &Cx, world: &World, mode: GizmoMode) -> Option<(Gizmo, Target)> {
    if let Some(found) = adjust_gizmo(cx, world) {
        return Some(found);
    }
    let path = match &cx.ui.selection {
        Selection::Entity(p) => p.clone(),
        Selection::Bone { rig, bone } => {
            let r = world.find(rig)?;
            let sk = world.animator(r)?.skeleton();
            let b = sk.index_of(bone)?;
            let pose = world.rig_pose(r)?;
            let rig_world = world.world_matrix(r)?;
            let parent = match sk.parent(b) {
                Some(p) => rig_world * pose.model[p],
                None => rig_world,
            };
            let g = Gizmo { mode, world: rig_world * pose.model[b], parent, local: pose.local[b], size: 1.0 };
            return Some((g, Target::Bone(rig.clone(), b)));
        }
        _ => return None,
    };
    let (_, desc) = cx.scene()?;
    let e = tree::find(desc, &path)?;
    let entity = world.find(&path)?;
    let world_m = world.world_matrix(entity)?;
    if let Some(s) = &e.socket {
        // The offset lives in the bone's frame: world = rig * model[bone] * offset.
        let rig = world.parent(entity)?;
        let pose = world.rig_pose(rig)?;
        let bone = world.animator(rig)?.skeleton().index_of(&s.bone)?;
        let parent = world.world_matrix(rig)? * *pose.model.get(bone)?;
        let g = Gizmo { mode, world: world_m, parent, local: s.offset, size: 1.0 };
        return Some((g, Target::Socket(path, s.bone.clone())));
    }
    let local = e.transform?;
    let parent = world.parent(entity).and_then(|p| world.world_matrix(p)).unwrap_or(Mat4::IDENTITY);
    Some((Gizmo { mode, world: world_m, parent, local, size: 1.0 }, Target::Transform(path)))
}

/// The edit that gives an Adjust node's Offset entry the model-space offset `offset` (its
/// direction is `offset / amount`; nothing when the amount is zero).
fn adjust_offset_op(
    cx: &Cx,
    graph: &str,
    node: marrow_engine::graph::NodeId,
    entry: usize,
    offset: Vec3,
    amount: f32,
) -> Option<Op> {
    use marrow_engine::graph::{AdjustOp, NodeKind};
    if amount.abs() < 1e-6 || !offset.is_finite() {
        return None;
    }
    let g = cx.doc.project().graphs.get(graph)?;
    let NodeKind::Adjust { entries } = &g.node(node)?.kind else { return None };
    let mut entries = entries.clone();
    entries.get_mut(entry)?.op = AdjustOp::Offset { direction: offset / amount };
    Some(Op::Graph {
        path: graph.to_owned(),
        op: crate::document::graph_ops::GraphOp::SetNode {
            node,
            kind: NodeKind::Adjust { entries },
            field: "adjust offset".into(),
        },
    })
}

/// The gizmo of an Adjust node's Offset entry (Graph tab > the entry's Gizmo toggle), while
/// its graph previews on a rig: a move gizmo at the adjusted bone, in the rig's model frame.
fn adjust_gizmo(cx: &Cx, world: &World) -> Option<(Gizmo, Target)> {
    use marrow_engine::graph::{AdjustOp, Drive, NodeKind};
    let (graph, node, entry) = cx.ui.adjust_gizmo.clone()?;
    let preview = cx.session.preview().filter(|p| p.graph == graph && p.error.is_none())?;
    let g = cx.doc.project().graphs.get(&graph)?;
    if entry == crate::ui_state::TARGET_ENTRY {
        return target_gizmo(world, &preview.rig, graph, g, node);
    }
    if entry == crate::ui_state::POLE_ENTRY {
        return pole_gizmo(world, &preview.rig, graph, g, node);
    }
    let NodeKind::Adjust { entries } = &g.node(node)?.kind else { return None };
    let e = entries.get(entry)?;
    let AdjustOp::Offset { direction } = e.op else { return None };
    let r = world.find(&preview.rig)?;
    let animator = world.animator(r)?;
    let amount = match &e.amount {
        Drive::Constant(c) => *c,
        Drive::Parameter(p) => animator.current_graph()?.parameter(p)?.as_f32(),
    };
    let b = animator.skeleton().index_of(&e.bone)?;
    let pose = world.rig_pose(r)?;
    let rig_world = world.world_matrix(r)?;
    let at = pose.model.get(b)?.w_axis.truncate();
    Some((point_gizmo(rig_world, at), Target::AdjustOffset(graph, node, entry, direction * amount, amount)))
}

/// The gizmo on a TwoBoneIk or LookAt node's target point, in the previewing rig's model frame
/// (or the frame of the bone the target follows): where the pins put it now (a wired parameter's
/// live value, else the node's constant).
fn target_gizmo(
    world: &World,
    rig: &str,
    graph: String,
    g: &marrow_engine::graph::AnimGraph,
    node: marrow_engine::graph::NodeId,
) -> Option<(Gizmo, Target)> {
    use marrow_engine::graph::NodeKind;
    let kind = &g.node(node)?.kind;
    if !matches!(kind, NodeKind::TwoBoneIk { .. } | NodeKind::LookAt { .. }) {
        return None;
    }
    let r = world.find(rig)?;
    let live = world.animator(r)?.current_graph()?;
    let wired = |pin: &str| {
        let c = g.connections.iter().find(|c| c.to == node && c.pin == pin)?;
        match &g.node(c.from)?.kind {
            NodeKind::Parameter { name } => Some(name.clone()),
            _ => None,
        }
    };
    let feed = match wired("target") {
        Some(v) => TargetFeed::Vector(v),
        None => TargetFeed::Axes(["x", "y", "z"].map(wired)),
    };
    let at = match &feed {
        TargetFeed::Vector(p) => match live.parameter(p)? {
            marrow_engine::graph::ParamValue::Vec3(v) => v,
            _ => return None,
        },
        TargetFeed::Axes(axes) => {
            let mut at = [0.0f32; 3];
            for (k, pin) in ["x", "y", "z"].into_iter().enumerate() {
                at[k] = match &axes[k] {
                    Some(p) => live.parameter(p)?.as_f32(),
                    None => kind.constant(pin)?,
                };
            }
            Vec3::from_array(at)
        }
    };
    // A target that follows a bone is an offset in that bone's frame.
    let follows = match kind {
        NodeKind::TwoBoneIk { target_bone, .. } | NodeKind::LookAt { target_bone, .. } => target_bone,
        _ => return None,
    };
    let mut frame = world.world_matrix(r)?;
    if !follows.is_empty() {
        let b = world.animator(r)?.skeleton().index_of(follows)?;
        frame *= *world.rig_pose(r)?.model.get(b)?;
    }
    Some((point_gizmo(frame, at), Target::IkPoint(graph, node, feed)))
}

/// A move gizmo on the point `at` of the frame `frame` (a rig's model space, or a bone's).
fn point_gizmo(frame: Mat4, at: Vec3) -> Gizmo {
    Gizmo {
        mode: GizmoMode::Translate,
        world: frame * Mat4::from_translation(at),
        parent: frame,
        local: Transform::from_translation(at),
        size: 1.0,
    }
}

/// The axes a TwoBoneIk or LookAt solves with, drawn at their joints on the previewing rig while
/// its gizmo is up: a TwoBoneIk's bend axis through its mid joint (cyan), a LookAt's aim from its
/// eyes to the target (`aim_at`, yellow) and its up axis (green). What the details' numbers
/// mean, seen on the rig.
fn paint_solve_axes(
    painter: &egui::Painter,
    view: &View,
    cx: &Cx,
    graph: &str,
    node: marrow_engine::graph::NodeId,
    aim_at: Vec3,
) -> Option<()> {
    use marrow_engine::graph::NodeKind;
    let kind = &cx.doc.project().graphs.get(graph)?.node(node)?.kind;
    let world = cx.session.world();
    let r = world.find(&cx.session.preview()?.rig)?;
    let sk = world.animator(r)?.skeleton();
    let model = world.rig_pose(r)?.model;
    let frame = world.world_matrix(r)?;
    let joint = |bone: &str| Some(frame * *model.get(sk.index_of(bone)?)?);
    let line = |a: Vec3, b: Vec3, color: Color32| {
        if let (Some(a), Some(b)) = (view.project(a), view.project(b)) {
            painter.line_segment([a, b], egui::Stroke::new(2.0, color));
        }
    };
    let reach = 0.15 * frame.x_axis.truncate().length().max(1e-3);
    match kind {
        NodeKind::TwoBoneIk { mid, mid_axis, .. } => {
            let m = joint(mid)?;
            let (at, axis) = (m.w_axis.truncate(), m.transform_vector3(*mid_axis).try_normalize()?);
            line(at - axis * reach, at + axis * reach, Color32::from_rgb(80, 220, 230));
        }
        NodeKind::LookAt { bone, up, offset, .. } => {
            let h = joint(bone)?;
            let eye = h.transform_point3(*offset);
            line(eye, aim_at, Color32::from_rgb(240, 210, 80));
            line(
                eye,
                eye + h.transform_vector3(*up).try_normalize()? * reach,
                Color32::from_rgb(110, 220, 110),
            );
        }
        _ => {}
    }
    Some(())
}

/// How far out from the start joint the pole gizmo sits, as a share of the chain's length.
const POLE_REACH: f32 = 0.75;

/// The gizmo on a TwoBoneIk node's pole: a point out from the chain's start joint along the pole
/// (the previewing rig's model frame), [`POLE_REACH`] of the chain's length away.
fn pole_gizmo(
    world: &World,
    rig: &str,
    graph: String,
    g: &marrow_engine::graph::AnimGraph,
    node: marrow_engine::graph::NodeId,
) -> Option<(Gizmo, Target)> {
    use marrow_engine::graph::NodeKind;
    let NodeKind::TwoBoneIk { start, mid, end, pole, .. } = &g.node(node)?.kind else { return None };
    let r = world.find(rig)?;
    let sk = world.animator(r)?.skeleton();
    let model = world.rig_pose(r)?.model;
    let [s, m, e] =
        [start, mid, end].map(|b| sk.index_of(b).and_then(|i| model.get(i)).map(|m| m.w_axis.truncate()));
    let (s, m, e) = (s?, m?, e?);
    let reach = (m.distance(s) + e.distance(m)) * POLE_REACH;
    let at = s + pole.try_normalize().unwrap_or(Vec3::Z) * reach.max(0.05);
    let frame = world.world_matrix(r)?;
    Some((point_gizmo(frame, at), Target::IkPole(graph, node, s)))
}

/// Dragging a TwoBoneIk's pole gizmo to `at` (model space): the pole becomes the direction from
/// the start joint `from` to it, one edit (none for a point on the joint).
fn pole_moved(cx: &Cx, graph: &str, node: marrow_engine::graph::NodeId, from: Vec3, at: Vec3) -> Option<Op> {
    use marrow_engine::graph::NodeKind;
    let pole = (at - from).try_normalize()?;
    let mut kind = cx.doc.project().graphs.get(graph)?.node(node)?.kind.clone();
    let NodeKind::TwoBoneIk { pole: p, .. } = &mut kind else { return None };
    if *p == pole {
        return None;
    }
    *p = pole;
    Some(Op::Graph {
        path: graph.to_owned(),
        op: crate::document::graph_ops::GraphOp::SetNode { node, kind, field: "pole".into() },
    })
}

/// The previewing rig's scene entity whose position drives the target's parameters (an Animator
/// target binding of the vector parameter, or of all three `{name}_x`, `_y`, `_z`), by path, and
/// the rig's path.
fn bound_target<'a>(cx: &'a Cx, feed: &TargetFeed) -> Option<(&'a str, String)> {
    let rig = &cx.session.preview()?.rig;
    let (_, scene) = cx.scene()?;
    let animator = crate::document::tree::find(scene, rig)?.animator.as_ref()?;
    let binding = match feed {
        TargetFeed::Vector(name) => animator.targets.iter().find(|b| b.parameter == *name)?,
        TargetFeed::Axes(wired) => {
            let names: Vec<&str> = wired.iter().map(|w| w.as_deref()).collect::<Option<_>>()?;
            animator.targets.iter().find(|b| b.parameters().iter().map(String::as_str).eq(names.clone()))?
        }
    };
    Some((rig.as_str(), binding.entity.clone()))
}

/// Moving the entity a target binding reads (see [`bound_target`]) so the target lands on `at`
/// (the rig's model space): one transform edit of the entity, its rotation and scale kept.
fn bound_entity_moved(cx: &Cx, rig: &str, entity: &str, at: Vec3) -> Option<Op> {
    let (scene, desc) = cx.scene()?;
    let world = cx.session.world();
    let (r, e) = (world.find(rig)?, world.find(entity)?);
    let parent = world.parent(e).and_then(|p| world.world_matrix(p)).unwrap_or(Mat4::IDENTITY);
    let local = parent.inverse().transform_point3(world.world_matrix(r)?.transform_point3(at));
    let mut t = crate::document::tree::find(desc, entity)?.transform.unwrap_or(Transform::IDENTITY);
    if !local.is_finite() || t.translation == local {
        return None;
    }
    t.translation = local;
    Some(Op::Entity {
        scene: scene.to_owned(),
        entity: entity.to_owned(),
        op: EntityOp::SetTransform(Some(t)),
    })
}

/// What dragging a node's target gizmo to `at` (model space) does: the wired parameters are set
/// live (session commands), the unwired pins' constants change in one edit (or none). When the
/// three wired parameters follow a scene entity (the rig's Animator targets, which set them every
/// frame), the entity moves instead: an edit of its transform, as dragging it would be.
fn node_target_moved(
    cx: &Cx,
    graph: &str,
    node: marrow_engine::graph::NodeId,
    feed: &TargetFeed,
    at: Vec3,
) -> (Vec<Command>, Option<Op>) {
    use marrow_engine::graph::ParamValue;
    let mut commands = Vec::new();
    if let Some((rig, entity)) = bound_target(cx, feed) {
        return (commands, bound_entity_moved(cx, rig, &entity, at));
    }
    let wired = match feed {
        TargetFeed::Vector(name) => {
            if at.is_finite() {
                commands.push(Command::SetGraphParameter { name: name.clone(), value: ParamValue::Vec3(at) });
            }
            return (commands, None);
        }
        TargetFeed::Axes(wired) => wired,
    };
    let Some(g) = cx.doc.project().graphs.get(graph) else { return (commands, None) };
    let Some(mut kind) = g.node(node).map(|n| n.kind.clone()) else { return (commands, None) };
    let mut changed = false;
    for (k, pin) in ["x", "y", "z"].into_iter().enumerate() {
        let v = at[k];
        if !v.is_finite() {
            continue;
        }
        match &wired[k] {
            Some(name) => {
                commands.push(Command::SetGraphParameter { name: name.clone(), value: ParamValue::Float(v) })
            }
            None => {
                if let Some(c) = kind.constant_mut(pin)
                    && *c != v
                {
                    *c = v;
                    changed = true;
                }
            }
        }
    }
    let op = changed.then(|| Op::Graph {
        path: graph.to_owned(),
        op: crate::document::graph_ops::GraphOp::SetNode { node, kind, field: "target".into() },
    });
    (commands, op)
}

/// Onion skins: the rig's pose `count` ghosts before and after its playhead, `step` frames
/// (of its clip's rate) apart, each its skeleton and its skinned meshes drawn translucent; the
/// past tinted blue, the future green, fading with distance.
fn onion_ghosts(
    world: &World,
    rig: Entity,
    onion: crate::ui_state::Onion,
) -> Vec<marrow_engine::render::Ghost> {
    let Some(a) = world.animator(rig) else { return Vec::new() };
    let Some(clip) = a.current_clip() else { return Vec::new() };
    let (now, d, fps) = (a.time(), clip.duration(), clip.frame_rate);
    let mut out = Vec::new();
    for k in 1..=onion.count as i32 {
        for sign in [-1i32, 1] {
            let t = now + (sign * k * onion.step as i32) as f32 / fps.max(1.0);
            if !(0.0..=d).contains(&t) {
                continue;
            }
            let fade = 1.0 - (k - 1) as f32 / onion.count.max(1) as f32 * 0.7;
            let color = if sign < 0 { [0.35, 0.55, 1.0, 0.8 * fade] } else { [0.35, 1.0, 0.55, 0.8 * fade] };
            if let Some((model, palette)) = world.pose_and_palette_at(rig, t) {
                out.push(marrow_engine::render::Ghost { rig, model, palette, color });
            }
        }
    }
    out
}

impl ViewportPanel {
    /// Draws the panel.
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut Cx) {
        self.report = ViewportReport::default();
        self.toolbar(ui, cx);
        let (rect, response) =
            ui.allocate_exact_size(ui.available_size().max(egui::vec2(32.0, 32.0)), Sense::click_and_drag());
        response.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Other, true, "3D viewport"));
        // A press here, seen held or in one frame with its release (a tap), not one over a
        // menu or window above the viewport.
        if ui.input(|i| i.pointer.any_pressed()) && response.contains_pointer() {
            cx.ui.focus = crate::ui_state::Focus::Scene;
        }
        self.camera_input(ui, &response, rect, cx);
        let aspect = rect.width() / rect.height().max(1.0);
        let view = View { clip_from_world: cx.ui.camera.clip_from_world(aspect), rect };
        let world = cx.session.world();

        // The gizmo: drag it, or click to pick.
        let mut gizmo = gizmo_for(cx, world, cx.ui.gizmo);
        if let Some((g, _)) = &mut gizmo {
            g.size = gizmo::size_for(&view, g.world.w_axis.truncate(), 90.0);
        }
        let pointer = response.interact_pointer_pos().or(response.hover_pos());
        let hot = match (&gizmo, pointer) {
            (Some((g, _)), Some(p)) if self.drag.is_none() => g.hit(&view, p),
            _ => self.drag.as_ref().map(|(d, _)| d.handle),
        };
        let alt = ui.input(|i| i.modifiers.alt);
        if response.drag_started_by(egui::PointerButton::Primary)
            && !alt
            && let (Some((g, target)), Some(p), Some(h)) = (&gizmo, response.interact_pointer_pos(), hot)
        {
            let start = ui.input(|i| i.pointer.press_origin()).unwrap_or(p);
            self.drag = Some((g.begin(&view, h, start), target.clone()));
        }
        if let Some((drag, target)) = &self.drag {
            if let Some(p) = response.interact_pointer_pos()
                && let Some(local) = drag.local_at(&view, p)
                && let Target::Bone(rig, bone) = target
            {
                let channels: &[marrow_engine::clip::Channel] = match drag.handle {
                    gizmo::Handle::Move(_) => &[marrow_engine::clip::Channel::Translation],
                    gizmo::Handle::Turn(_) => &[marrow_engine::clip::Channel::Rotation],
                    gizmo::Handle::Stretch(_) => &[marrow_engine::clip::Channel::Scale],
                };
                crate::posing::pose_bone(cx, rig, *bone, local, channels);
            } else if let Some(p) = response.interact_pointer_pos()
                && let Some(local) = drag.local_at(&view, p)
                && let Some((scene, _)) = cx.scene()
            {
                let op = match target {
                    Target::Bone(..) => None,
                    Target::IkPoint(graph, node, wired) => {
                        let (commands, op) = node_target_moved(cx, graph, *node, wired, local.translation);
                        for c in commands {
                            cx.send(c);
                        }
                        op
                    }
                    Target::IkPole(graph, node, from) => {
                        pole_moved(cx, graph, *node, *from, local.translation)
                    }
                    Target::AdjustOffset(graph, node, entry, offset0, amount) => {
                        let moved = local.translation - drag.start.local.translation;
                        adjust_offset_op(cx, graph, *node, *entry, *offset0 + moved, *amount)
                    }
                    Target::Transform(path) => Some(Op::Entity {
                        scene: scene.to_owned(),
                        entity: path.clone(),
                        op: EntityOp::SetTransform(Some(local)),
                    }),
                    Target::Socket(path, bone) => Some(Op::Entity {
                        scene: scene.to_owned(),
                        entity: path.clone(),
                        op: EntityOp::SetSocket(Some(SocketDesc { bone: bone.clone(), offset: local })),
                    }),
                };
                if let Some(op) = op {
                    cx.edit(op);
                }
            }
            if !response.dragged() {
                self.drag = None;
            }
        }
        if response.clicked_by(egui::PointerButton::Primary)
            && let Some(p) = response.interact_pointer_pos()
        {
            self.pick(cx, rect, p);
        }

        // Draw.
        match cx.render {
            Some(rs) => self.paint(ui, cx, rs, rect, &view),
            None => {
                ui.painter().rect_filled(rect, 0.0, Color32::from_gray(40));
                ui.painter().text(
                    rect.center(),
                    egui::Align2::CENTER_CENTER,
                    "no GPU: the viewport is not drawn",
                    egui::FontId::proportional(14.0),
                    Color32::GRAY,
                );
            }
        }
        if cx.ui.show_trajectory {
            paint_trajectories(&ui.painter().with_clip_rect(rect), &view, cx.session.world());
        }
        if let Some((g, target)) = &gizmo {
            let painter = ui.painter().with_clip_rect(rect);
            // A pole is drawn as a line from the chain's start joint to its point.
            if let Target::IkPole(_, _, from) = target
                && let (Some(a), Some(b)) =
                    (view.project(g.parent.transform_point3(*from)), view.project(g.world.w_axis.truncate()))
            {
                painter.line_segment([a, b], egui::Stroke::new(1.5, Color32::from_rgb(230, 120, 230)));
            }
            if let Target::IkPoint(graph, node, _) | Target::IkPole(graph, node, _) = target {
                paint_solve_axes(&painter, &view, cx, graph, *node, g.world.w_axis.truncate());
            }
            g.paint(&painter, &view, hot);
        }
        self.hud(ui, cx, rect);
    }

    fn toolbar(&mut self, ui: &mut egui::Ui, cx: &mut Cx) {
        ui.horizontal(|ui| {
            for (mode, key) in
                [(GizmoMode::Translate, "W"), (GizmoMode::Rotate, "E"), (GizmoMode::Scale, "R")]
            {
                if ui.selectable_label(cx.ui.gizmo == mode, mode.name()).on_hover_text(key).clicked() {
                    cx.ui.gizmo = mode;
                }
            }
            ui.separator();
            ui.checkbox(&mut cx.ui.show_skeletons, "Skeletons");
            ui.checkbox(&mut cx.ui.show_grid, "Grid");
            if ui.button("Frame").on_hover_text("F: frame the selection").clicked() {
                self.frame_pending = true;
            }
        });
    }

    fn camera_input(&mut self, ui: &egui::Ui, response: &egui::Response, rect: egui::Rect, cx: &mut Cx) {
        let cam = &mut cx.ui.camera;
        let (shift, alt) = ui.input(|i| (i.modifiers.shift, i.modifiers.alt));
        let delta = response.drag_delta();
        let d = Vec2::new(delta.x, delta.y);
        let other = response.dragged_by(egui::PointerButton::Middle)
            || response.dragged_by(egui::PointerButton::Secondary);
        if other {
            if shift { cam.pan(d, rect.height()) } else { cam.orbit(d) }
        } else if alt && response.dragged_by(egui::PointerButton::Primary) {
            cam.orbit(d);
        }
        if response.hovered() {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y + (i.zoom_delta() - 1.0) * 200.0);
            if scroll != 0.0 {
                cam.zoom(scroll / 60.0);
            }
        }
    }

    /// Selects what is under `at`: a joint (of any rig when skeletons are shown, else of a rig
    /// that shows only its bones), else an entity from the renderer's id pass; empty space
    /// clears the selection.
    fn pick(&mut self, cx: &mut Cx, rect: egui::Rect, at: Pos2) {
        let world = cx.session.world();
        let aspect = rect.width() / rect.height().max(1.0);
        let local = at - rect.min;
        if let Some((rig, bone)) = pick_bone(
            world,
            cx.ui.camera.clip_from_world(aspect),
            Vec2::new(rect.width(), rect.height()),
            Vec2::new(local.x, local.y),
            8.0,
            cx.ui.show_skeletons,
        ) && let (Some(path), Some(a)) = (world.path(rig), world.animator(rig))
        {
            cx.ui.selection = Selection::Bone { rig: path, bone: a.skeleton().bone_names[bone].clone() };
            return;
        }
        let Some(rs) = cx.render else { return };
        let ppp = rect.width().max(1.0);
        let picked = ViewportGpu::with(rs, |g| {
            let (w, h) = g.target_size()?;
            let sx = w as f32 / ppp;
            let (x, y) = ((local.x * sx) as u32, (local.y * sx) as u32);
            Some(g.renderer.pick(
                &g.pool,
                &g.frame,
                marrow_engine::render::PickRequest { width: w, height: h, x, y, radius: 3 },
            ))
        })
        .flatten();
        match picked {
            Some(Ok(Some(id))) => {
                if let Some(e) = WorldRenderer::entity_of_pick(world, id)
                    && let Some(p) = world.path(e)
                {
                    cx.ui.selection = Selection::Entity(p);
                }
            }
            Some(Ok(None)) => cx.ui.selection = Selection::None,
            Some(Err(e)) => cx.send(Command::Log {
                level: Level::Error,
                source: "viewport",
                text: format!("picking failed: {e}"),
            }),
            None => {}
        }
    }

    fn paint(&mut self, ui: &mut egui::Ui, cx: &mut Cx, rs: &RenderState, rect: egui::Rect, view: &View) {
        let ppp = ui.ctx().pixels_per_point();
        let world = cx.session.world();
        let selected: Vec<Entity> =
            cx.ui.selection.entity().and_then(|p| world.find(p)).into_iter().collect();
        let selected_bone = match &cx.ui.selection {
            Selection::Bone { rig, bone } => world.find(rig).and_then(|r| {
                let b = world.animator(r)?.skeleton().index_of(bone)?;
                Some((r, b))
            }),
            _ => None,
        };
        let wv = WorldView {
            skeletons: cx.ui.show_skeletons,
            grid: cx.ui.show_grid,
            selected: if matches!(cx.ui.selection, Selection::Entity(_)) { selected } else { Vec::new() },
            selected_bone,
            ghosts: Vec::new(),
        };
        let onion = cx.ui.onion;
        let onion_rig = cx.ui.timeline_rig.as_deref().and_then(|r| world.find(r)).filter(|_| onion.on);
        let onion_key = onion_rig.map(|r| (r, onion.count, onion.step));
        let key = (
            cx.session.pose_version(),
            cx.doc.revision(),
            view_hash(&wv) ^ {
                use std::hash::{Hash, Hasher};
                let mut h = std::collections::hash_map::DefaultHasher::new();
                onion_key.hash(&mut h);
                h.finish()
            },
        );
        let camera = cx.ui.camera.camera();
        let frame_request = std::mem::take(&mut self.frame_pending) || !self.framed;
        let selection_path = cx.ui.selection.entity().map(str::to_owned);
        let mut frame_to: Option<Aabb> = None;
        let mut report = self.report;
        let mut messages = Vec::new();
        let extract_key = &mut self.extract_key;
        let fault = &mut self.fault;
        ViewportGpu::with(rs, |g| {
            g.ensure_target((rect.width() * ppp) as u32, (rect.height() * ppp) as u32);
            g.frame.camera = camera;
            if *extract_key != Some(key) {
                let mut wv = wv;
                if let Some(rig) = onion_rig {
                    wv.ghosts = onion_ghosts(world, rig, onion);
                }
                g.world.view = wv;
                match g.extract(world, key.0) {
                    Ok(()) => {
                        *extract_key = Some(key);
                        g.frame.outline_width = (!g.world.view.selected.is_empty()).then_some(2.0);
                        g.frame.outline_color = [1.0, 0.55, 0.1, 1.0];
                        let s = g.world.stats();
                        report.extracted = true;
                        report.extract_ms = g.extract_ms;
                        report.palettes = s.palettes;
                        report.joint_matrices = s.joint_matrices;
                        report.morph_uploads = s.morph_uploads;
                    }
                    Err(e) => {
                        let text = format!("viewport: {e}");
                        if fault.as_deref() != Some(&text) {
                            messages.push((Level::Error, text.clone()));
                        }
                        *fault = Some(text);
                    }
                }
            }
            let refusal = g.renderer.crowd_refusal().map(|r| format!("crowds not drawn: {r}"));
            if refusal.is_some() && refusal != *fault {
                messages.push((Level::Warning, refusal.clone().unwrap_or_default()));
                *fault = refusal;
            } else if refusal.is_none() && *extract_key == Some(key) {
                *fault = None;
            }
            g.frame.camera = camera;
            let uploads = g.renderer.palette_uploads();
            report.palette_uploads = (uploads - g.palette_uploads.min(uploads)) as u32;
            g.palette_uploads = uploads;
            report.submit_ms = g.submit_ms;
            report.gpu_timing = g.renderer.has_gpu_timing();
            report.gpu = g.pass_times();
            if let Some(Err(e)) = g.renderer.poll_shader_changes() {
                messages.push((
                    Level::Error,
                    format!("shader reload failed, keeping the last good pipelines: {e}"),
                ));
            }
            if frame_request {
                // The selection's draw bounds; with nothing selected, the characters (the
                // rigs' meshes, the crowds), else everything.
                let roots: Vec<Entity> = match selection_path.as_deref().and_then(|p| world.find(p)) {
                    Some(e) => vec![e],
                    None => world.rigs().chain(world.crowds()).collect(),
                };
                // A character frames whole and tight (skinned at its pose, with its joints); a
                // rig with nothing drawn yet (a model just imported, or no mesh) by its joints,
                // never by the whole scene's box (which put the pivot on the ground).
                frame_to = framing_bounds(world, &g.frame, &roots).or(g.world.bounds());
            }
        });
        self.report = report;
        for (level, text) in messages {
            cx.send(Command::Log { level, source: "viewport", text });
        }
        if let Some(b) = frame_to {
            cx.ui.camera.frame(b, rect.width() / rect.height().max(1.0));
            self.framed = true;
            // The new camera shows next frame.
            ui.ctx().request_repaint();
        }
        ui.painter().add(egui_wgpu::Callback::new_paint_callback(rect, ViewportCallback));
        let _ = view;
    }

    fn hud(&self, ui: &egui::Ui, cx: &Cx, rect: egui::Rect) {
        let state = if cx.session.is_playing() { "▶ playing" } else { "⏸ paused" };
        let sel = match &cx.ui.selection {
            Selection::None => String::new(),
            Selection::Entity(p) => p.clone(),
            Selection::Bone { rig, bone } => format!("{rig} · {bone}"),
        };
        ui.painter().text(
            rect.left_top() + egui::vec2(8.0, 6.0),
            egui::Align2::LEFT_TOP,
            format!("{state}   {sel}"),
            egui::FontId::proportional(12.0),
            Color32::from_white_alpha(200),
        );
        let _ = RichText::new("");
    }

    /// Frames the selection on the next frame (the app's F, View > Frame Selection, an opened
    /// project or an import).
    pub fn request_frame(&mut self) {
        self.frame_pending = true;
    }

    /// Whether a gizmo drag is in progress.
    pub fn dragging(&self) -> bool {
        self.drag.is_some()
    }

    /// The gizmo's local transform for a socket entity, for tests.
    pub fn socket_local(offset: &Transform) -> Transform {
        *offset
    }
}

/// Draws, for every rig whose Animator takes root motion, the path its root takes: for a clip,
/// over the clip's lap through where the character stands (the part behind it dimmer); for a
/// graph, the next [`GRAPH_SECONDS`] of it at the parameters' current values (a copy of the
/// graph's state advanced in steps). A dot marks where the character is, so an animator sees
/// where the motion leads before playing it.
fn paint_trajectories(painter: &egui::Painter, view: &View, world: &marrow_engine::scene::World) {
    let color = Color32::from_rgb(250, 200, 60);
    for rig in world.rigs() {
        let (Some(a), Some(m)) = (world.animator(rig), world.world_matrix(rig)) else { continue };
        let Some(rm) = a.settings().root_motion else { continue };
        let Some(rest) = a.skeleton().bind_pose.get(usize::from(rm.bone)) else { continue };
        // Model-space points along the path, and whether each lies behind the character.
        let points: Vec<(Vec3, bool)> = match (a.current_clip(), a.current_graph()) {
            (Some(clip), _) => clip_path(&rm, clip, rest, a.time()),
            (None, Some(g)) => graph_path(&rm, rest, g),
            (None, None) => continue,
        };
        let mut last: Option<Pos2> = None;
        for (p, behind) in points {
            let Some(p) = view.project(m.transform_point3(p)) else {
                last = None;
                continue;
            };
            if let Some(q) = last {
                let c = if behind { color.gamma_multiply(0.45) } else { color };
                painter.line_segment([q, p], egui::Stroke::new(2.0, c));
            }
            last = Some(p);
        }
        if let Some(p) = view.project(m.transform_point3(Vec3::ZERO)) {
            painter.circle_filled(p, 4.0, color);
        }
    }
}

/// How far ahead a graph's root trajectory is drawn, seconds.
const GRAPH_SECONDS: f32 = 3.0;

/// A clip's root path over its lap, relative to where the root is at `now`.
fn clip_path(
    rm: &marrow_engine::root_motion::RootMotion,
    clip: &marrow_engine::clip::Clip,
    rest: &Transform,
    now: f32,
) -> Vec<(Vec3, bool)> {
    use marrow_engine::root_motion::clip_motion_between;
    const SAMPLES: usize = 96;
    let d = clip.duration();
    if !(d > 0.0) {
        return Vec::new();
    }
    (0..=SAMPLES)
        .map(|i| {
            let t = d * i as f32 / SAMPLES as f32;
            (clip_motion_between(rm, clip, rest, now, t).translation, t <= now)
        })
        .collect()
}

/// A graph's root path over the next [`GRAPH_SECONDS`]: a copy of its state advanced in steps of
/// 1/30 s, its root deltas composed.
fn graph_path(
    rm: &marrow_engine::root_motion::RootMotion,
    rest: &Transform,
    g: &marrow_engine::graph::GraphInstance,
) -> Vec<(Vec3, bool)> {
    use marrow_engine::root_motion::RootAccumulator;
    const DT: f32 = 1.0 / 30.0;
    let mut copy = g.clone();
    copy.set_root_motion(Some((*rm, *rest)));
    let mut at = RootAccumulator::default();
    let mut out = vec![(Vec3::ZERO, false)];
    for _ in 0..(GRAPH_SECONDS / DT) as usize {
        copy.advance_with(DT, false);
        at.push(copy.root_delta());
        out.push((at.offset().translation, false));
    }
    out
}
