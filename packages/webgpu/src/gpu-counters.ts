/*
 * What a `GpuContext` reports about itself: its counters (dispatches, encoding time, bind groups,
 * pipelines, submits), the events it calls back on, and its pool's memory figures.
 */

/**
 * What the context has done since it was made or `resetCounters` was called: always counted (a
 * few additions and one `performance.now()` pair per dispatch), read with `counters()`.
 */
export interface GpuCounters {
  /** Compute dispatches recorded. */
  dispatches: number;
  /**
   * Milliseconds spent in `run` (pipeline look-up, the parameters' uniform slot, the bind group,
   * the pass commands; `performance.now()`, so wall-clock: the CPU cost of encoding the
   * dispatches when the thread is not descheduled), not the op code around them.
   */
  encodeMs: number;
  /** Bind groups created (a dispatch whose pipeline and buffers were bound before creates none). */
  bindGroupsCreated: number;
  /** Compute pipelines created (each kernel's first use). */
  pipelinesCreated: number;
  /** Command buffers submitted. */
  submits: number;
  /** Dispatches per kernel name (where the dispatches of a step go). */
  byKernel: Record<string, number>;
}

/** Counters all at zero. */
export const zeroCounters = (): GpuCounters => ({
  dispatches: 0,
  encodeMs: 0,
  bindGroupsCreated: 0,
  pipelinesCreated: 0,
  submits: 0,
  byKernel: {},
});

/** What `GpuContext.onEvent` reports: a command buffer submitted, a read's data arrived. */
export type GpuEvent = "submit" | "read-done";

/** The pool's device memory (`GpuContext.memory()`). */
export interface GpuMemory {
  liveBytes: number;
  peakBytes: number;
  poolBytes: number;
}
