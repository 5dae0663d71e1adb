//! The clip's bytes at each runtime precision, shown in the Timeline's header: the authored
//! tracks, the compiled key blocks at full and at compact precision, and the compressed form a
//! game ships (`marrow cook`) at ACL's default error (0.01 cm at a 3 cm shell), in world units
//! as `marrow cook` takes them: a rig the scenes place at another scale (a capture in inches)
//! is measured with the tolerance and shell in its own units
//! ([`marrow_engine::project::Library::rig_scales`]).
//!
//! Measured on a worker thread (compressing a long capture takes a noticeable fraction of a
//! second), once per clip state (the clip's `Arc`: an edit makes a new one), and only once the
//! clip has stayed the same for [`SETTLE`] with no other measurement running: a key drag, which
//! makes a new clip state every frame, starts none until it ends. UI state only: nothing here
//! is saved or edits the document.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use marrow_engine::clip::Clip;
use marrow_engine::compiled_clip::{CompiledClip, Precision};
use marrow_engine::compressed::{CompressOptions, CompressedClip};
use marrow_engine::skeleton::Skeleton;

/// How long a clip state must last before it is measured.
pub const SETTLE: Duration = Duration::from_millis(250);

/// What the compressed measurement found.
#[derive(Clone, Debug, PartialEq)]
pub enum Compressed {
    /// Bytes and the worst shell error reached (world units).
    Done {
        /// The compressed form's bytes.
        bytes: usize,
        /// The worst error.
        error: f32,
    },
    /// Why it could not be compressed.
    Failed(String),
}

/// The sizes of one clip state.
#[derive(Clone, Debug, PartialEq)]
pub struct ClipSizes {
    /// The authored tracks and markers.
    pub authored: usize,
    /// Compiled at full precision.
    pub full: usize,
    /// Compiled at compact precision.
    pub compact: usize,
    /// The compressed form.
    pub compressed: Compressed,
}

impl ClipSizes {
    /// Measures `clip` on `skeleton`, placed at `scale` in the scenes (the worker's job).
    pub fn measure(clip: &Clip, skeleton: &Skeleton, scale: f32) -> Self {
        let options = CompressOptions::default().in_rig_units(scale);
        let compressed = match CompressedClip::compress(clip, skeleton, &options) {
            Ok((_, r)) => Compressed::Done { bytes: r.bytes, error: r.max_error * scale },
            Err(e) => Compressed::Failed(e.to_string()),
        };
        ClipSizes {
            authored: clip.bytes(),
            full: CompiledClip::build_with(clip.channels(), Precision::Full).bytes(),
            compact: CompiledClip::build_with(clip.channels(), Precision::Compact).bytes(),
            compressed,
        }
    }
}

/// The clip state last shown and its measurement.
#[derive(Debug)]
struct Shown {
    clip: Arc<Clip>,
    scale: f32,
    since: Instant,
    started: bool,
    sizes: Arc<Mutex<Option<ClipSizes>>>,
}

/// The sizes of the clip last shown, keyed by its `Arc`.
#[derive(Debug, Default)]
pub struct SizeCache {
    shown: Option<Shown>,
    /// A worker is measuring.
    busy: Arc<AtomicBool>,
}

/// `n` bytes in B, KB or MB.
fn show(n: usize) -> String {
    if n >= 1 << 20 {
        format!("{:.2} MB", n as f64 / (1 << 20) as f64)
    } else if n >= 1 << 10 {
        format!("{:.1} KB", n as f64 / 1024.0)
    } else {
        format!("{n} B")
    }
}

impl SizeCache {
    /// Follows the clip shown (on a rig at `scale`): a new state restarts the wait; a state that
    /// has settled is measured on a worker when none is running. Returns the measurement once
    /// there is one.
    pub fn poll(&mut self, clip: &Arc<Clip>, skeleton: &Skeleton, scale: f32) -> Option<ClipSizes> {
        if !matches!(&self.shown, Some(s) if Arc::ptr_eq(&s.clip, clip) && s.scale == scale) {
            self.shown = Some(Shown {
                clip: clip.clone(),
                scale,
                since: Instant::now(),
                started: false,
                sizes: Arc::new(Mutex::new(None)),
            });
        }
        let s = self.shown.as_mut().expect("set above");
        if !s.started && s.since.elapsed() >= SETTLE && !self.busy.swap(true, Ordering::AcqRel) {
            s.started = true;
            let (slot, busy, clip, skeleton) =
                (s.sizes.clone(), self.busy.clone(), clip.clone(), skeleton.clone());
            std::thread::spawn(move || {
                let sizes = ClipSizes::measure(&clip, &skeleton, scale);
                if let Ok(mut s) = slot.lock() {
                    *s = Some(sizes);
                }
                busy.store(false, Ordering::Release);
            });
        }
        s.sizes.lock().ok().and_then(|s| s.clone())
    }

    /// The header's size label for `clip` on `skeleton` (placed at `scale` in the scenes), with
    /// the table in its hover.
    pub fn ui(&mut self, ui: &mut egui::Ui, clip: &Arc<Clip>, skeleton: &Skeleton, scale: f32) {
        let Some(s) = self.poll(clip, skeleton, scale) else {
            ui.ctx().request_repaint_after(Duration::from_millis(100));
            steady(ui, "· size …").on_hover_text("Measuring this clip's bytes at each precision…");
            return;
        };
        let (short, long) = match &s.compressed {
            Compressed::Done { bytes, error } => (
                format!("compressed {}", show(*bytes)),
                format!(
                    "compressed {} (worst shell error {error:.1e}, tolerance 1e-4 at a 3 cm shell{})",
                    show(*bytes),
                    if scale == 1.0 {
                        String::new()
                    } else {
                        format!(", on screen: the scene places this rig at scale {scale}")
                    }
                ),
            ),
            Compressed::Failed(why) => ("compressed: n/a".to_owned(), format!("compressed: {why}")),
        };
        steady(ui, format!("· runtime {} · {short}", show(s.authored + s.full))).on_hover_text(format!(
            "Bytes of this clip at each runtime precision (playing it holds the authored tracks and \
             the compiled form; key blocks copy the keys they group):\nauthored tracks {}\n\
             compiled, full precision {}\ncompiled, compact (half floats, 16-bit rotations) {}\n{long}\n\
             `marrow cook` writes the compressed form.",
            show(s.authored),
            show(s.full),
            show(s.compact),
        ));
    }

    /// The measurement of the clip state last shown, once there is one (for tests).
    pub fn last(&self) -> Option<ClipSizes> {
        self.shown.as_ref().and_then(|s| s.sizes.lock().ok().and_then(|s| s.clone()))
    }
}

/// `text` (weak) in a space at least as wide as the sizes usually read ("· runtime 999.9 KB ·
/// compressed 99.9 KB"): the header wraps the same before and after the measurement arrives, so
/// the rows below do not move under the pointer a moment after a clip is shown.
fn steady(ui: &mut egui::Ui, text: impl Into<String>) -> egui::Response {
    let font = egui::TextStyle::Body.resolve(ui.style());
    let room = ui
        .painter()
        .layout_no_wrap("· runtime 999.9 KB · compressed 99.9 KB".to_owned(), font, egui::Color32::WHITE)
        .size()
        .x;
    // One group of the header's wrapping row (to the next line whole, never past the edge).
    crate::widgets::wrap_group(ui, "clip sizes", |ui| {
        ui.set_min_width(room);
        ui.weak(text.into())
    })
}
