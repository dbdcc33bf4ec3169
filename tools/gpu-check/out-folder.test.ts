/**
 * `pnpm gpu-check --out` that cannot be a folder fails at once with one line naming why, before
 * any probe: /proc/x (where a recursive mkdirSync spins forever in Node 20), an empty path (which
 * would mean the current folder), and a file in the way. No GPU needed.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = resolve(fileURLToPath(new URL(".", import.meta.url)), "../..");

function gpuCheck(out: string): { status: number | null; output: string } {
  const r = spawnSync(
    process.execPath,
    [
      "--import",
      "tsx",
      "--conditions=@loop/source",
      join(ROOT, "tools/gpu-check/main.ts"),
      "--out",
      out,
      "--suites",
      "none",
      "--bench",
      "none",
    ],
    { cwd: ROOT, encoding: "utf8", timeout: 60_000 },
  );
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe("gpu-check --out", () => {
  it("refuses impossible folders at once, naming the reason", { timeout: 120_000 }, () => {
    const proc = gpuCheck("/proc/x");
    expect(proc.status).toBe(1);
    expect(proc.output.trim()).toBe(
      "gpu-check: --out: cannot create folder /proc/x: /proc does not accept new folders",
    );
    const d = mkdtempSync(join(tmpdir(), "gpu-check-out-"));
    writeFileSync(join(d, "taken"), "");
    const file = gpuCheck(join(d, "taken"));
    expect(file.status).toBe(1);
    expect(file.output).toMatch(/exists as a file, not a folder/);
    const empty = gpuCheck("");
    expect(empty.status).toBe(1);
    expect(empty.output).toMatch(/the path is empty/);
  });
});
