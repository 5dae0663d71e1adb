//! BlendSpace2D: compile faults for positions that do not triangulate, the Delaunay property and
//! hull coverage of the triangulation, weights that sum to 1 inside and outside the hull, a sample
//! reproduced exactly at its position, continuity across a triangle edge, phase sync, and markers
//! announced by the heaviest corner only.

use crate::support::sample;

use std::collections::HashMap;
use std::sync::Arc;

use marrow_engine::clip::Clip;
use marrow_engine::graph::compile::GraphError;
use marrow_engine::graph::*;
use marrow_engine::math::Transform;
use marrow_engine::skeleton::Skeleton;
use marrow_engine::synthetic::{chain_skeleton, dense_clip};

type Lib = HashMap<String, Arc<Clip>>;

/// Clips "a" (2 s), "b" (1 s), "c" (1.5 s), "d" (0.5 s).
fn library(sk: &Skeleton) -> Lib {
    let mut lib = Lib::new();
    for (i, (name, d)) in [("a", 2.0), ("b", 1.0), ("c", 1.5), ("d", 0.5)].into_iter().enumerate() {
        lib.insert(name.into(), Arc::new(dense_clip(sk, name, d, 30.0, i as u32)));
    }
    lib
}

/// A graph: a BlendSpace2D over `samples` driven by parameters "x" and "y", into the Output.
fn space_graph(samples: &[(&str, (f32, f32))]) -> (AnimGraph, NodeId) {
    let mut g = AnimGraph::new();
    g.add_parameter("x", ParamValue::Float(0.0));
    g.add_parameter("y", ParamValue::Float(0.0));
    let samples =
        samples.iter().map(|(c, p)| BlendSample2D { clip: (*c).into(), position: *p, speed: 1.0 }).collect();
    let s = g.add_node(NodeKind::BlendSpace2D { samples, x: 0.0, y: 0.0, looping: true }, [0.0, 0.0]);
    for axis in ["x", "y"] {
        let p = g.add_node(NodeKind::Parameter { name: axis.into() }, [0.0, 0.0]);
        g.connect(p, s, axis);
    }
    let o = g.add_node(NodeKind::Output, [0.0, 0.0]);
    g.connect(s, o, "pose");
    (g, s)
}

fn eval(sk: &Skeleton, inst: &mut GraphInstance) -> Vec<Transform> {
    let mut out = vec![Transform::IDENTITY; sk.bone_count()];
    inst.evaluate(sk, &mut out).unwrap();
    out
}

/// A small deterministic generator of floats in `[lo, hi)`.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, lo: f32, hi: f32) -> f32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        lo + (hi - lo) * ((self.0 >> 40) as f32 / (1u64 << 24) as f32)
    }
}

const FOUR: [(&str, (f32, f32)); 4] =
    [("a", (0.0, 0.0)), ("b", (2.0, 0.0)), ("c", (0.0, 2.0)), ("d", (2.5, 2.0))];

#[test]
fn positions_that_do_not_triangulate_are_compile_faults_naming_the_node() {
    let sk = chain_skeleton(4);
    let lib = library(&sk);
    type Row = (&'static str, Vec<(f32, f32)>, Option<TriangulationError>);
    let rows: Vec<Row> = vec![
        ("no sample", vec![], Some(TriangulationError::TooFew { count: 0 })),
        ("two samples", vec![(0.0, 0.0), (1.0, 0.0)], Some(TriangulationError::TooFew { count: 2 })),
        (
            "a duplicate",
            vec![(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 0.0)],
            Some(TriangulationError::Duplicate { first: 1, second: 3, x: 1.0, y: 0.0 }),
        ),
        (
            "collinear",
            vec![(0.0, 0.0), (1.0, 1.0), (3.0, 3.0), (-2.0, -2.0)],
            Some(TriangulationError::Collinear { count: 4 }),
        ),
        (
            "infinite",
            vec![(0.0, 0.0), (1.0, 0.0), (f32::INFINITY, 1.0)],
            Some(TriangulationError::NotFinite { index: 2, x: f32::INFINITY, y: 1.0 }),
        ),
        ("a triangle", vec![(0.0, 0.0), (1.0, 0.0), (0.0, 1.0)], None),
        ("a square", vec![(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)], None),
    ];
    for (name, positions, expected) in rows {
        let clips = ["a", "b", "c", "d"];
        let samples: Vec<_> = positions.iter().enumerate().map(|(i, p)| (clips[i % 4], *p)).collect();
        let (g, s) = space_graph(&samples);
        let result = compile(&g, &sk, &lib);
        assert_eq!(triangulate(&positions).err(), expected, "{name}");
        match expected {
            Some(e) => {
                let errors = result.expect_err(name);
                let fault = GraphError::BadValue { node: s, title: "BlendSpace2D", what: e.to_string() };
                assert_eq!(errors, vec![fault.clone()], "{name}");
                assert_eq!(fault.node(), Some(s));
            }
            None => assert!(result.is_ok(), "{name}: {:?}", result.err()),
        }
    }
    // A NaN coordinate is named too (NaN is not equal to itself, so compare the variant).
    let nan = triangulate(&[(0.0, 0.0), (f32::NAN, 1.0), (1.0, 0.0)]);
    assert!(matches!(nan, Err(TriangulationError::NotFinite { index: 1, .. })), "{nan:?}");
}

/// Twice the signed area of `a b c`.
fn cross(a: (f32, f32), b: (f32, f32), c: (f32, f32)) -> f64 {
    let (a, b, c) = ((a.0 as f64, a.1 as f64), (b.0 as f64, b.1 as f64), (c.0 as f64, c.1 as f64));
    (b.0 - a.0) * (c.1 - a.1) - (b.1 - a.1) * (c.0 - a.0)
}

/// The area of the convex hull of `points` (monotone chain).
fn hull_area(points: &[(f32, f32)]) -> f64 {
    let mut p = points.to_vec();
    p.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let mut hull: Vec<(f32, f32)> = Vec::new();
    for pass in 0..2 {
        let start = hull.len();
        let it: Box<dyn Iterator<Item = &(f32, f32)>> =
            if pass == 0 { Box::new(p.iter()) } else { Box::new(p.iter().rev()) };
        for &q in it {
            while hull.len() >= start + 2 && cross(hull[hull.len() - 2], hull[hull.len() - 1], q) <= 0.0 {
                hull.pop();
            }
            hull.push(q);
        }
        hull.pop();
    }
    (1..hull.len().saturating_sub(1)).map(|i| cross(hull[0], hull[i], hull[i + 1])).sum::<f64>() / 2.0
}

#[test]
fn the_triangulation_is_delaunay_and_covers_the_hull() {
    let mut rng = Lcg(7);
    for set in 0..20 {
        let n = 3 + set % 12;
        let points: Vec<(f32, f32)> = (0..n).map(|_| (rng.next(-3.0, 3.0), rng.next(-1.0, 2.0))).collect();
        let triangles = triangulate(&points).unwrap();
        // Every triangle counter-clockwise with an area; together they cover the hull once.
        let area: f64 = triangles.iter().map(|t| cross(points[t[0]], points[t[1]], points[t[2]]) / 2.0).sum();
        assert!(triangles.iter().all(|t| cross(points[t[0]], points[t[1]], points[t[2]]) > 0.0));
        assert!((area - hull_area(&points)).abs() < 1e-4, "set {set}: {area} vs {}", hull_area(&points));
        // No sample strictly inside another triangle's circumcircle.
        for t in &triangles {
            let [a, b, c] = t.map(|i| (points[i].0 as f64, points[i].1 as f64));
            let d = 2.0 * (a.0 * (b.1 - c.1) + b.0 * (c.1 - a.1) + c.0 * (a.1 - b.1));
            let sq = |p: (f64, f64)| p.0 * p.0 + p.1 * p.1;
            let ux = (sq(a) * (b.1 - c.1) + sq(b) * (c.1 - a.1) + sq(c) * (a.1 - b.1)) / d;
            let uy = (sq(a) * (c.0 - b.0) + sq(b) * (a.0 - c.0) + sq(c) * (b.0 - a.0)) / d;
            let r2 = (a.0 - ux).powi(2) + (a.1 - uy).powi(2);
            for (i, p) in points.iter().enumerate().filter(|(i, _)| !t.contains(i)) {
                let d2 = (p.0 as f64 - ux).powi(2) + (p.1 as f64 - uy).powi(2);
                assert!(d2 >= r2 * (1.0 - 1e-6), "set {set}: sample {i} inside the circumcircle of {t:?}");
            }
        }
    }
    // Four points on a circle: two triangles either way, not three or one.
    assert_eq!(triangulate(&[(0.0, 0.0), (1.0, 0.0), (1.0, 1.0), (0.0, 1.0)]).unwrap().len(), 2);
}

#[test]
fn weights_sum_to_1_inside_and_outside_the_hull() {
    let points: Vec<(f32, f32)> = FOUR.iter().map(|s| s.1).collect();
    let triangles = triangulate(&points).unwrap();
    let mut rng = Lcg(11);
    let (mut inside, mut outside) = (0, 0);
    for _ in 0..2000 {
        let p = (rng.next(-4.0, 6.0), rng.next(-4.0, 6.0));
        let w = plane_weights(&points, &triangles, p).unwrap();
        let sum: f32 = w.iter().map(|c| c.1).sum();
        assert!((sum - 1.0).abs() < 1e-5, "{p:?}: {w:?}");
        assert!(w.iter().all(|c| (0.0..=1.0).contains(&c.1)), "{p:?}: {w:?}");
        // The weighted corners give back the point inside the hull, a point on the hull outside.
        let q = w.iter().fold((0.0, 0.0), |q, &(i, x)| (q.0 + points[i].0 * x, q.1 + points[i].1 * x));
        let in_hull =
            triangles.iter().any(|t| (0..3).all(|k| cross(points[t[k]], points[t[(k + 1) % 3]], p) >= 0.0));
        if in_hull {
            inside += 1;
            assert!((q.0 - p.0).abs() < 1e-4 && (q.1 - p.1).abs() < 1e-4, "{p:?} -> {q:?}");
        } else {
            outside += 1;
            assert!(
                triangles
                    .iter()
                    .all(|t| (0..3).any(|k| cross(points[t[k]], points[t[(k + 1) % 3]], q) < 1e-4))
            );
        }
    }
    assert!(inside > 100 && outside > 100, "{inside} inside, {outside} outside");
    // Through a running graph: the instance reports the same weights, in sample order.
    let sk = chain_skeleton(4);
    let lib = library(&sk);
    let (g, s) = space_graph(&FOUR);
    let mut inst = GraphInstance::new(Arc::new(compile(&g, &sk, &lib).unwrap()));
    for p in [(0.5, 0.5), (9.0, -3.0), (2.5, 2.0)] {
        assert!(inst.set_float("x", p.0) && inst.set_float("y", p.1));
        let mut w = [0.0f32; 4];
        assert!(inst.space_weights(s, &mut w));
        let mut expect = [0.0f32; 4];
        for (i, x) in plane_weights(&points, &triangles, p).unwrap() {
            expect[i] += x;
        }
        assert_eq!(w, expect, "{p:?}");
    }
    assert!(!inst.space_weights(s, &mut [0.0; 3]));
}

#[test]
fn a_sample_is_reproduced_exactly_at_its_position() {
    let sk = chain_skeleton(12);
    let lib = library(&sk);
    let (g, s) = space_graph(&FOUR);
    let mut inst = GraphInstance::new(Arc::new(compile(&g, &sk, &lib).unwrap()));
    for dt in [0.0, 0.3, 0.45] {
        inst.advance(dt);
        for (j, (clip, (x, y))) in FOUR.iter().enumerate() {
            assert!(inst.set_float("x", *x) && inst.set_float("y", *y));
            let mut w = [0.0f32; 4];
            inst.space_weights(s, &mut w);
            assert_eq!(w.iter().filter(|&&x| x != 0.0).count(), 1, "{clip}: {w:?}");
            assert_eq!(w[j], 1.0, "{clip}");
            let time = inst.member_time(s, j).unwrap();
            assert_eq!(eval(&sk, &mut inst), sample(&sk, &lib[*clip], time), "{clip} after {dt}");
        }
    }
    // Between samples the pose is none of them.
    assert!(inst.set_float("x", 0.6) && inst.set_float("y", 0.7));
    let mid = eval(&sk, &mut inst);
    for (j, (clip, _)) in FOUR.iter().enumerate() {
        assert_ne!(mid, sample(&sk, &lib[*clip], inst.member_time(s, j).unwrap()), "{clip}");
    }
}

#[test]
fn weights_and_poses_are_continuous_across_a_triangle_edge() {
    let points: Vec<(f32, f32)> = FOUR.iter().map(|s| s.1).collect();
    let triangles = triangulate(&points).unwrap();
    assert_eq!(triangles.len(), 2);
    // The edge the two triangles share.
    let shared: Vec<usize> = (0..4).filter(|i| triangles.iter().all(|t| t.contains(i))).collect();
    assert_eq!(shared.len(), 2);
    let (a, b) = (points[shared[0]], points[shared[1]]);
    let sk = chain_skeleton(12);
    let lib = library(&sk);
    let (g, _) = space_graph(&FOUR);
    let mut inst = GraphInstance::new(Arc::new(compile(&g, &sk, &lib).unwrap()));
    inst.advance(0.2);
    let normal = {
        let (dx, dy) = (b.0 - a.0, b.1 - a.1);
        let len = (dx * dx + dy * dy).sqrt();
        (-dy / len, dx / len)
    };
    for k in 1..10 {
        let t = k as f32 / 10.0;
        let on = (a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t);
        let eps = 1e-3;
        let sides = [1.0f32, -1.0].map(|s| (on.0 + normal.0 * eps * s, on.1 + normal.1 * eps * s));
        let dense = |p: (f32, f32)| {
            let mut w = [0.0f32; 4];
            for (i, x) in plane_weights(&points, &triangles, p).unwrap() {
                w[i] += x;
            }
            w
        };
        let (w0, w1) = (dense(sides[0]), dense(sides[1]));
        assert!(w0.iter().zip(&w1).all(|(x, y)| (x - y).abs() < 1e-2), "{w0:?} vs {w1:?}");
        let poses = sides.map(|p| {
            assert!(inst.set_float("x", p.0) && inst.set_float("y", p.1));
            eval(&sk, &mut inst)
        });
        for (p, q) in poses[0].iter().zip(&poses[1]) {
            assert!(p.translation.distance(q.translation) < 1e-2, "{p:?} vs {q:?}");
            assert!(p.rotation.dot(q.rotation).abs() > 0.9999, "{p:?} vs {q:?}");
        }
    }
}

#[test]
fn the_phase_advances_by_the_corners_weighted_rates() {
    let sk = chain_skeleton(4);
    let lib = library(&sk);
    let (g, s) = space_graph(&FOUR);
    let mut inst = GraphInstance::new(Arc::new(compile(&g, &sk, &lib).unwrap()));
    let durations = [2.0f32, 1.0, 1.5, 0.5];
    assert!(inst.set_float("x", 0.5) && inst.set_float("y", 0.5));
    let mut w = [0.0f32; 4];
    inst.space_weights(s, &mut w);
    let rate: f32 = w.iter().zip(durations).map(|(w, d)| w / d).sum();
    let mut expected = 0.0f32;
    for tick in 0..30 {
        inst.advance(1.0 / 30.0);
        expected = (expected + rate / 30.0).rem_euclid(1.0);
        let phase = inst.space_phase(s).unwrap();
        assert!((phase - expected).abs() < 1e-4, "tick {tick}: {phase} vs {expected}");
        // Every member at the same normalized time.
        for (j, d) in durations.iter().enumerate() {
            assert_eq!(inst.member_time(s, j).unwrap(), phase * d);
        }
    }
}

#[test]
fn only_the_heaviest_corner_announces_its_markers() {
    let sk = chain_skeleton(4);
    let mut lib = library(&sk);
    for (name, d) in [("a", 2.0), ("b", 1.0), ("c", 1.5)] {
        let mut clip = dense_clip(&sk, name, d, 30.0, 0);
        clip.add_marker(name, d * 0.5);
        lib.insert(name.into(), Arc::new(clip));
    }
    let (g, s) = space_graph(&FOUR[..3]);
    let mut inst = GraphInstance::new(Arc::new(compile(&g, &sk, &lib).unwrap()));
    // Mostly "b" (at (2, 0)), some "a" and "c".
    assert!(inst.set_float("x", 1.5) && inst.set_float("y", 0.25));
    let mut w = [0.0f32; 3];
    inst.space_weights(s, &mut w);
    assert!(w[1] > w[0] && w[1] > w[2] && w[0] > 0.0 && w[2] > 0.0, "{w:?}");
    let mut heard = Vec::new();
    for _ in 0..60 {
        inst.advance(1.0 / 30.0);
        heard.extend(inst.events().iter().map(|e| (e.node, e.name().to_owned())));
    }
    // Two seconds at a phase rate near b's (1 / 1 s): b's mid-clip marker about twice.
    assert!(!heard.is_empty(), "b speaks");
    assert!(heard.iter().all(|(n, m)| *n == s && m == "b"), "{heard:?}");
}
