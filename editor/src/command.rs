//! Commands: what panels ask for while the UI runs. The app applies them in one place after the
//! UI (as the rerun viewer's command queue does): authored changes go to the document as edits,
//! transport and scrub go to the session, file commands to the app.
//!
//! Not here: how each command is carried out (`crate::app`).

use std::path::PathBuf;

use crate::document::Op;

/// One request from the UI.
#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    /// An authored change (one undo step, or merged into the drag it belongs to).
    Edit(Box<Op>),
    /// Undo the last step.
    Undo,
    /// Redo the next step.
    Redo,
    /// Jump in the history to `n` steps applied.
    GoTo(usize),
    /// Transport: play.
    Play,
    /// Transport: pause.
    Pause,
    /// Transport: stop (back to the authored start).
    Stop,
    /// Transport: one fixed tick.
    Step,
    /// Scrub the rig at this entity path to a time.
    Seek {
        /// The rig's path.
        rig: String,
        /// Seconds.
        time: f32,
    },
    /// The loop preview of a rig's head.
    SetLoop {
        /// The rig's path.
        rig: String,
        /// Loop or not.
        looping: bool,
    },
    /// A temporary pose of one bone (auto-key off): shown until the playhead moves, never
    /// saved (`None` clears it).
    PoseBone {
        /// The rig's path.
        rig: String,
        /// Bone index.
        bone: usize,
        /// Its local transform.
        transform: Option<marrow_engine::math::Transform>,
    },
    /// Drop a rig's temporary pose.
    ClearPose {
        /// The rig's path.
        rig: String,
    },
    /// The range a rig's preview playback stays inside (`None`: the whole clip).
    SetPreviewRange {
        /// The rig's path.
        rig: String,
        /// Start and end, seconds.
        range: Option<(f32, f32)>,
    },
    /// Preview a graph on a rig (`Some((rig path, graph path))`) or stop previewing (`None`).
    PreviewGraph(Option<(String, String)>),
    /// A live parameter value of the graph preview (never saved, never an undo step).
    SetGraphParameter {
        /// Parameter name.
        name: String,
        /// Its value.
        value: marrow_engine::graph::ParamValue,
    },
    /// Show another scene of the project.
    ShowScene(String),
    /// File > New Project.
    New,
    /// File > Open Project (asks about unsaved changes first).
    Open(PathBuf),
    /// File > Save.
    Save,
    /// File > Save As.
    SaveAs(PathBuf),
    /// File > Import glTF.
    Import(PathBuf),
    /// File > Export glTF: the scene at this path to a `.glb` or `.gltf` (not an edit).
    ExportGltf {
        /// The scene's path in the project.
        scene: String,
        /// The output file.
        path: PathBuf,
        /// What to export and how.
        options: Box<marrow_engine::gltf::ExportOptions>,
    },
    /// Quit (asks about unsaved changes first).
    Quit,
    /// Window > Reset Layout.
    ResetLayout,
}
