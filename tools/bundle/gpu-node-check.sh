#!/usr/bin/env bash
# The GPU node's check, prepared: unpack the offline bundle (dist/bundle/looplm-*-linux-x64.tar.xz,
# built beforehand with `pnpm bundle` and carried to the node), then run
#   looplm check --backend webgpu --budget 7m --gpu-features f16,subgroups,subgroup-matrix
# from it with no Node.js or npm needed, and leave report.md and report.json in $OUT/check (with
# nvidia-smi's and the driver's own lines beside them). Exits with the check's status. The
# budget leaves a minute of the 8 for unpacking and the native kernels' first compile; the
# reports are rewritten after every case, so even a check cut short leaves what it found.
# From a session with a GPU machine: `pnpm bundle` here, then run
#   bash tools/bundle/gpu-node-check.sh
# there with dist/bundle carried along (the bundle is about 33 MiB) and $OUT brought back.
set -uo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
out="${OUT:-$repo/gpu-node-check}"
mkdir -p "$out"
bundle="$(ls "$repo"/dist/bundle/looplm-*-linux-x64.tar.xz 2>/dev/null | head -1)"
if [ -z "$bundle" ]; then
  echo "gpu-node-check: no dist/bundle/looplm-*-linux-x64.tar.xz (run pnpm bundle first)" >&2
  exit 1
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tar -C "$work" -xJf "$bundle"
{
  date -u
  uname -a
  cat /proc/driver/nvidia/version 2>/dev/null
  nvidia-smi 2>/dev/null
  ls /usr/local/nvidia/share/vulkan/icd.d /usr/share/vulkan/icd.d /etc/vulkan/icd.d 2>/dev/null
} >"$out/machine.txt" 2>&1
# (a clean environment: the check must find the driver itself)
env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME="$work/home" \
  ${NVIDIA_VISIBLE_DEVICES:+NVIDIA_VISIBLE_DEVICES=$NVIDIA_VISIBLE_DEVICES} \
  timeout 470 "$work/looplm-bundle/bin/looplm" check --backend webgpu --budget 7m \
  --gpu-features f16,subgroups,subgroup-matrix --out "$out/check" 2>&1 | tee "$out/check.log"
status=${PIPESTATUS[0]}
echo "gpu-node-check: exit $status; report in $out/check/report.md"
exit "$status"
