/**
 * The suites run as vitest child processes, on the adapter chosen (the environment carries the
 * Vulkan driver choice): one vitest over every file of the suites that count whole files (vitest
 * spreads the files over the cores), and beside it, at the same time, one over the golden files
 * with the webgpu test-name filter (a filter applies to a whole run).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runChild } from "./child.js";
import type { Suite } from "./suites.js";
import { countSuite, type SuiteCounts, suitePassed, type VitestJson } from "./vitest-results.js";

export interface SuiteResult extends SuiteCounts {
  name: string;
  what: string;
  files: number;
  ok: boolean;
  /** Wall-clock of the vitest run that held it (shared by the suites of one run). */
  seconds: number;
  log: string;
}

async function vitestRun(
  root: string,
  suites: readonly Suite[],
  opts: { env: NodeJS.ProcessEnv; outDir: string; tag: string; timeoutMs: number },
): Promise<SuiteResult[]> {
  const files = suites.flatMap((s) => s.files);
  const pattern = suites[0]?.testNamePattern;
  const json = join(opts.outDir, `vitest-${opts.tag}.json`);
  const log = join(opts.outDir, `vitest-${opts.tag}.log`);
  const args = [
    "exec",
    "vitest",
    "run",
    ...files,
    "--reporter=default",
    "--reporter=json",
    `--outputFile.json=${json}`,
    ...(pattern ? ["-t", pattern] : []),
  ];
  const r = await runChild("pnpm", args, {
    cwd: root,
    env: opts.env,
    log,
    timeoutMs: opts.timeoutMs,
  });
  let report: VitestJson | null = null;
  try {
    report = JSON.parse(readFileSync(json, "utf8")) as VitestJson;
  } catch {
    report = null;
  }
  return suites.map((s) => {
    const counts: SuiteCounts = report
      ? countSuite(report, root, s.files, s.testNamePattern)
      : {
          passed: 0,
          failed: 1,
          skipped: 0,
          failures: [
            r.timedOut
              ? `vitest did not finish within ${opts.timeoutMs / 60_000} min`
              : `vitest wrote no report (exit ${r.code}); see ${log}`,
          ],
        };
    return {
      name: s.name,
      what: s.what,
      files: s.files.length,
      ...counts,
      ok: suitePassed(counts) && !r.timedOut,
      seconds: r.seconds,
      log,
    };
  });
}

/** Run `suites` (the golden one beside the others) and count each. */
export async function runSuites(
  root: string,
  suites: readonly Suite[],
  opts: { env: NodeJS.ProcessEnv; outDir: string; timeoutMs: number },
): Promise<SuiteResult[]> {
  const filtered = suites.filter((s) => s.testNamePattern && s.files.length > 0);
  const whole = suites.filter((s) => !s.testNamePattern && s.files.length > 0);
  const empty = suites.filter((s) => s.files.length === 0);
  const runs = await Promise.all([
    whole.length > 0 ? vitestRun(root, whole, { ...opts, tag: "suites" }) : [],
    ...filtered.map((s) => vitestRun(root, [s], { ...opts, tag: s.name })),
  ]);
  const byName = new Map(runs.flat().map((r) => [r.name, r]));
  for (const s of empty)
    byName.set(s.name, {
      name: s.name,
      what: s.what,
      files: 0,
      passed: 0,
      failed: 1,
      skipped: 0,
      failures: ["no test files found"],
      ok: false,
      seconds: 0,
      log: "",
    });
  return suites.map((s) => byName.get(s.name)!);
}
