/**
 * Requests no machine holds are refused at once, before any work or any folder, with the memory
 * they need and the flag to lower: a deep model (`--layers 100000`) or an evaluation batch of two
 * billion rows (`eval --batch-size 2147483647`). Without the check each grew for minutes with no
 * output. (An evaluation of two billion rows streams: streaming.test.ts.)
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { run } from "./run-in-process.test-util.js";
import { tinyPhop } from "./tiny-args.test-util.js";

afterEach(() => vi.restoreAllMocks());

const tmp = () => mkdtempSync(join(tmpdir(), "looplm-unbounded-"));
const quick = ["--steps", "2", "--batch", "4", "--eval-every", "0", "--warmup", "0"];
const AMOUNT = "needs at least [\\d.]+ [KMGTPE]iB of memory";

describe("unbounded requests", () => {
  it("--layers 100000 is refused at once with the memory it needs and the flags to lower", async () => {
    const x = join(tmp(), "x");
    const args = [...tinyPhop(16), "--layers", "100000", "--batch", "64", "--eval-count", "8"];
    await expect(run("train", ...args, "--steps", "1", "--out", x)).rejects.toThrow(
      new RegExp(
        `^training this setting ${AMOUNT} \\(.* for one step's activations at --batch 64 × 16 tokens, .*\\): lower --batch \\(or --layers, --loops, the sequence length\\) \\(this machine has `,
      ),
    );
    // (before the model and its folder: 100000 layers take minutes to build)
    expect(existsSync(x)).toBe(false);
  });

  it("--loops 50000 at --batch 4 names --eval-count: the evaluation's 64-row batch is the largest part", async () => {
    // (--batch below 64 leaves the evaluation batch at 64 rows: lowering it would not help)
    const x = join(tmp(), "x");
    const args = [...tinyPhop(64), "--loops", "50000", "--batch", "4", "--eval-count", "256"];
    await expect(run("train", ...args, "--steps", "1", "--out", x)).rejects.toThrow(
      new RegExp(
        `^training this setting ${AMOUNT} \\(.*, [\\d.]+ GiB for the evaluation of --eval-count 256 rows, 64 at a time\\): lower --eval-count \\(or --layers, --loops, the sequence length\\) \\(this machine has `,
      ),
    );
    expect(existsSync(x)).toBe(false);
  });

  it("eval --batch-size 2147483647 is refused at once, naming --batch-size", async () => {
    // (eval makes its rows batch by batch, so a large --count streams with progress: only one
    // batch has to fit, and a batch no machine holds is refused before any row is made)
    const runDir = join(tmp(), "run");
    await run("train", ...tinyPhop(256), ...quick, "--eval-count", "8", "--out", runDir);
    const out = join(tmp(), "eval.json");
    await expect(
      run(
        "eval",
        "--model",
        runDir,
        "--count",
        "2147483647",
        "--batch-size",
        "2147483647",
        "--out",
        out,
      ),
    ).rejects.toThrow(
      new RegExp(
        `^evaluating this setting ${AMOUNT} \\(.*, [\\d.]+ [TPE]iB for the evaluation of --count 2147483647 rows, 2147483647 at a time\\): lower --batch-size \\(or --layers, --loops, the sequence length\\) \\(this machine has `,
      ),
    );
    expect(existsSync(out)).toBe(false);
  });

  it("--accum 2147483647 is refused at once: a step that would never end", async () => {
    const x = join(tmp(), "x");
    await expect(
      run("train", ...tinyPhop(16), ...quick, "--accum", "2147483647", "--out", x),
    ).rejects.toThrow(
      "--accum 2147483647 is more than 65536, its largest (each micro-batch is a forward and backward pass: a larger step would run for hours between two log lines); lower it",
    );
    expect(existsSync(x)).toBe(false);
  });
});
