/*
 * Every file a command reads goes by the one input rule: a FIFO, a folder or a dangling link
 * under a run file's name is refused at once in one line naming the file and what it is. Each
 * case runs the CLI as a child killed after a time limit, so a command that opens the FIFO (and
 * blocks for ever) fails its test instead of hanging the suite.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { run } from "./run-in-process.test-util.js";
import { cliWithin } from "./spawn-cli.test-util.js";
import { TINY_TRAIN } from "./tiny-args.test-util.js";

let base: string;
beforeAll(async () => {
  base = join(mkdtempSync(join(tmpdir(), "looplm-inputs-")), "run");
  await run("train", ...TINY_TRAIN, "--ckpt-every", "1", "--out", base);
}, 120_000);

/** A copy of the trained run folder where `name` is replaced by what `make` puts there. */
function runWith(name: string, make: (path: string) => void): { dir: string; path: string } {
  const dir = join(mkdtempSync(join(tmpdir(), "looplm-inputs-")), "run");
  execFileSync("cp", ["-r", base, dir]);
  const path = join(dir, name);
  rmSync(path, { recursive: true, force: true });
  make(path);
  return { dir, path };
}
const fifo = (p: string) => execFileSync("mkfifo", [p]);
const FIFO_LINE = (p: string) =>
  `cannot read ${p}: it is a FIFO, not a regular file; put the file itself there`;

describe("run files that are not regular files", () => {
  it("train --resume with a FIFO as checkpoints/latest.json is refused at once", () => {
    const { dir, path } = runWith(join("checkpoints", "latest.json"), fifo);
    const r = cliWithin(["train", "--out", dir, "--resume", "--steps", "2"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`looplm: ${FIFO_LINE(path)}`);
  });

  it("train --resume with a FIFO as log.jsonl is refused at once", () => {
    const { dir, path } = runWith("log.jsonl", fifo);
    const r = cliWithin(["train", "--out", dir, "--resume", "--steps", "2"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(FIFO_LINE(path));
  });

  it("eval with a FIFO as the model's model.safetensors or run.json is refused at once", () => {
    for (const name of [
      join("final", "model.safetensors"),
      "run.json",
      join("final", "task.json"),
    ]) {
      const { dir, path } = runWith(name, fifo);
      const r = cliWithin(["eval", "--model", dir, "--count", "4", "--out", join(dir, "e.json")]);
      expect([name, r.status]).toEqual([name, 1]);
      expect(r.stderr).toContain(FIFO_LINE(path));
    }
  });

  it("generate with a FIFO as config.json is refused at once", () => {
    const { dir, path } = runWith(join("final", "config.json"), fifo);
    const r = cliWithin(["generate", "--model", dir, "--tokens", "1,2", "--max-new", "1"]);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(`looplm: ${FIFO_LINE(path)}\n`);
  });

  it("a folder named config.json is named as a folder, not EISDIR", () => {
    const { dir, path } = runWith(join("final", "config.json"), (p) => mkdirSync(p));
    const r = cliWithin(["generate", "--model", dir, "--tokens", "1,2", "--max-new", "1"]);
    expect(r.stderr).toBe(
      `looplm: cannot read ${path}: it is a folder, not a regular file; put the file itself there\n`,
    );
  });

  it("a dangling or looping link as config.json is named as one", () => {
    const gone = runWith(join("final", "config.json"), (p) => symlinkSync(`${p}.gone`, p));
    const r = cliWithin(["generate", "--model", gone.dir, "--tokens", "1,2", "--max-new", "1"]);
    expect(r.stderr).toBe(
      `looplm: cannot read ${gone.path}: it is a symbolic link to ${gone.path}.gone, which does not exist; restore its target or remove the link\n`,
    );
    const loop = runWith(join("final", "config.json"), (p) => symlinkSync(p, p));
    const l = cliWithin(["generate", "--model", loop.dir, "--tokens", "1,2", "--max-new", "1"]);
    expect(l.stderr).toBe(
      `looplm: cannot read ${loop.path}: it is a symbolic link that loops (it leads back to itself); replace it with the file\n`,
    );
  });

  it("a dangling link as --model is named as one", async () => {
    const d = mkdtempSync(join(tmpdir(), "looplm-inputs-"));
    const link = join(d, "model");
    symlinkSync(join(d, "gone"), link);
    await expect(run("eval", "--model", link, "--count", "4")).rejects.toThrow(
      `--model: cannot read ${link}: it is a symbolic link to ${join(d, "gone")}, which does not exist; restore its target or remove the link`,
    );
  });

  it("report with a FIFO as run.json is refused at once", () => {
    const { dir, path } = runWith("run.json", fifo);
    const r = cliWithin(["report", dir]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(FIFO_LINE(path));
  });
});
