//! Transient notices: a line the status bar shows for a few seconds after something finished
//! outside the document (an export written, or refused), besides its entry in the Log; and the
//! size of what an export wrote, for that line.
//!
//! Not here: the Log (`crate::log`), dialogs (`crate::app`'s modals).

use std::path::Path;
use std::time::Duration;

use egui::{Color32, RichText};

/// How long a notice stays in the status bar, seconds.
pub const NOTICE_SECONDS: f64 = 8.0;

/// A status-bar line that goes away by itself.
#[derive(Clone, Debug, PartialEq)]
pub struct Notice {
    /// What it says.
    pub text: String,
    /// Whether it reports a failure (drawn in red).
    pub error: bool,
    /// When it was first drawn (egui's input time), so its time counts from when it was seen.
    shown_at: Option<f64>,
}

impl Notice {
    /// A notice of something done.
    pub fn done(text: impl Into<String>) -> Self {
        Self { text: text.into(), error: false, shown_at: None }
    }

    /// A notice of something that failed.
    pub fn failed(text: impl Into<String>) -> Self {
        Self { text: text.into(), error: true, shown_at: None }
    }

    /// Draws the notice into the status bar; returns `false` once its time is up (the caller
    /// drops it), asking for the repaint that will take it away.
    pub fn show(&mut self, ui: &mut egui::Ui) -> bool {
        let now = ui.input(|i| i.time);
        let since = now - *self.shown_at.get_or_insert(now);
        if since >= NOTICE_SECONDS {
            return false;
        }
        ui.separator();
        let color =
            if self.error { Color32::from_rgb(235, 90, 80) } else { Color32::from_rgb(120, 200, 120) };
        ui.label(RichText::new(&self.text).color(color));
        ui.ctx().request_repaint_after(Duration::from_secs_f64(NOTICE_SECONDS - since));
        true
    }
}

/// The bytes an export at `path` wrote: the file itself, and for a `.gltf` the buffers its
/// JSON names beside it. `None` when the file cannot be read back.
pub fn written_size(path: &Path) -> Option<u64> {
    let own = std::fs::metadata(path).ok()?.len();
    let is_gltf = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("gltf"));
    if !is_gltf {
        return Some(own);
    }
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let buffers = json["buffers"].as_array().map_or(0, |list| {
        list.iter()
            .filter_map(|b| b["uri"].as_str())
            .filter(|uri| !uri.starts_with("data:") && !uri.contains('/') && !uri.contains('\\'))
            .filter_map(|uri| std::fs::metadata(dir.join(uri)).ok())
            .map(|m| m.len())
            .sum::<u64>()
    });
    Some(own + buffers)
}

/// A byte count for people: "812 bytes", "14.2 KiB", "3.1 MiB".
pub fn human_size(bytes: u64) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else if b < KIB * KIB {
        format!("{:.1} KiB", b / KIB)
    } else {
        format!("{:.1} MiB", b / (KIB * KIB))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_in_bytes_kib_and_mib() {
        assert_eq!(human_size(812), "812 bytes");
        assert_eq!(human_size(14_541), "14.2 KiB");
        assert_eq!(human_size(3_250_586), "3.1 MiB");
    }

    #[test]
    fn a_gltf_counts_the_buffers_it_names_beside_it() {
        let dir = std::env::temp_dir().join(format!("marrow-notice-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let json =
            r#"{"buffers":[{"uri":"a.0001.bin"},{"uri":"data:application/octet-stream;base64,AA=="}]}"#;
        std::fs::write(dir.join("a.gltf"), json).unwrap();
        std::fs::write(dir.join("a.0001.bin"), [0u8; 100]).unwrap();
        std::fs::write(dir.join("a.glb"), [0u8; 40]).unwrap();
        assert_eq!(written_size(&dir.join("a.gltf")), Some(json.len() as u64 + 100));
        assert_eq!(written_size(&dir.join("a.glb")), Some(40));
        assert_eq!(written_size(&dir.join("missing.glb")), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
