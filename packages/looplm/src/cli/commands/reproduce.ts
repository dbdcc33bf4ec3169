import { availableParallelism } from "node:os";
import { join } from "node:path";
import { formatExitRule } from "@loop/exit-gate";
import type { Command } from "commander";
import type { Backend, ComputeBackend } from "../../backend.js";
import { checkRedis, parseQueueUrl } from "../../queue/connection.js";
import { queueSecret, SIGN_HELP } from "../../queue/job-signature.js";
import { commandBackend, needsKernels } from "../compute.js";
import { CliError, choiceOption, intFlag } from "../errors.js";
import { withInterrupts } from "../interrupt.js";
import {
  CLAIM_TEXT,
  operatingPoints,
  ruleRows,
  ruleVerdicts,
} from "../reproduce/exit-rule-claims.js";
import {
  operatingTable,
  ruleFrontierChart,
  ruleTable,
  testTable,
  verdictTable,
} from "../reproduce/exit-rules-report.js";
import { hopsMetricTable, hopsRows, hopsStepTable } from "../reproduce/gate-by-hops.js";
import { comparisonTable, gateComparisons } from "../reproduce/gate-comparisons.js";
import { gateCommands } from "../reproduce/gate-study-types.js";
import type { StudyQueue } from "../reproduce/queued-arms.js";
import { runExitRulesStudy } from "../reproduce/run-exit-rules-study.js";
import { runGateStudy } from "../reproduce/run-gate-study.js";
import { armCommand, runSweepStudy } from "../reproduce/run-sweep-study.js";
import {
  exitRulesStudy,
  gateStudy,
  isExitRulesStudy,
  isGateStudy,
  STUDY_NAMES,
  type StudyName,
  sweepStudy,
} from "../reproduce/studies.js";
import {
  claimTables,
  frontierTable,
  gateStudyCharts,
  loadNow,
  perLengthTables,
  type RunFacts,
  type StudyOutput,
  sweepStudyCharts,
  sweepStudyTables,
  verdictLines,
  writeStudyOutput,
} from "../reproduce/study-report.js";
import { removeStudyResults, studyFolders } from "../reproduce/study-results.js";
import { SCALES, type Scale } from "../reproduce/study-types.js";

interface Flags {
  seeds: number;
  scale: Scale;
  out: string;
  resume: boolean;
  overwrite: boolean;
  /** As given; absent: `defaultJobs`. */
  jobs?: number;
  queue?: string;
  secret?: string;
  backend?: Backend;
}

const CHOICES = [...STUDY_NAMES, "all"] as const;

function studyList(v: string): StudyName[] {
  const study = choiceOption("study", CHOICES)(v);
  return study === "all" ? [...STUDY_NAMES] : [study];
}

const scale = choiceOption<Scale>("--scale", SCALES);

function commandLine(study: string, f: Flags, q?: StudyQueue): string {
  const backend = f.backend ? ` --backend ${f.backend}` : "";
  const jobs = f.jobs !== undefined && f.jobs > 1 ? ` --jobs ${f.jobs}` : "";
  // (the URL as every message shows it: its password masked)
  const queue = q ? ` --queue ${q.address.display}` : "";
  return `looplm reproduce ${study} --seeds ${f.seeds} --scale ${f.scale} --out ${f.out}${jobs}${queue}${backend}`;
}

/** --queue and its companions, checked (and Redis reached) before anything is built or written. */
async function studyQueue(f: Flags): Promise<StudyQueue | undefined> {
  if (f.queue === undefined) {
    if (f.secret !== undefined)
      throw new CliError("--secret signs the jobs of --queue: give --queue redis://… too");
    return undefined;
  }
  const address = parseQueueUrl(f.queue);
  if (f.jobs !== undefined && f.jobs > 1)
    throw new CliError(
      "--jobs does not combine with --queue: the workers (their number and --concurrency) decide how many members train at once",
    );
  if (f.overwrite)
    throw new CliError(
      "--overwrite does not combine with --queue: workers resume what a run folder holds; remove the study folder or choose another --out",
    );
  const secret = queueSecret(f.secret);
  await checkRedis(address);
  return { address, secret, backend: f.backend };
}

/**
 * `--jobs` when it is not given: two sweeps at a time where the machine has two cores or more and
 * the study two sweeps or more, else one. On 2 cores two one-thread sweeps beat one two-thread
 * job at a time (benchmarks/RESULTS.md, "reproduce --jobs"); the numbers are the same either way.
 */
export function defaultJobs(sweeps: number, cores = availableParallelism()): number {
  return sweeps >= 2 && cores >= 2 ? 2 : 1;
}

async function runOne(
  name: StudyName,
  f: Flags,
  backend: ComputeBackend,
  queue: StudyQueue | undefined,
  signal: AbortSignal,
): Promise<void> {
  const outDir = join(f.out, name);
  const log = (l: string) => process.stderr.write(`${l}\n`);
  const t0 = performance.now();
  const loadStart = loadNow();
  const opts = {
    outDir,
    seeds: f.seeds,
    backend,
    resume: f.resume,
    overwrite: f.overwrite,
    queue,
    childArgs: f.backend ? ["--backend", f.backend] : [],
    log,
    signal,
  };
  const facts = (title: string, notes: string): RunFacts => ({
    study: name,
    title,
    notes,
    scale: f.scale,
    seeds: f.seeds,
    command: commandLine(name, f, queue),
    wallSeconds: Math.round((performance.now() - t0) / 1000),
    loadStart,
    loadEnd: loadNow(),
  });
  let out: StudyOutput;
  if (isExitRulesStudy(name)) {
    const def = exitRulesStudy(name, f.scale);
    const r = await runExitRulesStudy(def, opts);
    const metric = r.perSeed[0]!.metric;
    const R = r.perSeed[0]!.perStep.length;
    const rows = ruleRows(r.perSeed);
    const verdicts = ruleVerdicts(r.perSeed);
    const ops = operatingPoints(rows, metric, R);
    out = {
      facts: facts(def.title, def.notes),
      table: ruleTable(rows, r.perSeed, metric),
      extra: [
        {
          title:
            "Each rule on each claim (paired per seed; p values Holm-adjusted over the rule's thresholds)",
          ...verdictTable(verdicts, metric),
        },
        { title: "Every threshold's test", ...testTable(verdicts, metric) },
        {
          title: `Operating points (each rule's cheapest threshold within 1 point of fixed:${R}, else its best) and decode time per token (batch 1)`,
          ...operatingTable(ops, rows, metric, R),
        },
      ],
      verdicts: verdicts.map((v) => ({
        text: `${v.kind}: ${CLAIM_TEXT[v.claim]}`,
        line: v.reason ? `${v.verdict} (${v.reason})` : v.verdict,
      })),
      charts: new Map([["frontier", ruleFrontierChart(rows, metric)]]),
      data: { rows, verdicts, operating_points: ops.map((o) => o.rule), per_seed: r.perSeed },
      commands: Array.from({ length: f.seeds }, (_, k) => [
        ...gateCommands(def.source, k + 1, r.sourceDir),
        `looplm eval --model ${join(r.sourceDir, `seed-${k + 1}`, "gate2", "final")} --count ${def.source.evalCount} --exit ${def.rules.map(formatExitRule).join(",")}`,
      ]).flat(),
      seedMachines: r.machines,
    };
  } else if (isGateStudy(name)) {
    const def = gateStudy(name, f.scale);
    if (queue || (f.jobs ?? 1) > 1)
      log(
        `${name}: its stages build on each other (pretrain → gate1 → gate2), so they train in this process, one seed at a time (${queue ? "not on the queue" : "--jobs is ignored"})`,
      );
    const r = await runGateStudy(def, opts);
    const metric = r.perSeed[0]!.metric;
    const comparisons = gateComparisons(r.perSeed);
    const hops = def.byHops ? hopsRows(r.perSeed) : null;
    const both = (t: (md: boolean) => string) => ({ text: t(false), markdown: t(true) });
    out = {
      facts: facts(def.title, def.notes),
      table: both((md) => frontierTable(r.frontier, metric, md)),
      extra: [
        {
          title:
            "The gate against fixed exit at equal depth, at ⌈d⌉ and at R (paired per seed; p values Holm-adjusted over the q values of each comparison)",
          ...both((md) => comparisonTable(comparisons, metric, md)),
        },
        ...(hops
          ? [
              {
                title: "Accuracy by difficulty p (mean ± sd over seeds)",
                ...both((md) => hopsMetricTable(hops, metric, md)),
              },
              {
                title: "The gate's mean exit step by difficulty p",
                ...both((md) => hopsStepTable(hops, md)),
              },
            ]
          : []),
      ],
      verdicts: [
        {
          text: `at a comparable mean depth the gate beats fixed exit (paper: ${def.paper})`,
          line: r.verdict.line,
        },
      ],
      charts: gateStudyCharts(r.frontier, metric),
      data: {
        frontier: r.frontier,
        per_seed: r.perSeed,
        gate_points: r.verdict.points,
        comparisons,
        ...(hops ? { by_hops: hops } : {}),
      },
      commands: Array.from({ length: f.seeds }, (_, k) => gateCommands(def, k + 1, outDir)).flat(),
      seedMachines: r.machines,
    };
  } else {
    const def = sweepStudy(name, f.scale);
    const jobs = f.jobs ?? (queue ? 1 : defaultJobs(def.arms.length * f.seeds));
    const r = await runSweepStudy(def, { ...opts, jobs });
    out = {
      facts: facts(def.title, def.notes),
      table: sweepStudyTables(r.rows, def.arms),
      perLength: perLengthTables(r.rows, def.arms),
      claims: claimTables(r.verdicts),
      verdicts: r.verdicts,
      charts: sweepStudyCharts(r.rows, r.verdicts, def.depthChart === true),
      data: r.rows,
      commands: Array.from({ length: f.seeds }, (_, k) =>
        def.arms.map((a) => armCommand(a, k + 1, outDir)),
      ).flat(),
      seedMachines: r.machines,
    };
  }
  const files = await writeStudyOutput(outDir, out);
  // the tables the study has, then the verdicts (as results.md shows them)
  const printed = [
    out.table.text,
    out.perLength?.text,
    ...(out.extra ?? []).map((e) => `${e.title}:\n${e.text}`),
    out.claims?.text,
    verdictLines(out.verdicts),
  ]
    .filter((t) => t !== undefined)
    .join("\n\n");
  const minutes = ((performance.now() - t0) / 60000).toFixed(1);
  process.stdout.write(
    `\nlooplm reproduce ${name} (${f.scale} scale, ${f.seeds} seed${f.seeds === 1 ? "" : "s"}):\n${printed}\n\n` +
      `wrote ${files.join(", ")}\ntook ${minutes} min\n`,
  );
}

export async function runReproduce(study: string, f: Flags, cmd: Command): Promise<void> {
  const backend = commandBackend(cmd);
  const names = studyList(study);
  if (f.resume && f.overwrite)
    throw new CliError("--resume and --overwrite exclude each other: choose one");
  const queue = await studyQueue(f);
  // Once the flags are checked, before anything is read or trained: every study's old results,
  // seed records first.
  if (f.overwrite)
    for (const name of names) {
      const outDir = join(f.out, name);
      removeStudyResults(outDir, name, studyFolders(outDir, name));
    }
  // SIGINT/SIGTERM: the member in training finishes its step and checkpoints, every lock is
  // released, and the command says how to continue (exit 130/143), as `looplm train` does.
  // With --queue this process stops watching; the workers go on training the jobs.
  const secret = queue && f.secret !== undefined ? " --secret <the same secret>" : "";
  const hint = `${commandLine(study, f, queue)} --resume${secret}`;
  await withInterrupts(hint, async (signal) => {
    for (const name of names) await runOne(name, f, backend, queue, signal);
  });
}

export function registerReproduce(program: Command): void {
  needsKernels(program.command("reproduce"))
    .description(
      "Reproduce a study of the paper over several seeds: results table (mean ± sd, paper's number beside), claim verdicts, report",
    )
    .argument("<study>", `study: ${CHOICES.join(" | ")}`)
    .addOption(
      intFlag(
        "--seeds <K>",
        "seeds per model (1..K); a claim needs ≥ 5 for a verdict (95 % paired t-interval), fewer reads inconclusive",
        1,
        5,
      ),
    )
    .option(
      "--scale <s>",
      `settings: ${SCALES.join(" | ")} (cpu: sized for 2 cores; the measured times under load are in docs/results.md, about 36 minutes (gate-mixed) to about 3 hours (mano, ablations) per study of 5 seeds, and depth and backbone-budget need several sessions (--resume); paper: the paper's sizes)`,
      scale,
      "cpu" as Scale,
    )
    .option("--out <dir>", "folder of the study folders", "runs/reproduce")
    .option("--resume", "keep what already finished (members, stages, evaluations)", false)
    .option(
      "--overwrite",
      "replace the study's runs already in --out (its old results are removed first)",
      false,
    )
    .addOption(
      intFlag(
        "--jobs <N>",
        "sweep studies: train N (arm, seed) sweeps at once, each a `looplm sweep` process with the machine's threads split between them (the same numbers as one job; default: 2 where the machine has 2 cores or more and the study 2 sweeps or more, else 1; not with --queue)",
        1,
      ),
    )
    .option(
      "--queue <url>",
      "train the sweep studies' members on `looplm worker`s through Redis, redis://host:port[/db], as `sweep --queue` does (the same numbers; a repeated command continues; exit-gate trains here); --out must be on a filesystem every worker mounts at the same path (docs/distributed.md)",
    )
    .option("--secret <s>", SIGN_HELP)
    .addHelpText(
      "after",
      `
Examples:
  looplm reproduce phop                    # 5 seeds at cpu scale into runs/reproduce/phop
  looplm reproduce all --out runs/repro
  looplm reproduce lm --jobs 1             # one sweep at a time, with all the machine's threads
  looplm reproduce mano --scale paper --resume
  looplm reproduce phop --out /shared/runs/repro --queue redis://10.0.0.5:6379
                                           # every member of every seed on the queue; on each
                                           # machine: looplm worker --queue redis://10.0.0.5:6379

--jobs N trains N sweeps at once on this machine; --queue spreads the members over any number of
\`looplm worker\` processes on any machines (Ctrl-C stops watching; the workers go on, and the same
command picks the jobs up where they are).`,
    )
    .action(runReproduce);
}
