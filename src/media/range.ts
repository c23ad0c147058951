import type { ByteRange } from './file-store.ts';

/**
 * Reads a `Range` header against a file of `size` bytes (RFC 9110 §14):
 * - a single satisfiable `bytes=` range → that range (clamped to the file);
 * - a syntactically valid header none of whose ranges can be satisfied → 'unsatisfiable' (416);
 * - anything else (no header, another unit, malformed, several ranges) → null: the whole file (200),
 *   which the RFC allows a server to answer to any Range request.
 */
export function parseRange(header: string | undefined, size: number): ByteRange | 'unsatisfiable' | null {
  if (header === undefined) return null;
  const m = /^\s*bytes\s*=\s*(.+)$/i.exec(header);
  if (!m) return null;
  const specs = m[1].split(',').map((s) => s.trim());
  if (specs.some((s) => s === '')) return null;
  const ranges: Array<ByteRange | 'none'> = [];
  for (const spec of specs) {
    const r = /^(\d*)\s*-\s*(\d*)$/.exec(spec);
    if (!r || (r[1] === '' && r[2] === '')) return null;
    if (r[1] === '') {
      // Suffix range: the last N bytes.
      const n = Number(r[2]);
      ranges.push(n === 0 || size === 0 ? 'none' : { start: Math.max(0, size - n), end: size - 1 });
      continue;
    }
    const start = Number(r[1]);
    const end = r[2] === '' ? size - 1 : Number(r[2]);
    if (r[2] !== '' && end < start) return null; // invalid range-spec: the header is ignored
    ranges.push(start >= size ? 'none' : { start, end: Math.min(end, size - 1) });
  }
  const satisfiable = ranges.filter((r): r is ByteRange => r !== 'none');
  if (satisfiable.length === 0) return 'unsatisfiable';
  if (ranges.length > 1) return null;
  return satisfiable[0];
}
