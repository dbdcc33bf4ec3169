import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { LOCK_FILE } from "@loop/train/node";
import { describe, expect, it } from "vitest";
import { startBackend } from "../../backend.js";
import { WatchInterrupted } from "../interrupt.js";
import { armSeedDir } from "./arm-inputs.js";
import { trainArmsInParallel } from "./parallel-arms.js";
import { runSweepStudy } from "./run-sweep-study.js";
import { shareArm, waitForSharedSweep } from "./shared-arm.js";
import { removeStudyResults } from "./study-results.js";
import type { ArmDef, StudyDef } from "./study-types.js";
import { TINY_MODEL, TINY_TASK, tinyTrain } from "./tiny-study.test-util.js";

const backend = await startBackend("portable");
const tmp = () => mkdtempSync(join(tmpdir(), "looplm-shared-arm-"));

const lenderArm: ArmDef = {
  id: "answer-only",
  protocol: "iso-param",
  task: TINY_TASK,
  model: TINY_MODEL,
  base: 1,
  loops: [1, 2],
  train: tinyTrain(2),
  paper: {},
};
const lender: StudyDef = {
  name: "lender",
  title: "lender",
  notes: "",
  arms: [lenderArm],
  claims: [],
};
const borrower: StudyDef = {
  name: "borrower",
  title: "borrower",
  notes: "",
  arms: [shareArm({ ...lenderArm, id: "R2" }, "lender", lenderArm)],
  claims: [],
};

/** Each member's final-checkpoint time: a member trained again gets a new one. */
function finals(dir: string): number[] {
  return ["1x1", "1x2"].map((m) => statSync(join(dir, m, "final", "config.json")).mtimeMs);
}

describe("shared arms: one sweep for two studies", () => {
  it("a differing setting is refused by name when the study is built", () => {
    expect(() =>
      shareArm({ ...lenderArm, id: "R2", train: tinyTrain(3) }, "lender", lenderArm),
    ).toThrow(
      /arm R2 is declared the same sweep as lender's answer-only, but its flags differ at "3" against "2"/,
    );
    expect(() => shareArm({ ...lenderArm, id: "R2", loops: [1, 3] }, "lender", lenderArm)).toThrow(
      /flags differ at "1,3" against "1,2"/,
    );
  });

  it("the borrowing study trains in the lender's folder; the lender then reads it without training", async () => {
    const root = tmp();
    const dir = armSeedDir(join(root, "borrower"), borrower.arms[0]!, 1);
    expect(dir).toBe(join(root, "lender", "answer-only", "seed-1"));
    const b = await runSweepStudy(borrower, {
      backend,
      outDir: join(root, "borrower"),
      seeds: 1,
      resume: false,
    });
    expect(existsSync(join(root, "borrower", "R2"))).toBe(false);
    const before = finals(dir);
    // the lender, not resumed, would refuse a folder holding a sweep; resumed it reads it
    const a = await runSweepStudy(lender, {
      backend,
      outDir: join(root, "lender"),
      seeds: 1,
      resume: true,
    });
    expect(finals(dir)).toEqual(before);
    expect(a.rows.map((r) => r.values)).toEqual(b.rows.map((r) => r.values));
    // the borrower run again, even with --overwrite, continues the lender's folder untouched
    const again = await runSweepStudy(borrower, {
      backend,
      outDir: join(root, "borrower"),
      seeds: 1,
      resume: false,
      overwrite: true,
    });
    expect(finals(dir)).toEqual(before);
    expect(again.rows.map((r) => r.values)).toEqual(b.rows.map((r) => r.values));
  });

  it("--overwrite of the borrowing study leaves the lender's folders", async () => {
    const root = tmp();
    await runSweepStudy(borrower, {
      backend,
      outDir: join(root, "borrower"),
      seeds: 1,
      resume: false,
    });
    const removed = removeStudyResults(join(root, "borrower"), "borrower", []);
    expect(removed).toContain("seed-1.json");
    expect(existsSync(join(root, "lender", "answer-only", "seed-1", "sweep.json"))).toBe(true);
  });

  // the borrower waits for the lender's process, and the lender (told who borrows) for the borrower's
  const lent: StudyDef = { ...lender, lentTo: { "answer-only": ["borrower"] } };
  it.each([
    ["the borrower", borrower, borrower.arms[0]!, "R2 is lender's answer-only sweep"],
    ["the lender", lent, lenderArm, "answer-only is also borrower's sweep (a shared arm)"],
  ])(
    "%s waits while a live process trains the shared folder, then goes on",
    async (_, def, arm, what) => {
      const dir = join(tmp(), "seed-1");
      mkdirSync(dir);
      const lock = join(dir, LOCK_FILE);
      // the parent process (alive) holds it
      writeFileSync(lock, JSON.stringify({ pid: process.ppid, host: hostname(), since: "x" }));
      const lines: string[] = [];
      let done = false;
      const waiting = waitForSharedSweep(def, arm, dir, {
        pollMs: 20,
        log: (l) => lines.push(l),
      }).then(() => {
        done = true;
      });
      await new Promise((r) => setTimeout(r, 120));
      expect(done).toBe(false);
      expect(lines).toEqual([
        `${what}, which process ${process.ppid} on ${hostname()} is training in ${dir}: waiting for it to finish`,
      ]);
      writeFileSync(lock, readFileSync(lock, "utf8").replace(String(process.ppid), "999999999"));
      await waiting;
      expect(done).toBe(true);
    },
  );

  it("an arm no other study shares never waits; an abort ends a wait as an interruption", async () => {
    const dir = join(tmp(), "seed-1");
    mkdirSync(dir);
    writeFileSync(
      join(dir, LOCK_FILE),
      JSON.stringify({ pid: process.ppid, host: hostname(), since: "x" }),
    );
    await waitForSharedSweep(lender, lenderArm, dir, { pollMs: 20 });
    const ac = new AbortController();
    const stopped = waitForSharedSweep(lent, lenderArm, dir, { pollMs: 20, signal: ac.signal });
    ac.abort();
    await expect(stopped).rejects.toBeInstanceOf(WatchInterrupted);
  });

  it("--jobs runs a shared sweep with --resume in the lender's folder, never --overwrite", async () => {
    const root = tmp();
    const argv = join(root, "argv.json");
    // a launcher that keeps the child's arguments and succeeds at once
    const keep = `require("node:fs").writeFileSync(${JSON.stringify(argv)}, JSON.stringify(process.argv.slice(1)))`;
    await trainArmsInParallel(borrower, {
      outDir: join(root, "borrower"),
      seeds: [1],
      jobs: 2,
      resume: false,
      overwrite: true,
      launcher: { exec: process.execPath, args: ["-e", keep, "--"] },
    });
    const args = JSON.parse(readFileSync(argv, "utf8")) as string[];
    expect(args[0]).toBe("sweep");
    expect(args[args.indexOf("--out") + 1]).toBe(join(root, "lender", "answer-only", "seed-1"));
    expect(args).toContain("--resume");
    expect(args).not.toContain("--overwrite");
  });
});
