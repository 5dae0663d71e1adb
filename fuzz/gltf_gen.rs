//! The structure-aware glTF generator: turns any bytes into a GLB whose JSON follows the glTF
//! schema's shape (accessors on buffer views on one binary chunk, meshes, skins, node trees,
//! animations, a scene), so the fuzzer spends its time in the importer's checks and the player
//! instead of in the JSON parser. The bytes choose counts, sharing and values; the shapes that
//! issue 29 found are made on purpose and often:
//!
//! - sharing: one accessor used by many primitives, attributes, morph targets or samplers; one
//!   sampler used by many channels; one buffer view under many accessors and images; skins
//!   sharing joints;
//! - data-less accessors (no buffer view: zeros of any count) and counts past their view;
//! - deep hierarchies (chains of hundreds of nodes), cycles, nodes with two parents;
//! - colliding names (nodes, meshes, animations, morph targets from a pool of a few names);
//! - values at the edges: NaN, infinities, 1e20, denormals, keys out of order, strides of 0
//!   or past 252, indices one past the end.
//!
//! Shared by the fuzz target `gltf_structured` and the engine's stable test
//! `fuzz_regressions::the_structured_gltf_generator_feeds_the_oracle` (which includes this file by
//! path). Not here: what the importer must do with the result (`oracle.rs`).

#![allow(dead_code)]

use serde_json::{Value, json};

/// The bytes the generator reads its choices from; once they run out, a xorshift stream
/// seeded from them. `hostile` (the first byte's low bit) allows the faults ([`Choices::bad`]);
/// a document built without it is valid glTF, so the importer's happy path and the player are
/// fuzzed too, with every sharing and size shape.
struct Choices<'a> {
    data: &'a [u8],
    at: usize,
    stream: u64,
    hostile: bool,
}

impl<'a> Choices<'a> {
    fn new(data: &'a [u8]) -> Self {
        let seed = data
            .iter()
            .fold(0x9e37_79b9_7f4a_7c15u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3));
        let mut c = Choices { data, at: 0, stream: seed | 1, hostile: false };
        c.hostile = c.byte() & 1 == 1;
        c
    }

    fn byte(&mut self) -> u8 {
        let b = match self.data.get(self.at) {
            Some(b) => *b,
            None => {
                self.stream ^= self.stream << 13;
                self.stream ^= self.stream >> 7;
                self.stream ^= self.stream << 17;
                (self.stream >> 24) as u8
            }
        };
        self.at += 1;
        b
    }

    /// A fault, with odds `k` in 256, in a hostile document only.
    fn bad(&mut self, k: u8) -> bool {
        self.hostile && self.odds(k)
    }

    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.byte(), self.byte()])
    }

    /// A number below `n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { self.u16() as usize % n }
    }

    /// True with odds `k` in 256.
    fn odds(&mut self, k: u8) -> bool {
        self.byte() < k
    }

    /// A float: mostly ordinary (in -2..2), sometimes one of the edge values.
    fn float(&mut self) -> f32 {
        const EDGES: [f32; 10] =
            [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1e20, -1e20, 1e-40, -0.0, 0.0, f32::MAX, 1e-7];
        if self.bad(12) { EDGES[self.below(EDGES.len())] } else { (self.u16() as f32 / 65535.0) * 4.0 - 2.0 }
    }

    /// A float JSON can hold (NaN and the infinities are written as `null` by JSON writers, so
    /// the JSON's edge values are the finite ones; the binary data holds the others).
    fn json_float(&mut self) -> f32 {
        let v = self.float();
        if v.is_finite() { v } else { 1e20 }
    }

    /// A count: mostly small, sometimes large (the amplification shapes).
    fn count(&mut self, small: usize) -> usize {
        match self.byte() {
            0..=235 => 1 + self.below(small),
            236..=250 => 1 + self.below(4096),
            _ => [65_536, 1 << 20, 1 << 24, 1 << 28][self.below(4)],
        }
    }

    fn name(&mut self) -> Value {
        const NAMES: [&str; 6] = ["", "a", "Hips", "walk", "a.001", "Armature"];
        if self.odds(8) { json!("x".repeat(self.below(300))) } else { json!(NAMES[self.below(NAMES.len())]) }
    }
}

/// What the generator is building: the JSON arrays and the binary chunk.
#[derive(Default)]
struct Doc {
    bin: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

/// Accessor kinds the generator writes data for.
#[derive(Clone, Copy)]
enum Data {
    Vec3,
    Vec4,
    Joints,
    Weights,
    Indices,
    Times,
    Scalars,
    Mat4,
}

impl Data {
    fn layout(self) -> (u32, &'static str, usize) {
        match self {
            Data::Vec3 => (5126, "VEC3", 12),
            Data::Vec4 | Data::Weights => (5126, "VEC4", 16),
            Data::Joints => (5123, "VEC4", 8),
            Data::Indices => (5123, "SCALAR", 2),
            Data::Times | Data::Scalars => (5126, "SCALAR", 4),
            Data::Mat4 => (5126, "MAT4", 64),
        }
    }
}

impl Doc {
    /// Writes `count` elements of `kind` (values from `c`), adds a view and an accessor over
    /// them, and returns the accessor's index. Sometimes the accessor is data-less, shares the
    /// previous view, or claims more elements than its view holds.
    fn accessor(&mut self, c: &mut Choices, kind: Data, count: usize, bound: usize) -> usize {
        let (component, ty, size) = kind.layout();
        let index = self.accessors.len();
        let zeros_ok = matches!(kind, Data::Vec3 | Data::Scalars);
        if count > 2048 || (zeros_ok && c.odds(10)) || c.bad(10) {
            // Data-less: zeros, of a count that may be huge (the amplification shapes).
            let n = if c.bad(128) { c.count(4096) } else { count };
            self.accessors.push(json!({ "componentType": component, "type": ty, "count": n }));
            return index;
        }
        let stored = count.min(2048);
        while !self.bin.len().is_multiple_of(4) {
            self.bin.push(0);
        }
        let offset = self.bin.len();
        for i in 0..stored {
            self.element(c, kind, i, bound);
        }
        let share = c.bad(20) && !self.views.is_empty();
        let view = if share {
            self.views.len() - 1
        } else {
            let mut v = json!({ "buffer": 0, "byteOffset": offset, "byteLength": stored * size });
            if c.bad(10) {
                v["byteStride"] = json!([0, 4, size, 252, 256][c.below(5)]);
            } else if size >= 4
                && !matches!(kind, Data::Indices | Data::Times | Data::Scalars | Data::Mat4)
                && c.odds(10)
            {
                v["byteStride"] = json!(size);
            }
            self.views.push(v);
            self.views.len() - 1
        };
        let claimed = if c.bad(6) { stored + 1 + c.below(8) } else { stored };
        let mut a = json!({ "bufferView": view, "componentType": component, "type": ty, "count": claimed });
        if matches!(kind, Data::Vec3) && c.odds(200) {
            a["min"] = json!([-2.0, -2.0, -2.0]);
            a["max"] = json!([2.0, 2.0, 2.0]);
        }
        if c.bad(4) {
            a["componentType"] = json!([5120, 5121, 5122, 5125, 5126, 1][c.below(6)]);
        }
        self.accessors.push(a);
        index
    }

    fn element(&mut self, c: &mut Choices, kind: Data, i: usize, bound: usize) {
        let f = |bin: &mut Vec<u8>, v: f32| bin.extend_from_slice(&v.to_le_bytes());
        match kind {
            Data::Vec3 => (0..3).for_each(|_| f(&mut self.bin, c.float())),
            Data::Vec4 => {
                // Rotations: a unit quaternion, sometimes not.
                let q = [c.float(), c.float(), c.float(), 1.0];
                let n = q.iter().map(|v| v * v).sum::<f32>().sqrt();
                q.iter().for_each(|v| f(&mut self.bin, if c.bad(16) { *v } else { v / n }));
            }
            Data::Weights => {
                let w = if !c.bad(26) {
                    [1.0, 0.0, 0.0, 0.0]
                } else {
                    [c.float(), c.float(), c.float(), c.float()]
                };
                w.iter().for_each(|v| f(&mut self.bin, *v));
            }
            Data::Joints => (0..4).for_each(|_| {
                let j = if c.bad(8) { bound + c.below(3) } else { c.below(bound.max(1)) };
                self.bin.extend_from_slice(&(j as u16).to_le_bytes());
            }),
            Data::Indices => {
                let j = if c.bad(4) { bound } else { c.below(bound.max(1)) };
                self.bin.extend_from_slice(&(j as u16).to_le_bytes());
            }
            Data::Times => {
                let t = if c.bad(6) { c.float() } else { i as f32 / 30.0 };
                f(&mut self.bin, t);
            }
            Data::Scalars => f(&mut self.bin, c.float()),
            Data::Mat4 => {
                for k in 0..16 {
                    let v = if k % 5 == 0 { 1.0 } else { 0.0 };
                    f(&mut self.bin, if c.bad(8) { c.float() } else { v });
                }
            }
        }
    }
}

/// Node parents: a chain, a star or a random tree (each `parent < index`), sometimes with a
/// cycle or a node under two parents; returns each node's children.
fn hierarchy(c: &mut Choices, nodes: usize) -> Vec<Vec<usize>> {
    let mut children = vec![Vec::new(); nodes];
    let shape = c.below(3);
    for i in 1..nodes {
        let parent = match shape {
            0 => i - 1,
            1 => 0,
            _ => c.below(i),
        };
        children[parent].push(i);
    }
    if nodes > 1 && c.bad(6) {
        children[nodes - 1].push(c.below(nodes)); // a cycle (or a node its own child)
    }
    if nodes > 2 && c.bad(6) {
        children[1].push(nodes - 1); // two parents
    }
    children
}

/// The meshes, each with whether its primitives carry a skin's attributes.
fn meshes(c: &mut Choices, doc: &mut Doc, joints: usize) -> Vec<(Value, bool)> {
    let mut meshes = Vec::new();
    for _ in 0..c.below(4) {
        // Now and then a mesh of a huge vertex count (its accessors data-less) drawn by many
        // primitives: the shared-accessor amplification the cost budget must refuse.
        // (A million vertices under 24 or more primitives is past the 512 MiB build budget; a
        // mesh that imports stays small enough, 2,048 vertices under at most 8 primitives, to
        // play within the fuzzer's 1 s in an instrumented build on a loaded 2-core machine.)
        let big = c.odds(12);
        let vertices = if big {
            1 << 20
        } else if c.odds(12) {
            2048
        } else {
            3 + c.below(60)
        };
        let position = doc.accessor(c, Data::Vec3, vertices, 0);
        let normal = doc.accessor(c, Data::Vec3, vertices, 0);
        let skinned = joints > 0 && c.odds(160);
        let skin = skinned.then(|| {
            (doc.accessor(c, Data::Joints, vertices, joints), doc.accessor(c, Data::Weights, vertices, 0))
        });
        let indices = c.odds(128).then(|| doc.accessor(c, Data::Indices, vertices * 2, vertices));
        let targets: Vec<Value> = (0..c.below(4))
            .map(|_| {
                let shared = c.odds(64);
                json!({ "POSITION": if shared { position } else { doc.accessor(c, Data::Vec3, vertices, 0) } })
            })
            .collect();
        // Many primitives sharing the same accessors (the amplification shape), at times.
        let primitives = if big {
            24 + c.below(40)
        } else if c.odds(24) {
            1 + c.below(8)
        } else {
            1 + c.below(3)
        };
        let primitive = {
            let mut attributes = json!({ "POSITION": position, "NORMAL": normal });
            if let Some((j, w)) = skin {
                attributes["JOINTS_0"] = json!(j);
                attributes["WEIGHTS_0"] = json!(w);
            }
            let mut p = json!({ "attributes": attributes, "mode": if c.bad(16) { c.below(8) } else { 4 } });
            if let Some(i) = indices {
                p["indices"] = json!(i);
            }
            if !targets.is_empty() {
                p["targets"] = json!(targets);
            }
            p
        };
        let mut mesh = json!({ "name": c.name(), "primitives": vec![primitive; primitives.min(4096)] });
        if !targets.is_empty() && c.odds(128) {
            mesh["extras"] =
                json!({ "targetNames": (0..targets.len()).map(|_| c.name()).collect::<Vec<_>>() });
            mesh["weights"] = json!((0..targets.len()).map(|_| c.json_float()).collect::<Vec<_>>());
        }
        meshes.push((mesh, skinned));
    }
    meshes
}

fn skins(c: &mut Choices, doc: &mut Doc, nodes: usize) -> Vec<Value> {
    (0..c.below(3))
        .map(|_| {
            let n = 1 + c.below(nodes.min(40));
            // A prefix of the nodes (each parent before its child) is one tree; elsewhere, a
            // window that may not be.
            let first = if c.hostile { c.below(nodes) } else { 0 };
            let joints: Vec<usize> =
                (0..n).map(|k| if c.bad(8) { c.below(nodes + 2) } else { (first + k) % nodes }).collect();
            let mut s = json!({ "joints": joints, "name": c.name() });
            if c.odds(160) {
                s["inverseBindMatrices"] = json!(doc.accessor(c, Data::Mat4, n, 0));
            }
            if c.bad(64) {
                s["skeleton"] = json!(c.below(nodes + 1));
            }
            s
        })
        .collect()
}

fn animations(c: &mut Choices, doc: &mut Doc, nodes: usize) -> Vec<Value> {
    (0..c.below(4))
        .map(|_| {
            let keys = 1 + c.below(40);
            let input = doc.accessor(c, Data::Times, keys, 0);
            let mut samplers = Vec::new();
            let mut channels = Vec::new();
            for _ in 0..1 + c.below(6) {
                let paths = if c.hostile { 4 } else { 3 };
                let (path, kind) = [
                    ("translation", Data::Vec3),
                    ("rotation", Data::Vec4),
                    ("scale", Data::Vec3),
                    ("weights", Data::Scalars),
                ][c.below(paths)];
                let cubic = c.odds(40);
                let n = if cubic { keys * 3 } else { keys };
                let output = doc.accessor(c, kind, n, 0);
                let interpolation = if cubic {
                    "CUBICSPLINE"
                } else {
                    ["LINEAR", "STEP", "LINEAR", "BOGUS"][c.below(if c.hostile { 4 } else { 3 })]
                };
                samplers.push(json!({ "input": input, "output": output, "interpolation": interpolation }));
                // Many channels on one sampler, at times.
                let uses = if c.odds(24) { c.count(64).min(4096) } else { 1 };
                for _ in 0..uses {
                    let past = usize::from(c.bad(16));
                    let node = c.below(nodes + past);
                    channels.push(
                        json!({ "sampler": samplers.len() - 1, "target": { "node": node, "path": path } }),
                    );
                }
            }
            json!({ "name": c.name(), "samplers": samplers, "channels": channels })
        })
        .collect()
}

/// A GLB built from `data` (any bytes; the same bytes always give the same file).
pub fn generate(data: &[u8]) -> Vec<u8> {
    let c = &mut Choices::new(data);
    let mut doc = Doc::default();
    let nodes = if c.odds(16) { 100 + c.below(1500) } else { 1 + c.below(24) };
    let children = hierarchy(c, nodes);
    let skins = skins(c, &mut doc, nodes);
    let meshes = meshes(c, &mut doc, skins.first().map_or(0, |s| s["joints"].as_array().map_or(0, Vec::len)));
    let mut node_list = Vec::with_capacity(nodes);
    for (i, kids) in children.iter().enumerate() {
        let mut n = json!({ "name": c.name() });
        if !kids.is_empty() {
            n["children"] = json!(kids);
        }
        if c.odds(48) {
            n["translation"] = json!([c.json_float(), c.json_float(), c.json_float()]);
        }
        if c.odds(24) {
            n["rotation"] = json!([c.json_float(), c.json_float(), c.json_float(), c.json_float()]);
        }
        if c.odds(16) {
            n["scale"] = json!([c.json_float(), c.json_float(), c.json_float()]);
        }
        if c.bad(4) {
            n["matrix"] = json!((0..16).map(|_| c.json_float()).collect::<Vec<_>>());
        }
        if !meshes.is_empty() && (i == nodes - 1 || c.odds(24)) {
            let m = if c.bad(8) { meshes.len() } else { c.below(meshes.len()) };
            n["mesh"] = json!(m);
            let skinned = meshes.get(m).is_some_and(|m| m.1);
            if !skins.is_empty() && (c.hostile || skinned) && c.odds(200) {
                n["skin"] = json!(if c.hostile { c.below(skins.len()) } else { 0 });
            }
        }
        node_list.push(n);
    }
    let animations = animations(c, &mut doc, nodes);
    let mut images = Vec::new();
    if c.odds(16) && !doc.views.is_empty() {
        // Images sharing one buffer view.
        images =
            (0..c.count(8).min(4096)).map(|_| json!({ "bufferView": 0, "mimeType": "image/png" })).collect();
    }
    let roots: Vec<usize> = if c.bad(16) { (0..c.below(nodes + 1)).collect() } else { vec![0] };
    while !doc.bin.len().is_multiple_of(4) {
        doc.bin.push(0);
    }
    let mut root = json!({
        "asset": { "version": "2.0", "generator": "marrow gltf_gen" },
        "buffers": [{ "byteLength": doc.bin.len() }],
        "bufferViews": doc.views,
        "accessors": doc.accessors,
        "nodes": node_list,
        "scenes": [{ "nodes": roots }],
        "scene": 0,
    });
    let meshes: Vec<Value> = meshes.into_iter().map(|m| m.0).collect();
    for (key, list) in [("meshes", meshes), ("skins", skins), ("animations", animations), ("images", images)]
    {
        if !list.is_empty() {
            root[key] = json!(list);
        }
    }
    glb(&serde_json::to_vec(&root).unwrap_or_default(), &doc.bin)
}

/// The GLB container: header, JSON chunk (space-padded), BIN chunk (zero-padded).
fn glb(json: &[u8], bin: &[u8]) -> Vec<u8> {
    let pad = |n: usize| n.div_ceil(4) * 4;
    let (jl, bl) = (pad(json.len()), pad(bin.len()));
    let total = 12 + 8 + jl + 8 + bl;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(jl as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(json);
    out.resize(20 + jl, b' ');
    out.extend_from_slice(&(bl as u32).to_le_bytes());
    out.extend_from_slice(b"BIN\0");
    out.extend_from_slice(bin);
    out.resize(total, 0);
    out
}
