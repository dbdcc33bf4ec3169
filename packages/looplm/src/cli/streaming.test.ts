/**
 * Requests without a practical end stream instead of holding everything back: `generate
 * --max-new 2147483647` prints tokens as they come (and ends quietly when its reader does), and
 * `eval --count 1000000000` makes its batches as it reads them and says how far it has got, and so
 * does the evaluation during training (`train --eval-count 2147483647`), which a signal stops.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { LoopedModel, makeConfig } from "@loop/looped";
import { saveCheckpoint } from "@loop/looped/node";
import { beforeAll, describe, expect, it } from "vitest";

const main = fileURLToPath(new URL("./main.ts", import.meta.url));
let runDir: string;

beforeAll(() => {
  runDir = join(mkdtempSync(join(tmpdir(), "looplm-stream-")), "run");
  const cfg = makeConfig({
    backbone: "mamba",
    vocab_size: 32,
    d_model: 16,
    n_layers: 1,
    n_loops: 2,
    ssm: { d_state: 8, headdim: 8, chunk_size: 8 },
  });
  saveCheckpoint(join(runDir, "final"), new LoopedModel(cfg, { seed: 1 }));
  writeFileSync(
    join(runDir, "run.json"),
    JSON.stringify({ task: { name: "mano", max_ops: 2 }, model: cfg, train: {} }),
  );
});

const node = ["--import", "tsx", "--conditions=@loop/source", main];

describe("unbounded requests stream", () => {
  it("generate --max-new 2147483647 | head -c 200 prints at once and ends with status 0", {
    timeout: 120_000,
  }, () => {
    const r = spawnSync(
      "bash",
      [
        "-c",
        `"$NODE" "$@" | head -c 200; echo "exit \${PIPESTATUS[0]}" >&2`,
        "bash",
        ...node,
        ...["generate", "--model", join(runDir, "final"), "--tokens", "1,2"],
        ...["--max-new", "2147483647", "--temperature", "1"],
      ],
      { encoding: "utf8", env: { ...process.env, NODE: process.execPath }, timeout: 100_000 },
    );
    expect(r.stdout).toHaveLength(200);
    expect(r.stdout).toMatch(/^\d+( \d+)+/);
    expect(r.stderr).toBe("exit 0\n");
  });

  it("eval --count 1000000000 reports its progress instead of building the whole set", {
    timeout: 120_000,
  }, async () => {
    const child = spawn(
      process.execPath,
      [...node, "eval", "--model", join(runDir, "final"), "--count", "1000000000"],
      { env: { ...process.env, LOOPLM_THREADS: "1" } },
    );
    child.stdout.resume();
    let err = "";
    try {
      const line = await new Promise<string>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no progress line; stderr: ${err}`)), 90_000);
        child.stderr.on("data", (c) => {
          err += c;
          const m = /^eval: \d+\/1000000000 rows .*$/m.exec(err);
          if (m) {
            clearTimeout(t);
            resolve(m[0]);
          }
        });
        child.on("exit", () => reject(new Error(`exited early; stderr: ${err}`)));
      });
      expect(line).toMatch(/^eval: \d+\/1000000000 rows \(\d+\.\d%\), \d+ rows\/s, about .* left$/);
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("train --eval-count 2147483647 evaluates batch by batch with progress, and SIGTERM stops it", {
    timeout: 120_000,
  }, async () => {
    const out = join(mkdtempSync(join(tmpdir(), "looplm-stream-")), "run");
    const child = spawn(
      process.execPath,
      [
        ...node,
        ...["train", "--task", "phop", "--alphabet", "3", "--length", "12", "--hops", "2"],
        ...["--d-model", "16", "--d-state", "4", "--headdim", "8", "--chunk", "8"],
        ...["--steps", "1", "--batch", "4", "--warmup", "0", "--eval-every", "0"],
        ...["--eval-count", "2147483647", "--out", out],
      ],
      { env: { ...process.env, LOOPLM_THREADS: "1" } },
    );
    let err = "";
    const exited = new Promise<number | string | null>((resolve) =>
      child.on("exit", (code, signal) => resolve(signal ?? code)),
    );
    try {
      const line = await new Promise<string>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no progress line; stderr: ${err}`)), 90_000);
        child.stderr.on("data", (c) => {
          err += c;
          const m = /^pretrain phop\S* evaluation: \d+\/2147483647 rows .*$/m.exec(err);
          if (m) {
            clearTimeout(t);
            resolve(m[0]);
          }
        });
        void exited.then(() => reject(new Error(`exited early; stderr: ${err}`)));
      });
      expect(line).toMatch(/rows \(\d+\.\d%\), \d+ rows\/s, about .* left$/);
      const t0 = performance.now();
      child.kill("SIGTERM");
      const end = await exited;
      expect(end === "SIGTERM" || end === 143, String(end)).toBe(true);
      expect(performance.now() - t0).toBeLessThan(5000);
    } finally {
      child.kill("SIGKILL");
    }
  });
});
