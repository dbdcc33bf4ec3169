/**
 * The playground page: settings → the model worker → live charts and the token-by-token view.
 * Everything the page has shown is also kept in `window.playground` (read by the browser test,
 * handy in the console).
 */
import type { AccuracyResult, ChartSpec } from "@loop/eval";
import { evalHistoryChart, exitHistogramChart, lossChart, stepMetricChart } from "@loop/eval";
import { thresholdExit } from "@loop/exit-gate";
import { isCpuEmulation } from "@loop/webgpu";
import embed from "vega-embed";
import type { TopLevelSpec } from "vega-lite";
import { pickCheckpoint } from "./checkpoint-pick.js";
import type { InspectResult, ModelInfo, PageRequest, WorkerReply } from "./protocol.js";
import { modelLabel, taskFromRunJson } from "./settings.js";
import { droppedFiles, inputFiles } from "./ui/dropped-files.js";
import { exitCells, exitChart } from "./ui/exit-chart.js";
import { LiveChart } from "./ui/live-chart.js";
import { readSettings, readTask, showTaskFields, writeTask } from "./ui/settings-form.js";
import { renderTokenView } from "./ui/token-view.js";

interface PageState {
  threads: number;
  /** The WebGPU adapter the worker found (null: none, see `gpuReason`), undefined until asked. */
  gpuAdapter: string | null | undefined;
  gpuReason: string | null;
  notice: string | null;
  poolJobs: number;
  model: ModelInfo | null;
  losses: number[];
  evals: { step: number; result: AccuracyResult }[];
  inspected: InspectResult | null;
  training: boolean;
  error: string | null;
}

const state: PageState = {
  threads: 1,
  gpuAdapter: undefined,
  gpuReason: null,
  notice: null,
  poolJobs: 0,
  model: null,
  losses: [],
  evals: [],
  inspected: null,
  training: false,
  error: null,
};
(window as unknown as { playground: PageState }).playground = state;

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const form = $<HTMLFormElement>("settings");
const status = $("status");
const qInput = $<HTMLInputElement>("q");

const worker = new Worker(new URL("./engine/model-worker.ts", import.meta.url), {
  type: "module",
});
const send = (req: PageRequest) => worker.postMessage(req);

/**
 * The reports' charts (Vega-Lite JSON, which @loop/eval types loosely so that its entry needs no
 * vega-lite types), sized for three across.
 */
function compact(spec: ChartSpec): TopLevelSpec {
  return { ...spec, width: 250, height: 180 } as unknown as TopLevelSpec;
}

function newCharts() {
  // one run: no legend; a linear scale (the loss moves little)
  const loss = lossChart([]) as ChartSpec & {
    encoding: { y: { scale?: object }; color: { legend?: null } };
  };
  loss.encoding.y.scale = { zero: false };
  loss.encoding.color.legend = null;
  return {
    loss: new LiveChart($("loss-chart"), compact(loss)),
    history: new LiveChart($("history-chart"), compact(evalHistoryChart([], "accuracy"))),
    steps: new LiveChart(
      $("steps-chart"),
      compact(stepMetricChart([], "accuracy", "Accuracy by loop step (latest evaluation)")),
    ),
  };
}

let charts = newCharts();

function say(text: string, error = false): void {
  status.textContent = text;
  status.classList.toggle("error", error);
  state.error = error ? text : null;
}

function setTraining(on: boolean): void {
  state.training = on;
  $<HTMLButtonElement>("train").disabled = on;
  $<HTMLButtonElement>("stop").disabled = !on;
}

const pct = (v: number) => `${(100 * v).toFixed(1)}%`;
const q = () => Number(qInput.value);

// ---- threads

const cores = navigator.hardwareConcurrency || 1;
const threadSelect = form.elements.namedItem("threads") as HTMLSelectElement;
// up to the cores, and at least 4 (more threads than cores is allowed, only slower)
const choices = [1, 2, 3, 4, 6, 8, 12, 16, cores].filter((n) => n <= Math.max(cores, 4));
for (const n of [...new Set(choices)].sort((a, b) => a - b)) {
  threadSelect.add(new Option(String(n), String(n)));
}
threadSelect.value = String(Math.min(4, cores));
const requestThreads = () => send({ type: "threads", threads: Number(threadSelect.value) });
threadSelect.addEventListener("change", requestThreads);
requestThreads();

// ---- the WebGPU backend: offered when the worker finds an adapter

send({ type: "gpu" });

function onGpu(adapter: string | null, reason: string | null): void {
  state.gpuAdapter = adapter;
  state.gpuReason = reason;
  const option = form.querySelector<HTMLOptionElement>('[name="backend"] option[value="webgpu"]')!;
  option.disabled = adapter === null;
  // SwiftShader and other CPU emulations are correct but slower than the WebAssembly kernels
  const emulated = adapter !== null && isCpuEmulation(adapter);
  $("gpu-note").textContent =
    adapter === null
      ? `No WebGPU backend here (${reason}).`
      : `WebGPU adapter: ${adapter}${emulated ? " (a CPU emulation of a GPU: slower than the CPU backend)" : ""}.`;
}

// ---- the input under inspection

let sampleSeed = 1;
let typed: string | null = null;
const requestInspect = () => send({ type: "inspect", input: typed, seed: sampleSeed });

$("inspect-form").addEventListener("submit", (e) => {
  e.preventDefault();
  const text = $<HTMLInputElement>("input").value;
  typed = text.trim() === "" ? null : text;
  requestInspect();
});
$("sample").addEventListener("click", () => {
  sampleSeed = 1 + Math.floor(Math.random() * 2 ** 30);
  typed = null;
  requestInspect();
});

function chosenSteps(r: InspectResult): number[] | null {
  if (r.exitPdf === null) return null;
  const T = r.symbols.length;
  const z = thresholdExit({ data: r.exitPdf.flat(), shape: [r.exitPdf.length, 1, T] }, q());
  return Array.from(z.data);
}

function showInspection(): void {
  const r = state.inspected;
  if (r === null) return;
  const chosen = chosenSteps(r);
  renderTokenView($("tokens"), r, chosen);
  const exitHost = $("exit-chart");
  if (r.exitPdf !== null && chosen !== null) {
    const c = new LiveChart(exitHost, exitChart(q()));
    void c.replace(exitCells(r.exitPdf, chosen, r.symbols));
  } else exitHost.replaceChildren();
}

function showGated(): void {
  const last = state.evals.at(-1)?.result;
  const g = last?.gated.find((x) => Math.abs(x.q - q()) < 1e-9);
  $("gated-accuracy").textContent =
    g === undefined
      ? ""
      : `gated accuracy ${pct(g.accuracy)} at mean exit step ${g.meanStep.toFixed(2)}`;
  const host = $("exit-histogram");
  if (g === undefined) host.replaceChildren();
  else {
    void embed(host, compact(exitHistogramChart(g.histogram, q())), {
      actions: false,
      renderer: "svg",
    });
  }
}

qInput.addEventListener("input", () => {
  $("q-value").textContent = qInput.value;
  showInspection();
  showGated();
});

// ---- worker replies

function onEval(step: number, result: AccuracyResult): void {
  state.evals.push({ step, result });
  void charts.history.append(
    result.steps.map((s) => ({ step, value: s.accuracy, series: `r = ${s.step}` })),
  );
  void charts.steps.replace(
    result.steps.map((s) => ({ series: "held-out accuracy", step: s.step, value: s.accuracy })),
  );
  showGated();
  requestInspect();
}

worker.onmessage = (e: MessageEvent<WorkerReply>) => {
  const m = e.data;
  switch (m.type) {
    case "gpu":
      onGpu(m.adapter, m.reason);
      return;
    case "threads":
      state.threads = m.threads;
      state.notice = m.notice;
      $("threads-note").textContent =
        m.notice === null
          ? `Using ${m.threads} thread${m.threads > 1 ? "s" : ""}.`
          : `Using ${m.notice}.`;
      return;
    case "model": {
      state.model = m.info;
      const c = m.info.config;
      $("model-info").textContent =
        `${modelLabel(c)}, d_model ${c.d_model}${c.exit_gate ? ", exit gate" : ""}: ${m.info.params.toLocaleString("en-US")} parameters, task ${m.info.taskName} (${m.info.source}).`;
      $("gate-controls").hidden = !c.exit_gate;
      return;
    }
    case "step": {
      state.losses.push(m.loss);
      state.poolJobs = m.poolJobs;
      const label = state.model ? modelLabel(state.model.config) : "model";
      void charts.loss.append([{ run: label, step: m.step, loss: m.loss }]);
      const acc = state.evals.at(-1)?.result.steps.at(-1)?.accuracy;
      say(
        `step ${m.step} · loss ${m.loss.toFixed(4)} · ${m.elapsed.toFixed(1)} s` +
          (acc === undefined ? "" : ` · final-step accuracy ${pct(acc)}`),
      );
      return;
    }
    case "eval":
      onEval(m.step, m.result);
      if (!state.training) {
        say(
          `Checkpoint loaded: accuracy per loop step ${m.result.steps.map((s) => pct(s.accuracy)).join(" → ")}`,
        );
      }
      return;
    case "done": {
      setTraining(false);
      const last = state.evals.at(-1)?.result.steps;
      say(
        `${m.stopped ? "Stopped" : "Done"} after ${m.step} steps` +
          (last ? `: accuracy per loop step ${last.map((s) => pct(s.accuracy)).join(" → ")}` : "."),
      );
      return;
    }
    case "inspect":
      state.inspected = m.result;
      if (typed === null) {
        const sep = m.result.symbols.every((s) => s.length === 1) ? "" : " ";
        $<HTMLInputElement>("input").value = m.result.symbols.join(sep);
      }
      showInspection();
      return;
    case "error":
      if (m.request === "train") setTraining(false);
      say(m.message, true);
      return;
  }
};
worker.onerror = (e) => {
  setTraining(false);
  say(`the model worker failed: ${e.message}`, true);
};

// ---- training

form.addEventListener("change", (e) => {
  if ((e.target as HTMLElement).getAttribute("name") === "task") showTaskFields(form);
});
form.addEventListener("submit", (e) => {
  e.preventDefault();
  let settings: ReturnType<typeof readSettings>;
  try {
    settings = readSettings(form);
  } catch (err) {
    say((err as Error).message, true);
    return;
  }
  state.losses = [];
  state.evals = [];
  state.inspected = null;
  charts = newCharts();
  setTraining(true);
  say("Building the model…");
  send({ type: "train", settings });
});
$("stop").addEventListener("click", () => send({ type: "stop" }));

// ---- checkpoints

async function loadFiles(files: Parameters<typeof pickCheckpoint<File>>[0]): Promise<void> {
  const pick = pickCheckpoint(files);
  let task = readTask(form);
  if (pick.run !== null) {
    let raw: unknown;
    try {
      raw = JSON.parse(await pick.run.text());
    } catch (e) {
      throw new Error(`run.json is not JSON: ${(e as Error).message}`);
    }
    task = taskFromRunJson(raw);
    writeTask(form, task);
  }
  state.losses = [];
  state.evals = [];
  state.inspected = null;
  charts = newCharts();
  say(`Loading ${pick.folder || "the checkpoint"}…`);
  send({
    type: "load",
    config: await pick.config.text(),
    weights: await pick.weights.arrayBuffer(),
    task,
    evalCount: Number((form.elements.namedItem("evalCount") as HTMLInputElement).value),
  });
}

function loadFrom(get: () => Promise<Parameters<typeof loadFiles>[0]>): void {
  if (state.training) {
    say("stop training before loading a checkpoint", true);
    return;
  }
  get()
    .then(loadFiles)
    .catch((e: unknown) => say((e as Error).message, true));
}

const drop = $("drop");
drop.addEventListener("dragover", (e) => {
  e.preventDefault();
  drop.classList.add("over");
});
drop.addEventListener("dragleave", () => drop.classList.remove("over"));
drop.addEventListener("drop", (e) => {
  e.preventDefault();
  drop.classList.remove("over");
  const dt = e.dataTransfer;
  if (dt !== null) loadFrom(() => droppedFiles(dt));
});
for (const id of ["folder-input", "files-input"]) {
  const input = $<HTMLInputElement>(id);
  input.addEventListener("change", () => {
    if (input.files !== null) {
      const files = inputFiles(input.files);
      loadFrom(async () => files);
    }
  });
}
