// @ts-check
'use strict';

const path = require('node:path');

/** The line `npm run mutate` waits for (scripts/mutate.ts): the first test that failed, as soon as it fails. */
const CAUGHT = 'mutant caught by: ';

/** A failure's first line that says something (jest's messages start with the matcher's name or the error's). */
function firstLine(/** @type {string | undefined} */ message) {
  const line = (message ?? '').split('\n').find((text) => text.trim() !== '') ?? '';
  return line.trim().slice(0, 200);
}

/**
 * jest's reporter for `npm run mutate`: it prints nothing but the first failure, on one line, the
 * moment a test case fails (jest's own reporters print a file's results when the file ends, and
 * the simulator's file runs for minutes). The command stops jest there: a mutant is caught by one
 * failing test, and the rest of the file would only cost time.
 */
class FirstFailure {
  #told = false;

  /**
   * @param {import('@jest/reporters').Test} test
   * @param {import('@jest/test-result').AssertionResult} result
   */
  onTestCaseResult(test, result) {
    if (result.status === 'failed')
      this.#tell(test.path, `${result.fullName}: ${firstLine(result.failureMessages[0])}`);
  }

  /**
   * A file that could not run at all (it did not load, a hook failed) has no failed test case.
   * @param {import('@jest/reporters').Test} test
   * @param {import('@jest/test-result').TestResult} result
   */
  onTestResult(test, result) {
    if (result.testExecError) this.#tell(test.path, `did not run: ${firstLine(result.testExecError.message)}`);
    const failed = result.testResults.find(({ status }) => status === 'failed');
    if (failed) this.#tell(test.path, `${failed.fullName}: ${firstLine(failed.failureMessages[0])}`);
  }

  /** @param {string} file @param {string} what */
  #tell(file, what) {
    if (this.#told) return;
    this.#told = true;
    process.stdout.write(`${CAUGHT}${path.relative(process.cwd(), file)} › ${what}\n`);
  }
}

module.exports = FirstFailure;
module.exports.CAUGHT = CAUGHT;
