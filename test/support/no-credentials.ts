/**
 * The environment of a command that must answer without AWS credentials (`npm run logs`, `npm run info`,
 * `npm run deploy`): no AWS_* variable, and `home` as HOME, a directory with no ~/.aws.
 */
export function noCredentials(home: string): NodeJS.ProcessEnv {
  const withoutAws: NodeJS.ProcessEnv = Object.fromEntries(
    Object.keys(process.env)
      .filter((name) => name.startsWith('AWS_'))
      .map((name) => [name, undefined]),
  );
  // On a CI machine in EC2 the SDK would otherwise find the instance's role.
  return { ...withoutAws, HOME: home, AWS_EC2_METADATA_DISABLED: 'true' };
}
