/**
 * The one build every package shares (each package's tsup.config.ts names only its entry
 * points): ES modules for Node 20 and browsers, declarations, source maps, a clean dist.
 */
import { defineConfig, type Options } from "tsup";

export function packageBuild(entry: string[], extra: Options = {}) {
  return defineConfig({
    entry,
    format: ["esm"],
    dts: true,
    clean: true,
    sourcemap: true,
    target: "node20",
    ...extra,
  });
}
