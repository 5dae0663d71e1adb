//! The Outliner: the active scene's entities as a tree (from the authored scene), with a rig's
//! bones listed beneath it (bones are not entities: they can be selected, not edited here).
//! Click selects, double-click or F2 renames inline, dragging a row onto another reparents it
//! (onto the empty space below the tree: to the root), and the context menu adds an empty
//! entity, a box or an imported model, renames and deletes.
//!
//! Not here: applying the edits (`crate::app`), the selection's cards (the Inspector panel).

use egui::{Color32, RichText, Sense};
use marrow_engine::math::Transform;
use marrow_engine::scene::{EntityDesc, MeshDesc};
use marrow_engine::skeleton::Skeleton;

use crate::command::Command;
use crate::cx::Cx;
use crate::document::{EntityOp, Op, tree};
use crate::ui_state::Selection;

/// The payload of a row being dragged: the entity's path.
#[derive(Clone, Debug)]
struct DraggedEntity(String);

/// The Outliner panel.
#[derive(Debug, Default)]
pub struct Outliner {
    /// Rigs whose bone list is open (by path).
    open_bones: std::collections::BTreeSet<String>,
}

/// A new entity of one of the kinds the context menu offers.
pub fn new_entity(kind: &str) -> EntityDesc {
    match kind {
        "Box" => EntityDesc {
            name: "Box".into(),
            transform: Some(Transform::IDENTITY),
            mesh: Some(MeshDesc::Box { half_extents: glam::Vec3::splat(0.25) }),
            ..Default::default()
        },
        _ => EntityDesc { name: "Empty".into(), transform: Some(Transform::IDENTITY), ..Default::default() },
    }
}

fn icon(e: &EntityDesc) -> (&'static str, Color32) {
    if e.animator.is_some() {
        ("🏃", Color32::from_rgb(240, 180, 80))
    } else if e.socket.is_some() {
        ("⚓", Color32::from_rgb(120, 200, 220))
    } else if e.mesh.is_some() {
        ("■", Color32::from_rgb(150, 170, 200))
    } else {
        ("○", Color32::GRAY)
    }
}

impl Outliner {
    /// Draws the panel.
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut Cx) {
        let Some((scene_path, scene)) = cx.scene() else {
            ui.weak("No scene. File > New Project or File > Open Project.");
            return;
        };
        let scenes = &cx.doc.project().manifest.scenes;
        if scenes.len() > 1 {
            let mut chosen = None;
            egui::ComboBox::from_label("Scene").selected_text(scene_path).show_ui(ui, |ui| {
                for s in scenes {
                    if ui.selectable_label(s == scene_path, s).clicked() {
                        chosen = Some(s.clone());
                    }
                }
            });
            if let Some(s) = chosen {
                cx.send(Command::ShowScene(s));
            }
        }
        let scene_path = scene_path.to_owned();
        // A press over this panel, not over a menu or window above it.
        if ui.input(|i| i.pointer.any_pressed()) && ui.rect_contains_pointer(ui.max_rect()) {
            cx.ui.focus = crate::ui_state::Focus::Scene;
        }
        egui::ScrollArea::vertical().auto_shrink([false, false]).show(ui, |ui| {
            for e in &scene.entities {
                self.row(ui, cx, &scene_path, e, None, 0);
            }
            // The space below the tree: drop here to move to the root; right-click to add.
            let rest = ui.allocate_response(ui.available_size().max(egui::vec2(10.0, 40.0)), Sense::click());
            if let Some(p) = rest.dnd_release_payload::<DraggedEntity>() {
                cx.edit(Op::Entity {
                    scene: scene_path.clone(),
                    entity: p.0.clone(),
                    op: EntityOp::Reparent { parent: None, index: None },
                });
            }
            if rest.clicked() {
                cx.ui.selection = Selection::None;
            }
            rest.context_menu(|ui| add_menu(ui, cx, &scene_path, None));
        });
    }

    fn row(
        &mut self,
        ui: &mut egui::Ui,
        cx: &mut Cx,
        scene: &str,
        e: &EntityDesc,
        parent: Option<&str>,
        depth: usize,
    ) {
        let path = tree::join(parent, &e.name);
        let indent = depth as f32 * 14.0;
        let renaming = cx.ui.renaming.as_ref().filter(|(p, _)| *p == path).map(|(_, b)| b.clone());
        if let Some(buffer) = renaming {
            rename_row(ui, cx, scene, e, parent, &path, indent, buffer);
        } else {
            let top = ui.cursor().top();
            entity_row(ui, cx, scene, e, &path, indent);
            let rows = egui::Rect::from_x_y_ranges(ui.max_rect().x_range(), top..=ui.cursor().top());
            crate::probe::mark(ui.ctx(), format!("outliner:{path}"), rows);
        }
        // A rig's bones, beneath it.
        if e.animator.is_some()
            && let Some(rig) = cx.session.entity(&path)
            && let Some(animator) = cx.session.world().animator(rig)
        {
            let sk = animator.skeleton().clone();
            let open = self.open_bones.contains(&path);
            ui.horizontal(|ui| {
                ui.add_space(indent + 18.0);
                let label = format!("{} Bones ({})", if open { "⏷" } else { "⏵" }, sk.bone_count());
                if ui.add(egui::Label::new(RichText::new(label).weak()).sense(Sense::click())).clicked() {
                    if open {
                        self.open_bones.remove(&path);
                    } else {
                        self.open_bones.insert(path.clone());
                    }
                }
            });
            // A selected bone opens the list.
            let bone_selected = matches!(&cx.ui.selection, Selection::Bone { rig, .. } if *rig == path);
            if open || bone_selected {
                self.open_bones.insert(path.clone());
                bone_rows(ui, cx, &path, &sk, indent + 28.0);
            }
        }
        for c in &e.children {
            self.row(ui, cx, scene, c, Some(&path), depth + 1);
        }
    }
}

/// A row being renamed: the name's text field (Enter or leaving it applies, Escape cancels).
#[allow(clippy::too_many_arguments)]
fn rename_row(
    ui: &mut egui::Ui,
    cx: &mut Cx,
    scene: &str,
    e: &EntityDesc,
    parent: Option<&str>,
    path: &str,
    indent: f32,
    mut buffer: String,
) {
    ui.horizontal(|ui| {
        ui.add_space(indent + 16.0);
        let mut out = egui::TextEdit::singleline(&mut buffer).desired_width(160.0).id_salt("rename").show(ui);
        let r = out.response.clone();
        r.widget_info(|| egui::WidgetInfo::labeled(egui::WidgetType::TextEdit, true, "New name"));
        if !r.has_focus() {
            // First frame: focus with the whole name selected, so typing replaces it.
            r.request_focus();
            out.state.cursor.set_char_range(Some(egui::text::CCursorRange::two(
                egui::text::CCursor::new(0),
                egui::text::CCursor::new(buffer.chars().count()),
            )));
            out.state.store(ui.ctx(), r.id);
        }
        let enter = ui.input(|i| i.key_pressed(egui::Key::Enter));
        let escape = ui.input(|i| i.key_pressed(egui::Key::Escape));
        if escape {
            cx.ui.renaming = None;
        } else if enter || r.lost_focus() {
            cx.ui.renaming = None;
            if buffer != e.name {
                cx.edit(Op::Entity {
                    scene: scene.to_owned(),
                    entity: path.to_owned(),
                    op: EntityOp::Rename(buffer.clone()),
                });
                if cx.ui.selection == Selection::Entity(path.to_owned()) {
                    cx.ui.selection = Selection::Entity(tree::join(parent, &buffer));
                }
            }
        } else {
            cx.ui.renaming = Some((path.to_owned(), buffer));
        }
    });
}

/// An entity's row: its icon and name; click selects, double-click renames, drag reparents.
fn entity_row(ui: &mut egui::Ui, cx: &mut Cx, scene: &str, e: &EntityDesc, path: &str, indent: f32) {
    let selected = cx.ui.selection == Selection::Entity(path.to_owned());
    let (glyph, color) = icon(e);
    let height = ui.spacing().interact_size.y;
    let (rect, response) =
        ui.allocate_exact_size(egui::vec2(ui.available_width(), height), Sense::click_and_drag());
    let dragging_over = response.dnd_hover_payload::<DraggedEntity>().is_some_and(|p| p.0 != *path);
    if ui.is_rect_visible(rect) {
        let visuals = ui.visuals();
        if selected {
            ui.painter().rect_filled(rect, 2.0, visuals.selection.bg_fill);
        } else if dragging_over {
            ui.painter().rect_stroke(rect, 2.0, visuals.selection.stroke, egui::StrokeKind::Inside);
        } else if response.hovered() {
            ui.painter().rect_filled(rect, 2.0, visuals.widgets.hovered.weak_bg_fill);
        }
        let x = rect.left() + indent + 4.0;
        ui.painter().text(
            egui::pos2(x, rect.center().y),
            egui::Align2::LEFT_CENTER,
            glyph,
            egui::FontId::proportional(12.0),
            color,
        );
        let text_color = if selected { visuals.selection.stroke.color } else { visuals.text_color() };
        ui.painter().text(
            egui::pos2(x + 16.0, rect.center().y),
            egui::Align2::LEFT_CENTER,
            &e.name,
            egui::FontId::proportional(13.0),
            text_color,
        );
    }
    let name = e.name.clone();
    response
        .widget_info(|| egui::WidgetInfo::selected(egui::WidgetType::SelectableLabel, true, selected, &name));
    if response.clicked() {
        cx.ui.selection = Selection::Entity(path.to_owned());
    }
    if response.double_clicked() {
        cx.ui.renaming = Some((path.to_owned(), e.name.clone()));
    }
    if response.drag_started() {
        response.dnd_set_drag_payload(DraggedEntity(path.to_owned()));
    }
    if let Some(p) = response.dnd_release_payload::<DraggedEntity>()
        && p.0 != *path
    {
        cx.edit(Op::Entity {
            scene: scene.to_owned(),
            entity: p.0.clone(),
            op: EntityOp::Reparent { parent: Some(path.to_owned()), index: None },
        });
    }
    response.context_menu(|ui| entity_menu(ui, cx, scene, e, path));
}

/// An entity row's context menu: rename, add a child, move to the root, delete.
fn entity_menu(ui: &mut egui::Ui, cx: &mut Cx, scene: &str, e: &EntityDesc, path: &str) {
    cx.ui.selection = Selection::Entity(path.to_owned());
    if ui.button("Rename (F2)").clicked() {
        cx.ui.renaming = Some((path.to_owned(), e.name.clone()));
        ui.close();
    }
    ui.menu_button("Add Child", |ui| add_menu(ui, cx, scene, Some(path)));
    if ui.button("Move to Root").clicked() {
        cx.edit(Op::Entity {
            scene: scene.to_owned(),
            entity: path.to_owned(),
            op: EntityOp::Reparent { parent: None, index: None },
        });
        ui.close();
    }
    ui.separator();
    if ui.button("Delete").clicked() {
        cx.edit(Op::Entity { scene: scene.to_owned(), entity: path.to_owned(), op: EntityOp::Delete });
        cx.ui.selection = Selection::None;
        ui.close();
    }
}

/// A rig's bones in tree order (each followed by its subtree), indented by depth.
fn bone_rows(ui: &mut egui::Ui, cx: &mut Cx, rig: &str, sk: &Skeleton, indent: f32) {
    for (b, depth) in marrow_engine::skeleton::tree_order(&sk.parents) {
        let name = &sk.bone_names[b];
        let selected =
            matches!(&cx.ui.selection, Selection::Bone { rig: r, bone } if r == rig && bone == name);
        ui.horizontal(|ui| {
            ui.add_space(indent + depth as f32 * 10.0);
            let text = RichText::new(format!("• {name}")).color(Color32::from_rgb(200, 200, 150)).size(12.0);
            if ui.selectable_label(selected, text).clicked() {
                cx.ui.selection = Selection::Bone { rig: rig.to_owned(), bone: name.clone() };
            }
        });
    }
}

/// The "add" entries of a context menu: an empty entity, a box, or an imported model, under
/// `parent` (the root when `None`).
fn add_menu(ui: &mut egui::Ui, cx: &mut Cx, scene: &str, parent: Option<&str>) {
    for kind in ["Empty", "Box"] {
        if ui.button(format!("Add {kind}")).clicked() {
            let e = new_entity(kind);
            let (_, desc) = cx.scene().expect("a scene is shown");
            let name = tree::unique_name(desc, parent, &e.name);
            cx.edit(Op::AddEntity { scene: scene.to_owned(), parent: parent.map(str::to_owned), entity: e });
            cx.ui.selection = Selection::Entity(tree::join(parent, &name));
            ui.close();
        }
    }
    if ui.button("Import Model…").clicked() {
        cx.send(Command::OpenImportDialog);
        ui.close();
    }
}
