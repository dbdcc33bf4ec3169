export { loadCheckpoint, saveCheckpoint } from "./checkpoint-files.js";
