import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { SweepFile } from "@loop/eval";
import { afterEach, describe, expect, it, vi } from "vitest";
import { buildProgram } from "../program.js";
import { aggregateSeeds, findMember } from "./aggregate.js";
import { fixedAt, gateFrontier, gateVerdict } from "./gate-frontier.js";
import { resultsTable } from "./results-table.js";
import { runGateStudy } from "./run-gate-study.js";
import { armCommand, runSweepStudy } from "./run-sweep-study.js";
import { formatMeanSd, meanSd } from "./stats.js";
import { gateStudy, STUDY_NAMES, sweepStudy } from "./studies.js";
import {
  gateStudyCharts,
  sweepStudyCharts,
  sweepStudyTables,
  writeStudyOutput,
} from "./study-report.js";
import type { StudyDef } from "./study-types.js";
import { claimVerdict } from "./verdict.js";

afterEach(() => vi.restoreAllMocks());

const tmp = () => mkdtempSync(join(tmpdir(), "looplm-reproduce-"));

const TESTDATA = fileURLToPath(new URL("../../../../../testdata/data/", import.meta.url));
const PIQA_FILES = {
  name: "PIQA",
  items: join(TESTDATA, "piqa-valid.jsonl"),
  labels: join(TESTDATA, "piqa-valid-labels.lst"),
};

function sweepFile(metric: SweepFile["metric"], values: Record<string, number[]>): SweepFile {
  return {
    protocol: "iso-param",
    task: "phop",
    metric,
    rows: Object.entries(values).map(([label, per]) => ({
      label,
      role: label.endsWith("⊗1") ? "baseline" : "looped",
      run: label.replace("⊗", "x"),
      params: 100,
      flops_per_token: 10 * per.length,
      metric_value: per[per.length - 1]!,
      per_step: per,
    })),
  };
}

describe("meanSd", () => {
  it("is the mean and the sample standard deviation", () => {
    const m = meanSd([0.5, 0.7, 0.9]);
    expect(m.mean).toBeCloseTo(0.7, 12);
    expect(m.sd).toBeCloseTo(0.2, 12); // sqrt(((−0.2)² + 0² + 0.2²) / 2)
    expect(meanSd([3])).toEqual({ mean: 3, sd: 0, n: 1 });
    expect(formatMeanSd(m, "accuracy")).toBe("70.00 ± 20.00 %");
    expect(formatMeanSd(meanSd([10, 12]), "ppl")).toBe("11.00 ± 1.41");
  });
  it("rejects no values and non-finite values", () => {
    expect(() => meanSd([])).toThrow(/no values/);
    expect(() => meanSd([1, Number.NaN])).toThrow(/finite/);
  });
});

describe("aggregateSeeds", () => {
  const seeds = [
    new Map([["a", sweepFile("accuracy", { "1⊗1": [0.3], "1⊗2": [0.4, 0.8] })]]),
    new Map([["a", sweepFile("accuracy", { "1⊗1": [0.4], "1⊗2": [0.5, 0.9] })]]),
  ];
  it("aggregates every member's final and per-step metric over seeds", () => {
    const rows = aggregateSeeds(["a"], seeds);
    expect(rows.map((r) => r.label)).toEqual(["1⊗1", "1⊗2"]);
    const m = findMember(rows, "a/1⊗2");
    expect(m.values).toEqual([0.8, 0.9]);
    expect(m.stat.mean).toBeCloseTo(0.85, 12);
    expect(m.stat.sd).toBeCloseTo(Math.SQRT1_2 * 0.1, 12);
    expect(m.perStep.map((s) => s.mean)).toEqual([0.45, 0.85].map((v) => expect.closeTo(v, 12)));
  });
  it("names a seed that misses an arm or a member", () => {
    expect(() => aggregateSeeds(["a", "b"], seeds)).toThrow(/seed 1 has no results for arm "b"/);
    const short = [seeds[0]!, new Map([["a", sweepFile("accuracy", { "1⊗1": [0.3] })]])];
    expect(() => aggregateSeeds(["a"], short)).toThrow(/seed 2 of arm "a" has no 1⊗2/);
    expect(() => findMember(aggregateSeeds(["a"], seeds), "a/9⊗9")).toThrow(/no member a\/9⊗9/);
  });
});

describe("claimVerdict", () => {
  const acc = aggregateSeeds(
    ["a"],
    [
      new Map([["a", sweepFile("accuracy", { "1⊗1": [0.35], "1⊗4": [0.95] })]]),
      new Map([["a", sweepFile("accuracy", { "1⊗1": [0.41], "1⊗4": [0.55] })]]),
    ],
  );
  it("'better' must hold by the gap in every seed, and prints both cells", () => {
    const v = claimVerdict(
      { kind: "better", text: "looping helps", a: "a/1⊗4", b: "a/1⊗1", minGap: 0.1 },
      acc,
    );
    expect(v.holds).toBe(true);
    expect(v.line).toBe(
      "holds: 1⊗4 75.00 ± 28.28 % vs 1⊗1 38.00 ± 4.24 % (10.00 points or more higher in 2/2 seeds)",
    );
    const w = claimVerdict(
      { ...{ kind: "better", text: "t", a: "a/1⊗4", b: "a/1⊗1" }, minGap: 0.2 },
      acc,
    );
    expect(w.holds).toBe(false);
    expect(w.line).toMatch(/^does not hold at this scale: .* in 1\/2 seeds\)$/);
  });
  it("'better' on perplexity means lower", () => {
    const ppl = aggregateSeeds(
      ["p"],
      [new Map([["p", sweepFile("ppl", { "2⊗1": [30], "2⊗4": [20, 25] })]])],
    );
    const v = claimVerdict({ kind: "better", text: "t", a: "p/2⊗4", b: "p/2⊗1", minGap: 0 }, ppl);
    expect(v.line).toBe(
      "holds: 2⊗4 25.00 ± 0.00 vs 2⊗1 30.00 ± 0.00 (0.00 or more lower in 1/1 seeds)",
    );
  });
  it("'below' and 'above' thresholds count seeds", () => {
    const below = claimVerdict(
      { kind: "below", text: "fails", member: "a/1⊗1", threshold: 0.4 },
      acc,
    );
    expect(below.line).toBe(
      "does not hold at this scale: 1⊗1 38.00 ± 4.24 %, below 40.00 % in 1/2 seeds",
    );
    const above = claimVerdict(
      { kind: "above", text: "solves", member: "a/1⊗4", threshold: 0.5 },
      acc,
    );
    expect(above.holds).toBe(true);
  });
});

describe("downstream multiple-choice scores", () => {
  const seeds = [
    new Map([["lm", sweepFile("ppl", { "2⊗1": [30], "2⊗4": [40, 28] })]]),
    new Map([["lm", sweepFile("ppl", { "2⊗1": [31], "2⊗4": [41, 27] })]]),
  ];
  const mc = (a: number[], b: number[]) =>
    new Map([["lm", { name: "PIQA", acc: { "2⊗1": a, "2⊗4": b } }]]);
  const rows = aggregateSeeds(["lm"], seeds, [mc([0.52], [0.5, 0.55]), mc([0.5], [0.52, 0.51])]);
  it("aggregate per member and loop step beside the metric", () => {
    const m = findMember(rows, "lm/2⊗4");
    expect(m.mc!.name).toBe("PIQA");
    expect(m.mc!.values).toEqual([0.55, 0.51]);
    expect(m.mc!.perStep.map((s) => s.mean)).toEqual(
      [0.51, 0.53].map((v) => expect.closeTo(v, 12)),
    );
    expect(m.values).toEqual([28, 27]);
    expect(resultsTable(rows, [{ ...TINY.arms[0]!, id: "lm", mc: PIQA_FILES }], "text")).toMatch(
      /PIQA acc \(mean ± sd\) +PIQA per loop step\n.*\n.*2⊗1 .* 51\.00 ± 1\.41 % +–\n.*2⊗4 .* 53\.00 ± 2\.83 % +51\.0 → 53\.0$/,
    );
    // an arm without a downstream evaluation has none
    expect(aggregateSeeds(["lm"], seeds, [new Map(), new Map()])[0]!.mc).toBeUndefined();
    expect(() => aggregateSeeds(["lm"], seeds, [mc([0.5], [0.5, 0.5]), new Map()])).toThrow(
      /seed 2 has no downstream score for lm\/2⊗1/,
    );
  });
  it("claims can judge them: above chance, and 'within' a negative gap", () => {
    const above = claimVerdict(
      { kind: "above", text: "t", member: "lm/2⊗4", threshold: 0.5, on: "mc" },
      rows,
    );
    expect(above.line).toBe("holds: 2⊗4 53.00 ± 2.83 % on PIQA, above 50.00 % in 2/2 seeds");
    const within = claimVerdict(
      { kind: "better", text: "t", a: "lm/2⊗4", b: "lm/2⊗1", minGap: -0.02, on: "mc" },
      rows,
    );
    expect(within.line).toBe(
      "holds: 2⊗4 53.00 ± 2.83 % vs 2⊗1 51.00 ± 1.41 % on PIQA (at most 2.00 points lower in 2/2 seeds)",
    );
    // the metric itself is judged when `on` is absent
    const ppl = claimVerdict(
      { kind: "better", text: "t", a: "lm/2⊗4", b: "lm/2⊗1", minGap: 0 },
      rows,
    );
    expect(ppl.holds).toBe(true);
    const noMc = aggregateSeeds(["lm"], seeds);
    expect(() =>
      claimVerdict({ kind: "above", text: "t", member: "lm/2⊗4", threshold: 0.5, on: "mc" }, noMc),
    ).toThrow(/lm\/2⊗4 has no downstream multiple-choice score/);
  });
});

describe("the gate frontier", () => {
  const seed = (acc3: number, gateValue: number) => ({
    metric: "accuracy" as const,
    perStep: [0.2, 0.6, acc3],
    gated: [
      { q: 0.3, mean_step: 1.5, value: gateValue, histogram: [1, 1, 0] },
      { q: 0.7, mean_step: 2.5, value: 0.5, histogram: [0, 1, 1] },
    ],
  });
  it("interpolates fixed exit linearly between loop steps", () => {
    expect(fixedAt([0.2, 0.6, 1], 1.5)).toBeCloseTo(0.4, 12);
    expect(fixedAt([0.2, 0.6, 1], 3)).toBe(1);
    expect(fixedAt([0.2, 0.6, 1], 0.5)).toBe(0.2);
  });
  it("lists fixed exits then gate points with their gain at equal depth", () => {
    const rows = gateFrontier([seed(1, 0.5), seed(0.8, 0.45)]);
    expect(rows.map((r) => r.label)).toEqual([
      "fixed exit 1",
      "fixed exit 2",
      "fixed exit 3",
      "gate q = 0.3",
      "gate q = 0.7",
    ]);
    expect(rows[2]!.value.mean).toBeCloseTo(0.9, 12);
    expect(rows[3]!.gain).toEqual([expect.closeTo(0.1, 12), expect.closeTo(0.05, 12)]);
    // q = 0.7: fixed at 2.5 is 0.8 and 0.7; the gate's 0.5 loses in both seeds
    expect(gateVerdict(rows, "accuracy")).toMatch(
      /^does not hold at this scale: the gate beats fixed exit at its own mean depth at 1\/2 q values in every seed \(q=0\.3: depth 1\.50, \+7\.50 points; q=0\.7: depth 2\.50, −25\.00 points\)$/,
    );
  });
});

describe("study definitions", () => {
  it("every claim of every study at both scales names members its arms train", () => {
    for (const scale of ["cpu", "paper"] as const) {
      for (const name of STUDY_NAMES) {
        if (name === "exit-gate") {
          const g = gateStudy(scale);
          expect(g.loops).toBeGreaterThan(1);
          expect(g.qs.length).toBeGreaterThan(1);
          continue;
        }
        const def = sweepStudy(name, scale);
        const labels = new Set<string>();
        for (const arm of def.arms) {
          const plan =
            arm.protocol === "iso-param"
              ? arm.loops.map((r) => [`${arm.base}⊗${r}`])
              : arm.loops.map((r) =>
                  r === 1 ? [`${arm.base}⊗1`] : [`${arm.base}⊗${r}`, `${arm.base * r}⊗1`],
                );
          for (const l of plan.flat()) labels.add(`${arm.id}/${l}`);
          for (const k of Object.keys(arm.paper)) expect(labels).toContain(`${arm.id}/${k}`);
        }
        for (const c of def.claims) {
          const refs = c.kind === "better" ? [c.a, c.b] : [c.member];
          for (const r of refs) expect(labels, `${name} ${scale}: ${r}`).toContain(r);
        }
      }
    }
  });
  it("phop at cpu scale compares 1⊗1 with 1⊗4 on four hops", () => {
    const def = sweepStudy("phop", "cpu");
    expect(def.arms[0]!.task).toMatchObject({ task: "phop", length: 32, hops: 4 });
    expect(armCommand(def.arms[0]!, 2, "runs/r/phop")).toBe(
      "looplm sweep --protocol iso-param --task phop --alphabet 4 --length 32 --hops 4 --dense --base 1 --loops 1,4 --d-model 32 --d-state 16 --headdim 16 --chunk 16 --steps 800 --batch 32 --lr 0.006 --warmup 30 --eval-every 200 --eval-count 512 --seed 2 --out runs/r/phop/iso-param/seed-2",
    );
  });
});

const TINY: StudyDef = {
  name: "tiny",
  title: "tiny",
  notes: "tiny settings for tests",
  arms: [
    {
      id: "iso-param",
      protocol: "iso-param",
      task: { task: "phop", alphabet: 3, length: 8, hops: 2 },
      model: { dModel: 8, dState: 4, headdim: 8, chunk: 8 },
      base: 1,
      loops: [1, 2],
      train: { steps: 2, batch: 4, warmup: 0, evalEvery: 0, evalCount: 8, ckptEvery: 0 },
      paper: { "1⊗2": "99 %" },
    },
  ],
  claims: [
    { kind: "better", text: "loops help", a: "iso-param/1⊗2", b: "iso-param/1⊗1", minGap: 0 },
  ],
};

describe("running a study (tiny settings)", () => {
  it("trains every seed with the sweep machinery, aggregates and writes its results", async () => {
    const dir = tmp();
    const r = await runSweepStudy(TINY, { outDir: dir, seeds: 2, resume: false });
    expect(existsSync(join(dir, "iso-param", "seed-2", "sweep.json"))).toBe(true);
    expect(r.rows.map((x) => x.values.length)).toEqual([2, 2]);
    // seed 2 trains different weights from seed 1
    expect(r.perSeed[0]!.get("iso-param")!.rows[1]!.per_step).not.toEqual(
      r.perSeed[1]!.get("iso-param")!.rows[1]!.per_step,
    );
    // resuming keeps the finished members: the same numbers
    const again = await runSweepStudy(TINY, { outDir: dir, seeds: 2, resume: true });
    expect(again.rows).toEqual(r.rows);
    // a second run into the same folder must say how to continue, or replace it
    await expect(runSweepStudy(TINY, { outDir: dir, seeds: 1, resume: false })).rejects.toThrow(
      /--resume.*--overwrite/,
    );
    const replaced = await runSweepStudy(TINY, {
      outDir: dir,
      seeds: 1,
      resume: false,
      overwrite: true,
    });
    expect(replaced.rows.map((x) => x.values)).toEqual(r.rows.map((x) => x.values.slice(0, 1)));
    const table = sweepStudyTables(r.rows, TINY.arms);
    expect(table.text).toMatch(/accuracy \(mean ± sd, 2 seeds\)/);
    expect(table.text.split("\n")[3]).toMatch(/^iso-param +1⊗2 +looped .* ± .* %.*99 %$/);
    expect(resultsTable(r.rows, TINY.arms, "markdown").split("\n")[1]).toMatch(/^\| --- \|/);
    const files = await writeStudyOutput(dir, {
      facts: {
        study: "tiny",
        title: "Tiny",
        notes: "n",
        scale: "cpu",
        seeds: 2,
        command: "looplm reproduce tiny",
        wallSeconds: 1,
        loadStart: [1, 2, 3],
        loadEnd: [1, 2, 3],
      },
      table,
      verdicts: r.verdicts,
      charts: sweepStudyCharts(r.rows),
      data: r.rows,
      commands: ["x"],
    });
    expect(files.map((f) => f.slice(dir.length + 1))).toEqual([
      "results.json",
      "results.md",
      "report.html",
      "tiny-metric.svg",
      "tiny-per-step.svg",
    ]);
    const md = readFileSync(join(dir, "results.md"), "utf8");
    expect(md).toContain(`- loops help: **${r.verdicts[0]!.line}**`);
    expect(readFileSync(join(dir, "tiny-metric.svg"), "utf8")).toMatch(/^<svg/);
  }, 120_000);

  it("scores an LM arm's members downstream once, and resumes without rescoring", async () => {
    const dir = tmp();
    const corpus = join(dir, "corpus.txt");
    writeFileSync(
      corpus,
      readFileSync(join(TESTDATA, "tinyshakespeare.txt"), "utf8").slice(0, 20_000),
    );
    const def: StudyDef = {
      ...TINY,
      arms: [
        {
          ...TINY.arms[0]!,
          id: "lm",
          task: { task: "lm", corpus, vocab: 300, seqLen: 16 },
          mc: { ...PIQA_FILES, limit: 6 },
        },
      ],
      claims: [{ kind: "above", text: "above chance", member: "lm/1⊗2", threshold: 0.5, on: "mc" }],
    };
    const r = await runSweepStudy(def, { outDir: join(dir, "out"), seeds: 1, resume: false });
    const file = join(dir, "out", "lm", "seed-1", "downstream.json");
    const saved = JSON.parse(readFileSync(file, "utf8"));
    expect(saved).toMatchObject({ source: "PIQA", items: 6 });
    expect(saved.acc["1⊗2"]).toHaveLength(2); // one accuracy per loop step
    for (const row of r.rows) {
      expect(row.mc!.values[0]! * 6).toBeCloseTo(Math.round(row.mc!.values[0]! * 6), 12);
      expect(row.mc!.values).toEqual([saved.acc[row.label].at(-1)]);
    }
    expect(r.verdicts[0]!.line).toMatch(/1⊗2 .* on PIQA, above 50\.00 % in [01]\/1 seeds$/);
    // resumed: the stored scores are read back (a changed score would show)
    saved.acc["1⊗1"] = [0.125];
    writeFileSync(file, JSON.stringify(saved));
    const again = await runSweepStudy(def, { outDir: join(dir, "out"), seeds: 1, resume: true });
    expect(findMember(again.rows, "lm/1⊗1").mc!.values).toEqual([0.125]);
    // scores of another set are not mixed in
    const other = { ...def, arms: [{ ...def.arms[0]!, mc: { ...PIQA_FILES, limit: 5 } }] };
    await expect(
      runSweepStudy(other, { outDir: join(dir, "out"), seeds: 1, resume: true }),
    ).rejects.toThrow(/holds PIQA scores on 6 items, not PIQA on 5: remove it to rescore/);
  }, 120_000);

  it("runs the exit-gate pipeline and its frontier (tiny settings)", async () => {
    const def = {
      ...gateStudy("cpu"),
      task: { task: "phop" as const, alphabet: 3, length: 8, hops: 2 },
      model: { dModel: 8, dState: 4, headdim: 8, chunk: 8 },
      loops: 2,
      pretrain: { steps: 2, batch: 4, warmup: 0, evalEvery: 0, evalCount: 8, ckptEvery: 0 },
      gate1: { steps: 2, batch: 4, warmup: 0, evalEvery: 0, evalCount: 8, ckptEvery: 0 },
      gate2: { steps: 2, batch: 4, warmup: 0, evalEvery: 0, evalCount: 8, ckptEvery: 0 },
      evalCount: 8,
      qs: [0.3, 0.7],
    };
    const dir = tmp();
    const r = await runGateStudy(def, { outDir: dir, seeds: 1, resume: false });
    for (const s of ["pretrain", "gate1", "gate2"])
      expect(existsSync(join(dir, "seed-1", s, "final", "model.safetensors"))).toBe(true);
    expect(r.frontier.map((x) => x.label)).toEqual([
      "fixed exit 1",
      "fixed exit 2",
      "gate q = 0.3",
      "gate q = 0.7",
    ]);
    expect(r.verdict).toMatch(/^(holds|does not hold at this scale): the gate beats fixed exit/);
    expect(gateStudyCharts(r.frontier, "accuracy").has("frontier")).toBe(true);
    const again = await runGateStudy(def, { outDir: dir, seeds: 1, resume: true });
    expect(again.frontier).toEqual(r.frontier);
  }, 120_000);
});

describe("looplm reproduce", () => {
  it("names an unknown study or scale", async () => {
    const errs: string[] = [];
    vi.spyOn(process.stderr, "write").mockImplementation((c: string | Uint8Array) => {
      errs.push(String(c));
      return true;
    });
    const run = (...a: string[]) =>
      buildProgram()
        .exitOverride()
        .parseAsync(["node", "looplm", "reproduce", ...a]);
    await expect(run("bogus")).rejects.toThrow(
      'study must be one of phop, mano, lm, backbones, exit-gate, all, got "bogus"',
    );
    await expect(run("phop", "--scale", "huge")).rejects.toThrow(
      /--scale must be one of cpu, paper/,
    );
    await expect(run("phop", "--resume", "--overwrite")).rejects.toThrow(
      "--resume and --overwrite exclude each other: choose one",
    );
  });
});
