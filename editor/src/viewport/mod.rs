//! The viewport's parts: the orbit camera, what F frames (`framing`), the transform gizmo (drawn with egui's painter
//! through the camera), and the GPU side (the engine renderer living in egui-wgpu's callback
//! resources, drawn through a paint callback that shares eframe's device).
//!
//! Not here: the panel that lays them out and turns input into commands
//! (`crate::panels::viewport`).

pub mod camera;
pub mod framing;
pub mod gizmo;
pub mod gpu;
