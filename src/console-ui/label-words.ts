/**
 * A room label's words, so the plan wraps a name only between words and never
 * inside one: text with spaces splits at the spaces; a run in a script written
 * without spaces (Thai, Lao, Khmer, Burmese, Chinese, Japanese) splits at the
 * word boundaries of Intl.Segmenter (the browser's dictionary). Punctuation
 * stays with the word before it. Pure (Intl only), so Node can test it.
 */
export interface LabelWord {
  text: string;
  /** A space follows it in the name (a break there shows as the space). */
  space: boolean;
}

const NO_SPACES = /[\u0E00-\u0EFF\u1000-\u109F\u1780-\u17FF\u3040-\u30FF\u3400-\u9FFF]/;

export function labelWords(name: string, locale?: string): LabelWord[] {
  const out: LabelWord[] = [];
  const tokens = name.split(/\s+/).filter(Boolean);
  const Segmenter = typeof Intl.Segmenter === 'function' ? Intl.Segmenter : undefined;
  for (const token of tokens) {
    if (!NO_SPACES.test(token) || !Segmenter) {
      out.push({ text: token, space: true });
      continue;
    }
    const pieces: string[] = [];
    let lead = '';
    for (const seg of new Segmenter(locale, { granularity: 'word' }).segment(token)) {
      if (!seg.isWordLike && pieces.length === 0) lead += seg.segment;
      else if (seg.isWordLike) {
        pieces.push(lead + seg.segment);
        lead = '';
      } else pieces[pieces.length - 1] += seg.segment;
    }
    if (lead) pieces.push(lead);
    pieces.forEach((text, i) => out.push({ text, space: i === pieces.length - 1 }));
  }
  if (out.length) out[out.length - 1]!.space = false;
  return out;
}

/** A room's outline as the plan places it: percent of the plan's width and height. */
export interface RoomBox {
  minX: number;
  maxX: number;
  minY: number;
  maxY: number;
}

/**
 * Where a room's label sits and how wide it may be (percent of the plan): centred
 * on the room, never reaching past the plan's edge or the midpoint to another
 * room's centre beside it on the label's row, so labels neither leave the plan
 * nor cover a neighbour's label.
 */
export function labelPlace(room: RoomBox, others: readonly RoomBox[]): { x: number; y: number; width: number; maxWidth: number } {
  const x = (room.minX + room.maxX) / 2;
  const y = (room.minY + room.maxY) / 2;
  let half = Math.min(x, 100 - x);
  for (const o of others) {
    if (o === room || y < o.minY || y > o.maxY) continue;
    // Up to the midpoint between the two rooms' centres: the neighbour's label may use the other half.
    const ox = (o.minX + o.maxX) / 2;
    if (o.minX >= x) half = Math.min(half, (ox - x) / 2);
    else if (o.maxX <= x) half = Math.min(half, (x - ox) / 2);
  }
  return { x, y, width: Math.max(room.maxX - room.minX - 1, 1), maxWidth: Math.max(2 * half - 1, 1) };
}
