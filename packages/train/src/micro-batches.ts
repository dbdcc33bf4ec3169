/*
 * A step's micro-batches, made one at a time: gradient accumulation over any number of them
 * holds one (its tokens and its activations) at a time. A step engine that runs a step again (a
 * loss-scaled step whose gradients overflowed) asks for micro-batch 0 again and gets the same
 * batches, made again from the step's starting cursor.
 */
import type { Batch, Task, TaskCursor } from "@loop/tasks";

/** How many micro-batches a step has, and each one when its turn comes. */
export interface MicroBatches {
  readonly count: number;
  /** Micro-batch `i`: asked for in order, i = 0..count−1 (0 again starts over). */
  at(i: number): Batch;
}

/** Micro-batches already made (tests, and callers that hold their batches anyway). */
export function microBatchesOf(batches: readonly Batch[]): MicroBatches {
  return { count: batches.length, at: (i) => batches[i]! };
}

function isBatchArray(b: readonly Batch[] | MicroBatches): b is readonly Batch[] {
  return Array.isArray(b);
}

/** `batches` as MicroBatches, whichever of the two a caller passed. */
export function asMicroBatches(batches: readonly Batch[] | MicroBatches): MicroBatches {
  // (not `"at" in batches`: an array has an `at` too)
  return isBatchArray(batches) ? microBatchesOf(batches) : batches;
}

/** The micro-batches of the step that starts at `start`, made from `task` on demand. */
export interface TaskMicroBatches extends MicroBatches {
  /**
   * Where the next step starts, and the tokens of this one, once every micro-batch was made;
   * null while some are not.
   */
  end(): { cursor: TaskCursor; tokens: number } | null;
}

/**
 * The `count` micro-batches of `batchSize` rows from `task` starting at `start`, each made when
 * asked for (`end` then says where the next step starts).
 */
export function taskMicroBatches(
  task: Pick<Task, "trainBatch">,
  start: TaskCursor,
  count: number,
  batchSize: number,
): TaskMicroBatches {
  let cursor = start;
  let tokens = 0;
  let next = 0;
  return {
    count,
    at(i) {
      if (i === 0) {
        cursor = start;
        tokens = 0;
        next = 0;
      }
      if (i !== next)
        throw new Error(`micro-batch ${i} asked for out of order (the next one is ${next})`);
      const b = task.trainBatch(cursor, batchSize);
      cursor = b.cursor;
      tokens += b.batch.tokens.length;
      next++;
      return b.batch;
    },
    end() {
      return next === count ? { cursor, tokens } : null;
    },
  };
}
