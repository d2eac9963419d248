/**
 * The configuration as a user meets it: every setting is listed by `strata help` with its flag, and a value
 * that makes no sense is refused with a message naming both the variable and the flag that set it.
 */
import { describe, expect, it } from 'vitest';
import { CONFIG_SECTIONS } from '../src/areas.js';
import { configHelp, ConfigError, loadConfig } from '../src/config.js';

/** Each setting with a flag, as `strata help` lists it: `--flag (STRATA_VARIABLE)`. */
const FLAGGED = [...configHelp(CONFIG_SECTIONS).matchAll(/^ {2}(--[a-z-]+) \((STRATA_[A-Z_]+)\)$/gm)].map((m) => ({ flag: m[1], env: m[2] }));

describe('settings', () => {
  it('are listed with their flags, the areas’ sections among them', () => {
    expect(FLAGGED.length).toBeGreaterThan(40);
    expect(FLAGGED).toEqual(expect.arrayContaining([{ flag: '--port', env: 'STRATA_PORT' }, { flag: '--models-limits', env: 'STRATA_MODELS_LIMITS' }]));
  });

  it('that refuse a value name their variable and their flag, given by either', () => {
    let refused = 0;
    for (const { flag, env } of FLAGGED) {
      for (const load of [() => loadConfig([flag, '-x!'], {}, CONFIG_SECTIONS), () => loadConfig([], { [env]: '-x!' }, CONFIG_SECTIONS)]) {
        try {
          load();
        } catch (err) {
          expect(err, flag).toBeInstanceOf(ConfigError);
          expect((err as Error).message, flag).toContain(`${env} (${flag})`);
          refused++;
        }
      }
    }
    // Most settings take only some values; the few that take any text (host, log level) are not refused.
    expect(refused).toBeGreaterThan(60);
  });

  it('of an area are refused by an app built without that area’s section only as unknown options', () => {
    expect(() => loadConfig(['--models-limits', '{}'], {})).toThrow(/unknown option --models-limits/);
  });
});
