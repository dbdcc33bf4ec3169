/**
 * The job queue end to end: real redis-server, real `looplm sweep --queue` coordinators and
 * `looplm worker` processes, tiny members so each test takes seconds.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tinyPhop } from "../cli/tiny-args.test-util.js";
import { checkRedis, describeRedisError, displayQueueUrl, parseQueueUrl } from "./connection.js";
import {
  looplm,
  oneLineFailures,
  pausePoint,
  type RedisServer,
  redisServer,
  waitFor,
} from "./redis-server.test-util.js";
import { QUEUE_NAME } from "./training-job.js";

const tiny = [
  "--protocol",
  "iso-param",
  ...tinyPhop(16),
  "--base",
  "1",
  "--batch",
  "16",
  "--steps",
  "300",
  "--warmup",
  "2",
  "--eval-every",
  "50",
  "--eval-count",
  "16",
  "--ckpt-every",
  "10",
];
const FOUR = ["--loops", "1,2,3,4"];
const worker = (url: string, lock = "2", env: NodeJS.ProcessEnv = {}) =>
  looplm(["worker", "--queue", url, "--threads", "1", "--lock-seconds", lock], env);

const tmp = () => mkdtempSync(join(tmpdir(), "looplm-queue-"));
const sweepFile = (dir: string) => JSON.parse(readFileSync(join(dir, "sweep.json"), "utf8"));
/** Which member a worker started (its first "training X in DIR" line). */
const startedRun = (err: string) => /training (\S+) in (\S+)/.exec(err);
/** Members checkpoint every 10 steps: a training process pauses at this one (pausePoint). */
const PAUSE_STEP = 10;

let redis: RedisServer;
let reference: { rows: unknown[] };

beforeAll(async () => {
  redis = await redisServer();
  // The same sweep on one machine, no queue: what every queued sweep must reproduce exactly.
  const dir = tmp();
  const single = looplm(["sweep", ...tiny, ...FOUR, "--out", dir]);
  const { code } = await single.exited;
  if (code !== 0) throw new Error(`reference sweep failed: ${single.err()}`);
  reference = sweepFile(dir);
}, 600_000);

afterAll(async () => {
  await redis?.stop();
});

describe("looplm sweep --queue with looplm worker", () => {
  it("finishes 4 members with 2 workers, one killed mid-training, with the single-machine metrics", async () => {
    const url = `${redis.url}/1`;
    const dir = tmp();
    const coord = looplm(["sweep", ...tiny, ...FOUR, "--out", dir, "--queue", url]);
    const b = worker(url);
    await waitFor("worker B to start a job", () => startedRun(b.err()));
    // A's training process stops after its step-10 checkpoint until A is killed: no race.
    const pause = pausePoint(PAUSE_STEP);
    const a = worker(url, "2", pause.env);
    const { label, runDir } = await pause.reached();
    expect(startedRun(a.err())?.slice(1)).toEqual([label, runDir]);
    a.proc.kill("SIGKILL");
    expect((await a.exited).signal).toBe("SIGKILL");
    expect(existsSync(join(runDir, "final"))).toBe(false);

    const { code } = await coord.exited;
    expect(code, coord.err()).toBe(0);
    // B took the dead worker's job after its lock expired and resumed its checkpoint.
    expect(b.err()).toContain(`training ${label} in ${runDir}`);
    expect(b.err()).toMatch(new RegExp(`${label}: resuming .*step-0*${PAUSE_STEP}\\b`));
    expect(sweepFile(dir)).toEqual(reference);
    expect(coord.out()).toMatch(/1⊗4\s+looped/);
    expect(existsSync(join(dir, "report.html"))).toBe(true);
    const steps = readFileSync(join(runDir, "log.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { step: number }).step);
    expect(steps).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));

    b.proc.kill("SIGTERM");
    expect((await b.exited).code).toBe(0);
  }, 600_000);

  it("a repeated command adds no jobs; SIGTERM hands a job back checkpointed for another worker", async () => {
    const url = `${redis.url}/2`;
    const dir = tmp();
    const args = ["sweep", ...tiny, "--loops", "2,4", "--out", dir, "--queue", url];
    const first = looplm(args);
    const second = looplm(args);
    const pause = pausePoint(PAUSE_STEP);
    const c = worker(url, "2", pause.env);
    const { label } = await pause.reached();
    c.proc.kill("SIGTERM");
    expect((await c.exited).code).toBe(0);
    expect(c.err()).toContain(`${label} checkpointed and handed back to the queue`);
    const d = looplm(["worker", "--queue", url, "--threads", "1", "--concurrency", "2"]);
    const [r1, r2] = await Promise.all([first.exited, second.exited]);
    expect(r1.code, first.err()).toBe(0);
    expect(r2.code, second.err()).toBe(0);
    expect(d.err()).toMatch(new RegExp(`${label}: resuming`));
    const want = (reference.rows as { label: string }[]).filter((r) =>
      ["1⊗2", "1⊗4"].includes(r.label),
    );
    expect(sweepFile(dir).rows).toEqual(want);
    const queue = new Queue(QUEUE_NAME, { connection: parseQueueUrl(url).options });
    try {
      const counts = await queue.getJobCounts();
      expect(Object.values(counts).reduce((s, n) => s + n, 0)).toBe(2);
      expect(counts.completed).toBe(2);
    } finally {
      await queue.close();
    }
    // Run again with no worker at all: the finished jobs are reused from the queue.
    rmSync(join(dir, "sweep.json"));
    const again = looplm(args);
    expect((await again.exited).code, again.err()).toBe(0);
    expect(sweepFile(dir).rows).toEqual(want);
    d.proc.kill("SIGTERM");
    expect((await d.exited).code).toBe(0);
  }, 600_000);

  /**
   * A sweep of `labels` on its own Redis, which is SIGKILLed while a member trains and started
   * again at once; the sweep must finish with the single-machine numbers.
   */
  async function sweepAcrossRestart(persist: boolean, labels: string[], lockSeconds: string) {
    const server = await redisServer({ persist });
    try {
      const dir = tmp();
      const loops = labels.map((l) => l.split("⊗")[1]).join(",");
      const args = ["sweep", ...tiny, "--loops", loops, "--out", dir, "--queue", server.url];
      const coord = looplm(args);
      const pause = pausePoint(PAUSE_STEP);
      const w = worker(server.url, lockSeconds, pause.env);
      const { label } = await pause.reached();
      await server.kill();
      await server.start();
      pause.release();
      const { code } = await coord.exited;
      expect(code, coord.err()).toBe(0);
      const want = (reference.rows as { label: string }[]).filter((r) => labels.includes(r.label));
      expect(sweepFile(dir).rows).toEqual(want);
      w.proc.kill("SIGTERM");
      expect((await w.exited).code).toBe(0);
      return { label: label!, coord: coord.err(), worker: w.err() };
    } finally {
      await server.stop();
    }
  }

  it("keeps going when Redis (with an append-only file) is killed and restarted mid-sweep", async () => {
    await sweepAcrossRestart(true, ["1⊗1", "1⊗2"], "30");
  }, 600_000);

  it("re-queues the jobs when Redis comes back empty, and the workers resume them", async () => {
    const { label, coord, worker } = await sweepAcrossRestart(false, ["1⊗2"], "2");
    expect(coord).toContain(`${label}: not in the queue any more`);
    // Resumed from its checkpoint, or (a fast machine) finished before its lock was found lost:
    // then the re-queued job finds its final/ (the worker's check, or the child's) and skips it.
    expect(worker).toMatch(
      new RegExp(`${label}: resuming|${label} in \\S+ already finished its \\d+ steps`),
    );
  }, 600_000);

  it("a member that fails with NaN fails once, with its message", async () => {
    const url = `${redis.url}/3`;
    const dir = tmp();
    const w = worker(url);
    const coord = looplm([
      "sweep",
      ...tiny,
      "--loops",
      "2",
      "--lr",
      "1e30",
      "--out",
      dir,
      "--queue",
      url,
    ]);
    const { code } = await coord.exited;
    expect(code).toBe(1);
    const last = coord.err().trim().split("\n").at(-1)!;
    expect(last).toMatch(/^looplm: 1 of 1 members failed .*1⊗2: non-finite loss \(NaN\) at step 2/);
    const queue = new Queue(QUEUE_NAME, { connection: parseQueueUrl(url).options });
    try {
      const [job] = await queue.getFailed();
      expect(job!.attemptsMade).toBe(1);
      expect(job!.failedReason).toMatch(/non-finite loss/);
    } finally {
      await queue.close();
    }
    expect(w.err().match(/1⊗2 failed:/g)).toHaveLength(1);
    w.proc.kill("SIGTERM");
    expect((await w.exited).code).toBe(0);
  }, 600_000);

  it("a member whose training process fails before it can report gives the process's reason", async () => {
    // (--backend cuda: no CUDA here, so the job's training process ends in its backend's start,
    // before it reports anything; its one line reaches the coordinator, not only the worker)
    const url = `${redis.url}/8`;
    const dir = tmp();
    const w = worker(url);
    const coord = looplm([
      "sweep",
      ...tiny,
      ...["--loops", "2", "--steps", "2", "--backend", "cuda", "--out", dir, "--queue", url],
    ]);
    const { code } = await coord.exited;
    expect(code).toBe(1);
    const last = coord.err().trim().split("\n").at(-1)!;
    expect(last).toMatch(
      /^looplm: 1 of 1 members failed .*1⊗2: training process exited with code 1: .*cuda/,
    );
    w.proc.kill("SIGTERM");
    expect((await w.exited).code).toBe(0);
  }, 600_000);

  it("a worker that cannot see the job's run folder fails it with one line", async () => {
    const url = `${redis.url}/4`;
    const queue = new Queue(QUEUE_NAME, { connection: parseQueueUrl(url).options });
    const w = worker(url);
    try {
      const job = await queue.add(
        "train",
        { v: 1, label: "1⊗1", runDir: "/nonexistent/looplm/1x1" },
        { jobId: "missing-folder", attempts: 1 },
      );
      await waitFor("the job to fail", async () => (await job.getState()) === "failed");
      const failed = await queue.getJob("missing-folder");
      expect(failed!.failedReason).toBe(
        "job 1⊗1: this worker cannot see its run folder /nonexistent/looplm/1x1 (run folders must be on a filesystem every worker mounts at the same path)",
      );
    } finally {
      await queue.close();
      w.proc.kill("SIGTERM");
      await w.exited;
    }
  }, 120_000);
});

describe("the backend of a queued sweep", () => {
  it("travels with its jobs: workers train them on it; a job naming an unknown one fails in one line", async () => {
    const url = `${redis.url}/5`;
    const dir = tmp();
    const short = ["--steps", "20", "--eval-every", "10"];
    const args = ["sweep", ...tiny, ...short, "--loops", "1", "--out", dir, "--queue", url];
    const coord = looplm([...args, "--backend", "portable"]);
    // (this worker's own default is the best CPU backend: native where it builds)
    const w = worker(url);
    const queue = new Queue(QUEUE_NAME, { connection: parseQueueUrl(url).options });
    try {
      expect((await coord.exited).code, coord.err()).toBe(0);
      const [job] = await queue.getJobs(["completed"]);
      expect(job!.data).toMatchObject({ v: 2, label: "1⊗1", backend: "portable" });
      const run = JSON.parse(readFileSync(join(dir, "1x1", "run.json"), "utf8"));
      expect(run.backend).toBe("portable");
      const bad = await queue.add(
        "train",
        { v: 2, label: "1⊗1", runDir: join(dir, "1x1"), backend: "gpu" },
        { jobId: "unknown-backend", attempts: 1 },
      );
      await waitFor("the job to fail", async () => (await bad.getState()) === "failed");
      expect((await queue.getJob("unknown-backend"))!.failedReason).toBe(
        'job unknown-backend: backend "gpu" is not one of portable, native, webgpu, cuda',
      );
    } finally {
      await queue.close();
      w.proc.kill("SIGTERM");
      await w.exited;
    }
  }, 300_000);
});

/** Every file under `dir`: its bytes' hash, size and modification time. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir, { recursive: true, encoding: "utf8" }).sort()) {
    const p = join(dir, f);
    const st = statSync(p);
    if (!st.isFile()) continue;
    const hash = createHash("sha256").update(readFileSync(p)).digest("hex");
    out[f] = `${hash} ${st.size} ${st.mtimeMs}`;
  }
  return out;
}

describe("a worker trusts no job", () => {
  it("refuses rewritten, unsigned and altered jobs in one line, never retrains a finished member, and writes nothing", async () => {
    const url = `${redis.url}/6`;
    const secret = { LOOPLM_QUEUE_SECRET: "a shared secret of 32 characters" };
    const dir = tmp();
    const runDir = join(dir, "1x1");
    const short = ["--steps", "20", "--eval-every", "10"];
    const args = ["sweep", ...tiny, ...short, "--loops", "1", "--out", dir, "--queue", url];
    // a signed sweep, trained by a worker that accepts only signed jobs
    const coord = looplm(args, secret);
    let w = worker(url, "2", secret);
    const queue = new Queue(QUEUE_NAME, { connection: parseQueueUrl(url).options });
    try {
      expect((await coord.exited).code, coord.err()).toBe(0);
      const [done] = await queue.getJobs(["completed"]);
      const id = done!.id!;
      const data = done!.data as Record<string, unknown> & { train: { steps: number } };
      expect(data.sig).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.parse(readFileSync(join(runDir, "queue-job.json"), "utf8")).job.train.steps).toBe(
        20,
      );
      const before = snapshot(runDir);
      /** Put `d` on the queue under the finished job's id, as anyone with Redis access can. */
      const replace = async (d: unknown) => {
        await (await queue.getJob(id))!.remove();
        const job = await queue.add("train", d as never, { jobId: id, attempts: 1 });
        await waitFor("the job to settle", async () =>
          ["completed", "failed"].includes(await job.getState()),
        );
        return (await queue.getJob(id))!;
      };
      const refused = async (d: unknown, reason: string) => {
        const job = await replace(d);
        expect(await job.getState()).toBe("failed");
        expect(job.failedReason).toBe(reason);
        expect(job.attemptsMade).toBe(1);
        expect(w.err()).toContain(reason);
        expect(snapshot(runDir)).toEqual(before);
      };
      const { sig: _sig, ...unsigned } = data;
      await refused(
        unsigned,
        `job ${id}: it is not signed, and this worker trains only signed jobs (--secret / LOOPLM_QUEUE_SECRET); refused`,
      );
      await refused(
        { ...data, train: { ...data.train, steps: 1e12 } },
        `job ${id}: its signature does not match its content (altered, or signed with another secret); refused`,
      );
      w.proc.kill("SIGTERM");
      await w.exited;

      // A worker without a secret still trains only the job its sweep recorded.
      w = worker(url);
      await refused(
        { ...unsigned, train: { ...data.train, steps: 1e12 } },
        `job 1⊗1: not the job its sweep recorded in ${join(runDir, "queue-job.json")} (train.steps 1000000000000 (recorded 20)); refused`,
      );
      // escape codes and a forged line in a label reach neither the terminal nor the reason
      const forged = "1⊗1\n\x1b[2Klooplm: FAKE all jobs done";
      await refused(
        { ...unsigned, label: forged },
        `job 1⊗1\\n\\x1b[2Klooplm: FAKE all jobs done: not the job its sweep recorded in ${join(runDir, "queue-job.json")} (label "1⊗1\\n\\u001b[2Klooplm: FAKE all jobs done" (recorded "1⊗1")); refused`,
      );
      expect(w.err()).not.toMatch(/\nlooplm: FAKE/);
      expect(w.err()).not.toContain("\x1b");
      // the finished job replayed as it was: its numbers from its log, nothing trained
      const replayed = await replace(data);
      expect(await replayed.getState()).toBe("completed");
      expect(replayed.returnvalue).toMatchObject({ steps: 20, eval: done!.returnvalue.eval });
      expect(w.err()).toContain(
        `1⊗1 in ${runDir} already finished its 20 steps (final/): not trained again; its numbers come from its log`,
      );
      expect(snapshot(runDir)).toEqual(before);
    } finally {
      await queue.close();
      w.proc.kill("SIGTERM");
      await w.exited;
    }
  }, 300_000);
});

describe("no output holds the Redis password", () => {
  const pw = "hunter2-s3cret";
  it("in any parse error of --queue", () => {
    for (const url of [
      `http://:${pw}@127.0.0.1:6392`,
      `redis://:${pw}@:6392`,
      `redis://user:${pw}@10.0.0.5:6379/x`,
      `redis://:${pw}@10.0.0.5:99999`,
      `redis://:${pw}@[::1`,
      `:${pw}@10.0.0.5:6379`,
      `redis://${pw}@/0`,
    ]) {
      let message = "";
      try {
        parseQueueUrl(url);
      } catch (e) {
        message = (e as Error).message;
      }
      expect(message, url).toMatch(/^--queue /);
      expect(message, url).not.toContain(pw);
      expect(message, url).not.toContain("hunter");
    }
    expect(displayQueueUrl(`http://:${pw}@127.0.0.1:6392`)).toBe("http://:***@127.0.0.1:6392");
    expect(displayQueueUrl(`rediss://ops:${pw}@h:1/2`)).toBe("rediss://ops:***@h:1/2");
    expect(displayQueueUrl(`redis://${pw}@h`)).toBe("redis://***@h");
    expect(displayQueueUrl("redis://h:1/2")).toBe("redis://h:1/2");
  });

  it("in any connection error, and a database the server lacks is refused with nothing enqueued", async () => {
    const a = parseQueueUrl(`redis://:${pw}@127.0.0.1:6399/3`);
    for (const e of [
      { code: "ECONNREFUSED", message: "connect ECONNREFUSED" },
      { code: "ENOTFOUND", message: "getaddrinfo ENOTFOUND" },
      { message: "connect ETIMEDOUT" },
      { message: "NOAUTH Authentication required." },
      { message: `WRONGPASS invalid username-password pair (${pw})` },
      { message: "ERR AUTH <password> called without any password configured" },
      { message: "read ECONNRESET" },
      { code: "CERT_HAS_EXPIRED", message: "certificate has expired" },
      { message: "ERR DB index is out of range" },
      { message: `something else about ${pw}\nsecond line` },
    ]) {
      const line = describeRedisError(a, e);
      expect(line).toContain("redis://:***@127.0.0.1:6399/3");
      expect(line).not.toContain(pw);
      expect(line).not.toContain("\n");
    }
    const locked = await redisServer({ password: pw });
    try {
      const base = `redis://:${pw}@127.0.0.1:${locked.port}`;
      const shown = `redis://:***@127.0.0.1:${locked.port}`;
      const out = tmp();
      const runs = [
        // the probe's malformed URLs, through the binary
        looplm(["worker", "--queue", `http://:${pw}@127.0.0.1:${locked.port}`]),
        looplm(["sweep", ...tiny, ...FOUR, "--out", tmp(), "--queue", `redis://:${pw}@:6392`]),
        // a wrong password, and a database index the server does not have
        looplm(["worker", "--queue", `redis://:not-${pw}@127.0.0.1:${locked.port}`]),
        looplm(["worker", "--queue", `${base}/99`]),
        looplm(["sweep", ...tiny, ...FOUR, "--out", out, "--queue", `${base}/99`]),
      ];
      const lines = await oneLineFailures(runs, pw);
      expect(lines[2]).toBe(
        `looplm: Redis at redis://:***@127.0.0.1:${locked.port} rejected the user name or password`,
      );
      const noDb = `Redis at ${shown}/99 has no database 99 (it has 16: 0–15): choose one it has with the number after the port, redis://host:port/<db>`;
      expect(lines[3]).toBe(`looplm: ${noDb}`);
      expect(lines[4]).toBe(`looplm: ${noDb}`);
      // nothing went to database 0 (or anywhere): no job, no record in the sweep folder
      const r = new Redis({ port: locked.port, host: "127.0.0.1", password: pw });
      try {
        expect(await r.keys("*")).toEqual([]);
      } finally {
        r.disconnect();
      }
      expect(readdirSync(out)).toEqual([]);
      await locked.stop();
      const down = looplm(["worker", "--queue", base]);
      expect((await down.exited).code).toBe(1);
      expect(down.err().trim()).toBe(
        `looplm: cannot reach Redis at ${shown}: connection refused (is redis-server running there?)`,
      );
    } finally {
      await locked.stop();
    }
  }, 120_000);
});

describe("connection problems are one-line errors", () => {
  it("refused, malformed URL, password missing or wrong", async () => {
    const closed = await redisServer();
    const url = closed.url;
    await closed.stop();
    const w = looplm(["worker", "--queue", url]);
    expect((await w.exited).code).toBe(1);
    expect(w.err().trim()).toBe(
      `looplm: cannot reach Redis at ${url}: connection refused (is redis-server running there?)`,
    );
    const bad = looplm(["sweep", ...tiny, ...FOUR, "--out", tmp(), "--queue", "http://x:1"]);
    expect((await bad.exited).code).toBe(1);
    expect(bad.err().trim()).toMatch(/^looplm: --queue must be redis:\/\/.*got "http:\/\/x:1"$/);

    const locked = await redisServer({ password: "s3cret" });
    try {
      const port = locked.port;
      await expect(checkRedis(parseQueueUrl(`redis://127.0.0.1:${port}`))).rejects.toThrow(
        `Redis at redis://127.0.0.1:${port} needs a password: give it in the URL, redis://:PASSWORD@host:port`,
      );
      await expect(checkRedis(parseQueueUrl(`redis://:nope@127.0.0.1:${port}`))).rejects.toThrow(
        `Redis at redis://:***@127.0.0.1:${port} rejected the user name or password`,
      );
      await expect(checkRedis(parseQueueUrl(locked.url))).resolves.toBeUndefined();
    } finally {
      await locked.stop();
    }
  }, 120_000);
});
