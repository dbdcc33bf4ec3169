// The publishable packages of this workspace and, for each, the other workspace packages an
// install needs (its closure over `dependencies`), read from their package.json files.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** One publishable package of the workspace. */
export interface WorkspacePackage {
  /** Its npm name, e.g. `@loop/tensor`. */
  name: string;
  version: string;
  /** Its folder, absolute. */
  dir: string;
  /** The workspace packages it depends on directly (`dependencies`, not dev or peer). */
  localDeps: string[];
}

/** Every package under `packages/` that is not private, sorted by name. */
export function workspacePackages(root: string): WorkspacePackage[] {
  const all = readdirSync(join(root, "packages"))
    .map((d) => join(root, "packages", d))
    .map((dir) => ({
      dir,
      m: JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
        name: string;
        version: string;
        private?: boolean;
        dependencies?: Record<string, string>;
      },
    }));
  const local = new Set(all.map((p) => p.m.name));
  return all
    .filter((p) => !p.m.private)
    .map((p) => ({
      name: p.m.name,
      version: p.m.version,
      dir: p.dir,
      localDeps: Object.keys(p.m.dependencies ?? {})
        .filter((d) => local.has(d))
        .sort(),
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** `name` and every workspace package it needs, transitively, sorted by name. */
export function closure(name: string, pkgs: WorkspacePackage[]): string[] {
  const byName = new Map(pkgs.map((p) => [p.name, p]));
  const seen = new Set<string>();
  const visit = (n: string) => {
    if (seen.has(n)) return;
    const p = byName.get(n);
    if (!p) throw new Error(`${n} is not a publishable package of this workspace`);
    seen.add(n);
    for (const d of p.localDeps) visit(d);
  };
  visit(name);
  return [...seen].sort();
}

/** The file name `pnpm pack` gives a package's tarball: `@loop/tensor` 0.1.0 → `loop-tensor-0.1.0.tgz`. */
export function tarballName(p: Pick<WorkspacePackage, "name" | "version">): string {
  return `${p.name.replace(/^@/, "").replace("/", "-")}-${p.version}.tgz`;
}
