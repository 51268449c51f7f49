import { coordinatorAlarms } from './coordinator-alarms.ts';
import type { Dashboard } from './panels.ts';
import { operations } from './operations.ts';

/** Every dashboard that ships, with the file it is written to under dashboards/json/. */
export const DASHBOARDS: readonly { file: string; build: () => Dashboard }[] = [
  { file: 'coordinator-alarms.json', build: coordinatorAlarms },
  { file: 'operations.json', build: operations },
];
