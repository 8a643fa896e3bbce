/**
 * The kind of an SQL statement for the database-time histogram: its verb (select,
 * insert, update, delete) or `other`; a `with` statement by the verb of its main
 * statement, after the common table expressions. Results are cached per SQL text
 * (the service's statements are a small fixed set), bounded.
 */
export const STATEMENT_KINDS = ['select', 'insert', 'update', 'delete', 'other'] as const;
export type StatementKind = (typeof STATEMENT_KINDS)[number];

const VERBS = new Set<string>(['select', 'insert', 'update', 'delete']);
const CACHE_MAX = 2000;
const cache = new Map<string, StatementKind>();

export function statementKind(sql: string): StatementKind {
  let kind = cache.get(sql);
  if (kind === undefined) {
    kind = classify(sql);
    if (cache.size >= CACHE_MAX) cache.clear();
    cache.set(sql, kind);
  }
  return kind;
}

/** The first word outside parentheses, comments and quotes that is a verb (for `with`: the main statement's). */
function classify(sql: string): StatementKind {
  const first = /^[\s(]*(\w+)/.exec(stripComments(sql.slice(0, 200)))?.[1]?.toLowerCase();
  if (first && VERBS.has(first)) return first as StatementKind;
  if (first !== 'with') return 'other';
  const text = stripComments(sql);
  let depth = 0;
  let quote: string | null = null;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === quote) quote = null;
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (depth === 0 && /[a-z]/i.test(c) && (i === 0 || !/\w/.test(text[i - 1]!))) {
      const word = /^\w+/.exec(text.slice(i, i + 8))![0].toLowerCase();
      if (VERBS.has(word)) return word as StatementKind;
      i += word.length - 1;
    }
  }
  return 'other';
}

function stripComments(sql: string): string {
  return sql.includes('--') || sql.includes('/*') ? sql.replace(/--[^\n]*|\/\*[\s\S]*?\*\//g, ' ') : sql;
}
