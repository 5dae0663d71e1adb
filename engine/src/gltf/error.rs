//! Import errors and warnings. Every fault names the file and the glTF object at fault
//! ([`Location`]); [`ImportError::Invalid`] carries every fault found, so `marrow check` can list
//! them all at once.

use std::fmt;
use std::path::PathBuf;

/// The glTF object a fault or warning is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// The file as a whole (container, JSON, asset).
    File,
    /// `buffers[i]`.
    Buffer(usize),
    /// `bufferViews[i]`.
    BufferView(usize),
    /// `accessors[i]`.
    Accessor(usize),
    /// `nodes[i]`.
    Node(usize),
    /// `meshes[mesh].primitives[primitive]`.
    Primitive {
        /// Mesh index.
        mesh: usize,
        /// Primitive index.
        primitive: usize,
    },
    /// `meshes[i]`.
    Mesh(usize),
    /// `skins[i]`.
    Skin(usize),
    /// `scenes[i]`.
    Scene(usize),
    /// `materials[i]`.
    Material(usize),
    /// `images[i]`.
    Image(usize),
    /// `animations[i]`.
    Animation(usize),
    /// `animations[animation].channels[channel]`.
    AnimationChannel {
        /// Animation index.
        animation: usize,
        /// Channel index.
        channel: usize,
    },
    /// `animations[animation].samplers[sampler]`.
    AnimationSampler {
        /// Animation index.
        animation: usize,
        /// Sampler index.
        sampler: usize,
    },
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::File => f.write_str("file"),
            Location::Buffer(i) => write!(f, "buffer {i}"),
            Location::BufferView(i) => write!(f, "bufferView {i}"),
            Location::Accessor(i) => write!(f, "accessor {i}"),
            Location::Node(i) => write!(f, "node {i}"),
            Location::Primitive { mesh, primitive } => write!(f, "mesh {mesh} primitive {primitive}"),
            Location::Mesh(i) => write!(f, "mesh {i}"),
            Location::Skin(i) => write!(f, "skin {i}"),
            Location::Scene(i) => write!(f, "scene {i}"),
            Location::Material(i) => write!(f, "material {i}"),
            Location::Image(i) => write!(f, "image {i}"),
            Location::Animation(i) => write!(f, "animation {i}"),
            Location::AnimationChannel { animation, channel } => {
                write!(f, "animation {animation} channel {channel}")
            }
            Location::AnimationSampler { animation, sampler } => {
                write!(f, "animation {animation} sampler {sampler}")
            }
        }
    }
}

/// One problem found in a file: where, and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The object at fault.
    pub at: Location,
    /// What is wrong, in words.
    pub message: String,
}

impl Fault {
    /// A fault at `at`.
    pub fn new(at: Location, message: impl Into<String>) -> Self {
        Self { at, message: message.into() }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.at, self.message)
    }
}

/// Something the importer changed or dropped while keeping the file usable (for example more
/// than four joint influences reduced to four). Same shape as a [`Fault`].
pub type Warning = Fault;

/// Why a file could not be imported.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The file (or a buffer it names) could not be read.
    #[error("{file}: cannot read {what}: {source}")]
    Io {
        /// The glTF file.
        file: PathBuf,
        /// What was being read (the file itself or `buffer N (uri)`).
        what: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The binary container is malformed (wrong magic, truncated, bad chunk).
    #[error("{file}: not a valid .glb: {reason}")]
    Glb {
        /// The file.
        file: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The JSON does not parse or does not match the glTF schema.
    #[error("{file}: invalid glTF JSON: {message}")]
    Json {
        /// The file.
        file: PathBuf,
        /// The parser's message (with line and column).
        message: String,
    },
    /// The file parses but its content is wrong; every fault found is listed.
    #[error("{file}: {} fault(s):{}", faults.len(), list(faults))]
    Invalid {
        /// The file.
        file: PathBuf,
        /// Every fault, each naming the object at fault.
        faults: Vec<Fault>,
    },
}

fn list(faults: &[Fault]) -> String {
    faults.iter().map(|f| format!("\n  {f}")).collect()
}

impl ImportError {
    /// The faults this error carries: all of them for [`ImportError::Invalid`], otherwise one
    /// fault at [`Location::File`] (or the buffer) describing the error.
    pub fn faults(&self) -> Vec<Fault> {
        match self {
            ImportError::Invalid { faults, .. } => faults.clone(),
            ImportError::Io { what, source, .. } => {
                vec![Fault::new(Location::File, format!("cannot read {what}: {source}"))]
            }
            ImportError::Glb { reason, .. } => {
                vec![Fault::new(Location::File, format!("not a valid .glb: {reason}"))]
            }
            ImportError::Json { message, .. } => {
                vec![Fault::new(Location::File, format!("invalid JSON: {message}"))]
            }
        }
    }

    /// The file the error is about.
    pub fn file(&self) -> &std::path::Path {
        match self {
            ImportError::Io { file, .. }
            | ImportError::Glb { file, .. }
            | ImportError::Json { file, .. }
            | ImportError::Invalid { file, .. } => file,
        }
    }
}
