/**
 * The README's screenshot (docs/playground.png): the built page trains its default model in
 * headless Chromium, then shows a sampled example. `pnpm --filter @loop/playground screenshot`.
 * Beside it, docs/playground.txt holds the text of the page it shows (index.html's), which
 * `pnpm docs:check` compares with the page as it is: a changed page asks for a new screenshot.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { pageText } from "../../../../tools/docs-check/screenshot.js";
import { launchChromium } from "../test-support/chromium.js";
import { buildAndServe } from "../test-support/serve-page.js";

const out = fileURLToPath(new URL("../../../../docs/playground.png", import.meta.url));
const textOut = fileURLToPath(new URL("../../../../docs/playground.txt", import.meta.url));
const html = readFileSync(fileURLToPath(new URL("../../index.html", import.meta.url)), "utf8");
const served = await buildAndServe();
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(served.url);
  await page.waitForFunction(() => document.getElementById("threads-note")?.textContent !== "");
  const t0 = Date.now();
  await page.click("#train");
  await page.waitForFunction(
    () => {
      const s = (window as unknown as { playground: { training: boolean; evals: unknown[] } })
        .playground;
      return !s.training && s.evals.length > 1;
    },
    null,
    { timeout: 600_000 },
  );
  const took = (Date.now() - t0) / 1000;
  await page.waitForTimeout(500); // the last chart update
  await page.screenshot({ path: out, fullPage: true });
  writeFileSync(textOut, `${pageText(html)}\n`);
  process.stdout.write(
    `${await page.textContent("#status")}\ntrained in ${took.toFixed(1)} s\nwrote ${out} and ${textOut}\n`,
  );
} finally {
  await browser.close();
  await served.close();
}
