/*
 * What a command needs from the machine, declared by the command and set up by commander's
 * preAction hook before its action runs (so `--help` and parse errors start nothing).
 * Commands marked with `needsKernels` take `--backend` and run their kernels on it
 * (backend.ts: by default the native kernels, compiled from C on first use and then cached;
 * without a compiler they say so once and run on the portable ones); the started backend is a
 * value the action takes with `commandBackend(cmd)` and passes down. Those that train or
 * evaluate also split their large kernels over a worker-thread pool, one thread per core; every
 * other command stays single-threaded, where starting workers would cost more than it saves.
 * Those with a thread per core let a thread governor (@loop/tensor) move each training step to
 * one thread while that is faster (a busy machine) and back. LOOPLM_THREADS=n fixes the thread
 * count for any command instead (1 switches the pool off).
 */
import { availableParallelism } from "node:os";
import { installThreadGovernor, ThreadGovernor } from "@loop/tensor";
import { startThreadPool } from "@loop/tensor/node";
import { type Command, Option } from "commander";
import {
  BACKENDS,
  type Backend,
  backendHelp,
  type ComputeBackend,
  cpuBackendAsIs,
  parseBackend,
  startBackend,
} from "../backend.js";
import { CliError } from "./errors.js";

interface KernelNeeds {
  /** A thread per core (training, evaluation); otherwise one thread. */
  threads?: boolean;
  /** True when, with these options, the command's kernels run elsewhere (queue workers). */
  elsewhere?: (opts: Record<string, unknown>) => boolean;
}

/** The commands that run kernels, and what they need. */
const kernelCommands = new WeakMap<Command, KernelNeeds>();

/** The backend the set-up started for each command about to run (handed to its action). */
const started = new WeakMap<Command, ComputeBackend>();

/**
 * The backend the set-up started for `cmd` (a command marked with needsKernels, whose kernels run
 * here): the action takes it from here and passes it down. A program built without the set-up
 * (buildProgram alone, as the in-process tests run it) runs on the CPU kernels as they stand.
 */
export function commandBackend(cmd: Command): ComputeBackend {
  return started.get(cmd) ?? cpuBackendAsIs();
}

/** How `--help` lists the backends. */
export const BACKEND_OPTION_HELP = `compute backend: ${BACKENDS.map((b) => `${b} (${backendHelp(b)})`).join(", ")}; default: native when it builds, else portable`;

/**
 * Declare that `cmd` runs kernels: it takes `--backend`, and (unless `threads` is false) runs
 * a thread per core.
 */
export function needsKernels(cmd: Command, needs: KernelNeeds = {}): Command {
  kernelCommands.set(cmd, { threads: true, ...needs });
  return cmd
    .addOption(new Option("--backend <name>", BACKEND_OPTION_HELP).argParser(parseBackend))
    .option(
      "--verbose",
      "also print what native libraries say while the backend starts (Dawn's search for a GPU adapter)",
    );
}

/** Start `choice` (undefined: the best CPU backend), saying in one line when native is missing. */
export function useBackend(choice: Backend | undefined, verbose = false): Promise<ComputeBackend> {
  return startBackend(choice, (line) => process.stderr.write(`looplm: ${line}\n`), { verbose });
}

/** Seconds between two logged thread switches (a loaded machine can switch often). */
const SWITCH_LOG_SECONDS = 60;

/** The governor of the default thread count, logging its switches (at most one a minute). */
function governor(threads: number): ThreadGovernor {
  let lastLog = Number.NEGATIVE_INFINITY;
  return new ThreadGovernor({
    max: threads,
    onSwitch: (d) => {
      const now = performance.now();
      if (now - lastLog < SWITCH_LOG_SECONDS * 1000) return;
      lastLog = now;
      const n = (t: number) => `${t} thread${t > 1 ? "s" : ""}`;
      process.stderr.write(
        `looplm: training on ${n(d.to)}: ${d.probeMs.toFixed(0)} ms/step against ${d.currentMs.toFixed(0)} on ${n(d.from)} (the machine's load decides; LOOPLM_THREADS fixes the count)\n`,
      );
    },
  });
}

/**
 * Refuse more compute threads than the machine has cores: each is a worker with its own memory,
 * and past the cores they only take turns (LOOPLM_THREADS=100000 started a hundred threads and
 * grew memory ~130 MB/s before failing). `what` names where the count came from.
 */
export function checkThreadCount(n: number, what: string, cores = availableParallelism()): void {
  if (n > cores)
    throw new CliError(
      `${what} ${n} is more than this machine's ${cores} core${cores === 1 ? "" : "s"}: give at most ${cores} (or leave it out to use them all)`,
    );
}

async function setUp(cmd: Command): Promise<void> {
  const opts = cmd.opts();
  const found = kernelCommands.get(cmd);
  const kernels = found?.elsewhere?.(opts) ? undefined : found;
  const env = process.env.LOOPLM_THREADS;
  const threads = env ? Number(env) : kernels?.threads ? availableParallelism() : 1;
  if (!Number.isInteger(threads) || threads < 1)
    throw new Error(`LOOPLM_THREADS must be an integer ≥ 1, got "${env}"`);
  if (env) checkThreadCount(threads, "LOOPLM_THREADS");
  if (threads > 1) await startThreadPool(threads);
  installThreadGovernor(!env && threads > 1 ? governor(threads) : null);
  const o = opts as { backend?: Backend; verbose?: boolean };
  if (!kernels) return;
  const backend = await useBackend(o.backend, o.verbose === true);
  started.set(cmd, backend);
  // which Vulkan driver and loader the GPU runs on, in one line (never a silent emulation)
  if (backend.driver) process.stderr.write(`looplm: ${backend.driver}\n`);
}

/** Install the hook on the program: it runs for whichever subcommand's action is about to run. */
export function setUpComputeBeforeActions(program: Command): void {
  program.hook("preAction", (_program, actionCommand) => setUp(actionCommand));
}
