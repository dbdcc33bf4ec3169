/*
 * The closures of the packages and the install commands their READMEs show: each README names
 * exactly its package's closure (the packed test installs exactly that and nothing else).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { installLine } from "./install-line.js";
import { closure, tarballName, workspacePackages } from "./workspace.js";

const root = join(import.meta.dirname, "..", "..");
const pkgs = workspacePackages(root);

describe("package closures", () => {
  it("follow dependencies transitively and only them", () => {
    expect(closure("@loop/tensor", pkgs)).toEqual(["@loop/tensor"]);
    expect(closure("@loop/tasks", pkgs)).toEqual(["@loop/tasks", "@loop/tensor"]);
    expect(closure("@loop/looped", pkgs)).toEqual([
      "@loop/attention",
      "@loop/exit-gate",
      "@loop/looped",
      "@loop/ssm-kernels",
      "@loop/tensor",
    ]);
    expect(() => closure("@loop/playground", pkgs)).toThrow(/not a publishable package/);
  });

  it("name tarballs as pnpm pack does", () => {
    expect(tarballName({ name: "@loop/ssm-kernels", version: "0.1.0" })).toBe(
      "loop-ssm-kernels-0.1.0.tgz",
    );
    expect(tarballName({ name: "looplm", version: "2.0.0" })).toBe("looplm-2.0.0.tgz");
  });

  it.each(pkgs.map((p) => [p.name, p.dir] as const))(
    "the README of %s shows its closure's install line",
    (name, dir) => {
      const readme = readFileSync(join(dir, "README.md"), "utf8");
      expect(readme).toContain(installLine(name, pkgs));
    },
  );

  it.each(pkgs.map((p) => [p.name, p.dir] as const))(
    "the typedoc.json of %s lists its entry points (docs:api documents what it exports)",
    (_name, dir) => {
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
        exports: Record<string, string | Record<string, string>>;
      };
      const sources = Object.values(manifest.exports)
        .flatMap((v) => (typeof v === "object" && v["@loop/source"] ? [v["@loop/source"]] : []))
        .map((f) => f.replace(/^\.\//, ""));
      const typedoc = JSON.parse(readFileSync(join(dir, "typedoc.json"), "utf8")) as {
        entryPoints: string[];
      };
      expect(typedoc.entryPoints).toEqual(sources);
    },
  );

  it("typedoc.json documents every publishable package", () => {
    const typedoc = JSON.parse(readFileSync(join(root, "typedoc.json"), "utf8")) as {
      entryPoints: string[];
    };
    expect([...typedoc.entryPoints].sort()).toEqual(
      pkgs.map((p) => `packages/${p.dir.split("/").pop()}`).sort(),
    );
  });
});
