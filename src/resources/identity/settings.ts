/** Settings of the organization and identity service Strata serves on its own origin. */
import { ConfigError, type ConfigSection } from '../../config.js';

export interface IdentitySettings {
  /** The base URL clients use for the identity service; the server's public URL when unset. */
  url?: string;
  /** The root organization: every project belongs to it unless created in a child organization. */
  organization: string;
  /** The one cluster Strata is: where every project lives, and what `clusterName` must name. */
  cluster: string;
  /** The value of the `groups` claim that makes a principal an admin of the root organization (and so of all). */
  adminGroup?: string;
}

/** An organization id, as the reference spells them. */
export const ORG_ID_PATTERN = '^([a-z][a-z0-9-]{1,62}[a-z0-9])$';
export const CLUSTER_PATTERN = '^[a-z0-9-]{1,32}$';

export const IDENTITY_SETTINGS: ConfigSection<IdentitySettings> = {
  name: 'identity',
  settings: [
    { flag: '--identity-url', env: 'STRATA_IDENTITY_URL', shown: 'the public URL', meaning: 'the base URL clients use for the organization and identity service (served on this origin)' },
    { flag: '--organization', env: 'STRATA_ORGANIZATION', default: 'strata', meaning: 'the id of the root organization, which holds every project not created in a child organization' },
    { flag: '--cluster', env: 'STRATA_CLUSTER', default: 'strata', meaning: 'the cluster name of this server: the one allowed cluster of the root organization' },
    { env: 'STRATA_ORGANIZATION_ADMIN_GROUP', meaning: 'a value of the groups claim whose principals are admins of the root organization (the built-in administrator always is)' },
  ],
  load: (text, name) => {
    const organization = text('STRATA_ORGANIZATION')!;
    if (!new RegExp(ORG_ID_PATTERN).test(organization)) throw new ConfigError(`${name('STRATA_ORGANIZATION')}: "${organization}" is not an organization id (${ORG_ID_PATTERN})`);
    const cluster = text('STRATA_CLUSTER')!;
    if (!new RegExp(CLUSTER_PATTERN).test(cluster)) throw new ConfigError(`${name('STRATA_CLUSTER')}: "${cluster}" is not a cluster name (${CLUSTER_PATTERN})`);
    const url = text('STRATA_IDENTITY_URL');
    return {
      ...(url ? { url: url.replace(/\/+$/, '') } : {}),
      organization,
      cluster,
      ...(text('STRATA_ORGANIZATION_ADMIN_GROUP') ? { adminGroup: text('STRATA_ORGANIZATION_ADMIN_GROUP') } : {}),
    };
  },
};
