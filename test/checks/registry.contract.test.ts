import { L0_CHECKS } from '../../src/checks/registry.ts';
import { runCheckContract } from '../contracts/check.contract.ts';

// Every registered check, so a new one is covered by its registration alone.
for (const check of L0_CHECKS) runCheckContract(check);
