/**
 * A statement counter for tests: pass `counter.record` as the service's
 * `onQuery`, then `counter.counted(work)` returns what `work` returned and the
 * SQL text of every statement run meanwhile (run the service without background
 * work so they are all the request's).
 */
export function statementCounter() {
  let seen: string[] | null = null;
  return {
    record: (sql: string) => {
      seen?.push(sql);
    },
    async counted<T>(work: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
      const mine: string[] = [];
      seen = mine;
      try {
        return { result: await work(), statements: mine };
      } finally {
        seen = null;
      }
    },
  };
}
