/**
 * The committed golden files are the ones tools/golden/generate.py wrote: each matches the sha256
 * that testdata/golden/MANIFEST.json records for it, no golden file is missing from the manifest,
 * and the generator's sources are the ones that made them (edit the generator without
 * regenerating and this fails). Needs no PyTorch: it only hashes files.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { goldenPath } from "@loop/test-support";
import { describe, expect, it } from "vitest";

interface Manifest {
  command: string;
  generator: { path: string; sha256: string; files: Record<string, string> };
  written: Record<string, string>;
  read: Record<string, string>;
}

const sha256 = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");
const manifest = JSON.parse(readFileSync(goldenPath("MANIFEST.json"), "utf8")) as Manifest;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)],
  );
}

describe("golden manifest (testdata/golden/MANIFEST.json)", () => {
  it("records the sha256 of every committed golden file, and each file matches", () => {
    const listed = { ...manifest.written, ...manifest.read };
    const onDisk = filesUnder(goldenPath())
      .map((p) => relative(goldenPath(), p).split("\\").join("/"))
      .filter((p) => p !== "MANIFEST.json")
      .sort();
    expect(onDisk).toEqual(Object.keys(listed).sort());
    const wrong = onDisk.filter((p) => sha256(goldenPath(p)) !== listed[p]);
    expect(wrong, `changed since ${manifest.command} wrote the manifest`).toEqual([]);
  });

  it("covers every kernel the model uses and every whole-model case's outputs", () => {
    const kernels = Object.keys(manifest.written)
      .filter((p) => p.startsWith("kernels/") && p.endsWith(".safetensors"))
      .map((p) => p.slice("kernels/".length, -".safetensors".length))
      .sort();
    expect(kernels).toEqual(
      [
        "adamw",
        "attention",
        "attention-decode",
        "causal-conv1d",
        "conv1d-silu",
        "cross-entropy",
        "embedding",
        "gated-rmsnorm",
        "mamba2-prefill",
        "mamba2-prefill-dt-limit",
        "mamba2-prefill-norm-whole",
        "mamba2-step",
        "mamba2-step-dt-limit",
        "rmsnorm",
        "rope",
        "ssd-scan",
        "swiglu",
      ].sort(),
    );
    for (const k of kernels) expect(manifest.written[`kernels/${k}.json`]).toBeDefined();
    const cases = Object.keys(manifest.read).filter((p) => p.endsWith("/model.safetensors"));
    expect(cases.length).toBeGreaterThan(0);
    for (const c of cases)
      expect(manifest.written[c.replace("model.safetensors", "outputs.safetensors")]).toBeDefined();
  });

  it("was written by the generator sources committed in tools/golden", () => {
    const dir = import.meta.dirname;
    const files = Object.fromEntries(
      readdirSync(dir)
        .filter((n) => n.endsWith(".py"))
        .sort()
        .map((n) => [n, sha256(join(dir, n))]),
    );
    expect(files, `regenerate with ${manifest.command}`).toEqual(manifest.generator.files);
    const listing = Object.entries(files)
      .map(([n, h]) => `${h}  ${n}\n`)
      .join("");
    expect(createHash("sha256").update(listing).digest("hex")).toBe(manifest.generator.sha256);
  });
});
