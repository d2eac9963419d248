/**
 * The functions section of the configuration: whether calls run code at all on this deployment, how long a
 * call may run, how many calls one process runs at once, and the interpreters it runs them with.
 */
import { integer, onOff, type ConfigSection } from '../../config.js';
import type { Services } from '../../http/services.js';

export interface FunctionsSettings {
  /** Calls run code; off, a call is refused (routes.ts) and a schedule's call fails, both saying so. */
  execution: boolean;
  /** Wall-clock time a call may run, in seconds; its CPU time is held to the same. */
  timeoutSeconds: number;
  /** Calls one process runs at once; the others stay `Running`, waiting their turn. */
  concurrency: number;
  /** The Python interpreter, a path or a name looked up on PATH=/usr/local/bin:/usr/bin:/bin. */
  python: string;
  /** The Node.js interpreter of JavaScript handlers. */
  node: string;
}

export const FUNCTIONS_SETTINGS: ConfigSection<FunctionsSettings> = {
  name: 'functions',
  settings: [
    { flag: '--functions-execution', env: 'STRATA_FUNCTIONS_EXECUTION', default: 'on', meaning: 'function calls run the functions\' code in child processes: on or off' },
    { flag: '--functions-timeout', env: 'STRATA_FUNCTIONS_TIMEOUT_S', default: '600', meaning: 'wall-clock and CPU seconds a function call may run' },
    { flag: '--functions-concurrency', env: 'STRATA_FUNCTIONS_CONCURRENCY', default: '4', meaning: 'function calls one Strata process runs at once' },
    { flag: '--functions-python', env: 'STRATA_FUNCTIONS_PYTHON', default: 'python3', meaning: 'the Python interpreter of function handlers' },
    { flag: '--functions-node', env: 'STRATA_FUNCTIONS_NODE', shown: 'the node running Strata', meaning: 'the Node.js interpreter of JavaScript function handlers' },
  ],
  load: (text, name) => ({
    execution: onOff(name('STRATA_FUNCTIONS_EXECUTION'), text('STRATA_FUNCTIONS_EXECUTION')!),
    timeoutSeconds: integer(name('STRATA_FUNCTIONS_TIMEOUT_S'), text('STRATA_FUNCTIONS_TIMEOUT_S')!, 1, 86_400),
    concurrency: integer(name('STRATA_FUNCTIONS_CONCURRENCY'), text('STRATA_FUNCTIONS_CONCURRENCY')!, 1, 1000),
    python: text('STRATA_FUNCTIONS_PYTHON')!,
    node: text('STRATA_FUNCTIONS_NODE') ?? process.execPath,
  }),
};

export const functionsSettings = (services: Pick<Services, 'settings'>): FunctionsSettings => services.settings.of(FUNCTIONS_SETTINGS);
