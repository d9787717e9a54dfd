import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import type { Template } from '../../harness/package';
import { PROJECT_ROOT } from '../../harness/project';

/**
 * cfn-guard with AWS Control Tower's proactive controls, both as
 * @cdklabs/cdk-validator-cfnguard ships them (a cfn-guard binary per platform, and the rules),
 * run on a template. A finding is a rule that a resource of the template does not keep.
 *
 * The package is installed here, where the checks run, not with the project: it names aws-cdk-lib
 * (161 MB) as a peer for its CDK plugin, which these checks do not use, and that peer was a fifth
 * of every `npm install`. It goes into node_modules/.cache, as `cfn-guard-rules/package-lock.json`
 * pins it (`npm ci`: the version and its integrity hash), without its peer and without running
 * any install script, once per machine (36 MB, a few seconds; it needs the npm registry).
 */

const run = promisify(execFile);
const RULES = join(PROJECT_ROOT, 'test/support/cfn-guard-rules');
const RULES_LOCK = readFileSync(join(RULES, 'package-lock.json'), 'utf8');
/** The rules' version, as the lockfile pins it. */
export const RULES_PACKAGE = `@cdklabs/cdk-validator-cfnguard@${
  (JSON.parse(RULES_LOCK) as { packages: Record<string, { version?: string }> }).packages[
    'node_modules/@cdklabs/cdk-validator-cfnguard'
  ]?.version ?? '?'
}`;
/** One folder per lockfile: a changed lockfile installs afresh. */
const INSTALLED = join(
  PROJECT_ROOT,
  'node_modules/.cache/todo-api/cfn-guard',
  createHash('sha1').update(RULES_LOCK).digest('hex').slice(0, 12),
);

let installing: Promise<string> | undefined;

/** Where the rules package is, once installed. */
function rulesPackage(): Promise<string> {
  installing ??= (async () => {
    const dir = join(INSTALLED, 'node_modules/@cdklabs/cdk-validator-cfnguard');
    if (existsSync(join(dir, 'package.json'))) return dir;
    // Installed beside, then moved: two test files may need it at once.
    const building = `${INSTALLED}.${process.pid}.tmp`;
    rmSync(building, { recursive: true, force: true });
    mkdirSync(building, { recursive: true });
    for (const file of ['package.json', 'package-lock.json']) cpSync(join(RULES, file), join(building, file));
    await run('npm', ['ci', '--omit=peer', '--ignore-scripts', '--no-audit', '--no-fund'], { cwd: building });
    if (existsSync(join(dir, 'package.json'))) rmSync(building, { recursive: true, force: true });
    else renameSync(building, INSTALLED);
    return dir;
  })();
  return installing;
}

/** The Control Tower rules, installed if need be. */
export async function controlTowerRules(): Promise<string> {
  return join(await rulesPackage(), 'rules/control-tower/cfn-guard');
}

async function guardBinary(): Promise<string> {
  const os = { linux: 'ubuntu', darwin: 'macos' }[process.platform as string];
  const arch = { x64: 'x86_64', arm64: 'aarch64' }[process.arch as string];
  if (os === undefined || arch === undefined) {
    throw new Error(`${RULES_PACKAGE} ships no cfn-guard for ${process.platform}/${process.arch}`);
  }
  return join(await rulesPackage(), 'bin', os, arch, 'cfn-guard');
}

export interface Finding {
  /** The rule's name, e.g. `lambda_inside_vpc_check`. */
  readonly rule: string;
  /** The Control Tower control it implements, e.g. `CT.LAMBDA.PR.3`. */
  readonly control: string;
  /** The logical id of the resource that breaks it. */
  readonly resource: string;
}

/** cfn-guard prints one JSON document per rules file; this splits them. */
function jsonDocuments(text: string): unknown[] {
  const documents: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{') {
      if (depth++ === 0) start = i;
    } else if (char === '}' && --depth === 0) documents.push(JSON.parse(text.slice(start, i + 1)));
  }
  return documents;
}

interface Report {
  status: string;
  not_compliant: { Rule: { name: string } }[];
}

/** Every (rule, resource) that the template breaks. */
export async function guardFindings(template: Template): Promise<Finding[]> {
  const dir = mkdtempSync(join(tmpdir(), 'todo-guard-'));
  try {
    const data = join(dir, 'template.json');
    writeFileSync(data, JSON.stringify(template));
    const { stdout } = await run(
      await guardBinary(),
      [
        'validate',
        '--rules',
        await controlTowerRules(),
        '--data',
        data,
        '--output-format',
        'json',
        '--show-summary',
        'none',
      ],
      { maxBuffer: 256 * 1024 * 1024 },
    ).catch((error: unknown) => {
      // cfn-guard exits 19 when a rule fails: the report is what matters.
      const { code, stdout } = error as { code?: number; stdout?: string };
      if (code === 19 && stdout !== undefined) return { stdout };
      throw error;
    });
    const findings = new Map<string, Finding>();
    for (const report of jsonDocuments(stdout) as Report[]) {
      if (report.status !== 'FAIL') continue;
      for (const { Rule } of report.not_compliant) {
        const text = JSON.stringify(Rule);
        const control = /\[(CT\.[A-Z0-9]+\.PR\.\d+)\]/.exec(text)?.[1] ?? '?';
        for (const [, resource = ''] of text.matchAll(/"path":"\/Resources\/([^/"]+)/g)) {
          findings.set(`${Rule.name} ${resource}`, { rule: Rule.name, control, resource });
        }
      }
    }
    return [...findings.values()].sort((a, b) => `${a.rule} ${a.resource}`.localeCompare(`${b.rule} ${b.resource}`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** An entry of cfn-guard-exceptions.yaml: a finding that stays, and why. */
export interface GuardException {
  readonly control: string;
  readonly rule: string;
  /** Logical ids, where `*` stands for any text. */
  readonly resources: string[];
  readonly reason: string;
}

export const EXCEPTIONS_PATH = join(PROJECT_ROOT, 'cfn-guard-exceptions.yaml');

export function guardExceptions(): GuardException[] {
  return parse(readFileSync(EXCEPTIONS_PATH, 'utf8')) as GuardException[];
}

const matches = (pattern: string, id: string): boolean =>
  new RegExp(
    `^${pattern
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  ).test(id);

export function covers(exception: GuardException, finding: Finding): boolean {
  return exception.rule === finding.rule && exception.resources.some((pattern) => matches(pattern, finding.resource));
}
