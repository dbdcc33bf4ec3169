/**
 * A Vega-Lite chart on the page whose rows stream in: the spec's inline data becomes a named
 * data set that `append` and `replace` change in place (no re-embedding per training step). The
 * chart is embedded with its first rows (an empty chart has no scale domains to draw).
 */
import { changeset, type View } from "vega";
import embed from "vega-embed";
import type { TopLevelSpec } from "vega-lite";

const DATA = "rows";

export class LiveChart {
  private view: Promise<View> | null = null;
  /** Calls run in order: each waits for the previous one's rendering. */
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly el: HTMLElement,
    private readonly spec: TopLevelSpec,
  ) {
    el.replaceChildren();
  }

  private update(rows: readonly object[], keep: boolean): Promise<void> {
    const copy = rows.map((r) => ({ ...r }));
    this.queue = this.queue.then(async () => {
      if (this.view === null) {
        if (copy.length === 0) return;
        const named = { ...this.spec, data: { name: DATA, values: copy } } as TopLevelSpec;
        this.view = embed(this.el, named, { actions: false, renderer: "svg" }).then((r) => r.view);
        await this.view;
        return;
      }
      const v = await this.view;
      const cs = keep
        ? changeset().insert(copy)
        : changeset()
            .remove(() => true)
            .insert(copy);
      await v.change(DATA, cs).runAsync();
    });
    return this.queue;
  }

  /** Add rows. */
  append(rows: readonly object[]): Promise<void> {
    return this.update(rows, true);
  }

  /** Replace every row. */
  replace(rows: readonly object[]): Promise<void> {
    return this.update(rows, false);
  }
}
