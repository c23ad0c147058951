import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { chooseFormat } from '../../src/http/negotiation.ts';
import { flatten, toCsv, toXlsx } from '../../src/http/tabular.ts';

describe('flatten', () => {
  it('flattens nested objects as a.b and writes arrays as JSON text', () => {
    expect(flatten({ id: 1, urls: { sd: 'x', hd: null }, deep: { a: { b: true } }, tags: ['a', 'b'], list: [{ x: 1 }] })).toEqual({
      id: 1,
      'urls.sd': 'x',
      'urls.hd': null,
      'deep.a.b': true,
      tags: '["a","b"]',
      list: '[{"x":1}]',
    });
  });

  it('turns a scalar item into a `value` column', () => {
    expect(flatten(5)).toEqual({ value: 5 });
    expect(flatten([1])).toEqual({ value: '[1]' });
  });
});

describe('toCsv', () => {
  it('writes one header row with the union of columns, in first-seen order, and one row per item', () => {
    const csv = toCsv([
      { id: 1, a: { b: 'x,y' } },
      { id: 2, c: true, a: { b: null } },
    ]);
    expect(csv).toBe('id,a.b,c\n1,"x,y",\n2,,true\n');
  });

  it('answers only a header for no items', () => {
    expect(toCsv([]).trim()).toBe('');
  });
});

describe('toXlsx', () => {
  it('writes the same table as the CSV', async () => {
    const buf = await toXlsx(
      [
        { id: 1, a: { b: 'x' } },
        { id: 2, tags: ['t'] },
      ],
      'things',
    );
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(buf as unknown as ArrayBuffer);
    const sheet = wb.getWorksheet('things')!;
    const rows: unknown[][] = [];
    sheet.eachRow((row) => rows.push((row.values as unknown[]).slice(1)));
    expect(rows[0]).toEqual(['id', 'a.b', 'tags']);
    expect(rows[1].slice(0, 2)).toEqual([1, 'x']);
    expect(rows[2][0]).toBe(2);
    expect(rows[2][2]).toBe('["t"]');
  });
});

describe('chooseFormat', () => {
  it('honours q-values and only offers tables for lists', () => {
    expect(chooseFormat(undefined, false)).toBe('json');
    expect(chooseFormat('', true)).toBe('json');
    expect(chooseFormat('text/csv', true)).toBe('csv');
    expect(chooseFormat('text/csv', false)).toBeNull();
    expect(chooseFormat('text/csv;q=0.5, application/json', true)).toBe('json');
    expect(chooseFormat('application/json;q=0.1, text/csv', true)).toBe('csv');
    expect(chooseFormat('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', true)).toBe('xlsx');
    expect(chooseFormat('text/*', true)).toBe('csv');
    expect(chooseFormat('text/html', true)).toBeNull();
    expect(chooseFormat('application/json;q=0', true)).toBeNull();
    expect(chooseFormat('*/*', false)).toBe('json');
  });
});
