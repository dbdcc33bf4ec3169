/**
 * `looplm check --backend-module` on examples/recording-backend (a backend of the kernel set
 * only, each kernel the CPU's, every call counted): every correctness case passes through the
 * device paths (its tensors are its own, `caps.memory` "device"), and the model's kernels ran on
 * it — the recording counted them. A module that is missing, does not load, has no factory,
 * fails to start or returns no backend is refused in one line naming it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { capture, run } from "../cli/run-in-process.test-util.js";
import type { CheckReport } from "./report.js";

const EXAMPLE = fileURLToPath(
  new URL("../../../../examples/recording-backend/index.ts", import.meta.url),
);
const root = mkdtempSync(join(tmpdir(), "looplm-check-module-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("looplm check --backend-module", () => {
  it("examples/recording-backend passes every correctness case, its kernels recorded", async () => {
    const out = join(root, "recording");
    // (--budget 1s: the correctness cases always run whole; the speed cases are dropped)
    const r = await run(
      "check",
      "--backend-module",
      EXAMPLE,
      "--size",
      "small",
      "--budget",
      "1s",
      "--out",
      out,
    );
    const report = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as CheckReport;
    expect(report.backend).toBe("recording");
    expect(report.module).toBe(EXAMPLE);
    expect(readFileSync(join(out, "report.md"), "utf8")).toContain(
      `# looplm check --backend-module ${EXAMPLE} (recording): `,
    );
    expect(report.cases.filter((c) => !c.ok)).toEqual([]);
    expect(report.failed).toBe(0);
    const names = report.cases.map((c) => c.name);
    for (const kind of ["model ", "golden ", "decode ", "training "])
      expect(names.some((n) => n.startsWith(kind))).toBe(true);
    expect(r.out).toMatch(/^(\d+)\/\1 correctness cases passed/m);
    const { calls } = (await import(pathToFileURL(EXAMPLE).href)) as {
      calls(): Map<string, number>;
    };
    const counted = calls();
    // the kernels of a forward, a backward, a training step and a decoded token
    for (const k of [
      "embedding",
      "rmsnorm",
      "linear",
      "ceRows",
      "maskedMean",
      "causalConv1dSiluSplit",
      "ssdScanChunked",
      "gatedRmsnorm",
      "rope",
      "attention",
      "swiglu",
      "mamba2Step",
      "attendStep",
      "gradNorm",
      "adamw",
    ])
      expect(counted.get(k) ?? 0, k).toBeGreaterThan(0);
  });

  it("refuses a module that is missing, does not load, has no factory or starts no backend", async () => {
    const module = (name: string, text: string) => {
      const path = join(root, name);
      writeFileSync(path, text);
      return path;
    };
    const cases: [string, string | RegExp][] = [
      [join(root, "absent.mjs"), "absent.mjs: no such file"],
      [root, "a folder, not a file"],
      [
        module("throws.mjs", 'throw new Error("no device here");\n'),
        "does not load: no device here",
      ],
      [module("none.mjs", "export const x = 1;\n"), "has no default export that starts a backend"],
      [
        module("fails.mjs", 'export default () => { throw new Error("driver too old"); };\n'),
        "cannot start: driver too old",
      ],
      [
        module("bare.mjs", 'export default async () => ({ name: "bare", caps: {} });\n'),
        "returned a backend whose `ops` is missing, not an object",
      ],
      [
        module(
          "memory.mjs",
          'export default () => ({ name: "m", caps: { memory: "gpu", precisions: [] }, ops: {}, opsAt() {}, stop() {} });\n',
        ),
        'caps.memory is "gpu", not "host" or "device"',
      ],
      [
        module(
          "kernelless.mjs",
          'export default () => ({ name: "k", caps: { memory: "device", precisions: ["fp32"] }, ops: { upload() {} }, opsAt() {}, stop() {} });\n',
        ),
        "returned ops without the kernel `uploadInt` (missing, not a function)",
      ],
    ];
    for (const [path, message] of cases) {
      const r = await capture("check", "--backend-module", path, "--out", join(root, "bad"));
      expect(r.error?.name, path).toBe("CliError");
      expect(r.error?.message).toContain(`--backend-module ${path}`);
      expect(r.error?.message).toContain(message);
      expect(r.error?.message).not.toContain("\n");
    }
    const both = await capture("check", "--backend", "portable", "--backend-module", EXAMPLE);
    expect(both.err).toContain("cannot be used with option '--backend <name>'");
  });
});
