import { existsSync, readFileSync, statSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { dirname, join } from 'node:path';
import ts from 'typescript';

/**
 * What a TypeScript or JavaScript file imports, read as TypeScript reads it (comments and strings
 * are not imports): `import`, `import type`, `export … from`, `import()` and `require()`, and
 * `require.resolve()` beside them, which finds a package's files without loading it.
 */
export function importsOf(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  const { importedFiles } = ts.preProcessFile(source, true, true);
  const resolved = [...source.matchAll(/require\.resolve\(\s*['"]([^'"]+)['"]/g)].map((match) => match[1] ?? '');
  return [...importedFiles.map((imported) => imported.fileName), ...resolved];
}

export function isRelative(specifier: string): boolean {
  return specifier.startsWith('./') || specifier.startsWith('../');
}

/** What a relative import in `from` names, as Node and TypeScript find it; undefined when nothing is there. */
export function resolveRelative(from: string, specifier: string): string | undefined {
  const base = join(dirname(from), specifier);
  return [base, `${base}.ts`, `${base}.js`, `${base}.cjs`, `${base}.mjs`, join(base, 'index.ts')].find(
    (candidate) => existsSync(candidate) && statSync(candidate).isFile(),
  );
}

/**
 * The npm package a bare import names (`@scope/name` of `@scope/name/sub`, `name` of `name/sub`),
 * or undefined for Node's own modules.
 */
export function packageOf(specifier: string): string | undefined {
  if (isBuiltin(specifier)) return undefined;
  const parts = specifier.split('/');
  return (specifier.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}

/** The files `start` imports, itself included, and theirs, to the end: each relative import resolved. */
export function importClosure(start: string): Set<string> {
  const seen = new Set<string>();
  const pending = [start];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    if (!/\.(?:ts|js|cjs|mjs)$/.test(file)) continue;
    for (const specifier of importsOf(file).filter(isRelative)) {
      const imported = resolveRelative(file, specifier);
      if (imported !== undefined) pending.push(imported);
    }
  }
  return seen;
}
