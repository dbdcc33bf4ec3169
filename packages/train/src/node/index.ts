export { type ProgressOptions, type ProgressReporter, progressReporter } from "./progress.js";
export { type EvalRecord, type RunOptions, type RunResult, runTraining } from "./run.js";
export {
  latestCheckpoint,
  loadTrainingCheckpoint,
  saveTrainingCheckpoint,
  stepDirName,
  writeJsonFile,
} from "./run-files.js";
