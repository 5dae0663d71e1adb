//! The one command table: every command a menu entry and a shortcut both give, with its menu
//! text and its shortcut, read by the menus (the text and the shortcut shown beside it) and by
//! the global key handler (which shortcut gives which command). The model is the rerun
//! viewer's `UICommand`.
//!
//! The clipboard commands also come as events: egui-winit turns Ctrl+C / Ctrl+X / Ctrl+V into
//! `egui::Event::Copy`, `Event::Cut` and `Event::Paste(text)` and sends no key event for them
//! (and no `Paste` at all while the system clipboard is empty), so [`UiCommand::read`] takes
//! those events as well as the key shortcuts (which other backends and tests may send).
//!
//! The editing commands (cut to frame) act on the focused panel's own selection: timeline keys,
//! graph nodes or, in the scene, the selected entity; the table only names them
//! ([`UiCommand::is_edit`]). Not here: carrying the commands out (`crate::app`, the panels).

use egui::{Key, KeyboardShortcut, Modifiers};

use crate::ui_state::Focus;

/// A command of the menus and the keyboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UiCommand {
    /// File > Open Project.
    Open,
    /// File > Import Model.
    Import,
    /// File > Import Folder (every model file of a folder).
    ImportFolder,
    /// File > Save.
    Save,
    /// File > Save As.
    SaveAs,
    /// File > Quit.
    Quit,
    /// Edit > Undo.
    Undo,
    /// Edit > Redo.
    Redo,
    /// Edit > Cut (copy, then delete the selection).
    Cut,
    /// Edit > Copy.
    Copy,
    /// Edit > Paste (keys at the playhead, nodes beside the copied ones, entities beside the
    /// copied one).
    Paste,
    /// Edit > Duplicate.
    Duplicate,
    /// Edit > Delete.
    Delete,
    /// Edit > Select All.
    SelectAll,
    /// Edit > Frame: fit the view to the selection (or to everything when nothing is selected).
    Frame,
    /// Play or pause the selected rig.
    PlayPause,
    /// File > New Project.
    NewProject,
    /// File > Export glTF (opens the export window).
    ExportGltf,
    /// File > Retarget Clips (opens the retarget window).
    Retarget,
    /// View > Show Skeletons (a toggle).
    ToggleSkeletons,
    /// View > Grid (a toggle).
    ToggleGrid,
    /// View > Root Trajectory (a toggle): the path root motion takes a rig along.
    ToggleTrajectory,
    /// Window > Reset Layout.
    ResetLayout,
    /// The gizmo moves (View > Move).
    GizmoMove,
    /// The gizmo rotates (View > Rotate).
    GizmoRotate,
    /// The gizmo scales (View > Scale).
    GizmoScale,
    /// Rename the selected entity in the Outliner.
    Rename,
    /// One frame back, on the frame grid, while paused.
    PreviousFrame,
    /// One frame on, on the frame grid, while paused.
    NextFrame,
    /// To the clip's start (the timeline's own Home when it has the keyboard).
    GoToStart,
    /// To the clip's end.
    GoToEnd,
}

const fn ks(modifiers: Modifiers, key: Key) -> KeyboardShortcut {
    KeyboardShortcut::new(modifiers, key)
}

const CMD_SHIFT: Modifiers = Modifiers::COMMAND.plus(Modifiers::SHIFT);

impl UiCommand {
    /// Every command, in the order the key handler tries them (a shortcut with more modifiers
    /// before the one it extends: Ctrl+Shift+Z before Ctrl+Z).
    pub const ALL: [UiCommand; 31] = [
        UiCommand::Open,
        UiCommand::Import,
        UiCommand::ImportFolder,
        UiCommand::SaveAs,
        UiCommand::Save,
        UiCommand::Quit,
        UiCommand::Redo,
        UiCommand::Undo,
        UiCommand::Cut,
        UiCommand::Copy,
        UiCommand::Paste,
        UiCommand::Duplicate,
        UiCommand::Delete,
        UiCommand::SelectAll,
        UiCommand::Frame,
        UiCommand::PlayPause,
        UiCommand::NewProject,
        UiCommand::ExportGltf,
        UiCommand::Retarget,
        UiCommand::ToggleSkeletons,
        UiCommand::ToggleGrid,
        UiCommand::ToggleTrajectory,
        UiCommand::ResetLayout,
        UiCommand::GizmoMove,
        UiCommand::GizmoRotate,
        UiCommand::GizmoScale,
        UiCommand::Rename,
        UiCommand::PreviousFrame,
        UiCommand::NextFrame,
        UiCommand::GoToStart,
        UiCommand::GoToEnd,
    ];

    /// The Edit menu, in order.
    pub const EDIT_MENU: [UiCommand; 9] = [
        UiCommand::Undo,
        UiCommand::Redo,
        UiCommand::Cut,
        UiCommand::Copy,
        UiCommand::Paste,
        UiCommand::Duplicate,
        UiCommand::Delete,
        UiCommand::SelectAll,
        UiCommand::Frame,
    ];

    /// The menu text.
    pub fn text(self) -> &'static str {
        match self {
            UiCommand::Open => "Open Project…",
            UiCommand::Import => "Import Model…",
            UiCommand::ImportFolder => "Import Folder…",
            UiCommand::Save => "Save",
            UiCommand::SaveAs => "Save As…",
            UiCommand::Quit => "Quit",
            UiCommand::Undo => "Undo",
            UiCommand::Redo => "Redo",
            UiCommand::Cut => "Cut",
            UiCommand::Copy => "Copy",
            UiCommand::Paste => "Paste",
            UiCommand::Duplicate => "Duplicate",
            UiCommand::Delete => "Delete",
            UiCommand::SelectAll => "Select All",
            UiCommand::Frame => "Frame Selection",
            UiCommand::PlayPause => "Play / Pause",
            UiCommand::NewProject => "New Project",
            UiCommand::ExportGltf => "Export glTF…",
            UiCommand::Retarget => "Retarget Clips…",
            UiCommand::ToggleSkeletons => "Show Skeletons",
            UiCommand::ToggleGrid => "Grid",
            UiCommand::ToggleTrajectory => "Root Trajectory",
            UiCommand::ResetLayout => "Reset Layout",
            UiCommand::GizmoMove => "Move",
            UiCommand::GizmoRotate => "Rotate",
            UiCommand::GizmoScale => "Scale",
            UiCommand::Rename => "Rename",
            UiCommand::PreviousFrame => "Previous Frame",
            UiCommand::NextFrame => "Next Frame",
            UiCommand::GoToStart => "Go to Start",
            UiCommand::GoToEnd => "Go to End",
        }
    }

    /// The shortcuts, the first shown in the menu.
    pub fn shortcuts(self) -> &'static [KeyboardShortcut] {
        const NEW: [KeyboardShortcut; 1] = [ks(Modifiers::COMMAND, Key::N)];
        const OPEN: [KeyboardShortcut; 1] = [ks(Modifiers::COMMAND, Key::O)];
        const IMPORT: [KeyboardShortcut; 1] = [ks(Modifiers::COMMAND, Key::I)];
        const SAVE: [KeyboardShortcut; 1] = [ks(Modifiers::COMMAND, Key::S)];
        const SAVE_AS: [KeyboardShortcut; 1] = [ks(CMD_SHIFT, Key::S)];
        const QUIT: [KeyboardShortcut; 1] = [ks(Modifiers::COMMAND, Key::Q)];
        const UNDO: [KeyboardShortcut; 1] = [ks(Modifiers::COMMAND, Key::Z)];
        const REDO: [KeyboardShortcut; 2] = [ks(CMD_SHIFT, Key::Z), ks(Modifiers::COMMAND, Key::Y)];
        const CUT: [KeyboardShortcut; 1] = [ks(Modifiers::COMMAND, Key::X)];
        const COPY: [KeyboardShortcut; 1] = [ks(Modifiers::COMMAND, Key::C)];
        const PASTE: [KeyboardShortcut; 1] = [ks(Modifiers::COMMAND, Key::V)];
        const DUPLICATE: [KeyboardShortcut; 1] = [ks(Modifiers::COMMAND, Key::D)];
        const DELETE: [KeyboardShortcut; 2] =
            [ks(Modifiers::NONE, Key::Delete), ks(Modifiers::NONE, Key::Backspace)];
        const SELECT_ALL: [KeyboardShortcut; 1] = [ks(Modifiers::COMMAND, Key::A)];
        const FRAME: [KeyboardShortcut; 1] = [ks(Modifiers::NONE, Key::F)];
        const PLAY: [KeyboardShortcut; 1] = [ks(Modifiers::NONE, Key::Space)];
        const MOVE: [KeyboardShortcut; 1] = [ks(Modifiers::NONE, Key::W)];
        const ROTATE: [KeyboardShortcut; 1] = [ks(Modifiers::NONE, Key::E)];
        const SCALE: [KeyboardShortcut; 1] = [ks(Modifiers::NONE, Key::R)];
        const RENAME: [KeyboardShortcut; 1] = [ks(Modifiers::NONE, Key::F2)];
        const PREVIOUS: [KeyboardShortcut; 1] = [ks(Modifiers::NONE, Key::ArrowLeft)];
        const NEXT: [KeyboardShortcut; 1] = [ks(Modifiers::NONE, Key::ArrowRight)];
        const START: [KeyboardShortcut; 1] = [ks(Modifiers::NONE, Key::Home)];
        const END: [KeyboardShortcut; 1] = [ks(Modifiers::NONE, Key::End)];
        match self {
            UiCommand::NewProject => &NEW,
            UiCommand::Open => &OPEN,
            UiCommand::Import => &IMPORT,
            UiCommand::Save => &SAVE,
            UiCommand::SaveAs => &SAVE_AS,
            UiCommand::Quit => &QUIT,
            UiCommand::Undo => &UNDO,
            UiCommand::Redo => &REDO,
            UiCommand::Cut => &CUT,
            UiCommand::Copy => &COPY,
            UiCommand::Paste => &PASTE,
            UiCommand::Duplicate => &DUPLICATE,
            UiCommand::Delete => &DELETE,
            UiCommand::SelectAll => &SELECT_ALL,
            UiCommand::Frame => &FRAME,
            UiCommand::PlayPause => &PLAY,
            UiCommand::ExportGltf
            | UiCommand::Retarget
            | UiCommand::ImportFolder
            | UiCommand::ToggleSkeletons
            | UiCommand::ToggleGrid
            | UiCommand::ToggleTrajectory
            | UiCommand::ResetLayout => &[],
            UiCommand::GizmoMove => &MOVE,
            UiCommand::GizmoRotate => &ROTATE,
            UiCommand::GizmoScale => &SCALE,
            UiCommand::Rename => &RENAME,
            UiCommand::PreviousFrame => &PREVIOUS,
            UiCommand::NextFrame => &NEXT,
            UiCommand::GoToStart => &START,
            UiCommand::GoToEnd => &END,
        }
    }

    /// The shortcut as the menu shows it ("Ctrl+Shift+Z").
    pub fn shortcut_text(self, ctx: &egui::Context) -> String {
        self.shortcuts().first().map_or_else(String::new, |s| ctx.format_shortcut(s))
    }

    /// Whether a focused text field takes this command's keys instead (it edits its own text).
    pub fn yields_to_text(self) -> bool {
        self.is_edit() || self.is_plain_key()
    }

    /// Whether the command's shortcut is a plain key (Space, W, F2, an arrow...), which a text
    /// field or a modal dialog keeps for itself.
    pub fn is_plain_key(self) -> bool {
        self.shortcuts().first().is_some_and(|s| s.modifiers.is_none())
    }

    /// Whether the focused panel handles this command's key itself (the timeline's Home goes
    /// to the start and shows it), so the table leaves the key to it.
    pub fn left_to_panel(self, focus: Focus) -> bool {
        self == UiCommand::GoToStart && focus == Focus::Timeline
    }

    /// Whether this is an editing command, which the focused panel carries out on its own
    /// selection (cut, copy, paste, duplicate, delete, select all, frame).
    pub fn is_edit(self) -> bool {
        matches!(
            self,
            UiCommand::Cut
                | UiCommand::Copy
                | UiCommand::Paste
                | UiCommand::Duplicate
                | UiCommand::Delete
                | UiCommand::SelectAll
                | UiCommand::Frame
        )
    }

    /// Consumes this frame's shortcuts and clipboard events from `input`, in table order; with
    /// `typing` (a text field has the keyboard) only the commands that do not
    /// [yield to text](Self::yields_to_text).
    pub fn read(input: &mut egui::InputState, typing: bool, focus: Focus) -> Vec<UiCommand> {
        let mut out = Vec::new();
        if !typing {
            // What egui-winit sends for Ctrl+X / Ctrl+C / Ctrl+V (no key events come with them).
            input.events.retain(|e| {
                let c = match e {
                    egui::Event::Cut => UiCommand::Cut,
                    egui::Event::Copy => UiCommand::Copy,
                    egui::Event::Paste(_) => UiCommand::Paste,
                    _ => return true,
                };
                if !out.contains(&c) {
                    out.push(c);
                }
                false
            });
        }
        for c in UiCommand::ALL {
            if (typing && c.yields_to_text()) || c.left_to_panel(focus) {
                continue;
            }
            if c.shortcuts().iter().any(|s| input.consume_shortcut(s)) && !out.contains(&c) {
                out.push(c);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_two_commands_share_a_shortcut() {
        let all: Vec<(UiCommand, KeyboardShortcut)> =
            UiCommand::ALL.iter().flat_map(|c| c.shortcuts().iter().map(move |s| (*c, *s))).collect();
        for (i, (a, sa)) in all.iter().enumerate() {
            for (b, sb) in &all[i + 1..] {
                assert!(sa != sb, "{a:?} and {b:?} share {sa:?}");
            }
        }
    }

    #[test]
    fn a_longer_shortcut_is_tried_before_the_one_it_extends() {
        // consume_shortcut matches Ctrl+Z on Ctrl+Shift+Z: Redo must be read first.
        let pos = |c: UiCommand| UiCommand::ALL.iter().position(|x| *x == c).unwrap();
        assert!(pos(UiCommand::Redo) < pos(UiCommand::Undo));
        assert!(pos(UiCommand::SaveAs) < pos(UiCommand::Save));
    }

    #[test]
    fn the_clipboard_events_of_egui_winit_give_the_clipboard_commands() {
        let ctx = egui::Context::default();
        let raw = egui::RawInput {
            events: vec![egui::Event::Copy, egui::Event::Paste("x".into()), egui::Event::Cut],
            ..Default::default()
        };
        let mut got = Vec::new();
        ctx.run_ui(raw, |ui| got = ui.ctx().input_mut(|i| UiCommand::read(i, false, Focus::Scene)))
            .textures_delta
            .clear();
        assert_eq!(got, [UiCommand::Copy, UiCommand::Paste, UiCommand::Cut]);
        let raw = egui::RawInput { events: vec![egui::Event::Copy], ..Default::default() };
        ctx.run_ui(raw, |ui| got = ui.ctx().input_mut(|i| UiCommand::read(i, true, Focus::Scene)))
            .textures_delta
            .clear();
        assert!(got.is_empty(), "a text field keeps its clipboard");
    }
}
