// @ts-check
'use strict';

/**
 * The operations plugin: what tells the owner of a deployed stage that it is failing and how it is
 * doing. At package time (so on `serverless deploy` too) it adds to the stack
 * - CloudWatch alarms (operations/alarms.cjs);
 * - the SNS topic they notify, and an email subscription to it when an address is given
 *   (operations/alarm-topic.cjs);
 * - one CloudWatch dashboard for the stage (operations/dashboard.cjs);
 * each naming the resources of the same stack by Ref, so a stage's alarms watch that stage only;
 * and with `concurrencyCaps` off it takes every function's reserved concurrency out.
 *
 * It reads `custom.operations` in serverless.yml: `alarms` (`on`, or `off` for none of the above),
 * `alarmEmail` (an address, or empty for no subscription) and `concurrencyCaps` (`on` or `off`).
 */

const { problemWith } = require('./stage-params.cjs');
const { alarmTopic } = require('./operations/alarm-topic.cjs');
const { alarms } = require('./operations/alarms.cjs');
const { dashboard } = require('./operations/dashboard.cjs');
const { stackOf } = require('./operations/stack.cjs');

/** @typedef {import('./operations/stack.cjs').Serverless} Serverless */

class OperationsPlugin {
  /** @param {Serverless} serverless */
  constructor(serverless) {
    this.serverless = serverless;
    this.hooks = {
      // After resources.Resources are merged in: only then does the template hold the table.
      'after:aws:package:finalize:mergeCustomProviderResources': () => {
        this.addOperations();
      },
    };
  }

  addOperations() {
    const { alarms: wanted, alarmEmail, concurrencyCaps } = this.settings();
    const template = this.serverless.service.provider.compiledCloudFormationTemplate;
    if (concurrencyCaps === 'off') withoutCaps(template);
    if (wanted === 'off') return;
    const stack = stackOf(this.serverless, template);
    const stackAlarms = alarms(stack);
    const added = {
      ...alarmTopic(stack, alarmEmail, Object.keys(stackAlarms)),
      ...stackAlarms,
      Dashboard: dashboard(stack, Object.keys(stackAlarms)),
    };
    for (const id of Object.keys(added)) {
      if (id in template.Resources) {
        throw new this.serverless.classes.Error(
          `The operations plugin would add ${id}, which the stack has already`,
          'TODO_OPERATIONS_CLASH',
        );
      }
    }
    Object.assign(template.Resources, added);
    template.Outputs = {
      ...template.Outputs,
      AlarmTopicArn: { Description: 'The SNS topic the alarms notify', Value: { Ref: 'AlarmTopic' } },
      DashboardUrl: {
        Description: 'The CloudWatch dashboard of the stage',
        Value: {
          'Fn::Sub':
            'https://console.aws.amazon.com/cloudwatch/home?region=${AWS::Region}#dashboards/dashboard/${Dashboard}',
        },
      },
    };
  }

  /**
   * `custom.operations`, as resolved: the local workflow plugin checked what it could see before
   * the framework resolved anything, and a value serverless.yml builds from variables is checked here.
   */
  settings() {
    const operations = this.serverless.service.custom.operations ?? {};
    const { alarms: wanted = 'on', alarmEmail = '', concurrencyCaps = 'on' } = operations;
    const problem =
      problemWith('alarms', wanted) ??
      problemWith('concurrencyCaps', concurrencyCaps) ??
      (alarmEmail === '' ? undefined : problemWith('alarmEmail', alarmEmail));
    if (problem !== undefined) throw new this.serverless.classes.Error(problem, 'TODO_INVALID_PARAM');
    return { alarms: String(wanted), alarmEmail: String(alarmEmail), concurrencyCaps: String(concurrencyCaps) };
  }
}

/**
 * Takes every function's reserved concurrency out of `template`: Lambda keeps 100 of an account's
 * concurrency unreserved, so an account whose quota is under what the caps set aside plus 100
 * cannot deploy them.
 * @param {{ Resources: Record<string, { Type: string, Properties?: Record<string, unknown> }> }} template
 */
function withoutCaps(template) {
  for (const resource of Object.values(template.Resources)) {
    if (resource.Type === 'AWS::Lambda::Function') delete resource.Properties?.ReservedConcurrentExecutions;
  }
}

module.exports = OperationsPlugin;
