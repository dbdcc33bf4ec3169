/**
 * `looplm reproduce --queue`: a tiny study (its definition passed to runSweepStudy, as the other
 * study tests do) trained by real `looplm worker` processes through a real redis-server prints
 * what the same study trained in one process prints; the command itself fails in one line with
 * the password masked, and SIGTERM stops it watching with the command that continues.
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import { startBackend } from "../../backend.js";
import { parseQueueUrl } from "../../queue/connection.js";
import {
  looplm,
  oneLineFailures,
  redisServer,
  useRedisServer,
  waitFor,
} from "../../queue/redis-server.test-util.js";
import { QUEUE_NAME } from "../../queue/training-job.js";
import { buildProgram } from "../program.js";
import { runSweepStudy, seedDir } from "./run-sweep-study.js";
import { TINY_MODEL, TINY_TASK, tinyStudy, tinyTrain } from "./tiny-study.test-util.js";

const tmp = () => mkdtempSync(join(tmpdir(), "looplm-repro-queue-"));
/** The studies run in this process train on the portable kernels. */
const backend = await startBackend("portable");

/** Two arms, 4 members a seed (1⊗1, 1⊗2; 1⊗2, 2⊗1): several sweeps and seeds share the queue. */
const TINY = tinyStudy(3, {}, [
  {
    id: "iso-flops",
    protocol: "iso-flops",
    task: TINY_TASK,
    model: TINY_MODEL,
    base: 1,
    loops: [2],
    train: tinyTrain(3),
    paper: {},
  },
]);
const SEEDS = 2;
const SECRET = "a shared secret of 32 characters";
const sweepJson = (dir: string, arm: string, seed: number) =>
  JSON.parse(readFileSync(join(seedDir(dir, arm, seed), "sweep.json"), "utf8"));

const redis = useRedisServer();

describe("looplm reproduce --queue", () => {
  it("is documented in reproduce --help beside --jobs", () => {
    const help = buildProgram()
      .commands.find((c) => c.name() === "reproduce")!
      .helpInformation();
    expect(help).toMatch(/--jobs <N>\s+sweep studies: train N \(arm, seed\) sweeps at once/);
    expect(help).toMatch(/--queue <url>\s+train the sweep studies' members on `looplm worker`s/);
    expect(help).toMatch(/--secret <s>\s+with --queue: sign every job/);
  });

  it("trains a study's members on two signed-only workers with the numbers of a local run; a repeated run reuses them", async () => {
    const local = tmp();
    const one = await runSweepStudy(TINY, { backend, outDir: local, seeds: SEEDS, resume: false });

    const url = `${redis.url}/1`;
    const env = { LOOPLM_QUEUE_SECRET: SECRET };
    const workers = [1, 2].map(() => looplm(["worker", "--queue", url, "--threads", "1"], env));
    const dir = tmp();
    const lines: string[] = [];
    const queue = { address: parseQueueUrl(url), secret: SECRET };
    try {
      const two = await runSweepStudy(TINY, {
        backend,
        outDir: dir,
        seeds: SEEDS,
        resume: false,
        queue,
        log: (l) => lines.push(l),
      });
      expect(lines[0]).toMatch(
        /^tiny: 8 members on the queue at redis:\/\/127\.0\.0\.1:\d+\/1 \(2 arm\(s\) × 2 seed\(s\)\)/,
      );
      // the workers trained every member; this process only read the folders back
      expect(lines.filter((l) => l.endsWith(": already trained, kept"))).toHaveLength(8);
      expect(two.rows).toEqual(one.rows);
      expect(two.verdicts).toEqual(one.verdicts);
      for (const arm of ["iso-param", "iso-flops"])
        for (let seed = 1; seed <= SEEDS; seed++)
          expect(sweepJson(dir, arm, seed)).toEqual(sweepJson(local, arm, seed));
      // signed jobs, each bound to its record in its member's folder
      const err = workers.map((w) => w.err()).join("\n");
      for (const label of ["iso-param/1⊗1 seed 1", "iso-flops/2⊗1 seed 2"])
        expect(err).toContain(`training ${label} in `);
      const record = JSON.parse(
        readFileSync(join(seedDir(dir, "iso-flops", 2), "2x1", "queue-job.json"), "utf8"),
      );
      expect(record.job).toMatchObject({ label: "iso-flops/2⊗1 seed 2", train: { seed: 2 } });
      const q = new Queue(QUEUE_NAME, { connection: queue.address.options });
      try {
        const done = await q.getJobs(["completed"]);
        expect(done).toHaveLength(8);
        expect(done.every((j) => /^[0-9a-f]{64}$/.test(j.data.sig ?? ""))).toBe(true);
      } finally {
        await q.close();
      }
    } finally {
      for (const w of workers) w.proc.kill("SIGTERM");
      for (const w of workers) expect((await w.exited).code).toBe(0);
    }
    // again, with no worker running: every job is finished on the queue, nothing trains
    const again = await runSweepStudy(TINY, {
      backend,
      outDir: dir,
      seeds: SEEDS,
      resume: false,
      queue,
    });
    expect(again.rows).toEqual(one.rows);
  }, 300_000);

  it("a bad URL, an unreachable Redis and --jobs with --queue are one line each, the password masked", async () => {
    const pw = "hunter2-s3cret";
    const closed = await redisServer();
    const port = closed.port;
    await closed.stop();
    const run = (queue: string, more: string[] = []) =>
      looplm(["reproduce", "phop", "--seeds", "1", "--out", tmp(), "--queue", queue, ...more]);
    const runs = [
      run(`http://:${pw}@127.0.0.1:${port}`),
      run(`redis://:${pw}@127.0.0.1:${port}`),
      run(`redis://:${pw}@127.0.0.1:${port}`, ["--jobs", "2"]),
      run(`redis://:${pw}@127.0.0.1:${port}`, ["--overwrite"]),
    ];
    const lines = await oneLineFailures(runs, pw);
    expect(lines[0]).toBe(
      `looplm: --queue must be redis://[user:password@]host:port[/db] or rediss://… (TLS), got "http://:***@127.0.0.1:${port}"`,
    );
    expect(lines[1]).toBe(
      `looplm: cannot reach Redis at redis://:***@127.0.0.1:${port}: connection refused (is redis-server running there?)`,
    );
    expect(lines[2]).toMatch(/^looplm: --jobs does not combine with --queue: /);
    expect(lines[3]).toMatch(/^looplm: --overwrite does not combine with --queue: /);
  }, 120_000);

  it("SIGTERM stops watching, leaves the jobs on the queue and prints the command that continues", async () => {
    const pw = "hunter2-s3cret";
    const locked = await redisServer({ password: pw });
    try {
      const out = tmp();
      const url = `${locked.url}/2`;
      const r = looplm(["reproduce", "phop", "--seeds", "1", "--out", out, "--queue", url]);
      // no worker: the jobs wait on the queue, and the coordinator with them
      await waitFor("the coordinator to show its queued jobs", () => /: queued\n/.test(r.err()));
      await sleep(200);
      r.proc.kill("SIGTERM");
      const { code } = await r.exited;
      expect(code).toBe(143);
      expect(r.err()).not.toContain(pw);
      const last = r.err().trim().split("\n").at(-1)!;
      const shown = `redis://:***@127.0.0.1:${locked.port}/2`;
      expect(last).toMatch(
        /^looplm: stopped by SIGTERM: 0 of (\d+) jobs finished; the others stay on the queue, where the workers go on training them\. Resume with: /,
      );
      expect(
        last.endsWith(
          `Resume with: looplm reproduce phop --seeds 1 --scale cpu --out ${out} --queue ${shown} --resume`,
        ),
      ).toBe(true);
      const q = new Queue(QUEUE_NAME, { connection: parseQueueUrl(url).options });
      try {
        const waiting = await q.getJobs(["waiting"]);
        expect(waiting.length).toBe(Number(/0 of (\d+) jobs/.exec(last)![1]));
        // each job bound to its record in the study's folder
        for (const j of waiting)
          expect(existsSync(join(j.data.runDir, "queue-job.json"))).toBe(true);
      } finally {
        await q.close();
      }
    } finally {
      await locked.stop();
    }
  }, 120_000);
  it("sweep --queue stops watching the same way: the jobs stay, the command that continues is printed", async () => {
    const served = await redisServer();
    try {
      const out = join(tmp(), "sweep");
      const args = [
        "sweep",
        "--protocol",
        "iso-param",
        "--task",
        "phop",
        "--alphabet",
        "3",
        "--length",
        "8",
        "--hops",
        "2",
      ];
      const r = looplm([
        ...args,
        "--loops",
        "1,2",
        "--steps",
        "3",
        "--out",
        out,
        "--queue",
        served.url,
      ]);
      await waitFor("the coordinator to show its queued jobs", () => /: queued\n/.test(r.err()));
      r.proc.kill("SIGTERM");
      expect((await r.exited).code).toBe(143);
      expect(r.err()).toContain(
        "no longer watching the queue; its jobs stay there for the workers",
      );
      expect(r.err().trim().split("\n").at(-1)).toMatch(
        /^looplm: stopped by SIGTERM: 0 of 2 jobs finished; the others stay on the queue, where the workers go on training them\. Resume with: the same looplm sweep command$/,
      );
    } finally {
      await served.stop();
    }
  }, 120_000);
});
