#!/usr/bin/env bash
# Exports every sample model and every sample project through `marrow export` (as .glb, and a few
# as .gltf with an external .bin, with baked and linear easing and compact skin types) and
# validates the files with the Khronos glTF-Validator (npm package gltf-validator, installed into
# a temporary folder). Fails on any validator error or warning. Without npm (or the npm registry)
# it says so loudly and skips.
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
marrow="${CARGO_TARGET_DIR:-target}/debug/marrow"
export_one() { # INPUT OUT [OPTIONS...]
  local input="$1" out="$2"
  shift 2
  "$marrow" export "$input" --out "$out" "$@" >/dev/null
  files+=("$out")
}
for m in assets/gltf/*/*.glb assets/gltf/*/*.gltf; do
  export_one "$m" "$work/$(basename "${m%.*}").glb"
done
export_one assets/gltf/CesiumMan/CesiumMan.glb "$work/CesiumMan-compact.gltf" --joints smallest --weights unorm8
export_one assets/gltf/RiggedFigure/RiggedFigure.glb "$work/RiggedFigure-u16.glb" --weights unorm16
for p in projects/*/; do
  name="$(basename "$p")"
  export_one "$p" "$work/project-$name.glb"
done
export_one projects/runner "$work/project-runner-linear.gltf" --linear-easing
export_one projects/locomotion "$work/project-locomotion-coarse.glb" --bake-rate 10 --bake-bound 0.001
NODE_PATH="$work/node_modules" node scripts/validate-exports.js "${files[@]}"
