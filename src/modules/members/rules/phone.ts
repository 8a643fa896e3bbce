/**
 * Phone normalization of partner PUTs (api-spec "PUT /partner/members", body `phone`):
 * spaces, dashes, dots and parentheses are stripped; Thai numbers get the +66 prefix
 * (`0XXXXXXXXX` → `+66XXXXXXXXX`, `66…` → `+66…`). Anything else keeps its digits
 * (and a leading `+`). Matching and storage both use the normalized form.
 */
export function normalizePhone(raw: string): string {
  const compact = raw.trim().replace(/[\s\-.()]/g, '');
  if (compact.startsWith('+')) return compact;
  if (/^0\d{8,9}$/.test(compact)) return `+66${compact.slice(1)}`;
  if (/^66\d{8,9}$/.test(compact)) return `+${compact}`;
  return compact;
}
