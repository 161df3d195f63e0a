// Tests the TextMate grammar (syntaxes/prism.tmLanguage.json) with the engine VS Code uses
// (vscode-textmate over the Oniguruma regex library):
//
// 1. Snippets whose tokens must get given scopes (keywords, decorators, perspectives, types,
//    numbers, strings, comments, operators, and the spellings Prism rejects).
// 2. Every `.prism` file of the repository (tests/, examples/, crates/prism_std/std): no
//    text outside a scope (only whitespace may be left with the bare `source.prism`), and no
//    `invalid` scope, except on lines whose inline annotation expects the lexer's error
//    there (`# error: [invalid-token]`, `[invalid-number]`, `[unterminated-string]`) and in
//    the parser's error-recovery tests (tests/parse/err), which are snapshots, not
//    annotated, and have lexer errors on purpose.
//
// Run by scripts/test-vscode-grammar.sh (`npm test` here after `npm ci`). Exits 1 on any
// failure, listing each one.
'use strict';

const fs = require('fs');
const path = require('path');
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

const ROOT = path.resolve(__dirname, '..', '..', '..');
const GRAMMAR = path.resolve(__dirname, '..', 'syntaxes', 'prism.tmLanguage.json');
const CORPUS = ['tests', 'examples', 'crates/prism_std/std'];
// The lexer's codes for text the grammar marks invalid.
const LEXER_CODES = ['invalid-token', 'invalid-number', 'unterminated-string'];
const ERROR_SNAPSHOTS = path.join('tests', 'parse', 'err') + path.sep;

async function loadGrammar() {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scopeName) => {
      if (scopeName !== 'source.prism') return null;
      return vsctm.parseRawGrammar(fs.readFileSync(GRAMMAR, 'utf8'), GRAMMAR);
    },
  });
  return registry.loadGrammar('source.prism');
}

/** The tokens of `text`, line by line: `{ line, text, scopes }`. */
function tokenize(grammar, text) {
  const out = [];
  let stack = vsctm.INITIAL;
  text.split(/\r\n|\r|\n/).forEach((line, i) => {
    const r = grammar.tokenizeLine(line, stack);
    for (const t of r.tokens) {
      out.push({ line: i, text: line.slice(t.startIndex, t.endIndex), scopes: t.scopes });
    }
    stack = r.ruleStack;
  });
  return out;
}

/** Expected scopes of tokens in snippets: [source, token text, a scope it must have]. */
const SNIPPETS = [
  ['@prism("global")', 'prism', 'entity.name.function.decorator.prism'],
  ['@prism("global")', '"', 'punctuation.definition.string.begin.prism'],
  ['@prism("global")', 'global', 'string.quoted.double.prism'],
  ['@requires(grid[1], block[1], thread[32], smem=1024)', 'requires', 'entity.name.function.decorator.prism'],
  ['@requires(grid[1], block[1], thread[32], smem=1024)', 'thread', 'support.type.perspective.prism'],
  ['@requires(grid[1], block[1], thread[32], smem=1024)', '32', 'constant.numeric.integer.prism'],
  ['@requires(grid[1], block[1], thread[32], smem=1024)', '32', 'meta.perspective.prism'],
  ['def warp_sum(x : float @ thread[1]) -> float @ thread[32]:', 'def', 'storage.type.function.prism'],
  ['def warp_sum(x : float @ thread[1]) -> float @ thread[32]:', 'warp_sum', 'entity.name.function.prism'],
  ['def warp_sum(x : float @ thread[1]) -> float @ thread[32]:', 'float', 'storage.type.prism'],
  ['def warp_sum(x : float @ thread[1]) -> float @ thread[32]:', '@', 'keyword.operator.perspective.prism'],
  ['def warp_sum(x : float @ thread[1]) -> float @ thread[32]:', '->', 'keyword.operator.arrow.prism'],
  ['    s : shared(float[THREADS]) @ block[1]', 'shared', 'storage.modifier.prism'],
  ['    s : shared(float[THREADS]) @ block[1]', 'THREADS', 'variable.other.constant.prism'],
  ['    s : shared(float[THREADS]) @ block[1]', 'block', 'support.type.perspective.prism'],
  ['        match split(warp):', 'match', 'keyword.control.prism'],
  ['        match split(warp):', 'split', 'support.function.builtin.prism'],
  ['        match split(warp):', 'warp', 'support.type.perspective.prism'],
  ['    with group(thread[1]):', 'group', 'support.function.builtin.prism'],
  ['    v += shfl_xor(v, 1 << d)', '+=', 'keyword.operator.assignment.augmented.prism'],
  ['    v += shfl_xor(v, 1 << d)', 'shfl_xor', 'entity.name.function.call.prism'],
  ['    v += shfl_xor(v, 1 << d)', '<<', 'keyword.operator.bitwise.shift.prism'],
  ['    if a <= b:', '<=', 'keyword.operator.comparison.prism'],
  ['    x <<= 2', '<<=', 'keyword.operator.assignment.augmented.prism'],
  ['x = 1.5 + .5 + 1e3 + 0x1F + 1_000', '1.5', 'constant.numeric.float.prism'],
  ['x = 1.5 + .5 + 1e3 + 0x1F + 1_000', '.5', 'constant.numeric.float.prism'],
  ['x = 1.5 + .5 + 1e3 + 0x1F + 1_000', '1e3', 'constant.numeric.float.prism'],
  ['x = 1.5 + .5 + 1e3 + 0x1F + 1_000', '0x1F', 'constant.numeric.hex.prism'],
  ['x = 1.5 + .5 + 1e3 + 0x1F + 1_000', '1_000', 'constant.numeric.integer.prism'],
  ['x = 1.0f', '1.0f', 'invalid.illegal.number.prism'],
  ['if a && b:', '&&', 'invalid.illegal.operator.prism'],
  ['if a != b and not c:', '!=', 'keyword.operator.comparison.prism'],
  ['if a != b and not c:', 'not', 'keyword.operator.logical.prism'],
  ['y = x # a comment', ' a comment', 'comment.line.number-sign.prism'],
  ['import lib.util as u', 'lib.util', 'entity.name.namespace.prism'],
  ['from prism.std.warp import warp_sum', 'from', 'keyword.control.import.prism'],
  ['    return true if x else False', 'true', 'constant.language.boolean.prism'],
  ['    with unsafe("__nanosleep(100);"):', 'unsafe', 'keyword.other.prism'],
  ['    t = $x', '$', 'invalid.illegal.character.prism'],
];

function snippetFailures(grammar) {
  const failures = [];
  for (const [src, text, scope] of SNIPPETS) {
    const tokens = tokenize(grammar, src);
    const t = tokens.find((x) => x.text === text);
    if (!t) {
      failures.push(`snippet \`${src}\`: no token \`${text}\` (tokens: ${tokens.map((x) => JSON.stringify(x.text)).join(' ')})`);
    } else if (!t.scopes.includes(scope)) {
      failures.push(`snippet \`${src}\`: \`${text}\` has ${t.scopes.join(' ')}, not ${scope}`);
    }
  }
  return failures;
}

function corpusFiles() {
  const out = [];
  const walk = (dir) => {
    if (!fs.existsSync(dir)) return;
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.prism')) out.push(p);
    }
  };
  CORPUS.forEach((d) => walk(path.join(ROOT, d)));
  return out.sort();
}

function corpusFailures(grammar) {
  const failures = [];
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let files = 0;
  let skipped = 0;
  let tokens = 0;
  for (const file of corpusFiles()) {
    let text;
    try {
      text = decoder.decode(fs.readFileSync(file));
    } catch {
      // Regression files that are not UTF-8 on purpose: the compiler refuses to read them.
      skipped += 1;
      continue;
    }
    files += 1;
    const lines = text.split(/\r\n|\r|\n/);
    const rel = path.relative(ROOT, file);
    for (const t of tokenize(grammar, text)) {
      tokens += 1;
      if (t.text.trim() === '') continue;
      const where = `${rel}:${t.line + 1}: \`${t.text}\``;
      if (t.scopes.length < 2) {
        failures.push(`${where} has no scope`);
      }
      const invalid = t.scopes.find((s) => s.startsWith('invalid'));
      const expected = rel.startsWith(ERROR_SNAPSHOTS) || LEXER_CODES.some((c) => lines[t.line].includes(`[${c}]`));
      if (invalid && !expected) {
        failures.push(`${where} is ${invalid}, and the line expects no lexer error`);
      }
    }
  }
  return { failures, files, skipped, tokens };
}

async function main() {
  const grammar = await loadGrammar();
  const failures = snippetFailures(grammar);
  const corpus = corpusFailures(grammar);
  failures.push(...corpus.failures);
  if (corpus.files < 300) failures.push(`only ${corpus.files} corpus files found under ${ROOT}`);
  for (const f of failures.slice(0, 200)) console.error(`FAIL ${f}`);
  if (failures.length > 200) console.error(`... and ${failures.length - 200} more`);
  console.log(
    `grammar: ${SNIPPETS.length} snippets; ${corpus.files} corpus files (${corpus.tokens} tokens), ` +
      `${corpus.skipped} skipped as not UTF-8; ${failures.length} failures`,
  );
  process.exit(failures.length === 0 ? 0 : 1);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
