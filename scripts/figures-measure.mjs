// The measures scripts/figures.mjs prints, on source files (no process started, nothing installed): lines,
// the runtime's import graph (circles, folders importing each other), family branches, long functions.
// `ts` is the TypeScript module to parse with (the project's own, when it is installed).
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

const relPosix = (from, to) => relative(from, to).split(sep).join("/");

/** Every .ts file below a folder (not .d.ts), sorted. */
export function listTs(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listTs(path));
    else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) out.push(path);
  }
  return out.sort();
}

/** Lines as wc -l counts them (newline characters). */
export function fileLines(file) {
  const text = readFileSync(file, "utf8");
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/** Whether an import or export declaration brings in a value at run time (not only types). */
function isValueEdge(ts, node) {
  if (ts.isImportDeclaration(node)) {
    const clause = node.importClause;
    if (!clause) return true; // import "./x.js": a side effect
    if (clause.isTypeOnly) return false;
    if (clause.name) return true;
    const bindings = clause.namedBindings;
    if (!bindings) return false;
    if (ts.isNamespaceImport(bindings)) return true;
    return bindings.elements.some((e) => !e.isTypeOnly);
  }
  if (node.isTypeOnly) return false;
  const clause = node.exportClause;
  if (!clause || ts.isNamespaceExport(clause)) return true; // export * from
  return clause.elements.some((e) => !e.isTypeOnly);
}

/**
 * The imports between the runtime's own files: static value imports (the measure), or with `all` every
 * import, `import type` and lazy `import()` included (what the issue's first count took).
 */
function importEdges(ts, files, all) {
  const known = new Set(files);
  const edges = new Map(files.map((f) => [f, new Set()]));
  for (const file of files) {
    const source = ts.createSourceFile(
      file,
      readFileSync(file, "utf8"),
      ts.ScriptTarget.Latest,
      true,
    );
    const add = (spec) => {
      if (!spec.startsWith(".")) return;
      const target = resolve(dirname(file), spec).replace(/\.js$/, ".ts");
      if (known.has(target)) edges.get(file).add(target);
    };
    const visit = (node) => {
      if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
        if (ts.isStringLiteral(node.moduleSpecifier) && (all || isValueEdge(ts, node)))
          add(node.moduleSpecifier.text);
      } else if (
        all &&
        ts.isCallExpression(node) &&
        node.expression.kind === ts.SyntaxKind.ImportKeyword
      ) {
        const [spec] = node.arguments;
        if (spec && ts.isStringLiteral(spec)) add(spec.text);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return edges;
}

/**
 * The runtime's static value imports between its own files: the circles (strongly connected groups of more
 * than one file, or a file importing itself) and the folder pairs importing each other both ways (`.`, the
 * top level, counted apart: app.ts composes every folder and every folder uses errors.ts and types.ts).
 */
export function importGraph(ts, files, base) {
  const edges = importEdges(ts, files, false);
  const allEdges = importEdges(ts, files, true);
  const circlesOf = (graph) =>
    stronglyConnected(files, graph).filter(
      (group) => group.length > 1 || graph.get(group[0]).has(group[0]),
    );
  const withTypesAndLazy = circlesOf(allEdges).length;
  const circles = circlesOf(edges).map((group) => group.map((f) => relPosix(base, f)).sort());
  const folderOf = (f) => dirname(relPosix(base, f));
  const folderEdges = new Set();
  for (const [from, tos] of edges) {
    for (const to of tos)
      if (folderOf(from) !== folderOf(to)) folderEdges.add(`${folderOf(from)}\0${folderOf(to)}`);
  }
  const folderPairs = [];
  for (const edge of folderEdges) {
    const [a, b] = edge.split("\0");
    if (a < b && folderEdges.has(`${b}\0${a}`)) folderPairs.push([a, b]);
  }
  folderPairs.sort();
  const subfolderPairs = folderPairs.filter(([a]) => a !== ".");
  return { circles, withTypesAndLazy, folderPairs, subfolderPairs };
}

/** Tarjan's strongly connected components. */
function stronglyConnected(nodes, edges) {
  let index = 0;
  const indexOf = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const groups = [];
  const visit = (v) => {
    indexOf.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v)) {
      if (!indexOf.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), indexOf.get(w)));
    }
    if (low.get(v) === indexOf.get(v)) {
      const group = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      groups.push(group);
    }
  };
  for (const v of nodes) if (!indexOf.has(v)) visit(v);
  return groups;
}

/** Code choosing by network family: the issue's patterns. */
const FAMILY_BRANCH =
  /\bisSolana\(|\bisEvm\(|family\s*[!=]==?\s*["'](svm|evm|solana)["']|["'](svm|evm|solana)["']\s*[!=]==?\s*[\w.]*family\b|startsWith\(\s*["'](solana|eip155)/;
/** Where family branches belong: the family folders and the registry naming them. */
const FAMILY_HOMES = [
  /^payments\/evm\//,
  /^payments\/svm\//,
  /^features\.ts$/,
  /^payments\/famil[a-z-]*\.ts$/,
];

/** Every line of the runtime outside the family folders that branches on a network family. */
export function branchHits(files, base) {
  const hits = [];
  for (const file of files) {
    const rel = relPosix(base, file);
    if (FAMILY_HOMES.some((re) => re.test(rel))) continue;
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((text, i) => {
        const code = text.replace(/\/\/.*$/, "");
        if (!/^\s*(\*|\/\*)/.test(text) && FAMILY_BRANCH.test(code))
          hits.push({ file: rel, line: i + 1, text: text.trim() });
      });
  }
  return hits;
}

/** The functions of a file whose own lines (nested functions' lines taken out) exceed `limit`. */
export function functionsOver(ts, file, limit) {
  const source = ts.createSourceFile(
    file,
    readFileSync(file, "utf8"),
    ts.ScriptTarget.Latest,
    true,
  );
  const lineOf = (pos) => source.getLineAndCharacterOfPosition(pos).line;
  const span = (node) => lineOf(node.getEnd()) - lineOf(node.getStart(source)) + 1;
  const isFunction = (node) =>
    ts.isFunctionDeclaration(node) ||
    ts.isFunctionExpression(node) ||
    ts.isArrowFunction(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node);
  const nameOf = (node) => {
    if (node.name && ts.isIdentifier(node.name)) return node.name.text;
    if (node.name) return node.name.getText(source);
    const parent = node.parent;
    if (
      parent &&
      (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) &&
      parent.name
    ) {
      return parent.name.getText(source);
    }
    return ts.isConstructorDeclaration(node) ? "constructor" : "<anonymous>";
  };
  const found = [];
  // Returns the lines of the outermost functions within `node` (for the parent to take out of its own).
  const walk = (node) => {
    if (isFunction(node)) {
      let nested = 0;
      ts.forEachChild(node, (child) => {
        nested += walk(child);
      });
      const total = span(node);
      const own = total - nested;
      if (own > limit)
        found.push({ name: nameOf(node), line: lineOf(node.getStart(source)) + 1, own, total });
      return total;
    }
    let inside = 0;
    ts.forEachChild(node, (child) => {
      inside += walk(child);
    });
    return inside;
  };
  walk(source);
  return found;
}
