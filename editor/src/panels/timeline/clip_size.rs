//! The clip's bytes at each runtime precision, shown in the Timeline's header: the authored
//! tracks, the compiled key blocks at full and at compact precision, and the compressed form a
//! game ships (`marrow cook`) at ACL's default error (0.01 cm at a 3 cm shell).
//!
//! The compiled sizes are built at once; the compressed one is measured on a worker thread (a
//! long capture takes a noticeable fraction of a second) and shown when it is ready. Each is
//! computed once per clip state (the clip's `Arc`: an edit makes a new one). UI state only:
//! nothing here is saved or edits the document.

use std::sync::{Arc, Mutex};

use marrow_engine::clip::Clip;
use marrow_engine::compiled_clip::{CompiledClip, Precision};
use marrow_engine::compressed::{CompressOptions, CompressedClip};
use marrow_engine::skeleton::Skeleton;

/// What the compressed measurement found.
#[derive(Clone, Debug, PartialEq)]
pub enum Compressed {
    /// Bytes and the worst shell error reached (model units).
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
#[derive(Clone, Debug)]
pub struct ClipSizes {
    /// The authored tracks and markers.
    pub authored: usize,
    /// Compiled at full precision.
    pub full: usize,
    /// Compiled at compact precision.
    pub compact: usize,
    /// The compressed form, once measured.
    pub compressed: Arc<Mutex<Option<Compressed>>>,
}

/// The sizes of the clip last shown, keyed by its `Arc`.
#[derive(Debug, Default)]
pub struct SizeCache {
    of: Option<(Arc<Clip>, ClipSizes)>,
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
    /// The sizes of `clip` on `skeleton` (measuring the compressed form in the background the
    /// first time).
    pub fn sizes(&mut self, clip: &Arc<Clip>, skeleton: &Skeleton) -> &ClipSizes {
        let fresh = !matches!(&self.of, Some((c, _)) if Arc::ptr_eq(c, clip));
        if fresh {
            let compressed = Arc::new(Mutex::new(None));
            let (slot, job_clip, job_skeleton) = (compressed.clone(), clip.clone(), skeleton.clone());
            std::thread::spawn(move || {
                let result =
                    match CompressedClip::compress(&job_clip, &job_skeleton, &CompressOptions::default()) {
                        Ok((_, r)) => Compressed::Done { bytes: r.bytes, error: r.max_error },
                        Err(e) => Compressed::Failed(e.to_string()),
                    };
                if let Ok(mut s) = slot.lock() {
                    *s = Some(result);
                }
            });
            let sizes = ClipSizes {
                authored: clip.bytes(),
                full: CompiledClip::build_with(clip.channels(), Precision::Full).bytes(),
                compact: CompiledClip::build_with(clip.channels(), Precision::Compact).bytes(),
                compressed,
            };
            self.of = Some((clip.clone(), sizes));
        }
        &self.of.as_ref().expect("set above").1
    }

    /// The header's size label for `clip` on `skeleton`, with the table in its hover.
    pub fn ui(&mut self, ui: &mut egui::Ui, clip: &Arc<Clip>, skeleton: &Skeleton) {
        let s = self.sizes(clip, skeleton);
        let compressed = s.compressed.lock().ok().and_then(|c| c.clone());
        let (short, long) = match &compressed {
            Some(Compressed::Done { bytes, error }) => (
                format!("compressed {}", show(*bytes)),
                format!(
                    "compressed {} (worst shell error {error:.1e}, tolerance 1e-4 at a 3 cm shell)",
                    show(*bytes)
                ),
            ),
            Some(Compressed::Failed(why)) => ("compressed: n/a".to_owned(), format!("compressed: {why}")),
            None => {
                ui.ctx().request_repaint_after(std::time::Duration::from_millis(100));
                ("compressed …".to_owned(), "compressed: measuring…".to_owned())
            }
        };
        ui.weak(format!("runtime {} · {short}", show(s.authored + s.full))).on_hover_text(format!(
            "Bytes of this clip at each runtime precision (playing it holds the authored tracks and \
             the compiled form; key blocks copy the keys they group):\nauthored tracks {}\n\
             compiled, full precision {}\ncompiled, compact (half floats, 16-bit rotations) {}\n{long}\n\
             `marrow cook` writes the compressed form.",
            show(s.authored),
            show(s.full),
            show(s.compact),
        ));
    }

    /// The sizes of the clip last shown, if any (for the probe and tests).
    pub fn last(&self) -> Option<&ClipSizes> {
        self.of.as_ref().map(|(_, s)| s)
    }
}
