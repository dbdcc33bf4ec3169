/*
 * `pnpm looplm …`: pnpm answers SIGTERM by ending its shell, which does not pass the signal on,
 * so the looplm process is re-parented and would run on — through a training step, an
 * evaluation of a billion rows or an endless generation. Losing the launcher counts as SIGTERM,
 * whatever the command. A thread of its own watches, since the main thread may be busy in
 * synchronous work for a long time.
 */
import { Worker } from "node:worker_threads";

// 1 once this process took a signal itself: the watcher then sends none
const taken = new Int32Array(new SharedArrayBuffer(4));

/**
 * Under `pnpm looplm` (npm_lifecycle_event "looplm"), start a thread that sends this process
 * SIGTERM once its parent is gone (checked twice a second), unless `signalTaken` was called
 * first. It keeps nothing alive. Elsewhere it does nothing.
 */
export function watchLauncher(): void {
  if (process.env.npm_lifecycle_event !== "looplm") return;
  const w = new Worker(
    `const { workerData: d } = require("node:worker_threads");
     const t = setInterval(() => {
       if (process.ppid === d.launcher) return;
       clearInterval(t);
       if (Atomics.load(d.taken, 0) === 0) process.kill(process.pid, "SIGTERM");
     }, 500);`,
    { eval: true, workerData: { launcher: process.ppid, taken } },
  );
  w.unref();
}

/**
 * This process heard a signal and is stopping on it: the launcher's watcher must not send
 * another, which would count as a second signal and stop at once.
 */
export function signalTaken(): void {
  Atomics.store(taken, 0, 1);
}
