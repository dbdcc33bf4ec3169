import { readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { readGateSeedRecord } from "./gate-seed-record.js";
import { readExitRulesRecord } from "./run-exit-rules-study.js";
import { readSeedRecord } from "./seed-record.js";
import {
  exitRulesStudy,
  gateStudy,
  isExitRulesStudy,
  isGateStudy,
  STUDY_NAMES,
  type StudyName,
  sweepStudy,
} from "./studies.js";

/** Where docs/results.md keeps each study's seed records: docs/results/<study>/seed-<k>.json. */
const RESULTS = fileURLToPath(new URL("../../../../../docs/results/", import.meta.url));

const folders = readdirSync(RESULTS, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);

describe("the seed records docs/results.md cites", () => {
  it("are kept only for studies that exist", () => {
    expect(folders.length).toBeGreaterThan(0);
    for (const f of folders) expect(STUDY_NAMES).toContain(f);
  });

  // A record is read by `--resume` only while the study's settings are those it was trained
  // with: a definition whose numbers differ from its committed records fails here until the study
  // is run again (or its records are replaced).
  for (const name of folders as StudyName[])
    it(`${name}: every record is valid for the study as defined now`, () => {
      const dir = join(RESULTS, name);
      const seeds = readdirSync(dir)
        .map((f) => /^seed-(\d+)\.json$/.exec(f)?.[1])
        .filter((s): s is string => s !== undefined)
        .map(Number);
      expect(seeds.length).toBeGreaterThan(0);
      for (const seed of seeds) {
        const record = isGateStudy(name)
          ? readGateSeedRecord(gateStudy(name, "cpu"), dir, seed)
          : isExitRulesStudy(name)
            ? readExitRulesRecord(exitRulesStudy(name, "cpu"), dir, seed)
            : readSeedRecord(sweepStudy(name, "cpu"), dir, seed);
        expect(record?.seed).toBe(seed);
      }
    });
});
