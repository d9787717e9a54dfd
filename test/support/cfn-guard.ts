import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import type { Template } from '../../harness/package';
import { PROJECT_ROOT } from '../../harness/project';

/**
 * cfn-guard with AWS Control Tower's proactive controls, both as
 * @cdklabs/cdk-validator-cfnguard ships them (a cfn-guard binary per platform, and the rules),
 * run on a template. A finding is a rule that a resource of the template does not keep.
 */

const run = promisify(execFile);
const PACKAGE = dirname(require.resolve('@cdklabs/cdk-validator-cfnguard/package.json'));
export const CONTROL_TOWER_RULES = join(PACKAGE, 'rules/control-tower/cfn-guard');

function guardBinary(): string {
  const os = { linux: 'ubuntu', darwin: 'macos' }[process.platform as string];
  const arch = { x64: 'x86_64', arm64: 'aarch64' }[process.arch as string];
  if (os === undefined || arch === undefined) {
    throw new Error(`@cdklabs/cdk-validator-cfnguard ships no cfn-guard for ${process.platform}/${process.arch}`);
  }
  return join(PACKAGE, 'bin', os, arch, 'cfn-guard');
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
      guardBinary(),
      ['validate', '--rules', CONTROL_TOWER_RULES, '--data', data, '--output-format', 'json', '--show-summary', 'none'],
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
