import { CAPTURE_TABLE, L0_CHECKS } from '../../src/checks/registry.ts';
import { runCaptureTableContract } from '../contracts/capture-table.contract.ts';
import { runCheckContract } from '../contracts/check.contract.ts';

// Every registered check, so a new one is covered by its registration alone.
for (const check of L0_CHECKS) runCheckContract(check);
runCaptureTableContract(CAPTURE_TABLE);
