import { describe, expect, it } from '@jest/globals';
import { checkJava } from '../support/dynamodb-local-process';

/** DynamoDB Local is a Java program: without Java the commands that need it say what to install. */
describe('checkJava', () => {
  it('passes on this machine, which has Java 17 or newer', () => {
    expect(() => {
      checkJava();
    }).not.toThrow();
  });

  it('names what to install when there is no java on the PATH', () => {
    const saved = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      expect(() => {
        checkJava();
      }).toThrow(/needs Java 17 or newer.*apt-get install openjdk-17-jre-headless.*brew install openjdk@17/);
    } finally {
      process.env.PATH = saved;
    }
  });

  it('finds the version line though Java prints others first (JAVA_TOOL_OPTIONS)', () => {
    const saved = process.env.JAVA_TOOL_OPTIONS;
    process.env.JAVA_TOOL_OPTIONS = '-Dfile.encoding=UTF-8';
    try {
      expect(checkJava()).toMatch(/version "\d+/);
    } finally {
      if (saved === undefined) delete process.env.JAVA_TOOL_OPTIONS;
      else process.env.JAVA_TOOL_OPTIONS = saved;
    }
  });
});
