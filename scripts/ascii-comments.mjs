import { parse } from 'acorn';

/**
 * `text` with every character beyond ASCII in its comments written as its escape (each UTF-16 unit),
 * which changes nothing there. esbuild escapes them in code (its default charset) but leaves the
 * packages' and our own comments' (an em dash, a §, an arrow); an ASCII bundle is read without
 * decoding UTF-8 (scripts/run-bundle.mjs). The comments are found by parsing (acorn): in code, an
 * escape can mean something else (a tagged template's raw text, a regular expression's `\\é`). A
 * character left in code keeps the bundle UTF-8, and test/bundle.test.ts says so. The line and
 * paragraph separators (U+2028, U+2029) are left as they are: in a comment they end a line, which an
 * escape would not.
 */
export function asciiComments(text) {
  if (!/[^\x20-\x7e\t\n\r]/.test(text)) return text;
  const comments = [];
  parse(text, {
    ecmaVersion: 'latest',
    sourceType: 'script',
    allowHashBang: true,
    allowReturnOutsideFunction: true,
    onComment: (_block, _text, start, end) => comments.push([start, end]),
  });
  let out = '';
  let at = 0;
  for (const [start, end] of comments) {
    out +=
      text.slice(at, start) + text.slice(start, end).replace(/[\u0080-\u2027\u202a-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
    at = end;
  }
  return out + text.slice(at);
}
