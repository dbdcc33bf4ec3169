/**
 * `pnpm exec tsx tools/wasm/build-wasm.ts`: compile every packages/<pkg>/src/**\/*.wat to the
 * committed `.wasm.ts` beside it.
 * With `--check`, only report (exit code 1) when a generated file is missing or stale.
 */
import { readdir, readFile, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { compileWat, wasmModuleSource } from "./compile-wat.js";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** All .wat files under packages/<pkg>/src. */
export async function findWatFiles(): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.name.endsWith(".wat")) out.push(p);
    }
  };
  for (const pkg of await readdir(join(root, "packages"))) {
    await walk(join(root, "packages", pkg, "src")).catch(() => undefined);
  }
  return out.sort();
}

async function main(): Promise<void> {
  const check = process.argv.includes("--check");
  let stale = 0;
  for (const wat of await findWatFiles()) {
    const target = wat.replace(/\.wat$/, ".wasm.ts");
    const text = wasmModuleSource(wat, await compileWat(wat));
    const current = await readFile(target, "utf8").catch(() => "");
    const rel = relative(root, target);
    if (current === text) {
      console.log(`up to date  ${rel}`);
    } else if (check) {
      console.log(`STALE       ${rel}`);
      stale++;
    } else {
      await writeFile(target, text);
      console.log(`wrote       ${rel}`);
    }
  }
  if (stale > 0) process.exitCode = 1;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
