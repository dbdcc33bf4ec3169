/**
 * `looplm worker`: a BullMQ worker that trains queued jobs, each in its own child process
 * (`looplm worker-job`), so this process stays free to renew the job's lock (its heartbeat),
 * relay progress and answer signals while the child trains.
 *
 * `signal` (SIGINT/SIGTERM): every child checkpoints at its current step, its job goes back to
 * the queue for any worker to resume, and the worker returns. (A second signal ends the process
 * at once; the children notice and stop without writing.)
 */
import { type ChildProcess, spawn } from "node:child_process";
import { hostname } from "node:os";
import { createInterface } from "node:readline";
import { type Job, UnrecoverableError, WaitingError, Worker } from "bullmq";
import { BACKENDS, type Backend } from "../backend.js";
import { bullConnection, checkRedis, describeRedisError, type QueueAddress } from "./connection.js";
import { CHILD_EXIT, type ChildMessage } from "./train-child.js";
import {
  QUEUE_NAME,
  runFolderProblem,
  type TrainingJobData,
  type TrainingJobProgress,
  type TrainingJobResult,
} from "./training-job.js";

// `pnpm looplm` moves the process to the user's folder (INIT_CWD) after this module loads; the
// training processes must start where the launcher did, so `--import tsx` still resolves.
const launchDir = process.cwd();

export interface WorkerOptions {
  address: QueueAddress;
  /** Jobs trained at once. */
  concurrency: number;
  /** Compute threads of each job's training process. */
  threads: number;
  /** Seconds a job stays claimed after its worker stops heart-beating. */
  lockSeconds: number;
  /** The backend of jobs that name none (undefined: the best CPU backend of this machine). */
  backend?: Backend;
  /** Aborted: checkpoint the jobs, hand them back, stop. */
  signal: AbortSignal;
  log: (line: string) => void;
}

type Outcome =
  | { kind: "result"; result: Omit<TrainingJobResult, "worker"> }
  | { kind: "stopped" }
  | { kind: "failed"; message: string; retry: boolean };

interface Running {
  child: ChildProcess;
  /** The lock was lost: the job may already be another worker's. */
  abandoned: boolean;
}

export async function runQueueWorker(o: WorkerOptions): Promise<void> {
  await checkRedis(o.address);
  const name = `${hostname()}:${process.pid}`;
  const running = new Map<string, Running>();
  let stopping = false;

  const train = (job: Job<TrainingJobData>): Promise<Outcome> => {
    const d = job.data;
    const backend = d.backend ?? o.backend;
    const child = spawn(
      process.execPath,
      [
        ...process.execArgv,
        process.argv[1]!,
        "worker-job",
        "--job",
        JSON.stringify(d),
        ...(backend ? ["--backend", backend] : []),
      ],
      {
        // Several jobs at once: plain progress lines (a pipe is no TTY) rather than fighting bars.
        stdio: ["ignore", "inherit", o.concurrency > 1 ? "pipe" : "inherit", "pipe"],
        cwd: launchDir,
        env: { ...process.env, LOOPLM_THREADS: String(o.threads) },
      },
    );
    child.stderr?.pipe(process.stderr);
    const entry: Running = { child, abandoned: false };
    running.set(job.id!, entry);
    let last: ChildMessage | null = null;
    let lastProgress = 0;
    const lines = createInterface({ input: child.stdio[3] as NodeJS.ReadableStream });
    lines.on("line", (l) => {
      const m = JSON.parse(l) as ChildMessage;
      if (m.type !== "progress") {
        last = m;
        return;
      }
      const now = Date.now();
      if (now - lastProgress < 1000 && m.step !== m.total) return;
      lastProgress = now;
      const p: TrainingJobProgress = { worker: name, step: m.step, total: m.total, loss: m.loss };
      job.updateProgress(p as unknown as object).catch(() => {});
    });
    return new Promise<Outcome>((resolve) => {
      child.on("close", (code, signal) => {
        running.delete(job.id!);
        const m = last as ChildMessage | null;
        if (code === CHILD_EXIT.done && m?.type === "result")
          resolve({ kind: "result", result: { steps: m.steps, eval: m.eval } });
        else if (code === CHILD_EXIT.stopped) resolve({ kind: "stopped" });
        else if (m?.type === "error")
          resolve({ kind: "failed", message: m.message, retry: m.retry });
        else if (entry.abandoned)
          resolve({ kind: "failed", message: "lost the job's lock", retry: true });
        else
          resolve({
            kind: "failed",
            message: `training process ${signal ? `killed by ${signal}` : `exited with code ${code}`}`,
            retry: true,
          });
      });
    });
  };

  const processor = async (
    job: Job<TrainingJobData, TrainingJobResult>,
    token?: string,
  ): Promise<TrainingJobResult> => {
    const d = job.data;
    if (stopping) {
      await job.moveToWait(token);
      throw new WaitingError();
    }
    if (d.v !== 1 && d.v !== 2)
      throw new UnrecoverableError(`job ${job.id}: unknown job format ${d.v}`);
    if (d.backend !== undefined && !(BACKENDS as readonly string[]).includes(d.backend))
      throw new UnrecoverableError(
        `job ${job.id}: backend ${JSON.stringify(d.backend)} is not one of ${BACKENDS.join(", ")}`,
      );
    const problem = runFolderProblem(d, job.id!);
    if (problem) {
      o.log(problem);
      throw new Error(problem);
    }
    o.log(`${name}: training ${d.label} in ${d.runDir}`);
    const out = await train(job);
    if (out.kind === "result") {
      const e = out.result.eval;
      const v = e.metric === "accuracy" ? `${(100 * e.final).toFixed(2)} %` : e.final.toFixed(3);
      o.log(`${name}: ${d.label} done, ${e.metric} ${v}`);
      return { ...out.result, worker: name };
    }
    if (out.kind === "stopped") {
      o.log(`${name}: ${d.label} checkpointed and handed back to the queue`);
      await job.moveToWait(token);
      throw new WaitingError();
    }
    o.log(`${name}: ${d.label} failed: ${out.message}`);
    throw out.retry ? new Error(out.message) : new UnrecoverableError(out.message);
  };

  const lockDuration = o.lockSeconds * 1000;
  const worker = new Worker<TrainingJobData, TrainingJobResult>(QUEUE_NAME, processor, {
    connection: bullConnection(o.address),
    concurrency: o.concurrency,
    name,
    autorun: false,
    lockDuration,
    stalledInterval: Math.max(1000, Math.round(lockDuration / 2)),
    // A job is re-queued each time its worker vanishes; only a job that keeps killing its
    // workers (it never reaches the processor's own failure handling) is given up on.
    maxStalledCount: 20,
  });
  // Redis going away is reported once per outage; BullMQ reconnects with back-off by itself.
  let down = false;
  worker.on("error", (e) => {
    if (!down) o.log(`${name}: ${describeRedisError(o.address, e)}; retrying`);
    down = true;
  });
  worker.on("ready", () => {
    if (down) o.log(`${name}: connected to Redis at ${o.address.display} again`);
    down = false;
  });
  worker.on("lockRenewalFailed", (ids: string[]) => {
    for (const id of ids) {
      const r = running.get(id);
      if (!r || r.abandoned) continue;
      // Another worker may take (or have taken) the job: stop writing its run folder now.
      o.log(`${name}: lost the lock of job ${id}; stopping its training`);
      r.abandoned = true;
      r.child.kill("SIGKILL");
    }
  });

  const stop = () => {
    stopping = true;
    o.log(
      running.size > 0
        ? `${name}: checkpointing ${running.size} job(s) and handing them back to the queue`
        : `${name}: stopping`,
    );
    for (const r of running.values()) r.child.kill("SIGTERM");
    void worker.close();
  };
  if (o.signal.aborted) return;
  o.signal.addEventListener("abort", stop, { once: true });
  o.log(
    `${name}: waiting for jobs on ${o.address.display} (concurrency ${o.concurrency}, ${o.threads} thread(s) per job)`,
  );
  try {
    await worker.run();
  } finally {
    o.signal.removeEventListener("abort", stop);
  }
}
