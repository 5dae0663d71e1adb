//! Opening a project around its damaged files: a clip, graph, skeleton or scene file that the
//! manifest lists but that cannot be read as what it is (a syntax error, a version this build
//! does not read, a value that does not convert, an unreadable file) is set aside as a
//! [`DamagedFile`] with its original bytes, and every other file loads. An editor lists it, shows
//! its text and never writes over it.
//!
//! Not here: repairs (clip and graph files with faulty keys or wires load repaired, as in
//! [`Project::load_repairing`]), the manifest itself (a damaged `project.ron` still refuses the
//! project: nothing says which files there are), missing glTF assets (refused as before), saving.

use std::path::Path;

use super::{PROJECT_FILE, Project, ProjectError, load_lenient, project_root};

/// A file the manifest lists that could not be loaded; the project opened without it.
#[derive(Clone, Debug, PartialEq)]
pub struct DamagedFile {
    /// Its path, relative to the project folder (as the manifest lists it).
    pub path: String,
    /// Why it could not be loaded (a [`ProjectError::Syntax`] carries its line and column).
    pub error: ProjectError,
    /// Its bytes as they were read (`None` when it could not be read at all).
    pub bytes: Option<Vec<u8>>,
}

impl DamagedFile {
    /// Where the fault is: `(line, column)`, both 1-based, when the error says.
    pub fn location(&self) -> Option<(usize, usize)> {
        match &self.error {
            ProjectError::Syntax { line, column, .. } => Some((*line, *column)),
            _ => None,
        }
    }
}

/// The path of the file an error is about.
fn error_path(e: &ProjectError) -> &Path {
    match e {
        ProjectError::Io { path, .. }
        | ProjectError::Syntax { path, .. }
        | ProjectError::Version { path, .. }
        | ProjectError::Invalid { path, .. }
        | ProjectError::Entity { path, .. }
        | ProjectError::Fault { path, .. }
        | ProjectError::Graph { path, .. } => path,
    }
}

impl Project {
    /// Loads a project as [`Project::load_repairing`] does, except that a damaged clip, graph,
    /// skeleton or scene file does not refuse it: the file is left out of the project's clips,
    /// graphs, skeletons or scenes (its manifest entry stays) and comes back as a
    /// [`DamagedFile`] with its bytes. Returns the project, the repaired faults and the damaged
    /// files. A damaged or missing `project.ron` and any other fault still refuse the project.
    pub fn load_with_damaged(
        path: &Path,
    ) -> Result<(Project, Vec<ProjectError>, Vec<DamagedFile>), ProjectError> {
        let root = project_root(path);
        let (project, errors) = load_lenient(path);
        let (repaired, damaged) = sort_faults(&root, &project, errors)?;
        Ok((project, repaired, damaged))
    }
}

/// Sorts the faults of a lenient load into repaired ones and damaged files; any other fault
/// refuses the project.
pub(super) fn sort_faults(
    root: &Path,
    project: &Project,
    errors: Vec<ProjectError>,
) -> Result<(Vec<ProjectError>, Vec<DamagedFile>), ProjectError> {
    {
        let (root, project) = (root.to_owned(), project);
        let mut repaired = Vec::new();
        let mut damaged: Vec<DamagedFile> = Vec::new();
        for e in errors {
            let clip_repair = matches!(&e, ProjectError::Invalid { path, .. } if path.to_string_lossy().ends_with(".clip.ron"))
                && project_holds(project, &relative(&root, error_path(&e)));
            let is_repair = clip_repair || matches!(e, ProjectError::Graph { .. });
            if is_repair {
                repaired.push(e);
                continue;
            }
            let rel = relative(&root, error_path(&e));
            let listed =
                rel != PROJECT_FILE && manifest_lists(project, &rel) && !project_holds(project, &rel);
            if !listed {
                return Err(e);
            }
            if damaged.iter().all(|d| d.path != rel) {
                // Through the project's safe reader: inside the folder, a regular file, bounded.
                let bytes = super::fs::ProjectRoot::open(&root).and_then(|r| r.read(&root.join(&rel))).ok();
                damaged.push(DamagedFile { path: rel, error: e, bytes });
            }
        }
        Ok((repaired, damaged))
    }
}

/// `path` relative to `root`, with `/` separators.
fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root).unwrap_or(path).to_string_lossy().replace('\\', "/")
}

/// Whether the manifest lists `rel` as a clip, graph, scene, skeleton or retarget file.
fn manifest_lists(p: &Project, rel: &str) -> bool {
    let m = &p.manifest;
    [&m.clips, &m.graphs, &m.scenes].iter().any(|l| l.iter().any(|x| x == rel))
        || ((super::is_skeleton_file(rel) || super::retarget_file::is_retarget_file(rel))
            && m.assets.iter().any(|x| x == rel))
}

/// Whether the project loaded `rel` (as a clip, graph, scene, skeleton or retarget map).
fn project_holds(p: &Project, rel: &str) -> bool {
    p.clips.contains_key(rel)
        || p.graphs.contains_key(rel)
        || p.scenes.contains_key(rel)
        || p.skeletons.contains_key(rel)
        || p.retargets.contains_key(rel)
}
