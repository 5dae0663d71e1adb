//! Where the graph canvas looks: Frame All (every node inside the canvas with a margin, zoomed
//! out as far as it takes) and the view a graph opens at (zoom 1, so node text is drawn at the
//! UI's own size, centred on the nodes and keeping the Output in view).
//!
//! Not here: pan and zoom by the user (snarl's `Scene`), node layout.

use std::collections::HashMap;

use egui::emath::TSTransform;
use egui::{Pos2, Rect, Vec2};
use marrow_engine::graph::{AnimGraph, NodeId};

/// The smallest zoom of the canvas (also the canvas style's `min_scale`).
pub const MIN_SCALE: f32 = 0.2;

/// The zoom a graph opens at: graph units are screen points, node text is the UI's text size.
pub const OPEN_SCALE: f32 = 1.0;

/// The room left between the framed nodes and the canvas's edges, in screen points.
pub const MARGIN: f32 = 24.0;

/// How the canvas is to be framed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// Every node inside the canvas (Frame All, F).
    All,
    /// A graph just opened: zoom 1, centred on its nodes, the Output kept in view.
    Open,
}

/// A node's rectangle in graph space: as drawn last frame, else estimated from its position.
fn node_rect(rects: &HashMap<NodeId, Rect>, id: NodeId, position: [f32; 2]) -> Rect {
    rects
        .get(&id)
        .copied()
        .unwrap_or_else(|| Rect::from_min_size(Pos2::new(position[0], position[1]), Vec2::new(160.0, 90.0)))
}

/// The graph-space bounds of every node of `graph`, or `None` for an empty graph.
fn bounds(rects: &HashMap<NodeId, Rect>, graph: &AnimGraph) -> Option<Rect> {
    let bb = graph.nodes.iter().fold(Rect::NOTHING, |bb, n| bb.union(node_rect(rects, n.id, n.position)));
    bb.is_positive().then_some(bb)
}

/// Whether every node of `graph` has a measured rectangle in `rects`.
pub fn measured(rects: &HashMap<NodeId, Rect>, graph: &AnimGraph) -> bool {
    graph.nodes.iter().all(|n| rects.contains_key(&n.id))
}

/// The transform (graph -> screen) that frames `graph` inside `canvas` as `how` says, zoomed
/// in no further than `max_scale` (Frame All never zooms past 1).
pub fn transform(
    rects: &HashMap<NodeId, Rect>,
    graph: &AnimGraph,
    canvas: Rect,
    how: Framing,
    max_scale: f32,
) -> TSTransform {
    let Some(bb) = bounds(rects, graph) else {
        return TSTransform::from_translation(canvas.center().to_vec2());
    };
    let room = canvas.shrink(MARGIN);
    let fit = (room.width() / bb.width()).min(room.height() / bb.height());
    let scale = match how {
        Framing::All => fit.min(max_scale).clamp(MIN_SCALE, 1.0),
        Framing::Open => OPEN_SCALE,
    };
    let mut t = canvas.center().to_vec2() - bb.center().to_vec2() * scale;
    if how == Framing::Open && fit < scale {
        // The nodes do not all fit at zoom 1: keep the Output (where the graph ends) in view.
        if let Some(out) =
            graph.nodes.iter().find(|n| matches!(n.kind, marrow_engine::graph::NodeKind::Output))
        {
            let o = TSTransform::new(t, scale) * node_rect(rects, out.id, out.position);
            t += Vec2::new(into_range(o.x_range(), room.x_range()), into_range(o.y_range(), room.y_range()));
        }
    }
    TSTransform::new(t, scale)
}

/// The shift that brings `span` inside `room` (none when it is inside or cannot fit).
fn into_range(span: egui::Rangef, room: egui::Rangef) -> f32 {
    if span.span() > room.span() {
        0.0
    } else if span.max > room.max {
        room.max - span.max
    } else if span.min < room.min {
        room.min - span.min
    } else {
        0.0
    }
}
