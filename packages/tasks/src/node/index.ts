export { readCorpus, SOTU, sotuDataDir } from "./corpus-files.js";
export {
  type CorpusOptions,
  corpusTokenizer,
  loadCorpusSplit,
  loadTextTask,
  type TextTaskOptions,
  type TokenizerOptions,
} from "./text-task.js";
export { readTokenizerFile, writeTokenizerFile } from "./tokenizer-file.js";
