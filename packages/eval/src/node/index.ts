export { type CorpusClozeOptions, corpusClozeItems } from "./cloze-files.js";
export { readMcFile, readPiqaFiles, writeEvalFile } from "./data-files.js";
export { escapeHtml, htmlPage, type Section } from "./html-page.js";
export {
  folderKind,
  type RunFolder,
  readEvalFile,
  readRunFolder,
  readSweepFolder,
  type SweepFolder,
} from "./read-folders.js";
export { renderChartSvg } from "./render-svg.js";
export { renderRunReport, runSections } from "./run-report.js";
export { renderSweepReport } from "./sweep-report.js";
