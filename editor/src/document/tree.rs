//! Addressing entities inside an authored [`SceneDesc`] by path (`Root/Child/Grandchild`): find,
//! take out, put back. Paths are names joined by `/`; names are unique among siblings and
//! contain no `/` (the scene file format guarantees both).
//!
//! Not here: runtime entities (see `marrow_engine::scene::World`), which the editor never
//! addresses by index.

use marrow_engine::scene::{EntityDesc, SceneDesc};

/// The parent path of `path` (`None` at the root).
pub fn parent_path(path: &str) -> Option<&str> {
    path.rsplit_once('/').map(|(p, _)| p)
}

/// The last name of `path`.
pub fn leaf_name(path: &str) -> &str {
    path.rsplit_once('/').map_or(path, |(_, n)| n)
}

/// `parent/name` (or `name` at the root).
pub fn join(parent: Option<&str>, name: &str) -> String {
    match parent {
        Some(p) => format!("{p}/{name}"),
        None => name.to_owned(),
    }
}

/// The list of siblings `path` would live in (the roots, or its parent's children).
fn siblings<'a>(scene: &'a SceneDesc, parent: Option<&str>) -> Option<&'a Vec<EntityDesc>> {
    match parent {
        None => Some(&scene.entities),
        Some(p) => find(scene, p).map(|e| &e.children),
    }
}

fn siblings_mut<'a>(scene: &'a mut SceneDesc, parent: Option<&str>) -> Option<&'a mut Vec<EntityDesc>> {
    match parent {
        None => Some(&mut scene.entities),
        Some(p) => find_mut(scene, p).map(|e| &mut e.children),
    }
}

/// The entity at `path`.
pub fn find<'a>(scene: &'a SceneDesc, path: &str) -> Option<&'a EntityDesc> {
    scene.entity(path)
}

/// The entity at `path`, mutably.
pub fn find_mut<'a>(scene: &'a mut SceneDesc, path: &str) -> Option<&'a mut EntityDesc> {
    let mut parts = path.split('/');
    let first = parts.next()?;
    let mut at = scene.entities.iter_mut().find(|e| e.name == first)?;
    for part in parts {
        at = at.children.iter_mut().find(|e| e.name == part)?;
    }
    Some(at)
}

/// Removes the entity at `path` with its subtree; returns it and the index it had among its
/// siblings.
pub fn take(scene: &mut SceneDesc, path: &str) -> Option<(EntityDesc, usize)> {
    let name = leaf_name(path);
    let list = siblings_mut(scene, parent_path(path))?;
    let i = list.iter().position(|e| e.name == name)?;
    Some((list.remove(i), i))
}

/// Inserts `entity` under `parent` (the root when `None`) at `index` (clamped; `None`: last).
/// Refuses a name another sibling has.
pub fn insert(
    scene: &mut SceneDesc,
    parent: Option<&str>,
    index: Option<usize>,
    entity: EntityDesc,
) -> Result<(), String> {
    let list = siblings_mut(scene, parent).ok_or_else(|| format!("no entity {:?}", parent.unwrap_or("")))?;
    if list.iter().any(|e| e.name == entity.name) {
        return Err(format!(
            "another entity {} already has the name {:?}",
            parent.map_or("at the root".to_owned(), |p| format!("under {p}")),
            entity.name
        ));
    }
    let i = index.unwrap_or(list.len()).min(list.len());
    list.insert(i, entity);
    Ok(())
}

/// Whether `name` is free among the children of `parent` (ignoring `except`).
pub fn name_free(scene: &SceneDesc, parent: Option<&str>, name: &str, except: Option<&str>) -> bool {
    siblings(scene, parent)
        .is_none_or(|list| !list.iter().any(|e| e.name == name && Some(e.name.as_str()) != except))
}

/// A name like `base` that no child of `parent` has (`base`, `base 2`, `base 3`, ...).
pub fn unique_name(scene: &SceneDesc, parent: Option<&str>, base: &str) -> String {
    if name_free(scene, parent, base, None) {
        return base.to_owned();
    }
    (2..).map(|n| format!("{base} {n}")).find(|c| name_free(scene, parent, c, None)).unwrap_or_default()
}

/// Every entity path in depth-first order (parents before children).
pub fn all_paths(scene: &SceneDesc) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack: Vec<(&EntityDesc, String)> =
        scene.entities.iter().rev().map(|e| (e, e.name.clone())).collect();
    while let Some((e, p)) = stack.pop() {
        for c in e.children.iter().rev() {
            stack.push((c, format!("{p}/{}", c.name)));
        }
        out.push(p);
    }
    out
}

/// Whether `path` is `ancestor` or lies below it.
pub fn is_within(path: &str, ancestor: &str) -> bool {
    path == ancestor || path.strip_prefix(ancestor).is_some_and(|rest| rest.starts_with('/'))
}

/// A valid entity name: non-empty, no `/`, no leading or trailing spaces.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("an entity name cannot be empty".to_owned());
    }
    if name.contains('/') {
        return Err(format!("an entity name cannot contain '/': {name:?}"));
    }
    if name.trim() != name {
        return Err(format!("an entity name cannot start or end with spaces: {name:?}"));
    }
    Ok(())
}

/// The path of the rig (an entity with an Animator) at `path` or the nearest above it.
pub fn rig_at_or_above(scene: &SceneDesc, path: &str) -> Option<String> {
    let mut p = Some(path.to_owned());
    while let Some(x) = p {
        if find(scene, &x).is_some_and(|e| e.animator.is_some()) {
            return Some(x);
        }
        p = parent_path(&x).map(str::to_owned);
    }
    None
}

/// Every rig entity's path in the scene, parents before children.
pub fn rigs(scene: &SceneDesc) -> Vec<String> {
    all_paths(scene).into_iter().filter(|p| find(scene, p).is_some_and(|e| e.animator.is_some())).collect()
}

/// The rig the transport and the timeline act on when nothing else says: the rig at or above
/// the selected path, else the scene's first rig.
pub fn active_rig(scene: &SceneDesc, selected: Option<&str>) -> Option<String> {
    selected.and_then(|p| rig_at_or_above(scene, p)).or_else(|| rigs(scene).into_iter().next())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(name: &str, children: Vec<EntityDesc>) -> EntityDesc {
        EntityDesc { name: name.into(), children, ..Default::default() }
    }

    fn scene() -> SceneDesc {
        SceneDesc {
            name: "s".into(),
            entities: vec![e("A", vec![e("B", vec![e("C", vec![])]), e("D", vec![])]), e("E", vec![])],
        }
    }

    #[test]
    fn find_take_insert_round_trip() {
        let mut s = scene();
        assert_eq!(find(&s, "A/B/C").map(|e| e.name.as_str()), Some("C"));
        assert!(find(&s, "A/C").is_none());
        let (b, i) = take(&mut s, "A/B").expect("A/B exists");
        assert_eq!(i, 0);
        assert!(find(&s, "A/B/C").is_none());
        insert(&mut s, Some("A"), Some(0), b).expect("free name");
        assert_eq!(s, scene());
        assert!(insert(&mut s, None, None, e("E", vec![])).is_err());
    }

    #[test]
    fn paths_are_depth_first() {
        assert_eq!(all_paths(&scene()), ["A", "A/B", "A/B/C", "A/D", "E"]);
        assert!(is_within("A/B/C", "A/B") && !is_within("A/BC", "A/B") && is_within("A", "A"));
        assert_eq!(unique_name(&scene(), None, "A"), "A 2");
    }
}
