/**
 * The playground on the WebGPU backend, in Debian's headless Chromium with WebGPU switched on
 * (SwiftShader where there is no GPU): the page finds the adapter, builds a looped model on the
 * `webgpu` backend, trains it and the loss falls — the same losses as the page's CPU backend
 * within float32 rounding — with no console error. Skips with one printed line where Chromium or
 * its WebGPU adapter is missing (a failure under CI).
 */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "./test-support/chromium.js";
import { openPage, pageState, setFields, trainOnPage } from "./test-support/page-driver.js";
import { buildAndServe, type ServedPage } from "./test-support/serve-page.js";
import { TINY_MODEL_FIELDS } from "./test-support/tiny-form.js";
import { webgpuChromium } from "./test-support/webgpu-chromium.js";

interface PageState {
  gpuAdapter: string | null | undefined;
  gpuReason: string | null;
  model: { source: string } | null;
  losses: number[];
  evals: { step: number; result: { steps: { accuracy: number }[] } }[];
  training: boolean;
  error: string | null;
}

/** A small model and few steps: SwiftShader runs the GPU's kernels on this CPU. */
const tiny: Record<string, string | boolean> = {
  ...TINY_MODEL_FIELDS,
  steps: "12",
  batchSize: "8",
  lr: "0.02",
  evalEvery: "6",
  evalCount: "32",
  seed: "1",
  threads: "1",
};

async function train(page: Page, fields: Record<string, string | boolean>): Promise<PageState> {
  await setFields(page, fields);
  // SwiftShader runs the GPU's kernels on this CPU: minutes where a GPU takes a second
  const s = await trainOnPage<PageState>(page, 300_000);
  expect(s.error).toBeNull();
  return s;
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

const browser: Browser | null = await webgpuChromium("playground on webgpu");
let served: ServedPage;

beforeAll(async () => {
  if (browser) served = await buildAndServe();
});

afterAll(async () => {
  await browser?.close();
  await served?.close();
});

const state = (page: Page) => pageState<PageState>(page);

/** The page, once its worker has said whether there is a WebGPU adapter. */
const open = (b = browser!) =>
  openPage(
    b,
    served.url,
    () => (window as unknown as { playground: PageState }).playground.gpuAdapter !== undefined,
  );

describe.runIf(browser)("playground on the webgpu backend", () => {
  it("finds the adapter and offers the backend", async () => {
    const { page, errors } = await open();
    const s = await state(page);
    expect(s.gpuReason).toBeNull();
    expect(s.gpuAdapter).toMatch(/\S/);
    expect(
      await page
        .locator('[name="backend"] option[value="webgpu"]')
        .evaluate((o) => (o as HTMLOptionElement).disabled),
    ).toBe(false);
    expect(await page.textContent("#gpu-note")).toContain(`WebGPU adapter: ${s.gpuAdapter}`);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("trains a looped model on webgpu: the loss falls, as on the CPU backend", async () => {
    const { page, errors } = await open();
    const gpu = await train(page, { ...tiny, backend: "webgpu" });
    expect(gpu.model?.source).toMatch(/^trained here on webgpu/);
    expect(gpu.losses).toHaveLength(12);
    for (const l of gpu.losses) expect(Number.isFinite(l)).toBe(true);
    expect(mean(gpu.losses.slice(-4))).toBeLessThan(mean(gpu.losses.slice(0, 4)) - 0.05);
    // evaluated on the weights brought back from the GPU, at steps 0, 6 and 12
    expect(gpu.evals.map((e) => e.step)).toEqual([0, 6, 12]);
    // the same run on the CPU backend: the same initial weights and batches, so the same losses
    // up to float32 rounding (they agree to ~1e-7 here)
    const cpu = await train(page, { ...tiny, backend: "cpu" });
    for (let i = 0; i < 12; i++)
      expect(Math.abs(gpu.losses[i]! - cpu.losses[i]!)).toBeLessThan(1e-4 * cpu.losses[i]!);
    expect(errors).toEqual([]);
    await page.close();
  }, 600_000);

  it("without WebGPU keeps the backend off and says why", async () => {
    const plain = await launchChromium();
    try {
      const { page, errors } = await open(plain);
      const s = await state(page);
      expect(s.gpuAdapter).toBeNull();
      expect(await page.textContent("#gpu-note")).toBe(`No WebGPU backend here (${s.gpuReason}).`);
      expect(s.gpuReason).toMatch(/no GPU adapter was found \(.*--enable-unsafe-webgpu/);
      expect(errors).toEqual([]);
    } finally {
      await plain.close();
    }
  });
});
