import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EVAL_FORMAT, type EvalFile } from "../eval-file.js";
import { folderKind, readRunFolder } from "./read-folders.js";
import { renderRunReport } from "./run-report.js";
import { renderSweepReport } from "./sweep-report.js";

const CONFIG = {
  backbone: "mamba",
  vocab_size: 32,
  d_model: 16,
  n_layers: 2,
  n_loops: 3,
  exit_gate: true,
  ssm: { d_state: 8, headdim: 8, chunk_size: 8 },
};

function evalFile(gated: boolean): EvalFile {
  return {
    format: EVAL_FORMAT,
    model: { dir: "final", label: "2⊗3", params: 5000, flops_per_token: 40000, config: CONFIG },
    task: { name: "mano", max_ops: 2 },
    metric: "accuracy",
    per_step: [0.2, 0.5, 0.8],
    final: 0.8,
    count: 64,
    q: gated ? 0.5 : null,
    gated: gated
      ? [0, 0.5, 1].map((q, i) => ({
          q,
          mean_step: 1 + i,
          value: 0.2 + 0.3 * i,
          histogram: [3 - i, 1, i],
        }))
      : [],
    mc: gated
      ? {
          source: "piqa",
          items: 10,
          per_step: [0.5, 0.6, 0.7].map((a) => ({ acc: a, acc_norm: a, acc_bytes: a })),
          final: { acc: 0.7, acc_norm: 0.7, acc_bytes: 0.7 },
        }
      : null,
  };
}

function makeRun(dir: string, loops: number, withEval: EvalFile | null): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "run.json"),
    JSON.stringify({
      task: { name: "mano", max_ops: 2 },
      model: { ...CONFIG, n_loops: loops },
      train: { steps: 4 },
      seed: 0,
      stage: "pretrain",
    }),
  );
  const lines = [1, 2, 3, 4].map((step) =>
    JSON.stringify({
      step,
      loss: 3 / step,
      lr: 1e-3,
      grad_norm: 1,
      tokens_per_s: 100,
      elapsed_s: step,
      ...(step % 2 === 0
        ? {
            eval: {
              metric: "accuracy",
              per_step: Array.from({ length: loops }, (_v, r) => (r + 1) / (loops + 1)),
              final: loops / (loops + 1),
            },
          }
        : {}),
    }),
  );
  writeFileSync(join(dir, "log.jsonl"), `${lines.join("\n")}\n`);
  if (withEval) writeFileSync(join(dir, "eval.json"), JSON.stringify(withEval));
}

/** The <figure> holding the chart titled `title`, if its SVG is in the page. */
function chartSvg(html: string, title: string): string | null {
  const i = html.indexOf(`data-chart="${title}"`);
  if (i < 0) return null;
  const end = html.indexOf("</figure>", i);
  const fig = html.slice(i, end);
  return fig.includes("<svg") && fig.includes(`>${title}</text>`) ? fig : null;
}

describe("renderRunReport", () => {
  it("writes report.html with every plot of a gated run as inline SVG", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "eval-report-")), "run");
    makeRun(dir, 3, evalFile(true));
    expect(folderKind(dir)).toBe("run");
    const path = await renderRunReport(dir);
    expect(path).toBe(join(dir, "report.html"));
    const html = readFileSync(path, "utf8");
    expect(html.startsWith("<!doctype html>")).toBe(true);
    for (const title of [
      "Training loss",
      "Accuracy during training",
      "Accuracy by loop step",
      "Exit-step histogram (q = 0.5)",
      "Depth/accuracy frontier over q",
      "Multiple choice (piqa) by loop step",
    ])
      expect(chartSvg(html, title), title).not.toBeNull();
    expect(html).not.toMatch(/<script/);
    expect(html).toContain("80.00 %");
    // eval.json and the last training eval differ here: both drawn
    expect(html).toContain(">last training eval<");
  });

  it("works from log.jsonl alone (no eval.json), without gate plots", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "eval-report-")), "run");
    makeRun(dir, 2, null);
    const html = readFileSync(await renderRunReport(dir), "utf8");
    expect(chartSvg(html, "Training loss")).not.toBeNull();
    expect(chartSvg(html, "Accuracy by loop step")).not.toBeNull();
    expect(html).not.toContain("Exit-step histogram");
  });

  it("shows a character run's own vocabulary, and one series where eval.json equals the last training eval", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "eval-report-")), "run");
    makeRun(dir, 3, null);
    const run = JSON.parse(readFileSync(join(dir, "run.json"), "utf8"));
    // (run.json's vocab is --vocab, the BPE size asked for; a char vocabulary is the model's)
    run.task = { name: "lm", corpus: "sotu", tokenizer: "char", vocab: 4096, seq_len: 64 };
    writeFileSync(join(dir, "run.json"), JSON.stringify(run));
    const ev = { ...evalFile(false), per_step: [0.25, 0.5, 0.75], final: 0.75 };
    writeFileSync(join(dir, "eval.json"), JSON.stringify(ev));
    const html = readFileSync(await renderRunReport(dir), "utf8");
    expect(html).toMatch(/(&quot;|")vocab(&quot;|"):32\b/);
    expect(html).not.toContain("4096");
    expect(html).toContain("eval.json = last training eval");
    expect(html).not.toContain(">last training eval<");
  });

  it("names what is wrong with a bad folder", () => {
    const dir = mkdtempSync(join(tmpdir(), "eval-report-"));
    expect(() => readRunFolder(dir)).toThrow(/is not a run folder \(no run.json\)/);
    expect(() => folderKind(dir)).toThrow(/holds neither run.json .* nor sweep.json/);
    writeFileSync(join(dir, "run.json"), "{}");
    expect(() => readRunFolder(dir)).toThrow(/run.json "model": expected a JSON object/);
    expect(() => folderKind("/dev/null")).toThrow("/dev/null is a character device, not a folder");
    expect(() => readRunFolder(join(dir, "run.json"))).toThrow(
      `${join(dir, "run.json")} is a file, not a run folder`,
    );
    expect(() => folderKind(join(dir, "none"))).toThrow(
      `folder ${join(dir, "none")} does not exist`,
    );
  });
});

describe("renderSweepReport", () => {
  it("plots the metric vs parameters and FLOPs (labelled N⊗R), per step, losses and frontiers", async () => {
    const root = mkdtempSync(join(tmpdir(), "eval-sweep-"));
    makeRun(join(root, "2x1"), 1, null);
    makeRun(join(root, "2x3"), 3, evalFile(true));
    makeRun(join(root, "6x1"), 1, null);
    const rows = [
      {
        label: "2⊗1",
        role: "baseline",
        run: "2x1",
        params: 5000,
        flops_per_token: 13000,
        metric_value: 0.3,
        per_step: [0.3],
      },
      {
        label: "2⊗3",
        role: "looped",
        run: "2x3",
        params: 5000,
        flops_per_token: 40000,
        metric_value: 0.8,
        per_step: [0.2, 0.5, 0.8],
      },
      {
        label: "6⊗1",
        role: "baseline",
        run: "6x1",
        params: 15000,
        flops_per_token: 40000,
        metric_value: 0.6,
        per_step: [0.6],
      },
    ];
    writeFileSync(
      join(root, "sweep.json"),
      JSON.stringify({ protocol: "iso-flops", task: "mano", metric: "accuracy", rows }),
    );
    expect(folderKind(root)).toBe("sweep");
    const html = readFileSync(await renderSweepReport(root), "utf8");
    for (const title of [
      "Accuracy vs parameters",
      "Accuracy vs FLOPs per token",
      "Accuracy by loop step",
      "Training loss",
      "Depth/accuracy frontier over q",
      "Exit-step histogram 2⊗3 (q = 0.5)",
    ])
      expect(chartSvg(html, title), title).not.toBeNull();
    // every member's N⊗R label is drawn in the parameter plot
    const vsParams = chartSvg(html, "Accuracy vs parameters")!;
    for (const r of rows) expect(vsParams).toContain(`>${r.label}</text>`);
    expect(html).toContain("15,000");
  });

  it("rejects a malformed sweep.json", async () => {
    const root = mkdtempSync(join(tmpdir(), "eval-sweep-"));
    writeFileSync(
      join(root, "sweep.json"),
      JSON.stringify({ protocol: "iso-depth", metric: "accuracy", rows: [] }),
    );
    await expect(renderSweepReport(root)).rejects.toThrow(
      /"protocol" must be "iso-param" or "iso-flops", got "iso-depth"/,
    );
  });
});
