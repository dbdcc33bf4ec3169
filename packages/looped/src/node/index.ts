export {
  type LoadCheckpointOptions,
  loadCheckpoint,
  readModelJson,
  saveCheckpoint,
  saveHfCheckpoint,
} from "./checkpoint-files.js";
