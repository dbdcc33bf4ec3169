// Build every publishable package and write its tarball into one folder. `pnpm pack` turns the
// `workspace:*` ranges into versions, so the tarballs are what a registry would serve.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { buildInParallel, buildItems } from "./parallel-build.js";
import { tarballName, type WorkspacePackage, workspacePackages } from "./workspace.js";

/**
 * When to run `pnpm build` before packing: always, never, or when a package's `dist` is missing
 * or older than a file of its `src` (what a test wants: `pnpm test` has just built them).
 */
export type BuildWhen = "always" | "never" | "if-stale";

/**
 * Pack every publishable package into `out` (building first as `build` says, independent
 * packages at once, up to one build per core); the tarballs' paths by package name. `log` hears a
 * line as each build starts and ends and as each tarball is written.
 */
export async function packAll(
  root: string,
  out: string,
  build: BuildWhen = "always",
  log: (line: string) => void = () => {},
): Promise<Map<string, string>> {
  const pkgs = workspacePackages(root);
  if (build === "always" || (build === "if-stale" && pkgs.some((p) => isStale(p.dir))))
    // the publishable packages only (not the playground's page), dependencies first
    await buildInParallel(buildItems(pkgs), availableParallelism(), log);
  mkdirSync(out, { recursive: true });
  for (const f of readdirSync(out)) if (f.endsWith(".tgz")) rmSync(join(out, f));
  const files = new Map<string, string>();
  for (const [i, p] of pkgs.entries()) {
    files.set(p.name, packOne(p, out));
    log(`packed ${p.name} (${i + 1}/${pkgs.length})`);
  }
  return files;
}

function packOne(p: WorkspacePackage, out: string): string {
  execFileSync("pnpm", ["pack", "--pack-destination", out], { cwd: p.dir, stdio: "ignore" });
  const file = join(out, tarballName(p));
  if (!readdirSync(out).includes(tarballName(p)))
    throw new Error(`pnpm pack wrote no ${tarballName(p)} for ${p.name} in ${out}`);
  return file;
}

/** Newest modification time under `dir` (or oldest, with `oldest`; 0 when it does not exist). */
function newest(dir: string, oldest = false): number {
  if (!existsSync(dir)) return 0;
  let t = oldest ? Number.POSITIVE_INFINITY : 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    const m = statSync(join(e.parentPath, e.name)).mtimeMs;
    t = oldest ? Math.min(t, m) : Math.max(t, m);
  }
  return t === Number.POSITIVE_INFINITY ? 0 : t;
}

/** Whether a package's build is missing or older than its sources or manifest. */
function isStale(dir: string): boolean {
  const built = newest(join(dir, "dist"), true);
  return (
    built === 0 ||
    built < Math.max(newest(join(dir, "src")), statSync(join(dir, "package.json")).mtimeMs)
  );
}
