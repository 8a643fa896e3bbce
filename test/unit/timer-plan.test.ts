import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { planTimers, timerOutcome, TIMER_KINDS } from '../../src/modules/lifecycle/rules/timer-plan.js';
import { MEETING_CONFIG_DEFAULTS } from '../../src/modules/booking/rules/asset-config.js';

const MIN = 60_000;
const start = Date.UTC(2026, 11, 1, 3, 0);
const end = start + 60 * MIN;
const now = start - 2 * 60 * MIN;
const kinds = (t: { kind: string; dueAt: number }[]) => t.map((x) => `${x.kind}@${(x.dueAt - start) / MIN}`);

describe('planTimers', () => {
  it('plans the default steps of the spec', () => {
    expect(kinds(planTimers({ start, end }, MEETING_CONFIG_DEFAULTS, { allDay: false, now }))).toEqual([
      'reminder@-15',
      'no-show-warning@10',
      'no-show-cancel@15',
      'ending-soon@45',
      'end@60',
    ]);
  });

  it('-1 disables a step; postStartExpireMinutes -1 disables warning and cancel', () => {
    const mc = { preStartMinutes: -1, postStartWarnMinutes: 10, postStartExpireMinutes: -1, preEndMinutes: -1 };
    expect(kinds(planTimers({ start, end }, mc, { allDay: false, now }))).toEqual(['end@60']);
  });

  it('postStartExpireMinutes 0 checks in at the start instead of a no-show', () => {
    const mc = { ...MEETING_CONFIG_DEFAULTS, postStartExpireMinutes: 0 };
    expect(kinds(planTimers({ start, end }, mc, { allDay: false, now }))).toEqual([
      'reminder@-15',
      'auto-check-in@0',
      'ending-soon@45',
      'end@60',
    ]);
  });

  it('no no-show steps for all-day bookings', () => {
    expect(kinds(planTimers({ start, end }, MEETING_CONFIG_DEFAULTS, { allDay: true, now }))).toEqual([
      'reminder@-15',
      'ending-soon@45',
      'end@60',
    ]);
  });

  it('skips a reminder already past at booking time and never sends ending-soon before the start', () => {
    const short = { start, end: start + 10 * MIN };
    expect(kinds(planTimers(short, MEETING_CONFIG_DEFAULTS, { allDay: false, now: start - 5 * MIN }))).toEqual([
      'ending-soon@0',
      'no-show-warning@10',
      'end@10',
      'no-show-cancel@15',
    ]);
  });

  it('property: steps are sorted, within sensible bounds, and always end with an end step at the end', () => {
    fc.assert(
      fc.property(
        fc.record({
          preStartMinutes: fc.integer({ min: -1, max: 120 }),
          postStartWarnMinutes: fc.integer({ min: -1, max: 120 }),
          postStartExpireMinutes: fc.integer({ min: -1, max: 120 }),
          preEndMinutes: fc.integer({ min: -1, max: 120 }),
        }),
        fc.integer({ min: 1, max: 600 }),
        fc.boolean(),
        (mc, minutes, allDay) => {
          const w = { start, end: start + minutes * MIN };
          const plan = planTimers(w, mc, { allDay, now });
          for (let i = 1; i < plan.length; i++) expect(plan[i].dueAt).toBeGreaterThanOrEqual(plan[i - 1].dueAt);
          expect(plan.filter((p) => p.kind === 'end')).toEqual([{ kind: 'end', dueAt: w.end }]);
          for (const p of plan) {
            expect(TIMER_KINDS).toContain(p.kind);
            if (p.kind === 'ending-soon') expect(p.dueAt).toBeGreaterThanOrEqual(w.start);
            if (p.kind === 'no-show-cancel') expect(allDay).toBe(false);
          }
          const warn = plan.find((p) => p.kind === 'no-show-warning');
          const cancel = plan.find((p) => p.kind === 'no-show-cancel');
          if (warn) expect(cancel && warn.dueAt < cancel.dueAt).toBe(true);
        },
      ),
    );
  });
});

describe('timerOutcome', () => {
  const w = { start, end };
  it('acts only in the state the step was planned for', () => {
    expect(timerOutcome('no-show-cancel', w, { status: 'active', ...w })).toEqual({ action: 'no-show-cancel' });
    expect(timerOutcome('no-show-cancel', w, { status: 'checked-in', ...w }).action).toBe('skip');
    expect(timerOutcome('no-show-warning', w, { status: 'cancelled', ...w }).action).toBe('skip');
    expect(timerOutcome('auto-check-in', w, { status: 'active', ...w })).toEqual({ action: 'check-in' });
    expect(timerOutcome('reminder', w, { status: 'checked-in', ...w })).toEqual({ action: 'notify', event: 'REMINDER' });
    expect(timerOutcome('ending-soon', w, { status: 'done', ...w }).action).toBe('skip');
    expect(timerOutcome('end', w, { status: 'checked-in', ...w })).toEqual({ action: 'end' });
  });

  it('a step planned for another window (the booking moved) does nothing', () => {
    for (const kind of TIMER_KINDS) {
      expect(timerOutcome(kind, w, { status: 'active', start: start + 30 * MIN, end: end + 30 * MIN }).action).toBe('skip');
    }
    expect(timerOutcome('end', w, { status: 'active', start, end: end + 30 * MIN }).action).toBe('skip');
  });
});
