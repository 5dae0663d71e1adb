#!/usr/bin/env bash
# Runs one fuzz target for a while (default 30 minutes) with the limits the harness promises:
# an input that takes over 1 s is a hang, an allocation over 256 MB a finding. Crashes, hangs and
# out-of-memory inputs are kept going past (fork mode) and saved under fuzz/artifacts/TARGET/;
# each one becomes a file in fuzz/regressions/TARGET/ that `cargo test` replays.
#
#   bash fuzz/run.sh gltf_import|bvh_import|gltf_structured|project_files|graph_compile|cooked_clip [SECONDS]
#
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
set -euo pipefail
cd "$(dirname "$0")"
target=${1:?usage: fuzz/run.sh TARGET [SECONDS]}
seconds=${2:-1800}
bash seed.sh
cargo +nightly fuzz run "$target" "corpus/$target" -- \
  -max_total_time="$seconds" -timeout=1 -malloc_limit_mb=256 -rss_limit_mb=2048 -max_len=65536 \
  -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 -print_final_stats=1
