/** Short hash of a subject's state: what a command carries and a gateway reports back in its inventory. */
import { createHash } from 'node:crypto';
import { stateJson, type SubjectState } from './rules/subject-state.js';

export function stateHash(s: SubjectState): string {
  return createHash('sha256').update(stateJson(s)).digest('hex').slice(0, 32);
}
