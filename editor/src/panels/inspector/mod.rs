//! The Inspector: cards for the selection. For an entity: Transform, Animator (pickers, speed,
//! the preview transport and scrub), Bone Socket, Expressions (morph targets), Mesh, Particle
//! Cloud (`cloud_card`), Crowd (`crowd_card`). For a bone:
//! its place in the skeleton and its bind and current pose.
//!
//! Authored fields send edits (a drag of a number is one undo step: the app merges the edits of
//! one gesture). The transport and the scrub slider send session commands: they push no undo
//! step and never mark the document dirty.
//!
//! Not here: applying anything (`crate::app`).

use egui::{Color32, RichText};
use glam::{EulerRot, Quat, Vec3};
use marrow_engine::clip::find_clip_fault;
use marrow_engine::math::Transform;
use marrow_engine::project::Library;
use marrow_engine::scene::AssetSource;
use marrow_engine::scene::{AnimatorDesc, EntityDesc, MeshDesc, RootMotionDesc, SocketDesc, TargetBinding};
use marrow_engine::skeleton::Skeleton;

use crate::command::Command;
use crate::cx::Cx;
use crate::document::{EntityOp, Op, tree};
use crate::posing::DEFAULT_FPS;
use crate::ui_state::Selection;
use crate::widgets::{named, picker};

mod cloud_card;
mod crowd_card;

/// The Inspector panel.
#[derive(Debug, Default)]
pub struct Inspector;

/// Whether the clips at `reference` animate the skeleton `sk` (some clip of the file is made
/// for it by name).
fn clip_is_for(lib: &Library, reference: &str, sk: &Skeleton) -> bool {
    lib.clips(reference).iter().any(|c| c.skeleton == sk.name)
}

/// The Animator's clip menu: "(none)", the clips made for the rig's skeleton, then the other
/// rigs' clips greyed out under their own heading (they cannot be picked). Without a resolved
/// rig every clip is listed. Returns the choice.
fn clip_menu(
    ui: &mut egui::Ui,
    lib: &Library,
    current: Option<&str>,
    sk: Option<&Skeleton>,
) -> Option<Option<String>> {
    let mut chosen = None;
    if ui.selectable_label(current.is_none(), "(none)").clicked() {
        chosen = Some(None);
    }
    let (mine, others): (Vec<&str>, Vec<&str>) =
        lib.clip_refs().partition(|c| sk.is_none_or(|sk| clip_is_for(lib, c, sk)));
    for c in mine {
        if ui.selectable_label(current == Some(c), c).clicked() {
            chosen = Some(Some(c.to_owned()));
        }
    }
    if !others.is_empty() {
        ui.separator();
        ui.weak("For other rigs:");
        for c in others {
            let rig = lib.clips(c).first().map_or(String::new(), |x| x.skeleton.clone());
            ui.add_enabled(false, egui::Button::selectable(current == Some(c), c))
                .on_disabled_hover_text(format!("made for skeleton {rig:?}"));
        }
    }
    chosen
}

/// Three-number row: returns the edited vector when a number changed.
fn vec3_row(ui: &mut egui::Ui, label: &str, v: Vec3, speed: f64, suffix: &str) -> Option<Vec3> {
    let mut out = v;
    let mut changed = false;
    ui.label(label);
    for (i, axis) in ["X", "Y", "Z"].into_iter().enumerate() {
        // A typed number commits on Enter or focus loss (one edit, not one per keystroke).
        let r = ui.add(
            egui::DragValue::new(&mut out[i])
                .speed(speed)
                .suffix(suffix)
                .max_decimals(4)
                .update_while_editing(false),
        );
        changed |= named(r, egui::WidgetType::DragValue, &format!("{label} {axis}")).changed();
    }
    ui.end_row();
    (changed && out.is_finite()).then_some(out)
}

/// The XYZ Euler angles (radians) of `q` nearest rest: of the two triples that name a
/// rotation, the one of smaller angles, each within ±180 degrees.
fn rest_near_euler(q: Quat) -> Vec3 {
    marrow_engine::tangent::euler_near(q, Vec3::ZERO)
}

/// A transform editor (translation, rotation as XYZ Euler degrees, scale); returns the edited
/// transform when a number changed. `prefix` names the rows ("Position X", "Offset Position X").
pub fn transform_grid(ui: &mut egui::Ui, id: &str, t: &Transform, prefix: &str) -> Option<Transform> {
    let mut out = None;
    egui::Grid::new(id).num_columns(4).spacing([6.0, 4.0]).show(ui, |ui| {
        let p = |s: &str| if prefix.is_empty() { s.to_owned() } else { format!("{prefix} {s}") };
        if let Some(v) = vec3_row(ui, &p("Position"), t.translation, 0.01, "") {
            out = Some(Transform { translation: v, ..*t });
        }
        // Of the two triples that name the rotation, the one of smaller angles (the curve
        // view's choice for a first key): the canonical one holds pitch within ±90 degrees,
        // where a drag of Rotation Y turned over and stuck. `+ 0.0` turns -0.0 into 0.0.
        let deg = rest_near_euler(t.rotation) * (180.0 / std::f32::consts::PI) + Vec3::ZERO;
        if let Some(v) = vec3_row(ui, &p("Rotation"), deg, 0.5, "°") {
            let r = v * (std::f32::consts::PI / 180.0);
            out = Some(Transform {
                rotation: Quat::from_euler(EulerRot::XYZ, r.x, r.y, r.z).normalize(),
                ..*t
            });
        }
        if let Some(v) = vec3_row(ui, &p("Scale"), t.scale, 0.01, "") {
            out = Some(Transform { scale: v, ..*t });
        }
    });
    out
}

fn card(ui: &mut egui::Ui, title: &str, body: impl FnOnce(&mut egui::Ui)) {
    egui::CollapsingHeader::new(RichText::new(title).strong()).default_open(true).show(ui, body);
}

impl Inspector {
    /// Draws the panel.
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut Cx) {
        let Some((scene, desc)) = cx.scene() else {
            ui.weak("Nothing to inspect.");
            return;
        };
        let scene = scene.to_owned();
        match cx.ui.selection.clone() {
            Selection::None => {
                ui.weak("Select an entity in the Outliner or the Viewport.");
            }
            Selection::Entity(path) => match tree::find(desc, &path) {
                Some(e) => {
                    let e = e.clone();
                    self.entity(ui, cx, &scene, &path, &e);
                }
                None => {
                    ui.weak(format!("{path} is not in the scene."));
                }
            },
            Selection::Bone { rig, bone } => self.bone(ui, cx, &rig, &bone),
        }
    }

    fn entity(&mut self, ui: &mut egui::Ui, cx: &mut Cx, scene: &str, path: &str, e: &EntityDesc) {
        ui.horizontal(|ui| {
            ui.heading(&e.name);
            ui.weak(path);
        });
        let edit = |cx: &mut Cx, op: EntityOp| {
            cx.edit(Op::Entity { scene: scene.to_owned(), entity: path.to_owned(), op });
        };
        card(ui, "Transform", |ui| match &e.transform {
            Some(t) => {
                if e.socket.is_some() {
                    ui.label(
                        RichText::new("Placed by its bone socket each frame: this transform is an output.")
                            .small()
                            .weak(),
                    );
                }
                if let Some(t) = transform_grid(ui, "transform", t, "") {
                    edit(cx, EntityOp::SetTransform(Some(t)));
                }
            }
            None => {
                if ui.button("Add Transform").clicked() {
                    edit(cx, EntityOp::SetTransform(Some(Transform::IDENTITY)));
                }
            }
        });
        if let Some(a) = &e.animator {
            card(ui, "Animator", |ui| self.animator(ui, cx, path, a, &edit));
        }
        if let Some(s) = &e.socket {
            card(ui, "Bone Socket", |ui| self.socket(ui, cx, path, s, &edit));
        }
        if let Some(m) = &e.mesh {
            self.mesh_cards(ui, cx, path, e, m, &edit);
        }
        if let Some(c) = &e.crowd {
            card(ui, "Crowd", |ui| {
                crowd_card::crowd_card(ui, cx, path, c, &edit);
                if ui.button("Remove Crowd").clicked() {
                    edit(cx, EntityOp::SetCrowd(None));
                }
            });
        }
        if let Some(p) = &e.particles {
            card(ui, "Particle Cloud", |ui| {
                cloud_card::cloud_card(ui, cx, path, p, &edit);
                if ui.button("Remove Particle Cloud").clicked() {
                    edit(cx, EntityOp::SetParticles(None));
                }
            });
        }
        ui.separator();
        ui.horizontal_wrapped(|ui| {
            if e.animator.is_none() && ui.button("Add Animator").clicked() {
                let rig = cx.session.library().skeleton_refs().next().unwrap_or_default().to_owned();
                edit(
                    cx,
                    EntityOp::SetAnimator(Some(AnimatorDesc {
                        rig,
                        clip: None,
                        graph: None,
                        looping: None,
                        speed: 1.0,
                        play_on_start: true,
                        root_motion: None,
                        targets: Vec::new(),
                    })),
                );
            }
            if e.socket.is_none() && ui.button("Add Bone Socket").clicked() {
                edit(
                    cx,
                    EntityOp::SetSocket(Some(SocketDesc {
                        bone: String::new(),
                        offset: Transform::IDENTITY,
                    })),
                );
            }
            if e.particles.is_none()
                && let Some(cloud) = cloud_card::new_cloud(cx, e)
                && ui.button("Add Particle Cloud").clicked()
            {
                edit(cx, EntityOp::SetParticles(Some(cloud)));
            }
            if e.crowd.is_none()
                && let Some(crowd) = crowd_card::new_crowd(cx)
                && ui.button("Add Crowd").clicked()
            {
                edit(cx, EntityOp::SetCrowd(Some(crowd)));
            }
            if e.mesh.is_none() && ui.button("Add Box Mesh").clicked() {
                edit(cx, EntityOp::SetMesh(Some(MeshDesc::Box { half_extents: Vec3::splat(0.25) })));
            }
        });
    }

    fn animator(
        &mut self,
        ui: &mut egui::Ui,
        cx: &mut Cx,
        path: &str,
        a: &AnimatorDesc,
        edit: &dyn Fn(&mut Cx, EntityOp),
    ) {
        let lib = cx.session.library();
        let rig_skeleton = lib.skeleton(&a.rig).ok();
        let set = |cx: &mut Cx, f: &dyn Fn(&mut AnimatorDesc)| {
            let mut next = a.clone();
            f(&mut next);
            edit(cx, EntityOp::SetAnimator(Some(next)));
        };
        egui::Grid::new("animator").num_columns(2).spacing([6.0, 4.0]).show(ui, |ui| {
            ui.label("Rig");
            let mut rig = None;
            let r = picker(ui, "rig picker", &a.rig, 220.0).show_ui(ui, |ui| {
                for r in lib.skeleton_refs() {
                    if ui.selectable_label(r == a.rig, r).clicked() {
                        rig = Some(r.to_owned());
                    }
                }
            });
            named(r.response, egui::WidgetType::ComboBox, "Rig").on_hover_text(&a.rig);
            if let Some(r) = rig {
                set(cx, &|d| d.rig = r.clone());
            }
            ui.end_row();

            ui.label("Clip");
            let mut clip: Option<Option<String>> = None;
            let shown = a.clip.as_deref().unwrap_or("(none)");
            let r = picker(ui, "clip picker", shown, 220.0)
                .show_ui(ui, |ui| clip = clip_menu(ui, lib, a.clip.as_deref(), rig_skeleton.as_deref()));
            named(r.response, egui::WidgetType::ComboBox, "Clip").on_hover_text(shown);
            if let Some(c) = clip {
                set(cx, &|d| d.clip = c.clone());
            }
            ui.end_row();

            ui.label("Graph");
            let mut graph: Option<Option<String>> = None;
            let graphs = &cx.doc.project().manifest.graphs;
            let shown = a.graph.as_deref().unwrap_or("(none)");
            let r = picker(ui, "graph picker", shown, 220.0).show_ui(ui, |ui| {
                if ui.selectable_label(a.graph.is_none(), "(none)").clicked() {
                    graph = Some(None);
                }
                for g in graphs {
                    if ui.selectable_label(a.graph.as_deref() == Some(g), g).clicked() {
                        graph = Some(Some(g.clone()));
                    }
                }
            });
            r.response.on_hover_text(shown);
            if let Some(g) = graph {
                set(cx, &|d| d.graph = g.clone());
            }
            ui.end_row();

            ui.label("Speed");
            let mut speed = a.speed;
            let r = ui.add(crate::widgets::authored_drag(&mut speed).speed(0.01).range(-10.0..=10.0));
            if named(r, egui::WidgetType::DragValue, "Speed").changed() && speed.is_finite() {
                set(cx, &|d| d.speed = speed);
            }
            ui.end_row();

            ui.label("");
            let mut pos = a.play_on_start;
            if ui.checkbox(&mut pos, "Play on start").changed() {
                set(cx, &|d| d.play_on_start = pos);
            }
            ui.end_row();

            if let Some(rm) = root_motion_rows(ui, a.root_motion.as_ref(), rig_skeleton.as_deref()) {
                set(cx, &|d| d.root_motion = rm.clone());
            }

            let prefixes = a
                .graph
                .as_ref()
                .and_then(|g| cx.doc.project().graphs.get(g))
                .map(|g| vector_parameters(g))
                .unwrap_or_default();
            // The scene's entities are listed only while the Add Target menu is open.
            let world = cx.session.world();
            let entities = || world.entities().filter_map(|e| world.path(e)).filter(|p| p != path).collect();
            if let Some(t) = target_rows(ui, &a.targets, &prefixes, &entities) {
                set(cx, &|d| d.targets = t.clone());
            }
        });
        // A clip made for another rig is named here, in red, wrapped to the Inspector's width.
        if let (Some(c), Some(sk)) = (&a.clip, &rig_skeleton)
            && let Ok(clip) = lib.clip(c, sk)
            && let Some(fault) = find_clip_fault(&clip, sk)
        {
            ui.add(
                egui::Label::new(RichText::new(format!("⚠ {fault}")).color(Color32::from_rgb(235, 90, 80)))
                    .wrap(),
            );
        }
        // What the rig cannot play: it stands in its bind pose until this is fixed.
        for f in cx.session.entity_faults(path) {
            let text = format!("⚠ {}: {} (the bind pose stands)", f.field, f.message);
            ui.add(egui::Label::new(RichText::new(text).color(Color32::from_rgb(235, 90, 80))).wrap());
        }
        ui.horizontal(|ui| {
            if ui.button("Copy Pose").on_hover_text("Every bone's pose on screen").clicked() {
                crate::posing::copy_pose(cx, path, &[]);
            }
            let can = !cx.ui.pose_clipboard.is_empty();
            if ui.add_enabled(can, egui::Button::new("Paste Pose")).clicked() {
                crate::posing::paste_pose(cx, path, false);
            }
            if ui.add_enabled(can, egui::Button::new("Paste Mirrored")).clicked() {
                crate::posing::paste_pose(cx, path, true);
            }
        });
        ui.separator();
        self.transport(ui, cx, path);
    }

    /// The preview transport for the rig at `path`: Play / Pause / Stop / Step / Loop and the
    /// scrub slider. Session commands only.
    fn transport(&mut self, ui: &mut egui::Ui, cx: &mut Cx, path: &str) {
        let Some(rig) = cx.session.entity(path) else { return };
        let Some(animator) = cx.session.world().animator(rig) else { return };
        let playing = cx.session.is_playing();
        // A graph has no length of its own: the slider scrubs its longest clip's.
        let graph = animator.current_graph().is_some();
        let duration = if graph { cx.session.head_length(rig) } else { animator.current_duration() };
        let time = animator.time();
        let looping = animator.current_looping();
        let clip = animator.current_clip().cloned();
        ui.horizontal(|ui| {
            if ui.add_enabled(!playing, egui::Button::new("Play")).on_hover_text("Space").clicked() {
                cx.send(Command::Play);
            }
            if ui.add_enabled(playing, egui::Button::new("Pause")).on_hover_text("Space").clicked() {
                cx.send(Command::Pause);
            }
            if ui.button("Stop").on_hover_text("Back to the start").clicked() {
                cx.send(Command::Stop);
            }
            if ui.button("Step").on_hover_text("One fixed tick").clicked() {
                cx.send(Command::Step);
            }
            if let Some(l) = looping {
                let mut l2 = l;
                if ui.toggle_value(&mut l2, "Loop").on_hover_text("Preview looping (not saved)").changed() {
                    cx.send(Command::SetLoop { rig: path.to_owned(), looping: l2 });
                }
            }
        });
        let mut t = time;
        let fps = clip.as_ref().map_or(DEFAULT_FPS, |c| c.frame_rate);
        let frames = (time * fps).round() as i64;
        ui.spacing_mut().slider_width = (ui.available_width() - 135.0).max(80.0);
        // Room for the value box and the label beside the slider (its handle overhangs too).
        // No rounding or clamping on show: the slider must not report a change the user did
        // not make (that would seek the head every frame).
        let r = ui.add(
            egui::Slider::new(&mut t, 0.0..=duration.max(1e-3))
                .text("Time")
                .suffix(" s")
                .custom_formatter(|v, _| format!("{v:.3}"))
                .clamping(egui::SliderClamping::Never),
        );
        // Scrubbing snaps to the clip's frames (Alt: free), as the Timeline's ruler does.
        let t =
            if ui.input(|i| i.modifiers.alt) { t } else { crate::posing::snap_time(t, fps).min(duration) };
        if r.changed() && t != time {
            cx.send(Command::Seek { rig: path.to_owned(), time: t });
        }
        let line = if graph {
            // A graph's time runs on past any clip it plays (each loops or holds on its own).
            format!(
                "a graph · {time:.3} s since it started · the slider spans its longest clip, {duration:.3} s"
            )
        } else {
            format!(
                "frame {frames} / {} at {fps} fps · {duration:.3} s · {} channels",
                (duration * fps).round() as i64,
                clip.as_ref().map_or(0, |c| c.track_count())
            )
        };
        ui.label(RichText::new(line).small().weak());
    }

    fn socket(
        &mut self,
        ui: &mut egui::Ui,
        cx: &mut Cx,
        path: &str,
        s: &SocketDesc,
        edit: &dyn Fn(&mut Cx, EntityOp),
    ) {
        ui.label(
            RichText::new("This entity's transform is an output: it is placed on the bone each frame.")
                .small()
                .weak(),
        );
        let parent = tree::parent_path(path);
        let bones: Vec<String> = parent
            .and_then(|p| cx.session.entity(p))
            .and_then(|r| cx.session.world().animator(r))
            .map(|a| a.skeleton().bone_names.clone())
            .unwrap_or_default();
        let mut bone = None;
        ui.horizontal(|ui| {
            ui.label("Bone");
            picker(ui, "socket bone", if s.bone.is_empty() { "(choose)" } else { &s.bone }, 200.0).show_ui(
                ui,
                |ui| {
                    for b in &bones {
                        if ui.selectable_label(*b == s.bone, b).clicked() {
                            bone = Some(b.clone());
                        }
                    }
                },
            );
            if !s.bone.is_empty() && !bones.contains(&s.bone) {
                ui.label(
                    RichText::new("⚠ the rig has no bone of this name").color(Color32::from_rgb(235, 90, 80)),
                );
            }
        });
        if bones.is_empty() {
            ui.label(RichText::new("⚠ not a direct child of a rig").color(Color32::from_rgb(235, 90, 80)));
        }
        if let Some(b) = bone {
            edit(cx, EntityOp::SetSocket(Some(SocketDesc { bone: b, offset: s.offset })));
        }
        if let Some(t) = transform_grid(ui, "socket offset", &s.offset, "Offset") {
            edit(cx, EntityOp::SetSocket(Some(SocketDesc { bone: s.bone.clone(), offset: t })));
        }
    }

    fn mesh_cards(
        &mut self,
        ui: &mut egui::Ui,
        cx: &mut Cx,
        path: &str,
        e: &EntityDesc,
        m: &MeshDesc,
        edit: &dyn Fn(&mut Cx, EntityOp),
    ) {
        let world = cx.session.world();
        let entity = cx.session.entity(path);
        let comp = entity.and_then(|x| world.mesh(x));
        // Expressions: one slider per morph target name.
        if let Some(c) = comp
            && c.asset.mesh.primitives.iter().any(|p| !p.targets.is_empty())
        {
            let mesh = &c.asset.mesh;
            let count = mesh.primitives.iter().map(|p| p.targets.len()).max().unwrap_or(0);
            let defaults: Vec<f32> =
                (0..count).map(|i| mesh.weights.get(i).copied().unwrap_or(0.0)).collect();
            let weights: Vec<f32> = e
                .morph_weights
                .clone()
                .map(|mut w| {
                    w.resize(count, 0.0);
                    w
                })
                .unwrap_or_else(|| defaults.clone());
            card(ui, "Expressions", |ui| {
                let mut next = None;
                for i in 0..count {
                    let name = mesh.target_names.get(i).cloned().unwrap_or_else(|| format!("target {i}"));
                    let mut w = weights[i];
                    if ui.add(crate::widgets::authored_slider(&mut w, 0.0..=1.0, 3).text(&name)).changed() {
                        let mut v = weights.clone();
                        v[i] = w;
                        next = Some(v);
                    }
                }
                let active = weights.iter().filter(|w| **w != 0.0).count();
                ui.horizontal(|ui| {
                    if ui.button("Reset All").clicked() {
                        next = Some(defaults.clone());
                    }
                    ui.weak(format!(
                        "{active} of {count} active · {} uploads this frame",
                        cx.stats.morph_uploads
                    ));
                });
                if let Some(v) = next {
                    edit(cx, EntityOp::SetMorphWeights(Some(v)));
                }
            });
        }
        card(ui, "Mesh", |ui| {
            match m {
                MeshDesc::Box { half_extents } => {
                    ui.label("A box primitive");
                    let mut h = *half_extents;
                    let mut changed = false;
                    ui.horizontal(|ui| {
                        ui.label("Half extents");
                        for (i, a) in ["X", "Y", "Z"].into_iter().enumerate() {
                            let r = ui.add(
                                crate::widgets::authored_drag(&mut h[i]).speed(0.01).range(0.0..=1000.0),
                            );
                            changed |=
                                named(r, egui::WidgetType::DragValue, &format!("Half extents {a}")).changed();
                        }
                    });
                    if changed {
                        edit(cx, EntityOp::SetMesh(Some(MeshDesc::Box { half_extents: h })));
                    }
                }
                MeshDesc::Asset(r) => {
                    ui.label(format!("Asset {r}"));
                }
            }
            if let Some(c) = comp {
                let verts: usize = c.asset.mesh.primitives.iter().map(|p| p.positions.len()).sum();
                let n = c.asset.mesh.primitives.len();
                ui.label(format!("{verts} vertices in {n} primitive{}", if n == 1 { "" } else { "s" }));
                match (&c.asset.skeleton, c.rig()) {
                    (Some(sk), Some(rig)) => {
                        let rig_path = world.path(rig).unwrap_or_default();
                        ui.label(format!(
                            "Skinned: skeleton {:?}, palette slice of rig {rig_path} ({} bones)",
                            sk.name,
                            sk.bone_count()
                        ));
                    }
                    (Some(sk), None) => {
                        ui.label(
                            RichText::new(format!(
                                "Skinned ({:?}) but no Animator at or above drives it",
                                sk.name
                            ))
                            .color(Color32::from_rgb(235, 90, 80)),
                        );
                    }
                    (None, _) => {
                        ui.label("Not skinned");
                    }
                }
            }
        });
    }

    fn bone(&mut self, ui: &mut egui::Ui, cx: &mut Cx, rig_path: &str, bone: &str) {
        ui.heading(bone);
        ui.weak(format!("bone of {rig_path}"));
        let world = cx.session.world();
        let Some(rig) = cx.session.entity(rig_path) else { return };
        let Some(animator) = world.animator(rig) else { return };
        let sk = animator.skeleton();
        let Some(b) = sk.index_of(bone) else {
            ui.label(format!("The skeleton has no bone {bone:?}."));
            return;
        };
        card(ui, "Bone", |ui| {
            ui.label(format!("index {b} of {} in skeleton {:?}", sk.bone_count(), sk.name));
            // The same rows, one line each, for every bone (a root, a leaf): the pose fields
            // below stay where they are when the selection moves to another bone.
            let mut go = None;
            ui.horizontal(|ui| {
                ui.label("parent");
                match sk.parent(b) {
                    Some(p) => {
                        if ui.link(&sk.bone_names[p]).clicked() {
                            go = Some(p);
                        }
                    }
                    None => {
                        ui.add_enabled(false, egui::Label::new("none (a root bone)"));
                    }
                }
            });
            let children: Vec<usize> = (0..sk.bone_count()).filter(|&c| sk.parent(c) == Some(b)).collect();
            ui.horizontal(|ui| {
                ui.label("children");
                if children.is_empty() {
                    ui.add_enabled(false, egui::Label::new("none"));
                }
                // Many children scroll sideways rather than wrap onto more lines.
                egui::ScrollArea::horizontal().id_salt("bone children").show(ui, |ui| {
                    ui.horizontal(|ui| {
                        for &c in &children {
                            if ui.link(&sk.bone_names[c]).clicked() {
                                go = Some(c);
                            }
                        }
                    });
                });
            });
            if let Some(g) = go {
                cx.ui.selection =
                    Selection::Bone { rig: rig_path.to_owned(), bone: sk.bone_names[g].clone() };
            }
        });
        let show = |ui: &mut egui::Ui, t: &Transform| {
            let Vec3 { x, y, z } = rest_near_euler(t.rotation);
            ui.monospace(format!(
                "T ({:.3}, {:.3}, {:.3})\nR ({:.1}°, {:.1}°, {:.1}°)\nS ({:.3}, {:.3}, {:.3})",
                t.translation.x,
                t.translation.y,
                t.translation.z,
                x.to_degrees(),
                y.to_degrees(),
                z.to_degrees(),
                t.scale.x,
                t.scale.y,
                t.scale.z
            ));
        };
        card(ui, "Bind pose (local)", |ui| show(ui, &sk.bind_pose[b]));
        let current = world.rig_pose(rig).map(|p| p.local[b]);
        if let Some(t) = current {
            let key = if cx.ui.auto_key {
                "keys at the playhead (Auto Key)"
            } else {
                "a temporary pose until the playhead moves"
            };
            card(ui, "Pose (local)", |ui| {
                ui.label(RichText::new(format!("An edit here is {key}.")).small().weak());
                if let Some(next) = transform_grid(ui, "bone pose", &t, "Pose") {
                    use marrow_engine::clip::Channel;
                    let mut channels = Vec::new();
                    if next.translation != t.translation {
                        channels.push(Channel::Translation);
                    }
                    if next.rotation != t.rotation {
                        channels.push(Channel::Rotation);
                    }
                    if next.scale != t.scale {
                        channels.push(Channel::Scale);
                    }
                    crate::posing::pose_bone(cx, rig_path, b, next, &channels);
                }
                ui.horizontal(|ui| {
                    if ui.button("Copy Pose").on_hover_text("This bone's pose").clicked() {
                        crate::posing::copy_pose(cx, rig_path, &[b]);
                    }
                    let can = !cx.ui.pose_clipboard.is_empty();
                    if ui.add_enabled(can, egui::Button::new("Paste Pose")).clicked() {
                        crate::posing::paste_pose(cx, rig_path, false);
                    }
                    if ui.add_enabled(can, egui::Button::new("Paste Mirrored")).clicked() {
                        crate::posing::paste_pose(cx, rig_path, true);
                    }
                });
            });
        }
    }
}

/// The Animator card's root motion rows (in its grid): a toggle and the bone that drives it (the
/// rig's bones), then the translation axes taken and the heading. Returns the new setting when
/// one changed.
fn root_motion_rows(
    ui: &mut egui::Ui,
    rm: Option<&RootMotionDesc>,
    skeleton: Option<&Skeleton>,
) -> Option<Option<RootMotionDesc>> {
    let mut out = None;
    ui.label("Root Motion");
    ui.horizontal(|ui| {
        let mut on = rm.is_some();
        let text = if on { "" } else { "Off" };
        let r = ui.checkbox(&mut on, text);
        if named(r, egui::WidgetType::Checkbox, "Root Motion").changed() {
            // A new setting starts on the rig's first bone: the root of most rigs and captures.
            let bone = skeleton.and_then(|s| s.bone_names.first().cloned()).unwrap_or_default();
            out = Some(on.then(|| RootMotionDesc::planar(bone)));
        }
        let Some(rm) = rm else { return };
        let r = picker(ui, "root motion bone", &rm.bone, 150.0).show_ui(ui, |ui| {
            for name in skeleton.map(|s| &s.bone_names[..]).unwrap_or_default() {
                if ui.selectable_label(*name == rm.bone, name).clicked() {
                    out = Some(Some(RootMotionDesc { bone: name.clone(), ..rm.clone() }));
                }
            }
        });
        named(r.response, egui::WidgetType::ComboBox, "Root Motion Bone")
            .on_hover_text("The bone whose motion moves the character (it plays in place)");
    });
    ui.end_row();
    let Some(rm) = rm else { return out };
    ui.label("");
    ui.horizontal(|ui| {
        ui.label("Take");
        for (i, axis) in ["X", "Y", "Z"].into_iter().enumerate() {
            let mut taken = rm.axes[i];
            let r = ui
                .toggle_value(&mut taken, axis)
                .on_hover_text(format!("Take the bone's {axis} translation"));
            if r.changed() {
                let mut next = rm.clone();
                next.axes[i] = taken;
                out = Some(Some(next));
            }
        }
        let mut yaw = rm.yaw;
        if ui
            .toggle_value(&mut yaw, "Yaw")
            .on_hover_text("Take the bone's heading (turns about +Y)")
            .changed()
        {
            out = Some(Some(RootMotionDesc { yaw, ..rm.clone() }));
        }
    });
    ui.end_row();
    out
}

/// The prefixes of a graph's vector parameters: `p` where `p_x`, `p_y` and `p_z` are all floats.
fn vector_parameters(g: &marrow_engine::graph::AnimGraph) -> Vec<String> {
    let has = |n: &str| g.parameters.iter().any(|p| p.name == n);
    g.parameters
        .iter()
        .filter_map(|p| p.name.strip_suffix("_x"))
        .filter(|pre| has(&format!("{pre}_y")) && has(&format!("{pre}_z")))
        .map(str::to_owned)
        .collect()
}

/// The Animator card's target rows: each binding (the parameters it sets, from which entity) with
/// a remove button, then Add Target: an entity of the scene whose position drives a vector
/// parameter of the graph (`prefixes`, the first one not yet bound). The new list when it changed.
fn target_rows(
    ui: &mut egui::Ui,
    targets: &[TargetBinding],
    prefixes: &[String],
    entities: &dyn Fn() -> Vec<String>,
) -> Option<Vec<TargetBinding>> {
    let mut out = None;
    for (i, t) in targets.iter().enumerate() {
        ui.label(if i == 0 { "Targets" } else { "" });
        ui.horizontal(|ui| {
            ui.label(format!("{0}_x/y/z from {1}", t.parameter, t.entity));
            if ui.small_button("✖").on_hover_text("Stop driving these parameters").clicked() {
                let mut next = targets.to_vec();
                next.remove(i);
                out = Some(next);
            }
        });
        ui.end_row();
    }
    let free: Vec<&String> =
        prefixes.iter().filter(|p| !targets.iter().any(|t| &t.parameter == *p)).collect();
    if let Some(parameter) = free.first() {
        ui.label(if targets.is_empty() { "Targets" } else { "" });
        let r = egui::ComboBox::from_id_salt("add target").selected_text("Add Target…").width(150.0).show_ui(
            ui,
            |ui| {
                for e in entities() {
                    if ui.selectable_label(false, &e).clicked() {
                        let mut next = targets.to_vec();
                        next.push(TargetBinding { parameter: (*parameter).clone(), entity: e.clone() });
                        out = Some(next);
                    }
                }
            },
        );
        named(r.response, egui::WidgetType::ComboBox, "Add Target")
            .on_hover_text(format!("An entity whose position drives the graph's {parameter}_x, _y, _z"));
        ui.end_row();
    }
    out
}
