import { readFileSync, readdirSync } from 'node:fs';

/** Linux's clock ticks per second for /proc times (USER_HZ), 100 on every common kernel. */
const TICKS_PER_SECOND = 100;

/** The fields of /proc/<pid>/stat after the parenthesised command name. */
function statFields(pid: number | string): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/**
 * The serverless node process in the process group that `npm start` leads (the group also
 * holds npm and a shell, whose command lines name serverless too).
 */
export function serverlessPid(groupId: number): number {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Field 5 of stat is the process group: the third after the command name.
      if (Number(statFields(entry)[2]) !== groupId) continue;
      const [program = '', ...args] = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (program.endsWith('node') && args.some((arg) => arg.includes('serverless'))) return Number(entry);
    } catch {
      // The process went away while we looked.
    }
  }
  throw new Error(`no serverless process in group ${groupId}`);
}

export function rssMb(pid: number): number {
  const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return rss ? Math.round(Number(rss[1]) / 1024) : Number.NaN;
}

/** CPU time the process has used, user and system, in milliseconds. */
export function cpuMs(pid: number | string): number {
  const fields = statFields(pid);
  // utime and stime are fields 14 and 15: the 12th and 13th after the command name.
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
}

/**
 * CPU time used so far, in milliseconds, by the processes that serve a fleet on this machine:
 * DynamoDB Local (its JVM) and the Lambda containers (harness/lambda-runtime.cjs). Processes
 * that have exited are not counted: read it around a span in which none do.
 */
export function fleetCpuMs(): { dynamoDbLocal: number; containers: number } {
  const totals = { dynamoDbLocal: 0, containers: 0 };
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (command.includes('DynamoDBLocal')) totals.dynamoDbLocal += cpuMs(entry);
      else if (command.includes('lambda-runtime.cjs')) totals.containers += cpuMs(entry);
    } catch {
      // The process went away while we looked.
    }
  }
  return totals;
}

/**
 * The machine's CPU time so far, busy and in all, in milliseconds summed over its cores, from
 * /proc/stat: whatever runs on it, the fleet or anything else. Busy over all, around a span, is
 * how saturated the machine was.
 */
export function machineCpuMs(): { busy: number; total: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  // cpu user nice system idle iowait irq softirq steal ...
  const ticks = line.split(/\s+/).slice(1, 9).map(Number);
  const total = ticks.reduce((sum, tick) => sum + tick, 0);
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  return { busy: ((total - idle) * 1000) / TICKS_PER_SECOND, total: (total * 1000) / TICKS_PER_SECOND };
}
