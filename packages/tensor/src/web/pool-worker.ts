/*
 * The worker side of the browser pool. A pool worker's entry module imports the packages whose
 * kernels it runs (their top level registers the kernels) and calls `serveWebPoolWorker`:
 *
 *   import * as looped from "@loop/looped";
 *   import { serveWebPoolWorker } from "@loop/tensor/web";
 *   serveWebPoolWorker([looped]);
 *
 * Passing the imported modules keeps a bundler from dropping them as unused (the packages are
 * side-effect free for tree shaking, so a bare `import "@loop/looped"` may vanish).
 */
import type { JobMessage, WorkerReport } from "../threads/protocol.js";
import { createJobRunner } from "../threads/worker-loop.js";

/** The first message a pool worker receives. */
export interface WebWorkerInit {
  type: "init";
  control: SharedArrayBuffer;
}

interface WorkerScope {
  onmessage: ((e: MessageEvent) => void) | null;
  postMessage(msg: WorkerReport): void;
}

/**
 * Serve pool jobs in this Web Worker. `kernelModules` are the imported modules that define the
 * kernels (kept only so that bundlers keep them).
 */
export function serveWebPoolWorker(kernelModules: readonly unknown[]): void {
  const scope = globalThis as unknown as WorkerScope;
  if (kernelModules.length === 0) {
    throw new Error("serveWebPoolWorker: pass the imported modules whose kernels this worker runs");
  }
  let run: ((msg: JobMessage) => Promise<void>) | null = null;
  scope.onmessage = (e: MessageEvent<WebWorkerInit | JobMessage>) => {
    const msg = e.data;
    if (msg.type === "init") {
      try {
        run = createJobRunner(msg.control, { importMissing: false });
        scope.postMessage({ type: "ready" });
      } catch (err) {
        scope.postMessage({ type: "failed", message: String(err) });
      }
    } else if (run !== null) void run(msg);
  };
}
