//! The geometry of a 2D blend space: the Delaunay triangulation of its sample positions and the
//! barycentric weights of a point over it.
//!
//! [`triangulate`] runs once per compile (a Bowyer-Watson insertion in `f64`, fine for tens of
//! samples; quadratic in the worst case) and names the reason a set of positions has no
//! triangulation ([`TriangulationError`]). [`plane_weights`] runs per tick and allocates nothing:
//! the triangle holding the point gives its three barycentric weights; a point outside the hull
//! takes the weights of the nearest point on the hull (so weights are continuous everywhere, each
//! in `[0, 1]`, summing to 1). At a sample's own position that sample's weight is exactly 1.
//!
//! Not here: sampling or blending clips (see [`super::eval`]), drawing (the editor draws what
//! [`triangulate`] returns).

/// Why sample positions have no triangulation. Indices are into the positions given.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum TriangulationError {
    /// Fewer than three positions.
    #[error("a 2D blend space needs at least 3 samples, it has {count}")]
    TooFew {
        /// How many there are.
        count: usize,
    },
    /// A coordinate is NaN or infinite.
    #[error("sample {index}'s position ({x}, {y}) is not finite")]
    NotFinite {
        /// The sample.
        index: usize,
        /// Its x.
        x: f32,
        /// Its y.
        y: f32,
    },
    /// Two samples share a position.
    #[error("samples {first} and {second} share the position ({x}, {y})")]
    Duplicate {
        /// The earlier sample.
        first: usize,
        /// The later sample.
        second: usize,
        /// The shared x.
        x: f32,
        /// The shared y.
        y: f32,
    },
    /// Every position lies on one line (no triangle has an area).
    #[error("all {count} sample positions lie on one line")]
    Collinear {
        /// How many there are.
        count: usize,
    },
}

/// Twice the signed area of triangle `a b c` (positive when counter-clockwise).
fn cross(a: (f64, f64), b: (f64, f64), c: (f64, f64)) -> f64 {
    (b.0 - a.0) * (c.1 - a.1) - (b.1 - a.1) * (c.0 - a.0)
}

/// Whether `p` lies strictly inside the circumcircle of counter-clockwise triangle `a b c`.
fn in_circumcircle(a: (f64, f64), b: (f64, f64), c: (f64, f64), p: (f64, f64)) -> bool {
    let (ax, ay) = (a.0 - p.0, a.1 - p.1);
    let (bx, by) = (b.0 - p.0, b.1 - p.1);
    let (cx, cy) = (c.0 - p.0, c.1 - p.1);
    let det = (ax * ax + ay * ay) * (bx * cy - cx * by) - (bx * bx + by * by) * (ax * cy - cx * ay)
        + (cx * cx + cy * cy) * (ax * by - bx * ay);
    det > 1e-12 * (ax * ax + ay * ay + bx * bx + by * by + cx * cx + cy * cy).powi(2)
}

/// The Delaunay triangulation of `points`: triangles as index triples into `points`, each
/// counter-clockwise, covering their convex hull. Errors name fewer than three points, a
/// non-finite coordinate, two equal points, or all points on one line.
pub fn triangulate(points: &[(f32, f32)]) -> Result<Vec<[usize; 3]>, TriangulationError> {
    if points.len() < 3 {
        return Err(TriangulationError::TooFew { count: points.len() });
    }
    for (index, &(x, y)) in points.iter().enumerate() {
        if !(x.is_finite() && y.is_finite()) {
            return Err(TriangulationError::NotFinite { index, x, y });
        }
    }
    for (second, &p) in points.iter().enumerate() {
        if let Some(first) = points[..second].iter().position(|&q| q == p) {
            return Err(TriangulationError::Duplicate { first, second, x: p.0, y: p.1 });
        }
    }
    let mut pts: Vec<(f64, f64)> = points.iter().map(|&(x, y)| (f64::from(x), f64::from(y))).collect();
    let (mut lo, mut hi) = ((f64::INFINITY, f64::INFINITY), (f64::NEG_INFINITY, f64::NEG_INFINITY));
    for &(x, y) in &pts {
        lo = (lo.0.min(x), lo.1.min(y));
        hi = (hi.0.max(x), hi.1.max(y));
    }
    let extent = (hi.0 - lo.0).max(hi.1 - lo.1);
    let (a, b) = (pts[0], pts.iter().copied().max_by(|p, q| dist2(pts[0], *p).total_cmp(&dist2(pts[0], *q))));
    let b = b.unwrap_or(a);
    if !pts.iter().any(|&c| cross(a, b, c).abs() > 1e-9 * extent * extent) {
        return Err(TriangulationError::Collinear { count: points.len() });
    }
    // A super-triangle far around every point, removed at the end.
    let (cx, cy) = ((lo.0 + hi.0) / 2.0, (lo.1 + hi.1) / 2.0);
    let r = extent * 1e4;
    let n = pts.len();
    pts.extend([(cx - 2.0 * r, cy - r), (cx + 2.0 * r, cy - r), (cx, cy + 2.0 * r)]);
    let mut tris: Vec<[usize; 3]> = vec![[n, n + 1, n + 2]];
    let mut edges: Vec<[usize; 2]> = Vec::new();
    for i in 0..n {
        let p = pts[i];
        edges.clear();
        tris.retain(|t| {
            let bad = in_circumcircle(pts[t[0]], pts[t[1]], pts[t[2]], p);
            if bad {
                edges.extend([[t[0], t[1]], [t[1], t[2]], [t[2], t[0]]]);
            }
            !bad
        });
        // The cavity's boundary: the edges only one removed triangle has.
        for (k, e) in edges.iter().enumerate() {
            let shared = edges.iter().enumerate().any(|(j, f)| j != k && f[0] == e[1] && f[1] == e[0]);
            if !shared {
                tris.push([e[0], e[1], i]);
            }
        }
    }
    tris.retain(|t| t.iter().all(|&v| v < n) && cross(pts[t[0]], pts[t[1]], pts[t[2]]) > 0.0);
    // Positions so nearly on one line that no triangle with an area survived.
    if tris.is_empty() {
        return Err(TriangulationError::Collinear { count: n });
    }
    Ok(tris)
}

fn dist2(a: (f64, f64), b: (f64, f64)) -> f64 {
    (a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)
}

/// The barycentric weights of `p` in triangle `t` of `points`, raw (negative outside).
fn barycentric(points: &[(f32, f32)], t: [usize; 3], p: (f32, f32)) -> Option<[f32; 3]> {
    let [(x1, y1), (x2, y2), (x3, y3)] = [*points.get(t[0])?, *points.get(t[1])?, *points.get(t[2])?];
    let det = (y2 - y3) * (x1 - x3) + (x3 - x2) * (y1 - y3);
    if det == 0.0 {
        return None;
    }
    let l1 = ((y2 - y3) * (p.0 - x3) + (x3 - x2) * (p.1 - y3)) / det;
    let l2 = ((y3 - y1) * (p.0 - x3) + (x1 - x3) * (p.1 - y3)) / det;
    Some([l1, l2, 1.0 - l1 - l2])
}

/// The point of segment `a b` nearest `p`: its parameter in `[0, 1]` and squared distance.
fn nearest_on_segment(a: (f32, f32), b: (f32, f32), p: (f32, f32)) -> (f32, f32) {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let len2 = dx * dx + dy * dy;
    let t = if len2 > 0.0 { (((p.0 - a.0) * dx + (p.1 - a.1) * dy) / len2).clamp(0.0, 1.0) } else { 0.0 };
    let (qx, qy) = (a.0 + dx * t, a.1 + dy * t);
    (t, (p.0 - qx).powi(2) + (p.1 - qy).powi(2))
}

/// The weights of point `p` over `triangles` of `points`: three `(point index, weight)` pairs,
/// each weight in `[0, 1]`, summing to 1 (see the module docs). A NaN coordinate reads as the
/// first point's. `None` when there is no triangle. Allocates nothing.
pub fn plane_weights(
    points: &[(f32, f32)],
    triangles: &[[usize; 3]],
    p: (f32, f32),
) -> Option<[(usize, f32); 3]> {
    let first = *points.first()?;
    let p = (if p.0.is_nan() { first.0 } else { p.0 }, if p.1.is_nan() { first.1 } else { p.1 });
    let mut best: Option<(f32, [(usize, f32); 3])> = None;
    for &t in triangles {
        let Some(l) = barycentric(points, t, p) else { continue };
        let found = if l.iter().all(|&w| w >= 0.0) {
            (0.0, [(t[0], l[0]), (t[1], l[1]), (t[2], l[2])])
        } else {
            // Outside this triangle: the nearest point on its nearest edge.
            let mut edge = (f32::INFINITY, [(t[0], 1.0), (t[1], 0.0), (t[2], 0.0)]);
            for k in 0..3 {
                let (i, j, o) = (t[k], t[(k + 1) % 3], t[(k + 2) % 3]);
                let (s, d) = nearest_on_segment(points[i], points[j], p);
                if d < edge.0 {
                    edge = (d, [(i, 1.0 - s), (j, s), (o, 0.0)]);
                }
            }
            edge
        };
        if best.is_none_or(|b| found.0 < b.0) {
            best = Some(found);
        }
        if found.0 == 0.0 {
            break;
        }
    }
    best.map(|(_, w)| w)
}
