/**
 * Phone normalization of partner PUTs (api-spec "PUT /partner/members", body `phone`):
 * spaces, dashes, dots and parentheses are stripped. Then `+…` stays (a Thai
 * `+660…` loses the trunk 0); `00…` becomes `+…`; a Thai local number (`0` and
 * 9-10 digits in all) becomes `+66` without the 0; `66` and 8-9 digits becomes
 * `+66…`. Anything else is returned stripped. Matching and storage both use it.
 * Example: `081-234-5678` → `+66812345678`.
 */
export function normalizePhone(raw: string): string {
  const p = raw.trim().replace(/[\s\-.()]/g, '');
  if (p.startsWith('+')) return /^\+660\d{8,9}$/.test(p) ? `+66${p.slice(4)}` : p;
  if (/^00\d+$/.test(p)) return `+${p.slice(2)}`;
  if (/^0\d{8,9}$/.test(p)) return `+66${p.slice(1)}`;
  if (/^66\d{8,9}$/.test(p)) return `+${p}`;
  return p;
}
