/**
 * `looplm reproduce --resume` reads a study's finished seeds from their records (seed-<k>.json)
 * and trains nothing for them: so every record is checked before any number of it is used. A
 * tampered, truncated, misnamed or non-regular record is refused naming the file and the field;
 * a FIFO under a record's name is refused at once; and `--overwrite` removes the seed records
 * (then the results and the folders the study trained in) before anything else, so an
 * interrupted overwrite can never be resumed into the old study.
 */
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { planIsoFlops, planIsoParameter } from "@loop/looped";
import { afterEach, describe, expect, it, vi } from "vitest";
import { TASK_DEFAULTS, TASK_METRIC } from "../options/task.js";
import { run } from "../run-in-process.test-util.js";
import { modelConfig } from "./arm-inputs.js";
import { CLOZE_NAME } from "./downstream.js";
import { type SeedRecord, studySettings } from "./seed-record.js";
import { armLabels, checkSeedRecordBody, FieldProblem } from "./seed-record-schema.js";
import { isSweepStudy, STUDY_NAMES, sweepStudy } from "./studies.js";
import type { StudyDef } from "./study-types.js";

afterEach(() => vi.restoreAllMocks());

const PHOP = sweepStudy("phop", "cpu");

/** The loop steps of member "N⊗R". */
const loops = (label: string) => Number(label.split("⊗")[1]);

/** Member `label`'s values at each loop step, rising to `v` at the last. */
const steps = (label: string, v: number) =>
  Array.from({ length: loops(label) }, (_, i) => (v * (i + 1)) / loops(label));

/**
 * A well-formed record of `def`'s seed `seed`, every member at accuracy `acc` (perplexity
 * 1 + 10·acc), with the downstream, cloze and per-length scores its arms have.
 */
function record(def: StudyDef, seed: number, acc = 0.5): SeedRecord {
  const arms: SeedRecord["arms"] = {};
  for (const arm of def.arms) {
    const labels = armLabels(arm);
    const metric = TASK_METRIC[arm.task.task];
    const v = metric === "accuracy" ? acc : 1 + 10 * acc;
    const perLabel = <T>(f: (l: string) => T) => Object.fromEntries(labels.map((l) => [l, f(l)]));
    arms[arm.id] = {
      ...(arm.mc ? { downstream: { name: arm.mc.name, acc: perLabel((l) => steps(l, acc)) } } : {}),
      ...(arm.cloze ? { cloze: { name: CLOZE_NAME, acc: perLabel((l) => steps(l, acc)) } } : {}),
      ...(arm.perLength
        ? {
            perLength: perLabel((l) =>
              Array.from({ length: arm.task.maxOps ?? TASK_DEFAULTS.maxOps }, () => steps(l, acc)),
            ),
          }
        : {}),
      sweep: {
        protocol: arm.protocol,
        task: arm.task.task,
        metric,
        rows: labels.map((label) => ({
          label,
          role: label.endsWith("⊗1") ? "baseline" : "looped",
          run: label.replace("⊗", "x"),
          params: 1000,
          flops_per_token: 2000,
          metric_value: v,
          // one value per loop step of the member ("N⊗R"), the final one last
          per_step: steps(label, v),
        })),
      },
    };
  }
  return {
    study: def.name,
    seed,
    settings: studySettings(def),
    arms,
    machine: { recorded: "2026-01-01T00:00:00.000Z", trained: "here", backend: "portable" },
  };
}

/** A study folder holding `records` (seed k at index k − 1); returns --out. */
function studyWith(records: unknown[]): { out: string; dir: string } {
  const out = mkdtempSync(join(tmpdir(), "looplm-seed-records-"));
  const dir = join(out, "phop");
  mkdirSync(dir);
  records.forEach((r, k) => {
    writeFileSync(join(dir, `seed-${k + 1}.json`), JSON.stringify(r));
  });
  return { out, dir };
}

const resume = (out: string, seeds: number) =>
  run(
    ...["reproduce", "phop", "--seeds", String(seeds), "--out", out, "--resume"],
    ...["--jobs", "1", "--backend", "portable"],
  );

describe("seed records", () => {
  it("the schema's member labels are those the sweeps plan, for every arm of every study", () => {
    for (const name of STUDY_NAMES) {
      if (!isSweepStudy(name)) continue;
      for (const scale of ["cpu", "paper"] as const)
        for (const arm of sweepStudy(name, scale).arms) {
          const base = modelConfig(arm.model, arm.base, 1, 64);
          const plan = arm.protocol === "iso-param" ? planIsoParameter : planIsoFlops;
          expect(armLabels(arm), `${name} ${scale} ${arm.id}`).toEqual(
            plan(base, arm.loops).map((p) => p.label),
          );
        }
    }
  });

  it("checks the names of the downstream and cloze sets, and text without control characters", () => {
    for (const name of STUDY_NAMES) {
      if (!isSweepStudy(name)) continue;
      const def = sweepStudy(name, "cpu");
      expect(() => checkSeedRecordBody(def, record(def, 1) as never), name).not.toThrow();
    }
    const lm = sweepStudy("lm", "cpu");
    const scored = lm.arms.find((a) => a.cloze)!;
    const bad = record(lm, 1);
    // (names reach the terminal's table header)
    bad.arms[scored.id]!.cloze!.name = "\x1b[2J";
    expect(() => checkSeedRecordBody(lm, bad as never)).toThrow(
      new FieldProblem(
        `arms["${scored.id}"].cloze.name`,
        'must be "last-word cloze", got "\\u001b[2J"',
      ),
    );
    const cpu = record(PHOP, 1);
    cpu.machine!.cpu = "AMD\x1b]0;pwned\x07";
    expect(() => checkSeedRecordBody(PHOP, cpu as never)).toThrow(
      'machine.cpu must be text without control characters, got "AMD\\x1b]0;pwned\\x07"',
    );
  });

  it("well-formed records stand for their seeds: the study's table, nothing trained", async () => {
    const { out, dir } = studyWith([record(PHOP, 1, 0.5), record(PHOP, 2, 0.7)]);
    const r = await resume(out, 2);
    expect(r.out).toMatch(/60\.00 ± 14\.14 %/);
    expect(readdirSync(dir).filter((f) => !f.includes("."))).toEqual([]);
  });

  it("refuses a tampered, truncated or misnamed record, naming the file and the field", async () => {
    const cases: [string, (r: SeedRecord) => unknown, string][] = [
      [
        "an accuracy of 7.5",
        (r) => {
          r.arms.dense!.sweep.rows[1]!.metric_value = 7.5;
          return r;
        },
        'is not a valid seed record: arms["dense"].sweep.rows[1].metric_value is an accuracy of 7.5, outside [0, 1]',
      ],
      [
        "a string for a number",
        (r) => {
          (r.arms.dense!.sweep.rows[0]!.per_step as unknown[])[0] = "0.4";
          return r;
        },
        'is not a valid seed record: arms["dense"].sweep.rows[0].per_step[0] must be a finite number, got "0.4"',
      ],
      [
        "a missing arm",
        (r) => {
          r.arms = {};
          return r;
        },
        'is not a valid seed record: arms["dense"] is missing (an arm of the study)',
      ],
      [
        "a member renamed",
        (r) => {
          r.arms.dense!.sweep.rows[0]!.label = "9⊗9";
          return r;
        },
        'is not a valid seed record: arms["dense"].sweep.rows[0].label must be "1⊗1", got "9⊗9"; remove it (or --overwrite) to train seed 2 again',
      ],
      [
        "a perplexity in an accuracy arm (its range passes for a perplexity)",
        (r) => {
          const sweep = r.arms.dense!.sweep;
          sweep.metric = "ppl";
          for (const row of sweep.rows) {
            row.metric_value = 7.5;
            row.per_step = row.per_step.map(() => 7.5);
          }
          return r;
        },
        'is not a valid seed record: arms["dense"].sweep.metric must be "accuracy" (the metric of task phop), got "ppl"',
      ],
      [
        "a loop step dropped",
        (r) => {
          r.arms.dense!.sweep.rows[1]!.per_step.shift();
          return r;
        },
        'is not a valid seed record: arms["dense"].sweep.rows[1].per_step must hold one value per loop step of the member (4), got 3',
      ],
      [
        "a final value edited apart from its loop steps",
        (r) => {
          r.arms.dense!.sweep.rows[0]!.metric_value = 0.99;
          return r;
        },
        'is not a valid seed record: arms["dense"].sweep.rows[0].metric_value must be the member\'s value at its last loop step (per_step: 0.5), got 0.99',
      ],
      [
        "no seed",
        (r) => ({ ...r, seed: undefined }),
        "is not a valid seed record: seed must be an integer ≥ 1, got absent",
      ],
      [
        "another seed's record under this name",
        (r) => ({ ...r, seed: 5 }),
        "holds seed 5, not seed 2 (a record renamed or copied under another seed's name)",
      ],
      [
        "another study's settings",
        (r) => ({ ...r, settings: "0".repeat(64) }),
        'holds seed 2 of study "phop" trained with other settings',
      ],
    ];
    // sizes are checked across seeds: the same settings plan the same members
    const sized = record(PHOP, 2);
    sized.arms.dense!.sweep.rows[2]!.params = 1001;
    const two = studyWith([record(PHOP, 1), sized]);
    await expect(resume(two.out, 2)).rejects.toThrow(
      `${join(two.dir, "seed-2.json")} is not a valid seed record: arms["dense"].sweep.rows[2].params is 1001, but seed 1's is 1000 (the same settings plan the same members); remove it (or --overwrite) to train seed 2 again`,
    );
    for (const [what, edit, message] of cases) {
      const bad = edit(record(PHOP, 2));
      const { out, dir } = studyWith([record(PHOP, 1), bad]);
      await expect(resume(out, 2), what).rejects.toThrow(`${join(dir, "seed-2.json")} ${message}`);
    }
    // cut short (a full disk, a copy interrupted)
    const { out, dir } = studyWith([record(PHOP, 1)]);
    writeFileSync(join(dir, "seed-2.json"), JSON.stringify(record(PHOP, 2)).slice(0, 100));
    await expect(resume(out, 2)).rejects.toThrow(
      new RegExp(`^${join(dir, "seed-2.json")} is not a seed record: not valid JSON`),
    );
  });

  it("a FIFO, a folder, a device, a huge file or a dangling link under a record's name is refused at once, by name", async () => {
    const { out, dir } = studyWith([record(PHOP, 1)]);
    // nothing ever writes into this FIFO: opening it to read would block for good
    execFileSync("mkfifo", [join(dir, "seed-2.json")]);
    await expect(resume(out, 2)).rejects.toThrow(
      `${join(dir, "seed-2.json")} is a FIFO, not a regular file: a seed record is a file; remove it`,
    );
    const other = studyWith([record(PHOP, 1)]);
    mkdirSync(join(other.dir, "seed-2.json"));
    await expect(resume(other.out, 2)).rejects.toThrow(
      `${join(other.dir, "seed-2.json")} is a folder, not a regular file`,
    ); // a link to an endless device is the device; a huge file is not read
    const dev = studyWith([record(PHOP, 1)]);
    symlinkSync("/dev/zero", join(dev.dir, "seed-2.json"));
    await expect(resume(dev.out, 2)).rejects.toThrow(
      `${join(dev.dir, "seed-2.json")} is a character device, not a regular file`,
    );
    const huge = studyWith([record(PHOP, 1)]);
    writeFileSync(join(huge.dir, "seed-2.json"), "");
    truncateSync(join(huge.dir, "seed-2.json"), 2 ** 32);
    await expect(resume(huge.out, 2)).rejects.toThrow(
      `cannot read ${join(huge.dir, "seed-2.json")}: it holds 4294967296 bytes or more, more than a seed record may (at most 16777216); remove it or name another`,
    );
    // a dangling link is named, not read as "no record" (which silently trained the seed again)
    const dangling = studyWith([record(PHOP, 1)]);
    symlinkSync(join(dangling.dir, "gone.json"), join(dangling.dir, "seed-2.json"));
    await expect(resume(dangling.out, 2)).rejects.toThrow(
      `cannot read ${join(dangling.dir, "seed-2.json")}: it is a symbolic link to ${join(dangling.dir, "gone.json")}, which does not exist; restore its target or remove the link`,
    );
  });

  it("a folder under the name of a record still to write is refused before any training", {
    timeout: 30_000,
  }, async () => {
    // (without the check the seed trained for minutes, then its record could not be written)
    const { out, dir } = studyWith([]);
    mkdirSync(join(dir, "seed-1.json"));
    await expect(
      run(
        ...["reproduce", "phop", "--seeds", "1", "--out", out, "--overwrite"],
        ...["--jobs", "1", "--backend", "portable"],
      ),
    ).rejects.toThrow(
      `${join(dir, "seed-1.json")} is a folder, not a regular file: a seed record is a file; remove it`,
    );
    expect(readdirSync(dir)).toEqual(["seed-1.json"]);
  });

  it("--overwrite removes the seed records first: an interrupted overwrite resumes nothing old", async () => {
    const { out, dir } = studyWith([record(PHOP, 1, 0.9)]);
    writeFileSync(join(dir, "results.json"), "{}");
    // an old sweep of the study (at the other scale): its members and scores go too
    mkdirSync(join(dir, "iso-param", "seed-1", "1x1"), { recursive: true });
    writeFileSync(join(dir, "iso-param", "seed-1", "sweep.json"), "{}");
    // the overwrite stops at its first sweep (its folder is taken by a file): as interrupted
    writeFileSync(join(dir, "dense"), "not a folder");
    await expect(
      run(
        ...["reproduce", "phop", "--seeds", "1", "--out", out, "--overwrite"],
        ...["--jobs", "1", "--backend", "portable"],
      ),
    ).rejects.toThrow(/dense/);
    expect(existsSync(join(dir, "seed-1.json"))).toBe(false);
    expect(existsSync(join(dir, "results.json"))).toBe(false);
    expect(existsSync(join(dir, "iso-param"))).toBe(false);
    // the resume it suggests trains the seed again (and stops at the same folder): it never
    // prints the old study's 90 %
    const again = resume(out, 1);
    await expect(again).rejects.toThrow(/dense/);
    expect(readFileSync(join(dir, "dense"), "utf8")).toBe("not a folder");
  });
});
