// The compute pool's thread (piscina loads this file in each worker): runs one task at a time
// from the task table and hands back its result or its error as data.
import { runTask, type TaskResult } from './tasks.ts';

export default function run({ task, input }: { task: string; input: unknown }): TaskResult {
  return runTask(task, input);
}
