/**
 * Distinct-slot `POST /meetings` bodies from a serializable description, so the
 * load generator (another process) can make them itself: body i books room
 * i mod N, then the next hour, then the next day. Meetings last `minutes` (45)
 * and start on the hour, so with up to 15 minutes of cleaning no two clash.
 */
import { DateTime } from 'luxon';

export interface SlotPlan {
  roomIds: string[];
  /** The first day, `YYYY-MM-DD` on the project's wall clock. */
  firstDay: string;
  zone: string;
  firstHour: number;
  hoursPerDay: number;
  minutes: number;
  /** The first index to use (each subject keeps its own running index across runs). */
  start: number;
}

export function slotBodies(plan: SlotPlan): (i: number) => string {
  const day0 = DateTime.fromISO(plan.firstDay, { zone: plan.zone }).startOf('day');
  const starts = new Map<number, [string, string]>();
  const perDay = plan.roomIds.length * plan.hoursPerDay;
  return (i: number) => {
    const key = Math.floor(i / plan.roomIds.length);
    let w = starts.get(key);
    if (!w) {
      const start = day0.plus({ days: Math.floor(i / perDay) }).set({ hour: plan.firstHour + (key % plan.hoursPerDay) });
      w = [start.toISO()!, start.plus({ minutes: plan.minutes }).toISO()!];
      starts.set(key, w);
      if (starts.size > 64) starts.delete(starts.keys().next().value!);
    }
    return JSON.stringify({
      meetingRoomId: plan.roomIds[i % plan.roomIds.length],
      title: `Bench ${i}`,
      startDateTime: w[0],
      endDateTime: w[1],
    });
  };
}
