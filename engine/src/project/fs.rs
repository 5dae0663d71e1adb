//! Safe file access for projects and for every file Marrow writes.
//!
//! Reading: [`ProjectRoot`] is a project folder with its real path (symbolic links resolved once).
//! Every path a manifest, a journal or a scene names is resolved against it with its links
//! followed ([`ProjectRoot::resolve`]) and refused, with a [`ProjectError`] naming the path and
//! where it leads, if it leaves the folder. Only regular files are read ([`read_regular`]): the
//! kind is checked before opening, the file is opened non-blocking (a FIFO cannot hang the
//! reader) and without following a link, checked again on the open handle, and read up to
//! [`MAX_PROJECT_FILE_BYTES`] (a larger file is refused by name, so a link to `/dev/zero` or an
//! enormous file cannot grow memory).
//!
//! Writing: [`write_atomic`] writes a file whole or not at all: a link is followed to the file it
//! names and that file is written (the link stays); a target that exists and is not a regular
//! file (a device, a FIFO, a socket, a folder) is refused before anything is written; the bytes go
//! to a temp file beside the target ([`temp_name`]: the target's name, a marker and a random part
//! no user's file shares), are flushed and synced, renamed over the target, and the folder is
//! synced; on any failure the temp is removed and the error returned. Temps a killed writer left
//! are removed by the next write of the same target once their writer is gone.
//!
//! Not here: the save journal (see [`super::stage_save`]), what a project's files mean, or any
//! bound on what a file holds beyond its size (each loader bounds its own content).

use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use super::{ProjectError, fault, io_error};

/// The largest project file read (256 MB): more than any authored file or binary asset a project
/// holds in practice, small enough that a hostile file cannot exhaust memory.
pub const MAX_PROJECT_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// The marker in every temp file name Marrow writes (`.NAME.marrow-tmp-PID-RANDOM`).
pub const TEMP_MARKER: &str = ".marrow-tmp-";

/// A project folder: the path it was given by and its real path (links resolved).
#[derive(Clone, Debug)]
pub struct ProjectRoot {
    given: PathBuf,
    real: PathBuf,
}

impl ProjectRoot {
    /// The project folder `root` (an empty path is the current folder); fails if it does not
    /// exist or cannot be resolved.
    pub fn open(root: &Path) -> Result<Self, ProjectError> {
        let given = if root.as_os_str().is_empty() { PathBuf::from(".") } else { root.to_owned() };
        let real = std::fs::canonicalize(&given).map_err(|e| io_error(&given, e))?;
        Ok(Self { given, real })
    }

    /// The folder's real path.
    pub fn real(&self) -> &Path {
        &self.real
    }

    /// The real path of `path` (the folder's path, as given or real, joined with a relative one,
    /// as the loaders build them; or relative to the folder), with every link followed: the longest part
    /// that exists is resolved and the rest appended. Refused if it leads out of the folder,
    /// climbs with `..`, or runs into a link that leads nowhere.
    pub fn resolve(&self, path: &Path) -> Result<PathBuf, ProjectError> {
        let rel = if let Ok(r) = path.strip_prefix(&self.given) {
            r
        } else if let Ok(r) = path.strip_prefix(&self.real) {
            r
        } else if path.is_relative() {
            path
        } else {
            return Err(fault(path, format!("is not inside the project folder {}", self.real.display())));
        };
        if rel.components().any(|c| !matches!(c, Component::Normal(_) | Component::CurDir)) {
            return Err(fault(path, "is not a plain path inside the project folder (it climbs with ..)"));
        }
        let full = self.real.join(rel);
        let mut existing = full.as_path();
        let mut rest = Vec::new();
        loop {
            match std::fs::symlink_metadata(existing) {
                Ok(_) => break,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else {
                        return Err(io_error(path, e));
                    };
                    rest.push(name.to_owned());
                    existing = parent;
                }
                Err(e) => return Err(io_error(path, e)),
            }
        }
        let mut real = std::fs::canonicalize(existing)
            .map_err(|e| fault(path, format!("cannot be resolved (a link that leads nowhere?): {e}")))?;
        real.extend(rest.iter().rev());
        if !real.starts_with(&self.real) {
            return Err(fault(
                path,
                format!(
                    "leads to {}, outside the project folder {} (through a symbolic link): refused",
                    real.display(),
                    self.real.display()
                ),
            ));
        }
        Ok(real)
    }

    /// The real path of `path` (see [`ProjectRoot::resolve`]) if it is a regular file.
    pub fn regular_file(&self, path: &Path) -> Result<PathBuf, ProjectError> {
        let real = self.resolve(path)?;
        let meta = std::fs::metadata(&real).map_err(|e| io_error(path, e))?;
        check_kind(&meta.file_type(), path)?;
        Ok(real)
    }

    /// The bytes of the regular file `path` inside the folder (see [`read_regular`]).
    pub fn read(&self, path: &Path) -> Result<Vec<u8>, ProjectError> {
        read_regular(&self.resolve(path)?, path)
    }

    /// The text of the regular file `path` inside the folder.
    pub fn read_text(&self, path: &Path) -> Result<String, ProjectError> {
        String::from_utf8(self.read(path)?).map_err(|e| io_error(path, e))
    }
}

/// What kind of file `t` is, in words.
fn kind_name(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        } else if t.is_char_device() {
            return "a character device";
        } else if t.is_block_device() {
            return "a block device";
        } else if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a folder"
    } else if t.is_symlink() {
        "a symbolic link"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a regular file"
    }
}

/// Refuses anything but a regular file (`shown` names it).
fn check_kind(t: &std::fs::FileType, shown: &Path) -> Result<(), ProjectError> {
    if t.is_file() {
        Ok(())
    } else {
        Err(fault(shown, format!("is {}, not a regular file: only regular files are read", kind_name(t))))
    }
}

fn check_size(len: u64, shown: &Path) -> Result<(), ProjectError> {
    if len > MAX_PROJECT_FILE_BYTES {
        Err(fault(
            shown,
            format!(
                "is {len} bytes; a project file may be at most {} MB",
                MAX_PROJECT_FILE_BYTES / (1024 * 1024)
            ),
        ))
    } else {
        Ok(())
    }
}

/// Reads the regular file at `real` (`shown` names it in errors): its kind and size checked
/// before opening, opened non-blocking and not through a link, checked again on the handle, and
/// read up to [`MAX_PROJECT_FILE_BYTES`].
pub fn read_regular(real: &Path, shown: &Path) -> Result<Vec<u8>, ProjectError> {
    let meta = std::fs::metadata(real).map_err(|e| io_error(shown, e))?;
    check_kind(&meta.file_type(), shown)?;
    check_size(meta.len(), shown)?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW);
    }
    let file = options.open(real).map_err(|e| io_error(shown, e))?;
    let meta = file.metadata().map_err(|e| io_error(shown, e))?;
    check_kind(&meta.file_type(), shown)?;
    check_size(meta.len(), shown)?;
    let mut out = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_PROJECT_FILE_BYTES + 1).read_to_end(&mut out).map_err(|e| io_error(shown, e))?;
    check_size(out.len() as u64, shown)?;
    Ok(out)
}

/// Reads the file a user named outside any project (`marrow check FILE.glb`, File > Import):
/// links are followed, but only a regular file is read (checked before opening and again on
/// the handle, opened non-blocking so a FIFO cannot hang the reader), and at most `limit`
/// bytes; anything else is an `InvalidInput` error saying what the path is.
pub fn read_regular_file(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let refuse = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, why);
    let check = |meta: &std::fs::Metadata| {
        let t = meta.file_type();
        if !t.is_file() {
            return Err(refuse(format!(
                "is {}, not a regular file: only regular files are read",
                kind_name(&t)
            )));
        }
        if meta.len() > limit {
            return Err(refuse(format!("is {} bytes; the limit is {} MB", meta.len(), limit >> 20)));
        }
        Ok(())
    };
    check(&std::fs::metadata(path)?)?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options.open(path)?;
    let meta = file.metadata()?;
    check(&meta)?;
    let mut out = Vec::with_capacity(meta.len() as usize);
    file.take(limit + 1).read_to_end(&mut out)?;
    if out.len() as u64 > limit {
        return Err(refuse(format!("grew past the limit of {} MB while read", limit >> 20)));
    }
    Ok(out)
}

/// A fresh temp file name for a file named `name`: `.NAME.marrow-tmp-PID-RANDOM` (16 hex digits
/// from the standard library's randomly keyed hasher, the time and a counter).
pub fn temp_name(name: &str) -> String {
    use std::hash::{BuildHasher, Hasher};
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(N.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    h.write_u128(
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()),
    );
    format!(".{name}{TEMP_MARKER}{}-{:016x}", std::process::id(), h.finish())
}

/// The target name and writer's process id of a temp name from [`temp_name`], or `None`.
pub fn parse_temp_name(name: &str) -> Option<(&str, u32)> {
    let (target, tail) = name.strip_prefix('.')?.rsplit_once(TEMP_MARKER)?;
    let (pid, random) = tail.split_once('-')?;
    let hex = random.len() == 16 && random.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    let pid = pid.parse().ok().filter(|_| hex && !target.is_empty())?;
    Some((target, pid))
}

/// Whether the process `pid` may still be running (always true where that cannot be asked).
#[cfg(unix)]
pub fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let Ok(pid) = libc::pid_t::try_from(pid) else { return false };
    // SAFETY: kill with signal 0 sends nothing; it only asks whether the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Whether the process `pid` may still be running (always true where that cannot be asked).
#[cfg(not(unix))]
pub fn process_alive(_pid: u32) -> bool {
    true
}

/// Syncs a folder (so a rename in it is durable); a no-op where folders cannot be synced.
pub fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    std::fs::File::open(dir)?.sync_all()?;
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}

/// The file a write of `path` lands in: `path`, or, through symbolic links, the file they name.
/// Refused if that exists and is not a regular file, or the links loop.
pub fn resolve_write_target(path: &Path) -> Result<PathBuf, ProjectError> {
    let mut p = path.to_owned();
    for _ in 0..40 {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let link = std::fs::read_link(&p).map_err(|e| io_error(path, e))?;
                p = match p.parent() {
                    Some(dir) if link.is_relative() => dir.join(link),
                    _ => link,
                };
            }
            Ok(m) if m.file_type().is_file() => return Ok(p),
            Ok(m) => {
                let through =
                    if p == path { String::new() } else { format!(" (the link leads to {})", p.display()) };
                return Err(fault(
                    path,
                    format!(
                        "is {}{through}, not a regular file: refusing to write over it",
                        kind_name(&m.file_type())
                    ),
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(p),
            Err(e) => return Err(io_error(path, e)),
        }
    }
    Err(fault(path, "too many levels of symbolic links"))
}

/// Removes the temps in `dir` of targets `of` accepts whose writer is gone (writes killed on
/// the way).
pub fn remove_dead_temps(dir: &Path, of: &dyn Fn(&str) -> bool) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let file = e.file_name();
        let Some((target, pid)) = file.to_str().and_then(parse_temp_name) else { continue };
        if of(target) && e.file_type().is_ok_and(|t| t.is_file()) && !process_alive(pid) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Writes `bytes` to a new temp file in `dir` for the target `name` (flushed and synced);
/// returns its path. Nothing is left behind on failure.
pub(super) fn write_temp(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    let tmp = dir.join(temp_name(name));
    let written = (|| {
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        f.flush()?;
        f.sync_all()
    })();
    match written {
        Ok(()) => Ok(tmp),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Writes `bytes` to `path` whole or not at all (see the module docs): links followed to their
/// file, anything but a regular file refused before writing, a synced temp renamed over the
/// target, the folder synced; creates missing folders. Every failure is returned, with the temp
/// removed.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ProjectError> {
    let target = resolve_write_target(path)?;
    let dir = target.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new(".")).to_owned();
    std::fs::create_dir_all(&dir).map_err(|e| io_error(&dir, e))?;
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| fault(path, "names no file"))?;
    remove_dead_temps(&dir, &|t| t == name);
    let tmp = write_temp(&dir, &name, bytes).map_err(|e| io_error(path, e))?;
    if let Err(e) = std::fs::rename(&tmp, &target) {
        let _ = std::fs::remove_file(&tmp);
        return Err(io_error(path, e));
    }
    sync_dir(&dir).map_err(|e| io_error(&dir, e))
}
