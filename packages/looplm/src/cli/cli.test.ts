import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { readSafetensorsFile } from "@loop/tensor/node";
import { goldenPath } from "@loop/test-support";
import { CommanderError } from "commander";
import { afterEach, describe, expect, it, vi } from "vitest";
import { buildProgram } from "./program.js";
import { ISO_SWEEP, tinyPhop } from "./tiny-args.test-util.js";

async function run(...args: string[]): Promise<string> {
  let out = "";
  const spyOut = vi.spyOn(process.stdout, "write").mockImplementation((c: string | Uint8Array) => {
    out += typeof c === "string" ? c : Buffer.from(c).toString("utf8");
    return true;
  });
  const spyErr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
  try {
    await buildProgram().parseAsync(["node", "looplm", ...args]);
  } finally {
    spyOut.mockRestore();
    spyErr.mockRestore();
  }
  return out;
}

afterEach(() => {
  vi.restoreAllMocks();
});

const tmp = () => mkdtempSync(join(tmpdir(), "looplm-cli-"));
const tiny = tinyPhop(12);
const quick = [
  "--steps",
  "3",
  "--batch",
  "4",
  "--eval-every",
  "0",
  "--eval-count",
  "8",
  "--warmup",
  "1",
];

describe("looplm forward", () => {
  it("writes every golden tensor name for a gated model", async () => {
    const out = join(tmp(), "o.safetensors");
    const dir = goldenPath("mamba-2x2-gate");
    await run("forward", "--model", dir, "--input", join(dir, "inputs.json"), "--out", out);
    const got = [...readSafetensorsFile(out).tensors.keys()].sort();
    const want = [...readSafetensorsFile(join(dir, "outputs.safetensors")).tensors.keys()].sort();
    expect(got).toEqual(want);
  });
  it("rejects malformed inputs with one clear message each", async () => {
    const dir = goldenPath("mamba-1x1");
    const d = tmp();
    const cases: [unknown, RegExp][] = [
      [{ tokens: [[1, 2], [3]], targets: [[1, 2], [3]] }, /ragged/],
      [{ tokens: [], targets: [] }, /B = 0/],
      [{ tokens: [[]], targets: [[]] }, /T = 0/],
      [{ tokens: [[1, 999]], targets: [[1, 2]] }, /"tokens"\[0\]\[1\] = 999 is not a token id/],
      [
        { tokens: [[1, 2]], targets: [[1]] },
        /"targets" is ragged|"targets" is 1×1 but "tokens" is 1×2/,
      ],
      [{ tokens: [[1, 2]], targets: [[1, 2]], q: [2] }, /"q"\[0\] must be a number in \[0, 1\]/],
      [{ targets: [[1]] }, /missing "tokens"/],
    ];
    for (const [body, msg] of cases) {
      const p = join(d, "in.json");
      writeFileSync(p, JSON.stringify(body));
      await expect(
        run("forward", "--model", dir, "--input", p, "--out", join(d, "o")),
      ).rejects.toThrow(msg);
    }
    writeFileSync(join(d, "bad.json"), "{nope");
    await expect(
      run("forward", "--model", dir, "--input", join(d, "bad.json"), "--out", join(d, "o")),
    ).rejects.toThrow(/not valid JSON/);
    await expect(
      run(
        "forward",
        "--model",
        join(d, "none"),
        "--input",
        join(d, "bad.json"),
        "--out",
        join(d, "o"),
      ),
    ).rejects.toThrow(/does not exist/);
    await expect(
      run("forward", "--model", dir, "--input", join(d, "missing.json"), "--out", join(d, "o")),
    ).rejects.toThrow(/^--input: cannot read .*missing.json: it does not exist$/);
  });
});

describe("looplm train, generate, sweep", () => {
  it("trains, resumes, continues into a gate stage and generates", async () => {
    const d = tmp();
    const runDir = join(d, "run");
    const train = ["train", ...tiny, "--layers", "1", "--loops", "2", ...quick, "--out", runDir];
    const out = await run(...train);
    expect(out).toMatch(/trained 3 steps/);
    expect(existsSync(join(runDir, "final", "model.safetensors"))).toBe(true);
    expect(JSON.parse(readFileSync(join(runDir, "vocab.json"), "utf8"))).toEqual(["a", "b", "c"]);
    expect(readFileSync(join(runDir, "log.jsonl"), "utf8").trim().split("\n")).toHaveLength(3);
    await run(...train, "--steps", "5", "--resume");
    expect(readFileSync(join(runDir, "log.jsonl"), "utf8").trim().split("\n")).toHaveLength(5);
    const g1 = join(d, "g1");
    await run(
      "train",
      ...tiny,
      "--stage",
      "gate1",
      "--from",
      join(runDir, "final"),
      ...quick,
      "--out",
      g1,
    );
    expect(JSON.parse(readFileSync(join(g1, "final", "config.json"), "utf8")).exit_gate).toBe(true);
    const gen = await run(
      "generate",
      "--model",
      join(runDir, "final"),
      "--tokens",
      "0,1,2",
      "--max-new",
      "4",
      "--temperature",
      "0",
    );
    expect(gen.trim().split(" ")).toHaveLength(4);
    expect(
      gen
        .trim()
        .split(" ")
        .every((s) => ["a", "b", "c"].includes(s)),
    ).toBe(true);
    // the run folder stands for its final/ checkpoint (as with eval), vocab.json found there
    const args = ["--tokens", "0,1,2", "--max-new", "4", "--temperature", "0"];
    expect(await run("generate", "--model", runDir, ...args)).toBe(gen);
    await expect(run("generate", "--model", runDir, "--tokens", "0,7")).rejects.toThrow(
      `--tokens: token 7 is not an id of the model's vocabulary (0..2, vocab_size in ${join(runDir, "final", "config.json")})`,
    );
    // a tokenizer with more tokens than the model's vocabulary: named, with both sizes
    const corpus = join(d, "corpus.txt");
    writeFileSync(corpus, "abcdefgh abcdefgh\n");
    const tok = join(d, "chars.json");
    await run("tokenizer", "train", "--corpus", corpus, "--kind", "char", "--out", tok);
    await expect(
      run("generate", "--model", runDir, "--prompt", "abc", "--tokenizer", tok),
    ).rejects.toThrow(
      new RegExp(
        `^--tokenizer ${tok} has \\d+ tokens but the model in ${join(runDir, "final")} has a vocabulary of 3 \\(vocab_size in config.json\\): use the tokenizer.json the model was trained with$`,
      ),
    );
    // …and one with fewer: what it cannot spell is named when the model samples it
    const wide = join(d, "wide");
    await run("train", ...tiny, "--alphabet", "8", ...quick, "--out", wide);
    const small = join(d, "small.json");
    writeFileSync(corpus, "ab ab\n");
    await run("tokenizer", "train", "--corpus", corpus, "--kind", "char", "--out", small);
    const sample = ["--max-new", "30", "--temperature", "1", "--top-k", "0", "--seed", "1"];
    await expect(
      run("generate", "--model", wide, "--prompt", "ab", "--tokenizer", small, ...sample),
    ).rejects.toThrow(
      new RegExp(
        `^the model sampled token [5-7], which --tokenizer ${small} \\(5 tokens\\) cannot decode: the model's vocabulary has 8 `,
      ),
    );
  });
  it("runs an iso-parameter sweep into a table, sweep.json and a report", async () => {
    const d = join(tmp(), "sweep");
    const out = await run(...ISO_SWEEP, ...tiny, ...quick, "--out", d);
    expect(out).toMatch(/1⊗1\s+baseline/);
    expect(out).toMatch(/1⊗2\s+looped/);
    const sweep = JSON.parse(readFileSync(join(d, "sweep.json"), "utf8"));
    expect(sweep.rows.map((r: { label: string }) => r.label)).toEqual(["1⊗1", "1⊗2"]);
    expect(existsSync(join(d, "report.html"))).toBe(true);
  });
  it("names bad values and unknown flags", async () => {
    // Inside a fresh temporary folder: a refused command must not leave its --out behind.
    const x = join(tmp(), "x");
    await expect(run("train", "--task", "chess", "--out", x)).rejects.toThrow(
      /--task must be one of mano, phop, lm, got "chess"/,
    );
    await expect(run("train", ...tiny, "--steps", "0", "--out", x)).rejects.toThrow(
      /--steps must be ≥ 1, got 0/,
    );
    await expect(run("train", ...tiny, "--lr", "abc", "--out", x)).rejects.toThrow(
      /--lr must be a number, got "abc"/,
    );
    await expect(run("train", ...tiny, "--stage", "gate2", "--out", x)).rejects.toThrow(
      /pass --from/,
    );
    await expect(run("train", ...tiny, "--backbone", "rnn", "--out", x)).rejects.toThrow(
      /--backbone must be one of/,
    );
    await expect(run("train", ...tiny, "--bogus", "--out", x)).rejects.toBeInstanceOf(
      CommanderError,
    );
    await expect(
      run("sweep", "--protocol", "iso-depth", ...tiny, "--loops", "1", "--out", x),
    ).rejects.toThrow(/--protocol must be one of iso-param, iso-flops/);
    await expect(
      run("sweep", "--protocol", "iso-param", ...tiny, "--loops", "1,x", "--out", x),
    ).rejects.toThrow(
      /^--loops: item 2 of "1,x" is "x", not a whole number ≥ 0; give comma-separated whole numbers such as 0,1,2$/,
    );
    await expect(run("generate", "--model", "x")).rejects.toThrow(/exactly one of --prompt/);
    // settings no machine holds: the memory they need, and the flag to lower, before any work
    await expect(run("train", ...tiny, "--batch", "2147483647", "--out", x)).rejects.toThrow(
      /^training this setting needs at least \d+\.\d TiB of memory \(.* for one step's activations at --batch 2147483647 × 12 tokens, .*\): lower --batch \(or --layers, --loops, the sequence length\) \(this machine has /,
    );
    await expect(
      run("train", ...tiny, "--d-model", "1048576", "--headdim", "16", "--out", x),
    ).rejects.toThrow(
      /^training this setting needs at least .* TiB of memory .*: lower --d-model or --layers/,
    );
    expect(existsSync(x)).toBe(false);
  });
});

describe("the looplm binary", () => {
  const main = fileURLToPath(new URL("./main.ts", import.meta.url));
  /** Run the real binary (from source) with `args`. */
  const looplm = (args: string[], env?: NodeJS.ProcessEnv) =>
    spawnSync(process.execPath, ["--import", "tsx", "--conditions=@loop/source", main, ...args], {
      encoding: "utf8",
      ...(env ? { env } : {}),
    });

  it("prints one line without a stack trace and exits non-zero on bad input", () => {
    const r = looplm(["forward", "--model", "/nonexistent", "--input", "x", "--out", "y"]);
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split("\n")).toEqual([
      "looplm: checkpoint folder /nonexistent does not exist",
    ]);
    const u = looplm(["train", "--task", "phop", "--out", "x", "--unknown-flag"]);
    expect(u.status).not.toBe(0);
    expect(u.stderr.trim().split("\n")).toEqual([
      "looplm: train has no option --unknown-flag; `looplm train --help` lists its options",
    ]);
    const v = looplm(["--version"]);
    expect(v.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it("sets threads up only before a command's action: a bad LOOPLM_THREADS fails a run, not --help", () => {
    const env = { ...process.env, LOOPLM_THREADS: "0" };
    const r = looplm(["forward", "--model", "/nonexistent", "--input", "x", "--out", "y"], env);
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split("\n")).toEqual([
      'looplm: LOOPLM_THREADS must be an integer ≥ 1, got "0"',
    ]);
    const h = looplm(["train", "--help"], env);
    expect(h.status).toBe(0);
    expect(h.stdout).toMatch(/Usage: looplm train/);
  });

  it("refuses LOOPLM_THREADS and worker --threads above the machine's cores, in one line", () => {
    const cores = availableParallelism();
    for (const n of ["100000", "1000000000"]) {
      const env = { ...process.env, LOOPLM_THREADS: n };
      const r = looplm(["forward", "--model", "/nonexistent", "--input", "x", "--out", "y"], env);
      expect(r.status).toBe(1);
      expect(r.stderr.trim().split("\n")).toEqual([
        `looplm: LOOPLM_THREADS ${n} is more than this machine's ${cores} core${cores === 1 ? "" : "s"}: give at most ${cores} (or leave it out to use them all)`,
      ]);
    }
    const w = looplm(["worker", "--queue", "redis://127.0.0.1:1", "--threads", "100000"]);
    expect(w.status).toBe(1);
    expect(w.stderr.trim().split("\n")).toEqual([
      `looplm: --threads 100000 is more than this machine's ${cores} core${cores === 1 ? "" : "s"}: give at most ${cores} (or leave it out to use them all)`,
    ]);
  });

  it("trains on the portable kernels, saying why in one line, when native ones cannot be built", () => {
    const dir = mkdtempSync(join(tmpdir(), "looplm-native-"));
    const r = looplm(["train", ...tiny, ...quick, "--out", join(dir, "run")], {
      ...process.env,
      CC: "false",
      LOOPLM_NATIVE_CACHE: join(dir, "cache"),
    });
    expect(r.status).toBe(0);
    // (progress lines follow on stderr)
    const lines = r.stderr.trim().split("\n");
    expect(lines.filter((l) => l.startsWith("looplm:"))).toEqual([
      "looplm: portable kernels (native ones unavailable: false failed: exit code 1)",
    ]);
    expect(lines[0]).toMatch(/^looplm: portable kernels/);
    expect(existsSync(join(dir, "run", "log.jsonl"))).toBe(true);
  });
});
