//! The humanoid profile: 22 roles (hips, a spine chain of up to three bones, neck, head, and
//! each limb's shoulder, upper, lower, end and toe bones), as Unity's Humanoid and Godot's
//! `SkeletonProfileHumanoid` define them, found in a skeleton by its bone names and its shape.
//!
//! Names are read through the usual schemes: a namespace before `:` (Mixamo's `mixamorig:`)
//! and Blender's `.001` suffix are dropped; `DEF-`/`ORG-`/`MCH-` (Rigify), `Bip01` and similar
//! prefix words are dropped; a side is a whole `L`/`R`/`Left`/`Right` word (`hand_l`,
//! `upper_arm.L`, `Bip01 L Hand`), a `Left`/`Right` prefix or suffix (`LeftArm`, `armRight`), or
//! a one-letter prefix (`LThumb`, CMU's `lhumerus`). Limbs are found from their ends (hand or
//! wrist, foot or ankle) walking up the parents, so twist and roll bones between named bones are
//! skipped and CMU's `LeftShoulder` (an upper arm) and Mixamo's `LeftShoulder` (a clavicle) both
//! land where they belong; the hips are the bone the legs branch from, the spine chain is the
//! path from the hips to where the arms branch, the neck the first bone above that.
//!
//! Not here: fingers, eyes, jaw (no role), and any guess by geometry alone for a rig whose
//! bones carry no recognisable names.

use crate::skeleton::Skeleton;

/// A bone's role in the humanoid profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)]
pub enum HumanoidRole {
    Hips,
    Spine,
    Chest,
    UpperChest,
    Neck,
    Head,
    LeftShoulder,
    LeftUpperArm,
    LeftLowerArm,
    LeftHand,
    RightShoulder,
    RightUpperArm,
    RightLowerArm,
    RightHand,
    LeftUpperLeg,
    LeftLowerLeg,
    LeftFoot,
    LeftToes,
    RightUpperLeg,
    RightLowerLeg,
    RightFoot,
    RightToes,
}

/// How many roles the profile has.
pub const ROLE_COUNT: usize = 22;

impl HumanoidRole {
    /// Every role, in profile order (the order of the enum).
    pub const ALL: [HumanoidRole; ROLE_COUNT] = [
        Self::Hips,
        Self::Spine,
        Self::Chest,
        Self::UpperChest,
        Self::Neck,
        Self::Head,
        Self::LeftShoulder,
        Self::LeftUpperArm,
        Self::LeftLowerArm,
        Self::LeftHand,
        Self::RightShoulder,
        Self::RightUpperArm,
        Self::RightLowerArm,
        Self::RightHand,
        Self::LeftUpperLeg,
        Self::LeftLowerLeg,
        Self::LeftFoot,
        Self::LeftToes,
        Self::RightUpperLeg,
        Self::RightLowerLeg,
        Self::RightFoot,
        Self::RightToes,
    ];

    /// The role's name as the editor shows it (`LeftUpperArm`).
    pub fn name(self) -> &'static str {
        const NAMES: [&str; ROLE_COUNT] = [
            "Hips",
            "Spine",
            "Chest",
            "UpperChest",
            "Neck",
            "Head",
            "LeftShoulder",
            "LeftUpperArm",
            "LeftLowerArm",
            "LeftHand",
            "RightShoulder",
            "RightUpperArm",
            "RightLowerArm",
            "RightHand",
            "LeftUpperLeg",
            "LeftLowerLeg",
            "LeftFoot",
            "LeftToes",
            "RightUpperLeg",
            "RightLowerLeg",
            "RightFoot",
            "RightToes",
        ];
        NAMES[self as usize]
    }

    /// Whether a humanoid needs the role for its motion to transfer (Unity's required set: hips,
    /// spine, head, and each limb's upper, lower and end bones).
    pub fn is_required(self) -> bool {
        !matches!(
            self,
            Self::Chest
                | Self::UpperChest
                | Self::Neck
                | Self::LeftShoulder
                | Self::RightShoulder
                | Self::LeftToes
                | Self::RightToes
        )
    }
}

/// The bone of each role found in one skeleton ([`find_humanoid`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HumanoidBones {
    bones: [Option<usize>; ROLE_COUNT],
}

impl HumanoidBones {
    /// The bone holding `role`, if one was found.
    pub fn get(&self, role: HumanoidRole) -> Option<usize> {
        self.bones[role as usize]
    }

    /// The role a bone holds, if any.
    pub fn role_of(&self, bone: usize) -> Option<HumanoidRole> {
        HumanoidRole::ALL.into_iter().find(|r| self.get(*r) == Some(bone))
    }

    /// The required roles no bone was found for.
    pub fn missing_required(&self) -> Vec<HumanoidRole> {
        HumanoidRole::ALL.into_iter().filter(|r| r.is_required() && self.get(*r).is_none()).collect()
    }

    pub(crate) fn set(&mut self, role: HumanoidRole, bone: Option<usize>) {
        self.bones[role as usize] = bone;
    }
}

/// Which side of the body a bone's name puts it on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Left,
    Right,
    Center,
}

/// A bone name read through the naming schemes: its side and the rest, lowercase letters and
/// digits only (`mixamorig:LeftForeArm` is `(Left, "forearm")`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct BoneName {
    side: Side,
    base: String,
}

/// Words that say nothing of a bone's role (rig prefixes).
const NOISE_WORDS: [&str; 9] = ["def", "org", "mch", "mixamorig", "bip01", "bip001", "bip", "cc", "base"];

fn parse_name(name: &str) -> BoneName {
    let mut s = name.rsplit(':').next().unwrap_or(name);
    if let Some((head, tail)) = s.rsplit_once('.')
        && !tail.is_empty()
        && tail.bytes().all(|b| b.is_ascii_digit())
    {
        s = head;
    }
    let mut side = Side::Center;
    let mut words: Vec<&str> = Vec::new();
    for word in s.split(['_', '.', '-', ' ']).filter(|w| !w.is_empty()) {
        match word.to_ascii_lowercase().as_str() {
            "l" | "left" => side = Side::Left,
            "r" | "right" => side = Side::Right,
            w if NOISE_WORDS.contains(&w) => {}
            _ => words.push(word),
        }
    }
    let mut base: String =
        words.concat().chars().filter(char::is_ascii_alphanumeric).map(|c| c.to_ascii_lowercase()).collect();
    if side == Side::Center {
        for (word, s) in [("left", Side::Left), ("right", Side::Right)] {
            if let Some(rest) = base.strip_prefix(word).or_else(|| base.strip_suffix(word))
                && !rest.is_empty()
            {
                base = rest.to_owned();
                side = s;
                break;
            }
        }
    }
    if side == Side::Center
        && let Some(first) = words.first().map(|w| w.as_bytes())
        && first.len() > 1
    {
        let letter = match first[0] {
            b'L' | b'l' => Some(Side::Left),
            b'R' | b'r' => Some(Side::Right),
            _ => None,
        };
        let rest = &base[1..];
        if let Some(s) = letter
            && (first[1].is_ascii_uppercase() && first[0].is_ascii_uppercase() || is_known_limb_word(rest))
        {
            base = rest.to_owned();
            side = s;
        }
    }
    BoneName { side, base }
}

fn is_known_limb_word(base: &str) -> bool {
    is_hand(base)
        || is_lower_arm(base)
        || is_upper_arm(base)
        || is_shoulder(base)
        || is_foot(base)
        || is_lower_leg(base)
        || is_upper_leg(base)
        || is_toes(base)
}

fn is_hand(b: &str) -> bool {
    matches!(b, "hand" | "wrist")
}
fn is_lower_arm(b: &str) -> bool {
    matches!(b, "forearm" | "lowerarm" | "armlower" | "elbow" | "radius" | "lowarm" | "loarm")
}
fn is_upper_arm(b: &str) -> bool {
    matches!(b, "upperarm" | "armupper" | "arm" | "uparm" | "humerus")
}
fn is_shoulder(b: &str) -> bool {
    matches!(b, "shoulder" | "clavicle" | "collar" | "clav")
}
fn is_foot(b: &str) -> bool {
    matches!(b, "foot" | "ankle")
}
fn is_lower_leg(b: &str) -> bool {
    matches!(b, "leg" | "lowerleg" | "leglower" | "shin" | "calf" | "knee" | "tibia" | "lowleg")
}
fn is_upper_leg(b: &str) -> bool {
    matches!(b, "upleg" | "upperleg" | "legupper" | "thigh" | "femur" | "hip")
}
fn is_toes(b: &str) -> bool {
    b.starts_with("toe") || b == "ball"
}
fn is_head(b: &str) -> bool {
    b == "head"
}
fn is_hips(b: &str) -> bool {
    matches!(b, "hips" | "hip" | "pelvis")
}

/// Depth of every bone (roots 0).
fn depths(skeleton: &Skeleton) -> Vec<usize> {
    let mut d = vec![0usize; skeleton.bone_count()];
    for i in 0..d.len() {
        if let Some(p) = skeleton.parent(i) {
            d[i] = d[p] + 1;
        }
    }
    d
}

/// The lowest common ancestor (or self) of `a` and `b`.
fn common_ancestor(skeleton: &Skeleton, depth: &[usize], mut a: usize, mut b: usize) -> Option<usize> {
    while a != b {
        if depth[a] >= depth[b] {
            a = skeleton.parent(a)?;
        } else {
            b = skeleton.parent(b)?;
        }
    }
    Some(a)
}

/// The bones from `ancestor` (excluded) down to `bone` (included); empty when `bone` is not
/// below `ancestor`.
fn path_below(skeleton: &Skeleton, ancestor: usize, bone: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut at = bone;
    while at != ancestor {
        out.push(at);
        match skeleton.parent(at) {
            Some(p) => at = p,
            None => return Vec::new(),
        }
    }
    out.reverse();
    out
}

struct Finder<'a> {
    skeleton: &'a Skeleton,
    names: Vec<BoneName>,
    depth: Vec<usize>,
}

impl Finder<'_> {
    /// The shallowest bone on `side` whose name passes `test`.
    fn shallowest(&self, side: Side, test: fn(&str) -> bool) -> Option<usize> {
        (0..self.names.len())
            .filter(|&i| self.names[i].side == side && test(&self.names[i].base))
            .min_by_key(|&i| (self.depth[i], i))
    }

    /// The limb bone above `from`: the topmost of the run of ancestors right above it whose
    /// names pass `test` (so twist segments named like it are skipped), or its parent when the
    /// parent's name does not pass.
    fn up_chain(&self, from: usize, test: fn(&str) -> bool) -> Option<usize> {
        let parent = self.skeleton.parent(from)?;
        if !test(&self.names[parent].base) {
            return Some(parent);
        }
        let mut top = parent;
        while let Some(p) = self.skeleton.parent(top)
            && test(&self.names[p].base)
        {
            top = p;
        }
        Some(top)
    }

    /// A limb from its end: `[root, upper, lower, end, toe]` roles' bones. A limb with no end
    /// bone (a rig whose legs stop at the shins) is found from its lower bone instead.
    fn limb(&self, side: Side, tests: LimbNames) -> [Option<usize>; 5] {
        let end = self.shallowest(side, tests.end);
        let low = match end {
            Some(e) => self.up_chain(e, tests.lower),
            None => self.shallowest(side, tests.lower),
        };
        let Some(low) = low else { return [None; 5] };
        let up = self.up_chain(low, tests.upper);
        let top = up.and_then(|u| self.skeleton.parent(u)).filter(|&p| (tests.root)(&self.names[p].base));
        let tip = end.and_then(|e| {
            (e + 1..self.names.len())
                .find(|&i| self.skeleton.parent(i) == Some(e) && (tests.toe)(&self.names[i].base))
        });
        [top, up, Some(low), end, tip]
    }
}

/// The name tests of one limb kind: its end, lower, upper, root (shoulder) and toe bones.
#[derive(Clone, Copy)]
struct LimbNames {
    end: fn(&str) -> bool,
    lower: fn(&str) -> bool,
    upper: fn(&str) -> bool,
    root: fn(&str) -> bool,
    toe: fn(&str) -> bool,
}

const ARM: LimbNames =
    LimbNames { end: is_hand, lower: is_lower_arm, upper: is_upper_arm, root: is_shoulder, toe: never };
const LEG: LimbNames =
    LimbNames { end: is_foot, lower: is_lower_leg, upper: is_upper_leg, root: never, toe: is_toes };

fn never(_: &str) -> bool {
    false
}

/// Finds the humanoid roles in `skeleton` (see the module docs for how).
pub fn find_humanoid(skeleton: &Skeleton) -> HumanoidBones {
    use HumanoidRole as R;
    let f = Finder {
        skeleton,
        names: skeleton.bone_names.iter().map(|n| parse_name(n)).collect(),
        depth: depths(skeleton),
    };
    let mut out = HumanoidBones::default();
    let arms = [Side::Left, Side::Right].map(|s| f.limb(s, ARM));
    let legs = [Side::Left, Side::Right].map(|s| f.limb(s, LEG));
    let arm_roles = [
        [R::LeftShoulder, R::LeftUpperArm, R::LeftLowerArm, R::LeftHand],
        [R::RightShoulder, R::RightUpperArm, R::RightLowerArm, R::RightHand],
    ];
    let leg_roles = [
        [R::LeftUpperLeg, R::LeftLowerLeg, R::LeftFoot, R::LeftToes],
        [R::RightUpperLeg, R::RightLowerLeg, R::RightFoot, R::RightToes],
    ];
    for side in 0..2 {
        for (k, role) in arm_roles[side].into_iter().enumerate() {
            out.set(role, arms[side][k]);
        }
        for (k, role) in leg_roles[side].into_iter().enumerate() {
            out.set(role, legs[side][k + 1]);
        }
    }
    let pair = |a: Option<usize>, b: Option<usize>| match (a, b) {
        (Some(a), Some(b)) => common_ancestor(skeleton, &f.depth, a, b),
        _ => None,
    };
    let hips = f.shallowest(Side::Center, is_hips).or_else(|| pair(legs[0][1], legs[1][1]));
    out.set(R::Hips, hips);
    let Some(hips) = hips else { return out };
    let arms_branch = pair(arms[0][1], arms[1][1]).filter(|&c| c != hips && skeleton.is_in_subtree(hips, c));
    let head = f
        .shallowest(Side::Center, is_head)
        .filter(|&h| skeleton.is_in_subtree(hips, h))
        .or_else(|| arms_branch.and_then(|c| head_above(skeleton, c, [arms[0][1], arms[1][1]])));
    out.set(R::Head, head);
    let chest_top = arms_branch.or_else(|| head.and_then(|h| skeleton.parent(h)).filter(|&p| p != hips));
    if let Some(top) = chest_top {
        let spine = path_below(skeleton, hips, top);
        out.set(R::Spine, spine.first().copied());
        if spine.len() >= 2 {
            out.set(R::Chest, Some(spine[1]));
        }
        if spine.len() >= 3 {
            out.set(R::UpperChest, spine.last().copied());
        }
        if let Some(h) = head {
            let neck = path_below(skeleton, top, h);
            out.set(R::Neck, neck.first().copied().filter(|&n| n != h));
        }
    }
    out
}

/// The head of a rig whose head bone has no recognisable name: from where the arms branch, the
/// child that leads to neither arm, followed down its first children to the end.
fn head_above(skeleton: &Skeleton, branch: usize, arms: [Option<usize>; 2]) -> Option<usize> {
    let on_arm = |c: usize| arms.iter().flatten().any(|&a| skeleton.is_in_subtree(c, a));
    let mut at =
        (branch + 1..skeleton.bone_count()).find(|&i| skeleton.parent(i) == Some(branch) && !on_arm(i))?;
    while let Some(child) = (at + 1..skeleton.bone_count()).find(|&i| skeleton.parent(i) == Some(at)) {
        at = child;
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_through_each_scheme() {
        let cases = [
            ("mixamorig:LeftForeArm", Side::Left, "forearm"),
            ("mixamorig:RightUpLeg", Side::Right, "upleg"),
            ("DEF-upper_arm.L.001", Side::Left, "upperarm"),
            ("DEF-thigh.R", Side::Right, "thigh"),
            ("upperarm_l", Side::Left, "upperarm"),
            ("calf_r", Side::Right, "calf"),
            ("spine_01", Side::Center, "spine01"),
            ("Bip01 L Hand", Side::Left, "hand"),
            ("LThumb", Side::Left, "thumb"),
            ("lhumerus", Side::Left, "humerus"),
            ("rhand", Side::Right, "hand"),
            ("lowerback", Side::Center, "lowerback"),
            ("LowerBack", Side::Center, "lowerback"),
            ("armLeft", Side::Left, "arm"),
            ("Hips", Side::Center, "hips"),
        ];
        for (name, side, base) in cases {
            assert_eq!(parse_name(name), BoneName { side, base: base.to_owned() }, "{name}");
        }
    }
}
