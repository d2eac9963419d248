/**
 * User profiles: the people who called a project. A token stands for a person when its identity provider
 * put a person's claims in it (`name`, `given_name`, `family_name` or `email`) and did not mark it as an
 * application's (`idtyp: app`, as Microsoft Entra ID does); the built-in provider issues tokens to clients
 * only, so its tokens never make a profile. A profile is written where tokens are authenticated (runtime.ts),
 * in a project whose userProfilesConfiguration is enabled, when a person is first seen there and when their
 * claims change; otherwise nothing is written.
 */
import { sql } from '../storage/sql.js';
import type { Queryable } from '../storage/store.js';
import type { Claims } from './principal.js';

export interface UserProfile {
  userIdentifier: string;
  givenName?: string;
  surname?: string;
  email?: string;
  displayName?: string;
  jobTitle?: string;
  identityType: 'USER';
  lastUpdatedTime: number;
}

type ProfileFields = Omit<UserProfile, 'userIdentifier' | 'identityType' | 'lastUpdatedTime'>;

const PERSON_CLAIMS = ['name', 'given_name', 'family_name', 'email'];

/** A claim's text, kept to 1024 characters: the provider is trusted, its claims need not be bounded. */
function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value.slice(0, 1024) : undefined;
}

/** The profile fields of a person's claims; undefined for a token that does not stand for a person. */
export function personOf(claims: Claims | undefined): ProfileFields | undefined {
  if (!claims || claims.idtyp === 'app' || !PERSON_CLAIMS.some((c) => text(claims[c]) !== undefined)) return undefined;
  return {
    givenName: text(claims.given_name),
    surname: text(claims.family_name),
    email: text(claims.email),
    displayName: text(claims.name),
    jobTitle: text(claims.job_title) ?? text(claims.jobTitle),
  };
}

export interface ProfileRow {
  user_identifier: string;
  given_name: string | null;
  surname: string | null;
  email: string | null;
  display_name: string | null;
  job_title: string | null;
  last_updated_time: number;
}

export function profileView(row: ProfileRow): UserProfile {
  return { userIdentifier: row.user_identifier, ...fieldsOf(row), identityType: 'USER', lastUpdatedTime: Number(row.last_updated_time) };
}

function fieldsOf(row: ProfileRow): ProfileFields {
  const v = (value: string | null) => value ?? undefined;
  return { givenName: v(row.given_name), surname: v(row.surname), email: v(row.email), displayName: v(row.display_name), jobTitle: v(row.job_title) };
}

/** How profiles sort ("alphabetically by name"): the display name, else the given name and surname, case folded. */
function sortName(f: ProfileFields): string {
  return (f.displayName ?? [f.givenName, f.surname].filter(Boolean).join(' ')).toLowerCase();
}

/**
 * Remembers what was last recorded for each person in each project, so that a person seen again with the
 * same claims costs a map lookup. Bounded: a forgotten entry costs one read.
 */
export function createProfileRecorder(db: Queryable, now: () => number, max = 10_000) {
  const known = new Map<string, string>();
  return async function recordProfile(projectId: number, claims: Claims | undefined): Promise<void> {
    const person = personOf(claims);
    if (!person) return;
    const subject = String(claims!.sub);
    const key = `${projectId}\n${subject}`;
    const fingerprint = JSON.stringify(person);
    if (known.get(key) === fingerprint) return;
    const row = await db.get<ProfileRow>(sql`SELECT * FROM user_profiles WHERE project_id = ${projectId} AND user_identifier = ${subject}`);
    const stored = row && JSON.stringify(fieldsOf(row));
    if (stored !== fingerprint) {
      const f = person;
      await db.run(sql`INSERT INTO user_profiles (project_id, user_identifier, given_name, surname, email, display_name, job_title, sort_name, last_updated_time)
        VALUES (${projectId}, ${subject}, ${f.givenName ?? null}, ${f.surname ?? null}, ${f.email ?? null}, ${f.displayName ?? null}, ${f.jobTitle ?? null}, ${sortName(f)}, ${now()})
        ON CONFLICT (project_id, user_identifier) DO UPDATE SET given_name = excluded.given_name, surname = excluded.surname, email = excluded.email,
          display_name = excluded.display_name, job_title = excluded.job_title, sort_name = excluded.sort_name, last_updated_time = excluded.last_updated_time`);
    }
    if (known.size >= max && !known.has(key)) known.delete(known.keys().next().value as string);
    known.set(key, fingerprint);
  };
}
