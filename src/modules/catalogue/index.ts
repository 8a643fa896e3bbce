/**
 * The catalogue module's front door (minimal: the names calendar sync uses; the catalogue helper's
 * index.ts is the full one and replaces this file at merge).
 */
export type { AssetInContext } from './catalogue-service.js';
