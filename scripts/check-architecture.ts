/**
 * Checks src/ against the layering rules (contract, platform, modules, rules, app),
 * module boundaries and surfaces (index.ts + rules/), the composition root, where
 * fastify and SQL may appear, table ownership (scripts/lib/table-owners.ts), module
 * layout, and cycles between nodes.
 * Prints `file: rule: detail` per violation; exits 1 when there is any.
 */
import { fileURLToPath } from 'node:url';
import { checkArchitecture, formatViolation, loadSourceFiles } from './lib/architecture.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const files = loadSourceFiles(root);
const { violations } = checkArchitecture(files);
for (const v of violations) console.log(formatViolation(v));
if (violations.length > 0) {
  console.error(`${violations.length} architecture violation(s) in ${new Set(violations.map((v) => v.file)).size} file(s)`);
  process.exitCode = 1;
} else {
  console.error(`architecture: ${files.length} files, no violations`);
}
