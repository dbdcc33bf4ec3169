/**
 * The playground in Debian's headless Chromium: the built page trains, plots, shows one input
 * loop step by loop step, runs the thread pool bit for bit like one thread, says so when it
 * cannot have threads, and shows a `looplm train` checkpoint exactly as `looplm eval` scores it.
 * A screenshot lands in packages/playground/test-results/ (not committed).
 */
import { mkdirSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadCheckpoint } from "@loop/looped/node";
import { pHopPositionsAll } from "@loop/tasks";
import type { Browser, Page } from "playwright-core";
import { preview } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inspect } from "./engine/inspect.js";
import type { InspectResult } from "./protocol.js";
import { buildTask } from "./settings.js";
import { launchChromium } from "./test-support/chromium.js";
import { looplm } from "./test-support/looplm-cli.js";
import { openPage, pageState, setFields, trainOnPage } from "./test-support/page-driver.js";
import { buildAndServe, playgroundRoot, type ServedPage } from "./test-support/serve-page.js";
import { TINY_MODEL_FIELDS } from "./test-support/tiny-form.js";

interface PageState {
  threads: number;
  notice: string | null;
  poolJobs: number;
  model: { source: string } | null;
  losses: number[];
  evals: {
    step: number;
    result: {
      steps: { step: number; correct: number; total: number; accuracy: number }[];
      gated: { q: number; meanStep: number; histogram: number[]; accuracy: number }[];
    };
  }[];
  inspected: InspectResult | null;
  training: boolean;
  error: string | null;
}

/** A run folder from `looplm train` and its `looplm eval` result (made while the page builds). */
async function trainAndEval() {
  const dir = mkdtempSync(join(tmpdir(), "looplm-playground-run-"));
  const run = join(dir, "run");
  // the portable kernels on one thread, as in the page (and no native compile to wait for)
  const env = { LOOPLM_NATIVE: "0", LOOPLM_THREADS: "1" };
  await looplm(
    env,
    ...["train", "--task", "phop", "--alphabet", "4", "--length", "16", "--hops", "2"],
    ...["--d-model", "16", "--d-state", "4", "--headdim", "8", "--chunk", "8", "--loops", "3"],
    ...["--exit-gate", "--steps", "20", "--batch", "16", "--lr", "0.01", "--eval-every", "0"],
    ...["--eval-count", "8", "--out", run],
  );
  const evalPath = join(dir, "eval.json");
  await looplm(env, ...["eval", "--model", run, "--count", "64", "--q-sweep", "--out", evalPath]);
  const expected = JSON.parse(readFileSync(evalPath, "utf8")) as {
    per_step: number[];
    gated: { q: number; mean_step: number; value: number; histogram: number[] }[];
  };

  return { run, expected };
}

let checkpoint: ReturnType<typeof trainAndEval>;

let served: ServedPage;
let browser: Browser;
const artifacts = join(playgroundRoot, "test-results");

beforeAll(async () => {
  checkpoint = trainAndEval();
  checkpoint.catch(() => undefined); // reported by the test that awaits it
  served = await buildAndServe();
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await served?.close();
});

/** A page with its console watched, once the worker has reported its threads. */
const open = (url = served.url) =>
  openPage(browser, url, () => document.getElementById("threads-note")?.textContent !== "");

const state = (page: Page) => pageState<PageState>(page);

async function train(page: Page): Promise<PageState> {
  const s = await trainOnPage<PageState>(page);
  expect(s.error).toBeNull();
  return s;
}

async function setThreads(page: Page, n: number): Promise<PageState> {
  await setFields(page, { threads: String(n) });
  await page.waitForFunction(
    (k) => (window as unknown as { playground: PageState }).playground.threads === k,
    n,
  );
  return state(page);
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

const tiny = {
  ...TINY_MODEL_FIELDS,
  steps: "30",
  batchSize: "16",
  lr: "0.01",
  evalEvery: "10",
  evalCount: "64",
  seed: "1",
};

describe("playground page", () => {
  it("trains a tiny model: the loss falls, accuracy per loop step and the token view render", async () => {
    const { page, errors } = await open();
    await setThreads(page, 1);
    await setFields(page, tiny);
    const s = await train(page);
    expect(s.losses).toHaveLength(30);
    expect(mean(s.losses.slice(-5))).toBeLessThan(mean(s.losses.slice(0, 5)) - 0.05);
    expect(s.evals.map((e) => e.step)).toEqual([0, 10, 20, 30]);
    for (const e of s.evals) expect(e.result.steps.map((x) => x.step)).toEqual([1, 2, 3]);
    // charts: the loss line, one point per (evaluation, loop step), one per loop step now
    await expect
      .poll(() => page.locator("#loss-chart svg .mark-line.role-mark path").count())
      .toBe(1);
    await expect
      .poll(() => page.locator("#history-chart svg .mark-symbol.role-mark path").count())
      .toBe(12);
    await expect
      .poll(() => page.locator("#steps-chart svg .mark-symbol.role-mark path").count())
      .toBe(3);
    // the token view of the sampled example: input, one row per loop step, targets
    await page.waitForFunction(
      () => (window as unknown as { playground: PageState }).playground.inspected !== null,
    );
    const rows = page.locator("#tokens table tr");
    await expect.poll(() => rows.count()).toBe(5);
    expect(await rows.nth(0).locator("th").count()).toBe(17);
    const cells = await page.locator("#tokens tr.step td").allTextContents();
    expect(cells).toHaveLength(3 * 16);
    for (const c of cells) expect(["a", "b", "c", "d"]).toContain(c);
    // a typed input (letters may run together)
    await page.fill("#input", "abcabdab");
    await page.click("#run-input");
    await expect.poll(() => page.locator("#tokens tr.step").first().locator("td").count()).toBe(8);
    const typedIds = Array.from("abcabdab", (c) => c.charCodeAt(0) - 97);
    const answers = Array.from(pHopPositionsAll(typedIds, 2, 4), (p) =>
      p > 0 ? "abcabdab"[p - 1] : "",
    );
    expect(answers.some((a) => a !== "")).toBe(true);
    expect(await page.locator("#tokens tr:last-child td").allTextContents()).toEqual(answers);
    // a symbol outside the alphabet: one clear message on the page
    await page.fill("#input", "abz");
    await page.click("#run-input");
    await expect.poll(() => page.textContent("#status")).toMatch(/unknown symbol "z".*a b c d/);
    mkdirSync(artifacts, { recursive: true });
    await page.screenshot({ path: join(artifacts, "playground.png"), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });

  it("startWebWorkerPool: three threads train bit for bit as one, parts running on workers", async () => {
    const { page, errors } = await open();
    expect(await page.evaluate(() => crossOriginIsolated)).toBe(true);
    const gated = { ...tiny, length: "32", dModel: "32", exitGate: true, steps: "4" };
    await setFields(page, { ...gated, batchSize: "32", evalEvery: "4" });
    await setThreads(page, 1);
    const one = await train(page);
    const threaded = await setThreads(page, 3);
    expect(threaded.notice).toBeNull();
    const three = await train(page);
    expect(three.losses).toEqual(one.losses);
    expect(three.evals.at(-1)).toEqual(one.evals.at(-1));
    expect(three.poolJobs).toBeGreaterThan(one.poolJobs);
    // the gate: at q = 0 every position exits at step 1
    expect(await page.locator("#gate-controls").isVisible()).toBe(true);
    await page.locator("#q").fill("0");
    await expect
      .poll(() => page.locator("#tokens tr.step:nth-child(2) td.chosen").count())
      .toBe(32);
    expect(await page.locator("#tokens td.chosen").count()).toBe(32);
    await expect
      .poll(() => page.locator("#exit-chart svg .mark-rect.role-mark path").count())
      .toBe(3 * 32);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("without cross-origin isolation: one thread and a one-line notice; it trains and stops", async () => {
    // the same build, served without a config file: no isolation headers
    const plain = await preview({
      root: playgroundRoot,
      configFile: false,
      logLevel: "warn",
      build: { outDir: served.outDir },
      preview: { host: "127.0.0.1", port: 0 },
    });
    try {
      const { page, errors } = await open(plain.resolvedUrls!.local[0]);
      await setFields(page, { threads: "2" });
      await page.waitForFunction(
        () => (window as unknown as { playground: PageState }).playground.notice !== null,
      );
      const s = await state(page);
      expect(s.threads).toBe(1);
      expect(s.notice).toMatch(/not cross-origin isolated/);
      expect(await page.textContent("#threads-note")).toContain("not cross-origin isolated");
      // and Stop ends a long run after the step in progress
      await setFields(page, { ...tiny, steps: "100000", evalEvery: "1000" });
      await page.click("#train");
      await page.waitForFunction(
        () => (window as unknown as { playground: PageState }).playground.losses.length >= 2,
      );
      await page.click("#stop");
      await page.waitForFunction(
        () => !(window as unknown as { playground: PageState }).playground.training,
      );
      expect(await page.textContent("#status")).toMatch(/^Stopped after \d+ steps/);
      expect(await page.isEnabled("#train")).toBe(true);
      expect(errors).toEqual([]);
      await page.close();
    } finally {
      await plain.close();
    }
  });

  it("a looplm train checkpoint shows the same per-step predictions as looplm eval", async () => {
    const { run, expected } = await checkpoint;
    const { page, errors } = await open();
    await page.setInputFiles("#files-input", [join(run, "final", "config.json")]);
    await expect
      .poll(() => page.textContent("#status"))
      .toMatch(/config.json \+ model.safetensors.*got config.json/);
    await setFields(page, { evalCount: "64", task: "mano" }); // run.json must set the task
    // the message above stays until the drop's load starts: only a new error ends the wait
    const stale = (await state(page)).error;
    // dropped onto the page, as a user drags the files in
    const files = ["run.json", "final/config.json", "final/model.safetensors"].map((f) => ({
      name: f.slice(f.lastIndexOf("/") + 1),
      base64: readFileSync(join(run, f)).toString("base64"),
    }));
    await page.evaluate((list) => {
      const dt = new DataTransfer();
      for (const f of list) {
        const bytes = Uint8Array.from(atob(f.base64), (c) => c.charCodeAt(0));
        dt.items.add(new File([bytes], f.name));
      }
      const drop = document.getElementById("drop")!;
      drop.dispatchEvent(
        new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }),
      );
    }, files);
    await page.waitForFunction((earlier) => {
      const s = (window as unknown as { playground: PageState }).playground;
      return (
        (s.model?.source === "checkpoint" && s.evals.length > 0) ||
        (s.error !== null && s.error !== earlier)
      );
    }, stale);
    const s = await state(page);
    expect(s.error).toBeNull();
    expect(await page.inputValue('#settings [name="task"]')).toBe("phop");
    const got = s.evals[0]!.result;
    expect(got.steps.map((x) => x.accuracy)).toEqual(expected.per_step);
    expect(
      got.gated.map((g) => ({
        q: g.q,
        mean_step: g.meanStep,
        value: g.accuracy,
        histogram: g.histogram,
      })),
    ).toEqual(expected.gated);

    // one input through the loaded model: the page's predictions are the checkpoint's in Node
    await page.fill("#input", "abcadbcadbacbdca");
    await page.click("#run-input");
    // this input's inspection, not the sample (also 16 symbols) the page inspects after a load
    await page.waitForFunction(
      () =>
        (window as unknown as { playground: PageState }).playground.inspected?.symbols.join("") ===
        "abcadbcadbacbdca",
    );
    const shown = (await state(page)).inspected!;
    const model = loadCheckpoint(join(run, "final"));
    const task = buildTask({ name: "phop", alphabet: 4, length: 16, hops: 2 });
    const ref = inspect(model, task, [..."abcadbcadbacbdca"]);
    expect(shown.steps.map((x) => x.predicted)).toEqual(ref.steps.map((x) => x.predicted));
    expect(shown.targets).toEqual(ref.targets);
    expect(await page.locator("#tokens tr.step").count()).toBe(3);
    expect(errors).toEqual([]);
    await page.close();
  });
});
