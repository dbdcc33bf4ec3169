import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";

const tsx = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const child = fileURLToPath(new URL("./threads-child.test-util.ts", import.meta.url));

function runChild(v8Flags: string[]): Promise<{ code: number | null; out: string }> {
  const args = [...v8Flags, "--import", tsx, "--conditions=@loop/source", child];
  return new Promise((resolve) => {
    execFile(process.execPath, args, { timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (error.code as number | null) : 0, out: stdout + stderr });
    });
  });
}

describe.concurrent("thread pool in a process of its own", () => {
  it("lets the process exit with the pool still running (workers are unref'd)", async () => {
    const r = await runChild([]);
    expect(r.out).toContain('{"name":"wasm-simd×2","ok":true}');
    expect(r.code).toBe(0);
  });

  it("falls back to the JS kernel where WebAssembly is unavailable", async () => {
    const r = await runChild(["--no-expose-wasm"]);
    expect(r.out).toContain('{"name":"js×2","ok":true}');
    expect(r.code).toBe(0);
  });
});
