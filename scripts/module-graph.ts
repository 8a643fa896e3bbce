/** Prints the folder-level module graph of src/ (`node -> deps`); exits 1 when nodes form a cycle. */
import { fileURLToPath } from 'node:url';
import { buildGraph, findCycles, formatCycle, formatGraph, loadSourceFiles } from './lib/architecture.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const graph = buildGraph(loadSourceFiles(root));
for (const line of formatGraph(graph)) console.log(line);

const cycles = findCycles(graph);
for (const cycle of cycles) console.error(`cycle: ${formatCycle(graph, cycle)}`);
if (cycles.length > 0) process.exitCode = 1;
