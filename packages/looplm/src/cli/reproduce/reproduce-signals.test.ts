/**
 * `looplm reproduce` stops as `looplm train` does, under `pnpm looplm` too: SIGTERM to pnpm alone
 * (its shell does not pass it on, and node is re-parented) and Ctrl-C to the whole group each
 * finish the member's step, checkpoint it, release every lock, print the resume command and exit
 * 143/130, leaving no process behind; the resume command then continues from the checkpoint.
 * `--overwrite` removes the old study's results and seed records first, so the interrupted study
 * shows none and its resume trains anew.
 */
import { spawn, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { removeStudyResults, studyFolders } from "./study-results.js";

const root = fileURLToPath(new URL("../../../../..", import.meta.url));
const tmp = () => mkdtempSync(join(tmpdir(), "looplm-repro-sig-"));

/** `pnpm looplm …` from the workspace root, its stderr collected as it comes. */
function pnpmLooplm(args: string[]) {
  const child = spawn("pnpm", ["looplm", ...args], {
    cwd: root,
    env: { ...process.env, LOOPLM_THREADS: "1" },
  });
  let stderr = "";
  child.stderr.on("data", (b) => (stderr += b));
  child.stdout.resume();
  const done = new Promise<{ code: number | null; signal: string | null }>((res) =>
    child.on("close", (code, signal) => res({ code, signal })),
  );
  return { child, done, stderr: () => stderr };
}

/** Process ids below `pid`. */
function descendants(pid: number): number[] {
  const r = spawnSync("pgrep", ["-P", String(pid)], { encoding: "utf8" });
  const kids = r.stdout.split("\n").filter(Boolean).map(Number);
  return kids.flatMap((k) => [k, ...descendants(k)]);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Poll `probe` every 100 ms, at most `seconds`; the test fails naming `what` after that. */
async function waitFor<T>(what: string, probe: () => T | null | false, seconds = 120): Promise<T> {
  for (let i = 0; i < seconds * 10; i++) {
    const v = probe();
    if (v) return v;
    await sleep(100);
  }
  throw new Error(`timed out after ${seconds} s waiting for ${what}`);
}

const logLines = (runDir: string) => {
  const p = join(runDir, "log.jsonl");
  return existsSync(p) ? readFileSync(p, "utf8").trim().split("\n").filter(Boolean).length : 0;
};

/** Every run.lock under `dir`. */
function locks(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) =>
    f.endsWith("run.lock"),
  );
}

describe("looplm reproduce and signals", () => {
  it("--overwrite removes the old study's seed records and results, plots included, and nothing else", () => {
    const dir = tmp();
    const old = [
      "results.json",
      "results.md",
      "report.html",
      "phop-metric.svg",
      "phop-per-step.svg",
    ];
    for (const f of [...old, "mano-metric.svg", "notes.txt"]) writeFileSync(join(dir, f), "old");
    // the seed records first (a folder under such a name is left for the reader to refuse)
    for (const f of ["seed-1.json", "seed-12.json", "seed-x.json"])
      writeFileSync(join(dir, f), "{}");
    mkdirSync(join(dir, "seed-3.json"));
    const gone = removeStudyResults(dir, "phop");
    expect(gone.slice(0, 2).sort()).toEqual(["seed-1.json", "seed-12.json"]);
    expect(gone.slice(2).sort()).toEqual([...old].sort());
    expect(readdirSync(dir).sort()).toEqual([
      "mano-metric.svg",
      "notes.txt",
      "seed-3.json",
      "seed-x.json",
    ]);
    expect(removeStudyResults(join(dir, "none"), "phop")).toEqual([]);
  });

  it("--overwrite removes the folders the old study trained in, unless a live process trains there", () => {
    const dir = tmp();
    // an old study's sweeps at both scales, with a member, its scores and a lock of a dead process
    for (const arm of ["dense", "iso-param"]) {
      mkdirSync(join(dir, arm, "seed-1", "1x1", "final"), { recursive: true });
      writeFileSync(join(dir, arm, "seed-1", "sweep.json"), "{}");
      writeFileSync(join(dir, arm, "seed-1", "per-length.json"), "{}");
    }
    const dead = spawnSync(process.execPath, ["-e", "process.pid"]).pid!;
    const lock = (d: string, pid: number) =>
      writeFileSync(join(d, "run.lock"), `${JSON.stringify({ pid, host: hostname() })}\n`);
    lock(join(dir, "dense", "seed-1", "1x1"), dead);
    mkdirSync(join(dir, "mine"));
    writeFileSync(join(dir, "seed-1.json"), "{}");
    expect(studyFolders(dir, "phop").sort()).toEqual(["answer-only", "dense", "iso-param"]);
    // a member some process is still training: refused, nothing removed
    const live = spawn("sleep", ["60"]);
    try {
      lock(join(dir, "iso-param", "seed-1", "1x1"), live.pid!);
      expect(() => removeStudyResults(dir, "phop", studyFolders(dir, "phop"))).toThrow(
        `run folder ${join(dir, "iso-param", "seed-1", "1x1")} is in use by process ${live.pid}`,
      );
      expect(readdirSync(dir).sort()).toEqual(["dense", "iso-param", "mine", "seed-1.json"]);
    } finally {
      live.kill("SIGKILL");
    }
    // an arm folder that is a link elsewhere: refused, nothing removed
    const elsewhere = tmp();
    symlinkSync(elsewhere, join(dir, "dense-linked"));
    expect(() => removeStudyResults(dir, "phop", ["dense-linked", "dense"])).toThrow(
      `${join(dir, "dense-linked")} is a link (to ${elsewhere}): --overwrite removes the folders a study trained in, not what a link points to`,
    );
    expect(existsSync(join(dir, "seed-1.json"))).toBe(true);
    rmSync(join(dir, "dense-linked"));
    rmSync(join(dir, "iso-param", "seed-1", "1x1", "run.lock"));
    // what an --overwrite killed while removing left behind goes too
    mkdirSync(join(dir, ".dense.removing-123", "seed-2"), { recursive: true });
    const gone = removeStudyResults(dir, "phop", studyFolders(dir, "phop"));
    expect(gone).toEqual(["seed-1.json", "dense", "iso-param"]);
    expect(readdirSync(dir)).toEqual(["mine"]);
    // the exit-gate study trains in one folder per seed
    for (const f of ["seed-1", "seed-2", "seed-x"]) mkdirSync(join(dir, f));
    writeFileSync(join(dir, "seed-3"), "a file");
    expect(studyFolders(dir, "exit-gate").sort()).toEqual(["seed-1", "seed-2"]);
  });

  it("under pnpm looplm: SIGTERM, then Ctrl-C after resuming, each checkpoint and leave nothing running", async () => {
    const out = join(tmp(), "studies");
    const study = join(out, "phop");
    mkdirSync(study, { recursive: true });
    for (const f of ["results.json", "results.md", "report.html", "phop-metric.svg", "seed-1.json"])
      writeFileSync(join(study, f), "an old study's results");
    // one sweep at a time, in this process: the member stops and says its step
    const args = ["reproduce", "phop", "--seeds", "1", "--jobs", "1", "--out", out];
    const member = join(study, "dense", "seed-1", "1x1");
    const resumeHint = `Resume with: looplm reproduce phop --seeds 1 --scale cpu --out ${out} --resume`;
    const stoppedAt = (sig: string, stderr: string) => {
      const line = stderr.split("\n").find((l) => l.startsWith("looplm: stopped by"));
      expect(line).toMatch(
        new RegExp(
          `^looplm: stopped by ${sig} after step (\\d+); checkpoint saved in .*step-0*\\1\\. `,
        ),
      );
      expect(line!.endsWith(resumeHint)).toBe(true);
      return Number(/after step (\d+)/.exec(line!)![1]);
    };

    // 1. `kill <pnpm>`: pnpm dies at once; node, re-parented, must stop by itself.
    const first = pnpmLooplm([...args, "--overwrite"]);
    await waitFor("the first member to log 3 steps", () => logLines(member) >= 3);
    // the old study's results went before any training
    expect(readdirSync(study).filter((f) => !["dense"].includes(f))).toEqual([]);
    const tree1 = [first.child.pid!, ...descendants(first.child.pid!)];
    process.kill(first.child.pid!, "SIGTERM");
    const r1 = await first.done;
    expect(r1.signal ?? r1.code).toMatch(/^(SIGTERM|143)$/);
    const step1 = stoppedAt("SIGTERM", first.stderr());
    await waitFor("every process of the first run to end", () => tree1.every((p) => !alive(p)), 30);
    expect(locks(out)).toEqual([]);
    expect(logLines(member)).toBe(step1);

    // 2. the printed command resumes (no stale lock refuses it); Ctrl-C reaches the whole group.
    const second = pnpmLooplm([...args, "--resume"]);
    await waitFor("the resumed member to train past its checkpoint", () =>
      second.stderr().includes("resuming from its last checkpoint") && logLines(member) > step1 + 2
        ? true
        : null,
    );
    const tree2 = [second.child.pid!, ...descendants(second.child.pid!)];
    for (const pid of tree2) process.kill(pid, "SIGINT");
    const r2 = await second.done;
    expect(r2.signal ?? r2.code).toMatch(/^(SIGINT|130)$/);
    const step2 = stoppedAt("SIGINT", second.stderr());
    expect(step2).toBeGreaterThan(step1);
    await waitFor(
      "every process of the second run to end",
      () => tree2.every((p) => !alive(p)),
      30,
    );
    expect(locks(out)).toEqual([]);
    expect(logLines(member)).toBe(step2);
    expect(existsSync(join(study, "results.json"))).toBe(false);
  }, 300_000);
  it("--jobs 2: SIGTERM reaches every child sweep, each checkpoints, nothing keeps running", async () => {
    const out = join(tmp(), "studies");
    const run = pnpmLooplm(["reproduce", "phop", "--seeds", "2", "--jobs", "2", "--out", out]);
    // two lanes: seed 1's two arms (dense, answer-only) train side by side
    const members = ["dense", "answer-only"].map((arm) => join(out, "phop", arm, "seed-1", "1x1"));
    await waitFor("both arms' first members to log 3 steps", () =>
      members.every((m) => logLines(m) >= 3),
    );
    const tree = [run.child.pid!, ...descendants(run.child.pid!)];
    process.kill(run.child.pid!, "SIGTERM");
    const r = await run.done;
    expect(r.signal ?? r.code).toMatch(/^(SIGTERM|143)$/);
    await waitFor("every process to end", () => tree.every((p) => !alive(p)), 60);
    const line = run
      .stderr()
      .split("\n")
      .find((l) => l.startsWith("looplm: stopped by"));
    expect(line).toBe(
      `looplm: stopped by SIGTERM: 2 sweep(s) in training saved a checkpoint. Resume with: looplm reproduce phop --seeds 2 --scale cpu --out ${out} --jobs 2 --resume`,
    );
    expect(locks(out)).toEqual([]);
    for (const m of members) expect(readdirSync(join(m, "checkpoints")).length).toBeGreaterThan(0);
  }, 300_000);
});
