import { runInventoryDemo } from '../demo/run-inventory-demo.js';
import type { DemoCommand } from '../invocation.js';
import type { Output } from '../output.js';

/** `lockkit demo [url]`: the inventory demo; exit status 0 when nothing was oversold. */
export function demoCommand(demo: DemoCommand, output: Output): Promise<number> {
  return runInventoryDemo(demo.url, output);
}
