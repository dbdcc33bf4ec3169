/**
 * Run folders through the CLI: resume rebuilds the recorded run, nothing overwrites a run, a
 * locked folder is refused, signals checkpoint and exit 130/143, impossible paths fail at once.
 */
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { run } from "./run-in-process.test-util.js";
import { descendants, spawnCli } from "./spawn-cli.test-util.js";
import { ISO_SWEEP, tinyPhop } from "./tiny-args.test-util.js";

afterEach(() => {
  vi.restoreAllMocks();
});

const tmp = () => mkdtempSync(join(tmpdir(), "looplm-rf-"));
const tiny = tinyPhop(12);
const quick = ["--batch", "4", "--eval-every", "0", "--eval-count", "8", "--warmup", "1"];
const lines = (p: string) => readFileSync(p, "utf8").trim().split("\n");
const runJson = (dir: string) => JSON.parse(readFileSync(join(dir, "run.json"), "utf8"));

describe("train --resume continues the run that was started", () => {
  it("takes every setting from run.json; other differing flags are an error naming them", async () => {
    const r = join(tmp(), "r");
    await run(
      "train",
      ...tiny,
      "--loops",
      "2",
      ...quick,
      "--seed",
      "3",
      "--steps",
      "3",
      "--out",
      r,
    );
    const before = runJson(r);
    // Only --out, --resume and more --steps: the 1⊗2 model, batch and seed come from run.json.
    const { err } = await run("train", "--out", r, "--resume", "--steps", "5");
    expect(err).toMatch(
      /extending the run from 3 to 5 steps: the learning rate keeps its 3-step warmup-cosine schedule and stays at its final value .* for steps 4–5/,
    );
    expect(lines(join(r, "log.jsonl"))).toHaveLength(5);
    const after = runJson(r);
    expect(after.model).toEqual(before.model);
    expect(after.train).toEqual({ ...before.train, steps: 5, scheduleSteps: 3 });
    expect(after.flags).toMatchObject({ loops: 2, batch: 4, seed: 3, steps: 5 });
    await expect(
      run("train", "--out", r, "--resume", "--loops", "1", "--steps", "7"),
    ).rejects.toThrow(
      /^--loops 1 differs from the run being resumed \(2 in .*run.json\); with --resume only --steps, --eval-every, --eval-count, --ckpt-every, --checkpointing, --backend may change$/,
    );
    await expect(run("train", "--out", r, "--resume", "--batch", "8")).rejects.toThrow(
      /--batch 8 differs from the run being resumed \(4 in/,
    );
    // Repeating a recorded flag with its recorded value is fine; --eval-count may change, said so
    // (a typo in it was undone only by --overwrite)
    const changed = await run(
      ...["train", ...tiny, "--loops", "2", "--out", r, "--resume", "--steps", "6"],
      ...["--eval-count", "16"],
    );
    expect(changed.err).toContain(
      "looplm: --eval-count 16 replaces 8 of the run being resumed: the model trains the same; its evaluations from here on use 16\n",
    );
    expect(runJson(r).model).toEqual(before.model);
    expect(runJson(r).flags).toMatchObject({ evalCount: 16 });
    await expect(run("train", "--out", r, "--resume")).rejects.toThrow(
      /already finished its 6 steps/,
    );
    await expect(run("train", "--out", r, "--resume", "--steps", "4")).rejects.toThrow(
      /steps can only grow on resume: the run was planned for 6 steps, got 4/,
    );
  });
});

describe("nothing overwrites a run", () => {
  it("an existing run folder needs --resume or --overwrite; --out inside --from's run is refused", async () => {
    const r = join(tmp(), "r");
    await run("train", ...tiny, ...quick, "--steps", "2", "--out", r);
    const final = statSync(join(r, "final", "model.safetensors")).mtimeMs;
    await expect(run("train", ...tiny, ...quick, "--steps", "2", "--out", r)).rejects.toThrow(
      /already holds a run: resume it \(--resume\) or replace it \(--overwrite\)/,
    );
    expect(statSync(join(r, "final", "model.safetensors")).mtimeMs).toBe(final);
    for (const from of [join(r, "final"), r])
      await expect(
        run("train", ...tiny, "--stage", "gate1", "--from", from, ...quick, "--out", r),
      ).rejects.toThrow(/--out .* is the run that --from .* belongs to/);
    await expect(
      run("train", ...tiny, ...quick, "--out", r, "--resume", "--overwrite"),
    ).rejects.toThrow(/exclude each other/);
    await run("train", ...tiny, ...quick, "--steps", "3", "--out", r, "--overwrite");
    expect(lines(join(r, "log.jsonl"))).toHaveLength(3);
  });

  it("a folder another live process trains in is a one-line error", async () => {
    const r = tmp();
    writeFileSync(
      join(r, "run.lock"),
      JSON.stringify({ pid: process.ppid, host: (await import("node:os")).hostname() }),
    );
    await expect(run("train", ...tiny, ...quick, "--steps", "2", "--out", r)).rejects.toThrow(
      new RegExp(`run folder .* is in use by process ${process.ppid}`),
    );
    expect(existsSync(join(r, "log.jsonl"))).toBe(false);
  });

  it("sweep --resume keeps finished members (every time) and duplicates are an error", async () => {
    const d = join(tmp(), "sweep");
    const sweep = (...extra: string[]) =>
      run(...ISO_SWEEP, ...tiny, ...quick, "--steps", "2", "--out", d, ...extra);
    const first = await sweep();
    const logs = ["1x1", "1x2"].map((m) => statSync(join(d, m, "log.jsonl")).mtimeMs);
    for (let i = 0; i < 2; i++) {
      const again = await sweep("--resume");
      expect(again.err.match(/already trained, kept/g)).toHaveLength(2);
      expect(again.err).not.toMatch(/params,/);
      expect(again.out).toBe(first.out);
      expect(["1x1", "1x2"].map((m) => statSync(join(d, m, "log.jsonl")).mtimeMs)).toEqual(logs);
    }
    await expect(sweep()).rejects.toThrow(/already holds a sweep: resume it \(--resume\)/);
    await expect(sweep("--resume", "--batch", "8")).rejects.toThrow(
      /member 1⊗1: resume: batchSize is 8 but .*run.json has 4/,
    );
    await expect(
      run(
        "sweep",
        "--protocol",
        "iso-param",
        ...tiny,
        "--loops",
        "2,2",
        ...quick,
        "--out",
        join(tmp(), "s"),
      ),
    ).rejects.toThrow(/--loops lists 2 more than once/);
  });
});

describe("output paths are checked before any work", () => {
  it("forward, eval and tokenizer train refuse an unwritable --out first, naming it", async () => {
    const d = tmp();
    const r = join(d, "r");
    await run("train", ...tiny, ...quick, "--steps", "1", "--out", r);
    // forward checks --out before it even looks at --model.
    await expect(
      run("forward", "--model", join(d, "none"), "--input", "x", "--out", "/proc/x"),
    ).rejects.toThrow(/^cannot write \/proc\/x: /);
    // eval checks it before building the task (this corpus does not exist).
    await expect(
      run("eval", "--model", r, "--task", "lm", "--corpus", join(d, "nope"), "--out", "/proc/x"),
    ).rejects.toThrow(/^cannot write \/proc\/x: /);
    await expect(run("eval", "--model", r, "--out", d)).rejects.toThrow(
      /^cannot write .*: it is a folder, not a file$/,
    );
    await expect(
      run("tokenizer", "train", "--corpus", join(d, "nope"), "--out", join(d, "no", "tok.json")),
    ).rejects.toThrow(/^cannot write .*no\/tok.json: its folder .*\/no does not exist$/);
  });
});

describe("checkpoints with NaN or Inf weights", () => {
  it("eval, generate and train --from refuse them, blaming the checkpoint", async () => {
    const d = tmp();
    const r = join(d, "r");
    await run("train", ...tiny, ...quick, "--steps", "1", "--out", r);
    const { loadCheckpoint, saveCheckpoint } = await import("@loop/looped/node");
    for (const [name, bad] of [
      ["nan", Number.NaN],
      ["inf", Number.POSITIVE_INFINITY],
    ] as const) {
      const m = loadCheckpoint(join(r, "final"));
      m.embeddings.data[1] = bad;
      const ck = join(d, name);
      saveCheckpoint(ck, m);
      const msg = new RegExp(
        `model.safetensors is damaged — non-finite values: backbone.embeddings.weight \\(${bad} at index 1\\)`,
      );
      await expect(run("eval", "--model", ck, ...tiny.slice(0, 8))).rejects.toThrow(msg);
      await expect(
        run("generate", "--model", ck, "--tokens", "0,1", "--max-new", "2"),
      ).rejects.toThrow(msg);
      await expect(
        run(
          "train",
          ...tiny,
          "--stage",
          "gate1",
          "--from",
          ck,
          ...quick,
          "--out",
          join(d, `g-${name}`),
        ),
      ).rejects.toThrow(msg);
    }
  });
});

describe("option errors name the flag", () => {
  it("--wd -5 and --min-lr 1", async () => {
    const out = join(tmp(), "never");
    await expect(run("train", ...tiny, "--wd", "-5", "--out", out)).rejects.toThrow(
      /^--wd must be ≥ 0, got -5$/,
    );
    await expect(run("train", ...tiny, "--min-lr", "1", "--out", out)).rejects.toThrow(
      /^--min-lr must be in \[0, --lr\], got 1$/,
    );
    expect(existsSync(out)).toBe(false);
    await expect(run("train", "--out", out)).rejects.toThrow(
      /^train needs --task <name>: mano \| phop \| lm \(or --resume to continue the run in --out\); see `looplm train --help`$/,
    );
  });
});

describe("the looplm binary and run folders", () => {
  /** Start the binary; resolves with its exit status and output. */
  const start = (args: string[], viaPnpm = false) => {
    const child = spawnCli(args, viaPnpm);
    let stderr = "";
    child.stderr!.on("data", (b) => (stderr += b));
    child.stdout!.resume();
    const done = new Promise<{ code: number | null; signal: string | null; stderr: string }>(
      (res) => child.on("close", (code, signal) => res({ code, signal, stderr })),
    );
    return { child, done };
  };
  /** Wait until the run has logged a few steps (at most two minutes, then the test fails). */
  const logged = async (dir: string) => {
    const log = join(dir, "log.jsonl");
    for (let i = 0; i < 2400; i++) {
      if (existsSync(log) && lines(log).length >= 3) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`timed out waiting for ${log} to hold 3 steps`);
  };
  // Long enough to be stopped, short enough that a failed test leaves no endless process.
  const long = [...tiny, ...quick, "--steps", "20000", "--ckpt-every", "0"];

  // Under pnpm: SIGTERM to pnpm alone (kill <pid>), SIGINT to the whole group (Ctrl-C).
  for (const [sig, code, viaPnpm] of [
    ["SIGTERM", 143, false],
    ["SIGINT", 130, false],
    ["SIGTERM", 143, true],
    ["SIGINT", 130, true],
  ] as const) {
    it(`${sig}${viaPnpm ? " under pnpm looplm" : ""}: finishes the step, checkpoints, says how to resume, exits ${code}`, async () => {
      const r = join(tmp(), "r");
      const { child, done } = start(["train", ...long, "--out", r], viaPnpm);
      await logged(r);
      // Ctrl-C reaches every process of the terminal's group: pnpm, its shell and node.
      const targets =
        viaPnpm && sig === "SIGINT" ? [child.pid!, ...descendants(child.pid!)] : [child.pid!];
      for (const pid of targets) process.kill(pid, sig);
      const res = await done;
      // pnpm itself dies of the signal; the training process under it exits with the code.
      if (viaPnpm) expect(res.signal ?? res.code).toMatch(new RegExp(`^(${sig}|${code})$`));
      else expect(res.code).toBe(code);
      const msg = res.stderr.split("\n").find((l) => l.startsWith("looplm: stopped by"));
      expect(msg).toMatch(
        new RegExp(
          `^looplm: stopped by ${sig} after step (\\d+); checkpoint saved in .*step-0*\\1\\. Resume with: looplm train --out ${r} --resume$`,
        ),
      );
      const step = Number(/after step (\d+)/.exec(msg!)![1]);
      expect(lines(join(r, "log.jsonl"))).toHaveLength(step);
      expect(JSON.parse(readFileSync(join(r, "checkpoints", "latest.json"), "utf8")).step).toBe(
        step,
      );
      expect(existsSync(join(r, "run.lock"))).toBe(false);
    }, 120_000);
  }

  it("an impossible --out fails at once, naming it", async () => {
    const res = await start(["train", ...tiny, "--out", "/proc/x"]).done;
    expect(res.code).toBe(1);
    expect(res.stderr.trim().split("\n")).toEqual([
      "looplm: cannot create folder /proc/x: /proc does not accept new folders",
    ]);
  }, 60_000);
});
