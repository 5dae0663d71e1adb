//! The bespoke node editors of the details panel, one file per kind that has one: the kinds
//! whose settings the described constants and pickers cannot show (`blend_space`: the
//! BlendSpace1D axis, `blend_space_2d`: the BlendSpace2D plane, `mask`: the Mask's bone tree,
//! `adjust`: the Adjust list, `two_bone_ik`: the TwoBoneIk chain, pole and bend axis).
//!
//! Not here: the node bodies on the canvas and the details every kind shares (fault lines, input
//! pickers), which read the kinds' descriptions.

pub mod adjust;
pub mod blend_space;
pub mod blend_space_2d;
pub mod mask;
pub mod two_bone_ik;
