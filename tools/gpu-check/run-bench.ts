/**
 * `pnpm bench <names> --backend webgpu` as a child process, alone on the machine (after the
 * suites, so nothing else competes with its timings), read back by bench-output.ts.
 */
import { join } from "node:path";
import { type BenchOutput, parseBenchOutput } from "./bench-output.js";
import { runChild } from "./child.js";

export interface BenchRun {
  command: string;
  ok: boolean;
  /** What went wrong, one line each. */
  failures: string[];
  seconds: number;
  log: string;
  output: BenchOutput;
}

export async function runBench(
  root: string,
  opts: {
    names: string[];
    quick: boolean;
    threads: number;
    gpuPeakGflops?: number;
    env: NodeJS.ProcessEnv;
    outDir: string;
    timeoutMs: number;
    /** The adapter the check chose: the bench must have run on it. */
    adapter: string;
  },
): Promise<BenchRun> {
  const args = [
    "--silent",
    "bench",
    ...opts.names,
    "--backend",
    "webgpu",
    `--threads=${opts.threads}`,
    ...(opts.quick ? ["--quick"] : []),
    ...(opts.gpuPeakGflops !== undefined ? [`--gpu-peak-gflops=${opts.gpuPeakGflops}`] : []),
  ];
  const log = join(opts.outDir, "bench.log");
  const r = await runChild("pnpm", args, {
    cwd: root,
    env: opts.env,
    log,
    timeoutMs: opts.timeoutMs,
  });
  const output = parseBenchOutput(r.output);
  const failures: string[] = [];
  if (r.timedOut) failures.push(`the bench did not finish within ${opts.timeoutMs / 60_000} min`);
  else if (r.code !== 0) failures.push(`the bench exited with ${r.code ?? "a signal"}; see ${log}`);
  for (const b of output.failed) failures.push(`benchmark ${b} failed; see ${log}`);
  if (output.adapter !== null && output.adapter !== opts.adapter)
    failures.push(
      `the bench ran on "${output.adapter}", not on the adapter checked, "${opts.adapter}"`,
    );
  if (output.adapter === null && !r.timedOut)
    failures.push(`the bench printed no adapter line; see ${log}`);
  for (const n of opts.names)
    if (!r.timedOut && !output.failed.includes(n) && !(n in output.tookS))
      failures.push(`benchmark ${n} did not finish; see ${log}`);
  return {
    command: `pnpm ${args.join(" ")}`,
    ok: failures.length === 0,
    failures,
    seconds: r.seconds,
    log,
    output,
  };
}
