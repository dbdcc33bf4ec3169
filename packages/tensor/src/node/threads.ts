/*
 * Node host of the thread pool: `startThreadPool(n)` starts n − 1 `worker_threads` workers (the
 * calling thread is the n-th) and installs them for `parallelFor` and the parallel GEMM;
 * `stopThreadPool()` terminates them. Workers are unref'd, so an idle pool never keeps the
 * process alive. The worker script sits beside this file (see createWorker).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { gemmKernelUrl } from "../kernels/gemm-parallel.js";
import { currentPool, installPool, type ThreadPool } from "../threads/pool.js";
import { CONTROL_BYTES, type WorkerInit, type WorkerReport } from "../threads/protocol.js";

interface NodePool extends ThreadPool {
  readonly handles: Worker[];
}

// (pathname: a loader may add a query to the URL)
const fromSource = new URL(import.meta.url).pathname.endsWith(".ts");

function hasCondition(argv: readonly string[]): boolean {
  return argv.some(
    (a, i) =>
      a === "--conditions=@loop/source" ||
      a === "-C=@loop/source" ||
      ((a === "--conditions" || a === "-C") && argv[i + 1] === "@loop/source"),
  );
}

/**
 * A Node worker for the pool. From the built dist the entry is threads-worker.js. From source
 * (tsx, vitest) the entry is threads-worker.ts, which plain Node cannot load, and Node 20 does
 * not apply the parent's tsx hooks inside workers; so a one-line bootstrap loads the entry
 * through tsx's `tsImport` (tsx is a devDependency of the workspace, needed only from source).
 * Workers inherit execArgv, so the "@loop/source" condition reaches kernels of other packages.
 */
/** URL of tsx's ESM API module (its "./esm/api" export under the "import" condition). */
function tsxEsmApi(): string {
  const pkgPath = createRequire(import.meta.url).resolve("tsx/package.json");
  const pkg = JSON.parse(readFileSync(pkgPath, "utf8")) as {
    exports: Record<string, { import: { default: string } }>;
  };
  const rel = pkg.exports["./esm/api"]?.import.default;
  if (rel === undefined) throw new Error(`startThreadPool: ${pkgPath} has no "./esm/api" export`);
  return new URL(rel, pathToFileURL(pkgPath)).href;
}

/** Options with a separate value that workers accept and need (module resolution, loaders). */
const WORKER_PAIRS = new Set(["--conditions", "-C", "--import", "--require", "-r", "--loader"]);
const WORKER_SINGLE = /^--(conditions|import|require|loader|experimental-loader)=|^--no-warnings$/;

/** execArgv without per-process flags (V8 flags etc.), which Worker rejects; V8 flags apply anyway. */
function workerSafe(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (WORKER_PAIRS.has(a) && i + 1 < argv.length) out.push(a, argv[++i]!);
    else if (WORKER_SINGLE.test(a)) out.push(a);
  }
  return out;
}

function newWorker(target: string | URL, init: WorkerInit, execArgv: string[], evalCode: boolean) {
  try {
    return new Worker(target, { eval: evalCode, workerData: init, execArgv });
  } catch (e) {
    if ((e as { code?: string }).code !== "ERR_WORKER_INVALID_EXEC_ARGV") throw e;
    return new Worker(target, { eval: evalCode, workerData: init, execArgv: workerSafe(execArgv) });
  }
}

function createWorker(init: WorkerInit): Worker {
  const execArgv = [...process.execArgv];
  if (!fromSource) {
    return newWorker(new URL("./threads-worker.js", import.meta.url), init, execArgv, false);
  }
  if (!hasCondition(execArgv)) execArgv.push("--conditions=@loop/source");
  const entry = new URL("./threads-worker.ts", import.meta.url).href;
  const api = tsxEsmApi();
  const code = `import(${JSON.stringify(api)}).then((m) => m.tsImport(${JSON.stringify(entry)}, ${JSON.stringify(import.meta.url)}));`;
  return newWorker(code, init, execArgv, true);
}

function spawn(init: WorkerInit): Promise<Worker> {
  const w = createWorker(init);
  return new Promise((resolve, reject) => {
    const onExit = (code: number) => reject(new Error(`thread pool worker exited (code ${code})`));
    w.once("error", reject);
    w.once("exit", onExit);
    w.once("message", (m: WorkerReport) => {
      w.off("error", reject);
      w.off("exit", onExit);
      if (m.type === "ready") resolve(w);
      else reject(new Error(`thread pool worker failed to start: ${m.message}`));
    });
  });
}

let starting: Promise<number> | null = null;

/**
 * Start a pool of `threads` threads in total (default: os.availableParallelism()), replacing
 * any running pool. Resolves with the thread count once every worker is ready. `threads` = 1
 * installs no workers (everything runs on the calling thread).
 */
export async function startThreadPool(threads: number = availableParallelism()): Promise<number> {
  if (!Number.isInteger(threads) || threads < 1) {
    throw new Error(`startThreadPool: threads must be a positive integer, got ${threads}`);
  }
  if (starting !== null) await starting.catch(() => undefined);
  const run = async (): Promise<number> => {
    await stopThreadPool();
    if (threads === 1) return 1;
    const control = new SharedArrayBuffer(CONTROL_BYTES);
    const init: WorkerInit = { control, preload: [gemmKernelUrl] };
    const settled = await Promise.allSettled(
      Array.from({ length: threads - 1 }, () => spawn(init)),
    );
    const handles = settled.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
    const failed = settled.find((s) => s.status === "rejected");
    if (failed !== undefined) {
      await Promise.all(handles.map((w) => w.terminate()));
      throw (failed as PromiseRejectedResult).reason;
    }
    for (const w of handles) w.unref();
    const p: NodePool = { threads, workers: handles, handles, control };
    installPool(p);
    return threads;
  };
  starting = run();
  try {
    return await starting;
  } finally {
    starting = null;
  }
}

/** Terminate the running pool, if any (kernels run on the calling thread afterwards). */
export async function stopThreadPool(): Promise<void> {
  const p = currentPool() as NodePool | null;
  installPool(null);
  if (p?.handles !== undefined) await Promise.all(p.handles.map((w) => w.terminate()));
}
