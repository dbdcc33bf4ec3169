/**
 * Test support: headless Chromium with WebGPU, or null with one printed line naming why not (no
 * Chromium, or no WebGPU adapter in it). Under CI, which installs Chromium, a missing browser or
 * adapter is a failure, never a silent pass (@loop/test-support `suiteRuns`, the one rule).
 */

import { suiteRuns } from "@loop/test-support";
import type { Browser } from "playwright-core";
import { launchChromium } from "./chromium.js";

/** A secure origin (WebGPU needs one) served by the browser itself, no server needed. */
const PROBE_URL = "https://webgpu-probe.invalid/";

async function adapterOf(browser: Browser): Promise<string> {
  const page = await browser.newPage();
  try {
    await page.route(PROBE_URL, (r) =>
      r.fulfill({ contentType: "text/html", body: "<p>probe</p>" }),
    );
    await page.goto(PROBE_URL);
    return await page.evaluate(async () => {
      const gpu = (navigator as Navigator & { gpu?: GPU }).gpu;
      if (!gpu) throw new Error("navigator.gpu is undefined");
      const adapter = await gpu.requestAdapter();
      if (!adapter) throw new Error("requestAdapter() returned null");
      return `${adapter.info.vendor} ${adapter.info.architecture}`.trim();
    });
  } finally {
    await page.close();
  }
}

export async function webgpuChromium(what: string): Promise<Browser | null> {
  let browser: Browser | null = null;
  try {
    browser = await launchChromium({ webgpu: true });
    await adapterOf(browser);
    return browser;
  } catch (e) {
    await browser?.close();
    const why = (e instanceof Error ? e.message : String(e)).split("\n")[0];
    suiteRuns(what, `no WebGPU in headless Chromium (${why})`, "installs Chromium");
    return null;
  }
}
