import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { codeSpans, proseLines, type Broken, type Source } from './doc-links';
import { codeOf, linesOfCode, SCRIPT } from './source-code';

/**
 * A figure in the docs is generated, the code's own, or measured and traced to bench/results.json;
 * never copied by hand from something that moves (docs/contributing.md, "Conventions").
 * test/unit/docs-figures.test.ts runs this over README.md and docs/ in `npm test`.
 *
 * A **figure** is a number with a unit, in prose or a table (not in a code block or span): a time
 * (`ns`, `µs`, `ms`, `s`, `min`, minutes, seconds, hours, days), a size (`B`, bytes, `KB`, `KiB`,
 * `MB`, `MiB`, `GB`), a rate (`25/s`, `POSTs/s`, "a second", "requests a second"), a share (`%`),
 * DynamoDB's capacity units (`units`, `read units`), or lines. A number and its unit are one space
 * apart (`6.3 s`, `90 %`), but for `/s` and `%` (`25/s`, `90%`), so `503s` is a plural and `10^4`
 * no figure. A range (`3.7–11.4 s`, `3 to 40 s`) is one figure. Each figure must be one of:
 *
 * 1. **A line count, generated.** Lines are counted only in a table between `<!-- lines of code -->`
 *    and `<!-- /lines of code -->`: each row's Files cell names files (`lib/http.ts`), folders
 *    (`lib/dynamodb/`) or patterns (`functions/*.ts`, `**` for every file), and its Lines cell must
 *    be their lines of code (test/support/source-code.ts: the lines that hold code, not blank ones
 *    nor comments) over the TypeScript and JavaScript files the names match; a row that names no
 *    file (**Total**) counts every file of the rows above it. A line count anywhere else fails.
 *    `WRITE_DOC_FIGURES=1` makes the test write the counts the code has (`withLineCounts`).
 * 2. **A rule.** A figure equal to a constant of the code whose name says its unit
 *    (`MAX_BODY_BYTES`, `KEY_LIFETIME_MS`, `OUTCOME_LIFETIME_S`, `PARTITION_READ_UNITS`,
 *    `CLIENT_ERROR_RATE`, serverless.yml's `logRetentionDays` and `throttleRate`): `65,536 bytes`,
 *    `24 hours`, `3,000 read units`, `10 %`. A figure followed in its line, before the next figure,
 *    by a code span that names a constant must be that constant's value, whatever the name says:
 *    "3.5 ms (`CPU_MS_PER_DYNAMODB_REQUEST`)". A rule that changes in the code then fails here
 *    until the doc says its new value. A rule of the platform that no code here states is one of
 *    PLATFORM_RULES, each with its source: `15 minutes`, how long DynamoDB takes a signed request.
 * 3. **A measurement, traced.** Any other figure is in a section (under a heading, or a heading
 *    above it) whose own text names bench/results.json and one of its sections (`fleet`, or
 *    `npm run bench -- fleet`), where the figure is kept with the run that measured it. Tracing is
 *    by section, so a figure of another source written into a traced section passes: keep such
 *    sections to the bench's figures.
 *
 * A figure that happens to equal a constant passes as a rule: the check catches figures that drift
 * from the code and figures with no source, not every coincidence.
 */

/** The units of a figure, each with its dimension and its size in the dimension's base unit. */
type Dimension = 'time' | 'size' | 'lines' | 'rate' | 'units' | 'share';
interface Unit {
  readonly dimension: Dimension;
  /** What one of the unit is in the base unit (ms, bytes), each reading of it: a KB is 1,000 or 1,024 bytes. */
  readonly scales: readonly number[];
}

const UNITS: readonly [RegExp, Unit][] = [
  [/^lines?$/, { dimension: 'lines', scales: [1] }],
  [/^ns$/, { dimension: 'time', scales: [1e-6] }],
  [/^(?:µs|us)$/, { dimension: 'time', scales: [1e-3] }],
  [/^ms$/, { dimension: 'time', scales: [1] }],
  [/^(?:s|seconds?)$/, { dimension: 'time', scales: [1_000] }],
  [/^(?:min|minutes?)$/, { dimension: 'time', scales: [60_000] }],
  [/^hours?$/, { dimension: 'time', scales: [3_600_000] }],
  [/^days?$/, { dimension: 'time', scales: [86_400_000] }],
  [/^(?:B|bytes?)$/, { dimension: 'size', scales: [1] }],
  [/^[kK]B$/, { dimension: 'size', scales: [1_000, 1_024] }],
  [/^KiB$/, { dimension: 'size', scales: [1_024] }],
  [/^MB$/, { dimension: 'size', scales: [1e6, 1_024 ** 2] }],
  [/^MiB$/, { dimension: 'size', scales: [1_024 ** 2] }],
  [/^GB$/, { dimension: 'size', scales: [1e9, 1_024 ** 3] }],
  // A partition's capacity is units a second: a count of units, as DynamoDB names it.
  [/^(?:read |write )?units?(?:\/s| a second| per second)?$/, { dimension: 'units', scales: [1] }],
  [/^%$/, { dimension: 'share', scales: [1] }],
];
/** Whatever else a figure counts by the second: requests, POSTs, units. */
const RATE: Unit = { dimension: 'rate', scales: [1] };

const NUMBER = String.raw`\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?`;
const SPACED_UNIT = String.raw`lines?|ns|µs|us|ms|s|seconds?|min|minutes?|hours?|days?|B|bytes?|[kK]B|KiB|MB|MiB|GB|(?:[A-Za-z]+ )?[A-Za-z]+/s|(?:[A-Za-z]+ ){0,2}(?:a|per) second|(?:read |write )?units?|%`;
/** A number (or a range of two), and its unit. */
const FIGURE = new RegExp(
  String.raw`(?<![\w.,/^$#-])(${NUMBER})(?:\s?(?:–|-|to)\s?(?:${NUMBER}))?(?:(/s|%)|\s(${SPACED_UNIT}))(?![\w/])`,
  'g',
);

/** One figure of a doc: where, as written, its value and unit, and where in its line it ends. */
export interface Figure {
  readonly line: number;
  readonly text: string;
  readonly value: number;
  readonly range: boolean;
  readonly unit: Unit;
  /** Where the figure starts and ends in its line. */
  readonly start: number;
  readonly end: number;
}

function unitOf(written: string): Unit {
  return UNITS.find(([pattern]) => pattern.test(written))?.[1] ?? RATE;
}

/** A line of prose as figures are read in it: no code spans, link targets or HTML comments. */
function proseOf(text: string): string {
  return text
    .replace(/(`+).+?\1/g, (span) => ' '.repeat(span.length))
    .replace(/\]\([^)]*\)/g, (link) => ' '.repeat(link.length))
    .replace(/<!--.*?-->/g, (comment) => ' '.repeat(comment.length));
}

/** Every figure of one line of prose. */
export function figuresIn(text: string, line = 1): Figure[] {
  return [...proseOf(text).matchAll(FIGURE)].map((match) => ({
    line,
    text: match[0],
    value: Number((match[1] ?? '').replace(/,/g, '')),
    range: /\d\s?(?:–|-|to)\s?\d/.test(match[0]),
    unit: unitOf(match[2] ?? match[3] ?? ''),
    start: match.index,
    end: match.index + match[0].length,
  }));
}

/** A constant of the code: its value, and its unit when its name says one. */
export interface Constant {
  readonly value: number;
  readonly unit: Unit | undefined;
}

/**
 * The unit a constant's name says: `_MS`, `_S`, `_BYTES`, `Days`, `_UNITS` (DynamoDB's), `_RATE`, `_SHARE` or
 * `_SCORE` (a fraction), `Rate` (a second).
 */
function unitOfName(name: string): Unit | undefined {
  if (/(?:_MS|Ms)$/.test(name)) return { dimension: 'time', scales: [1] };
  if (/(?:_S|_SECONDS|Seconds)$/.test(name)) return { dimension: 'time', scales: [1_000] };
  if (/(?:_DAYS|Days)$/.test(name)) return { dimension: 'time', scales: [86_400_000] };
  if (/(?:_BYTES|Bytes)$/.test(name)) return { dimension: 'size', scales: [1] };
  if (/(?:_UNITS|Units)$/.test(name)) return { dimension: 'units', scales: [1] };
  // A SCREAMING_CASE rate or share is a fraction (`CLIENT_ERROR_RATE = 0.1`: 10 %); a parameter's rate, a second.
  if (/(?:^|_)(?:RATE|SHARE|SCORE)(?:_|$)/.test(name)) return { dimension: 'share', scales: [100] };
  if (/(?:Rate|_PER_SECOND|PerSecond)$/.test(name)) return RATE;
  return undefined;
}

/** The value of a constant's initializer when it is numbers multiplied or divided: `64 * 1024`, `6_000_000`. */
function arithmetic(expression: string): number | undefined {
  const plain = expression.replace(/_/g, '').trim();
  if (!/^\d+(?:\.\d+)?(?:\s*[*/]\s*\d+(?:\.\d+)?)*$/.test(plain)) return undefined;
  const [first = '', ...rest] = plain.split(/\s*(?=[*/])/);
  return rest.reduce(
    (value, term) => (term.startsWith('*') ? value * Number(term.slice(1)) : value / Number(term.slice(1))),
    Number(first),
  );
}

/**
 * The constants of the code at `root`: every `SCREAMING_CASE` const of its scripts whose value is
 * arithmetic on numbers, but the tests' (their bounds are no rule of the service), and the numeric
 * defaults of serverless.yml's stage parameters.
 */
export function constantsOf(root: string, files: readonly string[]): Map<string, Constant[]> {
  const constants = new Map<string, Constant[]>();
  const add = (name: string, value: number) => {
    constants.set(name, [...(constants.get(name) ?? []), { value, unit: unitOfName(name) }]);
  };
  for (const file of files) {
    // starter/ holds another project's files (npm run starter's), with bounds of its own.
    if (!SCRIPT.test(file) || file.startsWith('test/') || file.startsWith('starter/')) continue;
    // A declaration begins its line: code quoted in a string (scripts/mutants.ts's) declares nothing.
    for (const [, name = '', expression = ''] of codeOf(root, file).matchAll(
      /^\s*(?:export\s+)?const ([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)(?:\s*:\s*number)?\s*=\s*([^;,\n]+)[;,\n]/gm,
    )) {
      const value = arithmetic(expression);
      if (value !== undefined) add(name, value);
    }
  }
  const serverless = parse(readFileSync(join(root, 'serverless.yml'), 'utf8'), { logLevel: 'silent' }) as {
    params?: { default?: Record<string, unknown> };
  };
  for (const [name, value] of Object.entries(serverless.params?.default ?? {})) {
    if (typeof value === 'number') add(name, value);
  }
  return constants;
}

/**
 * The platform's rules the docs rely on and no code here states (the harness's models of AWS state
 * theirs as constants): each as a figure says it, with its source. A new one is added here, with its
 * source, not written into a doc alone.
 */
export const PLATFORM_RULES: readonly { readonly says: string; readonly source: string }[] = [
  {
    says: '15 minutes',
    source: 'AWS Signature Version 4: a signed request is accepted up to 15 minutes after its signing',
  },
  {
    says: '30 minutes',
    source: 'DynamoDB on-demand capacity: a table may throttle past twice its previous peak within 30 minutes',
  },
  { says: '2 hours', source: "Chromium's cap on a preflight's Access-Control-Max-Age" },
  {
    says: '6,291,556 bytes',
    source:
      "Lambda's quota on a synchronous invocation's answer: RESPONSE_LIMIT_BYTES in test/support/event.ts, " +
      "where the tests of the core (and the fleet's gateway) take it",
  },
];

/** Whether a figure says a value, in its unit: `24 hours` says 86,400,000 ms. */
function says(figure: Figure, value: number, unit: Unit | undefined): boolean {
  if (figure.range) return false;
  const close = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));
  if (unit === undefined) return close(figure.value, value);
  if (unit.dimension !== figure.unit.dimension) return false;
  return figure.unit.scales.some((scale) => unit.scales.some((own) => close(figure.value * scale, value * own)));
}

/** The lines of code of the files a Files cell names, or what is wrong with a name. */
function countedFiles(cell: string, files: readonly string[]): { files: Set<string>; problems: string[] } {
  const code = files.filter((file) => SCRIPT.test(file));
  const found = new Set<string>();
  const problems: string[] = [];
  for (const name of codeSpans(cell)) {
    const matching = code.filter((file) => matches(name, file));
    if (matching.length === 0) problems.push(`\`${name}\` names no TypeScript or JavaScript file`);
    for (const file of matching) found.add(file);
  }
  return { files: found, problems };
}

/** Whether a file is named: by its path, its folder (`lib/dynamodb/`), or a pattern (`functions/*.ts`, `**`). */
function matches(name: string, file: string): boolean {
  if (name.endsWith('/')) return file.startsWith(name);
  if (!name.includes('*')) return file === name;
  // `**/` is any folders, none included; `**` at the end, anything; `*`, anything within one name.
  const pattern = name
    .split('/')
    .map((part, index, parts) => {
      if (part === '**') return index === parts.length - 1 ? '.*' : '(?:[^/]+/)*';
      const own = part.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*');
      return index === parts.length - 1 ? own : `${own}/`;
    })
    .join('');
  return new RegExp(`^${pattern}$`).test(file);
}

/** A number as the docs write one: `1,455`. */
export function written(count: number): string {
  return count.toLocaleString('en-US');
}

const REGION_START = '<!-- lines of code -->';
const REGION_END = '<!-- /lines of code -->';

/** The cells of a table's row. */
function cells(row: string): string[] {
  return row
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((cell) => cell.trim());
}

/** A row of a lines-of-code table: its line's index, its Lines column, what it says and what the code has. */
interface CountedRow {
  readonly index: number;
  readonly column: number;
  readonly said: string;
  readonly counted: string;
}

/** The rows of a doc's lines-of-code tables, each with its count, and what is wrong with the tables themselves. */
function countedRows(
  source: Source,
  files: readonly string[],
  count: (file: string) => number,
): { rows: CountedRow[]; problems: Broken[] } {
  const rows: CountedRow[] = [];
  const problems: Broken[] = [];
  // A region's columns: undefined before its table's header, null after a header without them.
  let region: { columns: { files: number; lines: number } | null | undefined; above: Set<string> } | undefined;
  source.text.split('\n').forEach((text, index) => {
    const where = `${source.path}:${index + 1}`;
    if (text.trim() === REGION_START) {
      region = { columns: undefined, above: new Set() };
      return;
    }
    if (text.trim() === REGION_END) {
      if (region?.columns === undefined) problems.push(`${where}: a lines-of-code region holds no table`);
      region = undefined;
      return;
    }
    if (region === undefined || !text.trim().startsWith('|') || /^\s*\|[\s:|-]+\|\s*$/.test(text)) return;
    const row = cells(text);
    if (region.columns === undefined) {
      const filesColumn = row.findIndex((cell) => /^files$/i.test(cell));
      const linesColumn = row.findIndex((cell) => /^lines( of code)?$/i.test(cell));
      if (filesColumn >= 0 && linesColumn >= 0) region.columns = { files: filesColumn, lines: linesColumn };
      else {
        region.columns = null;
        problems.push(`${where}: a lines-of-code table needs a Files and a Lines column`);
      }
      return;
    }
    if (region.columns === null) return;
    const named = countedFiles(row[region.columns.files] ?? '', files);
    problems.push(...named.problems.map((problem) => `${where}: ${problem}`));
    // A row that names no file (a total) counts every file of the rows above it.
    const counted = named.files.size === 0 && named.problems.length === 0 ? region.above : named.files;
    rows.push({
      index,
      column: region.columns.lines,
      said: (row[region.columns.lines] ?? '').replace(/\*/g, ''),
      counted: written([...counted].reduce((sum, file) => sum + count(file), 0)),
    });
    for (const file of named.files) region.above.add(file);
  });
  if (region !== undefined) problems.push(`${source.path}: ${REGION_START} is never closed by ${REGION_END}`);
  return { rows, problems };
}

/**
 * What is wrong with the line counts of a doc's generated regions: each row's count against the
 * lines of code of its files, as `count(file)` gives them.
 */
export function brokenLineCounts(source: Source, files: readonly string[], count: (file: string) => number): Broken[] {
  const { rows, problems } = countedRows(source, files, count);
  return [
    ...problems,
    ...rows
      .filter(({ said, counted }) => said !== counted)
      .map(
        ({ index, said, counted }) =>
          `${source.path}:${index + 1}: says ${said || 'nothing'} lines, the code has ${counted} (WRITE_DOC_FIGURES=1 writes it)`,
      ),
  ].sort((a, b) => lineOf(a) - lineOf(b));
}

/** The line a problem is at; one of the whole doc comes last. */
function lineOf(broken: Broken): number {
  const line = /:(\d+):/.exec(broken)?.[1];
  return line === undefined ? Infinity : Number(line);
}

/**
 * A doc with its line counts as the code has them: what `WRITE_DOC_FIGURES=1` makes
 * test/unit/docs-figures.test.ts write. A count wider than its column leaves the table for
 * `npx prettier --write` to align.
 */
export function withLineCounts(source: Source, files: readonly string[], count: (file: string) => number): string {
  const lines = source.text.split('\n');
  for (const { index, column, said, counted } of countedRows(source, files, count).rows) {
    if (said === counted) continue;
    const parts = (lines[index] ?? '').split('|');
    const cell = parts[column + 1] ?? '';
    const value = cell.includes('**') ? `**${counted}**` : counted;
    parts[column + 1] = value.length + 2 <= cell.length ? `${value.padStart(cell.length - 1)} ` : ` ${value} `;
    lines[index] = parts.join('|');
  }
  return lines.join('\n');
}

/** The lines of a doc inside its lines-of-code regions. */
function regionLines(text: string): Set<number> {
  const inside = new Set<number>();
  let open = false;
  text.split('\n').forEach((line, index) => {
    if (line.trim() === REGION_START) open = true;
    else if (line.trim() === REGION_END) open = false;
    else if (open) inside.add(index + 1);
  });
  return inside;
}

/** A heading's section: its level, and whether its own text traces figures to bench/results.json. */
interface Section {
  readonly level: number;
  traced: boolean;
  text: string;
}

/** Whether a section's own text names bench/results.json and one of its sections. */
function traces(text: string, benchSections: ReadonlySet<string>): boolean {
  if (!text.includes('bench/results.json')) return false;
  const named = [
    ...codeSpans(text),
    ...[...text.matchAll(/npm run bench --((?:\s+[A-Za-z]\w*)+)/g)].flatMap(([, names = '']) =>
      names.trim().split(/\s+/),
    ),
  ];
  return named.some((name) => benchSections.has(name));
}

/** For each line of a doc, whether a section it is in traces its figures to bench/results.json. */
function tracedLines(text: string, benchSections: ReadonlySet<string>): Map<number, boolean> {
  const prose = proseLines(text);
  const sections: Section[] = [];
  const of = new Map<number, Section[]>();
  let open: Section[] = [{ level: 0, traced: false, text: '' }];
  for (const { line, text: lineText } of prose) {
    const level = /^(#{1,6})\s/.exec(lineText)?.[1]?.length;
    if (level !== undefined) {
      const section: Section = { level, traced: false, text: '' };
      open = [...open.filter((outer) => outer.level < level), section];
      sections.push(section);
    }
    const own = open.at(-1);
    if (own !== undefined) own.text += `${lineText}\n`;
    of.set(line, open);
  }
  for (const section of [...sections, ...(open[0] === undefined ? [] : [open[0]])]) {
    section.traced = traces(section.text, benchSections);
  }
  return new Map([...of].map(([line, chain]) => [line, chain.some((section) => section.traced)]));
}

/** Every figure of a doc that is none of the three kinds (see the top of this file). */
export function brokenFigures(
  source: Source,
  constants: ReadonlyMap<string, readonly Constant[]>,
  benchSections: ReadonlySet<string>,
): Broken[] {
  const broken: Broken[] = [];
  const generated = regionLines(source.text);
  const traced = tracedLines(source.text, benchSections);
  const ruled = [...constants.values()].flat().filter((constant) => constant.unit !== undefined);
  const platformRules = PLATFORM_RULES.flatMap(({ says: figure }) =>
    figuresIn(figure).map((rule) => ({ value: rule.value, unit: rule.unit })),
  );
  for (const { line, text } of proseLines(source.text)) {
    if (generated.has(line)) continue;
    const where = `${source.path}:${line}`;
    const figures = figuresIn(text, line);
    figures.forEach((figure, index) => {
      const named = constantBeside(text, figure.end, figures[index + 1]?.start, constants);
      if (named !== undefined) {
        const [name, values] = named;
        if (!values.some((constant) => says(figure, constant.value, constant.unit))) {
          const value = values.map((constant) => written(constant.value)).join(' or ');
          broken.push(`${where}: "${figure.text}" is beside \`${name}\`, which is ${value}`);
        }
        return;
      }
      if (figure.unit.dimension === 'lines') {
        broken.push(`${where}: "${figure.text}" is a line count outside a generated region (${REGION_START})`);
        return;
      }
      if (ruled.some((constant) => says(figure, constant.value, constant.unit))) return;
      if (platformRules.some((rule) => says(figure, rule.value, rule.unit))) return;
      if (traced.get(line) === true) return;
      broken.push(
        `${where}: "${figure.text}" has no source: not a constant of the code, and no section above it names bench/results.json and its section`,
      );
    });
  }
  return broken;
}

/** The constant a code span names after a figure, before the next figure of its line. */
function constantBeside(
  text: string,
  from: number,
  to: number | undefined,
  constants: ReadonlyMap<string, readonly Constant[]>,
): [string, readonly Constant[]] | undefined {
  // Positions are those of the line with its code spans blanked, which keeps every length.
  const after = text.slice(from, to);
  for (const span of codeSpans(after)) {
    const constant = constants.get(span);
    if (constant !== undefined) return [span, constant];
  }
  return undefined;
}

/** The lines of code of a file of the repository at `root`. */
export function lineCounter(root: string): (file: string) => number {
  return (file) => linesOfCode(codeOf(root, file));
}
