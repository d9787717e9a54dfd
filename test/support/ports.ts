/**
 * A port the local workflow suggests when one is busy (serverless/plugins/local-workflow/ports.cjs):
 * the first port after the busy one that was free when it checked, and not the other setting's. A
 * test cannot know which ports other processes held at that moment, so it reads the suggestion
 * from the line and holds it to what it must be: after the busy port, within the few next, and not
 * the one it would clash with.
 */
export function suggestedPort(line: string, setting: 'PORT' | 'LAMBDA_PORT', after: number, notAlso?: number): number {
  const match = new RegExp(`e\\.g\\. ${setting}=(\\d+)`).exec(line);
  if (match === null) throw new Error(`no ${setting} suggested in: ${line}`);
  const port = Number(match[1]);
  // A few in a row may be busy on a machine running other tests; past that, the suggestion is wrong.
  if (port <= after || port > after + 20 || port === notAlso) {
    throw new Error(`${setting}=${port} suggested after ${after}${notAlso === undefined ? '' : ` (not ${notAlso})`}`);
  }
  return port;
}
