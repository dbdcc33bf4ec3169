/**
 * gpu.js (named in the design) beside a WGSL GEMM, in the same headless Chromium: the model's GEMM
 * shapes (those of matmul.bench.ts), end to end (upload, multiply, read back) and with the
 * operands resident on the GPU (lib/gemm-page.ts says how each figure is taken). gpu.js runs in
 * its WebGL2 mode (its GPU path in browsers) and its WebGPU mode. The result decides whether
 * looplm's GPU backend builds on gpu.js or on its own WGSL kernels (docs/gpu.md).
 *
 * Needs Chromium (CHROMIUM_PATH, default /usr/bin/chromium; Debian: apt-get install -y chromium)
 * and fetches gpu.js's browser bundle once with `npm pack` (no install scripts run) into the
 * temp folder. LOOP_BENCH_GEMM_SHAPES=1024x1024x1024,… picks shapes. Without a GPU Chromium runs WebGPU and WebGL on SwiftShader (CPU emulation): those
 * figures compare the libraries' overheads, not GPU speed. `pnpm bench gpujs [--quick]`.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, renameSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";
import type { BenchContext } from "./lib/context.js";
import { GEMM_PAGE_SCRIPT } from "./lib/gemm-page.js";
import type { Row } from "./lib/table.js";

export const name = "gpujs";
export const description =
  "gpu.js (WebGL2, WebGPU modes) vs a tiled WGSL GEMM in headless Chromium, model GEMM shapes";

const GPUJS_VERSION = "2.24.1";
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SHAPES: [number, number, number][] = [
  [8192, 128, 512],
  [8192, 512, 128],
  [4096, 256, 256],
  [1024, 1024, 1024],
];

/** The shapes to measure: LOOP_BENCH_GEMM_SHAPES="1024x1024x1024,4096x256x256" (M×K×N) or all. */
function shapes(): [number, number, number][] {
  const env = process.env.LOOP_BENCH_GEMM_SHAPES;
  if (!env) return SHAPES;
  return env.split(",").map((s) => {
    const d = s.split("x").map(Number);
    if (d.length !== 3 || d.some((x) => !Number.isInteger(x) || x < 1))
      throw new Error(`LOOP_BENCH_GEMM_SHAPES: expected M×K×N like 1024x1024x1024, got ${s}`);
    return d as [number, number, number];
  });
}
const IMPLS = ["wgsl", "webgl2", "webgpu"] as const;

interface Measured {
  endToEndMs: number;
  residentMs: number | null;
  maxErr: number;
  note?: string;
}

/** gpu.js's browser bundle, fetched once with npm pack into the temp folder. */
function gpujsBundle(): string {
  const dir = join(tmpdir(), `looplm-gpujs-${GPUJS_VERSION}`);
  const file = join(dir, "package", "dist", "gpu-browser.min.js");
  if (existsSync(file)) return file;
  mkdirSync(dir, { recursive: true });
  const packed = execFileSync("npm", ["pack", `gpu.js@${GPUJS_VERSION}`, "--silent"], {
    cwd: dir,
    encoding: "utf8",
  }).trim();
  const staging = join(dir, "unpacking");
  mkdirSync(staging, { recursive: true });
  execFileSync("tar", ["xzf", join(dir, packed), "-C", staging]);
  renameSync(join(staging, "package"), join(dir, "package"));
  return file;
}

/** A localhost page (a secure context, so navigator.gpu exists) holding gpu.js. */
async function serve(bundle: string) {
  const js = readFileSync(bundle);
  const server = createServer((req, res) => {
    if (req.url === "/gpu.js") {
      res.setHeader("content-type", "text/javascript");
      res.end(js);
    } else {
      res.setHeader("content-type", "text/html");
      res.end('<!doctype html><meta charset="utf-8"><script src="/gpu.js"></script>');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/`, close: () => server.close() };
}

const gflops = (M: number, K: number, N: number, ms: number | null) =>
  ms === null || !(ms > 0) ? "n/a" : ((2 * M * K * N) / (ms * 1e6)).toFixed(1);

export async function run(ctx: BenchContext): Promise<void> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `no Chromium at ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`,
    );
  const bundle = gpujsBundle();
  const page0 = await serve(bundle);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--headless=new",
      "--enable-unsafe-webgpu",
      // Where Chromium finds no GPU it may run WebGL on SwiftShader only with this flag.
      "--enable-unsafe-swiftshader",
      "--disable-background-networking",
      "--disable-component-update",
    ],
  });
  try {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(page0.url);
    await page.addScriptTag({ content: GEMM_PAGE_SCRIPT });
    const info = (await page.evaluate("window.gpuInfo()")) as {
      webgpu: string | null;
      webgl: string | null;
    };
    ctx.log(`Chromium ${browser.version()} · gpu.js ${GPUJS_VERSION}`);
    ctx.log(`WebGPU adapter: ${info.webgpu ?? "none"}`);
    ctx.log(`WebGL renderer: ${info.webgl ?? "none"}`);
    const [warmup, reps] = ctx.quick ? [1, 3] : [2, 5];
    const rows: Row[] = [];
    for (const [M, K, N] of shapes()) {
      for (const impl of IMPLS) {
        const label = impl === "wgsl" ? "WGSL tiled (own)" : `gpu.js ${impl}`;
        try {
          const r = (await page.evaluate(
            `window.gemmBench(${JSON.stringify(impl)}, ${M}, ${K}, ${N}, ${warmup}, ${reps})`,
          )) as Measured;
          const row: Row = {
            "M,K,N": `${M},${K},${N}`,
            impl: label,
            "end-to-end ms": Number(r.endToEndMs.toFixed(1)),
            "e2e GFLOP/s": gflops(M, K, N, r.endToEndMs),
            "resident ms": r.residentMs === null ? "n/a" : Number(r.residentMs.toFixed(1)),
            "resident GFLOP/s": gflops(M, K, N, r.residentMs),
            "max rel err": r.maxErr.toExponential(1),
            note: r.note ?? "",
          };
          rows.push(row);
          // Each row as it comes: software-emulated GPUs take minutes per shape.
          ctx.log(Object.values(row).join(" · "));
        } catch (e) {
          const why = e instanceof Error ? e.message.split("\n")[0]! : String(e);
          rows.push({ "M,K,N": `${M},${K},${N}`, impl: label, note: `failed: ${why}` });
          ctx.log(`${M},${K},${N} · ${label} · failed: ${why}`);
        }
      }
    }
    ctx.table(rows, "GEMM C[M,N] = A[M,K]·B[K,N], float32, in headless Chromium");
    if (errors.length > 0) ctx.log(`page errors: ${errors.join(" | ")}`);
  } finally {
    await browser.close();
    page0.close();
  }
}
