// @ts-check
'use strict';

/**
 * The operations plugin: what tells the owner of a deployed stage that it is failing and how it is
 * doing. At package time (so on `serverless deploy` too) it adds to the stack
 * - CloudWatch alarms (operations/alarms.cjs);
 * - the SNS topic they notify, and an email subscription to it when an address is given
 *   (operations/alarm-topic.cjs);
 * - one CloudWatch dashboard for the stage (operations/dashboard.cjs);
 * each naming the resources of the same stack by Ref, so a stage's alarms watch that stage only.
 *
 * It reads `custom.operations` in serverless.yml: `alarms` (`on`, or `off` for none of the above)
 * and `alarmEmail` (an address, or empty for no subscription).
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
    const { alarms: wanted, alarmEmail } = this.settings();
    if (wanted === 'off') return;
    const template = this.serverless.service.provider.compiledCloudFormationTemplate;
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
    const { alarms: wanted = 'on', alarmEmail = '' } = this.serverless.service.custom.operations ?? {};
    const problem =
      problemWith('alarms', wanted) ?? (alarmEmail === '' ? undefined : problemWith('alarmEmail', alarmEmail));
    if (problem !== undefined) throw new this.serverless.classes.Error(problem, 'TODO_INVALID_PARAM');
    return { alarms: String(wanted), alarmEmail: String(alarmEmail) };
  }
}

module.exports = OperationsPlugin;
