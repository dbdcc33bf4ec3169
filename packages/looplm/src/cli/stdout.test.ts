import { EventEmitter } from "node:events";
import { describe, expect, it, vi } from "vitest";
import { cliInShell } from "./spawn-cli.test-util.js";
import { endQuietlyWhenStdoutCloses } from "./stdout.js";

describe("a closed stdout", () => {
  /** `looplm <args> | head -1` through the real binary (from source) in a shell pipeline. */
  const headOne = (args: string) =>
    cliInShell(args.split(" "), `| head -1; echo "exit \${PIPESTATUS[0]}" >&2`);

  it.each([
    "sample mano --count 5",
    "sample mano --count 200000",
    "sample phop --length 64 --hops 4 --count 100000",
    "--help",
  ])("`looplm %s | head -1` prints one line and exits 0 without a stack trace", (args) => {
    const p = headOne(args);
    expect(p.stdout.split("\n").filter(Boolean)).toHaveLength(1);
    expect(p.stderr).toBe("exit 0\n");
  });

  it("ends with status 0 on EPIPE and with one line and status 1 on other errors", () => {
    const stream = new EventEmitter() as unknown as NodeJS.WriteStream;
    const exit = vi.fn();
    endQuietlyWhenStdoutCloses(stream, exit);
    stream.emit("error", Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
    expect(exit).toHaveBeenLastCalledWith(0);
    const err = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    try {
      stream.emit("error", Object.assign(new Error("write EIO"), { code: "EIO" }));
      expect(err).toHaveBeenCalledWith("looplm: cannot write to stdout: write EIO\n");
    } finally {
      err.mockRestore();
    }
    expect(exit).toHaveBeenLastCalledWith(1);
  });
});
