//! Commands: what panels ask for while the UI runs. The app applies them in one place after the
//! UI (as the rerun viewer's command queue does): authored changes go to the document as edits,
//! transport and scrub go to the session, file, dock, Log and sound requests to the app. A panel
//! has no other way to reach beyond its own state and the UI state: no flags for the app to
//! poll, no outboxes to drain.
//!
//! Not here: how each command is carried out (`crate::app`).

use std::path::PathBuf;

use crate::dock::Tab;
use crate::document::Op;
use crate::log::Level;

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
    /// Preview a clip that is not in the project on a rig (a retarget before it is applied), or
    /// stop (`None`). Never saved, never an undo step.
    PreviewClip(Option<crate::session::ClipPreview>),
    /// A live parameter value of the graph preview (never saved, never an undo step).
    SetGraphParameter {
        /// Parameter name.
        name: String,
        /// Its value.
        value: marrow_engine::graph::ParamValue,
    },
    /// Rewind the previewed graph to the recorded frame at or before this tick (the rewind
    /// debugger; session state only).
    RewindTo(u64),
    /// End a rewind: continue from the rewound frame (`from_here`) or from when it started.
    Resume {
        /// From the rewound frame (the later recording is dropped), else from when it started.
        from_here: bool,
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
    /// File > Import Model.
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
    /// A new empty graph file (graphs/graph.graph.ron, graph2, ...), opened in the Graph tab.
    NewGraph,
    /// Bring a tab to the front (adding it to the layout if it lacks it).
    ShowTab(Tab),
    /// Open File > Import Model's file dialog.
    OpenImportDialog,
    /// Open the File > Retarget Clips window on the retarget map at this path.
    OpenRetarget(String),
    /// Frame the selection in the viewport on the next frame (F, View > Frame Selection).
    FrameSelection,
    /// Keep the current gesture open through the next frame although no pointer button is
    /// held (the timeline's S scale), so its edits stay one undo step.
    HoldGesture,
    /// Play a marker's sound (the timeline's audio toggle); silent without a sound player.
    PlaySound(String),
    /// A line for the Log.
    Log {
        /// How serious.
        level: Level,
        /// Which part of the editor says it (`viewport`, `timeline`...).
        source: &'static str,
        /// The line.
        text: String,
    },
}
