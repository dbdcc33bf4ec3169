/*
 * The API reference builds: `pnpm docs:api` runs TypeDoc over every package entry (typedoc.json);
 * here the same conversion without writing HTML (`--emit none`) must end without an error.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { expect, it } from "vitest";

const REPO = join(import.meta.dirname, "..", "..");

it("TypeDoc converts every package entry without an error", () => {
  const typedoc = join(REPO, "node_modules", "typedoc", "bin", "typedoc");
  const r = spawnSync(process.execPath, [typedoc, "--emit", "none", "--logLevel", "Error"], {
    cwd: REPO,
    encoding: "utf8",
    timeout: 600_000,
  });
  expect(r.stdout + r.stderr).not.toMatch(/\[error\]/);
  expect(r.status).toBe(0);
}, 600_000);
