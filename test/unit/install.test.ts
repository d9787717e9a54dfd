import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { PROJECT_ROOT } from '../../harness/project';

/**
 * What `npm install` brings: no tool that only the template checks use (test/support/cfn-guard.ts
 * installs that where they run), and no install script run, each one denied by name in
 * package.json's allowScripts after review (README, "Install scripts").
 */
describe('npm install', () => {
  const read = (file: string) => JSON.parse(readFileSync(join(PROJECT_ROOT, file), 'utf8')) as Record<string, unknown>;

  it('brings neither the cfn-guard rules package nor aws-cdk-lib, its peer (161 MB)', () => {
    const installed = Object.keys(read('package-lock.json').packages as Record<string, unknown>);
    expect(
      installed.filter((path) => /node_modules\/(aws-cdk-lib|@cdklabs\/cdk-validator-cfnguard)$/.test(path)),
    ).toEqual([]);
  });

  it('runs no install script: each package that has one is denied by name', () => {
    const allowScripts = read('package.json').allowScripts as Record<string, boolean>;
    expect(Object.values(allowScripts).every((allowed) => !allowed)).toBe(true);
    const withScripts = Object.entries(
      read('package-lock.json').packages as Record<string, { hasInstallScript?: boolean }>,
    )
      .filter(([, entry]) => entry.hasInstallScript === true)
      .map(([path]) => path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect([...new Set(withScripts)].sort()).toEqual(Object.keys(allowScripts).sort());
  });
});
