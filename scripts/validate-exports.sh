#!/usr/bin/env bash
# Exports every sample model through `marrow export` and validates the GLB files with the Khronos
# glTF-Validator (npm package gltf-validator, installed into a temporary folder). Fails on any
# validator error; warnings are printed (the samples' own, such as a skinned mesh node below
# another node, come through unchanged). Without npm (or the npm registry) it says so loudly and
# skips.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v npm >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
  echo "SKIPPED: glTF export validation needs node and npm, which this machine lacks" >&2
  exit 0
fi
work="$(mktemp -d)"
if ! npm install --prefix "$work" --silent --no-audit --no-fund gltf-validator >/dev/null 2>&1; then
  echo "SKIPPED: glTF export validation: npm could not install gltf-validator" >&2
  exit 0
fi
cargo build --quiet
files=()
for m in assets/gltf/*/*.glb assets/gltf/*/*.gltf; do
  out="$work/$(basename "${m%.*}").glb"
  "${CARGO_TARGET_DIR:-target}/debug/marrow" export "$m" --out "$out" >/dev/null
  files+=("$out")
done
NODE_PATH="$work/node_modules" node scripts/validate-exports.js "${files[@]}"
