import { spawnSync } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { LoopedModel, parseConfig } from "@loop/looped";
import { suiteRuns } from "@loop/test-support";
import { describe, expect, it } from "vitest";
import { resolveTrainOptions } from "../options.js";
import { RunInterrupted, type RunOptions, runTraining } from "./run.js";
import { loadTrainingCheckpoint, saveTrainingCheckpoint } from "./run-files.js";
import { cfg, fresh, task } from "./run-fixture.test-util.js";
import { openRunFolder, readRunInfo, resumeTrainOptions } from "./run-folder.js";
import { LOCK_FILE, lockRunFolder, runFolderHolder } from "./run-lock.js";

const train = resolveTrainOptions({
  steps: 6,
  batchSize: 4,
  warmupSteps: 2,
  checkpointEvery: 2,
  evalEvery: 0,
  seed: 7,
});
const tmp = (p: string) => mkdtempSync(join(tmpdir(), p));
/** Train a fresh model on the task with `train` in `dir`, with `more` options on top. */
const trainIn = (dir: string, more: Partial<RunOptions> = {}) =>
  runTraining({ runDir: dir, model: fresh(), task, train, ...more });
/** Train in `dir` and crash after step 5 (the last checkpoint is step 4). */
const crashAfter5 = (dir: string) =>
  expect(
    trainIn(dir, {
      onStep: (m) => {
        if (m.step === 5) throw new Error("crash");
      },
    }),
  ).rejects.toThrow(/crash/);
const logSteps = (dir: string) =>
  readFileSync(join(dir, "log.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { step: number; lr: number; loss: number });
/** A process id that no longer runs. */
const deadPid = () => spawnSync(process.execPath, ["-e", ""]).pid;

describe("run folders: nothing overwrites a run", () => {
  it("an existing run is an error unless resume or overwrite is asked for", async () => {
    const dir = tmp("rf-exist-");
    await trainIn(dir);
    await expect(trainIn(dir)).rejects.toThrow(
      /already holds a run: resume it \(--resume\) or replace it \(--overwrite\)/,
    );
    expect(logSteps(dir)).toHaveLength(6);
    const short = resolveTrainOptions({ ...train, steps: 2 });
    await trainIn(dir, { train: short, overwrite: true });
    expect(logSteps(dir)).toHaveLength(2);
    expect(existsSync(join(dir, "checkpoints", "step-000006"))).toBe(false);
    expect(() => openRunFolder(dir, { resume: true, overwrite: true })).toThrow(/exclude/);
  });

  it("a folder it created is removed when released empty; an existing or used one is kept", () => {
    const parent = tmp("rf-empty-");
    const created = join(parent, "new");
    openRunFolder(created).release();
    expect(existsSync(created)).toBe(false);
    const existing = join(parent, "old");
    mkdirSync(existing);
    openRunFolder(existing).release();
    expect(existsSync(existing)).toBe(true);
    const used = join(parent, "used");
    const folder = openRunFolder(used);
    writeFileSync(join(used, "run.json"), "{}");
    folder.release();
    expect(existsSync(join(used, "run.json"))).toBe(true);
    expect(existsSync(join(used, LOCK_FILE))).toBe(false);
  });
  it("a folder locked by a live process is a one-line error; a dead owner's lock is taken over", () => {
    const dir = tmp("rf-lock-");
    const live = { pid: process.ppid, host: hostname(), since: "x" };
    expect(runFolderHolder(dir)).toBeNull();
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify(live));
    expect(runFolderHolder(dir)).toEqual({ pid: process.ppid, host: hostname() });
    expect(() => openRunFolder(dir)).toThrow(
      new RegExp(`run folder .* is in use by process ${process.ppid} `),
    );
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ ...live, pid: deadPid() }));
    expect(runFolderHolder(dir)).toBeNull();
    const f = openRunFolder(dir);
    // this process's own lock does not hold it up
    expect(runFolderHolder(dir)).toBeNull();
    expect(JSON.parse(readFileSync(join(dir, LOCK_FILE), "utf8")).pid).toBe(process.pid);
    // Re-entrant within the process: the lock goes only with the last release.
    const again = lockRunFolder(dir);
    again();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(true);
    f.release();
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it("a second process cannot train in a locked folder", () => {
    const dir = tmp("rf-lock2-");
    const release = lockRunFolder(dir);
    const src = new URL("./run-lock.ts", import.meta.url).pathname;
    const r = spawnSync(
      process.execPath,
      [
        "--import",
        "tsx",
        "--conditions=@loop/source",
        "-e",
        `import(${JSON.stringify(src)}).then((m) => m.lockRunFolder(${JSON.stringify(dir)})).catch((e) => { console.error(e.message); process.exit(3); })`,
      ],
      { encoding: "utf8" },
    );
    release();
    expect(r.status).toBe(3);
    expect(r.stderr.trim()).toMatch(new RegExp(`in use by process ${process.pid} `));
  });
});

/** The full-disk test writes through /dev/full (Linux); elsewhere it says why (a CI failure). */
const hasDevFull = suiteRuns(
  "a full disk during a log append",
  existsSync("/dev/full") ? null : "this system has no /dev/full to simulate a full disk",
  "runs on Linux, which has /dev/full",
);

describe("run folders: full disks", () => {
  it.runIf(hasDevFull)(
    "a full disk during a log append is a sentence naming log.jsonl",
    async () => {
      const dir = tmp("rf-full-");
      const log = join(dir, "log.jsonl");
      await expect(
        trainIn(dir, {
          onStep: (m) => {
            if (m.step === 2) {
              rmSync(log);
              symlinkSync("/dev/full", log); // every write to it fails with ENOSPC
            }
          },
        }),
      ).rejects.toThrow(new RegExp(`^cannot append to ${log}: the disk is full$`));
      expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    },
  );
});

describe("run folders: temporary files", () => {
  it("opening a folder removes what a killed writer left mid-write, not a live writer's files", async () => {
    const dir = tmp("rf-temp-");
    await trainIn(dir);
    const dead = deadPid();
    const ck = join(dir, "checkpoints", "step-000006");
    const stale = [
      join(dir, `.log.jsonl.tmp-${dead}-1`),
      join(ck, `.model.safetensors.tmp-${dead}-2`),
      join(dir, `run.lock.tmp-${dead}-3`),
    ];
    const live = join(dir, `.run.json.tmp-${process.ppid}-4`);
    for (const p of [...stale, live]) writeFileSync(p, "partial");
    openRunFolder(dir, { resume: true }).release();
    expect(stale.filter((p) => existsSync(p))).toEqual([]);
    expect(existsSync(live)).toBe(true);
  });
});

describe("run folders: resume continues the run that was started", () => {
  it("rejects a different model or option, naming it", async () => {
    const dir = tmp("rf-diff-");
    await trainIn(dir);
    const bigger = resolveTrainOptions({ ...train, batchSize: 8 });
    await expect(trainIn(dir, { train: bigger, resume: true })).rejects.toThrow(
      /resume: batchSize is 8 but .*run.json has 4; only steps, evalEvery/,
    );
    const oneLoop = new LoopedModel(parseConfig({ ...cfg, n_loops: 1 }));
    await expect(
      runTraining({ runDir: dir, model: oneLoop, task, train, resume: true }),
    ).rejects.toThrow(/resume: the model's n_loops is 1 but .*run.json has 2/);
    expect(readRunInfo(dir).train.batchSize).toBe(4);
  });

  it("a finished run is not retrained; extending it keeps the learning-rate schedule and says how", async () => {
    const dir = tmp("rf-extend-");
    await trainIn(dir);
    await expect(trainIn(dir, { resume: true })).rejects.toThrow(
      /already finished its 6 steps; resume with more steps/,
    );
    const before = logSteps(dir);
    expect(() => resumeTrainOptions(train, { steps: 4 })).toThrow(/steps can only grow/);
    const { train: longer, notes } = resumeTrainOptions(train, { steps: 9 });
    expect(notes).toEqual([
      `extending the run from 6 to 9 steps: the learning rate keeps its 6-step warmup-cosine schedule and stays at its final value ${train.minLr.toExponential(2)} for steps 7–9`,
    ]);
    await trainIn(dir, { train: longer, resume: true });
    const after = logSteps(dir);
    expect(after.slice(0, 6)).toEqual(before);
    expect(after.slice(6).map((r) => r.lr)).toEqual([train.minLr, train.minLr, train.minLr]);
    expect(readRunInfo(dir).train).toMatchObject({ steps: 9, scheduleSteps: 6 });
  });

  it("falls back to the newest valid checkpoint and says so", async () => {
    const dir = tmp("rf-fallback-");
    const full = tmp("rf-full-");
    await trainIn(full);
    await crashAfter5(dir);
    writeFileSync(join(dir, "checkpoints", "step-000004", "model.safetensors"), "garbage");
    const notes: string[] = [];
    await runTraining({
      runDir: dir,
      model: fresh(9),
      task,
      train,
      resume: true,
      onNote: (l) => notes.push(l),
    });
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(
      /skipped damaged checkpoint: .*step-000004.*; resuming from .*step-000002 instead/,
    );
    expect(logSteps(dir)).toEqual(
      logSteps(full).map((r) => ({
        ...r,
        tokens_per_s: expect.any(Number),
        elapsed_s: expect.any(Number),
      })),
    );
  });

  it("validates trainer.json against the checkpoint (step −3, 1000) and the log", async () => {
    const dir = tmp("rf-trainer-");
    await trainIn(dir);
    const ck = join(dir, "checkpoints", "step-000006");
    const tj = join(ck, "trainer.json");
    const good = JSON.parse(readFileSync(tj, "utf8"));
    for (const [step, msg] of [
      [-3, /"step" must be an integer ≥ 1, got -3/],
      [1000, /"step" is 1000 but the folder is step 6/],
    ] as const) {
      writeFileSync(tj, JSON.stringify({ ...good, step }));
      expect(() => loadTrainingCheckpoint(ck, fresh())).toThrow(msg);
    }
    writeFileSync(tj, JSON.stringify({ ...good, elapsed_s: "x" }));
    expect(() => loadTrainingCheckpoint(ck, fresh())).toThrow(/"elapsed_s" must be a number/);
    // a mixed-precision run's loss scale (absent in fp32 runs) is read back, and checked
    writeFileSync(tj, JSON.stringify(good));
    expect(good.loss_scale).toBeUndefined();
    expect(loadTrainingCheckpoint(ck, fresh()).lossScale).toBeUndefined();
    const model = fresh();
    const mixed = { ...loadTrainingCheckpoint(ck, model), lossScale: { scale: 2048, good: 7 } };
    const again = saveTrainingCheckpoint(tmp("rf-scale-"), model, mixed);
    expect(JSON.parse(readFileSync(join(again, "trainer.json"), "utf8")).loss_scale).toEqual({
      scale: 2048,
      good: 7,
    });
    expect(loadTrainingCheckpoint(again, fresh())).toEqual(mixed);
    writeFileSync(tj, JSON.stringify({ ...good, loss_scale: { scale: 2048 } }));
    expect(() => loadTrainingCheckpoint(ck, fresh())).toThrow(/"loss_scale" must be \{"scale"/);
    // Both kept checkpoints damaged: resume stops, naming each, and the log is untouched.
    writeFileSync(join(dir, "checkpoints", "step-000004", "trainer.json"), "{");
    const extend = resumeTrainOptions(train, { steps: 8 }).train;
    await expect(trainIn(dir, { train: extend, resume: true })).rejects.toThrow(
      /no valid checkpoint .*step-000006.*step-000004/,
    );
    expect(logSteps(dir)).toHaveLength(6);
    // A log shorter than the checkpoint is an inconsistent folder, named.
    writeFileSync(tj, JSON.stringify(good));
    writeFileSync(
      join(dir, "log.jsonl"),
      `${readFileSync(join(dir, "log.jsonl"), "utf8").split("\n").slice(0, 3).join("\n")}\n`,
    );
    await expect(trainIn(dir, { train: extend, resume: true })).rejects.toThrow(
      /log.jsonl does not hold steps 1..6 of the checkpoint/,
    );
  });

  it("drops a torn last log line and names the file for any other damage", async () => {
    const dir = tmp("rf-torn-");
    await crashAfter5(dir);
    const log = join(dir, "log.jsonl");
    appendFileSync(log, '{"step":6,"loss":1.0');
    const notes: string[] = [];
    await trainIn(dir, {
      resume: true,
      onNote: (l) => notes.push(l),
    });
    expect(notes).toEqual([expect.stringMatching(/dropped a torn last line of .*log.jsonl/)]);
    expect(logSteps(dir).map((r) => r.step)).toEqual([1, 2, 3, 4, 5, 6]);
    const lines = readFileSync(log, "utf8").split("\n");
    lines[1] = "{oops";
    writeFileSync(log, lines.join("\n"));
    const more = resumeTrainOptions(train, { steps: 7 }).train;
    await expect(trainIn(dir, { train: more, resume: true })).rejects.toThrow(
      /log.jsonl:2 is not valid JSON/,
    );
  });

  it("a torn line of a checkpointed step: an older checkpoint is resumed and the step re-run", async () => {
    const full = tmp("rf-torn-full-");
    const longer = resumeTrainOptions(train, { steps: 8 }).train;
    await trainIn(full);
    await trainIn(full, { train: longer, resume: true });
    const dir = tmp("rf-torn-ck-");
    await trainIn(dir);
    // the line of step 6, the step of the newest checkpoint (and of final/), cut short
    const log = join(dir, "log.jsonl");
    const text = readFileSync(log, "utf8");
    writeFileSync(log, text.slice(0, text.lastIndexOf('{"step":6') + 15));
    const notes: string[] = [];
    await trainIn(dir, {
      train: longer,
      resume: true,
      onNote: (l) => notes.push(l),
    });
    expect(notes[0]).toMatch(
      /log.jsonl lost the line of step 6 \(its last line was torn\): .*step-000006 is passed over for an older checkpoint/,
    );
    expect(notes[1]).toMatch(/dropped a torn last line/);
    // steps 5–8 trained from the step-4 checkpoint: the log of an uninterrupted run, bit for bit
    const strip = (rs: ReturnType<typeof logSteps>) =>
      rs.map(({ step, lr, loss }) => ({ step, lr, loss }));
    expect(strip(logSteps(dir))).toEqual(strip(logSteps(full)));
  });

  it("an aborted run checkpoints the step it finished and resumes exactly", async () => {
    const full = tmp("rf-sig-full-");
    await trainIn(full);
    const dir = tmp("rf-sig-");
    const ac = new AbortController();
    let err: unknown;
    try {
      await trainIn(dir, {
        signal: ac.signal,
        onStep: (m) => {
          if (m.step === 3) ac.abort();
        },
      });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RunInterrupted);
    expect((err as RunInterrupted).step).toBe(3);
    expect((err as RunInterrupted).checkpoint).toMatch(/step-000003$/);
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    await trainIn(dir, { resume: true });
    const strip = (rs: { step: number; loss: number; lr: number }[]) =>
      rs.map(({ step, loss, lr }) => ({ step, loss, lr }));
    expect(strip(logSteps(dir))).toEqual(strip(logSteps(full)));
  });

  it("a checkpoint with non-finite weights or moments is refused, naming the tensor", async () => {
    const dir = tmp("rf-nan-");
    await trainIn(dir);
    const ck = join(dir, "checkpoints", "step-000006");
    const nan = fresh();
    nan.embeddings.data[3] = Number.NaN;
    const { saveCheckpoint } = await import("@loop/looped/node");
    saveCheckpoint(ck, nan);
    expect(() => loadTrainingCheckpoint(ck, fresh())).toThrow(
      /model.safetensors is damaged — non-finite values: backbone.embeddings.weight \(NaN at index 3\)/,
    );
  });
});
