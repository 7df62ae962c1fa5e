import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
          environment: "node",
          // Files share their worker's modules (see the integration project): 63 s against 30 s.
          isolate: false,
        },
      },
      {
        test: {
          name: "integration",
          // Its own group: integration files run after the unit project, with their own worker limit.
          sequence: { groupOrder: 1 },
          include: ["test/integration/**/*.test.ts"],
          environment: "node",
          globalSetup: ["test/support/global-setup.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          // Integration files share one Postgres server; each gets its own database.
          fileParallelism: true,
          maxWorkers: 2,
          // A file's own process and module imports cost about 0.6 s of CPU a file; shared, the
          // whole suite took 1,132 s against 1,354 s on a 2-core machine (with prune.test.ts's
          // shorter backfill). No test mocks modules or changes process.env.
          isolate: false,
        },
      },
    ],
  },
});
