//! What an import will BUILD, counted from the JSON before anything is allocated: every
//! primitive's vertex streams (positions, normals, tangents, UVs, colours, skin streams, each
//! morph target's offsets) and indices, every skin's joints, every channel's keys in every rig
//! its node is a bone of, and every marker on every clip. The decoded-bytes budget
//! ([`super::DECODE_BUDGET_BYTES`]) counts each accessor once; this one counts each USE, so one
//! small (or data-less) accessor shared by many primitives, attributes, targets, samplers or
//! channels cannot make the import build gigabytes. Past [`BUILD_BUDGET_BYTES`] the import is
//! refused with a fault naming the counts, the bytes and the limit.
//!
//! Not here: decoding (see `load.rs`) or what the built data means (see `mod.rs`).

use super::*;

/// How many bytes of built data (vertex streams, indices, skins, tracks, markers) one import
/// may hold, counted per use: a file whose accessors decode within
/// `DECODE_BUDGET_BYTES` (f64 values) and are each used once builds at most half
/// that (f32 values).
pub const BUILD_BUDGET_BYTES: u64 = 512 << 20;

/// Bytes, for a message: `5.4 GB`, `12.0 MB`, `800 bytes`.
pub(crate) fn bytes_text(b: u64) -> String {
    match b {
        b if b >= 1 << 30 => format!("{:.1} GB", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{:.1} MB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KB", b as f64 / (1u64 << 10) as f64),
        b => format!("{b} bytes"),
    }
}

/// Built bytes by kind, in the order they are named.
#[derive(Default)]
struct Tally {
    kinds: Vec<(&'static str, u64)>,
}

impl Tally {
    fn add(&mut self, kind: &'static str, bytes: u64) {
        match self.kinds.iter_mut().find(|k| k.0 == kind) {
            Some(k) => k.1 = k.1.saturating_add(bytes),
            None => self.kinds.push((kind, bytes)),
        }
    }

    fn total(&self) -> u64 {
        self.kinds.iter().fold(0u64, |a, k| a.saturating_add(k.1))
    }

    /// `5.4 GB of positions, 1.2 GB of morph targets`, largest first.
    fn text(&self) -> String {
        let mut k: Vec<_> = self.kinds.iter().filter(|k| k.1 > 0).collect();
        k.sort_by_key(|b| std::cmp::Reverse(b.1));
        k.iter().map(|(n, b)| format!("{} of {n}", bytes_text(*b))).collect::<Vec<_>>().join(", ")
    }
}

impl Builder<'_> {
    /// The element count of accessor `a` (0 for one that does not exist: that is said elsewhere).
    fn count_of(&self, a: usize) -> u64 {
        self.root.accessors.get(a).map_or(0, |x| x.count as u64)
    }

    /// Components per element of accessor `a` (1 when unknown).
    fn comps_of(&self, a: usize) -> u64 {
        self.root.accessors.get(a).and_then(|x| load::component_count(&x.kind)).unwrap_or(1) as u64
    }

    /// Counts what the meshes and skins will build; `false` (with the fault said) when it is
    /// past the budget, before anything is decoded.
    pub(super) fn check_mesh_cost(&mut self) -> bool {
        let root = self.root;
        let mut t = Tally::default();
        let mut prims = 0u64;
        for m in &root.meshes {
            for p in &m.primitives {
                prims += 1;
                let Some(&pos) = p.attributes.get("POSITION") else { continue };
                let n = self.count_of(pos);
                let per = |bytes: u64| n.saturating_mul(bytes);
                t.add("positions", per(12));
                for (attr, kind, bytes) in [
                    ("NORMAL", "normals", 12),
                    ("TANGENT", "tangents", 16),
                    ("TEXCOORD_0", "texture coordinates", 8),
                    ("COLOR_0", "colours", 16),
                ] {
                    if p.attributes.contains_key(attr) {
                        t.add(kind, per(bytes));
                    }
                }
                if p.attributes.contains_key("JOINTS_0") {
                    // Joints and weights, kept 4 a vertex (up to 8 read).
                    t.add("skin weights", per(24));
                }
                if let Some(i) = p.indices {
                    t.add("indices", self.count_of(i).saturating_mul(4));
                }
                for target in &p.targets {
                    let streams =
                        ["POSITION", "NORMAL", "TANGENT"].iter().filter(|a| target.contains_key(**a)).count();
                    t.add("morph targets", per(12).saturating_mul(streams as u64));
                }
            }
        }
        let joints: u64 = root.skins.iter().map(|s| s.joints.len() as u64).sum();
        // Per joint: two matrices (the skin's and its bone's), a bind pose, a name, a parent.
        t.add("skin joints", joints.saturating_mul(64 * 2 + 40 + 32));
        let skins = match root.skins.len() {
            0 => String::new(),
            n => format!(" and {n} skins"),
        };
        self.over_budget(&t, format!("{prims} primitives{skins}"))
    }

    /// Counts what the animations will build (each channel's keys in every rig its node is a
    /// bone of, each marker on every clip); `false` (with the fault said) when past the budget.
    pub(super) fn check_animation_cost(&mut self, nodes: &[Node], meshes: &[Mesh]) -> bool {
        let root = self.root;
        let mut t = Tally::default();
        let mut channels = 0u64;
        let mut samplers = 0u64;
        for a in &root.animations {
            for s in &a.samplers {
                // Each sampler's key times, read as f32.
                samplers += 1;
                t.add("key times", self.count_of(s.input).saturating_mul(4));
            }
            let mut rigs = std::collections::HashSet::new();
            for c in &a.channels {
                channels += 1;
                let (Some(node), Some(s)) = (c.target.node, a.samplers.get(c.sampler)) else { continue };
                let Some(nd) = nodes.get(node) else { continue };
                let keys = self.count_of(s.input);
                let values = self.count_of(s.output).saturating_mul(self.comps_of(s.output));
                // Times and values as f32, plus the values read once as f32.
                let bytes = if c.target.path == "weights" {
                    // One track per target: its own times, its share of the values.
                    let targets = nd.mesh.and_then(|m| meshes.get(m)).map_or(0, |m| m.weights.len()).max(1);
                    keys.saturating_mul(targets as u64).saturating_add(values).saturating_mul(4)
                } else {
                    // A copy of the track in every rig the node is a bone of.
                    let one = keys.saturating_add(values).saturating_mul(4);
                    one.saturating_mul(nd.bones.len().max(1) as u64)
                };
                rigs.extend(nd.bones.iter().map(|b| b.rig));
                // Plus the values read once as f32 and the times copied for the channel.
                let read = values.saturating_add(keys).saturating_mul(4);
                t.add("animation keys", bytes.saturating_add(read));
            }
            let markers = a.extras.as_ref().and_then(|e| e.get("markers")).and_then(|m| m.as_array());
            if let Some(list) = markers {
                let each: u64 = list
                    .iter()
                    .map(|m| m.get("name").and_then(|n| n.as_str()).map_or(0, str::len) as u64 + 32)
                    .sum();
                t.add("markers", each.saturating_mul(rigs.len().max(1) as u64));
            }
        }
        self.over_budget(&t, format!("{channels} animation channels and {samplers} animation samplers"))
    }

    fn over_budget(&mut self, t: &Tally, what: String) -> bool {
        let total = t.total();
        let used = self.built_bytes.saturating_add(total);
        if used <= BUILD_BUDGET_BYTES {
            self.built_bytes = used;
            return true;
        }
        let before = if self.built_bytes > 0 {
            format!(" ({} built before them)", bytes_text(self.built_bytes))
        } else {
            String::new()
        };
        self.fault(
            Location::File,
            format!(
                "{what} would hold {}{before}; the limit is {} of built data per import",
                t.text(),
                bytes_text(BUILD_BUDGET_BYTES)
            ),
        );
        false
    }
}
