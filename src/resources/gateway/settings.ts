/** The gateway's section of the configuration: the host name SQL clients are told to connect to. */
import type { ConfigSection } from '../../config.js';

export interface GatewaySettings {
  /** The host SQL clients reach the database at; the database's own address when not set. */
  host?: string;
}

export const GATEWAY_SETTINGS: ConfigSection<GatewaySettings> = {
  name: 'postgres gateway',
  settings: [
    {
      flag: '--gateway-host',
      env: 'STRATA_GATEWAY_HOST',
      shown: "the database's own address",
      meaning: 'host name the Postgres gateway tells SQL clients to connect to (with the PostgreSQL backend)',
    },
  ],
  load: (text) => {
    const host = text('STRATA_GATEWAY_HOST')?.trim();
    return host ? { host } : {};
  },
};
