/**
 * `pnpm bundle [--out DIR]`: write the offline bundle looplm-<version>-linux-x64.tar.xz
 * (build-bundle.ts) into DIR (default dist/bundle), and fail when it is over 48 MiB.
 */
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildBundle, MAX_BUNDLE_BYTES } from "./build-bundle.js";

const root = resolve(fileURLToPath(new URL(".", import.meta.url)), "../..");
const args = process.argv.slice(2).filter((a) => a !== "--");
const at = args.indexOf("--out");
const outDir = resolve(at >= 0 && args[at + 1] ? args[at + 1]! : join(root, "dist/bundle"));

function join(...parts: string[]): string {
  return resolve(...parts);
}

try {
  if (process.platform !== "linux" || process.arch !== "x64")
    throw new Error(
      `the bundle is built on linux-x64 (its Node.js is this machine's), not ${process.platform}-${process.arch}`,
    );
  const r = await buildBundle({ root, outDir, say: (l) => console.log(l) });
  const mib = (r.bytes / 2 ** 20).toFixed(1);
  if (r.bytes > MAX_BUNDLE_BYTES) throw new Error(`${r.path} is ${mib} MiB, over the 48 MiB limit`);
  console.log(`bundle: ${r.path} (${mib} MiB, looplm ${r.version}, commit ${r.commit})`);
} catch (e) {
  console.error(`bundle: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
}
