/**
 * Every scenario of the fault suite, in the order they run.
 */
import { keyFaultScenarios } from './key-faults.js';
import { networkFaultScenarios } from './network-faults.js';
import { control, noFaultScenarios } from './no-faults.js';
import { processFaultScenarios } from './process-faults.js';
import { redLockScenarios } from './redlock-faults.js';
import { replyFaultScenarios } from './reply-faults.js';
import type { Scenario } from './types.js';

/** Every scenario, in the order they run; `quick: true` ones make `--quick`. */
export const scenarios: readonly Scenario[] = [
  ...noFaultScenarios,
  ...processFaultScenarios,
  ...keyFaultScenarios,
  ...networkFaultScenarios,
  ...replyFaultScenarios,
  ...redLockScenarios,
  control,
];
