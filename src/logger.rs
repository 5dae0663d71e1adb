//! The binary's logger: what the engine and editor say through `log` reaches standard error,
//! so a fault that would otherwise be silent (a shader directory that failed and fell back to the
//! embedded shaders, a clip skipped) is seen. Warnings and errors from Marrow's own crates are
//! always shown; `-v` adds their notes and other crates' warnings (wgpu, winit), `-vv` details.
//!
//! Not here: the editor's Log panel (`marrow_editor::log`), which keeps its own entries.

use log::{Level, LevelFilter, Log, Metadata, Record};

struct StderrLogger {
    verbose: u8,
}

impl StderrLogger {
    fn shows(&self, target: &str, level: Level) -> bool {
        let ours = target.starts_with("marrow");
        match (ours, self.verbose) {
            (true, 0) => level <= Level::Warn,
            (true, 1) => level <= Level::Info,
            (true, _) => level <= Level::Debug,
            // Other crates (wgpu probing its backends, winit) only when asked.
            (false, 0) => false,
            (false, 1) => level <= Level::Warn,
            (false, _) => level <= Level::Info,
        }
    }
}

impl Log for StderrLogger {
    fn enabled(&self, metadata: &Metadata) -> bool {
        self.shows(metadata.target(), metadata.level())
    }

    fn log(&self, record: &Record) {
        if self.enabled(record.metadata()) {
            let level = match record.level() {
                Level::Error => "error",
                Level::Warn => "warning",
                Level::Info => "note",
                Level::Debug | Level::Trace => "debug",
            };
            eprintln!("{level}: {}", record.args());
        }
    }

    fn flush(&self) {}
}

/// Installs the logger for `verbose` (the count of `-v` flags). A second call does nothing.
pub fn install(verbose: u8) {
    let logger = Box::new(StderrLogger { verbose });
    if log::set_boxed_logger(logger).is_ok() {
        log::set_max_level(match verbose {
            0 => LevelFilter::Warn,
            1 => LevelFilter::Info,
            _ => LevelFilter::Debug,
        });
    }
}
