import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { packageInto, servicePackage, type Packaged, type Template } from '../harness/package';
import { PROJECT_ROOT } from '../harness/project';
import { readFileSync } from 'node:fs';

/** A revision of the project to measure: this checkout, or an older one beside it (`--baseline`). */
export interface Tree {
  readonly name: string;
  readonly dir: string;
}

export const THIS_TREE: Tree = { name: 'this tree', dir: PROJECT_ROOT };

/**
 * A copy of the project at a git revision, with its own node_modules, kept under
 * node_modules/.cache so that a second run reuses it.
 */
export function treeAt(ref: string): Tree {
  const sha = execFileSync('git', ['rev-parse', '--short', ref], { cwd: PROJECT_ROOT, encoding: 'utf8' }).trim();
  const dir = join(PROJECT_ROOT, 'node_modules/.cache/todo-api/trees', sha);
  if (!existsSync(join(dir, 'node_modules'))) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    execFileSync('sh', ['-c', `git archive ${sha} | tar -x -C "${dir}"`], { cwd: PROJECT_ROOT });
    execFileSync('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: dir, stdio: 'ignore' });
  }
  return { name: `${ref} (${sha})`, dir };
}

/** The trees a section compares: the baseline first when one was asked for, then this one. */
export function treesFor(baseline: string | undefined): Tree[] {
  return baseline === undefined ? [THIS_TREE] : [treeAt(baseline), THIS_TREE];
}

/** What `serverless package` (a bare one: the DynamoDB store) ships from a tree. */
export async function packagedAt(tree: Tree, params: string[] = []): Promise<Pick<Packaged, 'dir' | 'template'>> {
  if (tree.dir === PROJECT_ROOT) return servicePackage(params);
  const dir = join(tree.dir, '.serverless-bench');
  if (!existsSync(join(dir, 'cloudformation-template-update-stack.json'))) await packageInto(dir, params, tree.dir);
  const template = JSON.parse(readFileSync(join(dir, 'cloudformation-template-update-stack.json'), 'utf8')) as Template;
  return { dir, template };
}
