/**
 * A competing single-threaded busy process, pinned to one core with `taskset` (util-linux) when
 * it is installed: the "machine that is not idle" of the busy-machine benchmark. The benchmark
 * starts and stops it; it is also killed when this process exits, so none is left behind.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";

export interface BusyProcess {
  /** "pinned to core 1" or why it is not pinned. */
  readonly placement: string;
  stop(): Promise<void>;
}

const SPIN = "for (;;) {}";

function haveTaskset(): boolean {
  return spawnSync("taskset", ["--version"], { stdio: "ignore" }).status === 0;
}

/** Start one busy process on `core` (0-based). Resolves once it runs. */
export async function startBusyProcess(core: number): Promise<BusyProcess> {
  const pinned = haveTaskset();
  const child: ChildProcess = pinned
    ? spawn("taskset", ["-c", String(core), process.execPath, "-e", SPIN], { stdio: "ignore" })
    : spawn(process.execPath, ["-e", SPIN], { stdio: "ignore" });
  const kill = () => child.kill("SIGKILL");
  process.once("exit", kill);
  await new Promise<void>((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", reject);
  });
  // let it get going before anything is timed
  await new Promise((r) => setTimeout(r, 200));
  return {
    placement: pinned ? `pinned to core ${core}` : "not pinned (taskset not installed)",
    async stop() {
      process.off("exit", kill);
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      kill();
      await exited;
    },
  };
}
