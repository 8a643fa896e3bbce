/**
 * What a kind of device can hold (pure). Kinds are free text in the site document;
 * these rules read the common ones: a licence-plate camera (`lpr-camera`, any kind
 * naming `lpr` or `plate`) holds plates only; a plain `card-reader` holds cards but
 * no face; every other reader (e.g. `face-card-reader`, a turnstile) holds cards,
 * faces and visitor QR codes.
 */
export function isPlateCamera(kind: string): boolean {
  return /lpr|plate/i.test(kind);
}

export function holdsFaces(kind: string): boolean {
  return !isPlateCamera(kind) && !/^card[-_ ]?reader$/i.test(kind.trim());
}

/** How long a delivery waits before trying an unreachable device again (service ms): 1 s doubling to 60 s. */
export function retryDelayMs(attemptsMade: number): number {
  return Math.min(60_000, 1000 * 2 ** Math.max(0, attemptsMade - 1));
}
