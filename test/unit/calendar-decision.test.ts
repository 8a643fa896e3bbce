/** What a calendar message does to a booking (calendar-sync/rules/decision.ts): the decision table and its sub-rules. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  afterWindowCheck,
  bookingRefusal,
  decide,
  newInvitation,
  organizerRefusal,
  planDropOccurrence,
  planMove,
  planMoveOccurrence,
  type BookingFacts,
  type MessageFacts,
  type Step,
} from '../../src/modules/calendar-sync/rules/decision.js';
import { REASONS } from '../../src/modules/calendar-sync/rules/sync-rules.js';

const request: MessageFacts = { method: 'REQUEST', roomInvited: true, cancelled: false, occurrence: null, roomPartstat: 'NEEDS-ACTION' };
const cancel: MessageFacts = { ...request, method: 'CANCEL' };
const reply: MessageFacts = { ...request, method: 'REPLY', roomPartstat: 'ACCEPTED' };
const single = (status: string): BookingFacts => ({ status, series: false });
const series = (status: string): BookingFacts => ({ status, series: true });
const T = 1_800_000_000_000;

describe('decide (the decision table)', () => {
  const rows: [string, MessageFacts, BookingFacts | null, Step][] = [
    ['REQUEST, new UID', request, null, { kind: 'book' }],
    [
      'REQUEST, new UID, the room not invited',
      { ...request, roomInvited: false },
      null,
      { kind: 'answer', outcome: 'ignored', accepted: false, reason: REASONS.removed },
    ],
    ['REQUEST again after a rejection: booked anew', request, single('rejected'), { kind: 'book' }],
    ['REQUEST again after a cancellation: booked anew', request, single('cancelled'), { kind: 'book' }],
    [
      'REQUEST for a cancelled booking without the room',
      { ...request, roomInvited: false },
      single('cancelled'),
      { kind: 'answer', outcome: 'ignored', accepted: false, reason: REASONS.removed },
    ],
    ['REQUEST, known UID: a move', request, single('active'), { kind: 'move' }],
    ['REQUEST, known UID, checked in: a move (of the end)', request, single('checked-in'), { kind: 'move' }],
    ['REQUEST, known UID, unpaid: a move', request, single('unpaid'), { kind: 'move' }],
    [
      'REQUEST for a done booking: final',
      request,
      single('done'),
      { kind: 'answer', outcome: 'unchanged', accepted: false, reason: REASONS.ended },
    ],
    [
      'REQUEST for a done booking without the room: still final',
      { ...request, roomInvited: false },
      single('done'),
      { kind: 'answer', outcome: 'unchanged', accepted: false, reason: REASONS.ended },
    ],
    ['REQUEST without the room', { ...request, roomInvited: false }, single('active'), { kind: 'withdraw', reason: REASONS.removed }],
    ['REQUEST with STATUS:CANCELLED', { ...request, cancelled: true }, single('active'), { kind: 'withdraw', reason: null }],
    [
      'REQUEST without the room and STATUS:CANCELLED: removed wins',
      { ...request, roomInvited: false, cancelled: true },
      single('active'),
      { kind: 'withdraw', reason: REASONS.removed },
    ],
    ['REQUEST with an override, series', { ...request, occurrence: T }, series('active'), { kind: 'moveOccurrence' }],
    ['REQUEST with an override, single booking: a move', { ...request, occurrence: T }, single('active'), { kind: 'move' }],
    [
      'REQUEST with an override and STATUS:CANCELLED on the master',
      { ...request, occurrence: T, cancelled: true },
      series('active'),
      { kind: 'withdraw', reason: null },
    ],
    ['CANCEL, unknown UID', cancel, null, { kind: 'answer', outcome: 'unchanged', accepted: false, reason: REASONS.deleted }],
    ['CANCEL, active', cancel, single('active'), { kind: 'withdraw', reason: null }],
    ['CANCEL, checked-in (ends now)', cancel, single('checked-in'), { kind: 'withdraw', reason: null }],
    ['CANCEL, done', cancel, single('done'), { kind: 'answer', outcome: 'unchanged', accepted: false, reason: REASONS.deleted }],
    ['CANCEL, cancelled', cancel, single('cancelled'), { kind: 'answer', outcome: 'unchanged', accepted: false, reason: REASONS.deleted }],
    ['CANCEL, rejected', cancel, single('rejected'), { kind: 'answer', outcome: 'unchanged', accepted: false, reason: REASONS.deleted }],
    ['CANCEL with a RECURRENCE-ID, series', { ...cancel, occurrence: T }, series('active'), { kind: 'dropOccurrence', originalStart: T }],
    [
      'CANCEL with a RECURRENCE-ID, single booking: the booking goes',
      { ...cancel, occurrence: T },
      single('active'),
      { kind: 'withdraw', reason: null },
    ],
    [
      'REPLY, the room declines',
      { ...reply, roomPartstat: 'DECLINED' },
      single('active'),
      { kind: 'withdraw', reason: REASONS.roomDeclined },
    ],
    [
      'REPLY, the room declines a checked-in booking',
      { ...reply, roomPartstat: 'DECLINED' },
      single('checked-in'),
      { kind: 'withdraw', reason: REASONS.roomDeclined },
    ],
    [
      'REPLY, the room declines a done booking',
      { ...reply, roomPartstat: 'DECLINED' },
      single('done'),
      { kind: 'answer', outcome: 'ignored', accepted: false, reason: null },
    ],
    [
      'REPLY, the room declines an unknown UID',
      { ...reply, roomPartstat: 'DECLINED' },
      null,
      { kind: 'answer', outcome: 'ignored', accepted: false, reason: REASONS.deleted },
    ],
    ['REPLY, accepted', reply, single('active'), { kind: 'answer', outcome: 'ignored', accepted: true, reason: null }],
    [
      'REPLY, not naming the room',
      { ...reply, roomPartstat: null },
      single('active'),
      { kind: 'answer', outcome: 'ignored', accepted: true, reason: null },
    ],
    ['REPLY, cancelled booking', reply, single('cancelled'), { kind: 'answer', outcome: 'ignored', accepted: false, reason: null }],
  ];
  it.each(rows)('%s', (_name, message, booking, step) => {
    expect(decide(message, booking)).toEqual(step);
  });

  const messages = fc.record({
    method: fc.constantFrom('REQUEST' as const, 'CANCEL' as const, 'REPLY' as const),
    roomInvited: fc.boolean(),
    cancelled: fc.boolean(),
    occurrence: fc.option(fc.integer({ min: 0, max: 2 ** 42 }), { nil: null }),
    roomPartstat: fc.constantFrom(null, 'ACCEPTED', 'DECLINED', 'TENTATIVE', 'NEEDS-ACTION'),
  });
  const bookings = fc.option(
    fc.record({ status: fc.constantFrom('active', 'checked-in', 'unpaid', 'done', 'cancelled', 'rejected'), series: fc.boolean() }),
    { nil: null },
  );

  it('changes no final booking but by booking anew, and never touches a done one', () => {
    fc.assert(
      fc.property(messages, bookings, (m, b) => {
        const step = decide(m, b);
        if (b?.status === 'done') expect(step.kind).toBe('answer');
        if (b && ['cancelled', 'rejected'].includes(b.status)) expect(['answer', 'book']).toContain(step.kind);
      }),
    );
  });

  it('books only on a REQUEST that invites the room, when no live booking holds the UID', () => {
    fc.assert(
      fc.property(messages, bookings, (m, b) => {
        const live = b !== null && !['cancelled', 'rejected'].includes(b.status);
        expect(decide(m, b).kind === 'book').toBe(m.method === 'REQUEST' && m.roomInvited && !live);
      }),
    );
  });

  it('a step that changes a booking only ever comes with one', () => {
    fc.assert(
      fc.property(messages, (m) => {
        expect(['answer', 'book']).toContain(decide(m, null).kind);
      }),
    );
  });

  it('a REPLY changes something only when the room declines', () => {
    fc.assert(
      fc.property(messages, bookings, (m, b) => {
        const step = decide({ ...m, method: 'REPLY' }, b);
        if (m.roomPartstat !== 'DECLINED') expect(step.kind).toBe('answer');
      }),
    );
  });

  it('occurrence steps only for a series', () => {
    fc.assert(
      fc.property(messages, bookings, (m, b) => {
        const step = decide(m, b);
        if (step.kind === 'moveOccurrence' || step.kind === 'dropOccurrence') {
          expect(b?.series).toBe(true);
          expect(m.occurrence).not.toBeNull();
        }
      }),
    );
  });
});

describe('a new invitation', () => {
  const organizer = { email: 'ann@example.com', blocked: false, member: 'member' as const, brandStaff: false };
  const facts = { invitedBy: 'ann@example.com', account: organizer, projectName: 'Tower', roomName: 'Orchid', roomIsPublic: true };

  it.each([
    ['a member of the project', facts, null],
    ['no ORGANIZER', { ...facts, invitedBy: null }, REASONS.noOrganizer],
    ['not a user', { ...facts, account: null }, 'ann@example.com is not a user of Tower'],
    ['no membership', { ...facts, account: { ...organizer, member: null } }, 'ann@example.com is not a member of Tower'],
    [
      'no membership, the account without email',
      { ...facts, account: { ...organizer, email: null, member: null } },
      'ann@example.com is not a member of Tower',
    ],
    ['brand staff without membership', { ...facts, account: { ...organizer, member: null, brandStaff: true } }, null],
    [
      'a visitor, private room',
      { ...facts, roomIsPublic: false, account: { ...organizer, member: 'visitor' as const } },
      'Orchid is private to the members of Tower',
    ],
    ['a visitor, public room', { ...facts, account: { ...organizer, member: 'visitor' as const } }, null],
    ['blocked', { ...facts, account: { ...organizer, blocked: true } }, 'The organizer has been blocked from booking by an administrator'],
  ] as const)('organizerRefusal: %s', (_name, f, expected) => {
    expect(organizerRefusal(f)).toBe(expected);
  });

  it('answers the first refusal, in order: organizer, closed room, paid room, times', () => {
    const none = { organizer: null, roomName: 'Orchid', closedStatus: null, paid: false, times: null };
    expect(bookingRefusal(none)).toBeNull();
    expect(bookingRefusal({ ...none, times: 'The event ends before it starts' })).toBe('The event ends before it starts');
    expect(bookingRefusal({ ...none, paid: true, times: 'x' })).toBe('Orchid is a paid room: book it in the app, where it can be paid');
    expect(bookingRefusal({ ...none, closedStatus: 'maintenance', paid: true })).toBe('Orchid is maintenance and cannot be booked');
    expect(bookingRefusal({ ...none, organizer: 'no', closedStatus: 'maintenance', paid: true, times: 'x' })).toBe('no');
  });

  it('is booked, kept as rejected for its organizer, or only declined without one', () => {
    expect(newInvitation(null, true)).toEqual({ kind: 'book' });
    expect(newInvitation(null, false)).toEqual({ kind: 'book' });
    expect(newInvitation('closed', true)).toEqual({ kind: 'reject', store: true, reason: 'closed' });
    expect(newInvitation('closed', false)).toEqual({ kind: 'reject', store: false, reason: 'closed' });
  });
});

describe('a known invitation with new times', () => {
  const H = 3_600_000;
  const booked = { start: T, end: T + H };
  const base = { status: 'active', booked, series: false, sameTimes: false, to: { start: T + H, end: T + 2 * H } };

  it.each([
    ['same times', { ...base, sameTimes: true, series: true }, { kind: 'unchanged' }],
    ['a series', { ...base, series: true }, { kind: 'refuse', reason: REASONS.seriesChange }],
    ['ends before it starts', { ...base, to: { start: T, end: T } }, { kind: 'cancel', reason: 'The event ends before it starts' }],
    [
      'ends before it starts, checked in',
      { ...base, status: 'checked-in', to: { start: T, end: T - H } },
      { kind: 'cancel', reason: 'The event ends before it starts' },
    ],
    ['active: moves, with the lead time', base, { kind: 'move', to: base.to, ignoreLeadTime: false }],
    [
      'active, same start: moves, lead time ignored',
      { ...base, to: { start: T, end: T + 2 * H } },
      { kind: 'move', to: { start: T, end: T + 2 * H }, ignoreLeadTime: true },
    ],
    [
      'checked in, longer: the end moves after a check',
      { ...base, status: 'checked-in' },
      { kind: 'moveEnd', end: T + 2 * H, check: true },
    ],
    [
      'checked in, shorter: the end moves',
      { ...base, status: 'checked-in', to: { start: T - H, end: T + H / 2 } },
      { kind: 'moveEnd', end: T + H / 2, check: false },
    ],
    [
      'checked in, the end before the start: one minute is kept',
      { ...base, status: 'checked-in', to: { start: T - 2 * H, end: T - H } },
      { kind: 'moveEnd', end: T + 60_000, check: false },
    ],
    ['checked in, same end: unchanged', { ...base, status: 'checked-in', to: { start: T - H, end: T + H } }, { kind: 'unchanged' }],
  ] as const)('planMove: %s', (_name, f, plan) => {
    expect(planMove(f)).toEqual(plan);
  });

  it('after the window check: a refused move cancels, a refused longer end changes nothing', () => {
    const move = { kind: 'move', to: base.to, ignoreLeadTime: false } as const;
    expect(afterWindowCheck(move, booked, null, 'UTC')).toEqual(move);
    expect(afterWindowCheck(move, booked, 'Closed', 'UTC')).toEqual({ kind: 'cancel', reason: 'Closed' });
    const end = { kind: 'moveEnd', end: T + 2 * H, check: true } as const;
    expect(afterWindowCheck(end, booked, null, 'UTC')).toEqual({ ...end, check: false });
    expect(afterWindowCheck(end, booked, 'Busy', 'UTC')).toEqual({
      kind: 'refuse',
      reason: 'The end cannot move to 15 Jan 2027 08:00–10:00: Busy',
    });
  });

  it('never moves the start of a checked-in booking', () => {
    const span = fc
      .tuple(fc.integer({ min: -48, max: 48 }), fc.integer({ min: -48, max: 48 }))
      .map(([a, b]) => ({ start: T + a * 15 * 60_000, end: T + b * 15 * 60_000 }));
    fc.assert(
      fc.property(span, fc.boolean(), (to, check) => {
        const plan = planMove({ ...base, status: 'checked-in', to });
        expect(plan.kind).not.toBe('move');
        if (plan.kind === 'moveEnd') {
          expect(plan.end).toBeGreaterThanOrEqual(booked.start + 60_000);
          expect(plan.check).toBe(plan.end > booked.end);
          const after = afterWindowCheck(plan, booked, check ? 'Busy' : null, 'UTC');
          expect(['moveEnd', 'refuse']).toContain(after.kind);
        }
      }),
    );
  });
});

describe('one occurrence of a series', () => {
  const H = 3_600_000;
  const occurrences = [0, 1, 2].map((d) => ({ id: `o${d}`, start: T + d * 24 * H, end: T + d * 24 * H + H }));

  it('planDropOccurrence', () => {
    const f = { occurrences, originalStart: occurrences[1]!.start, status: 'active', now: T - H };
    expect(planDropOccurrence(f)).toEqual({ kind: 'drop', occurrence: occurrences[1], isCurrent: false });
    expect(planDropOccurrence({ ...f, originalStart: T + 5 })).toEqual({
      kind: 'answer',
      outcome: 'unchanged',
      accepted: true,
      reason: null,
    });
    expect(planDropOccurrence({ ...f, occurrences: [occurrences[1]!] })).toEqual({ kind: 'withdraw' });
    expect(planDropOccurrence({ ...f, now: T + 2 * H })).toEqual({ kind: 'drop', occurrence: occurrences[1], isCurrent: true });
    expect(planDropOccurrence({ ...f, now: T + 24 * H + 1, status: 'checked-in' })).toEqual({
      kind: 'answer',
      outcome: 'refused',
      accepted: false,
      reason: 'The occurrence is in progress; end it at the room',
    });
  });

  it('planMoveOccurrence', () => {
    const occ = occurrences[1]!;
    const to = { start: occ.start + H, end: occ.end + H };
    const f = { occurrences, originalStart: occ.start, cancelled: false, to, status: 'active', now: T - H };
    expect(planMoveOccurrence(f)).toEqual({ kind: 'move', occurrence: occ, to, isCurrent: false });
    expect(planMoveOccurrence({ ...f, originalStart: T + 5 })).toEqual({
      kind: 'answer',
      outcome: 'refused',
      accepted: false,
      reason: 'That occurrence is not part of the booked series',
    });
    expect(planMoveOccurrence({ ...f, cancelled: true })).toEqual({ kind: 'drop' });
    expect(planMoveOccurrence({ ...f, to: { start: occ.start, end: occ.end } })).toEqual({
      kind: 'answer',
      outcome: 'unchanged',
      accepted: true,
      reason: null,
      window: occ,
    });
    expect(planMoveOccurrence({ ...f, now: occ.start + 1, status: 'checked-in' })).toEqual({
      kind: 'answer',
      outcome: 'refused',
      accepted: false,
      reason: 'The occurrence is in progress; its start cannot move',
    });
    const onto = { start: occurrences[2]!.start, end: occurrences[2]!.end };
    expect(planMoveOccurrence({ ...f, to: onto })).toEqual({
      kind: 'answer',
      outcome: 'refused',
      accepted: false,
      reason: 'The moved occurrence would overlap another occurrence of the series',
      window: onto,
    });
  });
});
