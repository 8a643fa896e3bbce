/**
 * Entity ids: 24 lowercase hex characters in the layout of a MongoDB ObjectId
 * (4-byte seconds timestamp, 5 random bytes, 3-byte counter), so they sort
 * roughly by creation time and look like the ids integrators already know.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { OBJECT_ID_PATTERN } from '../contract/common.js';

const processRandom = randomBytes(5);
let counter = randomInt(0xffffff);

export function newId(nowMs: number = Date.now()): string {
  const buf = Buffer.alloc(12);
  buf.writeUInt32BE(Math.floor(nowMs / 1000) >>> 0, 0);
  processRandom.copy(buf, 4);
  counter = (counter + 1) & 0xffffff;
  buf.writeUIntBE(counter, 9, 3);
  return buf.toString('hex');
}

const objectIdRe = new RegExp(OBJECT_ID_PATTERN);

export function isObjectId(value: unknown): value is string {
  return typeof value === 'string' && objectIdRe.test(value);
}
