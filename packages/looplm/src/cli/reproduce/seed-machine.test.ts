import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cpuFromCpuinfo, gitCommit, seedMachineLines } from "./seed-machine.js";

describe("seed machine", () => {
  it("names the CPU with its family and model from /proc/cpuinfo", () => {
    const info = [
      "processor\t: 0",
      "vendor_id\t: AuthenticAMD",
      "cpu family\t: 25",
      "model\t\t: 17",
      "model name\t: AMD EPYC 9B14",
      "flags\t\t: fpu avx2 avx512f",
      "",
      "processor\t: 1",
      "model name\t: AMD EPYC 9B14",
    ].join("\n");
    expect(cpuFromCpuinfo(info)).toBe("AMD EPYC 9B14 (family 25 model 17)");
    // an ARM cpuinfo has no model name: the caller falls back to the OS's name
    expect(cpuFromCpuinfo("processor\t: 0\nBogoMIPS\t: 50.00\n")).toBeNull();
    expect(cpuFromCpuinfo("model name\t: Some CPU\n")).toBe("Some CPU");
  });

  it("prints one line per seed, saying when a record does not name its machine", () => {
    const lines = seedMachineLines([
      undefined,
      {
        recorded: "2026-12-02T17:00:00.000Z",
        trained: "here",
        backend: "native",
        cpu: "AMD EPYC (family 25 model 17)",
        vector_isa: "avx512f",
        node: "v20.20.2",
      },
      { recorded: "2026-12-03T09:00:00.000Z", trained: "queue", backend: "native" },
    ]);
    expect(lines).toEqual([
      "seed 1: its record does not name the machine",
      "seed 2: AMD EPYC (family 25 model 17), avx512f, native backend, Node v20.20.2, recorded 2026-12-02T17:00:00.000Z",
      "seed 3: native backend on queue workers, recorded 2026-12-03T09:00:00.000Z",
    ]);
  });

  it("names the commit that wrote a record, marked where tracked code differs from it", () => {
    const dir = mkdtempSync(join(tmpdir(), "seed-commit-"));
    try {
      expect(gitCommit(dir)).toBeNull();
      const git = (...a: string[]) =>
        execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...a], { cwd: dir });
      git("init", "-q");
      mkdirSync(join(dir, "packages"));
      writeFileSync(join(dir, "packages", "code.ts"), "a");
      writeFileSync(join(dir, "notes.md"), "a");
      git("add", ".");
      git("commit", "-q", "-m", "one");
      const head = execFileSync("git", ["rev-parse", "HEAD"], {
        cwd: dir,
        encoding: "utf8",
      }).trim();
      expect(gitCommit(dir)).toBe(head);
      // a change outside the code does not change the numbers: not marked
      writeFileSync(join(dir, "notes.md"), "b");
      expect(gitCommit(dir)).toBe(head);
      writeFileSync(join(dir, "packages", "code.ts"), "b");
      expect(gitCommit(dir)).toBe(`${head}+changes`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const line = seedMachineLines([
      { recorded: "r", trained: "queue", backend: "native", commit: "0123456789abcdef+changes" },
    ]);
    expect(line).toEqual([
      "seed 1: native backend on queue workers, recorded r, commit 0123456+changes",
    ]);
  });
});
