// Time units of the engine tests (epoch ms).
export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
export const CUBE = 5 * MINUTE;

/**
 * Days of a retention given relative to the wall clock (`stat=30d`) for a test that computes the
 * first kept month at `now` and runs the CLI later (it reads its own clock): `days`, or one day
 * more when the retention would start on the last day of a month. A run after the next UTC
 * midnight would then keep from the next month and drop a month more than the test expects; one
 * day more keeps both starts in the same month (at `now` the first kept month is the same).
 */
export function retentionDays(now: number, days: number): number {
  const start = Math.floor((now - days * DAY) / DAY) * DAY;
  return new Date(start + DAY).getUTCDate() === 1 ? days + 1 : days;
}
