//! The graph editor: preview sessions, the Graph tab's workflows through the UI (egui_kittest),
//! hostile graph files opening with their faults on their nodes.

mod support;

use marrow_editor::document::Document;
use marrow_editor::session::Session;
use marrow_engine::graph::ParamValue;
use support::*;

#[test]
fn a_previewed_graph_plays_and_loops_on_its_rig() {
    let doc = Document::open(&repo().join("projects/locomotion")).unwrap();
    let mut s = Session::new();
    s.sync(&doc);
    s.set_preview(Some(("Runner".into(), "graphs/locomotion.graph.ron".into())));
    assert_eq!(s.preview().unwrap().error, None);
    s.play();
    let rig = s.entity("Runner").unwrap();
    let space = marrow_engine::graph::NodeId(1);
    let mut phases = Vec::new();
    for _ in 0..30 {
        s.update(0.1);
        let g = s.world().animator(rig).unwrap().current_graph().unwrap();
        phases.push(g.space_phase(space).unwrap());
    }
    // speed 1 sits on the stride (1 s): the phase wraps every second.
    assert!(phases.iter().any(|p| *p < 0.3) && phases.iter().any(|p| *p > 0.7), "{phases:?}");
    s.set_preview_parameter("speed", ParamValue::Float(2.0));
    assert_eq!(s.preview().unwrap().params.get("speed"), Some(&ParamValue::Float(2.0)));
    assert!(!doc.is_dirty());
}

use egui::accesskit::Role;
use egui::{Key, Modifiers, Pos2, Rect};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use marrow_editor::EditorApp;
use marrow_engine::graph::{GraphInstance, NodeId, NodeKind};
use marrow_engine::math::Transform;

const G: &str = "graphs/graph.graph.ron";

fn right_click(h: &mut Harness<'_, EditorApp>, pos: Pos2) {
    h.hover_at(pos);
    h.run();
    for pressed in [true, false] {
        h.event(egui::Event::PointerButton {
            pos,
            button: egui::PointerButton::Secondary,
            pressed,
            modifiers: Modifiers::NONE,
        });
    }
    settle(h);
}

fn graph(h: &Harness<'_, EditorApp>) -> marrow_engine::graph::AnimGraph {
    (*h.state().doc.project().graphs[G]).clone()
}

fn report(h: &Harness<'_, EditorApp>) -> marrow_editor::panels::graph::GraphReport {
    h.state().panels.graph.report.clone()
}

/// An empty spot of the canvas (room for a node of 300 x 170 points).
fn empty_spot(h: &Harness<'_, EditorApp>) -> Pos2 {
    let r = report(h);
    let canvas = r.canvas.expect("the canvas was drawn");
    let mut y = canvas.top() + 20.0;
    while y < canvas.bottom() - 170.0 {
        let mut x = canvas.left() + 20.0;
        while x < canvas.right() - 300.0 {
            let spot = Rect::from_min_size(Pos2::new(x, y), egui::vec2(300.0, 170.0));
            if r.node_rects.values().all(|n| !n.expand(8.0).intersects(spot)) {
                return Pos2::new(x + 4.0, y + 4.0);
            }
            x += 30.0;
        }
        y += 30.0;
    }
    panic!("no room left on the canvas: {r:?}");
}

/// Adds a node from the canvas menu of the new graph; returns its id.
fn add_node(h: &mut Harness<'_, EditorApp>, entry: &str) -> NodeId {
    add_node_to(h, G, entry)
}

/// Selects a node by clicking its frame.
fn select(h: &mut Harness<'_, EditorApp>, node: NodeId) {
    let r = report(h).node_rects[&node];
    let at = Pos2::new(r.right() - 6.0, r.top() + 6.0);
    h.hover_at(at);
    h.run();
    h.drag_at(at);
    h.run();
    h.drop_at(at);
    settle(h);
    assert_eq!(
        h.state().ui.graph_selection,
        vec![node],
        "clicked {node} at {at:?}: {:?}",
        report(h).node_rects
    );
}

/// Picks what feeds `pin` of the selected node in the details panel.
fn feed(h: &mut Harness<'_, EditorApp>, node_title: &str, pin: &str, from: &str) {
    h.get_by_role_and_label(Role::ComboBox, &format!("{node_title} {pin} input")).click();
    settle(h);
    h.get_by_role_and_label(Role::Button, from).click();
    settle(h);
}

#[test]
fn graph_workflow_build_wire_preview_undo_all_redo_all() {
    let dir = sample("locomotion");
    let original = files(dir.path());
    // A large window: the canvas has room for six nodes at full size.
    let mut h = editor_sized(dir.path(), egui::vec2(2560.0, 1600.0));
    click(&mut h, Role::Button, "Graph");
    h.get_all_by_role_and_label(Role::Button, "New Graph").next().unwrap().click();
    settle(&mut h);
    assert_eq!(h.state().ui.graph.as_deref(), Some(G));
    assert!(graph(&h).nodes.is_empty());
    assert!(h.state().panels.graph.general_faults().iter().any(|f| f.contains("no Output")));

    // A parameter.
    h.get_by_label("New parameter name").focus();
    h.run();
    h.get_by_label("New parameter name").type_text("speed");
    settle(&mut h);
    click(&mut h, Role::Button, "Add Parameter");
    assert_eq!(graph(&h).parameters.len(), 1);

    // The nodes, from the canvas menu.
    let clip_a = add_node(&mut h, "Clip");
    let clip_b = add_node(&mut h, "Clip");
    let space = add_node(&mut h, "BlendSpace1D");
    let mask = add_node(&mut h, "Mask");
    let out = add_node(&mut h, "Output");
    let speed = add_node(&mut h, "Parameter: speed");
    assert_eq!(
        graph(&h).nodes.iter().map(|n| n.kind.name()).collect::<Vec<_>>(),
        ["Clip", "Clip", "BlendSpace1D", "Mask", "Output", "Parameter"]
    );

    // An unconnected Output shows its error on the node.
    let unconnected = "pose input \"pose\" is not connected";
    assert!(
        h.state().panels.graph.faults(out).iter().any(|f| f.contains(unconnected)),
        "{:?}",
        h.state().panels.graph.faults(out)
    );
    assert!(h.query_by_label_contains(unconnected).is_some(), "the fault is drawn on the node");

    // Three clips on the blend space's axis, driven by the parameter.
    select(&mut h, space);
    for _ in 0..3 {
        click(&mut h, Role::Button, "Add Sample");
    }
    let NodeKind::BlendSpace1D { samples, .. } = graph(&h).node(space).unwrap().kind.clone() else {
        panic!()
    };
    let on_axis: Vec<(String, f32)> = samples.iter().map(|s| (s.clip.clone(), s.position)).collect();
    assert_eq!(
        on_axis,
        [
            ("clips/fall.clip.ron".to_owned(), 0.0),
            ("clips/idle.clip.ron".to_owned(), 1.0),
            ("clips/jump.clip.ron".to_owned(), 2.0)
        ]
    );
    feed(&mut h, &format!("BlendSpace1D {space}"), "position", &format!("Parameter {speed}"));
    assert_eq!(graph(&h).input(space, "position"), Some(speed));

    // A wire dragged from Clip A's output onto the Mask's base, then Clip B put in its place
    // (the undo step names the wire it replaced).
    let r = report(&h);
    drag(&mut h, r.out_pins[&clip_a], r.in_pins[&(mask, "base".to_owned())], 8);
    assert_eq!(graph(&h).input(mask, "base"), Some(clip_a), "dragged wire");
    select(&mut h, mask);
    feed(&mut h, &format!("Mask {mask}"), "base", &format!("Clip {clip_b}"));
    assert_eq!(graph(&h).input(mask, "base"), Some(clip_b));
    let label = h.state().doc.undo_label().unwrap();
    assert!(label.contains(&format!("(replaces Clip {clip_a})")), "{label}");
    feed(&mut h, &format!("Mask {mask}"), "layer", &format!("BlendSpace1D {space}"));
    // The mask takes the left leg.
    h.get_by_role_and_label(Role::CheckBox, "thigh_l").click();
    settle(&mut h);
    let NodeKind::Mask { subtrees, .. } = graph(&h).node(mask).unwrap().kind.clone() else { panic!() };
    assert_eq!(subtrees.iter().map(|s| s.bone.as_str()).collect::<Vec<_>>(), ["thigh_l"]);
    select(&mut h, out);
    feed(&mut h, &format!("Output {out}"), "pose", &format!("Mask {mask}"));
    assert!(h.state().panels.graph.faults(out).is_empty(), "{:?}", h.state().panels.graph.faults(out));
    assert!(
        h.state().panels.graph.general_faults().is_empty(),
        "{:?}",
        h.state().panels.graph.general_faults()
    );
    let steps = h.state().doc.steps().count();
    let edited = h.state().doc.files();

    // Preview on the runner; the live slider drives the graph, the document does not change.
    click(&mut h, Role::Button, "▶ Preview");
    assert_eq!(h.state().session.preview().unwrap().error, None);
    let revision = h.state().doc.revision();
    set_value(&mut h, Role::Slider, "speed live", 1.4);
    assert_eq!(h.state().doc.revision(), revision, "a live value is not an edit");
    assert_eq!(h.state().doc.files(), edited);
    h.state_mut().send(marrow_editor::command::Command::Seek { rig: "Runner".into(), time: 0.8 });
    settle(&mut h);
    h.run_steps(2);
    assert!(report(&h).weight_labels >= 4, "weights on the wires: {}", report(&h).weight_labels);
    let rig = h.state().session.entity("Runner").unwrap();
    let previewed: Vec<Transform> = h.state().session.world().rig_pose(rig).unwrap().local.to_vec();
    let inst = h.state().session.world().animator(rig).unwrap().current_graph().unwrap();
    assert_eq!(inst.node_weight(clip_a), None, "Clip A feeds nothing");
    assert!(inst.node_weight(clip_b).is_some_and(|(w, _)| w > 0.99));

    // Save; the saved graph, compiled and run by the engine at the same time and parameter,
    // gives the previewed pose.
    key(&mut h, Modifiers::COMMAND, Key::S);
    let saved = marrow_engine::project::Project::load(dir.path()).unwrap();
    let lib = marrow_engine::project::Library::load(&saved, dir.path()).unwrap();
    let sk = marrow_engine::scene::AssetSource::skeleton(&lib, "assets/runner.skeleton.ron").unwrap();
    let program = std::sync::Arc::new(lib.compile_graph(G, &sk).unwrap());
    let mut engine = GraphInstance::new(program);
    assert!(engine.set_float("speed", 1.4));
    engine.advance(0.8);
    let mut expected = vec![Transform::IDENTITY; sk.bone_count()];
    engine.evaluate(&sk, &mut expected).unwrap();
    assert_eq!(previewed, expected, "previewed pose = the engine's evaluation of the saved graph");

    // Undo all: the files equal the originals byte for byte; redo all: the edited state.
    click(&mut h, Role::Button, "■ Stop Preview");
    assert_eq!(h.state().doc.head(), steps);
    assert_eq!(undo_all_redo_all(&mut h, dir.path(), &original), edited);
}

#[test]
fn a_hostile_graph_file_opens_with_every_fault_on_its_node_and_stays_editable() {
    let dir = sample("locomotion");
    let text = r#"(
    version: 1,
    parameters: [(name: "speed", default: Float(1.0))],
    nodes: [
        (id: 0, kind: "Clip", at: (0.0, 0.0), clip: "clips/stride.clip.ron"),
        (id: 1, kind: "TimeScale", at: (350.0, 0.0), scale: 1.0),
        (id: 2, kind: "Adjust", at: (700.0, 0.0), entries: []),
        (id: 3, kind: "Output", at: (1050.0, 0.0)),
        (id: 4, kind: "Teleport", at: (350.0, 250.0), weight: 0.5),
        (id: 5, kind: "Parameter", at: (0.0, 250.0), name: "speed"),
        (id: 6, kind: "Mask", at: (700.0, 250.0), weight: 1.0, subtrees: []),
    ],
    connections: [
        (from: 1, to: 2, pin: "pose"),
        (from: 2, to: 1, pin: "pose"),
        (from: 2, to: 3, pin: "pose"),
        (from: 99, to: 1, pin: "scale"),
        (from: 5, to: 6, pin: "base"),
        (from: 4, to: 6, pin: "layer"),
    ],
)"#;
    std::fs::write(dir.path().join("graphs/locomotion.graph.ron"), text).unwrap();
    let mut h = editor(dir.path());
    assert!(
        matches!(h.state().modal, Some(marrow_editor::app::Modal::Error { .. })),
        "a dialog says what was repaired"
    );
    h.get_by_label("OK").click();
    settle(&mut h);
    click(&mut h, Role::Button, "Graph");
    h.run_steps(3);
    // The graph opens at zoom 1 and is wider than the canvas: show all of it.
    click(&mut h, Role::Button, "Frame All");
    h.run_steps(12);
    let panel = &h.state().panels.graph;
    let on = |n: u32| panel.faults(NodeId(n)).join(" | ");
    assert!(on(1).contains("lies on a cycle"), "cycle: {}", on(1));
    assert!(on(1).contains("on open") && on(1).contains("missing node #99"), "dangling wire: {}", on(1));
    assert!(on(6).contains("base") && on(6).contains("float"), "pin type mismatch: {}", on(6));
    assert!(on(4).contains("unknown node kind \"Teleport\""), "unknown kind: {}", on(4));
    for n in [1, 4, 6] {
        assert!(report(&h).node_rects.contains_key(&NodeId(n)), "node #{n} is drawn");
    }
    // Still editable: delete the unknown node with the keyboard, break the cycle, rewire.
    let graph_of =
        |h: &Harness<'_, EditorApp>| h.state().doc.project().graphs["graphs/locomotion.graph.ron"].clone();
    select(&mut h, NodeId(4));
    key(&mut h, Modifiers::NONE, Key::Delete);
    assert!(graph_of(&h).node(NodeId(4)).is_none(), "the unknown node is gone");
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Delete Teleport? #4 and 1 Wire"));
    select(&mut h, NodeId(1));
    feed(&mut h, "TimeScale #1", "pose", "Clip #0");
    assert_eq!(graph_of(&h).input(NodeId(1), "pose"), Some(NodeId(0)));
    h.run_steps(2);
    assert!(!h.state().panels.graph.faults(NodeId(1)).join(" ").contains("cycle"));
    // Saving writes a file that loads without the faults that were fixed.
    key(&mut h, Modifiers::COMMAND, Key::S);
    let (_, faults) = marrow_engine::graph::load_graph(
        &std::fs::read_to_string(dir.path().join("graphs/locomotion.graph.ron")).unwrap(),
    )
    .unwrap();
    assert!(
        faults.iter().all(|f| !f.to_string().contains("Teleport") && !f.to_string().contains("cycle")),
        "{faults:?}"
    );
}

fn shift_click(h: &mut Harness<'_, EditorApp>, node: NodeId) {
    let r = report(h).node_rects[&node];
    let at = Pos2::new(r.right() - 6.0, r.top() + 6.0);
    h.hover_at(at);
    h.run();
    h.event(egui::Event::ModifiersChanged(Modifiers::SHIFT));
    for pressed in [true, false] {
        h.event(egui::Event::PointerButton {
            pos: at,
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: Modifiers::SHIFT,
        });
        h.step();
    }
    h.event(egui::Event::ModifiersChanged(Modifiers::NONE));
    settle(h);
}

#[test]
fn graph_groups_copy_paste_duplicate_delete_align_move_and_wire_drops_undo_to_the_original_bytes() {
    const L: &str = "graphs/locomotion.graph.ron";
    let dir = sample("locomotion");
    let original = files(dir.path());
    let mut h = editor_sized(dir.path(), egui::vec2(2560.0, 1600.0));
    click(&mut h, Role::Button, "Graph");
    h.run_steps(4);
    let g = |h: &Harness<'_, EditorApp>| h.state().doc.project().graphs[L].clone();
    let (space, adjust) = (NodeId(1), NodeId(2));
    select(&mut h, space);
    shift_click(&mut h, adjust);
    assert_eq!(h.state().ui.graph_selection, vec![space, adjust]);

    // Copy and paste: fresh ids, the wire between them follows, the pasted pair is selected.
    let text = copy(&mut h).expect("a copy puts the nodes on the system clipboard too");
    paste(&mut h, &text);
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Paste 2 Nodes"));
    let (a, b) = (NodeId(4), NodeId(5));
    assert_eq!(g(&h).node(a).unwrap().kind, g(&h).node(space).unwrap().kind);
    assert_eq!(g(&h).input(b, "pose"), Some(a), "the internal wire is pasted");
    assert_eq!(g(&h).input(a, "position"), None, "wires from outside the copy are not");
    assert_eq!(h.state().ui.graph_selection, vec![a, b]);
    // Duplicate, then delete the duplicates with their wire.
    key(&mut h, Modifiers::COMMAND, Key::D);
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Duplicate 2 Nodes"));
    assert_eq!(g(&h).nodes.len(), 8);
    key(&mut h, Modifiers::NONE, Key::Delete);
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Delete 2 Nodes and 1 Wire"));
    assert_eq!(g(&h).nodes.len(), 6);

    // Stack the pasted pair in a column: one x, one under the other with no overlap.
    h.run_steps(2);
    select(&mut h, a);
    shift_click(&mut h, b);
    assert_eq!(h.state().ui.graph_selection, vec![a, b]);
    click(&mut h, Role::Button, "Align");
    click(&mut h, Role::Button, "Distribute Vertically");
    assert!(h.state().doc.undo_label().unwrap().starts_with("Move "), "{:?}", h.state().doc.undo_label());
    h.run_steps(2);
    assert_eq!(g(&h).node(a).unwrap().position[0], g(&h).node(b).unwrap().position[0]);
    let (ra, rb) = (report(&h).node_rects[&a], report(&h).node_rects[&b]);
    assert!(!ra.intersects(rb), "stacked without overlap: {ra:?} {rb:?}");

    // Drag the pair by one of them: both move, one undo step.
    h.run_steps(2);
    let before = (g(&h).node(a).unwrap().position, g(&h).node(b).unwrap().position);
    let r = report(&h).node_rects[&a];
    let from = Pos2::new(r.right() - 6.0, r.top() + 6.0);
    let steps_before = h.state().doc.steps().count();
    drag(&mut h, from, from + egui::vec2(40.0, 30.0), 6);
    let after = (g(&h).node(a).unwrap().position, g(&h).node(b).unwrap().position);
    assert!(after.0[0] > before.0[0] && after.1[0] > before.1[0], "{before:?} -> {after:?}");
    assert_eq!(after.0[0] - before.0[0], after.1[0] - before.1[0], "moved together");
    assert_eq!(h.state().doc.steps().count(), steps_before + 1, "a drag is one step");
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Move 2 Nodes"));

    // Drop a wire from the pasted Adjust's output on empty canvas: add a TimeScale fed by it.
    h.run_steps(2);
    let out_pin = report(&h).out_pins[&b];
    let spot = empty_spot(&h);

    // (Released with the pointer still there, as a mouse does: kittest's drop_at also removes
    // the pointer, and a wire dropped on nothing opens its menu under the pointer.)
    h.hover_at(out_pin);
    h.run();
    h.drag_at(out_pin);
    h.run();
    for i in 1..=8 {
        h.hover_at(out_pin + (spot - out_pin) * (i as f32 / 8.0));
        h.step();
    }
    h.event(egui::Event::PointerButton {
        pos: spot,
        button: egui::PointerButton::Primary,
        pressed: false,
        modifiers: Modifiers::NONE,
    });
    settle(&mut h);
    assert!(h.query_by_label("Add and Connect").is_some(), "the dropped wire's menu opens");
    click(&mut h, Role::Button, "TimeScale");
    let ts = g(&h).nodes.last().unwrap().clone();
    assert!(matches!(ts.kind, NodeKind::TimeScale { .. }), "{:?}", ts.kind);
    assert_eq!(g(&h).input(ts.id, "pose"), Some(b));
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Add TimeScale"));

    // Frame All shows every node.
    key(&mut h, Modifiers::NONE, Key::F);
    h.run_steps(4);
    let rep = report(&h);
    let canvas = rep.canvas.unwrap();
    for (n, r) in &rep.node_rects {
        assert!(canvas.expand(1.0).contains_rect(*r), "{n} {r:?} outside {canvas:?}");
    }

    // Undo all: the original bytes; redo all: the edited graph.
    undo_all_redo_all(&mut h, dir.path(), &original);
}

#[test]
fn the_viewport_gizmo_moves_an_adjust_offset_in_one_undo_step() {
    use marrow_editor::viewport::gizmo::Handle;
    use marrow_engine::graph::{AdjustEntry, AdjustOp, Drive};
    const L: &str = "graphs/locomotion.graph.ron";
    let dir = sample("locomotion");
    let mut h = editor(dir.path());
    // The Adjust becomes an offset of the hips by (0, 0.1, 0).
    let entries = vec![AdjustEntry {
        bone: "hips".into(),
        op: AdjustOp::Offset { direction: glam::Vec3::new(0.0, 0.1, 0.0) },
        amount: Drive::Constant(1.0),
    }];
    h.state_mut().send(marrow_editor::command::Command::Edit(Box::new(marrow_editor::document::Op::Graph {
        path: L.into(),
        op: marrow_editor::document::graph_ops::GraphOp::SetNode {
            node: NodeId(2),
            kind: NodeKind::Adjust { entries },
            field: "adjusts".into(),
        },
    })));
    settle(&mut h);
    click(&mut h, Role::Button, "Graph");
    click(&mut h, Role::Button, "▶ Preview");
    h.run_steps(3);
    select(&mut h, NodeId(2));
    h.get_by_label("Gizmo").click();
    settle(&mut h);
    assert_eq!(h.state().ui.adjust_gizmo, Some((L.to_owned(), NodeId(2), 0)));
    let view = viewport_view(&h);
    let g =
        app_gizmo(&h, &view, marrow_editor::viewport::gizmo::GizmoMode::Translate).expect("the adjust gizmo");
    let rig = h.state().session.entity("Runner").unwrap();
    let hips = h.state().session.world().rig_pose(rig).unwrap().model[0].w_axis.truncate();
    assert!((g.world.w_axis.truncate() - hips).length() < 1e-5, "the gizmo sits on the adjusted hips");
    let steps = h.state().doc.steps().count();
    let a = g.handle_point(&view, Handle::Move(0), 0.9).unwrap();
    let b = g.handle_point(&view, Handle::Move(0), 1.6).unwrap();
    drag(&mut h, a, b, 6);
    let NodeKind::Adjust { entries } =
        h.state().doc.project().graphs[L].node(NodeId(2)).unwrap().kind.clone()
    else {
        panic!()
    };
    let AdjustOp::Offset { direction } = entries[0].op else { panic!() };
    assert!(direction.x > 0.05, "moved along X: {direction}");
    assert!((direction.y - 0.1).abs() < 1e-4 && direction.z.abs() < 1e-4, "only X: {direction}");
    assert_eq!(h.state().doc.steps().count(), steps + 1, "a gizmo drag is one step");
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Set Adjust #2 adjust offset"));
    // The preview shows it: the hips moved along X by the offset.
    h.run_steps(2);
    let rig = h.state().session.entity("Runner").unwrap(); // the world was rebuilt by the edit
    let moved = h.state().session.world().rig_pose(rig).unwrap().model[0].w_axis.truncate();
    assert!((moved.x - hips.x - direction.x).abs() < 1e-3, "{hips} -> {moved}");
}

#[test]
fn enter_in_the_add_node_search_adds_the_first_node_it_shows() {
    let dir = sample("locomotion");
    let mut h = editor_sized(dir.path(), egui::vec2(2560.0, 1600.0));
    click(&mut h, Role::Button, "Graph");
    h.get_all_by_role_and_label(Role::Button, "New Graph").next().unwrap().click();
    settle(&mut h);
    let at = empty_spot(&h);
    right_click(&mut h, at);
    // The search box has the keyboard as the menu opens.
    h.event(egui::Event::Text("timesc".into()));
    h.run();
    key(&mut h, Modifiers::NONE, Key::Enter);
    h.run_steps(3);
    let g = graph(&h);
    assert_eq!(g.nodes.len(), 1, "Enter added the filtered node");
    assert!(matches!(g.nodes[0].kind, NodeKind::TimeScale { .. }), "{:?}", g.nodes[0].kind);
}

/// The locomotion sample's graph in the Graph tab of the default-sized editor (its canvas is
/// far smaller than the graph at zoom 1).
fn locomotion_graph() -> (TempDir, Harness<'static, EditorApp>) {
    let dir = sample("locomotion");
    let mut h = editor(dir.path());
    click(&mut h, Role::Button, "Graph");
    h.run_steps(12);
    (dir, h)
}

fn assert_all_nodes_inside(h: &Harness<'_, EditorApp>, what: &str) {
    let rep = report(h);
    let canvas = rep.canvas.unwrap();
    assert_eq!(
        rep.node_rects.len(),
        graph_at(h, "graphs/locomotion.graph.ron").nodes.len(),
        "{what}: every node drawn"
    );
    for (n, r) in &rep.node_rects {
        assert!(
            canvas.contains_rect(r.expand(8.0)),
            "{what}: node {n} {r:?} not inside {canvas:?} with a margin"
        );
    }
}

fn graph_at(h: &Harness<'_, EditorApp>, path: &str) -> marrow_engine::graph::AnimGraph {
    (*h.state().doc.project().graphs[path]).clone()
}

#[test]
fn frame_all_and_f_fit_every_node_including_the_output_in_a_small_canvas() {
    let (_dir, mut h) = locomotion_graph();
    // A click on the empty canvas gives the Graph the keyboard.
    let rep = report(&h);
    let canvas = rep.canvas.unwrap();
    let spot = (0..40)
        .flat_map(|i| (0..40).map(move |j| (i, j)))
        .map(|(i, j)| canvas.shrink(10.0).lerp_inside(egui::vec2(i as f32 / 39.0, j as f32 / 39.0)))
        .find(|p| rep.node_rects.values().all(|r| !r.expand(6.0).contains(*p)))
        .expect("an empty spot on the canvas");
    h.hover_at(spot);
    h.run();
    h.drag_at(spot);
    h.run();
    h.drop_at(spot);
    settle(&mut h);
    assert_eq!(h.state().ui.focus, marrow_editor::ui_state::Focus::Graph);
    key(&mut h, Modifiers::NONE, Key::F);
    h.run_steps(12);
    assert_all_nodes_inside(&h, "F");
    // Zoom back in by the wheel, then the toolbar's Frame All.
    let canvas = report(&h).canvas.unwrap();
    h.hover_at(canvas.center());
    h.event(egui::Event::Zoom(3.0));
    h.run_steps(3);
    assert!(report(&h).scale > 0.9, "zoomed in: {}", report(&h).scale);
    click(&mut h, Role::Button, "Frame All");
    h.run_steps(12);
    assert_all_nodes_inside(&h, "Frame All");
}

#[test]
fn a_graph_opens_at_a_zoom_where_node_text_is_the_ui_text_size_with_the_output_in_view() {
    let (_dir, h) = locomotion_graph();
    let rep = report(&h);
    assert!(rep.scale >= 0.99, "node text drawn at {} of the UI's size", rep.scale);
    let output = graph_at(&h, "graphs/locomotion.graph.ron")
        .nodes
        .iter()
        .find(|n| matches!(n.kind, NodeKind::Output))
        .unwrap()
        .id;
    let canvas = rep.canvas.unwrap();
    assert!(
        canvas.contains_rect(rep.node_rects[&output]),
        "Output {:?} inside {canvas:?}",
        rep.node_rects[&output]
    );
}

/// Every node kind (`NodeKind::examples()`): offered by the Add Node menu as its description
/// says, added to a graph as one step, its clips following a clip rename and keeping that clip
/// from being deleted, its parameters following a parameter rename and keeping that parameter
/// from being deleted.
#[test]
fn every_node_kind_is_offered_and_its_references_are_kept() {
    use marrow_editor::document::EditError;
    use marrow_editor::document::Op;
    use marrow_editor::document::graph_ops::GraphOp;
    use marrow_editor::panels::graph::palette;
    use marrow_engine::graph::kinds::EXAMPLE_PARAMETER;
    use marrow_engine::graph::{AnimGraph, KINDS, Node, Palette};

    let clips = vec!["clips/idle.clip.ron".to_owned()];
    let mut empty = AnimGraph::new();
    empty.add_parameter(EXAMPLE_PARAMETER, ParamValue::Float(0.0));
    let offered = palette::entries(&empty, &clips);
    let mut with_output = empty.clone();
    with_output.add_node(NodeKind::Output, [0.0, 0.0]);
    let offered_again = palette::entries(&with_output, &clips);
    let path = "graphs/locomotion.graph.ron".to_owned();
    for example in NodeKind::examples() {
        let info = example.info();
        let entries: Vec<_> = offered.iter().filter(|e| e.kind.index() == example.index()).collect();
        match info.palette {
            Palette::Never => assert!(entries.is_empty(), "{}", info.name),
            _ => {
                assert_eq!(entries.len(), 1, "{}", info.name);
                assert_eq!(entries[0].hint, info.hint);
                assert!(palette::matches(entries[0], info.name), "{}", info.name);
            }
        }
        let again = offered_again.iter().filter(|e| e.kind.index() == example.index()).count();
        assert_eq!(again, usize::from(matches!(info.palette, Palette::Always | Palette::PerParameter)));

        // The sample's idle clip is used only by its blend space (node 1), the controller's
        // machine (its node 0) and the steering graph's 2D blend space (its node 2): remove those,
        // then let the example be its one user.
        let mut doc = Document::open(&repo().join("projects/locomotion")).unwrap();
        let graph_op = |op: GraphOp| Op::Graph { path: path.clone(), op };
        doc.apply(&graph_op(GraphOp::RemoveNodes(vec![NodeId(1)])), 1).unwrap();
        let controller = marrow_engine::project::runner::CONTROLLER_GRAPH.to_owned();
        doc.apply(&Op::Graph { path: controller, op: GraphOp::RemoveNodes(vec![NodeId(0)]) }, 1).unwrap();
        let steering = marrow_engine::project::locomotion::STEERING_GRAPH.to_owned();
        doc.apply(&Op::Graph { path: steering, op: GraphOp::RemoveNodes(vec![NodeId(2)]) }, 1).unwrap();
        doc.apply(
            &graph_op(GraphOp::AddParameter {
                name: EXAMPLE_PARAMETER.into(),
                default: ParamValue::Float(0.0),
            }),
            2,
        )
        .unwrap();
        let mut kind = example.clone();
        for c in kind.clip_refs_mut() {
            *c = "clips/idle.clip.ron".into();
        }
        let id = NodeId(doc.project().graphs[&path].fresh_id());
        let nodes = vec![Node { id, position: [0.0, 400.0], kind }];
        doc.apply(&graph_op(GraphOp::AddNodes { label: "Add".into(), nodes, connections: Vec::new() }), 3)
            .unwrap();
        let node = |doc: &Document| doc.project().graphs[&path].node(id).unwrap().kind.clone();

        let renamed = "clips/idle_renamed.clip.ron";
        doc.apply(&Op::RenameAsset { from: clips[0].clone(), to: renamed.into() }, 4).unwrap();
        let now = node(&doc);
        assert_eq!(now.clip_refs().len(), example.clip_refs().len(), "{}", info.name);
        assert!(now.clip_refs().iter().all(|c| *c == renamed), "{}: {now:?}", info.name);
        let deleted = doc.apply(&Op::DeleteAsset { path: renamed.into() }, 5);
        if example.clip_refs().is_empty() {
            assert!(deleted.is_ok(), "{}: {deleted:?}", info.name);
        } else {
            assert!(matches!(deleted, Err(EditError::InUse { .. })), "{}: {deleted:?}", info.name);
        }

        let rename = GraphOp::RenameParameter { from: EXAMPLE_PARAMETER.into(), to: "renamed".into() };
        doc.apply(&graph_op(rename), 6).unwrap();
        let now = node(&doc);
        assert_eq!(now.param_refs().len(), example.param_refs().len(), "{}", info.name);
        assert!(now.param_refs().iter().all(|p| *p == "renamed"), "{}: {now:?}", info.name);
        let deleted = doc.apply(&graph_op(GraphOp::DeleteParameter { name: "renamed".into() }), 7);
        assert_eq!(deleted.is_err(), !example.param_refs().is_empty(), "{}: {deleted:?}", info.name);
    }
    assert!(KINDS.iter().any(|k| k.palette == Palette::Never), "the Unknown kind is never offered");
}

/// The canvas's Add Node menu shows a button for every kind its description offers (the
/// Parameter once per parameter, the Output only while the graph has none) and none for a kind
/// only a file can name.
#[test]
fn the_add_node_menu_shows_every_offered_node_kind() {
    use marrow_engine::graph::{KINDS, Palette};

    let dir = sample("locomotion");
    let mut h = editor_sized(dir.path(), egui::vec2(2560.0, 1600.0));
    click(&mut h, Role::Button, "Graph");
    h.get_all_by_role_and_label(Role::Button, "New Graph").next().unwrap().click();
    settle(&mut h);
    h.get_by_label("New parameter name").focus();
    h.run();
    h.get_by_label("New parameter name").type_text("example");
    settle(&mut h);
    click(&mut h, Role::Button, "Add Parameter");
    let at = empty_spot(&h);
    right_click(&mut h, at);
    for info in &KINDS {
        let label = match info.palette {
            Palette::Always | Palette::OncePerGraph => info.name.to_owned(),
            Palette::PerParameter => format!("{}: example", info.name),
            Palette::Never => {
                assert!(
                    h.query_by_role_and_label(Role::Button, info.name).is_none(),
                    "{} offered",
                    info.name
                );
                continue;
            }
        };
        assert!(h.query_by_role_and_label(Role::Button, &label).is_some(), "{label} not offered");
    }
    h.get_by_role_and_label(Role::Button, "Output").click();
    settle(&mut h);
    h.run_steps(3);
    assert!(graph(&h).nodes.iter().any(|n| matches!(n.kind, NodeKind::Output)));
    let at = empty_spot(&h);
    right_click(&mut h, at);
    assert!(h.query_by_role_and_label(Role::Button, "Clip").is_some());
    assert!(h.query_by_role_and_label(Role::Button, "Output").is_none(), "a second Output offered");
}

/// A primary click at `pos`, as the real backend sends it (the pointer moves there, then a press
/// and a release).
fn left_click(h: &mut Harness<'_, EditorApp>, pos: Pos2) {
    h.hover_at(pos);
    h.run();
    for pressed in [true, false] {
        h.event(egui::Event::PointerButton {
            pos,
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: Modifiers::NONE,
        });
    }
    settle(h);
}

fn plane_samples(h: &Harness<'_, EditorApp>, space: NodeId) -> Vec<(String, (f32, f32))> {
    let NodeKind::BlendSpace2D { samples, .. } = graph(h).node(space).unwrap().kind.clone() else { panic!() };
    samples.into_iter().map(|s| (s.clip, s.position)).collect()
}

#[test]
fn a_2d_blend_space_takes_samples_at_clicks_and_a_sample_drag_is_one_undo_step() {
    let dir = sample("locomotion");
    let original = files(dir.path());
    let mut h = editor_sized(dir.path(), egui::vec2(2560.0, 1600.0));
    click(&mut h, Role::Button, "Graph");
    h.get_all_by_role_and_label(Role::Button, "New Graph").next().unwrap().click();
    settle(&mut h);
    let space = add_node(&mut h, "BlendSpace2D");
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Add BlendSpace2D"));
    select(&mut h, space);

    // Three samples, each where the plane is clicked, with its clip picked from the list.
    for (fx, fy, clip) in [(0.2, 0.8, "idle"), (0.8, 0.8, "stride"), (0.5, 0.2, "sprint")] {
        let plane = h.get_by_label("blend plane").rect();
        let at = plane.min + egui::vec2(plane.width() * fx, plane.height() * fy);
        let before = plane_samples(&h, space).len();
        left_click(&mut h, at);
        h.get_by_role_and_label(Role::Button, &format!("add {clip} here")).click();
        settle(&mut h);
        let samples = plane_samples(&h, space);
        assert_eq!(samples.len(), before + 1, "{clip} added");
        assert_eq!(samples[before].0, format!("clips/{clip}.clip.ron"));
        assert_eq!(
            h.state().doc.undo_label().as_deref(),
            Some(&*format!("Set BlendSpace2D {space} samples (add)"))
        );
    }
    let placed = plane_samples(&h, space);
    // Clicked left to right and bottom to top: the plane's x grows rightwards, its y upwards.
    assert!(placed[0].1.0 < placed[1].1.0 && placed[0].1.1 < placed[2].1.1, "{placed:?}");
    let points: Vec<(f32, f32)> = placed.iter().map(|s| s.1).collect();
    assert_eq!(marrow_engine::graph::triangulate(&points).map(|t| t.len()), Ok(1));

    // Drag the stride sample to the right: it moves, in one undo step.
    let steps = h.state().doc.steps().count();
    let from = h.get_by_label("sample 1 stride").rect().center();
    drag(&mut h, from, from + egui::vec2(60.0, -30.0), 6);
    let moved = plane_samples(&h, space);
    assert!(moved[1].1.0 > placed[1].1.0 && moved[1].1.1 > placed[1].1.1, "{placed:?} -> {moved:?}");
    assert_eq!((moved[0].clone(), moved[2].clone()), (placed[0].clone(), placed[2].clone()));
    assert_eq!(h.state().doc.steps().count(), steps + 1, "a sample drag is one step");

    // A fourth sample, removed again from its context menu.
    let plane = h.get_by_label("blend plane").rect();
    left_click(&mut h, plane.min + egui::vec2(plane.width() * 0.3, plane.height() * 0.3));
    h.get_by_role_and_label(Role::Button, "add idle here").click();
    settle(&mut h);
    assert_eq!(plane_samples(&h, space).len(), 4);
    let fourth = h.get_by_label("sample 3 idle").rect().center();
    right_click(&mut h, fourth);
    h.get_by_role_and_label(Role::Button, "Remove sample").click();
    settle(&mut h);
    assert_eq!(plane_samples(&h, space), moved);
    assert_eq!(
        h.state().doc.undo_label().as_deref(),
        Some(&*format!("Set BlendSpace2D {space} samples (remove)"))
    );

    // Undo all: the original bytes; redo all: the edited graph.
    undo_all_redo_all(&mut h, dir.path(), &original);
}

#[test]
fn dragging_the_2d_blend_point_drives_the_preview_without_editing_the_document() {
    use marrow_editor::command::Command;
    use marrow_editor::document::Op;
    use marrow_editor::document::graph_ops::GraphOp;
    use marrow_engine::graph::{BlendSample2D, Connection, Node};
    const L: &str = "graphs/locomotion.graph.ron";
    let dir = sample("locomotion");
    let mut h = editor_sized(dir.path(), egui::vec2(2560.0, 1600.0));
    // A 2D blend space on "speed" (x) and "lean" (y) in place of the 1D one.
    let sample =
        |clip: &str, position| BlendSample2D { clip: format!("clips/{clip}.clip.ron"), position, speed: 1.0 };
    let samples =
        vec![sample("idle", (0.0, 0.0)), sample("stride", (1.0, 0.0)), sample("sprint", (0.0, 1.0))];
    let (plane, lean) = (NodeId(10), NodeId(11));
    let edit = |op| Command::Edit(Box::new(Op::Graph { path: L.into(), op }));
    h.state_mut().send(edit(GraphOp::AddNodes {
        label: "Add BlendSpace2D".into(),
        nodes: vec![
            Node {
                id: plane,
                position: [200.0, 260.0],
                kind: NodeKind::BlendSpace2D { samples, x: 0.0, y: 0.0, looping: true },
            },
            Node { id: lean, position: [0.0, 300.0], kind: NodeKind::Parameter { name: "lean".into() } },
        ],
        connections: vec![
            Connection { from: NodeId(0), to: plane, pin: "x".into() },
            Connection { from: lean, to: plane, pin: "y".into() },
        ],
    }));
    settle(&mut h);
    h.state_mut().send(edit(GraphOp::Connect { from: plane, to: NodeId(2), pin: "pose".into() }));
    settle(&mut h);
    click(&mut h, Role::Button, "Graph");
    click(&mut h, Role::Button, "▶ Preview");
    h.run_steps(3);
    assert_eq!(h.state().session.preview().unwrap().error, None);
    select(&mut h, plane);
    let revision = h.state().doc.revision();
    let files = h.state().doc.files();
    let params = |h: &Harness<'_, EditorApp>| {
        let p = &h.state().session.preview().unwrap().params;
        (p.get("speed").copied(), p.get("lean").copied())
    };
    let before = params(&h);

    // The point starts at the parameters' values (speed 1, lean 0: the stride sample); dragged to
    // the middle of the three samples.
    let from = h.get_by_label("blend point").rect().center();
    assert!(
        (from - h.get_by_label("sample 1 stride").rect().center()).length() < 2.0,
        "the point sits on stride"
    );
    // (Frame by frame: every frame of the drag sends a live value, which asks for another.)
    let corners =
        ["sample 0 idle", "sample 1 stride", "sample 2 sprint"].map(|l| h.get_by_label(l).rect().center());
    let to = Pos2::new(
        corners.iter().map(|c| c.x).sum::<f32>() / 3.0,
        corners.iter().map(|c| c.y).sum::<f32>() / 3.0,
    );
    h.hover_at(from);
    h.step();
    h.drag_at(from);
    h.step();
    for i in 1..=6 {
        h.hover_at(from + (to - from) * (i as f32 / 6.0));
        h.step();
    }
    h.drop_at(to);
    settle(&mut h);
    let (speed, lean_now) = params(&h);
    let (Some(ParamValue::Float(speed)), Some(ParamValue::Float(lean_now))) = (speed, lean_now) else {
        panic!("{:?} -> {speed:?} {lean_now:?}", before)
    };
    assert!(
        (speed - 1.0 / 3.0).abs() < 0.05 && (lean_now - 1.0 / 3.0).abs() < 0.05,
        "speed {speed}, lean {lean_now}"
    );
    assert_eq!(h.state().doc.revision(), revision, "a live point is not an edit");
    assert_eq!(h.state().doc.files(), files);
    h.run_steps(2);
    let rig = h.state().session.entity("Runner").unwrap();
    let inst = h.state().session.world().animator(rig).unwrap().current_graph().unwrap();
    let mut w = [0.0f32; 3];
    assert!(inst.space_weights(plane, &mut w));
    assert!(w.iter().all(|&x| x > 0.0), "the point is inside the triangle now: {w:?}");
}

#[test]
fn a_two_bone_ik_node_is_added_set_up_wired_and_previewed_then_undo_all_gives_the_original_bytes() {
    const L: &str = "graphs/locomotion.graph.ron";
    let dir = sample("locomotion");
    let original = files(dir.path());
    let mut h = editor_sized(dir.path(), egui::vec2(2560.0, 1600.0));
    click(&mut h, Role::Button, "Graph");
    h.run_steps(3);
    let before = graph_at(&h, L).nodes.len();
    let at = empty_spot(&h);
    right_click(&mut h, at);
    h.get_by_role_and_label(Role::Button, "TwoBoneIk").click();
    settle(&mut h);
    h.run_steps(3);
    let g = graph_at(&h, L);
    assert_eq!(g.nodes.len(), before + 1, "TwoBoneIk added");
    let ik = g.nodes.last().unwrap().id;
    let title = format!("TwoBoneIk {ik}");

    // The chain, picked from the runner's bones in the details.
    select(&mut h, ik);
    for (label, bone) in [("Start bone", "hips"), ("Mid bone", "thigh_l"), ("End bone", "shin_l")] {
        h.get_by_role_and_label(Role::ComboBox, label).click();
        settle(&mut h);
        h.get_by_role_and_label(Role::Button, bone).click();
        settle(&mut h);
    }
    // The target, on the node's constants.
    let target = glam::Vec3::new(-0.2, 0.55, 0.15);
    for (pin, v) in [("x", target.x), ("y", target.y), ("z", target.z)] {
        set_value(&mut h, Role::Slider, &format!("{title} {pin}"), v as f64);
    }
    let NodeKind::TwoBoneIk { start, mid, end, x, y, z, .. } = graph_at(&h, L).node(ik).unwrap().kind.clone()
    else {
        panic!()
    };
    assert_eq!((start.as_str(), mid.as_str(), end.as_str()), ("hips", "thigh_l", "shin_l"));
    assert_eq!((x, y, z), (target.x, target.y, target.z));

    // Wired between the lean Adjust and the Output.
    feed(&mut h, &title, "pose", "Adjust #2");
    select(&mut h, NodeId(3));
    feed(&mut h, "Output #3", "pose", &title);
    assert!(h.state().panels.graph.faults(ik).is_empty(), "{:?}", h.state().panels.graph.faults(ik));
    let edited = h.state().doc.files();

    // Preview: the left shin's end is on the target; the document does not change.
    let revision = h.state().doc.revision();
    click(&mut h, Role::Button, "▶ Preview");
    assert_eq!(h.state().session.preview().unwrap().error, None);
    h.state_mut().send(marrow_editor::command::Command::Seek { rig: "Runner".into(), time: 0.3 });
    settle(&mut h);
    h.run_steps(2);
    let rig = h.state().session.entity("Runner").unwrap();
    let pose = h.state().session.world().rig_pose(rig).unwrap();
    let shin = pose.model[2].w_axis.truncate();
    assert!(shin.distance(target) < 1e-3, "the shin is at {shin}, the target {target}");
    assert_eq!(h.state().doc.revision(), revision, "previewing is not an edit");
    click(&mut h, Role::Button, "■ Stop Preview");
    assert_eq!(undo_all_redo_all(&mut h, dir.path(), &original), edited);
}

/// Adds a node from the canvas menu of the graph at `path`; returns its id.
fn add_node_to(h: &mut Harness<'_, EditorApp>, path: &str, entry: &str) -> NodeId {
    let before = graph_at(h, path).nodes.len();
    let at = empty_spot(h);
    right_click(h, at);
    h.get_by_role_and_label(Role::Button, entry).click();
    settle(h);
    h.run_steps(3);
    let g = graph_at(h, path);
    assert_eq!(g.nodes.len(), before + 1, "{entry} added");
    g.nodes.last().unwrap().id
}

/// Picks `bone` in the bone picker labelled `label` (the rig's tree).
fn pick_bone(h: &mut Harness<'_, EditorApp>, label: &str, bone: &str) {
    h.get_by_role_and_label(Role::ComboBox, label).click();
    settle(h);
    h.get_by_role_and_label(Role::Button, bone).click();
    settle(h);
}

#[test]
fn a_leg_ik_and_a_look_at_set_up_on_the_locomotion_sample_follow_the_gizmo_in_preview_then_undo_all() {
    use marrow_editor::command::Command;
    use marrow_editor::viewport::gizmo::{GizmoMode, Handle};
    use marrow_engine::graph::ParamValue;
    const L: &str = "graphs/locomotion.graph.ron";
    let dir = sample("locomotion");
    let original = files(dir.path());
    let mut h = editor_sized(dir.path(), egui::vec2(2560.0, 1600.0));
    click(&mut h, Role::Button, "Graph");
    h.run_steps(3);

    // The panel shows the project's first graph, the speed graph. A TwoBoneIk on the figure's right leg (thigh, shin, foot), its target on its constants.
    let ik = add_node_to(&mut h, L, "TwoBoneIk");
    let ik_title = format!("TwoBoneIk {ik}");
    select(&mut h, ik);
    for (label, bone) in [("Start bone", "thigh_r"), ("Mid bone", "shin_r"), ("End bone", "foot_r")] {
        pick_bone(&mut h, label, bone);
    }
    let reach = glam::Vec3::new(0.2, 0.3, 0.25);
    for (pin, v) in [("x", reach.x), ("y", reach.y), ("z", reach.z)] {
        set_value(&mut h, Role::Slider, &format!("{ik_title} {pin}"), v as f64);
    }
    feed(&mut h, &ik_title, "pose", "Adjust #2");

    // A vector parameter for the look target (not the sample's `look`: the Runner binds that to
    // the LookTarget entity), its Parameter node, and a LookAt on the head whose `target` it feeds.
    h.get_by_label("New parameter name").focus();
    h.run();
    h.get_by_label("New parameter name").type_text("gaze");
    settle(&mut h);
    click(&mut h, Role::ComboBox, "New parameter type");
    h.get_by_role_and_label(Role::Button, "vec3").click();
    settle(&mut h);
    click(&mut h, Role::Button, "Add Parameter");
    assert_eq!(
        graph_at(&h, L).parameter("gaze").map(|p| p.default),
        Some(ParamValue::Vec3(glam::Vec3::ZERO))
    );
    let gaze = add_node_to(&mut h, L, "Parameter: gaze");
    let look = add_node_to(&mut h, L, "LookAt");
    let look_title = format!("LookAt {look}");
    select(&mut h, look);
    pick_bone(&mut h, "Look bone", "head");
    feed(&mut h, &look_title, "pose", &ik_title);
    feed(&mut h, &look_title, "target", &format!("Parameter {gaze}"));
    select(&mut h, NodeId(3));
    feed(&mut h, "Output #3", "pose", &look_title);
    for n in [ik, look] {
        let node = graph_at(&h, L).node(n).cloned();
        assert!(
            h.state().panels.graph.faults(n).is_empty(),
            "{:?} {node:?}",
            h.state().panels.graph.faults(n)
        );
    }
    let NodeKind::TwoBoneIk { start, mid, end, .. } = graph_at(&h, L).node(ik).unwrap().kind.clone() else {
        panic!()
    };
    assert_eq!((start.as_str(), mid.as_str(), end.as_str()), ("thigh_r", "shin_r", "foot_r"));
    let edited = h.state().doc.files();

    // Preview on the Runner, the look target set live in front of it and to its side.
    let revision = h.state().doc.revision();
    click(&mut h, Role::Button, "▶ Preview");
    assert_eq!(h.state().session.preview().unwrap().error, None);
    let start = glam::Vec3::new(0.6, 1.6, 1.5);
    h.state_mut().send(Command::SetGraphParameter { name: "gaze".into(), value: ParamValue::Vec3(start) });
    settle(&mut h);
    h.run_steps(2);
    let rig = h.state().session.entity("Runner").unwrap();
    let model = |h: &Harness<'_, EditorApp>, bone: &str| {
        let w = h.state().session.world();
        let i = w.animator(rig).unwrap().skeleton().index_of(bone).unwrap();
        w.rig_pose(rig).unwrap().model[i]
    };
    let foot = model(&h, "foot_r").w_axis.truncate();
    assert!(foot.distance(reach) < 1e-3, "the right foot is at {foot}, the target {reach}");
    let aims_at = |h: &Harness<'_, EditorApp>, at: glam::Vec3| {
        let head = model(h, "head");
        let forward = head.transform_vector3(glam::Vec3::Z).normalize();
        forward.angle_between((at - head.w_axis.truncate()).normalize())
    };
    assert!(aims_at(&h, start) < 1e-3, "the head looks at the target: {}", aims_at(&h, start));

    // The LookAt's Target Gizmo: dragged along X, the head follows; the document does not change.
    // (Framed first: the canvas scrolled the LookAt's header out of view while wiring.)
    click(&mut h, Role::Button, "Frame All");
    h.run_steps(10);
    select(&mut h, look);
    h.get_by_label("Target Gizmo").click();
    settle(&mut h);
    let view = viewport_view(&h);
    let gizmo = app_gizmo(&h, &view, GizmoMode::Translate).expect("the target gizmo");
    assert!((gizmo.world.w_axis.truncate() - start).length() < 1e-4, "the gizmo sits on the target");
    let a = gizmo.handle_point(&view, Handle::Move(0), 0.9).unwrap();
    let b = gizmo.handle_point(&view, Handle::Move(0), 1.6).unwrap();
    drag(&mut h, a, b, 6);
    h.run_steps(2);
    let inst = h.state().session.world().animator(rig).unwrap().current_graph().unwrap();
    let Some(ParamValue::Vec3(moved)) = inst.parameter("gaze") else { panic!("gaze is a vector") };
    assert!(moved.x > start.x + 0.05 && (moved.y - start.y).abs() < 1e-4, "{start} -> {moved}");
    assert!(aims_at(&h, moved) < 1e-3, "the head follows: {}", aims_at(&h, moved));
    assert_eq!(h.state().doc.revision(), revision, "previewing and the gizmo are not edits");
    click(&mut h, Role::Button, "■ Stop Preview");
    assert_eq!(undo_all_redo_all(&mut h, dir.path(), &original), edited);
}

fn machine_report(h: &Harness<'_, EditorApp>) -> marrow_editor::panels::graph::machine_canvas::MachineReport {
    h.state().panels.graph.machine_report.clone()
}

fn machine_at(
    h: &Harness<'_, EditorApp>,
    path: &str,
    node: NodeId,
) -> marrow_engine::graph::machine::StateMachine {
    match &graph_at(h, path).node(node).unwrap().kind {
        NodeKind::StateMachine { machine } => machine.clone(),
        other => panic!("not a machine: {other:?}"),
    }
}

/// Clicks an empty corner of the state canvas (nothing selected: the machine's summary shows).
fn click_machine_background(h: &mut Harness<'_, EditorApp>) {
    let canvas = machine_report(h).canvas.expect("the state canvas was drawn");
    left_click(h, canvas.left_top() + egui::vec2(12.0, 12.0));
}

#[test]
fn a_state_machine_is_built_on_its_canvas_driven_in_preview_and_undone_to_the_original_bytes() {
    const L: &str = "graphs/locomotion.graph.ron";
    let dir = sample("locomotion");
    let original = files(dir.path());
    let mut h = editor_sized(dir.path(), egui::vec2(2560.0, 1600.0));
    click(&mut h, Role::Button, "Graph");
    h.run_steps(3);
    let at = empty_spot(&h);
    right_click(&mut h, at);
    h.get_by_role_and_label(Role::Button, "StateMachine").click();
    settle(&mut h);
    h.run_steps(3);
    let sm = graph_at(&h, L).nodes.last().unwrap().id;
    let title = format!("StateMachine {sm}");
    select(&mut h, NodeId(3));
    feed(&mut h, "Output #3", "pose", &title);

    // Its canvas: two more states from the summary, then a ring of three transitions dragged
    // from each state's link handle onto the next.
    select(&mut h, sm);
    click(&mut h, Role::Button, "Open State Canvas");
    assert!(h.state().panels.graph.machine.is_some(), "the state canvas opened");
    for _ in 0..2 {
        click_machine_background(&mut h);
        click(&mut h, Role::Button, "Add State");
    }
    let names: Vec<String> = machine_at(&h, L, sm).states.iter().map(|s| s.name.clone()).collect();
    assert_eq!(names, ["Idle", "State", "State 2"]);
    for (from, to) in [("Idle", "State"), ("State", "State 2"), ("State 2", "Idle")] {
        let r = machine_report(&h);
        drag(&mut h, r.states[from].right_center(), r.states[to].center(), 8);
    }
    let m = machine_at(&h, L, sm);
    let labels: Vec<String> = m.transitions.iter().map(|t| t.label()).collect();
    assert_eq!(labels, ["Idle -> State", "State -> State 2", "State 2 -> Idle"]);

    // A condition on each, picked on its arrow in the inspector: speed > 1.25, speed > 1.75,
    // speed < 0.5 (speed starts at 1: the machine stays in Idle).
    for (k, test, value) in [(0, None, 1.25), (1, None, 1.75), (2, Some("<"), 0.5)] {
        let (a, b) = machine_report(&h).arrows[k];
        left_click(&mut h, a + (b - a) * 0.5);
        click(&mut h, Role::Button, "Add Condition");
        if let Some(op) = test {
            click(&mut h, Role::ComboBox, "Condition 1 test");
            click(&mut h, Role::Button, op);
        }
        set_value(&mut h, Role::SpinButton, "Condition 1 value", value);
    }
    use marrow_engine::graph::machine::Test;
    let tests: Vec<Test> = machine_at(&h, L, sm).transitions.iter().map(|t| t.conditions[0].test).collect();
    assert_eq!(tests, [Test::Greater(1.25), Test::Greater(1.75), Test::Less(0.5)]);
    assert!(h.state().panels.graph.faults(sm).is_empty(), "{:?}", h.state().panels.graph.faults(sm));
    let edited = h.state().doc.files();

    // Preview: speed drives the machine around its ring; the document does not change.
    let revision = h.state().doc.revision();
    click(&mut h, Role::Button, "▶ Preview");
    assert_eq!(h.state().session.preview().unwrap().error, None);
    h.state_mut().send(marrow_editor::command::Command::Play);
    h.run_steps(4);
    assert_eq!(machine_report(&h).active.map(|a| a.0).as_deref(), Some("Idle"));
    let rig = h.state().session.entity("Runner").unwrap();
    let local = |h: &Harness<'_, EditorApp>| h.state().session.world().rig_pose(rig).unwrap().local.to_vec();
    let mut then = None;
    for (speed, state) in [(1.5, "State"), (2.0, "State 2"), (0.0, "Idle")] {
        set_value(&mut h, Role::Slider, "speed live", speed);
        h.run_steps(30);
        assert_eq!(machine_report(&h).active.map(|a| a.0).as_deref(), Some(state), "at speed {speed}");
        if state == "State 2" {
            // What the rig looked like in State 2, and when.
            then = Some((h.state().session.recording().unwrap().now(), local(&h)));
        }
    }
    // Two seconds and more of Idle later, rewind: drag on the rewind timeline to that moment: the
    // machine is in State 2 again and the rig's pose is the live one of then, bit for bit.
    let (tick, pose) = then.unwrap();
    h.run_steps(100);
    h.state_mut().send(marrow_editor::command::Command::Pause);
    h.run_steps(2);
    let rec = h.state().session.recording().unwrap();
    let back = (rec.now() - tick) as f32 * rec.tick_seconds();
    assert!(back >= 2.0, "the moment rewound to is {back} s back");
    assert_eq!(machine_report(&h).active.map(|a| a.0).as_deref(), Some("Idle"));
    let strip = h.state().panels.graph.rewind_report.expect("the rewind timeline is shown");
    let at = egui::pos2(strip.x(tick) + 0.2, strip.rect.center().y);
    drag(&mut h, at + egui::vec2(-30.0, 0.0), at, 4);
    let shown = h.state().session.recording().unwrap().rewound.as_ref().map(|r| r.at);
    assert_eq!(shown, Some(tick), "rewound to the frame of then");
    assert_eq!(machine_report(&h).active.map(|a| a.0).as_deref(), Some("State 2"));
    assert_eq!(local(&h), pose, "the rewound pose is the live pose of then, bit for bit");
    assert!(!h.state().session.is_playing(), "a rewind pauses");
    // Resume from now: back to Idle, playing.
    click(&mut h, Role::Button, "Resume from Now");
    h.run_steps(3);
    assert!(h.state().session.is_playing());
    assert_eq!(machine_report(&h).active.map(|a| a.0).as_deref(), Some("Idle"));
    assert_eq!(h.state().doc.revision(), revision, "previewing is not an edit");
    click(&mut h, Role::Button, "■ Stop Preview");
    assert_eq!(undo_all_redo_all(&mut h, dir.path(), &original), edited);
    // Saved and opened again: the same files.
    key(&mut h, Modifiers::COMMAND, Key::S);
    let reopened = marrow_editor::document::Document::open(dir.path()).unwrap();
    assert_eq!(reopened.files(), edited, "save and reload equal");
}

#[test]
fn a_hostile_state_machine_file_opens_with_its_faults_on_the_transitions_and_stays_editable() {
    const C: &str = "graphs/controller.graph.ron";
    let dir = sample("locomotion");
    // A machine with a missing state, an unknown parameter, a float tested as a bool and a ring
    // of zero-length transitions, blended with a machine of 10,000 states.
    let big_states: String = (0..10_000)
        .map(|i| format!("(name: \"S{i}\", source: Clip(clip: \"clips/idle.clip.ron\")),"))
        .collect();
    let big_transitions: String = (0..10_000)
        .map(|i| format!("(from: \"S{i}\", to: \"S{}\", duration: 0.0),", (i + 1) % 10_000))
        .collect();
    let text = format!(
        r#"(
    version: 1,
    parameters: [(name: "speed", default: Float(0.0))],
    nodes: [
        (id: 0, kind: "StateMachine", at: (0.0, 0.0), machine: (
            entry: "Idle",
            states: [
                (name: "Idle", at: (0.0, 0.0), source: Clip(clip: "clips/idle.clip.ron")),
                (name: "Walk", at: (250.0, 0.0), source: Clip(clip: "clips/stride.clip.ron")),
            ],
            transitions: [
                (from: "Idle", to: "Fly"),
                (from: "Idle", to: "Walk", conditions: [(parameter: "velocity", test: ">", value: 0.1)]),
                (from: "Walk", to: "Idle", conditions: [(parameter: "speed", test: "true")]),
            ],
        )),
        (id: 1, kind: "StateMachine", at: (0.0, 300.0), machine: (entry: "S0", states: [{big_states}], transitions: [{big_transitions}])),
        (id: 2, kind: "Blend2", at: (400.0, 100.0), weight: 0.5),
        (id: 3, kind: "Output", at: (700.0, 100.0)),
    ],
    connections: [(from: 0, to: 2, pin: "a"), (from: 1, to: 2, pin: "b"), (from: 2, to: 3, pin: "pose")],
)"#
    );
    std::fs::write(dir.path().join(C), text).unwrap();
    let mut h = editor_sized(dir.path(), egui::vec2(2560.0, 1600.0));
    click(&mut h, Role::Button, "Graph");
    h.run_steps(2);
    h.state_mut().ui.graph = Some(C.to_owned());
    h.run_steps(3);
    let faults = h.state().panels.graph.faults(NodeId(0)).join(" | ");
    for expected in
        ["destination state \"Fly\" does not exist", "\"velocity\"", "as a bool (true), but it is a float"]
    {
        assert!(faults.contains(expected), "{expected:?} not in {faults}");
    }
    assert!(h.state().panels.graph.faults(NodeId(1)).is_empty(), "10,000 states compile");
    // On its canvas, the faults sit on the arrows; deleting the transition to nowhere removes its.
    select(&mut h, NodeId(0));
    click(&mut h, Role::Button, "Open State Canvas");
    let (a, b) = machine_report(&h).arrows[1];
    assert!(a != Pos2::ZERO && b != Pos2::ZERO, "transition 2 is drawn");
    assert_eq!(
        machine_report(&h).arrows[0],
        (Pos2::ZERO, Pos2::ZERO),
        "a transition to nowhere has no arrow"
    );
    click(&mut h, Role::Button, "3. Walk -> Idle");
    click(&mut h, Role::Button, "Remove condition 1");
    click_machine_background(&mut h);
    click(&mut h, Role::Button, "1. Idle -> Fly");
    click(&mut h, Role::Button, "Delete Transition");
    h.run_steps(2);
    let faults = h.state().panels.graph.faults(NodeId(0)).join(" | ");
    assert!(!faults.contains("Fly") && !faults.contains("as a bool"), "fixed: {faults}");
    assert!(faults.contains("\"velocity\""), "the rest stays: {faults}");
}

#[test]
fn the_editor_preview_of_a_controller_poses_bit_for_bit_as_the_embedded_engine_with_its_inputs() {
    use marrow_engine::project::runner::CONTROLLER_GRAPH;
    let dir = sample("locomotion");
    let mut h = editor_sized(dir.path(), egui::vec2(2560.0, 1600.0));
    click(&mut h, Role::Button, "Graph");
    h.run_steps(2);
    h.state_mut().ui.graph = Some(CONTROLLER_GRAPH.to_owned());
    h.run_steps(3);
    click(&mut h, Role::Button, "▶ Preview");
    assert_eq!(h.state().session.preview().unwrap().error, None);
    h.state_mut().send(marrow_editor::command::Command::Play);
    h.run_steps(10);
    // A user drives it: walk, run, jump (the trigger's button), off the ground and back.
    set_value(&mut h, Role::Slider, "speed live", 1.4);
    h.run_steps(40);
    set_value(&mut h, Role::Slider, "speed live", 1.9);
    h.run_steps(20);
    click(&mut h, Role::Button, "Fire jump");
    h.run_steps(25);
    click(&mut h, Role::CheckBox, "grounded live");
    h.run_steps(30);
    click(&mut h, Role::CheckBox, "grounded live");
    h.run_steps(50);
    let rig = h.state().session.entity("Runner").unwrap();
    let live = h.state().session.world().rig_pose(rig).unwrap().local.to_vec();
    let rec = h.state().session.recording().expect("the preview was recorded").clone();
    assert_eq!(rec.frames().front().map(|f| f.start()), Some(0), "recorded from the first tick");
    let visited: std::collections::BTreeSet<u16> = rec.frames().iter().map(|f| f.states[0].0).collect();
    assert!(visited.len() >= 4, "idle, move, jump, fall and land were visited: {visited:?}");

    // A game embedding the engine, fed the same parameter values at the same ticks.
    let project = marrow_engine::project::Project::load(dir.path()).unwrap();
    let library = marrow_engine::project::Library::load(&project, dir.path()).unwrap();
    let mut world = library.instantiate(&project, &project.manifest.scenes[0]).unwrap();
    let runner = world.find("Runner").unwrap();
    let a = world.animator_mut(runner).unwrap();
    let program = library.compile_graph(CONTROLLER_GRAPH, a.skeleton()).unwrap();
    a.play_graph(std::sync::Arc::new(program));
    for f in rec.frames() {
        let g = world.animator_mut(runner).unwrap().current_graph_mut().unwrap();
        for (i, v) in f.params.iter().enumerate() {
            g.set_parameter(i, *v);
        }
        world.frame(f.ticks, rec.tick_seconds());
        let g = world.animator(runner).unwrap().current_graph().unwrap();
        let (_, m) = g.machines().next().unwrap();
        assert_eq!(m.active_state() as u16, f.states[0].0, "the state after tick {}", f.end);
    }
    let game = world.rig_pose(runner).unwrap().local.to_vec();
    assert_eq!(live, game, "the editor's pose is the embedded engine's, bit for bit");
}

#[test]
fn the_target_gizmo_drives_a_two_bone_iks_wired_parameters_live_without_an_edit() {
    use marrow_editor::ui_state::TARGET_ENTRY;
    use marrow_editor::viewport::gizmo::{GizmoMode, Handle};
    use marrow_engine::graph::ParamValue;
    use marrow_engine::graph::file::{load_graph, save_graph};
    const L: &str = "graphs/locomotion.graph.ron";
    let dir = sample("locomotion");
    // The sample's graph with a TwoBoneIk on the left leg between its Adjust and its Output, its
    // target's x, y, z wired to the parameters reach_x, reach_y, reach_z.
    let path = dir.path().join(L);
    let (mut g, faults) = load_graph(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(faults.is_empty());
    let start = glam::Vec3::new(-0.2, 0.55, 0.15);
    let ik = g.add_node(
        NodeKind::TwoBoneIk {
            start: "hips".into(),
            mid: "thigh_l".into(),
            end: "shin_l".into(),
            x: 0.0,
            y: 0.0,
            z: 0.0,
            target_bone: String::new(),
            pole: glam::Vec3::Z,
            mid_axis: glam::Vec3::X,
            soften: 1.0,
            weight: 1.0,
        },
        [300.0, 300.0],
    );
    for (k, pin) in ["x", "y", "z"].into_iter().enumerate() {
        let name = format!("reach_{pin}");
        g.add_parameter(name.clone(), ParamValue::Float(start[k]));
        let p = g.add_node(NodeKind::Parameter { name }, [100.0, 300.0 + 60.0 * k as f32]);
        g.connect(p, ik, pin);
    }
    g.connect(NodeId(2), ik, "pose");
    g.connect(ik, NodeId(3), "pose");
    std::fs::write(&path, save_graph(&g).unwrap()).unwrap();
    let original = files(dir.path());

    let mut h = editor_sized(dir.path(), egui::vec2(2560.0, 1600.0));
    click(&mut h, Role::Button, "Graph");
    h.run_steps(3);
    click(&mut h, Role::Button, "▶ Preview");
    assert_eq!(h.state().session.preview().unwrap().error, None);
    h.run_steps(3);
    select(&mut h, ik);
    h.get_by_label("Target Gizmo").click();
    settle(&mut h);
    assert_eq!(h.state().ui.adjust_gizmo, Some((L.to_owned(), ik, TARGET_ENTRY)));
    let view = viewport_view(&h);
    let gizmo = app_gizmo(&h, &view, GizmoMode::Translate).expect("the target gizmo");
    let rig = h.state().session.entity("Runner").unwrap();
    let rig_world = h.state().session.world().world_matrix(rig).unwrap();
    assert!(
        (gizmo.world.w_axis.truncate() - rig_world.transform_point3(start)).length() < 1e-5,
        "the gizmo sits on the target"
    );
    let revision = h.state().doc.revision();
    let a = gizmo.handle_point(&view, Handle::Move(0), 0.9).unwrap();
    let b = gizmo.handle_point(&view, Handle::Move(0), 1.4).unwrap();
    drag(&mut h, a, b, 6);
    h.run_steps(2);
    let live = |h: &Harness<'_, EditorApp>, name: &str| {
        let rig = h.state().session.entity("Runner").unwrap();
        let inst = h.state().session.world().animator(rig).unwrap().current_graph().unwrap();
        inst.parameter(name).unwrap().as_f32()
    };
    let moved = glam::Vec3::new(live(&h, "reach_x"), live(&h, "reach_y"), live(&h, "reach_z"));
    assert!(moved.x > start.x + 0.05, "the drag moved the target along X: {start} -> {moved}");
    assert!((moved.y - start.y).abs() < 1e-4 && (moved.z - start.z).abs() < 1e-4, "only X: {moved}");
    // The leg follows the live target; nothing was edited.
    let rig = h.state().session.entity("Runner").unwrap();
    let shin = h.state().session.world().rig_pose(rig).unwrap().model[2].w_axis.truncate();
    assert!(shin.distance(moved) < 1e-3, "the shin is at {shin}, the target at {moved}");
    assert_eq!(h.state().doc.revision(), revision, "driving a parameter live is not an edit");
    assert_eq!(h.state().doc.head(), 0);
    click(&mut h, Role::Button, "■ Stop Preview");
    assert!(files(dir.path()) == original, "nothing was written");
    assert!(!h.state().doc.is_dirty(), "the document has nothing to save");
}

/// egui's sliders and drag values clamp (and round) the value they are given on every frame;
/// over an authored value that reads as a change. Showing a node's details must never edit it:
/// every node of every graph of the samples is shown (the mocap capture's FootPlant holds limits
/// past its drag value's range, LookAts hold limits between whole degrees), and then the
/// inspector of every entity; nothing is recorded and nothing is dirty.
#[test]
fn showing_every_nodes_details_and_every_entitys_inspector_records_no_edit() {
    for project in ["locomotion", "mocap", "runner", "crowd", "particle_figure", "cesium_man"] {
        let dir = sample(project);
        let mut h = editor_sized(dir.path(), egui::vec2(2560.0, 1600.0));
        click(&mut h, Role::Button, "Graph");
        h.run_steps(3);
        let graphs = h.state().doc.project().manifest.graphs.clone();
        for path in graphs {
            h.state_mut().ui.graph = Some(path.clone());
            h.run_steps(3);
            for node in graph_at(&h, &path).nodes.iter().map(|n| n.id) {
                h.state_mut().ui.graph_selection = vec![node];
                h.run_steps(3);
                assert_eq!(
                    h.state().doc.undo_label(),
                    None,
                    "{project}: showing {path} node {node} edited it"
                );
            }
        }
        fn paths(prefix: &str, es: &[marrow_engine::scene::EntityDesc], out: &mut Vec<String>) {
            for e in es {
                let path = if prefix.is_empty() { e.name.clone() } else { format!("{prefix}/{}", e.name) };
                paths(&path, &e.children, out);
                out.push(path);
            }
        }
        let mut rows = Vec::new();
        for scene in h.state().doc.project().scenes.values() {
            paths("", &scene.entities, &mut rows);
        }
        for row in rows {
            h.state_mut().ui.selection = marrow_editor::ui_state::Selection::Entity(row.clone());
            h.run_steps(3);
            assert_eq!(h.state().doc.undo_label(), None, "{project}: inspecting {row} edited it");
        }
        assert!(!h.state().doc.is_dirty(), "{project}");
    }
}

/// In the locomotion sample the LookAt's look_x/y/z follow the LookTarget entity (the Runner's
/// Animator targets set them every frame): its Target Gizmo moves the entity (one transform
/// edit, a drag one undo step) and the head follows; undo puts the entity back.
#[test]
fn the_target_gizmo_of_a_look_at_bound_to_an_entity_moves_the_entity_in_one_undo_step() {
    use marrow_editor::viewport::gizmo::{GizmoMode, Handle};
    use marrow_engine::project::locomotion::{LOOK_TARGET, STEERING_GRAPH};
    let dir = sample("locomotion");
    let original = files(dir.path());
    let mut h = editor_sized(dir.path(), egui::vec2(2560.0, 1600.0));
    click(&mut h, Role::Button, "Graph");
    h.state_mut().ui.graph = Some(STEERING_GRAPH.to_owned());
    h.run_steps(3);
    click(&mut h, Role::Button, "▶ Preview");
    assert_eq!(h.state().session.preview().unwrap().error, None);
    click(&mut h, Role::Button, "Frame All");
    h.run_steps(10);
    let look = graph_at(&h, STEERING_GRAPH)
        .nodes
        .iter()
        .find(|n| matches!(n.kind, NodeKind::LookAt { .. }))
        .unwrap()
        .id;
    select(&mut h, look);
    h.get_by_label("Target Gizmo").click();
    settle(&mut h);
    let view = viewport_view(&h);
    let gizmo = app_gizmo(&h, &view, GizmoMode::Translate).expect("the target gizmo");
    assert!((gizmo.world.w_axis.truncate() - LOOK_TARGET).length() < 1e-4, "on LookTarget");
    let a = gizmo.handle_point(&view, Handle::Move(0), 0.9).unwrap();
    let b = gizmo.handle_point(&view, Handle::Move(0), 1.6).unwrap();
    drag(&mut h, a, b, 6);
    h.run_steps(3);
    let entity = |h: &Harness<'_, EditorApp>| {
        let scene = h.state().doc.project().scenes.values().next().unwrap().clone();
        let e = scene.entities.iter().find(|e| e.name == "LookTarget").unwrap();
        e.transform.unwrap().translation
    };
    let moved = entity(&h);
    assert!(moved.x > LOOK_TARGET.x + 0.05 && (moved.y - LOOK_TARGET.y).abs() < 1e-4, "{moved}");
    assert_eq!(h.state().doc.head(), 1, "the drag is one step");
    assert_eq!(h.state().doc.undo_label().as_deref(), Some("Edit Transform"));
    // The head looks at where the entity went.
    let rig = h.state().session.entity("Runner").unwrap();
    let w = h.state().session.world();
    let head_bone = w.animator(rig).unwrap().skeleton().index_of("head").unwrap();
    let head = w.rig_pose(rig).unwrap().model[head_bone];
    let eye = head.transform_point3(glam::Vec3::new(0.0, 0.1, 0.1));
    let aim = head.transform_vector3(glam::Vec3::Z).normalize().angle_between((moved - eye).normalize());
    assert!(aim < 1e-3, "the head follows the moved target: {aim}");
    click(&mut h, Role::Button, "■ Stop Preview");
    key(&mut h, Modifiers::COMMAND, Key::Z);
    assert_eq!(entity(&h), LOOK_TARGET, "undo puts it back");
    key(&mut h, Modifiers::COMMAND, Key::S);
    assert!(files(dir.path()) == original, "undone and saved: the original bytes");
}

/// A TwoBoneIk's Pole Gizmo, in preview on the locomotion sample's figure: dragged sideways, the
/// pole turns toward the drag and the knee follows; the drag is one edit; undo all gives the
/// original bytes.
#[test]
fn the_pole_gizmo_aims_a_two_bone_iks_knee_in_one_undo_step() {
    use marrow_editor::ui_state::POLE_ENTRY;
    use marrow_editor::viewport::gizmo::{GizmoMode, Handle};
    use marrow_engine::graph::file::{load_graph, save_graph};
    const L: &str = "graphs/locomotion.graph.ron";
    let dir = sample("locomotion");
    // The speed graph with the right leg reaching forward and up (the knee bends), pole ahead.
    let path = dir.path().join(L);
    let (mut g, _) = load_graph(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let ik = g.add_node(
        NodeKind::TwoBoneIk {
            start: "thigh_r".into(),
            mid: "shin_r".into(),
            end: "foot_r".into(),
            x: -0.12,
            y: 0.35,
            z: 0.3,
            target_bone: String::new(),
            pole: glam::Vec3::Z,
            mid_axis: glam::Vec3::X,
            soften: 1.0,
            weight: 1.0,
        },
        [300.0, 300.0],
    );
    g.connect(NodeId(2), ik, "pose");
    g.connect(ik, NodeId(3), "pose");
    // As the editor saves it (with the final newline), so undo all and save give the same bytes.
    std::fs::write(&path, format!("{}\n", save_graph(&g).unwrap())).unwrap();
    let original = files(dir.path());

    let mut h = editor_sized(dir.path(), egui::vec2(2560.0, 1600.0));
    click(&mut h, Role::Button, "Graph");
    h.run_steps(3);
    click(&mut h, Role::Button, "▶ Preview");
    assert_eq!(h.state().session.preview().unwrap().error, None);
    click(&mut h, Role::Button, "Frame All");
    h.run_steps(10);
    select(&mut h, ik);
    h.get_by_label("Pole Gizmo").click();
    settle(&mut h);
    assert_eq!(h.state().ui.adjust_gizmo, Some((L.to_owned(), ik, POLE_ENTRY)));
    let joint = |h: &Harness<'_, EditorApp>, bone: &str| {
        let rig = h.state().session.entity("Runner").unwrap();
        let w = h.state().session.world();
        let i = w.animator(rig).unwrap().skeleton().index_of(bone).unwrap();
        w.rig_pose(rig).unwrap().model[i].w_axis.truncate()
    };
    let knee_before = joint(&h, "shin_r");
    let view = viewport_view(&h);
    let gizmo = app_gizmo(&h, &view, GizmoMode::Translate).expect("the pole gizmo");
    let hip = joint(&h, "thigh_r");
    let dir_before = (gizmo.world.w_axis.truncate() - hip).normalize();
    assert!(dir_before.abs_diff_eq(glam::Vec3::Z, 1e-4), "the gizmo lies along the pole: {dir_before}");
    // Along X, to the figure's right side.
    let a = gizmo.handle_point(&view, Handle::Move(0), 0.9).unwrap();
    let b = gizmo.handle_point(&view, Handle::Move(0), 1.8).unwrap();
    drag(&mut h, a, b, 6);
    h.run_steps(3);
    let NodeKind::TwoBoneIk { pole, .. } = graph_at(&h, L).node(ik).unwrap().kind.clone() else { panic!() };
    assert!(pole.x > 0.2 && (pole.length() - 1.0).abs() < 1e-4, "the pole turned toward +X: {pole}");
    assert_eq!(h.state().doc.head(), 1, "the drag is one step");
    let knee = joint(&h, "shin_r");
    assert!(knee.x > knee_before.x + 0.01, "the knee follows the pole: {knee_before} -> {knee}");
    let foot = joint(&h, "foot_r");
    assert!(foot.distance(glam::Vec3::new(-0.12, 0.35, 0.3)) < 1e-3, "the foot stays on its target: {foot}");
    click(&mut h, Role::Button, "■ Stop Preview");
    undo_all_redo_all(&mut h, dir.path(), &original);
}

#[test]
fn the_sample_graphs_open_with_no_node_drawn_over_another() {
    // A graph opens at zoom 1 (node text at the UI's size): the samples' node positions must
    // leave room for their nodes as drawn there (the mocap sample's LookAt, wider than the 260
    // points its file left it, once covered its neighbours' pins).
    let mut checked = 0;
    for name in ["locomotion", "mocap"] {
        let dir = sample(name);
        let mut h = editor(dir.path());
        click(&mut h, Role::Button, "Graph");
        let paths = h.state().doc.project().manifest.graphs.clone();
        assert!(!paths.is_empty(), "the {name} sample has graphs");
        for path in paths {
            h.state_mut().ui.graph = Some(path.clone());
            h.run_steps(12);
            let g = graph_at(&h, &path);
            let rects = report(&h).node_rects;
            assert_eq!(rects.len(), g.nodes.len(), "{name} {path}: every node drawn");
            let rects: Vec<_> = rects.into_iter().collect();
            for (i, (a, ra)) in rects.iter().enumerate() {
                for (b, rb) in &rects[i + 1..] {
                    assert!(
                        !ra.shrink(1.0).intersects(rb.shrink(1.0)),
                        "{name} {path}: node {a:?} {ra:?} and node {b:?} {rb:?} overlap"
                    );
                }
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 4, "the four sample graphs were checked");
}

#[test]
fn the_graph_toolbar_keeps_its_panel_toggles_and_align_on_one_line() {
    // The mocap sample's toolbar (a long preview target) once put "Parameters" at the end of
    // one line and "Details" at the start of the next.
    for size in [egui::vec2(1440.0, 900.0), egui::vec2(1280.0, 800.0)] {
        let dir = sample("mocap");
        let mut h = editor_sized(dir.path(), size);
        click(&mut h, Role::Button, "Graph");
        h.run_steps(4);
        // The toggle, not the Parameters panel's heading.
        let rect = |label: &str| {
            h.query_all_by_label(label)
                .find(|n| n.accesskit_node().role() != Role::Label)
                .unwrap_or_else(|| panic!("a {label} control"))
                .rect()
        };
        let (params, details, align) = (rect("Parameters"), rect("Details"), rect("Align"));
        assert_eq!(params.top(), details.top(), "at {size:?}: {params:?} and {details:?} share a line");
        assert_eq!(details.top(), align.top(), "at {size:?}: Align beside them");
        assert!(details.right() <= size.x && align.right() <= size.x, "at {size:?}: inside the window");
    }
}

#[test]
fn transition_labels_sit_beside_their_arrows_clear_of_the_states_and_each_other_and_hover_shows_them_whole() {
    // The locomotion controller's canvas once drew "speed <= 0.1, grounded true" over the Move
    // state and through the Move -> Idle arrow's twin, and "jump triggered" into the Jump box;
    // then, at 1280x800, "speed > 0.1" over the Fall -> Land arrow. Six window sizes.
    const C: &str = "graphs/controller.graph.ron";
    for size in [
        egui::vec2(1280.0, 800.0),
        egui::vec2(1366.0, 768.0),
        egui::vec2(1600.0, 1000.0),
        egui::vec2(1920.0, 1080.0),
        egui::vec2(1440.0, 900.0),
        egui::vec2(2560.0, 1600.0),
    ] {
        let dir = sample("locomotion");
        let mut h = editor_sized(dir.path(), size);
        click(&mut h, Role::Button, "Graph");
        h.run_steps(2);
        h.state_mut().ui.graph = Some(C.to_owned());
        h.run_steps(3);
        select(&mut h, NodeId(0));
        click(&mut h, Role::Button, "Open State Canvas");
        h.run_steps(4);
        let m = machine_at(&h, C, NodeId(0));
        let r = machine_report(&h);
        let canvas = r.canvas.expect("the state canvas was drawn");
        let labelled: Vec<usize> = (0..m.transitions.len())
            .filter(|&k| !m.transitions[k].conditions.is_empty() || m.transitions[k].exit_time.is_some())
            .collect();
        let drawn: Vec<usize> = r.labels.iter().map(|l| l.0).collect();
        assert_eq!(drawn, labelled, "at {size:?}: every transition with conditions is labelled");
        for (i, (k, rect, _)) in r.labels.iter().enumerate() {
            let name = m.transitions[*k].label();
            assert!(canvas.contains_rect(*rect), "at {size:?}: {name}'s label {rect:?} is inside {canvas:?}");
            for (state, b) in &r.states {
                assert!(
                    !rect.intersects(*b),
                    "at {size:?}: {name}'s label {rect:?} covers state {state} {b:?}"
                );
            }
            assert!(!rect.intersects(r.any.unwrap()), "at {size:?}: {name}'s label covers Any State");
            for (j, other, _) in &r.labels[i + 1..] {
                let them = m.transitions[*j].label();
                assert!(!rect.intersects(*other), "at {size:?}: the labels of {name} and {them} overlap");
            }
            // Nor over another transition's arrow (its plate would hide a piece of it).
            for (j, &(a, b)) in r.arrows.iter().enumerate().filter(|(j, _)| j != k) {
                let under = (0..=200).any(|s| rect.contains(a + (b - a) * (s as f32 / 200.0)));
                let them = m.transitions[j].label();
                assert!(!under, "at {size:?}: {name}'s label {rect:?} lies over {them}'s arrow");
            }
        }
        // Hovering an arrow's middle shows its transition's name and conditions in full (the
        // details panel lists the name once already).
        h.hover_at(canvas.left_top() + egui::vec2(8.0, 8.0));
        h.run_steps(2);
        for &k in &labelled {
            let name = m.transitions[k].label();
            let before = h.query_all_by_label_contains(&name).count();
            let (a, b) = machine_report(&h).arrows[k];
            h.hover_at(a + (b - a) * 0.5);
            h.run_steps(40);
            let tip: Vec<String> = h
                .query_all_by_label_contains(&name)
                .filter_map(|n| n.accesskit_node().value().or(n.accesskit_node().label()))
                .filter(|t| t.contains('\n'))
                .collect();
            assert_eq!(tip.len(), 1, "at {size:?}: one hover text names {name} ({before} before): {tip:?}");
            let t = &m.transitions[k];
            for c in &t.conditions {
                assert!(
                    tip[0].contains(&c.parameter),
                    "at {size:?}: {name}'s hover text {tip:?} names {}",
                    c.parameter
                );
            }
            h.hover_at(canvas.left_top() + egui::vec2(8.0, 8.0));
            h.run_steps(2);
        }
    }
}
