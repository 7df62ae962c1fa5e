import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
          environment: "node",
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
        },
      },
    ],
  },
});
