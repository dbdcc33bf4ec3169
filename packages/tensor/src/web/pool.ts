/*
 * Browser host of the thread pool: `startWebWorkerPool(n, { createWorker })` starts n − 1 Web
 * Workers (the calling thread is the n-th) and installs them for `parallelFor` and the parallel
 * GEMM, exactly as the Node host does with worker_threads, so results are bit-for-bit those of
 * one thread.
 *
 * Two browser facts shape it:
 * - Jobs share memory through SharedArrayBuffer, which a page only has when it is cross-origin
 *   isolated (COOP: same-origin, COEP: require-corp). Without it the pool stays at one thread
 *   and says why in `notice`.
 * - A kernel registers with its module's `import.meta.url` so a Node worker can import it on
 *   demand. In a bundled app that URL is the app's own chunk: importing it in a worker would run
 *   the whole app again there. So the app names the worker script (`createWorker`, written as
 *   `new Worker(new URL("./pool-worker.ts", import.meta.url), { type: "module" })` so the bundler
 *   bundles it), that script imports the packages whose kernels it runs and calls
 *   `serveWebPoolWorker` (web/pool-worker.ts), and workers never import by URL.
 *
 * Blocking: the calling thread waits for its workers with Atomics.wait, which browsers allow in
 * workers only; on a page's main thread the pool spins instead. Run the model in a Worker.
 */
import { currentPool, installPool, type ThreadPool, type WorkerPort } from "../threads/pool.js";
import { CONTROL_BYTES, type JobMessage, type WorkerReport } from "../threads/protocol.js";
import type { WebWorkerInit } from "./pool-worker.js";

/** How a browser thread pool makes its workers. */
export interface WebPoolOptions {
  /** A new pool worker: a module Worker whose script calls `serveWebPoolWorker`. */
  createWorker: () => Worker;
}

/** How a browser thread pool started: its thread count and, when it runs on one thread, why. */
export interface WebPoolStart {
  /** Threads taking part in a parallel job (1 when no pool could start). */
  threads: number;
  /** One line saying why the pool runs on one thread, or null. */
  notice: string | null;
}

interface WebPool extends ThreadPool {
  readonly handles: Worker[];
}

/**
 * The notice a page that is not cross-origin isolated gets: no SharedArrayBuffer, so one thread.
 */
export const ISOLATION_NOTICE =
  "one thread: this page is not cross-origin isolated (serve it with Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp for SharedArrayBuffer)";

let jobs = 0;

/** Parts of parallel jobs handed to workers since the page loaded (0: all ran on one thread). */
export function webPoolJobCount(): number {
  return jobs;
}

function spawn(createWorker: () => Worker, control: SharedArrayBuffer): Promise<Worker> {
  const w = createWorker();
  return new Promise((resolve, reject) => {
    w.onerror = (e) => {
      e.preventDefault();
      reject(new Error(`thread pool worker failed to load: ${e.message || "script error"}`));
    };
    w.onmessage = (e: MessageEvent<WorkerReport>) => {
      w.onerror = null;
      w.onmessage = null;
      if (e.data.type === "ready") resolve(w);
      else reject(new Error(`thread pool worker failed to start: ${e.data.message}`));
    };
    w.postMessage({ type: "init", control } satisfies WebWorkerInit);
  });
}

function counted(w: Worker): WorkerPort {
  return {
    postMessage(msg: JobMessage) {
      jobs++;
      w.postMessage(msg);
    },
  };
}

let starting: Promise<WebPoolStart> | null = null;

/**
 * Start a pool of `threads` threads in total, replacing any running pool; resolves once every
 * worker is ready. Without cross-origin isolation it installs no workers and resolves with one
 * thread and a notice.
 */
export async function startWebWorkerPool(
  threads: number,
  opts: WebPoolOptions,
): Promise<WebPoolStart> {
  if (!Number.isInteger(threads) || threads < 1) {
    throw new Error(`startWebWorkerPool: threads must be a positive integer, got ${threads}`);
  }
  if (starting !== null) await starting.catch(() => undefined);
  const run = async (): Promise<WebPoolStart> => {
    stopWebWorkerPool();
    const isolated = (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated;
    if (threads > 1 && (isolated !== true || typeof SharedArrayBuffer === "undefined")) {
      return { threads: 1, notice: ISOLATION_NOTICE };
    }
    if (threads === 1) return { threads: 1, notice: null };
    const control = new SharedArrayBuffer(CONTROL_BYTES);
    const settled = await Promise.allSettled(
      Array.from({ length: threads - 1 }, () => spawn(opts.createWorker, control)),
    );
    const handles = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
    const failed = settled.find((s) => s.status === "rejected");
    if (failed !== undefined) {
      for (const w of handles) w.terminate();
      throw (failed as PromiseRejectedResult).reason;
    }
    const p: WebPool = { threads, workers: handles.map(counted), handles, control };
    installPool(p);
    return { threads, notice: null };
  };
  starting = run();
  try {
    return await starting;
  } finally {
    starting = null;
  }
}

/** Terminate the running pool, if any (kernels run on the calling thread afterwards). */
export function stopWebWorkerPool(): void {
  const p = currentPool() as WebPool | null;
  installPool(null);
  if (p?.handles !== undefined) for (const w of p.handles) w.terminate();
}
