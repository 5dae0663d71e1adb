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
//! The files: this one holds the panel's state, the shown clip and rig, the frame's layout and
//! the rows' body; `toolbar` the header; `lanes` the ruler, marker and event lanes; `keys` the
//! editing commands on selected keys and the S scale; `dope`/`dope_draw` the dope sheet rows;
//! `curves` the curve view; `easing` the easing picker; `mapping` the time <-> x mapping;
//! `model` the clip's row and key index; `live` whether the playhead is the clip's (a rig playing
//! a graph or another clip keys nothing at it until Show This Clip).
//!
//! Not here: what the edits do (`crate::document::clip_ops`).

pub mod clip_size;
pub mod curves;
pub mod dope;
pub mod dope_draw;
pub mod easing;
mod keys;
mod lanes;
mod live;
pub mod mapping;
pub mod model;
mod toolbar;

use std::collections::BTreeSet;
use std::sync::Arc;

use egui::{Color32, Pos2, Rect, Sense, Stroke};
use marrow_engine::clip::Channel;
use marrow_engine::project::file::ClipAsset;
use marrow_engine::scene::{AssetSource, Entity};
use marrow_engine::skeleton::Skeleton;

use crate::cx::Cx;
use crate::document::clip_ops::KeyValue;
use crate::document::{Op, tree};
use crate::ui_state::Focus;
use mapping::{Mapping, TimeView};
use model::{ClipIndex, KeyId};

pub use keys::{key_value, move_delta};
pub use toolbar::interpolation_name;

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
    /// Whether it is a state machine's event (drawn in its own colour, never a sound).
    pub state: bool,
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
    /// Whether that is this clip's time (the rig plays it): the playhead is drawn only then.
    pub live: bool,
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
    /// The shown clip's bytes at each precision.
    pub sizes: clip_size::SizeCache,
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
            sizes: clip_size::SizeCache::default(),
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
        let editable: Option<&ClipAsset> =
            target.path.as_deref().and_then(|p| doc.project().clips.get(p)).map(|c| &**c);
        let live = live::is_live(cx, &target);
        self.toolbar(ui, cx, &target, editable, skeleton.as_deref(), live);
        if editable.is_some() {
            live::notice(ui, cx, &target, live);
        }
        // A clip inside an imported model is shown read-only (ruler, rows, keys, curves, scrub).
        let viewed = match editable {
            Some(_) => None,
            None => self.imported_view(cx, &target, skeleton.as_deref()),
        };
        if let Some(v) = &viewed {
            ui.horizontal_wrapped(|ui| {
                ui.label(format!("{} fps", v.clip.frame_rate));
                if let Some(sk) = skeleton.as_deref() {
                    self.sizes.ui(ui, &v.clip, sk, rig_scale(cx, sk));
                }
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
        let shown = ShownClip { frame_rate: clip.clip.frame_rate, read_only, time, live };
        let ctx = Area { rig: target.rig.clone(), rig_entity, path, time, live, skeleton };
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
        let asset = Arc::new(ClipAsset { clip: clip.clone(), bones: sk.bone_names.clone() });
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
            // While the rig plays something else its time is no time of this clip.
            if area.live {
                format!("frame {} · {:.3} s", (area.time * fps).round() as i64, area.time)
            } else {
                "no playhead here".to_owned()
            },
            egui::FontId::monospace(12.0),
            if area.live { ui.visuals().strong_text_color() } else { ui.visuals().weak_text_color() },
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
        // The playhead, last, over everything (none while the rig plays something else).
        let x = map.x(area.time);
        if area.live && x >= time_rect.left() && x <= time_rect.right() {
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
    /// Whether the playhead is this clip's time (the rig plays it): keys, pastes, markers and
    /// the S scale at the playhead need it ([`live`]).
    pub live: bool,
    /// The rig's skeleton.
    pub skeleton: Option<std::sync::Arc<Skeleton>>,
}

/// The largest scale the project's scenes place rig `sk` at (1 where none does): what the size
/// label's compressed measurement divides its world-unit tolerance by.
pub(crate) fn rig_scale(cx: &Cx, sk: &Skeleton) -> f32 {
    cx.session.library().rig_scale(cx.doc.project(), &sk.name).unwrap_or(1.0)
}
