// @ts-check
'use strict';

const path = require('node:path');

/** The start of the line `npm run mutate` reads (scripts/mutate.ts) for each test that fails, as soon as it fails. */
const FAILED = 'test failed: ';

/** A failure's first line that says something (jest's messages start with the matcher's name or the error's). */
function firstLine(/** @type {string | undefined} */ message) {
  const line = (message ?? '').split('\n').find((text) => text.trim() !== '') ?? '';
  return line.trim().slice(0, 200);
}

/**
 * jest's reporter for `npm run mutate`: it prints nothing but the tests that fail, one line each,
 * the moment each fails (jest's own reporters print a file's results when the file ends, and the
 * simulator's file runs for minutes). The command stops jest at the first that failed other than
 * by its timeout (scripts/mutation.ts, `byTimeout`): a mutant is caught by one failing test, and
 * the rest would only cost time; a test that met its timeout is not a catch, and the run goes on.
 */
class FailedTests {
  /** What was told already: onTestResult may see again what onTestCaseResult told. */
  #told = new Set();

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
    for (const failed of result.testResults.filter(({ status }) => status === 'failed'))
      this.#tell(test.path, `${failed.fullName}: ${firstLine(failed.failureMessages[0])}`);
  }

  /** @param {string} file @param {string} what */
  #tell(file, what) {
    const line = `${FAILED}${path.relative(process.cwd(), file)} › ${what}`;
    if (this.#told.has(line)) return;
    this.#told.add(line);
    process.stdout.write(`${line}\n`);
  }
}

module.exports = FailedTests;
module.exports.FAILED = FAILED;
