/**
 * Every adapter Dawn offers, asked for in a child process: Dawn and the Vulkan loader print to
 * the process's stderr while they search (loader warnings, "Found no drivers"), which no
 * JavaScript can silence, and a driver that hangs must not hang the check. The child asks for the
 * high-performance adapter (the one `@loop/webgpu/node` and so every suite and benchmark uses),
 * the low-power one and the fallback one, and lists the adapters Dawn enumerates (its
 * `adapter=<name>` flag with a name that matches none answers with the list).
 */
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import type { AdapterInfo } from "./adapter-info.js";

export interface AdapterListing {
  /** Whether Dawn (the `webgpu` package) could be loaded; the reason when not. */
  dawn: { loaded: true } | { loaded: false; error: string };
  /** The adapters found, the high-performance one (the one used) first; may repeat. */
  adapters: AdapterInfo[];
  /** Backend and name of each adapter Dawn enumerates ("vulkan: NVIDIA H200"). */
  enumerated: string[];
  /** What requestAdapter threw, per request. */
  errors: string[];
  /** What Dawn and the drivers printed meanwhile. */
  nativeOutput: string;
}

/** Runs in the child: argv[1] is the webgpu module's file URL. Prints one JSON line last. */
const SCRIPT = `
const [, url] = process.argv;
const out = { loaded: true, adapters: [], listed: "", errors: [] };
const text = (e) => String(e && e.message ? e.message : e);
function describe(a, requestedAs) {
  const i = a.info || {};
  const limits = {};
  for (const k in a.limits) if (typeof a.limits[k] === "number") limits[k] = a.limits[k];
  return {
    requestedAs,
    vendor: i.vendor || "",
    architecture: i.architecture || "",
    device: i.device || "",
    description: i.description || "",
    isFallbackAdapter: Boolean(i.isFallbackAdapter ?? a.isFallbackAdapter),
    subgroupMinSize: i.subgroupMinSize ?? null,
    subgroupMaxSize: i.subgroupMaxSize ?? null,
    features: [...a.features].sort(),
    limits,
  };
}
let dawn;
try {
  dawn = await import(url);
} catch (e) {
  out.loaded = false;
  out.errors.push(text(e).split("\\n")[0]);
}
if (dawn) {
  const gpu = dawn.create([]);
  const asks = [
    ["high-performance", { powerPreference: "high-performance" }],
    ["low-power", { powerPreference: "low-power" }],
    ["fallback", { forceFallbackAdapter: true }],
  ];
  for (const [how, opts] of asks) {
    try {
      const a = await gpu.requestAdapter(opts);
      if (a) out.adapters.push(describe(a, how));
    } catch (e) {
      out.errors.push(how + ": " + text(e).split("\\n")[0]);
    }
  }
  try {
    await dawn.create(["adapter=gpu-check: no adapter has this name"]).requestAdapter();
  } catch (e) {
    out.listed = text(e);
  }
}
process.stdout.write("\\n" + JSON.stringify(out) + "\\n");
process.exit(0);
`;

/** "* backend: 'vulkan', name: 'SwiftShader Device (Subzero)'" → "vulkan: SwiftShader Device (Subzero)". */
export function parseEnumerated(text: string): string[] {
  return [...text.matchAll(/\*\s*backend:\s*'([^']*)',\s*name:\s*'([^']*)'/g)].map(
    (m) => `${m[1]}: ${m[2]}`,
  );
}

function resolveDawn(): string | Error {
  try {
    return pathToFileURL(createRequire(import.meta.url).resolve("webgpu")).href;
  } catch (e) {
    return e as Error;
  }
}

/** List the adapters with `env` as the child's environment (the Vulkan variables matter). */
export function listAdapters(env: NodeJS.ProcessEnv, timeoutMs = 60_000): Promise<AdapterListing> {
  const url = resolveDawn();
  if (url instanceof Error)
    return Promise.resolve({
      dawn: {
        loaded: false,
        error: `the "webgpu" package (Dawn) is not installed: pnpm install (${url.message.split("\n")[0]})`,
      },
      adapters: [],
      enumerated: [],
      errors: [],
      nativeOutput: "",
    });
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", SCRIPT, url], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString("utf8");
    });
    child.stderr.on("data", (c: Buffer) => {
      err += c.toString("utf8");
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    const finish = (why: string | null) => {
      clearTimeout(timer);
      const last = out.trim().split("\n").pop() ?? "";
      let parsed: {
        loaded: boolean;
        adapters: AdapterInfo[];
        listed: string;
        errors: string[];
      } | null = null;
      try {
        parsed = JSON.parse(last);
      } catch {
        parsed = null;
      }
      if (!parsed) {
        const reason =
          why ?? `the adapter probe (Dawn) gave no answer: ${err.trim().split("\n").pop() ?? ""}`;
        resolve({
          dawn: { loaded: false, error: reason },
          adapters: [],
          enumerated: [],
          errors: [],
          nativeOutput: err,
        });
        return;
      }
      resolve({
        dawn: parsed.loaded
          ? { loaded: true }
          : {
              loaded: false,
              error: `Dawn (the "webgpu" package) did not load: ${parsed.errors[0]}`,
            },
        adapters: parsed.adapters,
        enumerated: parseEnumerated(parsed.listed),
        errors: parsed.loaded ? parsed.errors : [],
        nativeOutput: err,
      });
    };
    child.on("error", (e) => finish(`the adapter probe could not start: ${e.message}`));
    child.on("close", (code, signal) => {
      const lastErr = err.trim().split("\n").pop() ?? "";
      if (signal === "SIGKILL")
        finish(
          `the adapter probe (Dawn) did not answer within ${timeoutMs / 1000} s: a driver hangs`,
        );
      else if (code !== 0)
        finish(`the adapter probe (Dawn) exited with ${signal ?? `code ${code}`}: ${lastErr}`);
      else finish(null);
    });
  });
}
