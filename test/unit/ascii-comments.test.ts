/**
 * The build's escaping of comments (scripts/ascii-comments.mjs): what a bundle's code means is kept,
 * whatever characters its comments, strings, templates and regular expressions hold.
 */
import vm from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { asciiComments } from '../../scripts/ascii-comments.mjs';

/** What a script answers (its last expression), run in a context of its own. */
const run = (code: string) => JSON.stringify(vm.runInNewContext(code));

describe('asciiComments', () => {
  it('escapes comments only: a tagged template, a regular expression and strings keep their characters', () => {
    const code = [
      '// an em dash — and a § in a line comment',
      '/** → in a block comment, and an astral 😀 */',
      'const raw = String.raw`é→`;',
      'const re = /\\é|•/;',
      "const s = 'naïve — 😀';",
      '[raw, re.test("é"), re.test("•"), s, `${s}…`]',
    ].join('\n');
    const out = asciiComments(code);
    expect(out).toContain('// an em dash \\u2014 and a \\u00a7 in a line comment');
    expect(out).toContain('/** \\u2192 in a block comment, and an astral \\ud83d\\ude00 */');
    expect(run(out)).toBe(run(code));
    // Only what was in code is left beyond ASCII.
    expect(out.replace(/^\/\/.*$|\/\*[\s\S]*?\*\//gm, '')).toBe(code.replace(/^\/\/.*$|\/\*[\s\S]*?\*\//gm, ''));
  });

  it('leaves an ASCII script as it is', () => {
    const code = 'const a = 1; // plain\n/* plain */ a + 1';
    expect(asciiComments(code)).toBe(code);
  });

  it('any text in comments around code: the code answers the same, and the comments are ASCII', () => {
    const commentText = fc.string({ unit: 'binary', maxLength: 20 }).map((t) => t.replace(/\*\/|[\r\n\u2028\u2029]/g, ''));
    fc.assert(
      fc.property(commentText, commentText, fc.string({ unit: 'binary', maxLength: 10 }), (a, b, literal) => {
        const code = `/* ${a} */\nconst v = ${JSON.stringify(literal)}; // ${b}\nv`;
        const out = asciiComments(code);
        expect(run(out)).toBe(run(code));
        const comments = out.split('\n').filter((l, i) => i === 0 || l.includes('//'));
        for (const line of comments) expect(line.replace(/^const v = .*; \/\//, '//')).not.toMatch(/\P{ASCII}/u);
      }),
      { numRuns: 200 },
    );
  });
});
