import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { evaluateAccuracy } from "@loop/eval";
import { LoopedModel, makeConfig } from "@loop/looped";
import { loadCheckpoint, saveCheckpoint } from "@loop/looped/node";
import { type Batch, type ManoExample, ManoTask } from "@loop/tasks";
import { deriveSeed, Rng } from "@loop/tensor";
import { beforeAll, describe, expect, it } from "vitest";
import { CliError } from "../errors.js";
import { run } from "../run-in-process.test-util.js";
import type { PerLengthFile } from "./eval-per-length.js";

const MAIN = fileURLToPath(new URL("../main.ts", import.meta.url));

/**
 * The instrument the pilots measured with (docs/results/pilots.md, before `--per-length`),
 * as it was written: 64 expressions a batch, ℓ's i-th from deriveSeed(0x6d616e6f,
 * "mano/eval-len", ℓ·10⁶ + i).
 */
async function pilotScript(model: LoopedModel, L: number, count: number) {
  const task = new ManoTask({ maxOps: L });
  const out: Record<number, number[]> = {};
  for (let ops = 1; ops <= L; ops++) {
    const batches: Batch[] = [];
    for (let start = 0; start < count; start += 64) {
      const ex: ManoExample[] = [];
      for (let i = start; i < Math.min(count, start + 64); i++)
        ex.push(
          task.sample(new Rng(deriveSeed(0x6d616e6f, "mano/eval-len", ops * 1_000_000 + i)), ops),
        );
      batches.push(task.toBatch(ex));
    }
    const r = await evaluateAccuracy(model, batches, { score: (b, p) => task.score(b, p) });
    out[ops] = r.steps.map((s) => s.accuracy);
  }
  return out;
}

let root: string;
let manoRun: string;
/** `looplm eval --per-length` of the trained mano run, then `more`. */
const perLength = (...more: string[]) => run("eval", "--model", manoRun, "--per-length", ...more);

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "looplm-eval-len-"));
  manoRun = join(root, "mano");
  // a tiny Mano model trained here, far enough to predict something
  await run(
    "train",
    "--task",
    "mano",
    "--max-ops",
    "2",
    "--layers",
    "1",
    "--loops",
    "2",
    "--d-model",
    "16",
    "--d-state",
    "4",
    "--headdim",
    "8",
    "--chunk",
    "8",
    "--steps",
    "40",
    "--batch",
    "16",
    "--lr",
    "0.01",
    "--warmup",
    "1",
    "--eval-every",
    "0",
    "--eval-count",
    "8",
    "--out",
    manoRun,
    "--backend",
    "portable",
  );
}, 120_000);

describe("looplm eval --per-length", () => {
  it("prints and writes the accuracy per length and loop step: the pilots' script's numbers", async () => {
    const { out } = await perLength("--count", "100", "--batch-size", "7", "--backend", "portable");
    const file = join(manoRun, "eval-per-length.json");
    const saved = JSON.parse(readFileSync(file, "utf8")) as PerLengthFile;
    expect(saved).toMatchObject({
      format: "looplm-eval-per-length/1",
      model: { label: "1⊗2" },
      task: { name: "mano", max_ops: 2 },
      stream: "mano/eval-len",
      seed: 0x6d616e6f,
      count: 100,
    });
    const script = await pilotScript(loadCheckpoint(join(manoRun, "final")), 2, 100);
    expect(saved.per_length).toEqual({ "1": script[1], "2": script[2] });
    const pct = (a: number) => `${(100 * a).toFixed(1)} %`;
    const lines = out.split("\n");
    expect(lines[0]).toBe(
      "1⊗2 on mano-L2: accuracy per expression length ℓ and loop step, 100 fresh expressions per ℓ (mano/eval-len, seed 1835101807)",
    );
    expect(lines[1]).toMatch(/^ℓ +step 1 +step 2$/);
    for (const ops of [1, 2])
      expect(lines[2 + ops]!.trim().split(/ {2,}/)).toEqual([
        String(ops),
        ...script[ops]!.map(pct),
      ]);
    expect(out).toContain(`wrote ${file}`);
    // another seed draws other expressions
    const other = join(root, "seed-7.json");
    await perLength("--count", "100", "--seed", "7", "--out", other);
    const seven = JSON.parse(readFileSync(other, "utf8")) as PerLengthFile;
    expect(seven.seed).toBe(7);
    expect(seven.per_length).not.toEqual(saved.per_length);
  }, 120_000);

  it("refuses other tasks and the options it leaves out, one line each", async () => {
    const cases: [string[], RegExp][] = [
      [
        // (the run's task record names its task, so another --task is refused first)
        ["--task", "phop"],
        /^--task phop is not the task the model was trained on: mano \(recorded in .*task\.json\); evaluate it on mano$/,
      ],
      [["--q", "0.5"], /^--per-length cannot be used with --q$/],
      [["--count", "1000001"], /^--count must be ≤ 1000000 with --per-length, got 1000001$/],
    ];
    for (const [extra, msg] of cases) {
      const err = await perLength(...extra).catch((e) => e);
      expect(err, extra.join(" ")).toBeInstanceOf(CliError);
      expect((err as Error).message, extra.join(" ")).toMatch(msg);
    }
  });

  it("on a p-hop run: one line naming --per-length and the task, exit 1", () => {
    // (made by hand, without the task record a training run writes: one note says so first)
    const phopRun = join(root, "phop");
    const model = new LoopedModel(
      makeConfig({
        backbone: "mamba",
        vocab_size: 8,
        d_model: 16,
        n_layers: 1,
        n_loops: 2,
        ssm: { d_state: 4, headdim: 8, chunk_size: 8 },
      }),
      { seed: 1 },
    );
    saveCheckpoint(join(phopRun, "final"), model);
    writeFileSync(
      join(phopRun, "run.json"),
      JSON.stringify({
        task: { name: "phop", alphabet: 3, length: 8, hops: 2 },
        model: model.config,
      }),
    );
    const r = spawnSync(
      process.execPath,
      [
        "--import",
        "tsx",
        "--conditions=@loop/source",
        MAIN,
        "eval",
        "--model",
        phopRun,
        "--per-length",
      ],
      { encoding: "utf8" },
    );
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split("\n")).toEqual([
      `looplm: ${join(phopRun, "final")} has no task record (task.json; models saved by older versions have none): its task and tokenizer cannot be checked`,
      "looplm: --per-length scores Mano expressions by length; the task here is phop, not mano",
    ]);
    expect(r.stdout).toBe("");
  }, 60_000);
});
