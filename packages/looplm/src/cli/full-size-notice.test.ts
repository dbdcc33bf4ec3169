/** `train --task phop` without --length or --hops says it runs the paper's full-size task. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { fullSizeNotice, TASK_DEFAULTS } from "./options/task.js";
import { buildProgram } from "./program.js";

const LINE =
  "p-hop at the paper's full size, n = 256 and p = 16 (--length and --hops choose a smaller task, e.g. --length 32 --hops 3)";

describe("the p-hop full-size notice", () => {
  it("is given only when neither --length nor --hops was", () => {
    const phop = { ...TASK_DEFAULTS, task: "phop" as const };
    expect(fullSizeNotice(phop, () => false)).toBe(LINE);
    expect(fullSizeNotice(phop, (f) => f === "hops")).toBeNull();
    expect(fullSizeNotice(phop, (f) => f === "length")).toBeNull();
    expect(fullSizeNotice({ ...phop, task: "mano" }, () => false)).toBeNull();
  });

  it("train prints it before any work (here the run folder cannot be made)", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "looplm-notice-")), "file");
    writeFileSync(file, "");
    let err = "";
    vi.spyOn(process.stderr, "write").mockImplementation((c: string | Uint8Array) => {
      err += String(c);
      return true;
    });
    try {
      await expect(
        buildProgram().parseAsync(["node", "looplm", "train", "--task", "phop", "--out", file]),
      ).rejects.toThrow();
    } finally {
      vi.restoreAllMocks();
    }
    expect(err).toBe(`looplm: ${LINE}\n`);
  });
});
