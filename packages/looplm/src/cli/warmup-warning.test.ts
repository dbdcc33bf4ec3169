/** `looplm train` says so when the warmup (50 steps by default) covers the whole run. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { warmupCutNote, withFlagHint } from "./options/train.js";
import { buildProgram } from "./program.js";
import { TINY_TRAIN } from "./tiny-args.test-util.js";

afterEach(() => vi.restoreAllMocks());

/** The lines about the warmup of the latest trainStderr call (kept when it throws). */
let warmupLines: string[] = [];

/** The stderr lines of an in-process `looplm train` with `extra` flags (later flags win). */
async function trainStderr(...extra: string[]): Promise<string[]> {
  warmupLines = [];
  vi.spyOn(process.stdout, "write").mockImplementation(() => true);
  vi.spyOn(process.stderr, "write").mockImplementation((c: string | Uint8Array) => {
    const text = typeof c === "string" ? c : Buffer.from(c).toString("utf8");
    warmupLines.push(...text.split("\n").filter((l) => l.includes("warmup")));
    return true;
  });
  const out = join(mkdtempSync(join(tmpdir(), "looplm-warmup-")), "run");
  await buildProgram().parseAsync([
    "node",
    "looplm",
    "train",
    ...TINY_TRAIN,
    "--out",
    out,
    ...extra,
  ]);
  vi.restoreAllMocks();
  return warmupLines;
}

describe("train: a warmup as long as the run", () => {
  it("is a warning naming --warmup; a shorter warmup is silent", async () => {
    const warned = await trainStderr("--steps", "2", "--warmup", "2");
    expect(warned).toEqual([
      "looplm: warmupSteps (2) is not below the schedule's 2 steps: every step warms up and the learning rate never decays; choose fewer warmup steps (--warmup)",
    ]);
    expect(await trainStderr("--steps", "2", "--warmup", "1")).toEqual([]);
  });

  it("a longer --warmup is cut to --steps, and that is said too", async () => {
    expect(await trainStderr("--steps", "2", "--warmup", "50")).toEqual([
      "looplm: train: --warmup 50 is longer than --steps 2: the warmup is cut to 2 steps",
      "looplm: warmupSteps (2) is not below the schedule's 2 steps: every step warms up and the learning rate never decays; choose fewer warmup steps (--warmup)",
    ]);
    expect(await trainStderr("--steps", "1", "--warmup", "50")).toContain(
      "looplm: train: --warmup 50 is longer than --steps 1: the warmup is cut to 1 step",
    );
  });

  it("is not said before a refused --out", async () => {
    await expect(
      trainStderr("--steps", "1", "--warmup", "50", "--out", "/dev/null"),
    ).rejects.toThrow(/\/dev\/null exists as a character device, not a folder/);
    expect(warmupLines).toEqual([]);
  });
});

describe("the CLI's words around the library's warmup warning", () => {
  it("the cut line names the command that cut it", () => {
    expect(warmupCutNote("sweep", { warmup: 50, steps: 2 })).toBe(
      "sweep: --warmup 50 is longer than --steps 2: the warmup is cut to 2 steps",
    );
    expect(warmupCutNote("sweep", { warmup: 2, steps: 2 })).toBeNull();
  });

  it("a library line opening with an option's name gets its flag; other lines stay as they are", () => {
    expect(withFlagHint("warmupSteps (5) is not below the schedule's 5 steps")).toBe(
      "warmupSteps (5) is not below the schedule's 5 steps (--warmup)",
    );
    expect(withFlagHint("dropped a torn last line of log.jsonl (an append cut short)")).toBe(
      "dropped a torn last line of log.jsonl (an append cut short)",
    );
  });
});
