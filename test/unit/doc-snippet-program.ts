// Turns the ```ts blocks of one markdown document into one TypeScript module: the imports of every
// block hoisted and merged (two blocks may import the same name), then the blocks' bodies in order,
// so a later block can use what an earlier one declared. Keeps a map from module lines back to
// markdown lines for error messages.
import ts from 'typescript';

export interface DocBlock {
  /** 1-based line of the block's first code line in the markdown file. */
  line: number;
  code: string;
}

export interface DocProgram {
  doc: string;
  blocks: DocBlock[];
  /** The module text. */
  code: string;
  /** The markdown line (1-based) for a 0-based line of `code`; 0 for the prelude. */
  markdownLine(moduleLine: number): number;
}

const FENCE = /^```ts[^\n]*\n([\s\S]*?)^```/gm;

interface ImportEntry {
  defaultName?: string;
  namespace?: string;
  /** "name" or "name as alias", value imports. */
  values: Set<string>;
  /** The same, type-only imports. */
  types: Set<string>;
}

function collectImports(block: DocBlock, imports: Map<string, ImportEntry>): string {
  const source = ts.createSourceFile('block.ts', block.code, ts.ScriptTarget.Latest, true);
  const lines = block.code.split('\n');
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const from = statement.moduleSpecifier.text;
    const entry = imports.get(from) ?? { values: new Set<string>(), types: new Set<string>() };
    imports.set(from, entry);
    const clause = statement.importClause;
    const typeOnly = clause?.isTypeOnly === true;
    if (clause?.name) entry.defaultName = clause.name.text;
    const bindings = clause?.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings)) entry.namespace = bindings.name.text;
    if (bindings && ts.isNamedImports(bindings)) {
      for (const element of bindings.elements) {
        const name = element.propertyName
          ? `${element.propertyName.getText(source)} as ${element.name.text}`
          : element.name.text;
        (typeOnly || element.isTypeOnly ? entry.types : entry.values).add(name);
      }
    }
    // Blank the statement's lines so the body keeps its line numbers.
    const first = source.getLineAndCharacterOfPosition(statement.getStart(source)).line;
    const last = source.getLineAndCharacterOfPosition(statement.getEnd()).line;
    for (let line = first; line <= last; line++) lines[line] = '';
  }
  return lines.join('\n');
}

function importLines(imports: Map<string, ImportEntry>): string[] {
  const out: string[] = [];
  for (const [from, entry] of imports) {
    const named = [
      ...[...entry.types].filter((name) => !entry.values.has(name)).map((name) => `type ${name}`),
      ...entry.values,
    ];
    const head = [entry.defaultName, named.length > 0 ? `{ ${named.join(', ')} }` : undefined]
      .filter((part) => part !== undefined)
      .join(', ');
    if (entry.namespace) out.push(`import * as ${entry.namespace} from '${from}';`);
    if (head !== '') out.push(`import ${head} from '${from}';`);
  }
  return out;
}

/**
 * A block of interface and type declarations only shows a shape (often one the packages export under
 * the same name): it gets its own namespace so it neither clashes with nor stands in for the import.
 */
function isShapeBlock(code: string): boolean {
  const source = ts.createSourceFile('block.ts', code, ts.ScriptTarget.Latest, true);
  return (
    source.statements.length > 0 &&
    source.statements.every(
      (statement) => ts.isInterfaceDeclaration(statement) || ts.isTypeAliasDeclaration(statement),
    )
  );
}

/** Names a block declares at its top level (variables, destructured names, functions, classes, enums). */
function declaredNames(code: string): string[] {
  const source = ts.createSourceFile('block.ts', code, ts.ScriptTarget.Latest, true);
  const names: string[] = [];
  const bind = (name: ts.BindingName) => {
    if (ts.isIdentifier(name)) names.push(name.text);
    else for (const element of name.elements) if (!ts.isOmittedExpression(element)) bind(element.name);
  };
  for (const statement of source.statements) {
    if (ts.isVariableStatement(statement)) {
      for (const declaration of statement.declarationList.declarations) bind(declaration.name);
    } else if (
      (ts.isFunctionDeclaration(statement) ||
        ts.isClassDeclaration(statement) ||
        ts.isEnumDeclaration(statement)) &&
      statement.name !== undefined
    ) {
      names.push(statement.name.text);
    }
  }
  return names;
}

export function extractDocProgram(doc: string, markdown: string, prelude: string): DocProgram {
  const blocks: DocBlock[] = [...markdown.matchAll(FENCE)].map((match) => ({
    line: markdown.slice(0, match.index).split('\n').length + 1,
    code: match[1] as string,
  }));
  const imports = new Map<string, ImportEntry>();
  // The prelude's imports merge with the blocks' (a prelude may import a type a block imports too).
  const preludeBody = collectImports({ line: 0, code: prelude }, imports);
  const bodies = blocks.map((block) => collectImports(block, imports));
  const lineMap: number[] = [];
  const out: string[] = [];
  const push = (text: string, markdownLine: number) => {
    for (const line of text.split('\n')) {
      out.push(line);
      lineMap.push(markdownLine);
    }
  };
  push(`// Generated from ${doc} by test/unit/doc-snippets.test.ts.`, 0);
  for (const line of importLines(imports)) push(line, blocks[0]?.line ?? 0);
  if (preludeBody.trim() !== '') push(preludeBody.trim(), 0);
  // A block that declares a name an earlier block declared again shows the same thing another way
  // (a second `client`): it gets a scope of its own instead of clashing; its names stay inside.
  const declared = new Set<string>();
  for (const [index, body] of bodies.entries()) {
    const block = blocks[index] as DocBlock;
    const shape = isShapeBlock(block.code);
    const names = shape ? [] : declaredNames(body);
    const scoped = names.some((name) => declared.has(name));
    if (!scoped) for (const name of names) declared.add(name);
    if (shape) push(`namespace Shape${index + 1} {`, block.line);
    if (scoped) push('{', block.line);
    body
      .trimEnd()
      .split('\n')
      .forEach((line, offset) => {
        push(line, block.line + offset);
      });
    if (shape || scoped) push('}', block.line);
  }
  push('export {};', 0);
  return {
    doc,
    blocks,
    code: `${out.join('\n')}\n`,
    markdownLine: (moduleLine) => lineMap[moduleLine] ?? 0,
  };
}
