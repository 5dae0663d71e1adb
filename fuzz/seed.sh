#!/usr/bin/env bash
# Fills fuzz/corpus/<target>/ with seeds from the repository's samples (the corpus folders are
# not committed; libFuzzer adds what it finds to them). Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p fuzz/corpus/gltf_import fuzz/corpus/bvh_import fuzz/corpus/gltf_structured fuzz/corpus/project_files fuzz/corpus/graph_compile fuzz/corpus/cooked_clip
# glTF: every sample that carries its data inside (GLB or data: URIs); CesiumMan's texture makes
# it too large to mutate quickly, so it is left out.
for f in assets/gltf/*/*.glb assets/gltf/*/*.gltf; do
  case "$f" in *CesiumMan*) continue ;; esac
  cp "$f" "fuzz/corpus/gltf_import/seed-$(basename "$f")"
done
# BVH: the repository has no capture file; the regression inputs (sound and hostile) seed it.
cp fuzz/regressions/bvh_import/*.bvh fuzz/corpus/bvh_import/
# Projects: the first byte picks the file of the locomotion sample that the rest replaces, in
# the order of oracle::locomotion_files.
i=0
for f in project.ron assets/runner.skeleton.ron clips/stride.clip.ron clips/idle.clip.ron \
  clips/sprint.clip.ron graphs/locomotion.graph.ron scenes/main.scene.ron; do
  { printf "\\x$(printf %02x $i)"; cat "projects/locomotion/$f"; } >"fuzz/corpus/project_files/seed-$i"
  i=$((i + 1))
done
# Graphs: the sample graph, and the same graph file from the sample project's history forms.
cp projects/locomotion/graphs/locomotion.graph.ron fuzz/corpus/graph_compile/seed-locomotion
# Structured glTF: the generator reads its choices from any bytes, so its seeds are varied
# bytes: the first KiB of each glTF sample (the first byte's low bit picks a valid or a hostile
# document).
for f in assets/gltf/*/*.glb assets/gltf/*/*.gltf; do
  head -c 1024 "$f" >"fuzz/corpus/gltf_structured/seed-$(basename "$f")"
done
# Cooked clips: the regression files (a sound one and damaged ones).
cp fuzz/regressions/cooked_clip/*.clip.bin fuzz/corpus/cooked_clip/
