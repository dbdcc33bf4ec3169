/*
 * `looplm reproduce --jobs N`: the (arm, seed) sweeps of a study trained N at a time, each in its
 * own `looplm sweep` child process (the command docs/results.md prints for it) with the
 * machine's threads split between them (LOOPLM_THREADS). A sweep's numbers do not depend on its
 * thread count, so the study that then reads the finished folders back (`--resume`) prints what a
 * one-job run prints.
 */
import { spawn } from "node:child_process";
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { ChildrenInterrupted } from "../interrupt.js";
import { armArgs, armSeedDir } from "./arm-inputs.js";
import { armFolderMode, waitForSharedSweep } from "./shared-arm.js";
import type { ArmDef, StudyDef } from "./study-types.js";

// `pnpm looplm` moves the process to the user's folder (INIT_CWD) after this module loads; the
// children must start where the launcher did, so `--import tsx` still resolves (as `worker`).
const launchDir = process.cwd();

/** How to start the CLI: a program and the arguments before the command's own. */
export interface CliLauncher {
  exec: string;
  args: string[];
}

/** This process's own CLI: the same Node, loader flags and entry script. */
export function selfLauncher(): CliLauncher {
  return { exec: process.execPath, args: [...process.execArgv, process.argv[1]!] };
}

export interface ParallelOptions {
  outDir: string;
  /** The seeds to train (those without a finished seed's record). */
  seeds: readonly number[];
  jobs: number;
  resume: boolean;
  overwrite?: boolean;
  /** Threads in all (default: the machine's); each child gets ⌊threads / jobs⌋, at least 1. */
  threads?: number;
  launcher?: CliLauncher;
  /** Arguments every child sweep gets (e.g. --backend). */
  childArgs?: string[];
  /**
   * SIGINT/SIGTERM: passed on to every running child as SIGTERM (each finishes its step and
   * checkpoints, as `looplm sweep` does); no further sweep starts.
   */
  signal?: AbortSignal;
  log?: (line: string) => void;
  /**
   * Called once every sweep of a seed has finished (even when another seed's has failed), before
   * the remaining sweeps go on: where the study keeps that seed's record at once.
   */
  onSeedDone?: (seed: number) => Promise<void>;
}

interface Unit {
  seed: number;
  arm: ArmDef;
  /** Its sweep folder. */
  dir: string;
  args: string[];
}

function runUnit(
  u: Unit,
  launcher: CliLauncher,
  threads: number,
  log: (l: string) => void,
  signal?: AbortSignal,
) {
  const tag = `[${u.arm.id} seed ${u.seed}]`;
  const child = spawn(launcher.exec, [...launcher.args, ...u.args], {
    stdio: ["ignore", "pipe", "pipe"],
    cwd: launchDir,
    env: { ...process.env, LOOPLM_THREADS: String(threads) },
  });
  const stop = () => child.kill("SIGTERM");
  signal?.addEventListener("abort", stop, { once: true });
  child.on("close", () => signal?.removeEventListener("abort", stop));
  const tail: string[] = [];
  for (const stream of [child.stdout, child.stderr])
    createInterface({ input: stream }).on("line", (l) => {
      tail.push(l);
      if (tail.length > 20) tail.shift();
      log(`${tag} ${l}`);
    });
  return new Promise<void>((ok, fail) => {
    child.on("error", fail);
    child.on("close", (code, signal) => {
      if (code === 0) ok();
      else
        fail(
          new Error(
            `${tag} looplm ${u.args.join(" ")} ${signal ? `was killed by ${signal}` : `exited with code ${code}`}:\n${tail.join("\n")}`,
          ),
        );
    });
  });
}

/** Train every (arm, seed) sweep of `def`, `jobs` at a time; rejects with the first failure. */
export async function trainArmsInParallel(def: StudyDef, o: ParallelOptions): Promise<void> {
  const launcher = o.launcher ?? selfLauncher();
  const log = o.log ?? (() => {});
  const threads = Math.max(1, Math.floor((o.threads ?? availableParallelism()) / o.jobs));
  const outDir = resolve(o.outDir);
  const flags = (arm: ArmDef) => {
    const mode = armFolderMode(arm, o);
    return [
      ...(mode.resume ? ["--resume"] : []),
      ...(mode.overwrite ? ["--overwrite"] : []),
      ...(o.childArgs ?? []),
    ];
  };
  const units: Unit[] = [];
  for (const seed of o.seeds)
    for (const arm of def.arms)
      units.push({
        seed,
        arm,
        dir: armSeedDir(outDir, arm, seed),
        args: [...armArgs(arm, seed, outDir), ...flags(arm)],
      });
  log(`${def.name}: ${units.length} sweeps, ${o.jobs} at a time, ${threads} thread(s) each`);
  let next = 0;
  let failed: Error | null = null;
  let stopped = 0;
  // sweeps of each seed still to finish
  const left = new Map(o.seeds.map((s) => [s, def.arms.length]));
  const lane = async () => {
    while (next < units.length && !failed && !o.signal?.aborted) {
      const u = units[next++]!;
      try {
        await waitForSharedSweep(def, u.arm, u.dir, { signal: o.signal, log });
        await runUnit(u, launcher, threads, log, o.signal);
        const n = left.get(u.seed)! - 1;
        left.set(u.seed, n);
        if (n === 0) await o.onSeedDone?.(u.seed);
      } catch (e) {
        if (o.signal?.aborted) stopped++;
        else failed ??= e as Error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(o.jobs, units.length) }, lane));
  if (failed) throw failed;
  if (o.signal?.aborted) throw new ChildrenInterrupted(stopped);
}
