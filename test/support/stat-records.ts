// A stat/transaction record as the API sends it, for tests that answer the API by hand.

/** One service's statistics: `count` calls, none failed, 10 ms each. */
export const transactionRecord = (serviceHash: number, service: string, count: number) => ({
  serviceHash,
  service,
  count,
  error: 0,
  timeSum: count * 10,
  timeMin: 1,
  timeMax: 20,
  timeAvg: 10,
});
