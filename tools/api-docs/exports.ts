// Which exports of the packages' public entry points lack a doc comment on their own declaration,
// and which files carry a file-top `/** … */` comment that a bundled `.d.ts` would hand to
// whatever declaration comes first (the comment leads an import, which the bundler drops).
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

/** One public entry point: a package's export path and its source file. */
export interface Entry {
  /** The import specifier, e.g. `@loop/tensor/node`. */
  specifier: string;
  /** The absolute path of the entry's TypeScript source. */
  file: string;
}

/** One missing or misplaced doc comment. */
export interface DocProblem {
  /** File relative to the repository root. */
  file: string;
  /** 1-based line of the declaration or comment. */
  line: number;
  message: string;
}

/** Every public (non-private) package's entry points, read from the `@loop/source` export condition. */
export function packageEntries(root: string): Entry[] {
  const entries: Entry[] = [];
  for (const dir of readdirSync(join(root, "packages")).sort()) {
    const manifest = JSON.parse(
      readFileSync(join(root, "packages", dir, "package.json"), "utf8"),
    ) as {
      name: string;
      private?: boolean;
      exports?: Record<string, string | Record<string, string>>;
    };
    if (manifest.private) continue;
    for (const [sub, target] of Object.entries(manifest.exports ?? {})) {
      const src = typeof target === "object" ? target["@loop/source"] : undefined;
      if (!src) continue;
      entries.push({
        specifier: sub === "." ? manifest.name : `${manifest.name}/${sub.slice(2)}`,
        file: join(root, "packages", dir, src),
      });
    }
  }
  return entries;
}

function hasDoc(decl: ts.Declaration): boolean {
  // A variable's JSDoc sits on its statement; getJSDocCommentsAndTags walks up to it.
  return ts.getJSDocCommentsAndTags(decl).some((d) => {
    if (!ts.isJSDoc(d)) return false;
    const text = ts.getTextOfJSDocComment(d.comment)?.trim() ?? "";
    return text.length > 0 || (d.tags?.length ?? 0) > 0;
  });
}

/**
 * The declarations a symbol documents: a namespace re-export (`export * as x`) needs none, nor
 * does a module augmentation (`declare module "…" { interface X … }`), which adds members to a
 * declaration documented where it is declared.
 */
function ownDeclarations(symbol: ts.Symbol): ts.Declaration[] {
  return (symbol.declarations ?? []).filter(
    (d) =>
      !ts.isSourceFile(d) &&
      !ts.isModuleDeclaration(d) &&
      !ts.isNamespaceExport(d) &&
      !isInAugmentation(d),
  );
}

/**
 * A class's public members (methods, accessors, fields; not the constructor, not `private`,
 * `protected` or `#` members) with no doc comment of their own nor one they inherit from the
 * interface or base class member they implement (TypeDoc shows that one). An accessor pair or an
 * overloaded method needs the comment on one of its declarations.
 */
function undocumentedMembers(cls: ts.ClassDeclaration, checker: ts.TypeChecker): ts.Declaration[] {
  const out: ts.Declaration[] = [];
  const seen = new Set<ts.Symbol>();
  for (const member of cls.members) {
    if (
      !(
        ts.isMethodDeclaration(member) ||
        ts.isPropertyDeclaration(member) ||
        ts.isGetAccessorDeclaration(member) ||
        ts.isSetAccessorDeclaration(member)
      )
    )
      continue;
    if (ts.isPrivateIdentifier(member.name)) continue;
    const flags = ts.getCombinedModifierFlags(member);
    if (flags & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected)) continue;
    const symbol = checker.getSymbolAtLocation(member.name);
    if (!symbol || seen.has(symbol)) continue;
    seen.add(symbol);
    const decls = symbol.declarations ?? [member];
    if (decls.some(hasDoc)) continue;
    if (ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim()) continue;
    out.push(member);
  }
  return out;
}

function memberName(member: ts.Declaration): string {
  const name = ts.getNameOfDeclaration(member);
  return name ? name.getText() : "?";
}

function isInAugmentation(node: ts.Node): boolean {
  for (let p = node.parent; p; p = p.parent)
    if (ts.isModuleDeclaration(p) && ts.isStringLiteral(p.name)) return true;
  return false;
}

function lineOf(node: ts.Node): number {
  const sf = node.getSourceFile();
  return sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
}

/**
 * Exports of `entries` without a doc comment on their own declaration (each reported once, at
 * its declaration, naming the entries that export it), then file-top JSDoc comments that lead an
 * import in any file those entries reach inside the packages.
 */
export function checkExportDocs(root: string, entries = packageEntries(root)): DocProblem[] {
  const config = ts.readConfigFile(join(root, "tsconfig.json"), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
  const program = ts.createProgram(
    entries.map((e) => e.file),
    { ...parsed.options, noEmit: true },
  );
  const checker = program.getTypeChecker();
  const missing = new Map<ts.Declaration, { name: string; from: string[] }>();
  for (const entry of entries) {
    const sf = program.getSourceFile(entry.file);
    const moduleSymbol = sf && checker.getSymbolAtLocation(sf);
    if (!moduleSymbol) throw new Error(`cannot read the exports of ${entry.file}`);
    for (const exported of checker.getExportsOfModule(moduleSymbol)) {
      const symbol =
        exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
      for (const decl of ownDeclarations(symbol)) {
        const undocumented: [ts.Declaration, string][] = hasDoc(decl)
          ? []
          : [[decl, `export "${exported.getName()}"`]];
        if (ts.isClassDeclaration(decl))
          for (const member of undocumentedMembers(decl, checker))
            undocumented.push([member, `member "${exported.getName()}.${memberName(member)}"`]);
        for (const [d, name] of undocumented) {
          const seen = missing.get(d);
          if (seen) seen.from.push(entry.specifier);
          else missing.set(d, { name, from: [entry.specifier] });
        }
      }
    }
  }
  const problems: DocProblem[] = [];
  for (const [decl, { name, from }] of missing)
    problems.push({
      file: relative(root, decl.getSourceFile().fileName),
      line: lineOf(decl),
      message: `${name} (${[...new Set(from)].join(", ")}) has no doc comment on its declaration`,
    });
  const packages = join(root, "packages");
  for (const sf of program.getSourceFiles()) {
    if (!sf.fileName.startsWith(packages) || sf.isDeclarationFile) continue;
    const problem = fileTopJsDoc(sf);
    if (problem)
      problems.push({
        file: relative(root, sf.fileName),
        line: sf.getLineAndCharacterOfPosition(problem.pos).line + 1,
        message: problem.message,
      });
  }
  return problems.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
}

/**
 * A file's opening `/** … *\/` comment when it is not the first declaration's own doc: it leads
 * an import (a bundled `.d.ts` drops the import and moves the comment onto the next declaration)
 * or a blank line separates it from the declaration below (it describes the file, yet tools
 * attach it to that declaration).
 */
export function fileTopJsDoc(sf: ts.SourceFile): { pos: number; message: string } | undefined {
  const first = sf.statements[0];
  if (!first) return undefined;
  const comments = ts.getLeadingCommentRanges(sf.text, first.pos) ?? [];
  const jsdoc = comments.find((c) => sf.text.startsWith("/**", c.pos));
  if (!jsdoc) return undefined;
  const fix = "make it a /* or // comment and document each export on its own declaration";
  if (ts.isImportDeclaration(first) || ts.isExportDeclaration(first))
    return {
      pos: jsdoc.pos,
      message: `a file-top /** comment leads an import: a bundled .d.ts moves it onto the first declaration (${fix})`,
    };
  const last = comments[comments.length - 1]!;
  const between = sf.text.slice(jsdoc.end, last === jsdoc ? first.getStart(sf) : last.pos);
  if (jsdoc.pos === comments[0]!.pos && /\n[ \t]*\n/.test(between))
    return {
      pos: jsdoc.pos,
      message: `a file-top /** comment is separated from the first declaration by a blank line, yet tools attach it to that declaration (${fix})`,
    };
  return undefined;
}
