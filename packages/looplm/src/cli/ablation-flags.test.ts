/**
 * The ablation options on `looplm train`: --out-proj-scale reaches config.json (and the initial
 * weights), --block-lr reaches run.json's training options; the defaults write no
 * out_proj_scale and blockLr "full", and a resumed run cannot change them.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { buildProgram } from "./program.js";
import { runQuiet, TINY_TRAIN } from "./tiny-args.test-util.js";

afterEach(() => vi.restoreAllMocks());

const run = (...args: string[]) => runQuiet(buildProgram, ...args);
const tiny = TINY_TRAIN;
const json = (p: string) => JSON.parse(readFileSync(p, "utf8"));

describe("train --out-proj-scale and --block-lr", () => {
  it("record the defaults, and the ablation where it acts", async () => {
    const dir = mkdtempSync(join(tmpdir(), "looplm-ablate-"));
    await run("train", ...tiny, "--out", join(dir, "a"));
    const a = json(join(dir, "a", "run.json"));
    expect(a.model.out_proj_scale).toBeUndefined();
    expect(a.train.blockLr).toBe("full");
    expect(json(join(dir, "a", "final", "config.json")).out_proj_scale).toBeUndefined();
    await run(
      "train",
      ...tiny,
      ...["--out-proj-scale", "depth", "--block-lr", "per-loop", "--out", join(dir, "b")],
    );
    const b = json(join(dir, "b", "run.json"));
    expect(b.model.out_proj_scale).toBe("depth");
    expect(b.train.blockLr).toBe("per-loop");
    expect(json(join(dir, "b", "final", "config.json")).out_proj_scale).toBe("depth");
    // a resumed run keeps its recorded options: changing one is refused by name
    await expect(
      run(
        "train",
        ...tiny,
        "--steps",
        "2",
        "--block-lr",
        "per-loop",
        "--out",
        join(dir, "a"),
        "--resume",
      ),
    ).rejects.toThrow(/block-lr|blockLr/);
  });
  it("name a bad value", async () => {
    await expect(run("train", ...tiny, "--out-proj-scale", "wide")).rejects.toThrow(
      '--out-proj-scale must be one of layers, depth, got "wide"',
    );
    await expect(run("train", ...tiny, "--block-lr", "half")).rejects.toThrow(
      '--block-lr must be one of full, per-loop, got "half"',
    );
  });
  it("are documented in train --help", () => {
    const help = buildProgram()
      .commands.find((c) => c.name() === "train")!
      .helpInformation();
    expect(help).toMatch(/--out-proj-scale <s>\s+initial scale of the residual output projections/);
    expect(help).toMatch(
      /--block-lr <s>\s+learning rate of the looped block: full \|\s+per-loop \(lr\/R/,
    );
  });
});
