export { type ProgressOptions, type ProgressReporter, progressReporter } from "./progress.js";
export {
  type EvalRecord,
  RunInterrupted,
  type RunOptions,
  type RunResult,
  runTraining,
} from "./run.js";
export {
  latestCheckpoint,
  loadTrainingCheckpoint,
  saveTrainingCheckpoint,
  stepDirName,
  writeJsonFile,
} from "./run-files.js";
export {
  canonicalJson,
  checkResumeMatches,
  holdsRun,
  openRunFolder,
  RESUME_CHANGES,
  type ResumeChange,
  type RunFolder,
  type RunFolderMode,
  type RunInfo,
  readRunInfo,
  resumeTrainOptions,
} from "./run-folder.js";
export { LOCK_FILE, lockRunFolder, runFolderHolder } from "./run-lock.js";
export { readLog as readRunLog } from "./run-log.js";
