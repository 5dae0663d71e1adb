//! The Timeline: where a clip is authored. It shows the clip of the selected Animator (or of
//! the last one selected; a clip opened from Assets is previewed on a rig that fits it).
//!
//! - A toolbar: the clip's name, looping, frame rate and length (authored), its duration
//!   (derived), New Clip, Make Editable (a glTF clip becomes an editable clip file), the red
//!   Auto Key toggle, Key (K), the dope sheet / curve view switch, All Bones, onion skins and
//!   audio.
//! - A ruler in frames and seconds: pressing or dragging scrubs (a preview: no undo step); the
//!   wheel (or a pinch) zooms around the pointer, Shift+wheel or a middle drag pans, F (Frame)
//!   or a double-click fits the clip, Home goes to the start; the preview range is a band on the ruler whose ends and middle
//!   drag.
//! - A marker lane (M adds at the playhead, drag moves snapped, double-click renames, Delete
//!   removes; markers outside the clip are red) and an event lane where each marker the head
//!   crosses, playing or scrubbing, flashes, following the engine's sweep rule.
//! - The dope sheet ([`dope`]): a summary row, one row per bone in hierarchy order (only bones
//!   with keys unless All Bones), each opening onto its T, R and S channels; keys drawn by
//!   interpolation and easing; click, Shift+click and box selection; drag moves (snapped to
//!   whole frames, one delta for every key; Alt drags free); S scales about the playhead; the
//!   Edit commands of [`crate::command_table`] (Delete, Cut, Copy, Paste at the playhead onto the
//!   same bone names, Duplicate at the playhead, Select All, Frame) as the app hands them over.
//! - The curve view ([`curves`]) of the selected channels (tangent handles and modes, value
//!   grid, Euler filter), and the easing picker ([`easing`]).
//! - The clip header's New channels picker: the interpolation a key gives a channel it starts
//!   (the project's, File > Project Settings, unless the clip sets its own).
//!
//! One time <-> x mapping ([`mapping::Mapping`]) serves the ruler, the lanes, the rows and the
//! playhead. Every authored change is an edit; scrubbing, zooming and selection are not.
//!
//! Not here: what the edits do (`crate::document::clip_ops`).

pub mod curves;
pub mod dope;
pub mod dope_draw;
pub mod easing;
pub mod mapping;
pub mod model;

use std::collections::BTreeSet;
use std::sync::Arc;

use egui::{Color32, Pos2, Rect, RichText, Sense, Stroke};
use marrow_engine::clip::Channel;
use marrow_engine::project::file::ClipAsset;
use marrow_engine::scene::{AssetSource, Entity};
use marrow_engine::skeleton::Skeleton;
use marrow_engine::track::Interpolation;

use crate::command::Command;
use crate::command_table::UiCommand;
use crate::cx::Cx;
use crate::document::clip_ops::{ClipOp, InsertKind, KeyRef, KeyValue, KeyWrite};
use crate::document::{EntityOp, Op, Slot, Value, tree};
use crate::posing::snap_time;
use crate::ui_state::{Focus, Selection};
use mapping::{Mapping, TimeView};
use model::{ClipIndex, KeyId};

/// Height of a dope sheet row.
pub const ROW_HEIGHT: f32 = 20.0;
/// Width of the names column.
pub const NAMES_WIDTH: f32 = 190.0;
/// Height of the ruler.
pub const RULER_HEIGHT: f32 = 24.0;
/// Height of the marker lane.
pub const MARKER_HEIGHT: f32 = 20.0;
/// Height of the event lane.
pub const EVENT_HEIGHT: f32 = 16.0;

/// A marker crossing shown in the event lane.
#[derive(Clone, Debug, PartialEq)]
pub struct Flash {
    /// The marker's index.
    pub marker: usize,
    /// Its name.
    pub name: String,
    /// Its time in the clip.
    pub time: f32,
    /// Whether a scrub crossed it.
    pub scrub: bool,
    /// UI time it was seen at (for the fade).
    pub seen: f64,
}

/// What the timeline shows this frame.
#[derive(Clone, Debug)]
pub struct Target {
    /// The rig entity's path (the preview), if a rig plays the clip.
    pub rig: Option<String>,
    /// The clip reference.
    pub clip_ref: Option<String>,
    /// The clip file, when the clip is editable (a clip file of the project).
    pub path: Option<String>,
}

/// Where the last frame drew things (tests and tools drive the custom-painted keys and
/// markers by these coordinates, from the same mapping the panel used).
#[derive(Clone, Debug)]
pub struct Layout {
    /// The time mapping.
    pub map: Option<Mapping>,
    /// The ruler.
    pub ruler: Rect,
    /// The marker lane.
    pub markers: Rect,
    /// The event lane.
    pub events: Rect,
    /// The rows drawn: what each is and the y of its centre.
    pub rows: Vec<(model::RowKind, f32)>,
    /// The rows' area.
    pub rows_rect: Rect,
    /// The clip shown: its frame rate, whether it is read-only (inside an imported model), and
    /// the playhead in seconds (for the test probe).
    pub shown: Option<ShownClip>,
    /// The curve view, when drawn.
    pub curve: Option<curves::CurveLayout>,
}

/// What the Timeline showed this frame ([`Layout::shown`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShownClip {
    /// The clip's frame rate.
    pub frame_rate: f32,
    /// Whether it is shown read-only.
    pub read_only: bool,
    /// The rig's playhead, seconds.
    pub time: f32,
}

impl Default for Layout {
    fn default() -> Self {
        Self {
            map: None,
            ruler: Rect::NOTHING,
            markers: Rect::NOTHING,
            events: Rect::NOTHING,
            rows: Vec::new(),
            rows_rect: Rect::NOTHING,
            shown: None,
            curve: None,
        }
    }
}

impl Layout {
    /// Screen position of the key at `t` on the row showing `kind`.
    pub fn key(&self, kind: model::RowKind, t: f32) -> Option<Pos2> {
        let y = self.rows.iter().find(|(k, _)| *k == kind)?.1;
        Some(Pos2::new(self.map?.x(t), y))
    }
}

/// A drag in progress.
#[derive(Clone, Debug)]
enum Drag {
    Scrub,
    Keys { origin: Vec<KeyId>, press_t: f32 },
    Box { start: Pos2 },
    Marker { index: usize, press_t: f32, origin: f32 },
    RangeStart,
    RangeEnd,
    RangeMove { press_t: f32, origin: (f32, f32) },
}

/// A scale (S) in progress: the keys at the start, the pivot, the pointer x at the start.
#[derive(Clone, Debug)]
struct Scaling {
    origin: Vec<KeyId>,
    pivot: f32,
    x0: f32,
    factor: f32,
}

/// The Timeline panel.
#[derive(Debug)]
pub struct TimelinePanel {
    view: TimeView,
    fit: bool,
    shown: Option<String>,
    index: ClipIndex,
    /// Selected keys.
    pub selection: BTreeSet<KeyId>,
    /// Bones opened onto their channels.
    pub open: BTreeSet<usize>,
    /// Show bones without keys too.
    pub all_bones: bool,
    /// The curve view instead of the dope sheet.
    pub curves: bool,
    drag: Option<Drag>,
    scaling: Option<Scaling>,
    /// The selected marker.
    pub marker: Option<usize>,
    renaming_marker: Option<(usize, String)>,
    clipboard: Vec<(String, Channel, f32, KeyValue)>,
    /// The easing picker, when open.
    pub picker: Option<easing::EasingPicker>,
    /// Marker crossings shown in the event lane, oldest first.
    pub events: Vec<Flash>,
    seen_hits: Option<u64>,
    /// Play the runner's footstep sound on `footstep` markers.
    pub audio: bool,
    scroll: f32,
    /// Curve view state.
    pub curve: curves::CurveState,
    rig: Option<String>,
    /// Where the last frame drew things.
    pub layout: Layout,
    /// The imported clip shown read-only, and the clip-file form it is drawn from.
    viewed: Option<(Arc<marrow_engine::clip::Clip>, Arc<ClipAsset>)>,
    key_marks: dope_draw::KeyCache,
}

/// What the Timeline says beside an imported clip.
pub const READ_ONLY_HINT: &str = "Read-only: this clip is inside an imported model. Make Editable copies it into a clip file you can edit.";

impl TimelinePanel {
    /// The sorted key times of the clip last shown (the summary row's keys).
    pub fn shown_times(&self) -> &[f32] {
        &self.index.all_times
    }
}

impl Default for TimelinePanel {
    fn default() -> Self {
        Self {
            view: TimeView::default(),
            fit: true,
            shown: None,
            index: ClipIndex::default(),
            selection: BTreeSet::new(),
            open: BTreeSet::new(),
            all_bones: false,
            curves: false,
            drag: None,
            scaling: None,
            marker: None,
            renaming_marker: None,
            clipboard: Vec::new(),
            picker: None,
            events: Vec::new(),
            seen_hits: None,
            audio: false,
            scroll: 0.0,
            curve: curves::CurveState::default(),
            rig: None,
            layout: Layout::default(),
            viewed: None,
            key_marks: dope_draw::KeyCache::default(),
        }
    }
}

/// The rig at or above `path` in the shown scene.
fn rig_at_or_above(cx: &Cx, path: &str) -> Option<String> {
    tree::rig_at_or_above(cx.scene()?.1, path)
}

/// Every rig entity path of the shown scene.
fn rigs(cx: &Cx) -> Vec<String> {
    cx.scene().map_or_else(Vec::new, |(_, s)| tree::rigs(s))
}

impl TimelinePanel {
    /// The clip and rig shown: the selected Animator's (or the last one's); a clip selected in
    /// Assets (when no rig is selected) on a rig whose skeleton fits it.
    pub fn target(&mut self, cx: &Cx) -> Target {
        if let Some(p) = cx.ui.selection.entity()
            && let Some(r) = rig_at_or_above(cx, p)
        {
            self.rig = Some(r);
        }
        let doc = cx.doc;
        if let (None, Some(asset)) = (cx.ui.selection.entity(), cx.ui.asset.as_ref())
            && let Some(c) = doc.project().clips.get(asset)
        {
            let rig = rigs(cx).into_iter().find(|r| {
                cx.session
                    .entity(r)
                    .and_then(|e| cx.session.world().animator(e))
                    .is_some_and(|a| a.skeleton().name == c.clip.skeleton)
            });
            return Target { rig, clip_ref: Some(asset.clone()), path: Some(asset.clone()) };
        }
        let Some(rig) =
            self.rig.clone().filter(|r| cx.scene().is_some_and(|(_, s)| tree::find(s, r).is_some()))
        else {
            self.rig = rigs(cx).into_iter().next();
            return match self.rig.clone() {
                Some(r) => self.target_of_rig(cx, r),
                None => Target { rig: None, clip_ref: None, path: None },
            };
        };
        self.target_of_rig(cx, rig)
    }

    fn target_of_rig(&self, cx: &Cx, rig: String) -> Target {
        let clip_ref = cx
            .scene()
            .and_then(|(_, s)| tree::find(s, &rig))
            .and_then(|e| e.animator.as_ref())
            .and_then(|a| a.clip.clone());
        let path = clip_ref.clone().filter(|c| cx.doc.project().clips.contains_key(c));
        Target { rig: Some(rig), clip_ref, path }
    }

    /// The dope sheet's cached key marks (how often they were built, what they are).
    pub fn key_marks(&self) -> &dope_draw::KeyCache {
        &self.key_marks
    }

    /// The number of marker crossings in the event lane so far.
    pub fn event_count(&self) -> usize {
        self.events.len()
    }

    /// The current view (tests map times to the screen through it).
    pub fn mapping(&self, left: f32, right: f32) -> Mapping {
        Mapping::new(self.view, left, right)
    }

    /// Draws the panel.
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut Cx) {
        let target = self.target(cx);
        cx.ui.timeline_rig = target.rig.clone();
        if self.shown != target.clip_ref {
            self.shown = target.clip_ref.clone();
            self.selection.clear();
            self.marker = None;
            self.fit = true;
        }
        let doc = cx.doc;
        let rig_entity = target.rig.as_deref().and_then(|r| cx.session.entity(r));
        let skeleton = rig_entity.and_then(|e| cx.session.world().animator(e)).map(|a| a.skeleton().clone());
        let editable: Option<&ClipAsset> = target.path.as_deref().and_then(|p| doc.project().clips.get(p));
        self.toolbar(ui, cx, &target, editable, skeleton.as_deref());
        // A clip inside an imported model is shown read-only (ruler, rows, keys, curves, scrub).
        let viewed = match editable {
            Some(_) => None,
            None => self.imported_view(cx, &target, skeleton.as_deref()),
        };
        if let Some(v) = &viewed {
            ui.horizontal_wrapped(|ui| {
                ui.label(format!("{} fps", v.clip.frame_rate));
                ui.weak(READ_ONLY_HINT);
            });
        }
        ui.separator();
        let Some(clip) = editable.or(viewed.as_deref()) else {
            self.read_only(ui, cx, &target);
            return;
        };
        let read_only = editable.is_none();
        let path = target.path.clone().or_else(|| target.clip_ref.clone()).unwrap_or_default();
        self.index.refresh(doc.revision(), &path, clip);
        self.collect_hits(ui, cx, rig_entity);
        let panel_rect = ui.available_rect_before_wrap();
        // A press over this panel, not over a menu or window above it.
        if ui.input(|i| i.pointer.any_pressed()) && ui.rect_contains_pointer(panel_rect) {
            cx.ui.focus = Focus::Timeline;
        }
        let time = rig_entity.and_then(|e| cx.session.world().animator(e)).map_or(0.0, |a| a.time());
        let shown = ShownClip { frame_rate: clip.clip.frame_rate, read_only, time };
        let ctx = Area { rig: target.rig.clone(), rig_entity, path, time, skeleton };
        let mark = cx.command_mark();
        self.body(ui, cx, clip, &ctx);
        self.layout.shown = Some(shown);
        if read_only {
            // Editing gestures on an imported clip send nothing (selection, scrub and the view
            // still work); the toolbar says why.
            cx.withhold_edits_since(mark);
            self.picker = None;
            return;
        }
        if cx.ui.focus == Focus::Timeline && !ui.ctx().egui_wants_keyboard_input() {
            self.keys(ui, cx, clip, &ctx);
        }
        if let Some(p) = &mut self.picker
            && let Some(op) = p.ui(ui.ctx())
        {
            cx.edit(Op::Clip { path: ctx.path.clone(), op });
        }
        if self.picker.as_ref().is_some_and(|p| p.closed) {
            self.picker = None;
        }
    }

    /// The imported clip `target` names, as a clip file's content for drawing (cached while the
    /// library hands out the same clip), or `None` when it is a project file, missing, or there is
    /// no rig to read its bone names from.
    fn imported_view(&mut self, cx: &Cx, target: &Target, sk: Option<&Skeleton>) -> Option<Arc<ClipAsset>> {
        let (reference, sk) = (target.clip_ref.as_deref()?, sk?);
        let clip = cx.session.library().clip(reference, sk).ok()?;
        if let Some((c, v)) = &self.viewed
            && Arc::ptr_eq(c, &clip)
        {
            return Some(v.clone());
        }
        let asset = Arc::new(ClipAsset { clip: (*clip).clone(), bones: sk.bone_names.clone() });
        self.viewed = Some((clip, asset.clone()));
        Some(asset)
    }

    fn read_only(&mut self, ui: &mut egui::Ui, cx: &Cx, target: &Target) {
        // A reference neither the project's clip files nor an imported model holds.
        let missing = target.clip_ref.as_deref().is_some_and(|r| cx.session.library().clips(r).is_empty());
        match (&target.rig, &target.clip_ref) {
            (None, _) => {
                ui.weak(
                    "No rig in the scene. Select an entity with an Animator, or add one in the Inspector.",
                );
            }
            (Some(_), None) => {
                ui.weak("This Animator plays no clip: New Clip creates one for its rig.");
            }
            (Some(_), Some(r)) if missing => {
                ui.label(format!("clip {r} is missing: pick another clip in the Inspector, or New Clip."));
            }
            (Some(_), Some(r)) => {
                ui.label(format!("{r} is inside an imported model: Make Editable copies it into a clip file of the project."));
            }
        }
    }

    /// Records the marker hits of the shown rig (event lane, audio).
    fn collect_hits(&mut self, ui: &egui::Ui, cx: &mut Cx, rig: Option<Entity>) {
        let now = ui.input(|i| i.time);
        let since = self.seen_hits.unwrap_or_else(|| cx.session.next_hit());
        let mut sounds = Vec::new();
        for (_, h) in cx.session.hits_since(since) {
            if Some(h.rig) != rig {
                continue;
            }
            self.events.push(Flash {
                marker: h.marker,
                name: h.name.clone(),
                time: h.time,
                scrub: h.scrub,
                seen: now,
            });
            if self.audio {
                sounds.push(h.name.clone());
            }
        }
        if self.events.len() > 64 {
            let n = self.events.len() - 64;
            self.events.drain(..n);
        }
        self.seen_hits = Some(cx.session.next_hit());
        for name in sounds {
            cx.send(Command::PlaySound(name));
        }
    }

    fn toolbar(
        &mut self,
        ui: &mut egui::Ui,
        cx: &mut Cx,
        target: &Target,
        clip: Option<&ClipAsset>,
        skeleton: Option<&Skeleton>,
    ) {
        ui.horizontal_wrapped(|ui| {
            let title = target.clip_ref.as_deref().unwrap_or("(no clip)");
            ui.label(RichText::new(title).strong());
            if let Some(rig) = &target.rig {
                ui.weak(format!("on {rig}"));
            }
            if target.rig.is_some()
                && let Some(sk) = skeleton
                && ui.button("New Clip").on_hover_text("An empty clip for this rig").clicked()
            {
                self.new_clip(cx, target, sk);
            }
            if target.path.is_none()
                && let (Some(r), Some(rig)) = (&target.clip_ref, &target.rig)
                && !cx.session.library().clips(r).is_empty()
                && ui
                    .button("Make Editable")
                    .on_hover_text("Copy the imported clip into a clip file")
                    .clicked()
            {
                self.make_editable(cx, rig, r, skeleton);
            }
            let Some(c) = clip else { return };
            ui.separator();
            let path = target.path.clone().unwrap_or_default();
            let set = |cx: &mut Cx, op: ClipOp| cx.edit(Op::Clip { path: path.clone(), op });
            let l = ui.label("Name");
            let mut name = c.clip.name.clone();
            let r = ui.add(egui::TextEdit::singleline(&mut name).desired_width(90.0)).labelled_by(l.id);
            if r.lost_focus() && name != c.clip.name {
                set(
                    cx,
                    ClipOp::SetProperties { name: Some(name), looping: None, length: None, frame_rate: None },
                );
            }
            let mut looping = c.clip.looping;
            if ui.checkbox(&mut looping, "Loop").changed() {
                set(
                    cx,
                    ClipOp::SetProperties {
                        name: None,
                        looping: Some(looping),
                        length: None,
                        frame_rate: None,
                    },
                );
            }
            let l = ui.label("FPS");
            let mut fps = c.clip.frame_rate;
            let r = ui.add(egui::DragValue::new(&mut fps).range(1.0..=240.0).speed(0.2)).labelled_by(l.id);
            if r.changed() && fps != c.clip.frame_rate {
                set(
                    cx,
                    ClipOp::SetProperties { name: None, looping: None, length: None, frame_rate: Some(fps) },
                );
            }
            let l = ui.label("Length");
            let mut length = c.clip.length;
            let r = ui
                .add(egui::DragValue::new(&mut length).range(0.0..=3600.0).speed(0.01).suffix(" s"))
                .labelled_by(l.id);
            if r.changed() && length != c.clip.length {
                set(
                    cx,
                    ClipOp::SetProperties {
                        name: None,
                        looping: None,
                        length: Some(length),
                        frame_rate: None,
                    },
                );
            }
            default_interpolation(ui, cx, c, &path);
            ui.weak(format!("duration {:.3} s · {} keys", c.clip.duration(), self.index.key_count));
            ui.separator();
            let rec = egui::Button::new(RichText::new("⏺ Auto Key").color(if cx.ui.auto_key {
                Color32::WHITE
            } else {
                Color32::from_rgb(230, 80, 70)
            }))
            .fill(if cx.ui.auto_key {
                Color32::from_rgb(190, 40, 35)
            } else {
                ui.visuals().widgets.inactive.weak_bg_fill
            })
            .selected(cx.ui.auto_key);
            if ui.add(rec).on_hover_text("Posing writes keys at the playhead").clicked() {
                cx.ui.auto_key = !cx.ui.auto_key;
            }
            if ui
                .button("Key")
                .on_hover_text("K: key the selected bone from the pose on screen (Shift+K: all bones)")
                .clicked()
            {
                self.key_pose(cx, c, target, false);
            }
            ui.separator();
            ui.selectable_value(&mut self.curves, false, "Dope Sheet");
            ui.selectable_value(&mut self.curves, true, "Curves");
            ui.checkbox(&mut self.all_bones, "All Bones");
            ui.separator();
            ui.checkbox(&mut cx.ui.onion.on, "Onion Skins");
            if cx.ui.onion.on {
                ui.add(egui::DragValue::new(&mut cx.ui.onion.count).range(1..=8).prefix("± "));
                ui.add(
                    egui::DragValue::new(&mut cx.ui.onion.step).range(1..=30).prefix("every ").suffix(" f"),
                );
            }
            ui.checkbox(&mut self.audio, "Audio");
        });
    }

    fn new_clip(&mut self, cx: &mut Cx, target: &Target, sk: &Skeleton) {
        let Some((scene, desc)) = cx.scene() else { return };
        let Some(rig) = &target.rig else { return };
        let Some(mut a) = tree::find(desc, rig).and_then(|e| e.animator.clone()) else { return };
        let project = cx.doc.project();
        let stem = format!("{}_new", sk.name.replace(['/', '\\', ' '], "_"));
        let taken = |p: &str| project.manifest.clips.iter().any(|c| c == p);
        let path = std::iter::once(format!("clips/{stem}.clip.ron"))
            .chain((2..).map(|n| format!("clips/{stem}_{n}.clip.ron")))
            .find(|p| !taken(p))
            .unwrap_or_default();
        let mut clip = marrow_engine::clip::Clip::new(
            path.trim_start_matches("clips/").trim_end_matches(".clip.ron"),
            sk,
        );
        clip.looping = true;
        clip.length = 1.0;
        let asset = ClipAsset { clip, bones: sk.bone_names.clone() };
        a.clip = Some(path.clone());
        a.graph = None;
        cx.edit(Op::Batch {
            label: "New Clip".into(),
            ops: vec![
                Op::AddFiles {
                    label: "New Clip".into(),
                    binary: Vec::new(),
                    files: vec![(Slot::Clip(path), Value::Clip(Box::new(asset)))],
                    entity: None,
                },
                Op::Entity {
                    scene: scene.to_owned(),
                    entity: rig.clone(),
                    op: EntityOp::SetAnimator(Some(a)),
                },
            ],
        });
    }

    fn make_editable(&mut self, cx: &mut Cx, rig: &str, reference: &str, sk: Option<&Skeleton>) {
        let Some(sk) = sk else { return };
        let Ok(clip) = cx.session.library().clip(reference, sk) else { return };
        let Some((scene, desc)) = cx.scene() else { return };
        let Some(mut a) = tree::find(desc, rig).and_then(|e| e.animator.clone()) else { return };
        let stem: String = reference
            .rsplit(['#', '/'])
            .next()
            .unwrap_or("clip")
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
            .collect();
        let project = cx.doc.project();
        let path = std::iter::once(format!("clips/{stem}.clip.ron"))
            .chain((2..).map(|n| format!("clips/{stem}_{n}.clip.ron")))
            .find(|p| !project.manifest.clips.contains(p))
            .unwrap_or_default();
        let mut c = (*clip).clone();
        if let Some(l) = a.looping {
            c.looping = l;
        }
        let asset = ClipAsset { clip: c, bones: sk.bone_names.clone() };
        a.clip = Some(path.clone());
        a.looping = None;
        cx.edit(Op::Batch {
            label: "Make Clip Editable".into(),
            ops: vec![
                Op::AddFiles {
                    label: "Make Clip Editable".into(),
                    binary: Vec::new(),
                    files: vec![(Slot::Clip(path), Value::Clip(Box::new(asset)))],
                    entity: None,
                },
                Op::Entity {
                    scene: scene.to_owned(),
                    entity: rig.to_owned(),
                    op: EntityOp::SetAnimator(Some(a)),
                },
            ],
        });
    }

    /// K: keys the selected bone (or, `all`, every bone) from the pose on screen at the
    /// playhead, all three channels.
    pub fn key_pose(&mut self, cx: &mut Cx, clip: &ClipAsset, target: &Target, all: bool) {
        let Some(rig) = target.rig.as_deref().and_then(|r| cx.session.entity(r)) else { return };
        let Some(pose) = cx.session.world().rig_pose(rig) else { return };
        let Some(a) = cx.session.world().animator(rig) else { return };
        let sk = a.skeleton();
        let bones: Vec<usize> = if all {
            (0..sk.bone_count()).collect()
        } else {
            match &cx.ui.selection {
                Selection::Bone { bone, .. } => sk.index_of(bone).into_iter().collect(),
                _ => Vec::new(),
            }
        };
        let time = snap_time(a.time(), clip.clip.frame_rate);
        let keys: Vec<KeyWrite> = bones
            .iter()
            .filter(|b| clip.bones.get(**b).is_some_and(|n| *n == sk.bone_names[**b]))
            .flat_map(|b| {
                let t = pose.local[*b];
                let bone = sk.bone_names[*b].clone();
                [
                    KeyWrite {
                        key: KeyRef::new(bone.clone(), Channel::Translation, time),
                        value: KeyValue::Vec3(t.translation),
                    },
                    KeyWrite {
                        key: KeyRef::new(bone.clone(), Channel::Rotation, time),
                        value: KeyValue::Quat(t.rotation),
                    },
                    KeyWrite { key: KeyRef::new(bone, Channel::Scale, time), value: KeyValue::Vec3(t.scale) },
                ]
            })
            .collect();
        if let (false, Some(path)) = (keys.is_empty(), &target.path) {
            cx.edit(Op::Clip {
                path: path.clone(),
                op: ClipOp::InsertKeys { keys, kind: InsertKind::KeyPose },
            });
            if let Some(r) = &target.rig {
                cx.send(Command::ClearPose { rig: r.clone() });
            }
        }
    }

    fn body(&mut self, ui: &mut egui::Ui, cx: &mut Cx, clip: &ClipAsset, area: &Area) {
        let full = ui.available_rect_before_wrap();
        let time_rect = Rect::from_min_max(Pos2::new(full.left() + NAMES_WIDTH, full.top()), full.max);
        if self.fit {
            self.view = TimeView::fit(0.0, clip.clip.duration().max(0.5), time_rect.width());
            self.fit = false;
        }
        let map = Mapping::new(self.view, time_rect.left(), time_rect.right());
        let ruler = Rect::from_min_size(time_rect.min, egui::vec2(time_rect.width(), RULER_HEIGHT));
        let markers = Rect::from_min_size(ruler.left_bottom(), egui::vec2(ruler.width(), MARKER_HEIGHT));
        let events = Rect::from_min_size(markers.left_bottom(), egui::vec2(ruler.width(), EVENT_HEIGHT));
        let rows = Rect::from_min_max(Pos2::new(full.left(), events.bottom()), full.max);
        self.layout = Layout {
            map: Some(map),
            ruler,
            markers,
            events,
            rows: Vec::new(),
            rows_rect: rows,
            shown: None,
            curve: None,
        };
        ui.allocate_rect(full, Sense::hover());
        let painter = ui.painter_at(full);
        painter.rect_filled(full, 0.0, ui.visuals().extreme_bg_color);
        // Names column headers.
        let names_head = Rect::from_min_max(full.min, Pos2::new(time_rect.left(), events.bottom()));
        painter.rect_filled(names_head, 0.0, ui.visuals().faint_bg_color);
        let fps = clip.clip.frame_rate;
        painter.text(
            names_head.left_top() + egui::vec2(6.0, 4.0),
            egui::Align2::LEFT_TOP,
            format!("frame {} · {:.3} s", (area.time * fps).round() as i64, area.time),
            egui::FontId::monospace(12.0),
            ui.visuals().strong_text_color(),
        );
        painter.text(
            Pos2::new(names_head.left() + 6.0, markers.center().y),
            egui::Align2::LEFT_CENTER,
            "Markers",
            egui::FontId::proportional(12.0),
            ui.visuals().weak_text_color(),
        );
        painter.text(
            Pos2::new(names_head.left() + 6.0, events.center().y),
            egui::Align2::LEFT_CENTER,
            format!("Events ({})", self.events.len()),
            egui::FontId::proportional(11.0),
            ui.visuals().weak_text_color(),
        );
        self.ruler(ui, cx, clip, area, &map, ruler);
        self.marker_lane(ui, cx, clip, area, &map, markers);
        self.event_lane(ui, clip, &map, events);
        if self.curves {
            curves::show(self, ui, cx, clip, area, &map, rows);
        } else {
            dope::show(self, ui, cx, clip, area, &map, rows);
        }
        // The playhead, last, over everything.
        let x = map.x(area.time);
        if x >= time_rect.left() && x <= time_rect.right() {
            let p = ui.painter_at(time_rect);
            p.line_segment(
                [Pos2::new(x, time_rect.top()), Pos2::new(x, time_rect.bottom())],
                Stroke::new(1.5, Color32::from_rgb(235, 70, 60)),
            );
            let label = format!("{}", (area.time * fps).round() as i64);
            let r = Rect::from_center_size(
                Pos2::new(x, ruler.top() + 9.0),
                egui::vec2(8.0 + 7.0 * label.len() as f32, 16.0),
            );
            p.rect_filled(r, 3.0, Color32::from_rgb(215, 60, 50));
            p.text(
                r.center(),
                egui::Align2::CENTER_CENTER,
                label,
                egui::FontId::monospace(11.0),
                Color32::WHITE,
            );
        }
        // Zoom and pan over the time area (rows, ruler and lanes): the wheel or a pinch zooms
        // around the pointer, Shift+wheel (or a sideways scroll) pans.
        if let Some(p) = ui.input(|i| i.pointer.hover_pos()).filter(|p| time_rect.contains(*p)) {
            let (scroll, zoom, shift) =
                ui.input(|i| (i.smooth_scroll_delta, i.zoom_delta(), i.modifiers.shift));
            let x = p.x - time_rect.left();
            if zoom != 1.0 {
                self.view = self.view.zoomed(zoom as f64, x);
            } else if shift {
                self.view = self.view.panned(scroll.y + scroll.x);
            } else {
                if scroll.y != 0.0 {
                    self.view = self.view.zoomed((scroll.y as f64 / 200.0).exp(), x);
                }
                if scroll.x != 0.0 {
                    self.view = self.view.panned(scroll.x);
                }
            }
        }
    }

    fn ruler(
        &mut self,
        ui: &mut egui::Ui,
        cx: &mut Cx,
        clip: &ClipAsset,
        area: &Area,
        map: &Mapping,
        rect: Rect,
    ) {
        let id = ui.id().with("timeline ruler");
        let r = ui.interact(rect, id, Sense::click_and_drag());
        r.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Slider, true, "Timeline ruler"));
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 0.0, ui.visuals().faint_bg_color);
        let fps = clip.clip.frame_rate;
        let (step, every) = map.frame_ticks(fps);
        let (t0, t1) = map.visible();
        let f0 = ((t0 * fps) / step as f32).floor() as i64 * step as i64;
        let f1 = (t1 * fps).ceil() as i64;
        let text = ui.visuals().text_color();
        let mut f = f0;
        while f <= f1 {
            let x = map.x(f as f32 / fps);
            let labelled = (f / step as i64) % every as i64 == 0;
            let h = if labelled { 10.0 } else { 5.0 };
            painter.line_segment(
                [Pos2::new(x, rect.bottom() - h), Pos2::new(x, rect.bottom())],
                Stroke::new(1.0, ui.visuals().weak_text_color()),
            );
            if labelled {
                painter.text(
                    Pos2::new(x + 3.0, rect.top() + 2.0),
                    egui::Align2::LEFT_TOP,
                    format!("{f}"),
                    egui::FontId::monospace(10.0),
                    text,
                );
                if f as f32 % fps == 0.0 {
                    painter.text(
                        Pos2::new(x + 3.0, rect.top() + 12.0),
                        egui::Align2::LEFT_TOP,
                        format!("{}s", f as f32 / fps),
                        egui::FontId::monospace(9.0),
                        ui.visuals().weak_text_color(),
                    );
                }
            }
            f += step as i64;
        }
        // The clip's extent.
        let d = clip.clip.duration();
        let span = Rect::from_min_max(
            Pos2::new(map.x(0.0), rect.bottom() - 3.0),
            Pos2::new(map.x(d), rect.bottom()),
        );
        painter.rect_filled(span, 0.0, Color32::from_rgb(90, 120, 170));
        // The preview range: a band with handles.
        let range = area.rig_entity.and_then(|e| cx.session.preview_range(e));
        if let Some((a, b)) = range {
            let band =
                Rect::from_min_max(Pos2::new(map.x(a), rect.top()), Pos2::new(map.x(b), rect.bottom()));
            painter.rect_filled(band, 0.0, Color32::from_rgba_unmultiplied(230, 170, 60, 40));
            for x in [band.left(), band.right()] {
                painter.line_segment(
                    [Pos2::new(x, rect.top()), Pos2::new(x, rect.bottom())],
                    Stroke::new(2.0, Color32::from_rgb(230, 170, 60)),
                );
            }
        }
        if r.double_clicked() {
            self.fit = true;
        }
        let rig = area.rig.clone();
        if let Some(p) = r.interact_pointer_pos() {
            if r.drag_started() || (r.is_pointer_button_down_on() && self.drag.is_none()) {
                let press = ui.input(|i| i.pointer.press_origin()).unwrap_or(p);
                let near = |x: f32| (press.x - x).abs() <= 5.0;
                self.drag = Some(match range {
                    Some((a, _)) if near(map.x(a)) => Drag::RangeStart,
                    Some((_, b)) if near(map.x(b)) => Drag::RangeEnd,
                    Some((a, b)) if ui.input(|i| i.modifiers.alt) && p.x > map.x(a) && p.x < map.x(b) => {
                        Drag::RangeMove { press_t: map.t(p.x), origin: (a, b) }
                    }
                    _ => Drag::Scrub,
                });
            }
            let t = map.t(p.x).max(0.0);
            let snap = if ui.input(|i| i.modifiers.alt) { t } else { snap_time(t, fps) };
            match (&self.drag, &rig, range) {
                (Some(Drag::Scrub), Some(rig), _) if (snap - area.time).abs() > 1e-6 => {
                    cx.send(Command::Seek { rig: rig.clone(), time: snap.min(d) });
                }
                (Some(Drag::RangeStart), Some(rig), Some((_, b))) => cx.send(Command::SetPreviewRange {
                    rig: rig.clone(),
                    range: Some((snap.min(b - 1.0 / fps), b)),
                }),
                (Some(Drag::RangeEnd), Some(rig), Some((a, _))) => cx.send(Command::SetPreviewRange {
                    rig: rig.clone(),
                    range: Some((a, snap.max(a + 1.0 / fps))),
                }),
                (Some(Drag::RangeMove { press_t, origin }), Some(rig), _) => {
                    let dt = snap_time(t - press_t, fps);
                    cx.send(Command::SetPreviewRange {
                        rig: rig.clone(),
                        range: Some((origin.0 + dt, origin.1 + dt)),
                    });
                }
                _ => {}
            }
        }
        if !r.is_pointer_button_down_on()
            && matches!(
                self.drag,
                Some(Drag::Scrub | Drag::RangeStart | Drag::RangeEnd | Drag::RangeMove { .. })
            )
        {
            self.drag = None;
        }
        r.context_menu(|ui| {
            let Some(rig) = rig.clone() else { return };
            let sel: Vec<f32> = self.selection.iter().map(|k| k.t()).collect();
            let (lo, hi) = sel.iter().fold((f32::MAX, f32::MIN), |(a, b), t| (a.min(*t), b.max(*t)));
            if ui.add_enabled(hi > lo, egui::Button::new("Preview Range from Selected Keys")).clicked() {
                cx.send(Command::SetPreviewRange { rig: rig.clone(), range: Some((lo, hi)) });
                ui.close();
            }
            if ui.button("Preview Range to Visible").clicked() {
                let (a, b) = map.visible();
                cx.send(Command::SetPreviewRange { rig: rig.clone(), range: Some((a.max(0.0), b.min(d))) });
                ui.close();
            }
            if ui.add_enabled(range.is_some(), egui::Button::new("Clear Preview Range")).clicked() {
                cx.send(Command::SetPreviewRange { rig, range: None });
                ui.close();
            }
            if ui.button("Fit Clip (Home)").clicked() {
                self.fit = true;
                ui.close();
            }
        });
    }

    fn marker_lane(
        &mut self,
        ui: &mut egui::Ui,
        cx: &mut Cx,
        clip: &ClipAsset,
        area: &Area,
        map: &Mapping,
        rect: Rect,
    ) {
        let id = ui.id().with("timeline markers");
        let r = ui.interact(rect, id, Sense::click_and_drag());
        r.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::Other, true, "Marker lane"));
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 0.0, ui.visuals().window_fill);
        let d = clip.clip.duration();
        let fps = clip.clip.frame_rate;
        for (i, m) in clip.clip.markers().iter().enumerate() {
            let x = map.x(m.time);
            let outside = !(m.time >= 0.0 && m.time <= d && m.time.is_finite());
            let selected = self.marker == Some(i);
            let color = if outside {
                Color32::from_rgb(235, 80, 70)
            } else if selected {
                Color32::from_rgb(255, 210, 90)
            } else {
                Color32::from_rgb(120, 200, 230)
            };
            let y = rect.center().y;
            painter.add(egui::Shape::convex_polygon(
                vec![
                    Pos2::new(x, rect.bottom() - 2.0),
                    Pos2::new(x - 5.0, y - 4.0),
                    Pos2::new(x + 5.0, y - 4.0),
                ],
                color,
                Stroke::NONE,
            ));
            painter.text(
                Pos2::new(x + 7.0, y),
                egui::Align2::LEFT_CENTER,
                &m.name,
                egui::FontId::proportional(11.0),
                color,
            );
            if outside {
                painter.text(
                    Pos2::new(x + 7.0, rect.top()),
                    egui::Align2::LEFT_TOP,
                    "outside the clip",
                    egui::FontId::proportional(9.0),
                    color,
                );
            }
        }
        let hit = |p: Pos2| {
            clip.clip
                .markers()
                .iter()
                .enumerate()
                .map(|(i, m)| (i, (map.x(m.time) - p.x).abs()))
                .filter(|(_, dx)| *dx <= 6.0)
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(i, _)| i)
        };
        if let Some(p) = r.interact_pointer_pos() {
            if r.drag_started() || r.clicked() {
                let press = ui.input(|i| i.pointer.press_origin()).unwrap_or(p);
                self.marker = hit(press);
                self.selection.clear();
                if let (Some(i), true) = (self.marker, r.drag_started()) {
                    self.drag = Some(Drag::Marker {
                        index: i,
                        press_t: map.t(press.x),
                        origin: clip.clip.markers()[i].time,
                    });
                }
            }
            if let Some(Drag::Marker { index, press_t, origin }) = self.drag {
                let raw = (origin + map.t(p.x) - press_t).max(0.0);
                let t = if ui.input(|i| i.modifiers.alt) { raw } else { snap_time(raw, fps) };
                cx.edit(Op::Clip { path: area.path.clone(), op: ClipOp::MoveMarker { index, time: t } });
            }
        }
        if r.double_clicked()
            && let Some(i) = r.hover_pos().or(r.interact_pointer_pos()).and_then(hit)
        {
            self.renaming_marker = Some((i, clip.clip.markers()[i].name.clone()));
        }
        if !r.is_pointer_button_down_on() && matches!(self.drag, Some(Drag::Marker { .. })) {
            self.drag = None;
            // The marker moved: it keeps its selection at its new place in time order.
            self.marker = None;
        }
        if let Some((i, mut name)) = self.renaming_marker.clone() {
            let Some(m) = clip.clip.markers().get(i) else {
                self.renaming_marker = None;
                return;
            };
            let at = Pos2::new(map.x(m.time) - 10.0, rect.top());
            let mut close = false;
            egui::Area::new(id.with("rename")).fixed_pos(at).order(egui::Order::Foreground).show(
                ui.ctx(),
                |ui| {
                    egui::Frame::popup(ui.style()).show(ui, |ui| {
                        let mut out = egui::TextEdit::singleline(&mut name).desired_width(120.0).show(ui);
                        let te = out.response.clone();
                        te.widget_info(|| {
                            egui::WidgetInfo::labeled(egui::WidgetType::TextEdit, true, "Marker name")
                        });
                        if !te.has_focus() && !te.lost_focus() {
                            te.request_focus();
                            out.state.cursor.set_char_range(Some(egui::text::CCursorRange::two(
                                egui::text::CCursor::new(0),
                                egui::text::CCursor::new(name.chars().count()),
                            )));
                            out.state.store(ui.ctx(), te.id);
                        }
                        if ui.input(|i| i.key_pressed(egui::Key::Escape)) {
                            close = true;
                        } else if ui.input(|i| i.key_pressed(egui::Key::Enter)) || te.lost_focus() {
                            close = true;
                            if name != m.name {
                                cx.edit(Op::Clip {
                                    path: area.path.clone(),
                                    op: ClipOp::RenameMarker { index: i, name: name.clone() },
                                });
                            }
                        }
                    });
                },
            );
            self.renaming_marker = if close { None } else { Some((i, name)) };
        }
    }

    fn event_lane(&mut self, ui: &mut egui::Ui, clip: &ClipAsset, map: &Mapping, rect: Rect) {
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 0.0, ui.visuals().extreme_bg_color);
        let now = ui.input(|i| i.time);
        let mut animating = false;
        for e in self.events.iter().rev().take(16) {
            let age = (now - e.seen) as f32;
            let alpha = (1.0 - age / 0.6).clamp(0.0, 1.0);
            if alpha <= 0.0 {
                continue;
            }
            animating = true;
            let x = map.x(e.time);
            let c = if e.scrub { Color32::from_rgb(255, 200, 80) } else { Color32::from_rgb(120, 240, 160) };
            let c = c.gamma_multiply(alpha);
            painter.circle_filled(Pos2::new(x, rect.center().y), 4.0 + 3.0 * alpha, c);
            painter.text(
                Pos2::new(x + 9.0, rect.center().y),
                egui::Align2::LEFT_CENTER,
                &e.name,
                egui::FontId::proportional(10.0),
                c,
            );
        }
        if animating {
            ui.ctx().request_repaint();
        }
        let _ = clip;
    }

    fn keys(&mut self, ui: &mut egui::Ui, cx: &mut Cx, clip: &ClipAsset, area: &Area) {
        use egui::{Key, Modifiers};
        let path = area.path.clone();
        let fps = clip.clip.frame_rate;
        // The editing commands come from the command table (shortcuts, clipboard events, the
        // Edit menu) through the app; the timeline's own keys are read here.
        let actions = std::mem::take(&mut cx.ui.edit_actions);
        let has = |a: UiCommand| actions.contains(&a);
        let (scale, marker, key, key_all, home) = ui.ctx().input_mut(|i| {
            (
                i.consume_key(Modifiers::NONE, Key::S),
                i.consume_key(Modifiers::NONE, Key::M),
                i.consume_key(Modifiers::NONE, Key::K),
                i.consume_key(Modifiers::SHIFT, Key::K),
                i.consume_key(Modifiers::NONE, Key::Home),
            )
        });
        if has(UiCommand::Frame) {
            self.fit = true;
        }
        if home && let Some(rig) = &area.rig {
            cx.send(Command::Seek { rig: rig.clone(), time: 0.0 });
        }
        if has(UiCommand::SelectAll) {
            self.selection = model::all_ids(clip).into_iter().collect();
            self.marker = None;
        }
        if (has(UiCommand::Copy) || has(UiCommand::Cut) || has(UiCommand::Duplicate))
            && !self.selection.is_empty()
        {
            self.copy(clip);
            ui.ctx().copy_text(self.clipboard_text());
        }
        if has(UiCommand::Delete) || has(UiCommand::Cut) {
            if let Some(m) = self.marker.take() {
                cx.edit(Op::Clip { path: path.clone(), op: ClipOp::DeleteMarkers(vec![m]) });
            } else if !self.selection.is_empty() {
                let keys: Vec<KeyRef> = self.selection.iter().filter_map(|k| k.to_ref(clip)).collect();
                let label = if keys.len() == 1 { "Cut Key" } else { "Cut Keys" };
                let op = Op::Clip { path: path.clone(), op: ClipOp::DeleteKeys(keys) };
                cx.edit(if has(UiCommand::Cut) {
                    Op::Batch { label: label.into(), ops: vec![op] }
                } else {
                    op
                });
                self.selection.clear();
            }
        }
        let (paste, dup) = (has(UiCommand::Paste), has(UiCommand::Duplicate));
        if (paste || dup) && !self.clipboard.is_empty() {
            let at = snap_time(area.time, fps);
            let keys: Vec<KeyWrite> = self
                .clipboard
                .iter()
                .filter(|(bone, ..)| clip.bones.contains(bone))
                .map(|(bone, ch, dt, v)| KeyWrite { key: KeyRef::new(bone.clone(), *ch, at + dt), value: *v })
                .collect();
            if !keys.is_empty() {
                self.selection = keys
                    .iter()
                    .filter_map(|k| {
                        Some(KeyId::new(
                            clip.bones.iter().position(|b| *b == k.key.bone)?,
                            k.key.channel,
                            k.key.time,
                        ))
                    })
                    .collect();
                let kind = if dup { InsertKind::Duplicate } else { InsertKind::Paste };
                cx.edit(Op::Clip { path: path.clone(), op: ClipOp::InsertKeys { keys, kind } });
            }
        }
        if scale && !self.selection.is_empty() {
            let x0 = ui.input(|i| i.pointer.hover_pos()).map_or(0.0, |p| p.x);
            self.scaling = Some(Scaling {
                origin: self.selection.iter().copied().collect(),
                pivot: area.time,
                x0,
                factor: 1.0,
            });
        }
        if marker {
            let n = clip.clip.markers().len() + 1;
            cx.edit(Op::Clip {
                path: path.clone(),
                op: ClipOp::AddMarker { name: format!("marker {n}"), time: snap_time(area.time, fps) },
            });
        }
        if key || key_all {
            let target =
                Target { rig: area.rig.clone(), clip_ref: Some(path.clone()), path: Some(path.clone()) };
            self.key_pose(cx, clip, &target, key_all);
        }
        self.scale_step(ui, cx, clip, area);
    }

    /// The clipboard as text for the system clipboard: one line per key (bone, channel, time
    /// after the first copied key, value).
    fn clipboard_text(&self) -> String {
        let mut out = format!("Marrow keys ({})\n", self.clipboard.len());
        for (bone, ch, dt, v) in &self.clipboard {
            let v = match v {
                KeyValue::Vec3(v) => format!("{} {} {}", v.x, v.y, v.z),
                KeyValue::Quat(q) => format!("{} {} {} {}", q.x, q.y, q.z, q.w),
            };
            out.push_str(&format!("{bone}\t{ch}\t+{dt}\t{v}\n"));
        }
        out
    }

    fn copy(&mut self, clip: &ClipAsset) {
        let first = self.selection.iter().map(|k| k.t()).fold(f32::MAX, f32::min);
        self.clipboard = self
            .selection
            .iter()
            .filter_map(|k| {
                let bone = clip.bones.get(k.bone as usize)?.clone();
                Some((bone, k.channel, k.t() - first, key_value(clip, *k)?))
            })
            .collect();
    }

    /// S: while active, the pointer's horizontal travel scales the keys about the pivot; a
    /// click confirms, Escape or a right click cancels. One undo step.
    fn scale_step(&mut self, ui: &mut egui::Ui, cx: &mut Cx, clip: &ClipAsset, area: &Area) {
        let Some(s) = &mut self.scaling else { return };
        let x = ui.input(|i| i.pointer.hover_pos()).map_or(s.x0, |p| p.x);
        let factor = (1.0 + (x - s.x0) / 200.0).max(0.05);
        let (confirm, cancel) = ui.input(|i| {
            (
                i.pointer.primary_clicked() || i.key_pressed(egui::Key::Enter),
                i.key_pressed(egui::Key::Escape) || i.pointer.secondary_clicked(),
            )
        });
        let factor = if cancel { 1.0 } else { factor };
        if factor != s.factor {
            s.factor = factor;
            let keys: Vec<KeyRef> = s.origin.iter().filter_map(|k| k.to_ref(clip)).collect();
            let snap = (!ui.input(|i| i.modifiers.alt)).then_some(clip.clip.frame_rate);
            cx.edit(Op::Clip {
                path: area.path.clone(),
                op: ClipOp::ScaleKeys { keys, pivot: s.pivot, factor, snap },
            });
            self.selection = s
                .origin
                .iter()
                .map(|k| {
                    KeyId::new(
                        k.bone as usize,
                        k.channel,
                        snap_opt((s.pivot + (k.t() - s.pivot) * factor).max(0.0), snap),
                    )
                })
                .collect();
        }
        ui.ctx().request_repaint();
        if confirm || cancel {
            self.scaling = None;
        } else {
            // No pointer is held: keep the gesture open so the scale stays one undo step.
            cx.send(Command::HoldGesture);
        }
        let _ = area.time;
    }
}

/// An interpolation's name in menus.
pub fn interpolation_name(i: Interpolation) -> &'static str {
    match i {
        Interpolation::Step => "Step",
        Interpolation::Linear => "Linear",
        Interpolation::CubicSpline => "Cubic",
    }
}

/// The clip header's "New channels" picker: the interpolation a key gives a channel it starts
/// in this clip (the project's unless set). One undo step per change.
fn default_interpolation(ui: &mut egui::Ui, cx: &mut Cx, c: &ClipAsset, path: &str) {
    let project = cx.doc.project().manifest.default_interpolation;
    let current = c.clip.default_interpolation;
    let project_text = format!("Project ({})", interpolation_name(project));
    let text = current.map_or(project_text.clone(), |i| interpolation_name(i).to_owned());
    // The combo box lays itself out in a row of its own width, which a wrapping header cannot
    // move: start a new row when the label and the box would not fit in what is shown.
    if ui.clip_rect().right() - ui.cursor().left() < 230.0 {
        ui.end_row();
    }
    let l = ui.label("New channels");
    let mut chosen = None;
    egui::ComboBox::from_id_salt("clip default interpolation")
        .selected_text(text)
        .show_ui(ui, |ui| {
            let options = [
                (project_text, None),
                ("Step".to_owned(), Some(Interpolation::Step)),
                ("Linear".to_owned(), Some(Interpolation::Linear)),
                ("Cubic".to_owned(), Some(Interpolation::CubicSpline)),
            ];
            for (label, v) in options {
                if ui.selectable_label(current == v, label).clicked() {
                    chosen = Some(v);
                }
            }
        })
        .response
        .labelled_by(l.id)
        .on_hover_text("The interpolation a key gives a channel it starts in this clip");
    if let Some(v) = chosen.filter(|v| *v != current) {
        cx.edit(Op::Clip { path: path.to_owned(), op: ClipOp::SetDefaultInterpolation(v) });
    }
}

/// Per frame: the rig and clip the timeline works on, and the playhead.
#[derive(Clone, Debug)]
pub struct Area {
    /// The rig entity's path.
    pub rig: Option<String>,
    /// The rig entity.
    pub rig_entity: Option<Entity>,
    /// The clip file.
    pub path: String,
    /// The playhead, seconds.
    pub time: f32,
    /// The rig's skeleton.
    pub skeleton: Option<std::sync::Arc<Skeleton>>,
}

/// The delta of a key move: the pointer's travel `raw` (seconds) snapped to whole frames at
/// `fps` (`None`: free), so a dragged key on a frame lands on a frame, and clamped so the
/// earliest moved key (at `earliest`) stays at or after 0. Every moved key takes this one delta;
/// no key is re-snapped.
pub fn move_delta(raw: f32, fps: Option<f32>, earliest: f32) -> f32 {
    fps.map_or(raw, |f| snap_time(raw, f)).max(-earliest)
}

fn snap_opt(t: f32, fps: Option<f32>) -> f32 {
    fps.map_or(t, |f| snap_time(t, f))
}

/// The value of key `k`.
pub fn key_value(clip: &ClipAsset, k: KeyId) -> Option<KeyValue> {
    let c = clip.clip.channels().get(k.bone as usize)?;
    let t = k.t();
    let find = |times: &[f32]| {
        let i = times.partition_point(|x| *x < t - 1e-6);
        times.get(i).is_some_and(|x| (*x - t).abs() < 1e-6).then_some(i)
    };
    match k.channel {
        Channel::Translation => {
            c.translation.as_ref().and_then(|tr| find(tr.times()).map(|i| KeyValue::Vec3(tr.values()[i])))
        }
        Channel::Scale => {
            c.scale.as_ref().and_then(|tr| find(tr.times()).map(|i| KeyValue::Vec3(tr.values()[i])))
        }
        Channel::Rotation => {
            c.rotation.as_ref().and_then(|tr| find(tr.times()).map(|i| KeyValue::Quat(tr.values()[i])))
        }
    }
}
