import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ensureTable, LOCAL_CREDENTIALS, LOCAL_REGION, localClient } from '../test/support/dynamodb-local-process';
import { awsDynamoDb, type AwsDynamoDb, type AwsDynamoDbOptions } from './aws-dynamodb/dynamodb';
import { Container, FunctionPool, type FunctionConfig, type PoolStats } from './container';
import { startFaultProxy, type FaultProxy, type SeenRequest } from './fault-proxy';
import { startGateway, type Cors, type Gateway, type GatewayRecord } from './gateway';
import { lambdaNode, type LambdaNode } from './lambda-node';
import { functionZips, type Packaged, type Resource } from './package';
import type { Version } from './versions';

/**
 * The service as AWS runs it, on one machine: the zips that `serverless package` ships, unpacked,
 * each function a pool of containers (harness/container.ts) on Lambda's Node major, behind an
 * HTTP API gateway (harness/gateway.ts) built from the packaged template's routes, on DynamoDB
 * as AWS runs it (harness/aws-dynamodb/: conflicts, throughput per partition, latency, 500s) over
 * DynamoDB Local, reached through a fault proxy (harness/fault-proxy.ts), the network. What holds
 * here holds where each container has its own module state, its own store instance and its own
 * cached counter, which the emulator (one process for all five functions) cannot show.
 */

export interface FleetOptions {
  /** What `serverless package` built (harness/package.ts), for the DynamoDB store. */
  readonly packaged: Pick<Packaged, 'dir' | 'template'>;
  /** The DynamoDB the containers reach, through the fleet's fault proxy. */
  readonly dynamoDbEndpoint: string;
  /** The table; a new one of this name is created (a fresh one by default). */
  readonly table?: string;
  /** The most containers per function, by short name (`createTodo`); 8 for any not named. */
  readonly caps?: Readonly<Record<string, number>>;
  /** Freeze containers between invocations, as Lambda does (on by default). */
  readonly freeze?: boolean;
  /** LOG_LEVEL of the functions (default: as packaged). */
  readonly logLevel?: string;
  /** More environment variables of every function, over the template's (LOG_LEVEL, say). */
  readonly environment?: Readonly<Record<string, string>>;
  /** DynamoDB as AWS runs it, with these options (the default), or `false`: DynamoDB Local as it is. */
  readonly aws?: AwsDynamoDbOptions | false;
  /**
   * Version N+1's package (harness/versions.ts, `nextPackage`): a function can then run it, from
   * the start (`versions`) or from a deploy (`Fleet.deploy`).
   */
  readonly next?: Pick<Packaged, 'dir' | 'template'>;
  /** The version each function starts at, by short name; `current` (`packaged`) for any not named. */
  readonly versions?: Readonly<Record<string, Version>>;
}

export interface Fleet {
  /** The gateway's address: the API's base URL. */
  readonly url: string;
  readonly table: string;
  /** Between every container and DynamoDB: inject faults, and see every request. */
  readonly proxy: FaultProxy;
  /** DynamoDB as AWS runs it, and what it did (undefined on DynamoDB Local as it is). */
  readonly dynamodb: AwsDynamoDb | undefined;
  readonly node: LambdaNode;
  readonly gateway: Gateway;
  /** Each function's pool, by short name. */
  readonly pools: ReadonlyMap<string, FunctionPool>;
  stats(name: string): PoolStats;
  /** Every line the functions wrote, oldest first, by short name. */
  logs(name?: string): string[];
  /** What the gateway saw of each request. */
  records(): readonly GatewayRecord[];
  /**
   * Deploys `version` of function `name` (its short name), as Lambda does: the requests that come
   * after go to new containers of that version, and the warm ones of the other finish their
   * invocation and are retired. Needs FleetOptions.next.
   */
  deploy(name: string, version: Version): void;
  /** The version each function runs now, by short name. */
  versions(): Record<string, Version>;
  /**
   * Every DynamoDB action the containers performed, as IAM names it (`dynamodb:PutItem`): a
   * transaction's items count as the actions they are (Put, Update, Delete, ConditionCheck).
   */
  dynamoDbActions(): Set<string>;
  stop(): Promise<void>;
}

const DEFAULT_CAP = 8;

function ref(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if ('Ref' in value) return String(value.Ref);
  if ('Fn::GetAtt' in value && Array.isArray(value['Fn::GetAtt'])) return String(value['Fn::GetAtt'][0]);
  if ('Fn::Join' in value && Array.isArray(value['Fn::Join'])) {
    const parts = (value['Fn::Join'] as unknown[])[1];
    return Array.isArray(parts) ? parts.map(ref).find((found) => found !== undefined) : undefined;
  }
  return undefined;
}

/** The IAM actions one DynamoDB request performs. */
export function actionsOf(request: SeenRequest): string[] {
  if (request.operation === 'TransactWriteItems') {
    const items = (JSON.parse(request.body) as { TransactItems?: Record<string, unknown>[] }).TransactItems ?? [];
    const kinds = { Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem', ConditionCheck: 'ConditionCheckItem' };
    return items.flatMap((item) =>
      Object.entries(kinds)
        .filter(([kind]) => kind in item)
        .map(([, action]) => `dynamodb:${action}`),
    );
  }
  if (request.operation === 'TransactGetItems') return ['dynamodb:GetItem'];
  return request.operation === '' ? [] : [`dynamodb:${request.operation}`];
}

/** Each function of the template, with its zip unpacked under `root`. */
function functionsOf(packaged: FleetOptions['packaged'], root: string): Map<string, FunctionConfig> {
  const zips = functionZips(packaged);
  const functions = new Map<string, FunctionConfig>();
  for (const [logicalId, resource] of Object.entries(packaged.template.Resources)) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const properties = resource.Properties as {
      Handler: string;
      FunctionName: string;
      Timeout?: number;
      MemorySize?: number;
      Environment?: { Variables?: Record<string, string> };
      Code: { S3Key: string };
    };
    const name =
      properties.Code.S3Key.split('/')
        .pop()
        ?.replace(/\.zip$/, '') ?? logicalId;
    const files = zips.get(name);
    if (files === undefined) throw new Error(`no zip for ${name} (${logicalId}) in ${packaged.dir}`);
    const functionRoot = join(root, name);
    for (const [file, contents] of Object.entries(files)) {
      const path = join(functionRoot, file);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, contents);
    }
    functions.set(logicalId, {
      name,
      functionName: properties.FunctionName,
      handler: properties.Handler,
      root: functionRoot,
      // Lambda's defaults, for a function that sets none.
      timeoutSeconds: properties.Timeout ?? 3,
      memoryMb: properties.MemorySize ?? 128,
      environment: properties.Environment?.Variables ?? {},
    });
  }
  return functions;
}

let tables = 0;

export async function startFleet(options: FleetOptions): Promise<Fleet> {
  const { packaged, dynamoDbEndpoint, caps = {}, freeze = true } = options;
  const table = options.table ?? `fleet-${process.pid}-${Date.now()}-${++tables}`;
  const root = mkdtempSync(join(tmpdir(), 'todo-fleet-'));
  const node = await lambdaNode();
  const dynamodb = options.aws === false ? undefined : awsDynamoDb(dynamoDbEndpoint, options.aws);
  const proxy = await startFaultProxy(dynamodb ?? dynamoDbEndpoint);
  const admin = localClient(dynamoDbEndpoint);
  const pools = new Map<string, FunctionPool>();
  const output = new Map<string, string[]>();
  /** Each function's versions, built, and the one it runs now. */
  const builds = new Map<string, Partial<Record<Version, { config: FunctionConfig; start: () => Container }>>>();
  const running = new Map<string, Version>();
  let gateway: Gateway | undefined;
  try {
    await ensureTable(admin, table);
    const functions = functionsOf(packaged, join(root, 'current'));
    const nextFunctions = options.next && functionsOf(options.next, join(root, 'next'));
    const environment = {
      AWS_REGION: LOCAL_REGION,
      AWS_DEFAULT_REGION: LOCAL_REGION,
      AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
      DYNAMODB_ENDPOINT: proxy.endpoint,
      // Only where the host's Node stands in for Node 22 (harness/lambda-node.ts).
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    };
    const overrides = {
      TODOS_TABLE: table,
      ...(options.logLevel === undefined ? {} : { LOG_LEVEL: options.logLevel }),
      ...options.environment,
    };
    for (const [logicalId, config] of functions) {
      const lines: string[] = [];
      output.set(config.name, lines);
      // Each version of the function: its config and how a container of it starts.
      function versionOf(of: FunctionConfig): { config: FunctionConfig; start: () => Container } {
        const withTable: FunctionConfig = { ...of, environment: { ...of.environment, ...overrides } };
        return {
          config: withTable,
          start: () => new Container(withTable, node.path, environment, (line) => lines.push(line), freeze),
        };
      }
      const nextConfig = nextFunctions?.get(logicalId);
      const built = {
        current: versionOf(config),
        ...(nextConfig === undefined ? {} : { next: versionOf(nextConfig) }),
      };
      builds.set(config.name, built);
      const first = options.versions?.[config.name] ?? 'current';
      const initial = built[first];
      if (initial === undefined) throw new Error(`no version ${first} of ${config.name}: FleetOptions.next is needed`);
      running.set(config.name, first);
      pools.set(config.name, new FunctionPool(initial.config, initial.start, caps[config.name] ?? DEFAULT_CAP));
    }
    const resources = packaged.template.Resources;
    const routes = Object.values(resources)
      .filter((resource): resource is Resource => resource.Type === 'AWS::ApiGatewayV2::Route')
      .map((route) => {
        const integration = resources[ref(route.Properties.Target) ?? ''];
        const functionId = ref(integration?.Properties.IntegrationUri) ?? '';
        const name = functions.get(functionId)?.name;
        const pool = name === undefined ? undefined : pools.get(name);
        if (pool === undefined) throw new Error(`route ${String(route.Properties.RouteKey)} reaches no function`);
        return { routeKey: String(route.Properties.RouteKey), invoke: (event: unknown) => pool.invoke(event) };
      });
    const api = Object.values(resources).find((resource) => resource.Type === 'AWS::ApiGatewayV2::Api');
    const cors: Cors = api?.Properties.CorsConfiguration ?? {};
    gateway = await startGateway(routes, cors);
  } catch (error) {
    for (const pool of pools.values()) pool.stop();
    await proxy.close();
    dynamodb?.close();
    admin.destroy();
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  const started = gateway;
  return {
    url: started.url,
    table,
    proxy,
    dynamodb,
    node,
    gateway: started,
    pools,
    stats(name) {
      const pool = pools.get(name);
      if (pool === undefined) throw new Error(`no function ${name}`);
      return pool.stats();
    },
    logs(name) {
      return name === undefined ? [...output.values()].flat() : [...(output.get(name) ?? [])];
    },
    records: () => started.records,
    deploy(name, version) {
      const pool = pools.get(name);
      const build = builds.get(name)?.[version];
      if (pool === undefined || build === undefined) throw new Error(`no version ${version} of function ${name}`);
      pool.redeploy(build.config, build.start);
      running.set(name, version);
    },
    versions: () => Object.fromEntries(running),
    dynamoDbActions: () => new Set(proxy.seen.flatMap(actionsOf)),
    async stop() {
      await started.close();
      for (const pool of pools.values()) pool.stop();
      await proxy.close();
      dynamodb?.close();
      admin.destroy();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
