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
    /// Quit (asks about unsaved changes first).
    Quit,
    /// Window > Reset Layout.
    ResetLayout,
}
