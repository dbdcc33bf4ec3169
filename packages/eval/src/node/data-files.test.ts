import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseMcJsonl } from "../multiple-choice/mc-items.js";
import { readMcFile, readPiqaFiles } from "./data-files.js";

const dir = mkdtempSync(join(tmpdir(), "mc-files-"));
const file = (name: string, body: string | Uint8Array) => {
  const p = join(dir, name);
  writeFileSync(p, body);
  return p;
};
const item = { context: "2 + 2 =", choices: [" 4", " 5"], label: 0 };

describe("multiple-choice files", () => {
  it("accept a UTF-8 byte-order mark", () => {
    const p = file("bom.jsonl", `\ufeff${JSON.stringify(item)}\n`);
    expect(readMcFile(p)).toEqual([item]);
    const d = file(
      "bom-piqa.jsonl",
      `\ufeff${JSON.stringify({ goal: "g", sol1: "a", sol2: "b" })}\n`,
    );
    const l = file("bom-labels.lst", "\ufeff1\n");
    expect(readPiqaFiles(d, l)[0]!.label).toBe(1);
  });

  it("reject invalid UTF-8 with the file and line instead of replacing it", () => {
    const good = new TextEncoder().encode(`${JSON.stringify(item)}\n`);
    const bad = Uint8Array.of(
      ...good,
      ...new TextEncoder().encode('{"context": "caf'),
      0xe9,
      ...new TextEncoder().encode('", "choices": ["a", "b"], "label": 0}\n'),
    );
    const p = file("latin1.jsonl", bad);
    expect(() => readMcFile(p)).toThrow(new RegExp(`^${p}:2: not valid UTF-8 text$`));
  });

  it("apply one rule to empty choices: --mc and --piqa both reject them", () => {
    expect(() => parseMcJsonl(JSON.stringify({ ...item, choices: ["a", ""] }), "x.jsonl")).toThrow(
      /^x.jsonl:1: "choices"\[1\] must be a non-empty string, got ""$/,
    );
    const d = file("piqa.jsonl", `${JSON.stringify({ goal: "g", sol1: "a", sol2: "" })}\n`);
    const l = file("labels.lst", "0\n");
    expect(() => readPiqaFiles(d, l)).toThrow(
      new RegExp(`^${d}:1: "sol2" must be a non-empty string, got ""$`),
    );
  });
});
