//! Whether the Timeline's playhead is a time of the clip it shows, and the line that says what
//! the rig plays when it is not (a graph, another clip, a retarget preview) with Show This Clip
//! (scrubbing the ruler does the same, as Unity's Animation window previews the clip it scrubs):
//! the rig then plays the shown clip in place of its own (a session clip preview, never saved),
//! and keys, pastes and markers at the playhead land in that clip's time. Until then nothing is
//! written at the playhead: it is a graph's time (unbounded: keys there would stretch a one
//! second loop to thirteen), or another clip's.
//!
//! Not here: the preview itself (`crate::session`), what plays (`crate::posing::live_clip`).

use super::Target;
use crate::command::Command;
use crate::cx::Cx;
use crate::document::tree;
use crate::posing::live_clip;

/// Whether the rig of `target` plays the clip `target` shows, a file or one inside an imported
/// model (its playhead is that clip's).
pub(super) fn is_live(cx: &Cx, target: &Target) -> bool {
    match (&target.rig, target.path.as_ref().or(target.clip_ref.as_ref())) {
        (Some(rig), Some(shown)) => live_clip(cx, rig).as_ref() == Some(shown),
        _ => false,
    }
}

/// What the rig at `rig` plays now, as the line names it.
fn playing(cx: &Cx, rig: &str) -> String {
    if let Some(p) = cx.session.clip_preview().filter(|p| p.rig == rig) {
        return p.label.clone();
    }
    if let Some(p) = cx.session.preview().filter(|p| p.rig == rig) {
        return format!("{} (graph preview)", p.graph);
    }
    let animator = cx.scene().and_then(|(_, s)| tree::find(s, rig)).and_then(|x| x.animator.clone());
    let graph_plays = cx
        .session
        .entity(rig)
        .and_then(|e| cx.session.world().animator(e))
        .is_some_and(|a| a.current_graph().is_some());
    match animator {
        Some(a) if graph_plays => a.graph.unwrap_or_else(|| "a graph".to_owned()),
        Some(a) => a.clip.unwrap_or_else(|| "no clip".to_owned()),
        None => "nothing".to_owned(),
    }
}

/// The line under the toolbar: what the rig plays when it is not the shown clip, with Show This
/// Clip; while the rig shows it in place of its own, Back.
pub(super) fn notice(ui: &mut egui::Ui, cx: &mut Cx, target: &Target, live: bool) {
    let (Some(rig), Some(path)) = (&target.rig, &target.path) else { return };
    let shown_here =
        cx.session.clip_preview().is_some_and(|p| p.rig == *rig && p.source.as_ref() == Some(path));
    if live && !shown_here {
        return;
    }
    ui.horizontal_wrapped(|ui| {
        if shown_here {
            ui.weak(format!("{rig} plays this clip in place of its own (not saved)."));
            if ui
                .button("Back to Scene")
                .on_hover_text("The rig plays what its scene gives it again")
                .clicked()
            {
                cx.send(Command::PreviewClip(None));
            }
            return;
        }
        let what = playing(cx, rig);
        ui.label(format!("{rig} plays {what}: the playhead is not this clip's, so nothing is keyed at it."));
        let can = !cx.session.library().clips(path).is_empty();
        let show = ui
            .add_enabled(can, egui::Button::new("Show This Clip"))
            .on_hover_text("Play this clip on the rig in place of its own, to scrub and key it (scrubbing the ruler does too)");
        if show.clicked() {
            show_clip(cx, rig, path);
        }
    });
}

/// Asks for the clip at `path` to play on the rig at `rig` in place of its own (a session clip
/// preview following the clip's edits), unless it already does or the library has no such clip.
pub(super) fn show_clip(cx: &mut Cx, rig: &str, path: &str) {
    if cx.session.clip_preview().is_some_and(|p| p.rig == rig && p.source.as_deref() == Some(path)) {
        return;
    }
    let Some(clip) = cx.session.library().clips(path).first().cloned() else { return };
    cx.send(Command::PreviewClip(Some(crate::session::ClipPreview {
        rig: rig.to_owned(),
        clip,
        label: path.to_owned(),
        error: None,
        beside: None,
        source: Some(path.to_owned()),
    })));
}
