// Time units of the engine tests (epoch ms).
export const MINUTE = 60_000;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;
export const CUBE = 5 * MINUTE;
