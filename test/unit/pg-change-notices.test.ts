import { describe, expect, it } from 'vitest';
import { CHANGE_CHANNEL, ChangeNotices, ORGANIZATION_CHANNEL, TABLE_CHANNEL } from '../../src/db/pg-change-notices.ts';
import type { RowsTouched } from '../../src/db/write-scope.ts';

const OURS = 'app';
const OWN = 11;
const OTHER = 22;

/** Notices over a clock that writes down what it is told; `settle` runs what the notices left for afterwards. */
function setup() {
  const told: string[] = [];
  const later: Array<() => void> = [];
  const clock = {
    organizationTables: new Set(['events', 'players']),
    notified: () => told.push('everything'),
    notifiedTable: (table: string, organization: number | null = null, rows: RowsTouched = 'some') =>
      told.push(organization === null ? table : `${table} of ${organization}: ${rows}`),
  };
  const notices = new ChangeNotices(OURS, clock, new Set([OWN]), (settle) => later.push(settle));
  const change = (processId = OTHER, schema = OURS) => notices.take({ channel: CHANGE_CHANNEL, payload: schema, processId });
  const table = (name: string, processId = OTHER, schema = OURS) => notices.take({ channel: TABLE_CHANNEL, payload: `${schema} ${name}`, processId });
  const organization = (rest: string, processId = OTHER) => notices.take({ channel: ORGANIZATION_CHANNEL, payload: `${OURS} ${rest}`, processId });
  const settle = () => later.splice(0).forEach((run) => run());
  return { told, change, table, organization, settle };
}

describe("another backend's commit, told by its notifications", () => {
  it('moves the tables it names, once its notifications have all arrived', () => {
    const { told, change, table, settle } = setup();
    change();
    table('tags');
    table('videos');
    expect(told).toEqual([]);
    settle();
    expect(told).toEqual(['tags', 'videos']);
  });

  it("moves a table notified by organization for those organizations' rows alone", () => {
    const { told, change, table, organization, settle } = setup();
    change();
    table('events');
    organization('events 5 row 9');
    organization('events 6 insert');
    settle();
    expect(told).toEqual(['events of 5: 9', 'events of 6: none']);
  });

  it('moves everything for a commit that names no table (a trigger function of an earlier release)', () => {
    const { told, change, table, organization, settle } = setup();
    change();
    table('events');
    organization('events 5 insert');
    // The next commit, read together with the first: its schema's notification closes the first.
    change();
    settle();
    expect(told).toEqual(['events of 5: none', 'everything']);
  });

  it('moves the whole table when its organizations are not told (a trigger of an earlier release on a table of organizations)', () => {
    const { told, change, table, organization, settle } = setup();
    change();
    table('players');
    table('events');
    organization('events 5 insert');
    settle();
    expect(told).toEqual(['events of 5: none', 'players']);
  });

  it('moves a table at once when it comes after its commit was settled (notifications split between two reads)', () => {
    const { told, change, table, organization, settle } = setup();
    change();
    settle();
    table('players');
    organization('players 5 row 3');
    expect(told).toEqual(['everything', 'players', 'players of 5: 3']);
  });

  it("leaves other schemas' notifications, and our own pool's schema notification, alone", () => {
    const { told, change, table, settle } = setup();
    change(OTHER, 'elsewhere');
    table('players', OTHER, 'elsewhere');
    change(OWN);
    settle();
    expect(told).toEqual([]);
  });

  it("moves our own commits' tables again by their notifications: a table of organizations by its organizations only", () => {
    const { told, table, organization, settle } = setup();
    table('players', OWN);
    table('tags', OWN);
    organization('players 5 row 3', OWN);
    settle();
    expect(told).toEqual(['tags', 'players of 5: 3']);
  });

  it('keeps commits of two backends apart', () => {
    const { told, change, table, settle } = setup();
    change(OTHER);
    table('tags', 33);
    settle();
    // The table came from a backend whose commit was not open: moved at once; the open commit named nothing.
    expect(told).toEqual(['tags', 'everything']);
  });
});
