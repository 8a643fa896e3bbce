/**
 * GET /meeting-rooms lists every room of a large project once: the catalogue reads a project's rooms in
 * pages of ROOM_PAGE, by name then id (catalogue-repository `projectRooms`), so rooms sharing one name
 * across a page boundary must neither repeat nor go missing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { okData } from '../support/catalogue.js';
import { startMeetingService, type MeetingCtx } from '../support/meetings.js';
import { ROOM_PAGE } from '../../src/modules/catalogue/catalogue-repository.js';

const SAME = ROOM_PAGE + 200; // one name across the first page boundary
const ROOMS = 2 * ROOM_PAGE + 203; // three pages, the last one partial

describe(`GET /meeting-rooms of a project with ${ROOMS} rooms`, () => {
  let c: MeetingCtx;
  const name = (i: number) => (i < SAME ? 'Same name' : `Room ${String(i).padStart(5, '0')}`);

  beforeAll(async () => {
    c = await startMeetingService({ rooms: Array.from({ length: ROOMS }, (_, i) => ({ key: `r${i}`, name: name(i) })) });
  }, 60_000);
  afterAll(async () => {
    await c?.close();
  });

  it('lists every room once, with its own fields', async () => {
    const rooms = okData(await c.request('GET', `/meeting-rooms?projectId=${c.id('tower')}`, c.tok.portal)) as any[];
    expect(rooms).toHaveLength(ROOMS);
    const ids = rooms.map((r) => r._id as string);
    expect(new Set(ids).size).toBe(ROOMS);
    const wanted = Array.from({ length: ROOMS }, (_, i) => [c.id(`r${i}`), name(i)]);
    expect(rooms.map((r) => [r._id, r.name]).sort()).toEqual(wanted.sort());
  });
});
