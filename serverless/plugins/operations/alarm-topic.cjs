// @ts-check
'use strict';

/**
 * The SNS topic the alarms notify, its policy, and an email subscription when an address is given.
 *
 * Not encrypted: CloudWatch cannot publish to a topic under the AWS managed key (aws/sns), and a
 * customer managed key costs $1 a month, which an idle stage would then cost. What the topic
 * carries is an alarm's name, state, threshold and reason: nothing of a request, a record or a
 * caller. (No Control Tower rule that cfn-guard runs here covers SNS, so cfn-guard-exceptions.yaml
 * has no entry for it; docs/operations.md says why.)
 */

/**
 * @typedef {import('./stack.cjs').Stack} Stack
 * @typedef {import('./stack.cjs').Resource} Resource
 */

/**
 * @param {Stack} stack
 * @param {string} email an address to subscribe, or '' for none
 * @param {string[]} alarmIds the logical ids of the alarms that notify it
 * @returns {Record<string, Resource>}
 */
function alarmTopic(stack, email, alarmIds) {
  return {
    AlarmTopic: {
      Type: 'AWS::SNS::Topic',
      Properties: { TopicName: `${stack.prefix}-alarms`, DisplayName: `${stack.prefix} alarms` },
    },
    // Only this stage's alarms may publish (the default policy lets the whole account).
    AlarmTopicPolicy: {
      Type: 'AWS::SNS::TopicPolicy',
      Properties: {
        Topics: [{ Ref: 'AlarmTopic' }],
        PolicyDocument: {
          Version: '2012-10-17',
          Statement: [
            {
              Sid: 'ThisStagesAlarms',
              Effect: 'Allow',
              Principal: { Service: 'cloudwatch.amazonaws.com' },
              Action: 'sns:Publish',
              Resource: { Ref: 'AlarmTopic' },
              // Each alarm by its ARN: a name pattern would let the alarms of a stage whose name
              // starts with this one's (prod, prod-eu) publish here too.
              Condition: {
                ArnEquals: { 'aws:SourceArn': alarmIds.map((id) => ({ 'Fn::GetAtt': [id, 'Arn'] })) },
                StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } },
              },
            },
          ],
        },
      },
    },
    // SNS mails the address a confirmation link first; nothing is delivered until it is followed.
    ...(email === ''
      ? {}
      : {
          AlarmEmailSubscription: {
            Type: 'AWS::SNS::Subscription',
            Properties: { TopicArn: { Ref: 'AlarmTopic' }, Protocol: 'email', Endpoint: email },
          },
        }),
  };
}

module.exports = { alarmTopic };
