#!/bin/sh
# looplm @VERSION@ (commit @COMMIT@), offline bundle: runs the bundled Node.js on the bundled CLI.
# `looplm bench ...` runs the benchmarks; anything else is the looplm command line.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
# The Vulkan loader: the system's where it has one, else the bundle's (the loader is found by the
# dynamic linker, which reads LD_LIBRARY_PATH only when a process starts, hence here).
# LOOPLM_BUNDLED_VULKAN=force takes the bundle's in any case (the bundle's test does).
has_loader=no
if command -v ldconfig >/dev/null 2>&1 && ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1 '; then
  has_loader=yes
fi
for d in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu /usr/lib64 /lib64 /usr/local/lib; do
  [ -e "$d/libvulkan.so.1" ] && has_loader=yes
done
if [ "$has_loader" = no ] || [ "${LOOPLM_BUNDLED_VULKAN:-}" = force ]; then
  LD_LIBRARY_PATH="$here/lib/vulkan${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  LOOPLM_BUNDLED_VULKAN_LOADER="$here/lib/vulkan/libvulkan.so.1"
  export LD_LIBRARY_PATH LOOPLM_BUNDLED_VULKAN_LOADER
fi
LOOPLM_GOLDEN_DIR=${LOOPLM_GOLDEN_DIR:-$here/golden}
LOOPLM_COMMIT=${LOOPLM_COMMIT:-@COMMIT@}
export LOOPLM_GOLDEN_DIR LOOPLM_COMMIT
if [ "${1:-}" = bench ]; then
  shift
  exec "$here/node/bin/node" "$here/lib/js/bench.js" "$@"
fi
exec "$here/node/bin/node" "$here/lib/js/main.js" "$@"
