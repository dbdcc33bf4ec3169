/*
 * The coordinator's view of its jobs: a table redrawn in place on a terminal, or one line per
 * change of a member's state when the output is a file or a pipe (CI logs).
 */
import { formatTable } from "@loop/eval";

export type MemberState = "queued" | "running" | "retrying" | "done" | "failed";

export interface MemberStatus {
  label: string;
  state: MemberState;
  worker?: string;
  step?: number;
  total?: number;
  /** The final metric when done, the reason when failed. */
  detail?: string;
}

export function progressTable(rows: readonly MemberStatus[]): string {
  const cells = rows.map((r) => [
    r.label,
    r.state,
    r.worker ?? "",
    r.step !== undefined && r.total !== undefined ? `${r.step}/${r.total}` : "",
    r.detail ?? "",
  ]);
  const head = ["member", "state", "worker", "step", "result"];
  const counts = (s: MemberState) => rows.filter((r) => r.state === s).length;
  const summary = `${counts("done")}/${rows.length} done, ${counts("running")} running, ${counts("queued") + counts("retrying")} waiting, ${counts("failed")} failed`;
  return `${formatTable(head, cells, () => false, "text")}\n${summary}`;
}

export interface ProgressView {
  update(rows: readonly MemberStatus[]): void;
  /** A message above the table (connection lost, member re-queued). */
  note(line: string): void;
  stop(): void;
}

export function progressView(stream: NodeJS.WriteStream): ProgressView {
  if (stream.isTTY) {
    let drawn = 0;
    let last: readonly MemberStatus[] = [];
    const clear = () => {
      if (drawn > 0) stream.write(`\x1b[${drawn}A\x1b[J`);
      drawn = 0;
    };
    const draw = (rows: readonly MemberStatus[]) => {
      const t = progressTable(rows);
      stream.write(`${t}\n`);
      drawn = t.split("\n").length;
    };
    return {
      update(rows) {
        last = rows;
        clear();
        draw(rows);
      },
      note(line) {
        clear();
        stream.write(`${line}\n`);
        if (last.length) draw(last);
      },
      stop() {},
    };
  }
  const seen = new Map<string, string>();
  return {
    update(rows) {
      for (const r of rows) {
        const key = `${r.state} ${r.worker ?? ""}`;
        if (seen.get(r.label) === key) continue;
        seen.set(r.label, key);
        const on = r.state === "running" && r.worker ? ` on ${r.worker}` : "";
        stream.write(`${r.label}: ${r.state}${on}${r.detail ? ` (${r.detail})` : ""}\n`);
      }
    },
    note(line) {
      stream.write(`${line}\n`);
    },
    stop() {},
  };
}
