/**
 * Requests without a practical end stream instead of holding everything back: `generate
 * --max-new 2147483647` prints tokens as they come (and ends quietly when its reader does), and
 * `eval --count 1000000000` makes its batches as it reads them and says how far it has got, and so
 * does the evaluation during training (`train --eval-count 2147483647`), which a signal stops.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { cliInShell, savedTinyRun, spawnCli, untilOutput } from "./spawn-cli.test-util.js";

let runDir: string;

beforeAll(() => {
  runDir = savedTinyRun("looplm-stream-");
});

describe("unbounded requests stream", () => {
  it("generate --max-new 2147483647 | head -c 200 prints at once and ends with status 0", {
    timeout: 120_000,
  }, () => {
    const r = cliInShell(
      [
        ...["generate", "--model", join(runDir, "final"), "--tokens", "1,2"],
        ...["--max-new", "2147483647", "--temperature", "1"],
      ],
      `| head -c 200; echo "exit \${PIPESTATUS[0]}" >&2`,
      100_000,
    );
    expect(r.stdout).toHaveLength(200);
    expect(r.stdout).toMatch(/^\d+( \d+)+/);
    expect(r.stderr).toBe("exit 0\n");
  });

  it("eval --count 1000000000 reports its progress instead of building the whole set", {
    timeout: 120_000,
  }, async () => {
    const child = spawnCli(["eval", "--model", join(runDir, "final"), "--count", "1000000000"]);
    child.stdout!.resume();
    try {
      const line = await untilOutput(child, /^eval: \d+\/1000000000 rows .*$/m);
      expect(line).toMatch(/^eval: \d+\/1000000000 rows \(\d+\.\d%\), \d+ rows\/s, about .* left$/);
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("train --eval-count 2147483647 evaluates batch by batch with progress, and SIGTERM stops it", {
    timeout: 120_000,
  }, async () => {
    const out = join(mkdtempSync(join(tmpdir(), "looplm-stream-")), "run");
    const child = spawnCli([
      ...["train", "--task", "phop", "--alphabet", "3", "--length", "12", "--hops", "2"],
      ...["--d-model", "16", "--d-state", "4", "--headdim", "8", "--chunk", "8"],
      ...["--steps", "1", "--batch", "4", "--warmup", "0", "--eval-every", "0"],
      ...["--eval-count", "2147483647", "--out", out],
    ]);
    const exited = new Promise<number | string | null>((resolve) =>
      child.on("exit", (code, signal) => resolve(signal ?? code)),
    );
    try {
      const line = await untilOutput(
        child,
        /^pretrain phop\S* evaluation: \d+\/2147483647 rows .*$/m,
      );
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
