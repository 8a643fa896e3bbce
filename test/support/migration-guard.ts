/**
 * The expand-then-contract guard (CONTRIBUTING.md "Migrations and upgrades"): in a
 * migration's `up`, the steps that break the previous release still running beside it
 * during a rolling upgrade. Such a step is allowed only in a file that says, in a
 * `// contract: …` comment, which earlier release stopped using what it removes.
 * (`down` is never run: migrations are forward-only, so it is not inspected.)
 */

/** Migrations up to this one predate the rule (the newest when it was introduced). */
export const GUARD_BASELINE = '013';

export interface GuardFinding {
  step: string;
  excerpt: string;
}

/** The source of `up` only: from `function up` to `function down` (or the end). */
function upBody(source: string): string {
  const start = source.search(/function\s+up\s*\(/);
  if (start < 0) return source;
  const down = source.slice(start).search(/function\s+down\s*\(/);
  return down < 0 ? source.slice(start) : source.slice(start, start + down);
}

/** The text of the call whose `(` is at `open`, parentheses balanced (strings are not special-cased: good enough for builders). */
function callText(text: string, open: number): string {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === '(') depth++;
    else if (text[i] === ')' && --depth === 0) return text.slice(open, i + 1);
  }
  return text.slice(open);
}

const BUILDER_STEPS: { step: string; pattern: RegExp }[] = [
  { step: 'dropTable', pattern: /\.dropTable\s*\(/g },
  { step: 'dropColumn', pattern: /\.dropColumn\s*\(/g },
  { step: 'renameColumn', pattern: /\.renameColumn\s*\(/g },
  { step: 'renameTo', pattern: /\.renameTo\s*\(/g },
  { step: 'alterColumn type change', pattern: /\.setDataType\s*\(/g },
  { step: 'alterColumn setNotNull', pattern: /\.setNotNull\s*\(/g },
];

/** Raw SQL doing the same (sql`…` or CompiledQuery.raw). */
const RAW_SQL: { step: string; pattern: RegExp }[] = [
  { step: 'DROP TABLE/COLUMN (SQL)', pattern: /\bdrop\s+(table|column)\b/gi },
  { step: 'RENAME (SQL)', pattern: /\brename\s+(to|column)\b/gi },
  { step: 'ALTER COLUMN TYPE / SET NOT NULL (SQL)', pattern: /\balter\s+column\s+\S+\s+(type|set\s+data\s+type|set\s+not\s+null)\b/gi },
  { step: 'ADD COLUMN NOT NULL without DEFAULT (SQL)', pattern: /\badd\s+column\b(?![^;`]*\bdefault\b)[^;`]*\bnot\s+null\b/gi },
];

/** `.addColumn(…notNull()…)` without `defaultTo` on an existing table (after `alterTable`, not `createTable`). */
function notNullWithoutDefault(body: string): GuardFinding[] {
  const findings: GuardFinding[] = [];
  for (const m of body.matchAll(/\.addColumn\s*\(/g)) {
    const call = callText(body, m.index + m[0].length - 1);
    if (!/notNull\s*\(/.test(call) || /defaultTo\s*\(/.test(call)) continue;
    const before = body.slice(0, m.index);
    const altered = before.lastIndexOf('alterTable(');
    if (altered >= 0 && altered > before.lastIndexOf('createTable(')) {
      findings.push({ step: 'addColumn NOT NULL without default', excerpt: call.slice(0, 120) });
    }
  }
  return findings;
}

/** The destructive steps in a migration's source; none when it carries a `// contract:` explanation. */
export function destructiveSteps(source: string): GuardFinding[] {
  if (/\/\/[ \t]*contract:[ \t]*\S[^\n]{10,}/i.test(source)) return [];
  const body = upBody(source);
  const findings: GuardFinding[] = [];
  for (const { step, pattern } of [...BUILDER_STEPS, ...RAW_SQL]) {
    for (const m of body.matchAll(pattern)) findings.push({ step, excerpt: body.slice(m.index, m.index + 80) });
  }
  return [...findings, ...notNullWithoutDefault(body)];
}
