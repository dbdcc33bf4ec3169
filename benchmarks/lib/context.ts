/**
 * The object every benchmark's `run(ctx)` receives (contract in benchmarks/README.md).
 */
import { startThreadPool, stopThreadPool } from "@loop/tensor/node";
import { type Machine, machine, type Peak, peak } from "./machine.js";
import { formatTable, type Row } from "./table.js";
import { type TimeOptions, type Timing, time } from "./timer.js";
import { runTorch, torchAvailable } from "./torch.js";

export interface BenchContext {
  /** Time `fn` (sync or async): warmup runs, then repeats; use `medianMs`. */
  time(fn: () => unknown, opts?: TimeOptions): Promise<Timing>;
  /** Print rows as an aligned table, with an optional title line, and the CPU under it. */
  table(rows: readonly Row[], title?: string): void;
  /** Print a line of text. */
  log(text: string): void;
  /**
   * Run benchmarks/torch/<script> with /usr/bin/python3 (OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE
   * unset for it) and return the JSON it printed last, or null when PyTorch is unavailable.
   */
  torch(script: string, args?: readonly string[]): Promise<unknown | null>;
  /** Whether PyTorch is available (the same check `torch` makes). */
  torchAvailable(): Promise<boolean>;
  /** fp32 GFLOP/s peak of `threads` threads, measured on this machine (lib/machine.ts). */
  peak(threads: number): Promise<Peak>;
  /** CPU, cores, load average, -march of native builds. */
  readonly machine: Machine;
  readonly cores: number;
  /** Thread counts to measure (`--threads=1,2`; default 1 and all cores). */
  readonly threadCounts: readonly number[];
  /** Run kernels on n threads from now on (starts or stops the @loop/tensor pool). */
  setThreads(n: number): Promise<void>;
  /** Fewer repeats requested (`--quick`). */
  readonly quick: boolean;
}

export interface ContextOptions {
  threadCounts?: number[];
  quick?: boolean;
}

export function createContext(opts: ContextOptions = {}): BenchContext {
  const m = machine();
  const threadCounts = opts.threadCounts ?? [...new Set([1, m.cores])];
  const quick = opts.quick ?? false;
  return {
    time: (fn, o) => time(fn, quick ? { warmup: 1, repeats: 3, ...o } : o),
    table(rows, title) {
      if (title !== undefined) console.log(`\n${title}`);
      console.log(formatTable(rows));
      // figures from different CPUs differ 2× and more: name the CPU beside every table
      console.log(`(CPU: ${m.cpu}; native builds -march=${m.arch})`);
    },
    log: (text) => console.log(text),
    torch: (script, args) => runTorch(script, args),
    torchAvailable,
    peak,
    machine: m,
    cores: m.cores,
    threadCounts,
    async setThreads(n) {
      if (n <= 1) await stopThreadPool();
      else await startThreadPool(n);
    },
    quick,
  };
}
