/**
 * The offline bundle as a GPU node gets it: `pnpm bundle`'s build, its size (≤ 48 MiB), then
 * unpacked in an empty folder and run in a scrubbed environment (`env -i`; a PATH of the
 * system's tools without node, npm or pnpm; HOME in a temporary folder; no node_modules above;
 * SwiftShader's ICD as the only Vulkan driver): `looplm check --backend native` (its C kernels
 * compiled from the bundle's sources) and `looplm check --backend webgpu --allow-emulation`
 * (Dawn from the bundle), both at small shapes, must pass. Then as a bare GPU node: in a private
 * mount namespace with the system's node, cc, gcc, c++, g++ and nvcc hidden (/dev/null bind-
 * mounted over each) and `env -i`, `looplm check --backend cuda` gets as far as the driver on
 * the prebuilt addon and fatbin (nothing compiled) and refuses in one line naming libcuda.so.1;
 * the fatbin holds sm_80, sm_86, sm_89 and sm_90 and PTX; `first-run.sh` runs to its end, every
 * GPU part one line of why it could not run, and writes summary.md. Skipped with one printed
 * line where the machine lacks a C compiler, nvcc, SwiftShader or mount namespaces (a failure
 * under CI, which installs them and runs as root).
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fatbinContents, findNvcc } from "@loop/cuda/node";
import { suiteRuns } from "@loop/test-support";
import { afterAll, describe, expect, it } from "vitest";
import { buildBundle, MAX_BUNDLE_BYTES } from "./build-bundle.js";

const SWIFTSHADER = "/usr/lib/chromium/vk_swiftshader_icd.json";
const root = resolve(import.meta.dirname, "../..");
const hasCc = spawnSync("sh", ["-c", "command -v cc"]).status === 0;
const hasUnshare = spawnSync("unshare", ["-m", "--propagation", "private", "true"]).status === 0;
const missing = [
  ...(hasCc ? [] : ["a C compiler"]),
  ...(findNvcc() ? [] : ["nvcc (the bundle's prebuilt CUDA kernels)"]),
  ...(hasUnshare ? [] : ["mount namespaces (unshare -m, as root)"]),
  ...(existsSync(SWIFTSHADER) ? [] : ["SwiftShader"]),
  ...(process.platform === "linux" && process.arch === "x64" ? [] : ["linux-x64"]),
];
const runs = suiteRuns(
  "the offline bundle",
  missing.length ? `no ${missing.join(", ")}` : null,
  "installs gcc and chromium and runs as root on a machine with the CUDA toolkit's nvcc",
);

const work = mkdtempSync(join(tmpdir(), "looplm-bundle-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A folder of links to the system's tools, without node, npm, pnpm and their kin. */
function scrubbedPath(dir: string): string {
  mkdirSync(dir);
  const hidden = new Set(["node", "nodejs", "npm", "npx", "pnpm", "pnpx", "corepack", "yarn"]);
  for (const bin of ["/usr/local/bin", "/usr/bin", "/bin"])
    for (const name of existsSync(bin) ? readdirSync(bin) : [])
      if (!hidden.has(name) && !existsSync(join(dir, name)))
        symlinkSync(join(bin, name), join(dir, name));
  return dir;
}

describe.runIf(runs)("the offline bundle", () => {
  let unpacked = "";
  let env: Record<string, string> = {};

  it("builds to at most 48 MiB and unpacks in an empty folder", { timeout: 900_000 }, async () => {
    const t0 = performance.now();
    const r = await buildBundle({ root, outDir: join(work, "dist") });
    console.log(
      `bundle: ${(r.bytes / 2 ** 20).toFixed(1)} MiB, built in ${((performance.now() - t0) / 1000).toFixed(0)} s`,
    );
    expect(r.path).toMatch(/looplm-\d+\.\d+\.\d+-linux-x64\.tar\.xz$/);
    expect(r.bytes).toBeLessThanOrEqual(MAX_BUNDLE_BYTES);
    unpacked = join(work, "node-x", "empty");
    mkdirSync(unpacked, { recursive: true });
    execFileSync("tar", ["-C", unpacked, "-xJf", r.path]);
    // nothing above the unpacked folder holds a node_modules
    for (let d = unpacked; d !== dirname(d); d = dirname(d))
      expect(existsSync(join(d, "node_modules")), d).toBe(false);
    for (const f of [
      "bin/looplm",
      "node/bin/node",
      "lib/js/main.js",
      "lib/js/node_modules/webgpu/dist/linux-x64/dawn.node",
      "lib/vulkan/libvulkan.so.1",
      "native/tensor.c",
      "native/ssd.c",
      "native/attention.c",
      "native/cuda-driver.c",
      "kernels/common.cuh",
      "prebuilt/manifest.json",
      "prebuilt/kernels.fatbin",
      "prebuilt/cuda-driver-linux-x64.node",
      "first-run.sh",
      "VERSION",
      "lib/js/gpu-step-time.js",
      "lib/torch/model.py",
      "golden/hybrid-3x2/config.json",
    ])
      expect(existsSync(join(unpacked, "looplm-bundle", f)), f).toBe(true);
    env = {
      PATH: scrubbedPath(join(work, "path")),
      HOME: join(work, "home"),
      VK_ICD_FILENAMES: SWIFTSHADER,
    };
    mkdirSync(env.HOME!);
    expect(
      spawnSync("sh", ["-c", "command -v node || command -v npm || command -v pnpm"], { env })
        .status,
    ).not.toBe(0);
  });

  const looplm = (args: string[], timeout: number) =>
    spawnSync(join(unpacked, "looplm-bundle/bin/looplm"), args, {
      cwd: join(work, "node-x"),
      env,
      encoding: "utf8",
      timeout,
    });

  it("runs looplm check --backend native from the bundle (C kernels compiled from its sources)", {
    timeout: 600_000,
  }, () => {
    const r = looplm(
      ["check", "--backend", "native", "--size", "small", "--out", join(work, "native")],
      590_000,
    );
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    const report = JSON.parse(readFileSync(join(work, "native/report.json"), "utf8"));
    expect(report.failed).toBe(0);
    expect(report.backend).toBe("native");
    expect(report.cases.some((c: { name: string }) => c.name.startsWith("golden "))).toBe(true);
  });

  it("runs looplm check --backend webgpu --allow-emulation from the bundle, named as emulated", {
    timeout: 900_000,
  }, () => {
    const r = looplm(
      [
        "check",
        "--backend",
        "webgpu",
        "--allow-emulation",
        "--size",
        "small",
        "--budget",
        "2m",
        "--out",
        join(work, "webgpu"),
      ],
      890_000,
    );
    expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
    const report = JSON.parse(readFileSync(join(work, "webgpu/report.json"), "utf8"));
    expect(report.failed).toBe(0);
    expect(report.adapter.emulated).toBe(true);
    expect(report.adapter.name).toMatch(/swiftshader/i);
    expect(report.driver.vulkan).toContain(
      `VK_ICD_FILENAMES=${SWIFTSHADER} as set (a CPU emulation)`,
    );
    expect(report.precisions).toEqual(["fp32", "mixed"]);
    expect(r.stdout).toContain("(emulated: a CPU emulation, not a GPU)");
  });
  it("runs looplm forward --backend webgpu on the bundle's own Vulkan loader, and says so", () => {
    const golden = join(unpacked, "looplm-bundle/golden/mamba-1x1");
    const r = spawnSync(
      join(unpacked, "looplm-bundle/bin/looplm"),
      [
        "forward",
        "--backend",
        "webgpu",
        "--model",
        golden,
        "--input",
        join(golden, "inputs.json"),
        "--out",
        join(work, "fwd.safetensors"),
      ],
      {
        cwd: work,
        env: { ...env, LOOPLM_BUNDLED_VULKAN: "force" },
        encoding: "utf8",
        timeout: 300_000,
      },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      `loader bundled: ${join(unpacked, "looplm-bundle/lib/vulkan/libvulkan.so.1")}`,
    );
    expect(r.stderr).toContain("(a CPU emulation)");
    expect(existsSync(join(work, "fwd.safetensors"))).toBe(true);
  }, 300_000);

  describe("as a bare GPU node: no node, cc, gcc or nvcc, env -i", () => {
    const home = join(work, "bare-home");
    /** `cmd` in a private mount namespace with the system's tools hidden, in `env -i`. */
    const bare = (cmd: string[], timeout: number) => {
      mkdirSync(home, { recursive: true });
      const hide = [
        "for t in node nodejs cc gcc c++ g++ nvcc; do",
        '  p="$(command -v "$t" || true)"',
        '  if [ -n "$p" ]; then mount --bind /dev/null "$(readlink -f "$p")"; fi',
        "done",
        'if [ -e /usr/local/cuda/bin/nvcc ]; then mount --bind /dev/null "$(readlink -f /usr/local/cuda/bin/nvcc)"; fi',
        `exec env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=${home} "$@"`,
      ].join("\n");
      return spawnSync(
        "unshare",
        ["-m", "--propagation", "private", "bash", "-c", hide, "bash", ...cmd],
        { cwd: work, encoding: "utf8", timeout },
      );
    };
    const compiled = () => {
      const cache = join(home, ".cache/looplm/cuda");
      return existsSync(cache) ? readdirSync(cache) : [];
    };

    it("hides the tools: node, cc, gcc and nvcc do not run there", () => {
      for (const t of [
        "node --version",
        "cc --version",
        "gcc --version",
        "/usr/local/cuda/bin/nvcc --version",
      ]) {
        const r = bare(["bash", "-c", t], 30_000);
        expect(r.status, `${t}: ${r.stdout}`).not.toBe(0);
      }
    });

    it("check --backend cuda loads the prebuilt addon, compiles nothing and refuses in one line naming libcuda.so.1", () => {
      const r = bare(
        [
          join(unpacked, "looplm-bundle/bin/looplm"),
          "check",
          "--backend",
          "cuda",
          "--out",
          join(work, "bare-check"),
        ],
        120_000,
      );
      expect(r.status, r.stdout).not.toBe(0);
      const lines = r.stderr.trim().split("\n");
      expect(lines, r.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^looplm: --backend cuda cannot start here: no CUDA driver: libcuda\.so\.1 could not be opened \(.+\)/,
      );
      expect(compiled()).toEqual([]);
    });

    it("the prebuilt fatbin holds sm_80, sm_86, sm_89 and sm_90 cubins and compute_90 PTX", () => {
      const dir = join(unpacked, "looplm-bundle/prebuilt");
      const image = new Uint8Array(readFileSync(join(dir, "kernels.fatbin")));
      const contents = { sass: ["sm_80", "sm_86", "sm_89", "sm_90"], ptx: ["compute_90"] };
      expect(fatbinContents(image)).toEqual(contents);
      const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
      expect(manifest.kernels).toMatchObject(contents);
      expect(manifest.addon).toMatchObject({ platform: "linux", arch: "x64" });
    });

    it("first-run.sh runs to its end: each GPU part one line of why, summary.md written", () => {
      const out = join(work, "first-run-out");
      const r = bare([join(unpacked, "looplm-bundle/first-run.sh"), out], 600_000);
      expect(r.status, `${r.stdout}\n${r.stderr}`).toBe(0);
      const files = readdirSync(out);
      expect(files).toContain("summary.md");
      expect(files.length).toBeLessThanOrEqual(8);
      const summary = readFileSync(join(out, "summary.md"), "utf8");
      expect(summary).toMatch(/^- looplm: looplm \d+\.\d+\.\d+, commit \S+$/m);
      expect(summary).toMatch(/^- GPU \(nvidia-smi\): none/m);
      const row = (part: string) => {
        const hit = summary.split("\n").find((l) => l.startsWith(`| ${part} | `));
        expect(hit, `${part} in\n${summary}`).toBeDefined();
        return hit!;
      };
      expect(row("looplm check --backend cuda")).toMatch(
        /\| could not run \(exit \d+\): looplm: --backend cuda cannot start here: no CUDA driver: libcuda\.so\.1 could not be opened/,
      );
      expect(row("looplm check --backend webgpu")).toMatch(
        /\| could not run \(exit \d+\): looplm: .+ \| \d+ \|$/,
      );
      for (const part of [
        "step time, bf16 (PyTorch eager bf16 beside)",
        "step time, tf32",
        "decode rates",
      ])
        expect(row(part)).toMatch(
          /\| could not run \(exit 2\): cuda could not start: no CUDA driver: libcuda\.so\.1 could not be opened .+ \| \d+ \|$/,
        );
      expect(compiled()).toEqual([]);
    }, 620_000);
  });
});
