// ESLint's flat config for the course's JavaScript: the explorers' page scripts, shipped as package data beside
// their Python modules (lecture_lib/explorers/*.js). `make lint` runs it (the versions are pinned in package.json
// and package-lock.json).
const js = require('@eslint/js');
const globals = require('globals');

// Mistakes a browser would only show at run time, on the one page and move that reaches the line.
const rules = {
  ...js.configs.recommended.rules,
  eqeqeq: ['error', 'always'],
  'no-var': 'error',
  'prefer-const': ['error', { destructuring: 'all' }],
  'no-unused-vars': ['error', { args: 'after-used', caughtErrors: 'none' }],
  'no-use-before-define': ['error', { functions: false, classes: true, variables: false }],
  'no-implicit-globals': 'error',
  'no-shadow-restricted-names': 'error',
  'no-throw-literal': 'error',
  'no-self-compare': 'error',
  'no-unmodified-loop-condition': 'error',
  'no-unreachable-loop': 'error',
  'no-promise-executor-return': 'error',
  'no-constant-binary-expression': 'error',
  'array-callback-return': 'error',
};

module.exports = [
  { ignores: ['.venv/**', 'build/**', 'site/**', 'lite/**', 'course/**', 'node_modules/**'] },
  {
    // anywidget's front end: an ES module (export default { render }) in the page
    files: ['lecture_lib/explorers/live_figure.js'],
    languageOptions: { ecmaVersion: 2022, sourceType: 'module', globals: { ...globals.browser } },
    rules,
  },
  {
    // the controls' keyboard and screen-reader script: a classic script run by IPython's Javascript display
    files: ['lecture_lib/**/*.js'],
    ignores: ['lecture_lib/explorers/live_figure.js'],
    languageOptions: { ecmaVersion: 2022, sourceType: 'script', globals: { ...globals.browser } },
    rules,
  },
  {
    files: ['eslint.config.js'],
    languageOptions: { ecmaVersion: 2022, sourceType: 'commonjs', globals: { ...globals.node } },
    rules,
  },
];
