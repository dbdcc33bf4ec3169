/*
 * The coordinator side of the queue, shared by every command that fans trainings out (`looplm
 * sweep --queue`, `looplm reproduce --queue`): enqueue one job per run folder (idempotent: ids come from
 * the folder, member and seed, so a repeated command adds nothing and reuses finished jobs),
 * watch them with a progress table, and return each job's result as its run folder holds it (the
 * queue only says a job is done: member-result.ts).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { type Job, Queue } from "bullmq";
import { CliError } from "../cli/errors.js";
import { WatchInterrupted } from "../cli/interrupt.js";
import { printable } from "../cli/printable.js";
import { bullConnection, checkRedis, describeRedisError, type QueueAddress } from "./connection.js";
import { signJob } from "./job-signature.js";
import { folderResult } from "./member-result.js";
import { type MemberStatus, progressView } from "./progress-table.js";
import {
  QUEUE_NAME,
  sameSettings,
  type TrainingJobData,
  type TrainingJobResult,
  trainingJobId,
  writeJobMarker,
} from "./training-job.js";

export type TrainingOutcome =
  | { state: "done"; result: TrainingJobResult }
  | { state: "failed"; reason: string };

export interface CoordinatorOptions {
  address: QueueAddress;
  /** Where the progress table goes (a terminal redraws it in place). */
  stream: NodeJS.WriteStream;
  /** Seconds between looks at the queue. */
  pollSeconds?: number;
  /** Sign every job with this secret (the workers' --secret). */
  secret?: string;
  /**
   * Stop watching (SIGINT/SIGTERM): rejects with WatchInterrupted; the jobs stay on the queue
   * and the workers go on training them.
   */
  signal?: AbortSignal;
}

/** Attempts of a job whose training process crashed (not of one that failed deterministically). */
const ATTEMPTS = 3;

/**
 * Times a job reported complete without a finished run in its folder is queued again before it
 * counts as failed: a worker that lost its folder trains it again, but a client that keeps
 * marking it complete cannot keep the coordinator waiting forever.
 */
export const REQUEUES_OF_UNFINISHED = 3;

type TrainingQueue = Queue<TrainingJobData, TrainingJobResult>;

async function enqueue(
  queue: TrainingQueue,
  id: string,
  job: TrainingJobData,
  note: (l: string) => void,
  secret: string | undefined,
  /** Replace the job whatever its state (one reported complete whose folder holds no run). */
  replace = false,
): Promise<void> {
  const d: TrainingJobData = secret ? { ...job, sig: signJob(job, secret) } : job;
  const existing = (await queue.getJob(id)) as Job<TrainingJobData> | undefined;
  if (existing && replace) await existing.remove();
  else if (existing) {
    const state = await existing.getState();
    const same = sameSettings(existing.data, d);
    // A completed job's result stands, and a job in training was accepted by its worker, however
    // they were signed; one still waiting, or failed, is queued again signed as now.
    const signedAlike = existing.data.sig === d.sig || state === "completed" || state === "active";
    if (same && signedAlike && state !== "failed") return;
    const replaceable = state === "completed" || state === "failed" || (same && state !== "active");
    if (!replaceable)
      throw new CliError(
        `the queue already has job ${d.label} for ${d.runDir} with other settings (${state}); wait for it to finish or use another --out`,
      );
    if (same && state === "failed")
      note(`${d.label}: failed before (${printable(existing.failedReason)}); queued again`);
    // A failed job, or a finished one of an earlier sweep with other settings, is replaced by
    // this command's own job (never re-run from what Redis holds, which anyone with access to
    // it could have changed), as a single-machine sweep retrains the folder.
    await existing.remove();
  }
  // (the record first: the worker that takes the job checks it against the record)
  writeJobMarker(d, id);
  await queue.add("train", d, {
    jobId: id,
    attempts: ATTEMPTS,
    backoff: { type: "exponential", delay: 5000 },
    removeOnComplete: false,
    removeOnFail: false,
  });
}

function metricText(r: TrainingJobResult): string {
  const e = r.eval;
  return e.metric === "accuracy" ? `${(100 * e.final).toFixed(2)} %` : `ppl ${e.final.toFixed(3)}`;
}

/** What `status` needs beside the job: the queue, where lines go, the secret, the re-queues. */
interface Watch {
  queue: TrainingQueue;
  note: (l: string) => void;
  secret: string | undefined;
  /** Per job id: times it was reported complete without a finished run and queued again. */
  requeued: Map<string, number>;
  /** Per job id: the result read from its folder (read once: a log may be long). */
  finished: Map<string, TrainingJobResult>;
}

/**
 * What a worker reported of its progress, as read back from Redis: whoever can write to Redis
 * can put anything there, so only a step count that is a count is shown (a string would reach
 * the terminal's table unescaped), and the worker's name is escaped.
 */
function reportedProgress(v: unknown): { step?: number; total?: number; worker?: string } {
  const p = (typeof v === "object" && v !== null ? v : {}) as Record<string, unknown>;
  const count = (x: unknown) =>
    Number.isSafeInteger(x) && (x as number) >= 0 ? (x as number) : undefined;
  return {
    step: count(p.step),
    total: count(p.total),
    worker: p.worker === undefined ? undefined : printable(p.worker),
  };
}

async function status(
  w: Watch,
  id: string,
  d: TrainingJobData,
): Promise<{ view: MemberStatus; outcome?: TrainingOutcome }> {
  const { queue, note, secret } = w;
  const known = w.finished.get(id);
  if (known) {
    const view: MemberStatus = {
      label: d.label,
      state: "done",
      worker: known.worker,
      step: known.steps,
      total: d.train.steps,
      detail: metricText(known),
    };
    return { view, outcome: { state: "done", result: known } };
  }
  // The state first, then the job: read the other way round, a job that completes in between
  // would show "completed" without its result.
  const state = await queue.getJobState(id);
  const job =
    state === "unknown"
      ? undefined
      : ((await queue.getJob(id)) as Job<TrainingJobData, TrainingJobResult> | undefined);
  if (!job) {
    // Redis came back without its data (no persistence): queue the job again; the worker
    // resumes its folder from the last checkpoint.
    note(`${d.label}: not in the queue any more (Redis lost its data?); queued again`);
    await enqueue(queue, id, d, note, secret);
    return { view: { label: d.label, state: "queued" } };
  }
  const p = reportedProgress(job.progress);
  const base = { label: d.label, step: p.step, total: p.total ?? d.train.steps };
  if (state === "completed") {
    // The queue's return value is only a claim: the numbers come from the run folder.
    const got = folderResult(d, id);
    const claimed = job.returnvalue as Partial<TrainingJobResult> | null | undefined;
    const worker = printable(typeof claimed?.worker === "string" ? claimed.worker : "");
    if (got.ok) {
      const result: TrainingJobResult = { steps: got.steps, eval: got.eval, worker };
      w.finished.set(id, result);
      const view: MemberStatus = {
        ...base,
        state: "done",
        worker,
        step: result.steps,
        detail: metricText(result),
      };
      return { view, outcome: { state: "done", result } };
    }
    const times = w.requeued.get(id) ?? 0;
    const why = printable(got.why);
    if (times >= REQUEUES_OF_UNFINISHED) {
      const reason = `reported complete ${times + 1} times, but ${why}`;
      return {
        view: { ...base, state: "failed", detail: reason },
        outcome: { state: "failed", reason },
      };
    }
    w.requeued.set(id, times + 1);
    note(`${printable(d.label)}: the queue reports it complete, but ${why}; queued again`);
    await enqueue(queue, id, d, note, secret, true);
    return { view: { label: d.label, state: "queued" } };
  }
  if (state === "failed") {
    const reason = printable(job.failedReason);
    return {
      view: {
        ...base,
        state: "failed",
        worker: p.worker,
        detail: reason,
      },
      outcome: { state: "failed", reason },
    };
  }
  if (state === "active")
    return {
      view: {
        ...base,
        state: "running",
        worker: job.processedBy == null ? (p.worker ?? "") : printable(job.processedBy),
      },
    };
  if (state === "delayed")
    return {
      view: { ...base, state: "retrying", detail: printable(job.failedReason ?? "") || undefined },
    };
  return { view: { ...base, state: "queued" } };
}

/** Train every job on the queue's workers; resolves when each is done or has failed. */
export async function trainOnQueue(
  jobs: readonly TrainingJobData[],
  o: CoordinatorOptions,
): Promise<TrainingOutcome[]> {
  await checkRedis(o.address);
  const view = progressView(o.stream);
  const queue: TrainingQueue = new Queue(QUEUE_NAME, { connection: bullConnection(o.address) });
  let down = false;
  queue.on("error", (e) => {
    if (!down)
      view.note(
        `${describeRedisError(o.address, e)}; waiting for it to come back (jobs keep running)`,
      );
    down = true;
  });
  const ids = jobs.map((d) => trainingJobId(d));
  const twice = ids.findIndex((id, i) => ids.indexOf(id) !== i);
  if (twice >= 0) throw new CliError(`two jobs train the same run folder ${jobs[twice]!.runDir}`);
  const watch: Watch = {
    queue,
    note: view.note,
    secret: o.secret,
    requeued: new Map(),
    finished: new Map(),
  };
  try {
    if (o.signal?.aborted) throw new WatchInterrupted("nothing was put on the queue");
    for (const [i, d] of jobs.entries()) await enqueue(queue, ids[i]!, d, view.note, o.secret);
    for (;;) {
      const now = [];
      for (const [i, d] of jobs.entries()) now.push(await status(watch, ids[i]!, d));
      if (down) view.note(`Redis at ${o.address.display} is back`);
      down = false;
      view.update(now.map((s) => s.view));
      if (now.every((s) => s.outcome)) return now.map((s) => s.outcome!);
      if (o.signal?.aborted) {
        const done = now.filter((s) => s.outcome).length;
        throw new WatchInterrupted(
          `${done} of ${jobs.length} jobs finished; the others stay on the queue, where the workers go on training them`,
        );
      }
      // (an abort ends the wait at once)
      await sleep((o.pollSeconds ?? 1) * 1000, undefined, { signal: o.signal }).catch(() => {});
    }
  } finally {
    view.stop();
    await queue.close();
  }
}
