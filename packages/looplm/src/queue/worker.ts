/*
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
import { printable } from "../cli/printable.js";
import { memberStart } from "../cli/sweep-runner.js";
import { bullConnection, checkRedis, describeRedisError, type QueueAddress } from "./connection.js";
import { jobContent, signatureProblem } from "./job-signature.js";
import { CHILD_EXIT, type ChildMessage } from "./train-child.js";
import {
  alreadyFinished,
  jobRecordProblem,
  jobShapeProblem,
  QUEUE_NAME,
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
  /** Train only jobs signed with this secret (job-signature.ts). */
  secret?: string;
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

export async function runQueueWorker(opts: WorkerOptions): Promise<void> {
  // Every line may quote a job's label, folder or error: escaped, so a job cannot write to the
  // terminal or forge log lines.
  const o = { ...opts, log: (l: string) => opts.log(printable(l)) };
  await checkRedis(o.address);
  const name = `${hostname()}:${process.pid}`;
  const running = new Map<string, Running>();
  let stopping = false;

  const train = (job: Job<TrainingJobData>, d: TrainingJobData): Promise<Outcome> => {
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
        // Its stderr comes through a pipe (plain progress lines: a pipe is no TTY), passed on
        // here and its end kept: a child that fails before it can report (a backend that does
        // not start) gives its last line as the job's failure reason.
        stdio: ["ignore", "inherit", "pipe", "pipe"],
        cwd: launchDir,
        env: { ...process.env, LOOPLM_THREADS: String(o.threads) },
      },
    );
    let stderrTail = "";
    child.stderr?.on("data", (c: Buffer) => {
      process.stderr.write(c);
      stderrTail = (stderrTail + c.toString()).slice(-8192);
    });
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
        else {
          // (the child's own one-line reason, "looplm: …", when it printed one)
          const said = stderrTail
            .split("\n")
            .map((l) => l.trim())
            .filter((l) => l.startsWith("looplm: "))
            .at(-1)
            ?.slice("looplm: ".length)
            .slice(0, 2000);
          resolve({
            kind: "failed",
            message: `training process ${signal ? `killed by ${signal}` : `exited with code ${code}`}${said ? `: ${said}` : ""}`,
            retry: true,
          });
        }
      });
    });
  };

  // Every failure reaches this worker's stderr as well as the job's failure reason: refusals
  // and training failures are printed where they happen, anything unforeseen here.
  const told = new WeakSet<object>();
  const processor = async (
    job: Job<TrainingJobData, TrainingJobResult>,
    token?: string,
  ): Promise<TrainingJobResult> => {
    try {
      return await handle(job, token);
    } catch (e) {
      if (!(e instanceof WaitingError) && !(e instanceof Object && told.has(e)))
        o.log(`${name}: job ${job.id} failed: ${e instanceof Error ? e.message : String(e)}`);
      throw e;
    }
  };
  const handle = async (
    job: Job<TrainingJobData, TrainingJobResult>,
    token?: string,
  ): Promise<TrainingJobResult> => {
    const d = job.data;
    if (stopping) {
      await job.moveToWait(token);
      throw new WaitingError();
    }
    // Refusals: one line on this worker's stderr and as the job's failure reason, escaped;
    // nothing is written to any run folder before every check has passed.
    const refuse = (message: string, retry = false): never => {
      const line = printable(message);
      o.log(`${name}: ${line}`);
      const e = retry ? new Error(line) : new UnrecoverableError(line);
      told.add(e);
      throw e;
    };
    if (typeof d !== "object" || d === null) return refuse(`job ${job.id}: no job data; refused`);
    if (o.secret) {
      const bad = signatureProblem(d, o.secret);
      if (bad) refuse(`job ${job.id}: ${bad}; refused`);
    }
    const shape = jobShapeProblem(d);
    if (shape) refuse(`job ${job.id}: ${shape}; refused`);
    if (d.v !== 1 && d.v !== 2) refuse(`job ${job.id}: unknown job format ${JSON.stringify(d.v)}`);
    if (d.backend !== undefined && !(BACKENDS as readonly string[]).includes(d.backend))
      refuse(
        `job ${job.id}: backend ${JSON.stringify(d.backend)} is not one of ${BACKENDS.join(", ")}`,
      );
    const problem = jobRecordProblem(d, job.id!);
    if (problem) refuse(problem.message, problem.retry);
    // From here on the job is what its sweep recorded: its steps are the recorded steps.
    const recorded = jobContent(d) as TrainingJobData;
    let start: ReturnType<typeof memberStart>;
    try {
      start = memberStart(recorded.runDir, recorded.label, recorded.config, recorded.train);
    } catch (e) {
      return refuse(`job ${job.id}: ${(e as Error).message}`);
    }
    if (start.kind === "finished") {
      // A replayed job of a finished member (or the queue lost its result): never trained again.
      o.log(`${name}: ${alreadyFinished(recorded)}`);
      return { steps: recorded.train.steps, eval: start.ev, worker: name };
    }
    o.log(`${name}: training ${recorded.label} in ${recorded.runDir}`);
    const out = await train(job, recorded);
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
    const reason = printable(out.message);
    o.log(`${name}: ${d.label} failed: ${reason}`);
    const e = out.retry ? new Error(reason) : new UnrecoverableError(reason);
    told.add(e);
    throw e;
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
