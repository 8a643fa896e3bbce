/** The console's pure display rules: a history entry's actor, and where a room label may wrap. */
import { describe, expect, it } from 'vitest';
import { historyActor } from '../../src/modules/booking/rules/history-actor.js';
import { labelPlace, labelWords } from '../../src/console-ui/label-words.js';

describe('historyActor', () => {
  const known = new Map([
    ['u-member', { name: 'Malee Srisuk', app: false }],
    ['u-service', { name: 'Demo tenant portal', app: true }],
    ['client-1', { name: 'Demo tenant portal', app: true }],
  ]);
  it('names members and apps, and kinds staff, the service and calendars', () => {
    expect(historyActor('u-member', 'user', known)).toEqual({ actorKind: 'member', actorName: 'Malee Srisuk' });
    expect(historyActor('u-service', 'partner', known)).toEqual({ actorKind: 'app', actorName: 'Demo tenant portal' });
    expect(historyActor('client-1', 'partner', known)).toEqual({ actorKind: 'app', actorName: 'Demo tenant portal' });
    expect(historyActor('u-service', 'user', known)).toEqual({ actorKind: 'app', actorName: 'Demo tenant portal' });
    expect(historyActor('ops', 'console', known)).toEqual({ actorKind: 'staff', actorName: null });
    expect(historyActor('system', 'system', known)).toEqual({ actorKind: 'system', actorName: null });
    expect(historyActor('calendar', 'google', known)).toEqual({ actorKind: 'calendar', actorName: null });
  });
  it('an id no longer known keeps its kind from the channel and has no name', () => {
    expect(historyActor('gone', 'user', known)).toEqual({ actorKind: 'member', actorName: null });
    expect(historyActor('gone', 'partner', known)).toEqual({ actorKind: 'app', actorName: null });
  });
});

describe('labelWords', () => {
  const texts = (name: string) => labelWords(name, 'th').map((w) => w.text);
  it('splits at spaces and keeps punctuation with its word', () => {
    expect(labelWords('Training Room (paid)')).toEqual([
      { text: 'Training', space: true },
      { text: 'Room', space: true },
      { text: '(paid)', space: false },
    ]);
  });
  it('splits Thai (no spaces) at dictionary word boundaries, never inside a word', () => {
    const words = texts('ห้องประชุมเจ้าพระยา');
    expect(words.join('')).toBe('ห้องประชุมเจ้าพระยา');
    expect(words.length).toBeGreaterThan(1);
    expect(words[0]).toBe('ห้อง');
    expect(labelWords('ห้องประชุม').every((w, i, all) => w.space === false || i < all.length - 1)).toBe(true);
  });
  it('keeps every character and the spaces between tokens', () => {
    const name = 'ห้องประชุม (ชั้น 3) Lotus';
    const words = labelWords(name, 'th');
    expect(words.map((w) => w.text + (w.space ? ' ' : '')).join('')).toBe(name);
    expect(labelWords('   ')).toEqual([]);
  });
});

describe('labelPlace', () => {
  const box = (minX: number, maxX: number, minY = 0, maxY = 50) => ({ minX, maxX, minY, maxY });
  it('centres a label on its room and caps it at the nearest neighbour or plan edge on its row', () => {
    const a = box(4, 14);
    const b = box(18, 28);
    const far = box(16, 30, 60, 90); // below the label's row: no limit
    expect(labelPlace(a, [a, b, far])).toEqual({ x: 9, y: 25, width: 9, maxWidth: 13 });
    expect(labelPlace(b, [a, b, far])).toEqual({ x: 23, y: 25, width: 9, maxWidth: 13 });
    const wide = box(40, 90);
    expect(labelPlace(wide, [wide])).toEqual({ x: 65, y: 25, width: 49, maxWidth: 69 });
  });
});
