/*
 * Named parallel kernels. A kernel is a plain function `fn(args, lo, hi)` that processes the
 * index range [lo, hi) of a job; `defineKernel` registers it in this thread's registry under a
 * name together with the URL of the module that defines it, so a worker thread that has not
 * seen the kernel yet can `import(url)` that module (whose top level calls `defineKernel` again
 * and so registers it there). The registry lives on `globalThis` so every copy of this module
 * in a thread (source and bundled builds) shares it.
 */

/** Job arguments: numbers, booleans, strings and typed arrays (shared memory for big data). */
export type KernelArgs = Record<string, unknown>;

/**
 * A kernel the thread pool can run on a range [lo, hi) of its work: its name, the module that
 * defines it (loaded by each worker) and the function.
 */
export interface ParallelKernel<A extends KernelArgs = KernelArgs> {
  readonly name: string;
  /** URL of the module whose top level defines this kernel (usually `import.meta.url`). */
  readonly url: string;
  readonly fn: (args: A, lo: number, hi: number) => void;
}

const KEY = Symbol.for("@loop/tensor/parallel-kernels");

function registry(): Map<string, ParallelKernel> {
  const g = globalThis as unknown as Record<symbol, Map<string, ParallelKernel> | undefined>;
  let r = g[KEY];
  if (r === undefined) {
    r = new Map();
    g[KEY] = r;
  }
  return r;
}

/**
 * Register a kernel: call at module top level, passing `import.meta.url` as `url`.
 * Names are global; use a package prefix ("tensor/gemm", "ssm/ssd-scan").
 */
export function defineKernel<A extends KernelArgs>(
  name: string,
  url: string,
  fn: (args: A, lo: number, hi: number) => void,
): ParallelKernel<A> {
  if (name.length === 0) throw new Error("defineKernel: name must be a non-empty string");
  const k: ParallelKernel<A> = { name, url, fn };
  registry().set(name, k as unknown as ParallelKernel);
  return k;
}

/** The kernel registered under `name` in this thread, if any. */
export function findKernel(name: string): ParallelKernel | undefined {
  return registry().get(name);
}
