/** Test support: run the `looplm` command line from source, as `pnpm looplm` does. */
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";

const repoRoot = fileURLToPath(new URL("../../../..", import.meta.url));
const main = fileURLToPath(new URL("../../../looplm/src/cli/main.ts", import.meta.url));

/** Resolves with stdout; rejects with the command's stderr when it fails. */
export function looplm(env: Record<string, string>, ...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ["--conditions=@loop/source", "--import", "tsx", main, ...args],
      { cwd: repoRoot, encoding: "utf8", env: { ...process.env, ...env } },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`looplm ${args.join(" ")} failed: ${err.message}\n${stderr}`));
        else resolve(stdout);
      },
    );
  });
}
