//! Autosave and crash recovery. While the document is dirty, the manifest and every authored
//! file that differs from the last save (as a save would write it: `Document::unsaved_files`)
//! go into one recovery file next to the project every minute ([`Autosave`]), written
//! atomically; the other files are read from the folder when it is recovered
//! (`Project::from_files_over_disk`), so an autosave costs what was changed, not the project. A clean save or an explicit "Don't Save" removes it; a
//! crash leaves it, and the next open of the project offers it ([`read`]).
//!
//! Not here: the prompt (`crate::app`), the document (`crate::document`).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use marrow_engine::project::fs::ProjectRoot;
use marrow_engine::project::write_atomic;
use serde::{Deserialize, Serialize};

/// The recovery file's name inside a project folder.
pub const RECOVERY_FILE: &str = ".marrow-recovery.ron";

/// The recovery file's version: 2 holds the files changed since the last save (the rest are
/// the folder's); version 1 files held every file and still read.
const VERSION: u32 = 2;

/// What a recovery file holds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recovery {
    /// Format version.
    pub version: u32,
    /// When it was written (seconds since the Unix epoch).
    pub written: u64,
    /// The manifest and the authored files changed since the last save: (path relative to the
    /// project folder, text).
    pub files: Vec<(String, String)>,
}

/// Where the recovery file of the project in `root` lives.
pub fn path(root: &Path) -> PathBuf {
    root.join(RECOVERY_FILE)
}

/// Writes the recovery file of `root` (atomically).
pub fn write(root: &Path, files: Vec<(String, String)>) -> Result<(), String> {
    let written = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let r = Recovery { version: VERSION, written, files };
    let text =
        ron::ser::to_string_pretty(&r, ron::ser::PrettyConfig::default()).map_err(|e| e.to_string())?;
    // Resolved inside the project first: a planted link cannot send the write elsewhere.
    let target = ProjectRoot::open(root).and_then(|r| r.resolve(&path(root))).map_err(|e| e.to_string())?;
    write_atomic(&target, text.as_bytes()).map_err(|e| e.to_string())
}

/// The recovery file of `root`, if there is one (`Err` when it is unreadable).
pub fn read(root: &Path) -> Option<Result<Recovery, String>> {
    let p = path(root);
    std::fs::symlink_metadata(&p).ok()?;
    // Only a regular file inside the project, within the size cap.
    let text = match ProjectRoot::open(root).and_then(|r| r.read_text(&p)) {
        Ok(t) => t,
        Err(e) => return Some(Err(e.to_string())),
    };
    Some(match ron::from_str::<Recovery>(&text) {
        Ok(r) if r.version == VERSION || r.version == 1 => Ok(r),
        Ok(r) => Err(format!("{}: version {} is not supported", p.display(), r.version)),
        Err(e) => Err(format!("{}: {e}", p.display())),
    })
}

/// Removes the recovery file of `root` (nothing when there is none).
pub fn remove(root: &Path) {
    let _ = std::fs::remove_file(path(root));
}

/// The autosave timer.
#[derive(Debug)]
pub struct Autosave {
    /// Time between autosaves while dirty.
    pub interval: Duration,
    last: Instant,
}

impl Default for Autosave {
    fn default() -> Self {
        Self { interval: Duration::from_secs(60), last: Instant::now() }
    }
}

impl Autosave {
    /// A timer firing every `interval` while dirty.
    pub fn new(interval: Duration) -> Self {
        Self { interval, last: Instant::now() }
    }

    /// Whether an autosave is due now (and restarts the timer when it is).
    pub fn due(&mut self, dirty: bool) -> bool {
        if !dirty {
            self.last = Instant::now();
            return false;
        }
        if self.last.elapsed() >= self.interval {
            self.last = Instant::now();
            return true;
        }
        false
    }
}
