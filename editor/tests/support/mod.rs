//! Helpers shared by the editor's tests: temporary copies of the sample projects, file
//! snapshots of a project folder, and a harness over the whole editor.
#![allow(dead_code)]

pub mod mocap;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use marrow_editor::{AppOptions, EditorApp};

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A fresh temporary folder (removed on drop).
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// A new empty folder named after `tag`.
    pub fn new(tag: &str) -> Self {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let p = std::env::temp_dir().join(format!(
            "marrow-editor-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Self(p)
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Copies a folder recursively.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), dst).unwrap();
        }
    }
}

/// A temporary copy of the sample project `name` (`projects/<name>`).
pub fn sample(name: &str) -> TempDir {
    let t = TempDir::new(name);
    copy_dir(&repo().join("projects").join(name), t.path());
    t
}

/// Every file under `dir` (relative path -> bytes), recovery files excluded.
pub fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, at: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for e in std::fs::read_dir(at).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            if p.is_dir() {
                walk(root, &p, out);
            } else {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
                if !rel.ends_with(".marrow-recovery.ron") {
                    out.insert(rel, std::fs::read(&p).unwrap());
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// The whole editor on `project`, logic only (no GPU): 1440 x 900, 60 frames a second.
pub fn editor(project: &Path) -> Harness<'static, EditorApp> {
    editor_sized(project, egui::vec2(1440.0, 900.0))
}

/// The whole editor on `project` in a window of `size` points.
pub fn editor_sized(project: &Path, size: egui::Vec2) -> Harness<'static, EditorApp> {
    let p = project.to_owned();
    Harness::builder()
        .with_size(size)
        .with_step_dt(1.0 / 60.0)
        .with_max_steps(60)
        .build_eframe(move |cc| EditorApp::new(cc, AppOptions { project: Some(p), ..Default::default() }))
}

/// Clicks the widget labelled `label` with role `role` and runs the UI.
pub fn click(h: &mut Harness<'_, EditorApp>, role: egui::accesskit::Role, label: &str) {
    h.get_by_role_and_label(role, label).click();
    settle(h);
}

/// Runs the UI until it settles, or a few frames while it keeps repainting (playback).
pub fn settle(h: &mut Harness<'_, EditorApp>) {
    if h.try_run().is_err() {
        h.run_steps(2);
    }
}

/// Clicks an outliner row (a selectable row) by entity name.
pub fn click_row(h: &mut Harness<'_, EditorApp>, name: &str) {
    click(h, egui::accesskit::Role::Button, name);
}

/// Drags with the primary button from `a` to `b` in `steps` moves (one gesture).
pub fn drag(h: &mut Harness<'_, EditorApp>, a: egui::Pos2, b: egui::Pos2, steps: usize) {
    h.hover_at(a);
    h.run();
    h.drag_at(a);
    h.run();
    for i in 1..=steps {
        let t = i as f32 / steps as f32;
        h.hover_at(a + (b - a) * t);
        h.step();
    }
    h.drop_at(b);
    settle(h);
}

/// A primary click whose move, press and release reach egui in one frame, as the real backend
/// delivers xdotool's click, a touchpad's tap, or any quick click while a frame is busy
/// (kittest's own queue runs a frame per event, so its clicks never share one).
pub fn tap(h: &mut Harness<'_, EditorApp>, p: egui::Pos2) {
    let button = |pressed| egui::Event::PointerButton {
        pos: p,
        button: egui::PointerButton::Primary,
        pressed,
        modifiers: egui::Modifiers::NONE,
    };
    h.input_mut().events.extend([egui::Event::PointerMoved(p), button(true), button(false)]);
    h.step();
    settle(h);
}

/// Presses a key with modifiers and runs the UI.
pub fn key(h: &mut Harness<'_, EditorApp>, modifiers: egui::Modifiers, k: egui::Key) {
    h.key_press_modifiers(modifiers, k);
    settle(h);
}

/// Plays the transport for `seconds` (Space, frames at 60 Hz, Space).
pub fn play_for(h: &mut Harness<'_, EditorApp>, seconds: f32) {
    h.key_press(egui::Key::Space);
    h.run_steps((seconds * 60.0) as usize);
    h.key_press(egui::Key::Space);
    settle(h);
}

/// Ctrl+C as the real backend delivers it: egui-winit turns it into `Event::Copy` and sends no
/// key event. Returns the text the app put on the system clipboard in that frame, if any.
pub fn copy(h: &mut Harness<'_, EditorApp>) -> Option<String> {
    clipboard_event(h, egui::Event::Copy)
}

/// Ctrl+X as the real backend delivers it (`Event::Cut`); returns the text put on the system
/// clipboard, if any.
pub fn cut(h: &mut Harness<'_, EditorApp>) -> Option<String> {
    clipboard_event(h, egui::Event::Cut)
}

fn clipboard_event(h: &mut Harness<'_, EditorApp>, e: egui::Event) -> Option<String> {
    h.event(e);
    h.step();
    let text = h.output().platform_output.commands.iter().find_map(|c| match c {
        egui::OutputCommand::CopyText(t) => Some(t.clone()),
        _ => None,
    });
    settle(h);
    text
}

/// Ctrl+V as the real backend delivers it: `Event::Paste` with the system clipboard's text
/// (egui-winit sends nothing when the clipboard is empty).
pub fn paste(h: &mut Harness<'_, EditorApp>, clipboard: &str) {
    h.event(egui::Event::Paste(clipboard.to_owned()));
    settle(h);
}

/// Undoes every step with Ctrl+Z, saves, and asserts the folder's files equal `original` byte
/// for byte; then redoes every step with Ctrl+Shift+Z and asserts the document's files equal
/// what they were before the undoing. Returns those edited files.
pub fn undo_all_redo_all(
    h: &mut Harness<'_, EditorApp>,
    dir: &Path,
    original: &BTreeMap<String, Vec<u8>>,
) -> Vec<(String, String)> {
    let edited = h.state().doc.files();
    let n = h.state().doc.head();
    for _ in 0..n {
        key(h, egui::Modifiers::COMMAND, egui::Key::Z);
    }
    key(h, egui::Modifiers::COMMAND, egui::Key::S);
    let now = files(dir);
    let mut differ: Vec<&String> =
        original.keys().chain(now.keys()).filter(|k| now.get(*k) != original.get(*k)).collect();
    differ.sort();
    differ.dedup();
    assert!(differ.is_empty(), "undo all = original bytes; these differ: {differ:?}");
    for _ in 0..n {
        key(h, egui::Modifiers::COMMAND | egui::Modifiers::SHIFT, egui::Key::Z);
    }
    assert_eq!(h.state().doc.files(), edited, "redo all = the edited state");
    edited
}

/// The viewport: its rectangle and the camera's projection, as the panel draws it.
pub fn viewport_view(h: &Harness<'_, EditorApp>) -> marrow_editor::viewport::gizmo::View {
    let rect = h.get_by_label("3D viewport").rect();
    marrow_editor::viewport::gizmo::View {
        clip_from_world: h.state().ui.camera.clip_from_world(rect.width() / rect.height()),
        rect,
    }
}

/// The gizmo the viewport shows for the app's selection (or Adjust gizmo target), in `mode`.
pub fn app_gizmo(
    h: &Harness<'_, EditorApp>,
    view: &marrow_editor::viewport::gizmo::View,
    mode: marrow_editor::viewport::gizmo::GizmoMode,
) -> Option<marrow_editor::viewport::gizmo::Gizmo> {
    let app = h.state();
    let mut commands = Vec::new();
    let mut ui = marrow_editor::ui_state::UiState::new();
    ui.selection = app.ui.selection.clone();
    ui.adjust_gizmo = app.ui.adjust_gizmo.clone();
    ui.gizmo = mode;
    ui.camera = app.ui.camera;
    let cx = marrow_editor::cx::Cx::new(
        &app.doc,
        &app.session,
        &mut ui,
        &app.log,
        &app.stats,
        None,
        &mut commands,
    );
    marrow_editor::panels::viewport::selection_gizmo(&cx, view)
}

/// Sets a slider or drag value through accessibility (as a screen reader would).
pub fn set_value(h: &mut Harness<'_, EditorApp>, role: egui::accesskit::Role, label: &str, v: f64) {
    use egui_kittest::kittest::NodeT;
    let node = h.get_by_role_and_label(role, label);
    let (target_node, target_tree) = node.accesskit_node().locate();
    h.event(egui::Event::AccessKitActionRequest(egui::accesskit::ActionRequest {
        target_node,
        target_tree,
        action: egui::accesskit::Action::SetValue,
        data: Some(egui::accesskit::ActionData::NumericValue(v)),
    }));
    settle(h);
}

/// Runs the editor until the Timeline's clip sizes (measured on a worker) have arrived.
pub fn wait_for_clip_sizes(h: &mut Harness<'_, EditorApp>) {
    for _ in 0..600 {
        if h.state().panels.timeline.sizes.last().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        h.run();
    }
    assert!(h.state().panels.timeline.sizes.last().is_some(), "the clip's sizes were measured");
}
