import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { intersects, minVersion, Range, subset } from 'semver';
import { PROJECT_ROOT } from '../../harness/project';

/**
 * What `npm install` brings: no tool that only the template checks use (test/support/cfn-guard.ts
 * installs that where they run), no install script run, each one denied by name in package.json's
 * allowScripts after review (docs/contributing.md, "Install scripts"), and no package that refuses
 * a Node version package.json's engines admits (npm would warn EBADENGINE on it).
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

  it('admits only the Node versions that every locked package admits, .nvmrc’s among them', () => {
    const admitted = (read('package.json').engines as { node: string }).node;
    // The oldest version of each line the range opens (20.19.0, 22.13.0, 24.0.0 for
    // `^20.19.0 || ^22.13.0 || >=24`): the one a package's own floor refuses first, named in a failure.
    const oldest = new Range(admitted).set.map((line) =>
      String(minVersion(line.map((comparator) => comparator.value).join(' '))),
    );
    expect(oldest).toContain(String(minVersion(admitted)));
    const locked = Object.entries(
      read('package-lock.json').packages as Record<string, { version?: string; engines?: { node?: unknown } }>,
    ).filter(([path]) => path !== '');
    // Optional packages too: each is installed on some platform, and warns there.
    const refusing = locked.flatMap(([path, entry]) => {
      const range = entry.engines?.node;
      if (typeof range !== 'string' || subset(admitted, range)) return [];
      const name = path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
      const refused = oldest.filter((version) => !new Range(range).test(version));
      return [`${name}@${entry.version} (node ${range}) refuses ${refused.join(', ') || 'some of ' + admitted}`];
    });
    expect(refusing).toEqual([]);
    const nvmrc = readFileSync(join(PROJECT_ROOT, '.nvmrc'), 'utf8').trim();
    expect(intersects(admitted, nvmrc)).toBe(true);
  });
});
