/*
 * Where a study's seed was trained, kept in its record (seed-record.ts). The native backend's
 * numbers depend in their last digits on the CPU's vector instructions, and training amplifies
 * them, so a study run in parts on several machines must say which machine each seed is from.
 * The record is written by the machine whose folders hold the seed's finished members: the one
 * that trained them, unless the folders were copied from another (a record cannot tell).
 */
import { execFileSync } from "node:child_process";
import { cpus } from "node:os";
import { nativeVectorIsa, readInputText } from "@loop/tensor/node";
import type { ComputeBackend } from "../../backend.js";

export interface SeedMachine {
  /** When the record was written (ISO 8601, UTC). */
  recorded: string;
  /** "here": this process or its --jobs children; "queue": `looplm worker`s, machines unknown here. */
  trained: "here" | "queue";
  backend: string;
  /** The CPU, with /proc/cpuinfo's family and model where the system has them (trained here). */
  cpu?: string;
  /** The native build's vector instructions (trained here on a backend whose CPU kernels are native). */
  vector_isa?: string;
  node?: string;
  /**
   * The git commit of the code that wrote the record (its working directory's checkout when the
   * process started), with "+changes" when tracked code differed from it; absent outside git.
   */
  commit?: string;
}

/** What decides the numbers: the packages' code and the dependencies' versions. */
const CODE_PATHS = ["packages", "package.json", "pnpm-lock.yaml"];

/**
 * `git rev-parse HEAD` of `cwd`, with "+changes" when tracked code (CODE_PATHS) differs from it;
 * null outside a git checkout.
 */
export function gitCommit(cwd = process.cwd()): string | null {
  try {
    const git = (...args: string[]) =>
      execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
    const head = git("rev-parse", "HEAD").trim();
    const status = git("status", "--porcelain", "--untracked-files=no", "--", ...CODE_PATHS);
    return status.trim() !== "" ? `${head}+changes` : head;
  } catch {
    return null;
  }
}

/** The commit when this process loaded its code: a later commit does not change what it runs. */
let startCommit: string | null | undefined;
/**
 * The commit of the code this process runs, read once: a study calls it when it starts, so that
 * commits made while it trains are not named in its records.
 */
export function commitAtStart(): string | null {
  if (startCommit === undefined) startCommit = gitCommit();
  return startCommit;
}

/** "AMD EPYC (family 25 model 17)" from /proc/cpuinfo's text; null when it names no CPU. */
export function cpuFromCpuinfo(text: string): string | null {
  const field = (key: string) =>
    new RegExp(`^${key}\\s*:\\s*(.+)$`, "m").exec(text)?.[1]?.trim() ?? null;
  const name = field("model name");
  if (!name) return null;
  const family = field("cpu family");
  const model = field("model");
  return family && model ? `${name} (family ${family} model ${model})` : name;
}

function cpuName(): string {
  try {
    const c = cpuFromCpuinfo(readInputText("/proc/cpuinfo"));
    if (c) return c;
  } catch {
    // not Linux: the OS's own CPU name below
  }
  return cpus()[0]?.model ?? "unknown CPU";
}

export async function seedMachine(
  backend: ComputeBackend,
  trained: SeedMachine["trained"],
): Promise<SeedMachine> {
  const m: SeedMachine = { recorded: new Date().toISOString(), trained, backend: backend.name };
  const commit = commitAtStart();
  if (commit) m.commit = commit;
  if (trained === "queue") return m;
  m.cpu = cpuName();
  // (the native build's instructions, where the backend's CPU work runs on native kernels)
  const isa = backend.kernels.sets.size > 0 ? await nativeVectorIsa() : null;
  if (isa) m.vector_isa = isa;
  m.node = process.version;
  return m;
}

/** One line per seed for a study's results.md: where it was trained, or that its record does not say. */
export function seedMachineLines(machines: readonly (SeedMachine | undefined)[]): string[] {
  return machines.map((m, k) => {
    if (!m) return `seed ${k + 1}: its record does not name the machine`;
    const at = m.commit
      ? `, commit ${m.commit.slice(0, 7)}${m.commit.endsWith("+changes") ? "+changes" : ""}`
      : "";
    if (m.trained === "queue")
      return `seed ${k + 1}: ${m.backend} backend on queue workers, recorded ${m.recorded}${at}`;
    const isa = m.vector_isa ? `, ${m.vector_isa}` : "";
    return `seed ${k + 1}: ${m.cpu}${isa}, ${m.backend} backend, Node ${m.node}, recorded ${m.recorded}${at}`;
  });
}
