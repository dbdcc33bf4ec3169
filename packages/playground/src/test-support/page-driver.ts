/**
 * Test support: driving the playground page in a browser — open it with its console watched,
 * read `window.playground`, fill the settings form, train and wait for the run to end.
 */
import type { Browser, Page } from "playwright-core";

/** What every test reads of `window.playground` to know that a run ended. */
export interface RunState {
  training: boolean;
  evals: unknown[];
  error: string | null;
}

/**
 * The page at `url` with its console watched: every error (page, worker, failed load) lands in
 * `errors`. Resolves once `ready` (run in the page) holds.
 */
export async function openPage(
  browser: Browser,
  url: string,
  ready: () => boolean,
): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(url);
  await page.waitForFunction(ready);
  return { page, errors };
}

/** A copy of `window.playground`. */
export function pageState<T>(page: Page): Promise<T> {
  return page.evaluate(() => (window as unknown as { playground: T }).playground);
}

export async function setFields(
  page: Page,
  fields: Record<string, string | boolean>,
): Promise<void> {
  for (const [name, v] of Object.entries(fields)) {
    const sel = `#settings [name="${name}"]`;
    if (typeof v === "boolean") await page.setChecked(sel, v);
    else if ((await page.locator(sel).evaluate((e) => e.tagName)) === "SELECT") {
      await page.selectOption(sel, v);
    } else await page.fill(sel, v);
  }
}

/** Press Train and wait until the run ends (or fails: the caller checks `error`). */
export async function trainOnPage<T extends RunState>(page: Page, timeoutMs = 60_000): Promise<T> {
  await page.click("#train");
  await page.waitForFunction(
    () => {
      const s = (window as unknown as { playground: RunState }).playground;
      return (!s.training && s.evals.length > 0) || s.error !== null;
    },
    null,
    { timeout: timeoutMs },
  );
  return pageState<T>(page);
}
