/** Value generators for the property tests: the inputs that have broken services before. */
import fc from 'fast-check';

/** Strings that have broken services before: NUL, lone surrogates, astral characters, huge, markup, SQL. */
export const nastyString = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\uD800',
    '\uDC00x',
    '𝕏🎬',
    'é',
    '%00',
    '%zz',
    "'; drop table players; --",
    '<script>alert(1)</script>',
    '#ff00aa',
    'https://x.test/v.mp4',
    'ftp://x/y',
    'x'.repeat(300),
    ',',
  ),
);

/** Numbers around every boundary a schema or a column has: int4, safe integers, floats, signs. */
export const nastyNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(
    0,
    -0,
    -1,
    1,
    99,
    100,
    500,
    501,
    4320,
    4321,
    7680,
    7681,
    2 ** 31 - 1,
    2 ** 31,
    -(2 ** 31) - 1,
    2 ** 53,
    Number.MAX_SAFE_INTEGER + 2,
    1e21,
    1e308,
    -1e308,
    0.5,
    1.0000001,
  ),
);

export const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 3, arbitrary: nastyString },
  { weight: 3, arbitrary: nastyNumber },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constantFrom(null, [], {}, [null], { a: 1 }, ['a', 'b'], [1, 2]) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
);

/**
 * Values of the right JSON type that schemas tend to let through and storage does not: integers past
 * int4, bigint and 2^53, NUL characters, lone surrogates, very long text.
 */
export const extremeValue = fc.constantFrom<unknown>(
  1e308,
  1e21,
  2 ** 63,
  2 ** 53 + 2,
  Number.MAX_SAFE_INTEGER,
  2 ** 31,
  2 ** 32,
  -(2 ** 31) - 1,
  -1e308,
  '\u0000',
  'a\u0000b',
  '\uD800',
  'x\uDFFF',
  'x'.repeat(70_000),
  ' ',
  '',
);
