/*
 * Messages and shared control block between the pool (main thread) and its workers.
 * The control block is one SharedArrayBuffer per pool: Int32 word DONE counts finished worker
 * jobs (workers add 1 and notify), ERR is set to 1 by a failing worker, ERR_LEN gives the
 * byte length of its UTF-8 message stored from byte ERR_TEXT.
 */
import type { KernelArgs } from "./registry.js";

export const DONE = 0;
export const ERR = 1;
export const ERR_LEN = 2;
export const ERR_TEXT = 16;
export const CONTROL_BYTES = 4096;

/** Data a worker receives at start-up. */
export interface WorkerInit {
  control: SharedArrayBuffer;
  /** Module URLs to import before reporting ready (kernels used from the start, e.g. GEMM). */
  preload: string[];
}

export interface JobMessage {
  type: "job";
  kernel: string;
  url: string;
  lo: number;
  hi: number;
  args: KernelArgs;
}

/** Worker → main thread (event-loop message, only at start-up). */
export type WorkerReport = { type: "ready" } | { type: "failed"; message: string };
