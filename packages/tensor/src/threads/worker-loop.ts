/*
 * The worker side of the pool, independent of the host (Node worker_threads or Web Worker):
 * `createJobRunner(init)` returns the handler for job messages. A job runs the named kernel on
 * [lo, hi) and then bumps the DONE word of the control block (Atomics.add + notify), which the
 * main thread waits on; failures are written into the control block instead of thrown.
 */
import { CONTROL_BYTES, DONE, ERR, ERR_LEN, ERR_TEXT, type JobMessage } from "./protocol.js";
import { findKernel } from "./registry.js";

/** How a worker finds a kernel it has not registered yet. */
export interface JobRunnerOptions {
  /**
   * Import the kernel's module URL (default). Browser workers turn this off: in a bundled app
   * that URL is the app's own chunk, and importing it would run the app again in the worker;
   * their entry module imports the kernel packages instead (see web/pool.ts).
   */
  importMissing?: boolean;
}

async function kernelFor(name: string, url: string, importMissing: boolean) {
  let k = findKernel(name);
  if (k === undefined && !importMissing) {
    throw new Error(
      `kernel "${name}" is not registered in this pool worker: import the package that defines it in the worker's entry module`,
    );
  }
  if (k === undefined) {
    await import(/* @vite-ignore */ url);
    k = findKernel(name);
  }
  if (k === undefined) throw new Error(`kernel "${name}" is not defined by module ${url}`);
  return k;
}

/** Import the given kernel modules (worker start-up). */
export async function preloadKernels(urls: readonly string[]): Promise<void> {
  for (const url of urls) await import(/* @vite-ignore */ url);
}

export function createJobRunner(
  control: SharedArrayBuffer,
  opts: JobRunnerOptions = {},
): (msg: JobMessage) => Promise<void> {
  const importMissing = opts.importMissing ?? true;
  const ctl = new Int32Array(control);
  const text = new Uint8Array(control, ERR_TEXT, CONTROL_BYTES - ERR_TEXT);
  return async (msg) => {
    try {
      const k = await kernelFor(msg.kernel, msg.url, importMissing);
      k.fn(msg.args, msg.lo, msg.hi);
    } catch (e) {
      // the first failing worker of a job claims the message slot
      if (Atomics.compareExchange(ctl, ERR, 0, 1) === 0) {
        const bytes = new TextEncoder().encode(
          e instanceof Error ? (e.stack ?? e.message) : String(e),
        );
        const n = Math.min(bytes.length, text.length);
        text.set(bytes.subarray(0, n));
        Atomics.store(ctl, ERR_LEN, n);
      }
    } finally {
      Atomics.add(ctl, DONE, 1);
      Atomics.notify(ctl, DONE);
    }
  };
}
