import { z } from 'zod';
import { logRetentionSchema } from '../storage/retention-config.ts';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/**
 * Retention of the local logs in the data directory (`serve`; `replay` keeps what it writes
 * whole). Embedded defaults: trajectories 4 GiB, findings 1 GiB, alarms 256 MiB — 5.25 GiB in
 * all, plus at most one write batch each (docs/operations.md).
 */
export const LocalLogsRetentionSchema = z.strictObject({
  trajectories: logRetentionSchema({ maxBytes: 4 * GiB, segmentBytes: 64 * MiB }).prefault({}),
  findings: logRetentionSchema({ maxBytes: GiB, segmentBytes: 64 * MiB }).prefault({}),
  alarms: logRetentionSchema({ maxBytes: 256 * MiB, segmentBytes: 16 * MiB }).prefault({}),
});

export type LocalLogsRetention = z.infer<typeof LocalLogsRetentionSchema>;
