//! Shader sources: the WGSL files of `shaders/`, embedded with `include_str!` (release builds
//! need no files) or read from a directory for hot reload; a small composer (`#import NAME`,
//! `#define NAME`, `#ifdef NAME` / `#ifndef NAME` / `#else` / `#endif`, the subset of naga_oil's
//! syntax the renderer needs, so the skinned programs are the static ones with `SKINNED`
//! defined, never copies); naga validation for readable errors; and [`ShaderWatcher`], a notify
//! watcher over the directory.
//!
//! It does not create pipelines (see the renderer) and does not cache compiled modules.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

/// Every shader file the renderer uses, with its embedded text.
pub const EMBEDDED: &[(&str, &str)] = &[
    ("common", include_str!("../../../shaders/common.wgsl")),
    ("skinning", include_str!("../../../shaders/skinning.wgsl")),
    ("lighting", include_str!("../../../shaders/lighting.wgsl")),
    ("mesh", include_str!("../../../shaders/mesh.wgsl")),
    ("skin_debug", include_str!("../../../shaders/skin_debug.wgsl")),
    ("overlay", include_str!("../../../shaders/overlay.wgsl")),
    ("present", include_str!("../../../shaders/present.wgsl")),
    ("outline", include_str!("../../../shaders/outline.wgsl")),
    ("particles", include_str!("../../../shaders/particles.wgsl")),
];

/// Why a shader could not be composed or compiled. The message is meant for display.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShaderError {
    /// A file could not be read.
    #[error("shader {file}: cannot read: {message}")]
    Read {
        /// The file.
        file: String,
        /// The I/O error.
        message: String,
    },
    /// `#import`/`#ifdef` structure is broken.
    #[error("shader {file}: {message}")]
    Compose {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// naga rejected the composed WGSL (parse or validation).
    #[error("shader {file} ({defines}): {message}")]
    Compile {
        /// The file.
        file: String,
        /// The defines it was composed with.
        defines: String,
        /// naga's report.
        message: String,
    },
    /// wgpu reported an error while creating a module or pipeline.
    #[error("shader {file}: wgpu: {message}")]
    Device {
        /// The file (or pipeline).
        file: String,
        /// wgpu's report.
        message: String,
    },
    /// The watcher could not be started.
    #[error("shader watcher on {dir}: {message}")]
    Watch {
        /// The directory.
        dir: String,
        /// notify's report.
        message: String,
    },
}

/// Where shader text comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ShaderSource {
    /// The texts compiled into the binary.
    Embedded,
    /// `<dir>/<name>.wgsl`, read on every (re)load.
    Directory(PathBuf),
}

impl ShaderSource {
    /// `Directory(dir)` when given, else `Directory("shaders")` when that exists in the current
    /// directory, else `Embedded`.
    pub fn resolve(dir: Option<&Path>) -> Self {
        match dir {
            Some(d) => Self::Directory(d.to_path_buf()),
            None if Path::new("shaders").join("mesh.wgsl").is_file() => Self::Directory("shaders".into()),
            None => Self::Embedded,
        }
    }

    /// The raw text of shader `name`.
    pub fn text(&self, name: &str) -> Result<String, ShaderError> {
        match self {
            Self::Embedded => {
                EMBEDDED.iter().find(|(n, _)| *n == name).map(|(_, t)| (*t).to_string()).ok_or_else(|| {
                    ShaderError::Read { file: name.into(), message: "no such embedded shader".into() }
                })
            }
            Self::Directory(dir) => {
                let path = dir.join(format!("{name}.wgsl"));
                std::fs::read_to_string(&path).map_err(|e| ShaderError::Read {
                    file: path.display().to_string(),
                    message: e.to_string(),
                })
            }
        }
    }

    /// Composes `name` with `defines` (imports inlined once each, conditionals resolved) and
    /// validates it with naga.
    pub fn compose(&self, name: &str, defines: &[&str]) -> Result<String, ShaderError> {
        let mut defs: HashSet<String> = defines.iter().map(|d| d.to_string()).collect();
        let mut seen = HashSet::new();
        let mut out = String::new();
        self.compose_into(name, &mut defs, &mut seen, &mut out)?;
        validate(name, defines, &out)?;
        Ok(out)
    }

    fn compose_into(
        &self,
        name: &str,
        defs: &mut HashSet<String>,
        seen: &mut HashSet<String>,
        out: &mut String,
    ) -> Result<(), ShaderError> {
        if !seen.insert(name.to_string()) {
            return Ok(());
        }
        let text = self.text(name)?;
        let fault = |line: usize, message: &str| ShaderError::Compose {
            file: format!("{name}.wgsl:{}", line + 1),
            message: message.into(),
        };
        // Each entry: (this branch is live, some branch of this #ifdef was live).
        let mut stack: Vec<(bool, bool)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let live = stack.iter().all(|s| s.0);
            let t = line.trim();
            let word = |d: &str| t.strip_prefix(d).map(str::trim).filter(|w| !w.is_empty());
            if let Some(w) = word("#ifdef") {
                let on = defs.contains(w);
                stack.push((on, on));
            } else if let Some(w) = word("#ifndef") {
                let on = !defs.contains(w);
                stack.push((on, on));
            } else if t == "#else" {
                let top = stack.last_mut().ok_or_else(|| fault(i, "#else without #ifdef"))?;
                *top = (!top.1, true);
            } else if t == "#endif" {
                stack.pop().ok_or_else(|| fault(i, "#endif without #ifdef"))?;
            } else if let Some(w) = word("#define") {
                if live {
                    defs.insert(w.to_string());
                }
            } else if let Some(w) = word("#import") {
                if live {
                    self.compose_into(w, defs, seen, out)?;
                }
            } else if t.starts_with('#') {
                return Err(fault(i, &format!("unknown directive `{t}`")));
            } else if live {
                out.push_str(line);
                out.push('\n');
            }
        }
        if !stack.is_empty() {
            return Err(fault(text.lines().count(), "#ifdef without #endif"));
        }
        Ok(())
    }
}

/// Parses and validates composed WGSL with naga (the same front end wgpu uses), so errors come
/// back as readable text instead of a device error.
pub fn validate(name: &str, defines: &[&str], wgsl: &str) -> Result<(), ShaderError> {
    use wgpu::naga;
    let err = |message: String| ShaderError::Compile {
        file: format!("{name}.wgsl"),
        defines: if defines.is_empty() { "no defines".into() } else { defines.join(",") },
        message,
    };
    let module = naga::front::wgsl::parse_str(wgsl)
        .map_err(|e| err(e.emit_to_string_with_path(wgsl, &format!("{name}.wgsl"))))?;
    naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
        .validate(&module)
        .map_err(|e| err(e.emit_to_string_with_path(wgsl, &format!("{name}.wgsl"))))?;
    Ok(())
}

/// Watches a shader directory (debounced) and reports whether a `.wgsl` file changed.
pub struct ShaderWatcher {
    _debouncer: notify_debouncer_mini::Debouncer<notify::RecommendedWatcher>,
    events: std::sync::Mutex<mpsc::Receiver<notify_debouncer_mini::DebounceEventResult>>,
}

impl std::fmt::Debug for ShaderWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShaderWatcher").finish_non_exhaustive()
    }
}

impl ShaderWatcher {
    /// Starts watching `dir` (non-recursively), debouncing events by `debounce`.
    pub fn new(dir: &Path, debounce: Duration) -> Result<Self, ShaderError> {
        let fault =
            |e: notify::Error| ShaderError::Watch { dir: dir.display().to_string(), message: e.to_string() };
        let (tx, events) = mpsc::channel();
        let mut debouncer = notify_debouncer_mini::new_debouncer(debounce, tx).map_err(fault)?;
        debouncer.watcher().watch(dir, notify::RecursiveMode::NonRecursive).map_err(fault)?;
        Ok(Self { _debouncer: debouncer, events: std::sync::Mutex::new(events) })
    }

    /// Drains pending events; true when a `.wgsl` file changed since the last call.
    pub fn changed(&self) -> bool {
        let mut changed = false;
        let Ok(events) = self.events.lock() else { return false };
        while let Ok(batch) = events.try_recv() {
            match batch {
                Ok(events) => {
                    changed |= events.iter().any(|e| e.path.extension().is_some_and(|x| x == "wgsl"));
                }
                Err(e) => log::warn!("shader watcher: {e}"),
            }
        }
        changed
    }

    /// Blocks up to `timeout` for a change (tests use it instead of sleeping blindly).
    pub fn wait_changed(&self, timeout: Duration) -> bool {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            if self.changed() {
                return true;
            }
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_shaders_compose_and_validate_with_and_without_skinned() {
        let s = ShaderSource::Embedded;
        let plain = s.compose("mesh", &[]).unwrap();
        let skinned = s.compose("mesh", &["SKINNED"]).unwrap();
        assert!(!plain.contains("@location(4) joints"));
        assert!(skinned.contains("@location(4) joints"));
        assert_eq!(plain.matches("fn skinned_world_position").count(), 1);
        for name in ["skin_debug", "overlay", "outline", "present"] {
            s.compose(name, &[]).unwrap();
        }
    }

    #[test]
    fn compile_errors_are_readable() {
        let dir = std::env::temp_dir().join(format!("marrow-shader-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("a.wgsl"),
            "#ifdef X\nfn f() -> f32 { return 1.0; }\n#endif\nfn g() -> u32 { return 1.0; }\n",
        )
        .unwrap();
        let err = ShaderSource::Directory(dir.clone()).compose("a", &[]).unwrap_err();
        assert!(matches!(err, ShaderError::Compile { .. }), "{err}");
        std::fs::write(dir.join("b.wgsl"), "#ifdef X\n").unwrap();
        let err = ShaderSource::Directory(dir.clone()).compose("b", &[]).unwrap_err();
        assert!(err.to_string().contains("#ifdef without #endif"), "{err}");
        let _ = std::fs::remove_dir_all(dir);
    }
}
