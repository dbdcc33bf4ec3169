import {
  copyFileSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { evaluateManoByLength, type SweepFile } from "@loop/eval";
import { loadCheckpoint } from "@loop/looped/node";
import { ManoTask } from "@loop/tasks";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startBackend } from "../../backend.js";
import { defaultJobs } from "../commands/reproduce.js";
import { buildProgram } from "../program.js";
import { aggregateSeeds, findMember } from "./aggregate.js";
import { fiveGateSeeds, type GatePoint } from "./five-seeds.test-util.js";
import { fixedAt, gateFrontier, gateVerdict } from "./gate-frontier.js";
import { gateArgs, gateCommands } from "./gate-study-types.js";
import { phop as phopStudy } from "./phop-studies.js";
import { perLengthTable, resultsTable, verdictTable } from "./results-table.js";
import { runGateStudy } from "./run-gate-study.js";
import { armArgs, armCommand, runSweepStudy } from "./run-sweep-study.js";
import { type SeedRecord, seedsToTrain, studySettings } from "./seed-record.js";
import {
  exitRulesStudy,
  gateStudy,
  isExitRulesStudy,
  isGateStudy,
  STUDY_NAMES,
  sweepStudy,
} from "./studies.js";
import {
  claimTables,
  frontierTable,
  gateStudyCharts,
  perLengthTables,
  sweepStudyCharts,
  sweepStudyTables,
  writeStudyOutput,
} from "./study-report.js";
import type { StudyDef } from "./study-types.js";
import { TINY_FACTS, tinyStudy } from "./tiny-study.test-util.js";
import { claimVerdict } from "./verdict.js";

afterEach(() => vi.restoreAllMocks());

const tmp = () => mkdtempSync(join(tmpdir(), "looplm-reproduce-"));
/** The studies run in this process train on the portable kernels. */
const backend = await startBackend("portable");

/** The CLI's entry, run from source by child processes (`--jobs`). */
const MAIN = fileURLToPath(new URL("../main.ts", import.meta.url));
const threadsEach = Math.max(1, Math.floor(availableParallelism() / 2));

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

/** Five seeds of an arm "a": per member label, its final value in each seed. */
function fiveSeeds(metric: SweepFile["metric"], values: Record<string, number[]>) {
  return Array.from(
    { length: values[Object.keys(values)[0]!]!.length },
    (_, k) =>
      new Map([
        [
          "a",
          sweepFile(
            metric,
            Object.fromEntries(Object.entries(values).map(([l, v]) => [l, [v[k]!]])),
          ),
        ],
      ]),
  );
}

describe("claimVerdict", () => {
  // differences 1⊗4 − 1⊗1 per seed: .20 .19 .17 .22 .17 → mean .19, sd .021213, se .0094868;
  // t_{0.975,4} = 2.776445 → 95 % CI [.16366, .21634]
  const acc = aggregateSeeds(
    ["a"],
    fiveSeeds("accuracy", {
      "1⊗1": [0.4, 0.43, 0.41, 0.39, 0.42],
      "1⊗4": [0.6, 0.62, 0.58, 0.61, 0.59],
    }),
  );
  const better = (minGap: number) =>
    claimVerdict({ kind: "better", text: "looping helps", a: "a/1⊗4", b: "a/1⊗1", minGap }, acc);
  it("holds when the paired difference's 95 % CI lies above the margin", () => {
    const v = better(0.15);
    expect(v.kind).toBe("holds");
    expect(v.interval.lo).toBeCloseTo(0.16366, 5);
    expect(v.interval.hi).toBeCloseTo(0.21634, 5);
    expect(v.line).toBe(
      "holds: 1⊗4 60.00 ± 1.58 % vs 1⊗1 41.00 ± 1.58 %; 1⊗4 − 1⊗1 = +19.00 points, 95 % CI [+16.37, +21.63] points (paired t, 5 seeds); needs > +15.00 points",
    );
  });
  it("'widens' judges the paired difference of two gaps: (a − b) in one arm minus in another", () => {
    // two arms as one: "a" R=2 (1⊗2, 2⊗1) and R=8 (1⊗8, 8⊗1); per seed the R=8 gap minus the
    // R=2 gap: (.30 − .10) − (.50 − .45) … = .15 .17 .13 .16 .14 → mean .15, sd .015811
    const rows = aggregateSeeds(
      ["a"],
      fiveSeeds("accuracy", {
        "1⊗2": [0.5, 0.52, 0.48, 0.51, 0.49],
        "2⊗1": [0.45, 0.46, 0.44, 0.47, 0.45],
        "1⊗8": [0.3, 0.33, 0.29, 0.31, 0.3],
        "8⊗1": [0.1, 0.1, 0.12, 0.11, 0.12],
      }),
    );
    const claim = {
      kind: "widens" as const,
      text: "the gap grows",
      wide: ["a/1⊗8", "a/8⊗1"] as [string, string],
      narrow: ["a/1⊗2", "a/2⊗1"] as [string, string],
      minGap: 0,
    };
    const v = claimVerdict(claim, rows);
    expect(v.kind).toBe("holds");
    expect(v.interval.mean).toBeCloseTo(0.15, 12);
    // t_{0.975,4}·sd/√5 = 2.776445 · .015811 / 2.236068 = .019632
    expect(v.interval.lo).toBeCloseTo(0.15 - 0.019632, 5);
    expect(v.subject).toBe("(1⊗8 − 8⊗1) − (1⊗2 − 2⊗1)");
    expect(v.line).toMatch(
      /^holds: \(1⊗8 − 8⊗1\) = \+19\.60 points vs \(1⊗2 − 2⊗1\) = \+4\.60 points; difference \+15\.00 points/,
    );
    // the other way round the same gaps shrink: contradicted
    const flipped = claimVerdict({ ...claim, wide: claim.narrow, narrow: claim.wide }, rows);
    expect(flipped.kind).toBe("contradicted");
  });
  it("is inconclusive when the CI contains the margin, contradicted when it lies below", () => {
    expect(better(0.17).kind).toBe("inconclusive");
    expect(better(0.17).line).toMatch(/^inconclusive: /);
    expect(better(0.25).kind).toBe("contradicted");
    // the other way round: 1⊗1 beats 1⊗4 is contradicted at margin 0
    const rev = claimVerdict({ kind: "better", text: "t", a: "a/1⊗1", b: "a/1⊗4", minGap: 0 }, acc);
    expect(rev.kind).toBe("contradicted");
    expect(rev.line).toMatch(/1⊗1 − 1⊗4 = −19\.00 points, 95 % CI \[−21\.63, −16\.37\] points/);
  });
  it("names the arms where both sides are the same model (an ablation against its baseline)", () => {
    const seeds = fiveSeeds("ppl", { "2⊗4": [28, 30, 29, 28, 27] }).map((m, k) => {
      const other = sweepFile("ppl", { "2⊗4": [[30, 31, 32, 30, 29][k]!] });
      return new Map([...m, ["b", other]]);
    });
    const rows = aggregateSeeds(["a", "b"], seeds);
    const v = claimVerdict({ kind: "better", text: "t", a: "a/2⊗4", b: "b/2⊗4", minGap: 0 }, rows);
    expect(v.line).toMatch(
      /^holds: a\/2⊗4 28\.40 ± 1\.14 vs b\/2⊗4 30\.40 ± 1\.14; a\/2⊗4 − b\/2⊗4 = −2\.00/,
    );
    expect(v.judgedOn).toBe("a/2⊗4 − b/2⊗4 perplexity, needs < 0.00");
  });
  it("pairs by seed: the same values unpaired would not decide", () => {
    // a beats b by 1 point in every seed, while both swing by ±10 points between seeds
    const swing = aggregateSeeds(
      ["a"],
      fiveSeeds("accuracy", {
        "1⊗1": [0.3, 0.5, 0.4, 0.2, 0.45],
        "1⊗4": [0.31, 0.51, 0.41, 0.21, 0.46],
      }),
    );
    const v = claimVerdict({ kind: "better", text: "t", a: "a/1⊗4", b: "a/1⊗1", minGap: 0 }, swing);
    expect(v.kind).toBe("holds");
    expect(v.interval.sd).toBeCloseTo(0, 12);
  });
  it("on perplexity, better means lower", () => {
    // 2⊗4 − 2⊗1 per seed: −2 −1 −3 −2 −2 → mean −2, sd .70711, CI −2 ± .87798
    const ppl = aggregateSeeds(
      ["a"],
      fiveSeeds("ppl", { "2⊗1": [30, 31, 32, 30, 29], "2⊗4": [28, 30, 29, 28, 27] }),
    );
    const v = claimVerdict({ kind: "better", text: "t", a: "a/2⊗4", b: "a/2⊗1", minGap: 0 }, ppl);
    expect(v.kind).toBe("holds");
    expect(v.line).toBe(
      "holds: 2⊗4 28.40 ± 1.14 vs 2⊗1 30.40 ± 1.14; 2⊗4 − 2⊗1 = −2.00, 95 % CI [−2.88, −1.12] (paired t, 5 seeds); needs < 0.00",
    );
    const w = claimVerdict({ kind: "better", text: "t", a: "a/2⊗1", b: "a/2⊗4", minGap: 0 }, ppl);
    expect(w.kind).toBe("contradicted");
    // "8⊗1 keeps an edge of at least 3" is contradicted, "of at least 1.5" inconclusive
    const m3 = claimVerdict({ kind: "better", text: "t", a: "a/2⊗4", b: "a/2⊗1", minGap: 3 }, ppl);
    expect(m3.kind).toBe("contradicted");
    const m15 = claimVerdict(
      { kind: "better", text: "t", a: "a/2⊗4", b: "a/2⊗1", minGap: 1.5 },
      ppl,
    );
    expect(m15.kind).toBe("inconclusive");
  });
  it("'below' and 'above' read the member's CI against the threshold", () => {
    // 1⊗1: mean .41, sd .015811, CI .41 ± .019632 = [.39037, .42963]
    const below = (threshold: number) =>
      claimVerdict({ kind: "below", text: "fails", member: "a/1⊗1", threshold }, acc);
    expect(below(0.5).kind).toBe("holds");
    expect(below(0.5).line).toBe(
      "holds: 1⊗1 41.00 ± 1.58 %, 95 % CI [39.04, 42.96] % (t, 5 seeds); needs < 50.00 %",
    );
    expect(below(0.42).kind).toBe("inconclusive");
    expect(below(0.38).kind).toBe("contradicted");
    const above = (threshold: number) =>
      claimVerdict({ kind: "above", text: "solves", member: "a/1⊗4", threshold }, acc);
    expect(above(0.5).kind).toBe("holds");
    expect(above(0.7).kind).toBe("contradicted");
  });
  it("fewer than five seeds are inconclusive whatever the values, and say why", () => {
    const three = aggregateSeeds(
      ["a"],
      fiveSeeds("accuracy", { "1⊗1": [0.1, 0.11, 0.12], "1⊗4": [0.9, 0.91, 0.92] }),
    );
    const v = claimVerdict({ kind: "better", text: "t", a: "a/1⊗4", b: "a/1⊗1", minGap: 0 }, three);
    expect(v.kind).toBe("inconclusive");
    expect(v.line).toMatch(/^inconclusive \(3 seeds < 5\): .*\(paired t, 3 seeds\)/);
    const one = aggregateSeeds(["a"], fiveSeeds("accuracy", { "1⊗1": [0.1], "1⊗4": [0.9] }));
    expect(
      claimVerdict({ kind: "better", text: "t", a: "a/1⊗4", b: "a/1⊗1", minGap: 0 }, one).line,
    ).toMatch(/^inconclusive \(1 seed < 5\): .*95 % CI n\/a \(paired t, 1 seed\)/);
  });
  it("the claims table shows each verdict and its interval", () => {
    const t = verdictTable([better(0.15), better(0.25)], "markdown").split("\n");
    expect(t[0]).toBe("| claim | verdict | judged on | mean | 95 % CI | seeds |");
    expect(t[2]).toBe(
      "| looping helps | holds | 1⊗4 − 1⊗1 accuracy points, needs > +15.00 | 19.00 | [16.37, 21.63] | 5 |",
    );
    expect(t[3]).toMatch(/^\| looping helps \| contradicted \|/);
  });
});

describe("downstream scores (multiple choice, cloze)", () => {
  const seeds = [
    new Map([["lm", sweepFile("ppl", { "2⊗1": [30], "2⊗4": [40, 28] })]]),
    new Map([["lm", sweepFile("ppl", { "2⊗1": [31], "2⊗4": [41, 27] })]]),
  ];
  const mc = (name: string, a: number[], b: number[]) =>
    new Map([["lm", { name, acc: { "2⊗1": a, "2⊗4": b } }]]);
  const rows = aggregateSeeds(
    ["lm"],
    seeds,
    [mc("PIQA", [0.52], [0.5, 0.55]), mc("PIQA", [0.5], [0.52, 0.51])],
    [mc("last-word cloze", [0.4], [0.3, 0.45]), mc("last-word cloze", [0.42], [0.3, 0.47])],
  );
  it("aggregate per member and loop step beside the metric", () => {
    const m = findMember(rows, "lm/2⊗4");
    expect(m.mc!.name).toBe("PIQA");
    expect(m.mc!.values).toEqual([0.55, 0.51]);
    expect(m.mc!.perStep.map((s) => s.mean)).toEqual(
      [0.51, 0.53].map((v) => expect.closeTo(v, 12)),
    );
    expect(m.cloze!.name).toBe("last-word cloze");
    expect(m.cloze!.values).toEqual([0.45, 0.47]);
    expect(m.values).toEqual([28, 27]);
    expect(resultsTable(rows, [{ ...TINY.arms[0]!, id: "lm", mc: PIQA_FILES }], "text")).toMatch(
      /PIQA acc \(mean ± sd\) +PIQA per loop step +last-word cloze acc \(mean ± sd\) +last-word cloze per loop step\n.*\n.*2⊗1 .* 51\.00 ± 1\.41 % +– +41\.00 ± 1\.41 % +–\n.*2⊗4 .* 53\.00 ± 2\.83 % +51\.0 → 53\.0 +46\.00 ± 1\.41 % +30\.0 → 46\.0$/,
    );
    // an arm without a downstream evaluation has none
    const bare = aggregateSeeds(["lm"], seeds, [new Map(), new Map()], [new Map(), new Map()]);
    expect(bare[0]!.mc).toBeUndefined();
    expect(bare[0]!.cloze).toBeUndefined();
    expect(() => aggregateSeeds(["lm"], seeds, [mc("PIQA", [0.5], [0.5, 0.5]), new Map()])).toThrow(
      /seed 2 has no downstream score for lm\/2⊗1/,
    );
    expect(() =>
      aggregateSeeds(["lm"], seeds, undefined, [new Map(), mc("c", [0.5], [0.5, 0.5])]),
    ).toThrow(/seed 1 has no cloze score for lm\/2⊗1/);
  });
  it("claims can judge them", () => {
    const above = claimVerdict(
      { kind: "above", text: "t", member: "lm/2⊗4", threshold: 0.25, on: "cloze" },
      rows,
      2,
    );
    // 2⊗4 cloze .45, .47: mean .46, sd .014142, t_{0.975,1} = 12.7062 → CI .46 ± .12706
    expect(above.line).toBe(
      "holds: 2⊗4 46.00 ± 1.41 % on last-word cloze, 95 % CI [33.29, 58.71] % (t, 2 seeds); needs > 25.00 %",
    );
    const within = claimVerdict(
      { kind: "better", text: "t", a: "lm/2⊗4", b: "lm/2⊗1", minGap: -0.02, on: "mc" },
      rows,
    );
    expect(within.line).toBe(
      // differences .03, .01: mean .02, se .01 → CI .02 ± .12706
      "inconclusive (2 seeds < 5): 2⊗4 53.00 ± 2.83 % vs 2⊗1 51.00 ± 1.41 % on PIQA; 2⊗4 − 2⊗1 = +2.00 points, 95 % CI [−10.71, +14.71] points (paired t, 2 seeds); needs > −2.00 points",
    );
    // the metric itself is judged when `on` is absent
    const ppl = claimVerdict(
      { kind: "better", text: "t", a: "lm/2⊗4", b: "lm/2⊗1", minGap: 0 },
      rows,
    );
    expect(ppl.line).toMatch(/^inconclusive \(2 seeds < 5\): 2⊗4 27\.50 ± 0\.71 vs 2⊗1 30\.50/);
    const noMc = aggregateSeeds(["lm"], seeds);
    expect(() =>
      claimVerdict({ kind: "above", text: "t", member: "lm/2⊗4", threshold: 0.5, on: "mc" }, noMc),
    ).toThrow(/lm\/2⊗4 has no downstream multiple-choice score/);
    expect(() =>
      claimVerdict(
        { kind: "above", text: "t", member: "lm/2⊗4", threshold: 0.5, on: "cloze" },
        noMc,
      ),
    ).toThrow(/lm\/2⊗4 has no downstream cloze score/);
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
  it("lists fixed exits then gate points with their gain at equal depth, per seed", () => {
    const rows = gateFrontier([seed(1, 0.5), seed(0.8, 0.45)]);
    expect(rows.map((r) => r.label)).toEqual([
      "fixed exit 1",
      "fixed exit 2",
      "fixed exit 3",
      "gate q = 0.3",
      "gate q = 0.7",
    ]);
    expect(rows[2]!.value.mean).toBeCloseTo(0.9, 12);
    expect(rows[2]!.valuePerSeed).toEqual([1, 0.8]);
    expect(rows[3]!.gain).toEqual([expect.closeTo(0.1, 12), expect.closeTo(0.05, 12)]);
    expect(rows[3]!.depthPerSeed).toEqual([1.5, 1.5]);
    expect(frontierTable(rows, "accuracy", true).split("\n")[5]).toBe(
      "| gate q = 0.3 | 1.50 ± 0.00 | 47.50 ± 3.54 % | 1.50: 50.0 %, 1.50: 45.0 % |",
    );
  });
  // five seeds, fixed exit 0.2 → 0.6 → 0.9; per q the gate's depth and value in each seed
  const five = (points: GatePoint[]) => gateFrontier(fiveGateSeeds(points));
  const wins = { q: 0.1, depth: [1.5, 1.5, 1.5, 1.5, 1.5], value: [0.5, 0.52, 0.49, 0.51, 0.5] };
  const loses = { q: 0.3, depth: [2, 2, 2, 2, 2], value: [0.5, 0.52, 0.49, 0.51, 0.5] };
  const mixed = { q: 0.5, depth: [2, 2, 2, 2, 2], value: [0.7, 0.5, 0.65, 0.55, 0.6] };
  const atR = { q: 0.9, depth: [3, 3, 3, 3, 3], value: [0.9, 0.9, 0.9, 0.9, 0.9] };
  it("judges each q on its paired gain's CI and leaves out points at depth R", () => {
    const v = gateVerdict(five([wins, loses, mixed, atR]), "accuracy");
    expect(v.points.map((p) => p.kind)).toEqual(["holds", "contradicted", "inconclusive", null]);
    expect(v.kind).toBe("inconclusive");
    expect(v.line).toMatch(
      /^inconclusive: the gate beats fixed exit at its own mean depth at 1 of 3 judged q values, is beaten at 1 /,
    );
    // per-seed gains: q = 0.1 at depth 1.5, where fixed exit is 0.4
    expect(v.line).toContain(
      "q=0.1: depth 1.50, gain +10.40 points (per seed +10.00, +12.00, +9.00, +11.00, +10.00), 95 % CI [+8.98, +11.82] → holds",
    );
    expect(v.line).toContain("q=0.9: depth 3.00 = R in every seed, left out (it is fixed exit 3)");
  });
  it("holds when most judged points hold, is contradicted when most lose", () => {
    expect(gateVerdict(five([wins, { ...wins, q: 0.2 }, loses, atR]), "accuracy").kind).toBe(
      "holds",
    );
    expect(gateVerdict(five([loses, { ...loses, q: 0.4 }, mixed]), "accuracy").kind).toBe(
      "contradicted",
    );
    // nothing to judge, or too few seeds: inconclusive
    expect(gateVerdict(five([atR]), "accuracy").kind).toBe("inconclusive");
    const two = gateFrontier([seed(1, 0.9), seed(1, 0.9)]);
    expect(gateVerdict(two, "accuracy").line).toMatch(/^inconclusive \(2 seeds < 5\)/);
  });
});

describe("study definitions", () => {
  it("every claim of every study at both scales names members its arms train", () => {
    for (const scale of ["cpu", "paper"] as const) {
      for (const name of STUDY_NAMES) {
        if (isGateStudy(name)) {
          const g = gateStudy(name, scale);
          expect(g.loops).toBeGreaterThan(1);
          expect(g.qs.length).toBeGreaterThan(1);
          continue;
        }
        if (isExitRulesStudy(name)) {
          const e = exitRulesStudy(name, scale);
          expect(e.rules.filter((r) => r.kind === "fixed")).toHaveLength(e.source.loops);
          expect(e.rules.some((r) => r.kind === "oracle")).toBe(true);
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
          const refs =
            c.kind === "better"
              ? [c.a, c.b]
              : c.kind === "widens"
                ? [...c.wide, ...c.narrow]
                : [c.member];
          for (const r of refs) expect(labels, `${name} ${scale}: ${r}`).toContain(r);
        }
      }
    }
  });
  it("ablations: 2⊗1 vs 2⊗4 at 1×, 2×, 4× the steps, and 2⊗4 with one recipe change each", () => {
    const def = sweepStudy("ablations", "cpu");
    const lm = sweepStudy("lm", "cpu").arms[0]!;
    expect(def.arms.map((a) => [a.id, a.loops, a.train.steps])).toEqual([
      ["budget-1x", [1, 4], lm.train.steps],
      ["budget-2x", [1, 4], 2 * lm.train.steps!],
      ["budget-4x", [1, 4], 4 * lm.train.steps!],
      ["out-proj-depth", [4], lm.train.steps],
      ["loop-norm", [4], lm.train.steps],
      ["block-lr", [4], lm.train.steps],
    ]);
    const cmd = (id: string) =>
      armCommand(def.arms.find((a) => a.id === id)!, 1, "runs/r/ablations");
    expect(cmd("out-proj-depth")).toContain(
      " --loops 4 --d-model 64 --d-state 16 --headdim 16 --chunk 64 --out-proj-scale depth ",
    );
    expect(cmd("loop-norm")).toContain(" --loop-norm ");
    expect(cmd("block-lr")).toContain(" --block-lr per-loop ");
    expect(cmd("budget-4x")).toContain(` --steps ${4 * lm.train.steps!} `);
    // every claim compares perplexities on paired seeds: 3 budgets, 2 per recipe change
    expect(def.claims).toHaveLength(9);
    expect(def.claims.every((c) => c.kind === "better" && c.minGap === 0)).toBe(true);
  });
  it("backbone-budget: the hybrid's and Transformer's 2⊗1 vs 2⊗4 at 1×, 2×, 4× the backbones study's steps", () => {
    const def = sweepStudy("backbone-budget", "cpu");
    const bb = sweepStudy("backbones", "cpu");
    const steps = bb.arms[0]!.train.steps!;
    expect(def.arms.map((a) => [a.id, a.model.backbone, a.loops, a.train.steps])).toEqual([
      ["hybrid-1x", "hybrid", [1, 4], steps],
      ["hybrid-2x", "hybrid", [1, 4], 2 * steps],
      ["hybrid-4x", "hybrid", [1, 4], 4 * steps],
      ["transformer-1x", "transformer", [1, 4], steps],
      ["transformer-2x", "transformer", [1, 4], 2 * steps],
      ["transformer-4x", "transformer", [1, 4], 4 * steps],
    ]);
    // the 1× arms are the backbones study's sweeps, in its folders
    for (const id of ["hybrid", "transformer"]) {
      const mine = def.arms.find((a) => a.id === `${id}-1x`)!;
      const theirs = bb.arms.find((a) => a.id === id)!;
      expect(mine.sharedWith).toEqual({ study: "backbones", arm: id });
      expect(armCommand(mine, 2, "/o/backbone-budget")).toBe(armCommand(theirs, 2, "/o/backbones"));
    }
    // a longer budget scales the evaluation interval with the steps (the same number of points)
    const four = def.arms.find((a) => a.id === "transformer-4x")!;
    expect(four.train.evalEvery).toBe(4 * bb.arms[0]!.train.evalEvery!);
    expect(armCommand(four, 1, "o")).toContain(" --backbone transformer ");
    expect(def.claims.map((c) => c.kind === "better" && `${c.a} > ${c.b} (${c.minGap})`)).toEqual(
      ["hybrid", "transformer"].flatMap((id) =>
        [1, 2, 4].map((k) => `${id}-${k}x/2⊗4 > ${id}-${k}x/2⊗1 (0)`),
      ),
    );
  });
  it("lm judges the downstream claim on the cloze and only reports PIQA", () => {
    const def = sweepStudy("lm", "cpu");
    expect(def.arms[0]!.cloze).toEqual({ choices: 4, limit: 500 });
    expect(def.arms[0]!.mc?.name).toBe("PIQA");
    const on = def.claims.map((c) => (c.kind === "widens" ? "metric" : (c.on ?? "metric")));
    expect(on).not.toContain("mc");
    expect(on.filter((o) => o === "cloze")).toHaveLength(3);
  });
  it("mano scores every member at each expression length on the pilots' count", () => {
    expect(sweepStudy("mano", "cpu").arms[0]!.perLength).toEqual({ count: 1024 });
  });
  it("phop at cpu scale compares 1⊗1, 1⊗4 and the iso-FLOPs 4⊗1 under dense and answer-only targets", () => {
    const def = sweepStudy("phop", "cpu");
    expect(def.arms.map((a) => [a.id, a.task.dense, a.task.hops, a.task.length])).toEqual([
      ["dense", true, 4, 32],
      ["answer-only", false, 4, 32],
    ]);
    expect(armCommand(def.arms[0]!, 2, "runs/r/phop")).toBe(
      "looplm sweep --protocol iso-flops --task phop --alphabet 4 --length 32 --hops 4 --dense --base 1 --loops 1,4 --d-model 128 --d-state 16 --headdim 16 --chunk 32 --loop-norm --steps 2000 --batch 64 --lr 0.003 --warmup 100 --eval-every 250 --eval-count 512 --seed 2 --out runs/r/phop/dense/seed-2",
    );
    // answer-only: the same flags without --dense
    expect(armCommand(def.arms[1]!, 2, "runs/r/phop")).toMatch(
      /^looplm sweep --protocol iso-flops --task phop --alphabet 4 --length 32 --hops 4 --base 1 --loops 1,4 .* --out runs\/r\/phop\/answer-only\/seed-2$/,
    );
    expect(
      def.claims.map((c) =>
        c.kind === "better" ? `${c.a} > ${c.b}` : c.kind === "widens" ? "" : c.member,
      ),
    ).toEqual([
      "dense/1⊗1",
      "dense/1⊗4 > dense/1⊗1",
      "dense/1⊗4 > dense/4⊗1",
      "answer-only/1⊗1",
      "answer-only/1⊗4 > answer-only/1⊗1",
      "answer-only/1⊗4 > answer-only/4⊗1",
    ]);
    // "matches or exceeds": within 2 points
    expect(
      def.claims
        .filter((c) => c.kind === "better" && c.b.endsWith("4⊗1"))
        .map((c) => c.kind === "better" && c.minGap),
    ).toEqual([-0.02, -0.02]);
  });
  it("a depth sweep plots the metric against R for the looped, deep and shallow models", () => {
    const seeds = [0, 0.02].map(
      (d) =>
        new Map([
          ["R2", sweepFile("accuracy", { "1⊗1": [0.4 + d], "1⊗2": [0.5, 0.9 + d], "2⊗1": [0.95] })],
          [
            "R4",
            sweepFile("accuracy", { "1⊗1": [0.3], "1⊗4": [0.3, 0.4, 0.5, 0.8], "4⊗1": [0.6 + d] }),
          ],
        ]),
    );
    const rows = aggregateSeeds(["R2", "R4"], seeds);
    expect(sweepStudyCharts(rows).has("by-depth")).toBe(false);
    const chart = sweepStudyCharts(rows, [], true).get("by-depth")!;
    const values = (
      chart as unknown as { data: { values: { R: number; model: string; mean: number }[] } }
    ).data.values;
    expect(values.map((v) => [v.R, v.model, Number(v.mean.toFixed(6))])).toEqual([
      [2, "shallow 1⊗1", 41],
      [2, "looped 1⊗R", 91],
      [2, "deep R⊗1", 95],
      [4, "shallow 1⊗1", 30],
      [4, "looped 1⊗R", 80],
      [4, "deep R⊗1", 61],
    ]);
  });
  it("depth sweeps R = 2, 3, 4 with p = R hops, answer-only, and asks whether the deep deficit grows", () => {
    const def = sweepStudy("depth", "cpu");
    expect(def.depthChart).toBe(true);
    expect(
      def.arms.map((a) => [a.id, a.protocol, a.loops, a.task.hops, a.task.dense ?? false]),
    ).toEqual([
      ["R2", "iso-flops", [1, 2], 2, false],
      ["R3", "iso-flops", [1, 3], 3, false],
      ["R4", "iso-flops", [1, 4], 4, false],
    ]);
    expect(new Set(def.arms.map((a) => a.task.length)).size).toBe(1);
    // 2,000 steps at R = 2 (its pilot learns by then), the answer-only p-hop budget at R = 3 and 4
    const phop = sweepStudy("phop", "cpu").arms.find((a) => a.id === "answer-only")!;
    expect(phop.train.steps).toBe(8000);
    expect(def.arms.map((a) => a.train.steps)).toEqual([2000, 8000, 8000]);
    expect(def.arms.every((a) => a.task.length! >= a.task.hops! + 2)).toBe(true);
    // R = 4 is the p-hop study's answer-only sweep: the same command, in p-hop's folder
    const r4 = def.arms.find((a) => a.id === "R4")!;
    expect(r4.sharedWith).toEqual({ study: "phop", arm: "answer-only" });
    expect(armArgs(r4, 3, "/out/depth")).toEqual(armArgs(phop, 3, "/out/phop"));
    expect(armArgs(r4, 3, "/out/depth")).toContain("/out/phop/answer-only/seed-3");
    expect(def.arms.filter((a) => a.sharedWith).map((a) => a.id)).toEqual(["R4"]);
    // the lender knows who borrows (so that it waits for them), outside its hashed settings
    expect(sweepStudy("phop", "cpu").lentTo).toEqual({ "answer-only": ["depth"] });
    expect(sweepStudy("backbones", "cpu").lentTo).toEqual({
      hybrid: ["backbone-budget"],
      transformer: ["backbone-budget"],
    });
    expect(sweepStudy("phop", "paper").lentTo).toBeUndefined();
    // built once per scale and shared, so no caller can change it for the next one
    const lentTo = sweepStudy("backbones", "cpu").lentTo!;
    expect(Object.isFrozen(lentTo) && Object.isFrozen(lentTo.hybrid)).toBe(true);
    expect(() => (lentTo.hybrid as string[]).push("x")).toThrow(TypeError);
    expect(sweepStudy("backbones", "cpu").lentTo!.hybrid).toEqual(["backbone-budget"]);
    expect(studySettings(sweepStudy("phop", "cpu"))).toBe(studySettings(phopStudy(true)));
    const widens = def.claims.filter((c) => c.kind === "widens");
    expect(widens).toEqual([
      expect.objectContaining({
        wide: ["R4/1⊗4", "R4/4⊗1"],
        narrow: ["R2/1⊗2", "R2/2⊗1"],
        minGap: 0,
      }),
    ]);
    expect(
      def.claims
        .filter((c) => c.kind === "better")
        .map((c) => c.kind === "better" && `${c.a} > ${c.b}`),
    ).toEqual([
      "R2/1⊗2 > R2/2⊗1",
      "R3/1⊗3 > R3/3⊗1",
      "R4/1⊗4 > R4/4⊗1",
      "R2/1⊗2 > R2/1⊗1",
      "R3/1⊗3 > R3/1⊗1",
      "R4/1⊗4 > R4/1⊗1",
    ]);
  });
});

const TINY = tinyStudy(2, { "1⊗2": "99 %" });

describe("running a study (tiny settings)", () => {
  it("trains every seed with the sweep machinery, aggregates and writes its results", async () => {
    const dir = tmp();
    const r = await runSweepStudy(TINY, { backend, outDir: dir, seeds: 2, resume: false });
    expect(existsSync(join(dir, "iso-param", "seed-2", "sweep.json"))).toBe(true);
    expect(r.rows.map((x) => x.values.length)).toEqual([2, 2]);
    // two seeds: the claim gets an interval but no verdict
    expect(r.verdicts[0]!.kind).toBe("inconclusive");
    expect(r.verdicts[0]!.line).toMatch(
      /^inconclusive \(2 seeds < 5\): 1⊗2 .*\(paired t, 2 seeds\)/,
    );
    // seed 2 trains different weights from seed 1
    expect(r.perSeed[0]!.get("iso-param")!.rows[1]!.per_step).not.toEqual(
      r.perSeed[1]!.get("iso-param")!.rows[1]!.per_step,
    );
    // resuming keeps the finished members: the same numbers
    const again = await runSweepStudy(TINY, { backend, outDir: dir, seeds: 2, resume: true });
    expect(again.rows).toEqual(r.rows);
    // a second run into the same folder must say how to continue, or replace it
    await expect(
      runSweepStudy(TINY, { backend, outDir: dir, seeds: 1, resume: false }),
    ).rejects.toThrow(/--resume.*--overwrite/);
    const replaced = await runSweepStudy(TINY, {
      backend,
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
      facts: TINY_FACTS,
      table,
      verdicts: r.verdicts,
      claims: claimTables(r.verdicts),
      charts: sweepStudyCharts(r.rows, r.verdicts),
      data: r.rows,
      commands: ["x"],
      seedMachines: r.machines,
    });
    expect(files.map((f) => f.slice(dir.length + 1))).toEqual([
      "results.json",
      "results.md",
      "report.html",
      "tiny-metric.svg",
      "tiny-per-step.svg",
      "tiny-claims-accuracy.svg",
    ]);
    const md = readFileSync(join(dir, "results.md"), "utf8");
    expect(md).toContain(`- loops help: **${r.verdicts[0]!.line}**`);
    expect(md).toContain("| loops help | inconclusive | 1⊗2 − 1⊗1 accuracy points, needs > 0.00 |");
    // where each seed was trained, from its record
    expect(r.machines).toHaveLength(2);
    expect(md).toContain(`- seed 2: ${r.machines[1]!.cpu}`);
    const json = JSON.parse(readFileSync(join(dir, "results.json"), "utf8"));
    expect(json.seed_machines).toEqual(r.machines);
    expect(readFileSync(join(dir, "tiny-metric.svg"), "utf8")).toMatch(/^<svg/);
  }, 120_000);

  it("--jobs 2 trains the sweeps in child processes and prints what one job prints", async () => {
    const one = await runSweepStudy(TINY, { backend, outDir: tmp(), seeds: 2, resume: false });
    const dir = tmp();
    const lines: string[] = [];
    const two = await runSweepStudy(TINY, {
      backend,
      outDir: dir,
      seeds: 2,
      resume: false,
      jobs: 2,
      launcher: {
        exec: process.execPath,
        args: ["--import", "tsx", "--conditions=@loop/source", MAIN],
      },
      log: (l) => lines.push(l),
    });
    expect(lines[0]).toBe(`tiny: 2 sweeps, 2 at a time, ${threadsEach} thread(s) each`);
    expect(lines.some((l) => l.startsWith("[iso-param seed 2] "))).toBe(true);
    expect(two.rows).toEqual(one.rows);
    expect(two.verdicts).toEqual(one.verdicts);
    // a failing child names its sweep and says why
    await expect(
      runSweepStudy(TINY, {
        backend,
        outDir: dir,
        seeds: 1,
        resume: false,
        jobs: 2,
        launcher: {
          exec: process.execPath,
          args: ["--import", "tsx", "--conditions=@loop/source", MAIN],
        },
      }),
    ).rejects.toThrow(
      /\[iso-param seed 1\] looplm sweep .* exited with code 1:\n.*already holds a sweep/s,
    );
  }, 240_000);

  it("--jobs keeps each seed's record as soon as its sweeps finish, though another seed fails", async () => {
    const dir = tmp();
    // a launcher that runs the real CLI, except that every seed-2 sweep fails at once
    const wrapper = join(dir, "launch.mjs");
    writeFileSync(
      wrapper,
      `import { spawnSync } from "node:child_process";
const args = process.argv.slice(2);
if (args[args.indexOf("--seed") + 1] === "2") { console.error("seed 2 cannot train here"); process.exit(1); }
const r = spawnSync(process.execPath, ["--import", "tsx", "--conditions=@loop/source", ${JSON.stringify(MAIN)}, ...args], { stdio: "inherit" });
process.exit(r.status ?? 1);
`,
    );
    const out = join(dir, "study");
    await expect(
      runSweepStudy(TINY, {
        backend,
        outDir: out,
        seeds: 2,
        resume: false,
        jobs: 2,
        launcher: { exec: process.execPath, args: [wrapper] },
      }),
    ).rejects.toThrow(/\[iso-param seed 2\] .* exited with code 1:\n.*seed 2 cannot train here/s);
    expect(existsSync(join(out, "seed-1.json"))).toBe(true);
    expect(existsSync(join(out, "seed-2.json"))).toBe(false);
    // the kept record is what a one-job run of that seed keeps
    const one = await runSweepStudy(TINY, { backend, outDir: tmp(), seeds: 1, resume: false });
    const rec = JSON.parse(readFileSync(join(out, "seed-1.json"), "utf8")) as SeedRecord;
    expect(rec.arms["iso-param"]!.sweep.rows.map((r) => r.metric_value)).toEqual(
      one.rows.map((r) => r.values[0]),
    );
  }, 240_000);

  it("a finished seed's record stands for its folders: a study continues elsewhere from it", async () => {
    const dir = tmp();
    const r = await runSweepStudy(TINY, { backend, outDir: dir, seeds: 2, resume: false });
    // a second machine has only seed 1's record; with --resume it trains seed 2 alone
    const elsewhere = tmp();
    copyFileSync(join(dir, "seed-1.json"), join(elsewhere, "seed-1.json"));
    // what --jobs and --queue hand to their processes and workers
    expect(seedsToTrain(TINY, { outDir: elsewhere, seeds: 2, resume: true })).toEqual([2]);
    expect(seedsToTrain(TINY, { outDir: elsewhere, seeds: 2, resume: false })).toEqual([1, 2]);
    const log: string[] = [];
    const again = await runSweepStudy(TINY, {
      backend,
      outDir: elsewhere,
      seeds: 2,
      resume: true,
      log: (l) => log.push(l),
    });
    expect(again.rows).toEqual(r.rows);
    expect(log.some((l) => l.includes("seed 1/2"))).toBe(false);
    expect(log.some((l) => l.includes("seed 2/2"))).toBe(true);
    expect(existsSync(join(elsewhere, "iso-param", "seed-1"))).toBe(false);
    const record = (d: string, k: number) =>
      JSON.parse(readFileSync(join(d, `seed-${k}.json`), "utf8")) as SeedRecord;
    expect(record(elsewhere, 2).arms).toEqual(record(dir, 2).arms);
    // each record names where its seed was trained; seed 1's machine is the copied record's
    const here = record(elsewhere, 2).machine!;
    expect(here).toMatchObject({ trained: "here", backend: backend.name, node: process.version });
    expect(here.cpu!.length).toBeGreaterThan(0);
    expect(again.machines).toEqual([record(dir, 1).machine, here]);
    // a record of other settings is refused, naming the file
    const other = tinyStudy(3, { "1⊗2": "99 %" });
    await expect(
      runSweepStudy(other, { backend, outDir: elsewhere, seeds: 1, resume: true }),
    ).rejects.toThrow(/seed-1\.json holds seed 1 of study "tiny" trained with other settings/);
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
          cloze: { choices: 4, limit: 5 },
        },
      ],
      claims: [
        { kind: "above", text: "above chance", member: "lm/1⊗2", threshold: 0.5, on: "mc" },
        { kind: "above", text: "cloze", member: "lm/1⊗2", threshold: 0.25, on: "cloze" },
      ],
    };
    const r = await runSweepStudy(def, {
      backend,
      outDir: join(dir, "out"),
      seeds: 1,
      resume: false,
    });
    const file = join(dir, "out", "lm", "seed-1", "downstream.json");
    const saved = JSON.parse(readFileSync(file, "utf8"));
    expect(saved).toMatchObject({ source: "PIQA", items: 6 });
    expect(saved.acc["1⊗2"]).toHaveLength(2); // one accuracy per loop step
    for (const row of r.rows) {
      expect(row.mc!.values[0]! * 6).toBeCloseTo(Math.round(row.mc!.values[0]! * 6), 12);
      expect(row.mc!.values).toEqual([saved.acc[row.label].at(-1)]);
    }
    expect(r.verdicts[0]!.line).toMatch(
      /^inconclusive \(1 seed < 5\): 1⊗2 .* on PIQA, 95 % CI n\/a \(t, 1 seed\); needs > 50\.00 %$/,
    );
    // the cloze of the corpus's held-out tail, scored like PIQA and kept beside it
    const cloze = JSON.parse(readFileSync(join(dir, "out", "lm", "seed-1", "cloze.json"), "utf8"));
    expect(cloze).toMatchObject({ source: "last-word cloze", items: 5 });
    expect(cloze.acc["1⊗2"]).toHaveLength(2);
    for (const row of r.rows) expect(row.cloze!.values).toEqual([cloze.acc[row.label].at(-1)]);
    expect(r.verdicts[1]!.line).toMatch(/^inconclusive \(1 seed < 5\): 1⊗2 .* on last-word cloze/);
    // resumed without the seed's record (seed-record.ts): the stored scores are read back (a
    // changed score would show)
    const dropRecords = () => rmSync(join(dir, "out", "seed-1.json"));
    dropRecords();
    saved.acc["1⊗1"] = [0.125];
    writeFileSync(file, JSON.stringify(saved));
    const again = await runSweepStudy(def, {
      backend,
      outDir: join(dir, "out"),
      seeds: 1,
      resume: true,
    });
    expect(findMember(again.rows, "lm/1⊗1").mc!.values).toEqual([0.125]);
    // scores of another set are not mixed in
    dropRecords();
    const other = { ...def, arms: [{ ...def.arms[0]!, mc: { ...PIQA_FILES, limit: 5 } }] };
    await expect(
      runSweepStudy(other, { backend, outDir: join(dir, "out"), seeds: 1, resume: true }),
    ).rejects.toThrow(/holds PIQA scores on 6 items, not PIQA on 5: remove it to rescore/);
  }, 120_000);

  it("scores a Mano arm's members per expression length once, and resumes without rescoring", async () => {
    const dir = tmp();
    const def: StudyDef = {
      ...TINY,
      arms: [
        {
          ...TINY.arms[0]!,
          id: "mano",
          task: { task: "mano", maxOps: 2 },
          perLength: { count: 6 },
        },
      ],
      claims: [],
    };
    const out = join(dir, "out");
    const r = await runSweepStudy(def, { backend, outDir: out, seeds: 2, resume: false });
    const file = join(out, "mano", "seed-1", "per-length.json");
    const saved = JSON.parse(readFileSync(file, "utf8"));
    expect(saved).toMatchObject({
      source: "mano/eval-len",
      seed: 0x6d616e6f,
      count: 6,
      max_ops: 2,
    });
    // each member's accuracy at ℓ = 1, 2 and every loop step: the library's evaluation
    const model = loadCheckpoint(join(out, "mano", "seed-1", "1x2", "final"));
    const lib = await evaluateManoByLength(model, new ManoTask({ maxOps: 2 }), { count: 6 });
    expect(saved.acc["1⊗2"]).toEqual(lib.lengths.map((l) => l.steps.map((s) => s.accuracy)));
    const seed2 = JSON.parse(readFileSync(join(out, "mano", "seed-2", "per-length.json"), "utf8"));
    for (const row of r.rows)
      expect(row.perLength!.map((l) => [l.ops, l.values])).toEqual(
        [1, 2].map((ops) => [
          ops,
          [saved.acc[row.label][ops - 1].at(-1), seed2.acc[row.label][ops - 1].at(-1)],
        ]),
      );
    const md = perLengthTable(r.rows, def.arms, "markdown")!.split("\n");
    expect(md[0]).toMatch(
      /last loop step; 6 fresh expressions per ℓ, as `looplm eval --per-length`/,
    );
    expect(md[2]).toBe("| arm | model | ℓ = 1 (mean ± sd, 2 seeds) | ℓ = 2 (mean ± sd, 2 seeds) |");
    expect(md[4]).toMatch(
      /^\| mano \| 1⊗1 \| \d+\.\d\d ± \d+\.\d\d % \| \d+\.\d\d ± \d+\.\d\d % \|$/,
    );
    expect(perLengthTable(r.rows, TINY.arms, "text")).toBeDefined();
    expect(
      perLengthTables(
        aggregateSeeds(
          ["iso-param"],
          [new Map([["iso-param", sweepFile("accuracy", { "1⊗1": [0.5] })]])],
        ),
        TINY.arms,
      ),
    ).toBeUndefined();
    // the study's results carry them: results.json, results.md
    await writeStudyOutput(dir, {
      facts: TINY_FACTS,
      table: sweepStudyTables(r.rows, def.arms),
      perLength: perLengthTables(r.rows, def.arms),
      verdicts: r.verdicts,
      charts: new Map(),
      data: r.rows,
      commands: ["x"],
    });
    expect(readFileSync(join(dir, "results.md"), "utf8")).toContain(md.join("\n"));
    const json = JSON.parse(readFileSync(join(dir, "results.json"), "utf8"));
    expect(json.results[0].perLength).toEqual(JSON.parse(JSON.stringify(r.rows[0]!.perLength)));
    // resumed without the seeds' records: the stored scores are read back, not recomputed (a
    // changed score would show)
    const dropRecords = () => {
      for (const k of [1, 2]) rmSync(join(out, `seed-${k}.json`));
    };
    dropRecords();
    saved.acc["1⊗1"] = [[0.25], [0.125]];
    writeFileSync(file, JSON.stringify(saved));
    const again = await runSweepStudy(def, { backend, outDir: out, seeds: 2, resume: true });
    expect(findMember(again.rows, "mano/1⊗1").perLength!.map((l) => l.values[0])).toEqual([
      0.25, 0.125,
    ]);
    // scores of another count are not mixed in
    dropRecords();
    const other = { ...def, arms: [{ ...def.arms[0]!, perLength: { count: 5 } }] };
    await expect(
      runSweepStudy(other, { backend, outDir: out, seeds: 1, resume: true }),
    ).rejects.toThrow(/holds 6 expressions per length .* not 5 .*: remove it to rescore/);
  }, 120_000);

  /** The exit-gate study at tiny settings. */
  const tinyGate = {
    ...gateStudy("exit-gate", "cpu"),
    task: { task: "phop" as const, alphabet: 3, length: 8, hops: 2 },
    model: { dModel: 8, dState: 4, headdim: 8, chunk: 8 },
    loops: 2,
    pretrain: { steps: 2, batch: 4, warmup: 0, evalEvery: 0, evalCount: 8, ckptEvery: 0 },
    gate1: { steps: 2, batch: 4, warmup: 0, evalEvery: 0, evalCount: 8, ckptEvery: 0 },
    gate2: { steps: 2, batch: 4, warmup: 0, evalEvery: 0, evalCount: 8, ckptEvery: 0 },
    evalCount: 8,
    qs: [0.3, 0.7],
  };

  it("runs the exit-gate pipeline and its frontier (tiny settings)", async () => {
    const def = tinyGate;
    const dir = tmp();
    const r = await runGateStudy(def, { backend, outDir: dir, seeds: 1, resume: false });
    for (const s of ["pretrain", "gate1", "gate2"])
      expect(existsSync(join(dir, "seed-1", s, "final", "model.safetensors"))).toBe(true);
    expect(r.frontier.map((x) => x.label)).toEqual([
      "fixed exit 1",
      "fixed exit 2",
      "gate q = 0.3",
      "gate q = 0.7",
    ]);
    // one seed: no verdict
    expect(r.verdict.kind).toBe("inconclusive");
    expect(r.verdict.line).toMatch(/^inconclusive \(1 seed < 5\): the gate beats fixed exit/);
    expect(gateStudyCharts(r.frontier, "accuracy").has("frontier")).toBe(true);
    const again = await runGateStudy(def, { backend, outDir: dir, seeds: 1, resume: true });
    expect(again.frontier).toEqual(r.frontier);
  }, 120_000);

  it("a mixed-difficulty gate study scores every p apart and keeps each seed in a record", async () => {
    const def = {
      ...tinyGate,
      ...gateStudy("gate-mixed", "cpu"),
      task: { task: "phop" as const, alphabet: 3, length: 8, hops: 2, mixedHops: true },
      model: tinyGate.model,
      loops: 2,
      pretrain: tinyGate.pretrain,
      gate1: tinyGate.gate1,
      gate2: tinyGate.gate2,
      evalCount: 12,
      qs: [0.3, 0.7],
    };
    expect(def.name).toBe("gate-mixed");
    expect(def.byHops).toBe(true);
    const dir = tmp();
    const r = await runGateStudy(def, { backend, outDir: dir, seeds: 1, resume: false });
    const byHops = r.perSeed[0]!.byHops!;
    expect(byHops.map((h) => h.hops)).toEqual([1, 2]);
    expect(byHops.reduce((a, h) => a + h.count, 0)).toBe(12);
    // the whole set's accuracy is the rows-weighted mean of the parts'
    for (let step = 0; step < 2; step++) {
      const parts = byHops.reduce((a, h) => a + h.count * h.perStep[step]!, 0) / 12;
      expect(parts).toBeCloseTo(r.perSeed[0]!.perStep[step]!, 12);
    }
    expect(r.machines[0]!.cpu).toBeTruthy();
    expect(r.machines[0]!.commit).toMatch(/^[0-9a-f]{40}/);
    // the record stands for the seed's folders: a resumed run trains nothing without them
    rmSync(join(dir, "seed-1"), { recursive: true, force: true });
    const again = await runGateStudy(def, { backend, outDir: dir, seeds: 1, resume: true });
    expect(again.perSeed).toEqual(r.perSeed);
    expect(existsSync(join(dir, "seed-1"))).toBe(false);
    // a record of other settings is refused, naming the file
    await expect(
      runGateStudy({ ...def, qs: [0.5] }, { backend, outDir: dir, seeds: 1, resume: true }),
    ).rejects.toThrow(/seed-1\.json holds seed 1 of study "gate-mixed" made with other settings/);
    // a fixed-p task cannot be split by difficulty
    await expect(
      runGateStudy(
        { ...def, task: tinyGate.task },
        { backend, outDir: tmp(), seeds: 1, resume: false },
      ),
    ).rejects.toThrow(/byHops needs a p-hop task with mixedHops/);
  }, 180_000);

  it("prints for each seed the train and eval commands that give the study's models and numbers", async () => {
    const dir = tmp();
    await runGateStudy(tinyGate, { backend, outDir: dir, seeds: 1, resume: false });
    const byHand = tmp();
    const commands = gateCommands(tinyGate, 1, byHand);
    expect(commands[0]).toBe(
      `looplm train --task phop --alphabet 3 --length 8 --hops 2 --layers 1 --loops 2 --d-model 8 --d-state 4 --headdim 8 --chunk 8 --steps 2 --batch 4 --warmup 0 --eval-every 0 --eval-count 8 --ckpt-every 0 --stage pretrain --seed 1 --out ${join(byHand, "seed-1", "pretrain")}`,
    );
    expect(commands[3]).toBe(
      `looplm eval --model ${join(byHand, "seed-1", "gate2", "final")} --count 8 --batch-size 64 --q-sweep 0.3,0.7`,
    );
    vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    for (const args of gateArgs(tinyGate, 1, byHand))
      await buildProgram()
        .exitOverride()
        .parseAsync(["node", "looplm", ...args, "--backend", "portable"]);
    vi.restoreAllMocks();
    for (const s of ["pretrain", "gate1", "gate2"]) {
      const f = (d: string) => readFileSync(join(d, "seed-1", s, "final", "model.safetensors"));
      expect(f(byHand).equals(f(dir)), `${s}: the same weights`).toBe(true);
    }
    const study = JSON.parse(readFileSync(join(dir, "seed-1", "eval.json"), "utf8"));
    const cli = JSON.parse(readFileSync(join(byHand, "seed-1", "gate2", "eval.json"), "utf8"));
    expect(study.perStep).toHaveLength(2);
    expect(study.gated.map((g: { q: number }) => g.q)).toEqual([0.3, 0.7]);
    expect(cli.per_step).toEqual(study.perStep);
    expect(cli.gated).toEqual(study.gated);
  }, 120_000);
});

describe("looplm reproduce", () => {
  it("trains two sweeps at a time without --jobs where there are two cores and two sweeps", () => {
    expect(defaultJobs(10, 2)).toBe(2);
    expect(defaultJobs(10, 16)).toBe(2);
    expect(defaultJobs(1, 2)).toBe(1); // one sweep: in this process, with every thread
    expect(defaultJobs(10, 1)).toBe(1); // one core: a second process would only share it
  });

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
      'study must be one of phop, depth, mano, lm, backbones, backbone-budget, ablations, exit-gate, gate-mixed, lm-gate, exit-rules, exit-rules-lm, all, got "bogus"',
    );
    await expect(run("phop", "--scale", "huge")).rejects.toThrow(
      /--scale must be one of cpu, paper/,
    );
    await expect(run("phop", "--resume", "--overwrite")).rejects.toThrow(
      "--resume and --overwrite exclude each other: choose one",
    );
  });
});
