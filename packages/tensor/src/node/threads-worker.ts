/**
 * Entry script of a Node worker thread of the pool (started by threads.ts; built to
 * dist/node/threads-worker.js). Imports the preload kernel modules, reports ready, then runs
 * each job message with the shared job runner.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { JobMessage, WorkerInit, WorkerReport } from "../threads/protocol.js";
import { createJobRunner, preloadKernels } from "../threads/worker-loop.js";

const init = workerData as WorkerInit;
const port = parentPort;
if (port === null) throw new Error("threads-worker: must run as a worker thread");
const run = createJobRunner(init.control);
port.on("message", (msg: JobMessage) => {
  void run(msg);
});
try {
  await preloadKernels(init.preload);
  port.postMessage({ type: "ready" } satisfies WorkerReport);
} catch (e) {
  port.postMessage({
    type: "failed",
    message: e instanceof Error ? (e.stack ?? e.message) : String(e),
  } satisfies WorkerReport);
}
