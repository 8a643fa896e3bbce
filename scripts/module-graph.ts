/**
 * Prints the folder-level module graph of src/ (`node -> deps`), then every import that must not exist:
 * a module's internals imported from outside it (anything but its index.ts and rules/) and any import into
 * the composition root (src/services.ts, from anything but src/app.ts and src/main.ts).
 * Exits 1 when nodes form a cycle or any such import exists.
 */
import { fileURLToPath } from 'node:url';
import { checkArchitecture, formatCycle, formatGraph, graphCrossings, loadSourceFiles } from './lib/architecture.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const report = checkArchitecture(loadSourceFiles(root));
const { graph, cycles } = report;
for (const line of formatGraph(graph)) console.log(line);

for (const cycle of cycles) console.error(`cycle: ${formatCycle(graph, cycle)}`);
const crossings = graphCrossings(report);
if (crossings.length > 0) {
  console.error(`# ${crossings.length} import(s) of a module's internals from outside it or into the composition root:`);
  for (const line of crossings) console.error(line);
}
if (cycles.length > 0 || crossings.length > 0) process.exitCode = 1;
