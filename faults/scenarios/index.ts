import { control, noFaultScenarios } from './no-faults.js';
import type { Scenario } from './types.js';

/** Every scenario, in the order they run. */
export const scenarios: readonly Scenario[] = [...noFaultScenarios, control];
