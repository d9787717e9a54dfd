// @ts-check
'use strict';

/**
 * A function named on the command line (`--function`, `-f`: `invoke`, `invoke local`, `logs`,
 * `deploy function`) checked against serverless.yml before anything is resolved or built. The
 * framework would say only that it "doesn't exist"; this names the closest one, in the words of
 * `npm run logs` (scripts/aws-command.ts), so a typo costs one more try, not a look at serverless.yml.
 */

const { closest } = require('fastest-levenshtein');

/**
 * Why `given` is not one of `known`, in one line; none when it is, or when no function was named.
 * @param {unknown} given the command's `function` option
 * @param {readonly string[]} known the functions serverless.yml declares, in its order
 * @returns {string[]}
 */
function functionNameProblems(given, known) {
  if (typeof given !== 'string' || known.length === 0 || known.includes(given)) return [];
  return [
    `No function "${given}" in serverless.yml: did you mean "${closest(given, [...known])}"? Functions: ${known.join(', ')}`,
  ];
}

module.exports = { functionNameProblems };
