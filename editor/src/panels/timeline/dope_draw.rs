//! Drawing the dope sheet's keys: for each visible row, the keys in the visible time range, at
//! most one mark per pixel column. Where a row's keys lie closer than [`GLYPH_SPACING`] points
//! apart on average (motion capture at wide zoom) the row is a density strip: one mark per
//! occupied pixel column, more opaque where more keys fall in it, selected columns in the
//! selection colour, neighbouring columns of one colour joined into one rectangle. Otherwise
//! each column's keys draw as one glyph (a diamond for LINEAR, a square for STEP, a circle for
//! CUBICSPLINE; a LINEAR key starting an eased segment as an orange hexagon, on its channel row
//! and on its bone's and the summary row; selected if any of its keys is).
//!
//! The marks are built once per (document revision, clip, time mapping, key area, pixels per
//! point, visible rows, selection) and reused while none of these changed ([`KeyCache`]), so a
//! frame where nothing changed costs a comparison and a copy of the shapes.
//!
//! Not here: row names, backgrounds and input (`super::dope`), the rows and their times
//! (`super::model`).

use std::collections::{BTreeMap, BTreeSet};

use egui::{Color32, Pos2, Rect, Shape, Stroke};
use marrow_engine::clip::Channel;
use marrow_engine::project::file::ClipAsset;
use marrow_engine::track::Interpolation;

use super::mapping::Mapping;
use super::model::{self, ClipIndex, KeyId, KeyLook, RowKind};

/// Colours.
const KEY: Color32 = Color32::from_rgb(205, 205, 210);
const KEY_EASED: Color32 = Color32::from_rgb(240, 150, 60);
const KEY_SELECTED: Color32 = Color32::from_rgb(255, 215, 80);

/// Average spacing of a row's visible keys (points) below which the row draws as a density
/// strip instead of one glyph per key.
pub const GLYPH_SPACING: f32 = 8.0;

/// Two key times closer than this are one time (as the clip index merges them).
const SAME_TIME: f32 = 1e-6;

/// The times a row shows: a channel's keys, or a bone's or the whole clip's merged times.
pub fn row_times<'a>(index: &'a ClipIndex, clip: &'a ClipAsset, kind: RowKind) -> &'a [f32] {
    match kind {
        RowKind::Summary => &index.all_times,
        RowKind::Bone(b) => index.bone_times.get(b).map_or(&[], Vec::as_slice),
        RowKind::Channel(b, ch) => model::channel_times(clip, b, ch),
    }
}

/// What the cached marks were built from.
#[derive(Clone, Debug, PartialEq)]
struct CacheKey {
    revision: u64,
    path: String,
    map: Mapping,
    rect: Rect,
    pixels_per_point: f32,
    rows: Vec<(RowKind, f32)>,
    selection: BTreeSet<KeyId>,
}

/// The key marks of the last frame and what they were built from (panel state).
#[derive(Debug, Default)]
pub struct KeyCache {
    key: Option<CacheKey>,
    shapes: Vec<Shape>,
    rebuilds: u64,
}

impl KeyCache {
    /// How many times the marks were built (tests count rebuilds with it).
    pub fn rebuilds(&self) -> u64 {
        self.rebuilds
    }

    /// The cached marks.
    pub fn shapes(&self) -> &[Shape] {
        &self.shapes
    }
}

/// What [`draw`] needs from the panel and the frame.
pub struct Frame<'a> {
    /// The clip shown.
    pub clip: &'a ClipAsset,
    /// Its file in the project.
    pub path: &'a str,
    /// The document revision.
    pub revision: u64,
    /// The clip's merged times.
    pub index: &'a ClipIndex,
    /// The selected keys.
    pub selection: &'a BTreeSet<KeyId>,
    /// The visible rows and the y of their centres.
    pub rows: &'a [(RowKind, f32)],
    /// The time mapping.
    pub map: &'a Mapping,
    /// The key area.
    pub rect: Rect,
}

impl Frame<'_> {
    fn matches(&self, k: &CacheKey, pixels_per_point: f32) -> bool {
        k.revision == self.revision
            && k.path == self.path
            && k.map == *self.map
            && k.rect == self.rect
            && k.pixels_per_point == pixels_per_point
            && k.rows == self.rows
            && k.selection == *self.selection
    }
}

/// Draws the keys of the visible rows with `painter` (clipped to the key area), rebuilding the
/// cached marks only when what they show changed.
pub fn draw(cache: &mut KeyCache, painter: &egui::Painter, f: &Frame) {
    let ppp = painter.pixels_per_point();
    if !cache.key.as_ref().is_some_and(|k| f.matches(k, ppp)) {
        cache.shapes = build(f, ppp);
        cache.rebuilds += 1;
        cache.key = Some(CacheKey {
            revision: f.revision,
            path: f.path.to_owned(),
            map: *f.map,
            rect: f.rect,
            pixels_per_point: ppp,
            rows: f.rows.to_vec(),
            selection: f.selection.clone(),
        });
    }
    painter.extend(cache.shapes.iter().cloned());
}

/// The selected times per channel, per bone and over the clip, each sorted.
struct Selected {
    channel: BTreeMap<(u32, Channel), Vec<f32>>,
    bone: BTreeMap<u32, Vec<f32>>,
    all: Vec<f32>,
}

impl Selected {
    /// One walk over the selection (ordered by bone, channel, time), then linear merges.
    fn new(selection: &BTreeSet<KeyId>) -> Self {
        let mut channel: BTreeMap<(u32, Channel), Vec<f32>> = BTreeMap::new();
        let mut cur: Option<((u32, Channel), Vec<f32>)> = None;
        for k in selection {
            match &mut cur {
                Some((key, v)) if *key == (k.bone, k.channel) => v.push(k.t()),
                _ => {
                    if let Some((key, v)) = cur.take() {
                        channel.insert(key, v);
                    }
                    cur = Some(((k.bone, k.channel), vec![k.t()]));
                }
            }
        }
        if let Some((key, v)) = cur {
            channel.insert(key, v);
        }
        // Times order by their bits: numeric order unless a time is negative.
        for v in channel.values_mut() {
            if !v.is_sorted_by(|a, b| a <= b) {
                v.sort_by(f32::total_cmp);
            }
        }
        let mut bone: BTreeMap<u32, Vec<f32>> = BTreeMap::new();
        for ((b, _), times) in &channel {
            let merged = bone.get(b).map_or_else(|| times.clone(), |v| model::merge_times(v, times));
            bone.insert(*b, merged);
        }
        let all = bone.values().fold(Vec::new(), |acc, v| model::merge_times(&acc, v));
        Self { channel, bone, all }
    }

    fn of(&self, kind: RowKind) -> &[f32] {
        match kind {
            RowKind::Summary => &self.all,
            RowKind::Bone(b) => self.bone.get(&(b as u32)).map_or(&[], Vec::as_slice),
            RowKind::Channel(b, ch) => self.channel.get(&(b as u32, ch)).map_or(&[], Vec::as_slice),
        }
    }
}

/// Whether each key of the sorted `times` is among the sorted `selected` (one walk over both).
fn selected_flags(times: &[f32], selected: &[f32]) -> Vec<bool> {
    let mut j = 0;
    times
        .iter()
        .map(|t| {
            while j < selected.len() && selected[j] < t - SAME_TIME {
                j += 1;
            }
            j < selected.len() && selected[j] <= t + SAME_TIME
        })
        .collect()
}

/// The marks of every visible row.
fn build(f: &Frame, ppp: f32) -> Vec<Shape> {
    let selected = (!f.selection.is_empty()).then(|| Selected::new(f.selection));
    let (t0, t1) = f.map.visible();
    let pad = 6.0 * f.map.view.seconds_per_point as f32;
    let mut out = Vec::new();
    for &(kind, cy) in f.rows {
        let times = row_times(f.index, f.clip, kind);
        let (a, z) = model::visible_range(times, t0 - pad, t1 + pad);
        if a == z {
            continue;
        }
        let sel = selected
            .as_ref()
            .map_or_else(|| vec![false; z - a], |s| selected_flags(&times[a..z], s.of(kind)));
        // A bone or summary row marks a time eased when a key there starts an eased segment.
        let eased_times: &[f32] = match kind {
            RowKind::Summary => &f.index.all_eased,
            RowKind::Bone(b) => f.index.bone_eased.get(b).map_or(&[], Vec::as_slice),
            RowKind::Channel(..) => &[],
        };
        let look = |i: usize| match kind {
            RowKind::Channel(b, ch) => model::key_look(f.clip, b, ch, a + i),
            _ => KeyLook {
                interpolation: Interpolation::Linear,
                eased: !eased_times.is_empty() && model::holds(eased_times, times[a + i]),
            },
        };
        let row = Row { times: &times[a..z], selected: &sel, cy, small: kind == RowKind::Summary };
        let n = z - a;
        let span = f.map.x(times[z - 1]) - f.map.x(times[a]);
        if n > 1 && span / ((n - 1) as f32) < GLYPH_SPACING {
            strip(&mut out, f.map, ppp, &row, look);
        } else {
            glyphs(&mut out, f.map, ppp, &row, look);
        }
    }
    out
}

/// One row's visible keys.
struct Row<'a> {
    times: &'a [f32],
    selected: &'a [bool],
    cy: f32,
    small: bool,
}

/// Walks a row's keys by pixel column: for each occupied column, its first key's index, the
/// number of keys in it, whether any is selected.
fn columns(map: &Mapping, ppp: f32, row: &Row) -> Vec<(i64, usize, usize, bool)> {
    let mut out: Vec<(i64, usize, usize, bool)> = Vec::new();
    for (i, (&t, &s)) in row.times.iter().zip(row.selected).enumerate() {
        let col = (map.x(t) * ppp).floor() as i64;
        match out.last_mut() {
            Some(last) if last.0 == col => {
                last.2 += 1;
                last.3 |= s;
            }
            _ => out.push((col, i, 1, s)),
        }
    }
    out
}

/// A density strip: one mark per occupied column, joined into runs of one colour.
fn strip(out: &mut Vec<Shape>, map: &Mapping, ppp: f32, row: &Row, look: impl Fn(usize) -> KeyLook) {
    let h = if row.small { 3.0 } else { 4.0 };
    let mut run: Option<(i64, i64, Color32)> = None;
    let flush = |run: (i64, i64, Color32), out: &mut Vec<Shape>| {
        let r = Rect::from_min_max(
            Pos2::new(run.0 as f32 / ppp, row.cy - h),
            Pos2::new((run.1 + 1) as f32 / ppp, row.cy + h),
        );
        out.push(Shape::rect_filled(r, 0.0, run.2));
    };
    for (col, first, count, sel) in columns(map, ppp, row) {
        let base = if sel {
            KEY_SELECTED
        } else if look(first).eased {
            KEY_EASED
        } else {
            KEY
        };
        let color = density(base, count);
        run = match run {
            Some((a, b, c)) if b + 1 == col && c == color => Some((a, col, c)),
            Some(r) => {
                flush(r, out);
                Some((col, col, color))
            }
            None => Some((col, col, color)),
        };
    }
    if let Some(r) = run {
        flush(r, out);
    }
}

/// A strip colour: more opaque the more keys share the column (full at four).
fn density(base: Color32, count: usize) -> Color32 {
    base.gamma_multiply(0.55 + 0.45 * (count.min(4) - 1) as f32 / 3.0)
}

/// One glyph per occupied column.
fn glyphs(out: &mut Vec<Shape>, map: &Mapping, ppp: f32, row: &Row, look: impl Fn(usize) -> KeyLook) {
    for (_, first, _, sel) in columns(map, ppp, row) {
        let at = Pos2::new(map.x(row.times[first]), row.cy);
        out.push(key_shape(at, look(first), sel, row.small));
    }
}

/// A key's glyph at `at`.
pub fn key_shape(at: Pos2, look: KeyLook, selected: bool, small: bool) -> Shape {
    let r = if small { 4.0 } else { 5.0 };
    let fill = if selected {
        KEY_SELECTED
    } else if look.eased {
        KEY_EASED
    } else {
        KEY
    };
    let stroke = Stroke::new(1.0, if selected { Color32::WHITE } else { Color32::from_gray(30) });
    match look.interpolation {
        Interpolation::Step => Shape::Rect(egui::epaint::RectShape::new(
            Rect::from_center_size(at, egui::vec2(r * 1.6, r * 1.6)),
            1.0,
            fill,
            stroke,
            egui::StrokeKind::Middle,
        )),
        Interpolation::CubicSpline => {
            Shape::Circle(egui::epaint::CircleShape { center: at, radius: r * 0.9, fill, stroke })
        }
        // An eased key: a hexagon, wider than the diamond, pointed at its two ends.
        Interpolation::Linear if look.eased => Shape::convex_polygon(
            vec![
                at + egui::vec2(-r * 1.2, 0.0),
                at + egui::vec2(-r * 0.5, -r),
                at + egui::vec2(r * 0.5, -r),
                at + egui::vec2(r * 1.2, 0.0),
                at + egui::vec2(r * 0.5, r),
                at + egui::vec2(-r * 0.5, r),
            ],
            fill,
            stroke,
        ),
        Interpolation::Linear => Shape::convex_polygon(
            vec![
                at + egui::vec2(0.0, -r),
                at + egui::vec2(r, 0.0),
                at + egui::vec2(0.0, r),
                at + egui::vec2(-r, 0.0),
            ],
            fill,
            stroke,
        ),
    }
}

#[cfg(test)]
mod tests {
    use marrow_engine::synthetic::{mocap_like_clip, mocap_skeleton, one_rig_project};

    use super::*;
    use crate::command::Command;
    use crate::cx::Cx;
    use crate::document::clip_ops::ClipOp;
    use crate::document::{Document, Op};
    use crate::log::EditorLog;
    use crate::panels::timeline::{NAMES_WIDTH, ROW_HEIGHT, TimelinePanel};
    use crate::session::Session;
    use crate::stats::Stats;
    use crate::ui_state::{Selection, UiState};

    const PATH: &str = "clips/mocap.clip.ron";

    /// The timeline on a 120 Hz capture of 2,400 frames (twice as many keys per row as the key
    /// area has pixel columns), fit to a 1400 x 700 window.
    struct Rig {
        ctx: egui::Context,
        panel: TimelinePanel,
        doc: Document,
        session: Session,
        ui: UiState,
    }

    impl Rig {
        fn new() -> Self {
            let sk = mocap_skeleton();
            let mut clip = mocap_like_clip(&sk, "mocap", 2400, 120.0, 3);
            clip.frame_rate = 120.0;
            let doc = Document::new(one_rig_project(sk, vec![(PATH, clip)]), None);
            let mut session = Session::new();
            session.sync(&doc);
            session.update(0.0);
            let mut ui = UiState::new();
            ui.selection = Selection::Entity("Rig".into());
            Self { ctx: egui::Context::default(), panel: TimelinePanel::default(), doc, session, ui }
        }

        /// One frame; applies the edits the panel queued and returns what it drew.
        fn frame(&mut self) -> Vec<egui::epaint::ClippedShape> {
            let input = egui::RawInput {
                screen_rect: Some(Rect::from_min_size(Pos2::ZERO, egui::vec2(1400.0, 700.0))),
                ..Default::default()
            };
            let (log, stats) = (EditorLog::default(), Stats::default());
            let mut commands = Vec::new();
            let mut out = self.ctx.run_ui(input, |ui| {
                egui::CentralPanel::default().show(ui, |ui| {
                    let mut cx =
                        Cx::new(&self.doc, &self.session, &mut self.ui, &log, &stats, None, &mut commands);
                    self.panel.ui(ui, &mut cx);
                });
            });
            for c in commands {
                if let Command::Edit(op) = c {
                    self.doc.apply(&op, 1).expect("the edit applies");
                }
            }
            // No painter here: the font atlas is not uploaded.
            out.textures_delta.clear();
            out.shapes
        }
    }

    #[test]
    fn density_strip_draws_at_most_one_mark_per_pixel_column_per_row() {
        let mut r = Rig::new();
        r.frame();
        let shapes = r.frame();
        let keys_left = r.panel.layout.rows_rect.left() + NAMES_WIDTH;
        let columns = r.panel.layout.rows_rect.right() - keys_left;
        assert!(r.panel.layout.rows.len() >= 20, "the summary and the bone rows are drawn");
        for &(kind, cy) in &r.panel.layout.rows {
            // The key marks of this row: inside the key area and the row's band (row
            // backgrounds start in the names column; grid lines and the playhead span rows).
            let mut marks: Vec<Rect> = shapes
                .iter()
                .map(|s| s.shape.visual_bounding_rect())
                .filter(|b| {
                    b.left() >= keys_left - 6.0
                        && b.top() >= cy - ROW_HEIGHT * 0.5
                        && b.bottom() <= cy + ROW_HEIGHT * 0.5
                })
                .filter(|b| b.is_positive() && b.height() < ROW_HEIGHT)
                .collect();
            assert!(!marks.is_empty(), "{kind:?} shows its keys");
            assert!(marks.len() as f32 <= columns, "{kind:?}: {} marks in {columns} columns", marks.len());
            marks.sort_by(|a, b| a.left().total_cmp(&b.left()));
            let covered: f32 = marks.iter().map(|m| m.width().round().max(1.0)).sum();
            assert!(covered <= columns + 1.0, "{kind:?}: marks cover {covered} of {columns} columns");
            for w in marks.windows(2) {
                assert!(w[1].left() >= w[0].right() - 0.01, "{kind:?}: marks overlap at x {}", w[1].left());
            }
        }
    }

    #[test]
    fn merged_times_are_sorted_with_near_duplicates_kept_once() {
        let m = model::merge_times(&[0.0, 0.5, 1.0], &[0.25, 0.5, 0.500_000_1, 2.0]);
        assert_eq!(m, vec![0.0, 0.25, 0.5, 1.0, 2.0]);
        // The summary row's selection: a key selected on one bone marks its time.
        let mut sel = BTreeSet::new();
        sel.insert(KeyId::new(2, Channel::Rotation, 0.5));
        sel.insert(KeyId::new(0, Channel::Translation, 1.0));
        sel.insert(KeyId::new(0, Channel::Rotation, 0.25));
        let s = Selected::new(&sel);
        assert_eq!(s.of(RowKind::Summary), &[0.25, 0.5, 1.0]);
        assert_eq!(s.of(RowKind::Bone(0)), &[0.25, 1.0]);
        assert_eq!(
            selected_flags(&[0.0, 0.25, 0.5, 0.75, 1.0], s.of(RowKind::Summary)),
            [false, true, true, false, true]
        );
    }

    #[test]
    fn key_marks_are_built_once_per_revision_view_and_selection() {
        let mut r = Rig::new();
        r.frame();
        r.frame();
        let built = r.panel.key_marks().rebuilds();
        assert!(built >= 1 && !r.panel.key_marks().shapes().is_empty());
        r.frame();
        r.frame();
        assert_eq!(r.panel.key_marks().rebuilds(), built, "identical frames reuse the marks");
        // A selection change.
        let t = model::channel_times(&r.doc.project().clips[PATH], 3, Channel::Rotation)[100];
        r.panel.selection.insert(KeyId::new(3, Channel::Rotation, t));
        r.frame();
        assert_eq!(r.panel.key_marks().rebuilds(), built + 1, "a new selection rebuilds");
        r.frame();
        assert_eq!(r.panel.key_marks().rebuilds(), built + 1);
        // An edit (a new revision).
        let op = Op::Clip {
            path: PATH.into(),
            op: ClipOp::SetProperties {
                name: Some("walk".into()),
                looping: None,
                length: None,
                frame_rate: None,
            },
        };
        r.doc.apply(&op, 7).expect("the rename applies");
        r.frame();
        assert_eq!(r.panel.key_marks().rebuilds(), built + 2, "an edit rebuilds");
        // A pan.
        r.panel.view = r.panel.view.panned(25.0);
        r.frame();
        assert_eq!(r.panel.key_marks().rebuilds(), built + 3, "a new view rebuilds");
        r.frame();
        assert_eq!(r.panel.key_marks().rebuilds(), built + 3);
    }
}
