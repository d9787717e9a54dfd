import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { unzipSync } from 'fflate';
import { freePort, PROJECT_ROOT } from '../support/offline';

const run = promisify(execFile);

interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
}

/** `serverless package` needs no AWS credentials; this proves it and reads what it made. */
describe('serverless package', () => {
  const out = mkdtempSync(join(tmpdir(), 'todo-package-'));
  let resources: Resource[] = [];

  beforeAll(async () => {
    await run(
      process.execPath,
      [join(PROJECT_ROOT, 'node_modules/serverless/bin/serverless.js'), 'package', '--package', out],
      {
        cwd: PROJECT_ROOT,
        // No credentials at all, and a PORT of its own so its esbuild work folder is not a running server's.
        env: {
          ...process.env,
          PORT: String(await freePort()),
          AWS_ACCESS_KEY_ID: '',
          AWS_SECRET_ACCESS_KEY: '',
          AWS_PROFILE: 'none',
        },
      },
    );
    const template = JSON.parse(readFileSync(join(out, 'cloudformation-template-update-stack.json'), 'utf8')) as {
      Resources: Record<string, Resource>;
    };
    resources = Object.values(template.Resources);
  }, 120_000);

  afterAll(() => {
    rmSync(out, { recursive: true, force: true });
  });

  it('has five functions on nodejs22.x', () => {
    const functions = resources.filter((resource) => resource.Type === 'AWS::Lambda::Function');
    expect(functions).toHaveLength(5);
    for (const fn of functions) expect(fn.Properties.Runtime).toBe('nodejs22.x');
  });

  it('has exactly the five routes of SPEC.md on an HTTP API', () => {
    const routes = resources
      .filter((resource) => resource.Type === 'AWS::ApiGatewayV2::Route')
      .map((route) => route.Properties.RouteKey);
    expect(routes.sort()).toEqual([
      'DELETE /todos/{id}',
      'GET /todos',
      'GET /todos/{id}',
      'POST /todos',
      'PUT /todos/{id}',
    ]);
    const integrations = resources.filter((resource) => resource.Type === 'AWS::ApiGatewayV2::Integration');
    for (const integration of integrations) expect(integration.Properties.PayloadFormatVersion).toBe('2.0');
  });

  it('ships each function alone in its own zip: one minified bundle, no node_modules', () => {
    const zips = readdirSync(out)
      .filter((name) => name.endsWith('.zip'))
      .sort();
    expect(zips).toEqual(['createTodo.zip', 'deleteTodo.zip', 'getTodo.zip', 'listTodos.zip', 'updateTodo.zip']);
    for (const zip of zips) {
      const files = Object.keys(unzipSync(readFileSync(join(out, zip))));
      expect(files).toEqual([`functions/${zip.replace('.zip', '.js')}`]);
    }
  });
});
