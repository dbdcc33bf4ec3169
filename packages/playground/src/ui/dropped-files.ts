/**
 * Files from a drop (folders walked through the File System entries API) or from a file input
 * (with `webkitdirectory`, each file carries its path in the folder).
 */
import type { DroppedFile } from "../checkpoint-pick.js";

function fileOf(entry: FileSystemFileEntry): Promise<File> {
  return new Promise((resolve, reject) => entry.file(resolve, reject));
}

function readAll(dir: FileSystemDirectoryEntry): Promise<FileSystemEntry[]> {
  const reader = dir.createReader();
  const out: FileSystemEntry[] = [];
  return new Promise((resolve, reject) => {
    // readEntries hands out a folder in batches until it returns an empty one
    const next = () =>
      reader.readEntries((batch) => {
        if (batch.length === 0) resolve(out);
        else {
          out.push(...batch);
          next();
        }
      }, reject);
    next();
  });
}

async function walk(entry: FileSystemEntry, prefix: string, out: DroppedFile<File>[]) {
  const path = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
  if (entry.isFile) out.push({ path, file: await fileOf(entry as FileSystemFileEntry) });
  else if (entry.isDirectory) {
    for (const e of await readAll(entry as FileSystemDirectoryEntry)) await walk(e, path, out);
  }
}

export async function droppedFiles(dt: DataTransfer): Promise<DroppedFile<File>[]> {
  const entries = Array.from(dt.items)
    .map((it) => (it.kind === "file" ? it.webkitGetAsEntry() : null))
    .filter((e): e is FileSystemEntry => e !== null);
  if (entries.length === 0) return Array.from(dt.files).map((file) => ({ path: file.name, file }));
  const out: DroppedFile<File>[] = [];
  for (const e of entries) await walk(e, "", out);
  return out;
}

export function inputFiles(list: FileList): DroppedFile<File>[] {
  return Array.from(list).map((file) => ({ path: file.webkitRelativePath || file.name, file }));
}
