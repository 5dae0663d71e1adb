//! Reading the container and the binary data: `.gltf` JSON or `.glb`, buffers (the GLB `BIN`
//! chunk, base64 data URIs, files beside the glTF), and accessors (every component type,
//! normalized integers, strides, matrix column padding, sparse substitution), all bounds-checked.
//!
//! Nothing here interprets what the data means; see `import.rs`.

use std::path::Path;

use super::error::{Fault, ImportError, Location};
use super::json::{Accessor, Root};

const GLB_MAGIC: u32 = 0x4654_6C67;
const CHUNK_JSON: u32 = 0x4E4F_534A;
const CHUNK_BIN: u32 = 0x004E_4942;

/// The parsed JSON and the GLB binary chunk, if any.
pub(crate) struct Container {
    pub root: Root,
    pub bin: Option<Vec<u8>>,
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Parses `.glb` or `.gltf` bytes (sniffed by the magic, not the extension).
pub(crate) fn parse_container(file: &Path, bytes: &[u8]) -> Result<Container, ImportError> {
    let glb_err = |reason: String| ImportError::Glb { file: file.to_owned(), reason };
    let is_glb_name = file.extension().is_some_and(|e| e.eq_ignore_ascii_case("glb"));
    let magic = u32_at(bytes, 0);
    let (json, bin) = if magic == Some(GLB_MAGIC) || is_glb_name {
        if bytes.len() < 12 {
            return Err(glb_err(format!("file is {} bytes, shorter than the 12-byte header", bytes.len())));
        }
        if magic != Some(GLB_MAGIC) {
            let m = &bytes[..4];
            return Err(glb_err(format!("wrong magic {m:02x?}, expected \"glTF\" (67 6c 54 46)")));
        }
        let version = u32_at(bytes, 4).unwrap_or(0);
        if version != 2 {
            return Err(glb_err(format!("container version {version}, only version 2 is supported")));
        }
        let length = u32_at(bytes, 8).unwrap_or(0) as usize;
        if length > bytes.len() {
            return Err(glb_err(format!(
                "truncated: header says {length} bytes, the file has {}",
                bytes.len()
            )));
        }
        let data = &bytes[..length];
        let mut at = 12usize;
        let mut json: Option<&[u8]> = None;
        let mut bin: Option<Vec<u8>> = None;
        let mut index = 0;
        while at < data.len() {
            let (Some(len), Some(kind)) = (u32_at(data, at), u32_at(data, at + 4)) else {
                return Err(glb_err(format!("truncated chunk header at byte {at}")));
            };
            let start = at + 8;
            let Some(chunk) = start.checked_add(len as usize).and_then(|end| data.get(start..end)) else {
                return Err(glb_err(format!(
                    "truncated: chunk {index} at byte {at} claims {len} bytes, only {} remain",
                    data.len().saturating_sub(start)
                )));
            };
            match (index, kind) {
                (0, CHUNK_JSON) => json = Some(chunk),
                (0, _) => return Err(glb_err(format!("first chunk has type {kind:#010x}, expected JSON"))),
                (1, CHUNK_BIN) => bin = Some(chunk.to_vec()),
                _ => {} // unknown chunks are skipped, as the specification requires
            }
            at = start + len as usize;
            at = at.div_ceil(4) * 4;
            index += 1;
        }
        let Some(json) = json else { return Err(glb_err("no JSON chunk".into())) };
        (json, bin)
    } else {
        (bytes, None)
    };
    let root: Root = serde_json::from_slice(json)
        .map_err(|e| ImportError::Json { file: file.to_owned(), message: e.to_string() })?;
    Ok(Container { root, bin })
}

/// Decodes standard base64 (with or without padding); `None` on a bad character.
pub(crate) fn decode_base64(text: &str) -> Option<Vec<u8>> {
    fn val(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32)
    }
    let bytes: Vec<u8> = text.bytes().filter(|c| !c.is_ascii_whitespace()).collect();
    let trimmed = bytes.strip_suffix(b"==").or_else(|| bytes.strip_suffix(b"=")).unwrap_or(&bytes);
    let mut out = Vec::with_capacity(trimmed.len() * 3 / 4);
    for chunk in trimmed.chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= val(c)? << (18 - 6 * i);
        }
        match chunk.len() {
            4 => out.extend_from_slice(&[(acc >> 16) as u8, (acc >> 8) as u8, acc as u8]),
            3 => out.extend_from_slice(&[(acc >> 16) as u8, (acc >> 8) as u8]),
            2 => out.push((acc >> 16) as u8),
            _ => return None,
        }
    }
    Some(out)
}

fn percent_decode(uri: &str) -> String {
    let b = uri.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = |c: u8| (c as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The most bytes an external image file may hold.
pub(crate) const MAX_IMAGE_BYTES: u64 = 256 << 20;

/// Reads at most `limit` bytes of the file a relative `uri` names (percent-decoded), which must
/// lie inside `base_dir`, the glTF file's folder: a URI that is absolute, names a scheme, climbs
/// out of the folder with `..` (or through a symbolic link), or names anything but a regular
/// file (a device, a FIFO, a socket) is refused, as is any file when there is no folder (a
/// glTF read from memory can use only data: URIs and the GLB chunk).
pub(crate) fn read_inside(base_dir: Option<&Path>, uri: &str, limit: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let rel = percent_decode(uri);
    let Some(base) = base_dir else {
        return Err(format!("names the file {rel:?}, but a glTF read from memory can only use data: URIs"));
    };
    let refuse = |why: &str| {
        Err(format!("names {rel:?}, {why}; a URI must name a file inside the glTF file's folder"))
    };
    let p = Path::new(&rel);
    if p.is_absolute() || rel.starts_with('/') || rel.starts_with('\\') || p.has_root() {
        return refuse("an absolute path");
    }
    if rel.split(['/', '\\']).next().is_some_and(|first| first.contains(':')) {
        return refuse("which has a scheme or drive");
    }
    let mut depth = 0i32;
    for part in rel.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => {
                depth -= 1;
                if depth < 0 {
                    return refuse("which climbs out of the folder");
                }
            }
            _ => depth += 1,
        }
    }
    let path = base.join(&rel);
    let real =
        path.canonicalize().map_err(|e| format!("cannot read {:?}: {e}", path.display().to_string()))?;
    let real_base = base
        .canonicalize()
        .map_err(|e| format!("cannot read the folder {:?}: {e}", base.display().to_string()))?;
    if !real.starts_with(&real_base) {
        return refuse("which leads out of the folder through a link");
    }
    let meta =
        std::fs::metadata(&real).map_err(|e| format!("cannot read {:?}: {e}", path.display().to_string()))?;
    if !meta.is_file() {
        return refuse("which is not a regular file");
    }
    let file = std::fs::File::open(&real)
        .map_err(|e| format!("cannot read {:?}: {e}", path.display().to_string()))?;
    let mut out = Vec::with_capacity(meta.len().min(limit) as usize);
    file.take(limit)
        .read_to_end(&mut out)
        .map_err(|e| format!("cannot read {:?}: {e}", path.display().to_string()))?;
    Ok(out)
}

/// Loads every buffer: `None` (with a fault recorded) where it cannot be read or is too short.
pub(crate) fn load_buffers(
    root: &Root,
    bin: Option<Vec<u8>>,
    base_dir: Option<&Path>,
    faults: &mut Vec<Fault>,
) -> Vec<Option<Vec<u8>>> {
    let mut bin = bin;
    let mut out = Vec::with_capacity(root.buffers.len());
    for (i, b) in root.buffers.iter().enumerate() {
        let at = Location::Buffer(i);
        let data = match &b.uri {
            None => {
                if i == 0 {
                    bin.take().or_else(|| {
                        faults.push(Fault::new(at.clone(), "has no uri and the file has no GLB BIN chunk"));
                        None
                    })
                } else {
                    faults
                        .push(Fault::new(at.clone(), "has no uri (only buffer 0 may use the GLB BIN chunk)"));
                    None
                }
            }
            Some(uri) if uri.starts_with("data:") => match uri.split_once(";base64,") {
                Some((_, payload)) => decode_base64(payload).or_else(|| {
                    faults.push(Fault::new(at.clone(), "data URI is not valid base64"));
                    None
                }),
                None => {
                    faults.push(Fault::new(at.clone(), "data URI is not base64-encoded"));
                    None
                }
            },
            Some(uri) => match read_inside(base_dir, uri, b.byte_length as u64) {
                Ok(d) => Some(d),
                Err(e) => {
                    faults.push(Fault::new(at.clone(), e));
                    None
                }
            },
        };
        let data = data.and_then(|d| {
            if d.len() < b.byte_length {
                faults.push(Fault::new(
                    at.clone(),
                    format!("holds {} bytes but byteLength is {}", d.len(), b.byte_length),
                ));
                None
            } else {
                Some(d)
            }
        });
        out.push(data);
    }
    out
}

/// Number of components of an accessor `type`.
pub(crate) fn component_count(kind: &str) -> Option<usize> {
    Some(match kind {
        "SCALAR" => 1,
        "VEC2" => 2,
        "VEC3" => 3,
        "VEC4" | "MAT2" => 4,
        "MAT3" => 9,
        "MAT4" => 16,
        _ => return None,
    })
}

fn component_size(ct: u32) -> Option<usize> {
    Some(match ct {
        5120 | 5121 => 1,
        5122 | 5123 => 2,
        5125 | 5126 => 4,
        _ => return None,
    })
}

fn decode(ct: u32, b: &[u8], normalized: bool) -> f64 {
    match ct {
        5120 => {
            let v = b[0] as i8 as f64;
            if normalized { (v / 127.0).max(-1.0) } else { v }
        }
        5121 => {
            let v = b[0] as f64;
            if normalized { v / 255.0 } else { v }
        }
        5122 => {
            let v = i16::from_le_bytes([b[0], b[1]]) as f64;
            if normalized { (v / 32767.0).max(-1.0) } else { v }
        }
        5123 => {
            let v = u16::from_le_bytes([b[0], b[1]]) as f64;
            if normalized { v / 65535.0 } else { v }
        }
        5125 => {
            let v = u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64;
            if normalized { v / 4294967295.0 } else { v }
        }
        _ => f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
    }
}

/// A decoded accessor: `count * components` values, element-major.
#[derive(Clone, Debug)]
pub(crate) struct Decoded {
    pub values: Vec<f64>,
    pub components: usize,
    pub count: usize,
    pub component_type: u32,
}

impl Decoded {
    pub fn to_f32(&self) -> Vec<f32> {
        self.values.iter().map(|&v| v as f32).collect()
    }
}

/// Reads glTF data: the JSON root plus loaded buffers.
pub(crate) struct Reader<'a> {
    pub root: &'a Root,
    pub buffers: &'a [Option<Vec<u8>>],
}

impl Reader<'_> {
    fn view_bytes(&self, view: usize, at: &Location) -> Result<&[u8], Fault> {
        let v = self.root.buffer_views.get(view).ok_or_else(|| {
            Fault::new(
                at.clone(),
                format!("names bufferView {view}, but the file has {}", self.root.buffer_views.len()),
            )
        })?;
        let buf = match self.buffers.get(v.buffer) {
            Some(Some(b)) => b,
            Some(None) => {
                return Err(Fault::new(
                    at.clone(),
                    format!("reads buffer {} which could not be loaded", v.buffer),
                ));
            }
            None => {
                return Err(Fault::new(
                    Location::BufferView(view),
                    format!("names buffer {}, but the file has {}", v.buffer, self.buffers.len()),
                ));
            }
        };
        v.byte_offset.checked_add(v.byte_length).and_then(|end| buf.get(v.byte_offset..end)).ok_or_else(
            || {
                Fault::new(
                    Location::BufferView(view),
                    format!(
                        "bytes {}..{} lie outside buffer {} ({} bytes)",
                        v.byte_offset,
                        v.byte_offset.saturating_add(v.byte_length),
                        v.buffer,
                        buf.len()
                    ),
                )
            },
        )
    }

    /// Decodes accessor `index`, checking every bound.
    pub fn read(&self, index: usize) -> Result<Decoded, Fault> {
        let at = Location::Accessor(index);
        let Some(acc) = self.root.accessors.get(index) else {
            return Err(Fault::new(
                at,
                format!("does not exist (the file has {} accessors)", self.root.accessors.len()),
            ));
        };
        self.read_accessor(index, acc)
    }

    fn read_accessor(&self, index: usize, acc: &Accessor) -> Result<Decoded, Fault> {
        let at = Location::Accessor(index);
        let n = component_count(&acc.kind)
            .ok_or_else(|| Fault::new(at.clone(), format!("unknown type {:?}", acc.kind)))?;
        let cs = component_size(acc.component_type)
            .ok_or_else(|| Fault::new(at.clone(), format!("unknown componentType {}", acc.component_type)))?;
        let cols = match acc.kind.as_str() {
            "MAT2" => 2,
            "MAT3" => 3,
            "MAT4" => 4,
            _ => 1,
        };
        let rows = n / cols;
        let col_bytes = if cols > 1 { (rows * cs).div_ceil(4) * 4 } else { rows * cs };
        let elem = col_bytes * cols;
        let count = acc.count;
        let mut values = Vec::new();
        match acc.buffer_view {
            Some(view) => {
                let bytes = self.view_bytes(view, &at)?;
                let stride = self.root.buffer_views.get(view).and_then(|v| v.byte_stride).unwrap_or(elem);
                if stride < elem {
                    return Err(Fault::new(
                        at,
                        format!(
                            "bufferView {view} has byteStride {stride}, smaller than the {elem}-byte element"
                        ),
                    ));
                }
                if count > 0 {
                    let end = stride
                        .checked_mul(count - 1)
                        .and_then(|x| x.checked_add(elem))
                        .and_then(|x| x.checked_add(acc.byte_offset));
                    match end {
                        Some(end) if end <= bytes.len() => {}
                        _ => {
                            return Err(Fault::new(
                                at,
                                format!(
                                    "out of bounds: {count} elements of {elem} bytes (stride {stride}) from byte {} need {} bytes, bufferView {view} holds {}",
                                    acc.byte_offset,
                                    end.map_or("too many".to_string(), |e| e.to_string()),
                                    bytes.len()
                                ),
                            ));
                        }
                    }
                }
                values.reserve(count * n);
                for e in 0..count {
                    let base = acc.byte_offset + e * stride;
                    for c in 0..cols {
                        for r in 0..rows {
                            let o = base + c * col_bytes + r * cs;
                            values.push(decode(acc.component_type, &bytes[o..o + cs], acc.normalized));
                        }
                    }
                }
            }
            None => {
                // No data behind it: every value is zero (or sparse). Cap the values it may
                // conjure, so a few bytes of JSON cannot ask for gigabytes.
                const MAX_VALUES: usize = 1 << 24;
                match count.checked_mul(n) {
                    Some(total) if total <= MAX_VALUES => values = vec![0.0; total],
                    _ => {
                        return Err(Fault::new(
                            at,
                            format!(
                                "count {count} of {n}-component elements with no bufferView is implausibly large (more than {MAX_VALUES} values)"
                            ),
                        ));
                    }
                }
            }
        }
        if let Some(sp) = &acc.sparse {
            if sp.count > count {
                return Err(Fault::new(at, format!("sparse count {} exceeds count {count}", sp.count)));
            }
            let is = component_size(sp.indices.component_type)
                .filter(|_| matches!(sp.indices.component_type, 5121 | 5123 | 5125))
                .ok_or_else(|| {
                    Fault::new(
                        at.clone(),
                        format!("sparse indices componentType {} is not unsigned", sp.indices.component_type),
                    )
                })?;
            let ib = self.view_bytes(sp.indices.buffer_view, &at)?;
            let vb = self.view_bytes(sp.values.buffer_view, &at)?;
            // Offsets and counts come from the file: overflow is out of bounds, never a wrap.
            let need_i = sp.count.checked_mul(is).and_then(|b| b.checked_add(sp.indices.byte_offset));
            let need_v = sp.count.checked_mul(elem).and_then(|b| b.checked_add(sp.values.byte_offset));
            let (Some(need_i), Some(need_v)) = (need_i, need_v) else {
                return Err(Fault::new(at, "out of bounds: sparse byteOffset + count overflows".to_owned()));
            };
            if need_i > ib.len() || need_v > vb.len() {
                return Err(Fault::new(
                    at,
                    format!(
                        "out of bounds: sparse data needs {need_i} index bytes and {need_v} value bytes, its bufferViews hold {} and {}",
                        ib.len(),
                        vb.len()
                    ),
                ));
            }
            for k in 0..sp.count {
                let o = sp.indices.byte_offset + k * is;
                let target = decode(sp.indices.component_type, &ib[o..o + is], false) as usize;
                if target >= count {
                    return Err(Fault::new(
                        at,
                        format!("sparse index {target} (entry {k}) is past count {count}"),
                    ));
                }
                let base = sp.values.byte_offset + k * elem;
                let mut i = target * n;
                for c in 0..cols {
                    for r in 0..rows {
                        let o = base + c * col_bytes + r * cs;
                        values[i] = decode(acc.component_type, &vb[o..o + cs], acc.normalized);
                        i += 1;
                    }
                }
            }
        }
        Ok(Decoded { values, components: n, count, component_type: acc.component_type })
    }
}
