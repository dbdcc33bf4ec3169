/*
 * A compute backend from outside the workspace (`--backend-module <file>`, docs/backends.md): an
 * ES module whose default export starts it — a function of the BackendOptions that returns (or
 * resolves to) a started backend: `name`, `caps`, `ops` (its kernels and `AutogradOps`), `opsAt`,
 * `stop`, and optionally `kernels` (the CPU kernels its CPU work runs on; default: those the
 * kernel-set registry holds now). Each way it can fail is one line naming the module: the file
 * is missing, it does not load, it has no such export, the export throws, or what it returns
 * lacks a member (its ops: a kernel of the contract, KERNEL_OPS_MEMBERS, or autograd).
 */
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { AUTOGRAD_MEMBERS, KERNEL_OPS_MEMBERS } from "@loop/tensor";
import { currentKernels } from "@loop/tensor/kernel";
import { outputKind } from "@loop/tensor/node";
import type { BackendOptions, ComputeBackend } from "./backend.js";
import { asCliError, CliError } from "./cli/errors.js";

const firstLine = (e: unknown) => (e instanceof Error ? e.message : String(e)).split("\n")[0]!;

/** The members a started backend must have, with the type each must be. */
const MEMBERS = {
  name: "string",
  caps: "object",
  ops: "object",
  opsAt: "function",
  stop: "function",
} as const;

/** What is wrong with `b` as a started backend (the first thing), or null. */
function problem(b: unknown): string | null {
  if (b === null || typeof b !== "object") return `returned ${b === null ? "null" : typeof b}`;
  const o = b as Record<string, unknown>;
  for (const [k, type] of Object.entries(MEMBERS))
    if (typeof o[k] !== type || o[k] === null)
      return `returned a backend whose \`${k}\` is ${o[k] === undefined ? "missing" : typeof o[k]}, not ${type === "object" ? "an" : "a"} ${type}`;
  const memory = (o.caps as Record<string, unknown>).memory;
  if (memory !== "host" && memory !== "device")
    return `returned a backend whose caps.memory is ${JSON.stringify(memory)}, not "host" or "device"`;
  if (!Array.isArray((o.caps as Record<string, unknown>).precisions))
    return "returned a backend whose caps.precisions is not a list";
  // its kernels (the contract's required members) and the autograd above them
  const ops = o.ops as Record<string, unknown>;
  for (const k of [...KERNEL_OPS_MEMBERS, ...AUTOGRAD_MEMBERS]) {
    if (k === "checkpoint") continue; // optional: a backend without it refuses --checkpointing
    const want = k === "name" ? "string" : "function";
    if (typeof ops[k] !== want)
      return `returned ops without the kernel \`${k}\` (${ops[k] === undefined ? "missing" : typeof ops[k]}, not a ${want})`;
  }
  return null;
}

/** Start the backend of module `path` (relative to the working directory); see the file comment. */
export async function startBackendModule(
  path: string,
  o: BackendOptions = {},
): Promise<ComputeBackend> {
  const flag = `--backend-module ${path}`;
  const file = resolve(path);
  const kind = asCliError(() => outputKind(file));
  if (kind !== "file")
    throw new CliError(`${flag}: ${kind === "missing" ? "no such file" : `a ${kind}, not a file`}`);
  let mod: { default?: unknown };
  try {
    mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (e) {
    throw new CliError(`${flag} does not load: ${firstLine(e)}`);
  }
  if (typeof mod.default !== "function")
    throw new CliError(
      `${flag} has no default export that starts a backend (a function returning one: docs/backends.md)`,
    );
  let b: unknown;
  try {
    b = await (mod.default as (o: BackendOptions) => unknown)(o);
  } catch (e) {
    throw new CliError(`${flag} cannot start: ${firstLine(e)}`);
  }
  const why = problem(b);
  if (why) throw new CliError(`${flag} ${why} (docs/backends.md)`);
  const started = b as Omit<ComputeBackend, "kernels"> & Partial<Pick<ComputeBackend, "kernels">>;
  return { ...started, kernels: started.kernels ?? currentKernels() };
}
