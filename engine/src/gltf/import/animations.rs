//! Animations: samplers (key times checked), channels into clips per rig, transform animations
//! of non-joint nodes and morph weight tracks; names made unique.

use super::*;

impl Builder<'_> {
    fn track<T: Animatable>(
        &mut self,
        at: Location,
        interp: Interpolation,
        times: &[f32],
        values: Vec<T>,
    ) -> Option<Track<T>> {
        let n = times.len();
        let track = if interp == Interpolation::CubicSpline {
            if values.len() != 3 * n {
                self.fault(
                    at,
                    format!("CUBICSPLINE output has {} values for {n} keys (needs {})", values.len(), 3 * n),
                );
                return None;
            }
            let mut a = Vec::with_capacity(n);
            let mut v = Vec::with_capacity(n);
            let mut b = Vec::with_capacity(n);
            for c in values.chunks_exact(3) {
                a.push(c[0]);
                v.push(c[1]);
                b.push(c[2]);
            }
            Track::cubic_from_keys_unchecked(times.to_vec(), a, v, b)
        } else {
            if values.len() != n {
                self.fault(at, format!("output has {} values for {n} keys", values.len()));
                return None;
            }
            Track::from_keys_unchecked(interp, times.to_vec(), values)
        };
        match track {
            Ok(t) => match t.find_fault() {
                None => Some(t),
                Some(f) => {
                    self.fault(at, f.to_string());
                    None
                }
            },
            Err(f) => {
                self.fault(at, f.to_string());
                None
            }
        }
    }

    pub(super) fn animations(&mut self, nodes: &[Node], meshes: &[Mesh], rigs: &[Rig]) -> Vec<Animation> {
        let root = self.root;
        let mut out = Vec::new();
        if !self.check_animation_cost(nodes, meshes) {
            return out;
        }
        for (ai, a) in root.animations.iter().enumerate() {
            let inputs = self.sampler_inputs(ai, a);
            let name = a.name.clone().unwrap_or_else(|| format!("animation{ai}"));
            let duration =
                inputs.iter().flatten().filter_map(|(t, _)| t.last().copied()).fold(0.0f32, f32::max);
            let mut anim =
                Animation { name, duration, clips: Vec::new(), nodes: Vec::new(), morphs: Vec::new() };
            // Channels Marrow's export added only to carry a clip's length (`extras.holds`) are
            // not the clip's: they are dropped.
            let holds = held_channels(a.extras.as_ref());
            let mut at = Placing::default();
            for (ci, c) in a.channels.iter().enumerate() {
                if let Some(n) = c.target.node.filter(|&n| holds.contains(&(n, c.target.path.as_str()))) {
                    // The hold still says which rig plays the clip (an empty clip is a clip).
                    for br in nodes.get(n).map_or(&[][..], |n| &n.bones[..]) {
                        if let Some(rig) = rigs.get(br.rig) {
                            at.rig_clip(&mut anim, rig, br.rig);
                        }
                    }
                    continue;
                }
                self.channel((ai, ci), c, a, &inputs, (nodes, meshes, rigs), (&mut anim, &mut at));
            }
            anim.morphs = at.morphs.into_iter().flatten().collect();
            // Markers (Marrow's export writes them in `extras.markers`): on every clip of the
            // animation; entries without a string name and a finite time are skipped. The clip's
            // looping, frame rate and length come back the same way.
            let markers: Vec<crate::clip::Marker> = a
                .extras
                .as_ref()
                .and_then(|e| e.get("markers"))
                .and_then(|m| m.as_array())
                .map(|list| {
                    list.iter()
                        .filter_map(|m| {
                            let name = m.get("name")?.as_str()?.to_owned();
                            let time = m.get("time")?.as_f64()? as f32;
                            time.is_finite().then_some(crate::clip::Marker { name, time })
                        })
                        .collect()
                })
                .unwrap_or_default();
            if !markers.is_empty() {
                for c in &mut anim.clips {
                    c.clip.set_markers(markers.clone());
                }
            }
            // The rate the keys are sampled at, unless Marrow's extras say (they win).
            for c in &mut anim.clips {
                c.clip.frame_rate = crate::frame_rate::clip_frame_rate(&c.clip).unwrap_or(c.clip.frame_rate);
            }
            clip_settings(a.extras.as_ref(), &mut anim);
            out.push(anim);
        }
        let mut names: Vec<String> = out.iter().map(|a| a.name.clone()).collect();
        unique(&mut names);
        for (a, n) in out.iter_mut().zip(names) {
            if a.name != n {
                a.name = n.clone();
                for c in &mut a.clips {
                    c.clip.name = n.clone();
                }
            }
        }
        out
    }

    /// The samplers' key times, checked (finite, strictly increasing), with their
    /// interpolation; `None` for a sampler at fault (said).
    fn sampler_inputs(&mut self, ai: usize, a: &json::Animation) -> Vec<Option<(Vec<f32>, Interpolation)>> {
        let mut inputs: Vec<Option<(Vec<f32>, Interpolation)>> = Vec::new();
        for (si, s) in a.samplers.iter().enumerate() {
            let at = Location::AnimationSampler { animation: ai, sampler: si };
            let interp = match s.interpolation.as_deref() {
                None | Some("LINEAR") => Interpolation::Linear,
                Some("STEP") => Interpolation::Step,
                Some("CUBICSPLINE") => Interpolation::CubicSpline,
                Some(other) => {
                    self.fault(at, format!("unknown interpolation {other:?}"));
                    inputs.push(None);
                    continue;
                }
            };
            let Some(d) = self.read(s.input) else {
                inputs.push(None);
                continue;
            };
            if d.components != 1 {
                self.fault(
                    Location::Accessor(s.input),
                    format!("animation {ai} sampler {si} input must be SCALAR"),
                );
                inputs.push(None);
                continue;
            }
            let times: Vec<f32> = d.values.iter().map(|&v| v as f32).collect();
            let mut bad = false;
            for (k, &t) in times.iter().enumerate() {
                if !t.is_finite() {
                    self.fault(
                        at.clone(),
                        format!("input accessor {}: key {k} time {t} is not finite", s.input),
                    );
                    bad = true;
                    break;
                }
                if k > 0 && t <= times[k - 1] {
                    self.fault(
                        at.clone(),
                        format!(
                            "input accessor {}: key times are not increasing: key {k} at t = {} is not after key {} at t = {}",
                            s.input,
                            crate::math::Num(t),
                            k - 1,
                            crate::math::Num(times[k - 1])
                        ),
                    );
                    bad = true;
                    break;
                }
            }
            if times.is_empty() {
                self.fault(at.clone(), format!("input accessor {} has no keys", s.input));
                bad = true;
            }
            inputs.push(if bad { None } else { Some((times, interp)) });
        }
        inputs
    }

    /// Channel `ci` of animation `ai`: its output checked against its path and sampler, then
    /// into `anim`: a morph weight track per target, a bone track in the clip of each rig the
    /// node is a bone of, or a transform track of a non-joint node.
    fn channel(
        &mut self,
        (ai, ci): (usize, usize),
        c: &json::Channel,
        a: &json::Animation,
        inputs: &[Option<(Vec<f32>, Interpolation)>],
        (nodes, meshes, rigs): (&[Node], &[Mesh], &[Rig]),
        (anim, placing): (&mut Animation, &mut Placing),
    ) {
        let at = Location::AnimationChannel { animation: ai, channel: ci };
        let Some(node) = c.target.node else { return };
        if node >= nodes.len() {
            self.fault(at, format!("targets node {node}, but the file has {} nodes", nodes.len()));
            return;
        }
        let Some(sampler) = a.samplers.get(c.sampler) else {
            self.fault(
                at,
                format!("names sampler {}, but the animation has {}", c.sampler, a.samplers.len()),
            );
            return;
        };
        let Some(Some((times, interp))) = inputs.get(c.sampler).cloned() else { return };
        let sat = Location::AnimationSampler { animation: ai, sampler: c.sampler };
        let out_acc = sampler.output;
        let comps = match c.target.path.as_str() {
            "translation" | "scale" => 3,
            "rotation" => 4,
            "weights" => 1,
            other => {
                self.warn(at, format!("path {other:?} is not supported; channel skipped"));
                return;
            }
        };
        let Some(d) = self.read(out_acc) else { return };
        if d.components != comps {
            self.fault(
                Location::Accessor(out_acc),
                format!(
                    "animation {ai} channel {ci} ({}) output has {} components, expected {comps}",
                    c.target.path, d.components
                ),
            );
            return;
        }
        if let Some(k) = d.values.iter().position(|v| !(*v as f32).is_finite()) {
            self.fault(
                Location::Accessor(out_acc),
                format!(
                    "animation {ai} channel {ci} ({}) output value {} is not finite ({})",
                    c.target.path,
                    k / comps,
                    d.values[k]
                ),
            );
            return;
        }
        let vals = d.to_f32();
        match c.target.path.as_str() {
            "weights" => {
                let targets = nodes[node].mesh.and_then(|m| meshes.get(m)).map_or(0, |m| m.weights.len());
                if targets == 0 {
                    self.fault(
                        at,
                        format!("animates the morph weights of node {node}, which has no morph targets"),
                    );
                    return;
                }
                let per_key = if interp == Interpolation::CubicSpline { 3 } else { 1 };
                if vals.len() != times.len() * per_key * targets {
                    self.fault(
                        sat,
                        format!(
                            "output accessor {out_acc} has {} values; {} keys x {targets} targets needs {}",
                            vals.len(),
                            times.len(),
                            times.len() * per_key * targets
                        ),
                    );
                    return;
                }
                let mut tracks = Vec::with_capacity(targets);
                for t in 0..targets {
                    let v: Vec<f32> = vals.chunks_exact(targets).map(|c| c[t]).collect();
                    let Some(tr) = self.track(sat.clone(), interp, &times, v) else { break };
                    tracks.push(tr);
                }
                if tracks.len() == targets {
                    placing.morph(node, MorphAnimation { node, weights: tracks });
                }
            }
            path => {
                let tr = if path == "rotation" {
                    let q: Vec<Quat> = vals
                        .chunks_exact(4)
                        .map(|c| {
                            let q = Quat::from_xyzw(c[0], c[1], c[2], c[3]);
                            if interp == Interpolation::CubicSpline {
                                q
                            } else {
                                try_normalize_q(q).unwrap_or(q)
                            }
                        })
                        .collect();
                    if interp != Interpolation::CubicSpline && q.iter().any(|q| q.length_squared() == 0.0) {
                        self.fault(
                            Location::Accessor(out_acc),
                            format!("animation {ai} channel {ci}: a rotation key is the zero quaternion"),
                        );
                        return;
                    }
                    let Some(t) = self.track(sat, interp, &times, q) else { return };
                    Tr::Q(t)
                } else {
                    let v: Vec<Vec3> = vals.chunks_exact(3).map(|c| Vec3::new(c[0], c[1], c[2])).collect();
                    let Some(t) = self.track(sat, interp, &times, v) else { return };
                    Tr::V(t)
                };
                placing.place(anim, nodes, rigs, node, path, tr);
            }
        }
    }
}

/// A transform track: a vector (translation, scale) or a rotation.
enum Tr {
    V(Track<Vec3>),
    Q(Track<Quat>),
}

/// Where an animation's clips, node animations and morph animations are, by rig and by node,
/// so placing each channel costs the same however many there are.
#[derive(Default)]
struct Placing {
    /// Rig -> index into `Animation::clips`.
    clip_at: HashMap<usize, usize>,
    /// Node -> index into `Animation::nodes`.
    node_at: HashMap<usize, usize>,
    /// The morph animations in the order they were last set (a node's earlier one is left
    /// `None` and its new one goes last, as a remove-and-push would leave them).
    morphs: Vec<Option<MorphAnimation>>,
    /// Node -> index into `morphs`.
    morph_at: HashMap<usize, usize>,
}

impl Placing {
    /// The index of rig `r`'s clip in `anim`, made (empty, as long as the animation) if missing.
    fn rig_clip(&mut self, anim: &mut Animation, rig: &Rig, r: usize) -> usize {
        *self.clip_at.entry(r).or_insert_with(|| {
            let mut clip = Clip::new(anim.name.clone(), &rig.skeleton);
            clip.length = anim.duration;
            anim.clips.push(RigClip { rig: r, clip });
            anim.clips.len() - 1
        })
    }

    /// Sets `node`'s morph weight animation (a later channel replaces an earlier one).
    fn morph(&mut self, node: usize, m: MorphAnimation) {
        if let Some(old) = self.morph_at.insert(node, self.morphs.len()) {
            self.morphs[old] = None;
        }
        self.morphs.push(Some(m));
    }

    /// Puts the track of `node`'s `path` into `anim`: a transform animation of a non-joint
    /// node, or a bone channel in the clip of each rig the node is a bone of.
    fn place(&mut self, anim: &mut Animation, nodes: &[Node], rigs: &[Rig], node: usize, path: &str, tr: Tr) {
        if nodes[node].bones.is_empty() {
            let i = *self.node_at.entry(node).or_insert_with(|| {
                anim.nodes.push(NodeAnimation {
                    node,
                    animation: PropertyAnimation { length: anim.duration, ..Default::default() },
                });
                anim.nodes.len() - 1
            });
            let pa = &mut anim.nodes[i].animation;
            match tr {
                Tr::Q(t) => pa.rotation = Some(t),
                Tr::V(t) if path == "translation" => pa.translation = Some(t),
                Tr::V(t) => pa.scale = Some(t),
            }
        } else {
            for br in &nodes[node].bones {
                let Some(rig) = rigs.get(br.rig) else { continue };
                let i = self.rig_clip(anim, rig, br.rig);
                let Some(ch) = anim.clips[i].clip.channels_mut().get_mut(br.bone) else { continue };
                match &tr {
                    Tr::Q(t) => ch.rotation = Some(t.clone()),
                    Tr::V(t) if path == "translation" => ch.translation = Some(t.clone()),
                    Tr::V(t) => ch.scale = Some(t.clone()),
                }
            }
        }
    }
}

/// A clip's own settings that Marrow's export writes into the animation's `extras` (`looping`,
/// `frameRate`, `length`; glTF has no words for them), onto every clip of the animation. A
/// value of the wrong type or out of range is ignored.
fn clip_settings(extras: Option<&serde_json::Value>, anim: &mut Animation) {
    let Some(e) = extras else { return };
    let looping = e.get("looping").and_then(|v| v.as_bool());
    let rate = e
        .get("frameRate")
        .and_then(|v| v.as_f64())
        .map(|v| v as f32)
        .filter(|r| r.is_finite() && *r > 0.0 && *r <= 1000.0);
    let length = e
        .get("length")
        .and_then(|v| v.as_f64())
        .map(|v| v as f32)
        .filter(|l| l.is_finite() && *l >= 0.0 && *l <= 1.0e6);
    for c in &mut anim.clips {
        if let Some(l) = looping {
            c.clip.looping = l;
        }
        if let Some(r) = rate {
            c.clip.frame_rate = r;
        }
        if let Some(l) = length {
            c.clip.length = l;
        }
    }
    if let Some(l) = length {
        anim.duration = anim.duration.max(l);
    }
}

/// The `(node, path)` targets listed in `extras.holds` (entries of another shape are ignored).
fn held_channels(extras: Option<&serde_json::Value>) -> std::collections::HashSet<(usize, &str)> {
    let Some(list) = extras.and_then(|e| e.get("holds")).and_then(|h| h.as_array()) else {
        return Default::default();
    };
    list.iter()
        .filter_map(|h| Some((usize::try_from(h.get("node")?.as_u64()?).ok()?, h.get("path")?.as_str()?)))
        .collect()
}
