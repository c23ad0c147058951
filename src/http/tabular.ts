import { stringify } from 'csv-stringify/sync';
import type ExcelJSModule from 'exceljs';
import { whenUsed } from '../lib/when-used.ts';

const excel = whenUsed<typeof ExcelJSModule>('exceljs');

/** One row per item, one column per field; nested objects become `a.b` columns, arrays JSON text. */
export function flatten(item: unknown, prefix = '', out: Record<string, unknown> = {}): Record<string, unknown> {
  if (item === null || typeof item !== 'object' || Array.isArray(item)) {
    out[prefix || 'value'] = Array.isArray(item) ? JSON.stringify(item) : item;
    return out;
  }
  for (const [key, value] of Object.entries(item as Record<string, unknown>)) {
    const name = prefix ? `${prefix}.${key}` : key;
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) flatten(value, name, out);
    else out[name] = Array.isArray(value) ? JSON.stringify(value) : value;
  }
  return out;
}

function table(items: unknown[]): { columns: string[]; rows: unknown[][] } {
  const flat = items.map((i) => flatten(i));
  const columns: string[] = [];
  const seen = new Set<string>();
  for (const row of flat) {
    for (const k of Object.keys(row)) {
      if (seen.has(k)) continue;
      seen.add(k);
      columns.push(k);
    }
  }
  return { columns, rows: flat.map((r) => columns.map((c) => r[c] ?? null)) };
}

const cell = (v: unknown) => (v === null || v === undefined ? '' : typeof v === 'boolean' ? String(v) : v);

/**
 * Text a spreadsheet opening the CSV would run as a formula (OWASP, CSV injection): starting with = + - @,
 * a tab, a line break or NUL, or the full-width = + - @ that some spreadsheets fold to them.
 */
const FORMULA_START = /^[=+\-@\t\r\n\0\uFF1D\uFF0B\uFF0D\uFF20]/;
/** Text that is only a decimal number (`-5`, `+1.5e3`) computes nothing: left as it is, like numbers. */
const NUMBER_TEXT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A CSV cell: such text gets a leading single quote, which spreadsheets show as text. */
function csvCell(v: unknown): unknown {
  const c = cell(v);
  return typeof c === 'string' && FORMULA_START.test(c) && !NUMBER_TEXT.test(c) ? `'${c}` : c;
}

export function toCsv(items: unknown[]): string {
  const { columns, rows } = table(items);
  // Column names too: nested objects with keys of the client's choosing become columns.
  return stringify([columns.map(csvCell), ...rows.map((r) => r.map(csvCell))]);
}

/** Strings are written as text cells (exceljs makes a formula only of a `{ formula }` value): no quote needed. */
export async function toXlsx(items: unknown[], sheetName = 'items'): Promise<Buffer> {
  const { columns, rows } = table(items);
  const workbook = new (excel().Workbook)();
  const sheet = workbook.addWorksheet(sheetName.slice(0, 31));
  sheet.addRow(columns);
  for (const r of rows) sheet.addRow(r.map(cell));
  return Buffer.from(await workbook.xlsx.writeBuffer());
}
