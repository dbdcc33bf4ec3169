/**
 * Hostile input gets a message that names its real cause: forged and replayed queue jobs, a
 * job whose label is an object, a malformed %-escape in a Redis password, rediss:// against a
 * plain server, an integer beyond 2^53.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Queue } from "bullmq";
import { describe, expect, it } from "vitest";
import { parseQueueUrl } from "../queue/connection.js";
import { looplm, useRedisServer, waitFor } from "../queue/redis-server.test-util.js";
import {
  JOB_MARKER,
  jobRecordProblem,
  QUEUE_NAME,
  type TrainingJobData,
} from "../queue/training-job.js";
import { run } from "./run-in-process.test-util.js";
import { TINY_TRAIN } from "./tiny-args.test-util.js";

const tmp = () => mkdtempSync(join(tmpdir(), "looplm-cause-"));
const job = (runDir: string, label: unknown = "1⊗1") =>
  ({ v: 2, label, runDir, train: { seed: 0, steps: 10 } }) as unknown as TrainingJobData;

describe("messages without a queue", () => {
  it("a forged job (its folder has no record) and a replayed one are not blamed on file systems", () => {
    const d = tmp();
    const forged = jobRecordProblem(job(d), "x-s0-1");
    expect(forged?.message).toBe(
      `job 1⊗1: its run folder ${d} holds no ${JOB_MARKER}: no sweep enqueued this job there (a forged job, or the folder was emptied); refused`,
    );
    expect(forged?.retry).toBe(false);
    writeFileSync(join(d, JOB_MARKER), JSON.stringify({ id: "y-s0-2", label: "1⊗1", job: {} }));
    const replayed = jobRecordProblem(job(d), "x-s0-1");
    expect(replayed?.message).toBe(
      `job 1⊗1: ${join(d, JOB_MARKER)} records job "y-s0-2", not x-s0-1: a replayed or copied job; refused`,
    );
    for (const p of [forged, replayed]) expect(p?.message).not.toMatch(/filesystem|mounts/);
    // a folder this worker cannot see at all still gets the shared-folder hint
    expect(jobRecordProblem(job(join(d, "nowhere")), "x")?.message).toMatch(
      /cannot see its run folder .* every worker mounts/,
    );
  });

  it("a job whose label is an object is refused in words", () => {
    const d = tmp();
    mkdirSync(d, { recursive: true });
    expect(jobRecordProblem(job(d, { toString: 1 }), "j1")?.message).toBe(
      "job j1: its label is an object, not a string; refused",
    );
    expect(jobRecordProblem(job(d, ["a"]), "j1")?.message).toBe(
      "job j1: its label is a list, not a string; refused",
    );
    // (a 2 MB label would be printed whole in every line naming the job)
    expect(jobRecordProblem(job(d, "x".repeat(2 ** 21)), "j1")?.message).toBe(
      "job j1: its label is 2097152 characters long, more than a member's (at most 256); refused",
    );
  });

  it("a malformed %-escape in the password is named, the password not shown", () => {
    expect(() => parseQueueUrl("redis://:s3cr%zzpw@127.0.0.1:6379")).toThrow(
      "--queue: the password in the URL has a malformed %-escape (a % must be followed by two hex digits; write a literal % as %25)",
    );
    try {
      parseQueueUrl("redis://:s3cr%zzpw@127.0.0.1:6379");
    } catch (e) {
      expect((e as Error).message).not.toContain("s3cr");
    }
    expect(parseQueueUrl("redis://:a%25b@127.0.0.1:6379").options.password).toBe("a%b");
  });

  it("--batch 9007199254740993 exceeds the largest safe integer", async () => {
    await expect(
      run("train", ...TINY_TRAIN, "--batch", "9007199254740993", "--out", join(tmp(), "r")),
    ).rejects.toThrow(
      "--batch 9007199254740993 exceeds the largest safe integer (9007199254740991)",
    );
    await expect(run("train", ...TINY_TRAIN, "--batch", "4.5", "--out", "r")).rejects.toThrow(
      '--batch must be an integer, got "4.5"',
    );
  });
});

describe("messages with a plain Redis", () => {
  const redis = useRedisServer();

  it("rediss:// against it says the TLS handshake failed, with no deprecation warning", async () => {
    const url = `rediss://127.0.0.1:${redis.port}`;
    const w = looplm(["worker", "--queue", url]);
    expect((await w.exited).code).toBe(1);
    expect(w.err()).not.toMatch(/DeprecationWarning|DEP0123/);
    expect(w.err().trim()).toBe(
      `looplm: Redis at ${url}: the TLS handshake failed (the server never answered it); the server takes connections but does not speak TLS there: if it is a plain Redis, use redis://`,
    );
  }, 60_000);

  it("a job labelled with an object fails in one line, printed by the worker too", async () => {
    const url = `${redis.url}/7`;
    const queue = new Queue(QUEUE_NAME, { connection: parseQueueUrl(url).options });
    const w = looplm(["worker", "--queue", url, "--threads", "1"]);
    try {
      const j = await queue.add("train", { v: 2, label: { toString: 1 }, runDir: tmp() } as never, {
        jobId: "object-label",
        attempts: 1,
      });
      await waitFor("the job to fail", async () => (await j.getState()) === "failed");
      const reason = "job object-label: its label is an object, not a string; refused";
      expect((await queue.getJob("object-label"))!.failedReason).toBe(reason);
      await waitFor("the worker to print it", () => w.err().includes(reason));
    } finally {
      await queue.close();
      w.proc.kill("SIGTERM");
      await w.exited;
    }
  }, 60_000);
});
