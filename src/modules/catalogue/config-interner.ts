/**
 * Config texts interned: assets sharing a config share one string, so the
 * availability search's per-config memo compares them by identity instead of by
 * content. Bounded: past `max` distinct texts the table starts over.
 */
export class ConfigInterner {
  private readonly texts = new Map<string, string>();

  constructor(private readonly max = 10_000) {}

  intern(text: string): string {
    const known = this.texts.get(text);
    if (known !== undefined) return known;
    if (this.texts.size >= this.max) this.texts.clear();
    this.texts.set(text, text);
    return text;
  }
}
