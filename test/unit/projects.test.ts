import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import config, { DYNAMODB_ONLY, EVERY_STORE, SIMULATION } from '../../jest.config';
import { runCommand } from '../../harness/cli';
import sequencer from '../sequencer.cjs';
import { PROJECT_ROOT } from '../../harness/project';

/**
 * `npm run test:unit` runs without DynamoDB Local, and the `dynamodb` project runs every unit test
 * that needs it: a new test file on the DynamoDB store that jest.config.ts does not name would
 * otherwise not run at all in `npm test`, or fail `npm run test:unit` for want of Java.
 */
describe('the unit and dynamodb projects', () => {
  const dir = join(PROJECT_ROOT, 'test/unit');
  const files = readdirSync(dir)
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => ({ name: file.replace('.test.ts', ''), source: readFileSync(join(dir, file), 'utf8') }));

  it('name every unit test file that uses the DynamoDB store, and no file that is not there', () => {
    const named = [...EVERY_STORE, ...DYNAMODB_ONLY];
    const usesDynamoDb = files.filter(({ source }) => / from '\.\.\/support\/stores';$/m.test(source));
    expect(usesDynamoDb.map(({ name }) => name).filter((name) => !named.includes(name))).toEqual([]);
    expect(named.filter((name) => !files.some((file) => file.name === name))).toEqual([]);
  });

  it('run the tests of every store in both, and those of DynamoDB alone in dynamodb', () => {
    for (const { name, source } of files) {
      if (EVERY_STORE.includes(name))
        expect({ name, eachStore: source.includes('STORES') }).toEqual({ name, eachStore: true });
    }
    for (const name of DYNAMODB_ONLY) expect(files.find((file) => file.name === name)?.source).not.toContain('STORES');
  });
});

/** Loading jest and its TypeScript config takes about 2 s idle; this allows for a busy 2-core machine. */
const LIST_WITHIN_MS = 60_000;

/** The test files jest runs for one project, as `jest --listTests` resolves them, relative to the checkout. */
async function testFilesOf(project: string): Promise<string[]> {
  const listed = await runCommand(
    process.execPath,
    [join(PROJECT_ROOT, 'node_modules/jest/bin/jest.js'), '--listTests', '--json', '--selectProjects', project],
    // As the npm scripts run it: ts-node, which reads jest.config.ts, keeps no compile cache then.
    { env: { DISABLE_V8_COMPILE_CACHE: '1' } },
  );
  if (listed.code !== 0) throw new Error(`jest --listTests --selectProjects ${project} failed:\n${listed.stderr}`);
  return (JSON.parse(listed.stdout) as string[]).map((path) => path.slice(PROJECT_ROOT.length + 1)).sort();
}

/** The projects a package.json script selects (`jest --selectProjects a b c`). */
function projectsOfScript(script: string): string[] {
  const scripts = (
    JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    }
  ).scripts;
  const match = /jest --selectProjects ((?:[\w-]+ ?)+)/.exec(scripts[script] ?? '');
  if (match?.[1] === undefined) throw new Error(`npm run ${script} selects no jest project`);
  return match[1].trim().split(' ');
}

/**
 * `npm run test:unit` is the quick check, within a minute on a 2-core machine: the simulator's
 * search, minutes of one core, runs in a project of its own, and `npm test` runs it at its full
 * depth. Without this, a slow file added to test/unit, or a project `npm test` forgets, goes
 * unnoticed.
 */
describe('the quick check and the simulation project', () => {
  it(
    'leave the simulator’s search out of unit, and run it, and nothing else, in simulation',
    async () => {
      const [unit, simulation] = await Promise.all([testFilesOf('unit'), testFilesOf('simulation')]);
      const searches = SIMULATION.map((name) => `test/unit/${name}.test.ts`);
      expect(simulation).toEqual(searches);
      expect(unit.filter((file) => searches.includes(file))).toEqual([]);
      // The simulator's quick files stay in the quick check: its DynamoDB and its timing mode.
      expect(unit).toEqual(
        expect.arrayContaining(['test/unit/simulated-dynamodb.test.ts', 'test/unit/simulation-timing.test.ts']),
      );
    },
    LIST_WITHIN_MS,
  );

  it('are each run by a script of their own, and `npm test` runs every project but external', () => {
    const projects = (config.projects ?? []).map((project) =>
      typeof project === 'string' ? project : String(project.displayName),
    );
    expect(projectsOfScript('test:unit')).toEqual(['unit']);
    expect(projectsOfScript('test:simulation')).toEqual(['simulation']);
    expect(projectsOfScript('test').sort()).toEqual(projects.filter((name) => name !== 'external').sort());
  });

  it('start the simulator’s search first, before jest has timed any file', () => {
    expect(config.testSequencer).toBe('<rootDir>/test/sequencer.cjs');
    const test = (path: string, project: string) => ({ path, context: { config: { displayName: { name: project } } } });
    const ordered = sequencer.longestProjectsFirst([
      test('a', 'unit'),
      test('b', 'dynamodb'),
      test('search', 'simulation'),
      test('c', 'unit'),
    ]);
    expect(ordered.map(({ path }) => path)).toEqual(['search', 'a', 'b', 'c']);
  });
});
