/**
 * A client with access to Redis (but not the jobs' secret) marks the coordinator's jobs completed
 * with a made-up result. The coordinator takes its numbers from the members' run folders, never
 * from the queue: a forged 99 % reaches neither sweep.json nor report.html; the job is queued
 * again with a line saying why, and a real worker then trains it. A forged progress report shows
 * nothing but a step count.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Queue, Worker } from "bullmq";
import { describe, expect, it } from "vitest";
import { WatchInterrupted } from "../cli/interrupt.js";
import { tinyPhop } from "../cli/tiny-args.test-util.js";
import { parseQueueUrl } from "./connection.js";
import { REQUEUES_OF_UNFINISHED, trainOnQueue } from "./coordinator.js";
import { looplm, useRedisServer, waitFor } from "./redis-server.test-util.js";
import { QUEUE_NAME, type TrainingJobData, trainingJobId } from "./training-job.js";

const SECRET = { LOOPLM_QUEUE_SECRET: "a shared secret of 32 characters" };
const sweepArgs = (dir: string, url: string) => [
  "sweep",
  ...["--protocol", "iso-param", ...tinyPhop(16), "--base", "1", "--loops", "1"],
  ...["--batch", "8", "--steps", "6", "--warmup", "1", "--eval-every", "3", "--eval-count", "8"],
  ...["--out", dir, "--queue", url],
];
const FORGED = {
  steps: 6,
  eval: { metric: "accuracy", per_step: [0.99], final: 0.99 },
  worker: "w",
};

/** A BullMQ worker that completes every job it takes with FORGED, training nothing. */
function forger(url: string, onlyOnce: boolean) {
  const w = new Worker(QUEUE_NAME, async () => FORGED, {
    connection: parseQueueUrl(url).options,
    concurrency: 1,
  });
  let forged = 0;
  w.on("completed", () => {
    forged++;
    if (onlyOnce) void w.close();
  });
  return { close: () => w.close(), forged: () => forged };
}

const redis = useRedisServer();

describe("the coordinator reads results from the run folders, not from the queue", () => {
  it("a job forged complete is queued again and trained; its forged 99 % is never written", async () => {
    const url = `${redis.url}/1`;
    const dir = mkdtempSync(join(tmpdir(), "looplm-forged-"));
    const f = forger(url, true);
    const coord = looplm(sweepArgs(dir, url), SECRET);
    await waitFor("the coordinator to see the forged result", () =>
      coord.err().includes("1⊗1: the queue reports it complete, but"),
    );
    expect(f.forged()).toBeGreaterThanOrEqual(1);
    expect(coord.err()).toMatch(
      /1⊗1: the queue reports it complete, but \S+1x1 holds no finished run \(no final\/\); queued again/,
    );
    await f.close();
    const w = looplm(["worker", "--queue", url, "--threads", "1"], SECRET);
    try {
      const { code } = await coord.exited;
      expect(code, coord.err()).toBe(0);
    } finally {
      w.proc.kill("SIGTERM");
      await w.exited;
    }
    expect(w.err()).toContain("training 1⊗1 in");
    const sweep = JSON.parse(readFileSync(join(dir, "sweep.json"), "utf8"));
    const log = readFileSync(join(dir, "1x1", "log.jsonl"), "utf8")
      .trim()
      .split("\n");
    const last = JSON.parse(log.at(-1)!) as { step: number; eval: { final: number } };
    expect(last.step).toBe(6);
    expect(sweep.rows[0].metric_value).toBe(last.eval.final);
    expect(sweep.rows[0].metric_value).not.toBe(0.99);
    expect(readFileSync(join(dir, "report.html"), "utf8")).not.toContain("99.00");

    // The job stays complete on the queue; a final/ of another model put in its folder is no
    // result of it: the next coordinator queues it again, naming the file.
    const config = join(dir, "1x1", "final", "config.json");
    const other = JSON.parse(readFileSync(config, "utf8"));
    other.d_model = 32;
    writeFileSync(config, JSON.stringify(other));
    const again = looplm(sweepArgs(dir, url), SECRET);
    try {
      await waitFor("the coordinator to see the other model", () =>
        again.err().includes("queued again"),
      );
      expect(again.err()).toContain(
        `1⊗1: the queue reports it complete, but ${config} is another model's than the job's (a final/ of another run); queued again`,
      );
    } finally {
      again.proc.kill("SIGTERM");
      await again.exited;
    }
  }, 300_000);

  it("a job forged complete again and again fails after a bounded number of re-queues", async () => {
    const url = `${redis.url}/2`;
    const dir = mkdtempSync(join(tmpdir(), "looplm-forged-"));
    const f = forger(url, false);
    const coord = looplm(sweepArgs(dir, url), SECRET);
    try {
      const { code } = await coord.exited;
      expect(code).toBe(1);
    } finally {
      await f.close();
    }
    const lines = coord.err().split("\n");
    expect(lines.filter((l) => l.includes("queued again"))).toHaveLength(REQUEUES_OF_UNFINISHED);
    expect(lines.at(-2)).toMatch(
      new RegExp(
        `1 of 1 members failed .*1⊗1: reported complete ${REQUEUES_OF_UNFINISHED + 1} times, but \\S+ holds no finished run`,
      ),
    );
    // the forged number is nowhere: no row, no report
    const sweep = JSON.parse(readFileSync(join(dir, "sweep.json"), "utf8"));
    expect(sweep.rows).toEqual([]);
    expect(existsSync(join(dir, "report.html"))).toBe(false);
    expect(existsSync(join(dir, "1x1", "final"))).toBe(false);
  }, 120_000);

  it("a forged progress report reaches the terminal's table only as a step count", async () => {
    const url = `${redis.url}/3`;
    const runDir = join(mkdtempSync(join(tmpdir(), "looplm-forged-")), "1x1");
    // (the coordinator reads nothing of a job's settings before the queue reports it done)
    const d = {
      v: 2,
      label: "1⊗1",
      runDir,
      task: {},
      taskInfo: {},
      config: {},
      train: { steps: 6, seed: 1 },
      evalCount: 8,
    } as unknown as TrainingJobData;
    let shown = "";
    const terminal = {
      isTTY: true,
      write: (t: string) => {
        shown += t;
        return true;
      },
    } as unknown as NodeJS.WriteStream;
    const stop = new AbortController();
    const watching = trainOnQueue([d], {
      address: parseQueueUrl(url),
      stream: terminal,
      pollSeconds: 0.1,
      signal: stop.signal,
    });
    const queue = new Queue(QUEUE_NAME, { connection: parseQueueUrl(url).options });
    try {
      await waitFor(
        "the job on the queue",
        async () => (await queue.getJob(trainingJobId(d))) !== undefined,
      );
      const job = (await queue.getJob(trainingJobId(d)))!;
      await job.updateProgress({
        step: "\x1b[2J\x1b]0;pwned\x07",
        total: { a: 1 },
        worker: "w\x1b[31m",
      });
      const before = shown.length;
      await waitFor("the table drawn again", () => shown.slice(before).includes("waiting"));
      stop.abort();
      await expect(watching).rejects.toBeInstanceOf(WatchInterrupted);
    } finally {
      stop.abort();
      await queue.close();
    }
    expect(shown).not.toContain("\x1b[2J");
    expect(shown).not.toContain("\x1b]0;");
    expect(shown).not.toContain("pwned");
    expect(shown).not.toContain("\x1b[31m");
  }, 60_000);
});
