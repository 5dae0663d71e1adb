//! UI state: what the user looks at and has selected, never part of the project and never an
//! undo step. Selection names entities by path and bones by name (never runtime indices), so
//! it survives the world being rebuilt after an edit. The camera, view toggles and the dock
//! layout live here or in eframe's storage (see `crate::app`).
//!
//! Not here: authored data (`crate::document`) or the running world (`crate::session`).

use serde::{Deserialize, Serialize};

use crate::viewport::camera::OrbitCamera;
use crate::viewport::gizmo::GizmoMode;

/// What is selected.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum Selection {
    /// Nothing.
    #[default]
    None,
    /// An entity of the active scene, by path.
    Entity(String),
    /// A bone of a rig entity (by the rig's path and the bone's name).
    Bone {
        /// The rig entity's path.
        rig: String,
        /// The bone's name.
        bone: String,
    },
}

impl Selection {
    /// The selected entity's path, or the rig's for a bone.
    pub fn entity(&self) -> Option<&str> {
        match self {
            Selection::None => None,
            Selection::Entity(p) => Some(p),
            Selection::Bone { rig, .. } => Some(rig),
        }
    }
}

/// An asset selected in the Assets panel (a project path).
pub type AssetSelection = Option<String>;

/// The editor's UI state.
#[derive(Debug, Default)]
pub struct UiState {
    /// The selection (shared by the outliner, the viewport and the inspector).
    pub selection: Selection,
    /// The selected asset in the Assets panel.
    pub asset: AssetSelection,
    /// The viewport camera.
    pub camera: OrbitCamera,
    /// View > Show Skeletons.
    pub show_skeletons: bool,
    /// View > Grid.
    pub show_grid: bool,
    /// View > Root Trajectory: the path root motion takes each rig along (rigs without root
    /// motion draw none).
    pub show_trajectory: bool,
    /// The transform gizmo's mode.
    pub gizmo: GizmoMode,
    /// An entity being renamed in the outliner: (path, text typed so far).
    pub renaming: Option<(String, String)>,
    /// Auto Key: posing writes keys at the playhead (else it is a temporary pose).
    pub auto_key: bool,
    /// Onion skins.
    pub onion: Onion,
    /// The panel the keyboard's editing keys (Delete, copy, paste) go to.
    pub focus: Focus,
    /// Editing commands for the focused panel this frame (from the shortcuts, the clipboard
    /// events and the Edit menu, through [`crate::command_table`]); the panel takes them, the
    /// app drops what is left at the end of the frame.
    pub edit_actions: Vec<crate::command_table::UiCommand>,
    /// Copy Pose: local transforms by bone name.
    pub pose_clipboard: Vec<(String, marrow_engine::math::Transform)>,
    /// The rig the timeline works on (onion skins are drawn for it).
    pub timeline_rig: Option<String>,
    /// The graph the Graph tab edits (a project path).
    pub graph: Option<String>,
    /// The selected nodes of that graph, by stable id.
    pub graph_selection: Vec<marrow_engine::graph::NodeId>,
    /// A copied entity (with its subtree) and the path of its parent then (`None`: a root).
    pub entity_clipboard: Option<(Option<String>, marrow_engine::scene::EntityDesc)>,
    /// Copied graph nodes with the wires among them.
    pub graph_clipboard: GraphClipboard,
    /// Faults found when the project was opened in its graph files (by project-relative path):
    /// shown on their nodes until the project is opened again.
    pub graph_load_faults: Vec<(String, marrow_engine::graph::GraphFileError)>,
    /// What the viewport's gizmo moves in a graph while it previews on a rig (graph path, node,
    /// entry): an Adjust node's Offset entry (its index), a TwoBoneIk or LookAt node's target
    /// point ([`TARGET_ENTRY`]), or a TwoBoneIk's pole ([`POLE_ENTRY`]).
    pub adjust_gizmo: Option<(String, marrow_engine::graph::NodeId, usize)>,
}

/// The entry of [`UiState::adjust_gizmo`] that names a node's target point (a TwoBoneIk's or a
/// LookAt's), not an Adjust entry.
pub const TARGET_ENTRY: usize = usize::MAX;

/// The entry of [`UiState::adjust_gizmo`] that names a TwoBoneIk node's pole (the direction its
/// mid joint points to), shown as a point out from the chain's start.
pub const POLE_ENTRY: usize = usize::MAX - 1;

/// Copied graph nodes and the wires among them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct GraphClipboard {
    /// The nodes, as they were.
    pub nodes: Vec<marrow_engine::graph::Node>,
    /// Wires whose two ends are both copied.
    pub wires: Vec<marrow_engine::graph::Connection>,
}

/// Where the editing keys go.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Focus {
    /// The scene (outliner, viewport, inspector): Delete removes the selected entity.
    #[default]
    Scene,
    /// The timeline: Delete removes keys or markers, Ctrl+C/V/D copy, paste, duplicate keys.
    Timeline,
    /// The graph editor: Delete removes nodes, Ctrl+C/V/D copy, paste, duplicate nodes, F frames
    /// the graph.
    Graph,
}

/// Onion skin settings (View > Onion Skins).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Onion {
    /// Whether ghosts are drawn.
    pub on: bool,
    /// Ghosts before and after the playhead.
    pub count: u32,
    /// Frames between ghosts.
    pub step: u32,
}

impl Default for Onion {
    fn default() -> Self {
        Self { on: false, count: 2, step: 3 }
    }
}

impl UiState {
    /// The default view: grid and root trajectories on, skeletons off, translate gizmo.
    pub fn new() -> Self {
        Self { show_grid: true, show_trajectory: true, ..Self::default() }
    }
}
