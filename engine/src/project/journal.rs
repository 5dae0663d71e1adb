//! Whole-project saves: every new file staged beside its target, a journal naming the renames
//! and removals that finish the save, then the renames. A load after a save killed midway
//! finishes it from the journal ([`finish_interrupted_save`]), so a project on disk is either the
//! old one or the new one.
//!
//! A journal is data a project carries (a downloaded or shared project can carry a planted
//! one), so it is honoured only when it is whole and names nothing but what a save does:
//!
//! - whole: a header line with the format version, then the entries, then a trailer with the
//!   entry count and a checksum of everything before it;
//! - a `rename TMP TARGET` entry: both plain paths inside the project, resolving inside it with
//!   links followed; TMP a temp name of TARGET's ([`super::fs::temp_name`]: same folder, same
//!   name, the marker and a random part) and a regular file (or gone: already renamed); TARGET
//!   absent or a regular file (never a folder or a link);
//! - a `remove PATH` entry: an authored file (`.ron`, not `project.ron`) inside the project
//!   that is a regular file (or already gone).
//!
//! Anything else refuses the whole journal: nothing of it is done, the refusal is returned (and
//! logged by the loaders), and the journal is renamed aside to [`REFUSED_JOURNAL`] so the project
//! loads and the journal is not retried. Temps of a save killed before its journal are removed
//! only when they carry the marker and their writer is gone; other names (an old build's
//! `.NAME.PID.N.tmp`, or a user's file that looks like one) are left and reported.
//! [`inspect_interrupted_save`] is the read-only look `check` takes: it changes nothing.
//!
//! Not here: what the files hold (the caller gives bytes), single-file writes ([`super::fs`]).

use std::path::{Path, PathBuf};

use super::fs::{ProjectRoot, parse_temp_name, process_alive, sync_dir, write_atomic, write_temp};
use super::{PROJECT_FILE, ProjectError, fault, io_error};

/// The journal of a save in progress (in the project folder).
pub const SAVE_JOURNAL: &str = ".marrow-save-journal";

/// Where a journal that was not honoured is moved (in the project folder).
pub const REFUSED_JOURNAL: &str = ".marrow-save-journal.refused";

/// The journal's first line (its format and version).
const HEADER: &str = "marrow-save-journal 2";

/// A whole-project save staged on disk: every new file written to a temp file beside its
/// target and synced, and a journal (written atomically) naming the renames and removals that
/// finish it. [`StagedSave::commit`] carries them out and removes the journal; if the process
/// dies before that, the next load finishes the save from the journal.
#[derive(Debug)]
pub struct StagedSave {
    root: PathBuf,
    renames: Vec<(PathBuf, PathBuf)>,
    removes: Vec<PathBuf>,
}

/// 64-bit FNV-1a (the journal's checksum: it detects a cut or damaged journal, not a forged one;
/// the entry rules guard against those).
pub(super) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// The temp's path relative to the root, beside `rel` (a `/`-separated relative path).
fn temp_rel(rel: &str, tmp: &Path) -> String {
    let name = tmp.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    match rel.rsplit_once('/') {
        Some((dir, _)) => format!("{dir}/{name}"),
        None => name,
    }
}

/// Stages a save of `files` (path relative to `root`, bytes) that also removes `remove`
/// (relative paths of files the project no longer lists). Every path must resolve inside `root`
/// (links followed) and name a regular file or nothing.
pub fn stage_save(
    root: &Path,
    files: &[(String, Vec<u8>)],
    remove: &[String],
) -> Result<StagedSave, ProjectError> {
    std::fs::create_dir_all(root).map_err(|e| io_error(root, e))?;
    let project = ProjectRoot::open(root)?;
    let mut staged = StagedSave { root: project.real().to_owned(), renames: Vec::new(), removes: Vec::new() };
    let mut journal = format!("{HEADER}\n");
    let result = (|| {
        for (rel, bytes) in files {
            let target = stage_target(&project, root, rel)?;
            let dir = target.parent().unwrap_or(project.real()).to_owned();
            std::fs::create_dir_all(&dir).map_err(|e| io_error(&dir, e))?;
            let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let tmp = write_temp(&dir, &name, bytes).map_err(|e| io_error(&root.join(rel), e))?;
            journal.push_str(&format!("rename\t{}\t{rel}\n", temp_rel(rel, &tmp)));
            staged.renames.push((tmp, target));
        }
        for rel in remove {
            let target = stage_target(&project, root, rel)?;
            journal.push_str(&format!("remove\t{rel}\n"));
            staged.removes.push(target);
        }
        let journal_path = stage_target(&project, root, SAVE_JOURNAL)?;
        if std::fs::symlink_metadata(&journal_path).is_ok_and(|m| !m.file_type().is_file()) {
            return Err(fault(&journal_path, "is not a regular file: the save journal cannot be written"));
        }
        let entries = files.len() + remove.len();
        let sum = fnv1a(journal.as_bytes());
        journal.push_str(&format!("end\t{entries}\t{sum:016x}\n"));
        write_atomic(&journal_path, journal.as_bytes())
    })();
    match result {
        Ok(()) => Ok(staged),
        Err(e) => {
            staged.abandon();
            Err(e)
        }
    }
}

/// The real path a save writes `rel` to: inside the project, a regular file or nothing.
fn stage_target(project: &ProjectRoot, root: &Path, rel: &str) -> Result<PathBuf, ProjectError> {
    let shown = root.join(rel);
    let target = project.resolve(&project.real().join(rel)).map_err(|e| relabel(e, &shown))?;
    match std::fs::symlink_metadata(&target) {
        Ok(m) if !m.file_type().is_file() => Err(fault(
            &shown,
            "exists and is not a regular file (a folder or a link): the save would replace it",
        )),
        _ => Ok(target),
    }
}

/// `e` naming `shown` (the path as the caller gave it) instead of the relative path.
fn relabel(e: ProjectError, shown: &Path) -> ProjectError {
    match e {
        ProjectError::Fault { message, .. } => fault(shown, message),
        ProjectError::Io { message, .. } => io_error(shown, message),
        other => other,
    }
}

impl StagedSave {
    /// Finishes the save: every rename, then every removal, then the journal goes.
    pub fn commit(self) -> Result<(), ProjectError> {
        for (tmp, target) in &self.renames {
            std::fs::rename(tmp, target).map_err(|e| io_error(target, e))?;
        }
        for r in &self.removes {
            let _ = std::fs::remove_file(r);
        }
        sync_dir(&self.root).map_err(|e| io_error(&self.root, e))?;
        let journal = self.root.join(SAVE_JOURNAL);
        std::fs::remove_file(&journal).map_err(|e| io_error(&journal, e))?;
        sync_dir(&self.root).map_err(|e| io_error(&self.root, e))
    }

    /// Drops the staged temp files (a save that failed before its journal was written).
    fn abandon(&self) {
        for (tmp, _) in &self.renames {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// Writes `files` into `root` as one save: all of them or none (see [`stage_save`]).
pub fn save_files(root: &Path, files: &[(String, Vec<u8>)], remove: &[String]) -> Result<(), ProjectError> {
    stage_save(root, files, remove)?.commit()
}

/// What [`finish_interrupted_save`] did and what it refused.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SaveRecovery {
    /// What was done, one line each (a save finished, stale temps removed).
    pub done: Vec<String>,
    /// What was refused and left alone, and why (a journal not honoured, temp-like names that
    /// are not Marrow's), one line each.
    pub refused: Vec<String>,
}

impl SaveRecovery {
    /// Whether nothing was done or refused.
    pub fn is_empty(&self) -> bool {
        self.done.is_empty() && self.refused.is_empty()
    }
}

/// What a journal entry does once checked.
enum Step {
    Rename(PathBuf, PathBuf),
    Remove(PathBuf),
    /// Already done (the temp was renamed, the file removed).
    Done,
}

/// Parses a journal: its entries (the fields of each line) if it is whole.
fn parse_journal(text: &str) -> Result<Vec<Vec<&str>>, String> {
    let body_end = text.trim_end_matches('\n').rfind('\n').map_or(0, |i| i + 1);
    let (body, trailer) = text.split_at(body_end);
    let mut lines = body.lines();
    if lines.next() != Some(HEADER) {
        return Err(format!("its first line is not {HEADER:?} (an older build's or not a journal)"));
    }
    let entries: Vec<Vec<&str>> = lines.map(|l| l.split('\t').collect()).collect();
    let fields: Vec<&str> = trailer.trim_end_matches('\n').split('\t').collect();
    let whole = match fields.as_slice() {
        ["end", n, sum] => {
            n.parse::<usize>().ok() == Some(entries.len())
                && *sum == format!("{:016x}", fnv1a(body.as_bytes()))
        }
        _ => false,
    };
    if !whole {
        return Err("it is not whole (its trailer is missing or its count or checksum differs)".into());
    }
    Ok(entries)
}

/// Checks one entry against the rules in the module docs.
fn check_entry(project: &ProjectRoot, fields: &[&str]) -> Result<Step, String> {
    let resolve = |rel: &str| {
        if !plain(rel) {
            return Err(format!("{rel:?} is not a plain path inside the project"));
        }
        project.resolve(&project.real().join(rel)).map_err(|e| e.to_string())
    };
    let kind = |p: &Path| std::fs::symlink_metadata(p).ok().map(|m| m.file_type());
    match fields {
        ["rename", tmp, target] => {
            let (tmp_dir, tmp_name) = tmp.rsplit_once('/').unwrap_or(("", tmp));
            let (dir, name) = target.rsplit_once('/').unwrap_or(("", target));
            if tmp_dir != dir || parse_temp_name(tmp_name).map(|(t, _)| t) != Some(name) {
                return Err(format!("{tmp:?} is not a temp file of {target:?}"));
            }
            let (tmp_real, target_real) = (resolve(tmp)?, resolve(target)?);
            match (kind(&tmp_real), kind(&target_real)) {
                (None, _) => Ok(Step::Done),
                (Some(t), _) if !t.is_file() => Err(format!("{tmp:?} is not a regular file")),
                (_, Some(t)) if !t.is_file() => {
                    Err(format!("{target:?} is not a regular file (a folder or a link): it is not replaced"))
                }
                _ => Ok(Step::Rename(tmp_real, target_real)),
            }
        }
        ["remove", target] => {
            let name = target.rsplit('/').next().unwrap_or(target);
            if !target.ends_with(".ron") || name == PROJECT_FILE {
                return Err(format!("{target:?} is not an authored file a save removes"));
            }
            let real = resolve(target)?;
            match kind(&real) {
                None => Ok(Step::Done),
                Some(t) if t.is_file() => Ok(Step::Remove(real)),
                Some(_) => Err(format!("{target:?} is not a regular file")),
            }
        }
        other => Err(format!("unknown entry {:?}", other.join(" "))),
    }
}

/// Whether a journal path is plain and relative.
fn plain(rel: &str) -> bool {
    !rel.is_empty()
        && !rel.starts_with(['/', '\\'])
        && !rel.contains([':', '\\', '\0'])
        && !rel.split('/').any(|c| c.is_empty() || c == "." || c == "..")
}

/// Checks the whole journal at `journal`: every step, or why it is refused.
fn check_journal(project: &ProjectRoot, journal: &Path) -> Result<Vec<Step>, String> {
    let meta = std::fs::symlink_metadata(journal).map_err(|e| e.to_string())?;
    if !meta.file_type().is_file() {
        return Err("it is not a regular file".into());
    }
    let bytes = super::fs::read_regular(journal, journal).map_err(|e| e.to_string())?;
    let text = String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_owned())?;
    parse_journal(&text)?.iter().map(|f| check_entry(project, f)).collect()
}

/// Finishes a save that was interrupted after its journal was written, if the journal is
/// whole and every entry is one a save writes (see the module docs); otherwise refuses it,
/// acting on none of it, and moves it aside to [`REFUSED_JOURNAL`]. Then removes the temps of a
/// save killed before its journal (marker names whose writer is gone). Returns what was done
/// and what was refused; `Err` only when the folder itself cannot be read.
pub fn finish_interrupted_save(root: &Path) -> Result<SaveRecovery, ProjectError> {
    let project = ProjectRoot::open(root)?;
    let real = project.real().to_owned();
    let journal = real.join(SAVE_JOURNAL);
    let mut out = SaveRecovery::default();
    if std::fs::symlink_metadata(&journal).is_ok() {
        match check_journal(&project, &journal) {
            Ok(steps) => {
                let moved = run_steps(&steps).map_err(|e| io_error(&journal, e))?;
                sync_dir(&real).map_err(|e| io_error(&real, e))?;
                std::fs::remove_file(&journal).map_err(|e| io_error(&journal, e))?;
                sync_dir(&real).map_err(|e| io_error(&real, e))?;
                out.done.push(format!("an interrupted save was finished ({moved} file(s) put in place)"));
            }
            Err(why) => {
                let aside = real.join(REFUSED_JOURNAL);
                let moved = match std::fs::rename(&journal, &aside) {
                    Ok(()) => format!("moved aside to {}", aside.display()),
                    Err(e) => format!("could not be moved aside ({e})"),
                };
                out.refused.push(format!(
                    "{}: the save journal was not honoured, nothing of it was done ({why}); {moved}",
                    journal.display()
                ));
            }
        }
    }
    let mut stale = Temps::default();
    stale.scan(&real, 0, true);
    if stale.removed > 0 {
        out.done.push(format!("{} temp file(s) of an interrupted save were removed", stale.removed));
    }
    out.refused.extend(stale.notes());
    Ok(out)
}

/// Carries out checked steps: the renames, then the removals; returns how many files moved.
fn run_steps(steps: &[Step]) -> std::io::Result<usize> {
    let mut moved = 0;
    for s in steps {
        if let Step::Rename(tmp, target) = s {
            std::fs::rename(tmp, target)?;
            moved += 1;
        }
    }
    for s in steps {
        if let Step::Remove(p) = s {
            std::fs::remove_file(p)?;
        }
    }
    Ok(moved)
}

/// What a read-only look at `root` finds of an interrupted save (for `check`, which changes
/// nothing): a journal, a refused journal, temps; one note each.
pub fn inspect_interrupted_save(root: &Path) -> Vec<String> {
    let Ok(project) = ProjectRoot::open(root) else { return Vec::new() };
    let real = project.real();
    let mut notes = Vec::new();
    if std::fs::symlink_metadata(real.join(SAVE_JOURNAL)).is_ok() {
        notes.push(format!(
            "{}: an interrupted save journal is present; open the project in the editor to finish it",
            real.join(SAVE_JOURNAL).display()
        ));
    }
    if std::fs::symlink_metadata(real.join(REFUSED_JOURNAL)).is_ok() {
        notes.push(format!(
            "{}: a save journal that was not honoured is kept here (remove it once read)",
            real.join(REFUSED_JOURNAL).display()
        ));
    }
    let mut temps = Temps::default();
    temps.scan(real, 0, false);
    if temps.marrow > 0 {
        notes.push(format!("{} temp file(s) of an interrupted save are present", temps.marrow));
    }
    notes.extend(temps.notes());
    notes
}

/// Temp files found below a project folder.
#[derive(Default)]
struct Temps {
    removed: usize,
    marrow: usize,
    old_style: Vec<PathBuf>,
}

impl Temps {
    /// Walks `dir` a few folders deep (not through links or hidden folders), removing Marrow's
    /// temps whose writer is gone when `remove`, and noting old-style temp-like names.
    fn scan(&mut self, dir: &Path, depth: usize, remove: bool) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let path = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            match e.file_type() {
                Ok(t) if t.is_dir() && depth < 4 && !name.starts_with('.') => {
                    self.scan(&path, depth + 1, remove)
                }
                Ok(t) if t.is_file() => {
                    if let Some((_, pid)) = parse_temp_name(&name) {
                        if remove && !process_alive(pid) && std::fs::remove_file(&path).is_ok() {
                            self.removed += 1;
                        } else {
                            self.marrow += 1;
                        }
                    } else if is_old_temp_name(&name) {
                        self.old_style.push(path);
                    }
                }
                _ => {}
            }
        }
    }

    fn notes(&self) -> Vec<String> {
        self.old_style
            .iter()
            .map(|p| {
                format!(
                    "{}: looks like an older build's temp file; left in place (remove it if it is",
                    p.display()
                ) + " not yours)"
            })
            .collect()
    }
}

/// `.NAME.A.B.tmp` with numeric A and B: an older build's temp name (or a user's file like it).
fn is_old_temp_name(name: &str) -> bool {
    let Some(body) = name.strip_prefix('.').and_then(|b| b.strip_suffix(".tmp")) else { return false };
    let parts: Vec<&str> = body.rsplitn(3, '.').collect();
    parts.len() == 3
        && parts[0].parse::<u64>().is_ok()
        && parts[1].parse::<u32>().is_ok()
        && !parts[2].is_empty()
}
