// Build workspace packages in parallel where their dependencies allow: a package's build starts
// once every workspace package it depends on (dependencies and peers; a dev dependency serves
// only its tests, which the build does not compile) has built, at most
// `concurrency` at a time; each start and end is one line, and a failed build prints its output.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** A package to build: its name, folder and the names of the packages its build reads. */
export interface BuildItem {
  name: string;
  dir: string;
  needs: string[];
}

/** The packages among `pkgs` each one's build needs (its dependencies and peers among them). */
export function buildItems(pkgs: readonly { name: string; dir: string }[]): BuildItem[] {
  const names = new Set(pkgs.map((p) => p.name));
  return pkgs.map((p) => {
    const m = JSON.parse(readFileSync(join(p.dir, "package.json"), "utf8")) as Record<
      string,
      Record<string, string> | undefined
    >;
    const deps = ["dependencies", "peerDependencies"].flatMap((k) => Object.keys(m[k] ?? {}));
    return { name: p.name, dir: p.dir, needs: [...new Set(deps)].filter((d) => names.has(d)) };
  });
}

/** How one build runs (`pnpm run build` in its folder); resolves to its exit code and output. */
export type Runner = (item: BuildItem) => Promise<{ code: number; output: string }>;

const pnpmBuild: Runner = (item) =>
  new Promise((resolve) => {
    const child = spawn("pnpm", ["run", "build"], {
      cwd: item.dir,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    child.on("error", (e) => resolve({ code: 1, output: `${output}${e.message}\n` }));
    child.on("close", (code) => resolve({ code: code ?? 1, output }));
  });

/**
 * Build `items` (dependencies first, independent ones at once, at most `concurrency` together),
 * saying each start and end through `log`; rejects naming the first build that failed, with its
 * output, after the builds already running have ended.
 */
export async function buildInParallel(
  items: readonly BuildItem[],
  concurrency: number,
  log: (line: string) => void,
  run: Runner = pnpmBuild,
): Promise<void> {
  const known = new Set(items.map((i) => i.name));
  for (const i of items)
    for (const n of i.needs)
      if (!known.has(n)) throw new Error(`${i.name} needs ${n}, which is not being built`);
  const done = new Set<string>();
  const waiting = [...items];
  const running = new Map<string, Promise<void>>();
  let failure: Error | null = null;
  const t0 = performance.now();
  const seconds = () => ((performance.now() - t0) / 1000).toFixed(1);
  while (waiting.length > 0 || running.size > 0) {
    if (failure === null)
      for (const item of waiting.filter((i) => i.needs.every((n) => done.has(n)))) {
        if (running.size >= concurrency) break;
        waiting.splice(waiting.indexOf(item), 1);
        log(
          `building ${item.name} (${done.size + running.size + 1}/${items.length}) · ${seconds()} s`,
        );
        const started = performance.now();
        running.set(
          item.name,
          run(item).then(({ code, output }) => {
            running.delete(item.name);
            if (code !== 0) {
              failure ??= new Error(
                `the build of ${item.name} failed (exit ${code}):\n${output.trimEnd()}`,
              );
              return;
            }
            done.add(item.name);
            log(
              `built ${item.name} in ${((performance.now() - started) / 1000).toFixed(1)} s (${done.size}/${items.length} done)`,
            );
          }),
        );
      }
    if (running.size === 0) {
      if (failure) break;
      if (waiting.length > 0)
        throw new Error(`a dependency cycle among ${waiting.map((i) => i.name).join(", ")}`);
      break;
    }
    await Promise.race(running.values());
  }
  if (failure) throw failure;
}
