/**
 * PyTorch reference runs. A script in benchmarks/torch/ prints one JSON line; it runs with
 * /usr/bin/python3 (Debian python3-torch + libopenblas0-openmp) and with OPENBLAS_CORETYPE and
 * OPENBLAS_L2_SIZE removed from its environment — only there: those variables, set on this
 * machine for other tools, make OpenBLAS pick the wrong kernels.
 */
import { execFile } from "node:child_process";
import { isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";

const PYTHON = "/usr/bin/python3";
const torchDir = fileURLToPath(new URL("../torch/", import.meta.url));

function torchEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.OPENBLAS_CORETYPE;
  delete env.OPENBLAS_L2_SIZE;
  return env;
}

function python(
  args: string[],
  timeoutMs: number,
): Promise<{ ok: boolean; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(
      PYTHON,
      args,
      { env: torchEnv(), timeout: timeoutMs, maxBuffer: 16 << 20 },
      (error, stdout, stderr) => resolve({ ok: error === null, out: stdout, err: stderr }),
    );
  });
}

let available: Promise<boolean> | undefined;

/** Whether `/usr/bin/python3 -c "import torch"` works (checked once). */
export function torchAvailable(): Promise<boolean> {
  available ??= python(["-c", "import torch"], 120_000).then((r) => r.ok);
  return available;
}

/**
 * Run a PyTorch script (path relative to benchmarks/torch/ or absolute) with arguments and
 * return the JSON of its last output line, or null when PyTorch is not installed. A script
 * that fails throws with its stderr.
 */
export async function runTorch(script: string, args: readonly string[] = [], timeoutMs = 600_000) {
  if (!(await torchAvailable())) return null;
  const path = isAbsolute(script) ? script : join(torchDir, script);
  const r = await python([path, ...args], timeoutMs);
  if (!r.ok) throw new Error(`torch script ${script} failed:\n${r.err.slice(-2000)}`);
  const last = r.out.trim().split("\n").pop() ?? "";
  try {
    return JSON.parse(last) as unknown;
  } catch {
    throw new Error(`torch script ${script} did not print JSON on its last line: ${last}`);
  }
}
