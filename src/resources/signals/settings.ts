/** The signals area's settings: where signals for e-mail go. */
import { ConfigError, type ConfigSection } from '../../config.js';

interface SignalSettings {
  /** The e-mail relay's URL, called with a JSON POST per signal; none: signals are only listed. */
  deliver?: string;
}

export const SIGNAL_SETTINGS: ConfigSection<SignalSettings> = {
  name: 'signals',
  settings: [
    {
      flag: '--signals-email-url',
      env: 'STRATA_SIGNALS_EMAIL_URL',
      shown: 'none (signals are listed, not sent)',
      meaning: 'HTTP endpoint of an e-mail relay: each signal for a sink with an e-mail address is POSTed to it as JSON {to, subject, text, signal}',
    },
  ],
  load(text, name) {
    const url = text('STRATA_SIGNALS_EMAIL_URL')?.trim();
    if (!url) return {};
    if (!/^https?:\/\//.test(url)) throw new ConfigError(`${name('STRATA_SIGNALS_EMAIL_URL')}: expected an http or https URL`);
    return { deliver: url };
  },
};
