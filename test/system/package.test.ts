import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { EXPIRES } from '../../lib/dynamodb/table';
import { tableDefinition } from '../support/dynamodb-local-process';
import { runCommand } from '../../harness/cli';
import { functionZips, servicePackage, type Packaged } from '../../harness/package';
import { withScratchCopy } from '../../harness/scratch';

const ofType = (result: Packaged, type: string) => Object.values(result.resources).filter((r) => r.Type === type);

interface Statement {
  Effect: string;
  Action: string[];
  Resource: unknown;
}

function roleStatements(result: Packaged): Statement[] {
  const [role] = ofType(result, 'AWS::IAM::Role');
  const policies = role?.Properties.Policies as { PolicyDocument: { Statement: Statement[] } }[];
  return policies.flatMap((policy) => policy.PolicyDocument.Statement);
}

const packages: Partial<Record<'memory' | 'dynamodb', Packaged>> = {};

/** One `serverless package` takes about 5 s on an idle 2-core machine; this allows for a busy one. */
const PACKAGE_WITHIN_MS = 60_000;

beforeAll(async () => {
  // One after the other: serverless uses the service's own .serverless/ folder while it packages.
  packages.memory = await servicePackage(['store=memory']);
  // A bare `serverless package`, as a bare `serverless deploy` builds it: the durable store.
  packages.dynamodb = await servicePackage([]);
}, 2 * PACKAGE_WITHIN_MS);

function packaged(store: 'memory' | 'dynamodb'): Packaged {
  const result = packages[store];
  if (result === undefined) throw new Error(`serverless package for the ${store} store did not run`);
  return result;
}

describe.each(['memory', 'dynamodb'] as const)('serverless package, %s store', (store) => {
  it('has five functions on nodejs22.x, each told its store', () => {
    const functions = ofType(packaged(store), 'AWS::Lambda::Function');
    expect(functions).toHaveLength(5);
    for (const fn of functions) {
      expect(fn.Properties.Runtime).toBe('nodejs22.x');
      expect(fn.Properties.Environment).toMatchObject({ Variables: { TODO_STORE: store } });
    }
  });

  it('has exactly the five routes of docs/spec.md on an HTTP API with payload 2.0', () => {
    const routes = ofType(packaged(store), 'AWS::ApiGatewayV2::Route').map((route) => route.Properties.RouteKey);
    expect(routes.sort()).toEqual([
      'DELETE /todos/{id}',
      'GET /todos',
      'GET /todos/{id}',
      'POST /todos',
      'PUT /todos/{id}',
    ]);
    for (const integration of ofType(packaged(store), 'AWS::ApiGatewayV2::Integration')) {
      expect(integration.Properties.PayloadFormatVersion).toBe('2.0');
    }
  });

  it('ships each function alone in its own zip: one minified bundle that requires nothing from node_modules', () => {
    const zips = functionZips(packaged(store));
    expect([...zips.keys()]).toEqual(['createTodo', 'deleteTodo', 'getTodo', 'listTodos', 'updateTodo']);
    for (const [fn, files] of zips) {
      const name = `functions/${fn}.js`;
      expect(Object.keys(files)).toEqual([name]);
      const code = Buffer.from(files[name] ?? []).toString('utf8');
      // The DynamoDB bundles carry the store's own client (lib/dynamodb/client.ts); the memory
      // store's bundles hold no DynamoDB code at all.
      expect(code.includes('TransactWriteItems')).toBe(store === 'dynamodb');
      // Only Node's own modules are required at run time, and the AWS SDK's credential chain,
      // which the Lambda runtime has and the client loads only without credentials in the
      // environment (never on Lambda, which sets them).
      const required = new Set([...code.matchAll(/require\("([^"]+)"\)/g)].map(([, name = '']) => name));
      expect([...required].filter((name) => !isBuiltin(name))).toEqual(
        store === 'dynamodb' ? ['@aws-sdk/credential-provider-node'] : [],
      );
    }
  });
});

describe('serverless package, memory store: cold starts', () => {
  it('loads node:crypto and node:zlib only in the requests that use them, not with the function (about 3 ms and 1 ms of a cold start)', () => {
    for (const [fn, files] of functionZips(packaged('memory'))) {
      const code = Buffer.from(files[`functions/${fn}.js`] ?? []).toString('utf8');
      const required = [...code.matchAll(/require\("([^"]+)"\)/g)].map(([, name = '']) => name);
      expect({ fn, required: required.filter((name) => ['node:crypto', 'node:zlib'].includes(name)) }).toEqual({
        fn,
        required: [],
      });
    }
  });
});

describe('serverless package, dynamodb store: table and IAM', () => {
  it('creates the table on demand, with the keys the store and the local scripts use', () => {
    const [table] = ofType(packaged('dynamodb'), 'AWS::DynamoDB::Table');
    const local = tableDefinition('todo-api-dev-todos');
    expect(table?.Properties).toMatchObject({
      TableName: local.TableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: local.AttributeDefinitions,
      KeySchema: local.KeySchema,
    });
    expect(ofType(packaged('memory'), 'AWS::DynamoDB::Table')).toEqual([]);
  });

  it('grants only the five item actions the store uses, on that table only', () => {
    const dynamo = roleStatements(packaged('dynamodb')).filter((statement) =>
      statement.Action.some((a) => a.startsWith('dynamodb:')),
    );
    expect(dynamo).toEqual([
      {
        Effect: 'Allow',
        Action: [
          'dynamodb:GetItem',
          'dynamodb:PutItem',
          'dynamodb:UpdateItem',
          'dynamodb:DeleteItem',
          'dynamodb:ConditionCheckItem',
          'dynamodb:Query',
        ],
        Resource: { 'Fn::GetAtt': ['TodosTable', 'Arn'] },
      },
    ]);
    const everyAction = roleStatements(packaged('dynamodb')).flatMap((statement) => statement.Action);
    expect(everyAction.filter((action) => action.includes('*'))).toEqual([]);
    expect(roleStatements(packaged('memory')).flatMap((statement) => statement.Action)).not.toContainEqual(
      expect.stringMatching(/^dynamodb:/),
    );
  });

  it('tells the functions the table name', () => {
    for (const fn of ofType(packaged('dynamodb'), 'AWS::Lambda::Function')) {
      expect(fn.Properties.Environment).toMatchObject({ Variables: { TODOS_TABLE: 'todo-api-dev-todos' } });
    }
  });
});

describe('a bare `serverless package`, as a bare `serverless deploy` ships it', () => {
  const resource = (type: string) => ofType(packaged('dynamodb'), type)[0]?.Properties ?? {};

  it('runs every function on the DynamoDB store, with active X-Ray tracing', () => {
    expect(ofType(packaged('dynamodb'), 'AWS::DynamoDB::Table')).toHaveLength(1);
    for (const fn of ofType(packaged('dynamodb'), 'AWS::Lambda::Function')) {
      expect(fn.Properties).toMatchObject({
        Environment: { Variables: { TODO_STORE: 'dynamodb' } },
        TracingConfig: { Mode: 'Active' },
      });
      // Each function capped at what the scale model carries best (serverless.yml, docs/operations.md).
      expect(Number(fn.Properties.ReservedConcurrentExecutions)).toBeGreaterThan(0);
    }
  });

  it('throttles the API stage and writes a JSON access log to a log group that expires', () => {
    const stage = resource('AWS::ApiGatewayV2::Stage');
    expect(stage).toMatchObject({
      DefaultRouteSettings: { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 100 },
      AccessLogSettings: { DestinationArn: { 'Fn::GetAtt': ['HttpApiLogGroup', 'Arn'] } },
    });
    const format = JSON.parse(
      (stage.AccessLogSettings as { Format: string }).Format.replace(/\$context\.[\w.]+/g, 'x'),
    ) as unknown;
    expect(format).toMatchObject({ requestId: 'x', status: 'x', route: 'x', ip: 'x' });
    expect(packaged('dynamodb').resources.HttpApiLogGroup?.Properties).toMatchObject({ RetentionInDays: 14 });
  });

  it('lets a browser on any origin send an Idempotency-Key, If-Match and If-None-Match, read Location, Idempotent-Replayed, ETag and Retry-After, and keep a preflight’s answer', () => {
    expect(resource('AWS::ApiGatewayV2::Api')).toMatchObject({
      CorsConfiguration: {
        AllowOrigins: ['*'],
        AllowHeaders: ['Content-Type', 'Idempotency-Key', 'If-Match', 'If-None-Match'],
        ExposeHeaders: ['Location', 'Idempotent-Replayed', 'ETag', 'Retry-After'],
        MaxAge: 86400,
      },
    });
  });

  it('lets DynamoDB delete Idempotency-Keys and queued POSTs once they expire (time to live on `expires`)', () => {
    expect(resource('AWS::DynamoDB::Table')).toMatchObject({
      // The attribute the store writes (lib/dynamodb/table.ts).
      TimeToLiveSpecification: { AttributeName: EXPIRES, Enabled: true },
    });
  });

  it('tells the functions their stage’s namespace for the service’s own metrics', () => {
    for (const fn of ofType(packaged('dynamodb'), 'AWS::Lambda::Function')) {
      expect(fn.Properties.Environment).toMatchObject({ Variables: { TODO_METRICS_NAMESPACE: 'todo-api/dev' } });
    }
  });

  it(
    'takes each protection from a stage parameter',
    async () => {
      const tuned = await servicePackage([
        'throttleRate=5',
        'throttleBurst=10',
        'reservedConcurrency=3',
        'logRetentionDays=365',
        'tracing=off',
      ]);
      const [stage] = ofType(tuned, 'AWS::ApiGatewayV2::Stage');
      // Parameters from the command line are strings; CloudFormation reads "5" as the number 5.
      const limits = stage?.Properties.DefaultRouteSettings as Record<string, unknown>;
      expect([Number(limits.ThrottlingRateLimit), Number(limits.ThrottlingBurstLimit)]).toEqual([5, 10]);
      expect(tuned.resources.HttpApiLogGroup?.Properties).toMatchObject({ RetentionInDays: 365 });
      for (const fn of ofType(tuned, 'AWS::Lambda::Function')) {
        expect(Number(fn.Properties.ReservedConcurrentExecutions)).toBe(3);
        expect(fn.Properties).not.toHaveProperty('TracingConfig');
      }
    },
    PACKAGE_WITHIN_MS,
  );
});

describe('`npm run package`', () => {
  it(
    'leaves nothing in the system’s temporary directory, nor a work folder in the project',
    async () => {
      // A temporary directory of its own (TMPDIR), so that what other processes on the machine
      // write to the shared one does not count; the command sees it as the system's.
      const temp = mkdtempSync(join(tmpdir(), 'todo-tmpdir-'));
      const out = mkdtempSync(join(tmpdir(), 'todo-package-'));
      try {
        await withScratchCopy(async (dir) => {
          const before = readdirSync(temp);
          const packaged = await runCommand('npm', ['run', '--silent', 'package', '--', '--package', out], {
            cwd: dir,
            env: { TMPDIR: temp },
          });
          expect(packaged.code).toBe(0);
          expect(readdirSync(out).filter((file) => file.endsWith('.zip'))).toHaveLength(5);
          expect(readdirSync(temp)).toEqual(before);
          const workFolders = join(dir, '.esbuild');
          expect(existsSync(workFolders) ? readdirSync(workFolders) : []).toEqual([]);
        });
      } finally {
        rmSync(temp, { recursive: true, force: true });
        rmSync(out, { recursive: true, force: true });
      }
    },
    PACKAGE_WITHIN_MS,
  );
});
