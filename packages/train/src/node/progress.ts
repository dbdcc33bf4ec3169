/*
 * Training progress on the terminal: a cli-progress bar (step, loss, tokens/s, ETA) when the
 * stream is a TTY and the optional package cli-progress is installed, plain log lines otherwise
 * (CI, pipes, files). The bar is cosmetic, so a missing package is not an error.
 */
import { createRequire } from "node:module";
import type { StepMetrics } from "../trainer.js";
import type { EvalRecord } from "./run.js";

/** Reports training progress: `update` after each step (and evaluation), `stop` at the end. */
export interface ProgressReporter {
  update(m: StepMetrics & { eval?: EvalRecord }): void;
  stop(): void;
}

/**
 * Options of the progress reporter: total steps, label, output stream, and how often plain mode
 * prints.
 */
export interface ProgressOptions {
  total: number;
  label: string;
  stream?: NodeJS.WriteStream;
  /** Plain mode: print a line every `lineEvery` steps (default: ~20 lines per run). */
  lineEvery?: number;
}

function fmtEval(e: EvalRecord | undefined): string {
  if (!e) return "";
  const v = e.metric === "accuracy" ? `${(100 * e.final).toFixed(1)}%` : e.final.toFixed(2);
  return ` ${e.metric} ${v}`;
}

type CliProgress = typeof import("cli-progress");

/** cli-progress (CommonJS, so it loads synchronously), or undefined when it is not installed. */
export function loadCliProgress(): CliProgress | undefined {
  try {
    return createRequire(import.meta.url)("cli-progress") as CliProgress;
  } catch (e) {
    if ((e as { code?: unknown }).code === "MODULE_NOT_FOUND") return undefined;
    throw e;
  }
}

/**
 * A progress reporter on `o.stream` (stderr): a live bar on a terminal when the optional
 * `cli-progress` is installed, else a plain line every few steps.
 */
export function progressReporter(o: ProgressOptions): ProgressReporter {
  const stream = o.stream ?? process.stderr;
  return reporterWith(stream.isTTY ? loadCliProgress() : undefined, o, stream);
}

/** The bar when `lib` is given, else plain lines. */
export function reporterWith(
  lib: CliProgress | undefined,
  o: ProgressOptions,
  stream: NodeJS.WriteStream,
): ProgressReporter {
  if (lib) {
    const bar = new lib.SingleBar({
      format: `${o.label} [{bar}] {value}/{total} | loss {loss} | {tps} tok/s | ETA {eta_formatted}{ev}`,
      stream,
      hideCursor: true,
      etaBuffer: 20,
      barsize: 24,
    });
    bar.start(o.total, 0, { loss: "-", tps: "-", ev: "" });
    let ev = "";
    return {
      update(m) {
        if (m.eval) ev = ` |${fmtEval(m.eval)}`;
        bar.update(m.step, { loss: m.loss.toFixed(4), tps: Math.round(m.tokens_per_s), ev });
      },
      stop() {
        bar.stop();
      },
    };
  }
  const every = o.lineEvery ?? Math.max(1, Math.round(o.total / 20));
  return {
    update(m) {
      if (m.step % every === 0 || m.step === o.total || m.eval) {
        stream.write(
          `${o.label} step ${m.step}/${o.total} loss ${m.loss.toFixed(4)} lr ${m.lr.toExponential(2)} ${Math.round(m.tokens_per_s)} tok/s${fmtEval(m.eval)}\n`,
        );
      }
    },
    stop() {},
  };
}
