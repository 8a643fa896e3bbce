/** The background reads bench:scale's probe (scale-probe.ts) times, each as its caller makes it. */
export const PROBES = [
  'room search: holds',
  'due timers',
  'due deliveries',
  'stream: bookings',
  'stream: deliveries',
  'stream: latest',
] as const;
export type ProbeName = (typeof PROBES)[number];
