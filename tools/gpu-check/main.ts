/**
 * `pnpm gpu-check [--out DIR] [--allow-emulation] [--quick] …`: the one command that proves the
 * WebGPU backend on a machine. Phases: the adapters (refusing a CPU emulation unless allowed,
 * naming what is missing when there is none), the GPU correctness suites (vitest, as children),
 * the GPU benchmarks (`pnpm bench … --backend webgpu`, alone on the machine), and one report
 * (report.md + report.json, written atomically) in --out. Exit status 1 when anything failed.
 */
import { execFileSync } from "node:child_process";
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { makeDirectory, writeFileAtomic } from "@loop/tensor/node";
import { CommanderError } from "commander";
import {
  adapterName,
  distinctAdapters,
  FEATURES_OF_INTEREST,
  isEmulation,
} from "./adapter-info.js";
import { childEnv, stopChildren } from "./child.js";
import { readCpuInfo } from "./cpu-info.js";
import { type Diagnosis, diagnose } from "./diagnose.js";
import { type Options, parseOptions } from "./options.js";
import type { Probe } from "./probe.js";
import { BUDGET_S, benchSection, describeAdapter, type Report, renderMarkdown } from "./report.js";
import { type BenchRun, runBench } from "./run-bench.js";
import { runSuites, type SuiteResult } from "./run-suites.js";
import { chooseSuites, findSuites } from "./suites.js";
import { probeSystem, SWIFTSHADER_ICD } from "./system-probe.js";

const ROOT = resolve(fileURLToPath(new URL(".", import.meta.url)), "../..");

const say = (line: string) => console.log(line);

function commit(): string | null {
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      cwd: ROOT,
      encoding: "utf8",
    }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], {
      cwd: ROOT,
      encoding: "utf8",
    }).trim();
    return dirty ? `${head} (with uncommitted changes)` : head;
  } catch {
    return null;
  }
}

/** The adapters phase: the probe, and a second search on SwiftShader where allowed and needed. */
async function adapters(
  opts: Options,
): Promise<{ probe: Probe; diagnosis: Diagnosis; env: NodeJS.ProcessEnv }> {
  let env: NodeJS.ProcessEnv = process.env;
  let probe = await probeSystem(env);
  let diagnosis = diagnose(probe, opts);
  if (diagnosis.retryWithSwiftshader) {
    say(`  --allow-emulation: searching again with VK_ICD_FILENAMES=${SWIFTSHADER_ICD}`);
    const first = diagnosis.problems;
    env = { ...env, VK_ICD_FILENAMES: SWIFTSHADER_ICD };
    probe = await probeSystem(env);
    diagnosis = diagnose(probe, opts);
    diagnosis = {
      ...diagnosis,
      warnings: [...first.map((p) => `no GPU adapter: ${p}`), ...diagnosis.warnings],
    };
  }
  return { probe, diagnosis, env };
}

/**
 * VK_ICD_FILENAMES for the children: vitest.config.ts points an unset one at SwiftShader, so on a
 * GPU found through the loader's own folders it is set to those ICD files (SwiftShader's left
 * out); a caller's choice (or the SwiftShader retry) is kept as it is.
 */
function icdForChildren(env: NodeJS.ProcessEnv, probe: Probe): string | null {
  if (env.VK_ICD_FILENAMES || env.VK_DRIVER_FILES) return null;
  const files = probe.icdFiles.filter((f) => !/swiftshader/i.test(f));
  return files.length > 0 ? files.join(":") : null;
}

async function main(): Promise<number> {
  const now = new Date();
  const t0 = performance.now();
  const opts = parseOptions(
    process.argv.slice(2).filter((a) => a !== "--"),
    now,
  );
  // (a bad --files is found before anything runs)
  const chosen = chooseSuites(findSuites(ROOT), opts.suites, opts.files);
  const outDir = resolve(opts.out);
  // (makeDirectory: a recursive mkdirSync spins forever on paths such as /proc/x)
  try {
    makeDirectory(opts.out);
  } catch (e) {
    throw new Error(`--out: ${(e as Error).message}`);
  }
  const cpu = readCpuInfo();
  // the commit checked is the one at the start (the tree may move while the check runs)
  const head = commit();
  const phases: { name: string; seconds: number }[] = [];
  const phase = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    say(`\n== ${name}`);
    const r = await fn();
    const seconds = (performance.now() - t) / 1000;
    phases.push({ name, seconds });
    say(`   (${name}: ${seconds.toFixed(1)} s)`);
    return r;
  };
  say(`gpu-check: report in ${outDir}`);

  const { probe, diagnosis, env } = await phase("adapters", async () => {
    const r = await adapters(opts);
    for (const a of distinctAdapters(r.probe.listing.adapters))
      say(
        `  adapter (${a.requestedAs}): ${adapterName(a)}${isEmulation(a) ? " [CPU emulation]" : ""}; ` +
          FEATURES_OF_INTEREST.map((f) => `${f} ${a.features.includes(f) ? "yes" : "no"}`).join(
            ", ",
          ),
      );
    for (const e of r.probe.listing.enumerated) say(`  Dawn enumerates ${e}`);
    for (const w of r.diagnosis.warnings) say(`  warning: ${w}`);
    for (const p of r.diagnosis.problems) say(`  ${p}`);
    return r;
  });

  const vkIcd = icdForChildren(env, probe);
  const children = childEnv(env, vkIcd ? { VK_ICD_FILENAMES: vkIcd } : {});
  const timeoutMs = opts.timeoutMinutes * 60_000;
  let suites: SuiteResult[] = [];
  let bench: BenchRun | null = null;
  if (diagnosis.proceed && diagnosis.adapter) {
    if (chosen.length > 0)
      suites = await phase("correctness suites", async () => {
        const r = await runSuites(ROOT, chosen, { env: children, outDir, timeoutMs });
        for (const s of r)
          say(
            `  ${s.name}: ${s.ok ? "pass" : "FAIL"}: ${s.passed} passed, ${s.failed} failed, ${s.skipped} skipped (${s.files} files) — ${s.what}`,
          );
        for (const s of r) for (const f of s.failures.slice(0, 10)) say(`    ${s.name}: ${f}`);
        return r;
      });
    if (opts.bench.length > 0) {
      const emulated = diagnosis.verdict === "emulation";
      bench = await phase("benchmarks", async () => {
        const r = await runBench(ROOT, {
          names: opts.bench,
          quick: opts.quick || emulated,
          threads: opts.threads,
          gpuPeakGflops: opts.gpuPeakGflops,
          env: children,
          outDir,
          timeoutMs,
          adapter: adapterName(diagnosis.adapter!),
        });
        say(`  ${r.command}: ${r.ok ? "finished" : "FAILED"}`);
        const peak = r.output.gpuPeak;
        if (peak) say(`  GPU fp32 peak: ${peak.gflops} GFLOP/s (${peak.source})`);
        for (const t of r.output.tables) say(`  ${t.bench}: ${t.rows.length} row(s)`);
        for (const f of r.failures) say(`  ${f}`);
        return r;
      });
    }
  }

  cpu.loadAverage.end = loadavg()[0]!;
  const wallClockS = (performance.now() - t0) / 1000;
  const ok = diagnosis.proceed && suites.every((s) => s.ok) && (bench === null || bench.ok);
  const report: Report = {
    tool: "pnpm gpu-check",
    ok,
    startedAt: now.toISOString(),
    command: `pnpm gpu-check ${process.argv.slice(2).join(" ")}`.trim(),
    commit: head,
    verdict: diagnosis.verdict,
    problems: diagnosis.problems,
    warnings: diagnosis.warnings,
    adapter: diagnosis.adapter ? describeAdapter(diagnosis.adapter, probe.nvidia) : null,
    adapters: probe.listing.adapters.map((a) => ({
      name: adapterName(a),
      requestedAs: a.requestedAs,
      emulated: isEmulation(a),
    })),
    enumerated: probe.listing.enumerated,
    system: {
      vulkanLoader: probe.vulkanLoader,
      icdFiles: probe.icdFiles,
      icdOverride: probe.icdOverride,
      nvidia: probe.nvidia,
      nvidiaDriverCapabilities: probe.nvidiaDriverCapabilities,
      vkIcdFilenamesForChildren: vkIcd ?? children.VK_ICD_FILENAMES ?? null,
    },
    cpu,
    suites,
    bench: bench ? benchSection(bench) : null,
    phases,
    wallClockS,
    budgetS: BUDGET_S,
  };
  writeFileAtomic(join(outDir, "report.json"), `${JSON.stringify(report, null, 2)}\n`);
  writeFileAtomic(join(outDir, "report.md"), renderMarkdown(report));
  say(
    `\ngpu-check: ${ok ? "passed" : "FAILED"} in ${wallClockS.toFixed(1)} s; report: ${join(outDir, "report.md")} and report.json`,
  );
  if (wallClockS > BUDGET_S && diagnosis.verdict === "gpu")
    say(`gpu-check: over the ${BUDGET_S / 60}-minute budget of a GPU machine`);
  return ok ? 0 : 1;
}

for (const signal of ["SIGINT", "SIGTERM"] as const)
  process.on(signal, () => {
    stopChildren();
    process.exit(130);
  });

try {
  process.exitCode = await main();
} catch (e) {
  if (e instanceof CommanderError) process.exitCode = e.exitCode;
  else {
    // a bad argument or an unusable --out: one line, no stack trace
    console.error(`gpu-check: ${e instanceof Error ? e.message : String(e)}`);
    process.exitCode = 1;
  }
}
