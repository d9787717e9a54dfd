// @ts-check
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // starter/ holds files of the project `npm run starter` writes; they are linted there, where they run.
  { ignores: ['node_modules/', '.esbuild/', '.serverless/', 'coverage/', 'starter/'] },
  eslint.configs.recommended,
  // Type-aware rules: they catch floating promises and unsafe `any` flows that syntax rules cannot.
  tseslint.configs.strictTypeChecked,
  tseslint.configs.stylisticTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Numbers in template literals are fine: ids and ports are numbers.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
    },
  },
  { files: ['**/*.mjs'], extends: [tseslint.configs.disableTypeChecked] },
  {
    // CommonJS files (the local serverless plugin, which serverless loads with require()):
    // require() is their import syntax, and the TypeScript import rule does not apply.
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: globals.node },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // One function style (docs/contributing.md): a top-level function is a `function` declaration;
    // an arrow is for a callback, or for a const whose type annotation is the point
    // (`export const list: TodoStore['list'] = …`).
    files: [
      'lib/**/*.ts',
      'functions/**/*.ts',
      'harness/**/*.ts',
      'scripts/**/*.ts',
      'bench/**/*.ts',
      'smoke/**/*.ts',
      'serverless/**/*.cjs',
    ],
    rules: { 'func-style': ['error', 'declaration', { allowTypeAnnotation: true }] },
  },
  prettier,
);
