import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Integration tests start real servers on fixed loopback ports; files run one at a time
    // per worker and two workers match the two cores this project is built and tested on.
    maxWorkers: 2,
    reporters: ['default', ['json', { outputFile: '.cache/vitest-report.json' }]],
  },
});
