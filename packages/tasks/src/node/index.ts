export { readCorpus, SOTU, sotuDataDir } from "./corpus-files.js";
export { loadTextTask, type TextTaskOptions } from "./text-task.js";
export { readTokenizerFile, writeTokenizerFile } from "./tokenizer-file.js";
